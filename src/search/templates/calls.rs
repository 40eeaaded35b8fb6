//! Template: a call to the wrong callable.
//!
//! `callee-swap`: `repr(x)` where the module's own `bbrepr(x)` was meant. The alternatives are
//! the callables the module can see that take the call's arguments: its functions and the names
//! it imports (and, in a method, the class's methods on `self`), each either called elsewhere
//! in the module with as many positional arguments or defined to accept them. They are ranked
//! by evidence, name likeness (a shared word, one name inside the other) and another call that
//! passes the same argument in the same place, and only the best few are kept per call. A
//! method whose answer branches on the instance's state never replaces a callee whose answer
//! does not: it fits the configuration the failing test builds, not the others.

use std::collections::{BTreeMap, BTreeSet};

use rustpython_parser::ast::{Arguments, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::family::Family;
use crate::search::mutate::{names_of, one_line};
use crate::syntax::rng;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use super::conditions::condition_tests;
use super::operators::{mutant, own_exprs};
use super::siblings::class_of;
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::CalleeSwap];

/// Alternatives kept per call: the evidence ranks them, the tail is noise.
const MAX_CALLEES: usize = 3;

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let mut out = Vec::new();
    callee_swap(site, &mut out);
    out
}

/// How many positional arguments a signature takes: (required, at most; `None` for `*args`).
fn arity(args: &Arguments, skip_first: bool) -> (usize, Option<usize>) {
    let pos: Vec<_> = args.posonlyargs.iter().chain(&args.args).collect();
    let pos = &pos[usize::from(skip_first).min(pos.len())..];
    let required = pos.iter().filter(|a| a.default.is_none()).count();
    (required, args.vararg.is_none().then_some(pos.len()))
}

fn accepts((lo, hi): (usize, Option<usize>), n: usize) -> bool {
    n >= lo && hi.is_none_or(|h| n <= h)
}

/// What a module offers to call by a bare name.
#[derive(Default)]
pub(super) struct ModuleNames {
    /// Functions defined at the top level, with their arity.
    pub defs: BTreeMap<String, (usize, Option<usize>)>,
    /// Names taken by `from m import a` (functions or classes, the text cannot tell).
    pub imported: BTreeSet<String>,
    /// Every name the top level binds (defs, classes, imports, assignments).
    pub bound: BTreeSet<String>,
}

pub(super) fn module_names(body: &[Stmt]) -> ModuleNames {
    let mut m = ModuleNames::default();
    for s in body {
        match s {
            Stmt::FunctionDef(f) => {
                m.defs.insert(f.name.to_string(), arity(&f.args, false));
                m.bound.insert(f.name.to_string());
            }
            Stmt::AsyncFunctionDef(f) => {
                m.bound.insert(f.name.to_string());
            }
            Stmt::ClassDef(c) => {
                m.bound.insert(c.name.to_string());
            }
            Stmt::ImportFrom(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name).to_string();
                    if n != "*" {
                        m.imported.insert(n.clone());
                        m.bound.insert(n);
                    }
                }
            }
            Stmt::Import(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name);
                    m.bound
                        .insert(n.split('.').next().unwrap_or_default().to_string());
                }
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    m.bound.extend(crate::syntax::queries::stored_in_expr(t));
                }
            }
            Stmt::AnnAssign(a) => {
                m.bound
                    .extend(crate::syntax::queries::stored_in_expr(&a.target));
            }
            _ => {}
        }
    }
    m
}

/// A function of the module (not a class) that `name` calls at the top level's scope: defined
/// there or imported under a lower-case name (an imported `CamelCase` name is a class).
pub(super) fn project_function(m: &ModuleNames, name: &str) -> bool {
    m.defs.contains_key(name)
        || (m.imported.contains(name)
            && name.starts_with(|c: char| c.is_lowercase() || c == '_'))
}

/// One call of the module: who is called (`f`, or `self.m`), positional argument texts.
struct CallSeen {
    callee: String,
    args: Vec<String>,
    at: usize,
}

fn calls_of(site: &Site) -> Vec<CallSeen> {
    let text = site.module.text();
    let roots: Vec<Node> = site.module.body().iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Call(c)) = node {
            if let Some(callee) = callee_key(&c.func) {
                if !c.args.iter().any(|a| matches!(a, Expr::Starred(_))) {
                    out.push(CallSeen {
                        callee,
                        args: c.args.iter().map(|a| text[rng(a.range())].to_string()).collect(),
                        at: rng(c.range).start,
                    });
                }
            }
        }
        true
    });
    out
}

/// `f` for a bare name, `self.m` for a method of the instance; other callees are no key.
fn callee_key(func: &Expr) -> Option<String> {
    match func {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => match a.value.as_ref() {
            Expr::Name(n) if n.id.as_str() == "self" => Some(format!("self.{}", a.attr)),
            _ => None,
        },
        _ => None,
    }
}

/// The words of a callee's name (`self.safe_url` → `safe`, `url`).
fn words(name: &str) -> Vec<String> {
    let last = name.rsplit('.').next().unwrap_or(name);
    last.split('_')
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// How alike two callee names read: a shared word, or one name inside the other.
fn alike(a: &str, b: &str) -> bool {
    let (la, lb) = (
        a.rsplit('.').next().unwrap_or(a).trim_matches('_'),
        b.rsplit('.').next().unwrap_or(b).trim_matches('_'),
    );
    let inside = |x: &str, y: &str| x.len() >= 3 && y.contains(x);
    inside(la, lb) || inside(lb, la) || words(a).iter().any(|w| words(b).contains(w))
}

/// The names the statement's function binds (parameters and locals), which shadow the module's.
pub(super) fn local_names(site: &Site) -> BTreeSet<String> {
    site.func
        .map(names_of)
        .unwrap_or_default()
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}

/// Whether a method's body tests the instance's state (`if self.html:`, `… if self.strict
/// else …`, `while self.open:`): what it returns then depends on how the instance was made.
fn branches_on_self(body: &[Stmt]) -> bool {
    condition_tests(body).into_iter().any(|t| {
        let mut found = false;
        walk::walk(&[Node::Expr(t)], MAX_AST_DEPTH, |node, _| {
            if let Node::Expr(Expr::Attribute(a)) = node {
                found |= matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self");
            }
            !found
        });
        found
    })
}

/// `callee-swap`: each call of the statement (with at least one positional argument) to
/// another callable the module sees that takes as many.
fn callee_swap(site: &Site, out: &mut Vec<Mutant>) {
    let text = site.module.text();
    let module = module_names(site.module.body());
    let locals = local_names(site);
    let own_name = site.func.and_then(|f| match f {
        Stmt::FunctionDef(d) => Some(d.name.to_string()),
        Stmt::AsyncFunctionDef(d) => Some(d.name.to_string()),
        _ => None,
    });
    // A method's siblings, called on `self`; those whose result branches on the instance's
    // state (`if self.html:`) are `configured`.
    let mut methods: BTreeMap<String, (usize, Option<usize>)> = BTreeMap::new();
    let mut configured: BTreeSet<String> = BTreeSet::new();
    if let Some(Stmt::ClassDef(cd)) = site.func.and_then(|f| class_of(site.module.body(), f)) {
        for s in &cd.body {
            if let Stmt::FunctionDef(f) = s {
                let static_ = f.decorator_list.iter().any(
                    |d| matches!(d, Expr::Name(n) if n.id.as_str() == "staticmethod"),
                );
                if !f.name.starts_with("__") && !static_ {
                    methods.insert(format!("self.{}", f.name), arity(&f.args, true));
                    if branches_on_self(&f.body) {
                        configured.insert(format!("self.{}", f.name));
                    }
                }
            }
        }
    }
    let seen = calls_of(site);
    let stmt = rng(site.stmt.range());
    for e in own_exprs(site.stmt) {
        let Expr::Call(c) = e else { continue };
        let n = c.args.len();
        if n == 0 || c.args.iter().any(|a| matches!(a, Expr::Starred(_))) {
            continue;
        }
        // A callee the statement computes (`scope[f]`) or names; never `obj.method` of an
        // object the module does not define.
        let current = match c.func.as_ref() {
            Expr::Name(_) | Expr::Subscript(_) => text[rng(c.func.range())].to_string(),
            Expr::Attribute(_) => match callee_key(&c.func) {
                Some(k) => k,
                None => continue,
            },
            _ => continue,
        };
        let args: Vec<String> = c.args.iter().map(|a| text[rng(a.range())].to_string()).collect();
        // Candidate → its arity where known.
        let mut pool: BTreeMap<String, Option<(usize, Option<usize>)>> = BTreeMap::new();
        for (name, ar) in &module.defs {
            pool.insert(name.clone(), Some(*ar));
        }
        // Imported functions, and module names bound to a callable (`bbrepr = Repr().repr`):
        // both of unknown signature, so they count only when called elsewhere.
        for name in &module.bound {
            if name.starts_with(|c: char| c.is_lowercase() || c == '_') {
                pool.entry(name.clone()).or_insert(None);
            }
        }
        for (name, ar) in &methods {
            pool.insert(name.clone(), Some(*ar));
        }
        let mut ranked: Vec<(f64, String)> = Vec::new();
        for (cand, ar) in pool {
            if cand == current
                || Some(&cand) == own_name.as_ref()
                || locals.contains(&cand)
                || own_name
                    .as_ref()
                    .is_some_and(|o| cand == format!("self.{o}"))
            {
                continue;
            }
            // A callee whose answer depends on how the instance is configured, for one that
            // does not: right for the configuration the failing test builds, it can be wrong
            // for every other (a renderer's `self.text` escapes only in HTML mode), and tests
            // seldom cover each configuration at each call.
            if configured.contains(&cand) && !configured.contains(&current) {
                continue;
            }
            let elsewhere: Vec<&CallSeen> = seen
                .iter()
                .filter(|s| s.callee == cand && !stmt.contains(&s.at) && s.args.len() == n)
                .collect();
            if elsewhere.is_empty() && !ar.is_some_and(|a| accepts(a, n)) {
                continue;
            }
            let mut score = 1.0;
            let named = alike(&current, &cand);
            let passed = elsewhere
                .iter()
                .any(|s| s.args.iter().zip(&args).any(|(a, b)| a == b));
            // Taking the arguments is not evidence enough: a large module has dozens of
            // one-argument functions, and every candidate costs a parse of the file.
            if !named && !passed {
                continue;
            }
            if named {
                score += 1.0;
            }
            if passed {
                score += 1.0;
            }
            if !elsewhere.is_empty() {
                score += 0.5;
            }
            ranked.push((score, cand));
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.truncate(MAX_CALLEES);
        let total: f64 = ranked.iter().map(|r| r.0).sum();
        for (score, cand) in ranked {
            out.push(mutant(
                site,
                Family::CalleeSwap,
                format!("`{}(…)` → `{cand}(…)`", one_line(&current)),
                vec![Edit::replacement(rng(c.func.range()), cand.clone())],
                score / total.max(3.0),
                Vec::new(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn a_callee_becomes_a_like_named_function_of_the_module() {
        let src = "from .fmt import brief_repr, quote\n\ndef fancy(x, y):\n    return x\n\nclass Box:\n    def __repr__(self):\n        return 'Box' + repr(self.items)\n\n    def show(self):\n        return brief_repr(self.items) + quote(self.name)\n";
        assert_eq!(
            titles(src, 8, mutants),
            vec![
                pair("`repr(…)` → `brief_repr(…)`", "        return 'Box' + brief_repr(self.items)"),
            ]
        );
        // `fancy` takes two arguments, `show` none: neither takes the call's one; `quote` does,
        // but neither its name nor another call's arguments say it was meant.
    }

    #[test]
    fn a_computed_callee_becomes_a_function_called_with_the_same_arguments() {
        // A module name bound to a callable counts once it is called elsewhere.
        let bound = "better_repr = Repr().repr\n\ndef show(v):\n    return better_repr(v)\n\nclass P:\n    def __repr__(self):\n        return 'P' + repr(self.steps)\n";
        assert_eq!(
            titles(bound, 8, mutants),
            vec![pair(
                "`repr(…)` → `better_repr(…)`",
                "        return 'P' + better_repr(self.steps)"
            )]
        );
        let src = "def resolve(target, spec, scope):\n    return spec\n\ndef run(target, spec, scope):\n    a = resolve(target, spec, scope)\n    return [scope['f'](target, v, scope) for v in spec]\n";
        assert_eq!(
            titles(src, 6, mutants),
            vec![pair(
                "`scope['f'](…)` → `resolve(…)`",
                "    return [resolve(target, v, scope) for v in spec]"
            )]
        );
        // A call with no argument, or to an object the module does not define, is left alone.
        let other = "def a(x):\n    return x\n\ndef b(o):\n    return o.go(1) + o.stop()\n";
        assert!(titles(other, 5, mutants).is_empty());
    }

    #[test]
    fn a_callee_is_not_swapped_for_a_method_that_answers_per_configuration() {
        // `self.text` escapes only when the renderer was made for HTML: swapped in for
        // `escape_text`, it fits a test's `html=False` renderer and breaks the default one.
        let src = "def escape_text(s):\n    return s.replace('&', '&amp;')\n\nclass R:\n    def __init__(self, html=True):\n        self.html = html\n\n    def text(self, s):\n        return escape_text(s) if self.html else s\n\n    def plain_text(self, s):\n        return s.strip()\n\n    def image(self, alt):\n        return '[' + escape_text(alt) + ']'\n";
        assert_eq!(
            titles(src, 15, mutants),
            vec![pair(
                "`escape_text(…)` → `self.plain_text(…)`",
                "        return '[' + self.plain_text(alt) + ']'"
            )]
        );
        // From a method that answers per configuration, any callee may be meant.
        let both = src
            .replace("return s.strip()", "return s.strip() if self.html else s")
            .replace("'[' + escape_text(alt) + ']'", "'[' + self.plain_text(alt) + ']'");
        assert_eq!(
            titles(&both, 15, mutants),
            vec![
                pair(
                    "`self.plain_text(…)` → `escape_text(…)`",
                    "        return '[' + escape_text(alt) + ']'"
                ),
                pair(
                    "`self.plain_text(…)` → `self.text(…)`",
                    "        return '[' + self.text(alt) + ']'"
                ),
            ]
        );
    }

}
