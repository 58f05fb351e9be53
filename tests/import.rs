//! Importing real transcripts (the samples in tests/fixtures, written by Claude Code, pi and Codex) and small
//! hand-written fixtures for each format feature, including malformed ones.

use std::path::{Path, PathBuf};

use cairn::formats::{self, Format};
use cairn::import;
use cairn::model::{Block, Role};
use cairn::pairs;
use cairn::store::{By, Store};

#[path = "support/helpers.rs"]
mod helpers;

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("i.db")).unwrap();
    (dir, s)
}

/// Imports one file and checks the outcome; returns the conversation ids.
fn import_ok(s: &mut Store, p: &str) -> (Vec<String>, formats::ImportReport) {
    let o = import::import_file(s, &fixture(p), None);
    assert!(o.error.is_none(), "{p}: {:?}", o.error);
    (o.conversations, o.report)
}

/// Every path from the root to the tip is pair-valid (an unanswered call may only sit at the very end).
fn assert_active_path_pair_valid(s: &Store, conv: &str) {
    let path = s.active_path(conv).unwrap();
    // compaction markers and their summaries are sent differently; check the run after the last marker
    let start = path
        .iter()
        .rposition(|m| m.role == Role::System)
        .map_or(0, |i| i + 1);
    pairs::check(&path[start..], true).unwrap_or_else(|e| panic!("{conv}: {e}"));
}

#[test]
fn claude_code_rewind_fork_sample_counts_match_a_hand_count() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "claude-code/cc-rewind-fork-2.1.42.jsonl");
    // 9 assistant replies (by message.id) + 10 user prompts + 2 tool-result messages
    assert_eq!(r.messages, 21);
    // the rewind: two user children of one reply. Parallel results and progress lines are not branches.
    assert_eq!(r.branches, 1);
    assert_eq!(r.tool_pairs, 2);
    assert_eq!(
        r.skipped.get("progress lines (attached as metadata)"),
        Some(&11)
    );
    let c = s.conversation(&ids[0]).unwrap();
    assert_eq!(c.messages, 21);
    // the tip is the leaf the session was last on: the second version of the prompt's branch
    let path = s.active_path(&ids[0]).unwrap();
    assert!(
        path.iter()
            .any(|m| m.summary(200).starts_with("I actually don't like"))
    );
    assert!(
        !path
            .iter()
            .any(|m| m.summary(200).starts_with("I very much like"))
    );
    assert_active_path_pair_valid(&s, &ids[0]);
    // thinking signatures survive
    let sig = path.iter().flat_map(|m| &m.content).find_map(|b| match b {
        Block::Thinking {
            signature: Some(s), ..
        } => Some(s.clone()),
        _ => None,
    });
    assert!(sig.is_some_and(|s| s.len() > 20));
}

/// What a request body's messages hold, message by message: its role and its words (texts, tool results' texts,
/// tool calls as name and input), same-role neighbours merged as a provider reads them.
fn sent_words(messages: &[serde_json::Value]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for m in messages {
        let role = m["role"].as_str().unwrap().to_string();
        let mut words = Vec::new();
        let blocks = match &m["content"] {
            serde_json::Value::String(t) => vec![serde_json::json!({"type": "text", "text": t})],
            c => c.as_array().unwrap().clone(),
        };
        for b in blocks {
            let text = match b["type"].as_str().unwrap() {
                "text" => b["text"].as_str().unwrap().to_string(),
                "tool_use" => format!("tool_use {} {}", b["name"], b["input"]),
                "tool_result" => match &b["content"] {
                    serde_json::Value::String(t) => t.clone(),
                    c => c
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                },
                other => panic!("block {other}"),
            };
            words.extend(text.split_whitespace().map(str::to_string));
        }
        match out.last_mut() {
            Some((r, w)) if *r == role => w.extend(words),
            _ => out.push((role, words)),
        }
    }
    out
}

#[test]
fn claude_code_s_rendered_attachments_are_sent_where_its_recorded_requests_put_them() {
    // Claude Code 2.1.33x records what it rendered of each attachment (`rendered`) and every request it made
    // (`api-request`: the messages kept from the request before, then the new ones, kept by hash in
    // `api-request-blob`). What cairn sends for each reply's request holds the same words in the same messages.
    let f = "claude-code/cc-2.1.332-rendered-attachments.jsonl";
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, f);
    assert_eq!(
        r.skipped.get(
            "attachment lines rendered for the model (sent with their message, kept as metadata)"
        ),
        Some(&6)
    );
    let mut blobs = std::collections::HashMap::new();
    let mut requests = std::collections::HashMap::new();
    let mut before: Vec<serde_json::Value> = Vec::new();
    let mut refs = Vec::new();
    for l in std::fs::read_to_string(fixture(f)).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        match v["type"].as_str().unwrap() {
            "api-request-blob" => {
                blobs.insert(
                    v["hash"].as_str().unwrap().to_string(),
                    v["message"].clone(),
                );
            }
            "api-request" => {
                let keep = v["keep"].as_u64().unwrap() as usize;
                let mut msgs: Vec<serde_json::Value> = before[..keep].to_vec();
                for h in v["tail"].as_array().unwrap() {
                    msgs.push(blobs[h.as_str().unwrap()].clone());
                }
                requests.insert(v["id"].as_str().unwrap().to_string(), msgs.clone());
                before = msgs;
            }
            "assistant" => refs.push(v["requestRef"].as_str().unwrap().to_string()),
            _ => {}
        }
    }
    let path = s.active_path(&ids[0]).unwrap();
    let replies: Vec<usize> = (0..path.len())
        .filter(|&i| path[i].role == Role::Assistant)
        .collect();
    assert_eq!(replies.len(), refs.len());
    for (&i, rid) in replies.iter().zip(&refs) {
        let at = path[i - 1].id.clone();
        let body: serde_json::Value = serde_json::from_str(
            &cairn::export::export(
                &s,
                &ids[0],
                Some(&at),
                cairn::export::ExportFormat::Anthropic,
                cairn::export::Options::default(),
            )
            .unwrap()
            .text,
        )
        .unwrap();
        assert_eq!(
            sent_words(body["messages"].as_array().unwrap()),
            sent_words(&requests[rid]),
            "request {rid}"
        );
    }
    // what it sent beside the messages (its system prompt and tools, recorded once per shape): the part of the
    // first reply's overhead known before any reply is measured
    let meta = s.conversation_meta(&ids[0]).unwrap();
    let beside = cairn::reclaim::replay::recorded_beside(&meta);
    assert!(
        beside.starts_with("You are a note-reading agent.\nRead the files"),
        "{beside}"
    );
    assert!(beside.contains(r#""name":"Read""#) && beside.contains(r#""name":"Bash""#));
    let (replayed, _) = cairn::reclaim::replay::store_samples(&s).unwrap();
    assert_eq!(replayed[0].beside, cairn::tokens::text(&beside));
    // the prompt keeps its title; the reminders are marked as what Claude Code rendered
    assert_eq!(
        s.conversation(&ids[0]).unwrap().title.as_deref(),
        Some("Read notes.txt and tell me what it says.")
    );
    assert_eq!(
        path[0].meta["rendered_attachments"],
        serde_json::json!([0, 1])
    );
    assert_eq!(
        path[2].meta["rendered_attachments"],
        serde_json::json!([1, 2])
    );
    // listings show what the user said before what the harness rendered beside it
    assert!(path[0].summary(80).starts_with("Read notes.txt"));
    assert!(path[4].summary(80).starts_with("Thanks. Is anything"));
    // and search finds a session by what was said, not by the reminders every session of the harness holds
    let hits = |text: &str| {
        s.search(&cairn::store::SearchQuery {
            text: text.to_string(),
            limit: 10,
            ..Default::default()
        })
        .unwrap()
        .total
    };
    assert_eq!(hits("plumber"), 2);
    assert_eq!(hits("feedback"), 0);
    assert_eq!(hits("Environment"), 0);
}

#[test]
fn claude_code_session_with_parallel_calls_and_a_subagent() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(
        &mut s,
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    );
    // 17 replies + 5 prompts + 15 result messages (40 results of parallel calls, merged per reply)
    assert_eq!(r.messages, 37);
    assert_eq!(
        r.branches, 0,
        "parallel tool results must not show as branches"
    );
    assert_eq!(r.tool_pairs, 40);
    assert_eq!(
        ids.len(),
        2,
        "the subagent is imported as a linked conversation"
    );
    let sub = s.conversation(&ids[1]).unwrap();
    assert_eq!(
        sub.title.as_deref(),
        Some("subagent: Research Steve Yegge Beads")
    );
    assert_eq!(sub.messages, 30);
    assert_active_path_pair_valid(&s, &ids[0]);
    assert_active_path_pair_valid(&s, &ids[1]);
    // usage numbers of assistant lines are kept
    let path = s.active_path(&ids[0]).unwrap();
    assert!(
        path.iter()
            .any(|m| m.usage.is_some_and(|u| u.output_tokens > 0))
    );
    // every message of the session is on the active path (no branches)
    assert_eq!(path.len(), 37);
}

#[test]
fn codex_sample_pairs_calls_and_skips_duplicate_events() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "codex/codex-desktop-spawn-agents-0.140.jsonl");
    assert_eq!(r.tool_pairs, 9);
    assert_eq!(
        r.skipped
            .get("event_msg agent_message (a duplicate of a response_item)"),
        Some(&5)
    );
    assert_eq!(r.messages, 18);
    assert_active_path_pair_valid(&s, &ids[0]);
    let path = s.active_path(&ids[0]).unwrap();
    // reasoning read as thinking: its summary, with its encrypted content (the whole reasoning, which Codex sends
    // back) as the signature; the line stays as metadata too
    let signed: Vec<&str> = path
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::Thinking {
                signature: Some(s), ..
            } => Some(s.as_str()),
            _ => None,
        })
        .collect();
    let encrypted: Vec<&str> = path
        .iter()
        .filter_map(|m| m.meta["lines"].as_array())
        .flatten()
        .filter_map(|l| l["payload"]["encrypted_content"].as_str())
        .collect();
    assert_eq!(signed.len(), 7);
    assert!(signed.iter().all(|s| encrypted.contains(s)));
    // the model its turn_context named, on every reply
    assert!(
        path.iter()
            .filter(|m| m.role == cairn::model::Role::Assistant)
            .all(|m| m.meta["model"] == "gpt-5.5")
    );
}

#[test]
fn codex_outputs_out_of_order_pair_by_call_id() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/codex-out-of-order.jsonl");
    assert_eq!(r.tool_pairs, 2);
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path.len(), 5);
    assert!(path[1].has_tool_use() && path[2].has_tool_result());
    let u = path[1].usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
        (20, 100, 30)
    );
    assert_eq!(
        path[4].role,
        Role::System,
        "compacted entry kept as a marker"
    );
    assert_active_path_pair_valid(&s, &ids[0]);
}

#[test]
fn pi_v3_sample_keeps_compactions_as_markers() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "pi/pi-v3-compaction-tiny.jsonl");
    assert_eq!(r.messages, 6);
    let path = s.active_path(&ids[0]).unwrap();
    let markers = path
        .iter()
        .filter(|m| m.cairn_kind() == Some("compaction"))
        .count();
    assert_eq!(markers, 2);
    assert_eq!(path.last().unwrap().role, Role::System);
}

#[test]
fn pi_v2_labels_become_checkpoints_and_branch_summaries_digests() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/pi-v2-labels.jsonl");
    assert_eq!(r.messages, 9);
    assert_eq!(r.branches, 1);
    let c = s.conversation(&ids[0]).unwrap();
    assert_eq!(c.title.as_deref(), Some("Pi labelled session"));
    let cps = s.checkpoints(&ids[0]).unwrap();
    let labels: Vec<_> = cps.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels.len(), 2);
    assert!(labels.contains(&"listed") && labels.contains(&"tried-x"));
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path.last().unwrap().summary(50), "Z works");
    assert!(path.iter().any(|m| m.cairn_kind() == Some("digest")));
    // the labelled message is on the path; rewinding to it works after import
    s.rewind(&ids[0], "listed", "Z works, X does not").unwrap();
    assert_active_path_pair_valid(&s, &ids[0]);
}

#[test]
fn pi_v1_linear_file_with_glued_objects() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/pi-v1-linear.jsonl");
    assert_eq!(r.messages, 4);
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path.len(), 4);
    assert_eq!(path[3].summary(10), "bye");
}

#[test]
fn claude_code_quirks_glued_lines_unknown_types_outside_parent_compaction() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/cc-quirks.jsonl");
    assert_eq!(r.messages, 11);
    assert_eq!(r.branches, 1);
    assert_eq!(r.tool_pairs, 2);
    assert_eq!(r.images, 1);
    assert_eq!(
        r.skipped.get("mystery-line records (kept as metadata)"),
        Some(&1)
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("not-in-this-file") && n.contains("root"))
    );
    let c = s.conversation(&ids[0]).unwrap();
    assert_eq!(c.title.as_deref(), Some("Quirky session"));
    let path = s.active_path(&ids[0]).unwrap();
    // one assistant message from three lines of msg_1, its two results merged into the next message
    assert_eq!(path[1].content.len(), 3);
    assert_eq!(
        path[2].tool_result_ids().collect::<Vec<_>>(),
        vec!["t1", "t2"]
    );
    // the compaction boundary hangs off its logical parent
    let marker = path
        .iter()
        .position(|m| m.cairn_kind() == Some("compaction"))
        .unwrap();
    assert_eq!(path[marker - 1].summary(20), "answer B");
    assert_eq!(path.last().unwrap().summary(20), "continuing");
    // the tool_use's `caller` is kept as metadata
    assert!(path[1].meta["block_extras"]["1"]["caller"].is_object());
    assert_active_path_pair_valid(&s, &ids[0]);
}

#[test]
fn openai_and_anthropic_request_bodies() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/openai-request.json");
    assert_eq!(r.messages, 6);
    assert_eq!(r.tool_pairs, 2);
    assert_eq!(r.images, 1);
    assert_active_path_pair_valid(&s, &ids[0]);
    let (ids, r) = import_ok(&mut s, "small/anthropic-request.json");
    assert_eq!(r.messages, 5);
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path[0].role, Role::System);
    assert_eq!(path[0].summary(20), "Be brief.");
    assert_eq!(r.tool_pairs, 1);
}

#[test]
fn detection_is_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    for (src, want) in [
        ("pi/pi-v3-compaction-tiny.jsonl", Format::Pi),
        (
            "codex/codex-desktop-spawn-agents-0.140.jsonl",
            Format::Codex,
        ),
        (
            "claude-code/cc-rewind-fork-2.1.42.jsonl",
            Format::ClaudeCode,
        ),
        ("small/openai-request.json", Format::Openai),
        ("small/anthropic-request.json", Format::Anthropic),
    ] {
        let p = dir.path().join("renamed.txt");
        std::fs::copy(fixture(src), &p).unwrap();
        let (got, _) = formats::parse_file(&p, None).unwrap();
        assert_eq!(got, want, "{src}");
    }
}

#[test]
fn a_malformed_file_is_refused_with_file_and_line_and_writes_nothing() {
    let (_d, mut s) = store();
    let o = import::import_file(&mut s, &fixture("small/cc-malformed.jsonl"), None);
    let e = o.error.unwrap();
    assert!(e.contains("cc-malformed.jsonl:2: "), "{e}");
    assert!(s.conversations().unwrap().is_empty());
}

#[test]
fn importing_the_same_file_twice_does_not_duplicate_it() {
    let (_d, mut s) = store();
    let (ids, _) = import_ok(&mut s, "pi/pi-v3-compaction-tiny.jsonl");
    let o = import::import_file(&mut s, &fixture("pi/pi-v3-compaction-tiny.jsonl"), None);
    assert_eq!(o.duplicate_of.as_deref(), Some(ids[0].as_str()));
    assert_eq!(s.conversations().unwrap().len(), 1);
}

#[test]
fn a_folder_is_imported_recursively_with_subagents_once() {
    let files = import::collect(&[fixture("")]).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl".to_string()));
    assert!(
        !names.contains(&"agent-ab1e6e141221a29ab.jsonl".to_string()),
        "subagent files (the >= 2.1 layout) come with their session"
    );
    assert!(!names.iter().any(|n| n.ends_with(".meta.json")));
}

#[test]
fn imported_transcripts_resume_pair_valid_at_every_budget() {
    let (_d, mut s) = store();
    let (ids, _) = import_ok(
        &mut s,
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    );
    for n in 0..40 {
        let r = s
            .resume(&ids[0], cairn::store::Budget::Messages(n))
            .unwrap();
        pairs::check(&r.messages, false).unwrap_or_else(|e| panic!("budget {n}: {e}"));
    }
}

#[test]
fn discover_lists_sessions_in_the_standard_folders_newest_first() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cc = h.join(".claude/projects/proj");
    let pi = h.join(".pi/agent/sessions/--p--");
    let cx = h.join(".codex/sessions/2026/06/19");
    for d in [&cc, &pi, &cx] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(
        fixture("pi/pi-v3-compaction-tiny.jsonl"),
        pi.join("a.jsonl"),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::copy(
        fixture("codex/codex-desktop-spawn-agents-0.140.jsonl"),
        cx.join("rollout-x.jsonl"),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::copy(
        fixture("claude-code/cc-rewind-fork-2.1.42.jsonl"),
        cc.join("s.jsonl"),
    )
    .unwrap();
    std::fs::create_dir_all(cc.join("s/subagents")).unwrap();
    std::fs::write(cc.join("s/subagents/agent-1.jsonl"), "{}\n").unwrap();
    let found = cairn::discover::discover(h);
    let formats: Vec<Format> = found.iter().map(|f| f.format).collect();
    assert_eq!(formats, vec![Format::ClaudeCode, Format::Codex, Format::Pi]);
    assert_eq!(found[0].messages, 34); // 12 user + 22 assistant lines
    assert_eq!(found[2].messages, 4);
    assert!(found.iter().all(|f| f.size > 0));
    assert!(cairn::discover::discover(&h.join("nothing-here")).is_empty());
}

#[test]
fn swe_agent_trajectories_import_as_tool_calls_with_their_outcome() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "trajectories/sweagent-gpt4-test-repo-i1.traj");
    let conv = s.conversation(&ids[0]).unwrap();
    // titled by the issue the run solved (not the demonstration's), and how it ended
    assert_eq!(
        conv.title.as_deref(),
        Some("SyntaxError: invalid syntax (SWE-agent, submitted)")
    );
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path.len(), 12);
    assert_eq!(path[0].role, Role::System);
    // each action a call named by its command, its observation the result
    let calls: Vec<(String, String)> = path
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            cairn::model::Block::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 5);
    assert_eq!(calls[0].1, "find_file");
    assert_eq!(
        r.tool_pairs, 4,
        "the last action (submit) ended the run unanswered"
    );
    assert!(r.notes.iter().any(|n| n.contains("no observation")));
    let meta = s.conversation_meta(&ids[0]).unwrap();
    assert_eq!(meta["info"]["model_stats"]["api_calls"], 5);
    assert_eq!(meta["info"]["exit_status"], "submitted");
    // SWE-agent measures the run, not a reply: its totals are the last reply's, as the sum of its 5 requests
    let last = path
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    let u = last.usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.requests),
        (52_861, 326, 5)
    );
    assert_eq!(last.meta["run_totals"]["cost"], 0.53839);
    // a trajectory that does not count its calls: the sum is still of every reply's request, never one measure
    let mut doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("trajectories/sweagent-gpt4-test-repo-i1.traj")).unwrap(),
    )
    .unwrap();
    doc["info"]["model_stats"]
        .as_object_mut()
        .unwrap()
        .remove("api_calls");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("uncounted.traj");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let mut s2 = Store::open(dir.path().join("i.db")).unwrap();
    let o = import::import_file(&mut s2, &file, None);
    let p2 = s2.active_path(&o.conversations[0]).unwrap();
    let u = p2.iter().rev().find_map(|m| m.usage).unwrap();
    assert_eq!((u.input_tokens, u.requests), (52_861, 5));
    // a run before SWE-agent 1.0 names no model: its tokens are counted, its cost is unknown, never $0
    let st = cairn::stats::stats(&s, By::Conversation, None, &Default::default()).unwrap();
    let row = st.rows.iter().find(|r| r.key == ids[0]).unwrap();
    assert_eq!((row.input_tokens, row.output_tokens), (52_861, 326));
    assert_eq!(row.cost_usd, None);
    assert_eq!(row.unpriced, vec![cairn::models::NO_MODEL.to_string()]);
}

#[test]
fn a_swe_agent_run_that_names_its_model_is_priced_as_that_model() {
    // SWE-agent 1.x keeps the run's configuration as a JSON string, with the model under `agent.model.name`
    let mut doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("trajectories/sweagent-gpt4-test-repo-i1.traj")).unwrap(),
    )
    .unwrap();
    doc["replay_config"] =
        serde_json::json!(r#"{"agent": {"model": {"name": "claude-3-5-sonnet-20241022"}}}"#);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.traj");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let mut s = Store::open(dir.path().join("i.db")).unwrap();
    let o = import::import_file(&mut s, &file, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    let path = s.active_path(&o.conversations[0]).unwrap();
    assert!(
        path.iter()
            .filter(|m| m.role == Role::Assistant)
            .all(|m| m.meta["model"] == "claude-3-5-sonnet-20241022")
    );
    let st = cairn::stats::stats(&s, By::Model, None, &Default::default()).unwrap();
    let row = st
        .rows
        .iter()
        .find(|r| r.key == "claude-3-5-sonnet")
        .unwrap();
    // $3 / $15 per million: 52,861 in and 326 out
    let cost = row.cost_usd.unwrap();
    assert!(
        (cost - (52_861.0 * 3.0 + 326.0 * 15.0) / 1e6).abs() < 1e-9,
        "{cost}"
    );

    // before 1.0 the run's output folder names the model (`<model>__<data>__<config>__t-…`), or the name SWE-agent
    // gave it (`gpt4`: GPT-4 Turbo's preview, which this run was: SWE-agent computed $0.53839 from its price); a
    // name neither the catalog nor SWE-agent knows names none
    for (run, model) in [
        (
            "claude-3-5-sonnet-20240620__SWE-bench_Lite__default__t-0.00__p-0.95__c-3.00__install-1",
            Some("claude-3-5-sonnet-20240620"),
        ),
        (
            "gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-3.00__install-1",
            Some("gpt-4-1106-preview"),
        ),
        (
            "my-model__SWE-bench_Lite__default__t-0.00__p-0.95__c-3.00__install-1",
            None,
        ),
    ] {
        let folder = dir.path().join(run);
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("marshmallow-code__marshmallow-1867.traj");
        std::fs::copy(
            fixture("trajectories/sweagent-gpt4-test-repo-i1.traj"),
            &file,
        )
        .unwrap();
        let mut s = Store::open(folder.join("i.db")).unwrap();
        let o = import::import_file(&mut s, &file, None);
        assert!(o.error.is_none(), "{:?}", o.error);
        let path = s.active_path(&o.conversations[0]).unwrap();
        let reply = path.iter().find(|m| m.role == Role::Assistant).unwrap();
        assert_eq!(reply.meta["model"].as_str(), model, "{run}");
        // priced by the catalog as SWE-agent priced it, to the cent
        let st = cairn::stats::stats(&s, By::Model, None, &Default::default()).unwrap();
        let cost = st.rows.iter().filter_map(|r| r.cost_usd).sum::<f64>();
        if model == Some("gpt-4-1106-preview") {
            assert!((cost - 0.53839).abs() < 0.005, "{cost}");
        }
    }
}

/// mini-SWE-agent's trajectories as mini-SWE-agent 2.4.6 and 1.17.5 wrote them (their model scripted: litellm
/// responses whose usage litellm's token counter gave, so what the fixtures call measured is litellm's count).
#[test]
fn mini_swe_agent_trajectories_of_every_layout_import_with_their_measured_replies() {
    let (_d, mut s) = store();
    let prices = Default::default();
    // 2.x with tool calls, one reply rejected for want of one
    let (ids, r) = import_ok(
        &mut s,
        "mini-swe-agent/mini-2.4-toolcall-format-error-gpt-4.1.traj.json",
    );
    let conv = &ids[0];
    assert_eq!(
        s.conversation(conv).unwrap().title.as_deref(),
        Some(
            "calc.py crashes with ZeroDivisionError when b is 0; make div raise a clear error… \
             (mini-SWE-agent, Submitted)"
        )
    );
    assert_eq!((r.messages, r.tool_pairs), (13, 4));
    assert_eq!(
        r.skipped
            .get("the run's exit (never sent to the model; kept as metadata)"),
        Some(&1)
    );
    assert_active_path_pair_valid(&s, conv);
    let path = s.active_path(conv).unwrap();
    let replies: Vec<_> = path.iter().filter(|m| m.role == Role::Assistant).collect();
    assert_eq!(replies.len(), 6);
    assert!(
        replies
            .iter()
            .all(|m| m.meta["model"] == "gpt-4.1-2025-04-14" && m.usage.is_some())
    );
    // the rejected reply was billed and measured, and is never sent again
    let rejected: Vec<_> = replies.iter().filter(|m| m.is_failed()).collect();
    assert_eq!(rejected.len(), 1);
    assert!(
        cairn::model::plain_text(&rejected[0].content)
            .starts_with("I will explain without a command")
    );
    // the command that exited 1 is an error
    let errors = path
        .iter()
        .flat_map(|m| m.content.iter())
        .filter(|b| matches!(b, Block::ToolResult { is_error: true, .. }))
        .count();
    assert_eq!(errors, 1);
    // the system message and the task carry the run's time (the first reply's), not the import's
    assert_eq!(path[0].created_at, replies[0].created_at);
    assert!(path.windows(2).all(|w| w[0].created_at <= w[1].created_at));
    // the model's list price gives what mini-SWE-agent computed with litellm's, to the cent and beyond
    let meta = s.conversation_meta(conv).unwrap();
    let computed = meta["info"]["model_stats"]["instance_cost"]
        .as_f64()
        .unwrap();
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    let row = st.rows.iter().find(|r| &r.key == conv).unwrap();
    assert!((row.cost_usd.unwrap() - computed).abs() < 1e-9);
    assert_eq!((row.tool_calls, row.tool_errors), (5, 1));
    // every reply is replayed against its measured prompt (litellm's `prompt_tokens`, the cache inside it)
    let rp = cairn::reclaim::replay::replay(&s, Some(conv)).unwrap();
    assert_eq!(rp.replies.len(), 6);
    let first = replies[0].usage.unwrap();
    assert_eq!(rp.replies[0].measured, first.prompt());
    assert_eq!(rp.models[0].model, "gpt-4.1");

    // 2.x through the Responses API: replies are response objects, results `function_call_output` items
    let (ids, r) = import_ok(
        &mut s,
        "mini-swe-agent/mini-2.4-responses-api-gpt-5.1.traj.json",
    );
    assert_eq!((r.messages, r.tool_pairs), (7, 2));
    assert_active_path_pair_valid(&s, &ids[0]);
    let path = s.active_path(&ids[0]).unwrap();
    let reply = path.iter().find(|m| m.role == Role::Assistant).unwrap();
    assert!(matches!(reply.content[0], Block::Thinking { .. }));
    assert!(
        reply
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolUse { name, .. } if name == "bash"))
    );
    let u = reply.usage.unwrap();
    assert_eq!(reply.meta["model"], "gpt-5.1-2025-11-13");
    assert!(u.input_tokens > 0 && u.output_tokens > 0);
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    let row = st.rows.iter().find(|r| r.key == ids[0]).unwrap();
    let meta = s.conversation_meta(&ids[0]).unwrap();
    let computed = meta["info"]["model_stats"]["instance_cost"]
        .as_f64()
        .unwrap();
    assert!((row.cost_usd.unwrap() - computed).abs() < 1e-9);

    // the text-based form (2.x) and 1.x: commands in the reply's text, their output the next user message
    let mut conv = String::new();
    for (f, replies_n) in [
        ("mini-swe-agent/mini-2.4-textbased-gpt-4.1.traj.json", 6),
        (
            "mini-swe-agent/mini-1.17-textbased-claude-sonnet-4.traj.json",
            5,
        ),
    ] {
        let (ids, r) = import_ok(&mut s, f);
        conv = ids[0].clone();
        assert_eq!(r.tool_pairs, 0, "{f}");
        let path = s.active_path(&ids[0]).unwrap();
        let replies: Vec<_> = path.iter().filter(|m| m.role == Role::Assistant).collect();
        assert_eq!(replies.len(), replies_n, "{f}");
        assert!(replies.iter().all(|m| m.usage.is_some()), "{f}");
    }
    // 1.x through litellm to Anthropic: cache writes and reads apart from the uncached input
    let path = s.active_path(&conv).unwrap();
    let second = path
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .nth(1)
        .unwrap();
    let u = second.usage.unwrap();
    assert_eq!(second.meta["model"], "claude-sonnet-4-20250514");
    assert!(u.cache_read_input_tokens > 0 && u.cache_creation_input_tokens > 0);

    // `cairn discover` finds the `mini` CLI's last run where mini-SWE-agent keeps it (its settings beside it are not
    // a session)
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".config/mini-swe-agent");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixture("mini-swe-agent/mini-2.4-textbased-gpt-4.1.traj.json"),
        dir.join("last_mini_run.traj.json"),
    )
    .unwrap();
    std::fs::write(dir.join(".env"), "MSWEA_CONFIGURED=true\n").unwrap();
    let found = cairn::discover::discover(home.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].format, found[0].messages),
        (Format::MiniSweAgent, 13)
    );

    // a batch run's folder: a folder per instance with its trajectory, and the predictions beside them, which are
    // no session (a folder imported whole is not refused for them)
    let batch = tempfile::tempdir().unwrap();
    let inst = batch.path().join("django__django-11099");
    std::fs::create_dir_all(&inst).unwrap();
    let traj = inst.join("django__django-11099.traj.json");
    std::fs::copy(
        fixture("mini-swe-agent/mini-2.4-toolcall-format-error-gpt-4.1.traj.json"),
        &traj,
    )
    .unwrap();
    let preds = batch.path().join("preds.json");
    std::fs::write(
        &preds,
        r#"{"django__django-11099": {"model_name_or_path": "openai/gpt-4.1", "instance_id": "django__django-11099", "model_patch": ""}}"#,
    )
    .unwrap();
    assert_eq!(
        cairn::import::collect(&[batch.path().to_path_buf()]).unwrap(),
        vec![traj]
    );
    // alone (no trajectories beside it), a file of that name is read as any other
    std::fs::remove_dir_all(&inst).unwrap();
    assert_eq!(
        cairn::import::collect(&[batch.path().to_path_buf()]).unwrap(),
        vec![preds]
    );
}

#[test]
fn openhands_trajectories_import_responses_with_their_calls_results_and_usage() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(
        &mut s,
        "trajectories/openhands-basic-gui-mode-trajectory.json",
    );
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path[0].role, Role::User);
    assert!(cairn::model::plain_text(&path[0].content).starts_with("I want to create a VueJS app"));
    assert_eq!(r.tool_pairs, 4);
    assert_active_path_pair_valid(&s, &ids[0]);
    // each LLM response carries its model and usage (litellm's prompt_tokens split into uncached and cache)
    let replies: Vec<_> = path.iter().filter(|m| m.role == Role::Assistant).collect();
    let first = replies[0];
    assert_eq!(first.meta["model"], "claude-3-5-sonnet-20241022");
    let u = first.usage.unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.cache_creation_input_tokens,
            u.output_tokens
        ),
        (4, 3435, 104)
    );
    // the agent's closing message is the last reply
    let last = replies.last().unwrap();
    assert!(
        cairn::model::plain_text(&last.content)
            .starts_with("I've created a complete Vue.js todo application")
    );
    // a file the editor created reads as the editor's line the model was sent, not the diff OpenHands shows its
    // user (kept beside it): the model's next prompt grew by 1.2k, not by the 2.6k of the diff
    let created: Vec<_> = path
        .iter()
        .flat_map(|m| m.content.iter().map(move |b| (m, b)))
        .filter_map(|(m, b)| match b {
            Block::ToolResult {
                tool_use_id,
                content: cairn::model::ToolResultContent::Text(t),
                ..
            } if t.starts_with("File created successfully at: ") => Some((m, tool_use_id, t)),
            _ => None,
        })
        .collect();
    assert_eq!(created.len(), 2, "{created:?}");
    for (m, id, _) in created {
        let shown = m.meta["shown"][id.as_str()].as_str().unwrap();
        assert!(shown.starts_with("--- /workspace/todo-app/"), "{shown}");
    }
}

#[test]
fn codex_rollouts_from_before_session_meta_import() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/codex-legacy-rollout.jsonl");
    let path = s.active_path(&ids[0]).unwrap();
    let roles: Vec<Role> = path.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
    assert_eq!(r.tool_pairs, 1);
    assert_eq!(r.skipped.get("state (kept as metadata)"), Some(&2));
    let meta = s.conversation_meta(&ids[0]).unwrap();
    assert_eq!(meta["session_meta"]["instructions"], "You are Codex.");
}

#[test]
fn inline_sidechains_become_subagents_attached_to_their_task_calls() {
    let (_d, mut s) = store();
    let (ids, _) = import_ok(
        &mut s,
        "claude-code/cc-1.0.98-inline-sidechains-task-fanout.jsonl",
    );
    // the session and one subagent per Task call (five), not one conversation of six root trees
    assert_eq!(ids.len(), 6, "{ids:?}");
    let main = s.conversation(&ids[0]).unwrap();
    assert_eq!(main.messages, 19);
    let main_msgs = s.messages(&ids[0]).unwrap();
    assert_eq!(
        main_msgs.iter().filter(|m| m.parent.is_none()).count(),
        1,
        "one root"
    );
    let calls: Vec<String> = main_msgs
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            cairn::model::Block::ToolUse { id, name, .. } if name == "Task" => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 5);
    let mut spawned: Vec<String> = Vec::new();
    for id in &ids[1..] {
        let c = s.conversation(id).unwrap();
        assert_eq!(c.linked_to.as_deref(), Some(ids[0].as_str()));
        assert!(
            c.title.as_deref().unwrap().starts_with("subagent: "),
            "{:?}",
            c.title
        );
        let call = c.spawned_by.clone().expect("attached to its Task call");
        // the call is found in the parent, where the window shows it
        assert!(s.message_with_call(&ids[0], &call).unwrap().is_some());
        spawned.push(call);
    }
    spawned.sort();
    let mut want = calls.clone();
    want.sort();
    assert_eq!(spawned, want, "each Task call spawned exactly one subagent");
    // counted in stats, found by search
    let st = cairn::stats::stats(&s, cairn::store::By::Model, None, &Default::default()).unwrap();
    assert!(st.rows.iter().map(|r| r.subagents).sum::<u64>() >= 5);
    let hits = s
        .search(&cairn::store::SearchQuery {
            text: "TodoItem".into(),
            limit: 100,
            ..Default::default()
        })
        .unwrap();
    assert!(hits.hits.iter().any(|h| ids[1..].contains(&h.conversation)));
}

#[test]
fn agent_files_beside_a_session_are_its_subagents() {
    let (_d, mut s) = store();
    let files = import::collect(&[fixture("claude-code/coderabbit-review-helper")]).unwrap();
    let o: Vec<import::FileOutcome> = files
        .iter()
        .map(|f| import::import_file(&mut s, f, None))
        .collect();
    let ids: Vec<String> = o.iter().flat_map(|f| f.conversations.clone()).collect();
    assert_eq!(
        o.len(),
        1,
        "the agent file is imported with its session, not on its own"
    );
    assert_eq!(ids.len(), 2);
    let child = s.conversation(&ids[1]).unwrap();
    assert_eq!(child.linked_to.as_deref(), Some(ids[0].as_str()));
    assert_eq!(
        child.title.as_deref(),
        Some("subagent: Explore project structure for packaging")
    );
    assert!(child.spawned_by.is_some());
}

#[test]
fn a_reply_whose_thinking_is_hidden_counts_it_from_what_it_wrote() {
    // Claude Code writes Opus 4.7's thinking as `"thinking": ""` and its signature: the provider still counts it in
    // every later request, so the reply's measure takes it from the output tokens the provider measured (1,500)
    // less what the reply shows, in the unit of the model's default scale
    let (_d, mut s) = store();
    let (ids, _) = import_ok(&mut s, "claude-code/hidden-thinking-2.1.jsonl");
    let heads = s.heads(&ids[0]).unwrap();
    let facts = s.facts(&ids[0], &heads).unwrap();
    let replies: Vec<usize> = (0..heads.len())
        .filter(|&i| heads[i].role == Role::Assistant)
        .collect();
    assert_eq!(replies.len(), 2, "the reply's three lines are one message");
    let (first, last) = (&facts[replies[0]].measure, &facts[replies[1]].measure);
    let scale = cairn::models::default_scale("claude-opus-4-7");
    let written = (1500.0 / scale).round() as u64;
    assert_eq!(
        first.thinking,
        written - first.text - first.tool_use,
        "{first:?}"
    );
    assert!(first.thinking > 1000);
    assert_eq!(last.thinking, 0, "a reply without thinking has none");
    // the message's estimate carries it (what resume and the budgets add up)
    assert_eq!(heads[replies[0]].tokens, first.tokens());
    // what the next request is predicted from counts it: the hidden thinking is most of what was added
    let view = cairn::reclaim::PathView::load(&s, &ids[0], None).unwrap();
    let before = cairn::reclaim::replay::totals_before(
        &view,
        cairn::reclaim::assemble::ModelReader::of("claude-opus-4-7"),
    );
    let added = before[replies[1]].total() - before[replies[0]].total();
    assert!(added > first.thinking, "{added}");
}

#[test]
fn files_named_one_by_one_import_each_session_once() {
    // a shell glob names the session, its subagents and their sidecars one by one: each is read with the file
    // that reads it, so no subagent is imported a second time on its own (its tokens counted twice)
    let named = [
        "claude-code/coderabbit-review-helper/agent-ea02459f.jsonl",
        "claude-code/coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-ab1e6e141221a29ab.jsonl",
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-ab1e6e141221a29ab.meta.json",
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    ];
    let files = import::collect(&named.map(fixture)).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
            "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
        ]
    );
    // a subagent named alone brings its session (which reads it), and a sidecar its transcript's session
    let alone = import::collect(&[fixture(named[2])]).unwrap();
    assert_eq!(alone, [fixture(named[4])]);
    assert_eq!(import::main_file(&fixture(named[3])), fixture(named[4]));
    // Aider's input log is read as its chat history (it is no transcript of its own)
    assert_eq!(
        import::collect(&[fixture("small/aider-small.aider.input.history")]).unwrap(),
        [fixture("small/aider-small.aider.chat.history.md")]
    );
    // and the import says so
    let (_d2, mut s2) = store();
    let cairn::commands::Outcome::Imported(out) = helpers::run_action(
        &mut s2,
        cairn::commands::Action::Import {
            paths: vec![fixture(named[2])],
            format: None,
        },
    ) else {
        panic!()
    };
    assert_eq!(out.len(), 1);
    let said = |n: &String| n.contains("agent-ab1e6e141221a29ab.jsonl is read with this file");
    let notes = &out[0].report.notes;
    assert!(notes.iter().any(said), "{notes:?}");
    let (_d, mut s) = store();
    let ids: Vec<String> = files
        .iter()
        .flat_map(|f| import::import_file(&mut s, f, None).conversations)
        .collect();
    assert_eq!(ids.len(), 4, "two sessions, each with its one subagent");
    assert_eq!(s.conversations().unwrap().len(), 4);
}

#[test]
fn codex_compacted_records_of_every_shape_are_markers_with_what_the_model_saw() {
    // 0.136: {message: "", replacement_history}; 0.140: + window_id as an integer; 0.142: window_id a uuid and
    // window_number; 0.142.2 / 0.145: + first_window_id, previous_window_id, and an encrypted compaction item last
    let dir = tempfile::tempdir().unwrap();
    let history = serde_json::json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the parser"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "the parser is fixed"}]}
    ]);
    let shapes = [
        serde_json::json!({"message": "", "replacement_history": history}),
        serde_json::json!({"message": "", "replacement_history": history, "window_id": 3}),
        serde_json::json!({"message": "", "replacement_history": history,
                           "window_id": "0199a0c1-6a7e-7d10-b4a5-1f0e2d3c4b5a", "window_number": 2}),
        serde_json::json!({"message": "", "window_id": "0199a0c1-6a7e-7d10-b4a5-1f0e2d3c4b5b", "window_number": 3,
                           "first_window_id": "0199a0c1-6a7e-7d10-b4a5-1f0e2d3c4b5a",
                           "previous_window_id": "0199a0c1-6a7e-7d10-b4a5-1f0e2d3c4b5a",
                           "replacement_history": history.as_array().unwrap().iter().cloned()
                               .chain([serde_json::json!({"type": "compaction", "encrypted_content": "gAAAAB".repeat(40)})])
                               .collect::<Vec<_>>()}),
    ];
    for (k, payload) in shapes.iter().enumerate() {
        let lines = [
            serde_json::json!({"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta",
                               "payload": {"id": format!("s{k}"), "cwd": "/w", "cli_version": "0.145.0"}}),
            serde_json::json!({"timestamp": "2026-11-02T10:00:01.000Z", "type": "response_item",
                               "payload": {"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "fix the parser"}]}}),
            serde_json::json!({"timestamp": "2026-11-02T10:00:02.000Z", "type": "response_item",
                               "payload": {"type": "message", "role": "assistant",
                                           "content": [{"type": "output_text", "text": "the parser is fixed"}]}}),
            serde_json::json!({"timestamp": "2026-11-02T10:00:03.000Z", "type": "compacted", "payload": payload}),
            serde_json::json!({"timestamp": "2026-11-02T10:00:04.000Z", "type": "response_item",
                               "payload": {"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "now the tests"}]}}),
        ];
        let f = dir.path().join(format!("rollout-{k}.jsonl"));
        let text: Vec<String> = lines.iter().map(|v| v.to_string()).collect();
        std::fs::write(&f, text.join("\n") + "\n").unwrap();
        let (_d, mut s) = store();
        let cairn::commands::Outcome::Imported(out) = helpers::run_action(
            &mut s,
            cairn::commands::Action::Import {
                paths: vec![f],
                format: None,
            },
        ) else {
            panic!()
        };
        assert!(out[0].error.is_none(), "shape {k}: {:?}", out[0].error);
        let path = s.active_path(&out[0].conversations[0]).unwrap();
        let marker = path
            .iter()
            .find(|m| m.cairn_kind() == Some("compaction"))
            .unwrap();
        let text = cairn::model::plain_text(&marker.content);
        assert!(
            text.contains("fix the parser") && text.contains("the parser is fixed"),
            "shape {k}: {text}"
        );
        assert_eq!(
            text.contains("encrypted by the provider: 240 characters"),
            k == 3,
            "shape {k}: {text}"
        );
        assert_eq!(path.last().unwrap().role, Role::User);
    }
}

/// The texts of what a path sends, in order (the harness's summary as `summary`).
fn sent_texts(s: &Store, conv: &str) -> Vec<String> {
    use cairn::reclaim::assemble::{Piece, layout};
    use cairn::reclaim::view::PathView;
    let view = PathView::load(s, conv, None).unwrap();
    let path = s.active_path(conv).unwrap();
    layout(&view, &[], view.len())
        .pieces
        .iter()
        .map(|p| match p {
            Piece::Message { index, .. } => cairn::model::plain_text(&path[*index].content),
            Piece::HarnessSummary { .. } => "summary".to_string(),
            Piece::Cover { .. } => "cover".to_string(),
        })
        .collect()
}

#[test]
fn pi_format_4_transactions_are_read_as_their_entries() {
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/pi-v4-transactions.jsonl");
    // 2 prompts, 3 replies, 1 result, the compaction, and the prompt it retained inline
    assert_eq!(r.messages, 8);
    assert_eq!(r.tool_pairs, 1);
    let c = s.conversation(&ids[0]).unwrap();
    // the name is the last `pi.session.name` write, not the first prompt
    assert_eq!(c.title.as_deref(), Some("Counting lines"));
    let path = s.active_path(&ids[0]).unwrap();
    assert_eq!(path.len(), 8);
    assert_eq!(path.last().unwrap().summary(50), "I will count the words.");
    // numeric timestamps are read
    assert_eq!(path[0].created_at, 1_767_225_601_000);
    let replies: Vec<u64> = path
        .iter()
        .filter_map(|m| m.usage.map(|u| u.input_tokens))
        .collect();
    assert_eq!(replies, vec![900, 950, 300]);
    // after the self-retaining compaction the model saw its summary, the prompt it kept, and the reply
    assert_eq!(
        sent_texts(&s, &ids[0]),
        vec!["summary", "and words?", "I will count the words."]
    );
    assert_active_path_pair_valid(&s, &ids[0]);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("1 request(s) outside the conversation"))
    );
}

#[test]
fn pi_format_4_names_the_leaf_and_the_line_at_fault() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("small/pi-v4-transactions.jsonl")).unwrap();
    // the main lane's leaf moved back to the first reply: the tip follows it, not the last entry
    let moved = format!(
        "{text}{}\n",
        r#"{"kind":"value","op":"set","seq":20,"namespace":"lane.leaf","key":"main","value":"a2"}"#
    );
    let p = dir.path().join("leaf.jsonl");
    std::fs::write(&p, moved).unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let o = import::import_file(&mut s, &p, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    let path = s.active_path(&o.conversations[0]).unwrap();
    assert_eq!(path.last().unwrap().summary(50), "notes.txt has 42 lines.");
    // a bad write inside a transaction line is named by that line
    let lines: Vec<&str> = text.lines().collect();
    let mut bad = lines.clone();
    let broken = lines[3].replace(r#""role":"assistant""#, r#""role":"oracle""#);
    bad[3] = &broken;
    let p = dir.path().join("bad.jsonl");
    std::fs::write(&p, bad.join("\n") + "\n").unwrap();
    let e = import::import_file(&mut s, &p, None).error.unwrap();
    assert!(e.contains("bad.jsonl:4:") && e.contains("oracle"), "{e}");
}

/// A format 3 file as pi's migration writes it in format 4: the same entries, ids and times, committed in
/// transactions of two writes.
fn to_format_4(v3: &str) -> String {
    let mut out = Vec::new();
    let mut pending: Vec<serde_json::Value> = Vec::new();
    for (seq, line) in v3.lines().enumerate() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "session" {
            out.push(
                serde_json::json!({"v": 4, "kind": "header", "id": v["id"], "storageVersion": 1,
                "createdAt": 1_778_547_747_657_i64, "cwd": v["cwd"]})
                .to_string(),
            );
            continue;
        }
        let ms = v["timestamp"]
            .as_str()
            .map(|t| t.parse::<jiff::Timestamp>().unwrap().as_millisecond());
        v["timestamp"] = serde_json::json!(ms);
        v["kind"] = serde_json::json!("entry");
        v["seq"] = serde_json::json!(seq);
        pending.push(v);
        if pending.len() == 2 {
            out.push(serde_json::Value::Array(std::mem::take(&mut pending)).to_string());
        }
    }
    out.extend(pending.iter().map(|v| v.to_string()));
    out.join("\n") + "\n"
}

#[test]
fn a_pi_file_migrated_in_place_to_format_4_is_the_same_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("session.jsonl");
    let v3 = std::fs::read_to_string(fixture("pi/pi-v3-compaction-tiny.jsonl")).unwrap();
    std::fs::write(&live, &v3).unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let first = import::import_file(&mut s, &live, None);
    assert_eq!(first.status, "new", "{:?}", first.error);
    let before = sent_texts(&s, &first.conversations[0]);
    // pi rewrites the file in format 4 when it next opens it
    std::fs::write(&live, to_format_4(&v3)).unwrap();
    let again = import::import_file(&mut s, &live, None);
    assert_eq!(again.status, "unchanged", "{:?}", again.error);
    assert_eq!(
        again.duplicate_of.as_deref(),
        Some(first.conversations[0].as_str())
    );
    assert_eq!(s.conversations().unwrap().len(), 1, "nothing counted twice");
    // and read on its own it is the same context
    let mut other = Store::open(dir.path().join("o.db")).unwrap();
    let o = import::import_file(&mut other, &live, None);
    assert_eq!(sent_texts(&other, &o.conversations[0]), before);
}

#[test]
fn oh_my_pi_title_line_before_the_header_names_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("small/pi-v1-linear.jsonl")).unwrap();
    let p = dir.path().join("omp.jsonl");
    std::fs::write(
        &p,
        format!(
            "{}\n{text}",
            r#"{"type":"title","title":"Greeting the user                    "}"#
        ),
    )
    .unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let o = import::import_file(&mut s, &p, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.report.messages, 4, "the title line is no message");
    let c = s.conversation(&o.conversations[0]).unwrap();
    assert_eq!(c.title.as_deref(), Some("Greeting the user"));
}

#[test]
fn pi_context_edits_leave_a_message_out_or_send_it_with_other_content() {
    use cairn::reclaim::assemble::{layout, materialize};
    use cairn::reclaim::view::PathView;
    let (_d, mut s) = store();
    let (ids, r) = import_ok(&mut s, "small/pi-v3-context-edit.jsonl");
    // 7 messages and the 2 edits, each a marker on the path: the history is untouched
    assert_eq!(r.messages, 9);
    let path = s.active_path(&ids[0]).unwrap();
    assert!(
        path.iter()
            .any(|m| cairn::model::plain_text(&m.content).contains("line 200: ERROR"))
    );
    let view = PathView::load(&s, &ids[0], None).unwrap();
    let l = layout(&view, &[], view.len());
    let sent = materialize(&view, &l, Some(&s)).unwrap();
    let texts: Vec<String> = sent
        .iter()
        .map(|m| cairn::model::plain_text(&m.content))
        .collect();
    // the failed attempt is out; the long result is sent as its replacement, still the call's result
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert!(
        !sent
            .iter()
            .any(|m| m.sources.iter().any(|id| id == &path[3].id))
    );
    assert!(texts[2].contains("201 lines, one error"), "{}", texts[2]);
    assert!(!texts.iter().any(|t| t.contains("line 17: ok")));
    assert!(matches!(
        &sent[2].content[0],
        Block::ToolResult { tool_use_id, .. } if tool_use_id == "t1"
    ));
    cairn::pairs::check(&sent, true).unwrap();
    // the tally counts the replacement, not the 201 lines
    assert!(l.tally.by_kind.tool_results < 100, "{:?}", l.tally.by_kind);
    // before the second edit the model saw the whole log
    let before = layout(&view, &[], 6);
    assert!(
        before.tally.by_kind.tool_results > 500,
        "{:?}",
        before.tally.by_kind
    );
}

#[test]
fn sessions_are_found_where_the_harnesses_own_settings_moved_them() {
    let home = tempfile::tempdir().unwrap();
    let moved = tempfile::tempdir().unwrap();
    let put = |dir: std::path::PathBuf, name: &str, from: &str| {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixture(from), dir.join(name)).unwrap();
    };
    // CLAUDE_CONFIG_DIR, CODEX_HOME and PI_CODING_AGENT_DIR each moved one harness's folder out of the home
    put(
        moved.path().join("claude/projects/-p"),
        "s.jsonl",
        "claude-code/cc-rewind-fork-2.1.42.jsonl",
    );
    put(
        moved.path().join("codex/sessions/2026/06/19"),
        "rollout-2026-06-19T02-14-27-019f0000-aaaa-7000-8000-000000000001.jsonl",
        "codex-spawn/rollout-2026-06-19T02-14-27-019f0000-aaaa-7000-8000-000000000001.jsonl",
    );
    put(
        moved.path().join("pi/sessions/--p--"),
        "x.jsonl",
        "pi/pi-v3-compaction-tiny.jsonl",
    );
    // GEMINI_CLI_HOME: the folder holding Gemini CLI's `.gemini`
    put(
        moved.path().join("gemini/.gemini/tmp/p/chats"),
        "session-2026-04-01T10-00-0a1b2c3d.json",
        "small/gemini-cli-small.json",
    );
    // OPENHANDS_PERSISTENCE_DIR: the folder holding OpenHands' `conversations`
    let conv = fixture("openhands-v1/conversations/d6735859d88d47f7a55284f23fbe280a");
    for f in walk(&conv) {
        let to = moved
            .path()
            .join("openhands/conversations/d6735859d88d47f7a55284f23fbe280a")
            .join(f.strip_prefix(&conv).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&f, &to).unwrap();
    }
    let run = |env: &[(&str, std::path::PathBuf)]| -> Vec<String> {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.args([
            "--db",
            home.path().join("s.db").to_str().unwrap(),
            "discover",
            "--json",
        ])
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("OPENHANDS_CONVERSATIONS_DIR")
        .env_remove("OPENHANDS_PERSISTENCE_DIR");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut f: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["format"].as_str().unwrap().to_string())
            .collect();
        f.sort();
        f
    };
    assert!(run(&[]).is_empty(), "nothing in the default folders");
    let found = run(&[
        ("CLAUDE_CONFIG_DIR", moved.path().join("claude")),
        ("CODEX_HOME", moved.path().join("codex")),
        ("PI_CODING_AGENT_DIR", moved.path().join("pi")),
        ("GEMINI_CLI_HOME", moved.path().join("gemini")),
        ("OPENHANDS_PERSISTENCE_DIR", moved.path().join("openhands")),
    ]);
    assert_eq!(
        found,
        vec!["claude-code", "codex", "gemini-cli", "openhands", "pi"]
    );
    // OPENHANDS_CONVERSATIONS_DIR names the conversations folder itself, before the persistence folder
    let found = run(&[
        (
            "OPENHANDS_CONVERSATIONS_DIR",
            moved.path().join("openhands/conversations"),
        ),
        ("OPENHANDS_PERSISTENCE_DIR", moved.path().join("elsewhere")),
    ]);
    assert_eq!(found, vec!["openhands"]);
    // and a session continued in a harness is written where that harness will look
    let h = cairn::discover::Home {
        claude: Some(moved.path().join("claude")),
        ..cairn::discover::Home::at(home.path())
    };
    assert_eq!(
        h.sessions(Format::ClaudeCode),
        Some(moved.path().join("claude/projects"))
    );
    assert_eq!(
        h.sessions(Format::Pi),
        Some(home.path().join(".pi/agent/sessions"))
    );
    let h = cairn::discover::Home {
        gemini: Some(moved.path().join("gemini/.gemini")),
        ..cairn::discover::Home::at(home.path())
    };
    assert_eq!(
        h.sessions(Format::GeminiCli),
        Some(moved.path().join("gemini/.gemini/tmp"))
    );
}

#[test]
fn a_codex_agent_s_task_from_another_agent_is_its_prompt() {
    // Codex 0.145's multi-agent threads: the child reads its parent's task as a `response_item` `agent_message`
    // (after an `inter_agent_communication_metadata` record), not as a user `message`
    let task =
        "Message Type: NEW_TASK\nSender: /root\nPayload:\nInspect chat rendering performance";
    let lines = [
        serde_json::json!({"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta",
                           "payload": {"id": "child", "cwd": "/w", "cli_version": "0.145.0"}}),
        serde_json::json!({"timestamp": "2026-11-02T10:00:01.000Z", "type": "inter_agent_communication_metadata",
                           "payload": {"trigger_turn": true}}),
        serde_json::json!({"timestamp": "2026-11-02T10:00:01.000Z", "type": "response_item",
                           "payload": {"type": "agent_message",
                                       "content": [{"type": "input_text", "text": task}]}}),
        serde_json::json!({"timestamp": "2026-11-02T10:00:02.000Z", "type": "response_item",
                           "payload": {"type": "message", "role": "assistant",
                                       "content": [{"type": "output_text", "text": "Inspecting"}]}}),
        serde_json::json!({"timestamp": "2026-11-02T10:00:03.000Z", "type": "response_item",
                           "payload": {"type": "message", "role": "user",
                                       "content": [{"type": "input_text", "text": "Also check scrolling"}]}}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rollout-child.jsonl");
    let text: Vec<String> = lines.iter().map(|v| v.to_string()).collect();
    std::fs::write(&f, text.join("\n") + "\n").unwrap();
    let (_d, mut s) = store();
    let o = import::import_file(&mut s, &f, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    let path = s.active_path(&o.conversations[0]).unwrap();
    let said: Vec<(Role, String)> = path
        .iter()
        .map(|m| {
            let text = m
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<String>();
            (m.role, text)
        })
        .collect();
    assert_eq!(
        said,
        vec![
            (Role::User, task.to_string()),
            (Role::Assistant, "Inspecting".to_string()),
            (Role::User, "Also check scrolling".to_string()),
        ]
    );
    // the metadata record is kept, not a message
    assert!(
        o.report
            .skipped
            .keys()
            .any(|what| what.starts_with("inter_agent_communication_metadata"))
    );
}

/// The OpenHands SDK's conversation folders (V1): written by `openhands-sdk` 1.58 itself, its model scripted (the
/// usage litellm's token counter made), one on Claude through litellm's Chat Completions (parallel tool calls,
/// thinking, a failed command, two condensations, a branch made by moving the HEAD back), one on GPT-5 mini through
/// the Responses API (reasoning, a call of a tool that does not exist).
#[test]
fn openhands_conversations_import_as_the_sdk_kept_them() {
    let (_d, mut s) = store();
    let prices = Default::default();
    let dir = "openhands-v1/conversations/1c1a3cd1c8b74b748e53140ce92222b2";
    let (ids, r) = import_ok(&mut s, &format!("{dir}/base_state.json"));
    let conv = &ids[0];
    // 31 events: the two calls of one response are one reply, their two results one message
    assert_eq!((r.messages, r.branches, r.tool_pairs), (29, 1, 12));
    assert_eq!(
        s.conversation(conv).unwrap().title.as_deref(),
        Some("The check in test_calc.py fails. Find out why and fix it.")
    );
    assert_active_path_pair_valid(&s, conv);
    let path = s.active_path(conv).unwrap();
    assert_eq!(path[0].role, Role::System);
    assert!(cairn::model::plain_text(&path[0].content).starts_with("<SOUL>"));
    assert!(path.iter().all(|m| m.meta["source"] == "openhands"));
    // the tip is the HEAD: the branch started from the first turn's answer, not the turn after it
    let prompts: Vec<String> = path
        .iter()
        .filter(|m| {
            m.role == Role::User
                && !m
                    .content
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult { .. }))
        })
        .map(|m| cairn::model::plain_text(&m.content))
        .collect();
    assert_eq!(
        prompts,
        [
            "The check in test_calc.py fails. Find out why and fix it.",
            "Instead of a docstring, add a check for negative numbers to the test."
        ]
    );
    // one response, two calls, signed thinking; both results in the next message
    let first = &path[2];
    let calls = first
        .content
        .iter()
        .filter(|b| matches!(b, Block::ToolUse { .. }))
        .count();
    assert_eq!(calls, 2);
    assert!(first.content.iter().any(Block::is_signed_thinking));
    assert_eq!(first.meta["model"], "anthropic/claude-sonnet-4-5-20250929");
    let results = path[3]
        .content
        .iter()
        .filter(|b| matches!(b, Block::ToolResult { .. }))
        .count();
    assert_eq!(results, 2);
    // the failed test run: an error, its output framed as the terminal tool sends it
    let failed = path
        .iter()
        .flat_map(|m| m.content.iter())
        .find_map(|b| match b {
            Block::ToolResult {
                content,
                is_error: true,
                ..
            } => Some(content.text()),
            _ => None,
        })
        .unwrap();
    assert!(
        failed.contains("AssertionError: add(2, 3) should be 5"),
        "{failed}"
    );
    assert!(failed.ends_with(
        "[Current working directory: /workspace/calc]\n[Python interpreter: /opt/venv/bin/python]\n\
         [Command finished with exit code 1]"
    ));
    // the condensation on this branch keeps what it did not forget; its summary is sent, and the first prompt
    // after it is predicted within the goal's 8%
    let markers: Vec<_> = path
        .iter()
        .filter(|m| m.cairn_kind() == Some(cairn::model::KIND_COMPACTION))
        .collect();
    assert_eq!(markers.len(), 1);
    assert!(
        cairn::model::plain_text(&markers[0].content)
            .starts_with("USER_CONTEXT: fix the failing test, then")
    );
    let rp = cairn::reclaim::replay::replay(&s, Some(conv)).unwrap();
    assert_eq!(rp.compactions.len(), 1);
    assert!(
        rp.compactions[0].error.abs() <= 0.08,
        "{:?}",
        rp.compactions
    );
    assert_eq!(rp.replies.len(), 8);
    // sent as OpenHands sends it: the system prompt, the task, the summary, then what it kept of the rest
    let body: serde_json::Value = serde_json::from_str(
        &cairn::export::export(
            &s,
            conv,
            None,
            cairn::export::ExportFormat::Anthropic,
            Default::default(),
        )
        .unwrap()
        .text,
    )
    .unwrap();
    assert!(
        body["system"]
            .to_string()
            .contains("You are OpenHands agent")
    );
    let first = body["messages"][0]["content"].as_array().unwrap();
    let texts: Vec<&str> = first.iter().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(texts.len(), 2, "{first:?}");
    assert_eq!(
        texts[0],
        "The check in test_calc.py fails. Find out why and fix it."
    );
    assert!(texts[1].starts_with("USER_CONTEXT: fix the failing test, then"));
    assert!(
        body["messages"][1]["content"]
            .to_string()
            .contains("Fixed: `add()`")
    );
    // the condenser's call is priced on its marker but is no prompt of the path: with the tip on the marker,
    // `context` reads the prompt of the reply before it
    let at = path
        .iter()
        .position(|m| m.cairn_kind() == Some(cairn::model::KIND_COMPACTION))
        .unwrap();
    assert!(path[at].usage.is_some());
    let before = path[..at]
        .iter()
        .rev()
        .find_map(|m| m.usage.filter(|_| m.role == Role::Assistant))
        .unwrap();
    helpers::run_action(
        &mut s,
        cairn::commands::Action::Branch {
            conversation: conv.clone(),
            message: path[at].id.clone(),
            expect: None,
        },
    );
    let c = helpers::context_now(&mut s, conv);
    assert_eq!(c.last_measured, Some(before.prompt()));
    // the window the SDK ran the model with (its calls' `context_window`) is the conversation's
    assert_eq!(
        (c.window, c.window_source),
        (200_000, cairn::models::Source::Harness)
    );
    helpers::run_action(
        &mut s,
        cairn::commands::Action::Branch {
            conversation: conv.clone(),
            message: path.last().unwrap().id.clone(),
            expect: None,
        },
    );
    // the cost is the SDK's own, agent and condenser (both condensations, both branches) alike
    let sdk = sdk_cost(&fixture(&format!("{dir}/base_state.json")));
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    let row = st.rows.iter().find(|r| &r.key == conv).unwrap();
    assert!(
        (row.cost_usd.unwrap() - sdk).abs() < 1e-9,
        "{:?} vs {sdk}",
        row.cost_usd
    );
    assert_eq!(
        (row.tool_calls, row.tool_errors, row.compactions),
        (12, 1, 2)
    );
    // three turns: one the agent ended in words, two with its `finish`
    assert_eq!(row.turns, 3);
    // the agent's `finish` ended the run: its result is a turn boundary, so nothing is left to retry
    assert!(path.last().unwrap().ends_turn());
    assert!(matches!(
        s.retry(conv).unwrap(),
        cairn::store::Retry::NothingToRetry { .. }
    ));

    // GPT-5 mini through the Responses API, found by content alone
    let dir = "openhands-v1/conversations/d6735859d88d47f7a55284f23fbe280a";
    let o = import::import_file(&mut s, &fixture(&format!("{dir}/base_state.json")), None);
    assert_eq!(o.format, Some(Format::OpenHands));
    let conv = &o.conversations[0];
    let path = s.active_path(conv).unwrap();
    assert_eq!(path.len(), 11);
    let reply = &path[2];
    assert!(reply.content.iter().any(Block::is_signed_thinking));
    assert_eq!(reply.usage.unwrap().cache_read_input_tokens, 0);
    let missing = path
        .iter()
        .flat_map(|m| m.content.iter())
        .find_map(|b| match b {
            Block::ToolResult {
                content, is_error, ..
            } if content.text().contains("search_code") => Some(*is_error),
            _ => None,
        });
    assert_eq!(missing, Some(true));
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    let row = st.rows.iter().find(|r| &r.key == conv).unwrap();
    assert!(
        (row.cost_usd.unwrap() - 0.0028429).abs() < 1e-9,
        "{:?}",
        row.cost_usd
    );
    assert_eq!((row.tool_calls, row.tool_errors), (4, 2));
    // GPT-5 mini ran with litellm's 272k input window, not the catalog's 400k (input and output)
    let c = helpers::context_now(&mut s, conv);
    assert_eq!(
        (c.window, c.window_source),
        (272_000, cairn::models::Source::Harness)
    );
}

/// A conversation read again after it grew adds what is new (it is never counted twice), whichever of its files is
/// named; a broken event refuses the import, naming that event's file, and leaves the store as it was.
#[test]
fn an_openhands_conversation_that_grew_adds_its_new_events_once() {
    let (_d, mut s) = store();
    let prices = Default::default();
    let id = "1c1a3cd1c8b74b748e53140ce92222b2";
    let work = tempfile::tempdir().unwrap();
    let copy = |from: &str| {
        let to = work.path().join(id);
        if to.exists() {
            std::fs::remove_dir_all(&to).unwrap();
        }
        std::fs::create_dir_all(to.join("events")).unwrap();
        let src = fixture(&format!("openhands-v1/{from}/{id}"));
        std::fs::copy(src.join("base_state.json"), to.join("base_state.json")).unwrap();
        for e in std::fs::read_dir(src.join("events")).unwrap() {
            let e = e.unwrap().path();
            std::fs::copy(&e, to.join("events").join(e.file_name().unwrap())).unwrap();
        }
        to
    };
    let conv_dir = copy("grown");
    let o = import::import_file(&mut s, &conv_dir.join("base_state.json"), None);
    assert!(o.error.is_none(), "{:?}", o.error);
    let conv = o.conversations[0].clone();
    assert_eq!(s.conversation(&conv).unwrap().messages, 11);
    // the same conversation after two more turns, named by one of its events
    let conv_dir = copy("conversations");
    let event = std::fs::read_dir(conv_dir.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("event-00003-"))
        .unwrap();
    let import::Collected {
        files,
        named,
        walked,
    } = import::collect_named(std::slice::from_ref(&event)).unwrap();
    assert_eq!(files, [conv_dir.join("base_state.json")]);
    assert_eq!(named.len(), 1);
    // named, not found by a walk: refused, not skipped, were it no transcript
    assert!(walked.is_empty(), "{walked:?}");
    let o = import::import_file(&mut s, &files[0], None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.conversations, std::slice::from_ref(&conv));
    assert_eq!(s.conversation(&conv).unwrap().messages, 29);
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    assert_eq!(st.rows.len(), 1);
    assert!(
        (st.rows[0].cost_usd.unwrap() - 0.06946095).abs() < 1e-9,
        "{:?}",
        st.rows[0].cost_usd
    );
    // a folder walk takes the state once and no event on its own; the events' folder given alone, its state
    assert_eq!(
        import::collect(&[work.path().to_path_buf()]).unwrap(),
        files
    );
    assert_eq!(import::collect(&[conv_dir.join("events")]).unwrap(), files);

    // a broken event: refused, named, nothing written
    let (_d2, mut fresh) = store();
    std::fs::write(&event, "{\"id\": \"x\", \"kind\": ").unwrap();
    let o = import::import_file(&mut fresh, &files[0], None);
    let err = o.error.unwrap();
    assert!(err.contains("event-00003-"), "{err}");
    assert!(fresh.conversations().unwrap().is_empty());

    // `cairn discover` finds each conversation's state where the CLI keeps them, its events counted
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".openhands/conversations");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::rename(&conv_dir, root.join(id)).unwrap();
    let found = cairn::discover::discover(home.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].format, found[0].messages),
        (Format::OpenHands, 31)
    );
    assert!(found[0].path.ends_with("base_state.json"));
}

/// A fork OpenHands made (`Conversation.fork()`): the events it started from copied, ids and times alike, into a
/// conversation of its own with its metrics reset. It imports as a conversation of its own (not as the original
/// read again), and each costs what the SDK summed for it: the copied replies are not billed twice.
#[test]
fn an_openhands_fork_is_a_conversation_of_its_own() {
    let (_d, mut s) = store();
    let prices = Default::default();
    let mut sdk = Vec::new();
    for id in [
        "4ece7077e5ba4562855d9e4d5db19180",
        "43c5100dbb3147c88cf5cb36981496f6",
    ] {
        let state = fixture(&format!("openhands-v1/fork/{id}/base_state.json"));
        let o = import::import_file(&mut s, &state, None);
        assert!(o.error.is_none(), "{id}: {:?}", o.error);
        assert_eq!(o.status, "new", "{id}");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        sdk.push((
            o.conversations[0].clone(),
            v["stats"]["usage_to_metrics"]["agent"]["accumulated_cost"]
                .as_f64()
                .unwrap(),
        ));
    }
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    assert_eq!(st.rows.len(), 2);
    for (conv, cost) in &sdk {
        let row = st.rows.iter().find(|r| &r.key == conv).unwrap();
        assert!(
            (row.cost_usd.unwrap() - cost).abs() < 1e-9,
            "{conv}: {:?} vs {cost}",
            row.cost_usd
        );
    }
    // the fork holds the turn it started from (unmeasured there) and its own
    let fork = s.active_path(&sdk[1].0).unwrap();
    assert_eq!(fork.len(), 10);
    assert_eq!(fork.iter().filter(|m| m.usage.is_some()).count(), 2);
    assert_eq!(
        cairn::model::plain_text(&fork.last().unwrap().content),
        "The last line now reads: the sea keeps what it takes."
    );
    // the turn and calls it copied (events, ids and times alike; their usage reset) count once, in the original:
    // the fork counts its own turn and call
    let row = |c: &str| st.rows.iter().find(|r| r.key == c).unwrap();
    assert_eq!((row(&sdk[0].0).turns, row(&sdk[0].0).tool_calls), (1, 2));
    assert_eq!((row(&sdk[1].0).turns, row(&sdk[1].0).tool_calls), (1, 1));
}

/// A subagent OpenHands' task tool ran (`subagents/<id>/` under its parent's folder, written by the SDK): read with
/// its parent as a linked conversation, whichever of their files is named. The parent's state counts the
/// subagent's calls too (a `task:<id>` usage); they are the subagent's, so the two together cost what the parent's
/// state summed, once.
#[test]
fn an_openhands_subagent_is_read_with_its_parent_and_billed_once() {
    let (_d, mut s) = store();
    let prices = Default::default();
    let dir = fixture("openhands-v1/subagent/793db1640db744e381c0a1e44c69cfbc");
    let sub = dir.join("subagents/77ffaea96f864bb988ef39599c68386f");
    // a subagent's state, or its event, is imported as its parent
    for named in [
        sub.join("base_state.json"),
        std::fs::read_dir(sub.join("events"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    ] {
        assert_eq!(import::main_file(&named), dir.join("base_state.json"));
    }
    assert_eq!(
        import::collect(std::slice::from_ref(&dir)).unwrap(),
        [dir.join("base_state.json")]
    );
    let o = import::import_file(&mut s, &dir.join("base_state.json"), None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.conversations.len(), 2);
    assert!(o.report.notes.is_empty(), "{:?}", o.report.notes);
    let child = s.conversation(&o.conversations[1]).unwrap();
    assert_eq!(
        child.linked_to.as_deref(),
        Some(o.conversations[0].as_str())
    );
    assert_eq!(
        child.title.as_deref(),
        Some("Count the lines of /workspace/sub/notes.txt and answer with the number only.")
    );
    let sdk = sdk_cost(&dir.join("base_state.json"));
    let st = cairn::stats::stats(&s, By::Conversation, None, &prices).unwrap();
    let total: f64 = st.rows.iter().map(|r| r.cost_usd.unwrap()).sum();
    assert!((total - sdk).abs() < 1e-9, "{total} vs {sdk}");
    // the subagent's own calls are its own
    let row = st
        .rows
        .iter()
        .find(|r| r.key == o.conversations[1])
        .unwrap();
    assert!(
        (row.cost_usd.unwrap() - 0.00260205).abs() < 1e-9,
        "{:?}",
        row.cost_usd
    );
    // `cairn discover` lists the parent, not its subagent apart
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".openhands/conversations");
    std::fs::create_dir_all(&root).unwrap();
    let copy = root.join("793db1640db744e381c0a1e44c69cfbc");
    for e in walk(&dir) {
        let to = copy.join(e.strip_prefix(&dir).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&e, &to).unwrap();
    }
    let found = cairn::discover::discover(home.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, copy.join("base_state.json"));
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// What an OpenHands conversation's state summed as its cost: every usage's (the agent's, the condenser's, a
/// subagent's) `accumulated_cost`.
fn sdk_cost(state: &Path) -> f64 {
    let state: serde_json::Value = serde_json::from_slice(&std::fs::read(state).unwrap()).unwrap();
    state["stats"]["usage_to_metrics"]
        .as_object()
        .unwrap()
        .values()
        .map(|m| m["accumulated_cost"].as_f64().unwrap())
        .sum()
}

/// A conversation the SDK wrote before it kept a tree (no `parent_id` on its events, no HEAD in its state) is read
/// as the chain its events make, its tip the last: the same path the tree gives.
#[test]
fn an_openhands_conversation_from_before_the_tree_is_its_events_in_order() {
    let (_d, mut s) = store();
    let src = fixture("openhands-v1/conversations/d6735859d88d47f7a55284f23fbe280a");
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("d6735859d88d47f7a55284f23fbe280a");
    for f in walk(&src) {
        let to = dir.join(f.strip_prefix(&src).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let o = v.as_object_mut().unwrap();
        for k in ["parent_id", "leaf_event_id", "head_is_empty"] {
            o.remove(k);
        }
        std::fs::write(&to, v.to_string()).unwrap();
    }
    let o = import::import_file(&mut s, &dir.join("base_state.json"), None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!((o.report.messages, o.report.branches), (11, 0));
    let legacy = s.active_path(&o.conversations[0]).unwrap();
    let (_d2, mut s2) = store();
    let (ids, _) = import_ok(
        &mut s2,
        "openhands-v1/conversations/d6735859d88d47f7a55284f23fbe280a/base_state.json",
    );
    let tree = s2.active_path(&ids[0]).unwrap();
    let text = |p: &[cairn::model::Message]| -> Vec<String> {
        p.iter().map(|m| format!("{:?}", m.content)).collect()
    };
    assert_eq!(text(&legacy), text(&tree));
}

/// Sums (input, output, turns, tool calls) over every row of `stats --by model`.
fn totals(s: &Store) -> (u64, u64, u64, u64) {
    let st = cairn::stats::stats(s, By::Model, None, &Default::default()).unwrap();
    st.rows.iter().fold((0, 0, 0, 0), |t, r| {
        (
            t.0 + r.input_tokens,
            t.1 + r.output_tokens,
            t.2 + r.turns,
            t.3 + r.tool_calls,
        )
    })
}

/// pi's fork of the context-edit fixture's first answer (root → a3: u1 a1 r1 a2 e1 a3, ids, times and usage alike),
/// under a header naming `parent`, gone on with one turn of its own (2,500 in, 40 out), written in `dir`.
fn pi_fork(dir: &Path, parent: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("small/pi-v3-context-edit.jsonl")).unwrap();
    let mut fork: Vec<String> = vec![format!(
        r#"{{"type":"session","version":3,"id":"ce-2","timestamp":"2026-11-20T10:05:00.000Z","cwd":"/p","parentSession":"{}"}}"#,
        parent.display()
    )];
    fork.extend(text.lines().skip(1).take(6).map(str::to_string));
    fork.push(r#"{"type":"message","id":"u9","parentId":"a3","timestamp":"2026-11-20T10:05:01.000Z","message":{"role":"user","content":[{"type":"text","text":"and how do I free the disk?"}],"timestamp":1795000301000}}"#.to_string());
    fork.push(r#"{"type":"message","id":"a9","parentId":"u9","timestamp":"2026-11-20T10:05:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Remove the old build artifacts."}],"timestamp":1795000302000,"model":"claude-sonnet-4-5","provider":"anthropic","usage":{"input":2500,"output":40,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}"#.to_string());
    let forked = dir.join("fork.jsonl");
    std::fs::write(&forked, fork.join("\n") + "\n").unwrap();
    forked
}

/// Checks that the pi fork of [`pi_fork`] is recorded as a fork of `origin` at the reply its copies end on (a3, the
/// one that measured 1,900 tokens).
fn assert_pi_fork_of(s: &Store, fork: &str, origin: &str) {
    let at = s
        .active_path(origin)
        .unwrap()
        .into_iter()
        .find(|m| m.usage.is_some_and(|u| u.input_tokens == 1900))
        .unwrap();
    assert_eq!(
        s.conversation(fork).unwrap().forked_from,
        Some(cairn::model::ForkedFrom {
            conversation: origin.to_string(),
            message: at.id
        })
    );
}

/// The figures of the context-edit fixture read alone (`totals`).
fn pi_alone() -> (u64, u64, u64, u64) {
    let (_d, mut s) = store();
    import_ok(&mut s, "small/pi-v3-context-edit.jsonl");
    totals(&s)
}

/// A fresh store that read `origin` and `fork`, the fork first or second; their outcomes, the origin's first, and
/// the notes of the one read second.
fn read_both(
    origin: &Path,
    fork: &Path,
    fork_first: bool,
) -> (
    tempfile::TempDir,
    Store,
    [import::FileOutcome; 2],
    Vec<String>,
) {
    let (d, mut s) = store();
    let mut order = [(0, origin), (1, fork)];
    if fork_first {
        order.reverse();
    }
    let mut read: Vec<(usize, import::FileOutcome)> = order
        .iter()
        .map(|(k, f)| (*k, import::import_file(&mut s, f, None)))
        .collect();
    let second = read[1].1.report.notes.clone();
    read.sort_by_key(|r| r.0);
    let [(_, o), (_, f)]: [(usize, import::FileOutcome); 2] = read.try_into().unwrap();
    assert!(o.error.is_none() && f.error.is_none(), "{o:?} {f:?}");
    (d, s, [o, f], second)
}

/// A fresh store that read `origin` as it is (its first lines), then `fork`, then `origin` again once it holds
/// `whole`; the three outcomes, the first two checked to be new and the last to have grown.
fn read_fork_then_grown(
    origin: &Path,
    fork: &Path,
    whole: &str,
) -> (tempfile::TempDir, Store, [import::FileOutcome; 3]) {
    let (d, mut s) = store();
    let first = import::import_file(&mut s, origin, None);
    let f = import::import_file(&mut s, fork, None);
    assert_eq!((first.status, f.status), ("new", "new"), "{first:?} {f:?}");
    std::fs::write(origin, whole).unwrap();
    let grown = import::import_file(&mut s, origin, None);
    assert_eq!(grown.status, "grown", "{:?}", grown.error);
    (d, s, [first, f, grown])
}

/// Each conversation's own (input, output, turns, calls), as `stats --by conversation` counts them: zeros for one
/// that counts nothing of its own.
fn own_figures(s: &Store, conversation: &str) -> (u64, u64, u64, u64) {
    let st = cairn::stats::stats(s, By::Conversation, None, &Default::default()).unwrap();
    st.rows
        .iter()
        .find(|r| r.key == conversation)
        .map_or((0, 0, 0, 0), |r| {
            (r.input_tokens, r.output_tokens, r.turns, r.tool_calls)
        })
}

/// Claude Code's `/branch` of a session's lines: each line that has a session names it and its own uuid in
/// `forkedFrom` and takes the branch's session id.
fn branched(lines: &[&str], session: &str) -> String {
    lines
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(id) = v.get("sessionId").cloned() {
                v["forkedFrom"] = serde_json::json!({"sessionId": id, "messageUuid": v["uuid"]});
                v["sessionId"] = serde_json::json!(session);
            }
            v.to_string() + "\n"
        })
        .collect()
}

#[test]
fn a_history_its_harness_copied_into_a_fork_counts_once_whichever_is_read_first() {
    // pi's fork copies the path root→leaf into a new file, entry ids, times and usage alike, under a header that
    // names the parent session; the fork then goes on on its own
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("small/pi-v3-context-edit.jsonl");
    let forked = pi_fork(dir.path(), &original);
    let alone = pi_alone();
    assert_eq!(
        (alone.0, alone.1, alone.3),
        (1200 + 1900 + 1310, 30 + 20 + 5, 1)
    );
    // the fork's own turn, once: 2,500 in, 40 out; the copied calls and turns are the original's
    let want = (alone.0 + 2500, alone.1 + 40, alone.2 + 1, alone.3);
    let mut seen_in_order = Vec::new();
    for fork_first in [false, true] {
        let (_d, s, [o, f], noted) = read_both(&original, &forked, fork_first);
        assert_eq!(totals(&s), want, "fork first: {fork_first}");
        assert!(noted.iter().any(|n| n.contains("count once")), "{noted:?}");
        // each conversation still reads whole, measured as before: the fork's last prompt is its own reply's
        let (orig_conv, fork_conv) = (&o.conversations[0], &f.conversations[0]);
        let path = s.active_path(fork_conv).unwrap();
        assert_eq!(path.len(), 8);
        assert_eq!(path.last().unwrap().usage.unwrap().input_tokens, 2500);
        // the fork (its header names its parent) records where it was forked, at the reply its copies end on,
        // whichever was read first: read first, it had nothing to repeat yet, and its origin takes the counts of
        // what they share when it comes
        assert_pi_fork_of(&s, fork_conv, orig_conv);
        assert_eq!(s.conversation(orig_conv).unwrap().forked_from, None);
        assert!(
            noted.iter().any(|n| n.contains("is a fork of")),
            "{noted:?}"
        );
        // each conversation's own figures are the same in either order: the original's whole, the fork's turn
        assert_eq!(
            own_figures(&s, orig_conv),
            alone,
            "fork first: {fork_first}"
        );
        assert_eq!(
            own_figures(&s, fork_conv),
            (2500, 40, 1, 0),
            "fork first: {fork_first}"
        );
        // and so are the calls by tool, read from the calls' own index
        let by_tool = cairn::stats::stats(&s, By::Tool, None, &Default::default()).unwrap();
        assert_eq!(
            by_tool.rows.iter().map(|r| r.tool_calls).sum::<u64>(),
            alone.3,
            "fork first: {fork_first}"
        );
        // and what the model was seen to take (`cairn models`): the original's replies and the fork's own
        let seen: Vec<(String, u64, u64)> = s
            .models_seen()
            .unwrap()
            .into_iter()
            .map(|m| (m.model, m.replies, m.measured))
            .collect();
        seen_in_order.push(seen);
    }
    assert_eq!(seen_in_order[0], seen_in_order[1]);

    // Claude Code's `--fork-session` (and a resume before it appended) copies every line under a new session id
    let cc = fixture("claude-code/cc-2.0.5-image-paste.jsonl");
    let copied: String = std::fs::read_to_string(&cc)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v.get("sessionId").is_some() {
                v["sessionId"] = serde_json::json!("11111111-2222-4333-8444-555555555555");
            }
            v.to_string() + "\n"
        })
        .collect();
    let cc_fork = dir
        .path()
        .join("11111111-2222-4333-8444-555555555555.jsonl");
    std::fs::write(&cc_fork, copied).unwrap();
    let (_d, mut s) = store();
    let first = import::import_file(&mut s, &cc, None);
    assert!(first.error.is_none(), "{:?}", first.error);
    let once = totals(&s);
    assert!(once.0 > 0 && once.3 > 0);
    let second = import::import_file(&mut s, &cc_fork, None);
    assert!(second.error.is_none(), "{:?}", second.error);
    assert_eq!(second.status, "new");
    assert_eq!(totals(&s), once);
    // a copy that does not say it was forked is not called a fork
    assert_eq!(
        s.conversation(&second.conversations[0])
            .unwrap()
            .forked_from,
        None
    );

    // `/branch` writes `forkedFrom` on each line it copies: read before its origin, it is still its fork
    let cc_text = std::fs::read_to_string(&cc).unwrap();
    let cc_lines: Vec<&str> = cc_text.lines().collect();
    let cc_branch = dir
        .path()
        .join("22222222-2222-4333-8444-555555555555.jsonl");
    std::fs::write(
        &cc_branch,
        branched(&cc_lines, "22222222-2222-4333-8444-555555555555"),
    )
    .unwrap();
    let (_d, mut s) = store();
    let fork = import::import_file(&mut s, &cc_branch, None);
    let origin = import::import_file(&mut s, &cc, None);
    assert!(fork.error.is_none() && origin.error.is_none());
    assert_eq!(totals(&s), once);
    let recorded = s.conversation(&fork.conversations[0]).unwrap().forked_from;
    assert_eq!(
        recorded.map(|f| f.conversation),
        Some(origin.conversations[0].clone()),
        "{:?}",
        origin.report.notes
    );
    // the origin holds every count: the branch copied all of it and added nothing
    assert_eq!(own_figures(&s, &origin.conversations[0]).2, once.2);
    assert_eq!(own_figures(&s, &fork.conversations[0]).2, 0);
}

#[test]
fn a_session_that_grew_past_what_its_fork_copied_counts_what_they_share_once() {
    // the origin imported early (its first turn), then its fork (a copy of a later path), then the origin grown
    // past where the fork copied it: the messages the fork copied and the origin wrote since count once, in the
    // origin, and the fork is recorded at the reply its copies end on
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("small/pi-v3-context-edit.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let original = dir.path().join("original.jsonl");
    std::fs::write(&original, lines[..3].join("\n") + "\n").unwrap();
    let forked = pi_fork(dir.path(), &original);
    let alone = pi_alone();
    let (_d, s, [first, f, grown]) = read_fork_then_grown(&original, &forked, &text);
    assert_eq!(
        totals(&s),
        (alone.0 + 2500, alone.1 + 40, alone.2 + 1, alone.3),
        "{:?}",
        grown.report.notes
    );
    let (orig_conv, fork_conv) = (&first.conversations[0], &f.conversations[0]);
    assert_eq!(own_figures(&s, orig_conv), alone);
    assert_eq!(own_figures(&s, fork_conv), (2500, 40, 1, 0));
    assert_pi_fork_of(&s, fork_conv, orig_conv);

    // the same with Claude Code, whose grown session is read from where its last import stopped: a `/branch` of
    // its first 120 lines, read when the store held its first 60, then the session whole
    let cc = fixture("claude-code/cc-2.0.5-image-paste.jsonl");
    let cc_text = std::fs::read_to_string(&cc).unwrap();
    let cc_lines: Vec<&str> = cc_text.lines().collect();
    let once = {
        let (_d, mut s) = store();
        assert!(import::import_file(&mut s, &cc, None).error.is_none());
        totals(&s)
    };
    let session = dir.path().join(cc.file_name().unwrap());
    std::fs::write(&session, cc_lines[..60].join("\n") + "\n").unwrap();
    let branch = dir
        .path()
        .join("33333333-2222-4333-8444-555555555555.jsonl");
    std::fs::write(
        &branch,
        branched(&cc_lines[..120], "33333333-2222-4333-8444-555555555555"),
    )
    .unwrap();
    let (_d, s, [origin, fork, grown]) = read_fork_then_grown(&session, &branch, &cc_text);
    assert!(
        grown
            .report
            .notes
            .iter()
            .any(|n| n.starts_with("read from byte")),
        "{:?}",
        grown.report.notes
    );
    assert_eq!(totals(&s), once, "{:?}", grown.report.notes);
    assert_eq!(own_figures(&s, &fork.conversations[0]).2, 0);
    assert_eq!(own_figures(&s, &origin.conversations[0]).2, once.2);
    let recorded = s.conversation(&fork.conversations[0]).unwrap().forked_from;
    let recorded = recorded.unwrap();
    assert_eq!(recorded.conversation, origin.conversations[0]);
    // at the branch's last reply, in the origin
    let path = s.active_path(&origin.conversations[0]).unwrap();
    let depth = path.iter().position(|m| m.id == recorded.message).unwrap();
    assert!(depth > 60, "{depth}");
}

#[test]
fn an_openhands_conversation_whose_first_event_names_no_source_is_read_from_its_folder() {
    // an event the app wrote without a source (OpenHands leaves out a field it has no value for) is still the
    // conversation's first event, found by a folder walk and read whole
    let id = "4f1c2a9e7b3d4c5e8f6a0b1c2d3e4f5a";
    let src = fixture(&format!("openhands-v0/sessions/{id}"));
    let home = tempfile::tempdir().unwrap();
    let conv_dir = home.path().join("sessions").join(id);
    std::fs::create_dir_all(conv_dir.join("events")).unwrap();
    std::fs::copy(src.join("metadata.json"), conv_dir.join("metadata.json")).unwrap();
    for e in std::fs::read_dir(src.join("events")).unwrap() {
        let p = e.unwrap().path();
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        if p.file_name().unwrap() == "0.json" {
            v.as_object_mut().unwrap().remove("source");
        }
        std::fs::write(
            conv_dir.join("events").join(p.file_name().unwrap()),
            v.to_string(),
        )
        .unwrap();
    }
    let first = conv_dir.join("events/0.json");
    let walked = import::collect_named(&[home.path().to_path_buf()]).unwrap();
    assert_eq!(walked.files, std::slice::from_ref(&first));
    let (_d, mut s) = store();
    let o = import::import_file(&mut s, &first, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.format, Some(Format::OpenHands));
    let whole = {
        let (_d, mut s) = store();
        let o = import::import_file(&mut s, &src.join("events/0.json"), None);
        assert!(o.error.is_none(), "{:?}", o.error);
        s.conversation(&o.conversations[0]).unwrap().messages
    };
    assert_eq!(s.conversation(&o.conversations[0]).unwrap().messages, whole);
}

#[test]
fn an_openhands_conversation_from_before_the_sdk_is_its_folder_of_events() {
    // the app's and the CLI's layout before the SDK: `sessions/<id>/events/<n>.json`, the metadata beside, cached
    // pages of events in `event_cache/`
    let id = "4f1c2a9e7b3d4c5e8f6a0b1c2d3e4f5a";
    let src = fixture(&format!("openhands-v0/sessions/{id}"));
    let home = tempfile::tempdir().unwrap();
    let persistence = home.path().join(".openhands");
    let conv_dir = persistence.join("sessions").join(id);
    std::fs::create_dir_all(conv_dir.join("events")).unwrap();
    std::fs::create_dir_all(conv_dir.join("event_cache")).unwrap();
    std::fs::copy(src.join("metadata.json"), conv_dir.join("metadata.json")).unwrap();
    let mut events: Vec<(u64, PathBuf)> = std::fs::read_dir(src.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_stem().unwrap().to_str().unwrap().parse().unwrap(), p))
        .collect();
    events.sort();
    assert_eq!(events.len(), 18);
    let write_events = |upto: usize| {
        for (_, p) in &events[..upto] {
            std::fs::copy(p, conv_dir.join("events").join(p.file_name().unwrap())).unwrap();
        }
    };
    // the conversation after its first answer (events 0..=8), with a page of what it had cached (a page repeats
    // events: never a trajectory of its own)
    write_events(9);
    let page: Vec<serde_json::Value> = events[..9]
        .iter()
        .map(|(_, p)| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    std::fs::write(
        conv_dir.join("event_cache/0-25.json"),
        serde_json::to_vec(&page).unwrap(),
    )
    .unwrap();
    std::fs::write(persistence.join("settings.json"), r#"{"llm_model":"x"}"#).unwrap();
    let walked = import::collect_named(std::slice::from_ref(&persistence)).unwrap();
    let first = conv_dir.join("events/0.json");
    assert_eq!(
        walked.files,
        [persistence.join("settings.json"), first.clone()]
    );
    let (_d, mut s) = store();
    let o = import::import_file(&mut s, &first, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.format, Some(Format::OpenHands));
    let conv = o.conversations[0].clone();
    let c = s.conversation(&conv).unwrap();
    assert_eq!(
        c.title.as_deref(),
        Some("Client-only Vue todo list with due dates")
    );
    let early = c.messages;
    // naming any other file of the folder imports the conversation: nothing new yet
    for other in [
        conv_dir.join("events/5.json"),
        conv_dir.join("event_cache/0-25.json"),
        conv_dir.join("metadata.json"),
    ] {
        assert_eq!(import::main_file(&other), first, "{}", other.display());
    }
    assert_eq!(
        import::import_file(&mut s, &first, None).status,
        "unchanged"
    );
    // the conversation went on: read again, it adds what it gained, once
    write_events(18);
    let o = import::import_file(&mut s, &first, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.status, "grown");
    assert_eq!(o.conversations, std::slice::from_ref(&conv));
    assert_eq!(s.conversation(&conv).unwrap().messages, 10);
    assert!(early < 10);
    // as the trajectory export of the same conversation reads: the same messages, tool pairs and usage
    let (_d2, mut t) = store();
    let (ids, _) = import_ok(
        &mut t,
        "trajectories/openhands-basic-gui-mode-trajectory.json",
    );
    let text = |s: &Store, c: &str| -> Vec<String> {
        s.active_path(c)
            .unwrap()
            .iter()
            .map(|m| format!("{:?} {:?} {:?}", m.role, m.content, m.usage))
            .collect()
    };
    assert_eq!(text(&s, &conv), text(&t, &ids[0]));
    assert_active_path_pair_valid(&s, &conv);
    // an event that is not JSON is refused by its name, and nothing is written
    std::fs::write(conv_dir.join("events/18.json"), "{\"id\": 18, \"sou").unwrap();
    let before = s.conversation(&conv).unwrap().messages;
    let o = import::import_file(&mut s, &first, None);
    let e = o.error.unwrap();
    assert!(e.contains("events/18.json:1:"), "{e}");
    assert_eq!(s.conversation(&conv).unwrap().messages, before);
    std::fs::remove_file(conv_dir.join("events/18.json")).unwrap();
    // another conversation whose first event is the same bytes (an agent starting at the same moment) is its own
    let other = persistence.join("sessions/0a9b8c7d6e5f40312233445566778899");
    std::fs::create_dir_all(other.join("events")).unwrap();
    for (_, p) in &events[..12] {
        std::fs::copy(p, other.join("events").join(p.file_name().unwrap())).unwrap();
    }
    let o = import::import_file(&mut s, &other.join("events/0.json"), None);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.status, "new");
    std::fs::remove_dir_all(&other).unwrap();
    // found where the app keeps it
    let found = cairn::discover::discover(home.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, first);
}

#[test]
fn an_openhands_answer_without_a_tool_call_is_measured_by_what_the_totals_gained() {
    // since 2025 OpenHands attaches the totals so far to each action (`llm_metrics.accumulated_token_usage`, a
    // TokenUsage whose prompt holds the cache); an answer made without a tool call has no response of its own
    let mut events: Vec<serde_json::Value> = serde_json::from_slice(
        &std::fs::read(fixture(
            "trajectories/openhands-basic-gui-mode-trajectory.json",
        ))
        .unwrap(),
    )
    .unwrap();
    let mut totals = serde_json::json!({"model": "claude-3-5-sonnet-20241022", "prompt_tokens": 0,
        "completion_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0});
    let add = |t: &mut serde_json::Value, k: &str, n: u64| {
        t[k] = serde_json::json!(t[k].as_u64().unwrap() + n);
    };
    let mut seen = std::collections::HashSet::new();
    for e in &mut events {
        if e["source"] != "agent" || e.get("action").is_none() {
            continue;
        }
        if let Some(u) = e
            .pointer("/tool_call_metadata/model_response/usage")
            .cloned()
        {
            let id = e.pointer("/tool_call_metadata/model_response/id").cloned();
            if seen.insert(id) {
                let n = |k: &str| u.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
                add(&mut totals, "prompt_tokens", n("prompt_tokens"));
                add(&mut totals, "completion_tokens", n("completion_tokens"));
                add(
                    &mut totals,
                    "cache_read_tokens",
                    n("cache_read_input_tokens"),
                );
                add(
                    &mut totals,
                    "cache_write_tokens",
                    n("cache_creation_input_tokens"),
                );
            }
        } else {
            // the closing answer's own call: 9,200 in (8,000 of them read from the cache, 150 written), 310 out
            add(&mut totals, "prompt_tokens", 9200);
            add(&mut totals, "completion_tokens", 310);
            add(&mut totals, "cache_read_tokens", 8000);
            add(&mut totals, "cache_write_tokens", 150);
        }
        e["llm_metrics"] =
            serde_json::json!({"accumulated_cost": 0.1, "accumulated_token_usage": totals.clone()});
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trajectory.json");
    std::fs::write(&file, serde_json::to_vec(&events).unwrap()).unwrap();
    let (_d, mut s) = store();
    let o = import::import_file(&mut s, &file, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    let path = s.active_path(&o.conversations[0]).unwrap();
    let last = path.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    let u = last.usage.unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.cache_read_input_tokens,
            u.cache_creation_input_tokens,
            u.output_tokens
        ),
        (1050, 8000, 150, 310)
    );
    assert_eq!(last.meta["model"], "claude-3-5-sonnet-20241022");
    // the replies made by tool calls keep their responses' own usage: every call is counted once
    let measured = path.iter().filter(|m| m.usage.is_some()).count();
    let (_d2, mut t) = store();
    let (ids, _) = import_ok(
        &mut t,
        "trajectories/openhands-basic-gui-mode-trajectory.json",
    );
    let before = t.active_path(&ids[0]).unwrap();
    assert_eq!(
        measured,
        before.iter().filter(|m| m.usage.is_some()).count() + 1
    );
    // every call the totals count is on a reply: nothing is said to be left out
    assert!(
        !o.report
            .notes
            .iter()
            .any(|n| n.contains("more than the replies carry")),
        "{:?}",
        o.report.notes
    );
    // a call no event names (a condenser's, made before the last tool call) is in the totals from there on and on
    // no reply: said, with its tokens
    let from = events
        .iter()
        .rposition(|e| e.get("llm_metrics").is_some() && e.get("tool_call_metadata").is_some())
        .unwrap();
    for e in events.iter_mut().skip(from) {
        if let Some(t) = e.pointer_mut("/llm_metrics/accumulated_token_usage") {
            t["prompt_tokens"] = serde_json::json!(t["prompt_tokens"].as_u64().unwrap() + 4000);
            t["completion_tokens"] =
                serde_json::json!(t["completion_tokens"].as_u64().unwrap() + 500);
        }
    }
    std::fs::write(&file, serde_json::to_vec(&events).unwrap()).unwrap();
    let (_d3, mut u) = store();
    let o = import::import_file(&mut u, &file, None);
    assert!(
        o.report
            .notes
            .iter()
            .any(|n| n
                .contains("count 4000 prompt and 500 output tokens more than the replies carry")),
        "{:?}",
        o.report.notes
    );
}
#[test]
fn a_codex_fork_which_stamps_its_copies_anew_counts_them_once_whichever_is_read_first() {
    // Codex's fork writes the origin's rollout items again, its own `session_meta` (naming `forked_from_id`) first
    // and the origin's among the copies, every line stamped with the time it was written (the recorder stamps each
    // item as it writes it): the copies repeat their replies' usage and content, not their times
    let origin_file = fixture("codex/codex-service-tiers-cache-writes.jsonl");
    let text = std::fs::read_to_string(&origin_file).unwrap();
    let origin_id = "019f1000-0000-7000-8000-000000000001";
    let fork_id = "019f2000-0000-7000-8000-000000000002";
    let at = "2026-11-03T09:00:00.000Z";
    let mut lines = vec![format!(
        r#"{{"timestamp":"{at}","type":"session_meta","payload":{{"id":"{fork_id}","forked_from_id":"{origin_id}","timestamp":"{at}","cwd":"/w","originator":"codex_exec","cli_version":"0.171.0","model_provider":"openai"}}}}"#
    )];
    // the first two turns, copied
    let copied: Vec<&str> = text.lines().take(16).collect();
    for l in &copied {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["timestamp"] = serde_json::json!(at);
        lines.push(v.to_string());
    }
    let later = "2026-11-03T09:01:00.000Z";
    lines.push(format!(r#"{{"timestamp":"{later}","type":"turn_context","payload":{{"turn_id":"f1","cwd":"/w","approval_policy":"never","sandbox_policy":{{"type":"danger-full-access"}},"model":"gpt-5.5","summary":"auto"}}}}"#));
    lines.push(format!(r#"{{"timestamp":"{later}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"On this fork: what would flex have cost?"}}]}}}}"#));
    lines.push(format!(r#"{{"timestamp":"{later}","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"Half of the standard price."}}]}}}}"#));
    lines.push(format!(r#"{{"timestamp":"{later}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":27700,"cached_input_tokens":16000,"cache_write_input_tokens":2000,"output_tokens":640,"reasoning_output_tokens":0,"total_tokens":28340}},"last_token_usage":{{"input_tokens":2700,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":0,"total_tokens":2740}},"model_context_window":258400}}}}}}"#));
    let dir = tempfile::tempdir().unwrap();
    let fork_file = dir
        .path()
        .join(format!("rollout-2026-11-03T09-00-00-{fork_id}.jsonl"));
    std::fs::write(&fork_file, lines.join("\n") + "\n").unwrap();

    let alone = {
        let (_d, mut s) = store();
        assert!(
            import::import_file(&mut s, &origin_file, None)
                .error
                .is_none()
        );
        totals(&s)
    };
    for fork_first in [false, true] {
        let (_d, s, [o, f], noted) = read_both(&origin_file, &fork_file, fork_first);
        let (orig_conv, fork_conv) = (&o.conversations[0], &f.conversations[0]);
        // the fork's own turn once: 2,700 in, 40 out
        assert_eq!(
            totals(&s),
            (alone.0 + 2700, alone.1 + 40, alone.2 + 1, alone.3),
            "fork first: {fork_first}: {noted:?}"
        );
        let recorded = s.conversation(fork_conv).unwrap().forked_from.unwrap();
        assert_eq!(&recorded.conversation, orig_conv);
        // at the origin's second answer, where the copies end
        let path = s.active_path(orig_conv).unwrap();
        let answer = path.iter().find(|m| m.id == recorded.message).unwrap();
        assert!(cairn::model::plain_text(&answer.content).contains("Answer 1"));
        // the fork reads as its own session: its id, not its origin's
        assert_eq!(
            s.conversation_meta(fork_conv).unwrap()["session_meta"]["id"],
            fork_id
        );
    }

    // the origin read when it held its first turn only, then the fork, then the origin grown: paired again, what
    // the fork copied past the first turn counts in the origin
    let early = dir.path().join(origin_file.file_name().unwrap());
    std::fs::write(
        &early,
        text.lines().take(10).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let (_d, s, [_, _, grown]) = read_fork_then_grown(&early, &fork_file, &text);
    assert_eq!(
        totals(&s),
        (alone.0 + 2700, alone.1 + 40, alone.2 + 1, alone.3),
        "{:?}",
        grown.report.notes
    );
}
#[test]
fn a_fork_of_a_resumed_copy_counts_each_turn_once_in_the_session_that_made_it() {
    // Z, a session; O, a copy of it its harness resumed into a new file (naming no origin) and went on with; F, a
    // fork of O (naming it), which went on too. Read Z, F, O: Z's turns count in Z, O's own in O, F's own in F
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("small/pi-v3-context-edit.jsonl")).unwrap();
    let z_lines: Vec<&str> = text.lines().skip(1).collect();
    let last = serde_json::from_str::<serde_json::Value>(z_lines.last().unwrap()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let turn = |id: &str, parent: &str, secs: u32, input: u32| {
        vec![
            format!(
                r#"{{"type":"message","id":"u{id}","parentId":"{parent}","timestamp":"2026-11-20T11:00:{secs:02}.000Z","message":{{"role":"user","content":[{{"type":"text","text":"question {id}"}}],"timestamp":{}}}}}"#,
                1795003200000u64 + u64::from(secs) * 1000
            ),
            format!(
                r#"{{"type":"message","id":"a{id}","parentId":"u{id}","timestamp":"2026-11-20T11:00:{:02}.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"answer {id}"}}],"timestamp":{},"model":"claude-sonnet-4-5","provider":"anthropic","usage":{{"input":{input},"output":30,"cacheRead":0,"cacheWrite":0}},"stopReason":"stop"}}}}"#,
                secs + 1,
                1795003201000u64 + u64::from(secs) * 1000
            ),
        ]
    };
    let o_path = dir.path().join("o.jsonl");
    let mut o = vec![r#"{"type":"session","version":3,"id":"ce-3","timestamp":"2026-11-20T10:30:00.000Z","cwd":"/p"}"#.to_string()];
    o.extend(z_lines.iter().map(|l| l.to_string()));
    o.extend(turn("7", &last, 0, 2600));
    let mut f = vec![format!(
        r#"{{"type":"session","version":3,"id":"ce-4","timestamp":"2026-11-20T11:30:00.000Z","cwd":"/p","parentSession":"{}"}}"#,
        o_path.display()
    )];
    f.extend(o.iter().skip(1).cloned());
    f.extend(turn("8", "a7", 10, 2700));
    std::fs::write(&o_path, o.join("\n") + "\n").unwrap();
    let f_path = dir.path().join("f.jsonl");
    std::fs::write(&f_path, f.join("\n") + "\n").unwrap();

    let alone = {
        let (_d, mut s) = store();
        import_ok(&mut s, "small/pi-v3-context-edit.jsonl");
        totals(&s)
    };
    let (_d, mut s) = store();
    let z = import::import_file(&mut s, &fixture("small/pi-v3-context-edit.jsonl"), None);
    let fo = import::import_file(&mut s, &f_path, None);
    let oo = import::import_file(&mut s, &o_path, None);
    assert!(z.error.is_none() && fo.error.is_none() && oo.error.is_none());
    assert_eq!(
        totals(&s),
        (alone.0 + 2600 + 2700, alone.1 + 60, alone.2 + 2, alone.3),
        "{:?}",
        oo.report.notes
    );
    assert_eq!(own_figures(&s, &z.conversations[0]), alone);
    assert_eq!(own_figures(&s, &oo.conversations[0]), (2600, 30, 1, 0));
    assert_eq!(own_figures(&s, &fo.conversations[0]), (2700, 30, 1, 0));
    // F is O's fork, at O's own answer
    let recorded = s
        .conversation(&fo.conversations[0])
        .unwrap()
        .forked_from
        .unwrap();
    assert_eq!(recorded.conversation, oo.conversations[0]);
    // and O, which holds all of Z and goes on but names nothing, continues Z from its tip
    let z_tip = s.conversation(&z.conversations[0]).unwrap().tip.unwrap();
    assert_eq!(
        s.conversation(&oo.conversations[0]).unwrap().forked_from,
        Some(cairn::model::ForkedFrom {
            conversation: z.conversations[0].clone(),
            message: z_tip
        }),
        "{:?}",
        oo.report.notes
    );
}

#[test]
fn an_opencode_fork_is_recorded_by_the_title_opencode_gives_it_whichever_is_read_first() {
    // opencode's `Session.fork` copies the messages under new ids, their times and tokens alike, into a session it
    // titles `<title> (fork #1)`: the fork names no origin but by that title
    let origin_file = fixture("opencode/opencode-errored-step.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&origin_file).unwrap()).unwrap();
    let session = "ses_9f8e7d6c5bffeZyXwVuTsRqPoN";
    doc["info"]["id"] = serde_json::json!(session);
    doc["info"]["title"] = serde_json::json!("errored step (fork #1)");
    let text = doc
        .to_string()
        .replace("ses_1a2b3c4d5effeAbCdEfGhIjKlM", session)
        .replace("msg_e5d1a", "msg_f6e2b")
        .replace("prt_", "prt_f");
    let dir = tempfile::tempdir().unwrap();
    let fork_file = dir.path().join("fork.json");
    std::fs::write(&fork_file, text).unwrap();
    for fork_first in [false, true] {
        let (_d, s, [o, f], noted) = read_both(&origin_file, &fork_file, fork_first);
        let (orig_conv, fork_conv) = (&o.conversations[0], &f.conversations[0]);
        let recorded = s.conversation(fork_conv).unwrap().forked_from;
        assert_eq!(
            recorded.map(|r| r.conversation).as_ref(),
            Some(orig_conv),
            "fork first: {fork_first}: {noted:?}"
        );
        // the fork copied all and added nothing: the origin counts every turn
        assert_eq!(own_figures(&s, fork_conv), (0, 0, 0, 0));
        assert!(own_figures(&s, orig_conv).0 > 0);
        assert_eq!(s.conversation(orig_conv).unwrap().forked_from, None);
    }
}

/// A Claude Code session resumed into a new file (as `--resume` wrote one before Claude Code kept the session's
/// file): `lines`, every line under the new session id, uuids, times and usage alike.
fn resumed(lines: &[String], session: &str) -> String {
    lines
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v.get("sessionId").is_some() {
                v["sessionId"] = serde_json::json!(session);
            }
            v.to_string() + "\n"
        })
        .collect()
}

/// Every order of reading `files`: their outcomes in the order given, for each order.
fn every_order(
    files: &[PathBuf],
) -> Vec<(
    Vec<usize>,
    tempfile::TempDir,
    Store,
    Vec<import::FileOutcome>,
)> {
    let n = files.len();
    let mut orders: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..n {
        orders = orders
            .into_iter()
            .flat_map(|o| {
                (0..n)
                    .filter(|k| !o.contains(k))
                    .map(|k| {
                        let mut o = o.clone();
                        o.push(k);
                        o
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    orders
        .into_iter()
        .map(|order| {
            let (d, mut s) = store();
            let mut read: Vec<Option<import::FileOutcome>> = (0..n).map(|_| None).collect();
            for &k in &order {
                let o = import::import_file(&mut s, &files[k], None);
                assert!(o.error.is_none(), "{order:?}: {:?}", o.error);
                read[k] = Some(o);
            }
            (order, d, s, read.into_iter().map(Option::unwrap).collect())
        })
        .collect()
}

/// Where the image-paste session was left and resumed (each cut before a prompt of the user's): its first
/// `LEFT_AT` lines are A, the session; its first `RESUMED_TO` lines, resumed into a new file, are B.
const LEFT_AT: usize = 80;
const RESUMED_TO: usize = 122;

/// Writes `body` as the session file `<name>.jsonl` in `dir`.
fn session_file(dir: &Path, name: &str, body: String) -> PathBuf {
    let p = dir.join(format!("{name}.jsonl"));
    std::fs::write(&p, body).unwrap();
    p
}

/// The image-paste session's lines, A (the session as it was left) and B (A resumed into a new file and gone on a
/// turn), written in `dir`.
fn left_and_resumed(dir: &Path) -> (Vec<String>, PathBuf, PathBuf) {
    let text = std::fs::read_to_string(fixture("claude-code/cc-2.0.5-image-paste.jsonl")).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let a = session_file(
        dir,
        "9e953218-585f-4692-89df-9e0747a31c68",
        lines[..LEFT_AT].join("\n") + "\n",
    );
    let b = session_file(
        dir,
        "bbbbbbbb-2222-4333-8444-555555555555",
        resumed(&lines[..RESUMED_TO], "bbbbbbbb-2222-4333-8444-555555555555"),
    );
    (lines, a, b)
}

#[test]
fn a_session_resumed_into_a_new_file_continues_the_one_it_copies_whichever_is_read_first() {
    // Claude Code's `--resume` wrote the whole history into a new file under a new session id and went on there,
    // naming no origin: A, the session; B, A resumed and gone on a turn; C, B resumed and gone on to the end
    let dir = tempfile::tempdir().unwrap();
    let (lines, a, b) = left_and_resumed(dir.path());
    let file = |name: &str, body: String| session_file(dir.path(), name, body);
    let c = file(
        "cccccccc-2222-4333-8444-555555555555",
        resumed(&lines, "cccccccc-2222-4333-8444-555555555555"),
    );
    let whole = {
        let (_d, mut s) = store();
        import_ok(&mut s, "claude-code/cc-2.0.5-image-paste.jsonl");
        totals(&s)
    };
    let mut figures = Vec::new();
    for (order, _d, s, read) in every_order(&[a.clone(), b.clone(), c]) {
        let [a, b, c] = [0, 1, 2].map(|k| read[k].conversations[0].clone());
        let notes: Vec<&String> = read.iter().flat_map(|o| &o.report.notes).collect();
        assert_eq!(totals(&s), whole, "{order:?}: {notes:?}");
        let tip = |id: &str| s.conversation(id).unwrap().tip.unwrap();
        let from = |id: &str| {
            s.conversation(id)
                .unwrap()
                .forked_from
                .map(|f| (f.conversation, f.message))
        };
        // each continues the one it copied whole, from its tip; A continues nothing
        assert_eq!(from(&a), None, "{order:?}");
        assert_eq!(from(&b), Some((a.clone(), tip(&a))), "{order:?}: {notes:?}");
        assert_eq!(from(&c), Some((b.clone(), tip(&b))), "{order:?}: {notes:?}");
        // each counts its own turns, whatever the order
        figures.push([&a, &b, &c].map(|id| own_figures(&s, id)));
    }
    assert_eq!(figures.len(), 6);
    assert!(figures.iter().all(|f| *f == figures[0]), "{figures:?}");
    assert!(figures[0].iter().all(|f| f.2 > 0), "{figures:?}");

    // B read after a copy of itself under another session id (both hold A whole and go on): it continues A still
    let b_copy = file(
        "dddddddd-2222-4333-8444-555555555555",
        resumed(&lines[..RESUMED_TO], "dddddddd-2222-4333-8444-555555555555"),
    );
    let (_d, mut s) = store();
    let read: Vec<import::FileOutcome> = [&a, &b_copy, &b]
        .iter()
        .map(|f| import::import_file(&mut s, f, None))
        .collect();
    let tip_a = s.conversation(&read[0].conversations[0]).unwrap().tip;
    for o in &read[1..] {
        let from = s.conversation(&o.conversations[0]).unwrap().forked_from;
        assert_eq!(
            from.map(|f| (f.conversation, Some(f.message))),
            Some((read[0].conversations[0].clone(), tip_a.clone())),
            "{:?}",
            o.report.notes
        );
    }

    // a copy of A's file taken later, when the session had gone on (its own session id still): the same session,
    // read twice, not a fork of it
    let later = file("a-copied-later", lines.join("\n") + "\n");
    for (order, _d, s, read) in every_order(&[
        dir.path()
            .join("9e953218-585f-4692-89df-9e0747a31c68.jsonl"),
        later,
    ]) {
        for o in &read {
            assert_eq!(
                s.conversation(&o.conversations[0]).unwrap().forked_from,
                None,
                "{order:?}"
            );
        }
        assert_eq!(totals(&s), whole, "{order:?}");
    }
}

#[test]
fn two_sessions_resumed_from_one_each_continue_it_whichever_is_read_first() {
    // A, the session; B, A resumed and gone on; C, A resumed again and gone on its own way (its own turn, later):
    // B and C each continue A, and neither the other
    let dir = tempfile::tempdir().unwrap();
    let (lines, a, b) = left_and_resumed(dir.path());
    // C's own way: the turn B took next, as another turn (its own ids, a year later)
    let in_a: std::collections::HashSet<String> = lines[..LEFT_AT]
        .iter()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["uuid"].as_str().map(str::to_string)
        })
        .collect();
    let own_way: Vec<String> = lines[LEFT_AT..92]
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            for k in ["uuid", "parentUuid", "requestId"] {
                if let Some(id) = v[k].as_str().filter(|id| !in_a.contains(*id)) {
                    v[k] = serde_json::json!(format!("c-{id}"));
                }
            }
            if let Some(id) = v.pointer("/message/id").and_then(|i| i.as_str()) {
                v["message"]["id"] = serde_json::json!(format!("c-{id}"));
            }
            if let Some(t) = v["timestamp"].as_str() {
                v["timestamp"] = serde_json::json!(t.replacen("2025-", "2026-", 1));
            }
            v.to_string()
        })
        .collect();
    let c_lines: Vec<String> = lines[..LEFT_AT].iter().cloned().chain(own_way).collect();
    let c = session_file(
        dir.path(),
        "cccccccc-2222-4333-8444-555555555555",
        resumed(&c_lines, "cccccccc-2222-4333-8444-555555555555"),
    );
    let mut figures = Vec::new();
    for (order, _d, s, read) in every_order(&[a, b, c]) {
        let [a, b, c] = [0, 1, 2].map(|k| read[k].conversations[0].clone());
        let notes: Vec<&String> = read.iter().flat_map(|o| &o.report.notes).collect();
        let tip_a = s.conversation(&a).unwrap().tip.unwrap();
        for fork in [&b, &c] {
            assert_eq!(
                s.conversation(fork).unwrap().forked_from,
                Some(cairn::model::ForkedFrom {
                    conversation: a.clone(),
                    message: tip_a.clone()
                }),
                "{order:?}: {notes:?}"
            );
        }
        figures.push([&a, &b, &c].map(|id| own_figures(&s, id)));
    }
    assert!(figures.iter().all(|f| *f == figures[0]), "{figures:?}");
    assert!(figures[0].iter().all(|f| f.2 > 0), "{figures:?}");
}
