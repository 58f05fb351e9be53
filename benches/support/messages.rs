//! The generated messages the benchmarks store: a realistic mix of prompts, replies, tool calls and tool
//! results of a few hundred bytes to a few KB, cycling every four messages.

use cairn::model::{Block, NewMessage, Role, ToolResultContent};
use serde_json::json;

pub fn message(i: usize) -> NewMessage {
    let prose = "The function reads the configuration, validates each entry and reports the first error it finds. ";
    match i % 4 {
        0 => NewMessage::text(Role::User, format!("step {i}: {}", prose.repeat(2))),
        1 => NewMessage::new(
            Role::Assistant,
            vec![
                Block::text(prose),
                Block::ToolUse {
                    id: format!("toolu_{i:08}"),
                    name: "Read".into(),
                    input: json!({"file_path": format!("/src/module_{i}.rs")}),
                },
            ],
        ),
        2 => NewMessage::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: format!("toolu_{:08}", i - 1),
                content: ToolResultContent::Text(format!("fn f{i}() {{}}\n").repeat(40)),
                is_error: false,
            }],
        ),
        _ => NewMessage::text(Role::Assistant, prose.repeat(3)),
    }
}
