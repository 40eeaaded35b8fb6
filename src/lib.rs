//! selfdebug: repairs failing Python code with pytest as the judge.
//!
//! Data flows one way: pytest output → [`traceback`] → located failure → facts ([`probe`]) →
//! candidate [`edit`] fixes → proof by pytest ([`session`]) → kept or rolled back
//! ([`journal`]) → [`report`]. `docs/architecture.md` in the repository has the whole design,
//! a map of these modules and the layering rule between them.
pub mod bytecode;
pub mod category;
pub mod cli;
pub mod command;
pub mod config;
pub mod edit;
pub mod exit;
pub mod install;
pub mod interpreter_cache;
pub mod journal;
pub mod llm;
pub mod localize;
pub mod mcp;
pub mod plan;
pub mod plugin;
pub mod probe;
pub mod process;
pub mod progress;
pub mod project;
pub mod pytest_args;
pub mod replay;
pub mod report;
pub mod rules;
pub mod runner;
pub mod sandbox;
pub mod scratch;
pub mod search;
pub mod session;
pub mod source;
pub mod status;
pub mod stdio;
pub mod suggest;
pub mod syntax;
pub mod trace_times;
pub mod traceback;
pub mod transform;
pub mod tried;
pub mod venv;
pub mod verdict;
pub mod worker;
pub mod xdist;
