//! `compact --server`: the provider's own compaction (Anthropic's or OpenAI's endpoint; its key needed), kept as a
//! summary marker.

use super::{Command, CommandError, Compacted, Env, policy_for};
use crate::provider::Provider;
use crate::reclaim::{PathView, Strategy};

/// Has the provider compact a conversation.
#[derive(Debug, Clone)]
pub struct ServerCompact {
    pub conversation: String,
    pub how: crate::send::ServerCompaction,
    pub provider: Option<Provider>,
}

impl Command for ServerCompact {
    type Output = Compacted;

    fn run(self, env: Env<'_>) -> Result<Compacted, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let provider = self.provider.ok_or_else(|| {
            CommandError::Invalid(format!(
                "{} needs the provider's key: set {}",
                self.how.name(),
                match self.how {
                    crate::send::ServerCompaction::Anthropic => "ANTHROPIC_API_KEY",
                    crate::send::ServerCompaction::Openai => "OPENAI_API_KEY",
                }
            ))
        })?;
        let view = PathView::load(store, &self.conversation, None)?;
        let policy = policy_for(store, settings, &view, None, None)?;
        let opts = policy.rung_options(policy.target_tokens());
        let applied =
            crate::send::server_compact(store, &view.conversation, &provider, self.how, &opts)?;
        Ok(Compacted::Rung(Strategy::Summary, applied))
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
