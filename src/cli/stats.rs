//! `cairn stats [--by conversation|model|day|week|project|tool] [--since DATE] [--json|--csv] [--cache]`: usage across
//! sessions: sessions, turns, tool calls and errors, tokens, cache hits, cost at list prices, compactions, wall time.

use anyhow::{Result, anyhow};

use super::{Ctx, out, out_raw, to_json};
use crate::commands::stats::UsageStats;
use crate::store::By;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value = "model")]
    by: Key,
    /// Only what was written on or after this date (2026-02-01, or an RFC 3339 time).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    #[arg(long)]
    csv: bool,
    /// Beside each row, what prompt-cache misses cost beyond a held cache, by cause (reads every path: slower).
    #[arg(long)]
    cache: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Key {
    Conversation,
    Model,
    Day,
    Week,
    Project,
    Tool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let since = match &a.since {
        Some(s) => Some(crate::search::parse_since(s).ok_or_else(|| {
            anyhow!("--since {s:?}: not a date (2026-02-01 or 2026-02-01T10:00:00Z)")
        })?),
        None => None,
    };
    let by = match a.by {
        Key::Conversation => By::Conversation,
        Key::Model => By::Model,
        Key::Day => By::Day,
        Key::Week => By::Week,
        Key::Project => By::Project,
        Key::Tool => By::Tool,
    };
    let s = ctx.exec(UsageStats {
        by,
        since,
        cache: a.cache,
    })?;
    if a.json {
        return to_json(&s);
    }
    if a.csv {
        return out_raw(&crate::stats::csv(&s));
    }
    if by == By::Tool {
        return tools_table(&s);
    }
    out(&format!(
        "{:<34} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6} {:>10}",
        s.by,
        "sessions",
        "turns",
        "calls",
        "errors",
        "input",
        "output",
        "cache rd",
        "cache wr",
        "hit%",
        "cost"
    ))?;
    for r in &s.rows {
        row_lines(r)?;
    }
    let (nameless, unpriced): (Vec<String>, Vec<String>) = s
        .unpriced()
        .into_iter()
        .partition(|m| m == crate::models::NO_MODEL);
    if !unpriced.is_empty() {
        eprintln!(
            "cairn: no list price for {} (add them under \"prices\" in the settings file); their cost is unknown",
            unpriced.join(", ")
        );
    }
    if !nameless.is_empty() {
        eprintln!(
            "cairn: some replies recorded usage but their harness named no model; their cost is unknown"
        );
    }
    Ok(())
}

/// By tool: each tool's sessions, calls, errors and output size.
fn tools_table(s: &crate::stats::Stats) -> Result<()> {
    out(&format!(
        "{:<28} {:>8} {:>8} {:>8} {:>7} {:>10}",
        "tool", "sessions", "calls", "errors", "error%", "output tk"
    ))?;
    for r in &s.rows {
        out(&format!(
            "{:<28} {:>8} {:>8} {:>8} {:>6.1}% {:>10}",
            r.key,
            r.sessions,
            r.tool_calls,
            r.tool_errors,
            100.0 * r.error_share(),
            crate::stats::human(r.result_tokens.unwrap_or(0))
        ))?;
    }
    Ok(())
}

/// One row of the table, and the line of its cache misses beneath.
fn row_lines(r: &crate::stats::StatsRow) -> Result<()> {
    let key = super::cell(
        &match &r.label {
            Some(l) => format!("{} {}", r.key, l),
            None => r.key.clone(),
        },
        34,
    );
    out(&format!(
        "{key} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6} {:>10}",
        r.sessions,
        r.turns,
        r.tool_calls,
        r.tool_errors,
        crate::stats::human(r.input_tokens),
        crate::stats::human(r.output_tokens),
        crate::stats::human(r.cache_read_tokens),
        crate::stats::human(r.cache_write_tokens),
        r.cache_hit_ratio
            .map(|h| format!("{:.0}%", h * 100.0))
            .unwrap_or_else(|| "-".into()),
        r.cost_text()
    ))?;
    if let Some(u) = r.unrecorded_text() {
        out(&format!("{:<34} {u}", ""))?;
    }
    for said in [r.premium_text(), r.credits_text()].into_iter().flatten() {
        out(&format!("{:<34} {said}", ""))?;
    }
    if r.web_searches > 0 {
        out(&format!(
            "{:<34} {} web searches (in the cost)",
            "", r.web_searches
        ))?;
    }
    if let (Some(n), Some(causes)) = (r.cache_misses, &r.cache_lost_by_cause)
        && n > 0
    {
        out(&format!(
            "{:<34} {n} cache misses, lost {}: {}",
            "",
            crate::models::usd(r.cache_lost_usd, 2),
            causes
                .iter()
                .map(|(c, v)| format!("{c} ${v:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
    }
    Ok(())
}
