//! Two attempts side by side: the open conversation's tip against another tip of its tree, a fork of it, or any
//! other conversation. Both sides' totals on top, then the continuations after the divergence aligned row by row
//! (one scroll for both), differing rows marked, and the text diff of a differing pair under it. The comparison
//! is the core's ([`crate::commands::diff::DiffPaths`]), the same `cairn diff` prints.

use eframe::egui::{self, Color32, RichText};

use super::Session;
use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::commands::diff::DiffPaths;
use crate::diff::{Diff, Side};
use crate::model::Conversation;

#[derive(Default)]
pub struct DiffPanel {
    /// The other side: a conversation id or a message id (a tip of the open tree).
    pub other: Option<String>,
    pub data: Remote<(String, String, Diff)>,
}

fn side_label(ui: &mut egui::Ui, name: &str, s: &Side) {
    ui.vertical(|ui| {
        ui.label(RichText::new(name).strong());
        let tools = s.tool_counts();
        ui.label(format!(
            "{} messages, {} turns, {} tool calls, {} errors",
            s.messages, s.turns, s.tool_calls, s.tool_errors
        ));
        ui.label(s.cost_line());
        if !tools.is_empty() {
            ui.label(RichText::new(tools.join(", ")).weak());
        }
        if let Some(line) = s.final_line(90) {
            ui.label(RichText::new(format!("final reply: {line}")).italics());
        }
    });
}

impl DiffPanel {
    /// The other side when none was picked: a fork of the open conversation, else another tip of its tree.
    fn default_other(s: &Session, conversations: &[Conversation]) -> Option<String> {
        conversations
            .iter()
            .find(|c| {
                c.forked_from
                    .as_ref()
                    .is_some_and(|f| f.conversation == s.conv.id)
            })
            .map(|c| c.id.clone())
            .or_else(|| s.leaves.first().map(|&i| s.heads[i].id.clone()))
    }

    /// A and B: this tip, and what it is compared with (another tip of the tree, another conversation, the
    /// selected message); whether B changed.
    fn picker(
        &mut self,
        ui: &mut egui::Ui,
        s: &Session,
        conversations: &[Conversation],
        mine: &str,
    ) -> bool {
        let mut ask = false;
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "A: this conversation's tip {}",
                mine.chars().take(8).collect::<String>()
            ));
            ui.label("B:");
            let current = self.other.clone().unwrap_or_default();
            let shown = conversations
                .iter()
                .find(|c| c.id == current)
                .and_then(|c| c.title.clone())
                .unwrap_or_else(|| current.chars().take(8).collect());
            egui::ComboBox::new("diff-other", "compared with")
                .selected_text(shown.chars().take(50).collect::<String>())
                .width(320.0)
                .show_ui(ui, |ui| {
                    for &leaf in &s.leaves {
                        let id = s.heads[leaf].id.clone();
                        let label = format!(
                            "another tip of this tree: {}",
                            id.chars().take(8).collect::<String>()
                        );
                        ask |= ui
                            .selectable_value(&mut self.other, Some(id), label)
                            .changed();
                    }
                    for c in conversations.iter().filter(|c| c.id != s.conv.id) {
                        let label: String = c
                            .title
                            .as_deref()
                            .unwrap_or(&c.id)
                            .chars()
                            .take(60)
                            .collect();
                        ask |= ui
                            .selectable_value(&mut self.other, Some(c.id.clone()), label)
                            .changed();
                    }
                });
            if let Some(sel) = s.selected
                && ui.button("B = selected message").clicked()
            {
                self.other = Some(s.heads[sel].id.clone());
                ask = true;
            }
        });
        ask
    }

    fn show(
        &mut self,
        ui: &mut egui::Ui,
        s: &Session,
        conversations: &[Conversation],
    ) -> Option<Action> {
        if self.other.is_none() {
            self.other = Self::default_other(s, conversations);
        }
        let mine = s.conv.tip.clone().unwrap_or_else(|| s.conv.id.clone());
        let ask = self.picker(ui, s, conversations, &mine);
        ui.separator();
        let Some(other) = self.other.clone() else {
            ui.label("This conversation has no fork and no other tip: pick a conversation to compare with.");
            return None;
        };
        let stale = self
            .data
            .ready()
            .is_some_and(|(a, b, _)| *a != mine || *b != other);
        if ask || stale || self.data.wanted() {
            self.data = Remote::Pending;
            return Some(Action::job(DiffPaths { a: mine, b: other }));
        }
        let Some((_, _, d)) = self.data.ready() else {
            self.data.show_missing(ui, "Comparing…");
            return None;
        };
        ui.label(format!(
            "{} messages shared{}",
            d.shared,
            d.diverged_after
                .a
                .as_deref()
                .map(|m| format!(
                    "; they went apart after {}",
                    m.chars().take(8).collect::<String>()
                ))
                .unwrap_or_default()
        ));
        ui.columns(2, |cols| {
            side_label(&mut cols[0], "A", &d.a);
            side_label(&mut cols[1], "B", &d.b);
        });
        ui.separator();
        let differ = if ui.visuals().dark_mode {
            Color32::from_rgb(52, 40, 30)
        } else {
            Color32::from_rgb(255, 236, 214)
        };
        pairs_ui(ui, &d.pairs, differ);
        None
    }
}

impl Panel for DiffPanel {
    fn view(&self) -> super::View {
        super::View::Diff
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui, shared.session?, shared.conversations)
            .and_then(Ask::run)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(
            &mut self.data,
            purpose == For::Panel(super::View::Diff),
            error,
        )
    }

    fn answered(&mut self, _at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Box<Diff>>(outcome) {
            Ok(d) => {
                let a = d.a.tip.clone().unwrap_or_default();
                let b = self.other.clone().unwrap_or_default();
                self.data = Remote::Ready((a, b, *d));
                None
            }
            Err(other) => Some(*other),
        }
    }
}

/// The aligned messages, side by side, each pair that differs with its text diff.
fn pairs_ui(ui: &mut egui::Ui, pairs: &[crate::diff::Pair], differ: Color32) {
    egui::ScrollArea::vertical()
        .id_salt("diff-rows")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let w = (ui.available_width() - 30.0) / 2.0;
            for (k, p) in pairs.iter().enumerate() {
                let frame = egui::Frame::new()
                    .fill(if p.same { Color32::TRANSPARENT } else { differ })
                    .inner_margin(4.0);
                frame.show(ui, |ui| {
                    ui.horizontal_top(|ui| {
                        ui.label(RichText::new(if p.same { "=" } else { "≠" }).monospace());
                        for line in [&p.a_line, &p.b_line] {
                            ui.allocate_ui_with_layout(
                                egui::vec2(w, 0.0),
                                egui::Layout::top_down(egui::Align::Min),
                                |ui| {
                                    ui.set_width(w);
                                    ui.add(egui::Label::new(line.as_deref().unwrap_or("—")).wrap());
                                },
                            );
                        }
                    });
                    if let Some(diff) = &p.diff {
                        egui::CollapsingHeader::new("text diff")
                            .id_salt(("pair-diff", k))
                            .show(ui, |ui| {
                                for l in diff.lines().take(200) {
                                    let color = if l.starts_with('+') && !l.starts_with("+++") {
                                        Color32::from_rgb(60, 170, 90)
                                    } else if l.starts_with('-') && !l.starts_with("---") {
                                        Color32::from_rgb(220, 80, 80)
                                    } else {
                                        ui.visuals().weak_text_color()
                                    };
                                    ui.label(RichText::new(l).monospace().color(color));
                                }
                            });
                    }
                });
            }
        });
}
