//! Live follow: a conversation open in the window that was imported from a file an agent is still writing is
//! kept current from that file. Every watch tick the file (the session's, for a subagent read with it) is looked
//! at, and when its length or modification time moved it is imported again through the same action as `cairn
//! import`, which reads a grown session from where its last import stopped: the window re-reads nothing itself
//! and a session is never counted twice. When the conversation is first opened, a file longer or shorter than
//! the store read it is imported at once (the agent went on while the window was closed). A session of opencode's
//! SQLite store is followed by the store file and its write-ahead log.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::store::Store;

/// How a file (or a task folder's files) looked: its length and its newest modification time.
type Look = (u64, Option<SystemTime>);

pub struct Follow {
    /// The conversation followed.
    pub conversation: String,
    /// Its file, where it came from one: what is imported again.
    path: Option<PathBuf>,
    /// What is looked at to tell that it moved: the file (a task folder's files), or for a session of opencode's
    /// store the store and its write-ahead log. Found once, when the conversation is opened.
    watched: Vec<PathBuf>,
    /// How many bytes of it the store read (until the first look).
    read_to: u64,
    /// How it looked when it was last looked at; `None` before the first look.
    seen: Option<Look>,
    /// An import of it is running: no second one until it is back.
    pub running: bool,
}

impl Follow {
    /// What to follow for `conversation`: its file as the store recorded it, if any.
    pub fn of(store: &Store, conversation: &str) -> Follow {
        // a store that cannot say is a conversation without a file to follow
        let (path, read_to) = match store.source_of(conversation) {
            Ok(Some((p, n))) => (Some(PathBuf::from(p)), n),
            Ok(None) | Err(_) => (None, 0),
        };
        let db = path
            .as_deref()
            .and_then(crate::formats::stores::split)
            .map(|(_, db, _)| db.to_path_buf());
        let (watched, seen) = match (db, &path) {
            // a session of a harness's SQLite store (opencode, Goose, Zed) has no length of its own to compare with
            // what was read: it is followed from how the store looks now
            (Some(db), _) => {
                let mut wal = db.as_os_str().to_owned();
                wal.push("-wal");
                let watched = vec![db, PathBuf::from(wal)];
                let seen = look(&watched);
                (watched, seen)
            }
            (None, Some(p)) => (vec![p.clone()], None),
            (None, None) => (Vec::new(), None),
        };
        Follow {
            conversation: conversation.to_string(),
            path,
            watched,
            read_to,
            seen,
            running: false,
        }
    }

    /// The file to import now, if it changed since it was last looked at (or, on the first look, since the store
    /// read it). A file that is gone is not followed until it is back.
    pub fn due(&mut self) -> Option<PathBuf> {
        if self.running {
            return None;
        }
        let path = self.path.clone()?;
        let now = look(&self.watched)?;
        let changed = match self.seen {
            None => now.0 != self.read_to,
            Some(seen) => seen != now,
        };
        self.seen = Some(now);
        changed.then_some(path)
    }
}

/// How `paths` look together (a folder by its files); `None` when none of them is there.
fn look(paths: &[PathBuf]) -> Option<Look> {
    let mut found: Vec<std::fs::Metadata> = Vec::new();
    for p in paths {
        let Ok(m) = std::fs::metadata(p) else {
            continue;
        };
        if !m.is_dir() {
            found.push(m);
            continue;
        }
        // a task folder (Cline): its files together
        if let Ok(rd) = std::fs::read_dir(p) {
            found.extend(
                rd.flatten()
                    .filter_map(|e| e.metadata().ok())
                    .filter(std::fs::Metadata::is_file),
            );
        }
    }
    (!found.is_empty()).then(|| {
        (
            found.iter().map(std::fs::Metadata::len).sum(),
            found.iter().filter_map(|m| m.modified().ok()).max(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_due_when_it_differs_from_what_was_read_and_then_when_it_moves() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        std::fs::write(&f, "0123456789").unwrap();
        let mut follow = Follow {
            conversation: "c".into(),
            path: Some(f.clone()),
            watched: vec![f.clone()],
            read_to: 10,
            seen: None,
            running: false,
        };
        assert_eq!(follow.due(), None, "as the store read it");
        assert_eq!(follow.due(), None, "nothing moved");
        std::fs::write(&f, "0123456789ab").unwrap();
        follow.running = true;
        assert_eq!(follow.due(), None, "one import at a time");
        follow.running = false;
        assert_eq!(follow.due(), Some(f.clone()));
        assert_eq!(follow.due(), None);
        std::fs::remove_file(&f).unwrap();
        assert_eq!(follow.due(), None, "a file that is gone");
        // longer than the store read it when first looked at: the agent went on meanwhile
        std::fs::write(&f, "0123456789abcdef").unwrap();
        let mut fresh = Follow {
            seen: None,
            ..follow
        };
        assert_eq!(fresh.due(), Some(f));
    }
}
