//! Expected-value hints: when the failing check compares with a literal (`assert f(x) == 2.5`,
//! `self.assertEqual(f(x), 3)`) and the failure message shows the value the code produced
//! (pytest's `assert 1.6666666666666667 == 2.5`, unittest's `3 != 2`), some candidates' effect on
//! that value can be predicted from the edit alone, and those are tried first.
//!
//! A mutant carries the [`Effect`]s [`super::mutate`] can state for it: a literal in a linear
//! position of the statement's value (`return (a + b) / 3`: `3` → `2` scales the result by 3/2;
//! `value * 60 + 5`: `5` → `6` adds 1), an operator change with a literal operand (`- 32` →
//! `+ 32` adds 64), a returned literal replaced by the expected one, and two effects without a
//! number: ±1 on an integer expression (an index, a bound, a `range` end) and a boundary flip of
//! a comparison (`<` ↔ `<=`), which changes a count by the number of items on the boundary.
//!
//! [`Expectation::tier`] ranks them: `predicted` (a stated number turns the actual value into
//! the expected one exactly) before `consistent` (an off-by-one edit when the integers differ
//! by one; a boundary flip when two integers differ) before every other candidate. It assumes
//! the edited statement's value is what the test compares, or moves it linearly; when that is
//! wrong the candidate merely goes first, and pytest still decides.

use crate::traceback::Failure;

/// What one edit does to the value its statement computes, when that can be said.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The value moves by this much.
    Add(f64),
    /// The value is multiplied by this.
    Scale(f64),
    /// A returned literal becomes this literal (source text).
    Becomes(String),
    /// ±1 on an integer expression whose effect on the value is not linear (index, bound).
    OffByOne,
    /// `<` ↔ `<=`, `>` ↔ `>=`: a count moves by the items on the boundary.
    Boundary,
}

/// How well a candidate's effect fits the failure (higher is tried first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    None = 0,
    Consistent = 1,
    Predicted = 2,
}

impl Tier {
    /// The JSON word (`search.hint` of an attempt record).
    pub fn word(self) -> Option<&'static str> {
        match self {
            Tier::None => None,
            Tier::Consistent => Some("consistent"),
            Tier::Predicted => Some("predicted"),
        }
    }
}

/// The expected literal and the actual value of a failed equality check.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// Source text of the literal the test compares with (`2.5`, `"no items"`).
    pub expected: String,
    /// The other side of the failure message, as printed (`1.6666666666666667`).
    pub actual: String,
}

impl Expectation {
    /// Reads the expectation of `failure`: the literal from the failing line of a test frame,
    /// the actual value from the first line of the message. `None` unless both are there and
    /// the message's other side differs from the literal.
    pub fn of(failure: &Failure) -> Option<Expectation> {
        let codes: Vec<&str> = failure
            .frames
            .iter()
            .filter_map(|f| f.code.as_deref())
            .collect();
        Expectation::from_check(&codes, &failure.msg)
    }

    /// [`Expectation::of`] on the frames' source lines and the message.
    pub fn from_check(codes: &[&str], msg: &str) -> Option<Expectation> {
        let expected = codes.iter().find_map(|c| expected_in_check(c))?;
        let first = msg.lines().next()?.trim();
        let (l, r) = first
            .strip_prefix("assert ")
            .and_then(|b| b.split_once(" == "))
            .or_else(|| first.split_once(" != "))?;
        let (l, r) = (l.trim(), r.trim());
        let actual = if same_value(r, &expected) {
            l
        } else if same_value(l, &expected) {
            r
        } else {
            return None;
        };
        (!same_value(actual, &expected)).then(|| Expectation {
            expected,
            actual: actual.to_string(),
        })
    }

    fn numbers(&self) -> Option<(f64, f64)> {
        Some((number(&self.actual)?, number(&self.expected)?))
    }

    fn integers(&self) -> Option<(i128, i128)> {
        Some((
            self.actual.replace('_', "").parse().ok()?,
            self.expected.replace('_', "").parse().ok()?,
        ))
    }

    /// The best tier any of `effects` reaches.
    pub fn tier(&self, effects: &[Effect]) -> Tier {
        effects
            .iter()
            .map(|e| self.tier_of(e))
            .max()
            .unwrap_or(Tier::None)
    }

    fn tier_of(&self, effect: &Effect) -> Tier {
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
        match effect {
            Effect::Add(d) => match self.numbers() {
                Some((a, e)) if close(a + d, e) => Tier::Predicted,
                _ => Tier::None,
            },
            Effect::Scale(k) => match self.numbers() {
                Some((a, e)) if a != 0.0 && close(a * k, e) => Tier::Predicted,
                _ => Tier::None,
            },
            Effect::Becomes(text) if same_value(text, &self.expected) => Tier::Predicted,
            Effect::Becomes(_) => Tier::None,
            Effect::OffByOne => match self.integers() {
                Some((a, e)) if (a - e).abs() == 1 => Tier::Consistent,
                _ => Tier::None,
            },
            Effect::Boundary => match self.integers() {
                Some((a, e)) if a != e => Tier::Consistent,
                _ => Tier::None,
            },
        }
    }
}

/// The literal of `assert X == LIT` or of a unittest `assertEqual(X, LIT)` (either side).
fn expected_in_check(code: &str) -> Option<String> {
    if let Some(lit) = crate::transform::expected_literal(code) {
        return Some(lit);
    }
    let t = code.trim();
    let at = ["assertEqual(", "assertEquals(", "assert_equal("]
        .iter()
        .find_map(|name| t.find(name).map(|i| i + name.len()))?;
    let args = top_level_args(&t[at..]);
    let [a, b, ..] = args.as_slice() else {
        return None;
    };
    crate::transform::expected_literal(&format!("assert {a} == {b}"))
}

/// The arguments of a call, `s` starting after its `(`: split at top-level commas, up to the
/// closing parenthesis.
fn top_level_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut escaped, mut start) = (0i32, None::<char>, false, 0);
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => {
                out.push(s[start..i].trim());
                return out;
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    Vec::new() // no closing parenthesis: the call goes on past this line
}

fn number(s: &str) -> Option<f64> {
    s.replace('_', "")
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// Two printed values are the same: equal numbers, or the same text (quotes normalized).
fn same_value(a: &str, b: &str) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => unquote(a) == unquote(b),
    }
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: &str, msg: &str) -> Option<Expectation> {
        Expectation::from_check(&[code], msg)
    }

    #[test]
    fn reads_pytest_and_unittest_checks() {
        let f = failure(
            "    assert median([1, 2, 3, 4]) == 2.5",
            "assert 1.6666666666666667 == 2.5\n +  where 1.6666666666666667 = median([1, 2, 3, 4])",
        );
        let e = f.unwrap();
        assert_eq!(
            e,
            Expectation {
                expected: "2.5".into(),
                actual: "1.6666666666666667".into()
            }
        );
        assert_eq!(e.tier(&[Effect::Scale(1.5)]), Tier::Predicted);
        assert_eq!(e.tier(&[Effect::Scale(2.0)]), Tier::None);
        let u = failure("        self.assertEqual(count(xs), 3)", "2 != 3");
        let e = u.unwrap();
        assert_eq!((e.expected.as_str(), e.actual.as_str()), ("3", "2"));
        assert_eq!(e.tier(&[Effect::OffByOne]), Tier::Consistent);
        assert_eq!(
            e.tier(&[Effect::Add(1.0), Effect::Boundary]),
            Tier::Predicted
        );
        assert_eq!(e.tier(&[Effect::Add(-1.0)]), Tier::None);
        let s = failure(
            "    assert label(0) == 'none'",
            "AssertionError: assert '0 items' == 'none'",
        );
        // The message must start with the check itself; the prefix of an `E` line is not part
        // of pytest's message as selfdebug stores it.
        assert_eq!(s, None);
        let s = failure(
            "    assert label(0) == 'none'",
            "assert '0 items' == 'none'",
        );
        let e = s.unwrap();
        assert_eq!(
            e.tier(&[Effect::Becomes("\"none\"".into())]),
            Tier::Predicted
        );
        assert_eq!(e.tier(&[Effect::OffByOne, Effect::Boundary]), Tier::None);
    }

    #[test]
    fn no_hint_without_a_literal_or_a_value() {
        assert_eq!(failure("    assert f(x) == g(y)", "assert 1 == 2"), None);
        assert_eq!(failure("    assert f(x) == 2", "boom"), None);
        assert_eq!(failure("    self.assertEqual(f(x),", "1 != 2"), None);
    }
}
