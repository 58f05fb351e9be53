//! `new`: an empty conversation.

use super::{Command, CommandError, Env};

/// Creates a conversation.
#[derive(Debug, Clone, Default)]
pub struct NewConversation {
    pub title: Option<String>,
}

impl Command for NewConversation {
    /// Its id.
    type Output = String;

    fn run(self, env: Env<'_>) -> Result<String, CommandError> {
        Ok(env.store.create_conversation(self.title.as_deref())?)
    }
}
