//! When and how far to compact, for one model: its context window, the reply's reserve, the threshold past which
//! `send` compacts first, the target the ladder compacts down to, the protect window no rung touches, and the
//! snapshot's page profile. Defined once from the settings file and the model, and used by every command.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::marker::Shape;
use super::{PROTECT_TOKENS, REPLY_RESERVE};
use crate::render::{self, Profile};

/// Context windows by model family (tokens), longest matching prefix first; the default is 200k.
pub const WINDOWS: &[(&str, u64)] = &[
    ("claude", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gemini", 1_048_576),
    ("SmolLM", 8_192),
];

pub const DEFAULT_WINDOW: u64 = 200_000;

/// Model families that drop the thinking of earlier turns from their context: OpenAI's reasoning models (only
/// the current turn's reasoning items are sent back) and the Claude 3 models. Claude 4 and later keep it: replayed
/// Claude Code and pi sessions show the measured prompt does not shrink when a new prompt follows a turn with
/// thinking.
pub const DROP_PAST_THINKING: &[&str] = &["gpt-", "o1", "o3", "o4", "codex", "claude-3"];

pub fn keeps_past_thinking(model: &str) -> bool {
    !DROP_PAST_THINKING.iter().any(|p| model.starts_with(p))
}

/// The estimator's scale for a model family that has no fit: tokenizers differ. Anthropic documents that Opus 4.7
/// and later (and the Fable, Mythos and Sonnet 5 models) use a newer tokenizer giving about 30% more tokens for
/// the same text than earlier Claude models.
pub const DEFAULT_SCALES: &[(&str, f64)] = &[
    ("claude-opus-4-7", 1.3),
    ("claude-opus-5", 1.3),
    ("claude-sonnet-5", 1.3),
    ("claude-fable", 1.3),
    ("claude-mythos", 1.3),
];

/// A model's default scale (longest matching prefix), else 1.
pub fn default_scale(model: &str) -> f64 {
    DEFAULT_SCALES
        .iter()
        .filter(|(p, _)| model.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map_or(1.0, |(_, s)| *s)
}
/// Shares of the usable window (window less the reply's reserve): past the threshold `send` compacts first, down
/// to the target.
pub const THRESHOLD_SHARE: f64 = 0.8;
pub const TARGET_SHARE: f64 = 0.5;

/// The settings that shape cairn's choices, as the settings file (`config.json`) holds them. The shells read the
/// file; [`Settings::parse`] validates it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The provider and model `send` and the summary rung use.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Shares of the usable window (0 < target < threshold <= 1).
    pub threshold: Option<f64>,
    pub target: Option<f64>,
    /// The protect window, in tokens.
    pub protect: Option<u64>,
    pub reply_reserve: Option<u64>,
    /// Context windows by model-name prefix, over the built-in table.
    pub windows: BTreeMap<String, u64>,
    /// The snapshot's page profile (claude-hires, claude, claude-many, openai, gemini).
    pub profile: Option<String>,
    /// List prices by model name (dates stripped), over the built-in table ([`crate::pricing`]).
    pub prices: BTreeMap<String, crate::pricing::Price>,
    /// The snapshot's page shape ([`crate::render::shape`]) instead of the model family's default.
    pub shape: Option<String>,
}

impl Settings {
    /// Reads and checks settings JSON; the error says which setting is wrong (the caller adds the file).
    pub fn parse(text: &str) -> Result<Settings, String> {
        let s: Settings =
            serde_json::from_str(text).map_err(|e| format!("line {}: {e}", e.line()))?;
        let (threshold, target) = (
            s.threshold.unwrap_or(THRESHOLD_SHARE),
            s.target.unwrap_or(TARGET_SHARE),
        );
        if !(0.0 < target && target < threshold && threshold <= 1.0) {
            return Err(format!(
                "\"threshold\" {threshold} and \"target\" {target}: need 0 < target < threshold <= 1"
            ));
        }
        if let Some(sh) = &s.shape
            && render::shape::by_name(sh).is_none()
        {
            return Err(format!("\"shape\" {sh:?}: {}", render::shape::names()));
        }
        if let Some(p) = &s.profile
            && render::profile::by_name(p).is_none()
        {
            return Err(format!(
                "\"profile\" {p:?}: claude-hires, claude, claude-many, openai or gemini"
            ));
        }
        Ok(s)
    }

    /// The window of a model: the settings' table, then the built-in one (longest matching prefix), else 200k.
    pub fn window_of(&self, model: &str) -> u64 {
        let own = self
            .windows
            .iter()
            .filter(|(p, _)| model.starts_with(p.as_str()))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, w)| *w);
        own.unwrap_or_else(|| window_of(model))
    }
}

/// The built-in window of a model (longest matching prefix), else 200k.
pub fn window_of(model: &str) -> u64 {
    WINDOWS
        .iter()
        .filter(|(p, _)| model.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map_or(DEFAULT_WINDOW, |(_, w)| *w)
}

/// The choices for one model.
#[derive(Debug, Clone, Serialize)]
pub struct Policy {
    pub model: String,
    pub window: u64,
    pub reply_reserve: u64,
    pub threshold: f64,
    pub target: f64,
    pub protect: u64,
    #[serde(skip)]
    pub profile: &'static Profile,
    /// The page shape: the settings' or `--shape`'s, else the model family's default.
    pub shape: Option<String>,
}

impl Policy {
    /// The policy for `model` (the path's newest reply's, usually) under `settings`; `window` overrides the
    /// model's.
    pub fn new(settings: &Settings, model: Option<&str>, window: Option<u64>) -> Policy {
        let model = model.unwrap_or("unknown").to_string();
        let model_name = model.clone();
        Policy {
            window: window.unwrap_or_else(|| settings.window_of(&model)),
            model,
            reply_reserve: settings.reply_reserve.unwrap_or(REPLY_RESERVE),
            threshold: settings.threshold.unwrap_or(THRESHOLD_SHARE),
            target: settings.target.unwrap_or(TARGET_SHARE),
            protect: settings.protect.unwrap_or(PROTECT_TOKENS),
            profile: settings
                .profile
                .as_deref()
                .and_then(render::profile::by_name)
                .unwrap_or_else(|| render::shape::profile_for_model(&model_name)),
            shape: Some(
                settings
                    .shape
                    .clone()
                    .unwrap_or_else(|| render::shape::for_model(&model_name).name.to_string()),
            ),
        }
    }

    /// The window less the reply's reserve.
    pub fn usable(&self) -> u64 {
        self.window.saturating_sub(self.reply_reserve)
    }

    /// Past this many tokens `send` compacts first.
    pub fn threshold_tokens(&self) -> u64 {
        (self.usable() as f64 * self.threshold) as u64
    }

    /// What the ladder compacts down to (and the comparison's default budget).
    pub fn target_tokens(&self) -> u64 {
        (self.usable() as f64 * self.target) as u64
    }

    /// The protect window for a budget: the policy's, or half the budget when that is smaller (a window larger
    /// than the budget could never be reached).
    pub fn protect_for(&self, budget: u64) -> u64 {
        self.protect.min(budget / 2)
    }

    /// The snapshot's page shape.
    pub fn shape(&self) -> Shape {
        Shape {
            profile: self.profile.name.to_string(),
            cell: None,
            name: self.shape.clone(),
        }
    }

    /// How the rungs run against a budget.
    pub fn rung_options(&self, budget: u64) -> super::rungs::RungOptions {
        super::rungs::RungOptions {
            protect: self.protect_for(budget),
            shape: self.shape(),
            range: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_take_the_longest_prefix_and_the_settings_first() {
        assert_eq!(window_of("gpt-4.1-mini"), 1_047_576);
        assert_eq!(window_of("claude-opus-4-5"), 200_000);
        assert_eq!(window_of("mystery"), DEFAULT_WINDOW);
        let s = Settings::parse(r#"{"windows": {"claude-sonnet-4-5": 1000000}}"#).unwrap();
        assert_eq!(s.window_of("claude-sonnet-4-5-20250929"), 1_000_000);
        assert_eq!(s.window_of("claude-opus-4-5"), 200_000);
    }

    #[test]
    fn bad_shares_are_refused_naming_them() {
        let e = Settings::parse(r#"{"threshold": 0.4, "target": 0.6}"#).unwrap_err();
        assert!(e.contains("\"threshold\" 0.4"), "{e}");
        let e = Settings::parse(r#"{"threshold": "high"}"#).unwrap_err();
        assert!(e.starts_with("line 1"), "{e}");
        let p = Policy::new(&Settings::default(), Some("claude-x"), None);
        assert_eq!(p.usable(), 184_000);
        assert_eq!(p.target_tokens(), 92_000);
        assert_eq!(p.protect_for(20_000), 10_000);
    }
}
