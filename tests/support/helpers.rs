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

/// What one turn of [`tool_session`] reads: the result's text, whether it is an error, an image sent beside it.
pub type ReadResult = (String, bool, Option<Vec<u8>>);

/// A conversation of a task prompt and `turns` tool turns ("step i: read module i", a `Read` call, its result, a
/// closing reply); `result(i)` gives each result.
pub fn tool_session(s: &mut Store, turns: usize, result: &dyn Fn(usize) -> ReadResult) -> String {
    let c = s.create_conversation(Some("long")).unwrap();
    s.append_turn(
        &c,
        &[
            NewMessage::text(
                Role::User,
                "Task: port the parser. Constraint: no new dependencies.",
            ),
            NewMessage::text(Role::Assistant, "Understood."),
        ],
    )
    .unwrap();
    for i in 0..turns {
        let id = format!("t{i}");
        let (text, is_error, image) = result(i);
        let mut results = vec![Block::ToolResult {
            tool_use_id: id.clone(),
            content: ToolResultContent::Text(text),
            is_error,
        }];
        if let Some(bytes) = image {
            results.push(Block::Image {
                media_type: "image/png".into(),
                data: cairn::model::ImageData::Bytes(bytes),
            });
        }
        s.append_turn(
            &c,
            &[
                NewMessage::text(Role::User, format!("step {i}: read module {i}")),
                NewMessage::new(
                    Role::Assistant,
                    vec![
                        Block::text(format!("Reading module {i}.")),
                        Block::ToolUse {
                            id: id.clone(),
                            name: "Read".into(),
                            input: json!({"path": format!("src/m{i}.rs")}),
                        },
                    ],
                ),
                NewMessage::new(Role::User, results),
                NewMessage::text(
                    Role::Assistant,
                    format!("Module {i} uses the old lexer; noted."),
                ),
            ],
        )
        .unwrap();
    }
    c
}

/// A command on the PATH (`command -v`), if there is one.
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !p.is_empty()).then(|| std::path::PathBuf::from(p))
}

/// Debian's Chromium, or another Chrome, if the machine has one.
pub fn chromium() -> Option<std::path::PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| on_path(b))
}

/// A session a store holds from an older reader, imported again as a newer reader reads it: `old` is written to
/// `file` and imported, then `new` in its place. The second import must add the new reading and retire the former
/// one's replies. Returns the `figures` of the store before and after the second import and of a store `new` was
/// imported into fresh (which the second must equal), and the store.
pub fn read_again<T>(
    file: &std::path::Path,
    old: &[u8],
    new: &[u8],
    figures: impl Fn(&mut Store) -> T,
) -> (T, T, T, Store) {
    let import = |s: &mut Store| {
        let o = cairn::import::import_file(s, file, None);
        assert!(o.error.is_none(), "{:?}", o.error);
        o
    };
    let mut s = Store::open_in_memory().unwrap();
    std::fs::write(file, old).unwrap();
    assert_eq!(import(&mut s).status, "new");
    let before = figures(&mut s);
    std::fs::write(file, new).unwrap();
    let again = import(&mut s);
    assert_eq!(again.status, "grown");
    assert!(
        again
            .report
            .notes
            .iter()
            .any(|n| n.contains("no longer count")),
        "{:?}",
        again.report.notes
    );
    let after = figures(&mut s);
    let mut fresh = Store::open_in_memory().unwrap();
    assert_eq!(import(&mut fresh).status, "new");
    (before, after, figures(&mut fresh), s)
}

/// Runs `action` on `s` as the CLI would, with the default settings.
pub fn run_action(s: &mut Store, action: cairn::commands::Action) -> cairn::commands::Outcome {
    cairn::commands::run(
        s,
        &cairn::reclaim::Settings::default(),
        action,
        &cairn::commands::Quiet,
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap()
}

/// Imports `path` through the commands layer (`cairn import`), asserting it imported.
pub fn import_one(s: &mut Store, path: std::path::PathBuf) -> cairn::import::FileOutcome {
    let cairn::commands::Outcome::Imported(mut files) = run_action(
        s,
        cairn::commands::Action::Import {
            paths: vec![path],
            format: None,
        },
    ) else {
        panic!("not an import")
    };
    let f = files.remove(0);
    assert!(f.error.is_none(), "{:?}", f.error);
    f
}

/// `cairn compact CONV --strategy S --force`: one rung, whatever the threshold, over the usual middle.
pub fn forced_compaction(
    conversation: &str,
    strategy: cairn::reclaim::Strategy,
) -> cairn::commands::Action {
    cairn::commands::Action::Compact {
        conversation: conversation.to_string(),
        strategy: Some(strategy),
        force: true,
        target: None,
        protect: None,
        instructions: None,
        provider: None,
        from: None,
        to: None,
    }
}

/// What `cairn context` says the model sees of `conversation` now.
pub fn context_now(s: &mut Store, conversation: &str) -> cairn::reclaim::report::ContextReport {
    let cairn::commands::Outcome::Context(r) = run_action(
        s,
        cairn::commands::Action::Context {
            conversation: conversation.to_string(),
            model: None,
        },
    ) else {
        panic!("not a context")
    };
    *r
}
