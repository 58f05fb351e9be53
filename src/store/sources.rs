//! Where each imported file was read to, so a live session that grew is read from where the last import stopped
//! instead of whole: the importer asks how far a file was read ([`Store::source_read`]), reads what came after
//! (with a few lines before it, so a message whose lines straddle the old end is read whole), and hands the
//! messages it found to [`Store::append_tail`]. That matches them to the stored ones by the harness's own entry
//! ids (Claude Code's line uuids, pi's entry ids) and appends the new ones under the message each follows, in one
//! transaction with the tip's move and the new read position. Anything it cannot place exactly (a stored message
//! whose content changed, a new message whose parent is before the lines read, a compaction marker whose
//! positions were counted in those lines) makes it write nothing and say why: the importer then reads the whole
//! file, as it would without a read position. The store knows nothing of formats: the position, its hashes and
//! the list of files read with it are the importer's.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::identity::{entry_id, fingerprint};
use super::imported::ImportedConversation;
use super::{Result, Store, StoreError, conv_row, insert_message, move_tip};
use crate::model::Role;

/// How far one file was read, as the importer describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRead {
    /// The file, as the importer names it (its canonical path).
    pub path: String,
    /// The format it was read in (the importer's name for it).
    pub format: String,
    /// Bytes read (the file's length then).
    pub read_to: u64,
    /// Line breaks in the bytes read.
    pub lines: u64,
    /// Hashes of the first and of the last bytes read: a file rewritten in place does not match them.
    pub head_hash: String,
    pub tail_hash: String,
    /// The files read with it (subagents), as the importer lists them: read again whole when this changes.
    pub linked: String,
}

/// A file the store has read: the conversation it went into and how far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownSource {
    pub conversation: String,
    /// Every conversation the file was read into: the session's first, then those linked to it (subagents).
    pub conversations: Vec<String>,
    pub read: SourceRead,
}

/// What [`Store::append_tail`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// The new messages were appended (0: there were none) and the read position moved; how many, and how many of
    /// them repeat what another conversation held already and became copies (`copies::mark_copies`).
    Appended { added: usize, copies: usize },
    /// Nothing was written: the lines read do not continue the stored conversation exactly, for the reason given.
    NotAContinuation(String),
}

impl Store {
    /// How far the file at `path` was read, and into which conversation, if it was imported.
    pub fn source_read(&self, path: &str) -> Result<Option<KnownSource>> {
        Ok(self
            .conn
            .query_row(
                "SELECT c.id, s.format, s.read_to, s.lines, s.head_hash, s.tail_hash, s.linked, s.conversations
                 FROM sources s JOIN conversations c ON c.seq = s.conversation WHERE s.path = ?1",
                [path],
                |r| {
                    let id: String = r.get(0)?;
                    let all: String = r.get(7)?;
                    Ok(KnownSource {
                        conversations: serde_json::from_str::<Vec<String>>(&all)
                            .ok()
                            .filter(|all| all.first() == Some(&id))
                            .unwrap_or_else(|| vec![id.clone()]),
                        conversation: id,
                        read: SourceRead {
                            path: path.to_string(),
                            format: r.get(1)?,
                            read_to: r.get::<_, i64>(2)?.max(0) as u64,
                            lines: r.get::<_, i64>(3)?.max(0) as u64,
                            head_hash: r.get(4)?,
                            tail_hash: r.get(5)?,
                            linked: r.get(6)?,
                        },
                    })
                },
            )
            .optional()?)
    }

    /// The file `conversation` was read from (the session's, for a subagent read with it) and how many bytes of
    /// it were read, if it came from a file.
    pub fn source_of(&self, conversation: &str) -> Result<Option<(String, u64)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT s.path, s.read_to FROM sources s JOIN conversations c ON c.seq = s.conversation
                 WHERE c.id = ?1 OR (json_valid(s.conversations)
                                     AND EXISTS (SELECT 1 FROM json_each(s.conversations) WHERE value = ?1))
                 ORDER BY c.id = ?1 DESC, s.updated_at DESC LIMIT 1",
                [conversation],
                |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64)),
            )
            .optional()?)
    }

    /// Appends to `conversation` the messages of `c` (read from the end of a file that grew) it does not hold,
    /// matched by the harness's entry ids, takes `c`'s title (one the harness gave among the new lines), and
    /// records `read` as how far the file was read, in one transaction.
    /// `read_before` says which of `c`'s messages were read whole before (the window's first lines): those are
    /// never written, only matched, so that what follows them can be placed. Writes nothing and says why when `c`
    /// does not continue the stored conversation exactly.
    pub fn append_tail(
        &mut self,
        conversation: &str,
        read: &SourceRead,
        c: &ImportedConversation,
        read_before: &[bool],
    ) -> Result<Tail> {
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let since = super::copies::next_seq(&tx)?;
        let before = |i: usize| read_before.get(i).copied().unwrap_or(false);
        let entries: Vec<Option<&str>> = c
            .messages
            .iter()
            .map(|im| entry_id(&im.message.meta))
            .collect();
        let by_entry = stored_entries(&tx, conv.seq, c, &entries, read_before)?;
        // where each message of `c` is in the store (`None`: a message read before that nothing new follows, or
        // that the window shows only in part)
        let mut placed: Vec<Option<(i64, i64)>> = Vec::with_capacity(c.messages.len());
        let mut added = 0;
        for (i, im) in c.messages.iter().enumerate() {
            let m = &im.message;
            let entry = entries[i];
            let held = entry.and_then(|e| by_entry.get(e)).copied();
            if before(i) {
                // the stored message its entry names (the window may show it only in part: a reply whose first
                // lines are before the window)
                placed.push(held);
                continue;
            }
            if let Some(at) = held
                && same_body(&tx, at.0, m.role, &m.content)?
            {
                placed.push(Some(at));
                continue;
            }
            if crate::model::CairnMeta::any(&m.meta) {
                return Ok(Tail::NotAContinuation(
                    "a compaction among the new lines (its positions count from the file's start)"
                        .into(),
                ));
            }
            let under = match im.parent {
                Some(p) if p < i => match placed[p] {
                    Some(u) => Some(u),
                    None => {
                        return Ok(Tail::NotAContinuation(format!(
                            "a new message (entry {}) follows one the lines read show only in part",
                            entry.unwrap_or("without an id")
                        )));
                    }
                },
                Some(p) => {
                    return Err(StoreError::InvalidTurn(format!(
                        "imported message {i} names parent {p}, which does not come before it"
                    )));
                }
                None => None,
            };
            match held {
                // a reply read between two of its lines, read again whole: stored beside the partial one, which
                // leaves the figures (as a merge of the whole file does)
                Some(at) => {
                    let Some(parent) = leaf_parent(&tx, conv.seq, at.0)? else {
                        return Ok(Tail::NotAContinuation(format!(
                            "entry {} changed since it was read, and messages follow it",
                            entry.unwrap_or_default()
                        )));
                    };
                    super::measures::retire(&tx, at.0)?;
                    let under = if im.parent.is_some() { under } else { parent };
                    let (seq, _) = insert_message(&tx, conv.seq, under, m)?;
                    placed.push(Some((seq, under.map_or(0, |u| u.1 + 1))));
                }
                None if im.parent.is_none() => {
                    return Ok(Tail::NotAContinuation(format!(
                        "a new message (entry {}) follows one before the lines read",
                        entry.unwrap_or("without an id")
                    )));
                }
                None => {
                    let (seq, _) = insert_message(&tx, conv.seq, under, m)?;
                    placed.push(Some((seq, under.map_or(0, |u| u.1 + 1))));
                }
            }
            added += 1;
        }
        if added > 0 {
            let tip = match c.tip {
                Some(t) => placed.get(t).copied().flatten().map(|p| p.0),
                None => placed.last().copied().flatten().map(|p| p.0),
            };
            if tip.is_some() && tip != conv.tip {
                move_tip(
                    &tx,
                    &conv,
                    conv.tip,
                    tip,
                    "import",
                    serde_json::json!({"messages": added, "grown": true}),
                )?;
            }
        }
        // a title the harness gave the session among the new lines, and what else it kept beside the messages
        retitle(&tx, conv.seq, c.title.as_deref())?;
        super::records::add_records(&tx, conv.seq, &c.meta)?;
        moved(&tx, read)?;
        let copies = super::copies::mark_copies(&tx, conv.seq, since)?;
        tx.commit()?;
        Ok(Tail::Appended { added, copies })
    }
}

/// Names an imported conversation as its session is named now (`title`, where the reading gave one).
pub(super) fn retitle(
    tx: &rusqlite::Transaction<'_>,
    seq: i64,
    title: Option<&str>,
) -> rusqlite::Result<()> {
    if let Some(t) = title {
        tx.execute(
            "UPDATE conversations SET title = ?1 WHERE seq = ?2 AND title IS NOT ?1",
            rusqlite::params![t, seq],
        )?;
    }
    Ok(())
}

/// The parent (seq, depth) of the stored message `seq` when it is a leaf (`Some(None)`: a leaf root), `None` when
/// messages follow it. Children come after their parent, so the scan starts at it.
fn leaf_parent(
    tx: &rusqlite::Transaction<'_>,
    conv_seq: i64,
    seq: i64,
) -> Result<Option<Option<(i64, i64)>>> {
    let has_child: bool = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM messages WHERE conversation = ?1 AND seq > ?2 AND parent = ?2)",
        )?
        .query_row(params![conv_seq, seq], |r| r.get(0))?;
    if has_child {
        return Ok(None);
    }
    let parent: Option<(i64, i64)> = tx
        .prepare_cached(
            "SELECT p.seq, p.depth FROM messages m JOIN messages p ON p.seq = m.parent WHERE m.seq = ?1",
        )?
        .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(Some(parent))
}

/// Whether the stored message `seq` has this role and content (images by their hashes).
fn same_body(
    tx: &rusqlite::Transaction<'_>,
    seq: i64,
    role: Role,
    content: &[crate::model::Block],
) -> Result<bool> {
    let (stored_role, text): (String, Option<String>) = tx
        .prepare_cached(
            "SELECT b.role, b.content FROM messages m JOIN messages b ON b.seq = coalesce(m.body_of, m.seq)
             WHERE m.seq = ?1",
        )?
        .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?)))?;
    if stored_role != role.as_str() {
        return Ok(false);
    }
    let Some(v) = text.and_then(|t| serde_json::from_str(&t).ok()) else {
        return Ok(false);
    };
    let Ok(blocks) = crate::wire::blocks_from_value(v, "content") else {
        return Ok(false);
    };
    Ok(fingerprint("", role, &blocks) == fingerprint("", role, content))
}

/// Where the messages `c` names are stored, by entry id: those with new lines (one may be stored already, in part
/// or whole), and the messages read before that they follow (the places they hang from).
fn stored_entries(
    tx: &rusqlite::Transaction<'_>,
    conv_seq: i64,
    c: &ImportedConversation,
    entries: &[Option<&str>],
    read_before: &[bool],
) -> Result<HashMap<String, (i64, i64)>> {
    let before = |i: usize| read_before.get(i).copied().unwrap_or(false);
    // What must be found in the store: the messages with new lines (one may be stored already, in part or
    // whole), and the messages read before that they follow (the places they hang from).
    let mut wanted: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut anchors: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (i, im) in c.messages.iter().enumerate() {
        if before(i) {
            continue;
        }
        wanted.extend(entries[i]);
        if let Some(p) = im.parent.filter(|&p| p < i && before(p))
            && let Some(e) = entries[p]
        {
            anchors.insert(e);
            wanted.insert(e);
        }
    }
    // Newest first, until every anchor is found: a stored copy of a new message was written after the message
    // it follows, so it is among the rows seen by then. Bounded: the lines read name only recent messages.
    let bound = (c.messages.len() as i64)
        .saturating_mul(2)
        .saturating_add(64);
    let mut by_entry: HashMap<String, (i64, i64)> = HashMap::new();
    if !wanted.is_empty() {
        let mut stmt = tx.prepare_cached(
            "SELECT seq, depth, CASE WHEN json_valid(meta) THEN coalesce(json_extract(meta, '$.lines[0].uuid'),
                    json_extract(meta, '$.line.uuid'), json_extract(meta, '$.entry.id')) END
             FROM messages WHERE conversation = ?1 ORDER BY seq DESC LIMIT ?2",
        )?;
        let mut rows = stmt.query(params![conv_seq, bound])?;
        let mut found = 0;
        while let Some(r) = rows.next()? {
            let Some(e) = r.get::<_, Option<String>>(2)? else {
                continue;
            };
            if !wanted.contains(e.as_str()) || by_entry.contains_key(&e) {
                continue;
            }
            found += usize::from(anchors.contains(e.as_str()));
            by_entry.insert(e, (r.get(0)?, r.get(1)?));
            if found == anchors.len() {
                break;
            }
        }
    }
    Ok(by_entry)
}

/// Records how far a file was read into the conversations `ids` (the first the session's; replacing what an
/// earlier read recorded).
pub(crate) fn record(
    tx: &rusqlite::Transaction<'_>,
    conv_seq: i64,
    read: &SourceRead,
    ids: &[String],
) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO sources (path, conversation, format, read_to, lines, head_hash, tail_hash, linked,
                                         conversations, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        read.path,
        conv_seq,
        read.format,
        i64::try_from(read.read_to).unwrap_or(i64::MAX),
        i64::try_from(read.lines).unwrap_or(i64::MAX),
        read.head_hash,
        read.tail_hash,
        read.linked,
        serde_json::Value::from(ids.to_vec()).to_string(),
        super::now_ms()
    ])?;
    Ok(())
}

/// Whether the store keeps a read position for the file at `path`.
pub(crate) fn known(tx: &rusqlite::Transaction<'_>, path: &str) -> Result<bool> {
    Ok(tx
        .prepare_cached("SELECT 1 FROM sources WHERE path = ?1")?
        .exists([path])?)
}

/// Moves a file's recorded read position (its conversations stay).
fn moved(tx: &rusqlite::Transaction<'_>, read: &SourceRead) -> Result<()> {
    tx.prepare_cached(
        "UPDATE sources SET read_to = ?2, lines = ?3, head_hash = ?4, tail_hash = ?5, updated_at = ?6 WHERE path = ?1",
    )?
    .execute(params![
        read.path,
        i64::try_from(read.read_to).unwrap_or(i64::MAX),
        i64::try_from(read.lines).unwrap_or(i64::MAX),
        read.head_hash,
        read.tail_hash,
        super::now_ms()
    ])?;
    Ok(())
}
