//! One self-contained HTML file: the tree as a sidebar, the active path, a deep link per message
//! (`#msg-ID`), images inline as data URLs, tool output and thinking collapsible. No script and no network:
//! every piece of transcript text is escaped, so a transcript holding `<script>` or `onerror=` shows it as text.

use base64::Engine as _;
use std::collections::{HashMap, HashSet};

use super::markdown::html_escape as esc;
use super::{Options, is_thinking};
use crate::model::{Block, Conversation, ImageData, Message, ToolResultContent};
use crate::store::{Store, StoreError};

const STYLE: &str = "body{margin:0;font:14px/1.45 system-ui,sans-serif;display:flex;color:#222}
nav{width:320px;height:100vh;overflow:auto;position:sticky;top:0;border-right:1px solid #ddd;padding:8px;box-sizing:border-box;font-size:12px;background:#fafafa}
nav ul{list-style:none;padding-left:12px;margin:0}nav a{color:#333;text-decoration:none;display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
nav a.on{font-weight:bold;color:#05c}main{flex:1;padding:16px 24px;max-width:900px}
.msg{border:1px solid #ddd;border-radius:6px;margin:10px 0;padding:8px 12px}.msg:target{outline:2px solid #05c}
.role{font-weight:bold;font-size:12px;color:#555}.user{background:#f5f9ff}.assistant{background:#fff}.tool{background:#f7f7f7}.system{background:#fffbe6}
pre{white-space:pre-wrap;word-break:break-word;background:#f4f4f4;padding:6px;border-radius:4px}img{max-width:100%}
.tip{color:#c50}.cp{color:#080}";

pub fn render(
    store: &Store,
    conv: &Conversation,
    all: &[Message],
    path: &[Message],
    opts: Options,
) -> Result<String, StoreError> {
    let on_path: HashSet<&str> = path.iter().map(|m| m.id.as_str()).collect();
    let checkpoints = store.checkpoints(&conv.id)?;
    let mut labels: HashMap<&str, Vec<&str>> = HashMap::new();
    for c in &checkpoints {
        labels
            .entry(c.message.as_str())
            .or_default()
            .push(c.label.as_str());
    }
    let title = conv
        .title
        .clone()
        .unwrap_or_else(|| format!("Conversation {}", conv.id));
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">");
    h.push_str(&format!(
        "<title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    ));
    // Sidebar: the whole tree, iteratively (no recursion), branches indented.
    h.push_str("<nav><div><b>Tree</b></div>\n");
    let mut children: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    for (i, m) in all.iter().enumerate() {
        children.entry(m.parent.as_deref()).or_default().push(i);
    }
    enum Item {
        Open,
        Close,
        Node(usize),
    }
    let mut stack: Vec<Item> = Vec::new();
    h.push_str("<ul>");
    if let Some(roots) = children.get(&None) {
        for &r in roots.iter().rev() {
            stack.extend([Item::Close, Item::Node(r), Item::Open]);
        }
    }
    // A run of single children is one list; at a branch point each child's run gets its own nested list.
    while let Some(item) = stack.pop() {
        let i = match item {
            Item::Open => {
                h.push_str("<li><ul>");
                continue;
            }
            Item::Close => {
                h.push_str("</ul></li>");
                continue;
            }
            Item::Node(i) => i,
        };
        let m = &all[i];
        let mut marks = String::new();
        if conv.tip.as_deref() == Some(m.id.as_str()) {
            marks.push_str(" <span class=\"tip\">◀ tip</span>");
        }
        for l in labels.get(m.id.as_str()).into_iter().flatten() {
            marks.push_str(&format!(" <span class=\"cp\">⚑ {}</span>", esc(l)));
        }
        let class = if on_path.contains(m.id.as_str()) {
            " class=\"on\""
        } else {
            ""
        };
        h.push_str(&format!(
            "<li><a{class} href=\"#msg-{id}\" title=\"{id}\">{role}: {text}{marks}</a></li>",
            id = esc(&m.id),
            role = m.role,
            text = esc(&m.summary(60)),
        ));
        let kids = children
            .get(&Some(m.id.as_str()))
            .cloned()
            .unwrap_or_default();
        if kids.len() > 1 {
            for &k in kids.iter().rev() {
                stack.extend([Item::Close, Item::Node(k), Item::Open]);
            }
        } else if let Some(&k) = kids.first() {
            stack.push(Item::Node(k));
        }
    }
    h.push_str("</ul></nav>\n<main>");
    h.push_str(&format!(
        "<h1>{}</h1><p>{} messages in the tree, {} on the active path.</p>\n",
        esc(&title),
        all.len(),
        path.len()
    ));
    for m in path {
        h.push_str(&format!(
            "<section class=\"msg {role}\" id=\"msg-{id}\"><div class=\"role\">{role} · <a href=\"#msg-{id}\">{id}</a>{kind}</div>\n",
            role = m.role,
            id = esc(&m.id),
            kind = m.cairn_kind().map(|k| format!(" · {}", esc(k))).unwrap_or_default(),
        ));
        for b in &m.content {
            h.push_str(&block(store, b, opts)?);
        }
        h.push_str("</section>\n");
    }
    h.push_str("</main></body></html>\n");
    Ok(h)
}

fn block(store: &Store, b: &Block, opts: Options) -> Result<String, StoreError> {
    Ok(match b {
        Block::Text { text } => format!("<pre>{}</pre>\n", esc(text)),
        b if is_thinking(b) => {
            if !opts.thinking {
                return Ok(String::new());
            }
            let t = match b {
                Block::Thinking { thinking, .. } => thinking.clone(),
                _ => "(encrypted reasoning)".into(),
            };
            format!(
                "<details><summary>Thinking</summary><pre>{}</pre></details>\n",
                esc(&t)
            )
        }
        Block::ToolUse { id, name, input } => format!(
            "<details><summary>Tool call: {} ({})</summary><pre>{}</pre></details>\n",
            esc(name),
            esc(id),
            esc(&serde_json::to_string_pretty(input).unwrap_or_default())
        ),
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            if !opts.tool_results {
                return Ok(format!(
                    "<p><i>tool result for {} left out</i></p>\n",
                    esc(tool_use_id)
                ));
            }
            let mut inner = String::new();
            match content {
                ToolResultContent::Text(t) => inner.push_str(&format!("<pre>{}</pre>", esc(t))),
                ToolResultContent::Blocks(bs) => {
                    for ib in bs {
                        inner.push_str(&block(store, ib, opts)?);
                    }
                }
            }
            let label = if *is_error {
                "Tool error"
            } else {
                "Tool result"
            };
            format!(
                "<details><summary>{label} ({})</summary>{inner}</details>\n",
                esc(tool_use_id)
            )
        }
        Block::Image { media_type, data } => {
            let bytes = match data {
                ImageData::Bytes(b) => b.clone(),
                ImageData::Blob { hash, .. } => store.blob(hash)?,
            };
            // only image types are inlined; anything else is named, not embedded
            if media_type.starts_with("image/") && !media_type.contains(['"', '<', '>', ' ']) {
                format!(
                    "<img alt=\"image\" src=\"data:{media_type};base64,{}\">\n",
                    base64::engine::general_purpose::STANDARD.encode(bytes)
                )
            } else {
                format!("<p><i>[{} attachment]</i></p>\n", esc(media_type))
            }
        }
        Block::Thinking { .. } => String::new(),
        Block::Other(v) => format!(
            "<details><summary>{}</summary><pre>{}</pre></details>\n",
            esc(v.get("type").and_then(|t| t.as_str()).unwrap_or("block")),
            esc(&serde_json::to_string_pretty(v).unwrap_or_default())
        ),
    })
}
