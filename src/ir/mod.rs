//! ptxr's IR: each function as per-thread SSA over a control-flow graph.
//!
//! - Registers become SSA values (one definition each) with the register's declared type;
//!   predicates are values of type `.pred`. Values that meet at a join get `phi`s.
//! - Guards become control flow: `@p bra L` is a conditional branch, any other guarded
//!   instruction gets a block of its own that only the guard's true side enters.
//! - Instructions keep their opcode and modifiers, so state spaces stay on memory operations
//!   (`ld.global`, `st.shared`, `atom.shared`), and their operands with registers replaced by
//!   values; variables (`.param`, `.local`, `.shared`, `.global`) stay named memory.
//! - Scoped registers of `{ }` blocks are distinct variables from the outer ones they shadow.
//!
//! Construction follows Braun et al., "Simple and Efficient Construction of Static Single
//! Assignment Form" (CC 2013): blocks are filled in order and sealed once every predecessor is
//! filled; trivial phis are removed afterwards. [`verify`] checks the result (one definition per
//! value, every use dominated by its definition, phis matching predecessors, branch targets);
//! `ptxr compile --emit ir` prints it, and debug builds build and verify it for every function
//! they compile.
//!
//! Code generation lowers from the IR (`codegen::func`): one LLVM block per IR block, the
//! terminators as branches, each instruction through the opcode emitters, which read the
//! instruction's AST form (`Inst::src`) for its modifiers. Values leave SSA by phi-web
//! coalescing: every value of a variable, and so every operand of a phi, shares the
//! variable's storage (an alloca that LLVM's mem2reg promotes back to SSA, and that the lane
//! scheduler saves at sync points). That is sound because construction never copies one
//! variable's value into another's web, which [`verify`] checks (a phi's operands are values
//! of its own variable).

mod build;
pub mod cfg;
pub mod uniformity;
mod print;
mod verify;

pub use build::{build_func, build_func_with, build_module};
pub use print::print_module;
pub use verify::verify;

use crate::syntax::ast::{Instr, Type, VarDecl};
use std::collections::HashMap;

pub type ValueId = u32;
pub type BlockId = u32;

/// A module: its functions in source order.
#[derive(Debug, Default)]
pub struct Module<'a> {
    pub funcs: Vec<Func<'a>>,
}

/// One `.entry` or `.func`.
#[derive(Debug)]
pub struct Func<'a> {
    pub name: String,
    pub kernel: bool,
    /// `.param`/`.reg` parameters as written: (name, type, state space).
    pub params: Vec<(String, Type, &'static str)>,
    pub rets: Vec<(String, Type, &'static str)>,
    pub blocks: Vec<Block<'a>>,
    /// Type and source register of every value.
    pub values: Vec<ValueInfo>,
    /// The register scopes: 0 holds the `.reg` parameters and return values of a `.func`,
    /// 1 the body, then each `{ }` block in source order (parents before children).
    pub scopes: Vec<Scope<'a>>,
}

/// A scope's declarations.
#[derive(Debug, Default)]
pub struct Scope<'a> {
    pub parent: Option<u32>,
    /// `.reg` variables declared one by one.
    pub regs: HashMap<&'a str, Type>,
    /// Parameterized `.reg` declarations `%r<N>`: (prefix, N, type).
    pub ranges: Vec<(&'a str, u32, Type)>,
    /// The other variables declared here (`.local`, `.shared`, `.param`, ...), in order.
    pub decls: Vec<&'a VarDecl<'a>>,
}

impl<'a> Func<'a> {
    /// The scope that declares register `name` as seen from `scope`, and its type: the
    /// innermost declaration wins; within a scope a single declaration before a range.
    pub fn resolve(&self, name: &str, scope: u32) -> Option<(u32, Type)> {
        build::resolve_in(&self.scopes, name, scope)
    }
}

#[derive(Debug, Clone)]
pub struct ValueInfo {
    pub ty: Type,
    /// The register it came from (`%r1`, or `%r1@2` for a register of an inner scope).
    pub reg: String,
    /// Its variable: (declaring scope, register name).
    pub var: (u32, String),
    pub def: Def,
}

/// Where a value is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Def {
    /// Result `k` of instruction `inst` of `block`.
    Inst { block: BlockId, inst: u32 },
    Phi { block: BlockId },
    /// A `.reg` parameter of a `.func`, defined on entry.
    Param,
    /// Read before any write on some path: an undefined value.
    Undef,
}

#[derive(Debug, Default)]
pub struct Block<'a> {
    /// The PTX label that starts it, if any.
    pub label: Option<&'a str>,
    pub phis: Vec<Phi>,
    pub insts: Vec<Inst<'a>>,
    pub term: Term,
    /// The instruction that made the terminator, and its scope: `bra`, `ret`, `exit`,
    /// `brx.idx`, or for a `CondBr` the guarded instruction whose guard it tests. `None` for
    /// a fall-through into a label or off the end of the body.
    pub term_src: Option<(&'a Instr<'a>, u32)>,
    pub preds: Vec<BlockId>,
}

#[derive(Debug, Clone)]
pub struct Phi {
    pub dst: ValueId,
    pub incoming: Vec<(BlockId, ValueId)>,
}

/// An operand: a value, or what PTX wrote for things that are not registers.
#[derive(Debug, Clone, PartialEq)]
pub enum Opnd {
    Val(ValueId),
    /// `!p`
    NotVal(ValueId),
    /// Immediates and constant expressions, as written.
    Imm(String),
    /// An operand expression that reads registers (`r + 1`, which ptxas accepts): its text
    /// and the values it reads.
    Expr(String, Vec<ValueId>),
    /// Variables, functions, labels, special registers (`%tid.x`), as written.
    Name(String),
    /// `[base + offset]`
    Addr(Option<Box<Opnd>>, i64),
    Vector(Vec<Opnd>),
    List(Vec<Opnd>),
    /// `d|p`
    Pair(Box<Opnd>, Box<Opnd>),
    /// A register with a video selector (`%r1.b0`).
    Sel(Box<Opnd>, String),
    Sink,
}

impl Opnd {
    /// The values this operand reads (for a destination, the values it defines).
    pub fn values(&self, out: &mut Vec<ValueId>) {
        match self {
            Opnd::Val(v) | Opnd::NotVal(v) => out.push(*v),
            Opnd::Addr(Some(b), _) => b.values(out),
            Opnd::Vector(xs) | Opnd::List(xs) => xs.iter().for_each(|x| x.values(out)),
            Opnd::Pair(a, b) => {
                a.values(out);
                b.values(out);
            }
            Opnd::Sel(a, _) => a.values(out),
            Opnd::Expr(_, vs) => out.extend(vs.iter().copied()),
            _ => {}
        }
    }
}

#[derive(Debug, Clone)]
pub struct Inst<'a> {
    /// The instruction as parsed (modifiers, types, operand syntax).
    pub src: &'a Instr<'a>,
    /// The register scope its operands are read in.
    pub scope: u32,
    /// `opcode.mod.mod`
    pub op: String,
    /// Values this instruction defines, in operand order.
    pub defs: Vec<ValueId>,
    /// Operands as written, destinations included (as the values they define).
    pub operands: Vec<Opnd>,
    /// 1-based source line.
    pub line: u32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub enum Term {
    #[default]
    Unreachable,
    Br(BlockId),
    /// `cond` true → `then`.
    CondBr { cond: Opnd, then: BlockId, els: BlockId },
    /// `brx.idx`: index → targets[index].
    Switch { index: Opnd, targets: Vec<BlockId> },
    /// `ret` (with the values of `.reg` return parameters of a `.func`).
    Ret(Vec<Opnd>),
    Exit,
}

impl Inst<'_> {
    /// The values this instruction reads (its operands less the values it defines).
    pub fn reads(&self) -> Vec<ValueId> {
        let mut all = Vec::new();
        self.operands.iter().for_each(|o| o.values(&mut all));
        all.retain(|v| !self.defs.contains(v));
        all
    }
}

impl Term {
    pub fn succs(&self) -> Vec<BlockId> {
        match self {
            Term::Br(b) => vec![*b],
            Term::CondBr { then, els, .. } => vec![*then, *els],
            Term::Switch { targets, .. } => targets.clone(),
            _ => Vec::new(),
        }
    }
}

/// Builds the IR of `src` (which must be valid PTX), verifies every function, and prints it.
pub fn emit_text(src: &crate::SourceFile) -> anyhow::Result<String> {
    let ast = crate::check_source(src).map_err(|m| anyhow::anyhow!("{}", m.trim_end()))?;
    let m = build_module(&ast, &src.text).map_err(|d| anyhow::anyhow!("{}", crate::syntax::diag::render_all(&d, &src.name, &src.text).trim_end()))?;
    for f in &m.funcs {
        verify(f).map_err(|e| anyhow::anyhow!("internal error: IR of `{}` does not verify: {e}", f.name))?;
    }
    Ok(print_module(&m))
}
