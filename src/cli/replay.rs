//! `cairn replay [CONV] [--json]`: for every reply with a measured prompt size, the context cairn assembles for
//! the messages before it against that figure, per model: the estimate from scratch and the prediction from the
//! last measured prompt (median and p90 absolute error, the worst reply); then, per harness, the first prompt after
//! each of its compactions.

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
        "{:<32} {:>7} {:>17} {:>17}  {:<10}  worst estimate (estimated / measured)",
        "model", "replies", "estimated med/p90", "predicted med/p90", "estimator"
    ))?;
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    for m in &r.models {
        let predicted = |x: f64| {
            if m.predicted_replies == 0 {
                "-".to_string()
            } else {
                pct(x)
            }
        };
        out(&format!(
            "{:<32} {:>7} {:>8} {:>8} {:>8} {:>8}  {:<10}  {} ({} / {})",
            m.model,
            m.replies,
            pct(m.median_abs_error),
            pct(m.p90_abs_error),
            predicted(m.predicted_median_abs_error),
            predicted(m.predicted_p90_abs_error),
            m.estimator,
            m.worst.message,
            m.worst.estimated,
            m.worst.measured
        ))?;
    }
    if !r.compactions_by_harness.is_empty() {
        out("")?;
        out("The first prompt after each harness compaction, predicted against measured:")?;
        out(&format!(
            "{:<32} {:>7} {:>8} {:>8}  worst",
            "harness", "count", "median", "max"
        ))?;
        for h in &r.compactions_by_harness {
            out(&format!(
                "{:<32} {:>7} {:>8} {:>8}  {}",
                h.harness,
                h.compactions,
                pct(h.median_abs_error),
                pct(h.max_abs_error),
                h.worst
            ))?;
        }
    }
    Ok(())
}
