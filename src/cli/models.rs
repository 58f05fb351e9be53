//! `cairn models [--json]`: every model the store has seen, with its catalog entry, context window, tokenizer,
//! estimator scale and list prices, and where each figure came from (the settings, the catalog, what providers
//! measured, cairn's own rule, or a default), and the catalog in use. `--update` fetches genai-prices' current data
//! (`--from` a URL or a file instead), keeps it beside the store's default folder and says what it changed.

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::models::{CatalogUpdate, Figures, ListModels, UpdateCatalog};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
    /// Fetch the model catalog's current data (genai-prices), keep it and use it from now on.
    #[arg(long)]
    update: bool,
    /// Where `--update` fetches from: a URL, or a file of genai-prices' data (implies `--update`).
    #[arg(long, value_name = "URL_OR_FILE")]
    from: Option<String>,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.update || a.from.is_some() {
        let to = crate::config::catalog_path().ok_or_else(|| {
            anyhow::anyhow!("no home folder to keep the catalog in; set CAIRN_CATALOG to a file")
        })?;
        let from = a
            .from
            .unwrap_or_else(|| crate::models::catalog::FEED.to_string());
        let u = ctx.exec(UpdateCatalog { from, to })?;
        if a.json {
            return to_json(&u);
        }
        return print_update(&u);
    }
    let report = ctx.exec(ListModels)?;
    if a.json {
        return to_json(&report);
    }
    let rows = &report.models;
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
    for r in rows {
        let price = r.price_per_mtok.map_or("unknown".to_string(), |p| p.line());
        out(&format!(
            "{:<26} {:>7} {:>14} {:<12} {:>9} {:<9} {:<21} {:>5.2} {:<8} {:<28} {}",
            r.model,
            r.replies,
            r.provider.as_deref().unwrap_or("-"),
            r.family.name(),
            r.window,
            r.window_source.name(),
            if r.tokenizer_per_path {
                "chosen per path"
            } else {
                r.tokenizer.name()
            },
            r.scale,
            r.scale_source.name(),
            price,
            r.price_source.name(),
        ))?;
    }
    let per_path: Vec<&str> = rows
        .iter()
        .filter(|r| r.tokenizer_per_path)
        .map(|r| r.model.as_str())
        .collect();
    if !per_path.is_empty() {
        out(&format!(
            "{}: no calibration yet; each conversation is counted with the tokenizer (the estimate or o200k) its own \
             measured replies are explained best by (`cairn calibrate` fits one per model)",
            per_path.join(", ")
        ))?;
    }
    for r in rows {
        if r.tokenizer_source == crate::models::Source::Measured {
            out(&format!(
                "{}: counted with {}, which its measured prompts chose (`cairn calibrate`; no family the catalog \
                 knows says)",
                r.model,
                r.tokenizer.name()
            ))?;
        }
        if let Some(n) = r.price_learned_from {
            out(&format!(
                "{}: priced as its harness recorded {n} cost(s) of it (no catalog or settings price)",
                r.model
            ))?;
        }
        for w in &r.ran_with {
            out(&format!(
                "{}: {} ran it with a {}-token window in {} conversation(s), which are planned against it",
                r.model, w.harness, w.window, w.conversations
            ))?;
        }
    }
    out(&format!("catalog: {}", report.catalog.line()))?;
    if let Some(w) = &report.catalog.warning {
        eprintln!("cairn: warning: {}", crate::cli::terminal_safe(w));
    }
    if !report.unlisted.is_empty() {
        out(&format!(
            "not in the catalog: {} (`cairn models --update` fetches genai-prices' current data, which may list them)",
            report.unlisted.join(", ")
        ))?;
    }
    Ok(())
}

fn print_update(u: &CatalogUpdate) -> Result<()> {
    out(&format!("catalog: {}", u.now.line()))?;
    out(&format!("  from {}; was {}", u.from, u.was.line()))?;
    let some = |v: &[String]| {
        let shown: Vec<&str> = v.iter().take(8).map(String::as_str).collect();
        let more = v.len().saturating_sub(shown.len());
        if more > 0 {
            format!(" ({}, and {more} more)", shown.join(", "))
        } else if shown.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown.join(", "))
        }
    };
    out(&format!(
        "  {} model(s) added{}, {} removed{}",
        u.added.len(),
        some(&u.added),
        u.removed.len(),
        some(&u.removed)
    ))?;
    if u.changed.is_empty() {
        return out("  no model the store has seen is described otherwise");
    }
    for c in &u.changed {
        out(&format!("{}: {}", c.model, changes(&c.before, &c.after)))?;
    }
    Ok(())
}

/// `window 302419 (measured) -> 1000000 (catalog); ...`: each figure that changed.
fn changes(b: &Figures, a: &Figures) -> String {
    let price = |f: &Figures| {
        f.price_per_mtok
            .map_or("unknown".to_string(), |p| format!("{} $/Mtok", p.line()))
    };
    let mut parts = Vec::new();
    if b.provider != a.provider {
        parts.push(format!(
            "provider {} -> {}",
            b.provider.as_deref().unwrap_or("-"),
            a.provider.as_deref().unwrap_or("-")
        ));
    }
    if b.family != a.family {
        parts.push(format!("family {} -> {}", b.family, a.family));
    }
    if (b.window, b.window_source) != (a.window, a.window_source) {
        parts.push(format!(
            "window {} ({}) -> {} ({})",
            b.window,
            b.window_source.name(),
            a.window,
            a.window_source.name()
        ));
    }
    if (b.price_per_mtok, b.price_source) != (a.price_per_mtok, a.price_source) {
        parts.push(format!(
            "price {} ({}) -> {} ({})",
            price(b),
            b.price_source.name(),
            price(a),
            a.price_source.name()
        ));
    }
    parts.join("; ")
}
