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

use super::{FormatError, Parsed, Report, note, timestamp_ms};
use crate::model::{KIND_COMPACT_SUMMARY, NewMessage, Role, Usage};
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

fn parse_inner(
    path: &Path,
    input: Vec<(usize, Value)>,
    with_subagents: bool,
) -> Result<Parsed, FormatError> {
    let mut report = Report::default();
    let mut lines: Vec<Line> = Vec::new();
    let mut records: Vec<Value> = Vec::new();
    let mut title: Option<(u8, String)> = None;
    let set_title = |rank: u8, t: &str, title: &mut Option<(u8, String)>| {
        if !t.trim().is_empty() && title.as_ref().is_none_or(|(r, _)| rank >= *r) {
            *title = Some((rank, t.trim().to_string()));
        }
    };
    let mut last_prompt_leaf: Option<String> = None;
    let mut session: Option<String> = None;
    let mut version: Option<String> = None;
    for (no, v) in input {
        let no = &no;
        if session.is_none() {
            session = v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if version.is_none() {
            version = v.get("version").and_then(Value::as_str).map(str::to_string);
        }
        let ty_owned = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ty = ty_owned.as_str();
        let uuid_owned = v.get("uuid").and_then(Value::as_str).map(str::to_string);
        let uuid = uuid_owned.as_deref();
        match (ty, uuid) {
            ("user" | "assistant", Some(u)) => {
                let msg = v.get("message").and_then(Value::as_object).ok_or_else(|| {
                    FormatError::new(
                        path,
                        *no,
                        format!("{ty} line {u} has no \"message\" object"),
                    )
                })?;
                if msg.get("content").is_none() {
                    return Err(FormatError::new(
                        path,
                        *no,
                        format!("{ty} line {u} has no message.content"),
                    ));
                }
                lines.push(line(*no, v, Kind::Message, u));
            }
            // a compaction, or a microcompact (old tool results cleared from the context from here on)
            ("system", Some(u))
                if matches!(
                    v.get("subtype").and_then(Value::as_str),
                    Some("compact_boundary" | "microcompact_boundary")
                ) =>
            {
                lines.push(line(*no, v, Kind::Boundary, u));
            }
            (_, Some(u)) => {
                report.skip(format!("{ty} lines (attached as metadata)"));
                lines.push(line(*no, v, Kind::Side, u));
            }
            (_, None) => {
                match ty {
                    "summary" => {
                        if let Some(s) = v.get("summary").and_then(Value::as_str) {
                            set_title(1, s, &mut title);
                        }
                    }
                    "ai-title" => {
                        if let Some(s) = v.get("aiTitle").and_then(Value::as_str) {
                            set_title(2, s, &mut title);
                        }
                    }
                    "custom-title" => {
                        if let Some(s) = v.get("customTitle").and_then(Value::as_str) {
                            set_title(3, s, &mut title);
                        }
                    }
                    "last-prompt" => {
                        last_prompt_leaf = v
                            .get("leafUuid")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    _ => {}
                }
                let label = if ty.is_empty() { "untyped" } else { ty };
                report.skip(format!("{label} records (kept as metadata)"));
                records.push(v);
            }
        }
    }

    let by_uuid: HashMap<String, usize> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (l.uuid.clone(), i))
        .collect();
    // The nearest ancestor that is part of the conversation, skipping side lines; reports parents not in the file.
    let mut outside: Vec<String> = Vec::new();
    let conv_parent = |i: usize, outside: &mut Vec<String>| -> Option<usize> {
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
    };

    // Assistant lines are grouped by message.id; tool results go to the group whose tool_use they answer.
    let mut units: Vec<Unit> = Vec::new();
    let mut unit_of_line: Vec<Option<usize>> = vec![None; lines.len()];
    let mut group_of_msg_id: HashMap<String, usize> = HashMap::new();
    let mut group_of_tool_use: HashMap<String, usize> = HashMap::new();
    let mut results_of_group: HashMap<usize, usize> = HashMap::new();
    let mut side_parent: Vec<(usize, Option<usize>)> = Vec::new();
    for i in 0..lines.len() {
        let l = &lines[i];
        match l.kind {
            Kind::Side => {
                side_parent.push((i, conv_parent(i, &mut Vec::new())));
                continue;
            }
            Kind::Boundary => {
                let parent_line = conv_parent(i, &mut outside);
                units.push(Unit {
                    role: Role::System,
                    lines: vec![i],
                    parent_line,
                    answers: None,
                    attached: vec![],
                });
                unit_of_line[i] = Some(units.len() - 1);
            }
            Kind::Message => {
                let msg = &l.value["message"];
                let role = if l.value["type"] == "assistant" {
                    Role::Assistant
                } else {
                    Role::User
                };
                let parent_line = conv_parent(i, &mut outside);
                if role == Role::Assistant {
                    let mid = msg.get("id").and_then(Value::as_str).map(str::to_string);
                    let existing = mid.as_ref().and_then(|m| group_of_msg_id.get(m).copied());
                    let u = match existing {
                        Some(u) => {
                            units[u].lines.push(i);
                            u
                        }
                        None => {
                            units.push(Unit {
                                role,
                                lines: vec![i],
                                parent_line,
                                answers: None,
                                attached: vec![],
                            });
                            let u = units.len() - 1;
                            if let Some(m) = mid {
                                group_of_msg_id.insert(m, u);
                            }
                            u
                        }
                    };
                    unit_of_line[i] = Some(u);
                    if let Some(Value::Array(bs)) = msg.get("content") {
                        for b in bs {
                            if b.get("type").and_then(Value::as_str) == Some("tool_use")
                                && let Some(id) = b.get("id").and_then(Value::as_str)
                            {
                                group_of_tool_use.insert(id.to_string(), u);
                            }
                        }
                    }
                } else {
                    let content = msg.get("content").unwrap_or(&Value::Null);
                    let answered = if is_results_only(content) {
                        content.as_array().and_then(|bs| {
                            bs.iter()
                                .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
                                .find_map(|id| group_of_tool_use.get(id).copied())
                        })
                    } else {
                        None
                    };
                    let u = match answered {
                        Some(g) => match results_of_group.get(&g) {
                            Some(&r) => {
                                units[r].lines.push(i);
                                r
                            }
                            None => {
                                units.push(Unit {
                                    role,
                                    lines: vec![i],
                                    parent_line,
                                    answers: Some(g),
                                    attached: vec![],
                                });
                                let r = units.len() - 1;
                                results_of_group.insert(g, r);
                                r
                            }
                        },
                        None => {
                            units.push(Unit {
                                role,
                                lines: vec![i],
                                parent_line,
                                answers: None,
                                attached: vec![],
                            });
                            units.len() - 1
                        }
                    };
                    unit_of_line[i] = Some(u);
                }
            }
        }
    }
    for n in &outside {
        report.notes.push(n.clone());
    }
    // Side lines become metadata of the message they hang from (or of the conversation).
    let mut preamble: Vec<Value> = Vec::new();
    for (i, p) in side_parent {
        let v = std::mem::take(&mut lines[i].value);
        match p.and_then(|j| unit_of_line[j]) {
            Some(u) => units[u].attached.push(v),
            None => preamble.push(v),
        }
    }

    // Parent of each unit, as a unit: a reply that follows tool results hangs off the results message.
    let parent_unit = |u: usize| -> Option<usize> {
        if let Some(g) = units[u].answers {
            return Some(g);
        }
        let pl = units[u].parent_line?;
        let pu = unit_of_line[pl]?;
        if pu == u {
            return None;
        }
        Some(match results_of_group.get(&pu) {
            // A message hanging off an assistant reply whose results exist comes after those results.
            Some(&r) if units[pu].role == Role::Assistant && r != u => r,
            _ => pu,
        })
    };
    let parents: Vec<Option<usize>> = (0..units.len()).map(parent_unit).collect();
    let self_parents = (0..lines.len())
        .filter(|&i| lines[i].parent.as_deref() == Some(lines[i].uuid.as_str()))
        .count();
    if self_parents > 0 {
        report.notes.push(format!(
            "{self_parents} line(s) name themselves as parent; each became a root"
        ));
    }

    // Order: parents first, then by first line (a stable topological order).
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

    let mut messages = Vec::with_capacity(order.len());
    let mut cut = 0;
    for &u in &order {
        let message = build_message(path, &mut lines, &mut units[u])?;
        let parent = parents[u]
            .filter(|&p| {
                index_of[p] < index_of[u] || {
                    // a parent that does not come first is a cycle in the file's parentUuid links
                    cut += usize::from(p != u);
                    false
                }
            })
            .map(|p| index_of[p]);
        messages.push(ImportedMessage { parent, message });
    }

    if cut > 0 {
        report.notes.push(format!(
            "{cut} message(s) were in a parentUuid cycle; each became a root"
        ));
    }
    // The tip: the newest conversational line (or the last prompt's leaf when it names one).
    let tip_line = last_prompt_leaf
        .as_deref()
        .and_then(|l| by_uuid.get(l).copied())
        .filter(|&i| lines[i].kind != Kind::Side)
        .or_else(|| {
            (0..lines.len())
                .rev()
                .find(|&i| lines[i].kind != Kind::Side)
        });
    let tip = tip_line.and_then(|i| unit_of_line[i]).map(|u| index_of[u]);
    // A tip inside a reply whose results came later means the results are the place the session was.
    let tip = tip.map(|t| {
        let u = order[t];
        results_of_group.get(&u).map_or(t, |&r| index_of[r].max(t))
    });

    let mut meta = json!({"source": "claude-code", "records": records, "preamble": preamble});
    if let Some(s) = &session {
        meta["sessionId"] = json!(s);
    }
    if let Some(v) = &version {
        meta["harness_version"] = json!(v);
    }
    // a compact_boundary keeps the messages its metadata names (`preservedMessages`): by their depth on the path
    let depth = super::depths(&messages);
    for (k, &u) in order.iter().enumerate() {
        if units[u].role != Role::System {
            continue;
        }
        // a microcompact clears the results it names from the context from here on: those messages' large results
        // are elided, as cairn's own elision would
        if messages[k]
            .message
            .meta
            .pointer("/line/subtype")
            .and_then(Value::as_str)
            == Some("microcompact_boundary")
        {
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
            continue;
        }
        let preserved = preserved_of(&messages[k].message.meta).unwrap_or_default();
        let kept = preserved
            .iter()
            .filter_map(|uid| by_uuid.get(uid.as_str()))
            .filter_map(|&li| unit_of_line[li])
            .map(|pu| index_of[pu])
            .filter(|&i| i < k)
            .map(|i| Ref::Depth(depth[i]))
            .collect::<Vec<_>>();
        let kept = if kept.is_empty() {
            Kept::Nothing
        } else {
            Kept::Each(kept)
        };
        messages[k].message.meta["cairn"] = harness_meta("claude-code", kept, false);
    }
    let title = title.map(|t| t.1).or_else(|| super::title_of(&messages));
    let mut parsed = Parsed {
        title,
        messages,
        tip,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    };
    // Subagent transcripts: <session>/subagents/agent-*.jsonl beside the file.
    if let (true, Some(stem), Some(dir)) = (with_subagents, path.file_stem(), path.parent()) {
        let sub = dir.join(stem).join("subagents");
        if let Ok(rd) = std::fs::read_dir(&sub) {
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
        }
    }
    Ok(parsed)
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
        meta["cairn"] = json!({ "kind": KIND_COMPACT_SUMMARY });
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
