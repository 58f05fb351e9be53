//! The user's settings, shared by the two shells (CLI and window): `config.json` in cairn's config folder
//! (`{"provider": "anthropic" | "openai", "model": ...}`) under flags, over the environment. The core never
//! reads it; it is handed a ready [`crate::provider::Provider`].

use anyhow::{Result, anyhow};

/// A provider from flags, the config file (`config.json` in cairn's config folder: `{"provider": ..., "model": ...}`)
/// and the environment.
pub fn provider(kind: Option<&str>, model: Option<String>) -> Result<crate::provider::Provider> {
    let config: serde_json::Value = directories::ProjectDirs::from("", "", "cairn")
        .and_then(|d| std::fs::read_to_string(d.config_dir().join("config.json")).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
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
