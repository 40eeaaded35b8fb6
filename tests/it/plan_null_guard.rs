//! The null-guard family end to end up to the proposed patches: a real traceback text is
//! parsed, the file is located and read exactly, the rules match and the transform proposes.
//! Snapshots hold every candidate's diff (reviewed); the byte checks prove nothing outside the
//! edits changes, in CRLF, tab-indented, BOM and latin-1 files.

use selfdebug::plan::{self, PlanInput};
use selfdebug::rules::RuleSet;
use selfdebug::traceback;

use crate::support::plans::{self, transform_cases, Case};
use crate::support::project::project;

/// The case's candidates in rank order, each as a snapshot (reviewed).
fn check(name: &str, case: &Case) {
    let cands = plans::case_candidates(name, case);
    insta::assert_snapshot!(name, plans::render(&cands, false));
}

transform_cases! {
    check(Case::MOD) {
        attribute_return_lf {
            files: &[("mod.py", b"def to_upper(text):\n    \"\"\"Upper-case words.\"\"\"\n    return text.upper()\n")],
            line: 3,
            func: Some("to_upper"),
            caret: Some("       ^^^^^^^^^^"),
            exc: "AttributeError: 'NoneType' object has no attribute 'upper'",
            test_line: "assert mod.to_upper(None) == \"\"",
        }
        // The returned value is computed further from the failing call (`[0]`): the guard
        // returning the test's expected value comes before the or-default, whose result
        // (`"".split()[0]`, an IndexError) nothing before a run vouches for.
        attribute_return_computed_further {
            files: &[("mod.py", b"def headline(text):\n    return text.split()[0]\n")],
            line: 2,
            func: Some("headline"),
            caret: Some("           ^^^^^^^^^^"),
            exc: "AttributeError: 'NoneType' object has no attribute 'split'",
            test_line: "assert headline(None) == ''",
        }
        attribute_crlf_comments {
            files: &[("mod.py", b"import re\r\n\r\n\r\ndef words(text):\r\n    # split on whitespace\r\n    parts = text.split(  # any run of blanks\r\n        None\r\n    )  # trailing\r\n    return [p for p in parts if p]\r\n")],
            line: 6,
            func: Some("words"),
            caret: Some("        ^^^^^^^^^^"),
            exc: "AttributeError: 'NoneType' object has no attribute 'split'",
            test_line: "assert mod.words(None) == []",
        }
        attribute_method_tabs {
            files: &[("mod.py", b"class Account:\n\tdef __init__(self, user=None):\n\t\tself.user = user\n\n\tdef display_name(self):\n\t\treturn self.user.name.title()\n")],
            line: 6,
            func: Some("display_name"),
            caret: Some("       ^^^^^^^^^^^^^^"),
            exc: "AttributeError: 'NoneType' object has no attribute 'name'",
            test_line: "assert mod.Account().display_name() == \"\"",
        }
        subscript_bom {
            files: &[("mod.py", b"\xef\xbb\xbfdef first(rows):\n    head = rows[0]\n    return head\n")],
            line: 2,
            func: Some("first"),
            caret: Some("       ^^^^^^^"),
            exc: "TypeError: 'NoneType' object is not subscriptable",
            test_line: "assert mod.first(None) is None",
        }
        iterate_latin1_loop {
            files: &[("mod.py", b"# -*- coding: latin-1 -*-\n# caf\xe9 prices\ndef total(prices):\n    result = 0\n    for p in prices:\n        result += p\n    return result\n")],
            line: 5,
            func: Some("total"),
            caret: None,
            exc: "TypeError: 'NoneType' object is not iterable",
            test_line: "assert mod.total(None) == 0",
        }
        membership_in_if {
            files: &[("mod.py", b"def allowed(name, allow):\n    if name in allow:\n        return True\n    return False\n")],
            line: 2,
            func: Some("allowed"),
            caret: Some("   ^^^^^^^^^^^^^"),
            exc: "TypeError: argument of type 'NoneType' is not iterable",
            test_line: "assert mod.allowed(\"x\", None) is False",
        }
        len_with_pep701_fstring_elsewhere {
            files: &[("mod.py", b"def label(names):\n    return f\"{\", \".join(names)}\"\n\n\ndef count(names):\n    return len(names)\n")],
            line: 6,
            func: Some("count"),
            caret: Some("       ^^^^^^^^^^"),
            exc: "TypeError: object of type 'NoneType' has no len()",
            test_line: "assert mod.count(None) == 0",
        }
        binop_left_none {
            files: &[("mod.py", b"def price(order, fee):\n    base = order.get(\"price\")\n    return base + fee\n")],
            line: 3,
            func: Some("price"),
            caret: Some("       ^^^^^^^^^^"),
            exc: "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
            test_line: "assert mod.price({}, 2) == 2",
        }
        binop_right_none_augassign {
            files: &[("mod.py", b"def grow(total, extra):\n    total += extra\n    return total\n")],
            line: 2,
            func: Some("grow"),
            caret: None,
            exc: "TypeError: unsupported operand type(s) for +=: 'int' and 'NoneType'",
            test_line: "assert mod.grow(1, None) == 1",
        }
        call_none_callback {
            files: &[("mod.py", b"def notify(event, callback=None):\n    result = callback(event)\n    return result\n")],
            line: 2,
            func: Some("notify"),
            caret: Some("         ^^^^^^^^^^^^^^^"),
            exc: "TypeError: 'NoneType' object is not callable",
            test_line: "assert mod.notify(\"x\") is None",
        }
        compare_left_returned_crlf {
            files: &[("mod.py", b"class Reading:\r\n    def __init__(self, value=None):\r\n        self.value = value\r\n\r\n    def is_above(self, threshold):\r\n        return self.value > threshold\r\n")],
            line: 6,
            func: Some("is_above"),
            caret: Some("       ^^^^^^^^^^^^^^^^^^^^^^"),
            exc: "TypeError: '>' not supported between instances of 'NoneType' and 'int'",
            test_line: "assert mod.Reading().is_above(3) == False",
        }
        compare_right_chained_in_loop {
            files: &[("mod.py", b"def in_range(values, low, high):\n    out = []\n    for v in values:\n        if low <= v.level < high:\n            out.append(v)\n    return out\n")],
            line: 4,
            func: Some("in_range"),
            caret: None,
            exc: "TypeError: '<=' not supported between instances of 'int' and 'NoneType'",
            test_line: "assert mod.in_range([V(None)], 0, 5) == []",
        }
        unpack_attribute_tabs {
            files: &[("mod.py", b"class Span:\n\tdef __init__(self, bounds=None):\n\t\tself.bounds = bounds\n\n\tdef width(self):\n\t\tstart, end = self.bounds\n\t\treturn end - start\n")],
            line: 6,
            func: Some("width"),
            caret: None,
            exc: "TypeError: cannot unpack non-iterable NoneType object",
            test_line: "assert mod.Span().width() == 0",
        }
        join_comprehension_wants_text_none {
            files: &[("mod.py", b"def row(cells):\n    return \",\".join([c.value for c in cells if c.shown])\n")],
            line: 2,
            func: Some("row"),
            caret: None,
            exc: "TypeError: sequence item 0: expected str instance, NoneType found",
            test_line: "assert mod.row([C(None)]) == \"None\"",
        }
        iterate_inside_sum_call {
            files: &[("mod.py", b"class Cart:\n    def __init__(self, prices=None):\n        self.prices = prices\n\n    def total(self):\n        return round(sum(self.prices), 2)\n")],
            line: 6,
            func: Some("total"),
            caret: None,
            exc: "TypeError: 'NoneType' object is not iterable",
            test_line: "assert mod.Cart().total() == 0",
        }
        sort_key_lambda_reverse_crlf {
            files: &[("mod.py", b"class Board:\r\n    def __init__(self, players):\r\n        self._players = players\r\n\r\n    def leaders(self):\r\n        # best first\r\n        return sorted(self._players, key=lambda p: p.score, reverse=True)\r\n")],
            line: 7,
            func: Some("leaders"),
            caret: None,
            exc: "TypeError: '<' not supported between instances of 'NoneType' and 'int'",
            test_line: "assert mod.Board([P(None)]).leaders() == []",
        }
        sort_in_place_without_key {
            files: &[("mod.py", b"def ordered(values):\n    values.sort()\n    return values\n")],
            line: 2,
            func: Some("ordered"),
            caret: None,
            exc: "TypeError: '<' not supported between instances of 'int' and 'NoneType'",
            test_line: "assert mod.ordered([2, None, 1]) == [1, 2, None]",
        }
        index_of_none_returned {
            files: &[("mod.py", b"class Cursor:\n    def __init__(self, rows):\n        self._rows = rows\n        self._at = None\n\n    def offset(self):\n        return self._rows.index(self._at)\n")],
            line: 7,
            func: Some("offset"),
            caret: Some("       ^^^^^^^^^^^^^^^^^^^^^^^^^^"),
            exc: "ValueError: None is not in list",
            test_line: "assert mod.Cursor([1]).offset() is None",
        }
        yield_from_none_tabs {
            files: &[("mod.py", b"class Tree:\n\tdef __init__(self, kids=None):\n\t\tself.kids = kids\n\n\tdef walk(self):\n\t\tyield self\n\t\tyield from self.kids\n")],
            line: 7,
            func: Some("walk"),
            caret: None,
            exc: "TypeError: 'NoneType' object is not iterable",
            test_line: "assert len(list(mod.Tree().walk())) == 1",
        }
        unpack_for_target {
            files: &[("mod.py", b"def table(rows):\n    out = {}\n    for key, value in rows:  # pairs from the parser\n        out[key] = value\n    return out\n")],
            line: 3,
            func: Some("table"),
            caret: None,
            exc: "TypeError: cannot unpack non-iterable NoneType object",
            test_line: "assert mod.table([None]) == {}",
        }
        // Python 3.6 words the same `None` item as a `None` iterated: with no probe to say
        // which value was None, the iterable's guards come first, then the items' filter.
        unpack_for_target_py36_wording {
            files: &[("mod.py", b"def table(rows):\n    out = {}\n    for key, value in rows:  # pairs from the parser\n        out[key] = value\n    return out\n")],
            line: 3,
            func: Some("table"),
            caret: None,
            exc: "TypeError: 'NoneType' object is not iterable",
            test_line: "assert mod.table([None]) == {}",
        }
        unpack_assignment_py36_wording {
            files: &[("mod.py", b"def width(span):\n    start, end = span\n    return end - start\n")],
            line: 2,
            func: Some("width"),
            caret: None,
            exc: "TypeError: 'NoneType' object is not iterable",
            test_line: "assert mod.width(None) == 0",
        }
        unpack_computed_value_in_loop_crlf {
            files: &[("mod.py", b"def spans(lines):\r\n    out = []\r\n    for line in lines:\r\n        # start and end, or None\r\n        start, end = parse_span(\r\n            line\r\n        )\r\n        out.append(end - start)\r\n    return out\r\n")],
            line: 5,
            func: Some("spans"),
            caret: None,
            exc: "TypeError: cannot unpack non-iterable NoneType object",
            test_line: "assert mod.spans([\"x\"]) == []",
        }
        attribute_in_loop_one_line_if {
            files: &[("mod.py", b"def names(users):\n    out = []\n    for u in users:\n        if u.active: out.append(u.profile.name)\n    return out\n")],
            line: 4,
            func: Some("names"),
            caret: None,
            exc: "AttributeError: 'NoneType' object has no attribute 'name'",
            test_line: "assert mod.names([U()]) == []",
        }

    }
}

#[test]
fn unknown_failure_has_no_rule() {
    let p = project(&[(
        "mod.py",
        "def to_upper(text):\n    \"\"\"Upper-case words.\"\"\"\n    return text.upper()\n",
    )]);
    let log = format!(
        "Traceback (most recent call last):\n  File \"{}/mod.py\", line 3, in to_upper\n    return text.upper()\nRuntimeError: the upper-casing service is down\n",
        p.root.display()
    );
    let parsed = traceback::parse(log.as_bytes(), &p.root).unwrap();
    let rules = RuleSet::builtin().unwrap();
    let err = plan::plan(&PlanInput {
        root: &p.root,
        failure: &parsed.failures[0],
        rules: &rules,
        probe: None,
        allow_tests: false,
        stdlib: plans::stdlib(),
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no rule matches RuntimeError: the upper-casing service is down"
    );
}
