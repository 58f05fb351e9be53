//! The operation log: every pointer move (append, branch, rewind, retry, checkpoint, fork, resume window) with
//! the tips before and after, so `undo` can restore the pointers. Messages are never deleted by undo.

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;
use serde_json::{Value, json};

use super::{Result, Store, StoreError, conv_row, message_id, move_tip, now_ms};

/// One recorded operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Operation {
    pub seq: i64,
    pub kind: String,
    pub tip_before: Option<String>,
    pub tip_after: Option<String>,
    pub detail: Value,
    pub created_at: i64,
    pub undone: bool,
}

pub(crate) fn record(
    tx: &Transaction<'_>,
    conv_seq: i64,
    kind: &str,
    before: Option<i64>,
    after: Option<i64>,
    detail: &Value,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO operations (conversation, kind, tip_before, tip_after, detail, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        conv_seq,
        kind,
        before,
        after,
        if detail.is_null() {
            None
        } else {
            Some(detail.to_string())
        },
        now_ms()
    ])?;
    Ok(())
}

/// (seq, kind, tip_before, tip_after, detail) of an operations row.
type OpRow = (i64, String, Option<i64>, Option<i64>, Option<String>);

impl Store {
    /// The operation log of a conversation, oldest first.
    pub fn operations(&self, conversation: &str) -> Result<Vec<Operation>> {
        let conv = conv_row(&self.conn, conversation)?;
        let mut stmt = self.conn.prepare(
            "SELECT o.seq, o.kind, b.id, a.id, o.detail, o.created_at, o.undone FROM operations o
             LEFT JOIN messages b ON b.seq = o.tip_before LEFT JOIN messages a ON a.seq = o.tip_after
             WHERE o.conversation = ?1 ORDER BY o.seq",
        )?;
        let ops = stmt
            .query_map([conv.seq], |r| {
                let detail: Option<String> = r.get(4)?;
                Ok(Operation {
                    seq: r.get(0)?,
                    kind: r.get(1)?,
                    tip_before: r.get(2)?,
                    tip_after: r.get(3)?,
                    detail: detail
                        .and_then(|d| serde_json::from_str(&d).ok())
                        .unwrap_or(Value::Null),
                    created_at: r.get(5)?,
                    undone: r.get::<_, i64>(6)? != 0,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ops)
    }

    /// Undoes the newest operation not yet undone: restores the tip before it (compare-and-swap against the tip
    /// after it), removes a checkpoint it set, hides a fork it made, or forgets a resume window. Returns it.
    pub fn undo(&mut self, conversation: &str) -> Result<Operation> {
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let op: Option<OpRow> = tx
            .query_row(
                "SELECT seq, kind, tip_before, tip_after, detail FROM operations
                 WHERE conversation = ?1 AND undone = 0 AND kind NOT IN ('undo', 'import', 'forked') ORDER BY seq DESC LIMIT 1",
                [conv.seq],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let Some((seq, kind, before, after, detail)) = op else {
            return Err(StoreError::NothingToUndo(conv.id));
        };
        let detail: Value = detail
            .and_then(|d| serde_json::from_str(&d).ok())
            .unwrap_or(Value::Null);
        tx.execute("UPDATE operations SET undone = 1 WHERE seq = ?1", [seq])?;
        let undo_detail = json!({"undid": seq, "kind": kind});
        match kind.as_str() {
            "checkpoint" => {
                let label = detail
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                tx.execute(
                    "DELETE FROM checkpoints WHERE conversation = ?1 AND label = ?2",
                    params![conv.seq, label],
                )?;
                record(&tx, conv.seq, "undo", conv.tip, conv.tip, &undo_detail)?;
            }
            "fork" => {
                let fork = detail
                    .get("fork")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                tx.execute(
                    "UPDATE conversations SET archived = 1 WHERE id = ?1",
                    [fork],
                )?;
                record(&tx, conv.seq, "undo", conv.tip, conv.tip, &undo_detail)?;
            }
            "resume" => {
                record(&tx, conv.seq, "undo", conv.tip, conv.tip, &undo_detail)?;
            }
            _ => {
                if conv.tip != after {
                    return Err(StoreError::TipMismatch {
                        conversation: conv.id.clone(),
                        expected: message_id(&tx, after)?.unwrap_or_else(|| "(none)".into()),
                        actual: message_id(&tx, conv.tip)?.unwrap_or_else(|| "(none)".into()),
                    });
                }
                move_tip(&tx, &conv, after, before, "undo", undo_detail)?;
            }
        }
        let undone = Operation {
            seq,
            tip_before: message_id(&tx, before)?,
            tip_after: message_id(&tx, after)?,
            kind,
            detail,
            created_at: now_ms(),
            undone: true,
        };
        tx.commit()?;
        Ok(undone)
    }
}
