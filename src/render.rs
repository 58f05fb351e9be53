//! Snapshot pages: conversation text drawn as dense pages of pixel glyphs (1-bit PNG), sized so the provider
//! never resamples them, because a vision model bills an image by its area, not by the characters on it.
//!
//! Pages are always rendered from source text (there is no way to pass an image in), deterministically (the same
//! source and profile give byte-identical pages), with a manifest mapping every row to its message and character
//! range, and a bounded factsheet of exact strings (ids, hashes, paths) that tiny glyphs put at risk.

pub mod decode;
mod factsheet;
pub mod font;
mod outline;
pub mod profile;
pub mod shape;

use serde::Serialize;

use crate::model::Message;
use font::{BitmapFont, Cell, Mark};
pub use profile::{PROFILES, Profile};

/// One message's text to draw.
#[derive(Debug, Clone)]
pub struct SourceText {
    pub id: String,
    /// The header row's text (role and short id).
    pub label: String,
    pub text: String,
    /// Tool output: its header says so.
    pub tool: bool,
}

/// The text cairn draws for a message ([`crate::model::plain_text`]).
pub fn source_text(m: &Message) -> String {
    crate::model::plain_text(&m.content)
}

/// Sources for a run of messages, secrets redacted ([`crate::redact`]): pages are handed to a model or a person.
pub fn sources(messages: &[Message]) -> Vec<SourceText> {
    sources_with(messages, true)
}

/// Sources for a run of messages, redacted or verbatim.
pub fn sources_with(messages: &[Message], redact: bool) -> Vec<SourceText> {
    messages
        .iter()
        .map(|m| {
            let tool = m.has_tool_result();
            let text = source_text(m);
            SourceText {
                id: m.id.clone(),
                label: label(m.role, tool, &m.id),
                text: if redact {
                    crate::redact::text(&text).0.into_owned()
                } else {
                    text
                },
                tool,
            }
        })
        .collect()
}

/// A message's header on the pages: its role (or "tool output") and the start of its id.
pub fn label(role: crate::model::Role, tool_output: bool, id: &str) -> String {
    let short: String = id.chars().take(8).collect();
    format!(
        "{} {short}",
        if tool_output {
            "tool output"
        } else {
            role.as_str()
        }
    )
}

/// The cells a source takes on the pages: its start mark, "LABEL: ", then one per character of its text (the
/// layout is one stream of cells, so this is exact).
pub fn cells(label: &str, chars: u64) -> u64 {
    1 + label.chars().count() as u64 + 2 + chars
}

/// What pages of `cells` cells would be, without drawing them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Estimate {
    pub pages: usize,
    /// Exact: the page count and each page's cropped height follow from the cell count.
    pub image_tokens: u64,
    /// Estimated at [`PNG_BYTES_PER_CELL`] (measured on real transcript text).
    pub png_bytes: u64,
    /// The factsheet sent beside the pages, estimated: its bytes grow with the text up to its bound.
    pub factsheet_bytes: u64,
}

/// Bytes of 1-bit PNG per drawn cell of real transcript text (bitmap 5x8, default compression), and factsheet
/// bytes per cell, as measured by `render::tests::estimates_track_real_pages`.
pub const PNG_BYTES_PER_CELL: f64 = 0.55;
pub const FACTSHEET_BYTES_PER_CELL: f64 = 0.04;

/// The pages that `cells` cells make with `opts`: the same page breaks and crops as [`render`].
pub fn estimate(cells: u64, opts: &Options) -> Estimate {
    let (cw, _) = opts.cell;
    let p = opts.profile;
    // the grid a shape places glyphs on, and its text columns (as `layout` lays them out); a line layout's short
    // rows are not known from a count of cells, so its estimate is a floor
    let ax = opts.advance.map_or(cw, |a| a.0).max(cw).max(1);
    let k = opts.columns.clamp(1, 4);
    let cols = u64::from(((p.width / ax).saturating_sub(2 * (k - 1)) / k).max(1));
    from_rows(cells.div_ceil(cols), cells, opts)
}

/// What pages of `sources` would be in `opts`'s shape, without drawing them: exact for every layout (a line
/// layout's short rows counted as `layout` lays them out). The shape picker shows this for every shape.
pub fn measure(sources: &[SourceText], opts: &Options) -> Estimate {
    let (cw, _) = opts.cell;
    let ax = opts.advance.map_or(cw, |a| a.0).max(cw).max(1);
    let k = opts.columns.clamp(1, 4);
    let cols = ((opts.profile.width / ax).saturating_sub(2 * (k - 1)) / k).max(1);
    let cells: u64 = sources
        .iter()
        .map(|s| cells(&s.label, s.text.chars().count() as u64))
        .sum();
    from_rows(flow_rows_of(sources, cols, opts.lines), cells, opts)
}

/// Pages and tokens of `rows` rows of the flow (`cells` cells) in `opts`'s shape.
fn from_rows(rows: u64, cells: u64, opts: &Options) -> Estimate {
    let (cw, ch) = opts.cell;
    let p = opts.profile;
    let (_, ay) = opts.advance.unwrap_or((cw, ch));
    let ay = ay.max(ch).max(1);
    let k = opts.columns.clamp(1, 4);
    let rows_per_page = u64::from((p.height / ay).max(1));
    let flow_per_page = rows_per_page * u64::from(k);
    if rows == 0 {
        return Estimate::default();
    }
    let pages = rows.div_ceil(flow_per_page);
    let last_rows = (rows - (pages - 1) * flow_per_page).div_ceil(u64::from(k));
    let ch = ay;
    let cropped = |used: u64| -> u32 {
        let used = (used as u32) * ch;
        let align = p.formula.align();
        (used.div_ceil(align) * align).min(p.height).max(used)
    };
    let full = p.tokens(p.width, cropped(rows_per_page));
    let image_tokens = (pages - 1) * full + p.tokens(p.width, cropped(last_rows));
    Estimate {
        pages: pages as usize,
        image_tokens,
        png_bytes: (cells as f64 * PNG_BYTES_PER_CELL) as u64,
        factsheet_bytes: if opts.factsheet {
            ((cells as f64 * FACTSHEET_BYTES_PER_CELL) as u64).min(opts.factsheet_bytes as u64)
        } else {
            0
        },
    }
}

/// A plain text file as one source (for `render --text`).
pub fn text_source(name: &str, text: String) -> SourceText {
    SourceText {
        id: name.to_string(),
        label: name.to_string(),
        text,
        tool: false,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("no font for a {0}x{1} cell (bitmap: 5x8 and 6x12; outline: at least 4x6)")]
    NoFont(u32, u32),
    #[error("a {cw}x{ch} cell does not fit the {w}x{h} page")]
    CellTooBig { cw: u32, ch: u32, w: u32, h: u32 },
    #[error("PNG encoding: {0}")]
    Png(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    Fast,
    Default,
    Best,
}

/// Which kind of font draws the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FontKind {
    /// A crisp 1-bit bitmap font (5x8 or 6x12); pages can be decoded back exactly.
    Bitmap,
    /// DejaVu Sans Mono through ab_glyph, anti-aliased into 2-bit grayscale, at any cell size.
    Outline,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub profile: &'static Profile,
    pub font: FontKind,
    pub cell: (u32, u32),
    /// The grid a glyph is placed on (advance, line pitch), at least the cell: extra tracking and leading.
    pub advance: Option<(u32, u32)>,
    /// Text columns side by side on a page (rows flow down the first, then the next).
    pub columns: u32,
    /// Each source line starts on a new row (the newline mark ends its row): code keeps its line structure.
    pub lines: bool,
    pub compression: Compression,
    pub factsheet: bool,
    /// Upper bound on the factsheet, in bytes.
    pub factsheet_bytes: usize,
}

impl Options {
    pub fn new(profile: &'static Profile) -> Options {
        Options {
            profile,
            font: FontKind::Bitmap,
            cell: profile.cell,
            advance: None,
            columns: 1,
            lines: false,
            compression: Compression::Default,
            factsheet: true,
            factsheet_bytes: 8_192,
        }
    }
}

/// One encoded page.
#[derive(Debug, Clone)]
pub struct Page {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub tokens: u64,
}

/// What a run of cells holds (`header` or `text` in the manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// A message's start mark and header (its role and id).
    Header,
    /// A range of a message's source text.
    Text,
}

impl PartialEq<&str> for RunKind {
    fn eq(&self, other: &&str) -> bool {
        matches!(
            (self, *other),
            (RunKind::Header, "header") | (RunKind::Text, "text")
        )
    }
}

/// A run of cells on one row of a page: a message's header, or a range of its source text. Every row is
/// covered by one or more of these, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowMap {
    pub row: u32,
    /// First cell of the run on the row.
    pub col: u32,
    pub kind: RunKind,
    pub message: String,
    /// Character range of the message's source text in this run (empty for a header).
    pub start: usize,
    pub end: usize,
}

fn segment(row: u32, col: u32, header: bool, message: &str, start: usize, end: usize) -> RowMap {
    RowMap {
        row,
        col,
        kind: if header {
            RunKind::Header
        } else {
            RunKind::Text
        },
        message: message.to_string(),
        start,
        end: if header { start } else { end },
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PageMap {
    pub file: String,
    pub width: u32,
    pub height: u32,
    pub tokens: u64,
    pub bytes: usize,
    pub rows: Vec<RowMap>,
}

/// One message's stretch on a page: the message, the first and last character drawn there, and whether its
/// header is there too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan<'a> {
    pub message: &'a str,
    pub start: usize,
    pub end: usize,
    pub header: bool,
}

impl PageMap {
    /// The messages drawn on the page, in order, each run of rows of one message as one span.
    pub fn spans(&self) -> Vec<PageSpan<'_>> {
        let mut out: Vec<PageSpan<'_>> = Vec::new();
        for r in &self.rows {
            let header = r.kind == RunKind::Header;
            match out.last_mut() {
                Some(last) if last.message == r.message => {
                    last.start = last.start.min(r.start);
                    last.end = last.end.max(r.end);
                    last.header |= header;
                }
                _ => out.push(PageSpan {
                    message: &r.message,
                    start: r.start,
                    end: r.end,
                    header,
                }),
            }
        }
        out
    }

    /// The text tokens the page replaces: its spans' source text, counted as text would be.
    pub fn text_tokens(&self, sources: &[SourceText]) -> u64 {
        let mut replaced = String::new();
        for sp in self.spans() {
            if let Some(src) = sources.iter().find(|s| s.id == sp.message) {
                replaced.extend(
                    src.text
                        .chars()
                        .skip(sp.start)
                        .take(sp.end.saturating_sub(sp.start)),
                );
            }
        }
        crate::tokens::text(&replaced)
    }
}

/// A character the font cannot draw: drawn as a box, its text kept here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unrendered {
    pub message: String,
    pub index: usize,
    pub char: char,
}

#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    pub profile: &'static str,
    pub font: &'static str,
    pub cell: [u32; 2],
    /// The grid cells are placed on (the cell, or wider and taller with tracking and leading).
    pub advance: [u32; 2],
    /// Cells per row of the page (across all text columns and the gaps between them).
    pub columns: u32,
    /// Text columns side by side.
    pub text_columns: u32,
    /// Whether each source line starts a row.
    pub lines: bool,
    pub rows_per_page: u32,
    pub pages: Vec<PageMap>,
    pub unrendered: Vec<Unrendered>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RenderStats {
    pub pages: usize,
    pub characters: usize,
    pub image_tokens: u64,
    pub text_tokens: u64,
    pub chars_per_image_token: f64,
    /// text tokens ÷ image tokens: how many times cheaper the pages are than the text.
    pub ratio: f64,
    pub png_bytes: usize,
    pub unrendered: usize,
    pub fits_one_request: bool,
}

#[derive(Debug, Clone)]
pub struct Rendered {
    pub pages: Vec<Page>,
    pub manifest: Manifest,
    pub factsheet: String,
    pub stats: RenderStats,
}

/// A page being drawn: 1 bit per pixel, ink = 1, rows padded so a glyph row can be OR-ed as one u32.
struct Canvas {
    width: u32,
    stride: usize,
    bits: Vec<u8>,
}

impl Canvas {
    fn new(width: u32, height: u32) -> Canvas {
        let stride = width.div_ceil(8) as usize + 4;
        Canvas {
            width,
            stride,
            bits: vec![0; stride * height as usize],
        }
    }

    #[inline]
    fn blit(&mut self, x: u32, y: u32, rows: &[u32]) {
        let byte = (x / 8) as usize;
        let shift = x % 8;
        for (r, &bits) in rows.iter().enumerate() {
            if bits == 0 {
                continue;
            }
            let v = (bits >> shift).to_be_bytes();
            let at = (y as usize + r) * self.stride + byte;
            for (k, b) in v.iter().enumerate() {
                self.bits[at + k] |= b;
            }
        }
    }

    /// PNG, 1-bit grayscale, white paper and black ink, `height` rows.
    fn encode(&self, height: u32, compression: Compression) -> Result<Vec<u8>, RenderError> {
        let row_bytes = self.width.div_ceil(8) as usize;
        let mut data = Vec::with_capacity(row_bytes * height as usize);
        for y in 0..height as usize {
            data.extend(
                self.bits[y * self.stride..y * self.stride + row_bytes]
                    .iter()
                    .map(|b| !b),
            );
        }
        encode_gray(self.width, height, png::BitDepth::One, compression, &data)
    }
}

/// Encodes packed grayscale rows as PNG (compression levels shared by both kinds of page).
pub(crate) fn encode_gray(
    width: u32,
    height: u32,
    depth: png::BitDepth,
    compression: Compression,
    data: &[u8],
) -> Result<Vec<u8>, RenderError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(depth);
        enc.set_compression(match compression {
            Compression::Fast => png::Compression::Fastest,
            Compression::Default => png::Compression::Fast,
            Compression::Best => png::Compression::High,
        });
        let mut w = enc
            .write_header()
            .map_err(|e| RenderError::Png(e.to_string()))?;
        w.write_image_data(data)
            .map_err(|e| RenderError::Png(e.to_string()))?;
    }
    Ok(out)
}

/// Draws the sources into pages.
pub fn render(sources: &[SourceText], opts: &Options) -> Result<Rendered, RenderError> {
    let (cw, ch) = opts.cell;
    let p = opts.profile;
    if cw > p.width || ch > p.height {
        return Err(RenderError::CellTooBig {
            cw,
            ch,
            w: p.width,
            h: p.height,
        });
    }
    let (ax, ay) = opts.advance.unwrap_or((cw, ch));
    let (ax, ay) = (ax.max(cw), ay.max(ch));
    match opts.font {
        FontKind::Bitmap => {
            let font: &BitmapFont = font::for_cell(cw, ch).ok_or(RenderError::NoFont(cw, ch))?;
            let surface = BitmapSurface {
                canvas: Canvas::new(p.width, p.height),
                font,
                cw: ax,
                ch: ay,
            };
            layout(sources, opts, surface, font.name)
        }
        FontKind::Outline => {
            let font = outline::OutlineFont::new(cw, ch).ok_or(RenderError::NoFont(cw, ch))?;
            let surface = outline::OutlineSurface::new(p.width, p.height, font, (ax, ay));
            layout(sources, opts, surface, outline::NAME)
        }
    }
}

/// Where cells are drawn: a 1-bit bitmap-font canvas or an anti-aliased outline-font one.
pub(crate) trait Surface {
    /// Draws `c`, or the Missing mark if the font cannot (then returns false).
    fn put_char(&mut self, col: u32, row: u32, c: char) -> bool;
    fn put_mark(&mut self, col: u32, row: u32, m: Mark);
    fn encode(&self, height: u32, compression: Compression) -> Result<Vec<u8>, RenderError>;
    /// Starts a new page.
    fn clear(&mut self);
}

struct BitmapSurface {
    canvas: Canvas,
    font: &'static BitmapFont,
    cw: u32,
    ch: u32,
}

impl Surface for BitmapSurface {
    #[inline]
    fn put_char(&mut self, col: u32, row: u32, c: char) -> bool {
        let (g, ok) = match self.font.glyph(c) {
            Some(g) => (g, true),
            None => (self.font.mark(Mark::Missing), false),
        };
        self.canvas.blit(col * self.cw, row * self.ch, g);
        ok
    }
    #[inline]
    fn put_mark(&mut self, col: u32, row: u32, m: Mark) {
        self.canvas
            .blit(col * self.cw, row * self.ch, self.font.mark(m));
    }
    fn encode(&self, height: u32, compression: Compression) -> Result<Vec<u8>, RenderError> {
        self.canvas.encode(height, compression)
    }
    fn clear(&mut self) {
        self.canvas = Canvas::new(
            self.canvas.width,
            self.canvas.bits.len() as u32 / self.canvas.stride as u32,
        );
    }
}

fn layout<S: Surface>(
    sources: &[SourceText],
    opts: &Options,
    canvas: S,
    font_name: &'static str,
) -> Result<Rendered, RenderError> {
    let mut flow = Flow::new(sources, opts, canvas);
    // One cursor flows through all messages: every cell is used. Each message opens with a start mark and a
    // short header (role, id), then its text; a newline is a visible mark, not a wasted row end.
    for src in sources {
        flow.message(src)?;
    }
    if flow.col > 0 {
        flow.row += 1;
    }
    flow.flush()?;
    flow.finish(sources, font_name)
}

/// The pages' grid: text columns side by side, two blank cells between them; the flow fills one, then the next.
/// The last page's columns are balanced: its rows are shared evenly between the text columns, so a page that is
/// not full is cropped to the height its text needs instead of the height of a full first column.
struct Grid {
    /// The cell advance and line pitch.
    ax: u32,
    ay: u32,
    /// Cells across the page.
    grid_cols: u32,
    rows_per_page: u32,
    /// Text columns, and cells in each.
    k: u32,
    cols: u32,
    /// Rows of the flow one page holds (all its text columns).
    flow_rows: u32,
    last_page: u64,
    balanced: u32,
}

const GAP: u32 = 2;

impl Grid {
    fn new(sources: &[SourceText], opts: &Options) -> Grid {
        let (cw, ch) = opts.cell;
        let p = opts.profile;
        let (ax, ay) = opts.advance.unwrap_or((cw, ch));
        let (ax, ay) = (ax.max(cw), ay.max(ch));
        let grid_cols = p.width / ax;
        let rows_per_page = p.height / ay;
        let k = opts.columns.clamp(1, 4);
        let cols = (grid_cols.saturating_sub(GAP * (k - 1)) / k).max(1);
        let flow_rows = rows_per_page * k;
        let total_rows = flow_rows_of(sources, cols, opts.lines);
        let last_page = total_rows.saturating_sub(1) / u64::from(flow_rows.max(1));
        let last_rows = total_rows - last_page * u64::from(flow_rows.max(1));
        let balanced = (last_rows.div_ceil(u64::from(k)) as u32).clamp(1, rows_per_page.max(1));
        Grid {
            ax,
            ay,
            grid_cols,
            rows_per_page,
            k,
            cols,
            flow_rows,
            last_page,
            balanced,
        }
    }

    fn column_height(&self, page: usize) -> u32 {
        if page as u64 == self.last_page {
            self.balanced
        } else {
            self.rows_per_page.max(1)
        }
    }

    /// Where a cell of the flow (row, col) is on the page's grid.
    fn place(&self, page: usize, row: u32, col: u32) -> (u32, u32) {
        let h = self.column_height(page);
        (row % h, (row / h) * (self.cols + GAP) + col)
    }
}

/// The pages as they are drawn: the grid, the cursor, and what is done so far.
struct Flow<'o, S> {
    opts: &'o Options,
    grid: Grid,
    canvas: S,
    pages: Vec<Page>,
    maps: Vec<PageMap>,
    unrendered: Vec<Unrendered>,
    /// The current page's row segments.
    rows: Vec<RowMap>,
    row: u32,
    col: u32,
    characters: usize,
}

impl<'o, S: Surface> Flow<'o, S> {
    fn new(sources: &[SourceText], opts: &'o Options, canvas: S) -> Self {
        Flow {
            opts,
            grid: Grid::new(sources, opts),
            canvas,
            pages: Vec::new(),
            maps: Vec::new(),
            unrendered: Vec::new(),
            rows: Vec::new(),
            row: 0,
            col: 0,
            characters: 0,
        }
    }

    /// Finishes the current page (cropping it to the rows it uses) and starts a new one.
    fn flush(&mut self) -> Result<(), RenderError> {
        if self.row == 0 {
            return Ok(());
        }
        let p = self.opts.profile;
        let ay = self.grid.ay;
        let align = p.formula.align();
        let used = self.row.min(self.grid.column_height(self.pages.len()));
        let height = (used * ay).div_ceil(align) * align;
        let height = height.min(p.height).max(used * ay);
        let png = self.canvas.encode(height, self.opts.compression)?;
        let tokens = p.tokens(p.width, height);
        let n = self.pages.len() + 1;
        self.maps.push(PageMap {
            file: format!("page-{n:03}.png"),
            width: p.width,
            height,
            tokens,
            bytes: png.len(),
            rows: std::mem::take(&mut self.rows),
        });
        self.pages.push(Page {
            png,
            width: p.width,
            height,
            tokens,
        });
        self.canvas.clear();
        Ok(())
    }

    /// Closes a row segment (at a row's end, or where the header gives way to text).
    fn close(&mut self, seg: (u32, u32, bool, usize), message: &str, end: usize) {
        let (sr, sc, h, st) = seg;
        let (pr, pc) = self.grid.place(self.pages.len(), sr, sc);
        self.rows.push(segment(pr, pc, h, message, st, end));
    }

    /// One message: its start mark and header, then its text.
    fn message(&mut self, src: &SourceText) -> Result<(), RenderError> {
        let header: Vec<char> = format!("{}: ", src.label).chars().collect();
        let mut cells: Vec<(Cell, bool)> = Vec::with_capacity(header.len() + 1);
        cells.push((Cell::Mark(Mark::Start), true));
        cells.extend(header.iter().map(|&c| (Cell::Char(c), true)));
        let mut seg: Option<(u32, u32, bool, usize)> = None; // (row, col, header?, start index)
        let mut index = 0usize;
        let text_cells = src.text.chars().map(|c| (Cell::Char(c), false));
        for (cell, is_header) in cells.into_iter().chain(text_cells) {
            // a segment ends at a row's end or where the header gives way to text (closed before a page ends)
            if let Some(open) = seg
                && (open.0 != self.row || open.2 != is_header)
            {
                self.close(open, &src.id, index);
                seg = None;
            }
            if self.col == 0 && self.row == self.grid.flow_rows {
                self.flush()?;
                self.row = 0;
            }
            if seg.is_none() {
                seg = Some((self.row, self.col, is_header, index));
            }
            let newline = self.put(cell, is_header, &src.id, index);
            if !is_header {
                index += 1;
            }
            self.col += 1;
            // by lines, the newline mark ends its row
            if self.col == self.grid.cols || (self.opts.lines && newline) {
                self.col = 0;
                self.row += 1;
            }
        }
        if let Some(open) = seg {
            self.close(open, &src.id, index);
        }
        // by lines, each message starts on a row of its own
        if self.opts.lines && self.col > 0 {
            self.col = 0;
            self.row += 1;
        }
        self.characters += index;
        Ok(())
    }

    /// Draws one cell at the cursor; whether it was a newline of the text.
    fn put(&mut self, cell: Cell, is_header: bool, message: &str, index: usize) -> bool {
        let (prow, pcol) = self.grid.place(self.pages.len(), self.row, self.col);
        let newline = matches!(cell, Cell::Char('\n')) && !is_header;
        match cell {
            Cell::Char('\n') if !is_header => self.canvas.put_mark(pcol, prow, Mark::Newline),
            Cell::Char('\t') if !is_header => self.canvas.put_mark(pcol, prow, Mark::Tab),
            Cell::Char(c) => {
                if !self.canvas.put_char(pcol, prow, c) && !is_header {
                    self.unrendered.push(Unrendered {
                        message: message.to_string(),
                        index,
                        char: c,
                    });
                }
            }
            Cell::Mark(m) => self.canvas.put_mark(pcol, prow, m),
        }
        newline
    }

    /// The pages, their map and their figures.
    fn finish(
        self,
        sources: &[SourceText],
        font_name: &'static str,
    ) -> Result<Rendered, RenderError> {
        let opts = self.opts;
        let p = opts.profile;
        let Flow {
            grid,
            pages,
            maps,
            unrendered,
            characters,
            ..
        } = self;
        let pages = check_image_bytes(pages, &maps, p)?;
        let text_tokens: u64 = sources.iter().map(|s| crate::tokens::text(&s.text)).sum();
        let image_tokens: u64 = pages.iter().map(|pg| pg.tokens).sum();
        let png_bytes: usize = pages.iter().map(|pg| pg.png.len()).sum();
        let stats = RenderStats {
            pages: pages.len(),
            characters,
            image_tokens,
            text_tokens,
            chars_per_image_token: if image_tokens > 0 {
                characters as f64 / image_tokens as f64
            } else {
                0.0
            },
            ratio: if image_tokens > 0 {
                text_tokens as f64 / image_tokens as f64
            } else {
                0.0
            },
            png_bytes,
            unrendered: unrendered.len(),
            fits_one_request: pages.len() <= p.max_images && png_bytes <= p.max_request_bytes,
        };
        let factsheet = if opts.factsheet {
            factsheet::build(sources, &unrendered, opts.factsheet_bytes)
        } else {
            String::new()
        };
        Ok(Rendered {
            pages,
            manifest: Manifest {
                profile: p.name,
                font: font_name,
                cell: [opts.cell.0, opts.cell.1],
                advance: [grid.ax, grid.ay],
                columns: grid.grid_cols,
                text_columns: grid.k,
                lines: opts.lines,
                rows_per_page: grid.rows_per_page,
                pages: maps,
                unrendered,
            },
            factsheet,
            stats,
        })
    }
}

/// The rows the flow takes in all, as `layout` advances through it: `cols` cells to a row, and by lines each
/// newline and each message ending its row.
fn flow_rows_of(sources: &[SourceText], cols: u32, lines: bool) -> u64 {
    let cols = u64::from(cols.max(1));
    let mut rows = 0u64;
    let mut col = 0u64;
    for src in sources {
        // the start mark, the label and ": "
        let header = src.label.chars().count() as u64 + 3;
        if lines {
            // each line but the last keeps its newline mark; the header leads the first
            let mut start = header;
            let mut pieces = src.text.split('\n').peekable();
            while let Some(line) = pieces.next() {
                let len = start + line.chars().count() as u64 + u64::from(pieces.peek().is_some());
                start = 0;
                rows += len.div_ceil(cols);
            }
            col = 0;
        } else {
            let len = col + header + src.text.chars().count() as u64;
            rows += len / cols;
            col = len % cols;
        }
    }
    if col > 0 {
        rows += 1;
    }
    rows
}

/// Refuses a page over the provider's per-image byte limit. A 1-bit page of the largest profile is at most
/// 470 kB before compression, far under every limit, so this cannot happen with the shipped profiles; a new
/// profile that made it possible would be caught here rather than produce an image the provider rejects.
fn check_image_bytes(
    pages: Vec<Page>,
    maps: &[PageMap],
    p: &Profile,
) -> Result<Vec<Page>, RenderError> {
    if pages.iter().all(|pg| pg.png.len() <= p.max_image_bytes) {
        return Ok(pages);
    }
    // Splitting needs the pixels again; pages this large do not occur with the shipped profiles, so refuse
    // clearly rather than send an image the provider rejects.
    let (i, pg) = pages
        .iter()
        .enumerate()
        .find(|(_, pg)| pg.png.len() > p.max_image_bytes)
        .map(|(i, pg)| (i, pg.png.len()))
        .unwrap_or((0, 0));
    Err(RenderError::Png(format!(
        "{} is {pg} bytes, over the {} profile's {} per image",
        maps.get(i).map_or("a page", |m| m.file.as_str()),
        p.name,
        p.max_image_bytes
    )))
}
