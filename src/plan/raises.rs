//! A test that expects an exception the code no longer raises (`Failed: DID NOT RAISE
//! ValueError`, unittest's `ValueError not raised`): the code lost a check. The failure is
//! located in the test, so planning reads the test instead of the traceback: the `with
//! pytest.raises(E, match=R)` / `self.assertRaises(E)` / `self.assertRaisesRegex(E, R)` block
//! at the failing line, the project function called inside it, and the argument that makes the
//! call special (`0`, `None`, an empty literal, a negative number). The candidate is a guard
//! clause at the top of that function raising `E` with a message `R` matches.

use std::path::Path;

use regex::Regex;
use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt, UnaryOp};

use super::candidate::{confined_path, push_candidate, Candidate, PlanError, PlanInput};
use crate::source::SourceFile;
use crate::syntax::walk::{self, Node};
use crate::syntax::{self, MAX_AST_DEPTH};
use crate::traceback::locate::is_test_file;
use crate::transform::common::rng;
use crate::transform::names::project::project_files;
use crate::transform::Transform;

/// Candidates for an expected-exception failure, or `None` when no rule with this transform
/// matches it (planning then goes on as usual). `Err(TestFile)` when the test's block cannot
/// be read: the wrong-output search may still take it.
pub fn plan(input: &PlanInput) -> Option<Result<Vec<Candidate>, PlanError>> {
    let failure = input.failure;
    let matches: Vec<_> = input
        .rules
        .matching(&failure.exc_type, &failure.msg)
        .into_iter()
        .filter(|m| matches!(m.rule.transform, Transform::ExpectedRaise(_)))
        .collect();
    let rule = matches.first()?.rule;
    let loc = failure.location.as_ref()?;
    let give_up = || Err(PlanError::TestFile(loc.file.clone()));
    let Ok(test_path) = confined_path(input.root, &loc.file) else {
        return Some(give_up());
    };
    // Python 3.6 and 3.7 point a `with` block's exit at the last line its body ran, not at
    // the `with` line: the message already says nothing was raised, so the block around the
    // line is the one that expected it.
    let Some(spec) = read_expectation(&test_path, loc.line as usize)
        .or_else(|| read_block(&test_path, loc.line as usize, true))
    else {
        return Some(give_up());
    };
    let out = guard_candidates(input.root, &spec, rule);
    if out.is_empty() {
        return Some(give_up());
    }
    Some(Ok(out))
}

/// A test that expects `E` (`with pytest.raises(E):` around the call) got another exception
/// from the code it called (`AttributeError: 'NoneType' object has no attribute ...`): the
/// code lost the check that raised `E` before the crash. The guard clause raising `E` that
/// [`plan`] writes for a `DID NOT RAISE`, ranked before the rules' repairs of the crash (which
/// make the call return instead of raising). Empty when the failing test's frame is not in
/// such a block, or the block expects the exception that was raised.
pub fn plan_crash(input: &PlanInput) -> Vec<Candidate> {
    let failure = input.failure;
    let Some(rule) = input
        .rules
        .rules()
        .iter()
        .find(|r| matches!(r.transform, Transform::ExpectedRaise(_)))
    else {
        return Vec::new();
    };
    // The test's own frame closest to the code: where the call inside the block is.
    let Some(frame) = failure.frames.iter().rev().find(|f| {
        let parts: Vec<&str> = f.file.split('/').collect();
        f.resolved.is_some() && is_test_file(&parts)
    }) else {
        return Vec::new();
    };
    let Ok(test_path) = confined_path(input.root, &frame.file) else {
        return Vec::new();
    };
    let Some(spec) = read_block(&test_path, frame.line as usize, true) else {
        return Vec::new();
    };
    let raised = failure
        .exc_type
        .rsplit('.')
        .next()
        .unwrap_or(&failure.exc_type);
    if spec.exception == raised {
        return Vec::new();
    }
    guard_candidates(input.root, &spec, rule)
}

/// The guard clauses for `spec` in every project module that defines a function its block calls.
fn guard_candidates(root: &Path, spec: &Expectation, rule: &crate::rules::Rule) -> Vec<Candidate> {
    let mut out = Vec::new();
    for path in project_files(root) {
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let Ok(source) = SourceFile::read(&path) else {
            continue;
        };
        let Ok(module) = syntax::parse(&source) else {
            continue;
        };
        for fix in guards(&source, &module, spec, rule) {
            push_candidate(&mut out, &rel, &path, &source, fix, rule);
        }
    }
    out
}

/// What the test's block expects and how it calls the code.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// The exception's name as the test writes it, last dotted component (`ValueError`).
    pub exception: String,
    /// The `match=` / `assertRaisesRegex` pattern, when given.
    pub pattern: Option<String>,
    /// The calls in the block, in source order: callee name and arguments.
    pub calls: Vec<Call>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    /// Called as `obj.name(...)`: a method (its `self` is not among the arguments).
    pub method: bool,
    /// Positional arguments, as special values (`None` where not special).
    pub args: Vec<Option<Special>>,
    pub keywords: Vec<(String, Special)>,
}

/// An argument value a lost check typically rejects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Zero,
    None,
    Empty,
    Negative,
}

impl Special {
    fn condition(self, param: &str) -> String {
        match self {
            Special::Zero => format!("{param} == 0"),
            Special::None => format!("{param} is None"),
            Special::Empty => format!("not {param}"),
            Special::Negative => format!("{param} < 0"),
        }
    }

    fn message(self, param: &str) -> String {
        let what = match self {
            Special::Zero => "zero",
            Special::None => "None",
            Special::Empty => "empty",
            Special::Negative => "negative",
        };
        format!("{param} must not be {what}")
    }
}

/// The expectation of the `with` block at `line` of the test file.
pub fn read_expectation(path: &Path, line: usize) -> Option<Expectation> {
    read_block(path, line, false)
}

/// `in_body`: `line` may be anywhere in the `with` statement (a call in its body that raised
/// something else), not only on its head (where `DID NOT RAISE` points).
fn read_block(path: &Path, line: usize, in_body: bool) -> Option<Expectation> {
    let source = SourceFile::read(path).ok()?;
    let module = syntax::parse(&source).ok()?;
    let mut found = None;
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(stmt) = node else { return false };
        let r = node.range();
        let (first, last) = (module.line_of(r.start), module.line_of(r.end.max(1) - 1));
        if !(first <= line && line <= last) {
            return false;
        }
        // `self.assertRaises(E, f, arg)` / `pytest.raises(E, f, arg)`: the callable form.
        if let Stmt::Expr(e) = stmt {
            found = found.take().or_else(|| callable_form(&e.value));
        }
        if let Stmt::With(w) = stmt {
            // The traceback points at the `with` line (its items may span lines).
            let items_end = w
                .items
                .last()
                .map(|i| i.context_expr.range().end().to_usize());
            let head_last = items_end.map(|e| module.line_of(e)).unwrap_or(first);
            if in_body || line <= head_last {
                found = found.take().or_else(|| expectation(w));
            }
        }
        found.is_none()
    });
    found
}

fn expectation(w: &ast::StmtWith) -> Option<Expectation> {
    let (exception, pattern) = w.items.iter().find_map(|i| raises_spec(&i.context_expr))?;
    let mut calls = Vec::new();
    let roots: Vec<Node> = w.body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Call(c)) = node {
            if let Some(call) = call_of(c) {
                calls.push(call);
            }
        }
        true
    });
    Some(Expectation {
        exception,
        pattern,
        calls,
    })
}

fn callable_form(e: &Expr) -> Option<Expectation> {
    let Expr::Call(c) = e else { return None };
    let (exception, _) = raises_spec(e)?;
    let name = callee_name(&c.func)?;
    // `assertRaisesRegex(E, R, f, ...)` puts the pattern before the callable.
    let (pattern, at) = match name {
        "assertRaisesRegex" | "assertRaisesRegexp" => (c.args.get(1).and_then(string_of), 2),
        _ => (None, 1),
    };
    let func = c.args.get(at)?;
    let callee = callee_name(func)?.to_string();
    Some(Expectation {
        exception,
        pattern,
        calls: vec![Call {
            name: callee,
            method: matches!(func, Expr::Attribute(_)),
            args: c.args[at + 1..].iter().map(special).collect(),
            keywords: c
                .keywords
                .iter()
                .filter_map(|k| Some((k.arg.as_ref()?.to_string(), special(&k.value)?)))
                .filter(|(k, _)| k != "match")
                .collect(),
        }],
    })
}

/// `pytest.raises(E, match=R)`, `raises(E)`, `self.assertRaises(E)`,
/// `self.assertRaisesRegex(E, R)`: the exception's name and the pattern.
fn raises_spec(e: &Expr) -> Option<(String, Option<String>)> {
    let Expr::Call(c) = e else { return None };
    let name = callee_name(&c.func)?;
    let exc = dotted_last(c.args.first()?)?;
    let pattern = match name {
        "raises" | "assertRaises" => c
            .keywords
            .iter()
            .find(|k| k.arg.as_deref() == Some("match"))
            .and_then(|k| string_of(&k.value)),
        // `assertRaisesRegexp` is the pre-3.2 spelling, still seen in old suites.
        "assertRaisesRegex" | "assertRaisesRegexp" => c
            .args
            .get(1)
            .or_else(|| {
                c.keywords
                    .iter()
                    .find(|k| k.arg.as_deref() == Some("expected_regex"))
                    .map(|k| &k.value)
            })
            .and_then(string_of),
        _ => return None,
    };
    Some((exc, pattern))
}

fn callee_name(func: &Expr) -> Option<&str> {
    match func {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

fn dotted_last(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(a.attr.to_string()),
        _ => None,
    }
}

fn string_of(e: &Expr) -> Option<String> {
    match e {
        Expr::Constant(c) => match &c.value {
            Constant::Str(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn call_of(c: &ast::ExprCall) -> Option<Call> {
    let name = callee_name(&c.func)?.to_string();
    Some(Call {
        method: matches!(*c.func, Expr::Attribute(_)),
        args: c.args.iter().map(special).collect(),
        keywords: c
            .keywords
            .iter()
            .filter_map(|k| Some((k.arg.as_ref()?.to_string(), special(&k.value)?)))
            .collect(),
        name,
    })
}

fn special(e: &Expr) -> Option<Special> {
    match e {
        Expr::Constant(c) => match &c.value {
            Constant::None => Some(Special::None),
            Constant::Int(i) if i.to_string() == "0" => Some(Special::Zero),
            Constant::Float(f) if *f == 0.0 => Some(Special::Zero),
            Constant::Str(s) if s.is_empty() => Some(Special::Empty),
            Constant::Tuple(t) if t.is_empty() => Some(Special::Empty),
            _ => None,
        },
        Expr::List(l) if l.elts.is_empty() => Some(Special::Empty),
        Expr::Tuple(t) if t.elts.is_empty() => Some(Special::Empty),
        Expr::Dict(d) if d.keys.is_empty() => Some(Special::Empty),
        Expr::UnaryOp(u) if u.op == UnaryOp::USub => match &*u.operand {
            Expr::Constant(c) if matches!(c.value, Constant::Int(_) | Constant::Float(_)) => {
                (special(&u.operand) != Some(Special::Zero)).then_some(Special::Negative)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Guard clauses for every function of `module` the block calls with a special argument.
fn guards(
    source: &SourceFile,
    module: &syntax::ParsedModule,
    spec: &Expectation,
    rule: &crate::rules::Rule,
) -> Vec<crate::edit::Fix> {
    let mut out = Vec::new();
    let defs = functions(module);
    for call in &spec.calls {
        for (def, in_class) in defs.iter().filter(|(d, _)| d.name.as_str() == call.name) {
            // A method called as `obj.m(...)` binds `self`; a function called as `mod.f(...)`
            // does not: the first parameter is skipped only for a method called on an object.
            let skip = usize::from(*in_class && call.method && !is_static(def));
            let params: Vec<&str> = def
                .args
                .posonlyargs
                .iter()
                .chain(&def.args.args)
                .map(|a| a.def.arg.as_str())
                .collect();
            let mut specials: Vec<(&str, Special)> = Vec::new();
            for (i, a) in call.args.iter().enumerate() {
                if let (Some(s), Some(p)) = (a, params.get(i + skip)) {
                    specials.push((p, *s));
                }
            }
            for (k, s) in &call.keywords {
                let known = params.contains(&k.as_str())
                    || def.args.kwonlyargs.iter().any(|a| a.def.arg.as_str() == k);
                if known {
                    specials.push((k.as_str(), *s));
                }
            }
            // The parameter the pattern names (`match="step must ..."`) first, then keywords:
            // the test spelled out which argument matters.
            let keyword = |p: &str| call.keywords.iter().any(|(k, _)| k == p);
            specials.sort_by_key(|(p, _)| (!names_word(spec.pattern.as_deref(), p), !keyword(p)));
            for (param, s) in specials {
                if let Some(fix) = guard_fix(source, module, def, param, s, spec, rule) {
                    out.push(fix);
                }
            }
        }
    }
    out
}

/// Whether `word` appears in `text` as a whole word.
fn names_word(text: Option<&str>, word: &str) -> bool {
    let ident = |c: char| c == '_' || c.is_alphanumeric();
    text.is_some_and(|t| {
        t.match_indices(word).any(|(i, _)| {
            !t[..i].chars().next_back().is_some_and(ident)
                && !t[i + word.len()..].chars().next().is_some_and(ident)
        })
    })
}

/// Every `def` in the module, with whether it is directly in a class body.
fn functions(module: &syntax::ParsedModule) -> Vec<(&ast::StmtFunctionDef, bool)> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Stmt, bool)> = module.body().iter().map(|s| (s, false)).collect();
    stack.reverse();
    while let Some((s, in_class)) = stack.pop() {
        match s {
            Stmt::FunctionDef(f) => out.push((f, in_class)),
            Stmt::ClassDef(c) => stack.extend(c.body.iter().rev().map(|s| (s, true))),
            // Definitions under `if TYPE_CHECKING:`/`try:` at module or class level.
            Stmt::If(i) => {
                stack.extend(i.body.iter().chain(&i.orelse).rev().map(|s| (s, in_class)))
            }
            Stmt::Try(t) => stack.extend(t.body.iter().rev().map(|s| (s, in_class))),
            _ => {}
        }
    }
    out
}

fn is_static(def: &ast::StmtFunctionDef) -> bool {
    def.decorator_list
        .iter()
        .any(|d| matches!(d, Expr::Name(n) if n.id.as_str() == "staticmethod"))
}

/// `if COND:` / `raise E("message")` at the top of `def`'s body: after its docstring and after
/// the guard clauses it already has (a new check joins the others, in their quoting style).
fn guard_fix(
    source: &SourceFile,
    module: &syntax::ParsedModule,
    def: &ast::StmtFunctionDef,
    param: &str,
    special: Special,
    spec: &Expectation,
    rule: &crate::rules::Rule,
) -> Option<crate::edit::Fix> {
    let exc = documented_exception(module, def, param, &spec.exception);
    let exc = exc.as_str();
    if !exception_in_scope(module, exc) {
        return None;
    }
    let message = match &spec.pattern {
        Some(p) => literal_of_pattern(p)?,
        None => special.message(param),
    };
    let body = &def.body;
    let mut at = usize::from(is_docstring(body.first()?));
    let mut quote = '"';
    while let Some(s) = body.get(at) {
        match guard_quote(source, s) {
            Some(q) => {
                quote = q.unwrap_or(quote);
                at += 1;
            }
            None => break,
        }
    }
    // The new guard goes before the first statement that is not a docstring or a guard; a
    // body of only those gets it after them (at the same indentation).
    let (line, indent) = match body.get(at) {
        Some(s) => {
            let line = module.line_of(rng(s.range()).start);
            (line, source.indentation_of_line(line)?.to_string())
        }
        None => {
            let last = body.last()?;
            let l = module.line_of(rng(last.range()).end.max(1) - 1);
            let first = module.line_of(rng(last.range()).start);
            (l + 1, source.indentation_of_line(first)?.to_string())
        }
    };
    // The guard line must start a line of its own in the body (not `def f(): return x`).
    if module.line_of(rng(def.range()).start) == line {
        return None;
    }
    let start = source
        .line_start(line)
        .or_else(|| (line == source.line_count() + 1).then(|| source.text().len()))?;
    let nl = source.newline();
    let unit = source.indent_unit();
    let cond = special.condition(param);
    // A message of our own follows the function's other raises: f-strings that show the
    // argument (`f"... {count!r}"`) → `f"count must not be negative, got {count!r}"`.
    // (`None` says nothing that "must not be None" has not said.)
    let styled = spec.pattern.is_none() && special != Special::None;
    let lit = match message_style(def).filter(|_| styled) {
        Some(conv) => format!(
            "f{}",
            python_string(&format!("{message}, got {{{param}{conv}}}"), quote)
        ),
        None => python_string(&message, quote),
    };
    let content = format!("{indent}if {cond}:{nl}{indent}{unit}raise {exc}({lit}){nl}");
    Some(crate::edit::Fix::new(
        format!("raise {exc} when {cond} in {}()", def.name),
        &rule.id,
        rule.confidence,
        vec![crate::edit::Edit::insertion(start, content)],
    ))
}

/// The type the guard raises: the test's, unless the function's docstring documents one that
/// is it or a subclass the module defines (`Raises BadWindow if size is not positive.` under
/// `pytest.raises(ValueError)`, with `class BadWindow(StatsError, ValueError)`): the type the
/// author gives that check. Among several, the one whose words name the parameter first.
fn documented_exception(
    module: &syntax::ParsedModule,
    def: &ast::StmtFunctionDef,
    param: &str,
    expected: &str,
) -> String {
    let doc = match def.body.first() {
        Some(Stmt::Expr(e)) => string_of(&e.value),
        _ => None,
    };
    let Some(doc) = doc else {
        return expected.to_string();
    };
    let mut fitting: Vec<(String, String)> = crate::transform::common::docstring_raises(&doc)
        .into_iter()
        .filter(|(e, _)| subclass_in_module(module, e, expected, 0))
        .collect();
    fitting.sort_by_key(|(_, when)| !names_word(Some(when), param));
    fitting
        .into_iter()
        .next()
        .map_or_else(|| expected.to_string(), |(e, _)| e)
}

/// Whether `name` is `base`, or a class of the module that derives from it (through the
/// module's own classes; bases are compared by their last dotted part).
fn subclass_in_module(module: &syntax::ParsedModule, name: &str, base: &str, depth: usize) -> bool {
    if name == base {
        return true;
    }
    if depth > 8 {
        return false;
    }
    module.body().iter().any(|s| match s {
        Stmt::ClassDef(c) if c.name.as_str() == name => c.bases.iter().any(|b| {
            let b = match b {
                Expr::Name(n) => n.id.as_str(),
                Expr::Attribute(a) => a.attr.as_str(),
                _ => return false,
            };
            subclass_in_module(module, b, base, depth + 1)
        }),
        _ => false,
    })
}

/// How the function's own `raise` statements word their messages, when they are f-strings that
/// show one of its parameters: the conversion they use for it (`"!r"` or `""`).
fn message_style(def: &ast::StmtFunctionDef) -> Option<&'static str> {
    use crate::syntax::walk::{self, Node};
    let params: Vec<&str> = def
        .args
        .posonlyargs
        .iter()
        .chain(&def.args.args)
        .chain(&def.args.kwonlyargs)
        .map(|a| a.def.arg.as_str())
        .filter(|a| !matches!(*a, "self" | "cls"))
        .collect();
    let roots: Vec<Node> = def.body.iter().map(Node::Stmt).collect();
    let mut found = None;
    walk::walk(&roots, syntax::MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Stmt(Stmt::Raise(r)) => {
            let arg = match r.exc.as_deref() {
                Some(Expr::Call(c)) => c.args.first(),
                _ => None,
            };
            if let Some(Expr::JoinedStr(j)) = arg {
                for v in &j.values {
                    if let Expr::FormattedValue(f) = v {
                        let shown = matches!(f.value.as_ref(), Expr::Name(n) if params.contains(&n.id.as_str()));
                        if shown && found.is_none() {
                            found = Some(if f.conversion == ast::ConversionFlag::Repr {
                                "!r"
                            } else {
                                ""
                            });
                        }
                    }
                }
            }
            false
        }
        Node::Stmt(_) => true,
        _ => false,
    });
    found
}

fn is_docstring(s: &Stmt) -> bool {
    matches!(s, Stmt::Expr(e) if string_of(&e.value).is_some())
}

/// `Some(quote)` when `s` is a guard clause (`if ...:` whose body is a single `raise`, no
/// `else`): the quote character of its message when it has one.
fn guard_quote(source: &SourceFile, s: &Stmt) -> Option<Option<char>> {
    let Stmt::If(i) = s else { return None };
    if !i.orelse.is_empty() || i.body.len() != 1 {
        return None;
    }
    let Stmt::Raise(r) = &i.body[0] else {
        return None;
    };
    let text = source.text().get(rng(r.range()))?;
    Some(text.chars().find(|c| *c == '"' || *c == '\''))
}

/// A builtin exception, or a name the module defines or imports.
pub(crate) fn exception_in_scope(module: &syntax::ParsedModule, name: &str) -> bool {
    const BUILTIN: &[&str] = &[
        "ValueError",
        "TypeError",
        "KeyError",
        "IndexError",
        "LookupError",
        "RuntimeError",
        "ZeroDivisionError",
        "ArithmeticError",
        "OverflowError",
        "AttributeError",
        "NotImplementedError",
        "AssertionError",
        "OSError",
        "FileNotFoundError",
        "PermissionError",
        "Exception",
        "UnicodeError",
    ];
    if BUILTIN.contains(&name) {
        return true;
    }
    module.body().iter().any(|s| match s {
        Stmt::ClassDef(c) => c.name.as_str() == name,
        Stmt::ImportFrom(i) => i
            .names
            .iter()
            .any(|a| a.asname.as_ref().unwrap_or(&a.name).as_str() == name),
        _ => false,
    })
}

/// A plain string that the pattern matches (pytest and unittest use `re.search`): the pattern
/// unescaped when it is a literal apart from `\`-escapes and `^`/`$` anchors. `None` for a
/// pattern with other regex syntax: no message is invented for it.
pub fn literal_of_pattern(pattern: &str) -> Option<String> {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let body = match body.strip_suffix('$') {
        Some(b) if !b.ends_with('\\') => b,
        _ => body,
    };
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let n = chars.next()?;
                if n.is_alphanumeric() {
                    return None; // `\d`, `\w`, `\b`: a class, not a character
                }
                out.push(n);
            }
            '.' | '*' | '+' | '?' | '[' | ']' | '(' | ')' | '{' | '}' | '|' | '^' | '$' => {
                return None
            }
            _ => out.push(c),
        }
    }
    // Checked with the Rust engine too: the two agree on patterns this plain.
    let re = Regex::new(pattern).ok()?;
    (re.is_match(&out) && !out.is_empty()).then_some(out)
}

/// A Python string literal of `s` in `quote` (the other quote when `s` contains it).
fn python_string(s: &str, quote: char) -> String {
    let q = if s.contains(quote) && !s.contains(if quote == '"' { '\'' } else { '"' }) {
        if quote == '"' {
            '\''
        } else {
            '"'
        }
    } else {
        quote
    };
    let mut out = String::new();
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert_eq!(
            literal_of_pattern("step must not be zero").as_deref(),
            Some("step must not be zero")
        );
        assert_eq!(
            literal_of_pattern(r"^size \(0\) must be positive$").as_deref(),
            Some("size (0) must be positive")
        );
        assert_eq!(literal_of_pattern(r"got \d+"), None);
        assert_eq!(literal_of_pattern("a.*b"), None);
        assert_eq!(literal_of_pattern(""), None);
    }

    #[test]
    fn the_docstring_names_the_raised_subclass() {
        let src = "class StatsError(Exception):\n    pass\n\n\nclass BadWindow(StatsError, ValueError):\n    pass\n\n\nclass Empty(StatsError):\n    pass\n\n\ndef cut(xs, size):\n    \"\"\"Runs of xs.\n\n    Raises:\n        Empty: if xs is empty.\n        BadWindow: if size is not positive.\n    \"\"\"\n    return xs\n";
        let m = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let Some(Stmt::FunctionDef(d)) = m.body().last() else {
            panic!()
        };
        let exc = |param: &str, expected: &str| documented_exception(&m, d, param, expected);
        // A subclass of what the test expects, the entry that names the parameter first.
        assert_eq!(exc("size", "ValueError"), "BadWindow");
        assert_eq!(exc("size", "StatsError"), "BadWindow");
        assert_eq!(exc("xs", "StatsError"), "Empty");
        // `Empty` is no `ValueError`; nothing documented fits `TypeError`.
        assert_eq!(exc("xs", "ValueError"), "BadWindow");
        assert_eq!(exc("size", "TypeError"), "TypeError");
    }

    #[test]
    fn message_style_of_the_other_raises() {
        let style = |src: &str| {
            let m = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
            let Stmt::FunctionDef(d) = &m.body()[0] else {
                panic!()
            };
            message_style(d)
        };
        assert_eq!(
            style("def f(self, n):\n    if n > 3:\n        raise E(f\"too many: {n!r}\")\n"),
            Some("!r")
        );
        assert_eq!(
            style("def f(n):\n    if n > 3:\n        raise E(f\"{n} > 3\")\n"),
            Some("")
        );
        // An f-string that shows no parameter, or a plain message: no style to follow.
        assert_eq!(
            style("def f(self, n):\n    if n > 3:\n        raise E(f\"max {self.m}\")\n"),
            None
        );
        assert_eq!(
            style("def f(n):\n    if n > 3:\n        raise E(\"too many\")\n"),
            None
        );
    }

    fn expect(test: &str, line: usize) -> Option<Expectation> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test_x.py");
        std::fs::write(&path, test).unwrap();
        read_expectation(&path, line)
    }

    #[test]
    fn reads_the_block_at_the_line() {
        let test = "import pytest\n\nclass TestX:\n    def test_a(self):\n        with pytest.raises(\n            errors.StepError, match=\"step\"\n        ):\n            ranges.frange(0, 1, step=0)\n";
        let e = expect(test, 5).unwrap();
        assert_eq!(e.exception, "StepError");
        assert_eq!(e.pattern.as_deref(), Some("step"));
        assert_eq!(
            e.calls,
            [Call {
                name: "frange".into(),
                method: true,
                args: vec![Some(Special::Zero), None],
                keywords: vec![("step".into(), Special::Zero)],
            }]
        );
        // The body's line is not the `with` line: a failure there is not DID NOT RAISE.
        assert_eq!(expect(test, 8), None);
    }

    #[test]
    fn callable_and_regex_forms() {
        let test = "def test_a(self):\n    self.assertRaises(TypeError, self.ledger.add, 5, None)\n    self.assertRaisesRegex(ValueError, r'^x$', parse, [], -2)\n    with open('f') as f:\n        pass\n";
        let a = expect(test, 2).unwrap();
        assert_eq!((a.exception.as_str(), a.pattern), ("TypeError", None));
        assert_eq!(a.calls[0].name, "add");
        assert_eq!(a.calls[0].args, [None, Some(Special::None)]);
        let b = expect(test, 3).unwrap();
        assert_eq!(b.pattern.as_deref(), Some("^x$"));
        assert_eq!(
            b.calls[0].args,
            [Some(Special::Empty), Some(Special::Negative)]
        );
        assert_eq!(expect(test, 4), None);
        assert_eq!(expect("def broken(:\n", 1), None);
    }

    #[test]
    fn quoting() {
        assert_eq!(python_string("it's", '\''), "\"it's\"");
        assert_eq!(python_string("a\\b", '"'), "\"a\\\\b\"");
        assert_eq!(python_string("x", '\''), "'x'");
    }
}
