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
    /// Puts what the `SELFDEBUG_LLM*` variables say into `flags` where no flag said it (the
    /// flags themselves are read by [`super::given`]); both win over the file's
    /// `[tool.selfdebug.llm]`.
    pub fn given(&self, flags: &mut Flags) {
        use crate::config::declared::{LLM_ENABLED, LLM_MODEL, LLM_URL};
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        if flags.given.get(&LLM_ENABLED).is_none() && llm::enabled_by_env() {
            flags.set_by(&LLM_ENABLED, true, "SELFDEBUG_LLM");
        }
        for (setting, var) in [
            (&LLM_URL, "SELFDEBUG_LLM_URL"),
            (&LLM_MODEL, "SELFDEBUG_LLM_MODEL"),
        ] {
            if flags.given.get(setting).is_none() {
                if let Some(v) = env(var) {
                    flags.set_by(setting, v, var);
                }
            }
        }
        flags.llm_cache = self.llm_no_cache.then_some(false);
    }
}
