//! How a message read again is recognized as one the store holds: by the harness's own id of the entry it was
//! read from, where the harness recorded one, else by its content's fingerprint chained through its parent's.
//! Both the merge of a grown session and the reading of a file's new lines match by these; neither owns them.

use sha2::{Digest, Sha256};

use crate::model::{Block, ImageData, Role, ToolResultContent};

/// A message's fingerprint: its parent's, its role, its plain text and its images' hashes.
pub fn fingerprint(parent: &str, role: Role, content: &[Block]) -> String {
    digest(parent, role, content, None)
}

/// What names a session by its first message (a part of its source key): the fingerprint of what the message
/// itself says, without what its harness rendered beside it for the model ([`crate::model::own_blocks`]:
/// Claude Code writes its reminders after the prompt, so a session read between the two has the same first
/// message as when read whole).
pub fn own_fingerprint(role: Role, content: &[Block], meta: &serde_json::Value) -> String {
    fingerprint("", role, &crate::model::own_blocks(content, meta))
}

/// A message's fingerprint as a merge tells readings apart: [`fingerprint`], which of its thinking blocks came
/// with the provider's signature, and what of cairn's record the reader decided ([`CairnMeta::reading`]). A newer
/// reader that finds the signature an older one left out (opencode's encrypted OpenAI reasoning), or tells what
/// the harness sent where an older one could not (the files in Aider's chat after each change), reads another
/// message, whose figures differ: it is added as the file's new reading, and the former one retired. A message
/// with no such record has the fingerprint it always had.
///
/// [`CairnMeta::reading`]: crate::model::CairnMeta::reading
pub fn reading_fingerprint(
    parent: &str,
    role: Role,
    content: &[Block],
    meta: &serde_json::Value,
) -> String {
    digest(parent, role, content, Some(meta))
}

/// `reading`: the message's meta, when what a reading decided counts (signed thinking, cairn's record).
fn digest(
    parent: &str,
    role: Role,
    content: &[Block],
    reading: Option<&serde_json::Value>,
) -> String {
    let signatures = reading.is_some();
    let mut h = Sha256::new();
    h.update(parent.as_bytes());
    h.update([0]);
    h.update(role.as_str().as_bytes());
    h.update([0]);
    h.update(crate::model::plain_text(content).as_bytes());
    let images = |h: &mut Sha256, d: &ImageData| match d {
        ImageData::Bytes(b) => h.update(format!("{:x}", Sha256::digest(b)).as_bytes()),
        ImageData::Blob { hash, .. } => h.update(hash.as_bytes()),
    };
    for b in content {
        match b {
            Block::Image { data, .. } => images(&mut h, data),
            Block::ToolResult {
                content: ToolResultContent::Blocks(bs),
                ..
            } => {
                for x in bs {
                    if let Block::Image { data, .. } = x {
                        images(&mut h, data);
                    }
                }
            }
            Block::Thinking { .. } if signatures && b.is_signed_thinking() => h.update(b"\0signed"),
            _ => {}
        }
    }
    let decided = reading
        .map(crate::model::CairnMeta::reading)
        .unwrap_or_default();
    if !decided.is_empty() {
        h.update(b"\0cairn\0");
        h.update(decided.as_bytes());
    }
    format!("{:x}", h.finalize())
}

/// The harness's own id of the entry a message was read from (Claude Code: its first line's uuid, or a
/// compaction boundary's; pi: the entry's id), where it recorded one.
pub(super) fn entry_id(meta: &serde_json::Value) -> Option<&str> {
    meta.pointer("/lines/0/uuid")
        .or_else(|| meta.pointer("/line/uuid"))
        .or_else(|| meta.pointer("/entry/id"))
        .and_then(|v| v.as_str())
}

/// v19: the source key of a session whose first message holds what its harness rendered beside it (Claude Code
/// 2.1.33x's reminders) named the session by the whole message; it names it by the message's own words now
/// ([`own_fingerprint`]), so the session read again, at any length, is found as the same one. The key is the
/// importer's (`format:file:session:fingerprint:time`); only its fingerprint is replaced.
pub(super) fn backfill_own_fingerprints(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let firsts: Vec<(i64, String, String, String, String)> = {
        let mut stmt = tx.prepare(
            "SELECT c.seq, json_extract(c.meta, '$.source_key'), b.role, b.content, b.meta
             FROM conversations c
             JOIN messages m ON m.seq = (SELECT min(seq) FROM messages WHERE conversation = c.seq)
             JOIN messages b ON b.seq = coalesce(m.body_of, m.seq)
             WHERE json_valid(c.meta) AND json_extract(c.meta, '$.source_key') IS NOT NULL
               AND json_valid(b.meta) AND json_extract(b.meta, '$.rendered_attachments') IS NOT NULL",
        )?;
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    for (conv, key, role, content, meta) in firsts {
        let (Some(role), Ok(content), Ok(meta)) = (
            Role::parse(&role),
            serde_json::from_str::<serde_json::Value>(&content),
            serde_json::from_str::<serde_json::Value>(&meta),
        ) else {
            continue;
        };
        let Ok(blocks) = crate::wire::blocks_from_value(content, "content") else {
            continue;
        };
        let mut parts = key.rsplitn(3, ':');
        let (Some(time), Some(_), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let rekeyed = format!("{rest}:{}:{time}", own_fingerprint(role, &blocks, &meta));
        if rekeyed != key {
            tx.execute(
                "UPDATE conversations SET meta = json_set(meta, '$.source_key', ?1) WHERE seq = ?2",
                rusqlite::params![rekeyed, conv],
            )?;
        }
    }
    Ok(())
}
