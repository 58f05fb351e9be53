//! `cairn replay [CONV] [--json]`: for every reply with a measured prompt size, the context cairn assembles for
//! the messages before it against that figure, per model (median and p90 absolute error, the worst reply).

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::replay::ReplayMeasured;

#[derive(clap::Args)]
pub struct Args {
    /// One conversation (default: every conversation).
    conv: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let r = ctx.exec(ReplayMeasured {
        conversation: a.conv,
    })?;
    for s in &r.skipped {
        eprintln!("cairn: skipped {s}");
    }
    if a.json {
        return to_json(&r);
    }
    out(&format!(
        "{:<32} {:>7} {:>8} {:>8}  {:<10}  worst (estimated / measured)",
        "model", "replies", "median", "p90", "estimator"
    ))?;
    for m in &r.models {
        out(&format!(
            "{:<32} {:>7} {:>7.1}% {:>7.1}%  {:<10}  {} ({} / {})",
            m.model,
            m.replies,
            m.median_abs_error * 100.0,
            m.p90_abs_error * 100.0,
            m.estimator,
            m.worst.message,
            m.worst.estimated,
            m.worst.measured
        ))?;
    }
    Ok(())
}
