//! Rule 2: a writer killed with SIGKILL at any instant leaves a store that opens, passes integrity_check, holds
//! every turn whose append returned and no part of the one that did not.
//!
//! The writer is the real binary (`cairn stress-writer`), which prints each turn's number after its append
//! returned. `CAIRN_CRASH_KILLS` sets the number of kills (default 200; `scripts/crash-stress` runs 1,000+).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use cairn::store::Store;

/// xorshift64*: enough randomness for kill timing without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn sigkill_at_random_moments_never_loses_or_half_writes_a_turn() {
    let kills: u64 = std::env::var("CAIRN_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let conv = {
        let mut s = Store::open(&db).unwrap();
        s.create_conversation(Some("crash")).unwrap()
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test seed {seed}, {kills} kills");
    let mut rng = Rng(seed);
    let mut acked_turns: u64 = 0; // turns whose append returned, over all runs
    let mut mid_write_kills = 0u64;
    for round in 0..kills {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["--db"])
            .arg(&db)
            .args(["stress-writer", &conv])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // From "before the store is even open" to "many turns in".
        let delay_us = rng.next() % 60_000;
        std::thread::sleep(Duration::from_micros(delay_us));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        // Only complete lines are acknowledgements.
        let acked: Vec<u64> = out
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| l.trim().parse().unwrap())
            .collect();
        if let Some(&last) = acked.last() {
            acked_turns = acked_turns.max(last + 1);
        }

        let s =
            Store::open(&db).unwrap_or_else(|e| panic!("round {round}: store does not open: {e}"));
        assert_eq!(
            s.integrity_check().unwrap(),
            Ok(()),
            "round {round}: integrity_check failed"
        );
        let conv_row = s.conversation(&conv).unwrap();
        let path = s.active_path(&conv).unwrap();
        assert_eq!(
            conv_row.messages as usize,
            path.len(),
            "round {round}: rows outside the active path (a partial turn)"
        );
        assert_eq!(
            path.len() % 4,
            0,
            "round {round}: a partial turn on the path"
        );
        let stored_turns = path.len() as u64 / 4;
        assert!(
            stored_turns >= acked_turns,
            "round {round}: {acked_turns} turns acknowledged, {stored_turns} stored"
        );
        // At most the one turn in flight may have committed without being acknowledged.
        assert!(
            stored_turns <= acked_turns + 1,
            "round {round}: {stored_turns} stored, only {acked_turns} acknowledged"
        );
        if stored_turns == acked_turns + 1 {
            mid_write_kills += 1;
        }
        acked_turns = stored_turns;
        // Every stored turn is exactly the turn that was generated.
        for (k, turn) in path.chunks(4).enumerate() {
            let expected = cairn::cli::generated_turn(k as u64);
            for (m, e) in turn.iter().zip(&expected) {
                assert_eq!(m.role, e.role, "round {round}, turn {k}");
                assert_eq!(m.content, e.content, "round {round}, turn {k}");
            }
        }
    }
    eprintln!(
        "{kills} kills: {acked_turns} turns stored; {mid_write_kills} kills landed after a commit and before its acknowledgement"
    );
    assert!(
        acked_turns > 0,
        "the writer never got a turn in; the test proved nothing"
    );
}

/// What a store holds, without ids (an import and a fork mint new ones): per conversation, its title, its message
/// count and its active path's length, sorted.
fn shape(db: &std::path::Path) -> Vec<(Option<String>, u64, usize)> {
    let s = Store::open(db).unwrap();
    let mut v: Vec<_> = s
        .conversations()
        .unwrap()
        .into_iter()
        .map(|c| {
            let path = s.active_path(&c.id).unwrap().len();
            (c.title.clone(), c.messages, path)
        })
        .collect();
    v.sort();
    v
}

/// A Claude Code session of `turns` tool turns with large results: big enough that its import, its fork and its
/// compaction take long enough for a kill to land inside them.
fn big_session(turns: usize) -> String {
    let mut out = String::new();
    let mut parent = serde_json::Value::Null;
    let mut n = 0;
    let mut line = |role: &str, content: serde_json::Value, out: &mut String| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let l = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": role, "uuid": uuid,
            "sessionId": "crash", "version": "2.1.42", "timestamp": "2026-02-16T18:47:50.590Z",
            "message": {"role": role, "content": content},
        });
        out.push_str(&l.to_string());
        out.push('\n');
        parent = serde_json::Value::from(uuid);
    };
    line(
        "user",
        serde_json::json!("Port the parser; read every module first."),
        &mut out,
    );
    for i in 0..turns {
        let id = format!("toolu_{i:06}");
        line(
            "assistant",
            serde_json::json!([{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("src/m{i}.rs")}}]),
            &mut out,
        );
        let body: String = (0..80)
            .map(|k| format!("{k:>4}  fn f{i}_{k}() -> u32 {{ {k} }}\n"))
            .collect();
        line(
            "user",
            serde_json::json!([{"type": "tool_result", "tool_use_id": id, "content": body}]),
            &mut out,
        );
        line(
            "assistant",
            serde_json::json!([{"type": "text", "text": format!("Module {i} read.")}]),
            &mut out,
        );
    }
    out
}

/// Kills `cairn ARGS` at random moments (from before it opens the store to after it is done) on copies of the
/// store `before`, and checks each time: the store opens, passes integrity_check, every row decodes, and it holds
/// either the state before the operation or the state an uninterrupted run leaves, nothing between.
fn kill_during(name: &str, before: &std::path::Path, args: &[&str], rounds: u64, rng: &mut Rng) {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference.db");
    std::fs::copy(before, &reference).unwrap();
    let started = std::time::Instant::now();
    let ok = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(&reference)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success(), "{name}: the uninterrupted run failed");
    let took = started.elapsed().as_micros() as u64;
    let (was, done) = (shape(before), shape(&reference));
    assert_ne!(
        was, done,
        "{name}: the operation changes nothing; the test proves nothing"
    );
    // true when the kill left the operation whole, false when it left the store as before
    let kill_at = |round: u64, delay: u64| -> bool {
        let db = dir.path().join(format!("round-{round}.db"));
        std::fs::copy(before, &db).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        let s = Store::open(&db)
            .unwrap_or_else(|e| panic!("{name} round {round}: store does not open: {e}"));
        assert_eq!(
            s.integrity_check().unwrap(),
            Ok(()),
            "{name} round {round}: integrity_check"
        );
        assert!(
            s.unreadable_rows().unwrap().is_empty(),
            "{name} round {round}: a row does not decode"
        );
        drop(s);
        let now = shape(&db);
        assert!(
            now == was || now == done,
            "{name} round {round}: half an operation: {now:?}\nbefore {was:?}\nafter {done:?}"
        );
        for ext in ["", "-wal", "-shm"] {
            std::fs::remove_file(format!("{}{ext}", db.display())).ok();
        }
        now == done
    };
    // [left as before, whole]
    let mut seen = [0u64; 2];
    // stratified over [0, 1.2 x the uninterrupted run]: every stretch of the operation gets its kills
    let span = took * 6 / 5 / rounds + 1;
    for round in 0..rounds {
        seen[usize::from(kill_at(round, round * span + rng.next() % span))] += 1;
    }
    // A loaded machine runs the killed copies slower or faster than the timed one: the window then widens (or
    // narrows) until both sides are seen, so the check that the kills landed on both sides holds on any machine.
    let mut extra = 0;
    while seen.contains(&0) && extra < rounds {
        extra += 1;
        let delay = if seen[1] == 0 {
            took * (1 + extra) + rng.next() % (took + 1)
        } else {
            rng.next() % (took / (1 + extra) + 1)
        };
        seen[usize::from(kill_at(rounds + extra, delay))] += 1;
    }
    let [saw_before, saw_after] = seen;
    eprintln!(
        "{name}: {} kills over {took} us: {saw_before} left it as before, {saw_after} whole",
        rounds + extra
    );
    assert!(
        saw_before > 0 && saw_after > 0,
        "{name}: the kills never landed on both sides"
    );
}

#[test]
fn sigkill_during_import_fork_and_compaction_leaves_it_whole_or_not_at_all() {
    let rounds: u64 = std::env::var("CAIRN_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(30, |k| (k / 5).max(10));
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test seed {seed}, {rounds} kills per operation");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("big.jsonl");
    std::fs::write(&transcript, big_session(1500)).unwrap();

    // import into an empty store
    let empty = dir.path().join("empty.db");
    drop(Store::open(&empty).unwrap());
    let t = transcript.to_string_lossy().into_owned();
    kill_during("import", &empty, &["import", &t], rounds, &mut rng);

    // fork and compaction of the imported session
    let loaded = dir.path().join("loaded.db");
    let conv = {
        let mut s = Store::open(&loaded).unwrap();
        let o = cairn::import::import_file(&mut s, &transcript, None);
        assert!(o.error.is_none(), "{:?}", o.error);
        o.conversations[0].clone()
    };
    kill_during("fork", &loaded, &["fork", &conv], rounds, &mut rng);
    kill_during(
        "compaction",
        &loaded,
        &["compact", &conv, "--target", "2000", "--protect", "2000"],
        rounds,
        &mut rng,
    );
}
