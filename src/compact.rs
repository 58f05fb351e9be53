//! The reclaim ladder: four ways to take context back, cheapest first, none of them destructive.
//!
//! A compaction is a marker message on the path (role system, `meta.cairn.kind = "compaction"`) naming its
//! strategy, what it covers and its parameters. The context sent to a model is assembled from the stored source
//! plus the markers, every time ([`assemble`]): elided tool results become placeholders, pruned images one-line
//! notes, a snapshot's covered middle is re-rendered from the stored source text into pages, a summary's middle
//! becomes its text. Stored messages never change, so every rung can be undone and compared.

use serde::Serialize;
use serde_json::{Value, json};

use crate::context::{self, ELIDE_WORTH_IT, MIN_ELIDE_TOKENS, PROTECT_TOKENS};
use crate::model::{Block, ImageData, Message, NewMessage, Role, ToolResultContent};
use crate::render;
use crate::tokens;

pub const KIND_COMPACTION: &str = "compaction";

/// The rungs, cheapest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    Elide,
    Images,
    Snapshot,
    Summary,
}

impl Strategy {
    pub const LADDER: [Strategy; 4] = [
        Strategy::Elide,
        Strategy::Images,
        Strategy::Snapshot,
        Strategy::Summary,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Elide => "elide",
            Strategy::Images => "images",
            Strategy::Snapshot => "snapshot",
            Strategy::Summary => "summary",
        }
    }

    pub fn from_name(s: &str) -> Option<Strategy> {
        Strategy::LADDER.into_iter().find(|x| x.name() == s)
    }
}

/// One message of an assembled context (what is sent), with where it came from.
#[derive(Debug, Clone)]
pub struct Sent {
    pub role: Role,
    pub content: Vec<Block>,
    /// The stored messages it stands for.
    pub sources: Vec<String>,
}

/// An assembled context and its accounting.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub text_tokens: u64,
    pub image_tokens: u64,
    pub image_bytes: usize,
    pub tool_results_elided: usize,
    pub images_removed: usize,
    pub characters_imaged: usize,
    pub summary_characters: usize,
}

pub struct Assembled {
    pub messages: Vec<Sent>,
    pub tally: Tally,
}

fn cairn_marker(m: &Message) -> Option<&Value> {
    let c = m.meta.get("cairn")?;
    (c.get("kind")?.as_str()? == KIND_COMPACTION && c.get("strategy").is_some()).then_some(c)
}

fn ids_of(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The context a model would be sent for `path`: sources plus the compaction markers on it.
pub fn assemble(path: &[Message], load_blob: &dyn Fn(&str) -> Option<usize>) -> Assembled {
    // Start after the last compaction a harness recorded itself (Claude Code, pi, Codex): the model saw only what
    // followed it.
    let start = path
        .iter()
        .rposition(|m| m.cairn_kind() == Some(KIND_COMPACTION) && cairn_marker(m).is_none())
        .map_or(0, |k| k + 1);
    let path = &path[start..];
    let mut elided: std::collections::HashSet<String> = Default::default();
    let mut pruned: std::collections::HashSet<String> = Default::default();
    // the newest covering marker (snapshot or summary) wins: a second snapshot covers the whole middle again
    let mut cover: Option<(String, String, Strategy, Value)> = None;
    for m in path {
        if let Some(c) = cairn_marker(m) {
            match c
                .get("strategy")
                .and_then(Value::as_str)
                .and_then(Strategy::from_name)
            {
                Some(Strategy::Elide) => elided.extend(ids_of(c.get("elided"))),
                Some(Strategy::Images) => pruned.extend(ids_of(c.get("pruned"))),
                Some(s @ (Strategy::Snapshot | Strategy::Summary)) => {
                    let from = c
                        .get("from")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let to = c
                        .get("to")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    cover = Some((from, to, s, c.clone()));
                }
                None => {}
            }
        }
    }
    let mut tally = Tally::default();
    let mut out: Vec<Sent> = Vec::new();
    let names: std::collections::HashMap<&str, &str> = path
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut i = 0;
    while i < path.len() {
        let m = &path[i];
        if cairn_marker(m).is_some() {
            i += 1;
            continue;
        }
        if let Some((from, to, strategy, c)) = &cover
            && &m.id == from
        {
            let end = path[i..]
                .iter()
                .position(|x| &x.id == to)
                .map_or(path.len(), |k| i + k + 1);
            let covered: Vec<&Message> = path[i..end]
                .iter()
                .filter(|x| cairn_marker(x).is_none())
                .collect();
            let sources: Vec<String> = covered.iter().map(|x| x.id.clone()).collect();
            let content = match strategy {
                Strategy::Snapshot => {
                    let owned: Vec<Message> = covered.iter().map(|x| (*x).clone()).collect();
                    let profile = c
                        .get("profile")
                        .and_then(Value::as_str)
                        .and_then(render::profile::by_name)
                        .unwrap_or(&render::PROFILES[0]);
                    snapshot_blocks(&owned, profile, &mut tally)
                }
                _ => {
                    let text = c.get("summary").and_then(Value::as_str).unwrap_or_default();
                    tally.summary_characters += text.chars().count();
                    vec![Block::text(format!(
                        "[Summary of the earlier conversation]\n{text}"
                    ))]
                }
            };
            for b in &content {
                if !matches!(b, Block::Image { .. }) {
                    tally.text_tokens += tokens::block(b);
                }
            }
            tally.text_tokens += tokens::MESSAGE_OVERHEAD;
            out.push(Sent {
                role: Role::User,
                content,
                sources,
            });
            i = end;
            continue;
        }
        let content: Vec<Block> = m
            .content
            .iter()
            .map(|b| match b {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } if elided.contains(tool_use_id) => {
                    tally.tool_results_elided += 1;
                    let size = tokens::block(b);
                    Block::ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        content: ToolResultContent::Text(format!(
                            "[elided: {} result, {size} tokens; the call and its success are kept]",
                            names.get(tool_use_id.as_str()).unwrap_or(&"tool")
                        )),
                        is_error: *is_error,
                    }
                }
                b if pruned.contains(&m.id) => prune_images(b, &m.id, load_blob, &mut tally),
                other => other.clone(),
            })
            .collect();
        for b in &content {
            let images = image_tokens_in(b);
            tally.image_tokens += images;
            tally.text_tokens += tokens::block(b).saturating_sub(images);
            for img in b.images() {
                if let Block::Image { data, .. } = img {
                    tally.image_bytes += match data {
                        ImageData::Bytes(bytes) => bytes.len(),
                        ImageData::Blob { hash, .. } => load_blob(hash).unwrap_or(0),
                    };
                }
            }
        }
        tally.text_tokens += tokens::MESSAGE_OVERHEAD;
        out.push(Sent {
            role: m.role,
            content,
            sources: vec![m.id.clone()],
        });
        i += 1;
    }
    Assembled {
        messages: out,
        tally,
    }
}

/// Tokens of the images in a block (each by its pixel size when known).
fn image_tokens_in(b: &Block) -> u64 {
    b.images().into_iter().map(tokens::block).sum()
}

/// The block with its images (also those inside a tool result) replaced by a one-line note.
fn prune_images(
    b: &Block,
    message: &str,
    load_blob: &dyn Fn(&str) -> Option<usize>,
    tally: &mut Tally,
) -> Block {
    let note = b.try_map_images::<std::convert::Infallible>(&mut |img| {
        let Block::Image { media_type, data } = img else {
            return Ok(img.clone());
        };
        tally.images_removed += 1;
        let bytes = match data {
            ImageData::Bytes(b) => b.len(),
            ImageData::Blob { hash, .. } => load_blob(hash).unwrap_or(0),
        };
        Ok(Block::text(format!(
            "[image removed: {media_type}, {bytes} bytes, in message {message}]"
        )))
    });
    match note {
        Ok(b) => b,
        Err(never) => match never {},
    }
}

fn snapshot_blocks(
    covered: &[Message],
    profile: &'static render::Profile,
    tally: &mut Tally,
) -> Vec<Block> {
    let sources = render::sources(covered);
    let opts = render::Options::new(profile);
    let Ok(r) = render::render(&sources, &opts) else {
        return vec![Block::text("[snapshot could not be rendered]")];
    };
    tally.image_tokens += r.stats.image_tokens;
    tally.image_bytes += r.stats.png_bytes;
    tally.characters_imaged += r.stats.characters;
    let mut blocks = vec![Block::text(format!(
        "[The earlier conversation ({} messages) as {} page(s) of text rendered as images: read them in order. \
         Each message starts with a block mark and its role; the mark after a line is a newline. Exact strings \
         are listed as text after the pages.]",
        covered.len(),
        r.pages.len()
    ))];
    for p in r.pages {
        blocks.push(Block::Image {
            media_type: "image/png".into(),
            data: ImageData::Bytes(p.png),
        });
    }
    if !r.factsheet.trim().is_empty() {
        blocks.push(Block::text(r.factsheet));
    }
    blocks
}

/// A marker to append, with what it is expected to save.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub strategy: Strategy,
    pub marker: Value,
    pub saves: u64,
    pub items: usize,
}

/// The messages a snapshot or a summary covers on `path`: cairn's own markers left out, the head (the first
/// turn) and the protect window kept verbatim. Empty when there is no middle. The planner, the summary call and
/// the explorer's preview all take it from here, so they cover the same messages.
pub fn covered_middle(path: &[Message], protect_tokens: u64) -> Vec<Message> {
    let sources: Vec<Message> = path
        .iter()
        .filter(|m| cairn_marker(m).is_none())
        .cloned()
        .collect();
    let middle = context::snapshot_middle(&sources, protect_tokens);
    sources[middle].to_vec()
}

/// Plans one rung on `path` (already compacted by earlier markers), or None when it has nothing to do.
/// `force` runs elision even when it saves less than the threshold (`/shake`).
pub fn plan(
    path: &[Message],
    strategy: Strategy,
    force: bool,
    summary: Option<&str>,
    protect_tokens: u64,
) -> Option<Plan> {
    let protect = context::protect_start(path, protect_tokens);
    let already: Vec<&Value> = path.iter().filter_map(cairn_marker).collect();
    let done = |key: &str| -> std::collections::HashSet<String> {
        already.iter().flat_map(|c| ids_of(c.get(key))).collect()
    };
    match strategy {
        Strategy::Elide => {
            let elided = done("elided");
            let mut ids = Vec::new();
            let mut saves = 0;
            for m in &path[..protect] {
                for b in &m.content {
                    if let Block::ToolResult {
                        tool_use_id,
                        is_error: false,
                        ..
                    } = b
                    {
                        let t = tokens::block(b);
                        if t > MIN_ELIDE_TOKENS && !elided.contains(tool_use_id) {
                            ids.push(tool_use_id.clone());
                            saves += t - context::PLACEHOLDER_TOKENS;
                        }
                    }
                }
            }
            if ids.is_empty() || (!force && saves < ELIDE_WORTH_IT) {
                return None;
            }
            Some(Plan {
                strategy,
                items: ids.len(),
                saves,
                marker: json!({"kind": KIND_COMPACTION, "strategy": "elide", "elided": ids,
                               "params": {"protect_tokens": protect_tokens, "min_tokens": MIN_ELIDE_TOKENS}}),
            })
        }
        Strategy::Images => {
            let pruned = done("pruned");
            // an image inside an elided tool result is gone already
            let elided = done("elided");
            let mut ids = Vec::new();
            let mut n = 0;
            let mut saves = 0;
            for m in &path[..protect] {
                if pruned.contains(&m.id) {
                    continue;
                }
                // screenshots usually arrive inside tool results
                let images: Vec<&Block> = m
                    .content
                    .iter()
                    .filter(|b| {
                        !matches!(b, Block::ToolResult { tool_use_id, .. } if elided.contains(tool_use_id))
                    })
                    .flat_map(Block::images)
                    .collect();
                if !images.is_empty() {
                    ids.push(m.id.clone());
                    n += images.len();
                    saves += images
                        .iter()
                        .map(|i| tokens::block(i).saturating_sub(context::PLACEHOLDER_TOKENS))
                        .sum::<u64>();
                }
            }
            if ids.is_empty() {
                return None;
            }
            Some(Plan {
                strategy,
                items: n,
                saves,
                marker: json!({"kind": KIND_COMPACTION, "strategy": "images", "pruned": ids,
                               "params": {"protect_tokens": protect_tokens}}),
            })
        }
        Strategy::Snapshot | Strategy::Summary => {
            let covered = covered_middle(path, protect_tokens);
            if covered.is_empty() {
                return None;
            }
            let covered = &covered[..];
            let text: u64 = covered.iter().map(tokens::message).sum();
            let (from, to) = (covered[0].id.clone(), covered[covered.len() - 1].id.clone());
            if strategy == Strategy::Snapshot {
                let r = render::render(
                    &render::sources(covered),
                    &render::Options::new(&render::PROFILES[0]),
                )
                .ok()?;
                Some(Plan {
                    strategy,
                    items: covered.len(),
                    saves: text.saturating_sub(r.stats.image_tokens),
                    marker: json!({"kind": KIND_COMPACTION, "strategy": "snapshot", "from": from, "to": to,
                                   "profile": render::PROFILES[0].name,
                                   "params": {"protect_tokens": protect_tokens, "head": "first turn"}}),
                })
            } else {
                let s = summary?;
                Some(Plan {
                    strategy,
                    items: covered.len(),
                    saves: text.saturating_sub(tokens::text(s)),
                    marker: json!({"kind": KIND_COMPACTION, "strategy": "summary", "from": from, "to": to,
                                   "summary": s, "params": {"protect_tokens": protect_tokens}}),
                })
            }
        }
    }
}

/// The marker message for a plan.
pub fn marker_message(p: &Plan) -> NewMessage {
    let mut m = NewMessage::text(
        Role::System,
        format!(
            "[cairn compaction: {}, {} items, about {} tokens saved]",
            p.strategy.name(),
            p.items,
            p.saves
        ),
    );
    m.meta = json!({ "cairn": p.marker });
    m
}

impl Tally {
    pub fn total(&self) -> u64 {
        self.text_tokens + self.image_tokens
    }
}

/// A stand-in for a marker not yet written (for comparisons).
fn virtual_marker(p: &Plan, n: usize, parent: Option<&Message>) -> Message {
    let nm = marker_message(p);
    Message {
        id: format!("(planned-{n})"),
        parent: parent.map(|m| m.id.clone()),
        conversation: parent.map(|m| m.conversation.clone()).unwrap_or_default(),
        role: nm.role,
        content: nm.content,
        created_at: 0,
        meta: nm.meta,
        usage: None,
        depth: parent.map_or(0, |m| m.depth + 1),
    }
}

/// One row of the comparison: a rung alone, or the ladder.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub strategy: String,
    pub ran: bool,
    pub text_tokens_before: u64,
    pub image_tokens_before: u64,
    pub text_tokens_after: u64,
    pub image_tokens_after: u64,
    pub model_calls: u32,
    pub image_bytes: usize,
    pub lost: Tally,
    /// The prompt cache would still hit through this message after the compaction (None: nothing kept).
    pub cache_kept_through: Option<String>,
    /// Estimated cost of the next request, in US dollars: every token at list price, and with the cache warm
    /// (the kept prefix read at 0.1x, the rest written at 1.25x).
    pub cost_list: f64,
    pub cost_warm_cache: f64,
    pub reaches_budget: bool,
}

/// Input price per million tokens (Claude Opus-class list price) and the cache multipliers.
pub const PRICE_PER_MTOK: f64 = 5.0;
pub const CACHE_READ: f64 = 0.1;
pub const CACHE_WRITE: f64 = 1.25;

fn first_changed(before: &Assembled, after: &Assembled) -> usize {
    before
        .messages
        .iter()
        .zip(&after.messages)
        .position(|(a, b)| a.sources != b.sources || a.content != b.content)
        .unwrap_or(before.messages.len().min(after.messages.len()))
}

fn row(
    name: &str,
    before: &Assembled,
    after: &Assembled,
    calls: u32,
    ran: bool,
    budget: u64,
) -> Row {
    let keep = first_changed(before, after);
    let kept_tokens: u64 = after.messages[..keep]
        .iter()
        .map(|s| s.content.iter().map(tokens::block).sum::<u64>() + tokens::MESSAGE_OVERHEAD)
        .sum();
    let total = after.tally.total();
    let rest = total.saturating_sub(kept_tokens);
    Row {
        strategy: name.to_string(),
        ran,
        text_tokens_before: before.tally.text_tokens,
        image_tokens_before: before.tally.image_tokens,
        text_tokens_after: after.tally.text_tokens,
        image_tokens_after: after.tally.image_tokens,
        model_calls: calls,
        image_bytes: after.tally.image_bytes,
        lost: after.tally.clone(),
        cache_kept_through: keep
            .checked_sub(1)
            .and_then(|k| after.messages[k].sources.last().cloned()),
        cost_list: total as f64 * PRICE_PER_MTOK / 1e6,
        cost_warm_cache: (kept_tokens as f64 * CACHE_READ + rest as f64 * CACHE_WRITE)
            * PRICE_PER_MTOK
            / 1e6,
        reaches_budget: total <= budget,
    }
}

/// The protect window for a budget: the default 40k, or half the budget when that is smaller (a window larger
/// than the budget could never be reached).
pub fn protect_for(budget: u64) -> u64 {
    PROTECT_TOKENS.min(budget / 2)
}

/// Each rung alone, and the ladder (cheapest first until the budget is reached), on the same path; nothing is
/// written. The summary rung is estimated (its text is taken as `SUMMARY_TOKENS` long) since it needs a model.
pub fn compare(
    path: &[Message],
    budget: u64,
    blob_size: &dyn Fn(&str) -> Option<usize>,
) -> Vec<Row> {
    let before = assemble(path, blob_size);
    let names = std::iter::once("none")
        .chain(Strategy::LADDER.iter().map(|s| s.name()))
        .chain(std::iter::once("ladder"));
    names
        .map(|name| {
            let (after, calls, ran) = after_of(path, name, budget, blob_size);
            row(name, &before, &after, calls, ran, budget)
        })
        .collect()
}

/// The context one row of [`compare`] would leave ("none", a rung's name, or "ladder"): what the explorer
/// previews when a row is picked.
pub fn preview(
    path: &[Message],
    strategy: &str,
    budget: u64,
    blob_size: &dyn Fn(&str) -> Option<usize>,
) -> Assembled {
    after_of(path, strategy, budget, blob_size).0
}

/// The assembled context after a row's strategy, its model calls, and whether it had anything to do.
fn after_of(
    path: &[Message],
    name: &str,
    budget: u64,
    blob_size: &dyn Fn(&str) -> Option<usize>,
) -> (Assembled, u32, bool) {
    let protect = protect_for(budget);
    let placeholder_summary = "summary ".repeat((context::SUMMARY_TOKENS as usize) * 4 / 8);
    let summary_for =
        |s: Strategy| (s == Strategy::Summary).then_some(placeholder_summary.as_str());
    if name == "ladder" {
        // rungs in order, each on the result of the last, stopping at the budget
        let mut with = path.to_vec();
        let mut calls = 0;
        let mut ran = false;
        for (n, s) in Strategy::LADDER.into_iter().enumerate() {
            if assemble(&with, blob_size).tally.total() <= budget {
                break;
            }
            if let Some(p) = plan(&with, s, false, summary_for(s), protect) {
                let m = virtual_marker(&p, n, with.last());
                with.push(m);
                calls += u32::from(s == Strategy::Summary);
                ran = true;
            }
        }
        return (assemble(&with, blob_size), calls, ran);
    }
    let planned = Strategy::from_name(name)
        .and_then(|s| plan(path, s, true, summary_for(s), protect).map(|p| (s, p)));
    match planned {
        Some((s, p)) => {
            let mut with = path.to_vec();
            with.push(virtual_marker(&p, 0, path.last()));
            (
                assemble(&with, blob_size),
                u32::from(s == Strategy::Summary),
                true,
            )
        }
        None => (assemble(path, blob_size), 0, false),
    }
}

/// A rung that was applied (a marker written).
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub strategy: Strategy,
    pub marker: String,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub items: usize,
}

/// What a ladder run did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub steps: Vec<Applied>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub target: u64,
    pub reached: bool,
    /// Why the ladder stopped short, when it did.
    pub note: Option<String>,
}

fn assembled_total(
    store: &crate::store::Store,
    conv: &str,
) -> Result<u64, crate::store::StoreError> {
    let path = store.active_path(conv)?;
    Ok(assemble(&path, &|h| store.blob(h).ok().map(|b| b.len()))
        .tally
        .total())
}

/// Applies one rung to a conversation (writes its marker at the tip). `force` runs elision below its
/// threshold (`/shake`). Returns None when the rung has nothing to do.
pub fn apply(
    store: &mut crate::store::Store,
    conv: &str,
    strategy: Strategy,
    force: bool,
    summary: Option<&str>,
    protect_tokens: u64,
) -> Result<Option<Applied>, crate::store::StoreError> {
    let path = store.active_path(conv)?;
    let before = assemble(&path, &|h| store.blob(h).ok().map(|b| b.len()))
        .tally
        .total();
    let Some(p) = plan(&path, strategy, force, summary, protect_tokens) else {
        return Ok(None);
    };
    let marker = store.append_marker(conv, marker_message(&p))?;
    let after = assembled_total(store, conv)?;
    Ok(Some(Applied {
        strategy,
        marker,
        tokens_before: before,
        tokens_after: after,
        items: p.items,
    }))
}

/// Runs the free rungs and the snapshot in order until the assembled context fits `target`, one marker per
/// rung that had something to do; never loops. The summary rung needs a model and is not run here: if the
/// target is still out of reach, the outcome says so.
pub fn ladder(
    store: &mut crate::store::Store,
    conv: &str,
    target: u64,
) -> Result<Outcome, crate::store::StoreError> {
    let before = assembled_total(store, conv)?;
    let mut steps = Vec::new();
    let mut now = before;
    for s in [Strategy::Elide, Strategy::Images, Strategy::Snapshot] {
        if now <= target {
            break;
        }
        if let Some(a) = apply(store, conv, s, false, None, protect_for(target))? {
            now = a.tokens_after;
            steps.push(a);
        }
    }
    let reached = now <= target;
    Ok(Outcome {
        note: (!reached).then(|| {
            format!("the free rungs and the snapshot reach {now} tokens, over the target {target}; the summary rung (one model call) is next")
        }),
        steps,
        tokens_before: before,
        tokens_after: now,
        target,
        reached,
    })
}
