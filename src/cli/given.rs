//! The declared settings ([`crate::config::declared`]) on the command line: their clap
//! arguments, built from the declarations ([`args`]), and the values given, read from clap's
//! matches by each declaration's flag name ([`read`]), so that no code per setting stands
//! between a flag and the layer it fills (as ripgrep's flags `update` its low arguments).

use std::path::PathBuf;

use clap::{value_parser, Arg, ArgAction, ArgMatches, Command, CommandFactory};

use crate::config::declared::{self, Declared, Help, Kind, Raw, DECLARED};
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
            Kind::Bool if d.key == declared::INSTALL_MISSING.key => {
                let given: Option<Vec<String>> = m
                    .try_get_many::<String>(&id)
                    .ok()
                    .flatten()
                    .map(|v| v.cloned().collect());
                given.map(|values| {
                    flags.install_dists = values.into_iter().filter(|v| !v.is_empty()).collect();
                    Raw::Bool(true)
                })
            }
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
            Kind::KeepAlive => one::<std::time::Duration>(m, &id).map(|d| Raw::Int(d.as_secs())),
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

/// The declared settings' flags of a command, as the last field of its arguments: clap adds
/// them (see [`args`]) after the command's own.
macro_rules! declared_flags {
    ($($ty:ident = $name:literal),*) => {$(
        #[derive(Debug, Clone, Copy)]
        pub struct $ty;

        impl clap::FromArgMatches for $ty {
            fn from_arg_matches(_: &ArgMatches) -> Result<Self, clap::Error> {
                Ok($ty)
            }
            fn update_from_arg_matches(&mut self, _: &ArgMatches) -> Result<(), clap::Error> {
                Ok(())
            }
        }

        impl clap::Args for $ty {
            fn augment_args(cmd: Command) -> Command {
                args(cmd, $name)
            }
            fn augment_args_for_update(cmd: Command) -> Command {
                args(cmd, $name)
            }
        }
    )*};
}

declared_flags!(FixFlags = "fix", ProbeFlags = "probe");

/// Adds to `cmd` (the subcommand `name` with its own arguments) the argument of every declared
/// setting it takes, each after the flag its [`Help`] names, then numbers the options in that
/// order: `--help` lists them so.
fn args(mut cmd: Command, name: &str) -> Command {
    let mut order: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let mut pending: Vec<(&Declared, &Help, &str)> = DECLARED
        .iter()
        .filter_map(|d| {
            let help = d.help.as_ref()?;
            let after = if name == "fix" {
                Some(help.after)
            } else {
                help.probe_after
            }?;
            Some((d, help, after))
        })
        .collect();
    // A flag may follow another declared one: place those whose predecessor is placed.
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|&(d, help, after)| {
            let Some(mut at) = order.iter().position(|l| l == after) else {
                return true;
            };
            if order.get(at + 1) == Some(&format!("no-{after}")) {
                at += 1;
            }
            for arg in flag_args(d, help).into_iter().rev() {
                order.insert(at + 1, arg.get_long().unwrap_or_default().to_string());
                cmd = std::mem::take(&mut cmd).arg(arg);
            }
            false
        });
        // A predecessor that is no flag of `cmd`: the flags are left out, and the test of
        // `--help` says which.
        if pending.len() == before {
            break;
        }
    }
    for (i, long) in order.iter().enumerate() {
        let Some(id) = cmd
            .get_arguments()
            .find(|a| a.get_long() == Some(long.as_str()))
            .map(|a| a.get_id().clone())
        else {
            continue;
        };
        cmd = cmd.mut_arg(id, |a| a.display_order(i));
    }
    cmd
}

/// The flag of `d` as clap reads it (the id as clap's derive names a field: `max_attempts`),
/// and its hidden `--no-` twin if it has one.
fn flag_args(d: &Declared, help: &Help) -> Vec<Arg> {
    let long = d.flag.trim_start_matches('-');
    let id = long.replace('-', "_");
    let value_name = match help.value_name {
        "" => id.to_uppercase(),
        v => v.to_string(),
    };
    let arg = Arg::new(id.clone())
        .long(long)
        .help(help.text)
        .value_name(value_name)
        .help_heading(help.heading);
    let min = |m: i64| u64::try_from(m).unwrap_or(0);
    let arg = match d.kind {
        // `--install-missing` alone, or `--install-missing=DIST` (repeatable): a distribution
        // outside the known table that it may install.
        Kind::Bool if d.key == declared::INSTALL_MISSING.key => arg
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("")
            .action(ArgAction::Append)
            .value_parser(value_parser!(String)),
        Kind::Bool => arg.action(ArgAction::SetTrue),
        Kind::Int { min: m } if help.checked => {
            arg.value_parser(value_parser!(u64).range(min(m)..))
        }
        Kind::Int { .. } => arg.value_parser(value_parser!(u64)),
        Kind::Int32 { min: m } if help.checked => arg.value_parser(value_parser!(u32).range(m..)),
        Kind::Int32 { .. } => arg.value_parser(value_parser!(u32)),
        Kind::Str => arg.value_parser(value_parser!(String)),
        Kind::Path | Kind::Python => arg.value_parser(value_parser!(PathBuf)),
        Kind::Worker => arg.value_parser(super::parse_worker),
        Kind::KeepAlive => arg.value_parser(super::parse_keepalive),
        Kind::Budget => arg
            .action(ArgAction::Append)
            .value_parser(value_parser!(String)),
        Kind::Strings | Kind::Select | Kind::ExtendSelect | Kind::Ignore | Kind::Exclude => arg,
    };
    let arg = match d.kind {
        Kind::Bool | Kind::Budget => arg,
        _ => arg.action(ArgAction::Set),
    };
    if !help.twin {
        return vec![arg];
    }
    let twin = format!("no_{id}");
    vec![
        arg.overrides_with(twin.clone()),
        Arg::new(twin.clone())
            .long(format!("no-{long}"))
            .value_name(twin.to_uppercase())
            .action(ArgAction::SetTrue)
            .hide(true)
            .overrides_with(id)
            .help_heading(help.heading),
    ]
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
            "--worker-keepalive",
            "10m",
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
        assert_eq!(
            flags.given.get(&declared::WORKER_KEEPALIVE),
            Some((std::time::Duration::from_secs(600), "--worker-keepalive"))
        );
    }

    /// `--install-missing` alone is the switch; `=DIST` (repeatable) also names a distribution.
    #[test]
    fn install_missing_takes_an_optional_distribution() {
        let flags = flags_of(&["selfdebug", "fix", "--install-missing"]);
        let on = Some((true, "--install-missing"));
        assert_eq!(flags.given.get(&declared::INSTALL_MISSING), on);
        assert!(flags.install_dists.is_empty());
        let flags = flags_of(&[
            "selfdebug",
            "fix",
            "--install-missing=acme-db",
            "--install-missing=acme=acme-tools",
            "--",
            "-k",
            "x",
        ]);
        assert_eq!(flags.given.get(&declared::INSTALL_MISSING), on);
        assert_eq!(flags.install_dists, ["acme-db", "acme=acme-tools"]);
        assert!(flags_of(&["selfdebug", "fix"])
            .given
            .get(&declared::INSTALL_MISSING)
            .is_none());
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
            Some((Some(std::time::Duration::from_secs(5)), "--timeout"))
        );
        assert!(flags.given.get(&declared::PYTHON).is_some());
    }
}
