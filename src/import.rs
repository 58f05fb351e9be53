//! Importing files: walks the given paths, reads each transcript with [`crate::formats`], and writes each file's
//! conversations in one transaction (all or nothing per file). A file already imported (same content hash) is
//! reported, not duplicated.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::formats::{self, Format, Report};
use crate::store::{Store, StoreError};

/// What happened to one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileOutcome {
    pub file: PathBuf,
    pub format: Option<Format>,
    /// New conversation ids: the session first, then linked ones (subagents).
    pub conversations: Vec<String>,
    pub report: Report,
    /// Reports of the linked conversations, in the same order as `conversations[1..]`.
    pub linked: Vec<Report>,
    /// Set when the file was not imported: already imported, or refused (with `FILE:LINE: reason`).
    pub error: Option<String>,
    pub duplicate_of: Option<String>,
}

/// Files to import under `paths`: files as given; folders recursively (`.jsonl`, `.json` and SWE-agent `.traj` files, skipping
/// subagent files whose session file is present, since they are imported with it, and `.meta.json` sidecars).
///
/// A folder is walked once per real folder: a symbolic link to a folder is followed only when it stays inside the
/// folder being imported and leads somewhere not yet walked (so `..` links and loops end), and only regular files
/// are taken (a FIFO named `*.jsonl` would block the import).
pub fn collect(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let root = std::fs::canonicalize(p)?;
            let mut seen = std::collections::HashSet::new();
            seen.insert(root.clone());
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .collect();
                entries.sort();
                for e in entries {
                    let Ok(meta) = std::fs::metadata(&e) else {
                        continue; // a dangling link
                    };
                    if meta.is_dir() {
                        if let Ok(real) = std::fs::canonicalize(&e)
                            && real.starts_with(&root)
                            && seen.insert(real)
                        {
                            stack.push(e);
                        }
                    } else if meta.is_file()
                        && is_transcript_name(&e)
                        && !is_subagent_of_present_session(&e)
                    {
                        out.push(e);
                    }
                }
            }
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn is_transcript_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name.ends_with(".jsonl") || name.ends_with(".json") || name.ends_with(".traj"))
        && !name.ends_with(".meta.json")
}

/// A subagent file imported with its session: `<session>/subagents/agent-x.jsonl` with `<session>.jsonl` beside
/// `<session>/` (Claude Code 2.1), or `agent-<8hex>.jsonl` beside `<sessionId>.jsonl` (2.0).
fn is_subagent_of_present_session(p: &Path) -> bool {
    // the 2.0 layout: `agent-<8hex>.jsonl` beside `<sessionId>.jsonl`
    if p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
        && let (Some(dir), Some(session)) =
            (p.parent(), crate::formats::claude_code::session_of_file(p))
        && dir.join(format!("{session}.jsonl")).is_file()
    {
        return true;
    }
    let Some(sub) = p.parent() else { return false };
    if sub.file_name().is_none_or(|n| n != "subagents") {
        return false;
    }
    let Some(session_dir) = sub.parent() else {
        return false;
    };
    let Some(name) = session_dir.file_name() else {
        return false;
    };
    session_dir
        .with_file_name(format!("{}.jsonl", name.to_string_lossy()))
        .is_file()
}

/// Imports one file. Never panics; a refused file leaves the store unchanged.
pub fn import_file(store: &mut Store, file: &Path, format: Option<Format>) -> FileOutcome {
    let mut outcome = FileOutcome {
        file: file.to_path_buf(),
        format: None,
        conversations: Vec::new(),
        report: Report::default(),
        linked: Vec::new(),
        error: None,
        duplicate_of: None,
    };
    // read once: what is hashed is what is parsed (a file replaced mid-import cannot be stored under the other's
    // hash)
    let bytes = match formats::read_file(file) {
        Ok(b) => b,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return outcome;
        }
    };
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let (fmt, parsed) = match formats::parse_bytes(file, &bytes, format) {
        Ok(x) => x,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return outcome;
        }
    };
    outcome.format = Some(fmt);
    outcome.report = parsed.report.clone();
    outcome.linked = parsed.children.iter().map(|c| c.report.clone()).collect();
    let (first, children) = parsed.into_imported(None);
    let mut convs = vec![first];
    convs.extend(children.into_iter().map(|c| c.into_imported(Some(0)).0));
    match store.import_file(&hash, &file.display().to_string(), &convs) {
        Ok(ids) => outcome.conversations = ids,
        Err(StoreError::Duplicate { conversation, .. }) => {
            outcome.error = Some(format!(
                "{}: already imported as conversation {conversation}",
                file.display()
            ));
            outcome.duplicate_of = Some(conversation);
        }
        Err(e) => outcome.error = Some(format!("{}:0: {e}", file.display())),
    }
    outcome
}
