//! `cairn screenshot --view V --out FILE [--conversation ID] [--compare-with ID] [--theme T] [--fit]`: opens the
//! real window on a view, waits for its background work, saves a PNG of the viewport and closes.

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use super::Ctx;
use super::window::{Shot, open, open_for_window};

/// A screenshot's view on the command line, named as [`crate::views::SHOTS`] names them (one list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ShotName(&'static str);

impl ShotName {
    const VARIANTS: [ShotName; crate::views::SHOTS.len()] = {
        let mut v = [ShotName(""); crate::views::SHOTS.len()];
        let mut i = 0;
        while i < v.len() {
            v[i] = ShotName(crate::views::SHOTS[i]);
            i += 1;
        }
        v
    };
}

impl ValueEnum for ShotName {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let v = clap::builder::PossibleValue::new(self.0);
        Some(
            match crate::views::STAGINGS.iter().find(|s| s.0 == self.0) {
                Some((_, _, about)) => v.help(*about),
                None => v,
            },
        )
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
    view: ShotName,
    /// The conversation to show (default: the newest that is not a fork).
    #[arg(long)]
    conversation: Option<String>,
    /// What the Diff view compares it with: a conversation id or a message id (default: a fork of it, else
    /// another tip of its tree).
    #[arg(long)]
    compare_with: Option<String>,
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
            view: a.view.0,
            conversation,
            compare_with: a.compare_with,
            dark: a.theme.map(|t| t == Theme::Dark),
            fit: a.fit,
        }),
    )
}
