//! The plan as the document `opencode export` writes and `opencode import` reads (`{info, messages: [{info,
//! parts}]}`): opencode keeps its sessions in its own SQLite store, which only opencode writes, so a path goes
//! back through opencode's own import, which keeps every id. A prompt is a `user` message (its text and images as
//! `text` and `file` parts); a reply is an `assistant` message with its thinking as `reasoning` parts, its text,
//! its calls as `tool` parts each holding the result opencode sent back (`state.output`, or `state.error`; the
//! images a tool returned as `state.attachments`), and its usage as `tokens` on the message and its `step-finish`
//! part. A compaction is opencode's own: a `user` message with a `compaction` part (`tail_start_id` naming the
//! first message kept from before it) and the summary as the `assistant` reply marked `summary` after it;
//! opencode sends from the newest of them on (`filterCompacted`): "What did we do so far?", the summary, the kept
//! messages, what follows. A snapshot's pages go as images of that request. Results cairn elides are what
//! opencode's prune writes: the call's `state.time.compacted`, after which opencode sends
//! `[Old tool result content cleared]`.
//!
//! Ids are opencode's (`ses_`, `msg_`, `prt_` and twelve hex digits of time, descending for the session): opencode
//! orders a session's messages by their time and then id, and a message's parts by id.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use super::{AgentFile, Compaction, Harness, Item, Plan};
use crate::model::{Block, Message, Role, Usage};

/// What opencode sends for a call that never finished, and what cairn writes for a call never answered.
const INTERRUPTED: &str = "[Tool execution was interrupted]";

/// The base-62 digits of opencode's ids.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `n` random base-62 characters.
fn random62(n: usize) -> String {
    let mut out = String::with_capacity(n);
    while out.len() < n {
        for b in uuid::Uuid::new_v4().into_bytes() {
            if out.len() < n {
                out.push(BASE62[usize::from(b) % BASE62.len()] as char);
            }
        }
    }
    out
}

/// opencode's id of a time: the prefix, twelve hex digits of the time in milliseconds times 4096 plus a counter
/// (its low 48 bits; inverted for a descending id), fourteen random characters.
fn id_of(prefix: &str, value: u64, descending: bool) -> String {
    let v = if descending { !value } else { value };
    format!("{prefix}_{:012x}{}", v & 0xffff_ffff_ffff, random62(14))
}

/// The session's ascending ids, each after the one before.
#[derive(Default)]
struct Ids {
    last: u64,
}

impl Ids {
    fn next(&mut self, prefix: &str, ms: i64) -> String {
        let v = (u64::try_from(ms).unwrap_or(0) << 12).max(self.last + 1);
        self.last = v;
        id_of(prefix, v, false)
    }
}

/// A model name as opencode's provider and model ids: `provider/model` as opencode recorded it, else the model
/// under the provider whose models it looks like.
fn provider_and_model(name: &str) -> (String, String) {
    if let Some((p, m)) = name.split_once('/')
        && !p.is_empty()
        && !m.is_empty()
    {
        return (p.to_string(), m.to_string());
    }
    let provider =
        crate::models::catalog::provider_of(name).unwrap_or_else(|| "unknown".to_string());
    (provider, name.to_string())
}

struct Writer {
    session: String,
    cwd: String,
    ids: Ids,
    /// The time of the newest message written (opencode orders messages by time).
    clock: i64,
    messages: Vec<Value>,
    /// The newest prompt's id: the parent of the replies after it.
    parent: Option<String>,
    /// The model the prompts name (the newest reply's).
    model: (String, String),
    /// The newest reply's calls waiting for their results, in order: (call id, message, part) (a call id can
    /// repeat where a file's were redacted).
    waiting: Vec<(String, usize, usize)>,
    /// Each call's part, by call id (what an elision stamps).
    calls: HashMap<String, (usize, usize)>,
    /// The opencode message holding each of cairn's messages, by cairn's id (what a compaction keeps from).
    holder: HashMap<String, String>,
    left_out: usize,
    system: usize,
    empty_measured: usize,
    stray: usize,
    /// Calls that never got a result.
    unanswered: usize,
}

/// A block as a part of a prompt: text, or an image as a file part holding its data (None for what a prompt's
/// parts cannot hold).
fn prompt_part(b: &Block) -> Option<Value> {
    match b {
        Block::Text { text } => Some(json!({"type": "text", "text": text})),
        Block::Image { .. } => file_part(b),
        _ => None,
    }
}

/// An image as opencode's file part, its data in a `data:` URL.
fn file_part(b: &Block) -> Option<Value> {
    let Block::Image { media_type, data } = b else {
        return None;
    };
    let d = super::image_base64(data)?;
    let ext = media_type.rsplit('/').next().unwrap_or("png");
    Some(
        json!({"type": "file", "mime": media_type, "filename": format!("image.{ext}"),
                "url": format!("data:{media_type};base64,{d}")}),
    )
}

/// Where a reply's thinking keeps the provider's own form of it, by the provider opencode sends it to.
fn reasoning_metadata(provider: &str, signature: &str) -> Option<Value> {
    match provider {
        "anthropic" => Some(json!({"anthropic": {"signature": signature}})),
        "github-copilot" => Some(json!({"copilot": {"reasoningOpaque": signature}})),
        "openai" | "opencode" => Some(json!({provider: {"reasoningEncryptedContent": signature}})),
        _ => None,
    }
}

fn tokens(u: Option<Usage>) -> Value {
    let u = u.unwrap_or_default();
    json!({"total": u.prompt().saturating_add(u.output_tokens), "input": u.input_tokens,
           "output": u.output_tokens, "reasoning": 0,
           "cache": {"read": u.cache_read_input_tokens, "write": u.cache_creation_input_tokens}})
}

impl Writer {
    /// The time of the next message: its own, never before the one written before it.
    fn tick(&mut self, at: i64) -> i64 {
        self.clock = self.clock.max(at);
        self.clock
    }

    /// Adds a message with its parts (each given its ids), and returns its id.
    fn push(&mut self, mut info: Value, parts: Vec<Value>, at: i64) -> String {
        let id = self.ids.next("msg", at);
        info["id"] = json!(id);
        info["sessionID"] = json!(self.session);
        let parts: Vec<Value> = parts
            .into_iter()
            .map(|mut p| {
                self.part_ids(&mut p, &id, at);
                p
            })
            .collect();
        self.messages.push(json!({"info": info, "parts": parts}));
        id
    }

    fn part_ids(&mut self, p: &mut Value, message: &str, at: i64) {
        p["id"] = json!(self.ids.next("prt", at));
        p["sessionID"] = json!(self.session);
        p["messageID"] = json!(message);
    }

    fn prompt(&mut self, parts: Vec<Value>, at: i64) -> String {
        let at = self.tick(at);
        let info = json!({"role": "user", "time": {"created": at}, "agent": "build",
                          "model": {"providerID": self.model.0, "modelID": self.model.1}});
        let id = self.push(info, parts, at);
        self.parent = Some(id.clone());
        id
    }

    fn user(&mut self, m: &Message) {
        let (results, rest) = super::split_results(&m.content);
        // a result whose call is not waiting for one (never written so by a harness) has no call to go in: it is
        // sent as the prompt's text
        let mut stray: Vec<Value> = Vec::new();
        for r in results.into_iter().filter_map(super::result_parts) {
            let images: Vec<Value> = r.images.iter().filter_map(|b| file_part(b)).collect();
            let found = self.waiting.iter().position(|(c, ..)| c == r.call);
            let Some((_, mi, pi)) = found.map(|k| self.waiting.remove(k)) else {
                self.stray += 1;
                stray.push(json!({"type": "text", "text": r.as_prompt_text()}));
                stray.extend(images);
                continue;
            };
            let msg_id = self.messages[mi]["info"]["id"].clone();
            let at = self.tick(m.created_at);
            let part = &mut self.messages[mi]["parts"][pi];
            let start = part
                .pointer("/state/time/start")
                .cloned()
                .unwrap_or(json!(at));
            let input = part.pointer("/state/input").cloned().unwrap_or(json!({}));
            part["state"] = if r.is_error {
                json!({"status": "error", "input": input, "error": r.text,
                       "time": {"start": start, "end": at}})
            } else {
                json!({"status": "completed", "input": input, "output": r.text, "title": "",
                       "metadata": {}, "time": {"start": start, "end": at}})
            };
            if !images.is_empty() {
                let mut images = images;
                for a in &mut images {
                    a["id"] = json!(self.ids.next("prt", at));
                    a["sessionID"] = json!(self.session);
                    a["messageID"] = msg_id.clone();
                }
                self.messages[mi]["parts"][pi]["state"]["attachments"] = Value::Array(images);
            }
            if let Some(id) = msg_id.as_str() {
                self.holder.insert(m.id.clone(), id.to_string());
            }
        }
        let own: Vec<Value> = rest.iter().filter_map(|b| prompt_part(b)).collect();
        self.left_out += rest.len() - own.len();
        let parts: Vec<Value> = stray.into_iter().chain(own).collect();
        if parts.is_empty() {
            return;
        }
        let id = self.prompt(parts, m.created_at);
        self.holder.insert(m.id.clone(), id);
    }

    /// A reply's parts for `provider` (where it keeps a reasoning's signature), or None when it holds nothing
    /// opencode keeps.
    fn reply_parts(&mut self, m: &Message, at: i64, provider: &str) -> Option<Vec<Value>> {
        let mut parts = vec![json!({"type": "step-start"})];
        for b in &m.content {
            match b {
                Block::Text { text } if !text.trim().is_empty() => {
                    parts.push(json!({"type": "text", "text": text,
                                      "time": {"start": at, "end": at}}));
                }
                Block::Text { .. } => {}
                Block::Thinking {
                    thinking,
                    signature,
                } => {
                    let mut p = json!({"type": "reasoning", "text": thinking,
                                       "time": {"start": at, "end": at}});
                    if let Some(meta) = signature
                        .as_deref()
                        .and_then(|s| reasoning_metadata(provider, s))
                    {
                        p["metadata"] = meta;
                    }
                    parts.push(p);
                }
                Block::ToolUse { id, name, input } => {
                    // a call's input is an object; a custom tool's string input goes as its one argument
                    let input = match input {
                        Value::Object(_) => input.clone(),
                        other => json!({"input": other}),
                    };
                    parts.push(json!({"type": "tool", "callID": id, "tool": name,
                                      "state": {"status": "error", "input": input, "error": INTERRUPTED,
                                                "metadata": {"interrupted": true},
                                                "time": {"start": at, "end": at}}}));
                }
                _ => self.left_out += 1,
            }
        }
        (parts.len() > 1).then_some(parts)
    }

    fn reply(&mut self, m: &Message, plan: &Plan, summary: bool) {
        let at = self.tick(m.created_at);
        let usage = m.usage.filter(Usage::is_one_request);
        let (provider, model) = provider_and_model(super::model_of(m, plan));
        let Some(mut parts) = self.reply_parts(m, at, &provider) else {
            if usage.is_some() {
                self.empty_measured += 1;
            }
            return;
        };
        self.model = (provider.clone(), model.clone());
        let has_calls = parts.iter().any(|p| p["type"] == "tool");
        let finish = if has_calls { "tool-calls" } else { "stop" };
        // the cost opencode recorded, where the reply is opencode's
        let cost = m
            .meta
            .pointer("/info/cost")
            .filter(|_| plan.source == "opencode")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        parts.push(
            json!({"type": "step-finish", "reason": finish, "cost": cost, "tokens": tokens(usage)}),
        );
        let parent = match &self.parent {
            Some(p) => p.clone(),
            // a path that starts with a reply: its parent is a prompt the session does not hold
            None => self.ids.next("msg", at),
        };
        let mode = if summary { "compaction" } else { "build" };
        let mut info = json!({"role": "assistant", "time": {"created": at, "completed": at},
                              "parentID": parent, "modelID": model, "providerID": provider,
                              "mode": mode, "agent": mode, "path": {"cwd": self.cwd, "root": self.cwd},
                              "cost": cost, "tokens": tokens(usage), "finish": finish});
        if summary {
            info["summary"] = json!(true);
        }
        // a reply the source recorded as failed: opencode leaves a reply with an error out of what it sends
        if crate::model::CairnMeta::not_sent_again(&m.meta) {
            info["error"] =
                json!({"name": "UnknownError", "data": {"message": "the reply failed"}});
        }
        let index = self.messages.len();
        let calls: Vec<(usize, String)> = parts
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p["callID"].as_str().map(|c| (k, c.to_string())))
            .collect();
        let id = self.push(info, parts, at);
        self.holder.insert(m.id.clone(), id);
        self.stop_waiting();
        for (k, call) in calls {
            self.waiting.push((call.clone(), index, k));
            self.calls.insert(call, (index, k));
        }
    }

    /// The calls still waiting for a result get none: they stay interrupted.
    fn stop_waiting(&mut self) {
        self.unanswered += self.waiting.len();
        self.waiting.clear();
    }

    /// opencode's compaction request: the summary's images, then the `compaction` part.
    fn request(&mut self, c: &Compaction, at: i64) -> String {
        let mut parts: Vec<Value> = c.summary.iter().filter_map(file_part).collect();
        let mut part = json!({"type": "compaction", "auto": true, "overflow": false});
        if let Some(tail) = c.keeps_from.as_ref().and_then(|k| self.holder.get(k)) {
            part["tail_start_id"] = json!(tail);
        }
        parts.push(part);
        self.stop_waiting();
        self.prompt(parts, at)
    }

    /// A compaction: the request and the summary as the reply to it.
    fn compaction(&mut self, c: &Compaction, at: i64) {
        self.request(c, at);
        let text: Vec<&str> = c
            .summary
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let text = if text.is_empty() {
            "[The conversation before this point was compacted; no summary of it was recorded.]"
                .to_string()
        } else {
            text.join("\n\n")
        };
        let at = self.tick(at);
        let parent = self.parent.clone().unwrap_or_default();
        let info = json!({"role": "assistant", "time": {"created": at, "completed": at},
                          "parentID": parent, "modelID": self.model.1, "providerID": self.model.0,
                          "mode": "compaction", "agent": "compaction", "summary": true,
                          "path": {"cwd": self.cwd, "root": self.cwd}, "cost": 0, "tokens": tokens(None),
                          "finish": "stop"});
        let parts = vec![
            json!({"type": "step-start"}),
            json!({"type": "text", "text": text, "time": {"start": at, "end": at}}),
            json!({"type": "step-finish", "reason": "stop", "cost": 0, "tokens": tokens(None)}),
        ];
        self.push(info, parts, at);
    }

    /// The results of these calls cleared from the context from `at` on (opencode's prune).
    fn elide(&mut self, calls: &[String], at: i64) {
        for c in calls {
            let Some(&(mi, pi)) = self.calls.get(c) else {
                continue;
            };
            let state = &mut self.messages[mi]["parts"][pi]["state"];
            if state["status"] == "completed" {
                state["time"]["compacted"] = json!(at);
            }
        }
    }

    /// What could not travel as cairn had it.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let counted = [
            (
                self.system,
                "system message(s) left out: opencode writes its own system prompt",
            ),
            (
                self.left_out,
                "block(s) left out: opencode's messages do not hold them",
            ),
            (
                self.empty_measured,
                "reply(ies) with nothing opencode keeps left out, and their usage with them",
            ),
            (
                self.unanswered,
                "call(s) were never answered: opencode sends them as interrupted",
            ),
            (
                self.stray,
                "result(s) sent as text: their call is not waiting for one",
            ),
        ];
        for (n, what) in counted {
            if n > 0 {
                notes.push(format!("{n} {what}"));
            }
        }
        if self.model.0 == "unknown" {
            notes.push(format!(
                "no provider is known for the model {}: opencode resumes with the one it is told \
                 (`opencode --session ID -m provider/model`)",
                self.model.1
            ));
        }
        notes
    }
}

/// Whether a path message is the summary reply opencode's compaction asked for (`summary` on an opencode reply).
fn is_summary_reply(m: &Message) -> bool {
    m.role == Role::Assistant && m.meta.pointer("/info/summary") == Some(&json!(true))
}

pub(super) fn write(plan: &mut Plan) -> AgentFile {
    let now = crate::store::now_ms();
    let start = plan.messages().next().map_or(now, |m| m.created_at);
    let session = id_of("ses", u64::try_from(now).unwrap_or(0) << 12, true);
    let model = plan.model.clone().unwrap_or_else(|| "unknown".to_string());
    let mut w = Writer {
        session: session.clone(),
        cwd: plan.cwd.clone(),
        ids: Ids::default(),
        clock: start,
        messages: Vec::new(),
        parent: None,
        model: provider_and_model(&model),
        waiting: Vec::new(),
        calls: HashMap::new(),
        holder: HashMap::new(),
        left_out: 0,
        system: 0,
        empty_measured: 0,
        stray: 0,
        unanswered: 0,
    };
    // the item handled already: a harness summary written as the compaction's own (opencode's summary reply,
    // another harness's summary prompt)
    let mut done: HashSet<usize> = HashSet::new();
    for (k, item) in plan.items.iter().enumerate() {
        if done.contains(&k) {
            continue;
        }
        match item {
            Item::Message(m) => match m.role {
                // opencode's own compaction read in: its request goes before the summary reply, which stays
                Role::Assistant
                    if is_summary_reply(m)
                        && matches!(plan.items.get(k + 1),
                                    Some(Item::Compaction(c)) if c.only_marker) =>
                {
                    if let Some(Item::Compaction(c)) = plan.items.get(k + 1) {
                        let mut own = c.clone();
                        own.summary.retain(|b| matches!(b, Block::Image { .. }));
                        w.request(&own, m.created_at);
                        w.reply(m, plan, true);
                        done.insert(k + 1);
                    }
                }
                Role::Assistant => w.reply(m, plan, false),
                Role::User | Role::Tool => w.user(m),
                Role::System => w.system += 1,
            },
            Item::Compaction(c) => {
                let at = plan.record_time(k);
                match plan.summary_after(k, c) {
                    Some(own) => {
                        w.compaction(&own, at);
                        done.insert(k + 1);
                    }
                    None => w.compaction(c, at),
                }
            }
            Item::Elision(calls) => {
                // before the next message (opencode places a prune after the messages written before it)
                let at = (plan.record_time(k) - 1).max(w.clock);
                w.elide(calls, at);
            }
        }
    }
    w.stop_waiting();
    let notes = w.notes();
    let updated = w.clock.max(start);
    let slug = format!("cairn-{}", &random62(6).to_lowercase());
    let mut info = json!({"id": session, "slug": slug, "projectID": "global", "directory": plan.cwd,
                          "title": plan.title.clone().unwrap_or_else(|| "continued from cairn".to_string()),
                          "version": plan.source_version.clone().filter(|_| plan.source == "opencode")
                              .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
                          "time": {"created": start, "updated": updated}});
    if w.model.0 != "unknown" {
        info["model"] = json!({"id": w.model.1, "providerID": w.model.0});
    }
    let doc = json!({"info": info, "messages": w.messages});
    AgentFile {
        harness: Harness::Opencode,
        session_id: session,
        cwd: plan.cwd.clone(),
        text: serde_json::to_string_pretty(&doc).unwrap_or_default(),
        beside: Vec::new(),
        notes,
        redacted: 0,
    }
}
