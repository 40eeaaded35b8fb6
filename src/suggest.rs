//! CPython's own "Did you mean" suggestions, computed: the same candidates in the same order,
//! the same edit distance and the same limits, so that a fix equal to the result is the hint
//! Python would have printed (pytest's long traceback style never prints it for a `NameError`,
//! and Python 3.10/3.11's `traceback` module prints none at all).
//!
//! Two implementations exist in CPython and they differ at the edges, so both are kept:
//! - [`Impl::Traceback`]: `Lib/traceback.py` of 3.12 (`_compute_suggestion_error`,
//!   `_levenshtein_distance`): characters, more than 750 candidates or a wrong name over 40
//!   characters give nothing, and a match must be closer than the wrong name is long;
//! - [`Impl::Native`]: `Python/suggestions.c`, which `traceback` calls from 3.13 on (module
//!   `_suggestions`) and the interpreter uses for keyword arguments: UTF-8 bytes, ASCII-only case
//!   folding, 750 candidates or more give nothing, no bound but the one-third rule; 3.13 also
//!   hides `_names` of an object unless the wrong name starts with `_` or the object is `self`.

/// Candidate lists this long (or longer, see [`Impl`]) get no suggestion.
pub const MAX_CANDIDATE_ITEMS: usize = 750;
/// Strings longer than this (after trimming common affixes) are never close.
pub const MAX_STRING_SIZE: usize = 40;
/// Cost of an insertion, a deletion or a substitution.
pub const MOVE_COST: usize = 2;
/// Cost of a substitution that only changes case.
pub const CASE_COST: usize = 1;

/// Which of CPython's implementations to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impl {
    /// `Lib/traceback.py`, Python 3.12.
    Traceback,
    /// `Python/suggestions.c`, used by `traceback` from Python 3.13 on.
    Native,
}

impl Impl {
    /// What `traceback.TracebackException` uses on Python `major.minor`. Older versions (whose
    /// `traceback` module computes nothing) and an unknown version get 3.12's, the reference
    /// implementation in Python source.
    pub fn for_version(version: Option<(u32, u32)>) -> Impl {
        match version {
            Some((major, minor)) if (major, minor) >= (3, 13) => Impl::Native,
            _ => Impl::Traceback,
        }
    }
}

/// The code units the distance is measured in: characters (Python) or UTF-8 bytes (C).
fn units(s: &str, imp: Impl) -> Vec<u32> {
    match imp {
        Impl::Traceback => s.chars().map(u32::from).collect(),
        Impl::Native => s.bytes().map(u32::from).collect(),
    }
}

fn substitution_cost(a: u32, b: u32, imp: Impl) -> usize {
    if a == b {
        return 0;
    }
    let same_case_folded = match imp {
        // `ch_a.lower() == ch_b.lower()`; a character whose lowercase is several characters
        // (`İ`) compares as a whole string.
        Impl::Traceback => match (char::from_u32(a), char::from_u32(b)) {
            (Some(x), Some(y)) => x.to_lowercase().eq(y.to_lowercase()),
            _ => false,
        },
        // ASCII letters only, byte by byte.
        Impl::Native => {
            let fold = |c: u32| {
                if (u32::from(b'A')..=u32::from(b'Z')).contains(&c) {
                    c + 32
                } else {
                    c
                }
            };
            fold(a) == fold(b)
        }
    };
    if same_case_folded {
        CASE_COST
    } else {
        MOVE_COST
    }
}

/// `_levenshtein_distance(a, b, max_cost)`: the edit distance, or `max_cost + 1` as soon as it
/// is known to exceed `max_cost`.
pub fn levenshtein(a: &str, b: &str, max_cost: usize, imp: Impl) -> usize {
    if a == b {
        return 0;
    }
    let (a, b) = (units(a, imp), units(b, imp));
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[pre..], &b[pre..]);
    let post = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mut a, mut b) = (&a[..a.len() - post], &b[..b.len() - post]);
    if a.is_empty() || b.is_empty() {
        return MOVE_COST * (a.len() + b.len());
    }
    if a.len() > MAX_STRING_SIZE || b.len() > MAX_STRING_SIZE {
        return max_cost.saturating_add(1);
    }
    if b.len() < a.len() {
        std::mem::swap(&mut a, &mut b);
    }
    if (b.len() - a.len()) * MOVE_COST > max_cost {
        return max_cost.saturating_add(1);
    }
    edit_distance(a, b, max_cost, imp, false)
}

/// The distance selfdebug ranks its own candidates by (names in scope, attributes, imports):
/// CPython's costs on characters with no cut-off, and an adjacent swap costs one move (CPython
/// has none; typos swap letters often).
pub fn distance(a: &str, b: &str) -> usize {
    let imp = Impl::Traceback;
    edit_distance(&units(a, imp), &units(b, imp), usize::MAX, imp, true)
}

/// The weighted edit distance of `a` and `b` (a swap of neighbours costs one move when
/// `swaps`), or `max_cost + 1` as soon as a whole row of the matrix exceeds `max_cost` (CPython's
/// early exit: a row's minimum never decreases).
fn edit_distance(a: &[u32], b: &[u32], max_cost: usize, imp: Impl, swaps: bool) -> usize {
    // Rows for b[..bi - 1], b[..bi] and b[..=bi]; a swap looks two rows back.
    let mut before = vec![0; a.len() + 1];
    let mut prev: Vec<usize> = (0..=a.len()).map(|i| i * MOVE_COST).collect();
    let mut cur = vec![0; a.len() + 1];
    for (bi, &bc) in b.iter().enumerate() {
        cur[0] = (bi + 1) * MOVE_COST;
        let mut minimum = usize::MAX;
        for (ai, &ac) in a.iter().enumerate() {
            let substitute = prev[ai] + substitution_cost(bc, ac, imp);
            let mut d = substitute.min(prev[ai + 1].min(cur[ai]) + MOVE_COST);
            if swaps && ai > 0 && bi > 0 && bc == a[ai - 1] && b[bi - 1] == ac {
                d = d.min(before[ai - 1] + MOVE_COST);
            }
            cur[ai + 1] = d;
            minimum = minimum.min(d);
        }
        if minimum > max_cost {
            return max_cost.saturating_add(1);
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[a.len()]
}

/// The closest candidate to `wrong`, scanning `candidates` in order (the first of equally close
/// ones wins), or `None` when nothing is close enough or there are too many candidates.
pub fn best_match<'a>(candidates: &[&'a str], wrong: &str, imp: Impl) -> Option<&'a str> {
    let too_many = match imp {
        Impl::Traceback => candidates.len() > MAX_CANDIDATE_ITEMS,
        Impl::Native => candidates.len() >= MAX_CANDIDATE_ITEMS,
    };
    let wrong_len = units(wrong, imp).len();
    if too_many || (imp == Impl::Traceback && wrong_len > MAX_STRING_SIZE) {
        return None;
    }
    let mut best = match imp {
        Impl::Traceback => wrong_len,
        Impl::Native => usize::MAX,
    };
    let mut suggestion: Option<&str> = None;
    for &possible in candidates {
        if possible == wrong {
            // A missing attribute that is "found" is not suggested (CPython's GH-88821).
            continue;
        }
        let max_distance = ((units(possible, imp).len() + wrong_len + 3) * MOVE_COST / 6)
            .min(best.saturating_sub(1));
        // `best - 1` is -1 in Python when `best` is 0: nothing can beat an exact match.
        if best == 0 {
            continue;
        }
        let d = levenshtein(wrong, possible, max_distance, imp);
        if d > max_distance {
            continue;
        }
        if suggestion.is_none() || d < best {
            suggestion = Some(possible);
            best = d;
        }
    }
    suggestion
}

/// The names CPython looks at for a `NameError`, in its order.
#[derive(Debug, Default, Clone)]
pub struct NameScope<'a> {
    /// `frame.f_locals` (in a function: parameters, then locals bound so far).
    pub locals: Vec<&'a str>,
    /// `frame.f_globals`, in insertion order (`__name__`, `__doc__`, ... first).
    pub globals: Vec<&'a str>,
    /// `frame.f_builtins`, in the `builtins` module's order.
    pub builtins: Vec<&'a str>,
    /// The frame has a local named `self` and it has an attribute of the wrong name: 3.12+
    /// then suggests `self.<name>` before anything else.
    pub self_has_attr: bool,
}

/// The suggestion for `NameError: name 'wrong' is not defined`.
pub fn for_name(scope: &NameScope, wrong: &str, imp: Impl) -> Option<String> {
    if scope.self_has_attr {
        return Some(format!("self.{wrong}"));
    }
    let all: Vec<&str> = scope
        .locals
        .iter()
        .chain(&scope.globals)
        .chain(&scope.builtins)
        .copied()
        .collect();
    best_match(&all, wrong, imp).map(str::to_string)
}

/// The suggestion for `'T' object has no attribute 'wrong'`, from `dir(obj)` (sorted, as
/// `dir` returns it). `obj_is_self`: the failing frame's `self` is the object.
pub fn for_attribute(dir: &[&str], wrong: &str, obj_is_self: bool, imp: Impl) -> Option<String> {
    let hide_underscored = imp == Impl::Native && !wrong.starts_with('_') && !obj_is_self;
    let shown: Vec<&str> = dir
        .iter()
        .copied()
        .filter(|n| !(hide_underscored && n.starts_with('_')))
        .collect();
    best_match(&shown, wrong, imp).map(str::to_string)
}

/// The suggestion Python 3.13 prints for `f() got an unexpected keyword argument 'wrong'`:
/// from the names of the parameters that may be passed by keyword, in signature order.
pub fn for_keyword(keyword_params: &[&str], wrong: &str) -> Option<String> {
    best_match(keyword_params, wrong, Impl::Native).map(str::to_string)
}

/// The keys of `vars(builtins)` in a Python 3.13 process started as pytest starts it (`site`
/// adds `copyright` ... `help`), in dict order, which decides between equally close names.
/// Python 3.10-3.12 have the same order without the names of [`BUILTINS_SINCE_313`].
#[rustfmt::skip]
pub const BUILTINS: &[&str] = &[
    "__name__", "__doc__", "__package__", "__loader__", "__spec__", "__build_class__", "__import__",
    "abs", "all", "any", "ascii", "bin", "breakpoint", "callable", "chr", "compile", "delattr",
    "dir", "divmod", "eval", "exec", "format", "getattr", "globals", "hasattr", "hash", "hex", "id",
    "input", "isinstance", "issubclass", "iter", "aiter", "len", "locals", "max", "min", "next",
    "anext", "oct", "ord", "pow", "print", "repr", "round", "setattr", "sorted", "sum", "vars",
    "None", "Ellipsis", "NotImplemented", "False", "True", "bool", "memoryview", "bytearray",
    "bytes", "classmethod", "complex", "dict", "enumerate", "filter", "float", "frozenset",
    "property", "int", "list", "map", "object", "range", "reversed", "set", "slice", "staticmethod",
    "str", "super", "tuple", "type", "zip", "__debug__", "BaseException", "BaseExceptionGroup",
    "Exception", "GeneratorExit", "KeyboardInterrupt", "SystemExit", "ArithmeticError",
    "AssertionError", "AttributeError", "BufferError", "EOFError", "ImportError", "LookupError",
    "MemoryError", "NameError", "OSError", "ReferenceError", "RuntimeError", "StopAsyncIteration",
    "StopIteration", "SyntaxError", "SystemError", "TypeError", "ValueError", "Warning",
    "FloatingPointError", "OverflowError", "ZeroDivisionError", "BytesWarning",
    "DeprecationWarning", "EncodingWarning", "FutureWarning", "ImportWarning",
    "PendingDeprecationWarning", "ResourceWarning", "RuntimeWarning", "SyntaxWarning",
    "UnicodeWarning", "UserWarning", "BlockingIOError", "ChildProcessError", "ConnectionError",
    "FileExistsError", "FileNotFoundError", "InterruptedError", "IsADirectoryError",
    "NotADirectoryError", "PermissionError", "ProcessLookupError", "TimeoutError",
    "IndentationError", "_IncompleteInputError", "IndexError", "KeyError", "ModuleNotFoundError",
    "NotImplementedError", "PythonFinalizationError", "RecursionError", "UnboundLocalError",
    "UnicodeError", "BrokenPipeError", "ConnectionAbortedError", "ConnectionRefusedError",
    "ConnectionResetError", "TabError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeTranslateError", "ExceptionGroup", "EnvironmentError", "IOError", "open", "quit",
    "exit", "copyright", "credits", "license", "help",
];

/// Builtins that Python 3.13 added.
pub const BUILTINS_SINCE_313: &[&str] = &["PythonFinalizationError", "_IncompleteInputError"];

/// [`BUILTINS`] of Python `version` (3.12's for an unknown version).
pub fn builtins(version: Option<(u32, u32)>) -> Vec<&'static str> {
    let new = version.is_some_and(|v| v >= (3, 13));
    BUILTINS
        .iter()
        .copied()
        .filter(|b| new || !BUILTINS_SINCE_313.contains(b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_follow_cpython() {
        let d = |a, b| levenshtein(a, b, usize::MAX / 2, Impl::Traceback);
        assert_eq!(d("cont", "count"), 2);
        assert_eq!(d("Total", "total"), 1);
        // No transposition in CPython: a swap is two substitutions.
        assert_eq!(d("totla", "total"), 4);
        assert_eq!(d("abc", "abc"), 0);
        assert_eq!(levenshtein("abcdef", "uvwxyz", 3, Impl::Traceback), 4);
    }

    #[test]
    fn ranking_distance_counts_a_swap_as_one_move() {
        assert_eq!(distance("cont", "count"), 2);
        assert_eq!(distance("totla", "total"), 2);
        assert_eq!(distance("form", "from"), 2);
        assert_eq!(distance("Total", "total"), 1);
        assert_eq!(distance("", "ab"), 4);
        assert_eq!(distance("ab", ""), 4);
    }

    #[test]
    fn matches_and_limits() {
        let t = Impl::Traceback;
        assert_eq!(best_match(&["count", "items"], "cont", t), Some("count"));
        assert_eq!(best_match(&["price"], "customer", t), None);
        // 3.12 wants a match closer than the wrong name is long; 3.13 does not.
        assert_eq!(best_match(&["xy"], "x", t), None);
        assert_eq!(best_match(&["xy"], "x", Impl::Native), Some("xy"));
        let many: Vec<String> = (0..750).map(|i| format!("zz{i}")).collect();
        let mut names: Vec<&str> = many.iter().map(String::as_str).collect();
        names.push("count");
        assert_eq!(best_match(&names, "cont", t), None);
        names.pop();
        names[0] = "count";
        assert_eq!(best_match(&names, "cont", t), Some("count"));
        assert_eq!(best_match(&names, "cont", Impl::Native), None);
    }

    #[test]
    fn names_attributes_keywords() {
        let scope = NameScope {
            locals: vec!["items"],
            globals: vec!["__name__", "counter"],
            builtins: vec!["print", "len"],
            self_has_attr: false,
        };
        assert_eq!(
            for_name(&scope, "itmes", Impl::Traceback).as_deref(),
            Some("items")
        );
        assert_eq!(
            for_name(&scope, "lenn", Impl::Traceback).as_deref(),
            Some("len")
        );
        assert_eq!(
            for_attribute(&["_totals", "total"], "_total", false, Impl::Native).as_deref(),
            Some("_totals")
        );
        assert_eq!(for_attribute(&["_size"], "size", false, Impl::Native), None);
        assert_eq!(
            for_attribute(&["_size"], "size", true, Impl::Native).as_deref(),
            Some("_size")
        );
        assert_eq!(
            for_keyword(&["indent", "width"], "indnt").as_deref(),
            Some("indent")
        );
    }
}
