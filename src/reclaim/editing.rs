//! Anthropic's context editing, simulated locally so its effect can be weighed against cairn's rungs with no call:
//! `clear_tool_uses_20250919` (past a trigger, the oldest tool results become placeholders, all but the newest
//! `keep` tool uses; excluded tools untouched; nothing unless at least `clear_at_least` tokens go; optionally the
//! calls' inputs too) and `clear_thinking_20251015` (thinking of all but the newest `keep` assistant turns). The
//! server applies these before the prompt reaches the model and the client keeps its history, so the simulation
//! writes nothing either; the cache prefix breaks where the first edit is.

use super::assemble::{ContextLayout, Piece};
use super::view::PathView;
use crate::model::Role;

/// Tokens the placeholder Anthropic's server puts for a cleared tool result takes (not cairn's elision's:
/// [`super::PLACEHOLDER_TOKENS`]).
pub const CLEARED_RESULT_TOKENS: u64 = 10;

/// `clear_tool_uses_20250919`'s settings, with the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ClearToolUses {
    pub trigger: u64,
    pub keep: u64,
    pub clear_at_least: u64,
    pub exclude_tools: Vec<String>,
    pub clear_tool_inputs: bool,
}

impl Default for ClearToolUses {
    fn default() -> Self {
        ClearToolUses {
            trigger: 100_000,
            keep: 3,
            clear_at_least: 0,
            exclude_tools: Vec::new(),
            clear_tool_inputs: false,
        }
    }
}

/// What an edit would take out of the context sent now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cleared {
    /// Path indices of the messages it edits, oldest first.
    pub messages: Vec<usize>,
    /// Tool results (or thinking turns) cleared.
    pub items: u64,
    pub saved: u64,
}

/// The messages of the path sent as themselves, in order.
fn sent(l: &ContextLayout) -> Vec<usize> {
    l.pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Message { index, .. } => Some(*index),
            _ => None,
        })
        .collect()
}

/// Which tool results `clear_tool_uses` would clear on the context `l` leaves, whose request would take `input`
/// tokens (what its trigger is tested against: the whole prompt, system prompt and tools too). `tools(i)`:
/// the tool names the results in message `i` answer (for `exclude_tools`; only asked when there are excluded
/// tools).
pub fn clear_tool_uses(
    view: &PathView,
    (l, input): (&ContextLayout, u64),
    cfg: &ClearToolUses,
    tools: &dyn Fn(usize) -> Vec<String>,
) -> Cleared {
    if input <= cfg.trigger {
        return Cleared::default();
    }
    // messages of results, newest first, with how many results each holds (the calls of the message before)
    let order = sent(l);
    let mut results: Vec<(usize, u64)> = order
        .iter()
        .filter(|&&i| view.heads[i].has_tool_result())
        .map(|&i| {
            let n = i
                .checked_sub(1)
                .map(|p| view.facts[p].measure.tool_calls)
                .unwrap_or(1)
                .max(1);
            (i, n)
        })
        .collect();
    results.reverse();
    let mut kept = 0u64;
    let mut out = Cleared::default();
    for (i, n) in results {
        if kept < cfg.keep {
            kept += n;
            continue;
        }
        if !cfg.exclude_tools.is_empty() && tools(i).iter().any(|t| cfg.exclude_tools.contains(t)) {
            continue;
        }
        let m = &view.facts[i].measure;
        let mut saved = m.tool_result.saturating_sub(n * CLEARED_RESULT_TOKENS);
        if cfg.clear_tool_inputs
            && let Some(p) = i.checked_sub(1)
        {
            saved += view.facts[p].measure.tool_use;
        }
        out.messages.push(i);
        out.items += n;
        out.saved += saved;
    }
    out.messages.reverse();
    if out.saved < cfg.clear_at_least {
        return Cleared::default();
    }
    out
}

/// What `clear_thinking` (keep the newest `keep` turns' thinking) would clear on the context `l` leaves.
pub fn clear_thinking(view: &PathView, l: &ContextLayout, keep: u64) -> Cleared {
    let mut replies: Vec<usize> = sent(l)
        .into_iter()
        .filter(|&i| view.heads[i].role == Role::Assistant && view.facts[i].measure.thinking > 0)
        .collect();
    let keep = keep as usize;
    let cut = replies.len().saturating_sub(keep);
    replies.truncate(cut);
    let saved = replies
        .iter()
        .map(|&i| view.facts[i].measure.thinking)
        .sum();
    Cleared {
        items: replies.len() as u64,
        messages: replies,
        saved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, Message, ToolResultContent};
    use serde_json::json;

    fn msg(i: usize, role: Role, content: Vec<Block>) -> Message {
        Message {
            id: format!("m{i}"),
            parent: i.checked_sub(1).map(|p| format!("m{p}")),
            conversation: "c".into(),
            role,
            content,
            created_at: 0,
            meta: serde_json::Value::Null,
            usage: None,
            depth: i as i64,
        }
    }

    /// A prompt, then `n` turns of one call and its result of `size` characters (tool names cycle Read, Bash).
    fn session(n: usize, size: usize) -> (PathView, Vec<String>) {
        let mut m = vec![msg(0, Role::User, vec![Block::text("go")])];
        let mut names = vec![String::new()];
        for k in 0..n {
            let name = if k % 2 == 0 { "Read" } else { "Bash" };
            let id = format!("t{k}");
            m.push(msg(
                m.len(),
                Role::Assistant,
                vec![Block::ToolUse {
                    id: id.clone(),
                    name: name.into(),
                    input: json!({"x": k}),
                }],
            ));
            names.push(String::new());
            m.push(msg(
                m.len(),
                Role::User,
                vec![Block::ToolResult {
                    tool_use_id: id,
                    content: ToolResultContent::Text("word ".repeat(size / 5)),
                    is_error: false,
                }],
            ));
            names.push(name.into());
        }
        (PathView::from_messages("c", m), names)
    }

    #[test]
    fn the_newest_tool_uses_are_kept_and_the_rest_cleared_past_the_trigger() {
        let (view, _) = session(10, 4000);
        let l = super::super::layout(&view, &[], view.len());
        let l = (&l, l.tally.total());
        let cfg = ClearToolUses {
            trigger: 1_000,
            ..ClearToolUses::default()
        };
        let c = clear_tool_uses(&view, l, &cfg, &|_| Vec::new());
        // ten results, the newest three kept
        assert_eq!(c.items, 7);
        assert_eq!(c.messages, vec![2, 4, 6, 8, 10, 12, 14]);
        assert!(c.saved > 7 * 700, "{c:?}");
        // under the trigger nothing happens
        let quiet = ClearToolUses {
            trigger: 10_000_000,
            ..ClearToolUses::default()
        };
        assert_eq!(
            clear_tool_uses(&view, l, &quiet, &|_| Vec::new()),
            Cleared::default()
        );
        // clear_at_least: an edit that would save less is not made
        let greedy = ClearToolUses {
            trigger: 1_000,
            clear_at_least: 1_000_000,
            ..ClearToolUses::default()
        };
        assert_eq!(
            clear_tool_uses(&view, l, &greedy, &|_| Vec::new()),
            Cleared::default()
        );
    }

    #[test]
    fn excluded_tools_are_untouched_and_inputs_cleared_on_request() {
        let (view, names) = session(10, 4000);
        let l = super::super::layout(&view, &[], view.len());
        let l = (&l, l.tally.total());
        let cfg = ClearToolUses {
            trigger: 1_000,
            exclude_tools: vec!["Bash".into()],
            ..ClearToolUses::default()
        };
        let c = clear_tool_uses(&view, l, &cfg, &|i| vec![names[i].clone()]);
        assert!(c.messages.iter().all(|&i| names[i] == "Read"), "{c:?}");
        let plain = clear_tool_uses(
            &view,
            l,
            &ClearToolUses {
                trigger: 1_000,
                ..Default::default()
            },
            &|_| Vec::new(),
        );
        let inputs = clear_tool_uses(
            &view,
            l,
            &ClearToolUses {
                trigger: 1_000,
                clear_tool_inputs: true,
                ..Default::default()
            },
            &|_| Vec::new(),
        );
        assert!(inputs.saved > plain.saved);
    }

    #[test]
    fn clear_thinking_keeps_the_newest_turns() {
        let mut m = vec![msg(0, Role::User, vec![Block::text("go")])];
        for k in 0..4 {
            m.push(msg(
                m.len(),
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "hmm ".repeat(200),
                        signature: Some("s".into()),
                    },
                    Block::text(format!("reply {k}")),
                ],
            ));
            m.push(msg(m.len(), Role::User, vec![Block::text("more")]));
        }
        let view = PathView::from_messages("c", m);
        let l = super::super::layout(&view, &[], view.len());
        let c = clear_thinking(&view, &l, 1);
        assert_eq!(c.items, 3);
        assert_eq!(c.messages, vec![1, 3, 5]);
        assert!(c.saved > 0);
    }
}
