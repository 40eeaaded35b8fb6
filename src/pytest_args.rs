//! The user's pytest arguments (after `--`), checked before any run. selfdebug owns the output
//! format it reads and needs every test to run: options that would hide failures or stop the
//! session early are set aside (with a note), and options that run no test or wait for a person
//! are refused as bad input.

/// Options that make pytest run no test (or open a debugger on a closed stdin).
const REFUSED: &[&str] = &[
    "--collect-only",
    "--co",
    "--setup-only",
    "--setup-plan",
    "--fixtures",
    "--funcargs",
    "--fixtures-per-test",
    "--markers",
    "--help",
    "-h",
    "--version",
    "-V",
    "--pdb",
    "--trace",
    "--cache-show",
];

/// Long options set aside, and whether each takes a separate value.
const DROPPED_LONG: &[(&str, bool)] = &[
    ("--tb", true),
    ("--color", true),
    ("--exitfirst", false),
    ("--maxfail", true),
    ("--stepwise", false),
    ("--sw", false),
    ("--stepwise-skip", false),
    ("--sw-skip", false),
    ("--last-failed", false),
    ("--lf", false),
    ("--failed-first", false),
    ("--ff", false),
    ("--new-first", false),
    ("--nf", false),
];

/// Short options that take a value (the rest of the cluster, or the next argument).
const SHORT_WITH_VALUE: &[char] = &['k', 'm', 'p', 'o', 'c', 'r', 'n', 'W'];

/// A pytest argument that makes pytest run no test (as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunsNoTest {
    #[error(
        "pytest argument {0} runs no test (or waits for a person); selfdebug needs the tests to \
         run"
    )]
    Refused(String),
    /// A cluster of short options with `-h` in it.
    #[error("pytest argument {0} prints help and runs no test; selfdebug needs the tests to run")]
    Help(String),
}

/// The arguments to use and a note for each one set aside, or the refusal.
pub fn check(args: &[String]) -> Result<(Vec<String>, Vec<String>), RunsNoTest> {
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let name = a.split('=').next().unwrap_or(a);
        if REFUSED.contains(&name) {
            return Err(RunsNoTest::Refused(a.clone()));
        }
        if let Some(&(_, takes)) = DROPPED_LONG.iter().find(|(n, _)| *n == name) {
            let mut shown = a.clone();
            if takes && !a.contains('=') && i < args.len() {
                shown = format!("{a} {}", args[i]);
                i += 1;
            }
            notes.push(note(&shown));
            continue;
        }
        if a == "--" || a.starts_with("--") || !a.starts_with('-') || a.len() < 2 {
            kept.push(a.clone());
            continue;
        }
        // A cluster of short options: `-xq`, `-rN`, `-pno:terminal`, `-p no:terminal`.
        let chars: Vec<char> = a[1..].chars().collect();
        let mut out = String::new();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            if SHORT_WITH_VALUE.contains(&c) {
                let inline: String = chars[j + 1..].iter().collect();
                let (value, separate) = if inline.is_empty() && i < args.len() {
                    (args[i].clone(), true)
                } else {
                    (inline, false)
                };
                let dropped = c == 'r' || (c == 'p' && value.trim() == "no:terminal");
                if dropped {
                    notes.push(note(&format!("-{c} {value}")));
                } else {
                    if !out.is_empty() {
                        kept.push(format!("-{out}"));
                        out.clear();
                    }
                    if separate {
                        kept.push(format!("-{c}"));
                        kept.push(value.clone());
                    } else {
                        kept.push(format!("-{c}{value}"));
                    }
                }
                if separate {
                    i += 1;
                }
                j = chars.len();
                continue;
            }
            if c == 'x' {
                notes.push(note("-x"));
            } else if c == 'h' {
                return Err(RunsNoTest::Help(a.clone()));
            } else {
                out.push(c);
            }
            j += 1;
        }
        if !out.is_empty() {
            kept.push(format!("-{out}"));
        }
    }
    Ok((kept, notes))
}

/// Long options whose value may follow as a separate argument (it is no test selection).
const LONG_WITH_VALUE: &[&str] = &[
    "--ignore",
    "--ignore-glob",
    "--deselect",
    "--rootdir",
    "--confcutdir",
    "--basetemp",
    "--junitxml",
    "--junit-xml",
    "--log-file",
    "--import-mode",
    "--durations",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--override-ini",
    "--config-file",
    "--dist",
    "--numprocesses",
    "--timeout",
    "--capture",
    "--log-level",
    "--log-cli-level",
];

/// A selection narrower than the suite, widened: the same options without the test selectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Widened {
    /// The arguments for the whole suite of the same project (selectors and `-k` dropped).
    pub args: Vec<String>,
    /// The test files of the selected node ids, when every selector is a node id (`file::test`)
    /// and there is no `-k`: the files whose other tests are the likeliest to run the same
    /// code. `None`: the whole suite is where to look.
    pub files: Option<Vec<String>>,
}

/// The whole-suite selection for `args` (already [`check`]ed) when they select fewer tests than
/// the suite: node ids (`tests/a.py::test_x`), test files (`tests/a.py`) or `-k`. A directory
/// counts as a suite of its own (it is how a project names its suite), and `-m` is kept (markers
/// usually set whole classes of tests aside on purpose). `None` when nothing narrows.
pub fn widen(args: &[String]) -> Option<Widened> {
    let mut kept = Vec::new();
    let mut node_files: Vec<String> = Vec::new();
    let mut other_selector = false;
    let mut narrowed = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "-k" {
            narrowed = true;
            other_selector = true;
            i += 1;
            continue;
        }
        if a.starts_with("-k") && !a.starts_with("--") {
            narrowed = true;
            other_selector = true;
            continue;
        }
        if a.starts_with("--") {
            kept.push(a.clone());
            if !a.contains('=') && LONG_WITH_VALUE.contains(&a.as_str()) && i < args.len() {
                kept.push(args[i].clone());
                i += 1;
            }
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            kept.push(a.clone());
            // `-p xdist`: a short option taking its value from the next argument.
            let last = a.chars().last().unwrap_or('-');
            if a.len() == 2 && SHORT_WITH_VALUE.contains(&last) && i < args.len() {
                kept.push(args[i].clone());
                i += 1;
            }
            continue;
        }
        let path = a.split("::").next().unwrap_or(a);
        if a.contains("::") {
            narrowed = true;
            if !node_files.iter().any(|f| f == path) {
                node_files.push(path.to_string());
            }
        } else if path.ends_with(".py") {
            narrowed = true;
            other_selector = true;
        } else {
            // A directory (or anything else pytest takes as a path): kept as it is.
            kept.push(a.clone());
        }
    }
    narrowed.then(|| Widened {
        args: kept,
        files: (!other_selector).then_some(node_files),
    })
}

fn note(arg: &str) -> String {
    format!(
        "pytest argument `{arg}` set aside: selfdebug reads pytest's full report and needs every \
         test to run"
    )
}

/// Whether pytest arguments start xdist workers (`-n N`, `-nN`, `--numprocesses`, N not 0).
/// Such a run is never served by the warm worker (see [`crate::worker`]): xdist freezes
/// `sys.path` when its plugin is imported, in the server, and hands that copy to its own
/// workers, which then cannot import a project found through the run's directory.
pub fn starts_workers(args: &[String]) -> bool {
    let mut prev: Option<&str> = None;
    let mut n: Option<&str> = None;
    for a in args {
        let a = a.as_str();
        if matches!(prev, Some("-n") | Some("--numprocesses")) {
            n = Some(a);
        } else if let Some(v) = a.strip_prefix("--numprocesses=") {
            n = Some(v);
        } else if let Some(v) = a.strip_prefix("-n").filter(|v| !v.is_empty()) {
            n = Some(v);
        }
        prev = Some(a);
    }
    n.is_some_and(|v| v.trim() != "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_arguments_start_workers() {
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert!(starts_workers(&s(&["-n", "2"])));
        assert!(starts_workers(&s(&["-x", "-n4"])));
        assert!(starts_workers(&s(&["--numprocesses=auto"])));
        assert!(starts_workers(&s(&["--numprocesses", "3"])));
        assert!(!starts_workers(&s(&["-n", "0"])));
        assert!(!starts_workers(&s(&["-p", "no:xdist", "-x"])));
        assert!(!starts_workers(&s(&["--dist", "loadfile"])));
        assert!(!starts_workers(&s(&[])));
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn hides_nothing_and_stops_nothing() {
        let (kept, notes) = check(&s(&[
            "-p",
            "no:terminal",
            "--tb=no",
            "-rN",
            "-xq",
            "-k",
            "slow and x",
            "--maxfail",
            "2",
            "-pno:terminal",
            "-p",
            "xdist",
            "tests/a.py::t[1]",
            "-n",
            "2",
            "-vv",
        ]))
        .unwrap();
        assert_eq!(
            kept,
            s(&[
                "-q",
                "-k",
                "slow and x",
                "-p",
                "xdist",
                "tests/a.py::t[1]",
                "-n",
                "2",
                "-vv"
            ])
        );
        assert_eq!(notes.len(), 6, "{notes:?}");
        assert!(notes[0].contains("`-p no:terminal`"));
    }

    #[test]
    fn refuses_options_that_run_no_test() {
        for a in [
            "--collect-only",
            "--co",
            "--fixtures",
            "-h",
            "--pdb",
            "--version",
            "-qh",
        ] {
            let e = check(&s(&[a])).unwrap_err().to_string();
            assert!(e.contains(a), "{e}");
        }
    }

    #[test]
    fn widen_drops_selectors_and_keeps_options() {
        assert_eq!(widen(&s(&["-q", "tests", "-p", "xdist"])), None);
        assert_eq!(widen(&s(&["-m", "not slow"])), None);
        let w = widen(&s(&[
            "-q",
            "tests/a.py::T::test_x[1]",
            "--deselect",
            "tests/b.py::t",
            "tests/a.py::test_y",
            "-p",
            "xdist",
        ]))
        .unwrap();
        assert_eq!(
            w.args,
            s(&["-q", "--deselect", "tests/b.py::t", "-p", "xdist"])
        );
        assert_eq!(w.files, Some(s(&["tests/a.py"])));
        let w = widen(&s(&["-k", "total and not slow", "-vv"])).unwrap();
        assert_eq!((w.args, w.files), (s(&["-vv"]), None));
        let w = widen(&s(&["-ktotal", "tests/a.py"])).unwrap();
        assert_eq!((w.args, w.files), (s(&[]), None));
    }
}
