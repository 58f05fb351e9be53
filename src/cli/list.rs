//! `cairn list [--json]`: the conversations.

use anyhow::Result;

use super::{Ctx, out, to_json, unexpected};
use crate::commands::{Action, Outcome};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let convs = match ctx.run(Action::List)? {
        Outcome::Conversations(c) => c,
        o => return Err(unexpected(&o)),
    };
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
