//! `cairn fork CONV [--at MSG]`: copies root→tip (or root→MSG) into a new conversation; prints its id.

use anyhow::Result;

use super::{Ctx, out, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long, value_name = "MSG")]
    at: Option<String>,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    match ctx.run(Action::Fork {
        conversation: a.conv,
        at: a.at,
    })? {
        Outcome::Forked(id) => out(&id),
        o => Err(unexpected(&o)),
    }
}
