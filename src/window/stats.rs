//! Usage across the whole store: tokens and cost per day as a chart, the table by model or project, the tools
//! (calls, error rate, output), and the costliest sessions (click one to open it). The figures are the core's
//! ([`crate::commands::stats::UsageStats`]), the same `cairn stats` prints; the table can be copied as CSV.

use eframe::egui::{self, RichText};
use egui_plot::{Bar, BarChart, Legend, Plot};

use super::panel::{Ask, At, Panel, Shared, answer_of};
use super::remote::Remote;
use super::worker::For;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::commands::stats::UsageStats;
use crate::stats::Stats;
use crate::store::By;

const TABLES: [(By, &str); 4] = [
    (By::Model, "by model"),
    (By::Project, "by project"),
    (By::Week, "by week"),
    (By::Tool, "tools"),
];

#[derive(Default)]
pub struct StatsPanel {
    pub by_day: Remote<Stats>,
    pub table: Remote<Stats>,
    pub sessions: Remote<Stats>,
    table_by: usize,
    /// Which result is asked next (one request in flight at a time).
    pub waiting: Option<By>,
}

impl StatsPanel {
    pub fn reset(&mut self) {
        self.by_day.reset();
        self.table.reset();
        self.sessions.reset();
        self.waiting = None;
    }

    /// Where a result goes.
    pub fn set(&mut self, s: Stats) {
        let slot = match s.by {
            By::Day => &mut self.by_day,
            By::Conversation => &mut self.sessions,
            _ => &mut self.table,
        };
        *slot = Remote::Ready(s);
        self.waiting = None;
    }

    pub fn failed(&mut self, e: String) {
        match self.waiting.take() {
            Some(By::Day) => self.by_day = Remote::Failed(e),
            Some(By::Conversation) => self.sessions = Remote::Failed(e),
            _ => self.table = Remote::Failed(e),
        }
    }

    fn ask(&mut self, by: By) -> Option<Ask> {
        self.waiting = Some(by);
        Ask::run(Action::job(UsageStats {
            by,
            since: None,
            cache: false,
        }))
    }

    fn show(&mut self, ui: &mut egui::Ui) -> Option<Ask> {
        if self.waiting.is_none() {
            if self.by_day.wanted() {
                self.by_day = Remote::Pending;
                return self.ask(By::Day);
            }
            if self.table.wanted() {
                self.table = Remote::Pending;
                return self.ask(TABLES[self.table_by].0);
            }
            if self.sessions.wanted() {
                self.sessions = Remote::Pending;
                return self.ask(By::Conversation);
            }
        }
        let mut event = None;
        egui::ScrollArea::vertical()
            .id_salt("stats")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.heading("Usage across sessions");
                match self.by_day.ready() {
                    Some(days) => chart(ui, days),
                    None => self.by_day.show_missing(ui, "Summing…"),
                }
                ui.add_space(8.0);
                ui.horizontal(|ui| {
                    for (k, (_, name)) in TABLES.iter().enumerate() {
                        if ui.selectable_label(self.table_by == k, *name).clicked()
                            && self.table_by != k
                        {
                            self.table_by = k;
                            self.table.reset();
                        }
                    }
                    if let Some(t) = self.table.ready()
                        && ui.button("Copy CSV").clicked()
                    {
                        // redacted on its way out, with every copy (`redact_clipboard`)
                        let csv = crate::stats::csv(t);
                        ui.ctx().copy_text(csv);
                    }
                });
                match self.table.ready() {
                    Some(t) => table(ui, t),
                    None => self.table.show_missing(ui, "Summing…"),
                }
                ui.add_space(8.0);
                ui.label(RichText::new("Costliest sessions").strong());
                match self.sessions.ready() {
                    Some(s) => {
                        if let Some(id) = costliest(ui, s) {
                            event = Some(Ask::Open {
                                conversation: Some(id),
                                message: None,
                            });
                        }
                    }
                    None => self.sessions.show_missing(ui, "Summing…"),
                }
            });
        event
    }
}

/// Prompt tokens per day, stacked: cache reads (what the cache saved), cache writes, uncached input; output on
/// top. The cost of the days is summed above the chart.
fn chart(ui: &mut egui::Ui, days: &Stats) {
    let series = |f: &dyn Fn(&crate::stats::StatsRow) -> u64| -> Vec<Bar> {
        days.rows
            .iter()
            .enumerate()
            .map(|(k, r)| Bar::new(k as f64, f(r) as f64).name(&r.key).width(0.7))
            .collect()
    };
    let read = BarChart::new("cache reads", series(&|r| r.cache_read_tokens))
        .color(egui::Color32::from_rgb(90, 160, 110));
    let write = BarChart::new("cache writes", series(&|r| r.cache_write_tokens))
        .color(egui::Color32::from_rgb(210, 170, 60))
        .stack_on(&[&read]);
    let input = BarChart::new("uncached input", series(&|r| r.input_tokens))
        .color(egui::Color32::from_rgb(220, 110, 80))
        .stack_on(&[&read, &write]);
    let output = BarChart::new("output", series(&|r| r.output_tokens))
        .color(egui::Color32::from_rgb(110, 140, 230))
        .stack_on(&[&read, &write, &input]);
    let labels: Vec<String> = days.rows.iter().map(|r| r.key.clone()).collect();
    let totals = days.totals();
    let (total, unknown) = (totals.cost_usd, totals.unpriced_rows);
    ui.label(format!(
        "{} days, {} tokens, ${total:.2} at list prices{}",
        days.rows.len(),
        crate::stats::human(totals.tokens),
        if unknown > 0 {
            format!(
                " ({unknown} of the days have no cost: a model without a price, to add under \"prices\" in the \
                 settings, or replies that recorded no prompt)"
            )
        } else {
            String::new()
        }
    ));
    Plot::new("tokens-per-day")
        .height(200.0)
        .legend(Legend::default())
        .allow_scroll(false)
        .x_axis_formatter(move |x, _| {
            let k = x.value.round();
            if (x.value - k).abs() < 0.01 && k >= 0.0 {
                labels.get(k as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_axis_formatter(|y, _| crate::stats::human(y.value.max(0.0) as u64))
        .y_axis_label("tokens")
        .show(ui, |p| {
            p.bar_chart(read);
            p.bar_chart(write);
            p.bar_chart(input);
            p.bar_chart(output);
        });
}

fn table(ui: &mut egui::Ui, t: &Stats) {
    let tools = t.by == By::Tool;
    // what GitHub Copilot billed, in premium requests and in AI credits, where a session of the table recorded it
    let premium = !tools && t.rows.iter().any(|r| r.premium_requests.is_some());
    let credits = !tools && t.rows.iter().any(|r| r.ai_credits.is_some());
    egui::Grid::new(("stats-table", t.by.name()))
        .striped(true)
        .num_columns(if tools {
            5
        } else {
            10 + usize::from(premium) + usize::from(credits)
        })
        .show(ui, |ui| {
            let head = if tools {
                vec!["tool", "sessions", "calls", "error rate", "output tokens"]
            } else {
                vec![
                    t.by.name(),
                    "sessions",
                    "turns",
                    "tool calls",
                    "errors",
                    "input",
                    "cache writes",
                    "output",
                    "cache hits",
                    "cost",
                ]
            };
            let copilot = [
                (premium, "Copilot premium requests"),
                (credits, "Copilot AI credits"),
            ];
            let head = [head, copilot.iter().filter(|c| c.0).map(|c| c.1).collect()].concat();
            for h in head {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for r in &t.rows {
                let key: String = r.key.chars().take(48).collect();
                ui.label(key);
                ui.label(r.sessions.to_string());
                if tools {
                    ui.label(r.tool_calls.to_string());
                    ui.label(format!("{:.1}%", 100.0 * r.error_share()));
                    ui.label(crate::stats::human(r.result_tokens.unwrap_or(0)));
                } else {
                    ui.label(r.turns.to_string());
                    ui.label(r.tool_calls.to_string());
                    ui.label(r.tool_errors.to_string());
                    // the CLI's columns: the provider's uncached input, and cache writes beside it
                    ui.label(crate::stats::human(r.input_tokens));
                    ui.label(crate::stats::human(r.cache_write_tokens));
                    ui.label(crate::stats::human(r.output_tokens));
                    ui.label(
                        r.cache_hit_ratio
                            .map(|h| format!("{:.0}%", h * 100.0))
                            .unwrap_or_else(|| "-".into()),
                    );
                    let cost = ui.label(r.cost_text());
                    if let Some(u) = r.unrecorded_text() {
                        cost.on_hover_text(u);
                    }
                    let cells = [
                        (
                            premium,
                            r.premium_requests.map(|n| n.to_string()),
                            r.premium_text(),
                        ),
                        (credits, r.credits_figure(), r.credits_text()),
                    ];
                    for (shown, figure, said) in cells {
                        match (shown, figure, said) {
                            (false, _, _) => {}
                            (true, Some(figure), Some(said)) => {
                                ui.label(figure).on_hover_text(said);
                            }
                            (true, _, _) => {
                                ui.label("-");
                            }
                        }
                    }
                }
                ui.end_row();
            }
        });
}

/// The ten costliest sessions; returns the one clicked.
fn costliest(ui: &mut egui::Ui, s: &Stats) -> Option<String> {
    let mut rows: Vec<&crate::stats::StatsRow> = s.rows.iter().collect();
    rows.sort_by(|a, b| {
        let cost = |r: &crate::stats::StatsRow| r.cost_usd.or(r.cost_floor_usd).unwrap_or(-1.0);
        cost(b)
            .total_cmp(&cost(a))
            .then(b.output_tokens.cmp(&a.output_tokens))
    });
    let mut open = None;
    egui::Grid::new("costliest")
        .striped(true)
        .num_columns(4)
        .show(ui, |ui| {
            for r in rows.into_iter().take(10) {
                let title: String = r
                    .label
                    .as_deref()
                    .unwrap_or(&r.key)
                    .chars()
                    .take(60)
                    .collect();
                if ui.link(title).clicked() {
                    open = Some(r.key.clone());
                }
                ui.label(r.cost_text());
                ui.label(format!("{} turns", r.turns));
                ui.label(format!("{} out", crate::stats::human(r.output_tokens)));
                ui.end_row();
            }
        });
    open
}

impl Panel for StatsPanel {
    fn view(&self) -> super::View {
        super::View::Stats
    }

    fn needs_session(&self) -> bool {
        false
    }

    fn ui(&mut self, ui: &mut egui::Ui, _shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        let mine = purpose == For::Panel(super::View::Stats);
        if mine {
            StatsPanel::failed(self, error.to_string());
        }
        mine
    }

    fn answered(&mut self, _at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Stats>(outcome) {
            Ok(st) => {
                self.set(st);
                None
            }
            Err(other) => Some(*other),
        }
    }

    fn stale(&mut self) {
        self.reset();
    }
}
