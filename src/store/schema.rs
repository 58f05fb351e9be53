//! The SQLite schema and its forward migrations, versioned by `PRAGMA user_version`.
//!
//! The rules that must hold whatever code writes are triggers, not conventions: messages cannot be updated or
//! deleted, a parent is always in the same conversation (and exists before its child, so no cycle can form),
//! a tip or checkpoint always points into its own conversation.

use rusqlite::Connection;

/// Each entry migrates from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1];

pub const VERSION: i64 = MIGRATIONS.len() as i64;

const V1: &str = r#"
CREATE TABLE conversations (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT,
    tip INTEGER REFERENCES messages(seq),
    forked_from_conversation INTEGER REFERENCES conversations(seq),
    forked_from_message INTEGER REFERENCES messages(seq),
    created_at INTEGER NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    meta TEXT
);

CREATE TABLE messages (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    parent INTEGER REFERENCES messages(seq),
    depth INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    meta TEXT,
    usage TEXT
);
CREATE INDEX messages_by_conversation ON messages(conversation);
CREATE INDEX messages_by_parent ON messages(parent);

CREATE TRIGGER messages_are_immutable BEFORE UPDATE ON messages
BEGIN SELECT RAISE(ABORT, 'messages are immutable'); END;

CREATE TRIGGER messages_are_never_deleted BEFORE DELETE ON messages
BEGIN SELECT RAISE(ABORT, 'messages are never deleted'); END;

CREATE TRIGGER message_parent_in_same_conversation BEFORE INSERT ON messages
WHEN NEW.parent IS NOT NULL AND (
    (SELECT conversation FROM messages WHERE seq = NEW.parent) IS NOT NEW.conversation
    OR (SELECT depth + 1 FROM messages WHERE seq = NEW.parent) IS NOT NEW.depth)
BEGIN SELECT RAISE(ABORT, 'parent must be an earlier message of the same conversation, one level up'); END;

CREATE TRIGGER message_root_depth BEFORE INSERT ON messages
WHEN NEW.parent IS NULL AND NEW.depth IS NOT 0
BEGIN SELECT RAISE(ABORT, 'a root has depth 0'); END;

CREATE TRIGGER tip_in_own_conversation BEFORE UPDATE OF tip ON conversations
WHEN NEW.tip IS NOT NULL AND (SELECT conversation FROM messages WHERE seq = NEW.tip) IS NOT NEW.seq
BEGIN SELECT RAISE(ABORT, 'a tip must be a message of its own conversation'); END;

CREATE TABLE blobs (
    hash TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    bytes BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE checkpoints (
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    label TEXT NOT NULL,
    message INTEGER NOT NULL REFERENCES messages(seq),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (conversation, label)
);

CREATE TRIGGER checkpoint_in_own_conversation BEFORE INSERT ON checkpoints
WHEN (SELECT conversation FROM messages WHERE seq = NEW.message) IS NOT NEW.conversation
BEGIN SELECT RAISE(ABORT, 'a checkpoint must label a message of its own conversation'); END;

CREATE TABLE operations (
    seq INTEGER PRIMARY KEY,
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    kind TEXT NOT NULL,
    tip_before INTEGER REFERENCES messages(seq),
    tip_after INTEGER REFERENCES messages(seq),
    detail TEXT,
    created_at INTEGER NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX operations_by_conversation ON operations(conversation, seq);
"#;

/// Brings a store at `from` up to [`VERSION`], all steps in one transaction.
pub fn migrate(conn: &mut Connection, from: i64) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Another process may have migrated between our read and our lock.
    let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let start = now.max(from);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(start as usize) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()
}
