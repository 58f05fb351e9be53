//! A compaction never severs the history: a Claude Code `compact_boundary` whose `logicalParentUuid` names a record
//! the file does not hold follows the record before it on the main chain, so the session keeps one root and its
//! active path holds the whole session, and the import report says so.

use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::reclaim::Settings;
use cairn::store::Store;

#[test]
fn a_missing_logical_parent_links_to_the_record_before_it() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-compact-boundary.jsonl");
    let text = std::fs::read_to_string(&fixture).unwrap();
    assert!(text.contains("\"logicalParentUuid\": \"a5\""));
    // as Claude Code 2.1.20 wrote it: the boundary names a record that is no longer in the file
    let cut = text.replace(
        "\"logicalParentUuid\": \"a5\"",
        "\"logicalParentUuid\": \"gone-0001\"",
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    std::fs::write(&f, cut).unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let Outcome::Imported(files) = commands::run(
        &mut s,
        &Settings::default(),
        Action::Import {
            paths: vec![f],
            format: None,
        },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap() else {
        panic!()
    };
    let conv = files[0].conversations[0].clone();
    assert!(
        files[0]
            .report
            .notes
            .iter()
            .any(|n| n.contains("logical parent gone-0001") && n.contains("follows line")),
        "{:?}",
        files[0].report.notes
    );
    let heads = s.heads(&conv).unwrap();
    let roots = heads.iter().filter(|h| h.depth == 0).count();
    assert_eq!(roots, 1);
    let path = s.active_path(&conv).unwrap();
    assert_eq!(
        path.len(),
        heads.len(),
        "the active path holds the whole session"
    );
    assert!(path.first().unwrap().content.iter().any(|b| matches!(b,
        cairn::model::Block::Text { text } if text.starts_with("step 0"))));
}

/// A session whose early tool results Claude Code cleared with a microcompact (or did not, `micro` false).
fn microcompacted(dir: &std::path::Path, micro: bool) -> std::path::PathBuf {
    use serde_json::json;
    let big = "fn parse(input: &str) -> Result<Ast, Error> { todo!() }\n".repeat(400);
    let mut lines = Vec::new();
    let mut parent = serde_json::Value::Null;
    for i in 0..3 {
        let (u, a, r) = (format!("u{i}"), format!("a{i}"), format!("r{i}"));
        lines.push(json!({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": "s",
            "timestamp": format!("2026-11-02T10:0{i}:00Z"), "message": {"role": "user", "content": format!("read file {i}")}}));
        lines.push(json!({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": "s",
            "timestamp": format!("2026-11-02T10:0{i}:01Z"), "message": {"id": format!("m{i}"), "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Read",
            "input": {"file_path": format!("f{i}.rs")}}]}}));
        lines.push(
            json!({"type": "user", "uuid": r, "parentUuid": a, "sessionId": "s",
            "timestamp": format!("2026-11-02T10:0{i}:02Z"), "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": big}]}}),
        );
        parent = serde_json::Value::String(r);
    }
    if micro {
        lines.push(json!({"type": "system", "subtype": "microcompact_boundary", "uuid": "mc", "parentUuid": parent,
            "sessionId": "s", "timestamp": "2026-11-02T10:05:00Z", "content": "Context microcompacted",
            "microcompactMetadata": {"trigger": "auto", "preTokens": 30000, "tokensSaved": 20000,
                                     "compactedToolIds": ["t0", "t1"]}}));
        parent = serde_json::Value::String("mc".into());
    }
    lines.push(
        json!({"type": "user", "uuid": "u9", "parentUuid": parent, "sessionId": "s",
        "timestamp": "2026-11-02T10:06:00Z", "message": {"role": "user", "content": "and now?"}}),
    );
    let f = dir.join(if micro { "micro.jsonl" } else { "plain.jsonl" });
    let text: Vec<String> = lines.iter().map(serde_json::Value::to_string).collect();
    std::fs::write(&f, text.join("\n") + "\n").unwrap();
    f
}

#[test]
fn a_microcompact_clears_the_results_it_names_from_the_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let mut tool_results = Vec::new();
    for micro in [false, true] {
        let f = microcompacted(dir.path(), micro);
        let Outcome::Imported(files) = commands::run(
            &mut s,
            &Settings::default(),
            Action::Import {
                paths: vec![f],
                format: None,
            },
            &Quiet,
            &AtomicBool::new(false),
        )
        .unwrap() else {
            panic!()
        };
        assert!(files[0].error.is_none(), "{:?}", files[0].error);
        if micro {
            assert!(
                files[0]
                    .report
                    .notes
                    .iter()
                    .any(|n| n.contains("microcompact cleared 2")),
                "{:?}",
                files[0].report.notes
            );
        }
        let conv = files[0].conversations[0].clone();
        let Outcome::Context(r) = commands::run(
            &mut s,
            &Settings::default(),
            Action::Context {
                conversation: conv,
                model: None,
            },
            &Quiet,
            &AtomicBool::new(false),
        )
        .unwrap() else {
            panic!()
        };
        tool_results.push(r.messages.tool_results);
    }
    // two of the three results cleared: what the model sees of tool output falls by about two thirds
    assert!(tool_results[1] * 2 < tool_results[0], "{tool_results:?}");
    assert!(tool_results[1] > 0, "the third result stays");
}

/// The compaction fixture with what its boundary says it kept of the history before it: the last two turns
/// (`u4` to `a5`) named one by one (`preservedMessages`), as a segment (`preservedSegment`, which Claude Code may
/// write alone), or nothing.
fn preserving(dir: &std::path::Path, how: &str) -> std::path::PathBuf {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-compact-boundary.jsonl");
    let meta = r#""compactMetadata": {"trigger": "auto", "preTokens": 25573, "postTokens": 1500"#;
    let text = std::fs::read_to_string(&fixture).unwrap();
    assert!(text.contains(meta));
    let kept = match how {
        "messages" => {
            r#", "preservedMessages": {"anchorUuid": "s1", "uuids": ["u4", "a4", "u5", "a5"]}"#
        }
        "segment" => {
            r#", "preservedSegment": {"headUuid": "u4", "anchorUuid": "s1", "tailUuid": "a5"}"#
        }
        _ => "",
    };
    let f = dir.join(format!("{how}.jsonl"));
    std::fs::write(&f, text.replace(meta, &format!("{meta}{kept}"))).unwrap();
    f
}

#[test]
fn a_compaction_keeps_the_messages_it_preserved_named_one_by_one_or_as_a_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let mut seen = Vec::new();
    for how in ["none", "messages", "segment"] {
        let Outcome::Imported(files) = commands::run(
            &mut s,
            &Settings::default(),
            Action::Import {
                paths: vec![preserving(dir.path(), how)],
                format: None,
            },
            &Quiet,
            &AtomicBool::new(false),
        )
        .unwrap() else {
            panic!()
        };
        assert!(files[0].error.is_none(), "{how}: {:?}", files[0].error);
        let Outcome::Context(r) = commands::run(
            &mut s,
            &Settings::default(),
            Action::Context {
                conversation: files[0].conversations[0].clone(),
                model: None,
            },
            &Quiet,
            &AtomicBool::new(false),
        )
        .unwrap() else {
            panic!()
        };
        let h = r.harness_compaction.as_ref().expect(how);
        seen.push((h.kept, r.messages_sent, r.messages.text));
        // anchored on the summary, the turns kept come after it, as Claude Code relinks them on load: the summary
        // first, then step 4 and step 5, then step 6
        let sent = cairn::reclaim::assemble::assemble(&s, &files[0].conversations[0])
            .unwrap()
            .messages;
        let firsts: Vec<String> = sent
            .iter()
            .map(|m| {
                cairn::model::plain_text(&m.content)
                    .chars()
                    .take(7)
                    .collect()
            })
            .collect();
        let expected: &[&str] = match how {
            "none" => &["This se", "step 6:", "done wi"],
            _ => &[
                "This se", "step 4:", "done wi", "step 5:", "done wi", "step 6:",
            ],
        };
        assert_eq!(&firsts[..expected.len()], expected, "{how}: {firsts:?}");
    }
    assert_eq!(seen[0].0, 0);
    assert_eq!(seen[1].0, 4, "{seen:?}");
    assert_eq!(seen[1].1, seen[0].1 + 4);
    assert!(seen[1].2 > seen[0].2);
    // the segment keeps what the list names
    assert_eq!(seen[2], seen[1]);
}
