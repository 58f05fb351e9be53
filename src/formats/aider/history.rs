//! The chat history Aider sends, as Aider keeps it (`aider/history.py`, `Coder.summarize_start`): the messages of
//! the run so far, until they pass the model's history budget; then, before the next request, the oldest are
//! replaced by one summary and only a tail of the newest is kept verbatim. The history file records what was said,
//! not what was sent, so the reader replays this rule to place a harness marker where Aider summarised. The
//! summary itself is never written to the file: the marker stands in for it.

use crate::model::Role;

/// Aider's version, as its run header prints it (`> Aider v0.68.0`).
pub fn version(line: &str) -> Option<(u32, u32)> {
    let v = line.strip_prefix("Aider v")?;
    let mut parts = v.split(['.', ' ', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The history budget of a model with this input window under this Aider version (`Model.max_chat_history_tokens`):
/// before 0.71, 1k for windows under 32k and 2k above; since, a sixteenth of the window between 1k and 8k. An
/// unknown version is taken as a current one.
pub fn budget(version: Option<(u32, u32)>, window: u64) -> u64 {
    match version {
        Some(v) if v < (0, 71) => {
            if window < 32 * 1024 {
                1024
            } else {
                2048
            }
        }
        _ => (window / 16).clamp(1024, 8192),
    }
}

/// A message of the history: its index among the reader's messages, its tokens, its role.
#[derive(Debug, Clone, Copy)]
struct Held {
    index: usize,
    tokens: u64,
    role: Role,
}

/// What Aider did to its history before a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Summarised {
    /// Everything so far became the summary.
    All,
    /// The messages before this index became the summary; this one and those after are sent as they are.
    KeptFrom(usize),
}

/// The history of one run.
#[derive(Debug, Default)]
pub struct ChatHistory {
    held: Vec<Held>,
}

/// `ChatSummary.summarize_real`: at most this many messages are always summarised whole.
const MIN_SPLIT: usize = 4;

impl ChatHistory {
    /// A new run, or `/clear`: nothing is held.
    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// A message that entered the history (a prompt once answered, a reply, a summary).
    pub fn push(&mut self, index: usize, tokens: u64, role: Role) {
        self.held.push(Held {
            index,
            tokens,
            role,
        });
    }

    fn total(&self) -> u64 {
        self.held.iter().map(|h| h.tokens).sum()
    }

    /// Before a request: whether Aider summarised the history (over `budget`), and what it kept. The caller then
    /// records the summary (at its own index) with [`ChatHistory::summarised`].
    pub fn before_request(&self, budget: u64) -> Option<Summarised> {
        if self.total() <= budget {
            return None;
        }
        let n = self.held.len();
        if n <= MIN_SPLIT {
            return Some(Summarised::All);
        }
        // the newest messages that fit in half the budget
        let (mut tail, mut split) = (0u64, n);
        for i in (0..n).rev() {
            if tail + self.held[i].tokens < budget / 2 {
                tail += self.held[i].tokens;
                split = i;
            } else {
                break;
            }
        }
        // the summarised head ends with a reply
        while split > 1 && self.held[split - 1].role != Role::Assistant {
            split -= 1;
        }
        if split <= MIN_SPLIT || split >= n {
            return Some(Summarised::All);
        }
        Some(Summarised::KeptFrom(self.held[split].index))
    }

    /// The summary replaced what it summarised: the history is now the summary and what was kept.
    pub fn summarised(&mut self, how: &Summarised, summary_index: usize, summary_tokens: u64) {
        let kept: Vec<Held> = match how {
            Summarised::All => Vec::new(),
            Summarised::KeptFrom(from) => self
                .held
                .iter()
                .filter(|h| h.index >= *from)
                .copied()
                .collect(),
        };
        self.held = vec![Held {
            index: summary_index,
            tokens: summary_tokens,
            role: Role::User,
        }];
        self.held.extend(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_follows_the_version_that_wrote_the_file() {
        assert_eq!(version("Aider v0.68.0"), Some((0, 68)));
        assert_eq!(version("Aider v0.84.0"), Some((0, 84)));
        assert_eq!(version("Aider v1.2.3-dev"), Some((1, 2)));
        assert_eq!(version("Model: x"), None);
        assert_eq!(budget(Some((0, 68)), 200_000), 2048);
        assert_eq!(budget(Some((0, 68)), 16_000), 1024);
        assert_eq!(budget(Some((0, 84)), 200_000), 8192);
        assert_eq!(budget(Some((0, 84)), 32_000), 2000);
        assert_eq!(budget(None, 8_000), 1024);
    }

    #[test]
    fn a_history_over_budget_keeps_its_newest_half_from_a_prompt() {
        let mut h = ChatHistory::default();
        // six exchanges of 300 + 300 tokens: 3,600 over a 2,048 budget
        for i in 0..12 {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            h.push(i, 300, role);
        }
        assert_eq!(h.before_request(4096), None);
        // under half the budget (1,024): the last three messages fit (900), the head must end with a reply,
        // so the split moves back to the prompt at index 8
        assert_eq!(h.before_request(2048), Some(Summarised::KeptFrom(8)));
        h.summarised(&Summarised::KeptFrom(8), 12, 100);
        assert_eq!(h.total(), 100 + 4 * 300);
        assert_eq!(h.before_request(2048), None);
        // a short history over budget is summarised whole
        let mut short = ChatHistory::default();
        short.push(0, 3000, Role::User);
        short.push(1, 3000, Role::Assistant);
        assert_eq!(short.before_request(2048), Some(Summarised::All));
    }
}
