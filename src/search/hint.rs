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

    /// The expectation of a failed output check of command mode: the expected stdout (or the
    /// regex, `regex`) against what the command printed. Both are cut into numbers (digits,
    /// with one inner `.`) and the text between; when that text is the same on both sides and
    /// exactly one number differs (`total: 9` printed, `total: 10` expected), that number is
    /// the expectation, as `assert total() == 10` would give it. A regex counts when it is a
    /// literal once its `(?flags)`, `^`, `$` and `\`-escapes of punctuation are taken off; it
    /// is compared with each line the command printed (and with the whole output), the first
    /// that fits wins. Anything else gives no hint.
    pub fn from_output(expected: &str, actual: &str, regex: bool) -> Option<Expectation> {
        if !regex {
            return one_number_differs(expected, actual);
        }
        let literal = regex_literal(expected)?;
        std::iter::once(actual.trim_end_matches('\n'))
            .chain(actual.lines())
            .find_map(|a| one_number_differs(&literal, a))
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
    let mut start = 0;
    for (i, c, depth) in crate::transform::unquoted(s) {
        match c {
            ')' if depth == 0 => {
                out.push(s[start..i].trim());
                return out;
            }
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    Vec::new() // no closing parenthesis: the call goes on past this line
}

/// Numbers and the text between them: `total: 9.5\n` → `["total: ", "9.5", "\n"]`, each
/// piece marked whether it is a number.
fn pieces(s: &str) -> Vec<(bool, &str)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < b.len() {
        if b[i].is_ascii_digit() {
            if start < i {
                out.push((false, &s[start..i]));
            }
            let n = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            out.push((true, &s[n..i]));
            start = i;
        } else {
            i += 1;
        }
    }
    if start < b.len() {
        out.push((false, &s[start..]));
    }
    out
}

/// The expectation when `expected` and `actual` differ in exactly one number (see
/// [`Expectation::from_output`]).
fn one_number_differs(expected: &str, actual: &str) -> Option<Expectation> {
    let (e, a) = (pieces(expected), pieces(actual));
    if e.len() != a.len() {
        return None;
    }
    let mut differing = None;
    for (x, y) in e.iter().zip(&a) {
        if x == y {
            continue;
        }
        if !(x.0 && y.0) || differing.is_some() {
            return None;
        }
        differing = Some((x.1, y.1));
    }
    let (want, got) = differing?;
    (!same_value(want, got)).then(|| Expectation {
        expected: want.to_string(),
        actual: got.to_string(),
    })
}

/// The text a regex matches when it matches one text only: `(?m)^total: 10\.5$` →
/// `total: 10.5`. `None` when a metacharacter is left.
fn regex_literal(re: &str) -> Option<String> {
    let mut s = re;
    while let Some(rest) = s.strip_prefix("(?") {
        let end = rest.find(')')?;
        if !rest[..end].bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        s = &rest[end + 1..];
    }
    let s = s.strip_prefix('^').unwrap_or(s);
    let s = s
        .strip_suffix('$')
        .filter(|t| !t.ends_with('\\'))
        .unwrap_or(s);
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() => out.push(e),
                _ => return None,
            },
            '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '^' | '$' => {
                return None
            }
            c => out.push(c),
        }
    }
    (!out.is_empty()).then_some(out)
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
    fn reads_a_command_output_that_differs_in_one_number() {
        let e = Expectation::from_output("items: 3\ntotal: 10\n", "items: 3\ntotal: 9\n", false);
        assert_eq!(
            e,
            Some(Expectation {
                expected: "10".into(),
                actual: "9".into()
            })
        );
        assert_eq!(e.unwrap().tier(&[Effect::OffByOne]), Tier::Consistent);
        let f = Expectation::from_output("avg 2.5\n", "avg 1.6666666666666667\n", false).unwrap();
        assert_eq!(f.tier(&[Effect::Scale(1.5)]), Tier::Predicted);
        // Two numbers differ, or the text around them: no hint.
        assert_eq!(Expectation::from_output("1 2\n", "2 3\n", false), None);
        assert_eq!(
            Expectation::from_output("total 10\n", "sum 9\n", false),
            None
        );
        assert_eq!(Expectation::from_output("10\n", "10\n", false), None);
        assert_eq!(Expectation::from_output("10\n", "10.0\n", false), None);
        // A literal regex is compared with each printed line.
        let r = Expectation::from_output(r"(?m)^total: 10\.5$", "items: 3\ntotal: 9.5\n", true);
        assert_eq!(
            r,
            Some(Expectation {
                expected: "10.5".into(),
                actual: "9.5".into()
            })
        );
        assert_eq!(
            Expectation::from_output(r"total: \d+", "total: 9\n", true),
            None
        );
        assert_eq!(
            Expectation::from_output("total: (10|11)", "total: 9\n", true),
            None
        );
    }

    #[test]
    fn no_hint_without_a_literal_or_a_value() {
        assert_eq!(failure("    assert f(x) == g(y)", "assert 1 == 2"), None);
        assert_eq!(failure("    assert f(x) == 2", "boom"), None);
        assert_eq!(failure("    self.assertEqual(f(x),", "1 != 2"), None);
    }
}
