//! `cairn undo CONV`: undoes the last pointer move (tip, checkpoint, fork, resume window).

use anyhow::Result;

use super::{Ctx, out, unexpected};
use crate::commands::{Action, Outcome};
use crate::store::Operation;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    match ctx.run(Action::Undo {
        conversation: a.conv,
    })? {
        Outcome::Undone(op) => show(&op),
        o => Err(unexpected(&o)),
    }
}

/// What was undone, as text.
pub fn show(op: &Operation) -> Result<()> {
    out(&format!(
        "undid {} (tip {} -> {})",
        op.kind,
        op.tip_after.as_deref().unwrap_or("-"),
        op.tip_before.as_deref().unwrap_or("-")
    ))
}
