//! Usage over the whole store, as SQL over the narrow tables written with each message (measures, tool calls,
//! conversations): no body is decoded. Each reply counts once, where it was written (a fork's copies are left
//! out), so a fork does not double what its origin cost.

use std::collections::HashMap;

use super::{Result, Store};

/// The row key of a time (epoch milliseconds) in a table by day (`2026-02-01`) or by week (`2026-W05`), UTC.
pub fn time_key(by: By, ms: i64) -> Option<String> {
    let date = jiff::Timestamp::from_millisecond(ms)
        .ok()?
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    match by {
        By::Day => Some(date.to_string()),
        By::Week => {
            let w = date.iso_week_date();
            Some(format!("{}-W{:02}", w.year(), w.week()))
        }
        _ => None,
    }
}

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

impl serde::Serialize for By {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl std::fmt::Display for By {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
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
    /// Messages a model wrote (replies), measured or not.
    pub replies: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    /// Tokens of tool output (rows by tool).
    pub result_tokens: u64,
    pub compactions: u64,
    /// Wall time: per session, its last message's time minus its first, summed (milliseconds).
    pub wall_ms: i64,
    /// (model, input, output, cache read, cache write) summed over the replies that recorded usage.
    pub by_model: Vec<(String, [u64; 4])>,
    /// Replies whose prompt no usage records ([`Store::unrecorded_prompts`]): what they sent is in no sum here.
    pub unrecorded_prompts: u64,
    /// The replies that recorded usage, summed per conversation, model and hour (prices are tiered by a request's
    /// size and change by date and time of day: a bucket whose largest prompt is below a model's first tier is
    /// priced as its sum; above, its replies are read one by one, [`Store::reply_usages`]).
    pub buckets: Vec<UsageBucket>,
}

/// Replies of one conversation and model within one hour: their usage summed, the largest prompt among them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageBucket {
    pub conversation: String,
    pub model: Option<String>,
    /// The hour's start, epoch ms.
    pub hour: i64,
    pub usage: crate::model::Usage,
    pub max_prompt: u64,
    pub replies: u64,
}

/// A conversation as usage groups it: id, title, project, and whether it is a subagent's.
type UsageConv = (String, Option<String>, Option<String>, bool);

/// Per key, the conversations seen and each one's first and last time.
type Spans = HashMap<String, HashMap<i64, (i64, i64)>>;

/// How usage is grouped: the key and the conversations the keys are made from.
struct Grouping<'a> {
    by: By,
    convs: HashMap<i64, UsageConv>,
    /// By model: the row a model's name counts under (None: it is no model, and counts under none).
    model_key: &'a dyn Fn(&str) -> Option<String>,
}

impl Grouping<'_> {
    /// The key a row of conversation `conv`, model and day `d` counts under; None when it counts under none.
    fn key_of(&self, conv: i64, model: &Option<String>, d: i64) -> Option<String> {
        let convs = &self.convs;
        Some(match self.by {
            By::Conversation => convs.get(&conv)?.0.clone(),
            By::Model => (self.model_key)(model.as_deref()?)?,
            By::Project => convs
                .get(&conv)?
                .2
                .clone()
                .unwrap_or_else(|| "(no project)".into()),
            By::Day | By::Week => time_key(self.by, d * 86_400_000)?,
            By::Tool => return None,
        })
    }
}

impl Store {
    /// Usage grouped by `by`, from `since` (epoch ms) on. By model, a reply's model name counts under the row
    /// `model_key` names (the caller's: the store reads no model name), so the names one model goes by are one row
    /// and a session that used two of them one session; a name it gives no row is left out.
    pub fn usage(
        &self,
        by: By,
        since: Option<i64>,
        model_key: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Vec<UsageGroup>> {
        let since = since.unwrap_or(i64::MIN);
        if by == By::Tool {
            return self.usage_by_tool(since);
        }
        // each name asked once: a store holds few names and many rows
        let names = std::cell::RefCell::new(HashMap::<String, Option<String>>::new());
        let given = model_key;
        let model_key = &|name: &str| -> Option<String> {
            if let Some(k) = names.borrow().get(name) {
                return k.clone();
            }
            let k = given(name);
            names.borrow_mut().insert(name.to_string(), k.clone());
            k
        };
        let g = Grouping {
            by,
            convs: self.usage_conversations()?,
            model_key,
        };
        let mut groups: HashMap<String, UsageGroup> = HashMap::new();
        let since_day = if since == i64::MIN {
            i64::MIN
        } else {
            since.div_euclid(86_400_000)
        };
        let seen = self.usage_days(&g, since_day, &mut groups)?;
        self.usage_hours(&g, since_day, &mut groups)?;
        for (k, spans) in seen {
            if let Some(u) = groups.get_mut(&k) {
                u.sessions = spans.len() as u64;
                u.subagents = spans
                    .keys()
                    .filter(|c| g.convs.get(c).is_some_and(|x| x.3))
                    .count() as u64;
                u.wall_ms = spans
                    .values()
                    .filter(|(a, _)| *a > 0)
                    .map(|(a, b)| b - a)
                    .sum();
            }
        }
        if by == By::Model {
            self.tool_calls_by_model(since, model_key, &mut groups)?;
        }
        self.unrecorded_prompts(&g, since, &mut groups)?;
        let mut out: Vec<UsageGroup> = groups.into_values().collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// Replies that recorded their output and never their prompt ([`crate::model::Usage::unrecorded_prompts`]),
    /// per conversation and model; each count falls under the day of the newest such reply.
    fn unrecorded_prompts(
        &self,
        grouping: &Grouping,
        since: i64,
        groups: &mut HashMap<String, UsageGroup>,
    ) -> Result<()> {
        // the pairs that hold such a reply, from the partial index (v21) that lists only those (its condition
        // written as the index has it); then each pair's replies with usage, by the conversation's index
        let mut stmt = self.conn.prepare_cached(
            "WITH pairs AS (
                 SELECT DISTINCT conversation, model FROM measures
                 WHERE copy = 0 AND output_tokens > 0
                   AND coalesce(input_tokens, 0) + coalesce(cache_read_tokens, 0)
                       + coalesce(cache_write_tokens, 0) = 0
                   AND created_at >= ?1)
             SELECT m.conversation, nullif(m.model, ''), m.created_at, m.input_tokens, m.output_tokens,
                    m.cache_read_tokens, m.cache_write_tokens, m.requests
             FROM pairs JOIN measures m ON m.conversation = pairs.conversation AND m.model IS pairs.model
             WHERE m.copy = 0 AND m.created_at >= ?1
               AND (m.input_tokens IS NOT NULL OR m.output_tokens IS NOT NULL)",
        )?;
        let mut pairs: HashMap<(i64, Option<String>), (Vec<crate::model::Usage>, i64)> =
            HashMap::new();
        let mut rows = stmt.query([since])?;
        while let Some(r) = rows.next()? {
            let n = |i: usize| -> rusqlite::Result<u64> {
                Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0).max(0) as u64)
            };
            let u = crate::model::Usage {
                input_tokens: n(3)?,
                output_tokens: n(4)?,
                cache_read_input_tokens: n(5)?,
                cache_creation_input_tokens: n(6)?,
                requests: n(7)?,
                ..Default::default()
            };
            let pair = pairs
                .entry((r.get(0)?, r.get(1)?))
                .or_insert((Vec::new(), i64::MIN));
            if u.prompt() == 0 && u.output_tokens > 0 {
                pair.1 = pair.1.max(r.get(2)?);
            }
            pair.0.push(u);
        }
        for ((conv, model), (usages, at)) in pairs {
            let n = crate::model::Usage::unrecorded_prompts(&usages);
            if n == 0 || (grouping.by == By::Model && model.is_none()) {
                continue;
            }
            if let Some(g) = grouping
                .key_of(conv, &model, at.div_euclid(86_400_000))
                .and_then(|k| groups.get_mut(&k))
            {
                g.unrecorded_prompts += n;
            }
        }
        Ok(())
    }

    /// By tool: each tool's calls, errors, the conversations that called it and its results' size.
    fn usage_by_tool(&self, since: i64) -> Result<Vec<UsageGroup>> {
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
        Ok(out)
    }

    /// The conversations (a few thousand rows): id, title, project, subagent or not.
    fn usage_conversations(&self) -> Result<HashMap<i64, UsageConv>> {
        let mut convs = HashMap::new();
        let linked = crate::model::cairn_meta::LINKED_TO_SQL;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT seq, id, title, project,
                    CASE WHEN json_valid(meta) THEN json_extract(meta, '{linked}') IS NOT NULL ELSE 0 END
             FROM conversations"
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            convs.insert(
                r.get(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get::<_, i64>(4)? != 0),
            );
        }
        Ok(convs)
    }

    /// The day roll-up (a few rows per conversation) into the groups; per key, the conversations seen and their
    /// spans.
    fn usage_days(
        &self,
        grouping: &Grouping,
        since_day: i64,
        groups: &mut HashMap<String, UsageGroup>,
    ) -> Result<Spans> {
        let by = grouping.by;
        let sql = "SELECT day, conversation, nullif(model, ''), turns, compactions, first, last, input, output,
                          cache_read, cache_write, measured, tool_calls, tool_errors, messages
                   FROM usage_days WHERE day >= ?1";
        // per key: the conversations seen (sessions), and their spans
        let mut seen: HashMap<String, HashMap<i64, (i64, i64)>> = HashMap::new();
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query([since_day])?;
        while let Some(r) = rows.next()? {
            let d: i64 = r.get(0)?;
            let conv: i64 = r.get(1)?;
            let model: Option<String> = r.get(2)?;
            // by model, only what a model wrote (its replies); the rest has no model
            if by == By::Model && model.is_none() {
                continue;
            }
            let Some(k) = grouping.key_of(conv, &model, d) else {
                continue;
            };
            let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
            let g = groups.entry(k.clone()).or_insert_with(|| UsageGroup {
                key: k.clone(),
                ..UsageGroup::default()
            });
            if by == By::Conversation {
                g.label = grouping.convs.get(&conv).and_then(|c| c.1.clone());
            }
            g.turns += n(3)?;
            g.compactions += n(4)?;
            if model.is_some() {
                g.replies += n(14)?;
            }
            if by != By::Model {
                g.tool_calls += n(12)?;
                g.tool_errors += n(13)?;
            }
            if n(11)? > 0 {
                let model = model
                    .clone()
                    .unwrap_or_else(|| crate::models::NO_MODEL.into());
                g.by_model.push((model, [n(7)?, n(8)?, n(9)?, n(10)?]));
            }
            let (a, b): (i64, i64) = (r.get(5)?, r.get(6)?);
            let span = seen.entry(k).or_default().entry(conv).or_insert((a, b));
            span.0 = span.0.min(a);
            span.1 = span.1.max(b);
        }
        Ok(seen)
    }

    /// The measured replies, per conversation, model and hour (the hourly roll-up), under their day's key.
    fn usage_hours(
        &self,
        grouping: &Grouping,
        since_day: i64,
        groups: &mut HashMap<String, UsageGroup>,
    ) -> Result<()> {
        let by = grouping.by;
        let mut stmt = self.conn.prepare_cached(
            "SELECT conversation, nullif(model, ''), hour, input, output, cache_read, cache_write, cache_write_1h,
                    max_prompt, replies, web_searches
             FROM usage_hours WHERE hour >= ?1 AND replies > 0",
        )?;
        let mut rows = stmt.query([if since_day == i64::MIN {
            i64::MIN
        } else {
            since_day * 24
        }])?;
        while let Some(r) = rows.next()? {
            let conv: i64 = r.get(0)?;
            let model: Option<String> = r.get(1)?;
            let hour: i64 = r.get::<_, i64>(2)? * 3_600_000;
            if by == By::Model && model.is_none() {
                continue;
            }
            let Some(k) = grouping.key_of(conv, &model, hour.div_euclid(86_400_000)) else {
                continue;
            };
            let n = |i: usize| -> rusqlite::Result<u64> {
                Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0).max(0) as u64)
            };
            let bucket = UsageBucket {
                conversation: grouping
                    .convs
                    .get(&conv)
                    .map(|c| c.0.clone())
                    .unwrap_or_default(),
                model,
                hour,
                usage: crate::model::Usage {
                    input_tokens: n(3)?,
                    output_tokens: n(4)?,
                    cache_read_input_tokens: n(5)?,
                    cache_creation_input_tokens: n(6)?,
                    cache_creation_1h_input_tokens: n(7)?,
                    // a bucket is a sum, priced as one only below any tier (`max_prompt`)
                    requests: 0,
                    precision: 0,
                    web_search_requests: n(10)?,
                },
                max_prompt: n(8)?,
                replies: n(9)?,
            };
            if let Some(g) = groups.get_mut(&k) {
                g.buckets.push(bucket);
            }
        }
        Ok(())
    }

    /// By model, tool calls and their errors are the calling reply's.
    fn tool_calls_by_model(
        &self,
        since: i64,
        model_key: &dyn Fn(&str) -> Option<String>,
        groups: &mut HashMap<String, UsageGroup>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare(
            "SELECT t.model, count(*), sum(t.is_error)
             FROM tool_calls t WHERE t.created_at >= ?1 AND t.model IS NOT NULL GROUP BY 1",
        )?;
        let mut rows = stmt.query([since])?;
        while let Some(r) = rows.next()? {
            let Some(k) = model_key(&r.get::<_, String>(0)?) else {
                continue;
            };
            let g = groups.entry(k.clone()).or_insert_with(|| UsageGroup {
                key: k,
                ..UsageGroup::default()
            });
            g.tool_calls += r.get::<_, i64>(1)?.max(0) as u64;
            g.tool_errors += r.get::<_, i64>(2)?.max(0) as u64;
        }
        Ok(())
    }
}

impl Store {
    /// Each measured reply of a bucket (a conversation, model and hour), for pricing one request at a time: its
    /// usage and time.
    pub fn reply_usages(&self, b: &UsageBucket) -> Result<Vec<(crate::model::Usage, i64)>> {
        let conv = super::conv_row(&self.conn, &b.conversation)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens,
                    created_at, requests, web_searches
             FROM measures WHERE conversation = ?1 AND copy = 0 AND input_tokens IS NOT NULL
               AND created_at >= ?2 AND created_at < ?3 AND model IS ?4",
        )?;
        let rows = stmt.query_map(
            rusqlite::params![conv.seq, b.hour, b.hour + 3_600_000, b.model],
            |r| {
                let n = |i: usize| -> rusqlite::Result<u64> {
                    Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0).max(0) as u64)
                };
                Ok((
                    crate::model::Usage {
                        input_tokens: n(0)?,
                        output_tokens: n(1)?,
                        cache_read_input_tokens: n(2)?,
                        cache_creation_input_tokens: n(3)?,
                        cache_creation_1h_input_tokens: n(4)?,
                        requests: n(6)?,
                        precision: 0,
                        web_search_requests: n(7)?,
                    },
                    r.get(5)?,
                ))
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A reply of a path with what its provider measured: its index on the path, its model, its usage, its time.
#[derive(Debug, Clone)]
pub struct PathUsage {
    pub index: usize,
    pub model: Option<String>,
    pub usage: crate::model::Usage,
    pub created_at: i64,
}

impl Store {
    /// The replies of a path (`heads`, from [`Store::active_path_heads`] or [`Store::path_heads_to`]) that carry
    /// usage, in path order: one range scan of the measures' narrow usage columns, for figures over every reply of
    /// a long path (the prompt cache) that need nothing else.
    pub fn path_usages(
        &self,
        conversation: &str,
        heads: &[super::paths::Head],
    ) -> Result<Vec<PathUsage>> {
        let (Some(lo), Some(hi)) = (
            heads.iter().map(|h| h.seq).min(),
            heads.iter().map(|h| h.seq).max(),
        ) else {
            return Ok(Vec::new());
        };
        let conv = super::conv_row(&self.conn, conversation)?;
        let at: HashMap<i64, usize> = heads.iter().enumerate().map(|(i, h)| (h.seq, i)).collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                    cache_write_1h_tokens, requests, created_at, web_searches
             FROM measures WHERE seq BETWEEN ?1 AND ?2 AND conversation = ?3
               AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
             ORDER BY seq",
        )?;
        let mut rows = stmt.query(rusqlite::params![lo, hi, conv.seq])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let Some(&index) = at.get(&r.get::<_, i64>(0)?) else {
                continue;
            };
            let n = |i: usize| -> rusqlite::Result<u64> {
                Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0).max(0) as u64)
            };
            out.push(PathUsage {
                index,
                model: r.get(1)?,
                usage: crate::model::Usage {
                    input_tokens: n(2)?,
                    output_tokens: n(3)?,
                    cache_read_input_tokens: n(4)?,
                    cache_creation_input_tokens: n(5)?,
                    cache_creation_1h_input_tokens: n(6)?,
                    requests: n(7)?,
                    precision: 0,
                    web_search_requests: n(9)?,
                },
                created_at: r.get(8)?,
            });
        }
        out.sort_by_key(|p| p.index);
        Ok(out)
    }
}

impl Store {
    /// Each conversation's project (the folder its harness ran in), where it has one: conversation id → project.
    pub fn projects(&self) -> Result<HashMap<String, String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, project FROM conversations WHERE project IS NOT NULL")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
