//! Hostile input, seeded and bounded: mutants of every sample (truncations, byte flips, wrong types, deep nesting,
//! huge lines, invalid UTF-8, NUL, BOM, CRLF, parent cycles, duplicate ids, orphan and unanswered tool calls,
//! non-image base64, an image header claiming 100000x100000 pixels) go through import, every read command and every
//! export. Whatever a mutant is, nothing panics; a refusal names FILE:LINE and writes nothing; an import writes rows
//! that all decode; every provider export is pair-valid and starts with a user message. A harness that keeps a
//! conversation as a folder (OpenHands) is mutated a file at a time, and a refusal names the file at fault.
//!
//! `CAIRN_HOSTILE_CASES` (default 2000) and `CAIRN_HOSTILE_SEED` set the run (`CAIRN_HOSTILE_ONLY=N` reruns case N,
//! its file kept); `scripts/hostile` runs a long one.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::export::{ExportFormat, Options};
use cairn::reclaim::Settings;
use cairn::store::Store;
use serde_json::Value;

/// A small deterministic generator (xorshift64*), so a failing case can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The samples mutated: every format's, the large ones cut to their first lines (a mutant of a 2 MB file costs
/// as much to import as a thousand small ones and finds nothing more).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let files = [
        "claude-code/cc-rewind-fork-2.1.42.jsonl",
        "claude-code/cc-compact-boundary.jsonl",
        "claude-code/cc-2.0.5-image-paste.jsonl",
        "claude-code/cc-1.0.98-inline-sidechains-task-fanout.jsonl",
        "claude-code/cc-2.1.332-rendered-attachments.jsonl",
        "claude-code/coderabbit-review-helper/agent-ea02459f.jsonl",
        "codex/codex-desktop-spawn-agents-0.140.jsonl",
        "codex/codex-compacted-replacement.jsonl",
        "codex/codex-service-tiers-cache-writes.jsonl",
        "pi/pi-v3-compaction-tiny.jsonl",
        "pi/pi-v1-before-compaction-two-compactions.jsonl",
        "small/cc-quirks.jsonl",
        "small/pi-v2-labels.jsonl",
        "small/codex-out-of-order.jsonl",
        "small/anthropic-request.json",
        "small/openai-request.json",
        "trajectories/sweagent-gpt4-test-repo-i1.traj",
        "trajectories/openhands-basic-gui-mode-trajectory.json",
        "mini-swe-agent/mini-2.4-toolcall-format-error-gpt-4.1.traj.json",
        "mini-swe-agent/mini-2.4-responses-api-gpt-5.1.traj.json",
        "small/codex-legacy-rollout.jsonl",
        "small/copilot-cli-small.jsonl",
        "small/gemini-cli-small.json",
        "small/opencode-small.json",
        "small/cline-small.json",
        "small/aider-small.aider.chat.history.md",
        "small/cursor-small.jsonl",
        "small/pi-v4-transactions.jsonl",
        "small/pi-v3-context-edit.jsonl",
        "qwen-code/5f0c2a4e-8d1b-4c7e-9a31-2b6d4e8f1a90.jsonl",
        "kimi-cli/sessions/3f2a9c0e5b7d41e8a6c2d9b0f1e4a7c3/0b6f1d2e-8a4c-4f3b-9e21-7c5d8a9b0e13/context_1.jsonl",
        "amp/T-4b1f7c2e-9a3d-4e8b-b5c6-0d2f8a1e7c94.json",
        "goose/20251205_3.json",
        "zed/thread.json",
    ];
    files
        .iter()
        .filter_map(|f| {
            let bytes = std::fs::read(root.join(f)).ok()?;
            let text = String::from_utf8_lossy(&bytes);
            let cut: String = if text.lines().count() > 60 && f.ends_with(".jsonl") {
                text.lines().take(60).map(|l| format!("{l}\n")).collect()
            } else {
                text.into_owned()
            };
            Some((
                f.rsplit('/').next().unwrap_or(f).to_string(),
                cut.into_bytes(),
            ))
        })
        .collect()
}

/// A one-pixel PNG whose header says it is 100000x100000.
fn lying_png() -> String {
    use base64::Engine as _;
    let mut png = Vec::new();
    {
        let mut e = png::Encoder::new(&mut png, 1, 1);
        e.set_color(png::ColorType::Grayscale);
        let mut w = e.write_header().unwrap();
        w.write_image_data(&[0]).unwrap();
    }
    // IHDR width and height (bytes 16..24)
    png[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    png[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(png)
}

/// Replaces one JSON value inside a line by a value of another type (or a hostile one).
fn wrong_type(v: &mut Value, rng: &mut Rng, lying: &str) {
    let pick = |rng: &mut Rng| -> Value {
        match rng.below(9) {
            0 => Value::Null,
            1 => Value::from(rng.next() as i64),
            2 => Value::from("string"),
            3 => Value::Array(vec![Value::Null, Value::from(1)]),
            4 => serde_json::json!({"type": null}),
            5 => {
                serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "bm90IGFuIGltYWdl"}})
            }
            6 => {
                serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": lying}})
            }
            7 => Value::from("\u{0}nul\u{0}"),
            _ => {
                serde_json::json!({"type": "tool_result", "tool_use_id": "orphan", "content": "x"})
            }
        }
    };
    // walk to a random node, at most a few levels down
    fn walk<'v>(v: &'v mut Value, rng: &mut Rng, depth: usize) -> &'v mut Value {
        if depth == 0 || rng.below(4) == 0 {
            return v;
        }
        let len = match &*v {
            Value::Object(o) => o.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if len == 0 {
            return v;
        }
        let k = rng.below(len);
        match v {
            Value::Object(o) => match o.values_mut().nth(k) {
                Some(n) => walk(n, rng, depth - 1),
                None => unreachable!(),
            },
            Value::Array(a) => walk(&mut a[k], rng, depth - 1),
            _ => unreachable!(),
        }
    }
    let depth = 1 + rng.below(5);
    let target = walk(v, rng, depth);
    *target = pick(rng);
}

/// One mutant of `seed`.
fn mutate(seed: &[u8], rng: &mut Rng, lying: &str) -> (Vec<u8>, &'static str) {
    let text = String::from_utf8_lossy(seed).into_owned();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = rng.below(lines.len());
    let how = rng.below(14);
    let kind = match how {
        0 => {
            let cut = rng.below(seed.len());
            return (seed[..cut].to_vec(), "truncated");
        }
        1 => {
            let mut b = seed.to_vec();
            if !b.is_empty() {
                let k = rng.below(b.len());
                b[k] ^= 1 << rng.below(8);
            }
            return (b, "byte flipped");
        }
        2 => {
            let mut b = seed.to_vec();
            let k = rng.below(b.len());
            b.splice(k..k, [0xff, 0xfe, 0xc3]);
            return (b, "invalid UTF-8");
        }
        3 => {
            let mut b = vec![0xef, 0xbb, 0xbf];
            b.extend_from_slice(seed);
            return (b, "BOM");
        }
        4 => {
            return (text.replace('\n', "\r\n").into_bytes(), "CRLF");
        }
        5 => {
            if let Some(l) = lines.get(at).cloned() {
                lines.insert(at, l);
            }
            "duplicated line"
        }
        6 => {
            if at < lines.len() {
                lines.remove(at);
            }
            "deleted line"
        }
        7 => {
            lines.insert(at, format!("{}1{}", "[".repeat(5000), "]".repeat(5000)));
            "deep nesting"
        }
        8 => {
            lines.insert(
                at,
                format!("{{\"type\":\"user\",\"x\":\"{}\"}}", "a".repeat(2_000_000)),
            );
            "huge line"
        }
        9 => {
            if let Some(l) = lines.get_mut(at) {
                let mut mid = l.len() / 2;
                while !l.is_char_boundary(mid) {
                    mid -= 1;
                }
                l.insert(mid, '\u{0}');
            }
            "NUL"
        }
        10 => {
            // parent links turned into a cycle (Claude Code and pi)
            if let Some(Ok(mut v)) = lines.get(at).map(|l| serde_json::from_str::<Value>(l)) {
                if let Some(u) = v.get("uuid").cloned() {
                    v["parentUuid"] = u;
                }
                if let Some(u) = v.get("id").cloned() {
                    v["parentId"] = u;
                }
                lines[at] = v.to_string();
            }
            "parent cycle"
        }
        11 => {
            // a tool call id changed: an orphan result and an unanswered call
            if let Some(l) = lines.get_mut(at) {
                *l = l
                    .replacen("toolu_", "toolx_", 1)
                    .replacen("call_", "callx_", 1);
            }
            "orphan and unanswered"
        }
        _ => {
            if let Some(Ok(mut v)) = lines.get(at).map(|l| serde_json::from_str::<Value>(l)) {
                wrong_type(&mut v, rng, lying);
                lines[at] = v.to_string();
            }
            "wrong type"
        }
    };
    let mut out = lines.join("\n");
    out.push('\n');
    (out.into_bytes(), kind)
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    imported: usize,
    refused: usize,
    repairs: usize,
    panics: usize,
    undecodable: usize,
    pair_invalid: usize,
    bad_refusals: usize,
    partial: usize,
}

/// Copies the folder `from` to `to`, every file under it; the files copied, in order.
fn copy_tree(from: &Path, to: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    std::fs::create_dir_all(to).unwrap();
    for e in entries {
        let into = to.join(e.file_name().unwrap());
        if e.is_dir() {
            out.extend(copy_tree(&e, &into));
        } else {
            std::fs::copy(&e, &into).unwrap();
            out.push(into);
        }
    }
    out
}

/// Imports `file` into a new store at `db`, a panic caught: the store, the outcome and how many conversations the
/// store holds after it.
fn import_caught(
    db: &Path,
    file: &Path,
) -> std::thread::Result<(Store, cairn::import::FileOutcome, usize)> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut s = Store::open(db).unwrap();
        let o = cairn::import::import_file(&mut s, file, None);
        let convs = s.conversations().unwrap().len();
        (s, o, convs)
    }))
}

fn run(s: &mut Store, a: Action) -> Result<Outcome, commands::CommandError> {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false))
}

/// Every read and export of a conversation; returns (repairs made, pair-invalid provider bodies).
fn read_everything(s: &mut Store, conv: &str) -> Result<(usize, usize), String> {
    let mut repairs = 0;
    let mut invalid = 0;
    for a in [
        Action::Show {
            conversation: conv.into(),
            redact: true,
        },
        Action::Tree {
            conversation: conv.into(),
        },
        Action::Context {
            conversation: conv.into(),
            model: None,
        },
        Action::Compare {
            conversation: conv.into(),
            budget: Some(5_000),
            profile: None,
        },
    ] {
        run(s, a).map_err(|e| e.to_string())?;
    }
    for f in [
        ExportFormat::Jsonl,
        ExportFormat::Markdown,
        ExportFormat::Html,
        ExportFormat::Anthropic,
        ExportFormat::Openai,
    ] {
        let e = cairn::export::export(s, conv, None, f, Options::default())
            .map_err(|e| format!("{f:?}: {e}"))?;
        if f == ExportFormat::Anthropic {
            repairs += e.repairs.total();
            let body: Value = serde_json::from_str(&e.text).map_err(|e| e.to_string())?;
            let msgs: Vec<cairn::model::NewMessage> = body["messages"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| cairn::wire::message_from_wire(m, "m").ok())
                        .collect()
                })
                .unwrap_or_default();
            let starts_with_user = msgs
                .first()
                .is_none_or(|m| m.role == cairn::model::Role::User);
            if cairn::pairs::check(&msgs, false).is_err() || !starts_with_user {
                invalid += 1;
            }
        }
    }
    // back to the agent: each harness's session of the path reads back (a hostile input never writes a file a
    // harness, or cairn, cannot read)
    for h in cairn::export::agent::Harness::ALL {
        let e = cairn::export::export(s, conv, None, ExportFormat::Agent(h), Options::default())
            .map_err(|e| format!("{}: {e}", h.name()))?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let file = dir.path().join("session.jsonl");
        std::fs::write(&file, &e.text).map_err(|e| e.to_string())?;
        let mut back = Store::open_in_memory().map_err(|e| e.to_string())?;
        let o = cairn::import::import_file(&mut back, &file, None);
        // an empty path writes a session with nothing to import
        if let Some(err) = o
            .error
            .filter(|_| !s.active_path(conv).unwrap_or_default().is_empty())
        {
            return Err(format!("{} export does not read back: {err}", h.name()));
        }
    }
    Ok((repairs, invalid))
}

#[test]
fn hostile_mutants_never_panic_never_leave_partial_or_unreadable_rows_and_export_valid_requests() {
    let cases: usize = std::env::var("CAIRN_HOSTILE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let seed: u64 = std::env::var("CAIRN_HOSTILE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x0c41_12a1);
    let seeds = seeds();
    assert_eq!(seeds.len(), 34, "every seed must be there");
    let lying = lying_png();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed | 1);
    let mut t = Tally::default();
    let mut failures: Vec<String> = Vec::new();
    // CAIRN_HOSTILE_ONLY=N runs case N alone (the same mutant: every case's mutation is still drawn), its file kept
    let only: Option<usize> = std::env::var("CAIRN_HOSTILE_ONLY")
        .ok()
        .and_then(|v| v.parse().ok());
    for case in 0..cases {
        let (name, seed_bytes) = &seeds[rng.below(seeds.len())];
        let (bytes, kind) = mutate(seed_bytes, &mut rng, &lying);
        if only.is_some_and(|k| k != case) {
            continue;
        }
        if only.is_some() {
            let kept = std::env::temp_dir().join(format!("cairn-hostile-case-{case}-{name}"));
            std::fs::write(&kept, &bytes).unwrap();
            println!("case {case} ({kind} {name}) kept as {}", kept.display());
        }
        let file: PathBuf = dir.path().join(format!("case-{case}-{name}"));
        std::fs::write(&file, &bytes).unwrap();
        let db = dir.path().join(format!("case-{case}.db"));
        t.cases += 1;
        let started = std::time::Instant::now();
        let Ok((mut s, o, convs)) = import_caught(&db, &file) else {
            t.panics += 1;
            failures.push(format!("case {case} ({kind} {name}): import panicked"));
            continue;
        };
        match &o.error {
            Some(e) => {
                t.refused += 1;
                // FILE:LINE: reason, and nothing written
                let prefix = format!("{}:", file.display());
                let line_ok = e
                    .strip_prefix(&prefix)
                    .and_then(|r| r.split(':').next())
                    .is_some_and(|n| n.parse::<usize>().is_ok());
                if !line_ok {
                    t.bad_refusals += 1;
                    failures.push(format!(
                        "case {case} ({kind} {name}): refusal without FILE:LINE: {e}"
                    ));
                }
                if convs != 0 {
                    t.partial += 1;
                    failures.push(format!(
                        "case {case} ({kind} {name}): refused but wrote {convs}"
                    ));
                }
            }
            None => {
                t.imported += 1;
                let unreadable = s.unreadable_rows().unwrap();
                t.undecodable += unreadable.len();
                if let Some(u) = unreadable.first() {
                    failures.push(format!("case {case} ({kind} {name}): unreadable row {u:?}"));
                }
                for conv in &o.conversations {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        read_everything(&mut s, conv)
                    }));
                    match r {
                        Err(_) => {
                            t.panics += 1;
                            failures.push(format!("case {case} ({kind} {name}): a read panicked"));
                        }
                        Ok(Err(e)) => failures
                            .push(format!("case {case} ({kind} {name}): a read failed: {e}")),
                        Ok(Ok((repairs, invalid))) => {
                            t.repairs += repairs;
                            t.pair_invalid += invalid;
                            if invalid > 0 {
                                failures.push(format!(
                                    "case {case} ({kind} {name}): a provider export is not pair-valid"
                                ));
                            }
                        }
                    }
                }
            }
        }
        drop(s);
        if std::env::var_os("CAIRN_HOSTILE_SLOW").is_some() && started.elapsed().as_millis() > 700 {
            println!("slow case {case} ({kind} {name}): {:?}", started.elapsed());
        }
        // keep the disk small over thousands of cases (a file already gone is fine)
        std::fs::remove_file(&file).ok();
        for ext in ["", "-wal", "-shm"] {
            std::fs::remove_file(format!("{}{ext}", db.display())).ok();
        }
    }
    println!(
        "hostile input: {} cases (seed {seed:#x}): {} imported, {} refused with FILE:LINE, {} repairs in provider \
         exports, {} panics, {} undecodable rows, {} pair-invalid exports",
        t.cases, t.imported, t.refused, t.repairs, t.panics, t.undecodable, t.pair_invalid
    );
    no_failures(&failures);
    // (a run of one case has no mix to check)
    assert!(
        only.is_some() || (t.imported > cases / 10 && t.refused > cases / 10),
        "{t:?}"
    );
}

/// OpenHands' conversation folders, mutated where a folder can break: one event file (or the state file) of a copy
/// at a time, with the same mutations, plus parents that name the event itself, a later event or none. Nothing
/// panics; a refusal names the file at fault (the state or the event) and its line and writes nothing; an import
/// decodes and reads and exports as any other.
#[test]
fn hostile_openhands_folders_never_panic_and_refuse_by_the_file_at_fault() {
    let cases: usize = std::env::var("CAIRN_HOSTILE_CASES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(100, |n| (n / 20).max(1));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openhands-v1");
    let mut convs: Vec<PathBuf> = std::fs::read_dir(fixtures.join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    convs.sort();
    // and one with a subagent's conversation under it
    convs.push(fixtures.join("subagent/793db1640db744e381c0a1e44c69cfbc"));
    // and one as OpenHands kept them before its SDK: `events/<n>.json` and the metadata beside
    convs.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/openhands-v0/sessions/4f1c2a9e7b3d4c5e8f6a0b1c2d3e4f5a"),
    );
    assert_eq!(convs.len(), 4);
    let lying = lying_png();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x0be4_7a11 | 1);
    let (mut imported, mut refused) = (0, 0);
    let mut failures: Vec<String> = Vec::new();
    for case in 0..cases {
        let src = &convs[rng.below(convs.len())];
        let conv = dir.path().join(format!("case-{case}"));
        let files = copy_tree(src, &conv);
        let is = |f: &PathBuf, start: &str| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(start))
        };
        let v0 = conv.join("events/0.json").is_file();
        let events: Vec<&PathBuf> = files
            .iter()
            .filter(|f| is(f, "event-") || v0 && f.parent().is_some_and(|d| d.ends_with("events")))
            .collect();
        let states: Vec<&PathBuf> = files
            .iter()
            .filter(|f| is(f, "base_state") || v0 && is(f, "metadata"))
            .collect();
        // the file mutated: an event mostly, a state sometimes
        let target = match rng.below(events.len() + 2) {
            k if k < events.len() => events[k].clone(),
            _ => states[rng.below(states.len())].clone(),
        };
        let bytes = std::fs::read(&target).unwrap();
        let kind = if rng.below(5) == 0 && !v0 && target.to_string_lossy().contains("event-") {
            // a parent that names the event itself, an event after it, or the root's sentinel
            let mut v: Value = serde_json::from_slice(&bytes).unwrap();
            let later = events
                .last()
                .and_then(|p| p.file_name())
                .map(|n| {
                    n.to_string_lossy()
                        .split('-')
                        .skip(2)
                        .collect::<Vec<_>>()
                        .join("-")
                })
                .unwrap_or_default()
                .trim_end_matches(".json")
                .to_string();
            v["parent_id"] = match rng.below(3) {
                0 => v["id"].clone(),
                1 => Value::from(later),
                _ => Value::from("__root__"),
            };
            std::fs::write(&target, v.to_string()).unwrap();
            "parent"
        } else {
            let (out, kind) = mutate(&bytes, &mut rng, &lying);
            std::fs::write(&target, out).unwrap();
            kind
        };
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        let db = dir.path().join(format!("case-{case}.db"));
        let state = if v0 {
            conv.join("events/0.json")
        } else {
            conv.join("base_state.json")
        };
        let Ok((mut s, o, n)) = import_caught(&db, &state) else {
            failures.push(format!("case {case} ({kind} {name}): import panicked"));
            continue;
        };
        match &o.error {
            Some(e) => {
                refused += 1;
                // the file at fault: the state, an event, a subagent's
                let at_fault = e.starts_with(&format!("{}/", conv.display()));
                let line_ok = e
                    .split_once(".json:")
                    .and_then(|(_, r)| r.split(':').next())
                    .is_some_and(|l| l.parse::<usize>().is_ok());
                if !(at_fault && line_ok) {
                    failures.push(format!(
                        "case {case} ({kind} {name}): refusal names no file:line: {e}"
                    ));
                }
                if n != 0 {
                    failures.push(format!(
                        "case {case} ({kind} {name}): refused but wrote {n}"
                    ));
                }
            }
            None => {
                imported += 1;
                if let Some(u) = s.unreadable_rows().unwrap().first() {
                    failures.push(format!("case {case} ({kind} {name}): unreadable row {u:?}"));
                }
                for c in &o.conversations {
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        read_everything(&mut s, c)
                    })) {
                        Err(_) => {
                            failures.push(format!("case {case} ({kind} {name}): a read panicked"))
                        }
                        Ok(Err(e)) => failures
                            .push(format!("case {case} ({kind} {name}): a read failed: {e}")),
                        Ok(Ok((_, invalid))) if invalid > 0 => failures.push(format!(
                            "case {case} ({kind} {name}): a provider export is not pair-valid"
                        )),
                        Ok(Ok(_)) => {}
                    }
                }
            }
        }
        drop(s);
        std::fs::remove_dir_all(&conv).ok();
        for ext in ["", "-wal", "-shm"] {
            std::fs::remove_file(format!("{}{ext}", db.display())).ok();
        }
    }
    println!("hostile OpenHands folders: {cases} cases: {imported} imported, {refused} refused");
    no_failures(&failures);
    assert!(
        imported > cases / 10 && refused > cases / 20,
        "{imported} / {refused}"
    );
}

/// Fails with the count of failures and the first five.
fn no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
}
