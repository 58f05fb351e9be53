//! Harnesses that keep their sessions in one SQLite file (opencode, Goose, Zed): the file opened read only (the
//! harness may be writing it; nothing of it is ever written), and told by its tables, never its name.

use std::path::Path;

use rusqlite::types::{Value as Cell, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::FormatError;

/// The store at `db`, read only; `what` names the harness in the error.
pub fn open(db: &Path, what: &str) -> Result<Connection, FormatError> {
    Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| FormatError::new(db, 0, format!("{what} that cannot be opened: {e}")))
}

/// Whether `path` is a regular SQLite file holding every one of `tables`.
pub fn has_tables(path: &Path, tables: &[&str]) -> bool {
    // only a regular file is opened (a FIFO would block the import)
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 16];
    let sqlite = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"SQLite format 3\0";
    sqlite
        && open(path, "a store").is_ok_and(|c| {
            tables.iter().all(|t| {
                c.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [t],
                    |r| r.get::<_, i64>(0),
                )
                .is_ok_and(|n| n == 1)
            })
        })
}

/// A store's sessions for discover: each as the path the importer reads it by, when it was last updated (ms) and
/// how many messages it holds.
pub type Listing = Vec<(std::path::PathBuf, i64, usize)>;

/// The one row of `table` whose `id` is `id`, every column by its name (a harness adds columns from version to
/// version: all are kept, none named here); `None` when there is no such row.
pub fn row_by_id(
    c: &Connection,
    table: &str,
    id: &str,
) -> rusqlite::Result<Option<Vec<(String, Cell)>>> {
    let mut stmt = c.prepare(&format!("SELECT * FROM \"{table}\" WHERE id = ?1"))?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.query([id])?;
    let Some(r) = rows.next()? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(names.len());
    for (k, name) in names.into_iter().enumerate() {
        // text read lossily: a store a harness wrote badly is still read
        let v = match r.get_ref(k)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(i) => Cell::Integer(i),
            ValueRef::Real(f) => Cell::Real(f),
            ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
        };
        out.push((name, v));
    }
    Ok(Some(out))
}
