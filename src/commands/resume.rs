//! `resume`: the newest messages that fit a budget, repaired so no tool result is orphaned, secrets redacted
//! unless asked not to, as the request an agent reloads.

use super::{Command, CommandError, Env};
use crate::reclaim::SentMessage;
use crate::store::{Budget, Resumed, Store};

/// Trims a conversation to what fits.
#[derive(Debug, Clone)]
pub struct ResumeTrimmed {
    pub conversation: String,
    pub budget: Budget,
    pub redact: bool,
}

/// What is kept, and the request it makes.
pub struct Resumption {
    pub resumed: Resumed,
    /// The kept messages in Anthropic Messages shape, repaired to be pair-valid.
    pub wire: Vec<serde_json::Value>,
    pub repairs: crate::pairs::Repairs,
    pub redacted: usize,
}

impl Command for ResumeTrimmed {
    type Output = Resumption;

    fn run(self, env: Env<'_>) -> Result<Resumption, CommandError> {
        let store = env.store;
        let resumed = store.resume(&self.conversation, self.budget)?;
        let mut sent: Vec<SentMessage> = resumed.messages.iter().map(SentMessage::of).collect();
        let redacted = if self.redact {
            sent.iter_mut()
                .map(|s| crate::redact::blocks(&mut s.content))
                .sum()
        } else {
            0
        };
        // what an agent reloads must be a request a provider takes: repaired, never truncated further
        let repairs = crate::pairs::repair(&mut sent);
        let wire = sent
            .iter()
            .map(|s| wire_of(store, s))
            .collect::<Result<_, _>>()?;
        Ok(Resumption {
            resumed,
            wire,
            repairs,
            redacted,
        })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}

/// A message in Anthropic Messages shape, images inlined.
fn wire_of(store: &Store, s: &SentMessage) -> Result<serde_json::Value, CommandError> {
    let load = |h: &str| store.blob(h).map_err(|e| e.to_string());
    crate::wire::message_to_wire(s.role, &s.content, &crate::wire::Images::Base64(&load)).map_err(
        |reason| {
            CommandError::Store(crate::store::StoreError::Corrupt {
                id: s.sources.last().cloned().unwrap_or_default(),
                reason,
            })
        },
    )
}
