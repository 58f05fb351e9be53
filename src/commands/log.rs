//! `log`: a conversation's operation log (every tip move, fork, checkpoint and compaction, undone ones marked).

use super::{Command, CommandError, Env};
use crate::store::Operation;

/// Reads a conversation's operation log.
#[derive(Debug, Clone)]
pub struct OperationLog {
    pub conversation: String,
}

impl Command for OperationLog {
    type Output = Vec<Operation>;

    fn run(self, env: Env<'_>) -> Result<Vec<Operation>, CommandError> {
        Ok(env.store.operations(&self.conversation)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
