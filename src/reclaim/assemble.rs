//! What is sent: the layout of a path's context after every compaction on it, its tally from the stored measures,
//! and (when a request is built) the sent messages themselves.
//!
//! The rules, in order:
//! 1. A harness's compaction ends what came before it: the model saw only the harness's summary, what the harness
//!    kept verbatim (pi's messages from `firstKeptEntryId`, Claude Code's preserved messages, Codex's recent user
//!    prompts), and what followed. The newest one on the path counts.
//! 2. cairn's markers after it apply: elided results become placeholders, pruned images notes, and the newest
//!    snapshot or summary replaces the messages it covers (drawn as pages from their stored text, or as the
//!    summary).
//!
//! [`layout`] works on heads and measures alone, so a 100k-message path is laid out and tallied without decoding a
//! body; [`materialize`] decodes exactly the bodies that are sent.

use std::collections::HashSet;

use serde::Serialize;

use super::marker::Shape;
use super::view::{KeptAt, PathView, Placed, Resolved};
use super::{PLACEHOLDER_TOKENS, ReclaimError};
use crate::model::{Block, ImageData, Message, Role, ToolResultContent};
use crate::render;
use crate::store::Store;
use crate::tokens::{self, LARGE_RESULT_TOKENS, MESSAGE_OVERHEAD};

/// One part of what is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// The stored message at this path index, its large successful results elided and/or its images pruned.
    Message {
        index: usize,
        elided: bool,
        pruned: bool,
    },
    /// The summary of the harness compaction marker at this index (its text, and the images a Codex replacement
    /// history held), sent as a user message.
    HarnessSummary { index: usize },
    /// These messages (path indices, in order) drawn as pages or replaced by a summary. `elided`: those of them
    /// whose large successful results an earlier elision took (a snapshot draws a short note in their place), in
    /// order (looked up by binary search: a cover can hold most of a 100k-message path).
    Cover {
        covered: Vec<usize>,
        elided: Vec<usize>,
        by: Cover,
    },
}

/// What replaces a covered run.
#[derive(Debug, Clone, PartialEq)]
pub enum Cover {
    Snapshot(Shape),
    Summary(String),
}

/// Tokens by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByKind {
    pub system: u64,
    pub text: u64,
    pub tool_use: u64,
    pub tool_results: u64,
    pub images: u64,
    pub thinking: u64,
    pub other: u64,
}

impl ByKind {
    pub fn total(&self) -> u64 {
        self.system
            + self.text
            + self.tool_use
            + self.tool_results
            + self.images
            + self.thinking
            + self.other
    }
}

/// The accounting of an assembled context.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    pub text_tokens: u64,
    pub image_tokens: u64,
    pub image_bytes: u64,
    pub tool_results_elided: u64,
    pub images_removed: u64,
    pub characters_imaged: u64,
    pub summary_characters: u64,
    /// Messages sent.
    pub messages: usize,
    pub by_kind: ByKind,
}

impl Tally {
    pub fn total(&self) -> u64 {
        self.text_tokens + self.image_tokens
    }

    fn add(&mut self, k: &ByKind) {
        self.by_kind.system += k.system;
        self.by_kind.text += k.text;
        self.by_kind.tool_use += k.tool_use;
        self.by_kind.tool_results += k.tool_results;
        self.by_kind.images += k.images;
        self.by_kind.thinking += k.thinking;
        self.by_kind.other += k.other;
        self.image_tokens += k.images;
        self.text_tokens += k.total() - k.images;
        self.messages += 1;
    }
}

/// The context a path's prefix would be sent as.
#[derive(Debug, Clone, Default)]
pub struct ContextLayout {
    pub pieces: Vec<Piece>,
    /// Tokens of each piece.
    pub tokens: Vec<u64>,
    pub tally: Tally,
    /// The messages the rungs may work on, in order: what follows the newest harness compaction (with what it
    /// kept), covered runs included.
    pub seq: Vec<usize>,
    /// The newest harness compaction counted, if any.
    pub harness: Option<usize>,
    /// Thinking tokens counted after the last prompt (dropped once another prompt follows, for readers that drop
    /// past thinking).
    pub turn_thinking: u64,
    /// Messages a harness's edit sends with other content (path index of the message, of the edit's marker).
    pub replaced: Vec<(usize, usize)>,
}

impl ContextLayout {
    /// Path indices of the messages sent as themselves.
    pub fn sent_messages(&self) -> impl Iterator<Item = (usize, bool, bool)> + '_ {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Message {
                index,
                elided,
                pruned,
            } => Some((*index, *elided, *pruned)),
            _ => None,
        })
    }
}

/// How the model that reads a context treats what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelReader {
    /// Whether the thinking of earlier turns stays in the context. Claude models before Opus 4.5 and OpenAI's
    /// reasoning models drop it (only the current turn's, within its tool loop, is sent back).
    pub keeps_past_thinking: bool,
}

impl ModelReader {
    /// The reader a model is.
    pub fn of(model: &str) -> ModelReader {
        ModelReader {
            keeps_past_thinking: crate::models::keeps_past_thinking(model),
        }
    }
}

/// The layout of the messages before `end` (`view.len()` for the whole path), with the view's markers before `end`
/// and `planned` markers (not written; they apply to everything before `end`), read by the path's own model.
pub fn layout(view: &PathView, planned: &[Placed], end: usize) -> ContextLayout {
    layout_for(
        view,
        planned,
        end,
        ModelReader::of(view.model().unwrap_or("")),
    )
}

/// [`layout`] for a given reader.
pub fn layout_for(
    view: &PathView,
    planned: &[Placed],
    end: usize,
    reader: ModelReader,
) -> ContextLayout {
    let end = end.min(view.len());
    let markers: Vec<&Placed> = view
        .markers
        .iter()
        .filter(|p| p.at < end)
        .chain(planned.iter())
        .collect();
    let harness = markers
        .iter()
        .rposition(|p| matches!(p.marker, Resolved::Harness { .. }));
    let mut out = ContextLayout::default();
    let (mut seq, summary_at, head) = match harness.map(|k| markers[k]) {
        Some(p) => kept_by_harness(view, p, end, &mut out),
        None => (Vec::new(), None, 0),
    };
    // the summary goes after the kept messages the harness sends before it (none, for most harnesses): the last
    // of them, by its place on the path (what is sent is in path order)
    let head_end: Option<usize> = head.checked_sub(1).and_then(|k| seq.get(k).copied());
    let after = out.harness.map_or(0, |at| at + 1);
    let is_marker = |i: usize| view.heads[i].is_compaction();
    // a summary message after the marker that the harness sends before what it kept is sent first, once
    let placed: Option<usize> = summary_at.filter(|&i| i >= after);
    seq.extend((after..end).filter(|&i| !is_marker(i) && Some(i) != placed));
    // a reply the harness recorded as failed is history, not context: pi leaves one that stopped on an error or was
    // aborted out of every request after it (its `transformMessages`)
    seq.retain(|&i| !view.heads[i].is_failed());
    let edits = edits_of(&markers);
    seq.retain(|i| !matches!(edits.get(i), Some((_, None))));
    // cairn's markers after the harness's (markers placed before it were superseded by it)
    let RungsDone {
        elided,
        pruned,
        cover,
    } = rungs_after(&markers[harness.map_or(0, |k| k + 1)..]);
    let mut summary = summary_at;
    let mut send_summary = |out: &mut ContextLayout| {
        if let Some(h) = summary.take() {
            let k = harness_summary(view, h);
            out.tally.add(&k);
            out.tokens.push(k.total());
            out.pieces.push(Piece::HarnessSummary { index: h });
        }
    };
    if head_end.is_none() {
        send_summary(&mut out);
    }
    // the current turn starts at the last prompt the user typed: thinking before it is dropped by readers that
    // drop past thinking
    let turn_start = seq
        .iter()
        .rposition(|&i| is_prompt_head(view, i))
        .map_or(0, |k| seq[k]);
    let mut k = 0;
    while k < seq.len() {
        let i = seq[k];
        if head_end.is_none_or(|h| i > h) {
            send_summary(&mut out);
        }
        if let Some((from, to, by)) = &cover
            && (*from..=*to).contains(&i)
        {
            let start = k;
            while k < seq.len() && seq[k] <= *to {
                k += 1;
            }
            let covered = seq[start..k].to_vec();
            let elided_here: Vec<usize> = covered
                .iter()
                .copied()
                .filter(|i| elided.contains(i))
                .collect();
            let kinds = cover_kinds(view, &covered, &elided_here, by, &mut out.tally);
            out.tally.add(&kinds);
            out.tokens.push(kinds.total());
            out.pieces.push(Piece::Cover {
                covered,
                elided: elided_here,
                by: by.clone(),
            });
            continue;
        }
        let (e, p) = (elided.contains(&i), pruned.contains(&i));
        let mut kinds = match edits.get(&i) {
            Some((at, Some(blocks))) => {
                out.replaced.push((i, *at));
                let m = tokens::measure(blocks);
                kinds_of(&m, view.heads[i].role, e, p, &mut out.tally)
            }
            _ => message_kinds(view, i, e, p, &mut out.tally),
        };
        if i < turn_start && !reader.keeps_past_thinking {
            kinds.thinking = 0;
        } else if i > turn_start {
            out.turn_thinking += kinds.thinking;
        }
        out.tally.add(&kinds);
        out.tokens.push(kinds.total());
        out.pieces.push(Piece::Message {
            index: i,
            elided: e,
            pruned: p,
        });
        k += 1;
    }
    send_summary(&mut out);
    out.seq = seq;
    out
}

/// A harness's edits of the context (pi's `context_edit`), wherever they sit on the path (an edit holds across a
/// later compaction that kept its message), by the message edited: the edit's place and what is sent instead (none:
/// the message is left out). The newest for a message wins.
fn edits_of<'a>(
    markers: &[&'a Placed],
) -> std::collections::HashMap<usize, (usize, Option<&'a Vec<Block>>)> {
    let mut edits = std::collections::HashMap::new();
    for p in markers {
        if let Resolved::Edit {
            target,
            replacement,
        } = &p.marker
        {
            edits.insert(*target, (p.at, replacement.as_ref()));
        }
    }
    edits
}

/// What a harness's compaction at `p` kept before it (in path order, markers left out), and where its summary is
/// when a message sends it: the marker's own, or the harness's summary message after the marker where the harness
/// sends it before what it kept (Claude Code's preserved segment anchored on its summary); and how many of the kept
/// messages are sent before the summary (OpenHands' first events; none for the others). Records the compaction in
/// `out`.
fn kept_by_harness(
    view: &PathView,
    p: &Placed,
    end: usize,
    out: &mut ContextLayout,
) -> (Vec<usize>, Option<usize>, usize) {
    let Placed {
        at,
        marker: Resolved::Harness {
            kept, sends_text, ..
        },
    } = p
    else {
        return (Vec::new(), None, 0);
    };
    let is_marker = |i: usize| view.heads[i].is_compaction();
    let at = (*at).min(end);
    out.harness = Some(at);
    let summary_at = sends_text.then_some(at);
    let mut seq = Vec::new();
    match kept {
        KeptAt::Nothing => {}
        KeptAt::From(k) => seq.extend((*k..at).filter(|&i| !is_marker(i))),
        KeptAt::Each(each) | KeptAt::AfterSummary { each, .. } | KeptAt::Around { each, .. } => {
            let mut v: Vec<usize> = each
                .iter()
                .copied()
                .filter(|&i| i < at && !is_marker(i))
                .collect();
            v.sort_unstable();
            v.dedup();
            seq.extend(v);
        }
        KeptAt::UserPrompts(max) => seq.extend(user_prompts(view, at, *max)),
    }
    // the harness's summary message first, where the path reaches it
    if let KeptAt::AfterSummary { summary, .. } = kept
        && *summary > at
        && *summary < end
        && !is_marker(*summary)
    {
        return (seq, Some(*summary), 0);
    }
    // what was kept is in path order: the summary follows the first `head` of it
    let head = match kept {
        KeptAt::Around { head, .. } => (*head).min(seq.len()),
        _ => 0,
    };
    (seq, summary_at, head)
}

/// What cairn's rungs did after the newest harness compaction: the results elided, the images pruned, and the
/// newest run covered by a snapshot or a summary.
fn rungs_after(markers: &[&Placed]) -> RungsDone {
    let mut elided: HashSet<usize> = HashSet::new();
    let mut pruned: HashSet<usize> = HashSet::new();
    let mut cover: Option<(usize, usize, Cover)> = None;
    for p in markers {
        match &p.marker {
            Resolved::Elide(at) => elided.extend(at.iter().copied()),
            Resolved::Images(at) => pruned.extend(at.iter().copied()),
            Resolved::Snapshot { from, to, shape } => {
                cover = Some((*from, *to, Cover::Snapshot(shape.clone())))
            }
            Resolved::Summary { from, to, summary } => {
                cover = Some((*from, *to, Cover::Summary(summary.clone())))
            }
            Resolved::Harness { .. } | Resolved::Edit { .. } => {}
        }
    }
    RungsDone {
        elided,
        pruned,
        cover,
    }
}

/// What cairn's rungs did to a path: results elided, images pruned, the run covered (first, last, by what).
struct RungsDone {
    elided: HashSet<usize>,
    pruned: HashSet<usize>,
    cover: Option<(usize, usize, Cover)>,
}

/// Codex's history after a local compaction: the instructions it injected (system messages) and the user's
/// prompts, newest first up to `max` tokens.
fn user_prompts(view: &PathView, at: usize, max: u64) -> Vec<usize> {
    let mut used = 0;
    let mut out = Vec::new();
    for i in (0..at).rev() {
        let h = &view.heads[i];
        if h.is_compaction() || h.has_tool_result() {
            continue;
        }
        match h.role {
            Role::System => out.push(i),
            Role::User if used + h.tokens <= max => {
                used += h.tokens;
                out.push(i);
            }
            _ => {}
        }
    }
    out.reverse();
    out
}

fn harness_summary(view: &PathView, at: usize) -> ByKind {
    ByKind {
        text: view.facts[at].measure.tokens(),
        ..ByKind::default()
    }
}

/// Tokens by kind of a message sent as itself, after elision and pruning.
fn message_kinds(view: &PathView, i: usize, elided: bool, pruned: bool, t: &mut Tally) -> ByKind {
    kinds_of(
        &view.facts[i].measure,
        view.heads[i].role,
        elided,
        pruned,
        t,
    )
}

/// Tokens by kind of content with this measure, sent in a message of this role.
fn kinds_of(m: &tokens::Measure, role: Role, elided: bool, pruned: bool, t: &mut Tally) -> ByKind {
    let mut k = ByKind {
        text: m.text + MESSAGE_OVERHEAD,
        tool_use: m.tool_use,
        tool_results: m.tool_result,
        images: m.image,
        thinking: m.thinking,
        // the tool definitions it loads
        other: m.other + m.tool_refs * crate::tokens::TOOL_DEFINITION_TOKENS,
        system: 0,
    };
    let mut images = m.images;
    let mut bytes = m.image_bytes;
    if elided && m.large_results > 0 {
        k.tool_results = k.tool_results.saturating_sub(m.large_result_tokens)
            + PLACEHOLDER_TOKENS * m.large_results;
        k.images = k.images.saturating_sub(m.large_result_image_tokens);
        images = images.saturating_sub(m.large_result_images);
        bytes = bytes.saturating_sub(m.large_result_image_bytes);
        t.tool_results_elided += m.large_results;
    }
    if pruned && images > 0 {
        k.images = 0;
        k.text += PLACEHOLDER_TOKENS * images;
        t.images_removed += images;
        bytes = 0;
    }
    t.image_bytes += bytes;
    if role == Role::System {
        let all = k.total() - k.images;
        k = ByKind {
            system: all,
            images: k.images,
            ..ByKind::default()
        };
    }
    k
}

/// The render options of a snapshot's shape.
pub fn shape_options(shape: &Shape) -> render::Options {
    let profile = render::profile::by_name(&shape.profile).unwrap_or(&render::PROFILES[0]);
    let mut o = render::Options::new(profile);
    if let Some(c) = shape.cell {
        o.cell = c;
    }
    if let Some(named) = shape.name.as_deref().and_then(render::shape::by_name) {
        named.apply(&mut o);
    }
    o
}

/// The text that introduces a snapshot's pages.
pub fn snapshot_intro(messages: usize, pages: usize) -> String {
    format!(
        "[The earlier conversation ({messages} messages) as {pages} page(s) of text rendered as images: read \
         them in order. Each message starts with a block mark and its role; the mark after a line is a newline. \
         Exact strings are listed as text after the pages.]"
    )
}

/// The text that stands for a summarised run.
pub fn summary_text(summary: &str) -> String {
    format!("[Summary of the earlier conversation]\n{summary}")
}

/// What a snapshot draws in place of a large successful tool result an earlier elision took: the ladder's rungs
/// build on each other, so the pages hold what elision left, not the output it already judged uneventful.
pub const ELIDED_ON_PAGE: &str = "[tool output elided]";

/// The characters a snapshot draws of path message `i` (its plain text, less its large results when `elided`).
pub fn drawn_chars(view: &PathView, i: usize, elided: bool) -> u64 {
    let m = &view.facts[i].measure;
    if elided {
        m.chars.saturating_sub(m.large_result_chars)
            + m.large_results * ELIDED_ON_PAGE.chars().count() as u64
    } else {
        m.chars
    }
}

/// The cells the covered messages take on snapshot pages (`elided`, sorted: those drawn without their large
/// results).
pub fn covered_cells(view: &PathView, covered: &[usize], elided: &[usize]) -> u64 {
    covered
        .iter()
        .map(|&i| {
            let h = &view.heads[i];
            render::cells(
                &render::label(h.role, h.has_tool_result(), &h.id),
                drawn_chars(view, i, elided.binary_search(&i).is_ok()),
            )
        })
        .sum()
}

/// A message as a snapshot draws it: with its large successful results replaced by [`ELIDED_ON_PAGE`] when an
/// earlier elision took them.
pub fn as_drawn(m: &Message, elided: bool) -> Message {
    if !elided {
        return m.clone();
    }
    let mut m = m.clone();
    for b in &mut m.content {
        if is_large_success(b)
            && let Block::ToolResult {
                tool_use_id,
                is_error,
                ..
            } = b
        {
            *b = Block::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: ToolResultContent::Text(ELIDED_ON_PAGE.to_string()),
                is_error: *is_error,
            };
        }
    }
    m
}

fn cover_kinds(
    view: &PathView,
    covered: &[usize],
    elided: &[usize],
    by: &Cover,
    t: &mut Tally,
) -> ByKind {
    match by {
        Cover::Snapshot(shape) => {
            let est = render::estimate(covered_cells(view, covered, elided), &shape_options(shape));
            t.characters_imaged += covered
                .iter()
                .map(|&i| drawn_chars(view, i, elided.binary_search(&i).is_ok()))
                .sum::<u64>();
            t.image_bytes += est.png_bytes;
            ByKind {
                text: tokens::text(&snapshot_intro(covered.len(), est.pages))
                    + (est.factsheet_bytes as f64 / FACTSHEET_CHARS_PER_TOKEN).ceil() as u64
                    + MESSAGE_OVERHEAD,
                images: est.image_tokens,
                ..ByKind::default()
            }
        }
        Cover::Summary(s) => {
            t.summary_characters += s.chars().count() as u64;
            ByKind {
                text: tokens::text(&summary_text(s)) + MESSAGE_OVERHEAD,
                ..ByKind::default()
            }
        }
    }
}

/// The factsheet is ids, hashes, numbers and paths: about as dense as code.
const FACTSHEET_CHARS_PER_TOKEN: f64 = 3.0;

/// What the context does to a message of the path that is not sent as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Its large successful tool results are placeholders.
    Elided,
    /// Its images are one-line notes.
    ImagesPruned,
    /// Drawn on snapshot pages.
    Imaged,
    /// Replaced by a summary.
    Summarised,
    /// Before a harness's compaction and not kept by it: the model no longer saw it.
    CompactedAway,
    /// A reply the harness recorded as failed, and what answered its calls: never sent again.
    Failed,
}

impl Fate {
    pub fn label(self) -> &'static str {
        match self {
            Fate::Elided => "elided",
            Fate::ImagesPruned => "image pruned",
            Fate::Imaged => "imaged",
            Fate::Summarised => "summarised",
            Fate::CompactedAway => "compacted away",
            Fate::Failed => "failed, not sent again",
        }
    }
}

/// The fate of each message of the path under a layout (None: sent as itself, or a marker).
pub fn fates(view: &PathView, l: &ContextLayout) -> Vec<Option<Fate>> {
    let mut out = vec![None; view.len()];
    let mut sent = vec![false; view.len()];
    for p in &l.pieces {
        match p {
            Piece::Message {
                index,
                elided,
                pruned,
            } => {
                sent[*index] = true;
                let m = &view.facts[*index].measure;
                out[*index] = if *elided && m.large_results > 0 {
                    Some(Fate::Elided)
                } else if *pruned && m.images > 0 {
                    Some(Fate::ImagesPruned)
                } else {
                    None
                };
            }
            Piece::HarnessSummary { index } => sent[*index] = true,
            Piece::Cover { covered, by, .. } => {
                for &i in covered {
                    sent[i] = true;
                    out[i] = Some(match by {
                        Cover::Snapshot(_) => Fate::Imaged,
                        Cover::Summary(_) => Fate::Summarised,
                    });
                }
            }
        }
    }
    if let Some(h) = l.harness {
        for i in 0..h {
            if !sent[i] && !view.heads[i].is_compaction() {
                out[i] = Some(Fate::CompactedAway);
            }
        }
    }
    for (i, f) in out.iter_mut().enumerate() {
        if view.heads[i].is_failed() {
            *f = Some(Fate::Failed);
        }
    }
    out
}

/// One message of an assembled context, with the stored messages it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    pub role: Role,
    pub content: Vec<Block>,
    pub sources: Vec<String>,
}

impl crate::pairs::HasBlocks for SentMessage {
    fn role(&self) -> Role {
        self.role
    }
    fn blocks(&self) -> &[Block] {
        &self.content
    }
}

impl crate::pairs::Repairable for SentMessage {
    fn blocks_mut(&mut self) -> &mut Vec<Block> {
        &mut self.content
    }
    fn added(role: Role, content: Vec<Block>) -> SentMessage {
        SentMessage {
            role,
            content,
            sources: Vec::new(),
        }
    }
}

impl SentMessage {
    /// A stored message sent as itself.
    pub fn of(m: &Message) -> SentMessage {
        SentMessage {
            role: m.role,
            content: m.content.clone(),
            sources: vec![m.id.clone()],
        }
    }
}

/// What a conversation's active path sends now: the messages and their tally.
#[derive(Debug, Clone)]
pub struct Assembled {
    pub messages: Vec<SentMessage>,
    pub tally: Tally,
}

/// The context a conversation's active path would be sent now, every compaction on it applied.
pub fn assemble(store: &Store, conversation: &str) -> Result<Assembled, ReclaimError> {
    let view = PathView::load(store, conversation, None)?;
    let l = layout(&view, &[], view.len());
    Ok(Assembled {
        messages: materialize(&view, &l, Some(store))?,
        tally: l.tally,
    })
}

/// The messages a layout sends, built from the stored bodies (a snapshot's pages rendered now from the stored
/// text).
pub fn materialize(
    view: &PathView,
    l: &ContextLayout,
    store: Option<&Store>,
) -> Result<Vec<SentMessage>, ReclaimError> {
    let mut want: Vec<usize> = Vec::new();
    for p in &l.pieces {
        match p {
            Piece::Message { index, .. } | Piece::HarnessSummary { index } => want.push(*index),
            Piece::Cover { covered, .. } => want.extend(covered.iter().copied()),
        }
    }
    want.extend(l.replaced.iter().map(|(_, at)| *at));
    want.sort_unstable();
    want.dedup();
    let bodies = view.bodies(store, &want)?;
    let body =
        |i: usize| -> Option<&Message> { want.binary_search(&i).ok().and_then(|k| bodies.get(k)) };
    // tool names for the placeholders of elided results
    let names: std::collections::HashMap<&str, &str> = bodies
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(l.pieces.len());
    for p in &l.pieces {
        match p {
            Piece::Message {
                index,
                elided,
                pruned,
            } => {
                let Some(m) = body(*index) else { continue };
                // what a harness's edit sends in its place
                let replacement = l
                    .replaced
                    .iter()
                    .find(|(i, _)| i == index)
                    .and_then(|(_, at)| body(*at))
                    .and_then(super::marker::Marker::of)
                    .and_then(|mk| match mk {
                        super::marker::Marker::Edit { replacement, .. } => replacement,
                        _ => None,
                    });
                let blocks = replacement.as_ref().unwrap_or(&m.content);
                out.push(SentMessage {
                    role: m.role,
                    content: as_sent(m, blocks, (*elided, *pruned), &names, store),
                    sources: vec![m.id.clone()],
                });
            }
            Piece::HarnessSummary { index } => {
                let Some(m) = body(*index) else { continue };
                out.push(SentMessage {
                    role: Role::User,
                    content: m
                        .content
                        .iter()
                        .filter(|b| matches!(b, Block::Text { .. } | Block::Image { .. }))
                        .cloned()
                        .collect(),
                    sources: vec![m.id.clone()],
                });
            }
            Piece::Cover {
                covered,
                elided,
                by,
            } => {
                let msgs: Vec<Message> = covered
                    .iter()
                    .filter_map(|&i| body(i).map(|m| as_drawn(m, elided.binary_search(&i).is_ok())))
                    .collect();
                out.push(cover_sent(&msgs, by)?);
            }
        }
    }
    Ok(out)
}

/// A message's blocks as sent: a large successful result elided to its placeholder, images pruned.
fn as_sent(
    m: &Message,
    blocks: &[Block],
    (elided, pruned): (bool, bool),
    names: &std::collections::HashMap<&str, &str>,
    store: Option<&Store>,
) -> Vec<Block> {
    blocks
        .iter()
        .map(|b| {
            let b = if elided && is_large_success(b) {
                placeholder(b, names)
            } else {
                b.clone()
            };
            if pruned {
                prune(&b, &m.id, &|h| {
                    store.and_then(|s| s.blob_size(h).ok().flatten())
                })
            } else {
                b
            }
        })
        .collect()
}

/// A covered run as sent: its snapshot pages, drawn now from the stored text, or its summary.
fn cover_sent(msgs: &[Message], by: &Cover) -> Result<SentMessage, ReclaimError> {
    Ok(SentMessage {
        role: Role::User,
        content: match by {
            Cover::Snapshot(shape) => snapshot_blocks(msgs, shape)?,
            Cover::Summary(s) => vec![Block::text(summary_text(s))],
        },
        sources: msgs.iter().map(|m| m.id.clone()).collect(),
    })
}

/// A successful tool result over the size elision takes (the measure's "large result").
pub fn is_large_success(b: &Block) -> bool {
    matches!(
        b,
        Block::ToolResult {
            is_error: false,
            ..
        }
    ) && tokens::block(b) > LARGE_RESULT_TOKENS
}

fn placeholder(b: &Block, names: &std::collections::HashMap<&str, &str>) -> Block {
    let Block::ToolResult {
        tool_use_id,
        is_error,
        ..
    } = b
    else {
        return b.clone();
    };
    Block::ToolResult {
        tool_use_id: tool_use_id.clone(),
        content: ToolResultContent::Text(format!(
            "[elided: {} result, {} tokens; the call and its success are kept]",
            names.get(tool_use_id.as_str()).unwrap_or(&"tool"),
            tokens::block(b)
        )),
        is_error: *is_error,
    }
}

/// The block with its images (also those inside a tool result) replaced by a one-line note.
fn prune(b: &Block, message: &str, blob_size: &dyn Fn(&str) -> Option<u64>) -> Block {
    let note = b.try_map_images::<std::convert::Infallible>(&mut |img| {
        let Block::Image { media_type, data } = img else {
            return Ok(img.clone());
        };
        let (size, bytes) = match data {
            ImageData::Bytes(bytes) => (tokens::image_size(bytes), Some(bytes.len() as u64)),
            ImageData::Blob { size, hash } => (*size, blob_size(hash)),
        };
        Ok(Block::text(format!(
            "[image removed: {media_type}{}{}, in message {message}]",
            size.map_or(String::new(), |(w, h)| format!(" {w}x{h}")),
            bytes.map_or(String::new(), |n| format!(", {n} bytes"))
        )))
    });
    match note {
        Ok(b) => b,
        Err(never) => match never {},
    }
}

/// The blocks a snapshot sends: an introduction, the pages, and the factsheet of exact strings.
pub fn snapshot_blocks(covered: &[Message], shape: &Shape) -> Result<Vec<Block>, ReclaimError> {
    let r = render::render(&render::sources(covered), &shape_options(shape))?;
    let mut blocks = vec![Block::text(snapshot_intro(covered.len(), r.pages.len()))];
    for p in r.pages {
        blocks.push(Block::Image {
            media_type: "image/png".into(),
            data: ImageData::Bytes(p.png),
        });
    }
    if !r.factsheet.trim().is_empty() {
        blocks.push(Block::text(r.factsheet));
    }
    Ok(blocks)
}

/// Whether a message of the path is a prompt (a user message that is not tool output): it starts a turn.
pub fn is_prompt_head(view: &PathView, i: usize) -> bool {
    let h = &view.heads[i];
    h.role == Role::User && !h.has_tool_result() && !h.is_compaction()
}
