//! The session store: every conversation as a tree of immutable messages in one SQLite file.
//!
//! Why SQLite: a turn must land whole or not at all, even when the writer is killed mid-write, and the tree must
//! stay consistent when two processes (the window and a CLI) touch it. A transaction per turn with
//! `synchronous=FULL` in WAL mode gives both; triggers make the tree rules hold whatever code writes.
//!
//! Every pointer move (tip, checkpoint, fork) goes through [`Store`] methods that check and record it in the
//! operation log in the same transaction, so `undo` can always restore the pointers before it.

mod checkpoints;
mod copies;
mod error;
mod identity;
mod imported;
pub mod index;
mod measures;
mod merge;
mod oplog;
mod paths;
mod records;
mod recounts;
mod resume;
mod rules;
mod schema;
mod search;
mod sources;
mod tree;
mod turns;
mod usage;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub use copies::{Copies, Overlap};
pub use error::{Result, StoreError};
pub use identity::{fingerprint, own_fingerprint};
pub use imported::{ImportedConversation, ImportedMessage};
pub use measures::{Facts, ModelSeen};
pub use merge::Merged;
pub use oplog::Operation;
pub use paths::{Head, PathHeads};
pub use resume::{Budget, Resumed, Retry};
pub use search::{Hit, Hits, SearchQuery};
pub use sources::{KnownSource, SourceRead, Tail};
pub use usage::{By, PathUsage, UsageBucket, UsageGroup, time_key};

use crate::model::{Block, ImageData, Message, NewMessage, Role};
use crate::wire::{self, Images};

/// An open store. Cheap to open; one per thread.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Opened where it cannot be written (a read-only file or mount): every read works, every write is refused.
    read_only: bool,
}

/// How long a write waits for another process's write (an import, a turn) to commit before it fails.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A conversation's internal row numbers, resolved from its public id.
#[derive(Debug, Clone)]
pub(crate) struct ConvRow {
    seq: i64,
    id: String,
    tip: Option<i64>,
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A new random id: 16 lowercase hex digits (64 bits). Uniqueness is also enforced by the schema.
///
/// One call to the OS for a random key per process, then a counter mixed through splitmix64 (a bijection, so
/// ids within a process never repeat; across processes the keys differ). Cheap enough for forks of 100k
/// messages.
pub(crate) fn new_id() -> String {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static KEY: OnceLock<u64> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let key = *KEY.get_or_init(|| {
        let mut buf = [0u8; 8];
        if getrandom::fill(&mut buf).is_err() {
            // No OS randomness: time and process id still separate processes.
            let t = now_ms() as u64;
            buf = (t.rotate_left(20) ^ u64::from(std::process::id())).to_le_bytes();
        }
        u64::from_le_bytes(buf)
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut z = key.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    format!("{z:016x}")
}

impl Store {
    /// Opens (creating if needed) the store at `path`. The folder must exist. A file that is not a cairn store,
    /// or one written by a newer cairn, is refused and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        let open_err = |reason: String| StoreError::Open {
            path: path.clone(),
            reason,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            return Err(open_err(format!("folder {} does not exist", dir.display())));
        }
        if path.is_dir() {
            return Err(open_err("it is a folder".to_string()));
        }
        if path.exists() && !writable(&path) {
            return Self::open_read_only(&path);
        }
        let conn = Connection::open(&path).map_err(|e| open_err(e.to_string()))?;
        Self::setup(conn, path, false)
    }

    /// Opens the store at `path` for reading only, writing nothing to it or beside it (no journal, no WAL or
    /// shared-memory file where it can avoid it): a store on a read-only mount, a copy someone sent, an archive.
    /// A store that would need a migration is refused
    /// (migrating is a write): open it once where it can be written.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        use rusqlite::OpenFlags;
        let path = path.as_ref().to_path_buf();
        let open_err = |reason: String| StoreError::Open {
            path: path.clone(),
            reason,
        };
        if !path.is_file() {
            return Err(open_err("no such file".to_string()));
        }
        let abs = std::fs::canonicalize(&path).map_err(|e| open_err(e.to_string()))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        // with no write-ahead log beside it holding commits, as immutable: SQLite then writes nothing at all; with
        // one, read-only, so what the log holds is read too (SQLite may need its shared-memory file for that)
        let wal = {
            let mut w = abs.clone().into_os_string();
            w.push("-wal");
            std::fs::metadata(std::path::PathBuf::from(w)).is_ok_and(|m| m.len() > 0)
        };
        let uri = format!(
            "file:{}?{}",
            uri_path(&abs),
            if wal { "mode=ro" } else { "immutable=1" }
        );
        let conn = Connection::open_with_flags(uri, flags).map_err(|e| open_err(e.to_string()))?;
        Self::setup(conn, path, true)
    }

    /// Whether this store was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// A private store in memory (for tests and previews).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()?;
        Self::setup(conn, PathBuf::from(":memory:"), false)
    }

    fn setup(mut conn: Connection, path: PathBuf, read_only: bool) -> Result<Store> {
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: e.to_string(),
        };
        conn.busy_timeout(BUSY_WAIT).map_err(open_err)?;
        // Reading the header first: a file that is not SQLite fails here, before anything is written to it. One
        // statement reads one snapshot: another process may be creating this store meanwhile, and a version read
        // before its commit with tables read after it would look like someone else's file.
        let (version, app, tables, has_cairn_tables): (i64, i64, i64, bool) = conn
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version),
                        (SELECT application_id FROM pragma_application_id),
                        (SELECT count(*) FROM sqlite_master),
                        (SELECT count(*) = 2 FROM sqlite_master WHERE type = 'table' AND
                           ((name = 'conversations' AND sql LIKE '%forked_from_conversation%') OR
                            (name = 'messages' AND sql LIKE '%parent%' AND sql LIKE '%depth%')))",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(open_err)?;
        if version > schema::VERSION {
            return Err(StoreError::NewerSchema {
                path,
                found: version,
                supported: schema::VERSION,
            });
        }
        // a store cairn made carries its application id; one from before the id has cairn's own tables. Anything
        // else is someone else's file and is never written to (not even switched to WAL).
        let foreign = (version == 0 && tables > 0)
            || (app != 0 && app != APPLICATION_ID)
            || (version > 0 && app == 0 && !has_cairn_tables);
        if foreign {
            return Err(StoreError::Open {
                path,
                reason: "an SQLite file that is not a cairn store".to_string(),
            });
        }
        if read_only {
            if version < schema::VERSION {
                return Err(StoreError::Open {
                    path,
                    reason: format!(
                        "it is read-only and at schema version {version}; this cairn reads version {} (open it once \
                         where it can be written, or copy it)",
                        schema::VERSION
                    ),
                });
            }
            conn.pragma_update(None, "cache_size", -65536)
                .map_err(open_err)?;
            return Ok(Store {
                conn,
                path,
                read_only,
            });
        }
        // WAL: readers never block the writer. FULL: a commit is on disk before append returns. Switching to WAL
        // takes a lock the busy handler does not wait for: many processes opening a new store at once retry it.
        retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL")).map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        // Reads of long conversations: map the file instead of copying pages, and keep more of them cached.
        conn.pragma_update(None, "mmap_size", 1i64 << 30)
            .map_err(open_err)?;
        conn.pragma_update(None, "cache_size", -65536)
            .map_err(open_err)?;
        if version < schema::VERSION {
            retry_busy(|| schema::migrate(&mut conn, version)).map_err(open_err)?;
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(open_err)?;
        }
        Ok(Store {
            conn,
            path,
            read_only,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A number that changes when another connection (another process, another `Store`) commits to the file,
    /// and not for this connection's own writes (`PRAGMA data_version`): a constant-time "did anyone else
    /// write?" for viewers that follow a store.
    pub fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// The messages whose stored rows cannot be decoded: (conversation, message, why).
    pub fn unreadable_rows(&self) -> Result<Vec<(String, String, String)>> {
        paths::unreadable(&self.conn)
    }

    /// `PRAGMA integrity_check`: `Ok(())` or the problems SQLite found.
    pub fn integrity_check(&self) -> Result<std::result::Result<(), String>> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let lines: Vec<String> = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if lines == ["ok"] {
            Ok(Ok(()))
        } else {
            Ok(Err(lines.join("; ")))
        }
    }

    /// Writes what a read command derived and keeps so as not to derive it again (a path's recounts, what its
    /// measurements chose). It is a cache: a store that cannot take it now, open read-only or its write lock held
    /// by another process, goes without it and the command answers all the same. It does not wait for the lock:
    /// a reader never stalls behind an import, and never fails for it.
    fn keep_derived(&self, write: impl FnOnce(&Connection) -> rusqlite::Result<()>) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.conn.busy_timeout(std::time::Duration::ZERO)?;
        let written = write(&self.conn);
        self.conn.busy_timeout(BUSY_WAIT)?;
        match written {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy
                        | rusqlite::ErrorCode::DatabaseLocked
                        | rusqlite::ErrorCode::ReadOnly
                ) =>
            {
                Ok(())
            }
            other => Ok(other?),
        }
    }

    fn write_tx(&mut self) -> Result<Transaction<'_>> {
        if self.read_only {
            return Err(StoreError::ReadOnly(self.path.clone()));
        }
        Ok(self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?)
    }

    /// Creates an empty conversation and returns its id.
    pub fn create_conversation(&mut self, title: Option<&str>) -> Result<String> {
        let tx = self.write_tx()?;
        let id = insert_conversation(&tx, title, None)?.1;
        tx.commit()?;
        Ok(id)
    }

    /// Resolves a conversation id or unique prefix of one.
    pub fn resolve_conversation(&self, id: &str) -> Result<String> {
        Ok(conv_row(&self.conn, id)?.id)
    }

    /// Resolves a message id or unique prefix, which must belong to `conversation`.
    pub fn resolve_message(&self, conversation: &str, id: &str) -> Result<String> {
        let conv = conv_row(&self.conn, conversation)?;
        Ok(message_seq(&self.conn, &conv, id)?.1)
    }

    /// A conversation by its id (or unique prefix), else the message with that id (or unique prefix) in any
    /// conversation: (conversation, Some(message)) for a message.
    pub fn locate(&self, id: &str) -> Result<(String, Option<String>)> {
        match conv_row(&self.conn, id) {
            Ok(c) => return Ok((c.id, None)),
            Err(StoreError::UnknownConversation(_)) => {}
            Err(e) => return Err(e),
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.id, c.id FROM messages m JOIN conversations c ON c.seq = m.conversation
             WHERE substr(m.id, 1, length(?1)) = ?1 LIMIT 3",
        )?;
        let found: Vec<(String, String)> = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        match found.as_slice() {
            [(m, c)] => Ok((c.clone(), Some(m.clone()))),
            [] => Err(StoreError::UnknownConversation(id.to_string())),
            many => Err(StoreError::Ambiguous {
                kind: "message",
                prefix: id.to_string(),
                candidates: many
                    .iter()
                    .map(|(m, _)| m.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The bytes of an image blob.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>> {
        self.conn
            .query_row("SELECT bytes FROM blobs WHERE hash = ?1", [hash], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or_else(|| StoreError::MissingBlob(hash.to_string()))
    }

    /// The size in bytes of an image blob (None when there is no such blob).
    pub fn blob_size(&self, hash: &str) -> Result<Option<u64>> {
        Ok(self
            .conn
            .query_row("SELECT size FROM blobs WHERE hash = ?1", [hash], |r| {
                r.get::<_, i64>(0)
            })
            .optional()?
            .map(|n| n.max(0) as u64))
    }

    /// A message in Anthropic Messages shape, images inlined as base64.
    pub fn to_wire(&self, m: &Message) -> Result<Value> {
        wire_message(&self.conn, m)
    }
}

/// A message in Anthropic Messages shape, its image blobs loaded through `conn` (usable inside a transaction).
pub(crate) fn wire_message(conn: &Connection, m: &Message) -> Result<Value> {
    let load = |h: &str| -> std::result::Result<Vec<u8>, String> {
        conn.query_row("SELECT bytes FROM blobs WHERE hash = ?1", [h], |r| r.get(0))
            .map_err(|e| format!("image blob {h}: {e}"))
    };
    wire::message_to_wire(m.role, &m.content, &Images::Base64(&load)).map_err(|reason| {
        StoreError::Corrupt {
            id: m.id.clone(),
            reason,
        }
    })
}

const APPLICATION_ID: i64 = 0x6361_6972; // "cair"

/// Looks a conversation up by id or unique id prefix.
pub(crate) fn conv_row(conn: &Connection, id: &str) -> Result<ConvRow> {
    let exact = conn
        .query_row(
            "SELECT seq, id, tip FROM conversations WHERE id = ?1",
            [id],
            |r| {
                Ok(ConvRow {
                    seq: r.get(0)?,
                    id: r.get(1)?,
                    tip: r.get(2)?,
                })
            },
        )
        .optional()?;
    if let Some(c) = exact {
        return Ok(c);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT seq, id, tip FROM conversations WHERE id >= ?1 AND id < ?1 || x'ff' LIMIT 6",
    )?;
    let rows: Vec<ConvRow> = stmt
        .query_map([id], |r| {
            Ok(ConvRow {
                seq: r.get(0)?,
                id: r.get(1)?,
                tip: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    match rows.len() {
        1 if !id.is_empty() => Ok(rows
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::UnknownConversation(id.to_string()))?),
        0 => Err(StoreError::UnknownConversation(id.to_string())),
        _ if id.is_empty() => Err(StoreError::UnknownConversation(id.to_string())),
        _ => Err(StoreError::Ambiguous {
            kind: "conversation",
            prefix: id.to_string(),
            candidates: rows
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Resolves a message id or unique prefix to its row number, checking it belongs to `conv`.
pub(crate) fn message_seq(conn: &Connection, conv: &ConvRow, id: &str) -> Result<(i64, String)> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.seq, m.id, m.conversation, c.id FROM messages m JOIN conversations c ON c.seq = m.conversation
         WHERE m.id = ?1 OR (m.id >= ?1 AND m.id < ?1 || x'ff') LIMIT 6",
    )?;
    let rows: Vec<(i64, String, i64, String)> = stmt
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let exact: Vec<_> = rows.iter().filter(|r| r.1 == id).collect();
    let pick = if exact.len() == 1 {
        exact[0]
    } else if rows.len() == 1 && !id.is_empty() {
        &rows[0]
    } else if rows.is_empty() || id.is_empty() {
        return Err(StoreError::UnknownMessage {
            conversation: conv.id.clone(),
            id: id.to_string(),
        });
    } else {
        return Err(StoreError::Ambiguous {
            kind: "message",
            prefix: id.to_string(),
            candidates: rows
                .iter()
                .map(|r| r.1.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    if pick.2 != conv.seq {
        return Err(StoreError::WrongConversation {
            id: pick.1.clone(),
            conversation: conv.id.clone(),
            actual: pick.3.clone(),
        });
    }
    Ok((pick.0, pick.1.clone()))
}

pub(crate) fn message_id(conn: &Connection, seq: Option<i64>) -> Result<Option<String>> {
    match seq {
        None => Ok(None),
        Some(s) => Ok(Some(conn.query_row(
            "SELECT id FROM messages WHERE seq = ?1",
            [s],
            |r| r.get(0),
        )?)),
    }
}

/// The head of one message, by row number.
pub(crate) fn head_of(conn: &Connection, seq: i64) -> Result<paths::Head> {
    let (parent, depth, role, flags, tokens, id): (Option<i64>, i64, String, i64, i64, String) =
        conn.query_row(
            "SELECT parent, depth, role, flags, tokens, id FROM messages WHERE seq = ?1",
            [seq],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )?;
    Ok(paths::Head {
        seq,
        parent_seq: parent,
        depth,
        role: Role::parse(&role).ok_or_else(|| StoreError::Corrupt {
            id: id.clone(),
            reason: format!("role {role:?}"),
        })?,
        flags,
        tokens: tokens as u64,
        id,
    })
}

/// Loads one message (with its parent's id).
pub(crate) fn load_message(conn: &Connection, conv: &ConvRow, seq: i64) -> Result<Message> {
    let head = head_of(conn, seq)?;
    paths::load_messages(conn, conv, std::slice::from_ref(&head))?
        .pop()
        .ok_or_else(|| StoreError::Corrupt {
            id: head.id.clone(),
            reason: "vanished while loading".into(),
        })
}

pub(crate) fn insert_conversation(
    tx: &Transaction<'_>,
    title: Option<&str>,
    forked_from: Option<(i64, i64)>,
) -> Result<(i64, String)> {
    let id = new_id();
    tx.execute(
        "INSERT INTO conversations (id, title, forked_from_conversation, forked_from_message, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, title, forked_from.map(|f| f.0), forked_from.map(|f| f.1), now_ms()],
    )?;
    Ok((tx.last_insert_rowid(), id))
}

fn has_inline_images(blocks: &[Block]) -> bool {
    blocks.iter().flat_map(Block::images).any(|i| {
        matches!(
            i,
            Block::Image {
                data: ImageData::Bytes(_),
                ..
            }
        )
    })
}

/// Stores inline image bytes as blobs (once per content hash) and returns the blocks with references.
fn store_images(tx: &Transaction<'_>, blocks: &[Block]) -> Result<Vec<Block>> {
    let mut store = |img: &Block| -> Result<Block> {
        let Block::Image {
            media_type,
            data: ImageData::Bytes(bytes),
        } = img
        else {
            return Ok(img.clone());
        };
        let hash = format!("{:x}", Sha256::digest(bytes));
        tx.prepare_cached(
            "INSERT OR IGNORE INTO blobs (hash, media_type, size, bytes) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![hash, media_type, bytes.len() as i64, bytes])?;
        Ok(Block::Image {
            media_type: media_type.clone(),
            data: ImageData::Blob {
                hash,
                size: crate::tokens::image_size(bytes),
            },
        })
    };
    blocks
        .iter()
        .map(|b| b.try_map_images(&mut store))
        .collect()
}

/// Inserts one message under `parent` and returns (seq, id).
pub(crate) fn insert_message(
    tx: &Transaction<'_>,
    conv_seq: i64,
    parent: Option<(i64, i64)>,
    m: &NewMessage,
) -> Result<(i64, String)> {
    let p = prepare(m)?;
    insert_prepared(tx, conv_seq, parent, m, p)
}

/// What writing a message computes from the message alone: its stored forms and its figures. Made apart from
/// the writes so that an import makes the next messages' on the other core while one is written.
pub(crate) struct Prepared {
    /// The content as stored; `None` where inline images must first be stored as blobs (that needs the store).
    content: Option<String>,
    meta: Option<String>,
    usage: Option<String>,
    tokens: i64,
    flags: i64,
    measure: crate::tokens::Measure,
    /// What search indexes, and the size of each tool result block in order.
    text: String,
    result_tokens: Vec<u64>,
}

/// Checks a message as the store will write it and computes everything about it that needs no store.
pub(crate) fn prepare(m: &NewMessage) -> Result<Prepared> {
    let content = if has_inline_images(&m.content) {
        None
    } else {
        Some(stored_content(m, &m.content)?)
    };
    let usage = match &m.usage {
        Some(u) => {
            Some(serde_json::to_string(u).map_err(|e| StoreError::InvalidTurn(e.to_string()))?)
        }
        None => None,
    };
    let (text, result_tokens) = index::parts(&m.content, &m.meta);
    let measure = crate::models::measure(
        &m.content,
        crate::model::model_of(&m.meta),
        m.usage.as_ref(),
        crate::tokens::Tokenizer::Estimate,
    );
    Ok(Prepared {
        content,
        meta: (!m.meta.is_null()).then(|| m.meta.to_string()),
        usage,
        // the message's estimate is its measure's total (`tokens::blocks`, without a second pass)
        tokens: measure.tokens() as i64,
        flags: paths::flags_of(m),
        measure,
        text,
        result_tokens,
    })
}

/// The content as stored, checked to decode back as it will be read (nothing the store writes is unreadable).
fn stored_content(m: &NewMessage, blocks: &[Block]) -> Result<String> {
    let content = wire::blocks_to_json(blocks, &Images::Blob).map_err(StoreError::InvalidTurn)?;
    let content = Value::Array(content);
    if let Err(e) = wire::blocks_from_value(content.clone(), "content") {
        return Err(StoreError::InvalidTurn(format!(
            "a {} message's content would not read back ({e})",
            m.role
        )));
    }
    Ok(content.to_string())
}

/// Writes a prepared message under `parent` ((row, depth)): its row, measures and index.
pub(crate) fn insert_prepared(
    tx: &Transaction<'_>,
    conv_seq: i64,
    parent: Option<(i64, i64)>,
    m: &NewMessage,
    p: Prepared,
) -> Result<(i64, String)> {
    let content = match p.content {
        Some(c) => c,
        None => stored_content(m, &store_images(tx, &m.content)?)?,
    };
    let id = new_id();
    let created_at = m.created_at.unwrap_or_else(now_ms);
    tx.prepare_cached(
        "INSERT INTO messages (id, conversation, parent, depth, role, content, created_at, meta, usage, tokens, flags)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        id,
        conv_seq,
        parent.map(|p| p.0),
        parent.map_or(0, |p| p.1 + 1),
        m.role.as_str(),
        content,
        created_at,
        p.meta,
        p.usage,
        p.tokens,
        p.flags
    ])?;
    let seq = tx.last_insert_rowid();
    measures::insert(tx, seq, conv_seq, m, &p.measure, p.flags, created_at)?;
    let parent_body: Option<i64> = match parent {
        Some((p, _)) => tx
            .prepare_cached("SELECT coalesce(body_of, seq) FROM messages WHERE seq = ?1")?
            .query_row([p], |r| r.get(0))
            .optional()?,
        None => None,
    };
    index::index_body(
        tx,
        index::Body {
            seq,
            conversation: conv_seq,
            parent_body,
            message: m,
            created_at,
            text: &p.text,
            result_tokens: &p.result_tokens,
        },
    )?;
    Ok((seq, id))
}

/// Moves a conversation's tip from `expected` to `new`, or fails naming both tips. Every tip move in cairn
/// goes through here, and records itself in the operation log in the same transaction.
pub(crate) fn move_tip(
    tx: &Transaction<'_>,
    conv: &ConvRow,
    expected: Option<i64>,
    new: Option<i64>,
    kind: &str,
    detail: Value,
) -> Result<()> {
    let changed = tx.execute(
        "UPDATE conversations SET tip = ?1 WHERE seq = ?2 AND tip IS ?3",
        params![new, conv.seq, expected],
    )?;
    if changed != 1 {
        let actual: Option<i64> = tx.query_row(
            "SELECT tip FROM conversations WHERE seq = ?1",
            [conv.seq],
            |r| r.get(0),
        )?;
        return Err(StoreError::TipMismatch {
            conversation: conv.id.clone(),
            expected: message_id(tx, expected)?.unwrap_or_else(|| "(none)".into()),
            actual: message_id(tx, actual)?.unwrap_or_else(|| "(none)".into()),
        });
    }
    oplog::record(tx, conv.seq, kind, expected, new, &detail)
}

/// Whether the file at `path` can be opened for writing (its permissions and its mount allow it).
fn writable(path: &Path) -> bool {
    match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => true,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ),
    }
}

/// A path as the path of an SQLite `file:` URI: `%`, `?` and `#` (and what is not printable) percent-encoded.
fn uri_path(path: &Path) -> String {
    let s = path.to_string_lossy().replace('\\', "/");
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            0..=0x20 | 0x7f.. => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    out
}

/// Runs `f` again while SQLite answers "busy" or "locked" (another process is creating or migrating the same
/// store), for up to ten seconds.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < std::time::Duration::from_secs(10) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}
