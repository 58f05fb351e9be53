//! Zed's agent threads store (`threads/threads.db` in Zed's data folder: `~/.local/share/zed` on Linux,
//! `~/Library/Application Support/Zed` on macOS): a `threads` row a thread (`id`, `summary`, `updated_at`,
//! `data_type`, `data`: the thread's JSON, zstd-compressed when `data_type` is `zstd`; later versions add
//! `parent_id`, `folder_paths` and `created_at`). One file holds every thread, so the importer sees a thread as a
//! path beneath the file (`threads.db/<id>`), and reading that path gives the thread's document with the row's
//! own fields beside it (`zed_row`).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rusqlite::types::Value as Cell;
use serde_json::{Map, Value, json};

use crate::formats::FormatError;

/// The most a thread's document may take once decompressed (a hostile file's zstd frame can claim far more).
const MAX_DOCUMENT: u64 = 1 << 30;

fn open(db: &Path) -> Result<Connection, FormatError> {
    crate::formats::sqlite::open(db, "a Zed threads store")
}

/// Whether `path` is an SQLite file with Zed's threads table.
pub fn is_db(path: &Path) -> bool {
    crate::formats::sqlite::has_tables(path, &["threads"])
        && open(path).is_ok_and(|c| {
            c.prepare("SELECT id, summary, updated_at, data_type, data FROM threads LIMIT 0")
                .is_ok()
        })
}

/// The threads of the store at `db`, oldest first, each as the path the importer reads it by.
pub fn sessions(db: &Path) -> Result<Vec<PathBuf>, FormatError> {
    Ok(listing(db)?.into_iter().map(|(p, _, _)| p).collect())
}

/// A thread's data as JSON text: decompressed when Zed compressed it.
fn document(at: &Path, data_type: &str, data: &[u8]) -> Result<Vec<u8>, FormatError> {
    match data_type {
        "json" => Ok(data.to_vec()),
        "zstd" => {
            let bad =
                |e: String| FormatError::new(at, 0, format!("its zstd data cannot be read: {e}"));
            let decoder =
                ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| bad(e.to_string()))?;
            let mut out = Vec::new();
            decoder
                .take(MAX_DOCUMENT + 1)
                .read_to_end(&mut out)
                .map_err(|e| bad(e.to_string()))?;
            if out.len() as u64 > MAX_DOCUMENT {
                return Err(bad(format!("it holds more than {MAX_DOCUMENT} bytes")));
            }
            Ok(out)
        }
        other => Err(FormatError::new(
            at,
            0,
            format!("a thread stored as {other:?}, which this cairn does not read"),
        )),
    }
}

/// One thread of the store: its document, with the row's fields (`id`, `summary`, `parent_id`, `folder_paths`,
/// `created_at`, `updated_at`) as `zed_row`.
pub fn export(db: &Path, id: &str) -> Result<Vec<u8>, FormatError> {
    let c = open(db)?;
    let at = db.join(id);
    let err = |e: rusqlite::Error| FormatError::new(&at, 0, e.to_string());
    let Some(cells) = crate::formats::sqlite::row_by_id(&c, "threads", id).map_err(err)? else {
        return Err(FormatError::new(&at, 0, "no such thread in the Zed store"));
    };
    let mut row = Map::new();
    let (mut data_type, mut data) = (String::new(), Vec::new());
    for (name, v) in cells {
        match (name.as_str(), v) {
            ("data", Cell::Blob(b)) => data = b,
            ("data", Cell::Text(t)) => data = t.into_bytes(),
            ("data_type", Cell::Text(t)) => data_type = t,
            (_, Cell::Text(t)) => {
                row.insert(name, json!(t));
            }
            (_, Cell::Integer(i)) => {
                row.insert(name, json!(i));
            }
            _ => {}
        }
    }
    let text = document(&at, &data_type, &data)?;
    let mut doc: Value = serde_json::from_slice(&text)
        .map_err(|e| FormatError::new(&at, 0, format!("its thread is not JSON: {e}")))?;
    let Some(o) = doc.as_object_mut() else {
        return Err(FormatError::new(&at, 0, "its thread is not a JSON object"));
    };
    o.insert("zed_row".into(), Value::Object(row));
    serde_json::to_vec(&doc).map_err(|e| FormatError::new(&at, 0, e.to_string()))
}

/// Each thread of the store at `db` as the importer reads it by, with when it was last updated (ms) and 0 for its
/// messages (counting them means decompressing every thread; discover's listing).
pub fn listing(db: &Path) -> Result<crate::formats::sqlite::Listing, FormatError> {
    let c = open(db)?;
    let err = |e: rusqlite::Error| FormatError::new(db, 0, e.to_string());
    let mut stmt = c
        .prepare("SELECT id, updated_at FROM threads ORDER BY updated_at, id")
        .map_err(err)?;
    stmt.query_map([], |r| {
        let updated: String = r.get(1)?;
        Ok((
            db.join(r.get::<_, String>(0)?),
            crate::formats::timestamp_ms(Some(&json!(updated))).unwrap_or(0),
            0,
        ))
    })
    .map_err(err)?
    .collect::<rusqlite::Result<Vec<_>>>()
    .map_err(err)
}
