//! Factory's Droid sessions (`~/.factory/sessions/<project>/<id>.jsonl` and the `<id>.settings.json` beside it),
//! on a fixture of our own written in the shape Droid writes: found, imported as a tree (not read as pi, whose
//! message lines look alike), the session's usage taken from its settings once, and again when it grew.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::import::ImportFiles;
use cairn::commands::replay::ReplayMeasured;
use cairn::commands::stats::UsageStats;
use cairn::commands::{self, Command, Quiet};
use cairn::reclaim::Settings;
use cairn::store::{By, Store};
use serde_json::{Value, json};

const SESSION: &str = "3b9e6f2a-71c4-4d0e-9a55-2f6c1d8e4b70";

/// A command run as the CLI runs it, its own output back.
fn exec<C: Command>(s: &mut Store, c: C) -> C::Output {
    commands::exec(s, &Settings::default(), c, &Quiet, &AtomicBool::new(false)).unwrap()
}

/// The fixture copied under a home folder where Droid keeps it; the session file.
fn installed(home: &Path) -> PathBuf {
    let dir = home.join(".factory/sessions/-home-dev-tidepool");
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/droid");
    for ext in ["jsonl", "settings.json"] {
        let name = format!("{SESSION}.{ext}");
        std::fs::copy(fixtures.join(&name), dir.join(&name)).unwrap();
    }
    dir.join(format!("{SESSION}.jsonl"))
}

fn import(s: &mut Store, paths: Vec<PathBuf>) -> Vec<cairn::import::FileOutcome> {
    exec(
        s,
        ImportFiles {
            paths,
            format: None,
        },
    )
}

/// (input, output, cache reads, cache writes) as `stats` sums them, and the cost.
fn totals(s: &mut Store) -> ((u64, u64, u64, u64), Option<f64>) {
    let st = exec(
        s,
        UsageStats {
            by: By::Model,
            since: None,
            cache: false,
        },
    );
    assert_eq!(st.rows.len(), 1, "one model");
    let r = &st.rows[0];
    assert_eq!(r.key, "claude-sonnet-4-5");
    let t = (
        r.input_tokens,
        r.output_tokens,
        r.cache_read_tokens,
        r.cache_write_tokens,
    );
    (t, r.cost_usd)
}

fn usage_of(settings: &Path) -> (u64, u64, u64, u64) {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    let n = |k: &str| v["tokenUsage"][k].as_u64().unwrap();
    (
        n("inputTokens"),
        n("outputTokens"),
        n("cacheReadTokens"),
        n("cacheCreationTokens"),
    )
}

#[test]
fn droid_sessions_are_found_and_import_as_a_tree_with_their_settings_totals() {
    let home = tempfile::tempdir().unwrap();
    let file = installed(home.path());
    let found = cairn::discover::discover(home.path());
    assert_eq!(found.len(), 1, "the session, not its settings file");
    assert_eq!(found[0].format.name(), "droid");
    assert_eq!(found[0].messages, 10);
    let mut s = Store::open_in_memory().unwrap();
    // the settings file named alone brings its session
    let out = import(&mut s, vec![file.with_extension("settings.json")]);
    assert_eq!(out.len(), 1);
    let o = &out[0];
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.file, file);
    assert_eq!(o.format.map(|f| f.name()), Some("droid"));
    assert_eq!(o.report.messages, 10);
    assert_eq!(o.report.tool_pairs, 3);
    assert_eq!(o.report.branches, 1, "the rewind to the fourth message");
    assert_eq!(
        o.report.skipped.get("todo_state lines (kept as metadata)"),
        Some(&1)
    );
    let conv = s.conversation(&o.conversations[0]).unwrap();
    assert_eq!(
        conv.title.as_deref(),
        Some("Why does drain_order fail one run in ten?")
    );
    // the tip is the file's last message, on the rewound branch
    let path = s.active_path(&conv.id).unwrap();
    assert_eq!(path.len(), 6);
    let last = cairn::model::plain_text(&path[5].content);
    assert!(last.starts_with("A test that parks a producer"), "{last}");
    // the failed read is an error result, the thinking kept
    assert!(
        path[2]
            .content
            .iter()
            .any(|b| matches!(b, cairn::model::Block::ToolResult { is_error: true, .. }))
    );
    assert!(
        path[1]
            .content
            .iter()
            .any(|b| matches!(b, cairn::model::Block::Thinking { .. }))
    );
    // the session's totals counted once, priced at the settings' model
    let (t, cost) = totals(&mut s);
    assert_eq!(t, usage_of(&file.with_extension("settings.json")));
    let (i, o_, r, w) = t;
    let list = (i as f64 * 3.0 + o_ as f64 * 15.0 + r as f64 * 0.3 + w as f64 * 3.75) / 1e6;
    assert!((cost.unwrap() - list).abs() < 0.005, "{cost:?} vs {list}");
    // a sum of requests is no prompt's measure: nothing to replay
    let rep = exec(&mut s, ReplayMeasured { conversation: None });
    assert!(rep.replies.is_empty(), "{:?}", rep.replies);
}

#[test]
fn a_droid_session_that_grew_takes_its_new_totals_in_place_of_the_old() {
    let home = tempfile::tempdir().unwrap();
    let file = installed(home.path());
    let settings = file.with_extension("settings.json");
    let mut s = Store::open_in_memory().unwrap();
    import(&mut s, vec![file.clone()]);
    let before = totals(&mut s).0;
    let mut lines = std::fs::read_to_string(&file).unwrap();
    for l in [
        json!({"type": "message", "id": "b7", "parentId": "b6", "timestamp": "2026-11-20T10:04:00.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "Write it."}]}}),
        json!({"type": "message", "id": "b8", "parentId": "b7", "timestamp": "2026-11-20T10:04:09.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "Written."}]}}),
    ] {
        lines.push_str(&format!("{l}\n"));
    }
    std::fs::write(&file, lines).unwrap();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    v["tokenUsage"] = json!({"inputTokens": 2100, "outputTokens": 700, "cacheCreationTokens": 15000,
                             "cacheReadTokens": 80000, "thinkingTokens": 96});
    std::fs::write(&settings, v.to_string()).unwrap();
    let out = import(&mut s, vec![file.clone()]);
    assert!(out[0].error.is_none(), "{:?}", out[0].error);
    assert_eq!(out[0].added, 2);
    let after = totals(&mut s).0;
    assert_ne!(after, before);
    assert_eq!(
        after,
        (2100, 700, 80000, 15000),
        "the new totals, not old + new"
    );
    // Droid writes the settings after the reply: read again with only them changed, the totals are taken too
    v["tokenUsage"] = json!({"inputTokens": 2300, "outputTokens": 760, "cacheCreationTokens": 15400,
                             "cacheReadTokens": 81000, "thinkingTokens": 96});
    std::fs::write(&settings, v.to_string()).unwrap();
    let out = import(&mut s, vec![file.clone()]);
    assert_eq!(out[0].added, 0);
    assert_eq!(totals(&mut s).0, (2300, 760, 81000, 15400));
    // and the same totals read once more change nothing
    import(&mut s, vec![file]);
    assert_eq!(totals(&mut s).0, (2300, 760, 81000, 15400));
}
