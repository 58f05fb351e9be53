//! `stats`: usage and cost across sessions, grouped, each reply priced by its model at its date; with `cache`, the
//! prompt cache's misses beside each row.

use super::{Command, CommandError, Env};
use crate::stats::Stats;
use crate::store::By;

/// Usage statistics.
#[derive(Debug, Clone)]
pub struct UsageStats {
    pub by: By,
    /// Only replies from this time on (Unix seconds).
    pub since: Option<i64>,
    /// With the prompt cache's misses and what they cost.
    pub cache: bool,
}

impl Command for UsageStats {
    type Output = Stats;

    fn run(self, env: Env<'_>) -> Result<Stats, CommandError> {
        let prices = &super::learned_prices::prices(env.store, env.settings)?;
        Ok(if self.cache {
            crate::stats::with_cache(env.store, self.by, self.since, prices)?
        } else {
            crate::stats::stats(env.store, self.by, self.since, prices)?
        })
    }

    fn doing(&self) -> String {
        "adding up usage".into()
    }
}
