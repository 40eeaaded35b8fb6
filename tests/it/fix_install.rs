//! `fix --install-missing`: a real venv (the project's `.venv`), a real package from the
//! package index (PyYAML, imported as `yaml`: the import-name mapping), pip run by the tool.

use crate::support;

use std::process::Command;

use support::project::{json, project};

const APP: &str = "import yaml\n\nprint(yaml.safe_dump({'a': 1}), end='')\n";

#[test]
fn a_missing_module_is_installed_only_when_asked_and_the_failure_is_gone() {
    let p = project(&[("app.py", APP), ("want.txt", "a: 1\n")]);
    // A plain venv: it sees none of the system's packages. Found as the project's interpreter.
    let venv = Command::new(support::python())
        .args(["-m", "venv"])
        .arg(p.root.join(".venv"))
        .output()
        .unwrap();
    assert!(
        venv.status.success(),
        "{}",
        String::from_utf8_lossy(&venv.stderr)
    );
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
    assert_eq!(v["patches"], serde_json::json!([]));
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
    // A venv without pip: the install fails at once, without the network.
    let out = p.run(&[
        "fix",
        "--json",
        "--install-missing",
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
