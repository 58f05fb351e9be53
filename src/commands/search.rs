//! `search`: every message of every branch of every session, through the store's full-text index, each hit with
//! whether it is on its conversation's active path, its time and a marked snippet.

use super::{Command, CommandError, Env};
use crate::search::Results;
use crate::store::SearchQuery;

/// Searches the store.
#[derive(Debug, Clone)]
pub struct SearchStore(pub SearchQuery);

impl Command for SearchStore {
    type Output = Results;

    fn run(self, env: Env<'_>) -> Result<Results, CommandError> {
        Ok(crate::search::search(env.store, &self.0)?)
    }

    fn doing(&self) -> String {
        "searching every session".into()
    }
}
