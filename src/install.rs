//! `fix --install-missing`: a `ModuleNotFoundError` for a module that is not part of the project
//! is answered once per distribution by `python -m pip install DIST` into the project's
//! interpreter. The import name is mapped to the distribution name by a small table
//! (`data/import-names.txt`: `yaml` → `PyYAML`, `cv2` → `opencv-python`, ...); a module not
//! listed is installed under its own name. Never done by default: dependency failures escalate.

use std::time::Duration;

use serde::Serialize;

use crate::runner::Interpreter;
use crate::traceback::Failure;

/// The import-name table, compiled in.
const TABLE: &str = include_str!("../data/import-names.txt");

/// pip may download and build: a generous limit, but not forever.
pub const PIP_TIMEOUT: Duration = Duration::from_secs(600);

/// One install, as reported in the JSON (`installed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Install {
    /// The top-level module that was missing.
    pub module: String,
    /// What was installed.
    pub distribution: String,
    /// pip exited 0.
    pub ok: bool,
    /// pip's last lines when it failed (empty when it succeeded).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub duration_ms: u64,
}

/// The distribution that provides import name `module` (its top-level part).
pub fn distribution(module: &str) -> String {
    let top = module.split('.').next().unwrap_or(module);
    TABLE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .find(|(import, _)| *import == top)
        .map_or_else(|| top.to_string(), |(_, dist)| dist.trim().to_string())
}

/// The missing top-level module of a `ModuleNotFoundError` (`No module named 'yaml.x'` →
/// `yaml`), when it is a name pip could install (a Python identifier).
pub fn missing_module(failure: &Failure) -> Option<String> {
    let short = failure.exc_type.rsplit('.').next().unwrap_or("");
    if short != "ModuleNotFoundError" {
        return None;
    }
    let rest = failure.msg.split("No module named ").nth(1)?;
    let name = rest.trim_start_matches(['\'', '"']);
    let name: String = name
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_');
    ok.then_some(name)
}

/// `python -m pip install DIST`, quietly, with the environment of the judge's runs (`env`).
pub fn pip_install(
    python: &Interpreter,
    module: &str,
    dist: &str,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Install {
    let mut cmd = std::process::Command::new(&python.path);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        dist,
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = crate::process::run_command(cmd, PIP_TIMEOUT);
    let (ok, detail, ms) = match run {
        Ok(r) => {
            let ok = r.exit_code == Some(0);
            let detail = if ok {
                String::new()
            } else if r.timed_out {
                format!("pip did not finish within {} s", PIP_TIMEOUT.as_secs())
            } else {
                let text = String::from_utf8_lossy(&r.stderr);
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                lines[lines.len().saturating_sub(5)..].join("\n")
            };
            (ok, detail, r.duration.as_millis() as u64)
        }
        Err(e) => (false, e.to_string(), 0),
    };
    Install {
        module: module.to_string(),
        distribution: dist.to_string(),
        ok,
        detail,
        duration_ms: ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_names_map_to_distributions() {
        assert_eq!(distribution("yaml"), "PyYAML");
        assert_eq!(distribution("sklearn.linear_model"), "scikit-learn");
        assert_eq!(distribution("PIL"), "Pillow");
        assert_eq!(distribution("bs4"), "beautifulsoup4");
        assert_eq!(distribution("cv2"), "opencv-python");
        assert_eq!(distribution("six"), "six");
    }
}
