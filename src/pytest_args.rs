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

/// The arguments to use and a note for each one set aside, or the refusal message.
pub fn check(args: &[String]) -> Result<(Vec<String>, Vec<String>), String> {
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let name = a.split('=').next().unwrap_or(a);
        if REFUSED.contains(&name) {
            return Err(format!(
                "pytest argument {a} runs no test (or waits for a person); selfdebug needs the \
                 tests to run"
            ));
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
                return Err(format!(
                    "pytest argument {a} prints help and runs no test; selfdebug needs the \
                     tests to run"
                ));
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

fn note(arg: &str) -> String {
    format!(
        "pytest argument `{arg}` set aside: selfdebug reads pytest's full report and needs every \
         test to run"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let e = check(&s(&[a])).unwrap_err();
            assert!(e.contains(a), "{e}");
        }
    }
}
