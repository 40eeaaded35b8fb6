//! Splitting without stripping: `text.split(",")` on `"a, b"` gives `["a", " b"]` where the
//! tests want `["a", "b"]`.
//!
//! At a `str.split(sep)`/`rsplit(sep)` call of the suspicious statement, with a written
//! separator that has no whitespace of its own, two edits (family `split-strip`):
//!
//! - the strip of each part, `[part.strip() for part in text.split(",")]` (weight 1.0): what a
//!   reviewer writes, as it also takes variable spacing (`"a,b,  c"`) and a trailing newline;
//! - the separator followed by a space, `text.split(", ")` (weight 0.6): the smaller edit, right
//!   only when every separator is followed by exactly one space, so it comes second (whenever it
//!   passes, the strip passes too).
//!
//! Both only when the failure shows whitespace at the separator: a string it quotes (the test's
//! input, `parse_tags("a, b")`, or the actual value's repr, `['a', ' b']`) has the separator
//! followed by whitespace, or is a part with whitespace around it. When the failing check
//! compares with a string literal, that literal must have no outer whitespace and be one of the
//! stripped parts. Nothing is taken from the test but this evidence: the new code is built from
//! the call and its separator.

use rustpython_parser::ast::{Constant, Expr, Ranged};

use crate::edit::Edit;
use crate::syntax::{queries, rng, ParsedModule};

use super::family::Family;
use super::mutate::Mutant;
use super::priors::Priors;
use super::templates::operators::own_exprs;

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::SplitStrip];

/// The split edits at the statement on `line` (see the module docs).
pub fn mutants(
    module: &ParsedModule,
    line: u32,
    priors: &Priors,
    words: &[String],
    expected: Option<&str>,
) -> Vec<Mutant> {
    let Some((stmt, func)) = queries::statement_at(module, line) else {
        return Vec::new();
    };
    let text = module.text();
    let exprs = own_exprs(stmt);
    // A statement that strips already is not this slip.
    if exprs
        .iter()
        .any(|e| method_name(e).is_some_and(|m| m.ends_with("strip")))
    {
        return Vec::new();
    }
    // The comprehension's variable: a name the function (or the statement) does not use.
    let scope = &text[rng(func.unwrap_or(stmt).range())];
    let Some(var) = ["part", "piece", "item", "p"]
        .into_iter()
        .find(|v| !identifiers(scope).any(|i| i == *v))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in exprs {
        let Expr::Call(c) = e else { continue };
        if !matches!(method_name(e), Some("split" | "rsplit")) {
            continue;
        }
        let Expr::Attribute(a) = c.func.as_ref() else {
            continue;
        };
        // `re.split(",", text)` is the module's function, not `str.split`.
        if matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "re") {
            continue;
        }
        let Some(Expr::Constant(sep_lit)) = c.args.first() else {
            continue;
        };
        let Constant::Str(sep) = &sep_lit.value else {
            continue;
        };
        // `(sep, maxsplit)` or `maxsplit=`: anything else is not `str.split`.
        let plain_rest = c.args.len() <= 2
            && c.args.iter().skip(1).all(|x| !is_str(x))
            && c.keywords
                .iter()
                .all(|k| k.arg.as_deref() == Some("maxsplit"));
        if sep.is_empty() || sep.trim() != sep || !plain_rest {
            continue;
        }
        if !shows_spacing(sep, words, expected) {
            continue;
        }
        let call = rng(e.range());
        let call_text = &text[call.clone()];
        let stripped = format!("[{var}.strip() for {var} in {call_text}]");
        out.push(Mutant {
            family: Family::SplitStrip,
            title: format!("strip each part: `{stripped}`"),
            edits: vec![Edit::replacement(call, stripped)],
            prior: priors.family(Family::SplitStrip),
            effects: Vec::new(),
        });
        // The separator followed by a space, in the literal's own quotes.
        let lit = rng(sep_lit.range());
        let written = &text[lit.clone()];
        let triple = written.ends_with("\"\"\"") || written.ends_with("'''");
        if !triple && (written.ends_with('"') || written.ends_with('\'')) {
            let to = format!(
                "{} {}",
                &written[..written.len() - 1],
                &written[written.len() - 1..]
            );
            out.push(Mutant {
                family: Family::SplitStrip,
                title: format!("`{written}` → `{to}`"),
                edits: vec![Edit::insertion(lit.end - 1, " ".to_string())],
                prior: priors.family(Family::SplitStrip) * 0.6,
                effects: Vec::new(),
            });
        }
    }
    out
}

/// `strip` for `x.strip()`, `split` for `text.lower().split(",")`.
fn method_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Call(c) => match c.func.as_ref() {
            Expr::Attribute(a) => Some(a.attr.as_str()),
            _ => None,
        },
        _ => None,
    }
}

fn is_str(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, Constant::Str(_)))
}

/// The identifiers of a piece of source, roughly (words of letters, digits and `_`).
fn identifiers(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Whether the failure's strings show whitespace at `sep` (see the module docs), and the
/// expected string, if any, is one of the stripped parts.
fn shows_spacing(sep: &str, words: &[String], expected: Option<&str>) -> bool {
    let padded = |w: &str| w.trim() != w && !w.trim().is_empty();
    let mut stripped: Vec<&str> = Vec::new();
    let mut spaced = false;
    for w in words {
        if w.contains(sep) {
            let parts: Vec<&str> = w.split(sep).collect();
            spaced |= parts[1..]
                .iter()
                .any(|p| p.starts_with(char::is_whitespace));
            stripped.extend(parts.iter().map(|p| p.trim()));
        }
        if padded(w) {
            spaced = true;
            stripped.push(w.trim());
        }
    }
    if !spaced {
        return false;
    }
    let Some(want) = expected.and_then(|e| {
        let q = ['"', '\''];
        (e.len() >= 2 && e.starts_with(q) && e.ends_with(q)).then(|| &e[1..e.len() - 1])
    }) else {
        return true;
    };
    !padded(want) && stripped.contains(&want)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(
        src: &str,
        line: u32,
        words: &[&str],
        expected: Option<&str>,
    ) -> Vec<(String, String)> {
        let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        mutants(&pm, line, Priors::builtin(), &words, expected)
            .into_iter()
            .map(|m| {
                let fixed = crate::edit::apply(src, &m.edits).unwrap();
                let changed = fixed.lines().nth(line as usize - 1).unwrap().to_string();
                (m.title, changed)
            })
            .collect()
    }

    const TAGS: &str = "def tags(text):\n    return text.lower().split(\",\")\n";

    #[test]
    fn a_split_on_spaced_data_gets_the_strip_then_the_spaced_separator() {
        assert_eq!(
            titles(TAGS, 2, &["Web, API", "web", " api", "api"], None),
            vec![
                (
                    "strip each part: `[part.strip() for part in text.lower().split(\",\")]`"
                        .to_string(),
                    "    return [part.strip() for part in text.lower().split(\",\")]".to_string()
                ),
                (
                    "`\",\"` → `\", \"`".to_string(),
                    "    return text.lower().split(\", \")".to_string()
                ),
            ]
        );
    }

    #[test]
    fn no_spacing_in_the_failure_or_an_expected_with_spaces_gives_nothing() {
        assert!(titles(TAGS, 2, &["web,api", "web"], None).is_empty());
        // The test wants the space kept.
        assert!(titles(TAGS, 2, &["web, api"], Some("\" api\"")).is_empty());
        // An expected string that is a stripped part: fine.
        assert_eq!(titles(TAGS, 2, &["web, api"], Some("'api'")).len(), 2);
    }

    #[test]
    fn unpacked_pairs_with_maxsplit_and_a_taken_name() {
        let src =
            "def pair(line, part):\n    key, value = line.split(\"=\", 1)\n    return key, value\n";
        assert_eq!(
            titles(src, 2, &["name ", " demo"], None),
            vec![
                (
                    "strip each part: `[piece.strip() for piece in line.split(\"=\", 1)]`"
                        .to_string(),
                    "    key, value = [piece.strip() for piece in line.split(\"=\", 1)]"
                        .to_string()
                ),
                (
                    "`\"=\"` → `\"= \"`".to_string(),
                    "    key, value = line.split(\"= \", 1)".to_string()
                ),
            ]
        );
        // `re.split`, a statement that strips, a separator with its own space: nothing.
        for src in [
            "import re\ndef f(t):\n    return re.split(\",\", t)\n",
            "def f(t):\n    return t.strip().split(\",\")\n",
            "def f(t):\n    return t.split(\", \")\n",
        ] {
            let line = src.lines().count() as u32;
            assert!(titles(src, line, &["a, b"], None).is_empty(), "{src}");
        }
    }
}
