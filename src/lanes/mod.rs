//! Lane expansion: how the threads of a CTA run on one CPU thread.
//!
//! Kernels without synchronization run each thread to completion in z/y/x loops (set up in
//! `codegen::func`), which LLVM vectorizes. Kernels with synchronization points — barriers
//! and warp collectives, in any control flow, divergent or not — become a scheduler of
//! passes, each a z/y/x loop over the threads:
//!
//! ```text
//! region_k: for t in threads:                        (a region copy, see `begin_copy`;
//!                                                     entered when every thread is runnable)
//!             reload live registers from columns; code of the body from sync site k ...
//!             ... to the thread's next sync point j: operands to columns, site[t] = j,
//!                 save written live registers; continue
//!             ... or to its end: site[t] = EXITED; continue
//! resolve:  all site[t] equal to one j != 0, and j completes inline?
//!             yes: complete the collective from the columns (shfl), goto region_j
//!             no:  write each stopped thread's SyncSlot (and the state of those that
//!                  exited in the pass); r = host.resolve(cta)
//!                  (runtime::warp); copy results back to the columns;
//!                  r == UNIFORM+k and every thread runnable ? goto region_k
//!                  : r != DONE ? goto sched : return
//! sched:    the general loop: the same, with a switch on slot[t].resume, skipping
//!           (site[t] = 0) a thread whose slot is not runnable unless all_runnable
//! ```
//!
//! The first pass is `region_0` (every thread starts at the beginning of the body).
//!
//! Shortcuts of the fast path (`finish_scheduler`): a region copy whose threads can only
//! stop at one site `j` (or only end) skips the SITE column and its scan and goes straight
//! to `j`'s completion (or ends the CTA); a copy of a shuffle site that cannot reach that
//! site again computes each thread's shuffle result where it resumes, from the site's own
//! operand column, instead of a completion loop; and a copy where induction registers
//! (`remat::Analysis::inductions`) are read first checks that every thread's offset is the
//! same and then uses one scalar for all (else the pass runs in the general loop, every
//! thread resuming at the copy's site: `force.site`).
//!
//! A thread's `.local` variables live in its frame. Its registers are allocas, which LLVM
//! promotes to SSA values between sync points; at each sync point the registers live across
//! it (`live`) are saved to columns (`col`: one array per register, lanes consecutive) and
//! reloaded where the thread resumes, except those recomputed where they are read
//! (`remat`: pure functions of the thread index, launch shape, parameters and constants). A `.func` that synchronizes is inlined into the kernel
//! (`sync_funcs`, `FnEmitter::inline_call`), so that its sync points return to this
//! scheduler too. `resolve` completes each collective whose participants have all arrived
//! (the lanes of `membermask`; for the deprecated non-`.sync` forms and `activemask`, the
//! lanes waiting at the same instruction once the whole warp is blocked), releases barriers
//! whose expected count has arrived, and reports a deadlock (naming the instruction's line
//! and a waiting thread) when nothing can progress. The thread loops are marked parallel
//! for LLVM's vectorizer (`passes::parallel_lanes`).

use crate::codegen::abi::{self, field, slot};
use crate::codegen::FnEmitter;
use crate::syntax::ast::{Instr, Stmt};
use crate::syntax::diag::Diagnostic;

pub mod live;
pub mod lockstep;
pub mod remat;
use inkwell::basic_block::BasicBlock;
use inkwell::values::IntValue;
use inkwell::{AddressSpace, IntPredicate};

/// The statements of a body with nested blocks spliced in, in order.
pub(crate) fn flatten<'a>(body: &'a [Stmt<'a>], out: &mut Vec<&'a Stmt<'a>>) {
    for s in body {
        match s {
            Stmt::Block(b, _) => flatten(b, out),
            _ => out.push(s),
        }
    }
}

/// Whether an instruction is a synchronization point (a volatile shared access may be one:
/// [`is_lockstep_access`]).
pub fn is_sync(i: &Instr) -> bool {
    is_lockstep_access(i).is_some()
        || (matches!(i.opcode.name, "bar" | "barrier" | "shfl" | "vote" | "match" | "activemask" | "redux") && !is_cluster_arrive(i))
        || is_tcgen05_meet(i)
        || (i.opcode.name == "wmma" && i.mods.first() == Some(&"mma"))
        || i.opcode.name == "mma"
        || i.opcode.name == "ldmatrix"
        || i.opcode.name == "stmatrix"
        || crate::codegen::warp_collective::wgmma_reg_a(i)
}

/// `tcgen05.ld`/`tcgen05.st` (PTX ISA 9.0 9.7.16.8.3-4, `.sync.aligned`): the warp moves the
/// cells of its lanes together, so one lane may read what another stored; the per-thread
/// scheduler has the lanes meet first (`codegen::sync`), as at `bar.warp.sync`. (On the warp
/// path the lanes of a warp run each instruction together already.) So do
/// `tcgen05.wait::ld`/`wait::st` (9.7.16.8.5, `.sync.aligned`): the warp's loads and stores
/// are complete after them, every lane's, for what one thread issues next (a
/// `tcgen05.shift` or `mma` of the cells the warp just stored).
pub fn is_tcgen05_meet(i: &Instr) -> bool {
    i.opcode.name == "tcgen05" && matches!(i.mods.first(), Some(&"ld") | Some(&"st") | Some(&"wait::ld") | Some(&"wait::st"))
}

/// `barrier.cluster.arrive` (PTX ISA 8.x barrier.cluster): the thread's arrival, which lets it
/// go on; the cluster barrier is `barrier.cluster.wait`, where the thread waits until every
/// thread of the cluster has arrived. Here the wait counts as the arrival of every thread
/// that reaches it (the CTA's threads meet there, then the cluster's CTAs: `codegen::sync`),
/// and the arrive itself is no synchronization point.
pub fn is_cluster_arrive(i: &Instr) -> bool {
    i.opcode.name == "barrier" && i.has_mod("cluster") && i.has_mod("arrive")
}

/// For a volatile access of shared memory (`ld.volatile`/`st.volatile` with `.shared` or a
/// generic address): whether it stores. Warp-synchronous code relies on the lanes of a warp
/// running such accesses in lockstep (PTX ISA 6.4 section 3.2: before sm_70 a warp shares
/// one program counter; the CUDA SDK's reductions and warp scans end in a `volatile` shared
/// tail without barriers, and on a GPU they give the lockstep result). So before a volatile
/// store, and before a volatile load that follows one, the lanes of a warp that get there
/// meet first (`codegen::sync`, a `bar.warp.sync` whose members are the lanes at the
/// instruction once the warp is blocked, as for the deprecated `shfl`): every lane's
/// accesses of one step happen before any lane's of the next. Plain shared and generic
/// accesses count as steps too (a plain store before a volatile load), but do not meet.
pub fn is_lockstep_access(i: &Instr) -> Option<bool> {
    if matches!(i.opcode.name, "ld" | "st") && i.has_mod("volatile") {
        shared_access(i)
    } else {
        None
    }
}

/// For an access that may reach shared memory (`ld`, `st`, `atom`, `red` with `.shared` or a
/// generic address): whether it writes.
pub fn shared_access(i: &Instr) -> Option<bool> {
    let store = match i.opcode.name {
        "ld" => false,
        "st" | "atom" | "red" => true,
        _ => return None,
    };
    let other_space = i.mods.iter().any(|m| matches!(*m, "global" | "local" | "const" | "param"));
    (!other_space).then_some(store)
}

/// Whether a body has a sync point other than a volatile shared access.
fn has_strict_sync(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Instr(i) => is_sync(i) && is_lockstep_access(i).is_none(),
        Stmt::Block(b, _) => has_strict_sync(b),
        _ => false,
    })
}

pub fn has_sync(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Instr(i) => is_sync(i),
        Stmt::Block(b, _) => has_sync(b),
        _ => false,
    })
}

/// The function a direct `call` names (`call (r), f, (a);`), if `i` is one.
pub(crate) fn callee<'a>(i: &Instr<'a>) -> Option<&'a str> {
    if i.opcode.name != "call" {
        return None;
    }
    let rest = match i.operands.first() {
        Some(crate::syntax::ast::Operand::List(..)) => &i.operands[1..],
        _ => &i.operands[..],
    };
    match rest.first() {
        Some(crate::syntax::ast::Operand::Name(f, _)) => Some(f.name),
        _ => None,
    }
}

/// Whether `i` calls one of the host services that CUDA programs declare as external
/// functions (`vprintf`, `__assertfail`, `malloc`, `free`): code generation makes them calls
/// into the runtime, which never synchronize with other threads.
pub(crate) fn calls_host_service(i: &Instr) -> bool {
    callee(i).map_or(false, is_host_service)
}

/// Whether `name` is one of the host services of [`calls_host_service`].
pub(crate) fn is_host_service(name: &str) -> bool {
    matches!(name, "vprintf" | "__assertfail" | "malloc" | "free")
}

/// The direct callees of a body (`call ... f, ...`).
pub(crate) fn callees<'a>(body: &[Stmt<'a>], out: &mut Vec<&'a str>) {
    for s in body {
        match s {
            Stmt::Instr(i) if i.opcode.name == "call" => {
                if let Some(f) = callee(i) {
                    out.push(f);
                }
            }
            Stmt::Block(b, _) => callees(b, out),
            _ => {}
        }
    }
}

/// The `.func`s of a module that synchronize, directly or through the functions they call.
/// A kernel calling one of them runs under the scheduler, and the call is inlined into the
/// kernel (the sync point must return to the kernel's scheduler loop).
pub fn sync_funcs<'a>(ast: &crate::syntax::ast::Module<'a>) -> std::collections::HashSet<&'a str> {
    use crate::syntax::ast::Item;
    let funcs: Vec<(&'a str, bool, Vec<&'a str>)> = ast
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Func(f) if !f.entry => f.body.as_ref().map(|b| {
                let mut c = Vec::new();
                callees(b, &mut c);
                // The host services (`printf`, a failed `assert`) synchronize nothing.
                c.retain(|f| !is_host_service(f));
                // Volatile shared accesses (`is_lockstep_access`) count in leaf functions
                // (a `warpReduce(volatile int *s, int t)` helper); a function with calls
                // keeps them as plain accesses rather than becoming impossible to call
                // recursively or through a pointer.
                // A function with a spin loop (waiting for another thread of the CTA) is
                // inlined too: the loop yields to the scheduler there.
                (f.name.name, has_strict_sync(b) || (c.is_empty() && has_sync(b)) || lockstep::has_spin_loop(b), c)
            }),
            _ => None,
        })
        .collect();
    let mut set: std::collections::HashSet<&'a str> = funcs.iter().filter(|f| f.1).map(|f| f.0).collect();
    loop {
        let before = set.len();
        for (name, _, calls) in &funcs {
            if !set.contains(name) && calls.iter().any(|c| set.contains(c)) {
                set.insert(name);
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Whether a body calls, directly or through the functions those call, a `.func` of `ast`
/// that has a spin loop (`lockstep::has_spin_loop`; such functions are inlined, and their
/// spin loops yield).
pub fn calls_spin_loop(body: &[Stmt], ast: &crate::syntax::ast::Module) -> bool {
    use crate::syntax::ast::Item;
    let mut stack = Vec::new();
    callees(body, &mut stack);
    let mut seen = std::collections::HashSet::new();
    while let Some(name) = stack.pop() {
        if !seen.insert(name) {
            continue;
        }
        let def = ast.items.iter().find_map(|it| match it {
            Item::Func(f) if f.name.name == name => f.body.as_ref(),
            _ => None,
        });
        if let Some(b) = def {
            if lockstep::has_spin_loop(b) {
                return true;
            }
            callees(b, &mut stack);
        }
    }
    false
}

/// Whether a kernel body synchronizes, directly or through a call to one of `funcs`.
pub fn needs_scheduler(body: &[Stmt], funcs: &std::collections::HashSet<&str>) -> bool {
    let mut c = Vec::new();
    callees(body, &mut c);
    has_sync(body) || c.iter().any(|f| funcs.contains(f)) || lockstep::has_spin_loop(body)
}

/// The LLVM type of `SyncSlot`.
pub fn slot_type<'ctx>(c: &'ctx inkwell::context::Context) -> inkwell::types::StructType<'ctx> {
    let i32t = c.i32_type();
    let i64t = c.i64_type();
    c.struct_type(
        &[i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i64t.into(), i32t.into(), i32t.into(), i64t.into(), i32t.into(), i32t.into()],
        false,
    )
}

/// A loop over the threads of the CTA (see the module comment): `entry` starts it at thread
/// 0; `dispatch` is where a runnable thread enters its code (the caller adds the
/// terminator); `next` advances to the next thread; `exit` marks the thread exited.
#[derive(Clone, Copy)]
pub struct ThreadLoop<'ctx> {
    pub entry: BasicBlock<'ctx>,
    pub dispatch: BasicBlock<'ctx>,
    pub next: BasicBlock<'ctx>,
    pub exit: BasicBlock<'ctx>,
    /// Where the loop goes once every thread had its turn (on to `after`).
    pub done: BasicBlock<'ctx>,
    pub tid: [IntValue<'ctx>; 3],
    /// The thread index (i64), its frame and its slot.
    pub t64: IntValue<'ctx>,
    /// The thread index in i32 (lane arithmetic in 32-bit vector lanes).
    pub t32: IntValue<'ctx>,
    pub frame_t: inkwell::values::PointerValue<'ctx>,
    pub slot_t: inkwell::values::PointerValue<'ctx>,
}

/// Builds a thread loop that goes to `after` once every thread has had its turn: loops over
/// `%tid.z`, `%tid.y` and `%tid.x` (the innermost one is the loop LLVM vectorizes; it is
/// marked parallel, see `passes::parallel_lanes`). `checked`: a thread runs only if its
/// slot says it is runnable (unless every thread was, `all_run`); region copies are entered
/// only when every thread of the CTA is runnable, so they do not check, and their loops stay
/// free of per-thread conditions.
fn thread_loop<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, after: BasicBlock<'ctx>, checked: bool) -> ThreadLoop<'ctx> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let i64t = ctx.i64_type();
    let f = e.f;
    let st = e.sync.as_ref().expect("sync kernel");
    let (nt, slots) = (st.ntid, st.slots);
    let entry = ctx.append_basic_block(f, name);
    let zhead = ctx.append_basic_block(f, &format!("{name}.z"));
    let yhead = ctx.append_basic_block(f, &format!("{name}.y"));
    let xpre = ctx.append_basic_block(f, &format!("{name}.row"));
    let head = ctx.append_basic_block(f, &format!("{name}.head"));
    let fast = ctx.append_basic_block(f, &format!("{name}.all"));
    let dispatch = ctx.append_basic_block(f, &format!("{name}.dispatch"));
    let next = ctx.append_basic_block(f, &format!("{name}.next"));
    let ylatch = ctx.append_basic_block(f, &format!("{name}.ynext"));
    let zlatch = ctx.append_basic_block(f, &format!("{name}.znext"));
    let exit = ctx.append_basic_block(f, &format!("{name}.exit"));
    let done = ctx.append_basic_block(f, &format!("{name}.done"));
    let b = ctx.create_builder();
    b.position_at_end(done);
    b.build_unconditional_branch(after).unwrap();
    b.position_at_end(entry);
    let all_run = b.build_load(ctx.bool_type(), st.all_run, "all.runnable").unwrap().into_int_value();
    b.build_unconditional_branch(zhead).unwrap();
    let zv = index_loop(&b, [zhead, entry, zlatch], nt[2], yhead, done, "tid.z");
    let yv = index_loop(&b, [yhead, zhead, ylatch], nt[1], xpre, zlatch, "tid.y");
    // x loop: thread t = (z * ntid.y + y) * ntid.x + x
    b.position_at_end(xpre);
    let zy = exact(b.build_int_add(exact(b.build_int_mul(zv, nt[1], "").unwrap()), yv, "").unwrap());
    let row = exact(b.build_int_mul(zy, nt[0], "").unwrap());
    b.build_unconditional_branch(head).unwrap();
    let xv = index_loop(&b, [head, xpre, next], nt[0], fast, ylatch, "tid.x");
    // Is thread t runnable? After a pass completed in generated code, every thread is.
    b.position_at_end(fast);
    // In i64 from the parts: `zext(row + x)` loses its `nuw` when LLVM hoists or speculates
    // the add, and the columns then look like gathers and scatters to the vectorizer.
    let row64 = b.build_int_z_extend(row, i64t, "").unwrap();
    let x64 = b.build_int_z_extend(xv, i64t, "").unwrap();
    let t64 = exact(b.build_int_add(row64, x64, "t").unwrap());
    let t32 = exact(b.build_int_add(row, xv, "t32").unwrap());
    let slot_t = unsafe { b.build_in_bounds_gep(slot_type(ctx), slots, &[t64], "slot").unwrap() };
    if checked {
        let check = ctx.append_basic_block(f, &format!("{name}.check"));
        b.build_conditional_branch(all_run, dispatch, check).unwrap();
        b.position_at_end(check);
        let runnable = slot_runnable(&b, ctx, slots, t64).1;
        let skip = ctx.append_basic_block(f, &format!("{name}.skip"));
        b.build_conditional_branch(runnable, dispatch, skip).unwrap();
        // A thread that does not run in this pass stops at no site (column SITE, read after
        // the pass).
        b.position_at_end(skip);
        b.build_store(col_ptr(&b, st, ctx, col::SITE, t64), i32t.const_zero()).unwrap();
        b.build_unconditional_branch(next).unwrap();
    } else {
        b.build_unconditional_branch(dispatch).unwrap();
    }
    let frame_t = loop_tail(e, &b, [dispatch, exit, next], t64, t64);
    ThreadLoop { entry, dispatch, next, exit, done, tid: [xv, yv, zv], t64, t32, frame_t, slot_t }
}

/// What every thread loop ends with: in `dispatch`, the frame of thread `t` (the frame size
/// is known only after the body is emitted: it is read from a constant global that
/// `finish_scheduler` initializes, and LLVM folds the load); `exit` (ret/exit or the end of
/// the body) records in the SITE column (at column index `tc`) that the thread ended in this
/// pass, and goes to `next`, the loop's latch.
fn loop_tail<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, b: &inkwell::builder::Builder<'ctx>, [dispatch, exit, next]: [BasicBlock<'ctx>; 3], t: IntValue<'ctx>, tc: IntValue<'ctx>) -> inkwell::values::PointerValue<'ctx> {
    let ctx = e.ctx();
    let i64t = ctx.i64_type();
    let st = e.sync.as_ref().expect("sync kernel");
    b.position_at_end(dispatch);
    let fs = b.build_load(i64t, st.frame_size_global.as_pointer_value(), "fs").unwrap().into_int_value();
    let off = b.build_int_mul(t, fs, "").unwrap();
    let frame_t = unsafe { b.build_in_bounds_gep(ctx.i8_type(), st.frames, &[off], "frame").unwrap() };
    b.position_at_end(exit);
    b.build_store(col_ptr(b, st, ctx, col::SITE, tc), ctx.i32_type().const_int(col::EXITED as u64, false)).unwrap();
    b.build_unconditional_branch(next).unwrap();
    e.lane_latches.push(next);
    frame_t
}

/// Marks thread-index arithmetic `nuw nsw`: indices are below the CTA size (at most 1024), so
/// nothing wraps, and LLVM's scalar evolution then sees `zext(row + x)` as `zext(row) + x`
/// (consecutive columns and addresses, not gathers).
pub fn exact(v: IntValue<'_>) -> IntValue<'_> {
    use inkwell::values::AsValueRef;
    unsafe {
        let r = v.as_value_ref();
        if !inkwell::llvm_sys::core::LLVMIsAInstruction(r).is_null() {
            inkwell::llvm_sys::core::LLVMSetNUW(r, 1);
            inkwell::llvm_sys::core::LLVMSetNSW(r, 1);
        }
    }
    v
}

/// One loop of a thread index: `head` (entered from `pre`) goes to `inner` while the index
/// is below `n`, else to `out`; `latch` steps the index and goes back to `head`. Returns the
/// index.
pub fn index_loop<'ctx>(b: &inkwell::builder::Builder<'ctx>, [head, pre, latch]: [BasicBlock<'ctx>; 3], n: IntValue<'ctx>, inner: BasicBlock<'ctx>, out: BasicBlock<'ctx>, name: &str) -> IntValue<'ctx> {
    let i32t = n.get_type();
    let at = b.get_insert_block();
    b.position_at_end(head);
    let phi = b.build_phi(i32t, name).unwrap();
    let v = phi.as_basic_value().into_int_value();
    let more = b.build_int_compare(IntPredicate::ULT, v, n, "").unwrap();
    b.build_conditional_branch(more, inner, out).unwrap();
    b.position_at_end(latch);
    let v1 = exact(b.build_int_add(v, i32t.const_int(1, false), "").unwrap());
    b.build_unconditional_branch(head).unwrap();
    phi.add_incoming(&[(&i32t.const_zero(), pre), (&v1, latch)]);
    if let Some(bb) = at {
        b.position_at_end(bb);
    }
    v
}

/// The loops of a CTA over `%tid.z`, `%tid.y` and an inner index.
pub struct CtaLoops<'ctx> {
    pub z: IntValue<'ctx>,
    pub y: IntValue<'ctx>,
    pub inner: IntValue<'ctx>,
    /// The inner loop's body (empty) and latch.
    pub body: BasicBlock<'ctx>,
    pub latch: BasicBlock<'ctx>,
    /// After the last iteration (returns 0).
    pub done: BasicBlock<'ctx>,
}

/// Builds loops over `%tid.z` and `%tid.y` around an inner loop of `n` iterations (`%tid.x`
/// for per-thread code, the warps of a row on the warp path), entered from `setup` (the
/// builder's block), and a `cta.done` block that returns 0 after the last iteration.
pub fn cta_loops<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, setup: BasicBlock<'ctx>, n: IntValue<'ctx>, name: &str) -> CtaLoops<'ctx> {
    cta_loops_n(e, setup, n, name, None, None)
}

/// [`cta_loops`]; with `group`, the outer loop runs `%ntid.z` times `group` (the CTAs of a
/// group one after another: `codegen::warp::group_cta`); with `rows`, the middle loop runs
/// `rows` times instead of `%ntid.y` (pairs of rows: `codegen::warp`'s tile warps).
pub fn cta_loops_n<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, setup: BasicBlock<'ctx>, n: IntValue<'ctx>, name: &str, group: Option<IntValue<'ctx>>, rows: Option<IntValue<'ctx>>) -> CtaLoops<'ctx> {
    use crate::codegen::abi::field;
    let ntz = e.load_cta_u32(field::NTID, Some(2));
    let ntz = match group {
        Some(g) => e.b.build_int_mul(ntz, g, "tid.z.group").unwrap(),
        None => ntz,
    };
    let nty = match rows {
        Some(r) => r,
        None => e.load_cta_u32(field::NTID, Some(1)),
    };
    let (ctx, f) = (e.ctx(), e.f);
    let zh = ctx.append_basic_block(f, "tz.head");
    let yh = ctx.append_basic_block(f, "ty.head");
    let xh = ctx.append_basic_block(f, &format!("{name}.head"));
    let body = ctx.append_basic_block(f, name);
    let latch = ctx.append_basic_block(f, &format!("{name}.latch"));
    let yl = ctx.append_basic_block(f, "ty.latch");
    let zl = ctx.append_basic_block(f, "tz.latch");
    let done = ctx.append_basic_block(f, "cta.done");
    e.b.build_unconditional_branch(zh).unwrap();
    let z = index_loop(&e.b, [zh, setup, zl], ntz, yh, done, "tid.z");
    let y = index_loop(&e.b, [yh, zh, yl], nty, xh, zl, "tid.y");
    let inner = index_loop(&e.b, [xh, yh, latch], n, body, yl, name);
    e.b.position_at_end(done);
    e.b.build_return(Some(&ctx.i32_type().const_zero())).unwrap();
    CtaLoops { z, y, inner, body, latch, done }
}

/// Makes `l` the thread loop that the body being emitted belongs to.
fn enter_loop<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, l: &ThreadLoop<'ctx>) {
    e.tid = l.tid;
    e.exit_bb = l.exit;
    e.ret_bb = l.exit;
    let st = e.sync.as_mut().unwrap();
    st.frame_t = l.frame_t;
    st.t64 = l.t64;
    st.next_bb = l.next;
    st.frame_b.position_at_end(l.dispatch);
}

/// Builds the scheduler of a kernel with synchronization and leaves the builder at the
/// start of the thread body of its general thread loop. The `resolve` block after each pass
/// is completed by `finish_scheduler`, once every sync site is known.
pub fn setup_scheduler<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, setup: BasicBlock<'ctx>, kname: &str) -> Result<(), Diagnostic> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let i64t = ctx.i64_type();
    let pt = ctx.ptr_type(AddressSpace::default());
    let f = e.f;
    e.b.position_at_end(setup);
    let nt: Vec<IntValue> = (0..3).map(|k| e.load_cta_u32(field::NTID, Some(k))).collect();
    let nxy = e.b.build_int_mul(nt[0], nt[1], "").unwrap();
    let n = e.b.build_int_mul(nxy, nt[2], "nthreads").unwrap();
    let frames = e.cta_ptr_field(field::FRAMES);
    let slots = e.cta_ptr_field(field::SLOTS);
    let fsg = e.m.module.add_global(i64t, None, &format!("__ptxr_frame_size_{kname}"));
    fsg.set_linkage(inkwell::module::Linkage::Internal);
    fsg.set_constant(true);
    // The column area follows the per-thread frames (see `col_ptr`).
    let nt64 = e.b.build_int_z_extend(n, i64t, "nt64").unwrap();
    let stride = e.b.build_load(i64t, fsg.as_pointer_value(), "").unwrap().into_int_value();
    let aos = e.b.build_int_mul(nt64, stride, "").unwrap();
    let soa_base = unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), frames, &[aos], "columns").unwrap() };
    let all_run = e.alloca_b.build_alloca(ctx.bool_type(), "all.runnable").unwrap();
    e.b.build_store(all_run, ctx.bool_type().const_all_ones()).unwrap();
    let yield_on = e.alloca_b.build_alloca(ctx.bool_type(), "yield.on").unwrap();
    e.b.build_store(yield_on, ctx.bool_type().const_all_ones()).unwrap();
    let start = ctx.append_basic_block(f, "start");
    e.b.build_unconditional_branch(start).unwrap();
    let resolve = ctx.append_basic_block(f, "resolve");
    let done = ctx.append_basic_block(f, "cta.done");
    let body = ctx.append_basic_block(f, "thread");
    // The carry flag is thread state like a register.
    let carry = (e.carry, ctx.bool_type().into(), 1);
    let null = pt.const_null();
    e.sync = Some(crate::codegen::func::SyncState {
        frame_b: ctx.create_builder(),
        frame_t: null,
        frame_size: 0,
        frame_align: 16,
        next_bb: body,
        cases: Vec::new(),
        next_site: 1,
        body_bb: body,
        frame_size_global: fsg,
        regs: vec![carry],
        spills: Vec::new(),
        site_stores: Vec::new(),
        shfl_cols: Vec::new(),
        shfl_alias: Vec::new(),
        next_alias: None,
        last_site: 0,
        result_loads: Vec::new(),
        field_stores: Vec::new(),
        exchange_area: None,
        storage_log: Vec::new(),
        replay: None,
        copy_site: 0,
        copy_entry: None,
        nthreads: n,
        ntid: [nt[0], nt[1], nt[2]],
        frames,
        slots,
        start_bb: start,
        resolve_bb: resolve,
        fast: Vec::new(),
        done_bb: done,
        general: None,
        copies: Vec::new(),
        t64: i64t.const_zero(),
        nt64,
        soa_base,
        all_run,
        yield_on,
        yield_count: None,
        sites: Vec::new(),
        has_arrive: false,
    });
    let general = thread_loop(e, "sched", resolve, true);
    enter_loop(e, &general);
    {
        let st = e.sync.as_mut().unwrap();
        st.general = Some(general);
    }
    e.b.position_at_end(done);
    e.b.build_return(Some(&i32t.const_zero())).unwrap();
    e.b.position_at_end(body);
    Ok(())
}

/// Region copies (the fast path of the scheduler). A pass of the general thread loop
/// switches on each thread's resume point. When every thread of the CTA resumes at the same
/// point `k` — convergent code, the common case: generated code completed the collective,
/// or the runtime's `resolve` says so and no thread has exited — the next pass runs the
/// loop of region copy `k` instead: a copy of the body entered only
/// at `k`, so the loop holds just the code from `k` to the next sync points, without the
/// switch, and LLVM optimizes it as straight-line per-thread code. Registers and `.local`
/// variables are the same storage in every copy (`Storage` replay), and a thread may leave
/// one copy and come back in another or in the general loop.
///
/// Copies cost compile time (one body per sync site), so kernels with many sites or a
/// large body keep only the general loop. So do kernels with warp matrix instructions
/// (`wmma`, `mma`, `ldmatrix`): their time goes to the matrix arithmetic, not to the
/// dispatch, and copies only multiply their code (NVRTC's wmma GEMMs, 1024^3, same run:
/// 0.96 s to compile and 0.77 s to run with copies, 0.58 s and 0.76 s without).
pub const MAX_COPY_SITES: u32 = 24;
pub const MAX_COPY_INSTRUCTIONS: usize = 60_000;

/// The number of sync sites, if region copies should be emitted for this kernel.
pub fn wants_copies(e: &FnEmitter<'_, '_, '_>) -> Option<u32> {
    // The per-thread version of a warp-path kernel is compiled without optimization.
    if e.m.thread_version {
        return None;
    }
    let st = e.sync.as_ref()?;
    let sites = st.next_site - 1;
    if sites == 0 || sites > MAX_COPY_SITES {
        return None;
    }
    if e.ir_func().blocks.iter().any(|b| b.insts.iter().any(|i| crate::codegen::warp_collective::is_matrix(i.src))) {
        return None;
    }
    let mut insts = 0usize;
    for bb in e.f.get_basic_blocks() {
        let mut i = bb.get_first_instruction();
        while let Some(x) = i {
            insts += 1;
            i = x.get_next_instruction();
        }
    }
    (insts * (sites as usize + 1) <= MAX_COPY_INSTRUCTIONS).then_some(sites)
}

/// Starts region copy `site` (0: the start of the body): a thread loop whose body the
/// caller emits next, from the returned block.
pub fn begin_copy<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, site: u32) -> BasicBlock<'ctx> {
    let resolve = e.sync.as_ref().unwrap().resolve_bb;
    let name = format!("region{site}");
    let l = thread_loop(e, &name, resolve, false);
    enter_loop(e, &l);
    let start = e.ctx().append_basic_block(e.f, &format!("{name}.body"));
    let st = e.sync.as_mut().unwrap();
    st.replay = Some(0);
    st.next_site = 1;
    st.copy_site = site;
    st.copy_entry = if site == 0 { Some(start) } else { None };
    st.fast.push((site, l));
    start
}

/// Ends the current region copy: its dispatch enters at its site's resume block.
pub fn end_copy(e: &mut FnEmitter<'_, '_, '_>) {
    let st = e.sync.as_mut().unwrap();
    let dispatch = st.fast.last().unwrap().1.dispatch;
    let entry = st.copy_entry.expect("a region copy passes its own site");
    st.replay = None;
    let l = st.fast.last().unwrap().1;
    st.copies.push((entry, l.next, l.exit));
    let b = e.ctx().create_builder();
    b.position_at_end(dispatch);
    b.build_unconditional_branch(entry).unwrap();
}

/// What a sync site asks of the runtime: its kind and line, the fields that are the same for
/// every thread (constants), and the fields each thread writes to its column.
pub struct SiteInfo {
    pub kind: u32,
    pub line: u32,
    pub consts: Vec<(u32, u64)>,
    pub cols: Vec<u32>,
}

/// The column area. Registers that live across sync points, and what a thread hands to a
/// collective, are kept as columns (structure of arrays): column `off` holds thread `t`'s
/// `size`-byte value at `columns + off * nthreads + t * size`, where `columns` follows the
/// per-thread frames (`.local` variables, which keep thread-contiguous addresses). Lanes of
/// a warp are then consecutive in memory, for the collectives completed in generated code
/// and for loops over threads that LLVM vectorizes.
///
/// The fixed columns come first (byte offset per thread, size); register columns follow.
///
/// Every operand and result of a collective is 32 bits wide except the `a` of
/// `match.sync.b64`, whose upper half goes to `A_HI` (written for `match` sites only).
mod col {
    pub const A: (u32, u32) = (0, 4);
    pub const A_HI: (u32, u32) = (4, 4);
    pub const RESULT: (u32, u32) = (8, 4);
    pub const SITE: (u32, u32) = (12, 4);
    pub const B: (u32, u32) = (16, 4);
    pub const C: (u32, u32) = (20, 4);
    pub const MASK: (u32, u32) = (24, 4);
    pub const BAR_ID: (u32, u32) = (28, 4);
    pub const BAR_COUNT: (u32, u32) = (32, 4);
    pub const PRED: (u32, u32) = (36, 4);
    pub const MODE: (u32, u32) = (40, 4);
    pub const FLAGS: (u32, u32) = (44, 4);
    pub const FIXED: u32 = 48;
    /// The SITE of a thread that ended in the pass (its slot says so once the runtime is
    /// asked; after passes completed in generated code, nobody looks).
    pub const EXITED: u32 = u32::MAX;
}

/// The column of a slot field that a sync point hands over.
fn col_of(fld: u32) -> (u32, u32) {
    match fld {
        slot::A => col::A,
        slot::B => col::B,
        slot::C => col::C,
        slot::MASK => col::MASK,
        slot::BAR_ID => col::BAR_ID,
        slot::BAR_COUNT => col::BAR_COUNT,
        slot::MODE => col::MODE,
        slot::FLAGS => col::FLAGS,
        _ => unreachable!("slot field {fld} is not an operand"),
    }
}

/// Thread `t`'s element of the column at `off` (bytes per thread).
fn col_ptr<'ctx>(b: &inkwell::builder::Builder<'ctx>, st: &crate::codegen::func::SyncState<'ctx>, ctx: &'ctx inkwell::context::Context, (off, size): (u32, u32), t: IntValue<'ctx>) -> inkwell::values::PointerValue<'ctx> {
    let i64t = ctx.i64_type();
    let start = b.build_int_mul(st.nt64, i64t.const_int(off as u64, false), "").unwrap();
    let at = b.build_int_mul(t, i64t.const_int(size as u64, false), "").unwrap();
    let i = b.build_int_add(start, at, "").unwrap();
    unsafe { b.build_in_bounds_gep(ctx.i8_type(), st.soa_base, &[i], "col").unwrap() }
}

/// A loop `for t in 0..n` (i64) emitted from `b`'s block, which is left at the start of the
/// body (the caller ends it with a branch to `latch`): returns the loop's head, `t`, the
/// latch and the block after the loop.
fn count_loop<'ctx>(ctx: &'ctx inkwell::context::Context, f: inkwell::values::FunctionValue<'ctx>, b: &inkwell::builder::Builder<'ctx>, n: IntValue<'ctx>, name: &str) -> (BasicBlock<'ctx>, IntValue<'ctx>, BasicBlock<'ctx>, BasicBlock<'ctx>) {
    let i64t = ctx.i64_type();
    let pre = b.get_insert_block().unwrap();
    let head = ctx.append_basic_block(f, &format!("{name}.head"));
    let body = ctx.append_basic_block(f, &format!("{name}.body"));
    let latch = ctx.append_basic_block(f, &format!("{name}.latch"));
    let exit = ctx.append_basic_block(f, &format!("{name}.exit"));
    b.build_unconditional_branch(head).unwrap();
    b.position_at_end(head);
    let t = b.build_phi(i64t, "t").unwrap();
    let tv = t.as_basic_value().into_int_value();
    let more = b.build_int_compare(IntPredicate::ULT, tv, n, "").unwrap();
    b.build_conditional_branch(more, body, exit).unwrap();
    b.position_at_end(latch);
    let t1 = b.build_int_add(tv, i64t.const_int(1, false), "").unwrap();
    b.build_unconditional_branch(head).unwrap();
    t.add_incoming(&[(&i64t.const_zero(), pre), (&t1, latch)]);
    b.position_at_end(body);
    (head, tv, latch, exit)
}

/// Thread `t`'s slot, and whether the slot says the thread is runnable.
fn slot_runnable<'ctx>(b: &inkwell::builder::Builder<'ctx>, ctx: &'ctx inkwell::context::Context, slots: inkwell::values::PointerValue<'ctx>, t: IntValue<'ctx>) -> (inkwell::values::PointerValue<'ctx>, IntValue<'ctx>) {
    let i32t = ctx.i32_type();
    let stt = slot_type(ctx);
    let slot_t = unsafe { b.build_in_bounds_gep(stt, slots, &[t], "slot").unwrap() };
    let state_p = b.build_struct_gep(stt, slot_t, slot::STATE, "").unwrap();
    let state = b.build_load(i32t, state_p, "").unwrap().into_int_value();
    (slot_t, b.build_int_compare(IntPredicate::EQ, state, i32t.const_int(abi::SLOT_RUNNABLE as u64, false), "runnable").unwrap())
}

/// A `count_loop` over the threads that ANDs `test(t)`: returns the result, valid where the
/// builder is left (after the loop), and the loop's latch.
fn all_threads<'ctx>(ctx: &'ctx inkwell::context::Context, f: inkwell::values::FunctionValue<'ctx>, b: &inkwell::builder::Builder<'ctx>, n: IntValue<'ctx>, name: &str, test: impl FnOnce(&inkwell::builder::Builder<'ctx>, IntValue<'ctx>) -> IntValue<'ctx>) -> (IntValue<'ctx>, BasicBlock<'ctx>) {
    let pre = b.get_insert_block().unwrap();
    let (head, t, latch, after) = count_loop(ctx, f, b, n, name);
    let body = b.get_insert_block().unwrap();
    b.position_before(&head.get_first_instruction().unwrap());
    let acc = b.build_phi(ctx.bool_type(), name).unwrap();
    b.position_at_end(body);
    let accv = acc.as_basic_value().into_int_value();
    let ok = test(b, t);
    let acc1 = b.build_and(accv, ok, "").unwrap();
    b.build_unconditional_branch(latch).unwrap();
    acc.add_incoming(&[(&ctx.bool_type().const_all_ones(), pre), (&acc1, latch)]);
    b.position_at_end(after);
    (accv, latch)
}

/// A `count_loop` over the threads that are runnable in their slots, left at the start of
/// the body for such a thread: returns `t`, its slot, the latch and the block after the loop.
fn runnable_loop<'ctx>(ctx: &'ctx inkwell::context::Context, f: inkwell::values::FunctionValue<'ctx>, b: &inkwell::builder::Builder<'ctx>, st: &crate::codegen::func::SyncState<'ctx>, name: &str) -> (IntValue<'ctx>, inkwell::values::PointerValue<'ctx>, BasicBlock<'ctx>, BasicBlock<'ctx>) {
    let (_, t, latch, after) = count_loop(ctx, f, b, st.nt64, name);
    let (slot_t, runnable) = slot_runnable(b, ctx, st.slots, t);
    let body = ctx.append_basic_block(f, &format!("{name}.runnable"));
    b.build_conditional_branch(runnable, body, latch).unwrap();
    b.position_at_end(body);
    (t, slot_t, latch, after)
}

/// Whether generated code completes site `si` itself when every thread of the CTA stopped
/// there in one pass (see `finish_scheduler`).
fn completes_inline(si: &SiteInfo, has_arrive: bool) -> bool {
    let c = |f: u32| si.consts.iter().find(|x| x.0 == f).map(|x| x.1);
    match si.kind {
        // Every lane of every warp is there: each shuffle completes (9.7.8.5); bar.warp.sync
        // has nothing to compute (9.7.12.2).
        abi::SYNC_SHFL | abi::SYNC_WARP => true,
        // bar.sync/barrier.sync with the default count and a constant id, reached by every
        // thread (9.7.12.1); with bar.arrive in the kernel, arrivals counted by the runtime
        // take part, so the runtime decides.
        // Not the cluster barrier: the runtime meets the cluster's other CTAs there.
        // Nor in the checking mode, whose runtime counts barriers (`ptxr_runtime::check`).
        abi::SYNC_BAR => !has_arrive && !crate::codegen::check() && c(slot::MODE) == Some(0) && c(slot::BAR_COUNT) == Some(0) && c(slot::BAR_ID).is_some_and(|id| id != abi::CLUSTER_BARRIER as u64),
        _ => false,
    }
}

/// A collective's operand that every copy of its site reads straight from a register whose
/// every write is the same constant (`live::constants`: `mov.u32 %r8, 31` feeding the `c`
/// of each shuffle) is that constant, or undefined where the register was never written:
/// it becomes a constant of the site, and its column stores go.
fn constant_fields(st: &mut crate::codegen::func::SyncState<'_>, regs: &[inkwell::values::PointerValue<'_>], consts: &[Option<inkwell::llvm_sys::prelude::LLVMValueRef>]) {
    use inkwell::llvm_sys::core::*;
    use inkwell::values::AsValueRef;
    let index: std::collections::HashMap<_, usize> = regs.iter().enumerate().map(|(k, r)| (r.as_value_ref(), k)).collect();
    let constant = |store: &inkwell::values::InstructionValue| -> Option<u64> {
        unsafe {
            let v = LLVMGetOperand(store.as_value_ref(), 0);
            if LLVMIsALoadInst(v).is_null() {
                return None;
            }
            let c = consts[*index.get(&LLVMGetOperand(v, 0))?]?;
            if LLVMIsAConstantInt(c).is_null() || LLVMTypeOf(c) != LLVMTypeOf(v) {
                return None;
            }
            Some(LLVMConstIntGetZExtValue(c))
        }
    };
    let mut verdict: std::collections::HashMap<(u32, u32), Option<u64>> = std::collections::HashMap::new();
    for (site, fld, store) in &st.field_stores {
        let c = constant(store);
        verdict.entry((*site, *fld)).and_modify(|v| if *v != c { *v = None }).or_insert(c);
    }
    for (site, fld, store) in std::mem::take(&mut st.field_stores) {
        if let Some(Some(c)) = verdict.get(&(site, fld)) {
            store.erase_from_basic_block();
            let si = &mut st.sites[site as usize - 1];
            if let Some(k) = si.cols.iter().position(|f| *f == fld) {
                si.cols.remove(k);
                si.consts.push((fld, *c));
            }
        }
    }
}

/// Completes the scheduler once the body and its copies are emitted: saves and reloads of
/// the registers live across each sync point, the frame size, the dispatch switch of the
/// general loop, and the `resolve` block run after each pass. Returns the frame size (bytes
/// per thread of `CtaCtx::frames`).
///
/// After a pass in which every thread of the CTA stopped at the same site, and the site is
/// one that generated code completes (`completes_inline`), the collective is completed here
/// from the columns and the next pass runs that site's region copy: the runtime is not
/// called. Otherwise each stopped thread's request is written to its `SyncSlot` (from the
/// site's constants and the thread's columns), the runtime's `resolve` completes what it
/// can, the results of the threads it made runnable go back to their columns, and its
/// answer picks the next pass.
pub fn finish_scheduler(e: &mut FnEmitter<'_, '_, '_>) -> u32 {
    let cta_t = e.cta_type();
    let cta = e.cta;
    let abort_bb = e.abort_bb;
    if e.sync.is_none() {
        return 0;
    }
    // Induction registers (`remat::Analysis::inductions`): their allocas and base nodes.
    let ind_regs: Vec<(inkwell::values::PointerValue, usize)> = e.remat_induction.iter().filter_map(|(name, &n)| e.body_reg(name).map(|(p, _)| (p, n))).collect();
    // A pass of the general loop that resumes every thread at this site (0: none, each
    // thread resumes where its slot says), set when a region copy finds the offsets of its
    // induction registers unequal.
    let entry_term = e.f.get_first_basic_block().and_then(|bb| bb.get_terminator()).expect("the entry block is complete");
    e.alloca_b.position_before(&entry_term);
    let force = e.alloca_b.build_alloca(e.ctx().i32_type(), "force.site").unwrap();
    e.alloca_b.build_store(force, e.ctx().i32_type().const_zero()).unwrap();
    // Every pass ends by polling the launch's time limit (`FnEmitter::poll_cancel`): a loop
    // through sync points (a barrier, a shuffle, a lockstep yield) is bounded here, once per
    // pass rather than in the thread loops.
    let resolve = e.sync.as_ref().map(|s| s.resolve_bb).unwrap();
    let pre = e.ctx().append_basic_block(e.f, "pass.poll");
    resolve.replace_all_uses_with(&pre);
    e.b.position_at_end(pre);
    e.poll_cancel_at(0);
    e.b.build_unconditional_branch(resolve).unwrap();
    let thread_version = e.m.thread_version;
    let Some(st) = &mut e.sync else { return 0 };
    let ctx = e.m.ctx;
    let i32t = ctx.i32_type();
    let i64t = ctx.i64_type();
    let f = e.f;
    // Save and reload the registers live across each sync point (see `live`). A site's
    // copies share one set: a thread may leave in one copy and resume in another.
    let regs: Vec<_> = st.regs.iter().map(|r| r.0).collect();
    let pairs: Vec<_> = st.spills.iter().map(|s| (s.0, s.1)).collect();
    let live = live::across(f, &regs, &pairs);
    let mut per_site: std::collections::HashMap<u32, live::Bits> = std::collections::HashMap::new();
    for (s, set) in st.spills.iter().zip(&live) {
        per_site.entry(s.3).and_modify(|b| b.union_with(set)).or_insert_with(|| set.clone());
    }
    // A region copy is entered only at its site, where the live registers are reloaded: a
    // register it never writes still holds its saved value when the thread leaves again.
    let written: Vec<live::Bits> = st.copies.iter().map(|&(entry, next, exit)| live::accessed_from(&regs, entry, &[next, exit], true)).collect();
    let read: Vec<live::Bits> = st.copies.iter().map(|&(entry, next, exit)| live::accessed_from(&regs, entry, &[next, exit], false)).collect();
    let consts = live::constants(f, &regs);
    constant_fields(st, &regs, &consts);
    // The per-thread version of a warp-path kernel (`ModCtx::thread_version`, compiled
    // without optimization, no region copies) saves and reloads in one block each, shared by
    // all its sync points: every register live across any of them, so that its code grows with
    // the registers plus the sites rather than with their product (a GEMM with 64 `mma.sync`
    // has 128 sites and ~200 live registers).
    let shared = thread_version && st.copies.is_empty();
    let ind: std::collections::HashMap<usize, usize> = ind_regs.iter().filter(|_| !shared).filter_map(|(p, n)| regs.iter().position(|r| r == p).filter(|&k| consts[k].is_none()).map(|k| (k, *n))).collect();
    let mut deferred: Vec<Deferred> = Vec::new();
    // Registers that every sync point they are live across is a shuffle handing over their
    // bits (`remat::Analysis::shfl_aliases`): reloaded from that shuffle's operand column, never saved.
    let alias_at: std::collections::HashMap<u32, usize> = st.shfl_alias.iter().filter_map(|(site, p)| regs.iter().position(|r| r == p).map(|k| (*site, k))).collect();
    let mut aliased: Vec<bool> = (0..regs.len()).map(|k| !shared && alias_at.values().any(|&a| a == k) && consts[k].is_none() && !ind.contains_key(&k)).collect();
    for &(_, _, _, site, _) in &st.spills {
        for (k, a) in aliased.iter_mut().enumerate() {
            if *a && per_site[&site].has(k) && alias_at.get(&site) != Some(&k) {
                *a = false;
            }
        }
    }
    let mut offset: Vec<Option<u32>> = vec![None; regs.len()];
    let mut columns = col::FIXED + 4 * st.shfl_cols.len() as u32;
    let b = ctx.create_builder();
    let spills = st.spills.clone();
    let mut shared_blocks = None;
    if shared {
        let general = st.general.unwrap();
        let save = ctx.append_basic_block(f, "spill.save");
        let reload = ctx.append_basic_block(f, "spill.reload");
        let mut union = live::Bits::new(regs.len());
        for set in per_site.values() {
            union.union_with(set);
        }
        // Each sync point leaves for the next thread (`general.next`) through `save`.
        for &(leave, ..) in &spills {
            leave.get_terminator().unwrap().erase_from_basic_block();
            b.position_at_end(leave);
            b.build_unconditional_branch(save).unwrap();
        }
        b.position_at_end(save);
        b.build_unconditional_branch(general.next).unwrap();
        b.position_at_end(reload);
        b.build_unreachable().unwrap();
        per_site.clear();
        per_site.insert(u32::MAX, union);
        if !spills.is_empty() {
            shared_blocks = Some((save, reload));
        }
    }
    let spills: Vec<_> = match shared_blocks {
        Some((save, reload)) => vec![(save, reload, spills[0].2, u32::MAX, 0)],
        None => spills,
    };
    for &(leave, resume, t, site, copy) in &spills {
        let set = &per_site[&site];
        for (k, &(p, ty, size)) in st.regs.iter().enumerate() {
            if !set.has(k) {
                continue;
            }
            if aliased[k] {
                b.position_before(&resume.get_terminator().unwrap());
                let v = b.build_load(ty, col_ptr(&b, st, ctx, a_col(st, site), t), "").unwrap();
                b.build_store(p, v).unwrap();
                continue;
            }
            if let Some(c) = consts[k] {
                b.position_before(&resume.get_terminator().unwrap());
                let v = unsafe { inkwell::values::BasicValueEnum::new(c) };
                b.build_store(p, v).unwrap();
                continue;
            }
            let off = *offset[k].get_or_insert_with(|| {
                let off = (columns + size - 1) / size * size;
                columns = off + size;
                off
            });
            if let Some(&node) = ind.get(&k) {
                if copy == 0 || written[copy - 1].has(k) {
                    deferred.push(Deferred { block: leave, save: true, k, col: (off, size), t, copy, site, node });
                }
                deferred.push(Deferred { block: resume, save: false, k, col: (off, size), t, copy, site, node });
                continue;
            }
            // Predicates are kept as bytes: LLVM loads and stores vectors of i1 bit-packed,
            // so an i1 column would not vectorize as consecutive accesses.
            let pred = ty == ctx.bool_type().into();
            let i8t = ctx.i8_type();
            if copy == 0 || written[copy - 1].has(k) {
                b.position_before(&leave.get_terminator().unwrap());
                let cp = col_ptr(&b, st, ctx, (off, size), t);
                let v = b.build_load(ty, p, "").unwrap();
                let v = if pred { b.build_int_z_extend(v.into_int_value(), i8t, "").unwrap().into() } else { v };
                b.build_store(cp, v).unwrap();
            }
            b.position_before(&resume.get_terminator().unwrap());
            let cp = col_ptr(&b, st, ctx, (off, size), t);
            let v = if pred {
                let v = b.build_load(i8t, cp, "").unwrap().into_int_value();
                b.build_int_truncate(v, ctx.bool_type(), "").unwrap().into()
            } else {
                b.build_load(ty, cp, "").unwrap()
            };
            b.build_store(p, v).unwrap();
        }
    }
    // A multiple of the largest alignment a `.local` variable asks for (PTX ISA 5.4.5
    // `.align`): the runtime aligns the frames to it, so every thread's copy is aligned.
    let fa = st.frame_align.max(16);
    let stride = (st.frame_size + fa - 1) / fa * fa;
    st.frame_size_global.set_initializer(&i64t.const_int(stride as u64, false));
    // The general loop's dispatch: a switch on the thread's resume point.
    let general = st.general.unwrap();
    b.position_at_end(general.dispatch);
    let resume_p = b.build_struct_gep(slot_type(ctx), general.slot_t, slot::RESUME, "").unwrap();
    let r = b.build_load(i32t, resume_p, "resume").unwrap().into_int_value();
    let forced = b.build_load(i32t, force, "forced").unwrap().into_int_value();
    let is_forced = b.build_int_compare(IntPredicate::NE, forced, i32t.const_zero(), "").unwrap();
    let r = b.build_select(is_forced, forced, r, "").unwrap().into_int_value();
    let mut cases = vec![(i32t.const_zero(), st.body_bb)];
    let mut resumes = Vec::new();
    for (k, bb) in &st.cases {
        resumes.push((i32t.const_int(*k as u64, false), *bb));
    }
    match shared_blocks {
        // Every resume point goes through the shared reload block first.
        Some((_, reload)) => {
            cases.extend(resumes.iter().map(|&(k, _)| (k, reload)));
            b.build_switch(r, general.next, &cases).unwrap();
            reload.get_terminator().unwrap().erase_from_basic_block();
            b.position_at_end(reload);
            b.build_switch(r, general.next, &resumes).unwrap();
        }
        None => {
            cases.extend(resumes);
            b.build_switch(r, general.next, &cases).unwrap();
        }
    }
    // The first pass: every thread starts at the beginning of the body.
    b.position_at_end(st.start_bb);
    let first = st.fast.iter().find(|f| f.0 == 0).map_or(general.entry, |f| f.1.entry);
    b.build_unconditional_branch(first).unwrap();

    // After a pass: complete in generated code if every thread stopped at one site...
    let stt = slot_type(ctx);
    b.position_at_end(st.resolve_bb);
    b.build_store(force, i32t.const_zero()).unwrap();
    let mut loops = Vec::new();
    // A region copy entered at a site where induction registers are live first checks that
    // every thread's offset is the same; each is then one scalar for the whole pass (`uni`).
    // Otherwise the pass runs in the general loop, resuming every thread at the site.
    let mut uni: std::collections::HashMap<(usize, usize), inkwell::values::PointerValue> = std::collections::HashMap::new();
    // Where the threads of a pass of each region copy can stop.
    let reach: Vec<(Reach, Vec<(BasicBlock, u32, usize)>)> = st
        .copies
        .iter()
        .enumerate()
        .map(|(ci, &(entry, next, exit))| {
            let leaves: Vec<(BasicBlock, u32, usize)> = st.spills.iter().enumerate().filter(|(_, s)| s.4 == ci + 1).map(|(k, s)| (s.0, s.3, k)).collect();
            (copy_reach(entry, next, exit, &leaves), leaves)
        })
        .collect();
    // A region copy of a shuffle site that cannot reach that site again in its pass computes
    // each thread's result itself where the thread resumes (`shfl_one`, from the site's own
    // operand column, which nobody writes during the pass): no completion loop, no result
    // columns.
    let fused: Vec<bool> = st
        .fast
        .iter()
        .enumerate()
        .map(|(ci, (site, _))| {
            let Some(si) = st.sites.get((*site as usize).wrapping_sub(1)) else { return false };
            si.kind == abi::SYNC_SHFL && completes_inline(si, st.has_arrive) && !reach[ci].0.unknown && !reach[ci].0.sites.contains(site)
        })
        .collect();
    // Where a pass of each region copy starts (its thread loop, or the check before it).
    let mut entry_of: Vec<BasicBlock> = st.fast.iter().map(|f| f.1.entry).collect();
    for (ci, (site, l)) in st.fast.iter().enumerate() {
        let Some(set) = per_site.get(site) else { continue };
        // Only the registers the copy reads: one it just carries keeps its column.
        let mut ks: Vec<usize> = ind.keys().copied().filter(|&k| set.has(k) && read[ci].has(k) && offset[k].is_some()).collect();
        if ks.is_empty() || *site == 0 {
            continue;
        }
        ks.sort();
        let go = l.entry;
        let check = ctx.append_basic_block(f, &format!("region{site}.offsets"));
        entry_of[ci] = check;
        b.position_at_end(check);
        let mut firsts = Vec::new();
        for &k in &ks {
            let (_, ty, size) = st.regs[k];
            let c = (offset[k].unwrap(), size);
            let v0 = b.build_load(ty, col_ptr(&b, st, ctx, c, i64t.const_zero()), "offset0").unwrap();
            let a = e.alloca_b.build_alloca(ty, "offset.uniform").unwrap();
            b.build_store(a, v0).unwrap();
            uni.insert((ci + 1, k), a);
            firsts.push((c, ty, v0.into_int_value()));
        }
        let (same_off, latch) = all_threads(ctx, f, &b, st.nt64, "offsets", |b, t| {
            let mut ok = ctx.bool_type().const_all_ones();
            for &(c, ty, v0) in &firsts {
                let v = b.build_load(ty, col_ptr(b, st, ctx, c, t), "").unwrap().into_int_value();
                ok = b.build_and(ok, b.build_int_compare(IntPredicate::EQ, v, v0, "").unwrap(), "").unwrap();
            }
            ok
        });
        loops.push(latch);
        let fallback = ctx.append_basic_block(f, &format!("region{site}.offsets.differ"));
        b.build_conditional_branch(same_off, go, fallback).unwrap();
        b.position_at_end(fallback);
        if fused[ci] {
            // The general loop reads the results from their columns.
            loops.push(shfl_inline(&b, st, ctx, f, &st.sites[*site as usize - 1], a_col(st, *site)));
        }
        b.build_store(force, i32t.const_int(*site as u64, false)).unwrap();
        b.build_store(st.all_run, ctx.bool_type().const_all_ones()).unwrap();
        b.build_unconditional_branch(general.entry).unwrap();
        b.position_at_end(st.resolve_bb);
    }
    // Where did each thread stop in this pass (0: nowhere)? `same`: all at one site `first`.
    let first = b.build_load(i32t, col_ptr(&b, st, ctx, col::SITE, i64t.const_zero()), "first").unwrap().into_int_value();
    let (same, latch) = all_threads(ctx, f, &b, st.nt64, "same", |b, t| {
        let s_t = b.build_load(i32t, col_ptr(b, st, ctx, col::SITE, t), "").unwrap().into_int_value();
        b.build_int_compare(IntPredicate::EQ, s_t, first, "").unwrap()
    });
    loops.push(latch);
    let zero_site = b.build_int_compare(IntPredicate::EQ, first, i32t.const_zero(), "").unwrap();
    let exited = b.build_int_compare(IntPredicate::EQ, first, i32t.const_int(col::EXITED as u64, false), "").unwrap();
    let zero_site = b.build_or(zero_site, exited, "").unwrap();
    let fast = b.build_and(same, b.build_not(zero_site, "").unwrap(), "").unwrap();
    let inline_bb = ctx.append_basic_block(f, "complete");
    let slow = ctx.append_basic_block(f, "to.runtime");
    // Every thread was runnable at the start of the pass and none stopped: all exited.
    let all_run_p = st.all_run;
    let all_run = b.build_load(ctx.bool_type(), all_run_p, "").unwrap().into_int_value();
    let none = b.build_and(same, zero_site, "").unwrap();
    let finished = b.build_and(all_run, none, "").unwrap();
    let check = ctx.append_basic_block(f, "resolve.check");
    b.build_conditional_branch(finished, st.done_bb, check).unwrap();
    b.position_at_end(check);
    b.build_conditional_branch(fast, inline_bb, slow).unwrap();
    b.position_at_end(inline_bb);
    let mut cases = Vec::new();
    let mut complete_bb = std::collections::HashMap::new();
    for (ci, (site, _)) in st.fast.iter().enumerate() {
        let Some(si) = st.sites.get((*site as usize).wrapping_sub(1)) else { continue };
        if !completes_inline(si, st.has_arrive) {
            continue;
        }
        let bb = ctx.append_basic_block(f, &format!("complete.site{site}"));
        cases.push((i32t.const_int(*site as u64, false), bb));
        complete_bb.insert(*site, bb);
        b.position_at_end(bb);
        if si.kind == abi::SYNC_SHFL && !fused[ci] {
            loops.push(shfl_inline(&b, st, ctx, f, si, a_col(st, *site)));
        }
        b.build_store(all_run_p, ctx.bool_type().const_all_ones()).unwrap();
        b.build_unconditional_branch(entry_of[ci]).unwrap();
    }
    b.position_at_end(inline_bb);
    b.build_switch(first, slow, &cases).unwrap();
    // A region copy whose every thread can only stop at one site `j` (or only end) needs no
    // scan of the SITE column after its pass: it goes straight to `j`'s completion (or
    // ends the CTA), and its threads need not write their site.
    for (ci, (r, leaves)) in reach.iter().enumerate() {
        let to = match r.outcome() {
            Outcome::Site(j) => match complete_bb.get(&j) {
                Some(&bb) => {
                    for &(_, site, k) in leaves {
                        if site == j {
                            st.site_stores[k].erase_from_basic_block();
                        }
                    }
                    bb
                }
                None => continue,
            },
            Outcome::Exit => st.done_bb,
            Outcome::Mixed => continue,
        };
        let done = st.fast[ci].1.done;
        done.get_terminator().unwrap().erase_from_basic_block();
        b.position_at_end(done);
        b.build_unconditional_branch(to).unwrap();
    }

    // ... else write each stopped thread's request to its slot and ask the runtime. Threads
    // that stopped at different points have diverged: loops no longer yield (`lockstep`).
    b.position_at_end(slow);
    let on = b.build_load(ctx.bool_type(), st.yield_on, "").unwrap().into_int_value();
    b.build_store(st.yield_on, b.build_and(on, same, "").unwrap()).unwrap();
    // A thread that is runnable after a pass stopped at a sync point in it.
    let (t, slot_t, latch, after) = runnable_loop(ctx, f, &b, st, "request");
    loops.push(latch);
    let which = b.get_insert_block().unwrap();
    let site_v = b.build_load(i32t, col_ptr(&b, st, ctx, col::SITE, t), "site").unwrap().into_int_value();
    let mut cases = Vec::new();
    for (k, si) in st.sites.iter().enumerate() {
        let site = k as u32 + 1;
        let bb = ctx.append_basic_block(f, &format!("request.site{site}"));
        cases.push((i32t.const_int(site as u64, false), bb));
        b.position_at_end(bb);
        let put = |fld: u32, v: IntValue| {
            let p = b.build_struct_gep(stt, slot_t, fld, "").unwrap();
            b.build_store(p, v).unwrap();
        };
        let c32 = |v: u64| i32t.const_int(v, false);
        put(slot::KIND, c32(si.kind as u64));
        put(slot::SITE, c32(site as u64));
        put(slot::LINE, c32(si.line as u64));
        put(slot::RESUME, c32(site as u64));
        for &(fld, v) in &si.consts {
            put(fld, if fld == slot::A { i64t.const_int(v, false) } else { c32(v) });
        }
        for &fld in &si.cols {
            let c = if fld == slot::A { a_col(st, site) } else { col_of(fld) };
            let v = b.build_load(i32t, col_ptr(&b, st, ctx, c, t), "").unwrap().into_int_value();
            let v = if fld == slot::A {
                let lo = b.build_int_z_extend(v, i64t, "").unwrap();
                if si.kind == abi::SYNC_MATCH {
                    let hi = b.build_load(i32t, col_ptr(&b, st, ctx, col::A_HI, t), "").unwrap().into_int_value();
                    let hi = b.build_left_shift(b.build_int_z_extend(hi, i64t, "").unwrap(), i64t.const_int(32, false), "").unwrap();
                    b.build_or(hi, lo, "").unwrap()
                } else {
                    lo
                }
            } else {
                v
            };
            put(fld, v);
        }
        put(slot::STATE, c32(abi::SLOT_WAITING as u64));
        b.build_unconditional_branch(latch).unwrap();
    }
    let bb = ctx.append_basic_block(f, "request.exited");
    cases.push((i32t.const_int(col::EXITED as u64, false), bb));
    b.position_at_end(bb);
    let p = b.build_struct_gep(stt, slot_t, slot::STATE, "").unwrap();
    b.build_store(p, i32t.const_int(abi::SLOT_EXITED as u64, false)).unwrap();
    b.build_unconditional_branch(latch).unwrap();
    b.position_at_end(which);
    b.build_switch(site_v, latch, &cases).unwrap();
    b.position_at_end(after);
    let pt = ctx.ptr_type(AddressSpace::default());
    let rt_p = b.build_struct_gep(cta_t, cta, field::RT, "").unwrap();
    let rt = b.build_load(pt, rt_p, "").unwrap().into_pointer_value();
    let fn_p = unsafe { b.build_in_bounds_gep(pt, rt, &[i32t.const_int(3, false)], "").unwrap() };
    let fp = b.build_load(pt, fn_p, "").unwrap().into_pointer_value();
    let fnt = i32t.fn_type(&[pt.into()], false);
    let r = b.build_indirect_call(fnt, fp, &[cta.into()], "resolved").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
    b.build_store(all_run_p, ctx.bool_type().const_zero()).unwrap();
    // RESOLVE_DEADLOCK ends the CTA with its status.
    let go_on = ctx.append_basic_block(f, "resolved.go");
    b.build_switch(r, go_on, &[(i32t.const_int(abi::RESOLVE_DONE as u64, false), st.done_bb), (i32t.const_int(abi::RESOLVE_DEADLOCK as u64, false), abort_bb)]).unwrap();
    b.position_at_end(go_on);
    // The results of the threads the runtime made runnable go to their columns.
    let (t, slot_t, latch, after) = runnable_loop(ctx, f, &b, st, "results");
    loops.push(latch);
    let rp = b.build_struct_gep(stt, slot_t, slot::RESULT, "").unwrap();
    let v = b.build_load(i64t, rp, "").unwrap().into_int_value();
    b.build_store(col_ptr(&b, st, ctx, col::RESULT, t), b.build_int_truncate(v, i32t, "").unwrap()).unwrap();
    let pp = b.build_struct_gep(stt, slot_t, slot::PRED, "").unwrap();
    let v = b.build_load(i32t, pp, "").unwrap();
    b.build_store(col_ptr(&b, st, ctx, col::PRED, t), v).unwrap();
    b.build_unconditional_branch(latch).unwrap();
    b.position_at_end(after);
    // A uniform resume point runs in its region copy if every thread of the CTA is runnable
    // (none exited or waits); otherwise, or without a copy, in the general loop.
    let (every, latch) = all_threads(ctx, f, &b, st.nt64, "every", |b, t| slot_runnable(b, ctx, st.slots, t).1);
    loops.push(latch);
    let uniform = ctx.append_basic_block(f, "resume.uniform");
    b.build_conditional_branch(every, uniform, general.entry).unwrap();
    b.position_at_end(uniform);
    b.build_store(all_run_p, ctx.bool_type().const_all_ones()).unwrap();
    let mut cases = vec![(i32t.const_int(abi::RESOLVE_CONTINUE as u64, false), general.entry)];
    for (ci, (site, _)) in st.fast.iter().enumerate() {
        // A fused copy computes results itself; the runtime's are in the columns, which the
        // general loop reads.
        if *site != 0 && !fused[ci] {
            cases.push((i32t.const_int((abi::RESOLVE_UNIFORM + site) as u64, false), entry_of[ci]));
        }
    }
    b.build_switch(r, general.entry, &cases).unwrap();
    // The fused copies: each thread's shuffle result, computed where it resumes, replaces
    // the loads of the result columns.
    let fast_loops = st.fast.clone();
    for (ci, (site, l)) in fast_loops.iter().enumerate() {
        if !fused[ci] {
            continue;
        }
        let (t64, t32) = (l.t64, l.t32);
        let si = &st.sites[*site as usize - 1];
        let Some(resume) = st.spills.iter().find(|s| s.4 == ci + 1 && s.3 == *site).map(|s| s.1) else { continue };
        let Some(cont) = resume.get_terminator().and_then(|t| t.get_operand(0)).and_then(|o| o.block()) else { continue };
        resume.get_terminator().unwrap().erase_from_basic_block();
        b.position_at_end(resume);
        let (v, p) = shfl_one(&b, st, ctx, f, si, a_col(st, *site), t64, t32);
        let pv = b.build_int_z_extend(p, i32t, "").unwrap();
        b.build_unconditional_branch(cont).unwrap();
        for &(copy, s, load, pred) in &st.result_loads {
            if copy == ci + 1 && s == *site {
                use inkwell::values::AsValueRef;
                let with = if pred { pv } else { v };
                unsafe { inkwell::llvm_sys::core::LLVMReplaceAllUsesWith(load.as_value_ref(), with.as_value_ref()) };
                load.erase_from_basic_block();
            }
        }
    }
    // Each of these loops touches only its own thread's slot and columns, or reads columns
    // that none of its iterations writes.
    e.lane_latches.extend(loops);
    // Saves and reloads of induction registers: the offset from the base node, evaluated
    // where the thread leaves or resumes (in its own thread loop).
    let thread_loops: Vec<ThreadLoop> = std::iter::once(general).chain(st.fast.iter().map(|f| f.1)).collect();
    let fast_sites: Vec<u32> = st.fast.iter().map(|f| f.0).collect();
    let reg_of: Vec<_> = st.regs.iter().map(|r| (r.0, r.1)).collect();
    for d in deferred {
        e.tid = thread_loops[d.copy].tid;
        // The node may read a `.local` variable's address: that copy's own.
        e.copy_vars(d.copy);
        e.b.position_before(&d.block.get_terminator().unwrap());
        let (p, ty) = reg_of[d.k];
        let base = match e.remat_eval(d.node) {
            Ok((bp, _)) => e.b.build_load(ty, bp, "base").unwrap().into_int_value(),
            // Not expected (the node's instruction was emitted before): carry the value.
            Err(_) => ty.into_int_type().const_zero(),
        };
        let st = e.sync.as_ref().unwrap();
        let cp = col_ptr(&e.b, st, ctx, d.col, d.t);
        if d.save {
            let v = e.b.build_load(ty, p, "").unwrap().into_int_value();
            e.b.build_store(cp, e.b.build_int_sub(v, base, "offset").unwrap()).unwrap();
        } else {
            let own = d.copy != 0 && fast_sites[d.copy - 1] == d.site;
            let off = match uni.get(&(d.copy, d.k)) {
                Some(&a) if own => e.b.build_load(ty, a, "offset").unwrap(),
                _ => e.b.build_load(ty, cp, "offset").unwrap(),
            };
            e.b.build_store(p, e.b.build_int_add(base, off.into_int_value(), "").unwrap()).unwrap();
        }
    }
    let fa = e.sync.as_ref().map_or(16, |st| st.frame_align.max(16));
    stride.max(16) + (columns + fa - 1) / fa * fa
}

/// A save or reload of an induction register, emitted after the rest of the scheduler
/// (`finish_scheduler`): at `block`, in the thread loop of `copy`, register `k` in column
/// `col` as its offset from base node `node`.
struct Deferred<'ctx> {
    block: BasicBlock<'ctx>,
    save: bool,
    k: usize,
    col: (u32, u32),
    t: IntValue<'ctx>,
    copy: usize,
    site: u32,
    node: usize,
}

/// How a pass of a region copy can end for its threads.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Every thread stops at this site.
    Site(u32),
    /// Every thread ends.
    Exit,
    /// Threads may stop at different sites, or some may end.
    Mixed,
}

/// Where the threads of a pass of a region copy can stop: the sites of its sync points they
/// reach, whether they may end, and whether some path leads to the thread loop's `next` by
/// another way (`unknown`).
struct Reach {
    sites: std::collections::BTreeSet<u32>,
    exits: bool,
    unknown: bool,
}

impl Reach {
    fn outcome(&self) -> Outcome {
        match (self.unknown, self.sites.len(), self.exits) {
            (false, 1, false) => Outcome::Site(*self.sites.iter().next().unwrap()),
            (false, 0, true) => Outcome::Exit,
            _ => Outcome::Mixed,
        }
    }
}

/// The blocks reachable from `entry` before the thread loop's `next`: `leaves` (block, site,
/// spill index) are the copy's sync points, `exit` the end of a thread.
fn copy_reach(entry: BasicBlock<'_>, next: BasicBlock<'_>, exit: BasicBlock<'_>, leaves: &[(BasicBlock<'_>, u32, usize)]) -> Reach {
    use inkwell::llvm_sys::core::{LLVMGetBasicBlockTerminator, LLVMGetNumSuccessors, LLVMGetSuccessor};
    let mut seen = std::collections::HashSet::new();
    let mut work = vec![entry.as_mut_ptr()];
    let mut r = Reach { sites: std::collections::BTreeSet::new(), exits: false, unknown: false };
    while let Some(bb) = work.pop() {
        if !seen.insert(bb) {
            continue;
        }
        if bb == exit.as_mut_ptr() {
            r.exits = true;
            continue;
        }
        if let Some(l) = leaves.iter().find(|l| l.0.as_mut_ptr() == bb) {
            r.sites.insert(l.1);
            continue;
        }
        unsafe {
            let term = LLVMGetBasicBlockTerminator(bb);
            if term.is_null() {
                r.unknown = true;
                return r;
            }
            for k in 0..LLVMGetNumSuccessors(term) {
                let s = LLVMGetSuccessor(term, k);
                if s == next.as_mut_ptr() {
                    r.unknown = true;
                    return r;
                }
                work.push(s);
            }
        }
    }
    r
}

/// PTX ISA 9.7.8.5 shfl.sync, completed in generated code for a CTA whose threads all
/// stopped at the shuffle `si` (operands `a` in column `acol`): a loop over the threads
/// that writes each one's result and predicate (`shfl_one`) to its columns.
fn shfl_inline<'ctx>(b: &inkwell::builder::Builder<'ctx>, st: &crate::codegen::func::SyncState<'ctx>, ctx: &'ctx inkwell::context::Context, f: inkwell::values::FunctionValue<'ctx>, si: &SiteInfo, acol: (u32, u32)) -> BasicBlock<'ctx> {
    let (_, t, latch, after) = count_loop(ctx, f, b, st.nt64, "shfl");
    let t32 = b.build_int_truncate(t, ctx.i32_type(), "").unwrap();
    let (v, p) = shfl_one(b, st, ctx, f, si, acol, t, t32);
    b.build_store(col_ptr(b, st, ctx, col::RESULT, t), v).unwrap();
    let pv = b.build_int_z_extend(p, ctx.i32_type(), "").unwrap();
    b.build_store(col_ptr(b, st, ctx, col::PRED, t), pv).unwrap();
    b.build_unconditional_branch(latch).unwrap();
    b.position_at_end(after);
    latch
}

/// PTX ISA 9.7.8.5 shfl.sync for thread `t` of a CTA whose threads all stopped at the
/// shuffle `si`: thread `t` (lane `t % 32` of the warp starting at `base`) gets the operand
/// `a` (column `acol`) of its source lane `j`, computed from its own `b` and `c` as in the
/// spec's pseudo-code, when `j` is in range (`p`): 0 when `j` is past the end of the CTA's
/// partial last warp (as an H200 gives; the spec leaves it undefined); out of range its own
/// `a`. Returns the value and `p`; may add blocks (the builder is left at the end).
fn shfl_one<'ctx>(b: &inkwell::builder::Builder<'ctx>, st: &crate::codegen::func::SyncState<'ctx>, ctx: &'ctx inkwell::context::Context, f: inkwell::values::FunctionValue<'ctx>, si: &SiteInfo, acol: (u32, u32), t: IntValue<'ctx>, t32: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let i32t = ctx.i32_type();
    let i64t = ctx.i64_type();
    let c = |v: u64| i32t.const_int(v, false);
    let operand = |fld: u32| -> IntValue<'ctx> {
        match si.consts.iter().find(|x| x.0 == fld) {
            Some(&(_, v)) => c(v),
            None => b.build_load(i32t, col_ptr(b, st, ctx, col_of(fld), t), "").unwrap().into_int_value(),
        }
    };
    let mode = si.consts.iter().find(|x| x.0 == slot::MODE).map_or(3, |x| x.1);
    let bv = operand(slot::B);
    let cv = operand(slot::C);
    let lane = b.build_and(t32, c(31), "lane").unwrap();
    let base = b.build_int_sub(t32, lane, "").unwrap();
    let left = b.build_int_sub(st.nthreads, base, "").unwrap();
    let bval = b.build_and(bv, c(31), "").unwrap();
    let cval = b.build_and(cv, c(31), "").unwrap();
    let seg = b.build_and(b.build_right_shift(cv, c(8), false, "").unwrap(), c(31), "segmask").unwrap();
    let nseg = b.build_not(seg, "").unwrap();
    let max_lane = b.build_or(b.build_and(lane, seg, "").unwrap(), b.build_and(cval, nseg, "").unwrap(), "maxLane").unwrap();
    let (j, p) = match mode {
        0 => {
            let j = b.build_int_sub(lane, bval, "").unwrap();
            (j, b.build_int_compare(IntPredicate::SGE, j, max_lane, "").unwrap())
        }
        1 => {
            let j = b.build_int_add(lane, bval, "").unwrap();
            (j, b.build_int_compare(IntPredicate::SLE, j, max_lane, "").unwrap())
        }
        2 => {
            let j = b.build_xor(lane, bval, "").unwrap();
            (j, b.build_int_compare(IntPredicate::SLE, j, max_lane, "").unwrap())
        }
        _ => {
            let min_lane = b.build_and(lane, seg, "").unwrap();
            let j = b.build_or(min_lane, b.build_and(bval, nseg, "").unwrap(), "").unwrap();
            (j, b.build_int_compare(IntPredicate::SLE, j, max_lane, "").unwrap())
        }
    };
    let v = match (mode, bv.get_zero_extended_constant()) {
        // .up/.down by a constant: the source is thread t -/+ b or t itself. Two contiguous
        // accesses (the second one masked) instead of a gather. The own value is frozen: a
        // phi of two plain loads would be folded into one load from a selected address.
        (0 | 1, Some(d)) => {
            let dv = i64t.const_int(d & 31, false);
            let own = b.build_load(i32t, col_ptr(b, st, ctx, acol, t), "own").unwrap().into_int_value();
            let own = unsafe {
                use inkwell::values::AsValueRef;
                IntValue::new(inkwell::llvm_sys::core::LLVMBuildFreeze(b.as_mut_ptr(), own.as_value_ref(), c"own.frozen".as_ptr()))
            };
            // The source lane exists: for .up, p puts it at or above lane 0 of the warp; for
            // .down, p keeps it in the warp, and the warp may be the CTA's partial last one.
            let (ok, own) = if mode == 0 {
                (p, own)
            } else {
                // past the CTA's last thread: 0
                let from = b.build_int_add(t32, c(d & 31), "").unwrap();
                let exists = b.build_int_compare(IntPredicate::ULT, from, st.nthreads, "").unwrap();
                let gone = b.build_and(p, b.build_not(exists, "").unwrap(), "").unwrap();
                (b.build_and(p, exists, "").unwrap(), b.build_select(gone, c(0), own, "").unwrap().into_int_value())
            };
            let here = b.get_insert_block().unwrap();
            let far = ctx.append_basic_block(f, "shfl.far");
            let join = ctx.append_basic_block(f, "shfl.join");
            b.build_conditional_branch(ok, far, join).unwrap();
            b.position_at_end(far);
            let from = if mode == 0 { b.build_int_sub(t, dv, "").unwrap() } else { b.build_int_add(t, dv, "").unwrap() };
            let other = b.build_load(i32t, col_ptr(b, st, ctx, acol, from), "").unwrap().into_int_value();
            b.build_unconditional_branch(join).unwrap();
            b.position_at_end(join);
            let phi = b.build_phi(i32t, "shfl").unwrap();
            phi.add_incoming(&[(&own, here), (&other, far)]);
            phi.as_basic_value().into_int_value()
        }
        _ => {
            let src = b.build_select(p, j, lane, "").unwrap().into_int_value();
            let inside = b.build_int_compare(IntPredicate::ULT, src, left, "").unwrap();
            let from = b.build_select(inside, b.build_int_add(base, src, "").unwrap(), t32, "").unwrap().into_int_value();
            let from64 = b.build_int_z_extend(from, i64t, "").unwrap();
            let v = b.build_load(i32t, col_ptr(b, st, ctx, acol, from64), "").unwrap().into_int_value();
            // past the CTA's last thread (only a valid j can be): 0
            b.build_select(inside, v, c(0), "").unwrap().into_int_value()
        }
    };
    (v, p)
}

/// Emits a synchronization point: hands the collective's operands to the thread's columns
/// (constant ones are recorded for the site), counts the thread as stopped in this pass,
/// returns to the scheduler, and positions the builder at the resume block (where the caller
/// reads the results with [`result`]/[`result_pred`]).
pub fn sync_point<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, kind: u32, fields: &[(u32, IntValue<'ctx>)]) {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let line = e.line();
    let (site, next) = {
        let st = e.sync.as_mut().expect("sync kernel");
        let s = st.next_site;
        st.next_site += 1;
        (s, st.next_bb)
    };
    if kind == abi::SYNC_BAR_ARRIVE {
        e.sync.as_mut().unwrap().has_arrive = true;
    }
    {
        let st = e.sync.as_mut().unwrap();
        if st.replay.is_none() {
            // The general copy comes first: it decides which fields are constants. Copies
            // emit the same instructions and follow it.
            let mut si = SiteInfo { kind, line, consts: Vec::new(), cols: Vec::new() };
            for (fld, v) in fields {
                match v.get_zero_extended_constant() {
                    Some(c) => si.consts.push((*fld, c)),
                    None => si.cols.push(*fld),
                }
            }
            debug_assert_eq!(st.sites.len() + 1, site as usize);
            st.sites.push(si);
            if kind == abi::SYNC_SHFL {
                let off = col::FIXED + 4 * st.shfl_cols.len() as u32;
                st.shfl_cols.push((site, off));
                if let Some(p) = st.next_alias {
                    st.shfl_alias.push((site, p));
                }
            }
        }
    }
    let st = e.sync.as_ref().unwrap();
    let si = &st.sites[site as usize - 1];
    let mut stores = Vec::new();
    for (fld, v) in fields {
        if si.cols.contains(fld) {
            let p = col_ptr(&e.b, st, ctx, if *fld == slot::A { a_col(st, site) } else { col_of(*fld) }, st.t64);
            if *fld == slot::A {
                // `a` arrives as i64; its column holds the low half (see `col`).
                let lo = e.b.build_int_truncate(*v, i32t, "").unwrap();
                stores.push((site, *fld, e.b.build_store(p, lo).unwrap()));
                if kind == abi::SYNC_MATCH {
                    let hi = e.b.build_right_shift(*v, ctx.i64_type().const_int(32, false), false, "").unwrap();
                    let hi = e.b.build_int_truncate(hi, i32t, "").unwrap();
                    e.b.build_store(col_ptr(&e.b, st, ctx, col::A_HI, st.t64), hi).unwrap();
                }
            } else {
                stores.push((site, *fld, e.b.build_store(p, *v).unwrap()));
            }
        }
    }
    e.sync.as_mut().unwrap().field_stores.extend(stores);
    let st = e.sync.as_ref().unwrap();
    let sv = i32t.const_int(site as u64, false);
    let site_store = e.b.build_store(col_ptr(&e.b, st, ctx, col::SITE, st.t64), sv).unwrap();
    e.b.build_unconditional_branch(next).unwrap();
    let leave = e.b.get_insert_block().unwrap();
    let resume = ctx.append_basic_block(e.f, "resume");
    let cont = ctx.append_basic_block(e.f, "resumed");
    let st = e.sync.as_mut().unwrap();
    let copy = if st.replay.is_none() {
        st.cases.push((site, resume));
        0
    } else {
        if site == st.copy_site {
            st.copy_entry = Some(resume);
        }
        st.fast.len()
    };
    st.spills.push((leave, resume, st.t64, site, copy));
    st.site_stores.push(site_store);
    st.last_site = site;
    st.next_alias = None;
    e.volatile_last = Some(None);
    e.b.position_at_end(resume);
    e.b.build_unconditional_branch(cont).unwrap();
    e.b.position_at_end(cont);
}

/// The result of the collective the thread just resumed from (32 bits, see `col`).
pub fn result<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let st = e.sync.as_ref().expect("sync kernel");
    let p = col_ptr(&e.b, st, e.ctx(), col::RESULT, st.t64);
    let v = e.b.build_load(e.ctx().i32_type(), p, "").unwrap().into_int_value();
    record_result(e, v, false);
    v
}

pub fn result_pred<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let st = e.sync.as_ref().expect("sync kernel");
    let p = col_ptr(&e.b, st, e.ctx(), col::PRED, st.t64);
    let v = e.b.build_load(e.ctx().i32_type(), p, "").unwrap().into_int_value();
    record_result(e, v, true);
    e.b.build_int_compare(IntPredicate::NE, v, e.ctx().i32_type().const_zero(), "").unwrap()
}

/// Remembers a load of a result column (see `SyncState::result_loads`).
fn record_result<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, pred: bool) {
    let st = e.sync.as_mut().unwrap();
    let copy = if st.replay.is_none() { 0 } else { st.fast.len() };
    if let Some(load) = v.as_instruction() {
        st.result_loads.push((copy, st.last_site, load, pred));
    }
}

/// The column of the operand `a` of site `site`: its own for a shuffle, else the shared one.
fn a_col(st: &crate::codegen::func::SyncState<'_>, site: u32) -> (u32, u32) {
    st.shfl_cols.iter().find(|c| c.0 == site).map_or(col::A, |c| (c.1, 4))
}
