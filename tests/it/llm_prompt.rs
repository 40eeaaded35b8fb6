//! The prompt the model gets, snapshot-tested on failures from real pytest runs: a wrong
//! result asserted in the test (the code to repair is the module the test imports), and a
//! crash in a method of a long module (its function with line numbers and its class header),
//! with an earlier candidate and the failure it led to.

use crate::support;

use std::process::Command;

use selfdebug::llm::prompt::{self, Previous, PromptInput, Snapshot};
use selfdebug::traceback;
use support::project::{project, Project};

fn failure_of(p: &Project) -> traceback::Failure {
    let out = Command::new(support::python())
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
        .current_dir(&p.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let parsed = traceback::parse(&out.stdout, &p.root).unwrap();
    parsed.failures.into_iter().next().expect("one failure")
}

fn env() -> Snapshot {
    Snapshot {
        python: "3.11.2".into(),
        packages: vec![("requests".into(), "2.31.0".into())],
        neighbours: vec!["data.csv: id,price | 1,10".into(), "shop.py".into()],
    }
}

fn user_message(input: &PromptInput) -> String {
    let messages = prompt::build(input);
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].role, "system");
    assert_eq!(messages[0].content, prompt::SYSTEM);
    assert_eq!(messages[1].role, "user");
    messages[1].content.clone()
}

#[test]
fn an_assertion_in_the_test_shows_the_module_it_imports() {
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        (
            "shop.py",
            "import json\n\n\ndef total(prices, discount):\n    s = sum(prices)\n    return s - discount\n",
        ),
        (
            "test_shop.py",
            "from shop import total\n\n\ndef test_half_off():\n    assert total([10, 20], 0.5) == 15\n",
        ),
    ]);
    let failure = failure_of(&p);
    let previous = [Previous {
        diff: "--- a/shop.py\n+++ b/shop.py\n@@ -6 +6 @@\n-    return s - discount\n+    return s + discount\n".into(),
        outcome: "The test still fails: AssertionError: assert 30.5 == 15.\n".into(),
    }];
    let text = user_message(&PromptInput {
        root: &p.root,
        failure: &failure,
        probe: None,
        env: &env(),
        previous: &previous,
        allow_tests: false,
        spec: None,
        files: &[],
    });
    insta::assert_snapshot!("assertion_in_test", text);
}

#[test]
fn a_crash_in_a_long_module_shows_its_function_and_class_header() {
    let mut module = String::from("class Cart:\n    \"\"\"A cart.\"\"\"\n\n");
    for i in 0..30 {
        module.push_str(&format!(
            "    def helper_{i}(self):\n        return {i}\n\n"
        ));
    }
    module.push_str(
        "    @property\n    def first(self):\n        items = self.items\n        return items[0]\n",
    );
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("cart.py", &module),
        (
            "tests/test_cart.py",
            "from cart import Cart\n\n\ndef test_first():\n    c = Cart()\n    c.items = []\n    assert c.first is None\n",
        ),
    ]);
    let failure = failure_of(&p);
    let text = user_message(&PromptInput {
        root: &p.root,
        failure: &failure,
        probe: None,
        env: &Snapshot::default(),
        previous: &[],
        allow_tests: true,
        spec: None,
        files: &[],
    });
    insta::assert_snapshot!("crash_in_method", text);
}

#[test]
fn the_snapshot_asks_the_real_interpreter() {
    let p = project(&[
        ("m.py", "import json\nimport pytest\n"),
        ("data.csv", "a,b\n1,2\n3,4\n5,6\n"),
    ]);
    let python = selfdebug::runner::find_interpreter(&p.root, None).unwrap();
    let snap = prompt::snapshot(&python, &p.root, &["m.py".to_string()]);
    assert!(snap.python.starts_with("3."), "{snap:?}");
    // pytest is a distribution; json is the standard library's, not listed.
    assert_eq!(snap.packages.len(), 1, "{snap:?}");
    assert_eq!(snap.packages[0].0, "pytest");
    assert_eq!(snap.neighbours, vec!["data.csv: a,b | 1,2 | 3,4", "m.py"]);
}

#[test]
fn a_failed_output_check_shows_the_command_and_the_script() {
    // Command mode's failure of its own kind: exit 0, wrong output, no traceback and no test.
    let p = project(&[(
        "report.py",
        "import sys\n\n\ndef main(args):\n    print(len(args))\n\n\nmain(sys.argv)\n",
    )]);
    let failure = traceback::Failure {
        test: None,
        when: traceback::When::Call,
        outcome: traceback::Outcome::Failed,
        headline: None,
        style: traceback::TbStyle::Native,
        exc_type: "OutputMismatch".into(),
        msg: "stdout differs from expected.txt: got '3', expected '2'".into(),
        frames: Vec::new(),
        chain: Vec::new(),
        sub_exceptions: Vec::new(),
        location: None,
        rejected_frames: Vec::new(),
        summary: None,
    };
    let text = user_message(&PromptInput {
        root: &p.root,
        failure: &failure,
        probe: None,
        env: &Snapshot::default(),
        previous: &[],
        allow_tests: false,
        spec: Some("Command: python report.py a b\nExpected stdout (exact):\n2\n"),
        files: &["report.py".to_string()],
    });
    insta::assert_snapshot!("output_check", text);
}
