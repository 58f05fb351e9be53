//! `cairn rewind CONV LABEL --digest TEXT`: back to the checkpoint, leaving a digest of what the abandoned path
//! found; prints the digest's id.

use anyhow::Result;

use super::{Ctx, out};
use crate::commands::rewind::RewindTo;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    label: String,
    #[arg(long)]
    digest: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    out(&ctx.exec(RewindTo {
        conversation: a.conv,
        label: a.label,
        digest: a.digest,
    })?)
}
