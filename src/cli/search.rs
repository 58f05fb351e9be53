//! `cairn search QUERY [--conversation ID] [--role R] [--tool NAME] [--errors] [--since DATE] [--limit N] [--json]`:
//! full-text search over every conversation and branch (FTS5 syntax: words, "phrases", prefix*, AND/OR/NOT).

use anyhow::{Result, anyhow};

use super::{Ctx, out, to_json};
use crate::commands::search::SearchStore;
use crate::store::SearchQuery;

#[derive(clap::Args)]
pub struct Args {
    /// Words, "phrases", prefix*, AND / OR / NOT.
    query: String,
    /// Only this conversation.
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// Only prompts (user), replies (assistant) or tool results (tool).
    #[arg(long, value_enum)]
    role: Option<Role>,
    /// Only messages that call this tool or hold its results.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Only messages holding a failed tool result.
    #[arg(long)]
    errors: bool,
    /// Only messages written on or after this date (2026-02-01, or an RFC 3339 time).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    #[arg(long, default_value_t = 20)]
    limit: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Role {
    User,
    Assistant,
    Tool,
    System,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let since = match &a.since {
        Some(s) => Some(crate::search::parse_since(s).ok_or_else(|| {
            anyhow!("--since {s:?}: not a date (2026-02-01 or 2026-02-01T10:00:00Z)")
        })?),
        None => None,
    };
    let role = a.role.map(|r| {
        match r {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
        .to_string()
    });
    let r = ctx.exec(SearchStore(SearchQuery {
        text: a.query,
        conversation: a.conversation,
        role,
        tool: a.tool,
        errors: a.errors,
        since,
        limit: a.limit,
    }))?;
    if a.json {
        return to_json(&r);
    }
    for h in &r.hits {
        let short: String = h.message.chars().take(8).collect();
        let title: String = h.title.as_deref().unwrap_or("").chars().take(40).collect();
        out(&format!(
            "{}  {short}  {:<9} {}  {}  {}",
            h.conversation,
            h.role,
            if h.on_active_path { "path" } else { "side" },
            h.timestamp.as_deref().unwrap_or("-"),
            title
        ))?;
        out(&format!("    {}", h.snippet))?;
    }
    out(&format!(
        "{} of {} matching messages",
        r.hits.len(),
        r.total
    ))
}
