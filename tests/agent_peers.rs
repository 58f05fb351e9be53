//! The harnesses' own readers agree with what cairn writes for them: pi's `pi --export` renders every message of a
//! path exported as a pi session (in Chromium, where it is installed), and `ccusage --offline` counts the same
//! tokens in a Claude Code session exported by cairn as in its source.
//!
//! The peers come from npm: `scripts/test` installs them into `target/peers` (pinned versions). Where they are
//! not there (npm could not reach the registry), each test says so and passes without checking.

#[path = "support/helpers.rs"]
mod helpers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::export::agent::{self, Harness};
use cairn::model::{Block, Role};
use cairn::reclaim::Settings;
use cairn::store::Store;
use serde_json::Value;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples")
}

/// A peer's command: in `target/peers` (where scripts/test installs it), else on the PATH; only one that runs here
/// (`--version`: an npm package can install on a Node too old to run it).
fn peer(name: &str) -> Option<PathBuf> {
    let p = find_peer(name)?;
    let runs = Command::new(&p)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        eprintln!("{name} is installed but does not run here (its Node is too old?)");
    }
    runs.then_some(p)
}

fn find_peer(name: &str) -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/peers/node_modules/.bin")
        .join(name);
    if local.exists() {
        return Some(local);
    }
    helpers::on_path(name)
}

fn skipped(name: &str) {
    eprintln!(
        "skipped: {name} not found in target/peers or on the PATH (scripts/test installs it with npm; the registry \
         could not be reached?)"
    );
}

use helpers::chromium;

fn import(s: &mut Store, p: &Path) -> String {
    let Outcome::Imported(out) = commands::run(
        s,
        &Settings::default(),
        Action::Import {
            paths: vec![p.to_path_buf()],
            format: None,
        },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap() else {
        panic!("import")
    };
    out.into_iter().next().unwrap().conversations[0].clone()
}

/// The text pi's page shows, once its script has drawn it.
fn rendered_text(browser: &Path, page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--virtual-time-budget=5000",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    // the text between tags, scripts and styles left out, entities decoded, whitespace collapsed
    let mut text = String::new();
    let mut rest = dom.as_str();
    while let Some(i) = rest.find('<') {
        text.push_str(&rest[..i]);
        text.push(' ');
        rest = &rest[i..];
        let skip_to = ["<script", "<style"]
            .iter()
            .find(|t| rest.starts_with(**t))
            .map(|t| format!("</{}", &t[1..]));
        let end = match skip_to {
            Some(close) => rest.find(&close).map_or(rest.len(), |k| k + close.len()),
            None => 0,
        };
        rest = &rest[end..];
        rest = rest.find('>').map_or("", |k| &rest[k + 1..]);
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A line of a message that Markdown shows as it is (letters, digits, spaces and plain punctuation), if it has one.
fn plain_line(t: &str) -> Option<String> {
    let mut fenced = false;
    t.lines()
        .map(str::trim)
        // outside code blocks (pi folds long ones)
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .filter(|l| l.len() >= 20 && l.len() <= 200)
        .find(|l| {
            l.chars()
                .all(|c| c.is_alphanumeric() || " ,.;:?!'()-".contains(c))
                && l.chars().next().is_some_and(char::is_alphabetic)
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
fn pi_renders_every_message_of_a_path_exported_as_pi() {
    let Some(pi) = peer("pi") else {
        return skipped("pi");
    };
    let browser = chromium();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(samples().join("pi"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    sources.sort();
    // and one from another harness
    sources.push(samples().join("claude-code/cc-2.0.5-image-paste.jsonl"));
    let mut shown = 0;
    for src in sources {
        let mut s = Store::open_in_memory().unwrap();
        let conv = import(&mut s, &src);
        let f = agent::write(&s, &conv, None, Harness::Pi, true, None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // pi migrates the file it reads in place: it reads a copy
        let copy = dir.path().join("session.jsonl");
        std::fs::write(&copy, &f.text).unwrap();
        let page = dir.path().join("session.html");
        let out = Command::new(&pi)
            .arg("--export")
            .arg(&copy)
            .arg(&page)
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success() && page.exists(),
            "{}: pi --export failed: {}{}",
            src.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // the file pi read is the file cairn wrote: nothing needed migrating
        assert_eq!(
            std::fs::read_to_string(&copy).unwrap(),
            f.text,
            "{}: pi rewrote the file",
            src.display()
        );
        // every entry is in the page's data, the leaf the last one
        let html = std::fs::read_to_string(&page).unwrap();
        let start = html.find("id=\"session-data\"").unwrap();
        let body = &html[start..];
        let body = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
        use base64::Engine as _;
        let data: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(body.trim())
                .unwrap(),
        )
        .unwrap();
        let written: Vec<Value> = f
            .text
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            data["entries"].as_array().unwrap().len(),
            written.len(),
            "{}",
            src.display()
        );
        assert_eq!(data["leafId"], written.last().unwrap()["id"]);
        // and pi's page draws every prompt and reply
        if let Some(b) = &browser {
            let text = rendered_text(b, &page);
            for m in s.active_path(&conv).unwrap() {
                if !matches!(m.role, Role::User | Role::Assistant) {
                    continue;
                }
                let t: String = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                if let Some(line) = plain_line(&t) {
                    assert!(
                        text.contains(&line),
                        "{}: pi's page does not show {line:?}",
                        src.display()
                    );
                    shown += 1;
                }
            }
        }
    }
    if browser.is_some() {
        assert!(shown >= 50, "only {shown} messages checked");
    } else {
        eprintln!("chromium not found: pi's pages were checked for their data, not drawn");
    }
}

/// ccusage's token totals of the Claude Code sessions under `config` (its `projects/` folder).
fn ccusage_totals(ccusage: &Path, config: &Path) -> Value {
    let out = Command::new(ccusage)
        .args(["daily", "--json", "--offline"])
        .env("CLAUDE_CONFIG_DIR", config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ccusage: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["totals"];
    serde_json::json!({
        "input": t["inputTokens"], "output": t["outputTokens"],
        "cache_write": t["cacheCreationTokens"], "cache_read": t["cacheReadTokens"],
    })
}

#[test]
fn ccusage_counts_the_same_tokens_in_an_exported_claude_code_session_as_in_its_source() {
    let Some(ccusage) = peer("ccusage") else {
        return skipped("ccusage");
    };
    let dir = samples().join("claude-code");
    let mut linear = 0;
    for name in [
        "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "cc-2.0.5-image-paste.jsonl",
        "cc-rewind-fork-2.1.42.jsonl",
    ] {
        let src = dir.join(name);
        let a = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(a.path().join("projects/p")).unwrap();
        std::fs::copy(&src, a.path().join("projects/p").join(name)).unwrap();
        // its subagents, which the export writes beside it too
        let subs = dir.join(name.trim_end_matches(".jsonl")).join("subagents");
        if subs.is_dir() {
            let to = a
                .path()
                .join("projects/p")
                .join(name.trim_end_matches(".jsonl"))
                .join("subagents");
            std::fs::create_dir_all(&to).unwrap();
            for e in std::fs::read_dir(&subs).unwrap().flatten() {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
        let mut s = Store::open_in_memory().unwrap();
        let conv = import(&mut s, &src);
        let home = tempfile::tempdir().unwrap();
        let Outcome::Continued(c) = commands::run(
            &mut s,
            &Settings::default(),
            Action::Continue {
                conversation: conv.clone(),
                at: None,
                harness: Harness::ClaudeCode,
                home: cairn::discover::Home::at(home.path()),
                cwd: None,
                redact: true,
            },
            &Quiet,
            &AtomicBool::new(false),
        )
        .unwrap() else {
            panic!("continue")
        };
        assert!(c.file.starts_with(home.path().join(".claude/projects")));
        let exported = ccusage_totals(&ccusage, &home.path().join(".claude"));
        // what the path recorded (a rewound branch is not on it), the subagents it spawned included
        let mut on_path = [0u64; 4];
        let mut convs = vec![conv.clone()];
        convs.extend(
            s.conversations()
                .unwrap()
                .into_iter()
                .filter(|c| c.linked_to.as_deref() == Some(conv.as_str()) && c.spawned_by.is_some())
                .map(|c| c.id),
        );
        for id in convs {
            for u in s.active_path(&id).unwrap().iter().filter_map(|m| m.usage) {
                on_path[0] += u.input_tokens;
                on_path[1] += u.output_tokens;
                on_path[2] += u.cache_creation_input_tokens;
                on_path[3] += u.cache_read_input_tokens;
            }
        }
        let path_totals = serde_json::json!({"input": on_path[0], "cache_write": on_path[2],
                                             "cache_read": on_path[3]});
        let without_output = |v: &Value| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove("output");
            v
        };
        assert_eq!(
            without_output(&exported),
            path_totals,
            "{name}: against the path"
        );
        // a session without branches is its path: ccusage counts the source and the export alike
        if s.conversation(&conv).unwrap().messages as usize == s.active_path(&conv).unwrap().len() {
            let source = ccusage_totals(&ccusage, a.path());
            assert!(source["output"].as_u64().unwrap() > 0, "{name}: {source}");
            assert_eq!(source, exported, "{name}");
            linear += 1;
        }
    }
    assert!(linear >= 1);
}
