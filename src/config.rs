//! The user's settings, shared by the two shells (CLI and window): `config.json` in cairn's config folder
//! (`{"provider": "anthropic" | "openai", "model": ...}`) under flags, over the environment. The core never
//! reads it; it is handed a ready [`crate::provider::Provider`].

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

/// Where the settings file is.
pub fn path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cairn").map(|d| d.config_dir().join("config.json"))
}

/// The settings (`null` when there is no file). A file that is not JSON is an error naming it.
fn settings() -> Result<Value> {
    let Some(p) = path() else {
        return Ok(Value::Null);
    };
    match std::fs::read_to_string(&p) {
        Err(_) => Ok(Value::Null),
        Ok(t) => serde_json::from_str(&t)
            .map_err(|e| anyhow!("{}:{}: not JSON: {e}", p.display(), e.line())),
    }
}

/// When `send` compacts first: `"threshold"` and `"target"` (shares of the usable window, default 0.8 and 0.5),
/// under a `--window` flag.
pub fn policy(window: Option<u64>) -> Result<crate::send::Policy> {
    let config = settings()?;
    let file = path().map_or_else(|| "config.json".to_string(), |p| p.display().to_string());
    let mut p = crate::send::Policy {
        window,
        ..Default::default()
    };
    if let Some(t) = config.get("threshold") {
        p.threshold = t
            .as_f64()
            .ok_or_else(|| anyhow!("{file}: \"threshold\": {t} is not a number"))?;
    }
    if let Some(t) = config.get("target") {
        p.target = t
            .as_f64()
            .ok_or_else(|| anyhow!("{file}: \"target\": {t} is not a number"))?;
    }
    if !(0.0 < p.target && p.target < p.threshold && p.threshold <= 1.0) {
        bail!(
            "{file}: \"threshold\" {} and \"target\" {}: need 0 < target < threshold <= 1",
            p.threshold,
            p.target
        );
    }
    Ok(p)
}

/// A provider from flags, the config file (`config.json` in cairn's config folder: `{"provider": ..., "model": ...}`)
/// and the environment.
pub fn provider(kind: Option<&str>, model: Option<String>) -> Result<crate::provider::Provider> {
    let config = settings()?;
    let kind = kind
        .map(str::to_string)
        .or_else(|| config["provider"].as_str().map(str::to_string));
    let kind = match kind.as_deref() {
        None => None,
        Some(k) => Some(
            crate::provider::Kind::from_name(k)
                .ok_or_else(|| anyhow!("--provider {k:?}: anthropic or openai"))?,
        ),
    };
    let model = model.or_else(|| config["model"].as_str().map(str::to_string));
    Ok(crate::provider::Provider::from_env(kind, model)?)
}
