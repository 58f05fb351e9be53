//! `list`: the store's conversations.

use super::{Command, CommandError, Env};
use crate::model::Conversation;

/// Lists the conversations.
#[derive(Debug, Clone, Copy)]
pub struct ListConversations;

impl Command for ListConversations {
    type Output = Vec<Conversation>;

    fn run(self, env: Env<'_>) -> Result<Vec<Conversation>, CommandError> {
        Ok(env.store.conversations()?)
    }
}
