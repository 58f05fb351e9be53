//! Sending through OpenAI's Responses API when the context holds OpenAI's own compaction.
//!
//! `POST /v1/responses/compact` returns the conversation as an opaque `compaction` item that only the Responses API
//! reads back. cairn keeps that item in its summary marker (`meta.cairn.kept`); when the context sent next has that
//! marker as its newest cover and the provider is OpenAI, the request goes to `POST /v1/responses` with the item in
//! the cover's place, instead of to Chat Completions with the marker's placeholder text. Everything else is the
//! Chat Completions body cairn already builds (repaired to be pair-valid), mapped item by item.

use serde_json::{Value, json};

use crate::model::Usage;
use crate::provider::{Provider, ProviderError, Reply};
use crate::reclaim::PathView;
use crate::reclaim::view::Resolved;
use crate::store::{Store, StoreError};

/// The newest summary cover's kept OpenAI item, with the text that stands for it in the assembled context.
pub fn kept_item(store: &Store, view: &PathView) -> Result<Option<(String, Value)>, StoreError> {
    let Some(p) = view.markers.iter().rev().find(|p| {
        matches!(
            p.marker,
            Resolved::Summary { .. } | Resolved::Snapshot { .. }
        )
    }) else {
        return Ok(None);
    };
    let Resolved::Summary { summary, .. } = &p.marker else {
        return Ok(None);
    };
    let Some(m) = view.bodies(Some(store), &[p.at])?.into_iter().next() else {
        return Ok(None);
    };
    let Some(kept) = crate::reclaim::marker::provider_kept(&m).filter(|k| k.provider == "openai")
    else {
        return Ok(None);
    };
    Ok(Some((
        crate::reclaim::assemble::summary_text(summary),
        kept.item,
    )))
}

/// The Responses API's input for a Chat Completions body, with the user message whose text is `stands_for`
/// replaced by `item`.
pub fn input(chat: &Value, stands_for: &str, item: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let text_of = |c: &Value| -> String {
        match c {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    };
    for m in chat["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("user");
        if role == "tool" {
            out.push(
                json!({"type": "function_call_output", "call_id": m["tool_call_id"],
                "output": text_of(&m["content"])}),
            );
            continue;
        }
        if role == "user" && text_of(&m["content"]) == stands_for {
            out.push(item.clone());
            continue;
        }
        let kind = if role == "assistant" {
            "output_text"
        } else {
            "input_text"
        };
        let parts: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![json!({"type": kind, "text": s})],
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| match p["type"].as_str() {
                    Some("text") => Some(json!({"type": kind, "text": p["text"]})),
                    Some("image_url") => {
                        Some(json!({"type": "input_image", "image_url": p["image_url"]["url"]}))
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        if !parts.is_empty() {
            let role = if role == "system" { "developer" } else { role };
            out.push(json!({"role": role, "content": parts}));
        }
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            out.push(json!({"type": "function_call", "call_id": call["id"],
                "name": call["function"]["name"], "arguments": call["function"]["arguments"]}));
        }
    }
    out
}

/// Sends `input` to `POST /v1/responses` (not stored on OpenAI's side) and reads the reply: its output text, the
/// model, and the usage (cached input counted as cache reads).
pub fn send(
    provider: &Provider,
    input: Vec<Value>,
    on_text: &mut dyn FnMut(&str),
) -> Result<Reply, ProviderError> {
    let v = provider.post_json(
        "/v1/responses",
        &json!({"input": input, "store": false, "max_output_tokens": provider.max_tokens}),
        None,
    )?;
    let text: String = v["output"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["type"] == "message")
        .flat_map(|o| o["content"].as_array().into_iter().flatten())
        .filter(|c| c["type"] == "output_text")
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("");
    if text.is_empty() {
        return Err(ProviderError::BadResponse {
            url: format!("{}/v1/responses", provider.base_url),
            message: "no output text in the answer".into(),
        });
    }
    on_text(&text);
    let u = &v["usage"];
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let cached = n(&u["input_tokens_details"]["cached_tokens"]);
    let usage = u.is_object().then(|| Usage {
        input_tokens: n(&u["input_tokens"]).saturating_sub(cached),
        output_tokens: n(&u["output_tokens"]),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
        ..Usage::default()
    });
    Ok(Reply {
        text,
        usage,
        model: v["model"]
            .as_str()
            .map_or_else(|| provider.model.clone(), str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_body_maps_to_responses_items_with_the_kept_item_in_the_cover_place() {
        let chat = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "[Summary of the earlier conversation]\nX"}]},
            {"role": "assistant", "content": "looking", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
            {"role": "user", "content": [{"type": "text", "text": "next"}]}
        ]});
        let item = json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"});
        let got = input(&chat, "[Summary of the earlier conversation]\nX", &item);
        assert_eq!(got[0]["role"], "developer");
        assert_eq!(got[1], item);
        assert_eq!(got[2]["content"][0]["type"], "output_text");
        assert_eq!(got[3]["type"], "function_call");
        assert_eq!(got[3]["call_id"], "call_1");
        assert_eq!(got[4]["type"], "function_call_output");
        assert_eq!(got[4]["output"], "a.txt");
        assert_eq!(got[5]["content"][0]["text"], "next");
        assert_eq!(got.len(), 6);
    }
}
