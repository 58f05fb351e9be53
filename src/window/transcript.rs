//! The active path as a transcript, virtualised: every message is a few fixed-height rows (header, preview;
//! when opened, its blocks line by line, thinking and tool output folded until asked for), the rows of the
//! whole path sit in one flat index, and only the rows on screen are built and their bodies loaded.

use std::collections::{HashMap, HashSet};

use eframe::egui::{self, RichText, Sense};

use super::graph::role_color;
use super::session::Session;
use crate::model::{Block, ImageData, Message, Role, ToolResultContent};
use crate::store::Store;

/// Rows an image takes.
const IMAGE_ROWS: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Header,
    Preview,
    /// Block `b`'s title row (thinking, tool call, tool output, image), clickable when foldable.
    BlockHead(u16),
    Line(u16, u32),
    /// Row `k` of image block `b`'s rows (`b`, index in a tool result's blocks or u16::MAX for a top-level
    /// image).
    Image(u16, u16, u32),
}

#[derive(Debug, Clone, Copy)]
struct RowRef {
    /// Index into the session's path.
    at: u32,
    kind: Kind,
}

#[derive(Default)]
pub struct TranscriptView {
    open: HashSet<usize>,
    unfolded: HashSet<(usize, u16)>,
    rows: Vec<RowRef>,
    /// Built for: (conversation id, path length, tip).
    built_for: Option<(String, usize, Option<usize>)>,
    dirty: bool,
    /// Each opened block's rows, wrapped to the panel: (prose, monospace) characters per row when built.
    lines: HashMap<(usize, u16), Vec<String>>,
    cols: (usize, usize),
    scroll_to: Option<usize>,
    textures: HashMap<String, egui::TextureHandle>,
    /// Why a body could not be read (shown above the rows until the next read works).
    unread: Option<String>,
}

fn block_text(b: &Block) -> String {
    match b {
        Block::Text { text } => text.clone(),
        Block::Thinking { thinking, .. } => thinking.clone(),
        Block::ToolUse { input, .. } => {
            serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string())
        }
        Block::ToolResult { content, .. } => match content {
            ToolResultContent::Text(t) => t.clone(),
            c => c.text(),
        },
        Block::Image { media_type, .. } => format!("[image {media_type}]"),
        Block::Other(v) => v.to_string(),
    }
}

fn foldable(b: &Block) -> bool {
    matches!(
        b,
        Block::Thinking { .. } | Block::ToolResult { .. } | Block::ToolUse { .. }
    )
}

fn images_of(b: &Block) -> Vec<(u16, &ImageData)> {
    match b {
        Block::Image { data, .. } => vec![(u16::MAX, data)],
        Block::ToolResult {
            content: ToolResultContent::Blocks(inner),
            ..
        } => inner
            .iter()
            .enumerate()
            .filter_map(|(k, x)| match x {
                Block::Image { data, .. } => Some((k as u16, data)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl TranscriptView {
    /// Scrolls to a message of the active path on the next frame.
    pub fn reveal(&mut self, s: &Session, node: usize) {
        if let Some(at) = s.path.iter().position(|&p| p == node) {
            self.scroll_to = Some(at);
        }
    }

    /// Shows block `b` of a message (thinking, tool call or tool output) unfolded.
    pub fn unfold(&mut self, node: usize, b: u16) {
        self.unfolded.insert((node, b));
        self.dirty = true;
    }

    /// Opens (or closes) a message; opening loads its body.
    pub fn toggle(&mut self, node: usize) {
        if !self.open.remove(&node) {
            self.open.insert(node);
        }
        self.dirty = true;
    }

    fn rebuild(&mut self, s: &mut Session, store: &Store) {
        let open: Vec<usize> = s
            .path
            .iter()
            .copied()
            .filter(|n| self.open.contains(n))
            .collect();
        if let Err(e) = s.ensure_bodies(store, &open) {
            self.unread = Some(e.to_string());
        }
        self.rows.clear();
        self.rows.reserve(s.path.len() * 2);
        for (at, &node) in s.path.iter().enumerate() {
            let at = at as u32;
            self.rows.push(RowRef {
                at,
                kind: Kind::Header,
            });
            let body = if self.open.contains(&node) {
                s.body(node)
            } else {
                None
            };
            let Some(m) = body else {
                self.rows.push(RowRef {
                    at,
                    kind: Kind::Preview,
                });
                continue;
            };
            for (b, block) in m.content.iter().enumerate() {
                let b = b as u16;
                let fold = foldable(block);
                if fold || matches!(block, Block::Image { .. }) {
                    self.rows.push(RowRef {
                        at,
                        kind: Kind::BlockHead(b),
                    });
                }
                if (!fold || self.unfolded.contains(&(node, b)))
                    && !matches!(block, Block::Image { .. })
                {
                    let cols = if matches!(block, Block::Text { .. } | Block::Thinking { .. }) {
                        self.cols.0
                    } else {
                        self.cols.1
                    };
                    let lines = self
                        .lines
                        .entry((node, b))
                        .or_insert_with(|| wrap(&block_text(block), cols));
                    for l in 0..lines.len() as u32 {
                        self.rows.push(RowRef {
                            at,
                            kind: Kind::Line(b, l),
                        });
                    }
                }
                // images show whether or not the tool output around them is folded
                {
                    for (k, _) in images_of(block) {
                        for r in 0..IMAGE_ROWS {
                            self.rows.push(RowRef {
                                at,
                                kind: Kind::Image(b, k, r),
                            });
                        }
                    }
                }
            }
        }
        self.built_for = Some((s.conv.id.clone(), s.path.len(), s.tip));
        self.dirty = false;
    }

    pub fn show(&mut self, ui: &mut egui::Ui, s: &mut Session, store: &Store) -> Option<usize> {
        // rows are wrapped to the panel's width: re-wrap the opened blocks when it changes
        let cols = wrap_columns(ui);
        if cols != self.cols {
            self.cols = cols;
            self.lines.clear();
            self.dirty = true;
        }
        let key = Some((s.conv.id.clone(), s.path.len(), s.tip));
        if self.dirty || self.built_for != key {
            if let Some(old) = &self.built_for
                && Some(&old.0) != key.as_ref().map(|k| &k.0)
            {
                self.open.clear();
                self.unfolded.clear();
                self.lines.clear();
            }
            self.rebuild(s, store);
        }
        if let Some(e) = &self.unread {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("could not read a message: {e}"),
            );
        }
        let mut select = None;
        let row_h = ui.text_style_height(&egui::TextStyle::Body);
        let spacing = ui.spacing().item_spacing.y;
        let mut area = egui::ScrollArea::both()
            .id_salt("transcript")
            .auto_shrink([false, false]);
        if let Some(at) = self.scroll_to.take()
            && let Some(r) = self.rows.iter().position(|r| r.at as usize == at)
        {
            area = area.vertical_scroll_offset(r as f32 * (row_h + spacing));
        }
        let dark = ui.visuals().dark_mode;
        let mut toggles: Vec<(usize, Option<u16>)> = Vec::new();
        area.show_rows(ui, row_h, self.rows.len(), |ui, range| {
            // bodies for the rows on screen, in one load
            let visible: Vec<usize> = self.rows[range.clone()]
                .iter()
                .map(|r| s.path[r.at as usize])
                .collect();
            if let Err(e) = s.ensure_bodies(store, &visible) {
                self.unread = Some(e.to_string());
            }
            let mut skip_until = range.start;
            for ri in range.clone() {
                let r = self.rows[ri];
                let node = s.path[r.at as usize];
                if ri < skip_until {
                    continue;
                }
                match r.kind {
                    Kind::Header => {
                        let (t, role) = header_line(s, node, self.open.contains(&node));
                        let mut text = RichText::new(t).strong().color(role_color(role, dark));
                        if Some(node) == s.selected {
                            text = text.background_color(ui.visuals().selection.bg_fill);
                        }
                        let resp = ui.add(egui::Label::new(text).sense(Sense::click()).truncate());
                        if resp.clicked() {
                            toggles.push((node, None));
                            select = Some(node);
                        }
                    }
                    Kind::Preview => {
                        let preview = s.body(node).map(|m| m.summary(200)).unwrap_or_default();
                        ui.add(
                            egui::Label::new(RichText::new(format!("    {preview}")).weak())
                                .truncate(),
                        );
                    }
                    Kind::BlockHead(b) => {
                        let Some(m) = s.body(node) else {
                            ui.label("");
                            continue;
                        };
                        let block = &m.content[b as usize];
                        let unfolded = self.unfolded.contains(&(node, b));
                        let (arrow, t) = block_head(block, unfolded);
                        let resp = ui.add(
                            egui::Label::new(RichText::new(format!("{arrow}{t}")).italics())
                                .sense(Sense::click())
                                .truncate(),
                        );
                        if resp.clicked() && foldable(block) {
                            toggles.push((node, Some(b)));
                        }
                    }
                    Kind::Line(b, l) => self.line_row(ui, s, node, b, l),
                    Kind::Image(b, k, row) => {
                        if row == 0 || ri == range.start {
                            self.image_rows(ui, s, store, (node, b, k), row, (row_h, spacing));
                            skip_until = ri - row as usize + IMAGE_ROWS as usize;
                        }
                    }
                }
            }
        });
        self.apply_toggles(toggles);
        select
    }

    /// One wrapped line of an opened block: prose as prose, thinking quieter, tool calls and output as code.
    fn line_row(&self, ui: &mut egui::Ui, s: &Session, node: usize, b: u16, l: u32) {
        let text = self
            .lines
            .get(&(node, b))
            .and_then(|v| v.get(l as usize))
            .map(String::as_str)
            .unwrap_or("");
        // prose as prose; thinking quieter; tool calls and output as code
        let rich = RichText::new(format!("    {text}"));
        let rich = match s.body(node).and_then(|m| m.content.get(b as usize)) {
            Some(Block::Text { .. }) => rich,
            Some(Block::Thinking { .. }) => rich.italics().weak(),
            _ => rich.monospace(),
        };
        ui.add(egui::Label::new(rich).extend());
    }

    /// An image, drawn from its first row (or from the first row on screen: the rows left); the rows below are
    /// its space.
    fn image_rows(
        &mut self,
        ui: &mut egui::Ui,
        s: &Session,
        store: &Store,
        (node, b, k): (usize, u16, u16),
        row: u32,
        (row_h, spacing): (f32, f32),
    ) {
        let pitch = row_h + spacing;
        let h = IMAGE_ROWS as f32 * pitch - spacing;
        let tex = s
            .body(node)
            .and_then(|m| image_of(m, b, k))
            .and_then(|hash| self.texture(ui.ctx(), store, &hash));
        let rows_left = IMAGE_ROWS - row;
        let height = rows_left as f32 * pitch - spacing;
        match tex {
            Some(t) if row == 0 => {
                ui.add(
                    egui::Image::new(&t)
                        .max_height(h)
                        .max_width(ui.available_width()),
                );
            }
            _ => {
                ui.allocate_space(egui::vec2(1.0, height));
            }
        }
    }

    /// Opens or closes the messages and blocks clicked.
    fn apply_toggles(&mut self, toggles: Vec<(usize, Option<u16>)>) {
        for (node, block) in toggles {
            match block {
                None => self.toggle(node),
                Some(b) => {
                    if !self.unfolded.remove(&(node, b)) {
                        self.unfolded.insert((node, b));
                    }
                    self.dirty = true;
                }
            }
        }
    }

    fn texture(
        &mut self,
        ctx: &egui::Context,
        store: &Store,
        hash: &str,
    ) -> Option<egui::TextureHandle> {
        if let Some(t) = self.textures.get(hash) {
            return Some(t.clone());
        }
        let bytes = store.blob(hash).ok()?;
        let img = image::load_from_memory(&bytes).ok()?.to_rgba8();
        let color = egui::ColorImage::from_rgba_unmultiplied(
            [img.width() as usize, img.height() as usize],
            img.as_raw(),
        );
        let t = ctx.load_texture(format!("blob-{hash}"), color, egui::TextureOptions::LINEAR);
        self.textures.insert(hash.to_string(), t.clone());
        Some(t)
    }
}

/// A block's text as rows of at most `cols` characters: its own lines, each wrapped at spaces (words longer
/// than a row are split).
fn wrap(text: &str, cols: usize) -> Vec<String> {
    text.lines()
        .flat_map(|line| {
            if line.trim().is_empty() {
                vec![String::new()]
            } else {
                textwrap::wrap(line, cols)
                    .into_iter()
                    .map(|c| c.into_owned())
                    .collect()
            }
        })
        .collect()
}

/// The blob hash of image `k` of block `b` (`k == u16::MAX`: the block itself).
fn image_of(m: &Message, b: u16, k: u16) -> Option<String> {
    let block = m.content.get(b as usize)?;
    let img = if k == u16::MAX {
        block
    } else {
        match block {
            Block::ToolResult {
                content: ToolResultContent::Blocks(inner),
                ..
            } => inner.get(k as usize)?,
            _ => return None,
        }
    };
    match img {
        Block::Image {
            data: ImageData::Blob { hash, .. },
            ..
        } => Some(hash.clone()),
        _ => None,
    }
}

/// How many characters of prose and of code a row holds at the panel's width.
fn wrap_columns(ui: &egui::Ui) -> (usize, usize) {
    let width = (ui.available_width() - 28.0).max(80.0);
    let body = egui::TextStyle::Body.resolve(ui.style());
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let (p, m) = ui.fonts_mut(|f| (f.glyph_width(&body, 'n'), f.glyph_width(&mono, 'n')));
    let per = |w: f32| ((width / w.max(1.0)) as usize).max(20);
    (per(p), per(m))
}

/// A message's header row: fold arrow, role, short id, tokens, its fate, error, checkpoints, tip; and its role.
fn header_line(s: &Session, node: usize, open: bool) -> (String, Role) {
    let h = &s.heads[node];
    let role = if h.has_tool_result() {
        Role::Tool
    } else {
        h.role
    };
    let mut t = format!(
        "{} {} {}  {} tok",
        if open { "▾" } else { "▸" },
        if h.has_tool_result() {
            "tool result"
        } else {
            h.role.as_str()
        },
        &h.id[..h.id.len().min(8)],
        h.tokens
    );
    if let Some(mark) = s.mark_of(node) {
        t.push_str(&format!("  [{mark}]"));
    }
    if h.has_error() {
        t.push_str("  [error]");
    }
    for l in s.checkpoint_labels(node) {
        t.push_str(&format!("  ⚑ {l}"));
    }
    if Some(node) == s.tip {
        t.push_str("  ◀ tip");
    }
    (t, role)
}

/// A block's head row: its fold arrow (for a block that folds) and what it is.
fn block_head(block: &Block, unfolded: bool) -> (&'static str, String) {
    let n = block_text(block).lines().count();
    let t = match block {
        Block::Thinking { .. } => format!("thinking ({n} lines)"),
        Block::ToolUse { name, .. } => format!("tool call {name}"),
        Block::ToolResult { is_error, .. } => format!(
            "{} ({n} lines)",
            if *is_error {
                "tool output, error"
            } else {
                "tool output"
            }
        ),
        Block::Image { media_type, .. } => format!("image {media_type}"),
        _ => String::new(),
    };
    let arrow = if foldable(block) {
        if unfolded { "  ▾ " } else { "  ▸ " }
    } else {
        "    "
    };
    (arrow, t)
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn rows_wrap_at_spaces_keep_indentation_and_blank_lines() {
        let rows = wrap("    fn main() {\n\n        let a = 1;\n    }", 40);
        assert_eq!(rows, ["    fn main() {", "", "        let a = 1;", "    }"]);
        let prose = "the quick brown fox jumps over the lazy dog ".repeat(3);
        let rows = wrap(&prose, 20);
        assert!(rows.iter().all(|r| r.chars().count() <= 20), "{rows:?}");
        assert_eq!(rows.join(" ").split_whitespace().count(), 27);
        // a token longer than a row is split, not left overflowing
        let rows = wrap(&"x".repeat(50), 20);
        assert_eq!(rows.len(), 3);
    }
}
