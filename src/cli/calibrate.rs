//! `cairn calibrate [--json]`: fits each model's estimate on the store's measured replies (the same assembled
//! contexts `replay` checks) and keeps the fits for `context`.

use anyhow::Result;
use serde_json::json;

use super::{Ctx, out, print_json};
use crate::commands::calibrate::{Calibrate, Calibrated};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let Calibrated { models, skipped } = ctx.exec(Calibrate)?;
    for s in &skipped {
        eprintln!("cairn: skipped {s}");
    }
    if a.json {
        return print_json(&json!(models));
    }
    for c in models {
        match &c.fit {
            Some(f) => out(&format!(
                "{:<12} {:<28} {:>5} replies in {:>3} sessions  median abs error {:>6.1}% -> {:>5.1}%  (scale {:.3}{}, mean overhead {:.0}{})",
                c.harness,
                c.model,
                c.samples,
                c.sessions,
                c.error_before,
                c.error_after,
                f.scale,
                crate::reclaim::parts::describe(&f.scales()),
                f.overhead,
                f.tokenizer
                    .map(|t| format!(", counted best by {}", t.name()))
                    .unwrap_or_default()
            ))?,
            None => out(&format!(
                "{:<12} {:<28} {:>5} replies in {:>3} sessions  too few to fit: the defaults are used",
                c.harness, c.model, c.samples, c.sessions
            ))?,
        }
    }
    Ok(())
}
