//! The session log Gemini CLI writes since it moved off one rewritten document (`chats/session-*.jsonl`, and a
//! subagent's `chats/<parent session id>/<id>.jsonl`): appended records, replayed as Gemini CLI's own
//! `loadConversationRecord` replays them. The first line is the session's metadata (`sessionId`, `projectHash`,
//! …; a file migrated from the older format may carry its messages there too). A message record (`id`, `type`,
//! `content`, …) is appended again whole each time it changes: the newest copy counts, in the place the first one
//! took. `{"$set": {…}}` updates the metadata; with `messages` it replaces the history Gemini CLI holds (a tool
//! output masked, a cancelled request rolled back, or the history compressed to a summary and the recent turns).
//! `{"$rewindTo": id}` drops that message and everything after it (`/rewind`).
//!
//! Why a tree: a rewind (or a rollback) abandons what followed, and the conversation goes on from the message before. The
//! abandoned messages stay, as the branch they were, and what came after the rewind is a sibling of them. A
//! replacement that drops messages is a compaction: a marker after the messages it replaced, keeping the ones
//! Gemini CLI still sends; the summary it wrote new before them is the marker's text, sent first, as Gemini CLI sends
//! it (were the summary a message of its own it would come after the messages kept from before it). A resume rebuilds the
//! history so too (the session's context drawn again, the results of each reply as a turn of their own, which
//! the reply's calls already hold).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{Converted, converted, session_meta};
use crate::formats::{FormatError, ImportReport, Parsed};
use crate::model::{NewMessage, Role};
use crate::reclaim::marker::{Kept, Ref, harness_meta};
use crate::store::ImportedMessage;

/// Whether these lines are a Gemini CLI session log: the first one the session's metadata.
pub fn is_log(lines: &[(usize, Value)]) -> bool {
    lines.first().is_some_and(|(_, first)| {
        first.get("sessionId").is_some_and(Value::is_string)
            && first.get("projectHash").is_some_and(Value::is_string)
    })
}

/// A message of the log, or a marker cairn placed where Gemini CLI replaced its history.
enum Kind {
    /// The newest copy of a message record.
    Record(Value),
    /// Gemini CLI replaced the history it sends, keeping these entries; a compression's summary (the records it
    /// wrote before the history it kept) is what the marker sends.
    Replaced {
        kept: Vec<usize>,
        dropped: usize,
        summary: Vec<Value>,
    },
}

struct Entry {
    kind: Kind,
    parent: Option<usize>,
}

/// The log replayed: every entry it ever held, and those the session holds now, in order.
#[derive(Default)]
struct Replay {
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    active: Vec<usize>,
    on_path: Vec<bool>,
    /// Whether Gemini CLI still holds the entry (not dropped by a replacement of its history).
    held: Vec<bool>,
    header: serde_json::Map<String, Value>,
    records: Vec<Value>,
    rewinds: usize,
    rollbacks: usize,
    replacements: usize,
    /// The ids of the records a compression's marker holds as its summary.
    folded: std::collections::HashSet<String>,
}

impl Replay {
    fn push(&mut self, kind: Kind) -> usize {
        let e = self.entries.len();
        self.entries.push(Entry {
            kind,
            parent: self.active.last().copied(),
        });
        self.on_path.push(true);
        self.held.push(true);
        self.active.push(e);
        e
    }

    /// A message record: a new one goes on after the newest; a copy replaces the one it copies, in its place (or,
    /// rewound before, goes on after the newest again).
    fn message(&mut self, v: &Value, id: &str) {
        match self.by_id.get(id).copied() {
            Some(e) => {
                self.entries[e].kind = Kind::Record(v.clone());
                self.held[e] = true;
                if !self.on_path[e] {
                    self.entries[e].parent = self.active.last().copied();
                    self.on_path[e] = true;
                    self.active.push(e);
                }
            }
            None => {
                let e = self.push(Kind::Record(v.clone()));
                self.by_id.insert(id.to_string(), e);
            }
        }
    }

    /// `$rewindTo`: the message and everything after it leave the session (all of it when the id is unknown, as
    /// Gemini CLI does).
    fn rewind(&mut self, id: &str) {
        let at = self
            .by_id
            .get(id)
            .and_then(|e| self.active.iter().position(|a| a == e))
            .unwrap_or(0);
        for e in self.active.drain(at..) {
            self.on_path[e] = false;
        }
        self.rewinds += 1;
    }

    /// `$set.messages`: the history Gemini CLI holds from now on. Where it keeps every message it held, in order,
    /// their newest content is taken and new ones go on after; where it keeps the oldest and drops the newest (a
    /// request rolled back), the dropped ones leave the path as a rewind's do; where it drops others (the history
    /// compressed), a marker after the history keeps what it still sends. What the compression wrote new before
    /// the first message it kept is its summary (Gemini CLI's: the summary as a prompt, and the model's
    /// acknowledgement): the marker holds it and sends it first, as Gemini CLI does; new ones after it go on
    /// before the marker.
    fn replace(&mut self, msgs: &[Value]) {
        let all: Vec<(&str, &Value)> = msgs
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(|id| (id, m)))
            .collect();
        // a summary a marker holds, listed again (a request rolled back after the compression), is the marker's
        let listed: Vec<(&str, &Value)> = all
            .iter()
            .copied()
            .filter(|(id, _)| !self.folded.contains(*id))
            .collect();
        let held: std::collections::HashSet<&str> = listed.iter().map(|(id, _)| *id).collect();
        let dropped: Vec<usize> = self
            .active
            .iter()
            .copied()
            .filter(|&e| match &self.entries[e].kind {
                // info, warning and error messages are never in the history Gemini CLI sends
                Kind::Record(v) => {
                    self.held[e]
                        && matches!(
                            v.get("type").and_then(Value::as_str),
                            Some("user" | "gemini" | "qwen")
                        )
                        && v.get("id")
                            .and_then(Value::as_str)
                            .is_none_or(|id| !held.contains(id))
                }
                Kind::Replaced { .. } => false,
            })
            .collect();
        let on_path = |r: &Self, id: &str| r.by_id.get(id).is_some_and(|&e| r.on_path[e]);
        // a rollback (a request cancelled or failed: Gemini CLI goes back to the history before it) keeps the
        // messages it held, in order, and drops the newest: it is a rewind
        let known: Vec<usize> = listed
            .iter()
            .filter_map(|(id, _)| self.by_id.get(*id).copied())
            .filter(|&e| self.on_path[e] && self.held[e])
            .collect();
        let place: HashMap<usize, usize> = self
            .active
            .iter()
            .enumerate()
            .map(|(i, &e)| (e, i))
            .collect();
        let newest_kept = known.iter().filter_map(|e| place.get(e)).max();
        let oldest_dropped = dropped.iter().filter_map(|e| place.get(e)).min();
        if known.len() == listed.len()
            && oldest_dropped.is_some_and(|d| newest_kept.is_none_or(|k| k < d))
        {
            for (&e, (_, m)) in known.iter().zip(&listed) {
                self.entries[e].kind = Kind::Record((*m).clone());
            }
            if let Some(&at) = oldest_dropped {
                for e in self.active.drain(at..) {
                    self.on_path[e] = false;
                }
            }
            self.rollbacks += 1;
            return;
        }
        let mut kept: Vec<usize> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut summary: Vec<Value> = Vec::new();
        let mut leading = !dropped.is_empty();
        for (id, m) in all {
            leading &= !on_path(self, id);
            if leading {
                self.folded.insert(id.to_string());
                summary.push(m.clone());
                continue;
            }
            if self.folded.contains(id) {
                continue;
            }
            let e = match self.by_id.get(id).copied().filter(|&e| self.on_path[e]) {
                Some(e) => {
                    self.entries[e].kind = Kind::Record(m.clone());
                    e
                }
                None => {
                    self.message(m, id);
                    match self.by_id.get(id) {
                        Some(&e) => e,
                        None => continue,
                    }
                }
            };
            // an id listed twice is one message
            if seen.insert(e) {
                kept.push(e);
            }
        }
        if !dropped.is_empty() {
            for &e in &dropped {
                self.held[e] = false;
            }
            self.push(Kind::Replaced {
                kept,
                dropped: dropped.len(),
                summary,
            });
            self.replacements += 1;
        }
    }

    /// The session's metadata updated, and the history it holds where it names one (`messages`).
    fn update(&mut self, set: &serde_json::Map<String, Value>) {
        if let Some(msgs) = set.get("messages").and_then(Value::as_array) {
            self.replace(msgs);
        }
        for (k, x) in set.iter().filter(|(k, _)| *k != "messages") {
            self.header.insert(k.clone(), x.clone());
        }
    }

    fn line(&mut self, v: &Value, report: &mut ImportReport) {
        if let Some(id) = v.get("$rewindTo").and_then(Value::as_str) {
            self.rewind(id);
        } else if let Some(set) = v.get("$set").and_then(Value::as_object) {
            self.update(set);
        } else if let Some(id) = v.get("id").and_then(Value::as_str) {
            self.message(v, id);
        } else if let Some(o) = v
            .as_object()
            .filter(|o| o.contains_key("sessionId") && o.contains_key("projectHash"))
        {
            // the metadata (a migrated file's first line may hold the older format's whole document)
            self.update(o);
        } else {
            report.skip("unrecognized records (kept as metadata)");
            self.records.push(v.clone());
        }
    }
}

/// Each entry's depth in the tree; an entry whose parents loop (never written so) becomes a root.
fn depths(entries: &mut [Entry]) -> Vec<usize> {
    let mut depth: Vec<Option<usize>> = vec![None; entries.len()];
    for start in 0..entries.len() {
        let mut chain = Vec::new();
        let mut at = Some(start);
        while let Some(e) = at {
            if depth[e].is_some() {
                break;
            }
            if chain.contains(&e) {
                entries[e].parent = None;
                break;
            }
            chain.push(e);
            at = entries[e].parent;
        }
        for &e in chain.iter().rev() {
            depth[e] = Some(
                entries[e]
                    .parent
                    .and_then(|p| depth[p])
                    .map_or(0, |d| d + 1),
            );
        }
    }
    depth.into_iter().map(|d| d.unwrap_or(0)).collect()
}

/// Each marker (at its message) keeps the messages of the entries Gemini CLI still sends, by their depth on its
/// path, and sends its own text where it holds a compression's summary.
fn keep(
    out: &mut [ImportedMessage],
    markers: Vec<(usize, Vec<usize>, bool)>,
    of_entry: &[Vec<usize>],
) {
    let at_depth = crate::formats::depths(out);
    for (k, kept, sends_text) in markers {
        let refs: Vec<Ref> = kept
            .iter()
            .flat_map(|&e| of_entry[e].iter().copied())
            .filter(|&i| i < k)
            .map(|i| Ref::Depth(at_depth[i]))
            .collect();
        let kept = if refs.is_empty() {
            Kept::Nothing
        } else {
            Kept::Each(refs)
        };
        out[k].message.meta["cairn"] = harness_meta("gemini-cli", kept, sends_text);
    }
}

/// The marker for a replaced history: it sends the compression's summary where there is one (and says so), else
/// it is a note of what was dropped and kept.
fn replaced(kept: usize, dropped: usize, summary: &[Value]) -> (NewMessage, bool) {
    let text = format!(
        "Gemini CLI rebuilt the history it sends: {dropped} message(s) dropped, {kept} kept"
    );
    let sent = summary_blocks(summary);
    // the summary's records by id (their text is the marker's)
    let ids: Vec<&Value> = summary.iter().filter_map(|r| r.get("id")).collect();
    let meta = json!({"source": "gemini-cli", "note": text, "summary_records": ids});
    if sent.is_empty() {
        return (crate::formats::note(Role::System, text, meta), false);
    }
    let mut m = NewMessage::new(Role::System, sent);
    m.meta = meta;
    (m, true)
}

/// What a compression's summary records send: the prompts' text and images (the model's acknowledgement of them is
/// Gemini CLI's own line, not counted).
fn summary_blocks(records: &[Value]) -> Vec<crate::model::Block> {
    records
        .iter()
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("user"))
        .flat_map(|r| super::prompt_blocks(r.get("content")))
        .filter(|b| !matches!(b, crate::model::Block::Text { text } if text.trim().is_empty()))
        .collect()
}

pub fn parse(path: &Path, lines: &[(usize, Value)]) -> Result<Parsed, FormatError> {
    if !is_log(lines) {
        return Err(FormatError::new(
            path,
            lines.first().map_or(1, |l| l.0),
            "not a Gemini CLI session log (its first line names no sessionId and projectHash)",
        ));
    }
    let mut report = ImportReport::default();
    let mut r = Replay::default();
    for (_, v) in lines {
        r.line(v, &mut report);
    }
    let mut entries = std::mem::take(&mut r.entries);
    let depth = depths(&mut entries);
    // parents before children: by depth, then as the log first wrote them
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&e| (depth[e], e));
    // each entry's messages (the last of them is what its children follow), and a marker's place
    let mut last_of: Vec<Option<usize>> = vec![None; entries.len()];
    let mut of_entry: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut out: Vec<ImportedMessage> = Vec::new();
    let mut markers: Vec<(usize, Vec<usize>, bool)> = Vec::new();
    for &e in &order {
        let parent = entries[e].parent.and_then(|p| last_of[p]);
        let built: Vec<NewMessage> = match &entries[e].kind {
            Kind::Record(v) => match converted(v, out.len()) {
                Converted::Messages(ms) => ms,
                Converted::Note(kind) => {
                    report.skip(kind);
                    r.records.push(v.clone());
                    Vec::new()
                }
            },
            Kind::Replaced {
                kept,
                dropped,
                summary,
            } => {
                let (m, sends_text) = replaced(kept.len(), *dropped, summary);
                markers.push((out.len(), kept.clone(), sends_text));
                vec![m]
            }
        };
        let mut p = parent;
        for m in built {
            of_entry[e].push(out.len());
            out.push(ImportedMessage {
                parent: p,
                message: m,
            });
            p = Some(out.len() - 1);
        }
        last_of[e] = p;
    }
    keep(&mut out, markers, &of_entry);
    if out.is_empty() {
        // a session just begun (its metadata, nothing said yet): read once something is
        return Err(FormatError::empty(
            path,
            lines.last().map_or(1, |l| l.0),
            "nothing to import: the Gemini CLI session holds no messages yet",
        ));
    }
    let tip = r
        .active
        .iter()
        .rev()
        .find_map(|&e| last_of[e])
        .or_else(|| out.len().checked_sub(1));
    for (n, what) in [
        (
            r.rewinds,
            "rewind(s): what each abandoned is kept as a branch",
        ),
        (
            r.rollbacks,
            "request(s) Gemini CLI rolled back (cancelled or failed): what each dropped is kept as a branch",
        ),
        (
            r.replacements,
            "time(s) Gemini CLI rebuilt its history (a compression, or a resume): a compaction marker each",
        ),
    ] {
        if n > 0 {
            report.notes.push(format!("{n} {what}"));
        }
    }
    let meta = session_meta(Value::Object(r.header), r.records);
    Ok(Parsed {
        title: crate::formats::title_of(&out),
        messages: out,
        tip,
        checkpoints: Vec::new(),
        meta,
        report,
        children: Vec::new(),
    })
}
