//! The schemas under `schema/` against the code: one per command, each at `/v1/` with its
//! `schema_version`, and every closed value set (`enum`) equal to the words of the Rust enum
//! that produces it, so that schema and code cannot drift. (`crate::status`'s test does the
//! same for the fix report's statuses.)

use serde::Serialize;
use serde_json::Value;

use crate::edit::Confidence;
use crate::journal::{Action, Origin};
use crate::probe::{InjectionKind, ProbeSource};
use crate::rules::RuleSource;
use crate::status::Category;
use crate::traceback::{LogKind, Outcome, RejectReason, Relation, TbStyle, When};

/// The serde words of the listed variants of a unit enum, in this order. The `match` makes
/// the list exhaustive: a variant added to the enum and not here does not compile.
macro_rules! words {
    ($t:ident { $($v:ident),+ $(,)? }) => {{
        #[allow(dead_code)]
        fn exhaustive(v: $t) {
            match v {
                $($t::$v => {})+
            }
        }
        vec![$(word(&$t::$v)),+]
    }};
}

fn word(v: &impl Serialize) -> String {
    match serde_json::to_value(v).unwrap() {
        Value::String(s) => s,
        other => panic!("not a word: {other}"),
    }
}

fn schema(name: &str) -> Value {
    let path = format!("{}/schema/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn listed(schema: &Value, pointer: &str) -> Vec<String> {
    schema
        .pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no enum at {pointer}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

const COMMANDS: [(&str, u32); 8] = [
    ("fix", super::fix::FIX_SCHEMA_VERSION),
    // The MCP tool `fix`'s default result (`detail: "summary"`), made from fix's report.
    ("fix-summary", super::fix::FIX_SCHEMA_VERSION),
    ("parse", crate::traceback::PARSE_SCHEMA_VERSION),
    ("probe", crate::probe::PROBE_SCHEMA_VERSION),
    ("rules", super::rules::SCHEMA_VERSION),
    ("restore", super::restore::SCHEMA_VERSION),
    ("config", super::config::CONFIG_SCHEMA_VERSION),
    ("replay", crate::replay::SCHEMA_VERSION),
];

/// Every command has its schema, whose `$id` carries the version the code writes.
#[test]
fn one_schema_per_command_at_its_version() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/schema");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = COMMANDS
        .iter()
        .map(|(c, _)| format!("{c}.schema.json"))
        .collect();
    expected.sort();
    assert_eq!(files, expected);
    for (command, version) in COMMANDS {
        let s = schema(command);
        assert_eq!(
            s["$id"],
            format!("https://selfdebug.dev/schema/v{version}/{command}.schema.json"),
            "{command}"
        );
        assert_eq!(
            s["properties"]["schema_version"]["const"], version,
            "{command}"
        );
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(
            required.contains(&"schema_version") && required.contains(&"exit_code"),
            "{command}: the envelope's fields are always there"
        );
        assert!(s["properties"]["error"].is_object(), "{command}: `error`");
    }
}

/// Every closed set of every schema is the words of its Rust enum, in order.
#[test]
fn every_schema_enum_is_its_rust_enum() {
    let when = words!(When {
        Call,
        Setup,
        Teardown,
        Collect,
        Unknown
    });
    let probe_source = words!(ProbeSource { Probe, Plugin });
    let injection = words!(InjectionKind {
        BeforeStatement,
        BeforeCompoundHeader,
        BeforeIfChain,
        BeforeCompoundStatement,
        BeforeDefinition,
    });
    let categories: Vec<String> = Category::ALL.iter().map(|c| c.as_str().into()).collect();
    let sets: Vec<(&str, &str, Vec<String>)> = vec![
        (
            "parse",
            "/properties/kind",
            words!(LogKind {
                Pytest,
                Unittest,
                Cpython
            }),
        ),
        ("parse", "/$defs/failure/properties/when", when.clone()),
        (
            "parse",
            "/$defs/failure/properties/outcome",
            words!(Outcome { Failed, Error }),
        ),
        (
            "parse",
            "/$defs/failure/properties/style",
            words!(TbStyle {
                Long,
                Short,
                Native,
                Line,
                Summary
            }),
        ),
        (
            "parse",
            "/$defs/chain_link/properties/relation",
            words!(Relation { Cause, Context }),
        ),
        (
            "parse",
            "/$defs/rejected_frame/properties/reason",
            words!(RejectReason {
                NotAFile,
                PythonInstall,
                SitePackages,
                Virtualenv,
                TestRunner,
                OutsideRoot,
                Missing,
                TestFile,
                SourceChanged,
            }),
        ),
        ("fix", "/$defs/failure/properties/when", when),
        (
            "fix",
            "/$defs/probe_report/properties/source",
            probe_source.clone(),
        ),
        (
            "fix",
            "/$defs/probe_report/properties/injection",
            injection.clone(),
        ),
        ("probe", "/properties/source", probe_source),
        ("probe", "/properties/injection", injection),
        ("rules", "/$defs/rule/properties/category", categories),
        (
            "rules",
            "/$defs/rule/properties/confidence",
            words!(Confidence { Low, Medium, High }),
        ),
        (
            "rules",
            "/$defs/rule/properties/source",
            [RuleSource::Builtin, RuleSource::Project("p".into())]
                .iter()
                .map(|s| super::rules::source_word(s).to_string())
                .collect(),
        ),
        (
            "restore",
            "/$defs/file/properties/source",
            words!(Origin {
                JournalCopy,
                BackupCopy,
                GitBlob,
                Memory
            }),
        ),
        (
            "restore",
            "/$defs/file/properties/action",
            words!(Action {
                Rewritten,
                Recreated,
                Unchanged,
                Left
            }),
        ),
        ("config", "/$defs/setting/properties/source", {
            use crate::config::settings::Source;
            [Source::Default, Source::File(1), Source::Flag("--x")]
                .iter()
                .map(|s| super::config::source_word(s).to_string())
                .collect()
        }),
    ];
    let sets = sets.into_iter().chain(crate::replay::report::closed_sets());
    for (file, pointer, words) in sets {
        let s = schema(file);
        assert_eq!(
            listed(&s, &format!("{pointer}/enum")),
            words,
            "{file}: {pointer}"
        );
    }
    // The statuses and the rest of fix's sets: crate::status's test.
}

/// `probe --json` is the report `fix` embeds (`$defs/probe_report`) with the envelope: the two
/// schemas say the same of every field.
#[test]
fn the_probe_schema_is_the_report_fix_embeds() {
    let (fix, probe) = (schema("fix"), schema("probe"));
    let embedded = &fix["$defs"]["probe_report"];
    // schema_version: the same const, described as the envelope's.
    let fields = |props: &Value| {
        let mut m = props.as_object().unwrap().clone();
        for k in ["schema_version", "exit_code", "error"] {
            m.remove(k);
        }
        m
    };
    assert_eq!(
        fields(&probe["properties"]),
        fields(&embedded["properties"])
    );
    let mut required = probe["else"]["required"].as_array().unwrap().clone();
    required.retain(|v| v != "exit_code");
    assert_eq!(&Value::Array(required), &embedded["required"]);
    for (name, def) in probe["$defs"].as_object().unwrap() {
        assert_eq!(def, &fix["$defs"][name], "$defs/{name}");
    }
}
