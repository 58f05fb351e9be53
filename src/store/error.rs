//! Every way a store operation can fail, each naming the id, label or file at fault in one line.

use std::path::PathBuf;

use crate::pairs::PairError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open store {path}: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error(
        "store {path} has schema version {found}, newer than this cairn supports ({supported}); upgrade cairn"
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("store {0} is open read-only (a read-only file or mount): nothing was written")]
    ReadOnly(PathBuf),
    #[error("no conversation {0}")]
    UnknownConversation(String),
    #[error("no message {id} in conversation {conversation}")]
    UnknownMessage { conversation: String, id: String },
    #[error("message {id} belongs to conversation {actual}, not {conversation}")]
    WrongConversation {
        id: String,
        conversation: String,
        actual: String,
    },
    #[error("{kind} id prefix {prefix} is ambiguous: {candidates}")]
    Ambiguous {
        kind: &'static str,
        prefix: String,
        candidates: String,
    },
    #[error(
        "conversation {conversation}: tip is {actual}, expected {expected} (another writer moved it)"
    )]
    TipMismatch {
        conversation: String,
        expected: String,
        actual: String,
    },
    #[error("turn refused, nothing written: {0}")]
    InvalidTurn(String),
    #[error("turn refused, nothing written: {0}")]
    Pairs(PairError),
    #[error(
        "conversation {conversation} is mid-turn at message {tip} ({why}); use `retry` or `branch` to a turn boundary first"
    )]
    NotBoundary {
        conversation: String,
        tip: String,
        why: &'static str,
    },
    #[error("conversation {0} has no messages")]
    Empty(String),
    #[error(
        "checkpoint {label} already exists in conversation {conversation} (at message {message})"
    )]
    DuplicateLabel {
        conversation: String,
        label: String,
        message: String,
    },
    #[error("no checkpoint {label} in conversation {conversation}")]
    UnknownCheckpoint { conversation: String, label: String },
    #[error("checkpoint {label} was trimmed (its message {message} is before the resumed window)")]
    CheckpointTrimmed { label: String, message: String },
    #[error("conversation {0}: nothing to undo")]
    NothingToUndo(String),
    #[error("invalid label {0:?}: use 1 to 100 characters, no control characters")]
    BadLabel(String),
    #[error("{file} was already imported as conversation {conversation}")]
    Duplicate { file: String, conversation: String },
    #[error("no image blob {0}")]
    MissingBlob(String),
    #[error("corrupt row for message {id}: {reason}")]
    Corrupt { id: String, reason: String },
    #[error("search query: {0}")]
    BadQuery(String),
    #[error("store: {0}")]
    Sqlite(rusqlite::Error),
}

// Written by hand rather than with `#[from]`: the message already includes the inner error, and a `source`
// would print it twice in a one-line error chain.
impl From<PairError> for StoreError {
    fn from(e: PairError) -> Self {
        StoreError::Pairs(e)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
