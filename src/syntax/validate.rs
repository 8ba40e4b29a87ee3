//! Validation after parsing: instruction forms against the ISA table (chapter 9), declared
//! registers, variables, labels and functions, guard predicates, state spaces of
//! declarations, and the operand type rules of section 9.4 for register operands.

use super::ast::*;
use super::diag::Diagnostic;
use super::isa;
use smallvec::SmallVec;
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
    /// A vector register (`.reg .v4 .f32 v`).
    VecReg,
    Var(StateSpace, Type),
    Label,
    Func,
    Proto,
}

/// Names visible in a function: the module's globals, then the function's own declarations.
/// Nested blocks record what they shadow in `undo` and restore it when they end, so nothing
/// is cloned per block or per function (which was quadratic in the number of globals).
struct Scope<'a, 'g> {
    globals: &'g HashMap<&'a str, Sym>,
    names: HashMap<&'a str, Sym>,
    undo: Vec<(&'a str, Option<Sym>)>,
    /// `%r<N>` parameterized declarations: prefix → (count, type), innermost last, and the
    /// order they were declared in (for block exit).
    ranges: HashMap<&'a str, Vec<(u32, Type)>>,
    range_log: Vec<&'a str>,
}

impl<'a, 'g> Scope<'a, 'g> {
    fn insert(&mut self, name: &'a str, sym: Sym) {
        let old = self.names.insert(name, sym);
        self.undo.push((name, old));
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        if let Some(s) = self.names.get(name) {
            return Some(*s);
        }
        if !self.ranges.is_empty() {
            // `%r12` may be `%r` + 12 or `%r1` + 2 ...: try every split of the trailing digits.
            let b = name.as_bytes();
            let mut k = b.len();
            while k > 0 && b[k - 1].is_ascii_digit() {
                k -= 1;
            }
            for split in k..b.len() {
                let (prefix, d) = name.split_at(split);
                if d != "0" && d.starts_with('0') {
                    continue;
                }
                if let Some((n, ty)) = self.ranges.get(prefix).and_then(|v| v.last()) {
                    if d.parse::<u64>().map_or(false, |v| v < *n as u64) {
                        return Some(Sym::Reg(*ty));
                    }
                }
            }
        }
        self.globals.get(name).copied()
    }
}

/// Validates a parsed module; returns every error found.
pub fn validate(m: &Module) -> Vec<Diagnostic> {
    let mut errs = Vec::new();
    if m.version.0 < 1 || m.version.0 > 9 {
        errs.push(Diagnostic::error(m.version_span, format!("unsupported PTX version {}.{} (ptxr reads 1.0 to 9.x; it implements the instructions of PTX ISA 6.4 and some later ones, and reports any other instruction where it is used)", m.version.0, m.version.1)));
    }
    let mut globals: HashMap<&str, Sym> = HashMap::new();
    let mut defined: HashMap<&str, Span> = HashMap::new();
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
                if f.body.is_some() {
                    if let Some(first) = defined.insert(f.name.name, f.name.span) {
                        let _ = first;
                        errs.push(Diagnostic::error(f.name.span, format!("duplicate definition of function `{}` (11.2)", f.name.name)));
                    }
                }
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
    let sigs: HashMap<&str, (usize, usize)> = m
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Func(f) => Some((f.name.name, (f.rets.len(), f.params.len()))),
            _ => None,
        })
        .collect();
    for item in &m.items {
        if let Item::Func(f) = item {
            if let Some(body) = &f.body {
                let mut scope = Scope { globals: &globals, names: HashMap::new(), undo: Vec::new(), ranges: HashMap::new(), range_log: Vec::new() };
                for p in f.params.iter().chain(f.rets.iter()) {
                    declare(&mut scope, p);
                }
                collect_labels(body, &mut scope);
                let mut sigs = sigs.clone();
                collect_prototypes(body, &mut sigs);
                let mut v = FnValidator { errs: &mut errs, sigs: &sigs };
                v.stmts(body, &mut scope);
            }
        }
    }
    errs
}

fn declare<'a>(scope: &mut Scope<'a, '_>, v: &VarDecl<'a>) {
    // A vector register `.reg .v4 .f32 v` is not a scalar of its element type.
    let sym = if v.space == StateSpace::Reg { if v.vector.is_some() { Sym::VecReg } else { Sym::Reg(v.ty) } } else { Sym::Var(v.space, v.ty) };
    match v.range {
        Some(n) => {
            scope.ranges.entry(v.name.name).or_default().push((n, v.ty));
            scope.range_log.push(v.name.name);
        }
        None => scope.insert(v.name.name, sym),
    }
}

/// The call prototypes of a body (`label: .callprototype ...`), by label.
fn collect_prototypes<'a>(body: &[Stmt<'a>], out: &mut HashMap<&'a str, (usize, usize)>) {
    for s in body {
        match s {
            Stmt::CallPrototype { label, rets, params, .. } => {
                out.insert(label.name, (rets.len(), params.len()));
            }
            Stmt::Block(b, _) => collect_prototypes(b, out),
            _ => {}
        }
    }
}

fn collect_labels<'a>(body: &[Stmt<'a>], scope: &mut Scope<'a, '_>) {
    for s in body {
        match s {
            Stmt::Label(l) => scope.insert(l.name, Sym::Label),
            Stmt::Block(b, _) => collect_labels(b, scope),
            Stmt::CallPrototype { label, .. } => scope.insert(label.name, Sym::Proto),
            Stmt::BranchTargets { label, .. } | Stmt::CallTargets { label, .. } => scope.insert(label.name, Sym::Label),
            _ => {}
        }
    }
}

struct FnValidator<'e, 'a> {
    errs: &'e mut Vec<Diagnostic>,
    /// Return value and parameter counts of each function (`.func` declarations and
    /// definitions) and call prototype, by name.
    sigs: &'e HashMap<&'a str, (usize, usize)>,
}

impl<'e, 'b> FnValidator<'e, 'b> {
    fn stmts<'a>(&mut self, body: &[Stmt<'a>], scope: &mut Scope<'a, '_>) {
        // Declarations are visible to the whole block they appear in (PTX declares before use
        // in practice, but ptxas accepts uses that precede a declaration in the same scope).
        let saved_undo = scope.undo.len();
        let saved_ranges = scope.range_log.len();
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
        while scope.undo.len() > saved_undo {
            let (name, old) = scope.undo.pop().unwrap();
            match old {
                Some(sym) => scope.names.insert(name, sym),
                None => scope.names.remove(name),
            };
        }
        while scope.range_log.len() > saved_ranges {
            let prefix = scope.range_log.pop().unwrap();
            if let Some(v) = scope.ranges.get_mut(prefix) {
                v.pop();
            }
        }
    }

    fn instr<'a>(&mut self, i: &Instr<'a>, scope: &Scope<'a, '_>) {
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
                // Newer instructions ptxr knows it does not run yet, by name.
                isa::ModError::UnknownOpcode if i.opcode.name == "multimem" => "`multimem` (PTX ISA 8.1, multicast memory across GPUs) is not supported by ptxr".to_string(),
                isa::ModError::UnknownOpcode => format!("unknown instruction `{}`", i.opcode.name),
                e => e.to_string(),
            };
            self.errs.push(Diagnostic::error(span, msg));
            return;
        }
        let before = self.errs.len();
        for op in &i.operands {
            self.operand(op, scope, i);
        }
        if self.errs.len() == before {
            self.operand_types(i, scope);
            if i.opcode.name == "call" {
                self.call(i, scope);
            }
        }
    }

    /// PTX ISA 9.7.11.5 call: the return values and arguments a call passes must match the
    /// callee's declaration (for an indirect call, the prototype or the function named last).
    fn call<'a>(&mut self, i: &Instr<'a>, scope: &Scope<'a, '_>) {
        let ops = &i.operands;
        let (rets, rest): (usize, &[Operand]) = match ops.first() {
            Some(Operand::List(r, _)) => (r.len(), &ops[1..]),
            _ => (0, &ops[..]),
        };
        let Some(Operand::Name(callee, _)) = rest.first() else { return };
        let args = match rest.get(1) {
            Some(Operand::List(a, _)) => a.len(),
            _ => 0,
        };
        // Direct: the function. Indirect (a register): the prototype or function list named
        // after the arguments, when it is one function or prototype.
        let sig_name = if matches!(scope.lookup(callee.name), Some(Sym::Reg(_))) {
            match rest.last() {
                Some(Operand::Name(p, _)) if rest.len() >= 2 && p.name != callee.name => Some(p),
                _ => None,
            }
        } else {
            Some(callee)
        };
        let Some(sig_name) = sig_name else { return };
        let Some(&(nr, np)) = self.sigs.get(sig_name.name) else { return };
        if nr != rets || np != args {
            let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
            self.errs.push(Diagnostic::error(
                i.span,
                format!("`{}` is declared with {} and {}, but this call passes {} and {}", sig_name.name, plural(nr, "return value"), plural(np, "parameter"), plural(rets, "return value"), plural(args, "argument")),
            ));
        }
    }

    /// Operand checks of section 9.4 and of state spaces, for the common instructions whose
    /// operand roles are plain. Conservative: anything not understood is accepted.
    fn operand_types<'a>(&mut self, i: &Instr<'a>, scope: &Scope<'a, '_>) {
        let ops = &i.operands;
        let op = i.opcode.name;
        if ops.is_empty() {
            return;
        }
        // A destination must be a register (or a sink), not an immediate.
        if has_destination(op, i) {
            if let Operand::Imm(e) = &ops[0] {
                self.errs.push(Diagnostic::error(e.span(), format!("the destination of `{op}` must be a register, not an immediate")));
                return;
            }
            if let Operand::Not(id) = &ops[0] {
                self.errs.push(Diagnostic::error(id.span, format!("the destination of `{op}` cannot be negated")));
                return;
            }
        }
        // State spaces of directly named variables.
        if matches!(op, "ld" | "ldu" | "st" | "atom" | "red" | "prefetch") {
            self.state_space(i, scope);
        }
        let types: SmallVec<[Type; 2]> = i.mods.iter().filter_map(|m| Type::from_str(m)).collect();
        let vector = i.mods.iter().any(|m| matches!(*m, "v2" | "v4" | "v8"));
        // PTX 8.8: 256-bit accesses are `.v8` of 32-bit and `.v4` of 64-bit elements.
        if matches!(op, "ld" | "ldu" | "st") {
            let width = i.mods.iter().find_map(|m| m.strip_prefix('v').and_then(|n| n.parse::<u32>().ok())).unwrap_or(1);
            if let [t] = types.as_slice() {
                if width * t.bits() > 256 || (width == 8 && t.bits() != 32) {
                    self.errs.push(Diagnostic::error(i.opcode.span, format!("`.v{width}.{}` is not a vector access: vectors hold at most 256 bits, and `.v8` only 32-bit elements", t.as_str())));
                    return;
                }
            }
        }
        let roles: SmallVec<[Role; 5]> = match (op, types.as_slice()) {
            (_, [t]) if matches!(op, "add" | "sub" | "min" | "max" | "abs" | "neg" | "and" | "or" | "xor" | "not" | "cnot" | "rem" | "div" | "fma" | "sqrt" | "rcp" | "rsqrt" | "sin" | "cos" | "ex2" | "lg2" | "tanh" | "copysign" | "brev" | "cvta") => {
                if i.has_mod("cc") || op == "cvta" && t.size() != 8 && t.size() != 4 {
                    return;
                }
                ops.iter().map(|_| Role::Strict(*t)).collect()
            }
            ("mov", [t]) if !vector => ops.iter().map(|_| Role::Strict(*t)).collect(),
            ("mul" | "mad", [t]) => {
                if i.has_mod("wide") {
                    let Some(w) = wide(*t) else { return };
                    let mut r: SmallVec<[Role; 5]> = ops.iter().map(|_| Role::Strict(*t)).collect();
                    r[0] = Role::Strict(w);
                    if op == "mad" && r.len() > 3 {
                        r[3] = Role::Strict(w);
                    }
                    r
                } else if i.has_mod("cc") {
                    return;
                } else {
                    ops.iter().map(|_| Role::Strict(*t)).collect()
                }
            }
            ("shl" | "shr", [t]) => smallvec::smallvec![Role::Strict(*t), Role::Strict(*t), Role::Strict(Type::U32)],
            ("setp", [t]) => {
                let mut r: SmallVec<[Role; 5]> = smallvec::smallvec![Role::Pred, Role::Strict(*t), Role::Strict(*t)];
                if ops.len() > 3 {
                    r.push(Role::Pred);
                }
                r
            }
            ("selp", [t]) => smallvec::smallvec![Role::Strict(*t), Role::Strict(*t), Role::Strict(*t), Role::Pred],
            ("popc" | "clz" | "bfind", [t]) => smallvec::smallvec![Role::Strict(Type::U32), Role::Strict(*t)],
            ("bfe", [t]) => smallvec::smallvec![Role::Strict(*t), Role::Strict(*t), Role::Strict(Type::U32), Role::Strict(Type::U32)],
            ("bfi", [t]) => smallvec::smallvec![Role::Strict(*t), Role::Strict(*t), Role::Strict(*t), Role::Strict(Type::U32), Role::Strict(Type::U32)],
            ("ld" | "ldu", [t]) => smallvec::smallvec![Role::Dest(*t), Role::Any],
            ("st", [t]) => smallvec::smallvec![Role::Any, Role::Src(*t)],
            ("cvt", [d, a]) if ops.len() == 2 => smallvec::smallvec![Role::Dest(*d), Role::Src(*a)],
            ("atom", [t]) if !vector && ops.len() >= 3 => {
                let mut r: SmallVec<[Role; 5]> = ops.iter().map(|_| Role::Strict(*t)).collect();
                r[1] = Role::Any;
                if i.has_mod("L2::cache_hint") {
                    // The cache-policy operand (PTX 7.4) is a .b64.
                    *r.last_mut().expect("operands") = Role::Any;
                }
                r
            }
            _ => return,
        };
        for (k, (o, role)) in ops.iter().zip(roles.iter()).enumerate() {
            // Only plain register operands (and `d|p` pairs, vector elements for ld/st) are typed.
            let mut regs: SmallVec<[(&Ident<'a>, Role); 4]> = SmallVec::new();
            match o {
                Operand::Name(id, None) => regs.push((id, *role)),
                Operand::Pair(a, b) => {
                    if let Operand::Name(id, None) = &**a {
                        regs.push((id, *role));
                    }
                    if let Operand::Name(id, None) = &**b {
                        regs.push((id, Role::Pred));
                    }
                }
                Operand::Vector(items, _) if matches!(op, "ld" | "ldu" | "st") && vector => {
                    for it in items {
                        if let Operand::Name(id, None) = it {
                            regs.push((id, *role));
                        }
                    }
                }
                Operand::Not(id) if k > 0 => regs.push((id, Role::Pred)),
                _ => {}
            }
            for (id, role) in regs {
                let Some(Sym::Reg(rt)) = scope.lookup(id.name) else { continue };
                if let Some(msg) = check_role(op, role, rt) {
                    self.errs.push(Diagnostic::error(id.span, format!("`{}` {msg}", id.name)));
                }
            }
        }
    }

    fn state_space<'a>(&mut self, i: &Instr<'a>, scope: &Scope<'a, '_>) {
        let op = i.opcode.name;
        let space = i.mods.iter().find_map(|m| {
            let base = m.split("::").next().unwrap_or(m);
            match base {
                "global" | "shared" | "const" | "local" | "param" => StateSpace::from_str(base),
                _ => None,
            }
        });
        if op == "st" && space == Some(StateSpace::Const) {
            self.errs.push(Diagnostic::error(i.opcode.span, "`st.const`: the `.const` state space is read-only (PTX ISA 5.1.3)"));
            return;
        }
        let Some(space) = space else { return };
        for o in &i.operands {
            let Operand::Mem(Address { base: Some(b), .. }) = o else { continue };
            if let Some(Sym::Var(vs, _)) = scope.lookup(b.name) {
                if vs != space && !(vs == StateSpace::Tex) {
                    self.errs.push(Diagnostic::error(
                        b.span,
                        format!("`{}` is a `.{}` variable, but `{op}.{}` accesses the `.{}` state space", b.name, vs.as_str(), space.as_str(), space.as_str()),
                    ));
                }
            }
        }
    }

    fn name<'a>(&mut self, id: &Ident<'a>, scope: &Scope<'a, '_>, i: &Instr<'a>) {
        if is_special_reg(id.name) || id.name == "WARP_SZ" {
            return;
        }
        if scope.lookup(id.name).is_none() {
            let what = if matches!(i.opcode.name, "bra" | "brx") { "label" } else if i.opcode.name == "call" { "function or register" } else { "register or variable" };
            self.errs.push(Diagnostic::error(id.span, format!("undeclared {what} `{}`", id.name)));
        }
    }

    fn operand<'a>(&mut self, op: &Operand<'a>, scope: &Scope<'a, '_>, i: &Instr<'a>) {
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
            Operand::Sel(inner, _, _) => self.operand(inner, scope, i),
        }
    }

    fn expr_syms<'a>(&mut self, e: &Expr<'a>, scope: &Scope<'a, '_>, i: &Instr<'a>) {
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

/// What an operand position of an instruction expects.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// A value of this type, by the rules of Table 23 (sizes match exactly).
    Strict(Type),
    /// A source of `st`/`cvt`, by the relaxed rules of Table 24.
    Src(Type),
    /// A destination of `ld`/`cvt`, by the relaxed rules of Table 25.
    Dest(Type),
    /// A predicate.
    Pred,
    /// Not checked (addresses).
    Any,
}

fn wide(t: Type) -> Option<Type> {
    Some(match t {
        Type::U16 => Type::U32,
        Type::S16 => Type::S32,
        Type::U32 => Type::U64,
        Type::S32 => Type::S64,
        _ => return None,
    })
}

/// Whether operand 0 of this instruction is written (a destination).
fn has_destination(op: &str, i: &Instr) -> bool {
    match op {
        "mov" | "add" | "sub" | "mul" | "mad" | "mul24" | "mad24" | "sad" | "div" | "rem" | "abs" | "neg" | "min" | "max" | "popc" | "clz"
        | "bfind" | "bmsk" | "fns" | "brev" | "bfe" | "bfi" | "dp4a" | "dp2a" | "fma" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2"
        | "tanh" | "copysign" | "testp" | "set" | "setp" | "selp" | "slct" | "and" | "or" | "xor" | "not" | "cnot" | "lop3" | "shf"
        | "shl" | "shr" | "prmt" | "cvt" | "cvta" | "isspacep" | "ld" | "ldu" | "atom" | "shfl" | "vote" | "match" | "activemask"
        | "redux" | "addc" | "subc" | "madc" => i.operands.len() >= 1,
        _ => false,
    }
}

/// Checks a register of type `r` in a position with `role`; returns the complaint.
fn check_role(op: &str, role: Role, r: Type) -> Option<String> {
    let kind = |t: Type| {
        if t.is_bits() {
            'b'
        } else if t.is_int() {
            'i'
        } else if t.is_float() {
            'f'
        } else {
            'o'
        }
    };
    match role {
        Role::Any => None,
        Role::Pred => (r != Type::Pred).then(|| format!("is a `.{}` register, but `{op}` expects a predicate here", r.as_str())),
        Role::Strict(t) | Role::Src(t) | Role::Dest(t) => {
            if t == Type::Pred {
                return (r != Type::Pred).then(|| format!("is a `.{}` register, but `{op}.pred` expects a predicate", r.as_str()));
            }
            if r == Type::Pred {
                return Some(format!("is a predicate, but `{op}` expects a `.{}` value here", t.as_str()));
            }
            let (tk, rk) = (kind(t), kind(r));
            if tk == 'o' || rk == 'o' {
                return None;
            }
            // f16x2 is a 32-bit float pair: treat it like a 32-bit float.
            let relaxed = !matches!(role, Role::Strict(_));
            let size_ok = if relaxed { r.size() >= t.size() } else { r.size() == t.size() };
            // Table 23/24/25: floats agree only with floats of the same size and with bit-size
            // types; integer instruction types do not take float registers.
            let kind_ok = match (tk, rk) {
                ('b', _) | (_, 'b') => true,
                ('i', 'i') => true,
                ('f', 'f') => r.size() == t.size(),
                _ => false,
            };
            let table = match role {
                Role::Src(_) => "9.4.1, Table 24",
                Role::Dest(_) => "9.4.1, Table 25",
                _ => "9.4, Table 23",
            };
            if !kind_ok {
                return Some(format!("is a `.{}` register, which does not agree with the `.{}` type of `{op}` (PTX ISA {table})", r.as_str(), t.as_str()));
            }
            if !size_ok {
                let rule = if relaxed { "at least as wide as" } else { "the same size as" };
                return Some(format!("is a {}-bit `.{}` register; `{op}` needs one {rule} its `.{}` type (PTX ISA {table})", r.bits(), r.as_str(), t.as_str()));
            }
            None
        }
    }
}
