//! Nothing leaves that should not: a corpus of 40+ families of real-format fake secrets, and code that only names
//! a key, through the redactor and through every way out of the CLI (list, show, tree, search, resume, diff, every
//! export format, snapshot pages' factsheet), with the secrets in titles, prompts, tool names, tool inputs and
//! tool output.

#![allow(clippy::unwrap_used)]

#[path = "support/secrets.rs"]
mod corpus;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

#[test]
fn every_family_is_redacted_and_code_that_names_a_key_is_not() {
    let secrets = corpus::secrets();
    let families: std::collections::BTreeSet<&str> = secrets.iter().map(|s| s.0).collect();
    assert!(families.len() >= 40, "{}", families.len());
    let mut missed = Vec::new();
    for (family, line, secret) in &secrets {
        let (out, n) = cairn::redact::text(line);
        if out.contains(secret.as_str()) || n == 0 {
            missed.push(format!("{family}: {out}"));
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
    for code in corpus::lookalikes() {
        let (out, n) = cairn::redact::text(code);
        assert_eq!((out.as_ref(), n), (code, 0), "{code}");
    }
}

#[test]
fn a_secret_across_any_cut_of_a_huge_line_is_still_found() {
    // a single line of several pieces' length, the token placed across each boundary a blind cut would make
    let secrets = corpus::secrets();
    let token = &secrets
        .iter()
        .find(|s| s.0 == "github classic token")
        .unwrap()
        .2;
    for at in [64 * 1024 - 10, 2 * 64 * 1024 - 20, 3 * 64 * 1024 - 5] {
        let mut line = "x".repeat(at);
        line.push(' ');
        line.push_str(token);
        line.push(' ');
        line.push_str(&"y".repeat(100_000));
        let (out, n) = cairn::redact::text(&line);
        assert!(n >= 1 && !out.contains(token.as_str()), "at {at}");
    }
}

fn cairn(db: &Path, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
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
    (o.stdout, o.stderr)
}

/// A Claude Code session whose summary line (its title), prompts, tool names, inputs and output carry every secret.
fn write_session(path: &Path, session: &str, tail: &str) {
    let all: Vec<String> = corpus::secrets().into_iter().map(|s| s.1).collect();
    let first = &all[0];
    let mut lines = vec![
        json!({"type": "summary", "summary": format!("deploy with {first}"), "leafUuid": "a9"}),
    ];
    let mut parent = Value::Null;
    for (i, chunk) in all.chunks(4).enumerate() {
        let (u, a, r) = (format!("u{i}"), format!("a{i}"), format!("r{i}"));
        let text = chunk.join("\n");
        lines.push(json!({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": session,
            "timestamp": format!("2026-11-02T10:{i:02}:00Z"), "message": {"role": "user", "content": text.clone()}}));
        lines.push(json!({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": session,
            "timestamp": format!("2026-11-02T10:{i:02}:05Z"),
            "message": {"id": format!("m{i}"), "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": format!("running {}", chunk[0])},
                            {"type": "tool_use", "id": format!("t{i}"), "name": format!("run {}", chunk[0]),
                             "input": {"command": text.clone()}}]}}));
        lines.push(json!({"type": "user", "uuid": r, "parentUuid": a, "sessionId": session,
            "timestamp": format!("2026-11-02T10:{i:02}:09Z"),
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"),
                "content": format!("{text}\n{tail}")}]}}));
        parent = Value::String(r);
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").unwrap();
}

#[test]
fn no_way_out_of_the_cli_lets_a_secret_through() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_session(&a, "sa", "done");
    write_session(&b, "sb", "done, differently");
    let (out, _) = cairn(&db, &["import", a.to_str().unwrap(), b.to_str().unwrap()]);
    let ids: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.len() == 16 && w.bytes().all(|c| c.is_ascii_hexdigit()))
        .map(str::to_string)
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let (c, d) = (ids[0].as_str(), ids[1].as_str());
    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut run = |args: &[&str]| {
        let (o, e) = cairn(&db, args);
        outputs.push((format!("{args:?}"), [o, e].concat()));
    };
    run(&["list"]);
    run(&["list", "--json"]);
    run(&["show", c]);
    run(&["show", c, "--json"]);
    run(&["tree", c]);
    run(&["search", "running"]);
    run(&["search", "running", "--json"]);
    run(&["resume", c, "--max-messages", "40"]);
    run(&["diff", c, d]);
    run(&["diff", c, d, "--json"]);
    for f in ["html", "markdown", "jsonl", "anthropic", "openai"] {
        run(&["export", c, "--format", f]);
    }
    let pages = dir.path().join("pages");
    run(&["render", c, "--out", pages.to_str().unwrap()]);
    outputs.push((
        "factsheet".into(),
        std::fs::read(pages.join("factsheet.txt")).unwrap_or_default(),
    ));
    outputs.push((
        "manifest".into(),
        std::fs::read(pages.join("manifest.json")).unwrap_or_default(),
    ));
    let mut leaks = Vec::new();
    for (family, _, secret) in corpus::secrets() {
        for (what, bytes) in &outputs {
            let text = String::from_utf8_lossy(bytes);
            // JSON escapes newlines and quotes; a secret is looked for in both spellings
            let escaped = serde_json::to_string(&secret).unwrap();
            if text.contains(secret.as_str()) || text.contains(escaped.trim_matches('"')) {
                leaks.push(format!("{family} in {what}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "{} leaks:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

#[test]
fn an_export_states_as_many_redactions_as_it_shows() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    let secrets = corpus::secrets();
    let shown = &secrets
        .iter()
        .find(|s| s.0 == "github classic token")
        .unwrap()
        .1;
    let hidden = &secrets
        .iter()
        .find(|s| s.0 == "stripe secret key")
        .unwrap()
        .1;
    // one secret in the prompt, another only in metadata the page does not show
    let lines = [
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1", "cwd": hidden,
               "timestamp": "2026-11-02T10:00:00Z", "message": {"role": "user", "content": format!("use {shown}")}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:05Z",
               "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [{"type": "text", "text": "ok"}]}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&f, text.join("\n") + "\n").unwrap();
    let db = dir.path().join("s.db");
    let (out, _) = cairn(&db, &["import", f.to_str().unwrap()]);
    let conv = String::from_utf8(out)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let (md, err) = cairn(&db, &["export", &conv, "--format", "markdown"]);
    let md = String::from_utf8(md).unwrap();
    // shown twice (the title is the prompt), the metadata's one not at all
    let marks = md.matches("[redacted").count();
    assert_eq!(marks, 2, "{md}");
    assert!(md.contains("2 secret(s) redacted"), "{md}");
    assert!(String::from_utf8_lossy(&err).contains("2 secret(s) redacted"));
}
