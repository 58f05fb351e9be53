//! The plan as a pi session (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`), version 3 as pi writes it: a
//! `session` header, then entries with 8-hex `id`/`parentId`: `message` entries (user, assistant with `toolCall`
//! blocks, usage and cost, one `toolResult` per result), a `model_change` where the model changes, a
//! `compaction` whose summary pi sends in place of everything before it (`firstKeptEntryId` names the entry after
//! it, so pi keeps nothing before and sends everything after), snapshot pages as a `custom_message` (pi sends it
//! to the model; a compaction's summary is text only), the title as `session_info`.

use serde_json::{Value, json};

use super::{AgentFile, Compaction, Harness, Item, Plan};
use crate::formats::pi::{COMPACTION_PREFIX, COMPACTION_SUFFIX, SNAPSHOT_TYPE};
use crate::model::{Block, Message, Role, ToolResultContent, Usage};

/// The folder pi keeps a working folder's sessions in.
pub(super) fn folder(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// pi's file-name time: its ISO time with `:` and `.` replaced.
pub(super) fn file_time(ms: i64) -> String {
    super::iso(ms).replace([':', '.'], "-")
}

struct Writer {
    ids: std::collections::HashSet<String>,
    prev: Option<String>,
    out: String,
    model: Option<String>,
    left_out: usize,
    /// Failed replies the source sent again, written as ended (pi now leaves a failed one out).
    sent_again: usize,
    /// The id the next entry takes, where a record named it ahead (a compaction's first kept entry).
    reserved: Option<String>,
    /// The first entry written for each message, by message id (what a compaction keeps from).
    entry_of: std::collections::HashMap<String, String>,
    /// The message being written.
    current: Option<String>,
    redact: bool,
    redacted: usize,
}

impl Writer {
    /// A new 8-hex id, unique in the file (pi's `generateId`).
    fn fresh(&mut self) -> String {
        loop {
            let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
            if self.ids.insert(id.clone()) {
                return id;
            }
        }
    }

    fn entry(&mut self, ty: &str, at: i64, fields: Value) {
        let id = match self.reserved.take() {
            Some(r) => r,
            None => self.fresh(),
        };
        self.entry_as(id, ty, at, fields);
    }

    fn entry_as(&mut self, id: String, ty: &str, at: i64, fields: Value) {
        if let Some(m) = self.current.take() {
            self.entry_of.entry(m).or_insert_with(|| id.clone());
        }
        let mut v =
            json!({"type": ty, "id": id, "parentId": self.prev, "timestamp": super::iso(at)});
        if let (Some(o), Value::Object(f)) = (v.as_object_mut(), fields) {
            o.extend(f);
        }
        self.out.push_str(&v.to_string());
        self.out.push('\n');
        self.prev = Some(id);
    }

    fn message(&mut self, at: i64, message: Value) {
        self.entry("message", at, json!({ "message": message }));
    }

    /// A message pi recorded in a form of its own (a `bashExecution` the user ran, a custom message), as it was.
    fn own_form(&mut self, m: &Message) -> bool {
        let Some(mut own) = m
            .meta
            .pointer("/entry/message")
            .filter(|e| e.get("role").and_then(Value::as_str) == Some("bashExecution"))
            .cloned()
        else {
            return false;
        };
        if self.redact {
            self.redacted += crate::redact::value(&mut own);
        }
        self.message(m.created_at, own);
        true
    }

    fn user(&mut self, m: &Message, names: &std::collections::HashMap<String, String>) {
        let (results, rest) = super::split_results(&m.content);
        for r in results {
            if let Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } = r
            {
                let inner = match content {
                    ToolResultContent::Text(t) => vec![json!({"type": "text", "text": t})],
                    ToolResultContent::Blocks(bs) => {
                        bs.iter().filter_map(|b| self.part(b)).collect()
                    }
                };
                self.message(
                    m.created_at,
                    json!({
                        "role": "toolResult",
                        "toolCallId": tool_use_id,
                        "toolName": names.get(tool_use_id).map_or("tool", String::as_str),
                        "content": inner,
                        "isError": is_error,
                        "timestamp": m.created_at,
                    }),
                );
            }
        }
        let parts: Vec<Value> = rest.iter().filter_map(|b| self.part(b)).collect();
        if parts.is_empty() {
            return;
        }
        if super::is_compact_summary(m) {
            // a compaction's pages read back: pi's record for them again
            self.entry(
                "custom_message",
                m.created_at,
                json!({"customType": SNAPSHOT_TYPE, "content": parts, "display": true}),
            );
            return;
        }
        self.message(
            m.created_at,
            json!({"role": "user", "content": content_of(parts), "timestamp": m.created_at}),
        );
    }

    /// A text or image part (what pi's user messages and results hold); others are left out.
    fn part(&mut self, b: &Block) -> Option<Value> {
        match b {
            Block::Text { text } => Some(json!({"type": "text", "text": text})),
            Block::Image { media_type, data } => super::image_base64(data)
                .map(|d| json!({"type": "image", "data": d, "mimeType": media_type})),
            _ => {
                self.left_out += 1;
                None
            }
        }
    }

    /// A reply's `stopReason`: the source's own, but pi leaves a reply that stopped on an error or was aborted out
    /// of every request after it, so one the source sent again (an older pi's, Claude Code's API errors) is
    /// written as ended, and pi sends it as it was sent.
    fn stop_reason(&mut self, m: &Message, recorded: Option<Value>) -> Value {
        let not_sent = crate::model::CairnMeta::not_sent_again(&m.meta);
        let own = recorded.filter(|s| not_sent || !matches!(s.as_str(), Some("error" | "aborted")));
        if own.is_none() && super::failed(m) && !not_sent {
            self.sent_again += 1;
        }
        own.unwrap_or_else(|| {
            json!(if not_sent {
                "error"
            } else if m.content.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
                "toolUse"
            } else {
                "stop"
            })
        })
    }

    fn reply(&mut self, m: &Message, plan: &Plan) {
        let extras = m
            .meta
            .get("block_extras")
            .and_then(Value::as_object)
            .filter(|_| plan.source == "pi");
        let mut content: Vec<Value> = Vec::new();
        for (i, b) in m.content.iter().enumerate() {
            let mut v = match b {
                Block::Text { text } => json!({"type": "text", "text": text}),
                Block::Thinking {
                    thinking,
                    signature,
                } => {
                    let mut t = json!({"type": "thinking", "thinking": thinking});
                    if let Some(s) = signature {
                        t["thinkingSignature"] = json!(s);
                    }
                    t
                }
                Block::ToolUse { id, name, input } => {
                    json!({"type": "toolCall", "id": id, "name": name, "arguments": input})
                }
                _ => {
                    self.left_out += 1;
                    continue;
                }
            };
            if let (Some(Value::Object(x)), Some(o)) = (
                extras.and_then(|e| e.get(&i.to_string())),
                v.as_object_mut(),
            ) {
                o.extend(x.clone());
            }
            content.push(v);
        }
        let model = super::model_of(m, plan).to_string();
        let recorded = m
            .meta
            .pointer("/entry/message")
            .filter(|_| plan.source == "pi");
        let from = |k: &str| recorded.and_then(|r| r.get(k)).cloned();
        let provider = from("provider").unwrap_or_else(|| {
            json!(crate::models::catalog::provider_of(&model).unwrap_or_else(|| "unknown".into()))
        });
        let api = from("api").unwrap_or_else(|| {
            json!(match provider.as_str().unwrap_or("") {
                "anthropic" => "anthropic-messages",
                "openai" => "openai-responses",
                "google" => "google-generative-ai",
                _ => "openai-completions",
            })
        });
        if self.model.as_deref() != Some(model.as_str()) {
            self.entry(
                "model_change",
                m.created_at,
                json!({"provider": provider, "modelId": model}),
            );
            self.model = Some(model.clone());
        }
        let stop = self.stop_reason(m, from("stopReason"));
        let usage = m.usage.filter(Usage::is_one_request).unwrap_or_default();
        let cost = from("usage")
            .and_then(|u| u.get("cost").cloned())
            .unwrap_or_else(|| cost_of(&model, &usage, m.created_at));
        let mut msg = json!({
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": {
                "input": usage.input_tokens,
                "output": usage.output_tokens,
                "cacheRead": usage.cache_read_input_tokens,
                "cacheWrite": usage.cache_creation_input_tokens,
                "totalTokens": usage.prompt() + usage.output_tokens,
                "cost": cost,
            },
            "stopReason": stop,
            "timestamp": m.created_at,
        });
        if let Some(mut e) = from("errorMessage") {
            // a provider's error can quote the key it refused
            if self.redact {
                self.redacted += crate::redact::value(&mut e);
            }
            msg["errorMessage"] = e;
        }
        self.message(m.created_at, msg);
    }

    fn compaction(&mut self, c: &Compaction, at: i64) {
        let (text, images): (Vec<&Block>, Vec<&Block>) = c
            .summary
            .iter()
            .partition(|b| matches!(b, Block::Text { .. }));
        let text: String = text
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        // a pi compaction read back travels with its own summary; another's summary read back is stored as pi
        // sends it: the wrapper comes off
        let own = c
            .marker
            .as_ref()
            .filter(|_| c.only_marker)
            .filter(|m| m.meta.get("source").and_then(Value::as_str) == Some("pi"))
            .and_then(|m| m.meta.pointer("/entry/summary"))
            .and_then(Value::as_str)
            .map(|s| {
                if c.redact {
                    crate::redact::text(s).0.into_owned()
                } else {
                    s.to_string()
                }
            });
        let text = own.unwrap_or(text);
        let text = text
            .strip_prefix(COMPACTION_PREFIX)
            .and_then(|t| t.strip_suffix(COMPACTION_SUFFIX))
            .map_or(text.clone(), str::to_string);
        let pages = c.pages && !images.is_empty();
        let summary = if pages {
            "The earlier conversation is drawn on the pages of the next message.".to_string()
        } else {
            text
        };
        let own = match self.reserved.take() {
            Some(r) => r,
            None => self.fresh(),
        };
        let kept = c
            .keeps_from
            .as_ref()
            .and_then(|m| self.entry_of.get(m))
            .cloned();
        let first_kept = kept.clone().unwrap_or_else(|| self.fresh());
        let mut fields = json!({"summary": summary, "firstKeptEntryId": first_kept,
                                "tokensBefore": c.tokens_before.unwrap_or(0)});
        if let Some(e) = c.marker.as_ref().and_then(|m| m.meta.get("entry")) {
            for k in ["details", "fromHook"] {
                if let Some(v) = e.get(k) {
                    fields[k] = v.clone();
                }
            }
        }
        self.entry_as(own, "compaction", at, fields);
        if kept.is_none() {
            self.reserved = Some(first_kept);
        }
        if pages {
            let parts: Vec<Value> = c.summary.iter().filter_map(|b| self.part(b)).collect();
            self.entry(
                "custom_message",
                at,
                json!({"customType": SNAPSHOT_TYPE, "content": parts, "display": true}),
            );
        }
    }
}

/// A user message's content: a string where it is one text, else parts.
fn content_of(parts: Vec<Value>) -> Value {
    match parts.as_slice() {
        [one] if one.get("type").and_then(Value::as_str) == Some("text") => one["text"].clone(),
        _ => Value::Array(parts),
    }
}

/// pi's cost record of a reply, from the model's prices (zero where it has none).
fn cost_of(model: &str, u: &Usage, at: i64) -> Value {
    let none = std::collections::BTreeMap::new();
    let rates = crate::models::price::per_million(model, &none).unwrap_or([0.0; 5]);
    let part = |n: u64, r: f64| n as f64 * r / 1e6;
    let (i, o, r, w) = (
        part(u.input_tokens, rates[0]),
        part(u.output_tokens, rates[1]),
        part(u.cache_read_input_tokens, rates[2]),
        part(u.cache_creation_input_tokens, rates[3]),
    );
    let total = crate::models::cost(model, u, at, &none).unwrap_or(i + o + r + w);
    json!({"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "total": total})
}

pub(super) fn write(plan: &mut Plan, redact: bool) -> AgentFile {
    let session = uuid::Uuid::now_v7().to_string();
    let mut w = Writer {
        ids: Default::default(),
        prev: None,
        out: String::new(),
        model: None,
        left_out: 0,
        sent_again: 0,
        reserved: None,
        entry_of: Default::default(),
        current: None,
        redact,
        redacted: 0,
    };
    let now = crate::store::now_ms();
    w.out.push_str(
        &json!({"type": "session", "version": 3, "id": session, "timestamp": super::iso(now), "cwd": plan.cwd})
            .to_string(),
    );
    w.out.push('\n');
    let names = super::tool_names(plan);
    if let Some(t) = &plan.title {
        let at = plan.messages().next().map_or(now, |m| m.created_at);
        w.entry("session_info", at, json!({ "name": t }));
    }
    let mut system = 0;
    let mut elisions = 0;
    let mut folded: Option<usize> = None;
    for (k, item) in plan.items.iter().enumerate() {
        match item {
            Item::Message(_) if folded == Some(k) => {}
            Item::Message(m) => {
                w.current = Some(m.id.clone());
                match m.role {
                    Role::Assistant => w.reply(m, plan),
                    Role::User | Role::Tool => {
                        if !(plan.source == "pi" && w.own_form(m)) {
                            w.user(m, &names)
                        }
                    }
                    Role::System => system += 1,
                }
            }
            Item::Compaction(c) => {
                let at = plan.record_time(k);
                match plan.summary_after(k, c) {
                    Some(own) => {
                        w.compaction(&own, at);
                        folded = Some(k + 1);
                    }
                    None => w.compaction(c, at),
                }
            }
            Item::Elision(_) => elisions += 1,
        }
    }
    let mut notes = Vec::new();
    if elisions > 0 {
        notes.push(
            "tool results cairn elides travel whole: pi has no record for an elision (the agent reads them)"
                .to_string(),
        );
    }
    if system > 0 {
        notes.push(format!(
            "{system} system message(s) left out: pi writes its own system prompt"
        ));
    }
    if w.left_out > 0 {
        notes.push(format!(
            "{} block(s) left out: pi's messages do not hold them",
            w.left_out
        ));
    }
    if w.sent_again > 0 {
        notes.push(format!(
            "{} failed reply(ies) the source sent again written as ended: pi leaves a failed reply out now",
            w.sent_again
        ));
    }
    AgentFile {
        harness: Harness::Pi,
        session_id: session,
        cwd: plan.cwd.clone(),
        text: w.out,
        beside: Vec::new(),
        notes,
        redacted: w.redacted,
    }
}
