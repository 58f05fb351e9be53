//! The prices a command runs with: the settings file's, and for a model neither it nor the catalog prices, what
//! the harness that ran the model recorded its replies cost (pi, opencode and Cline record each reply's cost,
//! Claude Code 2.1.33x each session's sum per model). A model
//! released after the catalog was written is then priced as its sessions were, and says so (`cairn models`: price
//! from the harness), where it would otherwise be unknown. Every command that shows a cost asks [`prices`] for its
//! prices, so stats, the cache report, compare, the timeline, diff, the exports and legibility price a model one way.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::models::Price;
use crate::reclaim::Settings;
use crate::store::{Store, StoreError};

/// How many of a model's newest replies its price is learned from.
const REPLIES: usize = 2000;

/// The prices a command that shows a cost uses: `settings`' own, and a learned price for each model the store's
/// replies name that neither the settings nor the catalog price, where their harness recorded what they cost
/// ([`crate::models::learn`]). Asked for only by the commands that price (a `list` or an import never pays for it).
pub fn prices<'a>(
    store: &Store,
    settings: &'a Settings,
) -> Result<Cow<'a, BTreeMap<String, Price>>, StoreError> {
    let mut learned = BTreeMap::new();
    for seen in store.models_seen()? {
        if crate::models::model(&seen.model, &settings.prices).priced {
            continue;
        }
        let mut samples: Vec<_> = store
            .measured_replies(&seen.model, REPLIES)?
            .into_iter()
            .filter_map(|(usage, meta)| Some((usage, crate::formats::recorded_cost(&meta)?)))
            .collect();
        // what the sessions of this model cost so far, where their harness recorded it (their own records only)
        samples.extend(
            store
                .kept_records(crate::formats::SESSION_COST_RECORD, &seen.model)?
                .iter()
                .flat_map(crate::formats::recorded_session_costs)
                .filter(|(m, ..)| *m == seen.model)
                .map(|(_, u, c)| (u, c)),
        );
        if let Some(p) = crate::models::learn(&samples) {
            learned.insert(seen.model, p);
        }
    }
    if learned.is_empty() {
        return Ok(Cow::Borrowed(&settings.prices));
    }
    let mut prices = settings.prices.clone();
    // by the name as recorded and by its key (what `cairn models` lists it by)
    for (model, price) in learned {
        prices
            .entry(crate::models::key_or_raw(&model))
            .or_insert(price);
        prices.entry(model).or_insert(price);
    }
    Ok(Cow::Owned(prices))
}
