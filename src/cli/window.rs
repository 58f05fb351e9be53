//! `cairn` (no command) or `cairn window`: opens the explorer on the store. A store that does not exist yet is
//! created with the bundled demo session in it, so a first run shows a real tree at once.

use std::path::PathBuf;

use anyhow::{Context as _, Result};

use super::Ctx;

pub fn run(ctx: &mut Ctx) -> Result<()> {
    let (path, fresh) = open_for_window(ctx)?;
    open(path, fresh, None)
}

/// Opens (creating, with the demo session) the store for the window; the flag says it was just created.
pub fn open_for_window(ctx: &mut Ctx) -> Result<(PathBuf, bool)> {
    let path = ctx.db_path()?;
    let fresh = !path.exists();
    let store = ctx.store()?;
    if fresh {
        crate::demo::install(store)
            .with_context(|| format!("{}: installing the demo session", path.display()))?;
    }
    Ok((path, fresh))
}

/// A screenshot request from the command line.
#[cfg_attr(not(feature = "gui"), allow(dead_code))]
pub struct Shot {
    pub out: PathBuf,
    pub view: &'static str,
    pub conversation: Option<String>,
    /// The Diff view's other side (a conversation or a message id).
    pub compare_with: Option<String>,
    pub dark: Option<bool>,
    pub fit: bool,
}

#[cfg(feature = "gui")]
pub fn open(store: PathBuf, first_run: bool, screenshot: Option<Shot>) -> Result<()> {
    use crate::window::{Options, View};
    let options = match screenshot {
        None => Options {
            first_run,
            ..Options::default()
        },
        Some(s) => {
            // a view's key, or a staging of one (the transcript beside the tree, the pages read back, ...)
            let view = crate::views::of_shot(s.view).unwrap_or(View::Tree);
            Options {
                conversation: s.conversation,
                compare_with: s.compare_with,
                screenshot: Some((s.out, view, s.view)),
                dark: s.dark,
                first_run: false,
                fit: s.fit,
            }
        }
    };
    crate::window::run(store, options)
}

#[cfg(not(feature = "gui"))]
pub fn open(_store: PathBuf, _first_run: bool, _screenshot: Option<Shot>) -> Result<()> {
    anyhow::bail!(
        "this cairn was built without the window (feature \"gui\"); use a command, see --help"
    )
}
