//! `cairn log CONV [--json]`: the operation log.

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::log::OperationLog;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let ops = ctx.exec(OperationLog {
        conversation: a.conv,
    })?;
    if a.json {
        return to_json(&ops);
    }
    for o in ops {
        out(&format!(
            "{:>5} {:<10} {:<16} -> {:<16} {}{}",
            o.seq,
            o.kind,
            o.tip_before.as_deref().unwrap_or("-"),
            o.tip_after.as_deref().unwrap_or("-"),
            if o.detail.is_null() {
                String::new()
            } else {
                o.detail.to_string()
            },
            if o.undone { " (undone)" } else { "" }
        ))?;
    }
    Ok(())
}
