//! Diff of two attempts: a rewound branch (two tips of one conversation), and a fork against its origin.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::diff::Diff;
use cairn::model::{NewMessage, Role};
use cairn::reclaim::Settings;
use cairn::store::Store;

fn diff(s: &mut Store, a: &str, b: &str) -> Diff {
    match commands::run(
        s,
        &Settings::default(),
        Action::Diff {
            a: a.into(),
            b: b.into(),
        },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap()
    {
        Outcome::Diffed(d) => *d,
        o => panic!("{o:?}"),
    }
}

#[test]
fn a_rewound_branch_diverges_where_the_prompt_was_edited() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("d.db")).unwrap();
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-rewind-fork-2.1.42.jsonl");
    let o = cairn::import::import_file(&mut s, &p, None);
    assert!(o.error.is_none());
    let conv = o.conversations[0].clone();
    // the two leaves of the tree
    let all = s.messages(&conv).unwrap();
    let parents: std::collections::HashSet<&str> =
        all.iter().filter_map(|m| m.parent.as_deref()).collect();
    let leaves: Vec<&str> = all
        .iter()
        .filter(|m| !parents.contains(m.id.as_str()))
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(leaves.len(), 2, "{leaves:?}");
    let d = diff(&mut s, leaves[0], leaves[1]);
    // they share the prefix up to the branch point, by id (one conversation)
    let branch_point = d.diverged_after.a.clone().unwrap();
    assert_eq!(d.diverged_after.b.as_deref(), Some(branch_point.as_str()));
    let kids = all
        .iter()
        .filter(|m| m.parent.as_deref() == Some(branch_point.as_str()))
        .count();
    assert_eq!(kids, 2, "the divergence is the message with two children");
    // each side's continuation is exactly what its path holds after it
    for (side, leaf) in [(&d.a, leaves[0]), (&d.b, leaves[1])] {
        let path = s.path_to(&conv, leaf).unwrap();
        assert_eq!(side.messages as usize, path.len() - d.shared);
    }
    // the first pair is the edited prompt, with a text diff
    let first = &d.pairs[0];
    assert!(!first.same && first.a.is_some() && first.b.is_some());
    let text = first.diff.as_deref().unwrap();
    assert!(text.contains("\n-") && text.contains("\n+"), "{text}");
    let json = serde_json::to_value(&d).unwrap();
    for k in [
        "messages",
        "turns",
        "tool_calls",
        "tool_errors",
        "tokens",
        "cost_usd",
    ] {
        assert!(json["a"].get(k).is_some(), "{k}");
    }
    assert!(json["pairs"][0].get("same").is_some());
}

#[test]
fn a_fork_against_its_origin_shares_its_path_by_content() {
    let mut s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(Some("task")).unwrap();
    s.append_turn(
        &c,
        &[
            NewMessage::text(Role::User, "Port the parser"),
            NewMessage::text(Role::Assistant, "Reading the grammar first."),
        ],
    )
    .unwrap();
    let fork = s.fork(&c, None).unwrap();
    s.append_turn(
        &c,
        &[
            NewMessage::text(Role::User, "Use a visitor"),
            NewMessage::text(Role::Assistant, "Done with a visitor."),
        ],
    )
    .unwrap();
    s.append_turn(
        &fork,
        &[
            NewMessage::text(Role::User, "Use a match"),
            NewMessage::text(Role::Assistant, "Done with a match."),
            NewMessage::text(Role::User, "And tests"),
            NewMessage::text(Role::Assistant, "Tests added."),
        ],
    )
    .unwrap();
    let d = diff(&mut s, &c, &fork);
    assert_eq!(d.shared, 2);
    // the fork's copies have new ids: each side names its own
    assert_ne!(d.diverged_after.a, d.diverged_after.b);
    assert_eq!((d.a.messages, d.b.messages), (2, 4));
    assert_eq!((d.a.turns, d.b.turns), (1, 2));
    assert_eq!(d.b.final_reply.as_deref(), Some("Tests added."));
    assert_eq!(d.pairs.len(), 4);
    assert_eq!(d.pairs.iter().filter(|p| p.a.is_none()).count(), 2);
}
