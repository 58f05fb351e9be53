//! Harnesses that keep their sessions in one SQLite file (opencode, Goose): the file opened read only (the harness
//! may be writing it; nothing of it is ever written), and told by its tables, never its name.

use std::path::Path;

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

/// A harness that keeps every session in one SQLite file: what cairn needs of it to find, list and read them.
pub struct Store {
    pub format: super::Format,
    /// The file's name as the harness names it (a folder given to `import` is searched for it).
    pub file_name: &'static str,
    /// Where the harness keeps the file, relative to the home folder (on each system it runs on).
    pub homes: &'static [&'static str],
    pub is_db: fn(&Path) -> bool,
    /// Its sessions, each as the path the importer reads it by (`<file>/<id>`), oldest first.
    pub sessions: fn(&Path) -> Result<Vec<std::path::PathBuf>, FormatError>,
    /// One session as the document the harness's reader reads.
    pub export: fn(&Path, &str) -> Result<Vec<u8>, FormatError>,
    /// Each session with when it was last updated (ms) and how many messages it holds (discover's listing).
    pub listing: fn(&Path) -> Result<Listing, FormatError>,
}

/// The harnesses that keep their sessions in one SQLite file.
pub const STORES: &[Store] = &[
    Store {
        format: super::Format::Opencode,
        file_name: "opencode.db",
        homes: &[".local/share/opencode/opencode.db"],
        is_db: super::opencode::db::is_db,
        sessions: super::opencode::db::sessions,
        export: super::opencode::db::export,
        listing: super::opencode::db::listing,
    },
    Store {
        format: super::Format::Goose,
        file_name: "sessions.db",
        homes: &[
            ".local/share/goose/sessions/sessions.db",
            "Library/Application Support/Block/goose/sessions/sessions.db",
        ],
        is_db: super::goose::db::is_db,
        sessions: super::goose::db::sessions,
        export: super::goose::db::export,
        listing: super::goose::db::listing,
    },
    Store {
        format: super::Format::Zed,
        file_name: "threads.db",
        homes: &[
            ".local/share/zed/threads/threads.db",
            "Library/Application Support/Zed/threads/threads.db",
            "AppData/Local/Zed/threads/threads.db",
        ],
        is_db: super::zed::db::is_db,
        sessions: super::zed::db::sessions,
        export: super::zed::db::export,
        listing: super::zed::db::listing,
    },
];

/// The store a file is, if it is one.
pub fn store_of(path: &Path) -> Option<&'static Store> {
    STORES.iter().find(|s| (s.is_db)(path))
}

/// The store, its file and the session a path beneath a store's file names (`…/opencode.db/ses_…`).
pub fn split(path: &Path) -> Option<(&'static Store, &Path, &str)> {
    let id = path.file_name()?.to_str()?;
    let db = path.parent()?;
    if !db.is_file() {
        return None;
    }
    store_of(db).map(|s| (s, db, id))
}
