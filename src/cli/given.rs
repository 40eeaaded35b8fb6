//! The declared settings ([`crate::config::declared`]) a command line gives, read from clap's
//! matches by each declaration's flag name, so that no code per setting stands between a flag
//! and the layer it fills (as ripgrep's flags `update` its low arguments).

use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory};

use crate::config::declared::{Declared, Kind, Raw, DECLARED};
use crate::config::Flags;
use crate::worker::Mode;

/// Puts into `flags` every declared setting whose flag the subcommand `name` has and `m`
/// holds: the value of a flag that takes one; for a switch the opposite of its default
/// (`--safe-only`, `--no-xdist`), and for its hidden `--no-` twin the default back
/// (`--no-safe-only` undoes the file's `safe-only = true`). The trailing pytest arguments are
/// the command's to rebase.
pub fn read(name: &str, m: &ArgMatches, flags: &mut Flags) {
    let cli = super::Cli::command();
    let Some(cmd) = cli.find_subcommand(name) else {
        return;
    };
    let id_of = |long: &str| {
        cmd.get_arguments()
            .find(|a| a.get_long() == Some(long))
            .map(|a| a.get_id().as_str().to_string())
    };
    for d in DECLARED {
        let Some(id) = d.flag.strip_prefix("--").and_then(id_of) else {
            continue;
        };
        let raw = match d.kind {
            Kind::Bool => switch(
                d,
                m,
                &id,
                d.flag
                    .strip_prefix("--")
                    .and_then(|l| id_of(&format!("no-{l}"))),
            ),
            Kind::Int { .. } => one::<u64>(m, &id).map(Raw::Int),
            Kind::Int32 { .. } => one::<u32>(m, &id).map(|n| Raw::Int(u64::from(n))),
            Kind::Str => one::<String>(m, &id).map(Raw::Str),
            Kind::Path | Kind::Python => one::<PathBuf>(m, &id).map(Raw::Path),
            Kind::Worker => one::<Mode>(m, &id).map(Raw::Worker),
            Kind::Budget => {
                flags.budget = m
                    .try_get_many::<String>(&id)
                    .ok()
                    .flatten()
                    .map_or_else(Vec::new, |specs| specs.cloned().collect());
                None
            }
            Kind::Strings | Kind::Select | Kind::ExtendSelect | Kind::Ignore | Kind::Exclude => {
                None
            }
        };
        if let Some(raw) = raw {
            flags.given.set_raw(d.key, raw, d.flag);
        }
    }
}

/// A switch given: the opposite of the default; its `--no-` twin given: the default.
fn switch(d: &Declared, m: &ArgMatches, id: &str, twin: Option<String>) -> Option<Raw> {
    let default = (d.default)() == Raw::Bool(true);
    if one::<bool>(m, id) == Some(true) {
        return Some(Raw::Bool(!default));
    }
    let twin = twin?;
    (one::<bool>(m, &twin) == Some(true)).then_some(Raw::Bool(default))
}

fn one<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Option<T> {
    m.try_get_one::<T>(id).ok().flatten().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::declared;

    fn flags_of(args: &[&str]) -> Flags {
        let m = super::super::Cli::command()
            .try_get_matches_from(args)
            .unwrap();
        let (name, sub) = m.subcommand().unwrap();
        let mut flags = Flags::default();
        read(name, sub, &mut flags);
        flags
    }

    /// Every declared flag of `fix` is read into its setting, with its value and its name.
    #[test]
    fn every_declared_flag_of_fix_reaches_the_layer() {
        let flags = flags_of(&[
            "selfdebug",
            "fix",
            "--all-or-nothing",
            "--allow-tests",
            "--audit-log",
            "a.log",
            "--backup-dir",
            "b",
            "--backup-max-age",
            "0",
            "--budget",
            "logic=6",
            "--budget",
            "data=1",
            "--install-missing",
            "--jobs",
            "3",
            "--llm",
            "--llm-max-calls",
            "2",
            "--llm-max-tokens",
            "9",
            "--llm-model",
            "m",
            "--llm-url",
            "u",
            "--max-attempts",
            "5",
            "--proof-repeats",
            "2",
            "--python",
            "py",
            "--safe-only",
            "--sandbox",
            "--search-time",
            "7",
            "--test-timeout",
            "8",
            "--time-budget",
            "99",
            "--timeout",
            "4",
            "--worker",
            "off",
            "--no-xdist",
        ]);
        for d in DECLARED {
            let by_flag = d.flag.starts_with("--") && !d.flag.starts_with("-- ");
            let kept = d.kind != Kind::Budget;
            if by_flag && kept {
                assert_eq!(
                    flags.given.raw(d.key).map(|r| r.1),
                    Some(d.flag),
                    "{}",
                    d.key
                );
            }
        }
        assert_eq!(flags.budget, ["logic=6", "data=1"]);
        assert_eq!(
            flags.given.get(&declared::XDIST),
            Some((false, "--no-xdist"))
        );
        assert_eq!(flags.given.get(&declared::JOBS), Some((Some(3), "--jobs")));
        assert_eq!(
            flags.given.get(&declared::PYTHON),
            Some((Some(PathBuf::from("py")), "--python"))
        );
        assert_eq!(
            flags.given.get(&declared::WORKER),
            Some((Mode::Off, "--worker"))
        );
        assert_eq!(
            flags.given.get(&declared::LLM_MAX_CALLS),
            Some((2, "--llm-max-calls"))
        );
    }

    #[test]
    fn a_no_twin_gives_the_default_back_and_nothing_given_is_absent() {
        let flags = flags_of(&["selfdebug", "fix", "--no-safe-only", "--no-allow-tests"]);
        assert_eq!(
            flags.given.get(&declared::SAFE_ONLY),
            Some((false, "--safe-only"))
        );
        assert_eq!(
            flags.given.get(&declared::ALLOW_TESTS),
            Some((false, "--allow-tests"))
        );
        assert_eq!(flags.given.get(&declared::ALL_OR_NOTHING), None);
        assert_eq!(flags.given.get(&declared::MAX_ATTEMPTS), None);
        assert!(flags.budget.is_empty());
        // probe reads the two it has.
        let flags = flags_of(&["selfdebug", "probe", "--timeout", "5", "--python", "p"]);
        assert_eq!(
            flags.given.get(&declared::TIMEOUT),
            Some((Some(5), "--timeout"))
        );
        assert!(flags.given.get(&declared::PYTHON).is_some());
    }
}
