//! `append`: one complete turn, written in one transaction or not at all (a refused turn writes nothing).

use super::{Command, CommandError, Env};
use crate::model::NewMessage;

/// Appends a turn at the tip.
#[derive(Debug, Clone)]
pub struct AppendTurn {
    pub conversation: String,
    pub messages: Vec<NewMessage>,
}

impl Command for AppendTurn {
    /// The new messages' ids.
    type Output = Vec<String>;

    fn run(self, env: Env<'_>) -> Result<Vec<String>, CommandError> {
        Ok(env.store.append_turn(&self.conversation, &self.messages)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
