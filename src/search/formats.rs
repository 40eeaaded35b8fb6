//! Edits of a format string the checked statement builds or parses with: a `strptime`/
//! `strftime` format (`"%Y-%d-%m"`), a `str.format` template (`"{host}_{seqence}"`), a
//! `%`-format (`"%d items" % n`) or a `struct` format (`struct.Struct("<4sHH")`), written
//! inline or as a constant of the module, the class or the function. Such a string is data the code reads like a regex or a table of keys
//! ([`super::data`] finds the statement's expressions and calls [`mutants`]): when it is wrong,
//! the check that uses it raises (`ValueError: time data ... does not match format`, a
//! `KeyError` from `.format(**fields)`, often turned into the project's own exception) or the
//! value it builds is wrong.
//!
//! The edits, each derived from the string and the code around it, never from a list of
//! formats:
//! - `format-swap`: two directives or named fields of the string swapped (`%Y-%d-%m` →
//!   `%Y-%m-%d`, `{last}, {first}` → `{first}, {last}`), neighbours first;
//! - `format-directive`: a directive replaced by its case partner (`%y` → `%Y`, `%M` → `%m`,
//!   `%b` → `%B` ...), a `%`-conversion by a near one (`%d` → `%s`), a `struct` format's byte
//!   order flipped (`<` ↔ `>`) or a code's signedness (`h` ↔ `H`);
//! - `format-field`: a `{field}` that the call does not pass renamed to a name it passes and the
//!   template does not use (`.format(**fields)` with `fields = {"sequence": ...}`: `{seqence}` →
//!   `{sequence}`), the nearest name first. Only when every name the call passes is known.
//!
//! An f-string is no data (its fields are the code's own expressions) and a concatenation of
//! literals has no single body to edit: both are left alone (see [`super::data::plain_literal`]).

use std::collections::BTreeSet;

use rustpython_parser::ast::{self, Constant, Expr, Operator, Stmt};

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::{ParsedModule, MAX_AST_DEPTH};

use super::data::{self, plain_literal, Literal};
use super::family::Family;
use super::mutate::Mutant;
use super::priors::Priors;

/// `struct` functions whose first argument is a format.
const STRUCT_FUNCS: &[&str] = &[
    "Struct",
    "pack",
    "pack_into",
    "unpack",
    "unpack_from",
    "iter_unpack",
    "calcsize",
];

/// Methods of a `struct.Struct`: their receiver holds the format.
const STRUCT_METHODS: &[&str] = &["pack", "pack_into", "unpack", "unpack_from", "iter_unpack"];

/// Alternatives proposed at most for one `{field}` (the nearest names first).
const MAX_RENAMES: usize = 3;

/// What reads the string.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `datetime.strptime(s, F)`, `d.strftime(F)`, `time.strftime(F, t)`.
    Time,
    /// `F.format(...)`, `F.format_map(m)`.
    Brace,
    /// `F % args`.
    Printf,
    /// `struct.unpack(F, data)`, `struct.Struct(F)`, `HEADER.unpack_from(data)` where `HEADER =
    /// struct.Struct(F)`.
    Struct,
}

/// A use of a format string in the checked statement's expressions.
struct Use<'a> {
    kind: Kind,
    /// The format as written there: a literal, a name, `self.X`.
    fmt: &'a Expr,
    /// What reads it, for a title on an inline literal (`strptime`).
    reader: String,
    /// Every name the call passes (`.format(a=1, **fields)`), or none when some are unknown.
    names: Option<Vec<String>>,
}

/// The format-string edits reachable from the statement on `line`: what it reads (its
/// expressions and the values its locals were assigned, see [`data::reads`]).
pub fn mutants(module: &ParsedModule, line: u32, priors: &Priors, words: &[String]) -> Vec<Mutant> {
    let Some(data::Reads { func, class, exprs }) = data::reads(module, line) else {
        return Vec::new();
    };
    let exprs = &exprs;
    let mut uses: Vec<Use> = Vec::new();
    for e in exprs {
        uses_in(e, func, class, module, &mut uses);
    }
    let mut out = Vec::new();
    let mut sites: BTreeSet<usize> = BTreeSet::new();
    for u in uses {
        let Some((label, lit)) = resolve(u.fmt, &u.reader, u.kind, func, class, module) else {
            continue;
        };
        let Some(body) = plain_literal(module.text(), lit) else {
            continue;
        };
        if !sites.insert(body.body_start) {
            continue;
        }
        let mut m = FormatMutator {
            priors,
            label,
            body,
            out: &mut out,
        };
        match u.kind {
            Kind::Time => m.time(),
            Kind::Printf => m.printf(),
            Kind::Brace => m.brace(u.names.as_deref(), words),
            Kind::Struct => m.structure(),
        }
    }
    out
}

fn uses_in<'a>(
    e: &'a Expr,
    func: Option<&'a Stmt>,
    class: Option<&'a ast::StmtClassDef>,
    module: &'a ParsedModule,
    out: &mut Vec<Use<'a>>,
) {
    walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Expr(Expr::Call(c)) => {
                if let Expr::Attribute(a) = c.func.as_ref() {
                    let attr = a.attr.as_str();
                    let on_struct =
                        matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "struct");
                    let (kind, fmt) = match attr {
                        _ if on_struct && STRUCT_FUNCS.contains(&attr) => {
                            (Kind::Struct, c.args.first())
                        }
                        _ if STRUCT_METHODS.contains(&attr) => {
                            (Kind::Struct, Some(a.value.as_ref()))
                        }
                        "strptime" => (Kind::Time, c.args.get(1)),
                        "strftime" => (Kind::Time, c.args.first()),
                        "format" | "format_map" => (Kind::Brace, Some(a.value.as_ref())),
                        _ => (Kind::Time, None),
                    };
                    if let Some(fmt) = fmt {
                        let names = (kind == Kind::Brace)
                            .then(|| passed_names(c, attr == "format_map", func, class, module))
                            .flatten();
                        out.push(Use {
                            kind,
                            fmt,
                            reader: attr.to_string(),
                            names,
                        });
                    }
                }
            }
            Node::Expr(Expr::BinOp(b)) if b.op == Operator::Mod => out.push(Use {
                kind: Kind::Printf,
                fmt: b.left.as_ref(),
                reader: "%".to_string(),
                names: None,
            }),
            _ => {}
        }
        matches!(node, Node::Expr(_))
    });
}

/// Every name `.format(...)`/`.format_map(m)` passes: its keywords and the string keys of the
/// dicts it unpacks, followed to the function's assignments or the class's and module's
/// constants. None when one of them cannot be read.
fn passed_names(
    c: &ast::ExprCall,
    is_map: bool,
    func: Option<&Stmt>,
    class: Option<&ast::StmtClassDef>,
    module: &ParsedModule,
) -> Option<Vec<String>> {
    let mut names = Vec::new();
    let mut unpacked: Vec<&Expr> = Vec::new();
    if is_map {
        unpacked.push(c.args.first()?);
    }
    for k in &c.keywords {
        match &k.arg {
            Some(a) => names.push(a.to_string()),
            None => unpacked.push(&k.value),
        }
    }
    for u in unpacked {
        let values: Vec<&Expr> = match u {
            Expr::Name(n) => {
                let mut only = BTreeSet::new();
                only.insert(n.id.to_string());
                let local = func
                    .map(|f| data::assigned_values(f, &only))
                    .unwrap_or_default();
                if local.is_empty() {
                    vec![data::module_value(module, n.id.as_str())?]
                } else {
                    local
                }
            }
            Expr::Attribute(a) if matches!(a.value.as_ref(), Expr::Name(_)) => {
                vec![data::class_value(class?, a.attr.as_str())?]
            }
            other => vec![other],
        };
        for v in values {
            names.extend(dict_keys(v)?);
        }
    }
    Some(names)
}

/// The keys of `{"a": ..., "b": ...}` or `dict(a=..., b=...)`, when all are plain strings.
fn dict_keys(e: &Expr) -> Option<Vec<String>> {
    match e {
        Expr::Dict(d) => d
            .keys
            .iter()
            .map(|k| match k {
                Some(Expr::Constant(c)) => match &c.value {
                    Constant::Str(s) => Some(s.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect(),
        Expr::Call(c)
            if c.args.is_empty()
                && matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "dict") =>
        {
            c.keywords
                .iter()
                .map(|k| k.arg.as_ref().map(|a| a.to_string()))
                .collect()
        }
        _ => None,
    }
}

/// The string literal a format expression stands for, and how titles name it: the literal
/// itself (inline), a local, a module constant or a class attribute (`self._STAMP`).
fn resolve<'a>(
    fmt: &'a Expr,
    reader: &str,
    kind: Kind,
    func: Option<&'a Stmt>,
    class: Option<&'a ast::StmtClassDef>,
    module: &'a ParsedModule,
) -> Option<(String, &'a Expr)> {
    let (label, value) = match fmt {
        Expr::Constant(_) => (format!("the `{reader}` format"), fmt),
        Expr::Name(n) => {
            let mut only = BTreeSet::new();
            only.insert(n.id.to_string());
            let local = func
                .map(|f| data::assigned_values(f, &only))
                .unwrap_or_default();
            let value = match local[..] {
                [one] => one,
                [] => data::module_value(module, n.id.as_str())?,
                _ => return None,
            };
            (format!("`{}`", n.id), value)
        }
        Expr::Attribute(a) if matches!(a.value.as_ref(), Expr::Name(_)) => (
            format!("`{}`", a.attr),
            data::class_value(class?, a.attr.as_str())?,
        ),
        _ => return None,
    };
    // `struct.Struct(F)` stands for its format.
    let value = match value {
        Expr::Call(c) if kind == Kind::Struct => match (c.func.as_ref(), c.args.first()) {
            (Expr::Attribute(a), Some(f)) if a.attr.as_str() == "Struct" => f,
            (Expr::Name(n), Some(f)) if n.id.as_str() == "Struct" => f,
            _ => return None,
        },
        _ => value,
    };
    data::is_str(value).then_some((label, value))
}

struct FormatMutator<'a, 'o> {
    priors: &'a Priors,
    /// How titles name the string (`` `_STAMP` ``, "the `strptime` format").
    label: String,
    body: Literal<'a>,
    out: &'o mut Vec<Mutant>,
}

impl FormatMutator<'_, '_> {
    fn push(&mut self, family: Family, title: String, edits: Vec<Edit>, weight: f64) {
        self.out.push(Mutant {
            family,
            title: format!("{}: {title}", self.label),
            edits,
            prior: self.priors.family(family) * weight,
            effects: Vec::new(),
        });
    }

    fn at(&self, r: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.body.body_start + r.start..self.body.body_start + r.end
    }

    /// Two tokens of the body swapped, neighbours at `near` weight and the others at `far`.
    fn swaps(&mut self, tokens: &[std::ops::Range<usize>], near: f64, far: f64) {
        let body = self.body.body;
        for i in 0..tokens.len() {
            for j in i + 1..tokens.len() {
                let (a, b) = (&body[tokens[i].clone()], &body[tokens[j].clone()]);
                if a == b {
                    continue;
                }
                let edits = vec![
                    Edit::replacement(self.at(&tokens[i]), b.to_string()),
                    Edit::replacement(self.at(&tokens[j]), a.to_string()),
                ];
                let weight = if j == i + 1 { near } else { far };
                self.push(
                    Family::FormatSwap,
                    format!("swap `{a}` and `{b}`"),
                    edits,
                    weight,
                );
            }
        }
    }

    /// A `strptime`/`strftime` format: directives swapped, or one replaced by its case partner.
    fn time(&mut self) {
        let directives = time_directives(self.body.body);
        self.swaps(&directives, 1.0, 0.4);
        for d in &directives {
            let text = &self.body.body[d.clone()];
            let letter = text.chars().last().unwrap_or('%');
            let Some(partner) = time_partner(letter) else {
                continue;
            };
            let new = format!("{}{partner}", &text[..text.len() - 1]);
            let edit = Edit::replacement(self.at(d), new.clone());
            self.push(
                Family::FormatDirective,
                format!("`{text}` → `{new}`"),
                vec![edit],
                1.0,
            );
        }
    }

    /// A `%`-format: a conversion replaced by a near one, two conversions swapped.
    fn printf(&mut self) {
        let specs = printf_specs(self.body.body);
        let positional: Vec<_> = specs
            .iter()
            .filter(|s| !self.body.body[(*s).clone()].contains('('))
            .cloned()
            .collect();
        self.swaps(&positional, 0.4, 0.2);
        for s in &specs {
            let text = &self.body.body[s.clone()];
            let conv = text.chars().last().unwrap_or('%');
            for &to in printf_partners(conv) {
                let new = format!("{}{to}", &text[..text.len() - 1]);
                let edit = Edit::replacement(self.at(s), new.clone());
                self.push(
                    Family::FormatDirective,
                    format!("`{text}` → `{new}`"),
                    vec![edit],
                    0.5,
                );
            }
        }
    }

    /// A `struct` format: the byte order flipped (`<` ↔ `>`, or given where the native one is
    /// implied), a code's signedness flipped (`h` ↔ `H`), two neighbouring codes swapped.
    fn structure(&mut self) {
        let body = self.body.body;
        if !body.is_ascii() || body.contains(char::is_whitespace) {
            return;
        }
        let order = body.chars().next().filter(|c| "@=<>!".contains(*c));
        let flips: &[&str] = match order {
            Some('<') => &[">"],
            Some('>' | '!') => &["<"],
            _ => &["<", ">"],
        };
        for to in flips {
            let (edit, what) = match order {
                Some(o) => (Edit::replacement(self.at(&(0..1)), *to), o.to_string()),
                None => (Edit::insertion(self.body.body_start, *to), String::new()),
            };
            self.push(
                Family::FormatDirective,
                format!("byte order `{what}` → `{to}`"),
                vec![edit],
                1.0,
            );
        }
        let codes = struct_codes(body);
        self.swaps(&codes, 0.5, 0.2);
        for c in &codes {
            let text = &body[c.clone()];
            let letter = text.chars().last().unwrap_or('x');
            if !"bBhHiIlLqQ".contains(letter) {
                continue;
            }
            let flipped = if letter.is_ascii_lowercase() {
                letter.to_ascii_uppercase()
            } else {
                letter.to_ascii_lowercase()
            };
            let new = format!("{}{flipped}", &text[..text.len() - 1]);
            let edit = Edit::replacement(self.at(c), new.clone());
            self.push(
                Family::FormatDirective,
                format!("`{text}` → `{new}`"),
                vec![edit],
                0.6,
            );
        }
    }

    /// A `str.format` template: a field the call does not pass renamed to one it passes and the
    /// template does not use; two named fields swapped.
    fn brace(&mut self, names: Option<&[String]>, words: &[String]) {
        let Some(fields) = brace_fields(self.body.body) else {
            return;
        };
        let named: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = fields
            .into_iter()
            .filter(|(_, name)| {
                let n = &self.body.body[name.clone()];
                n.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            })
            .collect();
        let whole: Vec<_> = named.iter().map(|(w, _)| w.clone()).collect();
        self.swaps(&whole, 0.5, 0.25);
        let Some(names) = names else { return };
        let used: Vec<&str> = named
            .iter()
            .map(|(_, n)| &self.body.body[n.clone()])
            .collect();
        let unused: Vec<&String> = names
            .iter()
            .filter(|n| !used.contains(&n.as_str()))
            .collect();
        for (_, name) in &named {
            let field = &self.body.body[name.clone()];
            if names.iter().any(|n| n == field) {
                continue;
            }
            let mut near: Vec<(usize, &String)> = unused
                .iter()
                .map(|n| (crate::suggest::distance(field, n), *n))
                .collect();
            near.sort();
            near.dedup();
            // The field the failure names (`KeyError: 'seqence'`) is the one to rename.
            let named_by_failure = words.iter().any(|w| w == field);
            for (rank, (_, to)) in near.into_iter().take(MAX_RENAMES).enumerate() {
                let weight = match (rank, named_by_failure) {
                    (0, true) => 1.0,
                    (0, false) => 0.6,
                    _ => 0.3,
                };
                let edit = Edit::replacement(self.at(name), to.clone());
                self.push(
                    Family::FormatField,
                    format!("field `{{{field}}}` → `{{{to}}}`"),
                    vec![edit],
                    weight,
                );
            }
        }
    }
}

/// The codes of a `struct` format with their counts (`4s`, `H`), after the byte order.
fn struct_codes(body: &str) -> Vec<std::ops::Range<usize>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = usize::from(b.first().is_some_and(|c| b"@=<>!".contains(c)));
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        match b.get(i) {
            Some(c) if c.is_ascii_alphabetic() || *c == b'?' => out.push(start..i + 1),
            _ => return out,
        }
        i += 1;
    }
    out
}

/// The directives of a `strftime` format (`%d`, `%-d`), `%%` skipped.
fn time_directives(body: &str) -> Vec<std::ops::Range<usize>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let flag = usize::from(matches!(b[i + 1], b'-' | b'#'));
        match b.get(i + 1 + flag) {
            Some(c) if c.is_ascii_alphabetic() => {
                out.push(i..i + 2 + flag);
                i += 2 + flag;
            }
            // `%%` and anything unknown: two bytes on.
            _ => i += 2,
        }
    }
    out
}

/// The directive with the other case that a slip gives: a two-digit year for a four-digit one,
/// minutes for the month, the abbreviated name for the full one, the 12-hour clock.
fn time_partner(letter: char) -> Option<char> {
    Some(match letter {
        'y' => 'Y',
        'Y' => 'y',
        'm' => 'M',
        'M' => 'm',
        'b' => 'B',
        'B' => 'b',
        'a' => 'A',
        'A' => 'a',
        'H' => 'I',
        'I' => 'H',
        'z' => 'Z',
        'Z' => 'z',
        _ => return None,
    })
}

/// The conversion specifiers of a `%`-format (`%s`, `%(name)r`, `%-8.2f`), `%%` skipped.
fn printf_specs(body: &str) -> Vec<std::ops::Range<usize>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if b[j] == b'(' {
            match body[j..].find(')') {
                Some(k) => j += k + 1,
                None => return out,
            }
        }
        while j < b.len() && b"#0- +*.123456789hlL".contains(&b[j]) {
            j += 1;
        }
        match b.get(j) {
            Some(c) if b"diouxXeEfFgGcrsa".contains(c) => out.push(i..j + 1),
            Some(b'%') if j == i + 1 => {}
            _ => return out,
        }
        i = j + 1;
    }
    out
}

/// The conversions a `%`-conversion is mistaken for: a number shown as text and back, `repr`.
fn printf_partners(conv: char) -> &'static [char] {
    match conv {
        'd' | 'i' | 'u' => &['s', 'f'],
        'f' | 'F' | 'e' | 'g' => &['d', 's'],
        's' => &['r', 'd'],
        'r' => &['s'],
        _ => &[],
    }
}

/// The replacement fields of a `str.format` template: each field's whole range (`{a.b!r:>4}`)
/// and its name's (`a`). None when a field nests another (`{x:{width}}`) or is unclosed.
type Field = (std::ops::Range<usize>, std::ops::Range<usize>);
fn brace_fields(body: &str) -> Option<Vec<Field>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' if b.get(i + 1) == Some(&b'{') => i += 2,
            b'}' if b.get(i + 1) == Some(&b'}') => i += 2,
            b'{' => {
                let close = i + 1 + body[i + 1..].find('}')?;
                let inner = &body[i + 1..close];
                if inner.contains('{') {
                    return None;
                }
                let name_len = inner.find(['.', '[', '!', ':']).unwrap_or(inner.len());
                out.push((i..close + 1, i + 1..i + 1 + name_len));
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (title, the first changed line) of each mutant of the statement on `line`.
    fn changes(src: &str, line: u32, words: &[&str]) -> Vec<(String, String)> {
        // Every mutant here is a format edit.
        crate::search::data::tests::first_changes(src, line, words, mutants)
    }

    #[test]
    fn strptime_directives_of_a_class_constant_swapped_and_recased() {
        let src = "from datetime import datetime\n\n\nclass R:\n    _STAMP = \"%Y-%d-%m %H:%M\"\n\n    def read(self, s):\n        when = datetime.strptime(s, self._STAMP)\n        return when\n";
        let got = changes(src, 8, &[]);
        assert_eq!(
            got[0],
            (
                "`_STAMP`: swap `%Y` and `%d`".to_string(),
                "    _STAMP = \"%d-%Y-%m %H:%M\"".to_string()
            )
        );
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            lines.contains(&"    _STAMP = \"%Y-%m-%d %H:%M\""),
            "{got:?}"
        );
        assert!(lines.contains(&"    _STAMP = \"%Y-%d-%M %H:%M\""));
        assert!(lines.contains(&"    _STAMP = \"%y-%d-%m %H:%M\""));
        // 5 directives: 10 swaps, and a partner for Y, m, H, M (not d).
        assert_eq!(got.len(), 14, "{got:?}");
    }

    #[test]
    fn an_inline_strftime_format_is_named_by_its_reader() {
        let src = "def day(d):\n    return d.strftime(\"%d.%m.%y\")\n";
        let got = changes(src, 2, &[]);
        assert!(got.contains(&(
            "the `strftime` format: `%y` → `%Y`".to_string(),
            "    return d.strftime(\"%d.%m.%Y\")".to_string()
        )));
    }

    #[test]
    fn a_template_field_renamed_to_the_name_the_call_passes() {
        let src = "T = \"{host}_{day}_{seqence:04d}.tar\"\n\n\ndef name(h, d, n):\n    fields = {\"host\": h, \"day\": d, \"sequence\": n}\n    return T.format(**fields)\n";
        let got = changes(src, 6, &["seqence"]);
        let fields: Vec<_> = got.iter().filter(|(t, _)| t.contains("field")).collect();
        assert_eq!(
            fields,
            vec![&(
                "`T`: field `{seqence}` → `{sequence}`".to_string(),
                "T = \"{host}_{day}_{sequence:04d}.tar\"".to_string()
            )]
        );
        // The three named fields can be swapped too (3 pairs).
        assert_eq!(got.len(), 4, "{got:?}");
    }

    #[test]
    fn keywords_and_dict_calls_are_the_names_passed() {
        let src = "def f(a):\n    return \"{nmae}: {count}\".format(name=a, **dict(count=1))\n";
        let got = changes(src, 2, &[]);
        assert!(got.iter().any(
            |(t, l)| t == "the `format` format: field `{nmae}` → `{name}`"
                && l == "    return \"{name}: {count}\".format(name=a, **dict(count=1))"
        ));
        // A mapping that cannot be read: no rename (the names passed are unknown).
        let src = "def f(a, extra):\n    return \"{nmae}\".format(name=a, **extra)\n";
        assert!(changes(src, 2, &[])
            .iter()
            .all(|(t, _)| !t.contains("field")));
    }

    #[test]
    fn printf_conversions() {
        let src = "FMT = \"%s: %d items\"\n\n\ndef line(name, n):\n    return FMT % (name, n)\n";
        let got = changes(src, 5, &[]);
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert!(lines.contains(&"FMT = \"%d: %s items\""), "{got:?}");
        assert!(lines.contains(&"FMT = \"%s: %s items\""));
        assert!(lines.contains(&"FMT = \"%r: %d items\""));
        assert_eq!(printf_specs("%(n)-8.2f%% of %s"), vec![0..9, 15..17]);
    }

    #[test]
    fn f_strings_and_concatenations_are_not_edited() {
        let src = "def f(d, y):\n    return d.strftime(f\"%d.%m.{y}\")\n";
        assert!(changes(src, 2, &[]).is_empty());
        let src = "def f(d):\n    return d.strftime(\"%d.\" \"%m\")\n";
        assert!(changes(src, 2, &[]).is_empty());
    }

    #[test]
    fn struct_formats_by_name_and_inline() {
        let src = "import struct\n\n\nclass R:\n    _HEAD = struct.Struct(\"<4sHh\")\n\n    def read(self, data):\n        magic, version, n = self._HEAD.unpack_from(data)\n        return version\n";
        let got = changes(src, 8, &[]);
        assert_eq!(
            got[0],
            (
                "`_HEAD`: byte order `<` → `>`".to_string(),
                "    _HEAD = struct.Struct(\">4sHh\")".to_string()
            )
        );
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            lines.contains(&"    _HEAD = struct.Struct(\"<4shh\")"),
            "{got:?}"
        );
        assert!(
            lines.contains(&"    _HEAD = struct.Struct(\"<H4sh\")"),
            "{got:?}"
        );
        let src = "import struct\n\n\ndef size(data):\n    return struct.unpack(\"I\", data)[0]\n";
        let got = changes(src, 5, &[]);
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            lines,
            vec![
                "    return struct.unpack(\"<I\", data)[0]",
                "    return struct.unpack(\">I\", data)[0]",
                "    return struct.unpack(\"i\", data)[0]"
            ]
        );
        assert_eq!(struct_codes("!4sH2xq"), vec![1..3, 3..4, 4..6, 6..7]);
    }

    #[test]
    fn tokens() {
        assert_eq!(
            time_directives("%Y-%m-%d %%H %-d"),
            vec![0..2, 3..5, 6..8, 13..16]
        );
        assert_eq!(
            brace_fields("{{x}} {a.b!r:>4} {}"),
            Some(vec![(6..16, 7..8), (17..19, 18..18)])
        );
        assert_eq!(brace_fields("{x:{w}}"), None);
    }
}
