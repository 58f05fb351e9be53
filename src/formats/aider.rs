//! Aider's chat history (`.aider.chat.history.md` in the project): Markdown appended run after run. `# aider chat
//! started at <time>` opens a run; `#### ` lines are what the user typed (consecutive ones one prompt); `> ` lines
//! are Aider's own output (file prompts, warnings, the model in use), kept as metadata with the message they
//! precede; everything else is the model's reply. After a reply, `> Tokens: 9.7k sent, 85 received. Cost: $0.01
//! message, $0.01 session.` is its usage as Aider printed it (rounded to hundreds above a thousand; newer versions
//! add `… cache write, … cache hit`). The model comes from the run's `> Model:` / `> Main model:` line.
//! A file is one conversation, its runs one chain; each message takes its run's start time.

use std::path::Path;

use serde_json::{Value, json};

use super::{FormatError, ImportReport, Parsed};
use crate::model::{NewMessage, Role, Usage};

const RUN: &str = "# aider chat started at ";

/// Whether a text is an Aider chat history.
pub fn is_aider(text: &str) -> bool {
    text.trim_start().starts_with(RUN)
}

/// A count as Aider prints it: `85`, `9.7k`, `1.2M`.
fn count(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches(',');
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1_000.0),
        'm' | 'M' => (&s[..s.len() - 1], 1_000_000.0),
        _ => (s, 1.0),
    };
    let v: f64 = num.replace(',', "").parse().ok()?;
    Some((v * mult).round() as u64)
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
        let n = count(n)?;
        match what.trim() {
            "sent" => sent = Some(n),
            "received" => received = Some(n),
            "cache write" => write = n,
            "cache hit" => hit = n,
            _ => {}
        }
    }
    let sent = sent?;
    Some(Usage {
        input_tokens: sent.saturating_sub(write + hit),
        output_tokens: received.unwrap_or(0),
        cache_read_input_tokens: hit,
        cache_creation_input_tokens: write,
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

struct Builder {
    messages: Vec<NewMessage>,
    prompt: Vec<String>,
    reply: Vec<String>,
    output: Vec<String>,
    model: Option<String>,
    at: Option<i64>,
    run: usize,
}

impl Builder {
    fn flush_prompt(&mut self) {
        if self.prompt.is_empty() {
            return;
        }
        let mut m = NewMessage::text(Role::User, self.prompt.join("\n"));
        m.created_at = self.at;
        m.meta =
            json!({"source": "aider", "run": self.run, "output": std::mem::take(&mut self.output)});
        self.messages.push(m);
        self.prompt.clear();
    }

    fn flush_reply(&mut self) {
        let text = self.reply.join("\n").trim().to_string();
        self.reply.clear();
        if text.is_empty() {
            return;
        }
        let mut m = NewMessage::text(Role::Assistant, text);
        m.created_at = self.at;
        m.meta = json!({"source": "aider", "run": self.run, "model": self.model});
        self.messages.push(m);
    }
}

pub fn parse(path: &Path, text: &str) -> Result<Parsed, FormatError> {
    let mut report = ImportReport::default();
    let mut b = Builder {
        messages: Vec::new(),
        prompt: Vec::new(),
        reply: Vec::new(),
        output: Vec::new(),
        model: None,
        at: None,
        run: 0,
    };
    let mut runs: Vec<Value> = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_end();
        if !in_fence && let Some(t) = trimmed.strip_prefix(RUN) {
            b.flush_prompt();
            b.flush_reply();
            b.run += 1;
            b.at = started(t);
            runs.push(json!({"started": t}));
            continue;
        }
        if !in_fence && let Some(p) = trimmed.strip_prefix("#### ") {
            b.flush_reply();
            b.prompt.push(p.to_string());
            continue;
        }
        if !in_fence && (trimmed == "####" || trimmed == "#### ") {
            b.prompt.push(String::new());
            continue;
        }
        if !in_fence && (trimmed.starts_with("> ") || trimmed == ">") {
            let o = trimmed.trim_start_matches('>').trim();
            b.flush_prompt();
            if let Some(u) = tokens_line(o) {
                b.flush_reply();
                match b.messages.last_mut() {
                    Some(m) if m.role == Role::Assistant && m.usage.is_none() => m.usage = Some(u),
                    _ => report.skip("token lines with no reply before them (kept as metadata)"),
                }
                continue;
            }
            for key in ["Model: ", "Main model: "] {
                if let Some(m) = o.strip_prefix(key) {
                    b.model = m.split(" with ").next().map(str::to_string);
                }
            }
            if !o.is_empty() {
                b.output.push(o.to_string());
            }
            continue;
        }
        // the model's reply (a code fence may hold lines that look like Aider's own)
        b.flush_prompt();
        if trimmed.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        b.reply.push(line.to_string());
    }
    b.flush_prompt();
    b.flush_reply();
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
        children: Vec::new(),
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
        assert_eq!(tokens_line("Tokens: lots"), None);
    }
}
