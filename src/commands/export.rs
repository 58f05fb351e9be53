//! `export`: a conversation's path (to its tip or a message) as HTML, Markdown, JSONL, a provider's request or a
//! harness's own session file, priced, written whole or not at all (or returned as text).

use std::path::PathBuf;

use super::write::{write, write_with};
use super::{Command, CommandError, Env};
use crate::export::{ExportFormat, Exported};
use crate::store::Store;

/// Exports a conversation.
#[derive(Debug, Clone)]
pub struct ExportPath {
    pub conversation: String,
    pub at: Option<String>,
    pub format: ExportFormat,
    pub options: crate::export::Options,
    /// The file written (the text is returned when None).
    pub out: Option<PathBuf>,
}

/// What was exported, and where.
pub struct ExportedTo {
    pub out: Option<PathBuf>,
    pub exported: Exported,
}

impl Command for ExportPath {
    type Output = ExportedTo;

    fn run(self, env: Env<'_>) -> Result<ExportedTo, CommandError> {
        let prices = super::learned_prices::prices(env.store, env.settings)?;
        export(
            env.store,
            &self.conversation,
            self.at.as_deref(),
            self.format,
            self.options,
            self.out,
            &prices,
        )
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}

fn export(
    store: &mut Store,
    conversation: &str,
    at: Option<&str>,
    format: ExportFormat,
    options: crate::export::Options,
    out: Option<PathBuf>,
    prices: &std::collections::BTreeMap<String, crate::models::Price>,
) -> Result<ExportedTo, CommandError> {
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
            return Ok(ExportedTo { out, exported });
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
    Ok(ExportedTo { out, exported })
}
