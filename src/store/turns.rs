//! Writing messages: whole turns (the only way a live conversation grows) and whole imported trees.
//!
//! A turn is checked before anything is written (tool calls paired, ends where the conversation may rest,
//! attaches to a turn boundary), then written with its tip move in one durable transaction. An import writes a
//! whole tree in one transaction too, but as it was recorded: a transcript may end mid-turn, and that is what
//! `retry` is for.

use rusqlite::OptionalExtension;
use serde_json::{Value, json};

use super::imported::{ImportedConversation, ImportedMessage};
use super::rules::{require_boundary, validate_label, validate_turn};
use super::{
    ConvRow, Result, Store, StoreError, conv_row, insert_conversation, insert_message, move_tip,
};
use crate::model::{NewMessage, Role};

impl Store {
    /// Appends one complete turn at the tip and moves the tip to its last message, in one durable transaction.
    /// Returns the new message ids. A turn with an unpaired tool call or result, or one that does not end
    /// where the conversation may rest, is refused and nothing is written.
    pub fn append_turn(
        &mut self,
        conversation: &str,
        messages: &[NewMessage],
    ) -> Result<Vec<String>> {
        self.append(conversation, messages, "append")
    }

    /// Appends a compaction marker (a system message that says how the context is assembled from here on) at
    /// the tip, which must be a turn boundary; recorded as a `compact` operation, undoable like any tip move.
    pub fn append_marker(&mut self, conversation: &str, marker: NewMessage) -> Result<String> {
        if marker.role != Role::System {
            return Err(StoreError::InvalidTurn(
                "a compaction marker is a system message".into(),
            ));
        }
        let ids = self.append(conversation, std::slice::from_ref(&marker), "compact")?;
        ids.into_iter()
            .next()
            .ok_or_else(|| StoreError::InvalidTurn("marker not written".into()))
    }

    /// Several compaction markers (a ladder's rungs), in order, in one transaction; returns their ids.
    pub fn append_markers(
        &mut self,
        conversation: &str,
        markers: &[NewMessage],
    ) -> Result<Vec<String>> {
        if markers.iter().any(|m| m.role != Role::System) {
            return Err(StoreError::InvalidTurn(
                "a compaction marker is a system message".into(),
            ));
        }
        self.append(conversation, markers, "compact")
    }

    fn append(
        &mut self,
        conversation: &str,
        messages: &[NewMessage],
        kind: &str,
    ) -> Result<Vec<String>> {
        validate_turn(messages)?;
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let tip = require_boundary(&tx, &conv)?;
        let mut parent = tip.map(|t| (conv.tip.unwrap_or_default(), t.depth));
        let mut ids = Vec::with_capacity(messages.len());
        for m in messages {
            let (seq, id) = insert_message(&tx, conv.seq, parent, m)?;
            parent = Some((seq, parent.map_or(0, |p| p.1 + 1)));
            ids.push(id);
        }
        let new_tip = parent.map(|p| p.0);
        move_tip(
            &tx,
            &conv,
            conv.tip,
            new_tip,
            kind,
            json!({"messages": ids.len()}),
        )?;
        tx.commit()?;
        Ok(ids)
    }

    /// Writes a whole imported tree as a new conversation in one transaction (all or nothing) and returns the
    /// conversation id and the new message ids (in input order). Parents must come before their children.
    /// `checkpoints` label messages by index.
    pub fn import_conversation(
        &mut self,
        title: Option<&str>,
        messages: &[ImportedMessage],
        tip: Option<usize>,
        checkpoints: &[(String, usize)],
        meta: &Value,
    ) -> Result<(String, Vec<String>)> {
        let tx = self.write_tx()?;
        let conv = ImportedConversation {
            title: title.map(str::to_string),
            messages: messages.to_vec(),
            tip,
            checkpoints: checkpoints.to_vec(),
            meta: meta.clone(),
            linked_to: None,
        };
        let out = write_imported(&tx, &conv, None)?;
        tx.commit()?;
        Ok(out)
    }

    /// Writes the conversations read from one source file in one transaction, and records the file's content
    /// hash so the same file is not imported twice. Returns the new conversation ids, or `Err(Duplicate)` naming
    /// the conversation the file was first imported as.
    pub fn import_file(
        &mut self,
        hash: &str,
        source: &str,
        conversations: &[ImportedConversation],
        read: Option<&super::SourceRead>,
    ) -> Result<Vec<String>> {
        let tx = self.write_tx()?;
        let existing: Option<String> = tx
            .query_row(
                "SELECT c.id FROM imports i JOIN conversations c ON c.seq = i.conversation WHERE i.hash = ?1",
                [hash],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            // a file imported before the store kept read positions gets one (the window follows files by it)
            if let Some(r) = read
                && !super::sources::known(&tx, &r.path)?
            {
                let seq: i64 =
                    tx.query_row("SELECT seq FROM conversations WHERE id = ?1", [&id], |r| {
                        r.get(0)
                    })?;
                super::sources::record(&tx, seq, r, std::slice::from_ref(&id))?;
                tx.commit()?;
            }
            return Err(StoreError::Duplicate {
                file: source.to_string(),
                conversation: id,
            });
        }
        let mut ids: Vec<String> = Vec::with_capacity(conversations.len());
        for conv in conversations {
            let link = conv.linked_to.and_then(|i| ids.get(i)).cloned();
            let id = write_imported(&tx, conv, link.as_deref())?.0;
            // a history its harness copied from a session already held (a fork, a resume) counts once
            super::copies::mark_copies(&tx, conv_row(&tx, &id)?.seq, 0)?;
            ids.push(id);
        }
        if let Some(first) = ids.first() {
            let seq: i64 = tx.query_row(
                "SELECT seq FROM conversations WHERE id = ?1",
                [first],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO imports (hash, conversation, source, imported_at) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![hash, seq, source, super::now_ms()],
            )?;
            if let Some(r) = read {
                super::sources::record(&tx, seq, r, &ids)?;
            }
        }
        tx.commit()?;
        Ok(ids)
    }
}

/// How many messages an import prepares ahead of the one it writes.
const AHEAD: usize = 256;

pub(crate) fn write_imported(
    tx: &rusqlite::Transaction<'_>,
    c: &ImportedConversation,
    linked_to: Option<&str>,
) -> Result<(String, Vec<String>)> {
    let (conv_seq, conv_id) = insert_conversation(tx, c.title.as_deref(), None)?;
    let mut meta = c.meta.clone();
    if let Some(l) = linked_to {
        if !meta.is_object() {
            meta = json!({});
        }
        meta["cairn"] = crate::model::CairnMeta::LinkedTo(l).to_value();
    }
    if !meta.is_null() {
        tx.execute(
            "UPDATE conversations SET meta = ?1 WHERE seq = ?2",
            rusqlite::params![meta.to_string(), conv_seq],
        )?;
    }
    // (seq, depth) of each written message
    let mut written: Vec<(i64, i64)> = Vec::with_capacity(c.messages.len());
    let mut ids = Vec::with_capacity(c.messages.len());
    // the other core prepares the messages (their stored forms, figures, indexed text) a little ahead of the
    // writes, in order
    std::thread::scope(|scope| -> Result<()> {
        let (ahead, prepared) = std::sync::mpsc::sync_channel(AHEAD);
        let messages = &c.messages;
        scope.spawn(move || {
            for im in messages {
                // the writer stopped (an error): nothing more to prepare
                if ahead.send(super::prepare(&im.message)).is_err() {
                    break;
                }
            }
        });
        for (i, im) in c.messages.iter().enumerate() {
            let parent = match im.parent {
                None => None,
                Some(p) if p < i => Some(written[p]),
                Some(p) => {
                    return Err(StoreError::InvalidTurn(format!(
                        "imported message {i} names parent {p}, which does not come before it"
                    )));
                }
            };
            let p = prepared.recv().map_err(|_| {
                StoreError::InvalidTurn(format!("imported message {i} could not be prepared"))
            })??;
            let (seq, id) = super::insert_prepared(tx, conv_seq, parent, &im.message, p)?;
            written.push((seq, parent.map_or(0, |p| p.1 + 1)));
            ids.push(id);
        }
        Ok(())
    })?;
    let firsts: Vec<&Value> = c
        .messages
        .iter()
        .take(20)
        .map(|m| &m.message.meta)
        .collect();
    if let Some(project) = super::index::project_of(&c.meta, &firsts) {
        tx.execute(
            "UPDATE conversations SET project = ?1 WHERE seq = ?2",
            rusqlite::params![project, conv_seq],
        )?;
    }
    let conv = ConvRow {
        seq: conv_seq,
        id: conv_id.clone(),
        tip: None,
    };
    let tip_seq = match c.tip {
        Some(t) if t < written.len() => Some(written[t].0),
        Some(t) => {
            return Err(StoreError::InvalidTurn(format!(
                "tip index {t} is out of range"
            )));
        }
        None => written.last().map(|w| w.0),
    };
    move_tip(
        tx,
        &conv,
        None,
        tip_seq,
        "import",
        json!({"messages": ids.len()}),
    )?;
    for (label, index) in &c.checkpoints {
        validate_label(label)?;
        let target = written.get(*index).ok_or_else(|| {
            StoreError::InvalidTurn(format!(
                "checkpoint {label} names message {index}, out of range"
            ))
        })?;
        tx.execute(
            "INSERT INTO checkpoints (conversation, label, message, created_at) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![conv_seq, label, target.0, super::now_ms()],
        )?;
    }
    Ok((conv_id, ids))
}
