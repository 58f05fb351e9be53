//! What a tool call did, in one line a reader can scan: its name and its telling argument (the path it read, the
//! command it ran, the pattern it searched, the URL it fetched), and for edits the change as a diff. One definition
//! for the HTML and the Markdown export, across the harnesses' tool families: Claude Code (`Read`, `Edit`,
//! `MultiEdit`, `Write`, `Bash`, `Grep`, `Glob`, `WebFetch`, `Task`, ...), pi (`read`, `edit`, `write`, `bash`),
//! Codex (`shell`, `exec_command`, `apply_patch`) and the SWE-agent / OpenHands editors (`str_replace_editor`).

use serde_json::Value;

/// A tool call as a reader sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSummary {
    /// The tool's name as the harness called it.
    pub name: String,
    /// The argument that says what the call did, on one line (None when the call has no telling argument).
    pub arg: Option<String>,
    /// What to show under the line.
    pub detail: Detail,
}

/// The body of a call: a change as a unified diff, code to show with its language, or the input as JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    Diff(String),
    /// A plan (Claude Code's `TodoWrite`, Codex's `update_plan`): each item with its status.
    Checklist(Vec<(String, String)>),
    Code {
        lang: String,
        text: String,
    },
    Json(String),
    None,
}

/// Argument keys in the order they tell most, across the harnesses' tools.
const TELLING: &[&str] = &[
    "file_path",
    "path",
    "notebook_path",
    "filePath",
    "command",
    "cmd",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "subagent_type",
];

fn one_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or_default().trim();
    let mut out: String = first.chars().take(160).collect();
    if first.chars().count() > 160 || s.trim().lines().nth(1).is_some() {
        out.push_str(" …");
    }
    out
}

/// A value shown as an argument: a string as is, an argv array joined by spaces.
fn arg_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_string) => {
            let parts: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            // `["bash", "-lc", "cargo test"]` says `cargo test`
            match parts.as_slice() {
                [sh, flag, cmd] if sh.ends_with("sh") && flag.starts_with('-') => {
                    Some((*cmd).to_string())
                }
                _ => Some(parts.join(" ")),
            }
        }
        _ => None,
    }
}

/// The language a path's extension names, for highlighting (an empty string when unknown).
pub fn lang_of_path(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.rsplit_once('.') {
        Some((_, ext)) if !ext.is_empty() && ext.len() <= 10 => ext.to_ascii_lowercase(),
        _ => match file {
            "Makefile" | "makefile" => "make".into(),
            "Dockerfile" => "dockerfile".into(),
            _ => String::new(),
        },
    }
}

/// The language a call's result is written in: a file read shows the file's (by its extension); any other
/// result is output, shown plain (an empty string).
pub fn result_lang(name: &str, input: &Value) -> String {
    let lower = name.to_ascii_lowercase();
    let reads = matches!(
        lower.as_str(),
        "read" | "read_file" | "readfile" | "view" | "cat"
    ) || input.get("command").and_then(Value::as_str) == Some("view");
    if !reads {
        return String::new();
    }
    ["file_path", "path", "filePath"]
        .iter()
        .find_map(|k| input.get(k).and_then(Value::as_str))
        .map(lang_of_path)
        .unwrap_or_default()
}

/// A unified diff of `old` → `new` for `path`.
pub fn diff(path: &str, old: &str, new: &str) -> String {
    // an edit replaces a fragment: end both with a newline so the diff does not report a missing one
    let line = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_string()
        } else {
            format!("{s}\n")
        }
    };
    let (old, new) = (line(old), line(new));
    let d = similar::TextDiff::from_lines(&old, &new);
    let mut u = d.unified_diff();
    u.context_radius(3).header(path, path);
    u.to_string()
}

/// The input of a Codex `apply_patch` call: the patch text, whether the input is the patch itself or wraps it.
fn patch_text(input: &Value) -> Option<&str> {
    let s = match input {
        Value::String(s) => s.as_str(),
        Value::Object(o) => o
            .get("input")
            .or_else(|| o.get("patch"))
            .and_then(Value::as_str)?,
        _ => return None,
    };
    s.contains("*** Begin Patch").then_some(s)
}

/// The files a patch touches, for its one line.
fn patch_files(patch: &str) -> Vec<&str> {
    patch
        .lines()
        .filter_map(|l| {
            l.strip_prefix("*** Update File: ")
                .or_else(|| l.strip_prefix("*** Add File: "))
                .or_else(|| l.strip_prefix("*** Delete File: "))
        })
        .collect()
}

/// A Codex shell call carries its command as `{"command": [...]}` or, wrapped, as a JSON string in `arguments`.
fn unwrap_arguments(input: &Value) -> Option<Value> {
    input
        .get("arguments")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str(s).ok())
}

/// Summarises one call: the first kind of call its input reads as (a patch, an edit, several edits, a file
/// written whole, a shell command, a plan, a search), else its telling argument with the input as JSON beneath.
pub fn summarize(name: &str, input: &Value) -> CallSummary {
    let unwrapped = unwrap_arguments(input);
    let input = unwrapped.as_ref().unwrap_or(input);
    let call = Call {
        lower: name.to_ascii_lowercase(),
        input,
        path: ["file_path", "path", "filePath", "notebook_path"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .unwrap_or(""),
    };
    let (arg, detail) = call
        .patch()
        .or_else(|| call.edit())
        .or_else(|| call.edits())
        .or_else(|| call.written())
        .or_else(|| call.command())
        .or_else(|| call.plan())
        .or_else(|| call.search())
        .unwrap_or_else(|| call.other());
    CallSummary {
        name: name.into(),
        arg,
        detail,
    }
}

/// A call being summarised: its tool's name lowercased, its input, the file it names.
struct Call<'a> {
    lower: String,
    input: &'a Value,
    path: &'a str,
}

impl Call<'_> {
    fn get(&self, k: &str) -> Option<&Value> {
        self.input.get(k)
    }

    fn str_of(&self, k: &str) -> Option<&str> {
        self.get(k).and_then(Value::as_str)
    }

    fn path_arg(&self) -> Option<String> {
        (!self.path.is_empty()).then(|| self.path.to_string())
    }

    /// A patch (Codex apply_patch, or any tool whose input is one).
    fn patch(&self) -> Option<(Option<String>, Detail)> {
        let p = patch_text(self.input)?;
        let files = patch_files(p);
        Some((
            (!files.is_empty()).then(|| files.join(", ")),
            Detail::Diff(p.to_string()),
        ))
    }

    /// An edit: old → new (Claude Code Edit, pi edit, str_replace_editor's str_replace).
    fn edit(&self) -> Option<(Option<String>, Detail)> {
        let (old, new) = [
            ("old_string", "new_string"),
            ("oldText", "newText"),
            ("old_str", "new_str"),
        ]
        .iter()
        .find_map(|(o, n)| Some((self.str_of(o)?, self.str_of(n).unwrap_or(""))))?;
        Some((self.path_arg(), Detail::Diff(diff(self.path, old, new))))
    }

    /// Several edits in one call (Claude Code MultiEdit, pi's edits array).
    fn edits(&self) -> Option<(Option<String>, Detail)> {
        let edits = self.get("edits").and_then(Value::as_array)?;
        let mut d = String::new();
        for e in edits {
            let old = e
                .get("old_string")
                .or_else(|| e.get("oldText"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let new = e
                .get("new_string")
                .or_else(|| e.get("newText"))
                .and_then(Value::as_str)
                .unwrap_or("");
            d.push_str(&diff(self.path, old, new));
        }
        let path = self.path;
        Some((
            (!path.is_empty()).then(|| format!("{path} ({} edits)", edits.len())),
            Detail::Diff(d),
        ))
    }

    /// A file written whole: its content, highlighted by its extension.
    fn written(&self) -> Option<(Option<String>, Detail)> {
        let content = self
            .str_of("content")
            .or_else(|| self.str_of("file_text"))?;
        if self.path.is_empty() {
            return None;
        }
        Some((
            Some(self.path.to_string()),
            Detail::Code {
                lang: lang_of_path(self.path),
                text: content.to_string(),
            },
        ))
    }

    /// A command: shown as shell.
    fn command(&self) -> Option<(Option<String>, Detail)> {
        let cmd = self
            .get("command")
            .or_else(|| self.get("cmd"))
            .and_then(arg_text)?;
        let lower = &self.lower;
        let shell = lower.contains("bash")
            || lower.contains("shell")
            || lower.contains("exec")
            || lower.contains("terminal")
            || lower == "run";
        if !shell {
            return None;
        }
        let detail = if cmd.contains('\n') || cmd.chars().count() > 160 {
            Detail::Code {
                lang: "sh".into(),
                text: cmd.clone(),
            }
        } else {
            Detail::None
        };
        Some((Some(one_line(&cmd)), detail))
    }

    /// A plan: its items and their status.
    fn plan(&self) -> Option<(Option<String>, Detail)> {
        let items = self
            .get("todos")
            .or_else(|| self.get("plan"))
            .and_then(Value::as_array)?;
        let list: Vec<(String, String)> = items
            .iter()
            .filter_map(|t| {
                let text = t
                    .get("content")
                    .or_else(|| t.get("step"))
                    .and_then(Value::as_str)?;
                let status = t.get("status").and_then(Value::as_str).unwrap_or("pending");
                Some((status.to_string(), text.to_string()))
            })
            .collect();
        if list.is_empty() {
            return None;
        }
        let done = list.iter().filter(|(s, _)| s == "completed").count();
        Some((
            Some(format!("{done} of {} done", list.len())),
            Detail::Checklist(list),
        ))
    }

    /// A search: what it looked for, and where.
    fn search(&self) -> Option<(Option<String>, Detail)> {
        let pattern = self.str_of("pattern")?;
        let arg = if self.path.is_empty() {
            pattern.to_string()
        } else {
            format!("{pattern} in {}", self.path)
        };
        Some((Some(one_line(&arg)), Detail::None))
    }

    /// Anything else: its telling argument, the input as JSON beneath.
    fn other(&self) -> (Option<String>, Detail) {
        let input = self.input;
        let arg = TELLING
            .iter()
            .find_map(|k| self.get(k).and_then(arg_text))
            .map(|s| one_line(&s));
        let only_the_arg = input.as_object().is_some_and(|o| o.len() <= 1) && arg.is_some();
        let detail = if only_the_arg || input.as_object().is_some_and(|o| o.is_empty()) {
            Detail::None
        } else {
            Detail::Json(serde_json::to_string_pretty(input).unwrap_or_default())
        };
        (arg, detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_family_is_summarised_by_its_telling_argument() {
        let cases = [
            ("Read", json!({"file_path": "src/main.rs"}), "src/main.rs"),
            (
                "read",
                json!({"path": "README.md", "offset": 10}),
                "README.md",
            ),
            (
                "Bash",
                json!({"command": "cargo test", "description": "run the tests"}),
                "cargo test",
            ),
            (
                "shell",
                json!({"command": ["bash", "-lc", "ls -la"]}),
                "ls -la",
            ),
            ("exec_command", json!({"cmd": "rg foo"}), "rg foo"),
            (
                "Grep",
                json!({"pattern": "fn main", "path": "src"}),
                "fn main in src",
            ),
            ("Glob", json!({"pattern": "**/*.rs"}), "**/*.rs"),
            (
                "WebFetch",
                json!({"url": "https://example.com", "prompt": "summarise"}),
                "https://example.com",
            ),
            ("WebSearch", json!({"query": "rust egui"}), "rust egui"),
            (
                "Task",
                json!({"description": "find the bug", "prompt": "long text"}),
                "find the bug",
            ),
        ];
        for (name, input, want) in cases {
            let s = summarize(name, &input);
            assert_eq!(s.arg.as_deref(), Some(want), "{name}");
        }
        // a command on several lines shows its first line and the whole script beneath
        let s = summarize(
            "Bash",
            &json!({"command": "set -e\ncargo build\ncargo test"}),
        );
        assert_eq!(s.arg.as_deref(), Some("set -e …"));
        assert!(matches!(s.detail, Detail::Code { ref lang, .. } if lang == "sh"));
        // Codex wraps arguments as a JSON string
        let s = summarize(
            "shell",
            &json!({"arguments": "{\"command\":[\"bash\",\"-lc\",\"make\"]}"}),
        );
        assert_eq!(s.arg.as_deref(), Some("make"));
    }

    #[test]
    fn edits_render_as_diffs() {
        let s = summarize(
            "Edit",
            &json!({"file_path": "a.rs", "old_string": "let x = 1;\n", "new_string": "let x = 2;\n"}),
        );
        assert_eq!(s.arg.as_deref(), Some("a.rs"));
        let Detail::Diff(d) = s.detail else {
            panic!("{s:?}")
        };
        assert!(
            d.contains("-let x = 1;") && d.contains("+let x = 2;"),
            "{d}"
        );
        // pi and the SWE-agent editor
        for input in [
            json!({"path": "b.py", "oldText": "a\n", "newText": "b\n"}),
            json!({"command": "str_replace", "path": "b.py", "old_str": "a\n", "new_str": "b\n"}),
        ] {
            let Detail::Diff(d) = summarize("edit", &input).detail else {
                panic!()
            };
            assert!(d.contains("-a") && d.contains("+b"), "{d}");
        }
        // MultiEdit
        let s = summarize(
            "MultiEdit",
            &json!({"file_path": "c.rs", "edits": [{"old_string": "1", "new_string": "2"}, {"old_string": "3", "new_string": "4"}]}),
        );
        assert_eq!(s.arg.as_deref(), Some("c.rs (2 edits)"));
        // a Codex patch
        let patch = "*** Begin Patch\n*** Update File: src/x.rs\n@@\n-a\n+b\n*** End Patch";
        let s = summarize("apply_patch", &json!({"input": patch}));
        assert_eq!(s.arg.as_deref(), Some("src/x.rs"));
        assert_eq!(s.detail, Detail::Diff(patch.into()));
    }

    #[test]
    fn a_plan_is_a_checklist() {
        let s = summarize(
            "TodoWrite",
            &json!({"todos": [{"content": "read", "status": "completed"}, {"content": "fix", "status": "in_progress"}]}),
        );
        assert_eq!(s.arg.as_deref(), Some("1 of 2 done"));
        assert_eq!(
            s.detail,
            Detail::Checklist(vec![
                ("completed".into(), "read".into()),
                ("in_progress".into(), "fix".into())
            ])
        );
    }

    #[test]
    fn a_written_file_is_code_in_its_language() {
        let s = summarize(
            "Write",
            &json!({"file_path": "src/lib.rs", "content": "fn main() {}"}),
        );
        assert_eq!(s.arg.as_deref(), Some("src/lib.rs"));
        assert_eq!(
            s.detail,
            Detail::Code {
                lang: "rs".into(),
                text: "fn main() {}".into()
            }
        );
    }
}
