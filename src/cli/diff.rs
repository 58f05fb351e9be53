//! `cairn diff A B [--json]`: where two attempts went apart (two tips of a conversation as message ids, a fork and
//! its origin, or two runs of a task as conversation ids): the last shared message, both continuations aligned,
//! each side's totals, and a text diff of the messages that differ.

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::diff::DiffPaths;

#[derive(clap::Args)]
pub struct Args {
    /// A conversation id, or a message id (the path to it).
    a: String,
    b: String,
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let d = ctx.exec(DiffPaths { a: a.a, b: a.b })?;
    if a.json {
        return to_json(&d);
    }
    out(&format!(
        "shared: {} messages{}",
        d.shared,
        d.diverged_after
            .a
            .as_deref()
            .map(|m| format!(", diverged after {m}"))
            .unwrap_or_else(|| ", nothing in common".into())
    ))?;
    for (name, s) in [("A", &d.a), ("B", &d.b)] {
        let tools = s.tool_counts();
        out(&format!(
            "{name} {} → {}: {} messages, {} turns, {} tool calls ({}), {} errors, {}",
            s.conversation,
            s.tip.as_deref().unwrap_or("-"),
            s.messages,
            s.turns,
            s.tool_calls,
            if tools.is_empty() {
                "none".into()
            } else {
                tools.join(", ")
            },
            s.tool_errors,
            s.cost_line()
        ))?;
        if let Some(line) = s.final_line(120) {
            out(&format!("  final reply: {line}"))?;
        }
    }
    for p in &d.pairs {
        let mark = if p.same { "=" } else { "≠" };
        out(&format!(
            "{mark} {} | {}",
            super::cell(p.a_line.as_deref().unwrap_or(""), 60),
            super::cell(p.b_line.as_deref().unwrap_or(""), 60).trim_end()
        ))?;
        if let Some(diff) = &p.diff {
            for l in diff.lines().take(40) {
                out(&format!("    {l}"))?;
            }
        }
    }
    Ok(())
}
