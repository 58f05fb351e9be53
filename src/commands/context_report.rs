//! `context` (`/context`): what the model would be sent now, by kind, against its window, the one estimator's
//! figure beside what the provider last measured, and what each rung would take back.

use super::{Command, CommandError, Env, policy_for};
use crate::reclaim::PathView;
use crate::reclaim::replay::as_model_counts;
use crate::reclaim::report::{self, ContextReport};

/// The context report of a conversation.
#[derive(Debug, Clone)]
pub struct ContextOf {
    pub conversation: String,
    /// The model it is read for (the path's own when None).
    pub model: Option<String>,
}

impl Command for ContextOf {
    type Output = Box<ContextReport>;

    fn run(self, env: Env<'_>) -> Result<Box<ContextReport>, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let conversation = self.conversation.as_str();
        let model = self.model.as_deref();
        let view = PathView::load(store, conversation, None)?;
        let policy = policy_for(store, settings, &view, model, None)?;
        // counted the way the model counts (OpenAI's models with their public tokenizer; a model whose tokenizer
        // is not public with the one its measurements chose)
        let (view, est) = as_model_counts(store, view, &policy.model)?;
        Ok(Box::new(report::report(&view, &policy, &est)))
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }

    fn doing(&self) -> String {
        "estimating the context".into()
    }
}
