//! `cairn list [--json]`: the conversations.

use anyhow::Result;

use super::{Ctx, out, to_json};
use crate::commands::list::ListConversations;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let convs = ctx.exec(ListConversations)?;
    if a.json {
        return to_json(&convs);
    }
    out(&format!(
        "{:<16}  {:>8}  {:<16}  TITLE",
        "ID", "MESSAGES", "TIP"
    ))?;
    for c in convs {
        out(&format!(
            "{:<16}  {:>8}  {:<16}  {}",
            c.id,
            c.messages,
            c.tip.as_deref().unwrap_or("-"),
            c.title.as_deref().unwrap_or("")
        ))?;
    }
    Ok(())
}
