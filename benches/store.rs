//! Store benchmarks (a bench binary that prints figures; run with `scripts/bench`, or
//! `cargo bench --no-default-features --bench store`).
//!
//! - append one turn durably (synchronous=FULL): target median <= 2 ms
//! - open a 100k-message conversation and load its active path: target <= 50 ms, and the ratio against parsing
//!   an equivalent JSONL file with serde_json (what JSONL-based harnesses do at load)
//! - fork a 10k-message path: target <= 100 ms
//! - a fork of a 10k-message path exported as a Claude Code, pi and Codex session: target <= 1 s each
//! - /context and the comparison of strategies on a 100k-message conversation: targets <= 150 ms and <= 1 s, peak
//!   memory <= 200 MB

#[path = "support/messages.rs"]
mod messages;

use std::io::Write;
use std::time::{Duration, Instant};

// The allocator the cairn binary runs with (`src/main.rs`): the figures, time and memory, are the shipped program's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn::model::{NewMessage, Role};
use cairn::store::{ImportedMessage, Store};
use serde_json::{Value, json};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p) as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// A chain of `n` generated messages.
fn chain(n: usize) -> Vec<ImportedMessage> {
    (0..n)
        .map(|k| ImportedMessage {
            parent: k.checked_sub(1),
            message: messages::message(k),
        })
        .collect()
}

/// `n` messages whose every reply carries its usage, as Claude Code records it (a cache miss every 50 replies; the
/// prompt grows 400 tokens a reply and falls back to 20k near the window, as a compacted session's does).
fn measured_chain(n: usize) -> Vec<ImportedMessage> {
    let mut msgs = chain(n);
    let mut prompt = 20_000u64;
    for (k, m) in msgs.iter_mut().enumerate() {
        m.message.created_at = Some(1_790_000_000_000 + k as i64 * 20_000);
        if m.message.role == Role::Assistant {
            let miss = k % 100 == 1;
            m.message.meta = serde_json::json!({"model": "claude-sonnet-4-5"});
            m.message.usage = Some(cairn::model::Usage {
                input_tokens: 3,
                output_tokens: 200,
                cache_read_input_tokens: if miss { 0 } else { prompt },
                cache_creation_input_tokens: if miss { prompt + 400 } else { 400 },
                ..Default::default()
            });
            prompt = if prompt > 180_000 {
                20_000
            } else {
                prompt + 400
            };
        }
    }
    msgs
}

/// A store at `path` holding `msgs` as one conversation, "big"; its id.
fn stored(path: &std::path::Path, msgs: &[ImportedMessage]) -> String {
    let mut s = Store::open(path).unwrap();
    s.import_conversation(Some("big"), msgs, None, &[], &Value::Null)
        .unwrap()
        .0
}

fn bench_append(dir: &std::path::Path) {
    let mut s = Store::open(dir.join("append.db")).unwrap();
    let c = s.create_conversation(None).unwrap();
    let mut times = Vec::new();
    for k in 0..300u64 {
        let turn = cairn::cli::generated_turn(k);
        let t = Instant::now();
        s.append_turn(&c, &turn).unwrap();
        times.push(t.elapsed());
    }
    let two: Vec<NewMessage> = vec![
        NewMessage::text(Role::User, "hello"),
        NewMessage::text(Role::Assistant, "hi"),
    ];
    let mut small = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        s.append_turn(&c, &two).unwrap();
        small.push(t.elapsed());
    }
    println!(
        "append turn (4 messages, parallel tool calls, durable): median {}, p95 {}   [target median <= 2 ms]",
        ms(median(times.clone())),
        ms(pct(times, 0.95))
    );
    println!(
        "append turn (2 messages, durable):                      median {}, p95 {}",
        ms(median(small.clone())),
        ms(pct(small, 0.95))
    );
}

fn bench_load(dir: &std::path::Path) {
    const N: usize = 100_000;
    let path = dir.join("load.db");
    let msgs = chain(N);
    let conv = {
        let mut s = Store::open(&path).unwrap();
        let t = Instant::now();
        let (c, _) = s
            .import_conversation(Some("big"), &msgs, None, &[], &Value::Null)
            .unwrap();
        println!(
            "build: import {N} messages in one transaction: {}",
            ms(t.elapsed())
        );
        c
    };
    // The same conversation as JSONL, one wire message per line with tree ids, like a harness's transcript.
    let jsonl = dir.join("load.jsonl");
    {
        let s = Store::open(&path).unwrap();
        let p = s.active_path(&conv).unwrap();
        let mut f = std::io::BufWriter::new(std::fs::File::create(&jsonl).unwrap());
        for m in &p {
            let mut w = s.to_wire(m).unwrap();
            w["uuid"] = json!(m.id);
            w["parentUuid"] = json!(m.parent);
            w["timestamp"] = json!(m.created_at);
            writeln!(f, "{w}").unwrap();
        }
    }
    let mut load = Vec::new();
    let mut full = Vec::new();
    let mut parse = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let s = Store::open(&path).unwrap();
        let heads = s.active_path_heads(&conv).unwrap();
        // what a viewer shows first: the newest screenful, with content
        let shown = s.load(&conv, &heads[heads.len() - 50..]).unwrap();
        load.push(t.elapsed());
        assert_eq!(heads.len(), N);
        assert_eq!(shown.len(), 50);

        let t = Instant::now();
        let s = Store::open(&path).unwrap();
        let p = s.active_path(&conv).unwrap();
        full.push(t.elapsed());
        assert_eq!(p.len(), N);

        let t = Instant::now();
        let text = std::fs::read_to_string(&jsonl).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        parse.push(t.elapsed());
        assert_eq!(lines.len(), N);
    }
    let mut parts = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..7 {
        let t = Instant::now();
        let s = Store::open(&path).unwrap();
        parts.0.push(t.elapsed());
        let t = Instant::now();
        let heads = s.active_path_heads(&conv).unwrap();
        parts.1.push(t.elapsed());
        let t = Instant::now();
        s.load(&conv, &heads[heads.len() - 50..]).unwrap();
        parts.2.push(t.elapsed());
    }
    println!(
        "  of which: open {}, path heads {}, newest 50 bodies {}",
        ms(median(parts.0)),
        ms(median(parts.1)),
        ms(median(parts.2))
    );
    let (l, f, j) = (median(load), median(full), median(parse));
    let size = std::fs::metadata(&jsonl).unwrap().len();
    println!(
        "open store + load 100k-message active path (heads of all, content of the newest 50): median {}   [target <= 50 ms]",
        ms(l)
    );
    println!(
        "open store + load 100k-message active path with every body decoded: median {}",
        ms(f)
    );
    println!(
        "parse the same path as JSONL ({:.1} MB) with serde_json: median {}   ratio store/JSONL = {:.3} (path), {:.2} (every body)",
        size as f64 / 1e6,
        ms(j),
        l.as_secs_f64() / j.as_secs_f64(),
        f.as_secs_f64() / j.as_secs_f64()
    );
}

fn bench_fork(dir: &std::path::Path) {
    const N: usize = 10_000;
    let mut s = Store::open(dir.join("fork.db")).unwrap();
    let (c, _) = s
        .import_conversation(None, &chain(N), None, &[], &Value::Null)
        .unwrap();
    let mut times = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        let f = s.fork(&c, None).unwrap();
        times.push(t.elapsed());
        assert_eq!(s.conversation(&f).unwrap().messages, N as u64);
    }
    println!(
        "fork a 10k-message path: median {}   [target <= 100 ms]",
        ms(median(times))
    );
}

/// A fork of a 10k-message path written as each harness's session (`cairn export --format claude-code|pi|codex`).
fn bench_agent(dir: &std::path::Path) {
    use cairn::export::agent::{self, Harness};
    const N: usize = 10_000;
    let mut s = Store::open(dir.join("agent.db")).unwrap();
    let (c, _) = s
        .import_conversation(None, &chain(N), None, &[], &Value::Null)
        .unwrap();
    let f = s.fork(&c, None).unwrap();
    for h in Harness::ALL {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let out = agent::write(&s, &f, None, h, true, Some("/work/project")).unwrap();
            times.push(t.elapsed());
            bytes = out.text.len();
        }
        println!(
            "export a fork of a 10k-message path as {}: median {} ({:.1} MB)   [target <= 1 s]",
            h.name(),
            ms(median(times)),
            bytes as f64 / 1e6
        );
    }
}

/// A 100k-message conversation exported as one HTML page: target <= 3 s and <= 250 MB.
fn bench_html(dir: &std::path::Path) {
    use cairn::export::{ExportFormat, Options};
    const N: usize = 100_000;
    let mut s = Store::open(dir.join("html.db")).unwrap();
    let (c, _) = s
        .import_conversation(None, &chain(N), None, &[], &Value::Null)
        .unwrap();
    let out = dir.join("page.html");
    reset_peak();
    let base = peak_mb().unwrap_or(0.0);
    let t = Instant::now();
    // streamed into the file, as `cairn export --format html --out` writes it
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&out).unwrap());
    cairn::export::export_to(
        &s,
        &c,
        None,
        ExportFormat::Html,
        Options::default(),
        &Default::default(),
        Some(&mut w),
    )
    .unwrap();
    w.flush().unwrap();
    drop(w);
    let took = t.elapsed();
    let bytes = std::fs::metadata(&out).unwrap().len();
    println!(
        "export a 100k-message conversation as HTML: {} ({:.0} MB page), peak {:.0} MB over {:.0} MB   [targets <= 3 s, <= 250 MB]",
        ms(took),
        bytes as f64 / 1e6,
        peak_mb().unwrap_or(0.0) - base,
        base
    );
}

/// Peak resident memory of this process since the last reset, in MB (Linux: `VmHWM`).
fn peak_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Resets the peak resident memory to the current (Linux: writing 5 to `clear_refs`).
fn reset_peak() {
    if std::fs::write("/proc/self/clear_refs", "5").is_err() {
        eprintln!("(cannot reset the peak memory figure here)");
    }
}

/// `/context` and the comparison of strategies on a 100k-message conversation, through the commands the CLI runs:
/// figures from the stored heads and measures, bodies decoded only where a rung must look.
fn bench_context(dir: &std::path::Path) {
    use cairn::commands::{Action, Outcome, Quiet, run};
    use std::sync::atomic::AtomicBool;
    const N: usize = 100_000;
    let path = dir.join("context.db");
    let conv = stored(&path, &chain(N));
    let settings = cairn::reclaim::Settings::default();
    let cancel = AtomicBool::new(false);
    let measure = |label: &str, target: &str, action: &dyn Fn() -> Action| {
        let mut times = Vec::new();
        let mut peak = 0.0f64;
        for _ in 0..5 {
            reset_peak();
            let before = peak_mb().unwrap_or(0.0);
            let t = Instant::now();
            let mut s = Store::open(&path).unwrap();
            let o = run(&mut s, &settings, action(), &Quiet, &cancel).unwrap();
            times.push(t.elapsed());
            peak = peak.max(peak_mb().unwrap_or(0.0) - before);
            match o {
                Outcome::Context(r) => assert!(r.estimated_total > 1_000_000),
                Outcome::Compared { rows, .. } => {
                    assert_eq!(rows.len(), cairn::reclaim::compare::Candidate::all().len())
                }
                _ => panic!("unexpected outcome"),
            }
        }
        println!(
            "{label}: median {}, peak memory +{peak:.0} MB   [{target}]",
            ms(median(times))
        );
    };
    measure(
        "context of a 100k-message conversation",
        "target <= 150 ms, <= 200 MB",
        &|| Action::Context {
            conversation: conv.clone(),
            model: None,
        },
    );
    measure(
        "compare --budget 20000 on a 100k-message conversation",
        "target <= 1 s, <= 200 MB",
        &|| Action::Compare {
            conversation: conv.clone(),
            budget: Some(20_000),
            profile: None,
        },
    );
}

/// `/context` and compare on a 100k-message conversation of a model whose tokenizer is public (OpenAI's o200k): the
/// first run counts every message with it and keeps the counts, later runs read them back.
fn bench_context_o200k(dir: &std::path::Path) {
    const N: usize = 100_000;
    let mut msgs = chain(N);
    for m in msgs.iter_mut() {
        if m.message.role == Role::Assistant {
            m.message.meta = serde_json::json!({"model": "gpt-5"});
        }
    }
    bench_context_counted(&dir.join("context-o200k.db"), "gpt-5", &msgs);
}

/// `/context` and compare on a 100k-message Claude conversation whose every reply carries what Anthropic measured,
/// in a store never calibrated: the first run counts the path by o200k too, to choose the tokenizer its
/// measurements are explained best by, and keeps the counts.
fn bench_context_measured(dir: &std::path::Path) {
    bench_context_counted(
        &dir.join("context-measured.db"),
        "measured claude-sonnet-4-5",
        &measured_chain(100_000),
    );
}

/// The first `/context` (counting by a public tokenizer), the later ones (the counts kept), and compare, on `msgs`.
fn bench_context_counted(path: &std::path::Path, what: &str, msgs: &[ImportedMessage]) {
    use cairn::commands::{Action, Outcome, Quiet, run};
    use std::sync::atomic::AtomicBool;
    let path = path.to_path_buf();
    let conv = stored(&path, msgs);
    let settings = cairn::reclaim::Settings::default();
    let cancel = AtomicBool::new(false);
    let context = || Action::Context {
        conversation: conv.clone(),
        model: None,
    };
    let once = |action: Action| {
        reset_peak();
        let before = peak_mb().unwrap_or(0.0);
        let t = Instant::now();
        let mut s = Store::open(&path).unwrap();
        let o = run(&mut s, &settings, action, &Quiet, &cancel).unwrap();
        let took = t.elapsed();
        match o {
            Outcome::Context(r) => assert!(r.estimated_total > 1_000_000),
            Outcome::Compared { rows, .. } => {
                assert_eq!(rows.len(), cairn::reclaim::compare::Candidate::all().len())
            }
            _ => panic!("unexpected outcome"),
        }
        (took, peak_mb().unwrap_or(0.0) - before)
    };
    let (first, first_peak) = once(context());
    println!(
        "context of a 100k-message {what} conversation, first (counted by o200k, kept): {}, peak memory +{first_peak:.0} MB",
        ms(first)
    );
    let mut times = Vec::new();
    let mut peak = 0.0f64;
    for _ in 0..5 {
        let (t, p) = once(context());
        times.push(t);
        peak = peak.max(p);
    }
    println!(
        "context of a 100k-message {what} conversation, counts kept: median {}, peak memory +{peak:.0} MB   [target <= 150 ms, <= 200 MB]",
        ms(median(times))
    );
    let mut times = Vec::new();
    let mut peak = 0.0f64;
    for _ in 0..5 {
        let (t, p) = once(Action::Compare {
            conversation: conv.clone(),
            budget: Some(20_000),
            profile: None,
        });
        times.push(t);
        peak = peak.max(p);
    }
    println!(
        "compare --budget 20000 on a 100k-message {what} conversation, counts kept: median {}, peak memory +{peak:.0} MB   [target <= 1 s, <= 200 MB]",
        ms(median(times))
    );
}

/// `cairn cache` on a 100k-message conversation whose every reply carries its usage (a miss every 50 replies).
fn bench_cache(dir: &std::path::Path) {
    use cairn::commands::{Action, Outcome, Quiet, run};
    use std::sync::atomic::AtomicBool;
    const N: usize = 100_000;
    let path = dir.join("cache.db");
    let msgs = measured_chain(N);
    let conv = stored(&path, &msgs);
    let settings = cairn::reclaim::Settings::default();
    let cancel = AtomicBool::new(false);
    let mut times = Vec::new();
    let mut peak = 0.0f64;
    for _ in 0..5 {
        reset_peak();
        let before = peak_mb().unwrap_or(0.0);
        let t = Instant::now();
        let mut s = Store::open(&path).unwrap();
        let o = run(
            &mut s,
            &settings,
            Action::Cache {
                conversation: conv.clone(),
                at: None,
            },
            &Quiet,
            &cancel,
        )
        .unwrap();
        times.push(t.elapsed());
        peak = peak.max(peak_mb().unwrap_or(0.0) - before);
        match o {
            Outcome::Cache(r) => assert!(r.totals.misses > 100),
            _ => panic!("unexpected outcome"),
        }
    }
    println!(
        "cache of a 100k-message conversation: median {}, peak memory +{peak:.0} MB   [target <= 200 ms]",
        ms(median(times))
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs us with no work to do.
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let base = std::env::var_os("CAIRN_BENCH_DIR").map(std::path::PathBuf::from);
    let dir = match base {
        Some(b) => tempfile::tempdir_in(b).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    println!(
        "cairn store benchmarks (store files in {})",
        dir.path().display()
    );
    let only = std::env::var("CAIRN_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "append" {
        bench_append(dir.path());
    }
    if only.is_empty() || only == "fork" {
        bench_fork(dir.path());
    }
    if only.is_empty() || only == "agent" {
        bench_agent(dir.path());
    }
    if only.is_empty() || only == "load" {
        bench_load(dir.path());
    }
    if only.is_empty() || only == "context" {
        bench_context(dir.path());
    }
    if only.is_empty() || only == "context-o200k" {
        bench_context_o200k(dir.path());
    }
    if only.is_empty() || only == "context-measured" {
        bench_context_measured(dir.path());
    }
    if only.is_empty() || only == "cache" {
        bench_cache(dir.path());
    }
    if only.is_empty() || only == "html" {
        bench_html(dir.path());
    }
    if std::env::var_os("CAIRN_BENCH_KEEP").is_some() {
        let kept = dir.keep();
        println!("kept {}", kept.display());
    }
}
