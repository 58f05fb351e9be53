//! Actions on files: importing transcripts, exporting conversations.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{CommandError, Outcome, Progress};
use crate::export::ExportFormat;
use crate::formats::Format;
use crate::store::Store;

/// Imports files and folders (recursively), one transaction per file; a file already imported is reported as a
/// duplicate, a refused one with its FILE:LINE. Stops between files when cancelled.
pub(super) fn import(
    store: &mut Store,
    paths: &[PathBuf],
    format: Option<Format>,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    for p in paths {
        if !p.exists() {
            return Err(CommandError::Io {
                path: p.clone(),
                reason: "no such file or folder".into(),
            });
        }
    }
    let files = crate::import::collect(paths).map_err(|e| CommandError::Io {
        path: paths.first().cloned().unwrap_or_default(),
        reason: format!("listing files: {e}"),
    })?;
    let mut out = Vec::with_capacity(files.len());
    for (k, f) in files.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        progress.step(k, files.len(), &f.display().to_string());
        out.push(crate::import::import_file(store, f, format));
    }
    progress.step(out.len(), files.len(), "");
    Ok(Outcome::Imported(out))
}

pub(super) fn export(
    store: &mut Store,
    conversation: &str,
    at: Option<&str>,
    format: ExportFormat,
    options: crate::export::Options,
    out: Option<PathBuf>,
    prices: &std::collections::BTreeMap<String, crate::models::Price>,
) -> Result<Outcome, CommandError> {
    let exported = crate::export::export_priced(store, conversation, at, format, options, prices)?;
    if let Some(path) = &out {
        // the files a harness keeps beside a session (Claude Code's subagents) first, so the session never names
        // what is not there
        if let Some(a) = &exported.agent {
            let folder = path.with_extension("");
            for (rel, text) in &a.beside {
                let p = folder.join(rel);
                if let Some(d) = p.parent() {
                    std::fs::create_dir_all(d).map_err(|e| CommandError::Io {
                        path: d.to_path_buf(),
                        reason: format!("cannot create: {e}"),
                    })?;
                }
                write(&p, text)?;
            }
        }
        write(path, &exported.text)?;
    }
    Ok(Outcome::Exported { out, exported })
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it, synced, then renamed over it, so
/// a full disk or a kill leaves the previous file as it was, never a truncated one.
fn write(path: &Path, text: &str) -> Result<(), CommandError> {
    use std::io::Write as _;
    let io = |e: std::io::Error| CommandError::Io {
        path: path.to_path_buf(),
        reason: format!("cannot write: {e}"),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
