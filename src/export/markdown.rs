//! A path as readable Markdown: one section per message, tool calls and results in collapsible blocks with
//! fenced bodies (the fence grows past any backticks inside, so transcript text cannot break out of it).

use serde_json::Value;

use super::{Options, is_thinking};
use crate::model::{Block, Conversation, Message, ToolResultContent};
use crate::store::{Store, StoreError};

fn fence(body: &str, lang: &str) -> String {
    let mut ticks = 3;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            ticks = ticks.max(run + 1);
        } else {
            run = 0;
        }
    }
    let f = "`".repeat(ticks);
    format!("{f}{lang}\n{body}\n{f}\n")
}

fn details(summary: &str, body: &str) -> String {
    format!(
        "<details><summary>{}</summary>\n\n{body}\n</details>\n\n",
        html_escape(summary)
    )
}

pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn render(
    _store: &Store,
    conv: &Conversation,
    path: &[Message],
    opts: Options,
) -> Result<String, StoreError> {
    let mut out = String::new();
    out.push_str(&format!(
        "# {}\n\n",
        conv.title.as_deref().unwrap_or("Conversation")
    ));
    out.push_str(&format!(
        "Conversation `{}`, {} messages on this path.\n\n",
        conv.id,
        path.len()
    ));
    for m in path {
        let kind = m
            .cairn_kind()
            .map(|k| format!(" ({k})"))
            .unwrap_or_default();
        out.push_str(&format!("## {}{kind} · `{}`\n\n", m.role, m.id));
        for b in &m.content {
            match b {
                Block::Text { text } => {
                    out.push_str(text);
                    out.push_str("\n\n");
                }
                b if is_thinking(b) => {
                    if opts.thinking {
                        let t = match b {
                            Block::Thinking { thinking, .. } => thinking.clone(),
                            _ => "(encrypted reasoning)".to_string(),
                        };
                        out.push_str(&details("Thinking", &fence(&t, "")));
                    }
                }
                Block::ToolUse { id, name, input } => {
                    let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
                    out.push_str(&details(
                        &format!("Tool call: {name} ({id})"),
                        &fence(&pretty, "json"),
                    ));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if opts.tool_results {
                        let text = match content {
                            ToolResultContent::Text(t) => t.clone(),
                            c => c.text(),
                        };
                        let label = if *is_error {
                            "Tool error"
                        } else {
                            "Tool result"
                        };
                        out.push_str(&details(
                            &format!("{label} ({tool_use_id})"),
                            &fence(&text, ""),
                        ));
                    } else {
                        out.push_str(&format!("*[tool result for {tool_use_id} left out]*\n\n"));
                    }
                }
                Block::Image { media_type, .. } => {
                    out.push_str(&format!("*[image: {media_type}]*\n\n"))
                }
                Block::Thinking { .. } => {}
                Block::Other(v) => {
                    let ty = v.get("type").and_then(Value::as_str).unwrap_or("block");
                    out.push_str(&format!("*[{ty}]*\n\n"));
                }
            }
        }
    }
    Ok(out)
}
