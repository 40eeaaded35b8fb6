//! Template: a missing `await`. An `async def` calls a coroutine function without awaiting it,
//! so the code goes on with a coroutine object (`f"Hello, {name}!"` prints `<coroutine object
//! lookup_name at 0x…>`, `self.subtotal() - self.discount` raises `TypeError: unsupported
//! operand type(s) for -: 'coroutine' and 'int'`) and Python warns "coroutine '…' was never
//! awaited".
//!
//! `missing-await` puts `await ` before such a call of the suspicious statement, only inside an
//! `async def`, and only when the callee is known to be a coroutine function: an `async def` of
//! the module (`lookup_name(…)`), an `async def` method of the enclosing class (`self.m(…)`,
//! `cls.m(…)`), a method name that only `async def`s of the module's classes carry
//! (`self.service.price_of(…)`), or, whatever the callee, a call whose value the probe saw as a
//! `coroutine` in the crashed frame (`price = fetch(sku)`, `fetch` imported; the session keeps
//! the frame's types for a `TypeError` naming `'coroutine'`). A call that is an
//! argument of another call as it is (`asyncio.gather(f(), g())`, `create_task(f())`, `gather(*[f(x)
//! for x in xs])`) is left alone: it is meant to be passed unawaited; one inside arithmetic in an
//! argument (`max(0, self.subtotal() - d)`) is not. Inside a comprehension the edit is weighted down (the
//! comprehension may be building tasks on purpose).
//!
//! `await` binds tighter than any operator, so `await f() - x` needs no parentheses; a call
//! followed by `.`, `[` or `(` does (`(await f()).name`).

use std::collections::BTreeSet;

use rustpython_parser::ast::{Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::data::enclosing_class;
use crate::search::family::Family;
use crate::syntax::rng;

use super::operators::{mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::MissingAwait];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func @ Stmt::AsyncFunctionDef(_)) = site.func else {
        return Vec::new();
    };
    let text = site.module.text();
    let exprs = own_exprs(site.stmt);
    let known = Coroutines::of(site, func);
    // Ranges: awaited values, arguments of calls, comprehensions.
    let mut awaited = Vec::new();
    let mut passed = Vec::new();
    let mut comprehensions = Vec::new();
    for e in &exprs {
        match e {
            Expr::Await(a) => awaited.push(rng(a.value.range())),
            Expr::Call(c) => {
                for a in c.args.iter().chain(c.keywords.iter().map(|k| &k.value)) {
                    handed_over(a, &mut passed, 0);
                }
            }
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::GeneratorExp(_) => {
                comprehensions.push(rng(e.range()))
            }
            _ => {}
        }
    }
    let within = |r: &std::ops::Range<usize>, outer: &[std::ops::Range<usize>]| {
        outer.iter().any(|o| o.start <= r.start && r.end <= o.end)
    };
    // A name the probe saw holding a coroutine, assigned by this statement.
    let probed_target = match site.stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => match &a.targets[0] {
            Expr::Name(n) => site
                .probed
                .and_then(|p| p.get(n.id.as_str()))
                .filter(|t| t.as_str() == "coroutine")
                .map(|_| rng(a.value.range())),
            _ => None,
        },
        _ => None,
    };
    let mut out = Vec::new();
    for e in &exprs {
        let Expr::Call(c) = e else { continue };
        let r = rng(e.range());
        if awaited.contains(&r) || passed.contains(&r) {
            continue;
        }
        let is_coroutine = known.calls(&c.func) || probed_target.as_ref() == Some(&r);
        if !is_coroutine {
            continue;
        }
        let call = &text[r.clone()];
        let next = text[r.end..].trim_start_matches([' ', '\t']).chars().next();
        let (edit, new) = if matches!(next, Some('.' | '[' | '(')) {
            let new = format!("(await {call})");
            (Edit::replacement(r.clone(), new.clone()), new)
        } else {
            (Edit::insertion(r.start, "await "), format!("await {call}"))
        };
        let w = if within(&r, &comprehensions) { 0.5 } else { 1.0 };
        out.push(mutant(
            site,
            Family::MissingAwait,
            format!("`{call}` → `{new}`"),
            vec![edit],
            w,
            Vec::new(),
        ));
    }
    out
}

/// The expressions an argument hands to its call as they are: the argument, the items of a
/// list, tuple or set it is, the element of a comprehension it is, through `*` (`gather(*[f(x)
/// for x in xs])`); not the operands of arithmetic on them.
fn handed_over(arg: &Expr, out: &mut Vec<std::ops::Range<usize>>, depth: usize) {
    out.push(rng(arg.range()));
    if depth > 8 {
        return;
    }
    match arg {
        Expr::Starred(s) => handed_over(&s.value, out, depth + 1),
        Expr::List(l) => l.elts.iter().for_each(|e| handed_over(e, out, depth + 1)),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| handed_over(e, out, depth + 1)),
        Expr::Set(t) => t.elts.iter().for_each(|e| handed_over(e, out, depth + 1)),
        Expr::ListComp(c) => handed_over(&c.elt, out, depth + 1),
        Expr::GeneratorExp(c) => handed_over(&c.elt, out, depth + 1),
        _ => {}
    }
}

/// The coroutine functions a call can be known to reach from the module's own text.
struct Coroutines {
    /// Module-level `async def`s (a plain `def` of the same name wins: it is not one).
    functions: BTreeSet<String>,
    /// `async def` methods of the enclosing class (`self.m`, `cls.m`).
    own_methods: BTreeSet<String>,
    /// Method names every class of the module that defines them defines `async`.
    methods: BTreeSet<String>,
}

impl Coroutines {
    fn of(site: &Site, func: &Stmt) -> Coroutines {
        let body = site.module.body();
        let split = |stmts: &[Stmt]| {
            let (mut asyncs, mut syncs) = (BTreeSet::new(), BTreeSet::new());
            for s in stmts {
                match s {
                    Stmt::AsyncFunctionDef(f) => {
                        asyncs.insert(f.name.to_string());
                    }
                    Stmt::FunctionDef(f) => {
                        syncs.insert(f.name.to_string());
                    }
                    _ => {}
                }
            }
            (asyncs, syncs)
        };
        let (asyncs, syncs) = split(body);
        let functions = asyncs.difference(&syncs).cloned().collect();
        let own_methods = enclosing_class(site.module, func)
            .map(|c| split(&c.body).0)
            .unwrap_or_default();
        let (mut async_methods, mut sync_methods) = (BTreeSet::new(), BTreeSet::new());
        for s in body {
            if let Stmt::ClassDef(c) = s {
                let (a, s) = split(&c.body);
                async_methods.extend(a);
                sync_methods.extend(s);
            }
        }
        Coroutines {
            functions,
            own_methods,
            methods: async_methods.difference(&sync_methods).cloned().collect(),
        }
    }

    /// Whether a call of `callee` returns a coroutine, as far as the module says.
    fn calls(&self, callee: &Expr) -> bool {
        match callee {
            Expr::Name(n) => self.functions.contains(n.id.as_str()),
            Expr::Attribute(a) => {
                let attr = a.attr.as_str();
                let on_self = matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self" || n.id.as_str() == "cls");
                (on_self && self.own_methods.contains(attr)) || self.methods.contains(attr)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    const GREET: &str = "\
async def lookup(uid):
    return uid

def plain(uid):
    return uid

async def greeting(uid):
    name = lookup(uid)
    other = plain(uid)
    return f\"Hello, {name}!\"
";

    #[test]
    fn a_module_coroutine_called_in_an_async_def_gets_awaited() {
        assert_eq!(
            titles(GREET, 8, mutants),
            vec![pair("`lookup(uid)` → `await lookup(uid)`", "    name = await lookup(uid)")]
        );
        // A plain function's call, and any call outside an `async def`: nothing.
        assert!(titles(GREET, 9, mutants).is_empty());
        assert!(titles(GREET, 2, mutants).is_empty());
    }

    #[test]
    fn methods_operators_and_trailers() {
        let src = "\
class Service:
    async def price(self, sku):
        return 1

class Cart:
    async def subtotal(self):
        return 2

    def count(self):
        return 0

    async def total(self):
        return max(0, self.subtotal() - self.count())

    async def first(self, svc):
        return svc.price(1).real + self.subtotal()
";
        assert_eq!(
            titles(src, 13, mutants),
            vec![pair(
                "`self.subtotal()` → `await self.subtotal()`",
                "        return max(0, await self.subtotal() - self.count())"
            )]
        );
        assert_eq!(
            titles(src, 16, mutants),
            vec![
                pair(
                    "`svc.price(1)` → `(await svc.price(1))`",
                    "        return (await svc.price(1)).real + self.subtotal()"
                ),
                pair(
                    "`self.subtotal()` → `await self.subtotal()`",
                    "        return svc.price(1).real + await self.subtotal()"
                ),
            ]
        );
    }

    #[test]
    fn an_imported_callee_is_awaited_when_the_probe_saw_a_coroutine() {
        let src = "from client import fetch\n\nasync def total(sku):\n    price = fetch(sku)\n    return price + 1\n";
        let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let (stmt, func) = crate::syntax::queries::statement_at(&pm, 4).unwrap();
        let seen = |ty: &str| {
            std::collections::BTreeMap::from([("price".to_string(), ty.to_string())])
        };
        let titles_with = |probed: &std::collections::BTreeMap<String, String>| {
            let site = Site {
                module: &pm,
                line: 4,
                stmt,
                func,
                priors: crate::search::priors::Priors::builtin(),
                probed: Some(probed),
                expected: None,
                wanted_type: None,
            };
            mutants(&site).into_iter().map(|m| m.title).collect::<Vec<_>>()
        };
        assert_eq!(
            titles_with(&seen("coroutine")),
            vec!["`fetch(sku)` → `await fetch(sku)`"]
        );
        assert!(titles_with(&seen("int")).is_empty());
    }

    #[test]
    fn awaited_or_passed_calls_are_left_alone() {
        let src = "\
import asyncio

async def one():
    return 1

async def both():
    a = await one()
    return await asyncio.gather(one(), one())

async def many(xs):
    return await asyncio.gather(*[one() for x in xs])
";
        assert!(titles(src, 7, mutants).is_empty());
        assert!(titles(src, 8, mutants).is_empty());
        assert!(titles(src, 11, mutants).is_empty());
    }
}
