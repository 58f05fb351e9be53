#![allow(dead_code)]
//! Helpers shared by the integration tests.

use cairn::model::{Block, NewMessage, Role, ToolResultContent};
use cairn::store::Store;
use serde_json::json;

pub fn user(t: &str) -> NewMessage {
    NewMessage::text(Role::User, t)
}

pub fn assistant(t: &str) -> NewMessage {
    NewMessage::text(Role::Assistant, t)
}

pub fn call(id: &str) -> Block {
    Block::ToolUse {
        id: id.into(),
        name: "Bash".into(),
        input: json!({"command": "ls"}),
    }
}

pub fn result(id: &str, text: &str) -> Block {
    Block::ToolResult {
        tool_use_id: id.into(),
        content: ToolResultContent::Text(text.into()),
        is_error: false,
    }
}

/// user, assistant calling `ids` in parallel, user with all results, final assistant.
pub fn tool_turn(prompt: &str, ids: &[&str]) -> Vec<NewMessage> {
    vec![
        user(prompt),
        NewMessage::new(Role::Assistant, ids.iter().map(|i| call(i)).collect()),
        NewMessage::new(Role::User, ids.iter().map(|i| result(i, "out")).collect()),
        assistant("done"),
    ]
}

pub fn simple_turn(prompt: &str, reply: &str) -> Vec<NewMessage> {
    vec![user(prompt), assistant(reply)]
}

pub fn mem() -> Store {
    Store::open_in_memory().expect("in-memory store")
}

/// (messages stored, tip, operations) of a conversation: what a refused write must leave unchanged.
pub fn fingerprint(s: &Store, conv: &str) -> (u64, Option<String>, usize) {
    let c = s.conversation(conv).unwrap();
    (c.messages, c.tip, s.operations(conv).unwrap().len())
}
