//! `cairn undo CONV`: undoes the last pointer move (tip, checkpoint, fork, resume window).

use anyhow::Result;

use super::{Ctx, out};
use crate::commands::undo::UndoLast;
use crate::store::Operation;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    show(&ctx.exec(UndoLast {
        conversation: a.conv,
    })?)
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
