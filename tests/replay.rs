//! The numbers against the ground truth real transcripts carry: every reply records the prompt tokens its provider
//! counted. These tests replay every real sample (Claude Code of several eras, pi v1 and v3, Codex) and the
//! compactions each harness records, through the same commands the CLI and the window run.

#[path = "support/helpers.rs"]
mod helpers;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::reclaim::Settings;
use cairn::store::Store;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The real transcripts (written by the harnesses themselves, not by us).
const REAL: &[&str] = &[
    "claude-code/cc-1.0.98-inline-sidechains-task-fanout.jsonl",
    "claude-code/cc-2.0.5-image-paste.jsonl",
    "claude-code/cc-rewind-fork-2.1.42.jsonl",
    "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "claude-code/coderabbit-review-helper",
    "codex/codex-desktop-spawn-agents-0.140.jsonl",
    "pi/pi-v1-before-compaction-two-compactions.jsonl",
    "pi/pi-v1-large-session-thinking-level-changes.jsonl",
    "pi/pi-v3-compaction-tiny.jsonl",
];

fn run(s: &mut Store, a: Action) -> Outcome {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false)).unwrap()
}

/// A store with these fixture paths imported; returns the conversations of each path.
fn imported(paths: &[&str]) -> (tempfile::TempDir, Store, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("r.db")).unwrap();
    let mut convs = Vec::new();
    for p in paths {
        let Outcome::Imported(files) = run(
            &mut s,
            Action::Import {
                paths: vec![fixtures().join(p)],
                format: None,
            },
        ) else {
            panic!("import")
        };
        let mut ids = Vec::new();
        for f in files {
            assert!(f.error.is_none(), "{p}: {:?}", f.error);
            ids.extend(f.conversations);
        }
        convs.push(ids);
    }
    (dir, s, convs)
}

fn replay(s: &mut Store, conv: Option<&str>) -> cairn::reclaim::replay::Replay {
    match run(
        s,
        Action::Replay {
            conversation: conv.map(str::to_string),
        },
    ) {
        Outcome::Replayed(r) => r,
        _ => panic!("replay"),
    }
}

#[test]
fn every_real_sample_is_estimated_within_bounds_of_what_its_provider_measured() {
    let (_d, mut s, _) = imported(REAL);
    let r = replay(&mut s, None);
    // a session's first measured reply has no overhead of its own to learn from; every later one must be close
    let mut firsts = std::collections::HashSet::new();
    let mut seen = std::collections::HashSet::new();
    for x in &r.replies {
        if seen.insert((x.conversation.clone(), x.model.clone())) {
            firsts.insert(x.message.clone());
        }
    }
    let mut checked = 0;
    for m in &r.models {
        if m.replies < 3 || m.model == "pi-fixture-model" {
            // the pi fixture's figures are a test harness's made-up numbers (12 tokens)
            continue;
        }
        assert!(
            m.median_abs_error <= 0.05,
            "{}: median {:.1}% over {} replies",
            m.model,
            m.median_abs_error * 100.0,
            m.replies
        );
        let mut later: Vec<f64> = r
            .replies
            .iter()
            .filter(|x| x.model == m.model && !firsts.contains(&x.message))
            .map(|x| x.error.abs())
            .collect();
        later.sort_by(f64::total_cmp);
        let p90 = later[((later.len() as f64 * 0.9).ceil() as usize).clamp(1, later.len()) - 1];
        assert!(
            p90 <= 0.15,
            "{}: p90 {:.1}% after each session's first reply",
            m.model,
            p90 * 100.0
        );
        checked += 1;
    }
    // Claude of four generations, and GPT through Codex
    assert!(checked >= 5, "{:?}", r.models);
    // the Codex model is the one its turn_context names, counted with OpenAI's tokenizer
    assert!(
        r.models.iter().any(|m| m.model == "gpt-5.5"),
        "{:?}",
        r.models
    );
    assert!(r.models.iter().all(|m| m.model != "unknown"));
}

#[test]
fn calibration_fits_on_the_same_assembled_contexts_as_replay() {
    let (_d, mut s, _) = imported(REAL);
    let Outcome::Calibrated { models, skipped } = run(&mut s, Action::Calibrate) else {
        panic!("calibrate")
    };
    assert!(skipped.is_empty(), "{skipped:?}");
    for c in &models {
        if let Some(f) = &c.fit {
            // a compaction never teaches it nonsense: scales stay near the tokenizer's
            assert!(
                (0.8..=1.6).contains(&f.scale),
                "{} {}: scale {}",
                c.harness,
                c.model,
                f.scale
            );
            assert!(c.error_after <= 5.0, "{}: {:.1}%", c.model, c.error_after);
        }
    }
    // a model with too few replies keeps the defaults, and says so
    assert!(models.iter().any(|c| c.fit.is_none() && c.samples < 3));
}

#[test]
fn a_claude_code_compact_boundary_ends_what_the_model_saw() {
    let (_d, mut s, convs) = imported(&["claude-code/cc-compact-boundary.jsonl"]);
    let conv = &convs[0][0];
    let r = replay(&mut s, Some(conv));
    assert_eq!(r.replies.len(), 10);
    // after the boundary the estimate follows the small context (summary and what followed), not the whole path
    for x in &r.replies[7..] {
        assert!(x.error.abs() < 0.15, "{x:?}");
    }
    let Outcome::Context(c) = run(
        &mut s,
        Action::Context {
            conversation: conv.clone(),
            model: None,
        },
    ) else {
        panic!("context")
    };
    let h = c
        .harness_compaction
        .as_ref()
        .expect("the boundary is named");
    assert_eq!(h.harness, "claude-code");
    // the summary and the 4 turns after it are sent; the 12 messages before the boundary are not
    assert_eq!(c.messages_sent, 9);
    assert!(c.estimated_total < 20_000, "{}", c.estimated_total);
}

#[test]
fn a_pi_compaction_at_the_tip_sends_its_summary_and_what_it_kept() {
    // the case that showed 0 tokens for every kind: the last entry of the path is pi's compaction
    let (_d, mut s, convs) = imported(&["pi/pi-v1-before-compaction-two-compactions.jsonl"]);
    let conv = convs[0][0].clone();
    let heads = s.active_path_heads(&conv).unwrap();
    let marker = heads.iter().rev().find(|h| h.is_compaction()).unwrap();
    run(
        &mut s,
        Action::Branch {
            conversation: conv.clone(),
            message: marker.id.clone(),
            expect: None,
        },
    );
    let Outcome::Context(c) = run(
        &mut s,
        Action::Context {
            conversation: conv.clone(),
            model: None,
        },
    ) else {
        panic!("context")
    };
    let h = c.harness_compaction.as_ref().unwrap();
    assert_eq!(h.harness, "pi");
    // firstKeptEntryIndex 551: the kept messages from that entry up to the compaction, and the summary
    assert!(h.kept > 10, "{}", h.kept);
    assert_eq!(c.messages_sent, h.kept + 1);
    assert!(
        c.messages.text > 0 && c.messages.tool_results > 0,
        "{:?}",
        c.messages
    );
    assert!(c.estimated_total > 10_000, "{}", c.estimated_total);
    // the comparison starts from that context
    let Outcome::Compared { rows, .. } = run(
        &mut s,
        Action::Compare {
            conversation: conv.clone(),
            budget: None,
            profile: None,
        },
    ) else {
        panic!("compare")
    };
    let none = &rows[0];
    assert_eq!(none.strategy, "none");
    assert!(none.text_tokens_after > 10_000);
    // the same figure both ways: the comparison's "none" row is the next request the report predicts (the
    // messages it counts and the overhead sent beside them)
    assert_eq!(
        none.text_tokens_after + none.image_tokens_after,
        c.predicted_total
    );
    assert!(
        c.predicted_total
            > c.messages.text
                + c.messages.tool_use
                + c.messages.tool_results
                + c.messages.images
                + c.messages.thinking
                + c.messages.other
                + c.system
    );
}

#[test]
fn codex_compactions_send_their_replacement_history_or_the_recent_prompts() {
    let (_d, mut s, convs) = imported(&[
        "codex/codex-compacted-replacement.jsonl",
        "codex/codex-compacted-legacy.jsonl",
    ]);
    let context = |s: &mut Store, c: &str| match run(
        s,
        Action::Context {
            conversation: c.to_string(),
            model: None,
        },
    ) {
        Outcome::Context(r) => r,
        _ => panic!("context"),
    };
    let with = context(&mut s, &convs[0][0]);
    let legacy = context(&mut s, &convs[1][0]);
    assert_eq!(with.model, "gpt-5.5");
    // with a replacement history: that history (as the marker's text) and the 6 messages after it
    assert_eq!(with.messages_sent, 7);
    assert_eq!(with.harness_compaction.as_ref().unwrap().kept, 0);
    // without: the injected instructions and the user's recent prompts are kept too
    let kept = legacy.harness_compaction.as_ref().unwrap().kept;
    assert!(kept >= 4, "{kept}");
    assert!(legacy.estimated_total > with.estimated_total);
}

#[test]
fn titles_skip_what_harnesses_inject() {
    let (_d, s, convs) = imported(&[
        "codex/codex-desktop-spawn-agents-0.140.jsonl",
        "pi/pi-v1-before-compaction-two-compactions.jsonl",
        "claude-code/cc-compact-boundary.jsonl",
        "small/cc-quirks.jsonl",
    ]);
    let title = |s: &Store, c: &str| s.conversation(c).unwrap().title.unwrap_or_default();
    // Codex: AGENTS.md and the environment context come first; the user's own prompt is the title
    let codex = title(&s, &convs[0][0]);
    assert!(
        !codex.starts_with("# AGENTS.md") && !codex.starts_with('<'),
        "{codex}"
    );
    assert!(codex.contains("session"), "{codex}");
    // pi v1 records no name: the first prompt
    assert!(
        title(&s, &convs[1][0]).starts_with("alright, read @packages/coding-agent"),
        "{}",
        title(&s, &convs[1][0])
    );
    // Claude Code: a continued session's summary is not a title
    assert!(title(&s, &convs[2][0]).starts_with("step 0"));
    for c in convs.iter().flatten() {
        let t = title(&s, c);
        assert!(!t.starts_with("Caveat:"), "{t}");
        assert!(!t.is_empty());
    }
}

#[test]
fn compare_takes_the_profile_it_is_given() {
    let (_d, mut s, convs) = imported(&["pi/pi-v1-large-session-thinking-level-changes.jsonl"]);
    let rows = |s: &mut Store, p: &str| match run(
        s,
        Action::Compare {
            conversation: convs[0][0].clone(),
            budget: Some(20_000),
            profile: cairn::render::profile::by_name(p),
        },
    ) {
        Outcome::Compared { rows, .. } => rows,
        _ => panic!("compare"),
    };
    let hires = rows(&mut s, "claude-hires");
    let gemini = rows(&mut s, "gemini");
    let snap = |r: &[cairn::reclaim::compare::StrategyRow]| {
        r.iter()
            .find(|x| x.strategy == "snapshot")
            .unwrap()
            .image_tokens_after
    };
    assert!(snap(&hires) > 0 && snap(&gemini) > 0);
    assert_ne!(snap(&hires), snap(&gemini));
}

#[test]
fn the_first_request_after_a_compaction_is_predicted_from_scratch() {
    // a prompt measured before a compaction was of a context that is gone: the next request is predicted the way
    // the compaction's own row predicts it (overhead plus what is sent now), not from that prompt plus a difference
    let (_d, mut s, convs) = imported(&["pi/pi-v1-before-compaction-two-compactions.jsonl"]);
    let r = replay(&mut s, Some(&convs[0][0]));
    assert_eq!(r.compactions.len(), 2);
    for c in &r.compactions {
        let reply = r.replies.iter().find(|x| x.message == c.reply).unwrap();
        assert_eq!(reply.predicted, Some(c.predicted), "{}", c.reply);
    }
    // and `context`, which `send` compacts by, once cairn has compacted a session
    let (_d, mut s, convs) = imported(&["claude-code/cc-2.0.5-image-paste.jsonl"]);
    let conv = convs[0][0].clone();
    let before = match run(
        &mut s,
        Action::Context {
            conversation: conv.clone(),
            model: None,
        },
    ) {
        Outcome::Context(c) => c,
        _ => panic!(),
    };
    assert_ne!(
        before.predicted_total, before.estimated_total,
        "measured before"
    );
    run(
        &mut s,
        helpers::forced_compaction(&conv, cairn::reclaim::Strategy::Snapshot),
    );
    let c = helpers::context_now(&mut s, &conv);
    assert_eq!(c.predicted_total, c.estimated_total);
}
