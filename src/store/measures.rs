//! What each message measures, stored beside it: its token estimate by kind, its plain text's length, its tool
//! calls and errors ([`crate::tokens::Measure`]), and what its provider measured (model, usage).
//!
//! Why a table of its own: a figure over a 100k-message path (the context breakdown, a rung's savings, a replay of
//! every measured reply) is a sum of these numbers, and reading them must not walk past the bodies. The rows are
//! narrow and keyed by the message's row number, so a path's measures are one range scan. A fork's copies get
//! copies of their body's row.

use std::sync::Arc;

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::Value;

use super::paths::Head;
use super::{Result, Store, conv_row};
use crate::model::{NewMessage, Usage, model_of};
use crate::tokens::{Measure, Tokenizer, measure};

/// A message's stored measures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub measure: Measure,
    /// The model that wrote it (replies), where the harness recorded it.
    pub model: Option<Arc<str>>,
    /// What the provider measured for the request that produced it (replies).
    pub usage: Option<Usage>,
    pub created_at: i64,
    /// The usage is of a call made beside the path, not of a request the path was sent: a harness's compaction
    /// marker carrying its summarising call (OpenHands' condenser). Priced with the rest; never a measured prompt.
    pub beside: bool,
}

impl Facts {
    /// The prompt tokens the provider counted for the request that produced this reply: uncached input, cache
    /// reads and cache writes (zero, a sum of several requests, or a call beside the path counts as not measured).
    pub fn measured_input(&self) -> Option<u64> {
        self.usage
            .filter(|u| u.is_one_request() && !self.beside)
            .map(|u| u.prompt())
            .filter(|&n| n > 0)
    }
}

const COLUMNS: &str = "text, tool_use, tool_result, image, thinking, other, chars, images, image_bytes, \
    large_results, large_result_tokens, large_result_images, large_result_image_tokens, \
    large_result_image_bytes, tool_calls, tool_errors, tool_refs, model, input_tokens, output_tokens, \
    cache_read_tokens, cache_write_tokens, created_at, large_result_chars, cache_write_1h_tokens, requests, \
    usage_precision";

/// Writes the measures of a message just inserted as row `seq`.
pub(crate) fn insert(
    tx: &Transaction<'_>,
    seq: i64,
    conversation: i64,
    m: &NewMessage,
    me: &Measure,
    flags: i64,
    created_at: i64,
) -> Result<()> {
    // a reply served at another speed is priced, and so summed, apart (`claude-opus-4-8@fast`)
    let priced = crate::models::priced_model(&m.meta);
    let model = priced.as_deref();
    let compaction = crate::model::CairnMeta::kind(&m.meta) == Some(crate::model::KIND_COMPACTION);
    write(
        tx,
        MeasureRow {
            seq,
            conversation,
            me,
            model,
            usage: m.usage.as_ref(),
            created_at,
            flagged: Some((flags, compaction)),
        },
    )?;
    // the day's usage roll-up (what `stats` sums): a reply counts once, where it was written
    let u = m.usage.unwrap_or_default();
    let turn = super::paths::counts_as_turn(flags);
    tx.prepare_cached(
        "INSERT INTO usage_days (day, conversation, model, messages, turns, compactions, input, output,
                                 cache_read, cache_write, measured, tool_calls, tool_errors, first, last,
                                 cache_write_1h)
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13, ?14)
         ON CONFLICT (day, conversation, model) DO UPDATE SET
            messages = messages + 1, turns = turns + excluded.turns,
            compactions = compactions + excluded.compactions, input = input + excluded.input,
            output = output + excluded.output, cache_read = cache_read + excluded.cache_read,
            cache_write = cache_write + excluded.cache_write, measured = measured + excluded.measured,
            cache_write_1h = cache_write_1h + excluded.cache_write_1h,
            tool_calls = tool_calls + excluded.tool_calls, tool_errors = tool_errors + excluded.tool_errors,
            first = min(first, excluded.first), last = max(last, excluded.last)",
    )?
    .execute(params![
        created_at.div_euclid(86_400_000),
        conversation,
        model.unwrap_or(""),
        turn,
        compaction,
        u.input_tokens as i64,
        u.output_tokens as i64,
        u.cache_read_input_tokens as i64,
        u.cache_creation_input_tokens as i64,
        m.usage.is_some(),
        me.tool_calls as i64,
        me.tool_errors as i64,
        created_at,
        u.cache_creation_1h_input_tokens as i64
    ])?;
    // the hour's roll-up of measured replies (what `stats` prices: a sum per model and hour, and the largest prompt)
    if let Some(u) = m.usage {
        tx.prepare_cached(
            "INSERT INTO usage_hours (hour, conversation, model, replies, input, output, cache_read, cache_write,
                                      cache_write_1h, max_prompt, web_searches)
             VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (hour, conversation, model) DO UPDATE SET replies = replies + 1,
                input = input + excluded.input, output = output + excluded.output,
                cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
                cache_write_1h = cache_write_1h + excluded.cache_write_1h,
                max_prompt = max(max_prompt, excluded.max_prompt),
                web_searches = web_searches + excluded.web_searches",
        )?
        .execute(params![
            created_at.div_euclid(3_600_000),
            conversation,
            model.unwrap_or(""),
            u.input_tokens as i64,
            u.output_tokens as i64,
            u.cache_read_input_tokens as i64,
            u.cache_creation_input_tokens as i64,
            u.cache_creation_1h_input_tokens as i64,
            u.prompt_per_request() as i64,
            u.web_search_requests as i64
        ])?;
    }
    if let Some(model) = model {
        // a sum of requests measures no one prompt
        let prompt = m
            .usage
            .filter(Usage::is_one_request)
            .map_or(0, |u| u.prompt());
        tx.prepare_cached(
            "INSERT INTO models_seen (model, replies, measured, max_prompt, first, last)
             VALUES (?1, 1, ?2, ?3, ?4, ?4)
             ON CONFLICT (model) DO UPDATE SET replies = replies + 1, measured = measured + excluded.measured,
                max_prompt = max(max_prompt, excluded.max_prompt), first = min(first, excluded.first),
                last = max(last, excluded.last)",
        )?
        .execute(params![model, m.usage.is_some(), prompt as i64, created_at])?;
    }
    Ok(())
}

/// A reply the store holds, read again with the prompt figures its harness wrote only later (GitHub Copilot CLI
/// writes a run's prompt totals when the run ends), or with a running total that has grown since (Droid keeps a
/// session's totals in one place, rewritten as it goes on; the reader sets them on the session's first reply as
/// a sum of requests): its measures, and the roll-ups `stats` sums, take the new usage in place of
/// the old. The body keeps what it was written with: bodies are never rewritten; every figure reads the measures.
/// Returns whether anything changed.
pub(crate) fn late_usage(tx: &Transaction<'_>, seq: i64, new: &Usage) -> Result<bool> {
    let Some(old) = StoredUsage::read(tx, seq)? else {
        return Ok(false);
    };
    if !old.takes(new) {
        return Ok(false);
    }
    let n = |v: u64| v as i64;
    let had = old.output.is_some();
    let d = [
        n(new.input_tokens) - old.input,
        n(new.output_tokens) - old.output.unwrap_or(0),
        n(new.cache_read_input_tokens) - old.cache_read,
        n(new.cache_creation_input_tokens) - old.cache_write,
        n(new.cache_creation_1h_input_tokens) - old.cache_write_1h,
        n(new.web_search_requests) - old.web_searches,
    ];
    tx.execute(
        "UPDATE measures SET input_tokens = ?2, output_tokens = ?3, cache_read_tokens = ?4,
            cache_write_tokens = ?5, cache_write_1h_tokens = ?6, requests = ?7, usage_precision = ?8,
            web_searches = ?9 WHERE seq = ?1",
        params![
            seq,
            n(new.input_tokens),
            n(new.output_tokens),
            n(new.cache_read_input_tokens),
            n(new.cache_creation_input_tokens),
            n(new.cache_creation_1h_input_tokens),
            Some(n(new.requests)).filter(|&r| r > 1),
            Some(n(new.precision)).filter(|&p| p > 1),
            Some(n(new.web_search_requests)).filter(|&w| w > 0)
        ],
    )?;
    let model = old.model.unwrap_or_default();
    tx.execute(
        "UPDATE usage_days SET input = input + ?1, output = output + ?2, cache_read = cache_read + ?3,
            cache_write = cache_write + ?4, cache_write_1h = cache_write_1h + ?5, measured = measured + ?6
         WHERE day = ?7 AND conversation = ?8 AND model = ?9",
        params![
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            !had,
            old.created.div_euclid(86_400_000),
            old.conversation,
            model
        ],
    )?;
    tx.execute(
        "INSERT INTO usage_hours (hour, conversation, model, replies, input, output, cache_read, cache_write,
                                  cache_write_1h, max_prompt, web_searches)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (hour, conversation, model) DO UPDATE SET replies = replies + excluded.replies,
            input = input + excluded.input, output = output + excluded.output,
            cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
            cache_write_1h = cache_write_1h + excluded.cache_write_1h,
            max_prompt = max(max_prompt, excluded.max_prompt),
            web_searches = web_searches + excluded.web_searches",
        params![
            old.created.div_euclid(3_600_000),
            old.conversation,
            model,
            !had,
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            n(new.prompt_per_request()),
            d[5]
        ],
    )?;
    if new.is_one_request() && !model.is_empty() {
        tx.execute(
            "UPDATE models_seen SET max_prompt = max(max_prompt, ?2), measured = measured + ?3 WHERE model = ?1",
            params![model, n(new.prompt()), !had],
        )?;
    }
    Ok(true)
}

/// What [`late_usage`] reads of a stored reply.
struct StoredUsage {
    conversation: i64,
    model: Option<String>,
    created: i64,
    output: Option<i64>,
    input: i64,
    cache_read: i64,
    cache_write: i64,
    cache_write_1h: i64,
    requests: i64,
    web_searches: i64,
}

impl StoredUsage {
    fn read(tx: &Transaction<'_>, seq: i64) -> Result<Option<StoredUsage>> {
        Ok(tx
            .query_row(
                "SELECT conversation, model, created_at, output_tokens, coalesce(input_tokens, 0),
                        coalesce(cache_read_tokens, 0), coalesce(cache_write_tokens, 0),
                        coalesce(cache_write_1h_tokens, 0), coalesce(requests, 1), coalesce(web_searches, 0)
                 FROM measures WHERE seq = ?1 AND copy = 0",
                [seq],
                |r| {
                    Ok(StoredUsage {
                        conversation: r.get(0)?,
                        model: r.get(1)?,
                        created: r.get(2)?,
                        output: r.get(3)?,
                        input: r.get(4)?,
                        cache_read: r.get(5)?,
                        cache_write: r.get(6)?,
                        cache_write_1h: r.get(7)?,
                        requests: r.get(8)?,
                        web_searches: r.get(9)?,
                    })
                },
            )
            .optional()?)
    }

    /// Whether usage read later replaces this: a reply whose stored usage counted no prompt takes figures read
    /// later; a running total (a sum of requests, which only grows), a larger one: over more requests, or the
    /// same ones' totals written after their lines.
    fn takes(&self, new: &Usage) -> bool {
        let n = |v: u64| v as i64;
        let prompt = self.input + self.cache_read + self.cache_write;
        let grown_total = self.requests > 1
            && n(new.requests) >= self.requests
            && n(new.prompt()) + n(new.output_tokens) > prompt + self.output.unwrap_or(0)
            && n(new.prompt()) >= prompt;
        new.prompt() > 0 && (prompt == 0 || grown_total)
    }
}

/// One message's row of measures.
struct MeasureRow<'a> {
    seq: i64,
    conversation: i64,
    me: &'a Measure,
    model: Option<&'a str>,
    usage: Option<&'a Usage>,
    created_at: i64,
    /// The message's drawing flags, and whether it is a compaction marker (`None`: a store from before
    /// measures kept them, migrated step by step).
    flagged: Option<(i64, bool)>,
}

fn write(tx: &Transaction<'_>, row: MeasureRow<'_>) -> Result<()> {
    let n = |v: u64| v as i64;
    let MeasureRow {
        seq,
        conversation,
        me,
        model,
        usage,
        created_at,
        flagged,
    } = row;
    let (columns, values) = match flagged {
        Some(_) => (", flags, compaction", ", ?30, ?31"),
        None => ("", ""),
    };
    let (flags, compaction) = flagged.unwrap_or_default();
    let row = params![
        seq,
        conversation,
        n(me.text),
        n(me.tool_use),
        n(me.tool_result),
        n(me.image),
        n(me.thinking),
        n(me.other),
        n(me.chars),
        n(me.images),
        n(me.image_bytes),
        n(me.large_results),
        n(me.large_result_tokens),
        n(me.large_result_images),
        n(me.large_result_image_tokens),
        n(me.large_result_image_bytes),
        n(me.tool_calls),
        n(me.tool_errors),
        n(me.tool_refs),
        model,
        usage.map(|u| n(u.input_tokens)),
        usage.map(|u| n(u.output_tokens)),
        usage.map(|u| n(u.cache_read_input_tokens)),
        usage.map(|u| n(u.cache_creation_input_tokens)),
        created_at,
        n(me.large_result_chars),
        usage.map(|u| n(u.cache_creation_1h_input_tokens)),
        usage.map(|u| n(u.requests)).filter(|&r| r > 1),
        usage.map(|u| n(u.precision)).filter(|&p| p > 1),
        flags,
        compaction,
    ];
    let keep = if flagged.is_some() {
        row.len()
    } else {
        row.len() - 2
    };
    tx.prepare_cached(&format!(
        "INSERT INTO measures (seq, conversation, {COLUMNS}{columns})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                 ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29{values})"
    ))?
    .execute(&row[..keep])?;
    if let Some(w) = usage.map(|u| n(u.web_search_requests)).filter(|&w| w > 0) {
        tx.prepare_cached("UPDATE measures SET web_searches = ?2 WHERE seq = ?1")?
            .execute(params![seq, w])?;
    }
    Ok(())
}

/// Copies the measures of `from` rows to new rows (a fork's copies), as `(old seq, new seq)` pairs in JSON.
pub(crate) fn copy(tx: &Transaction<'_>, conversation: i64, pairs_json: &str) -> Result<()> {
    tx.execute(
        &format!(
            "INSERT INTO measures (seq, conversation, copy, flags, compaction, web_searches, {COLUMNS})
             SELECT p.value ->> 1, ?1, 1, flags, compaction, web_searches, {COLUMNS}
             FROM json_each(?2) p JOIN measures m ON m.seq = p.value ->> 0"
        ),
        params![conversation, pairs_json],
    )?;
    Ok(())
}

/// A message's facts from its `model` and `packed` cells (schema v13: the 26 numbers in [`COLUMNS`]' order, model
/// aside, comma-separated, an empty field for a NULL). A cell that does not parse reads as zero (the store writes
/// only integers there).
fn packed_facts(model: Option<Arc<str>>, packed: &str) -> Facts {
    let v = unpack::<26>(packed);
    let g = |i: usize| v[i].unwrap_or(0).max(0) as u64;
    let opt = |i: usize| v[i].map(|x| x.max(0) as u64);
    let usage = match (opt(17), opt(18), opt(19), opt(20)) {
        (None, None, None, None) => None,
        (i, o, cr, cw) => Some(Usage {
            input_tokens: i.unwrap_or(0),
            output_tokens: o.unwrap_or(0),
            cache_read_input_tokens: cr.unwrap_or(0),
            cache_creation_input_tokens: cw.unwrap_or(0),
            cache_creation_1h_input_tokens: g(23),
            requests: g(24),
            precision: g(25),
            // not in the packed cell: read beside it ([`row_facts`])
            web_search_requests: 0,
        }),
    };
    Facts {
        // the packed cell's columns: the measure's, with `large_result_chars` added later at 22
        measure: Measure::from_numbers([
            g(0),
            g(1),
            g(2),
            g(3),
            g(4),
            g(5),
            g(6),
            g(7),
            g(8),
            g(9),
            g(10),
            g(11),
            g(12),
            g(13),
            g(22),
            g(14),
            g(15),
            g(16),
        ]),
        model,
        usage,
        created_at: v[21].unwrap_or(0),
        beside: false,
    }
}

/// The comma-separated integers of a packed cell, an empty field as `None`: read a byte at a time (this is the
/// inner loop of every figure over a long path; `str::parse` per field costs twice the whole row's read).
pub(super) fn unpack<const N: usize>(packed: &str) -> [Option<i64>; N] {
    let mut v = [None; N];
    let (mut at, mut cur, mut negative) = (0usize, None::<i64>, false);
    let mut close = |at: usize, cur: Option<i64>, negative: bool| {
        if let Some(slot) = v.get_mut(at) {
            *slot = cur.map(|x| if negative { -x } else { x });
        }
    };
    for &b in packed.as_bytes() {
        match b {
            b',' => {
                close(at, cur, negative);
                (at, cur, negative) = (at + 1, None, false);
            }
            b'-' => negative = true,
            b'0'..=b'9' => {
                let digit = i64::from(b - b'0');
                cur = Some(cur.unwrap_or(0).saturating_mul(10).saturating_add(digit));
            }
            _ => {}
        }
    }
    close(at, cur, negative);
    v
}

/// The model names of the measures read together, one string each: a path's replies repeat a few names tens of
/// thousands of times.
#[derive(Default)]
struct ModelNames(Vec<Arc<str>>);

impl ModelNames {
    fn of(&mut self, name: &str) -> Arc<str> {
        match self.0.iter().find(|n| &***n == name) {
            Some(n) => n.clone(),
            None => {
                let n: Arc<str> = Arc::from(name);
                self.0.push(n.clone());
                n
            }
        }
    }
}

fn row_facts(r: &rusqlite::Row<'_>, at: usize, names: &mut ModelNames) -> rusqlite::Result<Facts> {
    let packed = r.get_ref(at + 1)?.as_str().unwrap_or_default();
    let model = match r.get_ref(at)? {
        rusqlite::types::ValueRef::Null => None,
        v => Some(names.of(v.as_str()?)),
    };
    let mut facts = packed_facts(model, packed);
    // web searches (v17), a column beside the packed cell: rebuilding the table to pack them is not worth it
    if let (Some(u), Some(n)) = (facts.usage.as_mut(), r.get::<_, Option<i64>>(at + 2)?) {
        u.web_search_requests = n.max(0) as u64;
    }
    Ok(facts)
}

impl Store {
    /// The stored measures of the given heads (a path, or any heads of one conversation), in their order. Rows
    /// in write order are read with one range scan.
    pub fn facts(&self, conversation: &str, heads: &[Head]) -> Result<Vec<Facts>> {
        let mut out = self.stored_facts(conversation, heads)?;
        // a compaction marker's usage is its summarising call's: beside the path
        for (f, h) in out.iter_mut().zip(heads) {
            f.beside = h.is_compaction();
        }
        Ok(out)
    }

    fn stored_facts(&self, conversation: &str, heads: &[Head]) -> Result<Vec<Facts>> {
        let conv = conv_row(&self.conn, conversation)?;
        let mut out = Vec::with_capacity(heads.len());
        let ascending = heads.windows(2).all(|w| w[0].seq < w[1].seq);
        if let (true, Some(first), Some(last)) = (ascending, heads.first(), heads.last()) {
            // a path written in a row (most are) is read along the table itself; one whose range other
            // conversations' rows fill mostly, through the conversation's index (a lookup in the table per row)
            let dense = ((last.seq - first.seq) as u64) < 2 * heads.len() as u64;
            let mut stmt = self.conn.prepare_cached(if dense {
                "SELECT seq, model, packed, web_searches FROM measures
                 WHERE seq BETWEEN ?1 AND ?2 AND +conversation = ?3 ORDER BY seq"
            } else {
                "SELECT seq, model, packed, web_searches FROM measures
                 WHERE seq BETWEEN ?1 AND ?2 AND conversation = ?3 ORDER BY seq"
            })?;
            let mut rows = stmt.query(params![first.seq, last.seq, conv.seq])?;
            let mut want = heads.iter().peekable();
            let mut names = ModelNames::default();
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                // a message stored without measures (it cannot be: every insert writes them) reads as zeros
                while want.peek().is_some_and(|h| h.seq < seq) {
                    want.next();
                    out.push(Facts::default());
                }
                if want.peek().is_some_and(|h| h.seq == seq) {
                    want.next();
                    out.push(row_facts(r, 1, &mut names)?);
                }
            }
            out.extend(want.map(|_| Facts::default()));
            return Ok(out);
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, model, packed, web_searches FROM measures WHERE seq = ?1",
        )?;
        let mut names = ModelNames::default();
        for h in heads {
            out.push(
                stmt.query_row([h.seq], |r| row_facts(r, 1, &mut names))
                    .optional()?
                    .unwrap_or_default(),
            );
        }
        Ok(out)
    }

    /// A value derived from the whole store and kept in it (e.g. a fitted calibration), by key.
    pub fn value(&self, key: &str) -> Result<Option<Value>> {
        let v: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM store_values WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        Ok(v.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Sets a derived value (see [`Store::value`]).
    pub fn set_value(&mut self, key: &str, value: &Value) -> Result<()> {
        let tx = self.write_tx()?;
        tx.execute(SET_VALUE, params![key, value.to_string()])?;
        tx.commit()?;
        Ok(())
    }

    /// Keeps a value a read command derived and would otherwise derive again (what a path's measurements chose),
    /// beside the store's own: a cache ([`Store::keep_derived`]), written in its own statement.
    pub(crate) fn keep_value(&self, key: &str, value: &Value) -> Result<()> {
        self.keep_derived(|conn| {
            conn.execute(SET_VALUE, params![key, value.to_string()])
                .map(drop)
        })
    }
}

const SET_VALUE: &str = "INSERT INTO store_values (key, value) VALUES (?1, ?2)
                         ON CONFLICT(key) DO UPDATE SET value = excluded.value";

/// Schema v4: measures for every row already stored (bodies decoded once; a body that cannot be decoded is
/// measured as empty rather than stopping the migration), then the fork copies from their bodies' rows.
pub(crate) fn backfill(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    type Stored = (i64, i64, String, Option<String>, Option<String>, i64);
    let rows: Vec<Stored> = {
        let mut stmt = tx.prepare(
            "SELECT seq, conversation, content, meta, usage, created_at FROM messages
             WHERE content IS NOT NULL ORDER BY seq",
        )?;
        stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    for (seq, conversation, content, meta, usage, created_at) in rows {
        let blocks = serde_json::from_str::<Value>(&content)
            .ok()
            .and_then(|v| crate::wire::blocks_from_value(v, "content").ok())
            .unwrap_or_default();
        let meta: Value = meta
            .and_then(|m| serde_json::from_str(&m).ok())
            .unwrap_or(Value::Null);
        let usage: Option<Usage> = usage.and_then(|u| serde_json::from_str(&u).ok());
        let mut me = crate::models::measure(
            &blocks,
            model_of(&meta),
            usage.as_ref(),
            Tokenizer::Estimate,
        );
        // stored images: their bytes are the blob's size
        for b in &blocks {
            for img in b.images() {
                if let crate::model::Block::Image {
                    data: crate::model::ImageData::Blob { hash, .. },
                    ..
                } = img
                {
                    let size: i64 = tx
                        .query_row("SELECT size FROM blobs WHERE hash = ?1", [hash], |r| {
                            r.get(0)
                        })
                        .optional()?
                        .unwrap_or(0);
                    me.image_bytes += size.max(0) as u64;
                    if matches!(
                        b,
                        crate::model::Block::ToolResult {
                            is_error: false,
                            ..
                        }
                    ) && crate::tokens::block(b) > crate::tokens::LARGE_RESULT_TOKENS
                    {
                        me.large_result_image_bytes += size.max(0) as u64;
                    }
                }
            }
        }
        // (flags and compaction: the later migration that adds them fills them in)
        write(
            tx,
            MeasureRow {
                seq,
                conversation,
                me: &me,
                model: crate::models::priced_model(&meta).as_deref(),
                usage: usage.as_ref(),
                created_at,
                flagged: None,
            },
        )
        .map_err(|e| match e {
            super::StoreError::Sqlite(e) => e,
            other => rusqlite::Error::ToSqlConversionFailure(other.to_string().into()),
        })?;
    }
    tx.execute(
        &format!(
            "INSERT INTO measures (seq, conversation, {COLUMNS})
             SELECT m.seq, m.conversation, {} FROM messages m JOIN measures b ON b.seq = m.body_of
             WHERE m.body_of IS NOT NULL ORDER BY m.seq",
            COLUMNS
                .split(", ")
                .map(|c| format!("b.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [],
    )?;
    Ok(())
}

/// v7: the characters of each message's large successful tool results (what a snapshot of an elided message does
/// not draw): the column, where v4 did not create it, and its figure for the rows that have such results, read from
/// their bodies (a fork's copy from its body's row).
pub(crate) fn backfill_large_result_chars(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_column(
        tx,
        "measures",
        "large_result_chars INTEGER NOT NULL DEFAULT 0",
    )?;
    let rows: Vec<(i64, String)> = {
        let mut stmt = tx.prepare(
            "SELECT m.seq, coalesce(b.content, x.content) FROM measures m
             JOIN messages x ON x.seq = m.seq LEFT JOIN messages b ON b.seq = x.body_of
             WHERE m.large_results > 0 AND coalesce(b.content, x.content) IS NOT NULL",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut update = tx.prepare("UPDATE measures SET large_result_chars = ?1 WHERE seq = ?2")?;
    for (seq, content) in rows {
        let blocks = serde_json::from_str::<Value>(&content)
            .ok()
            .and_then(|v| crate::wire::blocks_from_value(v, "content").ok())
            .unwrap_or_default();
        update.execute(params![measure(&blocks).large_result_chars as i64, seq])?;
    }
    Ok(())
}

/// Adds a column (`name TYPE ...`) to a table made before it; nothing when the table has it (a store created at a
/// later version made it with the table).
fn add_column(tx: &Transaction<'_>, table: &str, column: &str) -> rusqlite::Result<()> {
    let name = column.split(' ').next().unwrap_or(column);
    let has: bool = tx.query_row(
        &format!("SELECT count(*) > 0 FROM pragma_table_info('{table}') WHERE name = ?1"),
        [name],
        |r| r.get(0),
    )?;
    if !has {
        tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column}"))?;
    }
    Ok(())
}

/// v12: the thinking a reply holds but does not show ([`crate::tokens::hidden_thinking`]: a thinking block kept
/// only as its signature), measured from the reply's output tokens, for the replies stored before it was counted;
/// the message's estimate with it.
pub(crate) fn backfill_hidden_thinking(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_hidden_thinking(
        tx,
        r#"coalesce(x.usage, b.usage) IS NOT NULL AND coalesce(b.content, x.content) LIKE '%"thinking":""%'"#,
    )
}

/// v14: signed thinking counts whole where a summary shows too ([`crate::tokens::hidden_thinking`]), for the
/// replies stored before.
pub(crate) fn backfill_signed_thinking(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_hidden_thinking(
        tx,
        r#"coalesce(x.usage, b.usage) IS NOT NULL AND coalesce(b.content, x.content) LIKE '%"signature":"%'"#,
    )
}

/// v15: thinking no provider signed is never sent again ([`crate::tokens::block_with`]: Gemini CLI keeps its
/// thoughts out of the history it sends), for the messages stored before.
pub(crate) fn backfill_unsigned_thinking(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_hidden_thinking(
        tx,
        r#"m.thinking > 0 AND coalesce(b.content, x.content) LIKE '%"type":"thinking"%'"#,
    )
}

/// Sets the thinking of the messages matching `rows` (SQL over measures `m`, the message `x` and its body `b`) to
/// what a write measures now, hidden thinking included, and moves their heads' estimates by as much: the figure a
/// write makes, however often it runs (a row measured so already is left as it is).
fn add_hidden_thinking(tx: &Transaction<'_>, rows: &str) -> rusqlite::Result<()> {
    type Row = (i64, String, Option<String>, Option<String>, i64);
    let rows: Vec<Row> = {
        let mut stmt = tx.prepare(&format!(
            r#"SELECT m.seq, coalesce(b.content, x.content), coalesce(x.usage, b.usage), m.model, m.thinking
               FROM measures m JOIN messages x ON x.seq = m.seq LEFT JOIN messages b ON b.seq = x.body_of
               WHERE {rows}"#
        ))?;
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let mut measures = tx.prepare("UPDATE measures SET thinking = ?1 WHERE seq = ?2")?;
    let mut messages = tx.prepare("UPDATE messages SET tokens = tokens + ?1 WHERE seq = ?2")?;
    for (seq, content, usage, model, stored) in rows {
        let blocks = serde_json::from_str::<Value>(&content)
            .ok()
            .and_then(|v| crate::wire::blocks_from_value(v, "content").ok())
            .unwrap_or_default();
        let usage: Option<Usage> = usage.and_then(|u| serde_json::from_str(&u).ok());
        let scale = model.as_deref().map_or(1.0, crate::models::default_scale);
        let shown = measure(&blocks);
        let want = (shown.thinking
            + crate::tokens::hidden_thinking(&blocks, usage.as_ref(), &shown, scale))
            as i64;
        if want != stored {
            measures.execute(params![want, seq])?;
            messages.execute(params![want - stored, seq])?;
        }
    }
    Ok(())
}

/// v11: the column of the unit a harness rounded a reply's counts to, where the table was made before it (every
/// reply stored before it is read as exact: a store imported again gets it).
pub(crate) fn backfill_precision(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_column(tx, "measures", "usage_precision INTEGER")
}

/// v9: the column of how many requests a reply's usage sums, where the table was made before it (every reply
/// stored before it is one request's).
pub(crate) fn backfill_requests(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_column(tx, "measures", "requests INTEGER")
}

/// v8: the columns of 1-hour cache writes where the tables were made before them, and their figures for the
/// replies already stored, from the usage the harness recorded (Claude Code's
/// `cache_creation.ephemeral_1h_input_tokens`, kept in each reply's lines); then the hourly roll-up of measured
/// replies `stats` prices (`usage_hours`), filled from the measures.
pub(crate) fn backfill_cache_lifetimes(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_column(tx, "measures", "cache_write_1h_tokens INTEGER")?;
    add_column(
        tx,
        "usage_days",
        "cache_write_1h INTEGER NOT NULL DEFAULT 0",
    )?;
    tx.execute_batch(
        "UPDATE measures SET cache_write_1h_tokens = (
             SELECT max(coalesce(json_extract(l.value, '$.message.usage.cache_creation.ephemeral_1h_input_tokens'),
                                 0))
             FROM messages x JOIN messages b ON b.seq = coalesce(x.body_of, x.seq),
                  json_each(CASE WHEN json_valid(b.meta) THEN b.meta ELSE '{}' END, '$.lines') l
             WHERE x.seq = measures.seq)
         WHERE coalesce(cache_write_tokens, 0) > 0;
         UPDATE usage_days SET cache_write_1h = coalesce((
             SELECT sum(coalesce(m.cache_write_1h_tokens, 0)) FROM measures m
             WHERE m.copy = 0 AND m.conversation = usage_days.conversation
               AND m.created_at / 86400000 = usage_days.day AND coalesce(m.model, '') = usage_days.model), 0);
         DROP TABLE IF EXISTS usage_hours;
         CREATE TABLE usage_hours (
             hour INTEGER NOT NULL,
             conversation INTEGER NOT NULL REFERENCES conversations(seq),
             model TEXT NOT NULL DEFAULT '',
             replies INTEGER NOT NULL DEFAULT 0,
             input INTEGER NOT NULL DEFAULT 0,
             output INTEGER NOT NULL DEFAULT 0,
             cache_read INTEGER NOT NULL DEFAULT 0,
             cache_write INTEGER NOT NULL DEFAULT 0,
             cache_write_1h INTEGER NOT NULL DEFAULT 0,
             max_prompt INTEGER NOT NULL DEFAULT 0,
             PRIMARY KEY (hour, conversation, model)
         ) WITHOUT ROWID;
         INSERT INTO usage_hours
         SELECT created_at / 3600000, conversation, coalesce(model, ''), count(*), sum(input_tokens),
                sum(coalesce(output_tokens, 0)), sum(coalesce(cache_read_tokens, 0)),
                sum(coalesce(cache_write_tokens, 0)), sum(coalesce(cache_write_1h_tokens, 0)),
                max(input_tokens + coalesce(cache_read_tokens, 0) + coalesce(cache_write_tokens, 0))
         FROM measures WHERE copy = 0 AND input_tokens IS NOT NULL GROUP BY 1, 2, 3;",
    )
}

/// v16: a reply served in Anthropic's fast mode (the `usage.speed: "fast"` Claude Code keeps in each reply's lines)
/// is measured as its model at that speed (`claude-opus-4-8@fast`, [`crate::models::priced_model`]), priced and
/// summed apart; where the store holds such replies, the roll-ups `stats` prices are summed again from the
/// measures (`models_seen` keeps them under the name they were recorded with: `cairn models` groups by model).
pub(crate) fn backfill_speeds(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let changed = tx.execute(
        "UPDATE measures SET model = model || '@fast'
         WHERE model IS NOT NULL AND instr(model, '@') = 0 AND seq IN (
             SELECT x.seq FROM messages x JOIN messages b ON b.seq = coalesce(x.body_of, x.seq)
             WHERE instr(b.meta, '\"speed\":\"fast\"') > 0 AND EXISTS (
                 SELECT 1 FROM json_each(CASE WHEN json_valid(b.meta) THEN b.meta ELSE '{}' END, '$.lines') l
                 WHERE json_extract(l.value, '$.message.usage.speed') = 'fast'))",
        [],
    )?;
    if changed == 0 {
        return Ok(());
    }
    resum_rollups(tx)
}

/// The roll-ups `stats` sums (by day) and prices (by hour), summed again from the measures.
fn resum_rollups(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    resum_rollups_where(tx, "1")
}

/// The roll-ups of the rows that `filter` (SQL on a measure's and a roll-up's `conversation`) selects.
pub(super) fn resum_rollups_where(tx: &Transaction<'_>, filter: &str) -> rusqlite::Result<()> {
    let turn = super::paths::TURN_SQL;
    tx.execute_batch(&format!(
        "DELETE FROM usage_days WHERE {filter};
         INSERT INTO usage_days (day, conversation, model, messages, turns, compactions, input, output, cache_read,
                                 cache_write, cache_write_1h, measured, tool_calls, tool_errors, first, last)
         SELECT created_at / 86400000, conversation, coalesce(model, ''), count(*),
                sum({turn}), sum(compaction),
                sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)),
                sum(coalesce(cache_read_tokens, 0)), sum(coalesce(cache_write_tokens, 0)),
                sum(coalesce(cache_write_1h_tokens, 0)), count(input_tokens), sum(tool_calls), sum(tool_errors),
                min(created_at), max(created_at)
         FROM measures WHERE copy = 0 AND {filter} GROUP BY 1, 2, 3;
         DELETE FROM usage_hours WHERE {filter};
         INSERT INTO usage_hours (hour, conversation, model, replies, input, output, cache_read, cache_write,
                                  cache_write_1h, max_prompt)
         SELECT created_at / 3600000, conversation, coalesce(model, ''), count(*), sum(input_tokens),
                sum(coalesce(output_tokens, 0)), sum(coalesce(cache_read_tokens, 0)),
                sum(coalesce(cache_write_tokens, 0)), sum(coalesce(cache_write_1h_tokens, 0)),
                max((input_tokens + coalesce(cache_read_tokens, 0) + coalesce(cache_write_tokens, 0))
                    / max(coalesce(requests, 1), 1))
         FROM measures WHERE copy = 0 AND input_tokens IS NOT NULL AND {filter} GROUP BY 1, 2, 3;",
    ))
}

/// v17: the web searches a provider ran for each reply (priced per search), in a column of the measures and of the
/// hourly roll-up `stats` prices, where the tables were made before them; their figures for the replies already
/// stored, from the usage the harness recorded (Claude Code's `server_tool_use.web_search_requests`, kept in each
/// reply's lines). A reply of another harness stored before gets them when its session is imported again.
pub(crate) fn backfill_web_searches(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_column(tx, "measures", "web_searches INTEGER")?;
    add_column(tx, "usage_hours", "web_searches INTEGER NOT NULL DEFAULT 0")?;
    tx.execute_batch(
        "UPDATE measures SET web_searches = (
             SELECT max(coalesce(json_extract(l.value, '$.message.usage.server_tool_use.web_search_requests'), 0))
             FROM messages x JOIN messages b ON b.seq = coalesce(x.body_of, x.seq),
                  json_each(CASE WHEN json_valid(b.meta) THEN b.meta ELSE '{}' END, '$.lines') l
             WHERE x.seq = measures.seq)
         WHERE input_tokens IS NOT NULL AND web_searches IS NULL AND seq IN (
             SELECT x.seq FROM messages x JOIN messages b ON b.seq = coalesce(x.body_of, x.seq)
             WHERE b.meta GLOB '*\"web_search_requests\":[1-9]*');
         UPDATE measures SET web_searches = NULL WHERE web_searches = 0;",
    )?;
    resum_web_searches(tx)
}

/// The hourly roll-up's web searches, summed again from the measures (where any reply counted one).
fn resum_web_searches(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    resum_web_searches_where(tx, "1")
}

/// The web searches of the hourly roll-up's rows that `filter` (SQL on its `conversation`) selects
/// ([`resum_web_searches`]).
pub(super) fn resum_web_searches_where(tx: &Transaction<'_>, filter: &str) -> rusqlite::Result<()> {
    tx.execute_batch(&format!(
        "UPDATE usage_hours SET web_searches = coalesce((
             SELECT sum(m.web_searches) FROM measures m
             WHERE m.copy = 0 AND m.conversation = usage_hours.conversation AND m.input_tokens IS NOT NULL
               AND m.created_at / 3600000 = usage_hours.hour AND coalesce(m.model, '') = usage_hours.model), 0)
         WHERE {filter} AND EXISTS (SELECT 1 FROM measures WHERE web_searches IS NOT NULL);",
    ))
}

/// v18: a Codex reply stored before the tier of its thread was read (`thread_settings_applied`, a `turn_context`
/// naming one, kept in the conversation's records) is measured as its model at that tier (`gpt-5.5@priority`),
/// priced and summed apart, as [`backfill_speeds`] did for Claude Code's fast mode; the roll-ups are summed again
/// where any changed.
pub(crate) fn backfill_codex_tiers(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let convs: Vec<(i64, String)> = {
        let mut stmt = tx.prepare(
            "SELECT seq, meta FROM conversations
             WHERE json_valid(meta) AND json_extract(meta, '$.source') = 'codex'
               AND (instr(meta, '\"service_tier\":\"priority\"') > 0
                    OR instr(meta, '\"service_tier\":\"fast\"') > 0
                    OR instr(meta, '\"service_tier\":\"flex\"') > 0)",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut changed = 0;
    for (conv, meta) in convs {
        let Ok(meta) = serde_json::from_str::<Value>(&meta) else {
            continue;
        };
        // when each record set the tier, in file order
        let set: Vec<(i64, Option<&str>)> = meta["records"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| {
                let at = l
                    .get("timestamp")?
                    .as_str()?
                    .parse::<jiff::Timestamp>()
                    .ok()?;
                Some((at.as_millisecond(), crate::models::codex_tier_set_by(l)?))
            })
            .collect();
        let replies: Vec<(i64, i64)> = {
            let mut stmt = tx.prepare(
                "SELECT seq, created_at FROM measures
                 WHERE conversation = ?1 AND copy = 0 AND model IS NOT NULL AND instr(model, '@') = 0",
            )?;
            stmt.query_map([conv], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (seq, at) in replies {
            let tier = set
                .iter()
                .rev()
                .find(|(t, _)| *t <= at)
                .and_then(|(_, tier)| *tier);
            if let Some(tier) = tier {
                changed += tx.execute(
                    "UPDATE measures SET model = model || '@' || ?2 WHERE seq = ?1",
                    params![seq, tier],
                )?;
            }
        }
    }
    if changed == 0 {
        return Ok(());
    }
    resum_rollups(tx)?;
    resum_web_searches(tx)
}

/// A model replies were written by, as the store measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSeen {
    /// The name as the harness recorded it.
    pub model: String,
    pub replies: u64,
    /// Replies that recorded their provider's usage.
    pub measured: u64,
    /// The largest prompt a provider measured for it (uncached input, cache reads and writes).
    pub max_prompt: u64,
    pub first: i64,
    pub last: i64,
}

impl Store {
    /// Every model the store's replies name (a fork's copies add nothing), by name as recorded.
    pub fn models_seen(&self) -> Result<Vec<ModelSeen>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT model, replies, measured, max_prompt, first, last FROM models_seen ORDER BY model",
        )?;
        let rows = stmt.query_map([], |r| {
            let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
            Ok(ModelSeen {
                model: r.get(0)?,
                replies: n(1)?,
                measured: n(2)?,
                max_prompt: n(3)?,
                first: r.get(4)?,
                last: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The newest `limit` replies of `model` (by name as recorded; a fork's copies add nothing) with the usage
    /// their provider measured, and their meta (what their harness recorded beside it).
    pub fn measured_replies(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(crate::model::Usage, Value)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT b.usage, b.meta FROM measures m JOIN messages b ON b.seq = m.seq
             WHERE m.model = ?1 AND m.copy = 0 AND b.usage IS NOT NULL
             ORDER BY m.seq DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(
            rusqlite::params![model, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (usage, meta) = row?;
            let Ok(usage) = serde_json::from_str(&usage) else {
                continue;
            };
            let meta = meta
                .and_then(|m| serde_json::from_str(&m).ok())
                .unwrap_or(Value::Null);
            out.push((usage, meta));
        }
        Ok(out)
    }

    /// The largest prompt a provider measured for `model` (by its key: every alias counts), if any.
    pub fn max_measured_prompt(&self, model: &str) -> Result<Option<u64>> {
        let key = crate::models::key_or_raw(model);
        Ok(self
            .models_seen()?
            .into_iter()
            .filter(|m| crate::models::key_or_raw(&m.model) == key && m.max_prompt > 0)
            .map(|m| m.max_prompt)
            .max())
    }
}

/// Takes a stored leaf out of the figures (a partial reply read again whole): its usage in the measures and the
/// day roll-up, its tool calls. The message stays.
pub(super) fn retire(tx: &rusqlite::Transaction<'_>, seq: i64) -> Result<()> {
    if !uncount(tx, seq, false)? {
        return Ok(());
    }
    tx.execute(
        "UPDATE measures SET input_tokens = NULL, output_tokens = NULL, cache_read_tokens = NULL,
            cache_write_tokens = NULL, cache_write_1h_tokens = NULL, web_searches = NULL, tool_calls = 0,
            tool_errors = 0
         WHERE seq = ?1",
        [seq],
    )?;
    Ok(())
}

/// Takes the message `seq` out of the roll-ups `stats` sums (its usage, turn, calls; with `whole`, the message
/// and its compaction too) and deletes its tool calls; its measures stay. False when it counted in none (a copy).
pub(super) fn uncount(tx: &Transaction<'_>, seq: i64, whole: bool) -> Result<bool> {
    // the model, then the figures the roll-ups hold
    let row: Option<(Option<String>, [i64; 13])> = tx
        .prepare_cached(&format!(
            "SELECT model, conversation, coalesce(input_tokens, 0), coalesce(output_tokens, 0),
                    coalesce(cache_read_tokens, 0), coalesce(cache_write_tokens, 0),
                    coalesce(cache_write_1h_tokens, 0), input_tokens IS NOT NULL, tool_calls, tool_errors,
                    {}, created_at, compaction, coalesce(web_searches, 0)
             FROM measures WHERE seq = ?1 AND copy = 0",
            super::paths::TURN_SQL
        ))?
        .query_row([seq], |r| {
            let mut n = [0i64; 13];
            for (k, v) in n.iter_mut().enumerate() {
                *v = r.get(k + 1)?;
            }
            Ok((r.get(0)?, n))
        })
        .optional()?;
    let Some((
        model,
        [
            conv,
            i,
            o,
            cr,
            cw,
            cw1,
            measured,
            calls,
            errors,
            turn,
            created,
            compaction,
            searches,
        ],
    )) = row
    else {
        return Ok(false);
    };
    // with the message itself: one message, and its compaction, fewer
    let (message, compaction) = if whole { (1, compaction) } else { (0, 0) };
    let model = model.unwrap_or_default();
    tx.prepare_cached(
        "UPDATE usage_days SET input = input - ?1, output = output - ?2, cache_read = cache_read - ?3,
            cache_write = cache_write - ?4, cache_write_1h = cache_write_1h - ?5, measured = measured - ?6,
            tool_calls = tool_calls - ?7, tool_errors = tool_errors - ?8, turns = turns - ?12,
            messages = messages - ?13, compactions = compactions - ?14
         WHERE day = ?9 AND conversation = ?10 AND model = ?11",
    )?
    .execute(rusqlite::params![
        i,
        o,
        cr,
        cw,
        cw1,
        measured,
        calls,
        errors,
        created.div_euclid(86_400_000),
        conv,
        model,
        turn,
        message,
        compaction
    ])?;
    // the hour's roll-up loses the reply too (its largest prompt stays: a bound, priced exactly past it)
    tx.prepare_cached(
        "UPDATE usage_hours SET replies = replies - ?1, input = input - ?2, output = output - ?3,
            cache_read = cache_read - ?4, cache_write = cache_write - ?5, cache_write_1h = cache_write_1h - ?6,
            web_searches = web_searches - ?10
         WHERE hour = ?7 AND conversation = ?8 AND model = ?9",
    )?
    .execute(rusqlite::params![
        measured,
        i,
        o,
        cr,
        cw,
        cw1,
        created.div_euclid(3_600_000),
        conv,
        model,
        searches
    ])?;
    tx.prepare_cached("DELETE FROM tool_calls WHERE body = ?1")?
        .execute([seq])?;
    if !model.is_empty() {
        tx.prepare_cached(
            "UPDATE models_seen SET replies = max(replies - 1, 0), measured = max(measured - ?2, 0) WHERE model = ?1",
        )?
        .execute(rusqlite::params![model, measured])?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::unpack;

    #[test]
    fn a_packed_cell_reads_each_field_in_its_place() {
        assert_eq!(
            unpack::<5>("1,,-3,42"),
            [Some(1), None, Some(-3), Some(42), None]
        );
        assert_eq!(unpack::<2>("7,8,9"), [Some(7), Some(8)]);
        assert_eq!(unpack::<1>(""), [None]);
        assert_eq!(unpack::<1>("1700000000000"), [Some(1_700_000_000_000)]);
    }
}
