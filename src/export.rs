//! Writing conversations out in the forms people share: cairn's own lossless JSONL (the whole tree), readable
//! Markdown, one self-contained HTML file, and provider-ready request bodies (Anthropic Messages, OpenAI Chat
//! Completions) for the active path.
//!
//! Exports never carry credentials: metadata keys that name keys, tokens, secrets or passwords, and string values
//! shaped like API keys, are replaced by `"[redacted]"` ([`redact`]).

mod html;
mod markdown;
mod provider;

use serde_json::{Value, json};

use crate::model::{Block, Message};
use crate::store::{Store, StoreError};
use crate::wire::{self, Images};

pub use provider::{ProviderBody, to_anthropic, to_openai};

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Html,
    Markdown,
    Jsonl,
    Anthropic,
    Openai,
}

impl ExportFormat {
    pub fn from_name(s: &str) -> Option<ExportFormat> {
        Some(match s {
            "html" => ExportFormat::Html,
            "markdown" | "md" => ExportFormat::Markdown,
            "jsonl" => ExportFormat::Jsonl,
            "anthropic" => ExportFormat::Anthropic,
            "openai" => ExportFormat::Openai,
            _ => return None,
        })
    }
}

/// What to leave out of readable exports.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub tool_results: bool,
    pub thinking: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tool_results: true,
            thinking: true,
        }
    }
}

/// Exports a conversation. `at` picks the path's end (default: the tip); `jsonl` always writes the whole tree.
pub fn export(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    format: ExportFormat,
    options: Options,
) -> Result<String, StoreError> {
    let conv = store.conversation(conversation)?;
    let path = match at {
        Some(m) => store.path_to(&conv.id, m)?,
        None => store.active_path(&conv.id)?,
    };
    Ok(match format {
        ExportFormat::Jsonl => jsonl(store, &conv.id)?,
        ExportFormat::Markdown => markdown::render(store, &conv, &path, options)?,
        ExportFormat::Html => {
            let all = store.messages(&conv.id)?;
            html::render(store, &conv, &all, &path, options)?
        }
        ExportFormat::Anthropic => serde_json::to_string_pretty(&to_anthropic(store, &path)?.body)
            .map_err(|e| StoreError::InvalidTurn(e.to_string()))?,
        ExportFormat::Openai => serde_json::to_string_pretty(&to_openai(store, &path)?.body)
            .map_err(|e| StoreError::InvalidTurn(e.to_string()))?,
    })
}

/// Blocks as JSON with images inlined as base64.
pub(crate) fn wire_blocks(store: &Store, m: &Message) -> Result<Vec<Value>, StoreError> {
    let load = |h: &str| store.blob(h).map_err(|e| e.to_string());
    wire::blocks_to_json(&m.content, &Images::Base64(&load)).map_err(|reason| StoreError::Corrupt {
        id: m.id.clone(),
        reason,
    })
}

/// cairn's own form: a header line, one line per message (all branches, parents first), one per checkpoint.
pub fn jsonl(store: &Store, conversation: &str) -> Result<String, StoreError> {
    let conv = store.conversation(conversation)?;
    let meta = store.conversation_meta(&conv.id)?;
    let mut out = String::new();
    let mut header = json!({
        "type": "cairn",
        "version": 1,
        "id": conv.id,
        "title": conv.title,
        "tip": conv.tip,
        "created_at": conv.created_at,
        "forked_from": conv.forked_from,
        "meta": meta,
    });
    redact(&mut header);
    out.push_str(&header.to_string());
    out.push('\n');
    for m in store.messages(&conv.id)? {
        let mut line = json!({
            "type": "message",
            "id": m.id,
            "parent": m.parent,
            "role": m.role.as_str(),
            "content": wire_blocks(store, &m)?,
            "created_at": m.created_at,
        });
        if !m.meta.is_null() {
            let mut meta = m.meta.clone();
            redact(&mut meta);
            line["meta"] = meta;
        }
        if let Some(u) = m.usage {
            line["usage"] = serde_json::to_value(u).unwrap_or(Value::Null);
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    for c in store.checkpoints(&conv.id)? {
        out.push_str(&json!({"type": "checkpoint", "label": c.label, "message": c.message, "created_at": c.created_at}).to_string());
        out.push('\n');
    }
    Ok(out)
}

const SECRET_KEYS: &[&str] = &[
    "apikey",
    "api_key",
    "x-api-key",
    "authorization",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "access_token",
    "refresh_token",
    "id_token",
    "session_token",
    "bearer",
    "credential",
    "credentials",
    "credential_pin",
    "private_key",
];

/// Replaces credentials in metadata by `"[redacted]"`: values under keys that name a key, token, secret or
/// password (`input_tokens` and other counts are not credentials and stay), and strings shaped like API keys.
pub fn redact(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, val) in o.iter_mut() {
                let key = k.to_ascii_lowercase().replace('-', "_");
                let named = SECRET_KEYS.iter().any(|s| key == s.replace('-', "_"))
                    || key.ends_with("_api_key")
                    || key.ends_with("apikey")
                    || key.ends_with("_secret");
                if named && !val.is_null() {
                    *val = Value::String("[redacted]".into());
                } else {
                    redact(val);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        Value::String(s) if looks_like_key(s) => *s = "[redacted]".into(),
        _ => {}
    }
}

fn looks_like_key(s: &str) -> bool {
    let t = s.trim();
    let body_ok = |rest: &str| {
        rest.len() >= 20
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    t.strip_prefix("sk-ant-").is_some_and(body_ok)
        || t.strip_prefix("sk-proj-").is_some_and(body_ok)
        || (t.strip_prefix("sk-").is_some_and(body_ok) && !t.contains(' '))
        || t.strip_prefix("Bearer ").is_some_and(body_ok)
}

/// Text of the blocks a reader sees, for Markdown and HTML.
pub(crate) fn is_thinking(b: &Block) -> bool {
    matches!(b, Block::Thinking { .. })
        || matches!(b, Block::Other(v) if v.get("type").and_then(Value::as_str).is_some_and(|t| t == "redacted_thinking" || t == "reasoning"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_and_counts_kept() {
        let mut v = json!({
            "apiKey": "abc", "headers": {"Authorization": "Bearer xyz", "x-api-key": "k"},
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 2},
            "note": "sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaa", "text": "sk- is a prefix",
            "credential_pin": {"id": 1}, "refresh_token": "r"
        });
        redact(&mut v);
        assert_eq!(v["apiKey"], "[redacted]");
        assert_eq!(v["headers"]["Authorization"], "[redacted]");
        assert_eq!(v["headers"]["x-api-key"], "[redacted]");
        assert_eq!(v["usage"]["input_tokens"], 5);
        assert_eq!(v["note"], "[redacted]");
        assert_eq!(v["text"], "sk- is a prefix");
        assert_eq!(v["credential_pin"], "[redacted]");
        assert_eq!(v["refresh_token"], "[redacted]");
    }
}
