//! The built-in rules: they load, their examples are Python, and each message form of the
//! null-guard family matches exactly the expected rule with the expected captures.

use std::collections::BTreeMap;
use std::path::Path;

use selfdebug::rules::{RuleSet, RuleSource};

const NULL_GUARDS: &[(&str, &str)] = &[
    ("null-guard-attribute", "attribute"),
    ("null-guard-binop-left", "binop"),
    ("null-guard-binop-right", "binop"),
    ("null-guard-call", "call"),
    ("null-guard-compare-left", "compare"),
    ("null-guard-compare-right", "compare"),
    ("null-guard-flow", "flow"),
    ("null-guard-iterate", "iterate"),
    ("null-guard-join", "join"),
    ("null-guard-len", "len"),
    ("null-guard-not-found", "find"),
    ("null-guard-subscript", "subscript"),
    ("null-guard-unpack", "unpack"),
];

fn builtin() -> RuleSet {
    RuleSet::builtin().unwrap_or_else(|e| panic!("built-in rules must load: {e}"))
}

/// A built-in rule's regex is compiled on first use, not at load: every one must compile.
#[test]
fn every_builtin_message_regex_compiles() {
    let set = builtin();
    assert!(set.rules().len() > 40);
    for r in set.rules() {
        let re = r.message.regex();
        assert!(re.is_some(), "{}: {:?} does not compile", r.id, r.message);
        assert_eq!(re.unwrap().as_str(), r.message.as_str());
    }
}

/// (rule id, captures) of every match, in the order `matching` returns them.
fn matches(exc_type: &str, msg: &str) -> Vec<(String, BTreeMap<String, String>)> {
    builtin()
        .matching(exc_type, msg)
        .into_iter()
        .map(|m| (m.rule.id.clone(), m.captures))
        .collect()
}

fn caps(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn one(id: &str, pairs: &[(&str, &str)]) -> Vec<(String, BTreeMap<String, String>)> {
    vec![(id.to_string(), caps(pairs))]
}

/// The family's general rule: it matches every message that names `None` (the probe decides
/// whether it proposes anything) and, at low confidence, comes after the dedicated rule.
const FLOW: &str = "null-guard-flow";

/// The dedicated rule `id` with its captures, then the general rule.
fn then_flow(id: &str, pairs: &[(&str, &str)]) -> Vec<(String, BTreeMap<String, String>)> {
    vec![(id.to_string(), caps(pairs)), (FLOW.to_string(), caps(&[]))]
}

#[test]
fn every_builtin_rule_loads_with_its_file_name_as_id() {
    let set = builtin();
    let ids: Vec<&str> = set.rules().iter().map(|r| r.id.as_str()).collect();
    for (id, _) in NULL_GUARDS {
        assert!(ids.contains(id), "{id} is built in");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(ids, files, "every rules/*.toml is compiled in");
    for rule in set.rules() {
        assert_eq!(rule.source, RuleSource::Builtin);
        assert!(!rule.overrides_builtin);
    }
}

#[test]
fn the_null_guard_family_is_logic_null_guard_with_an_operation() {
    let set = builtin();
    for (id, operation) in NULL_GUARDS {
        let rule = set.get(id).unwrap();
        assert_eq!(rule.transform.name(), "null_guard", "{id}");
        assert_eq!(rule.category.as_str(), "logic", "{id}");
        let params = rule.transform.params();
        assert_eq!(params["operation"].as_str(), Some(*operation), "{id}");
        assert!(!rule.safe, "{id}: a None guard can hide a bug upstream");
    }
}

#[test]
fn every_builtin_example_is_valid_python() {
    for rule in builtin().rules() {
        for (which, src) in [
            ("example_before", &rule.docs.example_before),
            ("example_after", &rule.docs.example_after),
        ] {
            let name = format!("rules/{}.toml:{which}", rule.id);
            let parsed = selfdebug::syntax::parse_text(Path::new(&name), src);
            // A syntax rule's "before" is the invalid code it repairs: it must NOT parse.
            if which == "example_before" && rule.category.as_str() == "syntax" {
                assert!(parsed.is_err(), "{name} must show invalid Python\n{src}");
                continue;
            }
            if let Err(e) = parsed {
                panic!("{name} is not valid Python: {e:?}\n{src}");
            }
        }
        assert_ne!(
            rule.docs.example_before.trim(),
            rule.docs.example_after.trim(),
            "{}: the example must show a change",
            rule.id
        );
    }
}

#[test]
fn attribute_on_none() {
    assert_eq!(
        matches(
            "AttributeError",
            "'NoneType' object has no attribute 'split'"
        ),
        then_flow("null-guard-attribute", &[("attr", "split")])
    );
    // Python 3.12+ may add its own hint to the message.
    assert_eq!(
        matches(
            "AttributeError",
            "'NoneType' object has no attribute 'splt'. Did you mean: 'split'?"
        ),
        then_flow("null-guard-attribute", &[("attr", "splt")])
    );
    // A qualified type and a multi-line message: the last component, the first line.
    assert_eq!(
        matches(
            "builtins.AttributeError",
            "'NoneType' object has no attribute '_private2'\nsome note\n"
        ),
        then_flow("null-guard-attribute", &[("attr", "_private2")])
    );
}

#[test]
fn subscript_len_call_on_none() {
    assert_eq!(
        matches("TypeError", "'NoneType' object is not subscriptable"),
        then_flow("null-guard-subscript", &[])
    );
    assert_eq!(
        matches("TypeError", "object of type 'NoneType' has no len()"),
        then_flow("null-guard-len", &[])
    );
    assert_eq!(
        matches("TypeError", "'NoneType' object is not callable"),
        then_flow("null-guard-call", &[])
    );
}

#[test]
fn iterating_and_membership_on_none() {
    for msg in [
        "'NoneType' object is not iterable",
        "argument of type 'NoneType' is not iterable",
        // The `in` message from Python 3.14 on.
        "argument of type 'NoneType' is not a container or iterable",
    ] {
        assert_eq!(
            matches("TypeError", msg),
            then_flow("null-guard-iterate", &[]),
            "{msg}"
        );
    }
}

#[test]
fn binop_with_none_on_either_side() {
    assert_eq!(
        matches(
            "TypeError",
            "unsupported operand type(s) for +: 'NoneType' and 'int'"
        ),
        then_flow(
            "null-guard-binop-left",
            &[("op", "+"), ("left", "NoneType"), ("right", "int")]
        )
    );
    assert_eq!(
        matches(
            "TypeError",
            "unsupported operand type(s) for -: 'int' and 'NoneType'"
        ),
        then_flow(
            "null-guard-binop-right",
            &[("op", "-"), ("left", "int"), ("right", "NoneType")]
        )
    );
    assert_eq!(
        matches(
            "TypeError",
            "unsupported operand type(s) for +=: 'NoneType' and 'str'"
        ),
        then_flow(
            "null-guard-binop-left",
            &[("op", "+="), ("left", "NoneType"), ("right", "str")]
        )
    );
    assert_eq!(
        matches(
            "TypeError",
            "unsupported operand type(s) for ** or pow(): 'float' and 'NoneType'"
        ),
        then_flow(
            "null-guard-binop-right",
            &[
                ("op", "** or pow()"),
                ("left", "float"),
                ("right", "NoneType")
            ]
        )
    );
    // Both None: both rules, same confidence, so in id order.
    let both = [("op", "*"), ("left", "NoneType"), ("right", "NoneType")];
    assert_eq!(
        matches(
            "TypeError",
            "unsupported operand type(s) for *: 'NoneType' and 'NoneType'"
        ),
        vec![
            ("null-guard-binop-left".to_string(), caps(&both)),
            ("null-guard-binop-right".to_string(), caps(&both)),
            (FLOW.to_string(), caps(&[])),
        ]
    );
}

#[test]
fn ordering_comparison_with_none_on_either_side() {
    assert_eq!(
        matches(
            "TypeError",
            "'>=' not supported between instances of 'NoneType' and 'int'"
        ),
        then_flow(
            "null-guard-compare-left",
            &[("op", ">="), ("left", "NoneType"), ("right", "int")]
        )
    );
    assert_eq!(
        matches(
            "TypeError",
            "'<' not supported between instances of 'datetime.date' and 'NoneType'"
        ),
        then_flow(
            "null-guard-compare-right",
            &[
                ("op", "<"),
                ("left", "datetime.date"),
                ("right", "NoneType")
            ]
        )
    );
    assert_eq!(
        matches("TypeError", "cannot unpack non-iterable NoneType object"),
        then_flow("null-guard-unpack", &[])
    );
}

#[test]
fn join_with_a_none_item_is_the_null_guard_not_the_str_sink() {
    // type-join-str matches too but proposes nothing for NoneType: both, in confidence order.
    let ids: Vec<String> = matches(
        "TypeError",
        "sequence item 1: expected str instance, NoneType found",
    )
    .into_iter()
    .map(|(id, _)| id)
    .collect();
    assert_eq!(ids, vec!["type-join-str", "null-guard-join", FLOW]);
}

#[test]
fn a_none_looked_up_or_removed_in_a_list() {
    assert_eq!(
        matches("ValueError", "None is not in list"),
        then_flow("null-guard-not-found", &[("none", "None")])
    );
    assert_eq!(
        matches("ValueError", "None is not in deque"),
        then_flow("null-guard-not-found", &[("none", "None")])
    );
    // `remove` and `tuple.index` print `x`: the rule matches and the probe decides.
    assert_eq!(
        matches("ValueError", "list.remove(x): x not in list"),
        one("null-guard-not-found", &[])
    );
    assert_eq!(
        matches("ValueError", "tuple.index(x): x not in tuple"),
        one("null-guard-not-found", &[])
    );
    assert!(matches("ValueError", "'b' is not in list").is_empty());
}

#[test]
fn other_messages_that_name_none_are_the_general_rule() {
    for (exc, msg) in [
        (
            "TypeError",
            "can only concatenate str (not \"NoneType\") to str",
        ),
        (
            "TypeError",
            "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
        ),
        (
            "TypeError",
            "expected string or bytes-like object, got 'NoneType'",
        ),
        ("TypeError", "must be real number, not NoneType"),
        ("ValueError", "None is not a valid Color"),
    ] {
        assert_eq!(matches(exc, msg), one(FLOW, &[]), "{exc}: {msg}");
    }
    // Words that only resemble it.
    for (exc, msg) in [
        ("AttributeError", "'NoneTypes' object has no attribute 'x'"),
        ("ValueError", "Nonesuch is not a valid Color"),
    ] {
        let ids: Vec<String> = matches(exc, msg).into_iter().map(|(id, _)| id).collect();
        assert!(!ids.contains(&FLOW.to_string()), "{exc}: {msg}: {ids:?}");
    }
}

#[test]
fn messages_about_other_types_match_no_null_guard() {
    for (exc, msg) in [
        (
            "TypeError",
            "'<' not supported between instances of 'str' and 'int'",
        ),
        ("TypeError", "cannot unpack non-iterable int object"),
        ("AttributeError", "'int' object has no attribute 'x'"),
        ("TypeError", "'int' object is not subscriptable"),
        ("TypeError", "object of type 'int' has no len()"),
        ("AttributeError", "module 'os' has no attribute 'NoneType'"),
        // Right message, wrong exception type.
        ("TypeError", "'NoneType' object has no attribute 'split'"),
        ("AttributeError", "'NoneType' object is not subscriptable"),
        (
            "myapp.AttributeErrorish",
            "'NoneType' object has no attribute 'x'",
        ),
        // Not on the first line.
        (
            "TypeError",
            "something else\n'NoneType' object is not callable",
        ),
        ("TypeError", ""),
    ] {
        // Other families may claim these (`attr-nearest`, `type-*`); a dedicated null guard
        // never. The general one takes any message that names `None` and proposes only what
        // the probe shows to be `None`.
        let ids: Vec<String> = matches(exc, msg).into_iter().map(|(id, _)| id).collect();
        assert!(
            ids.iter()
                .all(|id| !id.starts_with("null-guard") || id == FLOW),
            "{exc}: {msg}: {ids:?}"
        );
    }
}

/// Non-None TypeErrors belong to the `type-*` rules, never to a null guard.
#[test]
fn non_none_type_errors_match_only_type_rules() {
    for (msg, id) in [
        ("'int' object is not iterable", "type-not-iterable"),
        ("'str' object is not callable", "type-not-callable"),
        (
            "unsupported operand type(s) for +: 'int' and 'str'",
            "type-str-number-operand",
        ),
        (
            "can only concatenate str (not \"int\") to str",
            "type-str-concat",
        ),
    ] {
        let ids: Vec<String> = matches("TypeError", msg)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, vec![id.to_string()], "{msg}");
    }
}

/// The messages come from the real interpreter, so the regexes cannot drift from Python.
#[test]
fn real_python_messages_match_their_rule() {
    let script = r#"
import sys
cases = [
    ("null-guard-attribute", "None.split"),
    ("null-guard-subscript", "None[0]"),
    ("null-guard-iterate", "[x for x in None]"),
    ("null-guard-iterate", "1 in None"),
    ("null-guard-len", "len(None)"),
    ("null-guard-binop-left", "None + 1"),
    ("null-guard-binop-right", "1 - None"),
    ("null-guard-call", "(lambda f: f())(None)"),
    ("null-guard-compare-left", "None < 1"),
    ("null-guard-compare-right", "1.5 >= None"),
    ("null-guard-unpack", "(lambda: [a for a, b in [None]])()"),
    ("null-guard-join", "', '.join(['a', None])"),
    ("null-guard-not-found", "[1].index(None)"),
    ("null-guard-not-found", "[1].remove(None)"),
]
for rule, expr in cases:
    try:
        eval(expr)
    except Exception as e:
        print(f"{rule}\t{type(e).__name__}\t{e}")
"#;
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(&python)
        .args(["-c", script])
        .output()
        .unwrap_or_else(|e| panic!("run {python}: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 14, "{text}");
    for line in text.lines() {
        let mut parts = line.splitn(3, '\t');
        let (rule, exc, msg) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let ids: Vec<String> = matches(exc, msg).into_iter().map(|(id, _)| id).collect();
        // The str sink's rule matches every join message and leaves NoneType to this one.
        let mut want = vec![rule.to_string()];
        if rule == "null-guard-join" {
            want.insert(0, "type-join-str".to_string());
        }
        // Every message but `remove`'s names `None`: the general rule follows.
        if msg.contains("None") {
            want.push(FLOW.to_string());
        }
        assert_eq!(ids, want, "{exc}: {msg}");
    }
}
