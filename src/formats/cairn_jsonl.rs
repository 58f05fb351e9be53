//! cairn's own JSONL export read back: a header line, every message of the tree (parents first) and the
//! checkpoints. Importing it gives the same tree: shape, content, metadata, tip and checkpoints (with new ids;
//! the exported ids are kept in the conversation's metadata as `origin`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, timestamp_ms};
use crate::model::{NewMessage, Role, Usage};
use crate::store::ImportedMessage;
use crate::wire;

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let mut title = None;
    let mut meta = json!({"source": "cairn"});
    let mut tip_id: Option<String> = None;
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut messages: Vec<ImportedMessage> = Vec::new();
    let mut checkpoints = Vec::new();
    for (no, v) in lines {
        match v.get("type").and_then(Value::as_str) {
            Some("cairn") => {
                title = v.get("title").and_then(Value::as_str).map(str::to_string);
                tip_id = v.get("tip").and_then(Value::as_str).map(str::to_string);
                if let Some(m) = v.get("meta").filter(|m| !m.is_null()) {
                    meta = m.clone();
                }
                if !meta.is_object() {
                    meta = json!({"meta": meta});
                }
                meta["origin"] = json!({"id": v.get("id"), "forked_from": v.get("forked_from")});
            }
            Some("message") => {
                let id = v
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| FormatError::new(path, *no, "message without \"id\""))?;
                if index.contains_key(id) {
                    return Err(FormatError::new(
                        path,
                        *no,
                        format!("message id {id} appears twice"),
                    ));
                }
                let parent = match v.get("parent").and_then(Value::as_str) {
                    None => None,
                    Some(p) => Some(*index.get(p).ok_or_else(|| {
                        FormatError::new(
                            path,
                            *no,
                            format!("parent {p} does not come before message {id}"),
                        )
                    })?),
                };
                let role = v
                    .get("role")
                    .and_then(Value::as_str)
                    .and_then(Role::parse)
                    .ok_or_else(|| FormatError::new(path, *no, "bad or missing \"role\""))?;
                let content = wire::blocks_from_value(
                    v.get("content").cloned().unwrap_or(Value::Null),
                    "content",
                )
                .map_err(|e| FormatError::new(path, *no, e.to_string()))?;
                let mut m = NewMessage::new(role, content);
                m.meta = v.get("meta").cloned().unwrap_or(Value::Null);
                m.usage = v
                    .get("usage")
                    .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok());
                m.created_at = timestamp_ms(v.get("created_at"));
                index.insert(id.to_string(), messages.len());
                messages.push(ImportedMessage { parent, message: m });
            }
            Some("checkpoint") => {
                let label = v.get("label").and_then(Value::as_str).unwrap_or_default();
                let target = v
                    .get("message")
                    .and_then(Value::as_str)
                    .and_then(|m| index.get(m));
                match target {
                    Some(&t) => checkpoints.push((label.to_string(), t)),
                    None => report.notes.push(format!(
                        "line {no}: checkpoint {label} names a message not in the file; dropped"
                    )),
                }
            }
            other => report.skip(format!(
                "{} lines (kept as metadata)",
                other.unwrap_or("untyped")
            )),
        }
    }
    let tip = tip_id.and_then(|t| index.get(&t).copied());
    Ok(Parsed {
        title,
        messages,
        tip,
        checkpoints,
        meta,
        report,
        children: Vec::new(),
    })
}
