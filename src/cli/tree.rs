//! `cairn tree CONV`: the message tree, tip and checkpoints marked.

use anyhow::Result;

use super::{Ctx, out_text, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    match ctx.run(Action::Tree {
        conversation: a.conv,
    })? {
        Outcome::Text(t) => out_text(&t),
        o => Err(unexpected(&o)),
    }
}
