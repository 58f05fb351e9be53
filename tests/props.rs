//! Property tests: random sequences of append / branch / fork / checkpoint / rewind / resume / undo keep the
//! store's invariants: every path is root-connected and acyclic, every resumed context is pair-valid, forks stay
//! isolated, and no checkpoint is ever clamped.

#[path = "support/helpers.rs"]
mod helpers;

use std::collections::{HashMap, HashSet};

use cairn::store::{Budget, Store, StoreError};
use helpers::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Append { conv: u8, tools: u8 },
    Branch { conv: u8, msg: u16 },
    Fork { conv: u8, at: Option<u16> },
    Checkpoint { conv: u8, label: u8 },
    Rewind { conv: u8, label: u8 },
    Resume { conv: u8, budget: u16, tokens: bool },
    Undo { conv: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), 0u8..4).prop_map(|(conv, tools)| Op::Append { conv, tools }),
        2 => (any::<u8>(), any::<u16>()).prop_map(|(conv, msg)| Op::Branch { conv, msg }),
        1 => (any::<u8>(), proptest::option::of(any::<u16>())).prop_map(|(conv, at)| Op::Fork { conv, at }),
        2 => (any::<u8>(), 0u8..4).prop_map(|(conv, label)| Op::Checkpoint { conv, label }),
        2 => (any::<u8>(), 0u8..4).prop_map(|(conv, label)| Op::Rewind { conv, label }),
        2 => (any::<u8>(), 0u16..40, any::<bool>()).prop_map(|(conv, budget, tokens)| Op::Resume { conv, budget, tokens }),
        1 => any::<u8>().prop_map(|conv| Op::Undo { conv }),
    ]
}

fn check_invariants(s: &Store, owner: &HashMap<String, String>) {
    let convs = s.conversations().unwrap();
    let mut seen: HashSet<String> = HashSet::new();
    for c in &convs {
        let msgs = s.messages(&c.id).unwrap();
        let by_id: HashMap<&str, &cairn::model::Message> =
            msgs.iter().map(|m| (m.id.as_str(), m)).collect();
        for m in &msgs {
            // isolation: a row belongs to exactly one conversation, the one that made it
            assert!(
                seen.insert(m.id.clone()),
                "message {} in two conversations",
                m.id
            );
            assert_eq!(
                owner.get(&m.id),
                Some(&c.id),
                "message {} moved conversation",
                m.id
            );
            // root-connected and acyclic: depth falls by one per parent step, down to a root at 0
            let mut cur: &cairn::model::Message = m;
            let mut steps = 0;
            while let Some(p) = &cur.parent {
                let parent = by_id
                    .get(p.as_str())
                    .unwrap_or_else(|| panic!("parent {p} outside {}", c.id));
                assert_eq!(parent.depth + 1, cur.depth);
                cur = *parent;
                steps += 1;
                assert!(steps <= msgs.len(), "cycle");
            }
            assert_eq!(cur.depth, 0);
        }
        let path = s.active_path(&c.id).unwrap();
        for w in path.windows(2) {
            assert_eq!(w[1].parent.as_deref(), Some(w[0].id.as_str()));
        }
        assert_eq!(path.last().map(|m| m.id.clone()), c.tip);
    }
}

fn pick<T: Clone>(v: &[T], i: usize) -> Option<T> {
    if v.is_empty() {
        None
    } else {
        Some(v[i % v.len()].clone())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences_keep_the_invariants(ops in proptest::collection::vec(op(), 1..40)) {
        let mut s = mem();
        let first = s.create_conversation(Some("p")).unwrap();
        let mut convs = vec![first];
        // which conversation wrote each message (the model that isolation is checked against)
        let mut owner: HashMap<String, String> = HashMap::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Append { conv, tools } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    let ids: Vec<String> = (0..tools).map(|i| format!("call_{step}_{i}")).collect();
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    let turn = if tools == 0 { simple_turn("q", "a") } else { tool_turn("q", &refs) };
                    match s.append_turn(&c, &turn) {
                        Ok(new) => for id in new { owner.insert(id, c.clone()); },
                        Err(StoreError::NotBoundary { .. }) => {}
                        Err(e) => panic!("append: {e}"),
                    }
                }
                Op::Branch { conv, msg } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    let msgs = s.messages(&c).unwrap();
                    if let Some(m) = pick(&msgs, msg as usize) {
                        let count = s.conversation(&c).unwrap().messages;
                        s.branch(&c, &m.id, None).unwrap();
                        prop_assert_eq!(s.conversation(&c).unwrap().messages, count);
                    }
                }
                Op::Fork { conv, at } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    let msgs = s.messages(&c).unwrap();
                    let at_id = at.and_then(|a| pick(&msgs, a as usize)).map(|m| m.id);
                    match s.fork(&c, at_id.as_deref()) {
                        Ok(f) => {
                            for m in s.messages(&f).unwrap() { owner.insert(m.id, f.clone()); }
                            convs.push(f);
                        }
                        Err(StoreError::Empty(_)) => {}
                        Err(e) => panic!("fork: {e}"),
                    }
                }
                Op::Checkpoint { conv, label } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    match s.checkpoint(&c, &format!("cp{label}")) {
                        Ok(cp) => prop_assert_eq!(Some(cp.message), s.conversation(&c).unwrap().tip),
                        Err(StoreError::Empty(_) | StoreError::DuplicateLabel { .. } | StoreError::NotBoundary { .. }) => {}
                        Err(e) => panic!("checkpoint: {e}"),
                    }
                }
                Op::Rewind { conv, label } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    let label = format!("cp{label}");
                    let target = s.checkpoints(&c).unwrap().into_iter().find(|cp| cp.label == label);
                    match s.rewind(&c, &label, "found things") {
                        Ok(digest) => {
                            owner.insert(digest.clone(), c.clone());
                            // never clamped: the digest hangs exactly off the checkpoint's message
                            let p = s.path_to(&c, &digest).unwrap();
                            prop_assert_eq!(&p[p.len() - 2].id, &target.unwrap().message);
                        }
                        Err(StoreError::UnknownCheckpoint { .. }) => prop_assert!(target.is_none()),
                        Err(StoreError::CheckpointTrimmed { .. }) => prop_assert!(target.is_some()),
                        Err(e) => panic!("rewind: {e}"),
                    }
                }
                Op::Resume { conv, budget, tokens } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    let b = if tokens { Budget::Tokens(budget as u64 * 8) } else { Budget::Messages(budget as usize) };
                    let r = s.resume(&c, b).unwrap();
                    cairn::pairs::check(&r.messages, false)
                        .map_err(|e| TestCaseError::fail(format!("resume not pair-valid: {e}")))?;
                    if let Budget::Messages(n) = b { prop_assert!(r.messages.len() <= n); }
                    let path = s.active_path(&c).unwrap();
                    // the kept messages are the newest ones of the active path, in order
                    let kept: Vec<_> = r.messages.iter().map(|m| m.id.clone()).collect();
                    let start = r.trimmed;
                    let want: Vec<_> = path[start..start + kept.len()].iter().map(|m| m.id.clone()).collect();
                    prop_assert_eq!(kept, want);
                    // the dropped checkpoints are exactly those whose messages were cut
                    let cut: HashSet<_> = path[..start].iter().map(|m| m.id.clone()).collect();
                    for cp in s.checkpoints(&c).unwrap() {
                        let dropped = r.dropped_checkpoints.iter().any(|d| d.label == cp.label);
                        prop_assert_eq!(dropped, cut.contains(&cp.message));
                    }
                }
                Op::Undo { conv } => {
                    let c = pick(&convs, conv as usize).unwrap();
                    let count = s.conversation(&c).unwrap().messages;
                    match s.undo(&c) {
                        Ok(_) | Err(StoreError::NothingToUndo(_)) => {}
                        Err(e) => panic!("undo: {e}"),
                    }
                    prop_assert_eq!(s.conversation(&c).unwrap().messages, count);
                    convs.retain(|x| s.conversation(x).map(|c| !c.archived).unwrap_or(false));
                }
            }
            check_invariants(&s, &owner);
        }
    }
}

/// One record of a Gemini CLI session log, over a few message ids: a message (prompt, reply or info), a rewind, a
/// replacement of the history (a subset of the ids, in any order), a metadata update.
fn gemini_record() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    let id = || (0u8..6).prop_map(|i| format!("m{i}"));
    prop_oneof![
        4 => (id(), 0u8..3, any::<u16>()).prop_map(|(id, kind, n)| {
            let at = "2026-11-02T10:00:00.000Z";
            match kind {
                0 => json!({"id": id, "timestamp": at, "type": "user", "content": [{"text": format!("prompt {n}")}]}),
                1 => json!({"id": id, "timestamp": at, "type": "gemini", "content": format!("reply {n}"),
                            "model": "gemini-3-flash-preview",
                            "tokens": {"input": 1000 + u64::from(n), "output": 10, "cached": 0, "total": 1010}}),
                _ => json!({"id": id, "timestamp": at, "type": "info", "content": "note"}),
            }
        }),
        1 => id().prop_map(|id| json!({"$rewindTo": id})),
        1 => proptest::collection::vec((id(), any::<bool>()), 0..6).prop_map(|ms| {
            let msgs: Vec<serde_json::Value> = ms
                .into_iter()
                .map(|(id, user)| json!({"id": id, "timestamp": "2026-11-02T10:00:00.000Z",
                                         "type": if user { "user" } else { "gemini" }, "content": "kept"}))
                .collect();
            json!({"$set": {"messages": msgs}})
        }),
        1 => Just(json!({"$set": {"lastUpdated": "2026-11-02T10:00:01.000Z"}})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever a Gemini CLI log does with its records, it imports whole, into a tree the store accepts, its path
    /// holding no message twice, and a second read finds nothing new.
    #[test]
    fn any_gemini_cli_log_imports_into_a_valid_tree(records in proptest::collection::vec(gemini_record(), 0..30)) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("session-2026-11-02T10-00-s.jsonl");
        let mut lines = vec![serde_json::json!({"sessionId": "s", "projectHash": "ab"}).to_string()];
        lines.extend(records.iter().map(|r| r.to_string()));
        std::fs::write(&f, lines.join("\n") + "\n").unwrap();
        let mut s = mem();
        let o = cairn::import::import_file(&mut s, &f, None);
        if o.error.as_deref().is_some_and(|e| e.contains("no messages yet")) {
            prop_assert!(s.conversations().unwrap().is_empty());
            return Ok(());
        }
        prop_assert!(o.error.is_none(), "{:?}", o.error);
        for c in &o.conversations {
            let path = s.active_path(c).unwrap();
            let ids: HashSet<&str> = path.iter().map(|m| m.id.as_str()).collect();
            prop_assert_eq!(ids.len(), path.len());
        }
        // read again, nothing is new
        let held = s.conversations().unwrap().len();
        let again = cairn::import::import_file(&mut s, &f, None);
        prop_assert!(
            again.error.as_deref().is_none_or(|e| e.contains("already imported")),
            "{:?}",
            again.error
        );
        prop_assert_eq!(s.conversations().unwrap().len(), held);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// A Gemini CLI log read while it was written, then again grown, imports without error into one conversation
    /// (its first prompt written once, as Gemini CLI writes a session's first message; what follows anything).
    #[test]
    fn a_gemini_cli_log_read_mid_session_then_grown_imports_cleanly(
        records in proptest::collection::vec(gemini_record(), 1..30),
        cut in any::<prop::sample::Index>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("session-2026-11-02T10-00-s.jsonl");
        let write = |n: usize| {
            let mut lines = vec![
                serde_json::json!({"sessionId": "s", "projectHash": "ab"}).to_string(),
                serde_json::json!({"id": "first", "timestamp": "2026-11-02T10:00:00.000Z", "type": "user",
                                   "content": [{"text": "the first prompt"}]}).to_string(),
            ];
            lines.extend(records[..n].iter().map(|r| r.to_string()));
            std::fs::write(&f, lines.join("\n") + "\n").unwrap();
        };
        let mut s = mem();
        write(cut.index(records.len()));
        let first = cairn::import::import_file(&mut s, &f, None);
        prop_assert!(first.error.is_none(), "{:?}", first.error);
        write(records.len());
        let grown = cairn::import::import_file(&mut s, &f, None);
        prop_assert!(
            grown.error.as_deref().is_none_or(|e| e.contains("already imported")),
            "{:?}",
            grown.error
        );
        prop_assert_eq!(s.conversations().unwrap().len(), 1);
    }
}

/// One Qwen Code record of a random kind, its parent the record before it or (a rewind) an earlier one.
fn qwen_records(plan: &[(u8, prop::sample::Index, bool)]) -> Vec<serde_json::Value> {
    use serde_json::json;
    let mut out: Vec<serde_json::Value> = Vec::new();
    let mut open_call: Option<String> = None;
    for (i, (kind, pick, rewind)) in plan.iter().enumerate() {
        let parent = match i {
            0 => serde_json::Value::Null,
            _ if *rewind => json!(format!("r{}", pick.index(i))),
            _ => json!(format!("r{}", i - 1)),
        };
        let mut r = json!({"uuid": format!("r{i}"), "parentUuid": parent, "sessionId": "s", "cwd": "/p",
                           "version": "0.22.0", "timestamp": format!("2026-11-02T10:{:02}:{:02}.000Z", i / 60, i % 60)});
        let o = r.as_object_mut().unwrap();
        match kind % 8 {
            0 => {
                o.insert("type".into(), json!("user"));
                o.insert(
                    "message".into(),
                    json!({"role": "user", "parts": [{"text": format!("prompt {i}")}]}),
                );
            }
            1 => {
                o.insert("type".into(), json!("assistant"));
                o.insert("model".into(), json!("qwen3-coder-plus"));
                o.insert(
                    "message".into(),
                    json!({"role": "model", "parts": [
                    {"text": "thinking", "thought": true}, {"text": format!("reply {i}")}]}),
                );
                o.insert(
                    "usageMetadata".into(),
                    json!({"promptTokenCount": 1000 + i, "candidatesTokenCount": 5,
                                                        "totalTokenCount": 1005 + i}),
                );
            }
            2 => {
                let id = format!("call_{i}");
                open_call = Some(id.clone());
                o.insert("type".into(), json!("assistant"));
                o.insert("model".into(), json!("qwen3-coder-plus"));
                o.insert(
                    "message".into(),
                    json!({"role": "model", "parts": [
                    {"functionCall": {"id": id, "name": "read_file", "args": {"path": "a"}}}]}),
                );
            }
            3 => {
                let id = open_call.take().unwrap_or_else(|| format!("gone_{i}"));
                o.insert("type".into(), json!("tool_result"));
                o.insert("message".into(), json!({"role": "user", "parts": [
                    {"functionResponse": {"id": id, "name": "read_file", "response": {"output": "text"}}}]}));
            }
            4 => {
                o.insert("type".into(), json!("system"));
                o.insert("subtype".into(), json!("chat_compression"));
                o.insert("systemPayload".into(), json!({"info": {}, "compressedHistory": [
                    {"role": "user", "parts": [{"text": "<state_snapshot>so far</state_snapshot>"}]}]}));
            }
            5 => {
                o.insert("type".into(), json!("system"));
                o.insert("subtype".into(), json!("custom_title"));
                o.insert(
                    "systemPayload".into(),
                    json!({"customTitle": format!("title {i}")}),
                );
            }
            6 => {
                o.insert("type".into(), json!("assistant"));
                o.insert("isSidechain".into(), json!(true));
                o.insert(
                    "message".into(),
                    json!({"role": "model", "parts": [{"text": "side"}]}),
                );
            }
            _ => {
                o.insert("type".into(), json!("system"));
                o.insert("subtype".into(), json!("ui_telemetry"));
                o.insert("systemPayload".into(), json!({"uiEvent": {}}));
            }
        }
        out.push(r);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever a Qwen Code session does (rewinds, compressions, titles, calls answered or not, a subagent's
    /// records), it imports whole into a tree the store accepts, its path holding no message twice and the
    /// session's last message on it; read mid-session and again grown, it is one conversation with nothing new
    /// on a third read.
    #[test]
    fn any_qwen_code_session_imports_into_a_valid_tree(
        plan in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>(), prop::bool::weighted(0.15)), 1..40),
        cut in any::<prop::sample::Index>(),
    ) {
        let records = qwen_records(&plan);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("3b2c1d0e-0000-4000-8000-000000000001.jsonl");
        let write = |n: usize| {
            let lines: Vec<String> = records[..n].iter().map(|r| r.to_string()).collect();
            std::fs::write(&f, lines.join("\n") + "\n").unwrap();
        };
        let mut s = mem();
        write(1 + cut.index(records.len()));
        let first = cairn::import::import_file(&mut s, &f, None);
        if let Some(e) = &first.error {
            prop_assert!(e.contains("nothing to import"), "{e}");
            prop_assert!(s.conversations().unwrap().is_empty());
        }
        write(records.len());
        let o = cairn::import::import_file(&mut s, &f, None);
        if let Some(e) = &o.error {
            prop_assert!(e.contains("nothing to import") || e.contains("already imported"), "{e}");
        }
        prop_assert!(s.conversations().unwrap().len() <= 1);
        for c in s.conversations().unwrap() {
            let path = s.active_path(&c.id).unwrap();
            let ids: HashSet<&str> = path.iter().map(|m| m.id.as_str()).collect();
            prop_assert_eq!(ids.len(), path.len());
            prop_assert!(path.iter().all(|m| m.content.iter().all(|b| b.as_text() != Some("side"))));
        }
        let held = s.conversations().unwrap().len();
        let again = cairn::import::import_file(&mut s, &f, None);
        prop_assert!(again.error.as_deref().is_none_or(|e| e.contains("already imported") || e.contains("nothing to import")), "{:?}", again.error);
        prop_assert_eq!(s.conversations().unwrap().len(), held);
    }
}

/// A Kimi CLI session driven by `plan` as its `Context` writes it: prompts, steps (a reply, a call and its result),
/// reverts to an earlier checkpoint, clears and compactions (each moving the history aside as `context_<n>.jsonl`
/// and starting a new one). Returns the histories after each operation (the files' contents, oldest first, and
/// the current one last).
fn kimi_session(plan: &[(u8, prop::sample::Index)]) -> Vec<Vec<Vec<serde_json::Value>>> {
    use serde_json::json;
    let sp = json!({"role": "_system_prompt", "content": "You are Kimi CLI."});
    let mut moved: Vec<Vec<serde_json::Value>> = Vec::new();
    let mut cur: Vec<serde_json::Value> = vec![sp.clone()];
    let mut checkpoints = 0u64;
    let mut states = Vec::new();
    let checkpoint = |cur: &mut Vec<serde_json::Value>, n: &mut u64| {
        cur.push(json!({"role": "_checkpoint", "id": *n}));
        *n += 1;
    };
    for (i, (kind, pick)) in plan.iter().enumerate() {
        match kind % 6 {
            0 | 1 => {
                checkpoint(&mut cur, &mut checkpoints);
                cur.push(json!({"role": "user", "content": format!("prompt {i}")}));
            }
            2 => {
                checkpoint(&mut cur, &mut checkpoints);
                let prompt = 9000 + i as u64;
                cur.push(json!({"role": "_usage", "token_count": prompt}));
                cur.push(json!({"role": "assistant", "content": [{"type": "think", "think": "hm"},
                    {"type": "text", "text": format!("reply {i}")}],
                    "tool_calls": [{"type": "function", "id": format!("tool_{i}"),
                                    "function": {"name": "Shell", "arguments": "{\"command\":\"ls\"}"}}]}));
                cur.push(json!({"role": "_usage", "token_count": prompt + 20}));
                cur.push(json!({"role": "tool", "tool_call_id": format!("tool_{i}"),
                                "content": [{"type": "text", "text": "a.txt"}]}));
            }
            3 if checkpoints > 0 => {
                // back to an earlier checkpoint: what came before it is copied into the new history
                let to = pick.index(checkpoints as usize) as u64;
                let keep = cur
                    .iter()
                    .position(|v| v["role"] == "_checkpoint" && v["id"] == to)
                    .unwrap_or(cur.len());
                let kept = cur[..keep].to_vec();
                moved.push(std::mem::replace(&mut cur, kept));
                checkpoints = to;
            }
            4 => {
                // a clear: a new, empty history
                moved.push(std::mem::take(&mut cur));
                checkpoints = 0;
            }
            5 => {
                // a compaction: the summary and the last two prompts or replies
                let said: Vec<serde_json::Value> = cur
                    .iter()
                    .filter(|v| matches!(v["role"].as_str(), Some("user" | "assistant")))
                    .cloned()
                    .collect();
                let kept = said[said.len().saturating_sub(2)..].to_vec();
                moved.push(std::mem::take(&mut cur));
                cur.push(sp.clone());
                checkpoints = 0;
                checkpoint(&mut cur, &mut checkpoints);
                cur.push(json!({"role": "user", "content": [{"type": "text",
                    "text": "<system>Previous context has been compacted. Here is the compaction output:</system>"},
                    {"type": "text", "text": format!("summary {i}")}]}));
                cur.extend(kept);
            }
            _ => {}
        }
        let mut files = moved.clone();
        files.push(cur.clone());
        states.push(files);
    }
    states
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever a Kimi CLI session does (prompts, steps, reverts, clears, compactions), its histories import into
    /// one tree the store accepts, its path holding no message twice and ending where the current history does
    /// (where the read added anything); read mid-session and again grown, it is one conversation, with nothing new
    /// on a third read.
    #[test]
    fn any_kimi_cli_session_imports_into_one_valid_tree(
        plan in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>()), 1..30),
        cut in any::<prop::sample::Index>(),
    ) {
        let states = kimi_session(&plan);
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("sessions/0a1b/5e3c2d10-0000-4000-8000-000000000001");
        std::fs::create_dir_all(&session).unwrap();
        let write = |files: &[Vec<serde_json::Value>]| {
            for (k, lines) in files.iter().enumerate() {
                let name = if k + 1 == files.len() { "context.jsonl".to_string() } else { format!("context_{}.jsonl", k + 1) };
                let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
                std::fs::write(session.join(name), text).unwrap();
            }
        };
        let f = session.join("context.jsonl");
        let mut s = mem();
        write(&states[cut.index(states.len())]);
        let first = cairn::import::import_file(&mut s, &f, None);
        if let Some(e) = &first.error {
            prop_assert!(e.contains("nothing to import") || e.contains("not a"), "{e}");
        }
        let last = states.last().unwrap();
        write(last);
        let o = cairn::import::import_file(&mut s, &f, None);
        if let Some(e) = &o.error {
            prop_assert!(e.contains("nothing to import") || e.contains("already imported") || e.contains("not a"), "{e}");
        }
        prop_assert!(s.conversations().unwrap().len() <= 1);
        for c in s.conversations().unwrap() {
            let path = s.active_path(&c.id).unwrap();
            let ids: HashSet<&str> = path.iter().map(|m| m.id.as_str()).collect();
            prop_assert_eq!(ids.len(), path.len());
            // the path ends with the current history's last message, or the marker of a history still empty
            // (a read that adds nothing leaves the tip where it was: a revert alone does not move it back)
            if o.status == "unchanged" {
                continue;
            }
            let current: Vec<&serde_json::Value> = last.last().unwrap().iter()
                .filter(|v| matches!(v["role"].as_str(), Some("user" | "assistant" | "tool")))
                .collect();
            let end = path.last().unwrap();
            match current.last() {
                Some(v) if v["role"] == "tool" => prop_assert!(end.has_tool_result()),
                Some(v) if v["role"] == "assistant" => prop_assert_eq!(end.role, cairn::model::Role::Assistant),
                Some(_) => prop_assert_eq!(end.role, cairn::model::Role::User),
                None => prop_assert_eq!(end.role, cairn::model::Role::System),
            }
        }
        let held = s.conversations().unwrap().len();
        let again = cairn::import::import_file(&mut s, &f, None);
        prop_assert!(again.error.as_deref().is_none_or(|e| e.contains("already imported") || e.contains("nothing to import") || e.contains("not a")), "{:?}", again.error);
        prop_assert_eq!(s.conversations().unwrap().len(), held);
    }
}

/// An Amp thread driven by `plan`: prompts, replies with a call (measured), the call's result (done, failed,
/// cancelled, refused), a summary Amp continued from, and the user editing an earlier prompt (Amp drops what
/// followed it and the thread goes on from the edit). Returns the thread's document after each operation.
fn amp_thread(plan: &[(u8, prop::sample::Index)]) -> Vec<serde_json::Value> {
    use serde_json::json;
    let mut messages: Vec<serde_json::Value> = Vec::new();
    let mut next = 0u64;
    let mut states = Vec::new();
    for (i, (kind, pick)) in plan.iter().enumerate() {
        let id = |n: &mut u64| {
            *n += 1;
            *n
        };
        let open_call = messages.last().and_then(|m| {
            m["content"]
                .as_array()?
                .iter()
                .find(|b| b["type"] == "tool_use")?["id"]
                .as_str()
                .map(str::to_string)
        });
        match (kind % 6, open_call) {
            (_, Some(call)) => {
                let status = ["done", "error", "cancelled", "rejected-by-user"][usize::from(*kind) % 4];
                let run = match status {
                    "done" => json!({"status": status, "result": {"output": format!("out {i}"), "exitCode": 0}}),
                    "error" => json!({"status": status, "error": {"message": format!("failed {i}")}}),
                    s => json!({"status": s}),
                };
                messages.push(json!({"role": "user", "messageId": id(&mut next),
                    "content": [{"type": "tool_result", "toolUseID": call, "run": run}]}));
            }
            (0 | 1, None) => messages.push(json!({"role": "user", "messageId": id(&mut next),
                "content": [{"type": "text", "text": format!("prompt {i}")}], "meta": {"sentAt": 1_764_900_000_000u64 + i as u64}})),
            (2 | 3, None) => {
                let call = kind % 6 == 2;
                let mut content = vec![json!({"type": "text", "text": format!("reply {i}")})];
                if call {
                    content.push(json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                        "input": {"cmd": "ls"}, "complete": true}));
                }
                let prompt = 10_000 + 50 * i as u64;
                messages.push(json!({"role": "assistant", "messageId": id(&mut next), "content": content,
                    "state": {"type": "complete", "stopReason": if call { "tool_use" } else { "end_turn" }},
                    "usage": {"model": "claude-sonnet-4-5-20250929", "maxInputTokens": 168_000, "inputTokens": 5,
                              "cacheReadInputTokens": prompt - 5, "cacheCreationInputTokens": 0, "outputTokens": 40}}));
            }
            (4, None) => messages.push(json!({"role": "info", "messageId": id(&mut next),
                "content": [{"type": "summary", "summary": {"type": "message", "summary": format!("summary {i}")}}]})),
            (_, None) => {
                // an edit of an earlier prompt: what followed it is dropped, the edited prompt takes its place (not
                // the first: a thread whose first prompt changed starts a conversation of its own, a tree having
                // one root)
                let prompts: Vec<usize> = (0..messages.len())
                    .filter(|&k| messages[k]["role"] == "user" && messages[k]["content"][0]["type"] == "text")
                    .skip(1)
                    .collect();
                if let Some(&k) = prompts.get(pick.index(prompts.len().max(1))) {
                    messages.truncate(k);
                    messages.push(json!({"role": "user", "messageId": id(&mut next),
                        "content": [{"type": "text", "text": format!("edited prompt {i}")}]}));
                }
            }
        }
        states.push(json!({"v": i, "id": "T-5e3c2d10-0000-4000-8000-000000000001", "created": 1_764_900_000_000u64,
                           "title": "a thread", "messages": messages.clone()}));
    }
    states
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever an Amp thread does (prompts, calls answered any way, summaries, edits of earlier prompts), Amp's
    /// document imports into one tree the store accepts, its path holding no message twice and ending with the
    /// thread's last message; read mid-thread and again as Amp rewrote it, it is one conversation, with nothing new
    /// on a third read.
    #[test]
    fn any_amp_thread_imports_into_one_valid_tree(
        plan in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>()), 1..40),
        cut in any::<prop::sample::Index>(),
    ) {
        let states = amp_thread(&plan);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("T-5e3c2d10-0000-4000-8000-000000000001.json");
        let mut s = mem();
        std::fs::write(&f, states[cut.index(states.len())].to_string()).unwrap();
        let first = cairn::import::import_file(&mut s, &f, None);
        if let Some(e) = &first.error {
            prop_assert!(e.contains("nothing to import"), "{e}");
        }
        let last = states.last().unwrap();
        std::fs::write(&f, last.to_string()).unwrap();
        let o = cairn::import::import_file(&mut s, &f, None);
        if let Some(e) = &o.error {
            prop_assert!(e.contains("nothing to import") || e.contains("already imported"), "{e}");
        }
        prop_assert!(s.conversations().unwrap().len() <= 1);
        for c in s.conversations().unwrap() {
            let path = s.active_path(&c.id).unwrap();
            let ids: HashSet<&str> = path.iter().map(|m| m.id.as_str()).collect();
            prop_assert_eq!(ids.len(), path.len());
            // every result on the path answers a call before it on the path
            let mut calls: HashSet<String> = HashSet::new();
            for m in &path {
                for b in &m.content {
                    match b {
                        cairn::model::Block::ToolUse { id, .. } => { calls.insert(id.clone()); }
                        cairn::model::Block::ToolResult { tool_use_id, .. } => prop_assert!(calls.contains(tool_use_id)),
                        _ => {}
                    }
                }
            }
            if o.status == "unchanged" {
                continue;
            }
            let said = last["messages"].as_array().unwrap().last().unwrap();
            let end = path.last().unwrap().content.first().and_then(|b| b.as_text()).map(str::to_string);
            if let Some(t) = said["content"][0]["text"].as_str() {
                prop_assert_eq!(end, Some(t.to_string()));
            }
        }
        let held = s.conversations().unwrap().len();
        let again = cairn::import::import_file(&mut s, &f, None);
        prop_assert!(again.error.as_deref().is_none_or(|e| e.contains("already imported") || e.contains("nothing to import")), "{:?}", again.error);
        prop_assert_eq!(s.conversations().unwrap().len(), held);
    }
}
