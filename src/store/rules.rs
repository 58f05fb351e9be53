//! The store's rules on what may be written and where, checked before any write: a turn whole and paired, ending
//! where a conversation may rest; a tip that is a turn boundary; a label a person can type. Turns, checkpoints and
//! resume all ask here, so no writer imports another.

use super::{ConvRow, Result, StoreError, load_message};
use crate::model::{Message, NewMessage, Role};
use crate::pairs;

/// Why a message is not a place where a conversation may rest (for errors).
pub(crate) fn why_mid_turn(m: &Message) -> &'static str {
    if m.is_failed() {
        "its last reply failed"
    } else if m.has_tool_use() {
        "a tool call awaits its result"
    } else if m.has_tool_result() {
        "tool results await the model's reply"
    } else if m.role == Role::User || m.role == Role::Tool {
        "a prompt awaits its reply"
    } else {
        "the turn is incomplete"
    }
}

/// Refuses a turn that cannot be written, before anything is written.
pub fn validate_turn(messages: &[NewMessage]) -> Result<()> {
    let Some(last) = messages.last() else {
        return Err(StoreError::InvalidTurn(
            "a turn needs at least one message".into(),
        ));
    };
    pairs::check(messages, false)?;
    if !last.ends_turn() {
        return Err(StoreError::InvalidTurn(format!(
            "the turn ends with a {} message that awaits an answer; a turn runs through the final assistant reply",
            last.role
        )));
    }
    Ok(())
}

/// The tip, when it is a turn boundary (a conversation with no messages has none); an error naming why not.
pub(crate) fn require_boundary(
    tx: &rusqlite::Connection,
    conv: &ConvRow,
) -> Result<Option<Message>> {
    match conv.tip {
        None => Ok(None),
        Some(seq) => {
            let tip = load_message(tx, conv, seq)?;
            if !tip.ends_turn() {
                return Err(StoreError::NotBoundary {
                    conversation: conv.id.clone(),
                    tip: tip.id.clone(),
                    why: why_mid_turn(&tip),
                });
            }
            Ok(Some(tip))
        }
    }
}

/// A checkpoint's label: 1 to 100 characters, no control characters.
pub(crate) fn validate_label(label: &str) -> Result<()> {
    let n = label.chars().count();
    if n == 0 || n > 100 || label.chars().any(char::is_control) {
        return Err(StoreError::BadLabel(label.to_string()));
    }
    Ok(())
}
