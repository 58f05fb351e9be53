//! `/context`: what the model would see on a path, in tokens: system, tool definitions and other overhead the
//! harness does not record (from the calibration), messages by kind, the cached prefix, the estimate against the
//! last measured figure, free space, and what each rung would take back right now. Read-only.

use serde::Serialize;

use super::assemble::{ByKind, ContextLayout, Piece};
use super::marker::Strategy;
use super::policy::Policy;
use super::replay::Estimator;
use super::rungs::plan;
use super::view::{PathView, Resolved};
use super::{ELIDE_WORTH_IT, MIN_ELIDE_TOKENS, SUMMARY_TOKENS};

/// Messages by kind (the JSON names of `cairn context --json`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Messages {
    pub text: u64,
    pub tool_use: u64,
    pub tool_results: u64,
    pub images: u64,
    pub thinking: u64,
    pub other: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rung {
    pub name: &'static str,
    /// Tokens it would take back now.
    pub saves: u64,
    /// What it would touch (tool results elided, images removed, messages imaged or summarised).
    pub items: u64,
    pub model_calls: u32,
    /// Whether it runs at the default settings (elision waits until it saves enough).
    pub would_run: bool,
    pub note: String,
}

/// The compaction a harness recorded that the context starts from.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessCompaction {
    pub message: String,
    pub harness: String,
    /// Messages it kept verbatim.
    pub kept: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextReport {
    pub model: String,
    pub window: u64,
    /// Where the window came from (the settings, the catalog, the harness that ran the conversation, the largest
    /// prompt measured, a default).
    pub window_source: crate::models::Source,
    pub reply_reserve: u64,
    pub system: u64,
    /// Tool definitions and other unrecorded overhead: the estimate less what the messages count.
    pub tools_and_overhead: u64,
    pub messages: Messages,
    /// Messages sent (after every compaction on the path) and stored on it.
    pub messages_sent: usize,
    pub messages_on_path: usize,
    pub harness_compaction: Option<HarnessCompaction>,
    /// From scratch: the session's overhead plus the context, scaled ([`Estimator::estimate`]).
    pub estimated_total: u64,
    /// The next request as `send` predicts it: the last measured prompt plus what came since, scaled
    /// ([`Estimator::predict`]; the estimate where nothing was measured).
    pub predicted_total: u64,
    /// Input + cache tokens the provider measured for the newest reply that carries usage.
    pub last_measured: Option<u64>,
    /// The prompt cache would still hit through this message (the one before the newest measured reply).
    pub cached_through: Option<String>,
    /// The tokens of that prefix: the overhead sent before the messages and the messages through it, at the path's
    /// scale ([`Estimator::prefix`]).
    pub cached_tokens: u64,
    pub free: i64,
    pub rungs: Vec<Rung>,
    pub calibration: Estimator,
}

/// The report for `view` under `policy`, its estimate made by `est`.
pub fn report(view: &PathView, policy: &Policy, est: &Estimator) -> ContextReport {
    // read as the policy's model reads it (what `send` and replay assemble for it)
    let l = super::assemble::layout_for(
        view,
        &[],
        view.len(),
        super::assemble::ModelReader::of(&policy.model),
    );
    let k: &ByKind = &l.tally.by_kind;
    let raw = l.tally.total();
    let parts = super::parts::Parts::of_kinds(k);
    let estimated_total = est.estimate(parts);
    // the next request as `send` predicts it (the one estimator: the last measured prompt plus what came since)
    let predicted_total = est.predict(parts);
    let measured_at = (0..view.len()).rfind(|&i| view.facts[i].measured_input().is_some());
    let last_measured = measured_at.and_then(|i| view.facts[i].measured_input());
    let (cached_through, cached_tokens) = cached_prefix(view, &l, measured_at);
    // what the cache holds is sent as the prompt's start: the overhead and those messages, as the estimate counts
    let cached_tokens = match cached_through {
        Some(_) => est.prefix(cached_tokens).min(predicted_total),
        None => 0,
    };
    let harness_compaction = l.harness.map(|h| HarnessCompaction {
        message: view.heads[h].id.clone(),
        harness: view
            .markers
            .iter()
            .find(|p| p.at == h)
            .and_then(|p| match &p.marker {
                Resolved::Harness { harness, .. } => Some(harness.clone()),
                _ => None,
            })
            .unwrap_or_default(),
        kept: l
            .pieces
            .iter()
            .filter(|p| matches!(p, Piece::Message { index, .. } if *index < h))
            .count(),
    });
    ContextReport {
        model: policy.model.clone(),
        window: policy.window,
        window_source: policy.window_source,
        reply_reserve: policy.reply_reserve,
        system: k.system,
        tools_and_overhead: estimated_total.saturating_sub(raw),
        messages: Messages {
            text: k.text,
            tool_use: k.tool_use,
            tool_results: k.tool_results,
            images: k.images,
            thinking: k.thinking,
            other: k.other,
        },
        messages_sent: l.tally.messages,
        messages_on_path: view.len(),
        harness_compaction,
        estimated_total,
        predicted_total,
        last_measured,
        cached_through,
        cached_tokens,
        free: policy.window as i64 - policy.reply_reserve as i64 - estimated_total as i64,
        rungs: rungs(view, &l, policy),
        calibration: est.clone(),
    }
}

/// The sent prefix before the newest measured reply: what the provider's cache holds.
fn cached_prefix(
    view: &PathView,
    l: &ContextLayout,
    measured_at: Option<usize>,
) -> (Option<String>, u64) {
    let Some(r) = measured_at else {
        return (None, 0);
    };
    let Some(k) = l
        .pieces
        .iter()
        .position(|p| matches!(p, Piece::Message { index, .. } if *index == r))
    else {
        return (None, 0);
    };
    let through = k.checked_sub(1).and_then(|j| match &l.pieces[j] {
        Piece::Message { index, .. } | Piece::HarnessSummary { index } => {
            Some(view.heads[*index].id.clone())
        }
        Piece::Cover { covered, .. } => covered.last().map(|&i| view.heads[i].id.clone()),
    });
    (through, l.tokens[..k].iter().sum())
}

/// What each rung would take back now (each alone, on the path as it stands).
pub fn rungs(view: &PathView, l: &ContextLayout, policy: &Policy) -> Vec<Rung> {
    // the rungs as `compact` runs them: against the policy's target, with its protect window for that target
    let opts = policy.rung_options(policy.target_tokens());
    let (shape, protect) = (opts.shape, opts.protect);
    Strategy::LADDER
        .into_iter()
        .map(|s| {
            let forced = plan(view, &[], l, s, true, protect, &shape, None, None);
            let runs = forced.as_ref().is_some_and(super::rungs::Plan::taken_unasked);
            let (saves, items) = forced.as_ref().map_or((0, 0), |p| (p.saves, p.items));
            Rung {
                name: s.name(),
                saves,
                items,
                model_calls: s.model_calls(),
                would_run: runs,
                note: match s {
                    Strategy::Elide => format!(
                        "successful tool results over {MIN_ELIDE_TOKENS} tokens outside the newest {protect}; runs when it saves {ELIDE_WORTH_IT}"
                    ),
                    Strategy::Images => {
                        "images outside the protect window, each replaced by a one-line note".into()
                    }
                    Strategy::Snapshot => format!(
                        "the middle (after the first turn, before the protect window) as pages ({})",
                        policy.profile.name
                    ),
                    Strategy::Summary => format!(
                        "the same middle summarised in about {SUMMARY_TOKENS} tokens by one model call"
                    ),
                },
            }
        })
        .collect()
}
