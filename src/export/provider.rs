//! Provider-ready request bodies for a path, so a user can re-send a fork: pair-valid under the provider's rules,
//! images inline as base64, system text where the provider wants it.
//!
//! What the model saw after a compaction is the summary and what followed, so the body starts at the last
//! compaction marker of the path. Blocks a provider would reject are left out and counted: unsigned thinking and
//! other harnesses' reasoning records (Anthropic), thinking of any kind (OpenAI).

use serde_json::{Value, json};

use super::wire_blocks;
use crate::model::{Block, Message, Role, ToolResultContent};
use crate::pairs;
use crate::store::{Store, StoreError};

/// A request body and what was left out of it.
#[derive(Debug, Clone)]
pub struct ProviderBody {
    pub body: Value,
    /// Messages of the path not sent (before a compaction, or a dangling tool call at the end).
    pub messages_left_out: usize,
    /// Blocks the provider would reject (unsigned thinking, other harnesses' reasoning records).
    pub blocks_left_out: usize,
}

/// The part of the path the model would see: from the last compaction on, without a dangling call at the end.
fn visible(path: &[Message]) -> (Vec<Message>, usize) {
    let mut start = 0;
    let mut lead: Option<Message> = None;
    if let Some(k) = path
        .iter()
        .rposition(|m| m.cairn_kind() == Some("compaction"))
    {
        start = k + 1;
        let followed_by_summary = path
            .get(k + 1)
            .is_some_and(|m| m.cairn_kind() == Some("compact_summary"));
        if !followed_by_summary {
            // pi and Codex keep the summary in the marker itself
            let text = path[k]
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let mut m = path[k].clone();
            m.role = Role::User;
            m.content = vec![Block::text(format!(
                "[Summary of the earlier conversation]\n{text}"
            ))];
            lead = Some(m);
        }
    }
    let mut out: Vec<Message> = lead.into_iter().collect();
    out.extend(path[start..].iter().cloned());
    // never start on results whose call is not sent
    let skip = out
        .iter()
        .take_while(|m| m.has_tool_result() && m.role != Role::System)
        .count();
    out.drain(..skip);
    // a tool call still waiting for its result cannot be sent
    while let Some(k) = out
        .iter()
        .rposition(|m| m.role == Role::Assistant && m.has_tool_use())
    {
        if pairs::check(&out[k..], false).is_ok() {
            break;
        }
        out.truncate(k);
    }
    let left_out = path.len() - out.len();
    (out, left_out)
}

fn anthropic_keeps(b: &Value) -> bool {
    match b.get("type").and_then(Value::as_str) {
        Some("thinking") => b
            .get("signature")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty()),
        Some(
            "text"
            | "image"
            | "tool_use"
            | "tool_result"
            | "redacted_thinking"
            | "document"
            | "search_result"
            | "server_tool_use"
            | "web_search_tool_result",
        ) => true,
        _ => false,
    }
}

/// An Anthropic Messages request body: `{"system", "messages"}` with consecutive same-role messages merged
/// (tool results first), OpenAI-style tool messages folded into user messages.
pub fn to_anthropic(store: &Store, path: &[Message]) -> Result<ProviderBody, StoreError> {
    let (msgs, messages_left_out) = visible(path);
    let mut system: Vec<String> = Vec::new();
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    let mut blocks_left_out = 0;
    for m in &msgs {
        if m.role == Role::System {
            for b in &m.content {
                if let Block::Text { text } = b {
                    system.push(text.clone());
                }
            }
            continue;
        }
        let role = if m.role == Role::Assistant {
            "assistant"
        } else {
            "user"
        };
        let mut blocks: Vec<Value> = Vec::new();
        for b in wire_blocks(store, m)? {
            if anthropic_keeps(&b) {
                blocks.push(b);
            } else {
                blocks_left_out += 1;
            }
        }
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((r, prev)) if r == role => {
                // tool results must come first in a user message
                let (mut results, mut rest): (Vec<Value>, Vec<Value>) = std::mem::take(prev)
                    .into_iter()
                    .partition(|b| b["type"] == "tool_result");
                let (new_results, new_rest): (Vec<Value>, Vec<Value>) =
                    blocks.into_iter().partition(|b| b["type"] == "tool_result");
                results.extend(new_results);
                rest.extend(new_rest);
                results.extend(rest);
                *prev = results;
            }
            _ => out.push((role.to_string(), blocks)),
        }
    }
    let messages: Vec<Value> = out
        .into_iter()
        .map(|(r, c)| json!({"role": r, "content": c}))
        .collect();
    let mut body = json!({ "messages": messages });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    Ok(ProviderBody {
        body,
        messages_left_out,
        blocks_left_out,
    })
}

/// An OpenAI Chat Completions request body: system messages, assistant `tool_calls` (arguments as JSON strings),
/// one `tool` message per result, images as data URLs.
pub fn to_openai(store: &Store, path: &[Message]) -> Result<ProviderBody, StoreError> {
    let (msgs, messages_left_out) = visible(path);
    let mut out: Vec<Value> = Vec::new();
    let mut blocks_left_out = 0;
    let image_url = |media: &str, data: &crate::model::ImageData| -> Result<Value, StoreError> {
        use base64::Engine as _;
        let bytes = match data {
            crate::model::ImageData::Bytes(b) => b.clone(),
            crate::model::ImageData::Blob { hash, .. } => store.blob(hash)?,
        };
        let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
        Ok(json!({"type": "image_url", "image_url": {"url": format!("data:{media};base64,{b64}")}}))
    };
    for m in &msgs {
        let mut parts: Vec<Value> = Vec::new();
        let mut calls: Vec<Value> = Vec::new();
        let mut results: Vec<Value> = Vec::new();
        for b in &m.content {
            match b {
                Block::Text { text } => parts.push(json!({"type": "text", "text": text})),
                Block::Image { media_type, data } => parts.push(image_url(media_type, data)?),
                Block::ToolUse { id, name, input } => calls.push(json!({
                    "id": id, "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}})),
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let text = match content {
                        ToolResultContent::Text(t) => t.clone(),
                        c => c.text(),
                    };
                    let text = if *is_error {
                        format!("[error] {text}")
                    } else {
                        text
                    };
                    results.push(
                        json!({"role": "tool", "tool_call_id": tool_use_id, "content": text}),
                    );
                }
                Block::Thinking { .. } | Block::Other(_) => blocks_left_out += 1,
            }
        }
        out.extend(results);
        let role = match m.role {
            Role::System => "system",
            Role::Assistant => "assistant",
            Role::User | Role::Tool => "user",
        };
        if parts.is_empty() && calls.is_empty() {
            continue;
        }
        let content = match parts.as_slice() {
            [] => Value::Null,
            [p] if p["type"] == "text" => p["text"].clone(),
            _ if role != "user" => Value::String(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => Value::Array(parts),
        };
        let mut msg = json!({"role": role, "content": content});
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        out.push(msg);
    }
    Ok(ProviderBody {
        body: json!({"messages": out}),
        messages_left_out,
        blocks_left_out,
    })
}
