//! The tree view around the graph: the selection's actions (switch tip, fork), checkpoints (set, rewind, jump),
//! tips, search, and the canvas itself ([`super::graph`]).

use super::*;

impl Explorer {
    pub(super) fn tree_view(&mut self, ui: &mut egui::Ui) {
        self.selection_bar(ui);
        self.checkpoints_bar(ui);
        ui.weak("drag to pan · Ctrl+wheel to zoom · arrows: parent/child/sibling · Home/End root/tip · C checkpoint · J next checkpoint · Ctrl+F find · N next match · Enter opens in transcript · right-click a node for actions");
        let (Some(s), Some(store)) = (&mut self.session, &self.store) else {
            return;
        };
        // the text of the nodes labelled last frame (a frame behind is invisible, and bodies stay cached)
        let missing = self.graph.visible.iter().any(|&i| s.body(i).is_none());
        let unread = if missing {
            s.ensure_bodies(store, &self.graph.visible).err()
        } else {
            None
        };
        let events = self.graph.show(ui, s);
        if let Some(e) = unread {
            self.fail(e.to_string());
            return;
        }
        self.graph_events(events);
    }

    /// The selection's actions (switch tip, fork), a checkpoint set, the view fitted, the tree searched.
    fn selection_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            let Some(s) = &self.session else { return };
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
                self.switch_tip();
            }
            if ui
                .add_enabled(sel.is_some(), egui::Button::new("Fork from here"))
                .clicked()
            {
                self.fork(None);
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
                let label = self.checkpoint_label.clone();
                self.set_checkpoint(&label);
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
            if (submitted || ui.button("Search").clicked())
                && !self.search.trim().is_empty()
                && let Some(conversation) = self.conv_id()
            {
                self.act(Action::Find {
                    conversation,
                    query: self.search.trim().to_string(),
                });
            }
            if !self.hits.is_empty() {
                if ui.button("Next match").on_hover_text("key N").clicked() {
                    self.next_hit(1);
                }
                ui.label(format!("{}/{}", self.hit_at + 1, self.hits.len()));
            }
        });
    }

    /// The checkpoints (rewind to one, jump to one) and the tips.
    fn checkpoints_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            let Some(s) = &self.session else { return };
            let cps: Vec<(String, Option<usize>)> = s
                .checkpoints
                .iter()
                .map(|(c, i)| (c.label.clone(), *i))
                .collect();
            if !cps.is_empty() {
                ui.label("Checkpoints:");
            }
            let mut jump = None;
            for (label, node) in cps {
                if ui.button(format!("Rewind to {label}")).clicked() {
                    self.dialogs.rewind = Some(RewindDialog {
                        label: label.clone(),
                        digest: String::new(),
                    });
                }
                if let Some(n) = node
                    && ui.small_button(format!("Jump to {label}")).clicked()
                {
                    jump = Some(n);
                }
            }
            let tips: Vec<usize> = s
                .tip
                .into_iter()
                .chain(s.leaves.iter().copied())
                .take(12)
                .collect();
            ui.label("Tips:");
            for t in tips {
                let h = &s.heads[t];
                let text = format!(
                    "Tip {}{}",
                    &h.id[..8.min(h.id.len())],
                    if Some(t) == s.tip { " (current)" } else { "" }
                );
                if ui.small_button(text).clicked() {
                    jump = Some(t);
                }
            }
            if let Some(n) = jump {
                self.select_node(n);
            }
        });
    }

    /// What the graph asked for: a node selected, a run folded, the tip switched, a fork, a session continued in
    /// a harness, a compaction from a node.
    fn graph_events(&mut self, events: Vec<graph::GraphEvent>) {
        let Some(s) = &mut self.session else { return };
        for e in events {
            match e {
                graph::GraphEvent::Select(i) => {
                    s.selected = Some(i);
                    self.transcript.reveal(s, i);
                }
                graph::GraphEvent::Toggle(start) => s.toggle_segment(start),
                graph::GraphEvent::Branch(i) => {
                    s.selected = Some(i);
                    self.switch_tip();
                    return;
                }
                graph::GraphEvent::Fork(i) => {
                    s.selected = Some(i);
                    self.fork(None);
                    return;
                }
                graph::GraphEvent::Continue(i, harness) => {
                    let (conversation, at) = (s.conv.id.clone(), s.heads[i].id.clone());
                    let Some(home) = crate::discover::Home::of_user() else {
                        self.fail("no home folder to write the session under".to_string());
                        return;
                    };
                    self.act(crate::commands::Action::Continue {
                        conversation,
                        at: Some(at),
                        harness,
                        home,
                        cwd: None,
                        redact: true,
                    });
                    return;
                }
                graph::GraphEvent::CompactFrom(i) => {
                    let (conversation, from) = (s.conv.id.clone(), s.heads[i].id.clone());
                    self.act(crate::commands::Action::Compact {
                        conversation,
                        strategy: Some(crate::reclaim::Strategy::Snapshot),
                        force: true,
                        target: None,
                        protect: None,
                        instructions: None,
                        provider: None,
                        from: Some(from),
                        to: None,
                    });
                    return;
                }
            }
        }
    }
}
