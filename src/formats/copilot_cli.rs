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
//! inside, cache reads, cache writes, output): each run's own in 1.0.65, and since then counted on across a resume,
//! so a later shutdown's totals may hold the earlier runs' too, which are taken out ([`since`]); a run cut off
//! (no shutdown) has none. So each reply carries its own output, and the last reply of each model in a run also
//! carries the run's prompt totals, marked as the sum of that many requests ([`Usage::requests`]): counted and
//! priced, never taken as one prompt's measure.
//! A run of one request is exactly that request's usage. What GitHub billed (premium requests and AI credits, per
//! model at each shutdown; a cut-off run to its last `session.usage_checkpoint`) is kept as the file's tallies,
//! which a reading of the grown file replaces ([`Billed`]). Hooks, permissions and the other bookkeeping events are
//! counted in the report; those that say something of their own (hook failures, model changes, notifications,
//! shutdown figures) are kept as metadata.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, note, text_of, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, harness_meta};
use crate::stats::millionths;

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
    fn flush(&mut self, report: &mut ImportReport) {
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
    fn finish(&mut self, report: &mut ImportReport) {
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

/// The parent session and its subagents, each a thread of its own.
#[derive(Default)]
struct Threads {
    main: Thread,
    /// Each subagent: the spawning call's id, its thread, what its start and completion events said.
    agents: Vec<(String, Thread, Value)>,
}

impl Threads {
    fn get(&self, agent: Option<&str>) -> Option<&Thread> {
        match agent {
            None => Some(&self.main),
            Some(id) => self.agents.iter().find(|(a, _, _)| a == id).map(|x| &x.1),
        }
    }

    fn get_mut(&mut self, agent: Option<&str>) -> Option<&mut Thread> {
        match agent {
            None => Some(&mut self.main),
            Some(id) => self
                .agents
                .iter_mut()
                .find(|(a, _, _)| a == id)
                .map(|x| &mut x.1),
        }
    }

    /// The thread an event belongs to, opened on its first event.
    fn open(&mut self, agent: Option<&str>) -> &mut Thread {
        let Some(id) = agent else {
            return &mut self.main;
        };
        let k = match self.agents.iter().position(|(a, _, _)| a == id) {
            Some(k) => k,
            None => {
                self.agents
                    .push((id.to_string(), Thread::default(), Value::Null));
                self.agents.len() - 1
            }
        };
        &mut self.agents[k].1
    }
}

/// The whole file being read, event by event.
#[derive(Default)]
struct Events {
    report: ImportReport,
    threads: Threads,
    records: Vec<Value>,
    header: Value,
    model: Option<String>,
    /// replies of the current run, by model, in order (for the run's totals)
    run: HashMap<String, Vec<At>>,
    runs_without_totals: usize,
    runs: usize,
    /// each model's totals at the last shutdown, as written: newer Copilot keeps counting across a resume, so a
    /// later shutdown's totals may include these
    shut: HashMap<String, Value>,
    /// replies since the last shutdown, by model (this run's, and a cut-off run's before it): what totals that
    /// count on across a resume cover
    since_shutdown: HashMap<String, Vec<At>>,
    /// what Copilot billed, run by run and model by model (premium requests, AI credits): figures of the whole
    /// file, which a reading of the file grown since replaces (`tallies` in the meta)
    tallies: Vec<Value>,
    /// the tallies of cut-off runs billed from their checkpoints since the last shutdown (indices into
    /// `tallies`): a later shutdown whose totals count on across the resume bills them again, per model
    provisional: Vec<usize>,
    /// runs cut off (no shutdown) since the last shutdown, and those a later shutdown's totals covered
    cut_off_since_shutdown: usize,
    covered_runs: usize,
    /// shutdowns whose totals included an earlier run's (taken out)
    cumulative: usize,
    /// the session's billing so far as the current run's newest `session.usage_checkpoint` counted it, and when
    /// (releases that write checkpoints keep counting across a resume)
    checkpoint: Option<(Billed, Option<i64>)>,
    /// the session's billing when the current run began, as the last shutdown or checkpoint counted it
    billed_before: Billed,
}

/// What Copilot billed: premium requests (`totalPremiumRequests`, a model's `requests.cost`: its billing unit
/// until June 2026) and AI credits (`totalNanoAiu`, in billionths of a credit, a credit a US cent: what it bills
/// by the token since).
#[derive(Clone, Copy, Default)]
struct Billed {
    premium_requests: Option<f64>,
    nano_aiu: Option<f64>,
}

impl Billed {
    /// The billing counted in `v` at `premium` and `aiu` (JSON pointers), each where it says.
    fn read(v: &Value, premium: &str, aiu: &str) -> Billed {
        Billed {
            premium_requests: v.pointer(premium).and_then(Value::as_f64),
            nano_aiu: v.pointer(aiu).and_then(Value::as_f64),
        }
    }

    /// The session's billing as a shutdown or a checkpoint counts it, where it says (else `or`'s).
    fn of_session(d: &Value, or: Billed) -> Billed {
        let now = Billed::read(d, "/totalPremiumRequests", "/totalNanoAiu");
        Billed {
            premium_requests: now.premium_requests.or(or.premium_requests),
            nano_aiu: now.nano_aiu.or(or.nano_aiu),
        }
    }

    /// What `self` (the session's so far) counts beyond `before`: each count that grew.
    fn beyond(self, before: Billed) -> Billed {
        let grew = |now: Option<f64>, was: Option<f64>| {
            now.map(|n| n - was.unwrap_or(0.0)).filter(|d| *d > 0.0)
        };
        Billed {
            premium_requests: grew(self.premium_requests, before.premium_requests),
            nano_aiu: grew(self.nano_aiu, before.nano_aiu),
        }
    }

    /// The tallies of what was billed `at` (epoch ms) on `model` (None: the session's, on no one model), one per
    /// unit counted.
    fn tallies(self, at: Option<i64>, model: Option<&str>) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some(n) = self.premium_requests {
            out.push(
                json!({"type": crate::stats::PREMIUM_REQUESTS_RECORD, "at": at, "model": model,
                            "premium_requests": millionths(n)}),
            );
        }
        if let Some(n) = self.nano_aiu {
            out.push(
                json!({"type": crate::stats::AI_CREDITS_RECORD, "at": at, "model": model,
                            "ai_credits": millionths(n / 1e9)}),
            );
        }
        out
    }
}

/// One event: its line, type, data, time and the subagent it belongs to (None: the parent).
struct Event<'a> {
    line: usize,
    ev: &'a Value,
    ty: &'a str,
    d: &'a Value,
    at: Option<i64>,
    agent: Option<String>,
}

impl Events {
    fn event(&mut self, line: usize, ev: &Value) {
        let ty = ev.get("type").and_then(Value::as_str).unwrap_or("");
        let d = &ev["data"];
        let agent = ev
            .get("agentId")
            .and_then(Value::as_str)
            .or_else(|| d.get("parentToolCallId").and_then(Value::as_str))
            .map(str::to_string);
        self.threads.open(agent.as_deref());
        let e = Event {
            line,
            ev,
            ty,
            d,
            at: timestamp_ms(ev.get("timestamp")),
            agent,
        };
        match ty {
            "session.start" | "session.resume" => self.start(&e),
            "session.model_change" => {
                self.model =
                    concrete(d.get("newModel").and_then(Value::as_str)).or(self.model.take());
                self.records.push(ev.clone());
            }
            "user.message" => self.user_message(&e),
            "assistant.message" => self.assistant_message(&e),
            "tool.execution_complete" => self.tool_result(&e),
            "abort" => {
                self.threads
                    .open(e.agent.as_deref())
                    .flush(&mut self.report);
                self.report.skip("aborted turns (kept as metadata)");
                self.records.push(ev.clone());
            }
            "session.compaction_complete" => self.compaction(&e),
            "session.shutdown" => self.shutdown(&e),
            "subagent.started" | "subagent.completed" | "subagent.failed" => {
                let id = d.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                if let Some(x) = self.threads.agents.iter_mut().find(|(a, _, _)| a == id) {
                    merge_into(&mut x.2, d);
                } else {
                    self.threads
                        .agents
                        .push((id.to_string(), Thread::default(), d.clone()));
                }
            }
            _ => self.bookkeeping(&e),
        }
    }

    /// Hooks, permissions, system prompts and the events cairn does not model: counted, some kept.
    fn bookkeeping(&mut self, e: &Event) {
        let ty = e.ty;
        match ty {
            "session.usage_checkpoint" => {
                let was = self.checkpoint.map_or(self.billed_before, |c| c.0);
                self.checkpoint = Some((Billed::of_session(e.d, was), e.at));
                self.report.skip(format!(
                    "{ty} events (bookkeeping; a run's billing kept where it has no shutdown)"
                ));
            }
            "hook.start" | "hook.end" => {
                if ty == "hook.end" && e.d.get("success").and_then(Value::as_bool) == Some(false) {
                    self.records.push(e.ev.clone());
                }
                self.report.skip(format!(
                    "{ty} events (hooks repeat the calls; failures kept)"
                ));
            }
            "tool.execution_start"
            | "assistant.turn_start"
            | "assistant.turn_end"
            | "permission.requested"
            | "permission.completed"
            | "session.compaction_start"
            | "session.workspace_file_changed" => {
                self.report.skip(format!("{ty} events (bookkeeping)"));
            }
            "system.message" => {
                self.report.skip("system prompts (kept as metadata)");
                self.records
                    .push(json!({"type": ty, "timestamp": e.ev.get("timestamp"),
                                         "content": e.d.get("content")}));
            }
            _ => {
                let kind = if ty.is_empty() { "untyped" } else { ty };
                self.report
                    .skip(format!("{kind} events (kept as metadata)"));
                self.records.push(e.ev.clone());
            }
        }
    }

    /// A run starts (or resumes): the previous run's replies that got no totals are counted.
    fn start(&mut self, e: &Event) {
        if e.ty == "session.start" {
            self.header = e.d.clone();
        } else {
            self.records.push(e.ev.clone());
        }
        if self.runs > 0 && !self.run.is_empty() {
            self.runs_without_totals += 1;
            self.cut_off_since_shutdown += 1;
        }
        self.bill_cut_off_run();
        self.runs += 1;
        self.run.clear();
        self.model =
            concrete(e.d.get("selectedModel").and_then(Value::as_str)).or(self.model.take());
    }

    fn user_message(&mut self, e: &Event) {
        let d = e.d;
        let mut m = NewMessage::text(Role::User, text_of(d.get("content")));
        for x in d
            .get("attachments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = x
                .get("displayName")
                .or_else(|| x.get("path"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            m.content.push(Block::text(format!("[attachment: {name}]")));
        }
        m.created_at = e.at;
        m.meta = json!({"source": SOURCE, "entry": {"id": e.ev.get("id")},
                        "transformed": d.get("transformedContent"), "source_kind": d.get("source")});
        let t = self.threads.open(e.agent.as_deref());
        t.flush(&mut self.report);
        t.built.push(m);
    }

    /// One model request: thinking, text and tool calls; its own output tokens.
    fn assistant_message(&mut self, e: &Event) {
        let d = e.d;
        let t = self.threads.open(e.agent.as_deref());
        t.flush(&mut self.report);
        let mut content = Vec::new();
        // the shown reasoning, and the whole of it in the provider's form, which Copilot sends back
        // (`reasoningOpaque`: the thinking's signature)
        let shown = d
            .get("reasoningText")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty());
        let opaque = d
            .get("reasoningOpaque")
            .and_then(Value::as_str)
            .filter(|o| !o.is_empty());
        if shown.is_some() || opaque.is_some() {
            content.push(Block::Thinking {
                thinking: shown.unwrap_or_default().to_string(),
                signature: opaque.map(str::to_string),
            });
        }
        let text = text_of(d.get("content"));
        if !text.trim().is_empty() {
            content.push(Block::text(text));
        }
        let calls = d
            .get("toolRequests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (k, c) in calls.enumerate() {
            let call = tool_call(c, e.line, k);
            if let Block::ToolUse { id, .. } = &call {
                t.pending.push(id.clone());
            }
            content.push(call);
        }
        if content.is_empty() {
            self.report
                .skip("empty assistant messages (kept as metadata)");
            self.records.push(e.ev.clone());
            return;
        }
        let name = concrete(d.get("model").and_then(Value::as_str)).or(self.model.clone());
        let mut m = NewMessage::new(Role::Assistant, content);
        m.created_at = e.at;
        m.meta = json!({"source": SOURCE, "entry": {"id": e.ev.get("id"), "message": d.get("messageId")},
                        "model": name, "request": d.get("requestId"), "api_call": d.get("apiCallId"),
                        "turn": d.get("turnId"), "reasoning_opaque": d.get("reasoningOpaque").is_some()});
        if let Some(out) = d.get("outputTokens").and_then(Value::as_u64) {
            m.usage = Some(Usage {
                output_tokens: out,
                ..Usage::default()
            });
        }
        let at = (e.agent.clone(), t.built.len());
        t.built.push(m);
        if let Some(name) = name {
            self.replied(name, at);
        }
    }

    /// A reply of `model` (where its thread holds it) belongs to this run, and to those since the last shutdown.
    fn replied(&mut self, model: String, at: At) {
        self.since_shutdown
            .entry(model.clone())
            .or_default()
            .push(at.clone());
        self.run.entry(model).or_default().push(at);
    }

    /// A tool call's result, gathered until the next message; a result of no call is kept as metadata.
    fn tool_result(&mut self, e: &Event) {
        let d = e.d;
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
        let t = self.threads.open(e.agent.as_deref());
        if !t.pending.contains(&id) {
            self.report
                .skip("tool results of no call in the file (kept as metadata)");
            self.records.push(e.ev.clone());
            return;
        }
        t.results.push(Block::ToolResult {
            tool_use_id: id,
            content: ToolResultContent::Text(out),
            is_error: !ok,
        });
        t.results_at = e.at.or(t.results_at);
    }

    /// Copilot's compaction: its summary request kept as the reply it was, then a harness marker carrying the
    /// summary the model saw from there on.
    fn compaction(&mut self, e: &Event) {
        let d = e.d;
        let summary = d
            .get("summaryContent")
            .and_then(Value::as_str)
            .unwrap_or("");
        if d.get("success").and_then(Value::as_bool) == Some(false) || summary.is_empty() {
            self.report
                .skip("compactions that failed (kept as metadata)");
            self.records.push(e.ev.clone());
            return;
        }
        let used = d.get("compactionTokensUsed");
        let name = concrete(used.and_then(|u| u.get("model")).and_then(Value::as_str))
            .or(self.model.clone());
        let mut reply = NewMessage::text(Role::Assistant, summary);
        reply.created_at = e.at;
        reply.usage = used.and_then(compaction_usage);
        reply.meta = json!({"source": SOURCE, "entry": {"id": e.ev.get("id")}, "model": name,
                            "compaction_request": true,
                            "pre_compaction_tokens": d.get("preCompactionTokens"),
                            "pre_compaction_messages": d.get("preCompactionMessagesLength"),
                            "checkpoint": d.get("checkpointNumber")});
        let mut c = note(
            Role::System,
            summary,
            json!({"source": SOURCE, "compaction": {"id": e.ev.get("id"),
                   "pre_compaction_tokens": d.get("preCompactionTokens")},
                   "cairn": harness_meta(SOURCE, Kept::Nothing, true)}),
        );
        c.created_at = e.at;
        let t = self.threads.open(e.agent.as_deref());
        t.flush(&mut self.report);
        let at = (e.agent.clone(), t.built.len());
        t.built.push(reply);
        t.built.push(c);
        if let Some(name) = name {
            self.replied(name, at);
        }
        self.report.notes.push(
            "Copilot compacted the conversation: its summary is what the model saw after it".into(),
        );
    }

    /// A run's end: its totals per model, set on the run's last reply of that model that has no prompt measure.
    fn shutdown(&mut self, e: &Event) {
        let d = e.d;
        self.records.push(json!({"type": e.ty, "timestamp": e.ev.get("timestamp"),
                                 "data": {"shutdownType": d.get("shutdownType"),
                                          "modelMetrics": d.get("modelMetrics"),
                                          "currentTokens": d.get("currentTokens"),
                                          "systemTokens": d.get("systemTokens"),
                                          "toolDefinitionsTokens": d.get("toolDefinitionsTokens")}}));
        let metrics = d.get("modelMetrics").and_then(Value::as_object);
        let mut counted_on = false;
        for (name, mm) in metrics.into_iter().flatten() {
            let run = self.run.get(name.as_str()).map_or(&[][..], Vec::as_slice);
            let all = self
                .since_shutdown
                .get(name.as_str())
                .map_or(&[][..], Vec::as_slice);
            // totals that carry an earlier run's: only what came since it is new, and it covers every reply since
            // (a cut-off run's too)
            let counted = self.shut.get(name.as_str()).and_then(|before| {
                since(before, mm, run_outputs(&self.threads, all)).map(|own| (own, all))
            });
            let (own, replies) = match counted {
                Some(c) => {
                    self.cumulative += 1;
                    counted_on = true;
                    c
                }
                None => (mm.clone(), run),
            };
            self.shut.insert(name.clone(), mm.clone());
            // what Copilot billed the model for the run
            let billed = Billed::read(&own, "/requests/cost", "/totalNanoAiu");
            self.tallies.extend(billed.tallies(e.at, Some(name)));
            if replies.is_empty() {
                self.report
                    .skip("run totals of a model with no reply in the run (kept as metadata)");
            } else {
                apply_run_totals(&mut self.threads, replies, name, &own);
            }
        }
        // a cut-off run's billing from its checkpoints is in these totals now, per model
        for i in std::mem::take(&mut self.provisional).into_iter().rev() {
            if counted_on && i < self.tallies.len() {
                self.tallies.remove(i);
            }
        }
        // a cut-off run the totals count on across is covered by them: its replies' prompts are in them
        if counted_on {
            self.runs_without_totals = self
                .runs_without_totals
                .saturating_sub(self.cut_off_since_shutdown);
            self.covered_runs += self.cut_off_since_shutdown;
        }
        self.cut_off_since_shutdown = 0;
        self.run.clear();
        self.since_shutdown.clear();
        // what the session was billed so far: where checkpoints are written, the shutdown counts on from them
        self.checkpoint = None;
        self.billed_before = Billed::of_session(d, self.billed_before);
    }

    /// A run that ended without a shutdown, whose checkpoints counted the session's billing: what it added since
    /// the run began is kept as its billing, on the run's model where all its replies were of one (checkpoints
    /// count the session's, not a model's). Where a count did not grow, nothing of it.
    fn bill_cut_off_run(&mut self) {
        let Some((now, at)) = self.checkpoint.take() else {
            return;
        };
        let added = now.beyond(self.billed_before);
        let mut models = self.run.keys();
        let model = match (models.next(), models.next()) {
            (Some(m), None) => Some(m.as_str()),
            _ => None,
        };
        for t in added.tallies(at, model) {
            self.provisional.push(self.tallies.len());
            self.tallies.push(t);
        }
        self.billed_before = now;
    }

    fn finish(mut self, path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
        self.bill_cut_off_run();
        let report = &mut self.report;
        if self.runs > 0 && !self.run.is_empty() {
            self.runs_without_totals += 1;
        }
        if self.cumulative > 0 {
            report.notes.push(format!(
                "{} run total(s) at a shutdown after a resume included the earlier runs' (Copilot kept counting \
                 across the resume): only what the run added is counted",
                self.cumulative
            ));
        }
        if self.covered_runs > 0 {
            report.notes.push(format!(
                "{} run(s) ended without session.shutdown, and a later shutdown's totals (counting on across the \
                 resume) cover their replies' prompts",
                self.covered_runs
            ));
        }
        if self.runs_without_totals > 0 {
            report.notes.push(format!(
                "{} run(s) ended without session.shutdown: their replies carry only their output tokens (Copilot \
                 writes prompt tokens only as a run's totals)",
                self.runs_without_totals
            ));
        }
        let Threads { mut main, agents } = self.threads;
        main.finish(report);
        if main.built.is_empty() {
            return Err(FormatError::new(
                path,
                lines.first().map_or(0, |l| l.0),
                "a Copilot CLI session with no message",
            ));
        }
        let mut children = Vec::new();
        for (id, mut t, info) in agents {
            t.finish(report);
            if !t.built.is_empty() {
                children.push(subagent(id, t, info));
            }
        }
        let messages = super::chain(main.built);
        let header = &self.header;
        Ok(Parsed {
            title: super::title_of(&messages),
            tip: messages.len().checked_sub(1),
            messages,
            checkpoints: Vec::new(),
            meta: json!({"source": SOURCE,
                         "header": {"id": header.get("sessionId"), "cwd": header.pointer("/context/cwd"),
                                    "version": header.get("copilotVersion")},
                         "session": header, "records": self.records, "tallies": self.tallies}),
            report: self.report,
            children,
        })
    }
}

/// A tool request as a tool_use block (arguments sent as a JSON string are parsed).
fn tool_call(c: &Value, line: usize, k: usize) -> Block {
    let id = c
        .get("toolCallId")
        .and_then(Value::as_str)
        .map_or_else(|| format!("copilot-call-{line}-{k}"), str::to_string);
    let input = match c.get("arguments") {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| json!({"arguments": s}))
        }
        Some(v) => v.clone(),
        None => json!({}),
    };
    Block::ToolUse {
        id,
        name: c
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("tool")
            .to_string(),
        input,
    }
}

/// One model's run totals (`modelMetrics[name]`) less what the run's replies already carry (their own outputs,
/// a compaction's whole usage), set on the newest of those replies without a prompt measure, as the sum of the
/// requests measured nowhere else.
fn apply_run_totals(threads: &mut Threads, replies: &[At], name: &str, mm: &Value) {
    let u = &mm["usage"];
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let requests = mm
        .pointer("/requests/count")
        .and_then(Value::as_u64)
        .unwrap_or(replies.len() as u64);
    let usage_of = |(t, i): &At| {
        threads
            .get(t.as_deref())
            .and_then(|t| t.built.get(*i))
            .map(|m| m.usage)
    };
    let mut carried = Usage::default();
    for x in replies.iter().filter_map(|r| usage_of(r).flatten()) {
        carried.input_tokens += x.input_tokens;
        carried.output_tokens += x.output_tokens;
        carried.cache_read_input_tokens += x.cache_read_input_tokens;
        carried.cache_creation_input_tokens += x.cache_creation_input_tokens;
    }
    let read = n("cacheReadTokens").saturating_sub(carried.cache_read_input_tokens);
    let write = n("cacheWriteTokens").saturating_sub(carried.cache_creation_input_tokens);
    // `inputTokens` holds the cache reads and writes
    let input = n("inputTokens")
        .saturating_sub(n("cacheReadTokens") + n("cacheWriteTokens"))
        .saturating_sub(carried.input_tokens);
    let extra_out = n("outputTokens").saturating_sub(carried.output_tokens);
    let measured_apart = replies
        .iter()
        .filter(|r| usage_of(r).flatten().is_some_and(|u| u.prompt() > 0))
        .count() as u64;
    let Some((t, i)) = replies
        .iter()
        .rev()
        .find(|r| usage_of(r).is_some_and(|u| u.is_none_or(|u| u.prompt() == 0)))
        .cloned()
    else {
        return;
    };
    let Some(m) = threads
        .get_mut(t.as_deref())
        .and_then(|t| t.built.get_mut(i))
    else {
        return;
    };
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

/// A run's requests that recorded only their output, and those outputs (a compaction's request, measured whole,
/// may or may not be in the run's totals: it is left out of both, which stay lower bounds).
fn run_outputs(threads: &Threads, replies: &[At]) -> (u64, u64) {
    replies
        .iter()
        .filter_map(|(t, i)| threads.get(t.as_deref())?.built.get(*i))
        .filter(|m| m.usage.is_none_or(|u| u.prompt() == 0))
        .fold((0, 0), |(n, out), m| {
            (n + 1, out + m.usage.map_or(0, |u| u.output_tokens))
        })
}

/// What a model's totals at a shutdown (`now`) added since the previous shutdown's (`before`), where `now` counts
/// them too: Copilot 1.0.65 wrote each run's own totals, later releases keep counting across a resume. `now`
/// includes `before` when no counter went down and it holds at least the earlier requests and output plus this
/// run's own (`run`: requests, and the output tokens their replies recorded): a run's own totals hold those only
/// if its unseen requests outnumbered, and out-wrote, the whole earlier run. None: `now` is the run's own.
fn since(before: &Value, now: &Value, run: (u64, u64)) -> Option<Value> {
    const USAGE: [&str; 5] = [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "reasoningTokens",
    ];
    let n = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let requests = |v: &Value| n(v, "/requests/count");
    let output = |v: &Value| n(v, "/usage/outputTokens");
    let grew = USAGE
        .iter()
        .all(|k| n(now, &format!("/usage/{k}")) >= n(before, &format!("/usage/{k}")));
    let includes = requests(before) > 0
        && requests(now) >= requests(before) + run.0
        && output(now) >= output(before) + run.1;
    if !(grew && includes) {
        return None;
    }
    let mut own = now.clone();
    for k in USAGE {
        let p = format!("/usage/{k}");
        if let Some(x) = own.pointer_mut(&p) {
            *x = json!(n(now, &p) - n(before, &p));
        }
    }
    if let Some(x) = own.pointer_mut("/requests/count") {
        *x = json!(requests(now) - requests(before));
    }
    for p in ["/requests/cost", "/totalNanoAiu"] {
        let billed = |v: &Value| v.pointer(p).and_then(Value::as_f64);
        if let (Some(x), Some(a), Some(b)) = (own.pointer_mut(p), billed(now), billed(before)) {
            *x = json!(millionths((a - b).max(0.0)));
        }
    }
    Some(own)
}

/// A subagent's thread as a conversation linked to the call that spawned it.
fn subagent(id: String, t: Thread, info: Value) -> Parsed {
    let messages = super::chain(t.built);
    let name = info
        .get("agentDisplayName")
        .or_else(|| info.get("agentName"))
        .and_then(Value::as_str);
    let mut report = ImportReport::default();
    report.notes.push(format!("subagent of call {id}"));
    Parsed {
        title: name
            .map(|n| format!("subagent: {n}"))
            .or_else(|| super::title_of(&messages)),
        tip: messages.len().checked_sub(1),
        messages,
        checkpoints: Vec::new(),
        meta: json!({"source": SOURCE, "spawned_by": {"call_id": id,
                     "description": info.get("agentDescription")}, "agent": info}),
        report,
        children: Vec::new(),
    }
}

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut r = Events::default();
    for (line, ev) in lines {
        r.event(*line, ev);
    }
    r.finish(path, lines)
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
