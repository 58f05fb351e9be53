//! Other harnesses' transcript formats, read into one in-memory shape ([`Parsed`]) that the store writes in one
//! transaction. Each reader lives in its own file; this one holds what they share: the tolerant JSONL line
//! reader, the report of what was read and skipped, and detection by content.

pub mod aider;
pub mod amp;
pub mod appended;
pub mod cairn_jsonl;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod copilot_cli;
pub mod cursor;
pub mod droid;
pub mod gemini_cli;
pub mod goose;
pub mod kimi_cli;
pub mod messages_json;
pub mod opencode;
pub mod openhands;
pub mod pi;
pub mod qwen_code;
pub mod sqlite;
pub mod stores;
pub mod trajectories;
pub mod zed;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::model::{Block, NewMessage, Role, Usage};
use crate::store::ImportedMessage;

/// Why a file could not be read; names the file and line.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {reason}", file.display())]
pub struct FormatError {
    pub file: PathBuf,
    /// 1-based; 0 when the problem is the file as a whole.
    pub line: usize,
    pub reason: String,
    /// Set when the file holds no session: no reader claims it (a harness's settings, credentials or caches beside
    /// its sessions), or the one that does finds nothing in it to import. A folder walk skips such a file; a file
    /// named is refused.
    pub not_a_transcript: bool,
}

impl FormatError {
    pub fn new(file: &Path, line: usize, reason: impl Into<String>) -> FormatError {
        FormatError {
            file: file.to_path_buf(),
            line,
            reason: reason.into(),
            not_a_transcript: false,
        }
    }

    /// A file no reader claims: see [`FormatError::not_a_transcript`].
    fn unclaimed(file: &Path, line: usize, reason: impl Into<String>) -> FormatError {
        FormatError {
            not_a_transcript: true,
            ..FormatError::new(file, line, reason)
        }
    }

    /// A file its reader finds nothing in to import (a session started and not yet written to, an empty list):
    /// like one no reader claims, a folder walk skips it (see [`FormatError::not_a_transcript`]).
    pub fn empty(file: &Path, line: usize, reason: impl Into<String>) -> FormatError {
        FormatError::unclaimed(file, line, reason)
    }
}

/// The transcript formats cairn reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// cairn's own JSONL export.
    Cairn,
    ClaudeCode,
    Pi,
    Codex,
    Anthropic,
    Openai,
    /// A SWE-agent trajectory (`.traj`).
    SweAgent,
    /// An OpenHands conversation (the SDK's `base_state.json` with its `events/` beside it) or an older trajectory
    /// (an array of events). Spelled in JSON as on the command line (`openhands`).
    #[serde(rename = "openhands")]
    OpenHands,
    /// A mini-SWE-agent trajectory (`.traj.json`: one JSON document).
    MiniSweAgent,
    /// A Gemini CLI chat file (one JSON document).
    GeminiCli,
    /// An opencode session (`opencode export`: one JSON document).
    Opencode,
    /// A Cursor agent transcript.
    Cursor,
    /// Aider's Markdown chat history.
    Aider,
    /// A Cline, Roo Code or Kilo Code task's conversation history.
    Cline,
    /// A GitHub Copilot CLI session log (`events.jsonl`).
    CopilotCli,
    /// A Factory Droid session (`~/.factory/sessions/<project>/<id>.jsonl`).
    Droid,
    /// A Qwen Code session (`~/.qwen/projects/<project>/chats/<id>.jsonl`).
    QwenCode,
    /// A Kimi CLI session's history (`~/.kimi/sessions/<work dir hash>/<id>/context.jsonl`).
    KimiCli,
    /// An Amp thread (`~/.local/share/amp/threads/T-<uuid>.json`: one JSON document).
    Amp,
    /// A Goose session: a session of its SQLite store, `goose session export`'s document, or its older JSONL.
    Goose,
    /// A Zed agent thread (a thread of Zed's `threads.db`).
    Zed,
}

impl Format {
    pub const ALL: [Format; 21] = [
        Format::Cairn,
        Format::ClaudeCode,
        Format::Pi,
        Format::Codex,
        Format::Anthropic,
        Format::Openai,
        Format::SweAgent,
        Format::OpenHands,
        Format::MiniSweAgent,
        Format::GeminiCli,
        Format::Opencode,
        Format::Cursor,
        Format::Aider,
        Format::Cline,
        Format::CopilotCli,
        Format::Droid,
        Format::QwenCode,
        Format::KimiCli,
        Format::Amp,
        Format::Goose,
        Format::Zed,
    ];

    /// Parses a format name as the CLI spells it.
    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Cairn => "cairn",
            Format::ClaudeCode => "claude-code",
            Format::Pi => "pi",
            Format::Codex => "codex",
            Format::Anthropic => "anthropic",
            Format::Openai => "openai",
            Format::SweAgent => "swe-agent",
            Format::OpenHands => "openhands",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::GeminiCli => "gemini-cli",
            Format::Opencode => "opencode",
            Format::Cursor => "cursor",
            Format::Aider => "aider",
            Format::Cline => "cline",
            Format::CopilotCli => "copilot-cli",
            Format::Droid => "droid",
            Format::QwenCode => "qwen-code",
            Format::KimiCli => "kimi-cli",
            Format::Amp => "amp",
            Format::Goose => "goose",
            Format::Zed => "zed",
        }
    }
}

/// What an import found, per file (and per conversation for files with subagents).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ImportReport {
    pub messages: usize,
    /// Messages with more than one child that are real forks (a rewind or edited prompt), not recording artifacts.
    pub branches: usize,
    pub tool_pairs: usize,
    pub images: usize,
    /// Lines or entries not imported as messages, by kind, with why (all kept as metadata unless said).
    pub skipped: BTreeMap<String, usize>,
    /// Things worth telling the user (a parent outside the file, ...).
    pub notes: Vec<String>,
}

impl ImportReport {
    pub fn skip(&mut self, kind: impl Into<String>) {
        *self.skipped.entry(kind.into()).or_default() += 1;
    }
}

/// One conversation read from a file, ready to be written.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub title: Option<String>,
    pub messages: Vec<ImportedMessage>,
    pub tip: Option<usize>,
    /// (label, message index)
    pub checkpoints: Vec<(String, usize)>,
    /// Conversation-level source metadata (header lines, bookkeeping records, ...).
    pub meta: Value,
    pub report: ImportReport,
    /// Linked conversations read with this one (Claude Code subagents).
    pub children: Vec<Parsed>,
}

impl Parsed {
    /// One conversation of messages in file order (readers of harnesses without a tree), titled as the harness
    /// named it where it did, else by its messages.
    pub(crate) fn chained(
        built: Vec<NewMessage>,
        named: Option<&str>,
        meta: Value,
        report: ImportReport,
    ) -> Parsed {
        let messages = chain(built);
        let title = named
            .filter(|t| !t.trim().is_empty())
            .map(short_title)
            .or_else(|| title_of(&messages));
        Parsed {
            title,
            tip: messages.len().checked_sub(1),
            messages,
            checkpoints: Vec::new(),
            meta,
            report,
            children: Vec::new(),
        }
    }

    /// Usage no provider could have measured (a prompt or reply larger than any model's window, as the catalog
    /// knows them: 2^63 - 1 tokens in a hostile file) is not stored as usage: it is kept as metadata
    /// (`cairn.refused_usage`) and the report says so, so no cost, free space or replay is made of it.
    fn check_usage(&mut self) {
        let prompt_of = |u: &crate::model::Usage| {
            u.input_tokens
                .saturating_add(u.cache_read_input_tokens)
                .saturating_add(u.cache_creation_input_tokens)
        };
        // figures under twice the least the catalog can answer need no catalog (loading it is most of the time
        // a session that grew by a turn takes to read)
        let floor = crate::models::LARGEST_WINDOW_FLOOR.saturating_mul(2);
        let within_floor = self.messages.iter().all(|m| {
            m.message
                .usage
                .is_none_or(|u| prompt_of(&u) <= floor && u.output_tokens <= floor)
        });
        if within_floor {
            return;
        }
        let limit = crate::models::largest_window().saturating_mul(2);
        let mut refused = 0;
        for m in &mut self.messages {
            let Some(u) = m.message.usage else { continue };
            let prompt = prompt_of(&u);
            if prompt > limit || u.output_tokens > limit {
                if !m.message.meta.is_object() {
                    m.message.meta = serde_json::json!({});
                }
                m.message.meta["cairn_refused_usage"] = serde_json::json!(u);
                m.message.usage = None;
                refused += 1;
            }
        }
        if refused > 0 {
            self.report.notes.push(format!(
                "{refused} repl{} recorded usage beyond any model's window ({limit} tokens): kept as metadata, \
                 not counted",
                if refused == 1 { "y" } else { "ies" }
            ));
        }
    }

    /// The conversation to store, moved out (a large transcript's content is held once), and the linked
    /// conversations read with it, apart.
    pub fn into_imported(
        self,
        linked_to: Option<usize>,
    ) -> (crate::store::ImportedConversation, Vec<Parsed>) {
        (
            crate::store::ImportedConversation {
                title: self.title,
                messages: self.messages,
                tip: self.tip,
                checkpoints: self.checkpoints,
                meta: self.meta,
                linked_to,
            },
            self.children,
        )
    }

    /// Counts messages, tool pairs, images and real branches from the messages themselves.
    pub fn finish_report(&mut self) {
        self.check_usage();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.messages.len()];
        for (i, m) in self.messages.iter().enumerate() {
            if let Some(p) = m.parent {
                children[p].push(i);
            }
        }
        self.report.messages = self.messages.len();
        self.report.branches = children.iter().filter(|c| c.len() > 1).count();
        let mut uses = std::collections::HashSet::new();
        let mut pairs = 0;
        let mut images = 0;
        for m in &self.messages {
            for b in &m.message.content {
                count_block(b, &mut uses, &mut pairs, &mut images);
            }
        }
        self.report.tool_pairs = pairs;
        self.report.images = images;
        self.pairing_notes();
    }

    /// Notes for what a provider would refuse (the file still imports: it is what the harness wrote; exports and
    /// requests repair it): results that answer no call, calls never answered, call ids used twice.
    fn pairing_notes(&mut self) {
        let mut uses: BTreeMap<&str, usize> = BTreeMap::new();
        let mut results: std::collections::BTreeSet<&str> = Default::default();
        let tip = self.tip.or(self.messages.len().checked_sub(1));
        let mut pending: std::collections::HashSet<&str> = Default::default();
        for (i, m) in self.messages.iter().enumerate() {
            for b in &m.message.content {
                match b {
                    Block::ToolUse { id, .. } => {
                        *uses.entry(id.as_str()).or_default() += 1;
                        if Some(i) == tip {
                            pending.insert(id.as_str());
                        }
                    }
                    Block::ToolResult { tool_use_id, .. } => {
                        results.insert(tool_use_id.as_str());
                    }
                    _ => {}
                }
            }
        }
        let some = |v: Vec<&str>, what: &str| -> Option<String> {
            let first: Vec<&str> = v.iter().take(3).copied().collect();
            (!v.is_empty()).then(|| format!("{} {what} (e.g. {})", v.len(), first.join(", ")))
        };
        let orphans: Vec<&str> = results
            .iter()
            .filter(|r| !uses.contains_key(*r))
            .copied()
            .collect();
        let unanswered: Vec<&str> = uses
            .keys()
            .filter(|u| !results.contains(*u) && !pending.contains(*u))
            .copied()
            .collect();
        let twice: Vec<&str> = uses
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(u, _)| *u)
            .collect();
        for n in [
            some(orphans, "tool result(s) answer no call in the file"),
            some(unanswered, "tool call(s) never answered"),
            some(twice, "tool call id(s) used more than once"),
        ]
        .into_iter()
        .flatten()
        {
            self.report
                .notes
                .push(format!("{n}; exports and requests repair it"));
        }
    }
}

fn count_block(
    b: &Block,
    uses: &mut std::collections::HashSet<String>,
    pairs: &mut usize,
    images: &mut usize,
) {
    match b {
        Block::ToolUse { id, .. } => {
            uses.insert(id.clone());
        }
        Block::ToolResult {
            tool_use_id,
            content,
            ..
        } => {
            if uses.contains(tool_use_id) {
                *pairs += 1;
            }
            if let crate::model::ToolResultContent::Blocks(bs) = content {
                for inner in bs {
                    count_block(inner, uses, pairs, images);
                }
            }
        }
        Block::Image { .. } => *images += 1,
        _ => {}
    }
}

/// Reads a JSONL file line by line (constant memory per line), tolerating a missing trailing newline, blank lines
/// and several JSON objects glued on one line. Yields (1-based line number, value).
pub fn read_jsonl(path: &Path) -> Result<Vec<(usize, Value)>, FormatError> {
    jsonl_of(path, &read_file(path)?)
}

/// A file's bytes, read once (what is hashed is what is parsed): a regular file only (a FIFO or device would block
/// or never end), and text (a NUL byte in its first 64 KiB, as in a sparse or binary file, is refused before the
/// rest is read).
pub fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    use std::io::Read as _;
    // a session of a harness's SQLite store (opencode, Goose, Zed), named as a path beneath it
    if let Some((store, db, id)) = stores::split(path) {
        return (store.export)(db, id);
    }
    let meta = std::fs::metadata(path).map_err(|e| FormatError::new(path, 0, e.to_string()))?;
    if !meta.is_file() {
        return Err(FormatError::new(path, 0, "not a regular file"));
    }
    let mut f = std::fs::File::open(path).map_err(|e| FormatError::new(path, 0, e.to_string()))?;
    let mut head = vec![0u8; 64 * 1024];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(FormatError::new(path, 0, e.to_string())),
        }
    }
    head.truncate(n);
    if head.contains(&0) {
        return Err(FormatError::new(
            path,
            0,
            "not a text file (it holds NUL bytes)",
        ));
    }
    let mut bytes = head;
    f.read_to_end(&mut bytes)
        .map_err(|e| FormatError::new(path, 0, e.to_string()))?;
    Ok(bytes)
}

/// [`read_jsonl`] of bytes already read.
pub fn jsonl_of(path: &Path, bytes: &[u8]) -> Result<Vec<(usize, Value)>, FormatError> {
    jsonl_from(path, bytes, 1)
}

/// [`jsonl_of`] of bytes that start at line `first` of the file (the end of a file that grew). A large file is
/// read in two halves at once (split at a line break), one on each core; an error is the first in file order.
pub fn jsonl_from(
    path: &Path,
    bytes: &[u8],
    first: usize,
) -> Result<Vec<(usize, Value)>, FormatError> {
    const APART: usize = 1 << 20;
    let split = (bytes.len() >= APART)
        .then(|| memchr::memchr(b'\n', &bytes[bytes.len() / 2..]))
        .flatten()
        .map(|at| bytes.len() / 2 + at + 1);
    let Some(split) = split else {
        return jsonl_lines(path, bytes, first);
    };
    let (a, b) = bytes.split_at(split);
    let b_first = first + memchr::memchr_iter(b'\n', a).count();
    let (a, b) = std::thread::scope(|s| {
        let later = s.spawn(|| jsonl_lines(path, b, b_first));
        let a = jsonl_lines(path, a, first);
        // the other half's thread cannot panic short of a bug in serde_json; its error is read as the file's
        (
            a,
            later
                .join()
                .unwrap_or_else(|_| Err(FormatError::new(path, b_first, "could not be read"))),
        )
    });
    let mut out = a?;
    out.extend(b?);
    Ok(out)
}

fn jsonl_lines(
    path: &Path,
    bytes: &[u8],
    first: usize,
) -> Result<Vec<(usize, Value)>, FormatError> {
    let mut out = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let n = i + first;
        let line = std::str::from_utf8(line)
            .map_err(|_| FormatError::new(path, n, "stream did not contain valid UTF-8"))?;
        // a byte-order mark some editors write is not part of the first line's JSON
        let line = match n {
            1 => line.strip_prefix('\u{feff}').unwrap_or(line),
            _ => line,
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
        for v in &mut stream {
            let v =
                v.map_err(|e| FormatError::new(path, n, format!("not JSON: {}", strip_pos(&e))))?;
            out.push((n, v));
        }
    }
    Ok(out)
}

fn strip_pos(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => format!("{} (column {})", &s[..i], e.column()),
        None => s,
    }
}

/// Guesses a file's format from its content (never its name).
pub fn detect(lines: &[(usize, Value)]) -> Option<Format> {
    let first = &lines.first()?.1;
    if lines.len() == 1 && trajectories::is_sweagent(first) {
        return Some(Format::SweAgent);
    }
    if lines.len() == 1 && (trajectories::is_openhands(first) || openhands::is_state(first)) {
        return Some(Format::OpenHands);
    }
    if lines.len() == 1 && trajectories::mini_swe_agent::is_mini_swe_agent(first) {
        return Some(Format::MiniSweAgent);
    }
    if gemini_cli::is_document(lines) || gemini_cli::log::is_log(lines) {
        return Some(Format::GeminiCli);
    }
    if lines.len() == 1 && opencode::is_opencode(first) {
        return Some(Format::Opencode);
    }
    // Codex before `session_meta`: a first line with the session's id and instructions, then bare items
    if first.get("id").is_some()
        && first.get("instructions").is_some()
        && first.get("type").is_none()
    {
        return Some(Format::Codex);
    }
    if lines.len() == 1 && zed::is_zed(first) {
        return Some(Format::Zed);
    }
    if lines.len() == 1 && amp::is_amp(first) {
        return Some(Format::Amp);
    }
    if (lines.len() == 1 && goose::is_export(first)) || goose::is_legacy(lines) {
        return Some(Format::Goose);
    }
    if lines.len() == 1 && first.get("messages").is_some_and(Value::is_array) {
        return Some(messages_json::detect(first));
    }
    // a bare array is messages when it holds one, or nothing (another tool's list, a harness's todos, is no
    // transcript)
    if first.as_array().is_some_and(Vec::is_empty) || messages_json::holds_a_message(first) {
        return Some(messages_json::detect(first));
    }
    if first.get("type").and_then(Value::as_str) == Some("cairn") {
        return Some(Format::Cairn);
    }
    for (_, v) in lines.iter().take(50) {
        if kimi_cli::is_kimi(v) {
            return Some(Format::KimiCli);
        }
        // before pi's rule: Droid's message lines have pi's shape
        if droid::is_droid(v) {
            return Some(Format::Droid);
        }
        if pi::is_format4_header(v) {
            return Some(Format::Pi);
        }
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "session" && (v.get("version").is_some() || v.get("cwd").is_some()) {
            return Some(Format::Pi);
        }
        if v.get("payload").is_some()
            && matches!(
                ty,
                "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
            )
        {
            return Some(Format::Codex);
        }
        // before Claude Code's rule: Qwen Code's records make the same tree, in Gemini's shape
        if qwen_code::is_qwen(v) {
            return Some(Format::QwenCode);
        }
        if v.get("uuid").is_some() && v.get("sessionId").is_some() {
            return Some(Format::ClaudeCode);
        }
        if matches!(ty, "summary" | "file-history-snapshot" | "queue-operation") {
            return Some(Format::ClaudeCode);
        }
        if ty == "message" && v.get("message").and_then(|m| m.get("role")).is_some() {
            return Some(Format::Pi);
        }
        if cursor::is_cursor(v) {
            return Some(Format::Cursor);
        }
        if copilot_cli::is_copilot(v) {
            return Some(Format::CopilotCli);
        }
    }
    None
}

/// A document that must be one JSON value: its line and the value.
fn one_document<'a>(
    path: &Path,
    lines: &'a [(usize, Value)],
    message: &str,
) -> Result<(usize, &'a Value), FormatError> {
    match lines {
        [(l, d)] => Ok((*l, d)),
        _ => Err(FormatError::new(
            path,
            lines.get(1).map_or(0, |l| l.0),
            message.to_string(),
        )),
    }
}

/// The lines read in a format known by now.
fn parse_as(
    path: &Path,
    bytes: &[u8],
    lines: Vec<(usize, Value)>,
    format: Format,
) -> Result<Parsed, FormatError> {
    Ok(match format {
        Format::Cairn => cairn_jsonl::parse(path, &lines)?,
        Format::ClaudeCode => claude_code::parse(path, lines)?,
        Format::Pi => pi::parse(path, &lines)?,
        Format::Codex => codex::parse(path, &lines)?,
        Format::Cursor => cursor::parse(path, &lines)?,
        Format::CopilotCli => copilot_cli::parse(path, &lines)?,
        Format::Droid => droid::parse(path, &lines)?,
        Format::QwenCode => qwen_code::parse(path, &lines)?,
        Format::KimiCli => kimi_cli::parse(path, &lines)?,
        Format::Amp => {
            let (l, d) = one_document(path, &lines, "an Amp thread is one JSON document")?;
            amp::parse(path, l, d)?
        }
        Format::Zed => {
            let (l, d) = one_document(path, &lines, "a Zed thread is one JSON document")?;
            zed::parse(path, l, d)?
        }
        Format::Goose => match lines.as_slice() {
            [(l, d)] if goose::is_export(d) => goose::parse(path, *l, d)?,
            _ => goose::parse_legacy(path, &lines)?,
        },
        Format::Cline => {
            let (l, d) = one_document(path, &lines, "a Cline history is one JSON array")?;
            cline::parse(path, l, d)?
        }
        Format::Aider => {
            return Err(FormatError::new(
                path,
                1,
                "not an Aider chat history (no \"# aider chat started at\")",
            ));
        }
        Format::Anthropic | Format::Openai => messages_json::parse(path, &lines, format)?,
        Format::Opencode => {
            let (l, d) = one_document(path, &lines, "an opencode export is one JSON document")?;
            opencode::parse(path, l, d)?
        }
        Format::GeminiCli if !gemini_cli::is_document(&lines) => {
            gemini_cli::log::parse(path, &lines)?
        }
        Format::GeminiCli => {
            let (l, d) = one_document(path, &lines, "a Gemini CLI chat file is one JSON document")?;
            gemini_cli::parse(path, l, d)?
        }
        Format::SweAgent | Format::OpenHands | Format::MiniSweAgent => {
            let (line, doc) = match lines.as_slice() {
                [(l, d)] => (*l, d.clone()),
                _ => {
                    let text = std::str::from_utf8(bytes)
                        .map_err(|_| FormatError::new(path, 0, "not UTF-8 text"))?;
                    let doc = serde_json::from_str(text).map_err(|e| {
                        FormatError::new(path, e.line(), format!("not one JSON document: {e}"))
                    })?;
                    (1, doc)
                }
            };
            match format {
                Format::SweAgent => trajectories::parse_sweagent(path, line, &doc)?,
                Format::MiniSweAgent => trajectories::mini_swe_agent::parse(path, line, &doc)?,
                _ if openhands::is_state(&doc) => openhands::parse(path, line, &doc)?,
                _ if doc.is_object() && openhands::sessions::is_first_event(path) => {
                    openhands::sessions::parse(path)?
                }
                _ => trajectories::parse_openhands(path, line, &doc)?,
            }
        }
    })
}

/// Reads one file in the given (or detected) format.
pub fn parse_file(path: &Path, format: Option<Format>) -> Result<(Format, Parsed), FormatError> {
    parse_bytes(path, &read_file(path)?, format)
}

/// Reads the bytes of the file at `path` (read once by the caller) in the given (or detected) format.
pub fn parse_bytes(
    path: &Path,
    bytes: &[u8],
    format: Option<Format>,
) -> Result<(Format, Parsed), FormatError> {
    let text = || std::str::from_utf8(bytes).ok();
    // the one format that is not JSON: Aider's Markdown history
    if let Some(t) = text()
        && (format == Some(Format::Aider) || format.is_none() && aider::is_aider(t))
    {
        let mut parsed = aider::parse(path, t)?;
        parsed.finish_report();
        for c in &mut parsed.children {
            c.finish_report();
        }
        return Ok((Format::Aider, parsed));
    }
    let lines = match jsonl_of(path, bytes) {
        Ok(l) => l,
        // One pretty-printed JSON document (a request body pasted from code) is not JSONL, but is welcome.
        Err(e) => match text().and_then(|t| {
            serde_json::from_str::<Value>(t.strip_prefix('\u{feff}').unwrap_or(t)).ok()
        }) {
            Some(doc) if doc.is_object() || doc.is_array() => vec![(1, doc)],
            _ => return Err(e),
        },
    };
    // Kimi CLI's history right after a clear is an empty file, the session in the histories moved aside
    let format = format.or_else(|| {
        (lines.is_empty() && kimi_cli::has_moved_histories(path)).then_some(Format::KimiCli)
    });
    if lines.is_empty() && format != Some(Format::KimiCli) {
        return Err(FormatError::unclaimed(path, 0, "empty file"));
    }
    // Cline's history is a bare array of messages like a provider request's: told apart by what its replies carry
    let cline = || lines.len() == 1 && cline::is_cline(path, &lines[0].1);
    // an OpenHands conversation of before the SDK: its first event's file, told by its place and shape (an event
    // names its source where it has one, and is an action or an observation)
    let openhands_events = || {
        lines.len() == 1
            && ["source", "action", "observation"]
                .iter()
                .any(|k| lines[0].1.get(k).is_some())
            && openhands::sessions::is_first_event(path)
    };
    let format = match format
        .or_else(|| cline().then_some(Format::Cline))
        .or_else(|| openhands_events().then_some(Format::OpenHands))
        .or_else(|| detect(&lines))
    {
        Some(f) => f,
        None => {
            return Err(FormatError::unclaimed(
                path,
                lines[0].0,
                "not a transcript cairn knows (tried: Claude Code, pi, Codex, Gemini CLI, Qwen Code, Kimi CLI, Amp, Goose, Zed, Copilot CLI, opencode, Cursor, Droid, Aider, Cline, SWE-agent, mini-SWE-agent, OpenHands, \
                 Anthropic or OpenAI messages, cairn)",
            ));
        }
    };
    let mut parsed = parse_as(path, bytes, lines, format)?;
    parsed.finish_report();
    for c in &mut parsed.children {
        c.finish_report();
    }
    Ok((format, parsed))
}

/// Whether a user message's text is something a harness injected rather than what the user typed: Claude Code's
/// local-command caveat, command markup and system reminders, a continuation summary, Codex's AGENTS.md,
/// environment context and user instructions (and any text that opens with a tag of that kind).
pub fn is_preamble(text: &str) -> bool {
    let t = text.trim_start();
    const OPENINGS: &[&str] = &[
        "Caveat: The messages below were generated by the user while running local commands",
        "# AGENTS.md instructions",
        "This session is being continued from a previous conversation",
        "[Request interrupted by user",
    ];
    if OPENINGS.iter().any(|o| t.starts_with(o)) {
        return true;
    }
    // a leading markup tag: <command-name>, <local-command-stdout>, <system-reminder>, <environment_context>, ...
    t.strip_prefix('<').is_some_and(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .collect();
        !name.is_empty() && rest[name.len()..].starts_with('>')
    })
}

/// Whether a prompt is a harness command the user typed (`/map`, `/add src/a.rs`): a first word of a slash and a
/// name, no path (`/usr/bin/env is missing` is a prompt).
fn is_command(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    first.len() > 1
        && first.starts_with('/')
        && first[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A title from a conversation's messages: the first line of the first prompt the user typed (injected preambles
/// and the harness's commands skipped), else of the first reply's words. None only when there is no text at all.
pub fn title_of(messages: &[ImportedMessage]) -> Option<String> {
    let first_text = |role: Role, skip_preambles: bool| {
        let usable =
            |t: &str| !(t.trim().is_empty() || skip_preambles && (is_preamble(t) || is_command(t)));
        messages.iter().find_map(|m| {
            if m.message.role != role || said_by_harness(&m.message.meta) {
                return None;
            }
            m.message.content.iter().find_map(|b| match b {
                Block::Text { text } if usable(text) => Some(short_title(text)),
                _ => None,
            })
        })
    };
    first_text(Role::User, true)
        .or_else(|| first_text(Role::Assistant, false))
        .or_else(|| first_text(Role::User, false))
}

/// A message the harness wrote and sent as the user's, typed by nobody: Claude Code's `isMeta` lines, opencode's
/// synthetic text ("Summarize the task tool output above and continue with your task."), an Aider output sent
/// back to the model (a failed edit, lint or test errors) or added to its chat (a command's output). Exports fold
/// it with the harness's preamble.
pub fn said_by_harness(meta: &Value) -> bool {
    let flag = |k: &str| meta.get(k).and_then(Value::as_bool) == Some(true);
    flag("synthetic")
        || flag("reflected")
        || meta
            .get("lines")
            .and_then(Value::as_array)
            .is_some_and(|ls| {
                !ls.is_empty()
                    && ls
                        .iter()
                        .all(|l| l.get("isMeta").and_then(Value::as_bool) == Some(true))
            })
}

/// What a reply cost as its harness recorded it, in US dollars: pi's `usage.cost.total` (from pi's own price
/// list), opencode's `cost` (from models.dev's), Cline's request `cost` (from its own), mini-SWE-agent's `extra.cost`
/// and SWE-agent's run total (from litellm's). What prices a model no
/// catalog knows ([`crate::models::learn`]).
/// A harness that does not know the price, or serves the model under a subscription, records 0: no figure.
pub fn recorded_cost(meta: &Value) -> Option<f64> {
    let cost = match meta.get("source").and_then(Value::as_str)? {
        "pi" => meta
            .get("entry")
            .or_else(|| meta.get("line"))?
            .pointer("/message/usage/cost/total"),
        "opencode" => meta.pointer("/info/cost"),
        "cline" => meta.get("cost"),
        trajectories::mini_swe_agent::SOURCE => meta.pointer("/entry/extra/cost"),
        "swe-agent" => meta.pointer("/run_totals/cost"),
        _ => None,
    }?;
    cost.as_f64().filter(|c| *c > 0.0 && c.is_finite())
}

/// The kept records that say what a session cost so far, per model, as its harness priced it: Claude Code
/// 2.1.33x's `cost-state` (its record type, for [`crate::store::Store::kept_records`]).
pub const SESSION_COST_RECORD: &str = "cost-state";

/// What a session cost so far per model, as Claude Code recorded it (`cost-state`: each model's tokens and
/// `costUSD`, summed over the session's requests): (model as recorded, usage, US dollars). Nothing where Claude
/// Code priced a model it does not know (`hasUnknownModelCost`), and no model whose sum holds web searches (priced
/// per search, not per token) or no cost.
pub fn recorded_session_costs(record: &Value) -> Vec<(String, Usage, f64)> {
    if record.get("hasUnknownModelCost").and_then(Value::as_bool) == Some(true) {
        return Vec::new();
    }
    let Some(models) = record.get("modelUsage").and_then(Value::as_object) else {
        return Vec::new();
    };
    models
        .iter()
        .filter_map(|(model, u)| {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let cost = u.get("costUSD")?.as_f64().filter(|c| *c > 0.0)?;
            if n("webSearchRequests") > 0 {
                return None;
            }
            let usage = Usage {
                input_tokens: n("inputTokens"),
                output_tokens: n("outputTokens"),
                cache_read_input_tokens: n("cacheReadInputTokens"),
                cache_creation_input_tokens: n("cacheCreationInputTokens"),
                cache_creation_1h_input_tokens: n("cacheCreationEphemeral1hInputTokens"),
                ..Usage::default()
            };
            Some((model.clone(), usage, cost))
        })
        .collect()
}

/// The first line of a text, at most 80 characters.
pub fn short_title(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    let mut t: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        t.push('…');
    }
    t
}

/// Depth of each message of a read tree (a root has depth 0; parents come before their children).
pub fn depths(messages: &[ImportedMessage]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(messages.len());
    for m in messages {
        let d = m.parent.and_then(|p| out.get(p)).map_or(0, |d| d + 1);
        out.push(d);
    }
    out
}

/// A block a reader does not model, kept so it round-trips: an object with a string `type` verbatim; anything else
/// (a block that is not an object, or whose `type` is not a string) wrapped as `{"type": "unknown", "value": ...}`,
/// so the store never holds a block it cannot read back. Providers are never sent either.
pub fn unknown_block(v: &Value) -> Block {
    if v.as_object()
        .is_some_and(|o| o.get("type").is_some_and(Value::is_string))
    {
        Block::Other(v.clone())
    } else {
        Block::Other(serde_json::json!({"type": "unknown", "value": v}))
    }
}

/// Messages in file order as one chain, each the child of the one before (readers of harnesses without a tree).
pub(crate) fn chain(messages: Vec<NewMessage>) -> Vec<crate::store::ImportedMessage> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, message)| crate::store::ImportedMessage {
            parent: i.checked_sub(1),
            message,
        })
        .collect()
}

/// The text of a content value as readers meet it: a string, or an array of parts with `text` (or strings).
pub(crate) fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A Responses API reasoning item as thinking: its summary's text, signed by its encrypted form (what a harness sends
/// back whole).
pub(crate) fn reasoning_item(item: &Value) -> Block {
    Block::Thinking {
        thinking: text_of(item.get("summary")),
        signature: item
            .get("encrypted_content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    }
}

/// The reasoning litellm gives a Chat Completions message beside its content (`reasoning_content`), unsigned.
pub(crate) fn reasoning_content(m: &Value) -> Option<Block> {
    let t = m
        .get("reasoning_content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())?;
    Some(Block::Thinking {
        thinking: t.to_string(),
        signature: None,
    })
}

/// A tool call's input from the arguments a model wrote: a JSON string read as the JSON it holds (kept as the
/// string where it holds none), anything else as it is.
pub(crate) fn call_input(args: &Value) -> Value {
    match args {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        v => v.clone(),
    }
}

/// A text message with metadata, for readers.
pub(crate) fn note(role: Role, text: impl Into<String>, meta: Value) -> NewMessage {
    let mut m = NewMessage::text(role, text);
    m.meta = meta;
    m
}

/// Milliseconds since the epoch from an ISO-8601 timestamp (`2026-05-23T04:55:53.106Z`) or a number.
pub(crate) fn timestamp_ms(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => parse_iso8601(s),
        _ => None,
    }
}

/// An RFC 3339 / ISO 8601 time in epoch milliseconds; one without an offset (OpenHands writes them so) is UTC.
fn parse_iso8601(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t.as_millisecond());
    }
    let dt: jiff::civil::DateTime = s.parse().ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_jsonl_read_in_two_halves_numbers_its_lines_and_errors_as_one_read_would() {
        let line = format!("{{\"n\":0,\"pad\":\"{}\"}}", "x".repeat(1000));
        let mut text = String::new();
        for i in 0..3000 {
            if i % 7 == 3 {
                text.push_str("  \r\n"); // a blank line is skipped but counted
            }
            text.push_str(&line.replacen("0", &i.to_string(), 1));
            text.push('\n');
        }
        assert!(text.len() > 2 << 20);
        let lines = jsonl_from(Path::new("f.jsonl"), text.as_bytes(), 5).unwrap();
        assert_eq!(lines.len(), 3000);
        for (k, (n, v)) in lines.iter().enumerate() {
            assert_eq!(v["n"], k as u64);
            let blanks = (0..=k).filter(|i| i % 7 == 3).count();
            assert_eq!(*n, 5 + k + blanks, "line of value {k}");
        }
        // a bad line in each half: the first in the file is the one named
        let mut bad: Vec<&str> = text.lines().collect();
        let last = bad.len() - 10;
        bad[last] = "{not json";
        let joined = bad.join("\n");
        let e = jsonl_from(Path::new("f.jsonl"), joined.as_bytes(), 1).unwrap_err();
        assert_eq!(e.line, last + 1);
        bad[20] = "{also not";
        let joined = bad.join("\n");
        let e = jsonl_from(Path::new("f.jsonl"), joined.as_bytes(), 1).unwrap_err();
        assert_eq!(e.line, 21);
    }

    #[test]
    fn iso_timestamps_parse_to_epoch_ms() {
        assert_eq!(parse_iso8601("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_iso8601("2026-05-23T04:55:53.106Z"),
            Some(1_779_512_153_106)
        );
        assert_eq!(
            parse_iso8601("2026-05-23T06:55:53.106+02:00"),
            Some(1_779_512_153_106)
        );
        assert_eq!(parse_iso8601("yesterday"), None);
    }

    #[test]
    fn glued_objects_and_missing_newline_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        std::fs::write(&p, "{\"a\":1}{\"a\":2}\n\n{\"a\":3}").unwrap();
        let lines = read_jsonl(&p).unwrap();
        assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), vec![1, 1, 3]);
        std::fs::write(&p, "{\"a\":1}\n{\"a\":\n").unwrap();
        let e = read_jsonl(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}:2: not JSON", p.display())),
            "{e}"
        );
    }
}
