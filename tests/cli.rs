//! The CLI contract other tools rely on: command names, flags, ids alone on stdout, JSON shapes, one-line errors
//! with exit code 2.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cli.db");
        Env { _dir: dir, db }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_stdin(args, None)
    }

    fn run_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .env_remove("CAIRN_DB")
            .arg("--db")
            .arg(&self.db)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(s) = stdin {
            child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
        }
        drop(child.stdin.take());
        child.wait_with_output().unwrap()
    }

    /// Runs and expects success; returns stdout trimmed.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    }

    /// Runs and expects exit 2 with exactly one line on stderr; returns it.
    fn fails(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?} should fail");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
        assert!(
            o.stdout.is_empty(),
            "{args:?} printed on stdout while failing"
        );
        err.trim().to_string()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
}

fn write(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p.to_string_lossy().into_owned()
}

fn is_id(s: &str) -> bool {
    s.len() == 16 && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[test]
fn the_documented_commands_work_end_to_end() {
    let e = Env::new();
    let dir = e.db.parent().unwrap().to_path_buf();
    let c = e.ok(&["new", "--title", "demo"]);
    assert!(is_id(&c), "new printed {c:?}");

    let turn = json!([
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "use ls", "signature": "c2ln"},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "pwd"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "/p", "is_error": true}]},
        {"role": "assistant", "content": "one file"}
    ]);
    let f1 = write(&dir, "t1.json", &turn);
    let tip1 = e.ok(&["append", &c, &f1]);
    assert!(is_id(&tip1));

    // show --json gives the path in Anthropic shape, content exactly as appended
    let shown = e.json(&["show", &c, "--json"]);
    let arr = shown.as_array().unwrap();
    assert_eq!(arr.len(), 4);
    for (got, want) in arr.iter().zip(turn.as_array().unwrap()) {
        assert_eq!(got["role"], want["role"]);
        let want_content = match &want["content"] {
            Value::String(s) => json!([{"type": "text", "text": s}]),
            c => c.clone(),
        };
        assert_eq!(got["content"], want_content);
    }
    assert_eq!(arr[3]["id"], json!(tip1));

    let cp = e.ok(&["checkpoint", &c, "listed"]);
    assert_eq!(cp, tip1);
    // stdin
    let o = e.run_stdin(
        &["append", &c, "-"],
        Some(r#"[{"role":"user","content":"read a.txt"},{"role":"assistant","content":"it says hi"}]"#),
    );
    assert!(o.status.success());
    let tip2 = String::from_utf8(o.stdout).unwrap().trim().to_string();

    let list = e.json(&["list", "--json"]);
    let conv = &list.as_array().unwrap()[0];
    assert_eq!(conv["id"], json!(c));
    assert_eq!(conv["title"], json!("demo"));
    assert_eq!(conv["messages"], json!(6));
    assert_eq!(conv["tip"], json!(tip2));

    // branch with a stale --expect fails naming both tips; with the right one it moves
    let err = e.fails(&["branch", &c, &tip1, "--expect", &tip1]);
    assert!(err.contains(&tip1) && err.contains(&tip2), "{err}");
    assert_eq!(e.ok(&["branch", &c, &tip1, "--expect", &tip2]), tip1);
    assert_eq!(e.ok(&["branch", &c, &tip2]), tip2);

    let digest = e.ok(&["rewind", &c, "listed", "--digest", "a.txt says hi"]);
    assert!(is_id(&digest));
    let tree = e.ok(&["tree", &c]);
    assert!(tree.contains("[listed]"), "{tree}");
    assert!(
        tree.lines()
            .any(|l| l.contains(&digest) && l.contains("tip")),
        "{tree}"
    );
    assert!(
        tree.contains(&tip2),
        "abandoned branch missing from tree:\n{tree}"
    );

    let cps = e.json(&["checkpoints", &c, "--json"]);
    assert_eq!(cps[0]["label"], json!("listed"));
    assert_eq!(cps[0]["message"], json!(tip1));

    let f = e.ok(&["fork", &c]);
    assert!(is_id(&f) && f != c);
    let fork_at = e.ok(&["fork", &c, "--at", &tip1]);
    assert_eq!(
        e.json(&["show", &fork_at, "--json"])
            .as_array()
            .unwrap()
            .len(),
        4
    );

    let r = e.json(&["resume", &c, "--max-messages", "2"]);
    let msgs = r["messages"].as_array().unwrap();
    // at most 2 stored messages; a request starts with the user, so a note may open it (counted as a repair)
    assert!(r["ids"].as_array().unwrap().len() <= 2);
    assert_eq!(
        msgs.len(),
        r["ids"].as_array().unwrap().len()
            + r["repairs"]["opening_notes"].as_u64().unwrap() as usize
    );
    assert_eq!(msgs[0]["role"], json!("user"));
    for m in msgs {
        assert_eq!(
            m.as_object().unwrap().len(),
            2,
            "resume messages are exactly role+content"
        );
    }
    assert_eq!(r["dropped_checkpoints"], json!([]));
    let r = e.json(&["resume", &c, "--max-tokens", "100000"]);
    assert_eq!(r["messages"].as_array().unwrap().len(), 5);

    assert!(e.ok(&["retry", &c]).starts_with("nothing to retry"));
    assert_eq!(
        e.json(&["retry", &c, "--json"])["status"],
        json!("nothing_to_retry")
    );
    assert!(
        e.ok(&["retry", "0000000000000000"])
            .starts_with("nothing loaded")
    );

    let undone = e.ok(&["undo", &c]);
    assert!(undone.starts_with("undid"), "{undone}");
    let log = e.json(&["log", &c, "--json"]);
    assert!(
        log.as_array()
            .unwrap()
            .iter()
            .any(|o| o["kind"] == json!("rewind"))
    );
    assert_eq!(e.ok(&["check"]), "ok");
}

#[test]
fn errors_are_one_line_name_the_culprit_and_exit_2() {
    let e = Env::new();
    let dir = e.db.parent().unwrap().to_path_buf();
    let c = e.ok(&["new"]);
    let err = e.fails(&["show", "ffffffffffffffff"]);
    assert_eq!(err, "cairn: no conversation ffffffffffffffff");
    let err = e.fails(&["branch", &c, "0123456789abcdef"]);
    assert!(err.contains("0123456789abcdef"), "{err}");

    // a malformed JSON file: FILE:LINE:COL
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "[\n {\"role\": \"user\",\n  \"content\": }\n]").unwrap();
    let err = e.fails(&["append", &c, bad.to_str().unwrap()]);
    assert!(err.contains("bad.json:3:"), "{err}");

    // a bad block names the message and block
    let f = write(
        &dir,
        "b.json",
        &json!([{"role": "user", "content": [{"type": "text"}]}]),
    );
    let err = e.fails(&["append", &c, &f]);
    assert!(
        err.contains("[0].content[0]") && err.contains("text"),
        "{err}"
    );

    // an unpaired turn is refused and writes nothing
    let f = write(
        &dir,
        "u.json",
        &json!([{"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "x", "input": {}}]}]),
    );
    let err = e.fails(&["append", &c, &f]);
    assert!(
        err.contains("t9") && err.contains("nothing written"),
        "{err}"
    );
    assert_eq!(e.json(&["list", "--json"])[0]["messages"], json!(0));

    // a store in a folder that does not exist
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "--db",
            dir.join("no/such/dir/x.db").to_str().unwrap(),
            "list",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("does not exist") && err.lines().count() == 1,
        "{err}"
    );

    // CAIRN_DB is honoured
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_DB", &e.db)
        .args(["list", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["id"], json!(c));
}

#[test]
fn retry_on_a_turn_left_mid_call_reports_retryable() {
    // Built through the library (an import), read through the CLI.
    let e = Env::new();
    let (c, ids) = {
        let mut s = cairn::store::Store::open(&e.db).unwrap();
        use cairn::model::{Block, NewMessage, Role};
        use cairn::store::ImportedMessage;
        let msgs = vec![
            ImportedMessage {
                parent: None,
                message: NewMessage::text(Role::User, "go"),
            },
            ImportedMessage {
                parent: Some(0),
                message: NewMessage::new(
                    Role::Assistant,
                    vec![Block::ToolUse {
                        id: "t".into(),
                        name: "x".into(),
                        input: json!({}),
                    }],
                ),
            },
        ];
        s.import_conversation(None, &msgs, None, &[], &Value::Null)
            .unwrap()
    };
    let r = e.json(&["retry", &c, "--json"]);
    assert_eq!(r["status"], json!("retryable"));
    assert_eq!(r["failed_tip"], json!(ids[1]));
    assert_eq!(r["prompt"]["content"][0]["text"], json!("go"));
}

#[test]
fn import_and_export_commands() {
    let e = Env::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let tiny = fixtures.join("pi/pi-v3-compaction-tiny.jsonl");
    let v = e.json(&["import", tiny.to_str().unwrap(), "--json"]);
    let first = &v[0];
    assert_eq!(first["format"], json!("pi"));
    assert_eq!(first["report"]["messages"], json!(6));
    let conv = first["conversations"][0].as_str().unwrap().to_string();
    // the same file again: reported, not duplicated, not an error
    let again = e.ok(&[
        "import",
        fixtures
            .join("pi/pi-v3-compaction-tiny.jsonl")
            .to_str()
            .unwrap(),
    ]);
    assert!(again.contains("already imported"), "{again}");
    assert_eq!(e.json(&["list", "--json"]).as_array().unwrap().len(), 1);
    // a malformed file: FILE:LINE, exit 2, nothing written
    let err = e.fails(&[
        "import",
        fixtures.join("small/cc-malformed.jsonl").to_str().unwrap(),
    ]);
    assert!(err.contains("cc-malformed.jsonl:2:"), "{err}");
    assert_eq!(e.json(&["list", "--json"]).as_array().unwrap().len(), 1);
    let err = e.fails(&["import", "x.jsonl", "--format", "nope"]);
    assert!(err.contains("nope"), "{err}");

    for fmt in ["html", "markdown", "jsonl", "anthropic", "openai"] {
        let out = e.ok(&["export", &conv, "--format", fmt]);
        assert!(!out.is_empty(), "{fmt}");
    }
    let dir = e.db.parent().unwrap();
    let file = dir.join("x.html");
    e.ok(&[
        "export",
        &conv,
        "--format",
        "html",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    let err = e.fails(&["export", &conv, "--format", "pdf"]);
    assert!(err.contains("pdf"), "{err}");

    // back to the agent: a session of each harness, one JSON object a line
    for fmt in ["claude-code", "pi", "codex"] {
        let out = e.ok(&["export", &conv, "--format", fmt]);
        for l in out.lines() {
            serde_json::from_str::<Value>(l).unwrap_or_else(|err| panic!("{fmt}: {err}: {l}"));
        }
    }
    let home = dir.join("home");
    let v = e.json(&[
        "continue",
        &conv,
        "--in",
        "codex",
        "--home",
        home.to_str().unwrap(),
        "--json",
    ]);
    for k in [
        "harness",
        "session_id",
        "file",
        "command",
        "beside",
        "notes",
        "redacted",
    ] {
        assert!(v.get(k).is_some(), "continue --json lacks {k}: {v}");
    }
    assert_eq!(v["harness"], json!("codex"));
    assert!(Path::new(v["file"].as_str().unwrap()).starts_with(&home));
    assert_eq!(
        v["command"],
        json!(format!(
            "codex resume {}",
            v["session_id"].as_str().unwrap()
        ))
    );
    let err = e.fails(&[
        "continue",
        &conv,
        "--in",
        "cursor",
        "--home",
        home.to_str().unwrap(),
    ]);
    assert!(err.contains("cursor"), "{err}");
    let err = e.fails(&[
        "continue",
        "nope",
        "--in",
        "pi",
        "--home",
        home.to_str().unwrap(),
    ]);
    assert!(err.contains("nope"), "{err}");
}

#[cfg(feature = "gui")]
#[test]
fn import_and_export_take_every_format_by_its_name() {
    // the command line's list is the formats' own: each name is taken (the missing file is what fails)
    let e = Env::new();
    let missing = e.db.with_file_name("missing.jsonl");
    for f in cairn::formats::Format::ALL
        .iter()
        .map(|f| f.name())
        .chain(["auto"])
    {
        let err = e.fails(&["import", "--format", f, missing.to_str().unwrap()]);
        assert!(err.contains("missing.jsonl"), "--format {f}: {err}");
    }
    // and a format is spelled in JSON (`import --json`, `discover --json`) as `--format` takes it
    for f in cairn::formats::Format::ALL {
        assert_eq!(serde_json::to_value(f).unwrap(), f.name(), "{f:?}");
    }
    let err = e.fails(&["import", "--format", "nope", missing.to_str().unwrap()]);
    assert!(
        err.contains("droid") && err.contains("copilot-cli"),
        "{err}"
    );
    // and export every format it writes (the conversation named is what fails)
    for f in cairn::export::ExportFormat::ALL
        .iter()
        .map(|f| f.name())
        .chain(["md"])
    {
        let err = e.fails(&["export", "nowhere", "--format", f]);
        assert!(err.contains("nowhere"), "--format {f}: {err}");
    }
}

#[test]
fn screenshot_flags_are_checked_before_a_window_opens() {
    // no display is needed: bad values are refused first, one line, exit 2
    let e = Env::new();
    let out = e.db.with_file_name("x.png");
    let out = out.to_str().unwrap();
    let err = e.fails(&["screenshot", "--view", "graph", "--out", out]);
    assert!(
        err.contains("--view \"graph\"") && err.contains("snapshots"),
        "{err}"
    );
    let err = e.fails(&["screenshot", "--theme", "blue", "--out", out]);
    assert!(err.contains("--theme \"blue\": light or dark"), "{err}");
    // refused before anything was opened: no store was created
    assert!(!e.db.exists());
}

#[test]
fn output_piped_into_a_reader_that_stops_early_ends_quietly() {
    use std::io::Read;
    let e = Env::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let big = fixtures.join("pi/pi-v1-large-session-thinking-level-changes.jsonl");
    let conv = e.json(&["import", big.to_str().unwrap(), "--json"])[0]["conversations"][0]
        .as_str()
        .unwrap()
        .to_string();
    // `cairn show CONV | head -c 100`
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--db", e.db.to_str().unwrap(), "show", &conv])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The research and legibility commands keep the JSON their contracts name.
#[test]
fn research_and_legibility_json_contracts() {
    let e = Env::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let o = e.run(&[
        "import",
        fixtures
            .join("claude-code/cc-rewind-fork-2.1.42.jsonl")
            .to_str()
            .unwrap(),
    ]);
    assert!(o.status.success());
    let json = |args: &[&str]| -> Value {
        let o = e.run(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let s = json(&["search", "convention", "--json"]);
    let h = &s["hits"][0];
    for k in [
        "conversation",
        "message",
        "role",
        "on_active_path",
        "timestamp",
        "snippet",
        "rank",
    ] {
        assert!(h.get(k).is_some(), "search hit lacks {k}: {h}");
    }
    assert!(s["total"].is_u64());
    let st = json(&["stats", "--by", "model", "--json"]);
    assert_eq!(st["by"], "model");
    for k in [
        "key",
        "sessions",
        "turns",
        "tool_calls",
        "tool_errors",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost_usd",
    ] {
        assert!(st["rows"][0].get(k).is_some(), "stats row lacks {k}");
    }
    let conv = json(&["list", "--json"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = json(&["context", &conv, "--over-time", "--json"]);
    assert!(t["window"].is_u64() && t["threshold"].is_u64() && t["points"].is_array());
    let shapes = json(&["legibility", "--list-shapes", "--json"]);
    let first = &shapes["shapes"][0];
    for k in ["name", "cell", "glyph", "columns"] {
        assert!(first.get(k).is_some(), "shape lacks {k}");
    }
    // a reader that reads nothing scores zero, in the contract's shape
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("read-nothing");
    std::fs::write(&script, "#!/bin/sh\necho '{}'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = dir.path().join("t.txt");
    std::fs::write(
        &text,
        "The parser reads src/lib.rs line 42.\n    let x = compute(1, 2);\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_READ_STRIPS", &script)
        .args([
            "--db",
            e.db.to_str().unwrap(),
            "legibility",
            "--text",
            text.to_str().unwrap(),
        ])
        .args(["--shape", "bitmap-5x8", "--reader", "tesseract", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &l["results"][0];
    assert_eq!(r["shape"], "bitmap-5x8");
    assert_eq!(r["reader"], "tesseract");
    assert!(r["chars_per_image_token"].as_f64().unwrap() > 0.0);
    assert_eq!(r["accuracy"]["all"], json!(0.0));
    for k in ["prose", "code", "numbers"] {
        assert!(r["accuracy"].get(k).is_some());
    }
    assert!(r.get("recall").is_some());
    // an unknown shape is one line naming the shapes
    let o = e.run(&[
        "legibility",
        "--text",
        text.to_str().unwrap(),
        "--shape",
        "huge",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--shape \"huge\"") && err.contains("bitmap-5x8") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn replay_prints_the_estimate_the_prediction_and_each_harness_s_compactions() {
    let e = Env::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    e.ok(&[
        "import",
        fixtures
            .join("pi/pi-v1-before-compaction-two-compactions.jsonl")
            .to_str()
            .unwrap(),
    ]);
    let text = e.ok(&["replay"]);
    let mut lines = text.lines();
    let head = lines.next().unwrap();
    assert!(
        head.contains("estimated med/p90") && head.contains("predicted med/p90"),
        "{text}"
    );
    // one model row, both errors in percent, then the compactions of pi, summed up as the JSON sums them
    let v = e.json(&["replay", "--json"]);
    let model = &v["models"][0];
    let row = lines.next().unwrap();
    let pct = |k: &str| format!("{:.1}%", model[k].as_f64().unwrap() * 100.0);
    for k in [
        "median_abs_error",
        "p90_abs_error",
        "predicted_median_abs_error",
        "predicted_p90_abs_error",
    ] {
        assert!(row.contains(&pct(k)), "{k} in {row}");
    }
    let h = &v["compactions_by_harness"][0];
    assert_eq!(h["harness"], json!("pi"));
    assert_eq!(h["compactions"], json!(2));
    let pi = text
        .lines()
        .find(|l| l.starts_with("pi "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        pi.contains(h["worst"].as_str().unwrap())
            && pi.contains(&format!(
                "{:.1}%",
                h["max_abs_error"].as_f64().unwrap() * 100.0
            )),
        "{pi}"
    );
}

#[test]
fn a_harness_s_home_folder_imports_its_sessions_and_skips_its_settings() {
    let e = Env::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".claude");
    let project = claude.join("projects/-home-dev-proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(claude.join("todos")).unwrap();
    std::fs::copy(
        fixtures.join("small/cc-quirks.jsonl"),
        project.join("4c1e1f64-0000-4000-8000-000000000001.jsonl"),
    )
    .unwrap();
    // what Claude Code keeps beside its sessions: settings, credentials, todo lists, the prompt history
    let beside = [
        (
            ".credentials.json",
            r#"{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x"}}"#,
        ),
        ("settings.json", r#"{"permissions":{"allow":[]}}"#),
        ("todos/a-agent-a.json", "[]"),
        (
            "todos/b-agent-b.json",
            r#"[{"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]"#,
        ),
        (
            "history.jsonl",
            r#"{"display":"fix it","pastedContents":{},"timestamp":1760000000000,"project":"/p"}"#,
        ),
        ("empty.jsonl", ""),
    ];
    for (name, text) in beside {
        std::fs::write(claude.join(name), text).unwrap();
    }
    let dir = claude.to_str().unwrap();
    let out = e.ok(&["import", dir]);
    assert!(
        out.contains("skipped 6 files in the folders that hold no session"),
        "{out}"
    );
    assert_eq!(e.json(&["list", "--json"]).as_array().unwrap().len(), 1);
    let v = e.json(&["import", dir, "--json"]);
    let mut statuses: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["status"].as_str().unwrap())
        .collect();
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [
            "skipped",
            "skipped",
            "skipped",
            "skipped",
            "skipped",
            "skipped",
            "unchanged"
        ]
    );
    // named, such a file is refused by name
    for (name, _) in beside {
        let f = claude.join(name);
        let err = e.fails(&["import", f.to_str().unwrap()]);
        assert!(err.contains(name.rsplit('/').next().unwrap()), "{err}");
    }
    // a transcript that is broken is refused, found in a folder or not: only what no reader claims is skipped
    std::fs::copy(
        fixtures.join("small/cc-malformed.jsonl"),
        project.join("broken.jsonl"),
    )
    .unwrap();
    let o = e.run(&["import", dir]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("broken.jsonl:2:"), "{err}");
    assert_eq!(e.json(&["list", "--json"]).as_array().unwrap().len(), 1);
}
