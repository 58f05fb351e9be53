//! The pages each model family reads snapshots in: the profile its images are billed and resized by and the
//! shape of glyphs it reads best, with the evidence each was chosen by. Names only: the renderer
//! ([`crate::render::shape`]) draws them; here is where a model is matched to them, beside every other fact
//! about a model.

use serde::Serialize;

/// A model family's pages: the profile its images are billed and resized by, and the shape it reads by default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pages {
    /// The model family's name ([`super::Family::name`]).
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

pub const PAGES: &[Pages] = &[
    Pages {
        name: "claude-hires",
        profile: "claude-hires",
        shape: "outline-7x13",
        why: CLAUDE_WHY,
    },
    Pages {
        name: "claude",
        profile: "claude",
        shape: "outline-7x13",
        why: CLAUDE_WHY,
    },
    Pages {
        name: "gpt",
        profile: "openai",
        shape: "outline-8x16",
        why: TALL_WHY,
    },
    Pages {
        name: "gemini",
        profile: "gemini",
        shape: "outline-8x16",
        why: TALL_WHY,
    },
];

/// The pages of a model's family, if cairn has measured them for it.
pub fn pages_of(model: &str) -> Option<&'static Pages> {
    let name = super::family(model).name();
    PAGES.iter().find(|f| f.name == name)
}

/// The pages a model reads: its family's, else those of today's high-resolution Claude models (the first).
pub fn pages_or_default(model: &str) -> &'static Pages {
    pages_of(model).unwrap_or(&PAGES[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_find_their_family_s_pages() {
        assert_eq!(
            pages_of("claude-opus-4-7").map(|f| f.name),
            Some("claude-hires")
        );
        assert_eq!(
            pages_of("claude-sonnet-4-5-20250929").map(|f| f.name),
            Some("claude")
        );
        assert_eq!(pages_of("gpt-5.5").map(|f| f.name), Some("gpt"));
        assert_eq!(pages_of("gemini-2.5-pro").map(|f| f.name), Some("gemini"));
        assert_eq!(pages_of("llama-3"), None);
    }
}
