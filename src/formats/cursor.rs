//! Cursor's agent transcripts (`~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl`): one
//! `{"role", "message": {"content": [...]}}` object a line, the content in the Messages shape (text, and in newer
//! builds `tool_use` / `tool_result` blocks). No ids, no times, no usage: the messages form one chain in file
//! order, and cairn's estimate is all there is of their size.

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{NewMessage, Role};
use crate::store::ImportedMessage;
use crate::wire;

/// Whether a line looks like Cursor's: a role and a message with content, nothing of the other harnesses.
pub fn is_cursor(v: &Value) -> bool {
    v.get("type").is_none()
        && v.get("uuid").is_none()
        && matches!(
            v.get("role").and_then(Value::as_str),
            Some("user" | "assistant")
        )
        && v.pointer("/message/content").is_some()
}

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let mut messages: Vec<ImportedMessage> = Vec::new();
    for (no, v) in lines {
        let role = match v.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => {
                report.skip(format!(
                    "{} lines (kept as metadata)",
                    other.unwrap_or("role-less")
                ));
                continue;
            }
        };
        let content = v
            .pointer("/message/content")
            .cloned()
            .unwrap_or(Value::Null);
        let blocks = wire::blocks_from_value(content, "message.content")
            .map_err(|e| FormatError::new(path, *no, e.to_string()))?;
        let mut m = NewMessage::new(role, blocks);
        m.meta = json!({"source": "cursor", "line": no});
        messages.push(ImportedMessage {
            parent: messages.len().checked_sub(1),
            message: m,
        });
    }
    if messages.is_empty() {
        return Err(FormatError::new(path, 1, "no user or assistant message"));
    }
    let session = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Parsed {
        title: super::title_of(&messages),
        tip: messages.len().checked_sub(1),
        messages,
        checkpoints: Vec::new(),
        meta: json!({"source": "cursor", "header": {"id": session}}),
        report,
        children: Vec::new(),
    })
}
