//! The maintained catalog: pydantic's genai-prices data, matched the way its own calculator matches (provider by
//! model pattern, then the model by id and aliases). The data bundled in the `genai-prices` crate is used until a
//! newer copy is installed ([`install`]): the shells load the one `cairn models --update` fetched from the project's
//! feed, so a model released after this build is known without a new cairn. A model the fetched copy does not list
//! is looked up in the bundled data: genai-prices' data carries no date to tell which of the two is newer, and a
//! copy fetched before this cairn was installed must not forget a model the newer build knows (nor a partial feed
//! unprice every model it leaves out). Answers are kept per name and per catalog, so a model is matched once per
//! process however many replies are priced.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, RwLock};

use genai_prices::{Calculator, ErrorKind, PriceRequest, Usage};
use serde::Serialize;

/// The feed `cairn models --update` fetches by default: genai-prices' current data, as its crate documents it.
pub const FEED: &str = genai_prices::REMOTE_DATA_URL;

/// A model the catalog lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub provider: String,
    pub id: String,
    /// The name the provider's entry is priced by: its id, or for a router's entry the name the router was asked
    /// (Bedrock's regional entries match the profile's ids, not their own).
    pub asked: String,
    pub window: Option<u64>,
    /// Listed by the data bundled with this build, not by the fetched copy in use (which lacks it).
    pub bundled: bool,
}

#[derive(Debug, Clone, Default)]
struct Answer {
    listed: Option<Listed>,
    provider: Option<String>,
    /// The entry of the provider a router prefix names (`openrouter/qwen/qwen3-235b-a22b`), where it lists one.
    routed: Option<Listed>,
}

/// Where the catalog in use came from, and how much it holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Origin {
    /// `bundled` (the data this build of cairn carries) or `file` (a copy `cairn models --update` fetched).
    pub source: &'static str,
    /// The file, for a fetched copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// When the file was written (epoch ms), for a fetched copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_ms: Option<i64>,
    pub providers: usize,
    pub models: usize,
    /// For a fetched copy: the models the data bundled with this build lists and the copy does not, which are
    /// looked up there (a copy fetched before this cairn was installed does not forget what it knows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundled_only: Option<usize>,
    /// Why the copy named was not used (it could not be read, or is no catalog): the bundled data is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl Origin {
    /// One line for people: where the data is from and how much it holds.
    pub fn line(&self) -> String {
        let count = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        let held = format!(
            "{}, {}",
            count(self.providers, "provider"),
            count(self.models, "model")
        );
        let held = match self.bundled_only {
            Some(n) if n > 0 => format!("{held}; {n} more from the data bundled with this build"),
            _ => held,
        };
        match (&self.path, self.written_ms) {
            (Some(p), written) => match written
                .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
                .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
            {
                Some(t) => format!("genai-prices data in {p}, written {t} ({held})"),
                None => format!("genai-prices data in {p} ({held})"),
            },
            _ => match &self.warning {
                Some(w) => {
                    format!("genai-prices data bundled with this build of cairn ({held}); {w}")
                }
                None => format!("genai-prices data bundled with this build of cairn ({held})"),
            },
        }
    }
}

/// The catalog's data could not be used.
#[derive(Debug, thiserror::Error)]
#[error("not genai-prices data: {0}")]
pub struct Invalid(String);

/// One catalog: its calculator, where it came from, and the answers it gave.
pub struct Catalog {
    loaded: Option<Box<Calculator>>,
    origin: Origin,
    answers: Mutex<HashMap<String, Answer>>,
    /// What [`super::known`] answered under this catalog.
    pub(super) known: Mutex<HashMap<String, super::Known>>,
    largest: OnceLock<u64>,
}

impl Catalog {
    fn bundled() -> Catalog {
        Catalog::new(None, "bundled", None, None)
    }

    /// The bundled data, in place of a copy that could not be used (`why` names it).
    pub fn bundled_because(why: String) -> Catalog {
        let mut c = Catalog::bundled();
        c.origin.warning = Some(why);
        c
    }

    /// A catalog from genai-prices' data (its v2 feed, as [`FEED`] serves it), which `path` holds.
    pub fn from_json(data: &[u8], path: &str, written_ms: Option<i64>) -> Result<Catalog, Invalid> {
        let calc = Calculator::from_json(data).map_err(|e| Invalid(e.to_string()))?;
        let c = Catalog::new(
            Some(Box::new(calc)),
            "file",
            Some(path.to_string()),
            written_ms,
        );
        if c.origin.models == 0 {
            return Err(Invalid("it lists no models".into()));
        }
        let mut c = c;
        let own = ids_of(c.calculator());
        c.origin.bundled_only = Some(ids_of(Calculator::bundled()).difference(&own).count());
        Ok(c)
    }

    fn new(
        loaded: Option<Box<Calculator>>,
        source: &'static str,
        path: Option<String>,
        written_ms: Option<i64>,
    ) -> Catalog {
        let calc: &Calculator = loaded.as_deref().unwrap_or_else(|| Calculator::bundled());
        let origin = Origin {
            source,
            path,
            written_ms,
            providers: calc.providers().count(),
            models: calc.providers().map(|p| p.models().count()).sum(),
            bundled_only: None,
            warning: None,
        };
        Catalog {
            loaded,
            origin,
            answers: Mutex::default(),
            known: Mutex::default(),
            largest: OnceLock::new(),
        }
    }

    /// The calculator that prices and matches.
    pub fn calculator(&self) -> &Calculator {
        self.loaded
            .as_deref()
            .unwrap_or_else(|| Calculator::bundled())
    }

    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The calculator that prices a model it lists: the fetched copy's, or the bundled data's for a model only
    /// that lists.
    pub fn calculator_of(&self, listed: &Listed) -> &Calculator {
        if listed.bundled {
            Calculator::bundled()
        } else {
            self.calculator()
        }
    }

    /// The provider/model pairs it lists (a fetched copy's and, for what that lacks, the bundled data's).
    pub fn ids(&self) -> HashSet<(String, String)> {
        let mut ids = ids_of(self.calculator());
        if self.loaded.is_some() {
            ids.extend(ids_of(Calculator::bundled()));
        }
        ids
    }

    /// Its entry for a model name, if it lists it.
    pub fn listed(&self, name: &str) -> Option<Listed> {
        self.answer(name, |a| a.listed.clone())
    }

    /// The entry a router's or proxy's `provider/model` name has under the provider its prefix names.
    pub fn routed(&self, name: &str) -> Option<Listed> {
        self.answer(name, |a| a.routed.clone())
    }

    /// What it answers for a name, read through `f` (asked once per name; a read copies only what `f` takes).
    fn answer<R>(&self, name: &str, f: impl Fn(&Answer) -> R) -> R {
        if let Ok(cache) = self.answers.lock()
            && let Some(a) = cache.get(name)
        {
            return f(a);
        }
        let mut a = ask(self.calculator(), name, false);
        // what a fetched copy does not list, the data bundled with this build may (a copy older than this cairn)
        // (a name without a router's `provider/` prefix has no routed entry anywhere: the listing alone decides)
        if self.loaded.is_some()
            && (a.listed.is_none()
                || (a.routed.is_none()
                    && (name.contains('/') || super::bedrock_id(name).is_some())))
        {
            let b = ask(Calculator::bundled(), name, true);
            a = Answer {
                listed: a.listed.or(b.listed),
                provider: a.provider.or(b.provider),
                routed: a.routed.or(b.routed),
            };
        }
        let r = f(&a);
        if let Ok(mut cache) = self.answers.lock() {
            cache.insert(name.to_string(), a);
        }
        r
    }
}

static CURRENT: LazyLock<RwLock<Arc<Catalog>>> =
    LazyLock::new(|| RwLock::new(Arc::new(Catalog::bundled())));

/// A catalog to read when one is first needed ([`install_on_first_use`]).
type Loader = Box<dyn FnOnce() -> Catalog + Send>;

static PENDING: Mutex<Option<Loader>> = Mutex::new(None);
/// Whether [`PENDING`] may hold a loader (checked without the lock on every [`current`]).
static PENDING_SET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The catalog in use: the bundled data until another is installed.
pub fn current() -> Arc<Catalog> {
    // the first to need it reads it, the others wait for it (the lock is held while it loads)
    if PENDING_SET.load(std::sync::atomic::Ordering::Acquire)
        && let Ok(mut pending) = PENDING.lock()
    {
        if let Some(load) = pending.take() {
            swap(load());
        }
        PENDING_SET.store(false, std::sync::atomic::Ordering::Release);
    }
    match CURRENT.read() {
        Ok(c) => c.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Uses the catalog `load` reads from the first time one is needed: a copy kept on disk costs tens of
/// milliseconds and tens of megabytes to decode, which a command that never reads a model's figures (`list`, a
/// grown session's import) should not pay.
pub fn install_on_first_use(load: impl FnOnce() -> Catalog + Send + 'static) {
    if let Ok(mut p) = PENDING.lock() {
        *p = Some(Box::new(load));
        PENDING_SET.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Uses `catalog` from now on (a command already under way finishes with the one it began with; a copy waiting to
/// be read on first use is not read).
pub fn install(catalog: Catalog) {
    if let Ok(mut pending) = PENDING.lock() {
        pending.take();
        PENDING_SET.store(false, std::sync::atomic::Ordering::Release);
    }
    swap(catalog);
}

fn swap(catalog: Catalog) {
    let catalog = Arc::new(catalog);
    match CURRENT.write() {
        Ok(mut c) => *c = catalog,
        Err(poisoned) => *poisoned.into_inner() = catalog,
    }
}

/// A name as a router or proxy writes it (LiteLLM's `provider/model`, which Aider records): the entry of the
/// provider the prefix names, where the catalog has that provider and it lists the rest with a price. A Bedrock
/// id without a prefix (Claude Code on Bedrock records one) is Bedrock's entry: what Amazon charges for it (a
/// regional profile more than a global one).
fn ask_routed(calc: &Calculator, name: &str, bundled: bool) -> Option<Listed> {
    let (prefix, rest) = match name.split_once('/') {
        Some(split) => split,
        None if super::bedrock_id(name).is_some() => ("bedrock", name),
        None => return None,
    };
    let provider = provider_named(calc, prefix)?;
    let prefix = provider.id();
    // a routing variant (`:nitro`) is the model's own entry; a free one is listed at nothing
    let variant = super::variant(rest);
    let rest = match variant {
        Some((base, super::Variant::Routing)) => base,
        _ => rest,
    };
    let free = matches!(variant, Some((_, super::Variant::Free)));
    // a model the provider lists without a price (GitHub Copilot's included models) keeps its own list price
    let mut usage = Usage::new();
    usage.insert("input_tokens", 1_000_000.0);
    usage.insert("output_tokens", 1_000_000.0);
    let p = calc
        .calculate(&PriceRequest::new(rest, &usage).with_provider_id(prefix))
        .ok()
        .filter(|p| free || p.total_price > 0.0)?;
    Some(Listed {
        window: window_of(calc, &p.provider_id, &p.model_id),
        asked: rest.to_string(),
        provider: p.provider_id,
        id: p.model_id,
        bundled,
    })
}

/// The provider a router's or proxy's prefix names: as the catalog matches it, else as written with its `-ai`/`_ai`
/// ending dropped (LiteLLM's `fireworks_ai/`, opencode's `fireworks-ai/`) or its separators (OpenRouter's `x-ai/`,
/// `z-ai/` for `xai`, `zai`).
fn provider_named<'c>(
    calc: &'c Calculator,
    prefix: &str,
) -> Option<genai_prices::ProviderInfo<'c>> {
    let trimmed = ["-ai", "_ai", ".ai"]
        .iter()
        .find_map(|end| prefix.strip_suffix(end));
    let joined = prefix.replace(['-', '_', '.'], "");
    std::iter::once(prefix)
        .chain(trimmed)
        .chain(Some(joined.as_str()))
        .filter(|p| !p.is_empty())
        .find_map(|p| calc.find_provider(Some(p), None).ok().flatten())
}

/// The entry of a name no provider's pattern claims, where a provider asked for it by name matches it (Z.ai's
/// `GLM-4.6` for the `glm-4.6` a harness on Z.ai's endpoint records) or, for a path
/// (`accounts/fireworks/models/deepseek-v3p2`), its longest tail so matched. Every provider that matches it must
/// list the same price, else the name says too little to price it (`moonshotai/kimi-k2-instruct` is served by many
/// at many prices) and stays unknown.
fn listed_exactly(calc: &Calculator, name: &str, bundled: bool) -> Option<Listed> {
    let tails = std::iter::once(name).chain(name.match_indices('/').map(|(i, _)| &name[i + 1..]));
    let rate = |tail: &str, provider: &str, kind: &str| {
        let mut usage = Usage::new();
        usage.insert(kind, 1_000_000.0);
        calc.calculate(&PriceRequest::new(tail, &usage).with_provider_id(provider))
            .ok()
    };
    for tail in tails.filter(|t| !t.is_empty()) {
        let mut found: Vec<(Listed, [f64; 2])> = Vec::new();
        for p in calc.providers() {
            // the output price is asked only of a provider that lists the model at all
            let Some(input) = rate(tail, p.id(), "input_tokens") else {
                continue;
            };
            let Some(output) = rate(tail, p.id(), "output_tokens") else {
                continue;
            };
            if input.total_price + output.total_price <= 0.0 {
                continue;
            }
            found.push((
                Listed {
                    window: window_of(calc, &input.provider_id, &input.model_id),
                    asked: tail.to_string(),
                    provider: input.provider_id,
                    id: input.model_id,
                    bundled,
                },
                [input.total_price, output.total_price],
            ));
        }
        if let Some((first, price)) = found.first() {
            let agree = found
                .iter()
                .all(|(_, p)| (p[0] - price[0]).abs() < 1e-9 && (p[1] - price[1]).abs() < 1e-9);
            return agree.then(|| first.clone());
        }
    }
    None
}

fn ids_of(calc: &Calculator) -> HashSet<(String, String)> {
    calc.providers()
        .flat_map(|p| {
            p.models()
                .map(move |m| (p.id().to_string(), m.id().to_string()))
        })
        .collect()
}

fn window_of(calc: &Calculator, provider: &str, model: &str) -> Option<u64> {
    calc.find_provider(Some(provider), None)
        .ok()
        .flatten()
        .and_then(|pr| pr.models().find(|m| m.id() == model))
        .and_then(|m| m.context_window())
}

/// What `calc` answers for a name (`bundled`: it is the data bundled with this build, asked after a fetched copy).
fn ask(calc: &Calculator, name: &str, bundled: bool) -> Answer {
    let usage = Usage::new();
    let routed = ask_routed(calc, name, bundled);
    match calc.calculate(&PriceRequest::new(name, &usage)) {
        Ok(p) => Answer {
            provider: Some(p.provider_id.clone()),
            listed: Some(Listed {
                window: window_of(calc, &p.provider_id, &p.model_id),
                asked: p.model_id.clone(),
                provider: p.provider_id,
                id: p.model_id,
                bundled,
            }),
            routed,
        },
        // the provider's pattern matched but it does not list this model (one released after the data): the
        // error names the provider ("... in anthropic")
        Err(e) if e.kind() == ErrorKind::ModelNotFound => Answer {
            listed: listed_exactly(calc, name, bundled),
            provider: e
                .to_string()
                .rsplit_once(" in ")
                .map(|(_, p)| p.trim().to_string())
                .filter(|p| !p.is_empty() && !p.contains(' ')),
            routed,
        },
        Err(_) => Answer {
            listed: listed_exactly(calc, name, bundled),
            routed,
            ..Answer::default()
        },
    }
}

/// The least [`largest_window`] answers, whatever the catalog lists: a figure below it needs no catalog.
pub const LARGEST_WINDOW_FLOOR: u64 = 10_000_000;

/// The largest context window the catalog lists for any model (at least [`LARGEST_WINDOW_FLOOR`] tokens).
pub fn largest_window() -> u64 {
    let c = current();
    *c.largest.get_or_init(|| {
        let largest = |calc: &Calculator| {
            calc.providers()
                .flat_map(|p| p.models())
                .filter_map(|m| m.context_window())
                .max()
                .unwrap_or(0)
        };
        let own = largest(c.calculator());
        let bundled = if c.loaded.is_some() {
            largest(Calculator::bundled())
        } else {
            0
        };
        own.max(bundled).max(LARGEST_WINDOW_FLOOR)
    })
}

/// The catalog's entry for a model name, if it lists it.
pub fn listed(name: &str) -> Option<Listed> {
    current().listed(name)
}

/// Whether the catalog lists `name` as a model of its own (its entry's id is the name itself: a snapshot priced
/// apart, `gpt-4o-2024-05-13`), not as another model's alias. Asked without copying the entry.
pub fn lists_apart(name: &str) -> bool {
    current().answer(name, |a| a.listed.as_ref().is_some_and(|l| l.id == name))
}

/// The entry a recorded name has under the provider its prefix names (a router's or proxy's `provider/model`, as
/// LiteLLM and so Aider write it): what requests made through that provider are priced by. None for a name
/// without such a prefix.
pub fn routed(name: &str) -> Option<Listed> {
    current().routed(name)
}

/// The provider whose models a name looks like, even when the catalog does not list the model itself.
pub fn provider_of(name: &str) -> Option<String> {
    current().answer(name, |a| a.provider.clone())
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
        // Amazon Bedrock's ids, bare or LiteLLM's: Bedrock's entry (a regional profile is listed apart)
        for id in [
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-3-5-sonnet-20241022-v2:0",
        ] {
            assert_eq!(routed(id).map(|l| l.provider), Some("aws".into()), "{id}");
        }
        assert_ne!(
            routed("us.anthropic.claude-sonnet-4-5-20250929-v1:0").map(|l| l.id),
            routed("global.anthropic.claude-sonnet-4-5-20250929-v1:0").map(|l| l.id)
        );
        assert_eq!(routed("gpt-4.1"), None);
        assert_eq!(routed("claude-sonnet-4.6"), None);
        // a prefix that names no provider the catalog has, and a name without one: none
        assert_eq!(routed("my-proxy/claude-sonnet-4"), None);
        assert_eq!(routed("claude-sonnet-4"), None);
        assert_eq!(provider_of("mimo-v2.5-pro"), None);
        assert_eq!(
            provider_of("claude-sonnet-9-1").as_deref(),
            Some("anthropic")
        );
    }

    /// A name no provider's pattern claims is the entry of the providers that match it asked by name, when they
    /// agree on its price; a proxy's prefix names its provider however it is spelt.
    #[test]
    fn a_bare_name_one_provider_lists_is_that_entry_and_a_prefix_is_read_however_spelt() {
        // Z.ai lists `GLM-4.6`; Claude Code on Z.ai's endpoint records `glm-4.6`
        for name in ["glm-4.6", "GLM-4.6"] {
            let l = listed(name).unwrap();
            assert_eq!(
                (l.provider.as_str(), l.id.as_str()),
                ("zai", "GLM-4.6"),
                "{name}"
            );
        }
        // served by several providers at several prices: the name alone says too little
        assert_eq!(listed("moonshotai/kimi-k2-instruct"), None);
        // still unknown: a model no one lists
        assert_eq!(listed("mimo-v2.5-pro"), None);
        assert_eq!(listed("claude-sonnet-9-1"), None);
        // LiteLLM's `fireworks_ai/`, opencode's `fireworks-ai/`, OpenRouter's `z-ai/`
        let fireworks = routed("fireworks/accounts/fireworks/models/deepseek-v3p2").unwrap();
        assert_eq!(fireworks.provider, "fireworks");
        for name in [
            "fireworks_ai/accounts/fireworks/models/deepseek-v3p2",
            "fireworks-ai/accounts/fireworks/models/deepseek-v3p2",
        ] {
            assert_eq!(
                routed(name).as_ref().map(|l| &l.id),
                Some(&fireworks.id),
                "{name}"
            );
        }
        assert_eq!(
            routed("z-ai/glm-4.6").map(|l| l.provider),
            Some("zai".into())
        );
    }
}
