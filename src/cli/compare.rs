//! `cairn compare CONV [--budget N] [--profile P] [--json]`: each rung alone and the ladder side by side; writes
//! nothing. The budget defaults to the policy's target; the profile is the snapshot's page shape.

use anyhow::Result;

use super::{Ctx, Profile, out, to_json};
use crate::commands::compare::CompareStrategies;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    /// Tokens the context should fit (default: the policy's target, half the usable window).
    #[arg(long)]
    budget: Option<u64>,
    /// The snapshot's page profile (default: the settings', else claude-hires).
    #[arg(long, value_enum)]
    profile: Option<Profile>,
    /// The snapshot's page shape (see `cairn legibility --list-shapes`; default: the settings', else the model
    /// family's).
    #[arg(long, value_name = "NAME")]
    shape: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    ctx.use_shape(a.shape.clone())?;
    let c = ctx.exec(CompareStrategies {
        conversation: a.conv,
        budget: a.budget,
        profile: a.profile.map(Profile::profile),
    })?;
    let (budget, rows) = (c.budget, c.rows);
    if a.json {
        return to_json(&rows);
    }
    out(&format!(
        "budget {budget} tokens; each row as its next request would send it (the system prompt and tools beside \
         the messages included: `cairn context`'s next request is the first row)"
    ))?;
    out(&format!(
        "{:<15} {:>9} {:>9} {:>6} {:>9} {:>7} {:>7} {:>9} {:>9} {:>9} {:>10}  cache kept through",
        "strategy",
        "text",
        "image",
        "calls",
        "img kB",
        "elided",
        "imaged",
        "$ list",
        "$ warm",
        "$ after",
        "break-even"
    ))?;
    for r in rows {
        out(&format!(
            "{:<15} {:>9} {:>9} {:>6} {:>9.0} {:>7} {:>7} {:>9} {:>9} {:>9} {:>10}  {}{}{}",
            r.strategy,
            r.text_tokens_after,
            r.image_tokens_after,
            r.model_calls,
            r.image_bytes as f64 / 1e3,
            r.lost.tool_results_elided,
            r.lost.characters_imaged,
            crate::models::usd(r.cost_list, 4),
            crate::models::usd(r.cost_warm_cache, 4),
            crate::models::usd(r.cost_after, 4),
            r.break_even_replies
                .map_or("never".to_string(), |n| format!("{n} replies")),
            r.cache_kept_through.as_deref().unwrap_or("-"),
            if r.reaches_budget {
                ""
            } else {
                "  (over budget)"
            },
            if r.ran || r.strategy == crate::reclaim::compare::Candidate::None {
                ""
            } else {
                "  (nothing to do)"
            }
        ))?;
    }
    Ok(())
}
