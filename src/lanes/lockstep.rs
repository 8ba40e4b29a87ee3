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
        if is_spin_loop(&seq, h, b) {
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
/// sleeps (`nanosleep`), or whether it goes round again or leaves depends on a value read
/// by [`is_shared_read`] in the loop — waiting for a flag that another thread sets, or
/// retrying a lock (`atom.cas`) that another thread holds — unless it is a compare-and-swap
/// retry loop ([`is_cas_retry`]), which waits for no one.
/// The dependence follows registers through the loop's instructions (round and round, for
/// values carried to the next iteration), their guards, and control: the instructions that
/// a dependent forward branch inside the loop skips depend on it too. A loop whose branch
/// on an atomic's result only skips work (a graph search's `if (atomicCAS(&level[v], -1, l)
/// == -1) count++` over a node's edges) and whose trip count does not depend on it is no
/// spin loop.
fn is_spin_loop(all: &[&Stmt<'_>], h: usize, b: usize) -> bool {
    let seq = &all[h..=b];
    let instrs: Vec<(usize, &Instr)> = seq.iter().enumerate().filter_map(|(k, s)| if let Stmt::Instr(i) = s { Some((h + k, i)) } else { None }).collect();
    // PTX ISA 9.7.17.2 nanosleep suspends the thread: a loop that sleeps waits for other
    // threads (a backoff loop inside a polling loop, whose poll is then not innermost).
    if instrs.iter().any(|(_, i)| i.opcode.name == "nanosleep") {
        return true;
    }
    if is_cas_retry(all, h, b).is_some() {
        return false;
    }
    let mut tainted: HashSet<&str> = HashSet::new();
    for (_, i) in &instrs {
        if is_shared_read(i) {
            tainted.extend(super::remat::writes(i));
        }
    }
    if tainted.is_empty() {
        return false;
    }
    let labels: HashMap<&str, usize> = all.iter().enumerate().filter_map(|(k, s)| if let Stmt::Label(l) = s { Some((l.name, k)) } else { None }).collect();
    let target = |i: &Instr| -> Option<usize> {
        match i.operands.first() {
            Some(Operand::Name(l, None)) => labels.get(l.name).copied(),
            _ => None,
        }
    };
    // Forward ranges (branch, target) inside the loop that a dependent branch skips.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let depends = |k: usize, i: &Instr, tainted: &HashSet<&str>, ranges: &[(usize, usize)]| {
        ranges.iter().any(|&(a, z)| a < k && k < z) || i.guard.as_ref().map_or(false, |g| tainted.contains(g.pred.name)) || super::remat::reads(i).iter().any(|r| tainted.contains(r))
    };
    loop {
        let (n_taint, n_ranges) = (tainted.len(), ranges.len());
        for &(k, i) in &instrs {
            if !depends(k, i, &tainted, &ranges) {
                continue;
            }
            tainted.extend(super::remat::writes(i));
            if i.opcode.name == "bra" {
                if let Some(t) = target(i).filter(|&t| k < t && t <= b) {
                    if !ranges.contains(&(k, t)) {
                        ranges.push((k, t));
                    }
                }
            }
        }
        if tainted.len() == n_taint && ranges.len() == n_ranges {
            break;
        }
    }
    // A dependent way back to the header or out of the loop.
    instrs.iter().any(|&(k, i)| {
        let leaves = match i.opcode.name {
            "bra" => target(i).map_or(true, |t| t <= h || t > b),
            "brx" | "ret" | "exit" | "trap" => true,
            _ => false,
        };
        leaves && depends(k, i, &tainted, &ranges)
    })
}

/// Whether the innermost loop `all[h..=b]` is a compare-and-swap retry loop, the lock-free
/// update that CUDA's `atomicCAS` idiom compiles to (`old = *p; do { assumed = old; old =
/// atomicCAS(p, assumed, f(assumed)); } while (old != assumed);`, also LLVM's expansion of
/// atomic read-modify-writes that PTX lacks):
/// - its backward branch `b` is its only way back to the header (no other branch reaches
///   the header from after it, none enters the loop past the header, no `brx`);
/// - an `atom.cas` runs in every iteration that reaches `b` (straight-line code from it to
///   `b`), and `b` goes back only when that CAS failed: `b` is guarded by "failed", or an
///   exit taken on "succeeded" stands between the test and `b` (`while (v > old) { ...; if
///   (old == assumed) break; }`). The test is `setp.eq`/`setp.ne` of the CAS's result and
///   its compare operand (PTX ISA 9.7.12.5 atom: the old value, which equals the compare
///   operand exactly when the swap happened);
/// - the CAS's compare operand is, at every iteration after the first, the value the
///   location held: the loop writes it only with `mov cmp, old` after the test, or with a
///   load from the CAS's own address on the way from the header to the CAS.
///
/// Such a loop goes round again only when another swap on the location succeeded since
/// this thread last read it, so among the threads running it some thread completes each
/// round: it waits for no thread that is not running. The warp path runs it as any loop
/// whose lanes leave at different times (the CAS lane by lane under the loop's mask; in
/// every round the first lane whose compare value is current swaps), and the per-thread
/// path runs it without yielding. Waiting for a lock (`atom.cas` with a constant compare
/// operand: it succeeds only after another thread releases the lock) is not such a loop.
fn is_cas_retry(all: &[&Stmt<'_>], h: usize, b: usize) -> Option<usize> {
    fn name<'a>(op: Option<&Operand<'a>>) -> Option<&'a str> {
        if let Some(Operand::Name(id, None)) = op { Some(id.name) } else { None }
    }
    let (Stmt::Label(head), Stmt::Instr(back)) = (all[h], all[b]) else { return None };
    let instr = |k: usize| if let Stmt::Instr(i) = all[k] { Some(i) } else { None };
    let writes = |k: usize, r: &str| instr(k).map_or(false, |i| super::remat::writes(i).contains(&r));
    // Control: one way back (the branch `b`), one way in (the header).
    let inner: HashSet<&str> = all[h + 1..=b].iter().filter_map(|s| if let Stmt::Label(l) = s { Some(l.name) } else { None }).collect();
    let outside = |t: &str| t != head.name && !inner.contains(t);
    for (k, s) in all.iter().enumerate() {
        match s {
            Stmt::BranchTargets { .. } => return None,
            Stmt::Instr(i) if i.opcode.name == "brx" && (h..=b).contains(&k) => return None,
            Stmt::Instr(i) if i.opcode.name == "bra" => {
                let Some(t) = name(i.operands.first()) else { return None };
                if (t == head.name && k > h && k != b) || (inner.contains(t) && !(h..=b).contains(&k)) {
                    return None;
                }
            }
            _ => {}
        }
    }
    if back.opcode.name != "bra" || name(back.operands.first()) != Some(head.name) {
        return None;
    }
    // The CAS: the last `atom.cas` before `b`, with straight-line code from it to `b` (no
    // label; branches only guarded ones that leave the loop).
    let Some(c) = (h + 1..b).rev().find(|&k| instr(k).map_or(false, |i| i.opcode.name == "atom" && i.has_mod("cas"))) else { return None };
    let cas = instr(c).unwrap();
    let (Some(old), Some(Operand::Mem(addr)), Some(expected)) = (name(cas.operands.first()), cas.operands.get(1), name(cas.operands.get(2))) else { return None };
    if cas.guard.is_some() || cas.operands.len() != 4 || old == expected {
        return None;
    }
    for k in c + 1..b {
        match all[k] {
            Stmt::Label(_) => return None,
            Stmt::Instr(i) if matches!(i.opcode.name, "bra" | "brx" | "call" | "ret" | "exit" | "trap") => {
                if i.opcode.name != "bra" || i.guard.is_none() || !name(i.operands.first()).map_or(false, outside) {
                    return None;
                }
            }
            _ => {}
        }
        if writes(k, old) {
            return None;
        }
    }
    // Tests of the swap: `setp.{eq,ne}` of `old` and `expected` (either order) on integers,
    // by their position and the predicate's value when the CAS failed.
    let mut failed_when: Vec<(usize, &str, bool)> = Vec::new();
    for k in c + 1..b {
        let Some(t) = instr(k) else { continue };
        let int = t.mods.iter().any(|m| matches!(*m, "b16" | "b32" | "b64" | "s16" | "s32" | "s64" | "u16" | "u32" | "u64"));
        let pair = (name(t.operands.get(1)), name(t.operands.get(2)));
        let compares = pair == (Some(old), Some(expected)) || pair == (Some(expected), Some(old));
        // `expected` must still hold the compare operand here.
        let kept = !(c + 1..k).any(|j| writes(j, expected));
        if t.opcode.name == "setp" && t.guard.is_none() && int && t.operands.len() == 3 && compares && kept {
            let Some(p) = name(t.operands.first()) else { continue };
            match t.mods.first() {
                Some(&"ne") => failed_when.push((k, p, true)),
                Some(&"eq") => failed_when.push((k, p, false)),
                _ => {}
            }
        }
    }
    // The predicate `p` of test `s`, read at `k`, still holds the test's value.
    let holds = |s: usize, p: &str, k: usize| !(s + 1..k).any(|j| writes(j, p));
    let guard_is = |i: &Instr<'_>, failed: bool| {
        i.guard.map_or(false, |g| failed_when.iter().any(|&(s, p, f)| g.pred.name == p && (g.negated != f) == failed && holds(s, p, b)))
    };
    let back_on_failure = guard_is(back, true);
    let exit_on_success = (c + 1..b).any(|k| {
        instr(k).map_or(false, |i| {
            i.opcode.name == "bra" && name(i.operands.first()).map_or(false, outside) && i.guard.map_or(false, |g| failed_when.iter().any(|&(s, p, f)| s < k && g.pred.name == p && (g.negated != f) == false && holds(s, p, k)))
        })
    });
    if !back_on_failure && !exit_on_success {
        return None;
    }
    // The compare operand renewed: after the test, only by `mov expected, old`; from the
    // header to the CAS, only by an unguarded load of the CAS's address (its base register
    // unchanged in the loop) that every iteration runs (no label before it).
    let first_test = failed_when.iter().map(|t| t.0).min().unwrap_or(b);
    let mut renewed = false;
    for k in h + 1..b {
        let Some(i) = instr(k) else { continue };
        if k == c || !super::remat::writes(i).contains(&expected) {
            continue;
        }
        if k > c {
            let is_mov = i.opcode.name == "mov" && i.guard.is_none() && k > first_test && name(i.operands.get(1)) == Some(old) && super::remat::writes(i).len() == 1;
            if !is_mov {
                return None;
            }
        } else {
            let same_addr = matches!(i.operands.get(1), Some(Operand::Mem(a)) if a.base.map(|x| x.name) == addr.base.map(|x| x.name) && a.offset == addr.offset);
            let straight = all[h + 1..k].iter().all(|s| !matches!(s, Stmt::Label(_)));
            let base_kept = addr.base.map_or(true, |x| !(h..=b).any(|j| writes(j, x.name)));
            if i.opcode.name != "ld" || i.guard.is_some() || !same_addr || !straight || !base_kept {
                return None;
            }
        }
        renewed = true;
    }
    renewed.then_some(c)
}

/// The compare-and-swap retry loops of a body ([`is_cas_retry`]): each loop's CAS.
pub fn cas_retry_loops<'a>(body: &'a [Stmt<'a>]) -> Vec<*const Instr<'a>> {
    let mut seq: Vec<&'a Stmt<'a>> = Vec::new();
    super::flatten(body, &mut seq);
    innermost_loops(&seq)
        .into_iter()
        .filter_map(|(h, b)| is_cas_retry(&seq, h, b))
        .filter_map(|c| if let Stmt::Instr(i) = seq[c] { Some(i as *const Instr<'a>) } else { None })
        .collect()
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
            !meets && is_spin_loop(&seq, h, b)
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
