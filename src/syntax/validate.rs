//! Validation after parsing: instruction forms against the ISA table (chapter 9), declared
//! registers, variables, labels and functions, guard predicates, state spaces of
//! declarations, and the operand type rules of section 9.4 for register operands.

use super::ast::*;
use super::diag::Diagnostic;
use super::isa;
use std::collections::HashMap;

/// Names of the special registers of chapter 10 (without vector components).
pub const SPECIAL_REGS: &[&str] = &[
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%gridid",
    "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock", "%clock_hi",
    "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%total_smem_size",
    "%dynamic_smem_size", "%warpsize", "%aggr_smem_size", "%reserved_smem_offset_begin",
    "%reserved_smem_offset_end", "%reserved_smem_offset_cap", "%reserved_smem_offset_0",
    "%reserved_smem_offset_1", "%is_explicit_cluster", "%clusterid", "%nclusterid", "%cluster_ctaid",
    "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank",
];

pub fn is_special_reg(name: &str) -> bool {
    if SPECIAL_REGS.contains(&name) {
        return true;
    }
    let num = |p: &str, max: u32| name.strip_prefix(p).and_then(|d| d.parse::<u32>().ok()).map_or(false, |n| n < max);
    num("%pm", 8) || name.strip_prefix("%pm").and_then(|r| r.strip_suffix("_64")).and_then(|d| d.parse::<u32>().ok()).map_or(false, |n| n < 8) || num("%envreg", 32)
}

/// What a name in a function refers to.
#[derive(Clone, Copy, Debug)]
pub enum Sym {
    Reg(Type),
    Var(StateSpace, Type),
    Label,
    Func,
    Proto,
}

struct Scope<'a> {
    names: HashMap<&'a str, Sym>,
    /// `%r<N>` parameterized declarations: prefix → (count, type).
    ranges: Vec<(&'a str, u32, Type)>,
}

impl<'a> Scope<'a> {
    fn lookup(&self, name: &str) -> Option<Sym> {
        if let Some(s) = self.names.get(name) {
            return Some(*s);
        }
        for (prefix, n, ty) in &self.ranges {
            if let Some(d) = name.strip_prefix(prefix) {
                if !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) && (d == "0" || !d.starts_with('0')) {
                    if d.parse::<u64>().map_or(false, |v| v < *n as u64) {
                        return Some(Sym::Reg(*ty));
                    }
                }
            }
        }
        None
    }
}

/// Validates a parsed module; returns every error found.
pub fn validate(m: &Module) -> Vec<Diagnostic> {
    let mut errs = Vec::new();
    if m.version.0 < 1 || m.version.0 > 8 {
        errs.push(Diagnostic::error(Span::new(0, 0), format!("unsupported PTX version {}.{} (ptxr reads 1.0 to 8.x)", m.version.0, m.version.1)));
    }
    let mut globals: HashMap<&str, Sym> = HashMap::new();
    for item in &m.items {
        match item {
            Item::Var(v) => {
                if v.space == StateSpace::Local && v.init.is_some() || v.space == StateSpace::Shared && v.init.is_some() {
                    errs.push(Diagnostic::error(v.span, format!("`.{}` variables cannot be initialized (PTX ISA 5.1)", v.space.as_str())));
                }
                if v.space == StateSpace::Param {
                    errs.push(Diagnostic::error(v.span, "`.param` variables are not allowed at module scope"));
                }
                globals.insert(v.name.name, Sym::Var(v.space, v.ty));
            }
            Item::Func(f) => {
                globals.insert(f.name.name, Sym::Func);
            }
            Item::Alias { alias, aliasee, .. } => {
                if !globals.contains_key(aliasee.name) {
                    errs.push(Diagnostic::error(aliasee.span, format!("`.alias` target `{}` is not a function declared before it", aliasee.name)));
                }
                globals.insert(alias.name, Sym::Func);
            }
            _ => {}
        }
    }
    for item in &m.items {
        if let Item::Func(f) = item {
            if let Some(body) = &f.body {
                let mut scope = Scope { names: globals.clone(), ranges: Vec::new() };
                for p in f.params.iter().chain(f.rets.iter()) {
                    declare(&mut scope, p);
                }
                collect_labels(body, &mut scope);
                let mut v = FnValidator { errs: &mut errs };
                v.stmts(body, &mut scope);
            }
        }
    }
    errs
}

fn declare<'a>(scope: &mut Scope<'a>, v: &VarDecl<'a>) {
    let sym = if v.space == StateSpace::Reg { Sym::Reg(v.ty) } else { Sym::Var(v.space, v.ty) };
    match v.range {
        Some(n) => scope.ranges.push((v.name.name, n, v.ty)),
        None => {
            scope.names.insert(v.name.name, sym);
        }
    }
}

fn collect_labels<'a>(body: &[Stmt<'a>], scope: &mut Scope<'a>) {
    for s in body {
        match s {
            Stmt::Label(l) => {
                scope.names.insert(l.name, Sym::Label);
            }
            Stmt::Block(b, _) => collect_labels(b, scope),
            Stmt::CallPrototype { label, .. } => {
                scope.names.insert(label.name, Sym::Proto);
            }
            Stmt::BranchTargets { label, .. } | Stmt::CallTargets { label, .. } => {
                scope.names.insert(label.name, Sym::Label);
            }
            _ => {}
        }
    }
}

struct FnValidator<'e> {
    errs: &'e mut Vec<Diagnostic>,
}

impl<'e> FnValidator<'e> {
    fn stmts<'a>(&mut self, body: &[Stmt<'a>], scope: &mut Scope<'a>) {
        // Declarations are visible to the whole block they appear in (PTX declares before use
        // in practice, but ptxas accepts uses that precede a declaration in the same scope).
        let saved_names = scope.names.clone();
        let saved_ranges = scope.ranges.len();
        for s in body {
            if let Stmt::Var(v) = s {
                declare(scope, v);
            }
        }
        for s in body {
            match s {
                Stmt::Var(v) => {
                    if matches!(v.space, StateSpace::Reg) && v.init.is_some() {
                        self.errs.push(Diagnostic::error(v.span, "registers cannot be initialized"));
                    }
                }
                Stmt::Instr(i) => self.instr(i, scope),
                Stmt::Block(b, _) => self.stmts(b, scope),
                Stmt::BranchTargets { targets, .. } => {
                    for t in targets {
                        if !matches!(scope.lookup(t.name), Some(Sym::Label)) {
                            self.errs.push(Diagnostic::error(t.span, format!("undeclared label `{}`", t.name)));
                        }
                    }
                }
                Stmt::CallTargets { targets, .. } => {
                    for t in targets {
                        if !matches!(scope.lookup(t.name), Some(Sym::Func)) {
                            self.errs.push(Diagnostic::error(t.span, format!("undeclared function `{}`", t.name)));
                        }
                    }
                }
                _ => {}
            }
        }
        scope.names = saved_names;
        scope.ranges.truncate(saved_ranges);
    }

    fn instr<'a>(&mut self, i: &Instr<'a>, scope: &Scope<'a>) {
        if let Some(g) = &i.guard {
            match scope.lookup(g.pred.name) {
                Some(Sym::Reg(Type::Pred)) => {}
                Some(_) => self.errs.push(Diagnostic::error(g.pred.span, format!("guard `{}` is not a predicate register", g.pred.name))),
                None => self.errs.push(Diagnostic::error(g.pred.span, format!("undeclared predicate `{}`", g.pred.name))),
            }
        }
        if let Err(e) = isa::check(i.opcode.name, &i.mods, i.operands.len()) {
            let span = match &e {
                isa::ModError::UnknownOpcode => i.opcode.span,
                _ => i.opcode.span.to(i.span).to(i.opcode.span),
            };
            let span = Span { start: span.start, end: i.opcode.span.end + i.mods.iter().map(|m| m.len() as u32 + 1).sum::<u32>() };
            let msg = match &e {
                isa::ModError::UnknownOpcode => format!("unknown instruction `{}`", i.opcode.name),
                e => e.to_string(),
            };
            self.errs.push(Diagnostic::error(span, msg));
            return;
        }
        for op in &i.operands {
            self.operand(op, scope, i);
        }
    }

    fn name<'a>(&mut self, id: &Ident<'a>, scope: &Scope<'a>, i: &Instr<'a>) {
        if is_special_reg(id.name) || id.name == "WARP_SZ" {
            return;
        }
        if scope.lookup(id.name).is_none() {
            let what = if matches!(i.opcode.name, "bra" | "brx") { "label" } else if i.opcode.name == "call" { "function or register" } else { "register or variable" };
            self.errs.push(Diagnostic::error(id.span, format!("undeclared {what} `{}`", id.name)));
        }
    }

    fn operand<'a>(&mut self, op: &Operand<'a>, scope: &Scope<'a>, i: &Instr<'a>) {
        match op {
            Operand::Name(id, _) | Operand::Not(id) => self.name(id, scope, i),
            Operand::Mem(a) => {
                if let Some(b) = &a.base {
                    self.name(b, scope, i);
                }
            }
            Operand::Index(id, idx, _) => {
                self.name(id, scope, i);
                self.operand(idx, scope, i);
            }
            Operand::MemList(items, _) | Operand::Vector(items, _) | Operand::List(items, _) => {
                for it in items {
                    self.operand(it, scope, i);
                }
            }
            Operand::Pair(a, b) => {
                self.operand(a, scope, i);
                self.operand(b, scope, i);
            }
            Operand::Imm(e) => self.expr_syms(e, scope, i),
            Operand::Sink(_) => {}
        }
    }

    fn expr_syms<'a>(&mut self, e: &Expr<'a>, scope: &Scope<'a>, i: &Instr<'a>) {
        match e {
            Expr::Sym(id) | Expr::Generic(id, _) => self.name(id, scope, i),
            Expr::Unary(_, a, _) => self.expr_syms(a, scope, i),
            Expr::Binary(_, a, b, _) => {
                self.expr_syms(a, scope, i);
                self.expr_syms(b, scope, i);
            }
            Expr::Cond(a, b, c, _) => {
                self.expr_syms(a, scope, i);
                self.expr_syms(b, scope, i);
                self.expr_syms(c, scope, i);
            }
            _ => {}
        }
    }
}
