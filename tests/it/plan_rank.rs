//! Ranking of the rules' candidates (issue 33): edits that assign the missing value come before
//! guards that silence the failure; a default the code can use comes before a bare `.get(k)`;
//! a candidate that copies the failing test's expected literal into the code is dropped. Each
//! case plans a real traceback text against a temp project; the snapshots hold the ranked
//! candidates with their `silencing` word (reviewed), the assertions pin the order.

use selfdebug::plan::{literals, Candidate};
use selfdebug::traceback;

use crate::support::plans::{self, transform_cases, Case};

/// A snapshot's text: each candidate's title, rule, silencing word and diff, in rank order.
fn render(cands: &[Candidate]) -> String {
    let mut snap = String::new();
    for c in cands {
        let silencing = c
            .silencing
            .map_or(String::new(), |s| format!(", silencing: {s}"));
        snap.push_str(&format!(
            "## {} [{}{silencing}]\n{}\n",
            c.fix.title, c.fix.rule, c.diff
        ));
    }
    snap
}

/// Every candidate that silences comes after every one that does not.
fn assert_silencing_last(name: &str, cands: &[Candidate]) {
    let first_silencing = cands.iter().position(|c| c.silencing.is_some());
    if let Some(i) = first_silencing {
        assert!(
            cands[i..].iter().all(|c| c.silencing.is_some()),
            "{name}: a repairing candidate ranks after a silencing one:\n{}",
            render(cands)
        );
    }
}

/// The ranked candidates, checked and snapshotted.
fn check(name: &str, case: &Case) {
    let cands = plans::case_candidates(name, case);
    assert_silencing_last(name, &cands);
    insta::assert_snapshot!(name, render(&cands));
}

const REMINDERS: &[u8] = b"import time\n\n\nclass Reminders:\n    def __init__(self, clock=time.monotonic, grace=0):\n        self.clock = clock\n        self.grace = grace\n        self._pending = []\n        self.fired = []\n\n    def add(self, text, delay):\n        self._pending.append((self.clock() + delay, text))\n\n    def fire_due(self, when=None):\n        \"\"\"Move what is due at `when` (default: now) to `fired`; return it.\"\"\"\n        cutoff = when + self.grace\n        due = [t for at, t in self._pending if at <= cutoff]\n        self._pending = [p for p in self._pending if p[0] > cutoff]\n        self.fired.extend(due)\n        return due\n";

transform_cases! {
    check(Case::MOD) {
        // The lost `if when is None: when = self.clock()` comes back first; the guards that
        // leave the method without firing anything (it mutates `_pending` and `fired`) last.
        assign_before_guards_method {
            files: &[("mod.py", REMINDERS)],
            line: 16,
            func: Some("fire_due"),
            caret: Some("         ^^^^^^^^^^^^^^^^^"),
            exc: "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
            test_line: "assert mod.Reminders().fire_due() == []",
        }
        // A value another function assigns to the same name (a call site passes the same).
        assign_from_the_code_function {
            files: &[("mod.py", b"import time\n\n\ndef deadline(delay, start=None):\n    return start + delay\n\n\ndef schedule(task):\n    start = time.monotonic()\n    return task, deadline(5, start=start)\n")],
            line: 5,
            func: Some("deadline"),
            caret: Some("       ^^^^^^^^^^^^^"),
            exc: "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
            test_line: "assert mod.deadline(5) > 0",
        }
        // `return None` where the function returns a number: a foreign value, after the
        // or-default.
        foreign_none_after_or_default {
            files: &[("mod.py", b"def total(prices):\n    return round(sum(prices), 2)\n")],
            line: 2,
            func: Some("total"),
            caret: Some("             ^^^^^^^^^^^"),
            exc: "TypeError: 'NoneType' object is not iterable",
            test_line: "assert mod.total(None) == 0",
        }
        // The module gives the key its value elsewhere (`DEFAULTS`): that default first, and a
        // bare `.get("sep")` (a None for `.split(sep)` two calls later) last.
        key_module_default_before_bare_get {
            files: &[("mod.py", b"DEFAULTS = {\"sep\": \",\", \"quote\": '\"'}\n\n\ndef separator(options):\n    return options[\"sep\"]\n")],
            line: 5,
            func: Some("separator"),
            caret: None,
            exc: "KeyError: 'sep'",
            test_line: "assert mod.separator({})",
        }
        // The function's other exit returns `""`: that types the value, and no bare
        // `.get(key)` is proposed.
        key_other_return_types_the_default {
            files: &[("mod.py", b"def option(options, key):\n    if not options:\n        return \"\"\n    return options[key]\n")],
            line: 4,
            func: Some("option"),
            caret: None,
            exc: "KeyError: 'sep'",
            test_line: "assert mod.option({\"x\": 1}, \"sep\")",
        }
        // Nothing types the value (the test wants `None`): a bare `.get(key)` is the repair.
        key_bare_get_when_nothing_types_it {
            files: &[("mod.py", b"def level(settings):\n    return settings[\"level\"]\n")],
            line: 2,
            func: Some("level"),
            caret: None,
            exc: "KeyError: 'level'",
            test_line: "assert mod.level({}) is None",
        }
        // What the function declares it returns types the default: `""` before a bare `.get`.
        key_declared_default_before_bare_get {
            files: &[("mod.py", b"def separator(options) -> str:\n    return options[\"sep\"]\n")],
            line: 2,
            func: Some("separator"),
            caret: None,
            exc: "KeyError: 'sep'",
            test_line: "assert mod.separator({})",
        }
    }
}

#[test]
fn the_assignment_ranks_before_every_guard() {
    let case = Case {
        files: &[("mod.py", REMINDERS)],
        line: 16,
        func: Some("fire_due"),
        caret: Some("         ^^^^^^^^^^^^^^^^^"),
        exc: "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
        test_line: "assert mod.Reminders().fire_due() == []",
        ..Case::MOD
    };
    let cands = plans::case_candidates("assign", &case);
    assert_eq!(
        cands[0].fix.title,
        "give `when` its default when None: `self.clock()` (as the class computes it elsewhere)"
    );
    assert_eq!(cands[0].silencing, None);
    let guards: Vec<usize> = cands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.fix.title.starts_with("return"))
        .map(|(i, _)| i)
        .collect();
    assert!(!guards.is_empty(), "{}", render(&cands));
    for i in guards {
        assert_eq!(
            cands[i].silencing.map(|s| s.as_str()),
            Some("skips_work"),
            "{}",
            cands[i].fix.title
        );
    }
}

#[test]
fn a_call_made_for_its_effect_is_no_default() {
    let case = Case {
        files: &[("mod.py", b"class Timer:\n    def restart(self):\n        self.reset()\n\n    def reset(self):\n        self.start = 0\n\n    def elapsed(self, now=None):\n        return now - self.start\n")],
        line: 9,
        func: Some("elapsed"),
        caret: Some("       ^^^^^^^^^^^^^^^^"),
        exc: "TypeError: unsupported operand type(s) for -: 'NoneType' and 'int'",
        test_line: "assert mod.Timer().elapsed() >= 0",
        ..Case::MOD
    };
    let cands = plans::case_candidates("effect", &case);
    assert!(
        cands.iter().all(|c| !c.fix.title.starts_with("give")),
        "{}",
        render(&cands)
    );
}

/// The candidates of `case` left after the test-literal filter, and those it dropped.
fn filtered(name: &str, case: &Case) -> (Vec<Candidate>, Vec<(String, String)>) {
    let (dir, log) = plans::project(case);
    let cands = plans::candidates(name, dir.path(), &log, case.file, case.line);
    let parsed = traceback::parse(&log, dir.path()).unwrap();
    let test = literals::test_literals(&parsed.failures[0]);
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for c in cands {
        match literals::copied_literal(&c, &test) {
            Some(l) => dropped.push((c.fix.title.clone(), l.repr())),
            None => kept.push(c),
        }
    }
    (kept, dropped)
}

#[test]
fn a_default_copied_from_the_test_is_dropped() {
    let case = Case {
        files: &[(
            "mod.py",
            b"def greeting(names, key):\n    return names[key]\n",
        )],
        line: 2,
        func: Some("greeting"),
        exc: "KeyError: 'ann'",
        test_line: "assert mod.greeting({}, \"ann\") == \"hi\"",
        ..Case::MOD
    };
    let (kept, dropped) = filtered("copied", &case);
    let hi = || "\"hi\"".to_string();
    assert_eq!(
        dropped,
        [
            (
                "use `names.get(key, \"hi\")`: `\"hi\"` when the key is missing".to_string(),
                hi()
            ),
            (
                "return \"hi\" early when key is not in `names`".to_string(),
                hi()
            )
        ]
    );
    assert!(!kept.is_empty());
    assert!(
        kept.iter().all(|c| !c.diff.contains("\"hi\"")),
        "{}",
        render(&kept)
    );
}

#[test]
fn a_literal_the_module_already_holds_is_kept() {
    let case = Case {
        files: &[(
            "mod.py",
            b"FALLBACK = \"hi\"\n\n\ndef greeting(names, key):\n    return names[key]\n",
        )],
        line: 5,
        func: Some("greeting"),
        exc: "KeyError: 'ann'",
        test_line: "assert mod.greeting({}, \"ann\") == \"hi\"",
        ..Case::MOD
    };
    let (kept, dropped) = filtered("held", &case);
    assert!(dropped.is_empty(), "{dropped:?}");
    assert_eq!(
        kept[0].fix.title,
        "use `names.get(key, \"hi\")`: `\"hi\"` when the key is missing"
    );
}

#[test]
fn empty_values_are_the_types_not_the_tests() {
    let case = Case {
        files: &[("mod.py", b"def count(words):\n    return len(words)\n")],
        line: 2,
        func: Some("count"),
        caret: Some("       ^^^^^^^^^^"),
        exc: "TypeError: object of type 'NoneType' has no len()",
        test_line: "assert mod.count(None) == 0",
        ..Case::MOD
    };
    let (kept, dropped) = filtered("empty", &case);
    assert!(dropped.is_empty(), "{dropped:?}");
    assert!(
        kept.iter().any(|c| c.diff.contains("return 0")),
        "{}",
        render(&kept)
    );
}

#[test]
fn a_dict_of_data_is_no_table_of_defaults() {
    let case = Case {
        files: &[(
            "mod.py",
            b"ROWS = [{\"price\": 3}, {\"name\": \"gift\"}]\n\n\ndef total(rows):\n    return sum(row[\"price\"] for row in rows)\n",
        )],
        line: 5,
        func: Some("total"),
        exc: "KeyError: 'price'",
        test_line: "assert mod.total(mod.ROWS) == 3",
        ..Case::MOD
    };
    let cands = plans::case_candidates("data", &case);
    assert_eq!(
        cands[0].fix.title,
        "use `row.get(\"price\", 0)`: `0` when the key is missing"
    );
    assert!(
        cands.iter().all(|c| !c.diff.contains("\"price\", 3")),
        "{}",
        render(&cands)
    );
}
