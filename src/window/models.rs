//! Every model the store has seen, as `cairn models` lists it: its provider, window, tokenizer, the estimator's
//! scale and list prices, each with where it came from (the settings, the catalog, what providers measured, cairn's
//! own rule, a default). QA and researchers check here which figures a session's estimate and cost rest on.
//!
//! The panel sends the core's command ([`ListModels`]) as a job and takes its answer back as that command's own
//! type: it needed no variant of the window's or the core's enums. "Update catalog" sends `cairn models --update`'s
//! command ([`UpdateCatalog`]) and says what it changed.

use eframe::egui::{self, RichText};

use super::View;
use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::models::{CatalogUpdate, ListModels, ModelsReport, UpdateCatalog};
use crate::commands::{Action, Outcome};
use crate::models::Listing;

#[derive(Default)]
pub struct ModelsPanel {
    pub rows: Remote<ModelsReport>,
    /// What the last catalog update changed, or why it failed.
    updated: Option<String>,
    /// An update is under way: a failure is its, not the listing's.
    updating: bool,
}

const COLUMNS: [&str; 11] = [
    "model",
    "replies",
    "provider",
    "family",
    "window",
    "tokenizer",
    "scale",
    "$/Mtok in/out/read/w5m/w1h",
    "past thinking",
    "pages",
    "largest prompt measured",
];

impl ModelsPanel {
    fn show(&mut self, ui: &mut egui::Ui) -> Option<Ask> {
        if self.rows.wanted() {
            self.rows = Remote::Pending;
            return Ask::run(Action::job(ListModels));
        }
        let Some(report) = self.rows.ready() else {
            self.rows.show_missing(ui, "Reading the models…");
            return None;
        };
        let rows = &report.models;
        let refresh = ui
            .horizontal(|ui| {
                ui.label(RichText::new(format!("{} model(s) seen", rows.len())).strong());
                ui.weak(
                    "each figure's source in brackets: settings, catalog, measured, harness, cairn, default; hover a window for the one a harness ran it with",
                );
                ui.button("Refresh").clicked()
            })
            .inner;
        let update = ui
            .horizontal(|ui| {
                ui.weak(format!("catalog: {}", report.catalog.line()));
                ui.button("Update catalog")
                    .on_hover_text(format!(
                        "fetch genai-prices' current data from {} and use it from now on (cairn models --update)",
                        crate::models::catalog::FEED
                    ))
                    .clicked()
            })
            .inner;
        if !report.unlisted.is_empty() {
            ui.weak(format!(
                "not in the catalog: {} (a newer copy may list them)",
                report.unlisted.join(", ")
            ));
        }
        if let Some(u) = &self.updated {
            ui.label(u);
        }
        // filling the panel: shrunk to the table, the floating horizontal bar would cover its last row
        egui::ScrollArea::both()
            .id_salt("models-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                egui::Grid::new("models-table")
                    .striped(true)
                    .num_columns(COLUMNS.len())
                    .spacing([14.0, 6.0])
                    .show(ui, |ui| {
                        for h in COLUMNS {
                            ui.label(RichText::new(h).strong());
                        }
                        ui.end_row();
                        for r in rows {
                            row(ui, r);
                            ui.end_row();
                        }
                    });
            });
        if refresh {
            self.rows.reset();
        }
        if update {
            let Some(to) = crate::config::catalog_path() else {
                self.updated = Some(
                    "no home folder to keep the catalog in; set CAIRN_CATALOG to a file".into(),
                );
                return None;
            };
            self.updated = Some("Fetching the catalog…".into());
            self.updating = true;
            return Ask::run(Action::job(UpdateCatalog {
                from: crate::models::catalog::FEED.to_string(),
                to,
            }));
        }
        None
    }
}

/// What an update changed, in a line.
fn summary(u: &CatalogUpdate) -> String {
    let changed: Vec<&str> = u.changed.iter().map(|c| c.model.as_str()).collect();
    format!(
        "Catalog updated: {} model(s) added, {} removed; {}",
        u.added.len(),
        u.removed.len(),
        if changed.is_empty() {
            "no model seen here is described otherwise".to_string()
        } else {
            format!("described otherwise now: {}", changed.join(", "))
        }
    )
}

/// One model's cells.
fn row(ui: &mut egui::Ui, r: &Listing) {
    ui.label(RichText::new(&r.model).monospace())
        .on_hover_text(format!("recorded as {}", r.recorded_as.join(", ")));
    ui.label(r.replies.to_string());
    ui.label(r.provider.as_deref().unwrap_or("-"));
    ui.label(r.family.name());
    let window = ui.label(format!("{} [{}]", r.window, r.window_source.name()));
    if !r.ran_with.is_empty() {
        window.on_hover_text(
            r.ran_with
                .iter()
                .map(|w| {
                    format!(
                        "{} ran it with a {}-token window in {} conversation(s), which are planned against it",
                        w.harness, w.window, w.conversations
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    let counted = ui.label(if r.tokenizer_per_path {
        "chosen per path [measured]".to_string()
    } else {
        format!("{} [{}]", r.tokenizer.name(), r.tokenizer_source.name())
    });
    if r.tokenizer_per_path {
        counted.on_hover_text(
            "no calibration yet: each conversation is counted with the tokenizer (cairn's estimate or o200k) its \
             own measured replies are explained best by; Calibrate fits one for the model",
        );
    }
    ui.label(format!("{:.2} [{}]", r.scale, r.scale_source.name()));
    let price = r.price_per_mtok.map_or("unknown".into(), |p| p.line());
    let priced = ui.label(format!("{price} [{}]", r.price_source.name()));
    if let Some(n) = r.price_learned_from {
        priced.on_hover_text(format!(
            "learned from {n} cost(s) its harness recorded: no catalog or settings price"
        ));
    }
    ui.label(if r.keeps_past_thinking {
        "kept"
    } else {
        "dropped"
    });
    ui.label(format!("{} · {}", r.profile, r.shape));
    ui.label(if r.measured_replies > 0 {
        r.max_prompt.to_string()
    } else {
        "-".into()
    });
}

impl Panel for ModelsPanel {
    fn view(&self) -> View {
        View::Models
    }

    fn needs_session(&self) -> bool {
        false
    }

    fn ui(&mut self, ui: &mut egui::Ui, _shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        let mine = purpose == For::Panel(View::Models);
        if mine && self.updating {
            self.updating = false;
            self.updated = Some(format!("Catalog not updated: {error}"));
            return true;
        }
        fail_into(&mut self.rows, mine, error)
    }

    fn answered(&mut self, _at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        let outcome = match answer_of::<ModelsReport>(outcome) {
            Ok(report) => {
                self.rows = Remote::Ready(report);
                return None;
            }
            Err(other) => *other,
        };
        match answer_of::<CatalogUpdate>(outcome) {
            Ok(u) => {
                self.updating = false;
                self.updated = Some(summary(&u));
                self.rows.reset();
                None
            }
            Err(other) => Some(*other),
        }
    }

    fn stale(&mut self) {
        self.rows.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_catalog_update_is_said_beside_the_models_it_leaves_shown() {
        let report = ModelsReport {
            catalog: crate::models::catalog::current().origin().clone(),
            models: Vec::new(),
            unlisted: Vec::new(),
        };
        let mut panel = ModelsPanel {
            rows: Remote::Ready(report.clone()),
            updated: Some("Fetching the catalog…".into()),
            updating: true,
        };
        assert!(panel.failed(For::Panel(View::Models), "https://example: dns error"));
        assert_eq!(
            panel.updated.as_deref(),
            Some("Catalog not updated: https://example: dns error")
        );
        assert_eq!(panel.rows.ready(), Some(&report));
        // a failure of the listing itself is still the listing's
        assert!(panel.failed(For::Panel(View::Models), "store busy"));
        assert!(matches!(&panel.rows, Remote::Failed(e) if e == "store busy"));
    }
}
