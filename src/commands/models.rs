//! `models`: every model the store has seen, as the catalog, the settings and what providers measured describe it.

use super::{Command, CommandError, Env};
use crate::models::{Listing, Seen};

/// Lists the models the store has seen.
#[derive(Debug, Clone, Copy)]
pub struct ListModels;

impl Command for ListModels {
    /// Each model with its catalog entry, window, tokenizer, fitted scale and prices, and where each came from.
    type Output = Vec<Listing>;

    fn run(self, env: Env<'_>) -> Result<Vec<Listing>, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let seen: Vec<Seen> = store
            .models_seen()?
            .into_iter()
            .map(|m| Seen {
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
        Ok(crate::models::listing(
            &seen,
            &settings.windows,
            &settings.prices,
            &fitted,
            &store.harness_windows()?,
        ))
    }

    fn doing(&self) -> String {
        "reading the models".into()
    }
}
