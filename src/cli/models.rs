//! `cairn models [--json]`: every model the store has seen, with its catalog entry, context window, tokenizer,
//! estimator scale and list prices, and where each figure came from (the settings, the catalog, what providers
//! measured, cairn's own rule, or a default).

use anyhow::Result;

use super::{Ctx, out, to_json, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

fn source(s: crate::models::Source) -> &'static str {
    match s {
        crate::models::Source::Settings => "settings",
        crate::models::Source::Catalog => "catalog",
        crate::models::Source::Measured => "measured",
        crate::models::Source::Cairn => "cairn",
        crate::models::Source::Default => "default",
    }
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let rows = match ctx.run(Action::Models)? {
        Outcome::Models(r) => r,
        o => return Err(unexpected(&o)),
    };
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
        let price = r.price_per_mtok.map_or("unknown".to_string(), |p| {
            format!(
                "{}/{}/{}/{}/{}",
                p.input, p.output, p.cache_read, p.cache_write_5m, p.cache_write_1h
            )
        });
        out(&format!(
            "{:<26} {:>7} {:>14} {:<12} {:>9} {:<9} {:<21} {:>5.2} {:<8} {:<28} {}",
            r.model,
            r.replies,
            r.provider.as_deref().unwrap_or("-"),
            r.family.name(),
            r.window,
            source(r.window_source),
            r.tokenizer.name(),
            r.scale,
            source(r.scale_source),
            price,
            source(r.price_source),
        ))?;
    }
    Ok(())
}
