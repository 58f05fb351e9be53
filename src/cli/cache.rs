//! `cairn cache CONV [--at MSG] [--json]`: the prompt cache reply by reply on a path (what each request read,
//! wrote and sent uncached; whether it reused the previous request's prefix; each miss's cause and what it cost),
//! and the totals by cause. The figures are [`crate::cache`]'s.

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::cache::CacheOf;
use crate::models::usd;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    /// The path to this message (default: the active path).
    #[arg(long, value_name = "MSG")]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

fn k(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let r = ctx.exec(CacheOf {
        conversation: a.conv,
        at: a.at,
    })?;
    if a.json {
        return to_json(&r);
    }
    out(&format!(
        "{:<16}  {:<20}  {:<22} {:>8} {:>8} {:>8} {:>8} {:>8}  {:<11} {:>9} {:>9}",
        "message",
        "time",
        "model",
        "input",
        "read",
        "write5m",
        "write1h",
        "output",
        "cache",
        "cost",
        "if hit"
    ))?;
    for x in &r.replies {
        let cache = match (x.hit, x.cause, x.requests) {
            (_, _, Some(n)) => format!("sum of {n}"),
            (true, _, _) => "hit".to_string(),
            (false, Some(c), _) => format!("miss: {}", c.name()),
            (false, None, _) => "miss".to_string(),
        };
        out(&format!(
            "{:<16}  {:<20}  {:<22} {:>8} {:>8} {:>8} {:>8} {:>8}  {:<11} {:>9} {:>9}",
            x.message,
            x.time.get(..19).unwrap_or(&x.time),
            x.model,
            k(x.input),
            k(x.cache_read),
            k(x.cache_write_5m),
            k(x.cache_write_1h),
            k(x.output),
            cache,
            usd(x.cost, 4),
            if x.hit {
                String::new()
            } else {
                usd(x.cost_if_hit, 4)
            }
        ))?;
    }
    let t = &r.totals;
    out(&format!(
        "{} replies, {} misses; cost {}, lost to misses {}{}; cache hit ratio {}",
        t.replies,
        t.misses,
        usd(t.cost, 2),
        usd(t.lost, 2),
        if t.by_cause.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                t.by_cause
                    .iter()
                    .map(|(c, v)| format!("{c} {}", usd(Some(*v), 2)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        t.hit_ratio
            .map_or("-".to_string(), |h| format!("{:.1}%", h * 100.0))
    ))?;
    if t.unpriced > 0 {
        out(&format!(
            "{} replies of models with no price (cost null)",
            t.unpriced
        ))?;
    }
    Ok(())
}
