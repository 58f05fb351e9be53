//! `cairn resume CONV (--max-messages N | --max-tokens N)`: the newest messages that fit, never orphaning a tool
//! result, as `{"messages": [...], "dropped_checkpoints": [...], "ids", "trimmed", "incomplete_tail"}`.

use anyhow::Result;
use serde_json::json;

use super::{Ctx, print_json};
use crate::commands::resume::{ResumeTrimmed, Resumption};
use crate::store::Budget;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "max_tokens",
        required_unless_present = "max_tokens"
    )]
    max_messages: Option<usize>,
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Keep secrets as stored instead of redacting them.
    #[arg(long)]
    no_redact: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.no_redact {
        super::keep_secrets();
    }
    let budget = match (a.max_messages, a.max_tokens) {
        (Some(n), _) => Budget::Messages(n),
        (None, Some(t)) => Budget::Tokens(t),
        (None, None) => anyhow::bail!("give --max-messages N or --max-tokens N"),
    };
    let Resumption {
        resumed: r,
        wire,
        repairs,
        redacted,
    } = ctx.exec(ResumeTrimmed {
        conversation: a.conv,
        budget,
        redact: !a.no_redact,
    })?;
    print_json(&json!({
        "messages": wire,
        "dropped_checkpoints": r.dropped_checkpoints,
        "ids": r.messages.iter().map(|m| m.id.clone()).collect::<Vec<_>>(),
        "trimmed": r.trimmed,
        "incomplete_tail": r.incomplete_tail,
        "repairs": repairs,
        "redacted": redacted,
    }))
}
