//! `cairn check`: the store file's integrity.

use anyhow::{Result, bail};

use super::{Ctx, out};
use crate::commands::check::CheckStore;

pub fn run(ctx: &mut Ctx) -> Result<()> {
    let c = ctx.exec(CheckStore)?;
    match c.problems {
        None => out("ok"),
        Some(p) => bail!("{}: integrity check failed: {p}", c.store.display()),
    }
}
