//! The tree view: the session's graph ([`super::graph`]) and around it the selection's actions (switch tip, fork),
//! checkpoints (set, rewind, jump), tips, the tree's search, and its keys. A panel with its own state (the canvas,
//! the checkpoint label being typed, the search and its matches), like the others; unlike them it is drawn with
//! the open session to change (its selection, the runs folded, the bodies of the nodes it labels), and what else
//! it wants it asks of the explorer ([`TreeAsk`]): an action for the core, a node selected (which the transcript
//! follows), the rewind dialog, a failure to show.

use eframe::egui::{self, RichText};

use super::graph::{self, GraphView};
use super::session::Session;
use crate::commands::Action;
use crate::store::Store;

/// The tree's own state.
#[derive(Default)]
pub struct TreePanel {
    pub graph: GraphView,
    /// The label the next checkpoint takes (the next free `cp-N` when empty).
    pub checkpoint_label: String,
    /// The tree's search: query, matches (message ids), which match is selected.
    pub search: String,
    pub hits: Vec<String>,
    hit_at: usize,
}

/// What the tree asks of the explorer.
#[derive(Debug)]
pub enum TreeAsk {
    /// An action for the core.
    Run(Box<Action>),
    /// Select this node (revealed in the tree, which centres it, and in the transcript).
    Select(usize),
    /// A node clicked on the canvas: selected where it is (the canvas does not move), the transcript follows.
    Picked(usize),
    /// Ask how to rewind to this checkpoint (the dialog with the abandoned path's digest).
    Rewind(String),
    /// Something could not be done: the status line says why.
    Fail(String),
}

impl TreeAsk {
    fn run(action: Action) -> TreeAsk {
        TreeAsk::Run(Box::new(action))
    }
}

impl TreePanel {
    /// A conversation opened: the canvas starts over (the whole tree when it is readable that way) and the last
    /// conversation's matches are forgotten.
    pub fn opened(&mut self) {
        self.graph = GraphView {
            initial: true,
            ..GraphView::default()
        };
        self.hits.clear();
        self.hit_at = 0;
    }

    /// The matches of the tree's search arrived: the first is selected.
    pub fn found(&mut self, hits: Vec<String>, s: &Session) -> Option<TreeAsk> {
        self.hits = hits;
        self.hit_at = 0;
        self.next_hit(0, s)
    }

    /// The next match (`step` 1) or the current one (`step` 0).
    fn next_hit(&mut self, step: usize, s: &Session) -> Option<TreeAsk> {
        if self.hits.is_empty() {
            return None;
        }
        self.hit_at = (self.hit_at + step) % self.hits.len();
        s.find(&self.hits[self.hit_at]).map(TreeAsk::Select)
    }

    /// Moves the tip to the selected message.
    fn switch_tip(s: &Session) -> TreeAsk {
        match s.selected {
            Some(i) => TreeAsk::run(Action::Branch {
                conversation: s.conv.id.clone(),
                message: s.heads[i].id.clone(),
                expect: s.conv.tip.clone(),
            }),
            None => TreeAsk::Fail("select a message first".into()),
        }
    }

    /// Forks the root→selected path into a new conversation (opened when it is written).
    fn fork(s: &Session) -> TreeAsk {
        TreeAsk::run(Action::Fork {
            conversation: s.conv.id.clone(),
            at: s.selected.map(|i| s.heads[i].id.clone()),
        })
    }

    /// Labels the tip with the label typed (the next free `cp-N` when it is empty).
    fn checkpoint(&mut self, s: &Session) -> TreeAsk {
        TreeAsk::run(Action::Checkpoint {
            conversation: s.conv.id.clone(),
            label: Some(std::mem::take(&mut self.checkpoint_label)),
        })
    }

    /// Draws the view: the bars above the canvas, then the canvas.
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &mut Session, store: &Store) -> Vec<TreeAsk> {
        let mut asks = Vec::new();
        self.selection_bar(ui, s, &mut asks);
        self.checkpoints_bar(ui, s, &mut asks);
        ui.weak("drag to pan · Ctrl+wheel to zoom · arrows: parent/child/sibling · Home/End root/tip · C checkpoint · J next checkpoint · Ctrl+F find · N next match · Enter opens in transcript · right-click a node for actions");
        // the text of the nodes labelled last frame (a frame behind is invisible, and bodies stay cached)
        let missing = self.graph.visible.iter().any(|&i| s.body(i).is_none());
        let unread = if missing {
            s.ensure_bodies(store, &self.graph.visible).err()
        } else {
            None
        };
        let events = self.graph.show(ui, s);
        if let Some(e) = unread {
            asks.push(TreeAsk::Fail(e.to_string()));
            return asks;
        }
        asks.extend(Self::graph_events(s, events));
        asks
    }

    /// The selection's actions (switch tip, fork), a checkpoint set, the view fitted, the tree searched.
    fn selection_bar(&mut self, ui: &mut egui::Ui, s: &Session, asks: &mut Vec<TreeAsk>) {
        ui.horizontal_wrapped(|ui| {
            let sel = s.selected;
            match sel {
                Some(i) => ui.label(
                    RichText::new(format!("Selected: {}", graph::node_label(s, i))).strong(),
                ),
                None => ui.label("nothing selected"),
            };
            let not_tip = sel.is_some() && sel != s.tip;
            if ui
                .add_enabled(not_tip, egui::Button::new("Switch tip here"))
                .clicked()
            {
                asks.push(Self::switch_tip(s));
            }
            if ui
                .add_enabled(sel.is_some(), egui::Button::new("Fork from here"))
                .clicked()
            {
                asks.push(Self::fork(s));
            }
            ui.separator();
            let l = ui.label("Checkpoint label");
            ui.add(egui::TextEdit::singleline(&mut self.checkpoint_label).desired_width(90.0))
                .labelled_by(l.id);
            if ui
                .button("Set checkpoint")
                .on_hover_text("labels the tip (key C)")
                .clicked()
            {
                asks.push(self.checkpoint(s));
            }
            if ui.button("Fit").clicked() {
                self.graph.fit = true;
            }
            ui.separator();
            let l = ui.label("Find");
            let find = ui
                .add(
                    egui::TextEdit::singleline(&mut self.search)
                        .hint_text("text or id (Ctrl+F)")
                        .desired_width(130.0),
                )
                .labelled_by(l.id);
            if ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::F)) {
                find.request_focus();
            }
            let submitted = find.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (submitted || ui.button("Search").clicked()) && !self.search.trim().is_empty() {
                asks.push(TreeAsk::run(Action::Find {
                    conversation: s.conv.id.clone(),
                    query: self.search.trim().to_string(),
                }));
            }
            if !self.hits.is_empty() {
                if ui.button("Next match").on_hover_text("key N").clicked() {
                    asks.extend(self.next_hit(1, s));
                }
                ui.label(format!("{}/{}", self.hit_at + 1, self.hits.len()));
            }
        });
    }

    /// The checkpoints (rewind to one, jump to one) and the tips.
    fn checkpoints_bar(&mut self, ui: &mut egui::Ui, s: &Session, asks: &mut Vec<TreeAsk>) {
        ui.horizontal_wrapped(|ui| {
            if !s.checkpoints.is_empty() {
                ui.label("Checkpoints:");
            }
            for (c, node) in &s.checkpoints {
                if ui.button(format!("Rewind to {}", c.label)).clicked() {
                    asks.push(TreeAsk::Rewind(c.label.clone()));
                }
                if let Some(n) = node
                    && ui.small_button(format!("Jump to {}", c.label)).clicked()
                {
                    asks.push(TreeAsk::Select(*n));
                }
            }
            ui.label("Tips:");
            for t in s.tip.into_iter().chain(s.leaves.iter().copied()).take(12) {
                let h = &s.heads[t];
                let text = format!(
                    "Tip {}{}",
                    &h.id[..8.min(h.id.len())],
                    if Some(t) == s.tip { " (current)" } else { "" }
                );
                if ui.small_button(text).clicked() {
                    asks.push(TreeAsk::Select(t));
                }
            }
        });
    }

    /// What the canvas asked for: a node selected, a run folded, the tip switched, a fork, a session continued in
    /// a harness, a compaction from a node.
    fn graph_events(s: &mut Session, events: Vec<graph::GraphEvent>) -> Vec<TreeAsk> {
        let mut asks = Vec::new();
        for e in events {
            match e {
                graph::GraphEvent::Select(i) => asks.push(TreeAsk::Picked(i)),
                graph::GraphEvent::Toggle(start) => s.toggle_segment(start),
                graph::GraphEvent::Branch(i) => {
                    s.selected = Some(i);
                    asks.push(Self::switch_tip(s));
                    break;
                }
                graph::GraphEvent::Fork(i) => {
                    s.selected = Some(i);
                    asks.push(Self::fork(s));
                    break;
                }
                graph::GraphEvent::Continue(i, harness) => {
                    asks.push(match crate::discover::Home::of_user() {
                        Some(home) => TreeAsk::run(Action::Continue {
                            conversation: s.conv.id.clone(),
                            at: Some(s.heads[i].id.clone()),
                            harness,
                            home,
                            cwd: None,
                            redact: true,
                        }),
                        None => TreeAsk::Fail("no home folder to write the session under".into()),
                    });
                    break;
                }
                graph::GraphEvent::CompactFrom(i) => {
                    asks.push(TreeAsk::run(Action::Compact {
                        conversation: s.conv.id.clone(),
                        strategy: Some(crate::reclaim::Strategy::Snapshot),
                        force: true,
                        target: None,
                        protect: None,
                        instructions: None,
                        provider: None,
                        from: Some(s.heads[i].id.clone()),
                        to: None,
                    }));
                    break;
                }
            }
        }
        asks
    }

    /// The tree's keys, wherever the pointer is: arrows to parent, child and sibling, Home and End to the root
    /// and the tip, C to set a checkpoint, J to the next checkpoint, N to the next match.
    pub fn keys(&mut self, ctx: &egui::Context, s: &Session) -> Vec<TreeAsk> {
        let mut asks = Vec::new();
        let from = s.selected.or(s.tip);
        for k in [
            egui::Key::ArrowUp,
            egui::Key::ArrowDown,
            egui::Key::ArrowLeft,
            egui::Key::ArrowRight,
        ] {
            if ctx.input(|i| i.key_pressed(k))
                && let Some(to) = from.and_then(|f| graph::step(s, f, k))
            {
                asks.push(TreeAsk::Select(to));
            }
        }
        if ctx.input(|i| i.key_pressed(egui::Key::C)) {
            asks.push(self.checkpoint(s));
        }
        if ctx.input(|i| i.key_pressed(egui::Key::J)) {
            // the next checkpoint, cycling
            let targets: Vec<usize> = s.checkpoints.iter().filter_map(|(_, i)| *i).collect();
            let next = s
                .selected
                .and_then(|sel| targets.iter().position(|&t| t == sel))
                .map_or(0, |k| (k + 1) % targets.len().max(1));
            asks.extend(targets.get(next).map(|&t| TreeAsk::Select(t)));
        }
        if ctx.input(|i| i.key_pressed(egui::Key::N)) {
            asks.extend(self.next_hit(1, s));
        }
        let mut root = from;
        while let Some(p) = root.and_then(|r| s.parents[r]) {
            root = Some(p);
        }
        if ctx.input(|i| i.key_pressed(egui::Key::Home)) {
            asks.extend(root.map(TreeAsk::Select));
        }
        if ctx.input(|i| i.key_pressed(egui::Key::End)) {
            asks.extend(s.tip.map(TreeAsk::Select));
        }
        asks
    }
}
