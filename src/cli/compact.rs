//! `cairn compact CONV [--strategy S] [--target N] [--protect N] [--json]`: one rung (forced), or the ladder down
//! to the target. Writes a marker; stored messages never change.

use std::time::Instant;

use anyhow::Result;

use super::{Ctx, ProviderKind, Strategy, out, to_json};
use crate::commands::compact::Compact;
use crate::commands::server_compact::ServerCompact;
use crate::commands::{Compacted, Progress};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long, value_enum)]
    strategy: Option<Strategy>,
    /// Summary: what the summary must keep.
    #[arg(long)]
    instructions: Option<String>,
    /// Summary: the provider.
    #[arg(long, value_enum)]
    provider: Option<ProviderKind>,
    /// Summary: the summarising model.
    #[arg(long)]
    model: Option<String>,
    /// Target tokens for the ladder (default: the policy's target, half the usable window).
    #[arg(long)]
    target: Option<u64>,
    /// The protect window: the newest tokens no rung touches (default: the policy's, 40000).
    #[arg(long)]
    protect: Option<u64>,
    /// The snapshot's page shape (see `cairn legibility --list-shapes`; default: the settings', else the model
    /// family's).
    #[arg(long, value_name = "NAME")]
    shape: Option<String>,
    /// A partial compaction from this message (to --to, or the tip); the protect window does not apply.
    #[arg(long, value_name = "MSG")]
    from: Option<String>,
    /// A partial compaction up to this message (from --from, or the start).
    #[arg(long, value_name = "MSG")]
    to: Option<String>,
    #[arg(long)]
    json: bool,
}

/// "summary: model call k/n" on stderr.
struct Calls;

impl Progress for Calls {
    fn step(&self, done: usize, total: usize, _what: &str) {
        if done < total {
            eprintln!("summary: model call {}/{total}", done + 1);
        }
    }
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    ctx.use_shape(a.shape.clone())?;
    // the providers' own compaction runs once on their side and is kept as a marker
    if let Some(server @ (Strategy::AnthropicServer | Strategy::OpenaiCompact)) = a.strategy {
        let (how, kind) = match server {
            Strategy::AnthropicServer => (crate::send::ServerCompaction::Anthropic, "anthropic"),
            _ => (crate::send::ServerCompaction::Openai, "openai"),
        };
        let settings = ctx.settings()?.clone();
        let provider = crate::config::provider(&settings, Some(kind), a.model.clone()).ok();
        let done = ctx.exec(ServerCompact {
            conversation: a.conv,
            how,
            provider,
        })?;
        return match done {
            Compacted::Rung(_, Some(applied)) if a.json => to_json(&applied),
            Compacted::Rung(_, Some(applied)) => out(&format!(
                "{}: {} -> {} tokens, marker {}",
                how.name(),
                applied.tokens_before,
                applied.tokens_after,
                applied.marker
            )),
            Compacted::Rung(_, None) => out(&format!("{}: nothing to do", how.name())),
            Compacted::Ladder(o) if a.json => to_json(&o),
            c => show(&c),
        };
    }
    let strategy = a.strategy.and_then(Strategy::strategy);
    let provider = match strategy {
        Some(crate::reclaim::Strategy::Summary) => Some(crate::config::provider(
            ctx.settings()?,
            a.provider.map(|p| p.name()),
            a.model,
        )?),
        _ => None,
    };
    let summary_model = provider
        .as_ref()
        .map(|p| format!("{} via {}", p.model, p.base_url));
    let t = Instant::now();
    let command = Compact {
        conversation: a.conv,
        strategy,
        force: true,
        target: a.target,
        protect: a.protect,
        instructions: a.instructions,
        provider,
        from: a.from,
        to: a.to,
    };
    let c = if a.json {
        ctx.exec(command)?
    } else {
        ctx.exec_with(command, &Calls)?
    };
    if a.json {
        return match c {
            Compacted::Rung(_, applied) => to_json(&applied),
            Compacted::Ladder(o) => to_json(&o),
        };
    }
    show(&c)?;
    if let (Some(m), Compacted::Rung(_, Some(_))) = (summary_model, &c) {
        out(&format!(
            "  (summary by {m} in {:.1} s)",
            t.elapsed().as_secs_f64()
        ))?;
    }
    Ok(())
}

/// What a compaction did, as text (also `/compact` from `cairn slash`).
pub fn show(c: &Compacted) -> Result<()> {
    match c {
        Compacted::Rung(s, Some(a)) => out(&format!(
            "{}: {} items, {} -> {} tokens (marker {})",
            s.name(),
            a.items,
            a.tokens_before,
            a.tokens_after,
            a.marker
        )),
        Compacted::Rung(s, None) => out(&format!("{}: nothing to do on this path", s.name())),
        Compacted::Ladder(o) => {
            for a in &o.steps {
                out(&format!(
                    "{:<9} {} items, {} -> {} tokens",
                    a.strategy.name(),
                    a.items,
                    a.tokens_before,
                    a.tokens_after
                ))?;
            }
            match &o.note {
                None => out(&format!(
                    "reached {} tokens (target {})",
                    o.tokens_after, o.target
                )),
                Some(n) => out(n),
            }
        }
    }
}
