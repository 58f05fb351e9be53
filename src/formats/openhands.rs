//! OpenHands as its SDK and CLI keep a conversation today (V1, `openhands-sdk`): a folder per conversation
//! (`~/.openhands/conversations/<id>/`) holding `base_state.json` (the agent's configuration, the HEAD of its event
//! tree as `leaf_event_id`, and every LLM call's usage under `stats.usage_to_metrics.<usage>.token_usages`, by
//! response id) and `events/event-<n>-<id>.json`, one event a file, each naming its parent. The events make a tree:
//! moving the HEAD back (`navigate_to`) and sending a message starts a sibling branch, as in cairn. The state file
//! is what is imported; its events are read with it. The older trajectory (an array of events) is read by
//! [`super::trajectories::parse_openhands`], and the app's and CLI's folders from before the SDK (one event a file
//! under `sessions/<id>/events/`) by [`sessions`].
//!
//! An LLM response is one reply: its text, reasoning and every tool call its action events carry; the observations
//! that answer them are one message of results, as the SDK sends them (a terminal's output with the working folder,
//! interpreter and exit code it appends; an error's header). A condensation is the harness's compaction: its
//! summary, what it kept (the events on its path it did not forget) and the condenser's own call's usage.

pub mod sessions;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, timestamp_ms};
use crate::model::{Block, CairnMeta, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, Ref, harness_meta};
use crate::store::ImportedMessage;

const SOURCE: &str = "openhands";

/// The file a conversation's state is kept in (what is imported).
pub const STATE_FILE: &str = "base_state.json";

/// The parent the SDK writes for an event that starts a new root (`ROOT_PARENT_ID`).
const ROOT: &str = "__root__";

/// What the SDK prepends to a failed tool's output (`Observation.ERROR_MESSAGE_HEADER`).
const ERROR_HEADER: &str = "[An error occurred during execution.]\n";

/// Whether a document is a conversation's state (`base_state.json`).
pub fn is_state(doc: &Value) -> bool {
    doc.get("id").is_some_and(Value::is_string)
        && doc.pointer("/agent/llm").is_some()
        && (doc.get("stats").is_some() || doc.get("execution_status").is_some())
}

/// The state file an event file is read with: `<conversation>/events/event-<n>-<id>.json` →
/// `<conversation>/base_state.json`, where it is present.
pub fn state_of_event(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    if !(name.starts_with("event-") && name.ends_with(".json")) {
        return None;
    }
    let dir = p.parent()?;
    if dir.file_name()? != "events" {
        return None;
    }
    let state = dir.parent()?.join(STATE_FILE);
    state.is_file().then_some(state)
}

/// The number an event file is appended as (`event-00012-<id>.json` → 12).
fn event_index(p: &Path) -> Option<u64> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    rest.split('-').next()?.parse().ok()
}

/// The events of the conversation whose state is at `path`, in the order they were appended. A file that is not
/// JSON refuses the import (naming that file).
fn events(path: &Path) -> Result<Vec<Value>, FormatError> {
    numbered_files(&path.with_file_name("events"), event_index)?
        .iter()
        .map(|p| read_event(p))
        .collect()
}

/// The files of a folder of events that `index` numbers, in the order of their numbers (none when the folder is
/// not there).
fn numbered_files(
    dir: &Path,
    index: fn(&Path) -> Option<u64>,
) -> Result<Vec<PathBuf>, FormatError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(FormatError::new(dir, 0, e.to_string())),
    };
    let mut files: Vec<(u64, PathBuf)> = rd
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| Some((index(&p)?, p)))
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// One event's file, as JSON; one that is not refuses the import, naming the file.
fn read_event(p: &Path) -> Result<Value, FormatError> {
    let bytes = super::read_file(p)?;
    serde_json::from_slice(&bytes)
        .map_err(|e| FormatError::new(p, e.line(), format!("not JSON: {e}")))
}

/// One LLM call the state recorded: its usage, its model, and whether a message took it yet.
struct Call {
    usage: Usage,
    model: Option<String>,
    taken: bool,
}

/// An OpenHands `TokenUsage` (a call's, or the totals so far) as usage: its prompt holds the cache reads and writes
/// (litellm's), kept apart here.
pub(super) fn token_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (read, write) = (n("cache_read_tokens"), n("cache_write_tokens"));
    Usage {
        input_tokens: n("prompt_tokens").saturating_sub(read.saturating_add(write)),
        output_tokens: n("completion_tokens"),
        cache_read_input_tokens: read,
        cache_creation_input_tokens: write,
        ..Usage::default()
    }
}

/// Every LLM call's usage, by response id, over every usage (the agent's, the condenser's, …).
fn calls(state: &Value) -> HashMap<String, Call> {
    let mut out = HashMap::new();
    let metrics = state
        .pointer("/stats/usage_to_metrics")
        .and_then(Value::as_object);
    for m in metrics.into_iter().flat_map(|m| m.values()) {
        let usages = m.get("token_usages").and_then(Value::as_array);
        for u in usages.into_iter().flatten() {
            let Some(id) = u
                .get("response_id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            let usage = token_usage(u);
            let model = u
                .get("model")
                .or_else(|| m.get("model_name"))
                .and_then(Value::as_str)
                .map(str::to_string);
            out.insert(
                id.to_string(),
                Call {
                    usage,
                    model,
                    taken: false,
                },
            );
        }
    }
    out
}

/// What a message was made of, for telling whether the next event joins it.
#[derive(Clone, PartialEq)]
enum Kind {
    /// An LLM response (its id).
    Response(String),
    /// Tool results.
    Results,
    Other,
}

/// A conversation being read, event by event.
struct Reader {
    out: Vec<NewMessage>,
    parents: Vec<Option<usize>>,
    kinds: Vec<Kind>,
    /// Per message, the events it was made of (the last one is what a following event must name to join it).
    events_of: Vec<Vec<String>>,
    /// Event id → the message it is in (or, for an event that makes none, the message its parent is in).
    at: HashMap<String, Option<usize>>,
    calls: HashMap<String, Call>,
    configured: Option<String>,
    report: ImportReport,
    /// Events that make no message, kept (small ones) for the conversation's metadata.
    kept: Vec<Value>,
}

/// The text and images of a list of the SDK's content items (`text`, `image` with data URLs).
fn content_blocks(items: Option<&Value>) -> Vec<Block> {
    let mut out = Vec::new();
    for c in items.and_then(Value::as_array).into_iter().flatten() {
        match c.get("type").and_then(Value::as_str) {
            Some("image") => {
                let urls = c.get("image_urls").and_then(Value::as_array);
                for u in urls.into_iter().flatten().filter_map(Value::as_str) {
                    match crate::model::image::from_data_url(u) {
                        Some(Ok(b)) => out.push(b),
                        // an image by address is named; one whose data does not decode is not pasted as text
                        Some(Err(_)) => out.push(Block::text("[image: data that does not decode]")),
                        None => out.push(Block::text(format!("[image: {u}]"))),
                    }
                }
            }
            _ => {
                if let Some(t) = c.get("text").and_then(Value::as_str) {
                    out.push(Block::text(t));
                }
            }
        }
    }
    out
}

/// What an observation sent the model (`to_llm_content`) and whether it failed: a terminal's output framed as the
/// terminal tool frames it; any other tool's content; the error header first where the tool failed.
fn observation(o: &Value, extended: Option<&Value>) -> (Vec<Block>, bool) {
    let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
    let exit = o
        .pointer("/metadata/exit_code")
        .or_else(|| o.get("exit_code"))
        .and_then(Value::as_i64);
    let failed = o.get("is_error").and_then(Value::as_bool) == Some(true);
    let mut blocks = Vec::new();
    if failed {
        blocks.push(Block::text(ERROR_HEADER));
    }
    if matches!(kind, "TerminalObservation" | "ExecuteBashObservation") {
        let md = o.get("metadata").unwrap_or(&Value::Null);
        let s = |k: &str| md.get(k).and_then(Value::as_str).unwrap_or("");
        let text: String = content_blocks(o.get("content"))
            .iter()
            .filter_map(Block::as_text)
            .collect();
        let mut sent = format!("{}{text}{}", s("prefix"), s("suffix"));
        if !s("working_dir").is_empty() {
            sent.push_str(&format!(
                "\n[Current working directory: {}]",
                s("working_dir")
            ));
        }
        if !s("py_interpreter_path").is_empty() {
            sent.push_str(&format!(
                "\n[Python interpreter: {}]",
                s("py_interpreter_path")
            ));
        }
        if let Some(c) = exit.filter(|&c| c != -1) {
            sent.push_str(&format!("\n[Command finished with exit code {c}]"));
        }
        blocks.push(Block::text(sent));
    } else {
        blocks.extend(content_blocks(o.get("content")));
    }
    blocks.extend(content_blocks(extended));
    // -1: the command is still running (a soft timeout), not a failure
    (blocks, failed || exit.is_some_and(|c| c > 0))
}

/// A list of blocks as a tool result's content: one text where it is all text.
fn result_content(blocks: Vec<Block>) -> ToolResultContent {
    if blocks.iter().all(|b| b.as_text().is_some()) {
        ToolResultContent::Text(blocks.iter().filter_map(Block::as_text).collect())
    } else {
        ToolResultContent::Blocks(blocks)
    }
}

/// The reasoning an action or message event carries: Anthropic's signed thinking blocks, else the Responses API's
/// reasoning item (its summary, its encrypted form), else litellm's `reasoning_content`.
fn reasoning(e: &Value) -> Vec<Block> {
    let thinking: Vec<Block> = e
        .get("thinking_blocks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| {
            let t = b
                .get("thinking")
                .or_else(|| b.get("data"))
                .and_then(Value::as_str)?;
            Some(Block::Thinking {
                thinking: t.to_string(),
                signature: b
                    .get("signature")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        })
        .collect();
    if !thinking.is_empty() {
        return thinking;
    }
    if let Some(item) = e.get("responses_reasoning_item").filter(|v| v.is_object()) {
        return vec![super::reasoning_item(item)];
    }
    super::reasoning_content(e).into_iter().collect()
}

impl Reader {
    /// The message an event hangs under, and the event it names: its parent, or (an event written before the SDK
    /// kept a tree) the event before it.
    fn parent<'e>(
        &mut self,
        e: &'e Value,
        before: Option<&'e str>,
    ) -> (Option<usize>, Option<&'e str>) {
        match e.get("parent_id").and_then(Value::as_str) {
            Some(ROOT) => (None, None),
            Some(p) => match self.at.get(p) {
                Some(&m) => (m, Some(p)),
                None => {
                    self.report
                        .skip("events whose parent is not in the conversation (hung under the event before)");
                    (
                        before.and_then(|b| self.at.get(b).copied().flatten()),
                        before,
                    )
                }
            },
            None => (
                before.and_then(|b| self.at.get(b).copied().flatten()),
                before,
            ),
        }
    }

    /// Adds event `id` of kind `kind` to the message its parent ends, where that message is of the same kind and
    /// ends on that parent; else starts a message of `role`. Returns the message's index.
    fn place(
        &mut self,
        id: &str,
        kind: Kind,
        role: Role,
        parent: (Option<usize>, Option<&str>),
    ) -> usize {
        if let (Some(m), Some(p)) = parent
            && self.kinds[m] == kind
            && kind != Kind::Other
            && self.events_of[m].last().is_some_and(|l| l == p)
        {
            self.events_of[m].push(id.to_string());
            self.at.insert(id.to_string(), Some(m));
            return m;
        }
        let mut message = NewMessage::new(role, Vec::new());
        message.meta = json!({"source": SOURCE});
        self.out.push(message);
        self.parents.push(parent.0);
        self.kinds.push(kind);
        self.events_of.push(vec![id.to_string()]);
        let m = self.out.len() - 1;
        self.at.insert(id.to_string(), Some(m));
        m
    }

    /// The usage and model of response `rid`, set on message `m` (once per response).
    fn measure(&mut self, m: usize, rid: Option<&str>) {
        let call = rid.and_then(|r| self.calls.get_mut(r)).filter(|c| !c.taken);
        let model = match call {
            Some(c) => {
                c.taken = true;
                self.out[m].usage = Some(c.usage);
                c.model.clone()
            }
            None => None,
        };
        // the call's model; else (no call recorded) the one configured, where the message names none yet
        let named = self.out[m].meta.get("model").is_some();
        if let Some(model) = model.or_else(|| self.configured.clone().filter(|_| !named)) {
            self.out[m].meta["model"] = json!(model);
        }
    }

    /// Reads one event (`before`: the event read before it, for events written before the SDK kept a tree).
    fn event(&mut self, e: &Value, before: Option<&str>) {
        let id = e
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let kind = e
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let source = e.get("source").and_then(Value::as_str).unwrap_or("");
        let parent = self.parent(e, before);
        let made = match kind.as_str() {
            "SystemPromptEvent" => {
                let m = self.place(&id, Kind::Other, Role::System, parent);
                let mut blocks = content_blocks(Some(&json!([e.get("system_prompt")])));
                blocks.extend(content_blocks(Some(&json!([e.get("dynamic_context")]))));
                self.out[m].content = blocks;
                Some(m)
            }
            "MessageEvent" if source == "agent" => {
                let rid = e.get("llm_response_id").and_then(Value::as_str);
                let key = rid.map_or_else(|| format!("event {id}"), str::to_string);
                let m = self.place(&id, Kind::Response(key), Role::Assistant, parent);
                let mut blocks = reasoning(e.get("llm_message").unwrap_or(&Value::Null));
                if blocks.is_empty() {
                    blocks = reasoning(e);
                }
                blocks.extend(content_blocks(e.pointer("/llm_message/content")));
                self.out[m].content.extend(blocks);
                self.measure(m, rid);
                Some(m)
            }
            "MessageEvent" | "CondensationSummaryEvent" => {
                let m = self.place(&id, Kind::Other, Role::User, parent);
                let mut blocks = content_blocks(e.pointer("/llm_message/content"));
                blocks.extend(content_blocks(e.get("extended_content")));
                if let Some(s) = e.get("summary").and_then(Value::as_str) {
                    blocks.push(Block::text(s));
                }
                self.out[m].content = blocks;
                Some(m)
            }
            "ActionEvent" => Some(self.action(&id, e, parent)),
            "ObservationEvent" | "UserRejectObservation" | "AgentErrorEvent" => {
                Some(self.result(&id, &kind, e, parent))
            }
            "Condensation" => Some(self.condensation(&id, e, parent)),
            _ => None,
        };
        match made {
            Some(m) => self.record(m, e),
            None => self.pass(id, &kind, e, parent),
        }
    }

    /// Message `m`'s time (its first event's) and the events it was made of, in its metadata (what became the
    /// message is not kept twice; the rest, ids, the action, its observation's extras, is).
    fn record(&mut self, m: usize, e: &Value) {
        if self.events_of[m].len() == 1 {
            self.out[m].created_at = timestamp_ms(e.get("timestamp"));
        }
        let meta = &mut self.out[m].meta;
        let mut kept = e.clone();
        if let Some(o) = kept.as_object_mut() {
            // what became the message (its text, thinking, call, result) is not kept twice; the rest (ids, the
            // action's kind, the observation's exit code and metadata) is
            for k in [
                "system_prompt",
                "dynamic_context",
                "tools",
                "llm_message",
                "extended_content",
                "thought",
                "thinking_blocks",
                "reasoning_content",
                "responses_reasoning_item",
                "forgotten_event_ids",
                "summary",
                "error",
            ] {
                o.remove(k);
            }
            if let Some(a) = o.get_mut("action").and_then(Value::as_object_mut) {
                a.retain(|k, _| k == "kind");
            }
            if let Some(c) = o.get_mut("tool_call").and_then(Value::as_object_mut) {
                c.remove("arguments");
            }
            if let Some(ob) = o.get_mut("observation").and_then(Value::as_object_mut) {
                ob.remove("content");
            }
        }
        match meta.get_mut("events").and_then(Value::as_array_mut) {
            Some(a) => a.push(kept),
            None => meta["events"] = json!([kept]),
        }
    }

    /// An event that is no message (a pause, a hook, the state's sync) sits where its parent is: its children hang
    /// under that message, and a message its parent ends still ends on it.
    fn pass(&mut self, id: String, kind: &str, e: &Value, parent: (Option<usize>, Option<&str>)) {
        self.at.insert(id.clone(), parent.0);
        if let (Some(m), Some(p)) = parent
            && self.events_of[m].last().is_some_and(|l| l == p)
        {
            self.events_of[m].push(id);
        }
        if matches!(kind, "TokenEvent" | "LLMCompletionLogEvent") {
            self.report
                .skip(format!("{kind} events (raw tokens and logs, not kept)"));
        } else {
            self.report
                .skip(format!("{kind} events (no message; kept as metadata)"));
            self.kept.push(e.clone());
        }
    }

    /// An action event: a tool call of the reply its LLM response makes (with the response's reasoning and text).
    fn action(&mut self, id: &str, e: &Value, parent: (Option<usize>, Option<&str>)) -> usize {
        let rid = e.get("llm_response_id").and_then(Value::as_str);
        let key = rid.map_or_else(|| format!("event {id}"), str::to_string);
        let m = self.place(id, Kind::Response(key), Role::Assistant, parent);
        let mut blocks = reasoning(e);
        blocks.extend(content_blocks(e.get("thought")));
        let call = e.get("tool_call").unwrap_or(&Value::Null);
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        blocks.push(Block::ToolUse {
            id: s(call.get("id").or_else(|| e.get("tool_call_id"))),
            name: s(call.get("name").or_else(|| e.get("tool_name"))),
            input: call.get("arguments").map_or_else(
                || e.get("action").cloned().unwrap_or(Value::Null),
                super::call_input,
            ),
        });
        self.out[m].content.extend(blocks);
        if self.out[m].usage.is_none() {
            self.measure(m, rid);
        }
        m
    }

    /// An observation, a rejection or an agent's error: the result of the call it answers.
    fn result(
        &mut self,
        id: &str,
        kind: &str,
        e: &Value,
        parent: (Option<usize>, Option<&str>),
    ) -> usize {
        let m = self.place(id, Kind::Results, Role::User, parent);
        let (blocks, is_error) = match kind {
            "ObservationEvent" => observation(
                e.get("observation").unwrap_or(&Value::Null),
                e.get("extended_content"),
            ),
            "UserRejectObservation" => (
                vec![Block::text(format!(
                    "Action rejected: {}",
                    e.get("rejection_reason")
                        .and_then(Value::as_str)
                        .unwrap_or("User rejected the action")
                ))],
                true,
            ),
            _ => (
                vec![Block::text(
                    e.get("error").and_then(Value::as_str).unwrap_or_default(),
                )],
                true,
            ),
        };
        // the agent's `finish`: the run ended with this result
        let finished =
            e.pointer("/observation/kind").and_then(Value::as_str) == Some("FinishObservation");
        if finished {
            self.out[m].meta["cairn"] = CairnMeta::Finished.to_value();
        }
        self.out[m].content.push(Block::ToolResult {
            tool_use_id: e
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            content: result_content(blocks),
            is_error,
        });
        m
    }

    /// A condensation: the harness's compaction marker, keeping the messages on its path it did not forget.
    fn condensation(
        &mut self,
        id: &str,
        e: &Value,
        parent: (Option<usize>, Option<&str>),
    ) -> usize {
        let forgotten: HashSet<&str> = e
            .get("forgotten_event_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut path = Vec::new();
        let mut at = parent.0;
        while let Some(m) = at {
            path.push(m);
            at = self.parents[m];
        }
        path.reverse();
        // what it kept, and how many of those the summary follows (`summary_offset` counts the events it kept)
        let offset = e.get("summary_offset").and_then(Value::as_u64).unwrap_or(0);
        let (mut kept, mut head, mut events) = (Vec::new(), 0, 0);
        for (depth, m) in path.iter().enumerate() {
            let live = self.events_of[*m]
                .iter()
                .filter(|ev| !forgotten.contains(ev.as_str()))
                .count() as u64;
            // an earlier condensation is no event of the view (and never forgotten): not kept
            if live == 0
                || CairnMeta::kind(&self.out[*m].meta) == Some(crate::model::KIND_COMPACTION)
            {
                continue;
            }
            kept.push(Ref::Depth(depth));
            if events < offset {
                head += 1;
                events += live;
            }
        }
        let summary = e.get("summary").and_then(Value::as_str);
        let m = self.place(id, Kind::Other, Role::System, parent);
        self.out[m].content = vec![Block::text(summary.map_or_else(
            || format!("OpenHands forgot {} events here", forgotten.len()),
            str::to_string,
        ))];
        self.out[m].meta["forgotten"] = json!(forgotten.len());
        self.out[m].meta["cairn"] =
            harness_meta(SOURCE, Kept::Around { head, each: kept }, summary.is_some());
        // the condenser's own call: priced, never a prompt of the conversation
        let rid = e.get("llm_response_id").and_then(Value::as_str);
        self.measure(m, rid);
        m
    }
}

/// A conversation's state and its events: one conversation, its tree as the SDK kept it, its tip the HEAD; and
/// its subagents' conversations (`subagents/<id>/`, a task or delegate tool's), theirs in turn, read with it as
/// linked conversations.
pub fn parse(path: &Path, line: usize, state: &Value) -> Result<Parsed, FormatError> {
    let mut children = Vec::new();
    subagents(path, 0, &mut children)?;
    // the parent's state counts its subagents' calls too (`task:<id>` usages): theirs, not the parent's
    let theirs: HashSet<String> = children
        .iter()
        .flat_map(|c: &(Parsed, HashSet<String>)| c.1.iter().cloned())
        .collect();
    let (mut parsed, _) = parse_one(path, line, state, &events(path)?, &theirs)?;
    parsed.children = children.into_iter().map(|(c, _)| c).collect();
    Ok(parsed)
}

/// The subagents under the conversation whose state is at `path`, each with the response ids its own state
/// recorded, depth first (a subagent's own subagents after it). A subagent with no events yet is left out.
fn subagents(
    path: &Path,
    depth: usize,
    out: &mut Vec<(Parsed, HashSet<String>)>,
) -> Result<(), FormatError> {
    let Ok(rd) = std::fs::read_dir(path.with_file_name("subagents")) else {
        return Ok(());
    };
    let mut states: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path().join(STATE_FILE))
        .filter(|p| p.is_file())
        .collect();
    states.sort();
    for state_path in states {
        let bytes = super::read_file(&state_path)?;
        let state: Value = serde_json::from_slice(&bytes)
            .map_err(|e| FormatError::new(&state_path, e.line(), format!("not JSON: {e}")))?;
        let events = events(&state_path)?;
        if events.is_empty() {
            continue;
        }
        let (mut child, ids) = parse_one(&state_path, 1, &state, &events, &HashSet::new())?;
        child.meta["subagent"] = json!(true);
        out.push((child, ids));
        // a subagent's own subagents (a bounded depth: a link loop ends)
        if depth < 4 {
            subagents(&state_path, depth + 1, out)?;
        }
    }
    Ok(())
}

/// The conversation a subagent's state belongs to: `<conversation>/subagents/<id>/base_state.json` →
/// `<conversation>/base_state.json`, where it is present.
pub fn parent_of_subagent(p: &Path) -> Option<PathBuf> {
    if p.file_name()? != STATE_FILE {
        return None;
    }
    let subagents = p.parent()?.parent()?;
    if subagents.file_name()? != "subagents" {
        return None;
    }
    let parent = subagents.with_file_name(STATE_FILE);
    parent.is_file().then_some(parent)
}

/// One conversation (no subagents), the response ids its state recorded, and the calls of `theirs` (its
/// subagents') not counted as its own.
fn parse_one(
    path: &Path,
    line: usize,
    state: &Value,
    events: &[Value],
    theirs: &HashSet<String>,
) -> Result<(Parsed, HashSet<String>), FormatError> {
    if events.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: no events beside the conversation's state (an `events` folder of event-*.json)",
        ));
    }
    let configured = state
        .pointer("/agent/llm/model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut own = calls(state);
    own.retain(|id, _| !theirs.contains(id));
    let recorded: HashSet<String> = own.keys().cloned().collect();
    let mut r = Reader {
        out: Vec::new(),
        parents: Vec::new(),
        kinds: Vec::new(),
        events_of: Vec::new(),
        at: HashMap::new(),
        calls: own,
        configured,
        report: ImportReport::default(),
        kept: Vec::new(),
    };
    let mut before: Option<&str> = None;
    for e in events {
        r.event(e, before);
        before = e.get("id").and_then(Value::as_str).or(before);
    }
    if r.out.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: no messages among the events",
        ));
    }
    let mut untaken: Vec<Value> = r
        .calls
        .iter()
        .filter(|(_, c)| !c.taken)
        .map(|(id, c)| json!({"response_id": id, "model": c.model, "usage": c.usage}))
        .collect();
    untaken.sort_by(|a, b| a["response_id"].as_str().cmp(&b["response_id"].as_str()));
    if !untaken.is_empty() {
        r.report.notes.push(format!(
            "{} LLM call(s) recorded usage that no event names (a title, a call that failed): kept in the \
             conversation's metadata, not counted",
            untaken.len()
        ));
    }
    let tip = match state.get("leaf_event_id").and_then(Value::as_str) {
        Some(leaf) => r.at.get(leaf).copied().flatten(),
        None => None,
    }
    .or(r.out.len().checked_sub(1));
    let messages: Vec<ImportedMessage> = r
        .out
        .into_iter()
        .zip(r.parents)
        .map(|(message, parent)| ImportedMessage { parent, message })
        .collect();
    let meta = conversation_meta(state, events, r.kept, untaken);
    // the title the conversation's tags give it, else its first prompt
    let named = state.pointer("/tags/title").and_then(Value::as_str);
    let title = named
        .filter(|t| !t.trim().is_empty())
        .map(super::short_title)
        .or_else(|| super::title_of(&messages));
    Ok((
        Parsed {
            title,
            messages,
            tip,
            checkpoints: Vec::new(),
            meta,
            report: r.report,
            children: Vec::new(),
        },
        recorded,
    ))
}

/// The conversation's metadata: the state's figures (the model configured, how the run ended, each usage's totals
/// as the SDK summed them), its tags, the events that made no message, the calls no event names, and what the SDK
/// sends beside the messages as the system prompt's event recorded it.
fn conversation_meta(
    state: &Value,
    events: &[Value],
    kept: Vec<Value>,
    untaken: Vec<Value>,
) -> Value {
    let mut meta = json!({
        "source": SOURCE,
        "conversation_id": state.get("id"),
        "model": state.pointer("/agent/llm/model"),
        "execution_status": state.get("execution_status"),
        "stats": state.pointer("/stats/usage_to_metrics").map(|m| {
            m.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), json!({
                "model_name": v.get("model_name"),
                "accumulated_cost": v.get("accumulated_cost"),
                "accumulated_token_usage": v.get("accumulated_token_usage"),
            }))).collect::<serde_json::Map<String, Value>>()
        }),
        "events": events.len(),
        "kept_events": kept,
    });
    if !untaken.is_empty() {
        meta["calls_without_event"] = json!(untaken);
    }
    // the window the SDK ran each model with (`context_window` on each call's usage: litellm's, or the one the
    // user set): the conversation's threshold and target are drawn from it
    let mut windows = serde_json::Map::new();
    let metrics = state
        .pointer("/stats/usage_to_metrics")
        .and_then(Value::as_object);
    for u in metrics
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(|m| m.get("token_usages").and_then(Value::as_array))
        .flatten()
    {
        if let (Some(m), Some(w)) = (
            u.get("model").and_then(Value::as_str),
            u.get("context_window")
                .and_then(Value::as_u64)
                .filter(|&w| w > 0),
        ) {
            let known = windows.get(m).and_then(Value::as_u64).unwrap_or(0);
            windows.insert(m.to_string(), json!(known.max(w)));
        }
    }
    if !windows.is_empty() {
        meta["windows"] = Value::Object(windows);
    }
    if let Some(tags) = state
        .get("tags")
        .filter(|t| t.as_object().is_some_and(|o| !o.is_empty()))
    {
        meta["tags"] = tags.clone();
    }
    // what the SDK sends beside the messages, as the system prompt's event recorded it (the tools' names and
    // descriptions; their parameters are not recorded)
    let tools: Vec<Value> = events
        .iter()
        .find(|e| e.get("kind").and_then(Value::as_str) == Some("SystemPromptEvent"))
        .and_then(|e| e.get("tools"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| json!({"name": t.get("title"), "description": t.get("description")}))
        .collect();
    if !tools.is_empty() {
        meta["tools"] = json!(tools);
        meta["sends_beside"] = json!(["/tools"]);
    }
    meta
}
