//! `compare`: every strategy side by side against a budget (default: the policy's target), each priced by the
//! conversation's model.

use super::{Command, CommandError, Env, policy_for};
use crate::reclaim::compare::{Pricing, StrategyRow, compare_priced};
use crate::reclaim::replay::as_model_counts;
use crate::reclaim::{PathView, Policy};
use crate::render::Profile;

/// Compares the strategies on a conversation.
#[derive(Debug, Clone)]
pub struct CompareStrategies {
    pub conversation: String,
    pub budget: Option<u64>,
    pub profile: Option<&'static Profile>,
}

/// The strategies compared, and what against.
pub struct Comparison {
    pub conversation: String,
    pub budget: u64,
    pub policy: Policy,
    pub rows: Vec<StrategyRow>,
}

impl Command for CompareStrategies {
    type Output = Comparison;

    fn run(self, env: Env<'_>) -> Result<Comparison, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let conversation = self.conversation.as_str();
        let (budget, profile) = (self.budget, self.profile);
        let view = PathView::load(store, conversation, None)?;
        let mut policy = policy_for(store, settings, &view, None, None)?;
        let (view, est) = as_model_counts(store, view, &policy.model)?;
        if let Some(p) = profile {
            policy.profile = p;
        }
        let budget = budget.unwrap_or_else(|| policy.target_tokens());
        let prices = super::learned_prices::prices(store, settings)?;
        let pricing = Pricing {
            model: &policy.model,
            prices: &prices,
        };
        let rows = compare_priced(&view, budget, &policy.rung_options(budget), &pricing, &est);
        Ok(Comparison {
            conversation: view.conversation,
            budget,
            policy,
            rows,
        })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
