//! Secrets out of everything cairn shows or hands over: exports, `show`, `resume`, snapshot pages and their
//! factsheet. The store keeps what the harness wrote (it is the user's own history); what leaves it is redacted by
//! default.
//!
//! Why a library: keys have many shapes (Anthropic, OpenAI project keys, AWS key pairs, GitHub classic and
//! fine-grained tokens, Slack tokens, bearer headers, JWTs, private-key blocks, `.env` assignments, connection
//! strings, ...) and new ones appear; a hand list goes stale. The detectors are redact-secret's (a maintained,
//! deterministic, offline rule set); a found secret becomes `[redacted: github token]`. Metadata keys that name a
//! credential (`apiKey`, `authorization`, `password`, `*_secret`, ...) are redacted whatever their value.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Value;

use crate::model::{Block, ToolResultContent};

fn registry() -> Option<&'static redact_secret::BuiltInRegistry> {
    static R: OnceLock<Option<redact_secret::BuiltInRegistry>> = OnceLock::new();
    R.get_or_init(|| redact_secret::BuiltInRegistry::with_built_in().ok())
        .as_ref()
}

/// `[redacted: github token]` for a finding of type `github_token`.
fn placeholder(
    f: &redact_secret::Finding,
    _c: &redact_secret::PlaceholderContext,
) -> Result<String, redact_secret::FormatterFailure> {
    Ok(format!(
        "[redacted: {}]",
        f.type_name().replace(['_', '-', '.'], " ")
    ))
}

/// Text with every secret in it replaced, and how many were. Text the detectors cannot take (over their size
/// limit) is redacted line by line.
pub fn text(s: &str) -> (Cow<'_, str>, usize) {
    // fail closed: text the scanner could not look at is not handed over
    const UNSCANNED: &str = "[redacted: the secret scanner could not read this text]";
    let Some(reg) = registry() else {
        return (Cow::Borrowed(UNSCANNED), 1);
    };
    match reg.scan_and_redact(s, &redact_secret::DefaultPolicy, &placeholder) {
        Ok(r) if r.findings().is_empty() => (Cow::Borrowed(s), 0),
        Ok(r) => (Cow::Owned(r.text().to_string()), r.findings().len()),
        // too large for one pass: a chunk at a time, at line ends
        Err(_) if s.len() > 4096 => {
            let mut out = String::with_capacity(s.len());
            let mut n = 0;
            for chunk in chunks(s, 64 * 1024) {
                let (t, k) = text(chunk);
                out.push_str(&t);
                n += k;
            }
            (Cow::Owned(out), n)
        }
        Err(_) if s.is_empty() => (Cow::Borrowed(s), 0),
        Err(_) => (Cow::Borrowed(UNSCANNED), 1),
    }
}

/// `s` cut into pieces of at most about `size` bytes, at line ends where there are any.
fn chunks(s: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = rest.len().min(size);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut < rest.len()
            && let Some(nl) = rest[..cut].rfind('\n')
        {
            cut = nl + 1;
        }
        let (head, tail) = rest.split_at(cut.max(1).min(rest.len()));
        rest = tail;
        Some(head)
    })
}

fn replace(s: &mut String) -> usize {
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

/// Redacts the text of blocks in place: prose, thinking (never its signature), tool inputs, tool output, unknown
/// blocks. Returns how many secrets were replaced.
pub fn blocks(blocks: &mut [Block]) -> usize {
    blocks.iter_mut().map(block).sum()
}

fn block(b: &mut Block) -> usize {
    match b {
        Block::Text { text } => replace(text),
        Block::Thinking { thinking, .. } => replace(thinking),
        Block::ToolUse { input, .. } => value(input),
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
