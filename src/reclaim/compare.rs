//! The strategies side by side on one path: nothing, each rung alone, and the ladder (cheapest first until the
//! budget is met), each as the layout it would leave. Nothing is written; the summary rung is estimated with a
//! stand-in of the length a summary is asked for.

use serde::Serialize;

use super::assemble::{ContextLayout, Piece, Tally, layout};
use super::marker::Strategy;
use super::rungs::{RungOptions, plan};
use super::view::{PathView, Placed};
use crate::model::Usage;
use crate::models::Price;

/// One row of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct StrategyRow {
    pub strategy: String,
    pub ran: bool,
    pub text_tokens_before: u64,
    pub image_tokens_before: u64,
    pub text_tokens_after: u64,
    pub image_tokens_after: u64,
    pub model_calls: u32,
    pub image_bytes: u64,
    pub lost: Tally,
    /// The prompt cache would still hit through this message after the compaction (None: nothing kept).
    pub cache_kept_through: Option<String>,
    /// Estimated cost of the next request at the model's prices ([`crate::models::cost`]), in US dollars: every
    /// token as uncached input, and with the cache warm (the kept prefix read from the cache, the rest written
    /// to it). None when the model has no price.
    pub cost_list: Option<f64>,
    pub cost_warm_cache: Option<f64>,
    /// Each later request once the compacted context is cached (all of it read from the cache), in US dollars.
    pub cost_after: Option<f64>,
    /// After how many further replies the strategy has paid for the cache it breaks: its first request writes the
    /// changed part to the cache, each later one reads less than the uncompacted context would. 0: it costs no more
    /// even the first time; None: it never pays (it saves nothing per reply), or the model has no price.
    pub break_even_replies: Option<u64>,
    pub reaches_budget: bool,
}

/// Replies until a strategy pays for itself against leaving the context as it is (see [`StrategyRow::break_even_replies`]):
/// `first` its next request (cache written from the change on), `after` each later one, `stay` each request of the
/// context left as it is (read whole from the cache).
fn break_even(first: Option<f64>, after: Option<f64>, stay: Option<f64>) -> Option<u64> {
    let (first, after, stay) = (first?, after?, stay?);
    let extra = first - stay;
    if extra <= 1e-12 {
        return Some(0);
    }
    let saved = stay - after;
    // (a hair off so that 0.30 / 0.10 is 3, not 4)
    (saved > 1e-12).then(|| (extra / saved - 1e-9).ceil() as u64)
}

/// The rows' names, in order: nothing, each rung, the ladder, then the provider's own context edits (simulated).
pub fn names() -> Vec<&'static str> {
    std::iter::once("none")
        .chain(Strategy::LADDER.iter().map(|s| s.name()))
        .chain(["ladder", "clear-tool-uses", "clear-thinking"])
        .collect()
}

/// How the next request is priced: the model it goes to and the settings' prices over the catalog's.
#[derive(Debug, Clone, Copy)]
pub struct Pricing<'a> {
    pub model: &'a str,
    pub prices: &'a std::collections::BTreeMap<String, Price>,
}

impl Pricing<'_> {
    fn at(&self, u: Usage) -> Option<f64> {
        crate::models::cost(self.model, &u, 0, self.prices)
    }

    /// A request read whole from the cache.
    fn cached(&self, total: u64) -> Option<f64> {
        self.at(Usage {
            cache_read_input_tokens: total,
            ..Usage::default()
        })
    }

    /// (every token uncached, the kept prefix read from the cache and the rest written to it)
    fn costs(&self, total: u64, kept: u64) -> (Option<f64>, Option<f64>) {
        (
            self.at(Usage {
                input_tokens: total,
                ..Usage::default()
            }),
            self.at(Usage {
                cache_read_input_tokens: kept.min(total),
                cache_creation_input_tokens: total.saturating_sub(kept),
                ..Usage::default()
            }),
        )
    }
}

/// Each strategy on `view`, against `budget` tokens, the next request priced for the path's model at the
/// catalog's prices.
pub fn compare(view: &PathView, budget: u64, opts: &RungOptions) -> Vec<StrategyRow> {
    let none = std::collections::BTreeMap::new();
    let pricing = Pricing {
        model: view.model().unwrap_or("unknown"),
        prices: &none,
    };
    compare_priced(view, budget, opts, &pricing)
}

/// Each strategy on `view`, against `budget` tokens, the next request priced by `pricing`.
pub fn compare_priced(
    view: &PathView,
    budget: u64,
    opts: &RungOptions,
    pricing: &Pricing<'_>,
) -> Vec<StrategyRow> {
    let before = layout(view, &[], view.len());
    names()
        .into_iter()
        .map(|name| match name {
            "clear-tool-uses" => {
                let c = super::editing::clear_tool_uses(
                    view,
                    &before,
                    &super::editing::ClearToolUses::default(),
                    &|_| Vec::new(),
                );
                edited_row(view, name, &before, &c, budget, pricing)
            }
            "clear-thinking" => {
                let c = super::editing::clear_thinking(view, &before, 1);
                edited_row(view, name, &before, &c, budget, pricing)
            }
            _ => {
                let (_, after, calls, ran) = after_of(view, name, budget, opts);
                row(view, name, &before, &after, (calls, ran), budget, pricing)
            }
        })
        .collect()
}

/// The layout one row would leave ("none", a rung's name, or "ladder"), with the markers it would write, its model
/// calls and whether it had anything to do.
pub fn after_of(
    view: &PathView,
    name: &str,
    budget: u64,
    opts: &RungOptions,
) -> (Vec<Placed>, ContextLayout, u32, bool) {
    let mut planned: Vec<Placed> = Vec::new();
    let mut now = layout(view, &planned, view.len());
    let mut calls = 0;
    let mut ran = false;
    let rungs: Vec<(Strategy, bool)> = if name == "ladder" {
        Strategy::LADDER.iter().map(|s| (*s, false)).collect()
    } else {
        Strategy::from_name(name)
            .map(|s| vec![(s, true)])
            .unwrap_or_default()
    };
    for (s, force) in rungs {
        if name == "ladder" && now.tally.total() <= budget {
            break;
        }
        if let Some(p) = plan(
            view,
            &planned,
            &now,
            s,
            force,
            opts.protect,
            &opts.shape,
            None,
            opts.range,
        ) {
            planned.push(p.placed);
            now = layout(view, &planned, view.len());
            calls += s.model_calls();
            ran = true;
        }
    }
    (planned, now, calls, ran)
}

/// The id a piece ends with (what a cache prefix through it is named by).
fn last_id(view: &PathView, p: &Piece) -> Option<String> {
    let i = match p {
        Piece::Message { index, .. } | Piece::HarnessSummary { index } => *index,
        Piece::Cover { covered, .. } => *covered.last()?,
    };
    view.heads.get(i).map(|h| h.id.clone())
}

/// A row for a context edit the provider would make: the saving off the context sent now, the cache kept up to
/// the first edited message.
fn edited_row(
    view: &PathView,
    name: &str,
    before: &ContextLayout,
    c: &super::editing::Cleared,
    budget: u64,
    pricing: &Pricing<'_>,
) -> StrategyRow {
    let first = c.messages.first().copied();
    let keep = first
        .and_then(|f| {
            before
                .pieces
                .iter()
                .position(|p| matches!(p, Piece::Message { index, .. } if *index == f))
        })
        .unwrap_or(before.pieces.len());
    let kept_tokens: u64 = before.tokens[..keep].iter().sum();
    let total = before.tally.total().saturating_sub(c.saved);
    let mut lost = before.tally.clone();
    lost.tool_results_elided = if name == "clear-tool-uses" {
        c.items
    } else {
        0
    };
    StrategyRow {
        strategy: name.to_string(),
        ran: !c.messages.is_empty(),
        text_tokens_before: before.tally.text_tokens,
        image_tokens_before: before.tally.image_tokens,
        text_tokens_after: before.tally.text_tokens.saturating_sub(c.saved),
        image_tokens_after: before.tally.image_tokens,
        model_calls: 0,
        image_bytes: before.tally.image_bytes,
        lost,
        cache_kept_through: keep
            .checked_sub(1)
            .and_then(|k| last_id(view, &before.pieces[k])),
        cost_list: pricing.costs(total, kept_tokens).0,
        cost_warm_cache: pricing.costs(total, kept_tokens).1,
        cost_after: pricing.cached(total),
        break_even_replies: break_even(
            pricing.costs(total, kept_tokens).1,
            pricing.cached(total),
            pricing.cached(before.tally.total()),
        ),
        reaches_budget: total <= budget,
    }
}

fn row(
    view: &PathView,
    name: &str,
    before: &ContextLayout,
    after: &ContextLayout,
    (calls, ran): (u32, bool),
    budget: u64,
    pricing: &Pricing<'_>,
) -> StrategyRow {
    let keep = before
        .pieces
        .iter()
        .zip(&after.pieces)
        .position(|(a, b)| a != b)
        .unwrap_or(before.pieces.len().min(after.pieces.len()));
    let kept_tokens: u64 = after.tokens[..keep].iter().sum();
    let total = after.tally.total();
    StrategyRow {
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
            .and_then(|k| last_id(view, &after.pieces[k])),
        cost_list: pricing.costs(total, kept_tokens).0,
        cost_warm_cache: pricing.costs(total, kept_tokens).1,
        cost_after: pricing.cached(total),
        break_even_replies: break_even(
            pricing.costs(total, kept_tokens).1,
            pricing.cached(total),
            pricing.cached(before.tally.total()),
        ),
        reaches_budget: total <= budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_even_counts_the_replies_that_pay_for_the_cache_write() {
        // the first request costs 0.30 more than staying; each later one saves 0.10
        assert_eq!(break_even(Some(1.30), Some(0.90), Some(1.00)), Some(3));
        assert_eq!(break_even(Some(0.95), Some(0.90), Some(1.00)), Some(0));
        // saves nothing per reply: never
        assert_eq!(break_even(Some(1.30), Some(1.00), Some(1.00)), None);
        assert_eq!(break_even(None, Some(0.9), Some(1.0)), None);
    }
}
