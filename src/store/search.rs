//! Full-text search over every message of every conversation and branch, through the FTS5 index
//! ([`super::index`]): the query language is FTS5's (words, "phrases", prefix*, AND/OR/NOT, NEAR), results ranked
//! by bm25, filtered by conversation, role, tool, errors and time in the same statement.

use rusqlite::types::Value as Sql;
use rusqlite::{OptionalExtension, params_from_iter};

use super::{Result, Store, StoreError, conv_row};

/// Past this many matching bodies, a search ranks the newest this many (bm25 over all of half a million matches
/// takes a third of a second; over these, milliseconds).
pub const RANK_WINDOW: i64 = 5_000;

/// Which messages a search looks at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchQuery {
    /// FTS5 query syntax.
    pub text: String,
    pub conversation: Option<String>,
    /// "user" (prompts), "assistant" (replies), "tool" (tool results), "system".
    pub role: Option<String>,
    /// Messages that call this tool or hold its results.
    pub tool: Option<String>,
    /// Only messages holding a failed tool result.
    pub errors: bool,
    /// Epoch milliseconds.
    pub since: Option<i64>,
    pub limit: usize,
}

/// One message that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub conversation: String,
    pub title: Option<String>,
    pub message: String,
    /// "user", "assistant", "tool" (a message of tool results) or "system".
    pub role: String,
    pub created_at: i64,
    /// bm25: lower is better.
    pub rank: f64,
    /// The row holding the message's body (its own, or the original a fork copied).
    pub body: i64,
    /// The message's own row (tree order within a conversation).
    pub seq: i64,
}

/// The best hits and how many messages matched in all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hits {
    pub hits: Vec<Hit>,
    pub total: u64,
}

impl Store {
    /// Runs a search. A query FTS5 cannot parse is `BadQuery`, naming what is wrong.
    pub fn search(&self, q: &SearchQuery) -> Result<Hits> {
        let mut matcher = format!("({})", q.text.trim());
        if q.text.trim().is_empty() {
            return Err(StoreError::BadQuery("the query is empty".into()));
        }
        if let Some(t) = &q.tool {
            matcher = format!("{matcher} AND tools : \"{}\"", t.replace('"', "\"\""));
        }
        let (filters, mut args, range) = self.search_filters(q, matcher)?;
        // a hit on a body is a hit in the conversation that wrote it and in every fork that copied it
        let candidates = |with_rank: bool| {
            let rank = if with_rank {
                "bm25(search, 1.0, 0.5)"
            } else {
                "0"
            };
            format!(
                "WITH hits(body, rank) AS (SELECT rowid, {rank} FROM search WHERE search MATCH ?1{range})
                 SELECT m.seq, m.id, m.conversation, m.role, m.flags, m.created_at, hits.rank, hits.body
                 FROM hits JOIN messages m ON m.seq = hits.body WHERE 1 = 1 {filters}
                 UNION ALL
                 SELECT m.seq, m.id, m.conversation, m.role, m.flags, m.created_at, hits.rank, hits.body
                 FROM hits JOIN messages m ON m.body_of = hits.body WHERE 1 = 1 {filters}"
            )
        };
        let bad = fts_error;
        if filters.is_empty() {
            return self
                .search_unfiltered(&args[0], q.limit.max(1))
                .map_err(bad);
        }
        let total: i64 = self
            .conn
            .prepare(&format!("SELECT count(*) FROM ({})", candidates(false)))
            .map_err(bad)?
            .query_row(params_from_iter(args.iter()), |r| r.get(0))
            .map_err(bad)?;
        args.push(Sql::Integer(q.limit.max(1) as i64));
        let sql = format!(
            "SELECT x.id, c.id, c.title, x.role, x.flags, x.created_at, x.rank, x.body, x.seq
             FROM ({}) x JOIN conversations c ON c.seq = x.conversation
             ORDER BY x.rank, x.seq LIMIT ?{}",
            candidates(true),
            args.len()
        );
        let mut stmt = self.conn.prepare(&sql).map_err(bad)?;
        let hits = stmt
            .query_map(params_from_iter(args.iter()), |r| {
                Ok(Hit {
                    message: r.get(0)?,
                    conversation: r.get(1)?,
                    title: r.get(2)?,
                    role: hit_role(r.get(3)?, r.get(4)?),
                    created_at: r.get(5)?,
                    rank: r.get(6)?,
                    body: r.get(7)?,
                    seq: r.get(8)?,
                })
            })
            .map_err(bad)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(bad)?;
        Ok(Hits {
            hits,
            total: total.max(0) as u64,
        })
    }

    /// The SQL filters a query's options add (conversation, role, errors, since), their arguments after the
    /// matcher's, and the index range of a conversation's bodies.
    fn search_filters(
        &self,
        q: &SearchQuery,
        matcher: String,
    ) -> Result<(String, Vec<Sql>, String)> {
        let mut filters = String::new();
        let mut args: Vec<Sql> = vec![Sql::Text(matcher)];
        let mut range = String::new();
        if let Some(c) = &q.conversation {
            let conv = conv_row(&self.conn, c)?;
            args.push(Sql::Integer(conv.seq));
            filters.push_str(&format!(" AND m.conversation = ?{}", args.len()));
            // the index is read only over the rows that hold this conversation's bodies
            let (lo, hi): (Option<i64>, Option<i64>) = self.conn.query_row(
            "SELECT min(coalesce(body_of, seq)), max(coalesce(body_of, seq)) FROM messages WHERE conversation = ?1",
            [conv.seq],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
            args.push(Sql::Integer(lo.unwrap_or(0)));
            args.push(Sql::Integer(hi.unwrap_or(-1)));
            range = format!(" AND rowid BETWEEN ?{} AND ?{}", args.len() - 1, args.len());
        }
        match q.role.as_deref() {
            None => {}
            Some("user") => filters.push_str(" AND m.role = 'user' AND (m.flags & 2) = 0"),
            Some("tool") => filters.push_str(" AND (m.flags & 2) != 0"),
            Some("assistant") => filters.push_str(" AND m.role = 'assistant'"),
            Some("system") => filters.push_str(" AND m.role = 'system'"),
            Some(other) => {
                return Err(StoreError::BadQuery(format!(
                    "--role {other:?}: use user, assistant, tool or system"
                )));
            }
        }
        if q.errors {
            filters.push_str(" AND EXISTS (SELECT 1 FROM measures me WHERE me.seq = m.seq AND me.tool_errors > 0)");
        }
        if let Some(since) = q.since {
            args.push(Sql::Integer(since));
            filters.push_str(&format!(" AND m.created_at >= ?{}", args.len()));
        }
        Ok((filters, args, range))
    }

    /// A search with no filter outside the index: FTS5 ranks and cuts the bodies itself (`ORDER BY rank LIMIT`),
    /// and only those few are joined to their messages; the total counts the bodies, and the fork copies of
    /// them when the store has any.
    fn search_unfiltered(&self, matcher: &Sql, limit: usize) -> rusqlite::Result<Hits> {
        let mut total: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM search WHERE search MATCH ?1")?
            .query_row([matcher], |r| r.get(0))?;
        // bm25 over hundreds of thousands of matches costs more than a reader waits: past RANK_WINDOW matches,
        // the newest RANK_WINDOW are ranked (FTS5 walks a doclist backwards by row number cheaply)
        let floor: i64 = if total > RANK_WINDOW {
            self.conn
                .prepare_cached(
                    "SELECT rowid FROM search WHERE search MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
                )?
                .query_row(rusqlite::params![matcher, RANK_WINDOW - 1], |r| r.get(0))?
        } else {
            0
        };
        let mut bodies: Vec<(i64, f64)> = Vec::with_capacity(limit);
        {
            let mut stmt = self.conn.prepare_cached(
                "SELECT rowid, rank FROM search WHERE search MATCH ?1 AND rowid >= ?3
                 AND rank MATCH 'bm25(1.0, 0.5)' ORDER BY rank LIMIT ?2",
            )?;
            let mut rows = stmt.query(rusqlite::params![matcher, limit as i64, floor])?;
            while let Some(r) = rows.next()? {
                bodies.push((r.get(0)?, r.get(1)?));
            }
        }
        let has_copies: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM messages WHERE body_of IS NOT NULL)",
            [],
            |r| r.get(0),
        )?;
        if has_copies {
            total += self
                .conn
                .prepare_cached(
                    "SELECT count(*) FROM messages WHERE body_of IS NOT NULL
                 AND body_of IN (SELECT rowid FROM search WHERE search MATCH ?1)",
                )?
                .query_row([matcher], |r| r.get::<_, i64>(0))?;
        }
        let mut hits = Vec::with_capacity(limit);
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.id, c.id, c.title, m.role, m.flags, m.created_at, m.seq
             FROM messages m JOIN conversations c ON c.seq = m.conversation
             WHERE m.seq = ?1
             UNION ALL
             SELECT m.id, c.id, c.title, m.role, m.flags, m.created_at, m.seq
             FROM messages m JOIN conversations c ON c.seq = m.conversation
             WHERE m.body_of = ?1",
        )?;
        for (body, rank) in bodies {
            let mut rows = stmt.query([body])?;
            while let Some(r) = rows.next()? {
                hits.push(Hit {
                    message: r.get(0)?,
                    conversation: r.get(1)?,
                    title: r.get(2)?,
                    role: hit_role(r.get(3)?, r.get(4)?),
                    created_at: r.get(5)?,
                    rank,
                    body,
                    seq: r.get(6)?,
                });
            }
        }
        hits.sort_by(|a, b| a.rank.total_cmp(&b.rank).then(a.seq.cmp(&b.seq)));
        hits.truncate(limit);
        Ok(Hits {
            hits,
            total: total.max(0) as u64,
        })
    }

    /// The ids of a conversation's messages (every branch) that start with `prefix`, in tree order.
    pub fn ids_with_prefix(&self, conversation: &str, prefix: &str) -> Result<Vec<String>> {
        let conv = conv_row(&self.conn, conversation)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM messages WHERE conversation = ?1 AND substr(id, 1, length(?2)) = ?2 ORDER BY seq",
        )?;
        let ids = stmt
            .query_map(rusqlite::params![conv.seq, prefix], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(ids)
    }

    /// The message of a conversation that made the tool call `call_id` (where a subagent was spawned).
    pub fn message_with_call(&self, conversation: &str, call_id: &str) -> Result<Option<String>> {
        let conv = conv_row(&self.conn, conversation)?;
        let id: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT m.id FROM tool_calls t JOIN messages m ON m.seq = t.body
                 WHERE t.call_id = ?1 AND m.conversation = ?2 LIMIT 1",
            )?
            .query_row(rusqlite::params![call_id, conv.seq], |r| r.get(0))
            .optional()?;
        Ok(id)
    }

    /// The text the index holds for a body (what a snippet is cut from).
    pub fn body_text(&self, body: i64) -> Result<String> {
        let (content, meta): (Option<String>, Option<String>) = self.conn.query_row(
            "SELECT content, meta FROM messages WHERE seq = ?1",
            [body],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let blocks = content
            .and_then(|c| serde_json::from_str::<serde_json::Value>(&c).ok())
            .and_then(|v| crate::wire::blocks_from_value(v, "content").ok())
            .unwrap_or_default();
        let meta = meta
            .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
            .unwrap_or_default();
        Ok(super::index::indexed_text(&blocks, &meta))
    }
}

/// A hit's role as search shows it: a user message that carries tool results (node flag 2) is "tool".
fn hit_role(role: String, flags: i64) -> String {
    if flags & 2 != 0 && role == "user" {
        "tool".into()
    } else {
        role
    }
}

/// A generic SQL error from a search statement is the query's (FTS5 reports its syntax errors so).
fn fts_error(e: rusqlite::Error) -> StoreError {
    match &e {
        rusqlite::Error::SqliteFailure(f, Some(msg)) if f.extended_code == 1 => {
            StoreError::BadQuery(msg.trim_start_matches("fts5: ").to_string())
        }
        _ => StoreError::Sqlite(e),
    }
}
