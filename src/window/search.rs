//! Search over the whole store (Ctrl+Shift+F): a query in FTS5's language, filters, and the hits as a virtualised
//! list (each with its conversation, role, branch, time and a snippet with the match marked). Choosing a hit opens
//! its conversation with the message selected in the tree and shown in the transcript. The results are the core's
//! ([`crate::commands::search::SearchStore`]), the same `cairn search` prints.

use eframe::egui::{self, Color32, RichText, text::LayoutJob};

use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::commands::search::SearchStore;
use crate::search::{MARK_CLOSE, MARK_OPEN, Results};
use crate::store::SearchQuery;

const ROLES: [(&str, Option<&str>); 5] = [
    ("any role", None),
    ("prompts", Some("user")),
    ("replies", Some("assistant")),
    ("tool results", Some("tool")),
    ("system", Some("system")),
];

#[derive(Default)]
pub struct SearchPanel {
    pub query: String,
    role: usize,
    errors: bool,
    pub results: Remote<Results>,
    /// The query the results answer.
    asked: Option<SearchQuery>,
    /// Focus the field on the next frame (Ctrl+Shift+F).
    pub focus: bool,
}

/// A snippet with its «marks» drawn highlighted.
fn snippet_job(snippet: &str, ui: &egui::Ui) -> LayoutJob {
    let mut job = LayoutJob::default();
    let normal = egui::TextFormat {
        color: ui.visuals().text_color(),
        ..Default::default()
    };
    let marked = egui::TextFormat {
        color: ui.visuals().strong_text_color(),
        background: if ui.visuals().dark_mode {
            Color32::from_rgb(110, 90, 20)
        } else {
            Color32::from_rgb(255, 232, 140)
        },
        ..Default::default()
    };
    let mut rest = snippet;
    while let Some(a) = rest.find(MARK_OPEN) {
        job.append(&rest[..a], 0.0, normal.clone());
        let after = &rest[a + MARK_OPEN.len()..];
        let b = after.find(MARK_CLOSE).unwrap_or(after.len());
        job.append(&after[..b], 0.0, marked.clone());
        rest = after.get(b + MARK_CLOSE.len()..).unwrap_or("");
    }
    job.append(rest, 0.0, normal);
    job.wrap.max_rows = 2;
    job
}

impl SearchPanel {
    fn query(&self) -> SearchQuery {
        SearchQuery {
            text: self.query.trim().to_string(),
            role: ROLES[self.role].1.map(str::to_string),
            errors: self.errors,
            limit: 500,
            ..Default::default()
        }
    }

    fn show(&mut self, ui: &mut egui::Ui) -> Option<Ask> {
        let mut run = false;
        ui.horizontal(|ui| {
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.query)
                    .hint_text("Search every session: words, \"phrases\", prefix*, AND / OR / NOT")
                    .desired_width((ui.available_width() - 290.0).max(200.0)),
            );
            if std::mem::take(&mut self.focus) {
                field.request_focus();
            }
            run |= field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            egui::ComboBox::new("search-role", "role")
                .selected_text(ROLES[self.role].0)
                .show_ui(ui, |ui| {
                    for (k, (name, _)) in ROLES.iter().enumerate() {
                        run |= ui.selectable_value(&mut self.role, k, *name).changed();
                    }
                });
            run |= ui.checkbox(&mut self.errors, "errors").changed();
            run |= ui.button("Search all sessions").clicked();
        });
        ui.separator();
        let q = self.query();
        // a query typed (or staged) and not yet asked runs by itself
        if !q.text.is_empty() && (run || (self.results.wanted() && self.asked.as_ref() != Some(&q)))
        {
            self.asked = Some(q.clone());
            self.results = Remote::Pending;
            return Ask::run(Action::job(SearchStore(q)));
        }
        if q.text.is_empty() {
            ui.label(
                "Type a query and press Enter. Every conversation and every branch is searched.",
            );
            return None;
        }
        let Some(r) = self.results.ready() else {
            self.results.show_missing(ui, "Searching…");
            return None;
        };
        ui.label(format!("{} of {} matching messages", r.hits.len(), r.total));
        let mut open = None;
        let row = ui.text_style_height(&egui::TextStyle::Body) * 3.4;
        egui::ScrollArea::vertical()
            .id_salt("search-hits")
            .auto_shrink([false, false])
            .show_rows(ui, row, r.hits.len(), |ui, range| {
                for h in &r.hits[range] {
                    let title: String = h
                        .title
                        .as_deref()
                        .unwrap_or("(untitled)")
                        .chars()
                        .take(70)
                        .collect();
                    let resp = ui
                        .scope(|ui| {
                            // the whole row is the click target
                            ui.style_mut().interaction.selectable_labels = false;
                            ui.set_min_height(row - 6.0);
                            ui.horizontal(|ui| {
                                ui.label(RichText::new(title).strong());
                                ui.label(RichText::new(&h.role).weak());
                                let branch = if h.on_active_path {
                                    "active path"
                                } else {
                                    "side branch"
                                };
                                ui.label(RichText::new(branch).weak());
                                if let Some(t) = &h.timestamp {
                                    ui.label(
                                        RichText::new(t.replace('T', " ").trim_end_matches('Z'))
                                            .weak(),
                                    );
                                }
                            });
                            ui.label(snippet_job(&h.snippet, ui));
                        })
                        .response
                        .interact(egui::Sense::click());
                    let resp = resp.on_hover_cursor(egui::CursorIcon::PointingHand);
                    if resp.clicked() {
                        open = Some(Ask::Open {
                            conversation: Some(h.conversation.clone()),
                            message: Some(h.message.clone()),
                        });
                    }
                    ui.separator();
                }
            });
        open
    }
}

impl Panel for SearchPanel {
    fn view(&self) -> super::View {
        super::View::Search
    }

    fn needs_session(&self) -> bool {
        false
    }

    fn ui(&mut self, ui: &mut egui::Ui, _shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(
            &mut self.results,
            purpose == For::Panel(super::View::Search),
            error,
        )
    }

    fn answered(&mut self, _at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Results>(outcome) {
            Ok(r) => {
                self.results = Remote::Ready(r);
                None
            }
            Err(other) => Some(*other),
        }
    }

    fn stale(&mut self) {
        self.results.reset();
    }
}
