//! The command bar: slash commands typed at the bottom of the window, completed from the same list and parsed
//! by the same code as `cairn slash`, each mapped to the action the window already has for it.

use super::*;

impl Explorer {
    /// Runs a slash command (the same parser as `cairn slash`).
    pub fn run_command(&mut self, input: &str) {
        let cmd = match slash::parse(input) {
            Ok(c) => c,
            Err(e) => return self.fail(e.0),
        };
        match cmd {
            Slash::Compact {
                strategy,
                instructions,
            } => self.compact(strategy, false, instructions),
            Slash::Shake { elide, images } => {
                if elide {
                    self.compact(Some(Strategy::Elide), true, None);
                }
                if images {
                    self.compact(Some(Strategy::Images), true, None);
                }
            }
            Slash::Context => self.view = View::Context,
            Slash::Tree => {
                self.view = View::Tree;
                self.graph.fit = true;
            }
            Slash::Fork { at } => {
                let at = match (at, self.conv_id(), &self.store) {
                    (Some(m), Some(c), Some(st)) => match st.resolve_message(&c, &m) {
                        Ok(id) => Some(id),
                        Err(e) => return self.fail(e.to_string()),
                    },
                    _ => None,
                };
                self.fork(at)
            }
            Slash::Checkpoint { label } => self.set_checkpoint(&label),
            Slash::Rewind { label, digest } => self.rewind_to(&label, &digest),
            Slash::Branch { message } => {
                let found = match (self.conv_id(), &self.store) {
                    (Some(c), Some(st)) => {
                        st.resolve_message(&c, &message).map_err(|e| e.to_string())
                    }
                    _ => Err("no conversation open".into()),
                };
                match found {
                    Ok(id) => {
                        if let Some(s) = &mut self.session {
                            s.selected = s.find(&id);
                        }
                        self.switch_tip();
                    }
                    Err(e) => self.fail(e),
                }
            }
            Slash::Export { format, file } => {
                let Some(f) = ExportFormat::from_name(&format) else {
                    return self.fail(format!(
                        "/export {format}: html, markdown, jsonl, anthropic or openai"
                    ));
                };
                match file {
                    Some(out) => self.export_to(f, None, PathBuf::from(out)),
                    None => {
                        let k = EXPORT_FORMATS.iter().position(|x| x.2 == f).unwrap_or(0);
                        self.open_export(k);
                    }
                }
            }
            Slash::Undo => self.undo(),
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
