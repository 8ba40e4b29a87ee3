//! AST → IR: the control-flow graph (phase 1), then SSA construction (phase 2).

use super::{Block, BlockId, Def, Func, Inst, Module, Opnd, Phi, Scope, Term, ValueId, ValueInfo};
use crate::syntax::ast::{self, Instr, Item, Operand, StateSpace, Stmt, Type};
use crate::syntax::diag::Diagnostic;
use crate::syntax::printer;
use std::collections::HashMap;

/// Builds the IR of every function with a body.
pub fn build_module<'a>(m: &'a ast::Module<'a>, src: &str) -> Result<Module<'a>, Vec<Diagnostic>> {
    let mut out = Module::default();
    let mut errors = Vec::new();
    let lines = crate::syntax::diag::LineIndex::new(src);
    for item in &m.items {
        if let Item::Func(f) = item {
            if f.body.is_some() {
                match build_func_with(f, &lines) {
                    Ok(func) => out.funcs.push(func),
                    Err(d) => errors.push(d),
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

// ------------------------------------------------------------------------ phase 1: the CFG

enum PTerm<'a> {
    Open,
    Br(u32),
    Cond { pred: &'a str, neg: bool, scope: usize, then: u32, els: u32, span: ast::Span },
    Switch { index: &'a Operand<'a>, scope: usize, targets: Vec<u32> },
    Ret,
    Exit,
}

struct PBlock<'a> {
    label: Option<&'a str>,
    items: Vec<(&'a Instr<'a>, usize)>,
    term: PTerm<'a>,
    term_src: Option<(&'a Instr<'a>, u32)>,
}

struct Cfg<'a> {
    blocks: Vec<PBlock<'a>>,
    labels: HashMap<&'a str, u32>,
    lists: HashMap<&'a str, Vec<&'a str>>,
    scopes: Vec<Scope<'a>>,
    cur: Option<u32>,
}

/// Opcodes without a destination operand (PTX ISA 9.7.12.1 `bar.red`/`barrier.red` have one:
/// the reduction's result).
const NO_DEST: &[&str] = &[
    "st", "red", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu", "trap", "brkpt", "nanosleep", "pmevent", "bra", "brx", "ret", "exit", "sust", "sured", "cp", "discard",
    "applypriority", "griddepcontrol", "stmatrix", "setmaxnreg", "tensormap",
];

impl<'a> Cfg<'a> {
    fn new_block(&mut self) -> u32 {
        self.blocks.push(PBlock { label: None, items: Vec::new(), term: PTerm::Open, term_src: None });
        (self.blocks.len() - 1) as u32
    }

    fn label_block(&mut self, l: &'a str) -> u32 {
        if let Some(b) = self.labels.get(l) {
            return *b;
        }
        let b = self.new_block();
        self.blocks[b as usize].label = Some(l);
        self.labels.insert(l, b);
        b
    }

    /// The block instructions go to now (a fresh, unreachable one after a terminator).
    fn current(&mut self) -> u32 {
        match self.cur {
            Some(b) => b,
            None => {
                let b = self.new_block();
                self.cur = Some(b);
                b
            }
        }
    }

    fn terminate(&mut self, t: PTerm<'a>, src: (&'a Instr<'a>, u32)) {
        let b = self.current();
        self.blocks[b as usize].term = t;
        self.blocks[b as usize].term_src = Some(src);
        self.cur = None;
    }

    fn stmts(&mut self, body: &'a [Stmt<'a>], scope: usize) -> Result<(), Diagnostic> {
        for s in body {
            if let Stmt::Var(v) = s {
                if v.space == StateSpace::Reg {
                    match v.range {
                        Some(n) => self.scopes[scope].ranges.push((v.name.name, n, v.ty)),
                        None => {
                            self.scopes[scope].regs.insert(v.name.name, v.ty);
                        }
                    }
                } else {
                    self.scopes[scope].decls.push(v);
                }
            }
            if let Stmt::BranchTargets { label, targets, .. } = s {
                self.lists.insert(label.name, targets.iter().map(|t| t.name).collect());
            }
        }
        for s in body {
            match s {
                Stmt::Label(l) => {
                    let b = self.label_block(l.name);
                    if let Some(c) = self.cur {
                        if matches!(self.blocks[c as usize].term, PTerm::Open) {
                            self.blocks[c as usize].term = PTerm::Br(b);
                        }
                    }
                    self.cur = Some(b);
                }
                Stmt::Instr(i) => self.instr(i, scope)?,
                Stmt::Block(inner, _) => {
                    self.scopes.push(Scope { parent: Some(scope as u32), ..Default::default() });
                    let child = self.scopes.len() - 1;
                    self.stmts(inner, child)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn label_of(&mut self, i: &'a Instr<'a>, k: usize) -> Result<&'a str, Diagnostic> {
        match i.operands.get(k) {
            Some(Operand::Name(l, None)) => Ok(l.name),
            _ => Err(Diagnostic::error(i.span, format!("`{}` needs a label operand", i.opcode.name))),
        }
    }

    fn instr(&mut self, i: &'a Instr<'a>, scope: usize) -> Result<(), Diagnostic> {
        let op = i.opcode.name;
        let cur = self.current();
        // The terminator this instruction makes, if it is one.
        let term: Option<PTerm<'a>> = match op {
            "bra" => {
                let l = self.label_of(i, 0)?;
                Some(PTerm::Br(self.label_block(l)))
            }
            "ret" => Some(PTerm::Ret),
            "exit" => Some(PTerm::Exit),
            "brx" => {
                let list = self.label_of(i, 1)?;
                let names = self.lists.get(list).cloned().ok_or_else(|| Diagnostic::error(i.span, format!("`{list}` is not a `.branchtargets` list")))?;
                let targets = names.into_iter().map(|n| self.label_block(n)).collect();
                Some(PTerm::Switch { index: &i.operands[0], scope, targets })
            }
            _ => None,
        };
        match (&i.guard, term) {
            (None, Some(t)) => self.terminate(t, (i, scope as u32)),
            (None, None) => self.blocks[cur as usize].items.push((i, scope)),
            (Some(g), t) => {
                // `@p bra L`: a conditional branch; any other guarded instruction runs in a
                // block of its own (9.7.11.2), created before the block that follows so that
                // block order is source order.
                let src = Some((i, scope as u32));
                let guarded_block = t.is_none();
                let then = match t {
                    Some(PTerm::Br(target)) => target,
                    Some(t) => {
                        let b = self.new_block();
                        self.blocks[b as usize].term = t;
                        self.blocks[b as usize].term_src = src;
                        b
                    }
                    None => {
                        let b = self.new_block();
                        self.blocks[b as usize].items.push((i, scope));
                        b
                    }
                };
                let cont = self.new_block();
                if guarded_block {
                    self.blocks[then as usize].term = PTerm::Br(cont);
                }
                self.blocks[cur as usize].term = PTerm::Cond { pred: g.pred.name, neg: g.negated, scope, then, els: cont, span: i.span };
                self.blocks[cur as usize].term_src = src;
                self.cur = Some(cont);
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------- phase 2: SSA (Braun)

struct Ssa<'a, 'c> {
    cfg: &'c Cfg<'a>,
    /// Variables: (declaring scope, register name) → id.
    vars: HashMap<(usize, String), u32>,
    /// Per variable: its printed name, type and key.
    var_info: Vec<(String, Type, (u32, String))>,
    values: Vec<ValueInfo>,
    current: HashMap<(u32, BlockId), ValueId>,
    preds: Vec<Vec<BlockId>>,
    sealed: Vec<bool>,
    filled: Vec<bool>,
    incomplete: Vec<Vec<(u32, ValueId)>>,
    phis: Vec<Vec<Phi>>,
    /// Line numbers of the source text.
    lines: &'c crate::syntax::diag::LineIndex,
}

impl<'a, 'c> Ssa<'a, 'c> {
    fn resolve(&mut self, name: &str, scope: usize) -> Option<u32> {
        let (scope, ty) = resolve_in(&self.cfg.scopes, name, scope as u32)?;
        let key = (scope as usize, name.to_string());
        if let Some(v) = self.vars.get(&key) {
            return Some(*v);
        }
        let id = self.var_info.len() as u32;
        let shown = if scope <= 1 { name.to_string() } else { format!("{name}@{scope}") };
        self.var_info.push((shown, ty, (scope, name.to_string())));
        self.vars.insert(key, id);
        Some(id)
    }

    fn new_value(&mut self, var: u32, def: Def) -> ValueId {
        let (reg, ty, key) = self.var_info[var as usize].clone();
        self.values.push(ValueInfo { ty, reg, var: key, def });
        (self.values.len() - 1) as ValueId
    }

    fn write(&mut self, var: u32, b: BlockId, v: ValueId) {
        self.current.insert((var, b), v);
    }

    fn read(&mut self, var: u32, b: BlockId) -> ValueId {
        if let Some(v) = self.current.get(&(var, b)) {
            return *v;
        }
        let v = if !self.sealed[b as usize] {
            let phi = self.new_value(var, Def::Phi { block: b });
            self.phis[b as usize].push(Phi { dst: phi, incoming: Vec::new() });
            self.incomplete[b as usize].push((var, phi));
            phi
        } else if self.preds[b as usize].len() == 1 {
            let p = self.preds[b as usize][0];
            self.read(var, p)
        } else if self.preds[b as usize].is_empty() {
            self.new_value(var, Def::Undef)
        } else {
            let phi = self.new_value(var, Def::Phi { block: b });
            self.phis[b as usize].push(Phi { dst: phi, incoming: Vec::new() });
            self.write(var, b, phi);
            self.complete_phi(var, b, phi);
            phi
        };
        self.write(var, b, v);
        v
    }

    fn complete_phi(&mut self, var: u32, b: BlockId, phi: ValueId) {
        let preds = self.preds[b as usize].clone();
        let mut inc = Vec::new();
        for p in preds {
            inc.push((p, self.read(var, p)));
        }
        if let Some(ph) = self.phis[b as usize].iter_mut().find(|p| p.dst == phi) {
            ph.incoming = inc;
        }
    }

    fn seal(&mut self, b: BlockId) {
        if self.sealed[b as usize] {
            return;
        }
        self.sealed[b as usize] = true;
        for (var, phi) in std::mem::take(&mut self.incomplete[b as usize]) {
            self.complete_phi(var, b, phi);
        }
    }

    fn src_op(&mut self, op: &Operand, scope: usize, b: BlockId) -> Opnd {
        match op {
            Operand::Name(id, comp) => match self.resolve(id.name, scope) {
                Some(var) if comp.is_none() => Opnd::Val(self.read(var, b)),
                _ => Opnd::Name(match comp {
                    Some(c) => format!("{}.{c}", id.name),
                    None => id.name.to_string(),
                }),
            },
            Operand::Not(id) => match self.resolve(id.name, scope) {
                Some(var) => Opnd::NotVal(self.read(var, b)),
                None => Opnd::Name(format!("!{}", id.name)),
            },
            Operand::Imm(e) => {
                let mut s = String::new();
                printer::print_expr(&mut s, e);
                let mut names = Vec::new();
                e.symbols(&mut names);
                let mut vals: Vec<ValueId> = Vec::new();
                for n in names {
                    if let Some(var) = self.resolve(n, scope) {
                        vals.push(self.read(var, b));
                    }
                }
                if vals.is_empty() {
                    Opnd::Imm(s)
                } else {
                    Opnd::Expr(s, vals)
                }
            }
            Operand::Mem(a) => {
                let base = a.base.map(|id| Box::new(match self.resolve(id.name, scope) {
                    Some(var) => Opnd::Val(self.read(var, b)),
                    None => Opnd::Name(id.name.to_string()),
                }));
                Opnd::Addr(base, a.offset)
            }
            Operand::Vector(xs, _) => Opnd::Vector(xs.iter().map(|x| self.src_op(x, scope, b)).collect()),
            Operand::List(xs, _) | Operand::MemList(xs, _) => Opnd::List(xs.iter().map(|x| self.src_op(x, scope, b)).collect()),
            Operand::Pair(x, y) => Opnd::Pair(Box::new(self.src_op(x, scope, b)), Box::new(self.src_op(y, scope, b))),
            Operand::Sel(x, sel, _) => Opnd::Sel(Box::new(self.src_op(x, scope, b)), sel.to_string()),
            Operand::Sink(_) => Opnd::Sink,
            Operand::Index(..) => {
                let mut s = String::new();
                printer::print_operand(&mut s, op);
                Opnd::Name(s)
            }
        }
    }

    /// A destination: registers get new values (recorded in `defs`).
    fn dst_op(&mut self, op: &Operand, scope: usize, b: BlockId, inst: u32, defs: &mut Vec<ValueId>) -> Opnd {
        match op {
            Operand::Name(id, None) => match self.resolve(id.name, scope) {
                Some(var) => {
                    let v = self.new_value(var, Def::Inst { block: b, inst });
                    self.write(var, b, v);
                    defs.push(v);
                    Opnd::Val(v)
                }
                None => Opnd::Name(id.name.to_string()),
            },
            Operand::Vector(xs, _) => Opnd::Vector(xs.iter().map(|x| self.dst_op(x, scope, b, inst, defs)).collect()),
            Operand::List(xs, _) => Opnd::List(xs.iter().map(|x| self.dst_op(x, scope, b, inst, defs)).collect()),
            Operand::Pair(x, y) => {
                let x = self.dst_op(x, scope, b, inst, defs);
                let y = self.dst_op(y, scope, b, inst, defs);
                Opnd::Pair(Box::new(x), Box::new(y))
            }
            Operand::Sel(x, sel, _) => {
                // A partial write (video selectors) keeps the other bits: it reads the register.
                let _old = self.src_op(x, scope, b);
                let x = self.dst_op(x, scope, b, inst, defs);
                Opnd::Sel(Box::new(x), sel.to_string())
            }
            other => self.src_op(other, scope, b),
        }
    }

    fn inst(&mut self, i: &'a Instr<'a>, scope: usize, b: BlockId, idx: u32) -> Inst<'a> {
        let mut op = i.opcode.name.to_string();
        for m in &i.mods {
            op.push('.');
            op.push_str(m);
        }
        let line = self.lines.line(i.span.start as usize) as u32;
        let mut defs = Vec::new();
        let ops = &i.operands;
        let operands = if i.opcode.name == "call" {
            // call (rets), f, (args)[, proto]: read the arguments, then define the results.
            let has_rets = matches!(ops.first(), Some(Operand::List(..))) && ops.len() >= 2 && !matches!(ops.get(1), Some(Operand::List(..)));
            let srcs: Vec<Opnd> = ops.iter().enumerate().map(|(k, o)| if has_rets && k == 0 { Opnd::Sink } else { self.src_op(o, scope, b) }).collect();
            let mut srcs = srcs;
            if has_rets {
                srcs[0] = self.dst_op(&ops[0], scope, b, idx, &mut defs);
            }
            srcs
        } else if ops.is_empty() || (NO_DEST.contains(&i.opcode.name) && !(matches!(i.opcode.name, "bar" | "barrier") && i.has_mod("red"))) || (i.opcode.name == "wgmma" && i.mods.first() != Some(&"mma_async")) || (i.opcode.name == "tcgen05" && i.mods.first() != Some(&"ld")) {
            ops.iter().map(|o| self.src_op(o, scope, b)).collect()
        } else if i.opcode.name == "wgmma" {
            // wgmma.mma_async d, ...: d is the accumulator, read (when scale-d) and written.
            // The old values go last, as one more operand, so that they are uses.
            let mut rest: Vec<Opnd> = ops[1..].iter().map(|o| self.src_op(o, scope, b)).collect();
            let old = self.src_op(&ops[0], scope, b);
            let d = self.dst_op(&ops[0], scope, b, idx, &mut defs);
            rest.insert(0, d);
            rest.push(old);
            rest
        } else {
            // Sources first (`add %r1, %r1, 1` reads the old %r1), then the destination.
            let mut rest: Vec<Opnd> = ops[1..].iter().map(|o| self.src_op(o, scope, b)).collect();
            let d = self.dst_op(&ops[0], scope, b, idx, &mut defs);
            rest.insert(0, d);
            rest
        };
        Inst { src: i, scope: scope as u32, op, defs, operands, line }
    }
}

fn space_name(s: StateSpace) -> &'static str {
    match s {
        StateSpace::Reg => "reg",
        StateSpace::Param => "param",
        _ => "other",
    }
}

/// [`super::Func::resolve`] over scopes under construction.
pub(super) fn resolve_in(scopes: &[Scope], name: &str, mut scope: u32) -> Option<(u32, Type)> {
    loop {
        let s = &scopes[scope as usize];
        if let Some(t) = s.regs.get(name) {
            return Some((scope, *t));
        }
        let ranged = s.ranges.iter().rev().find(|(p, n, _)| name.strip_prefix(p).and_then(|d| d.parse::<u64>().ok()).map_or(false, |v| v < *n as u64));
        if let Some((_, _, t)) = ranged {
            return Some((scope, *t));
        }
        scope = s.parent?;
    }
}

/// Builds the IR of one function with a body.
pub fn build_func<'a>(f: &'a ast::Function<'a>, src: &str) -> Result<Func<'a>, Diagnostic> {
    build_func_with(f, &crate::syntax::diag::LineIndex::new(src))
}

/// [`build_func`] with the source's line index made once for all its functions.
pub fn build_func_with<'a>(f: &'a ast::Function<'a>, lines: &crate::syntax::diag::LineIndex) -> Result<Func<'a>, Diagnostic> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut cfg = Cfg { blocks: Vec::new(), labels: HashMap::new(), lists: HashMap::new(), scopes: Vec::new(), cur: None };
    // Scope 0 holds the `.reg` parameters and return values of a `.func`.
    cfg.scopes.push(Scope::default());
    for p in f.params.iter().chain(f.rets.iter()) {
        if p.space == StateSpace::Reg {
            cfg.scopes[0].regs.insert(p.name.name, p.ty);
        }
    }
    cfg.scopes.push(Scope { parent: Some(0), ..Default::default() });
    let entry = cfg.new_block();
    cfg.cur = Some(entry);
    cfg.stmts(body, 1)?;
    // Falling off the end returns.
    if let Some(c) = cfg.cur {
        if matches!(cfg.blocks[c as usize].term, PTerm::Open) {
            cfg.blocks[c as usize].term = PTerm::Ret;
        }
    }
    for b in cfg.blocks.iter_mut() {
        if matches!(b.term, PTerm::Open) {
            b.term = PTerm::Ret;
        }
    }
    // Reachable blocks only, in creation order.
    let n = cfg.blocks.len();
    let succs = |t: &PTerm| -> Vec<u32> {
        match t {
            PTerm::Br(b) => vec![*b],
            PTerm::Cond { then, els, .. } => vec![*then, *els],
            PTerm::Switch { targets, .. } => targets.clone(),
            _ => Vec::new(),
        }
    };
    let mut reach = vec![false; n];
    let mut stack = vec![0u32];
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut reach[b as usize], true) {
            continue;
        }
        stack.extend(succs(&cfg.blocks[b as usize].term));
    }
    let mut remap = vec![u32::MAX; n];
    let mut order = Vec::new();
    for b in 0..n {
        if reach[b] {
            remap[b] = order.len() as u32;
            order.push(b);
        }
    }
    let mut preds = vec![Vec::new(); order.len()];
    for (nb, &ob) in order.iter().enumerate() {
        for s in succs(&cfg.blocks[ob].term) {
            let ns = remap[s as usize] as usize;
            if !preds[ns].contains(&(nb as u32)) {
                preds[ns].push(nb as u32);
            }
        }
    }
    let nb = order.len();
    let mut ssa = Ssa {
        cfg: &cfg,
        vars: HashMap::new(),
        var_info: Vec::new(),
        values: Vec::new(),
        current: HashMap::new(),
        preds: preds.clone(),
        sealed: vec![false; nb],
        filled: vec![false; nb],
        incomplete: vec![Vec::new(); nb],
        phis: vec![Vec::new(); nb],
        lines,
    };
    let mut blocks: Vec<Block> = (0..nb).map(|_| Block::default()).collect();
    // `.reg` parameters are defined on entry.
    for p in &f.params {
        if p.space == StateSpace::Reg {
            let var = ssa.resolve(p.name.name, 0).expect("declared");
            let v = ssa.new_value(var, Def::Param);
            ssa.write(var, 0, v);
        }
    }
    ssa.seal(0);
    for (k, &ob) in order.iter().enumerate() {
        let b = k as BlockId;
        let pb = &cfg.blocks[ob];
        if preds[k].iter().all(|p| ssa.filled[*p as usize]) {
            ssa.seal(b);
        }
        let mut insts = Vec::new();
        for (idx, (i, scope)) in pb.items.iter().enumerate() {
            insts.push(ssa.inst(i, *scope, b, idx as u32));
        }
        let term = match &pb.term {
            PTerm::Br(t) => Term::Br(remap[*t as usize]),
            PTerm::Cond { pred, neg, scope, then, els, span } => {
                let var = ssa.resolve(pred, *scope).ok_or_else(|| Diagnostic::error(*span, format!("`{pred}` is not a predicate register")))?;
                let v = ssa.read(var, b);
                let (t, e) = (remap[*then as usize], remap[*els as usize]);
                if *neg {
                    Term::CondBr { cond: Opnd::NotVal(v), then: t, els: e }
                } else {
                    Term::CondBr { cond: Opnd::Val(v), then: t, els: e }
                }
            }
            PTerm::Switch { index, scope, targets } => {
                let idx = ssa.src_op(index, *scope, b);
                Term::Switch { index: idx, targets: targets.iter().map(|t| remap[*t as usize]).collect() }
            }
            PTerm::Ret => {
                let mut vals = Vec::new();
                for r in &f.rets {
                    if r.space == StateSpace::Reg {
                        let var = ssa.resolve(r.name.name, 0).expect("declared");
                        vals.push(Opnd::Val(ssa.read(var, b)));
                    }
                }
                Term::Ret(vals)
            }
            PTerm::Exit => Term::Exit,
            PTerm::Open => Term::Unreachable,
        };
        ssa.filled[k] = true;
        // Filling this block can only complete the predecessors of its successors.
        for s in term.succs() {
            if !ssa.sealed[s as usize] && preds[s as usize].iter().all(|p| ssa.filled[*p as usize]) {
                ssa.seal(s);
            }
        }
        blocks[k] = Block { label: pb.label, phis: Vec::new(), insts, term, term_src: pb.term_src, preds: preds[k].clone() };
    }
    for s in 0..nb {
        ssa.seal(s as BlockId);
    }
    let mut phis = std::mem::take(&mut ssa.phis);
    let mut values = std::mem::take(&mut ssa.values);
    remove_trivial_phis(&mut phis, &mut blocks, &mut values);
    for (b, p) in blocks.iter_mut().zip(phis) {
        b.phis = p;
    }
    let decl = |v: &ast::VarDecl| (v.name.name.to_string(), v.ty, space_name(v.space));
    let scopes = std::mem::take(&mut cfg.scopes);
    Ok(Func { name: f.name.name.to_string(), kernel: f.entry, params: f.params.iter().map(decl).collect(), rets: f.rets.iter().map(decl).collect(), blocks, values, scopes })
}

/// Removes phis whose operands are all one value (or the phi itself), replacing their uses.
fn remove_trivial_phis(phis: &mut [Vec<Phi>], blocks: &mut [Block], values: &mut [ValueInfo]) {
    let mut repl: HashMap<ValueId, ValueId> = HashMap::new();
    fn find(repl: &HashMap<ValueId, ValueId>, mut v: ValueId) -> ValueId {
        while let Some(n) = repl.get(&v) {
            v = *n;
        }
        v
    }
    loop {
        let mut changed = false;
        for bp in phis.iter_mut() {
            let mut k = 0;
            while k < bp.len() {
                let dst = bp[k].dst;
                let mut same: Option<ValueId> = None;
                let mut trivial = true;
                for (_, v) in &bp[k].incoming {
                    let v = find(&repl, *v);
                    if v == dst || Some(v) == same {
                        continue;
                    }
                    if same.is_some() {
                        trivial = false;
                        break;
                    }
                    same = Some(v);
                }
                if trivial {
                    match same {
                        Some(s) => {
                            repl.insert(dst, s);
                        }
                        None => values[dst as usize].def = Def::Undef,
                    }
                    if same.is_some() {
                        bp.remove(k);
                        changed = true;
                        continue;
                    }
                }
                k += 1;
            }
        }
        if !changed {
            break;
        }
    }
    // Phis that became undefined (only themselves as operands) stay as undefined values.
    for bp in phis.iter_mut() {
        bp.retain(|p| values[p.dst as usize].def != Def::Undef);
        for p in bp.iter_mut() {
            for (_, v) in p.incoming.iter_mut() {
                *v = find(&repl, *v);
            }
        }
    }
    fn fix(o: &mut Opnd, repl: &HashMap<ValueId, ValueId>) {
        match o {
            Opnd::Val(v) | Opnd::NotVal(v) => *v = find(repl, *v),
            Opnd::Addr(Some(b), _) => fix(b, repl),
            Opnd::Vector(xs) | Opnd::List(xs) => xs.iter_mut().for_each(|x| fix(x, repl)),
            Opnd::Pair(a, b) => {
                fix(a, repl);
                fix(b, repl);
            }
            Opnd::Sel(a, _) => fix(a, repl),
            Opnd::Expr(_, vs) => vs.iter_mut().for_each(|v| *v = find(repl, *v)),
            _ => {}
        }
    }
    for b in blocks.iter_mut() {
        for i in b.insts.iter_mut() {
            i.operands.iter_mut().for_each(|o| fix(o, &repl));
        }
        match &mut b.term {
            Term::CondBr { cond, .. } => fix(cond, &repl),
            Term::Switch { index, .. } => fix(index, &repl),
            Term::Ret(vs) => vs.iter_mut().for_each(|o| fix(o, &repl)),
            _ => {}
        }
    }
}
