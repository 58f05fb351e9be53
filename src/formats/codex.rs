//! Codex rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): `{timestamp, type, payload}` lines.
//!
//! A rollout is linear. `response_item`s are what the model saw: messages, reasoning, tool calls and their
//! outputs. Outputs of parallel calls can arrive out of order and are paired by `call_id`; each assistant reply's
//! results are gathered into the message right after it. `event_msg` repeats prompts and replies (not imported
//! twice) and carries `token_count` usage, which is attached to the reply it measured. Another agent's message
//! (`agent_message`: the task a parent gave the agent it spawned) is an input like the user's.
//!
//! Agents a thread spawned (`spawn_agent`, multi-agent tools) write rollouts of their own, whose `session_meta`
//! names the parent thread (`source.subagent.thread_spawn.parent_thread_id`): the child rollouts in the parent's
//! folder are read with it, each a linked conversation spawned by the call whose output names its thread.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{CODEX_USER_PROMPT_TOKENS, Kept, harness_meta};
use crate::store::ImportedMessage;

struct Built {
    role: Role,
    blocks: Vec<Block>,
    lines: Vec<Value>,
    created_at: Option<i64>,
    usage: Option<Usage>,
    /// `meta.cairn` of a compaction marker.
    marker: Option<Value>,
    /// The model named by the latest `turn_context`, for replies.
    model: Option<String>,
    /// The service tier a reply was requested at where it is priced otherwise than standard ([`crate::models::codex_tier_set_by`]).
    speed: Option<&'static str>,
    /// The web searches OpenAI ran for the reply (`web_search_call` items).
    searches: u64,
}

fn text_of(content: &Value) -> Vec<Block> {
    match content {
        Value::String(s) => vec![Block::text(s.clone())],
        Value::Array(parts) => parts
            .iter()
            .map(|p| {
                match (
                    p.get("type").and_then(Value::as_str),
                    p.get("text").and_then(Value::as_str),
                ) {
                    (Some("input_text" | "output_text" | "text"), Some(t)) => Block::text(t),
                    (Some("input_image"), _) => {
                        image_of(p).unwrap_or_else(|| super::unknown_block(p))
                    }
                    _ => super::unknown_block(p),
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An `input_image` part whose `image_url` is a base64 data URL (an image sent to the model: a pasted one, a
/// screenshot a tool returned, a snapshot's page); one that names a remote URL stays an unknown block.
fn image_of(p: &Value) -> Option<Block> {
    crate::model::image::from_data_url(p.get("image_url").and_then(Value::as_str)?)?.ok()
}

/// Rollouts from before `session_meta` (2025): a first line holding the session (`id`, `timestamp`,
/// `instructions`, `git`), then bare response items and `{"record_type": "state"}` lines. Read as the current
/// shape: the first line is the session's meta, each item a `response_item`, state records kept as records.
fn legacy_lines(input: &[(usize, Value)]) -> Option<Vec<(usize, Value)>> {
    let (first_no, first) = input.first()?;
    if first.get("type").is_some()
        || first.get("instructions").is_none()
        || first.get("id").is_none()
    {
        return None;
    }
    let mut out = vec![(
        *first_no,
        serde_json::json!({"type": "session_meta", "payload": first}),
    )];
    for (no, v) in &input[1..] {
        if v.get("record_type").is_some() {
            out.push((*no, serde_json::json!({"type": "state", "payload": v})));
        } else {
            out.push((
                *no,
                serde_json::json!({"type": "response_item", "payload": v}),
            ));
        }
    }
    Some(out)
}

pub fn parse(path: &Path, input: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut parsed = parse_inner(path, input)?;
    attach_children(path, &mut parsed)?;
    Ok(parsed)
}

/// The rollout being read, item by item: the messages built so far and what pairs the outputs with their calls.
#[derive(Default)]
struct Rollout {
    report: ImportReport,
    built: Vec<Built>,
    /// The reply the next reasoning, text or call joins (None: the next one opens a new reply).
    open_assistant: Option<usize>,
    owner_of_call: HashMap<String, usize>,
    /// Each reply's results, in arrival order.
    results: HashMap<usize, Vec<(Block, Value)>>,
    /// Outputs of calls no earlier reply made: (where they arrived, the result, its line).
    orphans: Vec<(usize, Block, Value)>,
    session_meta: Option<Value>,
    records: Vec<Value>,
    /// The reply a `token_count` measures.
    last_assistant: Option<usize>,
    /// The model named by the latest `turn_context`.
    model: Option<String>,
    /// The service tier the thread's settings request ([`crate::models::codex_tier_set_by`]): Codex sends every request at it.
    speed: Option<&'static str>,
    /// The context window Codex ran each model with (`token_count`'s `model_context_window`, which Codex holds
    /// its prompts to): the newest it stated for the model's replies.
    windows: std::collections::BTreeMap<String, u64>,
}

/// One line of a rollout: its number, the line, its payload and the payload's type.
struct Item<'a> {
    no: usize,
    line: &'a Value,
    payload: Value,
    pty: String,
    at: Option<i64>,
}

impl Rollout {
    fn line(&mut self, path: &Path, no: usize, line: &Value) -> Result<(), FormatError> {
        let ty = line.get("type").and_then(Value::as_str).unwrap_or("");
        let payload = line.get("payload").cloned().unwrap_or(Value::Null);
        let pty = payload
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let item = Item {
            no,
            line,
            at: timestamp_ms(line.get("timestamp")),
            payload,
            pty,
        };
        match (ty, item.pty.as_str()) {
            // the rollout's own: a fork copies its origin's after it (and Codex Desktop writes the same one
            // again on each resume)
            ("session_meta", _) if self.session_meta.is_none() => {
                self.session_meta = Some(item.payload);
            }
            ("session_meta", _) => self.report.skip(
                "session_meta lines after the first (an origin's, copied by a fork; a resume's)",
            ),
            ("turn_context", _) => {
                if let Some(m) = item.payload.get("model").and_then(Value::as_str) {
                    self.model = Some(m.to_string());
                }
                // rollouts that record the tier with each turn (a turn that names none keeps the thread's)
                if let Some(t) = crate::models::codex_tier_set_by(line) {
                    self.speed = t;
                }
                self.report
                    .skip("turn_context (kept as metadata)".to_string());
                self.records.push(line.clone());
            }
            ("response_item", "message") => self.message(path, &item)?,
            // a message from another agent of the session (Codex 0.145's multi-agent threads: a parent's task for
            // the agent it spawned, a child's report): the agent reads it as its input
            ("response_item", "agent_message") => self.agent_message(&item),
            ("response_item", "reasoning") => self.reasoning(&item),
            // a search OpenAI ran for the response (priced per search): kept with the reply, counted in its usage
            ("response_item", "web_search_call") => {
                let a = self.assistant(item.at);
                self.built[a].searches += 1;
                self.built[a].lines.push(item.line.clone());
                self.report.skip(
                    "response_item web_search_call (counted in the reply's usage)".to_string(),
                );
            }
            (
                "response_item",
                "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call",
            ) => self.call(path, &item)?,
            (
                "response_item",
                "function_call_output" | "custom_tool_call_output" | "tool_search_output",
            ) => self.output(path, &item)?,
            ("compacted", _) => self.compacted(&item),
            ("event_msg", "user_message" | "agent_message" | "agent_reasoning") => {
                self.report.skip(format!(
                    "event_msg {} (a duplicate of a response_item)",
                    item.pty
                ));
            }
            ("event_msg", "token_count") => self.token_count(&item),
            ("event_msg", "thread_settings_applied") => {
                self.speed = crate::models::codex_tier_set_by(line).flatten();
                self.report
                    .skip("event_msg thread_settings_applied (kept as metadata)".to_string());
                self.records.push(line.clone());
            }
            _ => {
                let label = if item.pty.is_empty() {
                    ty.to_string()
                } else {
                    format!("{ty} {}", item.pty)
                };
                self.report.skip(format!("{label} (kept as metadata)"));
                self.records.push(line.clone());
            }
        }
        Ok(())
    }

    /// The reply being built, or a new one.
    fn assistant(&mut self, at: Option<i64>) -> usize {
        let a = assistant(&mut self.built, &mut self.open_assistant, at, &self.model);
        self.built[a].speed = self.speed;
        a
    }

    fn message(&mut self, path: &Path, item: &Item) -> Result<(), FormatError> {
        let role = match item.payload.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("developer" | "system") => Role::System,
            other => {
                return Err(FormatError::new(
                    path,
                    item.no,
                    format!("message with unknown role {other:?}"),
                ));
            }
        };
        let blocks = text_of(item.payload.get("content").unwrap_or(&Value::Null));
        if role == Role::Assistant {
            let a = self.assistant(item.at);
            self.built[a].blocks.extend(blocks);
            self.built[a].lines.push(item.line.clone());
            self.last_assistant = Some(a);
        } else {
            self.open_assistant = None;
            self.built
                .push(Built::note(role, blocks, vec![item.line.clone()], item.at));
        }
        Ok(())
    }

    /// Another agent's message, which the agent reads as a prompt: the user's side of the conversation (its
    /// line, kept with it, says who sent it).
    fn agent_message(&mut self, item: &Item) {
        self.open_assistant = None;
        self.built.push(Built::note(
            Role::User,
            text_of(item.payload.get("content").unwrap_or(&Value::Null)),
            vec![item.line.clone()],
            item.at,
        ));
    }

    /// Its summary is the readable part; its encrypted content is the whole reasoning in OpenAI's own form, which
    /// Codex sends back with the turn's later requests (the thinking's signature: it counts whole there).
    fn reasoning(&mut self, item: &Item) {
        let summary = item
            .payload
            .get("summary")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .unwrap_or_default();
        let a = self.assistant(item.at);
        self.built[a].blocks.push(Block::Thinking {
            thinking: summary,
            signature: item
                .payload
                .get("encrypted_content")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        });
        self.built[a].lines.push(item.line.clone());
    }

    fn call(&mut self, path: &Path, item: &Item) -> Result<(), FormatError> {
        let (payload, pty) = (&item.payload, item.pty.as_str());
        let call_id = call_id(path, item.no, payload, pty)?;
        let name = payload
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(match pty {
                "local_shell_call" => "local_shell",
                "tool_search_call" => "tool_search",
                _ => "tool",
            })
            .to_string();
        let input = match payload
            .get("arguments")
            .or_else(|| payload.get("input"))
            .or_else(|| payload.get("action"))
        {
            Some(v) => super::call_input(v),
            None => json!({}),
        };
        let a = self.assistant(item.at);
        self.built[a].blocks.push(Block::ToolUse {
            id: call_id.clone(),
            name,
            input,
        });
        self.built[a].lines.push(item.line.clone());
        self.owner_of_call.insert(call_id, a);
        self.last_assistant = Some(a);
        Ok(())
    }

    fn output(&mut self, path: &Path, item: &Item) -> Result<(), FormatError> {
        let call_id = call_id(path, item.no, &item.payload, &item.pty)?;
        let (content, is_error) = output_content(&item.payload);
        let block = Block::ToolResult {
            tool_use_id: call_id.clone(),
            content,
            is_error,
        };
        self.open_assistant = None;
        match self.owner_of_call.get(&call_id) {
            Some(&a) => self
                .results
                .entry(a)
                .or_default()
                .push((block, item.line.clone())),
            None => {
                self.report.notes.push(format!(
                    "line {}: output for call {call_id}, which no earlier call made",
                    item.no
                ));
                self.orphans
                    .push((self.built.len(), block, item.line.clone()));
            }
        }
        Ok(())
    }

    /// With a replacement history, that history is what the model saw from here; without one, Codex rebuilt it
    /// from the injected instructions, the user's recent prompts and the summary.
    fn compacted(&mut self, item: &Item) {
        self.open_assistant = None;
        let mut images = Vec::new();
        let (text, kept) = match item
            .payload
            .get("replacement_history")
            .and_then(Value::as_array)
        {
            Some(items) => {
                // the pages of a snapshot travel as the history's images
                images = items
                    .iter()
                    .flat_map(|i| text_of(i.get("content").unwrap_or(&Value::Null)))
                    .filter(|b| matches!(b, Block::Image { .. }))
                    .collect();
                (replacement_text(items), Kept::Nothing)
            }
            None => (
                item.payload
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("Conversation compacted")
                    .to_string(),
                Kept::UserPrompts(CODEX_USER_PROMPT_TOKENS),
            ),
        };
        let mut blocks = vec![Block::text(text)];
        blocks.append(&mut images);
        self.built.push(Built {
            role: Role::System,
            blocks,
            lines: vec![item.line.clone()],
            created_at: item.at,
            usage: None,
            marker: Some(harness_meta("codex", kept, true)),
            model: None,
            speed: None,
            searches: 0,
        });
    }

    /// The window a `token_count` says Codex runs the model of the reply it measures with (the turn's model
    /// where it measures none).
    fn window_stated(&mut self, payload: &Value) {
        let w = payload
            .pointer("/info/model_context_window")
            .and_then(Value::as_u64)
            .filter(|&w| w > 0);
        let model = self
            .last_assistant
            .and_then(|a| self.built[a].model.as_ref())
            .or(self.model.as_ref());
        if let (Some(w), Some(m)) = (w, model) {
            self.windows.insert(m.clone(), w);
        }
    }

    fn token_count(&mut self, item: &Item) {
        self.window_stated(&item.payload);
        let last = item
            .payload
            .get("info")
            .and_then(|i| i.get("last_token_usage"));
        if let (Some(u), Some(a)) = (last, self.last_assistant) {
            let g = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            // Codex counts cached tokens, and the tokens written to the cache (`cache_write_input_tokens`, since
            // Codex 0.16x: the provider's `input_tokens_details.cache_write_tokens`), inside input_tokens; cairn
            // follows Anthropic (input excludes both).
            let (read, written) = (g("cached_input_tokens"), g("cache_write_input_tokens"));
            self.built[a].usage = Some(Usage {
                input_tokens: g("input_tokens").saturating_sub(read.saturating_add(written)),
                output_tokens: g("output_tokens"),
                cache_read_input_tokens: read,
                cache_creation_input_tokens: written,
                web_search_requests: self.built[a].searches,
                ..Usage::default()
            });
            self.built[a].lines.push(item.line.clone());
            // a response is measured once it is complete: what follows is the next response
            self.open_assistant = None;
        } else {
            self.records.push(item.line.clone());
        }
        self.report
            .skip("event_msg token_count (usage kept on the reply)".to_string());
    }

    /// Each assistant reply, then one message with all its results (in arrival order).
    fn emit(self) -> Parsed {
        let mut out: Vec<ImportedMessage> = Vec::new();
        let mut results = self.results;
        let mut orphans = self.orphans.into_iter().peekable();
        for (i, b) in self.built.into_iter().enumerate() {
            while let Some((_, block, line)) = orphans.next_if(|o| o.0 <= i) {
                push(
                    &mut out,
                    Built::note(Role::User, vec![block], vec![line], None),
                );
            }
            if let Some(rs) = results.remove(&i) {
                let (blocks, lines): (Vec<Block>, Vec<Value>) = rs.into_iter().unzip();
                let at = lines.first().and_then(|l| timestamp_ms(l.get("timestamp")));
                push(&mut out, b);
                push(&mut out, Built::note(Role::User, blocks, lines, at));
            } else {
                push(&mut out, b);
            }
        }
        for (_, block, line) in orphans {
            push(
                &mut out,
                Built::note(Role::User, vec![block], vec![line], None),
            );
        }
        let title = super::title_of(&out);
        let tip = out.len().checked_sub(1);
        let mut meta = json!({"source": "codex", "records": self.records});
        if !self.windows.is_empty() {
            // the window each model ran with: the conversation's threshold and target are drawn from it
            meta["windows"] = json!(self.windows);
        }
        if let Some(sm) = self.session_meta {
            if let Some(v) = sm.get("cli_version") {
                meta["harness_version"] = v.clone();
            }
            // what Codex sends with every request beside the messages, as the rollout recorded it
            let beside: Vec<&str> = ["/base_instructions/text", "/dynamic_tools"]
                .into_iter()
                .filter(|p| sm.pointer(p).is_some_and(|v| !v.is_null()))
                .collect();
            if !beside.is_empty() {
                meta["sends_beside"] = json!(
                    beside
                        .iter()
                        .map(|p| format!("/session_meta{p}"))
                        .collect::<Vec<_>>()
                );
            }
            meta["session_meta"] = sm;
        }
        Parsed {
            title,
            messages: out,
            tip,
            checkpoints: Vec::new(),
            meta,
            report: self.report,
            children: Vec::new(),
        }
    }
}

/// A call's output as a result's content, and whether it failed.
fn output_content(payload: &Value) -> (ToolResultContent, bool) {
    match payload.get("output") {
        Some(Value::String(s)) => (ToolResultContent::Text(s.clone()), false),
        Some(Value::Array(parts)) => (
            ToolResultContent::Blocks(text_of(&Value::Array(parts.clone()))),
            false,
        ),
        Some(Value::Object(o)) => (
            ToolResultContent::Text(
                o.get("content")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
            ),
            o.get("success").and_then(Value::as_bool) == Some(false),
        ),
        Some(other) => (ToolResultContent::Text(other.to_string()), false),
        None => (
            ToolResultContent::Text(
                payload
                    .get("tools")
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            ),
            false,
        ),
    }
}

fn parse_inner(path: &Path, input: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let legacy = legacy_lines(input);
    let input = legacy.as_deref().unwrap_or(input);
    let mut r = Rollout::default();
    for (no, line) in input {
        r.line(path, *no, line)?;
    }
    Ok(r.emit())
}

/// The `session_meta` payload of a rollout file (its first lines), if it has one.
fn session_meta_of_file(p: &Path) -> Option<Value> {
    use std::io::BufRead;
    let f = std::fs::File::open(p).ok()?;
    std::io::BufReader::new(f)
        .lines()
        .take(5)
        .map_while(Result::ok)
        .find_map(|l| {
            let v: Value = serde_json::from_str(&l).ok()?;
            (v.get("type").and_then(Value::as_str) == Some("session_meta"))
                .then(|| v.get("payload").cloned())
                .flatten()
        })
}

/// The thread a rollout's agent was spawned by, as its `session_meta` names it.
fn parent_thread(meta: &Value) -> Option<&str> {
    meta.pointer("/source/subagent/thread_spawn/parent_thread_id")
        .or_else(|| meta.get("parent_thread_id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The thread a rollout file's agent was spawned by, read from its first lines once per file version (a folder of
/// rollouts is asked about for each of its parents: the answers are remembered by path, size and modification time).
fn parent_of_file(p: &Path) -> Option<String> {
    use std::sync::{Mutex, OnceLock};
    type Seen = HashMap<std::path::PathBuf, (u64, Option<std::time::SystemTime>, Option<String>)>;
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    let md = std::fs::metadata(p).ok()?;
    let stamp = (md.len(), md.modified().ok());
    let seen = SEEN.get_or_init(|| Mutex::new(HashMap::new()));
    if let Ok(m) = seen.lock()
        && let Some((len, at, parent)) = m.get(p)
        && (*len, *at) == stamp
    {
        return parent.clone();
    }
    let parent = session_meta_of_file(p)
        .as_ref()
        .and_then(parent_thread)
        .map(str::to_string);
    if let Ok(mut m) = seen.lock() {
        m.insert(p.to_path_buf(), (stamp.0, stamp.1, parent.clone()));
    }
    parent
}

fn is_rollout(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "jsonl")
        && p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
}

/// The folders a rollout's relatives may sit in: its own, and where Codex files by day (`sessions/YYYY/MM/DD/`)
/// the days `from` to `to` days after its own (an agent spawned near midnight is filed under the next day).
fn day_folders(dir: &Path, from: i64, to: i64) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let parts: Vec<String> = dir
        .iter()
        .rev()
        .take(3)
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let (Some(root), [d, m, y]) = (dir.ancestors().nth(3), parts.as_slice()) else {
        return out;
    };
    let Ok(day) = format!("{y}-{m}-{d}").parse::<jiff::civil::Date>() else {
        return out;
    };
    for k in from..=to {
        if k == 0 {
            continue;
        }
        if let Ok(other) = day.checked_add(jiff::Span::new().days(k)) {
            let f = root
                .join(format!("{:04}", other.year()))
                .join(format!("{:02}", other.month()))
                .join(format!("{:02}", other.day()));
            if f.is_dir() {
                out.push(f);
            }
        }
    }
    out
}

/// How many days after its parent's a spawned agent's rollout may be filed.
const SPAWN_DAYS: i64 = 2;

/// The rollout of the thread that spawned the agent whose rollout is `p`, when it is present (in `p`'s folder or a
/// day or two before): the file `p` is read with.
pub fn parent_rollout(p: &Path) -> Option<std::path::PathBuf> {
    if !is_rollout(p) {
        return None;
    }
    let (dir, parent) = (p.parent()?, parent_of_file(p)?);
    let tail = format!("-{parent}.jsonl");
    day_folders(dir, -SPAWN_DAYS, 0).iter().find_map(|d| {
        let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(d)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|f| {
                f.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(&tail))
            })
            .collect();
        found.sort();
        found.into_iter().next()
    })
}

/// The rollouts of agents the thread `id` spawned: in its folder, or a day or two after it.
fn child_rollouts(dir: &Path, id: &str) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = day_folders(dir, 0, SPAWN_DAYS)
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| rd.flatten().map(|e| e.path()))
        .filter(|p| is_rollout(p))
        .filter(|p| parent_of_file(p).is_some_and(|parent| parent == id))
        .collect();
    out.sort();
    out
}

/// Each spawned agent's rollout read as a linked conversation, with the call that spawned it: the `spawn_agent`
/// call whose output names the agent's thread (`agent_id`).
fn attach_children(path: &Path, parsed: &mut Parsed) -> Result<(), FormatError> {
    let (Some(dir), Some(id)) = (
        path.parent(),
        parsed
            .meta
            .pointer("/session_meta/id")
            .and_then(Value::as_str)
            .map(str::to_string),
    ) else {
        return Ok(());
    };
    // a spawned agent is read with its parent; its own children are linked to the parent too (depth one)
    if parsed
        .meta
        .get("session_meta")
        .and_then(parent_thread)
        .is_some()
    {
        return Ok(());
    }
    // which call spawned which thread: the outputs of the spawn calls
    let mut spawned: HashMap<String, String> = HashMap::new();
    let calls: HashMap<&str, &str> = parsed
        .messages
        .iter()
        .flat_map(|m| m.message.content.iter())
        .filter_map(|b| match b {
            Block::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    for b in parsed
        .messages
        .iter()
        .flat_map(|m| m.message.content.iter())
    {
        if let Block::ToolResult {
            tool_use_id,
            content,
            ..
        } = b
            && calls
                .get(tool_use_id.as_str())
                .is_some_and(|n| n.contains("spawn"))
            && let Ok(v) = serde_json::from_str::<Value>(&content.text())
            && let Some(agent) = v.get("agent_id").and_then(Value::as_str)
        {
            spawned.insert(agent.to_string(), tool_use_id.clone());
        }
    }
    for f in child_rollouts(dir, &id) {
        let lines = super::read_jsonl(&f)?;
        let mut child = parse_inner(&f, &lines)?;
        let meta = child
            .meta
            .get("session_meta")
            .cloned()
            .unwrap_or(Value::Null);
        let spawn = meta.pointer("/source/subagent/thread_spawn");
        let who = spawn
            .and_then(|s| s.get("agent_nickname").or_else(|| s.get("agent_role")))
            .and_then(Value::as_str)
            .map(str::to_string);
        child.meta["subagent"] = json!(true);
        child.meta["subagent_file"] =
            json!(f.file_name().map(|n| n.to_string_lossy().into_owned()));
        if let Some(call) = meta
            .get("id")
            .and_then(Value::as_str)
            .and_then(|t| spawned.get(t))
        {
            child.meta["spawned_by"] =
                json!({"call_id": call, "description": who.clone().unwrap_or_default()});
        }
        if let Some(w) = who {
            child.title = Some(format!("subagent: {w}"));
        }
        parsed.children.push(child);
    }
    Ok(())
}

fn call_id(path: &Path, no: usize, payload: &Value, what: &str) -> Result<String, FormatError> {
    payload
        .get("call_id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| FormatError::new(path, no, format!("{what} without \"call_id\"")))
}

fn assistant(
    built: &mut Vec<Built>,
    open: &mut Option<usize>,
    at: Option<i64>,
    model: &Option<String>,
) -> usize {
    if let Some(a) = *open {
        return a;
    }
    built.push(Built {
        role: Role::Assistant,
        blocks: Vec::new(),
        lines: Vec::new(),
        created_at: at,
        usage: None,
        marker: None,
        model: model.clone(),
        speed: None,
        searches: 0,
    });
    *open = Some(built.len() - 1);
    built.len() - 1
}

impl Built {
    /// A message that is not a reply (tool results).
    fn note(role: Role, blocks: Vec<Block>, lines: Vec<Value>, created_at: Option<i64>) -> Built {
        Built {
            role,
            blocks,
            lines,
            created_at,
            usage: None,
            marker: None,
            model: None,
            speed: None,
            searches: 0,
        }
    }
}

/// The text of a replacement history (response items): what the model saw after the compaction.
/// The text of a compacted record's replacement history: its messages' text, in order. Codex 0.142.2 and later
/// end it with a `{type: "compaction"}` item whose summary is encrypted (`encrypted_content`, readable only by the
/// provider): the model read it, cairn cannot, so the text says it is there and how long it is.
fn replacement_text(items: &[Value]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for item in items {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
        if matches!(ty, "compaction" | "compaction_summary") {
            let n = item
                .get("encrypted_content")
                .and_then(Value::as_str)
                .map_or(0, str::len);
            parts.push(format!(
                "[Codex's compaction summary, encrypted by the provider: {n} characters cairn cannot read]"
            ));
            continue;
        }
        parts.extend(
            text_of(item.get("content").unwrap_or(&Value::Null))
                .into_iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text),
                    _ => None,
                }),
        );
    }
    parts.join("\n\n")
}

fn push(out: &mut Vec<ImportedMessage>, b: Built) {
    let mut m = NewMessage::new(b.role, b.blocks);
    m.meta = json!({"source": "codex", "lines": b.lines});
    if let Some(c) = b.marker {
        m.meta["cairn"] = c;
    }
    if let Some(model) = b.model {
        m.meta["model"] = json!(model);
    }
    if let Some(speed) = b.speed {
        // priced at that tier (`gpt-5.5@priority`, [`crate::models::priced_model`])
        m.meta["speed"] = json!(speed);
    }
    m.usage = b.usage;
    m.created_at = b.created_at;
    let parent = out.len().checked_sub(1);
    out.push(ImportedMessage { parent, message: m });
}
