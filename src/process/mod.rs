//! The layer under every run: starting a child process and ending it, the interrupt flags,
//! temp dirs, and the tool's private files. It knows nothing of pytest, interpreters or
//! bytecode, and imports nothing of the crate: [`crate::runner`] and the modules it uses
//! ([`crate::bytecode`], [`crate::interpreter_cache`], [`crate::plugin`], [`crate::sandbox`],
//! [`crate::venv`], [`crate::worker`]) all build on it, so none of them needs the runner.
//!
//! # Process handling
//!
//! The child starts in its own process group. On timeout (or when [`install_interrupt_handler`]
//! saw Ctrl-C) the whole group is killed with `SIGKILL`, so subprocesses a test spawned die too.
//! Leftovers of a run that ended normally (a test's forgotten background process) are killed
//! the same way: on Linux the exited leader is kept as a zombie (`waitid(WNOWAIT)`) while the
//! group is killed, so its id cannot have been reused by then.
//!
//! On Linux every child also gets `PR_SET_PDEATHSIG(SIGKILL)`: when selfdebug itself dies
//! (even by SIGKILL, when nothing of ours runs any more) the pytest it started dies with it
//! instead of running on with a candidate or a probe in the file. The signal fires when the
//! *thread* that spawned the child exits; [`run_command`] waits for the child in the thread
//! that spawned it, so that thread always outlives it.
//!
//! # Temp dirs
//!
//! [`TempDir`]s are named `{prefix}-{pid}-{n}-{nanos}`. A run killed with SIGKILL cannot remove
//! its own; [`remove_stale_temp_dirs_with`] (called when a run starts) removes the
//! `selfdebug-*` ones of ours whose process is gone.
//!
//! # Private files
//!
//! Caches live under [`cache_home`], in directories [`private_dir`] made ours alone (a cache
//! others can write would let them plant bytecode or plugin code that we run), and are written
//! with [`write_private`], atomically, so a concurrent run never reads half a file.

mod child;
mod error;
mod interrupt;
mod private;
mod temp_dir;

pub use child::{die_with_parent, run_command, CommandRun};
pub(crate) use child::{prepare_child, OUTPUT_CAP};
pub use error::RunnerError;
pub use interrupt::{install_interrupt_handler, interrupt, interrupted, stop_this_thread_with};
pub use private::{cache_home, private_dir, write_private};
pub use temp_dir::{remove_stale_temp_dirs_with, TempDir};
