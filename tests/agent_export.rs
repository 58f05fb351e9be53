//! Back to the agent: a path exported as a Claude Code, pi, Codex, Gemini CLI or opencode session reads back as the
//! same messages, usage and compactions, on every real sample of each harness (read in `../shared/samples`, not
//! copied); cairn's own compactions become the harness's, so the agent resumes with the context cairn assembled.

#[path = "support/helpers.rs"]
mod helpers;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::export::agent::{self, Harness};
use cairn::model::{Block, Message, Role, ToolResultContent, Usage};
use cairn::reclaim::rungs::{self, RungOptions};
use cairn::reclaim::{Settings, Strategy};
use cairn::store::Store;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples")
}

fn run(s: &mut Store, a: Action) -> Outcome {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false)).unwrap()
}

fn import(s: &mut Store, p: &Path) -> Vec<String> {
    let Outcome::Imported(out) = run(
        s,
        Action::Import {
            paths: vec![p.to_path_buf()],
            format: None,
        },
    ) else {
        panic!("import")
    };
    let o = out.into_iter().next().unwrap();
    assert!(o.error.is_none(), "{}: {:?}", p.display(), o.error);
    o.conversations
}

/// The top conversations of a store (not subagents).
fn tops(s: &Store) -> Vec<String> {
    s.conversations()
        .unwrap()
        .into_iter()
        .filter(|c| c.linked_to.is_none())
        .map(|c| c.id)
        .collect()
}

fn path(s: &Store, conv: &str) -> Vec<Message> {
    s.active_path(conv).unwrap()
}

fn is_marker(m: &Message) -> bool {
    m.role == Role::System && cairn::reclaim::Marker::of(m).is_some()
}

/// What the model saw of a path, block by block, by role (results answer as the user, whichever message holds them).
fn history(msgs: &[Message], thinking: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // a harness's compaction summary is its record, not a message of the history (Claude Code's summary prompt,
    // opencode's summary reply)
    let summary = |m: &Message| {
        m.meta.pointer("/cairn/kind").and_then(|k| k.as_str()) == Some("compact_summary")
            || m.meta.pointer("/info/summary") == Some(&serde_json::json!(true))
    };
    for m in msgs
        .iter()
        .filter(|m| !is_marker(m) && m.role != Role::System && !summary(m))
    {
        let role = if m.role == Role::Assistant {
            "assistant"
        } else {
            "user"
        };
        for b in &m.content {
            let repr = match b {
                Block::Text { text } if text.trim().is_empty() => continue,
                Block::Text { text } => format!("text:{text}"),
                Block::Thinking { thinking: t, .. } if thinking => format!("thinking:{t}"),
                Block::Thinking { .. } => continue,
                Block::ToolUse { id, name, input } => format!("call:{id}:{name}:{input}"),
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    let (text, images) = match content {
                        ToolResultContent::Text(t) => (t.clone(), 0),
                        ToolResultContent::Blocks(bs) => (
                            cairn::model::plain_text(bs),
                            bs.iter()
                                .filter(|b| matches!(b, Block::Image { .. }))
                                .count(),
                        ),
                    };
                    format!("result:{tool_use_id}:{text}:{images}")
                }
                Block::Image { media_type, .. } => format!("image:{media_type}"),
                Block::Other(_) => continue,
            };
            out.push((role.to_string(), repr));
        }
    }
    out
}

/// Panics naming the first block where two histories differ, shown from a little before the first character that
/// differs.
fn same_history(a: &[(String, String)], b: &[(String, String)], what: &str) {
    let Some(k) = (0..a.len().max(b.len())).find(|&k| a.get(k) != b.get(k)) else {
        return;
    };
    let at = match (a.get(k), b.get(k)) {
        (Some(x), Some(y)) => {
            x.1.chars()
                .zip(y.1.chars())
                .take_while(|(p, q)| p == q)
                .count()
        }
        _ => 0,
    };
    let cut = |x: Option<&(String, String)>| {
        x.map(|(r, t)| {
            format!(
                "{r} …{}",
                t.chars()
                    .skip(at.saturating_sub(40))
                    .take(300)
                    .collect::<String>()
            )
        })
    };
    panic!(
        "{what}: block {k} of {}/{} differs at character {at}:\n  source {:?}\n  again  {:?}",
        a.len(),
        b.len(),
        cut(a.get(k)),
        cut(b.get(k))
    );
}

fn usages(msgs: &[Message]) -> Vec<Usage> {
    msgs.iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.usage)
        .collect()
}

/// The speed (service tier) each reply is priced at where it is not the standard one.
fn speeds(msgs: &[Message]) -> Vec<Option<String>> {
    msgs.iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| cairn::models::speed_of(&m.meta).map(str::to_string))
        .collect()
}

/// The harnesses' compactions on a path (cairn's rungs and Claude Code's microcompact, an elision, are not).
fn compactions(msgs: &[Message]) -> usize {
    msgs.iter()
        .filter(|m| {
            matches!(
                cairn::reclaim::Marker::of(m),
                Some(cairn::reclaim::Marker::Harness { .. })
            ) && m.meta.pointer("/line/subtype").and_then(|s| s.as_str())
                != Some("microcompact_boundary")
        })
        .count()
}

/// The text of what the path sends now (compactions applied), by role: consecutive messages of one role are one,
/// as a provider reads them (Claude Code keeps a reminder it sent beside tool results as a line of its own).
fn context(s: &Store, conv: &str) -> Vec<(String, String)> {
    let sent = cairn::reclaim::assemble::assemble(s, conv)
        .unwrap()
        .messages;
    sent.iter()
        .map(|m| {
            let role = if m.role == Role::Assistant {
                "assistant"
            } else {
                "user"
            };
            let text: String = m
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.trim().to_string()),
                    Block::ToolResult { content, .. } => Some(match content {
                        ToolResultContent::Text(t) => t.trim().to_string(),
                        ToolResultContent::Blocks(bs) => {
                            cairn::model::plain_text(bs).trim().to_string()
                        }
                    }),
                    _ => None,
                })
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            (role.to_string(), text)
        })
        .filter(|(_, t)| !t.is_empty())
        .fold(
            Vec::new(),
            |mut out: Vec<(String, String)>, (role, text)| {
                match out.last_mut() {
                    Some((r, t)) if *r == role => {
                        t.push('\n');
                        t.push_str(&text);
                    }
                    _ => out.push((role, text)),
                }
                out
            },
        )
}

/// Writes the session file (and what goes beside it) into `dir` under the name the harness gives it.
fn write(dir: &Path, f: &agent::AgentFile) -> PathBuf {
    let p = dir.join(format!("{}.{}", f.session_id, f.harness.extension()));
    std::fs::write(&p, &f.text).unwrap();
    for (rel, text) in &f.beside {
        let q = dir.join(&f.session_id).join(rel);
        std::fs::create_dir_all(q.parent().unwrap()).unwrap();
        std::fs::write(q, text).unwrap();
    }
    p
}

fn round_trip(files: &[PathBuf], harness: Harness) -> usize {
    let mut checked = 0;
    for f in files {
        let mut s = Store::open_in_memory().unwrap();
        import(&mut s, f);
        for conv in tops(&s) {
            let out = agent::write(&s, &conv, None, harness, false, None).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let p = write(dir.path(), &out);
            let mut back = Store::open_in_memory().unwrap();
            let ids = import(&mut back, &p);
            let again = tops(&back);
            assert_eq!(again.len(), 1, "{}: {ids:?}", f.display());
            let (a, b) = (path(&s, &conv), path(&back, &again[0]));
            let what = format!("{} as {}", f.display(), harness.name());
            same_history(&history(&a, true), &history(&b, true), &what);
            assert_eq!(usages(&a), usages(&b), "{what}: usage per reply");
            assert_eq!(speeds(&a), speeds(&b), "{what}: tier per reply");
            assert_eq!(compactions(&a), compactions(&b), "{what}: compactions");
            assert_eq!(
                context(&s, &conv),
                context(&back, &again[0]),
                "{what}: context"
            );
            // subagents spawned on the path travel beside a Claude Code session
            if harness == Harness::ClaudeCode {
                let subs = s
                    .conversations()
                    .unwrap()
                    .into_iter()
                    .filter(|c| {
                        c.linked_to.as_deref() == Some(conv.as_str()) && c.spawned_by.is_some()
                    })
                    .count();
                let subs_back = back
                    .conversations()
                    .unwrap()
                    .into_iter()
                    .filter(|c| c.linked_to.is_some())
                    .count();
                assert_eq!(subs, subs_back, "{what}: subagents");
            }
            checked += 1;
        }
    }
    checked
}

fn files(dir: &str) -> Vec<PathBuf> {
    let d = samples().join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    // Claude Code sessions kept in their own project folder
    if dir == "claude-code" {
        v.push(d.join("coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"));
    }
    v.sort();
    v
}

#[test]
fn claude_code_sessions_read_back_the_same_as_claude_code() {
    // and one of Claude Code 2.1.33x, which records what it rendered of its attachments for the model
    let mut v = files("claude-code");
    v.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code/cc-2.1.332-rendered-attachments.jsonl"),
    );
    assert!(round_trip(&v, Harness::ClaudeCode) >= 6);
}

#[test]
fn pi_sessions_read_back_the_same_as_pi() {
    assert_eq!(round_trip(&files("pi"), Harness::Pi), 3);
}

#[test]
fn codex_rollouts_read_back_the_same_as_codex() {
    // and a rollout of Codex 0.171's layout: the thread's service tier changed between turns, cache writes counted,
    // a reply that searched the web
    let mut v = files("codex");
    v.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/codex/codex-service-tiers-cache-writes.jsonl"),
    );
    let (tiers, searches) = {
        let mut s = Store::open_in_memory().unwrap();
        import(&mut s, &v[1]);
        let p = path(&s, &tops(&s)[0]);
        let searches: Vec<u64> = usages(&p).iter().map(|u| u.web_search_requests).collect();
        (speeds(&p), searches)
    };
    // the searches OpenAI ran for the first reply (`web_search_call` items), counted in its usage
    assert_eq!(searches, [2, 0, 0, 0]);
    let tier = |t: &str| Some(t.to_string());
    assert_eq!(
        tiers,
        [tier("priority"), tier("priority"), tier("flex"), None]
    );
    assert_eq!(round_trip(&v, Harness::Codex), 2);
}

#[test]
fn gemini_cli_sessions_read_back_the_same_as_gemini_cli() {
    // Gemini CLI's chat files of three releases (written as its session log now) and a small one of cairn's
    let mut v: Vec<PathBuf> = std::fs::read_dir(samples().join("gemini-cli"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v.push(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small/gemini-cli-small.json"),
    );
    assert_eq!(round_trip(&v, Harness::GeminiCli), 4);
}

#[test]
fn opencode_sessions_read_back_the_same_as_opencode() {
    // opencode's exports of two releases: subtasks, a subagent's own session, an auto-compaction, prunes
    let mut v: Vec<PathBuf> = std::fs::read_dir(samples().join("opencode"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    assert_eq!(round_trip(&v, Harness::Opencode), 3);
}

#[test]
fn a_gemini_cli_session_goes_to_the_project_folder_gemini_cli_named() {
    let mut s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(Some("t")).unwrap();
    s.append_turn(&c, &helpers::simple_turn("hello", "hi"))
        .unwrap();
    let f = agent::write(
        &s,
        &c,
        None,
        Harness::GeminiCli,
        true,
        Some("/work/project"),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let at = |h: &Path| {
        agent::place(&cairn::discover::Home::at(h), &f)
            .strip_prefix(h)
            .unwrap()
            .parent()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    // a folder Gemini CLI never ran in: the folder of its hash (Gemini CLI moves it to the short name it gives)
    let expected_hash = {
        use sha2::Digest as _;
        sha2::Sha256::digest(b"/work/project")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert_eq!(
        at(home.path()),
        format!(".gemini/tmp/{expected_hash}/chats")
    );
    // the session's own projectHash is that hash
    let first: serde_json::Value = serde_json::from_str(f.text.lines().next().unwrap()).unwrap();
    assert_eq!(first["projectHash"], expected_hash.as_str());
    // a folder whose `.project_root` names the working folder
    std::fs::create_dir_all(home.path().join(".gemini/tmp/project")).unwrap();
    std::fs::write(
        home.path().join(".gemini/tmp/project/.project_root"),
        "/work/project",
    )
    .unwrap();
    assert_eq!(at(home.path()), ".gemini/tmp/project/chats");
    // the registry's short name comes first
    std::fs::write(
        home.path().join(".gemini/projects.json"),
        r#"{"projects": {"/work/other": "other", "/work/project": "project-1"}}"#,
    )
    .unwrap();
    assert_eq!(at(home.path()), ".gemini/tmp/project-1/chats");
}

fn long_conversation(s: &mut Store, turns: usize) -> String {
    helpers::tool_session(s, turns, &|i| {
        let body = format!("line {i}: fn parse_{i}(input: &str) -> Result<Ast> {{ todo!() }}\n")
            .repeat(120);
        (body, i % 7 == 3, (i % 8 == 0).then(|| vec![i as u8; 2048]))
    })
}

fn opts(protect: u64) -> RungOptions {
    RungOptions {
        protect,
        shape: cairn::reclaim::Policy::new(&Default::default(), None, None, None).shape(),
        range: None,
        model: None,
    }
}

/// What the path sends, as (role, texts, images) per message.
fn sent(s: &Store, conv: &str) -> Vec<(Role, String, usize)> {
    cairn::reclaim::assemble::assemble(s, conv)
        .unwrap()
        .messages
        .iter()
        .map(|m| {
            let mut text = Vec::new();
            let mut images = 0;
            for b in &m.content {
                match b {
                    Block::Text { text: t } => text.push(t.trim().to_string()),
                    Block::Image { .. } => images += 1,
                    Block::ToolResult { content, .. } => {
                        text.push(match content {
                            ToolResultContent::Text(t) => t.trim().to_string(),
                            ToolResultContent::Blocks(bs) => {
                                cairn::model::plain_text(bs).trim().to_string()
                            }
                        });
                        if let ToolResultContent::Blocks(bs) = content {
                            images += bs
                                .iter()
                                .filter(|b| matches!(b, Block::Image { .. }))
                                .count();
                        }
                    }
                    Block::ToolUse { name, .. } => text.push(format!("call {name}")),
                    _ => {}
                }
            }
            (
                if m.role == Role::Assistant {
                    Role::Assistant
                } else {
                    Role::User
                },
                text.join("\n"),
                images,
            )
        })
        .collect()
}

/// Exports as `harness` and reads the file back into a store of its own: (store, conversation, the file).
fn again(s: &Store, conv: &str, harness: Harness) -> (Store, String, agent::AgentFile) {
    let f = agent::write(s, conv, None, harness, true, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), &f);
    let mut back = Store::open_in_memory().unwrap();
    import(&mut back, &p);
    let c = tops(&back).remove(0);
    (back, c, f)
}

#[test]
fn a_cairn_snapshot_travels_as_the_harness_compaction_with_its_pages_as_images() {
    for harness in Harness::ALL {
        let mut s = Store::open_in_memory().unwrap();
        let c = long_conversation(&mut s, 40);
        // results elided in the messages the snapshot leaves as themselves too
        rungs::apply(&mut s, &c, Strategy::Elide, false, None, &opts(1_000))
            .unwrap()
            .expect("elision runs");
        rungs::apply(&mut s, &c, Strategy::Snapshot, true, None, &opts(12_000))
            .unwrap()
            .expect("a snapshot is taken");
        let before = sent(&s, &c);
        let pages = before.iter().map(|m| m.2).max().unwrap_or(0);
        assert!(pages >= 2, "{} page(s)", pages);
        let (back, c2, f) = again(&s, &c, harness);
        let after = sent(&back, &c2);
        // the harness's own compaction, once
        assert_eq!(compactions(&path(&back, &c2)), 1, "{}", harness.name());
        // the pages reach the agent as images, and every image the path sends after them too
        assert_eq!(
            after.iter().map(|m| m.2).sum::<usize>(),
            before.iter().map(|m| m.2).sum::<usize>(),
            "{}",
            harness.name()
        );
        // the history the harness keeps is the whole path, less cairn's markers
        same_history(
            &history(&path(&s, &c), false),
            &history(&path(&back, &c2), false),
            harness.name(),
        );
        match harness {
            // Claude Code and opencode: the same context, line for line, elided results included (Claude Code's
            // microcompact, opencode's prune)
            Harness::ClaudeCode | Harness::Opencode => assert_eq!(lines(&before), lines(&after)),
            // pi and Codex have no elision: the results travel whole, and the export says so
            _ => {
                assert!(
                    f.notes.iter().any(|n| n.contains("elides")),
                    "{:?}",
                    f.notes
                );
                let elided: Vec<String> = lines(&before)
                    .into_iter()
                    .filter(|l| !l.starts_with("[elided"))
                    .collect();
                in_order(&elided, &lines(&after), harness.name());
            }
        }
    }
}

/// The lines of text a context sends, blank ones left out.
fn lines(v: &[(Role, String, usize)]) -> Vec<String> {
    v.iter()
        .flat_map(|m| {
            m.1.lines()
                .map(|l| l.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Panics unless every line of `a` is in `b`, in order (what a harness adds around a summary is allowed).
fn in_order(a: &[String], b: &[String], what: &str) {
    let mut k = 0;
    for l in a {
        match b[k..].iter().position(|x| x == l) {
            Some(p) => k += p + 1,
            None => panic!(
                "{what}: {:?} is not sent (or not in order)",
                l.chars().take(200).collect::<String>()
            ),
        }
    }
}

#[test]
fn a_cairn_summary_travels_as_the_harness_compaction_and_the_agent_reads_it_first() {
    for harness in Harness::ALL {
        let mut s = Store::open_in_memory().unwrap();
        let c = long_conversation(&mut s, 30);
        rungs::apply(
            &mut s,
            &c,
            Strategy::Summary,
            true,
            Some("The parser port is half done: modules 0 to 20 read, all use the old lexer."),
            &opts(3_000),
        )
        .unwrap()
        .expect("a summary is written");
        let before = sent(&s, &c);
        let (back, c2, _) = again(&s, &c, harness);
        let after = sent(&back, &c2);
        assert_eq!(compactions(&path(&back, &c2)), 1, "{}", harness.name());
        // the summary comes first, then the same messages as themselves
        assert!(
            after[0].1.contains("modules 0 to 20 read"),
            "{}: {:?}",
            harness.name(),
            after[0]
        );
        in_order(&lines(&before), &lines(&after), harness.name());
        if harness == Harness::ClaudeCode {
            assert_eq!(lines(&before), lines(&after));
        }
    }
}

#[test]
fn a_fork_at_a_message_continues_from_there_and_secrets_stay_home() {
    let mut s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(Some("deploy")).unwrap();
    let key = "sk-ant-api03-".to_string() + &"Zx9".repeat(30) + "AA";
    s.append_turn(
        &c,
        &helpers::simple_turn(&format!("deploy with {key}"), "Deployed."),
    )
    .unwrap();
    let ids = s
        .append_turn(&c, &helpers::simple_turn("now roll back", "Rolled back."))
        .unwrap();
    let at = ids[0].clone();
    for harness in Harness::ALL {
        let f = agent::write(&s, &c, Some(&at), harness, true, None).unwrap();
        assert!(!f.text.contains(&key), "{}: the key left", harness.name());
        assert!(f.redacted >= 1, "{}", harness.name());
        assert!(
            f.text.contains("now roll back") && !f.text.contains("Rolled back."),
            "{}",
            harness.name()
        );
        let kept = agent::write(&s, &c, Some(&at), harness, false, None).unwrap();
        assert!(
            kept.text.contains(&key),
            "{}: --no-redact keeps it",
            harness.name()
        );
    }
}

#[test]
fn continue_writes_where_the_harness_looks_and_never_over_a_file() {
    let mut s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(Some("t")).unwrap();
    s.append_turn(&c, &helpers::simple_turn("hello", "hi"))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    for harness in Harness::ALL {
        let Outcome::Continued(out) = run(
            &mut s,
            Action::Continue {
                conversation: c.clone(),
                at: None,
                harness,
                home: cairn::discover::Home::at(home.path()),
                cwd: Some("/work/project".into()),
                redact: true,
            },
        ) else {
            panic!()
        };
        let rel = out
            .file
            .strip_prefix(home.path())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        match harness {
            Harness::ClaudeCode => {
                assert_eq!(
                    rel,
                    format!(".claude/projects/-work-project/{}.jsonl", out.session_id)
                );
                assert_eq!(
                    out.command,
                    format!("cd /work/project && claude --resume {}", out.session_id)
                );
            }
            Harness::Pi => {
                assert!(
                    rel.starts_with(".pi/agent/sessions/--work-project--/"),
                    "{rel}"
                );
                assert!(
                    rel.ends_with(&format!("_{}.jsonl", out.session_id)),
                    "{rel}"
                );
                assert_eq!(out.command, format!("pi --session {}", out.file.display()));
            }
            Harness::Codex => {
                assert!(
                    rel.starts_with(".codex/sessions/") && rel.contains("/rollout-"),
                    "{rel}"
                );
                assert!(
                    rel.ends_with(&format!("-{}.jsonl", out.session_id)),
                    "{rel}"
                );
                assert_eq!(out.command, format!("codex resume {}", out.session_id));
            }
            Harness::GeminiCli => {
                assert!(
                    rel.starts_with(".gemini/tmp/") && rel.contains("/chats/session-"),
                    "{rel}"
                );
                assert!(
                    rel.ends_with(&format!("-{}.jsonl", &out.session_id[..8])),
                    "{rel}"
                );
                assert_eq!(
                    out.command,
                    format!("cd /work/project && gemini --resume {}", out.session_id)
                );
            }
            Harness::Opencode => {
                assert_eq!(
                    rel,
                    format!(".local/share/opencode/import/{}.json", out.session_id)
                );
                assert!(out.session_id.starts_with("ses_"), "{}", out.session_id);
                assert_eq!(
                    out.command,
                    format!(
                        "cd /work/project && opencode import {} && opencode --session {}",
                        out.file.display(),
                        out.session_id
                    )
                );
            }
        }
        // the file is a session cairn reads back
        let mut back = Store::open_in_memory().unwrap();
        import(&mut back, &out.file);
        assert_eq!(
            history(&path(&s, &c), true),
            history(&path(&back, &tops(&back)[0]), true)
        );
    }
    // a file already there is never written over
    let f = agent::write(
        &s,
        &c,
        None,
        Harness::ClaudeCode,
        true,
        Some("/work/project"),
    )
    .unwrap();
    let target = agent::place(&cairn::discover::Home::at(home.path()), &f);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, "mine").unwrap();
    let err = cairn::commands::run(
        &mut s,
        &Settings::default(),
        Action::Continue {
            conversation: c.clone(),
            at: None,
            harness: Harness::ClaudeCode,
            home: cairn::discover::Home::at(home.path()),
            cwd: Some("/work/project".into()),
            redact: true,
        },
        &Quiet,
        &AtomicBool::new(false),
    );
    assert!(err.is_ok(), "a new session id: a new file");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
}

#[test]
fn sessions_of_one_harness_continue_in_another() {
    let cases = [
        ("claude-code/cc-2.0.5-image-paste.jsonl", Harness::Pi),
        ("claude-code/cc-2.0.5-image-paste.jsonl", Harness::Codex),
        (
            "pi/pi-v1-large-session-thinking-level-changes.jsonl",
            Harness::ClaudeCode,
        ),
        (
            "pi/pi-v1-large-session-thinking-level-changes.jsonl",
            Harness::Codex,
        ),
        (
            "codex/codex-desktop-spawn-agents-0.140.jsonl",
            Harness::ClaudeCode,
        ),
        ("codex/codex-desktop-spawn-agents-0.140.jsonl", Harness::Pi),
    ];
    for (file, harness) in cases {
        let mut s = Store::open_in_memory().unwrap();
        let conv = import(&mut s, &samples().join(file)).remove(0);
        let (back, c2, out) = again(&s, &conv, harness);
        let what = format!("{file} as {}", harness.name());
        // a failed reply the source did not send again (pi's aborted ones since 0.49.2) is left out by a harness
        // that would send it, which says so
        let source: Vec<Message> = path(&s, &conv)
            .into_iter()
            .filter(|m| {
                harness == Harness::Pi
                    || m.meta.pointer("/cairn/sent_again") != Some(&serde_json::json!(false))
            })
            .collect();
        if source.len() < path(&s, &conv).len() {
            assert!(
                out.notes
                    .iter()
                    .any(|n| n.contains("of failed replies left out")),
                "{what}: {:?}",
                out.notes
            );
        }
        same_history(
            &history(&source, false),
            &history(&path(&back, &c2), false),
            &what,
        );
        // usage travels (Codex folds cache writes into its input)
        let total = |u: &[Usage]| u.iter().map(|u| u.prompt() + u.output_tokens).sum::<u64>();
        assert_eq!(
            total(&usages(&source)),
            total(&usages(&path(&back, &c2))),
            "{what}"
        );
    }
}

#[test]
fn a_claude_code_compaction_continues_in_pi_as_pis_own_with_its_summary() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-compact-boundary.jsonl");
    let mut s = Store::open_in_memory().unwrap();
    let conv = import(&mut s, &f).remove(0);
    let summary = path(&s, &conv)
        .into_iter()
        .find(|m| m.meta.pointer("/cairn/kind").and_then(|k| k.as_str()) == Some("compact_summary"))
        .expect("the fixture's summary prompt");
    let first_line = cairn::model::plain_text(&summary.content)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let (back, c2, out) = again(&s, &conv, Harness::Pi);
    // pi's compaction carries Claude Code's summary; no extra message stands for it
    let entry: serde_json::Value = out
        .text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "compaction")
        .unwrap();
    assert!(
        entry["summary"].as_str().unwrap().contains(&first_line),
        "{entry}"
    );
    assert!(!out.text.contains("custom_message"));
    assert_eq!(compactions(&path(&back, &c2)), 1);
    same_history(
        &history(&path(&s, &conv), false),
        &history(&path(&back, &c2), false),
        "cc → pi",
    );
    in_order(
        &lines(&sent(&s, &conv)),
        &lines(&sent(&back, &c2)),
        "cc → pi",
    );
}

#[test]
fn a_call_a_provider_would_refuse_is_left_out_of_every_harness_s_session() {
    // a request whose tool call lost its name, and a result that lost the call it answers (each kept as it was: a
    // block cairn cannot model): no harness is handed a block its provider would refuse, and every session written
    // reads back
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("request.json");
    let body = serde_json::json!({"model": "claude-x", "messages": [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "nama": "ls", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "cat", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "|ool_use_id": "toolu_2", "content": "b"}]},
        {"role": "assistant", "content": "one file: a.txt"}]});
    std::fs::write(&f, body.to_string()).unwrap();
    let mut s = Store::open_in_memory().unwrap();
    import(&mut s, &f);
    let conv = tops(&s).remove(0);
    for harness in Harness::ALL {
        let (back, c, file) = again(&s, &conv, harness);
        assert!(
            !file.text.contains("\"nama\"") && !file.text.contains("|ool_use_id"),
            "{}",
            harness.name()
        );
        let texts: Vec<String> = path(&back, &c)
            .iter()
            .map(|m| cairn::model::plain_text(&m.content))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("one file: a.txt")),
            "{}: {texts:?}",
            harness.name()
        );
    }
}

#[test]
fn a_reply_pi_aborted_is_history_and_not_context_and_stays_home_where_a_harness_would_send_it() {
    // pi (since 0.49.2) leaves a reply that stopped on an error or was aborted out of every request after it
    let f =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi/pi-v3-aborted-reply.jsonl");
    let mut s = Store::open_in_memory().unwrap();
    let conv = import(&mut s, &f).remove(0);
    let partial = "Starting with the lexer module";
    let texts = |msgs: &[Message]| {
        msgs.iter()
            .map(|m| cairn::model::plain_text(&m.content))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        texts(&path(&s, &conv)).contains(partial),
        "the history keeps it"
    );
    let sent = cairn::reclaim::assemble::assemble(&s, &conv)
        .unwrap()
        .messages;
    let sent_text: String = sent
        .iter()
        .map(|m| cairn::model::plain_text(&m.content))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !sent_text.contains(partial),
        "the context leaves it out: {sent_text}"
    );
    assert!(sent_text.contains("Only the lexer for now."));
    for harness in Harness::ALL {
        let out = agent::write(&s, &conv, None, harness, true, None).unwrap();
        match harness {
            // pi writes it as aborted, opencode as a reply with an error: each leaves it out again
            Harness::Pi | Harness::Opencode => {
                assert!(out.text.contains(partial), "{}", harness.name())
            }
            // the others would send it: it stays home, and the export says so
            _ => {
                assert!(!out.text.contains(partial), "{}", harness.name());
                assert!(
                    out.notes
                        .iter()
                        .any(|n| n.contains("of failed replies left out")),
                    "{}: {:?}",
                    harness.name(),
                    out.notes
                );
            }
        }
        // read back, the context is the same (Claude Code's, Codex's and Gemini CLI's without the reply at all)
        let (back, c2, _) = again(&s, &conv, harness);
        let back_sent: String = cairn::reclaim::assemble::assemble(&back, &c2)
            .unwrap()
            .messages
            .iter()
            .map(|m| cairn::model::plain_text(&m.content))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            !back_sent.contains(partial),
            "{}: {back_sent}",
            harness.name()
        );
    }
}

#[test]
fn an_opencode_step_with_an_error_and_its_results_are_history_and_not_context() {
    // opencode leaves a reply with an error (but one the user aborted with content) out of what it sends, its
    // calls' results with it (`MessageV2.toModelMessages`)
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/opencode/opencode-errored-step.json");
    let mut s = Store::open_in_memory().unwrap();
    let conv = import(&mut s, &f).remove(0);
    let text = |msgs: &[Message]| {
        msgs.iter()
            .map(|m| cairn::model::plain_text(&m.content))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let sent_text = |s: &Store, c: &str| {
        cairn::reclaim::assemble::assemble(s, c)
            .unwrap()
            .messages
            .iter()
            .map(|m| cairn::model::plain_text(&m.content))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let history = text(&path(&s, &conv));
    assert!(
        history.contains("before the provider gave up")
            && history.contains("from the errored step")
    );
    let sent = sent_text(&s, &conv);
    assert!(!sent.contains("before the provider gave up"), "{sent}");
    assert!(!sent.contains("from the errored step"), "{sent}");
    assert!(sent.contains("src holds lexer.rs and parser.rs."));
    // the context panel and the transcript mark them
    let view = cairn::reclaim::PathView::load(&s, &conv, None).unwrap();
    let l = cairn::reclaim::layout(&view, &[], view.len());
    let fates = cairn::reclaim::assemble::fates(&view, &l);
    assert_eq!(
        fates
            .iter()
            .flatten()
            .map(|f| f.label())
            .collect::<Vec<_>>(),
        ["failed, not sent again", "failed, not sent again"]
    );
    // written back as opencode's, the reply keeps its error; a harness that would send it leaves it home
    for harness in Harness::ALL {
        let (back, c2, out) = again(&s, &conv, harness);
        let again_sent = sent_text(&back, &c2);
        assert!(
            !again_sent.contains("from the errored step"),
            "{}: {again_sent}",
            harness.name()
        );
        assert!(
            again_sent.contains("src holds lexer.rs"),
            "{}",
            harness.name()
        );
        if matches!(
            harness,
            Harness::ClaudeCode | Harness::Codex | Harness::GeminiCli
        ) {
            assert!(
                !out.text.contains("from the errored step"),
                "{}",
                harness.name()
            );
        }
    }
}
