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

/// The thinking blocks of an Anthropic body, and how many of them carry Anthropic's signature.
fn thinking_in(body: &Value) -> (usize, usize) {
    let blocks: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "thinking")
        .collect();
    let signed = blocks
        .iter()
        .filter(|b| cairn::export::anthropic_signature(b["signature"].as_str().unwrap()))
        .count();
    (blocks.len(), signed)
}

#[test]
fn only_thinking_anthropic_signed_reaches_anthropic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    // Claude Code's thinking, signed by Anthropic: sent back as it came
    let cc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-rewind-fork-2.1.42.jsonl");
    let out = run(&db, &["import", cc.to_str().unwrap()]);
    let conv = out.split_whitespace().next().unwrap().to_string();
    let body: Value =
        serde_json::from_str(&run(&db, &["export", &conv, "--format", "anthropic"])).unwrap();
    let (all, signed) = thinking_in(&body);
    assert!(
        all > 0 && signed == all,
        "{all} thinking block(s), {signed} signed"
    );
    // opencode through GitHub Copilot: Claude's reasoning, but signed by Copilot (its `reasoningOpaque`), which the
    // Messages API refuses: left out of the body, the request stands
    let oc = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../shared/samples/opencode/opencode-1.4.3-export-auto-compaction-copilot-sonnet-4.6.json",
    );
    if !oc.exists() {
        eprintln!("skipped: {} is not beside the repository", oc.display());
        return;
    }
    let out = run(&db, &["import", oc.to_str().unwrap()]);
    let conv = out.split_whitespace().next().unwrap().to_string();
    let shown: Value = serde_json::from_str(&run(&db, &["show", &conv, "--json"])).unwrap();
    let opaque = shown
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| {
            b["type"] == "thinking" && b["signature"].as_str().is_some_and(|s| !s.is_empty())
        })
        .count();
    assert!(
        opaque >= 10,
        "{opaque} thinking block(s) with Copilot's reasoning"
    );
    let body: Value =
        serde_json::from_str(&run(&db, &["export", &conv, "--format", "anthropic"])).unwrap();
    assert_eq!(thinking_in(&body), (0, 0));
    assert!(!cairn::export::anthropic_signature(
        "gAAAAABpZ2FfZm9yX29wZW5haQ=="
    ));
    assert!(!cairn::export::anthropic_signature(
        r#"{"type":"reasoning","id":"rs_1"}"#
    ));
}
