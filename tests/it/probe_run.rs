//! The probe against real pytest in temp dirs: what it reports, where it is injected, and that
//! the file is byte-identical (and has its mtime) afterwards, whatever happened.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use selfdebug::probe::{self, InjectionKind, ProbeError, ProbeReport, ProbeRequest};
use selfdebug::runner::{run_pytest, Interpreter, InterpreterSource, RunSpec};
use selfdebug::traceback::{self, Failure};

use crate::support;

fn real_python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn interp() -> Interpreter {
    Interpreter {
        path: real_python(),
        source: InterpreterSource::Explicit,
    }
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

/// Every file under `root` with its bytes and mtime, and every directory.
fn snapshot(root: &Path) -> BTreeMap<String, (Vec<u8>, Option<SystemTime>)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, Option<SystemTime>)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(rel + "/", (Vec::new(), None));
                walk(root, &p, out);
            } else {
                let m = fs::metadata(&p).unwrap().modified().ok();
                out.insert(rel, (fs::read(&p).unwrap(), m));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Gives `rel` an old mtime, so that restoring "now" instead would be caught.
fn age(root: &Path, rel: &str) -> SystemTime {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    fs::File::options()
        .write(true)
        .open(root.join(rel))
        .unwrap()
        .set_modified(t)
        .unwrap();
    t
}

/// Runs the suite and returns its one failure with a location.
fn the_failure(root: &Path, env: &[(&str, &str)]) -> Failure {
    let mut spec = RunSpec::new(root);
    spec.env = env.iter().map(|(k, v)| (k.into(), v.into())).collect();
    let run = run_pytest(&interp(), &spec).unwrap();
    let log = run.log();
    let parsed = traceback::parse(&log, root).unwrap();
    let located: Vec<Failure> = parsed
        .failures
        .into_iter()
        .filter(|f| f.location.is_some())
        .collect();
    assert_eq!(located.len(), 1, "{}", String::from_utf8_lossy(&log));
    located.into_iter().next().unwrap()
}

fn request<'a>(root: &'a Path, failure: &'a Failure, python: &'a Interpreter) -> ProbeRequest<'a> {
    ProbeRequest {
        project_dir: root,
        failure,
        interpreter: python,
        timeout: Duration::from_secs(120),
        test_timeout: None,
        env: Vec::new(),
        pytest_args: Vec::new(),
        test: None,
        backup: true,
    }
}

fn run_probe(root: &Path, failure: &Failure) -> ProbeReport {
    let python = interp();
    probe::probe(&request(root, failure, &python)).unwrap()
}

fn expr<'a>(r: &'a ProbeReport, text: &str) -> &'a probe::ExprValue {
    r.exprs
        .iter()
        .find(|e| e.text == text)
        .unwrap_or_else(|| panic!("no expression {text:?} in {:#?}", r.exprs))
}

fn type_of(r: &ProbeReport, text: &str) -> String {
    let e = expr(r, text);
    match (&e.value, &e.error) {
        (Some(v), _) => v.type_name.clone(),
        (None, Some(err)) => format!("raised {}", err.type_name),
        (None, None) => "-".into(),
    }
}

fn local<'a>(r: &'a ProbeReport, name: &str) -> &'a probe::Value {
    r.locals
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no local {name:?} in {:#?}", r.locals))
}

#[test]
fn demo_text_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("demo");
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/projects/demo"),
        &root,
    );
    let old = age(&root, "utils/demo.py");
    let before = snapshot(&root);
    let failure = the_failure(&root, &[]);
    assert_eq!(
        failure.test.as_deref(),
        Some("tests/test_demo.py::test_headline_without_title")
    );

    let r = run_probe(&root, &failure);
    assert_eq!((r.file.as_str(), r.line), ("utils/demo.py", 6));
    assert_eq!(r.statement, "    words = text.split()");
    assert_eq!(
        (r.injected_at_line, r.injection),
        (6, InjectionKind::BeforeStatement)
    );
    assert!(r.fired);
    assert_eq!(r.hits, 1);
    assert_eq!(r.module.as_deref(), Some("utils.demo"));
    // The copy is what ran.
    assert_eq!(
        r.module_file.as_deref(),
        Some(root.join("utils/demo.py").to_str().unwrap())
    );
    assert_eq!(r.locals.len(), 1);
    assert_eq!(
        (
            local(&r, "text").type_name.as_str(),
            local(&r, "text").repr.as_str()
        ),
        ("NoneType", "None")
    );
    let texts: Vec<&str> = r.exprs.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, ["text.split", "text"]);
    assert_eq!(type_of(&r, "text"), "NoneType");
    assert!(expr(&r, "text").is_none);
    let split = expr(&r, "text.split");
    assert_eq!(
        split
            .error
            .as_ref()
            .map(|e| (e.type_name.as_str(), e.msg.as_str())),
        Some((
            "AttributeError",
            "'NoneType' object has no attribute 'split'"
        ))
    );
    let src = fs::read(root.join("utils/demo.py")).unwrap();
    assert_eq!(&src[split.range[0]..split.range[1]], b"text.split");
    assert!(r.test_outcome.reproduced && !r.test_outcome.passed);
    assert_eq!(r.test_outcome.exit_code, Some(1));
    assert_eq!(r.exc_type, "AttributeError");
    assert_eq!(r.file_hash, probe::guard::hash(&src));
    assert!(r.probe_line.is_ascii() && !r.probe_line.contains('\n'));

    // Byte-identical, same mtime, nothing added anywhere in the project.
    assert_eq!(snapshot(&root), before);
    assert_eq!(
        fs::metadata(root.join("utils/demo.py"))
            .unwrap()
            .modified()
            .unwrap(),
        old
    );
}

const TEST_F: &str = "from lib import f\n\ndef test_f():\n    assert f({}) == 'x'\n";

#[test]
fn crlf_bom_file_is_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lib =
        b"\xef\xbb\xbf# caf\xc3\xa9\r\ndef f(d):\r\n    x = d.get('k')\r\n    return x.strip()\r\n";
    write(root, "lib.py", lib);
    write(root, "test_lib.py", TEST_F.as_bytes());
    age(root, "lib.py");
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    let r = run_probe(root, &failure);
    assert!(r.fired);
    assert_eq!((r.line, r.injected_at_line), (4, 4));
    assert_eq!(type_of(&r, "x"), "NoneType");
    assert_eq!(type_of(&r, "x.strip"), "raised AttributeError");
    assert_eq!(local(&r, "d").repr, "{}");
    // Ranges are offsets in the stored bytes (after the BOM and the 2-byte é).
    let xs = expr(&r, "x.strip");
    assert_eq!(&lib[xs.range[0]..xs.range[1]], b"x.strip");
    assert!(r.test_outcome.reproduced);
    assert_eq!(snapshot(root), before);
}

#[test]
fn latin1_cookie_file_is_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lib = b"# -*- coding: latin-1 -*-\nLABEL = 'caf\xe9'\n\ndef f(d):\n    x = d.get('\xe9t\xe9')\n    return x.strip() + LABEL\n";
    write(root, "lib.py", lib);
    write(root, "test_lib.py", TEST_F.as_bytes());
    age(root, "lib.py");
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    let r = run_probe(root, &failure);
    assert!(r.fired);
    assert_eq!(r.line, 6);
    assert_eq!(type_of(&r, "x"), "NoneType");
    assert_eq!(type_of(&r, "LABEL"), "str");
    assert_eq!(expr(&r, "LABEL").value.as_ref().unwrap().repr, "'café'");
    let xs = expr(&r, "x.strip");
    assert_eq!(&lib[xs.range[0]..xs.range[1]], b"x.strip");
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_statement_never_reached_reports_not_fired() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "lib.py",
        b"def f(x):\n    if x is None:\n        return None.upper()\n    return x.lower()\n",
    );
    write(
        root,
        "test_lib.py",
        b"from lib import f\n\ndef test_f():\n    assert f(None) == 'x'\n",
    );
    let before = snapshot(root);
    let mut failure = the_failure(root, &[]);
    assert_eq!(failure.location.as_ref().unwrap().line, 3);
    // Point at line 4, which the test never reaches.
    failure.location.as_mut().unwrap().line = 4;
    let r = run_probe(root, &failure);
    assert!(!r.fired);
    assert_eq!(r.hits, 0);
    assert!(r.locals.is_empty());
    assert!(r.module_file.is_none());
    let x = expr(&r, "x");
    assert!(x.value.is_none() && x.error.is_none() && !x.is_none);
    assert!(r.test_outcome.reproduced);
    assert_eq!(snapshot(root), before);
}

fn loop_project(root: &Path, n: usize) {
    write(
        root,
        "shop.py",
        b"class Item:\n    def __init__(self, price):\n        self.price = price\n\n\ndef total(items):\n    s = 0\n    for i, it in enumerate(items):\n        s += it.price\n    return s\n",
    );
    write(
        root,
        "test_shop.py",
        format!("from shop import Item, total\n\ndef test_total():\n    items = [Item(1) for _ in range({n})] + [None]\n    assert total(items) == {n}\n").as_bytes(),
    );
}

#[test]
fn a_probe_in_a_loop_reports_the_last_hit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    loop_project(root, 2);
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    let r = run_probe(root, &failure);
    assert_eq!((r.line, r.injected_at_line), (9, 9));
    assert!(r.fired);
    assert_eq!(r.hits, 3);
    assert_eq!(local(&r, "i").repr, "2");
    assert_eq!(local(&r, "s").repr, "2");
    assert_eq!(local(&r, "it").type_name, "NoneType");
    assert!(expr(&r, "it").is_none);
    assert_eq!(type_of(&r, "s"), "int");
    assert_eq!(type_of(&r, "it.price"), "raised AttributeError");
    assert_eq!(snapshot(root), before);
}

#[test]
fn past_the_hit_cap_the_failing_iteration_is_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    loop_project(root, 120);
    let failure = the_failure(root, &[]);
    let r = run_probe(root, &failure);
    assert_eq!(r.hits, 121);
    assert_eq!(local(&r, "i").repr, "120");
    assert_eq!(local(&r, "s").repr, "120");
    assert!(expr(&r, "it").is_none);
}

#[test]
fn an_elif_test_is_probed_before_the_if() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "cfg.py",
        b"class Cfg:\n    mode = 'b'\n    opts = None\n\n\ndef classify(cfg):\n    if cfg is None:\n        return 'none'\n    elif cfg.mode == 'a':\n        return 'A'\n    elif cfg.opts.level > 2:\n        return 'high'\n    return 'low'\n",
    );
    write(root, "test_cfg.py", b"from cfg import Cfg, classify\n\ndef test_classify():\n    assert classify(Cfg()) == 'low'\n");
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    let r = run_probe(root, &failure);
    assert_eq!(r.line, 11);
    assert_eq!(
        (r.injected_at_line, r.injection),
        (7, InjectionKind::BeforeIfChain)
    );
    assert!(r.fired);
    assert_eq!(r.hits, 1);
    let texts: Vec<&str> = r.exprs.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, ["cfg.opts.level", "cfg.opts", "cfg"]);
    assert!(expr(&r, "cfg.opts").is_none);
    assert_eq!(type_of(&r, "cfg"), "cfg.Cfg");
    assert_eq!(type_of(&r, "cfg.opts.level"), "raised AttributeError");
    assert!(r.test_outcome.reproduced);
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_one_line_compound_body_is_probed_before_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "words.py",
        b"def first_word(flag, text):\n    n = 0\n    if flag: return text.split()[0]\n    return ''\n",
    );
    write(root, "test_words.py", b"from words import first_word\n\ndef test_first():\n    assert first_word(True, None) == ''\n");
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    let r = run_probe(root, &failure);
    assert_eq!(r.line, 3);
    assert_eq!(
        (r.injected_at_line, r.injection),
        (3, InjectionKind::BeforeCompoundHeader)
    );
    assert!(r.fired);
    assert_eq!(type_of(&r, "flag"), "bool");
    assert!(expr(&r, "text").is_none);
    assert_eq!(type_of(&r, "text.split"), "raised AttributeError");
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_test_that_times_out_still_gets_its_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "slow.py",
        b"import os, time\n\n\ndef f(x):\n    n = len(x)\n    if os.environ.get('SD_HANG'):\n        time.sleep(1000)\n    return n\n",
    );
    write(
        root,
        "test_slow.py",
        b"import os\nfrom slow import f\n\ndef test_f():\n    assert f('abc' if os.environ.get('SD_HANG') else None) == 3\n",
    );
    let old = age(root, "slow.py");
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    assert_eq!(failure.location.as_ref().unwrap().line, 5);
    let python = interp();
    let mut req = request(root, &failure, &python);
    req.timeout = Duration::from_secs(3);
    req.env = vec![(OsString::from("SD_HANG"), OsString::from("1"))];
    let r = probe::probe(&req).unwrap();
    assert!(r.test_outcome.timed_out);
    assert_eq!(r.test_outcome.exit_code, None);
    assert!(!r.test_outcome.reproduced);
    // It fired before the hang, and the record survived the kill.
    assert!(r.fired);
    assert_eq!(local(&r, "x").repr, "'abc'");
    assert_eq!(snapshot(root), before);
    assert_eq!(
        fs::metadata(root.join("slow.py"))
            .unwrap()
            .modified()
            .unwrap(),
        old
    );
}

#[test]
fn refusals_touch_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    write(&root, "lib.py", b"def f(x):\n    return x.y\n");
    write(
        &root,
        "test_lib.py",
        b"from lib import f\n\ndef test_f():\n    f(None)\n",
    );
    write(dir.path(), "outside.py", b"def g(x):\n    return x.y\n");
    let before = snapshot(dir.path());
    let failure = the_failure(&root, &[]);
    let python = interp();

    let mut no_loc = failure.clone();
    no_loc.location = None;
    assert_eq!(
        probe::probe(&request(&root, &no_loc, &python)),
        Err(ProbeError::NoLocation)
    );

    let mut no_test = failure.clone();
    no_test.test = None;
    assert_eq!(
        probe::probe(&request(&root, &no_test, &python)),
        Err(ProbeError::NoTest)
    );

    let mut outside = failure.clone();
    outside.location.as_mut().unwrap().file = "../outside.py".into();
    let err = probe::probe(&request(&root, &outside, &python)).unwrap_err();
    assert!(matches!(err, ProbeError::NotConfined { .. }), "{err}");

    std::os::unix::fs::symlink(dir.path().join("outside.py"), root.join("link.py")).unwrap();
    let mut linked = failure.clone();
    linked.location.as_mut().unwrap().file = "link.py".into();
    let err = probe::probe(&request(&root, &linked, &python)).unwrap_err();
    assert!(matches!(err, ProbeError::NotConfined { .. }), "{err}");
    fs::remove_file(root.join("link.py")).unwrap();

    write(&root, ".venv/pyvenv.cfg", b"home = /usr/bin\n");
    write(&root, ".venv/lib/m.py", b"def g(x):\n    return x.y\n");
    let mut venv = failure.clone();
    venv.location.as_mut().unwrap().file = ".venv/lib/m.py".into();
    let err = probe::probe(&request(&root, &venv, &python)).unwrap_err();
    assert!(err.to_string().contains("virtualenv"), "{err}");
    fs::remove_dir_all(root.join(".venv")).unwrap();

    let mut blank = failure.clone();
    blank.location.as_mut().unwrap().line = 99;
    let err = probe::probe(&request(&root, &blank, &python)).unwrap_err();
    assert!(
        matches!(err, ProbeError::NotLocated { line: 99, .. }),
        "{err}"
    );

    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn the_probe_is_invisible_to_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A parameter named `locals` must not break the probe line, the code object must not gain
    // a local, and nothing must be printed.
    write(
        root,
        "lib.py",
        b"def f(x, locals=None):\n    y = x.upper()\n    return y\n",
    );
    write(
        root,
        "test_lib.py",
        b"from lib import f\n\ndef test_f(capsys):\n    assert f.__code__.co_varnames == ('x', 'locals', 'y')\n    assert f('a', locals=5) == 'A'\n    assert capsys.readouterr() == ('', '')\n    f(None)\n",
    );
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    assert_eq!(failure.location.as_ref().unwrap().line, 2);
    let r = run_probe(root, &failure);
    // The assertions before `f(None)` held with the probe in.
    assert!(r.test_outcome.reproduced, "{:?}", r.test_outcome);
    assert_eq!(r.hits, 2);
    assert_eq!(local(&r, "locals").type_name, "NoneType");
    assert!(expr(&r, "x").is_none);
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_module_level_statement_is_probed_at_import() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "settings.py",
        b"import os\n\nCONFIG = None\nNAME = CONFIG.name\n",
    );
    write(
        root,
        "test_settings.py",
        b"import settings\n\ndef test_name():\n    assert settings.NAME\n",
    );
    let before = snapshot(root);
    let failure = the_failure(root, &[]);
    assert_eq!(failure.when, traceback::When::Collect);
    let r = run_probe(root, &failure);
    assert_eq!((r.line, r.injected_at_line), (4, 4));
    assert!(r.fired);
    assert_eq!(r.module.as_deref(), Some("settings"));
    assert!(expr(&r, "CONFIG").is_none);
    // Module-level locals are the globals, without dunders and modules.
    let names: Vec<&str> = r.locals.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["CONFIG"]);
    assert!(r.test_outcome.reproduced, "{:?}", r.test_outcome);
    assert_eq!(snapshot(root), before);
}

/// A project whose one test fails as `body` says, run through the probe.
fn probe_of(lib: &str, test: &str) -> ProbeReport {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "lib.py", lib.as_bytes());
    write(root, "test_lib.py", test.as_bytes());
    let failure = the_failure(root, &[]);
    run_probe(root, &failure)
}

fn python_version() -> [u32; 2] {
    let out = Command::new(real_python())
        .args(["-c", "import sys; print(*sys.version_info[:2])"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Vec<u32> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    [v[0], v[1]]
}

#[test]
fn a_name_error_records_the_frames_names() {
    let r = probe_of(
        "import os\nLIMIT = 3\n\ndef total(items):\n    count = len(items)\n    return cont * 2\n",
        "from lib import total\n\ndef test_total():\n    assert total([1]) == 2\n",
    );
    assert_eq!(r.python_version, Some(python_version()));
    let scope = r.scope.as_ref().expect("scope recorded for a NameError");
    assert_eq!(scope.locals.names, ["items", "count"]);
    assert_eq!(scope.locals.total, 2);
    let globals: Vec<&str> = scope.globals.names.iter().map(String::as_str).collect();
    assert_eq!(
        globals,
        [
            "__name__",
            "__doc__",
            "__package__",
            "__loader__",
            "__spec__",
            "__file__",
            "__cached__",
            "__builtins__",
            "os",
            "LIMIT",
            "total"
        ]
    );
    // The builtins module's own order, complete.
    assert_eq!(scope.builtins.names[0], "__name__");
    assert!(scope.builtins.names.iter().any(|n| n == "len"));
    assert_eq!(scope.builtins.names.len(), scope.builtins.total);
    assert_eq!(scope.self_has_attr, None);
    assert!(r
        .exprs
        .iter()
        .all(|e| e.dir.is_none() && e.params.is_none()));
    let doc = serde_json::to_vec(&r).unwrap();
    support::assert_valid("fix.schema.json", Some("probe_report"), &[&doc]);
}

#[test]
fn an_attribute_error_records_dir_of_the_receiver() {
    let r = probe_of(
        "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def count(self):\n        return len(self.itms)\n",
        "from lib import Cart\n\ndef test_count():\n    assert Cart().count() == 0\n",
    );
    assert!(r.scope.is_none());
    let me = expr(&r, "self");
    let dir = me.dir.as_ref().expect("dir of the receiver");
    assert!(dir.is_self);
    assert_eq!(dir.total, dir.names.len());
    assert!(dir.names.iter().any(|n| n == "items"));
    assert!(dir.names.iter().any(|n| n == "count"));
    assert!(dir.names.iter().any(|n| n == "__init__"));
    assert!(expr(&r, "self.itms").dir.is_none());
    let doc = serde_json::to_vec(&r).unwrap();
    support::assert_valid("fix.schema.json", Some("probe_report"), &[&doc]);
}

#[test]
fn an_unexpected_keyword_records_the_callees_signature() {
    let r = probe_of(
        "def fmt(value, /, sep=' ', *, indent=2, **rest):\n    return str(value)\n\ndef show(v):\n    return fmt(v, indnt=4)\n",
        "import lib\n\ndef fmt_strict(value, *, indent=2):\n    return str(value)\n\ndef test_show():\n    lib.fmt = fmt_strict\n    assert lib.show(1) == '1'\n",
    );
    let params = expr(&r, "fmt").params.as_ref().expect("signature");
    let got: Vec<(&str, &str)> = params
        .iter()
        .map(|(n, k)| (n.as_str(), k.as_str()))
        .collect();
    // The callee at run time (the test replaced it), not the definition in the file.
    assert_eq!(
        got,
        [
            ("value", "POSITIONAL_OR_KEYWORD"),
            ("indent", "KEYWORD_ONLY")
        ]
    );
    let doc = serde_json::to_vec(&r).unwrap();
    support::assert_valid("fix.schema.json", Some("probe_report"), &[&doc]);
}
