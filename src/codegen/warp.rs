//! Warp-vector execution: one instance of the kernel's code runs the 32 lanes of a warp
//! together.
//!
//! The unit of code is a warp: a run of 32 consecutive `%tid.x` in one row of the block
//! (`x0 .. x0+31` at one `%tid.y`, `%tid.z`; a true warp when `%ntid.x` is a multiple of 32,
//! and in a kernel without warp-level operations a grouping whose results are those of any
//! other). A kernel that reads `%tid.y`/`%tid.z` also gets a version for blocks at most 16
//! threads wide ([`choose_narrow`]): warps of one row in 16-lane loops, or with warp
//! collectives the hardware's warps of two 16-wide rows (`Layout::Tile`, whose lane loops of
//! vector instructions run both rows in one loop over `%tid.x`: [`jam_rows`]). Per IR block, from
//! the uniformity analysis (`ir::uniformity`):
//!
//! - **Storage** is per register web ([`Plan::web`]): the values a phi joins, and an
//!   instruction's result with what it reads of the same register, share one; a register
//!   reused for unrelated values gets one storage per use.
//! - **Uniform instructions** of blocks that a known group of lanes runs together
//!   (`Uniformity::group`) run once per warp, in scalars: pure arithmetic on uniform
//!   registers, kernel parameters, `.const` loads. A web all of whose definitions are such
//!   instructions lives in one scalar; an exactly affine one (`base + stride * lane` modulo
//!   its width) keeps its base there and a lane reads `base + stride * lane`; an anchored
//!   one (`u + R` stepped by uniform amounts, `R` recomputed where read: [`Plan::anchored`])
//!   keeps its scalar part there and a lane reads `scalar + R`.
//! - **Everything else** runs in a *lane loop*, `for l in 0..32 if next[l] == this block`,
//!   each other web in an array of 32 lanes indexed by `l`. The loop has a constant trip
//!   count and independent iterations (marked parallel, `passes::parallel_lanes`), so LLVM
//!   vectorizes it: the lane loop is the SIMD vector, and a loop of one thread (a k loop, a
//!   grid-stride loop) is a scalar loop around vector code. A read of a copy of a special
//!   register, or of a pure function of special registers and parameters, recomputes it
//!   there, so that LLVM sees the lane's address arithmetic.
//! - **Control flow.** `next[l]` is each lane's next block (its number in `Cfg::rpo`, which
//!   keeps each loop's blocks together; `DONE` once the lane has exited). A block whose lanes
//!   all leave it the same way branches there directly, the way a scalar program does. An
//!   acyclic region of a divergent branch runs inside the branch's lane loop, each lane on
//!   its own path. Otherwise the warp returns to a dispatch that runs the block with the
//!   lowest number any lane waits for: lanes that diverged run their paths one after another
//!   and meet again at the first block both reach, and the lanes still in a loop run each of
//!   its iterations together (`Cfg::lockstep`). Each lane runs exactly its own path,
//!   instruction by instruction, so every instruction keeps its semantics.
//! - **CTA barriers.** The warps of a CTA run in phases: each to its next barrier, where it
//!   saves the webs live across it to its frame ([`setup`], [`finish`]).
//!
//! - **Warp collectives** (`warp_collective`: shuffles, votes, ..., and the warp matrix
//!   instructions) run on the lanes that reach their block together, all at once (the
//!   matrix instructions only where every lane that has not ended runs them together:
//!   `warp_collective::runs_diverged`); a kernel with collectives also gets its per-thread version, which runs CTAs
//!   whose rows are not hardware warps, and (without matrix instructions) a version for
//!   rows of whole warps, in which every lane exists ([`whole_dispatch`]). Consecutive independent `mma`/`wmma.mma` (a GEMM's
//!   accumulators) share one pair of exchange loops (`warp_collective::matrix_batch_len`).
//! - **Lane loops without a per-lane test**: in a converged block the lanes not waiting
//!   for it have ended, so a run of instructions that only compute registers may run for
//!   all 32 lanes ([`unguarded_run`]); LLVM keeps such a loop whole for its vectorizer.
//!   Predicates of this path are kept as bytes (`FnEmitter::storage_t`).
//!
//! - **Per-thread variables** (`.local`, a call's `.param`) have a copy per lane
//!   ([`new_lane_var`]).
//!
//! - **Warp-synchronous code** (volatile shared accesses without barriers) gets the
//!   lockstep result: a lane loop ends where a later lane could otherwise see a value of the
//!   next step ([`lockstep_meet`]).
//!
//! - **Spin loops** that are uniform (every live lane polls the same word and leaves with
//!   the others) yield the warp at their back edge, so that the warp they wait for runs
//!   ([`spin_yields`]). In others the lanes that go round again park at the header
//!   ([`PARKED`], [`Plan::parks`]) while the warp's other lanes run on, and the warp yields
//!   when only parked lanes are left ([`unpark`]).
//!
//! Kernels this path does not take yet (spin loops whose parked lanes would meet a warp
//! collective or a second barrier, CTA barriers where lanes may have diverged, irreducible
//! control flow, ...), with the
//! reason `ptxr compile --report` prints, run on the per-thread path (`--exec thread`
//! forces it for every kernel).

use super::func::{reg_t, FnEmitter, R};
use crate::ir::uniformity::{self, Group, Shape, Stride, Uniformity};
pub use crate::ir::uniformity::Layout;
use crate::ir::{BlockId, Def, Func, Opnd, Term};
use crate::syntax::ast::StateSpace;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{IntValue, PhiValue, PointerValue};
use inkwell::types::BasicType;
use inkwell::IntPredicate;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};

/// Lanes of a warp.
pub const LANES: u32 = 32;
/// The most lane arrays a warp-path function zeroes at the top of its warp loop ([`finish`]).
const ZEROED_LANE_ARRAYS: usize = 64;
/// `next[l]` of a lane that has exited.
pub const DONE: u64 = 0xFFFF_FFFF;
/// `next[l]` of a lane parked at the header of a spin loop ([`Plan::parks`]) is this plus
/// the header's number: after every block, before `DONE`.
pub const PARKED: u64 = 0x8000_0000;
/// Metadata kind on the allocas that hold one element per lane (`passes::parallel_lanes`
/// lets the lane loops access them in parallel).
pub const LANE_ARRAY: &str = "ptxr.lanes";

/// Which execution path kernels take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exec {
    /// The warp path for every kernel it runs, except kernels with a few warp matrix
    /// instructions ([`MATRIX_SITES_PER_THREAD`]), whose per-thread code is smaller; the
    /// per-thread path for the others.
    Auto,
    /// Warp-vector code wherever the kernel allows it, else per-thread code.
    Simd,
    /// Per-thread code for every kernel (the exact reference path).
    Thread,
}

impl Exec {
    pub fn parse(s: &str) -> Option<Exec> {
        match s {
            "auto" => Some(Exec::Auto),
            "simd" => Some(Exec::Simd),
            "thread" => Some(Exec::Thread),
            _ => None,
        }
    }
}

thread_local! {
    static EXEC: Cell<Option<Exec>> = const { Cell::new(None) };
}

/// The execution path of kernels compiled on this thread from now on.
pub fn set_exec(e: Exec) {
    EXEC.with(|c| c.set(Some(e)));
}

/// The path [`set_exec`] set on this thread, if any (to restore it after a change).
pub fn exec_set() -> Option<Exec> {
    EXEC.with(|c| c.get())
}

/// Sets or clears ([`None`]) this thread's path as [`exec_set`] returned it.
pub fn restore_exec(e: Option<Exec>) {
    EXEC.with(|c| c.set(e));
}

/// The path set by [`set_exec`], else `$PTXR_EXEC` (`auto`, `simd` or `thread`), else `auto`.
pub fn exec() -> Exec {
    EXEC.with(|c| c.get()).unwrap_or_else(|| std::env::var("PTXR_EXEC").ok().and_then(|s| Exec::parse(&s)).unwrap_or(Exec::Auto))
}

/// Kernels with at most this many warp matrix instructions stay per thread under `auto`.
pub const MATRIX_SITES_PER_THREAD: usize = 8;

/// Whether a kernel that the warp path can run takes it under `exec` (see [`Exec::Auto`]).
pub fn takes_warp_path(exec: Exec, plan: &Plan) -> Result<(), String> {
    match exec {
        Exec::Thread => Err("forced by --exec thread".into()),
        // Kernels with warp collectives stay on this path whatever their barriers: per
        // thread, each collective is a meeting of the scheduler (NVRTC's block scan, warp
        // shuffles between two barriers: 0.08 s here against 0.97 s per thread, same run).
        // Kernels with CTA barriers take it too (NVRTC's block bitonic sort 0.40 s here
        // against 0.58 s per thread, the block reduction and the 1-D stencil as fast on
        // either; `scripts/bench-kernels.sh 3 paths`), and so do loops of atomics (a
        // shared-memory histogram, two cores, same runs: 0.026-0.028 s here against
        // 0.027-0.033 s per thread, since its grid-stride loads prefetch a round ahead and its
        // lane loop of atomics runs untested when every lane is in it; it compiles in a third
        // of the time). So do kernels that index by %tid.y or %tid.z, whose narrow blocks
        // run the kernel's version for them (`choose_narrow`; tiled sgemm in 16x16 blocks:
        // 1.98x of C in half-empty warps, 1.08x-1.10x in warps of one row, as fast as per
        // thread in alternating runs), and
        // whose blocks 32 threads wide run full warps (NVRTC's tiled transpose in 32x8 blocks,
        // same run: 0.023 s here against 0.028 s per thread).
        // Warp matrix instructions take the warp path once there are more than a few: each is
        // a warp meeting, and the per-thread scheduler saves and reloads every live register
        // at each meeting (a GEMM with 64 `mma.sync` per k step compiled in 40 s per thread,
        // 0.8 s on this path), while the warp path carries a fixed cost (the per-thread
        // version for blocks whose rows are not warps, the exchange's lane loops): NVRTC's
        // wmma GEMMs, one to five `wmma.mma`, compile in 0.38 s per thread and 0.53 s here.
        // Both paths run them as fast (a 512^3 wmma GEMM in about 0.15 s). An earlier
        // pipeline-fuzz campaign (seed 20261127) saw 3 of 13000 mutated wmma kernels die of a
        // signal on this path, likely the undefined-value branch that `Plan::undef_webs` now
        // prevents; the campaigns since are in the README.
        // A compare-and-swap retry loop on one word for the whole warp (an `atomicAdd` on a
        // double emulated with `atomicCAS` into one total) runs lane by lane to completion
        // ([`Plan::serial`]); one that cannot (`Plan::contended_cas`) stays per thread: run in
        // warp-wide rounds, each round lets one lane swap and every later lane fail on a stale
        // value, 528 CAS for 32 lanes where threads one after another need 32 (2^20 such adds:
        // 0.31 s in rounds, 0.08 s per thread). A CAS on a word per lane (a scatter) runs in
        // rounds.
        Exec::Auto if plan.contended_cas.is_some() => Err(format!("its compare-and-swap retry loop (line {}) updates one word for the whole warp and cannot run lane by lane, which threads one after another retry less often (--exec simd forces the warp path)", plan.contended_cas.unwrap())),
        Exec::Auto if plan.matrix && plan.matrix_sites <= MATRIX_SITES_PER_THREAD => Err(format!("{} warp matrix instruction(s): per thread they cost less code than the warp path's fixed part (up to {MATRIX_SITES_PER_THREAD}; --exec simd forces the warp path)", plan.matrix_sites)),
        // Warp collectives without barriers take the warp path too: the shuffle reduction of
        // one element per thread runs 1.14x of C there against 1.06x-1.13x per thread (same
        // run), and such kernels compile in half the time (NVRTC's warp_reduce.cu: 0.11 s
        // against 0.28 s).
        _ => Ok(()),
    }
}

/// The warp-vector plan of kernel `f` (its IR, its body) when it takes that path under
/// `exec`; else why it runs per thread. `sync_funcs`: the module's functions that
/// synchronize (`lanes::sync_funcs`).
pub fn choose(f: &Func, body: &[crate::syntax::ast::Stmt], sync_funcs: &HashSet<&str>, exec: Exec) -> Result<Plan, String> {
    choose_in(f, body, sync_funcs, exec, Layout::Rows)
}

/// [`choose`] for warps of `layout`.
fn choose_in(f: &Func, body: &[crate::syntax::ast::Stmt], sync_funcs: &HashSet<&str>, exec: Exec, layout: Layout) -> Result<Plan, String> {
    if exec == Exec::Thread {
        return Err("forced by --exec thread".into());
    }
    let mut calls = Vec::new();
    crate::lanes::callees(body, &mut calls);
    if let Some(c) = calls.iter().find(|c| sync_funcs.contains(*c)) {
        return Err(format!("calls `{c}`, which synchronizes and is not inlined (a guarded or recursive call, or one that would change what a name means: see syntax::inline; the per-thread scheduler inlines it)"));
    }
    let spins = crate::lanes::lockstep::spin_loops_warp(body);
    let cas = crate::lanes::lockstep::cas_retry_loops(body);
    let plan = plan(f, layout, &spins, &cas)?;
    takes_warp_path(exec, &plan)?;
    Ok(plan)
}

/// Whether `f` reads `%tid.y` or `%tid.z`.
fn reads_tid_yz(f: &Func) -> bool {
    f.blocks.iter().any(|b| b.insts.iter().any(|i| i.operands.iter().any(|o| matches!(o, Opnd::Name(n) if n == "%tid.y" || n == "%tid.z"))))
}

/// The plan of kernel `f`'s version for narrow blocks, which its main version calls for
/// blocks at most 16 threads wide ([`narrow_dispatch`]); else why it has none.
///
/// The main version's warps are runs of 32 `%tid.x` in one row: in a block 16 threads wide,
/// warps with their upper half empty (twice the vector work and the per-warp costs: tiled
/// sgemm in 16x16 blocks ran 1.98x of C, against 1.12x per thread), and for a kernel with
/// warp collectives not the hardware's warps (it runs its per-thread version). This version
/// has:
/// - without warp collectives or CTA barriers, warps of one row ([`Layout::Rows`], the main
///   version's analysis) whose lane loops run 16 lanes (one AVX-512 vector of 32-bit
///   lanes); any grouping of threads gives the same results there;
/// - with either, two rows of 16 ([`Layout::Tile`], for blocks with an even number of
///   rows; with collectives the hardware's warps): each lane loop runs a row's 16 lanes,
///   `%tid.x` its index, for both rows ([`jam_rows`]). Affine values step by constants per
///   lane of a row and per row ([`Stride`]); a pointer stepped in a loop whose rows lie a
///   runtime amount apart (`A[(16 by + ty) * n + t * 16 + tx]`, `n` a parameter) is held
///   as a scalar and a lane part that each row recomputes ([`anchored_webs`]), a
///   consecutive access per row. A kernel with barriers runs half as many warps so, and
///   the per-warp costs of its phases (dispatch, frames, masks) halve: the tiled sgemm in
///   16x16 blocks, one core, alternating 3x, 0.091-0.095 s against 0.107-0.111 s in warps
///   of one row (before the anchored lane parts its loads were gathers and tile warps
///   1.4x slower). Without barriers those costs are small and tile warps gain nothing: a
///   5-point stencil in 16x16 blocks ran 0.0235 s against 0.017-0.020 s in warps of one
///   row. (A kernel with barriers but no collectives whose tile plan fails keeps warps of
///   one row; its blocks at most 16 wide that are not pairs of 16-wide rows run the main
///   version, whose warps of one row are 32 lanes wide, rather than a third version
///   compiled for them: each version costs a compilation, about 60 ms of the sgemm's.)
///
/// Only kernels that read `%tid.y` or `%tid.z` get one: others are rarely launched in 2-D
/// blocks, and a second version costs a second compilation.
pub fn choose_narrow(f: &Func, body: &[crate::syntax::ast::Stmt], sync_funcs: &HashSet<&str>, exec: Exec) -> Result<Plan, String> {
    if !reads_tid_yz(f) {
        return Err("does not read %tid.y or %tid.z".into());
    }
    let rows = choose_in(f, body, sync_funcs, exec, Layout::Rows)?;
    if !rows.collectives && rows.barriers.is_empty() {
        return Ok(rows);
    }
    match choose_in(f, body, sync_funcs, exec, Layout::Tile) {
        Err(_) if !rows.collectives => Ok(rows),
        tile => tile,
    }
}

/// Whether kernel `f` is never launched in blocks at most 16 threads wide: its `.reqntid`
/// is wider (the launch checks it), and it gets no version for narrow blocks.
pub fn never_narrow(f: &crate::syntax::ast::Function) -> bool {
    reqntid_x(f).map_or(false, |x| x > TILE_ROW)
}

/// Whether every block kernel `f` runs in has rows of whole warps: its `.reqntid` is a
/// multiple of 32 wide (the launch refuses other blocks).
pub fn whole_rows(f: &crate::syntax::ast::Function) -> bool {
    reqntid_x(f).map_or(false, |x| x > 0 && x % LANES as u32 == 0)
}

/// The block width kernel `f` requires (`.reqntid`), if it does.
fn reqntid_x(f: &crate::syntax::ast::Function) -> Option<u32> {
    f.perf.iter().find_map(|d| match d {
        crate::syntax::ast::PerfDirective::ReqNTid(n) => n.first().copied(),
        _ => None,
    })
}

/// Whether the warp being emitted is partial: its row ends before its lane 31. A constant
/// false for a tile warp (two whole rows of 16) and where every row is whole warps
/// ([`Plan::whole_rows`]).
pub(crate) fn partial_warp<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let ctx = e.ctx();
    if e.warp.as_ref().map_or(false, |w| w.tile || w.plan.whole_rows) {
        return ctx.bool_type().const_zero();
    }
    let i32t = ctx.i32_type();
    let ntx = e.load_cta_u32(super::abi::field::NTID, Some(0));
    let x0 = e.warp.as_ref().map(|w| w.x0).unwrap_or(e.tid[0]);
    let left = e.b.build_int_sub(ntx, x0, "").unwrap();
    e.b.build_int_compare(IntPredicate::ULT, left, i32t.const_int(LANES as u64, false), "partial.warp").unwrap()
}

/// At the start of a kernel's main version (the builder at the end of its `setup` block):
/// narrow blocks run the kernel's version for them ([`choose_narrow`], whose warps are of
/// `layout`): blocks at most 16 threads wide for warps of one row, 16 threads wide with an
/// even number of rows for tile warps. Returns the block where the other shapes continue.
pub(crate) fn narrow_dispatch<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, layout: Layout) -> BasicBlock<'ctx> {
    use super::abi::field;
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let ntx = e.load_cta_u32(field::NTID, Some(0));
    let take = match layout {
        Layout::Rows => e.b.build_int_compare(IntPredicate::ULE, ntx, i32t.const_int(TILE_ROW as u64, false), "narrow").unwrap(),
        Layout::Tile => {
            let nty = e.load_cta_u32(field::NTID, Some(1));
            let wide16 = e.b.build_int_compare(IntPredicate::EQ, ntx, i32t.const_int(TILE_ROW as u64, false), "").unwrap();
            let even = e.b.build_int_compare(IntPredicate::EQ, e.b.build_and(nty, i32t.const_int(1, false), "").unwrap(), i32t.const_zero(), "").unwrap();
            e.b.build_and(wide16, even, "tiles").unwrap()
        }
    };
    call_version(e, take, super::func::NARROW_VERSION)
}

/// Whether the main version of a kernel with plan `plan` (rows of the block as warps) calls a
/// version for blocks whose rows are whole warps ([`whole_dispatch`]): a kernel with warp
/// collectives and no matrix instructions, whose `.reqntid` does not make its main version
/// that already ([`Plan::whole_rows`]).
pub fn has_whole_version(plan: &Plan) -> bool {
    plan.collectives && !plan.matrix && !plan.whole_rows && plan.uni.layout == Layout::Rows
}

/// In the main version of a kernel with warp collectives ([`has_whole_version`]), after the
/// per-thread version has taken the blocks whose rows are not warps: blocks whose rows are
/// whole warps (`%ntid.x` a multiple of 32, as good as every launch) run the kernel's version
/// in which every lane of every warp exists, a constant for LLVM ([`Plan::whole_rows`]);
/// the main version runs one-row blocks that end in a partial warp. Its active-lane masks,
/// shuffles' partial-warp tests and lane loops' tests otherwise start from a compare of each
/// lane's `%tid.x` with `%ntid.x`: NVRTC's shuffle reduction and block scan, one core, old
/// and new builds alternating, 0.0215-0.0235 s -> 0.0178-0.0183 s and 0.050-0.053 s ->
/// 0.046-0.049 s.
fn whole_dispatch<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, ntx: IntValue<'ctx>) {
    let i32t = e.ctx().i32_type();
    let low = e.b.build_and(ntx, i32t.const_int(31, false), "").unwrap();
    let whole = e.b.build_int_compare(IntPredicate::EQ, low, i32t.const_zero(), "whole.warps").unwrap();
    call_version(e, whole, super::func::WHOLE_VERSION);
}

/// Where `take` holds, returns what the kernel's other version (the CTA function with
/// `suffix`, declared here, emitted by `codegen::emit_module`) returns for the CTA; returns
/// the block where the code for the other launches continues (the builder at its end).
fn call_version<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, take: IntValue<'ctx>, suffix: &str) -> BasicBlock<'ctx> {
    let ctx = e.ctx();
    let name = format!("{}{}", super::func::cta_symbol(e.fname), suffix);
    let other = e.m.module.get_function(&name).unwrap_or_else(|| e.m.module.add_function(&name, e.f.get_type(), None));
    let call = ctx.append_basic_block(e.f, "other.version");
    let rest = ctx.append_basic_block(e.f, "this.version");
    e.b.build_conditional_branch(take, call, rest).unwrap();
    e.b.position_at_end(call);
    let r = e.b.build_call(other, &[e.cta.into()], "").unwrap().try_as_basic_value().basic().unwrap();
    e.b.build_return(Some(&r)).unwrap();
    e.b.position_at_end(rest);
    rest
}

/// What the warp path needs to know about a kernel.
pub struct Plan {
    pub uni: Uniformity,
    /// Register variables (declaring scope, name) held in one scalar per warp: uniform ones,
    /// and the affine ones of `affine`.
    pub scalar_vars: HashSet<(u32, String)>,
    /// Scalar variables that hold `base + stride * lane` exactly (in their own width): the
    /// scalar is the base, lane `l` reads `base + stride.at(l)` ([`Stride`]).
    pub affine: HashMap<(u32, String), Stride>,
    /// Scalar variables whose lane `l` holds the scalar plus `R` of lane `l`, for a value `R`
    /// that a read recomputes ([`Plan::remat`]): web → `R`. See [`anchored_webs`].
    pub anchored: HashMap<(u32, String), u32>,
    /// Per block, per instruction: it runs once per warp.
    pub scalar_inst: Vec<Vec<bool>>,
    /// The CTA barriers (block, instruction index) and the variables live across each: the
    /// warps of a CTA then run in phases between barriers, each keeping those in a frame.
    pub barriers: Vec<((BlockId, usize), Vec<(u32, String)>)>,
    /// One of `barriers` is `barrier.cluster.wait` (`abi::CLUSTER_BARRIER`): the end of a
    /// phase then meets the cluster's other CTAs when every warp waits there.
    pub cluster_barrier: bool,
    /// The latches of the loops whose back edges yield to the CTA's next warp
    /// ([`YIELD_EVERY`]), each with the variables a warp keeps in its frame there.
    pub yields: Vec<(BlockId, Vec<(u32, String)>)>,
    /// Spin loops whose lanes park ([`spin_yields`]): header, latch (one entry per way back),
    /// and the variables a warp keeps in its frame when it yields with only parked lanes left. A lane that goes round
    /// again records `PARKED + header` as its next block, which the dispatch reaches only
    /// once no lane waits for a real block ([`unpark`]).
    pub parks: Vec<(BlockId, BlockId, Vec<(u32, String)>)>,
    /// The CTA barrier after the parking loops, if any ([`park_barrier`]): lanes that reach it
    /// while others of their warp are parked wait there for them ([`park_at_barrier`]).
    pub park_barrier: Option<(BlockId, usize)>,
    /// The line of the CAS of a compare-and-swap retry loop whose address is the same for
    /// every lane (`lanes::lockstep::cas_retry_loops`) and that cannot run lane by lane
    /// ([`Plan::serial`]): see [`takes_warp_path`].
    pub contended_cas: Option<u32>,
    /// Loops that each lane runs to completion on its own, one lane after another inside
    /// one lane loop at the header, as a thread would ([`serial_loops`]): header → the
    /// loop's blocks in dispatch order (the header first).
    pub serial: HashMap<BlockId, Vec<BlockId>>,
    /// Per block: it is one of a `serial` loop's blocks (its header included).
    pub in_serial: Vec<bool>,
    /// Some barrier counts threads (`bar.sync a, b`, `bar.arrive a, b`): the warps wait by
    /// count ([`Counted`]).
    pub counted: bool,
    /// Webs that hold a value read before any write on some path (`Def::Undef`): their
    /// storage starts zeroed, so that such a read is some value (a GPU's register holds
    /// whatever it held) and not LLVM's undefined value, a branch on which is undefined
    /// behaviour (a mutated kernel branching on such a predicate ran a lane loop past its
    /// array).
    pub undef_webs: HashSet<(u32, String)>,
    /// The kernel has loops without barriers, and none of them holds atomics or reductions:
    /// a thread's own loops that the warp path vectorizes and the per-thread scheduler does
    /// not (in a
    /// kernel with barriers, `--exec auto` takes the warp path only then: measured on a
    /// row softmax, 2.3x of C against 6.0x per thread, while a tiled sgemm and a shared
    /// histogram, whose loops hold barriers or atomics, run faster per thread).
    pub barrier_free_loop: bool,
    /// Divergent branches whose region runs inside the branch's lane loop, each lane on its
    /// own path (LLVM predicates it), instead of through the dispatch: branch → (the
    /// region's blocks in dispatch order, the reconvergence point).
    pub inline: HashMap<BlockId, (Vec<BlockId>, BlockId)>,
    /// The kernel reads `%tid.y` or `%tid.z`.
    pub reads_tid_yz: bool,
    /// Per block: it runs inside another block's lane loop (a block of an `inline` region).
    pub inlined: Vec<bool>,
    /// Per value: its web, the values that share storage (a phi with its operands, an
    /// instruction's result with what it reads of the same register); the storage key of a
    /// value is its register and web ([`Plan::key`]). A register reused for unrelated values
    /// (NVRTC reuses `%r` registers freely) gets one storage per use, each its own shape.
    pub web: Vec<u32>,
    /// How many values each web (web, register) holds.
    pub web_values: HashMap<(u32, u32, String), u32>,
    /// Values that copy a special register (`mov.u32 %r, %tid.x`), which a read takes from
    /// the special register itself: the copy's web may be a lane array (the register is
    /// reused later), the special register is uniform or affine wherever it is read.
    pub copies: HashMap<u32, (BlockId, usize)>,
    /// Values kept in lane arrays that a read recomputes instead, from special registers,
    /// kernel parameters and constants through pure integer arithmetic and comparisons (an
    /// address such as `As + 4 * %tid.x` widened by `mul.wide`, computed once and read in later
    /// lane loops; `%laneid < 4`): recomputed where it is read, it shows LLVM the lane's
    /// address arithmetic, so the access is a vector access rather than a gather, and a warp
    /// does not keep it in its frame across barriers.
    pub remat: HashSet<u32>,
    /// The kernel has warp collectives (`warp_collective`): its warps must be the
    /// hardware's (runs of 32 in the linear thread index), which rows of the block are
    /// when `%ntid.x` is a multiple of 32 or the block is one row; for other shapes a CTA
    /// runs the kernel's per-thread version.
    pub collectives: bool,
    /// The kernel has warp matrix instructions (`mma`, `wmma.mma`, `ldmatrix`, `stmatrix`).
    pub matrix: bool,
    /// How many.
    pub matrix_sites: usize,
    /// `.param` variables whose scope spans blocks or a barrier: in a kernel whose warps run
    /// in phases, their lanes' copies live in the warp's frame ([`new_lane_var`]).
    pub frame_params: HashSet<String>,
    /// Every row of every block this version runs is a whole number of warps: the kernel's
    /// `.reqntid` (which the launch checks) is a multiple of 32 wide, or this is its version
    /// for such blocks ([`whole_dispatch`]). Each lane of each warp
    /// then exists, a constant for LLVM ([`setup`]), instead of a compare of the lanes'
    /// `%tid.x` with `%ntid.x` that every mask, shuffle and lane loop of the warp inherits.
    pub whole_rows: bool,
    /// For tile warps ([`Layout::Tile`]): the memory accesses (block, index) that are
    /// consecutive within a row, as the analysis for warps of one row finds them, though
    /// their rows lie a runtime amount apart (the tiled sgemm's loads of A and B), which this
    /// layout's analysis calls gathers: they are prefetched row by row ([`prefetch_bytes`]).
    pub row_consecutive: HashSet<(BlockId, usize)>,
}

impl Plan {
    /// Whether web `key` holds one value for every lane (a scalar that is neither affine nor
    /// anchored).
    pub fn uniform_web(&self, key: &(u32, String)) -> bool {
        self.scalar_vars.contains(key) && !self.affine.contains_key(key) && !self.anchored.contains_key(key)
    }

    /// The storage key of value `v`: (declaring scope, `register#web`).
    pub fn key(&self, f: &Func, v: u32) -> (u32, String) {
        let info = &f.values[v as usize];
        (info.var.0, format!("{}#{}", info.var.1, self.web[v as usize]))
    }
}

/// Whether a lane loop computes special register `n` from the lane alone: uniform and affine
/// ones (in a [`Layout::Tile`] warp `%tid.x` and `%tid.y` too: a row's index in the loop over
/// 16 consecutive `%tid.x`, and its row).
fn lane_computable(n: &str, layout: Layout) -> bool {
    matches!(uniformity::special_shape(n, layout), Shape::Uniform | Shape::Affine(_))
}

/// Webs that hold `S + R` in each lane, for one scalar `S` per warp and a value `R` that a
/// read recomputes in the lane ([`Plan::remat`]): a pointer started at a lane's address and
/// stepped by uniform amounts in a loop (`add.s64 %rd30, %rd1, %rd20` with `%rd20 =
/// mul.wide.s32` of `%tid.x` plus uniform terms, then `add.s64 %rd30, %rd30, %rd5` each
/// iteration). Such a web is not exactly affine (the sign extension of `base + lane` differs
/// from `sext(base) + lane` where the 32-bit sum wraps inside the warp), so it would be a
/// lane array and each access through it a gather; held as `S` and read as `S + R`, the
/// lane's address is `R`'s arithmetic, which LLVM vectorizes as a consecutive access (with
/// a runtime check that the 32-bit sum does not wrap). Exact: every definition of the web is
/// `add d, u, R` (`S = u`), `mov d, R` (`S = 0`), `add`/`sub d, w, u` or `mov d, w` of an anchored `w` on the same
/// `R` (`S = S_w ± u`: `(w + u) = (S_w + u) + R` modulo 2^n), or a phi of the web, with `u`
/// uniform; each runs once per warp for the lanes that run its block together (the block's
/// group is known and not inside a lane loop, and every value of the web is affine in the
/// analysis, which no divergent join is). Returns the webs with their `R`, and the
/// instructions (block, index) that define them.
fn anchored_webs(
    f: &Func,
    uni: &Uniformity,
    scalar: &HashSet<(u32, String)>,
    remat: &HashSet<u32>,
    inlined: &[bool],
    var_of: &dyn Fn(u32) -> (u32, String),
) -> (HashMap<(u32, String), u32>, HashSet<(BlockId, usize)>) {
    let uniform = |o: &Opnd| match o {
        Opnd::Imm(_) => true,
        Opnd::Val(v) => uni.values[*v as usize] == Shape::Uniform && scalar.contains(&var_of(*v)),
        _ => false,
    };
    // Values whose lanes hold their own value by arithmetic alone, not by a divergent join:
    // affine ones, and in tile warps also values of a runtime amount per row (`%tid.y * n +
    // %tid.x`, `n` a parameter), which the loop over a row's lanes sees as affine (the row
    // is the loop's constant: [`jam_rows`]) though the analysis, whose strides are
    // constants, calls them varying. A phi varies by a join only in a join block.
    let lane_shaped = |v: u32| match uni.values[v as usize] {
        Shape::Affine(_) => true,
        Shape::Varying => uni.layout == Layout::Tile && !matches!(f.values[v as usize].def, Def::Phi { block } if uni.joins[block as usize]),
        _ => false,
    };
    let lane_part = |o: &Opnd| matches!(o, Opnd::Val(v) if remat.contains(v) && lane_shaped(*v));
    // Candidate definitions: (block, index, def, how) with how = Ok(R) for `add d, u, R`,
    // Err(w) for a step from value `w`.
    let mut cands: Vec<(BlockId, usize, u32, Result<u32, u32>)> = Vec::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        if uni.cfg.order[b] == u32::MAX || uni.group[b] == Group::Mixed || inlined[b] {
            continue;
        }
        for (k, inst) in blk.insts.iter().enumerate() {
            let i = inst.src;
            let [d] = inst.defs.as_slice() else { continue };
            if scalar.contains(&var_of(*d)) || i.guard.is_some() || !hoistable(f, inst) || !exact_affine(inst) || !lane_shaped(*d) {
                continue;
            }
            let val = |o: &Opnd| if let Opnd::Val(v) = o { Some(*v) } else { None };
            let how = match (i.opcode.name, inst.operands.as_slice()) {
                ("add", [_, a, c]) if lane_part(a) && uniform(c) => Ok(val(a).unwrap()),
                ("add", [_, a, c]) if lane_part(c) && uniform(a) => Ok(val(c).unwrap()),
                ("mov", [_, a]) if lane_part(a) => Ok(val(a).unwrap()),
                ("add" | "sub", [_, a, c]) if val(a).is_some() && uniform(c) => Err(val(a).unwrap()),
                ("add", [_, a, c]) if val(c).is_some() && uniform(a) => Err(val(c).unwrap()),
                ("mov", [_, a]) if val(a).is_some() => Err(val(a).unwrap()),
                _ => continue,
            };
            cands.push((b as BlockId, k, *d, how));
        }
    }
    // Each web's `R` (None: not anchored), until no web changes. Not anchored from the start:
    // webs whose every value a read recomputes (nothing to hold: a scalar instruction reading
    // one reads the whole value), and webs read where they vary by temporal divergence (after
    // a loop with a divergent exit).
    let mut anchor: HashMap<(u32, String), Option<u32>> = HashMap::new();
    let mut held: HashSet<(u32, String)> = HashSet::new();
    for v in 0..f.values.len() as u32 {
        if !remat.contains(&v) {
            held.insert(var_of(v));
        }
    }
    for v in 0..f.values.len() as u32 {
        if !held.contains(&var_of(v)) {
            anchor.insert(var_of(v), None);
        }
    }
    for (b, blk) in f.blocks.iter().enumerate() {
        let mut reads: Vec<u32> = blk.phis.iter().flat_map(|p| p.incoming.iter().map(|(_, v)| *v)).collect();
        for inst in &blk.insts {
            reads.extend(inst.reads());
        }
        for v in reads {
            if uni.value_at(f, v, b as BlockId) != uni.values[v as usize] {
                anchor.insert(var_of(v), None);
            }
        }
    }
    for &(_, _, d, how) in &cands {
        if let Ok(r) = how {
            anchor.entry(var_of(d)).and_modify(|x| if *x != Some(r) { *x = None }).or_insert(Some(r));
        }
    }
    loop {
        let mut changed = false;
        // A step from a web anchored on R anchors the web it defines on R.
        for &(_, _, d, how) in &cands {
            if let Err(w) = how {
                let from = anchor.get(&var_of(w)).copied().flatten();
                let key = var_of(d);
                if key == var_of(w) {
                    continue;
                }
                let now = anchor.get(&key).copied();
                let next = match (now, from) {
                    (None, Some(r)) => Some(Some(r)),
                    (Some(Some(x)), Some(r)) if x != r => Some(None),
                    (Some(Some(_)), None) => Some(None),
                    _ => None,
                };
                if let Some(n) = next {
                    anchor.insert(key, n);
                    changed = true;
                }
            }
        }
        // Every value of an anchored web is a phi or a candidate definition on its `R` (a
        // step within the web, or from a web anchored on the same `R`), affine, in one group
        // of lanes, and read nowhere it varies by temporal divergence.
        let defined: HashMap<u32, Result<u32, u32>> = cands.iter().map(|&(_, _, d, how)| (d, how)).collect();
        let mut group: HashMap<(u32, String), Option<Group>> = HashMap::new();
        for (v, info) in f.values.iter().enumerate() {
            let key = var_of(v as u32);
            let Some(Some(r)) = anchor.get(&key).copied() else { continue };
            let ok = lane_shaped(v as u32)
                && match info.def {
                    Def::Phi { .. } => true,
                    Def::Inst { .. } => match defined.get(&(v as u32)) {
                        Some(Ok(x)) => *x == r,
                        Some(Err(w)) => var_of(*w) == key || anchor.get(&var_of(*w)).copied().flatten() == Some(r),
                        None => false,
                    },
                    _ => false,
                };
            let g = match info.def {
                Def::Inst { block, .. } | Def::Phi { block } => Some(uni.group[block as usize]),
                _ => None,
            };
            let same = match group.get(&key) {
                Some(x) => *x == g,
                None => true,
            };
            group.insert(key.clone(), if same { g } else { None });
            if !ok || !same || g.is_none() {
                anchor.insert(key, None);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let webs: HashMap<(u32, String), u32> = anchor.into_iter().filter_map(|(k, r)| r.map(|r| (k, r))).collect();
    let defs = cands.iter().filter(|(_, _, d, _)| webs.contains_key(&var_of(*d))).map(|&(b, k, _, _)| (b, k)).collect();
    (webs, defs)
}

/// The values of `f` that are the same in every thread of the grid wherever they are
/// computed: constants, loads of kernel parameters, `%ntid`, `%nctaid`, addresses of
/// variables, and integer arithmetic, `cvt`, `cvta` (not of `.local`), `setp` and `selp` of
/// such values (phis excluded: which value a phi takes depends on the path there).
fn grid_invariant(f: &Func) -> HashSet<u32> {
    let grid_wide = |n: &str| !n.starts_with('%') || ["%ntid", "%nctaid"].iter().any(|p| n == *p || n.strip_prefix(p).is_some_and(|r| r.starts_with('.')));
    let mut ok: HashSet<u32> = HashSet::new();
    loop {
        let before = ok.len();
        for blk in &f.blocks {
            for inst in &blk.insts {
                let i = inst.src;
                if inst.defs.len() != 1 || ok.contains(&inst.defs[0]) || i.has_mod("cc") || i.guard.is_some() {
                    continue;
                }
                // (A `mov` of any type: the sgemm's `0.0` too.)
                let ints = i.opcode.name == "mov" || super::types_of(i).iter().all(|t| t.is_int() || t.is_bits() || *t == crate::syntax::ast::Type::Pred);
                let op = ints && pure_opcode(f, inst);
                let operands = inst.operands.iter().skip(1).all(|o| match o {
                    Opnd::Imm(_) => true,
                    Opnd::Val(v) => ok.contains(v),
                    Opnd::Name(n) => grid_wide(n) && !uniformity::lane_private(f, n),
                    Opnd::Addr(..) => i.opcode.name == "ld",
                    _ => false,
                });
                if op && operands {
                    ok.insert(inst.defs[0]);
                }
            }
        }
        if ok.len() == before {
            return ok;
        }
    }
}

/// Whether `inst` computes its result from its operands alone, the same wherever it runs:
/// `mov`, integer arithmetic and logic, `cvt`, `setp`, `selp`, `cvta` (not of `.local`) and
/// loads of kernel parameters (the callers check the types).
fn pure_opcode(f: &Func, inst: &crate::ir::Inst) -> bool {
    let i = inst.src;
    match i.opcode.name {
        "mov" | "add" | "sub" | "mul" | "mad" | "shl" | "shr" | "and" | "or" | "xor" | "not" | "neg" | "cvt" | "setp" | "selp" => true,
        "cvta" => !i.has_mod("local"),
        "ld" => uniformity::loads_kernel_param(f, inst),
        _ => false,
    }
}

/// The values a read may recompute (see [`Plan::remat`]).
fn rematerializable(f: &Func, uni: &Uniformity, copies: &HashMap<u32, (BlockId, usize)>) -> HashSet<u32> {
    let pure = |inst: &crate::ir::Inst| -> bool {
        let i = inst.src;
        if inst.defs.len() != 1 || i.has_mod("cc") || inst.operands.iter().any(|o| matches!(o, Opnd::Sel(..) | Opnd::Vector(_) | Opnd::Pair(..))) {
            return false;
        }
        if !super::types_of(i).iter().all(|t| t.is_int() || t.is_bits()) {
            return false;
        }
        let specials_ok = inst.operands.iter().all(|o| !matches!(o, Opnd::Name(n) if n.starts_with('%') && !lane_computable(n, uni.layout)));
        specials_ok && pure_opcode(f, inst)
    };
    let mut ok: HashSet<u32> = HashSet::new();
    loop {
        let before = ok.len();
        for &b in &uni.cfg.rpo {
            for inst in &f.blocks[b as usize].insts {
                if pure(inst) && !ok.contains(&inst.defs[0]) && inst.reads().iter().all(|r| ok.contains(r) || copies.contains_key(r)) {
                    ok.insert(inst.defs[0]);
                }
            }
        }
        if ok.len() == before {
            break;
        }
    }
    ok
}

/// The webs of `f`'s values (see [`Plan::web`]): union-find over phis and over the values an
/// instruction reads and defines under one register name; a register written through a
/// video selector (a partial write) keeps one web for all its values.
fn webs(f: &Func) -> Vec<u32> {
    let n = f.values.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            p[x as usize] = p[p[x as usize] as usize];
            x = p[x as usize];
        }
        x
    }
    fn union(p: &mut [u32], a: u32, b: u32) {
        let (ra, rb) = (find(p, a), find(p, b));
        if ra != rb {
            p[ra.max(rb) as usize] = ra.min(rb);
        }
    }
    let mut partial: HashSet<(u32, String)> = HashSet::new();
    for blk in &f.blocks {
        for phi in &blk.phis {
            for (_, v) in &phi.incoming {
                union(&mut parent, phi.dst, *v);
            }
        }
        for inst in &blk.insts {
            let reads = inst.reads();
            for d in &inst.defs {
                for r in &reads {
                    if f.values[*r as usize].var == f.values[*d as usize].var {
                        union(&mut parent, *d, *r);
                    }
                }
            }
            if inst.operands.iter().any(|o| matches!(o, Opnd::Sel(..))) {
                for d in &inst.defs {
                    partial.insert(f.values[*d as usize].var.clone());
                }
            }
        }
    }
    if !partial.is_empty() {
        let mut first: HashMap<(u32, String), u32> = HashMap::new();
        for (k, v) in f.values.iter().enumerate() {
            if partial.contains(&v.var) {
                let r = *first.entry(v.var.clone()).or_insert(k as u32);
                union(&mut parent, r, k as u32);
            }
        }
    }
    (0..n as u32).map(|v| find(&mut parent, v)).collect()
}

/// Compare-and-swap retry loops whose CAS updates one word for the whole warp (its address
/// uniform; `cas`: the kernel's retry loops' CAS, `lanes::lockstep::cas_retry_loops`) that
/// each lane runs to completion on its own, one lane after another inside one lane loop at
/// the loop's header, as threads one after another do: each lane's CAS then fails only
/// when another lane swapped since its last read of the word (once per lane: its first,
/// stale compare value), where warp-wide rounds let one lane swap per round and every later
/// lane fail on a stale value (32 lanes: 63 CAS against 528). The loop must be innermost,
/// with no `brx.idx`, call, barrier, warp collective or warp-synchronous access: nothing
/// that needs other lanes. Returns header → the loop's blocks in dispatch order, and the
/// line of a contended CAS whose loop is not eligible.
fn serial_loops(f: &Func, uni: &Uniformity, cas: &[*const crate::syntax::ast::Instr]) -> (HashMap<BlockId, Vec<BlockId>>, Option<u32>) {
    let cfg = &uni.cfg;
    let mut serial: HashMap<BlockId, Vec<BlockId>> = HashMap::new();
    let mut refused = None;
    for (b, blk) in f.blocks.iter().enumerate() {
        let b = b as BlockId;
        for inst in &blk.insts {
            if !cas.contains(&(inst.src as *const _)) || uni.access(f, inst, b) != Some(uniformity::Access::Uniform) {
                continue;
            }
            let innermost = cfg.loops.iter().filter(|(_, blocks)| blocks.contains(&b)).min_by_key(|(_, blocks)| blocks.len());
            let ok = innermost.filter(|(h, blocks)| {
                cfg.order[*h as usize] != u32::MAX
                    && cfg.loops.iter().filter(|(x, _)| blocks.contains(x)).count() == 1
                    && blocks.iter().all(|&x| {
                        let xb = &f.blocks[x as usize];
                        cfg.preds[x as usize].iter().all(|p| x == *h || blocks.contains(p))
                            && !matches!(xb.term, Term::Switch { .. })
                            && !xb.insts.iter().any(|i| {
                                crate::lanes::is_sync(i.src) || super::warp_collective::is_collective(i.src) || is_arrive(i) || matches!(i.src.opcode.name, "call" | "bar" | "barrier" | "alloca" | "stacksave" | "stackrestore")
                            })
                    })
            });
            match ok {
                Some((h, blocks)) => {
                    let mut blocks = blocks.clone();
                    blocks.sort_by_key(|x| (*x != *h, cfg.order[*x as usize]));
                    serial.insert(*h, blocks);
                }
                None => refused = refused.or(Some(inst.line)),
            }
        }
    }
    (serial, refused)
}

/// The divergent branches whose regions can run inside one lane loop: an acyclic region
/// entered only through the branch, every path of which reaches the reconvergence point or
/// ends the thread, with nothing that needs the lanes together (barriers, warp operations)
/// and no `brx.idx`. Outermost regions only (an inner one runs inside its outer one), none
/// in a serial loop ([`serial_loops`]), which runs inside its own lane loop, and none that
/// ends at the header of a spin loop (`waits`: the region's ways out would be back edges,
/// which must yield or park).
fn inline_regions(f: &Func, uni: &Uniformity, serial: &[bool], waits: &HashSet<BlockId>) -> HashMap<BlockId, (Vec<BlockId>, BlockId)> {
    let cfg = &uni.cfg;
    let mut out = HashMap::new();
    let mut inside = vec![false; f.blocks.len()];
    for &c in &cfg.rpo {
        if inside[c as usize] || serial[c as usize] || !uni.divergent[c as usize] || !matches!(f.blocks[c as usize].term, Term::CondBr { .. }) {
            continue;
        }
        let join = cfg.ipdom[c as usize];
        if join == crate::ir::cfg::EXIT {
            continue;
        }
        if waits.contains(&join) && cfg.loops.iter().any(|(h, blocks)| *h == join && blocks.contains(&c)) {
            continue; // its ways out are back edges of a spin loop, which yield or park
        }
        let mut r = cfg.region(c);
        if r.contains(&c) {
            continue; // a loop back to the branch
        }
        r.sort_by_key(|b| cfg.order[*b as usize]);
        let ok = r.iter().all(|&x| {
            let blk = &f.blocks[x as usize];
            cfg.preds[x as usize].iter().all(|p| *p == c || r.contains(p))
                && cfg.succs[x as usize].iter().all(|s| *s == join || cfg.order[*s as usize] > cfg.order[x as usize] && r.contains(s))
                && !matches!(blk.term, Term::Switch { .. })
                && !blk.insts.iter().any(|i| crate::lanes::is_sync(i.src) || crate::lanes::is_lockstep_access(i.src).is_some())
        });
        if ok {
            for &x in &r {
                inside[x as usize] = true;
            }
            out.insert(c, (r, join));
        }
    }
    out
}

/// Whether `inst` is a CTA barrier the warp path runs: `bar.sync`/`bar`/`barrier.sync` for
/// all threads of the CTA (PTX ISA 9.7.12.1; no thread count, not `arrive` or `red`), or
/// `barrier.cluster.wait` (PTX ISA 8.x), where the CTA's warps meet before its cluster does.
fn is_cta_barrier(inst: &crate::ir::Inst) -> bool {
    let i = inst.src;
    matches!(i.opcode.name, "bar" | "barrier") && !i.has_mod("warp") && !i.has_mod("arrive") && if i.has_mod("red") { i.operands.len() == 3 } else { i.operands.len() <= 2 }
}

/// `bar.arrive a, b` / `barrier.arrive a, b` (PTX ISA 9.7.12.1): the warp's threads count
/// towards barrier `a` and go on.
fn is_arrive(inst: &crate::ir::Inst) -> bool {
    let i = inst.src;
    matches!(i.opcode.name, "bar" | "barrier") && i.has_mod("arrive") && !i.has_mod("warp") && !i.has_mod("cluster") && !i.has_mod("red") && i.operands.len() == 2
}

/// A CTA barrier with a thread count (`bar.sync a, b`), or an arrival: the kernel's warps
/// then wait at barriers by count ([`Counted`]).
fn is_counted(inst: &crate::ir::Inst) -> bool {
    is_arrive(inst) || (is_cta_barrier(inst) && !inst.src.has_mod("red") && inst.src.operands.len() == 2)
}

/// The barrier id operand of CTA barrier `i` (`bar.red d, a, c`: `a`).
fn barrier_id(i: &crate::syntax::ast::Instr) -> Option<usize> {
    match (i.has_mod("red"), i.operands.len()) {
        (true, _) => Some(1),
        (false, 0) => None,
        (false, _) => Some(0),
    }
}

/// Why kernel `f`'s synchronization keeps it off the warp path, if it does: warp-level
/// operations and warp-synchronous (volatile shared) accesses need the lanes of a hardware
/// warp (not yet here). A CTA barrier must be reached by all lanes of a warp that reach a
/// barrier at all: it lies in no loop with a divergent exit, and the lanes that a divergent
/// branch sends elsewhere reach no barrier (they end, as after `if (i >= n) return;`; on a
/// GPU, lanes that went on to another barrier would deadlock the CTA, which the per-thread
/// scheduler reports).
fn sync_obstacle(f: &Func, uni: &Uniformity) -> Option<String> {
    let cfg = &uni.cfg;
    let n = f.blocks.len();
    // Blocks from which a barrier can be reached.
    let mut to_bar = vec![false; n];
    // Warp-synchronous accesses are not meetings here (`lockstep_meet`).
    let meets = |i: &crate::ir::Inst| crate::lanes::is_sync(i.src) && !crate::lanes::is_tcgen05_meet(i.src) && crate::lanes::is_lockstep_access(i.src).is_none();
    let mut work: Vec<usize> = (0..n).filter(|b| f.blocks[*b].insts.iter().any(meets)).collect();
    while let Some(b) = work.pop() {
        if std::mem::replace(&mut to_bar[b], true) {
            continue;
        }
        work.extend(cfg.preds[b].iter().map(|p| *p as usize));
    }
    let reaches = |from: BlockId, to: BlockId| {
        let mut seen = vec![false; n];
        let mut work = vec![from];
        while let Some(x) = work.pop() {
            if x == to {
                return true;
            }
            if !std::mem::replace(&mut seen[x as usize], true) {
                work.extend(cfg.succs[x as usize].iter().copied());
            }
        }
        false
    };
    for (b, blk) in f.blocks.iter().enumerate() {
        for inst in &blk.insts {
            let i = inst.src;
            // tcgen05.ld/st: the warp's lanes run each instruction together here.
            if !meets(inst) {
                continue;
            }
            let collective = super::warp_collective::is_collective(i);
            let what = if collective { format!("`{}`", super::func::instr_name(i)) } else { "barrier".to_string() };
            if !collective && !is_cta_barrier(inst) && !is_arrive(inst) {
                return Some(format!("`{}` (line {}) is not on the warp path yet", super::func::instr_name(i), inst.line));
            }
            // Shuffles, votes, `match`, `redux` and `activemask` also run where lanes may have
            // diverged: their lanes are those that reach the block together, and a lane whose
            // membermask names a live lane elsewhere stops the CTA
            // (`warp_collective::emit`).
            if super::warp_collective::runs_diverged(i) {
                // Lanes at two `.sync` collectives of one kind with the same membermask may
                // meet (sm_70 and up): where the masks are visibly the same (one immediate,
                // one value), the per-thread path runs the kernel; the warp path stops where
                // they would meet (`STATUS_WARP_APART`).
                let diverged = uni.group[b] != uniformity::Group::All || uni.in_divergent_loop(b as BlockId);
                // The lanes of a loop start each iteration together only where the loop runs
                // in lockstep (one latch: `Cfg::lockstep`); with two back edges, lanes of one
                // iteration reach the header at different times.
                if diverged && cfg.loops.iter().enumerate().any(|(k, (_, blocks))| blocks.contains(&(b as BlockId)) && !cfg.lockstep(k)) {
                    return Some(format!("{what} (line {}) where lanes may have diverged, in a loop whose lanes need not start an iteration together (more than one back edge)", inst.line));
                }
                let mask_of = |j: &crate::ir::Inst<'_>| super::warp_collective::membermask(j.src).and_then(|k| j.operands.get(k)).cloned();
                if let (true, Some(m)) = (diverged, mask_of(inst).filter(|m| matches!(m, Opnd::Imm(_) | Opnd::Val(_)))) {
                    // (Lanes elsewhere are in no instruction of this block: the dispatch runs
                    // a block for every lane waiting there.)
                    let same = |j: &crate::ir::Inst<'_>| j.src.opcode.name == i.opcode.name && mask_of(j).map_or(false, |n| same_mask(&m, &n));
                    if f.blocks.iter().enumerate().any(|(c, blk)| c != b && blk.insts.iter().any(same)) {
                        return Some(format!("{what} (line {}) where lanes may have diverged, with the membermask of another `{}` that lanes elsewhere may meet it at", inst.line, i.opcode.name));
                    }
                }
                continue;
            }
            if uni.in_divergent_loop(b as BlockId) {
                return Some(format!("{what} (line {}) in a loop with a divergent exit", inst.line));
            }
            for &c in &uni.regions[b] {
                if cfg.succs[c as usize].iter().any(|&s| !reaches(s, b as BlockId) && to_bar[s as usize]) {
                    return Some(format!("{what} (line {}) where lanes that a divergent branch sends elsewhere reach a barrier or warp collective too", inst.line));
                }
            }
            if collective {
                continue;
            }
            if barrier_id(i).and_then(|k| inst.operands.get(k)).map_or(false, |o| !uni.operand_shape(f, o, b as BlockId).is_uniform()) {
                return Some(format!("barrier (line {}) with a per-lane barrier id", inst.line));
            }
            if is_counted(inst) && inst.operands.get(1).map_or(false, |o| !uni.operand_shape(f, o, b as BlockId).is_uniform()) {
                return Some(format!("barrier (line {}) with a per-lane thread count", inst.line));
            }
        }
    }
    None
}

/// Whether two membermask operands are visibly the same: equal immediates, or one value.
fn same_mask(a: &Opnd, b: &Opnd) -> bool {
    match (a, b) {
        (Opnd::Imm(x), Opnd::Imm(y)) => uniformity::parse_int(x).zip(uniformity::parse_int(y)).map_or(x == y, |(p, q)| p as u32 == q as u32),
        (Opnd::Val(x), Opnd::Val(y)) => x == y,
        _ => false,
    }
}

/// Backward liveness over the IR: each block's live-in values (a phi's operand is used at
/// the end of its predecessor, its result is defined at the block's start), and a function
/// giving a block's live-out values from them.
fn liveness(f: &Func, cfg: &crate::ir::cfg::Cfg) -> Vec<HashSet<u32>> {
    let n = f.blocks.len();
    let mut live_in: Vec<HashSet<u32>> = vec![HashSet::new(); n];
    loop {
        let mut changed = false;
        for &b in cfg.rpo.iter().rev() {
            let b = b as usize;
            let mut live = live_out(f, cfg, b, &live_in);
            for inst in f.blocks[b].insts.iter().rev() {
                for d in &inst.defs {
                    live.remove(d);
                }
                live.extend(inst.reads());
            }
            for phi in &f.blocks[b].phis {
                live.remove(&phi.dst);
            }
            if live != live_in[b] {
                live_in[b] = live;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    live_in
}

/// The values block `b` passes on to its successors.
fn passed_on(f: &Func, cfg: &crate::ir::cfg::Cfg, b: usize, live_in: &[HashSet<u32>]) -> HashSet<u32> {
    let mut out: HashSet<u32> = HashSet::new();
    for &s in &cfg.succs[b] {
        let sb = &f.blocks[s as usize];
        out.extend(live_in[s as usize].iter().copied().filter(|v| !sb.phis.iter().any(|p| p.dst == *v)));
        for phi in &sb.phis {
            out.extend(phi.incoming.iter().filter(|(p, _)| *p as usize == b).map(|(_, v)| *v));
        }
    }
    out
}

/// The values live at the end of block `b` (what its terminator reads included).
fn live_out(f: &Func, cfg: &crate::ir::cfg::Cfg, b: usize, live_in: &[HashSet<u32>]) -> HashSet<u32> {
    let mut out = passed_on(f, cfg, b, live_in);
    let mut vs = Vec::new();
    match &f.blocks[b].term {
        Term::CondBr { cond, .. } => cond.values(&mut vs),
        Term::Switch { index, .. } => index.values(&mut vs),
        Term::Ret(os) => os.iter().for_each(|o| o.values(&mut vs)),
        _ => {}
    }
    out.extend(vs);
    out
}

/// The values live right after each CTA barrier of `f`.
fn live_across_barriers(f: &Func, cfg: &crate::ir::cfg::Cfg, live_in: &[HashSet<u32>]) -> Vec<((BlockId, usize), Vec<u32>)> {
    let mut out = Vec::new();
    for &b in &cfg.rpo {
        let blk = &f.blocks[b as usize];
        let mut live = live_out(f, cfg, b as usize, live_in);
        for (k, inst) in blk.insts.iter().enumerate().rev() {
            if is_cta_barrier(inst) {
                let mut vs: Vec<u32> = live.iter().copied().collect();
                vs.sort();
                out.push(((b, k), vs));
            }
            for d in &inst.defs {
                live.remove(d);
            }
            live.extend(inst.reads());
        }
    }
    out
}

/// `%nctaid.*`, the grid's size in CTAs.
fn is_grid_size(o: &Opnd) -> bool {
    matches!(o, Opnd::Name(n) if n.starts_with("%nctaid"))
}

/// The values computed from `%nctaid.*` (through the instructions that define them), as one
/// flag per value: a fixpoint over the function (a flag only turns on), where asking per read
/// walked the definitions anew each time (a quarter of an unrolled wmma kernel's compile).
fn grid_size_values(f: &Func) -> Vec<bool> {
    let mut on = vec![false; f.values.len()];
    loop {
        let mut changed = false;
        for blk in &f.blocks {
            for p in &blk.phis {
                if !on[p.dst as usize] && p.incoming.iter().any(|(_, x)| on[*x as usize]) {
                    on[p.dst as usize] = true;
                    changed = true;
                }
            }
            for i in &blk.insts {
                if i.defs.iter().all(|d| on[*d as usize]) {
                    continue;
                }
                if i.operands.iter().any(is_grid_size) || i.reads().into_iter().any(|r| on[r as usize]) {
                    for d in &i.defs {
                        on[*d as usize] = true;
                    }
                    changed = true;
                }
            }
        }
        if !changed {
            return on;
        }
    }
}

/// The warps of a CTA interleave the iterations of their grid-stride loops: a warp stops at
/// such a loop's back edge every `YIELD_EVERY` iterations and the CTA's next warp runs, as
/// the warps of a GPU's multiprocessor run side by side. Run one after another, each warp
/// would step through memory a grid's span (1 MiB in `benches/`) at a time, 128 bytes a
/// step; interleaved, each round of the CTA's warps touches one contiguous span per
/// iteration, which the prefetchers and the TLB follow. Measured on the grid-stride saxpy
/// written in C in each order (variants of benches/c's CTA-order loop): 0.025 s in this order against
/// 0.042 s warp after warp, 0.035 s yielding every iteration (the state a warp saves costs),
/// 0.029 s every 8th. Loops that step by other amounts (a k loop, a row's columns) touch
/// memory the CTA's warps share in any order, and ran 8-10% slower yielding.
///
/// Loops whose global accesses are all single bytes yield every [`YIELD_EVERY_BYTES`]th
/// iteration instead.
pub const YIELD_EVERY: u64 = 4;

/// How often a warp yields at the back edge of a grid-stride loop whose global accesses
/// are all of single bytes ([`yield_every`]): a warp's 32 bytes are half a line, which the
/// CTA's next warp reads too, and each yield saves and restores the warp's frame around
/// little work. The shared-memory byte histogram over 64 MiB, one core, builds alternating
/// 3x: 0.0303-0.0311 s at 4, 0.0289-0.0291 s at 8, 0.0289-0.0292 s at 16. A loop of 4-byte
/// elements ran slower at 8 (a grid-stride sum over 2^24 ints with a shared-memory tree
/// after it: 0.0053-0.0060 s at 4, 0.0062-0.0082 s at 8), and grid-stride saxpy in groups of
/// CTAs 1.6x-1.8x slower.
pub const YIELD_EVERY_BYTES: u64 = 8;

/// How many iterations at a time the warps take in the yielding loop whose latch is `latch`
/// ([`Plan::yields`]): [`YIELD_EVERY_BYTES`] where every global access of the loop is of
/// single bytes, else [`YIELD_EVERY`], alone or in a group of CTAs ([`groups_ctas`]: the
/// shared byte histogram in groups of 16, 2 cores, 0.0149 s at 4, 0.0133 s at 8).
pub fn yield_every(f: &Func, plan: &Plan, latch: BlockId) -> u64 {
    let cfg = &plan.uni.cfg;
    let Some((_, blocks)) = cfg.loops.iter().enumerate().find(|(k, _)| cfg.latch(*k) == Some(latch)).map(|(_, l)| l) else { return YIELD_EVERY };
    let global: Vec<_> = blocks
        .iter()
        .flat_map(|b| f.blocks[*b as usize].insts.iter())
        .filter(|i| {
            let s = i.src;
            matches!(s.opcode.name, "ld" | "st" | "atom" | "red") && !s.has_mod("shared") && !s.has_mod("const") && !s.has_mod("param") && !s.has_mod("local")
        })
        .collect();
    if !global.is_empty() && global.iter().all(|i| !i.src.mods.iter().any(|m| matches!(*m, "v2" | "v4" | "v8")) && super::types_of(i.src).first().is_some_and(|t| t.size() == 1)) {
        YIELD_EVERY_BYTES
    } else {
        YIELD_EVERY
    }
}

/// The loops whose back edges yield (see [`YIELD_EVERY`]): innermost grid-stride loops
/// (their arithmetic reads `%nctaid`) with one latch and no CTA barrier (a barrier
/// interleaves the warps already) that load or store global memory. Per loop: its latch,
/// and the variables a warp keeps across the yield — those live in any block from the
/// loop's header on in dispatch order (the lanes not in the loop wait in such blocks), and
/// those the latch passes on.
fn yield_loops(f: &Func, cfg: &crate::ir::cfg::Cfg, live_in: &[HashSet<u32>]) -> Vec<(BlockId, Vec<u32>)> {
    let mut out = Vec::new();
    let mut grid_values: Option<Vec<bool>> = None;
    for (k, (h, blocks)) in cfg.loops.iter().enumerate() {
        let Some(latch) = cfg.latch(k) else { continue };
        let inner = cfg.loops.iter().any(|(h2, b2)| h2 != h && blocks.contains(h2) && b2.len() < blocks.len());
        let insts = || blocks.iter().flat_map(|b| f.blocks[*b as usize].insts.iter());
        let memory = insts().any(|i| {
            let s = i.src;
            matches!(s.opcode.name, "ld" | "st" | "atom" | "red" | "prefetch") && !s.has_mod("shared") && !s.has_mod("const") && !s.has_mod("param") && !s.has_mod("local")
        });
        // A grid-stride loop: its arithmetic reads the grid's size.
        let on = grid_values.get_or_insert_with(|| grid_size_values(f));
        let grid = insts().any(|i| i.reads().into_iter().any(|v| on[v as usize]) || i.operands.iter().any(is_grid_size));
        if inner || !memory || !grid || insts().any(is_cta_barrier) {
            continue;
        }
        out.push((latch, kept_across_yield(f, cfg, live_in, *h, latch)));
    }
    out
}

/// The variables a warp keeps across a yield at `latch`, the latch of the loop headed by `h`:
/// those live in any block from the loop's header on in dispatch order (the lanes not in
/// the loop wait in such blocks), and those the latch passes on.
fn kept_across_yield(f: &Func, cfg: &crate::ir::cfg::Cfg, live_in: &[HashSet<u32>], h: BlockId, latch: BlockId) -> Vec<u32> {
    let from = cfg.order[h as usize];
    let phase = phase_blocks(f, cfg, h);
    // What the latch passes on (not what its terminator read: that has run).
    let mut live: HashSet<u32> = passed_on(f, cfg, latch as usize, live_in);
    for (b, li) in live_in.iter().enumerate() {
        if cfg.order[b] != u32::MAX && cfg.order[b] >= from && phase[b] {
            live.extend(li.iter().copied());
            live.extend(f.blocks[b].phis.iter().map(|p| p.dst));
        }
    }
    let mut vs: Vec<u32> = live.into_iter().collect();
    vs.sort();
    vs
}

/// The end of the reasons a spin loop keeps a kernel per thread.
const SPIN_SUFFIX: &str = "(the per-thread scheduler yields in the loop)";

/// The headers and latches of the spin loops of `f` (headed by the labels `spins`, from
/// `lanes::lockstep::spin_loops_warp`), whose back edges yield the warp so that the CTA's
/// other warps run while it waits for them (a GPU's warps run at once; here one warp runs at
/// a time, between yields and barriers). A uniform spin loop — run by every live lane of
/// the warp together (no divergent branch around it), with no divergent branch inside
/// (every lane sees the same flag or mbarrier phase, and all leave together) — yields at
/// each of its back edges (the first list). Any other spin loop *parks* its lanes (the
/// second list, [`Plan::parks`]): a lane that would go round again waits at the loop's
/// header while the warp's other lanes run on, possibly to the lane it waits for (a lock
/// another lane holds, a flag another lane sets: sm_70's independent thread scheduling lets
/// a GPU run them); once only parked lanes are left, the warp yields and they go round
/// again. Lanes then run the blocks after the loop at different times, which the warp path
/// allows up to the CTA barrier that ends the loop's phase ([`park_barrier`]), and inside
/// another loop only where every way round it passes a CTA barrier (a lane coming round
/// would meet the parked ones): else the kernel stays per thread.
fn spin_yields(f: &Func, uni: &Uniformity, spins: &[&str]) -> Result<(Vec<(BlockId, BlockId)>, Vec<(BlockId, BlockId, String)>), String> {
    let cfg = &uni.cfg;
    let mut out = Vec::new();
    let mut parks = Vec::new();
    for l in spins {
        let what = |what: &str| format!("spins in loop `{l}`, {what}");
        let why = |w: &str| format!("{} {SPIN_SUFFIX}", what(w));
        let Some(h) = f.blocks.iter().position(|b| b.label == Some(*l)) else { return Err(why("which is not a loop")) };
        let Some(k) = cfg.loops.iter().position(|(x, _)| *x as usize == h) else { return Err(why("which is not a loop")) };
        let blocks = &cfg.loops[k].1;
        // Every way back (a loop may have several: `continue` after an `assert`) yields or
        // parks.
        let latches: Vec<BlockId> = cfg.preds[h].iter().copied().filter(|p| blocks.contains(p)).collect();
        let apart = if uni.divergent_loop[k] || blocks.iter().any(|&b| uni.divergent[b as usize]) {
            Some("which lanes may leave at different times")
        } else if blocks.iter().any(|&b| uni.group[b as usize] != Group::All) {
            Some("which some lanes of a warp run while others wait elsewhere")
        } else {
            None
        };
        let Some(apart) = apart else {
            out.extend(latches.iter().map(|&l| (h as BlockId, l)));
            continue;
        };
        // Parking: lanes run apart from the loop on, up to the barrier that ends its phase.
        // Around an enclosing loop, a lane that came round again would meet the parked
        // ones: every way from the spin loop back to the enclosing loop's header must pass
        // a CTA barrier (a persistent kernel's loop over work items).
        let barrier_block = |b: BlockId| f.blocks[b as usize].insts.iter().any(is_cta_barrier);
        for (h2, b2) in cfg.loops.iter().filter(|(h2, b2)| *h2 as usize != h && b2.contains(&(h as BlockId))) {
            let mut seen: HashSet<BlockId> = HashSet::new();
            let mut work: Vec<BlockId> = blocks.iter().flat_map(|&b| cfg.succs[b as usize].iter().copied()).filter(|t| !blocks.contains(t)).collect();
            let mut around = false;
            while let Some(b) = work.pop() {
                if !b2.contains(&b) || !seen.insert(b) {
                    continue;
                }
                if b == *h2 {
                    around = true;
                    break;
                }
                if !barrier_block(b) {
                    work.extend(cfg.succs[b as usize].iter().copied());
                }
            }
            if around {
                return Err(why(&format!("{apart}, inside another loop that it can come round without a CTA barrier")));
            }
        }
        parks.extend(latches.iter().map(|&l| (h as BlockId, l, what(apart))));
    }
    Ok((out, parks))
}

/// The blocks that lanes of a warp may run while other lanes of it are parked in a spin
/// loop of `parks` (`Plan::parks`): those of the loops' phases (`phase_blocks`: up to the
/// barriers that end them) from the first such loop on in dispatch order. Lanes pass the
/// blocks before it together, and a barrier after it together (`park_at_barrier`).
fn late_blocks(f: &Func, cfg: &crate::ir::cfg::Cfg, parks: &[(BlockId, BlockId, String)]) -> Vec<bool> {
    let n = f.blocks.len();
    let Some(first) = parks.iter().map(|p| cfg.order[p.0 as usize]).min() else { return vec![false; n] };
    let mut phase = vec![false; n];
    for p in parks {
        phase.iter_mut().zip(phase_blocks(f, cfg, p.0)).for_each(|(o, x)| *o |= x);
    }
    (0..n).map(|b| cfg.order[b] != u32::MAX && cfg.order[b] >= first && phase[b]).collect()
}

/// Whether value `v` is defined where lanes run apart ([`late_blocks`]): in a late block,
/// before the barrier that ends the phase if the block holds it.
fn late_value(f: &Func, late: &[bool], bar: Option<(BlockId, usize)>, v: u32) -> bool {
    match f.values[v as usize].def {
        Def::Inst { block, inst } => late[block as usize] && !bar.is_some_and(|(b, k)| b == block && inst as usize > k),
        Def::Phi { block } => late[block as usize],
        _ => false,
    }
}

/// The CTA barrier that lanes reach after a parking loop (`Plan::park_barrier`): at most
/// one barrier instruction in the late blocks, a plain `bar.sync`/`barrier.sync` for the
/// whole CTA, where lanes that arrive while others of their warp are parked wait for them
/// ([`park_at_barrier`]). No warp collective in the late blocks, and no value computed
/// there with one value for the warp is read after the barrier (its lanes may have read
/// it at different times, which the code after the barrier, planned with the value the
/// same in every lane, would not see).
fn park_barrier(f: &Func, uni: &Uniformity, parks: &[(BlockId, BlockId, String)], late: &[bool]) -> Result<Option<(BlockId, usize)>, String> {
    let Some(first) = parks.iter().min_by_key(|p| uni.cfg.order[p.0 as usize]) else { return Ok(None) };
    let why = &first.2;
    let err = |what: String| Err(format!("{why}, {what} {SPIN_SUFFIX}"));
    let mut site: Option<(BlockId, usize)> = None;
    for &b in &uni.cfg.rpo {
        if !late[b as usize] {
            continue;
        }
        for (k, i) in f.blocks[b as usize].insts.iter().enumerate() {
            if super::warp_collective::is_collective(i.src) {
                return err(format!("with warp-level `{}` after it (line {})", super::func::instr_name(i.src), i.line));
            }
            if is_cta_barrier(i) || is_arrive(i) {
                if is_counted(i) || i.src.has_mod("red") || i.src.has_mod("cluster") {
                    return err(format!("with `{}` after it (line {})", super::func::instr_name(i.src), i.line));
                }
                if site.is_some() {
                    return err(format!("with more than one CTA barrier after it (line {})", i.line));
                }
                site = Some((b, k));
                // What follows the barrier in its block is past the phase.
                break;
            }
        }
    }
    for (b, blk) in f.blocks.iter().enumerate() {
        let outside = |k: usize| !late[b] || site.is_some_and(|(sb, sk)| sb as usize == b && k > sk);
        let mut reads: Vec<(u32, u32)> = Vec::new();
        for (k, inst) in blk.insts.iter().enumerate() {
            if outside(k) {
                reads.extend(inst.reads().into_iter().map(|v| (v, inst.line)));
            }
        }
        if outside(usize::MAX) {
            for phi in &blk.phis {
                reads.extend(phi.incoming.iter().map(|(_, v)| (*v, 0)));
            }
            let mut vs = Vec::new();
            match &blk.term {
                Term::CondBr { cond, .. } => cond.values(&mut vs),
                Term::Switch { index, .. } => index.values(&mut vs),
                _ => {}
            }
            reads.extend(vs.into_iter().map(|v| (v, 0)));
        }
        for (v, line) in reads {
            if late_value(f, late, site, v) && matches!(uni.values[v as usize], Shape::Uniform | Shape::Affine(_) | Shape::Unknown) {
                let at = if line == 0 { String::new() } else { format!(" (line {line})") };
                return err(format!("whose lanes compute `{}` apart, which is read after the barrier that follows{at}", f.values[v as usize].var.1));
            }
        }
    }
    Ok(site)
}

/// The blocks where lanes of a warp may be, or wait, while others run block `h`: those
/// reachable, without passing a CTA barrier, from a start of the phase that reaches `h` (the
/// entry, or the point after a barrier); a block with a barrier is where such paths end (its
/// lanes wait at the barrier). Blocks past the phase's barriers hold no lane then, and their
/// values need no keeping (a yield's frame of a shared-memory histogram's grid-stride loop
/// kept the 384 bytes of the final loop's registers, saved and reloaded every 4 iterations).
fn phase_blocks(f: &Func, cfg: &crate::ir::cfg::Cfg, h: BlockId) -> Vec<bool> {
    let n = f.blocks.len();
    let barrier = |b: usize| f.blocks[b].insts.iter().any(is_cta_barrier);
    // Blocks reachable from `starts` through barrier-free blocks (a barrier block is
    // reached, not passed).
    let reach = |starts: &[BlockId]| {
        let mut seen = vec![false; n];
        let mut work: Vec<BlockId> = starts.to_vec();
        while let Some(b) = work.pop() {
            if std::mem::replace(&mut seen[b as usize], true) || barrier(b as usize) {
                continue;
            }
            work.extend(cfg.succs[b as usize].iter().copied());
        }
        seen
    };
    // Phase starts: the entry, and the successors of each barrier block.
    let mut starts: Vec<Vec<BlockId>> = vec![vec![0]];
    starts.extend((0..n).filter(|&b| barrier(b)).map(|b| cfg.succs[b].clone()));
    let mut out = vec![false; n];
    for s in starts {
        let r = reach(&s);
        if r[h as usize] {
            out.iter_mut().zip(r).for_each(|(o, x)| *o |= x);
        }
    }
    out
}

/// Instructions that may run once for all lanes when their operands are uniform: pure
/// computations, and loads of memory that cannot change during a launch.
fn hoistable(f: &Func, inst: &crate::ir::Inst) -> bool {
    let i = inst.src;
    if i.has_mod("cc") {
        return false; // the carry flag is per lane
    }
    match i.opcode.name {
        "mov" | "add" | "sub" | "mul" | "mad" | "mul24" | "mad24" | "sad" | "div" | "rem" | "abs" | "neg" | "min" | "max" | "popc" | "clz" | "bfind" | "fns" | "brev"
        | "bfe" | "bfi" | "and" | "or" | "xor" | "not" | "cnot" | "lop3" | "shf" | "shl" | "shr" | "prmt" | "setp" | "set" | "selp" | "slct" | "cvt" | "copysign" | "fma"
        | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" | "testp" => true,
        "cvta" => !i.has_mod("local"),
        "ld" if i.has_mod("const") => true,
        "ld" if i.has_mod("param") => uniformity::loads_kernel_param(f, inst),
        // PTX ISA 9.7.8.7 ld: a weak load from a `.global` or `.shared` address that every
        // lane holds reads one location; the warp reads it once (as a GPU's warp makes one
        // transaction of it). Lanes of a warp do not order their accesses without a fence, so
        // one read serves them all; `block` keeps it after the stores of the lanes before it.
        "ld" => plain_shared_or_global_load(i),
        _ => false,
    }
}

/// A weak `ld` (`.weak` or unqualified, also `.nc`; not `.volatile`, `.relaxed`, `.acquire`,
/// `.mmio`) from `.global` memory or the CTA's `.shared` memory.
fn plain_shared_or_global_load(i: &crate::syntax::ast::Instr) -> bool {
    i.opcode.name == "ld"
        && (i.has_mod("global") || i.has_mod("shared"))
        && !["volatile", "relaxed", "acquire", "mmio", "cluster"].iter().any(|m| i.has_mod(m))
}

/// Whether `inst`, run by every lane of a lane loop, is one vector instruction per lane
/// group (so that its loop is vectorized 32 lanes wide, see [`close`]): arithmetic with a
/// vector form, no `.f16`/`.f16x2` (rounded in software), and loads and stores of uniform or
/// consecutive addresses outside `.local`.
fn vector_friendly(f: &Func, plan: &Plan, inst: &crate::ir::Inst, b: BlockId) -> bool {
    use crate::syntax::ast::Type;
    let i = inst.src;
    let tys = super::types_of(i);
    if tys.iter().any(|t| matches!(t, Type::F16 | Type::F16x2 | Type::B128)) {
        return false;
    }
    let float = tys.iter().any(|t| t.is_float());
    match i.opcode.name {
        "ld" | "st" => {
            !i.has_mod("local") && !i.has_mod("volatile") && matches!(plan.uni.access(f, inst, b), Some(uniformity::Access::Uniform | uniformity::Access::Consecutive | uniformity::Access::PerRow(_)))
        }
        "mov" | "add" | "sub" | "mul" | "mad" | "fma" | "min" | "max" | "abs" | "neg" | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "setp" | "selp" | "set"
        | "slct" | "popc" | "clz" | "brev" | "lop3" | "shf" | "cvta" | "copysign" | "testp" | "mul24" | "mad24" | "sad" | "bfe" | "bfi" | "prmt" | "cvt" => true,
        "div" | "rcp" | "sqrt" => float,
        // Straight-line f64 arithmetic (`ops_float::exp2_f32`, `log2_f32`; sqrt and a division).
        "ex2" | "lg2" | "rsqrt" => tys.as_slice() == [Type::F32],
        _ => false,
    }
}

/// Whether an instruction of a lane loop may write memory or order it (anything that does
/// not run once per warp, except loads other than `ld.acquire`), so that a load run once per
/// warp must not move before it.
fn may_write_memory(f: &Func, inst: &crate::ir::Inst) -> bool {
    !hoistable(f, inst) && !(inst.src.opcode.name == "ld" && !inst.src.has_mod("acquire"))
}

/// Integer instructions whose result at lane `l` is exactly `r0 + s*l` in its own width
/// when their operands are `a0 + sa*l` (uniform: `sa = 0`) and the other factor of a
/// product is a constant: arithmetic modulo 2^width, which wraps the same way for the base
/// and for every lane. Widening (`mul.wide`, `cvt` to a wider type), saturation and the
/// high half are not: they stay per lane.
fn exact_affine(inst: &crate::ir::Inst) -> bool {
    let i = inst.src;
    if i.has_mod("sat") || i.has_mod("hi") || i.has_mod("wide") || i.has_mod("cc") {
        return false;
    }
    let tys = super::types_of(i);
    if !tys.iter().all(|t| t.is_int() || t.is_bits()) {
        return false;
    }
    match i.opcode.name {
        "mov" | "add" | "sub" | "neg" | "mul" | "mad" | "shl" => true,
        "cvt" => matches!(tys.as_slice(), [d, s] if d.size() <= s.size()),
        _ => false,
    }
}

/// Decides whether kernel `f` can run on the warp path; `Err` says why not.
pub fn plan(f: &Func, layout: Layout, spins: &[&str], cas: &[*const crate::syntax::ast::Instr]) -> Result<Plan, String> {
    let uni = uniformity::analyze_for(f, layout);
    if !uni.cfg.reducible {
        return Err("irreducible control flow".into());
    }
    if let Some(why) = sync_obstacle(f, &uni) {
        return Err(why);
    }
    let (spin, parks) = spin_yields(f, &uni, spins)?;
    // With parking loops, lanes run the blocks from the first such loop to the barrier that
    // ends its phase (`late_blocks`) at different times: none of them is run by a known
    // group of lanes (no scalar instructions, no lane loop without its per-lane test
    // there), and a value defined there is the same for the lanes that run its instruction
    // together, not for all: read at different times (a volatile load of one word), it may
    // differ from lane to lane.
    let late = late_blocks(f, &uni.cfg, &parks);
    let park_barrier = park_barrier(f, &uni, &parks, &late)?;
    let mut uni = uni;
    for b in 0..f.blocks.len() {
        if late[b] {
            uni.group[b] = Group::Mixed;
        }
    }
    for v in 0..f.values.len() {
        if late_value(f, &late, park_barrier, v as u32) {
            uni.values[v] = Shape::Varying;
        }
    }
    let parks: Vec<(BlockId, BlockId)> = parks.into_iter().map(|(h, l, _)| (h, l)).collect();
    let all = || f.blocks.iter().flat_map(|b| b.insts.iter());
    let counted = all().any(is_counted);
    if counted {
        if let Some(i) = all().find(|i| matches!(i.src.opcode.name, "bar" | "barrier") && (i.src.has_mod("red") || i.src.has_mod("cluster"))) {
            return Err(format!("`{}` (line {}) in a kernel with barriers that count threads is not on the warp path yet", super::func::instr_name(i.src), i.line));
        }
    }
    // `.param` variables (a call's arguments) have a copy per lane (`new_lane_var`): in the
    // warp's own storage where their scope lies in one block without a barrier (a call
    // sequence), so that no other warp of the CTA runs while they hold a value; else, in a
    // kernel whose warps run in phases, in the warp's frame.
    let mut frame_params: HashSet<String> = HashSet::new();
    for (k, s) in f.scopes.iter().enumerate() {
        for d in s.decls.iter().filter(|d| d.space == StateSpace::Param) {
            let within = |mut x: u32| loop {
                if x as usize == k {
                    break true;
                }
                match f.scopes[x as usize].parent {
                    Some(p) => x = p,
                    None => break false,
                }
            };
            let blocks: HashSet<usize> = f.blocks.iter().enumerate().filter(|(_, b)| b.insts.iter().any(|i| within(i.scope))).map(|(b, _)| b).collect();
            let barrier = blocks.iter().any(|&b| f.blocks[b].insts.iter().any(is_cta_barrier));
            if blocks.len() > 1 || barrier {
                frame_params.insert(d.name.name.to_string());
            }
        }
    }
    for b in &f.blocks {
        for inst in &b.insts {
            if matches!(inst.src.opcode.name, "alloca" | "stacksave" | "stackrestore") {
                return Err(format!("uses `{}` (line {})", inst.src.opcode.name, inst.line));
            }
        }
    }
    let (serial, contended_cas) = serial_loops(f, &uni, cas);
    let mut in_serial = vec![false; f.blocks.len()];
    for blocks in serial.values() {
        for &x in blocks {
            in_serial[x as usize] = true;
        }
    }
    // The spin loops' ways back yield or park: none of them may end a region.
    let waits: HashSet<BlockId> = spin.iter().map(|p| p.0).chain(parks.iter().map(|p| p.0)).collect();
    let inline = inline_regions(f, &uni, &in_serial, &waits);
    // Blocks run inside another block's lane loop: those of divergent regions and of serial
    // loops but their headers, which the dispatch reaches.
    let mut inlined = vec![false; f.blocks.len()];
    for (r, _) in inline.values() {
        for &x in r {
            inlined[x as usize] = true;
        }
    }
    for (h, blocks) in &serial {
        for &x in blocks.iter().filter(|x| *x != h) {
            inlined[x as usize] = true;
        }
    }
    // Where each lane runs on its own: no instruction there runs once for the warp, no value
    // defined there is one scalar (a serial loop's lanes run its iterations at different
    // times, each from its own start).
    let lane_only: Vec<bool> = (0..f.blocks.len()).map(|b| inlined[b] || in_serial[b]).collect();
    let web = webs(f);
    let mut copies: HashMap<u32, (BlockId, usize)> = HashMap::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        for (k, inst) in blk.insts.iter().enumerate() {
            if let (["mov", ..], [_, Opnd::Name(n)], [d]) = (inst.op.split('.').collect::<Vec<_>>().as_slice(), inst.operands.as_slice(), inst.defs.as_slice()) {
                if n.starts_with('%') && lane_computable(n, layout) && f.values[*d as usize].ty.is_int() | f.values[*d as usize].ty.is_bits() {
                    copies.insert(*d, (b as BlockId, k));
                }
            }
        }
    }
    let var_of = |v: u32| (f.values[v as usize].var.0, format!("{}#{}", f.values[v as usize].var.1, web[v as usize]));
    // Each variable's lane stride: one shape for all of its values (0: uniform), integer
    // typed when affine.
    let mut stride: HashMap<(u32, String), Option<Stride>> = HashMap::new();
    for (k, v) in f.values.iter().enumerate() {
        if v.def == Def::Undef {
            continue;
        }
        let s = match uni.values[k] {
            Shape::Uniform | Shape::Unknown => Some(Stride::ZERO),
            Shape::Affine(s) if v.ty.is_int() || v.ty.is_bits() => Some(s),
            _ => None,
        };
        stride.entry(var_of(k as u32)).and_modify(|o| if *o != s { *o = None }).or_insert(s);
    }
    let mut scalar: HashSet<(u32, String)> = (0..f.values.len() as u32).map(var_of).filter(|k| stride.get(k).map_or(true, |s| s.is_some())).collect();
    let affine_var = |k: &(u32, String)| stride.get(k).copied().flatten().map_or(false, |s| !s.is_zero());
    // A scalar holds what every lane reads: a value read where it varies by temporal
    // divergence (after a loop with a divergent exit that defines it) needs its lanes.
    let mut reads: Vec<(u32, BlockId)> = Vec::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        for phi in &blk.phis {
            reads.extend(phi.incoming.iter().map(|(_, v)| (*v, b as BlockId)));
        }
        for inst in &blk.insts {
            reads.extend(inst.reads().into_iter().map(|v| (v, b as BlockId)));
        }
        let mut vs = Vec::new();
        match &blk.term {
            Term::CondBr { cond, .. } => cond.values(&mut vs),
            Term::Switch { index, .. } => index.values(&mut vs),
            _ => {}
        }
        reads.extend(vs.into_iter().map(|v| (v, b as BlockId)));
    }
    for (v, at) in reads {
        if uni.value_at(f, v, at) != uni.values[v as usize] {
            scalar.remove(&var_of(v));
        }
    }
    let ok_inst = |scalar: &HashSet<(u32, String)>, b: usize, inst: &crate::ir::Inst| -> bool {
        let affine = inst.defs.iter().any(|v| affine_var(&var_of(*v)))
            || inst.reads().iter().any(|v| affine_var(&var_of(*v)) || copies.contains_key(v) && uni.values[*v as usize] != Shape::Uniform)
            || inst.operands.iter().any(|o| matches!(o, Opnd::Name(n) if n.starts_with('%') && uniformity::special_shape(n, layout) != Shape::Uniform));
        uni.group[b] != Group::Mixed
            && !lane_only[b]
            && !inst.defs.is_empty()
            && hoistable(f, inst)
            && inst.defs.iter().all(|d| scalar.contains(&var_of(*d)))
            && inst.reads().iter().all(|v| scalar.contains(&var_of(*v)) || copies.contains_key(v) && uni.values[*v as usize] != Shape::Varying && !inst.defs.iter().any(|d| f.values[*d as usize].var == f.values[*v as usize].var))
            && inst.operands.iter().all(|o| !matches!(o, Opnd::Name(n) if n.starts_with('%') && !matches!(uniformity::special_shape(n, layout), Shape::Uniform | Shape::Affine(_))))
            // Reading affine registers, an instruction runs once per warp on their bases
            // (lane 0's values) when its result is `base + stride * lane` exactly, or when the
            // analysis proves it the same in every lane (`%tid.x >> 5`, the warp's number):
            // then lane 0's result is every lane's.
            && (!affine || exact_affine(inst) || inst.defs.iter().all(|d| uni.values[*d as usize] == Shape::Uniform))
    };
    loop {
        let before = scalar.len();
        for (b, blk) in f.blocks.iter().enumerate() {
            for phi in &blk.phis {
                if uni.group[b] == Group::Mixed || lane_only[b] || uni.values[phi.dst as usize] == Shape::Varying {
                    scalar.remove(&var_of(phi.dst));
                }
            }
            for inst in &blk.insts {
                if !ok_inst(&scalar, b, inst) {
                    for d in &inst.defs {
                        scalar.remove(&var_of(*d));
                    }
                }
            }
        }
        // A scalar serves one group of lanes at a time: every live lane, and the lanes of at
        // most one side of one divergent branch (two sides may be run interleaved).
        let mut arms: HashMap<(u32, String), Group> = HashMap::new();
        for (k, v) in f.values.iter().enumerate() {
            let key = var_of(k as u32);
            let block = match v.def {
                Def::Param => {
                    scalar.remove(&key);
                    continue;
                }
                Def::Inst { block, .. } | Def::Phi { block } => block,
                Def::Undef => continue,
            };
            let g = uni.group[block as usize];
            if let Group::Arm(..) = g {
                match arms.get(&key) {
                    Some(o) if *o != g => {
                        scalar.remove(&key);
                    }
                    _ => {
                        arms.insert(key, g);
                    }
                }
            }
        }
        if scalar.len() == before {
            break;
        }
    }
    let remat = rematerializable(f, &uni, &copies);
    let (anchored, anchor_defs) = anchored_webs(f, &uni, &scalar, &remat, &lane_only, &var_of);
    scalar.extend(anchored.keys().cloned());
    let scalar_inst = f
        .blocks
        .iter()
        .enumerate()
        .map(|(b, blk)| (0..blk.insts.len()).map(|k| ok_inst(&scalar, b, &blk.insts[k]) || anchor_defs.contains(&(b as BlockId, k))).collect())
        .collect();
    let affine = scalar.iter().filter(|k| affine_var(k) && !anchored.contains_key(*k)).map(|k| (k.clone(), stride[k].unwrap())).collect();
    let keys = |vs: Vec<u32>| {
        let mut keys: Vec<(u32, String)> = vs.into_iter().map(var_of).collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let live_in = liveness(f, &uni.cfg);
    // A web whose every value a read recomputes (`remat`, `copies`) need not be kept across
    // a barrier or a yield, unless it is one scalar for the warp (read from its storage).
    let mut recomputed: HashMap<u32, bool> = HashMap::new();
    for v in 0..f.values.len() as u32 {
        let r = recomputed.entry(web[v as usize]).or_insert(true);
        *r &= remat.contains(&v) || copies.contains_key(&v);
    }
    // A web of one value that is the same in every thread of the grid (`grid_invariant`:
    // kernel parameters and their arithmetic, `n`, `(n + 15) / 16`, a constant) holds the
    // same value whichever warp wrote its storage last, and every warp wrote it before it
    // reads it (its definition dominates its uses): it needs no copy in each warp's frame.
    // The tiled sgemm kept 5 such scalars across both of its barriers, each saved and
    // restored by every warp in every phase.
    let invariant = grid_invariant(f);
    let mut web_values: HashMap<(u32, u32, String), u32> = HashMap::new();
    for (v, info) in f.values.iter().enumerate() {
        *web_values.entry((web[v], info.var.0, info.var.1.clone())).or_default() += 1;
    }
    let shared_by_all = |v: u32| {
        let var = &f.values[v as usize].var;
        invariant.contains(&v) && web_values[&(web[v as usize], var.0, var.1.clone())] == 1
    };
    let kept = |vs: Vec<u32>| -> Vec<(u32, String)> {
        keys(
            vs.into_iter()
                .filter(|&v| {
                    let k = var_of(v);
                    (!recomputed[&web[v as usize]] || (scalar.contains(&k) && (!affine_var(&k) || anchored.contains_key(&k)))) && !shared_by_all(v)
                })
                .collect(),
        )
    };
    let barriers: Vec<_> = live_across_barriers(f, &uni.cfg, &live_in).into_iter().map(|(at, vs)| (at, kept(vs))).collect();
    let cluster_barrier = barriers.iter().any(|((b, i), _)| f.blocks[*b as usize].insts[*i].src.has_mod("cluster"));
    let mut yields: Vec<(BlockId, Vec<u32>)> = yield_loops(f, &uni.cfg, &live_in);
    for (h, latch) in spin {
        if !yields.iter().any(|(l, _)| *l == latch) {
            yields.push((latch, kept_across_yield(f, &uni.cfg, &live_in, h, latch)));
        }
    }
    let yields = yields.into_iter().map(|(l, vs)| (l, kept(vs))).collect();
    // Where only parked lanes are left, they may be at any parking loop's header: the
    // warp keeps what any of them needs.
    let mut parked_live: Vec<u32> = parks.iter().flat_map(|&(h, latch)| kept_across_yield(f, &uni.cfg, &live_in, h, latch)).collect();
    parked_live.sort();
    parked_live.dedup();
    let mut parked_live = kept(parked_live);
    // Lanes parked at the barrier after the loops keep what is live across it.
    if let Some((_, live)) = park_barrier.and_then(|at| barriers.iter().find(|(x, _)| *x == at)) {
        parked_live.extend(live.iter().cloned());
        parked_live.sort();
        parked_live.dedup();
    }
    let parks = parks.into_iter().map(|(h, latch)| (h, latch, parked_live.clone())).collect();
    // Loops without barriers: at least one, none with atomics or reductions.
    let own: Vec<&Vec<BlockId>> = uni.cfg.loops.iter().map(|(_, b)| b).filter(|blocks| blocks.iter().all(|b| f.blocks[*b as usize].insts.iter().all(|i| !is_cta_barrier(i)))).collect();
    let atomics = |blocks: &[BlockId]| blocks.iter().any(|b| f.blocks[*b as usize].insts.iter().any(|i| matches!(i.src.opcode.name, "atom" | "red")));
    let barrier_free_loop = !own.is_empty() && own.iter().all(|blocks| !atomics(blocks));
    let reads_tid_yz = reads_tid_yz(f);
    // Warp-synchronous code (`lanes::is_lockstep_access`) needs hardware warps as much.
    let collectives = f.blocks.iter().any(|b| b.insts.iter().any(|i| super::warp_collective::is_collective(i.src) || crate::lanes::is_lockstep_access(i.src).is_some()));
    let matrix_sites = f.blocks.iter().map(|b| b.insts.iter().filter(|i| super::warp_collective::is_matrix(i.src)).count()).sum::<usize>();
    let matrix = matrix_sites > 0;
    let undef_webs = (0..f.values.len() as u32).filter(|v| f.values[*v as usize].def == Def::Undef).map(var_of).collect();
    let mut row_consecutive = HashSet::new();
    let global = |i: &crate::syntax::ast::Instr| matches!(i.opcode.name, "ld" | "st") && (i.has_mod("global") || super::ops_mem::space_of(i).is_none());
    let gathers = || f.blocks.iter().enumerate().any(|(b, blk)| blk.insts.iter().any(|x| global(x.src) && uni.access(f, x, b as BlockId) == Some(uniformity::Access::Gather)));
    if layout == Layout::Tile && gathers() {
        let rows = uniformity::analyze_for(f, Layout::Rows);
        for (b, blk) in f.blocks.iter().enumerate() {
            for (k, inst) in blk.insts.iter().enumerate() {
                if global(inst.src) && rows.access(f, inst, b as BlockId) == Some(uniformity::Access::Consecutive) {
                    row_consecutive.insert((b as BlockId, k));
                }
            }
        }
    }
    Ok(Plan { frame_params, uni, scalar_vars: scalar, affine, anchored, scalar_inst, barriers, counted, cluster_barrier, yields, parks, park_barrier, contended_cas, serial, in_serial, undef_webs, barrier_free_loop, reads_tid_yz, inline, inlined, web, web_values, copies, remat, collectives, matrix, matrix_sites, whole_rows: false, row_consecutive })
}

/// Emission state of a kernel on the warp path.
pub struct WarpState<'ctx> {
    pub plan: std::rc::Rc<Plan>,
    /// The lane being emitted (inside a lane loop).
    pub lane: Option<IntValue<'ctx>>,
    /// Builds the lane addresses of registers for the open lane loop (they dominate its body).
    pub gep_b: inkwell::builder::Builder<'ctx>,
    /// `[32 x i32]`: each lane's next block, or `DONE`.
    pub next: PointerValue<'ctx>,
    /// `[32 x i1]`: each lane's carry flag.
    pub carry: PointerValue<'ctx>,
    /// `%tid.x` of lane 0.
    pub x0: IntValue<'ctx>,
    /// `%tid.y` of lane 0.
    y0: IntValue<'ctx>,
    /// The warp is a tile warp (`Layout::Tile`): lane loops run two rows of 16 lanes.
    pub(crate) tile: bool,
    /// The warp is one row of at most 16 threads (`choose_narrow`): lane loops run 16 lanes.
    pub(crate) short: bool,
    /// In a tile warp's open lane loop: the lane's `%tid.x` and its row (0 or 1).
    tile_lane: Cell<Option<(IntValue<'ctx>, IntValue<'ctx>)>>,
    pub dispatch: BasicBlock<'ctx>,
    /// The dispatch's switch, which gets a case per block.
    dispatch_switch: inkwell::values::InstructionValue<'ctx>,
    /// Per affine variable: the temporary holding the current lane's value in a lane loop.
    affine_tmp: std::cell::RefCell<HashMap<(u32, String), PointerValue<'ctx>>>,
    /// The affine webs whose lane value the open lane loop has computed already.
    affine_ready: std::cell::RefCell<HashSet<(u32, String)>>,
    /// The lane values of affine webs the open lane loop computes: each web's base (its
    /// storage), stride and type, and the `base + stride * lane` (the add, the product).
    affine_lanes: std::cell::RefCell<Vec<AffineLane<'ctx>>>,
    /// Phases between CTA barriers, for a kernel that has them.
    bars: Option<Bars<'ctx>>,
    /// The storage of each web (see [`Plan::web`]).
    storage: std::cell::RefCell<HashMap<(u32, String), (PointerValue<'ctx>, crate::syntax::ast::Type)>>,
    /// The open lane loop holds an instruction that does not map onto one vector
    /// instruction ([`vector_friendly`]): it is not vectorized 32 lanes wide.
    narrow: std::cell::Cell<bool>,
    /// The open lane loop stores somewhere else than along its rows (a uniform or scattered
    /// address), where which lane stores last matters ([`jam_rows`]).
    ordered: std::cell::Cell<bool>,
    /// The open lane loop of a matrix kernel holds a store whose lanes' addresses are
    /// scattered (see [`close`]).
    scatters: std::cell::Cell<bool>,
    /// Loads of the open lane loop that prefetch ahead once it closes ([`prefetch_ahead`]):
    /// (block, instruction index, bytes ahead).
    prefetch: std::cell::RefCell<Vec<(BlockId, usize, Ahead)>>,
    /// One call runs a group of consecutive CTAs (`CtaCtx::group`, [`groups_ctas`]).
    pub(crate) cta_group: bool,
    /// Temporaries [`value_temp`] filled, by (value, type read as): the block they were
    /// filled in and the temporary. A later read in the same block takes it again (the
    /// value is a pure function of the lane's special registers and the parameters, so the
    /// block recomputes it once, not once per read: an epilogue of 256 stores through one
    /// address register is one address chain).
    temps: std::cell::RefCell<HashMap<(u32, crate::syntax::ast::Type), (BasicBlock<'ctx>, PointerValue<'ctx>)>>,
    /// The open lane loop's latch, and the blocks where a lane ended in it (a call that
    /// exited: [`lane_exit`]).
    latch: Cell<Option<BasicBlock<'ctx>>>,
    lane_exits: std::cell::RefCell<Vec<BasicBlock<'ctx>>>,
    /// The block each warp starts (or resumes) in, before its frame is read ([`finish`]).
    top: BasicBlock<'ctx>,
    /// The variables with one copy per lane (`.local` variables, and `.param` variables: a
    /// call's arguments), each 32 copies `stride` bytes apart ([`new_lane_var`]): lane 0's
    /// copy and the stride.
    lane_vars: std::cell::RefCell<Vec<(PointerValue<'ctx>, u32)>>,
    /// Bytes of the warp frame that hold `.local` variables ([`new_lane_var`]), from
    /// `FRAME_VARS`, and their largest alignment.
    local_top: Cell<u64>,
    local_align: Cell<u32>,
    /// The store of the open lane loop that runs once after it ([`defer_store`]).
    deferred: std::cell::RefCell<Vec<Deferred<'ctx>>>,
    /// An error of a deferred store's emission, reported by the next instruction.
    deferred_err: std::cell::RefCell<Option<crate::syntax::diag::Diagnostic>>,
}

/// A lane loop being emitted.
struct LaneLoop<'ctx> {
    /// The block before the loop (unterminated until the loop closes): instructions that
    /// run once per warp may still be placed there.
    pre: BasicBlock<'ctx>,
    head: BasicBlock<'ctx>,
    phi: PhiValue<'ctx>,
    lane: IntValue<'ctx>,
    latch: BasicBlock<'ctx>,
    /// Variables read inside the loop so far.
    reads: HashSet<(u32, String)>,
    /// An instruction in the loop so far may write memory: a load run once per warp cannot
    /// be placed before the loop.
    writes: bool,
    /// The loop runs only the lanes waiting for its block (else every lane: see
    /// [`unguarded_run`]).
    guarded: bool,
    /// This lane's `next` as the loop's head read it, and its slot.
    next_in: IntValue<'ctx>,
    next_at: PointerValue<'ctx>,
    /// The successor the lanes of a guarded loop chose (see [`close`]).
    next_out: Option<IntValue<'ctx>>,
    /// The number of the block it runs (`next` holds it for the lanes waiting there).
    id: u32,
    /// A collective's lane loop ([`open_lanes`]).
    collective: bool,
    /// In a tile warp: the loop over its two rows around the loop over a row's 16 lanes
    /// (head, row index, latch); `phi` is then the lane's `%tid.x` and `lane` is
    /// `16 * row + %tid.x`.
    rows: Option<(BasicBlock<'ctx>, PhiValue<'ctx>, BasicBlock<'ctx>)>,
}

/// In a lane loop, where the lane being emitted ends because a function it called executed
/// `exit` (PTX ISA 9.7.11.7: the thread ends, the others go on): its `next` becomes `DONE`
/// and it leaves the loop's iteration (the builder is left after a terminator). `false`
/// outside a lane loop.
pub(crate) fn lane_exit<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> bool {
    let Some(w) = e.warp.as_ref() else { return false };
    let (Some(lane), Some(latch)) = (w.lane, w.latch.get()) else { return false };
    let i32t = e.ctx().i32_type();
    let at = unsafe { e.b.build_in_bounds_gep(i32t.array_type(LANES), w.next, &[i32t.const_zero(), lane], "").unwrap() };
    e.b.build_store(at, i32t.const_int(DONE, false)).unwrap();
    w.lane_exits.borrow_mut().push(e.b.get_insert_block().unwrap());
    e.b.build_unconditional_branch(latch).unwrap();
    true
}

/// The storage of a variable of `space` (`.local`, or `.param`: a call's arguments) with one
/// copy per lane ([`lane_var`]): 32 copies of `size` bytes, `stride` bytes apart (`size`
/// rounded up to `align`). Returns lane 0's copy.
///
/// Where a `.param` variable's scope is one block without a barrier (a call sequence), the
/// warp being run is the only one that uses it: one array in the CTA function's stack serves
/// every warp. So does one for other variables in a kernel whose warps each run to the end
/// before the next starts. Where warps run in phases (CTA barriers, yields), each warp keeps
/// its copies of the others (`.local`, `Plan::frame_params`) in its frame, ahead of the registers [`finish`] lays out there:
/// PTX ISA 5.1.5, local memory is private to each thread and keeps its contents for the
/// thread's lifetime.
pub(crate) fn new_lane_var<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, space: StateSpace, size: u32, align: u32, name: &str) -> PointerValue<'ctx> {
    let ctx = e.ctx();
    let stride = (size + align - 1) / align * align;
    let w = e.warp.as_ref().expect("a lane variable on the warp path");
    let in_frame = space == StateSpace::Local || w.plan.frame_params.contains(name);
    let p = match &w.bars {
        Some(bars) if in_frame => {
            let off = (FRAME_VARS + w.local_top.get() + align as u64 - 1) / align as u64 * align as u64;
            w.local_top.set(off + stride as u64 * LANES as u64 - FRAME_VARS);
            w.local_align.set(w.local_align.get().max(align));
            // Before the switch to the warp's resume site, so that it dominates every site.
            let b = ctx.create_builder();
            b.position_before(&bars.resume);
            unsafe { b.build_in_bounds_gep(ctx.i8_type(), bars.frame, &[ctx.i64_type().const_int(off, false)], name).unwrap() }
        }
        _ => {
            let t = ctx.i8_type().array_type(stride * LANES);
            let p = e.alloca_b.build_alloca(t, name).unwrap();
            if let Some(inst) = p.as_instruction() {
                let _ = inst.set_alignment(align);
            }
            p
        }
    };
    w.lane_vars.borrow_mut().push((p, stride));
    p
}

/// The storage of the lane being emitted (lane 0's once per warp) where `p` is a variable
/// with one copy per lane; else `p`. A call's `.param` arguments are such variables: each
/// lane's call sequence (`st.param`, `call`, `ld.param`) uses its own copy, whichever lane
/// loops it spans.
pub(crate) fn lane_var<'ctx>(e: &FnEmitter<'ctx, '_, '_>, p: PointerValue<'ctx>) -> PointerValue<'ctx> {
    let Some(w) = e.warp.as_ref() else { return p };
    let Some(&(_, stride)) = w.lane_vars.borrow().iter().find(|(q, _)| *q == p) else { return p };
    let Some(lane) = w.lane else { return p };
    let i64t = e.ctx().i64_type();
    let off = e.b.build_int_mul(e.b.build_int_z_extend(lane, i64t, "").unwrap(), i64t.const_int(stride as u64, false), "").unwrap();
    unsafe { e.b.build_in_bounds_gep(e.ctx().i8_type(), p, &[off], "lane.var").unwrap() }
}

/// Lanes of a row of a tile warp (`Layout::Tile`).
const TILE_ROW: u32 = 16;

/// The most LLVM instructions (as emitted) of a scalar lane loop that is unrolled whole.
const SMALL_LANE_LOOP: usize = 64;

/// Whether the blocks from `head` to the function's end (a lane loop being closed: its
/// blocks, then the empty block after it) hold at most `n` instructions.
fn small_loop(head: BasicBlock, n: usize) -> bool {
    let mut count = 0;
    let mut bb = Some(head);
    while let Some(x) = bb {
        count += x.get_instructions().count();
        bb = x.get_next_basic_block();
    }
    count <= n
}

fn lane_array<'ctx>(e: &FnEmitter<'ctx, '_, '_>, elem: inkwell::types::BasicTypeEnum<'ctx>, name: &str) -> PointerValue<'ctx> {
    let t = elem.array_type(LANES);
    let p = e.alloca_b.build_alloca(t, name).unwrap();
    if let Some(inst) = p.as_instruction() {
        let _ = inst.set_alignment(64);
        let md = e.ctx().metadata_node(&[]);
        let _ = inst.set_metadata(md, e.ctx().get_kind_id(LANE_ARRAY));
    }
    p
}

/// Storage of register variable (`scope`, `name`): a scalar, or an array of lanes.
pub(crate) fn new_reg<'ctx>(e: &FnEmitter<'ctx, '_, '_>, scope: u32, name: &str, ty: crate::syntax::ast::Type) -> Option<PointerValue<'ctx>> {
    let w = e.warp.as_ref()?;
    if w.plan.scalar_vars.contains(&(scope, name.to_string())) {
        return None;
    }
    Some(lane_array(e, e.storage_t(ty).into(), name))
}

/// The address of the current lane's element of a register's lane array, if it has one
/// (registers the warp path does not bind to webs: none in practice).
pub(crate) fn lane_slot<'ctx>(e: &FnEmitter<'ctx, '_, '_>, scope: u32, name: &str, arr: PointerValue<'ctx>, ty: crate::syntax::ast::Type) -> Option<PointerValue<'ctx>> {
    e.warp.as_ref()?;
    lane_slot_of(e, &(scope, name.to_string()), arr, ty)
}

/// The address to use for web `key` (storage `arr`) in the lane being emitted: `None` for a
/// scalar (`arr` itself); in a lane loop, the lane's element of a lane array, or for an
/// affine web a temporary holding `base + stride * lane`. Outside a lane loop, a lane array's
/// first element.
fn lane_slot_of<'ctx>(e: &FnEmitter<'ctx, '_, '_>, key: &(u32, String), arr: PointerValue<'ctx>, ty: crate::syntax::ast::Type) -> Option<PointerValue<'ctx>> {
    let w = e.warp.as_ref()?;
    if w.plan.scalar_vars.contains(key) && !w.plan.affine.contains_key(key) {
        return None;
    }
    let i32t = e.ctx().i32_type();
    if let Some(&stride) = w.plan.affine.get(key) {
        // Lane `l` of an affine variable: `base + stride * l`, in a temporary of the lane
        // loop (promoted to a register) so that LLVM sees the lane's address arithmetic.
        let lane = w.lane?;
        let it = reg_t(e.ctx(), ty);
        let name = key.1.split('#').next().unwrap_or("affine");
        let tmp = *w.affine_tmp.borrow_mut().entry(key.clone()).or_insert_with(|| e.alloca_b.build_alloca(it, name).unwrap());
        // Once per lane loop: every later read in it finds the lane's value in `tmp`.
        if !w.affine_ready.borrow_mut().insert(key.clone()) {
            return Some(tmp);
        }
        let b = &w.gep_b;
        let base = b.build_load(it, arr, "").unwrap().into_int_value();
        let l = match it.get_bit_width() {
            32 => lane,
            w if w > 32 => b.build_int_z_extend(lane, it, "").unwrap(),
            _ => b.build_int_truncate(lane, it, "").unwrap(),
        };
        let prod = match w.tile_lane.get() {
            // A tile warp's lane: `stride.x` per `%tid.x` (the inner loop's index), `stride.r`
            // per row.
            Some((x, r)) if w.tile => {
                let cast = |v: IntValue<'ctx>| match it.get_bit_width() {
                    32 => v,
                    bw if bw > 32 => b.build_int_z_extend(v, it, "").unwrap(),
                    _ => b.build_int_truncate(v, it, "").unwrap(),
                };
                let px = b.build_int_mul(cast(x), it.const_int(stride.x as u64, false), "").unwrap();
                let pr = b.build_int_mul(cast(r), it.const_int(stride.r as u64, false), "").unwrap();
                b.build_int_add(px, pr, "").unwrap()
            }
            _ => b.build_int_mul(l, it.const_int(stride.x as u64, false), "").unwrap(),
        };
        let v = b.build_int_add(base, prod, name).unwrap();
        if let (Some(add), Some(mul)) = (v.as_instruction(), prod.as_instruction()) {
            w.affine_lanes.borrow_mut().push(AffineLane { base: arr, stride, ty: it, add, mul });
        }
        b.build_store(tmp, v).unwrap();
        return Some(tmp);
    }
    let t = e.storage_t(ty).array_type(LANES);
    // Outside a lane loop only a lane-array register's first element is meaningful (the
    // plan keeps code that runs once per warp off lane arrays).
    let (b, lane) = match w.lane {
        Some(l) => (&w.gep_b, l),
        None => (&e.alloca_b, i32t.const_zero()),
    };
    Some(unsafe { b.build_in_bounds_gep(t, arr, &[i32t.const_zero(), lane], "").unwrap() })
}

/// A lane value `base + stride * lane` of an affine web computed in a lane loop
/// ([`lane_slot_of`]), for [`coherent_copy`].
struct AffineLane<'ctx> {
    base: PointerValue<'ctx>,
    stride: Stride,
    ty: inkwell::types::IntType<'ctx>,
    add: inkwell::values::InstructionValue<'ctx>,
    mul: inkwell::values::InstructionValue<'ctx>,
}

/// The function attribute that sets a warp-path function's vector width, which also tells
/// later stages a warp-path function from per-thread code (`split`'s weights,
/// `target::optimize`'s unswitching).
pub(crate) const VECTOR_WIDTH_ATTR: &str = "prefer-vector-width";

/// Sets up the loops over the warps of a CTA (z, y, then runs of 32 in x) and leaves the
/// builder where the warp's code starts.
///
/// A kernel with CTA barriers runs its warps in phases: each warp runs until it reaches a
/// barrier (it saves what is live across it to its frame and records where it resumes) or
/// ends; once every warp has had its turn, another phase starts if any waits at a barrier.
/// Frames are `KernelInfo::frame_size` bytes per thread slot of the runtime, 32 slots per
/// warp: a resume site, the lanes' next blocks and carry flags, then the live variables.
pub(crate) fn setup<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, setup: BasicBlock<'ctx>, plan: Plan) {
    use super::abi::field;
    let ctx = e.ctx();
    // A lane loop is 32 iterations: on AVX-512, two 512-bit vectors of 32-bit lanes rather
    // than four 256-bit ones (LLVM's default preference on these CPUs).
    e.f.add_attribute(inkwell::attributes::AttributeLoc::Function, ctx.create_string_attribute(VECTOR_WIDTH_ATTR, "512"));
    let i32t = ctx.i32_type();
    let i64t = ctx.i64_type();
    let ntx = e.load_cta_u32(field::NTID, Some(0));
    // The version for narrow blocks (`choose_narrow`): one row per warp in 16-lane loops, or
    // two rows of 16 per warp.
    let short = e.m.narrow_version && plan.uni.layout == Layout::Rows;
    let tile = plan.uni.layout == Layout::Tile;
    if plan.collectives && !tile && !plan.whole_rows {
        // Warp collectives need hardware warps (32 consecutive linear thread indices): rows
        // of the block are those when %ntid.x is a multiple of 32 or the block is one row.
        // Other shapes run the kernel's per-thread version. (Where every row is a whole
        // number of warps, `Plan::whole_rows`, there are no other shapes.)
        let nty = e.load_cta_u32(field::NTID, Some(1));
        let ntz = e.load_cta_u32(field::NTID, Some(2));
        let ragged = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(ntx, i32t.const_int(31, false), "").unwrap(), i32t.const_zero(), "").unwrap();
        let rows = e.b.build_int_compare(IntPredicate::NE, e.b.build_int_mul(nty, ntz, "").unwrap(), i32t.const_int(1, false), "").unwrap();
        let other = e.b.build_and(ragged, rows, "not.warps").unwrap();
        call_version(e, other, super::func::THREAD_VERSION);
        if has_whole_version(&plan) {
            whole_dispatch(e, ntx);
        }
    }
    let setup = e.b.get_insert_block().unwrap_or(setup);
    // Warps per row of the block; a tile warp (`Layout::Tile`, `%ntid.x` = 16 and `%ntid.y`
    // even: `narrow_dispatch`) is one pair of rows, and the loop over rows runs the pairs.
    let (warps, rows) = if short { (i32t.const_int(1, false), None) } else if tile {
        let nty = e.load_cta_u32(field::NTID, Some(1));
        (i32t.const_int(1, false), Some(e.b.build_right_shift(nty, i32t.const_int(1, false), false, "row.pairs").unwrap()))
    } else {
        (e.b.build_right_shift(e.b.build_int_add(ntx, i32t.const_int(31, false), "").unwrap(), i32t.const_int(5, false), false, "warps.x").unwrap(), None)
    };
    let next = lane_array(e, i32t.into(), "next");
    let carry = lane_array(e, ctx.bool_type().into(), "cc.cf.lanes");
    let phased = !plan.barriers.is_empty() || !plan.yields.is_empty() || !plan.parks.is_empty();
    let has_cluster_barrier = plan.cluster_barrier;
    let mut bars = None;
    let mut group: Option<IntValue<'ctx>> = None;
    let mut tz: Option<IntValue<'ctx>> = None;
    let mut x0 = None;
    let y0;
    let l = if phased {
        let nty = rows.unwrap_or_else(|| e.load_cta_u32(field::NTID, Some(1)));
        let ntz = e.load_cta_u32(field::NTID, Some(2));
        let frames = e.cta_ptr_field(field::FRAMES);
        let stride_g = e.m.module.add_global(i64t, None, &format!("__ptxr_warp_frame_{}", e.fname));
        stride_g.set_linkage(inkwell::module::Linkage::Internal);
        stride_g.set_constant(true);
        // `finish` sets the size; a kernel whose emission fails never gets there, and its
        // module must still verify.
        stride_g.set_initializer(&i64t.const_zero());
        let stride = e.b.build_load(i64t, stride_g.as_pointer_value(), "warp.frame").unwrap().into_int_value();
        // Every warp starts at the kernel's entry.
        let nw = e.b.build_int_mul(e.b.build_int_mul(warps, nty, "").unwrap(), ntz, "warps").unwrap();
        // A group of CTAs (`groups_ctas`): their warps one after another in each phase,
        // frames for all of them (the runtime sizes them), `%ctaid` per warp.
        if groups_ctas(e, &plan) {
            let g = e.load_cta_u32(field::GROUP, None);
            let g = e.b.build_select(e.b.build_int_compare(IntPredicate::EQ, g, i32t.const_zero(), "").unwrap(), i32t.const_int(1, false), g, "group").unwrap().into_int_value();
            group = Some(g);
        }
        let nw = match group {
            Some(g) => e.b.build_int_mul(nw, g, "warps.group").unwrap(),
            None => nw,
        };
        let multi = e.b.build_int_compare(IntPredicate::UGT, nw, i32t.const_int(1, false), "multi.warp").unwrap();
        let ih = ctx.append_basic_block(e.f, "frames.init");
        let ib = ctx.append_basic_block(e.f, "frames.init.body");
        let phase = ctx.append_basic_block(e.f, "phase");
        let k = crate::lanes::index_loop(&e.b, [ih, setup, ib], nw, ib, phase, "w");
        // One store per warp frame, strided by the frame's size: kept a plain loop (neither
        // vectorized nor unrolled). LLVM's vectorizer had widened it into 16 scalar stores
        // plus an 8-wide epilogue and a remainder, 100-odd IR lines in every warp kernel.
        e.lane_latches.push(ib);
        e.whole_lane_latches.push(ib);
        e.scalar_lane_latches.push(ib);
        // Barriers that count threads: no arrivals yet, every warp unfinished.
        let counted = plan.counted.then(|| {
            let arr = |name: &str, t: inkwell::types::IntType<'ctx>| {
                let a = e.alloca_b.build_alloca(t.array_type(BARRIER_IDS), name).unwrap();
                e.b.build_memset(a, 4, ctx.i8_type().const_zero(), i32t.const_int(BARRIER_IDS as u64 * (t.get_bit_width() as u64).div_ceil(8), false)).unwrap();
                a
            };
            let c = Counted {
                arrived: arr("bar.arrived", i32t),
                released: arr("bar.released", i32t),
                need: arr("bar.need", i32t),
                all_waiting: arr("bar.all.waiting", i32t),
                all_release: arr("bar.all.release", ctx.bool_type()),
                unfinished: e.alloca_b.build_alloca(i32t, "warps.unfinished").unwrap(),
                progress: e.alloca_b.build_alloca(ctx.bool_type(), "phase.progress").unwrap(),
            };
            e.b.build_store(c.unfinished, nw).unwrap();
            c
        });
        e.b.build_unconditional_branch(ih).unwrap();
        e.b.position_before(&ib.get_first_instruction().unwrap());
        let off = e.b.build_int_mul(e.b.build_int_z_extend(k, i64t, "").unwrap(), stride, "").unwrap();
        let fp = unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), frames, &[off], "").unwrap() };
        e.b.build_store(fp, i32t.const_zero()).unwrap();
        let waiting = e.alloca_b.build_alloca(ctx.bool_type(), "phase.waiting").unwrap();
        let phase_bar = e.alloca_b.build_alloca(i32t, "phase.barrier").unwrap();
        let phase_line = e.alloca_b.build_alloca(i32t, "phase.line").unwrap();
        let mismatch = e.alloca_b.build_alloca(i32t, "phase.mismatch").unwrap();
        let yielded = e.alloca_b.build_alloca(ctx.bool_type(), "phase.yielded").unwrap();
        let hold = e.alloca_b.build_alloca(ctx.bool_type(), "phase.hold").unwrap();
        let count = e.alloca_b.build_alloca(i32t, "yield.count").unwrap();
        let f = e.ir_func();
        let has_red = plan.barriers.iter().any(|((b, k), _)| f.blocks[*b as usize].insts[*k].src.has_mod("red"));
        let red = has_red.then(|| {
            let cell = |name: &str| {
                let p = e.alloca_b.build_alloca(i32t, name).unwrap();
                e.alloca_b.build_store(p, i32t.const_zero()).unwrap();
                p
            };
            RedCounts { arriving: [cell("red.true"), cell("red.false")], released: [cell("red.true.released"), cell("red.false.released")] }
        });
        e.alloca_b.build_store(yielded, ctx.bool_type().const_zero()).unwrap();
        e.alloca_b.build_store(count, i32t.const_zero()).unwrap();
        e.b.position_at_end(phase);
        // A phase after one in which a warp yielded at a loop's back edge holds the warps
        // waiting at a barrier there (the warps that yielded have not reached it yet).
        let held = e.b.build_load(ctx.bool_type(), yielded, "").unwrap().into_int_value();
        e.b.build_store(hold, held).unwrap();
        if let Some(r) = red {
            // A phase that may release a barrier releases its bar.red counts (see `RedCounts`).
            for k in 0..2 {
                let a = e.b.build_load(i32t, r.arriving[k], "").unwrap().into_int_value();
                let old = e.b.build_load(i32t, r.released[k], "").unwrap().into_int_value();
                let rel = e.b.build_select(held, old, a, "").unwrap();
                e.b.build_store(r.released[k], rel).unwrap();
                let keep = e.b.build_select(held, a, i32t.const_zero(), "").unwrap();
                e.b.build_store(r.arriving[k], keep).unwrap();
            }
        }
        e.b.build_store(yielded, ctx.bool_type().const_zero()).unwrap();
        e.b.build_store(waiting, ctx.bool_type().const_zero()).unwrap();
        let pb = e.b.build_load(i32t, phase_bar, "").unwrap();
        let pb = e.b.build_select(held, pb, i32t.const_int(DONE, false).into(), "").unwrap();
        e.b.build_store(phase_bar, pb).unwrap();
        e.b.build_store(mismatch, i32t.const_zero()).unwrap();
        if let Some(c) = counted {
            // The barriers this phase releases ([`Counted`]).
            e.b.build_store(hold, ctx.bool_type().const_zero()).unwrap();
            e.b.build_store(c.progress, ctx.bool_type().const_zero()).unwrap();
            e.b.build_store(phase_line, i32t.const_zero()).unwrap();
            let unfinished = e.b.build_load(i32t, c.unfinished, "").unwrap().into_int_value();
            for id in 0..BARRIER_IDS as u64 {
                let at = |a: PointerValue<'ctx>, t: inkwell::types::IntType<'ctx>| unsafe { e.b.build_in_bounds_gep(t.array_type(BARRIER_IDS), a, &[i32t.const_zero(), i32t.const_int(id, false)], "").unwrap() };
                let (pa, pr, pn) = (at(c.arrived, i32t), at(c.released, i32t), at(c.need, i32t));
                let arrived = e.b.build_load(i32t, pa, "").unwrap().into_int_value();
                let released = e.b.build_load(i32t, pr, "").unwrap().into_int_value();
                let need = e.b.build_load(i32t, pn, "").unwrap().into_int_value();
                // Every `need` threads that have arrived complete a use of the barrier.
                let some = e.b.build_int_compare(IntPredicate::NE, need, i32t.const_zero(), "").unwrap();
                let div = e.b.build_select(some, need, i32t.const_int(1, false), "").unwrap().into_int_value();
                let uses = e.b.build_int_unsigned_div(e.b.build_int_sub(arrived, released, "").unwrap(), div, "").unwrap();
                let uses = e.b.build_select(some, uses, i32t.const_zero(), "").unwrap().into_int_value();
                e.b.build_store(pr, e.b.build_int_add(released, e.b.build_int_mul(uses, need, "").unwrap(), "").unwrap()).unwrap();
                // Without a count: every warp that has not ended waits there.
                let pw = at(c.all_waiting, i32t);
                let w = e.b.build_load(i32t, pw, "").unwrap().into_int_value();
                let all = e.b.build_and(e.b.build_int_compare(IntPredicate::NE, w, i32t.const_zero(), "").unwrap(), e.b.build_int_compare(IntPredicate::EQ, w, unfinished, "").unwrap(), "").unwrap();
                e.b.build_store(at(c.all_release, ctx.bool_type()), all).unwrap();
                e.b.build_store(pw, e.b.build_select(all, i32t.const_zero(), w, "").unwrap()).unwrap();
            }
        }
        let l = crate::lanes::cta_loops_n(e, phase, warps, "warp", group, rows);
        // After the last warp: another phase while warps wait at a barrier.
        let done = l.done;
        if let Some(t) = done.get_terminator() {
            t.erase_from_basic_block();
        }
        e.b.position_at_end(done);
        let bad = ctx.append_basic_block(e.f, "phase.deadlock");
        let ok = ctx.append_basic_block(e.f, "phase.end");
        let mm = e.b.build_load(i32t, mismatch, "").unwrap().into_int_value();
        let is_bad = e.b.build_int_compare(IntPredicate::NE, mm, i32t.const_zero(), "").unwrap();
        let (is_bad, mm) = match counted {
            // By count: a phase in which no warp went on, while warps wait, ends nothing.
            Some(c) => {
                let w = e.b.build_load(ctx.bool_type(), waiting, "").unwrap().into_int_value();
                let p = e.b.build_load(ctx.bool_type(), c.progress, "").unwrap().into_int_value();
                let y = e.b.build_load(ctx.bool_type(), yielded, "").unwrap().into_int_value();
                let on = e.b.build_or(p, y, "").unwrap();
                let stuck = e.b.build_and(w, e.b.build_not(on, "").unwrap(), "bar.stuck").unwrap();
                let pl = e.b.build_load(i32t, phase_line, "").unwrap().into_int_value();
                (e.b.build_or(is_bad, stuck, "").unwrap(), e.b.build_select(is_bad, mm, pl, "").unwrap().into_int_value())
            }
            None => (is_bad, mm),
        };
        e.b.build_conditional_branch(is_bad, bad, ok).unwrap();
        e.b.position_at_end(bad);
        // PTX ISA 9.7.12.1: every thread of the CTA waits at barrier a until all arrive;
        // warps waiting at different barriers never all arrive.
        let st = e.cta_field_ptr(field::STATUS, None);
        e.b.build_store(st, i32t.const_int(super::abi::STATUS_DEADLOCK as u64, false)).unwrap();
        let sl = e.cta_field_ptr(field::STATUS_LINE, None);
        e.b.build_store(sl, mm).unwrap();
        // The line where the phase's first warp waits, for the message (docs/abi.md).
        let first = e.b.build_load(i32t, phase_line, "").unwrap().into_int_value();
        // (Barriers that count threads: the line where the phase's first warp waits.)
        let first = if counted.is_some() { i32t.const_zero() } else { e.b.build_or(first, i32t.const_int(super::abi::DEADLOCK_OTHER_LINE as u64, false), "").unwrap() };
        let stt = e.cta_field_ptr(field::STATUS_THREAD, None);
        e.b.build_store(stt, first).unwrap();
        e.b.build_unconditional_branch(e.abort_bb).unwrap();
        e.b.position_at_end(ok);
        let again = e.b.build_load(ctx.bool_type(), waiting, "").unwrap().into_int_value();
        let ret = ctx.append_basic_block(e.f, "cta.ret");
        if has_cluster_barrier {
            // Every warp waits at `barrier.cluster.wait` (none yielded on its way there in
            // this phase): the CTA has arrived, and the cluster's other CTAs are met before
            // the next phase releases the warps (PTX ISA 8.x barrier.cluster).
            let meet = ctx.append_basic_block(e.f, "cluster.meet");
            let next = ctx.append_basic_block(e.f, "phase.next");
            let pb = e.b.build_load(i32t, phase_bar, "").unwrap().into_int_value();
            let at_cluster = e.b.build_int_compare(IntPredicate::EQ, pb, i32t.const_int(super::abi::CLUSTER_BARRIER as u64, false), "").unwrap();
            let y = e.b.build_load(ctx.bool_type(), yielded, "").unwrap().into_int_value();
            let all_there = e.b.build_and(e.b.build_and(again, at_cluster, "").unwrap(), e.b.build_not(y, "").unwrap(), "").unwrap();
            e.b.build_conditional_branch(all_there, meet, next).unwrap();
            e.b.position_at_end(meet);
            let st = e.cluster_sync();
            let fine = e.b.build_int_compare(IntPredicate::EQ, st, i32t.const_zero(), "").unwrap();
            let stop = ctx.append_basic_block(e.f, "cluster.stop");
            e.b.build_conditional_branch(fine, phase, stop).unwrap();
            e.b.position_at_end(stop);
            let sp = e.cta_field_ptr(field::STATUS, None);
            e.b.build_store(sp, st).unwrap();
            e.b.build_unconditional_branch(e.abort_bb).unwrap();
            e.b.position_at_end(next);
        }
        e.b.build_conditional_branch(again, phase, ret).unwrap();
        e.b.position_at_end(ret);
        e.b.build_return(Some(&i32t.const_zero())).unwrap();
        // This warp's frame and where it resumes.
        e.b.position_at_end(l.body);
        let wl = e.b.build_int_add(e.b.build_int_mul(e.b.build_int_add(e.b.build_int_mul(l.z, nty, "").unwrap(), l.y, "").unwrap(), warps, "").unwrap(), l.inner, "warp.id").unwrap();
        if group.is_some() {
            tz = Some(group_cta(e, l.z, ntz));
        }
        let off = e.b.build_int_mul(e.b.build_int_z_extend(wl, i64t, "").unwrap(), stride, "").unwrap();
        let frame = unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), frames, &[off], "frame").unwrap() };
        x0 = Some(crate::lanes::exact(e.b.build_left_shift(l.inner, i32t.const_int(5, false), "x0").unwrap()));
        y0 = tile.then(|| first_row(e, l.y));
        let finished = ctx.append_basic_block(e.f, "warp.finished");
        let start = ctx.append_basic_block(e.f, "warp.start");
        let at = e.b.build_load(i32t, frame, "resume").unwrap().into_int_value();
        let sw = e.b.build_switch(at, start, &[(i32t.const_int(DONE, false), l.latch)]).unwrap();
        let b2 = ctx.create_builder();
        b2.position_at_end(finished);
        b2.build_store(frame, i32t.const_int(DONE, false)).unwrap();
        if let Some(c) = counted {
            // One warp fewer for the barriers without a count to wait for.
            let u = b2.build_load(i32t, c.unfinished, "").unwrap().into_int_value();
            b2.build_store(c.unfinished, b2.build_int_sub(u, i32t.const_int(1, false), "").unwrap()).unwrap();
            b2.build_store(c.progress, ctx.bool_type().const_all_ones()).unwrap();
        }
        b2.build_unconditional_branch(l.latch).unwrap();
        bars = Some(Bars { frame, stride: stride_g, resume: sw, sites: Vec::new(), latch: l.latch, finished, waiting, phase_bar, phase_line, mismatch, yielded, hold, count, multi, red, counted });
        e.b.position_at_end(start);
        if let Some(c) = counted {
            e.b.build_store(c.progress, ctx.bool_type().const_all_ones()).unwrap();
        }
        l
    } else {
        let l = crate::lanes::cta_loops_n(e, setup, warps, "warp", None, rows);
        e.b.position_at_end(l.body);
        y0 = tile.then(|| first_row(e, l.y));
        l
    };
    // Lanes past the row's end never run.
    let x0 = if tile { i32t.const_zero() } else { x0.unwrap_or_else(|| crate::lanes::exact(e.b.build_left_shift(l.inner, i32t.const_int(5, false), "x0").unwrap())) };
    let v32 = i32t.vec_type(LANES);
    let lanes = inkwell::types::VectorType::const_vector(&(0..LANES).map(|k| i32t.const_int(k as u64, false)).collect::<Vec<_>>());
    let xs = e.b.build_int_add(splat(e, x0), lanes, "").unwrap();
    // A lane exists when its `%tid.x` is below `%ntid.x`; every lane does in a kernel whose
    // `.reqntid` rows are whole warps (`Plan::whole_rows`, set for the main version only).
    let alive = if plan.whole_rows {
        inkwell::types::VectorType::const_vector(&vec![ctx.bool_type().const_all_ones(); LANES as usize])
    } else {
        e.b.build_int_compare(IntPredicate::ULT, xs, splat(e, ntx), "").unwrap()
    };
    // Every lane of a tile warp exists (16 by an even number of rows).
    let init = if tile { v32.const_zero().into() } else { e.b.build_select(alive, v32.const_zero(), splat(e, i32t.const_int(DONE, false)), "").unwrap() };
    e.b.build_store(next, init).unwrap();
    let body_start = e.b.get_insert_block().unwrap();
    // The dispatch: the lowest block any lane waits for (cases added by `walk`).
    let end = bars.as_ref().map_or(l.latch, |b| b.finished);
    // It first polls the launch's time limit (a loop whose back edge goes through the
    // dispatch is bounded there).
    let dispatch = ctx.append_basic_block(e.f, "warp.dispatch");
    let pick = ctx.append_basic_block(e.f, "warp.pick");
    e.b.position_at_end(pick);
    let all = e.b.build_load(v32, next, "next").unwrap();
    let low = e.intrinsic("llvm.vector.reduce.umin", &[v32.into()], &[all]).into_int_value();
    let dispatch_switch = e.b.build_switch(low, end, &[]).unwrap();
    let y0 = y0.unwrap_or(l.y);
    e.tid = [x0, y0, tz.unwrap_or(l.z)];
    e.b.position_at_end(dispatch);
    e.poll_cancel_at(0);
    e.b.build_unconditional_branch(pick).unwrap();
    e.b.position_at_end(body_start);
    e.exit_bb = end;
    e.ret_bb = end;
    let gep_b = ctx.create_builder();
    e.warp = Some(Box::new(WarpState { plan: std::rc::Rc::new(plan), lane: None, gep_b, next, carry, x0, y0, tile, short, tile_lane: Default::default(), dispatch, dispatch_switch, affine_tmp: Default::default(), affine_ready: Default::default(), affine_lanes: Default::default(), bars, storage: Default::default(), narrow: Default::default(), ordered: Default::default(), scatters: Default::default(), prefetch: Default::default(), cta_group: group.is_some(), temps: Default::default(), deferred: Default::default(), deferred_err: Default::default(), lane_vars: Default::default(), local_top: Default::default(), local_align: Default::default(), latch: Default::default(), lane_exits: Default::default(), top: l.body }));
    set_lane(e, None);
}

/// `%tid.y` of a tile warp's first lane, from the index of its pair of rows.
fn first_row<'ctx>(e: &FnEmitter<'ctx, '_, '_>, pair: IntValue<'ctx>) -> IntValue<'ctx> {
    crate::lanes::exact(e.b.build_left_shift(pair, e.ctx().i32_type().const_int(1, false), "y0").unwrap())
}

/// Whether one call of the kernel's CTA function runs a group of consecutive CTAs
/// (`CtaCtx::group`, chosen by the runtime): kernels whose warps yield in grid-stride loops
/// (`Plan::yields`) and whose ties to their CTA [`group_cta`] gives each warp ([`may_group_ctas`]),
/// with no read of `%ctaid` or of the shared window before the warps start. Each CTA of a
/// grid-stride loop walks its own span of every stride; run one after another, each CPU
/// thread's CTAs touched 1 KB of every 1 MB (saxpy over 2^26 floats in 1024 CTAs of 256
/// threads): in a group their warps take turns and walk neighbouring spans together (the
/// same order in C: 1.2x-1.3x of a contiguous loop for one CTA at a time, 1.0x for groups
/// of 8 to 32).
fn groups_ctas(e: &FnEmitter<'_, '_, '_>, plan: &Plan) -> bool {
    // (A module that reaches other CTAs' windows counts shared addresses from its cluster's
    // rank-0 window: one CTA per CTA function.)
    if e.cta_cached(super::abi::field::CTAID) || e.shared_base_taken() || e.m.dsmem {
        return false;
    }
    may_group_ctas(&e.ir_func(), plan)
}

/// The part of [`groups_ctas`] that the kernel's IR decides: grid-stride loops that yield;
/// no warp collectives, `%tid.y`/`%tid.z` or calls; CTA barriers only as `bar.sync` or
/// `barrier.sync` of one constant id without a thread count, so that a group's warps all
/// wait at the one barrier and are released when every warp of the group that has not
/// ended waits there, when every warp of each CTA does; shared memory only through
/// instructions that find it from the warp's window (`FnEmitter::shared_base`, which
/// [`group_cta`] sets per warp): no cluster's windows, tensor memory, bulk copies or
/// mbarriers.
pub fn may_group_ctas(f: &Func, plan: &Plan) -> bool {
    if plan.yields.is_empty() || plan.collectives || plan.reads_tid_yz || plan.counted || plan.cluster_barrier || !plan.parks.is_empty() || plan.park_barrier.is_some() {
        return false;
    }
    let mut id = None;
    for ((b, k), _) in &plan.barriers {
        let inst = &f.blocks[*b as usize].insts[*k];
        let i = inst.src;
        if !matches!(i.opcode.name, "bar" | "barrier") || i.has_mod("red") || i.has_mod("arrive") || i.has_mod("cluster") || inst.operands.len() != 1 {
            return false;
        }
        let this = match &inst.operands[0] {
            Opnd::Imm(x) => uniformity::parse_int(x),
            _ => None,
        };
        if this.is_none() || id.map_or(false, |k| Some(k) != this) {
            return false;
        }
        id = this;
    }
    f.blocks.iter().flat_map(|b| b.insts.iter()).all(|i| {
        let s = i.src;
        let name = s.opcode.name;
        // (`cp.async.bulk*` and `cp.reduce.async.bulk*`: every bulk form has a `.bulk` modifier.)
        let bulk = name == "cp" && s.mods.iter().any(|m| m.starts_with("bulk"));
        !bulk && !s.mods.iter().any(|m| m.starts_with("shared::cluster")) && !matches!(name, "call" | "clusterlaunchcontrol" | "mbarrier" | "tcgen05" | "wgmma" | "mapa" | "getctarank" | "multimem" | "griddepcontrol")
    })
}

/// In a group of CTAs (`groups_ctas`), where warp loop index `z` (over `%ntid.z` times the
/// group) starts a warp: its CTA's `%ctaid` becomes the one `FnEmitter::load_cta_u32` gives
/// (and the one the runtime reads in `CtaCtx::ctaid` if the warp stops with an error).
/// Returns its `%tid.z`.
fn group_cta<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, z: IntValue<'ctx>, ntz: IntValue<'ctx>) -> IntValue<'ctx> {
    use super::abi::field;
    let (i32t, i64t) = (e.ctx().i32_type(), e.ctx().i64_type());
    let k = e.b.build_int_unsigned_div(z, ntz, "group.cta").unwrap();
    let tz = e.b.build_int_unsigned_rem(z, ntz, "tid.z").unwrap();
    let wide = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>| e.b.build_int_z_extend(v, i64t, "").unwrap();
    // The group's first CTA, as the runtime wrote it (before any warp's).
    let first: Vec<IntValue<'ctx>> = (0..3).map(|d| e.group_first_ctaid(d)).collect();
    let (gx, gy) = (e.load_cta_u32(field::NCTAID, Some(0)), e.load_cta_u32(field::NCTAID, Some(1)));
    let (gx, gy) = (wide(e, gx), wide(e, gy));
    let lin0 = e.b.build_int_add(wide(e, first[0]), e.b.build_int_mul(gx, e.b.build_int_add(wide(e, first[1]), e.b.build_int_mul(gy, wide(e, first[2]), "").unwrap(), "").unwrap(), "").unwrap(), "").unwrap();
    let lin = e.b.build_int_add(lin0, wide(e, k), "cta.linear").unwrap();
    let cx = e.b.build_int_unsigned_rem(lin, gx, "").unwrap();
    let rest = e.b.build_int_unsigned_div(lin, gx, "").unwrap();
    let cy = e.b.build_int_unsigned_rem(rest, gy, "").unwrap();
    let cz = e.b.build_int_unsigned_div(rest, gy, "").unwrap();
    for (d, v) in [cx, cy, cz].into_iter().enumerate() {
        let v = e.b.build_int_truncate(v, i32t, "ctaid").unwrap();
        let p = e.cta_field_ptr(field::CTAID, Some(d as u32));
        e.b.build_store(p, v).unwrap();
        e.set_cta_cached(field::CTAID, d as u32, v);
    }
    // Its shared window: the group's windows lie `abi::group_smem_stride` apart from the
    // runtime's `CtaCtx::shared` (docs/abi.md, groups of CTAs).
    let total = e.load_cta_u32(field::TOTAL_SMEM, None);
    let total = wide(e, total);
    let a = super::abi::GROUP_SMEM_ALIGN;
    let up = e.b.build_and(e.b.build_int_add(total, i64t.const_int(a - 1, false), "").unwrap(), i64t.const_int(!(a - 1), false), "").unwrap();
    let stride = e.b.build_int_add(up, i64t.const_int(a, false), "smem.stride").unwrap();
    let raw = e.raw_shared_base();
    let off = e.b.build_int_mul(wide(e, k), stride, "").unwrap();
    let w = unsafe { e.b.build_in_bounds_gep(e.ctx().i8_type(), raw, &[off], "smem.cta").unwrap() };
    let w = e.align_shared(&e.b, w);
    e.set_shared_base(w);
    tz
}

/// The phases of a kernel with CTA barriers (see [`setup`]).
pub struct Bars<'ctx> {
    /// This warp's frame.
    frame: PointerValue<'ctx>,
    /// Bytes per warp frame (set by [`finish`]).
    stride: inkwell::values::GlobalValue<'ctx>,
    /// The switch on the site a warp resumes at (cases added per barrier).
    resume: inkwell::values::InstructionValue<'ctx>,
    /// Per barrier site (numbered from 1): the block that saves the live variables (before
    /// its first instruction), the one that restores them, the variables, and the barrier
    /// instruction (block, index; `None` for a loop's yield).
    sites: Vec<(BasicBlock<'ctx>, BasicBlock<'ctx>, Vec<(u32, String)>, Option<(BlockId, usize)>)>,
    /// The next warp.
    latch: BasicBlock<'ctx>,
    /// Where a warp whose lanes have all ended goes.
    finished: BasicBlock<'ctx>,
    /// Some warp waits at a barrier in this phase.
    waiting: PointerValue<'ctx>,
    /// The barrier id the warps of this phase wait at (`DONE`: none yet).
    phase_bar: PointerValue<'ctx>,
    /// The source line of the phase's barrier (where its first warp waits).
    phase_line: PointerValue<'ctx>,
    /// Line of a barrier whose id differs from the phase's (0: none).
    mismatch: PointerValue<'ctx>,
    /// Some warp yielded at a loop's back edge in this phase ([`YIELD_EVERY`]).
    yielded: PointerValue<'ctx>,
    /// Some warp yielded in the previous phase: warps at a barrier stay there.
    hold: PointerValue<'ctx>,
    /// Back edges this warp has taken since it last yielded.
    count: PointerValue<'ctx>,
    /// The CTA has more than one warp (else a yield would resume the same warp).
    multi: IntValue<'ctx>,
    /// The kernel has `bar.red`: its counts.
    red: Option<RedCounts<'ctx>>,
    /// The kernel has barriers that count threads: their state.
    counted: Option<Counted<'ctx>>,
}

/// Barrier ids of a CTA (PTX ISA 9.7.12.1: 0..15).
const BARRIER_IDS: u32 = 16;

/// The CTA's barriers where some barrier counts threads (PTX ISA 9.7.12.1 `bar.sync a, b`,
/// `bar.arrive a, b`: warp-specialized kernels, where producer and consumer warps meet at
/// named barriers of their own). Per barrier id: the threads that have arrived and those
/// released so far, and the count of the latest arrival. A warp waiting at a counted barrier
/// keeps its ticket (the threads that arrived before it) in its frame; each phase starts by
/// completing as many uses of each barrier as the arrivals fill (`need` threads each), and a
/// warp goes on once its ticket lies below the threads released, so warps that arrive for
/// a later use wait for it. A barrier without a count (`bar.sync a`) waits for every thread
/// of the CTA that has not ended: it is released when every warp that has not ended waits
/// there. A phase in which no warp goes on while warps wait is a deadlock.
#[derive(Clone, Copy)]
struct Counted<'ctx> {
    arrived: PointerValue<'ctx>,
    released: PointerValue<'ctx>,
    need: PointerValue<'ctx>,
    /// Per id: the warps waiting at it without a count.
    all_waiting: PointerValue<'ctx>,
    /// Per id: this phase releases the warps waiting at it without a count.
    all_release: PointerValue<'ctx>,
    /// Warps of the CTA that have not ended.
    unfinished: PointerValue<'ctx>,
    /// Some warp went on in this phase (started, resumed, arrived at a barrier or ended).
    progress: PointerValue<'ctx>,
}

/// Frame offsets of a warp waiting at a barrier in a kernel with counted barriers: its
/// ticket and the barrier id (whether the barrier counts is the site's own).
const FRAME_TICKET: u64 = 4;
const FRAME_BAR_ID: u64 = 8;

/// Frame offsets: the resume site, then `next` and the carry flags. A warp's frame starts on
/// a cache line (the runtime aligns frames to 64 bytes, the frame stride is a multiple of
/// 64), and `next`, 32 lanes of 4 bytes, fills the next two: its vector stores and loads
/// at each barrier were split across lines at offset 16 (the block scan's most sampled
/// instructions on a Zen 4 core).
const FRAME_NEXT: u64 = 64;
const FRAME_CARRY: u64 = FRAME_NEXT + 4 * LANES as u64;
const FRAME_VARS: u64 = FRAME_CARRY + LANES as u64;

/// PTX ISA 9.7.12.1 bar.sync / barrier.sync for all threads of the CTA: the warp stops here
/// until every other warp has reached a barrier (or ended). Its lanes are all here (the
/// plan allows barriers only where every live lane runs together).
fn barrier<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, at: (BlockId, usize), live: Vec<(u32, String)>) -> R<()> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let i = inst.src;
    let id = if i.has_mod("cluster") { i32t.const_int(super::abi::CLUSTER_BARRIER as u64, false) } else { barrier_id_value(e, func, inst)? };
    let line = e.line();
    if let Some(c) = w(e).bars.as_ref().and_then(|b| b.counted) {
        return counted_barrier(e, func, inst, at, live, id, c);
    }
    // PTX ISA 9.7.12.1 bar.red: the warp adds its lanes' predicates to the CTA's counts
    // before it waits ([`RedCounts`]).
    if i.has_mod("red") {
        red_arrive(e, func, inst, at.0)?;
    }
    let bars = w(e).bars.as_ref().expect("a kernel with barriers runs in phases");
    let (frame, waiting, phase_bar, mismatch, latch, resume, hold) = (bars.frame, bars.waiting, bars.phase_bar, bars.mismatch, bars.latch, bars.resume, bars.hold);
    let phase_line = bars.phase_line;
    let yields = !w(e).plan.yields.is_empty();
    let site = bars.sites.len() as u64 + 1;
    // The first warp at a barrier names the phase's barrier; another id is a deadlock.
    let pb = e.b.build_load(i32t, phase_bar, "").unwrap().into_int_value();
    let none = e.b.build_int_compare(IntPredicate::EQ, pb, i32t.const_int(DONE, false), "").unwrap();
    let same = e.b.build_int_compare(IntPredicate::EQ, pb, id, "").unwrap();
    let fine = e.b.build_or(none, same, "").unwrap();
    let mm = e.b.build_load(i32t, mismatch, "").unwrap().into_int_value();
    let mm = e.b.build_select(fine, mm, i32t.const_int(line as u64, false), "").unwrap();
    e.b.build_store(mismatch, mm).unwrap();
    let pl = e.b.build_load(i32t, phase_line, "").unwrap().into_int_value();
    let pl = e.b.build_select(none, i32t.const_int(line as u64, false), pl, "").unwrap();
    e.b.build_store(phase_line, pl).unwrap();
    e.b.build_store(phase_bar, id).unwrap();
    e.b.build_store(frame, i32t.const_int(site, false)).unwrap();
    e.b.build_store(waiting, ctx.bool_type().const_all_ones()).unwrap();
    let save = ctx.append_basic_block(e.f, "bar.save");
    let restore = ctx.append_basic_block(e.f, "bar.restore");
    let cont = ctx.append_basic_block(e.f, "bar.resume");
    e.b.build_unconditional_branch(save).unwrap();
    e.b.position_at_end(save);
    e.b.build_unconditional_branch(latch).unwrap();
    e.b.position_at_end(restore);
    e.b.build_unconditional_branch(cont).unwrap();
    let target = if yields {
        // Released only in a phase after one without yields.
        let check = ctx.append_basic_block(e.f, "bar.check");
        let stay = ctx.append_basic_block(e.f, "bar.held");
        e.b.position_at_end(check);
        let h = e.b.build_load(ctx.bool_type(), hold, "").unwrap().into_int_value();
        e.b.build_conditional_branch(h, stay, restore).unwrap();
        e.b.position_at_end(stay);
        e.b.build_store(waiting, ctx.bool_type().const_all_ones()).unwrap();
        e.b.build_unconditional_branch(latch).unwrap();
        check
    } else {
        restore
    };
    unsafe { inkwell::llvm_sys::core::LLVMAddCase(inkwell::values::AsValueRef::as_value_ref(&resume), inkwell::values::AsValueRef::as_value_ref(&i32t.const_int(site, false)), target.as_mut_ptr()) };
    e.warp.as_mut().unwrap().bars.as_mut().unwrap().sites.push((save, restore, live, Some(at)));
    e.b.position_at_end(cont);
    if i.has_mod("red") {
        red_result(e, func, inst, at.0)?;
    }
    Ok(())
}

/// The barrier id of CTA barrier or arrival `inst` (uniform), read once for the warp. Ids
/// are 0..15; a register's value is taken modulo 16, as the per-thread scheduler does.
fn barrier_id_value<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>) -> R<IntValue<'ctx>> {
    let i32t = e.ctx().i32_type();
    let i = inst.src;
    let id = match barrier_id(i).and_then(|k| i.operands.get(k)) {
        Some(op) => {
            bind(e, func, i, inst.scope, &inst.reads(), &[]);
            let v = e.read_int(op, crate::syntax::ast::Type::U32);
            e.overrides.clear();
            v?
        }
        None => i32t.const_zero(),
    };
    Ok(match id.get_zero_extended_constant() {
        Some(c) if c > 15 => return Err(e.err(i.span, format!("barrier id {c} is out of range (0..15)"))),
        Some(_) => id,
        None => e.b.build_and(id, i32t.const_int(15, false), "").unwrap(),
    })
}

/// The arrival of the warp's lanes (those running block `b`) at barrier `id` with thread
/// count operand 1 of `inst` (PTX ISA 9.7.12.1: a multiple of the warp size, at most the
/// CTA's warps' threads; else the launch stops as the per-thread scheduler stops it): adds them to
/// the barrier's arrivals ([`Counted`]) and returns the warp's ticket, the arrivals before.
/// A count of 0 at `bar.sync`/`bar.red` means every thread of the CTA, as no count does (the
/// spec asks a non-zero count of `bar.arrive` only; the per-thread scheduler takes 0 so):
/// the warp then counts among the warps waiting for all, and its ticket is [`ALL_TICKET`].
fn count_arrival<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, b: BlockId, id: IntValue<'ctx>, c: Counted<'ctx>) -> R<IntValue<'ctx>> {
    use super::abi::field;
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let i = inst.src;
    bind(e, func, i, inst.scope, &inst.reads(), &[]);
    let n = e.read_int(&i.operands[1], crate::syntax::ast::Type::U32);
    e.overrides.clear();
    let n = n?;
    let nt: Vec<IntValue<'ctx>> = (0..3).map(|k| e.load_cta_u32(field::NTID, Some(k))).collect();
    let threads = e.b.build_int_mul(e.b.build_int_mul(nt[0], nt[1], "").unwrap(), nt[2], "cta.threads").unwrap();
    // (The CTA's warps: a partial last warp counts whole, as the per-thread scheduler's
    // bound does.)
    let threads = e.b.build_and(e.b.build_int_add(threads, i32t.const_int(31, false), "").unwrap(), i32t.const_int(!31u32 as u64, false), "cta.warp.threads").unwrap();
    let ragged = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(n, i32t.const_int(31, false), "").unwrap(), i32t.const_zero(), "").unwrap();
    let zero = e.b.build_int_compare(IntPredicate::EQ, n, i32t.const_zero(), "bar.all").unwrap();
    let zero_bad = if is_arrive(inst) { zero } else { ctx.bool_type().const_zero() };
    let bad = e.b.build_or(e.b.build_or(ragged, e.b.build_int_compare(IntPredicate::UGT, n, threads, "").unwrap(), "").unwrap(), zero_bad, "bar.bad.count").unwrap();
    e.abort_if(bad, super::abi::STATUS_BAD_BARRIER);
    // The lanes here: every live lane of the warp (the plan puts barriers only there).
    let bid = w(e).plan.uni.cfg.order[b as usize];
    let here = e.b.build_int_compare(IntPredicate::EQ, next_lanes(e), splat(e, i32t.const_int(bid as u64, false)), "").unwrap();
    let bits = e.b.build_bit_cast(here, i32t, "").unwrap().into_int_value();
    let lanes = e.intrinsic("llvm.ctpop", &[i32t.into()], &[bits.into()]).into_int_value();
    let at = |a: PointerValue<'ctx>| unsafe { e.b.build_in_bounds_gep(i32t.array_type(BARRIER_IDS), a, &[i32t.const_zero(), id], "").unwrap() };
    let (pa, pn) = (at(c.arrived), at(c.need));
    let ticket = e.b.build_load(i32t, pa, "bar.ticket").unwrap().into_int_value();
    let added = e.b.build_select(zero, i32t.const_zero(), lanes, "").unwrap().into_int_value();
    e.b.build_store(pa, e.b.build_int_add(ticket, added, "").unwrap()).unwrap();
    let need = e.b.build_load(i32t, pn, "").unwrap().into_int_value();
    e.b.build_store(pn, e.b.build_select(zero, need, n, "").unwrap()).unwrap();
    let pw = unsafe { e.b.build_in_bounds_gep(i32t.array_type(BARRIER_IDS), c.all_waiting, &[i32t.const_zero(), id], "").unwrap() };
    let wv = e.b.build_load(i32t, pw, "").unwrap().into_int_value();
    e.b.build_store(pw, e.b.build_int_add(wv, e.b.build_int_z_extend(zero, i32t, "").unwrap(), "").unwrap()).unwrap();
    // An arrival may complete a use of the barrier: the phase is not stuck.
    e.b.build_store(c.progress, ctx.bool_type().const_all_ones()).unwrap();
    Ok(e.b.build_select(zero, i32t.const_int(ALL_TICKET as u64, false), ticket, "").unwrap().into_int_value())
}

/// The ticket of a warp that waits at a barrier for every thread ([`count_arrival`]).
const ALL_TICKET: u32 = u32::MAX;

/// PTX ISA 9.7.12.1 `bar.arrive a, b` in a kernel whose barriers count threads: the warp's
/// lanes arrive and go on.
fn arrive<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, b: BlockId) -> R<()> {
    let id = barrier_id_value(e, func, inst)?;
    let Some(c) = w(e).bars.as_ref().and_then(|x| x.counted) else { return Ok(()) };
    count_arrival(e, func, inst, b, id, c)?;
    Ok(())
}

/// A CTA barrier in a kernel whose barriers count threads ([`Counted`]): the warp arrives
/// (by count, or as one of the warps a barrier without a count waits for), saves its frame
/// with its ticket and stops; in each later phase it goes on if the barrier has released it,
/// else it waits on.
fn counted_barrier<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, at: (BlockId, usize), live: Vec<(u32, String)>, id: IntValue<'ctx>, c: Counted<'ctx>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let line = e.line();
    // (`bar.sync a, 0`: no count, as the per-thread scheduler takes it.)
    let counts = inst.src.operands.len() == 2 && !matches!(inst.operands.get(1), Some(Opnd::Imm(x)) if uniformity::parse_int(x) == Some(0));
    let ticket = if counts {
        count_arrival(e, func, inst, at.0, id, c)?
    } else {
        let pw = unsafe { e.b.build_in_bounds_gep(i32t.array_type(BARRIER_IDS), c.all_waiting, &[i32t.const_zero(), id], "").unwrap() };
        let wv = e.b.build_load(i32t, pw, "").unwrap().into_int_value();
        e.b.build_store(pw, e.b.build_int_add(wv, i32t.const_int(1, false), "").unwrap()).unwrap();
        e.b.build_store(c.progress, ctx.bool_type().const_all_ones()).unwrap();
        i32t.const_zero()
    };
    let bars = w(e).bars.as_ref().expect("a kernel with barriers runs in phases");
    let (frame, waiting, latch, resume, phase_line) = (bars.frame, bars.waiting, bars.latch, bars.resume, bars.phase_line);
    let site = bars.sites.len() as u64 + 1;
    let word = |e: &FnEmitter<'ctx, '_, '_>, off: u64| unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), frame, &[i64t.const_int(off, false)], "").unwrap() };
    e.b.build_store(word(e, FRAME_TICKET), ticket).unwrap();
    e.b.build_store(word(e, FRAME_BAR_ID), id).unwrap();
    // The line where the phase's first warp waits (a deadlock's message).
    let note_line = |e: &FnEmitter<'ctx, '_, '_>| {
        let pl = e.b.build_load(i32t, phase_line, "").unwrap().into_int_value();
        let first = e.b.build_int_compare(IntPredicate::EQ, pl, i32t.const_zero(), "").unwrap();
        e.b.build_store(phase_line, e.b.build_select(first, i32t.const_int(line as u64, false), pl, "").unwrap()).unwrap();
    };
    note_line(e);
    e.b.build_store(frame, i32t.const_int(site, false)).unwrap();
    e.b.build_store(waiting, ctx.bool_type().const_all_ones()).unwrap();
    let save = ctx.append_basic_block(e.f, "bar.save");
    let restore = ctx.append_basic_block(e.f, "bar.restore");
    let cont = ctx.append_basic_block(e.f, "bar.resume");
    let check = ctx.append_basic_block(e.f, "bar.check");
    let stay = ctx.append_basic_block(e.f, "bar.held");
    e.b.build_unconditional_branch(save).unwrap();
    e.b.position_at_end(save);
    e.b.build_unconditional_branch(latch).unwrap();
    // In a later phase: released?
    e.b.position_at_end(check);
    let k = e.b.build_load(i32t, word(e, FRAME_BAR_ID), "").unwrap().into_int_value();
    let all = {
        let p = unsafe { e.b.build_in_bounds_gep(ctx.bool_type().array_type(BARRIER_IDS), c.all_release, &[i32t.const_zero(), k], "").unwrap() };
        e.b.build_load(ctx.bool_type(), p, "").unwrap().into_int_value()
    };
    let go = if counts {
        let t = e.b.build_load(i32t, word(e, FRAME_TICKET), "").unwrap().into_int_value();
        let p = unsafe { e.b.build_in_bounds_gep(i32t.array_type(BARRIER_IDS), c.released, &[i32t.const_zero(), k], "").unwrap() };
        let r = e.b.build_load(i32t, p, "").unwrap().into_int_value();
        let counted = e.b.build_int_compare(IntPredicate::ULT, t, r, "").unwrap();
        let waits_all = e.b.build_int_compare(IntPredicate::EQ, t, i32t.const_int(ALL_TICKET as u64, false), "").unwrap();
        e.b.build_select(waits_all, all, counted, "").unwrap().into_int_value()
    } else {
        all
    };
    e.b.build_conditional_branch(go, restore, stay).unwrap();
    e.b.position_at_end(stay);
    e.b.build_store(waiting, ctx.bool_type().const_all_ones()).unwrap();
    note_line(e);
    e.b.build_unconditional_branch(latch).unwrap();
    e.b.position_at_end(restore);
    e.b.build_store(c.progress, ctx.bool_type().const_all_ones()).unwrap();
    e.b.build_unconditional_branch(cont).unwrap();
    unsafe { inkwell::llvm_sys::core::LLVMAddCase(inkwell::values::AsValueRef::as_value_ref(&resume), inkwell::values::AsValueRef::as_value_ref(&i32t.const_int(site, false)), check.as_mut_ptr()) };
    e.warp.as_mut().unwrap().bars.as_mut().unwrap().sites.push((save, restore, live, Some(at)));
    e.b.position_at_end(cont);
    Ok(())
}

/// The CTA's counts for `bar.red` ([`Bars::red`]): lanes whose predicate was true and false
/// at the barrier the warps are arriving at, and the counts of the barrier just released.
/// Each warp adds its lanes when it arrives; a phase that releases the warps waiting at a
/// barrier (one not held after a yield) starts by moving the counts to the released ones and
/// clearing them; each warp reads those when it resumes, before it can reach another barrier.
#[derive(Clone, Copy)]
struct RedCounts<'ctx> {
    arriving: [PointerValue<'ctx>; 2],
    released: [PointerValue<'ctx>; 2],
}

/// `bar.red` at block `b`: a lane loop over the lanes waiting there (every live lane of the
/// warp) adds 1 to the true or the false count for each lane's predicate `{!}c`.
fn red_arrive<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, b: BlockId) -> R<()> {
    let i32t = e.ctx().i32_type();
    let red = w(e).bars.as_ref().and_then(|x| x.red).expect("a kernel with bar.red has its counts");
    let id = w(e).plan.uni.cfg.order[b as usize];
    let l = open(e, id);
    bind(e, func, inst.src, inst.scope, &inst.reads(), &[]);
    let p = e.read(&inst.src.operands[2], crate::syntax::ast::Type::Pred)?.into_int_value();
    e.overrides.clear();
    for (k, at) in red.arriving.iter().enumerate() {
        let hit = if k == 0 { p } else { e.b.build_not(p, "").unwrap() };
        let n = e.b.build_load(i32t, *at, "").unwrap().into_int_value();
        let n = e.b.build_int_add(n, e.b.build_int_z_extend(hit, i32t, "").unwrap(), "").unwrap();
        e.b.build_store(*at, n).unwrap();
    }
    close(e, l);
    Ok(())
}

/// After `bar.red` at block `b`, each lane's result: `.popc.u32` the number of threads whose
/// predicate was true, `.and.pred` whether none was false, `.or.pred` whether one was true.
fn red_result<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, b: BlockId) -> R<()> {
    let i32t = e.ctx().i32_type();
    let i = inst.src;
    let red = w(e).bars.as_ref().and_then(|x| x.red).expect("a kernel with bar.red has its counts");
    let id = w(e).plan.uni.cfg.order[b as usize];
    let l = open(e, id);
    bind(e, func, i, inst.scope, &[], &inst.defs);
    let yes = e.b.build_load(i32t, red.released[0], "").unwrap().into_int_value();
    let no = e.b.build_load(i32t, red.released[1], "").unwrap().into_int_value();
    let r = if i.has_mod("popc") {
        e.write(&i.operands[0], crate::syntax::ast::Type::U32, yes.into())
    } else {
        let v = if i.has_mod("and") {
            e.b.build_int_compare(IntPredicate::EQ, no, i32t.const_zero(), "").unwrap()
        } else {
            e.b.build_int_compare(IntPredicate::NE, yes, i32t.const_zero(), "").unwrap()
        };
        e.write(&i.operands[0], crate::syntax::ast::Type::Pred, v.into())
    };
    e.overrides.clear();
    close(e, l);
    r
}

/// The block a back edge from `b` to its loop's header (`header`) takes: `header` itself,
/// or, when `b` is the latch of a loop that yields ([`YIELD_EVERY`]), a block that counts
/// the iteration and every `YIELD_EVERY`th stops the warp (saving its frame as a barrier
/// does) so that the CTA's next warp runs; it resumes at `header` in the next phase.
fn back_edge<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, b: BlockId, header: BasicBlock<'ctx>) -> BasicBlock<'ctx> {
    // Every back edge first polls the launch's time limit.
    let cur = e.b.get_insert_block();
    let poll = e.ctx().append_basic_block(e.f, "loop.poll");
    e.b.position_at_end(poll);
    e.poll_cancel();
    let after_poll = e.b.get_insert_block().unwrap();
    if let Some(cur) = cur {
        e.b.position_at_end(cur);
    }
    let to = back_edge_yield(e, b, header);
    let cur = e.b.get_insert_block();
    e.b.position_at_end(after_poll);
    e.b.build_unconditional_branch(to).unwrap();
    if let Some(cur) = cur {
        e.b.position_at_end(cur);
    }
    poll
}

/// The yield part of [`back_edge`].
fn back_edge_yield<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, b: BlockId, header: BasicBlock<'ctx>) -> BasicBlock<'ctx> {
    let Some((_, live)) = w(e).plan.yields.iter().find(|(l, _)| *l == b).cloned() else { return header };
    let every = yield_every(&e.ir_func(), &w(e).plan, b);
    counted_yield(e, live, "yield", header, every)
}

/// A block that counts the times the warp passes it and every `every`th time, when the CTA
/// has other warps, stops the warp (saving `live` to its frame as a barrier does) so that
/// the CTA's next warp runs; the warp goes on at `cont` (at once, or once resumed in a later
/// phase).
fn counted_yield<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, live: Vec<(u32, String)>, name: &str, cont: BasicBlock<'ctx>, every: u64) -> BasicBlock<'ctx> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let bars = w(e).bars.as_ref().expect("a kernel with yields runs in phases");
    let (frame, waiting, yielded, count, multi, latch, resume) = (bars.frame, bars.waiting, bars.yielded, bars.count, bars.multi, bars.latch, bars.resume);
    let site = bars.sites.len() as u64 + 1;
    let cur = e.b.get_insert_block();
    let check = ctx.append_basic_block(e.f, &format!("{name}.check"));
    let save = ctx.append_basic_block(e.f, &format!("{name}.save"));
    let restore = ctx.append_basic_block(e.f, &format!("{name}.restore"));
    e.b.position_at_end(check);
    let c = e.b.build_load(i32t, count, "").unwrap().into_int_value();
    let c = e.b.build_int_add(c, i32t.const_int(1, false), "").unwrap();
    let now = e.b.build_and(e.b.build_int_compare(IntPredicate::UGE, c, i32t.const_int(every, false), "").unwrap(), multi, "yield.now").unwrap();
    e.b.build_store(count, e.b.build_select(now, i32t.const_zero(), c, "").unwrap()).unwrap();
    e.b.build_conditional_branch(now, save, cont).unwrap();
    e.b.position_at_end(save);
    e.b.build_store(frame, i32t.const_int(site, false)).unwrap();
    e.b.build_store(waiting, ctx.bool_type().const_all_ones()).unwrap();
    e.b.build_store(yielded, ctx.bool_type().const_all_ones()).unwrap();
    e.b.build_unconditional_branch(latch).unwrap();
    e.b.position_at_end(restore);
    if let Some(c) = w(e).bars.as_ref().and_then(|x| x.counted) {
        e.b.build_store(c.progress, ctx.bool_type().const_all_ones()).unwrap();
    }
    e.b.build_unconditional_branch(cont).unwrap();
    unsafe { inkwell::llvm_sys::core::LLVMAddCase(inkwell::values::AsValueRef::as_value_ref(&resume), inkwell::values::AsValueRef::as_value_ref(&i32t.const_int(site, false)), restore.as_mut_ptr()) };
    e.warp.as_mut().unwrap().bars.as_mut().unwrap().sites.push((save, restore, live, None));
    if let Some(cur) = cur {
        e.b.position_at_end(cur);
    }
    check
}

/// Completes the barrier sites once every register has its storage: lays out the warp
/// frame and fills in the saves and restores. Returns the frame bytes per thread slot.
pub(crate) fn finish<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> Option<u32> {
    let ws = e.warp.as_ref()?;
    let ctx = e.ctx();
    // A warp starts with its lane arrays dead: what it needs of them from before a barrier
    // or a yield its frame restores, and it writes every other lane it reads before reading
    // it (see `FrameTraffic`). Saying so (a store of zeros at the top of the warp loop: a
    // store of poison InstCombine deletes before SROA sees it) keeps SROA's registers from
    // carrying one warp's values into the next, and costs nothing there: a lane loop
    // merges the lanes it does not run with the array's old value, which made each warp's
    // first vector wait for the whole computation of the warp before it (the warp-shuffle
    // reduction's five dependent shuffles, warp after warp).
    // Kernels with more lane arrays than `ZEROED_LANE_ARRAYS` (a GEMM's accumulators and
    // fragments) keep them as they were: the stores cost their optimization more than the
    // warps' overlap brings (benches/mma64, 292 arrays: 0.26 s -> 0.47 s of compile time).
    {
        let kind = ctx.get_kind_id(LANE_ARRAY);
        let mut arrays = Vec::new();
        let mut i = e.f.get_first_basic_block().and_then(|bb| bb.get_first_instruction());
        while let Some(inst) = i {
            if inst.get_opcode() == inkwell::values::InstructionOpcode::Alloca && inst.get_metadata(kind).is_some() {
                if let (Ok(inkwell::types::BasicTypeEnum::ArrayType(at)), Ok(p)) = (inst.get_allocated_type(), PointerValue::try_from(inst)) {
                    arrays.push((p, at));
                }
            }
            i = inst.get_next_instruction();
        }
        let b = ctx.create_builder();
        if let (Some(first), true) = (ws.top.get_first_instruction(), arrays.len() <= ZEROED_LANE_ARRAYS) {
            b.position_before(&first);
            for (p, at) in arrays {
                b.build_store(p, at.const_zero()).unwrap();
            }
        }
    }
    let bars = ws.bars.as_ref()?;
    let i8t = ctx.i8_type();
    let i64t = ctx.i64_type();
    let storage = ws.storage.borrow().clone();
    let mut offsets: HashMap<(u32, String), (u64, u64)> = HashMap::new();
    // The lanes' `.local` copies first (`new_lane_var`).
    let mut top = FRAME_VARS + ws.local_top.get();
    for (_, _, live, _) in &bars.sites {
        for k in live {
            if offsets.contains_key(k) {
                continue;
            }
            let Some((_, ty)) = storage.get(k) else { continue };
            let size = ty.size() as u64 * if ws.plan.scalar_vars.contains(k) { 1 } else { LANES as u64 };
            // Lane arrays (64 bytes and more) on cache lines, as `next` (`FRAME_NEXT`).
            let align = if size >= 64 { 64 } else { 16 };
            top = (top + align - 1) / align * align;
            offsets.insert(k.clone(), (top, size));
            top += size;
        }
    }
    // A multiple of 32 times the `.local` copies' alignment: the runtime aligns the frames
    // to the largest power of two dividing a thread slot's share (`launch::frame_align`).
    let unit = (LANES as u64 * ws.local_align.get() as u64).max(64);
    let stride = (top + unit - 1) / unit * unit;
    bars.stride.set_initializer(&i64t.const_int(stride, false));
    let b = ctx.create_builder();
    let at = |b: &inkwell::builder::Builder<'ctx>, off: u64| unsafe { b.build_in_bounds_gep(i8t, bars.frame, &[i64t.const_int(off, false)], "").unwrap() };
    // The carry flags are kept only by kernels that read them (`addc`, `subc`, `madc`).
    let func = e.ir_func();
    let carries = func.blocks.iter().any(|b| b.insts.iter().any(|i| matches!(i.src.opcode.name, "addc" | "subc" | "madc")));
    let traffic = FrameTraffic::new(&func, &ws.plan, &bars.sites.iter().map(|(_, _, live, at)| (*at, live.clone())).collect::<Vec<_>>());
    let v32 = ctx.i32_type().vec_type(LANES);
    for (site, (save, restore, live, at_bar)) in bars.sites.iter().enumerate() {
        // At a CTA barrier every live lane of the warp waits at the barrier's block (the plan
        // puts barriers only where they run together) and the others have ended: `next` is
        // that block or `DONE`, and the frame keeps it as a mask of 32 bits, the lanes there,
        // from which the restore's `next` is a select LLVM folds into the masks of the blocks
        // after it (`converged_entry`). (Parked lanes of spin loops, and the lanes of a
        // yield, may wait elsewhere: their frames keep `next` whole.) Kernels of nothing
        // but two barriers, one core: 59 -> 41 ns per CTA of 256 threads.
        let compact = at_bar.filter(|_| ws.plan.parks.is_empty()).map(|(b, _)| ws.plan.uni.cfg.order[b as usize] as u64);
        let mut fixed: Vec<(PointerValue<'ctx>, u64, u64)> = if compact.is_some() { Vec::new() } else { vec![(ws.next, FRAME_NEXT, 4 * LANES as u64)] };
        if let Some(bid) = compact {
            let i32t = ctx.i32_type();
            let splat = |c: u64| inkwell::types::VectorType::const_vector(&vec![i32t.const_int(c, false); LANES as usize]);
            b.position_before(&save.get_first_instruction().unwrap());
            let next = b.build_load(v32, ws.next, "next").unwrap().into_vector_value();
            let here = b.build_int_compare(IntPredicate::EQ, next, splat(bid), "bar.lanes").unwrap();
            let bits = b.build_bit_cast(here, i32t, "").unwrap();
            b.build_store(at(&b, FRAME_NEXT), bits).unwrap();
            b.position_before(&restore.get_first_instruction().unwrap());
            let bits = b.build_load(i32t, at(&b, FRAME_NEXT), "bar.lanes").unwrap();
            let here = b.build_bit_cast(bits, ctx.bool_type().vec_type(LANES), "").unwrap().into_vector_value();
            let next = b.build_select(here, splat(bid), splat(DONE), "next").unwrap();
            b.build_store(ws.next, next).unwrap();
        }
        if carries {
            fixed.push((ws.carry, FRAME_CARRY, LANES as u64));
        }
        let (mut saves, mut restores) = (fixed.clone(), fixed);
        for k in live {
            if let (Some((p, _)), Some((off, size))) = (storage.get(k), offsets.get(k)) {
                if traffic.saves(site, k) {
                    saves.push((*p, *off, *size));
                }
                if traffic.restores(site, k) {
                    restores.push((*p, *off, *size));
                }
            }
        }
        b.position_before(&save.get_first_instruction().unwrap());
        for (p, off, size) in &saves {
            b.build_memcpy(at(&b, *off), 1, *p, 1, i64t.const_int(*size, false)).unwrap();
        }
        b.position_before(&restore.get_first_instruction().unwrap());
        for (p, off, size) in &restores {
            b.build_memcpy(*p, 1, at(&b, *off), 1, i64t.const_int(*size, false)).unwrap();
        }
    }
    Some((stride / LANES as u64) as u32)
}

/// Which webs a barrier site saves to and restores from the warp's frame: those whose frame
/// copy may be stale (written since the warp last restored them, or never restored: a
/// forward "may be written" analysis from the kernel's entry), and those the code may read
/// before the next barrier (a backward analysis; a write counts as a read, since a lane
/// loop merges the lanes it does not run, and so does a later save). The warps of a CTA
/// share the webs' storage, so a web not restored holds another warp's value until written:
/// it is neither read nor saved before then. A block scan's totals, written before the first
/// barrier and read after the second, no longer go through the storage in between. Kernels
/// whose loops yield (`Plan::yields`) save and restore every live web at every site.
struct FrameTraffic {
    /// Per site: the live webs it may skip saving (their frame copy is current).
    clean: Vec<HashSet<(u32, String)>>,
    /// Per site: the live webs the code after it may read.
    needed: Vec<HashSet<(u32, String)>>,
    all: bool,
}

impl FrameTraffic {
    fn new(f: &Func, plan: &Plan, sites: &[(Option<(BlockId, usize)>, Vec<(u32, String)>)]) -> FrameTraffic {
        let n = sites.len();
        if sites.iter().any(|(at, _)| at.is_none()) {
            return FrameTraffic { clean: Vec::new(), needed: Vec::new(), all: true };
        }
        let cfg = &plan.uni.cfg;
        let site_at: HashMap<(BlockId, usize), usize> = sites.iter().enumerate().map(|(k, (at, _))| (at.unwrap(), k)).collect();
        let universe: HashSet<(u32, String)> = sites.iter().flat_map(|(_, l)| l.iter().cloned()).collect();
        let key = |v: u32| plan.key(f, v);
        let blocks: Vec<BlockId> = cfg.rpo.clone();
        let nb = f.blocks.len();
        // Forward: the webs whose frame copy may be stale on entry to each block.
        let mut stale_in: Vec<Option<HashSet<(u32, String)>>> = vec![None; nb];
        let entry = blocks[0];
        stale_in[entry as usize] = Some(universe.clone());
        let mut changed = true;
        let mut stale_at: Vec<HashSet<(u32, String)>> = vec![HashSet::new(); n];
        while changed {
            changed = false;
            for &b in &blocks {
                let Some(mut cur) = stale_in[b as usize].clone() else { continue };
                for (k, inst) in f.blocks[b as usize].insts.iter().enumerate() {
                    if let Some(&s) = site_at.get(&(b, k)) {
                        stale_at[s] = stale_at[s].union(&cur).cloned().collect();
                        for w in &sites[s].1 {
                            cur.remove(w);
                        }
                        // `bar.red` writes its result after the warp resumes.
                        for d in &inst.defs {
                            let w = key(*d);
                            if universe.contains(&w) {
                                cur.insert(w);
                            }
                        }
                        continue;
                    }
                    for d in &inst.defs {
                        let w = key(*d);
                        if universe.contains(&w) {
                            cur.insert(w);
                        }
                    }
                }
                for &t in &cfg.succs[b as usize] {
                    let slot = &mut stale_in[t as usize];
                    let grown = match slot {
                        None => {
                            *slot = Some(cur.clone());
                            true
                        }
                        Some(x) => {
                            let before = x.len();
                            x.extend(cur.iter().cloned());
                            x.len() != before
                        }
                    };
                    changed |= grown;
                }
            }
        }
        let clean: Vec<HashSet<(u32, String)>> = (0..n).map(|s| sites[s].1.iter().filter(|w| !stale_at[s].contains(*w)).cloned().collect()).collect();
        // Backward: the webs whose storage the code from each block on may read.
        let mut need_in: Vec<HashSet<(u32, String)>> = vec![HashSet::new(); nb];
        let mut needed = vec![HashSet::new(); n];
        changed = true;
        while changed {
            changed = false;
            for &b in blocks.iter().rev() {
                let blk = &f.blocks[b as usize];
                let mut cur: HashSet<(u32, String)> = cfg.succs[b as usize].iter().flat_map(|t| need_in[*t as usize].iter().cloned()).collect();
                let mut term = Vec::new();
                match &blk.term {
                    Term::CondBr { cond, .. } => cond.values(&mut term),
                    Term::Switch { index, .. } => index.values(&mut term),
                    _ => {}
                }
                cur.extend(term.into_iter().map(key).filter(|w| universe.contains(w)));
                for (k, inst) in blk.insts.iter().enumerate().rev() {
                    if let Some(&s) = site_at.get(&(b, k)) {
                        // (`bar.red`'s result is written after the warp resumes, not restored.)
                        let defs: HashSet<(u32, String)> = inst.defs.iter().map(|d| key(*d)).collect();
                        needed[s].extend(sites[s].1.iter().filter(|w| cur.contains(*w) && !defs.contains(*w)).cloned());
                        for w in sites[s].1.iter().chain(defs.iter()) {
                            cur.remove(w);
                        }
                        // The save reads the webs it saves; `bar.red` reads its predicate
                        // before the warp waits.
                        cur.extend(sites[s].1.iter().filter(|w| !clean[s].contains(*w)).cloned());
                        cur.extend(inst.reads().into_iter().map(key).filter(|w| universe.contains(w)));
                        continue;
                    }
                    for v in inst.reads().into_iter().chain(inst.defs.iter().copied()) {
                        let w = key(v);
                        if universe.contains(&w) {
                            cur.insert(w);
                        }
                    }
                }
                if cur != need_in[b as usize] {
                    need_in[b as usize] = cur;
                    changed = true;
                }
            }
        }
        FrameTraffic { clean, needed, all: false }
    }

    fn saves(&self, site: usize, w: &(u32, String)) -> bool {
        self.all || !self.clean[site].contains(w)
    }

    fn restores(&self, site: usize, w: &(u32, String)) -> bool {
        self.all || self.needed[site].contains(w)
    }
}

/// Each lane's next block (`next`) as a vector.
pub(super) fn next_lanes<'ctx>(e: &FnEmitter<'ctx, '_, '_>) -> inkwell::values::VectorValue<'ctx> {
    e.b.build_load(e.ctx().i32_type().vec_type(LANES), w(e).next, "next").unwrap().into_vector_value()
}

/// The plan of the kernel being emitted.
pub(super) fn plan_of(e: &FnEmitter) -> std::rc::Rc<Plan> {
    w(e).plan.clone()
}

/// Binds the registers `inst` reads (`defs`: that it writes) for the lane being emitted.
pub(super) fn bind_inst<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, defs: bool) {
    if defs {
        // The reads too: wgmma.mma_async reads its descriptors, scale-d and C where it
        // computes (the defs win for a register both read and written: one web).
        bind(e, func, inst.src, inst.scope, &inst.reads(), &inst.defs);
    } else {
        bind(e, func, inst.src, inst.scope, &inst.reads(), &[]);
    }
}

/// How value `v` is held, for code that reads or writes all lanes at once: `None` where a
/// read recomputes it (copies of special registers, [`Plan::remat`]).
pub(super) enum WebView<'ctx> {
    /// An array of 32 lanes.
    Lanes(PointerValue<'ctx>),
    /// One scalar for the warp.
    Scalar(PointerValue<'ctx>),
    /// The base of `base + stride * lane` (its stride).
    Affine(PointerValue<'ctx>, Stride),
}

pub(super) fn web_view<'ctx>(e: &FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, v: u32) -> Option<(WebView<'ctx>, crate::syntax::ast::Type)> {
    let plan = plan_of(e);
    let key = plan.key(func, v);
    let ty = func.values[v as usize].ty;
    let scalar = plan.scalar_vars.contains(&key);
    let affine = plan.affine.get(&key).copied();
    // (An anchored web's lanes are its scalar plus a recomputed value: read lane by lane.)
    if plan.anchored.contains_key(&key) || !(scalar && affine.is_none()) && (plan.copies.contains_key(&v) || plan.remat.contains(&v)) {
        return None;
    }
    let p = web_storage(e, &key, ty);
    Some((
        match (scalar, affine) {
            (true, Some(s)) => WebView::Affine(p, s),
            (true, None) => WebView::Scalar(p),
            _ => WebView::Lanes(p),
        },
        ty,
    ))
}

/// Whether a write of value `v` to its lane array may fill every lane, not only the lanes
/// running its instruction: `v` is its web's only value (no phi joins it, no earlier value
/// of the register flows into it, the instruction has no guard) and its block is in no
/// loop. Each lane then runs the instruction at most once, and the dispatch runs a block
/// outside loops once per warp with every lane that reaches it (blocks run in order, and
/// no lane returns to an earlier one), so no lane that ran it earlier still needs its old
/// lane: the lanes not running it have exited or never reach it, and by SSA dominance they
/// never read `v`.
pub(super) fn fills_all_lanes(e: &FnEmitter, func: &crate::ir::Func, v: u32) -> bool {
    let plan = plan_of(e);
    let Def::Inst { block, inst } = func.values[v as usize].def else { return false };
    if func.blocks[block as usize].insts[inst as usize].src.guard.is_some() || plan.inlined[block as usize] {
        return false;
    }
    if plan.uni.cfg.loops.iter().any(|(_, body)| body.contains(&block)) {
        return false;
    }
    let var = &func.values[v as usize].var;
    plan.web_values.get(&(plan.web[v as usize], var.0, var.1.clone())) == Some(&1)
}

/// A lane loop of the lanes waiting for block number `id` (see [`open`]).
pub(super) struct Lanes<'ctx>(LaneLoop<'ctx>);

pub(super) fn open_lanes<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, id: u32) -> Lanes<'ctx> {
    let mut l = open(e, id);
    l.collective = true;
    // A collective's lane loop exchanges values between lanes through memory.
    w(e).narrow.set(true);
    Lanes(l)
}

pub(super) fn current_lane<'ctx>(l: &Lanes<'ctx>) -> IntValue<'ctx> {
    l.0.lane
}

pub(super) fn close_lanes<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, l: Lanes<'ctx>) {
    close(e, l.0)
}

pub(super) fn splat<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>) -> inkwell::values::VectorValue<'ctx> {
    let t = v.get_type().vec_type(LANES);
    let undef = t.get_undef();
    let ins = e.b.build_insert_element(undef, v, e.ctx().i32_type().const_zero(), "").unwrap();
    e.b.build_shuffle_vector(ins, undef, t.const_zero(), "").unwrap()
}

fn w<'b, 'ctx>(e: &'b FnEmitter<'ctx, '_, '_>) -> &'b WarpState<'ctx> {
    e.warp.as_ref().expect("warp path")
}

/// Makes `lane` the lane being emitted (`None`: code that runs once per warp): its `%tid.x`,
/// its carry flag, and (through `lane_slot`) its elements of the lane arrays. Lane
/// addresses are built in the open lane loop's entry, so that they dominate its body.
fn set_lane<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, lane: Option<IntValue<'ctx>>) {
    let i32t = e.ctx().i32_type();
    let bools = e.ctx().bool_type().array_type(LANES);
    let ws = e.warp.as_mut().unwrap();
    ws.lane = lane;
    ws.affine_ready.borrow_mut().clear();
    let (b, l) = match lane {
        Some(l) => (&ws.gep_b, l),
        None => (&e.alloca_b, i32t.const_zero()),
    };
    match (lane, ws.tile_lane.get()) {
        // A tile warp's lane: `%tid.x` is the inner loop's index, `%tid.y` the warp's first
        // row plus the outer loop's.
        (Some(_), Some((x, r))) if ws.tile => {
            e.tid[0] = x;
            e.tid[1] = crate::lanes::exact(b.build_int_add(ws.y0, r, "tid.y").unwrap());
        }
        (Some(_), _) => e.tid[0] = crate::lanes::exact(b.build_int_add(ws.x0, l, "tid.x").unwrap()),
        (None, _) => {
            e.tid[0] = ws.x0;
            e.tid[1] = ws.y0;
        }
    }
    e.carry = unsafe { b.build_in_bounds_gep(bools, ws.carry, &[i32t.const_zero(), l], "cc.cf").unwrap() };
    e.regs.clear();
}

/// Opens a lane loop running the lanes waiting for block number `id`.
fn open<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, id: u32) -> LaneLoop<'ctx> {
    open_with(e, id, true)
}

/// Whether the instructions `insts` of block `b` may run for every lane of the warp, not
/// only the lanes waiting for `b`: `b` is converged (every live lane runs it together: the
/// others have exited, and nothing reads their registers again) and the instructions only
/// compute registers from registers, with nothing a lane that is not there could observe
/// or fault on (no memory access, no division). A lane loop without the per-lane test is
/// plain vector code for LLVM (no masked stores, no per-lane selects).
fn unguarded_run(f: &Func, plan: &Plan, b: BlockId, insts: &[crate::ir::Inst]) -> bool {
    converged(plan, b)
        && insts.iter().all(|i| hoistable(f, i) && !matches!(i.src.opcode.name, "div" | "rem" | "ld"))
}

/// Whether every live lane runs block `b` together, in its own code (not a region run inside
/// another block's lane loop): a converged block outside every loop with a divergent exit.
fn converged(plan: &Plan, b: BlockId) -> bool {
    plan.uni.group[b as usize] == Group::All && !plan.uni.in_divergent_loop(b) && !plan.inlined[b as usize]
}

/// Opens a lane loop for block number `id`; `guarded`: only the lanes waiting for it run.
fn open_with<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, id: u32, guarded: bool) -> LaneLoop<'ctx> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let pre = e.b.get_insert_block().unwrap();
    // A tile warp's lane loop is a loop over its two rows around a loop over the 16 lanes of
    // a row: in the inner loop, which LLVM vectorizes, `%tid.x` is the loop's index, so
    // that accesses at consecutive `%tid.x` are consecutive in the vector, and `%tid.y` is
    // the same for every lane (the rows of a 16-wide tile in shared memory are one run).
    let rows = w(e).tile.then(|| {
        let h = ctx.append_basic_block(e.f, "lane.rows");
        e.b.position_at_end(h);
        let r = e.b.build_phi(i32t, "row").unwrap();
        (h, r, ctx.append_basic_block(e.f, "lane.rows.latch"))
    });
    let head = ctx.append_basic_block(e.f, "lane.head");
    let geps = ctx.append_basic_block(e.f, "lane");
    let body = ctx.append_basic_block(e.f, "lane.body");
    let latch = ctx.append_basic_block(e.f, "lane.latch");
    if let Some((h, ..)) = rows {
        e.b.position_at_end(h);
        e.b.build_unconditional_branch(head).unwrap();
    }
    e.b.position_at_end(head);
    let phi = e.b.build_phi(i32t, "lane").unwrap();
    let lane = match rows {
        Some((_, r, _)) => {
            let x = phi.as_basic_value().into_int_value();
            let r = r.as_basic_value().into_int_value();
            e.warp.as_ref().unwrap().tile_lane.set(Some((x, r)));
            crate::lanes::exact(e.b.build_int_add(e.b.build_left_shift(r, i32t.const_int(4, false), "").unwrap(), x, "lane").unwrap())
        }
        None => phi.as_basic_value().into_int_value(),
    };
    let next = w(e).next;
    let at = unsafe { e.b.build_in_bounds_gep(i32t.array_type(LANES), next, &[i32t.const_zero(), lane], "").unwrap() };
    let n = e.b.build_load(i32t, at, "").unwrap().into_int_value();
    let here = e.b.build_int_compare(IntPredicate::EQ, n, i32t.const_int(id as u64, false), "").unwrap();
    if guarded {
        e.b.build_conditional_branch(here, geps, latch).unwrap();
    } else {
        e.b.build_unconditional_branch(geps).unwrap();
    }
    e.b.position_at_end(geps);
    let br = e.b.build_unconditional_branch(body).unwrap();
    e.warp.as_mut().unwrap().gep_b.position_before(&br);
    set_lane(e, Some(lane));
    e.b.position_at_end(body);
    w(e).latch.set(Some(latch));
    LaneLoop { pre, head, phi, lane, latch, reads: HashSet::new(), writes: false, guarded, next_in: n, next_at: at, next_out: None, id, collective: false, rows }
}

/// Closes a lane loop and leaves the builder after it.
fn close<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, l: LaneLoop<'ctx>) {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let affine = std::mem::take(&mut *w(e).affine_lanes.borrow_mut());
    let after = ctx.append_basic_block(e.f, "lane.done");
    let end = e.b.get_insert_block().filter(|bb| bb.get_terminator().is_none());
    w(e).latch.set(None);
    let exits = std::mem::take(&mut *w(e).lane_exits.borrow_mut());
    if let Some(end) = end {
        e.b.build_unconditional_branch(l.latch).unwrap();
        e.b.position_at_end(l.latch);
        if let Some(succ) = l.next_out {
            // Every lane's `next` is written, the lanes not here keep theirs: a whole-vector
            // store, which the next read of `next` (the loop's next iteration) forwards
            // from; a store of only the lanes here would be a masked store it cannot. (A
            // lane whose call exited is done.)
            let phi = e.b.build_phi(i32t, "next").unwrap();
            phi.add_incoming(&[(&l.next_in, l.head), (&succ, end)]);
            for x in &exits {
                phi.add_incoming(&[(&i32t.const_int(DONE, false), *x)]);
            }
            e.b.build_store(l.next_at, phi.as_basic_value().into_int_value()).unwrap();
        }
    }
    e.b.position_at_end(l.latch);
    let x = l.phi.as_basic_value().into_int_value();
    let l1 = crate::lanes::exact(e.b.build_int_add(x, i32t.const_int(1, false), "").unwrap());
    let width = if l.rows.is_some() || w(e).short { TILE_ROW } else { LANES };
    let more = e.b.build_int_compare(IntPredicate::ULT, l1, i32t.const_int(width as u64, false), "").unwrap();
    // A tile warp's loop of vector instructions runs its two rows in one loop over `%tid.x`
    // ([`jam_rows`]).
    let jam = l.rows.is_some() && !w(e).plan.matrix && !w(e).narrow.get() && !w(e).ordered.get();
    let br = e.b.build_conditional_branch(more, l.head, if jam { after } else { l.rows.map_or(after, |r| r.2) }).unwrap();
    let jammed = match l.rows {
        Some((h, r, rows_latch)) if jam => jam_rows(ctx, l.pre, l.head, l.latch, after, l.phi, r, h, rows_latch, l1.as_instruction().unwrap()),
        _ => None,
    };
    if jam && jammed.is_none() {
        // Not copyable: the loop over the rows after all.
        br.erase_from_basic_block();
        e.b.position_at_end(l.latch);
        e.b.build_conditional_branch(more, l.head, l.rows.unwrap().2).unwrap();
    }
    let mut rows = l.rows;
    let mut loop_latch = l.latch;
    if let Some((latch2, l1b)) = jammed {
        l.phi.add_incoming(&[(&i32t.const_zero(), l.pre), (&l1b, latch2)]);
        loop_latch = latch2;
        rows = None;
        w(e).tile_lane.set(None);
    } else {
        e.b.position_at_end(l.pre);
        e.b.build_unconditional_branch(l.rows.map_or(l.head, |r| r.0)).unwrap();
        l.phi.add_incoming(&[(&i32t.const_zero(), l.rows.map_or(l.pre, |r| r.0)), (&l1, l.latch)]);
    }
    if let Some((h, r, latch)) = rows {
        // The two rows: unrolled (after the inner loop is vectorized, or before: each copy
        // keeps its loop's metadata).
        e.b.position_at_end(latch);
        let r0 = r.as_basic_value().into_int_value();
        let r1 = crate::lanes::exact(e.b.build_int_add(r0, i32t.const_int(1, false), "").unwrap());
        let more = e.b.build_int_compare(IntPredicate::ULT, r1, i32t.const_int((LANES / TILE_ROW) as u64, false), "").unwrap();
        e.b.build_conditional_branch(more, h, after).unwrap();
        r.add_incoming(&[(&i32t.const_zero(), l.pre), (&r1, latch)]);
        e.lane_latches.push(latch);
        e.unroll_lane_latches.push(latch);
        w(e).tile_lane.set(None);
    }
    e.lane_latches.push(loop_latch);
    // 32 lanes wide: each instruction of the loop becomes one `<32 x T>` operation and the
    // loop disappears, so that its lanes' registers stay vectors from one lane loop to the
    // next (at LLVM's preferred width the loop remains, 2 iterations of 16 lanes, and its
    // lane arrays go through memory). Only loops of instructions that are vector
    // instructions ([`vector_friendly`]): the width is forced, and LLVM would otherwise
    // scalarize what has no vector form into 32 copies (integer division, gathers: 10-15x
    // the code of a kernel). Not for matrix code, whose lane loops hold whole fragments:
    // vectors that wide take code generation minutes (a wmma GEMM: 40 s).
    if !w(e).plan.matrix && !w(e).narrow.get() {
        e.warp_lane_latches.push(loop_latch);
    } else if !w(e).plan.matrix && !l.collective && l.guarded {
        // A small lane loop that stays scalar (atomics, a gather feeding them: the
        // histogram's `bins[x[i]]++`) is unrolled whole, each lane's test a test of one bit
        // of a mask taken once from `next`: per lane a bit test, the lane's access and
        // its read-modify-write, without the loop's counter and its load of `next[lane]`
        // (those loads, right after `next` was stored as a vector, also stalled on store
        // forwarding once unrolled). Histogram, one core, same run: 0.044 -> 0.037 s; on two
        // cores 1.64x -> 1.35x of C. Not for collectives' lane loops, whose `next` was
        // just written lane by lane (a vector load of it waits for 32 stores: softmax 7%
        // slower), and not for larger loops, whose code would grow 32-fold. (Unguarded
        // loops, which test no lane, stay whole for the loop vectorizer.)
        //
        // Larger loops keep their loop but test the same mask: the loop vectorizer widens
        // such a loop as it sees fit (a divergent region that stores through a scattered
        // address: LLVM peeled lane 0 and ran lanes 1-31 four at a time), and its loads of
        // `next[lane]` at those offsets cannot forward from the whole-vector store before
        // them (the warp-shuffle reduction on an AMD EPYC spent 40% of its time there).
        let small = small_loop(l.head, SMALL_LANE_LOOP);
        if small {
            e.unroll_lane_latches.push(loop_latch);
        }
        let cur = e.b.get_insert_block().unwrap();
        e.b.position_before(&l.pre.get_terminator().unwrap());
        let v32 = i32t.vec_type(LANES);
        let all = e.b.build_load(v32, w(e).next, "").unwrap().into_vector_value();
        let mine = e.b.build_int_compare(IntPredicate::EQ, all, splat(e, i32t.const_int(l.id as u64, false)), "").unwrap();
        let mask = e.b.build_bit_cast(mine, i32t, "here.mask").unwrap().into_int_value();
        let term = l.head.get_terminator().unwrap();
        e.b.position_before(&term);
        let sh = e.b.build_right_shift(mask, l.lane, false, "").unwrap();
        let bit = e.b.build_int_truncate(sh, ctx.bool_type(), "here").unwrap();
        term.set_operand(0, bit);
        if let Some(blocks) = (small && l.rows.is_none()).then(|| copyable(l.head, loop_latch, after)).flatten() {
            // The copy runs when every lane is on and the 32-bit lane values wrap for no lane
            // of this warp (`base + stride * 31` is an `.s32`): its adds are then `nsw`, so
            // that LLVM widens a lane's sign-extended index as `base + k` in 64 bits, one
            // addressing mode per lane (the histogram's `lea; movslq` per lane).
            e.b.position_before(&l.pre.get_terminator().unwrap());
            let i64t = ctx.i64_type();
            let mut take = e.b.build_int_compare(IntPredicate::EQ, mask, i32t.const_all_ones(), "lanes.all").unwrap();
            let mut nsw = Vec::new();
            for a in affine.iter().filter(|a| a.ty.get_bit_width() == 32) {
                // (A warp of one row: the stride is per lane.)
                let Some(last) = a.stride.x.checked_mul(31).filter(|x| i32::try_from(*x).is_ok() && a.stride.r == 0) else { continue };
                let base = e.b.build_load(a.ty, a.base, "").unwrap().into_int_value();
                let end = e.b.build_int_add(e.b.build_int_s_extend(base, i64t, "").unwrap(), i64t.const_int(last as u64, true), "").unwrap();
                let lo = e.b.build_int_compare(IntPredicate::SGE, end, i64t.const_int(i32::MIN as i64 as u64, true), "").unwrap();
                let hi = e.b.build_int_compare(IntPredicate::SLE, end, i64t.const_int(i32::MAX as u64, false), "").unwrap();
                take = e.b.build_and(take, e.b.build_and(lo, hi, "").unwrap(), "lanes.fit").unwrap();
                nsw.extend([a.add, a.mul]);
            }
            let latch = coherent_copy(ctx, l.pre, l.head, loop_latch, after, &blocks, take, &nsw);
            e.lane_latches.push(latch);
            e.unroll_lane_latches.push(latch);
        }
        e.b.position_at_end(cur);
    }
    w(e).narrow.set(false);
    w(e).ordered.set(false);
    // A guarded lane loop of matrix code that stores through scattered addresses (an `mma`
    // epilogue's `C[row * n + col]`, row = lane / 4) stays scalar: no target of ptxr's
    // vectorizes such stores (AVX2 and NEON have no scatter; on AVX-512 ptxr prefers none),
    // so the loop vectorizer weighs every width of a loop of hundreds of predicated stores
    // only to find it not worth it (40 ms of an `mma`-heavy kernel's 100 ms optimization,
    // 128 stores). mma64's assembly is the same with and without the hint on AVX-512, AVX2,
    // SSE2 and AArch64, as is that of 33 of the 36 test files with matrix instructions; in
    // the other three (the stmatrix filetest on AVX-512, two Triton sm_90a matmuls) the
    // vectorizer had widened such a loop's arithmetic around its scalarized stores.
    // `PTXR_SCALAR_SCATTER=0` leaves the hint out, for measurements.
    if w(e).scatters.replace(false) && l.guarded && std::env::var("PTXR_SCALAR_SCATTER").map_or(true, |v| v != "0") {
        e.scalar_lane_latches.push(loop_latch);
    }
    if !l.guarded {
        e.whole_lane_latches.push(loop_latch);
    }
    set_lane(e, None);
    e.b.position_at_end(after);
    let stores = std::mem::take(&mut *w(e).deferred.borrow_mut());
    for d in stores {
        if let Err(x) = run_deferred(e, d) {
            w(e).deferred_err.borrow_mut().get_or_insert(x);
        }
    }
    let pending = std::mem::take(&mut *w(e).prefetch.borrow_mut());
    for (b, k, ahead) in pending {
        prefetch_ahead(e, b, k, ahead);
    }
}

/// The blocks of the small guarded lane loop `head`..`latch` (every block from `head` up to
/// `after`, the empty block after the loop), if [`coherent_copy`] can copy it: no value of
/// the loop is used after it, the loop leaves only to `after`, and it holds no debug
/// intrinsics (whose metadata operands the copy would not remap).
fn copyable<'ctx>(head: BasicBlock<'ctx>, latch: BasicBlock<'ctx>, after: BasicBlock<'ctx>) -> Option<Vec<inkwell::llvm_sys::prelude::LLVMBasicBlockRef>> {
    use inkwell::llvm_sys::core::*;
    let mut blocks = Vec::new();
    let mut bb = Some(head);
    while let Some(x) = bb.filter(|x| *x != after) {
        blocks.push(x.as_mut_ptr());
        bb = x.get_next_basic_block();
    }
    let inside: HashSet<_> = blocks.iter().copied().collect();
    if !inside.contains(&latch.as_mut_ptr()) || after.get_first_instruction().is_some() {
        return None;
    }
    unsafe {
        for &b in &blocks {
            let mut i = LLVMGetFirstInstruction(b);
            while !i.is_null() {
                let mut u = LLVMGetFirstUse(i);
                while !u.is_null() {
                    if !inside.contains(&LLVMGetInstructionParent(LLVMGetUser(u))) {
                        return None;
                    }
                    u = LLVMGetNextUse(u);
                }
                if crate::passes::lane_stores::callee_name(i).is_some_and(|n| n.starts_with(b"llvm.dbg.")) {
                    return None;
                }
                i = LLVMGetNextInstruction(i);
            }
            let t = LLVMGetBasicBlockTerminator(b);
            if (0..LLVMGetNumSuccessors(t)).map(|k| LLVMGetSuccessor(t, k)).any(|s| !inside.contains(&s) && s != after.as_mut_ptr()) {
                return None;
            }
        }
    }
    Some(blocks)
}

/// Copies `blocks` (a region of a function whose values are used only inside it, as
/// [`copyable`] finds) before `after`: each block one named `name`, phis as new phis,
/// other instructions cloned. `map` may hold values the copy reads in place of the region's
/// own (a phi mapped there is not copied); it comes back with every block and instruction
/// of the region mapped to its copy. Operands and branch targets inside the region become
/// the copy's, and so do the incoming blocks of the copied phis. Returns the blocks' copies.
unsafe fn clone_blocks(
    c: inkwell::llvm_sys::prelude::LLVMContextRef,
    blocks: &[inkwell::llvm_sys::prelude::LLVMBasicBlockRef],
    after: BasicBlock<'_>,
    name: &std::ffi::CStr,
    map: &mut HashMap<inkwell::llvm_sys::prelude::LLVMValueRef, inkwell::llvm_sys::prelude::LLVMValueRef>,
) -> Vec<inkwell::llvm_sys::prelude::LLVMBasicBlockRef> {
    use inkwell::llvm_sys::core::*;
    let b = LLVMCreateBuilderInContext(c);
    let mut copies = Vec::new();
    for &x in blocks {
        let y = LLVMInsertBasicBlockInContext(c, after.as_mut_ptr(), name.as_ptr());
        map.insert(LLVMBasicBlockAsValue(x), LLVMBasicBlockAsValue(y));
        copies.push(y);
    }
    let (mut phis, mut insts) = (Vec::new(), Vec::new());
    for (&x, &y) in blocks.iter().zip(&copies) {
        LLVMPositionBuilderAtEnd(b, y);
        let mut i = LLVMGetFirstInstruction(x);
        while !i.is_null() {
            if map.contains_key(&i) {
                // Read in place of the region's own.
            } else if !LLVMIsAPHINode(i).is_null() {
                let p = LLVMBuildPhi(b, LLVMTypeOf(i), c"".as_ptr());
                map.insert(i, p);
                phis.push((i, p));
            } else {
                let n = LLVMInstructionClone(i);
                LLVMInsertIntoBuilder(b, n);
                map.insert(i, n);
                insts.push(n);
            }
            i = LLVMGetNextInstruction(i);
        }
    }
    for &n in &insts {
        for k in 0..LLVMGetNumOperands(n) as u32 {
            if let Some(&v) = map.get(&LLVMGetOperand(n, k)) {
                LLVMSetOperand(n, k, v);
            }
        }
    }
    for (i, p) in phis {
        for k in 0..LLVMCountIncoming(i) {
            let v = LLVMGetIncomingValue(i, k);
            let from = LLVMGetIncomingBlock(i, k);
            let mut v = *map.get(&v).unwrap_or(&v);
            let mut from = map.get(&LLVMBasicBlockAsValue(from)).map_or(from, |x| LLVMValueAsBasicBlock(*x));
            LLVMAddIncoming(p, &mut v, &mut from, 1);
        }
    }
    LLVMDisposeBuilder(b);
    copies
}

/// Runs the two rows of a tile warp's lane loop in one loop over `%tid.x` (unroll and jam):
/// the loop over the rows (`h`, its phi `r`, its latch `rows_latch`) goes, the loop over a
/// row's lanes (`head` .. `latch`, its index `x`, `l1 = x + 1` in the latch, which branches
/// to `head` or `after`) gets a copy of its blocks for row 1 after its own, which runs row 0.
/// `pre` must branch to `head` only once this returns. Returns the copy's latch (the loop's
/// latch now) and its `l1`; `None`, changing nothing, where the blocks are not
/// [`copyable`].
///
/// The loop vectorizer then makes one 16-lane iteration of both rows, whose instructions
/// LLVM schedules together, with one dispatch: two independent chains where each row had one
/// (a tile warp's `sum += As[ty][k] * Bs[k][tx]`; the tiled sgemm edited to two chains per
/// row ran no faster in warps of one row, so the gain is the halved per-warp work). Only loops of vector instructions whose
/// stores go along rows (`ordered` unset): the lanes of such a loop touch nothing that
/// another lane of the loop reads or writes but by a race, so their order is free, and a
/// vector iteration runs row 0's instructions before row 1's as the loop over rows did.
#[allow(clippy::too_many_arguments)]
fn jam_rows<'ctx>(
    ctx: &'ctx inkwell::context::Context,
    pre: BasicBlock<'ctx>,
    head: BasicBlock<'ctx>,
    latch: BasicBlock<'ctx>,
    after: BasicBlock<'ctx>,
    x: PhiValue<'ctx>,
    r: PhiValue<'ctx>,
    h: BasicBlock<'ctx>,
    rows_latch: BasicBlock<'ctx>,
    l1: inkwell::values::InstructionValue<'ctx>,
) -> Option<(BasicBlock<'ctx>, IntValue<'ctx>)> {
    use inkwell::llvm_sys::core::*;
    use inkwell::llvm_sys::prelude::*;
    use inkwell::values::AsValueRef;
    let blocks = copyable(head, latch, after)?;
    unsafe {
        let c = ctx.raw();
        let b = LLVMCreateBuilderInContext(c);
        let i32t = LLVMInt32TypeInContext(c);
        // Row 1 runs at row 0's `%tid.x`.
        let mut map: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
        map.insert(x.as_value_ref(), x.as_value_ref());
        map.insert(r.as_value_ref(), LLVMConstInt(i32t, 1, 0));
        let copies = clone_blocks(c, &blocks, after, c"lane.row1", &mut map);
        // Row 0 goes on to row 1 at the same `%tid.x`; row 1's latch steps `%tid.x` and
        // goes back to row 0.
        let head1 = copies[0];
        let t = LLVMGetBasicBlockTerminator(latch.as_mut_ptr());
        LLVMPositionBuilderBefore(b, t);
        LLVMBuildBr(b, head1);
        LLVMInstructionEraseFromParent(t);
        let latch1 = LLVMValueAsBasicBlock(map[&LLVMBasicBlockAsValue(latch.as_mut_ptr())]);
        let t1 = LLVMGetBasicBlockTerminator(latch1);
        for k in 0..LLVMGetNumSuccessors(t1) {
            if LLVMGetSuccessor(t1, k) == head1 {
                LLVMSetSuccessor(t1, k, head.as_mut_ptr());
            }
        }
        // Row 0 is row 0; the loop over the rows goes.
        LLVMReplaceAllUsesWith(r.as_value_ref(), LLVMConstInt(i32t, 0, 0));
        LLVMDeleteBasicBlock(h.as_mut_ptr());
        LLVMDeleteBasicBlock(rows_latch.as_mut_ptr());
        let enter = LLVMGetBasicBlockTerminator(pre.as_mut_ptr());
        if !enter.is_null() {
            LLVMInstructionEraseFromParent(enter);
        }
        LLVMPositionBuilderAtEnd(b, pre.as_mut_ptr());
        LLVMBuildBr(b, head.as_mut_ptr());
        LLVMDisposeBuilder(b);
        let l1b = inkwell::values::IntValue::new(map[&l1.as_value_ref()]);
        Some((BasicBlock::new(latch1).expect("the latch was copied"), l1b))
    }
}

/// A copy of the small guarded lane loop `blocks` (from [`copyable`]: `head` first, `latch`
/// among them, `after` the block after) that runs every lane without testing it, taken where
/// `take` holds (every lane of the warp's mask is on: ISPC's "coherent" control flow, for the
/// lane loops that stay scalar: atomics, scattered stores, the gathers that feed them).
/// Almost always every lane is on (the lanes of a grid-stride loop go round together but in
/// its last iteration), and each lane's bit test and branch cost about as much as the
/// histogram's `bins[x[i]]++` itself. A lane run unconditionally is exactly a lane whose
/// test passes, so the copy computes what the loop computes; its copies of `nsw` (lane
/// values `take` has found not to wrap) get the flag. `pre` (the block before the loop,
/// whose terminator enters it) chooses between them. Returns the copy's latch.
#[allow(clippy::too_many_arguments)]
fn coherent_copy<'ctx>(
    ctx: &'ctx inkwell::context::Context,
    pre: BasicBlock<'ctx>,
    head: BasicBlock<'ctx>,
    latch: BasicBlock<'ctx>,
    after: BasicBlock<'ctx>,
    blocks: &[inkwell::llvm_sys::prelude::LLVMBasicBlockRef],
    take: IntValue<'ctx>,
    nsw: &[inkwell::values::InstructionValue<'ctx>],
) -> BasicBlock<'ctx> {
    use inkwell::llvm_sys::core::*;
    use inkwell::llvm_sys::prelude::*;
    use inkwell::values::AsValueRef;
    unsafe {
        let c = ctx.raw();
        let b = LLVMCreateBuilderInContext(c);
        let mut map: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
        let copies = clone_blocks(c, blocks, after, c"lane.all", &mut map);
        for i in nsw {
            if let Some(&n) = map.get(&i.as_value_ref()) {
                LLVMSetNSW(n, 1);
            }
        }
        // The copy's head enters its body for every lane.
        let t = LLVMGetBasicBlockTerminator(copies[0]);
        if LLVMIsConditional(t) != 0 {
            LLVMSetCondition(t, LLVMConstInt(LLVMInt1TypeInContext(c), 1, 0));
        }
        let enter = LLVMGetBasicBlockTerminator(pre.as_mut_ptr());
        LLVMPositionBuilderBefore(b, enter);
        LLVMBuildCondBr(b, take.as_value_ref(), copies[0], head.as_mut_ptr());
        LLVMInstructionEraseFromParent(enter);
        LLVMDisposeBuilder(b);
        BasicBlock::new(LLVMValueAsBasicBlock(map[&LLVMBasicBlockAsValue(latch.as_mut_ptr())])).expect("the latch was copied")
    }
}

/// How far ahead of a warp's consecutive global load or store the warp path prefetches
/// ([`prefetch_ahead`]); `None` for other accesses. A store's prefetch is for writing:
/// a streaming kernel's stores otherwise wait for each line to be read for ownership (block
/// scan, one core, same run: 0.089 -> 0.078 s; two cores 1.8x -> 1.5x of C).
fn prefetch_bytes(f: &Func, plan: &Plan, inst: &crate::ir::Inst, b: BlockId, k: usize) -> Option<Ahead> {
    let i = inst.src;
    if plan.in_serial[b as usize] {
        return None;
    }
    if !matches!(i.opcode.name, "ld" | "st") || !(i.has_mod("global") || super::ops_mem::space_of(i).is_none()) || i.has_mod("volatile") {
        return None;
    }
    if plan.uni.access(f, inst, b)? != uniformity::Access::Consecutive && !plan.row_consecutive.contains(&(b, k)) {
        return None;
    }
    // A store to the address a load of the block read (`y[i] = a * x[i] + y[i]`) has its
    // lines prefetched by the load.
    if i.opcode.name == "st" && f.blocks[b as usize].insts.iter().any(|x| x.src.opcode.name == "ld" && x.operands.get(1).is_some() && x.operands.get(1) == inst.operands.first()) {
        return None;
    }
    let ty = super::types_of(i).first().copied()?;
    let n = i.mods.iter().find_map(|m| m.strip_prefix('v').and_then(|d| d.parse::<u64>().ok())).unwrap_or(1);
    // (A tile warp prefetches each of its rows: [`prefetch_ahead`].)
    let lanes = if plan.uni.layout == Layout::Tile { TILE_ROW as u64 } else { LANES as u64 };
    let span = lanes * ty.size() as u64 * n;
    // In a loop whose back edge yields (a grid-stride loop), the warp's next accesses are a
    // grid's span apart, far beyond what the hardware prefetchers follow, and the CTA's other
    // warps run between this warp's rounds of iterations: prefetch the access one round of
    // iterations ahead (a shared-memory histogram over 64 MiB, two cores, written in C in
    // the warp path's order: 0.020 s without, 0.014 s with a prefetch one round ahead, 0.015 s
    // two rounds; C's own loop 0.014 s).
    if let Some(adv) = loop_advance(f, plan, inst, b, true) {
        return Some(Ahead { bytes: 0, advance: Some(adv), span });
    }
    // In a loop with a CTA barrier (a tile loop), each iteration of a warp runs in a phase of
    // its own, and the CTA's other warps run theirs in between: as in a yielding loop, the
    // hardware prefetcher does not follow the warp's stride (a tiled sgemm's B tile, a row
    // 64 KiB on per iteration). Prefetch the access one iteration ahead (tiled sgemm, two
    // cores, same run: 0.065-0.074 s -> 0.056-0.058 s; a matmul whose k loop has no barrier
    // ran 1.3x slower with the same prefetch, its stream being the hardware's to follow).
    if let Some(mut adv) = loop_advance(f, plan, inst, b, false) {
        adv.iters = 1;
        return Some(Ahead { bytes: 0, advance: Some(adv), span });
    }
    // In other loops the warp's next accesses follow the loop's own stride (a k loop), which
    // the hardware prefetcher sees; prefetching the next warps' elements there only fetches
    // lines needed much later (tiled sgemm, before the prefetch above: 1.5x -> 1.9x of C).
    if plan.uni.cfg.loops.iter().any(|(_, blocks)| blocks.contains(&b)) {
        return None;
    }
    Some(Ahead { bytes: PREFETCH_LANES * ty.size() as u64 * n, advance: None, span })
}

/// What [`prefetch_ahead`] prefetches for one access: lane 0's address plus `bytes`, plus
/// `iters` times the access's advance per iteration of its loop when it has one
/// ([`loop_advance`]), and the following lines of the warp's `span` bytes.
#[derive(Clone)]
struct Ahead {
    bytes: u64,
    advance: Option<Advance>,
    span: u64,
}

/// How an address advances per iteration of its loop: `coef` times the step, which is
/// `konst` plus the values of `terms`, operands (block, instruction, operand index) of the
/// `add`s that make the latch's value of the induction variable, each defined before the
/// loop or from values defined before it (one `i += stride`, or several of a loop the
/// compiler unrolled); the prefetch is `iters` iterations ahead.
#[derive(Clone)]
struct Advance {
    iters: i64,
    coef: i64,
    konst: i64,
    terms: Vec<(BlockId, usize, usize)>,
}

/// For an access in a loop whose back edge yields ([`Plan::yields`]), or with `!yielding` in
/// a loop with a CTA barrier (the innermost such loop around it): how its address
/// advances per iteration, when the address is an affine function (`add` of loop-invariant
/// values, integer `cvt`, `mov`, `mul`/`shl` by constants) of the loop's induction variable,
/// a header phi that the loop adds a loop-invariant step to (`i += blockDim.x * gridDim.x`).
/// Wrapping is ignored: the result only aims a prefetch, which never faults.
fn loop_advance(f: &Func, plan: &Plan, inst: &crate::ir::Inst, b: BlockId, yielding: bool) -> Option<Advance> {
    let cfg = &plan.uni.cfg;
    let phased = |blocks: &[BlockId]| blocks.iter().any(|&x| f.blocks[x as usize].insts.iter().any(is_cta_barrier));
    let (header, blocks) = cfg
        .loops
        .iter()
        .enumerate()
        .filter(|(k, (_, blocks))| blocks.contains(&b) && cfg.latch(*k).is_some_and(|l| if yielding { plan.yields.iter().any(|(y, _)| *y == l) } else { phased(blocks) }))
        .map(|(_, l)| l)
        .min_by_key(|(_, blocks)| blocks.len())?;
    let latch = *cfg.preds[*header as usize].iter().find(|p| blocks.contains(p))?;
    let inside = |v: u32| match f.values[v as usize].def {
        Def::Inst { block, .. } | Def::Phi { block } => blocks.contains(&block),
        _ => false,
    };
    let invariant = |o: &Opnd| match o {
        Opnd::Imm(_) => true,
        Opnd::Val(v) => !inside(*v),
        _ => false,
    };
    let imm = |o: &Opnd| match o {
        Opnd::Imm(t) => uniformity::parse_int(t),
        _ => None,
    };
    // A step the loop computes from loop-invariant operands each iteration (NVRTC's
    // `shl.b32 %r27, %r16, 4` before `add.s32 %r31, %r31, %r27`), read where the prefetch
    // is: the previous iteration's value, the same after the first.
    let step_term = |o: &Opnd| {
        if invariant(o) {
            return true;
        }
        let Opnd::Val(x) = o else { return false };
        let Def::Inst { block, inst: k } = f.values[*x as usize].def else { return false };
        let def = &f.blocks[block as usize].insts[k as usize];
        !yielding && hoistable(f, def) && def.operands.iter().skip(1).all(|o| matches!(o, Opnd::Imm(_)) || invariant(o))
    };
    let addr = inst.operands.iter().find_map(|o| match o {
        Opnd::Addr(Some(base), _) => Some(base.as_ref().clone()),
        _ => None,
    })?;
    let Opnd::Val(mut v) = addr else { return None };
    let mut coef: i64 = 1;
    for _ in 0..12 {
        match f.values[v as usize].def {
            Def::Phi { block } if block == *header => {
                let phi = f.blocks[block as usize].phis.iter().find(|p| p.dst == v)?;
                let (_, next) = phi.incoming.iter().find(|(p, _)| *p == latch)?;
                let mut adv = Advance { coef, konst: 0, terms: Vec::new(), iters: yield_every(f, plan, latch) as i64 };
                let mut cur = *next;
                while cur != v {
                    let Def::Inst { block: ib, inst: ik } = f.values[cur as usize].def else { return None };
                    let add = &f.blocks[ib as usize].insts[ik as usize];
                    if add.src.opcode.name != "add" || add.operands.len() != 3 || adv.terms.len() > 8 || !blocks.contains(&ib) {
                        return None;
                    }
                    let k = (1..3).find(|&k| matches!(add.operands[k], Opnd::Val(_)) && step_term(&add.operands[3 - k]) && !(add.operands[3 - k] == Opnd::Val(v)))?;
                    match imm(&add.operands[3 - k]) {
                        Some(c) => adv.konst = adv.konst.wrapping_add(c),
                        None => adv.terms.push((ib, ik as usize, 3 - k)),
                    }
                    let Opnd::Val(x) = add.operands[k] else { return None };
                    cur = x;
                }
                return Some(adv);
            }
            Def::Inst { block, inst: k } if blocks.contains(&block) => {
                let i = &f.blocks[block as usize].insts[k as usize];
                let ops = &i.operands;
                let next = |o: &Opnd| match o {
                    Opnd::Val(x) => Some(*x),
                    _ => None,
                };
                v = match (i.src.opcode.name, ops.len()) {
                    ("mov" | "cvt" | "cvta", 2) => next(&ops[1])?,
                    ("add", 3) if invariant(&ops[2]) => next(&ops[1])?,
                    ("add", 3) if invariant(&ops[1]) => next(&ops[2])?,
                    ("mul" | "shl", 3) if !i.src.has_mod("hi") => {
                        let c = imm(&ops[2])?;
                        coef = coef.checked_mul(if i.src.opcode.name == "shl" { 1i64.checked_shl(c as u32)? } else { c })?;
                        next(&ops[1])?
                    }
                    _ => return None,
                };
            }
            _ => return None,
        }
    }
    None
}

/// The cache lines of one warp's consecutive access that [`prefetch_ahead`] prefetches: all
/// of the 32 lanes' span, not lane 0's line alone (a warp of 4-byte elements spans two
/// 64-byte lines, and the hardware prefetcher does not reliably fetch the second ahead of
/// time). Measured same run, two cores: saxpy 0.026 -> 0.022 s, block scan 0.044 -> 0.040 s
/// (one line against every line of the span); prefetching lines beyond the span gained
/// nothing further.
fn prefetch_lines(span: u64) -> u64 {
    span.div_ceil(CACHE_LINE).max(1)
}

/// The offsets from lane 0's address that [`prefetch_ahead`] prefetches: a line apart over
/// the span ([`prefetch_lines`]), and its last byte, whose line is one more where lane 0's
/// address is not line-aligned (a buffer from `malloc` starts 16 bytes into its page: every
/// other warp of a byte histogram has its lanes 16-31 on the next line, which then missed
/// in the cache at lane 16 each time).
fn prefetch_offsets(span: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..prefetch_lines(span)).map(|l| l * CACHE_LINE).collect();
    if span > 1 {
        v.push(span - 1);
    }
    v
}

/// Bytes of a cache line of the host (x86-64 and AArch64 cores alike).
const CACHE_LINE: u64 = 64;

/// Lanes' worth of elements ahead that a consecutive global load prefetches: 16 warps of
/// the same access. Warps run one after another (and the next CTA's after them), each
/// touching one or two cache lines and then computing on them, so that only a few warps'
/// loads are in flight at once and a streaming kernel waits on memory latency; the
/// per-thread path, which issues a whole CTA's loads in one loop, does not. Measured on a
/// warp-shuffle sum of 2^26 floats (one core, same run): 0.065 s without, 0.043-0.048 s with
/// a prefetch 2 KB ahead (the per-thread path: 0.042 s).
const PREFETCH_LANES: u64 = 16 * LANES as u64;

/// After the lane loop that ran load `(b, k)`: software prefetches (`llvm.prefetch`, read,
/// high locality; never faults) of lane 0's address plus what `ahead` says ([`Ahead`]) and of
/// the following lines of the warp's span ([`prefetch_lines`]), once per warp.
/// Lane 0's address is its registers' first elements (the loop has computed them; a lane
/// that did not run leaves an older value, and the prefetch is only a hint).
fn prefetch_ahead<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, b: BlockId, k: usize, ahead: Ahead) {
    prefetch_row(e, b, k, &ahead, 0);
    // A tile warp's second row lies a row's stride away, anywhere (`n` floats apart in the
    // tiled sgemm's A and B), not within row 0's span: its own prefetch, from `%tid.y` + 1
    // and the affine bases plus their row strides ([`lane0_temp`]).
    if w(e).tile {
        let y0 = w(e).y0;
        let saved = e.tid[1];
        e.tid[1] = crate::lanes::exact(e.b.build_int_add(y0, e.ctx().i32_type().const_int(1, false), "tid.y.row1").unwrap());
        w(e).temps.borrow_mut().clear();
        prefetch_row(e, b, k, &ahead, 1);
        w(e).temps.borrow_mut().clear();
        e.tid[1] = saved;
    }
}

/// [`prefetch_ahead`] for lane 0 of row `row` of the warp (a tile warp's row 1: `e.tid` set
/// to it).
fn prefetch_row<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, b: BlockId, k: usize, ahead: &Ahead, row: u64) {
    let func = e.ir_func();
    let inst = &func.blocks[b as usize].insts[k];
    // A store's address is its first operand, and it prefetches for writing (`prefetchw`).
    let (at, write) = if inst.src.opcode.name == "st" { (0, 1) } else { (1, 0) };
    let Some(op) = inst.src.operands.get(at) else { return };
    e.enter_scope(inst.scope);
    bind(e, &func, inst.src, inst.scope, &inst.reads(), &[]);
    // Lane 0's address computed once from scalars where it can be (reading it from a lane
    // array makes every lane of the loop store its address there).
    if let Some(Opnd::Addr(Some(base), _)) = inst.operands.get(at) {
        if let (Opnd::Val(v), crate::syntax::ast::Operand::Mem(crate::syntax::ast::Address { base: Some(id), .. })) = (base.as_ref(), op) {
            let name = id.name;
            let plan = w(e).plan.clone();
            let saved = std::mem::take(&mut e.overrides);
            let t = lane0_temp(e, &func, &plan, *v, row, 0);
            e.overrides = saved;
            if let Some(t) = t {
                e.overrides.insert(name, (t, func.values[*v as usize].ty));
            }
        }
    }
    let space = super::ops_mem::space_of(inst.src);
    let p = e.address(op, space);
    e.overrides.clear();
    let Ok(p) = p else { return };
    let ctx = e.ctx();
    let i64t = ctx.i64_type();
    let mut off = i64t.const_int(ahead.bytes, false);
    if let Some(adv) = &ahead.advance {
        let mut step = i64t.const_int(adv.konst as u64, true);
        for &(block, inst, opnd) in &adv.terms {
            let add = &func.blocks[block as usize].insts[inst];
            let (Some(ty), Some(op)) = (super::types_of(add.src).first().copied(), add.src.operands.get(opnd)) else { return };
            e.enter_scope(add.scope);
            bind(e, &func, add.src, add.scope, &add.reads(), &[]);
            let x = e.read(op, ty);
            e.overrides.clear();
            let Ok(x) = x else { return };
            let x = e.resize(x.into_int_value(), 64, ty.is_signed());
            step = e.b.build_int_add(step, x, "").unwrap();
        }
        let by = i64t.const_int((adv.coef.wrapping_mul(adv.iters)) as u64, true);
        let d = e.b.build_int_mul(step, by, "ahead").unwrap();
        off = e.b.build_int_add(off, d, "").unwrap();
    }
    let i32t = ctx.i32_type();
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let q0 = unsafe { e.b.build_gep(ctx.i8_type(), p, &[off], "prefetch").unwrap() };
    for at in prefetch_offsets(ahead.span) {
        let q = unsafe { e.b.build_gep(ctx.i8_type(), q0, &[i64t.const_int(at, false)], "prefetch").unwrap() };
        let _ = e.try_intrinsic("llvm.prefetch", &[ptr_t.into()], &[q.into(), i32t.const_int(write, false).into(), i32t.const_int(3, false).into(), i32t.const_int(1, false).into()]);
    }
}

/// Register names an instruction mentions: its operands (operand expressions included) and
/// its guard.
fn reg_names<'a>(i: &'a crate::syntax::ast::Instr<'a>, out: &mut Vec<&'a str>) {
    use crate::syntax::ast::Operand as O;
    fn op<'a>(o: &'a O<'a>, out: &mut Vec<&'a str>) {
        match o {
            O::Name(id, _) | O::Not(id) => out.push(id.name),
            O::Imm(x) => x.symbols(out),
            O::Mem(a) => out.extend(a.base.as_ref().map(|b| b.name)),
            O::MemList(xs, _) | O::Vector(xs, _) | O::List(xs, _) => xs.iter().for_each(|x| op(x, out)),
            O::Index(id, idx, _) => {
                out.push(id.name);
                op(idx, out);
            }
            O::Pair(a, b) => {
                op(a, out);
                op(b, out);
            }
            O::Sel(a, _, _) => op(a, out),
            O::Sink(_) => {}
        }
    }
    i.operands.iter().for_each(|o| op(o, out));
    if let Some(g) = &i.guard {
        out.push(g.pred.name);
    }
}

/// The storage of web `key` (made on first use): a scalar for the plan's scalar webs, else
/// an array of lanes.
fn web_storage<'ctx>(e: &FnEmitter<'ctx, '_, '_>, key: &(u32, String), ty: crate::syntax::ast::Type) -> PointerValue<'ctx> {
    let ws = w(e);
    if let Some(p) = ws.storage.borrow().get(key) {
        return p.0;
    }
    let name = key.1.split('#').next().unwrap_or("reg");
    let scalar = ws.plan.scalar_vars.contains(key);
    let p = if scalar { e.alloca_b.build_alloca(e.storage_t(ty), name).unwrap() } else { lane_array(e, e.storage_t(ty).into(), name) };
    if ws.plan.undef_webs.contains(key) {
        let t = e.storage_t(ty);
        let bytes = t.size_of();
        let bytes = if scalar { bytes } else { bytes.const_mul(e.ctx().i64_type().const_int(LANES as u64, false)) };
        e.alloca_b.build_memset(p, 1, e.ctx().i8_type().const_zero(), bytes).unwrap();
    }
    ws.storage.borrow_mut().insert(key.clone(), (p, ty));
    p
}

/// Points the register names of `i` (read in scope `scope`) at the storage of the webs of
/// `reads` and `defs` (the values `i` reads and defines), for the lane being emitted; a read
/// of a copy of a special register, or of a value a read may recompute, gets a temporary
/// holding it instead.
fn bind<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, i: &'a crate::syntax::ast::Instr<'a>, scope: u32, reads: &[u32], defs: &[u32]) {
    let plan = w(e).plan.clone();
    let mut names = Vec::new();
    reg_names(i, &mut names);
    e.overrides.clear();
    for name in names {
        if e.overrides.contains_key(name) {
            continue;
        }
        let Some((dscope, ty)) = func.resolve(name, scope) else { continue };
        let is = |v: &&u32| func.values[**v as usize].var.0 == dscope && func.values[**v as usize].var.1 == name;
        let (v, written) = match (defs.iter().find(is), reads.iter().find(is)) {
            (Some(d), _) => (*d, true),
            (None, Some(r)) => (*r, false),
            (None, None) => continue,
        };
        let key = plan.key(func, v);
        if !written {
            if let Some(t) = anchored_read(e, func, &plan, v, &key, defs, ty) {
                e.overrides.insert(name, (t, ty));
                continue;
            }
        }
        if !written && !(plan.uniform_web(&key)) {
            let saved = std::mem::take(&mut e.overrides);
            let t = value_temp(e, func, &plan, v, ty, 0);
            e.overrides = saved;
            if let Some(t) = t {
                e.overrides.insert(name, (t, ty));
                continue;
            }
        }
        let base = web_storage(e, &key, ty);
        let p = lane_slot_of(e, &key, base, ty).unwrap_or(base);
        e.overrides.insert(name, (p, ty));
    }
}

/// A read of value `v` (web `key`, read as `ty`) by an instruction defining `defs` that
/// anchored webs change ([`Plan::anchored`]): in a lane loop, a read of an anchored web is
/// its scalar plus its `R` recomputed for the lane; once per warp, the instruction that
/// starts an anchored web (`add d, u, R`) reads its `R` as zero (the web's scalar is `u`).
/// `None` for other reads.
fn anchored_read<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, v: u32, key: &(u32, String), defs: &[u32], ty: crate::syntax::ast::Type) -> Option<PointerValue<'ctx>> {
    let it = reg_t(e.ctx(), ty);
    if w(e).lane.is_none() {
        let starts = defs.iter().any(|d| plan.anchored.get(&plan.key(func, *d)) == Some(&v));
        if !starts {
            return None;
        }
        let t = e.alloca_b.build_alloca(it, "anchor.zero").unwrap();
        e.b.build_store(t, it.const_zero()).unwrap();
        return Some(t);
    }
    let &r = plan.anchored.get(key)?;
    let saved = std::mem::take(&mut e.overrides);
    let rt = value_temp(e, func, plan, r, ty, 0);
    e.overrides = saved;
    let rt = rt?;
    let s = e.b.build_load(it, web_storage(e, key, ty), "").unwrap().into_int_value();
    let x = e.b.build_load(it, rt, "").unwrap().into_int_value();
    let t = e.alloca_b.build_alloca(it, "anchored").unwrap();
    e.b.build_store(t, e.b.build_int_add(s, x, "").unwrap()).unwrap();
    Some(t)
}

/// A temporary holding value `v` for the lane being emitted, when `v` copies a special
/// register or can be recomputed ([`Plan::remat`]); `None` otherwise (read its storage).
fn value_temp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, v: u32, ty: crate::syntax::ast::Type, depth: u32) -> Option<PointerValue<'ctx>> {
    let here = e.b.get_insert_block()?;
    if let Some(&(blk, p)) = w(e).temps.borrow().get(&(v, ty)) {
        if blk == here {
            return Some(p);
        }
    }
    let t = value_temp_fill(e, func, plan, v, ty, depth)?;
    // Filling may have opened blocks of its own (a guarded instruction): the temporary is
    // known to hold the value only where it was filled.
    let end = e.b.get_insert_block()?;
    w(e).temps.borrow_mut().insert((v, ty), (end, t));
    Some(t)
}

fn value_temp_fill<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, v: u32, ty: crate::syntax::ast::Type, depth: u32) -> Option<PointerValue<'ctx>> {
    let it = reg_t(e.ctx(), ty);
    if let Some(&(b, k)) = plan.copies.get(&v) {
        // Read from the special register the value copies.
        let src = &func.blocks[b as usize].insts[k].src.operands[1];
        let x = e.read(src, ty).ok()?.into_int_value();
        let x = if x.get_type() == it { x } else { e.b.build_int_cast(x, it, "").unwrap() };
        let tmp = e.alloca_b.build_alloca(it, "special").unwrap();
        e.b.build_store(tmp, x).unwrap();
        return Some(tmp);
    }
    if !plan.remat.contains(&v) || depth > 8 {
        return None;
    }
    let Def::Inst { block, inst } = func.values[v as usize].def else { return None };
    let inst = &func.blocks[block as usize].insts[inst as usize];
    recompute(e, func, inst, v, "remat", &mut |e, r, nty| value_temp(e, func, plan, r, nty, depth + 1))
}

/// Emits instruction `inst`, which defines `v`, into a new temporary (named `tag`), each
/// register it reads bound to the temporary `read` gives for the value read (a read of the
/// register it defines, `add %r, %r, 1`, starts the temporary from that value); `None` when a
/// read has none or the instruction cannot be emitted.
fn recompute<'ctx, 'a, 'm>(
    e: &mut FnEmitter<'ctx, 'a, 'm>,
    func: &crate::ir::Func<'a>,
    inst: &crate::ir::Inst<'a>,
    v: u32,
    tag: &str,
    read: &mut dyn FnMut(&mut FnEmitter<'ctx, 'a, 'm>, u32, crate::syntax::ast::Type) -> Option<PointerValue<'ctx>>,
) -> Option<PointerValue<'ctx>> {
    let mut names = Vec::new();
    reg_names(inst.src, &mut names);
    let reads = inst.reads();
    let mut binds: Vec<(&'a str, (PointerValue<'ctx>, crate::syntax::ast::Type))> = Vec::new();
    let mut dst = None;
    for name in names {
        let Some((dscope, nty)) = func.resolve(name, inst.scope) else { continue };
        let var = (dscope, name.to_string());
        if func.values[v as usize].var == var {
            if dst.is_none() {
                let t = e.alloca_b.build_alloca(e.storage_t(nty), tag).unwrap();
                if let Some(&r) = reads.iter().find(|r| func.values[**r as usize].var == var) {
                    let src = read(e, r, nty)?;
                    let x = e.load_reg(src, nty);
                    e.store_reg(t, nty, x);
                }
                dst = Some(t);
                binds.push((name, (t, nty)));
            }
            continue;
        }
        let r = *reads.iter().find(|r| func.values[**r as usize].var == var)?;
        let t = read(e, r, nty)?;
        binds.push((name, (t, nty)));
    }
    let dst = dst?;
    let saved = std::mem::take(&mut e.overrides);
    e.overrides.extend(binds);
    let ok = e.unguarded(inst.src).is_ok();
    e.overrides = saved;
    ok.then_some(dst)
}

/// A temporary holding lane 0's value of `v` in row `row` of the warp (0, or 1 in a tile
/// warp, whose `e.tid` the caller sets to that row's), computed from scalar storage (uniform
/// values, and the bases of affine ones, which are lane 0's values, plus `row` times their
/// row stride) through pure integer instructions (`add`, `sub`, `mul`, `mad`, `shl`, integer
/// `cvt`, `mov`, `cvta`), outside any lane loop; `None` when `v` depends on anything else.
fn lane0_temp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, v: u32, row: u64, depth: u32) -> Option<PointerValue<'ctx>> {
    let key = plan.key(func, v);
    let ty = func.values[v as usize].ty;
    if plan.uniform_web(&key) {
        return Some(web_storage(e, &key, ty));
    }
    if let Some(&r) = plan.anchored.get(&key) {
        // The warp's scalar `S` plus lane 0's `R` ([`Plan::anchored`]): the prefetch of the
        // tiled sgemm's `A[(16 by + ty) * n + t * 16 + tx]` took `S` alone, row 0's address,
        // for every warp.
        let rty = func.values[r as usize].ty;
        let int = |t: crate::syntax::ast::Type| t.is_int() || t.is_bits();
        if depth > 8 || !int(ty) || !int(rty) || rty.bits() != ty.bits() {
            return None;
        }
        let rt = lane0_temp(e, func, plan, r, row, depth + 1)?;
        let s = e.load_reg(web_storage(e, &key, ty), ty);
        let x = e.load_reg(rt, rty);
        let sum = e.b.build_int_add(s, x, "lane0.anchored").unwrap();
        let t = e.alloca_b.build_alloca(e.storage_t(ty), "lane0").unwrap();
        e.store_reg(t, ty, sum);
        return Some(t);
    }
    // As `bind` reads it: a copy of a special register or a recomputed value (whose storage
    // a warp does not keep across barriers) from a temporary, an affine one from its base.
    if let Some(t) = value_temp(e, func, plan, v, ty, 0) {
        return Some(t);
    }
    if plan.scalar_vars.contains(&key) {
        let base = web_storage(e, &key, ty);
        return match plan.affine.get(&key) {
            Some(s) if row > 0 && s.r != 0 => {
                let it = e.storage_t(ty);
                let b = e.load_reg(base, ty);
                let x = e.b.build_int_add(b, it.const_int(s.r.wrapping_mul(row as i64) as u64, true), "lane0.row").unwrap();
                let t = e.alloca_b.build_alloca(it, "lane0").unwrap();
                e.store_reg(t, ty, x);
                Some(t)
            }
            _ => Some(base),
        };
    }
    let Def::Inst { block, inst } = func.values[v as usize].def else { return None };
    let inst = &func.blocks[block as usize].insts[inst as usize];
    let pure = matches!(inst.src.opcode.name, "add" | "sub" | "mul" | "mad" | "shl" | "mov" | "cvta")
        || (inst.src.opcode.name == "cvt" && super::types_of(inst.src).iter().all(|t| t.is_int()));
    if depth > 8 || !pure || inst.defs.len() != 1 || inst.operands.iter().any(|o| !matches!(o, Opnd::Val(_) | Opnd::Imm(_))) {
        return None;
    }
    recompute(e, func, inst, v, "lane0", &mut |e, r, _| lane0_temp(e, func, plan, r, row, depth + 1))
}

/// A store to one address for every lane that a lane loop runs once after the loop, for
/// the last lane that reached it ([`defer_store`]).
struct Deferred<'ctx> {
    /// The store (block, instruction index).
    at: (BlockId, usize),
    /// `[32 x i8]`: the lanes that reached it (zero outside the loop).
    hit: PointerValue<'ctx>,
    /// Per register the store reads: its name, type and where lane `l`'s value is.
    regs: Vec<(String, crate::syntax::ast::Type, LaneValue<'ctx>)>,
}

/// Where a deferred store finds a register's value for a lane after the loop.
#[derive(Clone, Copy)]
enum LaneValue<'ctx> {
    /// Its web's lane array (nothing after the store in the loop writes it).
    Lanes(PointerValue<'ctx>),
    /// Its web's scalar.
    Scalar(PointerValue<'ctx>),
    /// `base + stride * lane` from its web's scalar.
    Affine(PointerValue<'ctx>, Stride),
    /// A lane array the loop copies the lane's value to (a value read recomputes).
    Copy(PointerValue<'ctx>),
    /// Value `v`, the same for every lane at the store and one that a read recomputes: lane
    /// 0's, computed from the warp's scalars after the loop ([`lane0_temp`]), else (where
    /// that cannot be done) the lane array the loop copies it to, as `Copy`.
    Uniform(u32, PointerValue<'ctx>),
}

/// Whether instruction `inst` of block `b`, run in a lane loop, is a store that the warp may
/// make once after the loop for the last lane that reached it: a weak `st` of one scalar
/// to an address that is the same for every lane (`uniformity::Access::Uniform`) in
/// `.global`, `.shared` or generic memory, that reads no special register, and after which
/// nothing in the loop touches memory (the rest of its block, the rest of the divergent
/// region the loop runs). Returns its index in `b`.
///
/// PTX ISA 9.7.8.8 st: the lanes of a warp that store to one location in one instruction
/// leave one of their values there; the per-thread path runs lanes in order, so the last
/// lane's value stays, and so it does here. The lane loop would otherwise store lane by
/// lane under each lane's condition (LLVM scalarizes a conditional store to one address
/// into 32 tests and stores: `if (lane == 31) totals[warp] = v`). The loop's lanes do not
/// order their accesses among themselves (`passes::parallel_lanes`), and the store is the
/// loop's last access, so making it after the loop moves it past nothing it is ordered
/// with.
fn deferrable_store(f: &Func, plan: &Plan, inst: &crate::ir::Inst, b: BlockId) -> Option<usize> {
    let i = inst.src;
    if plan.in_serial[b as usize] {
        return None; // a lane runs its loop's iterations one after another
    }
    if i.opcode.name != "st" || i.operands.len() != 2 || !matches!(i.operands[1], crate::syntax::ast::Operand::Name(..) | crate::syntax::ast::Operand::Imm(_)) {
        return None;
    }
    if !(i.has_mod("global") || i.has_mod("shared") || super::ops_mem::space_of(i).is_none()) || ["volatile", "relaxed", "release", "mmio", "cluster", "cta", "gpu", "sys"].iter().any(|m| i.has_mod(m)) {
        return None;
    }
    if i.mods.iter().any(|m| m.starts_with('v') && m[1..].parse::<u32>().is_ok()) {
        return None;
    }
    if plan.uni.access(f, inst, b)? != uniformity::Access::Uniform {
        return None;
    }
    let mut names = Vec::new();
    reg_names(i, &mut names);
    if names.iter().any(|n| n.starts_with('%') && f.resolve(n, inst.scope).is_none()) {
        return None;
    }
    let blk = &f.blocks[b as usize];
    let k = blk.insts.iter().position(|x| std::ptr::eq(x, inst))?;
    // Nothing after it in the loop touches memory or writes a register it reads (which the
    // store then reads from the register's storage after the loop).
    let reads: Vec<(u32, String)> = inst.reads().iter().map(|v| f.values[*v as usize].var.clone()).collect();
    let after = |x: &crate::ir::Inst| !hoistable(f, x) || x.src.opcode.name == "ld" || x.defs.iter().any(|d| reads.contains(&f.values[*d as usize].var));
    if blk.insts[k + 1..].iter().any(after) {
        return None;
    }
    // The other blocks the same lane loop runs: the divergent region `b` is in, or the one
    // `b`'s own branch runs.
    let region = plan.inline.iter().find(|(c, (r, _))| **c == b || r.contains(&b)).map(|(_, (r, _))| r.as_slice()).unwrap_or(&[]);
    if region.iter().any(|&x| x != b && f.blocks[x as usize].insts.iter().any(after)) {
        return None;
    }
    Some(k)
}

/// Records the lane's registers for the store `inst` (index `k` of block `b`, see
/// [`deferrable_store`]) and marks the lane; [`close`] makes the store.
fn defer_store<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, b: BlockId, k: usize) {
    let i32t = e.ctx().i32_type();
    let i8t = e.ctx().i8_type();
    let lane = w(e).lane.expect("in a lane loop");
    bind(e, func, inst.src, inst.scope, &inst.reads(), &inst.defs);
    let known = w(e).deferred.borrow().iter().position(|d| d.at == (b, k));
    let idx = match known {
        Some(x) => x,
        None => {
            let hit = lane_array(e, i8t.into(), "st.lanes");
            e.alloca_b.build_store(hit, i8t.array_type(LANES).const_zero()).unwrap();
            let plan = w(e).plan.clone();
            let mut regs = Vec::new();
            let mut names: Vec<&str> = e.overrides.keys().copied().collect();
            names.sort_unstable();
            let reads = inst.reads();
            for n in names {
                let (_, ty) = e.overrides[n];
                let v = func.resolve(n, inst.scope).and_then(|(dscope, _)| reads.iter().find(|v| func.values[**v as usize].var == (dscope, n.to_string())).copied());
                let key = v.map(|v| (v, plan.key(func, v)));
                let src = match key {
                    Some((v, key)) if !plan.anchored.contains_key(&key) && (!(plan.copies.contains_key(&v) || plan.remat.contains(&v)) || plan.uniform_web(&key)) => {
                        let base = web_storage(e, &key, ty);
                        match (plan.scalar_vars.contains(&key), plan.affine.get(&key)) {
                            (true, Some(s)) => LaneValue::Affine(base, *s),
                            (true, None) => LaneValue::Scalar(base),
                            _ => LaneValue::Lanes(base),
                        }
                    }
                    // An address computed inside the store's branch from uniform values
                    // (clang's block scan: `warp_totals + 4 * (tid.x >> 5)` after `if (lane
                    // == 31)`): taking it from the last lane's element of a lane array of
                    // 64-bit values cost clang's scan 10% (one core, 0.047-0.052 s against
                    // 0.043 s with the address computed before the branch in the PTX).
                    Some((v, _)) if ty != crate::syntax::ast::Type::Pred && plan.uni.value_at(func, v, b) == Shape::Uniform => LaneValue::Uniform(v, lane_array(e, e.storage_t(ty).into(), "st.reg")),
                    _ => LaneValue::Copy(lane_array(e, e.storage_t(ty).into(), "st.reg")),
                };
                regs.push((n.to_string(), ty, src));
            }
            w(e).deferred.borrow_mut().push(Deferred { at: (b, k), hit, regs });
            w(e).deferred.borrow().len() - 1
        }
    };
    let (hit, regs) = {
        let d = &w(e).deferred.borrow()[idx];
        (d.hit, d.regs.clone())
    };
    for (n, ty, src) in regs {
        let (LaneValue::Copy(arr) | LaneValue::Uniform(_, arr)) = src else { continue };
        let (p, _) = e.overrides[n.as_str()];
        let t = e.storage_t(ty);
        let v = e.b.build_load(t, p, "").unwrap();
        let at = unsafe { e.b.build_in_bounds_gep(t.array_type(LANES), arr, &[i32t.const_zero(), lane], "").unwrap() };
        e.b.build_store(at, v).unwrap();
    }
    let at = unsafe { e.b.build_in_bounds_gep(i8t.array_type(LANES), hit, &[i32t.const_zero(), lane], "").unwrap() };
    e.b.build_store(at, i8t.const_int(1, false)).unwrap();
    e.overrides.clear();
}

/// After the lane loop: the deferred store, once, with the registers of the highest lane
/// that reached it; then clears the lanes' marks.
fn run_deferred<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, d: Deferred<'ctx>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i8t) = (ctx.i32_type(), ctx.i8_type());
    let func = e.ir_func();
    let inst = &func.blocks[d.at.0 as usize].insts[d.at.1];
    let v8 = i8t.vec_type(LANES);
    let hits = e.b.build_load(v8, d.hit, "").unwrap().into_vector_value();
    let on = e.b.build_int_compare(IntPredicate::NE, hits, v8.const_zero(), "").unwrap();
    let mask = e.b.build_bit_cast(on, i32t, "st.lanes").unwrap().into_int_value();
    let any = e.b.build_int_compare(IntPredicate::NE, mask, i32t.const_zero(), "").unwrap();
    let run = ctx.append_basic_block(e.f, "st.last");
    let done = ctx.append_basic_block(e.f, "st.done");
    e.b.build_conditional_branch(any, run, done).unwrap();
    e.b.position_at_end(run);
    let lz = e.intrinsic("llvm.ctlz", &[i32t.into()], &[mask.into(), ctx.bool_type().const_int(1, false).into()]).into_int_value();
    let last = e.b.build_int_sub(i32t.const_int(LANES as u64 - 1, false), lz, "st.lane").unwrap();
    // Whether the last lane is lane 31 (a whole warp reached the store, the common case):
    // then the lane arrays' elements are taken at a constant index (see below).
    let top = e.b.build_int_compare(IntPredicate::EQ, lz, i32t.const_zero(), "st.top").unwrap();
    e.overrides.clear();
    let mut temps = Vec::new();
    let plan = w(e).plan.clone();
    for (n, ty, src) in &d.regs {
        let t = e.storage_t(*ty);
        let src = match *src {
            LaneValue::Uniform(v, arr) => match lane0_temp(e, &func, &plan, v, 0, 0) {
                Some(p) => {
                    e.overrides.clear();
                    temps.push((n.clone(), *ty, p));
                    continue;
                }
                None => {
                    e.overrides.clear();
                    LaneValue::Copy(arr)
                }
            },
            other => other,
        };
        let v = match src {
            LaneValue::Lanes(arr) | LaneValue::Copy(arr) | LaneValue::Uniform(_, arr) => {
                // The last lane's element of the whole lane array as a vector: the array is
                // registers (SROA, after `passes::lane_shadow`), where the OR-reduction of the
                // array with every other lane masked off that this was (a load of the one
                // element from memory waited for the vector store that had just written it)
                // held 17% of the block scan's samples, a chain of eleven instructions per
                // warp. x86 makes an extract at a variable index a store of the vector and a
                // load of the lane, which on AMD Zen 4 waits for the 64-byte store to
                // complete (the instruction after the load held 6% of the block scan's
                // samples there), so lane 31 is extracted at a constant index (register
                // moves) on a branch of its own.
                let vt = t.vec_type(LANES);
                let all = e.b.build_load(vt, arr, "").unwrap().into_vector_value();
                let konst = ctx.append_basic_block(e.f, "st.lane31");
                let var = ctx.append_basic_block(e.f, "st.lane.var");
                let join = ctx.append_basic_block(e.f, "st.value.join");
                e.b.build_conditional_branch(top, konst, var).unwrap();
                e.b.position_at_end(konst);
                let a = e.b.build_extract_element(all, i32t.const_int(LANES as u64 - 1, false), "st.value").unwrap();
                e.b.build_unconditional_branch(join).unwrap();
                e.b.position_at_end(var);
                let b = e.b.build_extract_element(all, last, "st.value").unwrap();
                e.b.build_unconditional_branch(join).unwrap();
                e.b.position_at_end(join);
                let phi = e.b.build_phi(a.get_type(), "st.value").unwrap();
                phi.add_incoming(&[(&a, konst), (&b, var)]);
                phi.as_basic_value()
            }
            LaneValue::Scalar(p) => e.b.build_load(t, p, "").unwrap(),
            LaneValue::Affine(p, stride) => {
                let base = e.b.build_load(t, p, "").unwrap().into_int_value();
                let it = base.get_type();
                let l = e.b.build_int_cast(last, it, "").unwrap();
                let (x, r) = if w(e).tile {
                    (e.b.build_and(l, it.const_int(15, false), "").unwrap(), e.b.build_right_shift(l, it.const_int(4, false), false, "").unwrap())
                } else {
                    (l, it.const_zero())
                };
                let ox = e.b.build_int_mul(x, it.const_int(stride.x as u64, true), "").unwrap();
                let or = e.b.build_int_mul(r, it.const_int(stride.r as u64, true), "").unwrap();
                let off = e.b.build_int_add(ox, or, "").unwrap();
                e.b.build_int_add(base, off, "").unwrap().into()
            }
        };
        let tmp = e.alloca_b.build_alloca(t, "st.reg").unwrap();
        e.b.build_store(tmp, v).unwrap();
        temps.push((n.clone(), *ty, tmp));
    }
    let saved = (e.span, std::mem::take(&mut e.overrides), e.current_scope());
    e.enter_scope(inst.scope);
    e.span = inst.src.span;
    let mut r = Ok(());
    {
        let mut names = Vec::new();
        reg_names(inst.src, &mut names);
        for n in names {
            if let Some((_, ty, tmp)) = temps.iter().find(|(x, _, _)| x == n) {
                e.overrides.insert(n, (*tmp, *ty));
            }
        }
        if let Err(x) = e.unguarded(inst.src) {
            r = Err(x);
        }
    }
    e.overrides = saved.1;
    e.span = saved.0;
    e.enter_scope(saved.2);
    e.b.build_store(d.hit, i8t.array_type(LANES).const_zero()).unwrap();
    e.b.build_unconditional_branch(done).unwrap();
    e.b.position_at_end(done);
    r
}

/// Emits instruction `inst` for the lane being emitted, its registers bound to their webs.
fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, b: BlockId) -> R<()> {
    if let Some(d) = w(e).deferred_err.borrow_mut().take() {
        return Err(d);
    }
    if w(e).lane.is_some() {
        if let Some(k) = deferrable_store(func, &w(e).plan, inst, b) {
            defer_store(e, func, inst, b, k);
            return Ok(());
        }
    }
    if w(e).lane.is_some() && !vector_friendly(func, &w(e).plan, inst, b) {
        w(e).narrow.set(true);
    }
    if w(e).lane.is_some() && inst.src.opcode.name == "st" {
        let access = w(e).plan.uni.access(func, inst, b);
        if access != Some(uniformity::Access::Consecutive) {
            w(e).ordered.set(true);
        }
        if w(e).plan.matrix && access == Some(uniformity::Access::Gather) {
            w(e).scatters.set(true);
        }
    }
    // A group of CTAs (`groups_ctas`) walks each stride's span contiguously, which the
    // hardware prefetcher follows: a loop's prefetch a round ahead only costs there
    // (grid-stride saxpy, same run: 0.021 s without, 0.022-0.024 s with; in C, a histogram
    // in groups of 16 CTAs: 0.014 s without, 0.017 s with).
    let grouped_loop = |a: &Ahead| w(e).cta_group && a.advance.is_some();
    if let (Some(_), Some(k)) = (w(e).lane, func.blocks[b as usize].insts.iter().position(|x| std::ptr::eq(x, inst))) {
        if let Some(ahead) = prefetch_bytes(func, &w(e).plan, inst, b, k).filter(|a| !grouped_loop(a)) {
            w(e).prefetch.borrow_mut().push((b, k, ahead));
        }
    }
    bind(e, func, inst.src, inst.scope, &inst.reads(), &inst.defs);
    let r = e.unguarded(inst.src);
    e.overrides.clear();
    r
}

/// Binds the registers a block's terminator reads (its guard predicate, a `brx.idx` index).
fn bind_term<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, blk: &crate::ir::Block<'a>) {
    let Some((i, scope)) = blk.term_src else { return };
    let mut values = Vec::new();
    match &blk.term {
        Term::CondBr { cond, .. } => cond.values(&mut values),
        Term::Switch { index, .. } => index.values(&mut values),
        _ => {}
    }
    bind(e, func, i, scope, &values, &[]);
}


/// Lowers the kernel's IR on the warp path (the counterpart of `FnEmitter::walk`).
pub(crate) fn walk<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>) -> R<()> {
    e.declare_scopes();
    let func = e.ir_func();
    let plan = w(e).plan.clone();
    let cfg = &plan.uni.cfg;
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let code: Vec<Option<BasicBlock<'ctx>>> = (0..func.blocks.len()).map(|b| (cfg.order[b] != u32::MAX && !plan.inlined[b]).then(|| ctx.append_basic_block(e.f, func.blocks[b].label.unwrap_or("bb")))).collect();
    let sw = w(e).dispatch_switch;
    for &b in cfg.rpo.iter().filter(|b| !plan.inlined[**b as usize]) {
        let case = i32t.const_int(cfg.order[b as usize] as u64, false);
        // inkwell builds a switch with all its cases at once; the blocks exist only now.
        unsafe { inkwell::llvm_sys::core::LLVMAddCase(inkwell::values::AsValueRef::as_value_ref(&sw), inkwell::values::AsValueRef::as_value_ref(&case), code[b as usize].unwrap().as_mut_ptr()) };
    }
    let mut parked_at: Vec<BlockId> = plan.parks.iter().map(|p| p.0).collect();
    parked_at.sort();
    parked_at.dedup();
    for h in parked_at {
        let case = i32t.const_int(PARKED + cfg.order[h as usize] as u64, false);
        let to = unpark(e, h);
        unsafe { inkwell::llvm_sys::core::LLVMAddCase(inkwell::values::AsValueRef::as_value_ref(&sw), inkwell::values::AsValueRef::as_value_ref(&case), to.as_mut_ptr()) };
    }
    e.b.build_unconditional_branch(code[0].expect("entry block")).unwrap();
    for &b in cfg.rpo.iter().filter(|b| !plan.inlined[**b as usize]) {
        e.b.position_at_end(code[b as usize].unwrap());
        block(e, &func, &plan, b, &code)?;
    }
    if let Some(d) = w(e).deferred_err.borrow_mut().take() {
        return Err(d);
    }
    Ok(())
}

/// Where a lane loop that starts at instruction `k` of `insts` must end for warp-synchronous
/// code: before a volatile shared access (`lanes::is_lockstep_access`: the CUDA SDK's
/// reduction and scan tails) that would otherwise see or clobber what a later lane of the
/// loop accesses, i.e. a volatile load after a shared store of the loop, or a volatile store
/// after any shared access of it. Before sm_70 a warp's lanes run each instruction together
/// (PTX ISA 6.4 section 3.2), which such code relies on: ending the loop there lets every lane
/// finish its accesses of one step before any lane runs the next, the lockstep result (the
/// per-thread path makes the warp's lanes meet at the same points).
fn lockstep_meet(insts: &[crate::ir::Inst], k: usize) -> Option<usize> {
    let (mut read, mut wrote) = (false, false);
    for (j, inst) in insts.iter().enumerate().skip(k) {
        if j > k {
            if let Some(store) = crate::lanes::is_lockstep_access(inst.src) {
                if wrote || store && read {
                    return Some(j);
                }
            }
        }
        match crate::lanes::shared_access(inst.src) {
            Some(true) => wrote = true,
            Some(false) => read = true,
            None => {}
        }
    }
    None
}

/// Whether the terminator of `b` can be decided once per warp (no lane-array operand).
fn scalar_term(f: &Func, plan: &Plan, b: BlockId) -> bool {
    let is_scalar = |o: &Opnd| {
        let mut vs = Vec::new();
        o.values(&mut vs);
        vs.iter().all(|v| plan.uniform_web(&plan.key(f, *v))) && !matches!(o, Opnd::Name(n) if n.starts_with('%') && uniformity::special_shape(n, plan.uni.layout) != Shape::Uniform)
    };
    match &f.blocks[b as usize].term {
        Term::CondBr { cond, .. } => is_scalar(cond),
        Term::Switch { .. } => false,
        _ => true,
    }
}

fn block<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, b: BlockId, code: &[Option<BasicBlock<'ctx>>]) -> R<()> {
    let cfg = &plan.uni.cfg;
    let i32t = e.ctx().i32_type();
    let blk = &func.blocks[b as usize];
    let id = cfg.order[b as usize];
    let order = |t: BlockId| i32t.const_int(cfg.order[t as usize] as u64, false);
    if let Some(blocks) = plan.serial.get(&b) {
        return serial_loop(e, func, plan, b, blocks);
    }
    if converged(plan, b) && plan.parks.is_empty() {
        converged_entry(e, id);
    }
    let mut lp: Option<LaneLoop<'ctx>> = None;
    // Where the open lane loop ends for warp-synchronous code (`lockstep_meet`).
    let mut lp_end = blk.insts.len();
    let mut batched = 0;
    for (k, inst) in blk.insts.iter().enumerate() {
        if k < batched {
            continue;
        }
        if k >= lp_end {
            if let Some(l) = lp.take() {
                close(e, l);
            }
        }
        e.enter_scope(inst.scope);
        e.span = inst.src.span;
        if super::warp_collective::is_collective(inst.src) {
            if let Some(l) = lp.take() {
                close(e, l);
            }
            // (A barrier is not a matrix instruction: a batch never crosses one.)
            let n = super::warp_collective::matrix_batch_len(func, plan, &blk.insts[k..]);
            if n > 1 {
                let insts: Vec<&crate::ir::Inst<'a>> = blk.insts[k..k + n].iter().collect();
                super::warp_collective::matrix(e, func, &insts, id)?;
                batched = k + n;
                continue;
            }
            super::warp_collective::emit(e, func, inst, id)?;
            continue;
        }
        if is_arrive(inst) {
            if let Some(l) = lp.take() {
                close(e, l);
            }
            arrive(e, func, inst, b)?;
            continue;
        }
        if let Some((_, live)) = plan.barriers.iter().find(|(at, _)| *at == (b, k)) {
            if let Some(l) = lp.take() {
                close(e, l);
            }
            if plan.park_barrier == Some((b, k)) {
                park_at_barrier(e, plan, b);
            }
            barrier(e, func, inst, (b, k), live.clone())?;
            continue;
        }
        // tcgen05.ld/st move the warp's cells together (`lanes::is_tcgen05_meet`): every lane
        // finishes what comes before before any lane runs them.
        if crate::lanes::is_tcgen05_meet(inst.src) {
            if let Some(l) = lp.take() {
                close(e, l);
            }
        }
        if plan.scalar_inst[b as usize][k] {
            let defs: Vec<(u32, String)> = inst.defs.iter().map(|d| plan.key(func, *d)).collect();
            match lp.as_mut() {
                Some(l) if defs.iter().all(|d| !l.reads.contains(d)) && !(inst.src.opcode.name == "ld" && l.writes) => {
                    // Runs before the open lane loop, which does not read what it writes.
                    let cur = e.b.get_insert_block().unwrap();
                    set_lane(e, None);
                    e.b.position_at_end(l.pre);
                    emit(e, func, inst, b)?;
                    l.pre = e.b.get_insert_block().unwrap();
                    e.b.position_at_end(cur);
                    set_lane(e, Some(l.lane));
                }
                Some(_) => {
                    close(e, lp.take().unwrap());
                    emit(e, func, inst, b)?;
                }
                None => emit(e, func, inst, b)?,
            }
        } else {
            if lp.is_none() {
                // Up to the next collective or barrier, or the block's end (then its
                // terminator, if the lanes decide it, runs in this loop too).
                let end = (k..blk.insts.len())
                    .find(|&j| super::warp_collective::is_collective(blk.insts[j].src) || plan.barriers.iter().any(|(at, _)| *at == (b, j)) || (j > k && crate::lanes::is_tcgen05_meet(blk.insts[j].src)))
                    .unwrap_or(blk.insts.len());
                let end = lockstep_meet(&blk.insts[..end], k).unwrap_or(end);
                lp_end = end;
                let term_ok = end < blk.insts.len() || scalar_term(func, plan, b) || (matches!(blk.term, Term::CondBr { .. }) && !plan.inline.contains_key(&b));
                let guarded = !(term_ok && unguarded_run(func, plan, b, &blk.insts[k..end]));
                lp = Some(open_with(e, id, guarded));
            }
            let l = lp.as_mut().unwrap();
            for v in inst.reads() {
                l.reads.insert(plan.key(func, v));
            }
            l.writes |= may_write_memory(func, inst);
            emit(e, func, inst, b)?;
        }
    }
    if let Some((i, scope)) = blk.term_src {
        e.enter_scope(scope);
        e.span = i.span;
    }
    // A uniform terminator may branch straight to a successor that the same lanes run
    // together; anything else goes through the dispatch, which lets every other waiting
    // lane catch up first (a branch out of one side of a divergent `if` must not enter the
    // join before the other side's lanes).
    let group = plan.uni.group[b as usize];
    let direct = |t: BlockId| uniform_group(plan, b, t);
    let uniform = group != Group::Mixed && !plan.uni.divergent[b as usize];
    let all_exit = group == Group::All && !plan.uni.divergent[b as usize] && !plan.uni.in_divergent_loop(b);
    let (next, dispatch) = (w(e).next, w(e).dispatch);
    let v32 = i32t.vec_type(LANES);
    if scalar_term(func, plan, b) {
        if let Some(l) = lp.take() {
            close(e, l);
        }
        // The successor, once for the warp.
        let (succ, cond) = match &blk.term {
            Term::Br(t) => (order(*t), None),
            Term::CondBr { then, els, .. } => {
                let p = guard_value(e, func, blk)?;
                (e.b.build_select(p, order(*then), order(*els), "").unwrap().into_int_value(), Some((p, *then, *els)))
            }
            _ => (i32t.const_int(DONE, false), None),
        };
        let succ = park_succ(e, plan, b, succ);
        let exits = matches!(blk.term, Term::Ret(_) | Term::Exit | Term::Unreachable);
        if !(exits && all_exit) {
            advance(e, id, succ);
        }
        if uniform {
            match (&blk.term, cond) {
                (Term::Br(t), _) if direct(*t) => {
                    let to = if cfg.order[*t as usize] <= id { back_edge(e, b, code[*t as usize].unwrap()) } else { code[*t as usize].unwrap() };
                    e.b.build_unconditional_branch(to).unwrap();
                }
                (Term::CondBr { .. }, Some((p, then, els))) if direct(then) || direct(els) => {
                    let mut to = |t: BlockId| if !direct(t) { dispatch } else if cfg.order[t as usize] <= id { back_edge(e, b, code[t as usize].unwrap()) } else { code[t as usize].unwrap() };
                    let (a, c) = (to(then), to(els));
                    e.b.build_conditional_branch(p, a, c).unwrap();
                }
                (Term::Ret(_) | Term::Exit | Term::Unreachable, _) if all_exit => {
                    let done = e.ret_bb;
                    e.b.build_unconditional_branch(done).unwrap();
                }
                _ => {
                    e.b.build_unconditional_branch(dispatch).unwrap();
                }
            }
        } else {
            e.b.build_unconditional_branch(dispatch).unwrap();
        }
        return Ok(());
    }
    // Each lane decides its successor.
    if lp.is_none() {
        lp = Some(open(e, id));
    }
    let lane = lp.as_ref().unwrap().lane;
    if let Some((region, join)) = plan.inline.get(&b) {
        // Each lane runs its own path through the region in this lane loop, and waits at
        // the reconvergence point.
        let join = *join;
        let hoisted = inline_region(e, func, plan, b, region, join, lane)?;
        close(e, lp.take().unwrap());
        if hoisted {
            region_joined(e, id, cfg.order[join as usize]);
        }
        if uniform_group(plan, b, join) {
            e.b.build_unconditional_branch(code[join as usize].unwrap()).unwrap();
        } else {
            e.b.build_unconditional_branch(dispatch).unwrap();
        }
        return Ok(());
    }
    let succ = match &blk.term {
        Term::CondBr { then, els, .. } => {
            let p = guard_value(e, func, blk)?;
            e.b.build_select(p, order(*then), order(*els), "").unwrap().into_int_value()
        }
        Term::Switch { targets, .. } => {
            // PTX ISA 9.7.11.4 brx.idx: an index out of range is undefined on a GPU and
            // stops the CTA here as a trap.
            let (i, _) = blk.term_src.ok_or_else(|| e.err(e.span, "internal error: brx.idx without its instruction"))?;
            let idx = i.operands.first().ok_or_else(|| e.err(i.span, "`brx.idx` takes an index and a `.branchtargets` label"))?;
            bind_term(e, func, blk);
            let v = e.read_int(idx, crate::syntax::ast::Type::U32);
            e.overrides.clear();
            let v = v?;
            let out = e.b.build_int_compare(IntPredicate::UGE, v, i32t.const_int(targets.len() as u64, false), "brx.out_of_range").unwrap();
            e.abort_if(out, super::abi::STATUS_TRAP);
            let mut s = i32t.const_int(DONE, false);
            for (k, t) in targets.iter().enumerate() {
                let is = e.b.build_int_compare(IntPredicate::EQ, v, i32t.const_int(k as u64, false), "").unwrap();
                s = e.b.build_select(is, order(*t), s, "").unwrap().into_int_value();
            }
            s
        }
        _ => unreachable!("scalar_term covers the other terminators"),
    };
    let succ = park_succ(e, plan, b, succ);
    let at = unsafe { e.b.build_in_bounds_gep(i32t.array_type(LANES), next, &[i32t.const_zero(), lane], "").unwrap() };
    if lp.as_ref().unwrap().guarded {
        // Stored when the loop closes.
        lp.as_mut().unwrap().next_out = Some(succ);
    } else {
        // Lanes that are not here keep their place.
        let old = e.b.build_load(i32t, at, "").unwrap().into_int_value();
        let here = e.b.build_int_compare(IntPredicate::EQ, old, i32t.const_int(id as u64, false), "").unwrap();
        let succ = e.b.build_select(here, succ, old, "").unwrap().into_int_value();
        e.b.build_store(at, succ).unwrap();
    }
    // The latch of a lockstep loop: while any lane goes round again, the loop's header is
    // the lowest block any lane waits for (every lane still in the loop is here, the others
    // wait after it), so the warp goes there without the dispatch. Whether any lane does is
    // a reduction in the lane loop (reading `next` back as a vector right after the lanes
    // wrote it one by one would stall on store forwarding).
    let parks = plan.parks.iter().any(|p| p.1 == b);
    let header = cfg.loops.iter().enumerate().find(|(k, (h, _))| !parks && cfg.latch(*k) == Some(b) && cfg.lockstep(*k) && blk.term.succs().contains(h)).map(|(_, (h, _))| *h);
    let again = header.filter(|h| code[*h as usize].is_some()).map(|h| {
        let flag = e.alloca_b.build_alloca(e.ctx().bool_type(), "again").unwrap();
        let pre = lp.as_ref().unwrap().pre;
        let cur = e.b.get_insert_block().unwrap();
        e.b.position_at_end(pre);
        e.b.build_store(flag, e.ctx().bool_type().const_zero()).unwrap();
        e.b.position_at_end(cur);
        let goes = e.b.build_int_compare(IntPredicate::EQ, succ, order(h), "").unwrap();
        let old = e.b.build_load(e.ctx().bool_type(), flag, "").unwrap().into_int_value();
        e.b.build_store(flag, e.b.build_or(old, goes, "").unwrap()).unwrap();
        (flag, h)
    });
    close(e, lp.take().unwrap());
    if let Some((flag, h)) = again {
        let any = e.b.build_load(e.ctx().bool_type(), flag, "").unwrap().into_int_value();
        let to = back_edge(e, b, code[h as usize].unwrap());
        e.b.build_conditional_branch(any, to, dispatch).unwrap();
        return Ok(());
    }
    match (&blk.term, all_exit) {
        (Term::CondBr { then, els, .. }, true) => {
            // Every live lane took the same side: the lowest successor is theirs.
            let all = e.b.build_load(v32, next, "").unwrap();
            let low = e.intrinsic("llvm.vector.reduce.umin", &[v32.into()], &[all]).into_int_value();
            let is_then = e.b.build_int_compare(IntPredicate::EQ, low, order(*then), "").unwrap();
            // A way back (a loop's second latch) polls the time limit and yields as any.
            let mut to = |t: BlockId| if cfg.order[t as usize] <= id { back_edge(e, b, code[t as usize].unwrap()) } else { code[t as usize].unwrap() };
            let (a, c) = (to(*then), to(*els));
            e.b.build_conditional_branch(is_then, a, c).unwrap();
        }
        _ => {
            e.b.build_unconditional_branch(dispatch).unwrap();
        }
    }
    Ok(())
}

/// At the top of converged block number `id` (every live lane runs it together: the
/// others have ended, and no lane is parked): `next` is `id` in every lane that is not
/// `DONE`, and saying so (`next = next == DONE ? DONE : id`) lets LLVM fold what the block
/// does with `next` from what it knew before. The block's lane test (`next == id`) becomes
/// the warp's live lanes, and its update to its successor (`next == id ? succ : next`)
/// a select on them, where without it each converged block kept a compare and a blend per
/// 16 lanes on the warp's `next` vectors, for a chain of uniform blocks one after another.
/// Where LLVM knows the lanes (after a barrier's restore, `finish`; from the warp's
/// start), the masks of the blocks that follow fold too. On a Zen 4 core, one core,
/// 4096 CTAs of 256 threads in L3: a load-and-store kernel with the block scan's
/// control flow 0.333 -> 0.241 ms; the block scan 0.650 -> 0.585 ms (with `finish`'s
/// masks; 0.683 ms without them, where each converged block after a restore paid the
/// compare and blend).
fn converged_entry<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, id: u32) {
    let i32t = e.ctx().i32_type();
    let next = w(e).next;
    let all = e.b.build_load(i32t.vec_type(LANES), next, "").unwrap().into_vector_value();
    let done = splat(e, i32t.const_int(DONE, false));
    let ended = e.b.build_int_compare(IntPredicate::EQ, all, done, "").unwrap();
    let upd = e.b.build_select(ended, done, splat(e, i32t.const_int(id as u64, false)), "converged").unwrap();
    e.b.build_store(next, upd).unwrap();
}

/// A lane's next block `succ` leaving block `b`: at the latch of a parking loop
/// ([`Plan::parks`]), a lane that goes round again parks at the header instead.
fn park_succ<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, plan: &Plan, b: BlockId, succ: IntValue<'ctx>) -> IntValue<'ctx> {
    let Some(&(h, _, _)) = plan.parks.iter().find(|p| p.1 == b) else { return succ };
    let i32t = e.ctx().i32_type();
    let oh = plan.uni.cfg.order[h as usize] as u64;
    let again = e.b.build_int_compare(IntPredicate::EQ, succ, i32t.const_int(oh, false), "spin.again").unwrap();
    e.b.build_select(again, i32t.const_int(PARKED + oh, false), succ, "park").unwrap().into_int_value()
}

/// Before the barrier after the parking loops ([`Plan::park_barrier`], in block `b`): while
/// lanes of the warp are parked in a spin loop, the lanes here park at the barrier
/// (`next = PARKED + blocks`, after every spin loop's value) and the dispatch runs the
/// others; once none is parked in a loop (here, or from the dispatch's case for the
/// barrier), the lanes parked at the barrier rejoin the block and every live lane of the
/// warp goes on to the barrier together.
fn park_at_barrier<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, plan: &Plan, b: BlockId) {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let v32 = i32t.vec_type(LANES);
    let (next, dispatch, sw) = (w(e).next, w(e).dispatch, w(e).dispatch_switch);
    let id = plan.uni.cfg.order[b as usize] as u64;
    let at_bar = PARKED + plan.uni.cfg.order.len() as u64;
    let park = ctx.append_basic_block(e.f, "bar.park");
    let rejoin = ctx.append_basic_block(e.f, "bar.rejoin");
    let go = ctx.append_basic_block(e.f, "bar.all");
    let all = e.b.build_load(v32, next, "next").unwrap().into_vector_value();
    let lo = e.b.build_int_compare(IntPredicate::UGE, all, splat(e, i32t.const_int(PARKED, false)), "").unwrap();
    let hi = e.b.build_int_compare(IntPredicate::ULT, all, splat(e, i32t.const_int(at_bar, false)), "").unwrap();
    let spinning = e.b.build_and(lo, hi, "spinning").unwrap();
    let any = e.intrinsic("llvm.vector.reduce.or", &[spinning.get_type().into()], &[spinning.into()]).into_int_value();
    e.b.build_conditional_branch(any, park, rejoin).unwrap();
    e.b.position_at_end(park);
    let here = e.b.build_int_compare(IntPredicate::EQ, all, splat(e, i32t.const_int(id, false)), "here").unwrap();
    let upd = e.b.build_select(here, splat(e, i32t.const_int(at_bar, false)), all, "").unwrap();
    e.b.build_store(next, upd).unwrap();
    e.b.build_unconditional_branch(dispatch).unwrap();
    e.b.position_at_end(rejoin);
    let all = e.b.build_load(v32, next, "next").unwrap().into_vector_value();
    let waited = e.b.build_int_compare(IntPredicate::EQ, all, splat(e, i32t.const_int(at_bar, false)), "").unwrap();
    let upd = e.b.build_select(waited, splat(e, i32t.const_int(id, false)), all, "").unwrap();
    e.b.build_store(next, upd).unwrap();
    e.b.build_unconditional_branch(go).unwrap();
    unsafe { inkwell::llvm_sys::core::LLVMAddCase(inkwell::values::AsValueRef::as_value_ref(&sw), inkwell::values::AsValueRef::as_value_ref(&i32t.const_int(at_bar, false)), rejoin.as_mut_ptr()) };
    e.b.position_at_end(go);
}

/// The dispatch's case for the lanes parked at the header `h` of a spin loop
/// ([`Plan::parks`]), which it reaches once every lane that has not ended is parked: every
/// [`YIELD_EVERY`]th time, when the CTA has other warps, the warp first yields (saving its
/// frame as a barrier does) so that the warp its lanes wait for runs; then the lanes parked
/// at `h` go round again. Lanes parked at another loop's header stay parked.
fn unpark<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, h: BlockId) -> BasicBlock<'ctx> {
    let plan = w(e).plan.clone();
    let live = plan.parks.iter().find(|p| p.0 == h).expect("a parking loop").2.clone();
    let oh = plan.uni.cfg.order[h as usize] as u64;
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let v32 = i32t.vec_type(LANES);
    let (next, dispatch) = (w(e).next, w(e).dispatch);
    let cur = e.b.get_insert_block();
    let go = ctx.append_basic_block(e.f, "park.again");
    e.b.position_at_end(go);
    let all = e.b.build_load(v32, next, "next").unwrap().into_vector_value();
    let parked = e.b.build_int_compare(IntPredicate::EQ, all, splat(e, i32t.const_int(PARKED + oh, false)), "parked").unwrap();
    let upd = e.b.build_select(parked, splat(e, i32t.const_int(oh, false)), all, "unpark").unwrap();
    e.b.build_store(next, upd).unwrap();
    e.b.build_unconditional_branch(dispatch).unwrap();
    if let Some(cur) = cur {
        e.b.position_at_end(cur);
    }
    counted_yield(e, live, "park", go, YIELD_EVERY)
}

/// Whether the lanes of block `b` that go to `t` may go there directly, without the
/// dispatch: `t` runs the same group of lanes (or `b` every live lane), and the edge leaves
/// no loop with a divergent exit (lanes that leave such a loop wait for the others).
fn uniform_group(plan: &Plan, b: BlockId, t: BlockId) -> bool {
    let group = plan.uni.group[b as usize];
    group != Group::Mixed && (group == Group::All || plan.uni.group[t as usize] == group) && !plan.uni.leaves_divergent_loop(b, t)
}

/// Emits divergent branch `c`'s terminator and its `region` inside the open lane loop of
/// `c` (lane `lane`): the region's blocks become blocks of the loop body, their branches
/// branches of the lane; a lane that reaches `join` records it as its next block (or, where
/// this returns `true`, is left at `c` for [`region_joined`] to move after the loop), one
/// that ends records `DONE`. The builder is left at the end of the loop body.
fn inline_region<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, c: BlockId, region: &[BlockId], join: BlockId, lane: IntValue<'ctx>) -> R<bool> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let cfg = &plan.uni.cfg;
    let next = w(e).next;
    let slot = unsafe { w(e).gep_b.build_in_bounds_gep(i32t.array_type(LANES), next, &[i32t.const_zero(), lane], "next.lane").unwrap() };
    let end = ctx.append_basic_block(e.f, "region.end");
    let to_join = ctx.append_basic_block(e.f, "region.join");
    let ended = ctx.append_basic_block(e.f, "region.ended");
    let bbs: HashMap<BlockId, BasicBlock<'ctx>> = region.iter().map(|&x| (x, ctx.append_basic_block(e.f, func.blocks[x as usize].label.unwrap_or("region")))).collect();
    let target = |t: BlockId| if t == join { to_join } else { bbs[&t] };
    let term = |e: &mut FnEmitter<'ctx, 'a, '_>, x: BlockId| -> R<()> {
        let blk = &func.blocks[x as usize];
        if let Some((i, scope)) = blk.term_src {
            e.enter_scope(scope);
            e.span = i.span;
        }
        match &blk.term {
            Term::Br(t) => {
                e.b.build_unconditional_branch(target(*t)).unwrap();
            }
            Term::CondBr { then, els, .. } => {
                let p = guard_value(e, func, blk)?;
                e.b.build_conditional_branch(p, target(*then), target(*els)).unwrap();
            }
            Term::Ret(_) | Term::Exit | Term::Unreachable => {
                e.b.build_unconditional_branch(ended).unwrap();
            }
            Term::Switch { .. } => unreachable!("inline_regions leaves out brx.idx"),
        }
        Ok(())
    };
    term(e, c)?;
    for &x in region {
        e.b.position_at_end(bbs[&x]);
        for inst in &func.blocks[x as usize].insts {
            e.enter_scope(inst.scope);
            e.span = inst.src.span;
            emit(e, func, inst, x)?;
        }
        if e.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_none()) {
            term(e, x)?;
        }
    }
    let _ = cfg;
    // In a lane loop that is not one 32-lane vector (the region has an instruction without a
    // vector form), a lane that reaches the join keeps `next[lane]` (this block) here, and
    // after the loop one vector select moves every such lane to the join
    // ([`region_joined`]): the loop writes `next` only for the lanes that end in it, and
    // LLVM's own widening of the loop does not store `next` in pieces the next whole load of
    // it cannot forward from (the warp-shuffle reduction's store by lane 0: 0.022 -> 0.016 s
    // on an AMD EPYC). A 32-lane loop stores it whole already (`passes::lane_stores`), and
    // there the separate update cost time (the block scan's shuffle steps: 0.048 -> 0.088 s).
    let hoist = w(e).narrow.get() && !w(e).plan.matrix;
    e.b.position_at_end(to_join);
    if !hoist {
        e.b.build_store(slot, i32t.const_int(plan.uni.cfg.order[join as usize] as u64, false)).unwrap();
    }
    e.b.build_unconditional_branch(end).unwrap();
    e.b.position_at_end(ended);
    e.b.build_store(slot, i32t.const_int(DONE, false)).unwrap();
    e.b.build_unconditional_branch(end).unwrap();
    e.b.position_at_end(end);
    Ok(hoist)
}

/// After the lane loop of block `id` and its inline region: every lane still waiting for
/// `id` has reached the region's join `join` (a lane that ended in the region or in a call
/// is `DONE`; lanes not at `id` were not in the loop).
fn region_joined(e: &mut FnEmitter, id: u32, join: u32) {
    let to = e.ctx().i32_type().const_int(join as u64, false);
    advance(e, id, to);
}

/// Moves every lane waiting for block number `id` to block number `succ` (one for the
/// warp): one whole-vector update of `next`.
fn advance<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, id: u32, succ: IntValue<'ctx>) {
    let i32t = e.ctx().i32_type();
    let next = w(e).next;
    let all = e.b.build_load(i32t.vec_type(LANES), next, "").unwrap().into_vector_value();
    let mine = e.b.build_int_compare(IntPredicate::EQ, all, splat(e, i32t.const_int(id as u64, false)), "").unwrap();
    let upd = e.b.build_select(mine, splat(e, succ), all, "").unwrap();
    e.b.build_store(next, upd).unwrap();
}

/// Emits serial loop `h` ([`Plan::serial`], its `blocks`): a lane loop over the lanes waiting
/// at the header, in which each lane runs the loop's blocks as its own scalar code until it
/// leaves (its next block is then the exit's) or ends (`DONE`). Every way back polls the
/// launch's time limit.
fn serial_loop<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, plan: &Plan, h: BlockId, blocks: &[BlockId]) -> R<()> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let cfg = &plan.uni.cfg;
    let mut l = open(e, cfg.order[h as usize]);
    // A loop inside: the lane loop stays a loop (neither vectorized nor unrolled).
    l.collective = true;
    let slot = unsafe { w(e).gep_b.build_in_bounds_gep(i32t.array_type(LANES), w(e).next, &[i32t.const_zero(), l.lane], "next.lane").unwrap() };
    let end = ctx.append_basic_block(e.f, "serial.end");
    let ended = ctx.append_basic_block(e.f, "serial.ended");
    let poll = ctx.append_basic_block(e.f, "serial.poll");
    let bbs: HashMap<BlockId, BasicBlock<'ctx>> = blocks.iter().map(|&x| (x, ctx.append_basic_block(e.f, func.blocks[x as usize].label.unwrap_or("serial")))).collect();
    let mut exits: Vec<(BlockId, BasicBlock<'ctx>)> = Vec::new();
    e.b.build_unconditional_branch(bbs[&h]).unwrap();
    for &x in blocks {
        e.b.position_at_end(bbs[&x]);
        let blk = &func.blocks[x as usize];
        for inst in &blk.insts {
            e.enter_scope(inst.scope);
            e.span = inst.src.span;
            emit(e, func, inst, x)?;
        }
        if e.b.get_insert_block().map_or(true, |bb| bb.get_terminator().is_some()) {
            continue;
        }
        if let Some((i, scope)) = blk.term_src {
            e.enter_scope(scope);
            e.span = i.span;
        }
        let mut target = |e: &mut FnEmitter<'ctx, 'a, '_>, t: BlockId| {
            if t == h {
                poll
            } else if let Some(bb) = bbs.get(&t) {
                *bb
            } else if let Some((_, bb)) = exits.iter().find(|(u, _)| *u == t) {
                *bb
            } else {
                let bb = e.ctx().append_basic_block(e.f, "serial.exit");
                exits.push((t, bb));
                bb
            }
        };
        match &blk.term {
            Term::Br(t) => {
                let to = target(e, *t);
                e.b.build_unconditional_branch(to).unwrap();
            }
            Term::CondBr { then, els, .. } => {
                let p = guard_value(e, func, blk)?;
                let (a, b) = (target(e, *then), target(e, *els));
                e.b.build_conditional_branch(p, a, b).unwrap();
            }
            Term::Ret(_) | Term::Exit | Term::Unreachable => {
                e.b.build_unconditional_branch(ended).unwrap();
            }
            Term::Switch { .. } => unreachable!("serial_loops leaves out brx.idx"),
        }
    }
    e.b.position_at_end(poll);
    e.poll_cancel();
    e.b.build_unconditional_branch(bbs[&h]).unwrap();
    for (t, bb) in exits {
        e.b.position_at_end(bb);
        e.b.build_store(slot, i32t.const_int(cfg.order[t as usize] as u64, false)).unwrap();
        e.b.build_unconditional_branch(end).unwrap();
    }
    e.b.position_at_end(ended);
    e.b.build_store(slot, i32t.const_int(DONE, false)).unwrap();
    e.b.build_unconditional_branch(end).unwrap();
    e.b.position_at_end(end);
    close(e, l);
    let dispatch = w(e).dispatch;
    e.b.build_unconditional_branch(dispatch).unwrap();
    Ok(())
}

/// The value of the guard that a `CondBr` terminator tests (PTX ISA 9.7.11.2: `@p`/`@!p`).
fn guard_value<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, blk: &crate::ir::Block<'a>) -> R<IntValue<'ctx>> {
    bind_term(e, func, blk);
    let r = guard_value_bound(e, blk);
    e.overrides.clear();
    r
}

fn guard_value_bound<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, blk: &crate::ir::Block<'a>) -> R<IntValue<'ctx>> {
    let (i, _) = blk.term_src.ok_or_else(|| e.err(e.span, "internal error: conditional branch without its instruction"))?;
    let g = i.guard.as_ref().ok_or_else(|| e.err(i.span, "internal error: conditional branch without a guard"))?;
    let p = e.read_pred_name(&g.pred)?;
    Ok(if g.negated { e.b.build_not(p, "").unwrap() } else { p })
}

#[cfg(test)]
mod tests {
    use super::prefetch_offsets;

    /// Every line of a warp's span is prefetched whatever lane 0's alignment: worked by hand
    /// for spans starting 16 bytes into a line (malloc's large blocks) and 48 bytes in.
    #[test]
    fn prefetch_offsets_cover_every_line_of_an_unaligned_span() {
        assert_eq!(prefetch_offsets(32), vec![0, 31]);
        assert_eq!(prefetch_offsets(128), vec![0, 64, 127]);
        assert_eq!(prefetch_offsets(1), vec![0]);
        for span in [1u64, 32, 64, 128, 256] {
            for start in [0u64, 16, 48, 63] {
                let lines: std::collections::BTreeSet<u64> = (start..start + span).map(|a| a / 64).collect();
                let got: std::collections::BTreeSet<u64> = prefetch_offsets(span).iter().map(|o| (start + o) / 64).collect();
                assert_eq!(got, lines, "span {span} from {start}");
            }
        }
    }
}
