//! What cairn knows of a model, in one place: its provider and family, its context window, the tokenizer it counts
//! with, whether it keeps past thinking, the page profile and shape it reads snapshots in, and its prices.
//!
//! Why one module: these figures used to come from six prefix tables that disagreed, and a model released after
//! the tables were written was guessed wrong in each. Here the maintained catalog decides ([`catalog`]: pydantic's
//! genai-prices data, bundled in the `genai-prices` crate: providers, model ids and aliases, context windows,
//! prices with their tiers, dates and cache lifetimes), the settings file overrides it (`windows`, `prices`), and
//! what the providers measured raises it (a model's window is at least the largest prompt it was measured to
//! take). cairn's own rules cover only what the catalog does not say (which Claude models count with Anthropic's
//! newer tokenizer, which families drop past thinking), and every figure says where it came from
//! ([`Source`]). Nothing else in the code matches a model name.

pub mod catalog;
pub mod pages;
pub mod price;

use serde::Serialize;

pub use catalog::{LARGEST_WINDOW_FLOOR, largest_window};
pub use pages::{Pages, pages_of};
pub use price::{Price, Pricer, cost, learn, usd};

use crate::tokens::Tokenizer;

/// Where a figure about a model came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The settings file.
    Settings,
    /// The maintained catalog (genai-prices).
    Catalog,
    /// What the provider measured for this model (the largest prompt it took).
    Measured,
    /// What the harness that wrote a session said it ran the model with (Codex's `model_context_window`), or
    /// recorded its replies cost (pi's and opencode's price, learned from them).
    Harness,
    /// cairn's own rule, for what the catalog does not say.
    Cairn,
    /// Nothing is known: a default.
    Default,
}

impl Source {
    /// Its name, as `cairn models` prints it and its JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Settings => "settings",
            Source::Catalog => "catalog",
            Source::Measured => "measured",
            Source::Harness => "harness",
            Source::Cairn => "cairn",
            Source::Default => "default",
        }
    }
}

/// The family of a model: its maker, which decides its tokenizer, what it drops, and the pages it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Claude models that count with Anthropic's newer tokenizer (Opus 4.7 and later) and read high-resolution
    /// pages.
    ClaudeNew,
    Claude,
    Gpt,
    Gemini,
    /// Anything else (third-party models through a harness, local models): learned from measurements.
    Other,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::ClaudeNew => "claude-hires",
            Family::Claude => "claude",
            Family::Gpt => "gpt",
            Family::Gemini => "gemini",
            Family::Other => "other",
        }
    }
}

/// Names harnesses record where there was no model: Claude Code's placeholder for replies it wrote itself, and
/// the empty and "unknown" names of files that did not say.
const NOT_MODELS: &[&str] = &["<synthetic>", "unknown", NO_MODEL];

/// What figures of replies whose harness named no model are listed under (a SWE-agent run before 1.0).
pub const NO_MODEL: &str = "(no model)";

/// A model's name as cairn keys it: any router prefix (`anthropic/`, `openrouter/x/`) and the snapshot's date
/// (`-20250929`, `@20250929`, OpenAI's `-2025-04-14`) removed, so one model's replies are counted together
/// whichever alias a harness recorded. None for names that are not a model (Claude Code's `<synthetic>`).
pub fn key(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || NOT_MODELS.contains(&raw) {
        return None;
    }
    let base = raw.split('@').next().unwrap_or(raw);
    let base = base.rsplit('/').next().unwrap_or(base);
    let base = variant(base).map_or(base, |(b, _)| b);
    // a setting written after the name, as Claude Code writes its 1M-token context (`claude-sonnet-4-5[1m]`)
    let base = match base.split_once('[') {
        Some((head, _)) if base.ends_with(']') && !head.is_empty() => head,
        _ => base,
    };
    let base = claude_of_cloud_id(base)
        .or_else(|| bedrock_region_dropped(base))
        .unwrap_or(base);
    let base = match base.rsplit_once('-') {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => match openai_snapshot(base) {
            // OpenAI's dated snapshots (`gpt-4.1-2025-04-14`) are the model, unless the catalog prices the snapshot
            // as a model of its own (`gpt-4o-2024-05-13`)
            Some(head) if !catalog::lists_apart(base) => head,
            _ => base,
        },
    };
    // routers spell Claude's versions with dots (`claude-sonnet-4.6`); Anthropic with hyphens
    let base = if base.starts_with("claude-") {
        base.replace('.', "-")
    } else {
        base.to_string()
    };
    (!base.is_empty()).then_some(base)
}

/// How a router's variant of a model is served and priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Only which provider serves it changes: the model's own price.
    Routing,
    /// Served at no charge.
    Free,
    /// An entry of its own, priced apart: where the catalog lists it.
    Listed,
}

/// OpenRouter's variants (`<model>:<variant>`, its documentation's "Model Variants"): the routing ones, accepted on
/// any model (`:nitro`, `:floor`, `:exacto`, a reasoning effort); the catalog's, entries of their own (`:free`,
/// `:thinking`, `:extended`, `:batch`, `:beta`). Every one is the model (its tokenizer, its rules); the catalog's
/// are priced apart. `:online` (a web-search plugin charged beside the tokens) is none of them.
const ROUTING_VARIANTS: &[&str] = &[
    "nitro",
    "floor",
    "exacto",
    "reasoning-exclude",
    "none",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
];
const LISTED_VARIANTS: &[&str] = &["thinking", "extended", "batch", "beta"];

/// A name's router variant, and the name without it (`openrouter/qwen/qwen3-coder` and [`Variant::Free`] of
/// `openrouter/qwen/qwen3-coder:free`). None for a name without one (an Ollama tag, `qwen2.5-coder:32b`, and a
/// Bedrock id's version, `…-v1:0`, are the model's own name).
pub fn variant(name: &str) -> Option<(&str, Variant)> {
    let (base, v) = name.rsplit_once(':')?;
    if base.is_empty() || base.ends_with('/') {
        return None;
    }
    let kind = if v == "free" {
        Variant::Free
    } else if ROUTING_VARIANTS.contains(&v) {
        Variant::Routing
    } else if LISTED_VARIANTS.contains(&v) {
        Variant::Listed
    } else {
        return None;
    };
    Some((base, kind))
}

/// Amazon Bedrock's id split as Bedrock writes it, `[region.]vendor.model` (`us.anthropic.claude-…`,
/// `amazon.nova-pro-v1:0`): the region of a cross-region profile (if any), the vendor and the model. The parts before
/// the model are words (a model's own dotted name, `gpt-4.1`, `claude-sonnet-4.6`, has a version there). None for a
/// name that is not one (a router's `provider/model` included).
pub(crate) fn bedrock_id(name: &str) -> Option<(Option<&str>, &str, &str)> {
    let word = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    let model_like = |m: &str| m.starts_with(|c: char| c.is_ascii_lowercase());
    let (first, rest) = name.split_once('.')?;
    if name.contains('/') || !word(first) {
        return None;
    }
    match rest.split_once('.') {
        Some((vendor, model)) if word(vendor) && model_like(model) => {
            Some((Some(first), vendor, model))
        }
        _ => model_like(rest).then_some((None, first, rest)),
    }
}

/// The Claude model a cloud's id names, where `name` is one: Amazon Bedrock's `[region.]anthropic.<model>[-vN:M]`
/// (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `global.anthropic.claude-opus-4-7`; the region is a
/// cross-region inference profile, the suffix the id's version) and Vertex AI's `<model>-vN` (`claude-3-5-sonnet-v2`,
/// whose date follows an `@`): the model Anthropic names without them, with its tokenizer and rules. What it is
/// priced at is the cloud's ([`catalog::routed`]: a regional profile costs more).
fn claude_of_cloud_id(name: &str) -> Option<&str> {
    let model = match bedrock_id(name) {
        Some((_, "anthropic", model)) if model.starts_with("claude-") => model,
        Some(_) => return None,
        None if name.starts_with("claude-") => name,
        None => return None,
    };
    // the id's version: `-v1:0`, `-v2`
    let model = match model.rsplit_once("-v") {
        Some((head, v))
            if head.bytes().any(|b| b.is_ascii_digit())
                && !v.is_empty()
                && v.split(':')
                    .all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            head
        }
        _ => model,
    };
    (model != name).then_some(model)
}

/// A Bedrock id of another vendor's model without the region of its cross-region profile: `amazon.nova-pro-v1:0`
/// of `us.amazon.nova-pro-v1:0`, the same model wherever it is served.
fn bedrock_region_dropped(name: &str) -> Option<&str> {
    let (region, _, _) = bedrock_id(name)?;
    Some(&name[region?.len() + 1..])
}

/// The model of an OpenAI snapshot's name: `gpt-4.1` of `gpt-4.1-2025-04-14` (a `-YYYY-MM-DD` suffix).
fn openai_snapshot(name: &str) -> Option<&str> {
    let (head, date) = name.split_at_checked(name.len().checked_sub(11)?)?;
    let b = date.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    (b[0] == b'-'
        && digits(1..5)
        && b[5] == b'-'
        && digits(6..8)
        && b[8] == b'-'
        && digits(9..11)
        && !head.is_empty())
    .then_some(head)
}

/// The speeds (service tiers) a provider reports serving a request at that are priced otherwise than its standard
/// one: Anthropic's fast mode (`usage.speed: "fast"`), OpenAI's `priority`, `fast` and `flex` tiers.
pub const SPEEDS: &[&str] = &["fast", "priority", "flex"];

/// The name a reply is priced by: its model and, where it was served at another speed, that speed after an `@`
/// (`claude-opus-4-8@fast`; the settings' `prices` may name it so). [`key`] reads it as the model.
pub fn at_speed(model: &str, speed: Option<&str>) -> String {
    match speed.filter(|s| SPEEDS.contains(s)) {
        Some(s) => format!("{model}@{s}"),
        None => model.to_string(),
    }
}

/// The speed a priced name ([`at_speed`]) carries, if any (a Vertex-style `@20250929` date is none).
pub fn speed(name: &str) -> Option<&str> {
    name.rsplit_once('@')
        .map(|(_, s)| s)
        .filter(|s| SPEEDS.contains(s))
}

/// A priced name as [`key`] groups it, its speed kept: what the settings' `prices` name to price it.
pub fn priced_key(name: &str) -> String {
    at_speed(&key_or_raw(name), speed(name))
}

/// The speed a reply was served at where the provider reported one priced otherwise than standard
/// ([`crate::models::SPEEDS`]): `meta.speed` (a reader's), else the usage Claude Code keeps with each line of a
/// reply (`lines[].message.usage.speed`: Anthropic's fast mode).
pub fn speed_of(meta: &serde_json::Value) -> Option<&str> {
    meta.get("speed")
        .and_then(serde_json::Value::as_str)
        .or_else(|| {
            meta.get("lines")
                .and_then(serde_json::Value::as_array)?
                .iter()
                .rev()
                .find_map(|l| {
                    l.pointer("/message/usage/speed")
                        .and_then(serde_json::Value::as_str)
                })
        })
        .filter(|s| SPEEDS.contains(s))
}

/// The tier a line of a Codex rollout sets for the requests after it (read where the rollout is, and where a store
/// made before prices the replies it holds), where it sets one: `thread_settings_applied` (the
/// thread's settings whole: none named is the standard tier), or a `turn_context` that names one. `Some(None)`:
/// back to standard.
pub fn codex_tier_set_by(line: &serde_json::Value) -> Option<Option<&'static str>> {
    let payload = line.get("payload")?;
    match line.get("type").and_then(serde_json::Value::as_str)? {
        "event_msg"
            if payload.get("type").and_then(serde_json::Value::as_str)
                == Some("thread_settings_applied") =>
        {
            Some(
                payload
                    .pointer("/thread_settings/service_tier")
                    .or_else(|| payload.get("service_tier"))
                    .and_then(codex_tier),
            )
        }
        "turn_context" => payload.get("service_tier").map(codex_tier),
        _ => None,
    }
}

/// The speed a service tier Codex records is priced at ([`SPEEDS`]): its `fast` setting, which it
/// sends as OpenAI's `priority` tier (and records so since), and `flex`. None for the standard tier (`default`,
/// `auto`, none named).
fn codex_tier(tier: &serde_json::Value) -> Option<&'static str> {
    match tier.as_str()?.trim().to_ascii_lowercase().as_str() {
        "priority" | "fast" => Some("priority"),
        "flex" => Some("flex"),
        _ => None,
    }
}

/// The name a reply is priced by: its model ([`crate::model::model_of`]) and the speed it was served at
/// ([`speed_of`]), as [`at_speed`] writes them. What the store's measures record as the reply's model.
///
/// A reply that names the provider it went through beside its model (Cline's `providerId`, as `meta.provider`; pi's
/// `message.provider`) is priced as that provider's `provider/model` (OpenRouter's rate for a task through
/// OpenRouter), as opencode's and LiteLLM's names say it themselves.
pub fn priced_model(meta: &serde_json::Value) -> Option<std::borrow::Cow<'_, str>> {
    let model = crate::model::model_of(meta)?;
    let routed = meta
        .get("provider")
        .or_else(|| meta.pointer("/entry/message/provider"))
        .and_then(serde_json::Value::as_str)
        .filter(|p| {
            !p.is_empty()
                && !model
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
        .map(|p| format!("{p}/{model}"));
    Some(match (routed, speed_of(meta)) {
        (routed, Some(s)) => {
            std::borrow::Cow::Owned(at_speed(routed.as_deref().unwrap_or(model), Some(s)))
        }
        (Some(r), None) => std::borrow::Cow::Owned(r),
        (None, None) => std::borrow::Cow::Borrowed(model),
    })
}

/// [`key`], or the name itself where it is not a model (for grouping what has no model).
pub fn key_or_raw(raw: &str) -> String {
    key(raw).unwrap_or_else(|| raw.to_string())
}

/// A Claude model's generation, read from its name: (`opus`, 4, 7) for `claude-opus-4-7` or `claude-opus-4.7`,
/// (`sonnet`, 3, 5) for `claude-3-5-sonnet`.
fn claude_version(id: &str) -> Option<(String, u64, u64)> {
    let rest = id.strip_prefix("claude-")?;
    let parts: Vec<&str> = rest.split(['-', '.']).collect();
    let num = |s: &&str| s.parse::<u64>().ok();
    let tier = parts.iter().find(|p| num(p).is_none())?.to_string();
    let nums: Vec<u64> = parts.iter().filter_map(num).filter(|n| *n < 100).collect();
    Some((tier, *nums.first()?, nums.get(1).copied().unwrap_or(0)))
}

/// Anthropic documents that Opus 4.7 and later, every Claude 5 model, and the Fable and Mythos models count with a
/// newer tokenizer (about 30% more tokens for the same text) and read images at high resolution.
fn claude_is_new(id: &str) -> bool {
    if id.contains("fable") || id.contains("mythos") {
        return true;
    }
    match claude_version(id) {
        Some((tier, major, minor)) => major >= 5 || (tier == "opus" && major == 4 && minor >= 7),
        None => false,
    }
}

/// What cairn knows of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// The key ([`key`]).
    pub name: String,
    /// The catalog's provider and model id, where the catalog lists it.
    pub provider: Option<String>,
    pub catalog_id: Option<String>,
    pub family: Family,
    pub family_source: Source,
    /// The window the catalog or the settings give (None: neither does).
    pub listed_window: Option<u64>,
    pub tokenizer: Tokenizer,
    pub tokenizer_source: Source,
    /// The estimator's scale before any measurement of this model (its tokenizer against cairn's estimate).
    pub default_scale: f64,
    pub keeps_past_thinking: bool,
    /// Whether the catalog (or the settings) prices it.
    pub priced: bool,
    pub price_source: Source,
}

/// The scale of Anthropic's newer tokenizer against the older one.
pub const NEW_CLAUDE_SCALE: f64 = 1.3;

/// Everything known of a model by its name (the key of [`key`] or a raw name): the catalog, then cairn's rules.
/// `prices` are the settings file's.
pub fn model(name: &str, prices: &std::collections::BTreeMap<String, Price>) -> Model {
    let raw = name;
    // what a router's `provider/model` is priced and sized by; the family is the model's, by its key
    let routed = catalog::routed(name);
    let name = key_or_raw(name);
    let listed = catalog::listed(&name);
    let provider = listed
        .as_ref()
        .map(|l| l.provider.clone())
        .or_else(|| catalog::provider_of(&name));
    let id = listed.as_ref().map_or(name.as_str(), |l| l.id.as_str());
    let (family, family_source) = match provider.as_deref() {
        Some("anthropic") if claude_is_new(id) => (Family::ClaudeNew, Source::Catalog),
        Some("anthropic") => (Family::Claude, Source::Catalog),
        Some("openai") => (Family::Gpt, Source::Catalog),
        Some("google") => (Family::Gemini, Source::Catalog),
        _ => (Family::Other, Source::Default),
    };
    let (tokenizer, tokenizer_source) = match family {
        // OpenAI publishes o200k for its GPT-4o and later, o-series and Codex models
        Family::Gpt => (Tokenizer::O200k, Source::Cairn),
        _ => (Tokenizer::Estimate, Source::Default),
    };
    let default_scale = if family == Family::ClaudeNew {
        NEW_CLAUDE_SCALE
    } else {
        1.0
    };
    // OpenAI's reasoning models send back only the current turn's reasoning; Claude 3 drops past thinking too.
    // Claude 4 and later keep it (replayed sessions: the measured prompt does not shrink after a turn's thinking).
    let keeps_past_thinking = match family {
        Family::Gpt => false,
        Family::Claude => claude_version(id).is_none_or(|(_, major, _)| major >= 4),
        _ => true,
    };
    // a router's free variant costs nothing, listed or not
    let free = variant(raw).is_some_and(|(_, v)| v == Variant::Free);
    let own = price::own(&name, prices);
    let own_price = own.is_some();
    // prices and window: the router's entry where it has one, else the model's
    let sized = routed.as_ref().or(listed.as_ref());
    let priced = own_price || free || sized.is_some();
    Model {
        // a router that does not say its window serves the model's
        listed_window: sized
            .and_then(|l| l.window)
            .or_else(|| listed.as_ref().and_then(|l| l.window)),
        provider: routed.as_ref().map(|l| l.provider.clone()).or(provider),
        catalog_id: sized.map(|l| l.id.clone()),
        family,
        family_source,
        tokenizer,
        tokenizer_source: if family == Family::Gpt {
            tokenizer_source
        } else if family == Family::ClaudeNew {
            Source::Cairn
        } else {
            Source::Default
        },
        default_scale,
        keeps_past_thinking,
        priced,
        price_source: if own.is_some_and(|p| p.learned_from > 0) {
            Source::Harness
        } else if own_price {
            Source::Settings
        } else if sized.is_some() {
            Source::Catalog
        } else if free {
            Source::Cairn
        } else {
            Source::Default
        },
        name,
    }
}

/// What the catalog and cairn's rules say of a model regardless of the settings' prices: its family, tokenizer,
/// whether it keeps past thinking and its default scale.
pub(crate) type Known = (Family, Tokenizer, bool, f64);

/// [`Known`], kept per name by the catalog in use: asked once per reply on long paths, it must cost a map lookup.
fn known(name: &str) -> Known {
    let catalog = catalog::current();
    if let Ok(k) = catalog.known.lock()
        && let Some(v) = k.get(name)
    {
        return *v;
    }
    let m = model(name, &Default::default());
    let v = (
        m.family,
        m.tokenizer,
        m.keeps_past_thinking,
        m.default_scale,
    );
    if let Ok(mut k) = catalog.known.lock() {
        k.insert(name.to_string(), v);
    }
    v
}

/// A model's family alone.
pub fn family(name: &str) -> Family {
    known(name).0
}

/// The tokenizer a model counts with, where it is public (o200k for OpenAI's), else cairn's estimate.
pub fn tokenizer(name: &str) -> Tokenizer {
    known(name).1
}

/// Whether a model keeps the thinking of earlier turns in its context.
pub fn keeps_past_thinking(name: &str) -> bool {
    known(name).2
}

/// What a message measures as the store keeps it: its blocks counted by `tk`, and for a reply the thinking it holds
/// but does not show, from what its provider measured ([`crate::tokens::measure_reply`], brought to the estimate's
/// unit by the model's default scale). The one measure of a message: the store, a path held in memory and a path
/// recounted by a model's tokenizer all take it.
pub fn measure(
    content: &[crate::model::Block],
    model: Option<&str>,
    usage: Option<&crate::model::Usage>,
    tk: Tokenizer,
) -> crate::tokens::Measure {
    let scale = model.map_or(1.0, default_scale);
    crate::tokens::measure_reply(content, usage, tk, scale)
}

/// The estimator's scale for a model nothing has been fitted on yet.
pub fn default_scale(name: &str) -> f64 {
    known(name).3
}

/// The default window when nothing is known of a model.
pub const DEFAULT_WINDOW: u64 = 200_000;

/// Windows of families the catalog lists some models of without a window (Gemini's Pro previews): the family's
/// documented window.
fn family_window(f: Family) -> Option<u64> {
    match f {
        Family::Gemini => Some(1_048_576),
        _ => None,
    }
}

/// A model's context window and where it came from: the settings' (longest matching name prefix), else the
/// catalog's, else its family's; never less than the largest prompt a provider measured for it (`measured`).
pub fn window(
    name: &str,
    settings: &std::collections::BTreeMap<String, u64>,
    measured: Option<u64>,
) -> (u64, Source) {
    let key = key_or_raw(name);
    let own = settings
        .iter()
        .filter(|(p, _)| key.starts_with(p.as_str()) || name.starts_with(p.as_str()))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, w)| *w);
    if let Some(w) = own {
        return (w, Source::Settings);
    }
    let m = model(name, &Default::default());
    let (w, source) = match (m.listed_window, family_window(m.family)) {
        (Some(w), _) => (w, Source::Catalog),
        (None, Some(w)) => (w, Source::Cairn),
        (None, None) => (DEFAULT_WINDOW, Source::Default),
    };
    match measured {
        Some(n) if n > w => (n, Source::Measured),
        _ => (w, source),
    }
}

/// A model as the store saw it (what `cairn models` starts from).
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// As the harness recorded it.
    pub model: String,
    pub replies: u64,
    pub measured: u64,
    pub max_prompt: u64,
}

/// List prices per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerMillion {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
}

impl PerMillion {
    /// `input/output/read/write 5m/write 1h`, as `cairn models` prints them.
    pub fn line(&self) -> String {
        format!(
            "{}/{}/{}/{}/{}",
            self.input, self.output, self.cache_read, self.cache_write_5m, self.cache_write_1h
        )
    }
}

/// One row of `cairn models`: everything cairn knows of a model the store has seen, and where each figure came
/// from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing {
    pub model: String,
    /// The names its replies recorded (aliases, dated snapshots).
    pub recorded_as: Vec<String>,
    pub replies: u64,
    pub measured_replies: u64,
    /// The largest prompt a provider measured for it.
    pub max_prompt: u64,
    pub provider: Option<String>,
    pub catalog_id: Option<String>,
    pub family: Family,
    pub window: u64,
    pub window_source: Source,
    pub tokenizer: Tokenizer,
    pub tokenizer_source: Source,
    /// Its own tokenizer is not public and no calibration chose one: each of its paths is counted with the one its
    /// own measured replies choose (`tokenizer` is what a path with none measured is counted with).
    pub tokenizer_per_path: bool,
    /// The estimator's scale: fitted on the store's measurements (`cairn calibrate`), else the default.
    pub scale: f64,
    pub scale_source: Source,
    pub keeps_past_thinking: bool,
    pub profile: &'static str,
    pub shape: &'static str,
    pub price_per_mtok: Option<PerMillion>,
    pub price_source: Source,
    /// How many recorded costs (replies, or sessions' sums) the price was learned from, where its source is the
    /// harness ([`learn`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_learned_from: Option<u32>,
    /// The windows harnesses said they ran it with (Codex's `model_context_window`): their conversations are
    /// planned against these, not against `window`.
    pub ran_with: Vec<RanWith>,
}

/// A window a harness said it ran a model with, and in how many conversations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RanWith {
    pub harness: String,
    pub window: u64,
    pub conversations: u64,
}

/// What `cairn calibrate` kept of a model: its fitted scale, and the tokenizer its measurements chose where its own
/// is not public.
pub type Fitted = (f64, Option<Tokenizer>);

/// The listing of the models `seen`, one row per model key, under the settings' `windows` and `prices`; `fitted`
/// gives a model's fitted scale where `cairn calibrate` kept one, and the tokenizer its measurements chose where
/// its own is not public; `ran_with` the windows harnesses said they ran
/// models with ((model, harness, window), one per conversation).
pub fn listing(
    seen: &[Seen],
    windows: &std::collections::BTreeMap<String, u64>,
    prices: &std::collections::BTreeMap<String, Price>,
    fitted: &dyn Fn(&str) -> Option<Fitted>,
    ran_with: &[(String, String, u64)],
) -> Vec<Listing> {
    let mut by_key: std::collections::BTreeMap<String, Vec<&Seen>> = Default::default();
    for s in seen {
        if let Some(k) = key(&s.model) {
            by_key.entry(k).or_default().push(s);
        }
    }
    by_key
        .into_iter()
        .map(|(k, all)| {
            // a router's name prices and sizes the model as that provider's (`openrouter/qwen/…`)
            let named = all
                .iter()
                .map(|s| s.model.as_str())
                .find(|m| catalog::routed(m).is_some())
                .unwrap_or(k.as_str());
            let m = model(named, prices);
            let max_prompt = all.iter().map(|s| s.max_prompt).max().unwrap_or(0);
            let (window, window_source) =
                window(named, windows, (max_prompt > 0).then_some(max_prompt));
            let (fit, chosen) = fitted(&k).map_or((None, None), |(s, t)| (Some(s), t));
            let pages = pages::pages_or_default(&k);
            Listing {
                recorded_as: all.iter().map(|s| s.model.clone()).collect(),
                replies: all.iter().map(|s| s.replies).sum(),
                measured_replies: all.iter().map(|s| s.measured).sum(),
                max_prompt,
                provider: m.provider.clone(),
                catalog_id: m.catalog_id.clone(),
                family: m.family,
                window,
                window_source,
                tokenizer: chosen.unwrap_or(m.tokenizer),
                tokenizer_source: if chosen.is_some() {
                    Source::Measured
                } else {
                    m.tokenizer_source
                },
                tokenizer_per_path: chosen.is_none()
                    && m.tokenizer == Tokenizer::Estimate
                    && all.iter().any(|s| s.measured > 0),
                scale: fit.unwrap_or(m.default_scale),
                scale_source: if fit.is_some() {
                    Source::Measured
                } else if m.default_scale != 1.0 {
                    Source::Cairn
                } else {
                    Source::Default
                },
                keeps_past_thinking: m.keeps_past_thinking,
                profile: pages.profile,
                shape: pages.shape,
                price_per_mtok: price::per_million(named, prices).map(|p| PerMillion {
                    input: p[0],
                    output: p[1],
                    cache_read: p[2],
                    cache_write_5m: p[3],
                    cache_write_1h: p[4],
                }),
                price_source: m.price_source,
                price_learned_from: price::own(named, prices)
                    .map(|p| p.learned_from)
                    .filter(|&n| n > 0),
                ran_with: ran_with_of(&k, ran_with),
                model: k,
            }
        })
        .collect()
}

/// The windows harnesses ran the model `key` with, each with the number of conversations that said it.
fn ran_with_of(key: &str, all: &[(String, String, u64)]) -> Vec<RanWith> {
    let mut by: std::collections::BTreeMap<(&str, u64), u64> = Default::default();
    for (model, harness, w) in all {
        if key_or_raw(model) == key {
            *by.entry((harness.as_str(), *w)).or_default() += 1;
        }
    }
    by.into_iter()
        .map(|((harness, window), conversations)| RanWith {
            harness: harness.to_string(),
            window,
            conversations,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_router_s_name_is_priced_as_that_provider_s_model_and_keeps_its_family() {
        let u = crate::model::Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            ..Default::default()
        };
        let none = Default::default();
        // OpenRouter's qwen3-235b-a22b: $0.13 in, $0.60 out (the catalog's), unknown by its key alone
        let c = cost("openrouter/qwen/qwen3-235b-a22b", &u, 0, &none).unwrap();
        assert!((c - 0.73).abs() < 1e-9, "{c}");
        assert_eq!(cost("qwen3-235b-a22b", &u, 0, &none), None);
        let m = model("openrouter/qwen/qwen3-235b-a22b", &none);
        assert!(m.priced);
        assert_eq!(m.provider.as_deref(), Some("openrouter"));
        assert_eq!(m.name, "qwen3-235b-a22b");
        // a Claude model through a router is still Claude (its tokenizer and thinking rules)
        assert_eq!(
            model("openrouter/anthropic/claude-sonnet-4.5", &none).family,
            Family::Claude
        );
        // the Pricer prices it the same way
        let p = price::Pricer::new(&none);
        let fast = p.cost("openrouter/qwen/qwen3-235b-a22b", &u, 0).unwrap();
        assert!((fast - c).abs() < 1e-9);
        // OpenRouter's variants: a routing one at the model's price, a free one at nothing (never the paid
        // model's), another listed one at its own entry's price, or unknown where the catalog does not list it
        for pricer in [true, false] {
            let at = |name: &str| {
                if pricer {
                    p.cost(name, &u, 0)
                } else {
                    cost(name, &u, 0, &none)
                }
            };
            assert_eq!(at("openrouter/qwen/qwen3-235b-a22b:nitro"), Some(c));
            assert_eq!(at("openrouter/qwen/qwen3-coder:free"), Some(0.0));
            assert_eq!(at("openrouter/deepseek/deepseek-r1:free"), Some(0.0));
            assert!(at("openrouter/deepseek/deepseek-r1").is_some_and(|c| c > 0.0));
            assert_eq!(at("openrouter/qwen/qwen3-235b-a22b:batch"), None);
            let batch = at("openrouter/anthropic/claude-haiku-5.5:batch").unwrap();
            let full = at("openrouter/anthropic/claude-haiku-5.5").unwrap();
            assert!((batch - full / 2.0).abs() < 1e-9, "{batch} {full}");
            // a variant a provider's own entry takes (Cline's id for Claude 3.7 Sonnet thinking): the model's
            assert_eq!(
                at("claude-3-7-sonnet-20250219:thinking"),
                at("claude-3-7-sonnet")
            );
            assert!(at("claude-3-7-sonnet").is_some());
        }
        let free = model("openrouter/qwen/qwen3-coder:free", &none);
        assert!(free.priced);
        assert_eq!(free.name, "qwen3-coder");
    }

    #[test]
    fn keys_drop_routers_and_dates_and_refuse_placeholders() {
        assert_eq!(
            key("claude-sonnet-4-5-20250929").as_deref(),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(
            key("anthropic/claude-opus-4-8").as_deref(),
            Some("claude-opus-4-8")
        );
        assert_eq!(key("claude-3-5@20241022").as_deref(), Some("claude-3-5"));
        assert_eq!(
            key("github-copilot/claude-sonnet-4.6").as_deref(),
            Some("claude-sonnet-4-6")
        );
        assert_eq!(key("gpt-5.5").as_deref(), Some("gpt-5.5"));
        // OpenAI's dated snapshots, as its API and litellm name them, are their model...
        assert_eq!(key("gpt-4.1-2025-04-14").as_deref(), Some("gpt-4.1"));
        assert_eq!(
            key("openai/gpt-5-mini-2025-08-07").as_deref(),
            Some("gpt-5-mini")
        );
        // ...unless the catalog prices the snapshot apart ($5 / $15, where gpt-4o is $2.50 / $10)
        assert_eq!(
            key("gpt-4o-2024-05-13").as_deref(),
            Some("gpt-4o-2024-05-13")
        );
        let u = crate::model::Usage {
            input_tokens: 1_000_000,
            ..Default::default()
        };
        let none = Default::default();
        assert_eq!(cost("gpt-4o-2024-05-13", &u, 0, &none), Some(5.0));
        assert_eq!(cost("gpt-4o-2024-08-06", &u, 0, &none), Some(2.5));
        assert_eq!(key("<synthetic>"), None);
        assert_eq!(key(""), None);
    }

    #[test]
    fn a_cloud_s_id_and_a_router_s_variant_are_the_model() {
        let none = Default::default();
        // Amazon Bedrock's ids (as Claude Code, opencode and LiteLLM record them) and Vertex AI's are Claude's
        for (id, k) in [
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                "claude-sonnet-4-5",
            ),
            (
                "bedrock/global.anthropic.claude-opus-4-7",
                "claude-opus-4-7",
            ),
            (
                "amazon-bedrock/us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0",
                "claude-3-7-sonnet",
            ),
            (
                "anthropic.claude-3-5-sonnet-20241022-v2:0",
                "claude-3-5-sonnet",
            ),
            ("anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
            (
                "vertex_ai/claude-3-5-sonnet-v2@20241022",
                "claude-3-5-sonnet",
            ),
        ] {
            assert_eq!(key(id).as_deref(), Some(k), "{id}");
        }
        // ...priced as Bedrock prices them: a regional profile at Amazon's 10% more, a global one at the list
        let u = crate::model::Usage {
            input_tokens: 100_000,
            ..Default::default()
        };
        let at = |name: &str| cost(name, &u, 0, &none).map(|c| (c * 1e6).round() / 1e6);
        assert_eq!(at("claude-sonnet-4-5"), Some(0.3));
        assert_eq!(
            at("global.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some(0.3)
        );
        assert_eq!(
            at("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some(0.33)
        );
        let p = price::Pricer::new(&none);
        assert_eq!(
            p.cost("us.anthropic.claude-sonnet-4-5-20250929-v1:0", &u, 0)
                .map(|c| (c * 1e6).round()),
            Some(330_000.0)
        );
        for (id, k) in [
            // OpenRouter's variants and Claude Code's 1M-context setting are the model
            (
                "openrouter/anthropic/claude-3.5-sonnet:beta",
                "claude-3-5-sonnet",
            ),
            ("openrouter/qwen/qwen3-coder:free", "qwen3-coder"),
            ("openrouter/openai/gpt-5.2:nitro", "gpt-5.2"),
            ("deepseek/deepseek-r1:floor", "deepseek-r1"),
            ("claude-sonnet-4-5-20250929[1m]", "claude-sonnet-4-5"),
            // ...but an Ollama tag, a web-search plugin, a Bedrock id's version are part of the name
            ("ollama_chat/qwen2.5-coder:32b", "qwen2.5-coder:32b"),
            ("anthropic/claude-sonnet-4:online", "claude-sonnet-4:online"),
            ("amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
            // another vendor's model on Bedrock is one model whichever region's profile served it
            ("bedrock/us.amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
            (
                "us.meta.llama3-3-70b-instruct-v1:0",
                "meta.llama3-3-70b-instruct-v1:0",
            ),
            // a dotted name and a version that are the model's own are kept
            ("gpt-4.1", "gpt-4.1"),
            ("mimo-v2.5-pro", "mimo-v2.5-pro"),
            ("claude-v2:1", "claude-v2:1"),
        ] {
            assert_eq!(key(id).as_deref(), Some(k), "{id}");
        }
    }

    #[test]
    fn families_come_from_the_catalog_and_newer_claude_from_its_version() {
        assert_eq!(family("claude-opus-4-8"), Family::ClaudeNew);
        assert_eq!(family("claude-opus-4-7"), Family::ClaudeNew);
        assert_eq!(family("claude-opus-4-6"), Family::Claude);
        assert_eq!(family("claude-sonnet-4-5-20250929"), Family::Claude);
        assert_eq!(family("gpt-5.5"), Family::Gpt);
        assert_eq!(family("gemini-2.5-pro"), Family::Gemini);
        assert_eq!(family("mimo-v2.5-pro"), Family::Other);
        // a Claude model newer than the catalog: its provider is still known, and its generation
        assert_eq!(family("claude-sonnet-5-2"), Family::ClaudeNew);
        // through a cloud: the model's own family (Opus 4.7 on Bedrock counts with the newer tokenizer)
        assert_eq!(
            family("global.anthropic.claude-opus-4-7"),
            Family::ClaudeNew
        );
        assert_eq!(
            family("us.anthropic.claude-sonnet-4-20250514-v1:0"),
            Family::Claude
        );
        assert_eq!(tokenizer("gpt-5.3-codex"), Tokenizer::O200k);
        assert!(!keeps_past_thinking("claude-3-7-sonnet"));
        assert!(keeps_past_thinking("claude-opus-4-8"));
        assert!(!keeps_past_thinking("o3"));
    }

    #[test]
    fn windows_from_settings_catalog_and_measurements() {
        let none = std::collections::BTreeMap::new();
        assert_eq!(
            window("claude-opus-4-8", &none, None),
            (1_000_000, Source::Catalog)
        );
        assert_eq!(window("gpt-4o", &none, None), (128_000, Source::Catalog));
        assert_eq!(
            window("mimo-v2.5-pro", &none, None),
            (DEFAULT_WINDOW, Source::Default)
        );
        assert_eq!(
            window("mimo-v2.5-pro", &none, Some(302_419)),
            (302_419, Source::Measured)
        );
        let mut own = none.clone();
        own.insert("claude-sonnet-4-5".to_string(), 1_000_000);
        assert_eq!(
            window("claude-sonnet-4-5-20250929", &own, None),
            (1_000_000, Source::Settings)
        );
    }
}
