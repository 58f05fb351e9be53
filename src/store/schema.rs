//! The SQLite schema and its forward migrations, versioned by `PRAGMA user_version`.
//!
//! The rules that must hold whatever code writes are triggers, not conventions: messages cannot be updated or
//! deleted, a parent is always in the same conversation (and exists before its child, so no cycle can form),
//! a tip or checkpoint always points into its own conversation.

use rusqlite::Connection;

/// One migration step: SQL, then (for steps that derive figures from message bodies) a Rust backfill.
pub struct Step {
    pub sql: &'static str,
    pub backfill: Option<fn(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>>,
}

/// Each entry migrates from version `i` to `i + 1`.
pub const MIGRATIONS: &[Step] = &[
    Step {
        sql: V1,
        backfill: None,
    },
    Step {
        sql: V2,
        backfill: None,
    },
    Step {
        sql: V3,
        backfill: None,
    },
    Step {
        sql: V4,
        backfill: Some(super::measures::backfill),
    },
    Step {
        sql: V5,
        backfill: Some(super::index::backfill),
    },
    Step {
        sql: V6,
        backfill: None,
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_large_result_chars),
    },
    Step {
        sql: V8,
        backfill: Some(super::measures::backfill_cache_lifetimes),
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_requests),
    },
    Step {
        sql: V10,
        backfill: None,
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_precision),
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_hidden_thinking),
    },
    Step {
        sql: V13,
        backfill: None,
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_signed_thinking),
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_unsigned_thinking),
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_speeds),
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_web_searches),
    },
    Step {
        sql: "",
        backfill: Some(super::measures::backfill_codex_tiers),
    },
    Step {
        sql: "",
        backfill: Some(super::identity::backfill_own_fingerprints),
    },
    Step {
        sql: V20,
        backfill: None,
    },
    Step {
        sql: V21,
        backfill: None,
    },
];

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
    -- the body (content, meta, usage) is either here or, for a fork's copy, in the row `body_of` names: a
    -- fork copies the path's rows with new ids and no body bytes. Bodies are immutable, so sharing them
    -- cannot leak an append from one conversation into another.
    content TEXT,
    body_of INTEGER REFERENCES messages(seq),
    created_at INTEGER NOT NULL,
    meta TEXT,
    usage TEXT,
    -- derived from the content at write time (so paths and budgets need no body decoding); a migration may
    -- recompute them, which is why they are the only columns the immutability trigger leaves writable
    tokens INTEGER NOT NULL DEFAULT 0,
    -- bit 0 has tool_use, bit 1 has tool_result, bit 2 ends a turn, bits 3-4 the role (0 user, 1 assistant,
    -- 2 tool, 3 system)
    flags INTEGER NOT NULL DEFAULT 0,
    CHECK ((content IS NULL) = (body_of IS NOT NULL))
);
-- covering: a conversation's whole tree shape is one index scan
CREATE INDEX messages_tree ON messages(conversation, seq, parent, flags, tokens, id);
-- No index on parent: children are found from the tree-shape scan, and rows are never deleted or re-keyed,
-- so the parent foreign key never needs a reverse lookup.

CREATE TRIGGER messages_are_immutable
BEFORE UPDATE OF seq, id, conversation, parent, depth, role, content, body_of, created_at, meta, usage ON messages
BEGIN SELECT RAISE(ABORT, 'messages are immutable'); END;

CREATE TRIGGER messages_are_never_deleted BEFORE DELETE ON messages
BEGIN SELECT RAISE(ABORT, 'messages are never deleted'); END;

CREATE TRIGGER message_parent_in_same_conversation BEFORE INSERT ON messages
WHEN NEW.parent IS NOT NULL AND (
    SELECT conversation = NEW.conversation AND depth + 1 = NEW.depth FROM messages WHERE seq = NEW.parent
) IS NOT 1
BEGIN SELECT RAISE(ABORT, 'parent must be an earlier message of the same conversation, one level up'); END;

CREATE TRIGGER message_body_is_a_stored_body BEFORE INSERT ON messages
WHEN NEW.body_of IS NOT NULL AND (SELECT content IS NOT NULL FROM messages WHERE seq = NEW.body_of) IS NOT 1
BEGIN SELECT RAISE(ABORT, 'body_of must name a message that holds its body'); END;

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

/// v2: imported files by content hash, so importing the same file twice does not duplicate it.
const V2: &str = r#"
CREATE TABLE imports (
    hash TEXT PRIMARY KEY,
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    source TEXT,
    imported_at INTEGER NOT NULL
) WITHOUT ROWID;
"#;

/// v3: flag bits the explorer draws without decoding bodies (error result, image, compaction marker, thinking),
/// computed for the rows already stored; a fork's copies take them from the row that holds their body.
const V3: &str = r#"
UPDATE messages SET flags = flags
  | CASE WHEN EXISTS (SELECT 1 FROM json_each(content) e
        WHERE json_extract(e.value, '$.type') = 'tool_result' AND json_extract(e.value, '$.is_error') = 1)
      THEN 32 ELSE 0 END
  | CASE WHEN EXISTS (SELECT 1 FROM json_each(content) e
        WHERE json_extract(e.value, '$.type') = 'image'
           OR (json_extract(e.value, '$.type') = 'tool_result' AND json_type(e.value, '$.content') = 'array'
               AND EXISTS (SELECT 1 FROM json_each(json_extract(e.value, '$.content')) i
                           WHERE json_extract(i.value, '$.type') = 'image')))
      THEN 64 ELSE 0 END
  | CASE WHEN json_extract(meta, '$.cairn.kind') = 'compaction' THEN 128 ELSE 0 END
  | CASE WHEN EXISTS (SELECT 1 FROM json_each(content) e WHERE json_extract(e.value, '$.type') = 'thinking')
      THEN 256 ELSE 0 END
WHERE content IS NOT NULL AND json_valid(content) AND (meta IS NULL OR json_valid(meta));
UPDATE messages SET flags = (flags & 31) | ((SELECT b.flags FROM messages b WHERE b.seq = messages.body_of) & ~31)
WHERE body_of IS NOT NULL;
"#;

/// v4: what each message measures (tokens by kind, characters, tool calls, the large results elision would take)
/// and what its provider measured (model, usage), one narrow row per message, so figures over long paths and
/// aggregates over the whole store read these instead of decoding bodies; computed for the rows already stored.
/// And a small table of values derived from the whole store (the calibration `cairn calibrate` fitted).
const V4: &str = r#"
CREATE TABLE measures (
    seq INTEGER PRIMARY KEY REFERENCES messages(seq),
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    text INTEGER NOT NULL,
    tool_use INTEGER NOT NULL,
    tool_result INTEGER NOT NULL,
    image INTEGER NOT NULL,
    thinking INTEGER NOT NULL,
    other INTEGER NOT NULL,
    chars INTEGER NOT NULL,
    images INTEGER NOT NULL,
    image_bytes INTEGER NOT NULL,
    large_results INTEGER NOT NULL,
    large_result_tokens INTEGER NOT NULL,
    large_result_images INTEGER NOT NULL,
    large_result_image_tokens INTEGER NOT NULL,
    large_result_image_bytes INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    tool_errors INTEGER NOT NULL,
    tool_refs INTEGER NOT NULL,
    model TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cache_read_tokens INTEGER,
    cache_write_tokens INTEGER,
    created_at INTEGER NOT NULL,
    -- added in v7: a store created before v4 gets it here, one at v4 to v6 from v7's backfill
    large_result_chars INTEGER NOT NULL DEFAULT 0,
    -- added in v8 (the same way): of the cache writes, those with the 1-hour lifetime
    cache_write_1h_tokens INTEGER,
    -- added in v9 (the same way): how many requests the usage sums where it is a harness's total (NULL: one)
    requests INTEGER,
    -- added in v11 (the same way): the unit a harness rounded the counts to (NULL: exact)
    usage_precision INTEGER
);
CREATE INDEX measures_by_conversation ON measures(conversation, seq);

CREATE TABLE store_values (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"#;

/// v5: research across sessions. A full-text index of every body (FTS5, contentless) and the tool calls with
/// their results, both filled by a Rust backfill; what measures need for usage statistics without reading bodies
/// (the message's flags, whether the row is a fork's copy, whether it is a compaction marker); the project each
/// session ran in; a reverse index from a body to the copies that share it.
const V5: &str = r#"
CREATE VIRTUAL TABLE search USING fts5(text, tools, content='', tokenize='unicode61 remove_diacritics 2');

CREATE TABLE tool_calls (
    body INTEGER NOT NULL REFERENCES messages(seq),
    call_id TEXT NOT NULL,
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    result INTEGER REFERENCES messages(seq),
    is_error INTEGER NOT NULL DEFAULT 0,
    result_tokens INTEGER NOT NULL DEFAULT 0,
    -- the calling reply's model
    model TEXT,
    PRIMARY KEY (body, call_id)
) WITHOUT ROWID;
CREATE INDEX tool_calls_by_time ON tool_calls(created_at);

ALTER TABLE measures ADD COLUMN flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measures ADD COLUMN compaction INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measures ADD COLUMN copy INTEGER NOT NULL DEFAULT 0;
UPDATE measures SET
    flags = (SELECT m.flags FROM messages m WHERE m.seq = measures.seq),
    copy = (SELECT m.body_of IS NOT NULL FROM messages m WHERE m.seq = measures.seq),
    compaction = coalesce((SELECT json_extract(b.meta, '$.cairn.kind') = 'compaction'
                           FROM messages m JOIN messages b ON b.seq = coalesce(m.body_of, m.seq)
                           WHERE m.seq = measures.seq AND json_valid(b.meta)), 0);
CREATE INDEX measures_by_time ON measures(created_at);

ALTER TABLE conversations ADD COLUMN project TEXT;
UPDATE conversations SET project = coalesce(
    CASE WHEN json_valid(meta) THEN coalesce(json_extract(meta, '$.header.cwd'), json_extract(meta, '$.session_meta.cwd'),
        json_extract(meta, '$.session_meta.payload.cwd'), json_extract(meta, '$.preamble[0].cwd')) END,
    (SELECT json_extract(m.meta, '$.lines[0].cwd') FROM messages m
     WHERE m.conversation = conversations.seq AND m.content IS NOT NULL AND json_valid(m.meta)
       AND json_extract(m.meta, '$.lines[0].cwd') IS NOT NULL
     ORDER BY m.seq LIMIT 1));

CREATE INDEX messages_by_body ON messages(body_of) WHERE body_of IS NOT NULL;
"#;

/// v6: usage statistics without a scan of every message: a roll-up per day, conversation and model, kept with each
/// body written (a fork's copies add nothing), filled here from the measures.
const V6: &str = r#"
CREATE TABLE usage_days (
    day INTEGER NOT NULL,
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    model TEXT NOT NULL DEFAULT '',
    messages INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 0,
    compactions INTEGER NOT NULL DEFAULT 0,
    input INTEGER NOT NULL DEFAULT 0,
    output INTEGER NOT NULL DEFAULT 0,
    cache_read INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    -- added in v8 (a store at v6 or v7 gets it from v8's backfill)
    cache_write_1h INTEGER NOT NULL DEFAULT 0,
    measured INTEGER NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0,
    tool_errors INTEGER NOT NULL DEFAULT 0,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    PRIMARY KEY (day, conversation, model)
) WITHOUT ROWID;
INSERT INTO usage_days (day, conversation, model, messages, turns, compactions, input, output, cache_read,
                        cache_write, measured, tool_calls, tool_errors, first, last)
SELECT created_at / 86400000, conversation, coalesce(model, ''), count(*),
       -- turns as v6 counted them (paths::TURN_SQL since: no result ended a turn before it)
       sum((flags & 4) != 0 AND ((flags >> 3) & 3) = 1), sum(compaction),
       sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)), sum(coalesce(cache_read_tokens, 0)),
       sum(coalesce(cache_write_tokens, 0)), count(input_tokens), sum(tool_calls), sum(tool_errors),
       min(created_at), max(created_at)
FROM measures WHERE copy = 0 GROUP BY 1, 2, 3;
"#;

/// v8: what each model was measured to take, per model (replies, measured replies, the largest prompt, first and
/// last reply): the floor of its window and the list `cairn models` starts from, kept with each body written.
/// The 1-hour cache writes (their columns and figures come from the backfill).
const V8: &str = r#"
DROP TABLE IF EXISTS models_seen;
CREATE TABLE models_seen (
    model TEXT PRIMARY KEY,
    replies INTEGER NOT NULL DEFAULT 0,
    measured INTEGER NOT NULL DEFAULT 0,
    max_prompt INTEGER NOT NULL DEFAULT 0,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO models_seen
SELECT model, count(*), count(input_tokens),
       coalesce(max(coalesce(input_tokens, 0) + coalesce(cache_read_tokens, 0) + coalesce(cache_write_tokens, 0)), 0),
       min(created_at), max(created_at)
FROM measures WHERE copy = 0 AND model IS NOT NULL GROUP BY model;
"#;

/// v10: how far each imported file was read (its length then, its line count, hashes of its first and last
/// bytes read, the files read with it, the conversations it went into), so a session that grew is read from where the last import stopped.
const V10: &str = r#"
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    format TEXT NOT NULL,
    read_to INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    head_hash TEXT NOT NULL,
    tail_hash TEXT NOT NULL,
    linked TEXT NOT NULL,
    -- the conversations the file was read into (the session's, then its subagents'), a JSON array of ids
    conversations TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
"#;

/// v13: a path's measures read as one column. Reading the 27 numbers of 100k rows cell by cell is most of what
/// `/context` of a long conversation costs (SQLite decodes each cell in its VM); `packed` is the same numbers
/// as one comma-separated text, kept by SQLite itself (a stored generated column, so no writer can let it drift;
/// an update to any measure rewrites it). A generated column cannot be added to a table: the table is rebuilt.
/// `Store::facts` reads it in this order; a later column added to measures that a path reads
/// must rebuild it again.
const V13: &str = r#"
CREATE TABLE measures_v13 (
    seq INTEGER PRIMARY KEY REFERENCES messages(seq),
    conversation INTEGER NOT NULL REFERENCES conversations(seq),
    text INTEGER NOT NULL,
    tool_use INTEGER NOT NULL,
    tool_result INTEGER NOT NULL,
    image INTEGER NOT NULL,
    thinking INTEGER NOT NULL,
    other INTEGER NOT NULL,
    chars INTEGER NOT NULL,
    images INTEGER NOT NULL,
    image_bytes INTEGER NOT NULL,
    large_results INTEGER NOT NULL,
    large_result_tokens INTEGER NOT NULL,
    large_result_images INTEGER NOT NULL,
    large_result_image_tokens INTEGER NOT NULL,
    large_result_image_bytes INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    tool_errors INTEGER NOT NULL,
    tool_refs INTEGER NOT NULL,
    model TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cache_read_tokens INTEGER,
    cache_write_tokens INTEGER,
    created_at INTEGER NOT NULL,
    large_result_chars INTEGER NOT NULL DEFAULT 0,
    cache_write_1h_tokens INTEGER,
    requests INTEGER,
    usage_precision INTEGER,
    flags INTEGER NOT NULL DEFAULT 0,
    compaction INTEGER NOT NULL DEFAULT 0,
    copy INTEGER NOT NULL DEFAULT 0,
    packed TEXT GENERATED ALWAYS AS (
        text || ',' || tool_use || ',' || tool_result || ',' || image || ',' || thinking || ',' ||
        other || ',' || chars || ',' || images || ',' || image_bytes || ',' || large_results || ',' ||
        large_result_tokens || ',' || large_result_images || ',' || large_result_image_tokens || ',' ||
        large_result_image_bytes || ',' || tool_calls || ',' || tool_errors || ',' || tool_refs || ',' ||
        ifnull(input_tokens, '') || ',' || ifnull(output_tokens, '') || ',' ||
        ifnull(cache_read_tokens, '') || ',' || ifnull(cache_write_tokens, '') || ',' || created_at || ',' ||
        large_result_chars || ',' || ifnull(cache_write_1h_tokens, '') || ',' || ifnull(requests, '') || ',' ||
        ifnull(usage_precision, '')
    ) STORED
);
INSERT INTO measures_v13 (seq, conversation, text, tool_use, tool_result, image, thinking, other, chars,
    images, image_bytes, large_results, large_result_tokens, large_result_images, large_result_image_tokens,
    large_result_image_bytes, tool_calls, tool_errors, tool_refs, model, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, created_at, large_result_chars, cache_write_1h_tokens, requests,
    usage_precision, flags, compaction, copy)
SELECT seq, conversation, text, tool_use, tool_result, image, thinking, other, chars, images, image_bytes,
    large_results, large_result_tokens, large_result_images, large_result_image_tokens,
    large_result_image_bytes, tool_calls, tool_errors, tool_refs, model, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, created_at, large_result_chars, cache_write_1h_tokens, requests,
    usage_precision, flags, compaction, copy
FROM measures;
DROP TABLE measures;
ALTER TABLE measures_v13 RENAME TO measures;
CREATE INDEX measures_by_conversation ON measures(conversation, seq);
CREATE INDEX measures_by_time ON measures(created_at);
"#;

/// v20: messages counted by a public tokenizer ([`super::recounts`]), kept so a path is counted once: `measure` is
/// the message's [`crate::tokens::Measure`], its numbers as a JSON array in the order of its fields, `version` the counting rules it was made under.
const V20: &str = r#"
CREATE TABLE IF NOT EXISTS recounts (
    seq INTEGER NOT NULL REFERENCES messages(seq),
    tokenizer TEXT NOT NULL,
    version INTEGER NOT NULL,
    measure TEXT NOT NULL,
    PRIMARY KEY (seq, tokenizer)
) WITHOUT ROWID;
"#;

/// v21: the replies that recorded output and no prompt ([`super::usage`]'s unrecorded prompts), indexed apart: few
/// or none in most stores, so `stats` finds them without reading every measure.
const V21: &str = r#"
CREATE INDEX IF NOT EXISTS measures_unrecorded_prompts ON measures(conversation, model)
WHERE copy = 0 AND output_tokens > 0
  AND coalesce(input_tokens, 0) + coalesce(cache_read_tokens, 0) + coalesce(cache_write_tokens, 0) = 0;
"#;

/// Brings a store at `from` up to [`VERSION`], all steps in one transaction.
pub fn migrate(conn: &mut Connection, from: i64) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Another process may have migrated between our read and our lock.
    let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let start = now.max(from);
    for (i, step) in MIGRATIONS.iter().enumerate().skip(start as usize) {
        tx.execute_batch(step.sql)?;
        if let Some(backfill) = step.backfill {
            backfill(&tx)?;
        }
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()
}
