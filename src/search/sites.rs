//! One edit at every site that needs it (`multi-site`): a real fix often makes the same edit at
//! two to four places (`if platforms:` → `if platforms is not None:` in three sibling
//! functions, each called by its own failing test), which a lead and one second edit cannot
//! reach past two.
//!
//! When a one-edit candidate of any family rewrites an expression, the expression is its site:
//! the smallest expression holding the edit, one level up when that is a bare name, attribute,
//! literal or subscript inside a larger expression (`not x`, `x < y`), or, when such an atom is
//! a statement's own expression (`if x:`, `return x`), the statement up to its end (`if x`), so
//! that the role of the name goes with it. The other sites are the expressions (or statement
//! heads) of the module with the same text once whitespace between tokens is dropped, on lines
//! the failing tests ran (lines with a suspiciousness above zero: the cause's failing tests
//! ran them, so its proof covers them). The same replacement goes at the same place in each.
//! Nothing here is run: the session proves the joint candidate like any other.

use std::collections::BTreeSet;
use std::ops::Range;

use rustpython_parser::ast::Expr;

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::{ParsedModule, MAX_AST_DEPTH};

use super::family::Family;

/// The family this module makes.
pub const FAMILIES: &[Family] = &[Family::MultiSite];

/// Sites edited together at most: an expression found at more places is too common to be the
/// one slip repeated (`i + 1`, `x is None`), and each site must be a line the tests ran.
pub const MAX_SITES: usize = 4;

/// Multi-site candidates per search at most, from the best-ranked single edits: each costs a
/// targeted run (and a full-suite proof when it passes).
pub const MAX_PER_SEARCH: usize = 4;

/// An expression of the module that starts on a line the failing tests ran.
#[derive(Debug, Clone)]
struct Entry {
    range: Range<usize>,
    line: u32,
    /// A name, attribute, literal or subscript: too bare to be a site on its own.
    atom: bool,
    /// The node holding it: its range, and whether it is a statement.
    parent: Option<(Range<usize>, bool)>,
    /// Its normalized text.
    text: String,
    /// When its parent is a statement: the statement's normalized text up to its end.
    head: Option<String>,
}

/// The expressions on the lines the failing tests ran, read once per module.
pub struct Sites<'m> {
    module: &'m ParsedModule,
    entries: Vec<Entry>,
}

impl<'m> Sites<'m> {
    /// The expressions of `module` starting on one of `lines` (1-based).
    pub fn new(module: &'m ParsedModule, lines: &BTreeSet<u32>) -> Sites<'m> {
        let text = module.text();
        let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
        // Pre-order: the ancestors of a node at depth d are the last nodes seen at 1..d.
        let mut ancestors: Vec<Node> = Vec::new();
        let mut entries = Vec::new();
        walk::walk(&roots, MAX_AST_DEPTH, |node, depth| {
            ancestors.truncate(depth - 1);
            let parent = ancestors.last().copied();
            ancestors.push(node);
            let Node::Expr(e) = node else {
                return true;
            };
            let range = node.range();
            let line = module.line_of(range.start) as u32;
            if !lines.contains(&line) {
                return true;
            }
            let Some(own) = text.get(range.clone()).and_then(normalized) else {
                return true;
            };
            let parent = parent.map(|p| (p.range(), matches!(p, Node::Stmt(_))));
            let head = match &parent {
                Some((p, true)) if p.start <= range.start => text
                    .get(p.start..range.end)
                    .and_then(normalized)
                    .map(|(t, _)| t),
                _ => None,
            };
            entries.push(Entry {
                range,
                line,
                atom: matches!(
                    e,
                    Expr::Name(_) | Expr::Attribute(_) | Expr::Constant(_) | Expr::Subscript(_)
                ),
                parent,
                text: own.0,
                head,
            });
            true
        });
        Sites { module, entries }
    }

    /// The same edit at the other sites of its expression (see the module docs), with each
    /// one's line; empty when the edit rewrites no expression on a line the tests ran, when
    /// its site occurs nowhere else there, or at more than [`MAX_SITES`] places in all.
    pub fn same_edit_elsewhere(&self, edit: &Edit) -> Vec<(u32, Edit)> {
        let text = self.module.text();
        let Some(old) = text.get(edit.range.clone()) else {
            return Vec::new();
        };
        if old.contains('\n') || edit.content.contains('\n') {
            return Vec::new();
        }
        // The smallest expression holding the edit.
        let Some(anchor) = self
            .entries
            .iter()
            .filter(|e| e.range.start <= edit.range.start && edit.range.end <= e.range.end)
            .min_by_key(|e| e.range.len())
        else {
            return Vec::new();
        };
        let (site, by_head) = match &anchor.parent {
            Some((p, false)) if anchor.atom => (p.clone(), false),
            Some((p, true)) if anchor.atom && anchor.head.is_some() => {
                (p.start..anchor.range.end, true)
            }
            Some(_) if !anchor.atom => (anchor.range.clone(), false),
            _ => return Vec::new(),
        };
        let Some((key, offsets)) = text.get(site.clone()).and_then(normalized) else {
            return Vec::new();
        };
        // Where the edit starts and ends among the site's kept characters.
        let from = offsets.partition_point(|&o| o + site.start < edit.range.start);
        let to = offsets.partition_point(|&o| o + site.start < edit.range.end);
        let others: Vec<(u32, Range<usize>)> = self
            .entries
            .iter()
            .filter_map(|e| {
                let (range, t) = if by_head {
                    let (p, _) = e.parent.as_ref()?;
                    (p.start..e.range.end, e.head.as_deref()?)
                } else {
                    (e.range.clone(), e.text.as_str())
                };
                (t == key && range != site).then_some((e.line, range))
            })
            .collect();
        if others.is_empty() || others.len() + 1 > MAX_SITES {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (line, range) in others {
            if range.start < site.end && site.start < range.end {
                return Vec::new();
            }
            let Some((_, offs)) = text.get(range.clone()).and_then(normalized) else {
                return Vec::new();
            };
            let start = range.start + offs.get(from).copied().unwrap_or(range.len());
            let end = if to == from {
                start
            } else {
                let last = range.start + offs[to - 1];
                last + text[last..].chars().next().map_or(0, char::len_utf8)
            };
            let same = text
                .get(start..end)
                .and_then(normalized)
                .zip(normalized(old))
                .is_some_and(|(a, b)| a.0 == b.0)
                || (start == end && old.is_empty());
            if !same {
                return Vec::new();
            }
            out.push((
                line,
                Edit {
                    range: start..end,
                    content: edit.content.clone(),
                },
            ));
        }
        out
    }
}

/// `text` without the whitespace between tokens (one space where it separates two word
/// characters, every character kept inside a string literal), with the byte offset in `text`
/// of each character kept; `None` when it holds a comment or a line continuation.
pub fn normalized(text: &str) -> Option<(String, Vec<usize>)> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut offsets = Vec::new();
    // A string literal is what `unquoted` skips: kept as written, quotes and all.
    let verbatim = |out: &mut String, offsets: &mut Vec<usize>, from: usize, to: usize| {
        for (j, c) in text[from..to].char_indices() {
            out.push(c);
            offsets.push(from + j);
        }
    };
    let mut next = 0;
    let mut gap: Option<usize> = None;
    for (i, c, _) in crate::transform::unquoted(text) {
        if i > next {
            verbatim(&mut out, &mut offsets, next, i);
            gap = None;
        }
        next = i + c.len_utf8();
        if c.is_whitespace() {
            gap.get_or_insert(i);
            continue;
        }
        if c == '#' || c == '\\' {
            return None;
        }
        if let Some(g) = gap.take() {
            if out.chars().last().is_some_and(word) && word(c) {
                out.push(' ');
                offsets.push(g);
            }
        }
        out.push(c);
        offsets.push(i);
    }
    if next < text.len() {
        verbatim(&mut out, &mut offsets, next, text.len());
    }
    Some((out, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    fn module(src: &str) -> ParsedModule {
        syntax::parse_text(std::path::Path::new("m.py"), src).unwrap()
    }

    fn all_lines(src: &str) -> BTreeSet<u32> {
        (1..=src.lines().count() as u32).collect()
    }

    /// The edit replacing the `nth` occurrence of `old` (from 0) with `new`.
    fn edit(src: &str, old: &str, nth: usize, new: &str) -> Edit {
        let start = src.match_indices(old).nth(nth).unwrap().0;
        Edit {
            range: start..start + old.len(),
            content: new.to_string(),
        }
    }

    fn applied(src: &str, lines: &BTreeSet<u32>, e: Edit) -> (Vec<u32>, String) {
        let m = module(src);
        let others = Sites::new(&m, lines).same_edit_elsewhere(&e);
        let at: Vec<u32> = others.iter().map(|(l, _)| *l).collect();
        let mut edits: Vec<Edit> = others.into_iter().map(|(_, e)| e).collect();
        edits.push(e);
        (at, crate::edit::apply(src, &edits).unwrap())
    }

    const SIBLINGS: &str = "\
def a(platforms=None):
    if platforms:
        return platforms
    return ['any']


def b(platforms=None):
    if platforms:
        return list(platforms)
    return ['any']


def c(platforms=None):
    if  platforms :
        return sorted(platforms)
    return ['any']
";

    /// A bare name tested by an `if` is a site with its statement: the three `if platforms:`
    /// heads (one spaced otherwise) get the edit; the `platforms` returned or passed on do not.
    #[test]
    fn a_tested_name_is_edited_at_every_if_of_it() {
        let e = edit(SIBLINGS, "platforms", 1, "platforms is not None");
        let (at, out) = applied(SIBLINGS, &all_lines(SIBLINGS), e);
        assert_eq!(at, vec![8, 14]);
        assert_eq!(out.matches("is not None").count(), 3);
        assert!(out.contains("    if  platforms is not None :\n"));
        assert!(out.contains("return list(platforms)\n"));
    }

    /// Only the lines the failing tests ran are sites: with line 14 not run, two sites.
    #[test]
    fn only_lines_the_failing_tests_ran() {
        let e = edit(SIBLINGS, "platforms", 1, "platforms is not None");
        let lines: BTreeSet<u32> = [2, 3, 8, 9].into();
        let (at, out) = applied(SIBLINGS, &lines, e);
        assert_eq!(at, vec![8]);
        assert_eq!(out.matches("is not None").count(), 2);
        // Not run at all: nothing, not even the edit's own line.
        let m = module(SIBLINGS);
        let none: BTreeSet<u32> = [3].into();
        let e = edit(SIBLINGS, "platforms", 1, "platforms is not None");
        assert!(Sites::new(&m, &none).same_edit_elsewhere(&e).is_empty());
    }

    /// An operator edit's site is its comparison, matched in another method and in another
    /// statement (`return` and `not (...)`), whitespace aside; another comparison of the same
    /// names with another operator is not the same site.
    #[test]
    fn an_operator_edit_at_the_same_comparison() {
        let src = "\
class Meter:
    def over(self):
        return self.used > self.limit

    def under(self):
        return not (self.used>self.limit)

    def equal(self):
        return self.used >= self.limit
";
        let e = edit(src, ">", 0, ">=");
        let (at, out) = applied(src, &all_lines(src), e);
        assert_eq!(at, vec![6]);
        assert!(out.contains("return self.used >= self.limit\n"));
        assert!(out.contains("return not (self.used>=self.limit)\n"));
    }

    /// A bare name's site is the expression holding it (`x < 0`, not every `x`); a literal
    /// replaced inside a call is matched by the whole call.
    #[test]
    fn a_bare_atom_goes_with_its_expression() {
        let src = "\
def f(x):
    if x < 0:
        return x
    return round(x, 3) + round(x, 3) * 0 + x
";
        let e = edit(src, "x", 1, "abs(x)");
        let m = module(src);
        assert!(Sites::new(&m, &all_lines(src))
            .same_edit_elsewhere(&e)
            .is_empty());
        let e = edit(src, "3", 0, "2");
        let (at, out) = applied(src, &all_lines(src), e);
        assert_eq!(at, vec![4]);
        assert!(out.contains("return round(x, 2) + round(x, 2) * 0 + x\n"));
    }

    /// More than [`MAX_SITES`] places: too common to be one slip repeated.
    #[test]
    fn too_many_sites_is_none() {
        let src = "def f(a, b):\n    return [a - 1, a - 1, a - 1, a - 1, a - 1, b]\n";
        let e = edit(src, "-", 0, "+");
        let m = module(src);
        assert!(Sites::new(&m, &all_lines(src))
            .same_edit_elsewhere(&e)
            .is_empty());
    }

    #[test]
    fn normalizing_keeps_strings_and_word_gaps() {
        assert_eq!(normalized("a  <  b").unwrap().0, "a<b");
        assert_eq!(normalized("not  x").unwrap().0, "not x");
        assert_eq!(normalized("f( 'a  b' )").unwrap().0, "f('a  b')");
        assert_eq!(normalized("x # c"), None);
        assert_eq!(normalized("a <  b").unwrap().1, vec![0, 2, 5]);
        assert_eq!(normalized("x in  'a # b' ").unwrap().0, "x in'a # b'");
        assert_eq!(
            normalized("f(\"a\\\" b\",  c)").unwrap().0,
            "f(\"a\\\" b\",c)"
        );
    }
}
