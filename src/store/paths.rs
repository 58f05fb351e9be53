//! Finding paths fast without reading message bodies.
//!
//! A 100k-message conversation holds tens of megabytes of content; a harness that keeps JSONL must parse all of
//! it to learn the active path. cairn keeps each message's place in the tree (parent, depth, role, pairing flags,
//! token estimate, id) in one covering index, so the path is one index scan and a walk in memory, and bodies are
//! decoded only for the messages a caller actually reads (the visible rows, the kept tail of a resume).

use rusqlite::{Connection, params};
use serde_json::Value;

use super::{ConvRow, Result, StoreError, message_id};
use crate::model::{Message, Role, Usage};
use crate::wire;

/// Bits of `messages.flags`, computed when a message is written.
pub(crate) const HAS_TOOL_USE: i64 = 1;
pub(crate) const HAS_TOOL_RESULT: i64 = 2;
pub(crate) const ENDS_TURN: i64 = 4;
/// Bits 3-4: the role (so the tree-shape index needs no role column).
const ROLE_SHIFT: i64 = 3;
/// Bits 5-8 (schema v3): what the explorer marks on a node without decoding its body.
pub(crate) const HAS_ERROR: i64 = 32;
pub(crate) const HAS_IMAGE: i64 = 64;
pub(crate) const IS_COMPACTION: i64 = 128;
pub(crate) const HAS_THINKING: i64 = 256;
/// Bit 9: before this message the harness changed what it sends beside the messages
/// ([`crate::model::CairnMeta::ContextChanged`]).
pub(crate) const CHANGES_CONTEXT: i64 = 512;
/// Bit 10: a reply the harness recorded as failed and leaves out of every request after it, or what answered its
/// calls ([`crate::model::CairnMeta::not_sent_again`]). Rows written before the bit existed do not have it: their
/// failed replies were recorded as sent again.
pub(crate) const FAILED: i64 = 1024;

fn role_code(r: Role) -> i64 {
    match r {
        Role::User => 0,
        Role::Assistant => 1,
        Role::Tool => 2,
        Role::System => 3,
    }
}

/// Whether a message with these flags ends a turn as `stats` counts turns: a reply that ends it, or the result by
/// which a harness's agent finished (OpenHands' `finish`; the only results that end a turn).
pub(crate) fn counts_as_turn(flags: i64) -> bool {
    flags & ENDS_TURN != 0
        && (role_of_flags(flags) == Role::Assistant || flags & HAS_TOOL_RESULT != 0)
}

/// [`counts_as_turn`] over a row's `flags`, in SQL (the roll-ups `stats` sums).
pub(crate) const TURN_SQL: &str =
    "((flags & 4) != 0 AND (((flags >> 3) & 3) = 1 OR (flags & 2) != 0))";

fn role_of_flags(f: i64) -> Role {
    match (f >> ROLE_SHIFT) & 3 {
        0 => Role::User,
        1 => Role::Assistant,
        2 => Role::Tool,
        _ => Role::System,
    }
}

/// One message's place in the tree, without its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub(crate) seq: i64,
    pub(crate) parent_seq: Option<i64>,
    pub id: String,
    pub role: Role,
    pub depth: i64,
    /// Estimated input tokens at write time (its measure's total: [`crate::models::measure`]).
    pub tokens: u64,
    pub(crate) flags: i64,
}

impl Head {
    pub fn has_tool_use(&self) -> bool {
        self.flags & HAS_TOOL_USE != 0
    }
    pub fn has_tool_result(&self) -> bool {
        self.flags & HAS_TOOL_RESULT != 0
    }
    pub fn ends_turn(&self) -> bool {
        self.flags & ENDS_TURN != 0
    }
    /// A tool result marked as an error.
    pub fn has_error(&self) -> bool {
        self.flags & HAS_ERROR != 0
    }
    /// An image, in the message or inside one of its tool results.
    pub fn has_image(&self) -> bool {
        self.flags & HAS_IMAGE != 0
    }
    /// A compaction marker (cairn's or one a harness recorded).
    pub fn is_compaction(&self) -> bool {
        self.flags & IS_COMPACTION != 0
    }
    pub fn has_thinking(&self) -> bool {
        self.flags & HAS_THINKING != 0
    }
    /// Whether the harness changed what it sends beside the messages before this message (Aider's files added
    /// or dropped): the overhead measured before it no longer holds.
    pub fn changes_context(&self) -> bool {
        self.flags & CHANGES_CONTEXT != 0
    }
    /// A reply the harness recorded as failed and left out of every request after it (or what answered its calls):
    /// history, not context.
    pub fn is_failed(&self) -> bool {
        self.flags & FAILED != 0
    }
    /// Index of this head's parent in `heads` (which holds it: a conversation's heads in write order).
    pub fn parent_in(&self, heads: &[Head]) -> Option<usize> {
        let p = self.parent_seq?;
        heads.binary_search_by_key(&p, |h| h.seq).ok()
    }
}

impl Head {
    /// The head of a message held in memory (a path built without a store), `seq` its place among them, `tokens`
    /// its measure's total ([`crate::models::measure`], made once by the caller beside the path's facts).
    pub fn of_message(m: &Message, seq: i64, tokens: u64) -> Head {
        Head {
            seq,
            parent_seq: (seq > 0).then(|| seq - 1),
            id: m.id.clone(),
            role: m.role,
            depth: m.depth,
            tokens,
            flags: flags(m.role, &m.content, &m.meta),
        }
    }
}

pub(crate) fn flags_of(m: &crate::model::NewMessage) -> i64 {
    flags(m.role, &m.content, &m.meta)
}

fn flags(role: Role, content: &[crate::model::Block], meta: &Value) -> i64 {
    use crate::model::Block;
    let mut f = 0;
    if content.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        f |= HAS_TOOL_USE;
    }
    if content
        .iter()
        .any(|b| matches!(b, Block::ToolResult { .. }))
    {
        f |= HAS_TOOL_RESULT;
    }
    if crate::model::ends_turn(role, content, meta) {
        f |= ENDS_TURN;
    }
    for b in content {
        match b {
            Block::ToolResult { is_error: true, .. } => f |= HAS_ERROR,
            Block::Thinking { .. } => f |= HAS_THINKING,
            _ => {}
        }
        if !b.images().is_empty() {
            f |= HAS_IMAGE;
        }
    }
    if crate::model::CairnMeta::kind(meta) == Some(crate::model::KIND_COMPACTION) {
        f |= IS_COMPACTION;
    }
    if crate::model::CairnMeta::context_changed(meta) {
        f |= CHANGES_CONTEXT;
    }
    if crate::model::CairnMeta::not_sent_again(meta) {
        f |= FAILED;
    }
    f | role_code(role) << ROLE_SHIFT
}

/// Every message head of a conversation, in write order (parents before children). One covering-index scan.
pub(crate) fn conversation_heads(conn: &Connection, conv_seq: i64) -> Result<Vec<Head>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, parent, flags, tokens, id FROM messages INDEXED BY messages_tree
         WHERE conversation = ?1 ORDER BY seq",
    )?;
    let mut rows = stmt.query([conv_seq])?;
    let mut out: Vec<Head> = Vec::new();
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let parent_seq: Option<i64> = r.get(1)?;
        let flags: i64 = r.get(2)?;
        // Depth from the parent's (parents come first; in a chain it is the previous row).
        let depth = match parent_seq {
            None => 0,
            Some(p) => {
                let i = match out.last() {
                    Some(last) if last.seq == p => out.len() - 1,
                    _ => out.binary_search_by_key(&p, |h| h.seq).map_err(|_| {
                        StoreError::Corrupt {
                            id: format!("#{seq}"),
                            reason: "parent outside its conversation".into(),
                        }
                    })?,
                };
                out[i].depth + 1
            }
        };
        out.push(Head {
            seq,
            parent_seq,
            depth,
            role: role_of_flags(flags),
            flags,
            tokens: r.get::<_, i64>(3)? as u64,
            id: r.get(4)?,
        });
    }
    Ok(out)
}

/// The heads of the path from the root to `end`, root first.
pub(crate) fn path_heads(conn: &Connection, conv_seq: i64, end: i64) -> Result<Vec<Head>> {
    Ok(branching_path(conn, conv_seq, end)?.heads)
}

/// A path's heads, root first, and where the tree branches along it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathHeads {
    pub heads: Vec<Head>,
    /// `branches[i]`: the path's message `i` has more than one child (an edit or a rewind left another branch
    /// there). Read from the same scan as the heads.
    pub branches: Vec<bool>,
}

/// [`path_heads`], with the branch points read from the same scan of the conversation's heads.
pub(crate) fn branching_path(conn: &Connection, conv_seq: i64, end: i64) -> Result<PathHeads> {
    let all = conversation_heads(conn, conv_seq)?;
    let mut idx = Vec::new();
    let mut cur = Some(end);
    let mut last = all.len();
    while let Some(seq) = cur {
        // `all` is sorted by seq. In a long chain the parent is usually the row just before; otherwise a binary
        // search finds it.
        let i = if last > 0 && all[last - 1].seq == seq {
            last - 1
        } else {
            all.binary_search_by_key(&seq, |h| h.seq)
                .map_err(|_| StoreError::Corrupt {
                    id: format!("#{seq}"),
                    reason: "a path leads outside its conversation".into(),
                })?
        };
        last = i;
        idx.push(i);
        cur = all[i].parent_seq;
        if idx.len() > all.len() {
            return Err(StoreError::Corrupt {
                id: all[i].id.clone(),
                reason: "a cycle in the tree".into(),
            });
        }
    }
    idx.reverse();
    // a conversation whose every message is on the path has no branch; otherwise count each parent's children
    let branches = if idx.len() == all.len() {
        vec![false; idx.len()]
    } else {
        // by position in `all` (sorted by seq; a parent is mostly the row before its child)
        let mut children = vec![0u32; all.len()];
        for (i, h) in all.iter().enumerate() {
            let Some(p) = h.parent_seq else { continue };
            let at = match i.checked_sub(1) {
                Some(j) if all[j].seq == p => Some(j),
                _ => all.binary_search_by_key(&p, |h| h.seq).ok(),
            };
            if let Some(j) = at {
                children[j] += 1;
            }
        }
        idx.iter().map(|&i| children[i] > 1).collect()
    };
    // Move the heads out of `all` in path order (indices increase along a path: parents are written first).
    let mut all: Vec<Option<Head>> = all.into_iter().map(Some).collect();
    Ok(PathHeads {
        heads: idx.into_iter().filter_map(|i| all[i].take()).collect(),
        branches,
    })
}

/// Decodes the content of the given heads (which need not be contiguous), in the given order.
pub(crate) fn load_messages(
    conn: &Connection,
    conv: &ConvRow,
    heads: &[Head],
) -> Result<Vec<Message>> {
    let mut parents = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter().enumerate() {
        parents.push(match h.parent_seq {
            None => None,
            Some(p) if i > 0 && heads[i - 1].seq == p => Some(heads[i - 1].id.clone()),
            Some(p) => message_id(conn, Some(p))?,
        });
    }
    load_bodies(conn, conv, heads, parents)
}

/// Decodes the content of `heads`, giving each the parent id in `parents`.
pub(crate) fn load_bodies(
    conn: &Connection,
    conv: &ConvRow,
    heads: &[Head],
    parents: Vec<Option<String>>,
) -> Result<Vec<Message>> {
    let mut out = Vec::with_capacity(heads.len());
    let ascending = heads.windows(2).all(|w| w[0].seq < w[1].seq);
    if let (true, Some(first), Some(last)) =
        (heads.len() >= 64 && ascending, heads.first(), heads.last())
    {
        // Many rows in write order: one rowid range scan, skipping rows that are not asked for.
        let mut stmt = conn.prepare_cached(
            "SELECT m.seq, b.content, m.created_at, b.meta, b.usage
             FROM messages m JOIN messages b ON b.seq = coalesce(m.body_of, m.seq)
             WHERE m.seq BETWEEN ?1 AND ?2 ORDER BY m.seq",
        )?;
        let mut rows = stmt.query(params![first.seq, last.seq])?;
        let mut want = heads.iter().zip(parents).peekable();
        while let Some(r) = rows.next()? {
            let seq: i64 = r.get(0)?;
            let Some((h, _)) = want.peek() else { break };
            if h.seq != seq {
                continue;
            }
            let (h, parent) = want.next().ok_or_else(|| StoreError::Corrupt {
                id: format!("#{seq}"),
                reason: "row vanished while loading".into(),
            })?;
            let content = r.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
            out.push(decode(
                conv,
                h,
                parent,
                content,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
            )?);
        }
        if out.len() != heads.len() {
            return Err(StoreError::Corrupt {
                id: heads[out.len()].id.clone(),
                reason: "row missing while loading".into(),
            });
        }
        return Ok(out);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT b.content, m.created_at, b.meta, b.usage
         FROM messages m JOIN messages b ON b.seq = coalesce(m.body_of, m.seq) WHERE m.seq = ?1",
    )?;
    for (h, parent) in heads.iter().zip(parents) {
        let (content, created_at, meta, usage): (String, i64, Option<String>, Option<String>) =
            stmt.query_row(params![h.seq], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
        out.push(decode(conv, h, parent, &content, created_at, meta, usage)?);
    }
    Ok(out)
}

/// Rows of the store that cannot be decoded, as (conversation id, message id, why): what `cairn check` reports.
pub(crate) fn unreadable(conn: &Connection) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT c.id, m.id, m.content, m.meta, m.usage FROM messages m JOIN conversations c ON c.seq = m.conversation
         WHERE m.content IS NOT NULL ORDER BY m.seq",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let (conv, id): (String, String) = (r.get(0)?, r.get(1)?);
        let content: String = r.get(2)?;
        let why = match serde_json::from_str::<Value>(&content) {
            Err(e) => Some(format!("content: {e}")),
            Ok(v) => wire::blocks_from_value(v, "content")
                .err()
                .map(|e| e.to_string()),
        }
        .or_else(|| {
            r.get::<_, Option<String>>(3)
                .ok()
                .flatten()
                .and_then(|m| serde_json::from_str::<Value>(&m).err())
                .map(|e| format!("meta: {e}"))
        })
        .or_else(|| {
            r.get::<_, Option<String>>(4)
                .ok()
                .flatten()
                .and_then(|u| serde_json::from_str::<Usage>(&u).err())
                .map(|e| format!("usage: {e}"))
        });
        if let Some(w) = why {
            out.push((conv, id, w));
        }
    }
    Ok(out)
}

fn decode(
    conv: &ConvRow,
    h: &Head,
    parent: Option<String>,
    content: &str,
    created_at: i64,
    meta: Option<String>,
    usage: Option<String>,
) -> Result<Message> {
    let corrupt = |reason: String| StoreError::Corrupt {
        id: h.id.clone(),
        reason,
    };
    let content: Value =
        serde_json::from_str(content).map_err(|e| corrupt(format!("content: {e}")))?;
    let content =
        wire::blocks_from_value(content, "content").map_err(|e| corrupt(e.to_string()))?;
    let meta = match meta {
        Some(m) => serde_json::from_str(&m).map_err(|e| corrupt(format!("meta: {e}")))?,
        None => Value::Null,
    };
    let usage = match usage {
        Some(u) => {
            Some(serde_json::from_str::<Usage>(&u).map_err(|e| corrupt(format!("usage: {e}")))?)
        }
        None => None,
    };
    Ok(Message {
        id: h.id.clone(),
        parent,
        conversation: conv.id.clone(),
        role: h.role,
        content,
        created_at,
        meta,
        usage,
        depth: h.depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_counted_alike_in_rust_and_in_sql() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut turns = 0;
        for flags in 0..2048i64 {
            let sql: bool = conn
                .query_row(
                    &format!("SELECT {TURN_SQL} FROM (SELECT ?1 AS flags)"),
                    [flags],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(sql, counts_as_turn(flags), "flags {flags:#b}");
            turns += usize::from(sql);
        }
        // a reply that ends a turn, and a result that does (OpenHands' finish): not a prompt, not a digest
        assert!(counts_as_turn(ENDS_TURN | (1 << ROLE_SHIFT)));
        assert!(counts_as_turn(ENDS_TURN | HAS_TOOL_RESULT));
        assert!(!counts_as_turn(ENDS_TURN));
        assert!(turns > 0 && turns < 2048);
    }
}
