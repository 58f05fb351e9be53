//! `fork`: root to tip (or to a message) copied with new ids into a new conversation that records its origin.

use super::{Command, CommandError, Env};

/// Forks a conversation.
#[derive(Debug, Clone)]
pub struct ForkPath {
    pub conversation: String,
    /// The message to fork at (the tip when None).
    pub at: Option<String>,
}

impl Command for ForkPath {
    /// The new conversation's id.
    type Output = String;

    fn run(self, env: Env<'_>) -> Result<String, CommandError> {
        Ok(env.store.fork(&self.conversation, self.at.as_deref())?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
