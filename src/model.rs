//! The data model every other module speaks: messages made of content blocks, conversations, checkpoints.
//!
//! The blocks follow Anthropic's Messages wire shapes closely (that is the richest common form: thinking with a
//! signature, tool_use/tool_result pairs, images), with one change: image bytes are either held inline (before
//! they are stored) or referenced by the content hash of a row in the store's blob table. Blocks cairn does not
//! model (documents, redacted thinking, server tools, ...) are kept verbatim in [`Block::Other`], so nothing a
//! transcript carried is lost.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod cairn_meta;
pub mod image;
pub use cairn_meta::CairnMeta;

/// Who wrote a message. `Tool` is for harnesses (OpenAI, Codex) that give each tool result its own message;
/// Anthropic puts tool results in `user` messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    Tool,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            "system" => Some(Role::System),
            _ => None,
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an image's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageData {
    /// Bytes not yet stored (decoded from base64 on the way in).
    Bytes(Vec<u8>),
    /// SHA-256 (hex) of a row in the blob table, and the image's pixel size when known (read from its header
    /// when it was stored; references written before that have none).
    Blob {
        hash: String,
        size: Option<(u32, u32)>,
    },
}

/// The body of a tool result: Anthropic allows a plain string or a list of blocks (text and images).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultContent {
    Text(String),
    Blocks(Vec<Block>),
}

impl ToolResultContent {
    /// All text of the result, blocks joined by newlines.
    pub fn text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(Block::as_text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// One content block of a message. Its JSON forms (wire and stored) are written by [`crate::wire`].
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        /// The provider's signature over the reasoning; must round-trip byte for byte.
        signature: Option<String>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        is_error: bool,
    },
    Image {
        media_type: String,
        data: ImageData,
    },
    /// A block cairn does not model, kept verbatim (its JSON object, `type` included).
    Other(Value),
}

impl Block {
    pub fn text(t: impl Into<String>) -> Block {
        Block::Text { text: t.into() }
    }

    /// The text of a text block (none for any other).
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Block::Text { text } => Some(text),
            _ => None,
        }
    }

    /// Thinking with the provider's own signed form of it (Anthropic's signature, OpenAI's encrypted reasoning,
    /// Copilot's opaque): the only thinking a harness sends back, whole, whatever the transcript shows of it.
    pub fn is_signed_thinking(&self) -> bool {
        matches!(self, Block::Thinking { signature: Some(s), .. } if !s.is_empty())
    }

    /// The images this block carries: itself, or those inside a tool result (where screenshots usually are).
    pub fn images(&self) -> Vec<&Block> {
        match self {
            Block::Image { .. } => vec![self],
            Block::ToolResult {
                content: ToolResultContent::Blocks(inner),
                ..
            } => inner
                .iter()
                .filter(|x| matches!(x, Block::Image { .. }))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// This block with each image it carries ([`Block::images`]) replaced by what `f` makes of it.
    pub fn try_map_images<E>(
        &self,
        f: &mut dyn FnMut(&Block) -> Result<Block, E>,
    ) -> Result<Block, E> {
        Ok(match self {
            Block::Image { .. } => f(self)?,
            Block::ToolResult {
                tool_use_id,
                content: ToolResultContent::Blocks(inner),
                is_error,
            } => Block::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: ToolResultContent::Blocks(
                    inner
                        .iter()
                        .map(|x| match x {
                            Block::Image { .. } => f(x),
                            other => Ok(other.clone()),
                        })
                        .collect::<Result<_, E>>()?,
                ),
                is_error: *is_error,
            },
            other => other.clone(),
        })
    }
}

/// Token usage a provider measured for one reply, in Anthropic's terms: uncached input, output, cache reads and
/// cache writes (all lifetimes), and of the writes those made with the 1-hour lifetime (billed at twice the input
/// price where the 5-minute ones are billed at 1.25 times).
///
/// `requests` is how many requests the figures sum, where a harness recorded only totals (GitHub Copilot CLI's
/// per-run totals): 0 or 1 is one request, measured as such; more is a sum, which is counted and priced (as that
/// many requests of the average size) but is no measure of any one prompt.
///
/// `precision` is the unit a harness rounded the counts to when it wrote them (Aider prints `13k sent`: 1,000):
/// 0 or 1 is exact. A count so rounded measures a prompt to within half that unit either side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "UsageRepr")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_creation_1h_input_tokens: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub requests: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub precision: u64,
    /// Web searches the provider ran for the request (Anthropic's `server_tool_use.web_search_requests`, OpenAI's
    /// `web_search_call`s): priced per search beside the tokens.
    #[serde(skip_serializing_if = "is_zero")]
    pub web_search_requests: u64,
}

impl Usage {
    /// The prompt the figures count: uncached input, cache reads and cache writes.
    pub fn prompt(&self) -> u64 {
        self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
    }

    /// How many requests the figures sum (at least one).
    pub fn request_count(&self) -> u64 {
        self.requests.max(1)
    }

    /// The prompt of one request: the measured prompt, or for a sum of requests its average.
    pub fn prompt_per_request(&self) -> u64 {
        self.prompt() / self.request_count()
    }

    /// Whether the figures are one request's, so its prompt measures what the model read.
    pub fn is_one_request(&self) -> bool {
        self.requests <= 1
    }

    /// Of one model's replies in one conversation (their usages), how many recorded their output and never their
    /// prompt. A request always sends a prompt, so such a reply's prompt went unrecorded, unless a sum of requests
    /// counts it: Copilot CLI writes a run's prompts once, on its last reply, as the sum of the run's requests (a
    /// run cut off before it has none). What they sent is in no figure, and no cost made of the rest is whole.
    pub fn unrecorded_prompts<'a>(usages: impl IntoIterator<Item = &'a Usage>) -> u64 {
        let (mut bare, mut covered) = (0u64, 0u64);
        for u in usages {
            if u.prompt() > 0 {
                covered += u.request_count() - 1;
            } else if u.output_tokens > 0 {
                bare += 1;
            }
        }
        bare.saturating_sub(covered)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a usage object may look like: cairn's own (flat), or Anthropic's, whose 1-hour writes sit under
/// `cache_creation.ephemeral_1h_input_tokens` and web searches under `server_tool_use.web_search_requests`.
#[derive(Deserialize)]
struct UsageRepr {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_creation_1h_input_tokens: u64,
    #[serde(default)]
    cache_creation: Option<CacheCreation>,
    #[serde(default)]
    requests: u64,
    #[serde(default)]
    precision: u64,
    #[serde(default)]
    web_search_requests: u64,
    #[serde(default)]
    server_tool_use: Option<ServerToolUse>,
}

#[derive(Deserialize)]
struct CacheCreation {
    #[serde(default)]
    ephemeral_1h_input_tokens: u64,
}

/// The server-side tools Anthropic ran for a request (`usage.server_tool_use`).
#[derive(Deserialize)]
struct ServerToolUse {
    #[serde(default)]
    web_search_requests: u64,
}

impl From<UsageRepr> for Usage {
    fn from(r: UsageRepr) -> Usage {
        let nested = r.cache_creation.map_or(0, |c| c.ephemeral_1h_input_tokens);
        Usage {
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cache_read_input_tokens: r.cache_read_input_tokens,
            cache_creation_input_tokens: r.cache_creation_input_tokens,
            cache_creation_1h_input_tokens: r
                .cache_creation_1h_input_tokens
                .max(nested)
                .min(r.cache_creation_input_tokens),
            requests: r.requests,
            precision: r.precision,
            web_search_requests: r
                .web_search_requests
                .max(r.server_tool_use.map_or(0, |s| s.web_search_requests)),
        }
    }
}

/// The plain text of blocks, one block after another: text as is, thinking, tool calls and results marked, other
/// blocks as JSON. It is what a snapshot page draws, what a summary is asked to read and what a search matches,
/// so its length is measured once per message when it is stored.
pub fn plain_text(blocks: &[Block]) -> String {
    blocks
        .iter()
        .map(block_plain_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One block's part of [`plain_text`].
pub fn block_plain_text(b: &Block) -> String {
    {
        match b {
            Block::Text { text } => text.clone(),
            Block::Thinking { thinking, .. } => format!("[thinking] {thinking}"),
            Block::ToolUse { name, input, .. } => format!("[tool_use {name}] {input}"),
            Block::ToolResult {
                content, is_error, ..
            } => {
                let t = match content {
                    ToolResultContent::Text(t) => t.clone(),
                    c => c.text(),
                };
                if *is_error { format!("[error] {t}") } else { t }
            }
            Block::Image { media_type, .. } => format!("[image {media_type}]"),
            Block::Other(v) => v.to_string(),
        }
    }
}

/// A message about to be written: no id, no parent yet (the store assigns both).
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: Vec<Block>,
    /// Source metadata: the original ids and every field of an imported line that cairn does not model.
    pub meta: Value,
    pub usage: Option<Usage>,
    /// Unix milliseconds; `None` means "now".
    pub created_at: Option<i64>,
}

impl NewMessage {
    pub fn new(role: Role, content: Vec<Block>) -> NewMessage {
        NewMessage {
            role,
            content,
            meta: Value::Null,
            usage: None,
            created_at: None,
        }
    }

    pub fn text(role: Role, text: impl Into<String>) -> NewMessage {
        NewMessage::new(role, vec![Block::text(text)])
    }

    /// Whether a conversation may rest after this message; see [`ends_turn`].
    pub fn ends_turn(&self) -> bool {
        ends_turn(self.role, &self.content, &self.meta)
    }
}

/// A stored message. Immutable once written (the store refuses updates and deletes).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: String,
    pub parent: Option<String>,
    pub conversation: String,
    pub role: Role,
    pub content: Vec<Block>,
    pub created_at: i64,
    pub meta: Value,
    pub usage: Option<Usage>,
    /// Distance from the root (the root has depth 0).
    pub depth: i64,
}

/// The kinds recorded in `meta.cairn.kind`: a rewind digest cairn wrote, a compaction marker (cairn's own rungs
/// and the compactions harnesses recorded), and a harness's compaction summary sent in place of what it covers.
pub const KIND_DIGEST: &str = "digest";
pub const KIND_COMPACTION: &str = "compaction";
pub const KIND_COMPACT_SUMMARY: &str = "compact_summary";

/// The model that wrote a reply, where the message's metadata records it: `meta.model` (cairn's own replies and
/// every reader since the harness's model is normalised there), else Claude Code's `lines[0].message.model`, else
/// pi's `entry.message.model`.
pub fn model_of(meta: &Value) -> Option<&str> {
    meta.get("model")
        .and_then(Value::as_str)
        .or_else(|| {
            meta.get("lines")
                .and_then(|l| l.get(0))
                .and_then(|l| l.get("message"))
                .and_then(|m| m.get("model"))
                .and_then(Value::as_str)
        })
        .or_else(|| {
            meta.get("entry")
                .and_then(|e| e.get("message"))
                .and_then(|m| m.get("model"))
                .and_then(Value::as_str)
        })
        .filter(|m| !m.is_empty())
}

impl Message {
    pub fn tool_use_ids(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
    }

    pub fn tool_result_ids(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
    }

    pub fn has_tool_use(&self) -> bool {
        self.tool_use_ids().next().is_some()
    }

    pub fn has_tool_result(&self) -> bool {
        self.tool_result_ids().next().is_some()
    }

    /// The kind cairn gave a message it wrote itself (a rewind digest, ...), if any.
    pub fn cairn_kind(&self) -> Option<&str> {
        CairnMeta::kind(&self.meta)
    }

    /// An assistant reply the provider or harness marked as failed (an API error recorded in place of a reply).
    pub fn is_failed(&self) -> bool {
        is_failed(self.role, &self.meta)
    }

    /// Whether the conversation may rest here; see [`ends_turn`].
    pub fn ends_turn(&self) -> bool {
        ends_turn(self.role, &self.content, &self.meta)
    }

    /// The first line of the message's text, for listings: what the message says first, then what its harness
    /// rendered beside it for the model (Claude Code's reminders before a prompt, `meta.rendered_attachments`).
    pub fn summary(&self, max_chars: usize) -> String {
        let rendered = rendered_beside(&self.meta);
        let rendered = &rendered;
        let blocks = |beside: bool| {
            self.content
                .iter()
                .enumerate()
                .filter(move |(i, _)| rendered.contains(i) == beside)
        };
        let mut s = String::new();
        for (_, b) in blocks(false).chain(blocks(true)) {
            let part = match b {
                Block::Text { text } => text.clone(),
                Block::Thinking { .. } => "[thinking]".to_string(),
                Block::ToolUse { name, .. } => format!("[tool_use {name}]"),
                Block::ToolResult {
                    content, is_error, ..
                } => {
                    let t = content.text();
                    if *is_error {
                        format!("[tool_result error] {t}")
                    } else {
                        format!("[tool_result] {t}")
                    }
                }
                Block::Image { media_type, .. } => format!("[image {media_type}]"),
                Block::Other(v) => format!(
                    "[{}]",
                    v.get("type").and_then(Value::as_str).unwrap_or("block")
                ),
            };
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&part);
            if s.chars().count() > max_chars {
                break;
            }
        }
        let line: String = s
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        if line.chars().count() > max_chars {
            let cut: String = line.chars().take(max_chars.saturating_sub(1)).collect();
            format!("{cut}…")
        } else {
            line
        }
    }
}

/// The blocks of a message its harness rendered beside what it says, for the model (Claude Code's reminders:
/// `meta.rendered_attachments`, their indexes): sent and counted, but not what listings and search show it by.
pub fn rendered_beside(meta: &Value) -> Vec<usize> {
    meta.get("rendered_attachments")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .map(|i| i as usize)
                .collect()
        })
        .unwrap_or_default()
}

/// A message's blocks without those its harness rendered beside it ([`rendered_beside`]): what the message itself
/// says, which names it (a session's key) and is searched. Borrowed when it rendered none.
pub fn own_blocks<'a>(content: &'a [Block], meta: &Value) -> std::borrow::Cow<'a, [Block]> {
    let beside = rendered_beside(meta);
    if beside.is_empty() {
        return std::borrow::Cow::Borrowed(content);
    }
    std::borrow::Cow::Owned(
        content
            .iter()
            .enumerate()
            .filter(|(i, _)| !beside.contains(i))
            .map(|(_, b)| b.clone())
            .collect(),
    )
}

fn is_failed(role: Role, meta: &Value) -> bool {
    role == Role::Assistant
        && (meta.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
            || CairnMeta::failed(meta))
}

/// Whether a conversation may rest after this message: nothing is waiting for an answer. An assistant reply
/// without tool calls ends a turn; so do system messages, the notes cairn writes (rewind digests) and the result
/// of the call by which a harness's agent finished (OpenHands' `finish`). A user prompt awaiting its reply, tool
/// results awaiting the model, tool calls awaiting results and failed replies do not.
pub fn ends_turn(role: Role, content: &[Block], meta: &Value) -> bool {
    let kind = CairnMeta::kind(meta);
    match role {
        Role::Assistant => {
            !content.iter().any(|b| matches!(b, Block::ToolUse { .. })) && !is_failed(role, meta)
        }
        Role::System => true,
        // a digest cairn wrote, or the result of the call by which the harness's agent finished
        Role::User | Role::Tool => kind == Some(KIND_DIGEST) || CairnMeta::finished(meta),
    }
}

/// A conversation: a tree of messages with one current tip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub id: String,
    pub title: Option<String>,
    /// The current tip; `None` for a conversation with no messages yet.
    pub tip: Option<String>,
    pub forked_from: Option<ForkedFrom>,
    pub created_at: i64,
    /// Messages stored in this conversation (all branches).
    pub messages: u64,
    pub archived: bool,
    /// The session this one is a subagent of (imported with it).
    pub linked_to: Option<String>,
    /// The id of the tool call in that session that spawned this one, where it could be found.
    pub spawned_by: Option<String>,
}

/// Where a fork came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkedFrom {
    pub conversation: String,
    pub message: String,
}

/// A named turn boundary of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checkpoint {
    pub label: String,
    pub message: String,
    pub created_at: i64,
}

#[cfg(test)]
mod tests {
    use super::Usage;

    #[test]
    fn a_prompt_is_unrecorded_unless_a_sum_of_requests_counts_it() {
        let out = |o: u64| Usage {
            output_tokens: o,
            ..Usage::default()
        };
        let sum = |requests: u64| Usage {
            input_tokens: 9_000,
            output_tokens: 40,
            requests,
            ..Usage::default()
        };
        // a run's three requests: two with output only, the last carrying the run's sum of three
        assert_eq!(Usage::unrecorded_prompts(&[out(10), out(12), sum(3)]), 0);
        // then a run cut off before its totals: its two replies recorded no prompt
        assert_eq!(
            Usage::unrecorded_prompts(&[out(10), out(12), sum(3), out(5), out(7)]),
            2
        );
        // a reply measured as one request covers only itself; a step that recorded nothing at all is no request
        assert_eq!(Usage::unrecorded_prompts(&[sum(1), out(3), out(0)]), 1);
    }
}
