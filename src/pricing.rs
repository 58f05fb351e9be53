//! List prices per model, for the cost figures of usage statistics: US dollars per million tokens of uncached
//! input, output, cache reads and cache writes. Built-in for the Anthropic and OpenAI models whose prices are
//! published and stable; the settings file's `"prices"` adds or overrides (by model name, dates stripped). A model
//! in neither has no price: its cost is unknown, and the figures say so rather than guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
}

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// (model, price): Anthropic's cache writes at 1.25x input (5-minute), reads at 0.1x; OpenAI bills no cache
/// writes.
const BUILT_IN: &[(&str, Price)] = &[
    ("claude-opus-4-5", p(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4-1", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-0", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-sonnet-4-5", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4-0", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-7-sonnet", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-5-sonnet", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5", p(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", p(0.8, 4.0, 0.08, 1.0)),
    ("gpt-5", p(1.25, 10.0, 0.125, 0.0)),
    ("gpt-5.1", p(1.25, 10.0, 0.125, 0.0)),
    ("gpt-5-mini", p(0.25, 2.0, 0.025, 0.0)),
    ("gpt-5-nano", p(0.05, 0.4, 0.005, 0.0)),
    ("gpt-4.1", p(2.0, 8.0, 0.5, 0.0)),
    ("gpt-4.1-mini", p(0.4, 1.6, 0.1, 0.0)),
    ("gpt-4o", p(2.5, 10.0, 1.25, 0.0)),
    ("gpt-4o-mini", p(0.15, 0.6, 0.075, 0.0)),
    ("o3", p(2.0, 8.0, 0.5, 0.0)),
    ("o4-mini", p(1.1, 4.4, 0.275, 0.0)),
];

/// The price of a model: the settings' entry, else the built-in one, by its name with any date suffix removed.
pub fn price(model: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    let key = crate::reclaim::replay::model_key(model);
    overrides
        .get(model)
        .or_else(|| overrides.get(&key))
        .copied()
        .or_else(|| BUILT_IN.iter().find(|(m, _)| *m == key).map(|(_, p)| *p))
}

/// The cost of tokens (uncached input, output, cache read, cache write) at a price.
pub fn cost(p: Price, t: [u64; 4]) -> f64 {
    (t[0] as f64 * p.input
        + t[1] as f64 * p.output
        + t[2] as f64 * p.cache_read
        + t[3] as f64 * p.cache_write)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_by_name_without_date_and_settings_first() {
        let none = BTreeMap::new();
        let s = price("claude-sonnet-4-5-20250929", &none).unwrap();
        assert_eq!(s.input, 3.0);
        // a newer model cairn has no price for is unknown, not the nearest name's
        assert_eq!(price("claude-opus-4-7", &none), None);
        let mut own = BTreeMap::new();
        own.insert("claude-opus-4-7".to_string(), p(5.0, 25.0, 0.5, 6.25));
        assert_eq!(price("claude-opus-4-7", &own).map(|p| p.output), Some(25.0));
        // 1M input + 1M output of Sonnet: $18
        assert!((cost(s, [1_000_000, 1_000_000, 0, 0]) - 18.0).abs() < 1e-9);
    }
}
