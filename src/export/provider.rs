//! Provider-ready request bodies, so a user can re-send a fork and `send` can continue a conversation: what the
//! path sends now (the harness's and cairn's compactions applied, [`crate::reclaim::assemble`]), repaired to be
//! pair-valid under the provider's rules ([`crate::pairs::repair`]: nothing is dropped after a repair), images
//! inline as base64, system text where the provider wants it. Blocks a provider would reject are left out and
//! counted: thinking without Anthropic's signature (unsigned, or signed by another service:
//! [`anthropic_signature`]), empty or whitespace-only text and unknown blocks (Anthropic), thinking of any kind
//! and unknown blocks (OpenAI).

use serde_json::{Value, json};

use crate::model::{Block, Role, ToolResultContent};
use crate::pairs::{self, Repairs};
use crate::reclaim::SentMessage;
use crate::store::{Store, StoreError};
use crate::wire::{self, Images};

/// A request body, what was repaired to make it valid, and what was left out of it.
#[derive(Debug, Clone)]
pub struct ProviderBody {
    pub body: Value,
    pub repairs: Repairs,
    /// Blocks the provider would reject (unsigned thinking, unknown blocks, reasoning records).
    pub blocks_left_out: usize,
}

/// Whether a thinking block's signature is one the Messages API verifies: Anthropic's (the API's, Bedrock's or
/// Vertex's: one format), base64 of a record whose first field is its second (byte `0x12`: the text starts with
/// `E`). The reasoning other services return in the same place is not, and sent to Anthropic it fails the whole
/// request: GitHub Copilot's `reasoningOpaque` (Anthropic's signature inside an envelope of Copilot's, `C…`),
/// OpenAI's encrypted reasoning (a Fernet token, `gAAAA…`), the reasoning item pi keeps as JSON (`{…`), Gemini's
/// thought signatures. Left out, the request stands (earlier turns' thinking is optional).
pub fn anthropic_signature(sig: &str) -> bool {
    sig.len() >= 16
        && sig.starts_with('E')
        && sig
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

pub(super) fn anthropic_keeps(b: &Value) -> bool {
    match b.get("type").and_then(Value::as_str) {
        Some("thinking") => b
            .get("signature")
            .and_then(Value::as_str)
            .is_some_and(anthropic_signature),
        // the API refuses a text block that is empty or only whitespace
        Some("text") => b
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty()),
        // a call or result the API would refuse (a field it requires missing) is no block it takes
        Some("tool_use" | "server_tool_use") => has_str(b, "id") && has_str(b, "name"),
        Some("tool_result" | "web_search_tool_result") => has_str(b, "tool_use_id"),
        Some("image" | "document") => b.get("source").is_some_and(Value::is_object),
        Some("redacted_thinking" | "search_result") => true,
        _ => false,
    }
}

fn has_str(b: &Value, key: &str) -> bool {
    b.get(key).is_some_and(Value::is_string)
}

/// Blocks as wire JSON, images inlined as base64 (stored ones loaded from the store).
fn wire_of(store: &Store, s: &SentMessage) -> Result<Vec<Value>, StoreError> {
    let load = |h: &str| store.blob(h).map_err(|e| e.to_string());
    wire::blocks_to_json(&s.content, &Images::Base64(&load)).map_err(|reason| StoreError::Corrupt {
        id: s.sources.last().cloned().unwrap_or_default(),
        reason,
    })
}

/// Unknown blocks are never sent: only what cairn models reaches a provider.
fn known(b: &Block) -> bool {
    !matches!(b, Block::Other(v) if v.get("type").and_then(Value::as_str) == Some("unknown"))
}

/// Whether Anthropic's API takes a block: what [`anthropic_keeps`] says of its wire form, read off the block (a
/// block cairn does not model is its own wire form).
fn anthropic_sends(b: &Block) -> bool {
    match b {
        Block::Image { .. } | Block::ToolUse { .. } | Block::ToolResult { .. } => true,
        Block::Text { text } => !text.trim().is_empty(),
        Block::Thinking { signature, .. } => signature.as_deref().is_some_and(anthropic_signature),
        Block::Other(v) => known(b) && anthropic_keeps(v),
    }
}

/// `msgs` without the blocks the provider would refuse (`sends` says which it takes), and without the messages
/// left empty by that: done before the repair, so what the repair makes valid is what is sent (a prompt made only
/// of blocks no provider takes would otherwise vanish after it, and the request open with the assistant). The
/// count of blocks left out.
fn sendable(msgs: &mut Vec<SentMessage>, sends: fn(&Block) -> bool) -> usize {
    let mut left_out = 0;
    for m in msgs.iter_mut() {
        let before = m.content.len();
        m.content.retain(sends);
        left_out += before - m.content.len();
    }
    msgs.retain(|m| !m.content.is_empty());
    left_out
}

/// An Anthropic Messages request body: `{"system", "messages"}`, repaired, with consecutive same-role messages
/// merged (tool results first) and OpenAI-style tool messages folded into user messages.
pub fn to_anthropic(store: &Store, msgs: &[SentMessage]) -> Result<ProviderBody, StoreError> {
    let mut msgs = msgs.to_vec();
    let blocks_left_out = sendable(&mut msgs, anthropic_sends);
    let repairs = pairs::repair(&mut msgs);
    let mut system: Vec<String> = Vec::new();
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
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
        let blocks = wire_of(store, m)?;
        // a message the repair left without blocks (it moves results to the message they answer from)
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
        repairs,
        blocks_left_out,
    })
}

/// An OpenAI Chat Completions request body, repaired: system messages, assistant `tool_calls` (arguments as JSON
/// strings), one `tool` message per result, images as data URLs.
pub fn to_openai(store: &Store, msgs: &[SentMessage]) -> Result<ProviderBody, StoreError> {
    let mut msgs = msgs.to_vec();
    // thinking of any kind and unknown blocks are never sent to OpenAI
    let blocks_left_out = sendable(&mut msgs, |b| {
        !matches!(b, Block::Thinking { .. } | Block::Other(_))
    });
    let repairs = pairs::repair(&mut msgs);
    let mut out: Vec<Value> = Vec::new();
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
                // left out before the repair
                Block::Thinking { .. } | Block::Other(_) => {}
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
        repairs,
        blocks_left_out,
    })
}
