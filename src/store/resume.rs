//! Resume and retry: what a harness needs to pick a conversation back up.
//!
//! Resume trims the active path to the newest messages that fit a budget, cutting only where no tool call
//! loses its result, and reports the checkpoints the trim dropped. The trimmed window is remembered (as an
//! operation) so that, inside that resumed run, rewinding to a dropped checkpoint is an error, never a jump to
//! a nearby message. Retry tells "nothing loaded", "nothing to retry" and "retryable" apart.

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{Value, json};

use super::paths::{Head, load_messages, path_heads};
use super::tree::active_path_of;
use super::{ConvRow, Result, Store, StoreError, conv_row, move_tip, oplog};
use crate::model::{Checkpoint, Message, Role};
use crate::pairs;

/// How much of the newest history to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Messages(usize),
    /// Estimated input tokens ([`crate::tokens`]).
    Tokens(u64),
}

/// A trimmed context.
#[derive(Debug, Clone)]
pub struct Resumed {
    /// The kept messages, oldest first; pair-valid.
    pub messages: Vec<Message>,
    /// How many older messages of the active path were cut.
    pub trimmed: usize,
    /// Checkpoints whose targets were cut: rewinding to them in this resumed run is an error.
    pub dropped_checkpoints: Vec<Checkpoint>,
    /// Ids of messages at the very end left out because they are a tool call still waiting for its result.
    pub incomplete_tail: Vec<String>,
}

/// What `retry` found.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Retry {
    /// No such conversation, or it has no messages.
    NothingLoaded { reason: String },
    /// The last turn is complete.
    NothingToRetry { tip: String },
    /// The last turn is incomplete or failed. The tip was moved back to `restart_at` (the last turn boundary;
    /// `None`: before the first message), and `prompt` is the user message to send again.
    Retryable {
        failed_tip: String,
        why: String,
        restart_at: Option<String>,
        prompt: Option<Value>,
    },
}

/// The checkpoints dropped by the current resumed window, as (label, message id); `None` if no trimming
/// window is in force.
pub(crate) fn trimmed_window(
    conn: &Connection,
    conv: &ConvRow,
) -> Result<Option<Vec<(String, String)>>> {
    let Some(v) = window_detail(conn, conv)? else {
        return Ok(None);
    };
    let dropped = v
        .get("dropped")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some((
                        p.get(0)?.as_str()?.to_string(),
                        p.get(1)?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(dropped))
}

fn window_detail(conn: &Connection, conv: &ConvRow) -> Result<Option<Value>> {
    let detail: Option<Option<String>> = conn
        .query_row(
            "SELECT detail FROM operations WHERE conversation = ?1 AND kind = 'resume' AND undone = 0
             ORDER BY seq DESC LIMIT 1",
            [conv.seq],
            |r| r.get(0),
        )
        .optional()?;
    Ok(detail.flatten().and_then(|d| serde_json::from_str(&d).ok()))
}

/// Index of the first message to keep and the end (exclusive) of the kept range, decided on heads alone
/// (no body decoded) except for a tail that may be a tool call still waiting for results, which `tail`
/// decodes so the pairs can be checked exactly.
pub(crate) fn trim_range(
    path: &[Head],
    budget: Budget,
    tail: &mut dyn FnMut(&[Head]) -> Result<Vec<Message>>,
) -> Result<(usize, usize)> {
    let mut end = path.len();
    while let Some(k) = path[..end]
        .iter()
        .rposition(|h| h.role == Role::Assistant && h.has_tool_use())
    {
        if pairs::check(&tail(&path[k..end])?, false).is_ok() {
            break;
        }
        end = k;
    }
    let mut start = match budget {
        Budget::Messages(n) => end.saturating_sub(n),
        Budget::Tokens(t) => {
            let mut used = 0u64;
            let mut s = end;
            while s > 0 {
                let cost = path[s - 1].tokens;
                if used + cost > t {
                    break;
                }
                used += cost;
                s -= 1;
            }
            s
        }
    };
    // Never start on tool results whose call was cut away.
    while start < end && (path[start].has_tool_result() || path[start].role == Role::Tool) {
        start += 1;
    }
    Ok((start, end))
}

impl Store {
    /// The newest messages of the active path that fit `budget`, pair-valid, plus the checkpoints the trim
    /// dropped. The trimmed window is remembered for [`Store::rewind`].
    pub fn resume(&mut self, conversation: &str, budget: Budget) -> Result<Resumed> {
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let path = match conv.tip {
            Some(tip) => path_heads(&tx, conv.seq, tip)?,
            None => Vec::new(),
        };
        let (start, end) = trim_range(&path, budget, &mut |hs| load_messages(&tx, &conv, hs))?;
        let cut: std::collections::HashSet<&str> =
            path[..start].iter().map(|m| m.id.as_str()).collect();
        let dropped: Vec<Checkpoint> = {
            let mut stmt = tx.prepare_cached(
                "SELECT c.label, m.id, c.created_at FROM checkpoints c JOIN messages m ON m.seq = c.message
                 WHERE c.conversation = ?1 ORDER BY c.created_at, c.label",
            )?;
            stmt.query_map([conv.seq], |r| {
                Ok(Checkpoint {
                    label: r.get(0)?,
                    message: r.get(1)?,
                    created_at: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter(|c| cut.contains(c.message.as_str()))
            .collect()
        };
        let window = json!({
            "window_start": if start > 0 { path.get(start).map(|m| m.id.clone()) } else { None },
            "dropped": dropped.iter().map(|c| json!([c.label, c.message])).collect::<Vec<_>>(),
        });
        let previous = window_detail(&tx, &conv)?;
        let unchanged = match &previous {
            Some(p) => p == &window,
            None => start == 0,
        };
        if !unchanged {
            oplog::record(&tx, conv.seq, "resume", conv.tip, conv.tip, &window)?;
        }
        let messages = load_messages(&tx, &conv, &path[start..end])?;
        tx.commit()?;
        let incomplete_tail = path[end..].iter().map(|m| m.id.clone()).collect();
        Ok(Resumed {
            messages,
            trimmed: start,
            dropped_checkpoints: dropped,
            incomplete_tail,
        })
    }

    /// Tells apart: nothing loaded, nothing to retry, and a retryable incomplete or failed last turn. In the
    /// last case the tip moves back to the last turn boundary (recorded, undoable) and the prompt to resend is
    /// returned.
    pub fn retry(&mut self, conversation: &str) -> Result<Retry> {
        let tx = self.write_tx()?;
        let conv = match conv_row(&tx, conversation) {
            Ok(c) => c,
            Err(StoreError::UnknownConversation(id)) => {
                return Ok(Retry::NothingLoaded {
                    reason: format!("no conversation {id}"),
                });
            }
            Err(e) => return Err(e),
        };
        let path = active_path_of(&tx, &conv)?;
        let Some(tip) = path.last() else {
            return Ok(Retry::NothingLoaded {
                reason: format!("conversation {} has no messages", conv.id),
            });
        };
        if tip.ends_turn() {
            return Ok(Retry::NothingToRetry {
                tip: tip.id.clone(),
            });
        }
        let why = super::rules::why_mid_turn(tip).to_string();
        let boundary = path[..path.len() - 1].iter().rposition(Message::ends_turn);
        let from = boundary.map_or(0, |b| b + 1);
        let prompt = path[from..]
            .iter()
            .find(|m| m.role == Role::User && !m.has_tool_result());
        let prompt = match prompt {
            Some(p) => Some(super::wire_message(&tx, p)?),
            None => None,
        };
        let restart_seq = match boundary {
            Some(b) => Some(super::message_seq(&tx, &conv, &path[b].id)?.0),
            None => None,
        };
        let failed_tip = tip.id.clone();
        let restart_at = boundary.map(|b| path[b].id.clone());
        move_tip(
            &tx,
            &conv,
            conv.tip,
            restart_seq,
            "retry",
            json!({"failed_tip": failed_tip, "why": why}),
        )?;
        tx.commit()?;
        Ok(Retry::Retryable {
            failed_tip,
            why,
            restart_at,
            prompt,
        })
    }
}
