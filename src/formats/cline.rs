//! Cline, Roo Code and Kilo Code task folders (`…/tasks/<taskId>/`): `api_conversation_history.json` is the
//! conversation as the model saw it (a JSON array of Messages-shaped `{role, content}`, the model on each reply
//! as `modelInfo`), `ui_messages.json` what the user saw, whose `api_req_started` entries carry each request's
//! usage as a JSON string (`tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`, `cost`), one per reply in order;
//! the cost is kept on the reply (`meta.cost`: what prices a model no catalog knows). The provider Cline sent the
//! request through is kept beside the model (`meta.provider`): a router or a cloud prices a model its own way
//! ([`crate::models::priced_model`]).
//! Cline answers a native tool call in text (`[read_file for 'x'] Result:` …, `Tool [x] was not executed …`):
//! those text blocks, in order, become the results of the calls before them. The file read is the history; the
//! two files beside it are read with it.

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::wire;

/// The files read with a task's history (not imported on their own).
pub const SIDECARS: &[&str] = &["ui_messages.json", "task_metadata.json"];

/// Whether a document is a Cline-family conversation history: an array of messages whose replies carry Cline's
/// `modelInfo` / `metrics`, or a file named as Cline names it.
pub fn is_cline(path: &Path, doc: &Value) -> bool {
    let Some(a) = doc.as_array() else {
        return false;
    };
    a.iter()
        .any(|m| m.get("modelInfo").is_some() || m.get("metrics").is_some())
        || (path
            .file_name()
            .is_some_and(|n| n == "api_conversation_history.json")
            && a.iter().all(|m| m.get("role").is_some()))
}

/// A text block Cline wrote for a tool's result: the result, and whether the tool failed or did not run.
fn as_result(text: &str) -> Option<bool> {
    let t = text.trim_start();
    if t.starts_with("Tool [") && t.contains("was not executed") {
        return Some(true);
    }
    (t.starts_with('[') && t.lines().next().is_some_and(|l| l.ends_with("] Result:")))
        .then(|| t.contains("[ERROR]") || t.starts_with("[ERROR]"))
}

/// The usage of each request, in order, from `ui_messages.json` beside the history, with the cost Cline recorded.
fn requests(path: &Path) -> Vec<(Usage, Option<f64>)> {
    let Some(ui) = path
        .parent()
        .map(|d| d.join("ui_messages.json"))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Vec::new();
    };
    ui.as_array()
        .into_iter()
        .flatten()
        .filter(|u| u.get("say").and_then(Value::as_str) == Some("api_req_started"))
        .filter_map(|u| serde_json::from_str::<Value>(u.get("text")?.as_str()?).ok())
        .map(|r| {
            let n = |k: &str| r.get(k).and_then(Value::as_u64).unwrap_or(0);
            let usage = Usage {
                input_tokens: n("tokensIn"),
                output_tokens: n("tokensOut"),
                cache_read_input_tokens: n("cacheReads"),
                cache_creation_input_tokens: n("cacheWrites"),
                ..Usage::default()
            };
            (usage, r.get("cost").and_then(Value::as_f64))
        })
        .collect()
}

/// A user message's blocks with the results of the calls before it, which Cline sends as plain text, made results
/// (in the calls' order), results first as the Messages shape wants them.
fn results_in_text(blocks: Vec<Block>, open: Vec<String>) -> Vec<Block> {
    let mut content = Vec::with_capacity(blocks.len());
    let mut calls = open.into_iter();
    let mut pending = calls.next();
    for b in blocks {
        match (&b, pending.take()) {
            (Block::Text { text }, Some(id)) if as_result(text).is_some() => {
                content.push(Block::ToolResult {
                    tool_use_id: id,
                    content: ToolResultContent::Text(text.clone()),
                    is_error: as_result(text) == Some(true),
                });
                pending = calls.next();
            }
            (_, p) => {
                pending = p;
                content.push(b);
            }
        }
    }
    content.sort_by_key(|b| !matches!(b, Block::ToolResult { .. }));
    content
}

/// The task as the user typed it (Cline wraps it in <task>).
fn task_title(messages: &[crate::store::ImportedMessage]) -> Option<String> {
    messages.first().and_then(|m| {
        m.message.content.iter().find_map(|b| match b {
            Block::Text { text } => text
                .split_once("<task>")
                .and_then(|(_, t)| t.split("</task>").next())
                .map(|t| super::short_title(t.trim())),
            _ => None,
        })
    })
}

pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let items = doc
        .as_array()
        .ok_or_else(|| FormatError::new(path, line, "not a JSON array of messages"))?;
    let usage = requests(path);
    let mut replies = 0;
    let mut built: Vec<NewMessage> = Vec::new();
    // the calls of the reply before, waiting for their results
    let mut open: Vec<String> = Vec::new();
    for (k, m) in items.iter().enumerate() {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => {
                report.skip(format!(
                    "{} entries (kept as metadata)",
                    other.unwrap_or("role-less")
                ));
                continue;
            }
        };
        // fields Cline adds to known blocks (`summary`, `reasoning_details`, `call_id`) kept beside them
        let mut raw = m.get("content").cloned().unwrap_or(Value::Null);
        let mut extras = serde_json::Map::new();
        super::claude_code::split_block_extras(&mut raw, 0, &mut extras);
        let blocks = wire::blocks_from_value(raw, "content")
            .map_err(|e| FormatError::new(path, line, format!("message {k}: {e}")))?;
        let content = if role == Role::User {
            results_in_text(blocks, std::mem::take(&mut open))
        } else {
            open = blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, .. } => Some(id.clone()),
                    _ => None,
                })
                .collect();
            blocks
        };
        let mut nm = NewMessage::new(role, content);
        nm.created_at = m.get("ts").and_then(Value::as_i64);
        let model = m.pointer("/modelInfo/modelId").cloned();
        nm.meta =
            json!({"source": "cline", "index": k, "model": model, "metrics": m.get("metrics")});
        if let Some(p) = m
            .pointer("/modelInfo/providerId")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            nm.meta["provider"] = json!(p);
        }
        if !extras.is_empty() && role == Role::Assistant {
            nm.meta["block_extras"] = Value::Object(extras);
        }
        if role == Role::Assistant {
            let request = usage.get(replies).copied();
            // what Cline recorded the request cost (from its own price list)
            if let Some(cost) = request.and_then(|r| r.1) {
                nm.meta["cost"] = json!(cost);
            }
            nm.usage = request.map(|r| r.0).or_else(|| {
                m.pointer("/metrics/tokens").map(|t| Usage {
                    input_tokens: t.get("prompt").and_then(Value::as_u64).unwrap_or(0),
                    output_tokens: t.get("completion").and_then(Value::as_u64).unwrap_or(0),
                    ..Usage::default()
                })
            });
            replies += 1;
        }
        built.push(nm);
    }
    if !usage.is_empty() && usage.len() != replies {
        report.notes.push(format!(
            "{} requests in ui_messages.json for {replies} replies: usage matched in order",
            usage.len()
        ));
    }
    let messages = super::chain(built);
    let task = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    let title = task_title(&messages).or_else(|| super::title_of(&messages));
    Ok(Parsed {
        title,
        tip: messages.len().checked_sub(1),
        messages,
        checkpoints: Vec::new(),
        meta: json!({"source": "cline", "header": {"id": task}}),
        report,
        children: Vec::new(),
    })
}
