//! `cairn import PATH... [--format F] [--json]`: imports transcripts; per file the new conversation(s), what was
//! read and what was not a message. A file already imported is skipped; a refused one fails the command (exit 2)
//! after the others were imported. A file found in a folder that holds no session (a harness's settings,
//! credentials or caches: `cairn import ~/.claude`) is skipped and counted in one line; named, it is refused.

use anyhow::{Result, bail};

use super::{Ctx, ImportFormat, out, to_json};
use crate::commands::Progress;
use crate::commands::import::ImportFiles;
use crate::import::FileOutcome;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    paths: Vec<std::path::PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    format: ImportFormat,
    #[arg(long)]
    json: bool,
}

/// "[k/n] file" on stderr when there are several files.
struct Files;

impl Progress for Files {
    fn step(&self, done: usize, total: usize, what: &str) {
        if total > 1 && done < total {
            eprintln!("[{}/{total}] {}", done + 1, super::terminal_safe(what));
        }
    }
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    import_paths(ctx, a.paths, a.format.format(), a.json)
}

/// Imports `paths` (the command's files, or the sessions `discover --import` found) and reports each file.
pub(super) fn import_paths(
    ctx: &mut Ctx,
    paths: Vec<std::path::PathBuf>,
    format: Option<crate::formats::Format>,
    json: bool,
) -> Result<()> {
    let command = ImportFiles { paths, format };
    let outcomes = if json {
        ctx.exec(command)?
    } else {
        ctx.exec_with(command, &Files)?
    };
    if json {
        to_json(&outcomes)?;
    } else {
        for o in &outcomes {
            show(o)?;
        }
        let skipped: Vec<&FileOutcome> = outcomes.iter().filter(|o| o.is_skipped()).collect();
        if let Some(first) = skipped.first() {
            out(&format!(
                "skipped {} {} in the folders that {} no session (a harness's settings, caches or a session not \
                 yet written to), first: {}",
                skipped.len(),
                if skipped.len() == 1 { "file" } else { "files" },
                if skipped.len() == 1 { "holds" } else { "hold" },
                super::terminal_safe(&first.file.display().to_string())
            ))?;
        }
    }
    let refused: Vec<&FileOutcome> = outcomes.iter().filter(|o| o.is_refused()).collect();
    match refused.as_slice() {
        [] => Ok(()),
        [one] => bail!("{}", one.error.clone().unwrap_or_default()),
        many => bail!(
            "{} files refused, first: {}",
            many.len(),
            many[0].error.clone().unwrap_or_default()
        ),
    }
}

fn show(o: &FileOutcome) -> Result<()> {
    match (&o.error, &o.duplicate_of) {
        (Some(e), Some(_)) => out(&format!("skipped {e}")),
        // refused (named at the end) or skipped (counted at the end)
        (Some(_), None) => Ok(()),
        (None, _) => {
            let r = &o.report;
            let status = match o.status {
                "grown" => format!("grown (+{})  ", o.added),
                "unchanged" => "unchanged  ".to_string(),
                _ => String::new(),
            };
            out(&format!(
                "{status}{}  {} ({}): {} messages, {} branches, {} tool pairs, {} images",
                o.conversations.first().map(String::as_str).unwrap_or("-"),
                o.file.display(),
                o.format.map(|f| f.name()).unwrap_or("?"),
                r.messages,
                r.branches,
                r.tool_pairs,
                r.images
            ))?;
            for (what, n) in &r.skipped {
                out(&format!("    not a message: {n} {what}"))?;
            }
            for n in &r.notes {
                out(&format!("    note: {n}"))?;
            }
            for (id, lr) in o.conversations.iter().skip(1).zip(&o.linked) {
                out(&format!(
                    "    {id}  linked (subagent): {} messages, {} branches, {} tool pairs",
                    lr.messages, lr.branches, lr.tool_pairs
                ))?;
            }
            Ok(())
        }
    }
}
