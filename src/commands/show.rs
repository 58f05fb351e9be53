//! `show`: a conversation's active path, each message also in the wire shape a provider takes, secrets redacted
//! unless asked not to.

use super::{Command, CommandError, Env};
use crate::model::Message;

/// Reads a conversation's active path.
#[derive(Debug, Clone)]
pub struct ShowPath {
    pub conversation: String,
    pub redact: bool,
}

/// The path, its wire form and how many secrets were redacted.
pub struct ShownPath {
    pub path: Vec<Message>,
    pub wire: Vec<serde_json::Value>,
    pub redacted: usize,
}

impl Command for ShowPath {
    type Output = ShownPath;

    fn run(self, env: Env<'_>) -> Result<ShownPath, CommandError> {
        let store = env.store;
        let mut path = store.active_path(&self.conversation)?;
        let redacted = if self.redact {
            path.iter_mut().map(crate::redact::message).sum()
        } else {
            0
        };
        let mut wire = Vec::with_capacity(path.len());
        for m in &path {
            let mut w = store.to_wire(m)?;
            w["id"] = serde_json::json!(m.id);
            w["parent"] = serde_json::json!(m.parent);
            wire.push(w);
        }
        Ok(ShownPath {
            path,
            wire,
            redacted,
        })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
