//! A transcript's control characters never reach a terminal: `list`, `show`, `tree` and `search` print them
//! escaped (`\x1b`), and `--json` keeps them escaped the JSON way.

use std::process::Command;

use serde_json::{Value, json};

#[test]
fn escape_sequences_in_a_transcript_are_shown_escaped_never_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    // an OSC 52 clipboard write, a window title, a screen clear and a C1 CSI in the first prompt and the reply
    let evil = "look \u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m here";
    let lines = [
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:00Z", "message": {"role": "user", "content": evil}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:05Z",
               "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [{"type": "text", "text": evil}]}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let db = dir.path().join("t.db");
    let cairn = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        (o.stdout, o.stderr)
    };
    let (out, err) = cairn(&["import", file.to_str().unwrap()]);
    let conv = String::from_utf8(out.clone())
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let controls = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .chars()
            .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
            .count()
    };
    assert_eq!(controls(&out) + controls(&err), 0);
    for args in [
        vec!["list"],
        vec!["show", conv.as_str()],
        vec!["tree", conv.as_str()],
        vec!["search", "look"],
    ] {
        let (out, err) = cairn(&args);
        assert_eq!(
            controls(&out),
            0,
            "{args:?}: {}",
            String::from_utf8_lossy(&out)
        );
        assert_eq!(controls(&err), 0, "{args:?}");
        if args[0] == "show" {
            assert!(
                String::from_utf8_lossy(&out).contains("\\x1b]52;c;"),
                "{args:?}"
            );
        }
    }
    // JSON stays JSON: the text comes back whole when parsed
    let (out, _) = cairn(&["show", &conv, "--json"]);
    assert_eq!(controls(&out), 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert!(v.to_string().contains("pwned"));
    assert_eq!(v[0]["content"][0]["text"].as_str(), Some(evil));
}
