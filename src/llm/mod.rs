//! The opt-in LLM fallback: when the rules have nothing (left) for a failure, an
//! OpenAI-compatible chat-completions model is asked for SEARCH/REPLACE blocks, which become
//! ordinary candidates: byte-range edits, re-parsed, proven by pytest, journaled, rolled back.
//! The model is never contacted unless the user asks (`--llm`, `SELFDEBUG_LLM=1`).
//!
//! - [`prompt`]: what is sent (the failure, the code, the test, the environment, earlier tries);
//! - [`client`]: the HTTP request, timeouts, retries;
//! - [`blocks`]: reading the answer into edits;
//! - [`cache`]: answers by a hash of the request, so a rerun costs nothing.

pub mod blocks;
pub mod cache;
pub mod candidate;
pub mod client;
pub mod prompt;

use std::time::Duration;

use serde::Serialize;

/// `--llm-max-calls` when not given: a run asks the model a handful of times at most.
pub const DEFAULT_MAX_CALLS: u32 = 6;
/// `max_tokens` of each request: enough for a few blocks of a function, not for essays.
pub const DEFAULT_MAX_TOKENS: u32 = 2048;
pub const DEFAULT_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// The API key: printed nowhere (its `Debug` is blank), only sent in the header.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: String) -> Secret {
        Secret(s)
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// How to reach the model, and how much of it a run may use.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The API base; requests go to `{url}/chat/completions`.
    pub url: String,
    pub model: String,
    /// `SELFDEBUG_LLM_API_KEY`, else `OPENAI_API_KEY`; none: no `Authorization` header.
    pub key: Option<Secret>,
    /// Requests per run (cached answers are free).
    pub max_calls: u32,
    pub max_tokens: u32,
    /// Read and write the answer cache.
    pub cache: bool,
    pub connect_timeout: Duration,
    /// For the whole exchange, the answer included (models are slow).
    pub read_timeout: Duration,
    /// The first retry's wait; doubled each time (plus jitter).
    pub backoff_ms: u64,
}

impl LlmConfig {
    /// The configuration from the environment and the flags given (flags win).
    pub fn from_env(url: Option<String>, model: Option<String>) -> LlmConfig {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        LlmConfig {
            url: url
                .or_else(|| env("SELFDEBUG_LLM_URL"))
                .unwrap_or_else(|| DEFAULT_URL.into()),
            model: model
                .or_else(|| env("SELFDEBUG_LLM_MODEL"))
                .unwrap_or_else(|| DEFAULT_MODEL.into()),
            key: env("SELFDEBUG_LLM_API_KEY")
                .or_else(|| env("OPENAI_API_KEY"))
                .map(|k| Secret::new(k.trim().to_string())),
            max_calls: DEFAULT_MAX_CALLS,
            max_tokens: DEFAULT_MAX_TOKENS,
            cache: true,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
            backoff_ms: env("SELFDEBUG_LLM_BACKOFF_MS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1000),
        }
    }
}

/// Whether `SELFDEBUG_LLM` asks for the fallback (`1`, `true`, `yes`, `on`).
pub fn enabled_by_env() -> bool {
    std::env::var("SELFDEBUG_LLM").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Why no answer could be had. None of these carries the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// Connection refused, DNS, TLS, a timeout (not retried, or not retryable).
    #[error("cannot reach the model: {0}")]
    Transport(String),
    /// A status that is not retried (401, 404, ...) and the first line the server said.
    #[error("the model's server said HTTP {0}{said}", said = said(.1))]
    Http(u16, String),
    /// Retries used up: tries made and the last failure.
    #[error("gave up after {0} tries (last: {1})")]
    GaveUp(u32, String),
    /// Not JSON, no message, empty.
    #[error("malformed answer: {0}")]
    Malformed(String),
}

/// What the server said, as the tail of an [`LlmError::Http`] message (nothing when nothing).
fn said(m: &str) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    }
}

/// One question and its answer, as the audit log keeps it (never the key).
#[derive(Debug, Clone, Serialize)]
pub struct Exchange {
    pub model: String,
    pub url: String,
    /// The request JSON as sent.
    pub request: serde_json::Value,
    /// The response body as received (from the cache when `cached`).
    pub response: Option<String>,
    pub error: Option<String>,
    pub cached: bool,
    pub tries: u32,
    pub duration_ms: u64,
}

/// The fallback's state over one run: calls left, what was asked.
pub struct Llm {
    pub config: LlmConfig,
    /// Requests sent to the server (not cache hits).
    pub calls: u32,
    pub exchanges: Vec<Exchange>,
    /// Set when the server cannot be used (down, refusing the key): not asked again this run.
    pub broken: Option<String>,
    /// The exchange of the candidate handed to the loop, for its attempt record.
    pub pending: Option<Exchange>,
}

/// What the fallback did in a run (the JSON's `llm`; null when it was off).
#[derive(Debug, Clone, Serialize)]
pub struct Usage {
    pub model: String,
    pub url: String,
    /// Requests sent (retries not counted), and answers read from the cache instead.
    pub requests: u32,
    pub cached: u32,
    pub max_calls: u32,
    /// Why the model was not asked again, when it was not.
    pub stopped: Option<String>,
    /// Exchanges that produced no candidate (errors, malformed answers), for the audit log.
    #[serde(skip)]
    pub failed: Vec<Exchange>,
}

impl Llm {
    pub fn usage(&self) -> Usage {
        Usage {
            model: self.config.model.clone(),
            url: client::endpoint(&self.config.url),
            requests: self.calls,
            cached: self.exchanges.iter().filter(|e| e.cached).count() as u32,
            max_calls: self.config.max_calls,
            stopped: self.broken.clone(),
            failed: self
                .exchanges
                .iter()
                .filter(|e| e.error.is_some())
                .cloned()
                .collect(),
        }
    }

    pub fn new(config: LlmConfig) -> Llm {
        Llm {
            config,
            calls: 0,
            exchanges: Vec::new(),
            broken: None,
            pending: None,
        }
    }

    /// Why the model cannot be asked now, if it cannot.
    pub fn unavailable(&self) -> Option<String> {
        if let Some(b) = &self.broken {
            return Some(b.clone());
        }
        (self.calls >= self.config.max_calls).then(|| {
            format!(
                "the model was asked {} times, the most a run may (--llm-max-calls)",
                self.calls
            )
        })
    }

    /// The model's answer to `messages`: from the cache, else from the server.
    pub fn ask(&mut self, messages: &[prompt::Message]) -> Result<String, LlmError> {
        let request = serde_json::json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "temperature": 0,
        });
        let body = request.to_string();
        let started = std::time::Instant::now();
        let mut exchange = Exchange {
            model: self.config.model.clone(),
            url: client::endpoint(&self.config.url),
            request,
            response: None,
            error: None,
            cached: false,
            tries: 0,
            duration_ms: 0,
        };
        let key = cache::key(&self.config.url, &body);
        if self.config.cache {
            if let Some(hit) = cache::get(&key) {
                if let Ok(content) = client::content_of(&hit) {
                    exchange.response = Some(hit);
                    exchange.cached = true;
                    self.exchanges.push(exchange);
                    return Ok(content);
                }
            }
        }
        self.calls += 1;
        let result = client::complete(&self.config, &body);
        exchange.duration_ms = started.elapsed().as_millis() as u64;
        let out = match result.and_then(|a| {
            exchange.tries = a.tries;
            exchange.response = Some(a.body.clone());
            client::content_of(&a.body)
        }) {
            Ok(content) => {
                if self.config.cache {
                    if let Some(body) = &exchange.response {
                        cache::put(&key, body);
                    }
                }
                Ok(content)
            }
            Err(e) => {
                exchange.error = Some(e.to_string());
                if !matches!(e, LlmError::Malformed(_)) {
                    self.broken = Some(format!("the model is not asked again: {e}"));
                }
                Err(e)
            }
        };
        self.exchanges.push(exchange);
        out
    }
}
