//! The context over time for the open conversation: at each reply on the active path, the prompt its provider
//! measured (solid, where the transcript has usage) and cairn's estimate (dashed), the model's window and the
//! compaction threshold as lines, every compaction marked, each prompt-cache miss a diamond coloured by its cause,
//! tool errors as red ticks. Clicking a point selects that
//! reply in the tree and the transcript. The data is the core's
//! ([`crate::commands::timeline::TimelineOf`]), the same `cairn context --over-time` prints.

use eframe::egui::{self, Color32};
use egui_plot::{HLine, Legend, Line, LineStyle, Plot, PlotPoints, Points, VLine};

use super::Session;
use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::worker::For;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::commands::timeline::TimelineOf;
use crate::reclaim::timeline::Timeline;

#[derive(Default)]
pub struct TimelinePanel {
    pub data: Remote<(String, Timeline)>,
}

/// A cache miss's colour by cause.
fn miss_colour(c: crate::cache::Cause) -> Color32 {
    use crate::cache::Cause;
    match c {
        Cause::Ttl => Color32::from_rgb(240, 190, 40),
        Cause::Compaction => Color32::from_rgb(200, 90, 200),
        Cause::Branch => Color32::from_rgb(90, 200, 220),
        Cause::Model => Color32::from_rgb(240, 120, 60),
        Cause::Overhead => Color32::from_rgb(230, 70, 120),
        Cause::Unknown => Color32::from_rgb(160, 160, 160),
    }
}

impl TimelinePanel {
    fn show(&mut self, ui: &mut egui::Ui, s: &Session) -> Option<Ask> {
        if self.data.wanted() {
            self.data = Remote::Pending;
            return Ask::run(Action::job(TimelineOf {
                conversation: s.conv.id.clone(),
                model: None,
            }));
        }
        let Some((_, t)) = self.data.ready() else {
            self.data
                .show_missing(ui, "Estimating the context at each reply…");
            return None;
        };
        header(ui, t);
        let Series {
            measured_pts,
            estimated_pts,
            error_pts,
            compaction_at,
            misses,
        } = Series::of(t);
        let (window, threshold) = (t.window as f64, t.threshold as f64);
        // the hover label: a miss's figures, else the reply and the series' tokens
        let points = &t.points;
        let hover = move |pos: &egui_plot::HoverPosition<'_>| hover_label(points, pos);
        let resp = Plot::new("context-over-time")
            .legend(Legend::default())
            .label_formatter(hover)
            .height((ui.available_height() - 10.0).max(240.0))
            .x_axis_label("reply")
            .y_axis_formatter(|y, _| kilo(y.value))
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
                for (cause, pts) in &misses {
                    p.points(
                        Points::new(
                            format!("cache miss: {}", cause.name()),
                            PlotPoints::from(pts.clone()),
                        )
                        .color(miss_colour(*cause))
                        .shape(egui_plot::MarkerShape::Diamond)
                        .radius(5.0),
                    );
                }
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
                return Some(Ask::Open {
                    conversation: None,
                    message: Some(p.message.clone()),
                });
            }
        }
        None
    }
}

/// The timeline's heading and totals (the core's: [`crate::reclaim::timeline::Timeline::totals`]).
fn header(ui: &mut egui::Ui, t: &crate::reclaim::timeline::Timeline) {
    let crate::reclaim::timeline::TimelineTotals {
        measured,
        compactions,
        tool_errors: errors,
        cache_misses: n_misses,
        cache_lost: lost,
    } = t.totals();
    ui.heading("Context over time");
    ui.label(format!(
        "{} replies on the active path ({measured} measured by the provider), {compactions} compaction(s), \
         {errors} failed tool result(s); window {}, compaction threshold {}",
        t.points.len(),
        t.window,
        t.threshold
    ));
    if n_misses > 0 {
        ui.label(format!(
            "{n_misses} prompt-cache miss(es), {} lost (marked by cause; `cairn cache` has each reply)",
            crate::models::usd(Some(lost), 2)
        ));
    }
}

impl Panel for TimelinePanel {
    fn view(&self) -> super::View {
        super::View::Timeline
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui, shared.session?)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(
            &mut self.data,
            purpose == For::Panel(super::View::Timeline),
            error,
        )
    }

    fn answered(&mut self, at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Timeline>(outcome) {
            Ok(t) => {
                if let Some(c) = at.conversation() {
                    self.data = Remote::Ready((c, t));
                }
                None
            }
            Err(other) => Some(*other),
        }
    }
}

/// The timeline's series, one point per reply: measured and estimated prompts, tool errors, compactions, and the
/// cache misses one series per cause.
struct Series {
    measured_pts: Vec<[f64; 2]>,
    estimated_pts: Vec<[f64; 2]>,
    error_pts: Vec<[f64; 2]>,
    compaction_at: Vec<f64>,
    misses: Vec<(crate::cache::Cause, Vec<[f64; 2]>)>,
}

impl Series {
    fn of(t: &Timeline) -> Series {
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
        // cache misses at the prompt they re-sent, one series per cause (its colour and name on hover)
        let mut misses: Vec<(crate::cache::Cause, Vec<[f64; 2]>)> = Vec::new();
        for (k, p) in t.points.iter().enumerate() {
            if let Some(c) = p.cache_miss {
                let y = p.measured.unwrap_or(p.estimated) as f64;
                match misses.iter_mut().find(|(x, _)| *x == c) {
                    Some((_, v)) => v.push([k as f64, y]),
                    None => misses.push((c, vec![[k as f64, y]])),
                }
            }
        }
        Series {
            measured_pts,
            estimated_pts,
            error_pts,
            compaction_at,
            misses,
        }
    }
}

/// A tick on the tokens axis: `12k`, or the count under a thousand.
fn kilo(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{:.0}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

/// The hover label: a miss's figures, else the reply and the series' tokens.
fn hover_label(
    points: &[crate::reclaim::timeline::Point],
    pos: &egui_plot::HoverPosition<'_>,
) -> Option<String> {
    let egui_plot::HoverPosition::NearDataPoint {
        plot_name,
        position,
        ..
    } = pos
    else {
        return None;
    };
    let k = position.x.round().max(0.0) as usize;
    let p = points.get(k)?;
    Some(
        match p.cache_miss.filter(|_| plot_name.starts_with("cache miss")) {
            Some(cause) => format!(
                "reply {k}: cache miss ({})\n{} prompt tokens, {} lost",
                cause.name(),
                p.measured.unwrap_or(p.estimated),
                crate::models::usd(p.cache_lost, 4)
            ),
            None => format!("reply {k}\n{plot_name}: {:.0} tokens", position.y),
        },
    )
}
