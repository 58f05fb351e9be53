//! `cairn export CONV [--at MSG] --format F [--out FILE] [--no-redact] [--theme light|dark|auto]`: writes a
//! conversation out.

use std::path::PathBuf;

use anyhow::Result;

use super::{Ctx, ExportFormat, out_raw};
use crate::commands::export::ExportPath;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    /// End the exported path at this message (default: the tip).
    #[arg(long, value_name = "MSG")]
    at: Option<String>,
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Markdown/HTML: leave tool results out.
    #[arg(long)]
    no_tool_results: bool,
    /// Markdown/HTML: leave thinking out.
    #[arg(long)]
    no_thinking: bool,
    /// Keep secrets (keys, tokens, passwords) as stored instead of redacting them.
    #[arg(long)]
    no_redact: bool,
    /// HTML: colours (auto follows the reader's system setting).
    #[arg(long, value_enum, default_value = "auto")]
    theme: Theme,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Theme {
    Auto,
    Light,
    Dark,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.no_redact {
        super::keep_secrets();
    }
    let to_stdout = a.out.is_none();
    let exported = ctx
        .exec(ExportPath {
            conversation: a.conv,
            at: a.at,
            format: a.format.format(),
            options: crate::export::Options {
                tool_results: !a.no_tool_results,
                thinking: !a.no_thinking,
                redact: !a.no_redact,
                theme: match a.theme {
                    Theme::Auto => crate::export::Theme::Auto,
                    Theme::Light => crate::export::Theme::Light,
                    Theme::Dark => crate::export::Theme::Dark,
                },
            },
            out: a.out,
        })?
        .exported;
    report(&exported, to_stdout);
    if to_stdout {
        out_raw(&exported.text)
    } else {
        Ok(())
    }
}

/// What an export changed, on stderr: secrets redacted, repairs a provider body needed.
pub fn report(e: &crate::export::Exported, to_stdout: bool) {
    if e.redacted > 0 {
        eprintln!(
            "cairn: {} secret(s) redacted (--no-redact keeps them)",
            e.redacted
        );
    }
    if let Some(r) = e.repairs.describe() {
        eprintln!("cairn: repaired for the provider: {r}");
    }
    if let Some(a) = &e.agent {
        for n in &a.notes {
            eprintln!("cairn: {n}");
        }
        if !a.beside.is_empty() && to_stdout {
            eprintln!(
                "cairn: {} subagent file(s) are written only with --out (beside the session)",
                a.beside.len()
            );
        }
    }
}
