//! The snapshot preview: the pages a snapshot compaction would send now, each beside the source text it was
//! drawn from. The renderer's manifest maps every run of glyph cells to a message and a character range, so
//! hovering a row of glyphs highlights the source lines it shows, and hovering a source line highlights its
//! rows on the page. Pages come from a background render; nothing here draws glyphs itself.

use eframe::egui::{self, Color32, Pos2, Rect, RichText, Sense, Stroke, Vec2};

use super::Session;
use super::panel::{Ask, At, Panel, Shared, fail_into};
use super::remote::Remote;
use super::worker::For;
use super::worker::Snapshot;
use crate::commands::Action;
use crate::commands::Outcome;
use crate::render::{PROFILES, SourceText};

/// A message and a character range of its source text: what is linked across the two panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub message: String,
    pub start: usize,
    pub end: usize,
    /// Whether the link came from the page side (a glyph row) or the text side (a source line).
    pub from_page: bool,
}

impl Link {
    fn overlaps(&self, message: &str, start: usize, end: usize) -> bool {
        self.message == message
            && start < self.end.max(self.start + 1)
            && self.start < end.max(start + 1)
    }
}

/// One line of source text on a page.
struct SourceLine {
    message: String,
    start: usize,
    end: usize,
    text: String,
    header: bool,
}

/// What the pickers show of the pages drawn (kept from the pages' arrival, not rebuilt each frame).
struct Picker {
    profile: &'static str,
    shape: &'static str,
    /// The model's default shape.
    default_shape: &'static str,
    /// Every shape's density on this middle.
    densities: Vec<crate::render::shape::Density>,
}

pub struct SnapshotView {
    /// A page profile picked, or None for the conversation's model's.
    pub profile: Option<usize>,
    /// A page shape picked, or None for the conversation's model's default.
    pub shape: Option<&'static str>,
    pub page: usize,
    pub zoom: f32,
    pub remote: Remote<Snapshot>,
    /// An OCR reader's reading of these pages (Read back), and which reader.
    pub readback: Remote<crate::legibility::ShapeReading>,
    reader: crate::legibility::Reader,
    /// Read back as soon as the pages are drawn (a screenshot of it).
    pub auto_read: bool,
    /// Open the shape picker once the pages are drawn (a screenshot of it).
    pub open_picker: bool,
    /// What the pickers show of the pages drawn.
    picker: Option<Picker>,
    /// Each page's tiles: where the tile sits on the page (pixels) and its texture.
    textures: Vec<Vec<(Rect, egui::TextureHandle)>>,
    lines: Vec<Vec<SourceLine>>,
    /// Text tokens each page replaces.
    pub page_text_tokens: Vec<u64>,
    pub link: Option<Link>,
    /// Where the current page was drawn last frame (tests hover inside it).
    pub page_rect: Option<Rect>,
}

impl Default for SnapshotView {
    fn default() -> Self {
        SnapshotView {
            profile: None,
            shape: None,
            readback: Remote::Idle,
            reader: crate::legibility::Reader::Tesseract,
            auto_read: false,
            open_picker: false,
            picker: None,
            page: 0,
            zoom: 1.0,
            remote: Remote::Idle,
            textures: Vec::new(),
            lines: Vec::new(),
            page_text_tokens: Vec::new(),
            link: None,
            page_rect: None,
        }
    }
}

/// SourceText lines of a page: for each message drawn on it, its header and the lines its rows cover.
fn page_lines(page: &crate::render::PageMap, texts: &[SourceText]) -> Vec<SourceLine> {
    let mut out: Vec<SourceLine> = Vec::new();
    for sp in page.spans() {
        let (msg, start, end) = (sp.message, sp.start, sp.end);
        let Some(text) = texts.iter().find(|s| s.id == msg).map(|s| &s.text) else {
            continue;
        };
        if sp.header {
            out.push(SourceLine {
                message: msg.to_string(),
                start,
                end: start,
                text: format!("── {} ──", &msg[..msg.len().min(8)]),
                header: true,
            });
        }
        let mut pos = 0usize;
        for line in text.split('\n') {
            let n = line.chars().count();
            let (a, b) = (pos, pos + n);
            if b >= start && a < end.max(start + 1) {
                out.push(SourceLine {
                    message: msg.to_string(),
                    start: a,
                    end: b + 1,
                    text: line.to_string(),
                    header: false,
                });
            }
            pos = b + 1;
        }
    }
    out
}

impl SnapshotView {
    pub fn set(&mut self, ctx: &egui::Context, data: Snapshot) {
        // pages can be wider than the GPU's largest texture (2576 px vs 2048 on some): upload them in tiles
        let max = ctx.input(|i| i.max_texture_side).max(256);
        self.textures = data
            .pages
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let [w, h] = p.image.size;
                let mut tiles = Vec::new();
                for y0 in (0..h).step_by(max) {
                    for x0 in (0..w).step_by(max) {
                        let (tw, th) = ((w - x0).min(max), (h - y0).min(max));
                        let mut pixels = Vec::with_capacity(tw * th);
                        for y in y0..y0 + th {
                            pixels.extend_from_slice(&p.image.pixels[y * w + x0..y * w + x0 + tw]);
                        }
                        let img = egui::ColorImage::new([tw, th], pixels);
                        let t = ctx.load_texture(
                            format!("snapshot-page-{k}-{x0}-{y0}"),
                            img,
                            egui::TextureOptions::NEAREST,
                        );
                        tiles.push((
                            Rect::from_min_size(
                                Pos2::new(x0 as f32, y0 as f32),
                                Vec2::new(tw as f32, th as f32),
                            ),
                            t,
                        ));
                    }
                }
                tiles
            })
            .collect();
        self.lines = data
            .preview
            .rendered
            .manifest
            .pages
            .iter()
            .map(|p| page_lines(p, &data.preview.sources))
            .collect();
        self.page_text_tokens = data.preview.page_text_tokens.clone();
        self.page = self.page.min(data.pages.len().saturating_sub(1));
        self.link = None;
        self.picker = Some(Picker {
            profile: data.preview.options.profile.name,
            shape: data.preview.shape.name,
            default_shape: data.preview.default_shape.name,
            densities: data.preview.densities.clone(),
        });
        self.remote = Remote::Ready(data);
    }

    /// The profile and shape pickers (each shape with what it would cost on this middle, measured in the core
    /// without drawing) and the zoom; whether the pick changed (the pages are drawn again).
    fn pickers(&mut self, ui: &mut egui::Ui, drawn: Option<&Picker>) -> bool {
        ui.horizontal(|ui| {
            let before = (self.profile, self.shape);
            egui::ComboBox::new("profile-picker", "Profile")
                .selected_text(drawn.map_or("…", |d| d.profile))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.profile, None, "the model's");
                    for (k, p) in PROFILES.iter().enumerate() {
                        ui.selectable_value(&mut self.profile, Some(k), p.name)
                            .on_hover_text(p.note);
                    }
                });
            ui.separator();
            // each shape with what it would cost on this middle (measured in the core without drawing)
            let shape_text = drawn.map_or_else(
                || "…".to_string(),
                |d| {
                    let density = d.densities.iter().find(|x| x.shape == d.shape);
                    match density {
                        Some(x) => {
                            format!("{} · {:.1} chars/token", d.shape, x.chars_per_image_token)
                        }
                        None => d.shape.to_string(),
                    }
                },
            );
            if self.open_picker && drawn.is_some() {
                self.open_picker = false;
                egui::Popup::open_id(
                    ui.ctx(),
                    ui.make_persistent_id(egui::IdSalt::new("shape-picker"))
                        .with("popup"),
                );
            }
            egui::ComboBox::new("shape-picker", "Shape")
                .selected_text(shape_text)
                .width(260.0)
                .height(480.0)
                .show_ui(ui, |ui| {
                    let Some(d) = drawn else {
                        return;
                    };
                    ui.selectable_value(
                        &mut self.shape,
                        None,
                        format!("the model's default ({})", d.default_shape),
                    );
                    egui::Grid::new("shape-densities")
                        .num_columns(4)
                        .striped(true)
                        .show(ui, |ui| {
                            ui.weak("shape");
                            ui.weak("image tokens");
                            ui.weak("chars / token");
                            ui.weak("text ÷ image");
                            ui.end_row();
                            for x in &d.densities {
                                let about = crate::render::shape::by_name(x.shape)
                                    .map_or("", |sh| sh.about);
                                let mark = if x.shape == d.default_shape {
                                    " ★"
                                } else {
                                    ""
                                };
                                ui.selectable_value(
                                    &mut self.shape,
                                    Some(x.shape),
                                    format!("{}{mark}", x.shape),
                                )
                                .on_hover_text(about);
                                ui.label(format!("{} ({} p.)", x.image_tokens, x.pages));
                                ui.label(format!("{:.1}", x.chars_per_image_token));
                                ui.label(
                                    x.text_per_image_token
                                        .map_or_else(|| "-".into(), |r| format!("{r:.1}x")),
                                );
                                ui.end_row();
                            }
                        });
                });
            ui.separator();
            ui.add(egui::Slider::new(&mut self.zoom, 0.25..=2.0).text("Zoom"));
            before != (self.profile, self.shape)
        })
        .inner
    }

    /// A tab per page, or for a long middle previous, next and a slider.
    fn page_tabs(&mut self, ui: &mut egui::Ui, n: usize) {
        ui.horizontal(|ui| {
            if n <= 12 {
                for k in 0..n {
                    if ui
                        .selectable_label(self.page == k, format!("Page {}", k + 1))
                        .clicked()
                    {
                        self.page = k;
                        self.link = None;
                    }
                }
            } else {
                // a long middle: previous, next, and a slider instead of a tab per page
                let before = self.page;
                if ui.button("◀").on_hover_text("previous page").clicked() {
                    self.page = self.page.saturating_sub(1);
                }
                let mut one_based = self.page + 1;
                ui.add(egui::Slider::new(&mut one_based, 1..=n).text(format!("of {n} pages")));
                self.page = one_based - 1;
                if ui.button("▶").on_hover_text("next page").clicked() {
                    self.page = (self.page + 1).min(n - 1);
                }
                if self.page != before {
                    self.link = None;
                }
            }
        });
    }

    /// Draws the view; asks for the pages when they are missing (or the profile or shape changed).
    fn show(&mut self, ui: &mut egui::Ui, s: &Session) -> Option<Action> {
        if self.remote.wanted() {
            self.remote = Remote::Pending;
            self.picker = None;
            return Some(Action::SnapshotPreview {
                conversation: s.conv.id.clone(),
                profile: self.profile.and_then(|k| PROFILES.get(k)),
                shape: self.shape.and_then(crate::render::shape::by_name),
            });
        }
        let drawn = self.picker.take();
        let rerender = self.pickers(ui, drawn.as_ref());
        self.picker = drawn;
        if rerender {
            self.remote.reset();
            self.readback.reset();
            return None;
        }
        let Some(data) = self.remote.ready() else {
            self.remote.show_missing(ui, "Rendering the pages…");
            return None;
        };
        if data.pages.is_empty() {
            ui.label("Nothing to snapshot: the active path has no middle between its first turn and the protect window.");
            return None;
        }
        let n = data.pages.len();
        self.page_tabs(ui, n);
        let data = self.remote.ready()?;
        let r = &data.preview.rendered;
        let map = &r.manifest.pages[self.page];
        let cell = data.preview.options.cell;
        // the grid glyphs sit on (a shape may add tracking and leading)
        let grid = data.preview.options.advance.unwrap_or(cell);
        ui.label(page_facts(
            data,
            self.page,
            self.page_text_tokens.get(self.page).copied().unwrap_or(0),
        ));
        factsheet_ui(ui, &r.factsheet);
        if let Some(a) = read_back_ui(
            &mut self.readback,
            &mut self.reader,
            std::mem::take(&mut self.auto_read),
            ui,
            s,
            &data.preview,
        ) {
            return Some(a);
        }
        match &self.link {
            Some(l) => ui.label(format!(
                "linked: message {} characters {}–{}",
                &l.message[..l.message.len().min(8)],
                l.start,
                l.end
            )),
            None => ui.weak("Hover a row of glyphs or a source line to link them."),
        };
        let mut new_link: Option<Link> = None;
        let dark = ui.visuals().dark_mode;
        let hl = if dark {
            Color32::from_rgba_unmultiplied(255, 200, 60, 70)
        } else {
            Color32::from_rgba_unmultiplied(255, 170, 0, 90)
        };
        ui.columns(2, |cols| {
            // the page
            let (rect, hovered) = page_column(
                &mut cols[0],
                &PageOnScreen {
                    map,
                    tiles: self
                        .textures
                        .get(self.page)
                        .map(Vec::as_slice)
                        .unwrap_or(&[]),
                    number: self.page,
                    zoom: self.zoom,
                    grid,
                    link: self.link.as_ref(),
                    hl,
                },
            );
            self.page_rect = rect;
            if hovered.is_some() {
                new_link = hovered;
            }
            // its source text
            let lines = self.lines.get(self.page).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(l) = source_column(&mut cols[1], lines, self.link.as_ref(), hl) {
                new_link = Some(l);
            }
        });
        if new_link.is_some() {
            self.link = new_link;
        }
        None
    }
}

/// A page as it is drawn: its map, its tiles, which page, the zoom, the glyph grid, the link to light.
struct PageOnScreen<'a> {
    map: &'a crate::render::PageMap,
    tiles: &'a [(Rect, egui::TextureHandle)],
    number: usize,
    zoom: f32,
    grid: (u32, u32),
    link: Option<&'a Link>,
    hl: Color32,
}

/// The page in its scroll area, the rows of the link lit; where it was drawn, and the row hovered as a link to
/// its source.
fn page_column(ui: &mut egui::Ui, p: &PageOnScreen<'_>) -> (Option<Rect>, Option<Link>) {
    let mut drawn = None;
    let mut found = None;
    egui::ScrollArea::both()
        .id_salt("snapshot-page")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let size = Vec2::new(p.map.width as f32, p.map.height as f32) * p.zoom;
            let (rect, resp) = ui.allocate_exact_size(size, Sense::hover());
            resp.widget_info(|| {
                egui::WidgetInfo::labeled(
                    egui::Role::Image,
                    true,
                    format!("snapshot page {}", p.number + 1),
                )
            });
            drawn = Some(rect);
            for (at, t) in p.tiles {
                let r =
                    Rect::from_min_size(rect.min + at.min.to_vec2() * p.zoom, at.size() * p.zoom);
                ui.painter().image(
                    t.id(),
                    r,
                    Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                    Color32::WHITE,
                );
            }
            let row_px = p.grid.1 as f32 * p.zoom;
            if let Some(l) = p.link {
                for r in &p.map.rows {
                    if l.overlaps(&r.message, r.start, r.end)
                        && (r.kind == crate::render::RunKind::Text || l.start == l.end)
                    {
                        let y = rect.top() + r.row as f32 * row_px;
                        let x = rect.left() + r.col as f32 * p.grid.0 as f32 * p.zoom;
                        ui.painter().rect_filled(
                            Rect::from_min_max(
                                Pos2::new(x, y),
                                Pos2::new(rect.right(), y + row_px),
                            ),
                            0.0,
                            p.hl,
                        );
                    }
                }
            }
            // the page is wider than its column: only the part inside the column's clip counts
            let clip = ui.clip_rect();
            if let Some(at) = resp.hover_pos().filter(|at| clip.contains(*at)) {
                let row = ((at.y - rect.top()) / row_px) as u32;
                let col = ((at.x - rect.left()) / (p.grid.0 as f32 * p.zoom)) as u32;
                let hit = p
                    .map
                    .rows
                    .iter()
                    .rfind(|r| r.row == row && r.col <= col)
                    .or_else(|| p.map.rows.iter().find(|r| r.row == row));
                if let Some(r) = hit {
                    found = Some(Link {
                        message: r.message.clone(),
                        start: r.start,
                        end: r.end,
                        from_page: true,
                    });
                    ui.painter().rect_stroke(
                        Rect::from_min_max(
                            Pos2::new(rect.left(), rect.top() + row as f32 * row_px),
                            Pos2::new(rect.right(), rect.top() + (row + 1) as f32 * row_px),
                        ),
                        0.0,
                        Stroke::new(1.0, Color32::from_rgb(255, 120, 0)),
                        egui::StrokeKind::Outside,
                    );
                }
            }
        });
    (drawn, found)
}

/// One line on the page shown: profile and shape, glyphs and grid, the page's size, tokens and bytes, the text it
/// replaces, and all pages against their text.
fn page_facts(data: &Snapshot, k: usize, text_tokens: u64) -> String {
    let (page, r) = (&data.pages[k], &data.preview.rendered);
    let map = &r.manifest.pages[k];
    let cell = data.preview.options.cell;
    let grid = data.preview.options.advance.unwrap_or(cell);
    format!(
        "{} · {} ({}x{} glyphs on {}x{}) · page {}x{} px, {} image tokens, {} bytes · replaces about {} text tokens · all pages: {} image vs {} text tokens ({:.1}x)",
        data.preview.options.profile.name,
        data.preview.shape.name,
        cell.0,
        cell.1,
        grid.0,
        grid.1,
        map.width,
        map.height,
        page.tokens,
        page.bytes,
        text_tokens,
        r.stats.image_tokens,
        r.stats.text_tokens,
        r.stats.ratio
    )
}

/// The exact strings sent as text beside the pages.
fn factsheet_ui(ui: &mut egui::Ui, factsheet: &str) {
    if !factsheet.trim().is_empty() {
        egui::CollapsingHeader::new(format!(
            "Factsheet: exact strings sent as text beside the pages ({} bytes)",
            factsheet.len()
        ))
        .id_salt("factsheet")
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("factsheet-text")
                .max_height(160.0)
                .show(ui, |ui| {
                    ui.add(egui::Label::new(RichText::new(factsheet).monospace()).wrap());
                });
        });
    }
}

/// The page's source text, line by line; the line hovered, as a link to its glyphs.
fn source_column(
    ui: &mut egui::Ui,
    lines: &[SourceLine],
    link: Option<&Link>,
    hl: Color32,
) -> Option<Link> {
    let mut found = None;
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::both()
        .id_salt("snapshot-source")
        .auto_shrink([false, false])
        .show_rows(ui, row_h, lines.len(), |ui, range| {
            for line in &lines[range] {
                let linked = link.is_some_and(|l| l.overlaps(&line.message, line.start, line.end));
                let mut text = RichText::new(if line.text.is_empty() {
                    " "
                } else {
                    &line.text
                })
                .monospace();
                if line.header {
                    text = text.strong();
                }
                if linked {
                    text = text.background_color(hl);
                }
                let resp = ui.add(egui::Label::new(text).sense(Sense::hover()).extend());
                if resp.hovered() {
                    found = Some(Link {
                        message: line.message.clone(),
                        start: line.start,
                        end: if line.header { line.start } else { line.end },
                        from_page: false,
                    });
                }
            }
        });
    found
}

/// Read back: an OCR reader reads these pages, and each misread character is shown against its source.
fn read_back_ui(
    readback: &mut Remote<crate::legibility::ShapeReading>,
    reader: &mut crate::legibility::Reader,
    auto: bool,
    ui: &mut egui::Ui,
    s: &Session,
    preview: &crate::commands::SnapshotPreview,
) -> Option<Action> {
    use crate::legibility::Reader;
    let mut ask = false;
    ui.horizontal(|ui| {
        egui::ComboBox::new("readback-reader", "reader")
            .selected_text(reader.name())
            .show_ui(ui, |ui| {
                for r in [Reader::Tesseract, Reader::Ppocr] {
                    ui.selectable_value(reader, r, r.name());
                }
            });
        ask = ui
            .button("Read back")
            .on_hover_text("an OCR reader reads these pages; every misread character is shown beside its source")
            .clicked();
        match readback.ready() {
            Some(r) => {
                let pct = |x: Option<f64>| x.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_else(|| "-".into());
                ui.label(format!(
                    "{} read {} (prose {}, code {}, numbers {})",
                    r.reader,
                    pct(r.accuracy.all),
                    pct(r.accuracy.prose),
                    pct(r.accuracy.code),
                    pct(r.accuracy.numbers)
                ));
            }
            None => readback.show_missing(ui, ""),
        }
    });
    if ask || (auto && readback.wanted()) {
        let (first, last) = (preview.sources.first()?, preview.sources.last()?);
        let o = &preview.options;
        let shape = preview.shape;
        *readback = Remote::Pending;
        return Some(Action::Legibility {
            input: crate::commands::RenderInput::Path {
                conversation: s.conv.id.clone(),
                from: Some(first.id.clone()),
                to: Some(last.id.clone()),
            },
            profile: o.profile,
            shapes: vec![shape],
            readers: vec![*reader],
            script: crate::legibility::default_script(),
            provider: None,
            confirmed: false,
        });
    }
    if let Some(r) = readback.ready() {
        // the worst read first
        let missed = r.worst(usize::MAX);
        egui::CollapsingHeader::new(format!(
            "Misread strips: {} of {} (source above, reading below; misread characters marked)",
            missed.len(),
            r.readings.len()
        ))
        .id_salt("readback-strips")
        .show(ui, |ui| {
            let bad = if ui.visuals().dark_mode {
                Color32::from_rgb(150, 40, 40)
            } else {
                Color32::from_rgb(255, 180, 170)
            };
            let row_h = ui.text_style_height(&egui::TextStyle::Monospace) * 2.6;
            egui::ScrollArea::vertical()
                .id_salt("readback-list")
                .max_height(220.0)
                .show_rows(ui, row_h, missed.len(), |ui, range| {
                    for x in &missed[range] {
                        let mut job = egui::text::LayoutJob::default();
                        let mono = egui::FontId::monospace(12.0);
                        job.append(
                            &format!("p{} r{:<4} ", x.page + 1, x.row),
                            0.0,
                            egui::TextFormat::simple(mono.clone(), ui.visuals().weak_text_color()),
                        );
                        for (c, ok) in x.expected.chars().zip(&x.read) {
                            let mut f =
                                egui::TextFormat::simple(mono.clone(), ui.visuals().text_color());
                            if !ok {
                                f.background = bad;
                            }
                            job.append(&c.to_string(), 0.0, f);
                        }
                        ui.label(job);
                        ui.label(
                            RichText::new(format!("          {}", x.got))
                                .monospace()
                                .weak(),
                        );
                    }
                });
        });
    }
    None
}

impl Panel for SnapshotView {
    fn view(&self) -> super::View {
        super::View::Snapshots
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui, shared.session?).and_then(Ask::run)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(&mut self.remote, purpose == For::Snapshots, error)
            || fail_into(&mut self.readback, purpose == For::ReadBack, error)
    }

    fn answered(&mut self, _at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match outcome {
            Outcome::Legibility(mut v) => {
                if let Some(r) = v.pop() {
                    self.readback = Remote::Ready(r);
                }
                None
            }
            other => Some(other),
        }
    }
}
