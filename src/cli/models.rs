//! `cairn models [--json]`: every model the store has seen, with its catalog entry, context window, tokenizer,
//! estimator scale and list prices, and where each figure came from (the settings, the catalog, what providers
//! measured, cairn's own rule, or a default).

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::models::ListModels;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let rows = ctx.exec(ListModels)?;
    if a.json {
        return to_json(&serde_json::json!({ "models": rows }));
    }
    out(&format!(
        "{:<26} {:>7} {:>14} {:<12} {:>9} {:<9} {:<21} {:>5} {:<8} {:<28} {}",
        "model",
        "replies",
        "provider",
        "family",
        "window",
        "(from)",
        "tokenizer",
        "scale",
        "(from)",
        "$/Mtok in/out/read/w5m/w1h",
        "(from)"
    ))?;
    for r in &rows {
        let price = r.price_per_mtok.map_or("unknown".to_string(), |p| p.line());
        out(&format!(
            "{:<26} {:>7} {:>14} {:<12} {:>9} {:<9} {:<21} {:>5.2} {:<8} {:<28} {}",
            r.model,
            r.replies,
            r.provider.as_deref().unwrap_or("-"),
            r.family.name(),
            r.window,
            r.window_source.name(),
            r.tokenizer.name(),
            r.scale,
            r.scale_source.name(),
            price,
            r.price_source.name(),
        ))?;
    }
    for r in &rows {
        for w in &r.ran_with {
            out(&format!(
                "{}: {} ran it with a {}-token window in {} conversation(s), which are planned against it",
                r.model, w.harness, w.window, w.conversations
            ))?;
        }
    }
    Ok(())
}
