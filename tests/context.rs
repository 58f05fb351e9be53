//! The /context breakdown with what each rung would reclaim (calibration and replay on real sessions: replay.rs).

#[path = "support/helpers.rs"]
mod helpers;

use cairn::reclaim::replay::Estimator;
use cairn::reclaim::report::ContextReport;
use cairn::reclaim::rungs::covered_middle;
use cairn::reclaim::{ELIDE_WORTH_IT, PathView, Policy, REPLY_RESERVE, layout, report};
use cairn::store::Store;

#[test]
fn context_reports_what_each_rung_would_reclaim_outside_the_protect_window() {
    let mut s = Store::open_in_memory().unwrap();
    let body = "fn example() { let x = compute(42); }\n".repeat(150);
    let c = helpers::tool_session(&mut s, 60, &|i| {
        (
            body.clone(),
            false,
            (i % 10 == 0).then(|| vec![i as u8; 64]),
        )
    });
    let view = PathView::load(&s, &c, None).unwrap();
    let policy = Policy::new(&Default::default(), Some("claude-opus-4-7"), None, None);
    let est = Estimator::for_path(
        &Default::default(),
        Some(&s),
        &view,
        (&policy.model, cairn::tokens::Tokenizer::Estimate),
    )
    .unwrap();
    let r = report::report(&view, &policy, &est);
    // the catalog's window for Opus 4.7
    assert_eq!(r.window, 1_000_000);
    assert!(r.messages.tool_results > 100_000, "{:?}", r.messages);
    let rung = |n: &str| r.rungs.iter().find(|g| g.name == n).unwrap().clone();
    let elide = rung("elide");
    assert!(elide.would_run && elide.saves > ELIDE_WORTH_IT);
    // results inside the newest 40k tokens are protected
    assert!(elide.items < 60 && elide.items > 30, "{}", elide.items);
    let images = rung("images");
    assert!(images.items >= 4 && images.items <= 6, "{}", images.items);
    let snap = rung("snapshot");
    assert!(snap.saves > 50_000 && snap.model_calls == 0);
    assert_eq!(rung("summary").model_calls, 1);
    assert!(r.free < 1_000_000 - REPLY_RESERVE as i64);
    // the snapshot's middle starts after the first turn and ends on a turn boundary
    let l = layout(&view, &[], view.len());
    let m = covered_middle(&view, &l, policy.protect);
    assert_eq!(m[0], 2);
    assert!(view.heads[*m.last().unwrap()].ends_turn());
}

#[test]
fn a_path_counted_by_a_public_tokenizer_reads_back_what_it_counted_before() {
    // a GPT model's path is counted by o200k; the counts are kept with the messages, and a second count reads them
    // back: the same numbers, message for message, as counting the bodies again
    let mut s = Store::open_in_memory().unwrap();
    let line = "fn example() { let x = compute(42); } // 第一行\n";
    // bodies of many lengths: counted on several threads, each count must land on its own message
    let c = helpers::tool_session(&mut s, 60, &|i| (line.repeat(i % 13 + 1), false, None));
    let view = PathView::load(&s, &c, None).unwrap();
    let tk = cairn::tokens::Tokenizer::O200k;
    let first = view.retokenized(Some(&s), tk).unwrap();
    let again = view.retokenized(Some(&s), tk).unwrap();
    let measures = |v: &PathView| v.facts.iter().map(|f| f.measure).collect::<Vec<_>>();
    assert_eq!(measures(&first), measures(&again));
    // counted by o200k, not the estimate the store measured at write time
    assert_ne!(measures(&first), measures(&view));
    // and the same as a path held in memory counts (nothing kept, the bodies counted)
    let messages = s.active_path(&c).unwrap();
    let held = PathView::from_messages(&c, messages)
        .retokenized(None, tk)
        .unwrap();
    assert_eq!(measures(&first), measures(&held));
    // message for message what the tokenizer makes of each body alone
    let one_by_one: Vec<_> = s
        .active_path(&c)
        .unwrap()
        .iter()
        .map(|m| cairn::models::measure(&m.content, None, m.usage.as_ref(), tk))
        .collect();
    assert_eq!(measures(&first), one_by_one);
}

#[test]
fn context_compare_and_compact_measure_a_context_by_one_figure() {
    // a real Claude Code session whose replies carry what Anthropic measured: some 23k tokens of system prompt and
    // tools go with every request beside the messages. `send` tests its threshold against the next request as the
    // one estimator predicts it; the comparison, the preview and the ladder that makes room must count the same
    use cairn::commands::{Action, Compacted, Outcome, Quiet, run};
    use cairn::reclaim::compare::Candidate;
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-2.0.5-image-paste.jsonl");
    let c = cairn::import::import_file(&mut s, &f, None).conversations[0].clone();
    let settings = cairn::reclaim::Settings::default();
    let cancel = AtomicBool::new(false);
    let mut go = |s: &mut Store, a: Action| run(s, &settings, a, &Quiet, &cancel).unwrap();
    let context = |s: &mut Store, go: &mut dyn FnMut(&mut Store, Action) -> Outcome| match go(
        s,
        Action::Context {
            conversation: c.clone(),
            model: None,
        },
    ) {
        Outcome::Context(r) => r,
        _ => panic!("not a context report"),
    };
    let r = context(&mut s, &mut go);
    let raw = r.messages.text
        + r.messages.tool_use
        + r.messages.tool_results
        + r.messages.images
        + r.messages.thinking;
    assert!(
        r.predicted_total > raw + 10_000,
        "the overhead is sent too: {r:?}"
    );
    let target = 60_000;
    assert!(raw < target && r.predicted_total > target, "{raw} {r:?}");
    let rows = match go(
        &mut s,
        Action::Compare {
            conversation: c.clone(),
            budget: Some(target),
            profile: None,
        },
    ) {
        Outcome::Compared { rows, .. } => rows,
        _ => panic!("not a comparison"),
    };
    let row = |n: Candidate| rows.iter().find(|r| r.strategy == n).unwrap();
    let none = row(Candidate::None);
    assert_eq!(
        none.text_tokens_before + none.image_tokens_before,
        r.predicted_total
    );
    assert!(!none.reaches_budget);
    let snapshot = row(Candidate::Rung(cairn::reclaim::Strategy::Snapshot));
    // the ladder `compact` runs needs no model: here the snapshot alone is taken
    let o = match go(
        &mut s,
        Action::Compact {
            conversation: c.clone(),
            strategy: None,
            force: false,
            target: Some(target),
            protect: None,
            instructions: None,
            provider: None,
            from: None,
            to: None,
        },
    ) {
        Outcome::Compacted(Compacted::Ladder(o)) => o,
        _ => panic!("not a ladder"),
    };
    assert_eq!(o.tokens_before, r.predicted_total, "{o:?}");
    assert!(!o.steps.is_empty(), "{o:?}");
    assert_eq!(
        o.tokens_after,
        snapshot.text_tokens_after + snapshot.image_tokens_after,
        "{o:?}"
    );
    // and what `context` says the next request is, now that the markers are written, is what the ladder left
    let after = context(&mut s, &mut go);
    assert_eq!(after.predicted_total, o.tokens_after);
    assert!(after.predicted_total < r.predicted_total);
    // a snapshot lays the middle out anew: the next request is estimated from scratch. Elision takes out only the
    // results it elides: the next is the last measured prompt less them, what the estimate misses carried over
    let mut s = Store::open(dir.path().join("elided.db")).unwrap();
    let c = cairn::import::import_file(&mut s, &f, None).conversations[0].clone();
    assert_eq!(after.predicted_total, after.estimated_total);
    let context = |s: &mut Store| match run(
        s,
        &settings,
        Action::Context {
            conversation: c.clone(),
            model: None,
        },
        &Quiet,
        &cancel,
    )
    .unwrap()
    {
        Outcome::Context(r) => r,
        _ => panic!("not a context report"),
    };
    let before = context(&mut s);
    let applied = match run(
        &mut s,
        &settings,
        helpers::forced_compaction(&c, cairn::reclaim::Strategy::Elide),
        &Quiet,
        &cancel,
    )
    .unwrap()
    {
        Outcome::Compacted(Compacted::Rung(_, Some(a))) => a,
        _ => panic!("elision had nothing to do"),
    };
    let elided = context(&mut s);
    assert_eq!(applied.tokens_before, before.predicted_total);
    assert_eq!(elided.predicted_total, applied.tokens_after);
    assert!(elided.predicted_total < before.predicted_total);
    let missed = |r: &ContextReport| r.predicted_total as i64 - r.estimated_total as i64;
    assert_ne!(missed(&before), 0);
    assert!(
        (missed(&elided) - missed(&before)).abs() <= 2,
        "{} {}",
        missed(&before),
        missed(&elided)
    );
}
