//! The store's derived indexes, written with each message body in the same transaction: the full-text index
//! (`search`, SQLite FTS5, contentless: the text is already in the bodies) and the tool calls (`tool_calls`: each
//! call with its name, and once answered its result's error flag and size), which search filters and usage
//! statistics read instead of decoding bodies.
//!
//! Both are keyed by the *body* (the row that holds a message's content). A fork's copies share their bodies, so a
//! fork writes nothing here, and a search hit on a body is a hit in every conversation that holds it.

use std::sync::OnceLock;

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::Value;

use super::Result;
use crate::model::{Block, NewMessage};

/// The text the full-text index holds for a message: what a reader can see of it (prose, thinking, tool calls with
/// their input, tool output), without what its harness rendered beside it for the model
/// ([`crate::model::own_blocks`]: the same reminders in every session would match every search).
pub fn indexed_text(content: &[Block], meta: &Value) -> String {
    crate::model::plain_text(&crate::model::own_blocks(content, meta))
}

/// What the index takes from a body: its [`indexed_text`] and the size of each tool result block in order.
pub(crate) fn parts(content: &[Block], meta: &Value) -> (String, Vec<u64>) {
    let empty = crate::tokens::blocks(&[]);
    let results = content
        .iter()
        .filter(|b| matches!(b, Block::ToolResult { .. }))
        .map(|b| crate::tokens::blocks(std::slice::from_ref(b)).saturating_sub(empty))
        .collect();
    (indexed_text(content, meta), results)
}

/// A message body just written, as the index takes it.
pub(crate) struct Body<'a> {
    pub seq: i64,
    pub conversation: i64,
    /// The row holding its parent's body (where the calls its results answer are).
    pub parent_body: Option<i64>,
    pub message: &'a NewMessage,
    pub created_at: i64,
    /// Its [`indexed_text`], and the size of each of its tool result blocks in order.
    pub text: &'a str,
    pub result_tokens: &'a [u64],
}

/// Indexes a message body just written: its tool calls (and the results that answer earlier ones) and its text.
pub(crate) fn index_body(tx: &Transaction<'_>, b: Body<'_>) -> Result<()> {
    let mut tools = index_calls(tx, &b)?;
    tools.sort();
    tools.dedup();
    tx.prepare_cached("INSERT INTO search (rowid, text, tools) VALUES (?1, ?2, ?3)")?
        .execute(params![b.seq, b.text, tools.join(" ")])?;
    Ok(())
}

/// Indexes the tool calls of a body (and the results in it that answer earlier ones); returns the tools named.
fn index_calls(tx: &Transaction<'_>, b: &Body<'_>) -> Result<Vec<String>> {
    let mut tools: Vec<String> = Vec::new();
    let mut results = b.result_tokens.iter();
    let model = crate::model::model_of(&b.message.meta);
    for block in &b.message.content {
        match block {
            Block::ToolUse { id, name, .. } => {
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO tool_calls (body, call_id, conversation, name, created_at, model)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![b.seq, id, b.conversation, name, b.created_at, model])?;
                tools.push(name.clone());
            }
            Block::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => {
                let size = results.next().copied().unwrap_or(0);
                let Some(parent) = b.parent_body else {
                    continue;
                };
                let name: Option<String> = tx
                    .prepare_cached("SELECT name FROM tool_calls WHERE body = ?1 AND call_id = ?2")?
                    .query_row(params![parent, tool_use_id], |r| r.get(0))
                    .optional()?;
                if let Some(name) = name {
                    tx.prepare_cached(
                        "UPDATE tool_calls SET result = ?1, is_error = ?2, result_tokens = ?3
                         WHERE body = ?4 AND call_id = ?5",
                    )?
                    .execute(params![
                        b.seq,
                        *is_error,
                        size as i64,
                        parent,
                        tool_use_id
                    ])?;
                    tools.push(name);
                }
            }
            _ => {}
        }
    }
    Ok(tools)
}

/// Indexes again the tool calls of the body stored in row `seq` (a message that counts again, whose calls left the
/// index when it was taken for a copy), from the body itself; parents first, so a result finds its call. A body
/// that does not decode indexes nothing (the store writes only bodies that do).
pub(crate) fn index_calls_again(tx: &Transaction<'_>, seq: i64) -> Result<()> {
    /// (conversation, the parent's body, content, meta, created_at)
    type Stored = (i64, Option<i64>, String, Option<String>, i64);
    let row: Option<Stored> = tx
        .prepare_cached(
            "SELECT m.conversation, coalesce(p.body_of, p.seq), m.content, m.meta, m.created_at
             FROM messages m LEFT JOIN messages p ON p.seq = m.parent
             WHERE m.seq = ?1 AND m.content IS NOT NULL",
        )?
        .query_row([seq], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let Some((conversation, parent_body, content, meta, created_at)) = row else {
        return Ok(());
    };
    let blocks = serde_json::from_str::<Value>(&content)
        .ok()
        .and_then(|v| crate::wire::blocks_from_value(v, "content").ok())
        .unwrap_or_default();
    let mut m = NewMessage::new(crate::model::Role::User, blocks);
    m.meta = meta
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let (_, result_tokens) = parts(&m.content, &m.meta);
    index_calls(
        tx,
        &Body {
            seq,
            conversation,
            parent_body,
            message: &m,
            created_at,
            text: "",
            result_tokens: &result_tokens,
        },
    )?;
    Ok(())
}

/// Reports a long migration's progress: (what, done, total). Set once by a shell before it opens a store.
type ProgressFn = dyn Fn(&str, u64, u64) + Send + Sync;
static PROGRESS: OnceLock<Box<ProgressFn>> = OnceLock::new();

/// Where migrations that rebuild an index report their progress (the CLI prints it on stderr).
pub fn on_migration_progress(f: Box<ProgressFn>) {
    // a second shell in one process keeps the first reporter: progress is informative only
    PROGRESS.set(f).ok();
}

fn progress(what: &str, done: u64, total: u64) {
    if let Some(p) = PROGRESS.get() {
        p(what, done, total);
    }
}

/// v5: indexes every body already stored, parents before children (a result finds its call's row).
pub(crate) fn backfill(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let total: i64 = tx.query_row(
        "SELECT count(*) FROM messages WHERE content IS NOT NULL",
        [],
        |r| r.get(0),
    )?;
    let mut stmt = tx.prepare(
        "SELECT m.seq, m.conversation, coalesce(p.body_of, p.seq), m.content, m.created_at
         FROM messages m LEFT JOIN messages p ON p.seq = m.parent
         WHERE m.content IS NOT NULL ORDER BY m.seq",
    )?;
    let mut rows = stmt.query([])?;
    let mut done = 0u64;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let conversation: i64 = r.get(1)?;
        let parent: Option<i64> = r.get(2)?;
        let content: String = r.get(3)?;
        let created_at: i64 = r.get(4)?;
        let blocks = serde_json::from_str::<Value>(&content)
            .ok()
            .and_then(|v| crate::wire::blocks_from_value(v, "content").ok())
            .unwrap_or_default();
        let m = NewMessage::new(crate::model::Role::User, blocks);
        // bodies stored before v5 were read before any harness rendered reminders beside them
        let (text, result_tokens) = parts(&m.content, &Value::Null);
        index_body(
            tx,
            Body {
                seq,
                conversation,
                parent_body: parent,
                message: &m,
                created_at,
                text: &text,
                result_tokens: &result_tokens,
            },
        )
        .map_err(|e| {
            rusqlite::Error::ToSqlConversionFailure(Box::new(std::io::Error::other(e.to_string())))
        })?;
        done += 1;
        if done.is_multiple_of(20_000) {
            progress("indexing messages for search", done, total as u64);
        }
    }
    if total > 0 {
        progress("indexing messages for search", done, total as u64);
    }
    Ok(())
}

/// The project (working folder) a harness recorded for a session: pi's header, Codex's session_meta, Claude
/// Code's lines (the first message that has one).
pub fn project_of(conv_meta: &Value, first_meta: &[&Value]) -> Option<String> {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    s(conv_meta.pointer("/header/cwd"))
        .or_else(|| s(conv_meta.pointer("/session_meta/cwd")))
        .or_else(|| s(conv_meta.pointer("/session_meta/payload/cwd")))
        .or_else(|| {
            conv_meta
                .get("preamble")
                .and_then(Value::as_array)
                .and_then(|p| p.iter().find_map(|l| s(l.get("cwd"))))
        })
        .or_else(|| {
            first_meta.iter().find_map(|m| {
                s(m.pointer("/lines/0/cwd"))
                    .or_else(|| s(m.pointer("/entry/cwd")))
                    .or_else(|| s(m.get("cwd")))
            })
        })
        .filter(|p| !p.trim().is_empty())
}
