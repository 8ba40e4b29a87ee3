//! Inlining of the `.func`s that synchronize into the kernels that call them (PTX ISA 9.7.11.5
//! call, 9.7.11.6 ret). A function that meets other threads (a barrier, a warp collective,
//! a spin loop: `lanes::sync_funcs`) cannot run as a call of its own on ptxr's CPU code:
//! the warp path runs every lane of a warp through one dispatch over the kernel's blocks, and
//! the per-thread scheduler returns to the kernel's loop at every meeting. So each such call
//! in a kernel is replaced by the callee's body, in a nested `{ }` block (PTX ISA 9.7.11.1:
//! its registers, variables and labels are its own; `labels::unique_labels` renames labels
//! that another block also declares):
//!
//! - a `.reg` parameter becomes a register of the block, set from the argument by `mov`; a
//!   `.reg` return value one read back by `mov` after the body;
//! - a `.param` parameter or return value passed as a `.param` variable of the caller (a call
//!   sequence) is that variable: the body's references are renamed to it; one passed as a
//!   register or immediate becomes a `.param` variable of the block, written by `st.param`
//!   before the body (read by `ld.param` after it, for a return value);
//! - `ret` becomes a branch to the end of the body.
//!
//! A call stays a call (and the kernel runs per thread, where code generation inlines it)
//! where this could change what a name means: the body declares a variable of a name it
//! must rename to or from, or reads a module-scope name that the kernel also declares, or
//! the call is guarded, recursive, or passes an array `.param` as a register. Inlined
//! instructions keep their spans, so diagnostics point into the callee; the instructions
//! added (`mov`, `st.param`, `ld.param`, the branch and label) carry the call's.
//!
//! Under `--exec thread` (the reference path) `check_source` leaves the calls to code
//! generation, which inlines them on its own as it emits the kernel (`FnEmitter::inline_call`),
//! so that comparing the two paths (`tests/exec_paths.rs`) checks this pass too.

use super::ast::{Address, Expr, Guard, Ident, Instr, Item, Module, Operand, Span, StateSpace, Stmt, VarDecl};
use std::collections::{HashMap, HashSet};

/// Inlines every call of a kernel to a `.func` that synchronizes, transitively.
pub fn inline_sync_calls(m: &mut Module<'_>) {
    let sync = crate::lanes::sync_funcs(m);
    if sync.is_empty() {
        return;
    }
    let defs: HashMap<&str, super::ast::Function<'_>> = m
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Func(f) if !f.entry && f.body.is_some() && sync.contains(f.name.name) => Some((f.name.name, (**f).clone())),
            _ => None,
        })
        .collect();
    let mut n = 0u32;
    for item in &mut m.items {
        let Item::Func(f) = item else { continue };
        if !f.entry {
            continue;
        }
        let Some(body) = f.body.as_mut() else { continue };
        let mut calls = Vec::new();
        crate::lanes::callees(body, &mut calls);
        if !calls.iter().any(|c| defs.contains_key(c)) {
            continue;
        }
        // The kernel's own names: its parameters and every variable its body declares.
        let mut caller = Declared::default();
        for p in &f.params {
            caller.add(p);
        }
        caller.scan(body);
        let taken = std::mem::take(body);
        *body = inline_in(taken, &defs, &caller, &mut Vec::new(), &mut n);
    }
}

/// Names declared by variable declarations (`%r<10>` declares `%r0` .. `%r9`) and labels.
#[derive(Clone, Default)]
struct Declared<'a> {
    names: HashSet<&'a str>,
    ranges: Vec<(&'a str, u32)>,
    /// The `.param` variables among them.
    params: HashSet<&'a str>,
}

impl<'a> Declared<'a> {
    fn add(&mut self, d: &VarDecl<'a>) {
        match d.range {
            Some(k) => self.ranges.push((d.name.name, k)),
            None => {
                self.names.insert(d.name.name);
                if d.space == StateSpace::Param {
                    self.params.insert(d.name.name);
                }
            }
        }
    }

    fn scan(&mut self, body: &[Stmt<'a>]) {
        for s in body {
            match s {
                Stmt::Var(d) => self.add(d),
                Stmt::Label(l) => {
                    self.names.insert(l.name);
                }
                Stmt::Block(b, _) => self.scan(b),
                _ => {}
            }
        }
    }

    fn has(&self, n: &str) -> bool {
        let index = |d: &str| (!d.is_empty() && d.bytes().all(|c| c.is_ascii_digit())).then(|| d.parse::<u32>().ok()).flatten();
        self.names.contains(n) || self.ranges.iter().any(|(p, k)| n.strip_prefix(p).and_then(index).is_some_and(|i| i < *k))
    }
}

fn inline_in<'a>(body: Vec<Stmt<'a>>, defs: &HashMap<&str, super::ast::Function<'a>>, caller: &Declared<'a>, stack: &mut Vec<&'a str>, n: &mut u32) -> Vec<Stmt<'a>> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::Block(b, sp) => out.push(Stmt::Block(inline_in(b, defs, caller, stack, n), sp)),
            Stmt::Instr(i) => {
                let def = crate::lanes::callee(&i).and_then(|c| defs.get(c)).filter(|d| !stack.contains(&d.name.name));
                match def.and_then(|d| expand(&i, d, caller, n).map(|b| (d.name.name, b))) {
                    Some((name, block)) => {
                        // Calls in the inlined body are calls of the block's code: its
                        // variables (a call sequence's `.param`s) are the caller's too.
                        let mut inner = caller.clone();
                        inner.scan(&block);
                        stack.push(name);
                        let block = inline_in(block, defs, &inner, stack, n);
                        stack.pop();
                        out.push(Stmt::Block(block, i.span));
                    }
                    None => out.push(Stmt::Instr(i)),
                }
            }
            s => out.push(s),
        }
    }
    out
}

fn leak(s: String) -> &'static str {
    // A few short names per inlined call, for the life of the process (as `vregs` does).
    Box::leak(s.into_boxed_str())
}

fn instr<'a>(op: &'a str, mods: Vec<&'a str>, operands: Vec<Operand<'a>>, span: Span) -> Stmt<'a> {
    Stmt::Instr(Instr { guard: None, opcode: Ident { name: op, span }, mods, operands, span })
}

fn name<'a>(n: &'a str, span: Span) -> Operand<'a> {
    Operand::Name(Ident { name: n, span }, None)
}

fn at<'a>(n: &'a str, span: Span) -> Operand<'a> {
    Operand::Mem(Address { base: Some(Ident { name: n, span }), offset: 0, span })
}

/// The block that replaces call `i` of `def`, or `None` where the call stays (module docs).
fn expand<'a>(i: &Instr<'a>, def: &super::ast::Function<'a>, caller: &Declared<'a>, n: &mut u32) -> Option<Vec<Stmt<'a>>> {
    if i.guard.is_some() {
        return None;
    }
    let ops = &i.operands;
    let (rets, rest): (&[Operand<'a>], &[Operand<'a>]) = match ops.first() {
        Some(Operand::List(r, _)) => (r.as_slice(), &ops[1..]),
        _ => (&[], &ops[..]),
    };
    let args: &[Operand<'a>] = match rest.get(1) {
        Some(Operand::List(a, _)) => a.as_slice(),
        _ => &[],
    };
    if rets.len() != def.rets.len() || args.len() != def.params.len() || rest.len() > 2 {
        return None; // a mismatch code generation reports; a prototype: an indirect call
    }
    let body = def.body.as_ref()?;
    let mut own = Declared::default();
    own.scan(body);
    *n += 1;
    let k = *n;
    let sp = i.span;
    let mut renames: HashMap<&'a str, &'a str> = HashMap::new();
    let (mut pre, mut post) = (Vec::new(), Vec::new());
    for (decl, op, is_ret) in def.params.iter().zip(args).map(|(d, o)| (d, o, false)).chain(def.rets.iter().zip(rets).map(|(d, o)| (d, o, true))) {
        if own.has(decl.name.name) {
            return None; // the body redeclares the parameter's name in a nested block
        }
        let ty = decl.ty.as_str();
        match (decl.space, op) {
            (StateSpace::Param, Operand::Name(v, None)) if caller.params.contains(v.name) && !own.has(v.name) => {
                renames.insert(decl.name.name, v.name);
            }
            (StateSpace::Param, Operand::Name(v, None)) if caller.params.contains(v.name) => {
                // The body declares a variable of the caller's name: a `.param` of the block,
                // copied through a register.
                if !decl.dims.is_empty() || decl.vector.is_some() {
                    return None;
                }
                let fresh = leak(format!("{}$inl{k}", decl.name.name));
                let tmp = leak(format!("%ptxr_inl{k}_{}", decl.name.name.trim_start_matches('%')));
                renames.insert(decl.name.name, fresh);
                let mut d = decl.clone();
                d.name = Ident { name: fresh, span: sp };
                d.span = sp;
                d.align = None;
                pre.push(Stmt::Var(d.clone()));
                d.space = StateSpace::Reg;
                d.ptr = None;
                d.init = None;
                d.name = Ident { name: tmp, span: sp };
                pre.push(Stmt::Var(d));
                let (load, store) = if is_ret { (fresh, v.name) } else { (v.name, fresh) };
                let copy = [instr("ld", vec!["param", ty], vec![name(tmp, sp), at(load, sp)], sp), instr("st", vec!["param", ty], vec![at(store, sp), name(tmp, sp)], sp)];
                if is_ret { post.extend(copy) } else { pre.extend(copy) }
            }
            (StateSpace::Param, _) if !decl.dims.is_empty() => return None,
            (StateSpace::Reg | StateSpace::Param, _) => {
                let fresh = leak(format!("{}$inl{k}", decl.name.name));
                renames.insert(decl.name.name, fresh);
                let mut d = decl.clone();
                d.name = Ident { name: fresh, span: sp };
                d.span = sp;
                pre.push(Stmt::Var(d));
                let param = decl.space == StateSpace::Param;
                let copy = match (param, is_ret) {
                    (false, false) => instr("mov", vec![ty], vec![name(fresh, sp), op.clone()], sp),
                    (false, true) => instr("mov", vec![ty], vec![op.clone(), name(fresh, sp)], sp),
                    (true, false) => instr("st", vec!["param", ty], vec![at(fresh, sp), op.clone()], sp),
                    (true, true) => instr("ld", vec!["param", ty], vec![op.clone(), at(fresh, sp)], sp),
                };
                if is_ret { post.push(copy) } else { pre.push(copy) }
            }
            _ => return None,
        }
    }
    // Names the body reads from module scope must mean the same in the kernel.
    let mut inner = body.clone();
    let mut free = false;
    idents(&mut inner, &mut |i| free |= !own.has(i.name) && !def.params.iter().chain(&def.rets).any(|d| d.name.name == i.name) && caller.has(i.name));
    if free {
        return None;
    }
    idents(&mut inner, &mut |i| {
        if let Some(n) = renames.get(i.name) {
            i.name = n;
        }
    });
    let end = leak(format!("$ptxr_ret{k}"));
    returns_to(&mut inner, end);
    let mut block = pre;
    block.push(Stmt::Block(inner, sp));
    block.push(Stmt::Label(Ident { name: end, span: sp }));
    block.extend(post);
    Some(block)
}

/// Calls `f` on every identifier the statements' instructions mention (guards, registers,
/// variables, labels, functions, symbols in constant expressions).
fn idents<'a>(body: &mut [Stmt<'a>], f: &mut impl FnMut(&mut Ident<'a>)) {
    fn expr<'a>(e: &mut Expr<'a>, f: &mut impl FnMut(&mut Ident<'a>)) {
        match e {
            Expr::Sym(i) | Expr::Generic(i, _) => f(i),
            Expr::Unary(_, a, _) => expr(a, f),
            Expr::Binary(_, a, b, _) => {
                expr(a, f);
                expr(b, f);
            }
            Expr::Cond(a, b, c, _) => {
                expr(a, f);
                expr(b, f);
                expr(c, f);
            }
            Expr::Int { .. } | Expr::F64 { .. } | Expr::F32 { .. } => {}
        }
    }
    fn op<'a>(o: &mut Operand<'a>, f: &mut impl FnMut(&mut Ident<'a>)) {
        match o {
            Operand::Name(i, _) | Operand::Not(i) => f(i),
            Operand::Imm(e) => expr(e, f),
            Operand::Mem(a) => {
                if let Some(b) = a.base.as_mut() {
                    f(b);
                }
            }
            Operand::MemList(v, _) | Operand::Vector(v, _) | Operand::List(v, _) => v.iter_mut().for_each(|x| op(x, f)),
            Operand::Index(i, x, _) => {
                f(i);
                op(x, f);
            }
            Operand::Pair(a, b) => {
                op(a, f);
                op(b, f);
            }
            Operand::Sel(x, _, _) => op(x, f),
            Operand::Sink(_) => {}
        }
    }
    for s in body.iter_mut() {
        match s {
            Stmt::Instr(i) => {
                if let Some(Guard { pred, .. }) = i.guard.as_mut() {
                    f(pred);
                }
                i.operands.iter_mut().for_each(|o| op(o, f));
            }
            Stmt::Block(b, _) => idents(b, f),
            _ => {}
        }
    }
}

/// Turns every `ret` of `body` into a branch to `end` (PTX ISA 9.7.11.6 ret: back to the
/// caller; a guarded `ret` keeps its guard).
fn returns_to<'a>(body: &mut [Stmt<'a>], end: &'a str) {
    for s in body.iter_mut() {
        match s {
            Stmt::Instr(i) if i.opcode.name == "ret" => {
                i.opcode.name = "bra";
                i.operands = vec![name(end, i.span)];
            }
            Stmt::Block(b, _) => returns_to(b, end),
            _ => {}
        }
    }
}
