//! The reclaim strategies side by side on the active path, from [`crate::commands::Action::Compare`]: one row per
//! strategy (none, each rung alone, the ladder) with tokens before and after, model calls, what was lost, the
//! cache prefix kept and the cost of the next request; picking a row previews the context it would leave
//! ([`crate::commands::Action::Preview`]), and Apply writes its marker.

use eframe::egui::{self, RichText};

use super::Session;
use super::panel::{Ask, At, Panel, Shared, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::reclaim::assemble::SentMessage;
use crate::reclaim::compare::{Candidate, StrategyRow};

/// A comparison, as the panel shows it.
pub struct Compared {
    pub conversation: String,
    pub budget: u64,
    pub model: String,
    pub window: u64,
    pub rows: Vec<StrategyRow>,
}

/// The context one strategy would leave, one line per message sent.
pub struct Previewed {
    pub conversation: String,
    pub strategy: Candidate,
    pub lines: Vec<String>,
}

#[derive(Default)]
pub struct ComparePanel {
    pub table: Remote<Compared>,
    pub preview: Remote<Previewed>,
    pub picked: Option<usize>,
}

fn lost(t: &crate::reclaim::Tally) -> String {
    let mut parts = Vec::new();
    if t.tool_results_elided > 0 {
        parts.push(format!("{} tool results elided", t.tool_results_elided));
    }
    if t.images_removed > 0 {
        parts.push(format!("{} images removed", t.images_removed));
    }
    if t.characters_imaged > 0 {
        parts.push(format!("{} chars as images", t.characters_imaged));
    }
    if t.summary_characters > 0 {
        parts.push(format!(
            "middle summarised ({} chars)",
            t.summary_characters
        ));
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(", ")
    }
}

/// One line of a preview: role, images, the first words.
pub fn preview_line(s: &SentMessage) -> String {
    use crate::model::{Block, ToolResultContent};
    let images = s
        .content
        .iter()
        .filter(|b| matches!(b, Block::Image { .. }))
        .count();
    let text: String = s
        .content
        .iter()
        .find_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            Block::ToolResult {
                content: ToolResultContent::Text(t),
                ..
            } => Some(t.as_str()),
            Block::ToolUse { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .unwrap_or("")
        .chars()
        .take(120)
        .collect::<String>()
        .replace('\n', " ");
    format!(
        "{:<9} {}{}",
        s.role.as_str(),
        if images > 0 {
            format!("[{images} image(s)] ")
        } else {
            String::new()
        },
        text
    )
}

impl ComparePanel {
    pub fn reset(&mut self) {
        self.table.reset();
        self.preview.reset();
    }

    /// Draws the table and the picked row's preview. Returns what to run: the comparison or a preview when
    /// missing, or a compaction when a row is applied.
    fn show(&mut self, ui: &mut egui::Ui, s: &Session) -> Option<Action> {
        let conversation = s.conv.id.clone();
        let mut act = None;
        if self.table.wanted() {
            self.table = Remote::Pending;
            return Some(Action::Compare {
                conversation,
                budget: None,
                profile: None,
            });
        }
        ui.horizontal(|ui| {
            if let Some(d) = self.table.ready() {
                ui.label(format!(
                    "Budget {} tokens: the target for {} (half of the {}-token window less the reply's reserve).",
                    d.budget, d.model, d.window
                ));
            }
            if ui.button("Compare again").clicked() {
                self.reset();
            }
        });
        let Some(data) = self.table.ready() else {
            self.table.show_missing(ui, "Comparing…");
            return None;
        };
        let picked = table_ui(ui, &data.rows, self.picked);
        ui.separator();
        let Some(k) = picked.filter(|&k| k < data.rows.len()) else {
            ui.weak("Pick a strategy to preview the context it would leave.");
            return None;
        };
        let row = &data.rows[k];
        let name = row.strategy;
        if self.picked != picked
            || self
                .preview
                .ready()
                .is_some_and(|p| p.strategy != name || p.conversation != conversation)
        {
            self.preview.reset();
        }
        self.picked = picked;
        if self.preview.wanted() {
            self.preview = Remote::Pending;
            return Some(Action::Preview {
                conversation,
                strategy: name,
                budget: Some(data.budget),
            });
        }
        ui.horizontal(|ui| {
            let n = self.preview.ready().map(|p| p.lines.len());
            ui.label(
                RichText::new(match n {
                    Some(n) => format!("Context after {name}: {n} messages"),
                    None => format!("Context after {name}: …"),
                })
                .strong(),
            );
            // the rung itself, for real: a marker at the tip (nothing stored is changed)
            // the provider's own edits are simulated here; they run on the provider's side, not as a marker
            if let Some(strategy) = name.applies()
                && row.ran
                && ui
                    .button(format!("Apply {name}"))
                    .on_hover_text("writes a compaction marker at the tip; undoable")
                    .clicked()
            {
                act = Some(Action::Compact {
                    conversation: conversation.clone(),
                    strategy,
                    force: true,
                    target: Some(data.budget),
                    protect: None,
                    instructions: None,
                    provider: None,
                    from: None,
                    to: None,
                });
            }
        });
        match self.preview.ready() {
            Some(p) => {
                let row_h = ui.text_style_height(&egui::TextStyle::Monospace);
                egui::ScrollArea::vertical()
                    .id_salt("compare-preview")
                    .auto_shrink([false, false])
                    .show_rows(ui, row_h, p.lines.len(), |ui, range| {
                        for l in &p.lines[range] {
                            ui.add(egui::Label::new(RichText::new(l).monospace()).truncate());
                        }
                    });
            }
            None => self.preview.show_missing(ui, "Assembling the preview…"),
        }
        act
    }
}

/// The comparison's table, a row per strategy; the row picked (a click picks another).
fn table_ui(ui: &mut egui::Ui, rows: &[StrategyRow], mut picked: Option<usize>) -> Option<usize> {
    egui::ScrollArea::horizontal()
        .id_salt("compare-scroll")
        .show(ui, |ui| {
            egui::Grid::new("compare-table")
                .striped(true)
                .num_columns(9)
                .spacing([14.0, 6.0])
                .show(ui, |ui| {
                    for h in [
                        "strategy",
                        "text before",
                        "text after",
                        "images after",
                        "model calls",
                        "lost",
                        "cache kept through",
                        "next request",
                        "fits",
                    ] {
                        ui.label(RichText::new(h).strong());
                    }
                    ui.end_row();
                    for (k, r) in rows.iter().enumerate() {
                        let label = format!("strategy {}", r.strategy);
                        if ui
                            .selectable_label(
                                picked == Some(k),
                                RichText::new(r.strategy.name()).strong(),
                            )
                            .on_hover_text(&label)
                            .clicked()
                        {
                            picked = Some(k);
                        }
                        row_cells(ui, r);
                        ui.end_row();
                    }
                });
        });
    picked
}

/// A strategy's figures: text before and after, images, model calls, what it loses, the cache it keeps, the next
/// request's cost, whether it fits.
fn row_cells(ui: &mut egui::Ui, r: &StrategyRow) {
    ui.label(r.text_tokens_before.to_string());
    ui.label(r.text_tokens_after.to_string());
    ui.label(format!(
        "{} ({} kB)",
        r.image_tokens_after,
        r.image_bytes / 1024
    ));
    ui.label(r.model_calls.to_string());
    ui.label(if r.ran {
        lost(&r.lost)
    } else {
        "(nothing to do)".into()
    });
    ui.label(
        r.cache_kept_through
            .as_deref()
            .map_or("-".to_string(), |s| s.chars().take(8).collect()),
    );
    ui.label(format!(
        "{} list / {} warm",
        crate::models::usd(r.cost_list, 3),
        crate::models::usd(r.cost_warm_cache, 3)
    ))
    .on_hover_text(format!(
        "each later request {}; pays for the cache it breaks after {}",
        crate::models::usd(r.cost_after, 3),
        r.break_even_replies
            .map_or("never".to_string(), |n| format!("{n} replies"))
    ));
    ui.label(if r.reaches_budget { "yes" } else { "no" });
}

impl Panel for ComparePanel {
    fn view(&self) -> super::View {
        super::View::Compare
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui, shared.session?).and_then(Ask::run)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(&mut self.table, purpose == For::Compare, error)
            || fail_into(&mut self.preview, purpose == For::Preview, error)
    }

    fn answered(&mut self, at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match outcome {
            Outcome::Compared {
                conversation,
                budget,
                policy,
                rows,
            } => {
                if at.is_open(&conversation) {
                    self.table = Remote::Ready(Compared {
                        conversation,
                        budget,
                        model: policy.model,
                        window: policy.window,
                        rows,
                    });
                }
                None
            }
            Outcome::Preview {
                conversation,
                strategy,
                sent,
            } => {
                if at.is_open(&conversation) {
                    self.preview = Remote::Ready(Previewed {
                        conversation,
                        strategy,
                        lines: sent.iter().map(preview_line).collect(),
                    });
                }
                None
            }
            other => Some(other),
        }
    }
}
