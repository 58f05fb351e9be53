//! `cairn checkpoints CONV [--json]`: the checkpoints.

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::checkpoints::ListCheckpoints;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let cps = ctx.exec(ListCheckpoints {
        conversation: a.conv,
    })?;
    if a.json {
        return to_json(&cps);
    }
    for c in cps {
        out(&format!("{:<24} {}", c.label, c.message))?;
    }
    Ok(())
}
