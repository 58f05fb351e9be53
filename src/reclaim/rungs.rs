//! The rungs of the reclaim ladder, cheapest first, none of them destructive: each writes a marker and the stored
//! messages never change, so every rung can be undone and compared.
//!
//! - elide: the large successful tool results outside the protect window become placeholders (free);
//! - images: the images outside the protect window become one-line notes (free);
//! - snapshot: the middle (after the first turn, before the protect window) is drawn as pages (free);
//! - summary: the same middle replaced by a summary (one model call, made by [`crate::send::summarize`]).
//!
//! A plan's saving is the difference between the layout without and with its marker: one definition for what a
//! rung takes back, whoever asks.

use serde::Serialize;

use super::assemble::{ContextLayout, Piece, layout};
use super::marker::{Marker, ProviderKept, Ref, Shape, Strategy, marker_meta};
use super::replay::Estimator;
use super::view::{PathView, Placed, VIRTUAL};
use super::{ELIDE_WORTH_IT, ReclaimError, SUMMARY_TOKENS};
use crate::model::{NewMessage, Role};
use crate::store::Store;

/// A marker to write, with what it takes back.
#[derive(Debug, Clone)]
pub struct Plan {
    pub strategy: Strategy,
    pub marker: Marker,
    /// The marker as placed on the path (for layouts with it).
    pub placed: Placed,
    pub saves: u64,
    /// What it touches: results elided, images pruned, messages imaged or summarised.
    pub items: u64,
    /// The protect window it was planned with (recorded in its marker).
    pub protect: u64,
}

/// Where the protect window starts in `seq` (the messages the rungs work on): the newest `protect` tokens.
pub fn protect_start(view: &PathView, seq: &[usize], protect: u64) -> usize {
    let mut used = 0;
    let mut k = seq.len();
    while k > 0 {
        let t = view.facts[seq[k - 1]].measure.tokens();
        if used + t > protect {
            break;
        }
        used += t;
        k -= 1;
    }
    k
}

/// The messages a snapshot or a summary covers: the layout's messages after the first turn and before the protect
/// window, both cut at turn boundaries. The planner, the summary request and the explorer's preview all take it
/// from here.
pub fn covered_middle(view: &PathView, l: &ContextLayout, protect: u64) -> Vec<usize> {
    let seq = &l.seq;
    let ends = |k: usize| view.heads[seq[k]].ends_turn();
    let head_end = (0..seq.len()).find(|&k| ends(k)).map_or(0, |k| k + 1);
    let mut tail = protect_start(view, seq, protect).max(head_end);
    while tail > head_end && tail < seq.len() && !ends(tail - 1) {
        tail += 1;
    }
    let tail = tail.min(seq.len()).max(head_end);
    seq[head_end..tail].to_vec()
}

/// A summary's stand-in text of about [`SUMMARY_TOKENS`], for estimating the rung before it is run.
pub fn placeholder_summary() -> String {
    "summary ".repeat((SUMMARY_TOKENS as usize) / 2)
}

/// Plans one rung on `view` as laid out in `l` (with the `planned` markers already in it), or None when the rung
/// has nothing to do. `force` runs elision even when it saves less than its threshold (`/shake`). A summary plan
/// needs its text (`summary`); without it the stand-in of the usual length is used (a comparison's estimate).
#[allow(clippy::too_many_arguments)]
pub fn plan(
    view: &PathView,
    planned: &[Placed],
    l: &ContextLayout,
    strategy: Strategy,
    force: bool,
    protect: u64,
    shape: &Shape,
    summary: Option<&str>,
    range: Option<(usize, usize)>,
) -> Option<Plan> {
    let within = |i: &usize| range.is_none_or(|(a, b)| (a..=b).contains(i));
    let outside: std::collections::HashSet<usize> = match range {
        // a chosen range replaces the protect window
        Some(_) => l.seq.iter().copied().filter(within).collect(),
        None => l.seq[..protect_start(view, &l.seq, protect)]
            .iter()
            .copied()
            .collect(),
    };
    let (marker, items) = match strategy {
        Strategy::Elide => {
            let mut at = Vec::new();
            let mut items = 0;
            for (i, elided, _) in l.sent_messages() {
                let m = &view.facts[i].measure;
                if !elided && m.large_results > 0 && outside.contains(&i) {
                    at.push(Ref::Depth(i));
                    items += m.large_results;
                }
            }
            (
                Marker::Elide {
                    at,
                    legacy_tool_ids: Vec::new(),
                },
                items,
            )
        }
        Strategy::Images => {
            let mut at = Vec::new();
            let mut items = 0;
            for (i, elided, pruned) in l.sent_messages() {
                let m = &view.facts[i].measure;
                let left = m.images - if elided { m.large_result_images } else { 0 };
                if !pruned && left > 0 && outside.contains(&i) {
                    at.push(Ref::Depth(i));
                    items += left;
                }
            }
            (Marker::Images { at }, items)
        }
        Strategy::Snapshot | Strategy::Summary => {
            let covered: Vec<usize> = match range {
                Some(_) => l.seq.iter().copied().filter(within).collect(),
                None => covered_middle(view, l, protect),
            };
            let (&from, &to) = (covered.first()?, covered.last()?);
            let (from, to) = (Ref::Depth(from), Ref::Depth(to));
            let marker = if strategy == Strategy::Snapshot {
                Marker::Snapshot {
                    from,
                    to,
                    shape: shape.clone(),
                }
            } else {
                Marker::Summary {
                    from,
                    to,
                    summary: summary.map_or_else(placeholder_summary, str::to_string),
                }
            };
            (marker, covered.len() as u64)
        }
    };
    if items == 0 {
        return None;
    }
    let placed = Placed {
        at: VIRTUAL,
        marker: view.resolve(None, view.len(), &marker).ok()??,
    };
    let mut with = planned.to_vec();
    with.push(placed.clone());
    let after = layout(view, &with, view.len()).tally.total();
    let saves = l.tally.total().saturating_sub(after);
    let p = Plan {
        strategy,
        marker,
        placed,
        saves,
        items,
        protect,
    };
    (force || p.taken_unasked()).then_some(p)
}

impl Plan {
    /// Whether the rung runs when not asked for by name: elision only when it saves [`ELIDE_WORTH_IT`], and no
    /// rung that would not make the context smaller (a snapshot redraws the covered messages' stored text, which
    /// can cost more than what elision left of them).
    pub fn taken_unasked(&self) -> bool {
        !(self.strategy == Strategy::Elide && self.saves < ELIDE_WORTH_IT) && self.saves > 0
    }
}

/// The marker message of a plan on `view`.
pub fn marker_message(view: &PathView, p: &Plan, kept: Option<&ProviderKept>) -> NewMessage {
    let mut m = NewMessage::text(
        Role::System,
        format!(
            "[cairn compaction: {}, {} items, about {} tokens saved]",
            p.strategy.name(),
            p.items,
            p.saves
        ),
    );
    let id_at = |d: usize| view.heads.get(d).map(|h| h.id.clone());
    m.meta = marker_meta(&p.marker, &id_at, p.protect, kept);
    m
}

/// A rung that was applied (its marker written).
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub strategy: Strategy,
    pub marker: String,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub items: u64,
}

/// What a ladder run did.
#[derive(Debug, Clone, Serialize)]
pub struct LadderOutcome {
    pub steps: Vec<Applied>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub target: u64,
    pub reached: bool,
    /// Why the ladder stopped short, when it did.
    pub note: Option<String>,
}

/// How a rung is run: the protect window and the snapshot's shape.
#[derive(Debug, Clone)]
pub struct RungOptions {
    pub protect: u64,
    pub shape: Shape,
    /// A partial compaction: only path indices `from..=to` (the protect window does not apply).
    pub range: Option<(usize, usize)>,
    /// The model the context goes to (the policy's): what it is counted and estimated as. None: the path's own.
    pub model: Option<String>,
}

/// Applies one rung to a conversation's active path (writes its marker at the tip). Returns None when the rung
/// has nothing to do. A summary needs its text.
pub fn apply(
    store: &mut Store,
    conversation: &str,
    strategy: Strategy,
    force: bool,
    summary: Option<&str>,
    opts: &RungOptions,
) -> Result<Option<Applied>, ReclaimError> {
    apply_keeping(store, conversation, strategy, force, summary, opts, None)
}

/// [`apply`], keeping what a provider returned that cairn cannot show as text in the marker ([`ProviderKept`]).
pub fn apply_keeping(
    store: &mut Store,
    conversation: &str,
    strategy: Strategy,
    force: bool,
    summary: Option<&str>,
    opts: &RungOptions,
    kept: Option<ProviderKept>,
) -> Result<Option<Applied>, ReclaimError> {
    let (view, est) = counted(store, conversation, opts)?;
    let l = layout(&view, &[], view.len());
    let Some(p) = plan(
        &view,
        &[],
        &l,
        strategy,
        force,
        opts.protect,
        &opts.shape,
        summary,
        opts.range,
    ) else {
        return Ok(None);
    };
    let m = marker_message(&view, &p, kept.as_ref());
    let marker = store.append_marker(&view.conversation, m)?;
    let after = layout(&view, std::slice::from_ref(&p.placed), view.len());
    Ok(Some(Applied {
        strategy,
        marker,
        tokens_before: est.sent(&l, &[]),
        tokens_after: est.sent(&after, std::slice::from_ref(&p.placed)),
        items: p.items,
    }))
}

/// A conversation's active path counted as its model counts, and the one estimator of what a layout of it sends
/// ([`super::replay::as_model_counts`]) for the model `opts` names: the target a ladder aims at is what `send`
/// tests its threshold with.
fn counted(
    store: &Store,
    conversation: &str,
    opts: &RungOptions,
) -> Result<(PathView, Estimator), ReclaimError> {
    let view = PathView::load(store, conversation, None)?;
    let model = match &opts.model {
        Some(m) => m.clone(),
        None => view.model().unwrap_or_default().to_string(),
    };
    Ok(super::replay::as_model_counts(store, view, &model)?)
}

/// Runs the free rungs and the snapshot in order until what the context sends (the one estimator's figure,
/// [`Estimator::sent`]: the overhead beside the messages included, counted as the model counts) fits `target`, one marker per rung
/// that had something to do; never loops. The rungs are planned in memory, each over the context the previous
/// left, and their markers are written in one transaction: a ladder happens whole or not at all. The summary rung
/// needs a model and is not run here: if the target is still out of reach, the outcome says so.
pub fn ladder(
    store: &mut Store,
    conversation: &str,
    target: u64,
    opts: &RungOptions,
) -> Result<LadderOutcome, ReclaimError> {
    let (view, est) = counted(store, conversation, opts)?;
    let mut planned: Vec<Placed> = Vec::new();
    let mut now = layout(&view, &planned, view.len());
    let before = est.sent(&now, &[]);
    let mut total = before;
    let mut plans: Vec<(Plan, u64, u64)> = Vec::new();
    for s in [Strategy::Elide, Strategy::Images, Strategy::Snapshot] {
        if total <= target {
            break;
        }
        if let Some(p) = plan(
            &view,
            &planned,
            &now,
            s,
            false,
            opts.protect,
            &opts.shape,
            None,
            opts.range,
        ) {
            planned.push(p.placed.clone());
            now = layout(&view, &planned, view.len());
            let after = est.sent(&now, &planned);
            plans.push((p, total, after));
            total = after;
        }
    }
    let markers: Vec<_> = plans
        .iter()
        .map(|(p, _, _)| marker_message(&view, p, None))
        .collect();
    let ids = if markers.is_empty() {
        Vec::new()
    } else {
        store.append_markers(&view.conversation, &markers)?
    };
    let steps: Vec<Applied> = plans
        .into_iter()
        .zip(ids)
        .map(|((p, tokens_before, tokens_after), marker)| Applied {
            strategy: p.strategy,
            marker,
            tokens_before,
            tokens_after,
            items: p.items,
        })
        .collect();
    let now = total;
    let reached = now <= target;
    Ok(LadderOutcome {
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

/// Whether a piece is a message sent as itself (for callers that list what a layout sends).
pub fn is_message(p: &Piece) -> bool {
    matches!(p, Piece::Message { .. })
}
