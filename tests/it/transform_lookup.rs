//! The lookup and arithmetic families (`attr_rename`, `key_lookup`, `index_guard`,
//! `zero_division`) end to end up to the proposed patches: a native traceback text for a temp
//! project is parsed, the file located and read exactly, the rules match and the transforms
//! propose. Snapshots hold every candidate's diff, in rank order (reviewed: the first is the
//! fix a careful human would write); byte checks prove nothing outside the edits changes.

use crate::support;

use support::plans;

use selfdebug::rules::RuleSet;

struct Case {
    name: &'static str,
    /// The module under test, exact bytes.
    module: &'static [u8],
    /// Other project files (path, bytes).
    extra: &'static [(&'static str, &'static [u8])],
    /// 1-based line that fails, and its function.
    line: u32,
    func: &'static str,
    /// Caret line under the stripped code as CPython prints it, if any.
    caret: Option<&'static str>,
    exc: &'static str,
    /// The test's assertion, printed as the outermost frame.
    test_line: &'static str,
}

const CASES: &[Case] = &[
    // --- AttributeError on a non-None object ---
    Case {
        name: "attr_hint_method_lf",
        module: b"class Invoice:\n    def __init__(self, lines):\n        self.lines = lines\n        self.discount = 0\n\n    def total(self):\n        return sum(self.line) - self.discount\n",
        extra: &[],
        line: 7,
        func: "total",
        caret: Some("           ^^^^^^^^^"),
        exc: "AttributeError: 'Invoice' object has no attribute 'line'. Did you mean: 'lines'?",
        test_line: "assert mod.Invoice([1, 2]).total() == 3",
    },
    Case {
        name: "attr_builtin_str_crlf_comments",
        module: b"def is_comment(line):\r\n    # a comment starts with '#'\r\n    stripped = line.strip()\r\n    return stripped.startwith(\"#\")  # after blanks\r\n",
        extra: &[],
        line: 4,
        func: "is_comment",
        caret: Some("       ^^^^^^^^^^^^^^^^^"),
        exc: "AttributeError: 'str' object has no attribute 'startwith'",
        test_line: "assert mod.is_comment('  # x') == True",
    },
    Case {
        name: "attr_class_in_other_module_called",
        module: b"from shop.cart import Cart\n\n\ndef fill(cart, things):\n    for thing in things:\n        cart.add(thing)\n    return cart\n",
        extra: &[
            ("shop/__init__.py", b""),
            (
                "shop/cart.py",
                b"class Base:\n    def clear(self):\n        self.items = []\n\n\nclass Cart(Base):\n    def __init__(self):\n        self.items = []\n        self.added = 0\n\n    def add_item(self, item):\n        self.items.append(item)\n",
            ),
        ],
        line: 6,
        func: "fill",
        caret: None,
        exc: "AttributeError: 'Cart' object has no attribute 'add'",
        test_line: "assert mod.fill(Cart(), [1]).items == [1]",
    },
    Case {
        name: "attr_project_module_tabs",
        module: b"import settings\n\n\ndef timeout():\n\treturn settings.TIMEOUT_SECS * 1000\n",
        extra: &[(
            "settings.py",
            b"import os\n\nTIMEOUT_SECONDS = 30\nRETRIES = 3\n\n\ndef load():\n    return os.environ\n",
        )],
        line: 5,
        func: "timeout",
        caret: None,
        exc: "AttributeError: module 'settings' has no attribute 'TIMEOUT_SECS'",
        test_line: "assert mod.timeout() == 30000",
    },
    // Private names: the message and `dir()` say `_Timer__timer`, the source `__timer`.
    Case {
        name: "attr_private_hint_mangled",
        module: b"class Timer:\n    def __init__(self):\n        self.__timer = 0.0\n        self.__laps = []\n\n    def lap(self, now):\n        self.__laps.append(now - self.__itmer)\n        return self.__laps\n",
        extra: &[],
        line: 7,
        func: "lap",
        caret: None,
        exc: "AttributeError: 'Timer' object has no attribute '_Timer__itmer'. Did you mean: '_Timer__timer'?",
        test_line: "assert mod.Timer().lap(2.0) == [2.0]",
    },
    Case {
        name: "attr_private_subclass_listing",
        module: b"class Base:\n    def __init__(self):\n        self.__count = 0\n\n\nclass Child(Base):\n    def __init__(self):\n        super().__init__()\n        self.__cnt = 1\n\n    def bump(self):\n        self.__cont += 1\n        return self\n",
        extra: &[],
        line: 12,
        func: "bump",
        caret: None,
        exc: "AttributeError: 'Child' object has no attribute '_Child__cont'",
        test_line: "assert mod.Child().bump() is not None",
    },
    // --- KeyError ---
    Case {
        name: "key_returned_lf",
        module: b"def timeout(settings):\n    \"\"\"Seconds to wait; 30 unless configured.\"\"\"\n    return settings[\"timeout\"]\n",
        extra: &[],
        line: 3,
        func: "timeout",
        caret: Some("       ^^^^^^^^^^^^^^^^^^^"),
        exc: "KeyError: 'timeout'",
        test_line: "assert mod.timeout({}) == 30",
    },
    Case {
        name: "key_loop_method_crlf_comments",
        module: b"class Report:\r\n    def amounts(self, rows):\r\n        out = []\r\n        for row in rows:\r\n            # samples carry no price\r\n            out.append(row[\"price\"] * row[\"qty\"])  # per line\r\n        return out\r\n",
        extra: &[],
        line: 6,
        func: "amounts",
        caret: None,
        exc: "KeyError: 'price'",
        test_line: "assert mod.Report().amounts([{'qty': 1}]) == [0]",
    },
    Case {
        name: "key_in_fstring",
        module: b"def hello(user):\n    return f\"Hello {user['name']}!\"\n",
        extra: &[],
        line: 2,
        func: "hello",
        caret: None,
        exc: "KeyError: 'name'",
        test_line: "assert mod.hello({}) == 'Hello !'",
    },
    Case {
        name: "key_iterated_by_comprehension",
        module: b"def items(order):\n    return [x for x in order[\"lines\"]]\n",
        extra: &[],
        line: 2,
        func: "items",
        caret: None,
        exc: "KeyError: 'lines'",
        test_line: "assert mod.items({}) == []",
    },
    Case {
        name: "key_in_string_chain",
        module: b"def label(names):\n    return names[\"first\"] + \" \" + names[\"last\"]\n",
        extra: &[],
        line: 2,
        func: "label",
        caret: None,
        exc: "KeyError: 'last'",
        test_line: "assert mod.label({'first': 'Ana'}) == 'Ana '",
    },
    Case {
        name: "key_append_setdefault",
        module: b"def group(pairs):\n    out = {}\n    for key, value in pairs:\n        out[key].append(value)\n    return out\n",
        extra: &[],
        line: 4,
        func: "group",
        caret: Some("        ^^^^^^^^"),
        exc: "KeyError: 'a'",
        test_line: "assert mod.group([('a', 1)]) == {'a': [1]}",
    },
    Case {
        name: "key_augassign_counter",
        module: b"def tally(words):\n    counts = {}\n    for w in words:\n        counts[w] += 1\n    return counts\n",
        extra: &[],
        line: 4,
        func: "tally",
        caret: None,
        exc: "KeyError: 'x'",
        test_line: "assert mod.tally(['x']) == {'x': 1}",
    },
    // --- IndexError ---
    Case {
        name: "index_len_lf",
        module: b"def last(items):\n    return items[len(items)]\n",
        extra: &[],
        line: 2,
        func: "last",
        caret: Some("       ~~~~~^^^^^^^^^^^^"),
        exc: "IndexError: list index out of range",
        test_line: "assert mod.last([1, 2]) == 2",
    },
    Case {
        name: "index_first_method_crlf_comments",
        module: b"class History:\r\n    def __init__(self):\r\n        self.entries = []\r\n\r\n    def latest(self):\r\n        # newest first\r\n        return self.entries[0]  # may be empty\r\n",
        extra: &[],
        line: 7,
        func: "latest",
        caret: Some("       ~~~~~~~~~~~~^^^"),
        exc: "IndexError: list index out of range",
        test_line: "assert mod.History().latest() == None",
    },
    Case {
        name: "index_range_plus_one",
        module: b"def squares(xs):\n    out = []\n    for i in range(len(xs) + 1):\n        out.append(xs[i] ** 2)\n    return out\n",
        extra: &[],
        line: 4,
        func: "squares",
        caret: None,
        exc: "IndexError: list index out of range",
        test_line: "assert mod.squares([1, 2]) == [1, 4]",
    },
    Case {
        name: "index_while_lte",
        module: b"def total(xs):\n    i = 0\n    s = 0\n    while i <= len(xs):\n        s += xs[i]\n        i += 1\n    return s\n",
        extra: &[],
        line: 5,
        func: "total",
        caret: None,
        exc: "IndexError: list index out of range",
        test_line: "assert mod.total([1, 2]) == 3",
    },
    Case {
        name: "index_pop_in_loop",
        module: b"def take(stack, n):\n    out = []\n    for _ in range(n):\n        item = stack.pop()\n        out.append(item)\n    return out\n",
        extra: &[],
        line: 4,
        func: "take",
        caret: None,
        exc: "IndexError: pop from empty list",
        test_line: "assert mod.take([1], 2) == [1]",
    },
    // --- ZeroDivisionError ---
    Case {
        name: "zerodiv_return_lf",
        module: b"def ratio(part, whole):\n    \"\"\"Share of the whole.\"\"\"\n    return part / whole\n",
        extra: &[],
        line: 3,
        func: "ratio",
        caret: Some("       ~~~~~^~~~~~"),
        exc: "ZeroDivisionError: division by zero",
        test_line: "assert mod.ratio(1, 0) == 0",
    },
    Case {
        name: "zerodiv_second_of_two_crlf_method",
        module: b"class Pager:\r\n    def __init__(self, total, size):\r\n        self.total = total\r\n        self.size = size\r\n\r\n    def pages(self):\r\n        # full pages, plus one for the rest\r\n        return self.total // self.size + (1 if self.total % self.size else 0)\r\n",
        extra: &[],
        line: 8,
        func: "pages",
        caret: Some("       ~~~~~~~~~~~^^~~~~~~~~~"),
        exc: "ZeroDivisionError: integer division or modulo by zero",
        test_line: "assert mod.Pager(5, 0).pages() == 0",
    },
    Case {
        name: "zerodiv_len_in_loop",
        module: b"def means(groups):\n    out = []\n    for g in groups:\n        out.append(sum(g) / len(g))\n    return out\n",
        extra: &[],
        line: 4,
        func: "means",
        caret: Some("                   ~~~~~~~^~~~~~~~"),
        exc: "ZeroDivisionError: division by zero",
        test_line: "assert mod.means([[1, 3], []]) == [2.0, 0.0]",
    },
];

/// Writes the case's project (module, extra files, a test file) and a native traceback.
fn project(case: &Case) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("mod.py"), case.module).unwrap();
    for (path, bytes) in case.extra {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
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
fn lookup_and_arith_candidates() {
    for case in CASES {
        let (dir, log) = project(case);
        let cands = plans::candidates(case.name, dir.path(), &log, "mod.py", case.line);
        assert!(!cands.is_empty(), "{}: no candidate", case.name);
        let mut snap = String::new();
        for c in &cands {
            plans::assert_outside_edits_identical(case.name, c);
            snap.push_str(&format!(
                "## {} [{}{}]\n{}\n",
                c.fix.title,
                c.fix.rule,
                if c.safe { ", safe" } else { "" },
                c.diff
            ));
        }
        insta::assert_snapshot!(case.name, snap);
    }
}

fn matching(exc: &str, msg: &str) -> Vec<(String, Vec<(String, String)>)> {
    RuleSet::builtin()
        .unwrap()
        .matching(exc, msg)
        .into_iter()
        .map(|m| {
            (
                m.rule.id.clone(),
                m.captures
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )
        })
        .collect()
}

fn ids(exc: &str, msg: &str) -> Vec<String> {
    matching(exc, msg).into_iter().map(|(id, _)| id).collect()
}

#[test]
fn none_type_messages_stay_with_the_null_guards() {
    for msg in [
        "'NoneType' object has no attribute 'split'",
        "'NoneType' object has no attribute 'nme'. Did you mean: 'name'?",
    ] {
        let got = ids("AttributeError", msg);
        assert!(!got.is_empty(), "{msg}");
        assert!(
            got.iter().all(|id| id.starts_with("null-guard-")),
            "{msg}: {got:?}"
        );
    }
    // Names that merely resemble NoneType are ordinary types (and, without Python's hint,
    // `attr-did-you-mean` computes it).
    for ty in ["NoneTypes", "NoneTyp", "Nonetype", "N", "Node"] {
        let msg = format!("'{ty}' object has no attribute 'x'");
        assert_eq!(
            ids("AttributeError", &msg),
            vec!["attr-did-you-mean", "attr-nearest"],
            "{msg}"
        );
    }
}

#[test]
fn messages_match_their_rules_with_captures() {
    let m = matching(
        "AttributeError",
        "'Invoice' object has no attribute 'line'. Did you mean: 'lines'?",
    );
    assert_eq!(m[0].0, "attr-did-you-mean");
    assert!(m[0].1.contains(&("hint".into(), "lines".into())));
    assert!(m[0].1.contains(&("type".into(), "Invoice".into())));
    assert_eq!(m[1].0, "attr-nearest");
    assert_eq!(
        ids(
            "AttributeError",
            "module 'os' has no attribute 'pth'. Did you mean: 'path'?"
        ),
        vec!["attr-did-you-mean", "attr-nearest"]
    );
    assert_eq!(
        ids(
            "AttributeError",
            "type object 'Cart' has no attribute 'make'"
        ),
        vec!["attr-did-you-mean", "attr-nearest"]
    );
    // A circular import is not a typo.
    assert!(ids(
        "AttributeError",
        "partially initialized module 'a' has no attribute 'b' (most likely due to a circular import)"
    )
    .is_empty());
    assert_eq!(ids("KeyError", "'price'"), vec!["key-missing"]);
    assert_eq!(ids("builtins.KeyError", "3"), vec!["key-missing"]);
    for msg in [
        "list index out of range",
        "tuple index out of range",
        "string index out of range",
        "range object index out of range",
    ] {
        assert_eq!(ids("IndexError", msg), vec!["index-out-of-range"], "{msg}");
    }
    for msg in ["pop from empty list", "pop from an empty deque"] {
        assert_eq!(ids("IndexError", msg), vec!["index-pop-empty"], "{msg}");
    }
    for msg in [
        "division by zero",
        "float division by zero",
        "integer division or modulo by zero",
        "integer modulo by zero",
        "float floor division by zero",
        "float modulo",
        "float divmod()",
    ] {
        assert_eq!(
            ids("ZeroDivisionError", msg),
            vec!["zero-div-guard"],
            "{msg}"
        );
    }
    assert!(ids("ZeroDivisionError", "Fraction(1, 0)").is_empty());
}

#[test]
fn rules_have_their_category_and_safety() {
    let set = RuleSet::builtin().unwrap();
    for (id, category, safe) in [
        ("attr-did-you-mean", "logic", true),
        ("attr-nearest", "logic", false),
        ("key-missing", "data", false),
        ("index-out-of-range", "logic", false),
        ("index-pop-empty", "logic", false),
        ("zero-div-guard", "logic", false),
    ] {
        let rule = set.get(id).unwrap_or_else(|| panic!("{id} is built in"));
        assert_eq!(rule.category.as_str(), category, "{id}");
        assert_eq!(rule.safe, safe, "{id}");
    }
}
