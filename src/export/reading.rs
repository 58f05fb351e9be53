//! A conversation prepared for a human reader, once, for both readable exports (HTML and Markdown): the tree in
//! reading order, each tool call's result found for it, harness preambles recognised, each reply's model, time,
//! tokens and cost, the compactions as what the model then saw, and each message's fate in the context the path
//! sends now. The exports only lay it out.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::model::{Block, Conversation, Message, Role, Usage, model_of};
use crate::reclaim::view::Resolved;
use crate::reclaim::{Marker, PathView, assemble, layout};
use crate::store::Store;

/// What a reader sees of one reply beside its text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplyInfo {
    pub model: Option<String>,
    /// `2026-02-16 18:47 UTC`.
    pub time: Option<String>,
    pub usage: Option<Usage>,
    /// The reply's own size in tokens (estimated) when the recorded output count is far below it: Claude Code
    /// records usage when a reply starts streaming, so its `output_tokens` is often 1.
    pub output_estimate: Option<u64>,
    /// How a reply stopped short, where it did (`aborted`, `error`: pi's `stopReason`, Claude Code's API errors).
    pub stopped: Option<String>,
    /// Settings the harness changed right after this message (pi's model and thinking-level changes).
    pub changes: Vec<String>,
}

/// A compaction as the reader is told about it: what the model saw from here on.
#[derive(Debug, Clone, PartialEq)]
pub enum Compaction {
    /// A harness compacted: the model saw its summary (the marker's text, or the message after it) and what it kept.
    Harness {
        harness: String,
        summary: Option<String>,
        /// The context's size when it compacted, as the harness recorded it (pi's `tokensBefore`, Claude Code's
        /// `preTokens`).
        tokens_before: Option<u64>,
        /// Its size after: the prompt the provider measured on the first request after it (else Claude Code's
        /// `postTokens`).
        tokens_after: Option<u64>,
    },
    Summary {
        summary: String,
        covered: usize,
    },
    /// Pages drawn from the covered messages (PNG bytes, rendered now from the stored text).
    Snapshot {
        covered: usize,
        pages: Vec<Vec<u8>>,
    },
    Elide {
        results: usize,
    },
    Images {
        images: usize,
    },
    /// A harness left a message out of the context (or sent it with other content) without touching the history.
    Edit {
        harness: String,
        replaced: bool,
        /// The id of the message it edited, where it is on the path shown.
        target: Option<String>,
    },
}

/// The whole conversation, ready to lay out.
pub struct Reading {
    pub conv: Conversation,
    pub title: String,
    /// Every message of the tree, parents before children and each branch's run together (depth-first).
    pub all: Vec<Message>,
    /// Indices into `all` of the path being shown, root first.
    pub path: Vec<usize>,
    pub on_path: HashSet<usize>,
    pub children: HashMap<usize, Vec<usize>>,
    /// For a tool call id: where its result is (message, block), among the children of the call's message.
    pub results: HashMap<String, (usize, usize)>,
    /// The tool result blocks shown under their calls (message, block).
    pub absorbed: HashSet<(usize, usize)>,
    /// Tool names by call id (for a result's language and a placeholder's name).
    pub tool_inputs: HashMap<String, (String, Value)>,
    pub checkpoints: HashMap<usize, Vec<String>>,
    /// The fate of a message on the path in the context sent now ("elided", "imaged", "compacted away", ...).
    pub fates: HashMap<usize, &'static str>,
    pub compactions: HashMap<usize, Compaction>,
    pub tip: Option<usize>,
    /// Secrets redacted in what is shown.
    pub redacted: usize,
    /// The prompt cache on the path shown, by index into `all`: each reply's cost (the one cost function) and,
    /// for a miss, its cause and what it lost ([`crate::cache`]).
    pub cache: HashMap<usize, crate::cache::ReplyCache>,
    pub cache_totals: Option<crate::cache::Totals>,
    /// The subagents the path spawned, read the same way, by the id of the call that spawned each.
    pub subagents: HashMap<String, Reading>,
}

impl Reading {
    /// Whether a message is harness preamble: injected, not typed (Claude Code's local-command caveat and command
    /// markup, system reminders, AGENTS.md and environment context, continuation notes).
    pub fn is_preamble(&self, i: usize) -> bool {
        let m = &self.all[i];
        if m.role != Role::User || self.compactions.contains_key(&i) || m.cairn_kind().is_some() {
            return false;
        }
        let texts: Vec<&str> = m.content.iter().filter_map(Block::as_text).collect();
        let only_text = m.content.iter().all(|b| matches!(b, Block::Text { .. }));
        only_text
            && !texts.is_empty()
            && (crate::formats::said_by_harness(&m.meta)
                || texts.iter().all(|t| crate::formats::is_preamble(t)))
    }

    /// Whether every block of this message is a tool result shown under its call.
    pub fn only_absorbed(&self, i: usize) -> bool {
        let m = &self.all[i];
        !m.content.is_empty() && (0..m.content.len()).all(|b| self.absorbed.contains(&(i, b)))
    }

    /// The role a reader sees: a message of tool results reads as "tool".
    pub fn role_name(&self, i: usize) -> &'static str {
        let m = &self.all[i];
        if m.role == Role::User
            && m.content
                .iter()
                .all(|b| matches!(b, Block::ToolResult { .. }))
            && !m.content.is_empty()
        {
            "tool"
        } else {
            m.role.as_str()
        }
    }

    /// One line for the tree: the reply's words, else its calls by name and argument, else a result's first line.
    pub fn label(&self, i: usize) -> String {
        let m = &self.all[i];
        if self.is_preamble(i) {
            return "(harness preamble)".into();
        }
        if let Some(c) = self.compactions.get(&i) {
            return match c {
                Compaction::Harness { .. } => "compacted by the harness".into(),
                _ => "compaction (cairn)".into(),
            };
        }
        let text = m.content.iter().find_map(|b| match b {
            Block::Text { text }
                if !text.trim().is_empty() && !crate::formats::is_preamble(text) =>
            {
                Some(crate::formats::short_title(text))
            }
            _ => None,
        });
        if let Some(t) = text {
            return t;
        }
        let calls: Vec<String> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { name, input, .. } => {
                    let s = super::tools::summarize(name, input);
                    Some(match s.arg {
                        Some(a) => format!("{name} {a}"),
                        None => name.clone(),
                    })
                }
                _ => None,
            })
            .collect();
        if !calls.is_empty() {
            return calls.join(" · ");
        }
        let results: Vec<String> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult {
                    content, is_error, ..
                } => {
                    let t = content.text();
                    let first = t
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("")
                        .trim();
                    let first: String = first.chars().take(70).collect();
                    Some(if *is_error {
                        format!("error: {first}")
                    } else {
                        format!("↳ {first}")
                    })
                }
                _ => None,
            })
            .collect();
        if !results.is_empty() {
            return results.join(" · ");
        }
        m.summary(70)
    }

    /// Models, tokens and cost over the path shown.
    pub fn totals(&self) -> (Vec<String>, Usage, Option<f64>) {
        let mut models: Vec<String> = Vec::new();
        let mut u = Usage::default();
        let cost = self.cache_totals.as_ref().and_then(|t| t.cost);
        for &i in &self.path {
            let r = reply_info(&self.all[i]);
            if let Some(m) = r.model
                && !models.contains(&m)
            {
                models.push(m);
            }
            if let Some(x) = r.usage {
                u.input_tokens += x.input_tokens;
                u.output_tokens += x.output_tokens;
                u.cache_read_input_tokens += x.cache_read_input_tokens;
                u.cache_creation_input_tokens += x.cache_creation_input_tokens;
            }
        }
        (models, u, cost)
    }
}

/// `2026-02-16 18:47 UTC` for epoch milliseconds (None for 0 or out of range).
pub fn time_of(ms: i64) -> Option<String> {
    if ms <= 0 {
        return None;
    }
    let t = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(t.strftime("%Y-%m-%d %H:%M UTC").to_string())
}

/// The model, time, tokens and cost of a reply.
pub fn reply_info(m: &Message) -> ReplyInfo {
    let changes: Vec<String> = m
        .meta
        .get("attached")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let s = |k: &str| e.get(k).and_then(serde_json::Value::as_str);
            match s("type")? {
                "thinking_level_change" => Some(format!("thinking → {}", s("thinkingLevel")?)),
                "model_change" => Some(format!("model → {}", s("modelId").or_else(|| s("model"))?)),
                _ => None,
            }
        })
        .collect();
    if m.role != Role::Assistant {
        return ReplyInfo {
            time: time_of(m.created_at),
            changes,
            ..ReplyInfo::default()
        };
    }
    let stopped = m
        .meta
        .pointer("/entry/message/stopReason")
        .and_then(serde_json::Value::as_str)
        .filter(|r| matches!(*r, "aborted" | "error"))
        .map(str::to_string)
        .or_else(|| {
            (m.meta
                .get("isApiErrorMessage")
                .and_then(serde_json::Value::as_bool)
                == Some(true))
            .then(|| "error".to_string())
        });
    let output_estimate = m.usage.and_then(|u| {
        let own = crate::tokens::measure(&m.content).content_tokens();
        (u.output_tokens * 2 < own).then_some(own)
    });
    ReplyInfo {
        model: model_of(&m.meta).map(str::to_string),
        time: time_of(m.created_at),
        usage: m.usage,
        output_estimate,
        stopped,
        changes,
    }
}

/// Reads a conversation for export: `all` its messages (redacted as they will be shown), `path_ids` the path
/// shown, root first.
#[allow(clippy::too_many_arguments)]
pub fn read(
    store: &Store,
    conv: &Conversation,
    all: Vec<Message>,
    path_ids: &[String],
    at: Option<&str>,
    redacted: usize,
    prices: &std::collections::BTreeMap<String, crate::models::Price>,
) -> Reading {
    let all = depth_first(all);
    let index: HashMap<String, usize> = all
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.clone(), i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, m) in all.iter().enumerate() {
        if let Some(p) = m.parent.as_deref().and_then(|p| index.get(p)) {
            children.entry(*p).or_default().push(i);
        }
    }
    let path: Vec<usize> = path_ids
        .iter()
        .filter_map(|id| index.get(id).copied())
        .collect();
    let on_path: HashSet<usize> = path.iter().copied().collect();

    let (results, absorbed, tool_inputs) = tool_pairs(&all, &children);

    let mut checkpoints: HashMap<usize, Vec<String>> = HashMap::new();
    for c in store.checkpoints(&conv.id).unwrap_or_default() {
        if let Some(&i) = index.get(&c.message) {
            checkpoints.entry(i).or_default().push(c.label);
        }
    }

    let (fates, compactions) = compactions_of(store, conv, at, &all, &children, &path, &index);

    let title = title_of(conv, &all, &path);
    let tip = conv.tip.as_deref().and_then(|t| index.get(t).copied());
    // the cache of the path shown (a conversation the store cannot analyse shows no costs, not a failed export)
    let report =
        crate::cache::cache(store, &conv.id, path_ids.last().map(String::as_str), prices).ok();
    let cache = report
        .as_ref()
        .map(|r| {
            r.replies
                .iter()
                .filter_map(|x| index.get(x.message.as_str()).map(|&i| (i, x.clone())))
                .collect()
        })
        .unwrap_or_default();
    Reading {
        conv: conv.clone(),
        title,
        all,
        path,
        on_path,
        children,
        results,
        absorbed,
        tool_inputs,
        checkpoints,
        fates,
        compactions,
        tip,
        redacted,
        cache,
        cache_totals: report.map(|r| r.totals),
        subagents: HashMap::new(),
    }
}

/// The messages in depth-first order, iteratively (a 100k-deep chain cannot overflow the stack), children in
/// stored order; messages no root reaches (a cycle in what a harness wrote) still show, at the end.
fn depth_first(all: Vec<Message>) -> Vec<Message> {
    // depth-first order, iteratively, children in stored order
    let index: HashMap<&str, usize> = all
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    let mut kids: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
    for (i, m) in all.iter().enumerate() {
        let p = m.parent.as_deref().and_then(|p| index.get(p).copied());
        kids.entry(p).or_default().push(i);
    }
    let mut order = Vec::with_capacity(all.len());
    let mut stack: Vec<usize> = kids
        .get(&None)
        .map(|r| r.iter().rev().copied().collect())
        .unwrap_or_default();
    let mut seen = vec![false; all.len()];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push(i);
        if let Some(k) = kids.get(&Some(i)) {
            stack.extend(k.iter().rev());
        }
    }
    // messages no root reaches (a cycle in what a harness wrote) still show, at the end
    order.extend((0..all.len()).filter(|&i| !seen[i]));
    let mut slots: Vec<Option<Message>> = all.into_iter().map(Some).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

/// Where tool calls' results are shown: by call id, the result's (message, block); the result blocks shown under
/// their calls; by call id, the tool's name and input.
type ToolPairs = (
    HashMap<String, (usize, usize)>,
    HashSet<(usize, usize)>,
    HashMap<String, (String, Value)>,
);

/// Where each tool call's result is shown: (call id → its result's message and block, the result blocks shown
/// under their calls, each call's tool name and input).
fn tool_pairs(all: &[Message], children: &HashMap<usize, Vec<usize>>) -> ToolPairs {
    // each call's result, among the results that follow its message: its children, and down a chain of messages
    // that hold only results (pi and OpenAI-style harnesses write one message per result of parallel calls)
    let results_only = |m: &Message| {
        !m.content.is_empty()
            && m.content
                .iter()
                .all(|b| matches!(b, Block::ToolResult { .. }))
    };
    let answers = |i: usize| -> Vec<usize> {
        let mut out = Vec::new();
        let mut frontier: Vec<usize> = children.get(&i).cloned().unwrap_or_default();
        while let Some(c) = frontier.pop() {
            out.push(c);
            if results_only(&all[c]) && out.len() < 10_000 {
                frontier.extend(children.get(&c).into_iter().flatten().copied());
            }
        }
        out.sort_unstable();
        out
    };
    let mut results = HashMap::new();
    let mut absorbed = HashSet::new();
    let mut tool_inputs = HashMap::new();
    for (i, m) in all.iter().enumerate() {
        let calls = m.content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let near = if calls { answers(i) } else { Vec::new() };
        for b in &m.content {
            if let Block::ToolUse { id, name, input } = b {
                tool_inputs.insert(id.clone(), (name.clone(), input.clone()));
                let found = near.iter().find_map(|&c| {
                    all[c]
                        .content
                        .iter()
                        .enumerate()
                        .find_map(|(k, rb)| match rb {
                            Block::ToolResult { tool_use_id, .. } if tool_use_id == id => {
                                Some((c, k))
                            }
                            _ => None,
                        })
                });
                if let Some(f) = found {
                    results.insert(id.clone(), f);
                    absorbed.insert(f);
                }
            }
        }
    }
    (results, absorbed, tool_inputs)
}

/// The context sent now: each message's fate, and what each compaction marker did (with the snapshot pages the
/// model saw), by index into `all`.
fn compactions_of(
    store: &Store,
    conv: &Conversation,
    at: Option<&str>,
    all: &[Message],
    children: &HashMap<usize, Vec<usize>>,
    path: &[usize],
    index: &HashMap<String, usize>,
) -> (HashMap<usize, &'static str>, HashMap<usize, Compaction>) {
    let mut fates = HashMap::new();
    let view = PathView::load(store, &conv.id, at).ok();
    if let Some(view) = &view {
        let l = layout(view, &[], view.len());
        for (k, f) in assemble::fates(view, &l).into_iter().enumerate() {
            if let (Some(f), Some(&i)) = (f, view.heads.get(k).and_then(|h| index.get(&h.id))) {
                fates.insert(i, f.label());
            }
        }
    }
    // the spans markers on the path resolve to
    let resolved: HashMap<&str, &Resolved> = view
        .as_ref()
        .map(|v| {
            v.markers
                .iter()
                .filter_map(|p| Some((v.heads.get(p.at)?.id.as_str(), &p.marker)))
                .collect()
        })
        .unwrap_or_default();
    let marks = Marks {
        store,
        view: view.as_ref(),
        resolved,
        all,
        children,
        path,
        path_pos: path.iter().enumerate().map(|(k, &i)| (i, k)).collect(),
    };
    let compactions = all
        .iter()
        .enumerate()
        .filter_map(|(i, m)| Some((i, marks.compaction(i, m, Marker::of(m)?))))
        .collect();
    (fates, compactions)
}

/// What reading a compaction marker needs: the path as the context sees it and the tree as shown.
struct Marks<'a> {
    store: &'a Store,
    view: Option<&'a PathView>,
    resolved: HashMap<&'a str, &'a Resolved>,
    all: &'a [Message],
    children: &'a HashMap<usize, Vec<usize>>,
    path: &'a [usize],
    path_pos: HashMap<usize, usize>,
}

impl Marks<'_> {
    fn compaction(&self, i: usize, m: &Message, marker: Marker) -> Compaction {
        let range = match self.resolved.get(m.id.as_str()) {
            Some(Resolved::Summary { from, to, .. })
            | Some(Resolved::Snapshot { from, to, .. }) => Some((*from, *to)),
            _ => None,
        };
        let covered = range.map_or(0, |(a, b)| b.saturating_sub(a) + 1);
        match marker {
            Marker::Harness {
                harness,
                sends_text,
                ..
            } => self.harness(i, m, harness, sends_text),
            Marker::Summary { summary, .. } => Compaction::Summary { summary, covered },
            Marker::Snapshot { shape, .. } => Compaction::Snapshot {
                covered,
                pages: match (self.view, range) {
                    (Some(v), Some((a, b))) => {
                        snapshot_pages(self.store, v, &m.id, a, b, &shape).unwrap_or_default()
                    }
                    _ => Vec::new(),
                },
            },
            Marker::Elide {
                at,
                legacy_tool_ids,
            } => Compaction::Elide {
                results: at.len().max(legacy_tool_ids.len()),
            },
            Marker::Images { at } => Compaction::Images { images: at.len() },
            Marker::Edit { replacement, .. } => Compaction::Edit {
                harness: m
                    .meta
                    .get("source")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("the harness")
                    .to_string(),
                replaced: replacement.is_some(),
                target: match (self.resolved.get(m.id.as_str()), self.view) {
                    (Some(Resolved::Edit { target, .. }), Some(v)) => {
                        v.heads.get(*target).map(|h| h.id.clone())
                    }
                    _ => None,
                },
            },
        }
    }

    /// A harness's compaction: its summary and the prompt's size before and after, as the transcript recorded them.
    fn harness(&self, i: usize, m: &Message, harness: String, sends_text: bool) -> Compaction {
        let own = sends_text.then(|| crate::model::plain_text(&m.content));
        // Claude Code's summary is the user message after the boundary
        let next = self.children.get(&i).into_iter().flatten().find_map(|&c| {
            (self.all[c].cairn_kind() == Some(crate::model::KIND_COMPACT_SUMMARY))
                .then(|| crate::model::plain_text(&self.all[c].content))
        });
        let tokens_before = m
            .meta
            .pointer("/entry/tokensBefore")
            .or_else(|| m.meta.pointer("/line/compactMetadata/preTokens"))
            .and_then(serde_json::Value::as_u64)
            .filter(|n| *n > 0);
        // the next measured prompt down the path shown (a compaction off it: its own record only)
        let measured = self.path_pos.get(&i).and_then(|&k| {
            self.path[k + 1..]
                .iter()
                .find_map(|&j| self.all[j].usage.map(|u| u.prompt()).filter(|n| *n > 0))
        });
        let tokens_after = measured.or_else(|| {
            m.meta
                .pointer("/line/compactMetadata/postTokens")
                .and_then(serde_json::Value::as_u64)
                .filter(|n| *n > 0)
        });
        Compaction::Harness {
            harness,
            summary: own.or(next).filter(|s| !s.trim().is_empty()),
            tokens_before,
            tokens_after,
        }
    }
}

/// The conversation's title: its own, unless a harness's injected preamble gave it (stores imported before titles
/// skipped them), then the first prompt the user typed.
fn title_of(conv: &Conversation, all: &[Message], path: &[usize]) -> String {
    // a title a harness's injected preamble gave (stores imported before titles skipped them) is replaced by the
    // first prompt the user typed
    let injected = |t: &str| {
        let t = t.trim_start();
        crate::formats::is_preamble(t)
            && (t.starts_with("Caveat:")
                || t.starts_with("# AGENTS.md")
                || [
                    "command",
                    "system-reminder",
                    "environment_context",
                    "user_instructions",
                    "ide_",
                ]
                .iter()
                .any(|k| t.get(1..).is_some_and(|r| r.starts_with(k))))
    };
    match conv.title.as_deref() {
        Some(t) if !injected(t) && !t.trim().is_empty() => t.to_string(),
        _ => path
            .iter()
            .find_map(|&i| {
                let m = &all[i];
                (m.role == Role::User).then_some(())?;
                m.content.iter().find_map(|b| match b {
                    Block::Text { text }
                        if !crate::formats::is_preamble(text) && !text.trim().is_empty() =>
                    {
                        Some(crate::formats::short_title(text))
                    }
                    _ => None,
                })
            })
            .unwrap_or_else(|| format!("Conversation {}", conv.id)),
    }
}

/// The pages a snapshot marker sends for path messages `from..=to`, rendered now from their stored text, secrets
/// redacted as everywhere else in the export.
fn snapshot_pages(
    store: &Store,
    view: &PathView,
    marker: &str,
    from: usize,
    to: usize,
    shape: &crate::reclaim::marker::Shape,
) -> Option<Vec<Vec<u8>>> {
    let idx: Vec<usize> = (from..=to).collect();
    // what elision markers before this one took is drawn as a note, as the model was sent it
    let at = view
        .markers
        .iter()
        .find(|p| view.heads.get(p.at).is_some_and(|h| h.id == marker))
        .map_or(usize::MAX, |p| p.at);
    let elided: std::collections::HashSet<usize> = view
        .markers
        .iter()
        .filter(|p| p.at < at)
        .flat_map(|p| match &p.marker {
            Resolved::Elide(ix) => ix.clone(),
            _ => Vec::new(),
        })
        .collect();
    let mut covered: Vec<Message> = view
        .bodies(Some(store), &idx)
        .ok()?
        .iter()
        .zip(&idx)
        .map(|(m, i)| assemble::as_drawn(m, elided.contains(i)))
        .collect();
    for m in &mut covered {
        crate::redact::message(m);
    }
    let blocks = assemble::snapshot_blocks(&covered, shape).ok()?;
    Some(
        blocks
            .into_iter()
            .filter_map(|b| match b {
                Block::Image {
                    data: crate::model::ImageData::Bytes(b),
                    ..
                } => Some(b),
                _ => None,
            })
            .collect(),
    )
}
