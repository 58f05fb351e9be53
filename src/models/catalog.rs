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
    /// The entry of the provider a router prefix names (`openrouter/qwen/qwen3-235b-a22b`), where it lists one.
    routed: Option<Listed>,
}

static ANSWERS: LazyLock<Mutex<HashMap<String, Answer>>> = LazyLock::new(Default::default);

/// What the catalog answers for a name, read through `f` (asked once per name; a read copies only what `f` takes).
fn answer<R>(name: &str, f: impl Fn(&Answer) -> R) -> R {
    if let Ok(cache) = ANSWERS.lock()
        && let Some(a) = cache.get(name)
    {
        return f(a);
    }
    let a = ask(name);
    let r = f(&a);
    if let Ok(mut cache) = ANSWERS.lock() {
        cache.insert(name.to_string(), a);
    }
    r
}

/// A name as a router or proxy writes it (LiteLLM's `provider/model`, which Aider records): the entry of the
/// provider the prefix names, where the catalog has that provider and it lists the rest with a price.
fn ask_routed(name: &str) -> Option<Listed> {
    let (prefix, rest) = name.split_once('/')?;
    let calc = Calculator::bundled();
    calc.find_provider(Some(prefix), None).ok().flatten()?;
    // a model the provider lists without a price (GitHub Copilot's included models) keeps its own list price
    let mut usage = Usage::new();
    usage.insert("input_tokens", 1_000_000.0);
    usage.insert("output_tokens", 1_000_000.0);
    let p = calc
        .calculate(&PriceRequest::new(rest, &usage).with_provider_id(prefix))
        .ok()
        .filter(|p| p.total_price > 0.0)?;
    Some(Listed {
        window: window_of(calc, &p.provider_id, &p.model_id),
        provider: p.provider_id,
        id: p.model_id,
    })
}

fn window_of(calc: &Calculator, provider: &str, model: &str) -> Option<u64> {
    calc.find_provider(Some(provider), None)
        .ok()
        .flatten()
        .and_then(|pr| pr.models().find(|m| m.id() == model))
        .and_then(|m| m.context_window())
}

fn ask(name: &str) -> Answer {
    let calc = Calculator::bundled();
    let usage = Usage::new();
    let routed = ask_routed(name);
    match calc.calculate(&PriceRequest::new(name, &usage)) {
        Ok(p) => Answer {
            provider: Some(p.provider_id.clone()),
            listed: Some(Listed {
                window: window_of(calc, &p.provider_id, &p.model_id),
                provider: p.provider_id,
                id: p.model_id,
            }),
            routed,
        },
        // the provider's pattern matched but it does not list this model (one released after the data): the
        // error names the provider ("... in anthropic")
        Err(e) if e.kind() == ErrorKind::ModelNotFound => Answer {
            listed: None,
            provider: e
                .to_string()
                .rsplit_once(" in ")
                .map(|(_, p)| p.trim().to_string())
                .filter(|p| !p.is_empty() && !p.contains(' ')),
            routed,
        },
        Err(_) => Answer {
            routed,
            ..Answer::default()
        },
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
    answer(name, |a| a.listed.clone())
}

/// The entry a recorded name has under the provider its prefix names (a router's or proxy's `provider/model`, as
/// LiteLLM and so Aider write it): what requests made through that provider are priced by. None for a name
/// without such a prefix.
pub fn routed(name: &str) -> Option<Listed> {
    answer(name, |a| a.routed.clone())
}

/// The provider whose models a name looks like, even when the catalog does not list the model itself.
pub fn provider_of(name: &str) -> Option<String> {
    answer(name, |a| a.provider.clone())
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
        // a router's name (LiteLLM's provider/model, as Aider records it): that provider's entry
        let l = routed("openrouter/qwen/qwen3-235b-a22b").unwrap();
        assert_eq!(
            (l.provider.as_str(), l.id.as_str()),
            ("openrouter", "qwen/qwen3-235b-a22b")
        );
        // Vertex AI's Claude (LiteLLM's `vertex_ai/`): Google's entry for it
        assert_eq!(
            routed("vertex_ai/claude-sonnet-4@20250514").map(|l| l.provider),
            Some("google".into())
        );
        // a model the router lists with no price (GitHub Copilot's included gpt-4o): the model's own price
        assert_eq!(routed("github-copilot/gpt-4o"), None);
        assert_eq!(
            routed("github-copilot/claude-sonnet-4.6").map(|l| l.provider),
            Some("github-copilot".into())
        );
        // a prefix that names no provider the catalog has, and a name without one: none
        assert_eq!(routed("my-proxy/claude-sonnet-4"), None);
        assert_eq!(routed("claude-sonnet-4"), None);
        assert_eq!(provider_of("mimo-v2.5-pro"), None);
        assert_eq!(
            provider_of("claude-sonnet-9-1").as_deref(),
            Some("anthropic")
        );
    }
}
