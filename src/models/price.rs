//! What a request cost: one function of (model, usage, date) for every figure that shows a cost (stats, compare,
//! diff, the exports, legibility, the cache report). The settings file's `"prices"` come first (by name, dates
//! stripped); else the catalog prices the request as its own calculator does: tiers above a prompt size, prices
//! that change on a date, cache reads, 5-minute and 1-hour cache writes. A model neither prices has no cost (None),
//! never $0.

use std::collections::BTreeMap;

use genai_prices::PriceRequest;
use serde::{Deserialize, Serialize};

use crate::model::Usage;

/// A price the settings give: US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    /// Cache writes (5-minute lifetime).
    #[serde(default)]
    pub cache_write: f64,
    /// Cache writes with the 1-hour lifetime (the 5-minute price when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
    /// US dollars per thousand web searches the provider ran (none: not priced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_search: Option<f64>,
    /// How many replies this price was learned from, where it was learned from what their harness recorded they
    /// cost ([`learn`]); 0 for a price the settings give.
    #[serde(skip)]
    pub learned_from: u32,
}

/// The kinds of token a price prices: uncached input, output, cache reads, 5-minute and 1-hour cache writes.
const PRICED_KINDS: usize = 5;

/// What a harness recorded its replies of one model cost, read back as the model's price: the rates per million
/// tokens (uncached input, output, cache reads, 5-minute and 1-hour cache writes) that best give each recorded
/// cost from its usage (least squares, no rate below zero). A sample is one reply (pi and Cline price each from
/// their own lists, opencode from models.dev's) or a session's sum so far (Claude Code's `cost-state`): for a
/// model neither the catalog nor the settings price, that is the price the sessions were run at. A kind of token
/// no sample used is priced as uncached input (1-hour writes as 5-minute ones). None when no sample recorded a cost
/// above zero (a harness that does not know the price records 0), when too few did to tell the rates apart (two
/// more than the kinds of token they used), or when no rates give the recorded costs to within 2% of their sum,
/// sample by sample (a price that is not linear in the tokens, such as a tier the replies crossed).
pub fn learn(samples: &[(Usage, f64)]) -> Option<Price> {
    let rows: Vec<([f64; PRICED_KINDS], f64)> = samples
        .iter()
        .filter(|(_, c)| *c > 0.0 && c.is_finite())
        .map(|(u, c)| {
            let w1h = u
                .cache_creation_1h_input_tokens
                .min(u.cache_creation_input_tokens);
            (
                [
                    u.input_tokens as f64,
                    u.output_tokens as f64,
                    u.cache_read_input_tokens as f64,
                    (u.cache_creation_input_tokens - w1h) as f64,
                    w1h as f64,
                ],
                *c,
            )
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    // the kinds of token the samples used
    let used: Vec<usize> = (0..PRICED_KINDS)
        .filter(|&k| rows.iter().any(|(x, _)| x[k] > 0.0))
        .collect();
    // as many samples as rates give any rates: two more, so that how well they fit says something
    if rows.len() < used.len() + 2 {
        return None;
    }
    // a kind whose best rate is below zero costs nothing; of kinds the samples always used in one proportion, the
    // one they used least is priced as input
    let mut per = [f64::NAN; PRICED_KINDS];
    let mut active = used;
    while !active.is_empty() {
        let Some(r) = least_squares(&rows, &active) else {
            let least = active.iter().copied().min_by(|&a, &b| {
                let sum = |k: usize| rows.iter().map(|(x, _)| x[k]).sum::<f64>();
                sum(a).total_cmp(&sum(b))
            })?;
            active.retain(|&a| a != least);
            continue;
        };
        match active
            .iter()
            .zip(&r)
            .filter(|(_, v)| **v < 0.0)
            .min_by(|a, b| a.1.total_cmp(b.1))
        {
            Some((&k, _)) => {
                per[k] = 0.0;
                active.retain(|&a| a != k);
            }
            None => {
                for (k, v) in active.iter().zip(&r) {
                    per[*k] = *v;
                }
                break;
            }
        }
    }
    if per.iter().all(|v| v.is_nan() || *v == 0.0) {
        return None;
    }
    let input = if per[0].is_nan() { 0.0 } else { per[0] };
    let or_input = |v: f64| if v.is_nan() { input } else { v };
    let cache_write = or_input(per[3]);
    let price = Price {
        input,
        output: or_input(per[1]),
        cache_read: or_input(per[2]),
        cache_write,
        // 1-hour writes the replies never made: the 5-minute price
        cache_write_1h: (!per[4].is_nan()).then_some(per[4]),
        web_search: None,
        learned_from: u32::try_from(rows.len()).unwrap_or(u32::MAX),
    };
    let rates = [
        price.input,
        price.output,
        price.cache_read,
        price.cache_write,
        price.cache_write_1h.unwrap_or(cache_write),
    ];
    let recorded: f64 = rows.iter().map(|(_, c)| c).sum();
    let missed: f64 = rows
        .iter()
        .map(|(x, c)| {
            let fitted: f64 = x.iter().zip(&rates).map(|(n, r)| n * r).sum::<f64>() / 1e6;
            (fitted - c).abs()
        })
        .sum();
    (missed <= 0.02 * recorded).then_some(price)
}

/// The rates (US dollars per million tokens) of the columns `cols` that best give `rows`' costs: each column scaled
/// to unit length (a kind used by the few against one used by the million), then Householder QR, which keeps the
/// precision the normal equations would square away; None when the columns are dependent (two kinds of token
/// always used in one proportion cannot be told apart).
fn least_squares(rows: &[([f64; PRICED_KINDS], f64)], cols: &[usize]) -> Option<Vec<f64>> {
    let n = cols.len();
    let norms: Vec<f64> = cols
        .iter()
        .map(|&k| rows.iter().map(|(x, _)| x[k] * x[k]).sum::<f64>().sqrt())
        .collect();
    if norms.contains(&0.0) {
        return None;
    }
    let mut a: Vec<Vec<f64>> = rows
        .iter()
        .map(|(x, _)| cols.iter().zip(&norms).map(|(&k, v)| x[k] / v).collect())
        .collect();
    let mut b: Vec<f64> = rows.iter().map(|(_, c)| *c).collect();
    for k in 0..n {
        let norm = a[k..].iter().map(|r| r[k] * r[k]).sum::<f64>().sqrt();
        if norm < 1e-10 {
            return None;
        }
        let alpha = if a[k][k] > 0.0 { -norm } else { norm };
        // the reflector v = x - alpha e1, applied as I - 2 v v' / v'v
        let mut v: Vec<f64> = a[k..].iter().map(|r| r[k]).collect();
        v[0] -= alpha;
        let vv: f64 = v.iter().map(|x| x * x).sum();
        if vv == 0.0 {
            continue;
        }
        for j in k..n {
            let dot: f64 = v.iter().zip(&a[k..]).map(|(vi, r)| vi * r[j]).sum();
            let f = 2.0 * dot / vv;
            for (vi, r) in v.iter().zip(a[k..].iter_mut()) {
                r[j] -= f * vi;
            }
        }
        let dot: f64 = v.iter().zip(&b[k..]).map(|(vi, bi)| vi * bi).sum();
        let f = 2.0 * dot / vv;
        for (vi, bi) in v.iter().zip(b[k..].iter_mut()) {
            *bi -= f * vi;
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        if a[k][k].abs() < 1e-10 {
            return None;
        }
        let rest: f64 = (k + 1..n).map(|j| a[k][j] * x[j]).sum();
        x[k] = (b[k] - rest) / a[k][k];
    }
    Some(x.iter().zip(&norms).map(|(v, nm)| v / nm * 1e6).collect())
}

/// The settings' price of a model: by the name as recorded, else by its key. A reply served at another speed
/// (`claude-opus-4-8@fast`) takes only a price named with that speed: the model's own is its standard one.
pub fn own(name: &str, prices: &BTreeMap<String, Price>) -> Option<Price> {
    if super::speed(name).is_some() {
        return prices
            .get(name)
            .or_else(|| prices.get(&super::priced_key(name)))
            .copied();
    }
    prices
        .get(name)
        .or_else(|| super::key(name).and_then(|k| prices.get(&k)))
        .copied()
}

/// The cost in US dollars of one request of `model` that measured `usage` (or of the requests it sums), made at
/// `at_ms` (epoch ms; 0 or less: now), or None when no price is known.
pub fn cost(
    model: &str,
    usage: &Usage,
    at_ms: i64,
    prices: &BTreeMap<String, Price>,
) -> Option<f64> {
    let name = super::key(model)?;
    if let Some(p) = own(model, prices) {
        let w1h = usage
            .cache_creation_1h_input_tokens
            .min(usage.cache_creation_input_tokens);
        let w5m = usage.cache_creation_input_tokens - w1h;
        return Some(
            (usage.input_tokens as f64 * p.input
                + usage.output_tokens as f64 * p.output
                + usage.cache_read_input_tokens as f64 * p.cache_read
                + w5m as f64 * p.cache_write
                + w1h as f64 * p.cache_write_1h.unwrap_or(p.cache_write))
                / 1_000_000.0
                + usage.web_search_requests as f64 * p.web_search.unwrap_or(0.0) / 1_000.0,
        );
    }
    // a router's `provider/model` is priced as that provider's model (what was paid), else the model by its key;
    // a router's free variant at nothing, and its other listed variants only where the catalog lists them
    let speed = super::speed(model);
    let bare = speed.map_or(model, |s| &model[..model.len() - s.len() - 1]);
    let variant = super::variant(bare).map(|(_, v)| v);
    if variant == Some(super::Variant::Free) {
        return Some(0.0);
    }
    // one catalog for the match and the price (another may be installed meanwhile)
    let catalog = super::catalog::current();
    let listed = match variant {
        // by the name as recorded, which a provider's entry may match (Cline's `claude-3-7-sonnet-…:thinking`,
        // Anthropic's model), never by the model's key
        Some(super::Variant::Listed) => catalog.routed(bare).or_else(|| catalog.listed(bare))?,
        _ => catalog.routed(bare).or_else(|| catalog.listed(&name))?,
    };
    // a sum of several requests is priced as that many requests of its average size (a tier applies per request)
    let n = usage.request_count() as f64;
    let write = usage.cache_creation_input_tokens;
    let mut u = genai_prices::Usage::new();
    u.insert("input_tokens", usage.prompt() as f64 / n);
    u.insert("output_tokens", usage.output_tokens as f64 / n);
    if usage.cache_read_input_tokens > 0 {
        u.insert(
            "cache_read_tokens",
            usage.cache_read_input_tokens as f64 / n,
        );
    }
    if write > 0 {
        u.insert("cache_write_tokens", write as f64 / n);
        let w1h = usage.cache_creation_1h_input_tokens.min(write);
        if w1h > 0 {
            u.insert("cache_write_1h_tokens", w1h as f64 / n);
        }
    }
    if usage.web_search_requests > 0 {
        u.insert("web_searches", usage.web_search_requests as f64 / n);
    }
    let mut req = PriceRequest::new(&listed.asked, &u).with_provider_id(&listed.provider);
    if at_ms > 0 {
        req = req.with_timestamp(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(at_ms.unsigned_abs()),
        );
    }
    let calculator = catalog.calculator_of(&listed);
    let standard = calculator.calculate(&req).ok()?.total_price * n;
    let Some(s) = speed else {
        return Some(standard);
    };
    // another speed is priced where the catalog lists its rate; else it would give the standard one: unknown
    let at = calculator
        .calculate(
            &req.with_price_context("service_tier", s)
                .with_price_context("speed", s),
        )
        .ok()?
        .total_price
        * n;
    ((at - standard).abs() > 1e-12 * standard.abs().max(1e-12)).then_some(at)
}

/// What a model charges per million tokens of each kind now, below any tier (for `cairn models`): uncached
/// input, output, cache read, 5-minute and 1-hour cache write. None for a model without a price.
pub fn per_million(model: &str, prices: &BTreeMap<String, Price>) -> Option<[f64; 5]> {
    let lin = Pricer::new(prices).probe(model, 0)?;
    let r = lin.rates.map(|r| (r * 1e12).round() / 1e6);
    Some([r[0], r[1], r[2], r[3], r[4]])
}

/// Per-token rates of a model at one hour (input, output, cache read, 5-minute write, 1-hour write; and per web
/// search), and the prompt size up to which they hold (a tier starts above it).
#[derive(Debug, Clone, Copy)]
struct Linear {
    rates: [f64; 6],
    below: u64,
}

impl Linear {
    fn apply(&self, u: &Usage) -> f64 {
        let w1h = u
            .cache_creation_1h_input_tokens
            .min(u.cache_creation_input_tokens);
        let w5m = u.cache_creation_input_tokens - w1h;
        let r = self.rates;
        u.input_tokens as f64 * r[0]
            + u.output_tokens as f64 * r[1]
            + u.cache_read_input_tokens as f64 * r[2]
            + w5m as f64 * r[3]
            + w1h as f64 * r[4]
            + u.web_search_requests as f64 * r[5]
    }
}

/// Prices many requests fast: where a model's price is linear (below its first tier, within one hour, as every
/// price constraint in the data is a date or a time of day), a request is a dot product with rates probed from
/// the catalog once per model and hour; above a tier, or where the probe could not tell, the catalog prices it.
/// Gives what [`cost`] gives (to float rounding).
pub struct Pricer<'a> {
    prices: &'a BTreeMap<String, Price>,
    /// Rates by model key, then hour.
    #[allow(clippy::type_complexity)]
    cache: std::cell::RefCell<
        std::collections::HashMap<String, std::collections::HashMap<i64, Option<Linear>>>,
    >,
    /// A recorded model name's key (its own name where a router's prefix prices it) and whether the settings
    /// price it (None: no model), read once per name.
    #[allow(clippy::type_complexity)]
    names: std::cell::RefCell<std::collections::HashMap<String, Option<(String, bool)>>>,
    /// The tier bound found for a model at given rates (model, rates, bound), reused by other hours.
    #[allow(clippy::type_complexity)]
    bounds: std::cell::RefCell<Vec<(String, [f64; 6], u64)>>,
}

impl<'a> Pricer<'a> {
    pub fn new(prices: &'a BTreeMap<String, Price>) -> Pricer<'a> {
        Pricer {
            prices,
            cache: Default::default(),
            names: Default::default(),
            bounds: Default::default(),
        }
    }

    fn probe(&self, model: &str, at_ms: i64) -> Option<Linear> {
        let n = 1_000u64;
        let one = |u: Usage| cost(model, &u, at_ms, self.prices);
        let input = one(Usage {
            input_tokens: n,
            ..Usage::default()
        })?;
        let with = |u: Usage| one(u).map(|c| (c - input) / n as f64);
        let rates = [
            input / n as f64,
            one(Usage {
                output_tokens: n,
                ..Usage::default()
            })? / n as f64,
            with(Usage {
                input_tokens: n,
                cache_read_input_tokens: n,
                ..Usage::default()
            })?,
            with(Usage {
                input_tokens: n,
                cache_creation_input_tokens: n,
                ..Usage::default()
            })?,
            with(Usage {
                input_tokens: n,
                cache_creation_input_tokens: n,
                cache_creation_1h_input_tokens: n,
                ..Usage::default()
            })?,
            with(Usage {
                input_tokens: n,
                web_search_requests: n,
                ..Usage::default()
            })?,
        ];
        // the largest prompt the rates hold for: the first size whose price is not rate x size, found by halving;
        // where another hour of this model had the same rates, its bound, confirmed at the bound (tiers change
        // with prices, and a long session crosses many hours)
        let linear_at = |size: u64| {
            one(Usage {
                input_tokens: size,
                ..Usage::default()
            })
            .is_some_and(|c| (c - rates[0] * size as f64).abs() <= 1e-9 * c.abs().max(1e-12))
        };
        let top = super::largest_window().saturating_mul(2);
        let known = self
            .bounds
            .borrow()
            .iter()
            .find(|(k, r, _)| k == model && *r == rates)
            .map(|x| x.2);
        let confirmed = known.filter(|&b| {
            if b == u64::MAX {
                linear_at(top)
            } else {
                linear_at(b) && !linear_at(b + 1)
            }
        });
        let below = match confirmed {
            Some(b) => b,
            None if linear_at(top) => u64::MAX,
            None => {
                let (mut lo, mut hi) = (n, top);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if linear_at(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                lo
            }
        };
        if confirmed.is_none() {
            self.bounds
                .borrow_mut()
                .push((model.to_string(), rates, below));
        }
        Some(Linear { rates, below })
    }

    /// The cost of requests of one model within one hour, from their summed usage, when it can be priced so:
    /// `Ok(cost)` where the model's price is linear up to `max_prompt` (None: no price), `Err(())` where a request
    /// may reach a tier (price them one by one).
    #[allow(clippy::result_unit_err)]
    pub fn cost_of_sum(
        &self,
        model: &str,
        sum: &Usage,
        at_ms: i64,
        max_prompt: u64,
    ) -> Result<Option<f64>, ()> {
        let Some((key, own)) = self.name(model) else {
            return Ok(None);
        };
        if own {
            return Ok(cost(model, sum, at_ms, self.prices));
        }
        match self.linear(&key, at_ms) {
            None => Ok(None),
            Some(lin) if max_prompt <= lin.below => Ok(Some(lin.apply(sum))),
            Some(_) => Err(()),
        }
    }

    fn linear(&self, key: &str, at_ms: i64) -> Option<Linear> {
        let hour = if at_ms > 0 {
            at_ms.div_euclid(3_600_000)
        } else {
            -1
        };
        if let Some(l) = self.cache.borrow().get(key).and_then(|h| h.get(&hour)) {
            return *l;
        }
        let l = self.probe(key, if hour < 0 { 0 } else { hour * 3_600_000 });
        self.cache
            .borrow_mut()
            .entry(key.to_string())
            .or_default()
            .insert(hour, l);
        l
    }

    /// A model name's key and whether the settings price it, cached per name.
    fn name(&self, model: &str) -> Option<(String, bool)> {
        if let Some(r) = self.names.borrow().get(model) {
            return r.clone();
        }
        // rates are kept per key, except for a router's name, priced as that provider's model
        let r = super::key(model).map(|k| {
            // a router's variant priced apart (`:free`, `:batch`) has rates of its own
            let apart = super::variant(model).is_some_and(|(_, v)| v != super::Variant::Routing);
            let name = if apart || super::catalog::routed(model).is_some() {
                model.to_string()
            } else {
                // a speed is priced apart: its rates are probed as its own
                super::at_speed(&k, super::speed(model))
            };
            (name, own(model, self.prices).is_some())
        });
        self.names.borrow_mut().insert(model.to_string(), r.clone());
        r
    }

    /// The cost of one request, as [`cost`] computes it.
    pub fn cost(&self, model: &str, usage: &Usage, at_ms: i64) -> Option<f64> {
        let (key, own) = self.name(model)?;
        if own {
            return cost(model, usage, at_ms, self.prices);
        }
        let lin = self.linear(&key, at_ms)?;
        if usage.prompt_per_request() > lin.below {
            return cost(model, usage, at_ms, self.prices);
        }
        Some(lin.apply(usage))
    }
}

/// A cost for people: `$1.2345` with `digits` decimals, or `unknown` where no price is known.
pub fn usd(c: Option<f64>, digits: usize) -> String {
    match c {
        Some(c) => format!("${c:.digits$}"),
        None => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(input: u64, output: u64, read: u64, write: u64, write_1h: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
            cache_creation_1h_input_tokens: write_1h,
            requests: 0,
            precision: 0,
            web_search_requests: 0,
        }
    }

    #[test]
    fn a_reply_served_at_another_speed_is_priced_at_it_or_not_at_all() {
        let none = BTreeMap::new();
        let m = u(100_000, 100_000, 0, 0, 0);
        let now = 1_796_000_000_000; // 2026-12: the catalog's tier rates hold from 2026-10-12
        // OpenAI's priority tier, which the catalog lists for gpt-5.5: $12.50 in, $75 out (standard $5, $30)
        let standard = cost("gpt-5.5", &m, now, &none).unwrap();
        let priority = cost("gpt-5.5@priority", &m, now, &none).unwrap();
        assert!((standard - 3.5).abs() < 1e-6, "{standard}");
        assert!((priority - 8.75).abs() < 1e-6, "{priority}");
        // Anthropic's fast mode, which it does not list: unknown, never the standard price
        assert!(cost("claude-opus-4-8", &m, now, &none).is_some());
        assert_eq!(cost("claude-opus-4-8@fast", &m, now, &none), None);
        // the settings price it by that name, and the model's own price is not it
        let mut mine = BTreeMap::new();
        let p = |input, output| Price {
            web_search: None,
            input,
            output,
            cache_read: 0.0,
            cache_write: 0.0,
            cache_write_1h: None,
            learned_from: 0,
        };
        mine.insert("claude-opus-4-8".to_string(), p(5.0, 25.0));
        assert_eq!(cost("claude-opus-4-8@fast", &m, now, &mine), None);
        mine.insert("claude-opus-4-8@fast".to_string(), p(10.0, 50.0));
        let fast = cost("claude-opus-4-8@fast", &m, now, &mine).unwrap();
        assert!((fast - 6.0).abs() < 1e-9, "{fast}");
        // the fast path of many requests agrees
        let pricer = Pricer::new(&none);
        assert_eq!(pricer.cost("claude-opus-4-8@fast", &m, now), None);
        let fast = pricer.cost("gpt-5.5@priority", &m, now).unwrap();
        assert!((fast - priority).abs() < 1e-6, "{fast}");
        // a Vertex date is no speed
        assert_eq!(crate::models::speed("claude-opus-4-8@20260101"), None);
    }

    #[test]
    fn catalog_prices_with_tiers_and_cache_lifetimes() {
        let none = BTreeMap::new();
        // Opus 4.7: $5 in, $25 out, $0.50 read, $6.25 5-minute write, $10 1-hour write
        let c = cost(
            "claude-opus-4-7",
            &u(1_000_000, 1_000_000, 0, 0, 0),
            0,
            &none,
        )
        .unwrap();
        assert!((c - 30.0).abs() < 1e-9, "{c}");
        let w5 = cost("claude-opus-4-7", &u(0, 0, 0, 1_000_000, 0), 0, &none).unwrap();
        let w1 = cost(
            "claude-opus-4-7",
            &u(0, 0, 0, 1_000_000, 1_000_000),
            0,
            &none,
        )
        .unwrap();
        assert!(
            (w5 - 6.25).abs() < 1e-9 && (w1 - 10.0).abs() < 1e-9,
            "{w5} {w1}"
        );
        // Sonnet 4.5 above 200k prompt tokens: $6 in instead of $3
        let long = cost(
            "claude-sonnet-4-5-20250929",
            &u(250_000, 0, 0, 0, 0),
            0,
            &none,
        )
        .unwrap();
        assert!((long - 1.5).abs() < 1e-9, "{long}");
        assert_eq!(cost("mimo-v2.5-pro", &u(1000, 10, 0, 0, 0), 0, &none), None);
        assert_eq!(cost("<synthetic>", &u(0, 0, 0, 0, 0), 0, &none), None);
        let mut own = BTreeMap::new();
        own.insert(
            "mimo-v2.5-pro".to_string(),
            Price {
                input: 1.0,
                output: 2.0,
                cache_read: 0.1,
                cache_write: 1.25,
                cache_write_1h: None,
                web_search: None,
                learned_from: 0,
            },
        );
        let c = cost("mimo-v2.5-pro", &u(1_000_000, 1_000_000, 0, 0, 0), 0, &own).unwrap();
        assert!((c - 3.0).abs() < 1e-9);
        // the fast path gives what the catalog gives, below and above a tier
        let pricer = Pricer::new(&none);
        for usage in [
            u(1200, 300, 90_000, 4_000, 1_000),
            u(250_000, 10, 0, 0, 0),
            u(10, 10, 180_000, 25_000, 0),
        ] {
            let want = cost("claude-sonnet-4-5", &usage, 1_780_000_000_000, &none).unwrap();
            let got = pricer
                .cost("claude-sonnet-4-5-20250929", &usage, 1_780_000_000_000)
                .unwrap();
            assert!((want - got).abs() < 1e-9, "{usage:?}: {want} vs {got}");
        }
        // a harness's total of 4 requests of 150k each is 4 requests below the tier, not one of 600k above it
        let mut sum = u(600_000, 0, 0, 0, 0);
        sum.requests = 4;
        for c in [
            cost("claude-sonnet-4-5", &sum, 0, &none),
            pricer.cost("claude-sonnet-4-5", &sum, 0),
        ] {
            assert!((c.unwrap() - 1.8).abs() < 1e-9, "{c:?}");
        }
        let p = per_million("claude-opus-4-8", &none).unwrap();
        assert_eq!(
            p.map(|x| (x * 100.0).round() / 100.0),
            [5.0, 25.0, 0.5, 6.25, 10.0]
        );
    }

    #[test]
    fn a_price_is_learned_from_what_a_harness_recorded_its_replies_cost() {
        let list = Price {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            cache_write_1h: None,
            web_search: None,
            learned_from: 0,
        };
        let priced = |u: Usage| {
            (
                u,
                (u.input_tokens as f64 * list.input
                    + u.output_tokens as f64 * list.output
                    + u.cache_read_input_tokens as f64 * list.cache_read
                    + u.cache_creation_input_tokens as f64 * list.cache_write)
                    / 1e6,
            )
        };
        let samples: Vec<(Usage, f64)> = (1..40u64)
            .map(|i| {
                priced(u(
                    100 + i * 37 % 900,
                    50 + i * 91 % 700,
                    1000 * i,
                    400 * (i % 5),
                    0,
                ))
            })
            .collect();
        let p = learn(&samples).unwrap();
        for (got, want) in [
            (p.input, 3.0),
            (p.output, 15.0),
            (p.cache_read, 0.3),
            (p.cache_write, 3.75),
        ] {
            assert!((got - want).abs() < 1e-6, "{p:?}");
        }
        assert_eq!(p.learned_from, 39);
        // cache writes the replies never made are priced as input
        let no_writes: Vec<(Usage, f64)> = (1..20u64)
            .map(|i| priced(u(100 + i * 37 % 900, 50 + i * 91 % 700, 1000 * i, 0, 0)))
            .collect();
        let p = learn(&no_writes).unwrap();
        assert!((p.cache_write - 3.0).abs() < 1e-6, "{p:?}");
        // a harness that does not know the price records 0: nothing learned
        let zero: Vec<(Usage, f64)> = samples.iter().map(|(u, _)| (*u, 0.0)).collect();
        assert_eq!(learn(&zero), None);
        // one reply tells no rates apart (any kind of token alone would give its cost)
        assert_eq!(learn(&samples[..1]), None);
        assert_eq!(learn(&samples[..5]), None);
        assert!(learn(&samples[..6]).is_some());
        // costs no rates give (a price that doubles past a prompt size) are not read as a price
        let tiered: Vec<(Usage, f64)> = (1..30u64)
            .map(|i| {
                let (u, c) = priced(u(20_000 * i, 100, 0, 0, 0));
                (u, if u.input_tokens > 200_000 { c * 2.0 } else { c })
            })
            .collect();
        assert_eq!(learn(&tiered), None);
    }
}
