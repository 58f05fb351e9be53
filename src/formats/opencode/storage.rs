//! opencode's on-disk `storage/` folders: a session is `session/<project>/<id>.json` (its `info`), its messages
//! `message/<id>/msg_*.json` and each message's parts `part/<message>/prt_*.json`, the same objects `opencode export`
//! prints, one per file. They are gathered here into the export's `{info, messages: [{info, parts}]}` so one reader
//! reads both. opencode's ids grow with time, so messages and parts are ordered by creation time, then id.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::formats::FormatError;

/// Whether a document is a session's `info` as opencode stores it (an export has `messages` beside it).
pub fn is_session_info(doc: &Value) -> bool {
    doc.get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with("ses_"))
        && doc.get("messages").is_none()
        && doc.get("time").is_some()
}

/// The `storage/` folder a session file sits in (`<storage>/session/<project>/<id>.json`).
fn storage_of(session_file: &Path) -> Option<&Path> {
    let project = session_file.parent()?;
    let sessions = project.parent()?;
    (sessions.file_name()? == "session").then_some(())?;
    sessions.parent()
}

/// Whether a file is a message or part of a session stored beside it: read with that session, not on its own.
pub fn is_stored_piece(p: &Path) -> bool {
    let Some(kind) = p.parent().and_then(Path::parent) else {
        return false;
    };
    kind.file_name()
        .is_some_and(|n| n == "message" || n == "part")
        && kind.parent().is_some_and(|s| s.join("session").is_dir())
}

/// The session at `path` (its `info` already read) with its messages and parts, as `opencode export` prints it.
pub fn gather(path: &Path, info: &Value) -> Result<Value, FormatError> {
    let storage = storage_of(path).ok_or_else(|| {
        FormatError::new(
            path,
            1,
            "an opencode session's info, but not in a storage/session/<project>/ folder (export it with `opencode export`)",
        )
    })?;
    let id = info.get("id").and_then(Value::as_str).unwrap_or_default();
    let mut messages = Vec::new();
    for (mpath, m) in read_all(&storage.join("message").join(id), true)? {
        let mid = m
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if mid.is_empty() {
            return Err(FormatError::new(
                &mpath,
                1,
                "an opencode message without an \"id\"",
            ));
        }
        let parts: Vec<Value> = read_all(&storage.join("part").join(&mid), false)?
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        messages.push(json!({"info": m, "parts": parts}));
    }
    Ok(json!({"info": info, "messages": messages}))
}

/// Every `*.json` object in a folder (none when it does not exist), by id (`timed`: by creation time, then id;
/// a part's time is its tool's run, which text parts do not have).
fn read_all(dir: &Path, timed: bool) -> Result<Vec<(PathBuf, Value)>, FormatError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(FormatError::new(dir, 0, e.to_string())),
    };
    let mut out = Vec::new();
    for e in entries {
        let p = e
            .map_err(|e| FormatError::new(dir, 0, e.to_string()))?
            .path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let bytes = crate::formats::read_file(&p)?;
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| FormatError::new(&p, e.line(), format!("not JSON: {e}")))?;
        out.push((p, v));
    }
    let key = |v: &Value| {
        (
            if timed {
                v.pointer("/time/created")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MAX)
            } else {
                0
            },
            v.get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        )
    };
    out.sort_by_cached_key(|(_, v)| key(v));
    Ok(out)
}
