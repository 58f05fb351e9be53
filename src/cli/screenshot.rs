//! `cairn screenshot --view V --out FILE [--conversation ID] [--theme T] [--fit]`: opens the real window on a
//! view, waits for its background work, saves a PNG of the viewport and closes.

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use super::Ctx;
use super::window::{Shot, open, open_for_window};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum View {
    Tree,
    Transcript,
    Snapshots,
    Compare,
    Context,
    Operations,
    Search,
    Stats,
    Models,
    Diff,
    Timeline,
    Readback,
    Shapes,
    /// The tree view with the dialog of a session just written for Claude Code (into a folder under the
    /// temporary directory, not the home folder).
    Continue,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::Tree => "tree",
            View::Transcript => "transcript",
            View::Snapshots => "snapshots",
            View::Compare => "compare",
            View::Context => "context",
            View::Operations => "operations",
            View::Search => "search",
            View::Stats => "stats",
            View::Models => "models",
            View::Diff => "diff",
            View::Timeline => "timeline",
            View::Readback => "readback",
            View::Shapes => "shapes",
            View::Continue => "continue",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Theme {
    Light,
    Dark,
}

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_enum, default_value = "tree")]
    view: View,
    /// The conversation to show (default: the newest that is not a fork).
    #[arg(long)]
    conversation: Option<String>,
    /// light or dark (default: the system's).
    #[arg(long, value_enum)]
    theme: Option<Theme>,
    /// The tree view zoomed out to show the whole tree, however small.
    #[arg(long)]
    fit: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let (path, _) = open_for_window(ctx)?;
    let conversation = match a.conversation {
        Some(c) => Some(ctx.store()?.resolve_conversation(&c)?),
        None => None,
    };
    open(
        path,
        false,
        Some(Shot {
            out: a.out,
            view: a.view.name(),
            conversation,
            dark: a.theme.map(|t| t == Theme::Dark),
            fit: a.fit,
        }),
    )
}
