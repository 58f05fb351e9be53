//! The /context breakdown as drawn bars: what the model would see on the active path by kind, against the
//! window, and what each rung of the reclaim ladder would take back now. The figures are the core's report
//! ([`crate::commands::context_report::ContextOf`]), the same `cairn context` prints.

use eframe::egui::{self, Align2, Color32, FontId, Rect, Sense, Vec2};

use super::Session;
use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::commands::context_report::ContextOf;
use crate::reclaim::report::ContextReport;

#[derive(Default)]
pub struct ContextPanel {
    pub report: Remote<(String, ContextReport)>,
}

fn bar(ui: &mut egui::Ui, label: &str, value: u64, max: u64, color: Color32) {
    ui.horizontal(|ui| {
        ui.add_sized([150.0, 18.0], egui::Label::new(label));
        let width = (ui.available_width() - 110.0).max(60.0);
        let (rect, _) = ui.allocate_exact_size(Vec2::new(width, 16.0), Sense::hover());
        let p = ui.painter();
        p.rect_filled(rect, 2.0, ui.visuals().faint_bg_color);
        let f = if max == 0 {
            0.0
        } else {
            (value as f32 / max as f32).min(1.0)
        };
        p.rect_filled(
            Rect::from_min_size(rect.min, Vec2::new(rect.width() * f, rect.height())),
            2.0,
            color,
        );
        ui.label(format!("{value}"));
    });
}

impl ContextPanel {
    /// Draws the report; asks for it when missing.
    fn show(&mut self, ui: &mut egui::Ui, s: &Session) -> Option<Action> {
        if self.report.wanted() {
            self.report = Remote::Pending;
            return Some(Action::job(ContextOf {
                conversation: s.conv.id.clone(),
                model: None,
            }));
        }
        match self.report.ready() {
            Some((_, r)) => {
                egui::ScrollArea::vertical()
                    .id_salt("context")
                    .show(ui, |ui| show(ui, r));
            }
            None => self.report.show_missing(ui, "Estimating…"),
        }
        None
    }
}

/// The window as one stacked bar, the reply's reserve marked at its end.
fn window_bar(ui: &mut egui::Ui, r: &ContextReport, parts: &[(&str, u64, Color32)]) {
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), 28.0), Sense::hover());
    let p = ui.painter();
    p.rect_filled(rect, 3.0, ui.visuals().faint_bg_color);
    let mut x = rect.left();
    for &(_, v, c) in parts {
        let w = rect.width() * v as f32 / r.window.max(1) as f32;
        p.rect_filled(
            Rect::from_min_size(egui::pos2(x, rect.top()), Vec2::new(w, rect.height())),
            0.0,
            c,
        );
        x += w;
    }
    let reserve_x = rect.right() - rect.width() * r.reply_reserve as f32 / r.window.max(1) as f32;
    p.line_segment(
        [
            egui::pos2(reserve_x, rect.top()),
            egui::pos2(reserve_x, rect.bottom()),
        ],
        egui::Stroke::new(2.0, ui.visuals().text_color()),
    );
    p.text(
        egui::pos2(reserve_x - 4.0, rect.center().y),
        Align2::RIGHT_CENTER,
        "reply reserve",
        FontId::proportional(11.0),
        ui.visuals().text_color(),
    );
}

/// What each rung would take back now, and whether it would run yet.
fn rungs_ui(ui: &mut egui::Ui, r: &ContextReport) {
    ui.label(egui::RichText::new("What each rung would take back now").strong());
    let max = r.rungs.iter().map(|x| x.saves).max().unwrap_or(0).max(1);
    for g in &r.rungs {
        bar(
            ui,
            &format!("{} ({} calls)", g.name, g.model_calls),
            g.saves,
            max,
            if g.would_run {
                Color32::from_rgb(80, 180, 110)
            } else {
                Color32::from_rgb(140, 140, 140)
            },
        );
        ui.weak(format!(
            "    {}{}",
            g.note,
            if g.would_run {
                ""
            } else {
                " (would not run yet)"
            }
        ));
    }
}

pub fn show(ui: &mut egui::Ui, r: &ContextReport) {
    ui.heading(format!(
        "Context: {} (window {} tokens, {})",
        r.model,
        r.window,
        r.window_source.name()
    ));
    if let Some(h) = &r.harness_compaction {
        ui.label(format!(
            "After {}'s compaction at {} ({} messages kept): {} of the path's {} messages are sent.",
            h.harness,
            h.message.chars().take(8).collect::<String>(),
            h.kept,
            r.messages_sent,
            r.messages_on_path
        ));
    }
    // the window as one stacked bar
    let parts = [
        ("system", r.system, Color32::from_rgb(150, 110, 220)),
        (
            "tools and overhead",
            r.tools_and_overhead,
            Color32::from_rgb(120, 120, 140),
        ),
        ("text", r.messages.text, Color32::from_rgb(80, 150, 240)),
        (
            "tool calls",
            r.messages.tool_use,
            Color32::from_rgb(240, 170, 60),
        ),
        (
            "tool results",
            r.messages.tool_results,
            Color32::from_rgb(230, 120, 40),
        ),
        ("images", r.messages.images, Color32::from_rgb(200, 80, 160)),
        (
            "thinking",
            r.messages.thinking,
            Color32::from_rgb(90, 190, 170),
        ),
        ("other", r.messages.other, Color32::from_rgb(160, 160, 160)),
    ];
    window_bar(ui, r, &parts);
    ui.label(format!(
        "estimated {} tokens{} · cached prefix {} · free {}",
        r.estimated_total,
        r.last_measured
            .map_or(String::new(), |m| format!(" (last measured {m})")),
        r.cached_tokens,
        r.free
    ));
    ui.weak(&r.calibration.source);
    ui.separator();
    let max = parts.iter().map(|p| p.1).max().unwrap_or(0).max(1);
    for (name, v, c) in parts {
        bar(ui, name, v, max, c);
    }
    ui.separator();
    rungs_ui(ui, r);
}

impl Panel for ContextPanel {
    fn view(&self) -> super::View {
        super::View::Context
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui, shared.session?).and_then(Ask::run)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(
            &mut self.report,
            purpose == For::Panel(super::View::Context),
            error,
        )
    }

    fn answered(&mut self, at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Box<ContextReport>>(outcome) {
            Ok(r) => {
                if let Some(c) = at.conversation() {
                    self.report = Remote::Ready((c, *r));
                }
                None
            }
            Err(other) => Some(*other),
        }
    }
}
