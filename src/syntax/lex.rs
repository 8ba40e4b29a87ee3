//! Tokens of PTX (chapter 4): whitespace and comments, identifiers, literals, and constant
//! expressions (4.6.3). Parsers here take `&str` and return nom results whose error carries
//! the position (a suffix of the source) and a message.

use super::ast::{BinOp, Expr, Ident, Span, UnOp};
use nom::IResult;
use std::borrow::Cow;

/// A parse error at a position of the source (`at` is the unparsed rest).
#[derive(Debug, Clone)]
pub struct PErr<'a> {
    pub at: &'a str,
    pub msg: Cow<'static, str>,
}

impl<'a> nom::error::ParseError<&'a str> for PErr<'a> {
    fn from_error_kind(input: &'a str, _kind: nom::error::ErrorKind) -> Self {
        PErr { at: input, msg: Cow::Borrowed("syntax error") }
    }
    fn append(_input: &'a str, _kind: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

pub type PResult<'a, T> = IResult<&'a str, T, PErr<'a>>;

/// A recoverable error: the caller may try another alternative.
pub fn backtrack<'a, T>(at: &'a str, msg: impl Into<Cow<'static, str>>) -> PResult<'a, T> {
    Err(nom::Err::Error(PErr { at, msg: msg.into() }))
}

/// A committed error: the input is malformed here.
pub fn fail<'a, T>(at: &'a str, msg: impl Into<Cow<'static, str>>) -> PResult<'a, T> {
    Err(nom::Err::Failure(PErr { at, msg: msg.into() }))
}

/// Offsets are computed from pointers into the one source string.
#[derive(Clone, Copy)]
pub struct Src<'a> {
    pub text: &'a str,
}

impl<'a> Src<'a> {
    pub fn off(&self, rest: &str) -> usize {
        rest.as_ptr() as usize - self.text.as_ptr() as usize
    }
    pub fn span(&self, start: &str, end: &str) -> Span {
        Span::new(self.off(start), self.off(end))
    }
}

/// Skips whitespace, `//` and `/* */` comments (4.2).
///
/// An unterminated `/*` is not skipped: `ws` stops at it, so the next token fails there and
/// the parser reports "unterminated comment" at the `/*` (see `Parser::report`).
#[inline]
pub fn ws(s: &str) -> &str {
    // Fast path: most calls are at a token already.
    match s.as_bytes().first() {
        Some(&c) if c > b' ' && c != b'/' && c != b'#' => s,
        None => s,
        _ => ws_slow(s),
    }
}

#[cold]
#[inline(never)]
fn ws_slow(mut s: &str) -> &str {
    loop {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t' || b[i] == b'\n' || b[i] == b'\r') {
            i += 1;
        }
        s = &s[i..];
        if s.starts_with("//") {
            match s.find('\n') {
                Some(n) => s = &s[n + 1..],
                None => return &s[s.len()..],
            }
        } else if s.starts_with("/*") {
            match s[2..].find("*/") {
                Some(n) => s = &s[n + 4..],
                None => return s,
            }
        } else if s.starts_with('#') && !s.starts_with("#pragma") && !is_cpp_directive(s) {
            // Preprocessor line markers (`# 1 "file"`, `#line`) left by cpp.
            match s.find('\n') {
                Some(n) => s = &s[n + 1..],
                None => return &s[s.len()..],
            }
        } else {
            return s;
        }
    }
}

/// Skips spaces and tabs and comments that do not cross a newline.
pub fn ws_line(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t' || b[i] == b'\r') {
        i += 1;
    }
    &s[i..]
}

/// `followsym` characters (4.4): letters, digits, `_` and `$`.
static FOLLOW: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        c += 1;
    }
    t
};

#[inline]
pub fn is_follow(c: u8) -> bool {
    FOLLOW[c as usize]
}

/// An identifier (4.4): `[a-zA-Z]{followsym}*` or `[_$%]{followsym}+`.
pub fn ident_str(s: &str) -> PResult<'_, &str> {
    let b = s.as_bytes();
    if b.is_empty() {
        return backtrack(s, "expected an identifier");
    }
    let first = b[0];
    let mut i = 1;
    while i < b.len() && is_follow(b[i]) {
        i += 1;
    }
    if first.is_ascii_alphabetic() || ((first == b'_' || first == b'$' || first == b'%') && i > 1) {
        Ok((&s[i..], &s[..i]))
    } else if first == b'_' {
        // The sink symbol `_` is an identifier where an identifier is expected (parameters).
        Ok((&s[1..], &s[..1]))
    } else {
        backtrack(s, "expected an identifier")
    }
}

pub fn ident<'a>(src: Src<'a>, s: &'a str) -> PResult<'a, Ident<'a>> {
    let (rest, name) = ident_str(s)?;
    Ok((rest, Ident { name, span: src.span(s, rest) }))
}

/// A directive or modifier word after a dot: letters, digits, `_`, and `::` (e.g. `L2::128B`).
pub fn dot_word(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'.') {
        return None;
    }
    let mut i = 1;
    while i < b.len() && (is_follow(b[i]) || (b[i] == b':' && b.get(i + 1) == Some(&b':'))) {
        i += if b[i] == b':' { 2 } else { 1 };
    }
    if i == 1 {
        return None;
    }
    Some((&s[i..], &s[1..i]))
}

/// The message of a `;` missing at the end of a line; the parser resumes on the next line.
pub const MISSING_SEMI: &str = "expected `;` at the end of the statement";

pub fn expect_char(s: &str, c: char) -> PResult<'_, ()> {
    let s2 = ws(s);
    if s2.starts_with(c) {
        Ok((&s2[c.len_utf8()..], ()))
    } else if c == ';' && s[..s.len() - s2.len()].contains('\n') {
        // The statement ended at a line break: point just after its last token.
        fail(s, MISSING_SEMI)
    } else {
        fail(s2, format!("expected `{c}`"))
    }
}

pub fn opt_char(s: &str, c: char) -> (&str, bool) {
    let s2 = ws(s);
    if s2.starts_with(c) {
        (&s2[c.len_utf8()..], true)
    } else {
        (s, false)
    }
}

/// An unsigned decimal/hex/octal/binary integer literal as u64 (for directive arguments).
pub fn uint(s: &str) -> PResult<'_, u64> {
    let s = ws(s);
    match int_literal(s) {
        Some((rest, v, _)) => Ok((rest, v)),
        None => fail(s, "expected an integer"),
    }
}

pub fn uint32(s: &str) -> PResult<'_, u32> {
    let (rest, v) = uint(s)?;
    if v > u32::MAX as u64 {
        return fail(s, "integer out of range");
    }
    Ok((rest, v as u32))
}

fn digits_end(b: &[u8], start: usize, radix: u32) -> usize {
    let mut i = start;
    while i < b.len() && (b[i] as char).is_digit(radix) {
        i += 1;
    }
    i
}

/// Integer literal (4.6): returns (rest, value, unsigned). `None` if not an integer literal
/// (float literals are handled by [`number`]).
pub fn int_literal(s: &str) -> Option<(&str, u64, bool)> {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return None;
    }
    let (radix, start) = if b[0] == b'0' && b.len() > 1 && (b[1] == b'x' || b[1] == b'X') {
        (16, 2)
    } else if b[0] == b'0' && b.len() > 1 && (b[1] == b'b' || b[1] == b'B') {
        (2, 2)
    } else if b[0] == b'0' && b.len() > 1 && b[1].is_ascii_digit() {
        (8, 1)
    } else {
        (10, 0)
    };
    let end = digits_end(b, start, radix);
    if end == start {
        return None;
    }
    let v = u64::from_str_radix(&s[start..end], radix).ok()?;
    let mut unsigned = v > i64::MAX as u64;
    let mut i = end;
    if i < b.len() && (b[i] == b'U' || b[i] == b'u') {
        unsigned = true;
        i += 1;
    }
    if i < b.len() && is_follow(b[i]) {
        return None;
    }
    Some((&s[i..], v, unsigned))
}

/// Any numeric literal: integer, `0f`/`0d` hex float, or decimal float.
pub fn number<'a>(src: Src<'a>, s: &'a str) -> PResult<'a, Expr<'a>> {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1], b'f' | b'F' | b'd' | b'D') {
        let n = if b[1] == b'f' || b[1] == b'F' { 8 } else { 16 };
        let end = digits_end(b, 2, 16);
        if end - 2 != n {
            return fail(s, format!("a `0{}` float literal needs exactly {n} hex digits", b[1] as char));
        }
        let v = u64::from_str_radix(&s[2..end], 16).unwrap_or(0);
        let rest = &s[end..];
        let span = src.span(s, rest);
        return Ok((rest, if n == 8 { Expr::F32 { bits: v as u32, span } } else { Expr::F64 { bits: v, hex: true, span } }));
    }
    // Decimal float: digits with '.' or exponent.
    let mut i = digits_end(b, 0, 10);
    let mut is_float = false;
    if i < b.len() && b[i] == b'.' && (i > 0 || b.get(1).map_or(false, |c| c.is_ascii_digit())) {
        i = digits_end(b, i + 1, 10);
        is_float = true;
    }
    if i > 0 && i < b.len() && (b[i] == b'e' || b[i] == b'E') && !(b[0] == b'0' && b.len() > 1 && (b[1] == b'x' || b[1] == b'X')) {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let k = digits_end(b, j, 10);
        if k > j {
            i = k;
            is_float = true;
        }
    }
    if is_float {
        let v: f64 = s[..i].parse().map_err(|_| nom::Err::Failure(PErr { at: s, msg: "malformed float literal".into() }))?;
        let rest = &s[i..];
        return Ok((rest, Expr::F64 { bits: v.to_bits(), hex: false, span: src.span(s, rest) }));
    }
    match int_literal(s) {
        Some((rest, value, unsigned)) => Ok((rest, Expr::Int { value, unsigned, span: src.span(s, rest) })),
        None => {
            if b.first().map_or(false, |c| c.is_ascii_digit()) {
                fail(s, "malformed integer literal")
            } else {
                backtrack(s, "expected a number")
            }
        }
    }
}

/// A quoted string (no escapes other than `\"` and `\\` are interpreted; the raw text is kept).
pub fn string_lit(s: &str) -> PResult<'_, &str> {
    let s = ws(s);
    if !s.starts_with('"') {
        return fail(s, "expected a string");
    }
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() && b[i] != b'"' {
        if b[i] == b'\\' {
            i += 1;
        }
        if i < b.len() && b[i] == b'\n' {
            return fail(s, "unterminated string");
        }
        i += 1;
    }
    if i >= b.len() {
        return fail(s, "unterminated string");
    }
    Ok((&s[i + 1..], &s[1..i]))
}

// ---- Constant expressions (4.6.3), precedence climbing over Table 4 ----

/// The length of the binary operator `s` starts with, if any.
pub fn peek_binop_len(s: &str) -> Option<usize> {
    peek_binop(s).map(|(_, n)| n)
}

fn peek_binop(s: &str) -> Option<(BinOp, usize)> {
    let b = s.as_bytes();
    let two = if b.len() >= 2 { &b[..2] } else { b };
    let op2 = match two {
        b"<<" => Some(BinOp::Shl),
        b">>" => Some(BinOp::Shr),
        b"<=" => Some(BinOp::Le),
        b">=" => Some(BinOp::Ge),
        b"==" => Some(BinOp::Eq),
        b"!=" => Some(BinOp::Ne),
        b"&&" => Some(BinOp::LAnd),
        b"||" => Some(BinOp::LOr),
        _ => None,
    };
    if let Some(op) = op2 {
        return Some((op, 2));
    }
    let op = match b.first()? {
        b'*' => BinOp::Mul,
        b'/' if b.get(1) != Some(&b'/') && b.get(1) != Some(&b'*') => BinOp::Div,
        b'%' if !b.get(1).map_or(false, |c| is_follow(*c)) => BinOp::Rem,
        b'+' => BinOp::Add,
        b'-' => BinOp::Sub,
        b'<' => BinOp::Lt,
        b'>' => BinOp::Gt,
        b'&' => BinOp::And,
        b'^' => BinOp::Xor,
        b'|' => BinOp::Or,
        _ => return None,
    };
    Some((op, 1))
}

/// Parses a constant expression. `no_or` stops at `|` (used in `d|p` operand position).
pub fn expr<'a>(src: Src<'a>, s: &'a str) -> PResult<'a, Expr<'a>> {
    cond_expr(src, s, 0)
}

fn cond_expr<'a>(src: Src<'a>, s: &'a str, depth: u32) -> PResult<'a, Expr<'a>> {
    if depth > 200 {
        return fail(s, "expression nested too deeply");
    }
    let (rest, c) = bin_expr(src, s, 0, depth)?;
    let r = ws(rest);
    if let Some(r) = r.strip_prefix('?') {
        let (r, a) = cond_expr(src, ws(r), depth + 1)?;
        let (r, _) = expect_char(r, ':')?;
        let (r, b) = cond_expr(src, ws(r), depth + 1)?;
        let span = c.span().to(b.span());
        return Ok((r, Expr::Cond(Box::new(c), Box::new(a), Box::new(b), span)));
    }
    Ok((rest, c))
}

fn bin_expr<'a>(src: Src<'a>, s: &'a str, min_prec: u8, depth: u32) -> PResult<'a, Expr<'a>> {
    let (mut rest, mut lhs) = unary_expr(src, s, depth)?;
    loop {
        let r = ws(rest);
        let Some((op, len)) = peek_binop(r) else { break };
        let prec = op.precedence();
        if prec < min_prec.max(1) {
            break;
        }
        let (r2, rhs) = bin_expr(src, ws(&r[len..]), prec + 1, depth + 1)?;
        let span = lhs.span().to(rhs.span());
        lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), span);
        rest = r2;
    }
    Ok((rest, lhs))
}

fn unary_expr<'a>(src: Src<'a>, s: &'a str, depth: u32) -> PResult<'a, Expr<'a>> {
    if depth > 200 {
        return fail(s, "expression nested too deeply");
    }
    let s = ws(s);
    if let Some(inner) = s.strip_prefix('(') {
        let inner = ws(inner);
        let cast = if let Some(r) = inner.strip_prefix(".s64") {
            Some((UnOp::CastS64, r))
        } else {
            inner.strip_prefix(".u64").map(|r| (UnOp::CastU64, r))
        };
        if let Some((op, r)) = cast {
            let (r, _) = expect_char(r, ')')?;
            let (r, e) = unary_expr(src, r, depth + 1)?;
            let span = src.span(s, r);
            return Ok((r, Expr::Unary(op, Box::new(e), span)));
        }
    }
    let op = match s.as_bytes().first() {
        Some(b'+') => Some(UnOp::Plus),
        Some(b'-') => Some(UnOp::Neg),
        Some(b'!') => Some(UnOp::Not),
        Some(b'~') => Some(UnOp::Compl),
        _ => None,
    };
    if let Some(op) = op {
        let (r, e) = unary_expr(src, &s[1..], depth + 1)?;
        let span = src.span(s, r);
        return Ok((r, Expr::Unary(op, Box::new(e), span)));
    }
    primary_expr(src, s, depth)
}

fn primary_expr<'a>(src: Src<'a>, s: &'a str, depth: u32) -> PResult<'a, Expr<'a>> {
    match s.as_bytes().first() {
        Some(b'(') => {
            let (r, e) = cond_expr(src, ws(&s[1..]), depth + 1)?;
            let (r, _) = expect_char(r, ')')?;
            Ok((r, e))
        }
        Some(c) if c.is_ascii_digit() || *c == b'.' => number(src, s),
        Some(_) => {
            let (r, id) = ident(src, s).map_err(|_| nom::Err::Error(PErr { at: s, msg: "expected an expression".into() }))?;
            if id.name == "generic" && ws(r).starts_with('(') {
                let r = ws(&ws(r)[1..]);
                let (r, inner) = ident(src, r)?;
                let (r, _) = expect_char(r, ')')?;
                return Ok((r, Expr::Generic(inner, src.span(s, r))));
            }
            Ok((r, Expr::Sym(id)))
        }
        None => backtrack(s, "expected an expression"),
    }
}

/// Whether `s` starts a C preprocessor directive that changes the text (`#define`, `#if`,
/// `#include`, ...): PTX that still has them must go through cpp first (PTX ISA 4.2), and the
/// parser reports them rather than skipping them (skipping `#if 0` would compile dead code).
pub fn is_cpp_directive(s: &str) -> bool {
    let Some(r) = s.strip_prefix('#') else { return false };
    let r = r.trim_start_matches([' ', '\t']);
    let w = &r[..r.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(r.len())];
    matches!(w, "define" | "undef" | "if" | "ifdef" | "ifndef" | "elif" | "else" | "endif" | "include" | "error" | "warning")
}
