//! Template: a number literal off by a decimal place, a percent written as a fraction (or the
//! reverse), or a float one step off in its last digit.
//!
//! [`crate::search::mutate`] moves an integer literal by ±1 and replaces a literal by another of
//! its function; a float (`RATE = 0.2`, `CM_PER_INCH = 25.4`) got neither, and a wrong
//! module-level float behind several failing tests had no edit that could fix it. The slips of
//! a written number are few and general, so each edit is derived from the literal's own text
//! (no value is solved for from a test's expected number):
//!
//! - `decimal-shift`: the decimal point one place off, `25.4` → `2.54` / `254.0`; an integer
//!   (two digits or more) a zero short or a zero too many, `360` → `3600` / `36` (÷ only when
//!   exact), and two places at a lower weight (`360` → `36000`, `3600` → `36`);
//!   an integer grouped with underscores stays grouped (`3_600` → `36_000`);
//! - `percent-fraction`: `0.2` → `20.0` where the code divides the product by 100
//!   (`x * RATE / 100`), `20` → `0.2` for a whole-number module constant the code multiplies by and never
//!   divides by 100 (`x * RATE`): how the code uses the number says which one it means;
//! - `last-digit`: a float's last written digit ±1 (`0.15` → `0.14` / `0.16`), the float's
//!   counterpart of `plus-minus-one` on an integer.
//!
//! The new text is built from the literal's digits, never by float arithmetic (`0.3 / 10` would
//! print `0.029999999999999999`). Literals with an exponent or a `j` are left alone, and so are
//! floats with underscores and integers grouped otherwise than by thousands.

use std::collections::BTreeSet;

use rustpython_parser::ast::{Constant, Expr, Operator, Ranged, Stmt};

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::operators::{mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::DecimalShift, Family::PercentFraction, Family::LastDigit];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let text = site.module.text();
    let uses = Uses::of(site.module.body());
    // A module constant's name: how the file reads it decides percent vs fraction.
    let constant_name = match site.stmt {
        Stmt::Assign(a) if site.func.is_none() && a.targets.len() == 1 => match &a.targets[0] {
            Expr::Name(n) => Some((n.id.as_str(), rng(a.value.range()))),
            _ => None,
        },
        Stmt::AnnAssign(a) if site.func.is_none() => match (a.target.as_ref(), &a.value) {
            (Expr::Name(n), Some(v)) => Some((n.id.as_str(), rng(v.range()))),
            _ => None,
        },
        _ => None,
    };
    let mut out = Vec::new();
    for e in own_exprs(site.stmt) {
        let Expr::Constant(c) = e else {
            continue;
        };
        let float = match c.value {
            Constant::Float(_) => true,
            Constant::Int(_) => false,
            _ => continue,
        };
        let r = rng(e.range());
        let written = &text[r.clone()];
        let mut push = |family: Family, to: String, w: f64| {
            if to != written {
                out.push(mutant(
                    site,
                    family,
                    format!("`{written}` → `{to}`"),
                    vec![Edit::replacement(r.clone(), to)],
                    w,
                    Vec::new(),
                ));
            }
        };
        if !float {
            for (to, w) in int_shifts(written) {
                push(Family::DecimalShift, to, w);
            }
        }
        let Some(num) = Decimal::parse(written) else {
            continue;
        };
        if float {
            for (k, w) in [(-1, 1.0), (1, 0.8)] {
                push(Family::DecimalShift, num.shifted(k).text(true), w);
            }
        }
        // The name this literal is the value of, when it is a module constant's whole value.
        let name = constant_name
            .as_ref()
            .filter(|(_, v)| *v == r)
            .map(|(n, _)| *n);
        let per_100 = uses.per_100_ranges.contains(&r.start)
            || name.is_some_and(|n| uses.per_100_names.contains(n));
        let value = num.value();
        if per_100 && value > 0.0 && value < 1.0 {
            push(Family::PercentFraction, num.shifted(2).text(true), 1.0);
        }
        let multiplied = name
            .is_some_and(|n| uses.multiplied_names.contains(n) && !uses.per_100_names.contains(n));
        // A percent is a whole number (`20`, `20.0`); `25.4` is some other factor.
        if multiplied && num.frac.is_empty() && value > 1.0 && value <= 100.0 {
            push(Family::PercentFraction, num.shifted(-2).text(true), 1.0);
        }
        if float && !num.frac.is_empty() {
            for (d, w) in [(-1, 0.5), (1, 0.5)] {
                if let Some(n) = num.nudged(d) {
                    push(Family::LastDigit, n.text(true), w);
                }
            }
        }
    }
    out
}

/// An integer literal a power of ten off, with the weight of each slip: a zero short (× 10)
/// or one too many (÷ 10, only when the last digit is 0) are the typos; two places (× 100,
/// ÷ 100) are rarer. Built from the digits; one-digit numbers are left to `plus-minus-one` and
/// `constant` (`2` → `20` is a different number, not a slip of the same one).
fn int_shifts(written: &str) -> Vec<(String, f64)> {
    let digits = written.replace('_', "");
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0')
    {
        return Vec::new();
    }
    // Underscores kept only when they group by thousands, as the new number is grouped too.
    let grouped = written.contains('_');
    if grouped && thousands(&digits) != written {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (zeros, w) in [(1, 1.0_f64), (2, 0.3)] {
        out.push((format!("{digits}{}", "0".repeat(zeros)), w));
        if let Some(cut) = digits.strip_suffix(&"0".repeat(zeros)) {
            out.push((cut.to_string(), w * 0.8));
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    if grouped {
        for (to, _) in &mut out {
            *to = thousands(to);
        }
    }
    out
}

/// `36000` → `36_000`.
fn thousands(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// How the file uses names and literals in products: the factors of a product divided by 100
/// (`x * RATE / 100`, `x * RATE // 100`), and the names that are a factor of some product.
#[derive(Default)]
struct Uses {
    per_100_names: BTreeSet<String>,
    /// Start offsets of the literals.
    per_100_ranges: BTreeSet<usize>,
    multiplied_names: BTreeSet<String>,
}

impl Uses {
    fn of(body: &[Stmt]) -> Uses {
        let mut u = Uses::default();
        let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
        walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
            if let Node::Expr(Expr::BinOp(b)) = node {
                match b.op {
                    Operator::Div | Operator::FloorDiv if is_hundred(&b.right) => {
                        let mut factors = Vec::new();
                        factors_of(&b.left, &mut factors, 0);
                        for f in factors {
                            match f {
                                Expr::Name(n) => {
                                    u.per_100_names.insert(n.id.to_string());
                                }
                                Expr::Constant(_) => {
                                    u.per_100_ranges.insert(rng(f.range()).start);
                                }
                                _ => {}
                            }
                        }
                    }
                    Operator::Mult => {
                        for side in [&b.left, &b.right] {
                            if let Expr::Name(n) = side.as_ref() {
                                u.multiplied_names.insert(n.id.to_string());
                            }
                        }
                    }
                    _ => {}
                }
            }
            true
        });
        u
    }
}

/// The factors of a product (`a * b * c` → a, b, c); a lone expression is its own factor.
fn factors_of<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>, depth: usize) {
    match e {
        Expr::BinOp(b) if matches!(b.op, Operator::Mult) && depth < 32 => {
            factors_of(&b.left, out, depth + 1);
            factors_of(&b.right, out, depth + 1);
        }
        _ => out.push(e),
    }
}

fn is_hundred(e: &Expr) -> bool {
    match e {
        Expr::Constant(c) => match &c.value {
            Constant::Int(i) => i.to_string() == "100",
            Constant::Float(f) => *f == 100.0,
            _ => false,
        },
        _ => false,
    }
}

/// A plain decimal literal as its digits: `25.4` is `int` "25", `frac` "4".
#[derive(Debug, Clone, PartialEq)]
struct Decimal {
    int: String,
    frac: String,
}

impl Decimal {
    /// `None` for anything but plain digits with at most one point (`1e3`, `1_000`, `0x10`, `2j`).
    fn parse(text: &str) -> Option<Decimal> {
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
            return None;
        }
        // `0o17`-style and leading-zero ints are not decimals (`0` alone is).
        if !text.contains('.') && int.len() > 1 && int.starts_with('0') {
            return None;
        }
        Some(
            Decimal {
                int: int.to_string(),
                frac: frac.to_string(),
            }
            .trim_int(),
        )
    }

    fn value(&self) -> f64 {
        format!("{}.{}", self.int, self.frac)
            .parse::<f64>()
            .unwrap_or(0.0)
    }

    /// The number times 10^k (the point moved k places right; left for a negative k).
    fn shifted(&self, k: i32) -> Decimal {
        let mut digits = format!("{}{}", self.int, self.frac);
        let mut point = self.int.len() as i64 + k as i64;
        if point < 0 {
            digits = "0".repeat((-point) as usize) + &digits;
            point = 0;
        }
        let point = point as usize;
        if point > digits.len() {
            digits.push_str(&"0".repeat(point - digits.len()));
        }
        Decimal {
            int: digits[..point].to_string(),
            frac: digits[point..].to_string(),
        }
        .normalized()
    }

    /// The last fraction digit moved by `d` (±1), keeping the number of places; `None` when it
    /// would reach zero or below.
    fn nudged(&self, d: i64) -> Option<Decimal> {
        let places = self.frac.len();
        let all: i128 = format!("{}{}", self.int, self.frac).parse().ok()?;
        let moved = all + d as i128;
        if moved <= 0 {
            return None;
        }
        let s = format!("{moved:0>width$}", width = places + 1);
        let (int, frac) = s.split_at(s.len() - places);
        Some(
            Decimal {
                int: int.to_string(),
                frac: frac.to_string(),
            }
            .trim_int(),
        )
    }

    /// No leading zeros in the integer part (one `0` kept), no trailing zeros in the fraction.
    fn normalized(self) -> Decimal {
        let mut d = self.trim_int();
        while d.frac.ends_with('0') {
            d.frac.pop();
        }
        d
    }

    fn trim_int(self) -> Decimal {
        let int = self.int.trim_start_matches('0');
        Decimal {
            int: if int.is_empty() { "0" } else { int }.to_string(),
            frac: self.frac,
        }
    }

    /// The literal's text; a float stays a float (`5.0`, not `5`).
    fn text(&self, float: bool) -> String {
        match (self.frac.is_empty(), float) {
            (true, true) => format!("{}.0", self.int),
            (true, false) => self.int.clone(),
            (false, _) => format!("{}.{}", self.int, self.frac),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn decimals_shift_and_nudge_by_their_digits() {
        assert_eq!(d("25.4").shifted(-1).text(true), "2.54");
        assert_eq!(d("25.4").shifted(1).text(true), "254.0");
        assert_eq!(d("0.3").shifted(-1).text(true), "0.03");
        assert_eq!(d(".5").shifted(2).text(true), "50.0");
        assert_eq!(d("20").shifted(-2).text(true), "0.2");
        assert_eq!(d("2.").text(true), "2.0");
        assert_eq!(d("0.15").nudged(1).unwrap().text(true), "0.16");
        assert_eq!(d("0.10").nudged(-1).unwrap().text(true), "0.09");
        assert_eq!(d("1.9").nudged(1).unwrap().text(true), "2.0");
        assert_eq!(d("0.1").nudged(-1), None);
        for bad in ["1e3", "1_000", "0x10", "007", "", "."] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_float_constant_gets_its_decimal_place_and_last_digit_moved() {
        let src = "CM_PER_INCH = 25.4\n\n\ndef to_cm(x):\n    return x * CM_PER_INCH\n";
        assert_eq!(
            titles(src, 1, mutants),
            vec![
                pair("`25.4` → `2.54`", "CM_PER_INCH = 2.54"),
                pair("`25.4` → `254.0`", "CM_PER_INCH = 254.0"),
                pair("`25.4` → `25.3`", "CM_PER_INCH = 25.3"),
                pair("`25.4` → `25.5`", "CM_PER_INCH = 25.5"),
            ]
        );
        // An integer literal in a function: nothing (±1 is `plus-minus-one`'s).
        assert!(titles(src.replace("CM_PER_INCH", "3").as_str(), 5, mutants).is_empty());
    }

    #[test]
    fn an_integer_gets_a_zero_more_or_less() {
        let src = "SECONDS_PER_HOUR = 360\n\n\ndef hours(s):\n    return s // SECONDS_PER_HOUR\n";
        assert_eq!(
            titles(src, 1, mutants),
            vec![
                pair("`360` → `3600`", "SECONDS_PER_HOUR = 3600"),
                pair("`360` → `36`", "SECONDS_PER_HOUR = 36"),
                pair("`360` → `36000`", "SECONDS_PER_HOUR = 36000"),
            ]
        );
        // Inline, and both ways with two zeros.
        let inline = "def cents(d):\n    return d * 1000\n";
        assert_eq!(
            titles(inline, 2, mutants),
            vec![
                pair("`1000` → `10000`", "    return d * 10000"),
                pair("`1000` → `100`", "    return d * 100"),
                pair("`1000` → `100000`", "    return d * 100000"),
                pair("`1000` → `10`", "    return d * 10"),
            ]
        );
        assert_eq!(int_shifts("3_600")[0].0, "36_000");
        assert_eq!(int_shifts("3_600")[1].0, "360");
        // Grouped some other way, one digit, octal-looking, hex: nothing.
        for none in ["36_00", "7", "0", "010", "0x10"] {
            assert!(int_shifts(none).is_empty(), "{none}");
        }
    }

    #[test]
    fn percent_or_fraction_follows_how_the_code_uses_the_number() {
        // Divided by 100 where it is read: a fraction is a percent written wrong.
        let per_100 = "RATE = 0.2\n\n\ndef tax(x):\n    return x * RATE / 100\n";
        let t = titles(per_100, 1, mutants);
        assert!(t.contains(&pair("`0.2` → `20.0`", "RATE = 20.0")), "{t:?}");
        // Multiplied by and never divided by 100: a percent is a fraction written wrong.
        let times = "RATE = 20\n\n\ndef tax(x):\n    return x * RATE\n";
        let t = titles(times, 1, mutants);
        assert_eq!(t[3], pair("`20` → `0.2`", "RATE = 0.2"), "{t:?}");
        // The integer percent the code divides by 100 (`TAX_PERCENT = 21`) gets no
        // percent-fraction edit here (only its decimal shifts).
        let percent = "TAX = 21\n\n\ndef tax(x):\n    return x * TAX // 100\n";
        assert_eq!(
            titles(percent, 1, mutants),
            vec![
                pair("`21` → `210`", "TAX = 210"),
                pair("`21` → `2100`", "TAX = 2100"),
            ]
        );
        // An inline literal under `/ 100` too.
        let inline = "def tax(x):\n    return x * 0.2 / 100\n";
        let t = titles(inline, 2, mutants);
        assert!(
            t.contains(&pair("`0.2` → `20.0`", "    return x * 20.0 / 100")),
            "{t:?}"
        );
    }
}
