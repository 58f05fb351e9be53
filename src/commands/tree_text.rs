//! `tree`: a conversation's tree as indented text (tips, forks and checkpoints marked).

use super::{Command, CommandError, Env};

/// Draws a conversation's tree as text.
#[derive(Debug, Clone)]
pub struct TreeText {
    pub conversation: String,
}

impl Command for TreeText {
    type Output = String;

    fn run(self, env: Env<'_>) -> Result<String, CommandError> {
        Ok(env.store.tree_text(&self.conversation)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
