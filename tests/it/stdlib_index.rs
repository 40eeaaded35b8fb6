//! The standard-library index built with the real `python3`: the names the hand-written list
//! used to carry (and the one it missed, `string.Formatter`) are found where they live, the
//! cache is private and reused, and a broken interpreter leaves the fallback.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Instant;

use selfdebug::runner::{self, Interpreter};
use selfdebug::transform::stdlib::{self, Homes, Stdlib, StdlibIndex};

fn python3() -> Interpreter {
    runner::find_interpreter(Path::new("/"), Some(Path::new("python3"))).expect("python3")
}

fn home(index: &StdlibIndex, name: &str) -> Homes {
    index.homes(name)
}

#[test]
fn index_finds_where_names_live_and_caches_privately() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("stdlib");
    let python = python3();

    let cold = Instant::now();
    let index = stdlib::load_or_build(&python, Some(&dir)).unwrap();
    let cold = cold.elapsed();

    // The six names of the issue, with no hand list: each has one clear home.
    for (name, module) in [
        ("OrderedDict", "collections"),
        ("partial", "functools"),
        ("chain", "itertools"),
        ("suppress", "contextlib"),
        ("field", "dataclasses"),
        ("getcwd", "os"),
        ("Iterable", "collections.abc"),
        ("reduce", "functools"),
        // Re-exported from C accelerators by modules without `__all__` (issue 26 item 4).
        ("bisect_left", "bisect"),
        ("bisect_right", "bisect"),
        ("insort", "bisect"),
    ] {
        let h = home(&index, name);
        assert_eq!(
            h.modules.first().map(String::as_str),
            Some(module),
            "{name}"
        );
        assert!(h.clear, "{name}: {h:?}");
    }
    // `Formatter` lives in two modules: both, string first, and not a clear answer.
    assert_eq!(
        home(&index, "Formatter"),
        Homes {
            modules: vec!["string".into(), "logging".into()],
            clear: false
        }
    );
    // typing's alias is still offered after the real class.
    assert_eq!(
        home(&index, "OrderedDict").modules,
        vec!["collections".to_string(), "typing".to_string()]
    );
    // Deprecated and private modules are never proposed; unknown names have no home.
    assert!(home(&index, "no_such_name_anywhere").modules.is_empty());
    for h in ["escape", "reduce", "sleep"] {
        assert!(
            home(&index, h)
                .modules
                .iter()
                .all(|m| !m.starts_with('_') && m != "cgi"),
            "{h}"
        );
    }
    // Module names come from sys.stdlib_module_names.
    for m in ["os", "json", "tomllib", "string", "__future__"] {
        assert!(index.is_module(m), "{m}");
    }
    for m in ["requests", "pytest", "selfdebug"] {
        assert!(!index.is_module(m), "{m}");
    }
    // What `os` really has, for `os.getcwdu`.
    let os = index.members("os").unwrap();
    assert!(os.iter().any(|(n, callable)| n == "getcwd" && *callable));
    assert!(!os.iter().any(|(n, _)| n == "getcwdu"));
    assert!(index
        .members("os.path")
        .is_some_and(|m| m.iter().any(|(n, _)| n == "join")));

    // One private file per interpreter, written whole.
    let file = stdlib::cache_file(&dir, &python.path).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);

    // The second time it is read from the cache: same answers, much faster.
    let warm = Instant::now();
    let again = stdlib::load_or_build(&python, Some(&dir)).unwrap();
    let warm = warm.elapsed();
    assert_eq!(again.version, index.version);
    assert_eq!(again.indexed_modules(), index.indexed_modules());
    assert_eq!(home(&again, "Formatter"), home(&index, "Formatter"));
    eprintln!(
        "stdlib index of Python {}: {} modules, built in {cold:?}, read from the cache in {warm:?}",
        index.version,
        index.indexed_modules()
    );
    assert!(warm < cold, "cache {warm:?} vs build {cold:?}");

    // A damaged cache file is rebuilt, not trusted.
    std::fs::write(&file, b"{\"python\":").unwrap();
    let rebuilt = stdlib::load_or_build(&python, Some(&dir)).unwrap();
    assert_eq!(rebuilt.indexed_modules(), index.indexed_modules());
    assert!(StdlibIndex::parse(&std::fs::read_to_string(&file).unwrap()).is_ok());
}

/// An interpreter that does not run leaves the fallback list, with the reason.
#[test]
fn broken_interpreter_falls_back() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("python");
    std::fs::write(&fake, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let python = runner::find_interpreter(dir.path(), Some(&fake)).unwrap();
    let s = Stdlib::with_cache(python, Some(dir.path().join("cache")));
    assert!(s.index().is_none());
    assert!(
        s.error()
            .unwrap()
            .to_string()
            .contains("could not list its standard library"),
        "{:?}",
        s.error()
    );
    assert!(s.is_module("json") && !s.is_module("requests"));
    assert!(!dir.path().join("cache").exists());
}
