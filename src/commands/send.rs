//! `send`: a prompt sent with the context the one policy leaves (compacting first when the next request, as the one
//! estimator predicts it, would pass the threshold, and again after the provider says "too long"), the reply
//! streamed and the turn written whole.

use super::{Command, CommandError, Env};
use crate::provider::Provider;
use crate::send::SentTurn;

/// Sends a prompt.
#[derive(Debug, Clone)]
pub struct SendPrompt {
    pub conversation: String,
    pub text: String,
    pub provider: Provider,
    /// The window to plan for (the model's when None).
    pub window: Option<u64>,
}

impl Command for SendPrompt {
    type Output = SentTurn;

    fn run(self, env: Env<'_>) -> Result<SentTurn, CommandError> {
        let Env {
            store,
            settings,
            progress,
            cancel,
        } = env;
        let measured = store.max_measured_prompt(&self.provider.model)?;
        let policy = crate::reclaim::Policy::new(
            settings,
            Some(&self.provider.model),
            self.window,
            measured,
        );
        Ok(crate::send::send(
            store,
            &self.conversation,
            &self.text,
            &self.provider,
            &policy,
            &mut |t| progress.text(t),
            cancel,
        )?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
