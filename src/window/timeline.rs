//! The context over time for the open conversation: at each reply on the active path, the prompt its provider
//! measured (solid, where the transcript has usage) and cairn's estimate (dashed), the model's window and the
//! compaction threshold as lines, every compaction marked, tool errors as red ticks. Clicking a point selects that
//! reply in the tree and the transcript. The data is the core's
//! ([`crate::commands::Action::Timeline`]), the same `cairn context --over-time` prints.

use eframe::egui::{self, Color32};
use egui_plot::{HLine, Legend, Line, LineStyle, Plot, PlotPoints, Points, VLine};

use super::Session;
use super::remote::Remote;
use crate::commands::Action;
use crate::reclaim::timeline::Timeline;

#[derive(Default)]
pub struct TimelinePanel {
    pub data: Remote<(String, Timeline)>,
}

pub enum TimelineEvent {
    Run(Box<Action>),
    Select(String),
}

impl TimelinePanel {
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &Session) -> Option<TimelineEvent> {
        if self.data.wanted() {
            self.data = Remote::Pending;
            return Some(TimelineEvent::Run(Box::new(Action::Timeline {
                conversation: s.conv.id.clone(),
                model: None,
            })));
        }
        let Some((_, t)) = self.data.ready() else {
            self.data
                .show_missing(ui, "Estimating the context at each reply…");
            return None;
        };
        let measured = t.points.iter().filter(|p| p.measured.is_some()).count();
        let compactions = t.points.iter().filter(|p| p.compaction).count();
        let errors: u64 = t.points.iter().map(|p| p.tool_errors).sum();
        ui.heading("Context over time");
        ui.label(format!(
            "{} replies on the active path ({measured} measured by the provider), {compactions} compaction(s), \
             {errors} failed tool result(s); window {}, compaction threshold {}",
            t.points.len(),
            t.window,
            t.threshold
        ));
        let measured_pts: Vec<[f64; 2]> = t
            .points
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.measured.map(|m| [k as f64, m as f64]))
            .collect();
        let estimated_pts: Vec<[f64; 2]> = t
            .points
            .iter()
            .enumerate()
            .map(|(k, p)| [k as f64, p.estimated as f64])
            .collect();
        let error_pts: Vec<[f64; 2]> = t
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.tool_errors > 0)
            .map(|(k, _)| [k as f64, 0.0])
            .collect();
        let compaction_at: Vec<f64> = t
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.compaction)
            .map(|(k, _)| k as f64 - 0.5)
            .collect();
        let (window, threshold) = (t.window as f64, t.threshold as f64);
        let resp = Plot::new("context-over-time")
            .legend(Legend::default())
            .height((ui.available_height() - 10.0).max(240.0))
            .x_axis_label("reply")
            .y_axis_formatter(|y, _| {
                let v = y.value;
                if v.abs() >= 1000.0 {
                    format!("{:.0}k", v / 1000.0)
                } else {
                    format!("{v:.0}")
                }
            })
            .y_axis_label("tokens")
            .include_y(0.0)
            .include_y(window * 1.02)
            .allow_scroll(false)
            .show(ui, |p| {
                p.hline(HLine::new("window", window).color(Color32::GRAY));
                p.hline(
                    HLine::new("compaction threshold", threshold)
                        .color(Color32::from_rgb(230, 150, 40))
                        .style(LineStyle::dashed_loose()),
                );
                for x in &compaction_at {
                    p.vline(VLine::new("compaction", *x).color(Color32::from_rgb(200, 90, 200)));
                }
                p.line(
                    Line::new("estimated", PlotPoints::from(estimated_pts.clone()))
                        .color(Color32::from_rgb(120, 160, 230))
                        .style(LineStyle::dashed_dense()),
                );
                p.line(
                    Line::new("measured", PlotPoints::from(measured_pts.clone()))
                        .color(Color32::from_rgb(60, 180, 110))
                        .width(2.0),
                );
                p.points(
                    Points::new("tool errors", PlotPoints::from(error_pts.clone()))
                        .color(Color32::from_rgb(220, 60, 60))
                        .radius(3.0),
                );
                p.pointer_coordinate()
            });
        if resp.response.clicked()
            && let Some(at) = resp.inner
        {
            let k = at.x.round().max(0.0) as usize;
            if let Some(p) = t.points.get(k.min(t.points.len().saturating_sub(1))) {
                return Some(TimelineEvent::Select(p.message.clone()));
            }
        }
        None
    }
}
