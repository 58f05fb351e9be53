//! `cairn continue CONV [--at MSG] --in claude-code|pi|codex|gemini-cli|opencode [--home DIR] [--cwd DIR] [--no-redact] [--json]`:
//! writes the path as a new session where the harness looks for its sessions, and prints the one command that
//! resumes it.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::{Ctx, out, to_json};
use crate::commands::continue_in::ContinueIn;
use crate::export::agent::Harness;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    /// Continue from this message (default: the tip).
    #[arg(long, value_name = "MSG")]
    at: Option<String>,
    /// The harness to continue in.
    #[arg(long = "in", value_enum, value_name = "HARNESS")]
    harness: In,
    /// The home folder the harness keeps its sessions under (default: $HOME).
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// The working folder the session names (default: the one the source recorded).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Keep secrets (keys, tokens, passwords) as stored instead of redacting them.
    #[arg(long)]
    no_redact: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum In {
    ClaudeCode,
    Pi,
    Codex,
    GeminiCli,
    Opencode,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.no_redact {
        super::keep_secrets();
    }
    let Some(home) = a
        .home
        .map(crate::discover::Home::at)
        .or_else(crate::discover::Home::of_user)
    else {
        bail!("no home folder; pass --home DIR");
    };
    let harness = match a.harness {
        In::ClaudeCode => Harness::ClaudeCode,
        In::Pi => Harness::Pi,
        In::Codex => Harness::Codex,
        In::GeminiCli => Harness::GeminiCli,
        In::Opencode => Harness::Opencode,
    };
    let c = ctx.exec(ContinueIn {
        conversation: a.conv,
        at: a.at,
        harness,
        home,
        cwd: a.cwd,
        redact: !a.no_redact,
    })?;
    if a.json {
        return to_json(&c);
    }
    if c.redacted > 0 {
        eprintln!(
            "cairn: {} secret(s) redacted (--no-redact keeps them)",
            c.redacted
        );
    }
    for n in &c.notes {
        eprintln!("cairn: {n}");
    }
    eprintln!("cairn: wrote {}", c.file.display());
    out(&c.command)
}
