//! The desktop window (eframe/egui): an imperative shell over the core. It reads the store through the same
//! [`crate::store::Store`] functions the CLI uses and never writes SQL.
//!
//! This first window lists the conversations and shows the selected one's tree and active path; the full
//! explorer (graph, snapshots, compare) builds on it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use eframe::egui;

use crate::model::{Conversation, Message};
use crate::store::Store;

/// What the window shows: loaded once from the store, refreshed on demand.
pub struct Explorer {
    store_path: PathBuf,
    conversations: Vec<Conversation>,
    selected: Option<usize>,
    /// One line per tree row and per path message, built when a conversation is selected, so a frame lays out
    /// only the rows on screen.
    tree: Vec<String>,
    path: Vec<String>,
    error: Option<String>,
    screenshot: Option<Screenshot>,
    frames: u64,
}

struct Screenshot {
    out: PathBuf,
    requested: bool,
    done: Arc<Mutex<Option<Result<(), String>>>>,
}

impl Explorer {
    pub fn new(store_path: PathBuf) -> Explorer {
        let mut e = Explorer {
            store_path,
            conversations: Vec::new(),
            selected: None,
            tree: Vec::new(),
            path: Vec::new(),
            error: None,
            screenshot: None,
            frames: 0,
        };
        e.reload();
        if !e.conversations.is_empty() {
            e.select(e.conversations.len() - 1);
        }
        e
    }

    fn reload(&mut self) {
        match Store::open(&self.store_path).and_then(|s| s.conversations()) {
            Ok(c) => {
                self.conversations = c;
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    fn select(&mut self, i: usize) {
        self.selected = Some(i);
        let Some(conv) = self.conversations.get(i) else {
            return;
        };
        let id = conv.id.clone();
        let loaded = Store::open(&self.store_path)
            .and_then(|s| Ok((s.tree_text(&id)?, s.active_path(&id)?)));
        match loaded {
            Ok((tree, path)) => {
                self.tree = tree.lines().map(str::to_string).collect();
                self.path = path.iter().map(path_row).collect();
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// The whole UI, callable from a test harness as well as from eframe.
    pub fn draw(&mut self, ui: &mut egui::Ui) {
        egui::Panel::left("conversations")
            .default_size(260.0)
            .show(ui, |ui| {
                ui.heading("Conversations");
                if ui.button("Reload").clicked() {
                    self.reload();
                }
                ui.separator();
                let mut clicked = None;
                egui::ScrollArea::vertical().show(ui, |ui| {
                    for (i, c) in self.conversations.iter().enumerate() {
                        let title = c.title.clone().unwrap_or_else(|| "(untitled)".into());
                        let text = format!("{title}\n{} · {} messages", c.id, c.messages);
                        if ui
                            .selectable_label(self.selected == Some(i), text)
                            .clicked()
                        {
                            clicked = Some(i);
                        }
                    }
                });
                if let Some(i) = clicked {
                    self.select(i);
                }
            });
        egui::CentralPanel::default().show(ui, |ui| {
            if let Some(e) = &self.error {
                ui.colored_label(egui::Color32::RED, e);
            }
            if self.conversations.is_empty() {
                ui.label("No conversations yet. Create one with `cairn new` and `cairn append`.");
                return;
            }
            ui.columns(2, |cols| {
                cols[0].heading("Tree");
                let row_h = cols[0].text_style_height(&egui::TextStyle::Monospace);
                egui::ScrollArea::both().id_salt("tree").show_rows(
                    &mut cols[0],
                    row_h,
                    self.tree.len(),
                    |ui, range| {
                        for line in &self.tree[range] {
                            ui.add(
                                egui::Label::new(egui::RichText::new(line).monospace()).extend(),
                            );
                        }
                    },
                );
                cols[1].heading("Active path");
                let row_h = cols[1].text_style_height(&egui::TextStyle::Body);
                egui::ScrollArea::vertical().id_salt("path").show_rows(
                    &mut cols[1],
                    row_h,
                    self.path.len(),
                    |ui, range| {
                        for line in &self.path[range] {
                            ui.add(egui::Label::new(line.as_str()).truncate());
                        }
                    },
                );
            });
        });
    }

    fn drive_screenshot(&mut self, ctx: &egui::Context) {
        let Some(shot) = &mut self.screenshot else {
            return;
        };
        ctx.request_repaint();
        if shot.requested {
            let done = shot.done.lock().map(|d| d.is_some()).unwrap_or(true);
            if done {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            return;
        }
        if self.frames < 5 {
            return;
        }
        shot.requested = true;
        let out = shot.out.clone();
        let done = shot.done.clone();
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img: Arc<egui::ColorImage>| {
            let [w, h] = img.size;
            let res = image::save_buffer(
                &out,
                img.as_raw(),
                w as u32,
                h as u32,
                image::ColorType::Rgba8,
            )
            .map_err(|e| e.to_string());
            if let Ok(mut d) = done.lock() {
                *d = Some(res);
            }
            ctx2.request_repaint();
        });
    }
}

impl eframe::App for Explorer {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frames += 1;
        let ctx = ui.ctx().clone();
        self.drive_screenshot(&ctx);
        self.draw(ui);
    }
}

/// One line for a message of the active path.
fn path_row(m: &Message) -> String {
    format!(
        "{} · {}  {}",
        m.role,
        &m.id[..m.id.len().min(8)],
        m.summary(200)
    )
}

/// Opens the window on a store and blocks until it is closed. With `screenshot`, saves a PNG of the window
/// after a few frames and closes.
pub fn run(
    store_path: PathBuf,
    screenshot: Option<PathBuf>,
    conversation: Option<String>,
) -> anyhow::Result<()> {
    let mut app = Explorer::new(store_path);
    if let Some(i) = conversation.and_then(|c| app.conversations.iter().position(|x| x.id == c)) {
        app.select(i);
    }
    let done = Arc::new(Mutex::new(None));
    if let Some(out) = screenshot {
        app.screenshot = Some(Screenshot {
            out,
            requested: false,
            done: done.clone(),
        });
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("cairn")
            .with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    eframe::run_native("cairn", options, Box::new(|_cc| Ok(Box::new(app))))
        .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?;
    let result = done.lock().map(|d| d.clone()).unwrap_or(None);
    if let Some(Err(e)) = result {
        anyhow::bail!("screenshot failed: {e}");
    }
    Ok(())
}
