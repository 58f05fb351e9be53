//! `cairn context CONV [--model M] [--json]`: the `/context` breakdown of what the model would see;
//! `--over-time`: the context at each reply along the active path (measured, estimated, compactions).

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::context_report::ContextOf;
use crate::commands::timeline::TimelineOf;
use crate::reclaim::report::ContextReport;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    /// The model whose window and calibration to use (default: the newest reply's).
    #[arg(long)]
    model: Option<String>,
    /// The context at each reply along the path instead: what the provider measured, cairn's estimate, the
    /// compactions.
    #[arg(long)]
    over_time: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.over_time {
        let t = ctx.exec(TimelineOf {
            conversation: a.conv,
            model: a.model,
        })?;
        if a.json {
            return to_json(&t);
        }
        out(&format!(
            "{:<18} {:>9} {:>9}  window {}  threshold {}",
            "reply", "measured", "estimated", t.window, t.threshold
        ))?;
        for p in &t.points {
            out(&format!(
                "{:<18} {:>9} {:>9}{}",
                p.message,
                p.measured
                    .map(|m| m.to_string())
                    .unwrap_or_else(|| "-".into()),
                p.estimated,
                if p.compaction {
                    "  after a compaction"
                } else {
                    ""
                }
            ))?;
        }
        return Ok(());
    }
    let r = ctx.exec(ContextOf {
        conversation: a.conv,
        model: a.model,
    })?;
    if a.json { to_json(&r) } else { show(&r) }
}

/// The breakdown as text (also `/context` from `cairn slash`).
pub fn show(r: &ContextReport) -> Result<()> {
    out(&format!(
        "model {}  window {} ({})  (reply reserve {})",
        r.model,
        r.window,
        r.window_source.name(),
        r.reply_reserve
    ))?;
    if let Some(h) = &r.harness_compaction {
        out(&format!(
            "  after {}'s compaction at {} ({} messages kept): {} of {} messages sent",
            h.harness, h.message, h.kept, r.messages_sent, r.messages_on_path
        ))?;
    }
    out(&format!("  system               {:>8}", r.system))?;
    out(&format!(
        "  tools and overhead   {:>8}   ({})",
        r.tools_and_overhead, r.calibration.source
    ))?;
    let m = &r.messages;
    for (k, v) in [
        ("text", m.text),
        ("tool calls", m.tool_use),
        ("tool results", m.tool_results),
        ("images", m.images),
        ("thinking", m.thinking),
        ("other", m.other),
    ] {
        out(&format!("  {k:<20} {v:>8}"))?;
    }
    out(&format!(
        "  estimated total      {:>8}   last measured {}",
        r.estimated_total,
        r.last_measured.map_or("-".to_string(), |v| v.to_string())
    ))?;
    out(&format!(
        "  next request         {:>8}   (the last measured prompt plus what came since: what send compacts by)",
        r.predicted_total
    ))?;
    out(&format!(
        "  cached prefix        {:>8}   through {}",
        r.cached_tokens,
        r.cached_through.as_deref().unwrap_or("-")
    ))?;
    out(&format!("  free                 {:>8}", r.free))?;
    out("  rungs (what each would take back now):")?;
    for g in &r.rungs {
        out(&format!(
            "    {:<9} {:>8} tokens, {:>4} items, {} model calls{}  {}",
            g.name,
            g.saves,
            g.items,
            g.model_calls,
            if g.would_run {
                ""
            } else {
                " (would not run yet)"
            },
            g.note
        ))?;
    }
    Ok(())
}
