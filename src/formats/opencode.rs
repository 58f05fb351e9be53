//! opencode sessions as `opencode export <id>` writes them (one JSON document `{info, messages: [{info, parts}]}`,
//! the same objects its `storage/` folders hold one per file). A user message is what opencode sends of it: its text
//! (the harness's own synthetic text too: a file read for the prompt, "continue" after a subtask), its files that
//! are not text, the line it sends for a subtask; an assistant message is one model step: `reasoning` parts
//! thinking, `text` parts text, `tool` parts tool calls (`callID`, `tool`, `state.input`) whose `state.output` /
//! `state.error` (with the images `state.attachments` holds) become the results the next step read. Usage is the step's `tokens` (`input` uncached, `cache.read`, `cache.write`, `output` plus `reasoning`),
//! the model `providerID/modelID`. A user message with a `compaction` part is opencode's compaction: the summary
//! opencode then asked for (an assistant message with `summary: true`, measured on the whole history) is kept as
//! the reply it was, and a harness compaction marker after it carries that summary, which is what the model saw
//! from there on, with the recent turns it kept (`tail_start_id`); its prune's cleared outputs leave the context
//! where it happened (`pruned`); a step's input the next step's cache read contradicts is taken as measured
//! (`reported`). `step-start`, `step-finish` and `patch` parts are bookkeeping, kept as metadata.

use std::path::Path;

use serde_json::{Value, json};

pub mod db;
mod pruned;
mod reported;
pub mod storage;

use super::{FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};

/// Whether a document is an opencode export, or a session's info in opencode's `storage/` folders.
pub fn is_opencode(doc: &Value) -> bool {
    is_export(doc) || storage::is_session_info(doc)
}

fn is_export(doc: &Value) -> bool {
    doc.pointer("/info/id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with("ses_"))
        && doc
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|m| {
                m.iter()
                    .all(|x| x.get("info").is_some() && x.get("parts").is_some())
            })
}

fn ms(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
}

pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    if storage::is_session_info(doc) {
        return parse(path, line, &storage::gather(path, doc)?);
    }
    let mut report = ImportReport::default();
    let mut built: Vec<NewMessage> = Vec::new();
    // a compaction asked for, waiting for its summary
    let mut compaction: Option<Value> = None;
    // where each opencode message's first message was built (a message with nothing sent: the next one built)
    let mut first_built: std::collections::HashMap<&str, usize> = Default::default();
    let mut placed = pruned::Placed::default();
    let msgs = doc
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| FormatError::new(path, line, "no \"messages\" array"))?;
    for m in msgs {
        let info = &m["info"];
        let parts = m["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
        if let Some(id) = info.get("id").and_then(Value::as_str) {
            first_built.insert(id, built.len());
        }
        match info.get("role").and_then(Value::as_str) {
            Some("user") => {
                if parts.iter().any(|p| p["type"] == "compaction") {
                    compaction = Some(m.clone());
                    continue;
                }
                match user_message(info, parts) {
                    Some(nm) => built.push(nm),
                    None => report.skip("user messages with no text (kept as metadata)"),
                }
            }
            Some("assistant") => {
                let Some((nm, results)) = assistant_message(info, parts) else {
                    report.skip("assistant steps with no content (kept as metadata)");
                    continue;
                };
                let at = ms(info.pointer("/time/created"));
                let summary = (info.get("summary").and_then(Value::as_bool) == Some(true))
                    .then(|| crate::model::plain_text(&nm.content))
                    .filter(|_| compaction.is_some());
                built.push(nm);
                if !results.is_empty() {
                    if let Some(t) = pruned::cleared_at(parts) {
                        placed.prune(t, built.len());
                    }
                    let left_out = built
                        .last()
                        .is_some_and(|m| crate::model::CairnMeta::not_sent_again(&m.meta));
                    built.push(results_message(info, results, left_out));
                }
                if let Some(text) = summary {
                    let asked = compaction.take();
                    // the recent turns the compaction kept after its summary (`tail_start_id`), before the summary
                    // reply itself
                    let summary_reply = built.len() - 1;
                    let kept: Vec<usize> = asked
                        .as_ref()
                        .and_then(pruned::tail_start)
                        .and_then(|id| first_built.get(id.as_str()).copied())
                        .map_or_else(Vec::new, |from| (from..summary_reply).collect());
                    let mut c = summary_marker(asked.as_ref(), text);
                    c.created_at = ms(info.pointer("/time/completed")).or(at);
                    report.notes.push(if kept.is_empty() {
                        "opencode compacted the conversation: its summary is what the model saw after it".into()
                    } else {
                        format!(
                            "opencode compacted the conversation: its summary and the {} newest message(s) are \
                             what the model saw after it",
                            kept.len()
                        )
                    });
                    placed.compaction(built.len(), kept);
                    built.push(c);
                }
            }
            other => {
                report.skip(format!(
                    "{} messages (kept as metadata)",
                    other.unwrap_or("untyped")
                ));
            }
        }
    }
    reported::check(&mut built, &mut report);
    let messages = super::chain(placed.place(built, &mut report));
    let info = &doc["info"];
    Ok(Parsed {
        title: info["title"]
            .as_str()
            .map(str::to_string)
            .or_else(|| super::title_of(&messages)),
        tip: messages.len().checked_sub(1),
        messages,
        checkpoints: Vec::new(),
        meta: json!({"source": "opencode", "header": {"id": info.get("id"), "cwd": info.get("directory"),
                     "version": info.get("version")}, "info": info}),
        report,
        children: Vec::new(),
    })
}

/// The results a step's calls got, sent as the user's after it (with the step where opencode leaves it out).
fn results_message(info: &Value, results: Vec<Block>, left_out: bool) -> NewMessage {
    let mut r = NewMessage::new(Role::User, results);
    r.created_at = ms(info.pointer("/time/completed")).or(ms(info.pointer("/time/created")));
    r.meta = json!({"source": "opencode", "tool_results_of": info.get("id")});
    if left_out {
        r.meta["cairn"] = crate::model::CairnMeta::Failed { sent_again: false }.to_value();
    }
    r
}

/// The marker of a compaction: what its request sent beside "What did we do so far?" (the images of a snapshot's
/// pages cairn wrote there), then the summary.
fn summary_marker(asked: Option<&Value>, summary: String) -> NewMessage {
    let mut content: Vec<Block> = asked
        .and_then(|a| a["parts"].as_array())
        .into_iter()
        .flatten()
        .filter(|p| {
            p["type"] == "file" && p["mime"].as_str().is_some_and(|m| m.starts_with("image/"))
        })
        .map(file_block)
        .collect();
    content.push(Block::text(summary));
    let mut c = NewMessage::new(Role::System, content);
    c.meta = json!({"source": "opencode", "compaction": asked});
    c
}

/// A user message as opencode sends it (`MessageV2.toModelMessages`): its text parts, the harness's own
/// (`synthetic`: a file read for the prompt, "continue" after a task) included, but not those marked `ignored`; a
/// file that is not text (text files and folders are sent as the synthetic text beside them); a subtask the user
/// ran as the line opencode sends for it. None when nothing of it is sent.
fn user_message(info: &Value, parts: &[Value]) -> Option<NewMessage> {
    let mut content = Vec::new();
    let mut bookkeeping = Vec::new();
    let mut typed = false;
    let flag = |p: &Value, k: &str| p.get(k).and_then(Value::as_bool) == Some(true);
    for p in parts {
        match p["type"].as_str() {
            Some("text") if !flag(p, "ignored") => {
                typed |= !flag(p, "synthetic");
                content.push(Block::text(p["text"].as_str().unwrap_or("").to_string()));
            }
            Some("file")
                if !matches!(
                    p["mime"].as_str(),
                    Some("text/plain" | "application/x-directory")
                ) =>
            {
                typed = true;
                content.push(file_block(p));
            }
            Some("subtask") => {
                typed = true;
                content.push(Block::text(SUBTASK_LINE.to_string()));
                bookkeeping.push(p.clone());
            }
            _ => bookkeeping.push(p.clone()),
        }
    }
    if content.is_empty() {
        return None;
    }
    let mut nm = NewMessage::new(Role::User, content);
    nm.created_at = ms(info.pointer("/time/created"));
    nm.meta = json!({"source": "opencode", "entry": {"id": info.get("id")}, "info": info,
                     "parts": bookkeeping});
    if !typed {
        // only the harness's words: "Summarize the task tool output above and continue with your task."
        nm.meta["synthetic"] = json!(true);
    }
    Some(nm)
}

/// A file part that is not text as the model is sent it: an image opencode read into the part (a `data:` URL) as
/// the image; another file (a PDF, a URL opencode did not read) as a line naming it.
fn file_block(p: &Value) -> Block {
    let image = p["mime"]
        .as_str()
        .is_some_and(|m| m.starts_with("image/"))
        .then(|| {
            p["url"]
                .as_str()
                .and_then(crate::model::image::from_data_url)
        })
        .flatten()
        .and_then(Result::ok);
    image.unwrap_or_else(|| {
        Block::text(format!(
            "[file: {}]",
            p["filename"]
                .as_str()
                .or(p["url"].as_str().filter(|u| !u.starts_with("data:")))
                .unwrap_or("?")
        ))
    })
}

/// What opencode sends the model for a subtask the user ran (a command that runs in a subagent): the task call
/// and its result follow as the next step.
const SUBTASK_LINE: &str = "The following tool was executed by the user";

/// An assistant step: its reasoning, text and calls with their usage, and the calls' results (None when it has no
/// content).
fn assistant_message(info: &Value, parts: &[Value]) -> Option<(NewMessage, Vec<Block>)> {
    let mut content = Vec::new();
    let mut results = Vec::new();
    let mut bookkeeping = Vec::new();
    for p in parts {
        match p["type"].as_str() {
            Some("reasoning") => content.push(Block::Thinking {
                thinking: p["text"].as_str().unwrap_or("").to_string(),
                // the provider's own form of the whole reasoning, sent back with later requests (OpenAI's
                // encrypted reasoning under the provider opencode routed it through: `openai`, or `opencode` for
                // its own gateway)
                signature: p
                    .pointer("/metadata/anthropic/signature")
                    .or_else(|| p.pointer("/metadata/copilot/reasoningOpaque"))
                    .or_else(|| p.pointer("/metadata/openai/reasoningEncryptedContent"))
                    .or_else(|| p.pointer("/metadata/opencode/reasoningEncryptedContent"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            }),
            Some("text") => {
                let t = p["text"].as_str().unwrap_or("");
                if !t.trim().is_empty() {
                    content.push(Block::text(t.to_string()));
                }
            }
            Some("tool") => {
                let (call, result) = tool_part(p);
                content.push(call);
                results.push(result);
            }
            _ => bookkeeping.push(p.clone()),
        }
    }
    if content.is_empty() {
        return None;
    }
    let model = match (info["providerID"].as_str(), info["modelID"].as_str()) {
        (Some(p), Some(m)) => Some(format!("{p}/{m}")),
        (None, Some(m)) => Some(m.to_string()),
        _ => None,
    };
    let mut nm = NewMessage::new(Role::Assistant, content);
    nm.created_at = ms(info.pointer("/time/created"));
    let t = &info["tokens"];
    let n = |p: &str| t.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let usage = Usage {
        input_tokens: n("/input"),
        output_tokens: n("/output") + n("/reasoning"),
        cache_read_input_tokens: n("/cache/read"),
        cache_creation_input_tokens: n("/cache/write"),
        ..Usage::default()
    };
    nm.usage = (usage != Usage::default()).then_some(usage);
    nm.meta = json!({"source": "opencode", "entry": {"id": info.get("id")}, "model": model,
                     "info": info, "parts": bookkeeping});
    // a reply that failed is left out of what opencode sends after it, but one the user aborted that has more than
    // its start and reasoning (`MessageV2.toModelMessages`)
    let aborted_with_content = info.pointer("/error/name") == Some(&json!("MessageAbortedError"))
        && parts
            .iter()
            .any(|p| !matches!(p["type"].as_str(), Some("step-start" | "reasoning")));
    if info.get("error").is_some_and(|e| !e.is_null()) && !aborted_with_content {
        nm.meta["cairn"] = crate::model::CairnMeta::Failed { sent_again: false }.to_value();
    }
    Some((nm, results))
}

/// A tool part: the call, and its result (its output, its error, or its status where it has neither).
fn tool_part(p: &Value) -> (Block, Block) {
    let id = p["callID"].as_str().unwrap_or("").to_string();
    let state = &p["state"];
    let call = Block::ToolUse {
        id: id.clone(),
        name: p["tool"].as_str().unwrap_or("tool").to_string(),
        input: state.get("input").cloned().unwrap_or_else(|| json!({})),
    };
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    // as `MessageV2.toModelMessages` sends each state: a call cut short by the user with what it had printed as
    // its output; one never finished as interrupted
    let (out, failed) = match state["status"].as_str() {
        Some("completed") => (state.get("output").map(text).unwrap_or_default(), false),
        Some("error") => match state.pointer("/metadata/output").and_then(Value::as_str) {
            Some(o) if state.pointer("/metadata/interrupted") == Some(&json!(true)) => {
                (o.to_string(), false)
            }
            _ => (state.get("error").map(text).unwrap_or_default(), true),
        },
        Some("pending" | "running") => (INTERRUPTED.to_string(), true),
        other => (
            state
                .get("output")
                .or_else(|| state.get("error"))
                .map(text)
                .unwrap_or_else(|| format!("[{}]", other.unwrap_or("no result"))),
            state.get("error").is_some(),
        ),
    };
    // the files a completed call attached (a screenshot, an image it read) go with its output
    let attached: Vec<Block> = match state["status"].as_str() {
        Some("completed") => state["attachments"]
            .as_array()
            .map(|a| a.iter().map(file_block).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let content = if attached.is_empty() {
        ToolResultContent::Text(out)
    } else {
        ToolResultContent::Blocks(std::iter::once(Block::text(out)).chain(attached).collect())
    };
    let result = Block::ToolResult {
        tool_use_id: id,
        content,
        is_error: failed,
    };
    (call, result)
}

/// What opencode sends for a call that never finished (pending or running when the session stopped).
const INTERRUPTED: &str = "[Tool execution was interrupted]";
