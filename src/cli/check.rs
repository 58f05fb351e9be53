//! `cairn check`: the store file's integrity.

use anyhow::{Result, bail};

use super::{Ctx, out, unexpected};
use crate::commands::{Action, Outcome};

pub fn run(ctx: &mut Ctx) -> Result<()> {
    match ctx.run(Action::Check)? {
        Outcome::Checked { problems: None, .. } => out("ok"),
        Outcome::Checked {
            store,
            problems: Some(p),
        } => bail!("{}: integrity check failed: {p}", store.display()),
        o => Err(unexpected(&o)),
    }
}
