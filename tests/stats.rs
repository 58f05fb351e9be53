//! Usage statistics against figures counted by hand from the transcripts themselves (every usage line, tool call
//! and failed result read straight from the JSONL, not through cairn's readers).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::reclaim::Settings;
use cairn::stats::Stats;
use cairn::store::{By, Store};
use serde_json::Value;

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn stats(s: &mut Store, by: By) -> Stats {
    match commands::run(
        s,
        &Settings::default(),
        Action::Stats { by, since: None },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap()
    {
        Outcome::Stats(st) => st,
        o => panic!("{o:?}"),
    }
}

/// (input, output, cache read, cache write) per Claude Code reply (the last line of each API message id, which
/// carries its final usage), tool calls by name, failed results.
fn hand_count_claude_code(path: &Path) -> ([u64; 4], BTreeMap<String, u64>, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut usage: HashMap<String, [u64; 4]> = HashMap::new();
    let mut calls: HashMap<String, String> = HashMap::new();
    let mut errors: HashSet<String> = HashSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let Some(m) = v.get("message") else { continue };
        if let (Some(id), Some(u)) = (m.get("id").and_then(Value::as_str), m.get("usage")) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            usage.insert(
                id.to_string(),
                [
                    n("input_tokens"),
                    n("output_tokens"),
                    n("cache_read_input_tokens"),
                    n("cache_creation_input_tokens"),
                ],
            );
        }
        for b in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    calls.insert(
                        b["id"].as_str().unwrap().to_string(),
                        b["name"].as_str().unwrap().to_string(),
                    );
                }
                Some("tool_result") if b.get("is_error").and_then(Value::as_bool) == Some(true) => {
                    errors.insert(b["tool_use_id"].as_str().unwrap().to_string());
                }
                _ => {}
            }
        }
    }
    let mut total = [0u64; 4];
    for u in usage.values() {
        for k in 0..4 {
            total[k] += u[k];
        }
    }
    let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
    for name in calls.values() {
        *by_name.entry(name.clone()).or_default() += 1;
    }
    (total, by_name, errors.len() as u64)
}

#[test]
fn stats_match_what_the_transcript_says() {
    let path = fixture("claude-code/cc-2.0.5-image-paste.jsonl");
    let (tokens, calls, errors) = hand_count_claude_code(&path);
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let o = cairn::import::import_file(&mut s, &path, None);
    assert!(o.error.is_none(), "{:?}", o.error);

    let by_conv = stats(&mut s, By::Conversation);
    assert_eq!(by_conv.rows.len(), 1);
    let r = &by_conv.rows[0];
    assert_eq!(
        [
            r.input_tokens,
            r.output_tokens,
            r.cache_read_tokens,
            r.cache_write_tokens
        ],
        tokens
    );
    assert_eq!(r.tool_calls, calls.values().sum::<u64>());
    assert_eq!(r.tool_errors, errors);
    assert_eq!(r.sessions, 1);
    // Sonnet 4.5 at list price: $3 / $15 / $0.30 / $3.75 per million
    let want = (tokens[0] as f64 * 3.0
        + tokens[1] as f64 * 15.0
        + tokens[2] as f64 * 0.3
        + tokens[3] as f64 * 3.75)
        / 1e6;
    assert!(
        (r.cost_usd.unwrap() - want).abs() < 1e-6,
        "{:?} vs {want}",
        r.cost_usd
    );
    let hit = tokens[2] as f64 / (tokens[0] + tokens[2] + tokens[3]) as f64;
    assert!((r.cache_hit_ratio.unwrap() - hit).abs() < 1e-9);

    let by_tool = stats(&mut s, By::Tool);
    let got: BTreeMap<String, u64> = by_tool
        .rows
        .iter()
        .map(|r| (r.key.clone(), r.tool_calls))
        .collect();
    assert_eq!(got, calls);
    assert_eq!(
        by_tool.rows.iter().map(|r| r.tool_errors).sum::<u64>(),
        errors
    );
    assert!(by_tool.rows.iter().all(|r| r.cost_usd.is_none()));

    // a fork doubles nothing
    let conv = o.conversations[0].clone();
    s.fork(&conv, None).unwrap();
    let again = stats(&mut s, By::Model);
    let sum: u64 = again.rows.iter().map(|r| r.output_tokens).sum();
    assert_eq!(sum, tokens[1]);

    // by day: the days the transcript's replies were written on
    let days = stats(&mut s, By::Day);
    assert!(
        days.rows
            .iter()
            .all(|r| r.key.len() == 10 && r.key.starts_with("2025-10")),
        "{days:?}"
    );
    assert_eq!(
        days.rows.iter().map(|r| r.output_tokens).sum::<u64>(),
        tokens[1]
    );
}

#[test]
fn a_model_without_a_price_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let o = cairn::import::import_file(
        &mut s,
        &fixture("claude-code/cc-rewind-fork-2.1.42.jsonl"),
        None,
    );
    assert!(o.error.is_none());
    let st = stats(&mut s, By::Model);
    // Opus 4.6 came out after cairn's first price table; the catalog prices it (an unknown model's row is
    // tests/models.rs's)
    let r = st.rows.iter().find(|r| r.key == "claude-opus-4-6").unwrap();
    assert!(r.cost_usd.is_some_and(|c| c > 0.0));
    assert!(r.unpriced.is_empty());
    let csv = cairn::stats::csv(&st);
    assert!(csv.starts_with("key,label,sessions,turns,tool_calls"));
    assert!(
        csv.lines().any(|l| l.starts_with("claude-opus-4-6,,1,")),
        "{csv}"
    );
}

#[test]
fn replies_that_recorded_no_usage_cost_unknown_not_nothing() {
    // a model's replies with no usage, or with counts of zero (an aborted step), have no cost to show: not $0.00
    let mut s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(Some("unmeasured")).unwrap();
    let reply = |model: &str, usage: Option<cairn::model::Usage>| {
        let mut m = cairn::model::NewMessage::text(cairn::model::Role::Assistant, "done");
        m.meta = serde_json::json!({ "model": model });
        m.usage = usage;
        m
    };
    let user = cairn::model::NewMessage::text(cairn::model::Role::User, "go");
    s.append_turn(&c, &[user.clone(), reply("gpt-5.1-codex", None)])
        .unwrap();
    s.append_turn(
        &c,
        &[
            user,
            reply("gpt-5.3-codex", Some(cairn::model::Usage::default())),
        ],
    )
    .unwrap();
    let st = stats(&mut s, By::Model);
    for model in ["gpt-5.1-codex", "gpt-5.3-codex"] {
        let r = st
            .rows
            .iter()
            .find(|r| r.key == model)
            .unwrap_or_else(|| panic!("{model}: {st:?}"));
        assert_eq!(r.cost_usd, None, "{model}: {r:?}");
    }
}

#[test]
fn the_day_roll_up_of_a_migrated_store_sums_what_a_fresh_one_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    {
        let mut s = Store::open(&path).unwrap();
        for f in [
            "claude-code/cc-2.0.5-image-paste.jsonl",
            "pi/pi-v3-compaction-tiny.jsonl",
        ] {
            let o = cairn::import::import_file(&mut s, &fixture(f), None);
            assert!(o.error.is_none());
        }
    }
    let want: Vec<Stats> = {
        let mut s = Store::open(&path).unwrap();
        [By::Day, By::Model, By::Conversation]
            .map(|b| stats(&mut s, b))
            .to_vec()
    };
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("DROP TABLE usage_days; PRAGMA user_version = 5;")
            .unwrap();
    }
    let mut s = Store::open(&path).unwrap();
    let got: Vec<Stats> = [By::Day, By::Model, By::Conversation]
        .map(|b| stats(&mut s, b))
        .to_vec();
    assert_eq!(got, want);
}
