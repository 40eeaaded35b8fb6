//! NameError, UnboundLocalError and ImportError (`cannot import name`) repairs up to the
//! proposed patches: a native traceback of a temp project is parsed, the failing file located,
//! the rules matched and the transforms run. Snapshots hold every candidate's diff, in order
//! (reviewed: the first is the fix a careful human would write); import placement has its own
//! cases.

use selfdebug::plan::{self, PlanInput};
use selfdebug::rules::RuleSet;
use selfdebug::traceback;

use crate::support::plans::{self, transform_cases, Case};

/// The case's candidates in rank order, each as a snapshot (reviewed).
fn check(name: &str, case: &Case) {
    let cands = plans::case_candidates(name, case);
    insta::assert_snapshot!(name, plans::render(&cands, true));
}

transform_cases! {
    check(Case::MOD) {
        // --- NameError -------------------------------------------------------------------------
        name_typo_function_lf {
            files: &[(
                "stats.py",
                b"def total(items):\n    count = len(items)\n    # doubled on purpose\n    return cont * 2  # see README\n",
            )],
            file: "stats.py",
            line: 4,
            func: Some("total"),
            caret: Some("       ^^^^"),
            exc: "NameError: name 'cont' is not defined",
            test_line: "assert stats.total([1, 2]) == 4",
        }
        name_forgot_self_method_crlf {
            files: &[(
                "cart.py",
                b"class Cart:\r\n    def __init__(self):\r\n        self.items = []\r\n\r\n    def count(self):\r\n        # how many lines\r\n        return len(items)  # not quantities\r\n",
            )],
            file: "cart.py",
            line: 7,
            func: Some("count"),
            caret: Some("               ^^^^^"),
            exc: "NameError: name 'items' is not defined",
            test_line: "assert cart.Cart().count() == 0",
        }
        name_typo_in_comprehension_method {
            files: &[(
                "team.py",
                b"class Team:\n    def __init__(self, users):\n        self.users = users\n\n    def active_names(self):\n        # only people who logged in\n        return [user.name for user in self.users if usr.active]\n",
            )],
            file: "team.py",
            line: 7,
            func: Some("active_names"),
            caret: None,
            exc: "NameError: name 'usr' is not defined",
            test_line: "assert team.Team([]).active_names() == []",
        }
        name_python_hint_self {
            files: &[(
                "shop.py",
                b"class Basket:\n    def __init__(self, owner):\n        self.owner = owner\n\n    def label(self):\n        return f\"basket of {ownr}\"\n",
            )],
            file: "shop.py",
            line: 6,
            func: Some("label"),
            caret: None,
            exc: "NameError: name 'ownr' is not defined. Did you mean: 'self.owner'?",
            test_line: "assert shop.Basket(\"ann\").label() == \"basket of ann\"",
        }
        name_stdlib_module_no_imports {
            files: &[(
                "report.py",
                b"\"\"\"Reports as JSON.\"\"\"\n\n\ndef dump(data):\n    return json.dumps(data, sort_keys=True)\n",
            )],
            file: "report.py",
            line: 5,
            func: Some("dump"),
            caret: Some("       ^^^^"),
            exc: "NameError: name 'json' is not defined",
            test_line: "assert report.dump({}) == \"{}\"",
        }
        name_stdlib_into_grouped_block {
            files: &[
                (
                    "app/__init__.py",
                    b"",
                ),
                (
                    "app/models.py",
                    b"X = 1\n",
                ),
                (
                    "app/service.py",
                    b"\"\"\"Service layer.\"\"\"\nfrom __future__ import annotations\n\nimport os\nimport sys\n\nimport requests\n\nfrom app.models import X\n\n\ndef stamp(d):\n    return json.dumps(d)\n",
                ),
            ],
            file: "app/service.py",
            line: 13,
            func: Some("stamp"),
            caret: None,
            exc: "NameError: name 'json' is not defined",
            test_line: "assert service.stamp({}) == \"{}\"",
        }
        name_stdlib_into_unsorted_block {
            files: &[(
                "tool.py",
                b"import sys\nimport os\n\n\ndef now():\n    return datetime.datetime.now()\n",
            )],
            file: "tool.py",
            line: 6,
            func: Some("now"),
            caret: None,
            exc: "NameError: name 'datetime' is not defined",
            test_line: "assert tool.now()",
        }
        name_stdlib_name_merged {
            files: &[(
                "index.py",
                b"from collections import Counter\n\n\ndef group(words):\n    out = defaultdict(list)\n    for w in words:\n        out[w[0]].append(w)\n    return dict(out)\n",
            )],
            file: "index.py",
            line: 5,
            func: Some("group"),
            caret: None,
            exc: "NameError: name 'defaultdict' is not defined",
            test_line: "assert index.group([\"ab\"]) == {\"a\": [\"ab\"]}",
        }
        name_stdlib_two_homes_ranked {
            files: &[(
                "render.py",
                b"\"\"\"Templates.\"\"\"\nimport re\n\n\ndef render(template, **values):\n    return Formatter().format(template, **values)\n",
            )],
            file: "render.py",
            line: 6,
            func: Some("render"),
            caret: None,
            exc: "NameError: name 'Formatter' is not defined",
            test_line: "assert render.render(\"{a}\", a=1) == \"1\"",
        }
        name_stdlib_submodule_home {
            files: &[(
                "walk.py",
                b"from typing import Optional\n\n\ndef first(items: Optional[list]):\n    return isinstance(items, Iterable)\n",
            )],
            file: "walk.py",
            line: 5,
            func: Some("first"),
            caret: None,
            exc: "NameError: name 'Iterable' is not defined",
            test_line: "assert walk.first([])",
        }
        name_project_into_local_group {
            files: &[
                ("shop/__init__.py", b""),
                (
                    "shop/pricing.py",
                    b"def format_price(cents):\n    return f\"{cents / 100:.2f}\"\n",
                ),
                (
                    "shop/models.py",
                    b"class Order:\n    pass\n",
                ),
                (
                    "shop/checkout.py",
                    b"\"\"\"Checkout.\"\"\"\nimport logging\n\nfrom shop.models import Order\n\nlog = logging.getLogger(__name__)\n\n\ndef total_label(cents):\n    return format_price(cents)\n",
                ),
            ],
            file: "shop/checkout.py",
            line: 10,
            func: Some("total_label"),
            caret: None,
            exc: "NameError: name 'format_price' is not defined",
            test_line: "assert checkout.total_label(250) == \"2.50\"",
        }
        name_project_into_sorted_local_group {
            files: &[
                ("shop/__init__.py", b""),
                ("shop/pricing.py", b"def format_price(cents):\n    return str(cents)\n"),
                ("shop/models.py", b"class Order:\n    pass\n"),
                ("shop/audit.py", b"def audit(x):\n    return x\n"),
                (
                    "shop/checkout.py",
                    b"\"\"\"Checkout.\"\"\"\n\nfrom __future__ import annotations\n\nimport logging\nimport os\n\nimport requests\n\nfrom shop.audit import audit\nfrom shop.models import Order\n\n\ndef label(cents):\n    return audit(format_price(cents))\n",
                ),
            ],
            file: "shop/checkout.py",
            line: 15,
            func: Some("label"),
            caret: None,
            exc: "NameError: name 'format_price' is not defined",
            test_line: "assert checkout.label(250) == \"250\"",
        }
        // --- UnboundLocalError -------------------------------------------------------------------
        unbound_branch_function_lf {
            files: &[(
                "rates.py",
                b"def discount(tier):\n    \"\"\"Rate for a tier.\"\"\"\n    if tier == \"gold\":\n        rate = 0.2\n    elif tier == \"silver\":\n        rate = 0.1\n    return rate\n",
            )],
            file: "rates.py",
            line: 7,
            func: Some("discount"),
            caret: None,
            exc: "UnboundLocalError: cannot access local variable 'rate' where it is not associated with a value",
            test_line: "assert rates.discount(\"bronze\") == 0.0",
        }
        unbound_counter_global_crlf {
            files: &[(
                "hits.py",
                b"# request counter\r\ncounter = 0\r\n\r\n\r\ndef hit():\r\n    # one more\r\n    counter += 1  # shared\r\n    return counter\r\n",
            )],
            file: "hits.py",
            line: 7,
            func: Some("hit"),
            caret: None,
            exc: "UnboundLocalError: cannot access local variable 'counter' where it is not associated with a value",
            test_line: "assert hits.hit() == 1",
        }
        unbound_accumulator_method_py310 {
            files: &[(
                "ledger.py",
                b"class Ledger:\n    def __init__(self, amounts):\n        self.amounts = amounts\n\n    def balance(self):\n        for amount in self.amounts:\n            total += amount\n        return total\n",
            )],
            file: "ledger.py",
            line: 7,
            func: Some("balance"),
            caret: None,
            exc: "UnboundLocalError: local variable 'total' referenced before assignment",
            test_line: "assert ledger.Ledger([1, 2]).balance() == 3",
        }
        unbound_try_nonlocal {
            files: &[(
                "conf.py",
                b"def loader(path):\n    cache = None\n\n    def load():\n        if cache is None:\n            cache = open(path).read()\n        return cache\n\n    return load\n",
            )],
            file: "conf.py",
            line: 5,
            func: Some("load"),
            caret: None,
            exc: "UnboundLocalError: cannot access local variable 'cache' where it is not associated with a value",
            test_line: "assert conf.loader(\"x\")()",
        }
        // --- ImportError -------------------------------------------------------------------------
        import_moved_name_keeps_others {
            files: &[
                ("shop/__init__.py", b""),
                (
                    "shop/pricing.py",
                    b"def format_price(cents):\n    return f\"{cents / 100:.2f}\"\n",
                ),
                (
                    "shop/models.py",
                    b"class Order:\n    pass\n",
                ),
                (
                    "shop/api.py",
                    b"import json\n\nfrom shop.models import Order, format_price  # public API\n\n\ndef render(order):\n    return json.dumps(format_price(order))\n",
                ),
            ],
            file: "shop/api.py",
            line: 3,
            func: Some("<module>"),
            caret: None,
            exc: "ImportError: cannot import name 'format_price' from 'shop.models' (ROOT/shop/models.py)",
            test_line: "from shop import api",
        }
        import_typo_relative_crlf {
            files: &[
                ("crm/__init__.py", b""),
                (
                    "crm/models.py",
                    b"class Customer:\r\n    pass\r\n\r\n\r\nclass Contact:\r\n    pass\r\n",
                ),
                (
                    "crm/views.py",
                    b"# views\r\nfrom .models import Custmer\r\n\r\n\r\ndef show(c):\r\n    return isinstance(c, Custmer)\r\n",
                ),
            ],
            file: "crm/views.py",
            line: 2,
            func: Some("<module>"),
            caret: None,
            exc: "ImportError: cannot import name 'Custmer' from 'crm.models' (ROOT/crm/models.py)",
            test_line: "from crm import views",
        }
        import_python_hint {
            files: &[
                ("lib/__init__.py", b""),
                ("lib/text.py", b"def slugify(s):\n    return s.lower()\n"),
                (
                    "lib/urls.py",
                    b"from lib.text import slugfy\n\n\ndef url(title):\n    return \"/\" + slugfy(title)\n",
                ),
            ],
            file: "lib/urls.py",
            line: 1,
            func: Some("<module>"),
            caret: None,
            exc: "ImportError: cannot import name 'slugfy' from 'lib.text' (ROOT/lib/text.py). Did you mean: 'slugify'?",
            test_line: "from lib import urls",
        }

    }
}

/// A name nobody defines and nothing resembles yields no candidate, not a wild guess.
#[test]
fn unknown_name_has_no_candidate() {
    let case = Case {
        files: &[("m.py", b"def f(a):\n    return zzqx_frobnicate + a\n")],
        file: "m.py",
        line: 2,
        func: Some("f"),
        exc: "NameError: name 'zzqx_frobnicate' is not defined",
        test_line: "assert m.f(1)",
        ..Case::MOD
    };
    let (dir, log) = plans::project(&case);
    assert!(plans::candidates("nothing_close", dir.path(), &log, case.file, case.line).is_empty());
}

/// Failures in odd places (module level, a class body, a one-line `def`, a lambda default)
/// yield candidates or nothing, never a panic.
#[test]
fn odd_places_do_not_panic() {
    let cases = [
        ("m.py", b"X = undefined_thing + 1\n" as &[u8], 1, "<module>", "NameError: name 'undefined_thing' is not defined"),
        ("m.py", b"class C:\n    size = 3\n    area = sise * 2\n", 3, "C", "NameError: name 'sise' is not defined"),
        ("m.py", b"n = 0\ndef f(): n += 1; return n\n", 2, "f", "UnboundLocalError: cannot access local variable 'n' where it is not associated with a value"),
        ("m.py", b"def f(k=lambda: valu):\n    value = 1\n    return k()\n", 1, "<lambda>", "NameError: name 'valu' is not defined"),
        ("m.py", b"from . import nothing\n", 1, "<module>", "ImportError: cannot import name 'nothing' from 'pkg' (unknown location)"),
        ("m.py", b"def f():\n    del x\n    x = 1\n", 2, "f", "UnboundLocalError: cannot access local variable 'x' where it is not associated with a value"),
    ];
    for (file, bytes, line, func, exc) in cases {
        let files: &'static [(&'static str, &'static [u8])] =
            Box::leak(vec![(file, bytes)].into_boxed_slice());
        let case = Case {
            files,
            file,
            line,
            func: Some(func),
            exc,
            test_line: "assert m",
            ..Case::MOD
        };
        let (dir, log) = plans::project(&case);
        let parsed = traceback::parse(&log, dir.path()).unwrap();
        let rules = RuleSet::builtin().unwrap();
        let _ = plan::plan(&PlanInput {
            root: dir.path(),
            failure: &parsed.failures[0],
            rules: &rules,
            probe: None,
            allow_tests: false,
            stdlib: plans::stdlib(),
        });
    }
}

/// Which of these rules match which message variants (3.8–3.13), and what they capture.
#[test]
fn rule_messages() {
    let rules = RuleSet::builtin().unwrap();
    let ids = |exc: &str, msg: &str| -> Vec<String> {
        let mut v: Vec<String> = rules
            .matching(exc, msg)
            .iter()
            .map(|m| m.rule.id.clone())
            .filter(|id| {
                id.starts_with("name-") || id.starts_with("unbound-") || id.starts_with("import-")
            })
            .collect();
        v.sort();
        v
    };
    let all_name = [
        "name-import-project",
        "name-import-stdlib",
        "name-import-stdlib-ranked",
        "name-import-used",
        "name-nearest",
    ];
    // Without Python's hint, `name-did-you-mean` computes it.
    assert_eq!(
        ids("NameError", "name 'cont' is not defined"),
        [
            "name-did-you-mean",
            "name-import-project",
            "name-import-stdlib",
            "name-import-stdlib-ranked",
            "name-import-used",
            "name-nearest"
        ]
    );
    assert_eq!(
        ids(
            "NameError",
            "name 'cont' is not defined. Did you mean: 'count'?"
        ),
        [
            "name-did-you-mean",
            "name-import-project",
            "name-import-stdlib",
            "name-import-stdlib-ranked",
            "name-import-used",
            "name-nearest"
        ]
    );
    assert_eq!(
        ids(
            "NameError",
            "name 'sys' is not defined. Did you forget to import 'sys'?"
        ),
        all_name
    );
    let forgot = rules.matching(
        "NameError",
        "name 'sys' is not defined. Did you forget to import 'sys'?",
    );
    assert!(forgot
        .iter()
        .any(|m| m.captures.get("forgot").map(String::as_str) == Some("sys")));
    assert_eq!(
        ids(
            "UnboundLocalError",
            "cannot access local variable 'x' where it is not associated with a value"
        ),
        ["unbound-local-variable"]
    );
    assert_eq!(
        ids(
            "UnboundLocalError",
            "local variable 'x' referenced before assignment"
        ),
        ["unbound-local-variable"]
    );
    assert_eq!(
        ids(
            "ImportError",
            "cannot import name 'a' from 'pkg.m' (/p/pkg/m.py). Did you mean: 'b'?"
        ),
        ["import-did-you-mean", "import-project-name"]
    );
    assert_eq!(
        ids(
            "ImportError",
            "cannot import name 'a' from 'pkg' (unknown location)"
        ),
        ["import-project-name"]
    );
    // A circular import is not a wrong name.
    assert!(ids(
        "ImportError",
        "cannot import name 'a' from partially initialized module 'pkg.m' (most likely due to a circular import) (/p/pkg/m.py)"
    )
    .is_empty());
    assert!(ids(
        "NameError",
        "free variable 'x' referenced before assignment in enclosing scope"
    )
    .is_empty());
}
