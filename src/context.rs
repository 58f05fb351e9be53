//! `/context`: what the model would see on a conversation's active path, in tokens: system, tool definitions
//! (the calibrated overhead harnesses send but do not record), messages by kind, the cached prefix, estimated
//! against last measured, free space, and what each rung of the reclaim ladder would take back right now.
//! Read-only: nothing here writes to the store.

use serde::Serialize;

use crate::model::{Message, Role};
use crate::tokens::{self, BlockKind, Calibration};

/// Context windows by model family (tokens), longest prefix match; the default is 200k.
pub const WINDOWS: &[(&str, u64)] = &[
    ("claude", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("gemini", 1_048_576),
    ("SmolLM", 8_192),
];

pub fn window_of(model: &str) -> u64 {
    WINDOWS
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map_or(200_000, |(_, w)| *w)
}

/// Ladder defaults (see the reclaim-ladder docs).
pub const PROTECT_TOKENS: u64 = 40_000;
pub const MIN_ELIDE_TOKENS: u64 = 50;
pub const ELIDE_WORTH_IT: u64 = 20_000;
/// A placeholder for an elided result or pruned image costs about this much.
pub const PLACEHOLDER_TOKENS: u64 = 20;
/// What a summary is asked to fit in.
pub const SUMMARY_TOKENS: u64 = 2_000;
/// The reply's reserve inside the window.
pub const REPLY_RESERVE: u64 = 16_000;

#[derive(Debug, Clone, Default, Serialize)]
pub struct ByKind {
    pub text: u64,
    pub tool_use: u64,
    pub tool_results: u64,
    pub images: u64,
    pub thinking: u64,
    pub other: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rung {
    pub name: &'static str,
    /// Tokens it would take back now.
    pub saves: u64,
    /// What it would touch (tool results elided, images removed, messages imaged or summarised).
    pub items: usize,
    pub model_calls: u32,
    /// Whether it runs at the default settings (elision waits until it saves enough).
    pub would_run: bool,
    pub note: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub model: String,
    pub window: u64,
    pub reply_reserve: u64,
    pub system: u64,
    /// Tool definitions and other unrecorded overhead, from the calibration (0 when not calibrated).
    pub tools_and_overhead: u64,
    pub messages: ByKind,
    pub estimated_total: u64,
    /// Input + cache tokens the provider measured for the newest reply that carries usage.
    pub last_measured: Option<u64>,
    /// The prompt cache would still hit through this message (the newest reply a request was measured for).
    pub cached_through: Option<String>,
    pub cached_tokens: u64,
    pub free: i64,
    pub rungs: Vec<Rung>,
    pub calibration: Option<Calibration>,
}

/// Index where the protect window (the newest `protect` tokens) starts.
pub(crate) fn protect_start(path: &[Message], protect: u64) -> usize {
    let mut used = 0;
    let mut i = path.len();
    while i > 0 {
        let t = tokens::message(&path[i - 1]);
        if used + t > protect {
            break;
        }
        used += t;
        i -= 1;
    }
    i
}

/// The snapshot's cut: the head is the first turn, the tail the newest turns in the protect window; both cut at
/// turn boundaries. Returns the middle as a range.
pub fn snapshot_middle(path: &[Message], protect: u64) -> std::ops::Range<usize> {
    let head_end = path
        .iter()
        .position(Message::ends_turn)
        .map_or(0, |i| i + 1);
    let mut tail = protect_start(path, protect).max(head_end);
    // move the tail's start forward to just after a turn boundary
    while tail > head_end && tail < path.len() && !path[tail - 1].ends_turn() {
        tail += 1;
    }
    head_end..tail.min(path.len()).max(head_end)
}

pub fn report(path: &[Message], model: Option<&str>, calibration: Option<Calibration>) -> Report {
    let model = model
        .map(str::to_string)
        .or_else(|| {
            path.iter()
                .rev()
                .find(|m| m.role == Role::Assistant)
                .map(tokens::model_of)
        })
        .unwrap_or_else(|| "unknown".into());
    let window = window_of(&model);
    // What would be sent: the stored path with the compaction markers on it applied.
    let assembled = crate::compact::assemble(path, &|_| None);
    let mut by = ByKind::default();
    let mut system = 0;
    for m in &assembled.messages {
        if m.role == Role::System {
            system += m.content.iter().map(tokens::block).sum::<u64>() + tokens::MESSAGE_OVERHEAD;
            continue;
        }
        for b in &m.content {
            let t = tokens::block(b);
            match tokens::block_kind(b) {
                BlockKind::Text => by.text += t,
                BlockKind::ToolUse => by.tool_use += t,
                BlockKind::ToolResult => by.tool_results += t,
                BlockKind::Image => {}
                BlockKind::Thinking => by.thinking += t,
                BlockKind::Other => by.other += t,
            }
        }
        by.text += tokens::MESSAGE_OVERHEAD;
    }
    by.images = assembled.tally.image_tokens;
    let correction = calibration
        .as_ref()
        .map(|c| c.correction)
        .unwrap_or_default();
    let raw: u64 =
        system + by.text + by.tool_use + by.tool_results + by.images + by.thinking + by.other;
    let estimated_total = if calibration.is_some() {
        correction.apply(raw)
    } else {
        raw
    };
    let overhead = estimated_total.saturating_sub(raw);
    let measured_at = path.iter().rposition(|m| {
        m.usage
            .is_some_and(|u| u.input_tokens + u.cache_read_input_tokens > 0)
    });
    let last_measured = measured_at
        .and_then(|i| path[i].usage)
        .map(|u| u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens);
    let (cached_through, cached_tokens) = match measured_at {
        Some(i) if i > 0 => (
            Some(path[i - 1].id.clone()),
            path[..i].iter().map(tokens::message).sum(),
        ),
        _ => (None, 0),
    };
    let rungs = rungs(path);
    Report {
        free: window as i64 - REPLY_RESERVE as i64 - estimated_total as i64,
        model,
        window,
        reply_reserve: REPLY_RESERVE,
        system,
        tools_and_overhead: overhead,
        messages: by,
        estimated_total,
        last_measured,
        cached_through,
        cached_tokens,
        rungs,
        calibration,
    }
}

/// What each rung would take back now (each alone, on the path as it stands, markers included).
pub fn rungs(path: &[Message]) -> Vec<Rung> {
    use crate::compact::{Strategy, plan};
    let summary = "summary ".repeat((SUMMARY_TOKENS as usize) / 2);
    Strategy::LADDER
        .into_iter()
        .map(|s| {
            let text = (s == Strategy::Summary).then_some(summary.as_str());
            let forced = plan(path, s, true, text, PROTECT_TOKENS);
            let runs = plan(path, s, false, text, PROTECT_TOKENS).is_some();
            let (saves, items) = forced.as_ref().map_or((0, 0), |p| (p.saves, p.items));
            Rung {
                name: s.name(),
                saves,
                items,
                model_calls: u32::from(s == Strategy::Summary),
                would_run: runs,
                note: match s {
                    Strategy::Elide => format!(
                        "successful tool results over {MIN_ELIDE_TOKENS} tokens outside the newest {PROTECT_TOKENS}; runs when it saves {ELIDE_WORTH_IT}"
                    ),
                    Strategy::Images => {
                        "images outside the protect window, each replaced by a one-line note".into()
                    }
                    Strategy::Snapshot => {
                        "the middle (after the first turn, before the protect window) as pages (claude-hires, 5x8)".into()
                    }
                    Strategy::Summary => format!(
                        "the same middle summarised in about {SUMMARY_TOKENS} tokens by one model call"
                    ),
                },
            }
        })
        .collect()
}

/// Calibrates on every conversation of a store.
pub fn calibrate_store(
    store: &crate::store::Store,
) -> Result<Vec<Calibration>, crate::store::StoreError> {
    let paths: Vec<Vec<Message>> = store
        .conversations()?
        .iter()
        .map(|c| store.active_path(&c.id))
        .collect::<Result<_, _>>()?;
    Ok(calibrate_paths(&paths))
}

/// Calibrates the estimate per model on every conversation's active path.
pub fn calibrate_paths(paths: &[Vec<Message>]) -> Vec<Calibration> {
    let mut by_model: std::collections::BTreeMap<String, Vec<tokens::Sample>> = Default::default();
    for (g, p) in paths.iter().enumerate() {
        for (model, s) in tokens::samples_of_path(p, g as u32) {
            by_model.entry(model).or_default().push(s);
        }
    }
    by_model
        .iter()
        .map(|(m, s)| tokens::calibrate(m, s))
        .collect()
}
