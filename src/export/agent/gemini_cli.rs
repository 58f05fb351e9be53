//! The plan as a Gemini CLI session log (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`), as Gemini
//! CLI's `ChatRecordingService` writes it: the session's metadata on the first line (`sessionId`, `projectHash`:
//! the SHA-256 of the working folder, `startTime`, `lastUpdated`, `kind`, the title as `summary`), then one record
//! per message: a prompt (`user`, its text and images as parts), a reply (`gemini`: its text, its thinking as
//! `thoughts`, its calls as `toolCalls` each holding the function response Gemini CLI sent back, its usage as
//! `tokens`, its model). A compaction is what Gemini CLI's own compression writes: `{"$set": {"messages": …}}`
//! replacing the history it holds with the summary as a prompt and the model's acknowledgement of it, the
//! messages after it appended as they come. `gemini --resume` rebuilds the history from these records the way
//! it does for its own sessions (thoughts, text, calls, then the responses as a turn of their own).
//!
//! Where the project's folder is: Gemini CLI names it by a short name its registry (`~/.gemini/projects.json`,
//! and a `.project_root` file in the folder) gives the working folder; a working folder Gemini CLI has never run
//! in has none yet, and the session goes to the folder named by the working folder's hash, which Gemini CLI
//! moves to the new short name the first time it runs there.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::Digest as _;

use super::{AgentFile, Compaction, Harness, Item, Plan};
use crate::model::{Block, Message, Role, Usage};

/// What Gemini CLI's compression has the model say after the summary (so the history alternates).
const ACKNOWLEDGEMENT: &str = "Got it. Thanks for the additional context!";

/// Gemini CLI's `projectHash` of a working folder (its `getProjectHash`).
pub(super) fn project_hash(cwd: &str) -> String {
    format!("{:x}", sha2::Sha256::digest(cwd.as_bytes()))
}

/// The folder under `tmp` (`~/.gemini/tmp`) Gemini CLI keeps the working folder's sessions in: the short name its
/// registry gives the folder, else the one whose `.project_root` names it, else the folder of its hash.
pub(super) fn project_dir(tmp: &Path, cwd: &str) -> PathBuf {
    let registered = tmp
        .parent()
        .map(|g| g.join("projects.json"))
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.pointer("/projects")
                .and_then(|p| p.get(cwd))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        // the registry's short names are `[a-z0-9-]+`: anything else is no folder of it
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        });
    if let Some(slug) = registered {
        return tmp.join(slug);
    }
    let marked = std::fs::read_dir(tmp).ok().and_then(|entries| {
        entries.flatten().map(|e| e.path()).find(|d| {
            std::fs::read_to_string(d.join(".project_root")).is_ok_and(|owner| owner.trim() == cwd)
        })
    });
    marked.unwrap_or_else(|| tmp.join(project_hash(cwd)))
}

/// The file name Gemini CLI gives a new session: its start to the minute and the first 8 characters of its id.
pub(super) fn file_name(session: &str, ms: i64) -> String {
    let t = jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    format!(
        "session-{}-{}.jsonl",
        t.strftime("%Y-%m-%dT%H-%M"),
        session.chars().take(8).collect::<String>()
    )
}

struct Writer {
    out: String,
    /// The reply being written: its calls still take the results the next message brings.
    pending: Option<Value>,
    left_out: usize,
    system: usize,
    /// Replies with nothing Gemini CLI keeps (no text, thinking or call) whose usage is lost with them.
    empty_measured: usize,
    unanswered: usize,
    /// Results whose call is not in the reply just before (never written so by a harness).
    stray: usize,
    slash: usize,
}

fn id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A block as a Gemini part: text, or an image as inline data (None for what a part cannot hold).
fn part(b: &Block) -> Option<Value> {
    match b {
        Block::Text { text } => Some(json!({"text": text})),
        Block::Image { media_type, data } => super::image_base64(data)
            .map(|d| json!({"inlineData": {"mimeType": media_type, "data": d}})),
        _ => None,
    }
}

/// A thinking block as one of Gemini CLI's thoughts: its bold subject where it starts with one (as Gemini CLI
/// reads its own back), else all of it the description.
fn thought(thinking: &str, at: &str) -> Value {
    let split = thinking
        .strip_prefix("**")
        .and_then(|rest| rest.split_once("** "))
        .filter(|(subject, _)| !subject.is_empty() && !subject.contains('\n'));
    let (subject, description) = split.unwrap_or(("", thinking));
    json!({"subject": subject, "description": description, "timestamp": at})
}

impl Writer {
    fn line(&mut self, v: &Value) {
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    /// Writes the reply being written, its calls answered by now or never.
    fn flush(&mut self) {
        if let Some(r) = self.pending.take() {
            self.unanswered += r
                .get("toolCalls")
                .and_then(Value::as_array)
                .map_or(0, |cs| cs.iter().filter(|c| c["result"].is_null()).count());
            self.line(&r);
        }
    }

    fn user(&mut self, m: &Message) {
        let (results, rest) = super::split_results(&m.content);
        // a result whose call is not in the reply before it (never written so by a harness) has no call to go in:
        // it is sent as the prompt's text
        let mut stray: Vec<Value> = Vec::new();
        for r in results.into_iter().filter_map(super::result_parts) {
            let images: Vec<Value> = r.images.iter().filter_map(|b| part(b)).collect();
            let call = self.pending.as_mut().and_then(|p| {
                p.get_mut("toolCalls")
                    .and_then(Value::as_array_mut)?
                    .iter_mut()
                    .find(|c| c.get("id").and_then(Value::as_str) == Some(r.call))
            });
            let Some(call) = call else {
                self.stray += 1;
                stray.push(json!({"text": r.as_prompt_text()}));
                stray.extend(images);
                continue;
            };
            let name = call.get("name").cloned().unwrap_or(Value::Null);
            let response = if r.is_error {
                json!({"error": r.text})
            } else {
                json!({"output": r.text})
            };
            // the images a tool returned go beside its response, as Gemini CLI sends them to models that do not
            // take them inside it
            let result: Vec<Value> = std::iter::once(json!({"functionResponse":
                {"id": r.call, "name": name, "response": response}}))
            .chain(images)
            .collect();
            call["result"] = Value::Array(result);
            call["status"] = json!(if r.is_error { "error" } else { "success" });
            call["resultDisplay"] = json!(r.text);
        }
        let own: Vec<Value> = rest.iter().filter_map(|b| part(b)).collect();
        self.left_out += rest.len() - own.len();
        let parts: Vec<Value> = stray.into_iter().chain(own).collect();
        if parts.is_empty() {
            return;
        }
        self.flush();
        // Gemini CLI does not send a prompt it took for a command (`/…`, `?…`) when it resumes
        let first = parts
            .iter()
            .find_map(|p| p.get("text").and_then(Value::as_str))
            .unwrap_or("")
            .trim_start();
        if first.starts_with('/') || first.starts_with('?') {
            self.slash += 1;
        }
        let record = json!({"id": id(), "timestamp": super::iso(m.created_at), "type": "user",
                            "content": parts});
        self.line(&record);
    }

    fn reply(&mut self, m: &Message, plan: &Plan) {
        self.flush();
        let at = super::iso(m.created_at);
        let mut text = Vec::new();
        let mut thoughts = Vec::new();
        let mut calls = Vec::new();
        for b in &m.content {
            match b {
                Block::Text { text: t } => text.push(t.as_str()),
                Block::Thinking { thinking, .. } if !thinking.trim().is_empty() => {
                    thoughts.push(thought(thinking, &at));
                }
                Block::ToolUse { id, name, input } => {
                    // a call's arguments are an object; a custom tool's string input goes as its one argument
                    let args = match input {
                        Value::Object(_) => input.clone(),
                        other => json!({"input": other}),
                    };
                    calls.push(json!({"id": id, "name": name, "args": args, "result": null,
                                      "status": "scheduled", "timestamp": at, "displayName": name}));
                }
                _ => self.left_out += 1,
            }
        }
        let usage = m.usage.filter(Usage::is_one_request);
        let text = text.join("\n");
        if text.trim().is_empty() && thoughts.is_empty() && calls.is_empty() {
            if usage.is_some() {
                self.empty_measured += 1;
            }
            return;
        }
        let mut record = json!({"id": id(), "timestamp": at, "type": "gemini", "content": text,
                                "model": super::model_of(m, plan)});
        if !thoughts.is_empty() {
            record["thoughts"] = Value::Array(thoughts);
        }
        if !calls.is_empty() {
            record["toolCalls"] = Value::Array(calls);
        }
        if let Some(u) = usage {
            // `input` is the whole prompt, `cached` a part of it (Gemini records no cache writes)
            let input = u.prompt();
            record["tokens"] = json!({"input": input, "output": u.output_tokens,
                                      "cached": u.cache_read_input_tokens, "thoughts": 0, "tool": 0,
                                      "total": input.saturating_add(u.output_tokens)});
        }
        self.pending = Some(record);
    }

    /// Gemini CLI's compression: the history it holds replaced by the summary, as a prompt, and the model's
    /// acknowledgement.
    fn compaction(&mut self, c: &Compaction, at: i64) {
        self.flush();
        let mut parts: Vec<Value> = c.summary.iter().filter_map(part).collect();
        if parts.is_empty() {
            parts.push(json!({"text":
                "[The conversation before this point was compacted; no summary of it was recorded.]"}));
        }
        let when = super::iso(at);
        let summary = json!({"id": id(), "timestamp": when, "type": "user", "content": parts});
        let ack =
            json!({"id": id(), "timestamp": when, "type": "gemini", "content": ACKNOWLEDGEMENT});
        self.line(&json!({"$set": {"messages": [summary, ack], "lastUpdated": when}}));
    }

    /// What could not travel as cairn had it.
    fn notes(&self, elisions: usize, plan: &Plan) -> Vec<String> {
        let mut notes = Vec::new();
        if elisions > 0 {
            notes.push(
                "tool results cairn elides travel whole: Gemini CLI has no record for an elision (the agent reads them)"
                    .to_string(),
            );
        }
        let counted = [
            (
                self.system,
                "system message(s) left out: Gemini CLI writes its own system prompt",
            ),
            (
                self.left_out,
                "block(s) left out: Gemini CLI's records do not hold them",
            ),
            (
                self.empty_measured,
                "reply(ies) with nothing Gemini CLI keeps left out, and their usage with them",
            ),
            (
                self.unanswered,
                "call(s) were never answered: Gemini CLI resumes with them unanswered",
            ),
            (
                self.stray,
                "result(s) sent as text: their call is not in the reply before them",
            ),
            (
                self.slash,
                "prompt(s) start with / or ?: Gemini CLI takes them for commands and does not send them when it resumes",
            ),
        ];
        for (n, what) in counted {
            if n > 0 {
                notes.push(format!("{n} {what}"));
            }
        }
        if plan
            .messages()
            .any(|m| m.usage.is_some_and(|u| u.cache_creation_input_tokens > 0))
        {
            notes.push(
                "cache writes are counted as uncached input: Gemini CLI records no cache writes"
                    .to_string(),
            );
        }
        notes
    }
}

pub(super) fn write(plan: &mut Plan) -> AgentFile {
    let session = id();
    let now = crate::store::now_ms();
    let start = plan.messages().next().map_or(now, |m| m.created_at);
    let mut w = Writer {
        out: String::new(),
        pending: None,
        left_out: 0,
        system: 0,
        empty_measured: 0,
        unanswered: 0,
        stray: 0,
        slash: 0,
    };
    let mut header = json!({"sessionId": session, "projectHash": project_hash(&plan.cwd),
                            "startTime": super::iso(start), "lastUpdated": super::iso(now), "kind": "main"});
    if let Some(t) = &plan.title {
        header["summary"] = json!(t);
    }
    w.line(&header);
    let mut elisions = 0;
    let mut folded: Option<usize> = None;
    for (k, item) in plan.items.iter().enumerate() {
        match item {
            Item::Message(_) if folded == Some(k) => {}
            Item::Message(m) => match m.role {
                Role::Assistant => w.reply(m, plan),
                Role::User | Role::Tool => w.user(m),
                Role::System => w.system += 1,
            },
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
    w.flush();
    let notes = w.notes(elisions, plan);
    AgentFile {
        harness: Harness::GeminiCli,
        session_id: session,
        cwd: plan.cwd.clone(),
        text: w.out,
        beside: Vec::new(),
        notes,
        redacted: 0,
    }
}
