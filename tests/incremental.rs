//! Every session read once and kept current: importing a session again, or its first half and then the whole
//! file, gives one conversation with the same messages and the same stats as importing it once (per harness).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::import::FileOutcome;
use cairn::reclaim::Settings;
use cairn::stats::Stats;
use cairn::store::{By, Store};

#[path = "support/helpers.rs"]
mod helpers;

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn run(s: &mut Store, a: Action) -> Outcome {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false)).unwrap()
}

fn import(s: &mut Store, p: &Path) -> FileOutcome {
    let Outcome::Imported(mut files) = run(
        s,
        Action::Import {
            paths: vec![p.to_path_buf()],
            format: None,
        },
    ) else {
        panic!()
    };
    files.remove(0)
}

fn stats(s: &mut Store) -> Stats {
    let Outcome::Stats(st) = run(
        s,
        Action::Stats {
            by: By::Model,
            since: None,
        },
    ) else {
        panic!()
    };
    st
}

/// The first `share` of a JSONL file's lines, as a live session's file was when first imported.
fn head_of(src: &Path, dst: &Path, share: f64) {
    let text = std::fs::read_to_string(src).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let n = ((lines.len() as f64) * share) as usize;
    std::fs::write(dst, lines[..n].join("\n") + "\n").unwrap();
}

fn path_texts(s: &Store, conv: &str) -> Vec<String> {
    s.active_path(conv)
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}:{}",
                m.role.as_str(),
                cairn::model::plain_text(&m.content)
            )
        })
        .collect()
}

#[test]
fn a_session_that_grew_is_one_conversation_with_the_figures_of_one_import() {
    for f in [
        "claude-code/cc-2.0.5-image-paste.jsonl",
        "pi/pi-v1-before-compaction-two-compactions.jsonl",
        "codex/codex-desktop-spawn-agents-0.140.jsonl",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut once = Store::open(dir.path().join("once.db")).unwrap();
        let o = import(&mut once, &fixture(f));
        assert_eq!(o.status, "new", "{f}");
        let want = stats(&mut once);
        let want_path = path_texts(&once, &o.conversations[0]);

        let mut grown = Store::open(dir.path().join("grown.db")).unwrap();
        // the live file, half written; then the same file, whole, where the harness keeps it
        let live = dir.path().join("live.jsonl");
        head_of(&fixture(f), &live, 0.5);
        let first = import(&mut grown, &live);
        assert_eq!(first.status, "new", "{f}: {:?}", first.error);
        std::fs::copy(fixture(f), &live).unwrap();
        let again = import(&mut grown, &live);
        assert_eq!(again.status, "grown", "{f}: {:?}", again.error);
        assert!(again.added > 0);
        assert_eq!(
            again.conversations[0], first.conversations[0],
            "{f}: the same conversation"
        );
        assert_eq!(
            grown.conversations().unwrap().len(),
            once.conversations().unwrap().len(),
            "{f}: nothing counted twice"
        );
        assert_eq!(stats(&mut grown).rows, want.rows, "{f}");
        assert_eq!(
            path_texts(&grown, &again.conversations[0]),
            want_path,
            "{f}"
        );
        // and once more: unchanged, not an error that fails the command
        let third = import(&mut grown, &live);
        assert_eq!(third.status, "unchanged", "{f}");
        assert_eq!(
            third.duplicate_of.as_deref(),
            Some(first.conversations[0].as_str())
        );
    }
}

#[test]
fn import_json_says_new_grown_or_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    head_of(
        &fixture("claude-code/cc-rewind-fork-2.1.42.jsonl"),
        &live,
        0.6,
    );
    let db = dir.path().join("s.db");
    let import = |p: &Path| -> serde_json::Value {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["--db", db.to_str().unwrap(), "import", "--json"])
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    assert_eq!(import(&live)[0]["status"], "new");
    std::fs::copy(fixture("claude-code/cc-rewind-fork-2.1.42.jsonl"), &live).unwrap();
    let v = import(&live);
    assert_eq!(v[0]["status"], "grown");
    assert!(v[0]["added"].as_u64().unwrap() > 0);
    assert_eq!(import(&live)[0]["status"], "unchanged");
}

/// The first `n` lines of `src` in a file of the same name in a new folder under `dir` (so it has no read
/// position: it is matched by its session, and read whole).
fn live_copy(src: &Path, dir: &Path, n: usize) -> PathBuf {
    let d = dir.join(format!("copy{n}"));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("live.jsonl");
    first_lines(src, &p, n);
    p
}

/// The first `n` lines of a file, as a live session's file was after its `n`th line.
fn first_lines(src: &Path, dst: &Path, n: usize) {
    let text = std::fs::read_to_string(src).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(dst, lines[..n].join("\n") + "\n").unwrap();
}

#[test]
fn a_grown_claude_code_session_is_read_from_where_its_import_stopped() {
    for f in [
        "claude-code/cc-rewind-fork-2.1.42.jsonl",
        "claude-code/cc-compact-boundary.jsonl",
        "claude-code/cc-2.0.5-image-paste.jsonl",
        "claude-code/cc-2.1.332-rendered-attachments.jsonl",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut once = Store::open(dir.path().join("once.db")).unwrap();
        let o = import(&mut once, &fixture(f));
        let want = stats(&mut once);
        let want_path = path_texts(&once, &o.conversations[0]);
        let total = std::fs::read_to_string(fixture(f)).unwrap().lines().count();
        let mut from_end = 0;
        // cut the live file at many places: wherever the new lines continue what was read exactly, only they
        // are read; elsewhere (a reply cut between its lines, a compaction among the new lines) the whole file
        // is; the result is the same either way
        // a short file is cut after every line (Claude Code 2.1.33x writes the reminders it sent with a prompt
        // after the prompt's line: a cut between them too)
        let cuts = if total <= 30 { total } else { 12 };
        // the first and the last line that are part of a message: before the first nothing is read, after the
        // last the new lines add nothing
        let text = std::fs::read_to_string(fixture(f)).unwrap();
        let of_message: Vec<bool> = text
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                matches!(
                    v["type"].as_str(),
                    Some("user" | "assistant" | "attachment")
                )
            })
            .collect();
        let first_message = of_message.iter().position(|&m| m).unwrap();
        let last_message = of_message.iter().rposition(|&m| m).unwrap();
        for k in 1..cuts {
            let n = total * k / cuts;
            if n <= first_message {
                continue;
            }
            let sub = tempfile::tempdir().unwrap();
            let live = sub.path().join("live.jsonl");
            first_lines(&fixture(f), &live, n);
            let head_len = std::fs::metadata(&live).unwrap().len();
            let mut s = Store::open(sub.path().join("s.db")).unwrap();
            let first = import(&mut s, &live);
            assert_eq!(first.status, "new", "{f} at {n}: {:?}", first.error);
            assert_eq!(first.read_from, None);
            std::fs::copy(fixture(f), &live).unwrap();
            let again = import(&mut s, &live);
            let grown = if n > last_message {
                "unchanged"
            } else {
                "grown"
            };
            assert_eq!(again.status, grown, "{f} at {n}: {:?}", again.error);
            assert_eq!(again.conversations[0], first.conversations[0], "{f} at {n}");
            assert_eq!(stats(&mut s).rows, want.rows, "{f} at {n}");
            assert_eq!(
                path_texts(&s, &again.conversations[0]),
                want_path,
                "{f} at {n}"
            );
            // what reading the whole file again does: the same head, then the file merged by its session
            let mut whole = Store::open(sub.path().join("whole.db")).unwrap();
            import(&mut whole, &live_copy(&fixture(f), sub.path(), n));
            let merged = import(&mut whole, &live_copy(&fixture(f), sub.path(), total));
            assert_eq!(merged.read_from, None, "{f} at {n}");
            assert_eq!(
                s.conversation(&again.conversations[0]).unwrap().messages,
                whole
                    .conversation(&merged.conversations[0])
                    .unwrap()
                    .messages,
                "{f} at {n}: the same messages as a whole read, none twice"
            );
            if let Some(at) = again.read_from {
                assert_eq!(
                    at, head_len,
                    "{f} at {n}: read from where the import stopped"
                );
                from_end += 1;
            }
            // read again: nothing new, known without reading the file
            let third = import(&mut s, &live);
            assert_eq!(third.status, "unchanged", "{f} at {n}");
            assert_eq!(
                third.read_from,
                Some(std::fs::metadata(&live).unwrap().len())
            );
            assert_eq!(stats(&mut s).rows, want.rows, "{f} at {n}");
        }
        assert!(
            from_end >= 4,
            "{f}: only {from_end} of {} cuts read from the end",
            cuts - 1
        );
    }
}

#[test]
fn a_rewritten_file_is_read_whole_again() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture("claude-code/cc-rewind-fork-2.1.42.jsonl");
    let live = dir.path().join("live.jsonl");
    let total = std::fs::read_to_string(&f).unwrap().lines().count();
    first_lines(&f, &live, total / 2);
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let first = import(&mut s, &live);
    // the same length, other bytes at its start: not the file that was read
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&live, text.replacen("\"type\"", "\"type\" ", 1)).unwrap();
    let again = import(&mut s, &live);
    assert_eq!(again.read_from, None, "{:?}", again.report.notes);
    assert!(
        again.report.notes.iter().any(|n| n.contains("rewritten")),
        "{:?}",
        again.report.notes
    );
    assert_eq!(again.conversations[0], first.conversations[0]);
    assert_eq!(again.status, "grown");
}

#[test]
fn a_session_whose_subagents_changed_is_read_whole_again() {
    let dir = tempfile::tempdir().unwrap();
    let name = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    let src = fixture("claude-code");
    let live = dir.path().join(format!("{name}.jsonl"));
    let total = std::fs::read_to_string(src.join(format!("{name}.jsonl")))
        .unwrap()
        .lines()
        .count();
    first_lines(&src.join(format!("{name}.jsonl")), &live, total - 3);
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let first = import(&mut s, &live);
    assert_eq!(first.status, "new", "{:?}", first.error);
    assert_eq!(first.conversations.len(), 1, "no subagents yet");
    // the rest of the session, and its subagents' files beside it now
    std::fs::copy(src.join(format!("{name}.jsonl")), &live).unwrap();
    let sub = dir.path().join(name).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    for e in std::fs::read_dir(src.join(name).join("subagents")).unwrap() {
        let e = e.unwrap().path();
        std::fs::copy(&e, sub.join(e.file_name().unwrap())).unwrap();
    }
    let again = import(&mut s, &live);
    assert_eq!(again.read_from, None);
    assert!(again.conversations.len() > 1, "the subagents were read");
    let mut once = Store::open(dir.path().join("once.db")).unwrap();
    import(&mut once, &live);
    assert_eq!(stats(&mut s).rows, stats(&mut once).rows);
    // and unchanged since: known from the listing, not read
    let third = import(&mut s, &live);
    assert_eq!(third.status, "unchanged");
    assert_eq!(
        third.read_from,
        Some(std::fs::metadata(&live).unwrap().len())
    );
    assert_eq!(third.conversations, again.conversations);
}

/// A long Claude Code session, written as the harness writes it: a reply's blocks a line each (one message id),
/// parallel tool calls, their results hanging off them, progress lines between.
fn long_session(turns: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut parent: Option<String> = None;
    let mut n = 0;
    let mut line = |v: serde_json::Value, parent: &mut Option<String>| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let mut v = v;
        v["parentUuid"] = serde_json::json!(parent.clone());
        v["uuid"] = serde_json::json!(uuid);
        v["sessionId"] = serde_json::json!("5e55");
        v["isSidechain"] = serde_json::json!(false);
        v["timestamp"] = serde_json::json!(format!(
            "2026-01-01T{:02}:{:02}:00.000Z",
            (n / 60) % 24,
            n % 60
        ));
        out.push(v.to_string());
        *parent = Some(uuid.clone());
        uuid
    };
    for t in 0..turns {
        line(
            serde_json::json!({"type": "user", "message": {"role": "user", "content": format!("step {t}: read the files")}}),
            &mut parent,
        );
        let mid = format!("msg_{t}");
        line(
            serde_json::json!({"type": "assistant", "message": {"id": mid, "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": format!("Reading two files for step {t}.")}],
            "usage": {"input_tokens": 10 + t, "output_tokens": 5, "cache_read_input_tokens": 100 * t}}}),
            &mut parent,
        );
        let mut calls = Vec::new();
        for k in 0..2 {
            let id = format!("toolu_{t}_{k}");
            let at = line(
                serde_json::json!({"type": "assistant", "message": {"id": mid, "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("/src/f{t}_{k}.rs")}}],
                "usage": {"input_tokens": 10 + t, "output_tokens": 5, "cache_read_input_tokens": 100 * t}}}),
                &mut parent,
            );
            calls.push((id, at));
        }
        for (id, at) in calls {
            parent = Some(at);
            line(
                serde_json::json!({"type": "progress", "data": {"type": "hook_progress"}}),
                &mut parent,
            );
            line(
                serde_json::json!({"type": "user", "message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": id, "content": format!("fn f_{t}() {{}}\n")}]}}),
                &mut parent,
            );
        }
        line(
            serde_json::json!({"type": "assistant", "message": {"id": format!("{mid}b"), "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": format!("Step {t} done.")}],
            "usage": {"input_tokens": 20 + t, "output_tokens": 7, "cache_read_input_tokens": 100 * t + 50}}}),
            &mut parent,
        );
    }
    out
}

#[test]
fn a_long_session_is_read_from_a_window_before_where_its_import_stopped() {
    let lines = long_session(120);
    let dir = tempfile::tempdir().unwrap();
    let whole_file = dir.path().join("whole.jsonl");
    std::fs::write(&whole_file, lines.join("\n") + "\n").unwrap();
    let mut once = Store::open(dir.path().join("once.db")).unwrap();
    let o = import(&mut once, &whole_file);
    let want = stats(&mut once);
    let want_path = path_texts(&once, &o.conversations[0]);
    let want_messages = once.conversation(&o.conversations[0]).unwrap().messages;
    // cut everywhere in a stretch of lines (inside replies, between calls and results, on progress lines), read
    // in three steps
    for cut in (600..640).step_by(3) {
        let sub = tempfile::tempdir().unwrap();
        let live = sub.path().join("live.jsonl");
        let mut s = Store::open(sub.path().join("s.db")).unwrap();
        for n in [cut, cut + 200, lines.len()] {
            std::fs::write(&live, lines[..n].join("\n") + "\n").unwrap();
            let o = import(&mut s, &live);
            assert!(
                o.error.is_none() || o.status == "unchanged",
                "at {cut}/{n}: {:?}",
                o.error
            );
            if n > cut {
                let from = o
                    .read_from
                    .unwrap_or_else(|| panic!("at {cut}/{n}: read whole: {:?}", o.report.notes));
                assert!(
                    o.report
                        .notes
                        .iter()
                        .any(|x| x.contains(&format!("read from byte {from} (line ")))
                );
                assert!(
                    !o.report.notes.iter().any(|x| x.contains("(line 1,")),
                    "a window, not the file"
                );
            }
        }
        let c = &s.conversations().unwrap()[0];
        assert_eq!(s.conversations().unwrap().len(), 1);
        assert_eq!(stats(&mut s).rows, want.rows, "at {cut}");
        assert_eq!(path_texts(&s, &c.id), want_path, "at {cut}");
        // a reply cut between its lines is stored again whole, the partial one kept out of the figures
        assert!(
            c.messages >= want_messages && c.messages <= want_messages + 2,
            "at {cut}: {} vs {want_messages}",
            c.messages
        );
    }
}

#[test]
fn lines_another_copy_of_the_session_brought_in_are_not_added_again() {
    let lines = long_session(60);
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    std::fs::write(&live, lines[..300].join("\n") + "\n").unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let first = import(&mut s, &live);
    // the whole session, copied elsewhere under the same name, is merged into the same conversation
    let elsewhere = dir.path().join("copy");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("live.jsonl"), lines.join("\n") + "\n").unwrap();
    let copy = import(&mut s, &elsewhere.join("live.jsonl"));
    assert_eq!(copy.status, "grown");
    assert_eq!(copy.conversations[0], first.conversations[0]);
    let held = s.conversation(&first.conversations[0]).unwrap().messages;
    let want = stats(&mut s).rows;
    // then the live file grows to the same lines: read from where it stopped, nothing is new
    std::fs::write(&live, lines.join("\n") + "\n").unwrap();
    let again = import(&mut s, &live);
    assert!(again.read_from.is_some(), "{:?}", again.report.notes);
    assert_eq!(again.status, "unchanged", "{:?}", again.report.notes);
    assert_eq!(
        s.conversation(&first.conversations[0]).unwrap().messages,
        held
    );
    assert_eq!(stats(&mut s).rows, want);
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples")
}

/// The first half of a session as its harness had written it when it was first read: half the lines of a JSONL
/// or Markdown file, half the messages of a JSON session (or trajectory), half a Cline task's requests with the
/// UI messages of those requests.
fn first_half(src: &Path, dst: &Path) {
    let half = |a: &mut Vec<serde_json::Value>| a.truncate(a.len() / 2);
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        let read = |f: &str| -> Vec<serde_json::Value> {
            serde_json::from_slice(&std::fs::read(src.join(f)).unwrap()).unwrap()
        };
        let mut api = read("api_conversation_history.json");
        half(&mut api);
        let n = api.len() as i64;
        let ui: Vec<serde_json::Value> = read("ui_messages.json")
            .into_iter()
            .filter(|m| m["conversationHistoryIndex"].as_i64().unwrap_or(-1) < n - 1)
            .collect();
        let write = |f: &str, v: &Vec<serde_json::Value>| {
            std::fs::write(dst.join(f), serde_json::to_vec(v).unwrap()).unwrap()
        };
        write("api_conversation_history.json", &api);
        write("ui_messages.json", &ui);
        return;
    }
    let text = std::fs::read_to_string(src).unwrap();
    let name = src.to_string_lossy();
    if name.ends_with(".jsonl") || name.ends_with(".md") {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        std::fs::write(dst, lines[..lines.len() / 2].concat()).unwrap();
        return;
    }
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    if let Some(a) = doc.as_array_mut() {
        a.truncate(a.len() / 2);
    }
    for key in ["messages", "trajectory", "history"] {
        if let Some(a) = doc.get_mut(key).and_then(|a| a.as_array_mut()) {
            let keep = a.len() / 2;
            a.truncate(keep);
        }
    }
    std::fs::write(dst, serde_json::to_vec(&doc).unwrap()).unwrap();
}

fn copy_whole(src: &Path, dst: &Path) {
    if src.is_dir() {
        for e in std::fs::read_dir(src).unwrap() {
            let e = e.unwrap().path();
            std::fs::copy(&e, dst.join(e.file_name().unwrap())).unwrap();
        }
    } else {
        std::fs::copy(src, dst).unwrap();
    }
}

#[test]
fn every_harness_read_half_written_and_then_whole_gives_the_figures_of_one_import() {
    let mut seen = std::collections::BTreeSet::new();
    for harness in std::fs::read_dir(samples()).unwrap() {
        let harness = harness.unwrap().path();
        if !harness.is_dir() {
            continue;
        }
        for s in std::fs::read_dir(&harness).unwrap() {
            let s = s.unwrap().path();
            let name = s.file_name().unwrap().to_string_lossy().into_owned();
            // sessions: files, and Cline's task folders (a Claude Code project folder is several sessions)
            let task = s.join("api_conversation_history.json").is_file();
            if (s.is_dir() && !task)
                || name.ends_with(".input.history")
                || name.ends_with(".meta.json")
            {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            let live = dir.path().join(&name);
            // a session's subagents folder beside it goes with it, whole (they are their own files)
            let stem = s.with_extension("");
            if s.is_file() && stem.is_dir() {
                let sub = dir.path().join(stem.file_name().unwrap()).join("subagents");
                std::fs::create_dir_all(&sub).unwrap();
                copy_whole(&stem.join("subagents"), &sub);
            }
            let mut once = Store::open(dir.path().join("once.db")).unwrap();
            let o = import(&mut once, &s);
            assert_eq!(o.status, "new", "{name}: {:?}", o.error);
            let mut grown = Store::open(dir.path().join("grown.db")).unwrap();
            first_half(&s, &live);
            let first = import(&mut grown, &live);
            assert_eq!(first.status, "new", "{name}: {:?}", first.error);
            copy_whole(&s, &live);
            let again = import(&mut grown, &live);
            assert_eq!(again.status, "grown", "{name}: {:?}", again.error);
            assert_eq!(again.conversations[0], first.conversations[0], "{name}");
            assert_eq!(
                grown.conversations().unwrap().len(),
                once.conversations().unwrap().len(),
                "{name}: nothing counted twice"
            );
            assert_eq!(stats(&mut grown).rows, stats(&mut once).rows, "{name}");
            assert_eq!(
                path_texts(&grown, &again.conversations[0]),
                path_texts(&once, &o.conversations[0]),
                "{name}"
            );
            assert_eq!(import(&mut grown, &live).status, "unchanged", "{name}");
            // the file is known as the conversation's (what the window follows)
            let (path, read_to) = grown.source_of(&first.conversations[0]).unwrap().unwrap();
            // (a Cline task by its requests file)
            let file = match live.is_dir() {
                true => live.join("api_conversation_history.json"),
                false => live.clone(),
            };
            assert_eq!(Path::new(&path), file.canonicalize().unwrap(), "{name}");
            assert_eq!(read_to, std::fs::metadata(&file).unwrap().len(), "{name}");
            seen.insert(harness.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    // every harness of the samples took part
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [
            "aider",
            "claude-code",
            "cline",
            "codex",
            "copilot-cli",
            "gemini-cli",
            "opencode",
            "pi",
            "trajectories"
        ]
    );
}

/// An Aider history with one edit that failed: `sent_back` writes the failure as Aider does (an output the model is
/// sent), else as an older reader read it (part of the next reply); `usage` is the token line of the last two
/// replies.
fn aider_history(sent_back: bool, usage: [&str; 2]) -> String {
    let failure =
        "# 1 SEARCH/REPLACE block failed to match!\n\nThe SEARCH section must exactly match  \n";
    let failure = if sent_back {
        format!("> {failure}")
    } else {
        failure.to_string()
    };
    format!(
        "# aider chat started at 2026-03-02 10:00:00  \n\n> Aider v0.84.0  \n> Model: claude-sonnet-4-5 with diff \
         edit format  \n\n#### fix the bug  \n\nHere is the edit.\n\n> Tokens: 2.3k sent, 50 received.  \n\
         {failure}\nThe fixed edit.\n\n> Tokens: {}  \n\n#### thanks  \n\nDone.\n\n> Tokens: {}  \n",
        usage[0], usage[1]
    )
}

#[test]
fn a_session_read_otherwise_by_a_newer_reader_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".aider.chat.history.md");
    let fixed = ["2.6k sent, 40 received.", "2.9k sent, 9 received."];
    // what the store holds from an older reader, then the file as this reader reads it
    let figures = |s: &mut Store| {
        let conv = s.conversations().unwrap()[0].id.clone();
        let st = stats(s);
        let r = &st.rows[0];
        (
            r.turns,
            r.input_tokens,
            r.output_tokens,
            path_texts(s, &conv),
        )
    };
    let (_, after, once, _) = helpers::read_again(
        &file,
        aider_history(false, fixed).as_bytes(),
        aider_history(true, fixed).as_bytes(),
        figures,
    );
    // the tip is the new reading: the failure is the user's message, not the model's
    assert_eq!(after, once);
    assert_eq!(once.0, 3);

    // replies the file now has in place of others (requests made again: their own usage) count beside them
    let mut r = Store::open_in_memory().unwrap();
    std::fs::write(&file, aider_history(false, fixed)).unwrap();
    import(&mut r, &file);
    std::fs::write(
        &file,
        aider_history(true, ["2.7k sent, 45 received.", "3.0k sent, 8 received."]),
    )
    .unwrap();
    import(&mut r, &file);
    let st = stats(&mut r);
    assert_eq!(
        st.rows[0].turns, 5,
        "the first reply is held; both fixed replies and both answers to thanks count"
    );
}

#[test]
fn what_a_newer_reader_records_of_a_session_is_added_to_the_one_the_store_holds() {
    // Codex's reader now names where the rollout recorded what Codex sends beside the messages (`sends_beside`): a
    // session stored by an older reader gets it when read again; what the store recorded stays as it was
    use cairn::model::{NewMessage, Role};
    use cairn::store::{ImportedConversation, ImportedMessage};
    use serde_json::json;
    let conv = |meta: serde_json::Value| ImportedConversation {
        title: None,
        messages: vec![ImportedMessage {
            parent: None,
            message: NewMessage::text(Role::User, "hi"),
        }],
        tip: Some(0),
        checkpoints: Vec::new(),
        meta,
        linked_to: None,
    };
    let mut s = Store::open_in_memory().unwrap();
    let ids = s
        .import_file(
            "h1",
            "rollout.jsonl",
            &[conv(json!({"source_key": "k", "records": 1}))],
            None,
        )
        .unwrap();
    let merged = s
        .merge_file(
            "h2",
            "rollout.jsonl",
            &[conv(
                json!({"source_key": "k", "records": 2, "sends_beside": ["/session_meta/x"]}),
            )],
            None,
        )
        .unwrap();
    assert_eq!(merged[0].conversation, ids[0]);
    assert_eq!(merged[0].added, 0);
    assert_eq!(merged[0].recorded, vec!["sends_beside".to_string()]);
    let meta = s.conversation_meta(&ids[0]).unwrap();
    assert_eq!(meta["sends_beside"], json!(["/session_meta/x"]));
    assert_eq!(meta["records"], json!(1), "{meta}");
    assert_eq!(meta["source_key"], json!("k"));
}

#[test]
fn a_session_an_older_reader_read_is_read_whole_once_more() {
    // a Claude Code file is read from where its import stopped, and an unchanged one not at all: a store made by a
    // cairn that read it otherwise would keep that reading. Its listing says how it was read; one that does not
    // (an older store) is read whole once, and then known again from the listing
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("s.jsonl");
    std::fs::copy(fixture("claude-code/cc-compact-boundary.jsonl"), &live).unwrap();
    let db = dir.path().join("s.db");
    let mut s = Store::open(&db).unwrap();
    let first = import(&mut s, &live);
    assert_eq!(first.status, "new", "{:?}", first.error);
    drop(s);
    let c = rusqlite::Connection::open(&db).unwrap();
    let n = c
        .execute(
            "UPDATE sources SET linked = json_remove(linked, '$.reading')",
            [],
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(c);
    let mut s = Store::open(&db).unwrap();
    let again = import(&mut s, &live);
    assert_eq!(again.read_from, None, "read whole");
    assert!(
        again
            .report
            .notes
            .iter()
            .any(|n| n.contains("newer reader")),
        "{:?}",
        again.report.notes
    );
    assert_eq!(again.status, "unchanged");
    assert_eq!(again.conversations, first.conversations);
    let third = import(&mut s, &live);
    assert_eq!(
        third.read_from,
        Some(std::fs::metadata(&live).unwrap().len())
    );
}

#[test]
fn a_title_claude_code_gave_a_grown_session_is_taken_from_its_new_lines() {
    let lines = long_session(6);
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    let half = lines.len() / 2;
    std::fs::write(&live, lines[..half].join("\n") + "\n").unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let first = import(&mut s, &live);
    let conv = first.conversations[0].clone();
    assert_eq!(
        s.conversation(&conv).unwrap().title.as_deref(),
        Some("step 0: read the files")
    );
    // the session grew, and Claude Code named it (its own title, then the user's rename)
    let mut grown: Vec<String> = lines.clone();
    grown.push(
        serde_json::json!({"type": "ai-title", "aiTitle": "Reading the step files", "sessionId": "5e55"})
            .to_string(),
    );
    std::fs::write(&live, grown.join("\n") + "\n").unwrap();
    let again = import(&mut s, &live);
    assert_eq!(
        (again.status, again.conversations.clone()),
        ("grown", vec![conv.clone()])
    );
    assert!(
        again.read_from.is_some(),
        "read from where the import stopped"
    );
    assert_eq!(
        s.conversation(&conv).unwrap().title.as_deref(),
        Some("Reading the step files")
    );
    grown.push(
        serde_json::json!({"type": "custom-title", "customTitle": "Step files", "sessionId": "5e55"}).to_string(),
    );
    std::fs::write(&live, grown.join("\n") + "\n").unwrap();
    let renamed = import(&mut s, &live);
    assert!(renamed.read_from.is_some());
    assert_eq!(
        s.conversation(&conv).unwrap().title.as_deref(),
        Some("Step files")
    );
}

#[test]
fn a_thread_a_harness_rewrites_whole_as_it_grows_is_one_conversation_at_every_cut() {
    // Amp rewrites its thread's document, and Goose's export is its session whole: cut after every message, read,
    // then read whole
    for (f, key) in [
        (
            "amp/T-4b1f7c2e-9a3d-4e8b-b5c6-0d2f8a1e7c94.json",
            "messages",
        ),
        ("goose/20251205_3.json", "conversation"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut once = Store::open(dir.path().join("once.db")).unwrap();
        let o = import(&mut once, &fixture(f));
        assert_eq!(o.status, "new", "{f}: {:?}", o.error);
        let want = stats(&mut once);
        let want_path = path_texts(&once, &o.conversations[0]);
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(fixture(f)).unwrap()).unwrap();
        let n = doc[key].as_array().unwrap().len();
        let name = fixture(f).file_name().unwrap().to_owned();
        for k in 1..n {
            let sub = tempfile::tempdir().unwrap();
            let live = sub.path().join(&name);
            let mut cut = doc.clone();
            cut[key] = serde_json::Value::Array(doc[key].as_array().unwrap()[..k].to_vec());
            std::fs::write(&live, serde_json::to_vec(&cut).unwrap()).unwrap();
            let mut s = Store::open(sub.path().join("s.db")).unwrap();
            let first = import(&mut s, &live);
            if first.error.is_some() {
                // nothing the model read yet
                assert_eq!(first.status, "refused", "{f} at {k}");
                continue;
            }
            std::fs::copy(fixture(f), &live).unwrap();
            let again = import(&mut s, &live);
            assert!(
                again.status == "grown" || again.status == "unchanged",
                "{f} at {k}: {again:?}"
            );
            assert_eq!(again.conversations[0], first.conversations[0], "{f} at {k}");
            assert_eq!(s.conversations().unwrap().len(), 1, "{f} at {k}");
            assert_eq!(stats(&mut s).rows, want.rows, "{f} at {k}");
            assert_eq!(
                path_texts(&s, &again.conversations[0]),
                want_path,
                "{f} at {k}"
            );
        }
    }
}

#[test]
fn a_claude_code_session_with_rendered_reminders_imported_before_v19_is_found_again_when_read_whole()
 {
    let f = fixture("claude-code/cc-2.1.332-rendered-attachments.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let conv = {
        let mut s = Store::open(&db).unwrap();
        import(&mut s, &f).conversations[0].clone()
    };
    // as a store before v19 named the session: by the fingerprint of its whole first message, the reminders
    // Claude Code rendered beside the prompt included
    {
        let s = Store::open(&db).unwrap();
        let first = s.active_path(&conv).unwrap()[0].clone();
        assert!(!cairn::model::rendered_beside(&first.meta).is_empty());
        let whole = cairn::store::fingerprint("", first.role, &first.content);
        let own = cairn::store::own_fingerprint(first.role, &first.content, &first.meta);
        assert_ne!(whole, own);
        drop(s);
        let c = rusqlite::Connection::open(&db).unwrap();
        let key: String = c
            .query_row(
                "SELECT json_extract(meta, '$.source_key') FROM conversations WHERE id = ?1",
                [&conv],
                |r| r.get(0),
            )
            .unwrap();
        assert!(key.contains(&own), "{key}");
        c.execute(
            "UPDATE conversations SET meta = json_set(meta, '$.source_key', ?1) WHERE id = ?2",
            rusqlite::params![key.replace(&own, &whole), conv],
        )
        .unwrap();
        c.execute_batch("PRAGMA user_version = 18;").unwrap();
    }
    // the same session in another folder (a copy, or the file read whole once more): one conversation
    let mut s = Store::open(&db).unwrap();
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    let again = copy.join(f.file_name().unwrap());
    std::fs::copy(&f, &again).unwrap();
    let o = import(&mut s, &again);
    assert_eq!(o.conversations, vec![conv], "{o:?}");
    assert_eq!(s.conversations().unwrap().len(), 1);
}
