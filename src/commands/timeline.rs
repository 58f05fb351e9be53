//! `context --over-time` (the Timeline view): each reply's prompt as measured and as the one estimator makes it,
//! the policy's lines, the compactions, and where each request missed the prompt cache.

use super::{Command, CommandError, Env, policy_for};
use crate::reclaim::timeline::Timeline;

/// The context of a conversation over time.
#[derive(Debug, Clone)]
pub struct TimelineOf {
    pub conversation: String,
    /// The model the policy is drawn for (the path's own when None).
    pub model: Option<String>,
}

impl Command for TimelineOf {
    type Output = Timeline;

    /// The context over time: each reply's prompt as measured and as estimated, the policy's lines, and where each
    /// request missed the prompt cache.
    fn run(self, env: Env<'_>) -> Result<Timeline, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let conversation = self.conversation.as_str();
        let model = self.model.as_deref();
        let view = crate::reclaim::PathView::load(store, conversation, None)?;
        let policy = policy_for(store, settings, &view, model, None)?;
        let fits = crate::reclaim::replay::stored_fits(store)?;
        let prices = super::learned_prices::prices(store, settings)?;
        // each reply's cache miss is read from the loaded path alone: drawn on a second core while this one
        // estimates
        let (t, cache) = std::thread::scope(|s| {
            let cache = s.spawn(|| {
                crate::cache::on_path(
                    &view.conversation,
                    &view.heads,
                    &view.facts,
                    &view.branches,
                    &prices,
                )
            });
            let t = crate::reclaim::timeline::timeline(Some(store), &view, &policy, &fits);
            (
                t,
                cache
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            )
        });
        let mut t = t?;
        let misses: std::collections::HashMap<&str, &crate::cache::ReplyCache> = cache
            .replies
            .iter()
            .filter(|r| r.cause.is_some())
            .map(|r| (r.message.as_str(), r))
            .collect();
        for p in &mut t.points {
            if let Some(r) = misses.get(p.message.as_str()) {
                p.cache_miss = r.cause;
                p.cache_lost = r.cost.zip(r.cost_if_hit).map(|(a, b)| a - b);
            }
        }
        Ok(t)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }

    fn doing(&self) -> String {
        "estimating the context at each reply".into()
    }
}
