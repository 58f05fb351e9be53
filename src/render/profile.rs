//! Page profiles per provider, in one table: the page size the provider never resamples, how it bills an image,
//! and its byte and count limits. Figures from the providers' vision docs (late 2026); when a provider changes
//! them, this table is the one place to edit.

use serde::Serialize;

/// How a provider turns an image's size into input tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TokenFormula {
    /// Anthropic: ⌈w/28⌉ × ⌈h/28⌉.
    Patches { size: u32 },
    /// OpenAI patch models: ⌈⌈w/32⌉ × ⌈h/32⌉ × multiplier⌉.
    ScaledPatches { size: u32, multiplier: f64 },
    /// Gemini 2.x: 258 per 768-px tile (258 flat for images up to 384 px).
    Tiles { size: u32, per_tile: u32 },
}

impl TokenFormula {
    pub fn tokens(&self, w: u32, h: u32) -> u64 {
        match *self {
            TokenFormula::Patches { size } => {
                u64::from(w.div_ceil(size)) * u64::from(h.div_ceil(size))
            }
            TokenFormula::ScaledPatches { size, multiplier } => {
                let p = u64::from(w.div_ceil(size)) * u64::from(h.div_ceil(size));
                (p as f64 * multiplier).ceil() as u64
            }
            TokenFormula::Tiles { size, per_tile } => {
                if w <= 384 && h <= 384 {
                    u64::from(per_tile)
                } else {
                    u64::from(w.div_ceil(size)) * u64::from(h.div_ceil(size)) * u64::from(per_tile)
                }
            }
        }
    }

    /// The pixel multiple a cropped page keeps, so cropping never adds a partial patch or tile of waste.
    pub fn align(&self) -> u32 {
        match *self {
            TokenFormula::Patches { size } | TokenFormula::ScaledPatches { size, .. } => size,
            TokenFormula::Tiles { size, .. } => size,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub name: &'static str,
    pub provider: &'static str,
    /// The largest page the provider takes without resampling.
    pub width: u32,
    pub height: u32,
    pub formula: TokenFormula,
    /// Per image, raw PNG bytes (base64 adds a third on the wire).
    pub max_image_bytes: usize,
    /// Per request, raw bytes of all pages.
    pub max_request_bytes: usize,
    pub max_images: usize,
    /// The default cell (a bitmap font exists for 5×8 and 6×12).
    pub cell: (u32, u32),
    pub note: &'static str,
}

impl Profile {
    pub fn tokens(&self, w: u32, h: u32) -> u64 {
        self.formula.tokens(w, h)
    }
}

/// 10 MB base64 per image on the Claude API ≈ 7.5 MB raw; 32 MB per request ≈ 24 MB raw.
const CLAUDE_IMAGE: usize = 7_500_000;
const CLAUDE_REQUEST: usize = 24_000_000;

pub const PROFILES: &[Profile] = &[
    Profile {
        name: "claude-hires",
        provider: "anthropic",
        width: 2576,
        height: 1456,
        formula: TokenFormula::Patches { size: 28 },
        max_image_bytes: CLAUDE_IMAGE,
        max_request_bytes: CLAUDE_REQUEST,
        // more than 20 images force every image to <= 2000 px: use claude-many past that
        max_images: 20,
        cell: (5, 8),
        note: "Opus 4.7+/Fable 5/Mythos 5: 92x52 patches = 4784 tokens, the high-resolution cap",
    },
    Profile {
        name: "claude",
        provider: "anthropic",
        width: 1372,
        height: 896,
        formula: TokenFormula::Patches { size: 28 },
        max_image_bytes: CLAUDE_IMAGE,
        max_request_bytes: CLAUDE_REQUEST,
        max_images: 100,
        cell: (5, 8),
        note: "other Claude models: 49x32 patches = 1568 tokens, the standard cap",
    },
    Profile {
        name: "claude-many",
        provider: "anthropic",
        width: 1988,
        height: 1876,
        formula: TokenFormula::Patches { size: 28 },
        max_image_bytes: CLAUDE_IMAGE,
        max_request_bytes: CLAUDE_REQUEST,
        max_images: 100,
        cell: (5, 8),
        note: "requests with more than 20 images (each side <= 2000 px): 71x67 patches = 4757 tokens",
    },
    Profile {
        name: "openai",
        provider: "openai",
        width: 2048,
        height: 1248,
        formula: TokenFormula::ScaledPatches {
            size: 32,
            multiplier: 1.2,
        },
        max_image_bytes: 20_000_000,
        max_request_bytes: 400_000_000,
        max_images: 1500,
        cell: (6, 12),
        note: "GPT-5.4/5.5 detail=high: <= 2048 px and <= 2500 patches (64x39 = 2496, billed x1.2)",
    },
    Profile {
        name: "gemini",
        provider: "google",
        width: 2304,
        height: 1536,
        formula: TokenFormula::Tiles {
            size: 768,
            per_tile: 258,
        },
        max_image_bytes: 7_000_000,
        max_request_bytes: 20_000_000,
        max_images: 900,
        cell: (6, 12),
        note: "Gemini 2.x: 3x2 native 768-px tiles x 258 tokens (Gemini 3 resamples every image to a budget)",
    },
];

pub fn by_name(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_pages_cost_what_the_docs_say() {
        let t = |n: &str| {
            let p = by_name(n).unwrap();
            p.tokens(p.width, p.height)
        };
        assert_eq!(t("claude-hires"), 4784);
        assert_eq!(t("claude"), 1568);
        assert_eq!(t("claude-many"), 4757);
        assert_eq!(t("openai"), 2996);
        assert_eq!(t("gemini"), 1548);
        assert_eq!(TokenFormula::Patches { size: 28 }.tokens(200, 200), 64);
        assert_eq!(TokenFormula::Patches { size: 28 }.tokens(1000, 1000), 1296);
    }
}
