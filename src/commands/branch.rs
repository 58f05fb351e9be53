//! `branch`: the tip moved to another message of the tree (nothing is written but the pointer), optionally only
//! if the tip is still where the caller saw it.

use super::{Command, CommandError, Env};

/// Moves a conversation's tip.
#[derive(Debug, Clone)]
pub struct SwitchTip {
    pub conversation: String,
    pub message: String,
    /// Move only if the tip is this message now.
    pub expect: Option<String>,
}

/// Where the tip now is.
pub struct TipMoved {
    pub conversation: String,
    pub tip: String,
}

impl Command for SwitchTip {
    type Output = TipMoved;

    fn run(self, env: Env<'_>) -> Result<TipMoved, CommandError> {
        let conversation = env.store.resolve_conversation(&self.conversation)?;
        let tip = env
            .store
            .branch(&conversation, &self.message, self.expect.as_deref())?;
        Ok(TipMoved { conversation, tip })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
