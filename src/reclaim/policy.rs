//! When and how far to compact, for one model: its context window, the reply's reserve, the threshold past which
//! `send` compacts first, the target the ladder compacts down to, the protect window no rung touches, and the
//! snapshot's page profile. Defined once from the settings file and the model, and used by every command.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::marker::Shape;
use super::{PROTECT_TOKENS, REPLY_RESERVE};
use crate::render::{self, Profile};

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
    /// List prices by model name (dates stripped), over the catalog's ([`crate::models::price`]).
    pub prices: BTreeMap<String, crate::models::Price>,
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

    /// The window of a model: the settings' table (longest matching prefix), else the catalog's
    /// ([`crate::models::window`]).
    pub fn window_of(&self, model: &str) -> u64 {
        crate::models::window(model, &self.windows, None).0
    }
}

/// The choices for one model.
#[derive(Debug, Clone, Serialize)]
pub struct Policy {
    pub model: String,
    pub window: u64,
    /// Where the window came from (the settings, the catalog, the largest prompt measured, a default).
    pub window_source: crate::models::Source,
    pub reply_reserve: u64,
    pub threshold: f64,
    pub target: f64,
    pub protect: u64,
    #[serde(skip)]
    pub profile: &'static Profile,
    /// The page shape: the settings' or `--shape`'s, else the model family's default.
    pub shape: String,
}

impl Policy {
    /// The policy for `model` (the path's newest reply's, usually) under `settings`; `window` overrides the
    /// model's; `measured` is the largest prompt a provider measured for the model (its window is no smaller).
    pub fn new(
        settings: &Settings,
        model: Option<&str>,
        window: Option<u64>,
        measured: Option<u64>,
    ) -> Policy {
        let model = model.unwrap_or("unknown").to_string();
        let model_name = model.clone();
        let (own, source) = crate::models::window(&model, &settings.windows, measured);
        Policy {
            window: window.unwrap_or(own),
            window_source: if window.is_some() {
                crate::models::Source::Settings
            } else {
                source
            },
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
            shape: settings
                .shape
                .clone()
                .unwrap_or_else(|| render::shape::for_model(&model_name).name.to_string()),
        }
    }

    /// The window the harness that wrote the conversation ran its model with, where it said so (Codex's
    /// `model_context_window`): the conversation's prompts were held to it, so its threshold and target are drawn
    /// from it rather than from the model's own window. A window from the settings, or given for the command,
    /// still comes first; the store's measurements of the model elsewhere do not raise it.
    pub fn ran_with(mut self, window: Option<u64>) -> Policy {
        if let Some(w) = window
            && self.window_source != crate::models::Source::Settings
        {
            self.window = w;
            self.window_source = crate::models::Source::Harness;
        }
        self
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

    /// The page shape drawn: the policy's, or the first shape when its name is none cairn has.
    pub fn page_shape(&self) -> &'static render::shape::PageShape {
        render::shape::by_name(&self.shape).unwrap_or(&render::shape::SHAPES[0])
    }

    /// The snapshot's page shape.
    pub fn shape(&self) -> Shape {
        Shape {
            profile: self.profile.name.to_string(),
            cell: None,
            name: Some(self.shape.clone()),
        }
    }

    /// How the rungs run against a budget.
    pub fn rung_options(&self, budget: u64) -> super::rungs::RungOptions {
        super::rungs::RungOptions {
            protect: self.protect_for(budget),
            shape: self.shape(),
            range: None,
            model: Some(self.model.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_take_the_longest_prefix_and_the_settings_first() {
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
        let p = Policy::new(&Settings::default(), Some("claude-x"), None, None);
        assert_eq!(p.usable(), 184_000);
        assert_eq!(p.target_tokens(), 92_000);
        assert_eq!(p.protect_for(20_000), 10_000);
    }
}
