//! Reading a page back to text. The font is known and glyph bitmaps are unique, so template matching is exact:
//! tests use it to prove that every page decodes to exactly its source text.

use super::font::{BitmapFont, Cell, Mark};
use super::{Manifest, SourceText};

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("PNG: {0}")]
    Png(String),
    #[error("page {page} row {row} column {col}: a cell that is no glyph of {font}")]
    Unknown {
        page: usize,
        row: u32,
        col: u32,
        font: &'static str,
    },
    #[error("page {page} row {row}: decoded {got:?}, source says {want:?}")]
    Mismatch {
        page: usize,
        row: u32,
        got: String,
        want: String,
    },
}

/// The cells of a PNG page, row by row (`\n` for a newline mark, `\t` for a tab, U+FFFD for a box).
pub fn decode_page(
    png_bytes: &[u8],
    font: &BitmapFont,
    page: usize,
) -> Result<Vec<String>, DecodeError> {
    decode_grid(png_bytes, font, page, (font.w, font.h))
}

/// Reads a page whose glyphs sit on a grid of `advance` (each glyph in the top-left of its grid cell).
pub fn decode_grid(
    png_bytes: &[u8],
    font: &BitmapFont,
    page: usize,
    advance: (u32, u32),
) -> Result<Vec<String>, DecodeError> {
    let (ax, ay) = (advance.0.max(font.w), advance.1.max(font.h));
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder
        .read_info()
        .map_err(|e| DecodeError::Png(e.to_string()))?;
    let info = reader.info().clone();
    if info.bit_depth != png::BitDepth::One || info.color_type != png::ColorType::Grayscale {
        return Err(DecodeError::Png("not a 1-bit grayscale page".into()));
    }
    let mut buf = vec![
        0;
        reader
            .output_buffer_size()
            .ok_or_else(|| DecodeError::Png("page too large".into()))?
    ];
    let frame = reader
        .next_frame(&mut buf)
        .map_err(|e| DecodeError::Png(e.to_string()))?;
    let stride = frame.line_size;
    let (w, h) = (info.width, info.height);
    let ink = |x: u32, y: u32| -> bool {
        buf[y as usize * stride + (x / 8) as usize] & (0x80 >> (x % 8)) == 0
    };
    let cols = w / ax;
    let rows = h / ay;
    let mut out = Vec::with_capacity(rows as usize);
    for r in 0..rows {
        let mut line = String::new();
        let mut pending_blank = 0usize;
        for c in 0..cols {
            let cell: Vec<u32> = (0..font.h)
                .map(|dy| {
                    (0..font.w).fold(0u32, |acc, dx| {
                        if ink(c * ax + dx, r * ay + dy) {
                            acc | (1 << (31 - dx))
                        } else {
                            acc
                        }
                    })
                })
                .collect();
            let ch = match font.read(&cell) {
                Some(Cell::Char(ch)) => ch,
                Some(Cell::Mark(Mark::Newline)) => '\n',
                Some(Cell::Mark(Mark::Tab)) => '\t',
                Some(Cell::Mark(Mark::Missing)) => '\u{FFFD}',
                Some(Cell::Mark(Mark::Start)) => '\u{2588}',
                None => {
                    return Err(DecodeError::Unknown {
                        page,
                        row: r,
                        col: c,
                        font: font.name,
                    });
                }
            };
            // trailing blank cells are padding, not spaces; keep spaces only when something follows
            if ch == ' ' {
                pending_blank += 1;
            } else {
                line.extend(std::iter::repeat_n(' ', pending_blank));
                pending_blank = 0;
                line.push(ch);
            }
        }
        line.extend(std::iter::repeat_n(' ', pending_blank));
        out.push(line);
    }
    Ok(out)
}

/// Decodes every page and checks each text row against its source range (boxes are checked against the kept
/// text). Returns the number of characters verified.
pub fn verify(
    pages: &[Vec<u8>],
    manifest: &Manifest,
    sources: &[SourceText],
    font: &BitmapFont,
) -> Result<usize, DecodeError> {
    let mut checked = 0;
    for (pi, (png_bytes, map)) in pages.iter().zip(&manifest.pages).enumerate() {
        let advance = (manifest.advance[0], manifest.advance[1]);
        let rows = decode_grid(png_bytes, font, pi + 1, advance)?;
        for rm in &map.rows {
            if rm.kind != "text" {
                continue;
            }
            let Some(src) = sources.iter().find(|s| s.id == rm.message) else {
                continue;
            };
            let want: String = src
                .text
                .chars()
                .skip(rm.start)
                .take(rm.end - rm.start)
                .collect();
            let decoded = rows.get(rm.row as usize).cloned().unwrap_or_default();
            let mut got: Vec<char> = decoded
                .chars()
                .skip(rm.col as usize)
                .take(rm.end - rm.start)
                .collect();
            got.resize(rm.end - rm.start, ' ');
            for (k, g) in got.iter_mut().enumerate() {
                if *g == '\u{FFFD}'
                    && let Some(u) = manifest
                        .unrendered
                        .iter()
                        .find(|u| u.message == rm.message && u.index == rm.start + k)
                {
                    *g = u.char;
                }
            }
            let got: String = got.into_iter().collect();
            if got != want {
                return Err(DecodeError::Mismatch {
                    page: pi + 1,
                    row: rm.row,
                    got,
                    want,
                });
            }
            checked += want.chars().count();
        }
    }
    Ok(checked)
}
