//! `fix --install-missing`: a real venv (the project's `.venv`), pip run by the tool: a real
//! package from the package index (PyYAML, imported as `yaml`: the import-name mapping), and
//! wheels built here and served from a local directory (`PIP_NO_INDEX`, `PIP_FIND_LINKS`) for
//! the requirement added to each way a project declares its dependencies.

use crate::support;

use std::process::Command;

use support::project::{json, project, Project};

const APP: &str = "import yaml\n\nprint(yaml.safe_dump({'a': 1}), end='')\n";

#[test]
fn a_missing_module_is_installed_only_when_asked_and_the_failure_is_gone() {
    let p = project(&[("app.py", APP), ("want.txt", "a: 1\n")]);
    // Found as the project's interpreter.
    venv(&p);
    let args = [
        "fix",
        "--json",
        "--cmd",
        "python app.py",
        "--expect-stdout",
        "want.txt",
    ];

    // By default a dependency failure is escalated, and nothing is installed.
    let out = p.run(&args);
    support::assert_exit(&out, 5);
    let v = json(&out);
    let f = &v["failures"][0];
    assert_eq!(
        (&f["exc_type"], &f["msg"], &f["status"]),
        (
            &"ModuleNotFoundError".into(),
            &"No module named 'yaml'".into(),
            &"escalated".into()
        )
    );
    assert_eq!(v["installed"], serde_json::json!([]));
    // The advice names the distribution `--install-missing` would install, not the module.
    assert!(
        f["reason"].as_str().unwrap().contains(
            "install it (`python -m pip install PyYAML`, the distribution that provides it)"
        ),
        "{}",
        f["reason"]
    );

    let mut with = args.to_vec();
    with.push("--install-missing");
    let out = p.run(&with);
    support::assert_exit(&out, 0);
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let i = &v["installed"][0];
    assert_eq!(
        (&i["module"], &i["distribution"], &i["ok"]),
        (&"yaml".into(), &"PyYAML".into(), &true.into())
    );
    assert_eq!(v["installed"].as_array().unwrap().len(), 1);
    let f = &v["failures"][0];
    assert_eq!(f["status"], "installed");
    assert_eq!(
        f["reason"],
        "installed PyYAML with pip for the missing module `yaml`; the failure is gone"
    );
    assert_eq!(v["final_status"], "pass");
    // The project declares its dependencies nowhere: no patch, a note says so.
    assert_eq!(v["patches"], serde_json::json!([]));
    assert!(
        v["notes"].as_array().unwrap().contains(&serde_json::json!(
            "--install-missing installed PyYAML but did not declare it (no pyproject.toml \
             [project] or Poetry dependencies, no requirements.txt): add it to the project's \
             dependencies"
        )),
        "{}",
        v["notes"]
    );
    // It went into the project's venv.
    let check = Command::new(p.root.join(".venv/bin/python"))
        .args(["-c", "import yaml"])
        .output()
        .unwrap();
    assert!(check.status.success());
}

#[test]
fn a_distribution_pip_cannot_find_is_reported_and_escalated() {
    let app = "import selfdebug_no_such_dist_zz\n";
    let p = project(&[("app.py", app)]);
    let venv = Command::new(support::python())
        .args(["-m", "venv", "--without-pip"])
        .arg(p.root.join(".venv"))
        .output()
        .unwrap();
    assert!(venv.status.success());
    // A venv without pip: the install fails at once, without the network. The name is not in
    // the known table: named explicitly, it may be installed.
    let out = p.run(&[
        "fix",
        "--json",
        "--install-missing=selfdebug_no_such_dist_zz",
        "--cmd",
        "python app.py",
    ]);
    support::assert_exit(&out, 5);
    let v = json(&out);
    let i = &v["installed"][0];
    assert_eq!(
        (&i["module"], &i["distribution"], &i["ok"]),
        (
            &"selfdebug_no_such_dist_zz".into(),
            &"selfdebug_no_such_dist_zz".into(),
            &false.into()
        )
    );
    assert!(
        i["detail"]
            .as_str()
            .unwrap()
            .contains("No module named pip"),
        "{}",
        i["detail"]
    );
    let f = &v["failures"][0];
    assert_eq!(f["status"], "escalated");
    assert!(f["reason"].as_str().unwrap().starts_with(
        "`python -m pip install selfdebug_no_such_dist_zz` failed (--install-missing): "
    ));
}

/// A plain venv at the project's `.venv` (sees none of the system's packages).
fn venv(p: &Project) {
    let out = Command::new(support::python())
        .args(["-m", "venv"])
        .arg(p.root.join(".venv"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A pure-Python wheel of `dist` 1.0 in `dir` whose package `module` says `NAME = "from DIST"`.
fn wheel(dir: &std::path::Path, dist: &str, module: &str) {
    let init = format!("NAME = \"from {dist}\"\n");
    support::wheel::build(
        dir,
        dist,
        "1.0",
        "any",
        &[(&format!("{module}/__init__.py"), &init)],
    );
}

/// `fix --install-missing[=DIST] --cmd 'python app.py'` with pip reading only `wheels`.
fn install_run(p: &Project, flag: &str, wheels: &std::path::Path) -> std::process::Output {
    let args = [
        "fix",
        "--json",
        flag,
        "--cmd",
        "python app.py",
        "--expect-stdout",
        "want.txt",
    ];
    let out = p
        .cmd(&args)
        .env("PIP_NO_INDEX", "1")
        .env("PIP_FIND_LINKS", wheels)
        .output()
        .unwrap();
    support::check_json_output(&args, &out.stdout);
    out
}

/// Each way a project declares its dependencies gets the installed distribution added, as a
/// patch of its own (rule `declare-dependency`, unsafe, with a review note): the exact bytes.
#[test]
fn the_installed_distribution_is_declared_where_the_project_declares_dependencies() {
    let wheels = tempfile::tempdir().unwrap();
    wheel(wheels.path(), "PyYAML", "yaml");
    wheel(wheels.path(), "acme-internal", "acme_internal");
    let app = |module: &str| format!("import {module}\n\nprint({module}.NAME)\n");
    let pep621 = "[project]\nname = \"app\"\nversion = \"1\"\ndependencies = [\n    \"click>=8\",  # the CLI\n]\n\n[build-system]\nrequires = [\"setuptools\"]\n";
    let pdm = "[project]\nname = \"app\"\nversion = \"1\"\nrequires-python = \">=3.9\"\ndependencies = []\n\n[tool.pdm.dev-dependencies]\ntest = [\"pytest\"]\n";
    let poetry = "[tool.poetry]\nname = \"app\"\nversion = \"1\"\n\n[tool.poetry.dependencies]\npython = \"^3.9\"\nclick = \"^8\"\n\n[tool.poetry.group.dev.dependencies]\npytest = \"*\"\n";
    let cases: [(&str, &str, &str, &str, &str, String); 4] = [
        (
            "yaml",
            "--install-missing",
            "PyYAML",
            "pyproject.toml",
            pep621,
            pep621.replace("  # the CLI\n", "  # the CLI\n    \"PyYAML\",\n"),
        ),
        (
            "yaml",
            "--install-missing",
            "PyYAML",
            "pyproject.toml",
            pdm,
            pdm.replace("dependencies = []", "dependencies = [\"PyYAML\"]"),
        ),
        (
            "yaml",
            "--install-missing",
            "PyYAML",
            "pyproject.toml",
            poetry,
            poetry.replace("click = \"^8\"\n", "click = \"^8\"\nPyYAML = \"*\"\n"),
        ),
        // An import name outside the known table, named explicitly.
        (
            "acme_internal",
            "--install-missing=acme-internal",
            "acme-internal",
            "requirements.txt",
            "click>=8\n# pinned by ops\nrequests==2.32.3",
            "click>=8\n# pinned by ops\nrequests==2.32.3\nacme-internal\n".to_string(),
        ),
    ];
    for (module, flag, dist, file, before, after) in cases {
        let p = project(&[
            ("app.py", &app(module)),
            ("want.txt", &format!("from {dist}\n")),
            (file, before),
        ]);
        venv(&p);
        let out = install_run(&p, flag, wheels.path());
        support::assert_exit(&out, 0);
        let v = json(&out);
        assert_eq!(v["final_status"], "pass", "{file}: {v}");
        let i = &v["installed"][0];
        assert_eq!(
            (&i["module"], &i["distribution"], &i["ok"], &i["declared"]),
            (&module.into(), &dist.into(), &true.into(), &file.into()),
            "{v}"
        );
        assert_eq!(p.read(file), after, "{file}");
        let patch = &v["patches"][0];
        assert_eq!(v["patches"].as_array().unwrap().len(), 1);
        assert_eq!(
            (&patch["file"], &patch["rules"], &patch["applicability"]),
            (
                &file.into(),
                &serde_json::json!(["declare-dependency"]),
                &"unsafe".into()
            )
        );
        assert_eq!(
            patch["review"],
            serde_json::json!([format!(
                "--install-missing installed {dist} from the package index: check that it is \
                 the distribution the project means, and add the version constraint it needs"
            )])
        );
        assert_eq!(v["files_patched"], serde_json::json!([file]));
        let diff = patch["diff"].as_str().unwrap();
        assert!(
            diff.starts_with(&format!("--- a/{file}\n+++ b/{file}\n")),
            "{diff}"
        );
    }
}

/// An import name the table does not know is not looked up on the index under that name.
#[test]
fn an_unknown_import_name_is_refused_with_the_reason() {
    let p = project(&[
        ("app.py", "import acme_internal_zz\n"),
        ("requirements.txt", "click\n"),
    ]);
    let before = p.snapshot();
    // No venv, no pip needed: nothing is run for the name.
    let out = p.run(&[
        "fix",
        "--json",
        "--install-missing",
        "--cmd",
        "python app.py",
    ]);
    support::assert_exit(&out, 5);
    let v = json(&out);
    assert_eq!(v["installed"], serde_json::json!([]));
    let f = &v["failures"][0];
    assert_eq!(f["status"], "escalated");
    assert_eq!(
        f["reason"],
        "`acme_internal_zz` is not in selfdebug's table of known distributions: \
         --install-missing does not install an unknown import name from the package index \
         (anyone may have registered that name there); if `acme_internal_zz` is the \
         distribution you mean, name it: --install-missing=acme_internal_zz (or \
         --install-missing=acme_internal_zz=DIST)"
    );
    assert_eq!(v["patches"], serde_json::json!([]));
    support::project::assert_same(&before, &p.snapshot());
}

/// An install that does not supply the missing module fixed nothing: the requirement is not
/// declared (no patch, every project file as it was), and the reason says the distribution
/// stays installed and how to remove it.
#[test]
fn an_install_that_does_not_supply_the_module_declares_nothing_and_keeps_no_patch() {
    let wheels = tempfile::tempdir().unwrap();
    // Installs fine, but as `acme_other`: `acme_internal` is still missing after it.
    wheel(wheels.path(), "acme-wrong", "acme_other");
    let p = project(&[
        (
            "app.py",
            "import acme_internal\n\nprint(acme_internal.NAME)\n",
        ),
        ("want.txt", "from acme-wrong\n"),
        ("requirements.txt", "click>=8\n"),
    ]);
    venv(&p);
    let project_files = |p: &Project| {
        let mut s = p.snapshot();
        s.retain(|k, _| !k.starts_with(".venv/"));
        s
    };
    let before = project_files(&p);
    let out = install_run(
        &p,
        "--install-missing=acme_internal=acme-wrong",
        wheels.path(),
    );
    support::assert_exit(&out, 5);
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let i = &v["installed"][0];
    assert_eq!(
        (
            &i["module"],
            &i["distribution"],
            &i["ok"],
            i.get("declared")
        ),
        (
            &"acme_internal".into(),
            &"acme-wrong".into(),
            &true.into(),
            None
        ),
        "{v}"
    );
    // One failure, reported once, with why the install did not count.
    assert_eq!(v["failures"].as_array().unwrap().len(), 1, "{v}");
    let f = &v["failures"][0];
    assert_eq!(f["status"], "escalated");
    assert_eq!(
        f["reason"],
        format!(
            "installed acme-wrong (--install-missing), but the module `acme_internal` is still \
             missing after it: acme-wrong does not provide it; acme-wrong stays installed in {} \
             (`python -m pip uninstall acme-wrong` removes it) and is declared nowhere",
            p.root.join(".venv/bin/python").display()
        )
    );
    assert_eq!(v["patches"], serde_json::json!([]));
    assert_eq!(v["files_patched"], serde_json::json!([]));
    assert_eq!(v["final_status"], "escalated");
    support::project::assert_same(&before, &project_files(&p));
}
