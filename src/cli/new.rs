//! `cairn new [--title T]`: creates a conversation, prints its id.

use anyhow::Result;

use super::{Ctx, out, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    title: Option<String>,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    match ctx.run(Action::New { title: a.title })? {
        Outcome::Created(id) => out(&id),
        o => Err(unexpected(&o)),
    }
}
