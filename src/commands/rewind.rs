//! `rewind`: the tip moved back to a checkpoint, with a digest of what the abandoned path found kept beside it.

use super::{Command, CommandError, Env};

/// Rewinds a conversation to a checkpoint.
#[derive(Debug, Clone)]
pub struct RewindTo {
    pub conversation: String,
    pub label: String,
    /// What the abandoned path found, in a few words.
    pub digest: String,
}

impl Command for RewindTo {
    /// The digest kept.
    type Output = String;

    fn run(self, env: Env<'_>) -> Result<String, CommandError> {
        Ok(env
            .store
            .rewind(&self.conversation, &self.label, &self.digest)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
