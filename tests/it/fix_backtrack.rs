//! Backtracking and defaults from the consuming context (issue 26, item 3), in pytest mode and
//! in command mode (`fix --cmd`): a candidate that moves the failure to one that has no fix is
//! undone and the original failure's next candidate is tried; a missing key read by `sum(...)`
//! defaults to `0`, not to a container.

use crate::support;

use support::project::{json, project, Project};

const PYTEST_INI: &str = "[pytest]\npythonpath = .\ntestpaths = tests\n";

/// The issue's case: `sum(row['price'] for row in rows)` with a row that has no price.
const REPORT: &str = r#"import sys


def total(rows):
    return sum(row['price'] for row in rows)


ROWS = [{'price': 3}, {'name': 'gift card'}, {'price': 4}]

if __name__ == "__main__":
    print(total(ROWS))
    sys.exit(0)
"#;

const REPORT_TEST: &str = r#"from report import total


def test_unpriced_rows_add_nothing():
    assert total([{"price": 3}, {}, {"price": 4}]) == 7


def test_priced_rows():
    assert total([{"price": 2}, {"price": 5}]) == 7
"#;

/// A ledger whose first candidate (`row.get("price")`) moves the failure to `sum` of a None,
/// which no rule fixes: it must be undone and the next candidate (skip the row) kept.
const LEDGER: &str = r#""""A ledger of priced rows; rows without a price are not billed."""


class Ledger:
    def __init__(self, rows):
        self._rows = list(rows)

    def amounts(self):
        out = []
        for row in self._rows:
            amount = row["price"]
            out.append(amount)
        return out

    def total(self):
        return sum(self.amounts())


if __name__ == "__main__":
    print(Ledger([{"price": 3}, {"name": "gift"}, {"price": 4}]).total())
"#;

const LEDGER_TEST: &str = r#"from ledger import Ledger


def test_total_skips_unpriced_rows():
    assert Ledger([{"price": 3}, {"name": "gift"}, {"price": 4}]).total() == 7


def test_amounts():
    assert Ledger([{"price": 2}, {"price": 5}]).amounts() == [2, 5]
"#;

fn fix(p: &Project, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut args = vec!["fix", "--json"];
    args.extend_from_slice(extra);
    let out = p.run(&args);
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    (out, v)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn report_project() -> Project {
    project(&[
        ("pytest.ini", PYTEST_INI),
        ("report.py", REPORT),
        ("tests/test_report.py", REPORT_TEST),
        ("want.txt", "7\n"),
    ])
}

fn ledger_project() -> Project {
    project(&[
        ("pytest.ini", PYTEST_INI),
        ("ledger.py", LEDGER),
        ("tests/test_ledger.py", LEDGER_TEST),
        ("want.txt", "7\n"),
    ])
}

fn assert_sum_default(p: &Project, out: &std::process::Output, v: &serde_json::Value) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    assert_eq!(v["final_status"], "pass");
    assert_eq!(
        p.read("report.py"),
        REPORT.replace("row['price']", "row.get('price', 0)")
    );
    // The first candidate is the right one: no container default moved the failure first.
    let records = v["attempt_records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["outcome"], "accepted");
}

#[test]
fn a_missing_key_summed_defaults_to_zero_in_pytest_mode() {
    let p = report_project();
    let (out, v) = fix(&p, &[]);
    assert_sum_default(&p, &out, &v);
}

#[test]
fn a_missing_key_summed_defaults_to_zero_in_command_mode() {
    let p = report_project();
    let (out, v) = fix(
        &p,
        &["--cmd", "python3 report.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(v["judge"], "command");
    assert_sum_default(&p, &out, &v);
}

const LEDGER_SKIP: &str = r#"        for row in self._rows:
            if "price" not in row:
                continue
            amount = row["price"]
"#;

fn assert_backtracked(
    p: &Project,
    out: &std::process::Output,
    v: &serde_json::Value,
    judged: &str,
) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    assert_eq!(v["final_status"], "pass");
    assert_eq!(
        p.read("ledger.py"),
        LEDGER.replace(
            "        for row in self._rows:\n            amount = row[\"price\"]\n",
            LEDGER_SKIP
        )
    );
    let records = v["attempt_records"].as_array().unwrap();
    let seen: Vec<(&str, u64, &str)> = records
        .iter()
        .map(|r| {
            (
                r["title"].as_str().unwrap(),
                r["step"].as_u64().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                "use `row.get(\"price\")`: None when the key is missing",
                0,
                "progressed"
            ),
            (
                "skip the iteration when \"price\" is not in `row`",
                0,
                "accepted"
            ),
        ],
        "{records:#?}"
    );
    assert_eq!(
        records[0]["new_failure"],
        "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"
    );
    // The kept patch is the second candidate's alone: the first was undone.
    assert_eq!(v["patches"].as_array().unwrap().len(), 1);
    let err = stderr(out);
    assert!(
        err.contains(&format!(
            "the {judged} then failed differently (TypeError: unsupported operand type(s) for \
             +: 'int' and 'NoneType'), which found no fix: undone"
        )),
        "{err}"
    );
}

#[test]
fn a_step_into_a_failure_without_a_fix_is_undone_in_pytest_mode() {
    let p = ledger_project();
    let (out, v) = fix(&p, &[]);
    assert_backtracked(&p, &out, &v, "test");
}

#[test]
fn a_step_into_a_failure_without_a_fix_is_undone_in_command_mode() {
    let p = ledger_project();
    let (out, v) = fix(
        &p,
        &["--cmd", "python3 ledger.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(v["judge"], "command");
    assert_backtracked(&p, &out, &v, "command");
}
