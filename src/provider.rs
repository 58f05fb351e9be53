//! Talking to a model: Anthropic Messages and OpenAI-compatible Chat Completions over HTTP (reqwest, blocking),
//! streamed. Base URLs and keys come from the environment (`ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`,
//! `OPENAI_BASE_URL` / `OPENAI_API_KEY`) so local servers work; keys are never stored or exported.
//!
//! Errors are classified by HTTP status first (a 413 may carry a proxy's HTML page), then by the body: an overflow
//! ("prompt is too long: N tokens > M maximum", `context_length_exceeded`, ...) is told apart from everything
//! else, with the provider's own token count when it gives one.

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::model::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Anthropic,
    Openai,
}

impl Kind {
    pub fn from_name(s: &str) -> Option<Kind> {
        match s {
            "anthropic" => Some(Kind::Anthropic),
            "openai" => Some(Kind::Openai),
            _ => None,
        }
    }
}

/// Default models, used when neither a flag nor the config file names one.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-opus-4-7";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-5.5";

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "no provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or a *_BASE_URL for a local server)"
    )]
    NoProvider,
    #[error("the provider says the request is too long{}: {message}", tokens.map(|t| format!(" ({t} tokens{})", limit.map(|l| format!(" > {l}")).unwrap_or_default())).unwrap_or_default())]
    Overflow {
        tokens: Option<u64>,
        limit: Option<u64>,
        message: String,
    },
    #[error("HTTP {status} from {url}: {message}")]
    Http {
        status: u16,
        url: String,
        message: String,
    },
    #[error("cannot reach {url}: {message}")]
    Network { url: String, message: String },
    #[error("cancelled")]
    Cancelled,
    #[error("unexpected response from {url}: {message}")]
    BadResponse { url: String, message: String },
}

/// A configured provider. The key is held in memory only.
#[derive(Clone)]
pub struct Provider {
    pub kind: Kind,
    pub base_url: String,
    key: Option<String>,
    pub model: String,
    pub max_tokens: u32,
    pub timeout: Duration,
    /// Attempts for 429 and 5xx answers (with backoff), not for overflows.
    pub attempts: u32,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "[set]"))
            .finish()
    }
}

/// A finished reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub usage: Option<Usage>,
    pub model: String,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Provider {
    /// From flags, the environment and defaults. With no kind given, the provider whose key is set (Anthropic
    /// first), else one whose base URL is set (a local server needs no key).
    pub fn from_env(kind: Option<Kind>, model: Option<String>) -> Result<Provider, ProviderError> {
        let kind = match kind {
            Some(k) => k,
            None if env("ANTHROPIC_API_KEY").is_some() => Kind::Anthropic,
            None if env("OPENAI_API_KEY").is_some() => Kind::Openai,
            None if env("ANTHROPIC_BASE_URL").is_some() => Kind::Anthropic,
            None if env("OPENAI_BASE_URL").is_some() => Kind::Openai,
            None => return Err(ProviderError::NoProvider),
        };
        let (base, key, default_model) = match kind {
            Kind::Anthropic => (
                env("ANTHROPIC_BASE_URL").unwrap_or_else(|| "https://api.anthropic.com".into()),
                env("ANTHROPIC_API_KEY"),
                DEFAULT_ANTHROPIC_MODEL,
            ),
            Kind::Openai => (
                env("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into()),
                env("OPENAI_API_KEY"),
                DEFAULT_OPENAI_MODEL,
            ),
        };
        Ok(Provider {
            kind,
            base_url: base.trim_end_matches('/').to_string(),
            key,
            model: model.unwrap_or_else(|| default_model.to_string()),
            max_tokens: 4096,
            timeout: Duration::from_secs(300),
            attempts: 3,
        })
    }

    /// An HTTP client with the provider's timeout.
    fn client(&self, url: &str) -> Result<reqwest::blocking::Client, ProviderError> {
        reqwest::blocking::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|e| ProviderError::Network {
                url: url.to_string(),
                message: e.to_string(),
            })
    }

    /// A request with the provider's version and key headers (and an `anthropic-beta` header).
    fn authorized(
        &self,
        rb: reqwest::blocking::RequestBuilder,
        beta: Option<&str>,
    ) -> reqwest::blocking::RequestBuilder {
        match (self.kind, &self.key) {
            (Kind::Anthropic, key) => {
                let mut rb = rb.header("anthropic-version", "2023-06-01");
                if let Some(b) = beta {
                    rb = rb.header("anthropic-beta", b);
                }
                match key {
                    Some(k) => rb.header("x-api-key", k),
                    None => rb,
                }
            }
            (Kind::Openai, Some(k)) => rb.bearer_auth(k),
            (Kind::Openai, None) => rb,
        }
    }

    fn url(&self) -> String {
        match self.kind {
            Kind::Anthropic => format!("{}/v1/messages", self.base_url.trim_end_matches("/v1")),
            Kind::Openai if self.base_url.ends_with("/v1") => {
                format!("{}/chat/completions", self.base_url)
            }
            Kind::Openai => format!("{}/v1/chat/completions", self.base_url),
        }
    }

    /// Sends a request body (`messages`, and `system` for Anthropic, as the exports build them), streams the
    /// reply's text to `on_text`, and returns it whole. Retries 429 and 5xx with backoff; checks `cancel`
    /// between chunks.
    pub fn complete(
        &self,
        body: &Value,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<Reply, ProviderError> {
        let url = self.url();
        let mut req = body.clone();
        req["model"] = json!(self.model);
        req["stream"] = json!(true);
        match self.kind {
            Kind::Anthropic => req["max_tokens"] = json!(self.max_tokens),
            Kind::Openai => req["stream_options"] = json!({"include_usage": true}),
        }
        let client = self.client(&url)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            if cancel.load(Ordering::Relaxed) {
                return Err(ProviderError::Cancelled);
            }
            let rb = self.authorized(client.post(&url).json(&req), None);
            let resp = match rb.send() {
                Ok(r) => r,
                Err(e) if attempt < self.attempts && (e.is_timeout() || e.is_connect()) => {
                    std::thread::sleep(backoff(attempt));
                    continue;
                }
                Err(e) => {
                    return Err(ProviderError::Network {
                        url,
                        message: e.to_string(),
                    });
                }
            };
            let status = resp.status().as_u16();
            if status >= 400 {
                let text = resp.text().unwrap_or_default();
                let err = classify(status, &text, &url);
                let retryable = matches!(err, ProviderError::Http { status, .. } if status == 429 || status >= 500);
                if retryable && attempt < self.attempts {
                    std::thread::sleep(backoff(attempt));
                    continue;
                }
                return Err(err);
            }
            return self.read_stream(resp, on_text, cancel, &url);
        }
    }

    /// POSTs a JSON body to `path` (under the provider's base URL) and returns the JSON answer, not streamed:
    /// the provider-side features (Anthropic's server compaction, OpenAI's `responses/compact`). `beta` is an
    /// `anthropic-beta` header.
    pub fn post_json(
        &self,
        path: &str,
        body: &Value,
        beta: Option<&str>,
    ) -> Result<Value, ProviderError> {
        let base = match self.kind {
            Kind::Anthropic => self.base_url.trim_end_matches("/v1").to_string(),
            Kind::Openai if self.base_url.ends_with("/v1") => {
                self.base_url.trim_end_matches("/v1").to_string()
            }
            Kind::Openai => self.base_url.clone(),
        };
        let url = format!("{base}{path}");
        let client = self.client(&url)?;
        let mut req = body.clone();
        req["model"] = json!(self.model);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let rb = self.authorized(client.post(&url).json(&req), beta);
            let resp = rb.send().map_err(|e| ProviderError::Network {
                url: url.clone(),
                message: e.to_string(),
            })?;
            let status = resp.status().as_u16();
            let text = resp.text().unwrap_or_default();
            if status >= 400 {
                let err = classify(status, &text, &url);
                let retryable = matches!(err, ProviderError::Http { status, .. } if status == 429 || status >= 500);
                if retryable && attempt < self.attempts {
                    std::thread::sleep(backoff(attempt));
                    continue;
                }
                return Err(err);
            }
            return serde_json::from_str(&text).map_err(|e| ProviderError::BadResponse {
                url,
                message: format!("not JSON: {e}"),
            });
        }
    }

    fn read_stream(
        &self,
        resp: reqwest::blocking::Response,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
        url: &str,
    ) -> Result<Reply, ProviderError> {
        let mut text = String::new();
        let mut usage = Usage::default();
        let mut saw_usage = false;
        let mut model = self.model.clone();
        for line in BufReader::new(resp).lines() {
            if cancel.load(Ordering::Relaxed) {
                return Err(ProviderError::Cancelled);
            }
            let line = line.map_err(|e| ProviderError::Network {
                url: url.to_string(),
                message: e.to_string(),
            })?;
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let data = data.trim();
            if data == "[DONE]" {
                break;
            }
            let Ok(v) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            let g = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
            match self.kind {
                Kind::Anthropic => match v.get("type").and_then(Value::as_str) {
                    Some("message_start") => {
                        if let Some(m) = v["message"]["model"].as_str() {
                            model = m.to_string();
                        }
                        let u = &v["message"]["usage"];
                        usage.input_tokens = g(u, "input_tokens");
                        usage.cache_read_input_tokens = g(u, "cache_read_input_tokens");
                        usage.cache_creation_input_tokens = g(u, "cache_creation_input_tokens");
                        saw_usage = true;
                    }
                    Some("content_block_delta") => {
                        if let Some(t) = v["delta"]["text"].as_str() {
                            on_text(t);
                            text.push_str(t);
                        }
                    }
                    Some("message_delta") => usage.output_tokens = g(&v["usage"], "output_tokens"),
                    Some("error") => return Err(classify(400, &v.to_string(), url)),
                    _ => {}
                },
                Kind::Openai => {
                    if let Some(t) = v["choices"][0]["delta"]["content"].as_str() {
                        on_text(t);
                        text.push_str(t);
                    }
                    if let Some(m) = v["model"].as_str() {
                        model = m.to_string();
                    }
                    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                        let cached = u["prompt_tokens_details"]["cached_tokens"]
                            .as_u64()
                            .unwrap_or(0);
                        usage.input_tokens = g(u, "prompt_tokens").saturating_sub(cached);
                        usage.cache_read_input_tokens = cached;
                        usage.output_tokens = g(u, "completion_tokens");
                        saw_usage = true;
                    }
                }
            }
        }
        Ok(Reply {
            text,
            usage: saw_usage.then_some(usage),
            model,
        })
    }
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250 * (1 << attempt.min(5)))
}

const OVERFLOW_PATTERNS: &[&str] = &[
    "prompt is too long",
    "input is too long",
    "exceeds the context window",
    "maximum context length",
    "context_length_exceeded",
    "context length exceeded",
    "input token count",
    "maximum prompt length",
    "reduce the length of the messages",
    "exceeds the limit of",
    "exceeds the available context size",
    "greater than the context length",
    "context window exceeds limit",
    "too many tokens",
    "token limit exceeded",
    "model_context_window_exceeded",
];

/// Numbers after a marker: "prompt is too long: 208310 tokens > 200000 maximum", "resulted in 8227 tokens",
/// "maximum context length is 8192 tokens".
fn number_after(body: &str, marker: &str) -> Option<u64> {
    let i = body.find(marker)? + marker.len();
    let digits: String = body[i..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Classifies an error answer: an overflow (with the provider's token count and limit when given) or not.
pub fn classify(status: u16, body: &str, url: &str) -> ProviderError {
    let lower = body.to_lowercase();
    let message: String = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or(v["message"].as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            body.chars()
                .take(300)
                .collect::<String>()
                .replace('\n', " ")
        });
    if status == 413
        || (status == 400 || status == 422) && OVERFLOW_PATTERNS.iter().any(|p| lower.contains(p))
    {
        let tokens = number_after(&lower, "prompt is too long")
            .or_else(|| number_after(&lower, "resulted in"))
            .or_else(|| number_after(&lower, "requested about"))
            .or_else(|| number_after(&lower, "input token count"))
            .or_else(|| number_after(&lower, "request contains"));
        let limit = number_after(&lower, "> ")
            .filter(|_| lower.contains("prompt is too long"))
            .or_else(|| number_after(&lower, "maximum context length is"))
            .or_else(|| number_after(&lower, "maximum number of tokens allowed"));
        return ProviderError::Overflow {
            tokens,
            limit,
            message,
        };
    }
    ProviderError::Http {
        status,
        url: url.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_answers_are_recognised_with_their_numbers() {
        let a = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
        match classify(400, a, "u") {
            ProviderError::Overflow { tokens, limit, .. } => {
                assert_eq!((tokens, limit), (Some(208_310), Some(200_000)))
            }
            e => panic!("{e}"),
        }
        let o = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens.","code":"context_length_exceeded"}}"#;
        match classify(400, o, "u") {
            ProviderError::Overflow { tokens, limit, .. } => {
                assert_eq!((tokens, limit), (Some(8227), Some(8192)))
            }
            e => panic!("{e}"),
        }
        // a proxy's HTML page on 413 is still an overflow
        assert!(matches!(
            classify(
                413,
                "<html><body>Request Entity Too Large</body></html>",
                "u"
            ),
            ProviderError::Overflow { .. }
        ));
        assert!(matches!(
            classify(429, "{\"error\":{\"message\":\"rate limited\"}}", "u"),
            ProviderError::Http { status: 429, .. }
        ));
        assert!(matches!(
            classify(400, "{\"error\":{\"message\":\"bad field\"}}", "u"),
            ProviderError::Http { status: 400, .. }
        ));
    }
}
