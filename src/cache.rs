//! The prompt cache, reply by reply: for each reply of a path, what its request read from the cache, wrote to it
//! and sent uncached (the provider's own figures), whether it reused the prefix the request before it left in the
//! cache, and, where it did not, why and what that cost.
//!
//! Why a module of its own: most of what a long session costs is its cache (reads at a tenth of the input price,
//! writes at 1.25× or 2×, and a miss that writes the whole prefix again), and what breaks it is on the path cairn
//! holds: a pause longer than the cache's lifetime, a compaction, an edit or rewind, a model change, a change of
//! the system prompt or tools. One definition, read by `cairn cache`, and to be read by the window and exports.
//!
//! What the previous request left in the cache: where the provider reports cache writes (Anthropic) its reads plus
//! its writes; where caching is automatic and writes are not reported (OpenAI, Gemini), its whole prompt. A reply
//! **misses** when its read falls short of that (bounded by its own prompt) by more than the provider's smallest
//! cacheable block ([`BLOCK`]): the cache holds prefixes in blocks, so a shortfall within one block is the same
//! prefix. A miss gets the first cause that applies:
//! - `ttl`: the gap since the previous request exceeds the lifetime the cache was written with (an hour where
//!   the previous request wrote 1-hour entries, else five minutes);
//! - `compaction`: a compaction (the harness's or cairn's, including cleared tool results) between the two;
//! - `branch`: the path between the two passes a message with another child (an edit or a rewind: the previous
//!   request in time was on another branch);
//! - `model`: the two requests name different models (caches are per model);
//! - `overhead`: the read is shorter than what comes before the first message (system prompt and tools: the
//!   session's overhead, measured as its first measured prompt less cairn's estimate of the messages before it);
//! - `unknown`.
//!
//! Each reply is priced with the one cost function ([`crate::models::Pricer`]); a miss is priced again as if the
//! cache had held (the shortfall read from the cache instead of written to it, then instead of sent uncached),
//! and `lost` is the difference.

use serde::Serialize;

use crate::model::Usage;
use crate::models::{Price, Pricer};
use crate::store::{Head, PathUsage, Store, StoreError};

/// The smallest block a provider caches a prompt in (Anthropic's minimum cacheable prompt on most models, and
/// OpenAI's cache granularity starts at 1,024 tokens): a shortfall smaller than this is the same prefix.
pub const BLOCK: u64 = 1024;

/// The cache's lifetime after a request that wrote 5-minute entries (or wrote none), and after one that wrote
/// 1-hour entries, in milliseconds.
pub const TTL_5M: i64 = 5 * 60 * 1000;
pub const TTL_1H: i64 = 60 * 60 * 1000;

/// Why a reply missed the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Ttl,
    Compaction,
    Branch,
    Model,
    Overhead,
    Unknown,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::Ttl => "ttl",
            Cause::Compaction => "compaction",
            Cause::Branch => "branch",
            Cause::Model => "model",
            Cause::Overhead => "overhead",
            Cause::Unknown => "unknown",
        }
    }
}

/// One reply's cache figures.
#[derive(Debug, Clone, Serialize)]
pub struct ReplyCache {
    pub message: String,
    /// RFC 3339.
    pub time: String,
    /// The same, in epoch milliseconds (for figures booked by time).
    #[serde(skip)]
    pub at: i64,
    pub model: String,
    /// Uncached input.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    /// Whether it reused what the previous request cached (a session's first reply has nothing to reuse: true).
    pub hit: bool,
    pub cause: Option<Cause>,
    /// US dollars; None where the model has no price.
    pub cost: Option<f64>,
    pub cost_if_hit: Option<f64>,
    /// What the previous request left in the cache (bounded by this prompt): what a hit reads.
    pub expected_read: u64,
    /// Milliseconds since the previous request (None for the first).
    pub gap_ms: Option<i64>,
    /// Where the usage is a harness's total of several requests (no cache analysis is made of a sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    /// US dollars: the sum of the replies' costs (None when no reply is priced).
    pub cost: Option<f64>,
    /// What misses cost beyond what the same replies would have cost had the cache held.
    pub lost: Option<f64>,
    /// `lost` by cause (only causes that occurred).
    pub by_cause: std::collections::BTreeMap<&'static str, f64>,
    pub replies: usize,
    pub misses: usize,
    /// Replies whose model has no price (their costs are null and not in the totals).
    pub unpriced: usize,
    /// Cache reads over every prompt token of the measured replies (None without any).
    pub hit_ratio: Option<f64>,
    /// What comes before the first message (system prompt, tools), as measured: a read shorter than this broke
    /// there.
    pub overhead: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CacheReport {
    pub conversation: String,
    pub replies: Vec<ReplyCache>,
    pub totals: Totals,
}

/// The usage a reply would have measured had it read `shortfall` more from the cache: taken from its cache writes
/// first (the prefix written again), then from its uncached input.
fn as_if_hit(u: &Usage, shortfall: u64) -> Usage {
    let mut h = *u;
    let from_write = shortfall.min(h.cache_creation_input_tokens);
    // the 5-minute writes first: a prefix written again is written as it was
    let w5 = h.cache_creation_input_tokens
        - h.cache_creation_1h_input_tokens
            .min(h.cache_creation_input_tokens);
    let from_1h = from_write.saturating_sub(w5);
    h.cache_creation_input_tokens -= from_write;
    h.cache_creation_1h_input_tokens = h.cache_creation_1h_input_tokens.saturating_sub(from_1h);
    let from_input = (shortfall - from_write).min(h.input_tokens);
    h.input_tokens -= from_input;
    h.cache_read_input_tokens += from_write + from_input;
    h
}

/// The cache report of a conversation's active path (or the path to `at`): the path's heads and where it
/// branches (one scan), and the narrow usage of its replies.
pub fn cache(
    store: &Store,
    conversation: &str,
    at: Option<&str>,
    prices: &std::collections::BTreeMap<String, Price>,
) -> Result<CacheReport, StoreError> {
    let conversation = store.resolve_conversation(conversation)?;
    let path = store.branching_path(&conversation, at)?;
    let replies = store.path_usages(&conversation, &path.heads)?;
    Ok(analyse(
        &conversation,
        &path.heads,
        &replies,
        &path.branches,
        prices,
    ))
}

/// The cache report of a path already loaded whole (the timeline's view: its heads, their stored facts and where
/// it branches): the replies' usage is in the facts, so nothing is read again.
pub fn on_path(
    conversation: &str,
    heads: &[Head],
    facts: &[crate::store::Facts],
    branches: &[bool],
    prices: &std::collections::BTreeMap<String, Price>,
) -> CacheReport {
    let replies: Vec<PathUsage> = facts
        .iter()
        .enumerate()
        .filter_map(|(index, f)| {
            Some(PathUsage {
                index,
                model: f.model.as_deref().map(str::to_string),
                usage: f.usage?,
                created_at: f.created_at,
            })
        })
        .collect();
    analyse(conversation, heads, &replies, branches, prices)
}

/// Why a request read less of the cache than the previous one (`p`) left: the cache expired, a compaction or a
/// branch changed the prefix, the model changed, the overhead itself was not read, or nothing cairn can see.
fn cause_of(
    p: &PathUsage,
    m: &PathUsage,
    heads: &[Head],
    branches: &[bool],
    overhead: u64,
) -> Cause {
    let (u, pu) = (&m.usage, &p.usage);
    let model = m.model.as_deref().unwrap_or("");
    let ttl = if pu.cache_creation_1h_input_tokens > 0 {
        TTL_1H
    } else {
        TTL_5M
    };
    let compacted = heads[p.index + 1..=m.index]
        .iter()
        .any(|h| h.is_compaction());
    let branched = branches[p.index..m.index].iter().any(|&b| b);
    let same_model = crate::models::key_or_raw(p.model.as_deref().unwrap_or(""))
        == crate::models::key_or_raw(model);
    if m.created_at - p.created_at > ttl {
        Cause::Ttl
    } else if compacted {
        Cause::Compaction
    } else if branched {
        Cause::Branch
    } else if !same_model {
        Cause::Model
    } else if u.cache_read_input_tokens + BLOCK < overhead {
        Cause::Overhead
    } else {
        Cause::Unknown
    }
}

impl Totals {
    /// A reply's cost counted in, and what its cache miss lost.
    fn add(&mut self, reply: &ReplyCache) {
        match reply.cost {
            Some(c) => {
                *self.cost.get_or_insert(0.0) += c;
                if let (Some(h), Some(cause)) = (reply.cost_if_hit, reply.cause) {
                    let lost = (c - h).max(0.0);
                    *self.lost.get_or_insert(0.0) += lost;
                    *self.by_cause.entry(cause.name()).or_default() += lost;
                } else {
                    self.lost.get_or_insert(0.0);
                }
            }
            None => self.unpriced += 1,
        }
    }
}

/// The analysis of a path: its heads, the replies that carry usage, and `branches[i]`: path message i has another
/// child off the path.
pub fn analyse(
    conversation: &str,
    heads: &[Head],
    measured: &[PathUsage],
    branches: &[bool],
    prices: &std::collections::BTreeMap<String, Price>,
) -> CacheReport {
    // caching is reported with writes (Anthropic) or automatic (writes not reported)
    let reports_writes = measured
        .iter()
        .any(|m| m.usage.cache_creation_input_tokens > 0);
    // the session's overhead: its first measured prompt less the estimate of the messages before it
    let overhead = measured
        .iter()
        .find(|m| m.usage.is_one_request() && m.usage.prompt() > 0)
        .map(|m| {
            let before: u64 = heads[..m.index].iter().map(|h| h.tokens).sum();
            m.usage.prompt().saturating_sub(before)
        })
        .unwrap_or(0);
    let pricer = Pricer::new(prices);
    let mut replies = Vec::with_capacity(measured.len());
    let mut totals = Totals::default();
    let (mut read_all, mut prompt_all) = (0u64, 0u64);
    let mut prev: Option<&PathUsage> = None;
    for m in measured {
        let u = &m.usage;
        let model = m.model.as_deref().unwrap_or("");
        let cost = pricer.cost(model, u, m.created_at);
        let one = u.is_one_request() && u.prompt() > 0;
        let mut reply = ReplyCache {
            message: heads[m.index].id.clone(),
            time: crate::search::rfc3339(m.created_at).unwrap_or_default(),
            at: m.created_at,
            model: model.to_string(),
            input: u.input_tokens,
            output: u.output_tokens,
            cache_read: u.cache_read_input_tokens,
            cache_write_5m: u.cache_creation_input_tokens
                - u.cache_creation_1h_input_tokens
                    .min(u.cache_creation_input_tokens),
            cache_write_1h: u.cache_creation_1h_input_tokens,
            hit: true,
            cause: None,
            cost,
            cost_if_hit: cost,
            expected_read: 0,
            gap_ms: prev.map(|p| m.created_at - p.created_at),
            requests: (!u.is_one_request()).then_some(u.requests),
        };
        if one {
            read_all += u.cache_read_input_tokens;
            prompt_all += u.prompt();
        }
        if let (true, Some(p)) = (one, prev) {
            let pu = &p.usage;
            let left = if reports_writes {
                pu.cache_read_input_tokens + pu.cache_creation_input_tokens
            } else {
                pu.prompt()
            };
            let expected = left.min(u.prompt());
            reply.expected_read = expected;
            let shortfall = expected.saturating_sub(u.cache_read_input_tokens);
            if shortfall > BLOCK {
                reply.hit = false;
                reply.cause = Some(cause_of(p, m, heads, branches, overhead));
                reply.cost_if_hit = pricer.cost(model, &as_if_hit(u, shortfall), m.created_at);
                totals.misses += 1;
            }
        }
        totals.add(&reply);
        if one {
            prev = Some(m);
        }
        replies.push(reply);
    }
    totals.replies = replies.len();
    totals.overhead = overhead;
    totals.hit_ratio = (prompt_all > 0).then(|| read_all as f64 / prompt_all as f64);
    CacheReport {
        conversation: conversation.to_string(),
        replies,
        totals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_as_if_takes_the_rewritten_prefix_from_the_writes_then_the_input() {
        let u = Usage {
            input_tokens: 100,
            output_tokens: 5,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 50_000,
            cache_creation_1h_input_tokens: 10_000,
            requests: 0,
            precision: 0,
            web_search_requests: 0,
        };
        let h = as_if_hit(&u, 45_000);
        assert_eq!(h.cache_read_input_tokens, 45_000);
        assert_eq!(h.cache_creation_input_tokens, 5_000);
        // the 5-minute writes go first
        assert_eq!(h.cache_creation_1h_input_tokens, 5_000);
        assert_eq!(h.prompt(), u.prompt());
        let h = as_if_hit(&u, 50_050);
        assert_eq!((h.input_tokens, h.cache_creation_input_tokens), (50, 0));
    }
}
