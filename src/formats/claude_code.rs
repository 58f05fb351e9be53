//! Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! Claude Code records one content block per assistant line (lines of one reply share `message.id`), hangs each
//! tool result off the line of its own tool_use, and threads progress, hook and attachment lines into the same
//! uuid tree. Read naively, every parallel tool call looks like a branch. This reader rebuilds what was sent:
//! one assistant message per `message.id`, one user message with all the results of that reply right after it,
//! side lines attached as metadata to the message they hang from. What remains as a branch is real: a rewind or
//! an edited prompt (two user children of one message).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{FormatError, ImportReport, Parsed, note, timestamp_ms};
use crate::model::{NewMessage, Role, Usage};
use crate::reclaim::marker::{Kept, Ref, harness_meta};
use crate::store::ImportedMessage;
use crate::wire;

/// Keys of the modelled part of each block type; anything else on a block is kept in `meta.block_extras`.
const BLOCK_KEYS: &[(&str, &[&str])] = &[
    ("text", &["type", "text"]),
    ("thinking", &["type", "thinking", "signature"]),
    ("tool_use", &["type", "id", "name", "input"]),
    (
        "tool_result",
        &["type", "tool_use_id", "content", "is_error"],
    ),
    ("image", &["type", "source"]),
];

/// Moves fields that the model does not carry (e.g. `caller` on tool_use) out of known blocks, so the block is
/// modelled, and returns them as `{block index: {field: value}}` to keep in metadata.
pub(crate) fn split_block_extras(content: &mut Value, offset: usize, out: &mut Map<String, Value>) {
    let Value::Array(blocks) = content else {
        return;
    };
    for (i, b) in blocks.iter_mut().enumerate() {
        let Value::Object(o) = b else { continue };
        let ty = o
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let Some((_, keys)) = BLOCK_KEYS.iter().find(|(t, _)| *t == ty) else {
            continue;
        };
        let extra: Vec<String> = o
            .keys()
            .filter(|k| !keys.contains(&k.as_str()))
            .cloned()
            .collect();
        if extra.is_empty() {
            continue;
        }
        let mut moved = Map::new();
        for k in extra {
            if let Some(v) = o.remove(&k) {
                moved.insert(k, v);
            }
        }
        out.insert((offset + i).to_string(), Value::Object(moved));
    }
}

/// What a uuid line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A user or assistant line that is part of what the model saw.
    Message,
    /// A `compact_boundary`: kept as a compaction marker.
    Boundary,
    /// progress, attachment, hook summaries, timings: attached as metadata.
    Side,
}

struct Line {
    no: usize,
    value: Value,
    kind: Kind,
    uuid: String,
    parent: Option<String>,
}

/// A message being assembled from one or more lines.
struct Unit {
    role: Role,
    /// Indices into `lines`.
    lines: Vec<usize>,
    parent_line: Option<usize>,
    /// For a results unit: the assistant unit it answers.
    answers: Option<usize>,
    attached: Vec<Value>,
}

fn is_results_only(content: &Value) -> bool {
    match content {
        Value::Array(bs) => {
            !bs.is_empty()
                && bs
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        }
        _ => false,
    }
}

pub fn parse(path: &Path, input: Vec<(usize, Value)>) -> Result<Parsed, FormatError> {
    // Claude Code 1.x wrote its subagents inline: `isSidechain` lines in the session's own file, one tree per
    // Task call. Each tree is its own (linked) conversation; a file of sidechain lines only (a pre-2.1
    // `agent-<8hex>.jsonl`, imported alone) is one conversation as it is.
    let side = |v: &Value| v.get("isSidechain").and_then(Value::as_bool) == Some(true);
    let has_main = input
        .iter()
        .any(|(_, v)| !side(v) && v.get("message").is_some());
    type Lines = Vec<(usize, Value)>;
    let (main, sidechain): (Lines, Lines) = if has_main {
        input.into_iter().partition(|(_, v)| !side(v))
    } else {
        (input, Vec::new())
    };
    let mut parsed = parse_inner(path, main, true)?;
    for group in sidechain_trees(sidechain) {
        let mut child = parse_inner(path, group, false)?;
        child.meta["subagent"] = json!(true);
        child.meta["subagent_layout"] = json!("inline-sidechain");
        parsed.children.push(child);
    }
    // Claude Code 2.0 wrote them beside the session: `agent-<8hex>.jsonl` with the session's id
    if let (Some(dir), Some(session)) = (
        path.parent(),
        parsed.meta.get("sessionId").and_then(Value::as_str),
    ) {
        let is_agent_file = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("agent-"));
        if !is_agent_file {
            for f in agent_files_of(dir, session) {
                let lines = super::read_jsonl(&f)?;
                if lines.is_empty() {
                    continue;
                }
                let mut child = parse_inner(&f, lines, false)?;
                child.meta["subagent"] = json!(true);
                child.meta["subagent_layout"] = json!("agent-file");
                child.meta["subagent_file"] =
                    json!(f.file_name().map(|n| n.to_string_lossy().into_owned()));
                parsed.children.push(child);
            }
        }
    }
    attach_to_spawning_calls(&mut parsed);
    Ok(parsed)
}

/// A window of lines from the end of a session's file, read alone (no subagents: the caller checked that the
/// files read with the session did not change, and that no line is an inline subagent's).
pub(crate) fn parse_window(path: &Path, lines: Vec<(usize, Value)>) -> Result<Parsed, FormatError> {
    parse_inner(path, lines, false)
}

/// The `agent-*.jsonl` files in `dir` that belong to `session` (their first line names it).
pub fn agent_files_of(dir: &Path, session: &str) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
        })
        .filter(|p| session_of_file(p).as_deref() == Some(session))
        .collect();
    files.sort();
    files
}

/// The `sessionId` a Claude Code file's first lines name.
pub fn session_of_file(p: &Path) -> Option<String> {
    use std::io::BufRead;
    let f = std::fs::File::open(p).ok()?;
    std::io::BufReader::new(f)
        .lines()
        .take(20)
        .map_while(Result::ok)
        .find_map(|l| {
            serde_json::from_str::<Value>(&l)
                .ok()?
                .get("sessionId")?
                .as_str()
                .map(str::to_string)
        })
}

/// Sidechain lines grouped by the tree they belong to (each root, with every line under it), in file order.
fn sidechain_trees(lines: Vec<(usize, Value)>) -> Vec<Vec<(usize, Value)>> {
    let uuid_of = |v: &Value| v.get("uuid").and_then(Value::as_str).map(str::to_string);
    let parent: std::collections::HashMap<String, Option<String>> = lines
        .iter()
        .filter_map(|(_, v)| {
            Some((
                uuid_of(v)?,
                v.get("parentUuid")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ))
        })
        .collect();
    let root_of = |u: &str| -> String {
        let mut cur = u.to_string();
        for _ in 0..parent.len() + 1 {
            match parent.get(&cur) {
                Some(Some(p)) if parent.contains_key(p) => cur = p.clone(),
                _ => break,
            }
        }
        cur
    };
    let mut order: Vec<String> = Vec::new();
    let mut groups: std::collections::HashMap<String, Vec<(usize, Value)>> =
        std::collections::HashMap::new();
    for (no, v) in lines {
        let root = uuid_of(&v)
            .map(|u| root_of(&u))
            .unwrap_or_else(|| "(none)".into());
        if !groups.contains_key(&root) {
            order.push(root.clone());
        }
        groups.entry(root).or_default().push((no, v));
    }
    order
        .into_iter()
        .filter_map(|r| groups.remove(&r))
        .collect()
}

/// Each subagent's spawning call in the parent session: the Task (or Agent) call whose prompt is the subagent's
/// first prompt. Recorded in the subagent's metadata (`spawned_by`: the call's id and description), and its title
/// from the call's description.
fn attach_to_spawning_calls(parsed: &mut Parsed) {
    let calls: Vec<(String, String, String)> = parsed
        .messages
        .iter()
        .flat_map(|m| m.message.content.iter())
        .filter_map(|b| match b {
            crate::model::Block::ToolUse { id, name, input }
                if matches!(name.as_str(), "Task" | "Agent") =>
            {
                Some((
                    id.clone(),
                    input
                        .get("prompt")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .trim()
                        .to_string(),
                    input
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                ))
            }
            _ => None,
        })
        .collect();
    for child in &mut parsed.children {
        let first = child.messages.iter().find_map(|m| {
            (m.message.role == crate::model::Role::User)
                .then(|| crate::model::plain_text(&m.message.content))
        });
        let Some(first) = first else { continue };
        let first = first.trim();
        if let Some((id, _, description)) = calls
            .iter()
            .find(|(_, prompt, _)| !prompt.is_empty() && prompt == first)
        {
            child.meta["spawned_by"] = json!({"call_id": id, "description": description});
            if !description.is_empty() && child.meta.get("agent").is_none() {
                child.title = Some(format!("subagent: {description}"));
            }
        }
    }
}

/// What the first pass over the lines found: the uuid lines in file order and the records without a uuid.
#[derive(Default)]
struct Scan {
    lines: Vec<Line>,
    records: Vec<Value>,
    /// The best title seen so far and its rank (summary < ai-title < custom-title).
    title: Option<(u8, String)>,
    last_prompt_leaf: Option<String>,
    session: Option<String>,
    version: Option<String>,
}

impl Scan {
    fn set_title(&mut self, rank: u8, t: &str) {
        if !t.trim().is_empty() && self.title.as_ref().is_none_or(|(r, _)| rank >= *r) {
            self.title = Some((rank, t.trim().to_string()));
        }
    }

    /// A record without a uuid: a title, the last prompt's leaf, or something kept as metadata.
    fn record(&mut self, ty: &str, v: Value, report: &mut ImportReport) {
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        match ty {
            "summary" => {
                if let Some(s) = text("summary") {
                    self.set_title(1, &s);
                }
            }
            "ai-title" => {
                if let Some(s) = text("aiTitle") {
                    self.set_title(2, &s);
                }
            }
            "custom-title" => {
                if let Some(s) = text("customTitle") {
                    self.set_title(3, &s);
                }
            }
            "last-prompt" => self.last_prompt_leaf = text("leafUuid"),
            _ => {}
        }
        let label = if ty.is_empty() { "untyped" } else { ty };
        report.skip(format!("{label} records (kept as metadata)"));
        self.records.push(v);
    }
}

/// Phase 1: every line classified (message, boundary, side line, record); a message line without its message is
/// refused with its line number.
fn scan(
    path: &Path,
    input: Vec<(usize, Value)>,
    report: &mut ImportReport,
) -> Result<Scan, FormatError> {
    let mut s = Scan::default();
    for (no, v) in input {
        if s.session.is_none() {
            s.session = v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if s.version.is_none() {
            s.version = v.get("version").and_then(Value::as_str).map(str::to_string);
        }
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let uuid = v.get("uuid").and_then(Value::as_str).map(str::to_string);
        match (ty.as_str(), uuid.as_deref()) {
            ("user" | "assistant", Some(u)) => {
                let msg = v.get("message").and_then(Value::as_object).ok_or_else(|| {
                    FormatError::new(path, no, format!("{ty} line {u} has no \"message\" object"))
                })?;
                if msg.get("content").is_none() {
                    return Err(FormatError::new(
                        path,
                        no,
                        format!("{ty} line {u} has no message.content"),
                    ));
                }
                s.lines.push(line(no, v, Kind::Message, u));
            }
            // a compaction, or a microcompact (old tool results cleared from the context from here on)
            ("system", Some(u))
                if matches!(
                    v.get("subtype").and_then(Value::as_str),
                    Some("compact_boundary" | "microcompact_boundary")
                ) =>
            {
                s.lines.push(line(no, v, Kind::Boundary, u));
            }
            (_, Some(u)) => {
                if is_rendered(&v) {
                    report.skip(
                        "attachment lines rendered for the model (sent with their message, kept as metadata)"
                            .to_string(),
                    );
                } else {
                    report.skip(format!("{ty} lines (attached as metadata)"));
                }
                s.lines.push(line(no, v, Kind::Side, u));
            }
            (_, None) => s.record(&ty, v, report),
        }
    }
    Ok(s)
}

/// The nearest ancestor of line `i` that is part of the conversation, skipping side lines; a parent not in the
/// file is reported in `outside`.
fn conv_parent(
    lines: &[Line],
    by_uuid: &HashMap<String, usize>,
    i: usize,
    outside: &mut Vec<String>,
) -> Option<usize> {
    let l = &lines[i];
    let mut p = if l.kind == Kind::Boundary {
        l.value
            .get("logicalParentUuid")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| l.parent.clone())
    } else {
        l.parent.clone()
    };
    let mut steps = 0;
    while let Some(pu) = p {
        let Some(&j) = by_uuid.get(pu.as_str()) else {
            // a compaction's logical parent the file does not hold (Claude Code wrote the boundary after
            // rewriting what came before): it follows the record before it on the main chain, in file order,
            // so the history before the compaction is not cut off into a second root
            if l.kind == Kind::Boundary {
                let sidechain = |k: usize| {
                    lines[k].value.get("isSidechain").and_then(Value::as_bool) == Some(true)
                };
                if let Some(prev) = (0..i)
                    .rev()
                    .find(|&k| lines[k].kind != Kind::Side && !sidechain(k))
                {
                    outside.push(format!(
                        "line {}: the compaction's logical parent {pu} is not in this file; it follows line {}, \
                         the record before it",
                        l.no, lines[prev].no
                    ));
                    return Some(prev);
                }
            }
            outside.push(format!(
                "line {}: parent {pu} is not in this file; the message becomes a root",
                l.no
            ));
            return None;
        };
        if lines[j].kind != Kind::Side {
            return Some(j);
        }
        p = lines[j].parent.clone();
        steps += 1;
        if steps > lines.len() {
            return None;
        }
    }
    None
}

/// Phase 2: the lines grouped into messages. Assistant lines are grouped by message.id; tool results go to the
/// group whose tool_use they answer; side lines wait for the message they hang from.
#[derive(Default)]
struct Grouping {
    units: Vec<Unit>,
    unit_of_line: Vec<Option<usize>>,
    group_of_msg_id: HashMap<String, usize>,
    group_of_tool_use: HashMap<String, usize>,
    /// The results unit of each assistant unit that has one.
    results_of_group: HashMap<usize, usize>,
    /// Each side line and the conversational line it hangs from.
    side_parent: Vec<(usize, Option<usize>)>,
    /// Parents the file does not hold, as notes.
    outside: Vec<String>,
}

impl Grouping {
    fn of(lines: &[Line], by_uuid: &HashMap<String, usize>) -> Grouping {
        let mut g = Grouping {
            unit_of_line: vec![None; lines.len()],
            ..Grouping::default()
        };
        for (i, l) in lines.iter().enumerate() {
            match l.kind {
                Kind::Side => {
                    let p = conv_parent(lines, by_uuid, i, &mut Vec::new());
                    g.side_parent.push((i, p));
                }
                Kind::Boundary => {
                    let parent_line = conv_parent(lines, by_uuid, i, &mut g.outside);
                    let u = g.push(Role::System, i, parent_line, None);
                    g.unit_of_line[i] = Some(u);
                }
                Kind::Message => {
                    let parent_line = conv_parent(lines, by_uuid, i, &mut g.outside);
                    let u = if l.value["type"] == "assistant" {
                        g.assistant_line(i, &l.value["message"], parent_line)
                    } else {
                        g.user_line(i, &l.value["message"], parent_line)
                    };
                    g.unit_of_line[i] = Some(u);
                }
            }
        }
        g
    }

    fn push(
        &mut self,
        role: Role,
        line: usize,
        parent_line: Option<usize>,
        answers: Option<usize>,
    ) -> usize {
        self.units.push(Unit {
            role,
            lines: vec![line],
            parent_line,
            answers,
            attached: vec![],
        });
        self.units.len() - 1
    }

    /// An assistant line joins the unit of its message.id, or starts one; its tool_use ids are remembered.
    fn assistant_line(&mut self, i: usize, msg: &Value, parent_line: Option<usize>) -> usize {
        let mid = msg.get("id").and_then(Value::as_str).map(str::to_string);
        let u = match mid
            .as_ref()
            .and_then(|m| self.group_of_msg_id.get(m).copied())
        {
            Some(u) => {
                self.units[u].lines.push(i);
                u
            }
            None => {
                let u = self.push(Role::Assistant, i, parent_line, None);
                if let Some(m) = mid {
                    self.group_of_msg_id.insert(m, u);
                }
                u
            }
        };
        if let Some(Value::Array(bs)) = msg.get("content") {
            for b in bs {
                if b.get("type").and_then(Value::as_str) == Some("tool_use")
                    && let Some(id) = b.get("id").and_then(Value::as_str)
                {
                    self.group_of_tool_use.insert(id.to_string(), u);
                }
            }
        }
        u
    }

    /// A user line of tool results only joins the results unit of the reply it answers; any other starts a unit.
    fn user_line(&mut self, i: usize, msg: &Value, parent_line: Option<usize>) -> usize {
        let content = msg.get("content").unwrap_or(&Value::Null);
        let answered = if is_results_only(content) {
            content.as_array().and_then(|bs| {
                bs.iter()
                    .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
                    .find_map(|id| self.group_of_tool_use.get(id).copied())
            })
        } else {
            None
        };
        let Some(g) = answered else {
            return self.push(Role::User, i, parent_line, None);
        };
        if let Some(&r) = self.results_of_group.get(&g) {
            self.units[r].lines.push(i);
            return r;
        }
        let r = self.push(Role::User, i, parent_line, Some(g));
        self.results_of_group.insert(g, r);
        r
    }

    /// Side lines become metadata of the message they hang from; the rest is the conversation's preamble. An
    /// attachment Claude Code rendered for the model ([`rendered_blocks`]) goes with the message it was sent in:
    /// one hanging from a reply goes with that reply's results, else with the prompt that follows the reply.
    fn attach_side_lines(&mut self, lines: &mut [Line]) -> Vec<Value> {
        let mut preamble = Vec::new();
        let mut next_prompt: HashMap<usize, usize> = HashMap::new();
        if self
            .side_parent
            .iter()
            .any(|&(i, _)| is_rendered(&lines[i].value))
        {
            for c in 0..self.units.len() {
                if self.units[c].role == Role::User
                    && self.units[c].answers.is_none()
                    && let Some(p) = self.parent_unit(c)
                {
                    next_prompt.entry(p).or_insert(c);
                }
            }
        }
        for &(i, p) in &self.side_parent {
            let v = std::mem::take(&mut lines[i].value);
            match p.and_then(|j| self.unit_of_line[j]) {
                Some(u) => {
                    let u = if is_rendered(&v) && self.units[u].role == Role::Assistant {
                        self.results_of_group
                            .get(&u)
                            .or_else(|| next_prompt.get(&u))
                            .copied()
                            .unwrap_or(u)
                    } else {
                        u
                    };
                    self.units[u].attached.push(v);
                }
                None => preamble.push(v),
            }
        }
        preamble
    }

    /// Parent of unit `u`, as a unit: a reply that follows tool results hangs off the results message.
    fn parent_unit(&self, u: usize) -> Option<usize> {
        if let Some(g) = self.units[u].answers {
            return Some(g);
        }
        let pl = self.units[u].parent_line?;
        let pu = self.unit_of_line[pl]?;
        if pu == u {
            return None;
        }
        Some(match self.results_of_group.get(&pu) {
            // A message hanging off an assistant reply whose results exist comes after those results.
            Some(&r) if self.units[pu].role == Role::Assistant && r != u => r,
            _ => pu,
        })
    }
}

/// Phase 3: parents first, then by first line (a stable topological order); returns the order and each unit's
/// index in it.
fn topological_order(units: &[Unit], parents: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let mut order: Vec<usize> = Vec::with_capacity(units.len());
    let mut placed = vec![false; units.len()];
    let mut by_first: Vec<usize> = (0..units.len()).collect();
    by_first.sort_by_key(|&u| units[u].lines[0]);
    for &u in &by_first {
        let mut chain = vec![u];
        let mut cur = parents[u];
        while let Some(p) = cur {
            if placed[p] || chain.contains(&p) {
                break;
            }
            chain.push(p);
            cur = parents[p];
        }
        for &c in chain.iter().rev() {
            if !placed[c] {
                placed[c] = true;
                order.push(c);
            }
        }
    }
    let mut index_of = vec![0usize; units.len()];
    for (k, &u) in order.iter().enumerate() {
        index_of[u] = k;
    }
    (order, index_of)
}

/// The tree as it was read: lines, their messages, and the order the messages are written in.
struct Tree {
    lines: Vec<Line>,
    by_uuid: HashMap<String, usize>,
    g: Grouping,
    order: Vec<usize>,
    index_of: Vec<usize>,
}

impl Tree {
    /// The message (as its index in `order`) that line `li` became.
    fn message_of_line(&self, li: usize) -> Option<usize> {
        self.unit_of_line(li).map(|u| self.index_of[u])
    }

    fn unit_of_line(&self, li: usize) -> Option<usize> {
        self.g.unit_of_line[li]
    }

    /// The tip: the newest conversational line (or the last prompt's leaf when it names one); a tip inside a
    /// reply whose results came later means the results are the place the session was.
    fn tip(&self, last_prompt_leaf: Option<&str>) -> Option<usize> {
        let lines = &self.lines;
        let tip_line = last_prompt_leaf
            .and_then(|l| self.by_uuid.get(l).copied())
            .filter(|&i| lines[i].kind != Kind::Side)
            .or_else(|| {
                (0..lines.len())
                    .rev()
                    .find(|&i| lines[i].kind != Kind::Side)
            });
        let tip = tip_line.and_then(|i| self.message_of_line(i))?;
        let u = self.order[tip];
        Some(
            self.g
                .results_of_group
                .get(&u)
                .map_or(tip, |&r| self.index_of[r].max(tip)),
        )
    }

    /// Phase 4: one message per unit, in order; a parent that does not come first (a parentUuid cycle) is cut.
    fn messages(
        &mut self,
        path: &Path,
        parents: &[Option<usize>],
        report: &mut ImportReport,
    ) -> Result<Vec<ImportedMessage>, FormatError> {
        let mut messages = Vec::with_capacity(self.order.len());
        let mut cut = 0;
        for &u in &self.order {
            let message = build_message(path, &mut self.lines, &mut self.g.units[u])?;
            let parent = parents[u]
                .filter(|&p| {
                    self.index_of[p] < self.index_of[u] || {
                        cut += usize::from(p != u);
                        false
                    }
                })
                .map(|p| self.index_of[p]);
            messages.push(ImportedMessage { parent, message });
        }
        if cut > 0 {
            report.notes.push(format!(
                "{cut} message(s) were in a parentUuid cycle; each became a root"
            ));
        }
        Ok(messages)
    }

    /// The uuids of the segment a compact_boundary says it preserved (`compactMetadata.preservedSegment`, which
    /// Claude Code may write without `preservedMessages`): from its tail up the parentUuid chain to its head. None
    /// when the chain does not reach the head (a segment the file no longer holds whole is not guessed at).
    fn segment_of(&self, meta: &Value) -> Option<Vec<String>> {
        let seg = meta.pointer("/line/compactMetadata/preservedSegment")?;
        let head = seg.get("headUuid")?.as_str()?;
        let mut at = seg.get("tailUuid")?.as_str()?;
        let mut out = Vec::new();
        while out.len() <= self.lines.len() {
            out.push(at.to_string());
            if at == head {
                out.reverse();
                return Some(out);
            }
            at = self.lines[*self.by_uuid.get(at)?].parent.as_deref()?;
        }
        None
    }

    /// Phase 5: each boundary's marker. A compact_boundary keeps the messages its metadata names
    /// (`preservedMessages`, or the segment `preservedSegment` spans), by their depth on the path; a microcompact
    /// elides the results it names.
    fn mark_boundaries(&self, messages: &mut [ImportedMessage], report: &mut ImportReport) {
        let depth = super::depths(messages);
        for (k, &u) in self.order.iter().enumerate() {
            if self.g.units[u].role != Role::System {
                continue;
            }
            let subtype = messages[k]
                .message
                .meta
                .pointer("/line/subtype")
                .and_then(Value::as_str);
            if subtype == Some("microcompact_boundary") {
                mark_microcompact(messages, k, &depth, report);
                continue;
            }
            let meta = &messages[k].message.meta;
            let preserved = preserved_of(meta)
                .or_else(|| self.segment_of(meta))
                .unwrap_or_default();
            let kept = preserved
                .iter()
                .filter_map(|uid| self.by_uuid.get(uid.as_str()))
                .filter_map(|&li| self.message_of_line(li))
                .filter(|&i| i < k)
                .map(|i| Ref::Depth(depth[i]))
                .collect::<Vec<_>>();
            // anchored on the summary after the boundary (the recent turns kept after it), Claude Code sends the
            // summary first and the kept turns after it (it relinks the segment's head to the anchor on load);
            // anchored on the boundary itself, the kept turns come first
            let anchor = anchor_of(meta)
                .and_then(|a| self.by_uuid.get(a.as_str()))
                .and_then(|&li| self.message_of_line(li))
                .filter(|&a| a > k);
            let kept = match (kept.is_empty(), anchor) {
                (true, _) => Kept::Nothing,
                (false, Some(a)) => Kept::AfterSummary {
                    summary: Ref::Depth(depth[a]),
                    each: kept,
                },
                (false, None) => Kept::Each(kept),
            };
            messages[k].message.meta["cairn"] = harness_meta("claude-code", kept, false);
        }
    }
}

/// A microcompact clears the results it names from the context from here on: those messages' large results are
/// elided, as cairn's own elision would.
fn mark_microcompact(
    messages: &mut [ImportedMessage],
    k: usize,
    depth: &[usize],
    report: &mut ImportReport,
) {
    let ids: std::collections::HashSet<String> = messages[k]
        .message
        .meta
        .pointer("/line/microcompactMetadata/compactedToolIds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let at: Vec<Ref> = (0..k)
        .filter(|&i| {
            messages[i].message.content.iter().any(|b| {
                matches!(b, crate::model::Block::ToolResult { tool_use_id, .. } if ids.contains(tool_use_id))
            })
        })
        .map(|i| Ref::Depth(depth[i]))
        .collect();
    report.notes.push(format!(
        "a microcompact cleared {} tool result(s) in {} message(s) from the context",
        ids.len(),
        at.len()
    ));
    messages[k].message.meta["cairn"] = crate::reclaim::marker::Marker::Elide {
        at,
        legacy_tool_ids: Vec::new(),
    }
    .to_meta(&|_| None);
}

fn parse_inner(
    path: &Path,
    input: Vec<(usize, Value)>,
    with_subagents: bool,
) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let scan = scan(path, input, &mut report)?;
    let mut lines = scan.lines;
    let by_uuid: HashMap<String, usize> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (l.uuid.clone(), i))
        .collect();
    let mut g = Grouping::of(&lines, &by_uuid);
    report.notes.extend(g.outside.iter().cloned());
    let preamble = g.attach_side_lines(&mut lines);
    let parents: Vec<Option<usize>> = (0..g.units.len()).map(|u| g.parent_unit(u)).collect();
    let self_parents = lines
        .iter()
        .filter(|l| l.parent.as_deref() == Some(l.uuid.as_str()))
        .count();
    if self_parents > 0 {
        report.notes.push(format!(
            "{self_parents} line(s) name themselves as parent; each became a root"
        ));
    }
    let (order, index_of) = topological_order(&g.units, &parents);
    let mut tree = Tree {
        lines,
        by_uuid,
        g,
        order,
        index_of,
    };
    let mut messages = tree.messages(path, &parents, &mut report)?;
    let tip = tree.tip(scan.last_prompt_leaf.as_deref());

    let beside = sends_beside(&scan.records);
    let mut meta = json!({"source": "claude-code", "records": scan.records, "preamble": preamble});
    if !beside.is_empty() {
        meta["sends_beside"] = json!(beside);
    }
    if let Some(s) = &scan.session {
        meta["sessionId"] = json!(s);
    }
    if let Some(v) = &scan.version {
        meta["harness_version"] = json!(v);
    }
    tree.mark_boundaries(&mut messages, &mut report);
    let title = scan
        .title
        .map(|t| t.1)
        .or_else(|| super::title_of(&messages));
    let mut parsed = Parsed {
        title,
        messages,
        tip,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    };
    if with_subagents {
        attach_subagent_files(path, &mut parsed)?;
    }
    Ok(parsed)
}

/// Phase 6: subagent transcripts, `<session>/subagents/agent-*.jsonl` beside the file, each a child
/// conversation with its `.meta.json` (description, agent) when there is one.
fn attach_subagent_files(path: &Path, parsed: &mut Parsed) -> Result<(), FormatError> {
    let (Some(stem), Some(dir)) = (path.file_stem(), path.parent()) else {
        return Ok(());
    };
    let sub = dir.join(stem).join("subagents");
    let Ok(rd) = std::fs::read_dir(&sub) else {
        return Ok(());
    };
    let mut files: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let sub_lines = super::read_jsonl(&f)?;
        if sub_lines.is_empty() {
            continue;
        }
        let mut child = parse_inner(&f, sub_lines, false)?;
        child.meta["subagent"] = json!(true);
        let meta_file = f.with_extension("meta.json");
        if let Ok(text) = std::fs::read_to_string(&meta_file)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            if let Some(d) = v.get("description").and_then(Value::as_str) {
                child.title = Some(format!("subagent: {d}"));
            }
            child.meta["agent"] = v;
        }
        child.meta["subagent_file"] =
            json!(f.file_name().map(|n| n.to_string_lossy().into_owned()));
        parsed.children.push(child);
    }
    Ok(())
}

fn line(no: usize, v: Value, kind: Kind, uuid: &str) -> Line {
    Line {
        no,
        parent: v
            .get("parentUuid")
            .and_then(Value::as_str)
            .map(str::to_string),
        value: v,
        kind,
        uuid: uuid.to_string(),
    }
}

/// The message a compaction's preserved turns hang from when Claude Code loads the session
/// (`preservedMessages.anchorUuid`, else `preservedSegment.anchorUuid`).
fn anchor_of(meta: &Value) -> Option<String> {
    let m = meta.get("line")?.get("compactMetadata")?;
    ["preservedMessages", "preservedSegment"]
        .iter()
        .find_map(|k| m.get(*k)?.get("anchorUuid")?.as_str())
        .map(str::to_string)
}

/// The uuids a compact_boundary says it preserved (`compactMetadata.preservedMessages.uuids`).
fn preserved_of(meta: &Value) -> Option<Vec<String>> {
    let uuids = meta
        .get("line")?
        .get("compactMetadata")?
        .get("preservedMessages")?
        .get("uuids")?
        .as_array()?;
    Some(
        uuids
            .iter()
            .filter_map(|u| u.as_str().map(str::to_string))
            .collect(),
    )
}

/// Where in the conversation's meta (JSON pointers) is what Claude Code sent beside the messages of its first
/// request: 2.1.33x records each request's system prompt and tools once per shape (`api-request-shape`, named by the
/// requests' `shapeHash`). The overhead of a session's first reply is then known before any reply is measured.
fn sends_beside(records: &[Value]) -> Vec<String> {
    let Some(i) = records.iter().position(|r| {
        r.get("type").and_then(Value::as_str) == Some("api-request-shape")
            && r.get("shape").is_some()
    }) else {
        return Vec::new();
    };
    ["system", "tools"]
        .into_iter()
        .filter(|k| records[i]["shape"].get(k).is_some_and(|v| !v.is_null()))
        .map(|k| format!("/records/{i}/shape/{k}"))
        .collect()
}

/// Whether a side line is an attachment Claude Code rendered for the model (2.1.33x records what it sent:
/// `rendered`, with `renderedRole`): a system reminder, the environment, a listing of skills or agents, a file
/// changed meanwhile, a hook's added context.
pub(crate) fn is_rendered(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("attachment")
        && v.get("rendered")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
}

/// What a rendered attachment sent: each `rendered[].content`, a text or content blocks.
fn rendered_blocks(v: &Value) -> Vec<crate::model::Block> {
    if !is_rendered(v) {
        return Vec::new();
    }
    v["rendered"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| match r.get("content") {
            Some(Value::String(t)) if !t.is_empty() => vec![crate::model::Block::text(t.clone())],
            Some(c @ Value::Array(_)) => {
                wire::blocks_from_value(c.clone(), "rendered.content").unwrap_or_default()
            }
            _ => Vec::new(),
        })
        .collect()
}

fn build_message(
    path: &Path,
    lines: &mut [Line],
    unit: &mut Unit,
) -> Result<NewMessage, FormatError> {
    let first = &lines[unit.lines[0]];
    if unit.role == Role::System {
        // compact_boundary: a marker the model never sees as such, kept with everything it said.
        let micro =
            first.value.get("subtype").and_then(Value::as_str) == Some("microcompact_boundary");
        let text = first
            .value
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or(if micro {
                "Claude Code cleared old tool results (microcompact)"
            } else {
                "Conversation compacted"
            });
        let mut meta = json!({"source": "claude-code", "line": first.value,
                              "cairn": harness_meta("claude-code", Kept::Nothing, false)});
        if !unit.attached.is_empty() {
            meta["attached"] = Value::Array(std::mem::take(&mut unit.attached));
        }
        let mut m = note(Role::System, text, meta);
        m.created_at = timestamp_ms(first.value.get("timestamp"));
        return Ok(m);
    }
    let mut content = Vec::new();
    let mut envelopes = Vec::new();
    let mut extras = Map::new();
    let mut usage = None;
    let mut failed = false;
    let mut compact_summary = false;
    let created_at = timestamp_ms(first.value.get("timestamp"));
    for &li in &unit.lines {
        let l = &mut lines[li];
        let mut env = std::mem::take(&mut l.value);
        let mut c = env
            .get_mut("message")
            .and_then(|m| m.as_object_mut())
            .and_then(|m| m.remove("content"))
            .unwrap_or(Value::Null);
        split_block_extras(&mut c, content.len(), &mut extras);
        let blocks = wire::blocks_from_value(c, "message.content")
            .map_err(|e| FormatError::new(path, l.no, e.to_string()))?;
        content.extend(blocks);
        if let Some(u) = env.get("message").and_then(|m| m.get("usage")) {
            usage = serde_json::from_value::<Usage>(u.clone()).ok().or(usage);
        }
        failed |= env.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
        compact_summary |= env.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
        envelopes.push(env);
    }
    let mut meta = json!({"source": "claude-code", "lines": envelopes});
    if failed {
        meta["isApiErrorMessage"] = json!(true);
    }
    if compact_summary {
        meta["cairn"] = crate::model::CairnMeta::CompactSummary.to_value();
    }
    // what Claude Code rendered of its attachments went to the model in this user message: before a prompt, after
    // tool results (Claude Code appends it to the last result's text)
    let rendered: Vec<crate::model::Block> = if unit.role == Role::User {
        unit.attached.iter().flat_map(rendered_blocks).collect()
    } else {
        Vec::new()
    };
    if !rendered.is_empty() {
        let k = rendered.len();
        let at = if unit.answers.is_some() {
            let at = content.len();
            content.extend(rendered);
            at
        } else {
            content.splice(0..0, rendered);
            extras = extras
                .into_iter()
                .map(|(i, v)| {
                    let i = i.parse::<usize>().map_or(i, |n| (n + k).to_string());
                    (i, v)
                })
                .collect();
            0
        };
        meta["rendered_attachments"] = json!((at..at + k).collect::<Vec<_>>());
    }
    if !extras.is_empty() {
        meta["block_extras"] = Value::Object(extras);
    }
    if !unit.attached.is_empty() {
        meta["attached"] = Value::Array(std::mem::take(&mut unit.attached));
    }
    let mut m = NewMessage::new(unit.role, content);
    m.meta = meta;
    m.usage = usage;
    m.created_at = created_at;
    Ok(m)
}
