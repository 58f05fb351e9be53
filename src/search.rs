//! Search across every session, as a researcher asks it: the store's full-text index finds and ranks the
//! messages ([`crate::store::SearchQuery`]); this adds what a reader needs to choose a hit: whether it is on its
//! conversation's active path or a side branch, when it was written, and a snippet of its text with the match
//! marked.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::store::{SearchQuery, Store, StoreError};

/// Marks around a matched word in a snippet.
pub const MARK_OPEN: &str = "«";
pub const MARK_CLOSE: &str = "»";

/// One hit as shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShownHit {
    pub conversation: String,
    #[serde(skip)]
    pub title: Option<String>,
    pub message: String,
    pub role: String,
    pub on_active_path: bool,
    /// RFC 3339, or null when the transcript recorded no time.
    pub timestamp: Option<String>,
    pub snippet: String,
    pub rank: f64,
}

/// The hits of a search, best first, and how many messages matched in all.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Results {
    pub hits: Vec<ShownHit>,
    pub total: u64,
}

/// `2026-02-16T18:47:50Z` for epoch milliseconds (None for 0).
pub fn rfc3339(ms: i64) -> Option<String> {
    if ms <= 0 {
        return None;
    }
    jiff::Timestamp::from_millisecond(ms)
        .ok()
        .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string())
}

/// A date or time as the CLI takes it (`2026-02-01`, `2026-02-01T10:00:00Z`) in epoch milliseconds.
pub fn parse_since(s: &str) -> Option<i64> {
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t.as_millisecond());
    }
    let d: jiff::civil::Date = s.parse().ok()?;
    d.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_millisecond())
}

/// The words of a query a snippet marks, lowercased, without operators or quotes; a prefix term keeps its `*`.
pub fn terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '*'))
        .filter(|w| !w.is_empty() && !matches!(*w, "AND" | "OR" | "NOT" | "NEAR"))
        .map(str::to_lowercase)
        .filter(|w| !w.trim_end_matches('*').is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A window of `text` around its first match of `terms` (whole-word prefixes, case-insensitive), matches marked.
pub fn snippet(text: &str, terms: &[String], width: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = flat.to_lowercase();
    // byte offsets of word starts that begin with a term
    // words as the index tokenises them: runs of letters and digits
    let is_word = |c: char| c.is_alphanumeric();
    let mut matches: Vec<(usize, usize)> = Vec::new();
    let mut prev_word = false;
    for (i, c) in lower.char_indices() {
        if is_word(c) && !prev_word {
            let end = lower[i..]
                .char_indices()
                .find(|(_, c)| !is_word(*c))
                .map_or(lower.len(), |(k, _)| i + k);
            let word = &lower[i..end];
            let hit = terms.iter().any(|t| match t.strip_suffix('*') {
                Some(prefix) => word.starts_with(prefix),
                None => word == t,
            });
            if hit {
                matches.push((i, end));
            }
        }
        prev_word = is_word(c);
    }
    // lowercasing can change byte lengths (rarely); fall back to the start of the text
    if lower.len() != flat.len() {
        matches.clear();
    }
    let first = matches.first().map_or(0, |m| m.0);
    let mut start = first.saturating_sub(width / 3);
    while start > 0 && !flat.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + width).min(flat.len());
    while end < flat.len() && !flat.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    for &(a, b) in matches.iter().filter(|(a, b)| *a >= start && *b <= end) {
        out.push_str(&flat[at..a]);
        out.push_str(MARK_OPEN);
        out.push_str(&flat[a..b]);
        out.push_str(MARK_CLOSE);
        at = b;
    }
    out.push_str(&flat[at..end]);
    if end < flat.len() {
        out.push('…');
    }
    out
}

/// Runs a search and dresses its hits.
pub fn search(store: &Store, q: &SearchQuery) -> Result<Results, StoreError> {
    let found = store.search(q)?;
    let words = terms(&q.text);
    let mut paths: HashMap<String, HashSet<String>> = HashMap::new();
    let mut texts: HashMap<i64, String> = HashMap::new();
    let mut hits = Vec::with_capacity(found.hits.len());
    for h in found.hits {
        if !paths.contains_key(&h.conversation) {
            let ids = store
                .active_path_heads(&h.conversation)?
                .into_iter()
                .map(|x| x.id)
                .collect();
            paths.insert(h.conversation.clone(), ids);
        }
        let on_active_path = paths
            .get(&h.conversation)
            .is_some_and(|p| p.contains(&h.message));
        let text = match texts.get(&h.body) {
            Some(t) => t.clone(),
            None => {
                let t = store.body_text(h.body)?;
                texts.insert(h.body, t.clone());
                t
            }
        };
        let (text, _) = crate::redact::text(&text);
        hits.push(ShownHit {
            snippet: snippet(&text, &words, 160),
            conversation: h.conversation,
            title: h.title,
            message: h.message,
            role: h.role,
            on_active_path,
            timestamp: rfc3339(h.created_at),
            rank: h.rank,
        });
    }
    Ok(Results {
        hits,
        total: found.total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_mark_whole_words_a_term_begins() {
        let t = terms("\"connection refused\" OR timeout* NOT tools : x");
        assert_eq!(t, vec!["connection", "refused", "timeout*", "tools", "x"]);
        // a word is marked whole, a prefix only where the term asked for one
        let s = snippet("git push; GitHub pushed", &terms("git push"), 100);
        assert_eq!(s, "«git» «push»; GitHub pushed");
        let s = snippet(
            "The server said:\n  connection refused after timeouts",
            &terms("refused OR timeout*"),
            200,
        );
        assert_eq!(s, "The server said: connection «refused» after «timeouts»");
        let long = format!("{} needle {}", "hay ".repeat(100), "straw ".repeat(100));
        let s = snippet(&long, &terms("needle"), 60);
        assert!(
            s.starts_with('…') && s.ends_with('…') && s.contains("«needle»"),
            "{s}"
        );
    }

    #[test]
    fn dates_parse_as_utc() {
        assert_eq!(parse_since("1970-01-02"), Some(86_400_000));
        assert_eq!(parse_since("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(parse_since("yesterday"), None);
        assert_eq!(rfc3339(1000).as_deref(), Some("1970-01-01T00:00:01Z"));
    }
}
