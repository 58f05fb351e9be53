//! What Aider sends beside the chat history, which its history file never shows: the system prompt of its model and
//! edit format, the repository map (shaped by which files are in the chat: Aider draws a larger map when none is)
//! and the files in the chat. The file does show what changes them, in Aider's own output lines: a run's model, a
//! file added (`/add`, `--read`, a yes to "Add file to the chat?" or "Allow edits to file that has not been added
//! to the chat?") or dropped. Two stretches of a session that send the same have the same overhead, so each change
//! records what is sent after it ([`Sends::key`]) and an estimate after a change takes the overhead an earlier
//! stretch measured with the same (a new run with the files of an earlier one, a file dropped and added again).

use std::collections::BTreeSet;

const READ_ONLY: &str = " (read-only)";

/// What Aider sends beside the history in the run being read.
#[derive(Debug, Default)]
pub(super) struct Sends {
    /// The run's model line (`gemini/… with diff-fenced edit format`): its system prompt.
    model: Option<String>,
    /// The files in the chat, as Aider named them (a read-only one with ` (read-only)` after its name).
    files: BTreeSet<String>,
    /// Aider's output line just before: the subject of a question that follows it (`> src/lib.rs` then `> Add file
    /// to the chat? …: y`).
    subject: Option<String>,
}

impl Sends {
    /// A new run: a new process, nothing in the chat yet.
    pub fn run(&mut self) {
        *self = Sends::default();
    }

    /// The run's `Model:` / `Main model:` line, after the key.
    pub fn model(&mut self, line: &str) {
        self.model = Some(line.to_string());
    }

    /// Reads one line of Aider's output; true when it changed what Aider sends beside the history.
    pub fn output(&mut self, o: &str) -> bool {
        let subject = self.subject.take();
        if let Some(q) = Question::of(o) {
            if !q.yes {
                return false;
            }
            return match q.asks {
                "Add file to the chat"
                | "Allow edits to file that has not been added to the chat"
                | "Create new file" => subject.is_some_and(|s| self.files.insert(s)),
                // a web page goes into the prompt, a command's output into the history: not beside it (newer
                // versions ask `Add 5.2k tokens of command output to the chat?`)
                "Add URL to the chat" => false,
                other if other.ends_with("command output to the chat") => false,
                other => match other
                    .strip_prefix("Add ")
                    .and_then(|r| r.strip_suffix(" to the chat"))
                {
                    Some(file) => self.files.insert(file.to_string()),
                    None => false,
                },
            };
        }
        if let Some(rest) = o.strip_prefix("Added ") {
            let rest = rest.trim_end_matches('.');
            if let Some(file) = rest.strip_suffix(" to the chat (read-only)") {
                self.files.insert(format!("{file}{READ_ONLY}"));
                return true;
            }
            if let Some(file) = rest.strip_suffix(" to the chat")
                && command_output(o).is_none()
            {
                self.files.insert(file.to_string());
                return true;
            }
        }
        if o.starts_with("Dropping all files from the chat session") {
            if o.contains("except originally read-only") {
                self.files.retain(|f| f.ends_with(READ_ONLY));
            } else {
                self.files.clear();
            }
            return true;
        }
        for verb in ["Removed ", "Dropping "] {
            if let Some(file) = o
                .strip_prefix(verb)
                .and_then(|r| r.trim_end_matches('.').strip_suffix(" from the chat"))
            {
                self.files.remove(file);
                self.files.remove(&format!("{file}{READ_ONLY}"));
                return true;
            }
        }
        self.subject = Some(o.to_string());
        false
    }

    /// What is sent beside the history, named: the model line and the files.
    pub fn key(&self) -> String {
        let mut key = self.model.clone().unwrap_or_default();
        for f in &self.files {
            key.push('\n');
            key.push_str(f);
        }
        key
    }
}

/// `Added 17 lines of output to the chat.`: the lines of a command's output Aider added to the history (as a user
/// message, which the file does not show, and its own `Ok.` after it).
pub(super) fn command_output(o: &str) -> Option<u64> {
    let n = o
        .strip_prefix("Added ")?
        .strip_suffix(" of output to the chat.")?;
    n.trim_end_matches(" lines")
        .trim_end_matches(" line")
        .parse()
        .ok()
}

/// One of Aider's questions as its output logs it, with the answer after it: `Add file to the chat? (Y)es/(N)o/(D)on't
/// ask again [Yes]: y`.
struct Question<'a> {
    asks: &'a str,
    yes: bool,
}

impl<'a> Question<'a> {
    fn of(o: &'a str) -> Option<Question<'a>> {
        let (asks, rest) = o.split_once("? (Y)es/(N)o")?;
        let answer = rest.rsplit_once("]:").map_or("", |(_, a)| a).trim();
        let yes = ["y", "yes", "a", "all"]
            .iter()
            .any(|w| answer.eq_ignore_ascii_case(w));
        Some(Question { asks, yes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[&str]) -> (Vec<bool>, String) {
        let mut s = Sends::default();
        s.model("m with diff edit format");
        let changed = lines.iter().map(|l| s.output(l)).collect();
        (changed, s.key())
    }

    #[test]
    fn files_added_and_dropped_name_what_is_sent() {
        let (changed, key) = read(&[
            "Added CONVENTIONS.md to the chat (read-only).",
            "Added src/a.ts to the chat",
            "src/b.ts",
            "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a",
            "src/c.ts",
            "Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: n",
            "Add .gitignore to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y",
            "Dropping src/a.ts from the chat.",
            "Added .aider* to .gitignore",
        ]);
        assert_eq!(
            changed,
            [true, true, false, true, false, false, true, true, false]
        );
        assert_eq!(
            key,
            "m with diff edit format\n.gitignore\nCONVENTIONS.md (read-only)\nsrc/b.ts"
        );
        // the same files in another order, or added again after a drop: the same key
        let (_, again) = read(&[
            "Added src/b.ts to the chat",
            "Added .gitignore to the chat",
            "Added src/a.ts to the chat",
            "Removed src/a.ts from the chat",
            "Added CONVENTIONS.md to the chat (read-only).",
        ]);
        assert_eq!(again, key);
    }

    #[test]
    fn a_command_s_output_goes_into_the_history_not_beside_it() {
        let (changed, key) = read(&[
            "Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y",
            "Added 17 lines of output to the chat.",
            "Add 5.2k tokens of command output to the chat? (Y)es/(N)o [Yes]: y",
            "Add URL to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y",
            "Added a.rs to the chat",
            "Dropping all files from the chat session except originally read-only files.",
        ]);
        assert_eq!(changed, [false, false, false, false, true, true]);
        assert_eq!(key, "m with diff edit format");
        assert_eq!(
            command_output("Added 17 lines of output to the chat."),
            Some(17)
        );
        assert_eq!(
            command_output("Added 1 line of output to the chat."),
            Some(1)
        );
        assert_eq!(command_output("Added a.rs to the chat."), None);
    }
}
