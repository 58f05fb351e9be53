//! Tool-call pairing: the one rule that providers enforce on every request and that a careless trim breaks.
//!
//! Under Anthropic's rule each assistant message's `tool_use` blocks are answered, all of them, by `tool_result`
//! blocks in the message right after it, and those results come first in that message. OpenAI-style `tool`
//! messages (one result each) may form a run that answers one assistant message. Turn writes, resume trimming and
//! the property tests all check with this one function.

use std::collections::HashSet;

use crate::model::{Block, Message, NewMessage, Role};

/// Something that has a role and content blocks.
pub trait HasBlocks {
    fn role(&self) -> Role;
    fn blocks(&self) -> &[Block];
}

impl HasBlocks for Message {
    fn role(&self) -> Role {
        self.role
    }
    fn blocks(&self) -> &[Block] {
        &self.content
    }
}

impl HasBlocks for NewMessage {
    fn role(&self) -> Role {
        self.role
    }
    fn blocks(&self) -> &[Block] {
        &self.content
    }
}

/// A broken pair; `index` is the position of the offending message in the checked slice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    #[error("message {index}: tool_use {id} has no tool_result in the message that follows it")]
    UseWithoutResult { index: usize, id: String },
    #[error("message {index}: tool_result {id} has no tool_use in the assistant message before it")]
    ResultWithoutUse { index: usize, id: String },
    #[error(
        "message {index}: tool_result {id} comes after other content (results must come first)"
    )]
    ResultNotFirst { index: usize, id: String },
    #[error(
        "message {index}: tool_use {id} in a {role} message (only assistant messages call tools)"
    )]
    UseOutsideAssistant {
        index: usize,
        id: String,
        role: Role,
    },
    #[error("message {index}: tool_use id {id} appears twice")]
    DuplicateUse { index: usize, id: String },
}

/// Checks that `msgs`, sent as one request, pair every tool call with its result. With `open_end`, tool calls
/// of the last assistant message may still be waiting (a conversation paused mid-turn).
pub fn check<M: HasBlocks>(msgs: &[M], open_end: bool) -> Result<(), PairError> {
    let mut seen_uses: HashSet<&str> = HashSet::new();
    // (index of the assistant message, ids still waiting for a result)
    let mut pending: Option<(usize, Vec<&str>)> = None;
    for (index, m) in msgs.iter().enumerate() {
        let blocks = m.blocks();
        let role = m.role();
        let mut results_done = false;
        for b in blocks {
            match b {
                Block::ToolUse { id, .. } => {
                    if role != Role::Assistant {
                        return Err(PairError::UseOutsideAssistant {
                            index,
                            id: id.clone(),
                            role,
                        });
                    }
                    if !seen_uses.insert(id) {
                        return Err(PairError::DuplicateUse {
                            index,
                            id: id.clone(),
                        });
                    }
                }
                Block::ToolResult { tool_use_id, .. } => {
                    if results_done && role == Role::User {
                        return Err(PairError::ResultNotFirst {
                            index,
                            id: tool_use_id.clone(),
                        });
                    }
                    let waiting = match (&mut pending, role) {
                        (Some((_, ids)), Role::User | Role::Tool) => ids,
                        _ => {
                            return Err(PairError::ResultWithoutUse {
                                index,
                                id: tool_use_id.clone(),
                            });
                        }
                    };
                    match waiting.iter().position(|w| *w == tool_use_id) {
                        Some(p) => {
                            waiting.remove(p);
                        }
                        None => {
                            return Err(PairError::ResultWithoutUse {
                                index,
                                id: tool_use_id.clone(),
                            });
                        }
                    }
                }
                _ => results_done = true,
            }
        }
        // Any message but another tool message of a run closes the previous assistant's calls.
        if let Some((_, ids)) = &pending
            && (role != Role::Tool || ids.is_empty())
        {
            if let Some(first) = ids.first() {
                return Err(PairError::UseWithoutResult {
                    index,
                    id: first.to_string(),
                });
            }
            pending = None;
        }
        if role == Role::Assistant {
            let uses: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, .. } => Some(id.as_str()),
                    _ => None,
                })
                .collect();
            if !uses.is_empty() {
                pending = Some((index, uses));
            }
        }
    }
    match pending {
        Some((index, ids)) if !open_end && !ids.is_empty() => Err(PairError::UseWithoutResult {
            index,
            id: ids[0].to_string(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn use_(id: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "t".into(),
            input: json!({}),
        }
    }
    fn res(id: &str) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: crate::model::ToolResultContent::Text("ok".into()),
            is_error: false,
        }
    }
    fn m(role: Role, content: Vec<Block>) -> NewMessage {
        NewMessage::new(role, content)
    }

    #[test]
    fn parallel_calls_answered_in_one_message_are_valid() {
        let msgs = vec![
            m(Role::User, vec![Block::text("go")]),
            m(Role::Assistant, vec![use_("a"), use_("b")]),
            m(Role::User, vec![res("b"), res("a")]),
            m(Role::Assistant, vec![Block::text("done")]),
        ];
        assert_eq!(check(&msgs, false), Ok(()));
    }

    #[test]
    fn run_of_tool_messages_answers_one_assistant() {
        let msgs = vec![
            m(Role::Assistant, vec![use_("a"), use_("b")]),
            m(Role::Tool, vec![res("a")]),
            m(Role::Tool, vec![res("b")]),
            m(Role::Assistant, vec![Block::text("done")]),
        ];
        assert_eq!(check(&msgs, false), Ok(()));
        let short = &msgs[..2];
        assert!(check(short, false).is_err());
        assert_eq!(check(short, true), Ok(()));
    }

    #[test]
    fn missing_result_orphan_result_and_order_are_refused() {
        let missing = vec![
            m(Role::Assistant, vec![use_("a"), use_("b")]),
            m(Role::User, vec![res("a")]),
        ];
        assert_eq!(
            check(&missing, false),
            Err(PairError::UseWithoutResult {
                index: 1,
                id: "b".into()
            })
        );
        let orphan = vec![m(Role::User, vec![res("x")])];
        assert_eq!(
            check(&orphan, false),
            Err(PairError::ResultWithoutUse {
                index: 0,
                id: "x".into()
            })
        );
        let late = vec![
            m(Role::Assistant, vec![use_("a")]),
            m(Role::User, vec![Block::text("hm"), res("a")]),
        ];
        assert_eq!(
            check(&late, false),
            Err(PairError::ResultNotFirst {
                index: 1,
                id: "a".into()
            })
        );
        let far = vec![
            m(Role::Assistant, vec![use_("a")]),
            m(Role::User, vec![Block::text("wait")]),
            m(Role::User, vec![res("a")]),
        ];
        assert!(check(&far, false).is_err());
        let open = vec![m(Role::Assistant, vec![use_("a")])];
        assert!(check(&open, false).is_err());
        assert_eq!(check(&open, true), Ok(()));
    }
}
