//! The context one compared strategy would leave, as it would be sent (the comparison's preview).

use super::{Command, CommandError, Env, policy_for};
use crate::reclaim::assemble::materialize;
use crate::reclaim::compare::{Candidate, after_of};
use crate::reclaim::replay::as_model_counts;
use crate::reclaim::{PathView, SentMessage};

/// Previews a strategy on a conversation.
#[derive(Debug, Clone)]
pub struct PreviewStrategy {
    pub conversation: String,
    pub strategy: Candidate,
    pub budget: Option<u64>,
}

/// The messages the strategy would send.
pub struct StrategyPreview {
    pub conversation: String,
    pub strategy: Candidate,
    pub sent: Vec<SentMessage>,
}

impl Command for PreviewStrategy {
    type Output = StrategyPreview;

    fn run(self, env: Env<'_>) -> Result<StrategyPreview, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let conversation = self.conversation.as_str();
        let (strategy, budget) = (self.strategy, self.budget);
        let view = PathView::load(store, conversation, None)?;
        let policy = policy_for(store, settings, &view, None, None)?;
        let budget = budget.unwrap_or_else(|| policy.target_tokens());
        // the layout the comparison shows for this row: the path counted as its model counts, measured by the
        // one estimator
        let (view, est) = as_model_counts(store, view, &policy.model)?;
        let (_, after, _, _) =
            after_of(&view, strategy, budget, &policy.rung_options(budget), &est);
        let sent = materialize(&view, &after, Some(store))?;
        Ok(StrategyPreview {
            conversation: view.conversation,
            strategy,
            sent,
        })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
