//! The `--llm*` flags of `fix` and the environment variables behind them.

use crate::config::Flags;
use crate::llm;

use crate::config::declared::LLM_HEADING as HEADING;

/// The opt-in model fallback's flag that is no setting (off unless `--llm` or
/// `SELFDEBUG_LLM=1`; `--llm`, `--llm-url`, ... are declared in `config::declared`).
#[derive(clap::Args, Debug, Clone)]
pub struct LlmArgs {
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
