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

/// Where the model catalog `cairn models --update` fetched is kept: the file `CAIRN_CATALOG` names, else
/// `genai-prices.json` in cairn's data folder.
pub fn catalog_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_CATALOG") {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "cairn").map(|d| d.data_dir().join("genai-prices.json"))
}

/// Puts the catalog `cairn models --update` fetched in use, where there is one: read when a command first needs a
/// model's figures, not before. A file that is no longer a catalog leaves the data bundled with cairn in use, and
/// the catalog's origin says why (`cairn models`, the models view).
pub fn load_catalog() {
    let Some(path) = catalog_path().filter(|p| p.exists()) else {
        return;
    };
    crate::models::catalog::install_on_first_use(move || {
        use crate::models::catalog::Catalog;
        let name = path.display().to_string();
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) => return Catalog::bundled_because(format!("{name}: cannot read: {e}")),
        };
        let written = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok());
        Catalog::from_json(&data, &name, written).unwrap_or_else(|e| {
            Catalog::bundled_because(format!(
                "{name}: {e} (`cairn models --update` fetches it again)"
            ))
        })
    });
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
