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
