//! Token estimates, so budgets (resume trimming, compaction thresholds, /context) are set in the unit providers
//! bill. Text is classified by kind first, because characters per token differ a lot: English prose tokenises
//! near 4 characters a token, code and JSON nearer 3, base64 near 1.4, CJK near one character a token.
//! Each message is measured once when it is stored ([`Measure`]); the reclaim module fits the estimate to what
//! providers measured ([`crate::reclaim::replay`]).

use serde::{Deserialize, Serialize};

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

/// `166,909`: a count as people read it in prose and tables (the readable exports, Copilot's AI credits in
/// `stats`).
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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
    // one pass over the first 4,096 characters, counting every trait at once
    let (mut n, mut cjk, mut quotes, mut b64, mut spaces, mut symbols) =
        (0u32, 0u32, 0u32, 0u32, 0u32, 0u32);
    for c in s.chars().take(4096) {
        n += 1;
        if is_cjk(c) {
            cjk += 1;
        }
        match c {
            '"' => quotes += 1,
            c if c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '=' => b64 += 1,
            c if c.is_whitespace() => spaces += 1,
            _ => {}
        }
        if matches!(
            c,
            '{' | '}'
                | '['
                | ']'
                | '('
                | ')'
                | ';'
                | '='
                | '<'
                | '>'
                | '_'
                | '*'
                | '&'
                | '|'
                | '\\'
                | '/'
                | '#'
                | '$'
                | '`'
        ) {
            symbols += 1;
        }
    }
    let share = |k: u32| f64::from(k) / f64::from(n.max(1));
    if share(cjk) > 0.3 {
        return TextKind::Cjk;
    }
    let t = s.trim_start();
    if (t.starts_with('{') || t.starts_with('[')) && share(quotes) > 0.04 {
        return TextKind::Json;
    }
    if n > 64 && share(b64) > 0.97 && share(spaces) < 0.01 {
        return TextKind::Base64;
    }
    if share(symbols) > 0.035 {
        return TextKind::Code;
    }
    TextKind::Prose
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// How text becomes tokens: cairn's estimate by text kind, or OpenAI's public tokenizer where the model is
/// OpenAI's (exact for those models).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tokenizer {
    Estimate,
    O200k,
}

impl Tokenizer {
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Estimate => "estimate by text kind",
            Tokenizer::O200k => "tiktoken o200k",
        }
    }

    /// Tokens of a piece of text.
    pub fn count(self, s: &str) -> u64 {
        match self {
            Tokenizer::Estimate => text(s),
            Tokenizer::O200k => tiktoken_rs::o200k_base_singleton().count_ordinary(s) as u64,
        }
    }
}

/// Tokens of a piece of text (cairn's estimate).
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
    block_with(b, Tokenizer::Estimate)
}

/// Tokens of a block, its text counted by `tk`.
pub fn block_with(b: &Block, tk: Tokenizer) -> u64 {
    let text = |s: &str| tk.count(s);
    match b {
        Block::Text { text: t } => text(t),
        // thinking goes back to the model only in the provider's own signed form: what no provider signed
        // (Gemini CLI's thoughts, which it keeps out of the history it sends) is never sent again
        Block::Thinking { thinking, .. } if b.is_signed_thinking() => text(thinking),
        Block::Thinking { .. } => 0,
        // the call's id is sent with the call and again with its result
        Block::ToolUse { id, name, input } => {
            text(id) + text(name) + text(&input.to_string()) + RESULT_OVERHEAD
        }
        Block::ToolResult {
            tool_use_id,
            content,
            ..
        } => {
            RESULT_OVERHEAD
                + text(tool_use_id)
                + match content {
                    ToolResultContent::Text(t) => text(t),
                    ToolResultContent::Blocks(bs) => bs.iter().map(|x| block_with(x, tk)).sum(),
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

/// Estimated input tokens of one message's blocks (what a stored reply measures also counts the thinking it hides:
/// [`crate::models::measure`]).
pub fn message(m: &Message) -> u64 {
    blocks(&m.content)
}

/// Estimated input tokens of a message with these blocks.
pub fn blocks(content: &[Block]) -> u64 {
    MESSAGE_OVERHEAD
        + content
            .iter()
            .map(|b| block(b) + tool_refs(b) * TOOL_DEFINITION_TOKENS)
            .sum::<u64>()
}

/// Tool definitions a block loads by reference (`tool_reference` blocks inside a tool result).
fn tool_refs(b: &Block) -> u64 {
    match b {
        Block::ToolResult {
            content: ToolResultContent::Blocks(bs),
            ..
        } => bs
            .iter()
            .filter(|x| {
                matches!(x, Block::Other(v) if v.get("type").and_then(serde_json::Value::as_str) == Some("tool_reference"))
            })
            .count() as u64,
        _ => 0,
    }
}

/// A tool result larger than this many tokens is "large": the statistic [`Measure::large_results`] counts them
/// (the elision rung takes back exactly these, when they succeeded).
pub const LARGE_RESULT_TOKENS: u64 = 50;

/// What a message costs and holds, measured once when it is written and stored beside it, so every figure over a
/// long path (the context breakdown, the rungs' savings, the snapshot's page count, usage statistics) is a sum over
/// stored numbers and no body is decoded for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measure {
    /// Estimated tokens by kind. `tool_result` is the text of results (images inside them count as `image`).
    pub text: u64,
    pub tool_use: u64,
    pub tool_result: u64,
    pub image: u64,
    pub thinking: u64,
    pub other: u64,
    /// Characters of the message's plain text ([`crate::model::plain_text`]): what a snapshot page draws.
    pub chars: u64,
    /// Images, top-level or inside tool results: how many, and their bytes.
    pub images: u64,
    pub image_bytes: u64,
    /// Successful tool results over [`LARGE_RESULT_TOKENS`]: how many, their text tokens, and the images inside
    /// them (count and tokens).
    pub large_results: u64,
    pub large_result_tokens: u64,
    pub large_result_images: u64,
    pub large_result_image_tokens: u64,
    pub large_result_image_bytes: u64,
    /// Characters those results add to the plain text (what a snapshot of an elided message does not draw).
    pub large_result_chars: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    /// Tool definitions a tool result loads into the request (Claude Code's `tool_reference` blocks, answering a
    /// ToolSearch for deferred tools).
    pub tool_refs: u64,
}

impl Measure {
    /// How many numbers a measure holds.
    pub const FIELDS: usize = 18;

    /// Its numbers in the order of its fields (the order serde writes them in): how a measure is kept compactly.
    pub fn numbers(&self) -> [u64; Self::FIELDS] {
        [
            self.text,
            self.tool_use,
            self.tool_result,
            self.image,
            self.thinking,
            self.other,
            self.chars,
            self.images,
            self.image_bytes,
            self.large_results,
            self.large_result_tokens,
            self.large_result_images,
            self.large_result_image_tokens,
            self.large_result_image_bytes,
            self.large_result_chars,
            self.tool_calls,
            self.tool_errors,
            self.tool_refs,
        ]
    }

    /// A measure from its numbers in the order of its fields ([`Measure::numbers`]).
    pub fn from_numbers(n: [u64; Self::FIELDS]) -> Measure {
        Measure {
            text: n[0],
            tool_use: n[1],
            tool_result: n[2],
            image: n[3],
            thinking: n[4],
            other: n[5],
            chars: n[6],
            images: n[7],
            image_bytes: n[8],
            large_results: n[9],
            large_result_tokens: n[10],
            large_result_images: n[11],
            large_result_image_tokens: n[12],
            large_result_image_bytes: n[13],
            large_result_chars: n[14],
            tool_calls: n[15],
            tool_errors: n[16],
            tool_refs: n[17],
        }
    }

    /// The message's estimated input tokens (its framing, and the tool definitions it loads, included).
    pub fn tokens(&self) -> u64 {
        MESSAGE_OVERHEAD + self.content_tokens() + self.tool_refs * TOOL_DEFINITION_TOKENS
    }

    /// Tokens of the blocks alone.
    pub fn content_tokens(&self) -> u64 {
        self.text + self.tool_use + self.tool_result + self.image + self.thinking + self.other
    }
}

/// Measures a message's blocks (cairn's estimate).
pub fn measure(content: &[Block]) -> Measure {
    measure_with(content, Tokenizer::Estimate)
}

/// Measures a message's blocks, their text counted by `tk`.
pub fn measure_with(content: &[Block], tk: Tokenizer) -> Measure {
    let block = |b: &Block| block_with(b, tk);
    let text = |s: &str| tk.count(s);
    let mut m = Measure {
        chars: crate::model::plain_text(content).chars().count() as u64,
        ..Measure::default()
    };
    for b in content {
        match b {
            Block::Text { text: t } => m.text += text(t),
            Block::Thinking { .. } => m.thinking += block(b),
            Block::ToolUse { .. } => {
                m.tool_use += block(b);
                m.tool_calls += 1;
            }
            Block::ToolResult { is_error, .. } => {
                // the result's text with its framing and id; images inside it count as images
                let pictures: u64 = b.images().into_iter().map(block).sum();
                let bytes: u64 = b.images().into_iter().map(image_bytes).sum();
                let n = b.images().len() as u64;
                let words = block(b).saturating_sub(pictures);
                m.tool_refs += tool_refs(b);
                m.tool_result += words;
                m.image += pictures;
                m.images += n;
                m.image_bytes += bytes;
                if *is_error {
                    m.tool_errors += 1;
                } else if words + pictures > LARGE_RESULT_TOKENS {
                    m.large_results += 1;
                    m.large_result_tokens += words;
                    m.large_result_images += n;
                    m.large_result_image_tokens += pictures;
                    m.large_result_image_bytes += bytes;
                    m.large_result_chars +=
                        crate::model::block_plain_text(b).chars().count() as u64;
                }
            }
            Block::Image { .. } => {
                m.image += block(b);
                m.images += 1;
                m.image_bytes += image_bytes(b);
            }
            Block::Other(v) => m.other += text(&v.to_string()),
        }
    }
    m
}

/// Measures a reply's blocks, its hidden thinking included: signed thinking is sent back to the provider with later
/// requests and counted there whole, whatever the transcript shows of it: nothing (Claude Code writes
/// `"thinking": ""` where the model's thinking is not shown, as with Opus 4.7), or a summary (GitHub Copilot's
/// `reasoningOpaque` carries the whole reasoning while opencode shows its summary; replayed, that session's
/// prompts follow the whole reasoning, not the summary). Its size is what the provider measured the reply to write
/// (its output tokens) less what the reply shows, counted as thinking; nothing more when no thinking block is
/// signed, when what it shows is as large, when the usage sums several requests, or when nothing was measured. `scale` is the model's provider
/// tokens per estimated token (its default scale): the measured output is brought to the estimate's unit, as
/// everything else measured is.
pub fn measure_reply(
    content: &[Block],
    usage: Option<&crate::model::Usage>,
    tk: Tokenizer,
    scale: f64,
) -> Measure {
    let mut m = measure_with(content, tk);
    m.thinking += hidden_thinking(content, usage, &m, scale);
    m
}

/// The thinking tokens a reply holds but does not show ([`measure_reply`]), in the estimate's unit; `shown` is its
/// measure without them.
pub fn hidden_thinking(
    content: &[Block],
    usage: Option<&crate::model::Usage>,
    shown: &Measure,
    scale: f64,
) -> u64 {
    let hidden = content.iter().any(Block::is_signed_thinking);
    match usage {
        Some(u) if hidden && u.is_one_request() && u.output_tokens > 0 => {
            let written = (u.output_tokens as f64 / scale.max(0.1)).round() as u64;
            written.saturating_sub(shown.text + shown.tool_use + shown.thinking + shown.other)
        }
        _ => 0,
    }
}

/// The bytes of an image block held inline (a stored image's bytes are measured before it is stored).
fn image_bytes(b: &Block) -> u64 {
    match b {
        Block::Image {
            data: ImageData::Bytes(bytes),
            ..
        } => bytes.len() as u64,
        _ => 0,
    }
}

/// What a tool definition loaded by reference adds to a request, on average (a name, a description and a JSON
/// schema), before the model's scale: the prior until a session's measurements say more. Claude Code's tool search
/// documents a definition at 200–800 tokens and ~90k tokens for 147 deferred tool schemas (~610 each); the
/// replayed sessions agree once a reply's hidden thinking is counted (nine definitions loaded, ~7.1k tokens
/// together). The earlier 1.4k was measured with that thinking taken for definitions.
pub const TOOL_DEFINITION_TOKENS: u64 = 600;

/// Framing of a tool call or a tool result block (ids, names, markers).
const RESULT_OVERHEAD: u64 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_thinking_counts_what_the_reply_wrote_not_what_it_shows() {
        let usage = crate::model::Usage {
            input_tokens: 900,
            output_tokens: 2_000,
            ..Default::default()
        };
        let summary = "Checked the queue; the notify comes before the lock.";
        let reply = |signature: Option<&str>| {
            vec![
                Block::Thinking {
                    thinking: summary.into(),
                    signature: signature.map(str::to_string),
                },
                Block::text("Take the lock first."),
            ]
        };
        // a summary with the provider's whole reasoning beside it (Copilot's reasoningOpaque, a signature)
        let signed = measure_reply(
            &reply(Some("opaque")),
            Some(&usage),
            Tokenizer::Estimate,
            1.0,
        );
        assert_eq!(signed.thinking + signed.text, 2_000, "{signed:?}");
        // scaled to the estimate's unit
        let scaled = measure_reply(
            &reply(Some("opaque")),
            Some(&usage),
            Tokenizer::Estimate,
            2.0,
        );
        assert_eq!(scaled.thinking + scaled.text, 1_000, "{scaled:?}");
        // unsigned, nothing else was sent back: what it shows
        let shown = measure_reply(&reply(None), Some(&usage), Tokenizer::Estimate, 1.0);
        assert_eq!(shown, measure(&reply(None)));
        // a sum of requests is no reply's measure
        let summed = crate::model::Usage {
            requests: 3,
            ..usage
        };
        let sum = measure_reply(
            &reply(Some("opaque")),
            Some(&summed),
            Tokenizer::Estimate,
            1.0,
        );
        assert_eq!(sum, measure(&reply(Some("opaque"))));
    }

    #[test]
    fn a_measure_totals_what_the_blocks_estimate() {
        let content = vec![
            Block::Text {
                text: "plain words and `code`".into(),
            },
            Block::ToolUse {
                id: "toolu_1".into(),
                name: "Read".into(),
                input: serde_json::json!({"file_path": "/src/main.rs"}),
            },
            Block::ToolResult {
                tool_use_id: "toolu_1".into(),
                content: ToolResultContent::Text("fn main() {}\n".repeat(200)),
                is_error: false,
            },
        ];
        assert_eq!(measure(&content).tokens(), blocks(&content));
        assert_eq!(measure(&[]).tokens(), blocks(&[]));
    }

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
}
