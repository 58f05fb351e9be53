//! `cairn tree CONV`: the message tree, tip and checkpoints marked.

use anyhow::Result;

use super::{Ctx, out_text};
use crate::commands::tree_text::TreeText;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    out_text(&ctx.exec(TreeText {
        conversation: a.conv,
    })?)
}
