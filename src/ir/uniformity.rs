//! Uniformity of values and branches across the lanes of a warp, and the lane strides of
//! varying integers (divergence analysis on ptxr's IR).
//!
//! The question is the one of LLVM's `UniformityAnalysis` ("Convergence And Uniformity") and
//! of Coutinho et al., "Divergence Analysis and Optimizations" (PACT 2011): when the lanes of
//! a warp execute an instruction together, do they all get the same value?
//!
//! - **Sources.** For warps that are rows of the block ([`Layout::Rows`]), `%tid.x` varies
//!   with stride 1 along the lanes and `%tid.y`/`%tid.z` are uniform: the warps are runs of
//!   32 consecutive `%tid.x` in one row of the block (true warps when `%ntid.x` is a
//!   multiple of 32; in kernels without warp-level operations any grouping of threads gives
//!   the same results). For warps of two 16-wide rows ([`Layout::Tile`]), `%tid.x` steps
//!   by 1 along each row and `%tid.y` by 1 from the first row to the second ([`Stride`]),
//!   and `%tid.z` is uniform. Launch
//!   shape, `%ctaid`, kernel parameters, constants and variable addresses are uniform;
//!   `%laneid`, `%warpid`, `%lanemask_*`, clocks, atomics, `.local` loads, call results and
//!   per-lane warp results (`shfl`, `match`, matrix fragments) vary.
//! - **Propagation.** An instruction on uniform operands is uniform (a load from a uniform
//!   address reads one location for all lanes). Integer `add`/`sub`/`mad`/`mul`/`shl`/`cvt`
//!   keep an affine shape `base + stride * lane` ([`Shape::Affine`]; in a tile warp a stride
//!   per lane of a row and one per row; the stride assumes the
//!   arithmetic does not wrap inside one warp, so it classifies memory accesses and is not
//!   used for code that depends on it being exact).
//! - **Sync dependence.** A branch on a varying condition is divergent. The phis of every
//!   block between it and its reconvergence point (its immediate post-dominator, included)
//!   vary: lanes arrive there from different paths. This is conservative (a uniform loop
//!   nested inside a divergent `if` is reported varying too).
//! - **Temporal divergence.** A value defined in a loop with a divergent exit and read after
//!   the loop varies at that read: lanes leave in different iterations.
//!
//! The result also says which lanes run each block together ([`Uniformity::group`]): every
//! live lane outside every divergent branch's region, the lanes of one side inside one
//! divergent branch's region. A divergent exit of loops that run in lockstep
//! (`Cfg::lockstep`: the lanes still in the loop run each iteration together) divides no
//! lanes inside those loops. The warp-vector code generator keeps uniform values of such
//! blocks in scalars.

use super::cfg::Cfg;
use super::{BlockId, Def, Func, Opnd, Term, ValueId};

/// How a value relates to the lanes of a warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Not known yet (during the analysis); unreachable definitions keep it.
    Unknown,
    /// The same in every lane.
    Uniform,
    /// `base + stride.x * X + stride.r * R` for a uniform base (in the value's own units),
    /// with `X`, `R` the lane's place in its warp ([`Stride`]).
    Affine(Stride),
    Varying,
}

/// How an affine value steps along the lanes of a warp: lane `l`'s value is
/// `base + x * X + r * R`. In a warp of one row ([`Layout::Rows`]) `X` is the lane and `R`
/// is 0; in a warp of two 16-wide rows ([`Layout::Tile`]) `X = l & 15` is the lane's
/// `%tid.x` and `R = l >> 4` its row in the warp. The arithmetic is modulo 2^64 per component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stride {
    pub x: i64,
    pub r: i64,
}

impl Stride {
    pub const ZERO: Stride = Stride { x: 0, r: 0 };

    /// A stride along the lanes of a row.
    pub const fn lane(x: i64) -> Stride {
        Stride { x, r: 0 }
    }

    pub fn is_zero(self) -> bool {
        self == Stride::ZERO
    }

    pub fn add(self, o: Stride) -> Stride {
        Stride { x: self.x.wrapping_add(o.x), r: self.r.wrapping_add(o.r) }
    }

    pub fn sub(self, o: Stride) -> Stride {
        Stride { x: self.x.wrapping_sub(o.x), r: self.r.wrapping_sub(o.r) }
    }

    pub fn mul(self, c: i64) -> Stride {
        Stride { x: self.x.wrapping_mul(c), r: self.r.wrapping_mul(c) }
    }

    /// `X` and `R` of lane `l` in a warp of `tile` rows (see the type).
    pub fn place(l: u32, tile: bool) -> (u32, u32) {
        if tile {
            (l & 15, l >> 4)
        } else {
            (l, 0)
        }
    }

    /// The offset of lane `l` from the base (modulo 2^64).
    pub fn at(self, l: u32, tile: bool) -> i64 {
        let (x, r) = Stride::place(l, tile);
        self.x.wrapping_mul(x as i64).wrapping_add(self.r.wrapping_mul(r as i64))
    }
}

impl std::fmt::Display for Stride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.r == 0 {
            write!(f, "{}", self.x)
        } else {
            write!(f, "{} per lane, {} per row", self.x, self.r)
        }
    }
}

impl Shape {
    pub fn is_uniform(self) -> bool {
        matches!(self, Shape::Uniform | Shape::Unknown)
    }

    fn join(self, o: Shape) -> Shape {
        match (self, o) {
            (Shape::Unknown, x) | (x, Shape::Unknown) => x,
            (a, b) if a == b => a,
            _ => Shape::Varying,
        }
    }

    fn stride(self) -> Option<Stride> {
        match self {
            Shape::Uniform | Shape::Unknown => Some(Stride::ZERO),
            Shape::Affine(s) => Some(s),
            Shape::Varying => None,
        }
    }

    fn from_stride(s: Option<Stride>) -> Shape {
        match s {
            Some(s) if s.is_zero() => Shape::Uniform,
            Some(s) => Shape::Affine(s),
            None => Shape::Varying,
        }
    }
}

/// How the lanes of a warp access memory at one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// One address for all lanes.
    Uniform,
    /// Consecutive elements (stride = access size; in a tile warp, [`Layout::Tile`], along
    /// each row of 16 lanes, the rows anywhere).
    Consecutive,
    /// A constant stride of this many bytes.
    Strided(i64),
    /// In a tile warp ([`Layout::Tile`]), one address per row of 16 lanes, the second row's
    /// this many bytes after the first's.
    PerRow(i64),
    /// Anything else: a gather or scatter.
    Gather,
}

#[derive(Debug, Clone)]
pub struct Uniformity {
    pub cfg: Cfg,
    /// Per value.
    pub values: Vec<Shape>,
    /// Per block: its terminator depends on a varying condition or index.
    pub divergent: Vec<bool>,
    /// Per block: which lanes run it together.
    pub group: Vec<Group>,
    /// Per loop of `cfg.loops`: it has a divergent exit (values defined in it vary after it).
    pub divergent_loop: Vec<bool>,
    /// Per block: the divergent branches whose region holds it (those that divide the lanes
    /// running it from others; see `group`).
    pub regions: Vec<Vec<BlockId>>,
    /// The warps analyzed for.
    pub layout: Layout,
    /// Per block: it joins a divergent branch's paths (its phis vary for that alone).
    pub joins: Vec<bool>,
}

/// The lanes of a warp that run a block together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Every live lane (a converged block); inside a loop with a divergent exit that runs in
    /// lockstep (`Cfg::lockstep`), every lane still in the loop.
    All,
    /// The lanes that left converged divergent branch `c` through its successor `k`, and
    /// only they: the block lies in one side of `c` and in no other divergent region.
    Arm(BlockId, u32),
    /// Anything else (nested or looping divergence), and unreachable blocks.
    Mixed,
}

/// How the threads of a block map onto the lanes of a warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A warp is 32 consecutive `%tid.x` in one row of the block (`x0 .. x0+31` at one
    /// `%tid.y`, `%tid.z`): the hardware's warps when `%ntid.x` is a multiple of 32.
    Rows,
    /// A warp is two rows of a block 16 threads wide (`%ntid.x` = 16, `%ntid.y` even): lane
    /// `l` is `%tid.x = l & 15`, `%tid.y = y0 + (l >> 4)` at one `%tid.z`, the hardware's
    /// warp of those threads. Affine values step per lane of a row and per row
    /// ([`Stride`]); the warp path runs each lane loop as two rows of 16 consecutive
    /// `%tid.x` (`codegen::warp`).
    Tile,
}

/// Special registers and how they vary along the lanes of a warp of `layout`.
pub fn special_shape(name: &str, layout: Layout) -> Shape {
    let base = name.split('.').next().unwrap_or(name);
    match (name, layout) {
        ("%tid.x", _) => return Shape::Affine(Stride::lane(1)),
        ("%tid.y", Layout::Tile) => return Shape::Affine(Stride { x: 0, r: 1 }),
        ("%tid.y" | "%tid.z", Layout::Rows) | ("%tid.z", Layout::Tile) => return Shape::Uniform,
        _ => {}
    }
    match base {
        "%tid" | "%laneid" | "%warpid" | "%lanemask_eq" | "%lanemask_le" | "%lanemask_lt" | "%lanemask_ge" | "%lanemask_gt" | "%clock" | "%clock64" | "%globaltimer"
        | "%globaltimer_lo" | "%globaltimer_hi" | "%pm0" | "%pm1" | "%pm2" | "%pm3" | "%pm4" | "%pm5" | "%pm6" | "%pm7" | "%pm0_64" | "%pm1_64" | "%pm2_64"
        | "%pm3_64" | "%pm4_64" | "%pm5_64" | "%pm6_64" | "%pm7_64" => Shape::Varying,
        _ => Shape::Uniform,
    }
}

/// Whether an instruction loads a kernel's own parameter (`ld.param` of a `.param` of an
/// `.entry`): the same for every thread of the launch. A `.func`'s parameters, and the
/// `.param` variables of a call sequence, are per thread.
pub fn loads_kernel_param(f: &Func, inst: &super::Inst) -> bool {
    let is_param = |o: &Opnd| matches!(o, Opnd::Addr(Some(b), _) if matches!(&**b, Opnd::Name(n) if f.params.iter().any(|p| &p.0 == n)));
    f.kernel && inst.src.opcode.name == "ld" && inst.src.has_mod("param") && inst.operands.iter().any(is_param)
}

/// Whether `name` may be a variable with a copy per thread that `f` declares: `.local`
/// (PTX ISA 5.1.5: private to each thread) or a call sequence's `.param`, so that its
/// address differs per lane. Any declaration of the name counts, whatever scope shadows it
/// (the answer then errs toward varying, which is always exact).
pub fn lane_private(f: &Func, name: &str) -> bool {
    use crate::syntax::ast::StateSpace;
    f.scopes.iter().any(|s| s.decls.iter().any(|d| d.name.name == name && matches!(d.space, StateSpace::Local | StateSpace::Param)))
}

/// Whether an instruction's result differs per lane whatever its operands.
fn always_varying(f: &Func, inst: &super::Inst) -> bool {
    let i = inst.src;
    match i.opcode.name {
        // tcgen05.ld: each lane reads its own lane and columns of tensor memory.
        // elect.sync (PTX ISA 8.x 9.7.12): `p` is true in the leader's lane only (its `d`, the
        // leader's number, is the same in every lane, but one shape covers both).
        "atom" | "call" | "shfl" | "match" | "mma" | "wmma" | "wgmma" | "ldmatrix" | "alloca" | "stacksave" | "tcgen05" | "elect" => true,
        // With a membermask short of the whole warp, lanes outside it count themselves in
        // (`codegen::warp_collective`): per-lane results.
        "vote" | "redux" => match crate::codegen::warp_collective::membermask(i).and_then(|k| inst.operands.get(k)) {
            Some(Opnd::Imm(t)) => !crate::codegen::warp_collective::full_mask(t),
            Some(_) => true,
            None => false,
        },
        "ld" if i.has_mod("local") => true,
        "ld" if i.has_mod("param") => !loads_kernel_param(f, inst),
        "cvta" => i.has_mod("local") && !i.has_mod("to"),
        // A partial write (video selectors) keeps bits of the old value, which is not an
        // operand here.
        _ => inst.operands.iter().any(|o| matches!(o, Opnd::Sel(..))) && !inst.defs.is_empty(),
    }
}

/// Reads shapes with temporal divergence applied: what the analysis iterates on, and what
/// [`Uniformity::operand_shape`] answers from once it is done.
struct View<'x, 'a> {
    f: &'x Func<'a>,
    cfg: &'x Cfg,
    values: &'x [Shape],
    divergent_loop: &'x [bool],
    layout: Layout,
}

impl View<'_, '_> {
    /// The shape of value `v` as read in block `at`: varying after a loop with a divergent
    /// exit that defines it.
    fn read(&self, v: ValueId, at: BlockId) -> Shape {
        let s = self.values[v as usize];
        let (Def::Inst { block, .. } | Def::Phi { block }) = self.f.values[v as usize].def else { return s };
        let escapes = self.cfg.loops.iter().zip(self.divergent_loop).any(|((_, blocks), d)| *d && blocks.contains(&block) && !blocks.contains(&at));
        if escapes {
            Shape::Varying
        } else {
            s
        }
    }

    fn operand(&self, o: &Opnd, at: BlockId) -> Shape {
        // Composite operands are uniform or varying, never affine.
        fn all(mut xs: impl Iterator<Item = Shape>) -> Shape {
            if xs.all(Shape::is_uniform) {
                Shape::Uniform
            } else {
                Shape::Varying
            }
        }
        match o {
            Opnd::Val(v) | Opnd::NotVal(v) => self.read(*v, at),
            Opnd::Name(n) if n.starts_with('%') => special_shape(n, self.layout),
            Opnd::Name(n) if lane_private(self.f, n) => Shape::Varying,
            Opnd::Imm(_) | Opnd::Name(_) | Opnd::Addr(None, _) | Opnd::Sink => Shape::Uniform,
            Opnd::Addr(Some(b), _) => self.operand(b, at),
            Opnd::Expr(_, vs) => all(vs.iter().map(|v| self.read(*v, at))),
            Opnd::Vector(xs) | Opnd::List(xs) => all(xs.iter().map(|x| self.operand(x, at))),
            Opnd::Pair(a, b) => all([self.operand(a, at), self.operand(b, at)].into_iter()),
            Opnd::Sel(x, _) => all(std::iter::once(self.operand(x, at))),
        }
    }
}

struct Analysis<'f, 'a> {
    f: &'f Func<'a>,
    layout: Layout,
    cfg: Cfg,
    values: Vec<Shape>,
    /// Blocks whose phis vary (joins of divergent branches).
    joins: Vec<bool>,
    /// Per loop (index into `cfg.loops`): it has a divergent exit.
    divergent_loop: Vec<bool>,
}

impl<'a> Analysis<'_, 'a> {
    fn view(&self) -> View<'_, 'a> {
        View { f: self.f, cfg: &self.cfg, values: &self.values, divergent_loop: &self.divergent_loop, layout: self.layout }
    }


    /// Whether operand `o` is `%tid.x` or a copy of it (`mov`, `cvt` to 16 bits or more).
    fn lane_aligned(&self, o: &Opnd, depth: u32) -> bool {
        match o {
            Opnd::Name(n) => n == "%tid.x",
            Opnd::Val(v) if depth < 4 => {
                let Def::Inst { block, inst } = self.f.values[*v as usize].def else { return false };
                let inst = &self.f.blocks[block as usize].insts[inst as usize];
                let tys = crate::codegen::types_of(inst.src);
                let wide = !tys.is_empty() && tys.iter().all(|t| (t.is_int() || t.is_bits()) && t.bits() >= 16);
                matches!(inst.src.opcode.name, "mov" | "cvt") && wide && inst.operands.len() == 2 && self.lane_aligned(&inst.operands[1], depth + 1)
            }
            _ => false,
        }
    }

    /// The shape of an instruction's results from its operands.
    fn transfer(&self, inst: &super::Inst, at: BlockId) -> Shape {
        // PTX ISA 9.7.8.5 shfl.sync.idx with source lane 0 and c = 31 (no segments): every
        // lane reads lane 0's `a`, which every warp has; a lane whose source is not active
        // reads its own, the same where `a` is uniform (`__shfl_sync(~0, warp_id, 0)`, the
        // broadcast of the warp's number with which Triton's warp-specialized kernels start).
        if inst.src.opcode.name == "shfl" && inst.src.has_mod("idx") && inst.defs.len() == 1 && inst.operands.len() >= 4 {
            let imm = |o: &Opnd| if let Opnd::Imm(s) = o { parse_int(s) } else { None };
            if imm(&inst.operands[2]) == Some(0) && imm(&inst.operands[3]) == Some(31) && self.view().operand(&inst.operands[1], at).is_uniform() {
                return Shape::Uniform;
            }
        }
        if always_varying(self.f, inst) {
            return Shape::Varying;
        }
        let srcs: Vec<&Opnd> = inst.operands.iter().filter(|o| !is_def(o, &inst.defs)).collect();
        let shapes: Vec<Shape> = srcs.iter().map(|o| self.view().operand(o, at)).collect();
        if shapes.iter().all(|s| s.is_uniform()) {
            return Shape::Uniform;
        }
        if shapes.contains(&Shape::Varying) || inst.defs.len() != 1 {
            return Shape::Varying;
        }
        let ty = crate::codegen::types_of(inst.src).first().copied();
        if !ty.map_or(false, |t| t.is_int() || t.is_bits()) {
            return Shape::Varying;
        }
        let imm = |k: usize| -> Option<i64> {
            match srcs.get(k) {
                Some(Opnd::Imm(s)) => parse_int(s),
                _ => None,
            }
        };
        let st = |k: usize| shapes.get(k).copied().and_then(Shape::stride);
        let i = inst.src;
        // `%tid.x` is `x0 + lane` with `x0` a multiple of 32: its bits from bit 5 up are the
        // warp's, its low five bits the lane (the warp id and lane of a one-row block).
        if srcs.len() == 2 && self.lane_aligned(srcs[0], 0) {
            match (i.opcode.name, imm(1)) {
                ("shr", Some(k)) if k >= 5 => return Shape::Uniform,
                ("div", Some(c)) if c > 0 && c % 32 == 0 && !i.has_mod("full") => return Shape::Uniform,
                ("and", Some(m)) if m & 31 == 0 => return Shape::Uniform,
                ("and", Some(m)) if m & 31 == 31 && (m as u64 & 0xffff_ffff) >> 5 == 0 => return Shape::Affine(Stride::lane(1)),
                ("rem", Some(32)) => return Shape::Affine(Stride::lane(1)),
                // A comparison with a constant whose threshold lies between two warps
                // (`%tid.x > 31`, `%tid.x < 64`: a branch for the first warps of a block) is
                // the same in every lane. Every lane's `%tid.x` is below 2^31, so a negative
                // constant (signed or unsigned) answers alike for all of them too.
                ("setp", Some(c)) => {
                    let cmp = i.mods.first().copied().unwrap_or("");
                    let edge = match cmp {
                        "lt" | "ge" | "lo" | "hs" => Some(c),
                        "gt" | "le" | "hi" | "ls" => c.checked_add(1),
                        _ => None,
                    };
                    if edge.map_or(false, |t| t < 0 || t % 32 == 0) {
                        return Shape::Uniform;
                    }
                }
                _ => {}
            }
        }
        let s = (|| match i.opcode.name {
            "mov" | "cvt" | "cvta" => st(0),
            "add" if srcs.len() == 2 => Some(st(0)?.add(st(1)?)),
            "sub" if srcs.len() == 2 => Some(st(0)?.sub(st(1)?)),
            "neg" => Some(st(0)?.mul(-1)),
            "mul" if i.has_mod("lo") || i.has_mod("wide") || !i.has_mod("hi") => match (st(0)?, st(1)?, imm(0), imm(1)) {
                (z, s, Some(c), _) | (s, z, _, Some(c)) if z.is_zero() => Some(s.mul(c)),
                _ => None,
            },
            "shl" => match (st(0)?, st(1)?, imm(1)) {
                (s, z, Some(c)) if z.is_zero() && (0..63).contains(&c) => Some(s.mul(1i64 << c)),
                _ => None,
            },
            "mad" if i.has_mod("lo") || i.has_mod("wide") => {
                let prod = match (st(0)?, st(1)?, imm(0), imm(1)) {
                    (a, b, _, _) if a.is_zero() && b.is_zero() => Some(Stride::ZERO),
                    (z, s, Some(c), _) | (s, z, _, Some(c)) if z.is_zero() => Some(s.mul(c)),
                    _ => None,
                };
                Some(prod?.add(st(2)?))
            }
            _ => None,
        })();
        Shape::from_stride(s)
    }

    fn run(&mut self) {
        loop {
            self.propagate();
            // Divergent branches and what they make vary.
            let mut joins = vec![false; self.f.blocks.len()];
            let mut divergent_loop = vec![false; self.cfg.loops.len()];
            for &b in &self.cfg.rpo {
                if !self.branch_divergent(b) {
                    continue;
                }
                for x in self.cfg.joins(b) {
                    joins[x as usize] = true;
                }
                for (k, (_, blocks)) in self.cfg.loops.iter().enumerate() {
                    if blocks.contains(&b) && self.cfg.succs[b as usize].iter().any(|s| !blocks.contains(s)) {
                        divergent_loop[k] = true;
                    }
                }
            }
            if joins == self.joins && divergent_loop == self.divergent_loop {
                return;
            }
            self.joins = joins;
            self.divergent_loop = divergent_loop;
        }
    }

    fn branch_divergent(&self, b: BlockId) -> bool {
        match &self.f.blocks[b as usize].term {
            Term::CondBr { cond, .. } => !self.view().operand(cond, b).is_uniform(),
            Term::Switch { index, .. } => !self.view().operand(index, b).is_uniform(),
            _ => false,
        }
    }

    /// Iterates the value shapes to a fixpoint; a value changes at most twice (from
    /// unknown to a shape, then to varying), so this ends.
    fn propagate(&mut self) {
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &self.cfg.rpo.clone() {
                let blk = &self.f.blocks[b as usize];
                for phi in &blk.phis {
                    let mut s = Shape::Unknown;
                    // Read where the phi is: a value that leaves a loop with a divergent
                    // exit through the edge differs per lane there.
                    for &(_, v) in &phi.incoming {
                        s = s.join(self.view().read(v, b));
                    }
                    if self.joins[b as usize] && s != Shape::Unknown {
                        s = Shape::Varying;
                    }
                    changed |= self.update(phi.dst, s);
                }
                for inst in &blk.insts {
                    let s = self.transfer(inst, b);
                    for &d in &inst.defs {
                        changed |= self.update(d, s);
                    }
                }
            }
        }
    }

    fn update(&mut self, v: ValueId, s: Shape) -> bool {
        let old = self.values[v as usize];
        let new = if old == Shape::Unknown { s } else if s == old || s == Shape::Unknown { old } else { Shape::Varying };
        self.values[v as usize] = new;
        new != old
    }
}

fn is_def(o: &Opnd, defs: &[ValueId]) -> bool {
    match o {
        Opnd::Val(v) => defs.contains(v),
        Opnd::Vector(xs) | Opnd::List(xs) => !xs.is_empty() && xs.iter().all(|x| is_def(x, defs) || matches!(x, Opnd::Sink)),
        Opnd::Pair(a, b) => is_def(a, defs) || is_def(b, defs),
        _ => false,
    }
}

/// An integer immediate as printed in the IR (`4`, `-4`, `0x10`, `010`, `0b1`, `4U`).
pub fn parse_int(s: &str) -> Option<i64> {
    // The printer writes a negative constant as `(-32)`, maybe spaced.
    let s: String = s.chars().filter(|c| !matches!(c, '(' | ')') && !c.is_whitespace()).collect();
    let t = s.as_str();
    let (neg, t) = t.strip_prefix('-').map_or((false, t), |r| (true, r.trim_start()));
    match crate::syntax::lex::int_literal(t)? {
        ("", v, _) => Some(if neg { (v as i64).wrapping_neg() } else { v as i64 }),
        _ => None,
    }
}

/// The loop that a divergent branch at `c` leaves without dividing it: `c` leaves loops
/// (the outermost of them returned) through one successor and stays in them through the
/// other, and each of those loops runs in lockstep ([`Cfg::lockstep`]). The lanes that
/// leave wait after the loop, and the lanes that stay run the loop's blocks together, one
/// iteration at a time: the branch splits no group of lanes inside the loop (its values
/// still vary after it, by temporal divergence).
fn lockstep_exit(cfg: &Cfg, c: BlockId) -> Option<usize> {
    let mut succs = cfg.succs[c as usize].clone();
    succs.dedup();
    if succs.len() != 2 {
        return None;
    }
    let left: Vec<usize> = (0..cfg.loops.len()).filter(|k| cfg.loops[*k].1.contains(&c) && succs.iter().any(|s| !cfg.loops[*k].1.contains(s))).collect();
    let outer = *left.iter().max_by_key(|k| cfg.loops[**k].1.len())?;
    let inside = succs.iter().filter(|s| cfg.loops[outer].1.contains(s)).count();
    (inside <= 1 && left.iter().all(|k| cfg.lockstep(*k))).then_some(outer)
}

/// Analyzes function `f` for warps that are rows of the block ([`Layout::Rows`]).
pub fn analyze(f: &Func) -> Uniformity {
    analyze_for(f, Layout::Rows)
}

/// Analyzes function `f` for warps of `layout`.
pub fn analyze_for(f: &Func, layout: Layout) -> Uniformity {
    let cfg = Cfg::new(f);
    let n = f.blocks.len();
    let loops = cfg.loops.len();
    let mut a = Analysis { f, layout, cfg, values: vec![Shape::Unknown; f.values.len()], joins: vec![false; n], divergent_loop: vec![false; loops] };
    a.run();
    let divergent: Vec<bool> = (0..n as BlockId).map(|b| a.cfg.order[b as usize] != u32::MAX && a.branch_divergent(b)).collect();
    // The divergent branches whose region holds each block.
    let mut regions: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for &b in &a.cfg.rpo {
        if divergent[b as usize] {
            let stays = lockstep_exit(&a.cfg, b).map(|k| &a.cfg.loops[k].1);
            for x in a.cfg.region(b) {
                if !stays.map_or(false, |l| l.contains(&x)) {
                    regions[x as usize].push(b);
                }
            }
        }
    }
    let group = (0..n)
        .map(|b| match regions[b].as_slice() {
            _ if a.cfg.order[b] == u32::MAX => Group::Mixed,
            [] => Group::All,
            [c] if regions[*c as usize].is_empty() => {
                let from: Vec<u32> = (0..a.cfg.succs[*c as usize].len() as u32).filter(|k| a.cfg.side(*c, *k as usize).contains(&(b as BlockId))).collect();
                match from.as_slice() {
                    [k] => Group::Arm(*c, *k),
                    _ => Group::Mixed,
                }
            }
            _ => Group::Mixed,
        })
        .collect();
    // Parameters of a `.func` are per-thread values.
    for (k, info) in f.values.iter().enumerate() {
        if info.def == Def::Param {
            a.values[k] = Shape::Varying;
        }
    }
    let values = a.values.iter().map(|s| if *s == Shape::Unknown { Shape::Uniform } else { *s }).collect();
    Uniformity { cfg: a.cfg, values, divergent, group, divergent_loop: a.divergent_loop, regions, layout, joins: a.joins }
}

impl Uniformity {
    /// Whether block `b` lies in a loop with a divergent exit.
    pub fn in_divergent_loop(&self, b: BlockId) -> bool {
        self.cfg.loops.iter().zip(&self.divergent_loop).any(|((_, l), d)| *d && l.contains(&b))
    }

    /// Whether the edge `b -> t` leaves a loop with a divergent exit.
    pub fn leaves_divergent_loop(&self, b: BlockId, t: BlockId) -> bool {
        self.cfg.loops.iter().zip(&self.divergent_loop).any(|((_, l), d)| *d && l.contains(&b) && !l.contains(&t))
    }

    /// The shape of value `v` as read in block `at` (varying after a loop with a divergent
    /// exit that defines it).
    pub fn value_at(&self, f: &Func, v: ValueId, at: BlockId) -> Shape {
        View { f, cfg: &self.cfg, values: &self.values, divergent_loop: &self.divergent_loop, layout: self.layout }.read(v, at)
    }

    /// The shape of an operand read in block `at`, with temporal divergence at loop exits.
    pub fn operand_shape(&self, f: &Func, o: &Opnd, at: BlockId) -> Shape {
        View { f, cfg: &self.cfg, values: &self.values, divergent_loop: &self.divergent_loop, layout: self.layout }.operand(o, at)
    }

    /// How the lanes access memory at `inst` (`ld`, `st`, `atom`, `red`, ...): from the
    /// shape of its address operand and the access size.
    pub fn access(&self, f: &Func, inst: &super::Inst, at: BlockId) -> Option<Access> {
        let addr = inst.operands.iter().find(|o| matches!(o, Opnd::Addr(..)))?;
        let size: i64 = {
            let ty = crate::codegen::types_of(inst.src).first().copied()?;
            let n = inst.src.mods.iter().find_map(|m| m.strip_prefix('v').and_then(|d| d.parse::<i64>().ok())).unwrap_or(1);
            ty.size() as i64 * n
        };
        Some(match self.operand_shape(f, addr, at) {
            Shape::Uniform | Shape::Unknown => Access::Uniform,
            // (In a tile warp, rows of consecutive elements anywhere: each row is one vector
            // of the lane loop over its 16 lanes, `codegen::warp`.)
            Shape::Affine(Stride { x, .. }) if x == size => Access::Consecutive,
            Shape::Affine(Stride { x: 0, r }) => Access::PerRow(r),
            Shape::Affine(Stride { x, .. }) => Access::Strided(x),
            Shape::Varying => Access::Gather,
        })
    }
}
