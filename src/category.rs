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

impl Budgets {
    pub fn get(&self, c: Category) -> u32 {
        self.0.get(&c).copied().unwrap_or(2)
    }

    /// Applies `CATEGORY=N` overrides (`--budget logic=6`).
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let (name, n) = spec
            .split_once('=')
            .ok_or_else(|| format!("--budget {spec}: expected CATEGORY=N, e.g. logic=6"))?;
        let cat = Category::from_name(name.trim()).ok_or_else(|| {
            let all: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
            format!(
                "--budget {spec}: unknown category (one of {})",
                all.join(", ")
            )
        })?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("--budget {spec}: N must be a whole number"))?;
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
    let short = failure
        .exc_type
        .rsplit('.')
        .next()
        .unwrap_or(&failure.exc_type);
    let first = failure.msg.lines().next().unwrap_or("");
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
        return (
            Category::Timeout,
            Some(format!(
                "{first}.{place} An endless loop or a wait for something that never comes \
                 (a lock, a socket, input); if the test is only slow, raise --test-timeout"
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
    if ENVIRONMENT.contains(&short) || short.ends_with("ConnectionError") {
        let hint = match short {
            "FileNotFoundError" => format!(
                "a file the code or test needs is missing ({first}): create it, or fix the path \
                 the test gives"
            ),
            "PermissionError" => {
                format!("the process may not access a file ({first}): check its permissions")
            }
            s if s.contains("Connection")
                || s == "gaierror"
                || s.contains("Timeout")
                || s == "timeout"
                || s.starts_with("SSL")
                || s == "URLError"
                || s.ends_with("RetryError") =>
            {
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
        assert_eq!(c("SyntaxError", "expected ':'"), Category::Syntax);
        assert_eq!(c("AttributeError", "x"), Category::Logic);
        assert_eq!(c("shop.errors.PaymentError", "declined"), Category::Unknown);
        let mut b = Budgets::default();
        b.set("logic=6").unwrap();
        assert_eq!(b.get(Category::Logic), 6);
        assert!(b.set("bogus=1").is_err());
        assert!(b.set("logic").is_err());
    }
}
