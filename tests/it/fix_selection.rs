//! A narrow selection (the failing test's node id, how an agent or a CI job that reruns failures
//! calls it) proves a candidate only with the tests outside it that run the edited lines: one
//! coverage run on the original bytes finds them, and a candidate that breaks any is rejected.

use crate::support;

use support::project::{assert_same, json, project, snapshot, Project};

const SHELF: &str = "class Shelf:\n    \"\"\"A shelf that holds up to `capacity` items.\"\"\"\n\n    def __init__(self, capacity):\n        self._capacity = capacity\n        self._items = []\n\n    def has_room(self, n=1):\n        return len(self._items) + n < self._capacity\n\n    def put(self, item):\n        if not self.has_room():\n            raise OverflowError(\"the shelf is full\")\n        self._items.append(item)\n\n    def __len__(self):\n        return len(self._items)\n";

/// Tests outside the selection: every one runs `has_room` (through `put`), and passes on the
/// original code.
const PUT_TESTS: &str = "import pytest\n\nfrom shelf import Shelf\n\n\ndef test_no_room_for_three_more():\n    s = Shelf(3)\n    s.put(\"a\")\n    assert not s.has_room(3)\n\n\ndef test_empty_shelf_has_room():\n    assert Shelf(3).has_room()\n\n\ndef test_put_keeps_items():\n    s = Shelf(5)\n    s.put(\"a\")\n    s.put(\"b\")\n    assert len(s) == 2\n\n\ndef test_put_on_a_full_shelf_raises():\n    s = Shelf(2)\n    with pytest.raises(OverflowError):\n        for item in \"abc\":\n            s.put(item)\n";

fn shelf(code: &str, room_tests: &str, more_put_tests: &str) -> Project {
    project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("shelf.py", code),
        ("tests/test_room.py", room_tests),
        ("tests/test_put.py", &format!("{PUT_TESTS}{more_put_tests}")),
    ])
}

#[test]
fn the_right_fix_passes_the_selection_and_the_tests_outside_it() {
    let p = shelf(
        SHELF,
        "from shelf import Shelf\n\n\ndef test_room_for_the_last_item():\n    s = Shelf(2)\n    s.put(\"a\")\n    assert s.has_room()\n",
        "",
    );
    let out = p.run(&[
        "fix",
        "--json",
        "--search-time",
        "900",
        "--",
        "tests/test_room.py::test_room_for_the_last_item",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(
        p.read("shelf.py"),
        SHELF.replace("+ n < self", "+ n <= self")
    );
    let v = json(&out);
    let kept: Vec<&serde_json::Value> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["outcome"] == "accepted")
        .collect();
    assert_eq!(kept.len(), 1, "{v}");
    assert_eq!(
        kept[0]["proof"],
        serde_json::json!({"selected": 1, "outside": 4, "outside_failed": []})
    );
    assert!(
        stderr.contains(
            "proven: the selected test passes; 4 other tests that run the edited lines pass"
        ),
        "{stderr}"
    );
}

#[test]
fn a_candidate_that_breaks_tests_outside_the_selection_is_rejected() {
    // The code is right; the selected test pins the opposite of a test outside the selection,
    // so every edit that passes it breaks that test (and others that share the method).
    let code = SHELF.replace("+ n < self", "+ n <= self");
    let p = shelf(
        &code,
        "from shelf import Shelf\n\n\ndef test_full_shelf_takes_one_more():\n    s = Shelf(2)\n    s.put(\"a\")\n    s.put(\"b\")\n    assert s.has_room()\n",
        "\n\ndef test_full_shelf_has_no_room():\n    s = Shelf(2)\n    s.put(\"a\")\n    s.put(\"b\")\n    assert not s.has_room()\n",
    );
    let before = snapshot(&p.root);
    let out = p.run(&[
        "fix",
        "--json",
        "--search-time",
        "900",
        "--",
        "tests/test_room.py::test_full_shelf_takes_one_more",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    let attempts = v["attempt_records"].as_array().unwrap();
    assert!(attempts.iter().all(|a| a["outcome"] != "accepted"), "{v}");
    // `+ n` → `- n` passes the selected test: the tests outside it that ran line 9 say no.
    let minus = attempts
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .starts_with("`+` → `-` at shelf.py:9")
        })
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(minus["outcome"], "new_failures");
    let broken = serde_json::json!([
        "tests/test_put.py::test_full_shelf_has_no_room",
        "tests/test_put.py::test_no_room_for_three_more",
        "tests/test_put.py::test_put_on_a_full_shelf_raises"
    ]);
    assert_eq!(minus["broke"], broken);
    assert_eq!(
        minus["proof"],
        serde_json::json!({"selected": 1, "outside": 5, "outside_failed": broken})
    );
    assert!(
        stderr.contains(
            "rejected: the selected test passes, but it breaks \
             tests/test_put.py::test_full_shelf_has_no_room, \
             tests/test_put.py::test_no_room_for_three_more, \
             tests/test_put.py::test_put_on_a_full_shelf_raises outside the selection (of 5 \
             tests there that run the edited lines)"
        ),
        "{stderr}"
    );
}
