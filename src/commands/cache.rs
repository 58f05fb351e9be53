//! `cache`: the prompt cache reply by reply on a path: hits, misses with their causes, and what the misses cost.

use super::{Command, CommandError, Env};
use crate::cache::CacheReport;

/// The prompt cache of a conversation's path.
#[derive(Debug, Clone)]
pub struct CacheOf {
    pub conversation: String,
    /// The path's end (the tip when None).
    pub at: Option<String>,
}

impl Command for CacheOf {
    type Output = CacheReport;

    fn run(self, env: Env<'_>) -> Result<CacheReport, CommandError> {
        let prices = super::learned_prices::prices(env.store, env.settings)?;
        Ok(crate::cache::cache(
            env.store,
            &self.conversation,
            self.at.as_deref(),
            &prices,
        )?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
