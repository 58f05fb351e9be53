//! Goose's sessions: its SQLite store ([`db`]), read as the document `goose session export` writes (the session's
//! fields, its messages as `conversation`), and the JSONL files Goose kept before the store
//! (`~/.local/share/goose/sessions/<name>.jsonl`: the session's fields on the first line, a message a line).
//!
//! A message is `{role, created, content, metadata}`; its content is Goose's (MCP's) parts: `text`, `image`
//! (`data`, `mimeType`), `thinking` and `redactedThinking`, `toolRequest` (`id`, `toolCall: {status, value: {name,
//! arguments}}`) and `toolResponse` (`id`, `toolResult: {status, value: {content, isError}}`, or an older list of
//! contents, or `{status: "error", error}`), in the user message after the call. Parts the model never reads (a
//! confirmation asked of the user, a notification) are left out. `metadata.agentVisible: false` is what Goose
//! took out of the model's context when it compacted: the messages after them (its summary first) were sent without
//! them, so a harness marker stands before the first message the model saw again.
//!
//! Goose records no usage per reply: the session holds its running totals (`accumulated_input_tokens`,
//! `accumulated_output_tokens`), set on the first reply as the sum of every reply's requests (counted and priced,
//! never taken as one prompt's size), replaced when the session is read again after it grew. The model, where
//! the store names it (`model_config_json.model_name`, its `context_limit` the window Goose ran it with; before,
//! the `GOOSE_MODEL` Goose's configuration sets now, said so), is on every reply. A subagent's session (`session_type: sub_agent`) is marked as one.

pub mod db;

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, harness_meta};

/// Whether a document is a Goose session as `goose session export` writes it.
pub fn is_export(doc: &Value) -> bool {
    doc.get("working_dir").is_some() && messages_of(doc).is_some()
}

/// Whether a JSONL file's lines are a Goose session as Goose kept them before its store: the session's fields,
/// then messages.
pub fn is_legacy(lines: &[(usize, Value)]) -> bool {
    let Some((_, first)) = lines.first() else {
        return false;
    };
    lines.len() > 1
        && first.get("working_dir").is_some()
        && first.get("role").is_none()
        && lines.iter().skip(1).take(5).all(|(_, m)| {
            m.get("role").is_some() && m.get("created").is_some() && m.get("content").is_some()
        })
}

fn messages_of(doc: &Value) -> Option<&Vec<Value>> {
    let c = doc.get("conversation")?;
    c.as_array()
        .or_else(|| c.get("messages").and_then(Value::as_array))
}

/// One MCP content item of a tool's result as a block.
fn content_block(v: &Value) -> Option<Block> {
    match v.get("type").and_then(Value::as_str)? {
        "text" => Some(Block::text(v.get("text").and_then(Value::as_str)?)),
        "image" => {
            let (data, media) = (
                v.get("data").and_then(Value::as_str)?,
                v.get("mimeType").and_then(Value::as_str)?,
            );
            crate::model::image::from_base64(media, data).ok()
        }
        // an embedded resource is sent as its text (Goose does so); a binary one as a note
        "resource" => {
            let r = v.get("resource")?;
            let text = r.get("text").and_then(Value::as_str).map_or_else(
                || {
                    format!(
                        "[Binary content: {}]",
                        r.get("uri").and_then(Value::as_str).unwrap_or("")
                    )
                },
                str::to_string,
            );
            Some(Block::text(text))
        }
        _ => None,
    }
}

/// A tool's result as the model read it, and whether it failed.
fn result_of(r: &Value) -> (ToolResultContent, bool) {
    if r.get("status").and_then(Value::as_str) == Some("error") {
        let e = r.get("error").and_then(Value::as_str).unwrap_or("");
        return (ToolResultContent::Text(e.to_string()), true);
    }
    let value = r.get("value").unwrap_or(&Value::Null);
    // a CallToolResult, or the list of contents older versions wrote
    let (items, failed) = match value {
        Value::Array(a) => (a.as_slice(), false),
        v => (
            v.get("content")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice),
            v.get("isError").and_then(Value::as_bool) == Some(true),
        ),
    };
    let blocks: Vec<Block> = items.iter().filter_map(content_block).collect();
    let content = match blocks.as_slice() {
        [Block::Text { text }] => ToolResultContent::Text(text.clone()),
        _ => ToolResultContent::Blocks(blocks),
    };
    (content, failed)
}

/// A message's parts as blocks; parts the model never reads counted in the report.
fn blocks(content: &Value, report: &mut ImportReport) -> Vec<Block> {
    let mut out = Vec::new();
    for p in content.as_array().map_or(&[][..], Vec::as_slice) {
        let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "text" => {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push(Block::text(t));
                }
            }
            "image" => match content_block(p) {
                Some(b) => out.push(b),
                None => out.push(super::unknown_block(p)),
            },
            "thinking" => out.push(Block::Thinking {
                thinking: p
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                signature: p
                    .get("signature")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }),
            "toolRequest" | "frontendToolRequest" => {
                let call = p.get("toolCall").unwrap_or(&Value::Null);
                let value = call.get("value").unwrap_or(&Value::Null);
                out.push(Block::ToolUse {
                    id: p
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    // a call the model wrote that Goose could not read: its error stands for its name
                    name: value
                        .get("name")
                        .and_then(Value::as_str)
                        .or_else(|| {
                            call.get("error")
                                .and_then(Value::as_str)
                                .map(|_| "invalid_tool_call")
                        })
                        .unwrap_or("unknown")
                        .to_string(),
                    input: value
                        .get("arguments")
                        .filter(|a| a.is_object())
                        .cloned()
                        .unwrap_or_else(|| json!({})),
                });
            }
            "toolResponse" => {
                let (content, is_error) = result_of(p.get("toolResult").unwrap_or(&Value::Null));
                out.push(Block::ToolResult {
                    tool_use_id: p
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    content,
                    is_error,
                });
            }
            "toolConfirmationRequest"
            | "actionRequired"
            | "systemNotification"
            | "conversationCompacted" => {
                report.skip(format!("{ty} parts (shown to the user, not sent)"));
            }
            _ => out.push(super::unknown_block(p)),
        }
    }
    out
}

pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let messages = messages_of(doc)
        .ok_or_else(|| FormatError::new(path, line, "a Goose session without its conversation"))?;
    read(path, line, doc, messages.iter())
}

/// A session Goose kept as JSONL before its store.
pub fn parse_legacy(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let (l, session) = lines
        .first()
        .ok_or_else(|| FormatError::new(path, 0, "empty file"))?;
    read(path, *l, session, lines.iter().skip(1).map(|(_, v)| v))
}

/// The session's running totals as the usage of `replies` requests (None when it counted nothing).
fn totals(session: &Value, replies: usize) -> Option<Usage> {
    let n = |k: &str| session.get(k).and_then(Value::as_u64);
    let totals = Usage {
        input_tokens: n("accumulated_input_tokens")
            .or(n("input_tokens"))
            .unwrap_or(0),
        output_tokens: n("accumulated_output_tokens")
            .or(n("output_tokens"))
            .unwrap_or(0),
        requests: (replies as u64).max(2),
        ..Usage::default()
    };
    (totals.input_tokens + totals.output_tokens > 0).then_some(totals)
}

/// The conversation's metadata: the session's header, its counts as Goose kept them, the window it ran the model
/// with.
fn session_meta(session: &Value, config: Option<&Value>, model: Option<&str>) -> Value {
    let mut meta = json!({
        "source": "goose",
        "header": {"id": session.get("id"), "cwd": session.get("working_dir"),
                   "created": session.get("created_at")},
        "session_type": session.get("session_type"),
        "provider": session.get("provider_name"),
        "model_config": config,
        "tokens": {
            "total": session.get("total_tokens"), "input": session.get("input_tokens"),
            "output": session.get("output_tokens"),
            "accumulated_total": session.get("accumulated_total_tokens"),
            "accumulated_input": session.get("accumulated_input_tokens"),
            "accumulated_output": session.get("accumulated_output_tokens"),
        },
    });
    if session.get("session_type").and_then(Value::as_str) == Some("sub_agent") {
        meta["subagent"] = json!(true);
    }
    if let (Some(m), Some(w)) = (
        model,
        config
            .and_then(|c| c.get("context_limit"))
            .and_then(Value::as_u64),
    ) {
        meta["windows"] = json!({ m: w });
    }
    meta
}

/// The model Goose's configuration sets (`GOOSE_MODEL` in `~/.config/goose/config.yaml`), for a session kept where
/// Goose keeps them (`~/.local/share/goose/sessions/…`: the home is found from the session's own path).
fn configured_model(path: &Path) -> Option<String> {
    let sessions = path
        .ancestors()
        .find(|a| a.ends_with(".local/share/goose/sessions"))?;
    let home = sessions.ancestors().nth(4)?;
    let text = std::fs::read_to_string(home.join(".config/goose/config.yaml")).ok()?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("GOOSE_MODEL:")?.trim();
        let v = v.trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty()).then(|| v.to_string())
    })
}

fn read<'a>(
    path: &Path,
    line: usize,
    session: &Value,
    messages: impl Iterator<Item = &'a Value>,
) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let config = session
        .get("model_config_json")
        .or_else(|| session.get("model_config"));
    let named = config
        .and_then(|c| c.get("model_name"))
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty());
    // a store before Goose named the model: the one Goose's configuration sets now, said so
    let configured = named.is_none().then(|| configured_model(path)).flatten();
    if let Some(m) = &configured {
        report.notes.push(format!(
            "the model is the one Goose's config.yaml sets now ({m}): the session does not record it"
        ));
    }
    let model = named.or(configured.as_deref());
    let mut built: Vec<NewMessage> = Vec::new();
    // messages Goose took out of the model's context since the last one it saw
    let mut dropped = 0;
    for (k, m) in messages.enumerate() {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => {
                report.skip(format!(
                    "{} messages (kept as metadata)",
                    other.unwrap_or("role-less")
                ));
                continue;
            }
        };
        let content = blocks(m.get("content").unwrap_or(&Value::Null), &mut report);
        if content.is_empty() {
            continue;
        }
        let seen = m.pointer("/metadata/agentVisible").and_then(Value::as_bool) != Some(false);
        if seen && dropped > 0 {
            let mut marker = NewMessage::text(
                Role::System,
                "Goose compacted the conversation: the model saw nothing before this but what follows",
            );
            marker.created_at = m.get("created").and_then(Value::as_i64).map(|s| s * 1000);
            marker.meta = json!({"source": "goose", "dropped": dropped,
                                 "cairn": harness_meta("goose", Kept::Nothing, false)});
            built.push(marker);
            dropped = 0;
        }
        if !seen {
            dropped += 1;
        }
        let mut nm = NewMessage::new(role, content);
        // Goose writes seconds
        nm.created_at = m.get("created").and_then(Value::as_i64).map(|s| s * 1000);
        nm.meta = json!({"source": "goose", "index": k, "metadata": m.get("metadata"), "id": m.get("id")});
        if role == Role::Assistant
            && let Some(model) = model
        {
            nm.meta["model"] = json!(model);
        }
        built.push(nm);
    }
    if built.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: the Goose session holds no prompt or reply yet",
        ));
    }
    let replies = built.iter().filter(|m| m.role == Role::Assistant).count();
    if let Some(totals) = totals(session, replies)
        && let Some(first) = built.iter_mut().find(|m| m.role == Role::Assistant)
    {
        first.usage = Some(totals);
        first.meta["session_totals"] = json!(true);
        report.notes.push(format!(
            "usage: the session's totals, on its first reply as the sum of {replies} requests (Goose records no prompt per reply)"
        ));
    }
    let named = ["name", "description"]
        .iter()
        .filter_map(|k| session.get(*k).and_then(Value::as_str))
        .find(|t| !t.trim().is_empty());
    Ok(Parsed::chained(
        built,
        named,
        session_meta(session, config, model),
        report,
    ))
}
