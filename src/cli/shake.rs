//! `cairn shake CONV [elide|images|all]`: the free rungs, forced.

use anyhow::Result;
use clap::ValueEnum;

use super::{Ctx, out};
use crate::commands::shake::Shake;
use crate::reclaim::{Applied, Strategy};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum What {
    Elide,
    Images,
    All,
}

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(value_enum, default_value = "all")]
    what: What,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    show(&ctx.exec(Shake {
        conversation: a.conv,
        elide: a.what != What::Images,
        images: a.what != What::Elide,
    })?)
}

/// What `/shake` did, as text.
pub fn show(done: &[(Strategy, Option<Applied>)]) -> Result<()> {
    for (s, a) in done {
        match a {
            Some(a) => out(&format!(
                "{}: {} items, {} -> {} tokens",
                s.name(),
                a.items,
                a.tokens_before,
                a.tokens_after
            ))?,
            None => out(&format!("{}: nothing to do", s.name()))?,
        }
    }
    Ok(())
}
