//! The reclaim ladder: non-destructive rungs, narrative kept, pairs kept, snapshots re-rendered from source,
//! the ladder reaching a target (or saying it cannot), comparisons side by side.

#[path = "support/helpers.rs"]
mod helpers;

use std::path::Path;

use cairn::model::{Block, ImageData, NewMessage, Role};
use cairn::pairs;
use cairn::reclaim::assemble::{Assembled, assemble};
use cairn::reclaim::rungs::{self, RungOptions};
use cairn::reclaim::{PathView, SentMessage, Strategy, compare};
use cairn::store::Store;

fn long_conversation(s: &mut Store, turns: usize) -> String {
    helpers::tool_session(s, turns, &|i| {
        let body = format!("line {i}: fn parse_{i}(input: &str) -> Result<Ast> {{ todo!() }}\n")
            .repeat(120);
        (body, i % 7 == 3, (i % 8 == 0).then(|| vec![i as u8; 2048]))
    })
}

fn assembled(s: &Store, c: &str) -> Assembled {
    assemble(s, c).unwrap()
}

/// The rungs with this protect window and the default page profile.
fn opts(protect: u64) -> RungOptions {
    RungOptions {
        protect,
        shape: cairn::reclaim::Policy::new(&Default::default(), None, None, None).shape(),
        range: None,
        model: None,
    }
}

/// A snapshot of a conversation's messages `from..=to` through the commands layer.
fn snapshot_range(
    s: &mut Store,
    c: &str,
    from: &str,
    to: &str,
) -> Result<cairn::commands::Outcome, cairn::commands::CommandError> {
    cairn::commands::run(
        s,
        &cairn::reclaim::Settings::default(),
        cairn::commands::Action::Compact {
            conversation: c.to_string(),
            strategy: Some(Strategy::Snapshot),
            force: true,
            target: None,
            protect: None,
            instructions: None,
            provider: None,
            from: Some(from.to_string()),
            to: Some(to.to_string()),
        },
        &cairn::commands::Quiet,
        &std::sync::atomic::AtomicBool::new(false),
    )
}

/// The page images a sent message holds.
fn pngs_of(m: &SentMessage) -> Vec<Vec<u8>> {
    m.content
        .iter()
        .filter_map(|b| match b {
            Block::Image {
                data: ImageData::Bytes(b),
                ..
            } => Some(b.clone()),
            _ => None,
        })
        .collect()
}

/// All text that is not a tool result body, in order.
fn narrative(msgs: &[SentMessage]) -> Vec<String> {
    msgs.iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.clone()),
            Block::ToolUse { id, name, input } => Some(format!("{id} {name} {input}")),
            Block::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => Some(format!("result {tool_use_id} {is_error}")),
            _ => None,
        })
        .collect()
}

#[test]
fn elision_keeps_every_word_of_the_narrative_and_every_pair() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 60);
    let before = assembled(&s, &c);
    let stored_before = s.messages(&c).unwrap();
    let a = rungs::apply(&mut s, &c, Strategy::Elide, false, None, &opts(40_000))
        .unwrap()
        .expect("elision should run");
    assert!(a.tokens_after + 20_000 < a.tokens_before, "{a:?}");
    let after = assembled(&s, &c);
    assert_eq!(narrative(&before.messages), narrative(&after.messages));
    pairs::check(&after.messages, false).unwrap();
    assert!(after.tally.tool_results_elided > 30);
    // errors are never elided
    for m in &after.messages {
        for b in &m.content {
            if let Block::ToolResult {
                is_error: true,
                content,
                ..
            } = b
            {
                assert!(
                    !content.text().starts_with("[elided"),
                    "an error result was elided"
                );
            }
        }
    }
    // stored messages never change
    let stored_after = s.messages(&c).unwrap();
    assert_eq!(stored_after.len(), stored_before.len() + 1);
    assert_eq!(&stored_after[..stored_before.len()], &stored_before[..]);
    // and the marker undoes like any tip move
    s.undo(&c).unwrap();
    assert_eq!(assembled(&s, &c).tally.total(), before.tally.total());
}

#[test]
fn image_pruning_keeps_the_text_around_images() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 60);
    let before = assembled(&s, &c);
    rungs::apply(&mut s, &c, Strategy::Images, false, None, &opts(40_000))
        .unwrap()
        .expect("images to prune");
    let after = assembled(&s, &c);
    let text = |msgs: &[SentMessage]| -> Vec<String> {
        msgs.iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                Block::Text { text } if !text.starts_with("[image removed") => Some(text.clone()),
                Block::ToolResult { content, .. } => Some(content.text()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(text(&before.messages), text(&after.messages));
    assert!(after.tally.images_removed >= 5);
    assert!(after.tally.image_tokens < before.tally.image_tokens);
    pairs::check(&after.messages, false).unwrap();
    let note = after
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            Block::Text { text } if text.starts_with("[image removed") => Some(text.clone()),
            _ => None,
        });
    assert!(note.unwrap().contains("2048 bytes"));
}

#[test]
fn a_snapshot_keeps_head_and_tail_verbatim_and_a_second_one_rerenders_from_source() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 60);
    let path = s.active_path(&c).unwrap();
    rungs::apply(&mut s, &c, Strategy::Snapshot, false, None, &opts(40_000))
        .unwrap()
        .expect("snapshot");
    let after = assembled(&s, &c);
    pairs::check(&after.messages, false).unwrap();
    // verbatim head: the first turn
    assert_eq!(after.messages[0].sources, vec![path[0].id.clone()]);
    assert_eq!(after.messages[0].content, path[0].content);
    // the imaged middle
    let snap = &after.messages[2];
    let pages = snap
        .content
        .iter()
        .filter(|b| matches!(b, Block::Image { .. }))
        .count();
    assert!(
        pages >= 1 && snap.sources.len() > 100,
        "{} pages for {} messages",
        pages,
        snap.sources.len()
    );
    assert!(after.tally.image_tokens > 0 && after.tally.characters_imaged > 100_000);
    // verbatim tail: the newest message as stored
    assert_eq!(
        after.messages.last().unwrap().content,
        path.last().unwrap().content
    );

    // more turns, then a second snapshot: it covers the first one's middle too, rendered from the stored text
    for i in 0..20 {
        s.append_turn(
            &c,
            &[
                NewMessage::text(Role::User, format!("more {i} {}", "x".repeat(3000))),
                NewMessage::text(Role::Assistant, "ok"),
            ],
        )
        .unwrap();
    }
    rungs::apply(&mut s, &c, Strategy::Snapshot, false, None, &opts(40_000))
        .unwrap()
        .expect("second snapshot");
    let again = assembled(&s, &c);
    pairs::check(&again.messages, false).unwrap();
    let snap2 = again
        .messages
        .iter()
        .find(|m| m.content.iter().any(|b| matches!(b, Block::Image { .. })))
        .unwrap();
    assert!(snap2.sources.len() > snap.sources.len());
    assert!(
        snap.sources.iter().all(|id| snap2.sources.contains(id)),
        "the second snapshot must cover the first's middle"
    );
    // exactly one imaged middle, and its pages are the render of the stored source text, byte for byte
    assert_eq!(
        again
            .messages
            .iter()
            .filter(|m| m
                .content
                .iter()
                .any(|b| matches!(b, Block::Image { media_type, .. } if media_type == "image/png")))
            .count(),
        1
    );
    let all = s.active_path(&c).unwrap();
    let covered: Vec<_> = all
        .iter()
        .filter(|m| snap2.sources.contains(&m.id))
        .cloned()
        .collect();
    let r = cairn::render::render(
        &cairn::render::sources(&covered),
        &cairn::reclaim::assemble::shape_options(&opts(0).shape),
    )
    .unwrap();
    let pngs = pngs_of(snap2);
    assert_eq!(
        pngs,
        r.pages.iter().map(|p| p.png.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn the_ladder_stops_at_the_target_or_says_it_cannot_and_needs_no_network() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 60);
    let before = assembled(&s, &c).tally.total();
    let o = rungs::ladder(&mut s, &c, before - 10_000, &opts(40_000)).unwrap();
    assert!(o.reached);
    assert_eq!(
        o.steps.len(),
        1,
        "elision alone reaches a near target: {:?}",
        o.steps
    );
    pairs::check(&assembled(&s, &c).messages, false).unwrap();
    // where elision has nothing to take (every result an error), the snapshot is what makes room
    let c = helpers::tool_session(&mut s, 60, &|i| {
        let body = format!("line {i}: error[E0308]: mismatched types in parse_{i}\n").repeat(120);
        (body, true, None)
    });
    let before = assembled(&s, &c).tally.total();
    let o = rungs::ladder(&mut s, &c, 30_000, &opts(40_000)).unwrap();
    assert!(
        o.steps.iter().any(|a| a.strategy == Strategy::Snapshot),
        "{o:?}"
    );
    // the middle (all but the 40k protect window) at least halves
    assert!(
        o.tokens_after < 40_000 + (before - 40_000) / 2,
        "{before} -> {o:?}"
    );
    let o = rungs::ladder(&mut s, &c, 10, &opts(40_000)).unwrap();
    assert!(!o.reached && o.note.unwrap().contains("summary"));
    pairs::check(&assembled(&s, &c).messages, false).unwrap();
}

#[test]
fn a_snapshot_after_elision_draws_what_elision_left() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 60);
    let before = assembled(&s, &c).tally.total();
    // elision takes the old tool output; the snapshot that follows draws a note where it was, not the output again
    rungs::ladder(&mut s, &c, before - 10_000, &opts(40_000)).unwrap();
    let elided = assembled(&s, &c).tally.total();
    let o = rungs::ladder(&mut s, &c, 30_000, &opts(40_000)).unwrap();
    assert!(
        o.steps.iter().any(|a| a.strategy == Strategy::Snapshot),
        "{o:?}"
    );
    assert!(o.tokens_after < elided, "{elided} -> {o:?}");
    let a = assembled(&s, &c);
    let snap = a
        .messages
        .iter()
        .find(|m| m.content.iter().any(|b| matches!(b, Block::Image { .. })))
        .expect("the snapshot");
    let pngs = pngs_of(snap);
    // the pages are the covered messages with their elided results as notes, drawn in the policy's shape
    let all = s.active_path(&c).unwrap();
    let (elided_ids, estimated): (Vec<String>, u64) = {
        let view = PathView::load(&s, &c, None).unwrap();
        let l = cairn::reclaim::assemble::layout(&view, &[], view.len());
        l.pieces
            .iter()
            .find_map(|p| match p {
                cairn::reclaim::assemble::Piece::Cover {
                    covered, elided, ..
                } => Some((
                    elided.iter().map(|&i| view.heads[i].id.clone()).collect(),
                    cairn::render::estimate(
                        cairn::reclaim::assemble::covered_cells(&view, covered, elided),
                        &cairn::reclaim::assemble::shape_options(&opts(0).shape),
                    )
                    .image_tokens,
                )),
                _ => None,
            })
            .unwrap()
    };
    assert!(elided_ids.len() > 10, "{}", elided_ids.len());
    let drawn: Vec<_> = all
        .iter()
        .filter(|m| snap.sources.contains(&m.id))
        .map(|m| cairn::reclaim::assemble::as_drawn(m, elided_ids.contains(&m.id)))
        .collect();
    let notes = drawn
        .iter()
        .map(|m| cairn::model::plain_text(&m.content))
        .filter(|t| t.contains(cairn::reclaim::assemble::ELIDED_ON_PAGE))
        .count();
    assert_eq!(notes, elided_ids.len());
    let r = cairn::render::render(
        &cairn::render::sources(&drawn),
        &cairn::reclaim::assemble::shape_options(&opts(0).shape),
    )
    .unwrap();
    assert_eq!(
        pngs,
        r.pages.iter().map(|p| p.png.clone()).collect::<Vec<_>>()
    );
    // and what the rung estimated is what it drew
    assert_eq!(estimated, r.stats.image_tokens);
}

#[test]
fn a_rung_that_saves_nothing_is_not_taken_unless_asked_for() {
    let mut s = Store::open_in_memory().unwrap();
    // a short middle: its pages and their introduction cost more than its text
    let c = helpers::tool_session(&mut s, 2, &|i| (format!("ok {i}"), false, None));
    let o = rungs::ladder(&mut s, &c, 10, &opts(10)).unwrap();
    assert!(o.steps.is_empty(), "{o:?}");
    assert!(!o.reached && o.note.unwrap().contains("summary"));
    let forced = rungs::apply(&mut s, &c, Strategy::Snapshot, true, None, &opts(10)).unwrap();
    assert!(forced.is_some());
}

#[test]
fn compare_shows_every_strategy_and_the_cache_cost() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 60);
    let path = s.active_path(&c).unwrap();
    let view = PathView::load(&s, &c, None).unwrap();
    // the next request priced as one to Opus 4.7 (the conversation names no model)
    let prices = Default::default();
    let pricing = compare::Pricing {
        model: "claude-opus-4-7",
        prices: &prices,
    };
    let (view, est) = cairn::reclaim::replay::as_model_counts(&s, view, "claude-opus-4-7").unwrap();
    let rows = compare::compare_priced(&view, 60_000, &opts(30_000), &pricing, &est);
    let names: Vec<_> = rows.iter().map(|r| r.strategy.as_str()).collect();
    assert_eq!(
        names,
        [
            "none",
            "elide",
            "images",
            "snapshot",
            "summary",
            "ladder",
            "clear-tool-uses",
            "clear-thinking"
        ]
    );
    let row = |n: &str| rows.iter().find(|r| r.strategy == n).unwrap();
    // the provider's context editing, simulated: past its 100k trigger it would clear old results and break the
    // cache at the first; under it, nothing
    let edit = row("clear-tool-uses");
    let none = row("none");
    if none.text_tokens_before > 100_000 {
        assert!(edit.ran && edit.text_tokens_after < none.text_tokens_after);
    } else {
        assert!(!edit.ran && edit.text_tokens_after == none.text_tokens_after);
    }
    assert_eq!(row("clear-thinking").model_calls, 0);
    assert!(row("snapshot").image_tokens_after > 0);
    assert!(row("snapshot").text_tokens_after < row("none").text_tokens_after / 2);
    assert_eq!(row("summary").model_calls, 1);
    assert_eq!(row("elide").model_calls, 0);
    // compaction breaks the cache after what it keeps: the warm-cache cost can exceed the list cost of the text
    assert!(row("none").cost_warm_cache < row("none").cost_list);
    assert!(row("snapshot").cache_kept_through.is_some());
    assert!(row("ladder").reaches_budget);
    // nothing was written
    assert_eq!(s.active_path(&c).unwrap().len(), path.len());
}

#[test]
fn rungs_on_the_real_samples_keep_pairs_and_narrative() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("r.db")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut checked = 0;
    for f in
        cairn::import::collect(&[fixtures.join("claude-code"), fixtures.join("codex")]).unwrap()
    {
        let o = cairn::import::import_file(&mut s, &f, None);
        for c in o.conversations {
            let tip_is_boundary = s
                .active_path(&c)
                .unwrap()
                .last()
                .is_some_and(|m| m.ends_turn());
            if !tip_is_boundary {
                continue; // a session left mid-turn takes no marker until it is retried
            }
            let before = assembled(&s, &c);
            for st in [Strategy::Elide, Strategy::Images] {
                rungs::apply(&mut s, &c, st, true, None, &opts(40_000)).unwrap();
            }
            let after = assembled(&s, &c);
            assert_eq!(
                narrative(&before.messages),
                narrative(&after.messages),
                "{f:?}"
            );
            checked += 1;
            pairs::check(&after.messages, true).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
    assert!(checked >= 2, "{checked}");
}

#[test]
fn screenshots_inside_tool_results_are_pruned() {
    // the demo's screenshot arrives as an image inside a tool result, as real harnesses send them
    let mut store = cairn::store::Store::open_in_memory().unwrap();
    let d = cairn::demo::install(&mut store).unwrap();
    let before = assemble(&store, &d.conversation).unwrap();
    // a 240x150 screenshot: 9 x 6 patches of 28 px, and its PNG bytes are counted as sent
    assert_eq!(before.tally.image_tokens, 54);
    assert!(
        before.tally.image_bytes > 1000,
        "{}",
        before.tally.image_bytes
    );
    let applied = rungs::apply(
        &mut store,
        &d.conversation,
        Strategy::Images,
        false,
        None,
        &opts(10_000),
    )
    .unwrap()
    .expect("the images rung has a screenshot to prune");
    assert_eq!(applied.items, 1);
    let after = assemble(&store, &d.conversation).unwrap();
    assert_eq!(after.tally.images_removed, 1);
    assert_eq!(after.tally.image_tokens, 0);
    assert_eq!(after.tally.image_bytes, 0);
    assert!(after.tally.total() < before.tally.total());
}

#[test]
fn an_image_inside_an_elided_result_is_not_pruned_again() {
    let mut store = cairn::store::Store::open_in_memory().unwrap();
    let d = cairn::demo::install(&mut store).unwrap();
    let elide = rungs::apply(
        &mut store,
        &d.conversation,
        Strategy::Elide,
        true,
        None,
        &opts(10_000),
    )
    .unwrap()
    .expect("old tool results to elide");
    assert!(elide.items > 0);
    let images = rungs::apply(
        &mut store,
        &d.conversation,
        Strategy::Images,
        true,
        None,
        &opts(10_000),
    )
    .unwrap();
    assert!(images.is_none(), "{images:?}");
}

/// Partial-range compaction (Claude Code's "compact from here"): only the chosen messages are covered, the range is
/// widened so no call loses its result, and what is outside it is sent as it was.
#[test]
fn compacting_a_chosen_range_covers_only_it() {
    let mut s = Store::open_in_memory().unwrap();
    let c = long_conversation(&mut s, 30);
    let path = s.active_path(&c).unwrap();
    // from a tool result (mid-pair): widened back to its call; to an assistant call: widened on to its result
    let from = path
        .iter()
        .position(|m| {
            m.role == Role::User
                && m.content
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult { .. }))
        })
        .unwrap()
        + 8;
    assert!(
        path[from]
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
    );
    let to = from + 21;
    let o = snapshot_range(&mut s, &c, &path[from].id, &path[to].id).unwrap();
    assert!(matches!(o, cairn::commands::Outcome::Compacted(_)));
    let marker = s.active_path(&c).unwrap().last().unwrap().clone();
    let span = marker.meta["cairn"]["span"].as_array().unwrap().clone();
    let (a, b) = (
        span[0].as_u64().unwrap() as usize,
        span[1].as_u64().unwrap() as usize,
    );
    assert_eq!(a, from - 1, "widened back to the call");
    assert!(b >= to && b <= to + 1, "widened on to the result: {b}");
    // what is before the range and after it is still sent as itself; the context is pair-valid
    let sent = assembled(&s, &c).messages;
    let sources: Vec<&str> = sent
        .iter()
        .flat_map(|m| m.sources.iter().map(String::as_str))
        .collect();
    assert!(sources.contains(&path[a - 1].id.as_str()));
    assert!(sources.contains(&path[path.len() - 1].id.as_str()));
    pairs::check(&sent, false).unwrap();
    // a range the wrong way round is refused in one line
    let e = snapshot_range(&mut s, &c, &path[to].id, &path[from].id)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--from is after --to"), "{e}");
}
