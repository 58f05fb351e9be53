//! Provider request bodies the APIs accept: no text block empty or only whitespace (a real Claude Code session
//! carries "\n\n" text blocks between tool calls), on every Claude Code and pi fixture.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn run(db: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn no_empty_or_whitespace_text_block_reaches_a_provider() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    for f in [
        "claude-code/cc-1.0.98-inline-sidechains-task-fanout.jsonl",
        "claude-code/cc-2.0.5-image-paste.jsonl",
        "claude-code/cc-rewind-fork-2.1.42.jsonl",
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "pi/pi-v1-large-session-thinking-level-changes.jsonl",
    ] {
        let out = run(&db, &["import", fixtures.join(f).to_str().unwrap()]);
        let conv = out.split_whitespace().next().unwrap().to_string();
        let body: Value =
            serde_json::from_str(&run(&db, &["export", &conv, "--format", "anthropic"])).unwrap();
        let mut texts = 0;
        for m in body["messages"].as_array().unwrap() {
            assert!(
                !m["content"].as_array().unwrap().is_empty(),
                "{f}: an empty message"
            );
            for b in m["content"].as_array().unwrap() {
                if b["type"] == "text" {
                    texts += 1;
                    assert!(!b["text"].as_str().unwrap().trim().is_empty(), "{f}: {b}");
                }
            }
        }
        assert!(texts > 0, "{f}");
    }
}
