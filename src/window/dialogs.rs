//! The window's small dialogs: rewind (asks for the digest), import (a native dialog through rfd, or a path
//! field where none can be shown), export (format, path, save dialog), the Discover list, and the session written
//! for a harness (where it is, the command that resumes it). Their state is [`Dialogs`]; what they ask of the
//! explorer is a [`DialogAsk`].

use std::path::PathBuf;

use eframe::egui;

use super::session::Session;
use crate::commands::Action;
use crate::export::ExportFormat;

pub(super) struct RewindDialog {
    pub(super) label: String,
    pub(super) digest: String,
}

pub(super) struct ExportDialog {
    pub(super) format: usize,
    pub(super) at_selected: bool,
    pub(super) path: String,
}

/// The dialogs open over the window (each None when closed).
#[derive(Default)]
pub(super) struct Dialogs {
    pub(super) rewind: Option<RewindDialog>,
    pub(super) export: Option<ExportDialog>,
    /// A session just written for a harness: where, and the command that resumes it.
    pub(super) continued: Option<crate::commands::Continued>,
    pub(super) import_path: Option<String>,
    pub(super) discovered: Option<Vec<crate::discover::SessionFile>>,
}

/// What a dialog asks of the explorer.
pub(super) enum DialogAsk {
    /// An action for the core (a rewind, an export).
    Run(Box<Action>),
    /// Import these files.
    Import(Vec<PathBuf>),
}

impl Dialogs {
    /// Opens the export dialog on this format, for the open conversation.
    pub(super) fn open_export(&mut self, format: usize, session: Option<&Session>) {
        let name = session.map_or_else(|| "conversation".into(), |s| s.conv.id.clone());
        self.export = Some(ExportDialog {
            format,
            at_selected: false,
            path: format!("cairn-{name}.{}", ExportFormat::ALL[format].extension()),
        });
    }

    /// The files to import: picked in a native dialog (`native`), else None and the path field opens.
    pub(super) fn open_import(&mut self, native: bool) -> Option<Vec<PathBuf>> {
        if native
            && let Some(files) = rfd::FileDialog::new()
                .add_filter("sessions", &["jsonl", "json"])
                .pick_files()
        {
            return Some(files);
        }
        // no dialog could be shown (or it was dismissed): a path field
        self.import_path = Some(String::new());
        None
    }

    /// Draws the dialogs open, about the open conversation (`session`); what one of them asks.
    pub(super) fn ui(
        &mut self,
        ctx: &egui::Context,
        native: bool,
        session: Option<&Session>,
    ) -> Option<DialogAsk> {
        let conversation = || session.map(|s| s.conv.id.clone());
        let rewound = self.rewind_dialog(ctx).and_then(|(label, digest)| {
            Some(DialogAsk::Run(Box::new(Action::Rewind {
                conversation: conversation()?,
                label,
                digest,
            })))
        });
        let imported = self.import_dialog(ctx).map(DialogAsk::Import);
        let exported = self
            .export_dialog(ctx, native)
            .and_then(|(format, at_selected, out)| {
                let at = at_selected
                    .then(|| session.and_then(|s| s.selected.map(|i| s.heads[i].id.clone())))
                    .flatten();
                Some(DialogAsk::Run(Box::new(Action::Export {
                    conversation: conversation()?,
                    at,
                    format,
                    options: crate::export::Options::default(),
                    out: Some(out),
                })))
            });
        self.continued_dialog(ctx);
        let discovered = self.discovered_dialog(ctx).map(DialogAsk::Import);
        rewound.or(imported).or(exported).or(discovered)
    }

    /// The rewind dialog: the digest of what the abandoned path found.
    fn rewind_dialog(&mut self, ctx: &egui::Context) -> Option<(String, String)> {
        if let Some(d) = &mut self.rewind {
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
                self.rewind = None;
                return Some((label, digest));
            } else if !open {
                self.rewind = None;
            }
        }
        None
    }

    /// The import path field, where no native dialog could be shown.
    fn import_dialog(&mut self, ctx: &egui::Context) -> Option<Vec<PathBuf>> {
        if let Some(path) = &mut self.import_path {
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
                self.import_path = None;
                return Some(vec![p]);
            } else if !open {
                self.import_path = None;
            }
        }
        None
    }

    /// The export dialog: the format, the path (to the tip or the selection), the file.
    fn export_dialog(
        &mut self,
        ctx: &egui::Context,
        native: bool,
    ) -> Option<(ExportFormat, bool, PathBuf)> {
        if let Some(d) = &mut self.export {
            let mut open = true;
            let mut go = None;
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
                let chosen = (ExportFormat::ALL[d.format], d.at_selected, out);
                self.export = None;
                return Some(chosen);
            } else if !open {
                self.export = None;
            }
        }
        None
    }

    /// A session just written for a harness: where, and the command that resumes it.
    fn continued_dialog(&mut self, ctx: &egui::Context) {
        if let Some(c) = &self.continued {
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
                self.continued = None;
            }
        }
    }

    /// The sessions found on this machine, each to import, or all.
    fn discovered_dialog(&mut self, ctx: &egui::Context) -> Option<Vec<PathBuf>> {
        let mut chosen = None;
        if let Some(found) = &self.discovered {
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
                chosen = Some(found.iter().map(|f| f.path.clone()).collect());
            } else if let Some(p) = pick {
                chosen = Some(vec![p]);
            }
            if !open {
                self.discovered = None;
            }
        }
        chosen
    }
}
