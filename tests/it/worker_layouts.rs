//! The warm worker in the layouts real projects have, with REAL virtualenvs made by `python -m
//! venv` inside the project and pytest installed into them (from a wheelhouse downloaded once
//! per target dir, so the tests run offline afterwards): the worker serves every run (no note,
//! `phases_ms.worker_cold_runs` 0) and the fix's runs match the worker-off run exactly. A
//! project whose own code is a pytest plugin is refused before the worker imports pytest, and
//! the note says which plugin.
//!
//! By default two layouts run (an in-project `.venv` with a flat layout and a root conftest
//! that imports the project; a `src/` layout installed editable); the others are behind
//! `SELFDEBUG_SLOW_TESTS=1`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::{self, project::Project};

fn slow() -> bool {
    if support::slow_tests() {
        return true;
    }
    eprintln!("skipped: set SELFDEBUG_SLOW_TESTS=1 to run this worker layout");
    false
}

/// Wheels for pytest (and setuptools, for editable installs) with their dependencies: fetched
/// once with `pip download` into the target dir, then reused offline.
fn wheelhouse() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        support::venv::wheelhouse(
            Path::new(&support::python3().path),
            "worker-layouts",
            &["pytest", "setuptools"],
        )
    })
}

/// `python -m venv --without-pip ROOT/DIR` with `packages` installed into it from the
/// wheelhouse (pip of the base interpreter, aimed at the venv: no ensurepip, no network).
fn venv(root: &Path, dir: &str, packages: &[&str]) -> PathBuf {
    let python = support::python3().path;
    let env = root.join(dir);
    support::venv::check(
        Command::new(&python)
            .args(["-m", "venv", "--without-pip"])
            .arg(&env),
        "python -m venv",
    );
    let venv_python = env.join("bin/python");
    install(&venv_python, root, packages);
    venv_python
}

fn install(venv_python: &Path, cwd: &Path, packages: &[&str]) {
    support::venv::check(
        Command::new(support::python3().path)
            .current_dir(cwd)
            .args(["-m", "pip", "--python"])
            .arg(venv_python)
            .args([
                "install",
                "--quiet",
                "--no-index",
                "--no-compile",
                "--no-build-isolation",
                "--find-links",
            ])
            .arg(wheelhouse())
            .args(packages),
        "pip install into the venv",
    );
}

/// `selfdebug fix --json` with the worker on or off; `python` given explicitly when the layout
/// does not put it where the tool looks by itself.
fn fix(p: &Project, worker: &str, python: Option<&Path>) -> Value {
    let mut args = vec!["fix", "--json", "--jobs", "1", "--worker", worker];
    let py;
    if let Some(python) = python {
        py = python.to_string_lossy().into_owned();
        args.extend(["--python", &py]);
    }
    let out = p.run(&args);
    support::assert_exit(&out, 0);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    support::project::json(&out)
}

/// What the runs said, without what differs between any two runs: times, the project's
/// temp path, object addresses.
fn runs_of(v: &Value, root: &Path) -> Value {
    let mut v = serde_json::json!({
        "final_status": v["final_status"],
        "pytest_runs": v["pytest_runs"],
        "patches": v["patches"],
        "failures": v["failures"],
        "attempt_records": v["attempt_records"],
    });
    let root = root.to_string_lossy().into_owned();
    normalize(&mut v, &root);
    v
}

fn normalize(v: &mut Value, root: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k.ends_with("_ms") {
                    *x = Value::Null;
                } else {
                    normalize(x, root);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| normalize(x, root)),
        Value::String(s) => *s = without_times(&s.replace(root, "ROOT")),
        _ => {}
    }
}

/// pytest's "in 0.04s" summaries.
fn without_times(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split(" in ").enumerate() {
        if i > 0 {
            out.push_str(" in ");
            let num = part
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(part.len());
            if num > 0 && part[num..].starts_with('s') {
                out.push('T');
                out.push_str(&part[num..]);
                continue;
            }
        }
        out.push_str(part);
    }
    out
}

/// Fixes the bug in `module` (relative path) with the worker on, then (on a fresh copy) off:
/// the worker served every run, and both runs read the same.
fn served_and_same(files: &[(&str, &str)], setup: impl Fn(&Project) -> Option<PathBuf>) {
    let mut seen = Vec::new();
    for worker in ["auto", "off"] {
        let p = support::project::project(files);
        let python = setup(&p);
        let v = fix(&p, worker, python.as_deref());
        let phases = &v["phases_ms"];
        assert_eq!(v["notes"], serde_json::json!([]), "--worker {worker}: {v}");
        assert_eq!(phases["worker_cold_runs"], 0, "--worker {worker}: {phases}");
        if worker == "auto" {
            // It started and served: a refusal or a failed start would be a note and cold runs.
            assert!(phases["worker_start_ms"].as_u64().unwrap() > 0, "{phases}");
        }
        assert_eq!(v["final_status"], "pass", "--worker {worker}: {v}");
        // No deprecation warning from the worker's entry into pytest.
        for r in v["attempt_records"].as_array().unwrap() {
            let err = r["stderr_tail"].as_str().unwrap_or_default();
            assert!(!err.contains("Warning"), "--worker {worker}: {err}");
        }
        seen.push(runs_of(&v, &p.root));
    }
    assert_eq!(seen[0], seen[1]);
}

const WORDS_TEST: &str = "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\ndef test_words():\n    assert to_upper(\"a  b\") == \"A B\"\n";

#[test]
fn an_in_project_venv_with_a_flat_layout_and_a_root_conftest_is_served() {
    served_and_same(
        &[
            // The root conftest imports the project: children import it, the worker never.
            ("conftest.py", "import words  # noqa: F401\n"),
            ("words.py", support::project::DEMO_MODULE),
            ("tests/test_words.py", WORDS_TEST),
        ],
        |p| {
            // Found by the tool itself as ROOT/.venv/bin/python, pytest inside the root.
            venv(&p.root, ".venv", &["pytest"]);
            None
        },
    );
}

const PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"words\"\nversion = \"0.1\"\n";

#[test]
fn a_src_layout_installed_editable_in_its_venv_is_served() {
    served_and_same(
        &[
            ("pyproject.toml", PYPROJECT),
            ("src/words/__init__.py", support::project::DEMO_MODULE),
            ("tests/test_words.py", WORDS_TEST),
        ],
        |p| {
            let python = venv(&p.root, ".venv", &["pytest", "setuptools"]);
            // The editable install puts `src/` on the venv's path (a .pth): a directory the
            // tool writes into, which must not look like a changed site-packages.
            install(&python, &p.root, &["-e", "."]);
            None
        },
    );
}

#[test]
fn a_venv_named_venv_with_a_namespace_package_is_served() {
    if !slow() {
        return;
    }
    served_and_same(
        &[
            // `ns` has no __init__.py: a namespace package, imported from the root.
            ("ns/words.py", support::project::DEMO_MODULE),
            (
                "tests/test_words.py",
                &WORDS_TEST.replace("from words", "from ns.words"),
            ),
        ],
        |p| {
            venv(&p.root, "venv", &["pytest"]);
            None
        },
    );
}

#[test]
fn a_tox_env_inside_the_root_is_served() {
    if !slow() {
        return;
    }
    served_and_same(
        &[
            ("tox.ini", "[tox]\nenvlist = py\n"),
            ("words.py", support::project::DEMO_MODULE),
            ("tests/test_words.py", WORDS_TEST),
        ],
        // tox's env is not where the tool looks: `--python .tox/py/bin/python`, as a user
        // (or tox itself) would run it.
        |p| Some(venv(&p.root, ".tox/py", &["pytest"])),
    );
}

#[test]
fn a_project_whose_own_code_is_a_pytest_plugin_is_refused_before_the_worker_imports_pytest() {
    if !slow() {
        return;
    }
    let p = support::project::project(&[
        (
            "pyproject.toml",
            &format!("{PYPROJECT}\n[project.entry-points.pytest11]\nwords = \"words.plugin\"\n"),
        ),
        ("src/words/__init__.py", support::project::DEMO_MODULE),
        ("src/words/plugin.py", "import words  # noqa: F401\n"),
        ("tests/test_words.py", WORDS_TEST),
    ]);
    let python = venv(&p.root, ".venv", &["pytest", "setuptools"]);
    install(&python, &p.root, &["-e", "."]);
    let v = fix(&p, "auto", None);
    assert_eq!(v["final_status"], "pass", "{v}");
    assert_eq!(
        v["notes"],
        serde_json::json!([
            "the warm worker is off: the pytest plugin words (src/words/plugin.py) is the \
             project's own code, which the worker would import before every run; runs are cold"
        ])
    );
    // Every run went cold, and said so once.
    assert_eq!(v["phases_ms"]["worker_cold_runs"], v["pytest_runs"]);
    assert_eq!(
        std::fs::read_to_string(p.root.join("src/words/__init__.py")).unwrap(),
        support::project::DEMO_FIXED
    );
}
