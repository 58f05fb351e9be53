//! Finding the sessions other harnesses left on this machine, in their standard folders under the home folder
//! (overridable, for tests): Claude Code (`~/.claude/projects`), pi (`~/.pi/agent/sessions`), Codex
//! (`~/.codex/sessions`), Gemini CLI (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, and `.json` before), Cursor
//! (`~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl`) and GitHub Copilot CLI
//! (`~/.copilot/session-state/<id>/events.jsonl`), Qwen Code (`~/.qwen/projects/<project>/chats/<id>.jsonl`, and
//! `~/.qwen/tmp/<project>/chats/` before), Kimi CLI (`~/.kimi/sessions/<work dir hash>/<id>/context.jsonl`), Amp
//! (`~/.local/share/amp/threads/T-<uuid>.json`, and its editor extension's `threads3` before), Goose's SQLite store
//! (`~/.local/share/goose/sessions/sessions.db`, a session each) and the JSONL files it kept before, Zed's agent
//! threads (`~/.local/share/zed/threads/threads.db`, a thread each), opencode's SQLite store
//! (`~/.local/share/opencode/opencode.db`, a session each) and its older storage folders
//! (`~/.local/share/opencode/storage/session/<project>/ses_*.json`, its messages read beside it), the task folders of
//! Cline, Roo Code and Kilo Code in the editors' extension storage (`<editor>/User/globalStorage/<extension>/tasks/
//! <id>/api_conversation_history.json`, for VS Code, its Insiders build, VSCodium, Cursor and Windsurf, under
//! `~/.config` and macOS's `~/Library/Application Support`), mini-SWE-agent's last run
//! (`~/.config/mini-swe-agent/last_mini_run.traj.json`) and OpenHands' conversations
//! (`~/.openhands/conversations/<id>/base_state.json`, a subagent's read with its parent's; from before its SDK,
//! `~/.openhands/sessions/<id>/events/0.json`). Newest first, with size and a message count from a quick scan (no
//! full parse).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::formats::Format;

#[derive(Debug, Clone, Serialize)]
pub struct SessionFile {
    pub path: PathBuf,
    pub format: Format,
    /// Modification time, Unix milliseconds.
    pub modified: i64,
    pub size: u64,
    /// Lines that hold a message (a quick count, without parsing).
    pub messages: usize,
}

/// Where each harness keeps its sessions, relative to the home folder.
pub const LOCATIONS: &[(Format, &str)] = &[
    (Format::ClaudeCode, ".claude/projects"),
    (Format::Pi, ".pi/agent/sessions"),
    (Format::Codex, ".codex/sessions"),
    (Format::GeminiCli, ".gemini/tmp"),
    (Format::Cursor, ".cursor/projects"),
    (Format::CopilotCli, ".copilot/session-state"),
    (Format::Opencode, ".local/share/opencode/storage/session"),
    (Format::Droid, ".factory/sessions"),
    (Format::QwenCode, ".qwen"),
    (Format::KimiCli, ".kimi/sessions"),
    (Format::Amp, ".local/share/amp/threads"),
    (Format::Goose, ".local/share/goose/sessions"),
    (Format::MiniSweAgent, ".config/mini-swe-agent"),
    (Format::OpenHands, ".openhands/conversations"),
];

/// Editors whose extension storage may hold Cline-family task folders, and the extensions' ids.
const EDITORS: &[&str] = &["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];
const CLINE_FAMILY: &[&str] = &[
    "saoudrizwan.claude-dev",
    "rooveterinaryinc.roo-cline",
    "kilocode.kilo-code",
];

/// A home folder, and where the harnesses that can be told to keep their files elsewhere were told to: Claude
/// Code's `CLAUDE_CONFIG_DIR` (for `~/.claude`), Codex's `CODEX_HOME` (for `~/.codex`), pi's `PI_CODING_AGENT_DIR`
/// (for `~/.pi/agent`), Gemini CLI's `GEMINI_CLI_HOME` (the folder holding its `.gemini`), OpenHands'
/// `OPENHANDS_CONVERSATIONS_DIR` (or `OPENHANDS_PERSISTENCE_DIR`, for `~/.openhands`). Sessions are looked for, and
/// written back, where the harness itself would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    pub dir: PathBuf,
    pub claude: Option<PathBuf>,
    pub codex: Option<PathBuf>,
    pub pi: Option<PathBuf>,
    /// Gemini CLI's `.gemini` folder, where `GEMINI_CLI_HOME` moved it.
    pub gemini: Option<PathBuf>,
    /// OpenHands' conversations folder, where `OPENHANDS_CONVERSATIONS_DIR` or `OPENHANDS_PERSISTENCE_DIR` moved it.
    pub openhands: Option<PathBuf>,
    /// OpenHands' folder of conversations from before its SDK (`sessions/`), where `OPENHANDS_PERSISTENCE_DIR`
    /// moved it.
    pub openhands_sessions: Option<PathBuf>,
}

impl Home {
    /// A home with every harness in its default folder (a `--home` given on the command line, a test's).
    pub fn at(dir: impl Into<PathBuf>) -> Home {
        Home {
            dir: dir.into(),
            claude: None,
            codex: None,
            pi: None,
            gemini: None,
            openhands: None,
            openhands_sessions: None,
        }
    }

    /// This user's home, with the folders the environment moved.
    pub fn of_user() -> Option<Home> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Some(Home {
            dir: home()?,
            claude: var("CLAUDE_CONFIG_DIR"),
            codex: var("CODEX_HOME"),
            pi: var("PI_CODING_AGENT_DIR"),
            gemini: var("GEMINI_CLI_HOME").map(|h| h.join(".gemini")),
            openhands: var("OPENHANDS_CONVERSATIONS_DIR")
                .or_else(|| var("OPENHANDS_PERSISTENCE_DIR").map(|d| d.join("conversations"))),
            openhands_sessions: var("OPENHANDS_PERSISTENCE_DIR").map(|d| d.join("sessions")),
        })
    }

    /// The folder a harness keeps its sessions in.
    pub fn sessions(&self, format: Format) -> Option<PathBuf> {
        let moved = |d: &Option<PathBuf>, sub: &str| d.as_ref().map(|d| d.join(sub));
        let own = match format {
            Format::ClaudeCode => moved(&self.claude, "projects"),
            Format::Codex => moved(&self.codex, "sessions"),
            Format::Pi => moved(&self.pi, "sessions"),
            Format::GeminiCli => moved(&self.gemini, "tmp"),
            Format::OpenHands => self.openhands.clone(),
            _ => None,
        };
        own.or_else(|| {
            LOCATIONS
                .iter()
                .find(|(f, _)| *f == format)
                .map(|(_, rel)| self.dir.join(rel))
        })
    }
}

/// Every place under `home` where a harness keeps its sessions: the fixed folders, and each editor's extension
/// storage for the Cline family and Amp's older threads.
fn locations(home: &Home) -> Vec<(Format, PathBuf)> {
    let mut out: Vec<(Format, PathBuf)> = LOCATIONS
        .iter()
        .filter_map(|(f, _)| Some((*f, home.sessions(*f)?)))
        .collect();
    let home_of = home;
    let home = &home.dir;
    for base in [".config", "Library/Application Support"] {
        for editor in EDITORS {
            for ext in CLINE_FAMILY {
                out.push((
                    Format::Cline,
                    home.join(base)
                        .join(editor)
                        .join("User/globalStorage")
                        .join(ext)
                        .join("tasks"),
                ));
            }
            // Amp's editor extension kept its threads there before they moved to Amp's own folder
            out.push((
                Format::Amp,
                home.join(base)
                    .join(editor)
                    .join("User/globalStorage/sourcegraph.amp/threads3"),
            ));
        }
    }
    // OpenHands before its SDK (V0: the app and the CLI) kept a conversation a folder under `sessions/`, beside the
    // SDK's `conversations/` (or where `OPENHANDS_PERSISTENCE_DIR` moved both)
    out.push((
        Format::OpenHands,
        home_of
            .openhands_sessions
            .clone()
            .unwrap_or_else(|| home.join(".openhands/sessions")),
    ));
    // mini-SWE-agent keeps its last run in the platform's configuration folder: macOS's is Application Support
    out.push((
        Format::MiniSweAgent,
        home.join("Library/Application Support/mini-swe-agent"),
    ));
    out
}

/// Whether a file under a harness's folder is one of its sessions.
fn is_session(format: Format, p: &Path) -> bool {
    match format {
        // chat files under `chats/` (checkpoints and logs beside them are not sessions): `session-*.json` as Gemini
        // CLI wrote them first, `session-*.jsonl` (its session log) since, a subagent's log in a folder named by
        // its parent's session (`chats/<parent>/<id>.jsonl`); a `.json` Gemini CLI migrated to a log beside it is
        // that log
        Format::GeminiCli => {
            let in_dir = |p: &Path, name: &str| {
                p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == name)
            };
            let session = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("session-"));
            match p.extension().and_then(|x| x.to_str()) {
                Some("json") => {
                    in_dir(p, "chats") && session && !p.with_extension("jsonl").exists()
                }
                Some("jsonl") => {
                    in_dir(p, "chats") && session || p.parent().is_some_and(|d| in_dir(d, "chats"))
                }
                _ => false,
            }
        }
        // `agent-transcripts/<id>/<id>.jsonl` (and their subagents)
        Format::Cursor => {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.ancestors()
                    .any(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"))
        }
        // `projects/<project>/chats/<session id>.jsonl` (`tmp/<project>/chats/` before; the sidecars beside it,
        // `<id>.ledger.jsonl`, `<id>.runtime.json`, `agent-*.jsonl`, `notes.jsonl`, are not sessions), and the chat
        // files Qwen Code wrote as the Gemini CLI it forked did (`tmp/<project>/chats/session-*.json`, read as
        // Gemini CLI's)
        Format::QwenCode => {
            let in_chats = p
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "chats");
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let session_id = name.strip_suffix(".jsonl").is_some_and(|id| {
                id.len() >= 8 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            });
            in_chats && (session_id || name.starts_with("session-") && name.ends_with(".json"))
        }
        // `sessions/<work dir hash>/<id>/context.jsonl` (the histories moved aside, the wire log and the state beside
        // it are read with it; a subagent's `subagents/<id>/context.jsonl` is a session of its own)
        Format::KimiCli => p.file_name().is_some_and(|n| n == "context.jsonl"),
        // `threads/T-<uuid>.json`
        Format::Amp => crate::formats::amp::is_thread_file(p),
        // `session-state/<id>/events.jsonl`
        Format::CopilotCli => p.file_name().is_some_and(|n| n == "events.jsonl"),
        // `tasks/<id>/api_conversation_history.json` (the UI messages beside it are read with it)
        Format::Cline => p
            .file_name()
            .is_some_and(|n| n == "api_conversation_history.json"),
        // the `mini` CLI's last run (`last_mini_run.traj.json`) and any trajectory kept beside it
        Format::MiniSweAgent => p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".traj.json")),
        // `conversations/<id>/base_state.json` (its events beside it are read with it); before the SDK,
        // `sessions/<id>/events/0.json` (the later events, cached pages and metadata are read with it)
        Format::OpenHands => {
            p.file_name()
                .is_some_and(|n| n == crate::formats::openhands::STATE_FILE)
                || crate::formats::openhands::sessions::is_first_event(p)
        }
        // `session/<project>/ses_*.json`
        Format::Opencode => {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("ses_"))
        }
        _ => p.extension().is_some_and(|x| x == "jsonl"),
    }
}

/// Lists the sessions under `home` (every harness in its default folder), newest first.
pub fn discover(home: &Path) -> Vec<SessionFile> {
    discover_in(&Home::at(home))
}

/// Lists the sessions where each harness of `home` keeps them, newest first.
pub fn discover_in(home: &Home) -> Vec<SessionFile> {
    let mut out = Vec::new();
    for (format, root) in locations(home) {
        let format = &format;
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let Ok(md) = e.metadata() else { continue };
                if md.is_dir() {
                    // Claude Code subagents belong to their session; they are imported with it (Kimi CLI's
                    // subagents keep histories of their own)
                    if *format != Format::KimiCli && p.file_name().is_some_and(|n| n == "subagents")
                    {
                        continue;
                    }
                    stack.push(p);
                } else if md.is_file()
                    && is_session(*format, &p)
                    // a spawned agent's rollout is imported with its parent's, a subagent with its session
                    && crate::import::read_with(&p).is_none()
                {
                    let modified = md
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_millis() as i64);
                    out.push(SessionFile {
                        messages: count_messages(&p, *format),
                        path: p,
                        format: *format,
                        modified,
                        size: md.len(),
                    });
                }
            }
        }
    }
    // the harnesses that keep every session in one SQLite store (opencode since its storage folders, Goose since
    // its JSONL files, Zed)
    for store in crate::formats::stores::STORES {
        for rel in store.homes {
            let db = home.dir.join(rel);
            if !(store.is_db)(&db) {
                continue;
            }
            let Ok(sessions) = (store.listing)(&db) else {
                continue;
            };
            out.extend(
                sessions
                    .into_iter()
                    .map(|(path, modified, messages)| SessionFile {
                        path,
                        format: store.format,
                        modified,
                        size: 0,
                        messages,
                    }),
            );
        }
    }
    out.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

fn count_messages(p: &Path, format: Format) -> usize {
    // Cline keeps one JSON array: its messages; Amp and mini-SWE-agent one document: its `messages`
    if matches!(format, Format::Cline | Format::Amp | Format::MiniSweAgent) {
        return std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| {
                v.get("messages")
                    .cloned()
                    .unwrap_or(v)
                    .as_array()
                    .map(Vec::len)
            })
            .unwrap_or(0);
    }
    // OpenHands keeps an event a file, beside the conversation's state: `events/` (before its SDK, the first
    // event's own folder)
    if format == Format::OpenHands {
        if crate::formats::openhands::sessions::is_first_event(p) {
            return p
                .parent()
                .and_then(|d| std::fs::read_dir(d).ok())
                .map_or(0, |rd| rd.flatten().count());
        }
        return p
            .parent()
            .and_then(|d| std::fs::read_dir(d.join("events")).ok())
            .map_or(0, |rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("event-"))
                    .count()
            });
    }
    // opencode stores a message a file, beside the session: `storage/message/<session>/`
    if format == Format::Opencode {
        let dir = p
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .zip(p.file_stem())
            .map(|(storage, id)| storage.join("message").join(id));
        return dir
            .and_then(|d| std::fs::read_dir(d).ok())
            .map_or(0, |rd| rd.flatten().count());
    }
    let Ok(f) = std::fs::File::open(p) else {
        return 0;
    };
    let needles: &[&str] = match format {
        Format::ClaudeCode => &["\"type\":\"user\"", "\"type\":\"assistant\""],
        Format::Pi | Format::Droid => &["\"type\":\"message\""],
        Format::Goose => &["\"role\":\"user\"", "\"role\":\"assistant\""],
        Format::Codex => &["\"type\":\"response_item\""],
        // one pretty-printed document: a message a line that names its type; a log: a record a line
        Format::GeminiCli => &[
            "\"type\": \"user\"",
            "\"type\": \"gemini\"",
            "\"type\":\"user\"",
            "\"type\":\"gemini\"",
        ],
        Format::Cursor => &["\"role\":"],
        // a record a line; or a chat file as Gemini CLI's, pretty-printed, its replies typed `qwen`
        Format::QwenCode => &[
            "\"type\":\"user\"",
            "\"type\":\"assistant\"",
            "\"type\":\"tool_result\"",
            "\"type\": \"user\"",
            "\"type\": \"qwen\"",
        ],
        Format::KimiCli => &[
            "\"role\":\"user\"",
            "\"role\":\"assistant\"",
            "\"role\": \"user\"",
            "\"role\": \"assistant\"",
        ],
        Format::CopilotCli => &[
            "\"type\":\"user.message\"",
            "\"type\":\"assistant.message\"",
        ],
        _ => &[],
    };
    std::io::BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .filter(|l| needles.iter().any(|n| l.contains(n)))
        .count()
}

/// The home folder: `$HOME`, else the platform's.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()))
}
