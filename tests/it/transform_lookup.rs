//! The lookup and arithmetic families (`attr_rename`, `key_lookup`, `index_guard`,
//! `zero_division`) end to end up to the proposed patches: a native traceback text for a temp
//! project is parsed, the file located and read exactly, the rules match and the transforms
//! propose. Snapshots hold every candidate's diff, in rank order (reviewed: the first is the
//! fix a careful human would write); byte checks prove nothing outside the edits changes.

use selfdebug::rules::RuleSet;

use crate::support::plans::{self, transform_cases, Case};

/// The case's candidates in rank order, each as a snapshot (reviewed).
fn check(name: &str, case: &Case) {
    let cands = plans::case_candidates(name, case);
    insta::assert_snapshot!(name, plans::render(&cands, true));
}

transform_cases! {
    check(Case::MOD) {
        // --- AttributeError on a non-None object ---
        attr_hint_method_lf {
            files: &[("mod.py", b"class Invoice:\n    def __init__(self, lines):\n        self.lines = lines\n        self.discount = 0\n\n    def total(self):\n        return sum(self.line) - self.discount\n")],
            line: 7,
            func: Some("total"),
            caret: Some("           ^^^^^^^^^"),
            exc: "AttributeError: 'Invoice' object has no attribute 'line'. Did you mean: 'lines'?",
            test_line: "assert mod.Invoice([1, 2]).total() == 3",
        }
        attr_builtin_str_crlf_comments {
            files: &[("mod.py", b"def is_comment(line):\r\n    # a comment starts with '#'\r\n    stripped = line.strip()\r\n    return stripped.startwith(\"#\")  # after blanks\r\n")],
            line: 4,
            func: Some("is_comment"),
            caret: Some("       ^^^^^^^^^^^^^^^^^"),
            exc: "AttributeError: 'str' object has no attribute 'startwith'",
            test_line: "assert mod.is_comment('  # x') == True",
        }
        attr_class_in_other_module_called {
            files: &[
                ("mod.py", b"from shop.cart import Cart\n\n\ndef fill(cart, things):\n    for thing in things:\n        cart.add(thing)\n    return cart\n"),
                ("shop/__init__.py", b""),
                (
                    "shop/cart.py",
                    b"class Base:\n    def clear(self):\n        self.items = []\n\n\nclass Cart(Base):\n    def __init__(self):\n        self.items = []\n        self.added = 0\n\n    def add_item(self, item):\n        self.items.append(item)\n",
                ),
            ],
            line: 6,
            func: Some("fill"),
            caret: None,
            exc: "AttributeError: 'Cart' object has no attribute 'add'",
            test_line: "assert mod.fill(Cart(), [1]).items == [1]",
        }
        attr_project_module_tabs {
            files: &[
                ("mod.py", b"import settings\n\n\ndef timeout():\n\treturn settings.TIMEOUT_SECS * 1000\n"),
                (
                    "settings.py",
                    b"import os\n\nTIMEOUT_SECONDS = 30\nRETRIES = 3\n\n\ndef load():\n    return os.environ\n",
                ),
            ],
            line: 5,
            func: Some("timeout"),
            caret: None,
            exc: "AttributeError: module 'settings' has no attribute 'TIMEOUT_SECS'",
            test_line: "assert mod.timeout() == 30000",
        }
        // Private names: the message and `dir()` say `_Timer__timer`, the source `__timer`.
        attr_private_hint_mangled {
            files: &[("mod.py", b"class Timer:\n    def __init__(self):\n        self.__timer = 0.0\n        self.__laps = []\n\n    def lap(self, now):\n        self.__laps.append(now - self.__itmer)\n        return self.__laps\n")],
            line: 7,
            func: Some("lap"),
            caret: None,
            exc: "AttributeError: 'Timer' object has no attribute '_Timer__itmer'. Did you mean: '_Timer__timer'?",
            test_line: "assert mod.Timer().lap(2.0) == [2.0]",
        }
        attr_private_subclass_listing {
            files: &[("mod.py", b"class Base:\n    def __init__(self):\n        self.__count = 0\n\n\nclass Child(Base):\n    def __init__(self):\n        super().__init__()\n        self.__cnt = 1\n\n    def bump(self):\n        self.__cont += 1\n        return self\n")],
            line: 12,
            func: Some("bump"),
            caret: None,
            exc: "AttributeError: 'Child' object has no attribute '_Child__cont'",
            test_line: "assert mod.Child().bump() is not None",
        }
        // --- KeyError ---
        key_returned_lf {
            files: &[("mod.py", b"def timeout(settings):\n    \"\"\"Seconds to wait; 30 unless configured.\"\"\"\n    return settings[\"timeout\"]\n")],
            line: 3,
            func: Some("timeout"),
            caret: Some("       ^^^^^^^^^^^^^^^^^^^"),
            exc: "KeyError: 'timeout'",
            test_line: "assert mod.timeout({}) == 30",
        }
        key_loop_method_crlf_comments {
            files: &[("mod.py", b"class Report:\r\n    def amounts(self, rows):\r\n        out = []\r\n        for row in rows:\r\n            # samples carry no price\r\n            out.append(row[\"price\"] * row[\"qty\"])  # per line\r\n        return out\r\n")],
            line: 6,
            func: Some("amounts"),
            caret: None,
            exc: "KeyError: 'price'",
            test_line: "assert mod.Report().amounts([{'qty': 1}]) == [0]",
        }
        key_in_fstring {
            files: &[("mod.py", b"def hello(user):\n    return f\"Hello {user['name']}!\"\n")],
            line: 2,
            func: Some("hello"),
            caret: None,
            exc: "KeyError: 'name'",
            test_line: "assert mod.hello({}) == 'Hello !'",
        }
        // Defaults from the consuming context (issue 26 item 3): an element summed is a
        // number, an element joined or formatted is text; the container is not the default.
        key_summed_element {
            files: &[("mod.py", b"def total(rows):\n    return sum(row['price'] for row in rows)\n")],
            line: 2,
            func: Some("total"),
            caret: None,
            exc: "KeyError: 'price'",
            test_line: "assert mod.total([{'price': 3}, {}]) == 3",
        }
        key_joined_element_method {
            files: &[("mod.py", b"class Roster:\n    def __init__(self, people):\n        self._people = people\n\n    def names(self):\n        return \", \".join(p[\"name\"] for p in self._people)\n")],
            line: 6,
            func: Some("names"),
            caret: None,
            exc: "KeyError: 'name'",
            test_line: "assert mod.Roster([{'name': 'a'}, {}]).names() == 'a, '",
        }
        key_formatted_argument {
            files: &[("mod.py", b"def label(item):\n    return \"{} ({})\".format(item[\"name\"], item[\"unit\"])\n")],
            line: 2,
            func: Some("label"),
            caret: None,
            exc: "KeyError: 'unit'",
            test_line: "assert mod.label({'name': 'rice'}) == 'rice ()'",
        }
        key_iterated_by_comprehension {
            files: &[("mod.py", b"def items(order):\n    return [x for x in order[\"lines\"]]\n")],
            line: 2,
            func: Some("items"),
            caret: None,
            exc: "KeyError: 'lines'",
            test_line: "assert mod.items({}) == []",
        }
        key_in_string_chain {
            files: &[("mod.py", b"def label(names):\n    return names[\"first\"] + \" \" + names[\"last\"]\n")],
            line: 2,
            func: Some("label"),
            caret: None,
            exc: "KeyError: 'last'",
            test_line: "assert mod.label({'first': 'Ana'}) == 'Ana '",
        }
        key_append_setdefault {
            files: &[("mod.py", b"def group(pairs):\n    out = {}\n    for key, value in pairs:\n        out[key].append(value)\n    return out\n")],
            line: 4,
            func: Some("group"),
            caret: Some("        ^^^^^^^^"),
            exc: "KeyError: 'a'",
            test_line: "assert mod.group([('a', 1)]) == {'a': [1]}",
        }
        key_augassign_counter {
            files: &[("mod.py", b"def tally(words):\n    counts = {}\n    for w in words:\n        counts[w] += 1\n    return counts\n")],
            line: 4,
            func: Some("tally"),
            caret: None,
            exc: "KeyError: 'x'",
            test_line: "assert mod.tally(['x']) == {'x': 1}",
        }
        // --- IndexError ---
        index_len_lf {
            files: &[("mod.py", b"def last(items):\n    return items[len(items)]\n")],
            line: 2,
            func: Some("last"),
            caret: Some("       ~~~~~^^^^^^^^^^^^"),
            exc: "IndexError: list index out of range",
            test_line: "assert mod.last([1, 2]) == 2",
        }
        index_first_method_crlf_comments {
            files: &[("mod.py", b"class History:\r\n    def __init__(self):\r\n        self.entries = []\r\n\r\n    def latest(self):\r\n        # newest first\r\n        return self.entries[0]  # may be empty\r\n")],
            line: 7,
            func: Some("latest"),
            caret: Some("       ~~~~~~~~~~~~^^^"),
            exc: "IndexError: list index out of range",
            test_line: "assert mod.History().latest() == None",
        }
        index_range_plus_one {
            files: &[("mod.py", b"def squares(xs):\n    out = []\n    for i in range(len(xs) + 1):\n        out.append(xs[i] ** 2)\n    return out\n")],
            line: 4,
            func: Some("squares"),
            caret: None,
            exc: "IndexError: list index out of range",
            test_line: "assert mod.squares([1, 2]) == [1, 4]",
        }
        index_while_lte {
            files: &[("mod.py", b"def total(xs):\n    i = 0\n    s = 0\n    while i <= len(xs):\n        s += xs[i]\n        i += 1\n    return s\n")],
            line: 5,
            func: Some("total"),
            caret: None,
            exc: "IndexError: list index out of range",
            test_line: "assert mod.total([1, 2]) == 3",
        }
        index_pop_in_loop {
            files: &[("mod.py", b"def take(stack, n):\n    out = []\n    for _ in range(n):\n        item = stack.pop()\n        out.append(item)\n    return out\n")],
            line: 4,
            func: Some("take"),
            caret: None,
            exc: "IndexError: pop from empty list",
            test_line: "assert mod.take([1], 2) == [1]",
        }
        // --- ZeroDivisionError ---
        zerodiv_return_lf {
            files: &[("mod.py", b"def ratio(part, whole):\n    \"\"\"Share of the whole.\"\"\"\n    return part / whole\n")],
            line: 3,
            func: Some("ratio"),
            caret: Some("       ~~~~~^~~~~~"),
            exc: "ZeroDivisionError: division by zero",
            test_line: "assert mod.ratio(1, 0) == 0",
        }
        zerodiv_second_of_two_crlf_method {
            files: &[("mod.py", b"class Pager:\r\n    def __init__(self, total, size):\r\n        self.total = total\r\n        self.size = size\r\n\r\n    def pages(self):\r\n        # full pages, plus one for the rest\r\n        return self.total // self.size + (1 if self.total % self.size else 0)\r\n")],
            line: 8,
            func: Some("pages"),
            caret: Some("       ~~~~~~~~~~~^^~~~~~~~~~"),
            exc: "ZeroDivisionError: integer division or modulo by zero",
            test_line: "assert mod.Pager(5, 0).pages() == 0",
        }
        zerodiv_len_in_loop {
            files: &[("mod.py", b"def means(groups):\n    out = []\n    for g in groups:\n        out.append(sum(g) / len(g))\n    return out\n")],
            line: 4,
            func: Some("means"),
            caret: Some("                   ~~~~~~~^~~~~~~~"),
            exc: "ZeroDivisionError: division by zero",
            test_line: "assert mod.means([[1, 3], []]) == [2.0, 0.0]",
        }

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
