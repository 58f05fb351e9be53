//! `cairn send CONV TEXT [--provider P] [--model M] [--window N] [--json]`: continues a conversation with a
//! provider; the reply streams to stdout and is persisted with the prompt as one turn.

use std::io::Write;

use anyhow::Result;

use super::{Ctx, ProviderKind, out, to_json};
use crate::commands::Progress;
use crate::commands::send::SendPrompt;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    text: String,
    /// The provider (default: the settings file, else the one whose key is set, Anthropic first).
    #[arg(long, value_enum)]
    provider: Option<ProviderKind>,
    #[arg(long)]
    model: Option<String>,
    /// The model's context window in tokens (default: known per model family, else 200k).
    #[arg(long)]
    window: Option<u64>,
    #[arg(long)]
    json: bool,
}

/// The reply's text, as it streams.
struct Stream;

impl Progress for Stream {
    fn text(&self, chunk: &str) {
        let mut o = std::io::stdout().lock();
        // a reader that went away loses the stream, not the reply: it is stored when complete
        if o.write_all(super::terminal_safe(chunk).as_bytes())
            .and_then(|()| o.flush())
            .is_err()
        {}
    }
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let provider = crate::config::provider(ctx.settings()?, a.provider.map(|p| p.name()), a.model)?;
    let command = SendPrompt {
        conversation: a.conv,
        text: a.text,
        provider,
        window: a.window,
    };
    let sent = if a.json {
        ctx.exec(command)?
    } else {
        ctx.exec_with(command, &Stream)?
    };
    if a.json {
        return to_json(&sent);
    }
    out("")?;
    if sent.redacted > 0 {
        eprintln!(
            "cairn: {} secret(s) redacted from the history sent",
            sent.redacted
        );
    }
    if !sent.compacted.is_empty() {
        eprintln!(
            "cairn: the provider said too long; ran {} and tried again ({} attempts)",
            sent.compacted.join(", "),
            sent.attempts
        );
    }
    Ok(())
}
