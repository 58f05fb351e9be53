//! Reading and moving around the tree: conversations, the active path, branching (a tip move that writes
//! nothing) and forking (a copy of one path into a new conversation that shares no rows with the old one).

use std::collections::HashMap;

use rusqlite::{Connection, params};
use serde_json::json;

use super::paths::{
    Head, PathHeads, branching_path, conversation_heads, load_bodies, load_messages, path_heads,
};
use super::{
    ConvRow, Result, Store, StoreError, conv_row, insert_conversation, message_seq, move_tip, oplog,
};
use crate::model::{Conversation, ForkedFrom, Message};

pub(crate) fn active_path_of(conn: &Connection, conv: &ConvRow) -> Result<Vec<Message>> {
    match conv.tip {
        None => Ok(Vec::new()),
        Some(tip) => load_messages(conn, conv, &path_heads(conn, conv.seq, tip)?),
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
        let linked = crate::model::cairn_meta::LINKED_TO_SQL;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT c.id, c.title, t.id, fc.id, fm.id, c.created_at, c.archived,
                (SELECT count(*) FROM messages WHERE conversation = c.seq),
                CASE WHEN json_valid(c.meta) THEN json_extract(c.meta, '{linked}') END,
                CASE WHEN json_valid(c.meta) THEN json_extract(c.meta, '$.spawned_by.call_id') END
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
                    linked_to: r.get(8)?,
                    spawned_by: r.get(9)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// A conversation's source metadata (what an import kept of the file's header and records).
    pub fn conversation_meta(&self, id: &str) -> Result<serde_json::Value> {
        let conv = conv_row(&self.conn, id)?;
        let meta: Option<String> = self.conn.query_row(
            "SELECT meta FROM conversations WHERE seq = ?1",
            [conv.seq],
            |r| r.get(0),
        )?;
        Ok(meta
            .and_then(|m| serde_json::from_str(&m).ok())
            .unwrap_or(serde_json::Value::Null))
    }

    /// The string a conversation's source metadata holds at `path` (a JSON path, `$.a.b`), read in SQLite (the
    /// rest of the metadata is never parsed here).
    pub fn meta_string(&self, id: &str, path: &str) -> Result<Option<String>> {
        let conv = conv_row(&self.conn, id)?;
        Ok(self.conn.query_row(
            "SELECT CASE WHEN json_valid(meta) AND json_type(meta, ?2) = 'text' THEN json_extract(meta, ?2) END
             FROM conversations WHERE seq = ?1",
            params![conv.seq, path],
            |r| r.get(0),
        )?)
    }

    /// The conversations whose source metadata holds `value` (a string) at `path` (a JSON path, `$.a.b`), oldest
    /// first: a session named by the id its harness gave it.
    pub fn conversations_by_meta(&self, path: &str, value: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM conversations
             WHERE instr(meta, ?2) > 0 AND json_valid(meta) AND json_extract(meta, ?1) = ?2 ORDER BY seq",
        )?;
        let ids = stmt
            .query_map(params![path, value], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(ids)
    }

    /// The source metadata of a conversation's first `n` messages in the order they were written (what an import
    /// kept of the lines each came from), a copy's read from the body it shares.
    pub fn opening_metas(&self, id: &str, n: usize) -> Result<Vec<serde_json::Value>> {
        let conv = conv_row(&self.conn, id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT coalesce(b.meta, m.meta) FROM messages m LEFT JOIN messages b ON b.seq = m.body_of
             WHERE m.conversation = ?1 ORDER BY m.seq LIMIT ?2",
        )?;
        let metas = stmt
            .query_map(params![conv.seq, n as i64], |r| {
                r.get::<_, Option<String>>(0)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(metas
            .into_iter()
            .map(|m| {
                m.and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(serde_json::Value::Null)
            })
            .collect())
    }

    /// The context windows harnesses said they ran models with (a conversation's meta `windows`, Codex's
    /// `model_context_window`): (model as recorded, harness, window), one per conversation and model. Read in
    /// SQLite, so the records a conversation's meta keeps beside are never parsed here.
    pub fn harness_windows(&self) -> Result<Vec<(String, String, u64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT w.key, coalesce(json_extract(c.meta, '$.source'), 'cairn'), w.value
             FROM conversations c,
                  json_each(CASE WHEN json_valid(c.meta) THEN c.meta ELSE '{}' END, '$.windows') w
             WHERE instr(c.meta, '\"windows\":{') > 0 AND w.type = 'integer'",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?.max(0) as u64,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The records of type `ty` that the conversations with replies of `model` (by name as recorded) keep in their
    /// meta (`records`: what a reader kept of the lines that are not messages, such as Claude Code's `cost-state`),
    /// in the order of the conversations. Read in SQLite, from those conversations only: only those records are
    /// parsed here.
    pub fn kept_records(&self, ty: &str, model: &str) -> Result<Vec<serde_json::Value>> {
        Ok(self
            .records(ty, Some(model))?
            .into_iter()
            .map(|(_, r)| r)
            .collect())
    }

    /// Every kept record or tally of type `ty` (see [`Store::kept_records`]) with the conversation that keeps it,
    /// in the order of the conversations.
    pub fn records_of_type(&self, ty: &str) -> Result<Vec<(String, serde_json::Value)>> {
        self.records(ty, None)
    }

    /// The kept records and tallies of type `ty`, of the conversations with replies of `model` where one is named,
    /// with the conversation that keeps each. Read in SQLite, from the conversations whose meta names the type only.
    fn records(&self, ty: &str, model: Option<&str>) -> Result<Vec<(String, serde_json::Value)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, r.value
             FROM conversations c,
                  (SELECT '$.records' AS kept UNION ALL SELECT '$.tallies') k,
                  json_each(CASE WHEN json_valid(c.meta) THEN c.meta ELSE '{}' END, k.kept) r
             WHERE (?3 IS NULL OR c.seq IN (SELECT DISTINCT conversation FROM measures WHERE model = ?3))
               AND instr(c.meta, ?1) > 0 AND json_extract(r.value, '$.type') = ?2
             ORDER BY c.seq",
        )?;
        let needle = format!("\"type\":\"{ty}\"");
        let rows = stmt
            .query_map(rusqlite::params![needle, ty, model], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(c, r)| Some((c, serde_json::from_str(&r).ok()?)))
            .collect())
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
        load_messages(&self.conn, &conv, &path_heads(&self.conn, conv.seq, seq)?)
    }

    /// The active path's heads (ids, roles, depths, token estimates; no content), root to tip. This is the
    /// fast way to open a long conversation: one index scan, no body decoded.
    pub fn active_path_heads(&self, conversation: &str) -> Result<Vec<Head>> {
        let conv = conv_row(&self.conn, conversation)?;
        match conv.tip {
            None => Ok(Vec::new()),
            Some(tip) => path_heads(&self.conn, conv.seq, tip),
        }
    }

    /// The heads of the active path (or of the path to `at`) with where the tree branches along it, from one
    /// scan of the conversation's heads.
    pub fn branching_path(&self, conversation: &str, at: Option<&str>) -> Result<PathHeads> {
        let conv = conv_row(&self.conn, conversation)?;
        let end = match at {
            Some(m) => message_seq(&self.conn, &conv, m)?.0,
            None => match conv.tip {
                Some(tip) => tip,
                None => return Ok(PathHeads::default()),
            },
        };
        branching_path(&self.conn, conv.seq, end)
    }

    /// The heads of the path from the root to a message (root first).
    pub fn path_heads_to(&self, conversation: &str, message: &str) -> Result<Vec<Head>> {
        let conv = conv_row(&self.conn, conversation)?;
        let (seq, _) = message_seq(&self.conn, &conv, message)?;
        path_heads(&self.conn, conv.seq, seq)
    }

    /// Every message head of a conversation (all branches; no content), in write order, so parents come before
    /// children: the tree's shape from one covering-index scan. [`Head::parent_in`] finds a head's parent.
    pub fn heads(&self, conversation: &str) -> Result<Vec<Head>> {
        let conv = conv_row(&self.conn, conversation)?;
        conversation_heads(&self.conn, conv.seq)
    }

    /// The messages (with content) of the given heads, in that order: for reading a window of a long path.
    pub fn load(&self, conversation: &str, heads: &[Head]) -> Result<Vec<Message>> {
        let conv = conv_row(&self.conn, conversation)?;
        load_messages(&self.conn, &conv, heads)
    }

    /// Every message of a conversation (all branches), parents before children.
    pub fn messages(&self, conversation: &str) -> Result<Vec<Message>> {
        let conv = conv_row(&self.conn, conversation)?;
        let heads = conversation_heads(&self.conn, conv.seq)?;
        let ids: HashMap<i64, &str> = heads.iter().map(|h| (h.seq, h.id.as_str())).collect();
        let parents = heads
            .iter()
            .map(|h| {
                h.parent_seq
                    .and_then(|p| ids.get(&p).map(|s| s.to_string()))
            })
            .collect();
        load_bodies(&self.conn, &conv, &heads, parents)
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
        let path: Vec<i64> = path_heads(&tx, conv.seq, end)?
            .into_iter()
            .map(|h| h.seq)
            .collect();
        // One statement copies the whole path (ids, tree links and flags; bodies are referenced, not copied,
        // see the schema): the copies get consecutive row numbers from `base`, so each
        // copy's parent is the row before it. Rows are inserted root first, so every parent exists (and the
        // schema's triggers check it) before its child.
        let base: i64 =
            tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM messages", [], |r| {
                r.get(0)
            })?;
        let pairs: Vec<serde_json::Value> = path
            .iter()
            .map(|&old| json!([old, super::new_id()]))
            .collect();
        let seqs: Vec<serde_json::Value> = path
            .iter()
            .enumerate()
            .map(|(i, &old)| json!([old, base + i as i64]))
            .collect();
        let copied = tx.execute(
            "INSERT INTO messages
                (seq, id, conversation, parent, depth, role, body_of, created_at, tokens, flags)
             SELECT ?1 + p.key, p.value ->> 1, ?2, CASE WHEN p.key = 0 THEN NULL ELSE ?1 + p.key - 1 END,
                    m.depth, m.role, coalesce(m.body_of, m.seq), m.created_at, m.tokens, m.flags
             FROM json_each(?3) p JOIN messages m ON m.seq = p.value ->> 0
             ORDER BY p.key",
            params![base, new_seq, serde_json::Value::Array(pairs).to_string()],
        )?;
        if copied != path.len() {
            return Err(StoreError::Corrupt {
                id: conv.id.clone(),
                reason: format!("fork copied {copied} of {} messages", path.len()),
            });
        }
        super::measures::copy(&tx, new_seq, &serde_json::Value::Array(seqs).to_string())?;
        // a fork runs in its origin's project (its bodies are the origin's, already indexed)
        tx.execute(
            "UPDATE conversations SET project = (SELECT project FROM conversations WHERE seq = ?1) WHERE seq = ?2",
            params![conv.seq, new_seq],
        )?;
        let map: HashMap<i64, i64> = path
            .iter()
            .enumerate()
            .map(|(i, &old)| (old, base + i as i64))
            .collect();
        let parent = if path.is_empty() {
            None
        } else {
            Some(base + path.len() as i64 - 1)
        };
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
