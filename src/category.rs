//! Failure categories (the original design's): environment and dependency failures are not
//! code bugs, so they are reported with a concrete suggestion instead of being patched; the
//! others are worked on, each with its own attempt budget.

use std::collections::BTreeMap;
use std::path::Path;

use crate::rules::Category;
use crate::traceback::Failure;

/// Attempts per category before giving up on a failure (the original design's numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budgets(pub BTreeMap<Category, u32>);

impl Default for Budgets {
    fn default() -> Self {
        Budgets(BTreeMap::from([
            (Category::Environment, 1),
            (Category::Dependency, 2),
            (Category::Data, 2),
            (Category::Syntax, 3),
            (Category::Logic, 4),
            // No rule repairs a hang; it is reported with the frame it was stuck in.
            (Category::Timeout, 0),
            (Category::Unknown, 2),
        ]))
    }
}

/// A `--budget` value that is not `CATEGORY=N`; `spec` is the value as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error("--budget {spec}: expected CATEGORY=N, e.g. logic=6")]
    NoEquals { spec: String },
    #[error("--budget {spec}: unknown category (one of {})", category_names())]
    UnknownCategory { spec: String },
    #[error("--budget {spec}: N must be a whole number")]
    NotANumber { spec: String },
}

fn category_names() -> String {
    let all: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    all.join(", ")
}

impl Budgets {
    pub fn get(&self, c: Category) -> u32 {
        self.0.get(&c).copied().unwrap_or(2)
    }

    /// Applies `CATEGORY=N` overrides (`--budget logic=6`).
    pub fn set(&mut self, spec: &str) -> Result<(), BudgetError> {
        let spec_ = || spec.to_string();
        let (name, n) = spec
            .split_once('=')
            .ok_or_else(|| BudgetError::NoEquals { spec: spec_() })?;
        let cat = Category::from_word(name.trim())
            .ok_or_else(|| BudgetError::UnknownCategory { spec: spec_() })?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| BudgetError::NotANumber { spec: spec_() })?;
        self.0.insert(cat, n);
        Ok(())
    }
}

const ENVIRONMENT: &[&str] = &[
    "FileNotFoundError",
    "PermissionError",
    "IsADirectoryError",
    "NotADirectoryError",
    "FileExistsError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "ConnectionAbortedError",
    "BrokenPipeError",
    "TimeoutError",
    "gaierror",
    "MaxRetryError",
    "NewConnectionError",
    "OperationalError",
    // Network calls: urllib, socket (`socket.timeout` before 3.10), ssl, requests/urllib3.
    "URLError",
    "timeout",
    "SSLError",
    "SSLCertVerificationError",
    "SSLZeroReturnError",
    "SSLEOFError",
    "ReadTimeout",
    "ConnectTimeout",
    "ReadTimeoutError",
    "ConnectTimeoutError",
];

const DATA: &[&str] = &[
    "KeyError",
    "JSONDecodeError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
];

const SYNTAX: &[&str] = &["SyntaxError", "IndentationError", "TabError"];

const LOGIC: &[&str] = &[
    "TypeError",
    "AttributeError",
    "ZeroDivisionError",
    "IndexError",
    "NameError",
    "UnboundLocalError",
    "AssertionError",
    "ValueError",
    "RecursionError",
    "StopIteration",
    "NotImplementedError",
    "OverflowError",
];

/// The category of a failure, and for environment and dependency failures what the user
/// should do instead.
pub fn categorize(failure: &Failure, root: &Path) -> (Category, Option<String>) {
    categorize_in(failure, root, false)
}

/// [`categorize`] for a failure of a judge run under `--sandbox` (`sandboxed`): the same
/// categories, with reasons that name the sandbox when it is what refused.
pub fn categorize_in(
    failure: &Failure,
    root: &Path,
    sandboxed: bool,
) -> (Category, Option<String>) {
    if let Some((kind, text)) = denial(failure) {
        return (
            Category::Environment,
            Some(denial_reason(kind, &text, sandboxed)),
        );
    }
    let (category, reason) = categorize_plain(failure, root);
    if sandboxed && category == Category::Environment {
        let short = failure.exc_type.rsplit('.').next().unwrap_or("");
        let first = crate::traceback::first_line(&failure.msg);
        if short == "PermissionError" {
            return (category, Some(denial_reason(Denial::Access, first, true)));
        }
        if is_network(short) {
            return (category, Some(denial_reason(Denial::Network, first, true)));
        }
    }
    (category, reason)
}

/// What the operating system refused: a write, or the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Denial {
    Write,
    /// A `PermissionError` under the sandbox: a write outside it, or a file's permissions.
    Access,
    Network,
}

/// `errno` texts as Python prints them (`[Errno 30] Read-only file system: '/etc/x'`), each
/// a refusal by the system, never a bug a patch could fix: `--sandbox` makes them (the file
/// system is read-only outside the workspace, and there is no network), and so do read-only
/// mounts and offline machines.
const DENIALS: &[(&str, Denial)] = &[
    ("[Errno 30] Read-only file system", Denial::Write),
    ("[Errno 101] Network is unreachable", Denial::Network),
    (
        "[Errno -3] Temporary failure in name resolution",
        Denial::Network,
    ),
    ("[Errno -2] Name or service not known", Denial::Network),
    (
        "[Errno 99] Cannot assign requested address",
        Denial::Network,
    ),
];

/// A denial in the failure's own exception or in one that led to it (`raise X from err`, or
/// raised while handling it): code that wraps an `OSError` in its own error still failed
/// because the system refused.
fn denial(failure: &Failure) -> Option<(Denial, String)> {
    let mut messages = vec![failure.msg.as_str()];
    messages.extend(failure.chain.iter().map(|l| l.exception.msg.as_str()));
    for msg in messages {
        for line in msg.lines() {
            if let Some((_, kind)) = DENIALS.iter().find(|(text, _)| line.contains(text)) {
                return Some((*kind, line.trim().to_string()));
            }
        }
    }
    None
}

fn denial_reason(kind: Denial, what: &str, sandboxed: bool) -> String {
    let hint = match (kind, sandboxed) {
        (Denial::Write, true) => format!(
            "the sandbox refused a write ({what}): under --sandbox only the project, the temp \
             dir and the bytecode cache are writable; write under the project or pytest's \
             tmp_path, or run without --sandbox"
        ),
        (Denial::Access, _) => format!(
            "access was refused ({what}): under --sandbox only the project, the temp dir and \
             the bytecode cache are writable; write under the project or pytest's tmp_path, or \
             check the file's permissions"
        ),
        (Denial::Write, false) => format!(
            "the system refused a write ({what}): the file system or the file is not writable \
             here; make it writable, or write under the project or pytest's tmp_path"
        ),
        (Denial::Network, true) => format!(
            "the sandbox has no network ({what}): under --sandbox only a private loopback with \
             nothing listening is reachable; mock the service in the test, or run without \
             --sandbox"
        ),
        (Denial::Network, false) => format!(
            "the network is not reachable from here ({what}): connect the machine, or mock the \
             service in the test"
        ),
    };
    format!("{hint}; selfdebug does not patch environment problems")
}

/// Exception names of network failures (socket, urllib, ssl, requests/urllib3).
fn is_network(short: &str) -> bool {
    short.contains("Connection")
        || short == "gaierror"
        || short.contains("Timeout")
        || short == "timeout"
        || short.starts_with("SSL")
        || short == "URLError"
        || short.ends_with("RetryError")
}

fn categorize_plain(failure: &Failure, root: &Path) -> (Category, Option<String>) {
    let short = failure
        .exc_type
        .rsplit('.')
        .next()
        .unwrap_or(&failure.exc_type);
    let first = crate::traceback::first_line(&failure.msg);
    if failure.exc_type == crate::plugin::TIMEOUT_EXC {
        let place = failure
            .location
            .as_ref()
            .map(|l| {
                format!(
                    " It was stuck at {}:{}{}{}.",
                    l.file,
                    l.line,
                    l.func
                        .as_deref()
                        .map(|f| format!(" in {f}"))
                        .unwrap_or_default(),
                    l.code
                        .as_deref()
                        .map(|c| format!(": `{}`", c.trim()))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        // Command mode's hang names the flag that limited it (`--timeout` when given).
        let (what, flag) = if failure.test.is_none() {
            let flag = if failure.msg.contains("--timeout") {
                "--timeout"
            } else {
                "--test-timeout"
            };
            ("the command", flag)
        } else {
            ("the test", "--test-timeout")
        };
        return (
            Category::Timeout,
            Some(format!(
                "{first}.{place} An endless loop or a wait for something that never comes \
                 (a lock, a socket, input); if {what} is only slow, raise {flag}"
            )),
        );
    }
    if matches!(short, "ModuleNotFoundError" | "ImportError") {
        if let Some(module) = quoted_after(first, "No module named ") {
            let top = module.split('.').next().unwrap_or(&module).to_string();
            if !is_project_module(root, &top) {
                // The distribution from the table `--install-missing` uses (`yaml` is
                // PyYAML); a module it does not list is only a guess at its own name.
                let dist = crate::install::distribution(&top);
                let command = if dist == top {
                    format!("`python -m pip install {dist}`, or the package that provides it")
                } else {
                    format!("`python -m pip install {dist}`, the distribution that provides it")
                };
                return (
                    Category::Dependency,
                    Some(format!(
                        "the module `{module}` is not installed for this interpreter: install it \
                         ({command}) or add it to the project's dependencies"
                    )),
                );
            }
            return (Category::Logic, None);
        }
        if let Some(from) = first
            .split(" from '")
            .nth(1)
            .and_then(|r| r.split('\'').next())
        {
            let top = from.split('.').next().unwrap_or(from);
            if !is_project_module(root, top) {
                return (
                    Category::Dependency,
                    Some(format!(
                        "`{from}` does not provide what the code imports: the installed version \
                         may differ from the one the code was written for; check the pinned \
                         version"
                    )),
                );
            }
        }
        return (Category::Logic, None);
    }
    // A timeout raised with the project's own frames on the stack is the project's logic (a
    // result that never comes, a wait on the wrong thing) unless the traceback reaches the
    // outside world: a socket, a subprocess, a sleep in library code.
    if short == "TimeoutError" && failure.location.is_some() && !reaches_outside(failure) {
        return (Category::Logic, None);
    }
    if ENVIRONMENT.contains(&short) || short.ends_with("ConnectionError") {
        let hint = match short {
            "FileNotFoundError" => format!(
                "a file the code or test needs is missing ({first}): create it, or fix the path \
                 the test gives"
            ),
            "PermissionError" => {
                format!("the process may not access a file ({first}): check its permissions")
            }
            s if is_network(s) => {
                format!(
                    "a network service is unreachable ({first}): start it, or mock it in the test"
                )
            }
            _ => format!("the environment is not what the code expects ({first})"),
        };
        return (
            Category::Environment,
            Some(format!(
                "{hint}; selfdebug does not patch environment problems"
            )),
        );
    }
    if SYNTAX.contains(&short) {
        return (Category::Syntax, None);
    }
    if DATA.contains(&short) {
        return (Category::Data, None);
    }
    // A command that ran to its end and printed the wrong thing has a logic bug.
    if LOGIC.contains(&short) || failure.exc_type == crate::command::OUTPUT_CHECK_EXC {
        return (Category::Logic, None);
    }
    (Category::Unknown, None)
}

/// Library files whose frames mean a wait on the world outside the process.
const OUTSIDE_FILES: &[&str] = &[
    "socket.py",
    "ssl.py",
    "selectors.py",
    "subprocess.py",
    "asyncio/streams.py",
    "asyncio/subprocess.py",
    "asyncio/base_subprocess.py",
    "asyncio/selector_events.py",
    "asyncio/proactor_events.py",
    "http/client.py",
];

/// Library packages that talk to the network.
const OUTSIDE_PACKAGES: &[&str] = &[
    "urllib3",
    "requests",
    "httpx",
    "httpcore",
    "aiohttp",
    "anyio",
    "websockets",
    "grpc",
];

/// Whether a frame of the failure (or of an exception it chains from) outside the project is a
/// socket, a subprocess, network code or a sleep.
fn reaches_outside(failure: &Failure) -> bool {
    let chained = failure.chain.iter().flat_map(|c| c.exception.frames.iter());
    failure.frames.iter().chain(chained).any(|f| {
        let path = f.printed_file.replace('\\', "/");
        let library = f.resolved.is_none()
            || path.contains("/site-packages/")
            || path.contains("/dist-packages/");
        if !library {
            return false;
        }
        let parts: Vec<&str> = path.split('/').collect();
        OUTSIDE_FILES
            .iter()
            .any(|o| path.ends_with(&format!("/{o}")))
            || parts.iter().any(|p| OUTSIDE_PACKAGES.contains(p))
            || f.func.as_deref() == Some("sleep")
    })
}

/// `No module named 'a.b'` → `a.b`.
fn quoted_after(msg: &str, prefix: &str) -> Option<String> {
    let rest = msg.split(prefix).nth(1)?;
    let rest = rest.trim_start_matches('\'');
    Some(rest.split('\'').next()?.to_string())
}

/// A top-level package or module of the project itself (root or `src/` layout).
fn is_project_module(root: &Path, top: &str) -> bool {
    [root.to_path_buf(), root.join("src")].iter().any(|base| {
        base.join(top).join("__init__.py").is_file()
            || base.join(format!("{top}.py")).is_file()
            || base.join(top).is_dir()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(exc: &str, msg: &str) -> Failure {
        Failure {
            test: None,
            when: crate::traceback::When::Call,
            outcome: crate::traceback::Outcome::Failed,
            headline: None,
            style: crate::traceback::TbStyle::Long,
            exc_type: exc.into(),
            msg: msg.into(),
            frames: vec![],
            chain: vec![],
            sub_exceptions: vec![],
            location: None,
            rejected_frames: vec![],
            summary: None,
        }
    }

    /// Real pytest output of `fixtures/tracebacks/sandbox/test_denials.py` run under
    /// bubblewrap as `--sandbox` runs it (no network, `/` read-only).
    const SANDBOX_LOG: &str = include_str!("../fixtures/tracebacks/sandbox/bwrap.txt");

    #[test]
    fn sandbox_denials_are_the_environment() {
        let root = Path::new("/tmp/selfdebug-capture/sandbox");
        let parsed = crate::traceback::parse(SANDBOX_LOG.as_bytes(), root).unwrap();
        let got: Vec<(String, Category, String)> = parsed
            .failures
            .iter()
            .map(|f| {
                let (c, why) = categorize_in(f, root, true);
                let test = f.test.clone().unwrap().replace("test_denials.py::", "");
                (test, c, why.unwrap())
            })
            .collect();
        let write = "the sandbox refused a write ([Errno 30] Read-only file system: \
                     '/usr/selfdebug-test.txt'): under --sandbox only the project, the temp dir \
                     and the bytecode cache are writable; write under the project or pytest's \
                     tmp_path, or run without --sandbox; selfdebug does not patch environment \
                     problems";
        let net = |what: &str| {
            format!(
                "the sandbox has no network ({what}): under --sandbox only a private loopback \
                 with nothing listening is reachable; mock the service in the test, or run \
                 without --sandbox; selfdebug does not patch environment problems"
            )
        };
        let dns = "[Errno -3] Temporary failure in name resolution";
        assert_eq!(
            got,
            [
                (
                    "test_write_outside".into(),
                    Category::Environment,
                    write.to_string()
                ),
                // Wrapped in the project's own error: the cause is what counts.
                (
                    "test_wrapped".into(),
                    Category::Environment,
                    write.to_string()
                ),
                (
                    "test_unreachable".into(),
                    Category::Environment,
                    net("[Errno 101] Network is unreachable")
                ),
                ("test_dns".into(), Category::Environment, net(dns)),
                (
                    "test_urlopen".into(),
                    Category::Environment,
                    net(&format!("<urlopen error {dns}>"))
                ),
            ]
        );
        // Outside the sandbox the same refusals are the environment too, without naming it.
        let (c, why) = categorize(&parsed.failures[0], root);
        assert_eq!(c, Category::Environment);
        assert!(why
            .unwrap()
            .starts_with("the system refused a write ([Errno 30]"));
        let (c, why) = categorize(&parsed.failures[2], root);
        assert_eq!(c, Category::Environment);
        assert!(why
            .unwrap()
            .starts_with("the network is not reachable from here ([Errno 101]"));
        // A code bug is still one under the sandbox.
        let (c, why) = categorize_in(&failure("AttributeError", "x"), root, true);
        assert_eq!((c, why), (Category::Logic, None));
        let (c, why) = categorize_in(
            &failure(
                "PermissionError",
                "[Errno 13] Permission denied: '/etc/shadow'",
            ),
            root,
            true,
        );
        assert_eq!(c, Category::Environment);
        assert!(why
            .unwrap()
            .starts_with("access was refused ([Errno 13] Permission denied: '/etc/shadow')"));
    }

    #[test]
    fn categories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/shop")).unwrap();
        std::fs::write(dir.path().join("src/shop/__init__.py"), "").unwrap();
        let c = |e: &str, m: &str| categorize(&failure(e, m), dir.path()).0;
        assert_eq!(
            c("ModuleNotFoundError", "No module named 'requests'"),
            Category::Dependency
        );
        assert_eq!(
            c("ModuleNotFoundError", "No module named 'shop.cart'"),
            Category::Logic
        );
        assert_eq!(
            c(
                "ImportError",
                "cannot import name 'x' from 'numpy' (/venv/numpy/__init__.py)"
            ),
            Category::Dependency
        );
        assert_eq!(
            c("FileNotFoundError", "[Errno 2] No such file"),
            Category::Environment
        );
        assert_eq!(
            c("requests.exceptions.ConnectionError", "refused"),
            Category::Environment
        );
        for (exc, msg) in [
            (
                "urllib.error.URLError",
                "<urlopen error [Errno 111] Connection refused>",
            ),
            ("socket.timeout", "timed out"),
            ("TimeoutError", "timed out"),
            ("ssl.SSLCertVerificationError", "certificate verify failed"),
            ("ssl.SSLError", "[SSL] record layer failure"),
            ("requests.exceptions.ReadTimeout", "read timed out"),
        ] {
            assert_eq!(c(exc, msg), Category::Environment, "{exc}");
            let (_, hint) = categorize(&failure(exc, msg), Path::new("/nonexistent"));
            assert!(
                hint.unwrap()
                    .starts_with("a network service is unreachable"),
                "{exc}"
            );
        }
        // The advice names the distribution pip knows, from `--install-missing`'s table.
        let hint = |m: &str| {
            categorize(&failure("ModuleNotFoundError", m), dir.path())
                .1
                .unwrap()
        };
        assert_eq!(
            hint("No module named 'yaml'"),
            "the module `yaml` is not installed for this interpreter: install it (`python -m pip \
             install PyYAML`, the distribution that provides it) or add it to the project's \
             dependencies"
        );
        assert!(hint("No module named 'PIL.Image'").contains("`python -m pip install Pillow`"));
        assert!(hint("No module named 'requests'")
            .contains("(`python -m pip install requests`, or the package that provides it)"));
        assert_eq!(c("KeyError", "'price'"), Category::Data);
        // A timeout with the project's frames on the stack is logic, unless a frame outside
        // the project is a socket, a subprocess, network code or a sleep.
        let frame = |file: &str, resolved: bool, func: &str| crate::traceback::Frame {
            file: file.into(),
            printed_file: file.into(),
            resolved: resolved.then(|| format!("/p/{file}")),
            line: 1,
            func: Some(func.into()),
            code: None,
            caret: None,
        };
        let timeout = |frames: Vec<crate::traceback::Frame>| {
            let mut f = failure("TimeoutError", "");
            f.location = Some(crate::traceback::Location {
                file: "readings.py".into(),
                path: "/p/readings.py".into(),
                line: 1,
                func: None,
                code: None,
                caret: None,
                frame_index: 0,
                stale: None,
            });
            f.frames = frames;
            categorize(&f, dir.path()).0
        };
        let project = frame("readings.py", true, "first");
        let tasks = frame("/usr/lib/python3.11/asyncio/tasks.py", false, "wait_for");
        assert_eq!(timeout(vec![project.clone(), tasks]), Category::Logic);
        for outside in [
            frame("/usr/lib/python3.11/socket.py", false, "create_connection"),
            frame("/usr/lib/python3.11/subprocess.py", false, "wait"),
            frame("/usr/lib/python3.11/asyncio/tasks.py", false, "sleep"),
            frame("/v/lib/site-packages/httpx/_client.py", false, "send"),
        ] {
            assert_eq!(
                timeout(vec![project.clone(), outside.clone()]),
                Category::Environment,
                "{outside:?}"
            );
        }
        // No project frame: the environment's, as before.
        assert_eq!(c("TimeoutError", ""), Category::Environment);
        assert_eq!(c("SyntaxError", "expected ':'"), Category::Syntax);
        assert_eq!(c("AttributeError", "x"), Category::Logic);
        assert_eq!(c("shop.errors.PaymentError", "declined"), Category::Unknown);
        let mut b = Budgets::default();
        b.set("logic=6").unwrap();
        assert_eq!(b.get(Category::Logic), 6);
        let err = |spec: &str| b.clone().set(spec).unwrap_err().to_string();
        assert!(
            err("bogus=1").starts_with("--budget bogus=1: unknown category (one of environment, ")
        );
        assert_eq!(
            err("logic"),
            "--budget logic: expected CATEGORY=N, e.g. logic=6"
        );
        assert_eq!(err("logic=x"), "--budget logic=x: N must be a whole number");
    }
}
