//! Token estimates, so that budgets (resume trimming, compaction thresholds) can be set in the unit providers
//! bill. This first estimator is deliberately simple and conservative (it errs towards more tokens); the
//! calibrated per-kind estimator replaces its internals without changing its signature.

use crate::model::{Block, ImageData, Message, ToolResultContent};

/// Fixed cost of a message's framing (role markers and separators).
pub const MESSAGE_OVERHEAD: u64 = 4;
/// Estimate for an image whose size is unknown here (a full-resolution Claude image is about 1,600 tokens).
pub const IMAGE_TOKENS: u64 = 1_600;

/// Tokens of a piece of text: about one per 3.5 bytes of ASCII, one per CJK character.
pub fn text(s: &str) -> u64 {
    let mut ascii = 0u64;
    let mut wide = 0u64;
    for c in s.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            wide += 1;
        }
    }
    (ascii * 2).div_ceil(7) + wide
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
        Block::Image { data, .. } => match data {
            ImageData::Bytes(_) | ImageData::Blob(_) => IMAGE_TOKENS,
        },
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

#[cfg(test)]
mod tests {
    #[test]
    fn text_estimate_grows_with_length_and_counts_cjk_per_char() {
        assert_eq!(super::text(""), 0);
        assert_eq!(super::text("abcdefg"), 2);
        assert_eq!(super::text("日本語"), 3);
    }
}
