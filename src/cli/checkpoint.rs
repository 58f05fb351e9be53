//! `cairn checkpoint CONV LABEL`: labels the tip, which must be a turn boundary; prints the message.

use anyhow::Result;

use super::{Ctx, out};
use crate::commands::checkpoint::SetCheckpoint;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    label: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let c = ctx.exec(SetCheckpoint {
        conversation: a.conv,
        label: Some(a.label),
    })?;
    out(&c.message)
}
