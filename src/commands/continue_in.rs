//! `continue`: a conversation's path written as a new session of a harness (Claude Code, pi, Codex...) where that
//! harness looks for its sessions, under a new id and never over a file, with the command that resumes it.

use std::path::Path;

use super::write::write_new;
use super::{Command, CommandError, Continued, Env};
use crate::store::Store;

/// Continues a conversation in a harness.
#[derive(Debug, Clone)]
pub struct ContinueIn {
    pub conversation: String,
    pub at: Option<String>,
    pub harness: crate::export::agent::Harness,
    pub home: crate::discover::Home,
    /// The working folder the session names (default: the one the source recorded).
    pub cwd: Option<String>,
    pub redact: bool,
}

impl Command for ContinueIn {
    type Output = Continued;

    fn run(self, env: Env<'_>) -> Result<Continued, CommandError> {
        continue_in(
            env.store,
            &self.conversation,
            self.at.as_deref(),
            self.harness,
            &self.home,
            self.cwd.as_deref(),
            self.redact,
        )
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}

/// The session written where the harness looks, under a new id and never over a file.
fn continue_in(
    store: &mut Store,
    conversation: &str,
    at: Option<&str>,
    harness: crate::export::agent::Harness,
    home: &crate::discover::Home,
    cwd: Option<&str>,
    redact: bool,
) -> Result<Continued, CommandError> {
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
    Ok(Continued {
        harness,
        command: crate::export::agent::resume_command(&f, &file),
        session_id: f.session_id,
        file,
        beside,
        notes: f.notes,
        redacted: f.redacted,
    })
}
