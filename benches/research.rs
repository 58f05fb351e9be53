//! Research at scale (a bench binary that prints figures; `scripts/bench research`): a store shaped like a heavy
//! user's (by default 2,000 conversations and 1,000,000 messages, about 1 GB of text: prose, code, logs and tool
//! output, with branches, tool errors and usage), then:
//!
//! - import time, store size and full-text index size
//! - search p50/p95 for a rare word, a common word, a phrase and a prefix: goal <= 50 ms p95
//! - `stats --by day` and `--by tool`: goal <= 300 ms
//! - the context-over-time data of a 100k-message session: goal <= 100 ms
//! - the secret scan every export, `show` and `send` runs, over 3 MB of session text: goal >= 3 MB/s
//! - with `CAIRN_BENCH_BACKFILL=1`, the v7 migration (large results' characters) and the v5 migration (indexing a
//!   store written before the index)
//!
//! `CAIRN_BENCH_CONVERSATIONS` and `CAIRN_BENCH_MESSAGES` scale it down for a quick look; `CAIRN_BENCH_KEEP=1`
//! keeps the store, `CAIRN_BENCH_STORE=PATH` measures a kept one, `CAIRN_BENCH_ONLY=search|stats|timeline` times
//! that part alone.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

// The allocator the cairn binary runs with (`src/main.rs`): the figures are the shipped program's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn::commands::{Action, Outcome, Quiet, run};
use cairn::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use cairn::store::{By, ImportedMessage, SearchQuery, Store};
use serde_json::{Value, json};

/// xorshift64*: deterministic text without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "the",
    "parser",
    "config",
    "configuration",
    "error",
    "request",
    "response",
    "cache",
    "token",
    "session",
    "module",
    "function",
    "returns",
    "value",
    "test",
    "fails",
    "because",
    "timeout",
    "connection",
    "refused",
    "buffer",
    "queue",
    "worker",
    "thread",
    "lock",
    "retry",
    "backoff",
    "schema",
    "migration",
    "index",
    "query",
    "latency",
    "throughput",
    "allocation",
    "struct",
    "field",
    "option",
    "result",
    "handler",
    "route",
    "client",
    "server",
    "deploy",
    "cluster",
    "pod",
    "container",
    "image",
    "build",
    "release",
    "branch",
    "commit",
    "merge",
    "diff",
    "patch",
    "review",
    "comment",
    "issue",
    "fix",
    "regression",
    "benchmark",
    "profile",
    "trace",
    "span",
    "metric",
    "log",
    "warning",
    "panic",
    "unwrap",
    "borrow",
    "lifetime",
    "trait",
    "generic",
    "macro",
    "crate",
    "dependency",
    "version",
    "feature",
    "flag",
    "setting",
    "default",
    "path",
    "file",
    "directory",
    "read",
    "write",
    "open",
    "close",
    "parse",
    "serialize",
    "deserialize",
    "encode",
    "decode",
    "hash",
    "key",
    "secret",
];

fn sentence(r: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for k in 0..words {
        if k > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[r.below(WORDS.len())]);
        if r.below(40) == 0 {
            s.push_str(&format!(" v{}.{}", r.below(9), r.below(30)));
        }
    }
    s.push('.');
    s
}

fn code(r: &mut Rng, lines: usize) -> String {
    (0..lines)
        .map(|k| {
            format!(
                "{:>4}  fn {}_{}(&self, {}: u32) -> Result<{}, Error> {{ self.{}.{}({}) }}\n",
                k + 1,
                WORDS[r.below(WORDS.len())],
                WORDS[r.below(WORDS.len())],
                WORDS[r.below(WORDS.len())],
                WORDS[r.below(WORDS.len())],
                WORDS[r.below(WORDS.len())],
                WORDS[r.below(WORDS.len())],
                r.below(1000)
            )
        })
        .collect()
}

fn logs(r: &mut Rng, lines: usize) -> String {
    (0..lines)
        .map(|_| {
            format!(
                "2026-11-{:02}T{:02}:{:02}:{:02}Z {} {}: {} value={} shard={}\n",
                1 + r.below(28),
                r.below(24),
                r.below(60),
                r.below(60),
                ["INFO", "WARN", "ERROR", "DEBUG"][r.below(4)],
                WORDS[r.below(WORDS.len())],
                sentence(r, 6),
                r.below(100_000),
                r.below(16)
            )
        })
        .collect()
}

/// One conversation of `n` messages: prompts, replies with tool calls (some failing), results of code or logs,
/// usage on replies, a side branch every so often. The rare word appears in conversation 7 only.
fn conversation(r: &mut Rng, c: usize, n: usize, t0: i64) -> Vec<ImportedMessage> {
    let mut out: Vec<ImportedMessage> = Vec::with_capacity(n);
    let mut k = 0;
    let mut context = 4_000u64;
    while out.len() + 4 <= n {
        let parent = out.len().checked_sub(1);
        // a branch: the prompt hangs off an earlier reply now and then
        let branch_from = if out.len() > 40 && r.below(25) == 0 {
            Some(out.len() - 1 - 4 * (1 + r.below(5)))
        } else {
            parent
        };
        let at = |i: usize| t0 + (c as i64) * 3_600_000 + (i as i64) * 20_000;
        let mut prompt = NewMessage::text(
            Role::User,
            format!(
                "step {k}: {} {}",
                sentence(r, 12),
                if c == 7 && k == 3 { "zyxqwvrare" } else { "" }
            ),
        );
        prompt.created_at = Some(at(out.len()));
        out.push(ImportedMessage {
            parent: branch_from,
            message: prompt,
        });
        let id = format!("toolu_{c}_{k}");
        let tool = ["Read", "Bash", "Grep", "Edit"][r.below(4)];
        let mut call = NewMessage::new(
            Role::Assistant,
            vec![
                Block::text(sentence(r, 25)),
                Block::ToolUse {
                    id: id.clone(),
                    name: tool.into(),
                    input: json!({"file_path": format!("src/{}.rs", WORDS[r.below(WORDS.len())]), "command": sentence(r, 4)}),
                },
            ],
        );
        context += 900;
        call.usage = Some(Usage {
            input_tokens: 10,
            output_tokens: 80 + r.below(200) as u64,
            cache_read_input_tokens: context,
            cache_creation_input_tokens: 700,
            ..Usage::default()
        });
        call.meta = json!({"model": (["claude-sonnet-4-5", "claude-opus-4-5"][c % 2])});
        call.created_at = Some(at(out.len()));
        out.push(ImportedMessage {
            parent: Some(out.len() - 1),
            message: call,
        });
        let failed = r.below(12) == 0;
        let body = if failed {
            format!(
                "error: connection refused while {}\n{}",
                sentence(r, 8),
                logs(r, 3)
            )
        } else if r.below(2) == 0 {
            let n = 15 + r.below(40);
            code(r, n)
        } else {
            let n = 10 + r.below(25);
            logs(r, n)
        };
        let mut res = NewMessage::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: id,
                content: ToolResultContent::Text(body),
                is_error: failed,
            }],
        );
        res.created_at = Some(at(out.len()));
        out.push(ImportedMessage {
            parent: Some(out.len() - 1),
            message: res,
        });
        let mut reply = NewMessage::text(
            Role::Assistant,
            format!("{} {}", sentence(r, 30), sentence(r, 20)),
        );
        context += 300;
        reply.usage = Some(Usage {
            input_tokens: 10,
            output_tokens: 120 + r.below(300) as u64,
            cache_read_input_tokens: context,
            cache_creation_input_tokens: 400,
            ..Usage::default()
        });
        reply.meta = json!({"model": (["claude-sonnet-4-5", "claude-opus-4-5"][c % 2])});
        reply.created_at = Some(at(out.len()));
        out.push(ImportedMessage {
            parent: Some(out.len() - 1),
            message: reply,
        });
        k += 1;
    }
    out
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let conversations = env("CAIRN_BENCH_CONVERSATIONS", 2_000);
    let messages = env("CAIRN_BENCH_MESSAGES", 1_000_000);
    let per = (messages / conversations).max(8);
    let base = std::env::var_os("CAIRN_BENCH_DIR").map(std::path::PathBuf::from);
    let dir = match base {
        Some(b) => tempfile::tempdir_in(b).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let path = dir.path().join("research.db");
    println!(
        "cairn research benchmarks: {conversations} conversations x {per} messages (store in {})",
        dir.path().display()
    );
    let mut r = Rng(0x5eed_1234_abcd_0001);
    let t0 = 1_780_000_000_000i64;
    let started = Instant::now();
    let mut text_bytes = 0usize;
    let existing = std::env::var_os("CAIRN_BENCH_STORE").is_some();
    if !existing {
        let mut s = Store::open(&path).unwrap();
        for c in 0..conversations {
            let msgs = conversation(&mut r, c, per, t0);
            text_bytes += msgs
                .iter()
                .map(|m| cairn::model::plain_text(&m.message.content).len())
                .sum::<usize>();
            s.import_conversation(
                Some(&format!("session {c}")),
                &msgs,
                None,
                &[],
                &Value::Null,
            )
            .unwrap();
            if c % 200 == 199 {
                println!(
                    "  {} conversations written, {:.0} s",
                    c + 1,
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
    let took = started.elapsed();
    // CAIRN_BENCH_STORE: measure an existing store (from an earlier run with CAIRN_BENCH_KEEP) instead
    let path = std::env::var_os("CAIRN_BENCH_STORE").map_or(path, std::path::PathBuf::from);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let index: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT coalesce(sum(length(block)), 0) FROM search_data",
            [],
            |r| r.get(0),
        )
        .unwrap();
    println!(
        "import: {} messages ({:.0} MB of text) in {:.1} s ({:.0} messages/s, index written with each); store {:.0} MB, full-text index {:.0} MB",
        conversations * per,
        text_bytes as f64 / 1e6,
        took.as_secs_f64(),
        (conversations * per) as f64 / took.as_secs_f64(),
        size as f64 / 1e6,
        index as f64 / 1e6
    );

    let mut s = Store::open(&path).unwrap();
    let settings = cairn::reclaim::Settings::default();
    let cancel = AtomicBool::new(false);
    // CAIRN_BENCH_ONLY=search|stats|timeline: that part alone
    let only = std::env::var("CAIRN_BENCH_ONLY").ok();
    let wants = |part: &str| only.as_deref().is_none_or(|o| o == part);
    for (label, q) in [
        ("a rare word", "zyxqwvrare"),
        ("a common word", "connection"),
        ("a phrase", "\"connection refused\""),
        ("a prefix", "serial*"),
        ("words with AND", "timeout AND cluster"),
    ]
    .into_iter()
    .filter(|_| wants("search"))
    {
        let mut times = Vec::new();
        let mut total = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let o = run(
                &mut s,
                &settings,
                Action::Search(SearchQuery {
                    text: q.into(),
                    limit: 20,
                    ..Default::default()
                }),
                &Quiet,
                &cancel,
            )
            .unwrap();
            times.push(t.elapsed());
            if let Outcome::Searched(res) = o {
                total = res.total;
            }
        }
        println!(
            "search {label} ({q}): {total} matching messages; p50 {}, p95 {}   [goal p95 <= 50 ms]",
            ms(pct(&mut times, 0.5)),
            ms(pct(&mut times, 0.95))
        );
    }
    for by in [By::Day, By::Tool, By::Model]
        .into_iter()
        .filter(|_| wants("stats"))
    {
        let mut times = Vec::new();
        let mut rows = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let o = run(
                &mut s,
                &settings,
                Action::Stats { by, since: None },
                &Quiet,
                &cancel,
            )
            .unwrap();
            times.push(t.elapsed());
            if let Outcome::Stats(st) = o {
                rows = st.rows.len();
            }
        }
        println!(
            "stats --by {}: {rows} rows; median {}   [goal <= 300 ms]",
            by.name(),
            ms(pct(&mut times, 0.5))
        );
    }
    // a 100k-message session's context over time
    let big = if existing {
        s.conversations().unwrap().last().unwrap().id.clone()
    } else {
        let msgs = conversation(&mut r, conversations + 1, 100_000, t0);
        s.import_conversation(Some("long"), &msgs, None, &[], &Value::Null)
            .unwrap()
            .0
    };
    let mut times = Vec::new();
    let mut points = 0;
    for _ in 0..9 {
        let t = Instant::now();
        let o = run(
            &mut s,
            &settings,
            Action::Timeline {
                conversation: big.clone(),
                model: None,
            },
            &Quiet,
            &cancel,
        )
        .unwrap();
        times.push(t.elapsed());
        if let Outcome::Timeline(tl) = o {
            points = tl.points.len();
        }
    }
    println!(
        "context over time of a 100k-message session: {points} points; median {}   [goal <= 100 ms]",
        ms(pct(&mut times, 0.5))
    );
    // what every export, `show` and `send` pays: the secret scan of a session's text (prose, code and logs, some of
    // it beyond ASCII)
    let mut text = String::new();
    while text.len() < 3 << 20 {
        text.push_str(&sentence(&mut r, 40));
        text.push_str(" déjà vu, naïve café\n");
        text.push_str(&code(&mut r, 20));
        text.push_str(&logs(&mut r, 20));
    }
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        std::hint::black_box(cairn::redact::text(&text));
        times.push(t.elapsed());
    }
    let mb = text.len() as f64 / f64::from(1 << 20);
    let median = pct(&mut times, 0.5);
    println!(
        "secret scan of {mb:.1} MB of session text: median {} ({:.1} MB/s)   [goal >= 3 MB/s]",
        ms(median),
        mb / median.as_secs_f64()
    );
    if std::env::var_os("CAIRN_BENCH_KEEP").is_some() {
        println!("kept {}", dir.keep().display());
        return;
    }
    if std::env::var_os("CAIRN_BENCH_BACKFILL").is_some() {
        drop(s);
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "ALTER TABLE measures DROP COLUMN large_result_chars; PRAGMA user_version = 6;",
        )
        .unwrap();
        drop(c);
        let t = Instant::now();
        drop(Store::open(&path).unwrap());
        println!(
            "backfill (the v7 migration: large results' characters, read from their bodies): {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "DROP TABLE search; DROP TABLE tool_calls; DROP INDEX messages_by_body; DROP INDEX measures_by_time; DROP TABLE usage_days;
             ALTER TABLE measures DROP COLUMN flags; ALTER TABLE measures DROP COLUMN compaction;
             ALTER TABLE measures DROP COLUMN copy; ALTER TABLE conversations DROP COLUMN project;
             PRAGMA user_version = 4;",
        )
        .unwrap();
        drop(c);
        let t = Instant::now();
        drop(Store::open(&path).unwrap());
        println!(
            "backfill (the v5 migration indexing the whole store): {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
}
