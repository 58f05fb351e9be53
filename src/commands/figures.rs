//! Actions that read figures across the store: replay against the providers' measurements and its
//! calibration, usage and cost statistics, the models seen, two paths compared.

use super::{Action, CommandError, Env, Outcome, misrouted};
use crate::reclaim::Settings;
use crate::store::Store;

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    let Env {
        store, settings, ..
    } = env;
    match action {
        A::Replay { conversation } => Ok(Outcome::Replayed(crate::reclaim::replay::replay(
            store,
            conversation.as_deref(),
        )?)),
        A::Calibrate => {
            let (models, skipped) = crate::reclaim::replay::calibrate(store)?;
            Ok(Outcome::Calibrated { models, skipped })
        }
        A::Diff { a, b } => Ok(Outcome::Diffed(Box::new(crate::diff::diff(
            store,
            &a,
            &b,
            &settings.prices,
        )?))),
        A::Models => models(store, settings),
        A::CacheStats { by, since } => Ok(Outcome::Stats(crate::stats::with_cache(
            store,
            by,
            since,
            &settings.prices,
        )?)),
        A::Stats { by, since } => Ok(Outcome::Stats(crate::stats::stats(
            store,
            by,
            since,
            &settings.prices,
        )?)),
        _ => Err(misrouted()),
    }
}

/// The models the store has seen, each with its catalog entry, window, tokenizer, fitted scale and prices.
fn models(store: &Store, settings: &Settings) -> Result<Outcome, CommandError> {
    let seen: Vec<crate::models::Seen> = store
        .models_seen()?
        .into_iter()
        .map(|m| crate::models::Seen {
            model: m.model,
            replies: m.replies,
            measured: m.measured,
            max_prompt: m.max_prompt,
        })
        .collect();
    let fits = crate::reclaim::replay::stored_fits(store)?;
    let fitted = |model: &str| {
        fits.iter()
            .filter(|(k, _)| k.rsplit_once(':').is_some_and(|(_, m)| m == model))
            .max_by_key(|(_, f)| f.samples)
            .map(|(_, f)| f.scale)
    };
    Ok(Outcome::Models(crate::models::listing(
        &seen,
        &settings.windows,
        &settings.prices,
        &fitted,
    )))
}
