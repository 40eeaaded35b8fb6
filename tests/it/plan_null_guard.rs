//! The null-guard family end to end up to the proposed patches: a real traceback text is
//! parsed, the file is located and read exactly, the rules match and the transform proposes.
//! Snapshots hold every candidate's diff (reviewed); the byte checks prove nothing outside the
//! edits changes, in CRLF, tab-indented, BOM and latin-1 files.

use crate::support;

use support::plans;

use selfdebug::plan::{self, PlanInput};
use selfdebug::rules::RuleSet;
use selfdebug::traceback;

struct Case {
    name: &'static str,
    /// The module under test, exact bytes.
    module: &'static [u8],
    /// 1-based line that fails, and its function.
    line: u32,
    func: &'static str,
    /// Caret line under the code as CPython prints it (relative to the stripped code), if any.
    caret: Option<&'static str>,
    exc: &'static str,
    /// The test's assertion, printed as the outermost frame.
    test_line: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "attribute_return_lf",
        module: b"def to_upper(text):\n    \"\"\"Upper-case words.\"\"\"\n    return text.upper()\n",
        line: 3,
        func: "to_upper",
        caret: Some("       ^^^^^^^^^^"),
        exc: "AttributeError: 'NoneType' object has no attribute 'upper'",
        test_line: "assert mod.to_upper(None) == \"\"",
    },
    Case {
        name: "attribute_crlf_comments",
        module: b"import re\r\n\r\n\r\ndef words(text):\r\n    # split on whitespace\r\n    parts = text.split(  # any run of blanks\r\n        None\r\n    )  # trailing\r\n    return [p for p in parts if p]\r\n",
        line: 6,
        func: "words",
        caret: Some("        ^^^^^^^^^^"),
        exc: "AttributeError: 'NoneType' object has no attribute 'split'",
        test_line: "assert mod.words(None) == []",
    },
    Case {
        name: "attribute_method_tabs",
        module: b"class Account:\n\tdef __init__(self, user=None):\n\t\tself.user = user\n\n\tdef display_name(self):\n\t\treturn self.user.name.title()\n",
        line: 6,
        func: "display_name",
        caret: Some("       ^^^^^^^^^^^^^^"),
        exc: "AttributeError: 'NoneType' object has no attribute 'name'",
        test_line: "assert mod.Account().display_name() == \"\"",
    },
    Case {
        name: "subscript_bom",
        module: b"\xef\xbb\xbfdef first(rows):\n    head = rows[0]\n    return head\n",
        line: 2,
        func: "first",
        caret: Some("       ^^^^^^^"),
        exc: "TypeError: 'NoneType' object is not subscriptable",
        test_line: "assert mod.first(None) is None",
    },
    Case {
        name: "iterate_latin1_loop",
        module: b"# -*- coding: latin-1 -*-\n# caf\xe9 prices\ndef total(prices):\n    result = 0\n    for p in prices:\n        result += p\n    return result\n",
        line: 5,
        func: "total",
        caret: None,
        exc: "TypeError: 'NoneType' object is not iterable",
        test_line: "assert mod.total(None) == 0",
    },
    Case {
        name: "membership_in_if",
        module: b"def allowed(name, allow):\n    if name in allow:\n        return True\n    return False\n",
        line: 2,
        func: "allowed",
        caret: Some("   ^^^^^^^^^^^^^"),
        exc: "TypeError: argument of type 'NoneType' is not iterable",
        test_line: "assert mod.allowed(\"x\", None) is False",
    },
    Case {
        name: "len_with_pep701_fstring_elsewhere",
        module: b"def label(names):\n    return f\"{\", \".join(names)}\"\n\n\ndef count(names):\n    return len(names)\n",
        line: 6,
        func: "count",
        caret: Some("       ^^^^^^^^^^"),
        exc: "TypeError: object of type 'NoneType' has no len()",
        test_line: "assert mod.count(None) == 0",
    },
    Case {
        name: "binop_left_none",
        module: b"def price(order, fee):\n    base = order.get(\"price\")\n    return base + fee\n",
        line: 3,
        func: "price",
        caret: Some("       ^^^^^^^^^^"),
        exc: "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
        test_line: "assert mod.price({}, 2) == 2",
    },
    Case {
        name: "binop_right_none_augassign",
        module: b"def grow(total, extra):\n    total += extra\n    return total\n",
        line: 2,
        func: "grow",
        caret: None,
        exc: "TypeError: unsupported operand type(s) for +=: 'int' and 'NoneType'",
        test_line: "assert mod.grow(1, None) == 1",
    },
    Case {
        name: "call_none_callback",
        module: b"def notify(event, callback=None):\n    result = callback(event)\n    return result\n",
        line: 2,
        func: "notify",
        caret: Some("         ^^^^^^^^^^^^^^^"),
        exc: "TypeError: 'NoneType' object is not callable",
        test_line: "assert mod.notify(\"x\") is None",
    },
    Case {
        name: "compare_left_returned_crlf",
        module: b"class Reading:\r\n    def __init__(self, value=None):\r\n        self.value = value\r\n\r\n    def is_above(self, threshold):\r\n        return self.value > threshold\r\n",
        line: 6,
        func: "is_above",
        caret: Some("       ^^^^^^^^^^^^^^^^^^^^^^"),
        exc: "TypeError: '>' not supported between instances of 'NoneType' and 'int'",
        test_line: "assert mod.Reading().is_above(3) == False",
    },
    Case {
        name: "compare_right_chained_in_loop",
        module: b"def in_range(values, low, high):\n    out = []\n    for v in values:\n        if low <= v.level < high:\n            out.append(v)\n    return out\n",
        line: 4,
        func: "in_range",
        caret: None,
        exc: "TypeError: '<=' not supported between instances of 'int' and 'NoneType'",
        test_line: "assert mod.in_range([V(None)], 0, 5) == []",
    },
    Case {
        name: "unpack_attribute_tabs",
        module: b"class Span:\n\tdef __init__(self, bounds=None):\n\t\tself.bounds = bounds\n\n\tdef width(self):\n\t\tstart, end = self.bounds\n\t\treturn end - start\n",
        line: 6,
        func: "width",
        caret: None,
        exc: "TypeError: cannot unpack non-iterable NoneType object",
        test_line: "assert mod.Span().width() == 0",
    },
    Case {
        name: "join_comprehension_wants_text_none",
        module: b"def row(cells):\n    return \",\".join([c.value for c in cells if c.shown])\n",
        line: 2,
        func: "row",
        caret: None,
        exc: "TypeError: sequence item 0: expected str instance, NoneType found",
        test_line: "assert mod.row([C(None)]) == \"None\"",
    },
    Case {
        name: "iterate_inside_sum_call",
        module: b"class Cart:\n    def __init__(self, prices=None):\n        self.prices = prices\n\n    def total(self):\n        return round(sum(self.prices), 2)\n",
        line: 6,
        func: "total",
        caret: None,
        exc: "TypeError: 'NoneType' object is not iterable",
        test_line: "assert mod.Cart().total() == 0",
    },
    Case {
        name: "sort_key_lambda_reverse_crlf",
        module: b"class Board:\r\n    def __init__(self, players):\r\n        self._players = players\r\n\r\n    def leaders(self):\r\n        # best first\r\n        return sorted(self._players, key=lambda p: p.score, reverse=True)\r\n",
        line: 7,
        func: "leaders",
        caret: None,
        exc: "TypeError: '<' not supported between instances of 'NoneType' and 'int'",
        test_line: "assert mod.Board([P(None)]).leaders() == []",
    },
    Case {
        name: "sort_in_place_without_key",
        module: b"def ordered(values):\n    values.sort()\n    return values\n",
        line: 2,
        func: "ordered",
        caret: None,
        exc: "TypeError: '<' not supported between instances of 'int' and 'NoneType'",
        test_line: "assert mod.ordered([2, None, 1]) == [1, 2, None]",
    },
    Case {
        name: "index_of_none_returned",
        module: b"class Cursor:\n    def __init__(self, rows):\n        self._rows = rows\n        self._at = None\n\n    def offset(self):\n        return self._rows.index(self._at)\n",
        line: 7,
        func: "offset",
        caret: Some("       ^^^^^^^^^^^^^^^^^^^^^^^^^^"),
        exc: "ValueError: None is not in list",
        test_line: "assert mod.Cursor([1]).offset() is None",
    },
    Case {
        name: "yield_from_none_tabs",
        module: b"class Tree:\n\tdef __init__(self, kids=None):\n\t\tself.kids = kids\n\n\tdef walk(self):\n\t\tyield self\n\t\tyield from self.kids\n",
        line: 7,
        func: "walk",
        caret: None,
        exc: "TypeError: 'NoneType' object is not iterable",
        test_line: "assert len(list(mod.Tree().walk())) == 1",
    },
    Case {
        name: "unpack_for_target",
        module: b"def table(rows):\n    out = {}\n    for key, value in rows:  # pairs from the parser\n        out[key] = value\n    return out\n",
        line: 3,
        func: "table",
        caret: None,
        exc: "TypeError: cannot unpack non-iterable NoneType object",
        test_line: "assert mod.table([None]) == {}",
    },
    Case {
        name: "unpack_computed_value_in_loop_crlf",
        module: b"def spans(lines):\r\n    out = []\r\n    for line in lines:\r\n        # start and end, or None\r\n        start, end = parse_span(\r\n            line\r\n        )\r\n        out.append(end - start)\r\n    return out\r\n",
        line: 5,
        func: "spans",
        caret: None,
        exc: "TypeError: cannot unpack non-iterable NoneType object",
        test_line: "assert mod.spans([\"x\"]) == []",
    },
    Case {
        name: "attribute_in_loop_one_line_if",
        module: b"def names(users):\n    out = []\n    for u in users:\n        if u.active: out.append(u.profile.name)\n    return out\n",
        line: 4,
        func: "names",
        caret: None,
        exc: "AttributeError: 'NoneType' object has no attribute 'name'",
        test_line: "assert mod.names([U()]) == []",
    },
];

/// Writes the case's project (module + a test file) and a native traceback of its failure.
fn project(case: &Case) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("mod.py"), case.module).unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    let test_src = format!("import mod\n\n\ndef test_it():\n    {}\n", case.test_line);
    std::fs::write(root.join("tests/test_mod.py"), test_src).unwrap();
    let text = selfdebug::source::SourceFile::from_bytes("mod.py", case.module.to_vec()).unwrap();
    let code = text
        .line_text(case.line as usize)
        .unwrap()
        .trim()
        .to_string();
    let mut log = format!(
        "Traceback (most recent call last):\n  File \"{r}/tests/test_mod.py\", line 5, in test_it\n    {t}\n  File \"{r}/mod.py\", line {l}, in {f}\n    {code}\n",
        r = root.display(),
        t = case.test_line,
        l = case.line,
        f = case.func,
    );
    if let Some(c) = case.caret {
        log.push_str(&format!("    {c}\n"));
    }
    log.push_str(case.exc);
    log.push('\n');
    (dir, log.into_bytes())
}

#[test]
fn null_guard_candidates() {
    for case in CASES {
        let (dir, log) = project(case);
        let cands = plans::candidates(case.name, dir.path(), &log, "mod.py", case.line);
        assert!(!cands.is_empty(), "{}: no candidate", case.name);
        let mut snap = String::new();
        for c in &cands {
            plans::assert_outside_edits_identical(case.name, c);
            snap.push_str(&format!(
                "## {} [{}]\n{}\n",
                c.fix.title, c.fix.rule, c.diff
            ));
        }
        insta::assert_snapshot!(case.name, snap);
    }
}

#[test]
fn unknown_failure_has_no_rule() {
    let case = &CASES[0];
    let (dir, _) = project(case);
    let log = format!(
        "Traceback (most recent call last):\n  File \"{}/mod.py\", line 3, in to_upper\n    return text.upper()\nRuntimeError: the upper-casing service is down\n",
        dir.path().display()
    );
    let parsed = traceback::parse(log.as_bytes(), dir.path()).unwrap();
    let rules = RuleSet::builtin().unwrap();
    let err = plan::plan(&PlanInput {
        root: dir.path(),
        failure: &parsed.failures[0],
        rules: &rules,
        probe: None,
        allow_tests: false,
        stdlib: support::plans::stdlib(),
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no rule matches RuntimeError: the upper-casing service is down"
    );
}
