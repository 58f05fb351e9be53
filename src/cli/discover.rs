//! `cairn discover [--home DIR] [--json] [--import]`: the sessions other harnesses keep in their standard folders
//! (reading the file system only), or with `--import` every one of them imported: new sessions added, grown ones
//! brought up to date, unchanged ones left (the import of `cairn import`, so a daily run counts nothing twice).

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
    /// Import every session found (new ones added, grown ones appended to, unchanged ones left).
    #[arg(long)]
    import: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    // a folder given is taken as is; else this user's, where their harnesses' settings moved them
    let Some(home) = a
        .home
        .map(crate::discover::Home::at)
        .or_else(crate::discover::Home::of_user)
    else {
        bail!("no home folder; pass --home DIR");
    };
    let found = crate::discover::discover_in(&home);
    if a.import {
        let paths = found.into_iter().map(|f| f.path).collect();
        return super::import::import_paths(ctx, paths, None, a.json);
    }
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
