//! Checkpoints (named turn boundaries, stored with the transcript so they survive restarts) and rewind (back to
//! one, leaving a digest of what the abandoned exploration found; the abandoned path stays in the tree).

use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::rules::{require_boundary, validate_label};
use super::{
    Result, Store, StoreError, conv_row, insert_message, message_id, move_tip, now_ms, oplog,
    resume::trimmed_window,
};
use crate::model::{Block, CairnMeta, Checkpoint, NewMessage, Role};

impl Store {
    /// Labels the current tip, which must be a clean turn boundary. Labels are unique per conversation.
    pub fn checkpoint(&mut self, conversation: &str, label: &str) -> Result<Checkpoint> {
        validate_label(label)?;
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let tip_seq = conv.tip.ok_or_else(|| StoreError::Empty(conv.id.clone()))?;
        let tip =
            require_boundary(&tx, &conv)?.ok_or_else(|| StoreError::Empty(conv.id.clone()))?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT message FROM checkpoints WHERE conversation = ?1 AND label = ?2",
                params![conv.seq, label],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(at) = existing {
            return Err(StoreError::DuplicateLabel {
                conversation: conv.id.clone(),
                label: label.to_string(),
                message: message_id(&tx, Some(at))?.unwrap_or_default(),
            });
        }
        let created_at = now_ms();
        tx.execute(
            "INSERT INTO checkpoints (conversation, label, message, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![conv.seq, label, tip_seq, created_at],
        )?;
        oplog::record(
            &tx,
            conv.seq,
            "checkpoint",
            conv.tip,
            conv.tip,
            &json!({"label": label, "message": tip.id}),
        )?;
        tx.commit()?;
        Ok(Checkpoint {
            label: label.to_string(),
            message: tip.id,
            created_at,
        })
    }

    /// The checkpoints of a conversation, oldest first.
    pub fn checkpoints(&self, conversation: &str) -> Result<Vec<Checkpoint>> {
        let conv = conv_row(&self.conn, conversation)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.label, m.id, c.created_at FROM checkpoints c JOIN messages m ON m.seq = c.message
             WHERE c.conversation = ?1 ORDER BY c.created_at, c.label",
        )?;
        let cps = stmt
            .query_map([conv.seq], |r| {
                Ok(Checkpoint {
                    label: r.get(0)?,
                    message: r.get(1)?,
                    created_at: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(cps)
    }

    /// Moves the tip back to a checkpoint and appends a digest of what the abandoned exploration found as a
    /// child there; returns the digest message's id. A checkpoint trimmed away by the current resumed window
    /// is an error, never a jump to a nearby message.
    pub fn rewind(&mut self, conversation: &str, label: &str, digest: &str) -> Result<String> {
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let target: Option<(i64, String, i64)> = tx
            .query_row(
                "SELECT c.message, m.id, m.depth FROM checkpoints c JOIN messages m ON m.seq = c.message
                 WHERE c.conversation = ?1 AND c.label = ?2",
                params![conv.seq, label],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((target_seq, target_id, depth)) = target else {
            return Err(StoreError::UnknownCheckpoint {
                conversation: conv.id.clone(),
                label: label.to_string(),
            });
        };
        if trimmed_window(&tx, &conv)?
            .is_some_and(|dropped| dropped.contains(&(label.to_string(), target_id.clone())))
        {
            return Err(StoreError::CheckpointTrimmed {
                label: label.to_string(),
                message: target_id,
            });
        }
        let abandoned = message_id(&tx, conv.tip)?;
        let mut note = NewMessage::new(
            Role::User,
            vec![Block::text(format!(
                "[Rewound to checkpoint \"{label}\". What the abandoned exploration found:]\n{}",
                digest.trim()
            ))],
        );
        note.meta = json!({"cairn": CairnMeta::Rewound {
            checkpoint: label,
            abandoned_tip: abandoned.as_deref(),
        }
        .to_value()});
        let (digest_seq, digest_id) =
            insert_message(&tx, conv.seq, Some((target_seq, depth)), &note)?;
        move_tip(
            &tx,
            &conv,
            conv.tip,
            Some(digest_seq),
            "rewind",
            json!({"label": label, "checkpoint": target_id, "digest": digest_id}),
        )?;
        tx.commit()?;
        Ok(digest_id)
    }
}
