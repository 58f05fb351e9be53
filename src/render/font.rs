//! Bitmap fonts for snapshot pages: each glyph rasterised once (at load) into rows of bits, then blitted.
//!
//! A code point is drawable only if its bitmap differs from every other drawable glyph's (ASCII first), so a page
//! can always be read back exactly. Three private glyphs mark what is not a visible character: a newline (text
//! is reflowed into full rows, so the newline must be seen), a tab, and a character the font cannot draw (its
//! text is kept beside the pages).

use std::collections::HashMap;
use std::sync::OnceLock;

/// What a cell holds besides a drawable character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    Newline,
    Tab,
    Missing,
    /// The start of a message (before its header).
    Start,
}

const MARKS: [Mark; 4] = [Mark::Newline, Mark::Tab, Mark::Missing, Mark::Start];

pub struct BitmapFont {
    pub name: &'static str,
    pub w: u32,
    pub h: u32,
    /// Rows of each glyph, left-aligned in a u32 (bit 31 is the leftmost pixel).
    glyphs: HashMap<char, Vec<u32>>,
    ascii: Vec<Option<Vec<u32>>>,
    marks: [Vec<u32>; 4],
    /// For the decoder: bitmap → what it means.
    reverse: HashMap<Vec<u32>, Cell>,
}

/// What a decoded cell says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Char(char),
    Mark(Mark),
}

/// The private marks drawn as ASCII art ('#' = ink), for each cell size.
fn mark_art(w: u32, h: u32, m: Mark) -> Vec<&'static str> {
    match (w, h, m) {
        (5, 8, Mark::Newline) => vec![
            "....#", "....#", ".#..#", "#####", ".#...", ".....", ".....", ".....",
        ],
        (5, 8, Mark::Tab) => vec![
            ".....", "..#..", "...#.", "#####", "...#.", "..#..", ".....", ".....",
        ],
        (5, 8, Mark::Missing) => vec![
            "#####", "#...#", "#...#", "#...#", "#...#", "#####", ".....", ".....",
        ],
        (5, 8, Mark::Start) => vec![
            "#####", "#####", "#####", "#####", "#####", "#####", "#####", ".....",
        ],
        (6, 12, Mark::Newline) => vec![
            "......", ".....#", ".....#", ".....#", "..#..#", ".#...#", "######", ".#....",
            "..#...", "......", "......", "......",
        ],
        (6, 12, Mark::Start) => vec![
            "######", "######", "######", "######", "######", "######", "######", "######",
            "######", "######", "######", "......",
        ],
        (6, 12, Mark::Tab) => vec![
            "......", "......", "...#..", "....#.", "######", "....#.", "...#..", "......",
            "......", "......", "......", "......",
        ],
        (_, _, _) => {
            // any other size: a full box for Missing, a bottom bar for Newline, a middle bar for Tab
            let _ = (w, h);
            vec![]
        }
    }
}

fn art_rows(art: &[&str], w: u32, h: u32, m: Mark) -> Vec<u32> {
    if art.len() == h as usize {
        return art
            .iter()
            .map(|row| {
                row.chars()
                    .enumerate()
                    .filter(|(_, c)| *c == '#')
                    .fold(0u32, |acc, (x, _)| acc | (1u32 << (31 - x)))
            })
            .collect();
    }
    let full = if w == 0 { 0 } else { u32::MAX << (32 - w) };
    (0..h)
        .map(|y| match m {
            Mark::Missing if y == 0 || y == h - 2 => full,
            Mark::Missing if y < h - 2 => (1 << 31) | (1 << (32 - w)),
            Mark::Newline if y == h - 3 => full,
            Mark::Tab if y == h / 2 => full & !(1 << (32 - w)),
            Mark::Start if y + 1 < h => full,
            _ => 0,
        })
        .collect()
}

impl BitmapFont {
    /// Parses cairn's glyph format (`U+XXXX` then one hex value per row, leftmost pixel = most significant bit).
    pub fn parse(name: &'static str, w: u32, h: u32, text: &str) -> BitmapFont {
        let mut all: Vec<(char, Vec<u32>)> = Vec::new();
        let mut taken = std::collections::HashSet::new();
        let row_bytes = w.div_ceil(8);
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let Some(cp) = parts.next().and_then(|p| p.strip_prefix("U+")) else {
                continue;
            };
            let Some(c) = u32::from_str_radix(cp, 16).ok().and_then(char::from_u32) else {
                continue;
            };
            let rows: Vec<u32> = parts
                .filter_map(|r| u32::from_str_radix(r, 16).ok())
                .map(|r| r << (32 - 8 * row_bytes))
                .collect();
            // the first definition of a code point wins (overrides come first, fallbacks last)
            if rows.len() == h as usize && taken.insert(c) {
                all.push((c, rows));
            }
        }
        // ASCII first, then the rest in code-point order; a bitmap already taken (or blank, but for space)
        // makes the later code point undrawable.
        all.sort_by_key(|(c, _)| (!c.is_ascii(), *c as u32));
        let marks = MARKS.map(|m| art_rows(&mark_art(w, h, m), w, h, m));
        let mut reverse: HashMap<Vec<u32>, Cell> = HashMap::new();
        for (m, rows) in MARKS.iter().zip(&marks) {
            reverse.insert(rows.clone(), Cell::Mark(*m));
        }
        let mut glyphs = HashMap::new();
        for (c, rows) in all {
            let blank = rows.iter().all(|r| *r == 0);
            if c.is_control() || (blank && c != ' ') || reverse.contains_key(&rows) {
                continue;
            }
            // the mark code points themselves are drawn as Missing (their meaning is taken)
            if matches!(c, '↵' | '→' | '□' | '█') {
                continue;
            }
            reverse.insert(rows.clone(), Cell::Char(c));
            glyphs.insert(c, rows);
        }
        let ascii = (0..128u32)
            .map(|c| char::from_u32(c).and_then(|c| glyphs.get(&c).cloned()))
            .collect();
        BitmapFont {
            name,
            w,
            h,
            glyphs,
            ascii,
            marks,
            reverse,
        }
    }

    /// The glyph of a drawable character.
    #[inline]
    pub fn glyph(&self, c: char) -> Option<&[u32]> {
        if (c as u32) < 128 {
            self.ascii[c as usize].as_deref()
        } else {
            self.glyphs.get(&c).map(Vec::as_slice)
        }
    }

    pub fn mark(&self, m: Mark) -> &[u32] {
        match m {
            Mark::Newline => &self.marks[0],
            Mark::Tab => &self.marks[1],
            Mark::Missing => &self.marks[2],
            Mark::Start => &self.marks[3],
        }
    }

    /// What a cell's bitmap means (exact match), if anything.
    pub fn read(&self, rows: &[u32]) -> Option<Cell> {
        self.reverse.get(rows).copied()
    }

    /// Number of drawable characters.
    pub fn coverage(&self) -> usize {
        self.glyphs.len()
    }
}

static CAIRN_5X8: OnceLock<BitmapFont> = OnceLock::new();
static SPLEEN_6X12: OnceLock<BitmapFont> = OnceLock::new();

/// cairn's 5x8: X11 misc-fixed 5x8 (public domain; tesseract reads it better than Spleen 5x8), with the glyphs
/// of confusable pairs redrawn (assets/fonts/cairn-5x8-overrides.glyphs), and Spleen 5x8 for what misc-fixed
/// lacks (box drawing and other symbols).
fn cairn_5x8_source() -> String {
    [
        include_str!("../../assets/fonts/cairn-5x8-overrides.glyphs"),
        include_str!("../../assets/fonts/fixed-5x8.glyphs"),
        include_str!("../../assets/fonts/spleen-5x8.glyphs"),
    ]
    .join("\n")
}

/// The bitmap font for a cell size, if cairn has one.
pub fn for_cell(w: u32, h: u32) -> Option<&'static BitmapFont> {
    match (w, h) {
        (5, 8) => Some(
            CAIRN_5X8.get_or_init(|| BitmapFont::parse("cairn-5x8", 5, 8, &cairn_5x8_source())),
        ),
        (6, 12) => Some(SPLEEN_6X12.get_or_init(|| {
            BitmapFont::parse(
                "spleen-6x12",
                6,
                12,
                include_str!("../../assets/fonts/spleen-6x12.glyphs"),
            )
        })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drawable_glyph_and_mark_reads_back_as_itself() {
        for (w, h) in [(5, 8), (6, 12)] {
            let f = for_cell(w, h).unwrap();
            for c in (32u8..127).map(char::from) {
                let g = f
                    .glyph(c)
                    .unwrap_or_else(|| panic!("{w}x{h} cannot draw {c:?}"));
                assert_eq!(f.read(g), Some(Cell::Char(c)), "{w}x{h} {c:?}");
            }
            for m in MARKS {
                assert_eq!(f.read(f.mark(m)), Some(Cell::Mark(m)), "{w}x{h} {m:?}");
            }
            assert!(f.glyph('↵').is_none());
            assert!(f.coverage() >= 95);
        }
    }
}
