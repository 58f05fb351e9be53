//! OpenHands' conversations as its app and CLI kept them before the SDK (V0, until late 2025; what a user of that
//! time has on disk): a folder per conversation (`~/.openhands/sessions/<id>/`, or `users/<user>/conversations/<id>/`
//! on a shared server) holding one event a file (`events/<n>.json`, `n` the event's id: each the event's dict, as the
//! trajectory export writes them in one array), pages of 25 of them cached beside (`event_cache/<start>-<end>.json`),
//! and, from the app, the conversation's metadata (`metadata.json`: its title, model and totals).
//!
//! The events are the trajectory: read in the order of their ids by [`super::super::trajectories::parse_openhands`],
//! under the conversation's title. The first event's file (`events/0.json`: every conversation has it, and it never
//! changes) is what is imported; every other file of the folder is read with it. A cache page repeats events, so it
//! is never read as a trajectory of its own; the files' names and sizes are part of what identifies a reading, so a
//! conversation that grew is read again (and only what it gained is added).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::{FormatError, Parsed, trajectories};

/// The folder of one event a file.
const EVENTS: &str = "events";
/// The folder of cached pages of events.
const CACHE: &str = "event_cache";
/// What the app knows of the conversation (title, model, totals).
const METADATA: &str = "metadata.json";

/// The event id a file in a conversation's `events/` holds (`events/12.json` → 12).
fn event_id(p: &Path) -> Option<u64> {
    let dir = p.parent()?;
    if dir.file_name()? != EVENTS {
        return None;
    }
    let stem = p.file_name()?.to_str()?.strip_suffix(".json")?;
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok()
}

/// The conversation folder's first event file, where it is present and the folder is not the SDK's (whose events
/// are named `event-<n>-<id>.json` beside a `base_state.json`).
fn first_in(conversation: &Path) -> Option<PathBuf> {
    let first = conversation.join(EVENTS).join("0.json");
    (first.is_file() && !conversation.join(super::STATE_FILE).exists()).then_some(first)
}

/// Whether `p` is a conversation's first event file (`<conversation>/events/0.json`): the file imported.
pub fn is_first_event(p: &Path) -> bool {
    event_id(p) == Some(0)
        && p.parent()
            .and_then(Path::parent)
            .is_some_and(|c| !c.join(super::STATE_FILE).exists())
}

/// The first event file another file of a conversation's folder is read with: a later event, a cached page of
/// events, the metadata. None for the first event itself and for files of other layouts.
pub fn first_event_of(p: &Path) -> Option<PathBuf> {
    let parent = p.parent()?;
    let name = p.file_name()?.to_str()?;
    let conversation = if let Some(id) = event_id(p) {
        if id == 0 {
            return None;
        }
        parent.parent()?
    } else if parent.file_name()? == CACHE && name.ends_with(".json") {
        parent.parent()?
    } else if name == METADATA || name == "init.json" {
        parent
    } else {
        return None;
    };
    first_in(conversation)
}

/// The conversation's event files, in the order of their ids.
fn event_files(first: &Path) -> Result<Vec<PathBuf>, FormatError> {
    super::numbered_files(first.parent().unwrap_or(first), event_id)
}

/// What identifies a reading of the conversation beside its first event's bytes (which two conversations may share:
/// an agent's state changing at the same moment): the conversation's id, and each event file's name and size (an
/// event's file is written once: a conversation that grew has more of them).
pub fn listing(first: &Path) -> Vec<u8> {
    let id = first
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = format!("{id}\n").into_bytes();
    for p in event_files(first).unwrap_or_default() {
        let size = std::fs::metadata(&p).map_or(0, |m| m.len());
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend_from_slice(format!("{name}:{size}\n").as_bytes());
    }
    out
}

/// Reads the conversation whose first event file is `first`: every event in the order of its id, read as a
/// trajectory, titled as the app titled it. An event file that is not a JSON object refuses the import, naming it.
pub fn parse(first: &Path) -> Result<Parsed, FormatError> {
    let mut events = Vec::new();
    for p in event_files(first)? {
        let v = super::read_event(&p)?;
        if !v.is_object() {
            return Err(FormatError::new(&p, 1, "an event is a JSON object"));
        }
        events.push(v);
    }
    let mut parsed = trajectories::parse_openhands(first, 1, &Value::Array(events))?;
    let conversation = first.parent().and_then(Path::parent);
    let id = conversation
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    let metadata: Option<Value> = conversation
        .map(|c| c.join(METADATA))
        .and_then(|m| std::fs::read(m).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(Value::is_object);
    if let Some(title) = metadata
        .as_ref()
        .and_then(|m| m.get("title"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        parsed.title = Some(title.to_string());
    }
    if !parsed.meta.is_object() {
        parsed.meta = json!({});
    }
    parsed.meta["conversation_id"] = json!(id);
    parsed.meta["layout"] = json!("sessions");
    if let Some(m) = metadata {
        // what the app summed and chose, kept beside (the replies carry their own usage and model)
        let keep = [
            "title",
            "selected_repository",
            "selected_branch",
            "llm_model",
            "created_at",
            "last_updated_at",
            "trigger",
            "accumulated_cost",
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
        ];
        let kept: serde_json::Map<String, Value> = keep
            .iter()
            .filter_map(|k| Some((k.to_string(), m.get(*k)?.clone())))
            .collect();
        parsed.meta["metadata"] = Value::Object(kept);
    }
    Ok(parsed)
}
