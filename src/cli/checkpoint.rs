//! `cairn checkpoint CONV LABEL`: labels the tip, which must be a turn boundary; prints the message.

use anyhow::Result;

use super::{Ctx, out, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    label: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    match ctx.run(Action::Checkpoint {
        conversation: a.conv,
        label: Some(a.label),
    })? {
        Outcome::Checkpointed(c) => out(&c.message),
        o => Err(unexpected(&o)),
    }
}
