//! Zed's agent threads: a thread of its store ([`db`]), read as the document Zed keeps (`DbThread`, version
//! `0.3.0`; a thread shared from another machine, `1.0.0`, has the same messages): `{title, messages, updated_at,
//! request_token_usage, cumulative_token_usage, model: {provider, model}, subagent_context, …}`.
//!
//! Messages are Rust enums as serde writes them: `{"User": {id, content}}` (parts `{"Text": …}`, `{"Mention":
//! {uri, content}}`: a file, symbol, selection, thread or rule the user attached, sent as its content; `{"Image":
//! {source, size}}`: a PNG in base64), `{"Agent": {content, tool_results}}` (parts `Text`, `Thinking {text,
//! signature}`, `RedactedThinking`, `ToolUse {id, name, input}`; the results of its calls, keyed by call, sent as
//! the user message after it) and `"Resume"` (Zed asked the model to continue where it left off).
//!
//! Usage: Zed keeps, for each prompt the user sent, what the provider measured of the last request it made in that
//! turn (`request_token_usage`, keyed by the user message): the reply that ends the turn carries it, one request's
//! measure. The turn's earlier requests are not recorded, and the import says how many replies go without.

pub mod db;

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};

/// The versions of Zed's thread document read here (its first agent's, `0.1.0`, `0.2.0` and none, by
/// [`legacy_messages`]).
const VERSIONS: &[&str] = &["0.3.0", "1.0.0"];

/// Whether a document is a Zed thread: a list of messages each `{"User": …}`, `{"Agent": …}` or `"Resume"`; or
/// one its first agent kept ([`is_legacy`]).
pub fn is_zed(doc: &Value) -> bool {
    let Some(messages) = doc.get("messages").and_then(Value::as_array) else {
        return false;
    };
    doc.get("updated_at").is_some()
        && !messages.is_empty()
        && messages.iter().all(|m| {
            m.as_str() == Some("Resume") || m.get("User").is_some() || m.get("Agent").is_some()
        })
        || is_legacy(doc)
}

/// Whether a document is a thread of Zed's first agent (`SerializedThread`: versions `0.1.0`, `0.2.0`, and none
/// before): `{summary, updated_at, messages: [{id, role, segments | text, tool_uses, tool_results, context}]}`.
fn is_legacy(doc: &Value) -> bool {
    doc.get("summary").is_some()
        && doc.get("updated_at").is_some()
        && doc
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|ms| {
                !ms.is_empty()
                    && ms.iter().all(|m| {
                        m.get("role").is_some()
                            && (m.get("segments").is_some() || m.get("text").is_some())
                    })
            })
}

/// The user message of a legacy message's tool results (None without any).
fn legacy_results(m: &Value) -> Option<Vec<Block>> {
    let results: Vec<Block> = m
        .get("tool_results")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|r| tool_result(r, ""))
        .collect();
    (!results.is_empty()).then_some(results)
}

/// A legacy message's own blocks: the context the user attached, its segments (or its text), its calls.
fn legacy_blocks(m: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(c) = m
        .get("context")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    {
        out.push(Block::text(c));
    }
    if let Some(t) = m.get("text").and_then(Value::as_str) {
        out.push(Block::text(t));
    }
    for seg in m
        .get("segments")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        match seg.get("type").and_then(Value::as_str) {
            Some("text") => out.push(Block::text(
                seg.get("text").and_then(Value::as_str).unwrap_or(""),
            )),
            Some("thinking") => out.push(thinking(seg)),
            Some("RedactedThinking") => {
                out.push(Block::Other(
                    json!({"type": "redacted_thinking", "data": seg.get("data")}),
                ));
            }
            _ => out.push(super::unknown_block(seg)),
        }
    }
    for u in m
        .get("tool_uses")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        out.push(tool_use(u));
    }
    out
}

/// The messages of a thread of Zed's first agent. Its usage is a list by message: the request that produced a
/// reply is measured at the reply's index (a user message's slot repeats an earlier figure and is not read).
fn legacy_messages(doc: &Value, model: Option<&str>) -> (Vec<NewMessage>, usize) {
    let usage = doc.get("request_token_usage").and_then(Value::as_array);
    let mut built = Vec::new();
    let mut measured = 0;
    for (k, m) in doc["messages"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
    {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("assistant") => Role::Assistant,
            Some("user") => Role::User,
            _ => continue,
        };
        let mut content = legacy_blocks(m);
        let results = legacy_results(m);
        if role == Role::User
            && let Some(r) = &results
        {
            // version 0.1.0 kept the results on the user message that sent them
            content.splice(0..0, r.iter().cloned());
        }
        if !content.is_empty() {
            let mut nm = NewMessage::new(role, content);
            nm.meta = json!({"source": "zed", "index": k, "id": m.get("id"), "hidden": m.get("is_hidden")});
            if role == Role::Assistant {
                nm.meta["model"] = json!(model);
                nm.usage = usage.and_then(|u| u.get(k)).and_then(usage_of);
                measured += usize::from(nm.usage.is_some());
            }
            built.push(nm);
        }
        if role == Role::Assistant
            && let Some(r) = results
        {
            let mut nm = NewMessage::new(Role::User, r);
            nm.meta = json!({"source": "zed", "index": k, "results": true});
            built.push(nm);
        }
    }
    (built, measured)
}

/// A PNG Zed holds in base64 (`LanguageModelImage`), as an image block.
fn image(v: &Value) -> Option<Block> {
    let data = v.get("source").and_then(Value::as_str)?;
    crate::model::image::from_base64("image/png", data).ok()
}

/// What a tool returned, as Zed serialises it: text (bare or `{"Text": …}`), an image, or a list of them.
fn result_content(v: &Value) -> ToolResultContent {
    let one = |v: &Value| -> Option<Block> {
        match v {
            Value::String(s) => Some(Block::text(s.as_str())),
            v => v
                .get("Text")
                .and_then(Value::as_str)
                .map(Block::text)
                .or_else(|| v.get("Image").and_then(image))
                .or_else(|| {
                    (v.get("type").and_then(Value::as_str) == Some("text"))
                        .then(|| v.get("text").and_then(Value::as_str).map(Block::text))
                        .flatten()
                }),
        }
    };
    let blocks: Vec<Block> = match v {
        Value::Array(a) => a.iter().filter_map(one).collect(),
        v => one(v).into_iter().collect(),
    };
    match blocks.as_slice() {
        [Block::Text { text }] => ToolResultContent::Text(text.clone()),
        _ => ToolResultContent::Blocks(blocks),
    }
}

/// A user message's parts as blocks: what it typed, the context it attached, its images.
fn user_blocks(m: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    for p in m
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        if let Some(t) = p.get("Text").and_then(Value::as_str) {
            out.push(Block::text(t));
        } else if let Some(mention) = p.get("Mention") {
            // the attachment as Zed sends it: its content, named by where it came from
            let uri = mention.get("uri").map(Value::to_string).unwrap_or_default();
            let content = mention.get("content").and_then(Value::as_str).unwrap_or("");
            out.push(Block::text(format!(
                "<context>\n{uri}\n{content}\n</context>"
            )));
        } else if let Some(img) = p.get("Image") {
            out.push(image(img).unwrap_or_else(|| super::unknown_block(p)));
        } else {
            out.push(super::unknown_block(p));
        }
    }
    out
}

/// An agent message's parts as blocks, and the user message of its calls' results (None without any).
fn agent_blocks(m: &Value) -> (Vec<Block>, Option<Vec<Block>>) {
    let mut out = Vec::new();
    for p in m
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        if let Some(t) = p.get("Text").and_then(Value::as_str) {
            out.push(Block::text(t));
        } else if let Some(t) = p.get("Thinking") {
            out.push(thinking(t));
        } else if let Some(d) = p.get("RedactedThinking") {
            out.push(Block::Other(
                json!({"type": "redacted_thinking", "data": d}),
            ));
        } else if let Some(u) = p.get("ToolUse") {
            out.push(tool_use(u));
        } else if let Some(img) = p.get("Image") {
            out.push(image(img).unwrap_or_else(|| super::unknown_block(p)));
        } else {
            out.push(super::unknown_block(p));
        }
    }
    let results: Vec<Block> = m
        .get("tool_results")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|r| r.iter())
        .map(|(id, r)| tool_result(r, id))
        .collect();
    (out, (!results.is_empty()).then_some(results))
}

/// A call as Zed keeps it (`LanguageModelToolUse`, and its first agent's `SerializedToolUse`).
fn tool_use(u: &Value) -> Block {
    let s = |k: &str| u.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Block::ToolUse {
        id: s("id"),
        name: s("name"),
        input: u
            .get("input")
            .filter(|i| i.is_object())
            .cloned()
            .unwrap_or_else(|| json!({})),
    }
}

/// A tool's result as Zed keeps it (`LanguageModelToolResult`; its first agent's too), answering `id` where the
/// result does not name its call.
fn tool_result(r: &Value, id: &str) -> Block {
    Block::ToolResult {
        tool_use_id: r
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or(id)
            .to_string(),
        content: result_content(r.get("content").unwrap_or(&Value::Null)),
        is_error: r.get("is_error").and_then(Value::as_bool) == Some(true),
    }
}

/// Reasoning as Zed keeps it (`{text, signature}`).
fn thinking(t: &Value) -> Block {
    Block::Thinking {
        thinking: t
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        signature: t
            .get("signature")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

/// One request's usage as Zed keeps it (`TokenUsage`).
fn usage_of(u: &Value) -> Option<Usage> {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let usage = Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_creation_input_tokens: n("cache_creation_input_tokens"),
        cache_read_input_tokens: n("cache_read_input_tokens"),
        ..Usage::default()
    };
    (usage.prompt() + usage.output_tokens > 0).then_some(usage)
}

/// The conversation's metadata: the thread's header (its work dir the first folder it was started in), its model
/// and what Zed counted, a subagent's thread marked.
fn thread_meta(doc: &Value, version: &str) -> Value {
    let row = doc.get("zed_row");
    // the folders the thread was started in, one a line
    let cwd = row
        .and_then(|r| r.get("folder_paths"))
        .and_then(Value::as_str)
        .and_then(|p| p.lines().next())
        .filter(|p| !p.is_empty());
    let mut meta = json!({
        "source": "zed",
        "header": {"id": row.and_then(|r| r.get("id")), "cwd": cwd,
                   "created": row.and_then(|r| r.get("created_at"))},
        "version": version,
        "model": doc.get("model"),
        "cumulative_token_usage": doc.get("cumulative_token_usage"),
        "detailed_summary": doc.get("detailed_summary"),
        "profile": doc.get("profile"),
    });
    if doc.get("subagent_context").is_some_and(|c| !c.is_null())
        || row
            .and_then(|r| r.get("parent_id"))
            .is_some_and(|p| !p.is_null())
    {
        meta["subagent"] = json!(true);
    }
    meta
}

/// The messages of a thread (`0.3.0`), and how many replies carry a measure.
fn thread_messages(doc: &Value, model: Option<&str>) -> (Vec<NewMessage>, usize) {
    let usage = doc.get("request_token_usage").and_then(Value::as_object);
    let mut built: Vec<NewMessage> = Vec::new();
    // the turn's prompt, and the turn's last reply so far (where its measure goes)
    let mut turn: Option<String> = None;
    let mut last_reply: Option<usize> = None;
    let mut measured = 0;
    let mut finish_turn =
        |built: &mut Vec<NewMessage>, turn: &Option<String>, last: Option<usize>| {
            if let (Some(id), Some(at)) = (turn, last)
                && let Some(u) = usage.and_then(|u| u.get(id)).and_then(usage_of)
            {
                built[at].usage = Some(u);
                measured += 1;
            }
        };
    for (k, m) in doc["messages"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
    {
        if let Some(u) = m.get("User") {
            finish_turn(&mut built, &turn, last_reply.take());
            turn = u.get("id").and_then(Value::as_str).map(str::to_string);
            let content = user_blocks(u);
            if content.is_empty() {
                continue;
            }
            let mut nm = NewMessage::new(Role::User, content);
            nm.meta = json!({"source": "zed", "index": k, "id": u.get("id")});
            built.push(nm);
        } else if let Some(a) = m.get("Agent") {
            let (content, results) = agent_blocks(a);
            if !content.is_empty() {
                let mut nm = NewMessage::new(Role::Assistant, content);
                nm.meta = json!({"source": "zed", "index": k, "model": model});
                last_reply = Some(built.len());
                built.push(nm);
            }
            if let Some(r) = results {
                let mut nm = NewMessage::new(Role::User, r);
                nm.meta = json!({"source": "zed", "index": k, "results": true});
                built.push(nm);
            }
        } else {
            let mut nm = NewMessage::text(Role::User, "Continue where you left off");
            nm.meta = json!({"source": "zed", "index": k, "resume": true, "synthetic": true});
            built.push(nm);
        }
    }
    finish_turn(&mut built, &turn, last_reply.take());
    (built, measured)
}

pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let version = doc.get("version").and_then(Value::as_str).unwrap_or("");
    let model = doc.pointer("/model/model").and_then(Value::as_str);
    let (built, measured) = if is_legacy(doc) && ["", "0.1.0", "0.2.0"].contains(&version) {
        legacy_messages(doc, model)
    } else if VERSIONS.contains(&version) {
        thread_messages(doc, model)
    } else {
        return Err(FormatError::new(
            path,
            line,
            format!(
                "a Zed thread of version {version:?}, which this cairn does not read (it reads {VERSIONS:?}, and 0.1.0, 0.2.0)"
            ),
        ));
    };
    let mut report = ImportReport::default();
    if built.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: the Zed thread holds no prompt or reply yet",
        ));
    }
    let replies = built.iter().filter(|m| m.role == Role::Assistant).count();
    if replies > measured {
        report.notes.push(format!(
            "usage: {measured} of {replies} replies carry what the provider measured (Zed keeps one request's usage \
             a prompt; the others are not recorded)"
        ));
    }
    let named = ["title", "summary"]
        .iter()
        .filter_map(|k| doc.get(*k))
        .chain(doc.pointer("/zed_row/summary"))
        .find_map(Value::as_str);
    Ok(Parsed::chained(
        built,
        named,
        thread_meta(doc, version),
        report,
    ))
}
