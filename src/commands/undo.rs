//! `undo`: the last pointer move (branch, rewind, checkpoint, compaction marker) taken back.

use super::{Command, CommandError, Env};
use crate::store::Operation;

/// Undoes a conversation's last operation.
#[derive(Debug, Clone)]
pub struct UndoLast {
    pub conversation: String,
}

impl Command for UndoLast {
    /// The operation undone.
    type Output = Operation;

    fn run(self, env: Env<'_>) -> Result<Operation, CommandError> {
        Ok(env.store.undo(&self.conversation)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
