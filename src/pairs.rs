//! Tool-call pairing: the one rule that providers enforce on every request and that a careless trim breaks.
//!
//! Under Anthropic's rule each assistant message's `tool_use` blocks are answered, all of them, by `tool_result`
//! blocks in the message right after it, and those results come first in that message. OpenAI-style `tool`
//! messages (one result each) may form a run that answers one assistant message. Turn writes, resume trimming and
//! the property tests all check with this one function.

use std::collections::HashSet;

use crate::model::{Block, Message, NewMessage, Role, ToolResultContent};

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

/// A message a repair can rewrite or add.
pub trait Repairable: HasBlocks + Sized {
    fn blocks_mut(&mut self) -> &mut Vec<Block>;
    /// A message cairn adds (a synthetic result, an opening note).
    fn added(role: Role, content: Vec<Block>) -> Self;
}

/// What a repair changed so that a request is one a provider accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Repairs {
    /// Tool calls with no recorded result: each answered by an error result that says so.
    pub unanswered_calls: usize,
    /// Results that answer no call before them: each turned into a user text note.
    pub orphan_results: usize,
    /// Tool call ids used twice: the later call and its result renamed.
    pub renamed_ids: usize,
    /// A request that would start with the assistant: a user note put first.
    pub opening_notes: usize,
}

impl Repairs {
    pub fn total(&self) -> usize {
        self.unanswered_calls + self.orphan_results + self.renamed_ids + self.opening_notes
    }

    /// "2 unanswered calls answered, 1 orphan result made a note", or None when nothing was repaired.
    pub fn describe(&self) -> Option<String> {
        let parts: Vec<String> = [
            (
                self.unanswered_calls,
                "unanswered call(s) given an error result",
            ),
            (self.orphan_results, "orphan result(s) made notes"),
            (self.renamed_ids, "duplicate call id(s) renamed"),
            (
                self.opening_notes,
                "opening note(s) added (requests start with the user)",
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// The text of a synthetic result for a call whose result was never recorded.
pub const NO_RESULT: &str =
    "[no result was recorded for this tool call; the session moved on without it]";

/// Makes `msgs` (one request, system messages anywhere) pair-valid under Anthropic's rule, which OpenAI's also
/// accepts, without dropping anything: an unanswered call gets a synthetic error result, an orphan result becomes
/// a user note, a call id used twice is renamed (with its result), results come first in their message, and the
/// request starts with a user message. Returns what it changed.
/// What an orphan result becomes: a note naming its call, with its text.
fn orphan_note(tool_use_id: &str, content: &ToolResultContent, is_error: bool) -> Block {
    Block::text(format!(
        "[{} of tool call {tool_use_id}, whose call is not in this context]\n{}",
        if is_error { "error result" } else { "result" },
        content.text()
    ))
}

/// A reply's tool results (which answer nothing there) made notes.
fn notes_for_results<M: Repairable>(m: &mut M, r: &mut Repairs) {
    if !m
        .blocks()
        .iter()
        .any(|b| matches!(b, Block::ToolResult { .. }))
    {
        return;
    }
    let blocks = std::mem::take(m.blocks_mut());
    *m.blocks_mut() = blocks.into_iter().map(|b| orphaned(b, r)).collect();
}

/// A tool result that answers no call here made a note (counted); any other block as it is.
fn orphaned(b: Block, r: &mut Repairs) -> Block {
    match b {
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            r.orphan_results += 1;
            orphan_note(&tool_use_id, &content, is_error)
        }
        other => other,
    }
}

/// A user or tool message's blocks taken apart: the results of pending calls (each call answered taken off
/// `pending`), and the rest with orphan results made notes.
fn answers_first<M: Repairable>(
    m: &mut M,
    pending: &mut Vec<String>,
    r: &mut Repairs,
) -> (Vec<Block>, Vec<Block>) {
    let blocks = std::mem::take(m.blocks_mut());
    let (mut results, mut rest): (Vec<Block>, Vec<Block>) = (Vec::new(), Vec::new());
    for b in blocks {
        match b {
            Block::ToolResult {
                ref tool_use_id, ..
            } if pending.contains(tool_use_id) => {
                pending.retain(|p| p != tool_use_id);
                results.push(b);
            }
            other => rest.push(orphaned(other, r)),
        }
    }
    (results, rest)
}

pub fn repair<M: Repairable>(msgs: &mut Vec<M>) -> Repairs {
    let mut r = Repairs::default();
    rename_duplicates(msgs, &mut r);
    let mut out: Vec<M> = Vec::with_capacity(msgs.len() + 2);
    // the calls of the last assistant message still waiting for results
    let mut pending: Vec<String> = Vec::new();
    let answer = |pending: &mut Vec<String>, r: &mut Repairs| -> Vec<Block> {
        r.unanswered_calls += pending.len();
        pending
            .drain(..)
            .map(|id| Block::ToolResult {
                tool_use_id: id,
                content: ToolResultContent::Text(NO_RESULT.into()),
                is_error: true,
            })
            .collect()
    };
    let roles: Vec<Role> = msgs.iter().map(HasBlocks::role).collect();
    for (k, mut m) in std::mem::take(msgs).into_iter().enumerate() {
        let role = m.role();
        if role == Role::System {
            out.push(m);
            continue;
        }
        if role == Role::Assistant {
            if !pending.is_empty() {
                let results = answer(&mut pending, &mut r);
                out.push(M::added(Role::User, results));
            }
            // a result inside a reply answers nothing a provider accepts there: a note in its place
            notes_for_results(&mut m, &mut r);
            pending = m
                .blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, .. } => Some(id.clone()),
                    _ => None,
                })
                .collect();
            out.push(m);
            continue;
        }
        // a user or tool message: results for the pending calls, orphans made notes, results first
        let (mut results, rest) = answers_first(&mut m, &mut pending, &mut r);
        // a run of tool messages answers one assistant message together; anything else closes it
        let run_continues = role == Role::Tool && roles.get(k + 1) == Some(&Role::Tool);
        if !run_continues && !pending.is_empty() {
            results.extend(answer(&mut pending, &mut r));
        }
        results.extend(rest);
        *m.blocks_mut() = results;
        out.push(m);
    }
    if !pending.is_empty() {
        let results = answer(&mut pending, &mut r);
        out.push(M::added(Role::User, results));
    }
    // requests start with the user
    if out
        .iter()
        .find(|m| m.role() != Role::System)
        .is_some_and(|m| m.role() == Role::Assistant)
    {
        let at = out
            .iter()
            .position(|m| m.role() != Role::System)
            .unwrap_or(0);
        out.insert(
            at,
            M::added(
                Role::User,
                vec![Block::text(
                    "[The conversation as sent here starts with the assistant's reply.]",
                )],
            ),
        );
        r.opening_notes += 1;
    }
    *msgs = out;
    r
}

/// Renames the second and later uses of a tool call id (and the first result after each) so every id is unique.
fn rename_duplicates<M: Repairable>(msgs: &mut [M], r: &mut Repairs) {
    let mut seen: HashSet<String> = HashSet::new();
    for k in 0..msgs.len() {
        let mut renamed: Vec<(String, String)> = Vec::new();
        for b in msgs[k].blocks_mut().iter_mut() {
            if let Block::ToolUse { id, .. } = b {
                if seen.contains(id.as_str()) {
                    let mut n = 2;
                    let new = loop {
                        let c = format!("{id}_{n}");
                        if !seen.contains(&c) {
                            break c;
                        }
                        n += 1;
                    };
                    renamed.push((id.clone(), new.clone()));
                    *id = new;
                    r.renamed_ids += 1;
                }
                seen.insert(id.clone());
            }
        }
        for (old, new) in renamed {
            'find: for m in msgs[k + 1..].iter_mut() {
                for b in m.blocks_mut().iter_mut() {
                    if let Block::ToolResult { tool_use_id, .. } = b
                        && *tool_use_id == old
                    {
                        *tool_use_id = new.clone();
                        break 'find;
                    }
                }
            }
        }
    }
}
