//! Copies: messages a harness wrote again into another session (a fork, a resume into a new file, an export
//! imported beside its session), times and usage alike or (Codex) stamped anew.
//!
//! Why a module: a copy is the same provider request as the message it repeats, so its usage, turn and tool calls
//! must count once, in the conversation that holds the original, whichever file was read first and however often
//! the sessions grew since. A copy keeps its measures (its own path is measured as before) and leaves every roll-up
//! and the tool calls, as a cairn fork's copies do.
//!
//! The tests of sameness are one definition each ([`Row::request`], [`Row::message`], [`Row::any_time`]), read in
//! Rust from the rows a write touches: a harness that stamps every copied line with one time (Codex's fork) puts
//! thousands of rows at one instant, where a test in SQL would compare each with every other.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use super::measures::{resum_rollups_where, resum_web_searches_where, uncount};
use super::{Result, Store, conv_row};

/// The copies an imported conversation holds ([`Store::copies_in`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copies {
    /// How many of its messages are copies.
    pub messages: usize,
    /// The conversation the newest copied reply was first written in, and that reply there.
    pub conversation: String,
    pub message: String,
    /// The newest copied message itself (in the conversation that holds the copies).
    pub copy: String,
}

/// Two conversations one of which holds a copy of the other's tip, and so all of its path ([`Store::holders_of_tip`],
/// [`Store::tips_held_by`]): the holder may continue the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The other conversation than the one asked about: the holder ([`Store::holders_of_tip`]), or the one whose tip
    /// is held ([`Store::tips_held_by`]).
    pub other: String,
    /// The id of the tip held, in the conversation it is the tip of.
    pub tip: String,
    /// The holder goes on past its copy of the tip.
    pub goes_on: bool,
    /// The holder is recorded as a fork from a message as deep as the tip or deeper: of a session it shares as much
    /// with.
    pub forked_deeper: bool,
}

/// The four token counts a provider measured (uncached input, output, cache reads, cache writes).
type Counts = [Option<i64>; 4];
/// A reply's provider request: its time, model and counts.
type RequestKey = (i64, Option<String>, Counts);
/// A message whatever its usage: its time, kind, model and every measure.
type MessageKey = (i64, i64, Option<String>, String);
/// A reply whatever its time: its model, counts, kind and its own measures (text, tool use, thinking, characters,
/// images, calls).
type AnyTimeKey = (Option<String>, Counts, i64, [i64; 6]);

/// A stored message's measures, as the tests of sameness read them.
struct Row {
    seq: i64,
    created_at: i64,
    model: Option<String>,
    flags: i64,
    packed: String,
    counts: Counts,
    own: [i64; 6],
    copy: bool,
}

const ROW_SQL: &str =
    "SELECT seq, created_at, model, flags, packed, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, text, tool_use, thinking, chars, images, tool_calls, copy FROM measures";

impl Row {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        let mut counts = [None; 4];
        for (k, c) in counts.iter_mut().enumerate() {
            *c = r.get(5 + k)?;
        }
        let mut own = [0i64; 6];
        for (k, c) in own.iter_mut().enumerate() {
            *c = r.get(9 + k)?;
        }
        Ok(Row {
            seq: r.get(0)?,
            created_at: r.get(1)?,
            model: r.get(2)?,
            flags: r.get(3)?,
            packed: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            counts,
            own,
            copy: r.get::<_, i64>(15)? != 0,
        })
    }

    /// Whether it is a reply that produced something: only such a reply is the same request as another by its
    /// counts (an empty reply's counts say little).
    fn replied(&self) -> bool {
        self.counts[1].is_some_and(|o| o > 0)
    }

    /// The one test of two replies being the same provider request: the same time, model and four token counts
    /// (what ccusage dedups Claude Code by, the message and request ids, made general).
    fn request(&self) -> RequestKey {
        (self.created_at, self.model.clone(), self.counts)
    }

    /// The one test of two messages being the same message (a copy without usage of its own: a harness that resets
    /// the usage of what it copies, as OpenHands' fork does): the same time, kind, model and every measure
    /// (`packed`: each kind's tokens, characters, images, calls).
    fn message(&self) -> MessageKey {
        (
            self.created_at,
            self.flags,
            self.model.clone(),
            self.packed.clone(),
        )
    }

    /// The one test of two replies being the same provider request whatever their times, for a fork whose harness
    /// stamps the history it copies with the time it copies it (Codex: each rollout line takes the time it is
    /// written): the same model, four token counts, kind and measures of the reply itself.
    fn any_time(&self) -> AnyTimeKey {
        (self.model.clone(), self.counts, self.flags, self.own)
    }
}

fn rows(tx: &rusqlite::Connection, filter: &str, p: impl rusqlite::Params) -> Result<Vec<Row>> {
    Ok(tx
        .prepare_cached(&format!("{ROW_SQL} WHERE {filter} ORDER BY seq"))?
        .query_map(p, Row::read)?
        .collect::<rusqlite::Result<_>>()?)
}

/// The rows a message may be the same as, by each test: the first row of each key.
#[derive(Default)]
struct Seen {
    request: HashMap<RequestKey, i64>,
    message: HashMap<MessageKey, i64>,
    /// Kept only where the history was stamped anew.
    any_time: Option<HashMap<AnyTimeKey, i64>>,
}

impl Seen {
    fn of<'a>(rows: impl IntoIterator<Item = &'a Row>, restamped: bool) -> Seen {
        let mut s = Seen {
            any_time: restamped.then(HashMap::new),
            ..Seen::default()
        };
        for r in rows {
            s.request.entry(r.request()).or_insert(r.seq);
            s.message.entry(r.message()).or_insert(r.seq);
            if let Some(a) = s.any_time.as_mut() {
                a.entry(r.any_time()).or_insert(r.seq);
            }
        }
        s
    }

    /// The first row `n` is the same as, if any.
    fn first_same(&self, n: &Row) -> Option<i64> {
        let replied = n.replied();
        [
            replied.then(|| self.request.get(&n.request())).flatten(),
            self.message.get(&n.message()),
            self.any_time
                .as_ref()
                .filter(|_| replied)
                .and_then(|a| a.get(&n.any_time())),
        ]
        .into_iter()
        .flatten()
        .min()
        .copied()
    }
}

/// What conversations other than `conv` hold at the instants of `rows`, read through the index of times in one
/// statement (a session's rows mostly have instants of their own; a re-stamped copy shares one).
fn others_at<'a>(
    tx: &rusqlite::Connection,
    rows_at: impl IntoIterator<Item = &'a Row>,
    conv: i64,
) -> Result<Vec<Row>> {
    rows(
        tx,
        "created_at IN (SELECT value FROM json_each(?1)) AND conversation != ?2",
        params![instants(rows_at), conv],
    )
}

/// The instants of `rows`, as a JSON array for `json_each`.
fn instants<'a>(rows: impl IntoIterator<Item = &'a Row>) -> String {
    let times: HashSet<i64> = rows.into_iter().map(|r| r.created_at).collect();
    let times: Vec<String> = times.into_iter().map(|t| t.to_string()).collect();
    format!("[{}]", times.join(","))
}

/// How many messages of conversation `conv` are copies (its own rows: a cairn fork's shared bodies aside).
fn copies_count(tx: &rusqlite::Connection, conv: i64) -> Result<usize> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM measures x JOIN messages m ON m.seq = x.seq
         WHERE x.conversation = ?1 AND x.copy = 1 AND m.body_of IS NULL",
        [conv],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

/// `matched` and what comes before them on their paths in conversation `conv` (copied with them), from `since` on,
/// up to a message `stop` names (excluded).
fn with_ancestors(
    tx: &Transaction<'_>,
    conv: i64,
    since: i64,
    matched: impl IntoIterator<Item = i64>,
    stop: impl Fn(i64) -> bool,
) -> Result<HashSet<i64>> {
    let parents: HashMap<i64, Option<i64>> = tx
        .prepare_cached("SELECT seq, parent FROM messages WHERE conversation = ?1 AND seq >= ?2")?
        .query_map(params![conv, since], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = HashSet::new();
    for mut at in matched {
        while out.insert(at) {
            match parents.get(&at).copied().flatten() {
                Some(p) if p >= since && parents.contains_key(&p) && !stop(p) => at = p,
                _ => break,
            }
        }
    }
    Ok(out)
}

/// Marks as copies the messages of conversation `conv` (just written) that another conversation written before
/// it holds already ([`Row::request`], [`Row::message`]): a harness that forks or resumes a session into a new file
/// copies its history there (pi's fork, Claude Code's `--fork-session` and `/branch`), times and usage alike. What
/// comes before a copy on its path was copied with it. A copy leaves every roll-up and the tool calls: usage, turns
/// and calls count once, in the conversation that held them first. Only the messages written from `since` on are
/// looked at (a session that grew: what it held before was decided when it was written, and what it held before a
/// copy it gained is its own). Returns how many messages became copies.
pub(crate) fn mark_copies(tx: &Transaction<'_>, conv: i64, since: i64) -> Result<usize> {
    let new = rows(tx, "conversation = ?1 AND seq >= ?2", params![conv, since])?;
    let others = others_at(tx, new.iter().filter(|r| !r.copy), conv)?;
    let seen = Seen::of(&others, false);
    let matched = new
        .iter()
        .filter(|n| !n.copy && seen.first_same(n).is_some_and(|o| o < n.seq))
        .map(|n| n.seq);
    let copied = with_ancestors(tx, conv, since, matched, |_| false)?;
    let mut copied: Vec<i64> = new
        .iter()
        .filter(|r| !r.copy && copied.contains(&r.seq))
        .map(|r| r.seq)
        .collect();
    copied.sort_unstable();
    for &seq in &copied {
        uncount(tx, seq, true)?;
        tx.prepare_cached("UPDATE measures SET copy = 1 WHERE seq = ?1")?
            .execute([seq])?;
    }
    Ok(copied.len())
}

/// Where the messages written next begin: the `since` of [`mark_copies`] for what a write adds.
pub(crate) fn next_seq(tx: &Transaction<'_>) -> Result<i64> {
    Ok(
        tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM messages", [], |r| {
            r.get(0)
        })?,
    )
}

impl Store {
    /// The copies in an imported conversation ([`mark_copies`]): how many messages, and the conversation and
    /// message the newest copied reply repeats (the one that counts, written before it or after). None without
    /// copies.
    pub fn copies_in(&self, conversation: &str) -> Result<Option<Copies>> {
        let conv = conv_row(&self.conn, conversation)?;
        let n = copies_count(&self.conn, conv.seq)?;
        if n == 0 {
            return Ok(None);
        }
        let own = rows(&self.conn, "conversation = ?1 AND copy = 1", [conv.seq])?;
        let others = others_at(&self.conn, &own, conv.seq)?;
        // the newest copy that is the same as a message elsewhere: the one that counts where there is one
        let (counted, any) = (
            Seen::of(others.iter().filter(|o| !o.copy), false),
            Seen::of(&others, false),
        );
        let found = own.iter().rev().find_map(|c| {
            counted
                .first_same(c)
                .or_else(|| any.first_same(c))
                .map(|o| (o, c.seq))
        });
        let Some((original, copy)) = found else {
            return Ok(None);
        };
        Ok(
            ids_of(&self.conn, original, copy)?.map(|(conversation, message, copy)| Copies {
                messages: n,
                conversation,
                message,
                copy,
            }),
        )
    }

    /// The other conversations that hold a copy of `origin`'s tip ([`Row::request`], [`Row::message`]), and so all
    /// of its path: a session its harness copied into a new file and went on with, or an export of it. Each is the
    /// holder.
    pub fn holders_of_tip(&self, origin: &str) -> Result<Vec<Overlap>> {
        let conv = conv_row(&self.conn, origin)?;
        let Some(tip) = conv.tip else {
            return Ok(Vec::new());
        };
        let Some((_, tip_id, _)) = ids_of(&self.conn, tip, tip)? else {
            return Ok(Vec::new());
        };
        let own = rows(&self.conn, "seq = ?1", [tip])?;
        let (seen, depth) = (Seen::of(&own, false), message_depth(&self.conn, tip)?);
        let mut holders = Vec::new();
        for o in others_at(&self.conn, &own, conv.seq)? {
            if seen.first_same(&o).is_none() {
                continue;
            }
            let (holder, other, goes_on): (i64, String, bool) = self.conn.query_row(
                "SELECT c.seq, c.id, c.tip IS NOT m.seq FROM messages m
                     JOIN conversations c ON c.seq = m.conversation
                     WHERE m.seq = ?1",
                [o.seq],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            holders.push(Overlap {
                other,
                tip: tip_id.clone(),
                goes_on,
                forked_deeper: forked_depth(&self.conn, holder)?.is_some_and(|d| d >= depth),
            });
        }
        Ok(holders)
    }

    /// The other conversations whose tip `conversation` holds a copy of (and so all of their paths), the deepest
    /// tip first (of equal depths, the one read first): the sessions it may continue. `conversation` is the
    /// holder.
    pub fn tips_held_by(&self, conversation: &str) -> Result<Vec<Overlap>> {
        let conv = conv_row(&self.conn, conversation)?;
        let tips = rows(
            &self.conn,
            "created_at IN (SELECT created_at FROM measures WHERE conversation = ?1)
             AND seq IN (SELECT tip FROM conversations WHERE seq != ?1 AND tip IS NOT NULL)",
            [conv.seq],
        )?;
        if tips.is_empty() {
            return Ok(Vec::new());
        }
        let own = rows(
            &self.conn,
            "conversation = ?1 AND created_at IN (SELECT value FROM json_each(?2))",
            params![conv.seq, instants(&tips)],
        )?;
        let forked_depth = forked_depth(&self.conn, conv.seq)?;
        let seen = Seen::of(&own, false);
        let mut held = Vec::new();
        for t in &tips {
            let Some(copy) = seen.first_same(t) else {
                continue;
            };
            let (other, tip, depth): (String, String, i64) = self.conn.query_row(
                "SELECT c.id, m.id, m.depth FROM messages m JOIN conversations c ON c.seq = m.conversation
                 WHERE m.seq = ?1",
                [t.seq],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            held.push((
                depth,
                Overlap {
                    other,
                    tip,
                    goes_on: conv.tip != Some(copy),
                    forked_deeper: forked_depth.is_some_and(|d| d >= depth),
                },
            ));
        }
        held.sort_by_key(|h| std::cmp::Reverse(h.0));
        Ok(held.into_iter().map(|h| h.1).collect())
    }

    /// Records that an imported conversation was forked by its harness from `message` of `from` (its newest copy
    /// repeats it: [`Store::copies_in`]), as a cairn fork records its origin. One recorded before from another
    /// message (read before the origin grew to where the fork copied it, or before the session it was forked from
    /// was read, when an older session it repeats was all there was) moves there. Returns whether anything
    /// changed.
    pub fn record_harness_fork(
        &mut self,
        conversation: &str,
        from: &str,
        message: &str,
    ) -> Result<bool> {
        let tx = self.write_tx()?;
        let n = tx.execute(
            "UPDATE conversations SET
                forked_from_conversation = (SELECT seq FROM conversations WHERE id = ?2),
                forked_from_message = (SELECT seq FROM messages WHERE id = ?3
                                       AND conversation = (SELECT seq FROM conversations WHERE id = ?2))
             WHERE id = ?1
               AND forked_from_message IS NOT (SELECT seq FROM messages WHERE id = ?3)
               AND EXISTS (SELECT 1 FROM messages m JOIN conversations c ON c.seq = m.conversation
                           WHERE m.id = ?3 AND c.id = ?2)",
            params![conversation, from, message],
        )?;
        tx.commit()?;
        Ok(n > 0)
    }

    /// Gives the counts of what `fork` and `origin` share to the origin, as a cairn fork's copies leave them. The
    /// fork's messages that are the same as the origin's ([`Row::request`], [`Row::message`]; with `restamped`, a
    /// reply the same whatever its time, [`Row::any_time`], for a harness that stamps the history it copies with
    /// the time it copied it), and what comes before them on its paths, become copies (out of every roll-up, their
    /// tool calls gone); the origin's copies of the fork's (the fork was read first: [`mark_copies`] counts a
    /// message where it was written first) count again, their tool calls indexed from their bodies. Returns the
    /// fork's copies and the origin's message its newest copy repeats; None when nothing changed (they share
    /// nothing, or what they share counts in the origin already).
    pub fn hand_copies_to(
        &mut self,
        origin: &str,
        fork: &str,
        restamped: bool,
    ) -> Result<Option<Copies>> {
        let (o, f) = (
            conv_row(&self.conn, origin)?.seq,
            conv_row(&self.conn, fork)?.seq,
        );
        let tx = self.write_tx()?;
        let (o_rows, f_rows) = (
            rows(&tx, "conversation = ?1", [o])?,
            rows(&tx, "conversation = ?1", [f])?,
        );
        let in_origin = Seen::of(&o_rows, restamped);
        // the fork's messages the same as the origin's, each with the origin's it repeats
        let repeats: Vec<(i64, i64)> = f_rows
            .iter()
            .filter_map(|n| in_origin.first_same(n).map(|o| (n.seq, o)))
            .collect();
        let taken = with_ancestors(&tx, f, 0, repeats.iter().map(|p| p.0), |_| false)?;
        let taken: Vec<&Row> = f_rows
            .iter()
            .filter(|r| !r.copy && taken.contains(&r.seq))
            .collect();
        // the origin's copies of what the fork counted until now count again; what the fork held as copies counts
        // elsewhere still (a third session both repeat), and so does what comes before it on the origin's path
        let counted_by_fork = Seen::of(taken.iter().copied(), restamped);
        let elsewhere = Seen::of(f_rows.iter().filter(|r| r.copy), restamped);
        let by_seq: HashMap<i64, &Row> = o_rows.iter().map(|r| (r.seq, r)).collect();
        let given = with_ancestors(
            &tx,
            o,
            0,
            o_rows
                .iter()
                .filter(|r| r.copy && counted_by_fork.first_same(r).is_some())
                .map(|r| r.seq),
            |p| {
                by_seq
                    .get(&p)
                    .is_some_and(|r| elsewhere.first_same(r).is_some())
            },
        )?;
        let given: Vec<&Row> = o_rows
            .iter()
            .filter(|r| r.copy && given.contains(&r.seq))
            .collect();
        if taken.is_empty() && given.is_empty() {
            return Ok(None);
        }
        // what each model was seen to take counts the replies that count: one fewer for each taken, one more for
        // each given
        let seen_by = |r: &Row, by: i64| -> Result<()> {
            if let Some(model) = &r.model {
                tx.prepare_cached(
                    "UPDATE models_seen SET replies = max(replies + ?2, 0), measured = max(measured + ?3, 0)
                     WHERE model = ?1",
                )?
                .execute(params![model, by, by * i64::from(r.counts[0].is_some())])?;
            }
            Ok(())
        };
        for r in &taken {
            tx.prepare_cached("DELETE FROM tool_calls WHERE body = ?1")?
                .execute([r.seq])?;
            tx.prepare_cached("UPDATE measures SET copy = 1 WHERE seq = ?1")?
                .execute([r.seq])?;
            seen_by(r, -1)?;
        }
        for r in &given {
            tx.prepare_cached("UPDATE measures SET copy = 0 WHERE seq = ?1")?
                .execute([r.seq])?;
            super::index::index_calls_again(&tx, r.seq)?;
            seen_by(r, 1)?;
        }
        // the roll-ups `stats` sums, summed again from the two conversations' measures
        let of = format!("conversation IN ({o}, {f})");
        resum_rollups_where(&tx, &of)?;
        resum_web_searches_where(&tx, &of)?;
        // what the fork holds as copies, and the origin's message its newest copy repeats
        let n = copies_count(&tx, f)?;
        let newest = repeats.iter().max_by_key(|p| p.0).copied();
        let ids = match newest {
            Some((copy, repeated)) => ids_of(&tx, repeated, copy)?,
            None => None,
        };
        tx.commit()?;
        Ok(ids.map(|(_, message, copy)| Copies {
            messages: n,
            conversation: origin.to_string(),
            message,
            copy,
        }))
    }
}

/// How deep the message a conversation was forked from lies (None for a conversation no fork made).
fn forked_depth(tx: &rusqlite::Connection, conv: i64) -> Result<Option<i64>> {
    Ok(tx.query_row(
        "SELECT f.depth FROM conversations c LEFT JOIN messages f ON f.seq = c.forked_from_message
         WHERE c.seq = ?1",
        [conv],
        |r| r.get(0),
    )?)
}

/// How deep message row `seq` lies on its path (its root is 0).
fn message_depth(tx: &rusqlite::Connection, seq: i64) -> Result<i64> {
    Ok(
        tx.query_row("SELECT depth FROM messages WHERE seq = ?1", [seq], |r| {
            r.get(0)
        })?,
    )
}

/// The conversation and id of the message in row `original`, and the id of the one in row `copy`.
fn ids_of(
    tx: &rusqlite::Connection,
    original: i64,
    copy: i64,
) -> Result<Option<(String, String, String)>> {
    Ok(tx
        .query_row(
            "SELECT c.id, om.id, nm.id FROM messages om JOIN conversations c ON c.seq = om.conversation,
                    messages nm
             WHERE om.seq = ?1 AND nm.seq = ?2",
            params![original, copy],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?)
}
