//! Reading and moving around the tree: conversations, the active path, branching (a tip move that writes
//! nothing) and forking (a copy of one path into a new conversation that shares no rows with the old one).

use std::collections::HashMap;

use rusqlite::{Connection, params};
use serde_json::json;

use super::{
    ConvRow, ROW_COLUMNS, Result, Row, Store, StoreError, conv_row, insert_conversation,
    message_seq, move_tip, oplog,
};
use crate::model::{Conversation, ForkedFrom, Message};

/// Rows of the path from the root to `seq`, root first.
pub(crate) fn path_rows(conn: &Connection, seq: i64) -> Result<Vec<Row>> {
    let mut stmt = conn.prepare_cached(&format!(
        "WITH RECURSIVE p(seq) AS (
            SELECT ?1
            UNION ALL SELECT m.parent FROM messages m JOIN p ON m.seq = p.seq WHERE m.parent IS NOT NULL)
         SELECT {ROW_COLUMNS} FROM p JOIN messages m ON m.seq = p.seq"
    ))?;
    let mut rows: Vec<Row> = stmt
        .query_map([seq], Row::from_sql)?
        .collect::<rusqlite::Result<_>>()?;
    rows.sort_by_key(|r| r.depth);
    Ok(rows)
}

/// Decodes path rows (root first) into messages.
pub(crate) fn path_messages(conv: &ConvRow, rows: Vec<Row>) -> Result<Vec<Message>> {
    let mut out: Vec<Message> = Vec::with_capacity(rows.len());
    for row in rows {
        let parent = out.last().map(|m| m.id.clone());
        out.push(row.into_message(&conv.id, parent)?);
    }
    Ok(out)
}

pub(crate) fn active_path_of(conn: &Connection, conv: &ConvRow) -> Result<Vec<Message>> {
    match conv.tip {
        None => Ok(Vec::new()),
        Some(tip) => path_messages(conv, path_rows(conn, tip)?),
    }
}

impl Store {
    /// All conversations that are not archived, oldest first.
    pub fn conversations(&self) -> Result<Vec<Conversation>> {
        self.query_conversations("WHERE c.archived = 0", [])
    }

    /// One conversation by id or unique prefix.
    pub fn conversation(&self, id: &str) -> Result<Conversation> {
        let conv = conv_row(&self.conn, id)?;
        self.query_conversations("WHERE c.seq = ?1", [conv.seq])?
            .into_iter()
            .next()
            .ok_or(StoreError::UnknownConversation(conv.id))
    }

    fn query_conversations<P: rusqlite::Params>(
        &self,
        filter: &str,
        p: P,
    ) -> Result<Vec<Conversation>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT c.id, c.title, t.id, fc.id, fm.id, c.created_at, c.archived,
                (SELECT count(*) FROM messages WHERE conversation = c.seq)
             FROM conversations c
             LEFT JOIN messages t ON t.seq = c.tip
             LEFT JOIN conversations fc ON fc.seq = c.forked_from_conversation
             LEFT JOIN messages fm ON fm.seq = c.forked_from_message
             {filter} ORDER BY c.seq"
        ))?;
        let rows = stmt
            .query_map(p, |r| {
                let fc: Option<String> = r.get(3)?;
                let fm: Option<String> = r.get(4)?;
                Ok(Conversation {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    tip: r.get(2)?,
                    forked_from: match (fc, fm) {
                        (Some(conversation), Some(message)) => Some(ForkedFrom {
                            conversation,
                            message,
                        }),
                        _ => None,
                    },
                    created_at: r.get(5)?,
                    archived: r.get::<_, i64>(6)? != 0,
                    messages: r.get::<_, i64>(7)? as u64,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// The active path, root to tip.
    pub fn active_path(&self, conversation: &str) -> Result<Vec<Message>> {
        let conv = conv_row(&self.conn, conversation)?;
        active_path_of(&self.conn, &conv)
    }

    /// The path from the root to a given message, root first.
    pub fn path_to(&self, conversation: &str, message: &str) -> Result<Vec<Message>> {
        let conv = conv_row(&self.conn, conversation)?;
        let (seq, _) = message_seq(&self.conn, &conv, message)?;
        path_messages(&conv, path_rows(&self.conn, seq)?)
    }

    /// Every message of a conversation (all branches), parents before children.
    pub fn messages(&self, conversation: &str) -> Result<Vec<Message>> {
        let conv = conv_row(&self.conn, conversation)?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM messages m WHERE m.conversation = ?1 ORDER BY m.seq"
        ))?;
        let rows: Vec<Row> = stmt
            .query_map([conv.seq], Row::from_sql)?
            .collect::<rusqlite::Result<_>>()?;
        let ids: HashMap<i64, String> = rows.iter().map(|r| (r.seq, r.id.clone())).collect();
        rows.into_iter()
            .map(|r| {
                let parent = r.parent.and_then(|p| ids.get(&p).cloned());
                r.into_message(&conv.id, parent)
            })
            .collect()
    }

    /// Moves the tip to any message of the same conversation; writes no message. With `expected`, the move
    /// happens only if the tip is still that message (compare-and-swap); a mismatch names both tips.
    pub fn branch(
        &mut self,
        conversation: &str,
        message: &str,
        expected: Option<&str>,
    ) -> Result<String> {
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let (target, target_id) = message_seq(&tx, &conv, message)?;
        let expected_seq = match expected {
            Some(e) => Some(message_seq(&tx, &conv, e)?.0),
            None => conv.tip,
        };
        move_tip(
            &tx,
            &conv,
            expected_seq,
            Some(target),
            "branch",
            json!(null),
        )?;
        tx.commit()?;
        Ok(target_id)
    }

    /// Copies the path root→tip (or root→`at`) into a new conversation with new ids, records where it came
    /// from, and copies the checkpoints whose targets are on that path. Returns the new conversation's id.
    pub fn fork(&mut self, conversation: &str, at: Option<&str>) -> Result<String> {
        let tx = self.write_tx()?;
        let conv = conv_row(&tx, conversation)?;
        let end = match at {
            Some(m) => message_seq(&tx, &conv, m)?.0,
            None => conv.tip.ok_or_else(|| StoreError::Empty(conv.id.clone()))?,
        };
        let title: Option<String> = tx.query_row(
            "SELECT title FROM conversations WHERE seq = ?1",
            [conv.seq],
            |r| r.get(0),
        )?;
        let title = format!("fork of {}", title.as_deref().unwrap_or(&conv.id));
        let (new_seq, new_id) = insert_conversation(&tx, Some(&title), Some((conv.seq, end)))?;
        // Only the row numbers of the path: the copy is done inside SQLite, content untouched.
        let path: Vec<i64> = {
            let mut stmt = tx.prepare_cached(
                "WITH RECURSIVE p(seq, depth) AS (
                    SELECT seq, depth FROM messages WHERE seq = ?1
                    UNION ALL SELECT m.parent, m.depth - 1 FROM messages m JOIN p ON m.seq = p.seq
                    WHERE m.parent IS NOT NULL)
                 SELECT seq FROM p ORDER BY depth",
            )?;
            stmt.query_map([end], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut map: HashMap<i64, i64> = HashMap::with_capacity(path.len());
        let mut parent: Option<i64> = None;
        {
            let mut copy = tx.prepare_cached(
                "INSERT INTO messages (id, conversation, parent, depth, role, content, created_at, meta, usage)
                 SELECT ?1, ?2, ?3, depth, role, content, created_at, meta, usage FROM messages WHERE seq = ?4",
            )?;
            for &old in &path {
                copy.execute(params![super::new_id(), new_seq, parent, old])?;
                let seq = tx.last_insert_rowid();
                map.insert(old, seq);
                parent = Some(seq);
            }
        }
        // Copy the checkpoints whose targets are on the copied path, pointed at the copies; drop the others.
        {
            let mut stmt = tx.prepare_cached(
                "SELECT label, message, created_at FROM checkpoints WHERE conversation = ?1",
            )?;
            let cps: Vec<(String, i64, i64)> = stmt
                .query_map([conv.seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO checkpoints (conversation, label, message, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (label, old, created) in cps {
                if let Some(new) = map.get(&old) {
                    insert.execute(params![new_seq, label, new, created])?;
                }
            }
        }
        let new_conv = ConvRow {
            seq: new_seq,
            id: new_id.clone(),
            tip: None,
        };
        move_tip(
            &tx,
            &new_conv,
            None,
            parent,
            "forked",
            json!({"from": conv.id}),
        )?;
        oplog::record(
            &tx,
            conv.seq,
            "fork",
            conv.tip,
            conv.tip,
            &json!({"fork": new_id}),
        )?;
        tx.commit()?;
        Ok(new_id)
    }

    /// An indented text tree of a conversation: one line per message, runs of single children kept at one
    /// indent (so a long chain does not drift right), the tip and checkpoints marked.
    pub fn tree_text(&self, conversation: &str) -> Result<String> {
        let conv = self.conversation(conversation)?;
        let messages = self.messages(&conv.id)?;
        let checkpoints = self.checkpoints(&conv.id)?;
        let mut labels: HashMap<&str, Vec<&str>> = HashMap::new();
        for c in &checkpoints {
            labels
                .entry(c.message.as_str())
                .or_default()
                .push(c.label.as_str());
        }
        let mut children: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
        for (i, m) in messages.iter().enumerate() {
            children.entry(m.parent.as_deref()).or_default().push(i);
        }
        let mut out = String::new();
        // Explicit stack (no recursion): (message index, indent).
        let mut stack: Vec<(usize, usize)> = children
            .get(&None)
            .map(|roots| roots.iter().rev().map(|&i| (i, 0)).collect())
            .unwrap_or_default();
        while let Some((i, indent)) = stack.pop() {
            let m = &messages[i];
            let mut marks = String::new();
            if conv.tip.as_deref() == Some(m.id.as_str()) {
                marks.push_str(" <- tip");
            }
            if let Some(ls) = labels.get(m.id.as_str()) {
                for l in ls {
                    marks.push_str(&format!(" [{l}]"));
                }
            }
            out.push_str(&format!(
                "{}{} {:<9} {}{}\n",
                "  ".repeat(indent),
                m.id,
                m.role.as_str(),
                m.summary(60),
                marks
            ));
            let kids = children
                .get(&Some(m.id.as_str()))
                .cloned()
                .unwrap_or_default();
            let child_indent = if kids.len() > 1 { indent + 1 } else { indent };
            for &k in kids.iter().rev() {
                stack.push((k, child_indent));
            }
        }
        Ok(out)
    }
}
