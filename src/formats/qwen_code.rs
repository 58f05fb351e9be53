//! Qwen Code's sessions (`~/.qwen/projects/<project>/chats/<session id>.jsonl`; `~/.qwen/tmp/<project>/chats/`
//! before): an append-only log of records, one a line, that make a tree (`uuid`, `parentUuid`) as Claude Code's
//! do, but hold what Qwen Code sends in Gemini's shape (`message: {role, parts}`). Read as its `ChatRecordingService`
//! writes them:
//!
//! - `user` records are prompts (also the notifications, cron prompts and messages typed mid-turn it sends as the
//!   user's); `assistant` records are replies, one a model response: `text` parts, `thought` parts (thinking) and
//!   `functionCall` parts (tool uses), with the response's `usageMetadata`, `model` and the `contextWindowSize`
//!   Qwen Code ran the model with (kept as the conversation's `windows`, as Codex's is); `tool_result` records hold
//!   the `functionResponse` parts sent back (`response.output`, or `response.error`).
//! - `system` records are bookkeeping (titles, telemetry, slash commands, file history, ...), kept as metadata,
//!   except `chat_compression`: from there the model saw only the history it stored (`compressedHistory`: the
//!   summary turns and the kept tail), which becomes a compaction marker whose text is that history. A bookkeeping
//!   record sits in the parent chain, so a message after it hangs from the message before it.
//! - A rewind re-roots the chain: the records after it hang from an earlier one, and what was rewound stays as a
//!   branch. The session stands where its last record does (a rewind with nothing after it moves it back).
//! - Records a subagent wrote into the session (`isSidechain`) are kept as metadata, not as the session's path.
//!
//! `usageMetadata` is Gemini's (`promptTokenCount` the whole prompt with `cachedContentTokenCount` a part of it,
//! `candidatesTokenCount` without `thoughtsTokenCount`), but Qwen Code fills it from OpenAI-compatible APIs too,
//! whose converters differ on what includes what; `totalTokenCount` tells which reading a record was written with.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Value, json};

use super::gemini_cli::image_of;
use super::{FormatError, ImportReport, Parsed, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, harness_meta};
use crate::store::ImportedMessage;

/// Whether a line is one of Qwen Code's records (a tree record holding Gemini-shaped content or Qwen Code's own
/// fields; Claude Code's, the same tree, hold `message.content`).
pub fn is_qwen(v: &Value) -> bool {
    v.get("uuid").is_some_and(Value::is_string)
        && v.get("sessionId").is_some()
        && (v.pointer("/message/parts").is_some()
            || v.get("systemPayload").is_some()
            || v.get("usageMetadata").is_some()
            || v.get("type").and_then(Value::as_str) == Some("tool_result"))
}

/// A reply's usage from its `usageMetadata`, in the reading its `totalTokenCount` agrees with (Gemini's when it
/// gives none): whether the prompt count includes the cached tokens, and the output count the thoughts.
fn usage_of(u: &Value) -> Option<Usage> {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (prompt, cached, output, thoughts) = (
        n("promptTokenCount") + n("toolUsePromptTokenCount"),
        n("cachedContentTokenCount"),
        n("candidatesTokenCount"),
        n("thoughtsTokenCount"),
    );
    let sum = |(cached_in, thoughts_in): (bool, bool)| {
        prompt
            + if cached_in { 0 } else { cached }
            + output
            + if thoughts_in { 0 } else { thoughts }
    };
    let readings = [(true, false), (true, true), (false, false), (false, true)];
    let (cached_in, thoughts_in) = u
        .get("totalTokenCount")
        .and_then(Value::as_u64)
        .and_then(|t| readings.into_iter().find(|&r| sum(r) == t))
        .unwrap_or((true, false));
    let whole = prompt + if cached_in { 0 } else { cached };
    let cached = cached.min(whole);
    let usage = Usage {
        input_tokens: whole - cached,
        cache_read_input_tokens: cached,
        output_tokens: output + if thoughts_in { 0 } else { thoughts },
        ..Usage::default()
    };
    (usage != Usage::default()).then_some(usage)
}

/// What a function response sent back: its output (or error) as text, and whether it failed.
fn response_of(r: &Value) -> (String, bool) {
    r.get("response").map_or_else(
        || ("[no response recorded]".to_string(), false),
        super::gemini_cli::response_text,
    )
}

/// Reads the records of one session into messages.
#[derive(Default)]
struct Reader {
    messages: Vec<ImportedMessage>,
    /// Each record's message, or for a record that is none, the message its chain stands at.
    at: HashMap<String, Option<usize>>,
    /// The calls made and not yet answered, by name, for responses that name no call id.
    open_calls: Vec<(String, String)>,
    calls: usize,
    tip: Option<usize>,
    title: Option<String>,
    header: Option<Value>,
    windows: BTreeMap<String, u64>,
    records: Vec<Value>,
    report: ImportReport,
}

impl Reader {
    /// A content's parts as blocks.
    fn blocks(&mut self, parts: &[Value]) -> Vec<Block> {
        let mut out = Vec::new();
        for p in parts {
            if let Some(t) = p.get("text").and_then(Value::as_str) {
                if p.get("thought").and_then(Value::as_bool) == Some(true) {
                    out.push(Block::Thinking {
                        thinking: t.to_string(),
                        signature: None,
                    });
                } else if !t.is_empty() {
                    out.push(Block::text(t));
                }
            } else if let Some(c) = p.get("functionCall") {
                let name = c.get("name").and_then(Value::as_str).unwrap_or("tool");
                let id = c
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("qwen-call-{}", self.calls), str::to_string);
                self.calls += 1;
                self.open_calls.push((name.to_string(), id.clone()));
                out.push(Block::ToolUse {
                    id,
                    name: name.to_string(),
                    input: c.get("args").cloned().unwrap_or_else(|| json!({})),
                });
            } else if let Some(r) = p.get("functionResponse") {
                let name = r.get("name").and_then(Value::as_str).unwrap_or("");
                let id = match r.get("id").and_then(Value::as_str) {
                    Some(id) => id.to_string(),
                    None => self
                        .open_calls
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or_else(|| format!("qwen-response-{name}"), |(_, id)| id.clone()),
                };
                self.open_calls.retain(|(_, open)| *open != id);
                let (text, is_error) = response_of(r);
                out.push(Block::ToolResult {
                    tool_use_id: id,
                    content: ToolResultContent::Text(text),
                    is_error,
                });
            } else if let Some(image) = p.get("inlineData").and_then(image_of) {
                out.push(image);
            } else {
                out.push(super::unknown_block(p));
            }
        }
        out
    }

    /// The text of the history a compression kept: what the model read from there on.
    fn history_text(history: &[Value]) -> String {
        let mut out = Vec::new();
        for content in history {
            for p in content
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if p.get("thought").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push(t.to_string());
                } else if let Some(c) = p.get("functionCall") {
                    out.push(format!(
                        "[call {} {}]",
                        c.get("name").and_then(Value::as_str).unwrap_or("tool"),
                        c.get("args").unwrap_or(&Value::Null)
                    ));
                } else if let Some(r) = p.get("functionResponse") {
                    out.push(response_of(r).0);
                }
            }
        }
        out.join("\n\n")
    }

    /// The message a record's parent stands at: its own, or the one its chain reaches.
    fn parent_of(&mut self, no: usize, v: &Value) -> Option<usize> {
        let p = v.get("parentUuid").and_then(Value::as_str)?;
        match self.at.get(p) {
            Some(&at) => at,
            None => {
                self.report.notes.push(format!(
                    "line {no}: parent {p} is not in the file; placed after the message before"
                ));
                self.messages.len().checked_sub(1)
            }
        }
    }

    fn record(&mut self, no: usize, v: &Value) {
        let uuid = v
            .get("uuid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let parent = self.parent_of(no, v);
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        let subtype = v.get("subtype").and_then(Value::as_str);
        if self.header.is_none() {
            self.header = Some(json!({"id": v.get("sessionId"), "cwd": v.get("cwd"),
                                      "version": v.get("version"), "gitBranch": v.get("gitBranch")}));
        }
        let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let built = if sidechain {
            self.report.skip("subagent records (kept as metadata)");
            None
        } else {
            self.message(v, ty, subtype)
        };
        let at = match built {
            Some(mut nm) => {
                nm.meta["line"] = json!(no);
                nm.meta["entry"] = json!({"uuid": v.get("uuid"), "parentUuid": v.get("parentUuid"),
                                          "type": ty, "subtype": subtype});
                self.messages.push(ImportedMessage {
                    parent,
                    message: nm,
                });
                Some(self.messages.len() - 1)
            }
            None => {
                if !sidechain {
                    if subtype == Some("custom_title")
                        && let Some(t) = v
                            .pointer("/systemPayload/customTitle")
                            .and_then(Value::as_str)
                            .filter(|t| !t.trim().is_empty())
                    {
                        self.title = Some(super::short_title(t));
                    }
                    self.records.push(v.clone());
                }
                parent
            }
        };
        self.at.insert(uuid, at);
        if !sidechain {
            self.tip = at;
        }
    }

    /// A record as a message, or None for one the model never read (counted in the report).
    fn message(&mut self, v: &Value, ty: &str, subtype: Option<&str>) -> Option<NewMessage> {
        let at = timestamp_ms(v.get("timestamp"));
        if ty == "system" && subtype == Some("chat_compression") {
            let history = v
                .pointer("/systemPayload/compressedHistory")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let mut nm = NewMessage::text(Role::System, Self::history_text(history));
            nm.created_at = at;
            nm.meta = json!({"source": "qwen-code", "compression": v.pointer("/systemPayload/info"),
                             "cairn": harness_meta("qwen-code", Kept::Nothing, true)});
            return Some(nm);
        }
        let role = match ty {
            "user" | "tool_result" => Role::User,
            "assistant" => Role::Assistant,
            _ => {
                let kind = subtype.unwrap_or(if ty.is_empty() { "untyped" } else { ty });
                self.report
                    .skip(format!("{kind} records (kept as metadata)"));
                return None;
            }
        };
        let parts = v
            .pointer("/message/parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let blocks = self.blocks(&parts);
        if blocks.is_empty() {
            self.report
                .skip(format!("{ty} records without content (kept as metadata)"));
            return None;
        }
        let mut nm = NewMessage::new(role, blocks);
        nm.created_at = at;
        nm.meta = json!({"source": "qwen-code"});
        if role == Role::Assistant {
            let model = v.get("model").and_then(Value::as_str);
            nm.meta["model"] = json!(model);
            if let Some(u) = v.get("usageMetadata") {
                nm.usage = usage_of(u);
                nm.meta["usageMetadata"] = u.clone();
            }
            if let (Some(m), Some(w)) = (model, v.get("contextWindowSize").and_then(Value::as_u64))
                && w > 0
            {
                self.windows.insert(m.to_string(), w);
            }
        } else if let Some(s) = subtype {
            nm.meta["subtype"] = json!(s);
        }
        if let Some(r) = v.get("toolCallResult") {
            nm.meta["toolCallResult"] =
                json!({"status": r.get("status"), "callId": r.get("callId")});
        }
        Some(nm)
    }
}

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut r = Reader::default();
    for (no, v) in lines {
        r.record(*no, v);
    }
    if r.messages.is_empty() {
        return Err(FormatError::empty(
            path,
            lines.first().map_or(1, |l| l.0),
            "nothing to import: the Qwen Code session holds no prompt or reply yet",
        ));
    }
    let mut meta = json!({"source": "qwen-code", "header": r.header, "records": r.records});
    if !r.windows.is_empty() {
        meta["windows"] = json!(r.windows);
    }
    let title = r.title.or_else(|| super::title_of(&r.messages));
    Ok(Parsed {
        title,
        tip: r.tip.or(r.messages.len().checked_sub(1)),
        messages: r.messages,
        checkpoints: Vec::new(),
        meta,
        report: r.report,
        children: Vec::new(),
    })
}
