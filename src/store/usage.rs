//! Usage over the whole store, as SQL over the narrow tables written with each message (measures, tool calls,
//! conversations): no body is decoded. Each reply counts once, where it was written (a fork's copies are left
//! out), so a fork does not double what its origin cost.

use std::collections::HashMap;

use rusqlite::params_from_iter;
use rusqlite::types::Value as Sql;

use super::{Result, Store};

/// What rows of a usage table are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Conversation,
    Model,
    Day,
    Week,
    Project,
    Tool,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Conversation => "conversation",
            By::Model => "model",
            By::Day => "day",
            By::Week => "week",
            By::Project => "project",
            By::Tool => "tool",
        }
    }

    pub fn from_name(s: &str) -> Option<By> {
        [
            By::Conversation,
            By::Model,
            By::Day,
            By::Week,
            By::Project,
            By::Tool,
        ]
        .into_iter()
        .find(|b| b.name() == s)
    }

    /// The key of a row of measures `me` (joined with conversations `c`), as SQL.
    fn key(self) -> &'static str {
        match self {
            By::Conversation => "c.id",
            By::Model => "coalesce(me.model, '(no model)')",
            By::Day => "date(me.created_at / 1000, 'unixepoch')",
            By::Week => "strftime('%Y-W%W', me.created_at / 1000, 'unixepoch')",
            By::Project => "coalesce(c.project, '(no project)')",
            By::Tool => "t.name",
        }
    }
}

/// One group's raw figures; tokens by model, so a price can be put on them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageGroup {
    pub key: String,
    /// A conversation's title (rows by conversation).
    pub label: Option<String>,
    pub sessions: u64,
    /// Of the sessions, how many are subagents of another.
    pub subagents: u64,
    pub turns: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    /// Tokens of tool output (rows by tool).
    pub result_tokens: u64,
    pub compactions: u64,
    /// Wall time: per session, its last message's time minus its first, summed (milliseconds).
    pub wall_ms: i64,
    /// (model, input, output, cache read, cache write) summed over the replies that recorded usage.
    pub by_model: Vec<(String, [u64; 4])>,
}

impl Store {
    /// Usage grouped by `by`, from `since` (epoch ms) on.
    pub fn usage(&self, by: By, since: Option<i64>) -> Result<Vec<UsageGroup>> {
        let since = since.unwrap_or(i64::MIN);
        let mut groups: HashMap<String, UsageGroup> = HashMap::new();
        if by == By::Tool {
            let mut stmt = self.conn.prepare(
                "SELECT t.name, count(DISTINCT t.conversation), count(*), sum(t.is_error), sum(t.result_tokens)
                 FROM tool_calls t WHERE t.created_at >= ?1 GROUP BY t.name",
            )?;
            let rows = stmt.query_map([since], |r| {
                Ok(UsageGroup {
                    key: r.get(0)?,
                    sessions: r.get::<_, i64>(1)?.max(0) as u64,
                    tool_calls: r.get::<_, i64>(2)?.max(0) as u64,
                    tool_errors: r.get::<_, i64>(3)?.max(0) as u64,
                    result_tokens: r.get::<_, i64>(4)?.max(0) as u64,
                    ..UsageGroup::default()
                })
            })?;
            let mut out = rows.collect::<rusqlite::Result<Vec<_>>>()?;
            out.sort_by(|a, b| b.tool_calls.cmp(&a.tool_calls).then(a.key.cmp(&b.key)));
            return Ok(out);
        }
        let key = by.key();
        let args = [Sql::Integer(since)];
        // counts and spans: per (key, conversation), then summed per key
        let sql = format!(
            "SELECT {key}, c.title, me.conversation,
                    sum((me.flags & 4) != 0 AND ((me.flags >> 3) & 3) = 1),
                    sum(me.compaction), min(me.created_at), max(me.created_at),
                    max(CASE WHEN json_valid(c.meta) THEN json_extract(c.meta, '$.cairn.linked_to') IS NOT NULL ELSE 0 END)
             FROM measures me JOIN conversations c ON c.seq = me.conversation
             WHERE me.copy = 0 AND me.created_at >= ?1 {only_models}
             GROUP BY 1, me.conversation",
            // by model, a session counts under the models that wrote in it
            only_models = if by == By::Model {
                "AND me.model IS NOT NULL"
            } else {
                ""
            }
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query(params_from_iter(args.iter()))?;
        while let Some(r) = rows.next()? {
            let k: String = r.get(0)?;
            let g = groups.entry(k.clone()).or_insert_with(|| UsageGroup {
                key: k,
                ..UsageGroup::default()
            });
            if by == By::Conversation {
                g.label = r.get(1)?;
            }
            g.sessions += 1;
            g.subagents += r.get::<_, i64>(7)?.max(0) as u64;
            g.turns += r.get::<_, i64>(3)?.max(0) as u64;
            g.compactions += r.get::<_, i64>(4)?.max(0) as u64;
            let (a, b): (i64, i64) = (r.get(5)?, r.get(6)?);
            if a > 0 {
                g.wall_ms += b - a;
            }
        }
        // tokens by model
        let sql = format!(
            "SELECT {key}, coalesce(me.model, '(no model)'), sum(coalesce(me.input_tokens, 0)),
                    sum(coalesce(me.output_tokens, 0)), sum(coalesce(me.cache_read_tokens, 0)),
                    sum(coalesce(me.cache_write_tokens, 0))
             FROM measures me JOIN conversations c ON c.seq = me.conversation
             WHERE me.copy = 0 AND me.created_at >= ?1 AND me.input_tokens IS NOT NULL
             GROUP BY 1, 2"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query(params_from_iter(args.iter()))?;
        while let Some(r) = rows.next()? {
            let k: String = r.get(0)?;
            let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
            let t = [n(2)?, n(3)?, n(4)?, n(5)?];
            let model: String = r.get(1)?;
            let g = groups.entry(k.clone()).or_insert_with(|| UsageGroup {
                key: k,
                ..UsageGroup::default()
            });
            g.by_model.push((model, t));
        }
        // tool calls and errors, keyed through the call's message
        let tkey = match by {
            By::Model => "coalesce(me.model, '(no model)')",
            By::Day => "date(t.created_at / 1000, 'unixepoch')",
            By::Week => "strftime('%Y-W%W', t.created_at / 1000, 'unixepoch')",
            other => other.key(),
        };
        let sql = format!(
            "SELECT {tkey}, count(*), sum(t.is_error)
             FROM tool_calls t JOIN conversations c ON c.seq = t.conversation
             LEFT JOIN measures me ON me.seq = t.body
             WHERE t.created_at >= ?1 GROUP BY 1"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query(params_from_iter(args.iter()))?;
        while let Some(r) = rows.next()? {
            let k: String = r.get(0)?;
            let g = groups.entry(k.clone()).or_insert_with(|| UsageGroup {
                key: k,
                ..UsageGroup::default()
            });
            g.tool_calls += r.get::<_, i64>(1)?.max(0) as u64;
            g.tool_errors += r.get::<_, i64>(2)?.max(0) as u64;
        }
        let mut out: Vec<UsageGroup> = groups.into_values().collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }
}
