//! Gemini CLI's chat files as it wrote them until its session log ([`log`], `session-*.jsonl`) replaced them
//! (`~/.gemini/tmp/<project-hash>/chats/session-*.json`): one JSON document
//! `{sessionId, projectHash, startTime, lastUpdated, messages}`, rewritten whole as the session goes. A `user`
//! message is a prompt; a `gemini` message is a reply, its `thoughts` (subject and description, no signature)
//! thinking, its `toolCalls` tool uses whose results (`result[].functionResponse.response`, `status`) become the
//! tool results the next reply read. `info`, `warning` and `error` messages (model switches, API errors) are not
//! messages to the model: they are kept as metadata and counted. Usage is per reply (`tokens`): `input` is the
//! whole prompt with `cached` a part of it, and `thoughts` are billed as output. Qwen Code, forked from Gemini CLI,
//! wrote the same files (`~/.qwen/tmp/<project-hash>/chats/`) with its replies typed `qwen`: read alike.

pub mod log;

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, text_of, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};

/// Whether a document is a Gemini CLI chat file.
pub fn is_gemini(doc: &Value) -> bool {
    doc.get("sessionId").is_some_and(Value::is_string)
        && doc
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|m| {
                m.iter().any(|x| {
                    matches!(
                        x.get("type").and_then(Value::as_str),
                        Some("user" | "gemini" | "qwen")
                    )
                })
            })
}

/// Whether lines are Gemini CLI's older chat file: one document with its messages (else they are its log).
pub fn is_document(lines: &[(usize, Value)]) -> bool {
    matches!(lines, [(_, doc)] if is_gemini(doc))
}

/// A function response (Gemini's `functionResponse.response`) as the model read it: its output, or its error, and
/// whether it failed. Gemini CLI's and Qwen Code's alike.
pub(super) fn response_text(resp: &Value) -> (String, bool) {
    let text = |x: &Value| x.as_str().map_or_else(|| x.to_string(), str::to_string);
    match (
        resp.get("error").filter(|e| !e.is_null()),
        resp.get("output"),
    ) {
        (Some(e), _) => (text(e), true),
        (None, Some(o)) => (text(o), false),
        _ => (resp.to_string(), false),
    }
}

/// A tool call's result as the model read it: the function response's output (or error), and whether it failed.
fn result_of(call: &Value) -> (ToolResultContent, bool) {
    let status = call.get("status").and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    let mut images = Vec::new();
    let mut failed = matches!(status, "error" | "cancelled");
    for r in call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(resp) = r.pointer("/functionResponse/response") {
            let (text, error) = response_text(resp);
            failed |= error;
            out.push(text);
        }
        // images a tool returned: nested in the response (models that take them there) or beside it
        let nested = r
            .pointer("/functionResponse/parts")
            .and_then(Value::as_array);
        for d in nested
            .into_iter()
            .flatten()
            .chain(std::iter::once(r))
            .filter_map(|p| p.get("inlineData"))
        {
            images.extend(image_of(d));
        }
    }
    if out.is_empty() {
        out.push(match status {
            "cancelled" => "[the tool call was cancelled]".to_string(),
            "" => "[no result recorded]".to_string(),
            s => format!("[{s}]"),
        });
    }
    let text = out.join("\n");
    let content = if images.is_empty() {
        ToolResultContent::Text(text)
    } else {
        ToolResultContent::Blocks(std::iter::once(Block::text(text)).chain(images).collect())
    };
    (content, failed)
}

/// An `inlineData` part (an image sent to the model) as an image block; one that is not base64 stays unknown.
pub(super) fn image_of(d: &Value) -> Option<Block> {
    let media_type = d.get("mimeType").and_then(Value::as_str)?;
    crate::model::image::from_base64(media_type, d.get("data").and_then(Value::as_str)?).ok()
}

/// A prompt's content as blocks: its text, and the images sent with it in their place.
pub(super) fn prompt_blocks(content: Option<&Value>) -> Vec<Block> {
    let Some(Value::Array(parts)) = content.filter(|c| {
        c.as_array()
            .is_some_and(|ps| ps.iter().any(|p| p.get("inlineData").is_some()))
    }) else {
        return vec![Block::text(text_of(content))];
    };
    let mut out: Vec<Block> = Vec::new();
    let mut text: Vec<&str> = Vec::new();
    for p in parts {
        match p.get("inlineData") {
            Some(d) => {
                if !text.is_empty() {
                    out.push(Block::text(text.join("\n")));
                    text.clear();
                }
                out.extend(image_of(d));
            }
            None => text.extend(p.get("text").and_then(Value::as_str).or_else(|| p.as_str())),
        }
    }
    if !text.is_empty() {
        out.push(Block::text(text.join("\n")));
    }
    out
}

/// A reply's thoughts as thinking blocks, as Gemini CLI sends a thought back: its subject in bold where it has one.
fn thoughts_of(m: &Value) -> Vec<Block> {
    let mut content = Vec::new();
    for t in m
        .get("thoughts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let subject = t.get("subject").and_then(Value::as_str).unwrap_or("");
        let description = t.get("description").and_then(Value::as_str).unwrap_or("");
        let thinking = if subject.is_empty() {
            description.to_string()
        } else {
            format!("**{subject}** {description}")
        };
        content.push(Block::Thinking {
            thinking: thinking.trim().to_string(),
            signature: None,
        });
    }
    content
}

/// A `gemini` message: its thoughts, text and calls with its usage, and the message of its calls' results (None
/// when it has none of these). `n`: how many messages came before (a call without an id is named by it).
fn reply(m: &Value, n: usize) -> Option<(NewMessage, Option<NewMessage>)> {
    let at = timestamp_ms(m.get("timestamp"));
    let mut content = thoughts_of(m);
    // a reply Gemini CLI synced from its history holds the model's parts as its content: its thoughts (also in
    // `thoughts`, when they are there) and its calls (also in `toolCalls`, with their results) beside its text
    let (text, thought) = parts_of(m.get("content"));
    if content.is_empty() {
        content.extend(thought.into_iter().map(|t| Block::Thinking {
            thinking: t,
            signature: None,
        }));
    }
    if !text.trim().is_empty() {
        content.push(Block::text(text));
    }
    let calls: Vec<&Value> = m
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let mut results = Vec::new();
    for (k, c) in calls.iter().enumerate() {
        let id = c
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("gemini-call-{n}-{k}"), str::to_string);
        content.push(Block::ToolUse {
            id: id.clone(),
            name: c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("tool")
                .to_string(),
            input: c.get("args").cloned().unwrap_or_else(|| json!({})),
        });
        // a call still under way (the file read mid-turn) has no result yet: the model has read none
        if matches!(
            c.get("status").and_then(Value::as_str),
            Some("validating" | "scheduled" | "executing" | "awaiting_approval")
        ) && c.get("result").is_none_or(Value::is_null)
        {
            continue;
        }
        let (out, failed) = result_of(c);
        results.push(Block::ToolResult {
            tool_use_id: id,
            content: out,
            is_error: failed,
        });
    }
    if content.is_empty() {
        return None;
    }
    let mut nm = NewMessage::new(Role::Assistant, content);
    nm.created_at = at;
    nm.meta = json!({"source": "gemini-cli", "entry": {"id": m.get("id")},
                     "model": m.get("model"), "tokens": m.get("tokens")});
    if let Some(t) = m.get("tokens").filter(|t| t.is_object()) {
        let n = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
        // `tool` (the prompt of Gemini's own tools: search, code execution) is sent beside `input` and billed as
        // input; Gemini's total counts it so, and a total without it says it is within `input`
        let beside = n("input") + n("output") + n("thoughts") + n("tool");
        let tool = if t
            .get("total")
            .and_then(Value::as_u64)
            .is_some_and(|x| x != beside)
        {
            0
        } else {
            n("tool")
        };
        let prompt = n("input") + tool;
        let cached = n("cached").min(prompt);
        nm.usage = Some(Usage {
            input_tokens: prompt - cached,
            output_tokens: n("output") + n("thoughts"),
            cache_read_input_tokens: cached,
            ..Usage::default()
        })
        .filter(|u| *u != Usage::default());
    }
    let results = (!results.is_empty()).then(|| {
        let mut r = NewMessage::new(Role::User, results);
        r.created_at = calls
            .iter()
            .filter_map(|c| timestamp_ms(c.get("timestamp")))
            .max()
            .or(at);
        r.meta = json!({"source": "gemini-cli", "tool_results_of": m.get("id")});
        r
    });
    Some((nm, results))
}

/// A record's content as the model's text and its thoughts (parts marked `thought`); calls and responses, which
/// the record holds in `toolCalls`, are neither.
fn parts_of(content: Option<&Value>) -> (String, Vec<String>) {
    let Some(Value::Array(parts)) = content else {
        return (text_of(content), Vec::new());
    };
    let (mut text, mut thought) = (Vec::new(), Vec::new());
    for p in parts {
        match (p.get("text").and_then(Value::as_str), p.as_str()) {
            (Some(t), _) if p.get("thought").and_then(Value::as_bool) == Some(true) => {
                thought.push(t.to_string());
            }
            (Some(t), _) | (None, Some(t)) => text.push(t),
            _ => {}
        }
    }
    (text.join("\n"), thought)
}

/// Whether a user record holds only function responses: the results of the reply before it, which Gemini CLI
/// writes as a turn of their own when it rebuilds its history (`<reply id>_response`), and which that reply's
/// `toolCalls` already hold.
fn only_responses(m: &Value) -> bool {
    m.get("content")
        .and_then(Value::as_array)
        .is_some_and(|parts| {
            !parts.is_empty() && parts.iter().all(|p| p.get("functionResponse").is_some())
        })
}

/// One message record as cairn messages (a prompt; a reply and its calls' results), or what it is when the model
/// never read it (`info`, `warning` and `error` messages, empty replies), to keep as metadata. `n`: how many
/// messages came before (a call without an id is named by it).
pub(super) enum Converted {
    Messages(Vec<NewMessage>),
    Note(String),
}

pub(super) fn converted(m: &Value, n: usize) -> Converted {
    match m.get("type").and_then(Value::as_str).unwrap_or("") {
        "user" if only_responses(m) => {
            Converted::Note("tool responses (read with the reply that called them)".into())
        }
        "user" => {
            let mut nm = NewMessage::new(Role::User, prompt_blocks(m.get("content")));
            nm.created_at = timestamp_ms(m.get("timestamp"));
            nm.meta = json!({"source": "gemini-cli", "entry": {"id": m.get("id")}});
            Converted::Messages(vec![nm])
        }
        // Qwen Code, a fork of Gemini CLI, wrote the same chat files with its replies typed `qwen`
        "gemini" | "qwen" => match reply(m, n) {
            Some((nm, results)) => {
                Converted::Messages(std::iter::once(nm).chain(results).collect())
            }
            None => Converted::Note("empty gemini replies (kept as metadata)".into()),
        },
        other => {
            let kind = if other.is_empty() { "untyped" } else { other };
            Converted::Note(format!("{kind} messages (kept as metadata)"))
        }
    }
}

/// The conversation's meta: the session's own fields (`header` without its messages) and the records kept beside.
pub(super) fn session_meta(header: Value, records: Vec<Value>) -> Value {
    let mut meta = json!({
        "source": "gemini-cli",
        "header": {"id": header.get("sessionId"), "cwd": Value::Null, "project_hash": header.get("projectHash"),
                   "start": header.get("startTime"), "updated": header.get("lastUpdated")},
        "records": records,
    });
    // a subagent's session (Gemini CLI keeps it under its parent's: `chats/<parent session id>/<id>.jsonl`)
    if header.get("kind").and_then(Value::as_str) == Some("subagent") {
        meta["subagent"] = json!(true);
    }
    meta["session"] = header;
    meta
}

pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let mut built: Vec<NewMessage> = Vec::new();
    let mut notes: Vec<Value> = Vec::new();
    let msgs = doc
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| FormatError::new(path, line, "no \"messages\" array"))?;
    for m in msgs {
        match converted(m, built.len()) {
            Converted::Messages(ms) => built.extend(ms),
            Converted::Note(kind) => {
                report.skip(kind);
                notes.push(m.clone());
            }
        }
    }
    let messages = super::chain(built);
    let tip = messages.len().checked_sub(1);
    let mut header = doc.clone();
    if let Some(o) = header.as_object_mut() {
        o.remove("messages");
    }
    let meta = session_meta(header, notes);
    Ok(Parsed {
        title: super::title_of(&messages),
        messages,
        tip,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    })
}
