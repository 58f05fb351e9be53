//! `shake` (`/shake`): the free rungs (elision of old uneventful tool results, image pruning), forced.

use super::{Command, CommandError, Env, policy_for};
use crate::reclaim::rungs::apply;
use crate::reclaim::{Applied, PathView, Strategy};

/// Applies the free rungs.
#[derive(Debug, Clone)]
pub struct Shake {
    pub conversation: String,
    pub elide: bool,
    pub images: bool,
}

impl Command for Shake {
    /// Each rung applied, and what it did (None: nothing to take).
    type Output = Vec<(Strategy, Option<Applied>)>;

    fn run(self, env: Env<'_>) -> Result<Vec<(Strategy, Option<Applied>)>, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let view = PathView::load(store, &self.conversation, None)?;
        let policy = policy_for(store, settings, &view, None, None)?;
        let opts = policy.rung_options(policy.target_tokens());
        let mut done = Vec::new();
        for (s, on) in [
            (Strategy::Elide, self.elide),
            (Strategy::Images, self.images),
        ] {
            if on {
                done.push((s, apply(store, &view.conversation, s, true, None, &opts)?));
            }
        }
        Ok(done)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
