//! opencode's SQLite store (`~/.local/share/opencode/opencode.db`), where opencode keeps its sessions since it left
//! the `storage/` folders: a `session` table (id, parent_id, title, directory, version, times), `message` rows
//! (`id`, `session_id`, `time_created`, `data`: the message's info without its ids) and `part` rows (`id`,
//! `message_id`, `session_id`, `time_created`, `data`: the part without its ids). One file holds every session, so
//! the importer sees a session as a path beneath the file (`opencode.db/ses_…`), and reading that path gathers the
//! session into the document `opencode export` prints: the one reader of opencode reads all three layouts.
//!
//! The file is opened read only (opencode may be writing it; nothing of it is ever written).

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::formats::FormatError;

const TABLES: [&str; 3] = ["session", "message", "part"];

fn open(db: &Path) -> Result<Connection, FormatError> {
    crate::formats::sqlite::open(db, "an opencode store")
}

/// Whether `path` is an SQLite file with opencode's session, message and part tables.
pub fn is_db(path: &Path) -> bool {
    crate::formats::sqlite::has_tables(path, &TABLES)
}

/// The sessions of the store at `db`, oldest first, each as the path the importer reads it by.
pub fn sessions(db: &Path) -> Result<Vec<PathBuf>, FormatError> {
    let c = open(db)?;
    let err = |e: rusqlite::Error| FormatError::new(db, 0, e.to_string());
    let mut stmt = c
        .prepare("SELECT id FROM session ORDER BY time_created, id")
        .map_err(err)?;
    let ids = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(err)?
        .collect::<rusqlite::Result<Vec<String>>>()
        .map_err(err)?;
    Ok(ids.into_iter().map(|id| db.join(id)).collect())
}

/// One session of the store as `opencode export` prints it: `{info, messages: [{info, parts}]}`, the ids put
/// back into the objects the rows hold without them.
pub fn export(db: &Path, id: &str) -> Result<Vec<u8>, FormatError> {
    let c = open(db)?;
    let at = db.join(id);
    let err = |e: rusqlite::Error| FormatError::new(&at, 0, e.to_string());
    let data = |s: String, what: &str| -> Result<Map<String, Value>, FormatError> {
        match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) | Err(_) => Err(FormatError::new(
                &at,
                0,
                format!("{what}: its data is not a JSON object"),
            )),
        }
    };
    let mut info = c
        .query_row(
            "SELECT id, parent_id, title, directory, version, project_id, time_created, time_updated FROM session
             WHERE id = ?1",
            [id],
            |r| {
                Ok(json!({
                    "id": r.get::<_, String>(0)?,
                    "parentID": r.get::<_, Option<String>>(1)?,
                    "title": r.get::<_, Option<String>>(2)?,
                    "directory": r.get::<_, Option<String>>(3)?,
                    "version": r.get::<_, Option<String>>(4)?,
                    "projectID": r.get::<_, Option<String>>(5)?,
                    "time": {"created": r.get::<_, Option<i64>>(6)?, "updated": r.get::<_, Option<i64>>(7)?},
                }))
            },
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => FormatError::new(&at, 0, "no such session in the opencode store"),
            e => err(e),
        })?;
    if let Some(o) = info.as_object_mut() {
        o.retain(|_, v| !v.is_null());
    }
    // parts by message, in the order they were written
    let mut parts: std::collections::HashMap<String, Vec<Value>> = std::collections::HashMap::new();
    {
        let mut stmt = c
            .prepare(
                "SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, time_created, id",
            )
            .map_err(err)?;
        let mut rows = stmt.query([id]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let (pid, mid, d): (String, String, String) = (
                r.get(0).map_err(err)?,
                r.get(1).map_err(err)?,
                r.get(2).map_err(err)?,
            );
            let mut p = data(d, &format!("part {pid}"))?;
            p.insert("id".into(), pid.into());
            p.insert("messageID".into(), mid.clone().into());
            p.insert("sessionID".into(), id.into());
            parts.entry(mid).or_default().push(Value::Object(p));
        }
    }
    let mut messages = Vec::new();
    let mut stmt = c
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
        .map_err(err)?;
    let mut rows = stmt.query([id]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let (mid, d): (String, String) = (r.get(0).map_err(err)?, r.get(1).map_err(err)?);
        let mut m = data(d, &format!("message {mid}"))?;
        m.insert("id".into(), mid.clone().into());
        m.insert("sessionID".into(), id.into());
        messages.push(json!({"info": m, "parts": parts.remove(&mid).unwrap_or_default()}));
    }
    serde_json::to_vec(&json!({"info": info, "messages": messages}))
        .map_err(|e| FormatError::new(&at, 0, e.to_string()))
}

/// Each session of the store at `db` as the importer reads it by, with when it was last updated (ms) and how many
/// messages it holds (discover's listing).
pub fn listing(db: &Path) -> Result<crate::formats::sqlite::Listing, FormatError> {
    let c = open(db)?;
    let err = |e: rusqlite::Error| FormatError::new(db, 0, e.to_string());
    let mut stmt = c
        .prepare(
            "SELECT s.id, coalesce(s.time_updated, s.time_created, 0),
                    (SELECT count(*) FROM message m WHERE m.session_id = s.id)
             FROM session s ORDER BY s.time_created, s.id",
        )
        .map_err(err)?;
    stmt.query_map([], |r| {
        Ok((
            db.join(r.get::<_, String>(0)?),
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?.max(0) as usize,
        ))
    })
    .map_err(err)?
    .collect::<rusqlite::Result<Vec<_>>>()
    .map_err(err)
}
