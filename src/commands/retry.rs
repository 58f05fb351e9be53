//! `retry`: whether the last turn can be tried again, told apart from "nothing loaded" and "nothing to retry";
//! when it can, the tip moves back to the last turn boundary.

use super::{Command, CommandError, Env};
use crate::store::Retry;

/// Prepares a retry of a conversation's last turn.
#[derive(Debug, Clone)]
pub struct RetryTurn {
    pub conversation: String,
}

impl Command for RetryTurn {
    type Output = Retry;

    fn run(self, env: Env<'_>) -> Result<Retry, CommandError> {
        Ok(env.store.retry(&self.conversation)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
