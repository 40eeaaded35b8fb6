//! pytest-xdist output read by the verdict parser: a real `-n 2` run of a suite with failures
//! gives exactly the failures of a plain run. Needs pytest-xdist importable by `python3`
//! (`python3 -m pip install pytest-xdist`); without it the test says so and passes.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use selfdebug::runner::{run_pytest, RunSpec};
use selfdebug::verdict::{self, Verdict};

use crate::support;

fn failures(root: &Path, extra: &[&str]) -> Vec<(String, String, String, String, u32)> {
    let spec = RunSpec {
        extra_args: extra.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(300),
        ..RunSpec::new(root)
    };
    let run = run_pytest(&support::python3(), &spec).unwrap();
    let Verdict::Failed(f) = verdict::read(&run, root) else {
        panic!("{}", String::from_utf8_lossy(&run.log()));
    };
    let mut out: Vec<_> = f
        .iter()
        .map(|f| {
            let loc = f.location.as_ref().expect("a location");
            (
                f.test.clone().unwrap_or_default(),
                f.exc_type.clone(),
                f.msg.clone(),
                loc.file.clone(),
                loc.line,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn an_xdist_run_reads_like_a_plain_run() {
    let has_xdist = Command::new(support::python3().path)
        .args(["-c", "import xdist"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_xdist {
        eprintln!("skipped: pytest-xdist is not installed for python3");
        return;
    }
    let p = support::project::project(&[
        ("conftest.py", ""),
        (
            "shop.py",
            "def total(prices):\n    return sum(p['price'] for p in prices)\n\n\ndef first(xs):\n    return xs[0]\n",
        ),
        (
            "tests/test_a.py",
            "from shop import total\n\n\ndef test_total():\n    assert total([{'price': 2}]) == 2\n\n\ndef test_missing_key():\n    assert total([{'cost': 2}]) == 2\n",
        ),
        (
            "tests/test_b.py",
            "from shop import first\n\n\ndef test_first():\n    assert first([1]) == 1\n\n\ndef test_empty():\n    assert first([]) is None\n",
        ),
    ]);
    let plain = failures(&p.root, &[]);
    let xdist = failures(&p.root, &["-n", "2"]);
    assert_eq!(
        plain,
        [
            (
                "tests/test_a.py::test_missing_key".to_string(),
                "KeyError".to_string(),
                "'price'".to_string(),
                "shop.py".to_string(),
                2
            ),
            (
                "tests/test_b.py::test_empty".to_string(),
                "IndexError".to_string(),
                "list index out of range".to_string(),
                "shop.py".to_string(),
                6
            ),
        ]
    );
    assert_eq!(xdist, plain);
}

/// The warm worker's server has imported xdist's plugin, which froze `sys.path` without the
/// project on it: a `-n 2` run must go cold, or its workers fail to import a flat-layout
/// project (no root conftest) that a cold `python -m pytest -n 2` imports from its directory.
#[test]
fn an_xdist_run_of_a_flat_project_gives_the_cold_verdict_with_the_worker_on() {
    let has_xdist = Command::new(support::python3().path)
        .args(["-c", "import xdist"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_xdist {
        eprintln!("skipped: pytest-xdist is not installed for python3");
        return;
    }
    let p = support::project::project(&[
        ("app/__init__.py", ""),
        ("app/calc.py", "def double(x):\n    return x * 3\n"),
        (
            "tests/test_calc.py",
            "from app.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\ndef test_zero():\n    assert double(0) == 0\n",
        ),
    ]);
    for warm in [false, true] {
        let spec = RunSpec {
            extra_args: vec!["-n".into(), "2".into()],
            timeout: Duration::from_secs(300),
            warm,
            ..RunSpec::new(&p.root)
        };
        let run = run_pytest(&support::python3(), &spec).unwrap();
        let Verdict::Failed(f) = verdict::read(&run, &p.root) else {
            panic!("warm={warm}: {}", String::from_utf8_lossy(&run.log()));
        };
        let got: Vec<_> = f
            .iter()
            .map(|f| (f.test.clone(), f.exc_type.clone()))
            .collect();
        assert_eq!(
            got,
            [(
                Some("tests/test_calc.py::test_double".to_string()),
                "AssertionError".to_string()
            )],
            "warm={warm}"
        );
    }
}
