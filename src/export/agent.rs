//! A path written back as a session file of the harness it can continue in (Claude Code, pi, Codex, Gemini CLI,
//! opencode), so a fork
//! made in cairn resumes in the real agent.
//!
//! The file holds the path's history, so the harness shows what happened, and the context cairn assembles for it
//! ([`crate::reclaim::layout`]): where the path drops or covers messages (a harness's compaction, cairn's summary
//! or snapshot), the harness's own compaction record is written at the point after which the path's messages are
//! sent as themselves, its summary being what cairn sends for everything before that point. The agent then resumes
//! with that context, not the whole path. Where a harness has no record for what cairn did (an elision outside
//! Claude Code, images pruned, pages where only text is accepted), the file says what falls back, in
//! [`AgentFile::notes`].
//!
//! One plan (`plan`) for the five writers (`agent/claude_code.rs`, `agent/pi.rs`, `agent/codex.rs`,
//! `agent/gemini_cli.rs`, `agent/opencode.rs`): each maps
//! the same items to its harness's records, and reading the file back gives the same messages, usage and
//! compactions (the round-trip tests).

mod claude_code;
mod codex;
mod gemini_cli;
mod opencode;
mod pi;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::model::{Block, ImageData, KIND_COMPACT_SUMMARY, Message, ToolResultContent};
use crate::reclaim::Piece;
use crate::reclaim::view::Resolved;
use crate::store::Store;

use super::ExportError;

/// The harnesses a path can continue in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    ClaudeCode,
    Pi,
    Codex,
    GeminiCli,
    Opencode,
}

impl Harness {
    pub const ALL: [Harness; 5] = [
        Harness::ClaudeCode,
        Harness::Pi,
        Harness::Codex,
        Harness::GeminiCli,
        Harness::Opencode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Pi => "pi",
            Harness::Codex => "codex",
            Harness::GeminiCli => "gemini-cli",
            Harness::Opencode => "opencode",
        }
    }

    /// How people call it.
    pub fn label(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "Claude Code",
            Harness::Pi => "pi",
            Harness::Codex => "Codex",
            Harness::GeminiCli => "Gemini CLI",
            Harness::Opencode => "opencode",
        }
    }

    /// The extension of the file written for it (opencode's export is one JSON document, the others JSONL).
    pub fn extension(self) -> &'static str {
        match self {
            Harness::Opencode => "json",
            _ => "jsonl",
        }
    }

    pub fn from_name(s: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|h| h.name() == s)
    }
}

/// A session file written for a harness.
#[derive(Debug, Clone)]
pub struct AgentFile {
    pub harness: Harness,
    /// The new session's id (Claude Code's `sessionId`, pi's header id, Codex's thread id).
    pub session_id: String,
    /// The working folder the session names (where the harness resumes it).
    pub cwd: String,
    pub text: String,
    /// Files that belong beside it, by path relative to a folder named as the file without its extension (Claude
    /// Code's `<session>/subagents/agent-<id>.jsonl`).
    pub beside: Vec<(PathBuf, String)>,
    /// What could not travel as cairn had it, and what it fell back to.
    pub notes: Vec<String>,
    pub redacted: usize,
}

/// What to write, in order.
pub(crate) enum Item {
    Message(Message),
    /// The harness's compaction record: the agent reads `summary` in place of everything before it.
    Compaction(Compaction),
    /// Large tool results cleared from the context from here on (Claude Code's microcompact), by tool call id.
    Elision(Vec<String>),
}

#[derive(Clone)]
pub(crate) struct Compaction {
    /// What the agent reads in place of the history before (texts and images); empty where the harness's own
    /// summary message follows the record (a Claude Code compaction read back).
    pub summary: Vec<Block>,
    /// The harness marker the path holds here, where it is one (its record's own fields travel for the same
    /// harness).
    pub marker: Option<Message>,
    /// The message from which the history before the record is kept (sent after the summary), where the
    /// harness can keep messages before its record.
    pub keeps_from: Option<String>,
    /// The prompt the last measured reply before it read (the harness's `preTokens` / `tokensBefore`).
    pub tokens_before: Option<u64>,
    /// Whether `summary` holds snapshot pages.
    pub pages: bool,
    /// Whether `summary` is the harness marker's own (with what it kept), nothing of cairn's: the record the
    /// harness wrote can travel as it was.
    pub only_marker: bool,
    /// Whether secrets are redacted (in a record that travels as it was).
    pub redact: bool,
}

/// A path laid out for a harness.
pub(crate) struct Plan {
    pub items: Vec<Item>,
    pub cwd: String,
    /// The conversation's title, redacted.
    pub title: Option<String>,
    /// The model of the newest reply that names one, for replies that do not.
    pub model: Option<String>,
    /// The harness the conversation was read from (`claude-code`, `pi`, `codex`, ...; `cairn` for its own).
    pub source: String,
    pub source_version: Option<String>,
    /// The source's own session id, where it was a Codex thread (a fork names it).
    pub origin: Option<String>,
    /// The instructions a Codex source recorded (`base_instructions`), redacted.
    pub instructions: Option<Value>,
    pub notes: Vec<String>,
    pub redacted: usize,
}

impl Plan {
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.items.iter().filter_map(|i| match i {
            Item::Message(m) => Some(m),
            _ => None,
        })
    }

    /// The time a record at item `k` takes: the message after it's, else the one before it's.
    pub fn record_time(&self, k: usize) -> i64 {
        let time = |i: &Item| match i {
            Item::Message(m) => Some(m.created_at),
            _ => None,
        };
        self.items[k..]
            .iter()
            .find_map(time)
            .or_else(|| self.items[..k].iter().rev().find_map(time))
            .unwrap_or(0)
    }

    /// The compaction at item `k` with its summary taken from the message after it, where that message is another
    /// harness's summary prompt (Claude Code's, after its compaction) and the compaction has none of its own: the
    /// harness writing the record holds it as its summary (the message is then not written again).
    pub fn summary_after(&self, k: usize, c: &Compaction) -> Option<Compaction> {
        let Some(Item::Message(m)) = self.items.get(k + 1) else {
            return None;
        };
        let only_text_and_images = m
            .content
            .iter()
            .all(|b| matches!(b, Block::Text { .. } | Block::Image { .. }));
        if !c.summary.is_empty() || !is_compact_summary(m) || !only_text_and_images {
            return None;
        }
        let mut own = c.clone();
        own.summary = m.content.clone();
        own.pages = m.content.iter().any(|b| matches!(b, Block::Image { .. }));
        Some(own)
    }

    fn note(&mut self, n: impl Into<String>) {
        let n = n.into();
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// Writes the path (root → tip, or → `at`) of a conversation as a session file of `harness`; `cwd` overrides the
/// working folder the source recorded.
pub fn write(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    harness: Harness,
    redact: bool,
    cwd: Option<&str>,
) -> Result<AgentFile, ExportError> {
    // pi and opencode can keep messages written before their compaction record (`firstKeptEntryId`,
    // `tail_start_id`)
    let keeps_before = matches!(harness, Harness::Pi | Harness::Opencode);
    let mut plan = plan(store, conversation, at, redact, keeps_before)?;
    if let Some(c) = cwd {
        plan.cwd = c.to_string();
    } else if plan.cwd.is_empty() {
        // a harness finds a session by its working folder: where none was recorded, the one cairn runs in
        plan.cwd = std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_else(|_| ".".into());
        plan.note(format!(
            "the source recorded no working folder: the session names {} (`cairn continue --cwd` names another)",
            plan.cwd
        ));
    }
    // a reply the source recorded as failed and did not send again (pi's aborted replies since 0.49.2, opencode's
    // errors), and what answered its calls: opencode writes them as its own failed step, pi writes the reply as
    // failed (and would send the results alone), the others would send both: what they would send stays home
    if harness != Harness::Opencode {
        let before = plan.items.len();
        plan.items.retain(|i| {
            !matches!(i, Item::Message(m) if crate::model::CairnMeta::not_sent_again(&m.meta)
                && (harness != Harness::Pi || m.role != crate::model::Role::Assistant))
        });
        let left = before - plan.items.len();
        if left > 0 {
            plan.note(format!(
                "{left} message(s) of failed replies left out: the source did not send them again, {} would",
                harness.label()
            ));
        }
    }
    let mut out = match harness {
        Harness::ClaudeCode => claude_code::write(store, conversation, &mut plan, redact)?,
        Harness::Pi => pi::write(&mut plan, redact),
        Harness::Codex => codex::write(&mut plan),
        Harness::GeminiCli => gemini_cli::write(&mut plan),
        Harness::Opencode => opencode::write(&mut plan),
    };
    out.notes.splice(0..0, std::mem::take(&mut plan.notes));
    out.redacted += plan.redacted;
    Ok(out)
}

/// What a plan is made from: the path, its view and layout, and where its messages start being sent as themselves.
struct Source<'a> {
    store: &'a Store,
    path: Vec<Message>,
    view: crate::reclaim::PathView,
    layout: crate::reclaim::ContextLayout,
    /// Path indices of the messages that are not markers.
    plain: Vec<usize>,
    /// The first piece of the tail (the last pieces that are the path's last messages, each sent as itself), and
    /// its first message as an index into `plain`.
    tail_piece: usize,
    tail: usize,
    redact: bool,
}

impl<'a> Source<'a> {
    fn load(
        store: &'a Store,
        conversation: &str,
        at: Option<&str>,
        redact: bool,
    ) -> Result<Source<'a>, ExportError> {
        let path = match at {
            Some(m) => store.path_to(conversation, m)?,
            None => store.active_path(conversation)?,
        };
        let view = crate::reclaim::PathView::load(store, conversation, at)?;
        let layout = crate::reclaim::layout(&view, &[], view.len());
        let plain: Vec<usize> = (0..path.len())
            .filter(|&i| !view.heads.get(i).is_some_and(|h| h.is_compaction()))
            .collect();
        let (mut t, mut j) = (layout.pieces.len(), plain.len());
        while t > 0 && j > 0 {
            // a reply the harness recorded as failed is not sent: it stays in the history, and the context does
            // not start over for it
            if view.heads[plain[j - 1]].is_failed() {
                j -= 1;
                continue;
            }
            match &layout.pieces[t - 1] {
                Piece::Message { index, .. } if *index == plain[j - 1] => {
                    t -= 1;
                    j -= 1;
                }
                _ => break,
            }
        }
        Ok(Source {
            store,
            path,
            view,
            layout,
            plain,
            tail_piece: t,
            tail: j,
            redact,
        })
    }

    /// The prompt the last measured reply before path index `at` read (and wrote).
    fn tokens_before(&self, at: usize) -> Option<u64> {
        self.path[..at.min(self.path.len())]
            .iter()
            .rev()
            .find_map(|m| m.usage.filter(|u| u.is_one_request()))
            .map(|u| u.prompt() + u.output_tokens)
    }

    /// The record where the context starts over, if the path drops or covers anything, and before which of the
    /// plain messages it goes.
    fn main_compaction(
        &self,
        keeps_before: bool,
        redacted: &mut usize,
    ) -> Result<Option<(usize, Compaction)>, ExportError> {
        let (t, j, l) = (self.tail_piece, self.tail, &self.layout);
        if t == 0 && j == 0 {
            return Ok(None);
        }
        let mut prefix = l.clone();
        prefix.pieces.truncate(t);
        let sent = crate::reclaim::assemble::materialize(&self.view, &prefix, Some(self.store))?;
        let only_marker = l.harness.is_some_and(|h| {
            prefix.pieces.iter().all(|p| match p {
                Piece::HarnessSummary { index } => *index == h,
                Piece::Message {
                    index,
                    elided: false,
                    pruned: false,
                } => *index < h,
                _ => false,
            })
        });
        let pages = prefix.pieces.iter().any(|p| {
            matches!(
                p,
                Piece::Cover {
                    by: crate::reclaim::assemble::Cover::Snapshot(_),
                    ..
                }
            )
        });
        let mut summary = flatten(&sent);
        if self.redact {
            *redacted += crate::redact::blocks(&mut summary);
        }
        let before = self.plain.get(j).copied().unwrap_or(self.path.len());
        // before the first message sent as itself, or after the harness's own record where it kept messages
        // before it and the harness can say so
        let (at_k, keeps_from) = match l.harness {
            Some(h) if keeps_before && before < h => (
                self.plain.iter().take_while(|&&i| i < h).count(),
                Some(self.path[before].id.clone()),
            ),
            _ => (j, None),
        };
        Ok(Some((
            at_k,
            Compaction {
                summary,
                // the harness marker the context starts over at, where it is what drops the history
                marker: l.harness.and_then(|h| self.path.get(h)).cloned(),
                keeps_from,
                tokens_before: self.tokens_before(before),
                pages,
                only_marker,
                redact: self.redact,
            },
        )))
    }

    /// The harness's earlier compactions, by path index: they stay in the history as its records (a harness reads
    /// only the newest); those the main record would come before are left out.
    fn earlier_compactions(
        &self,
        main: Option<&(usize, Compaction)>,
        redacted: &mut usize,
    ) -> std::collections::VecDeque<(usize, Compaction)> {
        let newest = main.and(self.layout.harness);
        let main_at = main.map(|(k, _)| self.plain.get(*k).copied().unwrap_or(self.path.len()));
        let mut out = std::collections::VecDeque::new();
        for p in &self.view.markers {
            if Some(p.at) == newest || p.at >= self.path.len() || main_at.is_some_and(|m| p.at >= m)
            {
                continue;
            }
            let Resolved::Harness { sends_text, .. } = &p.marker else {
                continue;
            };
            let m = self.path[p.at].clone();
            let mut summary: Vec<Block> = if *sends_text {
                m.content
                    .iter()
                    .filter(|b| matches!(b, Block::Text { .. }))
                    .cloned()
                    .collect()
            } else {
                Vec::new()
            };
            if self.redact {
                *redacted += crate::redact::blocks(&mut summary);
            }
            out.push_back((
                p.at,
                Compaction {
                    summary,
                    marker: Some(m),
                    keeps_from: None,
                    tokens_before: self.tokens_before(p.at),
                    pages: false,
                    only_marker: true,
                    redact: self.redact,
                },
            ));
        }
        out
    }

    /// The messages sent as themselves whose large results cairn's elisions clear, where the elision record goes
    /// (cairn's newest elision marker), and how many of them have images pruned.
    fn elisions(&self) -> (std::collections::HashSet<usize>, Option<usize>, usize) {
        let tail = &self.layout.pieces[self.tail_piece..];
        let elided: std::collections::HashSet<usize> = tail
            .iter()
            .filter_map(|p| match p {
                Piece::Message {
                    index,
                    elided: true,
                    ..
                } => Some(*index),
                _ => None,
            })
            .collect();
        let pruned = tail
            .iter()
            .filter(|p| matches!(p, Piece::Message { pruned: true, .. }))
            .count();
        let at = self
            .view
            .markers
            .iter()
            .rev()
            .find(|p| matches!(p.marker, Resolved::Elide(_)))
            .map(|p| p.at)
            .filter(|_| !elided.is_empty());
        (elided, at, pruned)
    }
}

/// The tool call ids of a message's large successful results (what an elision clears).
fn large_results(m: &Message) -> impl Iterator<Item = String> + '_ {
    m.content.iter().filter_map(|b| match b {
        Block::ToolResult { tool_use_id, .. } if crate::reclaim::assemble::is_large_success(b) => {
            Some(tool_use_id.clone())
        }
        _ => None,
    })
}

/// Lays out the path: its messages, markers left out, with the compaction record where the context starts over.
/// `keeps_before`: the harness's record can keep messages written before it (pi's `firstKeptEntryId`), so a
/// harness compaction that kept some stays where it was; otherwise the record goes before the first message kept.
pub(crate) fn plan(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    redact: bool,
    keeps_before: bool,
) -> Result<Plan, ExportError> {
    let conv = store.conversation(conversation)?;
    let conv_meta = store.conversation_meta(&conv.id)?;
    let src = Source::load(store, &conv.id, at, redact)?;
    let mut plan = Plan {
        items: Vec::with_capacity(src.path.len() + 2),
        cwd: cwd_of(&conv_meta, &src.path),
        title: conv.title.clone(),
        model: src.view.model().map(str::to_string),
        source: src.view.harness.clone(),
        source_version: src.view.harness_version.clone(),
        origin: conv_meta
            .pointer("/session_meta/id")
            .and_then(Value::as_str)
            .map(str::to_string),
        instructions: conv_meta
            .pointer("/session_meta/base_instructions")
            .cloned(),
        notes: Vec::new(),
        redacted: 0,
    };
    if redact {
        if let Some(t) = &plan.title {
            let (r, n) = crate::redact::text(t);
            plan.title = Some(r.into_owned());
            plan.redacted += n;
        }
        if let Some(i) = &mut plan.instructions {
            plan.redacted += crate::redact::value(i);
        }
    }
    let mut compaction = src.main_compaction(keeps_before, &mut plan.redacted)?;
    let mut earlier = src.earlier_compactions(compaction.as_ref(), &mut plan.redacted);
    let (elided, elide_at, pruned) = src.elisions();
    if pruned > 0 {
        plan.note(format!(
            "images cairn prunes travel whole in {pruned} message(s): no harness has a record for pruning"
        ));
    }
    let mut ids: Vec<String> = Vec::new();
    for (k, &i) in src.plain.iter().enumerate() {
        while earlier.front().is_some_and(|(at, _)| *at < i)
            && let Some((_, c)) = earlier.pop_front()
        {
            plan.items.push(Item::Compaction(c));
        }
        if compaction.as_ref().is_some_and(|(at_k, _)| *at_k == k)
            && let Some((_, c)) = compaction.take()
        {
            plan.items.push(Item::Compaction(c));
        }
        if elide_at.is_some_and(|e| e < i) && !ids.is_empty() {
            plan.items.push(Item::Elision(std::mem::take(&mut ids)));
        }
        let mut m = src.path[i].clone();
        if elided.contains(&i) {
            ids.extend(large_results(&m));
        }
        load_images(store, &mut m)?;
        if redact {
            plan.redacted += crate::redact::blocks(&mut m.content);
        }
        plan.items.push(Item::Message(m));
    }
    plan.items
        .extend(earlier.into_iter().map(|(_, c)| Item::Compaction(c)));
    if let Some((_, c)) = compaction.take() {
        plan.items.push(Item::Compaction(c));
    }
    if !ids.is_empty() {
        plan.items.push(Item::Elision(ids));
    }
    Ok(plan)
}

/// Stored images (blobs) loaded into the message, so the file carries them.
fn load_images(store: &Store, m: &mut Message) -> Result<(), ExportError> {
    let mut out = Vec::with_capacity(m.content.len());
    for b in &m.content {
        out.push(b.try_map_images(&mut |img| match img {
            Block::Image {
                media_type,
                data: ImageData::Blob { hash, .. },
            } => Ok(Block::Image {
                media_type: media_type.clone(),
                data: ImageData::Bytes(store.blob(hash)?),
            }),
            other => Ok::<Block, crate::store::StoreError>(other.clone()),
        })?);
    }
    m.content = out;
    Ok(())
}

/// What cairn sends in place of the history, as the texts and images a summary record can hold: each message's
/// text, its tool calls named, its results' text and images.
fn flatten(sent: &[crate::reclaim::SentMessage]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let push_text = |out: &mut Vec<Block>, t: String| {
        if t.trim().is_empty() {
            return;
        }
        match out.last_mut() {
            Some(Block::Text { text }) => {
                text.push_str("\n\n");
                text.push_str(&t);
            }
            _ => out.push(Block::text(t)),
        }
    };
    for s in sent {
        for b in &s.content {
            match b {
                Block::Text { text } => push_text(&mut out, text.clone()),
                Block::Image { .. } => out.push(b.clone()),
                Block::ToolUse { name, input, .. } => {
                    push_text(&mut out, format!("[called {name} with {input}]"))
                }
                Block::ToolResult { content, .. } => match content {
                    ToolResultContent::Text(t) => push_text(&mut out, t.clone()),
                    ToolResultContent::Blocks(inner) => {
                        for x in inner {
                            match x {
                                Block::Text { text } => push_text(&mut out, text.clone()),
                                Block::Image { .. } => out.push(x.clone()),
                                _ => {}
                            }
                        }
                    }
                },
                Block::Thinking { .. } | Block::Other(_) => {}
            }
        }
    }
    out
}

/// The working folder the source recorded (empty where none): Claude Code's `cwd` on its lines, pi's header, Codex's
/// `session_meta`.
fn cwd_of(conv_meta: &Value, path: &[Message]) -> String {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    s(conv_meta.pointer("/header/cwd"))
        .or_else(|| s(conv_meta.pointer("/session_meta/cwd")))
        .or_else(|| path.iter().find_map(|m| s(m.meta.pointer("/lines/0/cwd"))))
        .or_else(|| s(conv_meta.get("cwd")))
        .unwrap_or_default()
}

/// Whether a message is a harness's compaction summary (Claude Code's `isCompactSummary` prompt).
pub(crate) fn is_compact_summary(m: &Message) -> bool {
    crate::model::CairnMeta::kind(&m.meta) == Some(KIND_COMPACT_SUMMARY)
}

/// The model of a reply: its own, else the path's.
pub(crate) fn model_of<'a>(m: &'a Message, plan: &'a Plan) -> &'a str {
    crate::model::model_of(&m.meta)
        .or(plan.model.as_deref())
        .unwrap_or("unknown")
}

/// Whether a reply failed (an API error Claude Code recorded, a pi reply that stopped on an error).
pub(crate) fn failed(m: &Message) -> bool {
    m.meta.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
        || crate::model::CairnMeta::failed(&m.meta)
}

/// An RFC 3339 time with milliseconds, as the harnesses write them.
pub(crate) fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".into())
}

/// The text and images of a user message's blocks (its results taken out).
pub(crate) fn split_results(content: &[Block]) -> (Vec<&Block>, Vec<&Block>) {
    content
        .iter()
        .partition(|b| matches!(b, Block::ToolResult { .. }))
}

/// A tool result as the writers take it apart: the call it answers, its text, its images, whether it failed.
pub(crate) struct ResultParts<'a> {
    pub call: &'a str,
    pub text: String,
    pub images: Vec<&'a Block>,
    pub is_error: bool,
}

impl ResultParts<'_> {
    /// How a result whose call is not in the reply before it (never written so by a harness) is sent instead: as
    /// text of the prompt.
    pub fn as_prompt_text(&self) -> String {
        format!("[the result of tool call {}]\n{}", self.call, self.text)
    }
}

/// A result block's parts (None for another block).
pub(crate) fn result_parts(b: &Block) -> Option<ResultParts<'_>> {
    let Block::ToolResult {
        tool_use_id,
        content,
        is_error,
    } = b
    else {
        return None;
    };
    let (text, images) = match content {
        ToolResultContent::Text(t) => (t.clone(), Vec::new()),
        ToolResultContent::Blocks(bs) => (
            crate::model::plain_text(bs),
            bs.iter()
                .filter(|b| matches!(b, Block::Image { .. }))
                .collect(),
        ),
    };
    Some(ResultParts {
        call: tool_use_id,
        text,
        images,
        is_error: *is_error,
    })
}

/// Base64 of an image's bytes (images are loaded into the plan).
pub(crate) fn image_base64(data: &ImageData) -> Option<String> {
    use base64::Engine as _;
    match data {
        ImageData::Bytes(b) => Some(base64::engine::general_purpose::STANDARD.encode(b)),
        ImageData::Blob { .. } => None,
    }
}

/// The tool names of the calls on the path, by call id (pi's results name their tool).
pub(crate) fn tool_names(plan: &Plan) -> std::collections::HashMap<String, String> {
    plan.messages()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect()
}

/// Where a harness looks for its sessions under `home`, and the file this session goes to.
pub fn place(home: &crate::discover::Home, f: &AgentFile) -> PathBuf {
    use crate::formats::Format;
    // where the harness keeps its sessions (a folder its own setting moved, else the default under home)
    let root = |fmt: Format| home.sessions(fmt).unwrap_or_else(|| home.dir.clone());
    match f.harness {
        Harness::ClaudeCode => root(Format::ClaudeCode)
            .join(claude_code::project_slug(&f.cwd))
            .join(format!("{}.jsonl", f.session_id)),
        Harness::Pi => root(Format::Pi).join(pi::folder(&f.cwd)).join(format!(
            "{}_{}.jsonl",
            pi::file_time(crate::store::now_ms()),
            f.session_id
        )),
        Harness::Codex => {
            let now = crate::store::now_ms();
            let t = jiff::Timestamp::from_millisecond(now).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            root(Format::Codex)
                .join(t.strftime("%Y/%m/%d").to_string())
                .join(format!(
                    "rollout-{}-{}.jsonl",
                    t.strftime("%Y-%m-%dT%H-%M-%S"),
                    f.session_id
                ))
        }
        Harness::GeminiCli => gemini_cli::project_dir(&root(Format::GeminiCli), &f.cwd)
            .join("chats")
            .join(gemini_cli::file_name(&f.session_id, crate::store::now_ms())),
        // opencode keeps its sessions in a store only it writes: the document its `opencode import` reads goes
        // beside that store
        Harness::Opencode => home
            .dir
            .join(".local/share/opencode/import")
            .join(format!("{}.json", f.session_id)),
    }
}

/// The one command that resumes the session, run from anywhere.
pub fn resume_command(f: &AgentFile, file: &Path) -> String {
    let q = |s: &str| {
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    match f.harness {
        Harness::ClaudeCode => format!(
            "cd {}{} && claude --resume {}",
            if f.cwd.starts_with('-') { "-- " } else { "" },
            q(&f.cwd),
            f.session_id
        ),
        Harness::Pi => format!("pi --session {}", q(&file.to_string_lossy())),
        Harness::Codex => format!("codex resume {}", f.session_id),
        Harness::GeminiCli => format!(
            "cd {}{} && gemini --resume {}",
            if f.cwd.starts_with('-') { "-- " } else { "" },
            q(&f.cwd),
            f.session_id
        ),
        // opencode's import files the session under the folder it runs in
        Harness::Opencode => format!(
            "cd {}{} && opencode import {} && opencode --session {}",
            if f.cwd.starts_with('-') { "-- " } else { "" },
            q(&f.cwd),
            q(&file.to_string_lossy()),
            f.session_id
        ),
    }
}
