//! Where two attempts went apart: two tips of one conversation, a fork and its origin, or two runs of the same task.
//! The paths are compared by content (role and text), so a fork's copies (new ids, same bodies) and two unrelated
//! runs that began with the same prompt are told apart the same way: the longest common prefix is what they share,
//! the rest is each side's continuation, aligned message by message (`similar`'s patience diff over the messages'
//! keys), with each side's totals and a text diff where aligned messages differ.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{Block, Message, Role, plain_text};
use crate::store::{Facts, Store, StoreError};

/// One side's figures over its continuation (after the divergence).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Side {
    #[serde(skip)]
    pub conversation: String,
    /// The message the side ends at.
    #[serde(skip)]
    pub tip: Option<String>,
    pub messages: u64,
    pub turns: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    /// Estimated tokens of the continuation's content.
    pub tokens: u64,
    /// At list prices, over replies that recorded usage; None when a model has no price, or when replies recorded
    /// no prompt (then `cost_floor_usd`).
    pub cost_usd: Option<f64>,
    /// Replies that recorded their output and never their prompt ([`crate::model::Usage::unrecorded_prompts`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub unrecorded_prompts: u64,
    /// With unrecorded prompts, what the recorded tokens cost: the side's cost is at least this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_floor_usd: Option<f64>,
    #[serde(skip)]
    pub compactions: u64,
    #[serde(skip)]
    pub tools: BTreeMap<String, u64>,
    /// The continuation's last reply's text.
    #[serde(skip)]
    pub final_reply: Option<String>,
}

impl Side {
    /// "N tokens, $C[, K compactions]": the side's size and cost as both shells print it.
    pub fn cost_line(&self) -> String {
        format!(
            "{} tokens, {}{}",
            self.tokens,
            match (self.cost_usd, self.cost_floor_usd) {
                (Some(c), _) => format!("${c:.2}"),
                (None, Some(f)) => format!(
                    "≥ ${f:.2} ({} replies recorded no prompt)",
                    self.unrecorded_prompts
                ),
                (None, None) => "cost unknown".into(),
            },
            if self.compactions > 0 {
                format!(", {} compactions", self.compactions)
            } else {
                String::new()
            }
        )
    }

    /// The tools called, "name count" each.
    pub fn tool_counts(&self) -> Vec<String> {
        self.tools.iter().map(|(k, v)| format!("{k} {v}")).collect()
    }

    /// The final reply's first non-blank line, at most `chars` characters.
    pub fn final_line(&self, chars: usize) -> Option<String> {
        self.final_reply.as_ref().map(|f| {
            f.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .chars()
                .take(chars)
                .collect()
        })
    }
}

/// Two aligned messages (either may be missing: a message only one side has).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub a: Option<String>,
    pub b: Option<String>,
    pub same: bool,
    /// A unified diff of the two texts, for aligned messages that differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Role and first line of each side (for shells that show the pairs).
    #[serde(skip)]
    pub a_line: Option<String>,
    #[serde(skip)]
    pub b_line: Option<String>,
}

/// The last message both paths share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diverged {
    pub a: Option<String>,
    pub b: Option<String>,
}

/// The comparison (the contract of `cairn diff A B --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub diverged_after: Diverged,
    /// How many messages both share.
    #[serde(skip)]
    pub shared: usize,
    pub a: Side,
    pub b: Side,
    pub pairs: Vec<Pair>,
}

/// A side of a comparison: a conversation's active path, or the path to a message.
fn path_of(store: &Store, id: &str) -> Result<(String, Vec<Message>, Vec<Facts>), StoreError> {
    let (conv, at) = store.locate(id)?;
    let heads = match &at {
        Some(m) => store.path_heads_to(&conv, m)?,
        None => store.active_path_heads(&conv)?,
    };
    let msgs = store.load(&conv, &heads)?;
    let facts = store.facts(&conv, &heads)?;
    Ok((conv, msgs, facts))
}

fn key(m: &Message) -> (&'static str, String) {
    (m.role.as_str(), plain_text(&m.content))
}

fn first_line(m: &Message) -> String {
    let t = plain_text(&m.content);
    let line: String = t
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(100)
        .collect();
    format!("{}: {line}", m.role)
}

fn side(
    conv: &str,
    msgs: &[Message],
    facts: &[Facts],
    prices: &BTreeMap<String, crate::models::Price>,
) -> Side {
    let mut s = Side {
        conversation: conv.to_string(),
        tip: msgs.last().map(|m| m.id.clone()),
        messages: msgs.len() as u64,
        cost_usd: Some(0.0),
        ..Side::default()
    };
    let mut usages: BTreeMap<&str, Vec<crate::model::Usage>> = BTreeMap::new();
    for (m, f) in msgs.iter().zip(facts) {
        s.tool_calls += f.measure.tool_calls;
        s.tool_errors += f.measure.tool_errors;
        s.tokens += f.measure.tokens();
        // a turn starts at a prompt someone typed (not tool results, not a harness's injected preamble)
        if m.role == Role::User
            && m.cairn_kind().is_none()
            && m.content
                .iter()
                .any(|b| matches!(b, Block::Text { text } if !crate::formats::is_preamble(text)))
            && !m
                .content
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
        {
            s.turns += 1;
        }
        if m.cairn_kind() == Some(crate::model::KIND_COMPACTION) {
            s.compactions += 1;
        }
        for b in &m.content {
            if let Block::ToolUse { name, .. } = b {
                *s.tools.entry(name.clone()).or_default() += 1;
            }
        }
        if m.role == Role::Assistant {
            if let Some(u) = f.usage {
                let model = f.model.as_deref().unwrap_or("unknown");
                usages.entry(model).or_default().push(u);
                s.cost_usd = match (
                    s.cost_usd,
                    crate::models::cost(model, &u, f.created_at, prices),
                ) {
                    (Some(c), Some(x)) => Some(c + x),
                    _ => None,
                };
            }
            let text: Vec<&str> = m
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            if !text.is_empty() {
                s.final_reply = Some(text.join("\n"));
            }
        }
    }
    s.unrecorded_prompts = usages
        .values()
        .map(crate::model::Usage::unrecorded_prompts)
        .sum();
    if s.unrecorded_prompts > 0 {
        s.cost_floor_usd = s.cost_usd.take();
    }
    s
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Two aligned messages (or one side's alone).
fn pair(x: Option<&Message>, y: Option<&Message>, same: bool, diff: Option<String>) -> Pair {
    Pair {
        a: x.map(|m| m.id.clone()),
        b: y.map(|m| m.id.clone()),
        same,
        diff,
        a_line: x.map(first_line),
        b_line: y.map(first_line),
    }
}

/// The text diff of two aligned messages of the same role.
fn text_diff(x: Option<&Message>, y: Option<&Message>) -> Option<String> {
    let (x, y) = (x?, y?);
    if x.role != y.role {
        return None;
    }
    let (tx, ty) = (
        format!("{}\n", plain_text(&x.content)),
        format!("{}\n", plain_text(&y.content)),
    );
    Some(
        similar::TextDiff::from_lines(&tx, &ty)
            .unified_diff()
            .context_radius(2)
            .header("a", "b")
            .to_string(),
    )
}

/// Compares `a` and `b` (each a conversation id, or a message id naming the path's end).
pub fn diff(
    store: &Store,
    a: &str,
    b: &str,
    prices: &BTreeMap<String, crate::models::Price>,
) -> Result<Diff, StoreError> {
    let (ca, ma, fa) = path_of(store, a)?;
    let (cb, mb, fb) = path_of(store, b)?;
    let shared = ma
        .iter()
        .zip(&mb)
        .take_while(|(x, y)| key(x) == key(y))
        .count();
    let (ra, rb) = (&ma[shared..], &mb[shared..]);
    let ka: Vec<(&str, String)> = ra.iter().map(key).collect();
    let kb: Vec<(&str, String)> = rb.iter().map(key).collect();
    let mut pairs = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Patience, &ka, &kb) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => pairs.extend((0..len).map(|k| {
                pair(
                    Some(&ra[old_index + k]),
                    Some(&rb[new_index + k]),
                    true,
                    None,
                )
            })),
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => pairs.extend(
                ra[old_index..old_index + old_len]
                    .iter()
                    .map(|x| pair(Some(x), None, false, None)),
            ),
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => pairs.extend(
                rb[new_index..new_index + new_len]
                    .iter()
                    .map(|y| pair(None, Some(y), false, None)),
            ),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => pairs.extend((0..old_len.max(new_len)).map(|k| {
                let x = (k < old_len).then(|| &ra[old_index + k]);
                let y = (k < new_len).then(|| &rb[new_index + k]);
                pair(x, y, false, text_diff(x, y))
            })),
        }
    }
    Ok(Diff {
        diverged_after: Diverged {
            a: shared.checked_sub(1).map(|k| ma[k].id.clone()),
            b: shared.checked_sub(1).map(|k| mb[k].id.clone()),
        },
        shared,
        a: side(&ca, ra, &fa[shared.min(fa.len())..], prices),
        b: side(&cb, rb, &fb[shared.min(fb.len())..], prices),
        pairs,
    })
}
