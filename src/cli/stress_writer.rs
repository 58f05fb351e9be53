//! `cairn stress-writer CONV [--turns N]` (hidden): appends generated turns, printing each turn's number once its
//! append returned. The crash tests kill it at random moments and check every acknowledged turn survived.

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use super::Ctx;
use crate::model::{Block, NewMessage, Role, ToolResultContent};

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    #[arg(long, default_value_t = u64::MAX)]
    turns: u64,
}

/// One generated turn: a prompt, parallel tool calls, their results, the reply. `k` is written into every
/// message so a checker can tell which turn a row belongs to.
pub fn generated_turn(k: u64) -> Vec<NewMessage> {
    let call = |i: u64| Block::ToolUse {
        id: format!("call_{k}_{i}"),
        name: "read".into(),
        input: json!({"path": format!("file_{k}_{i}.txt")}),
    };
    let result = |i: u64| Block::ToolResult {
        tool_use_id: format!("call_{k}_{i}"),
        content: ToolResultContent::Text(format!("turn {k} result {i}: {}", "x".repeat(200))),
        is_error: false,
    };
    vec![
        NewMessage::text(Role::User, format!("turn {k}: read two files")),
        NewMessage::new(Role::Assistant, vec![call(0), call(1)]),
        NewMessage::new(Role::User, vec![result(0), result(1)]),
        NewMessage::text(Role::Assistant, format!("turn {k} done")),
    ]
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let s = ctx.store()?;
    let mut stdout = std::io::stdout().lock();
    let start = s.active_path(&a.conv)?.len() as u64 / 4;
    for k in start..start.saturating_add(a.turns) {
        s.append_turn(&a.conv, &generated_turn(k))?;
        writeln!(stdout, "{k}")?;
        stdout.flush()?;
    }
    Ok(())
}
