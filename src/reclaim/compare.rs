//! The strategies side by side on one path: nothing, each rung alone, and the ladder (cheapest first until the
//! budget is met), each as the layout it would leave. Nothing is written; the summary rung is estimated with a
//! stand-in of the length a summary is asked for.

use serde::Serialize;

use super::assemble::{ContextLayout, Piece, Tally, layout};
use super::marker::Strategy;
use super::parts::{Parts, THINKING, TOOL_RESULT};
use super::replay::Estimator;
use super::rungs::{RungOptions, plan};
use super::view::{PathView, Placed};
use crate::model::Usage;
use crate::models::Price;

/// What a row of the comparison does to the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Candidate {
    /// Nothing: the context as it is sent now.
    None,
    /// One rung, forced.
    Rung(Strategy),
    /// The ladder, cheapest first, until the budget is met.
    Ladder,
    /// The provider's own context editing, simulated: old tool uses cleared.
    ClearToolUses,
    /// The provider's own context editing, simulated: the thinking of earlier turns cleared.
    ClearThinking,
}

impl Candidate {
    /// Every row, in order: nothing, each rung, the ladder, then the provider's own context edits.
    pub fn all() -> Vec<Candidate> {
        std::iter::once(Candidate::None)
            .chain(Strategy::LADDER.iter().map(|s| Candidate::Rung(*s)))
            .chain([
                Candidate::Ladder,
                Candidate::ClearToolUses,
                Candidate::ClearThinking,
            ])
            .collect()
    }

    /// Its name: `none`, a rung's name, `ladder`, `clear-tool-uses`, `clear-thinking` (scripts rely on them).
    pub fn name(self) -> &'static str {
        match self {
            Candidate::None => "none",
            Candidate::Rung(s) => s.name(),
            Candidate::Ladder => "ladder",
            Candidate::ClearToolUses => "clear-tool-uses",
            Candidate::ClearThinking => "clear-thinking",
        }
    }

    /// Its name (as [`Candidate::name`]).
    pub fn as_str(&self) -> &'static str {
        self.name()
    }

    /// The rung a compaction runs for it (None for the ladder), if it is one cairn writes as a marker.
    pub fn applies(self) -> Option<Option<Strategy>> {
        match self {
            Candidate::Rung(s) => Some(Some(s)),
            Candidate::Ladder => Some(None),
            Candidate::None | Candidate::ClearToolUses | Candidate::ClearThinking => None,
        }
    }
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Serialize for Candidate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl PartialEq<&str> for Candidate {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// One row of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct StrategyRow {
    pub strategy: Candidate,
    pub ran: bool,
    /// What the context sends before and after, as the one estimator gives it ([`Estimator::sent`]): images apart,
    /// the rest (with the overhead sent beside the messages) as text.
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

/// Each strategy on `view` (counted as its model counts: [`super::replay::as_model_counts`]), against `budget`
/// tokens, each layout's tokens as `est` gives what it sends (the overhead sent beside the messages included), the
/// next request priced by `pricing`.
pub fn compare_priced(
    view: &PathView,
    budget: u64,
    opts: &RungOptions,
    pricing: &Pricing<'_>,
    est: &Estimator,
) -> Vec<StrategyRow> {
    let before = layout(view, &[], view.len());
    Candidate::all()
        .into_iter()
        .map(|name| match name {
            Candidate::ClearToolUses => {
                let c = super::editing::clear_tool_uses(
                    view,
                    (&before, est.sent(&before, &[])),
                    &super::editing::ClearToolUses::default(),
                    &|_| Vec::new(),
                );
                edited_row(view, name, &before, &c, budget, (pricing, est))
            }
            Candidate::ClearThinking => {
                let c = super::editing::clear_thinking(view, &before, 1);
                edited_row(view, name, &before, &c, budget, (pricing, est))
            }
            _ => {
                let (planned, after, calls, ran) = after_of(view, name, budget, opts, est);
                row(
                    view,
                    name,
                    (&before, &after),
                    (calls, ran),
                    budget,
                    (pricing, est),
                    &planned,
                )
            }
        })
        .collect()
}

/// The layout one row would leave (nothing, a rung, the ladder; a provider's edit leaves the context as it is
/// here), with the markers it would write, its model calls and whether it had anything to do. The ladder stops
/// once what the layout sends (`est`) is within the budget, as `compact` does.
pub fn after_of(
    view: &PathView,
    name: Candidate,
    budget: u64,
    opts: &RungOptions,
    est: &Estimator,
) -> (Vec<Placed>, ContextLayout, u32, bool) {
    let mut planned: Vec<Placed> = Vec::new();
    let mut now = layout(view, &planned, view.len());
    let mut calls = 0;
    let mut ran = false;
    let rungs: Vec<(Strategy, bool)> = match name {
        Candidate::Ladder => Strategy::LADDER.iter().map(|s| (*s, false)).collect(),
        Candidate::Rung(s) => vec![(s, true)],
        Candidate::None | Candidate::ClearToolUses | Candidate::ClearThinking => Vec::new(),
    };
    for (s, force) in rungs {
        if name == Candidate::Ladder && est.sent(&now, &planned) <= budget {
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
    name: Candidate,
    before: &ContextLayout,
    c: &super::editing::Cleared,
    budget: u64,
    (pricing, est): (&Pricing<'_>, &Estimator),
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
    let stay = est.sent(before, &[]);
    let kept_tokens = if keep == before.pieces.len() {
        stay
    } else {
        est.prefix(before.tokens[..keep].iter().sum()).min(stay)
    };
    // what the edit takes is of one kind (tool results, or thinking), scaled as that kind
    let mut taken = Parts::default();
    taken.0[if name == Candidate::ClearThinking {
        THINKING
    } else {
        TOOL_RESULT
    }] = c.saved;
    let saved = (taken.scaled(&est.kind_scales).round() as u64).min(stay);
    let total = stay - saved;
    let image = est.images(before);
    let mut lost = before.tally.clone();
    lost.tool_results_elided = if name == Candidate::ClearToolUses {
        c.items
    } else {
        0
    };
    StrategyRow {
        strategy: name,
        ran: !c.messages.is_empty(),
        text_tokens_before: stay.saturating_sub(image),
        image_tokens_before: image,
        text_tokens_after: total.saturating_sub(image),
        image_tokens_after: image,
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
            pricing.cached(stay),
        ),
        reaches_budget: total <= budget,
    }
}

fn row(
    view: &PathView,
    name: Candidate,
    (before, after): (&ContextLayout, &ContextLayout),
    (calls, ran): (u32, bool),
    budget: u64,
    (pricing, est): (&Pricing<'_>, &Estimator),
    planned: &[Placed],
) -> StrategyRow {
    let keep = before
        .pieces
        .iter()
        .zip(&after.pieces)
        .position(|(a, b)| a != b)
        .unwrap_or(before.pieces.len().min(after.pieces.len()));
    let stay = est.sent(before, &[]);
    let total = est.sent(after, planned);
    // the whole context kept is the whole request cached; else the overhead and the pieces before the change
    let kept_tokens = if keep == after.pieces.len() {
        total
    } else {
        est.prefix(after.tokens[..keep].iter().sum()).min(total)
    };
    let (image_before, image_after) = (est.images(before), est.images(after));
    StrategyRow {
        strategy: name,
        ran,
        text_tokens_before: stay.saturating_sub(image_before),
        image_tokens_before: image_before,
        text_tokens_after: total.saturating_sub(image_after),
        image_tokens_after: image_after,
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
            pricing.cached(stay),
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
