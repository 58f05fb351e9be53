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
        // estimates, which keeps of the report only the misses (the rest is let go there too)
        let (t, misses) = std::thread::scope(|s| {
            let misses = s.spawn(|| {
                let report = crate::cache::on_path(
                    &view.conversation,
                    &view.heads,
                    &view.facts,
                    &view.branches,
                    &prices,
                );
                report
                    .replies
                    .into_iter()
                    .filter_map(|r| {
                        let lost = r.cost.zip(r.cost_if_hit).map(|(a, b)| a - b);
                        Some((r.message, (r.cause?, lost)))
                    })
                    .collect::<std::collections::HashMap<String, _>>()
            });
            let t = crate::reclaim::timeline::timeline(Some(store), &view, &policy, &fits);
            (
                t,
                misses
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            )
        });
        let mut t = t?;
        for p in &mut t.points {
            if let Some(&(cause, lost)) = misses.get(p.message.as_str()) {
                p.cache_miss = Some(cause);
                p.cache_lost = lost;
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
