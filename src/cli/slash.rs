//! `cairn slash CONV "/compact snapshot"`: a slash command, parsed by the same code as the window's command bar
//! into the same action, and printed as the command it stands for would print it.

use anyhow::Result;

use super::{Ctx, out, out_raw, out_text, unexpected};
use crate::commands::Outcome;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    command: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let action = crate::slash::parse(&a.command)?.action(&a.conv);
    match ctx.run(action)? {
        Outcome::Compacted(c) => super::compact::show(&c),
        Outcome::Shaken(s) => super::shake::show(&s),
        Outcome::Context(r) => super::context::show(&r),
        Outcome::Text(t) => out_text(&t),
        Outcome::Forked(id) | Outcome::Rewound { digest: id } => out(&id),
        Outcome::Moved { tip, .. } => out(&tip),
        Outcome::Checkpointed(c) => out(&c.message),
        Outcome::Undone(op) => super::undo::show(&op),
        Outcome::Exported { out, exported } => {
            super::export::report(&exported, out.is_none());
            match out {
                None => out_raw(&exported.text),
                Some(_) => Ok(()),
            }
        }
        o => Err(unexpected(&o)),
    }
}
