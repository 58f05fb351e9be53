//! The context over time: one point per reply on the active path, measured where the transcript recorded usage,
//! estimated everywhere, compactions marked at the reply after them, and the estimate falling where they cut.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::reclaim::Settings;
use cairn::reclaim::timeline::Timeline;
use cairn::store::Store;

fn timeline(s: &mut Store, conv: &str) -> Timeline {
    match commands::run(
        s,
        &Settings::default(),
        Action::Timeline {
            conversation: conv.into(),
            model: None,
        },
        &Quiet,
        &AtomicBool::new(false),
    )
    .unwrap()
    {
        Outcome::Timeline(t) => t,
        o => panic!("{o:?}"),
    }
}

fn import(s: &mut Store, f: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(f);
    let o = cairn::import::import_file(s, &p, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    o.conversations[0].clone()
}

#[test]
fn a_harness_compaction_shows_as_a_drop_at_the_reply_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("t.db")).unwrap();
    let conv = import(&mut s, "claude-code/cc-compact-boundary.jsonl");
    let t = timeline(&mut s, &conv);
    let replies = s
        .active_path(&conv)
        .unwrap()
        .iter()
        .filter(|m| m.role == cairn::model::Role::Assistant)
        .count();
    assert_eq!(t.points.len(), replies, "one point per reply on the path");
    let at = t
        .points
        .iter()
        .position(|p| p.compaction)
        .expect("a compaction");
    assert_eq!(t.points.iter().filter(|p| p.compaction).count(), 1);
    assert!(at > 0);
    assert!(
        t.points[at].estimated < t.points[at - 1].estimated,
        "the context falls after the compaction: {:?} -> {:?}",
        t.points[at - 1],
        t.points[at]
    );
    // where the provider measured, the estimate is close
    for p in t.points.iter().filter(|p| p.measured.is_some()) {
        let m = p.measured.unwrap() as f64;
        assert!(((p.estimated as f64 - m) / m).abs() < 0.2, "{p:?}");
    }
    assert!(t.window >= 200_000 && t.threshold < t.window);
    let json = serde_json::to_value(&t).unwrap();
    let p0 = &json["points"][0];
    for k in ["message", "measured", "estimated", "compaction"] {
        assert!(p0.get(k).is_some(), "{k} missing: {p0}");
    }
    assert!(json["window"].is_u64() && json["threshold"].is_u64());
}

#[test]
fn pi_compactions_are_marked_and_estimates_track_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("t.db")).unwrap();
    let conv = import(&mut s, "pi/pi-v1-before-compaction-two-compactions.jsonl");
    let t = timeline(&mut s, &conv);
    assert_eq!(t.points.iter().filter(|p| p.compaction).count(), 2);
    let errs: Vec<f64> = t
        .points
        .iter()
        .filter_map(|p| {
            p.measured
                .map(|m| ((p.estimated as f64 - m as f64) / m as f64).abs())
        })
        .collect();
    assert!(errs.len() > 100);
    let mut sorted = errs.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = sorted[sorted.len() / 2];
    assert!(median < 0.03, "median error {median}");
}

/// The timeline hands its estimator the totals it made: the estimator is the one `/context` makes from the path
/// alone, and each reply's point is that estimator's figure, on real sessions of each kind of path (compactions whose
/// text the harness never recorded, harness compactions, a harness that changed what it sends, a path counted by
/// another tokenizer).
#[test]
fn the_timeline_estimates_each_reply_with_the_estimator_context_makes() {
    use cairn::reclaim::assemble::ModelReader;
    use cairn::reclaim::replay::{self, Estimator};
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
    let mut checked = 0;
    for f in [
        "aider/aider-0.62-0.68-claude-3.5-sonnet-opus-infinite-output.aider.chat.history.md",
        "pi/pi-v1-before-compaction-two-compactions.jsonl",
        "opencode/opencode-1.4.3-export-auto-compaction-copilot-sonnet-4.6.json",
        "gemini-cli/gemini-cli-2026-03-flash-preview-api-errors-model-switches.json",
        "claude-code/cc-2.0.5-image-paste.jsonl",
    ] {
        let mut s = Store::open_in_memory().unwrap();
        let o = cairn::import::import_file(&mut s, &samples.join(f), None);
        assert!(o.error.is_none(), "{f}: {:?}", o.error);
        let conv = o.conversations[0].clone();
        let t = timeline(&mut s, &conv);
        let view = cairn::reclaim::PathView::load(&s, &conv, None).unwrap();
        let fits = replay::stored_fits(&s).unwrap();
        let models: std::collections::BTreeSet<String> = view
            .facts
            .iter()
            .filter(|f| f.measured_input().is_some())
            .filter_map(|f| Some(replay::model_key(f.model.as_deref()?)))
            .collect();
        assert!(!models.is_empty(), "{f}");
        for model in models {
            let (tk, made) = replay::tokenizer_for(&fits, Some(&s), &view, &model).unwrap();
            let v = match made {
                Some(v) => v,
                None => view.clone().counted_by(Some(&s), tk).unwrap(),
            };
            let totals = replay::totals_before(&v, ModelReader::of(&model));
            let alone = Estimator::for_path(&fits, Some(&s), &v, (&model, tk)).unwrap();
            let given = Estimator::for_path_with_totals(&fits, Some(&s), &v, (&model, tk), &totals)
                .unwrap();
            assert_eq!(alone, given, "{f}: {model}");
            for p in &t.points {
                let of = view.facts[p.index].model.as_deref().map(replay::model_key);
                if of.as_deref() == Some(model.as_str()) {
                    assert_eq!(
                        p.estimated,
                        alone.estimate(totals[p.index]),
                        "{f}: {}",
                        p.message
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 300, "{checked}");
}
