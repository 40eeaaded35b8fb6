//! The `--llm*` flags of `fix` and the environment variables behind them.

use crate::config::Flags;
use crate::llm;

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
    /// Requests per run at most (default 6; answers from the cache are free).
    #[arg(long, value_name = "N", help_heading = HEADING)]
    pub llm_max_calls: Option<u32>,
    /// `max_tokens` of each request (default 2048).
    #[arg(long, value_name = "N", help_heading = HEADING,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub llm_max_tokens: Option<u32>,
    /// Neither read nor write the answer cache (~/.cache/selfdebug/llm/).
    #[arg(long, help_heading = HEADING)]
    pub llm_no_cache: bool,
}

impl LlmArgs {
    /// Puts what the flags and the `SELFDEBUG_LLM*` variables say (they win over the file's
    /// `[tool.selfdebug.llm]`) into `flags`, with the name that said each.
    pub fn given(&self, flags: &mut Flags) {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        flags.llm = if self.llm {
            Some((true, "--llm"))
        } else if llm::enabled_by_env() {
            Some((true, "SELFDEBUG_LLM"))
        } else {
            None
        };
        flags.llm_url = self
            .llm_url
            .clone()
            .map(|u| (u, "--llm-url"))
            .or_else(|| env("SELFDEBUG_LLM_URL").map(|u| (u, "SELFDEBUG_LLM_URL")));
        flags.llm_model = self
            .llm_model
            .clone()
            .map(|m| (m, "--llm-model"))
            .or_else(|| env("SELFDEBUG_LLM_MODEL").map(|m| (m, "SELFDEBUG_LLM_MODEL")));
        flags.llm_max_calls = self.llm_max_calls;
        flags.llm_max_tokens = self.llm_max_tokens;
        flags.llm_cache = self.llm_no_cache.then_some(false);
    }
}
