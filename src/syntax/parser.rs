//! The PTX parser: module directives (chapter 11), declarations (chapter 5) and instruction
//! statements (4.3.2, chapter 9). Statements that fail to parse are reported and skipped up to
//! the next `;` (or `}`), so one run reports every syntax error of a file.

use super::ast::*;
use super::diag::Diagnostic;
use super::eval::eval;
use super::lex::*;
use smallvec::SmallVec;

/// Parses a whole module. Returns the (possibly partial) module and every syntax error.
pub fn parse_module(text: &str) -> (Module<'_>, Vec<Diagnostic>) {
    let mut p = Parser { src: Src { text }, errors: Vec::new(), stop: false, scratch: Vec::new(), op_depth: 0 };
    let m = p.module();
    (m, p.errors)
}

/// Syntax errors reported before the parser gives up on a file.
pub const MAX_ERRORS: usize = 100;
/// Nesting limit of operands (`{...}`, `[...]`, `d|p`, `a[i]`).
const MAX_OPERAND_DEPTH: u32 = 32;

struct Parser<'a> {
    src: Src<'a>,
    errors: Vec<Diagnostic>,
    /// Set when parsing cannot usefully go on (unterminated comment, too many errors).
    stop: bool,
    /// Statements of the blocks being parsed, innermost last; each block drains its own tail
    /// into an exactly-sized `Vec`, so growth copies happen once, in a buffer that stays warm.
    scratch: Vec<Stmt<'a>>,
    op_depth: u32,
}

/// Module-scope directives that never appear in a function body: seeing one there means the
/// body's closing `}` is missing.
fn is_module_directive(w: &str, after: &str) -> bool {
    match w {
        "entry" | "func" | "version" | "target" | "address_size" | "file" | "section" | "alias" => true,
        // `.visible .entry`, `.weak .func` (but `.visible .reg x;` is a declaration).
        "visible" | "weak" | "common" => matches!(dot_word(ws(after)), Some((_, "entry" | "func"))),
        _ => false,
    }
}

/// Error recovery in a function body: skips to just after the next `;` (statements never
/// contain one, whatever brackets are left open), or to a `}` closing the current block (left
/// in place), so the caller can continue with the next statement.
fn resync(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b';' => return &s[i + 1..],
            b'{' => depth += 1,
            b'}' if depth <= 0 => return &s[i..],
            b'}' => depth -= 1,
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    &s[s.len()..]
}

/// Error recovery at module scope: skips to just after the next `;` outside braces, or just
/// after the `}` that closes a brace opened in the skipped text (the end of a function).
fn resync_item(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b';' if depth <= 0 => return &s[i + 1..],
            b'{' => depth += 1,
            b'}' if depth <= 0 => return &s[i..],
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    &s[s.len()..]
}

impl<'a> Parser<'a> {
    fn error_at(&mut self, at: &'a str, msg: impl Into<String>) {
        if self.stop {
            return;
        }
        if self.errors.len() >= MAX_ERRORS {
            let off = self.src.off(at);
            self.errors.push(Diagnostic::error(Span::new(off, off), format!("too many errors ({MAX_ERRORS}); stopping here")));
            self.stop = true;
            return;
        }
        let off = self.src.off(at);
        // The caret covers the token: up to whitespace or punctuation, at most 80 bytes.
        let b = at.as_bytes();
        let mut n = 0;
        while n < b.len() && n < 80 && !b[n].is_ascii_whitespace() && (n == 0 || !matches!(b[n], b',' | b';' | b'[' | b']' | b'{' | b'}' | b'(' | b')')) {
            n += 1;
        }
        while n < at.len() && !at.is_char_boundary(n) {
            n += 1;
        }
        self.errors.push(Diagnostic::error(Span::new(off, off + n.max(1).min(at.len().max(1)).min(self.src.text.len() - off)), msg));
    }

    fn report(&mut self, e: nom::Err<PErr<'a>>) {
        match e {
            nom::Err::Error(e) | nom::Err::Failure(e) => {
                let c = e.at.chars().next().unwrap_or(' ');
                if !(c.is_ascii_graphic() || c.is_ascii_whitespace()) {
                    let shown = if c.is_control() { format!("{}", c.escape_unicode()) } else { c.to_string() };
                    self.error_at(e.at, format!("unexpected character `{shown}` (U+{:04X})", c as u32));
                } else if e.at.starts_with("/*") {
                    // `ws` stops only at a `/*` without its `*/`.
                    self.error_at(e.at, "unterminated `/*` comment");
                    self.stop = true;
                } else if e.at.is_empty() && e.msg.starts_with("expected") {
                    self.error_at(e.at, format!("unexpected end of file: {}", e.msg));
                } else {
                    self.error_at(e.at, e.msg.to_string());
                }
            }
            nom::Err::Incomplete(_) => {}
        }
    }

    fn module(&mut self) -> Module<'a> {
        let mut m = Module { version: (0, 0), version_span: Span::new(0, 0), target: Vec::new(), address_size: None, items: Vec::new() };
        let mut s = ws(self.src.text);
        let mut saw_version = false;
        while !s.is_empty() && !self.stop {
            let start = s;
            match self.item(s, &mut m, &mut saw_version) {
                Ok(rest) => s = ws(rest),
                Err(e) => {
                    if let nom::Err::Failure(PErr { at, msg }) = &e {
                        if msg == MISSING_SEMI && self.src.off(at) > self.src.off(start) {
                            let at = *at;
                            self.report(e);
                            s = ws(at);
                            continue;
                        }
                    }
                    self.report(e);
                    let r = resync_item(start);
                    // A stray `}` at module scope: skip it too.
                    s = ws(if r.starts_with('}') { &r[1..] } else { r });
                    if s.len() == start.len() {
                        s = ws(&s[1.min(s.len())..]);
                    }
                }
            }
        }
        if !saw_version && self.errors.is_empty() {
            self.errors.push(Diagnostic::error(Span::new(0, 0), "module has no `.version` directive (PTX ISA 11.1.1)"));
        }
        scope_module_registers(&mut m);
        if m.version <= (1, 3) {
            body_params_to_kernel_params(&mut m);
        }
        m
    }

    fn item(&mut self, s: &'a str, m: &mut Module<'a>, saw_version: &mut bool) -> Result<&'a str, nom::Err<PErr<'a>>> {
        if let Some(r) = s.strip_prefix("@@DWARF").or_else(|| s.strip_prefix("@@dwarf")) {
            let end = r.find('\n').unwrap_or(r.len());
            let rest = &r[end..];
            m.items.push(Item::Dwarf(r[..end].trim(), self.src.span(s, rest)));
            return Ok(rest);
        }
        if crate::syntax::lex::is_cpp_directive(s) {
            return fail(s, CPP_DIRECTIVE).map(|(r, ())| r);
        }
        let Some((after, word)) = dot_word(s) else {
            return fail(s, "expected a directive (`.version`, `.target`, `.entry`, `.func`, a variable, ...)").map(|(r, ())| r);
        };
        match word {
            "version" => {
                let r = ws_line(after);
                let at = self.src.off(r);
                let (r, major) = uint32(r)?;
                let r = r.strip_prefix('.').ok_or_else(|| nom::Err::Failure(PErr { at: r, msg: "expected `.` in version".into() }))?;
                let (r, minor) = uint32(r)?;
                m.version = (major, minor);
                m.version_span = Span::new(at, self.src.off(r));
                *saw_version = true;
                Ok(r)
            }
            "target" => {
                let mut r = after;
                loop {
                    r = ws_line(r);
                    let (r2, t) = ident_str(r).map_err(|_| nom::Err::Failure(PErr { at: r, msg: "expected a target name".into() }))?;
                    m.target.push(t);
                    let r3 = ws_line(r2);
                    if let Some(r4) = r3.strip_prefix(',') {
                        r = r4;
                    } else {
                        return Ok(r2);
                    }
                }
            }
            "address_size" => {
                let (r, v) = uint32(after)?;
                if v != 32 && v != 64 {
                    return fail(after, "`.address_size` must be 32 or 64").map(|(r, ())| r);
                }
                m.address_size = Some(v);
                Ok(r)
            }
            "file" => {
                let (r, index) = uint32(after)?;
                let (mut r, name) = string_lit(r)?;
                let (mut timestamp, mut size) = (None, None);
                let (r2, comma) = opt_char(r, ',');
                if comma {
                    let (r3, t) = uint(r2)?;
                    let (r3, _) = expect_char(r3, ',')?;
                    let (r3, z) = uint(r3)?;
                    timestamp = Some(t);
                    size = Some(z);
                    r = r3;
                }
                m.items.push(Item::File { index, name, timestamp, size, span: self.src.span(s, r) });
                Ok(r)
            }
            "section" => {
                let r = ws(after);
                let Some((r2, name)) = dot_word(r).map(|(r2, _)| (r2, &r[..r.len() - r2.len()])).or_else(|| ident_str(r).ok()) else {
                    return fail(r, "expected a section name").map(|(r, ())| r);
                };
                let (r3, _) = expect_char(r2, '{')?;
                let Some(end) = r3.find('}') else {
                    return fail(r3, "unterminated `.section` body").map(|(r, ())| r);
                };
                let rest = &r3[end + 1..];
                m.items.push(Item::Section { name, body: r3[..end].trim(), span: self.src.span(s, rest) });
                Ok(rest)
            }
            "pragma" => {
                let (r, list) = self.pragma_list(after)?;
                m.items.push(Item::Pragma(list, self.src.span(s, r)));
                Ok(r)
            }
            "alias" => {
                let (r, alias) = ident(self.src, ws(after))?;
                let (r, _) = expect_char(r, ',')?;
                let (r, aliasee) = ident(self.src, ws(r))?;
                let (r, _) = expect_char(r, ';')?;
                m.items.push(Item::Alias { alias, aliasee, span: self.src.span(s, r) });
                Ok(r)
            }
            _ => {
                // Linkage, then a function or a variable.
                let mut r = s;
                let mut linkage = None;
                loop {
                    let Some((r2, w)) = dot_word(r) else { break };
                    let l = match w {
                        "extern" => Linkage::Extern,
                        "visible" => Linkage::Visible,
                        "weak" => Linkage::Weak,
                        "common" => Linkage::Common,
                        _ => break,
                    };
                    if linkage.is_some() {
                        return fail(r, "more than one linking directive").map(|(r, ())| r);
                    }
                    linkage = Some(l);
                    r = ws(r2);
                }
                match dot_word(r) {
                    Some((r2, "entry")) | Some((r2, "func")) => {
                        let entry = r.starts_with(".entry");
                        let (r3, f) = self.function(s, r2, linkage, entry)?;
                        m.items.push(Item::Func(Box::new(f)));
                        Ok(r3)
                    }
                    Some((_, w)) if StateSpace::from_str(w).is_some() => {
                        let (r3, vars) = self.var_decl(s, r, linkage, true)?;
                        let (r3, _) = expect_char(r3, ';')?;
                        m.items.extend(vars.into_iter().map(Item::Var));
                        Ok(r3)
                    }
                    _ => fail(r, format!("unknown directive `.{word}`")).map(|(r, ())| r),
                }
            }
        }
    }

    fn pragma_list(&mut self, s: &'a str) -> PResult<'a, Vec<&'a str>> {
        let mut list = Vec::new();
        let mut r = s;
        loop {
            let (r2, st) = string_lit(r)?;
            list.push(st);
            let (r3, comma) = opt_char(r2, ',');
            r = r3;
            if !comma {
                break;
            }
        }
        let (r, _) = expect_char(r, ';')?;
        Ok((r, list))
    }

    /// A declaration: `[.space] [.align N] [.vN] .type [.ptr..] name[<N>][dims][= init] {, name..}`.
    /// With `multi`, a comma-separated list of names is allowed (not in parameter lists).
    fn var_decl(&mut self, start: &'a str, s: &'a str, linkage: Option<Linkage>, multi: bool) -> PResult<'a, Vec<VarDecl<'a>>> {
        let mut r = ws(s);
        let mut space = None;
        let mut bank = None;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut ptr = None;
        let mut linkage = linkage;
        while let Some((r2, w)) = dot_word(r) {
            if let Some(sp) = StateSpace::from_str(w) {
                if space.is_some() {
                    return fail(r, "more than one state space");
                }
                space = Some(sp);
                r = r2;
                // `.const[2]` banked constant space.
                if sp == StateSpace::Const && r.starts_with('[') {
                    let (r3, b) = uint32(&r[1..])?;
                    let (r3, _) = expect_char(r3, ']')?;
                    bank = Some(b);
                    r = r3;
                }
            } else if w == "align" {
                let (r3, a) = uint32(r2)?;
                if a == 0 || !a.is_power_of_two() {
                    return fail(r2, "alignment must be a power of two");
                }
                align = Some(a);
                r = r3;
            } else if w == "v2" || w == "v4" || w == "v8" {
                vector = Some(w[1..].parse().unwrap_or(2));
                r = r2;
            } else if w == "ptr" {
                let mut p = PtrAttr { space: None, align: None };
                // `.ptr .global .align 8` (5.1.6.1): the attributes may be spaced apart.
                let mut r3 = ws(r2);
                loop {
                    match dot_word(r3) {
                        Some((r4, "align")) => {
                            let (r5, a) = uint32(r4)?;
                            p.align = Some(a);
                            r3 = r5;
                        }
                        Some((r4, sp)) if matches!(sp, "global" | "shared" | "const" | "local") && p.space.is_none() => {
                            p.space = Some(sp);
                            r3 = r4;
                        }
                        _ => break,
                    }
                    r3 = ws(r3);
                }
                ptr = Some(p);
                r = r3;
            } else if w == "attribute" {
                // `.attribute(.managed)` (5.4.8, PTX 4.0; `.unified(uuid1, uuid2)` since 7.0):
                // where the host may also reach the variable. On the CPU every `.global`
                // variable is host memory, so the attributes change nothing.
                let (mut r3, _) = expect_char(ws(r2), '(')?;
                loop {
                    r3 = ws(r3);
                    match dot_word(r3) {
                        Some((r4, "managed")) => r3 = r4,
                        Some((r4, "unified")) => {
                            let (r5, _) = expect_char(ws(r4), '(')?;
                            let Some(close) = r5.find(')') else { return fail(r5, "expected `)`") };
                            r3 = &r5[close + 1..];
                        }
                        _ => return fail(r3, "expected `.managed` or `.unified(...)` in `.attribute(...)`"),
                    }
                    r3 = ws(r3);
                    if let Some(r4) = r3.strip_prefix(',') {
                        r3 = r4;
                    } else {
                        break;
                    }
                }
                let (r3, _) = expect_char(r3, ')')?;
                r = r3;
            } else if let Some(t) = Type::from_str(w) {
                if ty.is_some() {
                    return fail(r, "more than one type in a declaration");
                }
                ty = Some(t);
                r = r2;
            } else if let Some(l) = match w {
                "extern" => Some(Linkage::Extern),
                "visible" => Some(Linkage::Visible),
                "weak" => Some(Linkage::Weak),
                "common" => Some(Linkage::Common),
                _ => None,
            } {
                linkage = Some(l);
                r = r2;
            } else {
                return fail(r, format!("unexpected `.{w}` in a declaration"));
            }
            r = ws(r);
        }
        let Some(space) = space else { return fail(r, "expected a state space (`.reg`, `.param`, `.shared`, ...)") };
        let Some(ty) = ty else { return fail(r, "expected a type (`.b32`, `.u64`, `.f32`, ...)") };
        let mut out = Vec::new();
        loop {
            let name_start = ws(r);
            let (r2, name) = ident(self.src, name_start).map_err(|_| nom::Err::Failure(PErr { at: name_start, msg: "expected a name".into() }))?;
            let mut r2 = r2;
            let mut range = None;
            if let Some(r3) = r2.strip_prefix('<') {
                let (r3, n) = uint32(r3)?;
                let (r3, _) = expect_char(r3, '>')?;
                range = Some(n);
                r2 = r3;
            }
            let mut dims: SmallVec<[Option<u64>; 1]> = SmallVec::new();
            loop {
                let r3 = ws(r2);
                let Some(r4) = r3.strip_prefix('[') else { break };
                let r4 = ws(r4);
                if let Some(r5) = r4.strip_prefix(']') {
                    dims.push(None);
                    r2 = r5;
                } else {
                    let (r5, e) = expr(self.src, r4)?;
                    let v = eval(&e, &|_| None).map_err(|er| nom::Err::Failure(PErr { at: r4, msg: er.msg.into() }))?;
                    let (r5, _) = expect_char(r5, ']')?;
                    dims.push(Some(v.as_u64()));
                    r2 = r5;
                }
            }
            let mut init = None;
            let (r3, eq) = opt_char(r2, '=');
            if eq {
                let (r4, i) = self.init(ws(r3), 0)?;
                // 5.4.3: with an initializer the first dimension may be omitted (`.u32
                // index[] = {0, 1, 2}`, `.s32 offset[][2] = {{-1, 0}, {0, -1}}`); it is the
                // number of elements the initializer gives that dimension.
                if dims.first() == Some(&None) {
                    let inner: u64 = dims[1..].iter().map(|d: &Option<u64>| d.unwrap_or(1)).product::<u64>().max(1);
                    let n = match &i {
                        Init::List(items, _) if items.iter().any(|x| matches!(x, Init::List(..))) => items.len() as u64,
                        Init::List(items, _) => (items.len() as u64).div_ceil(inner),
                        Init::Expr(_) => 1,
                    };
                    dims[0] = Some(n);
                }
                init = Some(i);
                r2 = r4;
            }
            out.push(VarDecl {
                linkage,
                space,
                bank,
                align,
                vector,
                ty,
                ptr: ptr.clone(),
                name,
                range,
                dims,
                init,
                span: self.src.span(if out.is_empty() { start } else { name_start }, r2),
            });
            let (r3, comma) = opt_char(r2, ',');
            if multi && comma {
                r = r3;
            } else {
                return Ok((r2, out));
            }
        }
    }

    fn init(&mut self, s: &'a str, depth: u32) -> PResult<'a, Init<'a>> {
        if depth > 64 {
            return fail(s, "initializer nested too deeply");
        }
        if let Some(r) = s.strip_prefix('{') {
            let mut items = Vec::new();
            let mut r = ws(r);
            if let Some(r2) = r.strip_prefix('}') {
                return Ok((r2, Init::List(items, self.src.span(s, r2))));
            }
            loop {
                let (r2, i) = self.init(ws(r), depth + 1)?;
                items.push(i);
                let r3 = ws(r2);
                if let Some(r4) = r3.strip_prefix(',') {
                    r = r4;
                } else if let Some(r4) = r3.strip_prefix('}') {
                    return Ok((r4, Init::List(items, self.src.span(s, r4))));
                } else {
                    return fail(r3, "expected `,` or `}` in initializer");
                }
            }
        }
        // `{ filter_mode = nearest, ... }`: the named members of a texture, sampler or
        // surface reference (5.3.x).
        if let Ok((r, _)) = ident(self.src, s) {
            let r = ws(r);
            if r.starts_with('=') && !r.starts_with("==") {
                return fail(s, "initializers of texture, sampler and surface reference members are not supported by ptxr (bind the reference from the host, docs/textures.md)");
            }
        }
        let (r, e) = expr(self.src, s).map_err(to_failure)?;
        Ok((r, Init::Expr(e)))
    }

    fn param_list(&mut self, s: &'a str) -> PResult<'a, Vec<VarDecl<'a>>> {
        let (mut r, _) = expect_char(s, '(')?;
        let mut params = Vec::new();
        let r0 = ws(r);
        if let Some(r2) = r0.strip_prefix(')') {
            return Ok((r2, params));
        }
        loop {
            let st = ws(r);
            let (r2, mut v) = self.var_decl(st, st, None, false)?;
            params.append(&mut v);
            let r3 = ws(r2);
            if let Some(r4) = r3.strip_prefix(',') {
                r = r4;
            } else if let Some(r4) = r3.strip_prefix(')') {
                return Ok((r4, params));
            } else {
                return fail(r3, "expected `,` or `)` in parameter list");
            }
        }
    }

    fn function(&mut self, start: &'a str, s: &'a str, linkage: Option<Linkage>, entry: bool) -> PResult<'a, Function<'a>> {
        let mut r = ws(s);
        let mut rets = Vec::new();
        if !entry && r.starts_with('(') {
            let (r2, p) = self.param_list(r)?;
            rets = p;
            r = ws(r2);
        }
        let (r2, name) = ident(self.src, r).map_err(|_| nom::Err::Failure(PErr { at: r, msg: "expected a function name".into() }))?;
        r = ws(r2);
        let mut params = Vec::new();
        if r.starts_with('(') {
            let (r2, p) = self.param_list(r)?;
            params = p;
            r = ws(r2);
        }
        let mut perf = Vec::new();
        while let Some((r2, w)) = dot_word(r) {
            let (r3, d) = match w {
                "maxnreg" => uint32(r2).map(|(r, v)| (r, PerfDirective::MaxNReg(v)))?,
                "minnctapersm" => uint32(r2).map(|(r, v)| (r, PerfDirective::MinNCtaPerSm(v)))?,
                "maxnctapersm" => uint32(r2).map(|(r, v)| (r, PerfDirective::MaxNCtaPerSm(v)))?,
                "maxclusterrank" => uint32(r2).map(|(r, v)| (r, PerfDirective::MaxClusterRank(v)))?,
                "explicitcluster" => (r2, PerfDirective::ExplicitCluster),
                "maxntid" | "reqntid" | "reqnctapercluster" => {
                    let mut dims = SmallVec::new();
                    let (mut r3, v) = uint32(r2)?;
                    dims.push(v);
                    while dims.len() < 3 {
                        let (r4, comma) = opt_char(r3, ',');
                        if !comma {
                            break;
                        }
                        let (r5, v) = uint32(r4)?;
                        dims.push(v);
                        r3 = r5;
                    }
                    (
                        r3,
                        match w {
                            "maxntid" => PerfDirective::MaxNTid(dims),
                            "reqntid" => PerfDirective::ReqNTid(dims),
                            _ => PerfDirective::ReqNCtaPerCluster(dims),
                        },
                    )
                }
                "noreturn" => (r2, PerfDirective::NoReturn),
                "pragma" => {
                    let (r3, l) = self.pragma_list(r2)?;
                    (r3, PerfDirective::Pragma(l))
                }
                // nvopencc 2.x/3.x wrote `.func` prototypes without the `;`: the next module
                // directive ends such a declaration.
                "visible" | "extern" | "weak" | "common" | "func" | "entry" | "global" | "const" | "tex" | "file" | "section" | "alias" if !entry => {
                    return Ok((r, Function { linkage, entry, name, rets, params, perf, body: None, span: self.src.span(start, r) }));
                }
                _ => return fail(r, format!("unexpected `.{w}` in a function header")),
            };
            perf.push(d);
            r = ws(r3);
        }
        if let Some(r2) = r.strip_prefix(';') {
            return Ok((r2, Function { linkage, entry, name, rets, params, perf, body: None, span: self.src.span(start, r2) }));
        }
        if !r.starts_with('{') {
            return fail(r, "expected `{` or `;` after the function header");
        }
        let (r2, body) = self.block_body(&r[1..], 0)?;
        Ok((r2, Function { linkage, entry, name, rets, params, perf, body: Some(body), span: self.src.span(start, r2) }))
    }

    /// Statements up to the matching `}` (`s` is just after the `{`); returns the rest after it.
    fn block_body(&mut self, s: &'a str, depth: u32) -> PResult<'a, Vec<Stmt<'a>>> {
        let base = self.scratch.len();
        let r = self.block_body_into(s, depth);
        let stmts: Vec<Stmt<'a>> = self.scratch.drain(base..).collect();
        r.map(|r| (r, stmts))
    }

    fn block_body_into(&mut self, s: &'a str, depth: u32) -> Result<&'a str, nom::Err<PErr<'a>>> {
        if depth > 64 {
            return fail(s, "blocks nested too deeply").map(|(r, ())| r);
        }
        let open = &self.src.text[self.src.off(s) - 1..];
        let mut r = ws(s);
        loop {
            if self.stop {
                return Ok(&r[r.len()..]);
            }
            if r.is_empty() {
                let (line, col, _) = super::diag::line_col(self.src.text, self.src.off(open));
                return fail(r, format!("unexpected end of file: missing `}}` to close the `{{` at {line}:{col}")).map(|(r, ())| r);
            }
            if let Some(r2) = r.strip_prefix('}') {
                return Ok(r2);
            }
            if crate::syntax::lex::is_cpp_directive(r) {
                return fail(r, CPP_DIRECTIVE).map(|(r, ())| r);
            }
            if let Some(r2) = r.strip_prefix('{') {
                let (r3, inner) = self.block_body(r2, depth + 1)?;
                self.scratch.push(Stmt::Block(inner, self.src.span(r, r3)));
                r = ws(r3);
                continue;
            }
            if let Some((after, w)) = dot_word(r) {
                if is_module_directive(w, after) {
                    // The body's `}` is missing: report it here and let the module go on.
                    let (line, col, _) = super::diag::line_col(self.src.text, self.src.off(open));
                    self.error_at(r, format!("missing `}}` to close the `{{` at {line}:{col} before `.{w}`"));
                    return Ok(r);
                }
            }
            let start = r;
            match self.statement(r) {
                Ok(r2) => r = ws(r2),
                Err(e) => {
                    // A `;` missing at a line break: go on with the next line.
                    if let nom::Err::Failure(PErr { at, msg }) = &e {
                        if msg == MISSING_SEMI && self.src.off(at) > self.src.off(start) {
                            let at = *at;
                            self.report(e);
                            r = ws(at);
                            continue;
                        }
                    }
                    self.report(e);
                    let r2 = resync(start);
                    r = ws(if r2.len() == start.len() { &r2[r2.chars().next().map_or(0, |c| c.len_utf8())..] } else { r2 });
                }
            }
        }
    }

    fn statement(&mut self, s: &'a str) -> Result<&'a str, nom::Err<PErr<'a>>> {
        // Hot path: an instruction with or without a guard, or a label.
        let b0 = s.as_bytes()[0];
        if b0 == b'@' {
            let (r, i) = self.instruction(s)?;
            self.scratch.push(Stmt::Instr(i));
            return Ok(r);
        }
        if let Some((after, w)) = dot_word(s) {
            return match w {
                "pragma" => {
                    let (r, l) = self.pragma_list(after)?;
                    self.scratch.push(Stmt::Pragma(l, self.src.span(s, r)));
                    Ok(r)
                }
                "loc" => {
                    let (r, file) = uint32(ws_line(after))?;
                    let (r, line) = uint32(ws_line(r))?;
                    let (r, col) = uint32(ws_line(r))?;
                    let r1 = ws_line(r);
                    let (r, rest) = if let Some(r2) = r1.strip_prefix(',') {
                        let end = r2.find('\n').unwrap_or(r2.len());
                        (&r2[end..], Some(r2[..end].trim()))
                    } else {
                        (r, None)
                    };
                    self.scratch.push(Stmt::Loc { file, line, col, rest, span: self.src.span(s, r) });
                    Ok(r)
                }
                _ if StateSpace::from_str(w).is_some() || matches!(w, "extern" | "visible" | "weak" | "common" | "align") => {
                    let (r, vars) = self.var_decl(s, s, None, true)?;
                    let (r, _) = expect_char(r, ';')?;
                    self.scratch.extend(vars.into_iter().map(Stmt::Var));
                    Ok(r)
                }
                _ => fail(s, format!("unexpected directive `.{w}` in a function body")).map(|(r, ())| r),
            };
        }
        // Label?
        if let Ok((r, id)) = ident(self.src, s) {
            let r2 = ws(r);
            if let Some(r3) = r2.strip_prefix(':') {
                let r4 = ws(r3);
                if let Some((r5, w)) = dot_word(r4) {
                    match w {
                        "callprototype" => return self.callprototype(s, id, r5),
                        "branchtargets" | "calltargets" => {
                            let mut targets = Vec::new();
                            let mut r6 = r5;
                            loop {
                                let (r7, t) = ident(self.src, ws(r6))?;
                                targets.push(t);
                                let (r8, comma) = opt_char(r7, ',');
                                r6 = r8;
                                if !comma {
                                    break;
                                }
                            }
                            let (r6, _) = expect_char(r6, ';')?;
                            let span = self.src.span(s, r6);
                            self.scratch.push(if w == "calltargets" {
                                Stmt::CallTargets { label: id, targets, span }
                            } else {
                                Stmt::BranchTargets { label: id, targets, span }
                            });
                            return Ok(r6);
                        }
                        _ => {}
                    }
                }
                self.scratch.push(Stmt::Label(id));
                return Ok(r3);
            }
        }
        let (r, i) = self.instruction(s)?;
        self.scratch.push(Stmt::Instr(i));
        Ok(r)
    }

    fn callprototype(&mut self, s: &'a str, label: Ident<'a>, r: &'a str) -> Result<&'a str, nom::Err<PErr<'a>>> {
        let mut r = ws(r);
        let mut rets = Vec::new();
        if r.starts_with('(') {
            let (r2, p) = self.param_list(r)?;
            rets = p;
            r = ws(r2);
        }
        let Some(r2) = r.strip_prefix('_') else { return fail(r, "expected `_` in `.callprototype`").map(|(r, ())| r) };
        r = ws(r2);
        let mut params = Vec::new();
        if r.starts_with('(') {
            let (r2, p) = self.param_list(r)?;
            params = p;
            r = ws(r2);
        }
        let mut noreturn = false;
        if let Some((r2, "noreturn")) = dot_word(r) {
            noreturn = true;
            r = r2;
        }
        let (r, _) = expect_char(r, ';')?;
        self.scratch.push(Stmt::CallPrototype { label, rets, params, noreturn, span: self.src.span(s, r) });
        Ok(r)
    }

    fn instruction(&mut self, s: &'a str) -> PResult<'a, Instr<'a>> {
        let mut r = s;
        let mut guard = None;
        if let Some(r2) = r.strip_prefix('@') {
            let r2 = ws(r2);
            let (r3, negated) = match r2.strip_prefix('!') {
                Some(r3) => (ws(r3), true),
                None => (r2, false),
            };
            let (r4, pred) = ident(self.src, r3).map_err(|_| nom::Err::Failure(PErr { at: r3, msg: "expected a predicate after `@`".into() }))?;
            guard = Some(Guard { negated, pred });
            r = ws(r4);
        }
        let b = r.as_bytes();
        let mut i = 0;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i == 0 || !b[0].is_ascii_alphabetic() {
            return fail(r, "expected an instruction");
        }
        let opcode = Ident { name: &r[..i], span: self.src.span(r, &r[i..]) };
        r = &r[i..];
        // Collected on the stack, then moved into exactly-sized vectors (one allocation each).
        let mut mods: SmallVec<[&'a str; 8]> = SmallVec::new();
        while let Some((r2, m)) = dot_word(r) {
            mods.push(m);
            r = r2;
        }
        let mods = mods.into_vec();
        let mut operands: SmallVec<[Operand<'a>; 5]> = SmallVec::new();
        let mut rr = ws(r);
        if let Some(r2) = rr.strip_prefix(';') {
            return Ok((r2, Instr { guard, opcode, mods, operands: Vec::new(), span: self.src.span(s, r2) }));
        }
        if rr.is_empty() || rr.starts_with('}') {
            // `ret` at the end of a block without its `;`.
            return fail(r, MISSING_SEMI);
        }
        if !rr.is_empty() && r.len() == rr.len() && !rr.starts_with(['(', '{', '[']) {
            return fail(rr, "expected a modifier, operand or `;`");
        }
        let is_call = opcode.name == "call";
        loop {
            let (r2, op) = self.operand(rr, is_call)?;
            operands.push(op);
            let r3 = ws(r2);
            if let Some(r4) = r3.strip_prefix(',') {
                rr = ws(r4);
            } else if let Some(r4) = r3.strip_prefix(';') {
                return Ok((r4, Instr { guard, opcode, mods, operands: operands.into_vec(), span: self.src.span(s, r4) }));
            } else if r2[..r2.len() - r3.len()].contains('\n') {
                return fail(r2, MISSING_SEMI);
            } else {
                return fail(r3, "expected `,` or `;` after an operand");
            }
        }
    }

    fn operand(&mut self, s: &'a str, in_call: bool) -> PResult<'a, Operand<'a>> {
        if self.op_depth >= MAX_OPERAND_DEPTH {
            return fail(s, "operand nested too deeply");
        }
        self.op_depth += 1;
        let r = self.operand_inner(s, in_call);
        self.op_depth -= 1;
        r
    }

    fn operand_inner(&mut self, s: &'a str, in_call: bool) -> PResult<'a, Operand<'a>> {
        let s = ws(s);
        let first = *s.as_bytes().first().unwrap_or(&0);
        match first {
            b'{' => {
                let (r, items) = self.operand_seq(&s[1..], '}')?;
                Ok((r, Operand::Vector(items, self.src.span(s, r))))
            }
            b'(' if in_call => {
                let (r, items) = self.operand_seq(&s[1..], ')')?;
                Ok((r, Operand::List(items, self.src.span(s, r))))
            }
            b'[' => self.bracket(s),
            // `!%p` negates a predicate; `!0`, `!(..)` are constant expressions (4.6.1).
            b'!' if !ws(&s[1..]).starts_with(|c: char| c.is_ascii_digit() || c == '(' || c == '!' || c == '-' || c == '~') => {
                let r = ws(&s[1..]);
                let (r, id) = ident(self.src, r).map_err(to_failure)?;
                Ok((r, Operand::Not(id)))
            }
            _ => {
                if first == b'_' && !s.as_bytes().get(1).map_or(false, |c| is_follow(*c)) {
                    let sink = Operand::Sink(self.src.span(s, &s[1..]));
                    let r2 = ws(&s[1..]);
                    if r2.starts_with('|') && !r2.starts_with("||") {
                        // `_|p`: a sink destination paired with a predicate.
                        let (r3, q) = self.operand(&r2[1..], false)?;
                        return Ok((r3, Operand::Pair(Box::new(sink), Box::new(q))));
                    }
                    return Ok((&s[1..], sink));
                }
                if first.is_ascii_alphabetic() || first == b'_' || first == b'$' || first == b'%' {
                    let (r, id) = ident(self.src, s)?;
                    let mut r = r;
                    let mut comp = None;
                    // `%tid.x`, `%r1.x`: vector components (5.4.2, 10).
                    let bb = r.as_bytes();
                    if bb.len() >= 2 && bb[0] == b'.' && matches!(bb[1], b'x' | b'y' | b'z' | b'w' | b'r' | b'g' | b'b' | b'a') && !bb.get(2).map_or(false, |c| is_follow(*c)) {
                        comp = Some(bb[1] as char);
                        r = &r[2..];
                    }
                    // Video instruction selectors (9.7.15, 9.7.16): `%r1.b0`..`.b3`, `.h0`,
                    // `.h1`, SIMD `.h10`/`.b3210`-style lane selections and masks.
                    if comp.is_none() && bb.len() >= 3 && bb[0] == b'.' && matches!(bb[1], b'b' | b'h') && bb[2].is_ascii_digit() {
                        let n = 2 + bb[2..].iter().take_while(|c| c.is_ascii_digit()).count();
                        if !bb.get(n).map_or(false, |c| is_follow(*c)) {
                            let sel = &r[1..n];
                            let rest = &r[n..];
                            return Ok((rest, Operand::Sel(Box::new(Operand::Name(id, None)), sel, self.src.span(s, rest))));
                        }
                    }
                    let r2 = ws(r);
                    if r2.starts_with('|') && !r2.starts_with("||") {
                        let (r3, q) = self.operand(&r2[1..], false)?;
                        return Ok((r3, Operand::Pair(Box::new(Operand::Name(id, comp)), Box::new(q))));
                    }
                    if r2.starts_with('[') {
                        let (r3, idx) = self.operand(&r2[1..], false)?;
                        let (r3, _) = expect_char(r3, ']')?;
                        return Ok((r3, Operand::Index(id, Box::new(idx), self.src.span(s, r3))));
                    }
                    if comp.is_none() && is_expr_continuation(r2, in_call) {
                        // `var+4`, `WARP_SZ*2`: a constant expression starting with a symbol.
                        let (r3, e) = expr(self.src, s).map_err(to_failure)?;
                        return Ok((r3, Operand::Imm(e)));
                    }
                    return Ok((r, Operand::Name(id, comp)));
                }
                let (r, e) = expr(self.src, s).map_err(|e| match e {
                    nom::Err::Error(p) => nom::Err::Failure(PErr { at: p.at, msg: "expected an operand".into() }),
                    e => e,
                })?;
                // `d|p` also with a sink destination is handled above; an immediate never pairs.
                Ok((r, Operand::Imm(e)))
            }
        }
    }

    fn operand_seq(&mut self, s: &'a str, close: char) -> PResult<'a, Vec<Operand<'a>>> {
        let mut items = Vec::new();
        let mut r = ws(s);
        if let Some(r2) = r.strip_prefix(close) {
            return Ok((r2, items));
        }
        loop {
            let (r2, op) = self.operand(r, false)?;
            items.push(op);
            let r3 = ws(r2);
            if let Some(r4) = r3.strip_prefix(',') {
                r = r4;
            } else if let Some(r4) = r3.strip_prefix(close) {
                return Ok((r4, items));
            } else {
                return fail(r3, format!("expected `,` or `{close}`"));
            }
        }
    }

    /// `[...]`: an address `[base]`, `[base+off]`, `[imm]`, or an operand list `[a, b, ...]`.
    fn bracket(&mut self, s: &'a str) -> PResult<'a, Operand<'a>> {
        let inner = ws(&s[1..]);
        if let Ok((r, base)) = ident(self.src, inner) {
            let r1 = ws(r);
            if let Some(r2) = r1.strip_prefix(']') {
                return Ok((r2, Operand::Mem(Address { base: Some(base), offset: 0, span: self.src.span(s, r2) })));
            }
            if r1.starts_with('+') || r1.starts_with('-') {
                let neg = r1.starts_with('-');
                let (r2, e) = expr(self.src, ws(&r1[1..])).map_err(to_failure)?;
                let v = eval(&e, &|_| None).map_err(|er| nom::Err::Failure(PErr { at: r1, msg: er.msg.into() }))?;
                if !v.is_int() {
                    return fail(r1, "address offset must be an integer");
                }
                let off = v.as_u64() as i64;
                let (r3, _) = expect_char(r2, ']')?;
                return Ok((r3, Operand::Mem(Address { base: Some(base), offset: if neg { off.wrapping_neg() } else { off }, span: self.src.span(s, r3) })));
            }
        }
        // Absolute address `[imm]`?
        if inner.as_bytes().first().map_or(false, |c| c.is_ascii_digit()) {
            if let Ok((r, e)) = expr(self.src, inner) {
                let r1 = ws(r);
                if let Some(r2) = r1.strip_prefix(']') {
                    let v = eval(&e, &|_| None).map_err(|er| nom::Err::Failure(PErr { at: inner, msg: er.msg.into() }))?;
                    return Ok((r2, Operand::Mem(Address { base: None, offset: v.as_u64() as i64, span: self.src.span(s, r2) })));
                }
            }
        }
        let (r, items) = self.operand_seq(&s[1..], ']')?;
        Ok((r, Operand::MemList(items, self.src.span(s, r))))
    }
}

/// Whether `r`, just after a name in operand position, continues a constant expression:
/// a binary operator other than `|` (which pairs `d|p`) or `?`. In a `call`, `-` is not taken.
fn is_expr_continuation(r: &str, in_call: bool) -> bool {
    match r.as_bytes().first() {
        Some(b'+') => true,
        Some(b'-') => !in_call,
        Some(b'?') => true,
        Some(b'|') => r.starts_with("||"),
        Some(b'*' | b'/' | b'%' | b'<' | b'>' | b'=' | b'!' | b'&' | b'^') => peek_binop_len(r).is_some(),
        _ => false,
    }
}

fn to_failure(e: nom::Err<PErr<'_>>) -> nom::Err<PErr<'_>> {
    match e {
        nom::Err::Error(p) => nom::Err::Failure(p),
        e => e,
    }
}

/// The message for a C preprocessor directive left in the text.
const CPP_DIRECTIVE: &str = "C preprocessor directive: run this PTX through the C preprocessor first (`cpp -P`, PTX ISA 4.2); ptxr reads preprocessed PTX";

/// Module-scoped `.reg` and `.local` variables (legacy PTX before 3.0, compiled without the
/// ABI; PTX ISA 5.1.1, 5.1.5, 11.1 "the compiler silently disables use of the ABI") are
/// per-thread state that every kernel of the module may use. A thread runs one kernel, so
/// they are moved into each kernel's body, where they are that kernel's own registers and
/// local variables. A `.func` that names one gets an "undeclared" error rather than a copy
/// of its own: without the ABI the value would pass between caller and callee, which
/// separate copies would not do.
fn scope_module_registers(m: &mut Module<'_>) {
    let is_thread_var = |i: &Item| matches!(i, Item::Var(v) if matches!(v.space, StateSpace::Reg | StateSpace::Local));
    if !m.items.iter().any(is_thread_var) {
        return;
    }
    let vars: Vec<VarDecl> = m.items.iter().filter_map(|i| match i {
        Item::Var(v) if matches!(v.space, StateSpace::Reg | StateSpace::Local) => Some(v.clone()),
        _ => None,
    }).collect();
    m.items.retain(|i| !is_thread_var(i));
    for item in &mut m.items {
        if let Item::Func(f) = item {
            if let (true, Some(body)) = (f.entry, f.body.as_mut()) {
                body.splice(0..0, vars.iter().cloned().map(Stmt::Var));
            }
        }
    }
}

/// PTX ISA 1.0 through 1.3 declare a kernel's parameters in its body (11.2.1 `.entry`: "For
/// PTX ISA versions 1.0 through 1.3, parameter variables are declared in the kernel body"):
/// the `.param` variables at the top level of an `.entry` body become its parameters, in
/// the order written.
fn body_params_to_kernel_params(m: &mut Module<'_>) {
    for item in &mut m.items {
        let Item::Func(f) = item else { continue };
        if !f.entry || !f.params.is_empty() {
            continue;
        }
        let Some(body) = f.body.as_mut() else { continue };
        let mut params = Vec::new();
        body.retain(|st| match st {
            Stmt::Var(v) if v.space == StateSpace::Param => {
                params.push(v.clone());
                false
            }
            _ => true,
        });
        f.params = params;
    }
}
