//! The `types` (TypeError on non-None values) and `syntax_fix` (SyntaxError and
//! IndentationError while importing) transforms end to end up to the proposed patches: a
//! traceback text as CPython prints it (captured from Python 3.11 for these very sources) is
//! parsed, the file is read exactly, the rules match and the transform proposes. Snapshots
//! hold every candidate's diff, in rank order (reviewed: the first is what a careful human
//! writes); the byte checks prove nothing outside the edits changes, CRLF included.

use selfdebug::plan::{self, PlanInput};
use selfdebug::rules::RuleSet;
use selfdebug::traceback;

use crate::support::plans::{self, transform_cases, Case};
use crate::support::project::project;

/// The test module does `import mod as m`.
const MOD_AS_M: Case = Case {
    import: "import mod as m",
    ..Case::MOD
};

/// The case's candidates in rank order, each as a snapshot (reviewed); a SyntaxError's are
/// `syntax` fixes, the others `logic` ones.
fn check(name: &str, case: &Case) {
    let cands = plans::case_candidates(name, case);
    let category = if case.func.is_none() {
        "syntax"
    } else {
        "logic"
    };
    for c in &cands {
        assert_eq!(c.category.as_str(), category, "{name}");
    }
    insta::assert_snapshot!(name, plans::render(&cands, false));
}

transform_cases! {
    check(MOD_AS_M) {
        concat_chain {
            files: &[("mod.py", b"def label(name, count):\n    return name + \": \" + count + \" items\"\n")],
            line: 2,
            func: Some("label"),
            caret: Some("       ~~~~~~~~~~~~^~~~~~~"),
            exc: "TypeError: can only concatenate str (not \"int\") to str",
            test_line: "assert m.label('apples', 3)",
        }
        concat_aug_crlf {
            files: &[("mod.py", b"class Log:\r\n    def __init__(self):\r\n        self.text = \"\"\r\n\r\n    def add(self, count):\r\n        # append the count\r\n        self.text += count  # running log\r\n        return self.text\r\n")],
            line: 7,
            func: Some("add"),
            caret: Some("^^^^^^^^^^^^^^^^^^"),
            exc: "TypeError: can only concatenate str (not \"int\") to str",
            test_line: "assert m.Log().add(3)",
        }
        strnum_aug {
            files: &[("mod.py", b"def total(rows):\n    result = 0\n    for row in rows:\n        result += row[\"qty\"]\n    return result\n")],
            line: 4,
            func: Some("total"),
            caret: None,
            exc: "TypeError: unsupported operand type(s) for +=: 'int' and 'str'",
            test_line: "assert m.total([{'qty': '2'}])",
        }
        strnum_method_crlf {
            files: &[("mod.py", b"class Pager:\r\n    def __init__(self, page):\r\n        self.page = page\r\n\r\n    def previous(self):\r\n        # pages start at 1\r\n        return max(self.page - 1, 1)\r\n")],
            line: 7,
            func: Some("previous"),
            caret: Some("           ~~~~~~~~~~^~~"),
            exc: "TypeError: unsupported operand type(s) for -: 'str' and 'int'",
            test_line: "assert m.Pager('3').previous()",
        }
        strnum_left_number {
            files: &[("mod.py", b"def ordinal(n):\n    suffix = \"th\"\n    return n + suffix\n")],
            line: 3,
            func: Some("ordinal"),
            caret: Some("       ~~^~~~~~~~"),
            exc: "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            test_line: "assert m.ordinal(4) == \"4th\"",
        }
        callable_attr {
            files: &[("mod.py", b"class Box:\n    def __init__(self, size):\n        self.size = size\n\n    def area(self):\n        return self.size() * 2\n")],
            line: 6,
            func: Some("area"),
            caret: Some("       ^^^^^^^^^^^"),
            exc: "TypeError: 'int' object is not callable",
            test_line: "assert m.Box(3).area()",
        }
        callable_property_crlf {
            files: &[("mod.py", b"class Order:\r\n    def __init__(self, items):\r\n        self.items = items\r\n\r\n    @property\r\n    def total(self):\r\n        return sum(self.items)\r\n\r\n\r\ndef with_fee(order, fee):\r\n    # the fee is flat\r\n    return order.total() + fee\r\n")],
            line: 12,
            func: Some("with_fee"),
            caret: Some("       ^^^^^^^^^^^^^"),
            exc: "TypeError: 'int' object is not callable",
            test_line: "assert m.with_fee(m.Order([1, 2]), 1)",
        }
        iter_int {
            files: &[("mod.py", b"def squares(n):\n    out = []\n    for i in n:\n        out.append(i * i)\n    return out\n")],
            line: 3,
            func: Some("squares"),
            caret: None,
            exc: "TypeError: 'int' object is not iterable",
            test_line: "assert m.squares(3)",
        }
        iter_len_crlf {
            files: &[("mod.py", b"class Table:\r\n    def __init__(self, rows):\r\n        self.rows = rows\r\n\r\n    def numbered(self):\r\n        out = []\r\n        for i in len(self.rows):  # every row\r\n            out.append((i, self.rows[i]))\r\n        return out\r\n")],
            line: 7,
            func: Some("numbered"),
            caret: None,
            exc: "TypeError: 'int' object is not iterable",
            test_line: "assert m.Table(['a']).numbered()",
        }
        subscript_get {
            files: &[("mod.py", b"def port(settings):\n    return settings.get[\"port\"]\n")],
            line: 2,
            func: Some("port"),
            caret: Some("       ~~~~~~~~~~~~^^^^^^^^"),
            exc: "TypeError: 'builtin_function_or_method' object is not subscriptable",
            test_line: "assert m.port({'port': 1})",
        }
        subscript_method_crlf {
            files: &[("mod.py", b"class Registry:\r\n    def __init__(self):\r\n        self.items = {\"a\": 1}\r\n\r\n    def lookup(self, key):\r\n        return self.items.get(key)\r\n\r\n    def first(self):\r\n        # look the default up\r\n        value = self.lookup[\"a\"]\r\n        return value\r\n")],
            line: 10,
            func: Some("first"),
            caret: Some("        ~~~~~~~~~~~^^^^^"),
            exc: "TypeError: 'method' object is not subscriptable",
            test_line: "assert m.Registry().first()",
        }
        extra_kwonly {
            files: &[("mod.py", b"def fmt(value, *, digits=2):\n    return round(value, digits)\n\n\ndef show(x):\n    return fmt(x, 3)\n")],
            line: 6,
            func: Some("show"),
            caret: Some("       ^^^^^^^^^"),
            exc: "TypeError: fmt() takes 1 positional argument but 2 were given",
            test_line: "assert m.show(1.23456)",
        }
        extra_method_crlf {
            files: &[("mod.py", b"class Greeter:\r\n    def greet(self, name):\r\n        return \"hello \" + name\r\n\r\n    def welcome(self, name):\r\n        # old call: punctuation used to be a parameter\r\n        return self.greet(name, \"!\")\r\n")],
            line: 7,
            func: Some("welcome"),
            caret: Some("       ^^^^^^^^^^^^^^^^^^^^^"),
            exc: "TypeError: Greeter.greet() takes 2 positional arguments but 3 were given",
            test_line: "assert m.Greeter().welcome('bo')",
        }
        missing_function {
            files: &[("mod.py", b"def price(amount, rate):\n    return amount * (1 + rate)\n\n\ndef checkout(amount, rate):\n    return price(amount)\n")],
            line: 6,
            func: Some("checkout"),
            caret: Some("       ^^^^^^^^^^^^^"),
            exc: "TypeError: price() missing 1 required positional argument: 'rate'",
            test_line: "assert m.checkout(10, 0.5)",
        }
        missing_method_crlf {
            files: &[("mod.py", b"class Scaler:\r\n    def scale(self, value, factor):\r\n        return value * factor\r\n\r\n    def run(self, values):\r\n        factor = 2\r\n        # double everything\r\n        return [self.scale(v) for v in values]\r\n")],
            line: 8,
            func: Some("<listcomp>"),
            caret: Some("        ^^^^^^^^^^^^^"),
            exc: "TypeError: Scaler.scale() missing 1 required positional argument: 'factor'",
            test_line: "assert m.Scaler().run([1])",
        }
        colon_comment {
            files: &[("mod.py", b"def sign(x):\n    if x < 0  # negative\n        return -1\n    return 1\n")],
            line: 2,
            func: None,
            caret: Some("          ^^^^^^^^^^"),
            exc: "SyntaxError: expected ':'",
            test_line: "assert m",
        }
        colon_multiline_crlf {
            files: &[("mod.py", b"def ready(a, b):\r\n    while (a and\r\n           b)\r\n        return True\r\n    return False\r\n")],
            line: 3,
            func: None,
            caret: Some("  ^"),
            exc: "SyntaxError: expected ':'",
            test_line: "assert m",
        }
        unclosed_continuation {
            files: &[("mod.py", b"def biggest(values):\n    top = max(values,\n              default=0\n    return top\n")],
            line: 2,
            func: None,
            caret: Some("         ^"),
            exc: "SyntaxError: '(' was never closed",
            test_line: "assert m",
        }
        unclosed_line_crlf {
            files: &[("mod.py", b"def data():\r\n    values = [1, 2, 3  # the first three\r\n    return values\r\n")],
            line: 2,
            func: None,
            caret: Some("         ^"),
            exc: "SyntaxError: '[' was never closed",
            test_line: "assert m",
        }
        comma_list {
            files: &[("mod.py", b"SIZES = [\n    10,\n    20 30,\n]\n")],
            line: 3,
            func: None,
            caret: Some("^^^^^"),
            exc: "SyntaxError: invalid syntax. Perhaps you forgot a comma?",
            test_line: "assert m",
        }
        comma_call_crlf {
            files: &[("mod.py", b"def pair(a, b):\r\n    return (a, b)\r\n\r\n\r\ndef make(x, y):\r\n    # build it\r\n    return pair(x y)\r\n")],
            line: 7,
            func: None,
            caret: Some("            ^^^"),
            exc: "SyntaxError: invalid syntax. Perhaps you forgot a comma?",
            test_line: "assert m",
        }
        indent_unexpected {
            files: &[("mod.py", b"def total(xs):\n    result = sum(xs)\n        return result\n")],
            line: 3,
            func: None,
            caret: None,
            exc: "IndentationError: unexpected indent",
            test_line: "assert m",
        }
        indent_unexpected_block_crlf {
            files: &[("mod.py", b"def report(xs):\r\n    lines = []\r\n        for x in xs:\r\n            lines.append(str(x))\r\n        return lines\r\n")],
            line: 3,
            func: None,
            caret: None,
            exc: "IndentationError: unexpected indent",
            test_line: "assert m",
        }
        indent_expected_if {
            files: &[("mod.py", b"def clamp(x):\n    if x < 0:\n    x = 0\n    return x\n")],
            line: 3,
            func: None,
            caret: Some("^"),
            exc: "IndentationError: expected an indented block after 'if' statement on line 2",
            test_line: "assert m",
        }
        indent_expected_def_tabs {
            files: &[("mod.py", b"class Box:\n\tdef size(self):\n\treturn 3\n")],
            line: 3,
            func: None,
            caret: Some("^"),
            exc: "IndentationError: expected an indented block after function definition on line 2",
            test_line: "assert m",
        }
        unindent_loop {
            files: &[("mod.py", b"def first_positive(xs):\n    for x in xs:\n        if x > 0:\n            return x\n      return None\n")],
            line: 5,
            func: None,
            caret: Some("           ^"),
            exc: "IndentationError: unindent does not match any outer indentation level",
            test_line: "assert m",
        }
        unindent_crlf {
            files: &[("mod.py", b"def label(x):\r\n    if x:\r\n        text = \"yes\"\r\n       return text\r\n    return \"no\"\r\n")],
            line: 4,
            func: None,
            caret: Some("           ^"),
            exc: "IndentationError: unindent does not match any outer indentation level",
            test_line: "assert m",
        }
        // --- typed sinks: str.join ---
        join_two_calls_carets_pick_one {
            files: &[("mod.py", b"def row(cells, ids):\n    return \"|\".join(cells) + \":\" + \",\".join(i for i in ids)\n")],
            line: 2,
            func: Some("row"),
            caret: Some("                                   ^^^^^^^^^^^^^^^^^^^^^^^^^^"),
            exc: "TypeError: sequence item 0: expected str instance, int found",
            test_line: "assert m.row(['a'], [1, 2])",
        }
        join_list_comprehension {
            files: &[("mod.py", b"def csv(values):\n    # one line of numbers\n    return \",\".join([v * 2 for v in values])\n")],
            line: 3,
            func: Some("csv"),
            caret: None,
            exc: "TypeError: sequence item 0: expected str instance, float found",
            test_line: "assert m.csv([1.5]) == '3.0'",
        }

    }
}

/// The same SyntaxError as pytest prints it while collecting a test module: the `E   File`
/// block becomes the innermost frame, the caret column is mapped onto the real line.
#[test]
fn pytest_collection_error_is_planned_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("render.py"),
        "def render_row(row):\n    if row[\"amount\"] < 0  # refunds\n        return \"-\"\n    return \"+\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(
        root.join("tests/test_render.py"),
        "from render import render_row\n",
    )
    .unwrap();
    let log = format!(
        "==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_render.py _____________________
tests/test_render.py:1: in <module>
    from render import render_row
E     File \"{r}/render.py\", line 2
E       if row[\"amount\"] < 0  # refunds
E                             ^^^^^^^^^^^
E   SyntaxError: expected ':'
=========================== short test summary info ============================
ERROR tests/test_render.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
",
        r = root.display()
    );
    let parsed = traceback::parse(log.as_bytes(), root).unwrap();
    let failure = &parsed.failures[0];
    let loc = failure.location.as_ref().unwrap();
    assert_eq!((loc.file.as_str(), loc.line), ("render.py", 2));
    let rules = RuleSet::builtin().unwrap();
    let cands = plan::plan(&PlanInput {
        root,
        failure,
        rules: &rules,
        probe: None,
        allow_tests: false,
        stdlib: plans::stdlib(),
    })
    .unwrap();
    assert_eq!(cands.len(), 1);
    assert!(cands[0].safe);
    assert_eq!(
        String::from_utf8(cands[0].patched.clone()).unwrap(),
        "def render_row(row):\n    if row[\"amount\"] < 0:  # refunds\n        return \"-\"\n    return \"+\"\n"
    );
}

/// The NoneType forms stay with the null guards: no `type-*` candidate for them.
#[test]
fn none_forms_get_no_type_candidate() {
    let p = project(&[(
        "mod.py",
        "def label(name, count):\n    return name + \": \" + count + \" items\"\n",
    )]);
    let log = format!(
        "Traceback (most recent call last):\n  File \"{}/mod.py\", line 2, in label\n    return name + \": \" + count + \" items\"\nTypeError: unsupported operand type(s) for +: 'NoneType' and 'str'\n",
        p.root.display()
    );
    let parsed = traceback::parse(log.as_bytes(), &p.root).unwrap();
    let rules = RuleSet::builtin().unwrap();
    let cands = plan::plan(&PlanInput {
        root: &p.root,
        failure: &parsed.failures[0],
        rules: &rules,
        probe: None,
        allow_tests: false,
        stdlib: plans::stdlib(),
    })
    .unwrap();
    assert!(!cands.is_empty());
    assert!(cands.iter().all(|c| c.fix.rule.starts_with("null-guard-")));
}
