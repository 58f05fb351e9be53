//! Explorer benchmarks, headless (no display, no GPU): a bench binary that prints figures. Run with
//! `cargo bench --bench window` (or `scripts/bench window`).
//!
//! On a generated 100k-message session with a few hundred branches:
//! - opening the session (store open, every head, the tree's index and layout): target <= 300 ms
//! - the tree layout alone: target <= 100 ms
//! - building and tessellating a whole frame of the window at 1280x800, zoomed out (the whole tree) and zoomed
//!   in (at the tip, and inside a fully expanded 99k-message run): target <= 16 ms
//! - a store of 2,000 conversations: frames while the conversation list scrolls: target <= 16 ms

#[path = "support/messages.rs"]
mod messages;

use std::time::{Duration, Instant};

use cairn::layout::TreeLayout;
use cairn::store::{ImportedMessage, Store};
use cairn::window::{Explorer, Session};
use eframe::egui;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p95(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * 0.95) as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// `n` messages: a main line with a side branch (3-12 messages) every ~330 messages.
fn session(n: usize) -> (Vec<ImportedMessage>, usize) {
    let mut out: Vec<ImportedMessage> = Vec::with_capacity(n);
    let mut main: Option<usize> = None;
    let mut i = 0usize;
    let mut branches = 0;
    while out.len() < n {
        out.push(ImportedMessage {
            parent: main,
            message: messages::message(i),
        });
        main = Some(out.len() - 1);
        i += 1;
        // branch from a turn boundary (a final assistant reply)
        if i.is_multiple_of(332) && out.len() + 12 < n {
            let mut p = main;
            let len = 3 + (i / 332) % 10;
            for k in 0..len {
                out.push(ImportedMessage {
                    parent: p,
                    message: messages::message(k),
                });
                p = Some(out.len() - 1);
            }
            branches += 1;
        }
    }
    (out, branches)
}

fn frame(ctx: &egui::Context, app: &mut Explorer) -> (Duration, usize) {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1280.0, 800.0),
        )),
        ..Default::default()
    };
    let t = Instant::now();
    let out = ctx.run_ui(input, |ui| app.draw(ui));
    let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
    let took = t.elapsed();
    let vertices = prims
        .iter()
        .map(|p| match &p.primitive {
            egui::epaint::Primitive::Mesh(m) => m.vertices.len(),
            egui::epaint::Primitive::Callback(_) => 0,
        })
        .sum();
    (took, vertices)
}

fn frames(ctx: &egui::Context, app: &mut Explorer, label: &str) {
    for _ in 0..5 {
        frame(ctx, app);
    }
    let runs: Vec<(Duration, usize)> = (0..40).map(|_| frame(ctx, app)).collect();
    let v: Vec<Duration> = runs.iter().map(|r| r.0).collect();
    println!(
        "frame {label}: median {}, p95 {} (target <= 16 ms); {} vertices, {} nodes labelled, zoom {:.3}",
        ms(median(v.clone())),
        ms(p95(v)),
        runs.last().map_or(0, |r| r.1),
        app.tree.graph.visible.len(),
        app.tree.graph.zoom
    );
}

/// Frames while the conversation list scrolls (the wheel over the left panel).
fn scrolling_frames(ctx: &egui::Context, app: &mut Explorer) -> Vec<Duration> {
    (0..60)
        .map(|k| {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(
                    egui::Pos2::ZERO,
                    egui::vec2(1280.0, 800.0),
                )),
                events: vec![
                    egui::Event::PointerMoved(egui::pos2(100.0, 400.0)),
                    egui::Event::MouseWheel {
                        unit: egui::MouseWheelUnit::Point,
                        delta: egui::vec2(0.0, if k < 40 { -300.0 } else { 300.0 }),
                        phase: egui::TouchPhase::Move,
                        source: egui::MouseWheelSource::Unknown,
                        modifiers: egui::Modifiers::NONE,
                    },
                ],
                ..Default::default()
            };
            let t = Instant::now();
            let out = ctx.run_ui(input, |ui| app.draw(ui));
            std::hint::black_box(ctx.tessellate(out.shapes, out.pixels_per_point));
            t.elapsed()
        })
        .collect()
}

/// A store of many conversations: the list draws only the rows on screen.
fn many_conversations(dir: &std::path::Path) {
    let path = dir.join("many.db");
    {
        let mut store = Store::open(&path).expect("store");
        for c in 0..2_000 {
            let msgs: Vec<ImportedMessage> = (0..20usize)
                .map(|k| ImportedMessage {
                    parent: k.checked_sub(1),
                    message: messages::message(c * 20 + k),
                })
                .collect();
            store
                .import_conversation(
                    Some(&format!("session {c}: port the parser, module {}", c % 37)),
                    &msgs,
                    None,
                    &[],
                    &serde_json::Value::Null,
                )
                .expect("import");
        }
    }
    let t = Instant::now();
    let ctx = egui::Context::default();
    let mut app = Explorer::new(path);
    app.native_dialogs = false;
    println!(
        "a store of 2000 conversations: window opened in {}",
        ms(t.elapsed())
    );
    let v = scrolling_frames(&ctx, &mut app);
    let worst = v.iter().max().copied().unwrap_or_default();
    println!(
        "frames while the conversation list scrolls: median {}, p95 {}, worst {} (target: no frame over 16 ms)",
        ms(median(v.clone())),
        ms(p95(v)),
        ms(worst)
    );
}

fn main() {
    let dir = std::env::var_os("CAIRN_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::tempdir_in(dir).expect("temp dir");
    if std::env::var("CAIRN_BENCH_ONLY").as_deref() == Ok("conversations") {
        many_conversations(tmp.path());
        return;
    }
    let path = tmp.path().join("bench.db");
    let (msgs, branches) = session(100_000);
    let conv = {
        let mut store = Store::open(&path).expect("store");
        let tip = msgs.len() - 1;
        store
            .import_conversation(
                Some("bench"),
                &msgs,
                Some(tip),
                &[],
                &serde_json::Value::Null,
            )
            .expect("import")
            .0
    };
    println!("session: {} messages, {branches} side branches", msgs.len());

    // opening: store, conversation, every head, index, layout
    let mut opens = Vec::new();
    let mut segments = 0;
    for _ in 0..7 {
        let t = Instant::now();
        let store = Store::open(&path).expect("open");
        let c = store.conversation(&conv).expect("conversation");
        let s = Session::open(&store, c).expect("session");
        opens.push(t.elapsed());
        segments = s.layout.segments.len();
    }
    println!(
        "open: median {}, p95 {} (target <= 300 ms); {segments} segments",
        ms(median(opens.clone())),
        ms(p95(opens))
    );

    let store = Store::open(&path).expect("open");
    let s = Session::open(&store, store.conversation(&conv).expect("conv")).expect("session");
    let collapsed: Vec<Duration> = (0..11)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(TreeLayout::compute(&s.parents, &|_, _| false));
            t.elapsed()
        })
        .collect();
    println!(
        "layout, long runs collapsed: median {} (target <= 100 ms)",
        ms(median(collapsed))
    );
    let expanded: Vec<Duration> = (0..11)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(TreeLayout::compute(&s.parents, &|_, _| true));
            t.elapsed()
        })
        .collect();
    println!(
        "layout, every run expanded: median {} (target <= 100 ms)",
        ms(median(expanded))
    );

    // frames of the whole window
    let ctx = egui::Context::default();
    let mut app = Explorer::new(path.clone());
    app.native_dialogs = false;
    app.select(&conv);
    // the first look would open at the tip up close (the whole tree is not readable); fit it all instead
    app.tree.graph.initial = false;
    app.tree.graph.fit = true;
    frames(&ctx, &mut app, "zoomed out (whole tree)");
    app.tree.graph.zoom = 1.0;
    let tip = app.session.as_ref().and_then(|s| s.tip);
    app.tree.graph.focus = tip;
    frames(&ctx, &mut app, "zoomed in at the tip");
    if let Some(sess) = &mut app.session {
        for seg in &sess.layout.segments {
            let first = sess.layout.chain[seg.start as usize] as usize;
            sess.expanded.insert(sess.heads[first].id.clone());
        }
        sess.relayout();
        let longest = sess
            .layout
            .segments
            .iter()
            .map(|x| x.len)
            .max()
            .unwrap_or(0);
        println!("expanded every run (longest {longest} messages)");
    }
    app.tree.graph.focus = tip;
    frames(&ctx, &mut app, "zoomed in at the tip, every run expanded");
    let middle = app.session.as_ref().map(|s| s.path[s.path.len() / 2]);
    app.tree.graph.focus = middle;
    frames(&ctx, &mut app, "zoomed in mid-path, every run expanded");
    app.tree.graph.fit = true;
    frames(&ctx, &mut app, "zoomed out, every run expanded");
    many_conversations(tmp.path());
}
