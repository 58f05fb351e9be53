//! `replay`: every reply that recorded what its provider measured, against the context cairn assembles for the
//! messages before it: the estimate from scratch, the prediction of the next request, and the first prompt after
//! each harness compaction.

use super::{Command, CommandError, Env};
use crate::reclaim::replay::Replay;

/// Replays one conversation, or every one.
#[derive(Debug, Clone, Default)]
pub struct ReplayMeasured {
    pub conversation: Option<String>,
}

impl Command for ReplayMeasured {
    type Output = Replay;

    fn run(self, env: Env<'_>) -> Result<Replay, CommandError> {
        Ok(crate::reclaim::replay::replay(
            env.store,
            self.conversation.as_deref(),
        )?)
    }

    fn conversation(&self) -> Option<&str> {
        self.conversation.as_deref()
    }
}
