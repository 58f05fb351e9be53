//! The plan as a Claude Code session (`~/.claude/projects/<slug>/<sessionId>.jsonl`), in the layout Claude Code
//! 2.1 writes: one JSON object a line chained by `uuid`/`parentUuid`, each assistant content block its own line
//! sharing the reply's `message.id` (with its usage and model), each tool result its own user line, a compaction as
//! a `compact_boundary` (a new root linked back by `logicalParentUuid`) followed by the `isCompactSummary` prompt,
//! an elision as a `microcompact_boundary` naming the results it clears. Subagents the path spawned go beside, as
//! `<sessionId>/subagents/agent-<id>.jsonl`.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{AgentFile, Compaction, Harness, Item, Plan};
use crate::model::{Block, Message, Role};
use crate::store::Store;
use crate::wire;

/// The Claude Code layout written, where the source was not a Claude Code session that names its own version.
const LAYOUT_VERSION: &str = "2.1.150";

/// The folder Claude Code keeps a project's sessions in: the working folder with every character that is not a
/// letter or digit replaced by `-`.
pub(super) fn project_slug(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

struct Writer<'a> {
    session: String,
    cwd: String,
    version: String,
    git_branch: Option<String>,
    /// Subagent files: every line sidechain, under this agent id.
    agent: Option<String>,
    prev: Option<String>,
    out: String,
    left_out: usize,
    plan: &'a Plan,
}

impl Writer<'_> {
    fn envelope(&self, ty: &str, uuid: &str, at: i64) -> Value {
        let mut v = json!({
            "parentUuid": self.prev,
            "isSidechain": self.agent.is_some(),
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": self.version,
        });
        if let Some(b) = &self.git_branch {
            v["gitBranch"] = json!(b);
        }
        if let Some(a) = &self.agent {
            v["agentId"] = json!(a);
        }
        v["type"] = json!(ty);
        v["uuid"] = json!(uuid);
        v["timestamp"] = json!(super::iso(at));
        v
    }

    fn push(&mut self, v: Value, uuid: String) {
        self.out.push_str(&v.to_string());
        self.out.push('\n');
        self.prev = Some(uuid);
    }

    fn user(&mut self, content: Value, at: i64, extra: &[(&str, Value)]) {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut v = self.envelope("user", &uuid, at);
        v["message"] = json!({"role": "user", "content": content});
        for (k, x) in extra {
            v[*k] = x.clone();
        }
        self.push(v, uuid);
    }

    fn message(&mut self, m: &Message) {
        let wire = wire_blocks(&m.content);
        match m.role {
            Role::Assistant => self.reply(m, wire),
            Role::User | Role::Tool => {
                let (results, rest): (Vec<Value>, Vec<Value>) = wire
                    .into_iter()
                    .partition(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
                for r in results {
                    // a result the API would refuse (no call named) is left out like any block it does not take
                    if keeps(&r) {
                        self.user(json!([r]), m.created_at, &[]);
                    } else {
                        self.left_out += 1;
                    }
                }
                let rest: Vec<Value> = rest.into_iter().filter(keeps).collect();
                if rest.is_empty() {
                    return;
                }
                let content = match rest.as_slice() {
                    [one] if one.get("type").and_then(Value::as_str) == Some("text") => {
                        one["text"].clone()
                    }
                    _ => Value::Array(rest),
                };
                let extra: Vec<(&str, Value)> = if super::is_compact_summary(m) {
                    vec![
                        ("isCompactSummary", json!(true)),
                        ("isVisibleInTranscriptOnly", json!(true)),
                    ]
                } else {
                    Vec::new()
                };
                self.user(content, m.created_at, &extra);
            }
            Role::System => self.left_out += 1,
        }
    }

    fn reply(&mut self, m: &Message, wire: Vec<Value>) {
        let before = wire.len();
        let blocks: Vec<Value> = wire.into_iter().filter(keeps).collect();
        self.left_out += before - blocks.len();
        if blocks.is_empty() {
            return;
        }
        let line0 = m.meta.pointer("/lines/0");
        let from_source = |k: &str| {
            line0
                .and_then(|l| l.pointer(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let id = from_source("/message/id").unwrap_or_else(|| format!("msg_{}", hex_id()));
        let request = from_source("/requestId").unwrap_or_else(|| format!("req_{}", hex_id()));
        let stop = if blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        {
            "tool_use"
        } else {
            "end_turn"
        };
        let usage = m.usage.filter(|u| u.is_one_request()).map(|u| {
            let w1h = u
                .cache_creation_1h_input_tokens
                .min(u.cache_creation_input_tokens);
            json!({
                "input_tokens": u.input_tokens,
                "cache_creation_input_tokens": u.cache_creation_input_tokens,
                "cache_read_input_tokens": u.cache_read_input_tokens,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": u.cache_creation_input_tokens - w1h,
                    "ephemeral_1h_input_tokens": w1h,
                },
                "output_tokens": u.output_tokens,
                "server_tool_use": {"web_search_requests": u.web_search_requests, "web_fetch_requests": 0},
                "service_tier": "standard",
            })
        });
        let model = super::model_of(m, self.plan).to_string();
        let n = blocks.len();
        // a Claude Code reply read back carries each line's usage as Claude Code wrote it (earlier lines of a
        // streamed reply count the output so far), so peers that read the first line of a reply count the same
        let recorded: Vec<Option<Value>> = m
            .meta
            .get("lines")
            .and_then(Value::as_array)
            .filter(|l| l.len() == n && usage.is_some())
            .map(|l| {
                l.iter()
                    .map(|x| x.pointer("/message/usage").cloned())
                    .collect()
            })
            .unwrap_or_default();
        for (k, b) in blocks.into_iter().enumerate() {
            let uuid = uuid::Uuid::new_v4().to_string();
            let mut v = self.envelope("assistant", &uuid, m.created_at);
            let mut msg = json!({
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [b],
                "stop_reason": if k + 1 == n { json!(stop) } else { Value::Null },
                "stop_sequence": null,
            });
            if let Some(u) = recorded.get(k).cloned().flatten().or_else(|| usage.clone()) {
                msg["usage"] = u;
            }
            v["message"] = msg;
            v["requestId"] = json!(request);
            if super::failed(m) {
                v["isApiErrorMessage"] = json!(true);
            }
            self.push(v, uuid);
        }
    }

    fn compaction(&mut self, c: &Compaction, at: i64) {
        let uuid = uuid::Uuid::new_v4().to_string();
        let logical = self.prev.take();
        let mut v = self.envelope("system", &uuid, at);
        v["logicalParentUuid"] = json!(logical);
        v["subtype"] = json!("compact_boundary");
        v["content"] = json!("Conversation compacted");
        v["isMeta"] = json!(false);
        v["level"] = json!("info");
        // the source's own figures travel (its kept messages follow the boundary here, so none is named)
        let mut meta = c
            .marker
            .as_ref()
            .and_then(|m| m.meta.pointer("/line/compactMetadata"))
            .cloned()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({"trigger": "manual"}));
        if let Some(o) = meta.as_object_mut() {
            o.remove("preservedMessages");
            o.remove("preservedSegment");
            if let (false, Some(t)) = (o.contains_key("preTokens"), c.tokens_before) {
                o.insert("preTokens".into(), json!(t));
            }
        }
        v["compactMetadata"] = meta;
        self.push(v, uuid);
        if c.summary.is_empty() {
            return;
        }
        let blocks = wire_blocks(&c.summary);
        let content = match blocks.as_slice() {
            [one] if one.get("type").and_then(Value::as_str) == Some("text") => one["text"].clone(),
            _ => Value::Array(blocks),
        };
        self.user(
            content,
            at,
            &[
                ("isCompactSummary", json!(true)),
                ("isVisibleInTranscriptOnly", json!(true)),
            ],
        );
    }

    fn elision(&mut self, ids: &[String], at: i64) {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut v = self.envelope("system", &uuid, at);
        v["subtype"] = json!("microcompact_boundary");
        v["content"] = json!("Context microcompacted");
        v["isMeta"] = json!(false);
        v["level"] = json!("info");
        v["microcompactMetadata"] = json!({"trigger": "manual", "compactedToolIds": ids});
        self.push(v, uuid);
    }
}

/// Anthropic's wire form of blocks (cairn's own wire form); images are loaded into the plan.
fn wire_blocks(blocks: &[Block]) -> Vec<Value> {
    let none = |h: &str| Err(format!("image {h} was not loaded"));
    blocks
        .iter()
        .filter_map(|b| {
            wire::blocks_to_json(std::slice::from_ref(b), &wire::Images::Base64(&none)).ok()
        })
        .flatten()
        .collect()
}

/// Blocks Claude Code sends back: what the Messages API accepts (thinking without Anthropic's signature and unknown
/// blocks are not).
fn keeps(b: &Value) -> bool {
    super::super::provider::anthropic_keeps(b)
}

fn hex_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..24].to_string()
}

/// Writes the plan; `conversation`'s subagents spawned on the path go beside it.
pub(super) fn write(
    store: &Store,
    conversation: &str,
    plan: &mut Plan,
    redact: bool,
) -> Result<AgentFile, super::ExportError> {
    let session = uuid::Uuid::new_v4().to_string();
    let (text, left_out) = lines(plan, &session, None);
    if left_out > 0 {
        plan.note(format!(
            "{left_out} block(s) or message(s) left out: Claude Code sends back neither thinking without \
             Anthropic's signature (unsigned, or signed by another service), blocks it does not know, nor system \
             messages (it writes its own)"
        ));
    }
    let mut beside = Vec::new();
    // subagents spawned by a call on the path, each as its own file
    for (_, child) in crate::export::spawned_on_path(store, conversation, plan.messages())? {
        let mut sub = super::plan(store, &child.id, None, redact, false)?;
        let agent = uuid::Uuid::new_v4().simple().to_string()[..17].to_string();
        let (t, _) = lines(&sub, &session, Some(agent.clone()));
        plan.redacted += sub.redacted;
        plan.notes.append(&mut sub.notes);
        beside.push((
            PathBuf::from("subagents").join(format!("agent-{agent}.jsonl")),
            t,
        ));
    }
    Ok(AgentFile {
        harness: Harness::ClaudeCode,
        session_id: session,
        cwd: plan.cwd.clone(),
        text,
        beside,
        notes: Vec::new(),
        redacted: 0,
    })
}

/// The session's lines, and how many blocks or messages Claude Code would not take.
fn lines(plan: &Plan, session: &str, agent: Option<String>) -> (String, usize) {
    let source_cc = plan.source == "claude-code";
    let git_branch = plan
        .messages()
        .find_map(|m| m.meta.pointer("/lines/0/gitBranch"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut w = Writer {
        session: session.to_string(),
        cwd: plan.cwd.clone(),
        version: plan
            .source_version
            .clone()
            .filter(|_| source_cc)
            .unwrap_or_else(|| LAYOUT_VERSION.to_string()),
        git_branch,
        agent,
        prev: None,
        out: String::new(),
        left_out: 0,
        plan,
    };
    if let (Some(t), None) = (&plan.title, &w.agent) {
        w.out.push_str(
            &json!({"type": "custom-title", "customTitle": t, "sessionId": session}).to_string(),
        );
        w.out.push('\n');
    }
    let mut last_at = plan.messages().next().map_or(0, |m| m.created_at);
    for (k, item) in plan.items.iter().enumerate() {
        match item {
            Item::Message(m) => {
                last_at = m.created_at;
                w.message(m);
            }
            Item::Compaction(c) => w.compaction(c, plan.record_time(k)),
            Item::Elision(ids) => w.elision(ids, last_at),
        }
    }
    (w.out, w.left_out)
}
