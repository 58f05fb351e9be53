//! Actions on files: importing transcripts, exporting conversations.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Action, Env, misrouted};
use super::{CommandError, Outcome, Progress};
use crate::export::ExportFormat;
use crate::formats::Format;
use crate::store::Store;

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    let Env {
        store,
        settings,
        progress,
        cancel,
    } = env;
    match action {
        A::Import { paths, format } => import(store, &paths, format, progress, cancel),
        A::Export {
            conversation,
            at,
            format,
            options,
            out,
        } => export(
            store,
            &conversation,
            at.as_deref(),
            format,
            options,
            out,
            &settings.prices,
        ),
        A::Continue {
            conversation,
            at,
            harness,
            home,
            cwd,
            redact,
        } => continue_in(
            store,
            &conversation,
            at.as_deref(),
            harness,
            &home,
            cwd.as_deref(),
            redact,
        ),
        _ => Err(misrouted()),
    }
}

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
    // an HTML page goes straight into the file it is written to (a 100k-message page is never held whole)
    if let (Some(path), ExportFormat::Html) = (&out, format) {
        let mut exported = None;
        write_with(path, &mut |w| {
            exported = Some(crate::export::export_to(
                store,
                conversation,
                at,
                format,
                options,
                prices,
                Some(w),
            )?);
            Ok(())
        })?;
        if let Some(mut exported) = exported {
            exported.bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            return Ok(Outcome::Exported { out, exported });
        }
    }
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

/// [`Action::Continue`]: the session written where the harness looks, under a new id and never over a file.
pub(super) fn continue_in(
    store: &mut Store,
    conversation: &str,
    at: Option<&str>,
    harness: crate::export::agent::Harness,
    home: &crate::discover::Home,
    cwd: Option<&str>,
    redact: bool,
) -> Result<Outcome, CommandError> {
    let f = crate::export::agent::write(store, conversation, at, harness, redact, cwd)?;
    let file = crate::export::agent::place(home, &f);
    let io = |p: &Path, e: std::io::Error| CommandError::Io {
        path: p.to_path_buf(),
        reason: format!("cannot write: {e}"),
    };
    let folder = file.with_extension("");
    let mut beside = Vec::new();
    for (rel, text) in &f.beside {
        let p = folder.join(rel);
        write_new(&p, text).map_err(|e| io(&p, e))?;
        beside.push(p);
    }
    write_new(&file, &f.text).map_err(|e| io(&file, e))?;
    Ok(Outcome::Continued(crate::commands::Continued {
        harness,
        command: crate::export::agent::resume_command(&f, &file),
        session_id: f.session_id,
        file,
        beside,
        notes: f.notes,
        redacted: f.redacted,
    }))
}

/// Writes a new file whole or not at all, never over one that exists (its folders made as needed).
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes what `fill` writes to `path` whole or not at all (see [`write`]).
fn write_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), CommandError>,
) -> Result<(), CommandError> {
    use std::io::Write as _;
    let io = |e: std::io::Error| CommandError::Io {
        path: path.to_path_buf(),
        reason: format!("cannot write: {e}"),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp);
    fill(&mut w)?;
    w.flush().map_err(io)?;
    let tmp = w.into_inner().map_err(|e| io(e.into_error()))?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it, synced, then renamed over it, so
/// a full disk or a kill leaves the previous file as it was, never a truncated one.
fn write(path: &Path, text: &str) -> Result<(), CommandError> {
    write_with(path, &mut |w| {
        w.write_all(text.as_bytes()).map_err(|e| CommandError::Io {
            path: path.to_path_buf(),
            reason: format!("cannot write: {e}"),
        })
    })
}
