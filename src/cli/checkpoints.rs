//! `cairn checkpoints CONV [--json]`: the checkpoints.

use anyhow::Result;

use super::{Ctx, out, to_json, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let cps = match ctx.run(Action::Checkpoints {
        conversation: a.conv,
    })? {
        Outcome::Checkpoints(c) => c,
        o => return Err(unexpected(&o)),
    };
    if a.json {
        return to_json(&cps);
    }
    for c in cps {
        out(&format!("{:<24} {}", c.label, c.message))?;
    }
    Ok(())
}
