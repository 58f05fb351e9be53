//! The command bar: slash commands typed at the bottom of the window, completed from the same list and parsed
//! by the same code as `cairn slash` into the same action.

use super::*;

impl Explorer {
    /// Runs a slash command: parsed by the same code as `cairn slash` into the same action. `/context` and
    /// `/tree` show their views, `/export` without a file opens the export dialog; everything else is the action.
    pub fn run_command(&mut self, input: &str) {
        let cmd = match slash::parse(input) {
            Ok(c) => c,
            Err(e) => return self.fail(e.0),
        };
        let Some(conversation) = self.conv_id() else {
            return self.fail("no conversation open");
        };
        match cmd {
            Slash::Context => self.view = View::Context,
            Slash::Tree => {
                self.view = View::Tree;
                self.tree.graph.fit = true;
            }
            Slash::Export { format, file: None } => {
                let k = ExportFormat::ALL
                    .iter()
                    .position(|x| *x == format)
                    .unwrap_or(0);
                self.open_export(k);
            }
            Slash::Branch { message } => {
                // select it too, so the views follow the move
                if let Some(s) = &mut self.session
                    && let Some(i) = s.find_prefix(&message)
                {
                    s.selected = Some(i);
                }
                self.act(Slash::Branch { message }.action(&conversation));
            }
            other => self.act(other.action(&conversation)),
        }
    }

    pub(super) fn command_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("Command");
            let edit = ui.add(
                egui::TextEdit::singleline(&mut self.command)
                    .hint_text("/compact, /shake, /context, /tree, /fork, /checkpoint, /rewind, /branch, /export, /undo")
                    .desired_width(420.0),
            )
            .labelled_by(label.id);
            let word = self.command.split_whitespace().next().unwrap_or("").to_string();
            if self.command.starts_with('/') && !self.command.contains(' ') {
                let options = slash::complete(&word);
                if edit.has_focus() && ui.input(|i| i.key_pressed(egui::Key::Tab)) && options.len() == 1 {
                    self.command = format!("{} ", options[0]);
                }
                for o in options {
                    if ui.small_button(o).clicked() {
                        self.command = format!("{o} ");
                    }
                }
            }
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) && !self.command.trim().is_empty() {
                let c = std::mem::take(&mut self.command);
                self.run_command(&c);
            }
            if ui.button("Run").clicked() && !self.command.trim().is_empty() {
                let c = std::mem::take(&mut self.command);
                self.run_command(&c);
            }
        });
        ui.horizontal(|ui| {
            let mut cancel = None;
            for r in &self.worker.running {
                ui.spinner();
                ui.label(&r.label);
                ui.add(
                    egui::ProgressBar::new(r.progress.unwrap_or(0.0))
                        .desired_width(160.0)
                        .show_percentage(),
                );
                if ui.button("Cancel").clicked() {
                    cancel = Some(r.id);
                }
            }
            if let Some(id) = cancel {
                self.worker.cancel(id);
            }
            if let Some((s, err)) = &self.status {
                if *err {
                    ui.colored_label(ui.visuals().error_fg_color, s);
                } else {
                    ui.label(s);
                }
            }
        });
        if self.jobs_running() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(100));
        }
    }
}
