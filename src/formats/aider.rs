//! Aider's chat history (`.aider.chat.history.md` in the project): Markdown appended run after run. `# aider chat
//! started at <time>` opens a run; `#### ` lines are what the user typed (consecutive ones one prompt); `> ` lines
//! are Aider's own output (file prompts, warnings, the model in use), kept as metadata with the message they
//! precede; everything else is the model's reply. After a reply, `> Tokens: 9.7k sent, 85 received. Cost: $0.01
//! message, $0.01 session.` is its usage as Aider printed it (rounded to hundreds above a thousand and to
//! thousands above ten thousand, which the usage records as its precision; newer versions add `… cache write, …
//! cache hit`). The model comes from the run's `> Model:` / `> Main model:` line.
//! A file is one conversation, its runs one chain; each message takes its run's start time.
//!
//! The file is what was said, not what was sent: the reader places harness markers where Aider's own rules changed
//! what the model saw. A run after the first, and `/clear` or `/reset`, keep nothing (a new Aider process starts
//! with an empty chat); within a run, Aider summarises its chat once it passes the model's history budget
//! (`aider/history.rs`), keeping the newest messages. What Aider also sends and the file never shows (its system prompt,
//! the repository map, the files added to the chat) is the session's overhead; the message after each file added to
//! or dropped from the chat, and a new run's first, is marked as a change of it
//! ([`crate::model::CairnMeta::ContextChanged`]), so the overhead is measured again by the reply after it.

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed, note};
use crate::model::{Block, CairnMeta, NewMessage, Role, Usage};
use crate::reclaim::marker::{Kept, Ref, harness_meta, unrecorded_harness_meta};

mod history;
mod reasoning;
mod sends;
use history::{ChatHistory, Summarised};
use sends::Sends;

const RUN: &str = "# aider chat started at ";

/// Whether a text is an Aider chat history.
pub fn is_aider(text: &str) -> bool {
    text.trim_start().starts_with(RUN)
}

/// A count as Aider prints it (`85`, `9.7k`, `13k`, `1.2M`), and the unit it was rounded to (1 when exact; `9.7k`
/// to 100, `13k` to 1,000).
fn count(s: &str) -> Option<(u64, u64)> {
    let s = s.trim().trim_end_matches(',');
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1_000.0),
        'm' | 'M' => (&s[..s.len() - 1], 1_000_000.0),
        _ => (s, 1.0),
    };
    let num = num.replace(',', "");
    let v: f64 = num.parse().ok()?;
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len() as i32);
    let unit = (mult / 10f64.powi(decimals)).max(1.0);
    Some(((v * mult).round() as u64, unit as u64))
}

/// `Tokens: 9.7k sent, 1.2k cache write, 3.4k cache hit, 85 received.` as usage: `sent` is the whole prompt.
fn tokens_line(s: &str) -> Option<Usage> {
    let rest = s.strip_prefix("Tokens:")?;
    let head = rest
        .split(". Cost:")
        .next()
        .unwrap_or(rest)
        .trim_end_matches('.');
    let (mut sent, mut received, mut write, mut hit) = (None, None, 0, 0);
    for part in head.split(',') {
        let part = part.trim();
        let (n, what) = part.split_once(' ')?;
        let (n, unit) = count(n)?;
        match what.trim() {
            "sent" => sent = Some((n, unit)),
            "received" => received = Some(n),
            "cache write" => write = n,
            "cache hit" => hit = n,
            _ => {}
        }
    }
    let (sent, unit) = sent?;
    Some(Usage {
        input_tokens: sent.saturating_sub(write + hit),
        output_tokens: received.unwrap_or(0),
        cache_read_input_tokens: hit,
        cache_creation_input_tokens: write,
        // the prompt is `sent`: as precise as Aider printed it
        precision: unit,
        ..Usage::default()
    })
}

/// A run's start, as Aider writes it (local time, no zone: read as UTC).
fn started(s: &str) -> Option<i64> {
    let dt: jiff::civil::DateTime = s.trim().replace(' ', "T").parse().ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_millisecond())
}

#[derive(Default)]
struct Builder {
    messages: Vec<NewMessage>,
    prompt: Vec<String>,
    reply: Vec<String>,
    output: Vec<String>,
    model: Option<String>,
    /// The Aider version of the run (`> Aider v0.68.0`).
    version: Option<(u32, u32)>,
    at: Option<i64>,
    run: usize,
    /// The chat history Aider holds in this run (what it sends besides files and the repo map).
    history: ChatHistory,
    /// The command just typed, whose output follows (kept with it, not a reply).
    command: Option<String>,
    /// What Aider sends beside the history changed since the last message written (a file added or dropped, a new
    /// run): the next message says so.
    changed: bool,
    /// What Aider sends beside the history, as its output told.
    sends: Sends,
    /// The shell commands Aider ran (`> Running npm test`) since their output was last added to the chat.
    ran: Vec<String>,
    /// A many-line output of Aider's own (an edit that failed to apply): sent to the model as the next request when
    /// a reply follows it with no prompt between.
    pending: Option<String>,
    /// The run's main model answers in architect mode (`with architect edit format`): its replies are plans an
    /// editor model carries out.
    architect: bool,
    /// The prompt just sent was `/architect …`: its reply is a plan, in whatever mode the run is.
    architect_once: bool,
    /// The run's editor model (`> Editor model: …`).
    editor_model: Option<String>,
    /// The architect's chat, set aside while its editor's exchange is read ([`Builder::editing`]).
    editing: Option<(Vec<NewMessage>, ChatHistory)>,
    /// The editors' exchanges read so far: each its own conversation, linked to the architect's.
    editors: Vec<Vec<NewMessage>>,
}

/// A text as lines without trailing blanks, blank lines left out: a reply and Aider's `#### ` echo of it compare
/// equal.
fn lines_of(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Where a many-line output of Aider's that starts at `lines[first]` ends. Aider writes an output with `> ` before
/// its first line only and two spaces after its last (`InputOutput.append_chat_history`), so an output line without
/// them goes on to the first line that has them. None when the line ends there, or when what ends with two spaces
/// next is Aider's own line (a prompt, an output, a run's start): then the file is not written that way.
fn continued_to(lines: &[&str], first: usize) -> Option<usize> {
    let ends = |l: &str| l.trim_end_matches('\r').ends_with("  ");
    if ends(lines.get(first)?) {
        return None;
    }
    for (j, l) in lines.iter().enumerate().skip(first + 1) {
        if l.starts_with(RUN) || l.starts_with("####") {
            return None;
        }
        if ends(l) {
            return (!l.starts_with('>')).then_some(j);
        }
    }
    None
}

/// An answer to one of Aider's questions (`Add file to the chat? (Y)es/(N)o/… [Yes]: all`), which some versions log
/// as typed lines.
fn is_answer(prompt: &str) -> bool {
    !prompt.is_empty() && prompt.lines().all(|l| l.contains("(Y)es/(N)o"))
}

/// Whether a prompt is sent to the model: Aider's commands are not, except those that ask with a message; nor are
/// the answers to its questions.
fn is_sent(prompt: &str) -> bool {
    if is_answer(prompt) {
        return false;
    }
    match prompt.strip_prefix('/') {
        None => true,
        Some(rest) => ["ask ", "code ", "architect ", "chat "]
            .iter()
            .any(|c| rest.starts_with(c)),
    }
}

impl Builder {
    fn flush_prompt(&mut self) {
        if self.prompt.is_empty() {
            return;
        }
        let text = self.prompt.join("\n");
        self.prompt.clear();
        if !is_answer(text.trim()) {
            // the user typed again: the editor Aider ran is done
            self.end_editing();
            if self.begins_editing(&text) {
                return;
            }
            if self.echoes_mode_command(&text) {
                return;
            }
            self.architect_once = text.trim_start().starts_with("/architect ");
        }
        let sent = is_sent(text.trim());
        // what follows a command (`/map`, `/run …`) is its output, not a reply
        self.command =
            (!sent && text.trim_start().starts_with('/')).then(|| text.trim().to_string());
        if is_answer(text.trim())
            && let Some(last) = self.messages.last_mut()
        {
            // an answer to Aider's question: kept with the message it was asked after
            if let Some(a) = last.meta.as_object_mut() {
                let answers = a.entry("answers").or_insert_with(|| json!([]));
                if let Some(list) = answers.as_array_mut() {
                    list.push(json!(text.trim()));
                }
            }
            return;
        }
        if sent {
            self.summarise();
        }
        let cleared = matches!(text.trim(), "/clear" | "/reset");
        let tokens = crate::tokens::text(&text);
        let mut m = NewMessage::text(Role::User, text);
        m.created_at = self.at;
        m.meta =
            json!({"source": "aider", "run": self.run, "output": std::mem::take(&mut self.output)});
        self.mark_changed(&mut m);
        self.messages.push(m);
        if sent {
            self.history
                .push(self.messages.len() - 1, tokens, Role::User);
        }
        if cleared {
            self.marker(
                "Aider's chat history was cleared: the next request sends none of it".into(),
                harness_meta("aider", Kept::Nothing, false),
            );
            self.history.clear();
        }
    }

    /// Architect mode (`ArchitectCoder.reply_completed`): Aider hands the architect's reply to an editor model,
    /// logging it as the editor's prompt (the reply again, as `#### ` lines). The editor starts from an empty chat
    /// with the files and no repository map, so its exchange (that prompt, its replies and the edits sent back to it)
    /// is read as a conversation of its own, linked to the architect's; the architect's chat goes on with Aider's
    /// `I made those changes to the files.` and `Ok.` in its place (`move_back_cur_messages`). Whether `text` is
    /// such a hand-off (then it is read so).
    fn begins_editing(&mut self, text: &str) -> bool {
        let Some(plan) = self.messages.last().filter(|m| {
            (self.architect || self.architect_once)
                && m.role == Role::Assistant
                && CairnMeta::kind(&m.meta).is_none()
        }) else {
            return false;
        };
        let answer: String = plan.content.iter().filter_map(Block::as_text).collect();
        let echo = lines_of(text);
        if echo.is_empty() || lines_of(&answer) != echo {
            return false;
        }
        self.synthetic(Role::User, "I made those changes to the files.");
        self.synthetic(Role::Assistant, "Ok.");
        let parent = std::mem::take(&mut self.messages);
        let history = std::mem::take(&mut self.history);
        self.editing = Some((parent, history));
        let mut m = NewMessage::text(Role::User, text.to_string());
        m.created_at = self.at;
        m.meta = json!({"source": "aider", "run": self.run, "editor": true,
                        "output": std::mem::take(&mut self.output)});
        self.messages.push(m);
        self.history.push(0, crate::tokens::text(text), Role::User);
        true
    }

    /// `/ask …`, `/code …`, `/architect …` or `/chat …` runs the message in that mode, and Aider logs the message
    /// again as that coder's prompt (`Commands._generic_chat_command`): one prompt sent, read as the command's.
    /// Whether `text` is that second line.
    fn echoes_mode_command(&self, text: &str) -> bool {
        let Some(last) = self.messages.last().filter(|m| m.role == Role::User) else {
            return false;
        };
        let typed = crate::model::plain_text(&last.content);
        let typed = typed.trim_start();
        let echo = lines_of(text);
        !echo.is_empty()
            && ["/ask ", "/code ", "/architect ", "/chat "]
                .iter()
                .filter_map(|c| typed.strip_prefix(c))
                .any(|m| lines_of(m) == echo)
    }

    /// The editor's exchange is over: it is kept as its own conversation and the architect's chat is read on.
    fn end_editing(&mut self) {
        if let Some((parent, history)) = self.editing.take() {
            self.flush_reply();
            let editor = std::mem::replace(&mut self.messages, parent);
            self.history = history;
            self.editors.push(editor);
        }
    }

    /// The next message written after Aider changed what it sends beside the history says so: the files it sends
    /// (or a new run's repository map) are no longer what was measured before it.
    fn mark_changed(&mut self, m: &mut NewMessage) {
        if std::mem::take(&mut self.changed) {
            let sends = self.sends.key();
            m.meta["cairn"] = crate::model::CairnMeta::ContextChanged {
                sends: Some(&sends),
            }
            .to_value();
        }
    }

    /// Before a request: Aider summarises a history over the model's budget. The summary is not in the file, so
    /// the marker's own text stands in for it.
    fn summarise(&mut self) {
        let window = self
            .model
            .as_deref()
            .map_or(crate::models::DEFAULT_WINDOW, |m| {
                crate::models::window(m, &Default::default(), None).0
            });
        let budget = history::budget(self.version, window);
        let Some(how) = self.history.before_request(budget) else {
            return;
        };
        let (text, kept) = match how {
            Summarised::All => (
                "Aider summarised the chat history before this point (the summary is not in its history file)",
                Kept::Nothing,
            ),
            Summarised::KeptFrom(i) => (
                "Aider summarised the older chat history before this point and kept the newest messages (the \
                 summary is not in its history file)",
                Kept::From(Ref::Depth(i)),
            ),
        };
        let tokens = crate::tokens::text(text);
        self.marker(text.to_string(), unrecorded_harness_meta("aider", kept));
        self.history
            .summarised(&how, self.messages.len() - 1, tokens);
    }

    /// A harness marker: what Aider sent from here on.
    fn marker(&mut self, text: String, cairn: Value) {
        let mut m = note(
            Role::System,
            text,
            json!({"source": "aider", "run": self.run, "cairn": cairn}),
        );
        m.created_at = self.at;
        self.messages.push(m);
    }

    /// A new run after others: Aider starts with an empty chat history (it restores the old one only when asked
    /// to, with `--restore-chat-history`, and then summarises it first), so the model saw nothing of the earlier runs.
    fn restarted(&mut self, at: &str) {
        self.end_editing();
        self.architect = false;
        self.architect_once = false;
        self.editor_model = None;
        self.history.clear();
        self.version = None;
        self.command = None;
        self.changed = true;
        self.sends.run();
        self.ran.clear();
        if self.messages.is_empty() {
            return;
        }
        self.marker(
            format!("Aider started again at {at}: the chat history it sends starts empty"),
            harness_meta("aider", Kept::Nothing, false),
        );
    }

    /// A command's output Aider added to the chat (`Commands.cmd_run`, `Coder.run_shell_commands`): a user message
    /// with the output, and Aider's own `Ok.` after it, in the history from here on. The file has only the command
    /// and how many lines its output had, so the message says that much.
    fn command_output(&mut self, lines: u64) {
        self.unsent();
        self.flush_reply();
        let mut text: Vec<String> = std::mem::take(&mut self.ran)
            .iter()
            .map(|c| format!("Output from {c}"))
            .collect();
        text.push(format!(
            "[{lines} line(s) of output, which Aider's history file does not keep]"
        ));
        let text = text.join("\n");
        let tokens = crate::tokens::text(&text);
        let mut m = NewMessage::text(Role::User, text);
        m.created_at = self.at;
        m.meta = json!({"source": "aider", "run": self.run, "synthetic": true,
                        "output": std::mem::take(&mut self.output)});
        self.mark_changed(&mut m);
        self.messages.push(m);
        self.history
            .push(self.messages.len() - 1, tokens, Role::User);
        self.synthetic(Role::Assistant, "Ok.");
    }

    /// A message Aider adds to the chat in its own words (`Ok.` after a command's output, `I made those changes to
    /// the files.` after an editor's work): in the history from here on, never in the file.
    fn synthetic(&mut self, role: Role, said: &str) {
        let mut m = NewMessage::text(role, said.to_string());
        m.created_at = self.at;
        m.meta = json!({"source": "aider", "run": self.run, "synthetic": true});
        self.messages.push(m);
        self.history
            .push(self.messages.len() - 1, crate::tokens::text(said), role);
    }

    /// What Aider sent in place of a prompt: its own output (`Coder.reflected_message`: the edits that failed to
    /// apply, lint or test errors), added to the chat as a user message. Aider summarises between exchanges
    /// (`Coder.move_back_cur_messages`), never within one: nothing is summarised here.
    fn reflected(&mut self, text: String) {
        let tokens = crate::tokens::text(&text);
        let mut m = NewMessage::text(Role::User, text);
        m.created_at = self.at;
        m.meta = json!({"source": "aider", "run": self.run, "reflected": true,
                        "output": std::mem::take(&mut self.output)});
        self.mark_changed(&mut m);
        self.messages.push(m);
        self.history
            .push(self.messages.len() - 1, tokens, Role::User);
    }

    /// A many-line output no reply followed: kept with the next message like Aider's other output.
    fn unsent(&mut self) {
        if let Some(text) = self.pending.take() {
            self.output.push(text);
        }
    }

    /// A line of Aider's own output (`> …`) at `lines[i]`: a reply's usage, the run's version and model, a file
    /// added or dropped, or a many-line output (kept to see whether a reply follows it). Returns the next line's
    /// index.
    fn output_line(&mut self, lines: &[&str], i: usize, report: &mut ImportReport) -> usize {
        let o = lines[i].trim_end().trim_start_matches('>').trim();
        self.flush_prompt();
        if let Some(u) = tokens_line(o) {
            self.flush_reply();
            match self.messages.last_mut() {
                Some(m) if m.role == Role::Assistant && m.usage.is_none() => m.usage = Some(u),
                _ => report.skip("token lines with no reply before them (kept as metadata)"),
            }
            return i + 1;
        }
        if let Some(v) = history::version(o) {
            self.version = Some(v);
        }
        for key in ["Model: ", "Main model: "] {
            if let Some(m) = o.strip_prefix(key) {
                self.model = m.split(" with ").next().map(str::to_string);
                self.architect = m.contains(" with architect edit format");
                self.sends.model(m);
            }
        }
        if let Some(m) = o.strip_prefix("Editor model: ") {
            self.editor_model = m.split(" with ").next().map(str::to_string);
        }
        if let Some(cmd) = o.strip_prefix("Running ") {
            self.ran.push(cmd.to_string());
        }
        if let Some(lines) = sends::command_output(o) {
            self.output.push(o.to_string());
            self.command_output(lines);
            return i + 1;
        }
        if self.sends.output(o) {
            self.changed = true;
        }
        if self.command.is_none()
            && !o.is_empty()
            && let Some(end) = continued_to(lines, i)
        {
            let rest = lines[i + 1..=end].iter().map(|l| l.trim_end());
            self.unsent();
            self.pending = Some(
                std::iter::once(o)
                    .chain(rest)
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            return end + 1;
        }
        if !o.is_empty() {
            self.output.push(o.to_string());
        }
        i + 1
    }

    fn flush_reply(&mut self) {
        let text = self.reply.join("\n").trim().to_string();
        self.reply.clear();
        if text.is_empty() {
            return;
        }
        if let Some(command) = &self.command
            && let Some(last) = self.messages.last_mut()
            && let Some(meta) = last.meta.as_object_mut()
        {
            meta.insert("command".into(), json!(command));
            meta.insert("command_output".into(), json!(text));
            return;
        }
        // what the chat keeps of the reply: its answer, not the reasoning Aider showed with it
        let (thinking, answer) = reasoning::split(&text);
        let tokens = crate::tokens::text(&answer);
        let mut content = Vec::new();
        if !thinking.is_empty() {
            content.push(Block::Thinking {
                thinking,
                signature: None,
            });
        }
        if !answer.is_empty() || content.is_empty() {
            content.push(Block::Text { text: answer });
        }
        let mut m = NewMessage::new(Role::Assistant, content);
        m.created_at = self.at;
        let model = match &self.editing {
            Some(_) => self.editor_model.as_ref().or(self.model.as_ref()),
            None => self.model.as_ref(),
        };
        m.meta = json!({"source": "aider", "run": self.run, "model": model});
        // architect mode: the editor's reply follows the architect's with Aider's output between them
        self.mark_changed(&mut m);
        self.messages.push(m);
        self.history
            .push(self.messages.len() - 1, tokens, Role::Assistant);
    }
}

pub fn parse(path: &Path, text: &str) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let mut b = Builder::default();
    let mut runs: Vec<Value> = Vec::new();
    let mut in_fence = false;
    let lines: Vec<&str> = text.lines().collect();
    let mut at = 0;
    while let Some(&line) = lines.get(at) {
        at += 1;
        let trimmed = line.trim_end();
        if !in_fence && let Some(t) = trimmed.strip_prefix(RUN) {
            b.unsent();
            b.flush_prompt();
            b.flush_reply();
            b.run += 1;
            b.at = started(t);
            b.restarted(t);
            runs.push(json!({"started": t}));
            continue;
        }
        if !in_fence && let Some(p) = trimmed.strip_prefix("#### ") {
            b.unsent();
            b.flush_reply();
            b.prompt.push(p.to_string());
            continue;
        }
        if !in_fence && (trimmed == "####" || trimmed == "#### ") {
            b.prompt.push(String::new());
            continue;
        }
        if !in_fence && (trimmed.starts_with("> ") || trimmed == ">") {
            at = b.output_line(&lines, at - 1, &mut report);
            continue;
        }
        // the model's reply (a code fence may hold lines that look like Aider's own)
        if !trimmed.is_empty()
            && let Some(sent) = b.pending.take()
        {
            b.reflected(sent);
        }
        b.flush_prompt();
        if trimmed.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        b.reply.push(line.to_string());
    }
    b.unsent();
    b.flush_prompt();
    b.flush_reply();
    b.end_editing();
    if b.messages.is_empty() {
        return Err(FormatError::new(
            path,
            1,
            "an Aider history with no prompt or reply",
        ));
    }
    let messages = super::chain(b.messages);
    report.notes.push(format!(
        "{} run(s); token counts as Aider printed them (rounded)",
        runs.len()
    ));
    Ok(Parsed {
        title: super::title_of(&messages),
        tip: messages.len().checked_sub(1),
        messages,
        checkpoints: Vec::new(),
        meta: json!({"source": "aider", "runs": runs}),
        report,
        children: b
            .editors
            .into_iter()
            .map(|m| {
                let messages = super::chain(m);
                Parsed {
                    title: super::title_of(&messages).map(|t| format!("editor: {t}")),
                    tip: messages.len().checked_sub(1),
                    messages,
                    checkpoints: Vec::new(),
                    meta: json!({"source": "aider", "editor": true}),
                    report: ImportReport::default(),
                    children: Vec::new(),
                }
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_lines_read_as_aider_prints_them() {
        let u = tokens_line("Tokens: 9.7k sent, 85 received. Cost: $0.01 message, $0.01 session.")
            .unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (9_700, 85));
        assert_eq!(u.precision, 100, "9.7k is 9,650 to 9,750");
        let u = tokens_line("Tokens: 12k sent, 2.0k cache write, 8.0k cache hit, 1.5k received. Cost: $0.02 message")
            .unwrap();
        assert_eq!(
            (
                u.input_tokens,
                u.cache_creation_input_tokens,
                u.cache_read_input_tokens,
                u.output_tokens
            ),
            (2_000, 2_000, 8_000, 1_500)
        );
        assert_eq!(u.precision, 1_000, "the prompt is `12k sent`");
        let u = tokens_line("Tokens: 850 sent, 12 received.").unwrap();
        assert_eq!((u.prompt(), u.precision), (850, 1));
        assert_eq!(tokens_line("Tokens: lots"), None);
    }

    #[test]
    fn an_architect_s_editor_is_a_conversation_of_its_own_and_the_architect_hears_it_was_done() {
        let plan = "Change `greet` to take a name.\n\n1. Edit src/lib.rs\n   - add the parameter";
        let echo: String = plan.lines().map(|l| format!("#### {l}  \n")).collect();
        let h = format!(
            "# aider chat started at 2025-08-06 12:06:30\n\n> Aider v0.85.2  \n> Model: gpt-5 with architect edit \
             format  \n> Editor model: gpt-4.1 with editor-whole edit format  \n\n#### make greet take a name  \n\n\
             {plan}\n\n> Tokens: 1.6k sent, 90 received.  \n\n{echo}\nsrc/lib.rs\n```\npub fn greet(name: &str) {{}}\n\
             ```\n\n> Tokens: 1.1k sent, 40 received.  \n> Applied edit to src/lib.rs  \n\n#### thanks  \n\nDone.\n\n\
             > Tokens: 1.8k sent, 5 received.  \n"
        );
        let p = parse(Path::new(".aider.chat.history.md"), &h).unwrap();
        assert_eq!(
            said(&p),
            vec![
                (Role::User, "make greet take a name".to_string()),
                (Role::Assistant, plan.to_string()),
                (Role::User, "I made those changes to the files.".to_string()),
                (Role::Assistant, "Ok.".to_string()),
                (Role::User, "thanks".to_string()),
                (Role::Assistant, "Done.".to_string()),
            ]
        );
        assert_eq!(p.messages[2].message.meta["synthetic"], json!(true));
        assert_eq!(p.messages[1].message.meta["model"], json!("gpt-5"));
        // the editor: the plan as its prompt, its reply by the editor model with what the provider measured
        assert_eq!(p.children.len(), 1);
        let e = &p.children[0];
        assert!(
            e.title
                .as_deref()
                .unwrap()
                .starts_with("editor: Change `greet`")
        );
        assert_eq!(said(e)[0], (Role::User, plan.to_string()));
        let reply = &e.messages[1].message;
        assert_eq!(reply.meta["model"], json!("gpt-4.1"));
        assert_eq!(reply.usage.map(|u| u.prompt()), Some(1_100));
        // without the architect's edit format, or when the prompt is not the reply again, nothing is handed off
        let plain = h.replace("with architect edit format", "with diff edit format");
        let p = parse(Path::new(".aider.chat.history.md"), &plain).unwrap();
        assert!(p.children.is_empty());
        assert_eq!(p.messages[2].message.role, Role::User);
        assert!(crate::model::plain_text(&p.messages[2].message.content).starts_with("Change"));
        // `/architect …` in another mode: that one message is the architect's, its plan handed to the editor
        let once = plain.replace(
            "#### make greet take a name  \n",
            "#### /architect make greet take a name  \n\n#### make greet take a name  \n",
        );
        let p = parse(Path::new(".aider.chat.history.md"), &once).unwrap();
        assert_eq!(p.children.len(), 1);
        assert_eq!(said(&p)[2].1, "I made those changes to the files.");
    }

    #[test]
    fn a_mode_command_s_message_is_sent_once() {
        // `/ask …` runs the message in ask mode, and Aider logs the message again as that coder's prompt
        let h = "# aider chat started at 2024-11-07 20:32:20\n\n> Aider v0.62.0  \n> Main model: claude-3-5-sonnet \
                 with diff edit format  \n\n#### /ask what does this do?  \n\n#### what does this do?  \n\nIt \
                 greets.\n\n> Tokens: 2.3k sent, 5 received.  \n\n#### /code what does this do?  \n\n#### and \
                 this?  \n\nThat too.\n\n> Tokens: 2.4k sent, 5 received.  \n";
        let p = parse(Path::new(".aider.chat.history.md"), h).unwrap();
        assert_eq!(
            said(&p),
            vec![
                (Role::User, "/ask what does this do?".to_string()),
                (Role::Assistant, "It greets.".to_string()),
                (Role::User, "/code what does this do?".to_string()),
                (Role::User, "and this?".to_string()),
                (Role::Assistant, "That too.".to_string()),
            ]
        );
    }

    /// Who said what, message by message.
    fn said(p: &Parsed) -> Vec<(Role, String)> {
        p.messages
            .iter()
            .map(|m| (m.message.role, crate::model::plain_text(&m.message.content)))
            .collect()
    }

    /// The harness markers of a parsed history: (index, what was kept, whether its text is sent).
    fn markers(p: &Parsed) -> Vec<(usize, Value, bool)> {
        p.messages
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let c = m.message.meta.get("cairn")?;
                Some((i, c["kept"].clone(), c["sends_text"].as_bool()?))
            })
            .collect()
    }

    #[test]
    fn commands_and_answers_to_aider_s_questions_are_not_sent() {
        assert!(is_sent("what does this do?"));
        assert!(is_sent("/ask what does this do?"));
        assert!(!is_sent("/add src/main.rs"));
        assert!(!is_sent("/clear"));
        assert!(!is_sent(
            "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all"
        ));
    }

    #[test]
    fn a_file_added_or_dropped_marks_the_next_message_even_between_two_replies() {
        // architect mode: the editor's reply follows the architect's with Aider's output between them
        let text = "# aider chat started at 2026-03-02 10:00:00\n\n> Aider v0.84.0\n\n#### explain it\n\nIt \
                    reads.\n\n> Tokens: 2.3k sent, 5 received.\n> Added src/lib.rs to the chat  \n\nThe editor's \
                    reply.\n\n> Tokens: 6.1k sent, 9 received.\n\n#### and now?\n\nNow.\n\n> Tokens: 6.2k \
                    sent, 3 received.\n> Dropping src/lib.rs from the chat.  \n\n#### again\n\nAgain.\n";
        let p = parse(Path::new("h.md"), text).unwrap();
        let changed: Vec<(String, bool)> = p
            .messages
            .iter()
            .map(|m| {
                (
                    crate::model::plain_text(&m.message.content),
                    crate::model::CairnMeta::context_changed(&m.message.meta),
                )
            })
            .collect();
        assert_eq!(
            changed,
            [
                ("explain it".to_string(), true), // the run's start
                ("It reads.".to_string(), false),
                ("The editor's reply.".to_string(), true),
                ("and now?".to_string(), false),
                ("Now.".to_string(), false),
                ("again".to_string(), true),
                ("Again.".to_string(), false),
            ]
        );
        // each change names what is sent after it: the file dropped sends what the run started with
        let sends: Vec<Option<&str>> = p
            .messages
            .iter()
            .filter(|m| crate::model::CairnMeta::context_changed(&m.message.meta))
            .map(|m| crate::model::CairnMeta::sends(&m.message.meta))
            .collect();
        assert_eq!(sends, [Some(""), Some("\nsrc/lib.rs"), Some("")]);
    }

    #[test]
    fn a_history_s_title_is_its_first_prompt_not_a_command() {
        let text = "# aider chat started at 2026-03-02 10:00:00\n\n#### /map  \n\nsrc/a.rs\n\n#### /add src/a.rs  \n                    > Added src/a.rs to the chat  \n\n#### /usr/bin/env is missing here  \n\nIt is.\n";
        let p = parse(Path::new("h.md"), text).unwrap();
        assert_eq!(p.title.as_deref(), Some("/usr/bin/env is missing here"));
    }

    #[test]
    fn a_command_s_output_aider_added_is_in_the_history_it_sends() {
        // `Coder.run_shell_commands`: the output as a user message and Aider's `Ok.`, which the file does not show
        let text = "# aider chat started at 2026-03-02 10:00:00  \n\n> Aider v0.84.0  \n\n#### set it up  \n\n\
                    Run this:\n\n```bash\nnpm install\n```\n\n> Tokens: 2.3k sent, 50 received.  \n> npm install  \n\
                    > Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n> Running npm install  \n\
                    > Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n\
                    > Added 17 lines of output to the chat.  \n\n#### and now?  \n\nNow.\n\n> Tokens: 3.1k sent, 3 \
                    received.  \n";
        let p = parse(Path::new("h.md"), text).unwrap();
        let shown = said(&p);
        assert_eq!(
            shown[2..],
            [
                (
                    Role::User,
                    "Output from npm install\n[17 line(s) of output, which Aider's history file does not keep]"
                        .to_string()
                ),
                (Role::Assistant, "Ok.".to_string()),
                (Role::User, "and now?".to_string()),
                (Role::Assistant, "Now.".to_string()),
            ]
        );
        // said by the harness, not by the user or the model; and no change of what is sent beside the history
        assert!(super::super::said_by_harness(&p.messages[2].message.meta));
        assert!(!crate::model::CairnMeta::context_changed(
            &p.messages[2].message.meta
        ));
        assert!(p.messages[3].message.usage.is_none());
    }

    #[test]
    fn an_edit_that_failed_is_sent_back_as_the_user_s_not_said_by_the_model() {
        // as Aider writes it: `> ` before an output's first line, two spaces after its last
        let text = "# aider chat started at 2026-03-02 10:00:00  \n\n> Aider v0.84.0  \n\n#### fix it  \n\n\
                    Here is the edit.\n\n> Tokens: 2.3k sent, 50 received.  \n> Applied edit to a.rs  \n\
                    > # 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH \
                    block failed to exactly match lines in a.rs\n<<<<<<< SEARCH\n> quoted\n=======\n\
                    >>>>>>> REPLACE\n\nThe SEARCH section must exactly match an existing block of lines  \n\n\
                    The fixed edit.\n\n> Tokens: 2.6k sent, 40 received.  \n> # 1 SEARCH/REPLACE block \
                    failed to match!\n\nagain  \n\n#### stop  \n\nStopped.\n";
        let p = parse(Path::new("h.md"), text).unwrap();
        let shown = said(&p);
        let error = "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH \
                     block failed to exactly match lines in a.rs\n<<<<<<< SEARCH\n> quoted\n=======\n>>>>>>> \
                     REPLACE\n\nThe SEARCH section must exactly match an existing block of lines";
        assert_eq!(
            shown,
            [
                (Role::User, "fix it".to_string()),
                (Role::Assistant, "Here is the edit.".to_string()),
                (Role::User, error.to_string()),
                (Role::Assistant, "The fixed edit.".to_string()),
                (Role::User, "stop".to_string()),
                (Role::Assistant, "Stopped.".to_string()),
            ]
        );
        assert_eq!(p.messages[2].message.meta["reflected"], true);
        assert_eq!(
            p.messages[3].message.usage.as_ref().map(|u| u.prompt()),
            Some(2_600)
        );
        // an output no reply followed is kept with the next message, as Aider's other output is
        assert_eq!(
            p.messages[4].message.meta["output"],
            json!(["# 1 SEARCH/REPLACE block failed to match!\n\nagain"])
        );
        // a line without the two spaces whose output does not end that way is a line of its own
        let lines = ["> one", "> two  ", "reply"];
        assert_eq!(continued_to(&lines, 0), None);
        assert_eq!(continued_to(&["> one", "", "two  "], 0), Some(2));
        assert_eq!(continued_to(&["> one", "#### hi  "], 0), None);
    }

    #[test]
    fn a_command_s_output_and_an_answer_are_kept_with_their_message_not_as_replies() {
        let text = "# aider chat started at 2026-03-02 10:00:00\n\n> Aider v0.84.0\n\n#### /map\n\nHere are \
                    summaries of some files present in my git repository.\nsrc/main.rs\n\n#### add a flag\n\n\
                    #### Add file to the chat? (Y)es/(N)o [Yes]: y\n\nDone.\n\n> Tokens: 2.3k sent, 5 \
                    received.\n";
        let p = parse(Path::new("h.md"), text).unwrap();
        let shown = said(&p);
        assert_eq!(
            shown,
            vec![
                (Role::User, "/map".to_string()),
                (Role::User, "add a flag".to_string()),
                (Role::Assistant, "Done.".to_string())
            ]
        );
        let meta = &p.messages[0].message.meta;
        assert!(
            meta["command_output"]
                .as_str()
                .is_some_and(|o| o.starts_with("Here are summaries"))
        );
        assert_eq!(
            p.messages[1].message.meta["answers"][0],
            "Add file to the chat? (Y)es/(N)o [Yes]: y"
        );
        assert!(p.messages[2].message.usage.is_some());
    }

    #[test]
    fn a_new_run_and_a_clear_send_nothing_of_the_history_before() {
        let text = "# aider chat started at 2026-03-02 10:00:00\n\n> Aider v0.84.0\n> Main model: \
                    claude-sonnet-4-6 with diff edit format\n\n#### hello\n\nHi.\n\n> Tokens: 2.3k sent, 5 \
                    received.\n\n#### /clear\n\n#### again\n\nYes.\n\n# aider chat started at 2026-03-03 \
                    09:00:00\n\n> Aider v0.84.0\n\n#### next day\n\nOk.\n";
        let p = parse(Path::new("h.md"), text).unwrap();
        let roles: Vec<Role> = p.messages.iter().map(|m| m.message.role).collect();
        use Role::{Assistant as A, System as S, User as U};
        assert_eq!(roles, vec![U, A, U, S, U, A, S, U, A]);
        assert_eq!(
            markers(&p),
            vec![(3, Value::Null, false), (6, Value::Null, false)]
        );
    }

    #[test]
    fn a_long_run_is_summarised_where_aider_would_and_keeps_the_newest_exchanges() {
        // Aider 0.68 keeps 2,048 tokens of chat for a 200k window: twenty exchanges of ~200 tokens pass it
        let mut text = String::from(
            "# aider chat started at 2026-03-02 10:00:00\n\n> Aider v0.68.0\n> Main model: \
             claude-3-5-sonnet-20241022 with diff edit format\n\n",
        );
        let words = "the quick brown fox jumps over the lazy dog ".repeat(10);
        for i in 0..20 {
            text.push_str(&format!(
                "#### question {i}: {words}\n\nanswer {i}: {words}\n\n"
            ));
        }
        let p = parse(Path::new("h.md"), &text).unwrap();
        let m = markers(&p);
        assert!(
            m.iter().any(|(_, kept, _)| kept.get("from").is_some()),
            "no summary that keeps a tail: {m:?}"
        );
        for (at, kept, sends) in &m {
            assert!(sends, "a summary is sent");
            // the next message is the prompt the summary was made for
            assert_eq!(p.messages[at + 1].message.role, Role::User);
            // a kept tail starts at a prompt after a reply, before the marker
            let Some(from) = kept.get("from").and_then(Value::as_u64) else {
                continue;
            };
            let from = from as usize;
            assert!(from < *at);
            assert_eq!(p.messages[from].message.role, Role::User);
            assert_eq!(p.messages[from - 1].message.role, Role::Assistant);
        }
        // the same history under Aider 0.84 (8k of chat) is never summarised
        let newer = text.replace("v0.68.0", "v0.84.0");
        assert!(markers(&parse(Path::new("h.md"), &newer).unwrap()).is_empty());
    }
}
