//! The plan as a Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`): `{timestamp, type,
//! payload}` lines as Codex writes them: `session_meta` (forked from the source thread where it was one), a
//! `turn_context` naming the model wherever it changes, `response_item`s (messages, encrypted reasoning carried
//! from a Codex source, function and custom tool calls with their outputs), the `event_msg`s Codex shows a resumed
//! thread from (prompts, replies, `token_count` usage), and a compaction as `compacted` whose replacement history
//! is what cairn sends in place of everything before it (pages as `input_image`s).

use serde_json::{Value, json};

use super::{AgentFile, Compaction, Harness, Item, Plan};
use crate::model::{Block, Message, Role, ToolResultContent, Usage};

/// The rollout layout written, where the source was not a Codex session that names its own version.
const LAYOUT_VERSION: &str = "0.140.0";

struct Writer {
    out: String,
    /// The model and service tier of the latest `turn_context` written.
    model: Option<(String, Option<String>)>,
    cwd: String,
    total: Usage,
    /// Calls made as custom tools (their input a string), whose outputs are custom too.
    custom: std::collections::HashSet<String>,
    left_out: usize,
    thinking_left_out: usize,
    /// Web searches of replies of other harnesses, which Codex has no item for.
    searches_left_out: usize,
}

/// The response items of type `ty` a reply read from a Codex rollout kept in its lines, as Codex recorded them (none
/// for another source's reply).
fn own_items<'a>(m: &'a Message, plan: &Plan, ty: &'a str) -> impl Iterator<Item = Value> + 'a {
    let codex = plan.source == "codex";
    m.meta
        .get("lines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |l| codex && l.pointer("/payload/type").and_then(Value::as_str) == Some(ty))
        .filter_map(|l| l.get("payload").cloned())
}

fn data_url(media_type: &str, data: &crate::model::ImageData) -> Option<String> {
    super::image_base64(data).map(|d| format!("data:{media_type};base64,{d}"))
}

impl Writer {
    fn line(&mut self, at: i64, ty: &str, payload: Value) {
        self.out.push_str(
            &json!({"timestamp": super::iso(at), "type": ty, "payload": payload}).to_string(),
        );
        self.out.push('\n');
    }

    /// Input parts of a user or developer message: texts and images.
    fn inputs(&mut self, blocks: &[&Block]) -> Vec<Value> {
        blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(json!({"type": "input_text", "text": text})),
                Block::Image { media_type, data } => data_url(media_type, data)
                    .map(|u| json!({"type": "input_image", "image_url": u})),
                _ => {
                    self.left_out += 1;
                    None
                }
            })
            .collect()
    }

    fn user(&mut self, m: &Message, role: &str) {
        let (results, rest) = super::split_results(&m.content);
        for r in results {
            let Block::ToolResult {
                tool_use_id,
                content,
                ..
            } = r
            else {
                continue;
            };
            let output = match content {
                ToolResultContent::Text(t) => json!(t),
                ToolResultContent::Blocks(bs)
                    if bs.iter().all(|b| matches!(b, Block::Text { .. })) =>
                {
                    json!(crate::model::plain_text(bs))
                }
                ToolResultContent::Blocks(bs) => {
                    let refs: Vec<&Block> = bs.iter().collect();
                    Value::Array(self.inputs(&refs))
                }
            };
            let ty = if self.custom.contains(tool_use_id) {
                "custom_tool_call_output"
            } else {
                "function_call_output"
            };
            self.line(
                m.created_at,
                "response_item",
                json!({"type": ty, "call_id": tool_use_id, "output": output}),
            );
        }
        let parts = self.inputs(&rest);
        if parts.is_empty() {
            return;
        }
        let text = parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        self.line(
            m.created_at,
            "response_item",
            json!({"type": "message", "role": role, "content": parts}),
        );
        if role == "user" {
            self.line(
                m.created_at,
                "event_msg",
                json!({"type": "user_message", "message": text, "images": []}),
            );
        }
    }

    /// A `turn_context` wherever the model or the service tier changes.
    fn turn(&mut self, m: &Message, plan: &Plan) {
        let model = super::model_of(m, plan).to_string();
        // the tier a reply was served at where it is priced apart (`priority`, `flex`), as a turn records it
        let tier = crate::models::speed_of(&m.meta).filter(|s| *s != "fast");
        let turn = (model, tier.map(str::to_string));
        if self.model.as_ref() != Some(&turn) {
            let mut context = json!({"cwd": self.cwd, "approval_policy": "on-request",
                   "sandbox_policy": {"type": "workspace-write"}, "model": turn.0, "summary": "auto"});
            // a turn that names no tier keeps the one before: back to standard is said
            if turn.1.is_some() || self.model.as_ref().is_some_and(|(_, t)| t.is_some()) {
                context["service_tier"] = json!(turn.1);
            }
            self.line(m.created_at, "turn_context", context);
            self.model = Some(turn);
        }
    }

    fn searches(&mut self, m: &Message, plan: &Plan) {
        // the searches OpenAI ran for a Codex reply travel as Codex recorded them (another harness's searches have
        // no item Codex would send back: they are said)
        let searches: Vec<Value> = own_items(m, plan, "web_search_call").collect();
        let searched = m.usage.map_or(0, |u| u.web_search_requests);
        self.searches_left_out += (searched as usize).saturating_sub(searches.len());
        for s in searches {
            self.line(m.created_at, "response_item", s);
        }
    }

    fn reply(&mut self, m: &Message, plan: &Plan) {
        self.turn(m, plan);
        // Codex's own reasoning travels with its encrypted content; reasoning of other sources cannot be sent back
        let mut reasoning = own_items(m, plan, "reasoning");
        let start = self.out.len();
        self.searches(m, plan);
        for b in &m.content {
            match b {
                Block::Text { text } => {
                    self.line(
                        m.created_at,
                        "response_item",
                        json!({"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": text}]}),
                    );
                    self.line(
                        m.created_at,
                        "event_msg",
                        json!({"type": "agent_message", "message": text}),
                    );
                }
                Block::Thinking { thinking, .. } => match reasoning.next() {
                    Some(mut r) => {
                        let summary: Vec<Value> = if thinking.is_empty() {
                            Vec::new()
                        } else {
                            vec![json!({"type": "summary_text", "text": thinking})]
                        };
                        r["summary"] = Value::Array(summary);
                        self.line(m.created_at, "response_item", r);
                    }
                    None => self.thinking_left_out += 1,
                },
                Block::ToolUse { id, name, input } => {
                    let payload = match input {
                        Value::String(s) => {
                            self.custom.insert(id.clone());
                            json!({"type": "custom_tool_call", "status": "completed", "call_id": id,
                                   "name": name, "input": s})
                        }
                        other => json!({"type": "function_call", "name": name,
                                        "arguments": other.to_string(), "call_id": id}),
                    };
                    self.line(m.created_at, "response_item", payload);
                }
                _ => self.left_out += 1,
            }
        }
        let usage = m.usage.filter(Usage::is_one_request);
        if usage.is_some() && !self.out[start..].contains("\"response_item\"") {
            // a reply with nothing Codex can hold (only reasoning of another harness, an aborted reply) still
            // carries its usage: on an empty reply, not on the one before it
            self.line(
                m.created_at,
                "response_item",
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ""}]}),
            );
        }
        if let Some(u) = usage {
            self.total.input_tokens += u.input_tokens;
            self.total.cache_creation_input_tokens += u.cache_creation_input_tokens;
            self.total.cache_read_input_tokens += u.cache_read_input_tokens;
            self.total.output_tokens += u.output_tokens;
            // Codex's input_tokens hold the cached tokens and those written to the cache
            let figures = |u: &Usage| {
                let input =
                    u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
                json!({"input_tokens": input, "cached_input_tokens": u.cache_read_input_tokens,
                       "cache_write_input_tokens": u.cache_creation_input_tokens,
                       "output_tokens": u.output_tokens, "reasoning_output_tokens": 0,
                       "total_tokens": input + u.output_tokens})
            };
            let total = self.total;
            self.line(
                m.created_at,
                "event_msg",
                json!({"type": "token_count",
                       "info": {"total_token_usage": figures(&total), "last_token_usage": figures(&u)},
                       "rate_limits": null}),
            );
        }
    }

    fn compaction(&mut self, c: &Compaction, at: i64, redact: &mut usize) {
        // a Codex compaction read back travels as Codex wrote it (its replacement history, encrypted summary
        // included)
        if c.only_marker
            && let Some(mut p) = c
                .marker
                .as_ref()
                .filter(|m| m.meta.get("source").and_then(Value::as_str) == Some("codex"))
                .and_then(|m| m.meta.pointer("/lines/0/payload"))
                .cloned()
        {
            if c.redact {
                // the provider's encrypted summary is opaque to any scanner and must reach it byte for byte
                *redact += redact_but_encrypted(&mut p);
            }
            self.line(at, "compacted", p);
            return;
        }
        let refs: Vec<&Block> = c.summary.iter().collect();
        let parts = self.inputs(&refs);
        let message = crate::model::plain_text(&c.summary);
        self.line(
            at,
            "compacted",
            json!({"message": message,
                   "replacement_history": [{"type": "message", "role": "user", "content": parts}]}),
        );
    }
}

/// Redacts a Codex item's text, leaving every `encrypted_content` as it is.
fn redact_but_encrypted(v: &mut Value) -> usize {
    match v {
        Value::Object(o) => o
            .iter_mut()
            .filter(|(k, _)| k.as_str() != "encrypted_content")
            .map(|(_, x)| redact_but_encrypted(x))
            .sum(),
        Value::Array(a) => a.iter_mut().map(redact_but_encrypted).sum(),
        Value::String(_) => crate::redact::value(v),
        _ => 0,
    }
}

pub(super) fn write(plan: &mut Plan) -> AgentFile {
    let session = uuid::Uuid::now_v7().to_string();
    let now = crate::store::now_ms();
    let mut w = Writer {
        out: String::new(),
        model: None,
        cwd: plan.cwd.clone(),
        total: Usage::default(),
        custom: Default::default(),
        left_out: 0,
        thinking_left_out: 0,
        searches_left_out: 0,
    };
    let mut meta = json!({
        "id": session,
        "timestamp": super::iso(now),
        "cwd": plan.cwd,
        "originator": "cairn",
        "cli_version": plan.source_version.clone().filter(|_| plan.source == "codex")
            .unwrap_or_else(|| LAYOUT_VERSION.to_string()),
        "source": "cli",
    });
    if let Some(o) = &plan.origin {
        meta["forked_from_id"] = json!(o);
    }
    if let Some(i) = &plan.instructions {
        meta["base_instructions"] = i.clone();
    }
    w.line(now, "session_meta", meta);
    let mut elisions = 0;
    let mut redacted = 0;
    for (k, item) in plan.items.iter().enumerate() {
        match item {
            Item::Message(m) => match m.role {
                Role::Assistant => w.reply(m, plan),
                Role::User | Role::Tool => w.user(m, "user"),
                Role::System => w.user(m, "developer"),
            },
            Item::Compaction(c) => {
                let at = plan.record_time(k);
                w.compaction(c, at, &mut redacted);
            }
            Item::Elision(_) => elisions += 1,
        }
    }
    let mut notes = Vec::new();
    if elisions > 0 {
        notes.push(
            "tool results cairn elides travel whole: Codex has no record for an elision (the agent reads them)"
                .to_string(),
        );
    }
    if w.thinking_left_out > 0 {
        notes.push(format!(
            "{} thinking block(s) left out: Codex sends back only its own encrypted reasoning",
            w.thinking_left_out
        ));
    }
    if w.left_out > 0 {
        notes.push(format!(
            "{} block(s) left out: Codex's items do not hold them",
            w.left_out
        ));
    }
    if w.searches_left_out > 0 {
        notes.push(format!(
            "{} web search(es) of other harnesses' replies not counted in Codex's usage: Codex records a search \
             as an item of its own provider's",
            w.searches_left_out
        ));
    }
    AgentFile {
        harness: Harness::Codex,
        session_id: session,
        cwd: plan.cwd.clone(),
        text: w.out,
        beside: Vec::new(),
        notes,
        redacted,
    }
}
