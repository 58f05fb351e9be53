//! `checkpoint`: the tip labelled, to rewind to later; without a label, the next free `cp-N`.

use super::{Command, CommandError, Env};
use crate::model::Checkpoint;

/// Labels a conversation's tip.
#[derive(Debug, Clone)]
pub struct SetCheckpoint {
    pub conversation: String,
    pub label: Option<String>,
}

impl Command for SetCheckpoint {
    type Output = Checkpoint;

    fn run(self, env: Env<'_>) -> Result<Checkpoint, CommandError> {
        let store = env.store;
        let label = match self
            .label
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
        {
            Some(l) => l,
            None => {
                let taken = store.checkpoints(&self.conversation)?;
                (1..)
                    .map(|n| format!("cp-{n}"))
                    .find(|l| !taken.iter().any(|c| &c.label == l))
                    .unwrap_or_else(|| "cp".into())
            }
        };
        Ok(store.checkpoint(&self.conversation, &label)?)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
