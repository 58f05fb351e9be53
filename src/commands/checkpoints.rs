//! `checkpoints`: a conversation's checkpoints (what survived every trim; one whose target did not is dropped).

use super::{Command, CommandError, Env};
use crate::model::Checkpoint;

/// Lists a conversation's checkpoints.
#[derive(Debug, Clone)]
pub struct ListCheckpoints {
    pub conversation: String,
}

impl Command for ListCheckpoints {
    type Output = Vec<Checkpoint>;

    fn run(self, env: Env<'_>) -> Result<Vec<Checkpoint>, CommandError> {
        Ok(env.store.checkpoints(&self.conversation)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
