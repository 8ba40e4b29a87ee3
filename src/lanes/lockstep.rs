//! Loops run in lockstep while the CTA is convergent.
//!
//! A pass of the scheduler runs each thread from its resume point to its next sync point. A
//! loop without a sync point inside would run to completion thread by thread: thread 0's
//! iterations, then thread 1's, ... That is the order a GPU never uses. Its threads run such
//! a loop together, one iteration after the other, and kernels are written for that order: in
//! a grid-stride loop (`for (i = gtid; i < n; i += nthreads)`), iteration k of consecutive
//! threads touches consecutive bytes, while one thread alone strides through memory a page
//! or more at a time.
//!
//! So the backward branch of an innermost loop without sync points in a kernel with
//! synchronization is a *yield point*: a thread taking it stops, as at `bar.warp.sync` with
//! only its own lane in the mask (PTX ISA 9.7.12.2: it waits for no other thread). When
//! every thread of the CTA stops there in a pass, generated code completes the pass at once
//! and the next one runs the loop's next iteration for all of them — a loop over threads
//! that LLVM vectorizes. When the threads diverge (a pass ends with threads at different
//! points: trip counts differ, one thread loops while the others wait at a barrier), yield
//! points are switched off for the rest of the CTA, and each thread again runs its loops to
//! completion; the runtime releases the threads that were stopped at a yield point. A spin
//! loop (one that waits for another thread: [`has_spin_loop`]) keeps yielding after the
//! threads diverged, so that the thread it waits for runs.

use crate::codegen::abi::{self, slot};
use crate::codegen::FnEmitter;
use crate::syntax::ast::{Instr, Operand, Stmt};
use inkwell::basic_block::BasicBlock;
use std::collections::{HashMap, HashSet};

/// The backward branches of a kernel body that become yield points: those closing an
/// innermost loop (no other backward branch inside it) whose instructions include no sync
/// point and no call. None when the body calls a function other than a host service (it
/// could synchronize, and its sync points are not counted). The second set holds the spin
/// loops among them ([`is_spin_loop`]), which always yield. When there is no room for the
/// others — with `sites` sync points already, the total must stay within `max_sites`, and
/// the body's estimated size times the number of region copies within `max_size`
/// (`lanes::wants_copies` drops every region copy of a kernel past these limits) — only the
/// spin loops yield.
pub fn yield_branches<'a>(body: &'a [Stmt<'a>], max_sites: u32, max_size: usize) -> (HashSet<*const Instr<'a>>, HashSet<*const Instr<'a>>) {
    let mut seq: Vec<&'a Stmt<'a>> = Vec::new();
    super::flatten(body, &mut seq);
    let instrs = seq.iter().filter(|s| matches!(s, Stmt::Instr(_))).count();
    // (Calls of the host services, `printf` and a failed `assert` in a loop, synchronize
    // nothing.)
    if seq.iter().any(|s| matches!(s, Stmt::Instr(i) if i.opcode.name == "call" && !super::calls_host_service(i))) {
        return (HashSet::new(), HashSet::new());
    }
    let sites = seq.iter().filter(|s| matches!(s, Stmt::Instr(i) if super::is_sync(i))).count() as u32;
    let mut out = HashSet::new();
    let mut spin = HashSet::new();
    for (h, b) in innermost_loops(&seq) {
        if seq[h..b].iter().any(|s| matches!(s, Stmt::Instr(i) if super::is_sync(i))) {
            continue;
        }
        let Stmt::Instr(i) = seq[b] else { unreachable!() };
        out.insert(i as *const Instr<'a>);
        if is_spin_loop(&seq[h..=b]) {
            spin.insert(i as *const Instr<'a>);
        }
    }
    // About 8 LLVM instructions per PTX instruction, once per region copy and the general loop.
    let total = sites + out.len() as u32;
    if out.is_empty() || total > max_sites || instrs * 8 * (total as usize + 2) > max_size {
        return (spin.clone(), spin);
    }
    (out, spin)
}

/// The innermost loops of a flattened body, as (header, backward branch) statement indices:
/// a branch to a label before it, with no other such loop inside.
fn innermost_loops(seq: &[&Stmt<'_>]) -> Vec<(usize, usize)> {
    let labels: HashMap<&str, usize> = seq.iter().enumerate().filter_map(|(k, s)| if let Stmt::Label(l) = s { Some((l.name, k)) } else { None }).collect();
    let mut back: Vec<(usize, usize)> = Vec::new();
    for (k, s) in seq.iter().enumerate() {
        let Stmt::Instr(i) = s else { continue };
        if i.opcode.name == "bra" {
            if let Some(Operand::Name(l, None)) = i.operands.first() {
                if let Some(&h) = labels.get(l.name) {
                    if h < k {
                        back.push((h, k));
                    }
                }
            }
        }
    }
    back.iter().copied().filter(|&(h, b)| !back.iter().any(|&(h2, b2)| (h2, b2) != (h, b) && h <= h2 && b2 < b)).collect()
}

/// Whether an instruction reads memory that another thread may be writing at the same time:
/// `ld.volatile`, a strong `ld` (`.relaxed`, `.acquire`, PTX ISA 8.4 memory consistency) or
/// an atomic (`atom`). Compilers keep such reads in a loop because they may change.
fn is_shared_read(i: &Instr) -> bool {
    match i.opcode.name {
        "atom" => true,
        "ld" | "ldu" => i.mods.iter().any(|m| matches!(*m, "volatile" | "relaxed" | "acquire")),
        // Waiting for an mbarrier phase that other threads complete.
        "mbarrier" => i.has_mod("test_wait") || i.has_mod("try_wait"),
        _ => false,
    }
}

/// Whether the loop `seq[h..=b]` (a header label to its backward branch) is a spin loop: it
/// sleeps (`nanosleep`), or one of its branches depends on a value read by
/// [`is_shared_read`] in the loop — waiting for a flag that another thread sets, or retrying
/// a lock (`atom.cas`) that another thread holds.
/// The dependence follows registers through the loop's instructions (twice round, for
/// values carried to the next iteration) and their guards.
fn is_spin_loop(seq: &[&Stmt<'_>]) -> bool {
    let instrs: Vec<&Instr> = seq.iter().filter_map(|s| if let Stmt::Instr(i) = s { Some(i) } else { None }).collect();
    // PTX ISA 9.7.17.2 nanosleep suspends the thread: a loop that sleeps waits for other
    // threads (a backoff loop inside a polling loop, whose poll is then not innermost).
    if instrs.iter().any(|i| i.opcode.name == "nanosleep") {
        return true;
    }
    let mut tainted: HashSet<&str> = HashSet::new();
    for i in &instrs {
        if is_shared_read(i) {
            tainted.extend(super::remat::writes(i));
        }
    }
    if tainted.is_empty() {
        return false;
    }
    for _ in 0..2 {
        for i in &instrs {
            if i.guard.as_ref().map_or(false, |g| tainted.contains(g.pred.name)) || super::remat::reads(i).iter().any(|r| tainted.contains(r)) {
                tainted.extend(super::remat::writes(i));
            }
        }
    }
    instrs.iter().any(|i| i.opcode.name == "bra" && i.guard.as_ref().map_or(false, |g| tainted.contains(g.pred.name)))
}

/// Whether a body has a spin loop (see [`yield_branches`] and [`is_spin_loop`]), such as
/// waiting for a flag that another thread of the CTA sets. On a GPU (sm_70's independent
/// thread scheduling, PTX ISA 6.4 section 3.2) the other threads go on while one spins. Run
/// thread after thread, a thread spinning for a thread that runs after it would never stop:
/// such a kernel runs under the scheduler, where the loop yields.
pub fn has_spin_loop(body: &[Stmt<'_>]) -> bool {
    !yield_branches(body, u32::MAX, usize::MAX).1.is_empty()
}

/// The spin loops ([`is_spin_loop`]) of a body for the warp path, by their header labels:
/// any innermost loop without a CTA barrier or warp collective, whatever else the body calls
/// (so every loop that [`has_spin_loop`] finds, and more), including loops whose reads are
/// warp-synchronous (`ld.volatile.shared`, a sync point of the per-thread scheduler's
/// lockstep but not a meeting on the warp path: `codegen::warp::lockstep_meet`). The warp
/// path runs a kernel with spin loops only where each is uniform (`codegen::warp::plan`).
pub fn spin_loops_warp<'a>(body: &'a [Stmt<'a>]) -> Vec<&'a str> {
    let mut seq: Vec<&'a Stmt<'a>> = Vec::new();
    super::flatten(body, &mut seq);
    innermost_loops(&seq)
        .into_iter()
        .filter(|&(h, b)| {
            let meets = seq[h..b].iter().any(|s| matches!(s, Stmt::Instr(i) if super::is_sync(i) && super::is_lockstep_access(i).is_none()));
            !meets && is_spin_loop(&seq[h..=b])
        })
        .filter_map(|(h, _)| if let Stmt::Label(l) = seq[h] { Some(l.name) } else { None })
        .collect()
}

/// A thread yields after this many backward branches taken at a yield point (iterations in
/// between run thread by thread, and each pass runs this many iterations of every thread:
/// fewer saves and restores of the loop's registers per iteration, while consecutive threads
/// still touch consecutive memory). At most LLVM's bound for unrolling loops by their maximum
/// trip count (`-unroll-max-upperbound`, 8), so that the count folds away.
pub const YIELD_EVERY: u32 = 8;

/// Emits the backward branch of a yield loop, which counts the iterations since the loop was
/// entered (or since the thread resumed in it) and goes on to `head` (the loop's header) until
/// the count reaches [`YIELD_EVERY`]. Then, while yield points are on
/// (`SyncState::yield_on`), the thread stops as at `bar.warp.sync` with its own lane as the
/// mask; it (or, with yield points off, the thread at once) goes on at `enter`, the block in
/// front of the header that sets the count to zero. A loop of at most `YIELD_EVERY` iterations
/// inside a loop of those runs, so that LLVM unrolls the inner one completely and the count
/// disappears. A spin loop (`always`) yields whether yield points are on or not: the thread
/// it waits for may be one that has not run yet. Leaves the builder in a fresh block without
/// predecessors.
pub fn yield_then_branch<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, head: BasicBlock<'ctx>, enter: BasicBlock<'ctx>, always: bool) {
    let ctx = e.ctx();
    let c = e.sync.as_ref().unwrap().yield_count.expect("a kernel with yield points has a yield count");
    let i32t = ctx.i32_type();
    let n = e.b.build_load(i32t, c, "").unwrap().into_int_value();
    let n = e.b.build_int_add(n, i32t.const_int(1, false), "").unwrap();
    e.b.build_store(c, n).unwrap();
    let due = e.b.build_int_compare(inkwell::IntPredicate::UGE, n, i32t.const_int(YIELD_EVERY as u64, false), "yield.due").unwrap();
    let y = ctx.append_basic_block(e.f, "yield.due");
    e.b.build_conditional_branch(due, y, head).unwrap();
    e.b.position_at_end(y);
    let stop = ctx.append_basic_block(e.f, "yield");
    if always {
        e.b.build_unconditional_branch(stop).unwrap();
    } else {
        let on_p = e.sync.as_ref().expect("sync kernel").yield_on;
        let on = e.b.build_load(ctx.bool_type(), on_p, "yield.on").unwrap().into_int_value();
        e.b.build_conditional_branch(on, stop, enter).unwrap();
    }
    e.b.position_at_end(stop);
    let lane = e.lane_id();
    let one = ctx.i32_type().const_int(1, false);
    let mask = e.b.build_left_shift(one, lane, "own.lane").unwrap();
    super::sync_point(e, abi::SYNC_WARP, &[(slot::MASK, mask)]);
    e.b.build_unconditional_branch(enter).unwrap();
    let dead = ctx.append_basic_block(e.f, "after.yield");
    e.b.position_at_end(dead);
}
