//! Page shapes as data: the glyphs (a bitmap font, or DejaVu Sans Mono through the outline renderer at a size), the
//! grid they sit on (advance and line pitch: extra tracking and leading), how many text columns share a page, and
//! whether each source line starts a row (code keeps its indentation and line-number gutter in place). A shape is
//! chosen per model family ([`for_model`]) from the legibility evidence (`cairn legibility`, README), and can be
//! overridden in the settings file (`"shape"`) and per command (`--shape NAME`).

use serde::Serialize;

use super::{FontKind, Options};

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PageShape {
    /// Lowercase with dashes; stable (scripts rely on the names).
    pub name: &'static str,
    #[serde(serialize_with = "glyph_name")]
    pub glyph: FontKind,
    /// The glyph's cell.
    #[serde(serialize_with = "pair")]
    pub cell: (u32, u32),
    /// The grid: cell advance and line pitch.
    #[serde(serialize_with = "pair")]
    pub advance: (u32, u32),
    pub columns: u32,
    pub lines: bool,
    pub about: &'static str,
}

fn glyph_name<S: serde::Serializer>(g: &FontKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match g {
        FontKind::Bitmap => "bitmap",
        FontKind::Outline => "outline",
    })
}

fn pair<S: serde::Serializer>(p: &(u32, u32), s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}x{}", p.0, p.1))
}

const fn shape(
    name: &'static str,
    glyph: FontKind,
    cell: (u32, u32),
    advance: (u32, u32),
    columns: u32,
    lines: bool,
    about: &'static str,
) -> PageShape {
    PageShape {
        name,
        glyph,
        cell,
        advance,
        columns,
        lines,
        about,
    }
}

pub const SHAPES: &[PageShape] = &[
    shape(
        "bitmap-5x8",
        FontKind::Bitmap,
        (5, 8),
        (5, 8),
        1,
        false,
        "the densest: 5x8 bitmap cells, text as one stream (pages decode back exactly)",
    ),
    shape(
        "bitmap-6x12",
        FontKind::Bitmap,
        (6, 12),
        (6, 12),
        1,
        false,
        "6x12 bitmap cells (Spleen), one stream",
    ),
    shape(
        "bitmap-6x12-lines",
        FontKind::Bitmap,
        (6, 12),
        (6, 12),
        3,
        true,
        "6x12 bitmap cells, each source line on its own row, three columns (code keeps its structure)",
    ),
    shape(
        "bitmap-5x8-two-columns",
        FontKind::Bitmap,
        (5, 8),
        (5, 8),
        2,
        false,
        "5x8 bitmap cells in two text columns (shorter rows to scan)",
    ),
    shape(
        "outline-7x14",
        FontKind::Outline,
        (7, 14),
        (7, 14),
        1,
        false,
        "DejaVu Sans Mono in 7x14 cells, anti-aliased, one stream",
    ),
    shape(
        "outline-7x13",
        FontKind::Outline,
        (7, 13),
        (7, 13),
        1,
        false,
        "DejaVu Sans Mono in 7x13 cells (a pixel less leading than 7x14), one stream",
    ),
    shape(
        "outline-7x14-lines",
        FontKind::Outline,
        (7, 14),
        (7, 14),
        3,
        true,
        "DejaVu Sans Mono 7x14, each source line on its own row, three columns",
    ),
    shape(
        "outline-8x16",
        FontKind::Outline,
        (8, 16),
        (8, 16),
        1,
        false,
        "DejaVu Sans Mono in 8x16 cells",
    ),
    shape(
        "8x13-on-11x16",
        FontKind::Outline,
        (8, 13),
        (11, 16),
        2,
        true,
        "8x13 glyphs on an 11-pixel advance and 16-pixel pitch, by lines, two columns (oh-my-pi's geometry for \
         Claude)",
    ),
    shape(
        "8x13-on-8x22",
        FontKind::Outline,
        (8, 13),
        (8, 22),
        3,
        true,
        "8x13 glyphs on a 22-pixel pitch, by lines, three columns (oh-my-pi's geometry for Gemini and GPT)",
    ),
];

pub fn by_name(name: &str) -> Option<&'static PageShape> {
    SHAPES.iter().find(|s| s.name == name)
}

/// The names, for a message that lists them.
pub fn names() -> String {
    SHAPES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

impl PageShape {
    /// Sets `o` to draw this shape (the profile stays the caller's).
    pub fn apply(&self, o: &mut Options) {
        o.font = self.glyph;
        o.cell = self.cell;
        o.advance = Some(self.advance);
        o.columns = self.columns;
        o.lines = self.lines;
    }
}

/// The shape a model reads by default: its family's (see [`crate::models::pages`] for the evidence), else the family of
/// today's high-resolution Claude models. Overridden by the settings file (`"shape"`) and `--shape NAME`.
pub fn for_model(model: &str) -> &'static PageShape {
    by_name(crate::models::pages::pages_or_default(model).shape).unwrap_or(&SHAPES[0])
}

/// The page profile a model's images are billed and resized by: its family's, else the high-resolution Claude
/// page. Overridden by the settings file (`"profile"`).
pub fn profile_for_model(model: &str) -> &'static super::Profile {
    super::profile::by_name(crate::models::pages::pages_or_default(model).profile)
        .unwrap_or(&super::PROFILES[0])
}

/// A shape's density on a text: what its pages would cost, measured without drawing them.
#[derive(Debug, Clone, Serialize)]
pub struct Density {
    pub shape: &'static str,
    pub pages: usize,
    pub image_tokens: u64,
    pub chars_per_image_token: f64,
    /// The text tokens the pages replace over their image tokens (None without image tokens).
    pub text_per_image_token: Option<f64>,
}

/// Every shape's density on `sources` drawn on `profile`'s pages.
pub fn densities(sources: &[super::SourceText], profile: &'static super::Profile) -> Vec<Density> {
    let chars: usize = sources.iter().map(|s| s.text.chars().count()).sum();
    let text_tokens: u64 = sources.iter().map(|s| crate::tokens::text(&s.text)).sum();
    SHAPES
        .iter()
        .map(|sh| {
            let mut o = Options::new(profile);
            sh.apply(&mut o);
            let e = super::measure(sources, &o);
            Density {
                shape: sh.name,
                pages: e.pages,
                image_tokens: e.image_tokens,
                chars_per_image_token: if e.image_tokens > 0 {
                    chars as f64 / e.image_tokens as f64
                } else {
                    0.0
                },
                text_per_image_token: (e.image_tokens > 0)
                    .then(|| text_tokens as f64 / e.image_tokens as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_read_their_family_s_pages() {
        for f in crate::models::pages::PAGES {
            assert!(by_name(f.shape).is_some(), "{}", f.name);
            assert!(
                super::super::profile::by_name(f.profile).is_some(),
                "{}",
                f.name
            );
        }
        assert_eq!(profile_for_model("claude-sonnet-4-5").name, "claude");
        assert_eq!(profile_for_model("llama-3").name, "claude-hires");
        assert_eq!(for_model("gpt-5.5").name, "outline-8x16");
    }
}
