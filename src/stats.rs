//! Usage statistics across sessions: what a researcher asks of a month of work (sessions, turns, tool calls and
//! how often they fail, tokens in and out, what the prompt cache saved, what it cost at list prices, compactions,
//! wall time), grouped by conversation, model, day, week, project or tool. The store sums ([`Store::usage`]);
//! this prices each reply ([`crate::models::cost`]) and shapes the rows every shell shows.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::models::Price;
use crate::store::{By, Store, StoreError};

/// One row of the table (the contract of `cairn stats --json`, plus figures beside it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsRow {
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub sessions: u64,
    /// Of the sessions, how many are subagents of another.
    pub subagents: u64,
    pub turns: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    /// The provider's uncached input, summed over the replies that recorded usage.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Web searches the providers ran for the replies (priced per search, in `cost_usd`).
    pub web_searches: u64,
    /// Cache reads over all prompt tokens (None without any).
    pub cache_hit_ratio: Option<f64>,
    /// At list prices; None when a model of the row has no price, or when replies of the row recorded no prompt
    /// (then `cost_floor_usd`).
    pub cost_usd: Option<f64>,
    /// Replies whose prompt no usage records (a Copilot CLI run cut off before it wrote its totals): what they sent
    /// is in no figure of the row, and its cost is unknown.
    #[serde(skip_serializing_if = "is_zero")]
    pub unrecorded_prompts: u64,
    /// With unrecorded prompts, what the row's recorded tokens cost at list prices: its cost is at least this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_floor_usd: Option<f64>,
    /// The models of the row that have no price.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<String>,
    pub compactions: u64,
    pub wall_seconds: u64,
    /// Tokens of tool output (rows by tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_tokens: Option<u64>,
    /// With the prompt cache (`stats --cache`): what misses on the rows' active paths cost beyond a held cache,
    /// in US dollars, and by cause ([`crate::cache`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_lost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_lost_by_cause: Option<BTreeMap<String, f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_misses: Option<u64>,
    /// What GitHub Copilot counted for the row's sessions in premium requests, its billing unit until June 2026 (a
    /// request's multiplier by model; since then it bills AI credits by the token, which the list-price cost
    /// equals). None where no session of the row recorded any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub premium_requests: Option<f64>,
    /// What GitHub Copilot billed the row's sessions in AI credits (a credit a US cent), its unit since June 2026:
    /// measured by GitHub per token, equal to the list-price cost where every run closed; where a run was cut off,
    /// what its last checkpoint counted. None where no session of the row recorded any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ai_credits: Option<f64>,
}

impl StatsRow {
    /// The share of its tool calls that failed (0 without calls).
    pub fn error_share(&self) -> f64 {
        self.tool_errors as f64 / self.tool_calls.max(1) as f64
    }

    /// The cost as every shell shows it: `$1.23`; `≥ $1.23` where prompts went unrecorded; `unknown`.
    pub fn cost_text(&self) -> String {
        match (self.cost_usd, self.cost_floor_usd) {
            (Some(c), _) => format!("${c:.2}"),
            (None, Some(f)) => format!("≥ ${f:.2}"),
            (None, None) => "unknown".into(),
        }
    }

    /// Where replies of the row recorded no prompt, what that does to its cost, as every shell says it.
    pub fn unrecorded_text(&self) -> Option<String> {
        (self.unrecorded_prompts > 0).then(|| {
            format!(
                "{} replies recorded no prompt: their input is unknown and in no figure here, so the cost is at \
                 least what the recorded tokens cost",
                self.unrecorded_prompts
            )
        })
    }

    /// Copilot's premium requests, as every shell says them: `6 GitHub Copilot premium requests`, "at least"
    /// where replies of the row recorded no prompt (a run cut off before its totals, which hold the billing too;
    /// such a run's billing is counted to its last checkpoint, where Copilot wrote any).
    pub fn premium_text(&self) -> Option<String> {
        let n = format!("{:.2}", self.premium_requests?);
        let n = n.trim_end_matches('0').trim_end_matches('.');
        Some(self.billed(format!("{n} GitHub Copilot premium requests")))
    }

    /// Copilot's AI credits, as every shell says them: `2,466.68 GitHub Copilot AI credits ($24.67)`, "at least"
    /// where replies of the row recorded no prompt (a run cut off before its totals is billed to its last
    /// checkpoint, where Copilot wrote any).
    pub fn credits_text(&self) -> Option<String> {
        let said = format!(
            "{} GitHub Copilot AI credits (${:.2})",
            self.credits_figure()?,
            self.ai_credits? / 100.0
        );
        Some(self.billed(said))
    }

    /// What Copilot billed the row, `said`, as a floor where replies of the row recorded no prompt (a run that
    /// ended without its totals is billed to its last checkpoint at most).
    fn billed(&self, said: String) -> String {
        if self.unrecorded_prompts > 0 {
            format!(
                "at least {said} (a run ended without its totals: what it billed after its last checkpoint is in none)"
            )
        } else {
            said
        }
    }

    /// Copilot's AI credits to the hundredth, grouped by thousands: `2,466.68`.
    pub fn credits_figure(&self) -> Option<String> {
        let hundredths = (self.ai_credits? * 100.0).round() as u64;
        Some(format!(
            "{}.{:02}",
            crate::tokens::thousands(hundredths / 100),
            hundredths % 100
        ))
    }

    /// Every token of its replies: uncached input, cache reads and writes, output.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub by: By,
    pub rows: Vec<StatsRow>,
}

/// A table's totals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatsTotals {
    /// Every token of every row ([`StatsRow::tokens`]).
    pub tokens: u64,
    /// The cost of the rows that have one, at list prices.
    pub cost_usd: f64,
    /// Rows without a cost (a model of theirs has no price, or replies of theirs recorded no prompt).
    pub unpriced_rows: usize,
}

impl Stats {
    pub fn totals(&self) -> StatsTotals {
        StatsTotals {
            tokens: self.rows.iter().map(StatsRow::tokens).sum(),
            cost_usd: self.rows.iter().filter_map(|r| r.cost_usd).sum(),
            unpriced_rows: self.rows.iter().filter(|r| r.cost_usd.is_none()).count(),
        }
    }

    /// The models without a price, each once, in the order the rows name them.
    pub fn unpriced(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in self.rows.iter().flat_map(|r| &r.unpriced) {
            if !out.contains(m) {
                out.push(m.clone());
            }
        }
        out
    }
}

/// Usage grouped by `by` from `since` on, priced with `prices` over the built-in table.
pub fn stats(
    store: &Store,
    by: By,
    since: Option<i64>,
    prices: &BTreeMap<String, Price>,
) -> Result<Stats, StoreError> {
    // by model: one row per model, whatever date suffix or cloud's id its replies carried, and per speed it was
    // served at (fast mode is priced apart: `claude-opus-4-8@fast`); Claude Code's `<synthetic>` placeholder and
    // the like are no model
    let model_key = |name: &str| {
        crate::models::key(name).map(|k| crate::models::at_speed(&k, crate::models::speed(name)))
    };
    let groups = store.usage(by, since, &model_key)?;
    let pricer = crate::models::Pricer::new(prices);
    let rows = groups
        .into_iter()
        .map(|g| -> Result<StatsRow, StoreError> {
            let mut t = [0u64; 4];
            for (_, m) in &g.by_model {
                for k in 0..4 {
                    t[k] += m[k];
                }
            }
            let mut total = 0.0;
            let mut unpriced = std::collections::BTreeSet::new();
            for b in &g.buckets {
                let name = b.model.as_deref().unwrap_or(crate::models::NO_MODEL);
                let c = match pricer.cost_of_sum(name, &b.usage, b.hour, b.max_prompt) {
                    Ok(c) => c,
                    // a request of this hour may reach a tier: each priced as its own
                    Err(()) => store
                        .reply_usages(b)?
                        .iter()
                        .map(|(u, at)| pricer.cost(name, u, *at))
                        .sum::<Option<f64>>(),
                };
                match c {
                    Some(c) => total += c,
                    None if b.usage != crate::model::Usage::default() => {
                        unpriced.insert(crate::models::priced_key(name));
                    }
                    None => {}
                }
            }
            let unpriced: Vec<String> = unpriced.into_iter().collect();
            // what recorded no usage at all (a session, a model's replies; counts of zero, as an aborted step
            // records them, are none) has no cost to show (not $0)
            let measured = g
                .buckets
                .iter()
                .any(|b| b.usage != crate::model::Usage::default());
            let unmeasured = !measured && (g.turns > 0 || g.replies > 0);
            let prompt = t[0] + t[2] + t[3];
            Ok(StatsRow {
                key: g.key,
                label: g.label,
                sessions: g.sessions,
                subagents: g.subagents,
                turns: g.turns,
                tool_calls: g.tool_calls,
                tool_errors: g.tool_errors,
                input_tokens: t[0],
                output_tokens: t[1],
                cache_read_tokens: t[2],
                cache_write_tokens: t[3],
                web_searches: g.buckets.iter().map(|b| b.usage.web_search_requests).sum(),
                cache_hit_ratio: (prompt > 0).then(|| t[2] as f64 / prompt as f64),
                cost_usd: (by != By::Tool
                    && unpriced.is_empty()
                    && !unmeasured
                    && g.unrecorded_prompts == 0)
                    .then_some(total),
                unrecorded_prompts: g.unrecorded_prompts,
                cost_floor_usd: (by != By::Tool && unpriced.is_empty() && g.unrecorded_prompts > 0)
                    .then_some(total),
                unpriced,
                compactions: g.compactions,
                wall_seconds: (g.wall_ms.max(0) / 1000) as u64,
                result_tokens: (by == By::Tool).then_some(g.result_tokens),
                cache_lost_usd: None,
                cache_lost_by_cause: None,
                cache_misses: None,
                premium_requests: None,
                ai_credits: None,
            })
        })
        .collect::<Result<_, _>>()?;
    with_billing(store, since, Stats { by, rows })
}

/// The table with what GitHub Copilot billed beside each row, in premium requests and in AI credits.
fn with_billing(store: &Store, since: Option<i64>, mut table: Stats) -> Result<Stats, StoreError> {
    if table.by == By::Tool {
        return Ok(table);
    }
    type Field = fn(&mut StatsRow) -> &mut Option<f64>;
    let units: [(&str, &str, Field); 2] = [
        (PREMIUM_REQUESTS_RECORD, "premium_requests", |r| {
            &mut r.premium_requests
        }),
        (AI_CREDITS_RECORD, "ai_credits", |r| &mut r.ai_credits),
    ];
    let mut read = Vec::with_capacity(units.len());
    for (ty, field, of_row) in units {
        read.push((store.records_of_type(ty)?, field, of_row));
    }
    let projects = match table.by {
        By::Project if read.iter().any(|r| !r.0.is_empty()) => store.projects()?,
        _ => Default::default(),
    };
    for (records, field, of_row) in read {
        let billed = book_billing(records, since, table.by, field, &projects);
        for row in &mut table.rows {
            if let Some(n) = billed.get(&row.key) {
                *of_row(row) = Some(millionths(*n));
            }
        }
    }
    Ok(table)
}

/// The tallies of what GitHub Copilot counted for a run, per model (a run cut off before its totals: the
/// session's from its last checkpoint, on no model unless the run had one): its premium requests at the run's end
/// (`session.shutdown`), written by the Copilot CLI reader with `at` (epoch ms), `model` and `premium_requests`.
pub const PREMIUM_REQUESTS_RECORD: &str = "copilot.premium_requests";
/// The same of its AI credits (`ai_credits`).
pub const AI_CREDITS_RECORD: &str = "copilot.ai_credits";

/// What Copilot billed, to the millionth (as the tallies keep it and the rows sum it): premium requests are billed in
/// fractions such as 0.33, AI credits in billionths.
pub fn millionths(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// What the kept tallies (`records`: each with the conversation that keeps it) count in their `field`, booked to
/// the rows of a table by `by`: the session's, its model's, the day or week it ended, its session's project (with
/// `projects`), from `since` on.
fn book_billing(
    records: Vec<(String, serde_json::Value)>,
    since: Option<i64>,
    by: By,
    field: &str,
    projects: &std::collections::HashMap<String, String>,
) -> std::collections::HashMap<String, f64> {
    let mut billed = std::collections::HashMap::new();
    for (conversation, r) in records {
        let (Some(at), Some(n)) = (
            r.get("at").and_then(serde_json::Value::as_i64),
            r.get(field).and_then(serde_json::Value::as_f64),
        ) else {
            continue;
        };
        if since.is_some_and(|s| at < s) {
            continue;
        }
        let model = r.get("model").and_then(serde_json::Value::as_str);
        if let Some(k) = row_key(by, &conversation, model, at, projects) {
            *billed.entry(k).or_default() += n;
        }
    }
    billed
}

/// The row of a table by `by` that a figure of `conversation` falls in, where it is of `model` and was made `at`
/// (epoch ms): its conversation, its model's row, its day or week, its conversation's project. None by tool, or by
/// model for a figure of no model.
fn row_key(
    by: By,
    conversation: &str,
    model: Option<&str>,
    at: i64,
    projects: &std::collections::HashMap<String, String>,
) -> Option<String> {
    match by {
        By::Conversation => Some(conversation.to_string()),
        By::Model => model.map(crate::models::priced_key),
        By::Project => Some(
            projects
                .get(conversation)
                .cloned()
                .unwrap_or_else(|| "(no project)".into()),
        ),
        By::Day | By::Week => crate::store::time_key(by, at),
        By::Tool => None,
    }
}

/// The table with the prompt cache's misses beside each row: every conversation's active path analysed
/// ([`crate::cache::cache`]), each miss booked to its row (its conversation, its model, its day or week, its
/// conversation's project; rows by tool have none) from `since` on. It reads every reply of every path, so it is
/// asked for (`stats --cache`), not made by default.
pub fn with_cache(
    store: &Store,
    by: By,
    since: Option<i64>,
    prices: &BTreeMap<String, Price>,
) -> Result<Stats, StoreError> {
    let mut table = stats(store, by, since, prices)?;
    if by == By::Tool {
        return Ok(table);
    }
    let projects = store.projects()?;
    let mut lost: std::collections::HashMap<String, (f64, BTreeMap<String, f64>, u64)> =
        std::collections::HashMap::new();
    for c in store.conversations()? {
        let r = crate::cache::cache(store, &c.id, None, prices)?;
        for x in &r.replies {
            let (Some(cause), Some(cost), Some(if_hit)) = (x.cause, x.cost, x.cost_if_hit) else {
                continue;
            };
            if since.is_some_and(|s| x.at < s) {
                continue;
            }
            let Some(key) = row_key(by, &c.id, Some(&x.model), x.at, &projects) else {
                continue;
            };
            let e = lost.entry(key).or_default();
            let l = (cost - if_hit).max(0.0);
            e.0 += l;
            *e.1.entry(cause.name().to_string()).or_default() += l;
            e.2 += 1;
        }
    }
    for row in &mut table.rows {
        let (l, causes, n) = lost.remove(&row.key).unwrap_or_default();
        row.cache_lost_usd = row.cost_usd.map(|_| l);
        row.cache_lost_by_cause = Some(causes);
        row.cache_misses = Some(n);
    }
    Ok(table)
}

/// The table as CSV (RFC 4180 quoting), the columns of the JSON rows.
pub fn csv(s: &Stats) -> String {
    let q = |v: &str| {
        if v.contains([',', '"', '\n']) {
            format!("\"{}\"", v.replace('"', "\"\""))
        } else {
            v.to_string()
        }
    };
    let mut out = String::from(
        "key,label,sessions,turns,tool_calls,tool_errors,input_tokens,output_tokens,cache_read_tokens,\
         cache_write_tokens,cache_hit_ratio,cost_usd,compactions,wall_seconds,result_tokens,web_searches,\
         unrecorded_prompts,cost_floor_usd,premium_requests,ai_credits\n",
    );
    for r in &s.rows {
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            q(&r.key),
            q(r.label.as_deref().unwrap_or("")),
            r.sessions,
            r.turns,
            r.tool_calls,
            r.tool_errors,
            r.input_tokens,
            r.output_tokens,
            r.cache_read_tokens,
            r.cache_write_tokens,
            opt(r.cache_hit_ratio),
            opt(r.cost_usd),
            r.compactions,
            r.wall_seconds,
            r.result_tokens.map(|x| x.to_string()).unwrap_or_default(),
            r.web_searches,
            r.unrecorded_prompts,
            opt(r.cost_floor_usd),
            r.premium_requests
                .map(|n| n.to_string())
                .unwrap_or_default(),
            r.ai_credits.map(|n| n.to_string()).unwrap_or_default()
        ));
    }
    out
}

/// A token count as people read it in a table: 9,999 as is, then 12k, 3.4M, 56M (one definition for every shell).
pub fn human(n: u64) -> String {
    match n {
        n if n >= 10_000_000 => format!("{:.0}M", n as f64 / 1e6),
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 10_000 => format!("{:.0}k", n as f64 / 1e3),
        n => n.to_string(),
    }
}
