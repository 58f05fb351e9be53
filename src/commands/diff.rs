//! `diff`: two paths (conversations, forks or messages) compared message by message, with their figures.

use super::{Command, CommandError, Env};
use crate::diff::Diff;

/// Compares two paths.
#[derive(Debug, Clone)]
pub struct DiffPaths {
    pub a: String,
    pub b: String,
}

impl Command for DiffPaths {
    type Output = Box<Diff>;

    fn run(self, env: Env<'_>) -> Result<Box<Diff>, CommandError> {
        let prices = super::learned_prices::prices(env.store, env.settings)?;
        Ok(Box::new(crate::diff::diff(
            env.store, &self.a, &self.b, &prices,
        )?))
    }

    fn doing(&self) -> String {
        "comparing the two paths".into()
    }
}
