//! The harnesses that keep every session in one SQLite file (opencode, Goose, Zed), as one table: its file's name,
//! where it lives under the home folder, how it is told, its sessions, one session as its reader's document and
//! discover's listing. `read_file`, `import`, `discover` and the window's follower ask it, never a harness by name.

use std::path::Path;

use super::FormatError;

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
    pub listing: fn(&Path) -> Result<super::sqlite::Listing, FormatError>,
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
