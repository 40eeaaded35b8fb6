//! The closed sets of values that reach the JSON reports: one enum each, serialized in
//! snake_case (the schema's `enum` lists are checked against [`all`] by a test, so the two
//! cannot drift), with `as_str` for the human log. The exit code is a total function of
//! [`FinalStatus`].

/// Declares a closed set: the enum, its JSON words (serde), `as_str` and the list of every
/// value (for the schema check), from one table.
macro_rules! closed_set {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $word:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The JSON word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The value whose word is `word` (as a data file spells it).
            #[allow(dead_code)]
            pub fn from_word(word: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == word)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use closed_set;

closed_set! {
    /// The fate of one failure (`failures[].status`).
    FailureStatus {
        /// A proven patch fixed it.
        Fixed => "fixed",
        /// It went away with the patch of another failure.
        FixedByAnotherPatch => "fixed_by_another_patch",
        NotFixed => "not_fixed",
        /// Nothing was tried: no candidate applied.
        NoCandidate => "no_candidate",
        /// Only unsafe rules had candidates, and `--safe-only` was given.
        SkippedUnsafe => "skipped_unsafe",
        /// Not a code bug (environment, dependency): reported, not patched.
        Escalated => "escalated",
        TimedOut => "timed_out",
        Flaky => "flaky",
        /// `--no-validate`: a candidate was printed, nothing was run.
        NotValidated => "not_validated",
        /// Fixed, but undone by `--all-or-nothing`.
        RolledBack => "rolled_back",
        /// `--install-missing` installed the missing module and the failure is gone.
        Installed => "installed",
    }
}

closed_set! {
    /// Why a failure ended as it did, as data (`failures[].reason_code`), beside the prose of
    /// `reason`: one word per kind of end, for an agent to branch on.
    ReasonCode {
        /// A proven patch fixed it (its own, or another failure's).
        Fixed => "fixed",
        /// `--install-missing` installed the missing module.
        Installed => "installed",
        /// No rule, search or model produced a candidate for it.
        NoCandidate => "no_candidate",
        /// Candidates were run, and none passed every proof.
        CandidatesRejected => "candidates_rejected",
        /// Its candidates had all been rejected for another failure with the same crash.
        AlreadyRejected => "already_rejected",
        /// Only unsafe rules had candidates, and `--safe-only` was given.
        SafeOnly => "safe_only",
        /// The run's time budget ran out before it was fixed.
        TimeBudget => "time_budget",
        /// Its category's attempt budget (`--max-attempts`) was used up.
        AttemptBudget => "attempt_budget",
        /// Not a code bug (environment, dependency): reported, not patched.
        Escalated => "escalated",
        /// The test hangs past the per-test limit: reported, not patched.
        TimedOut => "timed_out",
        /// The test passes and fails on the same code.
        Flaky => "flaky",
        /// `--no-validate`: a candidate was proposed, nothing was run.
        NotValidated => "not_validated",
        /// Fixed, but undone by `--all-or-nothing`.
        RolledBack => "rolled_back",
        /// The run was interrupted before it was fixed.
        Interrupted => "interrupted",
    }
}

impl FailureStatus {
    /// Whether the failure is gone at the end of the run (what `--all-or-nothing` and the
    /// final status count as fixed).
    pub fn is_fixed(self) -> bool {
        matches!(
            self,
            FailureStatus::Fixed | FailureStatus::FixedByAnotherPatch | FailureStatus::Installed
        )
    }

    /// Fixed by a patch this run kept (undone when the run keeps nothing).
    pub fn is_patched(self) -> bool {
        matches!(
            self,
            FailureStatus::Fixed | FailureStatus::FixedByAnotherPatch
        )
    }
}

closed_set! {
    /// What became of one candidate (`attempts[].outcome`).
    AttemptOutcome {
        Accepted => "accepted",
        StillFailing => "still_failing",
        /// A different failure now: worked on as the next step.
        Progressed => "progressed",
        /// Tests that passed before failed with it.
        NewFailures => "new_failures",
        /// The full run gave no verdict.
        SuiteError => "suite_error",
        Timeout => "timeout",
        NotValidated => "not_validated",
        /// A model's answer refused before any run (`new_failure` says why).
        Refused => "refused",
        /// A search candidate that passed every proof; another was kept.
        Plausible => "plausible",
        /// An unsafe candidate whose failing tests passed once and then failed on a repeat
        /// (`repeats` says how many of how many): a pass by chance, not a proof.
        ByChance => "by_chance",
    }
}

closed_set! {
    /// Where a candidate came from (`source` of attempts and patches).
    Source {
        /// A rule of `rules/` (the expected-raise guards among them).
        Rule => "rule",
        /// The search over small edits.
        Search => "search",
        /// The model fallback (`--llm`).
        Llm => "llm",
    }
}

closed_set! {
    /// Ruff's word for a fix's kind: one right answer that the failure names, or an invented
    /// value / a guess at intent (pytest proved it; a reviewer should read it).
    Applicability {
        Safe => "safe",
        Unsafe => "unsafe",
    }
}

impl Applicability {
    pub fn of(safe: bool) -> Applicability {
        if safe {
            Applicability::Safe
        } else {
            Applicability::Unsafe
        }
    }
}

closed_set! {
    /// How a candidate silences a failure instead of repairing it (`attempts[].silencing`;
    /// issue 33, docs/proof.md): never the first answer, ranked after every edit that assigns
    /// the missing value.
    Silencing {
        /// A guard returns a value the function returns nowhere else (`return None` where it
        /// returns text, `return []` from a procedure).
        ForeignValue => "foreign_value",
        /// A guard returns early past statements with effects (`self.x = ...`, calls): the
        /// function stops doing its work.
        SkipsWork => "skips_work",
        /// An inserted `raise`, exit call, or a `return` with code after it.
        Exit => "exit",
        /// A deleted statement.
        Deleted => "deleted",
    }
}

closed_set! {
    /// Which judge proved the run (`judge`).
    Judge {
        Pytest => "pytest",
        /// `--cmd`.
        Command => "command",
    }
}

closed_set! {
    /// How a patch's diff text maps to its bytes (`diff_encoding`).
    DiffEncoding {
        /// The text is the bytes.
        Utf8 => "utf-8",
        /// A file whose bytes are not UTF-8: each character is one byte.
        Latin1 => "iso-8859-1",
    }
}

closed_set! {
    /// How an accepted attempt was confirmed when not by its own full run (`confirmed_by`).
    ConfirmedBy {
        /// One full run with the other pending fixes.
        Batch => "batch",
        /// The batch's run failed: a full run with it and the fixes kept before it.
        OneByOne => "one_by_one",
    }
}

closed_set! {
    /// What became of one cause's patches (`causes[].status`; see docs/proof.md).
    CauseStatus {
        /// Every test of the cause passes with its patches: kept.
        Fixed => "fixed",
        /// A test of the cause still failed: every file its patches touched was restored.
        Restored => "restored",
        /// No patch was kept for it and some of its tests still fail.
        NotFixed => "not_fixed",
        /// No patch of its own, and every one of its tests passes (another cause's patch).
        FixedByAnotherPatch => "fixed_by_another_patch",
    }
}

closed_set! {
    /// The outcome of a whole `fix` run (`final_status`).
    FinalStatus {
        /// Every failure is fixed (or nothing failed).
        Pass => "pass",
        /// Some failures fixed, others not.
        Partial => "partial",
        /// None fixed.
        Fail => "fail",
        /// Every failure is an environment or dependency problem.
        Escalated => "escalated",
        /// The tool could not work, or pytest gave no verdict.
        Error => "error",
        NoTests => "no_tests",
        BadInput => "bad_input",
        /// `--no-validate`: candidates printed, none proven.
        Proposed => "proposed",
    }
}

impl FinalStatus {
    /// The documented exit code of a run that ended so (see [`crate::exit`]).
    pub fn exit_code(self) -> i32 {
        match self {
            FinalStatus::Pass => crate::exit::OK,
            FinalStatus::Partial => crate::exit::PARTIAL,
            FinalStatus::Fail => crate::exit::NOT_FIXED,
            FinalStatus::Escalated => crate::exit::ESCALATED,
            FinalStatus::Error => crate::exit::ENVIRONMENT,
            FinalStatus::NoTests => crate::exit::NO_TESTS,
            FinalStatus::BadInput => crate::exit::BAD_INPUT,
            FinalStatus::Proposed => crate::exit::PROPOSED,
        }
    }
}

closed_set! {
    /// What kind of failure a rule repairs; decides the attempt budget and whether the tool
    /// patches at all (environment and dependency failures are reported, not patched).
    Category {
        Environment => "environment",
        Data => "data",
        Logic => "logic",
        Syntax => "syntax",
        Dependency => "dependency",
        /// A test ran past the per-test limit (see [`crate::plugin`]): reported with the frame
        /// it was stuck in, not patched.
        Timeout => "timeout",
        Unknown => "unknown",
    }
}

/// Every closed set by the schema property it serves, with its words: what the schema test
/// compares `schema/fix.schema.json` against.
pub fn all() -> Vec<(&'static str, Vec<&'static str>)> {
    fn words<T: Copy>(all: &[T], word: fn(T) -> &'static str) -> Vec<&'static str> {
        all.iter().map(|v| word(*v)).collect()
    }
    vec![
        ("final_status", words(FinalStatus::ALL, FinalStatus::as_str)),
        ("judge", words(Judge::ALL, Judge::as_str)),
        (
            "failure.status",
            words(FailureStatus::ALL, FailureStatus::as_str),
        ),
        (
            "attempt.outcome",
            words(AttemptOutcome::ALL, AttemptOutcome::as_str),
        ),
        ("attempt.source", words(Source::ALL, Source::as_str)),
        ("patch.source", words(Source::ALL, Source::as_str)),
        (
            "attempt.applicability",
            words(Applicability::ALL, Applicability::as_str),
        ),
        (
            "patch.applicability",
            words(Applicability::ALL, Applicability::as_str),
        ),
        (
            "patch.diff_encoding",
            words(DiffEncoding::ALL, DiffEncoding::as_str),
        ),
        (
            "attempt.confirmed_by",
            words(ConfirmedBy::ALL, ConfirmedBy::as_str),
        ),
        ("cause.status", words(CauseStatus::ALL, CauseStatus::as_str)),
        (
            "failure.reason_code",
            words(ReasonCode::ALL, ReasonCode::as_str),
        ),
        (
            "attempt.silencing",
            words(Silencing::ALL, Silencing::as_str),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[test]
    fn serde_words_are_the_as_str_words() {
        fn check<T: Serialize + Copy + std::fmt::Display>(all: &[T]) {
            for v in all {
                let json = serde_json::to_value(v).unwrap();
                assert_eq!(json, serde_json::Value::String(v.to_string()));
            }
        }
        check(FailureStatus::ALL);
        check(ReasonCode::ALL);
        check(AttemptOutcome::ALL);
        check(Source::ALL);
        check(Applicability::ALL);
        check(Judge::ALL);
        check(DiffEncoding::ALL);
        check(ConfirmedBy::ALL);
        check(CauseStatus::ALL);
        check(Silencing::ALL);
        check(FinalStatus::ALL);
    }

    /// The reason codes are exactly the documented set (docs/json.md, "Reason codes"), in
    /// this order, and serialize as these words.
    #[test]
    fn reason_codes_are_the_documented_closed_set() {
        let words = serde_json::to_value(ReasonCode::ALL).unwrap();
        assert_eq!(
            words,
            serde_json::json!([
                "fixed",
                "installed",
                "no_candidate",
                "candidates_rejected",
                "already_rejected",
                "safe_only",
                "time_budget",
                "attempt_budget",
                "escalated",
                "timed_out",
                "flaky",
                "not_validated",
                "rolled_back",
                "interrupted"
            ])
        );
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md")).unwrap();
        for code in ReasonCode::ALL {
            assert!(
                doc.contains(&format!("| `{code}` |")),
                "docs/json.md lacks {code}"
            );
        }
    }

    /// The documented exit code of every final status (README, `--help`).
    #[test]
    fn every_final_status_has_its_documented_exit_code() {
        let codes: Vec<(&str, i32)> = FinalStatus::ALL
            .iter()
            .map(|s| (s.as_str(), s.exit_code()))
            .collect();
        assert_eq!(
            codes,
            [
                ("pass", 0),
                ("partial", 3),
                ("fail", 4),
                ("escalated", 5),
                ("error", 6),
                ("no_tests", 7),
                ("bad_input", 2),
                ("proposed", 8),
            ]
        );
    }

    /// The schema's `enum` lists are the enums' words, in the same order.
    #[test]
    fn the_fix_schema_lists_every_closed_set() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/fix.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let pointer = |prop: &str| match prop.split_once('.') {
            Some((def, field)) => format!("/$defs/{def}/properties/{field}/enum"),
            None => format!("/properties/{prop}/enum"),
        };
        let mut sets = all();
        let categories = Category::ALL.iter().map(|c| c.as_str()).collect();
        sets.push(("category", categories));
        for (prop, words) in sets {
            let at = if prop == "category" {
                "/$defs/category/enum".to_string()
            } else {
                pointer(prop)
            };
            let listed: Vec<&str> = schema
                .pointer(&at)
                .and_then(|v| v.as_array())
                .unwrap_or_else(|| panic!("no enum at {at}"))
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(listed, words, "{at}");
        }
    }

    #[test]
    fn fixed_is_spelled_once() {
        let fixed: Vec<_> = FailureStatus::ALL
            .iter()
            .filter(|s| s.is_fixed())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(fixed, ["fixed", "fixed_by_another_patch", "installed"]);
    }
}
