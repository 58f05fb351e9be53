//! Every model the store has seen, as `cairn models` lists it: its provider, window, tokenizer, the estimator's
//! scale and list prices, each with where it came from (the settings, the catalog, what providers measured, cairn's
//! own rule, a default). QA and researchers check here which figures a session's estimate and cost rest on.
//!
//! The panel sends the core's command ([`ListModels`]) as a job and takes its answer back as that command's own
//! type: it needed no variant of the window's or the core's enums.

use eframe::egui::{self, RichText};

use super::View;
use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::models::ListModels;
use crate::commands::{Action, Outcome};
use crate::models::Listing;

#[derive(Default)]
pub struct ModelsPanel {
    pub rows: Remote<Vec<Listing>>,
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
        let Some(rows) = self.rows.ready() else {
            self.rows.show_missing(ui, "Reading the models…");
            return None;
        };
        let refresh = ui
            .horizontal(|ui| {
                ui.label(RichText::new(format!("{} model(s) seen", rows.len())).strong());
                ui.weak(
                    "each figure's source in brackets: settings, catalog, measured, harness, cairn, default; hover a window for the one a harness ran it with",
                );
                ui.button("Refresh").clicked()
            })
            .inner;
        egui::ScrollArea::both()
            .id_salt("models-scroll")
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
        None
    }
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
    ui.label(format!(
        "{} [{}]",
        r.tokenizer.name(),
        r.tokenizer_source.name()
    ));
    ui.label(format!("{:.2} [{}]", r.scale, r.scale_source.name()));
    let price = r.price_per_mtok.map_or("unknown".into(), |p| p.line());
    ui.label(format!("{price} [{}]", r.price_source.name()));
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
        fail_into(&mut self.rows, purpose == For::Panel(View::Models), error)
    }

    fn answered(&mut self, _at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Vec<Listing>>(outcome) {
            Ok(rows) => {
                self.rows = Remote::Ready(rows);
                None
            }
            Err(other) => Some(*other),
        }
    }

    fn stale(&mut self) {
        self.rows.reset();
    }
}
