//! mini-SWE-agent's trajectories (`<instance>.traj.json` of a batch run, `last_mini_run.traj.json` of the `mini`
//! CLI): one JSON document, rewritten after every step, with `messages` (the history the model read, each with an
//! `extra` of what mini-SWE-agent kept beside it), `info` (the run's model stats, configuration, exit status and
//! submission) and `trajectory_format`. Read as the writer lays it out today and before:
//! - `mini-swe-agent-1` (1.x): every message `{role, content, timestamp}`; a reply's `extra.response` is litellm's
//!   response with its `usage`. Commands are written in the reply's text; their output is the next user message.
//! - `mini-swe-agent-1.1` (2.x): each message as the model's API wrote it, plus `extra`. Chat Completions replies
//!   with `tool_calls` and `tool` results (`extra.returncode`), or the text-based form as in 1.x; Responses API
//!   replies as the response object (`object: "response"`, `output` items, its own `usage`) and their results as
//!   `function_call_output` items. A reply the harness rejected (no tool call) is billed and kept on the feedback
//!   message that replaced it (`extra.interrupt_type`, `extra.response`): it becomes a failed reply that is not
//!   sent again. The run's end is an `exit` message, which the model never reads: kept as metadata.
//!
//! Every reply carries the prompt its provider measured, so these runs are replayed and priced like any session;
//! what mini-SWE-agent computed a reply cost (`extra.cost`, litellm's price list) prices a model no catalog knows.

use std::path::Path;

use serde_json::{Value, json};

use super::super::{FormatError, ImportReport, Parsed, short_title, text_of};
use super::litellm_usage;
use crate::model::{Block, CairnMeta, NewMessage, Role, ToolResultContent};

/// The harness's name, as messages' `source` records it.
pub const SOURCE: &str = "mini-swe-agent";

/// Whether a document is a mini-SWE-agent trajectory.
pub fn is_mini_swe_agent(doc: &Value) -> bool {
    doc.get("messages").is_some_and(Value::is_array)
        && (doc
            .get("trajectory_format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("mini-swe-agent"))
            || doc.pointer("/info/mini_version").is_some())
}

/// A mini-SWE-agent trajectory: its messages in order, one conversation.
pub fn parse(path: &Path, line: usize, doc: &Value) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let messages = doc
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let info = doc.get("info").cloned().unwrap_or(Value::Null);
    // the model as configured (`anthropic/claude-sonnet-4-5-20250929`), for replies whose response names none
    let configured = info
        .pointer("/config/model/model_name")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty());
    let mut out: Vec<NewMessage> = Vec::new();
    let mut exits = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.get("role").and_then(Value::as_str) == Some("exit") {
            exits.push(m.clone());
            report.skip("the run's exit (never sent to the model; kept as metadata)");
            continue;
        }
        let mut built = entry(m, &format!("messages[{i}]"), configured, &mut out)
            .map_err(|e| FormatError::new(path, line, e))?;
        built.created_at = timestamp(m);
        out.push(built);
    }
    // messages mini-SWE-agent wrote no time for (2.x's system message and task) are as old as the next one that
    // has a time; the rest as the one before
    let first = out.iter().find_map(|m| m.created_at);
    let mut last = first;
    for m in &mut out {
        match m.created_at {
            Some(t) => last = Some(t),
            None => m.created_at = last,
        }
    }
    if out.is_empty() {
        return Err(FormatError::empty(
            path,
            line,
            "nothing to import: the trajectory holds no messages",
        ));
    }
    let exit = info
        .get("exit_status")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let title = title(doc, &out, exit);
    let mut meta = json!({"source": SOURCE, "info": info});
    for k in ["trajectory_format", "instance_id"] {
        if let Some(v) = doc.get(k) {
            meta[k] = v.clone();
        }
    }
    if !exits.is_empty() {
        meta["exit"] = Value::Array(exits);
    }
    let mut parsed = Parsed::chained(out, None, meta, report);
    parsed.title = title.or(parsed.title);
    Ok(parsed)
}

/// The message one entry of `messages` is (not the run's exit). A feedback message that replaced a rejected reply
/// puts that reply into `out` first.
fn entry(
    m: &Value,
    at: &str,
    configured: Option<&str>,
    out: &mut Vec<NewMessage>,
) -> Result<NewMessage, String> {
    let extra = m.get("extra").unwrap_or(&Value::Null);
    if m.get("object").and_then(Value::as_str) == Some("response") {
        return Ok(reply_of_response(m, configured));
    }
    if m.get("type").and_then(Value::as_str) == Some("function_call_output") {
        return function_call_output(m, at);
    }
    match m.get("role").and_then(Value::as_str) {
        Some("assistant") => {
            let mut r = super::super::messages_json::openai_message(&strip(m), at)?;
            if let Some(b) = super::super::reasoning_content(m) {
                r.content.insert(0, b);
            }
            let response = extra.get("response").unwrap_or(&Value::Null);
            r.usage = response.get("usage").and_then(litellm_usage);
            r.meta = reply_meta(m, response, configured);
            Ok(r)
        }
        Some(_) => {
            // a rejected reply, billed, that the feedback message replaced: not sent again
            if let Some(response) = extra.get("response").filter(|r| r.is_object()) {
                out.push(rejected(response, configured));
            }
            let mut r = super::super::messages_json::openai_message(&strip(m), at)?;
            mark_error(&mut r, extra);
            r.meta = entry_meta(m);
            Ok(r)
        }
        None => Err(format!(
            "{at}: neither a message with a \"role\" nor a response or a tool's output"
        )),
    }
}

/// A message without its `extra`, for the Chat Completions reader (the extra is kept in the metadata).
fn strip(m: &Value) -> Value {
    let mut m = m.clone();
    if let Some(o) = m.as_object_mut() {
        o.remove("extra");
        o.remove("reasoning_content");
        o.remove("timestamp");
    }
    m
}

/// Every field of a message the reader does not model, under `entry`.
fn entry_meta(m: &Value) -> Value {
    let mut entry = m.clone();
    if let Some(o) = entry.as_object_mut() {
        for k in ["role", "content", "tool_calls", "tool_call_id", "output"] {
            o.remove(k);
        }
    }
    json!({"source": SOURCE, "entry": entry})
}

/// A reply's metadata: its fields, and the model its response names (else the one configured).
fn reply_meta(m: &Value, response: &Value, configured: Option<&str>) -> Value {
    let mut meta = entry_meta(m);
    set_model(&mut meta, response, configured);
    meta
}

/// Records in a reply's `meta` the model its response (`response`) names, else the one configured.
fn set_model(meta: &mut Value, response: &Value, configured: Option<&str>) {
    if let Some(model) = response
        .get("model")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or(configured)
    {
        meta["model"] = json!(model);
    }
}

/// A Responses API reply (`object: "response"`): its `output` items as text, reasoning and tool calls.
fn reply_of_response(m: &Value, configured: Option<&str>) -> NewMessage {
    let mut blocks = Vec::new();
    for item in m
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let t = text_of(item.get("content"));
                if !t.is_empty() {
                    blocks.push(Block::text(t));
                }
            }
            Some("reasoning") => blocks.push(super::super::reasoning_item(item)),
            Some("function_call") => blocks.push(Block::ToolUse {
                id: item
                    .get("call_id")
                    .or_else(|| item.get("id"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                input: item
                    .get("arguments")
                    .map_or(Value::Null, super::super::call_input),
            }),
            _ => blocks.push(super::super::unknown_block(item)),
        }
    }
    let mut r = NewMessage::new(Role::Assistant, blocks);
    r.usage = m.get("usage").and_then(litellm_usage);
    r.meta = json!({"source": SOURCE, "entry": {"extra": m.get("extra"), "id": m.get("id")}});
    set_model(&mut r.meta, m, configured);
    r
}

/// A Responses API tool result (`function_call_output`).
fn function_call_output(m: &Value, at: &str) -> Result<NewMessage, String> {
    let id = m
        .get("call_id")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{at}: function_call_output without \"call_id\""))?;
    let mut r = NewMessage::new(
        Role::Tool,
        vec![Block::ToolResult {
            tool_use_id: id.to_string(),
            content: ToolResultContent::Text(text_of(m.get("output"))),
            is_error: false,
        }],
    );
    mark_error(&mut r, m.get("extra").unwrap_or(&Value::Null));
    r.meta = entry_meta(m);
    Ok(r)
}

/// A tool result whose command failed (a non-zero `returncode`, or an exception mini-SWE-agent recorded) is an
/// error.
fn mark_error(r: &mut NewMessage, extra: &Value) {
    let failed = extra
        .get("returncode")
        .and_then(Value::as_i64)
        .is_some_and(|c| c != 0)
        || extra
            .get("exception_info")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
    if !failed {
        return;
    }
    for b in &mut r.content {
        if let Block::ToolResult { is_error, .. } = b {
            *is_error = true;
        }
    }
}

/// The reply the harness rejected (its response, kept on the feedback message): billed, measured, and left out
/// of every request after it.
fn rejected(response: &Value, configured: Option<&str>) -> NewMessage {
    let mut r = if response.get("object").and_then(Value::as_str) == Some("response") {
        reply_of_response(response, configured)
    } else {
        let said = response
            .pointer("/choices/0/message")
            .unwrap_or(&Value::Null);
        let mut blocks: Vec<Block> = super::super::reasoning_content(said).into_iter().collect();
        let t = text_of(said.get("content"));
        if !t.is_empty() {
            blocks.push(Block::text(t));
        }
        let mut r = NewMessage::new(Role::Assistant, blocks);
        r.usage = response.get("usage").and_then(litellm_usage);
        r.meta = json!({"source": SOURCE});
        set_model(&mut r.meta, response, configured);
        r
    };
    r.meta["rejected"] = json!(true);
    r.meta["cairn"] = CairnMeta::Failed { sent_again: false }.to_value();
    r
}

/// When a message was written: mini-SWE-agent 1.x's `timestamp`, 2.x's `extra.timestamp` (epoch seconds), or a
/// response's `created_at`. (A response's `created`, whole seconds when the request began, can come before the
/// message written last: a rejected reply takes the time of the message before it.)
fn timestamp(m: &Value) -> Option<i64> {
    let secs = m
        .get("timestamp")
        .or_else(|| m.pointer("/extra/timestamp"))
        .or_else(|| m.get("created_at"))
        .and_then(Value::as_f64)?;
    (secs.is_finite() && secs > 0.0).then(|| (secs * 1000.0).round() as i64)
}

/// The run's title: the SWE-bench instance where the run names one, else the first line of the task it was
/// given; with the exit status.
fn title(doc: &Value, out: &[NewMessage], exit: Option<&str>) -> Option<String> {
    let named = doc
        .get("instance_id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            out.iter()
                .find(|m| m.role == Role::User)
                .map(|m| crate::model::plain_text(&m.content))
                .map(|t| {
                    let t = t.trim_start();
                    short_title(t.strip_prefix("Please solve this issue:").unwrap_or(t))
                })
                .filter(|t| !t.is_empty())
        });
    match (named, exit) {
        (Some(n), Some(e)) => Some(format!("{n} (mini-SWE-agent, {e})")),
        (Some(n), None) => Some(n),
        (None, Some(e)) => Some(format!("mini-SWE-agent run ({e})")),
        (None, None) => None,
    }
}
