//! The reclaim strategies side by side on the active path, from the core's [`crate::compact::compare`]: one
//! row per strategy (none, each rung alone, the ladder) with tokens before and after, model calls, what was
//! lost, the cache prefix kept and the cost of the next request; picking a row previews the context it
//! would leave.

use eframe::egui::{self, RichText};

use super::worker::Compared;

/// What the compare view asks the window to do.
pub enum Asked {
    Nothing,
    Again,
    /// Run this strategy ("ladder" or a rung's name).
    Apply(String),
}

#[derive(Default)]
pub struct CompareView {
    pub data: Option<Compared>,
    pub picked: Option<usize>,
    pub requested: bool,
    pub budget: u64,
    /// Why the last comparison failed (shown with a way to try again).
    pub error: Option<String>,
}

fn lost(t: &crate::compact::Tally) -> String {
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

impl CompareView {
    /// Draws the table. Returns what the user asked for: compare again, or apply a row's strategy.
    pub fn show(&mut self, ui: &mut egui::Ui) -> Asked {
        let mut again = Asked::Nothing;
        ui.horizontal(|ui| {
            ui.label(format!(
                "Budget {} tokens (half the model's window).",
                self.budget
            ));
            if ui.button("Compare again").clicked() {
                again = Asked::Again;
            }
        });
        let Some(data) = &self.data else {
            let waiting = if self.requested {
                "Comparing…"
            } else {
                "Not compared yet."
            };
            super::missing(ui, &mut self.error, waiting);
            return again;
        };
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
                        for (k, r) in data.rows.iter().enumerate() {
                            let label = format!("strategy {}", r.strategy);
                            if ui
                                .selectable_label(
                                    self.picked == Some(k),
                                    RichText::new(&r.strategy).strong(),
                                )
                                .on_hover_text(&label)
                                .clicked()
                            {
                                self.picked = Some(k);
                            }
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
                                    .map_or("-".to_string(), |s| s[..s.len().min(8)].to_string()),
                            );
                            ui.label(format!(
                                "${:.3} list / ${:.3} warm",
                                r.cost_list, r.cost_warm_cache
                            ));
                            ui.label(if r.reaches_budget { "yes" } else { "no" });
                            ui.end_row();
                        }
                    });
            });
        ui.separator();
        match self.picked {
            Some(k) => {
                let name = &data.rows[k].strategy;
                let preview = &data.previews[k];
                ui.horizontal(|ui| {
                    ui.label(
                        RichText::new(format!("Context after {name}: {} messages", preview.len()))
                            .strong(),
                    );
                    // the rung itself, for real: a marker at the tip (nothing stored is changed)
                    if name != "none"
                        && data.rows[k].ran
                        && ui
                            .button(format!("Apply {name}"))
                            .on_hover_text("writes a compaction marker at the tip; undoable")
                            .clicked()
                    {
                        again = Asked::Apply(name.clone());
                    }
                });
                let row_h = ui.text_style_height(&egui::TextStyle::Monospace);
                egui::ScrollArea::vertical()
                    .id_salt("compare-preview")
                    .auto_shrink([false, false])
                    .show_rows(ui, row_h, preview.len(), |ui, range| {
                        for l in &preview[range] {
                            ui.add(egui::Label::new(RichText::new(l).monospace()).truncate());
                        }
                    });
            }
            None => {
                ui.weak("Pick a strategy to preview the context it would leave.");
            }
        }
        again
    }
}
