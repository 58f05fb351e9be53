//! GitHub Copilot CLI's session logs (`~/.copilot/session-state/<id>/events.jsonl`): one event a line,
//! `{type, data, id, timestamp, parentId}`, the events one chain. A `user.message` is a prompt (`content`, what the
//! user typed; `transformedContent`, what the model read with the reminders Copilot wraps around it, is kept as
//! metadata); an `assistant.message` is one model request: `content` text, `reasoningText` thinking,
//! `toolRequests` tool calls whose `tool.execution_complete` events become the results the next request read.
//! Subagents write their events into the same file, each marked with the `agentId` (the spawning call's id): they
//! are read as linked conversations under that call. `session.compaction_complete` is Copilot's compaction: its
//! summary request (`compactionTokensUsed`, measured on the whole history) is kept as the reply it was, and a
//! harness compaction marker after it carries the summary the model saw from there on.
//!
//! Usage: while a session runs Copilot records only each request's `outputTokens`. Prompt tokens are written as
//! totals per model when a run ends (`session.shutdown.modelMetrics`: requests, input with cache reads and writes
//! inside, cache reads, cache writes, output), each run's own; a run cut off (no shutdown) has none. So each reply
//! carries its own output, and the last reply of each model in a run also carries the run's prompt totals, marked
//! as the sum of that many requests ([`Usage::requests`]): counted and priced, never taken as one prompt's measure.
//! A run of one request is exactly that request's usage. Hooks, permissions and the other bookkeeping events are
//! counted in the report; those that say something of their own (hook failures, model changes, notifications,
//! shutdown figures) are kept as metadata.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, Parsed, Report, note, text_of, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, harness_meta};

const SOURCE: &str = "copilot-cli";

/// Whether a line is a Copilot CLI event: a dotted event type over a `data` object, or the session's start.
pub fn is_copilot(v: &Value) -> bool {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    v.get("data").is_some_and(Value::is_object)
        && (ty == "session.start"
            && (v.pointer("/data/copilotVersion").is_some()
                || v.pointer("/data/producer").and_then(Value::as_str) == Some("copilot-agent"))
            || matches!(
                ty,
                "user.message"
                    | "assistant.message"
                    | "assistant.turn_start"
                    | "session.model_change"
            ) && v.get("parentId").is_some())
}

/// One conversation being read: the parent session, or a subagent.
#[derive(Default)]
struct Thread {
    built: Vec<NewMessage>,
    /// calls of the newest reply waiting for their results, in call order
    pending: Vec<String>,
    results: Vec<Block>,
    results_at: Option<i64>,
}

impl Thread {
    /// Writes the results gathered for the newest reply's calls as one message (a call with none gets a result
    /// that says so, so no call is left unanswered).
    fn flush(&mut self, report: &mut Report) {
        if self.pending.is_empty() && self.results.is_empty() {
            return;
        }
        let answered: Vec<String> = self
            .results
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect();
        for id in std::mem::take(&mut self.pending) {
            if !answered.contains(&id) {
                report
                    .skip("tool calls with no recorded result (answered \"[no result recorded]\")");
                self.results.push(Block::ToolResult {
                    tool_use_id: id,
                    content: ToolResultContent::Text("[no result recorded]".into()),
                    is_error: true,
                });
            }
        }
        let mut m = NewMessage::new(Role::User, std::mem::take(&mut self.results));
        m.created_at = self.results_at.take();
        m.meta = json!({"source": SOURCE, "tool_results": true});
        self.built.push(m);
    }

    /// At the end of the file: the newest calls' results, if every call has one; else the turn is still running
    /// (a live session) and its results are left for the next read, which finds them all.
    fn finish(&mut self, report: &mut Report) {
        let answered = self.pending.iter().all(|id| {
            self.results
                .iter()
                .any(|b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id))
        });
        if answered {
            self.flush(report);
        } else {
            report.notes.push(
                "the newest tool calls have no result yet (a turn in progress): left for the next import".into(),
            );
            self.pending.clear();
            self.results.clear();
        }
    }
}

/// A model name as Copilot writes it, or None for its router (`auto`).
fn concrete(model: Option<&str>) -> Option<String> {
    model
        .filter(|m| !m.is_empty() && *m != "auto")
        .map(str::to_string)
}

/// The usage of a compaction's summary request: `inputTokens` is the whole prompt; Copilot's own billing detail
/// (`copilotUsage.tokenDetails`) splits it into uncached input, cache reads and writes where it is present.
fn compaction_usage(c: &Value) -> Option<Usage> {
    let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    let detail = |kind: &str| {
        c.pointer("/copilotUsage/tokenDetails")
            .and_then(Value::as_array)?
            .iter()
            .find(|d| d.get("tokenType").and_then(Value::as_str) == Some(kind))?
            .get("tokenCount")
            .and_then(Value::as_u64)
    };
    let prompt = n("inputTokens");
    let read = detail("cache_read")
        .unwrap_or(n("cacheReadTokens"))
        .min(prompt);
    let write = detail("cache_write")
        .unwrap_or(n("cacheWriteTokens"))
        .min(prompt - read);
    let u = Usage {
        input_tokens: prompt - read - write,
        output_tokens: n("outputTokens"),
        cache_read_input_tokens: read,
        cache_creation_input_tokens: write,
        ..Usage::default()
    };
    (u != Usage::default()).then_some(u)
}

/// Where a reply of the current run sits: which thread (None: the parent) and its index there.
type At = (Option<String>, usize);

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut report = Report::default();
    let mut main = Thread::default();
    let mut agents: Vec<(String, Thread, Value)> = Vec::new();
    let mut records: Vec<Value> = Vec::new();
    let mut header = Value::Null;
    let mut model: Option<String> = None;
    // replies of the current run, by model, in order (for the run's totals)
    let mut run: HashMap<String, Vec<At>> = HashMap::new();
    let mut runs_without_totals = 0usize;
    let mut runs = 0usize;
    for (line, ev) in lines {
        let ty = ev.get("type").and_then(Value::as_str).unwrap_or("");
        let d = &ev["data"];
        let at = timestamp_ms(ev.get("timestamp"));
        let agent = ev
            .get("agentId")
            .and_then(Value::as_str)
            .or_else(|| d.get("parentToolCallId").and_then(Value::as_str))
            .map(str::to_string);
        let thread: &mut Thread = match &agent {
            None => &mut main,
            Some(id) => {
                let k = match agents.iter().position(|(a, _, _)| a == id) {
                    Some(k) => k,
                    None => {
                        agents.push((id.clone(), Thread::default(), Value::Null));
                        agents.len() - 1
                    }
                };
                &mut agents[k].1
            }
        };
        match ty {
            "session.start" | "session.resume" => {
                if ty == "session.start" {
                    header = d.clone();
                } else {
                    records.push(ev.clone());
                }
                if runs > 0 && !run.is_empty() {
                    runs_without_totals += 1;
                }
                runs += 1;
                run.clear();
                model = concrete(d.get("selectedModel").and_then(Value::as_str)).or(model);
            }
            "session.model_change" => {
                model = concrete(d.get("newModel").and_then(Value::as_str)).or(model);
                records.push(ev.clone());
            }
            "user.message" => {
                thread.flush(&mut report);
                let text = text_of(d.get("content"));
                let mut m = NewMessage::text(Role::User, text);
                if let Some(a) = d.get("attachments").and_then(Value::as_array)
                    && !a.is_empty()
                {
                    for x in a {
                        let name = x
                            .get("displayName")
                            .or_else(|| x.get("path"))
                            .and_then(Value::as_str)
                            .unwrap_or("?");
                        m.content.push(Block::text(format!("[attachment: {name}]")));
                    }
                }
                m.created_at = at;
                m.meta = json!({"source": SOURCE, "entry": {"id": ev.get("id")},
                                "transformed": d.get("transformedContent"), "source_kind": d.get("source")});
                thread.built.push(m);
            }
            "assistant.message" => {
                thread.flush(&mut report);
                let mut content = Vec::new();
                if let Some(t) = d.get("reasoningText").and_then(Value::as_str)
                    && !t.trim().is_empty()
                {
                    content.push(Block::Thinking {
                        thinking: t.to_string(),
                        signature: None,
                    });
                }
                let text = text_of(d.get("content"));
                if !text.trim().is_empty() {
                    content.push(Block::text(text));
                }
                for (k, c) in d
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let id = c
                        .get("toolCallId")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("copilot-call-{line}-{k}"), str::to_string);
                    let input = match c.get("arguments") {
                        // arguments sent as a JSON string
                        Some(Value::String(s)) => {
                            serde_json::from_str(s).unwrap_or_else(|_| json!({"arguments": s}))
                        }
                        Some(v) => v.clone(),
                        None => json!({}),
                    };
                    content.push(Block::ToolUse {
                        id: id.clone(),
                        name: c
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("tool")
                            .to_string(),
                        input,
                    });
                    thread.pending.push(id);
                }
                if content.is_empty() {
                    report.skip("empty assistant messages (kept as metadata)");
                    records.push(ev.clone());
                    continue;
                }
                let name = concrete(d.get("model").and_then(Value::as_str)).or(model.clone());
                let mut m = NewMessage::new(Role::Assistant, content);
                m.created_at = at;
                m.meta = json!({"source": SOURCE, "entry": {"id": ev.get("id"), "message": d.get("messageId")},
                                "model": name, "request": d.get("requestId"), "api_call": d.get("apiCallId"),
                                "turn": d.get("turnId"), "reasoning_opaque": d.get("reasoningOpaque").is_some()});
                if let Some(out) = d.get("outputTokens").and_then(Value::as_u64) {
                    m.usage = Some(Usage {
                        output_tokens: out,
                        ..Usage::default()
                    });
                }
                if let Some(name) = name {
                    run.entry(name)
                        .or_default()
                        .push((agent.clone(), thread.built.len()));
                }
                thread.built.push(m);
            }
            "tool.execution_complete" => {
                let id = d
                    .get("toolCallId")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let ok = d.get("success").and_then(Value::as_bool).unwrap_or(true);
                let out = d
                    .pointer("/result/content")
                    .map(|v| text_of(Some(v)))
                    .filter(|s| !s.is_empty())
                    .or_else(|| {
                        d.pointer("/error/message")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| {
                        if ok {
                            "[no output]".into()
                        } else {
                            "[the tool call failed]".into()
                        }
                    });
                if !thread.pending.contains(&id) {
                    report.skip("tool results of no call in the file (kept as metadata)");
                    records.push(ev.clone());
                    continue;
                }
                thread.results.push(Block::ToolResult {
                    tool_use_id: id,
                    content: ToolResultContent::Text(out),
                    is_error: !ok,
                });
                thread.results_at = at.or(thread.results_at);
            }
            "abort" => {
                thread.flush(&mut report);
                report.skip("aborted turns (kept as metadata)");
                records.push(ev.clone());
            }
            "session.compaction_complete" => {
                let summary = d
                    .get("summaryContent")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if d.get("success").and_then(Value::as_bool) == Some(false) || summary.is_empty() {
                    report.skip("compactions that failed (kept as metadata)");
                    records.push(ev.clone());
                    continue;
                }
                thread.flush(&mut report);
                let used = d.get("compactionTokensUsed");
                let name = concrete(used.and_then(|u| u.get("model")).and_then(Value::as_str))
                    .or(model.clone());
                let mut reply = NewMessage::text(Role::Assistant, summary);
                reply.created_at = at;
                reply.usage = used.and_then(compaction_usage);
                reply.meta = json!({"source": SOURCE, "entry": {"id": ev.get("id")}, "model": name,
                                    "compaction_request": true,
                                    "pre_compaction_tokens": d.get("preCompactionTokens"),
                                    "pre_compaction_messages": d.get("preCompactionMessagesLength"),
                                    "checkpoint": d.get("checkpointNumber")});
                if let Some(name) = &name {
                    run.entry(name.clone())
                        .or_default()
                        .push((agent.clone(), thread.built.len()));
                }
                thread.built.push(reply);
                let mut c = note(
                    Role::System,
                    summary,
                    json!({"source": SOURCE, "compaction": {"id": ev.get("id"),
                           "pre_compaction_tokens": d.get("preCompactionTokens")},
                           "cairn": harness_meta(SOURCE, Kept::Nothing, true)}),
                );
                c.created_at = at;
                thread.built.push(c);
                report.notes.push(
                    "Copilot compacted the conversation: its summary is what the model saw after it".into(),
                );
            }
            "session.shutdown" => {
                records.push(json!({"type": ty, "timestamp": ev.get("timestamp"),
                                    "data": {"shutdownType": d.get("shutdownType"),
                                             "modelMetrics": d.get("modelMetrics"),
                                             "currentTokens": d.get("currentTokens"),
                                             "systemTokens": d.get("systemTokens"),
                                             "toolDefinitionsTokens": d.get("toolDefinitionsTokens")}}));
                let metrics = d.get("modelMetrics").and_then(Value::as_object);
                for (name, mm) in metrics.into_iter().flatten() {
                    let Some(replies) = run.get(name.as_str()).filter(|r| !r.is_empty()) else {
                        report.skip(
                            "run totals of a model with no reply in the run (kept as metadata)",
                        );
                        continue;
                    };
                    let u = &mm["usage"];
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    let requests = mm
                        .pointer("/requests/count")
                        .and_then(Value::as_u64)
                        .unwrap_or(replies.len() as u64);
                    let get = |t: &Option<String>| -> Option<&Thread> {
                        match t {
                            None => Some(&main),
                            Some(id) => agents.iter().find(|(a, _, _)| a == id).map(|x| &x.1),
                        }
                    };
                    // what the run's replies already carry: their own outputs, and the compaction's whole usage
                    let mut carried = Usage::default();
                    for (t, i) in replies {
                        if let Some(x) = get(t).and_then(|t| t.built.get(*i)).and_then(|m| m.usage)
                        {
                            carried.input_tokens += x.input_tokens;
                            carried.output_tokens += x.output_tokens;
                            carried.cache_read_input_tokens += x.cache_read_input_tokens;
                            carried.cache_creation_input_tokens += x.cache_creation_input_tokens;
                        }
                    }
                    let read = n("cacheReadTokens").saturating_sub(carried.cache_read_input_tokens);
                    let write =
                        n("cacheWriteTokens").saturating_sub(carried.cache_creation_input_tokens);
                    // `inputTokens` holds the cache reads and writes
                    let input = n("inputTokens")
                        .saturating_sub(n("cacheReadTokens") + n("cacheWriteTokens"))
                        .saturating_sub(carried.input_tokens);
                    let extra_out = n("outputTokens").saturating_sub(carried.output_tokens);
                    let measured_apart = replies
                        .iter()
                        .filter(|(t, i)| {
                            get(t)
                                .and_then(|t| t.built.get(*i))
                                .and_then(|m| m.usage)
                                .is_some_and(|u| u.prompt() > 0)
                        })
                        .count() as u64;
                    let Some((t, i)) = replies
                        .iter()
                        .rev()
                        .find(|(t, i)| {
                            get(t)
                                .and_then(|t| t.built.get(*i))
                                .is_some_and(|m| m.usage.is_none_or(|u| u.prompt() == 0))
                        })
                        .cloned()
                    else {
                        continue;
                    };
                    let target = match &t {
                        None => &mut main,
                        Some(id) => match agents.iter_mut().find(|(a, _, _)| a == id) {
                            Some(x) => &mut x.1,
                            None => continue,
                        },
                    };
                    if let Some(m) = target.built.get_mut(i) {
                        let own = m.usage.unwrap_or_default();
                        m.usage = Some(Usage {
                            input_tokens: input,
                            output_tokens: own.output_tokens + extra_out,
                            cache_read_input_tokens: read,
                            cache_creation_input_tokens: write,
                            requests: requests.saturating_sub(measured_apart).max(1),
                            ..Usage::default()
                        });
                        m.meta["run_totals"] = json!({"model": name, "requests": requests});
                    }
                }
                run.clear();
            }
            "subagent.started" | "subagent.completed" | "subagent.failed" => {
                let id = d.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                if let Some(x) = agents.iter_mut().find(|(a, _, _)| a == id) {
                    merge_into(&mut x.2, d);
                } else {
                    agents.push((id.to_string(), Thread::default(), d.clone()));
                }
            }
            "hook.start" | "hook.end" => {
                if ty == "hook.end" && d.get("success").and_then(Value::as_bool) == Some(false) {
                    records.push(ev.clone());
                }
                report.skip(format!(
                    "{ty} events (hooks repeat the calls; failures kept)"
                ));
            }
            "tool.execution_start"
            | "assistant.turn_start"
            | "assistant.turn_end"
            | "permission.requested"
            | "permission.completed"
            | "session.usage_checkpoint"
            | "session.compaction_start"
            | "session.workspace_file_changed" => {
                report.skip(format!("{ty} events (bookkeeping)"));
            }
            "system.message" => {
                report.skip("system prompts (kept as metadata)");
                records.push(json!({"type": ty, "timestamp": ev.get("timestamp"),
                                    "content": d.get("content")}));
            }
            _ => {
                let kind = if ty.is_empty() { "untyped" } else { ty };
                report.skip(format!("{kind} events (kept as metadata)"));
                records.push(ev.clone());
            }
        }
    }
    if runs > 0 && !run.is_empty() {
        runs_without_totals += 1;
    }
    if runs_without_totals > 0 {
        report.notes.push(format!(
            "{runs_without_totals} run(s) ended without session.shutdown: their replies carry only their output \
             tokens (Copilot writes prompt tokens only as a run's totals)"
        ));
    }
    main.finish(&mut report);
    if main.built.is_empty() {
        return Err(FormatError::new(
            path,
            lines.first().map_or(0, |l| l.0),
            "a Copilot CLI session with no message",
        ));
    }
    let mut children = Vec::new();
    for (id, mut t, info) in agents {
        t.finish(&mut report);
        if t.built.is_empty() {
            continue;
        }
        let messages = super::chain(t.built);
        let name = info
            .get("agentDisplayName")
            .or_else(|| info.get("agentName"))
            .and_then(Value::as_str);
        let mut child_report = Report::default();
        child_report.notes.push(format!("subagent of call {id}"));
        children.push(Parsed {
            title: name
                .map(|n| format!("subagent: {n}"))
                .or_else(|| super::title_of(&messages)),
            tip: messages.len().checked_sub(1),
            messages,
            checkpoints: Vec::new(),
            meta: json!({"source": SOURCE, "agent": info, "spawned_by": {"call_id": id,
                         "description": info.get("agentDescription")}}),
            report: child_report,
            children: Vec::new(),
        });
    }
    let messages = super::chain(main.built);
    Ok(Parsed {
        title: super::title_of(&messages),
        tip: messages.len().checked_sub(1),
        messages,
        checkpoints: Vec::new(),
        meta: json!({"source": SOURCE,
                     "header": {"id": header.get("sessionId"), "cwd": header.pointer("/context/cwd"),
                                "version": header.get("copilotVersion")},
                     "session": header, "records": records}),
        report,
        children,
    })
}

/// Adds the fields of `from` to the object `into` (a subagent's start, then its completion).
fn merge_into(into: &mut Value, from: &Value) {
    match (into.as_object_mut(), from.as_object()) {
        (Some(a), Some(b)) => {
            for (k, v) in b {
                a.insert(k.clone(), v.clone());
            }
        }
        _ => *into = from.clone(),
    }
}
