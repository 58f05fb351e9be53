//! The user's settings file, read by the two shells (CLI and window): `config.json` in cairn's config folder (or
//! the file `CAIRN_CONFIG` names). The core is handed the parsed [`Settings`] and a ready
//! [`crate::provider::Provider`]; it never reads the file or the environment itself.

use std::path::PathBuf;

use anyhow::{Result, anyhow};

use crate::reclaim::Settings;

/// Where the settings file is.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_CONFIG") {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "cairn").map(|d| d.config_dir().join("config.json"))
}

/// The settings (the defaults when there is no file). A file that is not valid is an error naming it and what is
/// wrong.
pub fn settings() -> Result<Settings> {
    let Some(p) = path() else {
        return Ok(Settings::default());
    };
    match std::fs::read_to_string(&p) {
        Err(_) => Ok(Settings::default()),
        Ok(t) => Settings::parse(&t).map_err(|e| anyhow!("{}: {e}", p.display())),
    }
}

/// A provider from flags, the settings (`"provider"`, `"model"`) and the environment (the key).
pub fn provider(
    settings: &Settings,
    kind: Option<&str>,
    model: Option<String>,
) -> Result<crate::provider::Provider> {
    let kind = kind
        .map(str::to_string)
        .or_else(|| settings.provider.clone());
    let kind = match kind.as_deref() {
        None => None,
        Some(k) => Some(
            crate::provider::Kind::from_name(k)
                .ok_or_else(|| anyhow!("provider {k:?}: anthropic or openai"))?,
        ),
    };
    let model = model.or_else(|| settings.model.clone());
    Ok(crate::provider::Provider::from_env(kind, model)?)
}
