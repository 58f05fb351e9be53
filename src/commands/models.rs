//! `models`: every model the store has seen, as the catalog, the settings and what providers measured describe it;
//! and `models --update`: a newer copy of the catalog's data, fetched, checked, kept and put in use.

use std::path::PathBuf;

use serde::Serialize;

use super::{Command, CommandError, Env};
use crate::models::catalog::{self, Catalog, Origin};
use crate::models::{Listing, PerMillion, Seen, Source};

/// Lists the models the store has seen.
#[derive(Debug, Clone, Copy)]
pub struct ListModels;

/// The models the store has seen, and the catalog that describes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelsReport {
    pub catalog: Origin,
    pub models: Vec<Listing>,
    /// The models seen that the catalog does not list (a newer copy of it may: `cairn models --update`).
    pub unlisted: Vec<String>,
}

impl Command for ListModels {
    /// Each model with its catalog entry, window, tokenizer, fitted scale and prices, and where each came from.
    type Output = ModelsReport;

    fn run(self, env: Env<'_>) -> Result<ModelsReport, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        // the catalog the rows are read under, even if another is installed meanwhile
        let catalog = catalog::current().origin().clone();
        let seen: Vec<Seen> = store
            .models_seen()?
            .into_iter()
            .map(|m| Seen {
                model: m.model,
                replies: m.replies,
                measured: m.measured,
                max_prompt: m.max_prompt,
            })
            .collect();
        let fits = crate::reclaim::replay::stored_fits(store)?;
        let fitted = |model: &str| {
            fits.iter()
                .filter(|(k, _)| k.rsplit_once(':').is_some_and(|(_, m)| m == model))
                .max_by_key(|(_, f)| f.samples)
                .map(|(_, f)| (f.scale, f.tokenizer))
        };
        let prices = super::learned_prices::prices(store, settings)?;
        let models = crate::models::listing(
            &seen,
            &settings.windows,
            &prices,
            &fitted,
            &store.harness_windows()?,
        );
        let unlisted = models
            .iter()
            .filter(|l| l.catalog_id.is_none())
            .map(|l| l.model.clone())
            .collect();
        Ok(ModelsReport {
            catalog,
            models,
            unlisted,
        })
    }

    fn doing(&self) -> String {
        "reading the models".into()
    }
}

/// Fetches genai-prices' data from `from` (a URL, or a file for a machine without the network), checks that it is
/// a catalog, writes it to `to` (whole or not at all) and uses it from then on. Nothing is written or changed when
/// the fetch or the check fails.
#[derive(Debug, Clone)]
pub struct UpdateCatalog {
    pub from: String,
    pub to: PathBuf,
}

/// What an update changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogUpdate {
    pub from: String,
    pub was: Origin,
    pub now: Origin,
    /// Models the new data lists that the old did not (`provider/id`).
    pub added: Vec<String>,
    /// Models the old data listed that the new does not.
    pub removed: Vec<String>,
    /// The models the store has seen whose figures changed.
    pub changed: Vec<ModelChange>,
}

/// A model whose provider, family, window or price the new catalog gives otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelChange {
    pub model: String,
    pub before: Figures,
    pub after: Figures,
}

/// The figures of a model a catalog decides, and where each came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub provider: Option<String>,
    pub family: &'static str,
    pub window: u64,
    pub window_source: Source,
    pub price_per_mtok: Option<PerMillion>,
    pub price_source: Source,
}

impl Figures {
    fn of(l: &Listing) -> Figures {
        Figures {
            provider: l.provider.clone(),
            family: l.family.name(),
            window: l.window,
            window_source: l.window_source,
            price_per_mtok: l.price_per_mtok,
            price_source: l.price_source,
        }
    }
}

impl Command for UpdateCatalog {
    type Output = CatalogUpdate;

    fn run(self, mut env: Env<'_>) -> Result<CatalogUpdate, CommandError> {
        let data = fetch(&self.from)?;
        let to = self.to.display().to_string();
        let fresh = Catalog::from_json(&data, &to, Some(crate::store::now_ms())).map_err(|e| {
            CommandError::Invalid(format!(
                "{}: {e}; the catalog in use is unchanged",
                self.from
            ))
        })?;
        let old = catalog::current();
        let before = ListModels.run(env.again())?;
        if let Some(dir) = self.to.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| CommandError::Io {
                path: dir.to_path_buf(),
                reason: format!("cannot create: {e}"),
            })?;
        }
        super::write::write_with(&self.to, &mut |w| {
            w.write_all(&data).map_err(|e| CommandError::Io {
                path: self.to.clone(),
                reason: format!("cannot write: {e}"),
            })
        })?;
        let (old_ids, new_ids) = (old.ids(), fresh.ids());
        let named = |ids: Vec<&(String, String)>| {
            let mut v: Vec<String> = ids.into_iter().map(|(p, m)| format!("{p}/{m}")).collect();
            v.sort();
            v
        };
        let added = named(new_ids.difference(&old_ids).collect());
        let removed = named(old_ids.difference(&new_ids).collect());
        catalog::install(fresh);
        let after = ListModels.run(env)?;
        let changed = after
            .models
            .iter()
            .filter_map(|a| {
                let b = before.models.iter().find(|b| b.model == a.model)?;
                let (before, after) = (Figures::of(b), Figures::of(a));
                (before != after).then(|| ModelChange {
                    model: a.model.clone(),
                    before,
                    after,
                })
            })
            .collect();
        Ok(CatalogUpdate {
            from: self.from,
            was: before.catalog,
            now: after.catalog,
            added,
            removed,
            changed,
        })
    }

    fn doing(&self) -> String {
        format!("fetching the model catalog from {}", self.from)
    }
}

/// The bytes at `from`: a URL's body, or a file's.
fn fetch(from: &str) -> Result<Vec<u8>, CommandError> {
    if from.starts_with("https://") || from.starts_with("http://") {
        let failed = |e: reqwest::Error| {
            let e = e.without_url();
            let mut why = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                why = format!("{why}: {c}");
                cause = c.source();
            }
            CommandError::Invalid(format!(
                "{from}: {why}; the catalog in use is unchanged (without the network, fetch the file elsewhere and pass --from FILE)"
            ))
        };
        let client = reqwest::blocking::Client::builder()
            .timeout(std::time::Duration::from_secs(120))
            .build()
            .map_err(failed)?;
        let body = client
            .get(from)
            .send()
            .and_then(reqwest::blocking::Response::error_for_status)
            .and_then(reqwest::blocking::Response::bytes)
            .map_err(failed)?;
        return Ok(body.to_vec());
    }
    std::fs::read(from).map_err(|e| CommandError::Io {
        path: PathBuf::from(from),
        reason: format!("cannot read: {e}"),
    })
}
