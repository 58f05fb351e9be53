//! `import`: transcripts (files and folders, recursively), one transaction per file: a file already imported is
//! reported as a duplicate, a refused one with its FILE:LINE, and nothing of it is written. A file a folder walk
//! found that holds no session (a harness's settings beside its sessions) is skipped, not refused. Stops between
//! files when cancelled.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::{Command, CommandError, Env};
use crate::formats::Format;
use crate::import::FileOutcome;

/// Imports transcripts.
#[derive(Debug, Clone)]
pub struct ImportFiles {
    pub paths: Vec<PathBuf>,
    /// The format, when not detected.
    pub format: Option<Format>,
}

impl Command for ImportFiles {
    /// What became of each file.
    type Output = Vec<FileOutcome>;

    fn run(self, env: Env<'_>) -> Result<Vec<FileOutcome>, CommandError> {
        let Env {
            store,
            progress,
            cancel,
            ..
        } = env;
        for p in &self.paths {
            if !p.exists() {
                return Err(CommandError::Io {
                    path: p.clone(),
                    reason: "no such file or folder".into(),
                });
            }
        }
        // the files named that are imported as another (a subagent as its session): each outcome says so
        let crate::import::Collected {
            files,
            named,
            walked,
        } = crate::import::collect_named(&self.paths).map_err(|e| CommandError::Io {
            path: self.paths.first().cloned().unwrap_or_default(),
            reason: format!("listing files: {e}"),
        })?;
        let mut out = Vec::with_capacity(files.len());
        for (k, f) in files.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            progress.step(k, files.len(), &f.display().to_string());
            let mut o = crate::import::import_file(store, f, self.format);
            if o.not_a_transcript && walked.contains(f) {
                // found by walking a folder and holding no session: a harness's settings or caches, not a
                // session refused
                o.status = crate::import::SKIPPED;
            }
            for (_, p) in named.iter().filter(|(main, _)| main == f) {
                o.report.notes.push(format!(
                    "{} is read with this file (imported as it, so nothing is read twice)",
                    p.display()
                ));
            }
            out.push(o);
        }
        progress.step(out.len(), files.len(), "");
        Ok(out)
    }
}
