//! The maintained catalog: pydantic's genai-prices data as the `genai-prices` crate bundles it (offline, matched
//! the way its own calculator matches: provider by model pattern, then the model by id and aliases). Answers are
//! kept per name, so a model is matched once per process however many replies are priced.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use genai_prices::{Calculator, ErrorKind, PriceRequest, Usage};

/// A model the catalog lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub provider: String,
    pub id: String,
    pub window: Option<u64>,
}

#[derive(Debug, Clone, Default)]
struct Answer {
    listed: Option<Listed>,
    provider: Option<String>,
}

static ANSWERS: LazyLock<Mutex<HashMap<String, Answer>>> = LazyLock::new(Default::default);

fn answer(name: &str) -> Answer {
    if let Ok(cache) = ANSWERS.lock()
        && let Some(a) = cache.get(name)
    {
        return a.clone();
    }
    let a = ask(name);
    if let Ok(mut cache) = ANSWERS.lock() {
        cache.insert(name.to_string(), a.clone());
    }
    a
}

fn ask(name: &str) -> Answer {
    let calc = Calculator::bundled();
    let usage = Usage::new();
    match calc.calculate(&PriceRequest::new(name, &usage)) {
        Ok(p) => {
            let window = calc
                .find_provider(Some(&p.provider_id), None)
                .ok()
                .flatten()
                .and_then(|pr| pr.models().find(|m| m.id() == p.model_id))
                .and_then(|m| m.context_window());
            Answer {
                provider: Some(p.provider_id.clone()),
                listed: Some(Listed {
                    provider: p.provider_id,
                    id: p.model_id,
                    window,
                }),
            }
        }
        // the provider's pattern matched but it does not list this model (one released after the data): the
        // error names the provider ("... in anthropic")
        Err(e) if e.kind() == ErrorKind::ModelNotFound => Answer {
            listed: None,
            provider: e
                .to_string()
                .rsplit_once(" in ")
                .map(|(_, p)| p.trim().to_string())
                .filter(|p| !p.is_empty() && !p.contains(' ')),
        },
        Err(_) => Answer::default(),
    }
}

/// The least [`largest_window`] answers, whatever the catalog lists: a figure below it needs no catalog.
pub const LARGEST_WINDOW_FLOOR: u64 = 10_000_000;

/// The largest context window the catalog lists for any model (at least [`LARGEST_WINDOW_FLOOR`] tokens).
pub fn largest_window() -> u64 {
    static W: LazyLock<u64> = LazyLock::new(|| {
        Calculator::bundled()
            .providers()
            .flat_map(|p| p.models())
            .filter_map(|m| m.context_window())
            .max()
            .unwrap_or(0)
            .max(LARGEST_WINDOW_FLOOR)
    });
    *W
}

/// The catalog's entry for a model name, if it lists it.
pub fn listed(name: &str) -> Option<Listed> {
    answer(name).listed
}

/// The provider whose models a name looks like, even when the catalog does not list the model itself.
pub fn provider_of(name: &str) -> Option<String> {
    answer(name).provider
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_lists_current_models_and_names_the_provider_of_newer_ones() {
        let l = listed("claude-opus-4-8").unwrap();
        assert_eq!(
            (l.provider.as_str(), l.id.as_str()),
            ("anthropic", "claude-opus-4-8")
        );
        assert_eq!(l.window, Some(1_000_000));
        assert_eq!(
            listed("claude-sonnet-4.6").map(|l| l.id),
            Some("claude-sonnet-4-6".into())
        );
        assert_eq!(listed("mimo-v2.5-pro"), None);
        assert_eq!(provider_of("mimo-v2.5-pro"), None);
        assert_eq!(
            provider_of("claude-sonnet-9-1").as_deref(),
            Some("anthropic")
        );
    }
}
