//! Anti-aliased pages for profiles that need them: DejaVu Sans Mono drawn through ab_glyph at any cell size,
//! each glyph rasterised once per render into a coverage map and then blitted, written as 2-bit grayscale PNG
//! (four levels keep the edges smooth at a quarter of 8-bit's bytes). There is no exact decoder for these pages.

use std::collections::HashMap;

use ab_glyph::{Font as _, FontRef, PxScale, ScaleFont as _};

use super::font::Mark;
use super::{Compression, RenderError, Surface};

pub const NAME: &str = "dejavu-sans-mono";

static TTF: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");

pub struct OutlineFont {
    font: FontRef<'static>,
    scale: PxScale,
    ascent: f32,
    w: u32,
    h: u32,
}

impl OutlineFont {
    /// The font scaled so its advance is exactly `w` pixels and its height `h`.
    pub fn new(w: u32, h: u32) -> Option<OutlineFont> {
        if w < 4 || h < 6 {
            return None;
        }
        let font = FontRef::try_from_slice(TTF).ok()?;
        let probe = font.as_scaled(PxScale::from(h as f32));
        let advance = probe.h_advance(font.glyph_id('0'));
        if advance <= 0.0 {
            return None;
        }
        let scale = PxScale {
            x: h as f32 * w as f32 / advance,
            y: h as f32,
        };
        let ascent = font.as_scaled(scale).ascent();
        Some(OutlineFont {
            font,
            scale,
            ascent,
            w,
            h,
        })
    }

    /// Coverage (0 = paper, 255 = ink) of one cell drawing `c`, or None if the font lacks it.
    fn raster(&self, c: char) -> Option<Vec<u8>> {
        if c == '→' {
            return self.arrow();
        }
        self.font_glyph(c)
    }

    /// The rightwards arrow drawn for reading, not from the font: Claude Code's Read output puts one after every
    /// line number, and the font's, a short stroke with a small head at these sizes, was read as `-`, `+` or
    /// nothing. This one spans the cell on the hyphen's axis with a two-pixel head each side: on real tool output
    /// in 7x13 cells PaddleOCR missed 394 of 444 arrows before, 18 after (a three-pixel head: 249, four: 440).
    /// Tesseract's English model has no `→` in its alphabet and reads none either way.
    fn arrow(&self) -> Option<Vec<u8>> {
        let hyphen = self.font_glyph('-')?;
        let (w, h) = (self.w as usize, self.h as usize);
        // the hyphen's inked rows, weighted: the axis the arrow sits on
        let (mut sum, mut weight) = (0usize, 0usize);
        for y in 0..h {
            let ink: usize = hyphen[y * w..(y + 1) * w].iter().map(|&v| v as usize).sum();
            sum += y * ink;
            weight += ink;
        }
        let mid = (sum + weight / 2).checked_div(weight).unwrap_or(h / 2);
        let mut cov = vec![0u8; w * h];
        for x in 0..w {
            cov[mid * w + x] = 255;
        }
        for d in 1..=2usize.min(w / 2) {
            let x = w - 1 - d;
            for y in [mid.checked_sub(d), Some(mid + d).filter(|&y| y < h)]
                .into_iter()
                .flatten()
            {
                cov[y * w + x] = 255;
            }
        }
        Some(cov)
    }

    fn font_glyph(&self, c: char) -> Option<Vec<u8>> {
        let id = self.font.glyph_id(c);
        if id.0 == 0 && c != ' ' {
            return None;
        }
        let mut cov = vec![0u8; (self.w * self.h) as usize];
        let glyph = id.with_scale_and_position(self.scale, ab_glyph::point(0.0, self.ascent));
        if let Some(outlined) = self.font.outline_glyph(glyph) {
            let b = outlined.px_bounds();
            outlined.draw(|x, y, v| {
                let px = b.min.x as i32 + x as i32;
                let py = b.min.y as i32 + y as i32;
                if px >= 0 && py >= 0 && (px as u32) < self.w && (py as u32) < self.h {
                    let i = (py as u32 * self.w + px as u32) as usize;
                    cov[i] = cov[i].max((v.clamp(0.0, 1.0) * 255.0) as u8);
                }
            });
        }
        Some(cov)
    }
}

pub struct OutlineSurface {
    font: OutlineFont,
    /// The grid glyphs are placed on (at least the font's cell).
    advance: (u32, u32),
    width: u32,
    height: u32,
    ink: Vec<u8>,
    cache: HashMap<char, Option<Vec<u8>>>,
}

impl OutlineSurface {
    pub fn new(width: u32, height: u32, font: OutlineFont, advance: (u32, u32)) -> OutlineSurface {
        OutlineSurface {
            font,
            advance,
            width,
            height,
            ink: vec![0; (width * height) as usize],
            cache: HashMap::new(),
        }
    }

    fn glyph(&mut self, c: char) -> Option<&Vec<u8>> {
        if !self.cache.contains_key(&c) {
            let r = self.font.raster(c);
            self.cache.insert(c, r);
        }
        self.cache.get(&c).and_then(Option::as_ref)
    }
}

impl Surface for OutlineSurface {
    fn put_char(&mut self, col: u32, row: u32, c: char) -> bool {
        if self.glyph(c).is_some() {
            self.draw(col, row, c);
            true
        } else {
            self.put_mark(col, row, Mark::Missing);
            false
        }
    }

    fn put_mark(&mut self, col: u32, row: u32, m: Mark) {
        let c = match m {
            Mark::Newline => '↵',
            Mark::Tab => '→',
            Mark::Missing => '□',
            Mark::Start => '█',
        };
        self.draw(col, row, c);
    }

    fn encode(&self, height: u32, compression: Compression) -> Result<Vec<u8>, RenderError> {
        let row_bytes = self.width.div_ceil(4) as usize;
        let mut data = vec![0u8; row_bytes * height as usize];
        for y in 0..height as usize {
            for x in 0..self.width as usize {
                // 3 = white paper, 0 = full ink
                let ink = u32::from(self.ink[y * self.width as usize + x]);
                let level = 3 - ((ink * 3 + 127) / 255) as u8;
                data[y * row_bytes + x / 4] |= level << (6 - 2 * (x % 4));
            }
        }
        super::encode_gray(self.width, height, png::BitDepth::Two, compression, &data)
    }

    fn clear(&mut self) {
        self.ink = vec![0; (self.width * self.height) as usize];
    }
}

impl OutlineSurface {
    fn draw(&mut self, col: u32, row: u32, c: char) {
        let (w, h, width) = (self.font.w, self.font.h, self.width);
        let Some(cov) = self.glyph(c).cloned() else {
            return;
        };
        let (x0, y0) = (col * self.advance.0, row * self.advance.1);
        for y in 0..h {
            let dst = ((y0 + y) * width + x0) as usize;
            let src = (y * w) as usize;
            for x in 0..w as usize {
                let v = cov[src + x];
                if v > 0 {
                    let d = &mut self.ink[dst + x];
                    *d = (*d).max(v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arrow_spans_its_cell_on_the_hyphens_axis_with_a_two_pixel_head() {
        for (w, h) in [(7, 13), (7, 14), (8, 16), (8, 13)] {
            let f = OutlineFont::new(w, h).unwrap();
            let a = f.raster('→').unwrap();
            let (w, h) = (w as usize, h as usize);
            let full: Vec<usize> = (0..h)
                .filter(|&y| (0..w).all(|x| a[y * w + x] == 255))
                .collect();
            assert_eq!(full.len(), 1, "{w}x{h}: one shaft row");
            let mid = full[0];
            // on the hyphen's inked rows
            let hyphen = f.raster('-').unwrap();
            assert!((0..w).any(|x| hyphen[mid * w + x] > 0), "{w}x{h}");
            for d in 1..=2 {
                assert_eq!(a[(mid - d) * w + (w - 1 - d)], 255, "{w}x{h}");
                assert_eq!(a[(mid + d) * w + (w - 1 - d)], 255, "{w}x{h}");
            }
            assert_eq!(a.iter().filter(|&&v| v > 0).count(), w + 4, "{w}x{h}");
        }
    }
}
