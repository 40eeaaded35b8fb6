//! Just enough of Python's scoping to say which names are visible at a statement: the chain of
//! enclosing `def`s and `class`es, the names each scope binds (and where), a class's attributes,
//! and an edit distance close to the one CPython's "Did you mean" uses.

use std::ops::Range;

use rustpython_parser::ast::{self, Constant, Expr, ExprContext, Operator, Pattern, Ranged, Stmt};

use crate::suggest::{distance, MOVE_COST};
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

pub(crate) fn range_of<T: Ranged>(n: &T) -> Range<usize> {
    crate::syntax::rng(n.range())
}

/// The statement lists directly below `stmt` (bodies, `else`, handlers, `finally`, cases).
pub(crate) fn child_bodies(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::FunctionDef(s) => vec![&s.body],
        Stmt::AsyncFunctionDef(s) => vec![&s.body],
        Stmt::ClassDef(s) => vec![&s.body],
        Stmt::For(s) => vec![&s.body, &s.orelse],
        Stmt::AsyncFor(s) => vec![&s.body, &s.orelse],
        Stmt::While(s) => vec![&s.body, &s.orelse],
        Stmt::If(s) => vec![&s.body, &s.orelse],
        Stmt::With(s) => vec![&s.body],
        Stmt::AsyncWith(s) => vec![&s.body],
        Stmt::Match(s) => s.cases.iter().map(|c| c.body.as_slice()).collect(),
        Stmt::Try(s) => handler_bodies(&s.body, &s.handlers, &s.orelse, &s.finalbody),
        Stmt::TryStar(s) => handler_bodies(&s.body, &s.handlers, &s.orelse, &s.finalbody),
        _ => Vec::new(),
    }
}

fn handler_bodies<'a>(
    body: &'a [Stmt],
    handlers: &'a [ast::ExceptHandler],
    orelse: &'a [Stmt],
    finalbody: &'a [Stmt],
) -> Vec<&'a [Stmt]> {
    let mut out = vec![body];
    for h in handlers {
        let ast::ExceptHandler::ExceptHandler(h) = h;
        out.push(&h.body);
    }
    out.push(orelse);
    out.push(finalbody);
    out
}

/// Every statement whose range contains `at`, outermost first (the last is the innermost).
/// Iterative; a statement list is searched only when one of its statements holds `at`.
pub(crate) fn stmt_path(body: &[Stmt], at: usize) -> Vec<&Stmt> {
    let mut out = Vec::new();
    let mut lists: Vec<&[Stmt]> = vec![body];
    while let Some(list) = lists.pop() {
        let Some(s) = list.iter().find(|s| {
            let r = range_of(*s);
            r.start <= at && at < r.end.max(r.start + 1)
        }) else {
            continue;
        };
        out.push(s);
        lists = child_bodies(s);
        if out.len() > MAX_AST_DEPTH {
            break;
        }
    }
    out
}

/// The statement list (and the index in it) that holds a statement starting at `start`.
pub(crate) fn containing_list(body: &[Stmt], start: usize) -> Option<(&[Stmt], usize)> {
    let mut lists: Vec<&[Stmt]> = vec![body];
    let mut guard = 0;
    while let Some(list) = lists.pop() {
        guard += 1;
        if guard > 100_000 {
            return None;
        }
        if let Some(i) = list.iter().position(|s| range_of(s).start == start) {
            return Some((list, i));
        }
        for s in list {
            let r = range_of(s);
            if r.start <= start && start < r.end {
                lists.extend(child_bodies(s));
            }
        }
    }
    None
}

/// One scope in the chain from the module to a statement.
#[derive(Clone, Copy)]
pub(crate) enum Scope<'a> {
    Module(&'a [Stmt]),
    Class(&'a ast::StmtClassDef),
    Function(Func<'a>),
}

/// A `def` or `async def`.
#[derive(Clone, Copy)]
pub(crate) struct Func<'a> {
    pub stmt: &'a Stmt,
    pub name: &'a str,
    pub args: &'a ast::Arguments,
    pub body: &'a [Stmt],
    pub decorators: &'a [Expr],
}

impl<'a> Func<'a> {
    pub fn of(stmt: &'a Stmt) -> Option<Func<'a>> {
        match stmt {
            Stmt::FunctionDef(s) => Some(Func {
                stmt,
                name: s.name.as_str(),
                args: &s.args,
                body: &s.body,
                decorators: &s.decorator_list,
            }),
            Stmt::AsyncFunctionDef(s) => Some(Func {
                stmt,
                name: s.name.as_str(),
                args: &s.args,
                body: &s.body,
                decorators: &s.decorator_list,
            }),
            _ => None,
        }
    }

    pub fn params(&self) -> Vec<&'a str> {
        let a = self.args;
        let mut out: Vec<&str> = a
            .posonlyargs
            .iter()
            .chain(&a.args)
            .map(|p| p.def.arg.as_str())
            .collect();
        out.extend(a.vararg.iter().map(|v| v.arg.as_str()));
        out.extend(a.kwonlyargs.iter().map(|p| p.def.arg.as_str()));
        out.extend(a.kwarg.iter().map(|v| v.arg.as_str()));
        out
    }

    /// The name of `self` (or `cls`) when this is a method that has one.
    pub fn receiver(&self) -> Option<&'a str> {
        let is_static = self
            .decorators
            .iter()
            .any(|d| matches!(d, Expr::Name(n) if n.id.as_str() == "staticmethod"));
        if is_static {
            return None;
        }
        self.args
            .posonlyargs
            .iter()
            .chain(&self.args.args)
            .next()
            .map(|p| p.def.arg.as_str())
    }

    pub fn range(&self) -> Range<usize> {
        range_of(self.stmt)
    }
}

/// The scopes enclosing offset `at`, module first.
pub(crate) fn scope_chain(body: &[Stmt], at: usize) -> Vec<Scope<'_>> {
    let mut out = vec![Scope::Module(body)];
    for s in stmt_path(body, at) {
        // The statement holding `at` opens a scope only when `at` is in its body, not its
        // header (a decorator or default is evaluated outside).
        let body_start = child_bodies(s)
            .first()
            .and_then(|b| b.first())
            .map(|b| range_of(b).start);
        if body_start.is_none_or(|b| at < b) {
            continue;
        }
        if let Stmt::ClassDef(c) = s {
            out.push(Scope::Class(c));
        } else if let Some(f) = Func::of(s) {
            out.push(Scope::Function(f));
        }
    }
    out
}

/// How a name gets bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum How {
    /// `x = value` (or `x: T = value`); the default a literal of the same kind suggests.
    Assign(Option<&'static str>),
    /// `x op= value`; the identity of the operation for the value's kind.
    AugAssign(&'static str),
    /// `def`, `class`, `import`, `for`, `with ... as`, `except ... as`, walrus, patterns.
    Other,
}

/// A name bound in a scope.
#[derive(Debug, Clone)]
pub(crate) struct Binding {
    pub name: String,
    /// The statement that binds it (its own range, not its body's).
    pub stmt: Range<usize>,
    pub how: How,
}

/// What a scope's body binds, without looking into nested scopes (their `def`/`class` names
/// are bindings; their bodies are not), and the names it declares `global`/`nonlocal`.
pub(crate) fn bindings(body: &[Stmt]) -> (Vec<Binding>, Vec<String>) {
    let mut out: Vec<Binding> = Vec::new();
    let mut declared = Vec::new();
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut owner: Range<usize> = 0..0;
    let mut owner_how = How::Other;
    // The range of the statement's single plain-name target, the only one `owner_how` is for
    // (`x = 1`, not `x, y = 1, 2`).
    let mut sole: Option<Range<usize>> = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(s) => {
            owner = range_of(s);
            owner_how = How::Other;
            sole = match s {
                Stmt::Assign(a) if a.targets.len() == 1 => Some(range_of(&a.targets[0])),
                Stmt::AnnAssign(a) => Some(range_of(a.target.as_ref())),
                Stmt::AugAssign(a) => Some(range_of(a.target.as_ref())),
                _ => None,
            };
            let mut push = |name: &str| {
                out.push(Binding {
                    name: name.to_string(),
                    stmt: range_of(s),
                    how: How::Other,
                })
            };
            match s {
                Stmt::FunctionDef(f) => {
                    push(f.name.as_str());
                    false
                }
                Stmt::AsyncFunctionDef(f) => {
                    push(f.name.as_str());
                    false
                }
                Stmt::ClassDef(c) => {
                    push(c.name.as_str());
                    false
                }
                Stmt::Import(i) => {
                    for a in &i.names {
                        let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
                        push(n.split('.').next().unwrap_or(n));
                    }
                    false
                }
                Stmt::ImportFrom(i) => {
                    for a in &i.names {
                        let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
                        if n != "*" {
                            push(n);
                        }
                    }
                    false
                }
                Stmt::Global(g) => {
                    declared.extend(g.names.iter().map(|n| n.to_string()));
                    false
                }
                Stmt::Nonlocal(g) => {
                    declared.extend(g.names.iter().map(|n| n.to_string()));
                    false
                }
                Stmt::Assign(a) => {
                    owner_how = How::Assign(literal_default(&a.value));
                    true
                }
                Stmt::AnnAssign(a) => {
                    owner_how = How::Assign(a.value.as_deref().and_then(literal_default));
                    true
                }
                Stmt::AugAssign(a) => {
                    owner_how = How::AugAssign(aug_identity(a.op, &a.value));
                    true
                }
                _ => true,
            }
        }
        Node::Expr(e) => match e {
            Expr::Name(n) if matches!(n.ctx, ExprContext::Store | ExprContext::Del) => {
                out.push(Binding {
                    name: n.id.to_string(),
                    stmt: owner.clone(),
                    how: if sole.as_ref() == Some(&range_of(e)) {
                        owner_how.clone()
                    } else {
                        How::Other
                    },
                });
                false
            }
            // Comprehensions and lambdas have their own scope.
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::GeneratorExp(_) => false,
            _ => true,
        },
        Node::Handler(ast::ExceptHandler::ExceptHandler(h)) => {
            if let Some(n) = &h.name {
                out.push(Binding {
                    name: n.to_string(),
                    stmt: range_of(h),
                    how: How::Other,
                });
            }
            true
        }
        Node::Pattern(p) => {
            let name = match p {
                Pattern::MatchAs(m) => m.name.as_ref(),
                Pattern::MatchStar(m) => m.name.as_ref(),
                Pattern::MatchMapping(m) => m.rest.as_ref(),
                _ => None,
            };
            if let Some(n) = name {
                out.push(Binding {
                    name: n.to_string(),
                    stmt: owner.clone(),
                    how: How::Other,
                });
            }
            true
        }
    });
    (out, declared)
}

/// The default a literal value suggests for a variable it is assigned to.
pub(crate) fn literal_default(value: &Expr) -> Option<&'static str> {
    Some(match value {
        Expr::Constant(c) => match &c.value {
            Constant::Int(_) => "0",
            Constant::Float(_) => "0.0",
            Constant::Str(_) => "\"\"",
            Constant::Bytes(_) => "b\"\"",
            Constant::Bool(_) => "False",
            Constant::None => "None",
            _ => return None,
        },
        Expr::JoinedStr(_) => "\"\"",
        Expr::List(_) | Expr::ListComp(_) => "[]",
        Expr::Dict(_) | Expr::DictComp(_) => "{}",
        Expr::Set(_) | Expr::SetComp(_) => "set()",
        Expr::Tuple(_) => "()",
        _ => return None,
    })
}

/// The starting value an augmented assignment needs to mean "accumulate from nothing".
fn aug_identity(op: Operator, value: &Expr) -> &'static str {
    let kind = literal_default(value);
    match op {
        Operator::Mult | Operator::Div | Operator::FloorDiv | Operator::Pow => match kind {
            Some("0.0") => "1.0",
            _ => "1",
        },
        Operator::Add | Operator::Sub => match kind {
            Some("None") | None => "0",
            Some(k) => k,
        },
        Operator::BitOr => match kind {
            Some("set()") => "set()",
            Some("{}") => "{}",
            _ => "0",
        },
        _ => "0",
    }
}

/// Attributes a class gives its instances: class-body bindings (methods, class attributes) and
/// `self.x = ...` stores in any method (through each method's own first parameter).
pub(crate) fn class_attributes(class: &ast::StmtClassDef) -> Vec<String> {
    let mut out: Vec<String> = bindings(&class.body)
        .0
        .into_iter()
        .map(|b| b.name)
        .collect();
    for s in &class.body {
        let Some(f) = Func::of(s) else { continue };
        let Some(me) = f.receiver() else { continue };
        let roots: Vec<Node> = f.body.iter().map(Node::Stmt).collect();
        walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
            if let Node::Expr(Expr::Attribute(a)) = node {
                if matches!(a.ctx, ExprContext::Store) {
                    if let Expr::Name(n) = a.value.as_ref() {
                        if n.id.as_str() == me {
                            out.push(a.attr.to_string());
                        }
                    }
                }
            }
            true
        });
    }
    out.sort();
    out.dedup();
    out
}

/// Name loads of `name` in `body`, not looking into nested `def`/`class`/`lambda` (which may
/// bind the name themselves).
pub(crate) fn name_loads(body: &[Stmt], name: &str) -> Vec<Range<usize>> {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    name_loads_in(&roots, name)
}

pub(crate) fn name_loads_in(roots: &[Node], name: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    walk::walk(roots, MAX_AST_DEPTH, |node, depth| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_))
            if depth > 1 =>
        {
            false
        }
        Node::Expr(Expr::Lambda(_)) => false,
        Node::Expr(e @ Expr::Name(n)) => {
            if n.id.as_str() == name && matches!(n.ctx, ExprContext::Load) {
                out.push(range_of(e));
            }
            false
        }
        _ => true,
    });
    out.sort_by_key(|r| r.start);
    out.dedup();
    out
}

/// Python's builtins (3.8–3.13) a name may be a typo of.
pub(crate) const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "PythonFinalizationError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__import__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// The distance when `candidate` is close enough to `wrong` to be a plausible typo (CPython's
/// threshold: `(len(a) + len(b) + 3) * MOVE / 6`), else `None`.
pub(crate) fn close(wrong: &str, candidate: &str) -> Option<usize> {
    if wrong == candidate {
        return None;
    }
    let (lw, lc) = (wrong.chars().count(), candidate.chars().count());
    if lw > 64 || lc > 64 {
        // Long identifiers: only an exact match counts.
        return None;
    }
    let limit = (lw + lc + 3) * MOVE_COST / 6;
    let d = distance(wrong, candidate);
    (d <= limit).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closeness() {
        assert_eq!(close("x", "y"), None);
        assert_eq!(close("itmes", "items"), Some(2));
        assert_eq!(close("usr", "user"), Some(2));
        assert_eq!(close("price", "customer"), None);
        assert_eq!(close("a", "a"), None);
        let long = "x".repeat(65);
        assert_eq!(close(&long, &format!("{long}y")), None);
    }

    #[test]
    fn scopes_and_bindings() {
        let src = "import os\nX = 1\nclass C:\n    k = 2\n    def m(self, a):\n        self.v = a\n        y = [1]\n        for i in a:\n            z += 1\n        return y\n";
        let pm = crate::syntax::parse_text(std::path::Path::new("t.py"), src).unwrap();
        let at = src.find("return y").unwrap();
        let chain = scope_chain(pm.body(), at);
        assert_eq!(chain.len(), 3);
        let Scope::Function(f) = chain[2] else {
            panic!()
        };
        assert_eq!(f.params(), vec!["self", "a"]);
        let (b, _) = bindings(f.body);
        let names: Vec<(&str, &How)> = b.iter().map(|b| (b.name.as_str(), &b.how)).collect();
        assert!(names.contains(&("y", &How::Assign(Some("[]")))));
        assert!(names.contains(&("z", &How::AugAssign("0"))));
        assert!(names.contains(&("i", &How::Other)));
        let Scope::Class(c) = chain[1] else { panic!() };
        assert_eq!(class_attributes(c), vec!["k", "m", "v"]);
        let (m, _) = bindings(pm.body());
        let mn: Vec<&str> = m.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(mn, vec!["os", "X", "C"]);
    }
}
