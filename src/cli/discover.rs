//! `cairn discover [--home DIR] [--json]`: the Claude Code, pi and Codex sessions in their standard folders. It
//! reads the file system only (no store is opened).

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::{Ctx, out, to_json};

#[derive(clap::Args)]
pub struct Args {
    /// The home folder to look under (default: $HOME).
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub fn run(_ctx: &mut Ctx, a: Args) -> Result<()> {
    let Some(home) = a.home.or_else(crate::discover::home) else {
        bail!("no home folder; pass --home DIR");
    };
    let found = crate::discover::discover(&home);
    if a.json {
        return to_json(&found);
    }
    for f in found {
        out(&format!(
            "{:<12} {:>10} bytes {:>6} messages  {}",
            f.format.name(),
            f.size,
            f.messages,
            f.path.display()
        ))?;
    }
    Ok(())
}
