//! A compaction never severs the history: a Claude Code `compact_boundary` whose `logicalParentUuid` names a record
//! the file does not hold follows the record before it on the main chain, so the session keeps one root and its
//! active path holds the whole session, and the import report says so.

use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::reclaim::Settings;
use cairn::store::Store;

#[test]
fn a_missing_logical_parent_links_to_the_record_before_it() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-compact-boundary.jsonl");
    let text = std::fs::read_to_string(&fixture).unwrap();
    assert!(text.contains("\"logicalParentUuid\": \"a5\""));
    // as Claude Code 2.1.20 wrote it: the boundary names a record that is no longer in the file
    let cut = text.replace(
        "\"logicalParentUuid\": \"a5\"",
        "\"logicalParentUuid\": \"gone-0001\"",
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    std::fs::write(&f, cut).unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let Outcome::Imported(files) = commands::run(
        &mut s,
        &Settings::default(),
        Action::Import {
            paths: vec![f],
            format: None,
        },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap() else {
        panic!()
    };
    let conv = files[0].conversations[0].clone();
    assert!(
        files[0]
            .report
            .notes
            .iter()
            .any(|n| n.contains("logical parent gone-0001") && n.contains("follows line")),
        "{:?}",
        files[0].report.notes
    );
    let heads = s.heads(&conv).unwrap();
    let roots = heads.iter().filter(|h| h.depth == 0).count();
    assert_eq!(roots, 1);
    let path = s.active_path(&conv).unwrap();
    assert_eq!(
        path.len(),
        heads.len(),
        "the active path holds the whole session"
    );
    assert!(path.first().unwrap().content.iter().any(|b| matches!(b,
        cairn::model::Block::Text { text } if text.starts_with("step 0"))));
}
