//! `cairn retry CONV [--json]`: nothing loaded / nothing to retry / retryable (and the tip moves back to the last
//! boundary).

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::retry::RetryTurn;
use crate::store::Retry;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let r = ctx.exec(RetryTurn {
        conversation: a.conv,
    })?;
    if a.json {
        return to_json(&r);
    }
    match r {
        Retry::NothingLoaded { reason } => out(&format!("nothing loaded: {reason}")),
        Retry::NothingToRetry { tip } => out(&format!(
            "nothing to retry: the last turn is complete (tip {tip})"
        )),
        Retry::Retryable {
            failed_tip,
            why,
            restart_at,
            ..
        } => out(&format!(
            "retryable: {why} at {failed_tip}; tip moved back to {}",
            restart_at
                .as_deref()
                .unwrap_or("(before the first message)")
        )),
    }
}
