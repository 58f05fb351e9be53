//! Every session read once and kept current: importing a session again, or its first half and then the whole
//! file, gives one conversation with the same messages and the same stats as importing it once (per harness).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::import::FileOutcome;
use cairn::reclaim::Settings;
use cairn::stats::Stats;
use cairn::store::{By, Store};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn run(s: &mut Store, a: Action) -> Outcome {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false)).unwrap()
}

fn import(s: &mut Store, p: &Path) -> FileOutcome {
    let Outcome::Imported(mut files) = run(
        s,
        Action::Import {
            paths: vec![p.to_path_buf()],
            format: None,
        },
    ) else {
        panic!()
    };
    files.remove(0)
}

fn stats(s: &mut Store) -> Stats {
    let Outcome::Stats(st) = run(
        s,
        Action::Stats {
            by: By::Model,
            since: None,
        },
    ) else {
        panic!()
    };
    st
}

/// The first `share` of a JSONL file's lines, as a live session's file was when first imported.
fn head_of(src: &Path, dst: &Path, share: f64) {
    let text = std::fs::read_to_string(src).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let n = ((lines.len() as f64) * share) as usize;
    std::fs::write(dst, lines[..n].join("\n") + "\n").unwrap();
}

fn path_texts(s: &Store, conv: &str) -> Vec<String> {
    s.active_path(conv)
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}:{}",
                m.role.as_str(),
                cairn::model::plain_text(&m.content)
            )
        })
        .collect()
}

#[test]
fn a_session_that_grew_is_one_conversation_with_the_figures_of_one_import() {
    for f in [
        "claude-code/cc-2.0.5-image-paste.jsonl",
        "pi/pi-v1-before-compaction-two-compactions.jsonl",
        "codex/codex-desktop-spawn-agents-0.140.jsonl",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut once = Store::open(dir.path().join("once.db")).unwrap();
        let o = import(&mut once, &fixture(f));
        assert_eq!(o.status, "new", "{f}");
        let want = stats(&mut once);
        let want_path = path_texts(&once, &o.conversations[0]);

        let mut grown = Store::open(dir.path().join("grown.db")).unwrap();
        // the live file, half written; then the same file, whole, where the harness keeps it
        let live = dir.path().join("live.jsonl");
        head_of(&fixture(f), &live, 0.5);
        let first = import(&mut grown, &live);
        assert_eq!(first.status, "new", "{f}: {:?}", first.error);
        std::fs::copy(fixture(f), &live).unwrap();
        let again = import(&mut grown, &live);
        assert_eq!(again.status, "grown", "{f}: {:?}", again.error);
        assert!(again.added > 0);
        assert_eq!(
            again.conversations[0], first.conversations[0],
            "{f}: the same conversation"
        );
        assert_eq!(
            grown.conversations().unwrap().len(),
            once.conversations().unwrap().len(),
            "{f}: nothing counted twice"
        );
        assert_eq!(stats(&mut grown).rows, want.rows, "{f}");
        assert_eq!(
            path_texts(&grown, &again.conversations[0]),
            want_path,
            "{f}"
        );
        // and once more: unchanged, not an error that fails the command
        let third = import(&mut grown, &live);
        assert_eq!(third.status, "unchanged", "{f}");
        assert_eq!(
            third.duplicate_of.as_deref(),
            Some(first.conversations[0].as_str())
        );
    }
}

#[test]
fn import_json_says_new_grown_or_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    head_of(
        &fixture("claude-code/cc-rewind-fork-2.1.42.jsonl"),
        &live,
        0.6,
    );
    let db = dir.path().join("s.db");
    let import = |p: &Path| -> serde_json::Value {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["--db", db.to_str().unwrap(), "import", "--json"])
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    assert_eq!(import(&live)[0]["status"], "new");
    std::fs::copy(fixture("claude-code/cc-rewind-fork-2.1.42.jsonl"), &live).unwrap();
    let v = import(&live);
    assert_eq!(v[0]["status"], "grown");
    assert!(v[0]["added"].as_u64().unwrap() > 0);
    assert_eq!(import(&live)[0]["status"], "unchanged");
}
