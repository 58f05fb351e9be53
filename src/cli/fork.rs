//! `cairn fork CONV [--at MSG]`: copies root→tip (or root→MSG) into a new conversation; prints its id.

use anyhow::Result;

use super::{Ctx, out};
use crate::commands::fork::ForkPath;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long, value_name = "MSG")]
    at: Option<String>,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    out(&ctx.exec(ForkPath {
        conversation: a.conv,
        at: a.at,
    })?)
}
