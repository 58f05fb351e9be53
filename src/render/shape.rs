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

/// A model family's pages: the profile its images are billed and resized by, and the shape it reads by default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Family {
    /// The model family's name ([`crate::models::Family::name`]: which models are of it is the models module's
    /// to say).
    pub name: &'static str,
    pub profile: &'static str,
    pub shape: &'static str,
    /// The evidence the shape was chosen by.
    pub why: &'static str,
}

/// Why Claude reads `outline-7x13` (the README's legibility table, `scripts/legibility`).
const CLAUDE_WHY: &str = "outline-7x13 is the only measured shape that meets both goals: real prose reads back at \
98.5% (tesseract) / 98.6% (PaddleOCR) at 8.51 characters per image token (goal: 98% at 8), real tool output at \
92.1% / 97.9% (goal: 90% / 95% at 6). The 5x8 bitmap holds 19.6 but loses 6-8% of prose and 15-18% of tool \
output to both readers, and oh-my-pi's recall evaluations with Claude found dense cells abstained on (F1 0.35 for a \
dense 6x12 cell) where DejaVu-like glyphs read well (0.76; 0.81 with extra tracking at 40% less density: shape \
8x13-on-11x16)";

/// Why GPT and Gemini read `outline-8x16`.
const TALL_WHY: &str = "oh-my-pi's recall evaluations found GPT and Gemini read best with extra leading (8x13 \
glyphs on a 22-pixel pitch); of the measured shapes outline-8x16 reads best with both offline readers (tool output \
94.1% tesseract, 98.8% PaddleOCR; prose 98.7% / 98.7%) and still holds 6.4 characters per image token on OpenAI's \
page and 17 on Gemini's (a real session's middle)";

pub const FAMILIES: &[Family] = &[
    Family {
        name: "claude-hires",
        profile: "claude-hires",
        shape: "outline-7x13",
        why: CLAUDE_WHY,
    },
    Family {
        name: "claude",
        profile: "claude",
        shape: "outline-7x13",
        why: CLAUDE_WHY,
    },
    Family {
        name: "gpt",
        profile: "openai",
        shape: "outline-8x16",
        why: TALL_WHY,
    },
    Family {
        name: "gemini",
        profile: "gemini",
        shape: "outline-8x16",
        why: TALL_WHY,
    },
];

/// The pages of a model's family, if cairn has measured them for it.
pub fn family_of(model: &str) -> Option<&'static Family> {
    let name = crate::models::family(model).name();
    FAMILIES.iter().find(|f| f.name == name)
}

/// The shape a model reads by default: its family's (see [`FAMILIES`] for the evidence), else the family of
/// today's high-resolution Claude models. Overridden by the settings file (`"shape"`) and `--shape NAME`.
pub fn for_model(model: &str) -> &'static PageShape {
    family_of(model)
        .or_else(|| FAMILIES.first())
        .and_then(|f| by_name(f.shape))
        .unwrap_or(&SHAPES[0])
}

/// The page profile a model's images are billed and resized by: its family's, else the high-resolution Claude
/// page. Overridden by the settings file (`"profile"`).
pub fn profile_for_model(model: &str) -> &'static super::Profile {
    family_of(model)
        .and_then(|f| super::profile::by_name(f.profile))
        .unwrap_or(&super::PROFILES[0])
}

/// A shape's density on a text: what its pages would cost, measured without drawing them.
#[derive(Debug, Clone, Serialize)]
pub struct Density {
    pub shape: &'static str,
    pub pages: usize,
    pub image_tokens: u64,
    pub chars_per_image_token: f64,
}

/// Every shape's density on `sources` drawn on `profile`'s pages.
pub fn densities(sources: &[super::Source], profile: &'static super::Profile) -> Vec<Density> {
    let chars: usize = sources.iter().map(|s| s.text.chars().count()).sum();
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
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_names_a_shape_and_a_profile_that_exist() {
        for f in FAMILIES {
            assert!(by_name(f.shape).is_some(), "{}", f.name);
            assert!(
                super::super::profile::by_name(f.profile).is_some(),
                "{}",
                f.name
            );
        }
    }

    #[test]
    fn models_find_their_family_by_the_longest_prefix() {
        assert_eq!(
            family_of("claude-opus-4-7").map(|f| f.name),
            Some("claude-hires")
        );
        assert_eq!(
            family_of("claude-sonnet-4-5-20250929").map(|f| f.name),
            Some("claude")
        );
        assert_eq!(family_of("gpt-5.5").map(|f| f.name), Some("gpt"));
        assert_eq!(family_of("gemini-2.5-pro").map(|f| f.name), Some("gemini"));
        assert_eq!(family_of("llama-3"), None);
        assert_eq!(profile_for_model("claude-sonnet-4-5").name, "claude");
        assert_eq!(profile_for_model("llama-3").name, "claude-hires");
        assert_eq!(for_model("gpt-5.5").name, "outline-8x16");
    }
}
