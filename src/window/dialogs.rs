//! The window's small dialogs: rewind (asks for the digest), import (a native dialog through rfd, or a path
//! field where none can be shown), export (format, path, save dialog), the Discover list, and the session written
//! for a harness (where it is, the command that resumes it).

use super::*;

pub(super) struct RewindDialog {
    pub(super) label: String,
    pub(super) digest: String,
}

pub(super) struct ExportDialog {
    pub(super) format: usize,
    pub(super) at_selected: bool,
    pub(super) path: String,
}

impl Explorer {
    pub(super) fn open_export(&mut self, format: usize) {
        let name = self
            .session
            .as_ref()
            .map(|s| s.conv.id.clone())
            .unwrap_or_else(|| "conversation".into());
        self.dialogs.export = Some(ExportDialog {
            format,
            at_selected: false,
            path: format!("cairn-{name}.{}", ExportFormat::ALL[format].extension()),
        });
    }

    // ---- drawing ----

    pub(super) fn open_import(&mut self) {
        if self.native_dialogs
            && let Some(files) = rfd::FileDialog::new()
                .add_filter("sessions", &["jsonl", "json"])
                .pick_files()
        {
            return self.import(files);
        }
        // no dialog could be shown (or it was dismissed): a path field
        self.dialogs.import_path = Some(String::new());
    }

    pub(super) fn dialogs(&mut self, ctx: &egui::Context) {
        self.rewind_dialog(ctx);
        self.import_dialog(ctx);
        self.export_dialog(ctx);
        self.continued_dialog(ctx);
        self.discovered_dialog(ctx);
    }

    /// The rewind dialog: the digest of what the abandoned path found.
    fn rewind_dialog(&mut self, ctx: &egui::Context) {
        if let Some(d) = &mut self.dialogs.rewind {
            let mut open = true;
            let mut go = false;
            egui::Window::new(format!("Rewind: {}", d.label))
                .open(&mut open)
                .collapsible(false)
                .show(ctx, |ui| {
                    ui.label("What did the abandoned exploration find? The digest is kept after the checkpoint.");
                    let l = ui.label("Digest");
                    ui.add(egui::TextEdit::multiline(&mut d.digest).desired_rows(4))
                        .labelled_by(l.id);
                    if ui
                        .add_enabled(!d.digest.trim().is_empty(), egui::Button::new("Rewind"))
                        .clicked()
                    {
                        go = true;
                    }
                });
            if go {
                let (label, digest) = (d.label.clone(), d.digest.clone());
                self.dialogs.rewind = None;
                self.rewind_to(&label, &digest);
            } else if !open {
                self.dialogs.rewind = None;
            }
        }
    }

    /// The import path field, where no native dialog could be shown.
    fn import_dialog(&mut self, ctx: &egui::Context) {
        if let Some(path) = &mut self.dialogs.import_path {
            let mut open = true;
            let mut go = None;
            egui::Window::new("Import sessions")
                .open(&mut open)
                .collapsible(false)
                .show(ctx, |ui| {
                    ui.label("Claude Code, pi or Codex JSONL, provider request JSON, or cairn JSONL; a folder imports every session in it.");
                    let l = ui.label("Path");
                    ui.add(egui::TextEdit::singleline(path).desired_width(360.0))
                        .labelled_by(l.id);
                    if ui.button("Import").clicked() && !path.trim().is_empty() {
                        go = Some(PathBuf::from(path.trim()));
                    }
                });
            if let Some(p) = go {
                self.dialogs.import_path = None;
                self.import(vec![p]);
            } else if !open {
                self.dialogs.import_path = None;
            }
        }
    }

    /// The export dialog: the format, the path (to the tip or the selection), the file.
    fn export_dialog(&mut self, ctx: &egui::Context) {
        if let Some(d) = &mut self.dialogs.export {
            let mut open = true;
            let mut go = None;
            let native = self.native_dialogs;
            egui::Window::new("Export")
                .open(&mut open)
                .collapsible(false)
                .show(ctx, |ui| {
                    egui::ComboBox::from_label("Format")
                        .selected_text(ExportFormat::ALL[d.format].label())
                        .show_ui(ui, |ui| {
                            for (k, f) in ExportFormat::ALL.iter().enumerate() {
                                ui.selectable_value(&mut d.format, k, f.label());
                            }
                        });
                    ui.checkbox(
                        &mut d.at_selected,
                        "Path to the selected message (instead of the tip)",
                    );
                    let l = ui.label("File");
                    ui.add(egui::TextEdit::singleline(&mut d.path).desired_width(360.0))
                        .labelled_by(l.id);
                    ui.horizontal(|ui| {
                        if native
                            && ui.button("Save as…").clicked()
                            && let Some(p) =
                                rfd::FileDialog::new().set_file_name(&d.path).save_file()
                        {
                            go = Some(p);
                        }
                        if ui.button("Export").clicked() && !d.path.trim().is_empty() {
                            go = Some(PathBuf::from(d.path.trim()));
                        }
                    });
                });
            if let Some(out) = go {
                let format = ExportFormat::ALL[d.format];
                let at = if d.at_selected {
                    self.selected_id()
                } else {
                    None
                };
                self.dialogs.export = None;
                self.export_to(format, at, out);
            } else if !open {
                self.dialogs.export = None;
            }
        }
    }

    /// A session just written for a harness: where, and the command that resumes it.
    fn continued_dialog(&mut self, ctx: &egui::Context) {
        if let Some(c) = &self.dialogs.continued {
            let mut open = true;
            let mut close = false;
            egui::Window::new(format!("Continue in {}", c.harness.label()))
                .open(&mut open)
                .collapsible(false)
                .default_width(560.0)
                .show(ctx, |ui| {
                    ui.label(format!("A new {} session, written to", c.harness.label()));
                    ui.monospace(c.file.display().to_string());
                    if !c.beside.is_empty() {
                        ui.label(format!(
                            "with {} subagent file(s) beside it.",
                            c.beside.len()
                        ));
                    }
                    ui.label("Run this to resume it:");
                    let mut command = c.command.clone();
                    ui.add(
                        egui::TextEdit::multiline(&mut command)
                            .font(egui::TextStyle::Monospace)
                            .desired_rows(2)
                            .desired_width(f32::INFINITY),
                    );
                    for n in &c.notes {
                        ui.weak(n);
                    }
                    if c.redacted > 0 {
                        ui.weak(format!("{} secret(s) redacted", c.redacted));
                    }
                    ui.horizontal(|ui| {
                        if ui.button("Copy command").clicked() {
                            ui.ctx().copy_text(c.command.clone());
                        }
                        if ui.button("Close").clicked() {
                            close = true;
                        }
                    });
                });
            if close || !open {
                self.dialogs.continued = None;
            }
        }
    }

    /// The sessions found on this machine, each to import, or all.
    fn discovered_dialog(&mut self, ctx: &egui::Context) {
        if let Some(found) = &self.dialogs.discovered {
            let mut open = true;
            let mut pick = None;
            let mut pick_all = false;
            egui::Window::new("Sessions on this machine")
                .open(&mut open)
                .default_width(560.0)
                .show(ctx, |ui| {
                    if found.is_empty() {
                        ui.label(
                            "No Claude Code, pi, Codex, Gemini CLI, Cursor or Copilot CLI sessions found in their \
                             usual folders.",
                        );
                    } else if ui
                        .button(format!("Import all {} (new ones added, grown ones brought up to date)", found.len()))
                        .on_hover_text("the import of `cairn discover --import`: nothing is counted twice")
                        .clicked()
                    {
                        pick_all = true;
                    }
                    egui::ScrollArea::vertical()
                        .max_height(420.0)
                        .show(ui, |ui| {
                            for f in found {
                                ui.horizontal(|ui| {
                                    if ui.small_button("Import").clicked() {
                                        pick = Some(f.path.clone());
                                    }
                                    ui.label(format!(
                                        "{} · {} messages · {}",
                                        f.format.name(),
                                        f.messages,
                                        f.path.display()
                                    ));
                                });
                            }
                        });
                });
            if pick_all {
                self.import(found.iter().map(|f| f.path.clone()).collect());
            } else if let Some(p) = pick {
                self.import(vec![p]);
            }
            if !open {
                self.dialogs.discovered = None;
            }
        }
    }
}
