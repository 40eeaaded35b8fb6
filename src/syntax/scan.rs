//! A tokenizer-level scanner for Python source with Python 3.12+ (PEP 701) string rules.
//!
//! It only finds what the masking and nesting checks need: string literals (with their exact
//! extent, f-strings included), names, operators and brackets. Comments and whitespace are
//! skipped. It never panics and always terminates: malformed input ends a token at the end of
//! the line or of the text. Nested f-strings recurse at most [`MAX_FSTRING_NESTING`] levels;
//! deeper ones are scanned as plain strings.

/// CPython's own limit for nested f-strings is lower (150); this only bounds our recursion.
pub const MAX_FSTRING_NESTING: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    Name,
    Number,
    /// A string literal; `fstring` when its prefix has `f` (or the 3.14 `t`).
    String {
        fstring: bool,
    },
    /// An operator or delimiter (brackets included); its text is the token's source.
    Op,
    /// A line break outside brackets or inside them (the scanner does not distinguish).
    Newline,
    /// Anything else (stray characters such as `$` or `?`).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tok {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub tokens: Vec<Tok>,
    /// The deepest bracket nesting, counting brackets inside f-string replacement fields (a
    /// field counts as one level).
    pub max_depth: usize,
    /// Offset of the first opening bracket that reached `max_depth`.
    pub max_depth_at: usize,
    /// Offset of the first opening bracket nested deeper than [`super::MAX_BRACKET_DEPTH`].
    pub over_limit_at: Option<usize>,
}

const OPS3: [&[u8]; 5] = [b"**=", b"//=", b">>=", b"<<=", b"..."];
const OPS2: [&[u8]; 20] = [
    b"**", b"//", b">>", b"<<", b"<=", b">=", b"==", b"!=", b"->", b":=", b"+=", b"-=", b"*=",
    b"/=", b"%=", b"&=", b"|=", b"^=", b"@=", b"<>",
];

struct Scanner<'a> {
    s: &'a [u8],
    depth: usize,
    max_depth: usize,
    max_depth_at: usize,
    over_limit_at: Option<usize>,
}

/// Scans the whole text.
pub fn scan(text: &str) -> Scan {
    let mut sc = Scanner {
        s: text.as_bytes(),
        depth: 0,
        max_depth: 0,
        max_depth_at: 0,
        over_limit_at: None,
    };
    let mut tokens = Vec::new();
    let mut pos = 0;
    while let Some(tok) = sc.next_token(&mut pos, 0) {
        tokens.push(tok);
    }
    Scan {
        tokens,
        max_depth: sc.max_depth,
        max_depth_at: sc.max_depth_at,
        over_limit_at: sc.over_limit_at,
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// `(is_string_prefix, is_fstring, is_raw)` for an identifier directly followed by a quote.
fn string_prefix(word: &[u8]) -> (bool, bool, bool) {
    if word.len() > 2 {
        return (false, false, false);
    }
    let lower: Vec<u8> = word.iter().map(|b| b.to_ascii_lowercase()).collect();
    let ok = matches!(
        lower.as_slice(),
        b"r" | b"u" | b"b" | b"f" | b"t" | b"br" | b"rb" | b"fr" | b"rf" | b"tr" | b"rt"
    );
    (
        ok,
        ok && (lower.contains(&b'f') || lower.contains(&b't')),
        ok && lower.contains(&b'r'),
    )
}

impl Scanner<'_> {
    fn open(&mut self, at: usize) {
        self.depth += 1;
        if self.depth > self.max_depth {
            self.max_depth = self.depth;
            self.max_depth_at = at;
        }
        if self.depth > super::MAX_BRACKET_DEPTH && self.over_limit_at.is_none() {
            self.over_limit_at = Some(at);
        }
    }

    fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The next token at or after `*pos`, advancing `*pos` past it. `fnest` is the f-string
    /// nesting level (for the recursion bound).
    fn next_token(&mut self, pos: &mut usize, fnest: usize) -> Option<Tok> {
        let s = self.s;
        loop {
            let i = *pos;
            let &b = s.get(i)?;
            match b {
                b' ' | b'\t' | b'\x0c' => *pos += 1,
                b'\\' => {
                    // Line continuation (or a stray backslash): skip it and its newline.
                    *pos += 1;
                    if s.get(*pos) == Some(&b'\r') {
                        *pos += 1;
                    }
                    if s.get(*pos) == Some(&b'\n') {
                        *pos += 1;
                    }
                }
                b'#' => {
                    while *pos < s.len() && s[*pos] != b'\n' && s[*pos] != b'\r' {
                        *pos += 1;
                    }
                }
                b'\n' | b'\r' => {
                    let end = if b == b'\r' && s.get(i + 1) == Some(&b'\n') {
                        i + 2
                    } else {
                        i + 1
                    };
                    *pos = end;
                    return Some(Tok {
                        kind: TokKind::Newline,
                        start: i,
                        end,
                    });
                }
                b'\'' | b'"' => {
                    let end = self.string_end(i, false, false, fnest);
                    *pos = end;
                    return Some(Tok {
                        kind: TokKind::String { fstring: false },
                        start: i,
                        end,
                    });
                }
                _ if is_ident_start(b) => {
                    let mut j = i;
                    while j < s.len() && is_ident_char(s[j]) {
                        j += 1;
                    }
                    if matches!(s.get(j), Some(b'\'' | b'"')) {
                        let (ok, f, raw) = string_prefix(&s[i..j]);
                        if ok {
                            let end = self.string_end(j, f, raw, fnest);
                            *pos = end;
                            return Some(Tok {
                                kind: TokKind::String { fstring: f },
                                start: i,
                                end,
                            });
                        }
                    }
                    *pos = j;
                    return Some(Tok {
                        kind: TokKind::Name,
                        start: i,
                        end: j,
                    });
                }
                _ if b.is_ascii_digit()
                    || (b == b'.' && s.get(i + 1).is_some_and(|c| c.is_ascii_digit())) =>
                {
                    let mut j = i + 1;
                    while j < s.len() {
                        let c = s[j];
                        if (c == b'+' || c == b'-') && matches!(s[j - 1], b'e' | b'E') {
                            // Exponent sign, unless this is a hex literal like 0xE-1.
                            let hex = s[i..j].iter().any(|&x| x == b'x' || x == b'X');
                            if hex {
                                break;
                            }
                            j += 1;
                        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
                            j += 1;
                        } else {
                            break;
                        }
                    }
                    *pos = j;
                    return Some(Tok {
                        kind: TokKind::Number,
                        start: i,
                        end: j,
                    });
                }
                _ => {
                    let rest = &s[i..];
                    let len = if OPS3.iter().any(|op| rest.starts_with(op)) {
                        3
                    } else if OPS2.iter().any(|op| rest.starts_with(op)) {
                        2
                    } else {
                        // One character; non-ASCII bytes never get here (identifier start).
                        1
                    };
                    match b {
                        b'(' | b'[' | b'{' => self.open(i),
                        b')' | b']' | b'}' => self.close(),
                        _ => {}
                    }
                    *pos = i + len;
                    let kind = if b"()[]{}:;,.=+-*/%@&|^~<>!".contains(&b) {
                        TokKind::Op
                    } else {
                        TokKind::Other
                    };
                    return Some(Tok {
                        kind,
                        start: i,
                        end: i + len,
                    });
                }
            }
        }
    }

    /// End offset (exclusive) of the string whose opening quote is at `q`.
    fn string_end(&mut self, q: usize, fstring: bool, raw: bool, fnest: usize) -> usize {
        let s = self.s;
        let quote = s[q];
        let triple = s.get(q + 1) == Some(&quote) && s.get(q + 2) == Some(&quote);
        let qlen = if triple { 3 } else { 1 };
        let mut i = q + qlen;
        if fstring && fnest < MAX_FSTRING_NESTING {
            return self.fstring_body_end(i, quote, triple, raw, fnest, false);
        }
        while i < s.len() {
            let c = s[i];
            if c == b'\\' {
                i += 2;
                // "\\\r\n" is one escaped line break.
                if s.get(i - 1) == Some(&b'\r') && s.get(i) == Some(&b'\n') {
                    i += 1;
                }
                continue;
            }
            if c == quote
                && (!triple || (s.get(i + 1) == Some(&quote) && s.get(i + 2) == Some(&quote)))
            {
                return i + qlen;
            }
            if !triple && (c == b'\n' || c == b'\r') {
                // Unterminated single-quoted string: stop at the line end.
                return i;
            }
            i += 1;
        }
        s.len()
    }

    /// Scans f-string literal text from `i`. With `in_spec` it scans a format spec and stops
    /// *at* the `}` that closes the replacement field (or at the closing quote, left unconsumed);
    /// otherwise it stops after the closing quote.
    fn fstring_body_end(
        &mut self,
        mut i: usize,
        quote: u8,
        triple: bool,
        raw: bool,
        fnest: usize,
        in_spec: bool,
    ) -> usize {
        let s = self.s;
        let qlen = if triple { 3 } else { 1 };
        while i < s.len() {
            let c = s[i];
            let at_close = c == quote
                && (!triple || (s.get(i + 1) == Some(&quote) && s.get(i + 2) == Some(&quote)));
            if at_close {
                return if in_spec { i } else { i + qlen };
            }
            match c {
                b'\\' => {
                    if !raw && s.get(i + 1) == Some(&b'N') && s.get(i + 2) == Some(&b'{') {
                        // A named escape such as \N{EM DASH}: its braces are not a field.
                        i += 3;
                        while i < s.len() && s[i] != b'}' && s[i] != quote && s[i] != b'\n' {
                            i += 1;
                        }
                        if s.get(i) == Some(&b'}') {
                            i += 1;
                        }
                    } else if matches!(s.get(i + 1), Some(b'{' | b'}')) {
                        // A backslash does not escape a brace in an f-string.
                        i += 1;
                    } else {
                        i += 2;
                        if s.get(i - 1) == Some(&b'\r') && s.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                    }
                }
                b'\n' | b'\r' if !triple => return i,
                b'{' if !in_spec && s.get(i + 1) == Some(&b'{') => i += 2,
                b'}' if in_spec => return i,
                b'}' if s.get(i + 1) == Some(&b'}') => i += 2,
                b'{' => {
                    i = self.replacement_field_end(i, quote, triple, fnest);
                }
                _ => i += 1,
            }
        }
        s.len()
    }

    /// From the `{` at `open`, the offset just after the matching `}` (or where the enclosing
    /// f-string closes when the field is unterminated).
    fn replacement_field_end(
        &mut self,
        open: usize,
        quote: u8,
        triple: bool,
        fnest: usize,
    ) -> usize {
        let s = self.s;
        self.open(open);
        let base = self.depth;
        let mut pos = open + 1;
        loop {
            // Whitespace and comments are skipped by next_token; peek at the raw byte first for
            // the field-level delimiters.
            while pos < s.len() && matches!(s[pos], b' ' | b'\t' | b'\x0c') {
                pos += 1;
            }
            let Some(&c) = s.get(pos) else {
                self.depth = base - 1;
                return s.len();
            };
            if self.depth == base {
                // No closing-quote check here: under PEP 701 a quote inside a field always starts
                // a nested string, even the enclosing f-string's own quote.
                if c == b'}' {
                    self.depth = base - 1;
                    return pos + 1;
                }
                if c == b'!' && s.get(pos + 1) != Some(&b'=') {
                    // Conversion: `!r`, `!s`, `!a`.
                    pos += 1;
                    while pos < s.len() && is_ident_char(s[pos]) {
                        pos += 1;
                    }
                    continue;
                }
                if c == b':' {
                    // At field level `:` always starts the format spec, even in `{x:=5}`.
                    let end = self.fstring_body_end(pos + 1, quote, triple, false, fnest, true);
                    pos = end;
                    if s.get(pos) == Some(&b'}') {
                        self.depth = base - 1;
                        return pos + 1;
                    }
                    self.depth = base - 1;
                    return pos;
                }
            }
            let before = pos;
            match self.next_token(&mut pos, fnest + 1) {
                None => {
                    self.depth = base - 1;
                    return s.len();
                }
                Some(_) => {
                    // PEP 701 allows line breaks and comments inside any field, so every token
                    // kind simply continues the field.
                    if pos <= before {
                        pos = before + 1;
                    }
                }
            }
            if self.depth < base {
                // A `}` (or `)`/`]`) closed more than the field opened: the field ends here.
                self.depth = base - 1;
                return pos;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(text: &str) -> Vec<(&str, bool)> {
        scan(text)
            .tokens
            .iter()
            .filter_map(|t| match t.kind {
                TokKind::String { fstring } => Some((&text[t.start..t.end], fstring)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn plain_and_prefixed_strings() {
        assert_eq!(
            strings(r#"a = 'x' + "y\"z" + rb'\'' + """t"q""" # 'no'"#),
            vec![
                ("'x'", false),
                (r#""y\"z""#, false),
                (r"rb'\''", false),
                (r#""""t"q""""#, false)
            ]
        );
    }

    #[test]
    fn pep701_fstrings() {
        let src = "x = f\"{d[\"k\"]}\" + f'{a:{w}}' + f\"{'\\n'.join(y)}\"\n";
        assert_eq!(
            strings(src),
            vec![
                ("f\"{d[\"k\"]}\"", true),
                ("f'{a:{w}}'", true),
                ("f\"{'\\n'.join(y)}\"", true)
            ]
        );
        let multi = "s = f\"{\n  x  # why\n}\"\nt = 1";
        assert_eq!(strings(multi), vec![("f\"{\n  x  # why\n}\"", true)]);
        let nested = "f'{f'{f'{1}'}'}' 'z'";
        assert_eq!(
            strings(nested),
            vec![("f'{f'{f'{1}'}'}'", true), ("'z'", false)]
        );
        assert_eq!(strings("f'{{x}}' f'{x!r:>10}' f'{x:=5}'").len(), 3);
        assert_eq!(strings(r"f'\N{DASH}{x}'"), vec![(r"f'\N{DASH}{x}'", true)]);
    }

    #[test]
    fn unterminated_never_loops() {
        for src in [
            "f'{", "f'{x", "'abc\nd", "f\"{'", "f'{a:{b", "\"\"\"", "f'''{\n", "\\",
        ] {
            let sc = scan(src);
            assert!(sc
                .tokens
                .iter()
                .all(|t| t.end <= src.len() && t.start < t.end));
        }
    }

    #[test]
    fn bracket_depth() {
        let sc = scan("x = ((1, [2]))  # (((\n'((('");
        assert_eq!((sc.max_depth, sc.max_depth_at), (3, 9));
    }
}
