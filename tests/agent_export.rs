//! Back to the agent: a path exported as a Claude Code, pi or Codex session reads back as the same messages, usage
//! and compactions, on every real sample of each harness (read in `../shared/samples`, not copied); cairn's own
//! compactions become the harness's, so the agent resumes with the context cairn assembled.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::export::agent::{self, Harness};
use cairn::model::{Block, Message, Role, ToolResultContent, Usage};
use cairn::reclaim::Settings;
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
    for m in msgs
        .iter()
        .filter(|m| !is_marker(m) && m.role != Role::System)
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

fn usages(msgs: &[Message]) -> Vec<Usage> {
    msgs.iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.usage)
        .collect()
}

fn compactions(msgs: &[Message]) -> usize {
    msgs.iter().filter(|m| is_marker(m)).count()
}

/// The text of what the path sends now (compactions applied), by role.
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
        .collect()
}

/// Writes the session file (and what goes beside it) into `dir` under the name the harness gives it.
fn write(dir: &Path, f: &agent::AgentFile) -> PathBuf {
    let p = dir.join(format!("{}.jsonl", f.session_id));
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
            let ha = history(&a, true);
            let hb = history(&b, true);
            if let Some(k) = (0..ha.len().max(hb.len())).find(|&k| ha.get(k) != hb.get(k)) {
                panic!(
                    "{what}: message block {k} differs:\n  source {:?}\n  again  {:?}",
                    ha.get(k),
                    hb.get(k)
                );
            }
            assert_eq!(usages(&a), usages(&b), "{what}: usage per reply");
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
    assert!(round_trip(&files("claude-code"), Harness::ClaudeCode) >= 5);
}

#[test]
fn pi_sessions_read_back_the_same_as_pi() {
    assert_eq!(round_trip(&files("pi"), Harness::Pi), 3);
}

#[test]
fn codex_rollouts_read_back_the_same_as_codex() {
    assert_eq!(round_trip(&files("codex"), Harness::Codex), 1);
}
