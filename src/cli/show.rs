//! `cairn show CONV [--json]`: the active path, root to tip (JSON: Anthropic shape plus `id`, `parent`).

use anyhow::Result;
use serde_json::Value;

use super::{Ctx, out, print_json};
use crate::commands::show::ShowPath;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long)]
    json: bool,
    /// Show secrets as stored instead of redacting them.
    #[arg(long)]
    no_redact: bool,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.no_redact {
        super::keep_secrets();
    }
    let shown = ctx.exec(ShowPath {
        conversation: a.conv,
        redact: !a.no_redact,
    })?;
    let (path, wire) = (shown.path, shown.wire);
    if a.json {
        return print_json(&Value::Array(wire));
    }
    for m in &path {
        out(&format!("── {} {}", m.role, m.id))?;
        out(&text(&m.content))?;
    }
    Ok(())
}

/// Plain text of blocks, tool ids and errors marked.
fn text(blocks: &[crate::model::Block]) -> String {
    use crate::model::Block;
    blocks
        .iter()
        .map(|b| match b {
            Block::ToolUse { id, name, input } => format!("[tool_use {name} {id}] {input}"),
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => format!(
                "[tool_result {tool_use_id}{}] {}",
                if *is_error { " error" } else { "" },
                content.text()
            ),
            other => crate::model::plain_text(std::slice::from_ref(other)),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
