//! One chat-completions request, with timeouts and bounded retries (exponential backoff with
//! jitter on connection errors, 429 and 5xx; `Retry-After` honoured). The key goes into the
//! `Authorization` header and nowhere else: no error message, log or cache entry carries it.

use std::time::Duration;

use super::{LlmConfig, LlmError};

/// Retries after the first try, at most.
pub const MAX_RETRIES: u32 = 3;
/// The longest wait between tries, whatever `Retry-After` asks (a run has a time budget).
const MAX_WAIT: Duration = Duration::from_secs(30);
/// Answers longer than this are not a patch: refused rather than read into memory.
const MAX_BODY: u64 = 4 * 1024 * 1024;

/// What the server said on the last try (a 2xx status; [`content_of`] reads it).
pub struct Answer {
    /// The HTTP response body as received (for the audit log).
    pub body: String,
    /// Tries made (1 + retries).
    pub tries: u32,
}

/// POSTs `body` (the request JSON) to `{url}/chat/completions`.
pub fn complete(config: &LlmConfig, body: &str) -> Result<Answer, LlmError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(config.connect_timeout))
        .timeout_global(Some(config.read_timeout))
        // Status codes are read here (429 and 5xx are retried), not turned into errors.
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let url = endpoint(&config.url);
    let mut tries = 0;
    let mut seed = jitter_seed();
    loop {
        tries += 1;
        let mut req = agent.post(&url).header("Content-Type", "application/json");
        if let Some(key) = &config.key {
            req = req.header("Authorization", &format!("Bearer {}", key.expose()));
        }
        let retry_after;
        let failure = match req.send(body) {
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let text = resp
                    .body_mut()
                    .with_config()
                    .limit(MAX_BODY)
                    .read_to_string();
                match (status, text) {
                    (200..=299, Ok(text)) => return Ok(Answer { body: text, tries }),
                    (200..=299, Err(e)) => {
                        return Err(LlmError::Malformed(format!(
                            "the response body could not be read: {}",
                            redact(&e.to_string(), config)
                        )))
                    }
                    (429 | 500..=599, _) => format!("HTTP {status}"),
                    (_, text) => {
                        let said = text.unwrap_or_default();
                        return Err(LlmError::Http(status, redact(&first_line(&said), config)));
                    }
                }
            }
            Err(e) => {
                retry_after = None;
                if !retryable(&e) {
                    return Err(LlmError::Transport(redact(&e.to_string(), config)));
                }
                redact(&e.to_string(), config)
            }
        };
        if tries > MAX_RETRIES {
            return Err(LlmError::GaveUp(tries, failure));
        }
        let backoff = Duration::from_millis(config.backoff_ms << (tries - 1));
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Full jitter on top of the exponential step: many clients do not retry in lockstep.
        let jitter = Duration::from_millis((seed >> 33) % (config.backoff_ms.max(1)));
        let wait = retry_after.unwrap_or(backoff + jitter).min(MAX_WAIT);
        std::thread::sleep(wait);
    }
}

/// `BASE/chat/completions` (a trailing slash on BASE is not doubled).
pub fn endpoint(base: &str) -> String {
    format!("{}/chat/completions", base.trim_end_matches('/'))
}

fn retryable(e: &ureq::Error) -> bool {
    matches!(
        e,
        ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Timeout(_)
    )
}

/// The first choice's message text from an OpenAI chat-completions response.
pub fn content_of(body: &str) -> Result<String, LlmError> {
    let v: serde_json::Value = serde_json::from_str(body).map_err(|_| {
        LlmError::Malformed(format!("the response is not JSON: {}", first_line(body)))
    })?;
    let content = v
        .pointer("/choices/0/message/content")
        .and_then(|c| c.as_str())
        .ok_or_else(|| {
            LlmError::Malformed("the response has no choices[0].message.content".to_string())
        })?;
    if content.trim().is_empty() {
        return Err(LlmError::Malformed("the model's answer is empty".into()));
    }
    Ok(content.to_string())
}

/// At most 200 characters of the first line, for a report line.
fn first_line(s: &str) -> String {
    let line = crate::traceback::first_line(s).trim();
    let mut out: String = line.chars().take(200).collect();
    if out.len() < line.len() {
        out.push_str("...");
    }
    out
}

/// `text` with the key blanked, should a server or library ever echo it.
pub fn redact(text: &str, config: &LlmConfig) -> String {
    match &config.key {
        Some(k) if !k.expose().is_empty() => text.replace(k.expose(), "[redacted]"),
        _ => text.to_string(),
    }
}

fn jitter_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    now ^ u64::from(std::process::id()).rotate_left(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_joins_without_doubling_slashes() {
        assert_eq!(
            endpoint("http://127.0.0.1:8080/v1/"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
    }

    #[test]
    fn content_is_read_or_refused_clearly() {
        let ok = r#"{"choices":[{"message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(content_of(ok).unwrap(), "hi");
        assert_eq!(
            content_of("<html>oops").unwrap_err().to_string(),
            "malformed answer: the response is not JSON: <html>oops"
        );
        assert_eq!(
            content_of(r#"{"choices":[]}"#).unwrap_err().to_string(),
            "malformed answer: the response has no choices[0].message.content"
        );
        assert_eq!(
            content_of(r#"{"choices":[{"message":{"content":"  "}}]}"#)
                .unwrap_err()
                .to_string(),
            "malformed answer: the model's answer is empty"
        );
    }
}
