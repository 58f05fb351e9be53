//! The harnesses' own readers agree with what cairn writes for them: pi's `pi --export` renders every message of a
//! path exported as a pi session (in Chromium, where it is installed), and `ccusage --offline` counts the same
//! tokens in a Claude Code session exported by cairn as in its source; Claude Code, pi, Codex and Gemini CLI resume
//! a session cairn wrote for them, and opencode one it imported from cairn's document, and each sends, to a local
//! stand-in for its API, what cairn sends (and nothing of a reply the source left out).
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

/// `cairn continue` of a conversation into `harness` under the home folder `home`.
fn continued(
    s: &mut Store,
    conv: &str,
    harness: Harness,
    home: &Path,
    cwd: Option<&str>,
    redact: bool,
) -> cairn::commands::Continued {
    let Outcome::Continued(c) = commands::run(
        s,
        &Settings::default(),
        Action::Continue {
            conversation: conv.to_string(),
            at: None,
            harness,
            home: cairn::discover::Home::at(home),
            cwd: cwd.map(str::to_string),
            redact,
        },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap() else {
        panic!("continue")
    };
    c
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
        let c = continued(&mut s, &conv, Harness::ClaudeCode, home.path(), None, true);
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

/// The requests a stand-in received: each one's path and body.
type Requests = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;

/// A stand-in for a provider's API on a local port: keeps the path and body of each request and answers each as
/// `answer` says for its path and body (a content type and a body).
fn stand_in(answer: fn(&str, &Value) -> (&'static str, String)) -> (u16, Requests) {
    use std::io::{BufRead as _, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests: Requests = Default::default();
    let log = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(32) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut len = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (ctype, reply) = answer(&path, &body);
            log.lock().unwrap().push((path, body));
            let _ignored = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (port, requests)
}

/// A stand-in for Gemini's API: one short reply to each request (streamed where it was asked for so).
fn gemini_stand_in() -> (u16, Requests) {
    stand_in(|path, _| {
        let reply = serde_json::json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11}});
        if path.contains("stream") {
            ("text/event-stream", format!("data: {reply}\r\n\r\n"))
        } else {
            ("application/json", reply.to_string())
        }
    })
}

/// A stand-in for an OpenAI-compatible chat completions API: one short streamed reply to each request.
fn chat_completions_stand_in() -> (u16, Requests) {
    stand_in(|_, _| {
        let chunk = serde_json::json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": null}]});
        let end = serde_json::json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}});
        (
            "text/event-stream",
            format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n"),
        )
    })
}

/// The output of a child once it exits; killed, and the test failed, if it runs longer than `limit`.
fn finished_within(
    mut child: std::process::Child,
    limit: std::time::Duration,
) -> std::process::Output {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("the peer ran longer than {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Lines of text a Gemini request's contents send (calls by name, responses by their output), or cairn's context.
fn gemini_lines(contents: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for c in contents {
        for p in c["parts"].as_array().into_iter().flatten() {
            let text = if let Some(t) = p["text"].as_str() {
                t.to_string()
            } else if let Some(name) = p.pointer("/functionCall/name").and_then(Value::as_str) {
                format!("call {name}")
            } else if let Some(r) = p.pointer("/functionResponse/response") {
                r["output"]
                    .as_str()
                    .or(r["error"].as_str())
                    .unwrap_or("")
                    .to_string()
            } else {
                continue;
            };
            out.extend(
                text.lines()
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty()),
            );
        }
    }
    out
}

/// Lines of text cairn sends for a conversation; its system messages left out (Claude Code, Gemini CLI and opencode
/// write their own system prompt: the export says it leaves them out).
fn context_lines(s: &Store, conv: &str) -> Vec<String> {
    let mut out = Vec::new();
    for m in cairn::reclaim::assemble::assemble(s, conv)
        .unwrap()
        .messages
        .into_iter()
        .filter(|m| m.role != Role::System)
    {
        for b in &m.content {
            let text = match b {
                Block::Text { text } => text.clone(),
                Block::ToolUse { name, .. } => format!("call {name}"),
                Block::ToolResult { content, .. } => match content {
                    cairn::model::ToolResultContent::Text(t) => t.clone(),
                    cairn::model::ToolResultContent::Blocks(bs) => cairn::model::plain_text(bs),
                },
                _ => continue,
            };
            out.extend(
                text.lines()
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty()),
            );
        }
    }
    out
}

#[test]
fn gemini_cli_resumes_a_session_cairn_wrote_and_sends_what_cairn_sends() {
    let Some(gemini) = peer("gemini") else {
        return skipped("gemini");
    };
    let cases = [
        // Gemini CLI's own session with parallel calls and failed ones
        samples()
            .join("gemini-cli/gemini-cli-2026-03-3.1-pro-parallel-tool-calls-tool-errors.json"),
        // a Claude Code session compacted: Gemini CLI's compression record, its summary first
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code/cc-compact-boundary.jsonl"),
        // Gemini CLI's own log with its compression (a summary, and a turn kept from before it): sent as Gemini CLI
        // sent it, the summary first
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gemini-cli/session-2026-11-01T10-00-11111111.jsonl"),
    ];
    // a Claude Code compaction that kept the last two turns after its summary (`preservedSegment` anchored on it):
    // Claude Code, and so Gemini CLI, sends the summary first, then those turns
    let dir = tempfile::tempdir().unwrap();
    let segment = dir.path().join("cc-preserved-segment.jsonl");
    let meta = r#""compactMetadata": {"trigger": "auto", "preTokens": 25573, "postTokens": 1500"#;
    let text = std::fs::read_to_string(&cases[1]).unwrap();
    assert!(text.contains(meta));
    let kept = r#", "preservedSegment": {"headUuid": "u4", "anchorUuid": "s1", "tailUuid": "a5"}"#;
    std::fs::write(&segment, text.replace(meta, &format!("{meta}{kept}"))).unwrap();
    for src in cases.into_iter().chain([segment]) {
        let mut s = Store::open_in_memory().unwrap();
        let conv = import(&mut s, &src);
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let cwd = project.path().canonicalize().unwrap();
        let cwd_text = cwd.to_string_lossy().into_owned();
        let c = continued(
            &mut s,
            &conv,
            Harness::GeminiCli,
            home.path(),
            Some(&cwd_text),
            false,
        );
        assert!(c.file.starts_with(home.path().join(".gemini/tmp")));
        std::fs::write(
            home.path().join(".gemini/settings.json"),
            // nothing but the stand-in is asked: no usage statistics, no update check
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": false},
                "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}"#,
        )
        .unwrap();
        let (port, requests) = gemini_stand_in();
        let out = Command::new(&gemini)
            .args([
                "-m",
                "gemini-2.5-flash",
                "--resume",
                &c.session_id,
                "-p",
                "say ok",
                "-o",
                "json",
            ])
            .current_dir(&cwd)
            .env("HOME", home.path())
            .env("GEMINI_API_KEY", "stand-in")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GOOGLE_GENAI_USE_VERTEXAI")
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // a Gemini CLI that hangs (a network it waits for) fails the test, not the run
        let out = finished_within(out, std::time::Duration::from_secs(180));
        let what = src.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            out.status.success(),
            "{what}: gemini: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let log = requests.lock().unwrap();
        let (_, body) = log
            .iter()
            .find(|(p, _)| p.contains(":streamGenerateContent"))
            .unwrap_or_else(|| panic!("{what}: no request reached the stand-in: {log:?}"));
        let contents = body["contents"].as_array().unwrap();
        let sent = gemini_lines(contents);
        let ours = context_lines(&s, &conv);
        // every line cairn sends, in order (Gemini CLI adds its session context and the acknowledgement of a
        // summary), then the new prompt
        let mut k = 0;
        for l in &ours {
            match sent[k..].iter().position(|x| x == l) {
                Some(p) => k += p + 1,
                None => panic!(
                    "{what}: {l:?} is not sent (or not in order)\nours {:?}\nsent {:?}",
                    &ours[..6.min(ours.len())],
                    &sent[..12.min(sent.len())]
                ),
            }
        }
        assert_eq!(sent.last().map(String::as_str), Some("say ok"), "{what}");
        // what cairn sends first (the first prompt; the summary of a compacted path) opens the first turn
        assert!(
            gemini_lines(&contents[..1]).contains(&ours[0]),
            "{what}: the first turn is {:?}",
            contents[0]
        );
        // nothing of the history cairn leaves out: as many calls as cairn sends
        let calls = |v: &[String]| v.iter().filter(|l| l.starts_with("call ")).count();
        assert_eq!(calls(&sent), calls(&ours), "{what}");
        assert!(calls(&ours) > 0 || what.starts_with("cc-"), "{what}");
    }
}

/// Lines of text an OpenAI chat request's messages send (calls by name, results by their text), and its images;
/// its system messages (the harness's own prompt) left out.
fn chat_lines(messages: &[Value]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut images = 0;
    for m in messages.iter().filter(|m| m["role"] != "system") {
        let mut texts: Vec<String> = match &m["content"] {
            Value::String(t) => vec![t.clone()],
            Value::Array(parts) => {
                images += parts.iter().filter(|p| p["type"] == "image_url").count();
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str().map(str::to_string))
                    .collect()
            }
            _ => Vec::new(),
        };
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            texts.push(format!(
                "call {}",
                c.pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ));
        }
        for t in texts {
            out.extend(
                t.lines()
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty()),
            );
        }
    }
    (out, images)
}

/// Panics unless every line cairn sends is in what the harness sent, in order (the harness adds its own lines,
/// and a provider's SDK may join a reply's texts into one).
fn sent_in_order(what: &str, ours: &[String], sent: &[String]) {
    let all = sent.join("\n");
    let mut k = 0;
    for l in ours {
        match all[k..].find(l.as_str()) {
            Some(p) => k += p + l.len(),
            None => panic!(
                "{what}: {:?} is not sent (or not in order)",
                l.chars().take(300).collect::<String>()
            ),
        }
    }
}

/// A stand-in for Anthropic's Messages API: one short reply to each request (streamed where it was asked for so),
/// a token count to a count.
fn messages_stand_in() -> (u16, Requests) {
    stand_in(|path, body| {
        if path.starts_with("/v1/messages/count_tokens") {
            return ("application/json", r#"{"input_tokens": 10}"#.to_string());
        }
        let model = body["model"].as_str().unwrap_or("claude-stand-in");
        let message = serde_json::json!({"id": "msg_stand_in", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}});
        if body["stream"] != true {
            let mut m = message;
            m["content"] = serde_json::json!([{"type": "text", "text": "ok"}]);
            m["stop_reason"] = serde_json::json!("end_turn");
            return ("application/json", m.to_string());
        }
        let events = [
            (
                "message_start",
                serde_json::json!({"type": "message_start", "message": message}),
            ),
            (
                "content_block_start",
                serde_json::json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                serde_json::json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "ok"}}),
            ),
            (
                "content_block_stop",
                serde_json::json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                serde_json::json!({"type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 1}}),
            ),
            ("message_stop", serde_json::json!({"type": "message_stop"})),
        ];
        let stream: String = events
            .iter()
            .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
            .collect();
        ("text/event-stream", stream)
    })
}

/// Lines of text an Anthropic request's messages send (calls by name, results by their text), and its images.
fn messages_lines(messages: &[Value]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut images = 0;
    let push = |t: &str, out: &mut Vec<String>| {
        out.extend(
            t.lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty()),
        );
    };
    for m in messages {
        let blocks = match &m["content"] {
            Value::String(t) => {
                push(t, &mut out);
                continue;
            }
            Value::Array(b) => b,
            _ => continue,
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("text") => push(b["text"].as_str().unwrap_or(""), &mut out),
                Some("image") => images += 1,
                Some("tool_use") => out.push(format!("call {}", b["name"].as_str().unwrap_or(""))),
                Some("tool_result") => match &b["content"] {
                    Value::String(t) => push(t, &mut out),
                    Value::Array(inner) => {
                        for x in inner {
                            match x["type"].as_str() {
                                Some("text") => push(x["text"].as_str().unwrap_or(""), &mut out),
                                Some("image") => images += 1,
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }
    (out, images)
}

/// The images cairn sends for a conversation.
fn context_images(s: &Store, conv: &str) -> usize {
    cairn::reclaim::assemble::assemble(s, conv)
        .unwrap()
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .map(|b| match b {
            Block::Image { .. } => 1,
            Block::ToolResult {
                content: cairn::model::ToolResultContent::Blocks(bs),
                ..
            } => bs
                .iter()
                .filter(|x| matches!(x, Block::Image { .. }))
                .count(),
            _ => 0,
        })
        .sum()
}

/// Panics if the harness sent a line of a reply the source recorded as failed and did not send again (pi's aborted
/// replies since 0.49.2).
fn failed_not_sent(what: &str, s: &Store, conv: &str, sent: &[String]) {
    for m in s.active_path(conv).unwrap() {
        if m.meta.pointer("/cairn/sent_again") != Some(&Value::Bool(false)) {
            continue;
        }
        for l in cairn::model::plain_text(&m.content).lines() {
            let l = l.trim();
            if l.len() > 20 {
                assert!(
                    !sent.iter().any(|x| x.contains(l)),
                    "{what}: the failed reply's {l:?} is sent"
                );
            }
        }
    }
}

/// A stand-in for OpenAI's Responses API: one short streamed reply to each request.
fn responses_stand_in() -> (u16, Requests) {
    stand_in(|_, _| {
        let item = serde_json::json!({"type": "message", "id": "msg_stand_in", "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": "ok", "annotations": []}]});
        let response = serde_json::json!({"id": "resp_stand_in", "object": "response", "created_at": 1,
            "status": "completed", "model": "m", "output": [item],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 11}});
        let mut started = response.clone();
        started["status"] = serde_json::json!("in_progress");
        started["output"] = serde_json::json!([]);
        let events = [
            serde_json::json!({"type": "response.created", "response": started}),
            serde_json::json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            serde_json::json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                               "item_id": "msg_stand_in", "delta": "ok"}),
            serde_json::json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            serde_json::json!({"type": "response.completed", "response": response}),
        ];
        let stream: String = events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
            .collect();
        ("text/event-stream", stream)
    })
}

/// A text as compared: its lines trimmed, blank ones left out.
fn normalized(t: &str) -> String {
    t.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The texts a Responses request's input sends, one per part (calls by name, outputs by their text), and its
/// images; the harness's own instructions (developer messages) left out.
fn responses_blocks(input: &[Value]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut images = 0;
    let mut parts = |v: &Value, out: &mut Vec<String>| match v {
        Value::String(t) => out.push(normalized(t)),
        Value::Array(ps) => {
            for p in ps {
                match p["type"].as_str() {
                    Some("input_text" | "output_text") => {
                        out.push(normalized(p["text"].as_str().unwrap_or("")))
                    }
                    Some("input_image") => images += 1,
                    _ => {}
                }
            }
        }
        _ => {}
    };
    for item in input {
        match item["type"].as_str() {
            Some("message") if item["role"] != "developer" && item["role"] != "system" => {
                parts(&item["content"], &mut out)
            }
            Some("function_call" | "custom_tool_call") => {
                out.push(format!("call {}", item["name"].as_str().unwrap_or("")))
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                parts(&item["output"], &mut out)
            }
            _ => {}
        }
    }
    out.retain(|t| !t.is_empty());
    (out, images)
}

/// The texts cairn sends for a conversation, one per block (calls by name, results by their text); its system
/// messages left out.
fn context_blocks(s: &Store, conv: &str) -> Vec<String> {
    let mut out = Vec::new();
    for m in cairn::reclaim::assemble::assemble(s, conv)
        .unwrap()
        .messages
        .into_iter()
        .filter(|m| m.role != Role::System)
    {
        for b in &m.content {
            out.push(match b {
                Block::Text { text } => normalized(text),
                Block::ToolUse { name, .. } => format!("call {name}"),
                Block::ToolResult { content, .. } => normalized(&match content {
                    cairn::model::ToolResultContent::Text(t) => t.clone(),
                    cairn::model::ToolResultContent::Blocks(bs) => cairn::model::plain_text(bs),
                }),
                _ => continue,
            });
        }
    }
    out.retain(|t| !t.is_empty());
    out
}

/// Whether the harness sent `ours` as `sent`: the same, or cut in the middle the way Codex cuts a long output (its
/// head, `…N chars truncated…` or `…N tokens truncated…`, its tail).
fn sent_as(ours: &str, sent: &str) -> bool {
    if ours == sent {
        return true;
    }
    let Some(mark) = sent.find(" truncated…") else {
        return false;
    };
    let Some(open) = sent[..mark].rfind('…') else {
        return false;
    };
    let (head, tail) = (&sent[..open], &sent[mark + " truncated…".len()..]);
    ours.len() > sent.len() && ours.starts_with(head) && ours.ends_with(tail)
}

/// How a harness resumes a session cairn wrote for it, against a local stand-in for its provider.
struct Resumes {
    harness: Harness,
    /// The harness's command.
    peer: &'static str,
    stand_in: fn() -> (u16, Requests),
    /// Writes what the harness reads to send to the stand-in on `port`, under the home folder.
    configure: fn(home: &Path, port: u16),
    /// The command lines that resume the session (the last asks "hello").
    runs: fn(&cairn::commands::Continued) -> Vec<Vec<String>>,
    /// What the environment sets (given the home folder and the stand-in's port) and what it must not hold.
    env: fn(home: &Path, port: u16) -> Vec<(&'static str, String)>,
    env_removed: &'static [&'static str],
    /// The request body's field that holds the conversation, and how its texts (calls as `call NAME`) and images
    /// are read.
    field: &'static str,
    read: fn(&[Value]) -> (Vec<String>, usize),
    /// Texts compared a block at a time (Codex cuts a long output in the middle), else a line at a time.
    blocks: bool,
}

/// Each case imported, continued in the harness, resumed by the harness itself: what it sends holds every text,
/// call and image cairn's context sends, in order, then the new prompt, and nothing of a reply the source left
/// out.
fn resumes_and_sends_what_cairn_sends(r: &Resumes, cases: &[PathBuf]) {
    let Some(exe) = peer(r.peer) else {
        return skipped(r.peer);
    };
    for src in cases {
        let what = src.file_name().unwrap().to_string_lossy().into_owned();
        let mut s = Store::open_in_memory().unwrap();
        let conv = import(&mut s, src);
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let cwd = project.path().canonicalize().unwrap();
        let cwd_text = cwd.to_string_lossy().into_owned();
        let c = continued(
            &mut s,
            &conv,
            r.harness,
            home.path(),
            Some(&cwd_text),
            false,
        );
        let (port, requests) = (r.stand_in)();
        (r.configure)(home.path(), port);
        for args in (r.runs)(&c) {
            let mut cmd = Command::new(&exe);
            cmd.args(&args)
                .current_dir(&cwd)
                // a harness takes its folder from PWD where it is set
                .env("PWD", &cwd)
                .env("HOME", home.path())
                // a harness reads a prompt from a stdin that is not a terminal, to its end
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            for (k, v) in (r.env)(home.path(), port) {
                cmd.env(k, v);
            }
            for k in r.env_removed {
                cmd.env_remove(k);
            }
            // a harness that hangs (a network it waits for) fails the test, not the run
            let out = finished_within(cmd.spawn().unwrap(), std::time::Duration::from_secs(180));
            assert!(
                out.status.success(),
                "{what}: {} {args:?}: {}{}",
                r.peer,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let log = requests.lock().unwrap();
        // the request of the turn: the one that holds the most of the conversation
        let body = log
            .iter()
            .map(|(_, b)| b)
            .filter(|b| b[r.field].is_array())
            .max_by_key(|b| b[r.field].as_array().map_or(0, Vec::len))
            .unwrap_or_else(|| panic!("{what}: no request reached the stand-in: {log:?}"));
        let (sent, images) = (r.read)(body[r.field].as_array().unwrap());
        let calls = |v: &[String]| v.iter().filter(|l| l.starts_with("call ")).count();
        let ours = if r.blocks {
            let ours = context_blocks(&s, &conv);
            let mut k = 0;
            for b in &ours {
                match sent[k..].iter().position(|x| sent_as(b, x)) {
                    Some(p) => k += p + 1,
                    None => panic!(
                        "{what}: {:?} is not sent (or not in order)",
                        b.chars().take(300).collect::<String>()
                    ),
                }
            }
            ours
        } else {
            // the summary of opencode's own compaction holds its reply's thinking as `[thinking] …`: opencode
            // sends it to another model as text
            let ours: Vec<String> = context_lines(&s, &conv)
                .into_iter()
                .map(|l| {
                    l.strip_prefix("[thinking] ")
                        .map_or(l.clone(), str::to_string)
                })
                .collect();
            sent_in_order(&what, &ours, &sent);
            ours
        };
        assert_eq!(sent.last().map(String::as_str), Some("hello"), "{what}");
        failed_not_sent(&what, &s, &conv, &sent);
        // nothing of the history cairn leaves out: as many calls, and images, as cairn sends
        assert_eq!(calls(&sent), calls(&ours), "{what}");
        assert_eq!(images, context_images(&s, &conv), "{what}: images");
    }
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// One session of each harness cairn writes for another, tagged with the harness that wrote it; each peer test
/// resumes those not its own, beside its own sessions.
fn others(own: Harness) -> Vec<PathBuf> {
    [
        // Claude Code's compaction (its summary first, then what followed), the reminders 2.1.33x rendered for the
        // model (before a prompt, beside tool results), a pasted image with thinking and calls
        (
            Harness::ClaudeCode,
            fixture("claude-code/cc-compact-boundary.jsonl"),
        ),
        (
            Harness::ClaudeCode,
            fixture("claude-code/cc-2.1.332-rendered-attachments.jsonl"),
        ),
        (
            Harness::ClaudeCode,
            samples().join("claude-code/cc-2.0.5-image-paste.jsonl"),
        ),
        // pi's compactions that keep the turns before them and calls never answered; a pi reply aborted (left out
        // of what pi sends after it, and of what every harness is handed)
        (
            Harness::Pi,
            samples().join("pi/pi-v3-compaction-tiny.jsonl"),
        ),
        (Harness::Pi, fixture("pi/pi-v3-aborted-reply.jsonl")),
        // Codex's thread with the agents it spawned
        (
            Harness::Codex,
            samples().join("codex/codex-desktop-spawn-agents-0.140.jsonl"),
        ),
        // Gemini CLI's failed and parallel calls
        (
            Harness::GeminiCli,
            samples()
                .join("gemini-cli/gemini-cli-2026-03-3.1-pro-parallel-tool-calls-tool-errors.json"),
        ),
        // opencode's auto-compaction: sent from its summary on
        (
            Harness::Opencode,
            samples()
                .join("opencode/opencode-1.4.3-export-auto-compaction-copilot-sonnet-4.6.json"),
        ),
    ]
    .into_iter()
    .filter(|(h, _)| *h != own)
    .map(|(_, p)| p)
    .collect()
}

#[test]
fn claude_code_resumes_a_session_cairn_wrote_and_sends_what_cairn_sends() {
    let r = Resumes {
        harness: Harness::ClaudeCode,
        peer: "claude",
        stand_in: messages_stand_in,
        configure: |_, _| {},
        runs: |c| {
            vec![
                [
                    "--resume",
                    &c.session_id,
                    "-p",
                    "hello",
                    "--model",
                    "claude-sonnet-4-6",
                ]
                .map(String::from)
                .to_vec(),
            ]
        },
        env: |_, port| {
            vec![
                ("ANTHROPIC_API_KEY", "sk-ant-stand-in".into()),
                ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}")),
                // nothing but the stand-in is asked: no telemetry, update check or error reports
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
                ("DISABLE_TELEMETRY", "1".into()),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("DISABLE_ERROR_REPORTING", "1".into()),
            ]
        },
        env_removed: &[
            "CLAUDE_CONFIG_DIR",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        ],
        field: "messages",
        read: messages_lines,
        blocks: false,
    };
    let mut cases = vec![
        // Claude Code's own compaction: its summary first, then what followed
        fixture("claude-code/cc-compact-boundary.jsonl"),
        // a pasted image, thinking, calls
        samples().join("claude-code/cc-2.0.5-image-paste.jsonl"),
        // a session rewound and forked: its active path
        samples().join("claude-code/cc-rewind-fork-2.1.42.jsonl"),
        // reminders Claude Code 2.1.33x rendered for the model, before a prompt and beside tool results
        fixture("claude-code/cc-2.1.332-rendered-attachments.jsonl"),
        // an opencode step that failed with a call's result: it stays home (Claude Code would send it), as a pi
        // reply aborted does
        fixture("opencode/opencode-errored-step.json"),
    ];
    cases.extend(others(Harness::ClaudeCode));
    resumes_and_sends_what_cairn_sends(&r, &cases);
}

#[test]
fn pi_resumes_a_session_cairn_wrote_and_sends_what_cairn_sends() {
    let r = Resumes {
        harness: Harness::Pi,
        peer: "pi",
        stand_in: messages_stand_in,
        // a provider of pi's models on the stand-in (a model that reads images)
        configure: |home, port| {
            let models = serde_json::json!({"providers": {"stand": {
                "baseUrl": format!("http://127.0.0.1:{port}"), "api": "anthropic-messages", "apiKey": "stand-in",
                "models": [{"id": "m", "input": ["text", "image"], "contextWindow": 1_000_000, "maxTokens": 8000}]}}});
            std::fs::write(home.join(".pi/agent/models.json"), models.to_string()).unwrap();
        },
        runs: |c| {
            let file = c.file.to_string_lossy().into_owned();
            vec![
                [
                    "--offline",
                    "--session",
                    &file,
                    "--model",
                    "stand/m",
                    "-p",
                    "hello",
                ]
                .map(String::from)
                .to_vec(),
            ]
        },
        env: |_, _| Vec::new(),
        env_removed: &["PI_CODING_AGENT_DIR"],
        field: "messages",
        read: messages_lines,
        blocks: false,
    };
    let mut cases = vec![
        // pi's own sessions: compactions that keep the turns before them, two compactions, thinking levels, a
        // reply aborted (left out of what pi sends after it), an older pi's aborted replies (sent again then)
        samples().join("pi/pi-v3-compaction-tiny.jsonl"),
        fixture("pi/pi-v3-aborted-reply.jsonl"),
        samples().join("pi/pi-v1-before-compaction-two-compactions.jsonl"),
        samples().join("pi/pi-v1-large-session-thinking-level-changes.jsonl"),
    ];
    cases.extend(others(Harness::Pi));
    resumes_and_sends_what_cairn_sends(&r, &cases);
}

#[test]
fn codex_resumes_a_session_cairn_wrote_and_sends_what_cairn_sends() {
    let r = Resumes {
        harness: Harness::Codex,
        peer: "codex",
        stand_in: responses_stand_in,
        // a provider of Codex's config on the stand-in
        configure: |home, port| {
            let config = format!(
                "model = \"m\"\nmodel_provider = \"stand\"\n\n[model_providers.stand]\nname = \"stand\"\n\
                 base_url = \"http://127.0.0.1:{port}/v1\"\nenv_key = \"STAND_IN_KEY\"\nwire_api = \"responses\"\n"
            );
            std::fs::write(home.join(".codex/config.toml"), config).unwrap();
        },
        runs: |c| {
            vec![
                [
                    "exec",
                    "--skip-git-repo-check",
                    "resume",
                    &c.session_id,
                    "hello",
                ]
                .map(String::from)
                .to_vec(),
            ]
        },
        env: |home, _| {
            vec![
                (
                    "CODEX_HOME",
                    home.join(".codex").to_string_lossy().into_owned(),
                ),
                ("STAND_IN_KEY", "stand-in".into()),
            ]
        },
        env_removed: &["OPENAI_API_KEY", "OPENAI_BASE_URL"],
        field: "input",
        read: responses_blocks,
        blocks: true,
    };
    let mut cases = vec![
        // Codex's own thread with the agents it spawned, and one of Codex 0.171 whose tier changed between turns
        samples().join("codex/codex-desktop-spawn-agents-0.140.jsonl"),
        fixture("codex/codex-service-tiers-cache-writes.jsonl"),
    ];
    cases.extend(others(Harness::Codex));
    resumes_and_sends_what_cairn_sends(&r, &cases);
}

#[test]
fn opencode_imports_a_session_cairn_wrote_resumes_it_and_sends_what_cairn_sends() {
    let r = Resumes {
        harness: Harness::Opencode,
        peer: "opencode",
        stand_in: chat_completions_stand_in,
        // a provider of opencode's config on the stand-in (a model that reads images), nothing else asked
        configure: |home, port| {
            let config = home.join(".config/opencode");
            std::fs::create_dir_all(&config).unwrap();
            let json = serde_json::json!({"autoupdate": false, "share": "disabled", "snapshot": false,
                "provider": {"stand": {"npm": "@ai-sdk/openai-compatible", "name": "stand",
                    "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "stand-in"},
                    "models": {"m": {"name": "m", "attachment": true, "tool_call": true,
                        "modalities": {"input": ["text", "image"], "output": ["text"]},
                        "limit": {"context": 1_000_000, "output": 8000}}}}}});
            std::fs::write(config.join("opencode.json"), json.to_string()).unwrap();
        },
        // the command continue prints, as it runs it: the import, then the session resumed (one word: opencode
        // quotes a prompt's words that hold spaces)
        runs: |c| {
            let file = c.file.to_string_lossy().into_owned();
            vec![
                vec!["import".to_string(), file],
                [
                    "run",
                    "--pure",
                    "-m",
                    "stand/m",
                    "--session",
                    &c.session_id,
                    "hello",
                ]
                .map(String::from)
                .to_vec(),
            ]
        },
        env: |_, _| {
            vec![
                ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
                ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
            ]
        },
        env_removed: &[
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
            "XDG_STATE_HOME",
            "OPENCODE_CONFIG",
        ],
        field: "messages",
        read: chat_lines,
        blocks: false,
    };
    let mut cases = vec![
        // opencode's own session with its auto-compaction: sent from its summary on, as opencode sent it
        samples().join("opencode/opencode-1.4.3-export-auto-compaction-copilot-sonnet-4.6.json"),
        // opencode's step that failed, with a call's result: written back with its error, left out by opencode
        fixture("opencode/opencode-errored-step.json"),
        // pi's two compactions (opencode's `tail_start_id` for the turns each keeps); the other harnesses' sessions
        // below: a Claude Code compaction as opencode's, Claude Code's summary first; a pi reply aborted written
        // with an error, which opencode leaves out
        samples().join("pi/pi-v1-before-compaction-two-compactions.jsonl"),
    ];
    cases.extend(others(Harness::Opencode));
    resumes_and_sends_what_cairn_sends(&r, &cases);
}
