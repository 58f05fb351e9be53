//! Importing a session the store already holds: a live session read again after it grew, a file a harness rewrote
//! in place (pi migrates v1 files to v3), the same session copied elsewhere. Its messages are matched to the stored
//! ones by content, not by bytes or ids: each message's fingerprint is its role, its text and its images' hashes,
//! chained through its parent's fingerprint (so the same "ok" at two places of the tree are two messages). What the
//! store holds is kept as it is; what is new is appended under the message it follows, in one transaction with
//! the tip's move, so nothing is ever counted twice.
//!
//! One message may have grown too: a live file read between two lines of one reply (Claude Code writes a reply's
//! blocks a line each) stored the reply's first blocks. Read again whole, the reply is the same harness entry
//! (its first line's id) under the same parent with more content: it is stored beside the partial one, and the
//! partial one, a leaf, is retired from the figures (its usage, tool calls and day roll-up), so the reply counts
//! once. The partial message itself stays: nothing stored is deleted.
//!
//! Or its usage may have arrived late: a harness that writes prompt figures only as totals when a run ends (GitHub
//! Copilot CLI) gives a reply stored earlier its run's totals on the next read; the reply's measures take them
//! ([`super::measures::late_usage`]), once.
//!
//! Or the file may be read otherwise than before: a newer cairn reads a harness's file better (Aider's failed
//! edits, once part of a reply, are the user's message before it now). The new reading differs from the stored
//! one from some point on and is added beside it as a branch, the tip moved to it; the stored branch it no longer
//! holds is a former reading when a reply the new reading added repeats one of its replies (same role, time and
//! usage: the same request), and its replies are retired from the figures (`retire_read_again`). A branch the
//! harness itself abandoned (a rewind) repeats none, and stays counted.

use std::collections::HashMap;

use rusqlite::OptionalExtension;

use super::identity::{entry_id, reading_fingerprint};
use super::imported::ImportedConversation;
use super::measures::retire;
use super::paths::{conversation_heads, load_messages};
use super::turns::write_imported;
use super::{ConvRow, Result, Store, StoreError, conv_row, insert_message, move_tip};
use crate::model::Role;

/// What merging one conversation of a file did.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub conversation: String,
    /// Messages appended (0: the store held all of them).
    pub added: usize,
    /// Whether the conversation is new (a subagent the earlier import did not have).
    pub new: bool,
    /// Replies of a former reading of the file retired from the figures (see `retire_read_again`).
    pub retired: usize,
    /// What a newer reader recorded of the session that the stored conversation lacked, added to its meta (the
    /// keys; see `record_more`).
    pub recorded: Vec<String>,
    /// Stored replies whose usage arrived since (a run's totals written when it ended: `measures::late_usage`).
    pub late: usize,
    /// Messages written that repeat what another conversation held already, and became copies
    /// (`copies::mark_copies`).
    pub copies: usize,
}

impl Store {
    /// The conversation a session was imported into, by the source key its import recorded.
    pub fn conversation_of_source(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM conversations
                 WHERE json_valid(meta) AND json_extract(meta, '$.source_key') = ?1 ORDER BY seq LIMIT 1",
                [key],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Merges the conversations of a file (the session first, then what links to it) into the store, in one
    /// transaction: each whose `source_key` (in its meta) the store knows gets the messages it lacks, the others
    /// are written new; the file's hash is recorded. Returns what each did.
    pub fn merge_file(
        &mut self,
        hash: &str,
        source: &str,
        conversations: &[ImportedConversation],
        read: Option<&super::SourceRead>,
    ) -> Result<Vec<Merged>> {
        let tx = self.write_tx()?;
        let since = super::copies::next_seq(&tx)?;
        let mut out: Vec<Merged> = Vec::with_capacity(conversations.len());
        for c in conversations {
            let key = c.meta.get("source_key").and_then(|k| k.as_str());
            let existing: Option<String> = match key {
                Some(k) => tx
                    .query_row(
                        "SELECT id FROM conversations
                         WHERE json_valid(meta) AND json_extract(meta, '$.source_key') = ?1 ORDER BY seq LIMIT 1",
                        [k],
                        |r| r.get(0),
                    )
                    .optional()?,
                None => None,
            };
            match existing {
                Some(id) => {
                    let conv = conv_row(&tx, &id)?;
                    // what the reading kept beside the messages, taken into the stored meta read and written
                    // once
                    let mut meta = super::records::stored_meta(&tx, conv.seq)?;
                    let recorded = record_more(&mut meta, &c.meta);
                    let records = super::records::take_records(&mut meta, &c.meta);
                    let tallies = super::records::take_tallies(&mut meta, &c.meta);
                    if !recorded.is_empty() || records > 0 || tallies {
                        super::records::write_meta(&tx, conv.seq, &meta)?;
                    }
                    let a = append_missing(&tx, &conv, c)?;
                    // the session read whole names itself as it does now (a title the harness gave it later:
                    // Qwen Code's `custom_title`, Droid's, Claude Code's summary); an older copy of it does not
                    // name it back
                    if !a.older {
                        super::sources::retitle(&tx, conv.seq, c.title.as_deref())?;
                    }
                    out.push(Merged {
                        conversation: id,
                        added: a.added,
                        new: false,
                        retired: a.retired,
                        recorded,
                        late: a.late,
                        copies: 0,
                    });
                }
                None => {
                    let link = c
                        .linked_to
                        .and_then(|i| out.get(i))
                        .map(|m| m.conversation.clone());
                    let (id, ids) = write_imported(&tx, c, link.as_deref())?;
                    out.push(Merged {
                        conversation: id,
                        added: ids.len(),
                        new: true,
                        retired: 0,
                        recorded: Vec::new(),
                        late: 0,
                        copies: 0,
                    });
                }
            }
        }
        // what was written repeats what another conversation held before (a fork read while its origin had not
        // yet grown to where it was copied): it counts once, as an import's copies do
        for m in &mut out {
            let seq = conv_row(&tx, &m.conversation)?.seq;
            m.copies = super::copies::mark_copies(&tx, seq, since)?;
        }
        if let Some(first) = out.first() {
            let seq: i64 = tx.query_row(
                "SELECT seq FROM conversations WHERE id = ?1",
                [&first.conversation],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT OR IGNORE INTO imports (hash, conversation, source, imported_at) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![hash, seq, source, super::now_ms()],
            )?;
            if let Some(r) = read {
                let ids: Vec<String> = out.iter().map(|m| m.conversation.clone()).collect();
                super::sources::record(&tx, seq, r, &ids)?;
            }
        }
        tx.commit()?;
        Ok(out)
    }
}

/// What a newer reader records of the session that the stored conversation lacks (Codex's `sends_beside`: where its
/// base instructions and tools are) is added to its meta: only keys it does not have, so nothing recorded before,
/// by a reader or by cairn, changes.
fn record_more(meta: &mut serde_json::Value, read: &serde_json::Value) -> Vec<String> {
    let (Some(read), Some(have)) = (read.as_object(), meta.as_object_mut()) else {
        return Vec::new();
    };
    let mut more = Vec::new();
    for (k, v) in read {
        if !have.contains_key(k) {
            have.insert(k.clone(), v.clone());
            more.push(k.clone());
        }
    }
    more
}

/// A former reading of the file is retired from the figures. A newer reader may read a harness's file otherwise
/// (Aider's failed edits, once part of a reply, are now the user's message before it): the new reading's messages
/// then differ from the stored ones from some point on, and are added as a branch beside them. The stored branch
/// the new reading no longer holds is the former reading when a reply the new reading added repeats one of its
/// replies (same role, time and usage: the same request): its replies up to the last repeated one are retired, so
/// the session counts once. A branch the harness abandoned (a rewind) repeats no reply of the new reading, and
/// stays counted; so do replies written after the file's (cairn's own turns on the old branch).
fn retire_read_again(
    tx: &rusqlite::Transaction<'_>,
    stored: &[crate::model::Message],
    heads: &[super::paths::Head],
    placed: &[(i64, i64)],
    retired: &[i64],
    c: &ImportedConversation,
) -> Result<usize> {
    // what the new reading holds (with its ancestors)
    let kept: std::collections::HashSet<i64> = placed.iter().map(|p| p.0).collect();
    // stored replies to leave alone: those the new reading holds, and the partial ones a grown reply retired
    let settled = |seq: &i64| kept.contains(seq) || retired.contains(seq);
    let parent: HashMap<i64, Option<i64>> = heads.iter().map(|h| (h.seq, h.parent_seq)).collect();
    // the stored branch a message belongs to: its highest ancestor the new reading does not hold
    let branch = |mut seq: i64| {
        while let Some(&Some(p)) = parent.get(&seq) {
            if kept.contains(&p) {
                break;
            }
            seq = p;
        }
        seq
    };
    type Key = (Role, i64, u64, u64);
    let key =
        |role: Role, at: i64, u: &crate::model::Usage| (role, at, u.prompt(), u.output_tokens);
    let mut left: HashMap<Key, Vec<(i64, crate::model::Usage)>> = HashMap::new();
    for (m, h) in stored.iter().zip(heads) {
        if let Some(u) = &m.usage
            && !settled(&h.seq)
        {
            left.entry(key(m.role, m.created_at, u))
                .or_default()
                .push((h.seq, *u));
        }
    }
    if left.is_empty() {
        return Ok(0);
    }
    // each former branch, and the time of the last of its replies the new reading repeats
    let mut repeated: HashMap<i64, i64> = HashMap::new();
    for (im, at) in c.messages.iter().zip(placed) {
        // only what this reading added can repeat a former one
        let (false, Some(u), Some(t)) = (
            parent.contains_key(&at.0),
            &im.message.usage,
            im.message.created_at,
        ) else {
            continue;
        };
        if let Some(list) = left.get_mut(&key(im.message.role, t, u))
            && let Some(k) = list.iter().position(|(_, was)| was == u)
        {
            let (seq, _) = list.remove(k);
            let last = repeated.entry(branch(seq)).or_insert(t);
            *last = (*last).max(t);
        }
    }
    let mut n = 0;
    for (m, h) in stored.iter().zip(heads) {
        if m.role == Role::Assistant
            && !settled(&h.seq)
            && repeated
                .get(&branch(h.seq))
                .is_some_and(|&last| m.created_at <= last)
        {
            retire(tx, h.seq)?;
            n += 1;
        }
    }
    Ok(n)
}

/// A stored leaf a grown reply may replace: its seq, role, harness entry id and plain text.
type Leaf = (i64, Role, Option<String>, String);

/// The stored message a reading ends on (its tip, else its last message), from where each of its messages was
/// placed.
fn reading_tip(c: &ImportedConversation, placed: &[(i64, i64)]) -> Option<i64> {
    match c.tip {
        Some(t) => placed.get(t),
        None => placed.last(),
    }
    .map(|p| p.0)
}

/// What merging a reading did to a stored conversation.
struct Appended {
    added: usize,
    retired: usize,
    late: usize,
    /// The reading is an older copy of the session (a backup, the session synced from another machine): it adds
    /// nothing, and the store holds messages after the one it ends on.
    older: bool,
}

/// Appends to `conv` the messages of `c` it does not hold (by fingerprint), each under the message it follows, and
/// moves the tip to `c`'s tip when anything was added. Returns how many were, how many replies of a former
/// reading were retired, how many stored replies took usage that arrived since, and whether `c` is an older copy.
fn append_missing(
    tx: &rusqlite::Transaction<'_>,
    conv: &ConvRow,
    c: &ImportedConversation,
) -> Result<Appended> {
    let heads = conversation_heads(tx, conv.seq)?;
    let stored = load_messages(tx, conv, &heads)?;
    // fingerprint -> (seq, depth) of what the store holds
    let mut held: HashMap<String, (i64, i64)> = HashMap::with_capacity(stored.len());
    let mut fp_of_id: HashMap<&str, String> = HashMap::with_capacity(stored.len());
    // parent seq -> the stored leaves under it (seq, role, harness entry id, plain text), for a reply that grew
    let has_child: std::collections::HashSet<i64> =
        heads.iter().filter_map(|h| h.parent_seq).collect();
    let mut leaves: HashMap<Option<i64>, Vec<Leaf>> = HashMap::new();
    for (m, h) in stored.iter().zip(&heads) {
        if !has_child.contains(&h.seq) && m.cairn_kind().is_none() {
            leaves.entry(h.parent_seq).or_default().push((
                h.seq,
                m.role,
                entry_id(&m.meta).map(str::to_string),
                crate::model::plain_text(&m.content),
            ));
        }
        let parent = m
            .parent
            .as_deref()
            .and_then(|p| fp_of_id.get(p))
            .cloned()
            .unwrap_or_default();
        let fp = reading_fingerprint(&parent, m.role, &m.content, &m.meta);
        held.entry(fp.clone()).or_insert((h.seq, h.depth));
        fp_of_id.insert(m.id.as_str(), fp);
    }
    let mut placed: Vec<(i64, i64)> = Vec::with_capacity(c.messages.len());
    let mut fps: Vec<String> = Vec::with_capacity(c.messages.len());
    let (mut added, mut late) = (0, 0);
    let mut retired: Vec<i64> = Vec::new();
    for (i, im) in c.messages.iter().enumerate() {
        let parent = match im.parent {
            None => None,
            Some(p) if p < i => Some(p),
            Some(p) => {
                return Err(StoreError::InvalidTurn(format!(
                    "imported message {i} names parent {p}, which does not come before it"
                )));
            }
        };
        let parent_fp = parent.map(|p| fps[p].clone()).unwrap_or_default();
        let m = &im.message;
        let fp = reading_fingerprint(&parent_fp, m.role, &m.content, &m.meta);
        let at = match held.get(&fp) {
            Some(&at) => {
                if let Some(u) = &im.message.usage {
                    late += usize::from(super::measures::late_usage(tx, at.0, u)?);
                }
                at
            }
            None => {
                let under = parent.map(|p| placed[p]);
                // the same entry of the harness (else the same role whose text it continues), grown
                let entry = entry_id(&im.message.meta);
                let text = crate::model::plain_text(&im.message.content);
                if let Some(list) = leaves.get_mut(&under.map(|u| u.0))
                    && let Some(k) = list.iter().position(|(_, role, e, old)| {
                        *role == im.message.role
                            && match (e, entry) {
                                (Some(a), Some(b)) => a == b,
                                _ => !old.is_empty() && text.starts_with(old.as_str()),
                            }
                    })
                {
                    let (old, ..) = list.remove(k);
                    retire(tx, old)?;
                    retired.push(old);
                }
                let (seq, _) = insert_message(tx, conv.seq, under, &im.message)?;
                added += 1;
                let at = (seq, under.map_or(0, |u| u.1 + 1));
                held.insert(fp.clone(), at);
                at
            }
        };
        placed.push(at);
        fps.push(fp);
    }
    let tip = reading_tip(c, &placed);
    // what the reading ends on, where the store holds more after it: an older copy
    let older = added == 0 && tip.is_some_and(|p| has_child.contains(&p));
    // nothing added, nothing that can repeat a former reading, and the tip stays
    let mut former = 0;
    if added > 0 {
        former = retire_read_again(tx, &stored, &heads, &placed, &retired, c)?;
        if tip.is_some() && tip != conv.tip {
            let detail = serde_json::json!({"messages": added, "grown": true});
            move_tip(tx, conv, conv.tip, tip, "import", detail)?;
        }
    }
    Ok(Appended {
        added,
        retired: former,
        late,
        older,
    })
}
