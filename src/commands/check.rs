//! `check`: the store file's integrity, and every row decoded (a row the store cannot read back is named with its
//! conversation).

use std::path::PathBuf;

use super::{Command, CommandError, Env};

/// Checks the store.
#[derive(Debug, Clone, Copy)]
pub struct CheckStore;

/// The store checked, and what is wrong with it (None: nothing).
pub struct StoreCheck {
    pub store: PathBuf,
    pub problems: Option<String>,
}

impl Command for CheckStore {
    type Output = StoreCheck;

    fn run(self, env: Env<'_>) -> Result<StoreCheck, CommandError> {
        let store = env.store;
        let mut problems: Vec<String> = store.integrity_check()?.err().into_iter().collect();
        let bad = store.unreadable_rows()?;
        if let Some((conv, id, why)) = bad.first() {
            problems.push(format!(
                "{} unreadable row(s), first: message {id} of conversation {conv}: {why}",
                bad.len()
            ));
        }
        Ok(StoreCheck {
            store: store.path().to_path_buf(),
            problems: (!problems.is_empty()).then(|| problems.join("; ")),
        })
    }
}
