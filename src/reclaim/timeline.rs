//! The context over time along a path: at each reply, the prompt its provider measured (where the transcript
//! recorded usage) and cairn's estimate of what was sent (the same estimate `/context` gives at the tip, through
//! [`Estimator`]), with the compactions (the harness's and cairn's) that changed it, and the tool calls and errors
//! between replies. It is a long session's overview: where the context blew up and what compaction did.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde::Serialize;

use super::Policy;
use super::replay::{Estimator, Fits, Names, totals_before};
use super::view::PathView;
use crate::model::Role;
use crate::store::{Store, StoreError};
use crate::tokens::Tokenizer;

/// One reply on the path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub message: String,
    /// Its index on the path.
    #[serde(skip)]
    pub index: usize,
    /// The prompt tokens its provider counted (uncached + cache reads + cache writes).
    pub measured: Option<u64>,
    /// cairn's estimate of the context sent for it.
    pub estimated: u64,
    /// A compaction (the harness's or cairn's) came between the previous reply and this one.
    pub compaction: bool,
    /// Tool calls and failed results since the previous reply.
    #[serde(skip)]
    pub tool_calls: u64,
    #[serde(skip)]
    pub tool_errors: u64,
    /// Where its request missed the prompt cache: why, and what it lost ([`crate::cache`], filled by the
    /// command that asks for the timeline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_miss: Option<crate::cache::Cause>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_lost: Option<f64>,
}

/// The chart's data (the contract of `cairn context CONV --over-time --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    pub points: Vec<Point>,
    pub window: u64,
    pub threshold: u64,
}

/// A timeline's totals: replies the provider measured, compactions, failed tool results, prompt-cache misses and
/// what they lost (US dollars, at list prices).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineTotals {
    pub measured: usize,
    pub compactions: usize,
    pub tool_errors: u64,
    pub cache_misses: usize,
    pub cache_lost: f64,
}

impl Timeline {
    pub fn totals(&self) -> TimelineTotals {
        let p = &self.points;
        TimelineTotals {
            measured: p.iter().filter(|p| p.measured.is_some()).count(),
            compactions: p.iter().filter(|p| p.compaction).count(),
            tool_errors: p.iter().map(|p| p.tool_errors).sum(),
            cache_misses: p.iter().filter(|p| p.cache_miss.is_some()).count(),
            cache_lost: p.iter().filter_map(|p| p.cache_lost).sum(),
        }
    }
}

/// The timeline of `view` under `policy`; each reply is estimated the way its own model counts.
pub fn timeline(
    store: Option<&Store>,
    view: &PathView,
    policy: &Policy,
    fits: &Fits,
) -> Result<Timeline, StoreError> {
    // per (reader, tokenizer): the totals before each message; per model: the estimator
    let mut totals: BTreeMap<(bool, Tokenizer), Vec<crate::reclaim::parts::Parts>> =
        BTreeMap::new();
    let mut estimators: BTreeMap<String, Estimator> = BTreeMap::new();
    let mut views: BTreeMap<Tokenizer, PathView> = BTreeMap::new();
    let mut chosen: BTreeMap<String, Tokenizer> = BTreeMap::new();
    let mut points = Vec::new();
    let mut names = Names::default();
    let (mut compaction, mut calls, mut errors) = (false, 0u64, 0u64);
    for i in 0..view.len() {
        let h = &view.heads[i];
        if h.is_compaction() {
            compaction = true;
        }
        let m = &view.facts[i].measure;
        calls += m.tool_calls;
        errors += m.tool_errors;
        if h.role != Role::Assistant {
            continue;
        }
        let (model, reader) = names.of(view.facts[i]
            .model
            .as_deref()
            .unwrap_or(policy.model.as_str()));
        let model: &str = model;
        let tk = match chosen.get(model) {
            Some(tk) => *tk,
            None => {
                let (tk, made) = crate::reclaim::replay::tokenizer_for(fits, store, view, model)?;
                // the path as choosing counted it, kept for the replies counted with it
                if let Some(v) = made {
                    views.entry(tk).or_insert(v);
                }
                chosen.insert(model.to_string(), tk);
                tk
            }
        };
        // the stored measures are cairn's estimate: only another tokenizer needs a recounted copy of the view
        let v: &PathView = if tk == Tokenizer::Estimate {
            view
        } else {
            match views.entry(tk) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(view.retokenized(store, tk)?),
            }
        };
        let t = totals
            .entry((reader.keeps_past_thinking, tk))
            .or_insert_with(|| totals_before(v, reader));
        if !estimators.contains_key(model) {
            let e = Estimator::for_path_with_totals(fits, store, v, (model, tk), t)?;
            estimators.insert(model.to_string(), e);
        }
        let estimated = estimators.get(model).map_or(0, |e| e.estimate(t[i]));
        points.push(Point {
            message: h.id.clone(),
            index: i,
            measured: view.facts[i].measured_input(),
            estimated,
            compaction,
            tool_calls: calls,
            tool_errors: errors,
            cache_miss: None,
            cache_lost: None,
        });
        (compaction, calls, errors) = (false, 0, 0);
    }
    Ok(Timeline {
        points,
        window: policy.window,
        threshold: policy.threshold_tokens(),
    })
}
