//! Token estimates, so budgets (resume trimming, compaction thresholds, /context) are set in the unit providers
//! bill. Text is classified by kind first, because characters per token differ a lot: English prose tokenises
//! near 4 characters a token, code and JSON nearer 3, base64 near 1.4, CJK near one character a token.
//! [`calibrate`] fits the estimate to what providers measured on imported transcripts (input + cache tokens per
//! reply): a per-model scale and a fixed overhead (the system prompt and tool definitions a harness sends but does
//! not record).

use serde::Serialize;

use crate::model::{Block, ImageData, Message, ToolResultContent};

/// Fixed cost of a message's framing (role markers and separators).
pub const MESSAGE_OVERHEAD: u64 = 4;
/// Estimate for an image whose size is unknown here (a full-resolution Claude image is about 1,600 tokens).
pub const IMAGE_TOKENS: u64 = 1_600;
/// Claude's patch rule for a stored image (the high-resolution tier, as the snapshot pages use): 28-px
/// patches, a long edge of at most 2576 px and at most 4784 patches; a larger image is scaled down to fit both.
const PATCH: f64 = 28.0;
const MAX_EDGE: f64 = 2576.0;
const MAX_PATCHES: f64 = 4784.0;

/// An image's pixel size read from its header, if the format is known.
pub fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let s = imagesize::blob_size(bytes).ok()?;
    Some((u32::try_from(s.width).ok()?, u32::try_from(s.height).ok()?))
}

/// Tokens for an image of this size: `ceil(w/28) * ceil(h/28)` after scaling down to the limits.
pub fn image_tokens(width: u32, height: u32) -> u64 {
    let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let patches = |w: f64, h: f64| (w / PATCH).ceil() * (h / PATCH).ceil();
    let mut scale = (MAX_EDGE / w.max(h)).min(1.0);
    // shrink until the patch count fits (the area ratio gets close; a few steps finish it)
    while patches(w * scale, h * scale) > MAX_PATCHES {
        scale *= (MAX_PATCHES / patches(w * scale, h * scale))
            .sqrt()
            .min(0.999);
    }
    patches((w * scale).floor().max(1.0), (h * scale).floor().max(1.0)) as u64
}

/// What a piece of text is, for the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextKind {
    Prose,
    Code,
    Json,
    Base64,
    Cjk,
}

impl TextKind {
    /// Characters per token for ASCII-range text of this kind.
    fn chars_per_token(self) -> f64 {
        match self {
            TextKind::Prose => 4.0,
            TextKind::Code => 3.2,
            TextKind::Json => 2.9,
            TextKind::Base64 => 1.4,
            TextKind::Cjk => 1.0,
        }
    }
}

/// Classifies text by a sample of its characters.
pub fn classify(s: &str) -> TextKind {
    let sample: Vec<char> = s.chars().take(4096).collect();
    let n = sample.len().max(1) as f64;
    let cjk = sample.iter().filter(|c| is_cjk(**c)).count() as f64;
    if cjk / n > 0.3 {
        return TextKind::Cjk;
    }
    let t = s.trim_start();
    if (t.starts_with('{') || t.starts_with('['))
        && sample.iter().filter(|c| **c == '"').count() as f64 / n > 0.04
    {
        return TextKind::Json;
    }
    let b64 = sample
        .iter()
        .filter(|c| c.is_ascii_alphanumeric() || **c == '+' || **c == '/' || **c == '=')
        .count() as f64;
    let spaces = sample.iter().filter(|c| c.is_whitespace()).count() as f64;
    if sample.len() > 64 && b64 / n > 0.97 && spaces / n < 0.01 {
        return TextKind::Base64;
    }
    let symbols = sample
        .iter()
        .filter(|c| "{}[]();=<>_*&|\\/#$`".contains(**c))
        .count() as f64;
    if symbols / n > 0.035 {
        return TextKind::Code;
    }
    TextKind::Prose
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Tokens of a piece of text.
pub fn text(s: &str) -> u64 {
    if s.is_empty() {
        return 0;
    }
    let kind = classify(s);
    let mut ascii = 0u64;
    let mut wide = 0u64;
    for c in s.chars() {
        if (c as u32) < 0x2E80 {
            ascii += 1;
        } else {
            wide += 1;
        }
    }
    (ascii as f64 / kind.chars_per_token()).ceil() as u64 + wide
}

/// What a block is, for a breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    Text,
    ToolUse,
    ToolResult,
    Image,
    Thinking,
    Other,
}

pub fn block_kind(b: &Block) -> BlockKind {
    match b {
        Block::Text { .. } => BlockKind::Text,
        Block::Thinking { .. } => BlockKind::Thinking,
        Block::ToolUse { .. } => BlockKind::ToolUse,
        Block::ToolResult { .. } => BlockKind::ToolResult,
        Block::Image { .. } => BlockKind::Image,
        Block::Other(_) => BlockKind::Other,
    }
}

pub fn block(b: &Block) -> u64 {
    match b {
        Block::Text { text: t } => text(t),
        Block::Thinking { thinking, .. } => text(thinking),
        Block::ToolUse { name, input, .. } => text(name) + text(&input.to_string()) + 8,
        Block::ToolResult { content, .. } => {
            8 + match content {
                ToolResultContent::Text(t) => text(t),
                ToolResultContent::Blocks(bs) => bs.iter().map(block).sum(),
            }
        }
        Block::Image { data, .. } => {
            let size = match data {
                ImageData::Bytes(b) => image_size(b),
                ImageData::Blob { size, .. } => *size,
            };
            size.map_or(IMAGE_TOKENS, |(w, h)| image_tokens(w, h))
        }
        Block::Other(v) => text(&v.to_string()),
    }
}

/// Estimated input tokens of one message.
pub fn message(m: &Message) -> u64 {
    blocks(&m.content)
}

/// Estimated input tokens of a message with these blocks.
pub fn blocks(content: &[Block]) -> u64 {
    MESSAGE_OVERHEAD + content.iter().map(block).sum::<u64>()
}

/// A fitted correction: measured ≈ overhead + scale × estimate (the overhead is the mean over sessions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correction {
    pub overhead: f64,
    pub scale: f64,
}

impl Default for Correction {
    fn default() -> Self {
        Correction {
            overhead: 0.0,
            scale: 1.0,
        }
    }
}

impl Correction {
    pub fn apply(&self, estimate: u64) -> u64 {
        (self.overhead + self.scale * estimate as f64)
            .max(0.0)
            .round() as u64
    }
}

/// One point to fit: the estimate of the context a reply saw, and what the provider measured for it. `group`
/// names the session: each session has its own fixed overhead (its system prompt and tools).
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub estimate: u64,
    pub measured: u64,
    pub group: u32,
}

/// The fit and its quality: median absolute percentage error before (raw estimate) and after.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub model: String,
    pub samples: usize,
    pub correction: Correction,
    pub error_before: f64,
    pub error_after: f64,
}

fn median_abs_pct(samples: &[Sample], predict: &dyn Fn(&Sample) -> f64) -> f64 {
    let mut errs: Vec<f64> = samples
        .iter()
        .filter(|s| s.measured > 0)
        .map(|s| ((predict(s) - s.measured as f64) / s.measured as f64).abs() * 100.0)
        .collect();
    if errs.is_empty() {
        return 0.0;
    }
    errs.sort_by(f64::total_cmp);
    errs[errs.len() / 2]
}

/// Fits `measured ≈ overhead(session) + scale × estimate`: one scale per model (least squares within sessions)
/// and one overhead per session (its system prompt and tool definitions, which transcripts do not record). Reports
/// the median absolute error of the raw estimate and of the fit.
pub fn calibrate(model: &str, samples: &[Sample]) -> Calibration {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<u32, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        groups.entry(s.group).or_default().push(s);
    }
    let means: BTreeMap<u32, (f64, f64)> = groups
        .iter()
        .map(|(g, v)| {
            let n = v.len() as f64;
            (
                *g,
                (
                    v.iter().map(|s| s.estimate as f64).sum::<f64>() / n,
                    v.iter().map(|s| s.measured as f64).sum::<f64>() / n,
                ),
            )
        })
        .collect();
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for s in samples {
        let (mx, my) = means[&s.group];
        sxx += (s.estimate as f64 - mx).powi(2);
        sxy += (s.estimate as f64 - mx) * (s.measured as f64 - my);
    }
    let scale = if sxx > 0.0 { (sxy / sxx).max(0.1) } else { 1.0 };
    let overheads: BTreeMap<u32, f64> = means
        .iter()
        .map(|(g, (mx, my))| (*g, my - scale * mx))
        .collect();
    let overhead = if overheads.is_empty() {
        0.0
    } else {
        overheads.values().sum::<f64>() / overheads.len() as f64
    };
    Calibration {
        model: model.to_string(),
        samples: samples.len(),
        error_before: median_abs_pct(samples, &|s| s.estimate as f64),
        error_after: median_abs_pct(samples, &|s| {
            overheads[&s.group] + scale * s.estimate as f64
        }),
        correction: Correction { overhead, scale },
    }
}

/// The calibration samples of a path: at each assistant reply with measured usage, the estimate of everything
/// before it against the measured input (input + cache read + cache write). Grouped by the reply's model.
pub fn samples_of_path(path: &[Message], group: u32) -> Vec<(String, Sample)> {
    let mut out = Vec::new();
    let mut running = 0u64;
    for m in path {
        if let Some(u) = m.usage {
            let measured =
                u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
            if measured > 0 {
                out.push((
                    model_of(m),
                    Sample {
                        estimate: running,
                        measured,
                        group,
                    },
                ));
            }
        }
        running += message(m);
    }
    out
}

/// The model a reply came from, from its source metadata ("unknown" when not recorded).
pub fn model_of(m: &Message) -> String {
    let meta = &m.meta;
    let found = meta
        .get("lines")
        .and_then(|l| l.get(0))
        .and_then(|l| l.get("message"))
        .and_then(|msg| msg.get("model"))
        .or_else(|| {
            meta.get("entry")
                .and_then(|e| e.get("message"))
                .and_then(|msg| msg.get("model"))
        })
        .or_else(|| meta.get("model"))
        .and_then(serde_json::Value::as_str);
    found.unwrap_or("unknown").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_cost_claude_patches_by_their_size() {
        // the vendor's worked examples (high-resolution tier)
        assert_eq!(image_tokens(200, 200), 64);
        assert_eq!(image_tokens(1000, 1000), 1296);
        assert_eq!(image_tokens(1920, 1080), 2691);
        assert_eq!(image_tokens(2576, 1456), 4784);
        // larger images are scaled down to the caps
        assert_eq!(image_tokens(3840, 2160), 4784); // → 2576x1449
        assert!(image_tokens(8000, 8000) <= 4784);
        assert_eq!(image_tokens(0, 0), 1);
        // the size is read from the header: a stored image no longer costs a flat estimate
        let mut png = Vec::new();
        {
            let mut e = ::png::Encoder::new(&mut png, 300, 100);
            e.set_color(::png::ColorType::Grayscale);
            let mut w = e.write_header().unwrap();
            w.write_image_data(&[0u8; 300 * 100]).unwrap();
        }
        assert_eq!(image_size(&png), Some((300, 100)));
        let img = Block::Image {
            media_type: "image/png".into(),
            data: ImageData::Bytes(png),
        };
        assert_eq!(block(&img), 11 * 4);
        let unknown = Block::Image {
            media_type: "image/png".into(),
            data: ImageData::Blob {
                hash: "00".into(),
                size: None,
            },
        };
        assert_eq!(block(&unknown), IMAGE_TOKENS);
    }

    #[test]
    fn text_kinds_are_told_apart_and_priced_differently() {
        let prose =
            "The quick brown fox jumps over the lazy dog and keeps running into the forest.";
        let code = "fn main() { let x = vec![1, 2, 3]; for i in &x { println!(\"{}\", i); } }";
        let json = r#"{"name": "cairn", "version": "0.1.0", "deps": ["a", "b"], "ok": true}"#;
        let b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        assert_eq!(classify(prose), TextKind::Prose);
        assert_eq!(classify(code), TextKind::Code);
        assert_eq!(classify(json), TextKind::Json);
        assert_eq!(classify(b64), TextKind::Base64);
        assert_eq!(classify("日本語のテキストです"), TextKind::Cjk);
        assert_eq!(text(""), 0);
        assert_eq!(text("日本語"), 3);
        // same length, base64 costs far more than prose
        assert!(text(b64) > 2 * text(&prose[..b64.len().min(prose.len())]));
    }

    #[test]
    fn calibration_fits_offset_and_scale() {
        let mut samples: Vec<Sample> = (1..20)
            .map(|i| Sample {
                estimate: i * 1000,
                measured: 15_000 + i * 1100,
                group: 0,
            })
            .collect();
        // a second session with its own, larger system prompt
        samples.extend((1..20).map(|i| Sample {
            estimate: i * 900,
            measured: 30_000 + i * 990,
            group: 1,
        }));
        let c = calibrate("m", &samples);
        assert!(c.error_before > 50.0);
        assert!(c.error_after < 0.5, "{}", c.error_after);
        assert!((c.correction.scale - 1.1).abs() < 0.01);
        assert!(
            (c.correction.overhead - 22_500.0).abs() < 50.0,
            "{:?}",
            c.correction
        );
    }
}
