//! pi coding agent session JSONL, versions 1 (linear, no ids), 2 and 3 (an id/parentId tree), and format 4 (the
//! same entries committed as transactions, read through `format4`); oh-my-pi's files too (a padded `title` line
//! before the header).
//!
//! Entries that are not messages (model and thinking-level changes, labels, session info, custom data) sit in the
//! same parent chain; they are kept as metadata of the message they follow, so the tree cairn builds holds only
//! what the model saw plus compaction markers and branch summaries. `label` entries become checkpoints,
//! `session_info` the title.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{FormatError, ImportReport, Parsed, timestamp_ms};
use crate::model::{Block, NewMessage, Role, ToolResultContent, Usage};
use crate::reclaim::marker::{Kept, Ref, harness_meta};
use crate::store::ImportedMessage;

mod format4;
pub(crate) use format4::is_header as is_format4_header;

/// When pi began leaving a reply that stopped on an error or was aborted out of the requests after it: its 0.49.2
/// release (2026-01-19, "replaying aborted turns"); a reply recorded before was sent again.
const PI_SKIPS_FAILED_REPLIES_SINCE: i64 = 1_768_780_800_000;

/// How pi sends its summaries to the model (`packages/coding-agent/src/core/messages.ts`): the text a marker or
/// digest is stored with, so what is counted is what was sent.
pub(crate) const COMPACTION_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub(crate) const COMPACTION_SUFFIX: &str = "\n</summary>";
/// The `customType` of the message cairn writes after a compaction it hands to pi, holding what pi cannot put in
/// the compaction's summary text (a snapshot's pages, another harness's summary message).
pub(crate) const SNAPSHOT_TYPE: &str = "cairn-compaction";
const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUFFIX: &str = "</summary>";

struct Entry {
    no: usize,
    value: Value,
    id: String,
    parent: Option<String>,
    /// Index in the output messages, for entries that become messages.
    message: Option<usize>,
}

/// A file's header, oh-my-pi's title line and its entries, each with its id and parent.
struct Entries {
    header: Option<Value>,
    /// oh-my-pi's title line, padded so it can be rewritten in place, comes before the header.
    padded_title: Option<String>,
    list: Vec<Entry>,
    by_id: HashMap<String, usize>,
}

fn read_entries(input: &[(usize, Value)]) -> Entries {
    let mut header: Option<Value> = None;
    let mut list: Vec<Entry> = Vec::new();
    let mut linear = false;
    let mut padded_title: Option<String> = None;
    for (k, (no, v)) in input.iter().enumerate() {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "title" && header.is_none() {
            padded_title = v
                .get("title")
                .or_else(|| v.get("name"))
                .and_then(Value::as_str)
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty());
            continue;
        }
        if ty == "session" && header.is_none() {
            linear = v.get("version").and_then(Value::as_u64).unwrap_or(1) < 2;
            header = Some(v.clone());
            continue;
        }
        let id = v.get("id").and_then(Value::as_str).map(str::to_string);
        let (id, parent) = match id {
            Some(id) if !linear => (
                id,
                v.get("parentId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ),
            // v1: no ids; each entry follows the one before
            _ => (format!("#{k}"), list.last().map(|e: &Entry| e.id.clone())),
        };
        list.push(Entry {
            no: *no,
            value: v.clone(),
            id,
            parent,
            message: None,
        });
    }
    let by_id = list
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), i))
        .collect();
    Entries {
        header,
        padded_title,
        list,
        by_id,
    }
}

/// The tree built from the entries: the messages, each one's depth, and what the other entries said.
#[derive(Default)]
struct Tree {
    messages: Vec<ImportedMessage>,
    depth: Vec<usize>,
    /// `label` entries: (line, target id, label).
    labels: Vec<(usize, String, Option<String>)>,
    title: Option<String>,
    /// Entries before any message, kept on the conversation.
    records: Vec<Value>,
    /// Entries that are not messages, kept on the message they follow.
    attached: HashMap<usize, Vec<Value>>,
}

/// The nearest ancestor of entry `i` that became a message (None: the entry is a root; a parent missing from the
/// file or a cycle of parents is reported).
fn parent_message(entries: &Entries, i: usize, report: &mut ImportReport) -> Option<usize> {
    let list = &entries.list;
    let mut p = list[i].parent.clone();
    let mut steps = 0;
    while let Some(pid) = p {
        match entries.by_id.get(&pid) {
            Some(&j) => {
                if let Some(m) = list[j].message {
                    return Some(m);
                }
                p = list[j].parent.clone();
            }
            None => {
                report.notes.push(format!(
                    "line {}: parent {pid} is not in this file; the entry becomes a root",
                    list[i].no
                ));
                return None;
            }
        }
        steps += 1;
        if steps > list.len() {
            report.notes.push(format!(
                "line {}: its parentId links form a cycle; the entry becomes a root",
                list[i].no
            ));
            return None;
        }
    }
    None
}

/// A `compaction` entry as its marker: what it kept is the messages from the first kept entry (v2+: an id; v1: an
/// index into the file's entries, the header being entry 0) up to itself, on its path.
fn compaction(entries: &Entries, tree: &Tree, i: usize) -> NewMessage {
    let v = &entries.list[i].value;
    let summary = v.get("summary").and_then(Value::as_str).unwrap_or_default();
    let first = match v.get("firstKeptEntryId").and_then(Value::as_str) {
        Some(id) => Some(id.to_string()),
        None => v
            .get("firstKeptEntryIndex")
            .and_then(Value::as_u64)
            .map(|k| format!("#{k}")),
    };
    let kept = first
        .and_then(|f| first_kept(&entries.list, &entries.by_id, i, &f))
        .map_or(Kept::Nothing, |m| Kept::From(Ref::Depth(tree.depth[m])));
    let mut m = NewMessage::text(
        Role::System,
        format!("{COMPACTION_PREFIX}{summary}{COMPACTION_SUFFIX}"),
    );
    m.meta = json!({"source": "pi", "entry": v, "cairn": harness_meta("pi", kept, true)});
    m
}

/// A `custom_message` entry; the pages cairn wrote after a compaction it handed to pi are that compaction's
/// summary.
fn custom_message(path: &Path, no: usize, v: &Value) -> Result<NewMessage, FormatError> {
    let mut entry = v.clone();
    let content = entry
        .as_object_mut()
        .and_then(|o| o.remove("content"))
        .unwrap_or(Value::Null);
    let blocks = pi_blocks(path, no, &content)?;
    let mut m = NewMessage::new(Role::User, blocks);
    let pages = entry.get("customType").and_then(Value::as_str) == Some(SNAPSHOT_TYPE);
    m.meta = json!({"source": "pi", "entry": entry});
    if pages {
        m.meta["cairn"] = crate::model::CairnMeta::CompactSummary.to_value();
    }
    Ok(m)
}

/// The message entry `i` becomes, if it becomes one (labels and the session's name are noted on the tree).
fn build_entry(
    path: &Path,
    entries: &Entries,
    tree: &mut Tree,
    i: usize,
    report: &mut ImportReport,
) -> Result<Option<NewMessage>, FormatError> {
    let (no, v) = (entries.list[i].no, &entries.list[i].value);
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    Ok(match ty {
        "message" => message(path, no, v)?,
        "compaction" => Some(compaction(entries, tree, i)),
        "branch_summary" => {
            let summary = v.get("summary").and_then(Value::as_str).unwrap_or_default();
            let mut m = NewMessage::text(
                Role::User,
                format!("{BRANCH_PREFIX}{summary}{BRANCH_SUFFIX}"),
            );
            m.meta = json!({"source": "pi", "entry": v, "cairn": crate::model::CairnMeta::HarnessDigest {
                harness: "pi",
                entry: "branch_summary",
            }
            .to_value()});
            Some(m)
        }
        "custom_message" => Some(custom_message(path, no, v)?),
        "context_edit" => context_edit(
            path,
            &entries.list,
            &entries.by_id,
            &tree.depth,
            &tree.messages,
            i,
            report,
        )?,
        "label" => {
            tree.labels.push((
                no,
                v.get("targetId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                v.get("label").and_then(Value::as_str).map(str::to_string),
            ));
            None
        }
        "session_info" => {
            if let Some(n) = v.get("name").and_then(Value::as_str) {
                tree.title = Some(n.to_string());
            }
            None
        }
        _ => None,
    })
}

/// Every entry in file order: a message where it becomes one, else metadata of the message it follows.
fn build_tree(
    path: &Path,
    entries: &mut Entries,
    report: &mut ImportReport,
) -> Result<Tree, FormatError> {
    let mut tree = Tree::default();
    for i in 0..entries.list.len() {
        let parent_msg = parent_message(entries, i, report);
        let built = build_entry(path, entries, &mut tree, i, report)?;
        let v = &entries.list[i].value;
        match built {
            Some(mut m) => {
                m.created_at = m.created_at.or_else(|| timestamp_ms(v.get("timestamp")));
                tree.depth.push(parent_msg.map_or(0, |p| tree.depth[p] + 1));
                tree.messages.push(ImportedMessage {
                    parent: parent_msg,
                    message: m,
                });
                entries.list[i].message = Some(tree.messages.len() - 1);
            }
            None => {
                let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
                report.skip(format!(
                    "{} entries (kept as metadata)",
                    if ty.is_empty() { "untyped" } else { ty }
                ));
                match parent_msg {
                    Some(m) => tree.attached.entry(m).or_default().push(v.clone()),
                    None => tree.records.push(v.clone()),
                }
            }
        }
    }
    for (m, attached) in std::mem::take(&mut tree.attached) {
        if let Some(im) = tree.messages.get_mut(m) {
            if !im.message.meta.is_object() {
                im.message.meta = json!({});
            }
            im.message.meta["attached"] = Value::Array(attached);
        }
    }
    Ok(tree)
}

/// Labels: the last one for a label wins; an empty label clears it. Targets that are not messages are resolved to
/// the nearest message ancestor; a target not in the file is dropped (never clamped elsewhere).
fn checkpoints_of(
    labels: Vec<(usize, String, Option<String>)>,
    entries: &Entries,
    report: &mut ImportReport,
) -> Vec<(String, usize)> {
    let mut current: Vec<(String, usize)> = Vec::new();
    for (no, target, label) in labels {
        let msg = entries
            .by_id
            .get(&target)
            .and_then(|&j| nearest_message(&entries.list, &entries.by_id, j));
        match (label, msg) {
            (Some(l), Some(m)) if !l.is_empty() => {
                current.retain(|(x, _)| x != &l);
                current.push((l, m));
            }
            (None, Some(m)) | (Some(_), Some(m)) => current.retain(|(_, t)| *t != m),
            (_, None) => report.notes.push(format!(
                "line {no}: label target {target} is not a message in this file"
            )),
        }
    }
    current
}

pub fn parse(path: &Path, input: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let flat = format4::flatten(input);
    let input: &[(usize, Value)] = flat.as_ref().map_or(input, |f| &f.entries);
    let mut entries = read_entries(input);
    let mut tree = build_tree(path, &mut entries, &mut report)?;
    let checkpoints = checkpoints_of(std::mem::take(&mut tree.labels), &entries, &mut report);
    let (list, by_id) = (&entries.list, &entries.by_id);
    // The leaf is the one format 4 names, else the last entry; the tip is its nearest message.
    let named_leaf = flat
        .as_ref()
        .and_then(|f| f.leaf.as_ref())
        .and_then(|l| by_id.get(l))
        .and_then(|&j| nearest_message(list, by_id, j));
    let tip = named_leaf.or_else(|| {
        (0..list.len())
            .rev()
            .find_map(|i| nearest_message(list, by_id, i))
    });
    let messages = tree.messages;
    let title = flat
        .as_ref()
        .and_then(|f| f.title.clone())
        .or(tree.title)
        .or(entries.padded_title)
        .or_else(|| super::title_of(&messages));
    let mut meta = json!({"source": "pi", "records": tree.records});
    if let Some(f) = flat {
        if !f.usage.is_empty() {
            report.notes.push(format!(
                "{} request(s) outside the conversation (usage rows, such as cache warming) are kept as records, \
                 not as context",
                f.usage.len()
            ));
            meta["usage_rows"] = Value::Array(f.usage);
        }
        if !f.records.is_empty() {
            meta["writes"] = Value::Array(f.records);
        }
    }
    if let Some(h) = entries.header {
        meta["header"] = h;
    }
    Ok(Parsed {
        title,
        messages,
        tip,
        checkpoints,
        meta,
        report,
        children: Vec::new(),
    })
}

/// A `context_edit` entry (pi 0.87): the marker that leaves its target out of the context from here on, or sends
/// it with the replacement content, the history untouched. None (kept as metadata, with a note) when its target is
/// not a message read before it.
fn context_edit(
    path: &Path,
    entries: &[Entry],
    by_id: &HashMap<String, usize>,
    depth: &[usize],
    messages: &[ImportedMessage],
    i: usize,
    report: &mut ImportReport,
) -> Result<Option<NewMessage>, FormatError> {
    let (no, v) = (entries[i].no, &entries[i].value);
    let target = v
        .get("targetId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(m) = by_id.get(target).and_then(|&j| entries[j].message) else {
        report.notes.push(format!(
            "line {no}: context_edit target {target:?} is not a message read before it; the edit is kept as metadata"
        ));
        return Ok(None);
    };
    let replacement = match v.get("replacement") {
        None | Some(Value::Null) => None,
        Some(r) => {
            let content = r.get("content").cloned().unwrap_or(Value::Null);
            // images in a replacement become notes: the marker holds text, not blobs
            let blocks: Vec<Block> = pi_blocks(path, no, &content)?
                .into_iter()
                .map(|b| match b {
                    Block::Image { .. } => Block::text("[image]"),
                    b => b,
                })
                .collect();
            // a tool result's replacement is still that call's result
            let result = messages[m].message.content.iter().find_map(|b| match b {
                Block::ToolResult {
                    tool_use_id,
                    is_error,
                    ..
                } => Some((tool_use_id.clone(), *is_error)),
                _ => None,
            });
            Some(match result {
                Some((tool_use_id, is_error)) => vec![Block::ToolResult {
                    tool_use_id,
                    content: ToolResultContent::Blocks(blocks),
                    is_error,
                }],
                None => blocks,
            })
        }
    };
    let what = if replacement.is_some() {
        "pi sends an earlier message with other content from here on"
    } else {
        "pi leaves an earlier message out of the context from here on"
    };
    let mut nm = NewMessage::text(Role::System, what);
    nm.meta = json!({"source": "pi", "entry": v, "cairn": crate::reclaim::marker::Marker::Edit {
        at: Ref::Depth(depth[m]),
        replacement,
    }
    .to_meta(&|_| None)});
    Ok(Some(nm))
}

/// The first message a compaction at entry `at` kept: walking its path back to the entry `first`, the earliest
/// message at or after it (pi keeps every message entry from `first` on, `first` itself included when it is one).
fn first_kept(
    entries: &[Entry],
    by_id: &HashMap<String, usize>,
    at: usize,
    first: &str,
) -> Option<usize> {
    let mut earliest = None;
    let mut k = entries[at]
        .parent
        .as_ref()
        .and_then(|p| by_id.get(p).copied());
    let mut steps = 0;
    while let Some(x) = k {
        if let Some(m) = entries[x].message {
            earliest = Some(m);
        }
        if entries[x].id == first {
            return earliest;
        }
        k = entries[x]
            .parent
            .as_ref()
            .and_then(|p| by_id.get(p).copied());
        steps += 1;
        if steps > entries.len() {
            break;
        }
    }
    None
}

/// The message an entry is, or the nearest ancestor that is one (labels and settings are not messages).
fn nearest_message(
    entries: &[Entry],
    by_id: &HashMap<String, usize>,
    from: usize,
) -> Option<usize> {
    let mut k = Some(from);
    let mut steps = 0;
    while let Some(x) = k {
        if let Some(m) = entries[x].message {
            return Some(m);
        }
        k = entries[x]
            .parent
            .as_ref()
            .and_then(|p| by_id.get(p).copied());
        steps += 1;
        if steps > entries.len() {
            return None;
        }
    }
    None
}

/// A `message` entry as sent to the model; None for one pi keeps out of the context (a `bashExecution` run with
/// `!!`).
fn message(path: &Path, no: usize, entry: &Value) -> Result<Option<NewMessage>, FormatError> {
    let mut m = entry
        .get("message")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| FormatError::new(path, no, "message entry without a \"message\" object"))?;
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let content = m.remove("content").unwrap_or(Value::Null);
    let created_at =
        timestamp_ms(m.get("timestamp")).or_else(|| timestamp_ms(entry.get("timestamp")));
    let mut envelope = entry.clone();
    if let Some(o) = envelope.as_object_mut() {
        o.insert("message".into(), Value::Object(m.clone()));
    }
    let mut meta = json!({"source": "pi", "entry": envelope});
    let (role, blocks) = match role.as_str() {
        "user" => (Role::User, pi_blocks(path, no, &content)?),
        "assistant" => {
            if matches!(
                m.get("stopReason").and_then(Value::as_str),
                Some("error" | "aborted")
            ) {
                // pi leaves such a reply out of every request after it since 0.49.2 (2026-01-19, its
                // `transformMessages`); before, it sent it again (the sessions' own measurements say so)
                let sent_again = created_at.is_some_and(|t| t < PI_SKIPS_FAILED_REPLIES_SINCE);
                meta["cairn"] = crate::model::CairnMeta::Failed { sent_again }.to_value();
            }
            (Role::Assistant, pi_blocks(path, no, &content)?)
        }
        "toolResult" => {
            let id = m
                .get("toolCallId")
                .and_then(Value::as_str)
                .ok_or_else(|| FormatError::new(path, no, "toolResult without \"toolCallId\""))?;
            let inner = pi_blocks(path, no, &content)?;
            (
                Role::Tool,
                vec![Block::ToolResult {
                    tool_use_id: id.to_string(),
                    content: ToolResultContent::Blocks(inner),
                    is_error: m.get("isError").and_then(Value::as_bool).unwrap_or(false),
                }],
            )
        }
        "bashExecution" => {
            if m.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
                return Ok(None);
            }
            (Role::User, vec![Block::text(bash_text(&m))])
        }
        "compactionSummary" | "branchSummary" | "custom" => {
            let text = m.get("summary").and_then(Value::as_str).map(str::to_string);
            let blocks = match text {
                Some(t) => vec![Block::text(t)],
                None => pi_blocks(path, no, &content)?,
            };
            (Role::User, blocks)
        }
        other => {
            return Err(FormatError::new(
                path,
                no,
                format!("unknown message role {other:?}"),
            ));
        }
    };
    let extras = pi_extras(&content);
    if !extras.is_empty() {
        meta["block_extras"] = Value::Object(extras);
    }
    let usage = m.get("usage").map(|u| Usage {
        input_tokens: u.get("input").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u.get("output").and_then(Value::as_u64).unwrap_or(0),
        cache_read_input_tokens: u.get("cacheRead").and_then(Value::as_u64).unwrap_or(0),
        cache_creation_input_tokens: u.get("cacheWrite").and_then(Value::as_u64).unwrap_or(0),
        ..Usage::default()
    });
    let mut nm = NewMessage::new(role, blocks);
    nm.meta = meta;
    nm.usage = usage;
    nm.created_at = created_at;
    Ok(Some(nm))
}

/// A `bashExecution` as pi sends it (`bashExecutionToText`).
fn bash_text(m: &Map<String, Value>) -> String {
    let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut t = format!("Ran `{}`\n", s("command"));
    if s("output").is_empty() {
        t.push_str("(no output)");
    } else {
        t.push_str(&format!("```\n{}\n```", s("output")));
    }
    if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
        t.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m
        .get("exitCode")
        .and_then(Value::as_i64)
        .filter(|c| *c != 0)
    {
        t.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if m.get("truncated").and_then(Value::as_bool) == Some(true)
        && let Some(p) = m.get("fullOutputPath").and_then(Value::as_str)
    {
        t.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
    }
    t
}

/// The fields of each pi block type cairn models; anything else on a block (a text's `textSignature`, ...) is kept
/// in the message's `meta.block_extras`, never inside the block a provider is sent.
const PI_KEYS: &[(&str, &[&str])] = &[
    ("text", &["type", "text"]),
    (
        "thinking",
        &["type", "thinking", "thinkingSignature", "signature"],
    ),
    ("toolCall", &["type", "id", "name", "arguments"]),
    ("image", &["type", "data", "mimeType"]),
];

/// The extra fields of pi blocks, by block index: `{index: {field: value}}`.
fn pi_extras(content: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for (i, b) in content.as_array().into_iter().flatten().enumerate() {
        let Some(o) = b.as_object() else { continue };
        let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
        let Some((_, keys)) = PI_KEYS.iter().find(|(t, _)| *t == ty) else {
            continue;
        };
        let extra: Map<String, Value> = o
            .iter()
            .filter(|(k, _)| !keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !extra.is_empty() {
            out.insert(i.to_string(), Value::Object(extra));
        }
    }
    out
}

/// pi content: a string or blocks (text, thinking, toolCall, image with data/mimeType).
fn pi_blocks(path: &Path, no: usize, content: &Value) -> Result<Vec<Block>, FormatError> {
    let items = match content {
        Value::String(s) => return Ok(vec![Block::text(s.clone())]),
        Value::Null => return Ok(Vec::new()),
        Value::Array(a) => a,
        _ => {
            return Err(FormatError::new(
                path,
                no,
                "content must be a string or an array",
            ));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for b in items {
        let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
        let s = |k: &str| b.get(k).and_then(Value::as_str).map(str::to_string);
        out.push(match ty {
            "text" if b.get("text").is_some_and(Value::is_string) => {
                Block::text(s("text").unwrap_or_default())
            }
            "thinking" => Block::Thinking {
                thinking: s("thinking").unwrap_or_default(),
                signature: s("thinkingSignature").or_else(|| s("signature")),
            },
            "toolCall" => Block::ToolUse {
                id: s("id").ok_or_else(|| FormatError::new(path, no, "toolCall without \"id\""))?,
                name: s("name").unwrap_or_default(),
                input: b
                    .get("arguments")
                    .cloned()
                    .unwrap_or(Value::Object(Map::new())),
            },
            "image" => match s("data") {
                Some(d) => crate::model::image::from_base64(
                    s("mimeType").as_deref().unwrap_or("image/png"),
                    &d,
                )
                .map_err(|e| FormatError::new(path, no, format!("image: {e}")))?,
                None => super::unknown_block(b),
            },
            _ => super::unknown_block(b),
        });
    }
    Ok(out)
}
