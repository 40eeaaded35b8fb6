//! Computed "Did you mean" end to end: pytest (long style, whose messages carry no hint on
//! Python 3.11 and none for a `NameError` on any version) fails, `selfdebug fix --dry-run`
//! probes, computes CPython's suggestion, and the proven patch comes from the safe rule.

use crate::support;

use support::project::{json, project};

/// Runs `fix --dry-run --safe-only --json` (safe rules only: a computed hint must be safe).
fn fix(files: &[(&str, &str)]) -> serde_json::Value {
    let p = project(files);
    let out = p.run(&["fix", "--dry-run", "--safe-only", "--json"]);
    support::assert_exit(&out, 0);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    json(&out)
}

fn one_patch(v: &serde_json::Value) -> (&str, &str) {
    let patches = v["patches"].as_array().unwrap();
    assert_eq!(patches.len(), 1, "{v:#}");
    assert_eq!(patches[0]["applicability"], "safe");
    let rules = patches[0]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    (
        rules[0].as_str().unwrap(),
        patches[0]["diff"].as_str().unwrap(),
    )
}

#[test]
fn a_name_typo_gets_the_computed_hint() {
    let v = fix(&[
        (
            "stats.py",
            "def total(items):\n    count = len(items)\n    return cont * 2\n",
        ),
        (
            "test_stats.py",
            "from stats import total\n\n\ndef test_total():\n    assert total([1, 2]) == 4\n",
        ),
    ]);
    let (rule, diff) = one_patch(&v);
    assert_eq!(rule, "name-did-you-mean");
    assert_eq!(
        diff,
        "--- a/stats.py\n+++ b/stats.py\n@@ -1,3 +1,3 @@\n def total(items):\n     count = len(items)\n-    return cont * 2\n+    return count * 2\n"
    );
}

#[test]
fn an_attribute_typo_gets_the_hint_computed_from_dir() {
    // `self.total` is assigned in another method; the probe's `dir(self)` has it by then.
    let v = fix(&[
        (
            "cart.py",
            "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def reset(self):\n        self.total = 0\n\n    def add(self, price):\n        self.reset()\n        self.totl += price\n        return self.total\n",
        ),
        (
            "test_cart.py",
            "from cart import Cart\n\n\ndef test_add():\n    assert Cart().add(3) == 3\n",
        ),
    ]);
    let (rule, diff) = one_patch(&v);
    assert_eq!(rule, "attr-did-you-mean");
    assert_eq!(
        diff,
        "--- a/cart.py\n+++ b/cart.py\n@@ -7,5 +7,5 @@\n \n     def add(self, price):\n         self.reset()\n-        self.totl += price\n+        self.total += price\n         return self.total\n"
    );
}

#[test]
fn an_unexpected_keyword_of_a_stdlib_function_gets_the_computed_hint() {
    let v = fix(&[
        (
            "dump.py",
            "import json\n\n\ndef dump(data):\n    return json.dumps(data, indnt=2)\n",
        ),
        (
            "test_dump.py",
            "from dump import dump\n\n\ndef test_dump():\n    assert dump([1]) == '[\\n  1\\n]'\n",
        ),
    ]);
    let (rule, diff) = one_patch(&v);
    assert_eq!(rule, "type-keyword-did-you-mean");
    assert_eq!(
        diff,
        "--- a/dump.py\n+++ b/dump.py\n@@ -2,4 +2,4 @@\n \n \n def dump(data):\n-    return json.dumps(data, indnt=2)\n+    return json.dumps(data, indent=2)\n"
    );
}

/// An attribute that `dir()` lacks at the failure (assigned in a method that has not run) is a
/// candidate too: the computed hint is what Python suggests once it exists.
#[test]
fn an_attribute_not_yet_assigned_is_a_candidate() {
    use selfdebug::plan::{self, PlanInput};
    use selfdebug::probe::DirNames;
    use selfdebug::rules::RuleSet;
    use selfdebug::transform::ProbeFacts;

    let src = "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def reset(self):\n        self.total = 0\n\n    def add(self, price):\n        self.totl += price\n";
    let p = project(&[("cart.py", src)]);
    let log = format!(
        "Traceback (most recent call last):\n  File \"{r}/cart.py\", line 9, in add\n    self.totl += price\nAttributeError: 'Cart' object has no attribute 'totl'\n",
        r = p.root.display()
    );
    let parsed = selfdebug::traceback::parse(log.as_bytes(), &p.root).unwrap();
    let at = src.find("self.totl").unwrap();
    let dir: Vec<String> = ["__class__", "__init__", "add", "items", "reset"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let facts = ProbeFacts {
        python_version: Some((3, 11)),
        dirs: vec![(
            at..at + 4,
            DirNames {
                total: dir.len(),
                names: dir,
                is_self: true,
            },
        )],
        ..ProbeFacts::default()
    };
    let rules = RuleSet::builtin().unwrap();
    let cands = plan::plan(&PlanInput {
        root: &p.root,
        failure: &parsed.failures[0],
        rules: &rules,
        probe: Some(&facts),
        allow_tests: false,
        stdlib: support::plans::stdlib(),
    })
    .unwrap();
    assert_eq!(cands[0].fix.rule, "attr-did-you-mean");
    assert!(cands[0].safe);
    assert_eq!(
        String::from_utf8(cands[0].patched.clone()).unwrap(),
        src.replace("self.totl", "self.total")
    );
    // Without the probe's dir() the safe rule proposes nothing.
    let cands = plan::plan(&PlanInput {
        root: &p.root,
        failure: &parsed.failures[0],
        rules: &rules,
        probe: None,
        allow_tests: false,
        stdlib: support::plans::stdlib(),
    })
    .unwrap();
    assert!(cands.iter().all(|c| c.fix.rule != "attr-did-you-mean"));
}
