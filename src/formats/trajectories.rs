//! Research corpora of agent runs: SWE-agent trajectories (`.traj`: one JSON document with `history` messages,
//! `trajectory` steps and `info` with the run's model stats and exit status) and OpenHands trajectories (a JSON
//! array of events: actions and the observations they caused, each LLM call's response and usage on the action).
//! Both become conversations with tool calls paired to their results, their usage where it was recorded, and the
//! run's outcome in the conversation's metadata.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, chain, text_of, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};

pub mod mini_swe_agent;

/// Whether a file is the predictions a SWE-agent or mini-SWE-agent batch run writes beside its trajectories
/// (`preds.json`: each instance's patch, a folder per instance holding its `.traj` or `.traj.json`): no session.
pub fn is_predictions(p: &Path) -> bool {
    if p.file_name().is_none_or(|n| n != "preds.json") {
        return false;
    }
    let Some(Ok(dirs)) = p.parent().map(std::fs::read_dir) else {
        return false;
    };
    dirs.flatten().any(|d| {
        let name = d.file_name().to_string_lossy().into_owned();
        [".traj", ".traj.json"]
            .iter()
            .any(|ext| d.path().join(format!("{name}{ext}")).is_file())
    })
}

/// Whether a document is a SWE-agent trajectory.
pub fn is_sweagent(doc: &Value) -> bool {
    doc.get("history").is_some_and(Value::is_array)
        && doc.get("trajectory").is_some_and(Value::is_array)
}

/// Whether a document is an OpenHands trajectory (an array of events).
pub fn is_openhands(doc: &Value) -> bool {
    doc.as_array().is_some_and(|a| {
        !a.is_empty()
            && a.iter()
                .take(20)
                .all(|e| e.get("source").is_some() && e.get("id").is_some())
            && a.iter()
                .any(|e| e.get("action").is_some() || e.get("observation").is_some())
    })
}

/// A SWE-agent trajectory. Its history is the conversation the model saw: messages in OpenAI's shape (SWE-agent
/// 1.x: `tool_calls` and `tool` messages), or, in older runs, replies whose `action` is a command and whose next
/// message is its output: those become a tool call (named by the command's first word) and its result.
pub fn parse_sweagent(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let history = doc
        .get("history")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if history.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: the trajectory's history is empty",
        ));
    }
    let mut out: Vec<NewMessage> = Vec::new();
    // the call an old-style action opened, waiting for the observation in the next message
    let mut open_call: Option<String> = None;
    for (i, h) in history.iter().enumerate() {
        out.push(sweagent_message(path, line, i, h, &mut open_call)?);
    }
    // an action whose observation never came (the run ended on it) is left unanswered, as SWE-agent left it
    if open_call.is_some() {
        report
            .notes
            .push("the last action has no observation (the run ended on it)".into());
    }
    for _ in doc["trajectory"].as_array().into_iter().flatten() {
        report.skip("trajectory steps (the history holds them; kept as metadata)");
    }
    let info = doc.get("info").cloned().unwrap_or(Value::Null);
    let model = sweagent_model(doc).or_else(|| sweagent_run_model(path));
    if let Some(model) = &model {
        for m in out.iter_mut().filter(|m| m.role == Role::Assistant) {
            m.meta["model"] = json!(model);
        }
    }
    if let Some(stats) = info.get("model_stats") {
        sweagent_totals(&mut out, stats);
    }
    let title = sweagent_title(&out, &info);
    let mut meta = json!({"source": "swe-agent", "info": info});
    if let Some(env) = doc.get("environment") {
        meta["environment"] = env.clone();
    }
    if let Some(cfg) = doc.get("replay_config") {
        meta["replay_config"] = cfg.clone();
    }
    meta["trajectory"] = doc.get("trajectory").cloned().unwrap_or(Value::Null);
    let mut parsed = Parsed::chained(out, None, meta, report);
    parsed.title = title.or(parsed.title);
    Ok(parsed)
}

/// The model a SWE-agent run used, where the trajectory names it: SWE-agent 1.x keeps the run's configuration
/// (`replay_config`, a JSON string) with `agent.model.name`. Runs before 1.0 name it only in their output folder.
fn sweagent_model(doc: &Value) -> Option<String> {
    let cfg = doc.get("replay_config")?;
    let parsed;
    let cfg = match cfg {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        v => v,
    };
    cfg.pointer("/agent/model/name")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
}

/// The model a run before SWE-agent 1.0 used, where its output folder names it: the run's name begins with the
/// model's (`trajectories/<user>/<model>__<data>__<config>__t-<temperature>__…/<instance>.traj`, a `:` written
/// `-`), or with the name SWE-agent gave it ([`SWEAGENT_SHORTCUTS`]: `gpt4` is `gpt-4-1106-preview`). Only a name
/// the catalog lists is taken.
fn sweagent_run_model(path: &Path) -> Option<String> {
    let run = path.parent()?.file_name()?.to_str()?;
    let (model, rest) = run.split_once("__")?;
    let model = SWEAGENT_SHORTCUTS
        .iter()
        .find(|(short, _)| *short == model)
        .map_or(model, |(_, api)| api);
    (rest.contains("__t-") && crate::models::catalog::listed(model).is_some())
        .then(|| model.to_string())
}

/// The names SWE-agent before 1.0 gave models, and the API's model each stands for: the `SHORTCUTS` of its model
/// classes (`sweagent/agent/models.py`, 0.7: OpenAI's, Anthropic's, Together's), as a run's folder names them.
const SWEAGENT_SHORTCUTS: [(&str, &str); 22] = [
    ("gpt3", "gpt-3.5-turbo-1106"),
    ("gpt3-legacy", "gpt-3.5-turbo-16k-0613"),
    ("gpt4", "gpt-4-1106-preview"),
    ("gpt4-legacy", "gpt-4-0613"),
    ("gpt4-0125", "gpt-4-0125-preview"),
    ("gpt3-0125", "gpt-3.5-turbo-0125"),
    ("gpt4-turbo", "gpt-4-turbo-2024-04-09"),
    ("gpt4o", "gpt-4o-2024-05-13"),
    ("gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
    ("gpt4omini", "gpt-4o-mini-2024-07-18"),
    ("o1", "o1-preview-2024-09-12"),
    ("o1-mini", "o1-mini-2024-09-12"),
    ("claude-2", "claude-2.1"),
    ("claude-opus", "claude-3-opus-20240229"),
    ("claude-sonnet", "claude-3-sonnet-20240229"),
    ("claude-haiku", "claude-3-haiku-20240307"),
    ("claude-sonnet-3.5", "claude-3-5-sonnet-20240620"),
    ("llama13b", "meta-llama/Llama-2-13b-chat-hf"),
    ("llama70b", "meta-llama/Llama-2-70b-chat-hf"),
    ("mistral7b", "mistralai/Mistral-7B-Instruct-v0.2"),
    ("mixtral8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
    ("redpajama7b", "togethercomputer/RedPajama-INCITE-7B-Chat"),
];

/// SWE-agent measures a run as a whole (`info.model_stats`: tokens sent and received over all its calls, the
/// calls, and what it computed they cost), never a reply: the sum is set on the last reply as the usage of that
/// many requests (no reply's prompt is measured), with what SWE-agent computed beside it.
fn sweagent_totals(out: &mut [NewMessage], stats: &Value) {
    let n = |k: &str| stats.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (sent, received, calls) = (n("tokens_sent"), n("tokens_received"), n("api_calls"));
    if sent == 0 && received == 0 {
        return;
    }
    // a trajectory that does not count its calls made one a reply: the sum is never one request's measure
    let replies = out.iter().filter(|m| m.role == Role::Assistant).count() as u64;
    let Some(last) = out.iter_mut().rev().find(|m| m.role == Role::Assistant) else {
        return;
    };
    last.usage = Some(Usage {
        input_tokens: sent,
        output_tokens: received,
        requests: if calls > 0 { calls } else { replies },
        ..Usage::default()
    });
    last.meta["run_totals"] = json!({
        "source": "info.model_stats",
        "requests": calls,
        "cost": stats.get("instance_cost"),
    });
}

/// One message of a SWE-agent history (`open_call`: the call an old-style action opened, answered by the next
/// user message).
fn sweagent_message(
    path: &Path,
    line: usize,
    i: usize,
    h: &Value,
    open_call: &mut Option<String>,
) -> Result<NewMessage, FormatError> {
    let at = format!("history[{i}]");
    let role = h.get("role").and_then(Value::as_str).unwrap_or("");
    let mut extra = serde_json::Map::new();
    for (k, v) in h.as_object().into_iter().flatten() {
        if !matches!(
            k.as_str(),
            "role" | "content" | "tool_calls" | "tool_call_id" | "thought" | "action"
        ) {
            extra.insert(k.clone(), v.clone());
        }
    }
    let mut m = match role {
        "assistant"
            if h.get("tool_calls")
                .is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty())) =>
        {
            super::messages_json::openai_message(h, &at)
                .map_err(|e| FormatError::new(path, line, e))?
        }
        "tool" => super::messages_json::openai_message(h, &at)
            .map_err(|e| FormatError::new(path, line, e))?,
        "assistant" => sweagent_action(i, h, open_call),
        "user" => {
            let text = text_of(h.get("content"));
            match open_call.take() {
                // the observation of the previous step's action
                Some(id) => NewMessage::new(
                    Role::User,
                    vec![Block::ToolResult {
                        tool_use_id: id,
                        content: ToolResultContent::Text(text),
                        is_error: false,
                    }],
                ),
                None => NewMessage::text(Role::User, text),
            }
        }
        "system" => NewMessage::text(Role::System, text_of(h.get("content"))),
        other => {
            return Err(FormatError::new(
                path,
                line,
                format!("{at}: role {other:?} is not system, user, assistant or tool"),
            ));
        }
    };
    if let Some(t) = h.get("thought") {
        extra.insert("thought".into(), t.clone());
    }
    let mut meta = json!({"source": "swe-agent"});
    if !extra.is_empty() {
        meta["entry"] = Value::Object(extra);
    }
    if !m.meta.is_null() {
        meta["openai"] = m.meta.take();
    }
    m.meta = meta;
    Ok(m)
}

/// An old-style reply: its text, and its `action` as a call named by the command's first word.
fn sweagent_action(i: usize, h: &Value, open_call: &mut Option<String>) -> NewMessage {
    let text = text_of(h.get("content"));
    let mut blocks = vec![Block::text(text)];
    if let Some(action) = h
        .get("action")
        .and_then(Value::as_str)
        .filter(|a| !a.trim().is_empty())
    {
        let id = format!("step-{i}");
        let name = action
            .split_whitespace()
            .next()
            .unwrap_or("command")
            .to_string();
        blocks.push(Block::ToolUse {
            id: id.clone(),
            name,
            input: json!({"command": action.trim_end()}),
        });
        *open_call = Some(id);
    }
    NewMessage::new(Role::Assistant, blocks)
}

/// The issue the run solved (its first line after "ISSUE:"), and how the run ended.
fn sweagent_title(out: &[NewMessage], info: &Value) -> Option<String> {
    let issue = out
        .iter()
        .filter(|m| m.meta.pointer("/entry/is_demo").is_none())
        .find_map(|m| {
            let t = crate::model::plain_text(&m.content);
            let rest = t.split("ISSUE:").nth(1)?;
            rest.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_string)
        });
    let exit = info.get("exit_status").and_then(Value::as_str);
    match (issue, exit) {
        (Some(i), Some(e)) => Some(format!("{} (SWE-agent, {e})", super::short_title(&i))),
        (Some(i), None) => Some(super::short_title(&i)),
        (None, Some(e)) => Some(format!("SWE-agent run ({e})")),
        (None, None) => None,
    }
}

/// What a provider measured for one request, as litellm writes it (OpenHands, mini-SWE-agent): Chat Completions
/// (`prompt_tokens`, which holds the cache reads and writes; `cache_read_input_tokens` or
/// `prompt_tokens_details.cached_tokens`; `cache_creation_input_tokens` or OpenRouter's
/// `prompt_tokens_details.cache_write_tokens`) or the Responses API (`input_tokens`, holding
/// `input_tokens_details.cached_tokens`). None where it measured nothing.
pub(super) fn litellm_usage(u: &Value) -> Option<Usage> {
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64);
    let (prompt, output, read, write) =
        if u.get("prompt_tokens").is_some() || u.get("completion_tokens").is_some() {
            (
                n("/prompt_tokens"),
                n("/completion_tokens"),
                n("/cache_read_input_tokens").or_else(|| n("/prompt_tokens_details/cached_tokens")),
                n("/cache_creation_input_tokens")
                    .or_else(|| n("/prompt_tokens_details/cache_write_tokens")),
            )
        } else {
            (
                n("/input_tokens"),
                n("/output_tokens"),
                n("/input_tokens_details/cached_tokens"),
                None,
            )
        };
    if prompt.is_none() && output.is_none() {
        return None;
    }
    let (read, write) = (read.unwrap_or(0), write.unwrap_or(0));
    Some(Usage {
        input_tokens: prompt.unwrap_or(0).saturating_sub(read + write),
        output_tokens: output.unwrap_or(0),
        cache_read_input_tokens: read,
        cache_creation_input_tokens: write,
        ..Usage::default()
    })
}

/// An OpenHands trajectory being read, event by event.
#[derive(Default)]
struct OpenHands {
    report: ImportReport,
    out: Vec<NewMessage>,
    /// response id → index of its assistant message in `out`
    responses: HashMap<String, usize>,
    /// results waiting for the next message to be gathered into one
    pending: Vec<Block>,
    /// what OpenHands showed its user for a pending result where the model read another text, by call id
    shown: serde_json::Map<String, Value>,
    /// the totals so far of the last action that carried them (`llm_metrics.accumulated_token_usage`, which
    /// OpenHands attaches to each action since 2025)
    totals: Option<Usage>,
}

/// What OpenHands sent the model for a file edit (`FileEditObservation.__str__`): the editor's own output for its
/// tool (`impl_source` `oh_aci`: "File created successfully at: …"), a line for a file an LLM edit created; the
/// observation's `content` is the diff it shows its user. None for any other observation (its content is sent).
fn sent_for_edit(obs: &str, e: &Value) -> Option<String> {
    if obs != "edit" {
        return None;
    }
    let extras = e.get("extras")?;
    if extras.get("impl_source").and_then(Value::as_str) == Some("oh_aci") {
        return extras
            .get("formatted_output_and_error")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    (extras.get("prev_exist").and_then(Value::as_bool) == Some(false)).then(|| {
        format!(
            "[New file {} is created with the provided content.]",
            extras.get("path").and_then(Value::as_str).unwrap_or("")
        )
    })
}

impl OpenHands {
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let mut m = NewMessage::new(Role::User, std::mem::take(&mut self.pending));
            m.meta = json!({"source": "openhands", "kind": "observations"});
            if !self.shown.is_empty() {
                m.meta["shown"] = Value::Object(std::mem::take(&mut self.shown));
            }
            self.out.push(m);
        }
    }

    fn event(&mut self, k: usize, e: &Value) {
        let source = e.get("source").and_then(Value::as_str).unwrap_or("");
        let tcm = e.get("tool_call_metadata");
        if let Some(action) = e.get("action").and_then(Value::as_str) {
            match (source, action, tcm) {
                ("user", "message", _) => {
                    self.flush();
                    let text = e
                        .pointer("/args/content")
                        .and_then(Value::as_str)
                        .or_else(|| e.get("message").and_then(Value::as_str))
                        .unwrap_or("")
                        .to_string();
                    let mut m = NewMessage::text(Role::User, text);
                    m.meta = json!({"source": "openhands", "event": e});
                    m.created_at = timestamp_ms(e.get("timestamp"));
                    self.out.push(m);
                }
                ("agent", _, Some(t)) => self.agent_call(k, e, action, t),
                ("agent", "message" | "finish", None) => self.agent_message(e, action),
                _ => self.report.skip(format!("{source} {action} events")),
            }
            if let Some(t) = e.pointer("/llm_metrics/accumulated_token_usage") {
                self.totals = Some(super::openhands::token_usage(t));
            }
            return;
        }
        if let Some(obs) = e.get("observation").and_then(Value::as_str) {
            self.observation(e, obs, tcm);
            return;
        }
        self.report
            .skip(format!("events at [{k}] without action or observation"));
    }

    /// The assistant message of an LLM response (made on its first action).
    fn response(&mut self, k: usize, e: &Value, mr: &Value) -> usize {
        let rid = mr
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("event-{k}"));
        if let Some(&i) = self.responses.get(&rid) {
            return i;
        }
        self.flush();
        let text = mr
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .or_else(|| e.pointer("/args/thought").and_then(Value::as_str))
            .unwrap_or("")
            .to_string();
        let mut blocks = Vec::new();
        if !text.trim().is_empty() {
            blocks.push(Block::text(text));
        }
        let mut m = NewMessage::new(Role::Assistant, blocks);
        m.usage = mr.get("usage").and_then(litellm_usage);
        m.meta = json!({"source": "openhands", "model": mr.get("model"), "response_id": rid});
        m.created_at = timestamp_ms(e.get("timestamp"));
        self.out.push(m);
        self.responses.insert(rid, self.out.len() - 1);
        self.out.len() - 1
    }

    /// An agent's action made by a tool call of an LLM response.
    fn agent_call(&mut self, k: usize, e: &Value, action: &str, t: &Value) {
        let mr = t.get("model_response").cloned().unwrap_or(Value::Null);
        let call_id = t
            .get("tool_call_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("call-{k}"));
        let name = t
            .get("function_name")
            .and_then(Value::as_str)
            .unwrap_or(action)
            .to_string();
        // the call's arguments as the model sent them
        let input = mr
            .pointer("/choices/0/message/tool_calls")
            .and_then(Value::as_array)
            .and_then(|calls| {
                calls
                    .iter()
                    .find(|c| c.get("id").and_then(Value::as_str) == Some(&call_id))
            })
            .and_then(|c| c.pointer("/function/arguments"))
            .map(super::call_input)
            .unwrap_or_else(|| e.get("args").cloned().unwrap_or(Value::Null));
        let idx = self.response(k, e, &mr);
        if action == "message" || action == "finish" {
            // the agent speaking (or finishing) through a tool: its words are the reply
            let words = e
                .pointer("/args/content")
                .or_else(|| e.pointer("/args/final_thought"))
                .or_else(|| e.pointer("/args/outputs/content"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if !words.trim().is_empty() {
                self.out[idx].content.push(Block::text(words.to_string()));
            }
            return;
        }
        self.out[idx].content.push(Block::ToolUse {
            id: call_id,
            name,
            input,
        });
    }

    /// The agent's words outside any LLM response's tool call.
    fn agent_message(&mut self, e: &Value, action: &str) {
        self.flush();
        let text = e
            .pointer("/args/content")
            .or_else(|| e.pointer("/args/final_thought"))
            .or_else(|| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if text.trim().is_empty() {
            self.report
                .skip(format!("agent {action} events without text"));
            return;
        }
        let mut m = NewMessage::text(Role::Assistant, text);
        m.meta = json!({"source": "openhands", "event_id": e.get("id")});
        m.created_at = timestamp_ms(e.get("timestamp"));
        // a reply with no tool call carries no response of its own: its call is what the totals its action carries
        // gained since the last action's (OpenHands attaches the totals so far to each action)
        if let Some(t) = e.pointer("/llm_metrics/accumulated_token_usage") {
            let now = super::openhands::token_usage(t);
            let before = self.totals.unwrap_or_default();
            let call = Usage {
                input_tokens: now.input_tokens.saturating_sub(before.input_tokens),
                output_tokens: now.output_tokens.saturating_sub(before.output_tokens),
                cache_read_input_tokens: now
                    .cache_read_input_tokens
                    .saturating_sub(before.cache_read_input_tokens),
                cache_creation_input_tokens: now
                    .cache_creation_input_tokens
                    .saturating_sub(before.cache_creation_input_tokens),
                ..Usage::default()
            };
            if call.output_tokens > 0 {
                m.usage = Some(call);
                m.meta["usage_from"] = json!("the totals' gain since the last action");
                if let Some(model) = t
                    .get("model")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    m.meta["model"] = json!(model);
                }
            }
        }
        self.out.push(m);
    }

    /// An observation: the result of the call that caused it.
    fn observation(&mut self, e: &Value, obs: &str, tcm: Option<&Value>) {
        let call = tcm
            .and_then(|t| t.get("tool_call_id"))
            .and_then(Value::as_str);
        let Some(id) = call else {
            self.report.skip(format!("{obs} observations"));
            return;
        };
        let content = e
            .get("content")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .or_else(|| e.get("message").and_then(Value::as_str))
            .unwrap_or("");
        let text = match sent_for_edit(obs, e) {
            Some(sent) => {
                // the diff OpenHands shows its user, kept beside what the model read
                if !content.is_empty() && content != sent {
                    self.shown.insert(id.to_string(), Value::from(content));
                }
                sent
            }
            None => content.to_string(),
        };
        let exit = e
            .pointer("/extras/metadata/exit_code")
            .and_then(Value::as_i64);
        let is_error = obs == "error" || exit.is_some_and(|c| c != 0);
        self.pending.push(Block::ToolResult {
            tool_use_id: id.to_string(),
            content: ToolResultContent::Text(text),
            is_error,
        });
    }
}

/// An OpenHands trajectory: the user's messages, each LLM response as one assistant message (its text and every
/// tool call it made, however many action events carry them), each observation as the result of the call that
/// caused it, the agent's messages and its finish. Environment events (agent state changes) are counted, not
/// imported.
pub fn parse_openhands(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let events = doc.as_array().cloned().unwrap_or_default();
    let mut r = OpenHands::default();
    for (k, e) in events.iter().enumerate() {
        r.event(k, e);
    }
    r.flush();
    // results arrive after their response's every call: the assistant message must come right before them, which
    // holds because a new response flushes the results of the previous one first
    let mut out = r.out;
    out.retain(|m| !m.content.is_empty());
    if out.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: no messages in the trajectory",
        ));
    }
    let mut report = r.report;
    let mut meta = json!({"source": "openhands", "events": events.len()});
    // what the totals counted that no reply carries: calls no event names (the condenser's, a title's)
    if let Some(t) = r.totals {
        let (mut input, mut output) = (0, 0);
        for u in out.iter().filter_map(|m| m.usage) {
            input += u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
            output += u.output_tokens;
        }
        let total_in = t.input_tokens + t.cache_read_input_tokens + t.cache_creation_input_tokens;
        let (more_in, more_out) = (
            total_in.saturating_sub(input),
            t.output_tokens.saturating_sub(output),
        );
        if more_out > 0 {
            meta["calls_without_event"] =
                json!({"prompt_tokens": more_in, "completion_tokens": more_out});
            report.notes.push(format!(
                "OpenHands' totals count {more_in} prompt and {more_out} output tokens more than the replies carry \
                 (calls no event names: a condenser's, a title's); they are in no figure"
            ));
        }
    }
    let messages = chain(out);
    let tip = messages.len().checked_sub(1);
    Ok(Parsed {
        title: super::title_of(&messages),
        messages,
        tip,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    })
}
