//! The prompt cache reply by reply (`cairn cache`): on hand-made Claude Code sessions, one per cause of a miss,
//! each miss gets its cause and its price; on the real samples, the replies' costs add up to the session's list
//! cost (what `stats` says), every miss after a pause longer than the cache's lifetime is the lifetime's, every miss
//! after a compaction is the compaction's.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::cache::{CacheReport, Cause};
use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::reclaim::Settings;
use cairn::store::{By, Store};
use serde_json::{Value, json};

fn run(s: &mut Store, a: Action) -> Outcome {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false)).unwrap()
}

fn import(s: &mut Store, f: &Path) -> Vec<String> {
    let Outcome::Imported(out) = run(
        s,
        Action::Import {
            paths: vec![f.to_path_buf()],
            format: None,
        },
    ) else {
        panic!()
    };
    assert!(out[0].error.is_none(), "{:?}", out[0].error);
    out[0].conversations.clone()
}

fn cache(s: &mut Store, c: &str) -> CacheReport {
    let Outcome::Cache(r) = run(
        s,
        Action::Cache {
            conversation: c.to_string(),
            at: None,
        },
    ) else {
        panic!()
    };
    r
}

/// A Claude Code session written here: each step is a prompt and its reply with the reply's usage
/// `(read, write, model, minutes after the previous step)`; `compact_before` puts a compaction before a step.
struct Step {
    read: u64,
    write: u64,
    model: &'static str,
    after_min: i64,
    compact_before: bool,
}

fn step(read: u64, write: u64, after_min: i64) -> Step {
    Step {
        read,
        write,
        model: "claude-sonnet-4-5",
        after_min,
        compact_before: false,
    }
}

fn session(dir: &Path, name: &str, steps: &[Step], edit_at: Option<usize>) -> PathBuf {
    let mut lines = Vec::new();
    let mut t = 1_790_000_000_000i64;
    let mut parent: Value = Value::Null;
    let ts = |t: i64| jiff::Timestamp::from_millisecond(t).unwrap().to_string();
    for (i, s) in steps.iter().enumerate() {
        t += s.after_min * 60_000;
        if s.compact_before {
            lines.push(json!({"type": "system", "subtype": "compact_boundary", "uuid": format!("b{i}"),
                "parentUuid": null, "logicalParentUuid": parent, "sessionId": "s", "timestamp": ts(t - 1000),
                "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 50_000}}));
            lines.push(
                json!({"type": "user", "uuid": format!("cs{i}"), "parentUuid": format!("b{i}"),
                "sessionId": "s", "timestamp": ts(t - 500), "isCompactSummary": true,
                "message": {"role": "user", "content": "Summary of the conversation so far."}}),
            );
            parent = json!(format!("cs{i}"));
        }
        // an edit: the prompt of step i written again under the same parent, as a second child
        if edit_at == Some(i) {
            lines.push(json!({"type": "user", "uuid": format!("old{i}"), "parentUuid": parent, "sessionId": "s",
                "timestamp": ts(t - 2000), "message": {"role": "user", "content": format!("first try {i}")}}));
            lines.push(json!({"type": "assistant", "uuid": format!("olda{i}"), "parentUuid": format!("old{i}"),
                "sessionId": "s", "timestamp": ts(t - 1500),
                "message": {"id": format!("om{i}"), "role": "assistant", "model": s.model,
                            "content": [{"type": "text", "text": "abandoned"}],
                            "usage": {"input_tokens": 3, "output_tokens": 5}}}));
        }
        lines.push(json!({"type": "user", "uuid": format!("u{i}"), "parentUuid": parent, "sessionId": "s",
            "timestamp": ts(t), "message": {"role": "user", "content": format!("step {i}: do the next thing")}}));
        lines.push(json!({"type": "assistant", "uuid": format!("a{i}"), "parentUuid": format!("u{i}"),
            "sessionId": "s", "timestamp": ts(t + 5000),
            "message": {"id": format!("m{i}"), "role": "assistant", "model": s.model,
                        "content": [{"type": "text", "text": format!("done {i}")}],
                        "usage": {"input_tokens": 3, "output_tokens": 100, "cache_read_input_tokens": s.read,
                                  "cache_creation_input_tokens": s.write}}}));
        parent = json!(format!("a{i}"));
    }
    let f = dir.join(name);
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&f, text.join("\n") + "\n").unwrap();
    f
}

/// A case: its file name, its steps, where an edit sits, and the cause the last reply's miss must get.
type Case = (&'static str, Vec<Step>, Option<usize>, Option<Cause>);

/// The cause of each miss, in order.
fn causes(r: &CacheReport) -> Vec<Option<Cause>> {
    r.replies.iter().map(|x| x.cause).collect()
}

#[test]
fn each_cause_of_a_miss_is_told_apart_and_priced() {
    let dir = tempfile::tempdir().unwrap();
    // 30k of system prompt and tools, then 2k more each step
    let warm = || vec![step(0, 30_000, 0), step(30_000, 2_000, 1)];
    let cases: Vec<Case> = vec![
        (
            "hits.jsonl",
            {
                let mut v = warm();
                v.push(step(32_000, 2_000, 2));
                v
            },
            None,
            None,
        ),
        // a pause of 7 minutes: the 5-minute entries expired
        (
            "ttl.jsonl",
            {
                let mut v = warm();
                v.push(step(0, 34_000, 7));
                v
            },
            None,
            Some(Cause::Ttl),
        ),
        // a compaction: the prefix is new from the summary on
        (
            "compaction.jsonl",
            {
                let mut v = warm();
                let mut s = step(30_000, 1_500, 2);
                s.compact_before = true;
                v.push(s);
                v
            },
            None,
            Some(Cause::Compaction),
        ),
        // an edit before the third prompt: the previous request in time was on the abandoned branch
        (
            "branch.jsonl",
            {
                let mut v = warm();
                v.push(step(30_000, 4_000, 2));
                v
            },
            Some(2),
            Some(Cause::Branch),
        ),
        // another model: its cache is its own
        (
            "model.jsonl",
            {
                let mut v = warm();
                let mut s = step(0, 34_000, 1);
                s.model = "claude-opus-4-5";
                v.push(s);
                v
            },
            None,
            Some(Cause::Model),
        ),
        // the read stops inside the system prompt and tools: they changed
        (
            "overhead.jsonl",
            {
                let mut v = warm();
                v.push(step(12_000, 22_000, 1));
                v
            },
            None,
            Some(Cause::Overhead),
        ),
        // the read stops after the overhead, with no reason on the path
        (
            "unknown.jsonl",
            {
                let mut v = warm();
                v.push(step(30_500, 3_500, 1));
                v
            },
            None,
            Some(Cause::Unknown),
        ),
    ];
    for (name, steps, edit, want) in cases {
        let f = session(dir.path(), name, &steps, edit);
        let mut s = Store::open_in_memory().unwrap();
        let c = import(&mut s, &f)[0].clone();
        let r = cache(&mut s, &c);
        assert_eq!(r.replies.len(), 3, "{name}: {:?}", r.replies);
        assert_eq!(
            causes(&r),
            vec![None, None, want],
            "{name}: {:?}",
            r.replies
        );
        let last = &r.replies[2];
        assert_eq!(last.hit, want.is_none(), "{name}");
        let (cost, if_hit) = (last.cost.unwrap(), last.cost_if_hit.unwrap());
        match want {
            None => assert_eq!(cost, if_hit),
            Some(cause) => {
                // a miss re-wrote what a hit would have read: it cost more, and the loss is booked to its cause
                assert!(cost > if_hit, "{name}: {cost} vs {if_hit}");
                let lost = r.totals.by_cause[cause.name()];
                assert!((lost - (cost - if_hit)).abs() < 1e-12, "{name}");
                assert!((r.totals.lost.unwrap() - lost).abs() < 1e-12);
                assert_eq!(r.totals.misses, 1);
            }
        }
        let sum: f64 = r.replies.iter().filter_map(|x| x.cost).sum();
        assert!((r.totals.cost.unwrap() - sum).abs() < 1e-12);
        // the timeline reads its path's usage and branch points from the path it loaded, not from `cache`'s
        // queries: each reply shows the same miss, cause and loss
        let Outcome::Timeline(t) = run(
            &mut s,
            Action::Timeline {
                conversation: c.clone(),
                model: None,
            },
        ) else {
            panic!()
        };
        let shown: Vec<_> = t
            .points
            .iter()
            .map(|p| (p.message.clone(), p.cache_miss, p.cache_lost))
            .collect();
        let reported: Vec<_> = r
            .replies
            .iter()
            .map(|x| {
                let lost = x.cause.and(x.cost.zip(x.cost_if_hit).map(|(a, b)| a - b));
                (x.message.clone(), x.cause, lost)
            })
            .collect();
        assert_eq!(shown, reported, "{name}");
    }
}

#[test]
fn the_json_keeps_the_names_scripts_rely_on() {
    let dir = tempfile::tempdir().unwrap();
    let f = session(
        dir.path(),
        "ttl.jsonl",
        &[step(0, 30_000, 0), step(0, 30_500, 9)],
        None,
    );
    let db = dir.path().join("c.db");
    let cairn = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    cairn(&["import", f.to_str().unwrap()]);
    let list: Value = serde_json::from_slice(&cairn(&["list", "--json"])).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let v: Value = serde_json::from_slice(&cairn(&["cache", &id, "--json"])).unwrap();
    let r = &v["replies"][1];
    for k in [
        "message",
        "time",
        "model",
        "input",
        "output",
        "cache_read",
        "cache_write_5m",
        "cache_write_1h",
        "hit",
        "cause",
        "cost",
        "cost_if_hit",
    ] {
        assert!(r.get(k).is_some(), "{k} missing: {r}");
    }
    assert_eq!(r["hit"], false);
    assert_eq!(r["cause"], "ttl");
    assert_eq!(v["replies"][0]["cause"], Value::Null);
    assert!(r["time"].as_str().unwrap().ends_with('Z'));
    for k in ["cost", "lost", "by_cause"] {
        assert!(v["totals"].get(k).is_some(), "{k} missing");
    }
    assert!(v["totals"]["by_cause"]["ttl"].as_f64().unwrap() > 0.0);
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples")
}

#[test]
fn on_real_sessions_costs_add_up_and_pauses_and_compactions_are_named() {
    let mut files: Vec<PathBuf> = Vec::new();
    for d in ["claude-code", "pi", "codex"] {
        let mut stack = vec![samples().join(d)];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() && p.file_name().is_some_and(|n| n != "subagents") {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "jsonl") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let (mut misses, mut ttl, mut compaction) = (0, 0, 0);
    for f in &files {
        let mut s = Store::open_in_memory().unwrap();
        let convs = import(&mut s, f);
        let Outcome::Stats(st) = run(
            &mut s,
            Action::Stats {
                by: By::Conversation,
                since: None,
            },
        ) else {
            panic!()
        };
        for c in &convs {
            let r = cache(&mut s, c);
            let listed = st
                .rows
                .iter()
                .find(|row| row.key == *c)
                .and_then(|row| row.cost_usd);
            // a conversation with one branch: its path's replies are all its replies, priced as stats prices them
            if s.conversation(c).unwrap().messages as usize == s.active_path(c).unwrap().len() {
                match (r.totals.cost, listed) {
                    (Some(a), Some(b)) => {
                        assert!((a - b).abs() < 0.005, "{}: {a} vs {b}", f.display())
                    }
                    (a, b) => assert_eq!(a.is_some(), b.is_some(), "{}", f.display()),
                }
            }
            let heads = s.active_path_heads(c).unwrap();
            let ids: Vec<&str> = heads.iter().map(|h| h.id.as_str()).collect();
            let mut prev: Option<usize> = None;
            for x in &r.replies {
                let at = ids.iter().position(|i| *i == x.message).unwrap();
                if !x.hit {
                    misses += 1;
                    let ttl_ms = if r.replies.iter().any(|y| y.cache_write_1h > 0) {
                        3_600_000
                    } else {
                        300_000
                    };
                    if x.gap_ms.unwrap() > ttl_ms && r.replies.iter().all(|y| y.cache_write_1h == 0)
                    {
                        assert_eq!(x.cause, Some(Cause::Ttl), "{}: {x:?}", f.display());
                        ttl += 1;
                    } else if let Some(p) = prev
                        && heads[p + 1..=at].iter().any(|h| h.is_compaction())
                        && x.gap_ms.unwrap() <= 300_000
                    {
                        assert_eq!(x.cause, Some(Cause::Compaction), "{}: {x:?}", f.display());
                        compaction += 1;
                    }
                }
                if x.requests.is_none()
                    && x.input + x.cache_read + x.cache_write_5m + x.cache_write_1h > 0
                {
                    prev = Some(at);
                }
            }
        }
    }
    assert!(
        misses > 0 && ttl > 0 && compaction > 0,
        "{misses} {ttl} {compaction}"
    );
}

#[test]
fn stats_with_the_cache_books_each_miss_to_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open_in_memory().unwrap();
    let ttl = import(
        &mut s,
        &session(
            dir.path(),
            "ttl.jsonl",
            &[step(0, 30_000, 0), step(0, 30_500, 9)],
            None,
        ),
    )[0]
    .clone();
    let hits = import(
        &mut s,
        &session(
            dir.path(),
            "hits.jsonl",
            &[step(0, 20_000, 0), step(20_000, 500, 1)],
            None,
        ),
    )[0]
    .clone();
    let want = cache(&mut s, &ttl).totals.lost.unwrap();
    assert!(want > 0.0);
    for by in [By::Conversation, By::Model, By::Day] {
        let Outcome::Stats(st) = run(&mut s, Action::CacheStats { by, since: None }) else {
            panic!()
        };
        let lost: f64 = st.rows.iter().filter_map(|r| r.cache_lost_usd).sum();
        assert!((lost - want).abs() < 1e-12, "{by:?}: {lost} vs {want}");
        let ttl_lost: f64 = st
            .rows
            .iter()
            .filter_map(|r| r.cache_lost_by_cause.as_ref()?.get("ttl"))
            .sum();
        assert!((ttl_lost - want).abs() < 1e-12);
        if by == By::Conversation {
            let row = |id: &str| st.rows.iter().find(|r| r.key == id).unwrap();
            assert_eq!(row(&ttl).cache_misses, Some(1));
            assert_eq!(row(&hits).cache_misses, Some(0));
        }
    }
    // without asking, stats reads no path
    let Outcome::Stats(st) = run(
        &mut s,
        Action::Stats {
            by: By::Conversation,
            since: None,
        },
    ) else {
        panic!()
    };
    assert!(st.rows.iter().all(|r| r.cache_lost_usd.is_none()));
}

#[test]
fn exports_show_each_reply_cost_and_each_miss_on_the_reply_it_hit() {
    use cairn::export::{ExportFormat, Options};
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open_in_memory().unwrap();
    let c = import(
        &mut s,
        &session(
            dir.path(),
            "ttl.jsonl",
            &[step(0, 30_000, 0), step(0, 30_500, 9)],
            None,
        ),
    )[0]
    .clone();
    let r = cache(&mut s, &c);
    let miss = &r.replies[1];
    let html = cairn::export::export(&s, &c, None, ExportFormat::Html, Options::default())
        .unwrap()
        .text;
    let at = html.find(&format!("id=\"msg-{}\"", miss.message)).unwrap();
    let article = &html[at..at + html[at..].find("</article>").unwrap()];
    assert!(article.contains("cache miss: ttl"), "{article}");
    assert!(article.contains(&format!("${:.4}", miss.cost.unwrap())));
    assert!(
        html.contains("cache hit 0.0%, 1 miss ("),
        "the header says the session's cache"
    );
    assert!(html.contains(&format!("${:.2}", r.totals.cost.unwrap())));
    let md = cairn::export::export(&s, &c, None, ExportFormat::Markdown, Options::default())
        .unwrap()
        .text;
    assert!(md.contains("cache miss (ttl)"), "{md}");
}
