//! The explorer driven headless (egui_kittest, no display): controls are found by their accessible labels and
//! clicked or typed into, and the outcome is checked in the store the window writes through.
#![cfg(feature = "gui")]

use cairn::store::Store;
use cairn::window::{Explorer, View};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

struct Fixture {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    demo: cairn::demo::Installed,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    let mut store = Store::open(&path).unwrap();
    let demo = cairn::demo::install(&mut store).unwrap();
    Fixture {
        _dir: dir,
        path,
        demo,
    }
}

fn harness(f: &Fixture) -> Harness<'static, Explorer> {
    let mut app = Explorer::new(f.path.clone());
    app.native_dialogs = false;
    app.select(&f.demo.conversation);
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut Explorer| app.draw(ui), app);
    h.run();
    h
}

/// Lets the window submit its background work, waits for it, and draws the result.
fn settle(h: &mut Harness<'static, Explorer>) {
    h.run_steps(2);
    let ctx = h.ctx.clone();
    h.state_mut().wait_for_jobs(&ctx);
    h.run_steps(3);
}

fn tip_of(f: &Fixture, conv: &str) -> String {
    Store::open(&f.path)
        .unwrap()
        .conversation(conv)
        .unwrap()
        .tip
        .unwrap()
}

#[test]
fn clicking_another_tip_in_the_graph_and_switching_moves_the_tip_and_ctrl_z_undoes_it() {
    let f = fixture();
    let mut h = harness(&f);
    let before = tip_of(&f, &f.demo.conversation);
    // an abandoned branch's end, drawn in the graph as a labelled node
    let (other, label) = {
        let s = h.state().session.as_ref().unwrap();
        let leaf = s.leaves[0];
        let id = s.heads[leaf].id.clone();
        (
            id.clone(),
            format!("message {} {}", &id[..8], s.heads[leaf].role),
        )
    };
    h.get_by_label(&label).click();
    h.run();
    h.get_by_label("Switch tip here").click();
    h.run();
    assert_eq!(tip_of(&f, &f.demo.conversation), other);
    assert_ne!(other, before);
    // the window shows it: the new tip is the current one
    h.get_by_label(&format!("Tip {} (current)", &other[..8]));
    h.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::Z);
    h.run();
    assert_eq!(tip_of(&f, &f.demo.conversation), before);
}

#[test]
fn the_operations_view_lists_the_moves_and_undoes_the_last() {
    let f = fixture();
    let mut h = harness(&f);
    let before = tip_of(&f, &f.demo.conversation);
    let leaf = {
        let s = h.state().session.as_ref().unwrap();
        s.heads[s.leaves[0]].id.clone()
    };
    let n = Store::open(&f.path)
        .unwrap()
        .operations(&f.demo.conversation)
        .unwrap()
        .len();
    Store::open(&f.path)
        .unwrap()
        .branch(&f.demo.conversation, &leaf, Some(&before))
        .unwrap();
    h.get_by_label("Operations").click();
    settle(&mut h);
    // the log the core read for it, the branch made outside the window included
    h.get_by_label(&format!("{} operations", n + 1));
    h.get_by_label("branch");
    h.get_by_label("Undo last (Ctrl+Z)").click();
    settle(&mut h);
    assert_eq!(tip_of(&f, &f.demo.conversation), before);
    // asked again after the move: the undo is in the log, the branch marked undone
    h.get_by_label(&format!("{} operations", n + 2));
    h.get_by_label("undone");
}

#[test]
fn fork_from_here_makes_a_new_conversation_with_its_lineage() {
    let f = fixture();
    let mut h = harness(&f);
    let n = Store::open(&f.path).unwrap().conversations().unwrap().len();
    h.get_by_label("Fork from here").click();
    settle(&mut h);
    let store = Store::open(&f.path).unwrap();
    let convs = store.conversations().unwrap();
    assert_eq!(convs.len(), n + 1);
    let opened = h.state().session.as_ref().unwrap().conv.clone();
    assert_eq!(
        opened.forked_from.map(|x| x.conversation),
        Some(f.demo.conversation.clone())
    );
    // the list shows it under its origin
    let title = opened.title.unwrap();
    assert!(h.query_all_by_label_contains(&title).count() >= 1);
}

#[test]
fn set_a_checkpoint_then_rewind_to_another_with_a_digest() {
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Checkpoint label").focus();
    h.get_by_label("Checkpoint label").type_text("reviewed");
    h.run();
    h.get_by_label("Set checkpoint").click();
    h.run();
    let store = Store::open(&f.path).unwrap();
    let cps = store.checkpoints(&f.demo.conversation).unwrap();
    let tip = tip_of(&f, &f.demo.conversation);
    assert!(
        cps.iter()
            .any(|c| c.label == "reviewed" && c.message == tip)
    );
    // rewind asks for the digest
    h.get_by_label("Rewind to perf-baseline").click();
    h.run();
    h.get_by_label("Digest").focus();
    h.get_by_label("Digest")
        .type_text("profiling found the mutex handoff");
    h.run();
    h.get_by_label("Rewind").click();
    h.run();
    let store = Store::open(&f.path).unwrap();
    let target = cps
        .iter()
        .find(|c| c.label == "perf-baseline")
        .unwrap()
        .message
        .clone();
    let path = store.active_path(&f.demo.conversation).unwrap();
    let digest = path.last().unwrap();
    assert_eq!(digest.parent.as_deref(), Some(target.as_str()));
    assert!(cairn::render::source_text(digest).contains("mutex handoff"));
}

#[test]
fn the_compare_view_has_one_row_per_strategy() {
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Compare").click();
    settle(&mut h);
    for s in [
        "none",
        "elide",
        "images",
        "snapshot",
        "summary",
        "ladder",
        "clear-tool-uses",
        "clear-thinking",
    ] {
        h.get_by_label(s);
    }
    let rows = h.state().compare.table.ready().unwrap().rows.len();
    assert_eq!(rows, 8);
    // picking a row previews its context
    h.get_by_label("snapshot").click();
    h.run_steps(2);
    h.get_by_label_contains("Context after snapshot:");
    // and applying it writes the marker the preview showed
    h.get_by_label("Apply snapshot").click();
    settle(&mut h);
    let store = Store::open(&f.path).unwrap();
    let path = store.active_path(&f.demo.conversation).unwrap();
    let marker = path.last().unwrap();
    assert_eq!(
        marker.meta["cairn"]["strategy"].as_str(),
        Some("snapshot"),
        "{:?}",
        marker.meta
    );
}

#[test]
fn hovering_glyphs_links_to_the_source_and_back() {
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Snapshots").click();
    settle(&mut h);
    assert_eq!(h.state().view, View::Snapshots);
    let rect = h.state().snapshots.page_rect.expect("a page is drawn");
    let cell = h
        .state()
        .snapshots
        .remote
        .ready()
        .unwrap()
        .preview
        .options
        .cell;
    // row 3 of the page, a few cells in
    let pos = rect.min + eframe::egui::vec2(cell.0 as f32 * 4.0, cell.1 as f32 * 3.5);
    h.hover_at(pos);
    h.run_steps(2);
    let link = h
        .state()
        .snapshots
        .link
        .clone()
        .expect("hovering a glyph row links it");
    assert!(link.from_page);
    let manifest_row = {
        let d = h.state().snapshots.remote.ready().unwrap();
        d.preview.rendered.manifest.pages[0]
            .rows
            .iter()
            .filter(|r| r.row == 3)
            .map(|r| r.message.clone())
            .collect::<Vec<_>>()
    };
    assert!(manifest_row.contains(&link.message));
    h.get_by_label_contains("linked: message");
    // and back: hovering a source line (a message's header line) links its rows
    let header = {
        let d = h.state().snapshots.remote.ready().unwrap();
        // the second message on the page (its header line is on screen without scrolling)
        let mut seen: Vec<&str> = Vec::new();
        for r in &d.preview.rendered.manifest.pages[0].rows {
            if seen.last() != Some(&r.message.as_str()) {
                seen.push(&r.message);
            }
        }
        seen[1].to_string()
    };
    // (the line's label is wider than its column: hover the part on screen, as a person would)
    let line = h.get_by_label(&format!("── {} ──", &header[..8])).rect();
    h.hover_at(line.left_center() + eframe::egui::vec2(20.0, 0.0));
    h.run_steps(2);
    let link = h.state().snapshots.link.clone().unwrap();
    assert!(!link.from_page);
    assert_eq!(link.message, header);
}

#[test]
fn the_command_bar_runs_slash_commands_with_the_cli_parser() {
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Command").focus();
    h.get_by_label("Command")
        .type_text("/checkpoint from-the-bar");
    h.run();
    h.get_by_label("Run").click();
    h.run();
    let store = Store::open(&f.path).unwrap();
    assert!(
        store
            .checkpoints(&f.demo.conversation)
            .unwrap()
            .iter()
            .any(|c| c.label == "from-the-bar")
    );
    // a bad command is one line of error, nothing written
    h.get_by_label("Command").focus();
    h.get_by_label("Command").type_text("/rewind nowhere");
    h.run();
    h.get_by_label("Run").click();
    h.run();
    let (msg, err) = h.state().status.clone().unwrap();
    assert!(err, "{msg}");
    assert!(msg.contains("/rewind"), "{msg}");
}

#[test]
fn compacting_from_the_window_writes_a_marker_and_keeps_every_message() {
    let f = fixture();
    let mut h = harness(&f);
    let before = Store::open(&f.path)
        .unwrap()
        .heads(&f.demo.conversation)
        .unwrap()
        .len();
    h.get_by_label("Command").focus();
    h.get_by_label("Command").type_text("/compact snapshot");
    h.run();
    h.get_by_label("Run").click();
    settle(&mut h);
    let store = Store::open(&f.path).unwrap();
    let heads = store.heads(&f.demo.conversation).unwrap();
    assert_eq!(heads.len(), before + 1);
    assert!(heads.last().unwrap().is_compaction());
    // the tree shows the marker as a node
    let s = h.state().session.as_ref().unwrap();
    assert!(s.heads.iter().any(|x| x.is_compaction()));
    assert_eq!(s.heads.len(), before + 1);
}

#[test]
fn import_through_the_path_field_when_no_dialog_can_be_shown() {
    let f = fixture();
    let mut h = harness(&f);
    let n = h.state().conversations.len();
    h.get_by_label("Import…").click();
    h.run();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/small/pi-v2-labels.jsonl");
    h.get_by_label("Path").focus();
    h.get_by_label("Path")
        .type_text(&file.display().to_string());
    h.run();
    h.get_by_label("Import").click();
    settle(&mut h);
    assert_eq!(h.state().conversations.len(), n + 1);
    // the imported session is opened
    let opened = h.state().session.as_ref().unwrap().conv.id.clone();
    assert!(!h.state().conversations[..n].iter().any(|c| c.id == opened));
}

#[test]
fn export_runs_in_the_background_and_writes_the_file() {
    let f = fixture();
    let mut h = harness(&f);
    // the dialog offers every format
    h.get_by_label("Export…").click();
    h.run();
    h.get_by_label("Format");
    h.get_by_label("File");
    let out = f.path.with_file_name("demo.md");
    h.get_by_label("Command").focus();
    h.get_by_label("Command")
        .type_text(&format!("/export markdown {}", out.display()));
    h.run();
    h.get_by_label("Run").click();
    settle(&mut h);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("drain_order"),
        "{}",
        &text[..200.min(text.len())]
    );
}

#[test]
fn arrow_keys_walk_the_tree_and_j_jumps_to_a_checkpoint() {
    let f = fixture();
    let mut h = harness(&f);
    let (tip, parent, first_cp) = {
        let s = h.state().session.as_ref().unwrap();
        let tip = s.tip.unwrap();
        (tip, s.parents[tip].unwrap(), s.checkpoints[0].1.unwrap())
    };
    assert_eq!(h.state().session.as_ref().unwrap().selected, Some(tip));
    h.key_press(eframe::egui::Key::ArrowUp);
    h.run_steps(15);
    assert_eq!(h.state().session.as_ref().unwrap().selected, Some(parent));
    h.key_press(eframe::egui::Key::ArrowDown);
    h.run_steps(15);
    assert_eq!(h.state().session.as_ref().unwrap().selected, Some(tip));
    h.key_press(eframe::egui::Key::J);
    h.run_steps(15);
    assert_eq!(h.state().session.as_ref().unwrap().selected, Some(first_cp));
    // Home: the root; End: back to the tip
    h.key_press(eframe::egui::Key::Home);
    h.run_steps(15);
    let root = h.state().session.as_ref().unwrap().path[0];
    assert_eq!(h.state().session.as_ref().unwrap().selected, Some(root));
    h.key_press(eframe::egui::Key::End);
    h.run_steps(15);
    assert_eq!(h.state().session.as_ref().unwrap().selected, Some(tip));
}

#[test]
fn search_finds_text_on_any_branch_and_selects_it() {
    let f = fixture();
    let mut h = harness(&f);
    // Ctrl+F puts the cursor in the search field
    h.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::F);
    h.run();
    assert!(h.get_by_label("Find").is_focused());
    h.get_by_label("Find").type_text("SegQueue");
    h.run();
    h.get_by_label("Search").click();
    settle(&mut h);
    let store = Store::open(&f.path).unwrap();
    let s = h.state().session.as_ref().unwrap();
    assert!(!h.state().tree.hits.is_empty());
    let sel = s.selected.unwrap();
    // the first match is on the abandoned (rewound) branch, not on the active path
    let m = &store
        .path_to(&f.demo.conversation, &s.heads[sel].id)
        .unwrap();
    assert!(cairn::render::source_text(m.last().unwrap()).contains("SegQueue"));
    assert!(!s.on_path[sel]);
    // the selected message's run is drawn, labelled, in the graph
    h.get_by_label(&cairn::window::node_label(s, sel));
}

/// A long linear-with-branches session: only what is on screen becomes widgets.
#[test]
fn a_long_session_builds_only_the_rows_and_nodes_on_screen() {
    use cairn::model::{NewMessage, Role};
    use cairn::store::ImportedMessage;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.db");
    let conv = {
        let mut store = Store::open(&path).unwrap();
        let mut msgs = Vec::new();
        for i in 0..6000usize {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            // a side branch every 500 messages
            let parent = if i == 0 {
                None
            } else if i % 500 == 0 {
                Some(i - 2)
            } else {
                Some(i - 1)
            };
            msgs.push(ImportedMessage {
                parent,
                message: NewMessage::text(role, format!("text {i}")),
            });
        }
        store
            .import_conversation(
                Some("big"),
                &msgs,
                Some(5999),
                &[],
                &serde_json::Value::Null,
            )
            .unwrap()
            .0
    };
    let mut app = Explorer::new(path);
    app.native_dialogs = false;
    app.select(&conv);
    // every run shown in full: thousands of messages in the graph
    if let Some(s) = app.session.as_mut() {
        for seg in s.layout.segments.clone() {
            let first = s.layout.chain[seg.start as usize] as usize;
            s.expanded.insert(s.heads[first].id.clone());
        }
        s.relayout();
        assert!(s.layout.height > 5000);
    }
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut Explorer| app.draw(ui), app);
    h.run();
    let nodes = h.query_all_by_label_contains("message ").count();
    let headers = h.query_all_by_label_contains(" tok").count();
    assert!(nodes > 5 && nodes < 80, "graph widgets: {nodes}");
    assert!(headers > 5 && headers < 80, "transcript rows: {headers}");
}

#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl eframe::egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn files_dropped_on_the_window_are_imported() {
    let f = fixture();
    let mut h = harness(&f);
    let n = h.state().conversations.len();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-rewind-fork-2.1.42.jsonl");
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(file)));
    settle(&mut h);
    assert_eq!(h.state().conversations.len(), n + 1);
    // a bad file dropped: one line of error, nothing imported
    let bad = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/small/cc-malformed.jsonl");
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(bad)));
    settle(&mut h);
    assert_eq!(h.state().conversations.len(), n + 1);
    let (msg, err) = h.state().status.clone().unwrap();
    assert!(err && msg.contains("cc-malformed.jsonl:"), "{msg}");
}

#[test]
fn dragging_pans_and_zooming_keeps_the_point_under_the_pointer() {
    use eframe::egui::{Event, pos2, vec2};
    let f = fixture();
    let mut h = harness(&f);
    let canvas = h.state().tree.graph.canvas.expect("the tree is drawn");
    // an empty spot of the canvas (bottom left)
    let at = pos2(canvas.left() + 20.0, canvas.bottom() - 20.0);
    let pan = h.state().tree.graph.pan;
    h.hover_at(at);
    h.run_steps(1);
    h.drag_at(at);
    h.run_steps(1);
    h.hover_at(at + vec2(60.0, -40.0));
    h.run_steps(1);
    h.drop_at(at + vec2(60.0, -40.0));
    h.run_steps(2);
    let moved = h.state().tree.graph.pan - pan;
    assert!((moved - vec2(60.0, -40.0)).length() < 1.0, "{moved:?}");

    // zoom around a point: the layout point under the pointer stays there
    let p = canvas.center();
    let (pan, zoom) = (h.state().tree.graph.pan, h.state().tree.graph.zoom);
    let layout_point = (p - canvas.min - pan) / zoom;
    h.hover_at(p);
    h.run_steps(1);
    h.event(Event::Zoom(2.0));
    h.run_steps(2);
    let g = &h.state().tree.graph;
    assert!((g.zoom - zoom * 2.0).abs() < 1e-3, "{} {}", g.zoom, zoom);
    let after = (p - canvas.min - g.pan) / g.zoom;
    assert!(
        (after - layout_point).length() < 0.5,
        "{after:?} {layout_point:?}"
    );
}

#[test]
fn discover_lists_the_sessions_on_the_machine_and_imports_one() {
    let f = fixture();
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-work-demo");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code/cc-rewind-fork-2.1.42.jsonl"),
        project.join("session.jsonl"),
    )
    .unwrap();
    let mut app = Explorer::new(f.path.clone());
    app.native_dialogs = false;
    app.home = Some(cairn::discover::Home::at(home.path()));
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut Explorer| app.draw(ui), app);
    h.run();
    let n = h.state().conversations.len();
    h.get_by_label("Discover").click();
    h.run();
    h.get_by_label_contains("-work-demo/session.jsonl");
    h.get_by_label("Import").click();
    settle(&mut h);
    assert_eq!(h.state().conversations.len(), n + 1);
}

#[test]
fn turns_appended_by_another_process_show_up_without_a_reload() {
    let f = fixture();
    let mut h = harness(&f);
    let before = h.state().session.as_ref().unwrap().heads.len();
    // another writer (an agent, the CLI) appends a turn to the open conversation
    {
        let mut other = Store::open(&f.path).unwrap();
        other
            .append_turn(
                &f.demo.conversation,
                &[
                    cairn::model::NewMessage::text(cairn::model::Role::User, "and the p99 now?"),
                    cairn::model::NewMessage::text(cairn::model::Role::Assistant, "17 µs."),
                ],
            )
            .unwrap();
    }
    // a few seconds of UI time later
    h.run_steps(12);
    let s = h.state().session.as_ref().unwrap();
    assert_eq!(s.heads.len(), before + 2);
    assert_eq!(s.conv.tip.as_deref(), Some(s.heads[before + 1].id.as_str()));
}

#[test]
fn the_snapshot_preview_shows_exactly_what_the_snapshot_rung_covers() {
    let f = fixture();
    let mut h = harness(&f);
    // with a marker already on the path (markers are not covered)
    h.get_by_label("Command").focus();
    h.get_by_label("Command").type_text("/shake elide");
    h.run();
    h.get_by_label("Run").click();
    settle(&mut h);
    h.get_by_label("Snapshots").click();
    settle(&mut h);
    let (first, last) = {
        let d = h.state().snapshots.remote.ready().unwrap();
        let rows: Vec<&String> = d
            .preview
            .rendered
            .manifest
            .pages
            .iter()
            .flat_map(|p| p.rows.iter().map(|r| &r.message))
            .collect();
        (rows[0].clone(), rows[rows.len() - 1].clone())
    };
    h.get_by_label("Command").focus();
    h.get_by_label("Command").type_text("/compact snapshot");
    h.run();
    h.get_by_label("Run").click();
    settle(&mut h);
    let store = Store::open(&f.path).unwrap();
    let path = store.active_path(&f.demo.conversation).unwrap();
    let marker = &path.last().unwrap().meta["cairn"];
    assert_eq!(marker["from"].as_str(), Some(first.as_str()));
    assert_eq!(marker["to"].as_str(), Some(last.as_str()));
}

/// `cairn ARGS --json` on the fixture's store, parsed.
fn cli_json(f: &Fixture, args: &[&str]) -> serde_json::Value {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(&f.path)
        .args(args)
        .env("CAIRN_CONFIG", f.path.with_file_name("no-config.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The window's Context and Compare views show the numbers `cairn context --json` and `cairn compare --json`
/// print: one definition of each figure, read here off the labels the views draw.
fn context_and_compare_match_the_cli(f: &Fixture, conversation: &str) {
    let ctx = cli_json(f, &["context", conversation, "--json"]);
    let rows = cli_json(f, &["compare", conversation, "--json"]);
    let mut h = harness(f);
    h.state_mut().select(conversation);
    h.run();
    h.get_by_label("Context").click();
    settle(&mut h);
    h.get_by_label_contains(&format!(
        "estimated {} tokens",
        ctx["estimated_total"].as_u64().unwrap()
    ));
    h.get_by_label_contains(&format!("free {}", ctx["free"].as_i64().unwrap()));
    let has = |h: &Harness<'static, Explorer>, text: String| {
        assert!(
            h.query_all_by_label(&text).next().is_some(),
            "no label {text:?} in the view"
        );
    };
    for k in ["text", "tool_use", "tool_results", "thinking"] {
        has(&h, ctx["messages"][k].as_u64().unwrap().to_string());
    }
    has(&h, ctx["system"].as_u64().unwrap().to_string());
    for r in ctx["rungs"].as_array().unwrap() {
        has(&h, r["saves"].as_u64().unwrap().to_string());
    }
    h.get_by_label("Compare").click();
    settle(&mut h);
    for r in rows.as_array().unwrap() {
        has(&h, r["text_tokens_before"].as_u64().unwrap().to_string());
        has(&h, r["text_tokens_after"].as_u64().unwrap().to_string());
        has(
            &h,
            format!(
                "{} ({} kB)",
                r["image_tokens_after"].as_u64().unwrap(),
                r["image_bytes"].as_u64().unwrap() / 1024
            ),
        );
        has(
            &h,
            format!(
                "${:.3} list / ${:.3} warm",
                r["cost_list"].as_f64().unwrap(),
                r["cost_warm_cache"].as_f64().unwrap()
            ),
        );
    }
}

#[test]
fn the_window_shows_the_figures_the_cli_prints_on_the_demo() {
    let f = fixture();
    context_and_compare_match_the_cli(&f, &f.demo.conversation);
}

#[test]
fn the_window_shows_the_figures_the_cli_prints_after_a_harness_compaction() {
    let f = fixture();
    let conv = {
        let mut s = Store::open(&f.path).unwrap();
        let o = cairn::import::import_file(
            &mut s,
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/claude-code/cc-compact-boundary.jsonl"),
            None,
        );
        o.conversations[0].clone()
    };
    context_and_compare_match_the_cli(&f, &conv);
}

#[test]
fn searching_every_session_opens_a_hit_in_its_conversation() {
    let f = fixture();
    let mut h = harness(&f);
    // Ctrl+Shift+F opens the store-wide search with the cursor in its field
    h.key_press_modifiers(
        eframe::egui::Modifiers::COMMAND | eframe::egui::Modifiers::SHIFT,
        eframe::egui::Key::F,
    );
    h.run();
    assert_eq!(h.state().view, View::Search);
    h.state_mut().search_panel.query = "SegQueue".into();
    h.get_by_label("Search all sessions").click();
    settle(&mut h);
    let r = h.state().search_panel.results.ready().unwrap().clone();
    assert!(r.total >= 1, "{r:?}");
    // the hit on the rewound branch, marked as such; clicking it opens it selected in the tree
    let hit = r.hits.iter().find(|x| !x.on_active_path).unwrap().clone();
    h.query_all_by_label_contains("side branch")
        .next()
        .unwrap()
        .click();
    h.run_steps(2);
    assert_eq!(h.state().view, View::Tree);
    let s = h.state().session.as_ref().unwrap();
    assert_eq!(s.conv.id, hit.conversation);
    assert_eq!(s.heads[s.selected.unwrap()].id, hit.message);
}

#[test]
fn stats_timeline_and_diff_views_show_the_cores_figures() {
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Stats").click();
    for _ in 0..4 {
        settle(&mut h);
    }
    let table = h
        .state()
        .stats
        .table
        .ready()
        .expect("the table by model")
        .clone();
    assert!(
        table
            .rows
            .iter()
            .any(|r| r.key == "claude-opus-4-7" && r.turns > 0)
    );
    assert!(h.state().stats.by_day.ready().is_some());
    h.get_by_label("claude-opus-4-7");
    h.get_by_label("Costliest sessions");

    h.get_by_label("Timeline").click();
    settle(&mut h);
    let (_, t) = h
        .state()
        .timeline
        .data
        .ready()
        .expect("the timeline")
        .clone();
    let replies = Store::open(&f.path)
        .unwrap()
        .active_path(&f.demo.conversation)
        .unwrap()
        .iter()
        .filter(|m| m.role == cairn::model::Role::Assistant)
        .count();
    assert_eq!(t.points.len(), replies);
    h.get_by_label_contains("Context over time");

    // the diff view compares the conversation with its fork by default: both sides drawn
    h.get_by_label("Diff").click();
    settle(&mut h);
    let (_, _, d) = h.state().diff.data.ready().expect("the diff").clone();
    assert!(d.shared > 0 && d.b.messages > 0);
    h.get_by_label("A");
    h.get_by_label("B");
}

#[test]
fn the_snapshot_view_renders_the_page_shape_picked() {
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Snapshots").click();
    settle(&mut h);
    let dense = h
        .state()
        .snapshots
        .remote
        .ready()
        .expect("pages")
        .preview
        .rendered
        .stats
        .chars_per_image_token;
    // the pages are drawn in the model's default shape, and the list shows every shape's density on this middle
    let (default, densities) = {
        let p = &h.state().snapshots.remote.ready().unwrap().preview;
        assert_eq!(p.shape.name, p.default_shape.name);
        (p.default_shape.name, p.densities.clone())
    };
    assert_eq!(densities.len(), cairn::render::shape::SHAPES.len());
    // opened the way `cairn screenshot --view shapes` opens it
    h.state_mut().snapshots.open_picker = true;
    h.run_steps(2);
    h.get_by_label_contains(&format!("the model's default ({default})"));
    for d in &densities {
        let shown = format!("{:.1}", d.chars_per_image_token);
        assert!(
            h.query_all_by_label(&shown).count() >= 1,
            "{}: {shown}",
            d.shape
        );
        assert!(d.image_tokens > 0, "{}", d.shape);
    }
    // pick oh-my-pi's Claude geometry from the Shape list
    h.get_by_label("8x13-on-11x16").click();
    h.run_steps(1);
    settle(&mut h);
    let snap = h
        .state()
        .snapshots
        .remote
        .ready()
        .expect("pages in the new shape");
    assert_eq!(snap.preview.options.advance, Some((11, 16)));
    assert!(snap.preview.options.lines);
    // what the list said it would cost is what it drew
    let said = densities
        .iter()
        .find(|d| d.shape == "8x13-on-11x16")
        .unwrap();
    assert_eq!(
        (said.pages, said.image_tokens),
        (
            snap.preview.rendered.stats.pages,
            snap.preview.rendered.stats.image_tokens
        )
    );
    let roomy = snap.preview.rendered.stats.chars_per_image_token;
    assert!(
        roomy < dense / 2.0,
        "the roomier shape holds fewer characters per token: {roomy} vs {dense}"
    );
}

#[test]
fn read_back_shows_what_a_reader_missed() {
    // a reader that reads nothing: every strip is a miss (the real readers run in scripts/legibility)
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("read-nothing");
    std::fs::write(&script, "#!/bin/sh\necho '{}'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: no other test reads this variable
    unsafe { std::env::set_var("CAIRN_READ_STRIPS", &script) };
    let f = fixture();
    let mut h = harness(&f);
    h.get_by_label("Snapshots").click();
    settle(&mut h);
    h.get_by_label("Read back").click();
    settle(&mut h);
    let r = h
        .state()
        .snapshots
        .readback
        .ready()
        .expect("a reading")
        .clone();
    assert_eq!(r.accuracy.all, Some(0.0));
    assert!(r.strips > 10 && r.readings.iter().all(|x| x.read.iter().all(|ok| !ok)));
    h.get_by_label_contains("Misread strips");
}

#[test]
fn compact_from_here_in_the_tree_snapshots_that_message_through_the_tip() {
    let f = fixture();
    let mut h = harness(&f);
    // a message of the active path that the graph draws, near the tip
    let candidates: Vec<(String, String, usize)> = {
        let s = h.state().session.as_ref().unwrap();
        (2..s.path.len() - 2)
            .rev()
            .map(|d| {
                let i = s.path[d];
                (cairn::window::node_label(s, i), s.heads[i].id.clone(), d)
            })
            .collect()
    };
    let (label, id, depth) = candidates
        .into_iter()
        .find(|(l, _, _)| h.query_by_label(l).is_some())
        .expect("a node of the active path drawn");
    let before = Store::open(&f.path)
        .unwrap()
        .active_path(&f.demo.conversation)
        .unwrap()
        .len();
    h.get_by_label(&label).click_secondary();
    h.run_steps(2);
    h.get_by_label("Compact from here").click();
    settle(&mut h);
    let store = Store::open(&f.path).unwrap();
    let path = store.active_path(&f.demo.conversation).unwrap();
    assert_eq!(path.len(), before + 1, "one marker");
    let marker = path.last().unwrap();
    assert_eq!(marker.meta["cairn"]["strategy"], "snapshot");
    let from = marker.meta["cairn"]["span"][0].as_u64().unwrap() as usize;
    // from that message (or its call, when it is a result)
    assert!(
        from == depth || from + 1 == depth,
        "{from} vs {depth} ({id})"
    );
}

/// Whether a font of this machine has the character (fontconfig's list: `fc-list :charset=HEX`); None where
/// fontconfig's tool is not installed.
fn machine_has(c: char) -> Option<bool> {
    std::process::Command::new("fc-list")
        .arg(format!(":charset={:x}", c as u32))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| !o.stdout.is_empty())
}

#[test]
fn titles_in_chinese_arabic_hebrew_and_emoji_draw_with_the_machines_fonts_or_are_named_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    let mut store = Store::open(&path).unwrap();
    let titles = [
        "中文版 会话",
        "مرحبا بالعالم",
        "שלום עולם",
        "launch 🚀 done",
    ];
    let mut first = String::new();
    for t in titles {
        let c = store.create_conversation(Some(t)).unwrap();
        store
            .append_turn(
                &c,
                &[
                    cairn::model::NewMessage::text(cairn::model::Role::User, t),
                    cairn::model::NewMessage::text(cairn::model::Role::Assistant, "ok"),
                ],
            )
            .unwrap();
        if first.is_empty() {
            first = c;
        }
    }
    drop(store);
    let mut app = Explorer::new(path.clone());
    app.native_dialogs = false;
    // the machine's fonts are looked through beside the first frame; this test draws other scripts at once
    app.fonts_at_once = true;
    app.select(&first);
    // a script no font of this machine has is drawn as boxes (and named missing), as the window does for a user
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .allow_missing_glyphs()
        .build_ui_state(|ui, app: &mut Explorer| app.draw(ui), app);
    h.run();
    let font = eframe::egui::FontId::proportional(13.0);
    let fonts = h
        .state()
        .fonts
        .as_ref()
        .expect("fonts installed on the first frame");
    for (t, sample) in titles.iter().zip(['中', 'ع', 'ש', '🚀']) {
        let drawn = h.ctx.fonts_mut(|f| f.has_glyphs(&font, t));
        // fontconfig's own answer where its tool is here, else what the window found
        let has = machine_has(sample).unwrap_or(drawn);
        if has || sample == '🚀' {
            // egui's own fonts hold the emoji; a machine font the rest
            assert!(
                drawn,
                "{t}: a font of this machine has it, yet it draws as boxes ({:?})",
                fonts.added
            );
        } else {
            assert!(!drawn);
            assert!(
                !fonts.missing_in(t).is_empty(),
                "{t}: no font has it, and the window does not say so"
            );
        }
    }
    // the conversation list names them as they are (egui shapes a right-to-left run right to left itself)
    assert!(h.query_all_by_label_contains("中文版 会话").count() >= 1);
    assert!(h.query_all_by_label_contains("שלום עולם").count() >= 1);
}

#[test]
fn what_leaves_the_window_by_the_clipboard_leaves_redacted() {
    let f = fixture();
    let mut app = Explorer::new(f.path.clone());
    app.native_dialogs = false;
    app.select(&f.demo.conversation);
    // a widget that copies a transcript's text in the frame (a selection copied with Ctrl+C does the same)
    let secret = "deploy with AWS_SECRET_ACCESS_KEY=PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA+ and token sk-ant-oat01-2O76UMFxFkM_R5Kjp1vRt-1fjORS_6ilI8ihN5KXSc7Tvo_hBKqFYY_kv5ZJr3J1TWDtkwtDDb-xHKas1VOqg6AA";
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_ui_state(
            move |ui, app: &mut Explorer| {
                ui.ctx().copy_text(secret.to_string());
                app.draw(ui);
            },
            app,
        );
    h.run_steps(1);
    let copied: Vec<String> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            eframe::egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(copied.len(), 1, "{copied:?}");
    assert!(copied[0].starts_with("deploy with"), "{}", copied[0]);
    assert!(!copied[0].contains("PtYgjmUhBel3"), "{}", copied[0]);
    assert!(!copied[0].contains("sk-ant-oat01-2O76UMF"), "{}", copied[0]);
}

#[test]
fn a_late_answer_about_a_conversation_no_longer_open_is_dropped() {
    let f = fixture();
    // a second conversation to switch to
    let other = Store::open(&f.path)
        .unwrap()
        .fork(&f.demo.conversation, None)
        .unwrap();
    let mut h = harness(&f);
    // the context of the demo asked for, then another conversation opened before the answer is drawn
    h.state_mut().act(cairn::commands::Action::Context {
        conversation: f.demo.conversation.clone(),
        model: None,
    });
    h.state_mut().select(&other);
    settle(&mut h);
    // the demo's figures are never shown under the other conversation
    assert!(
        !matches!(h.state().context.report.ready(), Some((c, _)) if c == &other),
        "the demo's context was drawn under {other}"
    );
    // and the other's own, asked for when its view is shown, are
    h.state_mut().view = View::Context;
    settle(&mut h);
    settle(&mut h);
    let (c, _) = h
        .state()
        .context
        .report
        .ready()
        .expect("the other's context");
    assert_eq!(c, &other);
}

#[test]
fn a_session_file_an_agent_is_still_writing_is_followed_while_it_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/cc-rewind-fork-2.1.42.jsonl");
    let text = std::fs::read_to_string(&src).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // the agent has written half its session when it is imported
    let live = dir.path().join("live.jsonl");
    std::fs::write(&live, lines[..lines.len() / 2].concat()).unwrap();
    let db = dir.path().join("cairn.db");
    let conv = {
        let mut store = Store::open(&db).unwrap();
        let o = cairn::import::import_file(&mut store, &live, None);
        assert_eq!(o.status, "new", "{:?}", o.error);
        o.conversations[0].clone()
    };
    let whole = {
        let mut store = Store::open(dir.path().join("whole.db")).unwrap();
        let o = cairn::import::import_file(&mut store, &src, None);
        store.conversation(&o.conversations[0]).unwrap().messages as usize
    };
    let mut app = Explorer::new(db.clone());
    app.native_dialogs = false;
    app.select(&conv);
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut Explorer| app.draw(ui), app);
    h.run();
    let before = h.state().session.as_ref().unwrap().heads.len();
    assert!(before < whole);
    // it goes on writing while the window is open
    std::fs::write(&live, text.as_bytes()).unwrap();
    h.run_steps(12);
    settle(&mut h);
    h.run_steps(12);
    let s = h.state().session.as_ref().unwrap();
    assert_eq!(s.heads.len(), whole, "the whole session, once");
    assert_eq!(s.conv.id, conv, "in the same conversation");
    assert_eq!(Store::open(&db).unwrap().conversations().unwrap().len(), 1);
}

#[test]
fn a_copilot_session_s_floor_cost_and_premium_requests_show_in_the_diff_and_stats_views() {
    use cairn::commands::{self, Action, Outcome, Quiet};
    // a real Copilot CLI session whose subagents' runs ended without totals: their replies recorded output only
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/samples/copilot-cli/copilot-cli-1.0.74-compaction-subagents-shutdown-resume.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    let mut s = Store::open(&path).unwrap();
    let mut run = |a: Action| {
        commands::run(
            &mut s,
            &cairn::reclaim::Settings::default(),
            a,
            &Quiet,
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap()
    };
    run(Action::Import {
        paths: vec![file],
        format: None,
    });
    let Outcome::Stats(st) = run(Action::Stats {
        by: cairn::store::By::Conversation,
        since: None,
    }) else {
        panic!()
    };
    let floor = st
        .rows
        .iter()
        .find(|r| r.unrecorded_prompts > 0)
        .expect("a conversation with replies that recorded no prompt");
    let other = st.rows.iter().find(|r| r.key != floor.key).unwrap();
    drop(s);

    let mut app = Explorer::new(path.clone());
    app.native_dialogs = false;
    app.select(&floor.key);
    app.diff.other = Some(other.key.clone());
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut Explorer| app.draw(ui), app);
    h.run();
    h.get_by_label("Diff").click();
    settle(&mut h);
    let (_, _, d) = h.state().diff.data.ready().expect("the diff").clone();
    assert_eq!(d.a.unrecorded_prompts, floor.unrecorded_prompts);
    assert_eq!(d.a.cost_usd, None);
    // the side's line is the core's, floor and count included
    h.get_by_label(&d.a.cost_line());
    h.get_by_label_contains(&format!(
        "({} replies recorded no prompt)",
        floor.unrecorded_prompts
    ));

    // the Stats view: Copilot's premium requests, in a column of its own beside the list-price cost
    h.get_by_label("Stats").click();
    for _ in 0..4 {
        settle(&mut h);
    }
    let table = h.state().stats.table.ready().expect("the table").clone();
    let billed: Vec<f64> = table
        .rows
        .iter()
        .filter_map(|r| r.premium_requests)
        .collect();
    assert_eq!(billed, vec![6.0]);
    h.get_by_label("Copilot premium requests");
    h.get_by_label("6");
    // and its AI credits, GitHub's bill for the run: the figure in the cell, what it means on hover
    let credits: Vec<String> = table
        .rows
        .iter()
        .filter_map(|r| r.credits_figure())
        .collect();
    assert_eq!(credits, vec!["1,565.38".to_string()]);
    h.get_by_label("Copilot AI credits");
    h.get_by_label("1,565.38");
}
