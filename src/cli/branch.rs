//! `cairn branch CONV MSG [--expect OLD_TIP]`: moves the tip (compare-and-swap with --expect); writes no message.

use anyhow::Result;

use super::{Ctx, out};
use crate::commands::branch::SwitchTip;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    msg: String,
    /// Only move if the tip is still this message (compare-and-swap).
    #[arg(long, value_name = "OLD_TIP")]
    expect: Option<String>,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let moved = ctx.exec(SwitchTip {
        conversation: a.conv,
        message: a.msg,
        expect: a.expect,
    })?;
    out(&moved.tip)
}
