//! Amp's threads (`~/.local/share/amp/threads/T-<uuid>.json`, rewritten whole as the thread goes on; the VS Code
//! extension's older `…/globalStorage/sourcegraph.amp/threads3/` holds the same documents): `{v, id, created,
//! title, env, messages, usageLedger}`. A message is `{role, messageId, content, state, usage, meta}` with the
//! Messages API's blocks (`text`, `thinking` with its signature, `tool_use`, `image`), except that a tool's result
//! is Amp's own: `{type: "tool_result", toolUseID, run: {status, result | error}}`, in the user message after the
//! call. A run not finished yet (`in-progress`, `queued`, `blocked-on-user`) has not been sent to the model; one
//! cancelled or refused was sent as failed.
//!
//! Every reply records what the provider measured (`usage`: uncached input, cache writes and reads, output, and the
//! window Amp ran the model with, `maxInputTokens`) and names its model, so the figures are the provider's. Amp's
//! `usageLedger` bills the thread's requests (`fromMessageId`/`toMessageId`); one that answers no reply (Amp's own
//! side calls) is counted in the import's notes, not as a reply. An `info` message holding a `summary` is where
//! Amp continued the thread from a summary: its text (`summary.type: "message"`) is what the model saw of the
//! history before it; a summary kept in another thread (`summary.type: "thread"`) was sent but is not in this file.
//! The work dir is the thread's first workspace tree (`env.initial.trees[0].uri`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, harness_meta, unrecorded_harness_meta};
use crate::wire;

/// Whether a document is an Amp thread: a `T-` id over a list of messages, with Amp's thread fields.
pub fn is_amp(doc: &Value) -> bool {
    let Some(messages) = doc.get("messages").and_then(Value::as_array) else {
        return false;
    };
    doc.get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with("T-"))
        && (doc.get("usageLedger").is_some()
            || doc.get("created").is_some_and(Value::is_number)
            || messages.iter().any(|m| m.get("messageId").is_some()))
}

/// Whether a file is named as Amp names a thread (`T-<uuid>.json`).
pub fn is_thread_file(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
        && p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("T-"))
}

/// A run's statuses that mean its result has not reached the model yet.
const UNFINISHED: &[&str] = &["in-progress", "queued", "blocked-on-user", "pending"];

/// A tool result as the model read it: its content and whether the tool failed; None while the run is unfinished.
fn result_of(run: &Value) -> Option<(ToolResultContent, bool)> {
    let status = run.get("status").and_then(Value::as_str).unwrap_or("done");
    if UNFINISHED.contains(&status) {
        return None;
    }
    let text_of = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    Some(match status {
        "error" => {
            let e = run.get("error").unwrap_or(&Value::Null);
            let msg = e
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| text_of(e), str::to_string);
            (ToolResultContent::Text(msg), true)
        }
        "cancelled" | "cancellation-requested" | "rejected-by-user" => {
            let what = if status == "rejected-by-user" {
                "[The user rejected this tool call]"
            } else {
                "[Tool execution was cancelled]"
            };
            let partial = run.get("result").map(text_of).unwrap_or_default();
            let text = if partial.trim().is_empty() {
                what.to_string()
            } else {
                format!("{partial}\n{what}")
            };
            (ToolResultContent::Text(text), true)
        }
        _ => {
            let result = run.get("result").unwrap_or(&Value::Null);
            // content blocks (text and images, as MCP tools return them) stay blocks; any other value is sent as its
            // JSON
            let blocks = result.as_array().filter(|a| {
                !a.is_empty()
                    && a.iter().all(|b| {
                        matches!(
                            b.get("type").and_then(Value::as_str),
                            Some("text" | "image")
                        )
                    })
            });
            match blocks.map(|a| a.iter().map(block_of).collect::<Vec<_>>()) {
                Some(bs) => (ToolResultContent::Blocks(bs), false),
                None => (ToolResultContent::Text(text_of(result)), false),
            }
        }
    })
}

/// One block of a message as cairn models it: the Messages API's as the wire reads them (an image's base64 data
/// under `source` with either spelling of its media type); a block of a kind cairn does not model kept verbatim.
fn block_of(v: &Value) -> Block {
    if v.get("type").and_then(Value::as_str) == Some("image") {
        let src = v.get("source").unwrap_or(v);
        let media = src
            .get("media_type")
            .or_else(|| src.get("mediaType"))
            .or_else(|| src.get("mimeType"))
            .and_then(Value::as_str);
        if let (Some(media), Some(data)) = (media, src.get("data").and_then(Value::as_str))
            && let Ok(b) = crate::model::image::from_base64(media, data)
        {
            return b;
        }
        return super::unknown_block(v);
    }
    wire::block_from_json(v, "").unwrap_or_else(|_| super::unknown_block(v))
}

/// A message's blocks, and the fields Amp adds to known blocks (kept beside them, by block index).
fn blocks(
    content: &Value,
    report: &mut ImportReport,
) -> (Vec<Block>, serde_json::Map<String, Value>) {
    let mut out = Vec::new();
    let mut extras = serde_json::Map::new();
    let items: std::borrow::Cow<'_, [Value]> = match content {
        Value::String(s) => vec![json!({"type": "text", "text": s})].into(),
        Value::Array(a) => a.as_slice().into(),
        _ => Vec::new().into(),
    };
    for b in items.iter() {
        if b.get("type").and_then(Value::as_str) == Some("tool_result") {
            let id = b
                .get("toolUseID")
                .or_else(|| b.get("tool_use_id"))
                .and_then(Value::as_str);
            let run = b.get("run").unwrap_or(&Value::Null);
            match (id, result_of(run)) {
                (Some(id), Some((content, is_error))) => {
                    if let Some(s) = run.get("status") {
                        extras.insert(out.len().to_string(), json!({"status": s}));
                    }
                    out.push(Block::ToolResult {
                        tool_use_id: id.to_string(),
                        content,
                        is_error,
                    });
                }
                (Some(_), None) => {
                    report.skip("tool runs not finished (not yet sent to the model)")
                }
                (None, _) => out.push(super::unknown_block(b)),
            }
            continue;
        }
        let mut one = Value::Array(vec![b.clone()]);
        super::claude_code::split_block_extras(&mut one, out.len(), &mut extras);
        if let Value::Array(mut v) = one
            && let Some(b) = v.pop()
        {
            out.push(block_of(&b));
        }
    }
    (out, extras)
}

/// A reply's measured usage.
fn usage_of(u: &Value) -> Option<Usage> {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let (input, write, read) = (
        n("inputTokens"),
        n("cacheCreationInputTokens"),
        n("cacheReadInputTokens"),
    );
    let output = n("outputTokens").unwrap_or(0);
    let mut usage = Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: output,
        cache_read_input_tokens: read.unwrap_or(0),
        cache_creation_input_tokens: write.unwrap_or(0),
        ..Usage::default()
    };
    // the prompt's total alone: all of it counted as input
    if input.is_none()
        && write.is_none()
        && read.is_none()
        && let Some(total) = n("totalInputTokens")
    {
        usage.input_tokens = total;
    }
    (usage.prompt() + usage.output_tokens > 0).then_some(usage)
}

/// An `info` message that continues the thread from a summary: the marker that stands for it.
fn summary_marker(m: &Value) -> Option<NewMessage> {
    let s = m
        .get("content")
        .and_then(Value::as_array)?
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("summary"))?
        .get("summary")?;
    let (text, cairn) = match s.get("type").and_then(Value::as_str) {
        Some("message") => (
            s.get("summary").and_then(Value::as_str)?.to_string(),
            harness_meta("amp", Kept::Nothing, true),
        ),
        Some("thread") => (
            format!(
                "Amp continued this thread from a summary of thread {} (the summary is kept there)",
                s.get("thread").and_then(Value::as_str).unwrap_or("?")
            ),
            unrecorded_harness_meta("amp", Kept::Nothing),
        ),
        _ => return None,
    };
    let mut nm = NewMessage::text(Role::System, text);
    nm.meta = json!({"source": "amp", "messageId": m.get("messageId"), "cairn": cairn});
    Some(nm)
}

/// A `file:` URI as a path (`file:///home/me/p%20q` is `/home/me/p q`); any other text as it is.
fn path_of_uri(uri: &str) -> String {
    url::Url::parse(uri)
        .ok()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok())
        .map_or_else(|| uri.to_string(), |p: PathBuf| p.display().to_string())
}

/// The note for the ledger's requests that answer no reply of the thread (Amp's own calls), if any.
fn side_requests(doc: &Value, measured: &[i64]) -> Option<String> {
    let side: Vec<&Value> = doc
        .pointer("/usageLedger/events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.get("toMessageId")
                .and_then(Value::as_i64)
                .is_none_or(|to| !measured.contains(&to))
        })
        .collect();
    let tokens: u64 = side
        .iter()
        .map(|e| {
            let n = |k: &str| e.pointer(&format!("/tokens/{k}")).and_then(Value::as_u64);
            n("input").unwrap_or(0) + n("output").unwrap_or(0)
        })
        .sum();
    (!side.is_empty()).then(|| {
        format!(
            "{} request(s) in Amp's usage ledger answer no reply of the thread ({tokens} tokens): not counted",
            side.len()
        )
    })
}

/// The conversation's metadata: the thread's header (the work dir its first workspace tree), its environment, and
/// the window Amp ran each model with.
fn thread_meta(doc: &Value, windows: serde_json::Map<String, Value>) -> Value {
    let cwd = doc
        .pointer("/env/initial/trees/0/uri")
        .and_then(Value::as_str)
        .map(path_of_uri);
    let mut meta = json!({
        "source": "amp",
        "header": {"id": doc.get("id"), "cwd": cwd, "created": doc.get("created")},
        "v": doc.get("v"),
        "agentMode": doc.get("agentMode"),
        "env": doc.get("env"),
        "relationships": doc.get("relationships"),
    });
    if !windows.is_empty() {
        meta["windows"] = Value::Object(windows);
    }
    meta
}

pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let items = doc
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| FormatError::new(path, line, "an Amp thread without a list of messages"))?;
    let mut built: Vec<NewMessage> = Vec::new();
    let mut windows = serde_json::Map::new();
    // the replies that carry usage, by Amp's message id (what the ledger's requests answer)
    let mut measured: Vec<i64> = Vec::new();
    for (k, m) in items.iter().enumerate() {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => {
                match summary_marker(m) {
                    Some(nm) => built.push(nm),
                    None => report.skip(format!(
                        "{} messages (kept as metadata)",
                        other.unwrap_or("role-less")
                    )),
                }
                continue;
            }
        };
        let (content, extras) = blocks(m.get("content").unwrap_or(&Value::Null), &mut report);
        if content.is_empty() {
            report.skip(format!("{} messages with nothing sent", role.as_str()));
            continue;
        }
        let mut nm = NewMessage::new(role, content);
        nm.meta = json!({"source": "amp", "index": k, "messageId": m.get("messageId")});
        for key in ["state", "meta", "agentMode", "discoveredGuidanceFiles"] {
            if let Some(v) = m.get(key) {
                nm.meta[key] = v.clone();
            }
        }
        if !extras.is_empty() {
            nm.meta["block_extras"] = Value::Object(extras);
        }
        nm.created_at = super::timestamp_ms(m.pointer("/meta/sentAt"));
        if role == Role::Assistant
            && let Some(u) = m.get("usage")
        {
            let model = u.get("model").and_then(Value::as_str);
            nm.meta["model"] = json!(model);
            nm.meta["usage"] = u.clone();
            nm.usage = usage_of(u);
            nm.created_at = nm
                .created_at
                .or_else(|| super::timestamp_ms(u.get("timestamp")));
            if let (Some(model), Some(w)) = (model, u.get("maxInputTokens").and_then(Value::as_u64))
            {
                windows.insert(model.to_string(), json!(w));
            }
            if nm.usage.is_some()
                && let Some(id) = m.get("messageId").and_then(Value::as_i64)
            {
                measured.push(id);
            }
        }
        built.push(nm);
    }
    if built.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: the Amp thread holds no prompt or reply yet",
        ));
    }
    if let Some(n) = side_requests(doc, &measured) {
        report.notes.push(n);
    }
    let meta = thread_meta(doc, windows);
    Ok(Parsed::chained(
        built,
        doc.get("title").and_then(Value::as_str),
        meta,
        report,
    ))
}
