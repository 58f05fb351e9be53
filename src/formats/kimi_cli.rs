//! Kimi CLI's sessions (`~/.kimi/sessions/<md5 of the work dir>/<session id>/`), read as its `Context` and wire
//! write them:
//!
//! - `context.jsonl` is the history Kimi CLI sends, its system prompt first (`_system_prompt`, a system message
//!   here, at the start of every history begun afresh), one kosong message a line (OpenAI's chat shape: `content` a
//!   string or parts, `tool_calls` with JSON-string `arguments`, `tool` messages with `tool_call_id`; reasoning as
//!   `think` parts), with its markers: `_system_prompt`, `_checkpoint` (before each prompt and each step) and
//!   `_usage` (`token_count`: the prompt the provider measured for a step, written before its reply; prompt plus
//!   output after it; an estimate after a compaction, which no reply takes).
//! - Reverting to a checkpoint (`/undo`, a D-Mail), `/clear` and a compaction move the file aside
//!   (`context_1.jsonl`, `context_2.jsonl`, … in turn) and start a new one: a revert copies what it keeps, so the
//!   new file shares the old one's first messages and what follows is a branch; a compaction starts from its
//!   summary (`<system>Previous context has been compacted…`) and the last turns it kept, a clear from nothing:
//!   both a harness marker after the old history (the model saw nothing of it since).
//! - `wire.jsonl` (the event log its UI reads) gives each step's usage split (`StatusUpdate.token_usage`:
//!   uncached input, cache reads and writes, output), matched to the step whose measured prompt it equals, with
//!   its time, the window it ran the model with (`max_context_tokens`), and the times of the prompts
//!   (`TurnBegin`); `state.json` the title a user gave (`custom_title`); the registry beside the sessions
//!   (`kimi.json`) the work dir it ran in. The session does not name its model: it
//!   is the one Kimi CLI's `config.toml` sets (`default_model`), where the share folder above the sessions has one.
//!
//! A tool message that begins `<system>ERROR</system>` is a failed result (`tool_result_to_messages`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, harness_meta};
use crate::store::ImportedMessage;

/// The roles of Kimi CLI's marker records.
const MARKERS: [&str; 3] = ["_checkpoint", "_usage", "_system_prompt"];

/// What a compaction's first message begins with (`COMPACTION_OUTPUT_PREFIX` in a `<system>` part).
const COMPACTED: &str = "<system>Previous context has been compacted";

/// Whether a line is one of Kimi CLI's marker records.
pub fn is_kimi(v: &Value) -> bool {
    v.get("role")
        .and_then(Value::as_str)
        .is_some_and(|r| MARKERS.contains(&r))
        && v.get("type").is_none()
}

/// The file a sidecar of a Kimi CLI session is read with: the session's `context.jsonl` beside an earlier history
/// it moved aside (`context_<n>.jsonl`), its `wire.jsonl`, `state.json` or a subagent's `meta.json`.
pub fn session_of_sidecar(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    let rotated = moved_aside(&name, "context").is_some();
    if !(rotated || matches!(name.as_str(), "wire.jsonl" | "state.json" | "meta.json")) {
        return None;
    }
    let context = p.with_file_name("context.jsonl");
    context.is_file().then_some(context)
}

/// Whether a file in a folder being imported is Kimi CLI's bookkeeping, no session: its registry of work dirs
/// (`kimi.json` beside `sessions/`), or what a session folder holds beside its histories (notifications, tasks:
/// `<session>/notifications/<id>/event.json`, …). Its histories, wire log, state and subagents' `meta.json` are
/// read with the session ([`session_of_sidecar`]).
pub fn is_bookkeeping(p: &Path) -> bool {
    let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return false;
    };
    if name == "kimi.json" {
        return p.with_file_name("sessions").is_dir();
    }
    let history = name == "context.jsonl" || moved_aside(&name, "context").is_some();
    !history
        && p.ancestors()
            .skip(2)
            .take(2)
            .any(|d| d.join("context.jsonl").is_file() && d.join("wire.jsonl").is_file())
}

/// Which history moved aside a file name is, for the history `<stem>.jsonl`: `n` of `<stem>_<n>.jsonl`.
fn moved_aside(name: &str, stem: &str) -> Option<u64> {
    name.strip_prefix(stem)?
        .strip_prefix('_')?
        .strip_suffix(".jsonl")?
        .parse()
        .ok()
}

/// The histories Kimi CLI moved aside before `path`, oldest first (`context_1.jsonl`, `context_2.jsonl`, …).
fn rotated(path: &Path) -> Vec<PathBuf> {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".jsonl"))
    else {
        return Vec::new();
    };
    let Some(dir) = path.parent().and_then(|d| std::fs::read_dir(d).ok()) else {
        return Vec::new();
    };
    let mut found: Vec<(u64, PathBuf)> = dir
        .flatten()
        .filter_map(|e| {
            Some((
                moved_aside(&e.file_name().to_string_lossy(), stem)?,
                e.path(),
            ))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// Whether `path` is a history with earlier ones moved aside beside it (read even when it is still empty: Kimi CLI
/// has just cleared the context).
pub fn has_moved_histories(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "context.jsonl") && !rotated(path).is_empty()
}

/// One message of a history file, with the prompt measured for it (a reply) and what was measured after it.
struct Item<'a> {
    value: &'a Value,
    prompt: Option<u64>,
    after: Option<u64>,
}

/// A history file's messages, each reply with the `_usage` records around it; and its system prompt.
fn items(lines: &[(usize, Value)]) -> (Vec<Item<'_>>, Option<String>) {
    let mut out: Vec<Item> = Vec::new();
    let mut system = None;
    let mut pending: Option<u64> = None;
    // whether no message came since the last reply
    let mut after_reply = false;
    for (_, v) in lines {
        match v.get("role").and_then(Value::as_str) {
            Some("_usage") => {
                let n = v.get("token_count").and_then(Value::as_u64);
                match out.last_mut() {
                    // a count written after a reply that had its prompt: prompt and output
                    Some(last) if after_reply && last.prompt.is_some() && last.after.is_none() => {
                        last.after = n;
                    }
                    _ => pending = n.or(pending),
                }
            }
            Some("_system_prompt") => {
                system = v.get("content").and_then(Value::as_str).map(str::to_string);
            }
            Some("_checkpoint") => {}
            Some(role) => {
                let reply = role == "assistant";
                out.push(Item {
                    value: v,
                    prompt: if reply { pending.take() } else { None },
                    after: None,
                });
                pending = None;
                after_reply = reply;
            }
            None => {}
        }
    }
    (out, system)
}

/// A kosong message as cairn's (None for one with nothing in it).
fn message_of(v: &Value, at: &str) -> Result<Option<NewMessage>, String> {
    // kosong's reasoning part (`think`, with the provider's encrypted form) as OpenAI's reader reads none
    let mut v = v.clone();
    let mut thinking = Vec::new();
    if let Some(parts) = v.get_mut("content").and_then(Value::as_array_mut) {
        parts.retain(|p| {
            if p.get("type").and_then(Value::as_str) != Some("think") {
                return true;
            }
            thinking.push(Block::Thinking {
                thinking: p
                    .get("think")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                signature: p
                    .get("encrypted")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            });
            false
        });
    }
    let mut nm = super::messages_json::openai_message(&v, at)?;
    if !thinking.is_empty() {
        thinking.append(&mut nm.content);
        nm.content = thinking;
    }
    for b in &mut nm.content {
        if let Block::ToolResult {
            content, is_error, ..
        } = b
        {
            let first = match content {
                ToolResultContent::Text(t) => Some(t.as_str()),
                ToolResultContent::Blocks(bs) => bs.first().and_then(Block::as_text),
            };
            *is_error = first.is_some_and(|t| t.starts_with("<system>ERROR</system>"));
        }
    }
    Ok((!nm.content.is_empty()).then_some(nm))
}

/// What `wire.jsonl` says of the steps and prompts: each `StatusUpdate` with usage, in order, and each
/// `TurnBegin`'s input text; with their times.
#[derive(Default)]
struct Wire {
    steps: Vec<(i64, Usage, Option<u64>)>,
    turns: Vec<(i64, String)>,
}

impl Wire {
    fn read(path: &Path) -> Wire {
        let mut w = Wire::default();
        let Ok(lines) = super::read_jsonl(path) else {
            return w;
        };
        for (_, v) in &lines {
            let at = v
                .get("timestamp")
                .and_then(Value::as_f64)
                .map_or(0, |s| (s * 1000.0) as i64);
            let Some(m) = v.get("message") else { continue };
            let p = &m["payload"];
            match m.get("type").and_then(Value::as_str) {
                Some("StatusUpdate") => {
                    let Some(u) = p.get("token_usage").filter(|u| u.is_object()) else {
                        continue;
                    };
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    let usage = Usage {
                        input_tokens: n("input_other"),
                        output_tokens: n("output"),
                        cache_read_input_tokens: n("input_cache_read"),
                        cache_creation_input_tokens: n("input_cache_creation"),
                        ..Usage::default()
                    };
                    let window = p.get("max_context_tokens").and_then(Value::as_u64);
                    w.steps.push((at, usage, window));
                }
                Some("TurnBegin") => {
                    let text = match &p["user_input"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|x| x.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join(""),
                        _ => String::new(),
                    };
                    w.turns.push((at, text));
                }
                _ => {}
            }
        }
        w
    }
}

/// Kimi CLI's share folder a history lies in (`~/.kimi`: the folder above `sessions/`).
fn share_of(path: &Path) -> Option<&Path> {
    path.ancestors()
        .skip(1)
        .find(|d| d.file_name().is_some_and(|n| n == "sessions"))?
        .parent()
}

/// The work dir a session ran in, as Kimi CLI's registry (`kimi.json`) records it: its session-to-work-dir map, or
/// the work dir whose last session it is.
fn work_dir(path: &Path, session: &str) -> Option<String> {
    let registry: Value =
        serde_json::from_slice(&std::fs::read(share_of(path)?.join("kimi.json")).ok()?).ok()?;
    let own = session.split('/').next().unwrap_or(session);
    registry
        .pointer(&format!("/session_to_workdir/{own}"))
        .and_then(Value::as_str)
        .or_else(|| {
            registry["work_dirs"].as_array()?.iter().find_map(|w| {
                (w["last_session_id"].as_str() == Some(own))
                    .then(|| w["path"].as_str())
                    .flatten()
            })
        })
        .map(str::to_string)
}

/// The model Kimi CLI is set to run (`default_model` in its `config.toml`, the share folder above the sessions:
/// `~/.kimi`), as its entry names it, with the context size set for it: a session does not record its model.
fn configured_model(path: &Path) -> Option<(String, Option<u64>)> {
    let share = share_of(path).filter(|d| d.join("config.toml").is_file())?;
    let text = std::fs::read_to_string(share.join("config.toml")).ok()?;
    let config: toml::Value = toml::from_str(&text).ok()?;
    let key = config.get("default_model")?.as_str()?;
    let entry = config.get("models")?.get(key)?;
    let model = entry
        .get("model")
        .and_then(toml::Value::as_str)
        .unwrap_or(key);
    let size = entry
        .get("max_context_size")
        .and_then(toml::Value::as_integer)
        .and_then(|n| u64::try_from(n).ok());
    Some((model.to_string(), size))
}

/// The session's messages as they are read, history after history.
struct Tree<'a> {
    messages: Vec<ImportedMessage>,
    /// The previous history's messages as written, and where each became a message.
    before: Vec<(&'a Value, Option<usize>)>,
    tip: Option<usize>,
    wire: Wire,
    /// The next `StatusUpdate` and `TurnBegin` of the wire not yet matched.
    step: usize,
    turn: usize,
    model: Option<String>,
    report: ImportReport,
}

impl<'a> Tree<'a> {
    fn push(&mut self, parent: Option<usize>, message: NewMessage) -> Option<usize> {
        self.messages.push(ImportedMessage { parent, message });
        Some(self.messages.len() - 1)
    }

    /// One history file: what it shares with the one before stays, what follows is a branch; a history with
    /// nothing in common follows a marker (the model saw nothing before it).
    fn history(
        &mut self,
        k: usize,
        file: &Path,
        lines: &'a [(usize, Value)],
    ) -> Result<(), FormatError> {
        let (items, sys) = items(lines);
        let shared = self
            .before
            .iter()
            .zip(&items)
            .take_while(|((a, _), b)| *a == b.value)
            .count();
        let mut parent = match shared {
            0 if k > 0 && !self.before.is_empty() => {
                let marker = self.marker(&items);
                self.push(self.tip, marker)
            }
            0 => None,
            n => self.before[..n].iter().rev().find_map(|(_, at)| *at),
        };
        if k > 0 && shared > 0 && shared < self.before.len() {
            self.report.notes.push(format!(
                "{}: Kimi CLI went back to an earlier checkpoint; what followed it stays as a branch",
                file.display()
            ));
        }
        // a history begun afresh opens with the system prompt Kimi CLI sends with every request
        if shared == 0
            && let Some(text) = sys
        {
            let mut nm = NewMessage::text(Role::System, text);
            nm.created_at = parent.and_then(|p| self.messages[p].message.created_at);
            nm.meta = json!({"source": "kimi-cli", "system_prompt": true});
            parent = self.push(parent, nm);
        }
        let mut now: Vec<(&'a Value, Option<usize>)> = self.before[..shared].to_vec();
        for (j, item) in items.into_iter().enumerate().skip(shared) {
            let at = format!("{}:{j}", file.display());
            let Some(nm) = message_of(item.value, &at)
                .map_err(|e| FormatError::new(file, line_of(lines, j), e))?
            else {
                self.report.skip("messages without content");
                now.push((item.value, None));
                continue;
            };
            let nm = self.measured(nm, &item);
            parent = self.push(parent, nm);
            now.push((item.value, parent));
        }
        self.tip = parent.or(self.tip);
        self.before = now;
        Ok(())
    }

    /// A message the wire gave no time takes the time of the message before it (else the next one).
    fn fill_times(&mut self) {
        let messages = &mut self.messages;
        for i in 0..messages.len() {
            if messages[i].message.created_at.is_none() {
                let at = messages[i]
                    .parent
                    .and_then(|p| messages[p].message.created_at)
                    .or_else(|| messages[i..].iter().find_map(|m| m.message.created_at));
                messages[i].message.created_at = at;
            }
        }
    }

    /// The marker before a history that shares nothing with the one before: a compaction's (it opens with the
    /// summary) or a clear's.
    fn marker(&self, items: &[Item<'_>]) -> NewMessage {
        let compacted = items
            .first()
            .and_then(|i| message_of(i.value, "").ok().flatten())
            .is_some_and(|m| crate::model::plain_text(&m.content).starts_with(COMPACTED));
        let text = if compacted {
            "Kimi CLI compacted the conversation: its summary and the turns it kept follow"
        } else {
            "Kimi CLI cleared the context: what follows was sent without the history before it"
        };
        let mut nm = NewMessage::text(Role::System, text);
        nm.created_at = self
            .tip
            .and_then(|t| self.messages.get(t))
            .and_then(|m| m.message.created_at);
        nm.meta = json!({"source": "kimi-cli", "compacted": compacted,
                         "cairn": harness_meta("kimi-cli", Kept::Nothing, false)});
        nm
    }

    /// A message with what was measured of it: a reply's usage (the prompt `_usage` measured, split as the wire
    /// recorded the step that measured it) and model; the times the wire gives.
    fn measured(&mut self, mut nm: NewMessage, item: &Item<'_>) -> NewMessage {
        nm.meta = match nm.meta.take() {
            Value::Null => json!({"source": "kimi-cli"}),
            rest => json!({"source": "kimi-cli", "message": rest}),
        };
        if nm.role == Role::Assistant {
            nm.meta["model"] = json!(self.model);
        }
        if nm.role == Role::Assistant
            && let Some(prompt) = item.prompt
        {
            let output = item.after.and_then(|a| a.checked_sub(prompt)).unwrap_or(0);
            let mut usage = Usage {
                input_tokens: prompt,
                output_tokens: output,
                ..Usage::default()
            };
            let steps = &self.wire.steps[self.step..];
            if let Some(off) = steps.iter().position(|(_, u, _)| {
                u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens == prompt
            }) {
                let (t, u, _) = steps[off];
                usage = u;
                nm.created_at = Some(t).filter(|t| *t > 0);
                self.step += off + 1;
            }
            nm.usage = Some(usage);
        }
        if nm.role == Role::User {
            let text = crate::model::plain_text(&nm.content);
            if let Some(off) = self.wire.turns[self.turn..]
                .iter()
                .position(|(_, t)| *t == text)
            {
                nm.created_at = Some(self.wire.turns[self.turn + off].0).filter(|t| *t > 0);
                self.turn += off + 1;
            }
        }
        nm
    }
}

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut moved: Vec<(PathBuf, Vec<(usize, Value)>)> = Vec::new();
    for p in rotated(path) {
        let lines = super::read_jsonl(&p)?;
        moved.push((p, lines));
    }
    // the histories moved aside, oldest first, then the one read (borrowed: its lines are the largest)
    let files: Vec<(&Path, &[(usize, Value)])> = moved
        .iter()
        .map(|(p, l)| (p.as_path(), l.as_slice()))
        .chain(std::iter::once((path, lines)))
        .collect();
    // a history read alone (not the session's `context.jsonl`) has no wire of its own
    let wire = if files.len() == 1 && path.file_name().is_some_and(|n| n != "context.jsonl") {
        Wire::default()
    } else {
        Wire::read(&path.with_file_name("wire.jsonl"))
    };
    let configured = configured_model(path);
    let mut t = Tree {
        messages: Vec::new(),
        before: Vec::new(),
        tip: None,
        wire,
        step: 0,
        turn: 0,
        model: configured.as_ref().map(|(m, _)| m.clone()),
        report: ImportReport::default(),
    };
    for (k, &(file, lines)) in files.iter().enumerate() {
        t.history(k, file, lines)?;
    }
    if t.messages.is_empty() {
        return Err(FormatError::empty(
            path,
            lines.first().map_or(1, |l| l.0),
            "nothing to import: the Kimi CLI session holds no prompt or reply yet",
        ));
    }
    t.fill_times();
    let state: Option<Value> = std::fs::read(path.with_file_name("state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let custom = state
        .as_ref()
        .and_then(|s| s.get("custom_title"))
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string);
    let window = t
        .wire
        .steps
        .iter()
        .rev()
        .find_map(|(_, _, w)| *w)
        .or_else(|| configured.as_ref().and_then(|(_, w)| *w));
    let (session, subagent) = session_of(path);
    let cwd = session.as_deref().and_then(|id| work_dir(path, id));
    let mut meta = json!({"source": "kimi-cli", "sessionId": session, "histories": files.len(),
                          "max_context_tokens": window, "header": {"id": session, "cwd": cwd}});
    if let Some(agent) = subagent {
        // a subagent's own history: what it was asked to do names it
        meta["subagent"] = json!(true);
        let about: Option<Value> = std::fs::read(path.with_file_name("meta.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if let Some(a) = about {
            meta["agent"] = a;
        }
        meta["agent_id"] = json!(agent);
    }
    let title = custom
        .or_else(|| {
            meta.pointer("/agent/description")
                .and_then(Value::as_str)
                .filter(|d| !d.trim().is_empty())
                .map(|d| format!("subagent: {d}"))
        })
        .or_else(|| super::title_of(&t.messages));
    if let Some(m) = &t.model {
        // the model as Kimi CLI is set now (the session does not say), and the window it ran it with
        t.report.notes.push(format!(
            "the model is the one Kimi CLI's config.toml sets now ({m}): the session does not record it"
        ));
        if let Some(w) = window {
            meta["windows"] = json!({ m.as_str(): w });
        }
    }
    Ok(Parsed {
        title,
        tip: t.tip,
        messages: t.messages,
        checkpoints: Vec::new(),
        meta,
        report: t.report,
        children: Vec::new(),
    })
}

/// A history's session id (every history is `context.jsonl`, so its folders name it), and the subagent's id
/// where it is one's: `<session>/context.jsonl`; a subagent's `<session>/subagents/<id>/context.jsonl`; Kimi
/// Code's `<session>/agents/main/context.jsonl` (the session's own) and `<session>/agents/<id>/…`.
fn session_of(path: &Path) -> (Option<String>, Option<String>) {
    let names: Vec<String> = path
        .ancestors()
        .skip(1)
        .take(3)
        .map(|d| {
            d.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    match names.as_slice() {
        [agent, group, session, ..] if group == "subagents" || group == "agents" => {
            let sub = (agent != "main").then(|| agent.clone());
            (Some(format!("{session}/{agent}")), sub)
        }
        [session, ..] => (Some(session.clone()), None),
        [] => (None, None),
    }
}

/// The file line of a history's `j`-th message.
fn line_of(lines: &[(usize, Value)], j: usize) -> usize {
    lines
        .iter()
        .filter(|(_, v)| {
            v.get("role")
                .and_then(Value::as_str)
                .is_some_and(|r| !MARKERS.contains(&r))
        })
        .nth(j)
        .map_or(0, |(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_s_folders_name_its_session_and_its_subagent() {
        let at = |p: &str| session_of(Path::new(p));
        assert_eq!(
            at("/h/.kimi/sessions/3f2a/0b6f-11/context.jsonl"),
            (Some("0b6f-11".into()), None)
        );
        assert_eq!(
            at("/h/.kimi/sessions/3f2a/0b6f-11/subagents/a1b2c3/context.jsonl"),
            (Some("0b6f-11/a1b2c3".into()), Some("a1b2c3".into()))
        );
        // Kimi Code's layout: the session's own history is its `main` agent's
        assert_eq!(
            at("/h/.kimi/sessions/3f2a/0b6f-11/agents/main/context.jsonl"),
            (Some("0b6f-11/main".into()), None)
        );
        assert_eq!(
            at("/h/.kimi/sessions/3f2a/0b6f-11/agents/e4f5/context.jsonl"),
            (Some("0b6f-11/e4f5".into()), Some("e4f5".into()))
        );
    }
}
