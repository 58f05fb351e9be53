//! Factory's Droid (`~/.factory/sessions/<project>/<id>.jsonl`): a `session_start` line (`id`, `title`,
//! `sessionTitle`, `owner`, `version`, `cwd`), then one `message` line a message (`id`, `parentId`, `timestamp`,
//! `message: {role, content}` with the Messages API's blocks: `text`, `tool_use`, `tool_result`, and `thinking`).
//! The parent links make the tree (a line without one follows the line before it).
//!
//! Droid records no usage per reply: `<id>.settings.json` beside the file holds the session's model and its running
//! totals (`tokenUsage`: input, output, cache writes, cache reads, thinking), rewritten as the session goes on. The
//! totals are set on the session's first reply as the sum of every reply's requests ([`Usage::requests`]): counted
//! and priced, never taken as one prompt's size. Read again after the session grew, the same first reply takes the
//! larger totals in place of the old ones (`store::measures::late_usage`), so a grown session is never counted
//! twice. A Task subagent's session is its own file whose title starts `# Task Tool Invocation`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{NewMessage, Role, Usage};
use crate::store::ImportedMessage;
use crate::wire;

/// Whether a line is Droid's session header.
pub fn is_droid(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("session_start")
        && v.get("id").is_some()
        && v.get("message").is_none()
}

/// The settings file Droid keeps beside a session (`<id>.settings.json`).
pub fn settings_of(session: &Path) -> PathBuf {
    session.with_extension("settings.json")
}

/// The session a settings file belongs to, when that session is beside it and is Droid's.
pub fn session_of_settings(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    let stem = name.strip_suffix(".settings.json")?;
    let session = p.with_file_name(format!("{stem}.jsonl"));
    let first =
        std::io::BufRead::lines(std::io::BufReader::new(std::fs::File::open(&session).ok()?))
            .next()?
            .ok()?;
    serde_json::from_str::<Value>(&first)
        .ok()
        .filter(is_droid)
        .map(|_| session)
}

/// The session's model and running totals, from the settings file beside it.
fn settings(path: &Path) -> Option<Value> {
    std::fs::read_to_string(settings_of(path))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
}

/// The totals of `tokenUsage` as the usage of `replies` requests (None when it counted nothing).
fn totals(settings: &Value, replies: usize) -> Option<Usage> {
    let u = settings.get("tokenUsage")?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let usage = Usage {
        input_tokens: n("inputTokens"),
        output_tokens: n("outputTokens"),
        cache_read_input_tokens: n("cacheReadTokens"),
        cache_creation_input_tokens: n("cacheCreationTokens"),
        // never one request's measure, even for a one-reply session: Droid's side calls (titles) count there too
        requests: (replies as u64).max(2),
        ..Usage::default()
    };
    (usage.prompt() + usage.output_tokens > 0).then_some(usage)
}

/// One `message` line as a message; None for a line that is not one (kept in the report).
fn message(no: usize, v: &Value, path: &Path) -> Result<Option<NewMessage>, FormatError> {
    let Some(m) = v.get("message") else {
        return Ok(None);
    };
    let role = match m.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => return Ok(None),
    };
    // a string is one text block (wire reads it so)
    let mut raw = m.get("content").cloned().unwrap_or(Value::Null);
    let mut extras = serde_json::Map::new();
    super::claude_code::split_block_extras(&mut raw, 0, &mut extras);
    let blocks = wire::blocks_from_value(raw, "message.content")
        .map_err(|e| FormatError::new(path, no, e.to_string()))?;
    let mut nm = NewMessage::new(role, blocks);
    nm.created_at = super::timestamp_ms(v.get("timestamp"));
    nm.meta = json!({
        "source": "droid",
        "line": no,
        "entry": {"id": v.get("id"), "parentId": v.get("parentId"), "timestamp": v.get("timestamp")},
    });
    if !extras.is_empty() {
        nm.meta["block_extras"] = Value::Object(extras);
    }
    Ok(Some(nm))
}

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let header = lines
        .iter()
        .map(|(_, v)| v)
        .find(|v| is_droid(v))
        .cloned()
        .unwrap_or(Value::Null);
    let settings = settings(path).unwrap_or(Value::Null);
    let model = settings.get("model").and_then(Value::as_str);
    let mut messages: Vec<ImportedMessage> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (no, v) in lines {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "session_start" {
            continue;
        }
        let built = if ty == "message" {
            message(*no, v, path)?
        } else {
            None
        };
        let Some(mut nm) = built else {
            report.skip(format!("{ty} lines (kept as metadata)"));
            continue;
        };
        if nm.role == Role::Assistant
            && let Some(model) = model
        {
            nm.meta["model"] = json!(model);
        }
        let parent = match v.get("parentId").and_then(Value::as_str) {
            Some(p) => match by_id.get(p) {
                Some(&i) => Some(i),
                None => {
                    report.notes.push(format!(
                        "line {no}: parent {p} is not in the file; placed after the line before"
                    ));
                    messages.len().checked_sub(1)
                }
            },
            None => messages.len().checked_sub(1),
        };
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            by_id.insert(id.to_string(), messages.len());
        }
        messages.push(ImportedMessage {
            parent,
            message: nm,
        });
    }
    if messages.is_empty() {
        return Err(FormatError::new(path, 1, "no user or assistant message"));
    }
    let replies: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].message.role == Role::Assistant)
        .collect();
    if let (Some(&first), Some(usage)) = (replies.first(), totals(&settings, replies.len())) {
        messages[first].message.usage = Some(usage);
        messages[first].message.meta["session_totals"] = json!({
            "file": settings_of(path).file_name().map(|n| n.to_string_lossy().into_owned()),
        });
        report.notes.push(format!(
            "usage: the session's totals from its settings file, on its first reply as the sum of {} requests (Droid records no prompt per reply)",
            replies.len()
        ));
    }
    // the file's last message is where the session stands
    let tip = messages.len().checked_sub(1);
    let title = header
        .get("sessionTitle")
        .or_else(|| header.get("title"))
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .map(super::short_title)
        .or_else(|| super::title_of(&messages));
    let subagent = header
        .get("title")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("# Task Tool Invocation"));
    // of the settings, what the figures rest on (the rest is the user's configuration)
    let kept = json!({"model": settings.get("model"), "tokenUsage": settings.get("tokenUsage")});
    let mut meta = json!({"source": "droid", "header": header, "settings": kept});
    if subagent {
        meta["subagent"] = json!(true);
    }
    Ok(Parsed {
        title,
        tip,
        messages,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    })
}
