//! The command bar: slash commands typed at the bottom of the window, completed from the same list and parsed
//! by the same code as `cairn slash` into the same action (the explorer runs what is typed:
//! [`super::Explorer::run_command`]); below it the jobs running, each with a way to cancel it, and the status line.

use eframe::egui;

use super::worker::Running;
use crate::slash;

/// The bar's own state: what is being typed.
#[derive(Default)]
pub struct CommandBar {
    pub text: String,
}

/// What the bar asks of the explorer.
pub enum BarAsk {
    /// Run this slash command.
    Run(String),
    /// Cancel this job.
    Cancel(u64),
}

impl CommandBar {
    /// Draws the bar, the jobs running and the status line (an error in the error colour).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        running: &[Running],
        status: Option<&(String, bool)>,
    ) -> Option<BarAsk> {
        let mut ask = None;
        ui.horizontal(|ui| {
            let label = ui.label("Command");
            let edit = ui.add(
                egui::TextEdit::singleline(&mut self.text)
                    .hint_text("/compact, /shake, /context, /tree, /fork, /checkpoint, /rewind, /branch, /export, /undo")
                    .desired_width(420.0),
            )
            .labelled_by(label.id);
            let word = self.text.split_whitespace().next().unwrap_or("").to_string();
            if self.text.starts_with('/') && !self.text.contains(' ') {
                let options = slash::complete(&word);
                if edit.has_focus() && ui.input(|i| i.key_pressed(egui::Key::Tab)) && options.len() == 1 {
                    self.text = format!("{} ", options[0]);
                }
                for o in options {
                    if ui.small_button(o).clicked() {
                        self.text = format!("{o} ");
                    }
                }
            }
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) && !self.text.trim().is_empty() {
                ask = Some(BarAsk::Run(std::mem::take(&mut self.text)));
            }
            if ui.button("Run").clicked() && !self.text.trim().is_empty() {
                ask = Some(BarAsk::Run(std::mem::take(&mut self.text)));
            }
        });
        ui.horizontal(|ui| {
            for r in running {
                ui.spinner();
                ui.label(&r.label);
                ui.add(
                    egui::ProgressBar::new(r.progress.unwrap_or(0.0))
                        .desired_width(160.0)
                        .show_percentage(),
                );
                if ui.button("Cancel").clicked() {
                    ask = Some(BarAsk::Cancel(r.id));
                }
            }
            if let Some((s, err)) = status {
                if *err {
                    ui.colored_label(ui.visuals().error_fg_color, s);
                } else {
                    ui.label(s);
                }
            }
        });
        if !running.is_empty() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(100));
        }
        ask
    }
}
