//! Goose's SQLite store (`~/.local/share/goose/sessions/sessions.db`, Goose's data folder on other systems): a
//! `sessions` row a session (its id, name, working dir, type, token counts and, in later versions, its model as
//! `model_config_json` and `provider_name`) and `messages` rows (`role`, `content_json`, `created_timestamp`,
//! `metadata_json`). One file holds every session, so the importer sees a session as a path beneath the file
//! (`sessions.db/20251205_1`), and reading that path gathers it into the document `goose session export` writes:
//! the one reader of Goose reads both.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rusqlite::types::Value as Cell;
use serde_json::{Map, Value, json};

use crate::formats::FormatError;

const TABLES: [&str; 2] = ["sessions", "messages"];

fn open(db: &Path) -> Result<Connection, FormatError> {
    crate::formats::sqlite::open(db, "a Goose store")
}

/// Whether `path` is an SQLite file with Goose's sessions and messages tables.
pub fn is_db(path: &Path) -> bool {
    crate::formats::sqlite::has_tables(path, &TABLES)
        && open(path).is_ok_and(|c| {
            // opencode names its tables in the singular; Goose's messages hold `content_json`
            c.prepare("SELECT content_json, created_timestamp FROM messages LIMIT 0")
                .is_ok()
        })
}

/// The sessions of the store at `db`, oldest first, each as the path the importer reads it by.
pub fn sessions(db: &Path) -> Result<Vec<PathBuf>, FormatError> {
    Ok(listing(db)?.into_iter().map(|(p, _, _)| p).collect())
}

/// A column's value as JSON: text that holds JSON (the `*_json` columns, `extension_data`) parsed.
fn cell(name: &str, v: Cell) -> Value {
    match v {
        Cell::Null => Value::Null,
        Cell::Integer(i) => json!(i),
        Cell::Real(f) => json!(f),
        Cell::Text(s) => parsed(name, s),
        Cell::Blob(b) => parsed(name, String::from_utf8_lossy(&b).into_owned()),
    }
}

fn parsed(name: &str, s: String) -> Value {
    (name.ends_with("_json") || name == "extension_data")
        .then(|| serde_json::from_str::<Value>(&s).ok())
        .flatten()
        .unwrap_or(Value::String(s))
}

/// One session of the store as `goose session export` writes it: the session's fields, its messages as
/// `conversation`.
pub fn export(db: &Path, id: &str) -> Result<Vec<u8>, FormatError> {
    let c = open(db)?;
    let at = db.join(id);
    let err = |e: rusqlite::Error| FormatError::new(&at, 0, e.to_string());
    let Some(row) = crate::formats::sqlite::row_by_id(&c, "sessions", id).map_err(err)? else {
        return Err(FormatError::new(
            &at,
            0,
            "no such session in the Goose store",
        ));
    };
    let mut session: Map<String, Value> = row
        .into_iter()
        .map(|(name, v)| {
            let v = cell(&name, v);
            (name, v)
        })
        .collect();
    let mut conversation = Vec::new();
    let mut stmt = c
        .prepare(
            "SELECT role, content_json, created_timestamp, metadata_json FROM messages
             WHERE session_id = ?1 ORDER BY timestamp, id",
        )
        .map_err(err)?;
    let mut rows = stmt.query([id]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let content: String = r.get(1).map_err(err)?;
        let content = serde_json::from_str::<Value>(&content).map_err(|e| {
            FormatError::new(
                &at,
                0,
                format!(
                    "message {}: its content is not JSON: {e}",
                    conversation.len()
                ),
            )
        })?;
        let metadata: Option<String> = r.get(3).map_err(err)?;
        conversation.push(json!({
            "role": r.get::<_, String>(0).map_err(err)?,
            "created": r.get::<_, i64>(2).map_err(err)?,
            "content": content,
            "metadata": metadata.and_then(|m| serde_json::from_str::<Value>(&m).ok()),
        }));
    }
    session.insert("conversation".into(), Value::Array(conversation));
    serde_json::to_vec(&Value::Object(session)).map_err(|e| FormatError::new(&at, 0, e.to_string()))
}

/// Each session of the store at `db` as the importer reads it by, with when it was last updated (ms) and how many
/// messages it holds (discover's listing); sessions without a message left out.
pub fn listing(db: &Path) -> Result<crate::formats::sqlite::Listing, FormatError> {
    let c = open(db)?;
    let err = |e: rusqlite::Error| FormatError::new(db, 0, e.to_string());
    let mut stmt = c
        .prepare(
            "SELECT s.id, CAST(coalesce(strftime('%s', s.updated_at), strftime('%s', s.created_at), 0) AS INTEGER),
                    (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n
             FROM sessions s WHERE n > 0 ORDER BY s.created_at, s.id",
        )
        .map_err(err)?;
    stmt.query_map([], |r| {
        Ok((
            db.join(r.get::<_, String>(0)?),
            r.get::<_, i64>(1)?.saturating_mul(1000),
            r.get::<_, i64>(2)?.max(0) as usize,
        ))
    })
    .map_err(err)?
    .collect::<rusqlite::Result<Vec<_>>>()
    .map_err(err)
}
