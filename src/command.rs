//! Command mode (`fix --cmd 'python script.py args'`): any command as the judge instead of
//! pytest.
//!
//! - The command line is split into words like a POSIX shell splits them (blanks separate
//!   words; `'...'`, `"..."` and `\` quote), and then run directly (exec, no shell): no
//!   expansion, redirection, pipes or `;`, so nothing in the line is interpreted twice. Wrap
//!   it in `sh -c '...'` to have a shell.
//! - A first word `python`, `python3` or `python3.N` is the project's interpreter (the one
//!   pytest runs would use); its directory also goes first on `PATH`, so a `python` the
//!   command starts is that one too.
//! - It runs from the root (a dry run: from the scratch copy), with the runner's timeout,
//!   process-group and bytecode handling.
//! - Pass: exit status 0 and every output check ([`OutputChecks`]). A failure is read from
//!   stderr (a bare CPython traceback; the last one printed is the one that ended the
//!   process). A run that exits 0 but fails a check is a failure of its own kind,
//!   [`OUTPUT_CHECK_EXC`], with no location: no rule works on wrong output; the search over
//!   small edits does (one traced run of the command localizes it, see
//!   [`CommandJudge::run_traced`]), then the LLM fallback ([`OutputMismatch`] is the input of
//!   both).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use regex::bytes::Regex;

use crate::process::RunnerError;
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::traceback::{self, Failure, Outcome, TbStyle, When};
use crate::verdict::Verdict;

/// `exc_type` of a run that exited 0 and failed an output check.
pub const OUTPUT_CHECK_EXC: &str = "selfdebug.OutputCheckFailed";
/// `exc_type` the baseline run of a hung command raises where it was stuck (see
/// [`CommandJudge::run_hang`]); read as [`crate::plugin::TIMEOUT_EXC`], a hang.
pub const HANG_EXC: &str = "_selfdebug_trace.CommandTimeout";
/// `exc_type` of a run that exited non-zero without a traceback that can be read.
pub const COMMAND_FAILED_EXC: &str = "selfdebug.CommandFailed";

/// What a passing run must print (`--expect-stdout`, `--expect-stdout-regex`,
/// `--stderr-empty`).
#[derive(Debug, Clone, Default)]
pub struct OutputChecks {
    /// The exact bytes stdout must be, and the file they came from.
    pub expect_stdout: Option<(PathBuf, Vec<u8>)>,
    /// stdout must contain a match (anchor it with `^...$` and `(?s)` for the whole output).
    pub stdout_regex: Option<Regex>,
    /// Anything on stderr fails the run.
    pub stderr_empty: bool,
}

/// Why `--cmd`'s line is no command (bad input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("--cmd: the command is empty")]
    Empty,
    #[error("--cmd: unclosed single quote")]
    UnclosedSingleQuote,
    #[error("--cmd: unclosed double quote")]
    UnclosedDoubleQuote,
    #[error("--cmd: the command ends with a lone backslash")]
    LoneBackslash,
}

/// Why a command cannot run under selfdebug's wrapper (the tracer, the hang timer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untraceable {
    /// The first word (given) is not `python...`.
    #[error(
        "the search needs a Python command to trace (`python SCRIPT ARGS` or `python -m \
         MODULE ARGS`), and `{0}` is not the project's interpreter"
    )]
    NotPython(String),
    #[error(
        "the search traces `python SCRIPT ARGS` or `python -m MODULE ARGS` only, not a \
         command with other interpreter options or code given with -c"
    )]
    InterpreterOptions,
    #[error("selfdebug's private directory has a name that is not UTF-8")]
    PluginDirNotUtf8,
}

/// Why a wrapped run ([`CommandJudge::run_traced`], [`CommandJudge::run_hang`]) gave no run:
/// the command cannot be wrapped (nothing was run), or running it failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WrappedRunError {
    #[error(transparent)]
    Untraceable(#[from] Untraceable),
    #[error(transparent)]
    Runner(#[from] RunnerError),
}

/// The command that judges candidates.
#[derive(Debug, Clone)]
pub struct CommandJudge {
    /// As the user wrote it (for reports).
    pub line: String,
    pub argv: Vec<String>,
    pub checks: OutputChecks,
}

/// Why a run that exited 0 did not pass: what the LLM fallback is given, with the command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OutputMismatch {
    pub command: String,
    /// `expect_stdout`, `expect_stdout_regex` or `stderr_empty`.
    pub check: &'static str,
    /// The expected stdout, the regex, or empty (stderr_empty).
    pub expected: String,
    /// What the run printed on the checked stream.
    pub actual: String,
    /// `expected` or `actual` was cut to its first [`MISMATCH_CAP`] bytes.
    pub truncated: bool,
}

/// Bytes of each side an [`OutputMismatch`] keeps (the JSON and a model prompt stay small).
pub const MISMATCH_CAP: usize = 16 << 10;

impl OutputMismatch {
    /// One line for the report.
    pub fn describe(&self) -> String {
        match self.check {
            "expect_stdout" => format!(
                "the command exited 0 but its stdout differs from --expect-stdout (first \
                 difference at byte {})",
                first_difference(self.expected.as_bytes(), self.actual.as_bytes())
            ),
            "expect_stdout_regex" => format!(
                "the command exited 0 but its stdout has no match for --expect-stdout-regex \
                 `{}`",
                self.expected
            ),
            _ => format!(
                "the command exited 0 but printed to stderr (--stderr-empty): {}",
                crate::traceback::first_line(&self.actual).trim()
            ),
        }
    }
}

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl CommandJudge {
    /// Splits `line` (see the module docs). An empty line or an unclosed quote is bad input.
    pub fn new(line: &str, checks: OutputChecks) -> Result<CommandJudge, CommandError> {
        let argv = split_words(line)?;
        if argv.is_empty() {
            return Err(CommandError::Empty);
        }
        Ok(CommandJudge {
            line: line.to_string(),
            argv,
            checks,
        })
    }

    /// The program to start and its arguments: `python...` becomes the interpreter.
    pub fn program(&self, python: &Interpreter) -> (PathBuf, Vec<String>) {
        let first = &self.argv[0];
        let program = if is_python_word(first) {
            python.path.clone()
        } else {
            PathBuf::from(first)
        };
        (program, self.argv[1..].to_vec())
    }

    /// Runs the command once in `spec.cwd` (with `spec.env` on top of the interpreter's
    /// `PATH`). The result is shaped as a [`PytestRun`] so that the loop's bookkeeping is the
    /// same for both judges; read it with [`CommandJudge::verdict`].
    pub fn run(&self, python: &Interpreter, spec: &RunSpec) -> Result<PytestRun, RunnerError> {
        let (program, args) = self.program(python);
        let mut spec = spec.clone();
        spec.env.push(("PATH".into(), path_with(python)));
        let run = runner::run_program(&program, &args, &spec)?;
        Ok(PytestRun::of(run, Vec::new(), self.argv.clone(), None))
    }

    /// Runs the command once under selfdebug's line tracer (`_selfdebug_trace` in the plugin
    /// directory `plugin_dir`), the lines of the project going to `out` as the coverage
    /// plugin writes them. Only `python SCRIPT ARGS` and `python -m MODULE ARGS` can be traced:
    /// anything else is [`WrappedRunError::Untraceable`], without a run. The script sees the `sys.argv`,
    /// `sys.path[0]` and `__main__` it sees untraced, and its exit status is its own.
    pub fn run_traced(
        &self,
        python: &Interpreter,
        spec: &RunSpec,
        plugin_dir: &Path,
        out: &Path,
    ) -> Result<PytestRun, WrappedRunError> {
        let args = self.traced_args(plugin_dir)?;
        let mut spec = spec.clone();
        spec.env
            .push(("SELFDEBUG_COVER_OUT".into(), out.as_os_str().to_os_string()));
        let root = spec.cwd.clone().into_os_string();
        spec.env.push(("SELFDEBUG_COVER_ROOT".into(), root));
        spec.env.push(("PATH".into(), path_with(python)));
        let run = runner::run_program(&python.path, &args, &spec)?;
        Ok(PytestRun::of(run, Vec::new(), self.argv.clone(), None))
    }

    /// The interpreter's arguments for [`CommandJudge::run_traced`]: `-c CODE` and the
    /// command's own words after `python`; why not, for a command that cannot be traced.
    pub fn traced_args(&self, plugin_dir: &Path) -> Result<Vec<String>, Untraceable> {
        self.wrapped_args(plugin_dir, "")
    }

    /// Runs the command (the baseline run) under the same wrapper as
    /// [`CommandJudge::run_traced`] but untraced: after `limit` an interval timer raises
    /// [`HANG_EXC`] inside the stuck code, so the traceback on stderr names the line it was
    /// stuck at ([`CommandJudge::verdict`] reads it as a hang, [`crate::plugin::TIMEOUT_EXC`]);
    /// any other run reads as the unwrapped one (the wrapper's frames are left out of an
    /// uncaught exception's traceback).
    /// `flag` is the option that set the limit (for the message). `spec.timeout` must leave
    /// the timer room to fire. A command that cannot be wrapped is
    /// [`WrappedRunError::Untraceable`], not run.
    pub fn run_hang(
        &self,
        python: &Interpreter,
        spec: &RunSpec,
        plugin_dir: &Path,
        limit: std::time::Duration,
        flag: &str,
    ) -> Result<PytestRun, WrappedRunError> {
        let flag = serde_json::to_string(flag).unwrap_or_else(|_| "\"\"".into());
        let extra = format!(", {}, {flag}", limit.as_secs_f64());
        let args = self.wrapped_args(plugin_dir, &extra)?;
        let mut spec = spec.clone();
        spec.env.push(("PATH".into(), path_with(python)));
        let run = runner::run_program(&python.path, &args, &spec)?;
        Ok(PytestRun::of(run, Vec::new(), self.argv.clone(), None))
    }

    /// `-c CODE` calling `run_command(sys.argv[1:]EXTRA)`, and the command's own words.
    fn wrapped_args(&self, plugin_dir: &Path, extra: &str) -> Result<Vec<String>, Untraceable> {
        let first = &self.argv[0];
        if !is_python_word(first) {
            return Err(Untraceable::NotPython(first.clone()));
        }
        let rest = &self.argv[1..];
        match rest.first().map(String::as_str) {
            Some("-m") if rest.len() >= 2 => {}
            Some(w) if !w.starts_with('-') => {}
            _ => return Err(Untraceable::InterpreterOptions),
        }
        // A JSON string is a Python string literal; a path that is not UTF-8 cannot be one.
        let dir = plugin_dir
            .to_str()
            .and_then(|d| serde_json::to_string(d).ok())
            .ok_or(Untraceable::PluginDirNotUtf8)?;
        let code = format!(
            "import sys; sys.path.insert(0, {dir}); import {} as t; del sys.path[0]; \
             t.run_command(sys.argv[1:]{extra})",
            crate::plugin::TRACE_MODULE
        );
        let mut args = vec!["-c".to_string(), code];
        args.extend(rest.iter().cloned());
        Ok(args)
    }

    /// Reads one run: `Green` for exit 0 with every check met; else one failure (the
    /// traceback on stderr, [`COMMAND_FAILED_EXC`], or [`OUTPUT_CHECK_EXC`]).
    pub fn verdict(&self, run: &PytestRun, root: &Path) -> Verdict {
        if run.timed_out {
            return Verdict::TimedOut;
        }
        match run.exit_code {
            Some(0) => match self.mismatch(run) {
                None => Verdict::Green,
                Some(m) => Verdict::Failed(vec![self.failure(OUTPUT_CHECK_EXC, m.describe())]),
            },
            code => Verdict::Failed(vec![self.crash(run, code, root)]),
        }
    }

    /// The first output check a run fails (`None`: all hold, or none was asked for).
    pub fn mismatch(&self, run: &PytestRun) -> Option<OutputMismatch> {
        let text = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(MISMATCH_CAP)]).into_owned();
        let c = &self.checks;
        let mismatch = |check, expected: &[u8], actual: &[u8]| OutputMismatch {
            command: self.line.clone(),
            check,
            expected: text(expected),
            actual: text(actual),
            truncated: expected.len().max(actual.len()) > MISMATCH_CAP,
        };
        if let Some((_, want)) = &c.expect_stdout {
            if run.stdout != *want {
                return Some(mismatch("expect_stdout", want, &run.stdout));
            }
        }
        if let Some(re) = &c.stdout_regex {
            if !re.is_match(&run.stdout) {
                return Some(mismatch(
                    "expect_stdout_regex",
                    re.as_str().as_bytes(),
                    &run.stdout,
                ));
            }
        }
        if c.stderr_empty && !run.stderr.is_empty() {
            return Some(mismatch("stderr_empty", b"", &run.stderr));
        }
        None
    }

    /// The failure of a run that did not exit 0: the last traceback on stderr, located in the
    /// project; without one, a failure that says how the command ended.
    fn crash(&self, run: &PytestRun, code: Option<i32>, root: &Path) -> Failure {
        let parsed = traceback::parse(&run.stderr, root).ok();
        if let Some(mut f) = parsed.and_then(|p| p.failures.into_iter().last()) {
            f.headline = Some(self.headline());
            // A hung baseline: the same failure as a test stopped by the per-test limit.
            if f.exc_type == HANG_EXC {
                f.exc_type = crate::plugin::TIMEOUT_EXC.to_string();
            }
            return f;
        }
        let how = match (code, run.signal) {
            (Some(n), _) => format!("the command exited with status {n}"),
            (None, Some(sig)) => format!("the command was killed by signal {sig}"),
            (None, None) => "the command ended without an exit status".to_string(),
        };
        let last = String::from_utf8_lossy(&run.stderr)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| format!(": {}", l.trim()))
            .unwrap_or_default();
        self.failure(
            COMMAND_FAILED_EXC,
            format!("{how} and printed no Python traceback{last}"),
        )
    }

    fn failure(&self, exc_type: &str, msg: String) -> Failure {
        Failure {
            test: None,
            when: When::Unknown,
            outcome: Outcome::Error,
            headline: Some(self.headline()),
            style: TbStyle::Native,
            exc_type: exc_type.to_string(),
            msg,
            frames: Vec::new(),
            chain: Vec::new(),
            sub_exceptions: Vec::new(),
            location: None,
            rejected_frames: Vec::new(),
            summary: None,
        }
    }

    /// Every failure of the command carries this headline: the loop keys failures by test or
    /// headline, and the command is the one "test".
    pub fn headline(&self) -> String {
        format!("command: {}", self.line)
    }
}

/// `python`, `python3`, `python3.12`: the project's interpreter.
fn is_python_word(w: &str) -> bool {
    let Some(rest) = w.strip_prefix("python") else {
        return false;
    };
    rest.is_empty()
        || rest == "3"
        || rest
            .strip_prefix("3.")
            .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

/// `PATH` with the interpreter's directory first.
fn path_with(python: &Interpreter) -> OsString {
    let mut dirs: Vec<PathBuf> = python
        .path
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// POSIX shell word splitting without expansions: blanks separate words, `'...'` is literal,
/// `"..."` keeps `\"`, `\\`, `\$` and `` \` `` as escapes, `\` outside quotes escapes the next
/// character. An unclosed quote or a trailing `\` is an error.
pub fn split_words(line: &str) -> Result<Vec<String>, CommandError> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(CommandError::UnclosedSingleQuote),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => cur.push(e),
                            Some('\n') => {}
                            Some(o) => {
                                cur.push('\\');
                                cur.push(o);
                            }
                            None => return Err(CommandError::UnclosedDoubleQuote),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(CommandError::UnclosedDoubleQuote),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(e) => {
                    in_word = true;
                    cur.push(e);
                }
                None => return Err(CommandError::LoneBackslash),
            },
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        let w = |s: &str| split_words(s).unwrap();
        assert_eq!(w("python  script.py a"), ["python", "script.py", "a"]);
        assert_eq!(
            w("python -c 'print(1 + 2)'"),
            ["python", "-c", "print(1 + 2)"]
        );
        assert_eq!(
            w(r#"echo "a \"b\" \$x \n" c\ d ''"#),
            ["echo", r#"a "b" $x \n"#, "c d", ""]
        );
        assert_eq!(w("a'b'\"c\"d"), ["abcd"]);
        assert_eq!(w("   "), Vec::<String>::new());
        for bad in ["'open", "\"open", "trailing\\"] {
            assert!(split_words(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn python_words_are_the_interpreter() {
        for w in ["python", "python3", "python3.12"] {
            assert!(is_python_word(w), "{w}");
        }
        for w in [
            "python2",
            "pythonx",
            "python3.",
            "python3.1a",
            "/usr/bin/python3",
            "py",
        ] {
            assert!(!is_python_word(w), "{w}");
        }
    }
}
