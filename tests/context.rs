//! The /context breakdown with what each rung would reclaim (calibration and replay on real sessions: replay.rs).

#[path = "support/helpers.rs"]
mod helpers;

use cairn::reclaim::replay::Estimator;
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
    let est = Estimator::for_path(&Default::default(), Some(&s), &view, &policy.model).unwrap();
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
    let body = "fn example() { let x = compute(42); } // 第一行\n".repeat(40);
    let c = helpers::tool_session(&mut s, 30, &|_| (body.clone(), false, None));
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
}
