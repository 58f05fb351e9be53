//! The session store's rules, one test (or a few) per rule, through the library API.

#[path = "support/helpers.rs"]
mod helpers;

use cairn::model::{Block, NewMessage, Role};
use cairn::store::{Budget, ImportedMessage, Retry, Store, StoreError};
use helpers::*;
use serde_json::json;

// ---- Rule 1: turn boundary ------------------------------------------------------------------------------

#[test]
fn a_complete_turn_is_written_whole_and_moves_the_tip() {
    let mut s = mem();
    let c = s.create_conversation(Some("t")).unwrap();
    let ids = s.append_turn(&c, &tool_turn("go", &["a"])).unwrap();
    assert_eq!(ids.len(), 4);
    let conv = s.conversation(&c).unwrap();
    assert_eq!(conv.tip.as_deref(), Some(ids[3].as_str()));
    let path = s.active_path(&c).unwrap();
    assert_eq!(path.iter().map(|m| m.id.clone()).collect::<Vec<_>>(), ids);
    assert_eq!(path[0].parent, None);
    assert_eq!(path[1].parent.as_deref(), Some(ids[0].as_str()));
}

#[test]
fn parallel_tool_calls_answered_in_one_message_are_a_valid_turn() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    s.append_turn(&c, &tool_turn("go", &["a", "b", "c"]))
        .unwrap();
    assert_eq!(s.active_path(&c).unwrap().len(), 4);
}

#[test]
fn unpaired_or_unfinished_turns_are_refused_and_write_nothing() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    s.append_turn(&c, &simple_turn("hi", "hello")).unwrap();
    let before = fingerprint(&s, &c);

    let missing_result = vec![
        user("go"),
        NewMessage::new(Role::Assistant, vec![call("a"), call("b")]),
        NewMessage::new(Role::User, vec![result("a", "x")]),
        assistant("done"),
    ];
    let orphan_result = vec![
        user("go"),
        NewMessage::new(Role::User, vec![result("zz", "x")]),
        assistant("done"),
    ];
    let ends_on_call = vec![
        user("go"),
        NewMessage::new(Role::Assistant, vec![call("a")]),
    ];
    let ends_on_prompt = vec![user("go")];
    let ends_on_results = vec![
        user("go"),
        NewMessage::new(Role::Assistant, vec![call("a")]),
        NewMessage::new(Role::User, vec![result("a", "x")]),
    ];
    let empty: Vec<NewMessage> = vec![];
    for (name, turn) in [
        ("missing result", missing_result),
        ("orphan result", orphan_result),
        ("ends on a call", ends_on_call),
        ("ends on a prompt", ends_on_prompt),
        ("ends on results", ends_on_results),
        ("empty", empty),
    ] {
        let err = s.append_turn(&c, &turn).unwrap_err();
        assert!(
            matches!(err, StoreError::Pairs(_) | StoreError::InvalidTurn(_)),
            "{name}: {err}"
        );
        assert!(
            err.to_string().starts_with("turn refused, nothing written"),
            "{name}: {err}"
        );
        assert_eq!(fingerprint(&s, &c), before, "{name} wrote something");
    }
}

#[test]
fn a_turn_cannot_attach_to_a_conversation_paused_mid_turn() {
    let mut s = mem();
    let imported = vec![
        ImportedMessage {
            parent: None,
            message: user("go"),
        },
        ImportedMessage {
            parent: Some(0),
            message: NewMessage::new(Role::Assistant, vec![call("a")]),
        },
    ];
    let (c, ids) = s
        .import_conversation(None, &imported, None, &[], &json!(null))
        .unwrap();
    let before = fingerprint(&s, &c);
    let err = s.append_turn(&c, &simple_turn("more", "ok")).unwrap_err();
    match &err {
        StoreError::NotBoundary { tip, .. } => assert_eq!(tip, &ids[1]),
        e => panic!("unexpected {e}"),
    }
    assert!(err.to_string().contains("a tool call awaits its result"));
    assert_eq!(fingerprint(&s, &c), before);
}

#[test]
fn images_are_stored_once_by_content_hash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut s = Store::open(&path).unwrap();
    let c = s.create_conversation(None).unwrap();
    let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3, 4];
    let img = || Block::Image {
        media_type: "image/png".into(),
        data: cairn::model::ImageData::Bytes(png.clone()),
    };
    s.append_turn(
        &c,
        &[NewMessage::new(Role::User, vec![img()]), assistant("seen")],
    )
    .unwrap();
    s.append_turn(
        &c,
        &[NewMessage::new(Role::User, vec![img()]), assistant("again")],
    )
    .unwrap();
    let path_msgs = s.active_path(&c).unwrap();
    let hashes: Vec<String> = path_msgs
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::Image {
                data: cairn::model::ImageData::Blob { hash, .. },
                ..
            } => Some(hash.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(hashes.len(), 2);
    assert_eq!(hashes[0], hashes[1]);
    assert_eq!(s.blob(&hashes[0]).unwrap(), png);
    drop(s);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM blobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    // and the wire form gives the bytes back as base64
    let s = Store::open(&path).unwrap();
    let w = s.to_wire(&path_msgs[0]).unwrap();
    assert_eq!(w["content"][0]["source"]["data"], json!("iVBORwECAwQ="));
}

// ---- Rule 3: branch ------------------------------------------------------------------------------------

#[test]
fn branch_moves_the_tip_and_writes_no_message() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    let first = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    let second = s.append_turn(&c, &simple_turn("c", "d")).unwrap();
    let count = s.conversation(&c).unwrap().messages;
    s.branch(&c, &first[1], None).unwrap();
    assert_eq!(s.conversation(&c).unwrap().messages, count);
    assert_eq!(s.active_path(&c).unwrap().len(), 2);
    // the old path is still there
    assert_eq!(s.path_to(&c, &second[1]).unwrap().len(), 4);
    // a new turn from here makes a sibling branch
    let third = s.append_turn(&c, &simple_turn("e", "f")).unwrap();
    let msgs = s.messages(&c).unwrap();
    let kids: Vec<_> = msgs
        .iter()
        .filter(|m| m.parent.as_deref() == Some(first[1].as_str()))
        .collect();
    assert_eq!(kids.len(), 2);
    assert_eq!(s.active_path(&c).unwrap().last().unwrap().id, third[1]);
}

#[test]
fn branch_is_compare_and_swap_and_names_both_tips() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    let a = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    let b = s.append_turn(&c, &simple_turn("c", "d")).unwrap();
    // someone else thinks the tip is still a[1]
    let err = s.branch(&c, &a[0], Some(&a[1])).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::TipMismatch { .. }), "{msg}");
    assert!(msg.contains(&a[1]) && msg.contains(&b[1]), "{msg}");
    assert_eq!(
        s.conversation(&c).unwrap().tip.as_deref(),
        Some(b[1].as_str())
    );
    // with the right expectation it moves
    s.branch(&c, &a[1], Some(&b[1])).unwrap();
    assert_eq!(
        s.conversation(&c).unwrap().tip.as_deref(),
        Some(a[1].as_str())
    );
}

#[test]
fn branch_to_another_conversations_message_is_refused() {
    let mut s = mem();
    let c1 = s.create_conversation(None).unwrap();
    let c2 = s.create_conversation(None).unwrap();
    let m1 = s.append_turn(&c1, &simple_turn("a", "b")).unwrap();
    s.append_turn(&c2, &simple_turn("a", "b")).unwrap();
    let err = s.branch(&c2, &m1[0], None).unwrap_err();
    assert!(matches!(err, StoreError::WrongConversation { .. }), "{err}");
    let err = s.branch(&c2, "ffffffffffffffff", None).unwrap_err();
    assert!(matches!(err, StoreError::UnknownMessage { .. }), "{err}");
}

#[test]
fn ids_resolve_by_unique_prefix() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    let m = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    assert_eq!(s.resolve_conversation(&c[..10]).unwrap(), c);
    assert_eq!(s.resolve_message(&c, &m[1][..10]).unwrap(), m[1]);
}

// ---- Rule 4: fork --------------------------------------------------------------------------------------

#[test]
fn fork_copies_the_path_with_new_ids_and_stays_isolated() {
    let mut s = mem();
    let c = s.create_conversation(Some("origin")).unwrap();
    let t1 = s.append_turn(&c, &tool_turn("a", &["x"])).unwrap();
    s.checkpoint(&c, "on-path").unwrap();
    let t2 = s.append_turn(&c, &simple_turn("b", "c")).unwrap();
    // a checkpoint on a branch the fork will not copy
    s.branch(&c, &t1[3], None).unwrap();
    s.append_turn(&c, &simple_turn("side", "quest")).unwrap();
    s.checkpoint(&c, "off-path").unwrap();
    s.branch(&c, &t2[1], None).unwrap();

    let f = s.fork(&c, None).unwrap();
    let orig = s.active_path(&c).unwrap();
    let copy = s.active_path(&f).unwrap();
    assert_eq!(orig.len(), copy.len());
    for (o, k) in orig.iter().zip(&copy) {
        assert_ne!(o.id, k.id);
        assert_eq!(o.content, k.content);
        assert_eq!(o.role, k.role);
        assert_eq!(k.conversation, f);
    }
    let fc = s.conversation(&f).unwrap();
    let from = fc.forked_from.unwrap();
    assert_eq!(from.conversation, c);
    assert_eq!(from.message, t2[1]);
    // only the branch that was copied: the fork holds exactly the path
    assert_eq!(fc.messages, orig.len() as u64);
    let labels: Vec<_> = s
        .checkpoints(&f)
        .unwrap()
        .into_iter()
        .map(|c| (c.label, c.message))
        .collect();
    assert_eq!(labels, vec![("on-path".to_string(), copy[3].id.clone())]);

    // isolation both ways
    let before_orig: Vec<_> = s.messages(&c).unwrap().into_iter().map(|m| m.id).collect();
    s.append_turn(&f, &simple_turn("in fork", "ok")).unwrap();
    let after_orig: Vec<_> = s.messages(&c).unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(before_orig, after_orig);
    let before_fork: Vec<_> = s.messages(&f).unwrap().into_iter().map(|m| m.id).collect();
    s.append_turn(&c, &simple_turn("in orig", "ok")).unwrap();
    let after_fork: Vec<_> = s.messages(&f).unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(before_fork, after_fork);
    // no row is shared
    assert!(before_orig.iter().all(|id| !after_fork.contains(id)));
}

#[test]
fn a_fork_of_a_fork_reads_the_same_bodies_and_grows_apart() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    s.append_turn(&c, &tool_turn("a", &["x", "y"])).unwrap();
    let f1 = s.fork(&c, None).unwrap();
    s.append_turn(&f1, &simple_turn("only in f1", "ok"))
        .unwrap();
    let f2 = s.fork(&f1, None).unwrap();
    let p1 = s.active_path(&f1).unwrap();
    let p2 = s.active_path(&f2).unwrap();
    assert_eq!(p2.len(), 6);
    for (a, b) in p1.iter().zip(&p2) {
        assert_eq!(a.content, b.content);
        assert_ne!(a.id, b.id);
    }
    assert_eq!(s.active_path(&c).unwrap().len(), 4);
    assert_eq!(s.messages(&f2).unwrap().len(), 6);
}

#[test]
fn fork_at_a_message_copies_root_to_that_message() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    let t1 = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    s.append_turn(&c, &simple_turn("c", "d")).unwrap();
    let f = s.fork(&c, Some(&t1[1])).unwrap();
    assert_eq!(s.active_path(&f).unwrap().len(), 2);
    let empty = s.create_conversation(None).unwrap();
    assert!(matches!(
        s.fork(&empty, None).unwrap_err(),
        StoreError::Empty(_)
    ));
}

// ---- Rule 5: checkpoint / rewind -----------------------------------------------------------------------

#[test]
fn checkpoint_requires_a_clean_boundary_and_a_unique_label() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    assert!(matches!(
        s.checkpoint(&c, "x").unwrap_err(),
        StoreError::Empty(_)
    ));
    let m = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    let cp = s.checkpoint(&c, "x").unwrap();
    assert_eq!(cp.message, m[1]);
    let err = s.checkpoint(&c, "x").unwrap_err();
    assert!(matches!(err, StoreError::DuplicateLabel { .. }), "{err}");
    assert!(matches!(
        s.checkpoint(&c, "").unwrap_err(),
        StoreError::BadLabel(_)
    ));

    let imported = vec![
        ImportedMessage {
            parent: None,
            message: user("go"),
        },
        ImportedMessage {
            parent: Some(0),
            message: NewMessage::new(Role::Assistant, vec![call("a")]),
        },
    ];
    let (mid, _) = s
        .import_conversation(None, &imported, None, &[], &json!(null))
        .unwrap();
    let err = s.checkpoint(&mid, "y").unwrap_err();
    assert!(matches!(err, StoreError::NotBoundary { .. }), "{err}");
    assert!(s.checkpoints(&mid).unwrap().is_empty());
}

#[test]
fn rewind_returns_to_the_checkpoint_with_a_digest_and_keeps_the_abandoned_path() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    let base = s.append_turn(&c, &simple_turn("task", "plan")).unwrap();
    s.checkpoint(&c, "plan").unwrap();
    let explored = s.append_turn(&c, &tool_turn("try it", &["q"])).unwrap();
    let digest = s
        .rewind(&c, "plan", "approach A fails: the API has no batch call")
        .unwrap();
    let path = s.active_path(&c).unwrap();
    assert_eq!(path.len(), 3);
    assert_eq!(path[1].id, base[1]);
    assert_eq!(path[2].id, digest);
    assert_eq!(path[2].parent.as_deref(), Some(base[1].as_str()));
    let text = path[2].summary(500);
    assert!(text.contains("approach A fails"), "{text}");
    assert!(text.contains("plan"), "{text}");
    // abandoned path is still in the tree
    assert_eq!(s.path_to(&c, &explored[3]).unwrap().len(), 6);
    // the conversation can go on from the digest
    s.append_turn(&c, &simple_turn("try B", "B works")).unwrap();
    assert!(matches!(
        s.rewind(&c, "nope", "x").unwrap_err(),
        StoreError::UnknownCheckpoint { .. }
    ));
}

#[test]
fn checkpoints_survive_a_restart_and_land_where_they_were_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let (c, target) = {
        let mut s = Store::open(&path).unwrap();
        let c = s.create_conversation(None).unwrap();
        s.append_turn(&c, &simple_turn("a", "b")).unwrap();
        let t = s.append_turn(&c, &simple_turn("c", "d")).unwrap();
        s.checkpoint(&c, "mid").unwrap();
        s.append_turn(&c, &simple_turn("e", "f")).unwrap();
        (c, t[1].clone())
    };
    let mut s = Store::open(&path).unwrap();
    let digest = s.rewind(&c, "mid", "found f").unwrap();
    let p = s.active_path(&c).unwrap();
    assert_eq!(p[p.len() - 2].id, target);
    assert_eq!(p[p.len() - 1].id, digest);
}

// ---- Rule 6: resume ------------------------------------------------------------------------------------

#[test]
fn resume_keeps_the_newest_messages_and_never_starts_on_an_orphaned_result() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    s.append_turn(&c, &tool_turn("one", &["a"])).unwrap();
    s.append_turn(&c, &tool_turn("two", &["b", "c"])).unwrap();
    // path: u a(call) u(res) a | u a(call b,c) u(res b,c) a  (8 messages)
    for n in 0..=9 {
        let r = s.resume(&c, Budget::Messages(n)).unwrap();
        assert!(r.messages.len() <= n, "n={n}");
        if let Some(first) = r.messages.first() {
            assert!(!first.has_tool_result(), "n={n} starts on a tool_result");
        }
        cairn::pairs::check(&r.messages, false).unwrap();
        assert_eq!(r.trimmed + r.messages.len(), 8, "n={n}");
    }
    // budget 2 would start on the results of turn two: they are skipped, leaving the final reply only
    let r = s.resume(&c, Budget::Messages(2)).unwrap();
    assert_eq!(r.messages.len(), 1);
    let r = s.resume(&c, Budget::Messages(3)).unwrap();
    assert_eq!(r.messages.len(), 3);
    assert!(r.messages[0].has_tool_use());
}

#[test]
fn resume_by_tokens_fits_the_budget() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    for i in 0..20 {
        s.append_turn(
            &c,
            &simple_turn(&format!("question {i} {}", "word ".repeat(50)), "answer"),
        )
        .unwrap();
    }
    let all = s.active_path(&c).unwrap();
    let total: u64 = all.iter().map(cairn::tokens::message).sum();
    let r = s.resume(&c, Budget::Tokens(total / 2)).unwrap();
    let used: u64 = r.messages.iter().map(cairn::tokens::message).sum();
    assert!(used <= total / 2);
    assert!(r.messages.len() > 4 && r.messages.len() < 40);
    assert_eq!(r.messages.last().unwrap().id, all.last().unwrap().id);
}

#[test]
fn trimmed_checkpoints_are_reported_and_rewinding_to_them_is_an_error_not_a_clamp() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    s.checkpoint(&c, "early").unwrap();
    for i in 0..5 {
        s.append_turn(&c, &simple_turn(&format!("q{i}"), "r"))
            .unwrap();
    }
    let late = s.checkpoint(&c, "late").unwrap();
    s.append_turn(&c, &simple_turn("z", "y")).unwrap();
    let tip_before = s.conversation(&c).unwrap().tip;

    let r = s.resume(&c, Budget::Messages(4)).unwrap();
    let dropped: Vec<_> = r
        .dropped_checkpoints
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(dropped, vec!["early"]);
    let err = s.rewind(&c, "early", "x").unwrap_err();
    assert!(matches!(err, StoreError::CheckpointTrimmed { .. }), "{err}");
    assert_eq!(
        err.to_string().split(" (").next().unwrap(),
        "checkpoint early was trimmed"
    );
    assert_eq!(
        s.conversation(&c).unwrap().tip,
        tip_before,
        "a refused rewind moved the tip"
    );
    // a checkpoint inside the window still works, and lands exactly on its message
    let d = s.rewind(&c, "late", "y").unwrap();
    assert_eq!(
        s.path_to(&c, &d).unwrap().iter().rev().nth(1).unwrap().id,
        late.message
    );
    // a wider resume ends the narrow window
    let r = s.resume(&c, Budget::Messages(1000)).unwrap();
    assert!(r.dropped_checkpoints.is_empty());
    s.rewind(&c, "early", "back to the start").unwrap();
}

#[test]
fn resume_leaves_out_a_dangling_tool_call_at_the_end() {
    let mut s = mem();
    let imported = vec![
        ImportedMessage {
            parent: None,
            message: user("go"),
        },
        ImportedMessage {
            parent: Some(0),
            message: assistant("ok"),
        },
        ImportedMessage {
            parent: Some(1),
            message: user("more"),
        },
        ImportedMessage {
            parent: Some(2),
            message: NewMessage::new(Role::Assistant, vec![call("a")]),
        },
    ];
    let (c, ids) = s
        .import_conversation(None, &imported, None, &[], &json!(null))
        .unwrap();
    let r = s.resume(&c, Budget::Messages(10)).unwrap();
    assert_eq!(r.incomplete_tail, vec![ids[3].clone()]);
    assert_eq!(r.messages.len(), 3);
    cairn::pairs::check(&r.messages, false).unwrap();
}

// ---- Rule 7: retry -------------------------------------------------------------------------------------

#[test]
fn retry_tells_nothing_loaded_nothing_to_retry_and_retryable_apart() {
    let mut s = mem();
    assert!(matches!(
        s.retry("0123456789abcdef").unwrap(),
        Retry::NothingLoaded { .. }
    ));
    let c = s.create_conversation(None).unwrap();
    assert!(matches!(s.retry(&c).unwrap(), Retry::NothingLoaded { .. }));
    let done = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    match s.retry(&c).unwrap() {
        Retry::NothingToRetry { tip } => assert_eq!(tip, done[1]),
        r => panic!("{r:?}"),
    }
    // an imported transcript whose last turn has a tool_use with no result
    let imported = vec![
        ImportedMessage {
            parent: None,
            message: user("first"),
        },
        ImportedMessage {
            parent: Some(0),
            message: assistant("ok"),
        },
        ImportedMessage {
            parent: Some(1),
            message: user("run the tests"),
        },
        ImportedMessage {
            parent: Some(2),
            message: NewMessage::new(Role::Assistant, vec![call("t")]),
        },
    ];
    let (i, ids) = s
        .import_conversation(None, &imported, None, &[], &json!(null))
        .unwrap();
    match s.retry(&i).unwrap() {
        Retry::Retryable {
            failed_tip,
            restart_at,
            prompt,
            why,
        } => {
            assert_eq!(failed_tip, ids[3]);
            assert_eq!(restart_at.as_deref(), Some(ids[1].as_str()));
            assert_eq!(
                prompt.unwrap()["content"][0]["text"],
                json!("run the tests")
            );
            assert!(why.contains("tool call"), "{why}");
        }
        r => panic!("{r:?}"),
    }
    // the tip is back at the boundary, so the turn can be sent again as a sibling
    assert_eq!(
        s.conversation(&i).unwrap().tip.as_deref(),
        Some(ids[1].as_str())
    );
    s.append_turn(&i, &simple_turn("run the tests", "all pass"))
        .unwrap();
    assert!(matches!(s.retry(&i).unwrap(), Retry::NothingToRetry { .. }));
}

#[test]
fn a_failed_reply_is_retryable() {
    let mut s = mem();
    let mut failed = assistant("API Error: overloaded");
    failed.meta = json!({"isApiErrorMessage": true});
    let imported = vec![
        ImportedMessage {
            parent: None,
            message: user("go"),
        },
        ImportedMessage {
            parent: Some(0),
            message: failed,
        },
    ];
    let (c, _) = s
        .import_conversation(None, &imported, None, &[], &json!(null))
        .unwrap();
    match s.retry(&c).unwrap() {
        Retry::Retryable {
            restart_at, why, ..
        } => {
            assert_eq!(restart_at, None);
            assert!(why.contains("failed"), "{why}");
        }
        r => panic!("{r:?}"),
    }
}

// ---- Rule 8: operation log and undo --------------------------------------------------------------------

#[test]
fn undo_restores_pointers_and_never_deletes_messages() {
    let mut s = mem();
    let c = s.create_conversation(None).unwrap();
    let a = s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    let b = s.append_turn(&c, &simple_turn("c", "d")).unwrap();
    s.branch(&c, &a[1], None).unwrap();
    s.checkpoint(&c, "cp").unwrap();
    let f = s.fork(&c, None).unwrap();
    let d = s.rewind(&c, "cp", "digest").unwrap();
    let count = s.conversation(&c).unwrap().messages;
    let kinds: Vec<_> = s
        .operations(&c)
        .unwrap()
        .into_iter()
        .map(|o| o.kind)
        .collect();
    assert_eq!(
        kinds,
        ["append", "append", "branch", "checkpoint", "fork", "rewind"]
    );

    let op = s.undo(&c).unwrap(); // rewind
    assert_eq!(op.kind, "rewind");
    assert_eq!(op.tip_after.as_deref(), Some(d.as_str()));
    assert_eq!(
        s.conversation(&c).unwrap().tip.as_deref(),
        Some(a[1].as_str())
    );
    assert_eq!(s.undo(&c).unwrap().kind, "fork");
    assert!(
        s.conversations().unwrap().iter().all(|x| x.id != f),
        "fork still listed"
    );
    assert_eq!(s.undo(&c).unwrap().kind, "checkpoint");
    assert!(s.checkpoints(&c).unwrap().is_empty());
    assert_eq!(s.undo(&c).unwrap().kind, "branch");
    assert_eq!(
        s.conversation(&c).unwrap().tip.as_deref(),
        Some(b[1].as_str())
    );
    assert_eq!(s.undo(&c).unwrap().kind, "append");
    assert_eq!(
        s.conversation(&c).unwrap().tip.as_deref(),
        Some(a[1].as_str())
    );
    assert_eq!(s.undo(&c).unwrap().kind, "append");
    assert_eq!(s.conversation(&c).unwrap().tip, None);
    assert!(matches!(
        s.undo(&c).unwrap_err(),
        StoreError::NothingToUndo(_)
    ));
    assert_eq!(
        s.conversation(&c).unwrap().messages,
        count,
        "undo deleted messages"
    );
}

// ---- The schema enforces the rules whatever code writes -----------------------------------------------

#[test]
fn messages_are_immutable_and_parents_stay_in_their_conversation_at_the_sql_level() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let (c1, c2, m) = {
        let mut s = Store::open(&path).unwrap();
        let c1 = s.create_conversation(None).unwrap();
        let c2 = s.create_conversation(None).unwrap();
        let m = s.append_turn(&c1, &simple_turn("a", "b")).unwrap();
        s.append_turn(&c2, &simple_turn("a", "b")).unwrap();
        (c1, c2, m)
    };
    let conn = rusqlite::Connection::open(&path).unwrap();
    let upd = conn.execute("UPDATE messages SET content = '[]' WHERE id = ?1", [&m[0]]);
    assert!(upd.unwrap_err().to_string().contains("immutable"));
    let del = conn.execute("DELETE FROM messages WHERE id = ?1", [&m[0]]);
    assert!(del.unwrap_err().to_string().contains("never deleted"));
    let cross = conn.execute(
        "INSERT INTO messages (id, conversation, parent, depth, role, content, created_at)
         SELECT 'x', (SELECT seq FROM conversations WHERE id = ?1), seq, depth + 1, 'user', '[]', 0
         FROM messages WHERE id = ?2",
        [&c2, &m[1]],
    );
    assert!(cross.unwrap_err().to_string().contains("same conversation"));
    let tip = conn.execute(
        "UPDATE conversations SET tip = (SELECT seq FROM messages WHERE id = ?1) WHERE id = ?2",
        [&m[1], &c2],
    );
    assert!(tip.unwrap_err().to_string().contains("own conversation"));
    let _ = c1;
}

// ---- Bad input never panics and loses nothing ----------------------------------------------------------

#[test]
fn unknown_ids_get_one_line_errors() {
    let mut s = mem();
    for e in [
        s.active_path("nope").unwrap_err(),
        s.branch("nope", "x", None).unwrap_err(),
        s.fork("nope", None).unwrap_err(),
        s.checkpoint("nope", "l").unwrap_err(),
        s.undo("nope").unwrap_err(),
    ] {
        let m = e.to_string();
        assert_eq!(m, "no conversation nope");
    }
}

#[test]
fn a_missing_folder_is_an_error_not_a_create() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("missing").join("s.db");
    let e = Store::open(&p).err().unwrap().to_string();
    assert!(e.contains("does not exist"), "{e}");
    assert!(!p.exists());
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.db");
    {
        let mut s = Store::open(&p).unwrap();
        let c = s.create_conversation(None).unwrap();
        s.append_turn(&c, &simple_turn("a", "b")).unwrap();
    }
    {
        let conn = rusqlite::Connection::open(&p).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let e = Store::open(&p).err().unwrap();
    assert!(
        matches!(e, StoreError::NewerSchema { found: 99, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("s.db"), "{e}");
    let conn = rusqlite::Connection::open(&p).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn a_corrupted_or_foreign_file_is_refused_and_left_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&junk, &bytes).unwrap();
    let e = Store::open(&junk).err().unwrap().to_string();
    assert!(e.contains("junk.db"), "{e}");
    assert_eq!(std::fs::read(&junk).unwrap(), bytes);

    let foreign = dir.path().join("other.sqlite");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch("CREATE TABLE notes(x); INSERT INTO notes VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&foreign).unwrap();
    let e = Store::open(&foreign).err().unwrap().to_string();
    assert!(e.contains("not a cairn store"), "{e}");
    assert_eq!(std::fs::read(&foreign).unwrap(), before);

    // a store whose pages were overwritten in the middle: opening or reading fails with an error, no panic
    let hurt = dir.path().join("hurt.db");
    {
        let mut s = Store::open(&hurt).unwrap();
        let c = s.create_conversation(None).unwrap();
        for i in 0..200 {
            s.append_turn(&c, &simple_turn(&format!("q{i} {}", "x".repeat(300)), "a"))
                .unwrap();
        }
    }
    let mut data = std::fs::read(&hurt).unwrap();
    let mid = data.len() / 2;
    for b in &mut data[mid..mid + 8192] {
        *b = 0xAB;
    }
    std::fs::write(&hurt, &data).unwrap();
    let _ = std::fs::remove_file(dir.path().join("hurt.db-wal"));
    match Store::open(&hurt) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(s) => {
            let bad = s.integrity_check().map(|r| r.is_err()).unwrap_or(true)
                || s.conversations()
                    .and_then(|cs| cs.iter().try_for_each(|c| s.active_path(&c.id).map(|_| ())))
                    .is_err();
            assert!(bad, "an overwritten store passed every check");
        }
    }
}

#[test]
fn the_v3_migration_derives_node_flags_for_rows_already_stored() {
    // a store written before v3 had no error/image/marker/thinking bits: the migration computes them, also for
    // a fork's copies (which hold no body of their own)
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let demo = {
        let mut s = Store::open(&path).unwrap();
        cairn::demo::install(&mut s).unwrap()
    };
    let flags = |s: &Store, c: &str| {
        s.heads(c)
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h.has_error(),
                    h.has_image(),
                    h.has_thinking(),
                    h.is_compaction(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (want, want_fork) = {
        let s = Store::open(&path).unwrap();
        (flags(&s, &demo.conversation), flags(&s, &demo.fork))
    };
    assert!(want.iter().any(|f| f.0) && want.iter().any(|f| f.1) && want.iter().any(|f| f.2));
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "UPDATE messages SET flags = flags & 31; DROP TABLE measures; DROP TABLE store_values;
             DROP TABLE search; DROP TABLE tool_calls; DROP INDEX messages_by_body; DROP TABLE usage_days;
             ALTER TABLE conversations DROP COLUMN project; PRAGMA user_version = 2;",
        )
        .unwrap();
        let high: i64 = c
            .query_row("SELECT count(*) FROM messages WHERE flags >= 32", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(high, 0);
    }
    // opening migrates v2 → v3: the bits are back, the same as written
    let s = Store::open(&path).unwrap();
    assert_eq!(flags(&s, &demo.conversation), want);
    assert_eq!(flags(&s, &demo.fork), want_fork);
}

/// The demo's measures as a fresh store writes them, and as a migration computes them again after `downgrade` (SQL
/// that takes the store back to an older version): (written, written fork, migrated, migrated fork).
fn measures_written_and_migrated(downgrade: &str) -> [Vec<cairn::store::Facts>; 4] {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let demo = {
        let mut s = Store::open(&path).unwrap();
        cairn::demo::install(&mut s).unwrap()
    };
    let facts = |s: &Store, c: &str| s.facts(c, &s.heads(c).unwrap()).unwrap();
    let (want, want_fork) = {
        let s = Store::open(&path).unwrap();
        (facts(&s, &demo.conversation), facts(&s, &demo.fork))
    };
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(downgrade)
        .unwrap();
    let s = Store::open(&path).unwrap();
    [
        want,
        want_fork,
        facts(&s, &demo.conversation),
        facts(&s, &demo.fork),
    ]
}

#[test]
fn the_v4_migration_measures_every_row_already_stored_as_a_write_would() {
    // a store written before v4 had no measures: the migration computes them from the bodies, the same numbers
    // an insert writes (fork copies take their body's), with the model and usage the rows carry
    let [want, want_fork, got, got_fork] = measures_written_and_migrated(
        "DROP TABLE measures; DROP TABLE store_values; DROP TABLE search; DROP TABLE tool_calls;
         DROP INDEX messages_by_body; DROP TABLE usage_days; ALTER TABLE conversations DROP COLUMN project;
         PRAGMA user_version = 3;",
    );
    assert!(
        want.iter()
            .any(|f| f.measure.large_results > 0 && f.measure.chars > 0)
    );
    assert!(
        want.iter()
            .any(|f| f.measure.images > 0 && f.measure.image_bytes > 0)
    );
    assert!(want.iter().any(|f| f.measure.large_result_chars > 0));
    assert_eq!(got, want);
    assert_eq!(got_fork, want_fork);
}

#[test]
fn stored_measures_read_back_field_for_field() {
    // a path's measures are read from one packed column (v13) in a fixed order: each field must come back in its
    // own place, the usage a reply recorded whole (a NULL apart from a zero), what the demo's messages measure
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("m.db")).unwrap();
    let demo = cairn::demo::install(&mut s).unwrap();
    let c = s.create_conversation(None).unwrap();
    let mut reply = assistant("measured");
    reply.meta = json!({"model": "claude-sonnet-4-5"});
    reply.usage = Some(cairn::model::Usage {
        input_tokens: 11,
        output_tokens: 22,
        cache_read_input_tokens: 33,
        cache_creation_input_tokens: 44,
        cache_creation_1h_input_tokens: 5,
        requests: 6,
        precision: 7,
        web_search_requests: 8,
    });
    s.append_turn(&c, &[user("asked"), reply.clone()]).unwrap();
    let facts = s.facts(&c, &s.heads(&c).unwrap()).unwrap();
    assert_eq!(facts[0].usage, None);
    assert_eq!(facts[0].model, None);
    assert_eq!(facts[1].usage, reply.usage);
    assert_eq!(facts[1].model.as_deref(), Some("claude-sonnet-4-5"));
    let messages = s.messages(&demo.conversation).unwrap();
    let heads = s.heads(&demo.conversation).unwrap();
    let facts = s.facts(&demo.conversation, &heads).unwrap();
    for (h, f) in heads.iter().zip(&facts) {
        let m = messages.iter().find(|m| m.id == h.id).unwrap();
        let model = cairn::model::model_of(&m.meta);
        let mut want = cairn::models::measure(
            &m.content,
            model,
            m.usage.as_ref(),
            cairn::tokens::Tokenizer::Estimate,
        );
        // what a stored image's bytes weigh is the store's, not the text's
        want.image_bytes = f.measure.image_bytes;
        want.large_result_image_bytes = f.measure.large_result_image_bytes;
        assert_eq!(f.measure, want, "{}", h.id);
        assert_eq!(
            (f.model.as_deref(), f.usage, f.created_at),
            (model, m.usage, m.created_at)
        );
    }
    // every field the demo can fill is filled somewhere, so a field read from another's place shows
    type Field = fn(&cairn::tokens::Measure) -> u64;
    let filled: [(&str, Field); 11] = [
        ("text", |m| m.text),
        ("tool_use", |m| m.tool_use),
        ("tool_result", |m| m.tool_result),
        ("image", |m| m.image),
        ("chars", |m| m.chars),
        ("images", |m| m.images),
        ("image_bytes", |m| m.image_bytes),
        ("large_results", |m| m.large_results),
        ("large_result_tokens", |m| m.large_result_tokens),
        ("large_result_chars", |m| m.large_result_chars),
        ("tool_calls", |m| m.tool_calls),
    ];
    for (name, field) in filled {
        assert!(facts.iter().any(|f| field(&f.measure) > 0), "{name}");
    }
}

#[test]
fn the_v7_migration_counts_the_characters_of_large_results_already_stored() {
    // a store at v6 has no large_result_chars: the migration reads them from the bodies (a fork's copy from its
    // body), the figure an insert writes
    let [want, want_fork, got, got_fork] = measures_written_and_migrated(
        "ALTER TABLE measures DROP COLUMN packed; ALTER TABLE measures DROP COLUMN large_result_chars; PRAGMA user_version = 6;",
    );
    assert!(want.iter().any(|f| f.measure.large_result_chars > 1000));
    assert_eq!(got, want);
    assert_eq!(got_fork, want_fork);
}

#[test]
fn the_v9_migration_adds_the_count_of_requests_a_usage_sums() {
    // a store at v8 has no requests column: every reply stored before it is one request's, measured as before
    let [want, want_fork, got, got_fork] = measures_written_and_migrated(
        "ALTER TABLE measures DROP COLUMN packed; ALTER TABLE measures DROP COLUMN requests; PRAGMA user_version = 8;",
    );
    assert!(want.iter().any(|f| f.measured_input().is_some()));
    assert_eq!(got, want);
    assert_eq!(got_fork, want_fork);
}

#[test]
fn the_v12_migration_counts_the_hidden_thinking_of_replies_already_stored() {
    // a store at v11 measured a reply whose thinking Claude Code hides (`"thinking": ""`) as holding none: the
    // migration takes it from the reply's output tokens, the figure an import writes now, and its estimate with it
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/hidden-thinking-2.1.jsonl");
    let id = {
        let mut s = Store::open(&path).unwrap();
        let o = cairn::import::import_file(&mut s, &file, None);
        assert!(o.error.is_none(), "{:?}", o.error);
        o.conversations[0].clone()
    };
    let read = |s: &Store| {
        let heads = s.heads(&id).unwrap();
        let facts = s.facts(&id, &heads).unwrap();
        (heads.iter().map(|h| h.tokens).collect::<Vec<_>>(), facts)
    };
    let want = read(&Store::open(&path).unwrap());
    assert!(want.1.iter().any(|f| f.measure.thinking > 1000));
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "UPDATE messages SET tokens = tokens - (SELECT thinking FROM measures m WHERE m.seq = messages.seq);
             UPDATE measures SET thinking = 0; PRAGMA user_version = 11;",
        )
        .unwrap();
    let s = Store::open(&path).unwrap();
    assert_eq!(read(&s), want);
}

/// A store holding one turn whose reply is `content` (of `model`, 900 tokens in and `output` out), as a write
/// makes it now, then aged by `age` (SQL making the figures an older version wrote, and its `user_version`):
/// opened again, the migrations give the figures of the write.
fn a_migration_restores_the_written_figures(
    content: Vec<Block>,
    model: &str,
    output: u64,
    age: impl Fn(&[u64]) -> String,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let read = |s: &Store, c: &str| {
        let heads = s.heads(c).unwrap();
        let facts = s.facts(c, &heads).unwrap();
        (heads.iter().map(|h| h.tokens).collect::<Vec<_>>(), facts)
    };
    let (c, want) = {
        let mut s = Store::open(&path).unwrap();
        let c = s.create_conversation(None).unwrap();
        let mut reply = NewMessage::new(Role::Assistant, content);
        reply.meta = json!({"model": model});
        reply.usage = Some(cairn::model::Usage {
            input_tokens: 900,
            output_tokens: output,
            ..Default::default()
        });
        s.append_turn(&c, &[user("why does drain_order fail?"), reply])
            .unwrap();
        let want = read(&s, &c);
        (c, want)
    };
    let thinking: Vec<u64> = want.1.iter().map(|f| f.measure.thinking).collect();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(&age(&thinking))
        .unwrap();
    assert_eq!(read(&Store::open(&path).unwrap(), &c), want);
}

#[test]
fn the_v14_migration_counts_signed_thinking_whole_where_a_summary_shows() {
    // a reply showing a summary of its thinking with the provider's whole reasoning beside it (Copilot's
    // reasoningOpaque, a signature) was measured at the summary before v14: the migration takes the thinking from
    // the reply's output tokens, the figure a write makes now, and the message's estimate with it
    let content = vec![
        Block::Thinking {
            thinking: "Checked the queue: the notify comes before the lock.".into(),
            signature: Some("opaque".into()),
        },
        Block::text("Take the lock first."),
    ];
    let shown = cairn::tokens::measure(&content).thinking;
    a_migration_restores_the_written_figures(content, "claude-sonnet-4-6", 3_000, |thinking| {
        let hidden = thinking[1] - shown;
        assert!(hidden > 1000, "{thinking:?}");
        format!(
            "UPDATE measures SET thinking = {shown} WHERE thinking > {shown};
             UPDATE messages SET tokens = tokens - {hidden} WHERE role = 'assistant';
             PRAGMA user_version = 13;"
        )
    });
}

#[test]
fn the_v15_migration_takes_unsigned_thinking_out_of_what_is_sent() {
    // a reply's thinking no provider signed (Gemini CLI's thoughts) was counted in every later request before
    // v15: the migration measures it as a write does now (nothing), and the message's estimate with it
    let thought = "**Locating the queue** The notify comes before the lock in drain_order.";
    let content = vec![
        Block::Thinking {
            thinking: thought.into(),
            signature: None,
        },
        Block::text("Take the lock first."),
    ];
    let shown = cairn::tokens::text(thought);
    a_migration_restores_the_written_figures(content, "gemini-3.1-pro-preview", 300, |thinking| {
        assert_eq!(thinking[1], 0);
        format!(
            "UPDATE measures SET thinking = {shown} WHERE seq = (SELECT max(seq) FROM messages);
             UPDATE messages SET tokens = tokens + {shown} WHERE role = 'assistant';
             PRAGMA user_version = 14;"
        )
    });
}

#[test]
fn data_version_moves_for_other_connections_commits_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.db");
    let mut a = Store::open(&path).unwrap();
    let c = a.create_conversation(None).unwrap();
    let v0 = a.data_version().unwrap();
    a.append_turn(&c, &[user("own write"), assistant("ok")])
        .unwrap();
    assert_eq!(
        a.data_version().unwrap(),
        v0,
        "its own commits do not count"
    );
    let mut b = Store::open(&path).unwrap();
    b.append_turn(&c, &[user("someone else"), assistant("ok")])
        .unwrap();
    assert_ne!(a.data_version().unwrap(), v0);
}
