//! `cairn rewind CONV LABEL --digest TEXT`: back to the checkpoint, leaving a digest of what the abandoned path
//! found; prints the digest's id.

use anyhow::Result;

use super::{Ctx, out, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    label: String,
    #[arg(long)]
    digest: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    match ctx.run(Action::Rewind {
        conversation: a.conv,
        label: a.label,
        digest: a.digest,
    })? {
        Outcome::Rewound { digest } => out(&digest),
        o => Err(unexpected(&o)),
    }
}
