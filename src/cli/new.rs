//! `cairn new [--title T]`: creates a conversation, prints its id.

use anyhow::Result;

use super::{Ctx, out};
use crate::commands::new::NewConversation;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    title: Option<String>,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    out(&ctx.exec(NewConversation { title: a.title })?)
}
