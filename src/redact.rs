//! Secrets out of everything cairn shows or hands over: exports, `show`, `resume`, snapshot pages and their
//! factsheet. The store keeps what the harness wrote (it is the user's own history); what leaves it is redacted by
//! default.
//!
//! Why a library: keys have many shapes (Anthropic, OpenAI project keys, AWS key pairs, GitHub classic and
//! fine-grained tokens, Slack tokens, bearer headers, JWTs, private-key blocks, `.env` assignments, connection
//! strings, ...) and new ones appear; a hand list goes stale. The detectors are redact-secret's (a maintained,
//! deterministic, offline rule set); a found secret becomes `[redacted: github token]`. Metadata keys that name a
//! credential (`apiKey`, `authorization`, `password`, `*_secret`, ...) are redacted whatever their value. A key of a
//! family neither rule set names is found by its shape ([`shape`]), or by the word before it that names it
//! ([`named`]).

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Value;

use crate::model::{Block, ToolResultContent};

pub mod named;
pub mod rules;
pub mod shape;

fn registry() -> Option<&'static redact_secret::BuiltInRegistry> {
    static R: OnceLock<Option<redact_secret::BuiltInRegistry>> = OnceLock::new();
    R.get_or_init(|| redact_secret::BuiltInRegistry::with_built_in().ok())
        .as_ref()
}

/// A secret found in a text: its byte range and what it is (`github token`).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundSecret {
    pub start: usize,
    pub end: usize,
    pub what: String,
}

/// Why a text could not be scanned (it is then withheld, never passed on).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unscannable;

/// How much of a text redact-secret reads at once, and how far consecutive pieces overlap: a secret is shorter
/// than the overlap (a 4096-bit PEM key is about 3.3 KB), so every secret lies whole inside some piece.
const PIECE: usize = 64 * 1024;
const OVERLAP: usize = 8 * 1024;

/// The secrets in `s`, by both rule sets (redact-secret's detectors; gitleaks' rules and cairn's additions), in
/// order, overlapping finds merged. Large text is read in overlapping pieces, never cut blind.
pub fn find(s: &str) -> Result<Vec<FoundSecret>, Unscannable> {
    let reg = registry().ok_or(Unscannable)?;
    let rules = rules::rules().ok_or(Unscannable)?;
    let mut found: Vec<FoundSecret> = Vec::new();
    let mut start = 0;
    loop {
        let mut end = (start + PIECE).min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let piece = &s[start..end];
        let fs = reg
            .scan(piece, &redact_secret::DefaultPolicy)
            .map_err(|_| Unscannable)?;
        for f in fs {
            let r = f.range();
            let (a, b) = (start + r.start(), start + r.end());
            if !looks_like_code(&s[a..b]) {
                found.push(FoundSecret {
                    start: a,
                    end: b,
                    what: f.type_name().replace(['_', '-', '.'], " "),
                });
            }
        }
        if end >= s.len() {
            break;
        }
        let mut next = end.saturating_sub(OVERLAP).max(start + 1);
        while !s.is_char_boundary(next) {
            next += 1;
        }
        start = next;
    }
    found.extend(rules.scan(s).into_iter().map(|h| FoundSecret {
        start: h.start,
        end: h.end,
        what: h.rule.replace(['_', '-', '.'], " "),
    }));
    // a family neither set names: by the shape providers mint keys in
    found.extend(shape::find(s).into_iter().map(|(start, end)| FoundSecret {
        start,
        end,
        what: "key-shaped token".into(),
    }));
    // a value the text says is a key, of a family minted without a prefix
    found.extend(named::find(s).into_iter().map(|(start, end)| FoundSecret {
        start,
        end,
        what: "named secret".into(),
    }));
    found.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut merged: Vec<FoundSecret> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(m) if f.start < m.end => m.end = m.end.max(f.end),
            _ => merged.push(f),
        }
    }
    Ok(merged)
}

/// The texts at byte ranges of `s` (what a detector found, in its tests).
#[cfg(test)]
fn at(s: &str, ranges: Vec<(usize, usize)>) -> Vec<&str> {
    ranges.into_iter().map(|(a, b)| &s[a..b]).collect()
}

/// A generic detector's candidate that is code naming a key, not a key: a member access of identifiers
/// (`event.resolveApiKey`, `process.env.API_KEY`, `config.token()`), never a value.
fn looks_like_code(candidate: &str) -> bool {
    let c = candidate
        .trim_matches(|c: char| c == '"' || c == '\'' || c == ';' || c == ',' || c.is_whitespace())
        .trim_end_matches("()");
    let ident = |p: &str| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    };
    let path = |p: &str| !p.is_empty() && p.split('.').all(ident);
    let parts: Vec<&str> = c.split('.').collect();
    if parts.len() >= 2 && parts.iter().all(|p| ident(p)) {
        return true;
    }
    // an index or a call of such a name with a short argument that is no token: `args[++i]`, `argv[1]`,
    // `getenv("API_KEY")`
    let Some(open) = c.find(['[', '(']) else {
        return false;
    };
    let inner = &c[open + 1..];
    let Some(inner) = inner
        .strip_suffix(']')
        .filter(|_| c.as_bytes()[open] == b'[')
        .or_else(|| {
            inner
                .strip_suffix(')')
                .filter(|_| c.as_bytes()[open] == b'(')
        })
    else {
        return false;
    };
    let token_like = inner
        .split(|ch: char| !ch.is_ascii_alphanumeric())
        .any(|run| {
            run.len() >= 16
                && run.chars().any(|ch| ch.is_ascii_digit())
                && run.chars().any(|ch| ch.is_ascii_alphabetic())
        });
    path(&c[..open]) && inner.len() <= 40 && !token_like
}

/// Text with every secret in it replaced by `[redacted: what]`, and how many were. Text that cannot be scanned is
/// withheld: it fails closed.
pub fn text(s: &str) -> (Cow<'_, str>, usize) {
    const UNSCANNED: &str = "[redacted: the secret scanner could not read this text]";
    if s.is_empty() {
        return (Cow::Borrowed(s), 0);
    }
    let found = match find(s) {
        Ok(f) => f,
        Err(Unscannable) => return (Cow::Borrowed(UNSCANNED), 1),
    };
    if found.is_empty() {
        return (Cow::Borrowed(s), 0);
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for f in &found {
        out.push_str(&s[at..f.start]);
        out.push_str(&format!("[redacted: {}]", f.what));
        at = f.end;
    }
    out.push_str(&s[at..]);
    (Cow::Owned(out), found.len())
}

/// Redacts a string in place; how many secrets it held.
pub(crate) fn replace(s: &mut String) -> usize {
    let (t, n) = text(s);
    if n > 0 {
        *s = t.into_owned();
    }
    n
}

/// Keys whose value is a credential whatever it looks like (token counts such as `input_tokens` are not).
const SECRET_KEYS: &[&str] = &[
    "apikey",
    "api_key",
    "x_api_key",
    "authorization",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "access_token",
    "refresh_token",
    "id_token",
    "session_token",
    "bearer",
    "credential",
    "credentials",
    "credential_pin",
    "private_key",
];

fn names_a_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.contains(&k.as_str())
        || k.ends_with("_api_key")
        || k.ends_with("apikey")
        || k.ends_with("_secret")
        || k.ends_with("_secret_access_key")
        || k.ends_with("_password")
        || (k.ends_with("_token") && !k.contains("tokens"))
}

/// Redacts a JSON value in place (metadata, tool inputs): values under keys that name a credential, and secrets
/// inside every string. Returns how many were replaced.
pub fn value(v: &mut Value) -> usize {
    match v {
        Value::Object(o) => {
            let mut n = 0;
            for (k, val) in o.iter_mut() {
                if names_a_secret(k) && (val.is_string() || val.is_object() || val.is_number()) {
                    *val = Value::String("[redacted]".into());
                    n += 1;
                } else {
                    n += value(val);
                }
            }
            n
        }
        Value::Array(a) => a.iter_mut().map(value).sum(),
        Value::String(s) => replace(s),
        _ => 0,
    }
}

/// Redacts every string of a JSON value in place by what it holds (not by the key it sits under: for cairn's own
/// JSON, whose keys are cairn's, such as `chars_per_image_token`). Returns how many secrets were replaced.
pub fn strings(v: &mut Value) -> usize {
    match v {
        Value::Object(o) => o.values_mut().map(strings).sum(),
        Value::Array(a) => a.iter_mut().map(strings).sum(),
        Value::String(s) => replace(s),
        _ => 0,
    }
}

/// Redacts the text of blocks in place: prose, thinking, tool inputs, tool output, unknown blocks. Returns how many
/// secrets were replaced. A thinking block whose text changed loses its signature: the signature was over the text
/// as the model wrote it, and a provider refuses signed reasoning that was changed (each way out then does with
/// unsigned reasoning what it does with any: Claude Code's and the Messages API's leave it out).
pub fn blocks(blocks: &mut [Block]) -> usize {
    blocks.iter_mut().map(block).sum()
}

fn block(b: &mut Block) -> usize {
    match b {
        Block::Text { text } => replace(text),
        Block::Thinking {
            thinking,
            signature,
        } => {
            let n = replace(thinking);
            if n > 0 {
                *signature = None;
            }
            n
        }
        // a tool's name is the harness's, but a transcript can put anything there
        Block::ToolUse { name, input, .. } => replace(name) + value(input),
        Block::ToolResult { content, .. } => match content {
            ToolResultContent::Text(t) => replace(t),
            ToolResultContent::Blocks(bs) => blocks(bs),
        },
        Block::Image { .. } => 0,
        Block::Other(v) => value(v),
    }
}

/// Redacts a stored message in place (content and metadata).
pub fn message(m: &mut crate::model::Message) -> usize {
    blocks(&mut m.content) + value(&mut m.meta)
}

/// [`message`] of each, on as many threads as there are cores (a 100k-message export scans them all); how many
/// secrets they held.
pub fn messages(ms: &mut [crate::model::Message]) -> usize {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads <= 1 || ms.len() < 256 {
        return ms.iter_mut().map(message).sum();
    }
    let per = ms.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = ms
            .chunks_mut(per)
            .map(|part| s.spawn(move || part.iter_mut().map(message).sum::<usize>()))
            .collect();
        // a part whose thread failed is scanned again here, so nothing leaves unscanned
        handles
            .into_iter()
            .map(|h| h.join().ok())
            .collect::<Vec<_>>()
    })
    .into_iter()
    .zip(ms.chunks_mut(per))
    .map(|(n, part)| n.unwrap_or_else(|| part.iter_mut().map(message).sum()))
    .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Redaction fails closed, so the scanner must load: if it did not, every text would be withheld.
    #[test]
    fn the_scanner_loads() {
        assert!(registry().is_some());
        assert_eq!(text("plain words").0, "plain words");
    }

    /// One sample per family the issue names: each is found and replaced, and ordinary text is left alone.
    #[test]
    fn every_key_family_is_redacted_and_prose_is_not() {
        let fine_grained = format!("github_pat_{}_{}", "A".repeat(22), "b".repeat(59));
        let cases = [
            (
                "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvW-AAAAAA",
                "anthropic",
            ),
            (
                "OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStT3BlbkFJabcdefghijklmnopqrstuvwxyz0123456789",
                "secret",
            ),
            (
                "aws_access_key_id = AKIAZ3MSJV4WWNKWW5FG\naws_secret_access_key = 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",
                "aws",
            ),
            ("token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "github"),
            (fine_grained.as_str(), "github"),
            (
                "slack xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                "slack",
            ),
            (
                "curl -H 'Authorization: Bearer abcdef0123456789abcdef0123456789abcdef'",
                "bearer",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n-----END RSA PRIVATE KEY-----",
                "private key",
            ),
            ("DATABASE_PASSWORD=hunter2-very-secret-Zx9", "secret"),
        ];
        for (input, family) in cases {
            let (out, n) = text(input);
            assert!(n >= 1, "not found: {input}");
            assert!(
                out.contains("[redacted: ") && out.contains(family),
                "{input} -> {out}"
            );
        }
        let prose = "the secret of a good parser is a small grammar; tokens are cheap";
        assert_eq!(text(prose), (Cow::Borrowed(prose), 0));
    }

    /// Reasoning that held a secret is changed, so its signature (over the text as written) goes; other reasoning
    /// keeps its own.
    #[test]
    fn changed_reasoning_loses_its_signature() {
        let sig = Some("EqQBCkYIBRgCKkA".to_string());
        let mut bs = vec![
            Block::Thinking {
                thinking: "push with ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 now".into(),
                signature: sig.clone(),
            },
            Block::Thinking {
                thinking: "nothing secret".into(),
                signature: sig.clone(),
            },
        ];
        assert_eq!(blocks(&mut bs), 1);
        assert!(
            matches!(&bs[0], Block::Thinking { thinking, signature: None } if thinking.contains("[redacted: "))
        );
        assert!(matches!(&bs[1], Block::Thinking { signature, .. } if *signature == sig));
    }

    #[test]
    fn metadata_is_redacted_by_key_and_by_shape_and_counts_stay() {
        let mut v = json!({
            "apiKey": "abc", "headers": {"Authorization": "Bearer xyz", "x-api-key": "k"},
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 2},
            "env": {"AWS_SECRET_ACCESS_KEY": "9f3Hk2Lq8Zp4Xy7Vb1Nm6Qw5Er0Ty3Ui8Op2As4D", "GH": "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"},
            "toolUseResult": {"stdout": "export TOKEN=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\nok"},
            "credential_pin": {"id": 1}, "refresh_token": "r", "text": "sk- is a prefix"
        });
        assert!(value(&mut v) >= 7);
        assert_eq!(v["apiKey"], "[redacted]");
        assert_eq!(v["headers"]["Authorization"], "[redacted]");
        assert_eq!(v["headers"]["x-api-key"], "[redacted]");
        assert_eq!(v["usage"]["input_tokens"], 5);
        assert_eq!(v["env"]["AWS_SECRET_ACCESS_KEY"], "[redacted]");
        assert!(v["env"]["GH"].as_str().unwrap().starts_with("[redacted: "));
        assert!(
            !v["toolUseResult"]["stdout"]
                .as_str()
                .unwrap()
                .contains("ghp_")
        );
        assert_eq!(v["credential_pin"], "[redacted]");
        assert_eq!(v["text"], "sk- is a prefix");
    }
}
