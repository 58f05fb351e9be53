//! Writing conversations out in the forms people share: cairn's own lossless JSONL (the whole tree), readable
//! Markdown, one self-contained HTML file, provider-ready request bodies (Anthropic Messages, OpenAI Chat
//! Completions) for the active path, and the path as a session of the harness it continues in ([`agent`]: Claude
//! Code, pi, Codex).
//!
//! Exports never carry credentials unless asked to: secrets in text, tool inputs, tool output and metadata are
//! replaced ([`crate::redact`]), and the count is reported.

pub mod agent;
mod highlight;
mod html;
mod markdown;
mod markup;
mod patch;
mod provider;
pub use provider::anthropic_signature;
pub mod reading;
pub mod tools;

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
    /// A session file of a harness, which it resumes.
    Agent(agent::Harness),
}

impl ExportFormat {
    /// Every export format, in the order menus list them: the one list the CLI, the slash commands and the
    /// window's export dialog take names, labels and file extensions from.
    pub const ALL: [ExportFormat; 5 + agent::Harness::ALL.len()] = {
        let mut all = [ExportFormat::Html; 5 + agent::Harness::ALL.len()];
        all[1] = ExportFormat::Markdown;
        all[2] = ExportFormat::Jsonl;
        all[3] = ExportFormat::Anthropic;
        all[4] = ExportFormat::Openai;
        let mut i = 0;
        while i < agent::Harness::ALL.len() {
            all[5 + i] = ExportFormat::Agent(agent::Harness::ALL[i]);
            i += 1;
        }
        all
    };

    /// The name the CLI and `/export` take (`md` is also taken for Markdown).
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Html => "html",
            ExportFormat::Markdown => "markdown",
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Anthropic => "anthropic",
            ExportFormat::Openai => "openai",
            ExportFormat::Agent(h) => h.name(),
        }
    }

    /// How a menu names it.
    pub fn label(self) -> &'static str {
        match self {
            ExportFormat::Html => "HTML",
            ExportFormat::Markdown => "Markdown",
            ExportFormat::Jsonl => "JSONL (cairn)",
            ExportFormat::Anthropic => "Anthropic request JSON",
            ExportFormat::Openai => "OpenAI request JSON",
            ExportFormat::Agent(agent::Harness::ClaudeCode) => "Claude Code session",
            ExportFormat::Agent(agent::Harness::Pi) => "pi session",
            ExportFormat::Agent(agent::Harness::Codex) => "Codex rollout",
            ExportFormat::Agent(agent::Harness::GeminiCli) => "Gemini CLI session",
            ExportFormat::Agent(agent::Harness::Opencode) => "opencode session",
        }
    }

    /// The extension of the file it is written to.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Html => "html",
            ExportFormat::Markdown => "md",
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Agent(h) => h.extension(),
            ExportFormat::Anthropic | ExportFormat::Openai => "json",
        }
    }

    pub fn from_name(s: &str) -> Option<ExportFormat> {
        if s == "md" {
            return Some(ExportFormat::Markdown);
        }
        ExportFormat::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// What to leave out of readable exports, and whether to redact secrets (the default).
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub tool_results: bool,
    pub thinking: bool,
    pub redact: bool,
    /// The HTML page's colours.
    pub theme: Theme,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tool_results: true,
            thinking: true,
            redact: true,
            theme: Theme::Auto,
        }
    }
}

/// The HTML page's colours: the reader's preference (`prefers-color-scheme`), or fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    #[default]
    Auto,
    Light,
    Dark,
}

/// An export, with how many secrets were redacted and what a provider body needed repaired.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The export (empty for a page streamed to a file: [`export_to`]).
    pub text: String,
    /// Its size in bytes, as written.
    pub bytes: u64,
    pub redacted: usize,
    pub repairs: crate::pairs::Repairs,
    /// A harness's session: its id, what fell back, and the files that go beside it.
    pub agent: Option<agent::AgentFile>,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Reclaim(#[from] crate::reclaim::ReclaimError),
    #[error("encoding the export: {0}")]
    Json(#[from] serde_json::Error),
    #[error("writing the export: {0}")]
    Write(#[from] std::io::Error),
}

/// Exports a conversation. `at` picks the path's end (default: the tip); `jsonl` always writes the whole tree;
/// the provider formats send what the path sends now (compactions applied), repaired to be valid.
pub fn export(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    format: ExportFormat,
    options: Options,
) -> Result<Exported, ExportError> {
    export_priced(
        store,
        conversation,
        at,
        format,
        options,
        &std::collections::BTreeMap::new(),
    )
}

/// [`export`] with the settings' prices over the catalog's (the costs a page shows).
pub fn export_priced(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    format: ExportFormat,
    options: Options,
    prices: &std::collections::BTreeMap<String, crate::models::Price>,
) -> Result<Exported, ExportError> {
    export_to(store, conversation, at, format, options, prices, None)
}

/// [`export_priced`], an HTML page written to `sink` as it is drawn (its `text` then empty): a page of a 100k-message
/// conversation is never held whole. Other formats are returned as text whatever `sink` is.
pub fn export_to(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    format: ExportFormat,
    options: Options,
    prices: &std::collections::BTreeMap<String, crate::models::Price>,
    mut sink: Option<&mut dyn std::io::Write>,
) -> Result<Exported, ExportError> {
    let conv = store.conversation(conversation)?;
    let mut redacted = 0;
    let mut repairs = crate::pairs::Repairs::default();
    let mut agent_file = None;
    let mut clean = |mut msgs: Vec<Message>| -> Vec<Message> {
        if options.redact {
            redacted += crate::redact::messages(&mut msgs);
        }
        msgs
    };
    let text = match format {
        ExportFormat::Jsonl => {
            let (t, n) = jsonl(store, &conv.id, options.redact)?;
            redacted += n;
            t
        }
        ExportFormat::Markdown | ExportFormat::Html => {
            let all = clean(store.messages(&conv.id)?);
            // the path's ids from its heads (its bodies are among `all`)
            let heads = match at {
                Some(m) => store.path_heads_to(&conv.id, m)?,
                None => store.active_path_heads(&conv.id)?,
            };
            let ids: Vec<String> = heads.into_iter().map(|h| h.id).collect();
            let mut r = reading::read(store, &conv, all, &ids, at, redacted, prices);
            // each subagent the path spawned, read the same way, shown under its spawning call
            let on_path = r.path.iter().map(|&i| &r.all[i]);
            for (call, child) in spawned_on_path(store, &conv.id, on_path)? {
                let mut all = store.messages(&child.id)?;
                if options.redact {
                    // counted with the page's marks below
                    crate::redact::messages(&mut all);
                }
                let path: Vec<String> = store
                    .active_path(&child.id)?
                    .into_iter()
                    .map(|m| m.id)
                    .collect();
                let mut sub = reading::read(store, &child, all, &path, None, 0, prices);
                if options.redact {
                    sub.title = crate::redact::text(&sub.title).0.into_owned();
                }
                r.subagents.insert(call, sub);
            }
            // the title (a harness's summary line, or the first prompt) leaves in the page's <title> and heading
            if options.redact {
                let (t, n) = crate::redact::text(&r.title);
                r.title = t.into_owned();
                r.redacted += n;
            }
            // the count the page states is the number of marks it shows (a secret found in metadata the page does
            // not show is not one of them): where secrets were found, the page is drawn once to count its marks
            if options.redact && r.redacted > 0 {
                r.redacted = if format == ExportFormat::Html {
                    html::write_page(store, &r, options, &mut std::io::sink())?
                } else {
                    markdown::render(&r, options).matches("[redacted").count()
                };
            }
            redacted = r.redacted;
            match (format, sink.take()) {
                // streamed: never held whole
                (ExportFormat::Html, Some(w)) => {
                    html::write_page(store, &r, options, w)?;
                    String::new()
                }
                (ExportFormat::Html, None) => html::render(store, &r, options)?,
                _ => markdown::render(&r, options),
            }
        }
        ExportFormat::Anthropic | ExportFormat::Openai => {
            let view = crate::reclaim::PathView::load(store, &conv.id, at)?;
            let l = crate::reclaim::layout(&view, &[], view.len());
            let mut sent = crate::reclaim::assemble::materialize(&view, &l, Some(store))?;
            if options.redact {
                redacted += sent
                    .iter_mut()
                    .map(|s| crate::redact::blocks(&mut s.content))
                    .sum::<usize>();
            }
            let body = if format == ExportFormat::Anthropic {
                to_anthropic(store, &sent)?
            } else {
                to_openai(store, &sent)?
            };
            repairs = body.repairs;
            serde_json::to_string_pretty(&body.body)?
        }
        ExportFormat::Agent(h) => {
            let mut f = agent::write(store, &conv.id, at, h, options.redact, None)?;
            redacted += f.redacted;
            let text = std::mem::take(&mut f.text);
            agent_file = Some(f);
            text
        }
    };
    Ok(Exported {
        bytes: text.len() as u64,
        text,
        redacted,
        repairs,
        agent: agent_file,
    })
}

/// The subagents a path spawned: each conversation linked to `conversation` whose spawning call is a call of one
/// of `path`'s messages, with that call's id.
pub(crate) fn spawned_on_path<'a>(
    store: &Store,
    conversation: &str,
    path: impl Iterator<Item = &'a Message>,
) -> Result<Vec<(String, crate::model::Conversation)>, StoreError> {
    let calls: std::collections::HashSet<&str> = path
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    Ok(store
        .conversations()?
        .into_iter()
        .filter(|c| c.linked_to.as_deref() == Some(conversation))
        .filter_map(|c| {
            let call = c
                .spawned_by
                .clone()
                .filter(|id| calls.contains(id.as_str()))?;
            Some((call, c))
        })
        .collect())
}

/// Blocks as JSON with images inlined as base64.
pub(crate) fn wire_blocks(store: &Store, m: &Message) -> Result<Vec<Value>, StoreError> {
    let load = |h: &str| store.blob(h).map_err(|e| e.to_string());
    wire::blocks_to_json(&m.content, &Images::Base64(&load)).map_err(|reason| StoreError::Corrupt {
        id: m.id.clone(),
        reason,
    })
}

/// cairn's own form: a header line, one line per message (all branches, parents first), one per checkpoint; with
/// `redact`, secrets replaced (and counted).
pub fn jsonl(
    store: &Store,
    conversation: &str,
    redact: bool,
) -> Result<(String, usize), StoreError> {
    let mut redacted = 0;
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
    if redact {
        redacted += crate::redact::value(&mut header);
    }
    out.push_str(&header.to_string());
    out.push('\n');
    for mut m in store.messages(&conv.id)? {
        if redact {
            redacted += crate::redact::blocks(&mut m.content);
        }
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
            if redact {
                redacted += crate::redact::value(&mut meta);
            }
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
    Ok((out, redacted))
}

/// A compaction's sizes for its heading: ", at 166,909 tokens → 16,303 after".
pub(crate) fn sizes(before: Option<u64>, after: Option<u64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => format!(", at {} tokens → {} after", thousands(b), thousands(a)),
        (Some(b), None) => format!(", at {} tokens", thousands(b)),
        (None, Some(a)) => format!(", {} tokens after", thousands(a)),
        (None, None) => String::new(),
    }
}

/// `166,909`: a count as the readable exports write it.
pub(crate) use crate::tokens::thousands;

/// Text of the blocks a reader sees, for Markdown and HTML.
pub(crate) fn is_thinking(b: &Block) -> bool {
    matches!(b, Block::Thinking { .. })
        || matches!(b, Block::Other(v) if v.get("type").and_then(Value::as_str).is_some_and(|t| t == "redacted_thinking" || t == "reasoning"))
}
