//! The `--llm*` flags of `fix` and the environment variables behind them.

use crate::llm::{self, LlmConfig};

const HEADING: &str = "LLM fallback (off by default)";

/// The opt-in model fallback (off unless `--llm` or `SELFDEBUG_LLM=1`).
#[derive(clap::Args, Debug, Clone)]
pub struct LlmArgs {
    /// When the rules have nothing (left) for a failure, ask an OpenAI-compatible
    /// chat-completions model for SEARCH/REPLACE edits; each is proven by pytest like a
    /// rule's (`source: "llm"`, unsafe). Also on with SELFDEBUG_LLM=1. The key is read from
    /// SELFDEBUG_LLM_API_KEY, else OPENAI_API_KEY (no key: no Authorization header).
    #[arg(long, help_heading = HEADING)]
    pub llm: bool,
    /// API base: requests go to BASE/chat/completions (env SELFDEBUG_LLM_URL; default
    /// https://api.openai.com/v1; e.g. http://127.0.0.1:11434/v1 for Ollama).
    #[arg(long, value_name = "BASE", help_heading = HEADING)]
    pub llm_url: Option<String>,
    /// Model name (env SELFDEBUG_LLM_MODEL; default gpt-4o-mini).
    #[arg(long, value_name = "NAME", help_heading = HEADING)]
    pub llm_model: Option<String>,
    /// Requests per run at most (answers from the cache are free).
    #[arg(long, value_name = "N", default_value_t = llm::DEFAULT_MAX_CALLS, help_heading = HEADING)]
    pub llm_max_calls: u32,
    /// `max_tokens` of each request.
    #[arg(long, value_name = "N", default_value_t = llm::DEFAULT_MAX_TOKENS, help_heading = HEADING,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub llm_max_tokens: u32,
    /// Neither read nor write the answer cache (~/.cache/selfdebug/llm/).
    #[arg(long, help_heading = HEADING)]
    pub llm_no_cache: bool,
}

impl LlmArgs {
    /// The configuration, or none when the fallback is off.
    pub fn config(&self) -> Option<LlmConfig> {
        if !(self.llm || llm::enabled_by_env()) {
            return None;
        }
        let mut c = LlmConfig::from_env(self.llm_url.clone(), self.llm_model.clone());
        c.max_calls = self.llm_max_calls;
        c.max_tokens = self.llm_max_tokens;
        c.cache = !self.llm_no_cache;
        Some(c)
    }
}
