//! Nothing wrong gets in, nothing wrong goes out: each finding of the hostile-input campaign, as a test that failed
//! before it was fixed.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::export::{ExportFormat, Options};
use cairn::reclaim::Settings;
use cairn::store::Store;
use serde_json::{Value, json};

fn run(s: &mut Store, a: Action) -> Result<Outcome, commands::CommandError> {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false))
}

fn write(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
    let p = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&p, text).unwrap();
    p
}

fn import(s: &mut Store, p: &Path) -> cairn::import::FileOutcome {
    match run(
        s,
        Action::Import {
            paths: vec![p.to_path_buf()],
            format: None,
        },
    )
    .unwrap()
    {
        Outcome::Imported(mut o) => o.remove(0),
        _ => panic!("import"),
    }
}

/// Every read of a conversation works: show, tree, context, each export.
fn every_read_works(s: &mut Store, conv: &str) {
    for a in [
        Action::Show {
            conversation: conv.into(),
            redact: true,
        },
        Action::Tree {
            conversation: conv.into(),
        },
        Action::Context {
            conversation: conv.into(),
            model: None,
        },
    ] {
        run(s, a).unwrap_or_else(|e| panic!("{conv}: {e}"));
    }
    for f in [
        ExportFormat::Jsonl,
        ExportFormat::Markdown,
        ExportFormat::Html,
        ExportFormat::Anthropic,
        ExportFormat::Openai,
    ] {
        cairn::export::export(s, conv, None, f, Options::default())
            .unwrap_or_else(|e| panic!("{f:?}: {e}"));
    }
    match run(s, Action::Check).unwrap() {
        Outcome::Checked { problems, .. } => assert_eq!(problems, None),
        _ => panic!("check"),
    }
}

#[test]
fn blocks_that_are_not_objects_or_whose_type_is_not_a_string_never_make_unreadable_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let pi = write(
        dir.path(),
        "pi.jsonl",
        &[
            json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/p"}),
            json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2026-01-01T00:00:01Z",
                   "message": {"role": "user", "content": [{"type": null, "text": "x"}, 7, "bare string",
                                                           {"type": "text", "text": "hello"}]}}),
            json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02Z",
                   "message": {"role": "assistant", "content": [{"type": 3}, {"type": "text", "text": "hi"}]}}),
        ],
    );
    let codex = write(
        dir.path(),
        "codex.jsonl",
        &[
            json!({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "c"}}),
            json!({"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
                   "payload": {"type": "message", "role": "user", "content": [null, {"type": 1}, {"type": "input_text", "text": "go"}]}}),
            json!({"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
                   "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}}),
        ],
    );
    for f in [pi, codex] {
        let o = import(&mut s, &f);
        assert!(o.error.is_none(), "{:?}", o.error);
        every_read_works(&mut s, &o.conversations[0]);
    }
    // and whole-store commands still read every conversation
    let Outcome::Replayed(r) = run(&mut s, Action::Replay { conversation: None }).unwrap() else {
        panic!("replay")
    };
    assert!(r.skipped.is_empty());
}

#[test]
fn the_store_refuses_a_row_it_could_not_read_back() {
    let mut s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(None).unwrap();
    let bad = cairn::model::NewMessage::new(
        cairn::model::Role::User,
        vec![cairn::model::Block::Other(json!({"type": null}))],
    );
    let done = cairn::model::NewMessage::text(cairn::model::Role::Assistant, "ok");
    let e = s.append_turn(&c, &[bad, done]).unwrap_err().to_string();
    assert!(e.contains("would not read back"), "{e}");
    assert_eq!(s.conversation(&c).unwrap().messages, 0, "nothing written");
}

#[test]
fn a_conversation_a_provider_would_refuse_imports_with_notes_and_exports_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let line = |uuid: &str, parent: Option<&str>, ty: &str, content: Value| {
        json!({"uuid": uuid, "parentUuid": parent, "sessionId": "s", "type": ty, "timestamp": "2026-01-01T00:00:00Z",
               "message": {"role": ty, "content": content, "id": format!("m-{uuid}")}})
    };
    let f = write(
        dir.path(),
        "cc.jsonl",
        &[
            // an orphan result first, then a call answered by plain text, then a duplicated call id
            line(
                "u1",
                None,
                "user",
                json!([{"type": "tool_result", "tool_use_id": "ghost", "content": "stale"}]),
            ),
            line(
                "a1",
                Some("u1"),
                "assistant",
                json!([{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]),
            ),
            line(
                "u2",
                Some("a1"),
                "user",
                json!("plain text instead of a result"),
            ),
            line(
                "a2",
                Some("u2"),
                "assistant",
                json!([{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]),
            ),
            line(
                "u3",
                Some("a2"),
                "user",
                json!([{"type": "tool_result", "tool_use_id": "t2", "content": "one"}]),
            ),
            line(
                "a3",
                Some("u3"),
                "assistant",
                json!([{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]),
            ),
            line(
                "u4",
                Some("a3"),
                "user",
                json!([{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]),
            ),
            line(
                "a4",
                Some("u4"),
                "assistant",
                json!([{"type": "text", "text": "the end"}]),
            ),
        ],
    );
    let o = import(&mut s, &f);
    assert!(o.error.is_none(), "{:?}", o.error);
    let notes = o.report.notes.join("\n");
    assert!(notes.contains("answer no call"), "{notes}");
    assert!(notes.contains("never answered"), "{notes}");
    assert!(notes.contains("used more than once"), "{notes}");
    let conv = &o.conversations[0];
    for f in [ExportFormat::Anthropic, ExportFormat::Openai] {
        let e = cairn::export::export(&s, conv, None, f, Options::default()).unwrap();
        assert_eq!(e.repairs.orphan_results, 1, "{f:?}");
        assert_eq!(e.repairs.unanswered_calls, 1, "{f:?}");
        assert_eq!(e.repairs.renamed_ids, 1, "{f:?}");
        let body: Value = serde_json::from_str(&e.text).unwrap();
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "user", "{f:?}");
        // nothing after a repair is dropped: the last reply is there
        assert!(e.text.contains("the end"), "{f:?}");
        if f == ExportFormat::Anthropic {
            cairn::pairs::check(&anthropic_messages(msgs), false).unwrap();
        }
    }
}

/// The Anthropic body's messages as cairn messages, to run the pairing rule on them.
fn anthropic_messages(msgs: &[Value]) -> Vec<cairn::model::NewMessage> {
    msgs.iter()
        .enumerate()
        .map(|(i, m)| cairn::wire::message_from_wire(m, &format!("[{i}]")).unwrap())
        .collect()
}

#[test]
fn pi_text_blocks_with_a_signature_read_as_text_and_keep_it_as_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let f = write(
        dir.path(),
        "pi.jsonl",
        &[
            json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/p"}),
            json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2026-01-01T00:00:01Z",
                   "message": {"role": "user", "content": [{"type": "text", "text": "question"}]}}),
            json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02Z",
                   "message": {"role": "assistant", "model": "gpt-5", "content": [
                       {"type": "text", "text": "the answer", "textSignature": "sig-123"}]}}),
        ],
    );
    let o = import(&mut s, &f);
    let path = s.active_path(&o.conversations[0]).unwrap();
    assert_eq!(
        path[1].content,
        vec![cairn::model::Block::text("the answer")]
    );
    assert_eq!(
        path[1].meta["block_extras"]["0"]["textSignature"],
        "sig-123"
    );
    let openai = cairn::export::export(
        &s,
        &o.conversations[0],
        None,
        ExportFormat::Openai,
        Options::default(),
    )
    .unwrap();
    assert!(openai.text.contains("the answer") && !openai.text.contains("sig-123"));
    let md = cairn::export::export(
        &s,
        &o.conversations[0],
        None,
        ExportFormat::Markdown,
        Options::default(),
    )
    .unwrap();
    assert!(!md.text.contains("*[text]*"), "{}", md.text);
}

#[test]
fn secrets_leave_through_no_export_show_resume_or_snapshot_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let ghp = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let aws = "9f3Hk2Lq8Zp4Xy7Vb1Nm6Qw5Er0Ty3Ui8Op2As4D";
    let c = s.create_conversation(Some("leaky")).unwrap();
    let turn = cairn::wire::message_from_wire(
        &json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                 "input": {"command": format!("GITHUB_TOKEN={ghp} gh repo list")}}]}),
        "a",
    )
    .unwrap();
    let result = cairn::wire::message_from_wire(
        &json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                 "content": format!("aws_secret_access_key = {aws}\nAuthorization: Bearer abcdef0123456789abcdef0123456789abcdef")}]}),
        "b",
    )
    .unwrap();
    s.append_turn(
        &c,
        &[
            cairn::model::NewMessage::text(cairn::model::Role::User, format!("my token is {ghp}")),
            turn,
            result,
            cairn::model::NewMessage::text(cairn::model::Role::Assistant, "done"),
        ],
    )
    .unwrap();
    let leaks =
        |t: &str| t.contains(ghp) || t.contains(aws) || t.contains("abcdef0123456789abcdef");
    for f in [
        ExportFormat::Jsonl,
        ExportFormat::Markdown,
        ExportFormat::Html,
        ExportFormat::Anthropic,
        ExportFormat::Openai,
    ] {
        let e = cairn::export::export(&s, &c, None, f, Options::default()).unwrap();
        assert!(!leaks(&e.text), "{f:?} leaks");
        assert!(e.redacted >= 3, "{f:?}: {}", e.redacted);
        assert!(e.text.contains("[redacted: github token]"), "{f:?}");
        // and --no-redact keeps them: the store kept what was written
        let raw = cairn::export::export(
            &s,
            &c,
            None,
            f,
            Options {
                redact: false,
                ..Options::default()
            },
        )
        .unwrap();
        assert!(raw.text.contains(ghp), "{f:?}");
    }
    let Outcome::Shown { wire, .. } = run(
        &mut s,
        Action::Show {
            conversation: c.clone(),
            redact: true,
        },
    )
    .unwrap() else {
        panic!()
    };
    assert!(!leaks(&serde_json::to_string(&wire).unwrap()));
    let Outcome::Resumed { wire, redacted, .. } = run(
        &mut s,
        Action::Resume {
            conversation: c.clone(),
            budget: cairn::store::Budget::Messages(10),
            redact: true,
        },
    )
    .unwrap() else {
        panic!()
    };
    assert!(redacted >= 3 && !leaks(&serde_json::to_string(&wire).unwrap()));
    let r = cairn::render::render(
        &cairn::render::sources(&s.active_path(&c).unwrap()),
        &cairn::render::Options::new(&cairn::render::PROFILES[0]),
    )
    .unwrap();
    assert!(!leaks(&r.factsheet), "{}", r.factsheet);
    // the pages themselves, read back cell by cell (rows joined: the text flows through them)
    let font = cairn::render::font::for_cell(5, 8).unwrap();
    let text: String = r
        .pages
        .iter()
        .enumerate()
        .flat_map(|(i, p)| cairn::render::decode::decode_page(&p.png, font, i + 1).unwrap())
        .collect();
    assert!(text.contains("redacted"), "{text}");
    assert!(!leaks(&text));
}

#[test]
fn small_things_bom_cycles_empty_documents_and_empty_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    // a UTF-8 byte-order mark is read past
    let bom = dir.path().join("bom.json");
    std::fs::write(
        &bom,
        "\u{feff}[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"yo\"}]",
    )
    .unwrap();
    let o = import(&mut s, &bom);
    assert!(o.error.is_none(), "{:?}", o.error);
    // parentUuid cycles and self-parents are reported
    let cyc = write(
        dir.path(),
        "cycle.jsonl",
        &[
            json!({"uuid": "a", "parentUuid": "a", "sessionId": "s", "type": "user", "message": {"role": "user", "content": "self"}}),
            json!({"uuid": "b", "parentUuid": "c", "sessionId": "s", "type": "user", "message": {"role": "user", "content": "x"}}),
            json!({"uuid": "c", "parentUuid": "b", "sessionId": "s", "type": "assistant", "message": {"role": "assistant", "id": "m", "content": [{"type": "text", "text": "y"}]}}),
        ],
    );
    let o = import(&mut s, &cyc);
    assert!(o.error.is_none());
    let notes = o.report.notes.join("\n");
    assert!(notes.contains("themselves as parent"), "{notes}");
    // nothing to import: refused, not an empty conversation
    for (name, text) in [
        ("empty-array.json", "[]"),
        ("empty-messages.json", "{\"messages\": []}"),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let o = import(&mut s, &p);
        let e = o.error.unwrap();
        assert!(e.contains("nothing to import"), "{e}");
    }
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let e = import(&mut s, &empty).error.unwrap();
    assert!(e.ends_with(":0: empty file"), "{e}");
}
