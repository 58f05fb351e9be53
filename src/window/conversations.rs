//! The conversations panel: a filter, message counts, and forks and subagents drawn under the conversation they
//! came from (an iterative walk, so a long chain of forks of forks is no problem). A panel with its own state (the
//! filter typed, the list's order); the explorer opens what it says was clicked.

use eframe::egui;

use crate::model::Conversation;

/// The list's own state.
#[derive(Default)]
pub struct ConversationList {
    filter: String,
    /// The list's order and indentation ([`lineage`]), made when the store's list is read.
    lineage: Vec<(usize, usize)>,
}

/// The list's order: each conversation followed by its forks and subagents (and theirs), with its depth in that
/// tree.
/// Computed when the list is read, not per frame.
fn lineage(conversations: &[Conversation]) -> Vec<(usize, usize)> {
    let ids: std::collections::HashMap<&str, usize> = conversations
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); conversations.len()];
    let mut roots = Vec::new();
    for (i, c) in conversations.iter().enumerate() {
        // a fork under its origin, a subagent under the session that spawned it
        let parent = c
            .forked_from
            .as_ref()
            .map(|f| f.conversation.as_str())
            .or(c.linked_to.as_deref())
            .and_then(|p| ids.get(p).copied());
        match parent {
            Some(p) => kids[p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(conversations.len());
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        order.push((i, depth));
        for &k in kids[i].iter().rev() {
            stack.push((k, depth + 1));
        }
    }
    order
}

impl ConversationList {
    /// The store's conversations were read (again): the list's order is made for them.
    pub fn read(&mut self, conversations: &[Conversation]) {
        self.lineage = lineage(conversations);
    }

    /// Draws the list (`current` highlighted); the conversation clicked.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        conversations: &[Conversation],
        current: Option<&str>,
    ) -> Option<String> {
        ui.heading("Conversations");
        let label = ui.label("Filter");
        ui.add(egui::TextEdit::singleline(&mut self.filter).hint_text("title or id"))
            .labelled_by(label.id);
        ui.separator();
        let needle = self.filter.to_lowercase();
        let matches = |c: &Conversation| {
            needle.is_empty()
                || c.id.contains(&needle)
                || c.title
                    .as_deref()
                    .unwrap_or("")
                    .to_lowercase()
                    .contains(&needle)
        };
        let mut clicked = None;
        // the rows the filter keeps; only those on screen become widgets (thousands of sessions scroll smoothly)
        let rows: Vec<(usize, usize)> = self
            .lineage
            .iter()
            .copied()
            .filter(|&(i, _)| conversations.get(i).is_some_and(matches))
            .collect();
        let row_h = ui.text_style_height(&egui::TextStyle::Button)
            + ui.text_style_height(&egui::TextStyle::Body)
            + ui.spacing().item_spacing.y * 2.0
            + ui.spacing().button_padding.y * 2.0;
        egui::ScrollArea::vertical()
            .id_salt("conversation-list")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, rows.len(), |ui, range| {
                for &(i, depth) in &rows[range] {
                    let c = &conversations[i];
                    let title = c.title.clone().unwrap_or_else(|| "(untitled)".into());
                    ui.horizontal(|ui| {
                        ui.set_height(row_h - ui.spacing().item_spacing.y);
                        if depth > 0 {
                            ui.add_space(14.0 * (depth - 1) as f32);
                            ui.weak("└");
                        }
                        // long titles (a first prompt) are cut to the panel, with the whole title on hover
                        let short: String = title
                            .lines()
                            .next()
                            .unwrap_or("")
                            .chars()
                            .take(80)
                            .collect();
                        ui.vertical(|ui| {
                            if ui
                                .add(
                                    egui::Button::selectable(current == Some(c.id.as_str()), short)
                                        .truncate(),
                                )
                                .on_hover_text(&title)
                                .clicked()
                            {
                                clicked = Some(c.id.clone());
                            }
                            ui.weak(format!(
                                "{} · {} messages",
                                &c.id[..8.min(c.id.len())],
                                c.messages
                            ));
                        });
                    });
                }
            });
        clicked
    }
}
