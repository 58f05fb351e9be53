//! JSON forms of messages: the Anthropic Messages wire shape (what `append` reads and `show`/`resume` print) and
//! the stored shape (the same, with image bytes replaced by a content hash into the blob table).
//!
//! One converter serves both, so the stored form cannot drift from what is sent to a provider.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::model::{Block, ImageData, NewMessage, Role, ToolResultContent};

/// Why a JSON value is not a message or block; `at` is a JSON path such as `[2].content[0]`.
#[derive(Debug, thiserror::Error)]
#[error("{at}: {reason}")]
pub struct WireError {
    pub at: String,
    pub reason: String,
}

fn err(at: &str, reason: impl Into<String>) -> WireError {
    WireError {
        at: at.to_string(),
        reason: reason.into(),
    }
}

/// Parses one message in Anthropic Messages shape: `{"role": ..., "content": string | [blocks]}`. Fields other
/// than role and content are kept in the message's metadata.
pub fn message_from_wire(v: &Value, at: &str) -> Result<NewMessage, WireError> {
    let obj = v
        .as_object()
        .ok_or_else(|| err(at, "a message must be a JSON object"))?;
    let role_s = obj
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| err(at, "missing \"role\""))?;
    let role = Role::parse(role_s).ok_or_else(|| {
        err(
            &format!("{at}.role"),
            format!("unknown role {role_s:?} (user, assistant, tool or system)"),
        )
    })?;
    let content = obj
        .get("content")
        .ok_or_else(|| err(at, "missing \"content\""))?;
    let content = blocks_from_json(content, &format!("{at}.content"))?;
    let mut meta = Map::new();
    for (k, val) in obj {
        if k != "role" && k != "content" {
            meta.insert(k.clone(), val.clone());
        }
    }
    Ok(NewMessage {
        role,
        content,
        meta: if meta.is_empty() {
            Value::Null
        } else {
            Value::Object(meta)
        },
        usage: None,
        created_at: None,
    })
}

/// Parses content given as a string (one text block) or an array of blocks.
pub fn blocks_from_json(v: &Value, at: &str) -> Result<Vec<Block>, WireError> {
    blocks_from_value(v.clone(), at)
}

/// Like [`blocks_from_json`], taking the value (strings are moved, not copied: the store's hot path).
pub fn blocks_from_value(v: Value, at: &str) -> Result<Vec<Block>, WireError> {
    match v {
        Value::String(s) => Ok(vec![Block::Text { text: s }]),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, b) in items.into_iter().enumerate() {
                out.push(block_from_value(b).map_err(|(rel, reason)| WireError {
                    at: format!("{at}[{i}]{rel}"),
                    reason,
                })?);
            }
            Ok(out)
        }
        _ => Err(err(at, "content must be a string or an array of blocks")),
    }
}

/// Parses one block. Unknown block types are kept verbatim as [`Block::Other`].
pub fn block_from_json(v: &Value, at: &str) -> Result<Block, WireError> {
    block_from_value(v.clone()).map_err(|(rel, reason)| WireError {
        at: format!("{at}{rel}"),
        reason,
    })
}

/// An error inside a block: (path relative to the block, reason). Paths are only built on failure.
type BlockError = (String, String);

fn take_str(o: &mut Map<String, Value>, key: &str, rel: &str) -> Result<String, BlockError> {
    match o.remove(key) {
        Some(Value::String(s)) => Ok(s),
        _ => Err((rel.to_string(), format!("missing string field \"{key}\""))),
    }
}

fn block_from_value(v: Value) -> Result<Block, BlockError> {
    let Value::Object(mut o) = v else {
        return Err((
            String::new(),
            "a content block must be a JSON object".into(),
        ));
    };
    let ty = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        _ => return Err((String::new(), "missing string field \"type\"".into())),
    };
    // A block with fields beyond the modelled ones is kept verbatim, so nothing is lost on the way back out
    // (cache_control, citations, caller, ...).
    let only = |o: &Map<String, Value>, keys: &[&str]| o.keys().all(|k| keys.contains(&k.as_str()));
    let kind = match ty {
        "text" if only(&o, &["type", "text"]) => 1,
        "thinking" if only(&o, &["type", "thinking", "signature"]) => 2,
        "tool_use" if only(&o, &["type", "id", "name", "input"]) => 3,
        "tool_result" if only(&o, &["type", "tool_use_id", "content", "is_error"]) => 4,
        "image" if only(&o, &["type", "source"]) => 5,
        _ => 0,
    };
    Ok(match kind {
        1 => Block::Text {
            text: take_str(&mut o, "text", "")?,
        },
        2 => Block::Thinking {
            thinking: take_str(&mut o, "thinking", "")?,
            signature: match o.remove("signature") {
                Some(Value::String(s)) => Some(s),
                _ => None,
            },
        },
        3 => Block::ToolUse {
            id: take_str(&mut o, "id", "")?,
            name: take_str(&mut o, "name", "")?,
            input: o.remove("input").unwrap_or(Value::Object(Map::new())),
        },
        4 => tool_result_from(o)?,
        5 => image_from(o)?,
        _ => Block::Other(Value::Object(o)),
    })
}

/// A `tool_result` block of the modelled fields: its content a string or blocks.
fn tool_result_from(mut o: Map<String, Value>) -> Result<Block, BlockError> {
    let content = match o.remove("content") {
        None | Some(Value::Null) => ToolResultContent::Text(String::new()),
        Some(Value::String(s)) => ToolResultContent::Text(s),
        Some(c @ Value::Array(_)) => ToolResultContent::Blocks(
            blocks_from_value(c, ".content").map_err(|e| (e.at, e.reason))?,
        ),
        Some(_) => {
            return Err((
                String::new(),
                "tool_result content must be a string or an array of blocks".into(),
            ));
        }
    };
    Ok(Block::ToolResult {
        tool_use_id: take_str(&mut o, "tool_use_id", "")?,
        content,
        is_error: o.get("is_error").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// An `image` block: base64 data, or a blob of the store; a URL or file source is kept as it is.
fn image_from(o: Map<String, Value>) -> Result<Block, BlockError> {
    let Some(Value::Object(src)) = o.get("source") else {
        return Err((String::new(), "image without a \"source\" object".into()));
    };
    let media_type = src
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream")
        .to_string();
    Ok(match src.get("type").and_then(Value::as_str) {
        Some("base64") => {
            let data = src.get("data").and_then(Value::as_str).ok_or_else(|| {
                (
                    ".source".to_string(),
                    "missing string field \"data\"".to_string(),
                )
            })?;
            crate::model::image::from_base64(&media_type, data)
                .map_err(|e| (".source.data".to_string(), e))?
        }
        Some("blob") => {
            let hash = src.get("hash").and_then(Value::as_str).ok_or_else(|| {
                (
                    ".source".to_string(),
                    "missing string field \"hash\"".to_string(),
                )
            })?;
            let dim = |k: &str| {
                src.get(k)
                    .and_then(Value::as_u64)
                    .and_then(|v| u32::try_from(v).ok())
            };
            Block::Image {
                media_type,
                data: ImageData::Blob {
                    hash: hash.to_string(),
                    size: dim("width").zip(dim("height")),
                },
            }
        }
        // URL and file sources are references cairn cannot store; keep them as they are.
        _ => Block::Other(Value::Object(o)),
    })
}

/// How image sources are written out.
pub enum Images<'a> {
    /// As a blob reference (the stored form). Inline bytes are an error here: the store hashes them first.
    Blob,
    /// As base64, loading each blob through the given function (the wire form).
    Base64(&'a dyn Fn(&str) -> Result<Vec<u8>, String>),
}

/// Writes blocks as JSON (the stored or the wire form, per `images`).
pub fn blocks_to_json(blocks: &[Block], images: &Images<'_>) -> Result<Vec<Value>, String> {
    blocks.iter().map(|b| block_to_json(b, images)).collect()
}

pub fn block_to_json(b: &Block, images: &Images<'_>) -> Result<Value, String> {
    Ok(match b {
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::Thinking {
            thinking,
            signature,
        } => match signature {
            Some(s) => json!({"type": "thinking", "thinking": thinking, "signature": s}),
            None => json!({"type": "thinking", "thinking": thinking}),
        },
        Block::ToolUse { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let c = match content {
                ToolResultContent::Text(s) => Value::String(s.clone()),
                ToolResultContent::Blocks(bs) => Value::Array(blocks_to_json(bs, images)?),
            };
            let mut o = json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": c});
            if *is_error {
                o["is_error"] = Value::Bool(true);
            }
            o
        }
        Block::Image { media_type, data } => {
            let source = match (data, images) {
                (ImageData::Blob { hash, size }, Images::Blob) => {
                    let mut s = json!({"type": "blob", "media_type": media_type, "hash": hash});
                    if let Some((w, h)) = size {
                        s["width"] = json!(w);
                        s["height"] = json!(h);
                    }
                    s
                }
                (ImageData::Bytes(_), Images::Blob) => {
                    return Err("inline image bytes must be stored as a blob first".to_string());
                }
                (ImageData::Bytes(bytes), Images::Base64(_)) => json!({
                    "type": "base64", "media_type": media_type,
                    "data": base64::engine::general_purpose::STANDARD.encode(bytes)}),
                (ImageData::Blob { hash, .. }, Images::Base64(load)) => json!({
                    "type": "base64", "media_type": media_type,
                    "data": base64::engine::general_purpose::STANDARD.encode(load(hash)?)}),
            };
            json!({"type": "image", "source": source})
        }
        Block::Other(v) => v.clone(),
    })
}

/// A message in Anthropic Messages shape.
pub fn message_to_wire(
    role: Role,
    content: &[Block],
    images: &Images<'_>,
) -> Result<Value, String> {
    Ok(json!({"role": role.as_str(), "content": blocks_to_json(content, images)?}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_content_is_one_text_block() {
        let m = message_from_wire(&json!({"role": "user", "content": "hi"}), "[0]").unwrap();
        assert_eq!(m.content, vec![Block::text("hi")]);
    }

    #[test]
    fn unknown_and_decorated_blocks_round_trip_verbatim() {
        let blocks = json!([
            {"type": "redacted_thinking", "data": "xyz"},
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
            {"type": "thinking", "thinking": "t", "signature": "sig=="},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}], "is_error": true}
        ]);
        let parsed = blocks_from_json(&blocks, "c").unwrap();
        assert!(matches!(parsed[0], Block::Other(_)));
        assert!(matches!(parsed[1], Block::Other(_)));
        let back = blocks_to_json(&parsed, &Images::Blob).unwrap();
        assert_eq!(Value::Array(back), blocks);
    }

    #[test]
    fn bad_role_names_the_place() {
        let e = message_from_wire(&json!({"role": "bot", "content": "x"}), "[3]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[3].role: unknown role \"bot\" (user, assistant, tool or system)"
        );
    }

    #[test]
    fn base64_image_decodes_and_reencodes() {
        let v = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAEC"}});
        let b = block_from_json(&v, "x").unwrap();
        assert_eq!(
            b,
            Block::Image {
                media_type: "image/png".into(),
                data: ImageData::Bytes(vec![0, 1, 2])
            }
        );
        let load = |_: &str| Ok(vec![]);
        assert_eq!(block_to_json(&b, &Images::Base64(&load)).unwrap(), v);
    }
}
