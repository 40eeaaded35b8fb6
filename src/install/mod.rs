//! `fix --install-missing`: a `ModuleNotFoundError` for a module that is not part of the project
//! is answered once per distribution by `python -m pip install DIST` into the project's
//! interpreter, and DIST is added to the project's declared dependencies ([`declare`]) as a
//! patch. Only known distributions are installed: the import name is looked up in a table
//! (`data/import-names.txt`: `yaml` → `PyYAML`, `requests`, ...), or the user names one with
//! `--install-missing=DIST`. An import name that is neither is never installed from the index
//! under that name: an internal package's name may be registered there by anyone (dependency
//! confusion). Never done by default: dependency failures escalate.

pub mod declare;

use std::time::Duration;

use serde::Serialize;

use crate::runner::Interpreter;
use crate::traceback::Failure;

/// The import-name table, compiled in.
const TABLE: &str = include_str!("../../data/import-names.txt");

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
    /// The file the requirement was added to (a patch of the report), or already declared
    /// in; absent when the project declares its dependencies nowhere selfdebug edits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
}

/// The distribution that provides import name `module` (its top-level part): the table's, else
/// the module's own name (a guess, for advice; [`allowed`] says what may be installed).
pub fn distribution(module: &str) -> String {
    let top = module.split('.').next().unwrap_or(module);
    known(top).unwrap_or_else(|| top.to_string())
}

/// The table's distribution for top-level import name `top`.
fn known(top: &str) -> Option<String> {
    TABLE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once(' ').unwrap_or((l, l)))
        .find(|(import, _)| *import == top)
        .map(|(_, dist)| dist.trim().to_string())
}

/// The distribution `--install-missing` may install for missing module `module`: the table's,
/// else one named with `--install-missing=DIST` (`explicit`) whose name is the module's as the
/// index compares names, or given as `MODULE=DIST`. `Err`: why nothing is installed.
pub fn allowed(module: &str, explicit: &[String]) -> Result<String, String> {
    let top = module.split('.').next().unwrap_or(module);
    let named = explicit.iter().find_map(|spec| match spec.split_once('=') {
        Some((m, dist)) => (m.trim() == top).then(|| dist.trim().to_string()),
        None => (declare::normalize(spec) == declare::normalize(top)).then(|| spec.clone()),
    });
    if let Some(dist) = named.or_else(|| known(top)) {
        return Ok(dist);
    }
    Err(format!(
        "`{top}` is not in selfdebug's table of known distributions: --install-missing does \
         not install an unknown import name from the package index (anyone may have \
         registered that name there); if `{top}` is the distribution you mean, name it: \
         --install-missing={top} (or --install-missing={top}=DIST)"
    ))
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
        declared: None,
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
        assert_eq!(distribution("acme_internal"), "acme_internal");
    }

    #[test]
    fn only_known_or_named_distributions_are_allowed() {
        assert_eq!(allowed("yaml.constructor", &[]), Ok("PyYAML".into()));
        assert_eq!(allowed("requests", &[]), Ok("requests".into()));
        assert!(allowed("acme_internal", &[]).unwrap_err().contains(
            "--install-missing does not install an unknown import name from the package index"
        ));
        let named = ["Acme-Internal".to_string()];
        assert_eq!(allowed("acme_internal", &named), Ok("Acme-Internal".into()));
        let mapped = ["acme=acme-tools".to_string()];
        assert_eq!(allowed("acme.db", &mapped), Ok("acme-tools".into()));
        assert!(allowed("other", &mapped).is_err());
    }
}
