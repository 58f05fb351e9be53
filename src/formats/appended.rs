//! Reading the end of a transcript that grew: which formats a harness only ever appends to (so the lines after
//! the last import, with a few before them, can be read alone), which other files a session is read with (a
//! change there means the whole session is read again), and the reader for such a window of lines.
//!
//! Only Claude Code qualifies for now: its files are appended a line at a time, and every message carries the
//! harness's own id (its first line's uuid), which is what the store matches the window's messages by. pi v3
//! rewrites its files on migration and Codex's records carry no ids: those are read whole.

use std::path::Path;

use serde_json::{Value, json};

use super::{Format, FormatError, Parsed, claude_code};

/// Whether the harness only appends to files of this format, naming every message (so a window can be read).
pub fn reads_appended(format: Format) -> bool {
    matches!(format, Format::ClaudeCode)
}

/// How cairn reads the files of the formats read from where they stopped: raised when a reader reads them
/// otherwise (their figures differ). A session read before is then read whole once more, and the merge takes the
/// new reading beside the one the store holds (`crate::store`'s reading fingerprint), where an unchanged file would
/// otherwise never be read again. A test beside it holds a digest of what the reader makes of the Claude Code
/// fixtures with the `READING` it was made with: a reader that reads them otherwise fails it until this is raised.
pub const READING: u64 = 2;

/// The [`READING`] a [`linked_files`] listing was made with (none: before listings said).
pub fn reading_of(listing: &str) -> Option<u64> {
    serde_json::from_str::<Value>(listing)
        .ok()?
        .get("reading")?
        .as_u64()
}

/// The files a session of `path` is read with (Claude Code's subagent files), with their sizes, what names the
/// session and how it is read ([`READING`]), as JSON the importer keeps beside the read position: when it differs
/// the session is read whole.
pub fn linked_files(format: Format, path: &Path, meta: &Value) -> String {
    let session = meta.get("sessionId").and_then(Value::as_str);
    let mut files: Vec<(String, u64)> = Vec::new();
    if format == Format::ClaudeCode {
        let mut add = |p: &Path| {
            let size = std::fs::metadata(p).map_or(0, |m| m.len());
            files.push((p.to_string_lossy().into_owned(), size));
        };
        if let (Some(stem), Some(dir)) = (path.file_stem(), path.parent()) {
            let sub = dir.join(stem).join("subagents");
            if let Ok(rd) = std::fs::read_dir(&sub) {
                let mut found: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                found.sort();
                found.iter().for_each(|p| add(p));
            }
            if let Some(s) = session {
                claude_code::agent_files_of(dir, s)
                    .iter()
                    .for_each(|p| add(p));
            }
        }
    }
    json!({"session": session, "files": files, "reading": READING}).to_string()
}

/// The session id a [`linked_files`] listing was made for.
pub fn session_of_listing(listing: &str) -> Value {
    serde_json::from_str::<Value>(listing)
        .ok()
        .and_then(|v| v.get("session").cloned())
        .map_or_else(|| json!({}), |s| json!({"sessionId": s}))
}

/// A window read from the end of a file: the conversation its lines make, and for each of its messages whether
/// it was read whole before (all its lines come before where the last read stopped): those the store already
/// holds, or holds more of than the window shows (a reply whose first lines are before the window).
pub struct Window {
    pub parsed: Parsed,
    pub read_before: Vec<bool>,
}

/// Reads a window of lines from the end of a file of `format` (the lines after the last import, with some before
/// them; `last_read` is the number of the last line read before) as one conversation, without the files read with
/// it. `None` when the window cannot be read alone (a format that is not appended to, Claude Code 1.x's
/// subagents inline in the session's file).
pub fn parse_window(
    format: Format,
    path: &Path,
    lines: Vec<(usize, Value)>,
    last_read: usize,
) -> Option<Result<Window, FormatError>> {
    match format {
        Format::ClaudeCode => {
            let inline_subagent = lines
                .iter()
                .any(|(_, v)| v.get("isSidechain").and_then(Value::as_bool) == Some(true));
            if inline_subagent {
                return None;
            }
            let line_of: std::collections::HashMap<String, usize> = lines
                .iter()
                .filter_map(|(no, v)| Some((v.get("uuid")?.as_str()?.to_string(), *no)))
                .collect();
            let given = given_title(&lines, last_read);
            Some(claude_code::parse_window(path, lines).map(|mut parsed| {
                // the window's first prompt is not the session's: it names the session only by a title Claude
                // Code gave it among the new lines
                parsed.title = given;
                parsed.finish_report();
                let read_before = parsed
                    .messages
                    .iter()
                    .map(|m| {
                        let meta = &m.message.meta;
                        let mut uuids: Vec<&str> = match meta.get("lines").and_then(Value::as_array)
                        {
                            Some(ls) => ls.iter().filter_map(|l| l.get("uuid")?.as_str()).collect(),
                            None => meta
                                .pointer("/line/uuid")
                                .and_then(Value::as_str)
                                .into_iter()
                                .collect(),
                        };
                        // what Claude Code rendered of its attachments is part of the message: a prompt read
                        // before the attachments written after it is read again with them
                        uuids.extend(
                            meta.get("attached")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .filter(|a| claude_code::is_rendered(a))
                                .filter_map(|a| a.get("uuid")?.as_str()),
                        );
                        !uuids.is_empty()
                            && uuids
                                .iter()
                                .all(|u| line_of.get(*u).is_some_and(|&no| no <= last_read))
                    })
                    .collect();
                Window {
                    parsed,
                    read_before,
                }
            }))
        }
        _ => None,
    }
}

/// The title Claude Code gave the session in the lines after `last_read`: the newest `custom-title` (a rename),
/// else the newest `ai-title` (its own naming).
fn given_title(lines: &[(usize, Value)], last_read: usize) -> Option<String> {
    let newest = |ty: &str, key: &str| {
        lines
            .iter()
            .rev()
            .filter(|(no, v)| *no > last_read && v.get("type").and_then(Value::as_str) == Some(ty))
            .find_map(|(_, v)| {
                v.get(key)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
            })
    };
    newest("custom-title", "customTitle").or_else(|| newest("ai-title", "aiTitle"))
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    /// What the Claude Code reader makes of these fixtures, as a digest, and the [`READING`] it was recorded with.
    const READ_AS: (u64, &str) = (
        2,
        "16d461acf43076c5d4bd8bb45a9fb7099c1d2a6218f24b44994264472d7eeef8",
    );

    /// The guard [`READING`] needs: a change to the Claude Code reader that reads a session otherwise must raise it,
    /// or every session an older cairn read keeps its old reading (its files are read from where they stopped, and
    /// an unchanged one not at all). When this fails, the reader reads these fixtures otherwise: raise `READING`
    /// and record the new digest with it here.
    #[test]
    fn a_reader_that_reads_claude_code_otherwise_raises_reading() {
        let mut hash = Sha256::new();
        for name in [
            "cc-1.0.98-inline-sidechains-task-fanout.jsonl",
            "cc-2.0.5-image-paste.jsonl",
            "cc-compact-boundary.jsonl",
            "cc-rewind-fork-2.1.42.jsonl",
            "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
            "hidden-thinking-2.1.jsonl",
        ] {
            let path = Path::new("tests/fixtures/claude-code").join(name);
            let (format, parsed) = super::super::parse_file(&path, None).unwrap();
            assert_eq!(format, Format::ClaudeCode, "{name}");
            hash.update(format!("{parsed:?}").as_bytes());
        }
        let digest = format!("{:x}", hash.finalize());
        assert_eq!(
            (READING, digest.as_str()),
            READ_AS,
            "the Claude Code reader reads its fixtures otherwise than when READING was {}: raise READING and \
             record it here with the new digest",
            READ_AS.0
        );
    }
}
