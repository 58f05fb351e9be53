//! Anthropic Messages and OpenAI Chat Completions request/response JSON: the form people paste from their own
//! code. A request body (`{"system"?, "messages": [...], "tools"?}`), a bare array of messages, or a response
//! (`{"type": "message", ...}` / `{"choices": [...]}`).

use std::path::Path;

use serde_json::{Value, json};

use super::{Format, FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent};
use crate::store::ImportedMessage;
use crate::wire;

/// Anthropic or OpenAI, from the shapes inside.
pub fn detect(v: &Value) -> Format {
    let msgs = v.get("messages").unwrap_or(v);
    let openai = msgs.as_array().is_some_and(|a| {
        a.iter().any(|m| {
            m.get("tool_calls").is_some()
                || m.get("role").and_then(Value::as_str) == Some("tool")
                || m.get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|parts| {
                        parts
                            .iter()
                            .any(|p| p.get("type").and_then(Value::as_str) == Some("image_url"))
                    })
        })
    });
    if openai || v.get("choices").is_some() {
        Format::Openai
    } else {
        Format::Anthropic
    }
}

/// Whether a bare JSON array holds a message (an object with a `role`, or a Responses API `message` item): what
/// makes it a conversation rather than another list.
pub fn holds_a_message(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        a.iter().any(|m| {
            m.get("role").is_some() || m.get("type").and_then(Value::as_str) == Some("message")
        })
    })
}

pub fn parse(path: &Path, lines: &[(usize, Value)], format: Format) -> Result<Parsed, FormatError> {
    // The file is one JSON document (possibly pretty-printed over many lines).
    let doc: Value = if lines.len() == 1 {
        lines[0].1.clone()
    } else {
        let text =
            std::fs::read_to_string(path).map_err(|e| FormatError::new(path, 0, e.to_string()))?;
        serde_json::from_str(&text)
            .map_err(|e| FormatError::new(path, e.line(), format!("not one JSON document: {e}")))?
    };
    let line = lines.first().map_or(1, |l| l.0);
    let mut report = ImportReport::default();
    let mut out: Vec<NewMessage> = Vec::new();
    let mut meta = json!({"source": format.name()});
    let (messages, rest): (Vec<Value>, Value) = match &doc {
        Value::Array(a) => (a.clone(), Value::Null),
        Value::Object(o) if o.get("messages").is_some_and(Value::is_array) => {
            let mut rest = o.clone();
            let msgs = rest
                .remove("messages")
                .and_then(|m| m.as_array().cloned())
                .unwrap_or_default();
            (msgs, Value::Object(rest))
        }
        Value::Object(o) if o.get("choices").is_some() => {
            let msgs = o["choices"]
                .as_array()
                .and_then(|c| c.first())
                .and_then(|c| c.get("message"))
                .cloned()
                .into_iter()
                .collect();
            let mut rest = o.clone();
            rest.remove("choices");
            (msgs, Value::Object(rest))
        }
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("message") => {
            (vec![doc.clone()], Value::Null)
        }
        _ => {
            return Err(FormatError::new(
                path,
                line,
                "expected a \"messages\" array, an array of messages or a response",
            ));
        }
    };
    if messages.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: the document holds no messages",
        ));
    }

    if let Value::Object(rest) = &rest {
        if let Some(system) = rest.get("system") {
            let blocks = wire::blocks_from_json(system, "system")
                .map_err(|e| FormatError::new(path, line, e.to_string()))?;
            let mut m = NewMessage::new(Role::System, blocks);
            m.meta = json!({"source": format.name(), "field": "system"});
            out.push(m);
        }
        meta["request"] = Value::Object(
            rest.iter()
                .filter(|(k, _)| k.as_str() != "system")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        if rest.get("tools").is_some() {
            report.skip("tool definitions (kept as metadata)");
        }
    }
    for (i, m) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let msg = match format {
            Format::Openai => openai_message(m, &at),
            _ => wire::message_from_wire(m, &at).map_err(|e| e.to_string()),
        }
        .map_err(|e| FormatError::new(path, line, e))?;
        out.push(msg);
    }
    // OpenAI gives one message per tool result; consecutive ones answer one assistant message, which the pairing
    // rule accepts as they are.
    let messages: Vec<ImportedMessage> = out
        .into_iter()
        .enumerate()
        .map(|(i, message)| ImportedMessage {
            parent: i.checked_sub(1),
            message,
        })
        .collect();
    let tip = messages.len().checked_sub(1);
    Ok(Parsed {
        title: None,
        messages,
        tip,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    })
}

/// One OpenAI Chat Completions message.
pub(super) fn openai_message(m: &Value, at: &str) -> Result<NewMessage, String> {
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{at}: missing \"role\""))?;
    let mut blocks = match m.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![Block::text(s.clone())],
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(j, p)| openai_part(p, &format!("{at}.content[{j}]")))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(format!(
                "{at}.content: expected a string or an array of parts"
            ));
        }
    };
    let mut meta = serde_json::Map::new();
    for (k, v) in m.as_object().into_iter().flatten() {
        if !matches!(
            k.as_str(),
            "role" | "content" | "tool_calls" | "tool_call_id"
        ) {
            meta.insert(k.clone(), v.clone());
        }
    }
    let role = match role {
        "user" => Role::User,
        "system" | "developer" => Role::System,
        "assistant" => {
            for (j, c) in m
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let f = c
                    .get("function")
                    .ok_or_else(|| format!("{at}.tool_calls[{j}]: missing \"function\""))?;
                blocks.push(Block::ToolUse {
                    id: c
                        .get("id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("{at}.tool_calls[{j}]: missing \"id\""))?
                        .to_string(),
                    name: f
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input: f.get("arguments").map_or(Value::Null, super::call_input),
                });
            }
            Role::Assistant
        }
        "tool" => {
            let id = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{at}: tool message without \"tool_call_id\""))?;
            let content = match blocks.as_slice() {
                [Block::Text { text }] => ToolResultContent::Text(text.clone()),
                _ => ToolResultContent::Blocks(std::mem::take(&mut blocks)),
            };
            blocks = vec![Block::ToolResult {
                tool_use_id: id.to_string(),
                content,
                is_error: false,
            }];
            Role::Tool
        }
        other => return Err(format!("{at}.role: unknown role {other:?}")),
    };
    let mut nm = NewMessage::new(role, blocks);
    if !meta.is_empty() {
        nm.meta = Value::Object(meta);
    }
    Ok(nm)
}

fn openai_part(p: &Value, at: &str) -> Result<Block, String> {
    match p.get("type").and_then(Value::as_str) {
        Some("text") => Ok(Block::text(
            p.get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{at}: text part without \"text\""))?,
        )),
        Some("image_url") => {
            let url = p
                .get("image_url")
                .and_then(|u| u.get("url"))
                .and_then(Value::as_str)
                .unwrap_or("");
            match crate::model::image::from_data_url(url) {
                Some(image) => image.map_err(|e| format!("{at}: {e}")),
                None => Ok(super::unknown_block(p)),
            }
        }
        _ => Ok(super::unknown_block(p)),
    }
}
