//! Importing files: walks the given paths, reads each transcript with [`crate::formats`], and writes each file's
//! conversations in one transaction (all or nothing per file). A file already imported (same content hash) is
//! reported, not duplicated; a session the store holds gets only what it lacks; a file that only grew since it was
//! read is read from where that read stopped (`import/tail.rs`).

mod forks;
mod tail;

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::formats::{self, Format, ImportReport};
use crate::store::{Store, StoreError};

/// What happened to one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileOutcome {
    /// The file (a name that is not UTF-8 is written with replacement characters in JSON).
    #[serde(serialize_with = "lossy_path")]
    pub file: PathBuf,
    pub format: Option<Format>,
    /// New conversation ids: the session first, then linked ones (subagents).
    pub conversations: Vec<String>,
    pub report: ImportReport,
    /// Reports of the linked conversations, in the same order as `conversations[1..]`.
    pub linked: Vec<ImportReport>,
    /// Set when the file was not imported: already imported, or refused (with `FILE:LINE: reason`).
    pub error: Option<String>,
    pub duplicate_of: Option<String>,
    /// `new` (a session the store did not hold), `grown` (one it held, with messages added: `added`),
    /// `unchanged` (one it held whole), `refused`, or `skipped` (a file a folder walk found that holds no session:
    /// no reader claims it, or its reader finds nothing in it; `error` says why; nothing was written and the import
    /// does not fail for it).
    pub status: &'static str,
    /// Messages added to conversations the store already held (grown sessions).
    pub added: usize,
    /// Where the file was read from, when only what it gained since the last import was read (the byte the
    /// last import stopped at); `None` when it was read whole.
    pub read_from: Option<u64>,
    /// Set when the file was refused because it holds no session (see [`formats::FormatError::not_a_transcript`]):
    /// a folder walk reports it as `skipped`.
    #[serde(skip)]
    pub not_a_transcript: bool,
}

/// The status of a file a folder walk found that holds no session.
pub const SKIPPED: &str = "skipped";

impl FileOutcome {
    /// Whether the file was refused (its error says why); a file already imported, or one a folder walk found that
    /// holds no session, carries its reason in `error` too but is not refused.
    pub fn is_refused(&self) -> bool {
        self.error.is_some() && self.duplicate_of.is_none() && !self.is_skipped()
    }

    /// Whether a folder walk found the file and skipped it: it holds no session.
    pub fn is_skipped(&self) -> bool {
        self.status == SKIPPED
    }
}

fn lossy_path<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// Files to import under `paths`: files as given, except that a file another present file reads with it (a
/// subagent, a sidecar: [`read_with`]) is replaced by that file; folders recursively (`.jsonl`, `.json` and
/// SWE-agent `.traj` files, skipping the files read with another in the folder, and taking the one they are read
/// with where it is outside it: an OpenHands conversation's `events/` given alone). Each file once, however often
/// it was named.
///
/// A folder is walked once per real folder: a symbolic link to a folder is followed only when it stays inside the
/// folder being imported and leads somewhere not yet walked (so `..` links and loops end), and only regular files
/// are taken (a FIFO named `*.jsonl` would block the import).
pub fn collect(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    Ok(collect_named(paths)?.files)
}

/// The files to import, and how each was found.
#[derive(Debug, Default)]
pub struct Collected {
    /// Each file once, in the order found.
    pub files: Vec<PathBuf>,
    /// Each file named that is imported as another: (the file imported, the file named).
    pub named: Vec<(PathBuf, PathBuf)>,
    /// The files only a folder walk found (none of them named): one that holds no session is skipped, not refused
    /// (a harness's settings, credentials or caches beside its sessions: `cairn import ~/.claude`).
    pub walked: std::collections::HashSet<PathBuf>,
}

/// [`collect`], with how each file was found.
pub fn collect_named(paths: &[PathBuf]) -> std::io::Result<Collected> {
    let mut out = Vec::new();
    let mut named = Vec::new();
    let mut walked = std::collections::HashSet::new();
    let mut given = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            let root = std::fs::canonicalize(p)?;
            let mut seen = std::collections::HashSet::new();
            seen.insert(root.clone());
            let mut mains = std::collections::HashSet::new();
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .collect();
                entries.sort();
                for e in entries {
                    let Ok(meta) = std::fs::metadata(&e) else {
                        continue; // a dangling link
                    };
                    if meta.is_dir() {
                        if let Ok(real) = std::fs::canonicalize(&e)
                            && real.starts_with(&root)
                            && seen.insert(real)
                        {
                            stack.push(e);
                        }
                    } else if let Some(store) = (meta.is_file())
                        .then(|| {
                            formats::stores::STORES
                                .iter()
                                .find(|s| e.file_name().is_some_and(|n| n == s.file_name))
                        })
                        .flatten()
                        .filter(|s| (s.is_db)(&e))
                    {
                        // a harness's store (opencode, Goose, Zed): each of its sessions
                        let sessions = (store.sessions)(&e).map_err(std::io::Error::other)?;
                        walked.extend(sessions.iter().cloned());
                        out.extend(sessions);
                    } else if meta.is_file()
                        && is_transcript_name(&e)
                        && !formats::opencode::storage::is_stored_piece(&e)
                        && !formats::kimi_cli::is_bookkeeping(&e)
                        && !formats::trajectories::is_predictions(&e)
                    {
                        match read_with(&e) {
                            None => {
                                walked.insert(e.clone());
                                out.push(e);
                            }
                            // a file read with one outside the folder (an OpenHands conversation's `events/`
                            // given alone): that one is imported; one inside is found by the walk itself
                            // (a conversation's thousands of events are one file: decided once)
                            Some(main) if mains.insert(main.clone()) => {
                                let main = main_file(&main);
                                if !std::fs::canonicalize(&main).is_ok_and(|m| m.starts_with(&root))
                                {
                                    walked.insert(main.clone());
                                    out.push(main);
                                }
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
        } else if let Some(store) = formats::stores::store_of(p) {
            let sessions = (store.sessions)(p).map_err(std::io::Error::other)?;
            given.extend(sessions.iter().cloned());
            out.extend(sessions);
        } else {
            let main = main_file(p);
            if main != *p {
                named.push((main.clone(), p.clone()));
            }
            given.insert(main.clone());
            out.push(main);
        }
    }
    // a file named twice (given, and found in a folder also given; or read with another given) is read once
    let real = |f: &PathBuf| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
    let given: std::collections::HashSet<PathBuf> = given.iter().map(real).collect();
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| seen.insert(real(f)));
    walked.retain(|f| !given.contains(&real(f)));
    Ok(Collected {
        files: out,
        named,
        walked,
    })
}

/// The file a file given by name is imported as: itself, or the file that reads it ([`read_with`], followed: a
/// subagent's `.meta.json` to its transcript to its session).
pub fn main_file(p: &Path) -> PathBuf {
    let mut file = p.to_path_buf();
    for _ in 0..4 {
        match read_with(&file) {
            Some(main) => file = main,
            None => break,
        }
    }
    file
}

fn is_transcript_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name.ends_with(".jsonl")
        || name.ends_with(".json")
        || name.ends_with(".traj")
        || name.ends_with(".aider.chat.history.md"))
        && !name.ends_with(".meta.json")
}

/// The file `p` is read with, when that file is present: a Claude Code subagent's session
/// (`<session>/subagents/agent-x.jsonl` with `<session>.jsonl` beside `<session>/`, Claude Code 2.1; or
/// `agent-<8hex>.jsonl` beside `<sessionId>.jsonl`, 2.0), a subagent's `.meta.json`'s transcript, a Cline task's
/// `ui_messages.json` or `task_metadata.json`'s history, an OpenHands event's conversation state (a subagent's
/// state, its parent's), Aider's input and LLM logs' chat history, a spawned Codex agent's parent rollout.
/// Importing `p` means importing that file, which reads `p` with it: so a session is never imported twice, once
/// whole and once as its subagent on its own (a shell glob that names both).
pub fn read_with(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    if let Some(stem) = name.strip_suffix(".meta.json") {
        let transcript = p.with_file_name(format!("{stem}.jsonl"));
        return transcript.is_file().then_some(transcript);
    }
    // Aider's input and LLM logs beside its chat history (what was typed, what was sent raw)
    if let Some(stem) = [".aider.input.history", ".aider.llm.history"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
    {
        let history = p.with_file_name(format!("{stem}.aider.chat.history.md"));
        return history.is_file().then_some(history);
    }
    // Droid's settings (the session's model and usage) beside its session
    if let Some(session) = formats::droid::session_of_settings(p) {
        return Some(session);
    }
    if formats::cline::SIDECARS.contains(&name.as_str()) {
        let history = p.with_file_name("api_conversation_history.json");
        return history.is_file().then_some(history);
    }
    if let Some(parent) = formats::codex::parent_rollout(p) {
        return Some(parent);
    }
    if let Some(context) = formats::kimi_cli::session_of_sidecar(p) {
        return Some(context);
    }
    // an OpenHands conversation's event, read with the conversation's state; a subagent's state, with its parent's
    if let Some(state) = formats::openhands::state_of_event(p) {
        return Some(state);
    }
    if let Some(parent) = formats::openhands::parent_of_subagent(p) {
        return Some(parent);
    }
    // a conversation of OpenHands before the SDK: a later event, a cached page, the metadata, with the first event
    if let Some(first) = formats::openhands::sessions::first_event_of(p) {
        return Some(first);
    }
    if !name.starts_with("agent-") || !name.ends_with(".jsonl") {
        return None;
    }
    // the 2.0 layout: `agent-<8hex>.jsonl` beside `<sessionId>.jsonl`
    if let (Some(dir), Some(session)) = (p.parent(), formats::claude_code::session_of_file(p)) {
        let file = dir.join(format!("{session}.jsonl"));
        if file.is_file() && file != p {
            return Some(file);
        }
    }
    let sub = p.parent()?;
    if sub.file_name().is_none_or(|n| n != "subagents") {
        return None;
    }
    let session_dir = sub.parent()?;
    let file = session_dir.with_file_name(format!(
        "{}.jsonl",
        session_dir.file_name()?.to_string_lossy()
    ));
    file.is_file().then_some(file)
}

/// Imports one file. Never panics; a refused file leaves the store unchanged.
pub fn import_file(store: &mut Store, file: &Path, format: Option<Format>) -> FileOutcome {
    let mut outcome = FileOutcome {
        file: file.to_path_buf(),
        format: None,
        conversations: Vec::new(),
        report: ImportReport::default(),
        linked: Vec::new(),
        error: None,
        duplicate_of: None,
        status: "refused",
        added: 0,
        read_from: None,
        not_a_transcript: false,
    };
    let key = source_path(file);
    let linked_now =
        |fmt: Format, meta: &serde_json::Value| formats::appended::linked_files(fmt, file, meta);
    match read_grown(store, file, &key, format, &linked_now, &mut outcome) {
        Grown::Done => return outcome,
        Grown::Whole(why) => {
            if let Some(why) = why {
                outcome.report.notes.push(why);
            }
        }
    }
    let notes = std::mem::take(&mut outcome.report.notes);
    // read once: what is hashed is what is parsed (a file replaced mid-import cannot be stored under the other's
    // hash)
    let bytes = match formats::read_file(file) {
        Ok(b) => b,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return outcome;
        }
    };
    let hash = content_hash(file, &bytes);
    let (fmt, parsed) = match formats::parse_bytes(file, &bytes, format) {
        Ok(x) => x,
        Err(e) => {
            outcome.error = Some(e.to_string());
            outcome.not_a_transcript = e.not_a_transcript;
            return outcome;
        }
    };
    outcome.format = Some(fmt);
    outcome.report = parsed.report.clone();
    outcome.report.notes.extend(notes);
    // every file's position is kept (the window follows a session's file by it); only the formats that append
    // are read from it again
    let read = Some(tail::position(
        &key,
        fmt,
        &bytes,
        linked_now(fmt, &parsed.meta),
    ));
    outcome.linked = parsed.children.iter().map(|c| c.report.clone()).collect();
    let (first, children) = parsed.into_imported(None);
    let mut convs = vec![first];
    convs.extend(children.into_iter().map(|c| c.into_imported(Some(0)).0));
    for c in &mut convs {
        if let Some(key) = source_key(fmt, file, c) {
            if !c.meta.is_object() {
                c.meta = serde_json::json!({ "meta": c.meta.take() });
            }
            c.meta["source_key"] = serde_json::json!(key);
        }
    }
    let known = match convs[0].meta.get("source_key").and_then(|k| k.as_str()) {
        Some(k) => store.conversation_of_source(k),
        None => Ok(None),
    };
    let source = file.display().to_string();
    let done = match known {
        Err(e) => Err(e),
        // the session the store holds: only what it lacks is added
        Ok(Some(_)) => merge(store, file, &hash, &convs, read.as_ref(), &mut outcome),
        Ok(None) => store
            .import_file(&hash, &source, &convs, read.as_ref())
            .map(|ids| {
                ids.into_iter()
                    .map(|id| forks::Written {
                        id,
                        grew: true,
                        copied: true,
                    })
                    .collect()
            })
            .inspect(|_| outcome.status = "new"),
    };
    match done {
        Ok(written) => {
            forks::after_write(store, &written, &mut outcome.report);
            outcome.conversations = written.into_iter().map(|w| w.id).collect();
        }
        Err(StoreError::Duplicate { conversation, .. }) => {
            outcome.error = Some(format!(
                "{}: already imported as conversation {conversation}",
                file.display()
            ));
            outcome.duplicate_of = Some(conversation);
            outcome.status = "unchanged";
        }
        Err(e) => outcome.error = Some(format!("{}:0: {e}", file.display())),
    }
    outcome
}

/// What identifies a file's reading: its bytes' hash, with the files read beside it where a conversation is a folder
/// of files (OpenHands' events before its SDK: which of them there are).
fn content_hash(file: &Path, bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    if formats::openhands::sessions::is_first_event(file) {
        h.update(formats::openhands::sessions::listing(file));
    }
    format!("{:x}", h.finalize())
}

/// Merges the conversations of `file` into the session the store holds: only what it lacks is added, and the
/// outcome says grown or unchanged.
fn merge(
    store: &mut Store,
    file: &Path,
    hash: &str,
    convs: &[crate::store::ImportedConversation],
    read: Option<&crate::store::SourceRead>,
    outcome: &mut FileOutcome,
) -> Result<Vec<forks::Written>, StoreError> {
    let merged = store.merge_file(hash, &file.display().to_string(), convs, read)?;
    let added: usize = merged.iter().map(|m| m.added).sum();
    let first = merged
        .first()
        .map(|m| m.conversation.clone())
        .unwrap_or_default();
    outcome.added = added;
    // stored replies that took usage written since: the session grew in its figures
    let late: usize = merged.iter().map(|m| m.late).sum();
    outcome.status = if added > 0 || late > 0 {
        "grown"
    } else {
        "unchanged"
    };
    let recorded: Vec<&str> = merged
        .iter()
        .flat_map(|m| m.recorded.iter().map(String::as_str))
        .collect();
    if !recorded.is_empty() {
        outcome.report.notes.push(format!(
            "read by a newer reader, which records more of the session: {}",
            recorded.join(", ")
        ));
    }
    if late > 0 {
        outcome.report.notes.push(format!(
            "usage written since the last import (a run's totals, written when it ended) taken by {late} stored \
             repl(ies)"
        ));
    }
    if added == 0 && recorded.is_empty() && late == 0 {
        outcome.error = Some(format!(
            "{}: already imported as conversation {first} (the same session, nothing new)",
            file.display(),
        ));
        outcome.duplicate_of = Some(first);
    } else if added > 0 {
        outcome.report.notes.push(format!(
            "a session this store holds, grown: +{added} message(s) added to {first}"
        ));
    }
    let retired: usize = merged.iter().map(|m| m.retired).sum();
    if retired > 0 {
        outcome.report.notes.push(format!(
            "read otherwise than when it was imported (a newer reader): the new reading is the tip, and the \
             {retired} repl(ies) of the former one it repeats no longer count"
        ));
    }
    Ok(merged
        .into_iter()
        .map(|m| forks::Written {
            grew: m.new || m.added > 0,
            copied: m.new || m.copies > 0,
            id: m.conversation,
        })
        .collect())
}

/// The name a file's read position is kept under: its canonical path (as given when it has none).
fn source_path(file: &Path) -> String {
    std::fs::canonicalize(file)
        .unwrap_or_else(|_| file.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// What reading only what a file gained did.
enum Grown {
    /// The outcome is made (unchanged, grown, or a store error).
    Done,
    /// Read the file whole (and, where it was read before, why).
    Whole(Option<String>),
}

/// Reads what `file` gained since its last import, if it was imported, only grew, and its new lines continue the
/// stored session exactly; fills `outcome` when it did.
fn read_grown(
    store: &mut Store,
    file: &Path,
    key: &str,
    format: Option<Format>,
    linked_now: &dyn Fn(Format, &serde_json::Value) -> String,
    outcome: &mut FileOutcome,
) -> Grown {
    let known = match store.source_read(key) {
        Ok(Some(k)) => k,
        Ok(None) | Err(_) => return Grown::Whole(None),
    };
    let Some(fmt) = Format::from_name(&known.read.format) else {
        return Grown::Whole(None);
    };
    if format.is_some_and(|f| f != fmt) || !formats::appended::reads_appended(fmt) {
        return Grown::Whole(None);
    }
    let linked = linked_now(
        fmt,
        &formats::appended::session_of_listing(&known.read.linked),
    );
    let whole = |why: String| {
        Grown::Whole(Some(format!(
            "read whole again, not from where the last import stopped: {why}"
        )))
    };
    let since = match tail::since(file, &known.read, &linked) {
        Ok(s) => s,
        Err(e) => return whole(e.to_string()),
    };
    outcome.format = Some(fmt);
    let conv = known.conversation.clone();
    let (bytes, first_line, from, read) = match since {
        tail::Since::Whole(why) => return whole(why),
        tail::Since::Unchanged => {
            outcome.status = "unchanged";
            outcome.read_from = Some(known.read.read_to);
            outcome.error = Some(format!(
                "{}: already imported as conversation {conv} (the same session, nothing new)",
                file.display()
            ));
            outcome.duplicate_of = Some(conv.clone());
            outcome.conversations = known.conversations.clone();
            return Grown::Done;
        }
        tail::Since::Grew {
            bytes,
            first_line,
            from,
            read,
        } => (bytes, first_line, from, read),
    };
    let lines = match formats::jsonl_from(file, &bytes, first_line) {
        Ok(l) => l,
        Err(e) => return whole(e.to_string()),
    };
    let last_read = usize::try_from(known.read.lines).unwrap_or(usize::MAX);
    let window = match formats::appended::parse_window(fmt, file, lines, last_read) {
        Some(Ok(w)) => w,
        Some(Err(e)) => return whole(e.to_string()),
        None => return whole("its new lines cannot be read apart from the rest".into()),
    };
    let (c, _) = window.parsed.into_imported(None);
    match store.append_tail(&conv, &read, &c, &window.read_before) {
        Ok(crate::store::Tail::Appended { added, copies }) => {
            outcome.added = added;
            outcome.read_from = Some(from);
            outcome.status = if added > 0 { "grown" } else { "unchanged" };
            outcome.report.notes.push(format!(
                "read from byte {from} (line {first_line}, a window before where the last import stopped) to byte {}",
                read.read_to
            ));
            if added > 0 {
                outcome.report.messages = added;
                outcome.report.notes.push(format!(
                    "a session this store holds, grown: +{added} message(s) added to {conv}"
                ));
            } else {
                outcome.error = Some(format!(
                    "{}: already imported as conversation {conv} (the same session, nothing new)",
                    file.display()
                ));
                outcome.duplicate_of = Some(conv.clone());
            }
            outcome.conversations = known.conversations.clone();
            let written = forks::Written {
                id: conv.clone(),
                grew: added > 0,
                copied: copies > 0,
            };
            forks::after_write(store, &[written], &mut outcome.report);
            Grown::Done
        }
        Ok(crate::store::Tail::NotAContinuation(why)) => whole(why),
        Err(e) => {
            outcome.error = Some(format!("{}:0: {e}", file.display()));
            Grown::Done
        }
    }
}

/// The id a harness gave a session, where it wrote one: in the conversation's meta (pi's header, Codex's
/// `session_meta`, Gemini CLI's `sessionId`, OpenHands' `conversation_id`) or on its first message's lines (Claude
/// Code's `sessionId`).
fn harness_session(meta: &serde_json::Value, first: &serde_json::Value) -> Option<String> {
    let str_at =
        |v: &serde_json::Value, p: &str| v.pointer(p).and_then(|x| x.as_str()).map(str::to_string);
    str_at(meta, "/header/id")
        .or_else(|| str_at(meta, "/session_meta/payload/id"))
        .or_else(|| str_at(meta, "/session_meta/id"))
        .or_else(|| str_at(meta, "/sessionId"))
        // OpenHands: every conversation's state file has the one name, and a fork copies the events it started
        // from (ids and times) into a conversation of its own
        .or_else(|| str_at(meta, "/conversation_id"))
        .or_else(|| str_at(first, "/lines/0/sessionId"))
        .or_else(|| str_at(first, "/line/sessionId"))
}

/// What tells one session from another: the harness, the file's name, its own session id where it records one,
/// and the first message (its fingerprint and time). A session read again after it grew, or rewritten in place by
/// its harness (pi migrates its files), has the same key; another file that happens to share a session id and a
/// first prompt (a fixture, a copy) does not.
fn source_key(fmt: Format, file: &Path, c: &crate::store::ImportedConversation) -> Option<String> {
    let first = c.messages.first()?;
    let m = &first.message;
    let session = harness_session(&c.meta, &m.meta).unwrap_or_default();
    let fp = crate::store::own_fingerprint(m.role, &m.content, &m.meta);
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(format!(
        "{}:{name}:{session}:{fp}:{}",
        fmt.name(),
        m.created_at.unwrap_or(0)
    ))
}
