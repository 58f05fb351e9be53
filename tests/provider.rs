//! `cairn send` and the summary rung against a loopback mock provider that speaks both wire shapes, counts tokens
//! by a fixed rule (request bytes / 4), enforces a window, and answers with the providers' exact overflow bodies.

#[path = "support/helpers.rs"]
mod helpers;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Normal,
    /// answer 429 to the first request
    RateLimitOnce,
    /// answer 413 with a proxy's HTML page when over the window
    Html413,
}

struct Mock {
    port: u16,
    requests: Arc<Mutex<Vec<(String, Value, usize)>>>,
}

fn mock(window: usize, mode: Mode) -> Mock {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests: Arc<Mutex<Vec<(String, Value, usize)>>> = Arc::default();
    let log = requests.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate().take(64) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut len = 0;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let tokens = len / 4;
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            log.lock().unwrap().push((path.clone(), v.clone(), tokens));
            let anthropic = path.ends_with("/v1/messages");
            let reply = |status: &str, ctype: &str, body: String| {
                format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            };
            // the providers' own compaction, answered as their documentation shows (not streamed)
            let server = if path.ends_with("/responses/compact") {
                Some(
                    json!({"id": "resp_1", "object": "response.compaction", "output": [
                        {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB-opaque-blob"}
                    ]}),
                )
            } else if path.ends_with("/v1/responses") {
                // the Responses API's answer, as documented (not streamed)
                Some(
                    json!({"id": "resp_2", "object": "response", "model": "gpt-5.5", "output": [
                    {"type": "message", "role": "assistant", "content": [
                        {"type": "output_text", "text": "continued from the compaction"}]}
                ], "usage": {"input_tokens": 1200, "output_tokens": 7,
                    "input_tokens_details": {"cached_tokens": 1000}}}),
                )
            } else if v.get("context_management").is_some() {
                Some(json!({"type": "message", "role": "assistant", "content": [
                    {"type": "compaction", "content": "Summary: the parser was ported; tests pass."},
                    {"type": "text", "text": "ok"}
                ], "stop_reason": "end_turn"}))
            } else {
                None
            };
            let out = if let Some(answer) = server {
                reply("200 OK", "application/json", answer.to_string())
            } else if mode == Mode::RateLimitOnce && n == 0 {
                reply(
                    "429 Too Many Requests",
                    "application/json",
                    r#"{"error":{"message":"rate limited"}}"#.into(),
                )
            } else if tokens > window && mode == Mode::Html413 {
                reply(
                    "413 Payload Too Large",
                    "text/html",
                    "<html><body><h1>413 Request Entity Too Large</h1></body></html>".into(),
                )
            } else if tokens > window && anthropic {
                reply("400 Bad Request", "application/json", json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("prompt is too long: {tokens} tokens > {window} maximum")}}).to_string())
            } else if tokens > window {
                reply("400 Bad Request", "application/json", json!({"error": {"message": format!("This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."), "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}).to_string())
            } else {
                let text = if v.to_string().contains("Summarise this part") {
                    "SUMMARY: the parser was ported module by module."
                } else {
                    "mock reply"
                };
                let events = if anthropic {
                    format!(
                        "event: message_start\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
                        json!({"type": "message_start", "message": {"model": "mock-1", "usage": {"input_tokens": tokens, "cache_read_input_tokens": 0}}}),
                        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": &text[..4]}}),
                        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": &text[4..]}}),
                        json!({"type": "message_delta", "usage": {"output_tokens": 3}}),
                    )
                } else {
                    format!(
                        "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                        json!({"model": "mock-1", "choices": [{"delta": {"content": &text[..4]}}]}),
                        json!({"model": "mock-1", "choices": [{"delta": {"content": &text[4..]}}]}),
                        json!({"model": "mock-1", "choices": [], "usage": {"prompt_tokens": tokens, "completion_tokens": 3}}),
                    )
                };
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{events}"
                )
            };
            let _ = stream.write_all(out.as_bytes());
        }
    });
    Mock { port, requests }
}

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
}

fn cairn(env: &Env, vars: &[(&str, String)], args: &[&str]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    for v in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "CAIRN_DB",
        "XDG_CONFIG_HOME",
    ] {
        c.env_remove(v);
    }
    c.env("HOME", env._dir.path());
    for (k, v) in vars {
        c.env(k, v);
    }
    c.arg("--db").arg(&env.db).args(args).output().unwrap()
}

/// A conversation of `turns` tool turns, each with a large result.
fn setup(turns: usize) -> (Env, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let env = Env { _dir: dir, db };
    let mut s = cairn::store::Store::open(&env.db).unwrap();
    let c = helpers::tool_session(&mut s, turns, &|_| ("fn x() {}\n".repeat(400), false, None));
    (env, c)
}

fn path_len(env: &Env, c: &str) -> usize {
    cairn::store::Store::open(&env.db)
        .unwrap()
        .active_path(c)
        .unwrap()
        .len()
}

#[test]
fn send_streams_the_reply_and_persists_the_turn_for_both_wire_shapes() {
    let (env, c) = setup(2);
    let m = mock(1_000_000, Mode::Normal);
    let before = path_len(&env, &c);
    let o = cairn(
        &env,
        &[
            ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port)),
            ("ANTHROPIC_API_KEY", "test-key".into()),
        ],
        &["send", &c, "hello"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "mock reply");
    assert_eq!(path_len(&env, &c), before + 2);
    let s = cairn::store::Store::open(&env.db).unwrap();
    let tip = s.active_path(&c).unwrap().pop().unwrap();
    assert_eq!(tip.summary(50), "mock reply");
    assert_eq!(tip.usage.unwrap().output_tokens, 3);
    let (path, body, _) = m.requests.lock().unwrap()[0].clone();
    assert_eq!(path, "/v1/messages");
    assert_eq!(body["stream"], json!(true));
    assert_eq!(
        body["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"],
        json!("hello")
    );
    cairn::pairs::check(
        &body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, m)| cairn::wire::message_from_wire(m, &format!("[{i}]")).unwrap())
            .collect::<Vec<_>>(),
        false,
    )
    .unwrap();

    let m2 = mock(1_000_000, Mode::Normal);
    let o = cairn(
        &env,
        &[
            (
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", m2.port),
            ),
            ("OPENAI_API_KEY", "k".into()),
        ],
        &["send", &c, "again", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["reply"], json!("mock reply"));
    assert_eq!(m2.requests.lock().unwrap()[0].0, "/v1/chat/completions");
}

#[test]
fn an_overflow_runs_the_rungs_that_need_no_model_and_retries_once() {
    let (env, c) = setup(80);
    let before_msgs = cairn::store::Store::open(&env.db)
        .unwrap()
        .messages(&c)
        .unwrap()
        .len();
    let m = mock(60_000, Mode::Normal);
    let o = cairn(
        &env,
        &[("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port))],
        &["send", &c, "go on", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["attempts"], json!(2), "{v}");
    assert!(!v["compacted"].as_array().unwrap().is_empty());
    let reqs = m.requests.lock().unwrap();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[0].2 > 60_000 && reqs[1].2 <= 60_000,
        "{} then {}",
        reqs[0].2,
        reqs[1].2
    );
    // stored messages untouched: only the markers and the new turn were added
    let s = cairn::store::Store::open(&env.db).unwrap();
    let after = s.messages(&c).unwrap();
    assert!(after.len() >= before_msgs + 3);
    let ops: Vec<String> = s
        .operations(&c)
        .unwrap()
        .into_iter()
        .map(|o| o.kind)
        .collect();
    assert!(ops.contains(&"compact".to_string()), "{ops:?}");
}

#[test]
fn a_413_with_an_html_body_is_an_overflow_and_three_refusals_stop_cleanly() {
    let (env, c) = setup(20);
    let before = path_len(&env, &c);
    // a window nothing fits: every attempt is refused
    let m = mock(10, Mode::Html413);
    let o = cairn(
        &env,
        &[("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port))],
        &["send", &c, "go"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("too long"), "{err}");
    assert!(m.requests.lock().unwrap().len() <= 3);
    // nothing of the refused turn was written (markers may have been)
    let s = cairn::store::Store::open(&env.db).unwrap();
    let path = s.active_path(&c).unwrap();
    assert!(path.iter().all(|m| m.summary(20) != "go"));
    assert!(path.len() >= before);
}

#[test]
fn past_the_threshold_the_ladder_runs_before_sending() {
    let (env, c) = setup(60);
    let m = mock(1_000_000, Mode::Normal);
    let o = cairn(
        &env,
        &[("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port))],
        &["send", &c, "hi", "--window", "80000", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["attempts"], json!(1));
    assert!(
        v["compacted"][0].as_str().unwrap().ends_with("(threshold)"),
        "{v}"
    );
    // the one request sent fits the target share of the window
    assert!(m.requests.lock().unwrap()[0].2 < 80_000);
}

#[test]
fn the_threshold_and_target_come_from_the_settings_file() {
    let (env, c) = setup(60);
    let m = mock(1_000_000, Mode::Normal);
    // a window where the context is 90% of what is usable: past the default 80% threshold (estimated for the model
    // `send` will ask, the default Anthropic one: the conversation names none)
    let o = cairn(
        &env,
        &[],
        &[
            "context",
            &c,
            "--model",
            cairn::provider::DEFAULT_ANTHROPIC_MODEL,
            "--json",
        ],
    );
    let estimate = serde_json::from_slice::<Value>(&o.stdout).unwrap()["estimated_total"]
        .as_u64()
        .unwrap();
    let window = (estimate as f64 / 0.9) as u64 + cairn::reclaim::REPLY_RESERVE;
    let config = env._dir.path().join(".config/cairn");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.json"),
        r#"{"threshold": 0.95, "target": 0.6}"#,
    )
    .unwrap();
    let url = [("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port))];
    let o = cairn(
        &env,
        &url,
        &["send", &c, "hi", "--window", &window.to_string(), "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["compacted"], json!([]), "0.95 is not passed: {v}");
    // with the default 0.8 it is
    std::fs::write(config.join("config.json"), "{}").unwrap();
    let o = cairn(
        &env,
        &url,
        &[
            "send",
            &c,
            "again",
            "--window",
            &window.to_string(),
            "--json",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["compacted"][0].as_str().unwrap().ends_with("(threshold)"),
        "{v}"
    );
    // a bad pair is one line naming the file, before anything is sent
    std::fs::write(
        config.join("config.json"),
        r#"{"threshold": 0.5, "target": 0.7}"#,
    )
    .unwrap();
    let n = m.requests.lock().unwrap().len();
    let o = cairn(&env, &url, &["send", &c, "more"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("config.json") && err.contains("threshold"),
        "{err}"
    );
    assert_eq!(m.requests.lock().unwrap().len(), n);
}

#[test]
fn rate_limits_are_retried_with_backoff() {
    let (env, c) = setup(1);
    let m = mock(1_000_000, Mode::RateLimitOnce);
    let o = cairn(
        &env,
        &[("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port))],
        &["send", &c, "hi"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(m.requests.lock().unwrap().len(), 2);
}

#[test]
fn no_provider_is_a_clear_error_and_the_snapshot_needs_none() {
    let (env, c) = setup(60);
    let o = cairn(&env, &[], &["send", &c, "hi"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ANTHROPIC_API_KEY"));
    // no key and no network: the snapshot rung still works
    let o = cairn(&env, &[], &["compact", &c, "--strategy", "snapshot"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("snapshot:"));
}

#[test]
fn the_summary_rung_makes_one_call_that_fits_and_records_its_text() {
    let (env, c) = setup(60);
    let m = mock(1_000_000, Mode::Normal);
    let o = cairn(
        &env,
        &[("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port))],
        &[
            "compact",
            &c,
            "--strategy",
            "summary",
            "--protect",
            "20000",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(m.requests.lock().unwrap().len(), 1);
    let s = cairn::store::Store::open(&env.db).unwrap();
    let path = s.active_path(&c).unwrap();
    let a = cairn::reclaim::assemble::assemble(&s, &c).unwrap();
    let text: String = a
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            cairn::model::Block::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(text.contains("SUMMARY: the parser was ported"));
    assert!(a.tally.summary_characters > 0);
    // the protect window asked for is the one the marker records
    let marker = path
        .iter()
        .rev()
        .find(|m| m.cairn_kind() == Some("compaction"))
        .unwrap();
    assert_eq!(
        marker.meta["cairn"]["params"]["protect_tokens"],
        json!(20000)
    );
    cairn::pairs::check(&a.messages, false).unwrap();
}

/// The provider reader: it says what it would cost and needs --yes; then it sends the pages and the recall
/// questions in one request and scores the answers exactly (the mock answers none).
#[test]
fn the_provider_reader_asks_recall_questions_with_only_the_pages() {
    let m = mock(1_000_000, Mode::Normal);
    let (env, _) = setup(1);
    let text = env._dir.path().join("t.txt");
    std::fs::write(
        &text,
        "error: cannot open config at /etc/tidepool/ingest.toml (os error 2)\nthe build 7f3a9c2 failed on shard=11 again\n",
    )
    .unwrap();
    let vars = [
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port)),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ];
    let args = [
        "legibility",
        "--text",
        text.to_str().unwrap(),
        "--shape",
        "outline-7x14",
        "--reader",
        "provider",
    ];
    let o = cairn(&env, &vars, &args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tokens") && err.contains("--yes"), "{err}");
    assert!(
        m.requests.lock().unwrap().is_empty(),
        "nothing sent without --yes"
    );
    let mut with_yes = args.to_vec();
    with_yes.extend(["--yes", "--json"]);
    let o = cairn(&env, &vars, &with_yes);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["results"][0]["reader"], "provider");
    assert_eq!(v["results"][0]["recall"], serde_json::json!(0.0));
    let reqs = m.requests.lock().unwrap();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].1.to_string();
    assert!(
        body.contains("\"type\":\"image\"") && body.contains("Q1:"),
        "{}",
        &body[..body.len().min(300)]
    );
}

/// The providers' own compaction: one request each, in the documented shapes, kept as a summary marker over the
/// path (nothing stored changes).
#[test]
fn server_side_compaction_is_kept_as_a_marker() {
    for (strategy, key, url_var) in [
        (
            "anthropic-server",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
        ),
        ("openai-compact", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    ] {
        let m = mock(1_000_000, Mode::Normal);
        let (env, c) = setup(3);
        let before = path_len(&env, &c);
        let vars = [
            (url_var, format!("http://127.0.0.1:{}", m.port)),
            (key, "test-key".to_string()),
        ];
        let o = cairn(&env, &vars, &["compact", &c, "--strategy", strategy]);
        assert!(
            o.status.success(),
            "{strategy}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).starts_with(strategy));
        assert_eq!(path_len(&env, &c), before + 1, "{strategy}: one marker");
        let s = cairn::store::Store::open(&env.db).unwrap();
        let marker = s.active_path(&c).unwrap().pop().unwrap();
        assert_eq!(marker.meta["cairn"]["strategy"], "summary");
        let summary = marker.meta["cairn"]["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let reqs = m.requests.lock().unwrap();
        assert_eq!(reqs.len(), 1);
        if strategy == "anthropic-server" {
            assert_eq!(reqs[0].0, "/v1/messages");
            assert_eq!(
                reqs[0].1["context_management"]["edits"][0]["type"],
                "compact_20260112"
            );
            assert!(summary.contains("the parser was ported"), "{summary}");
        } else {
            assert_eq!(reqs[0].0, "/v1/responses/compact");
            assert!(reqs[0].1["input"].is_array());
            assert!(summary.contains("opaque item"), "{summary}");
            // what the provider returned is kept whole in the marker
            assert_eq!(
                marker.meta["cairn"]["kept"]["item"]["encrypted_content"],
                "gAAAAB-opaque-blob"
            );
            drop(reqs);
            let before_send = path_len(&env, &c);
            // and the next turn goes through the Responses API with the item in the cover's place
            let o = cairn(&env, &vars, &["send", &c, "what next?"]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let reqs = m.requests.lock().unwrap();
            assert_eq!(reqs.len(), 2);
            assert_eq!(reqs[1].0, "/v1/responses");
            let input = reqs[1].1["input"].as_array().unwrap();
            assert_eq!(input[0]["type"], "compaction");
            assert_eq!(input[0]["encrypted_content"], "gAAAAB-opaque-blob");
            assert!(
                !reqs[1].1.to_string().contains("opaque item of"),
                "the placeholder text is not sent"
            );
            assert_eq!(input.last().unwrap()["content"][0]["text"], "what next?");
            assert_eq!(path_len(&env, &c), before_send + 2);
            let path = s.active_path(&c).unwrap();
            let answer = path.last().unwrap();
            assert_eq!(
                cairn::model::plain_text(&answer.content),
                "continued from the compaction"
            );
            let u = answer.usage.unwrap();
            assert_eq!(
                (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
                (200, 1000, 7)
            );
            continue;
        }
    }
}

/// What the store holds leaves redacted through a provider as through every other way out: the history `send` sends
/// (a signed thinking block that held a secret is left out, not sent changed), the middle the summary rung asks a
/// model to summarise, what a provider's compaction reads. The prompt typed now goes as typed.
#[test]
fn a_secret_in_the_history_never_reaches_a_provider() {
    let key = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");
    let (env, c) = {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        let env = Env { _dir: dir, db };
        let mut s = cairn::store::Store::open(&env.db).unwrap();
        let k = key.clone();
        let c = helpers::tool_session(&mut s, 8, &move |i| {
            (
                format!("{}GITHUB_TOKEN={k}\n", "fn x() {}\n".repeat(400 + i)),
                false,
                None,
            )
        });
        s.append_turn(
            &c,
            &[
                cairn::model::NewMessage::text(
                    cairn::model::Role::User,
                    format!("push with {key}"),
                ),
                cairn::model::NewMessage::new(
                    cairn::model::Role::Assistant,
                    vec![
                        cairn::model::Block::Thinking {
                            thinking: format!("the user gave {key}; push"),
                            signature: Some(format!("E{}", "Qk9SRVNJR05BVFVSRQ".repeat(4))),
                        },
                        cairn::model::Block::Thinking {
                            thinking: "nothing secret here".into(),
                            signature: Some(format!("E{}", "U0lHTkFUVVJFVFdP".repeat(4))),
                        },
                        cairn::model::Block::text("Pushed."),
                    ],
                ),
            ],
        )
        .unwrap();
        (env, c)
    };
    let m = mock(1_000_000, Mode::Normal);
    let vars = [
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", m.port)),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ];
    let o = cairn(&env, &vars, &["send", &c, "and the tag?"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("10 secret(s) redacted from the history sent"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = cairn(
        &env,
        &vars,
        &["compact", &c, "--strategy", "summary", "--protect", "2000"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cairn(
        &env,
        &vars,
        &["compact", &c, "--strategy", "anthropic-server"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reqs = m.requests.lock().unwrap();
    assert_eq!(reqs.len(), 3);
    for (path, body, _) in reqs.iter() {
        let sent = body.to_string();
        assert!(!sent.contains(&key), "{path}: the key was sent");
        assert!(sent.contains("[redacted: "), "{path}");
    }
    // the signed reasoning that held the key is left out; the other is sent with its signature
    let sent = reqs[0].1.to_string();
    assert!(!sent.contains("the user gave"), "{sent}");
    assert!(sent.contains("nothing secret here"));
    // the store keeps what the session wrote
    let s = cairn::store::Store::open(&env.db).unwrap();
    let all: String = s
        .active_path(&c)
        .unwrap()
        .iter()
        .map(|m| m.summary(100_000))
        .collect();
    assert!(all.contains(&key));
}
