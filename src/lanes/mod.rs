//! Lane expansion: how the threads of a CTA run on one CPU thread.
//!
//! Kernels without synchronization run each thread to completion in z/y/x loops (set up in
//! `codegen::func`), which LLVM can vectorize. Kernels with synchronization points — barriers
//! and warp collectives, in any control flow, divergent or not — become a scheduler:
//!
//! ```text
//! sched:  for t in 0..nthreads:                      (dispatch)
//!             if slot[t].state != RUNNABLE: continue
//!             switch slot[t].resume { 0: body; k: resume_k }
//!             ... the thread runs until its next sync point k:
//!                 slot[t] = {WAITING, k, operands}; continue
//!         r = host.resolve(cta)                      (runtime::warp)
//!         r == CONTINUE ? goto sched : r == UNIFORM+k ? goto region_k : return
//! resume_k: results from slot[t] into the destination registers; continue the body
//!
//! region_k: for t in 0..nthreads:                    (a region copy, see `begin_copy`)
//!             if slot[t].state != RUNNABLE: continue
//!             resume_k of a copy of the body ... to the next sync point, as above
//!           r = host.resolve(cta) ...
//! ```
//!
//! The first pass is `region_0` (every thread starts at the beginning of the body).
//!
//! A thread's `.local` variables live in its frame. Its registers are allocas, which LLVM
//! promotes to SSA values between sync points; at each sync point the registers live across
//! it (`live`) are saved to the frame before the thread returns to the scheduler and reloaded
//! in the resume block. A `.func` that synchronizes is inlined into the kernel (`sync_funcs`,
//! `FnEmitter::inline_call`), so that its sync points return to this scheduler too. `resolve` completes each collective whose
//! participants have all arrived (the lanes of `membermask`; for the deprecated non-`.sync`
//! forms and `activemask`, the lanes waiting at the same instruction once the whole warp is
//! blocked), releases barriers whose expected count has arrived, and reports a deadlock
//! (naming the instruction's line and a waiting thread) when nothing can progress.

use crate::codegen::abi::{self, field, slot};
use crate::codegen::FnEmitter;
use crate::syntax::ast::{Instr, Stmt};
use crate::syntax::diag::Diagnostic;

pub mod live;
use inkwell::basic_block::BasicBlock;
use inkwell::values::IntValue;
use inkwell::{AddressSpace, IntPredicate};

/// Whether an instruction is a synchronization point.
pub fn is_sync(i: &Instr) -> bool {
    matches!(i.opcode.name, "bar" | "barrier" | "shfl" | "vote" | "match" | "activemask" | "redux")
        || (i.opcode.name == "wmma" && i.mods.first() == Some(&"mma"))
        || i.opcode.name == "mma"
        || i.opcode.name == "ldmatrix"
}

pub fn has_sync(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Instr(i) => is_sync(i),
        Stmt::Block(b, _) => has_sync(b),
        _ => false,
    })
}

/// The direct callees of a body (`call ... f, ...`).
fn callees<'a>(body: &[Stmt<'a>], out: &mut Vec<&'a str>) {
    for s in body {
        match s {
            Stmt::Instr(i) if i.opcode.name == "call" => {
                let rest = match i.operands.first() {
                    Some(crate::syntax::ast::Operand::List(..)) => &i.operands[1..],
                    _ => &i.operands[..],
                };
                if let Some(crate::syntax::ast::Operand::Name(f, _)) = rest.first() {
                    out.push(f.name);
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
                (f.name.name, has_sync(b), c)
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

/// Whether a kernel body synchronizes, directly or through a call to one of `funcs`.
pub fn needs_scheduler(body: &[Stmt], funcs: &std::collections::HashSet<&str>) -> bool {
    let mut c = Vec::new();
    callees(body, &mut c);
    has_sync(body) || c.iter().any(|f| funcs.contains(f))
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
    pub tid: [IntValue<'ctx>; 3],
    pub frame_t: inkwell::values::PointerValue<'ctx>,
    pub slot_t: inkwell::values::PointerValue<'ctx>,
}

/// Builds a thread loop that goes to `after` once every thread has had its turn.
fn thread_loop<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, after: BasicBlock<'ctx>) -> ThreadLoop<'ctx> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let i64t = ctx.i64_type();
    let f = e.f;
    let st = e.sync.as_ref().expect("sync kernel");
    let (n, nt, frames, slots, fsg) = (st.nthreads, st.ntid, st.frames, st.slots, st.frame_size_global);
    let entry = ctx.append_basic_block(f, name);
    let head = ctx.append_basic_block(f, &format!("{name}.head"));
    let check = ctx.append_basic_block(f, &format!("{name}.check"));
    let dispatch = ctx.append_basic_block(f, &format!("{name}.dispatch"));
    let next = ctx.append_basic_block(f, &format!("{name}.next"));
    let exit = ctx.append_basic_block(f, &format!("{name}.exit"));
    let b = ctx.create_builder();
    b.position_at_end(entry);
    b.build_unconditional_branch(head).unwrap();
    b.position_at_end(head);
    let t = b.build_phi(i32t, "t").unwrap();
    let tv = t.as_basic_value().into_int_value();
    // tid.x/y/z of thread t, stepped along with t (no divisions per dispatch).
    let tx = b.build_phi(i32t, "tid.x").unwrap();
    let ty = b.build_phi(i32t, "tid.y").unwrap();
    let tz = b.build_phi(i32t, "tid.z").unwrap();
    let (x, y, z) = (tx.as_basic_value().into_int_value(), ty.as_basic_value().into_int_value(), tz.as_basic_value().into_int_value());
    let more = b.build_int_compare(IntPredicate::ULT, tv, n, "").unwrap();
    b.build_conditional_branch(more, check, after).unwrap();
    // Is thread t runnable?
    b.position_at_end(check);
    let stt = slot_type(ctx);
    let t64 = b.build_int_z_extend(tv, i64t, "").unwrap();
    let slot_t = unsafe { b.build_in_bounds_gep(stt, slots, &[t64], "slot").unwrap() };
    let state_p = b.build_struct_gep(stt, slot_t, slot::STATE, "").unwrap();
    let state = b.build_load(i32t, state_p, "").unwrap().into_int_value();
    let runnable = b.build_int_compare(IntPredicate::EQ, state, i32t.const_int(abi::SLOT_RUNNABLE as u64, false), "").unwrap();
    b.build_conditional_branch(runnable, dispatch, next).unwrap();
    // Next thread.
    b.position_at_end(next);
    let one = i32t.const_int(1, false);
    let zero = i32t.const_zero();
    let t1 = b.build_int_add(tv, one, "").unwrap();
    let x1 = b.build_int_add(x, one, "").unwrap();
    let xw = b.build_int_compare(IntPredicate::EQ, x1, nt[0], "").unwrap();
    let y1 = b.build_int_add(y, one, "").unwrap();
    let yw = b.build_int_compare(IntPredicate::EQ, y1, nt[1], "").unwrap();
    let z1 = b.build_int_add(z, one, "").unwrap();
    let x2 = b.build_select(xw, zero, x1, "").unwrap().into_int_value();
    let y_inc = b.build_select(yw, zero, y1, "").unwrap().into_int_value();
    let y2 = b.build_select(xw, y_inc, y, "").unwrap().into_int_value();
    let xyw = b.build_and(xw, yw, "").unwrap();
    let z2 = b.build_select(xyw, z1, z, "").unwrap().into_int_value();
    b.build_unconditional_branch(head).unwrap();
    t.add_incoming(&[(&zero, entry), (&t1, next)]);
    tx.add_incoming(&[(&zero, entry), (&x2, next)]);
    ty.add_incoming(&[(&zero, entry), (&y2, next)]);
    tz.add_incoming(&[(&zero, entry), (&z2, next)]);
    // Dispatch: the thread's frame. The frame size is known only after the body is
    // emitted: it is read from a constant global that `finish_scheduler` initializes
    // (LLVM folds the load).
    b.position_at_end(dispatch);
    let fs = b.build_load(i64t, fsg.as_pointer_value(), "fs").unwrap().into_int_value();
    let off = b.build_int_mul(t64, fs, "").unwrap();
    let frame_t = unsafe { b.build_in_bounds_gep(ctx.i8_type(), frames, &[off], "frame").unwrap() };
    // Finishing (ret/exit or the end of the body) marks the thread exited.
    b.position_at_end(exit);
    b.build_store(state_p, i32t.const_int(abi::SLOT_EXITED as u64, false)).unwrap();
    b.build_unconditional_branch(next).unwrap();
    ThreadLoop { entry, dispatch, next, exit, tid: [x, y, z], frame_t, slot_t }
}

/// Makes `l` the thread loop that the body being emitted belongs to.
fn enter_loop<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, l: &ThreadLoop<'ctx>) {
    e.tid = l.tid;
    e.exit_bb = l.exit;
    e.ret_bb = l.exit;
    let st = e.sync.as_mut().unwrap();
    st.frame_t = l.frame_t;
    st.slot_t = l.slot_t;
    st.next_bb = l.next;
    st.frame_b.position_at_end(l.dispatch);
}

/// Builds the scheduler of a kernel with synchronization and leaves the builder at the
/// start of the thread body of its general thread loop.
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
    let start = ctx.append_basic_block(f, "start");
    e.b.build_unconditional_branch(start).unwrap();
    let resolve = ctx.append_basic_block(f, "resolve");
    let done = ctx.append_basic_block(f, "cta.done");
    let body = ctx.append_basic_block(f, "thread");
    let fsg = e.m.module.add_global(i64t, None, &format!("__ptxr_frame_size_{kname}"));
    fsg.set_linkage(inkwell::module::Linkage::Internal);
    fsg.set_constant(true);
    // The carry flag is thread state like a register.
    let carry = (e.carry, ctx.bool_type().into(), 1);
    let null = pt.const_null();
    e.sync = Some(crate::codegen::func::SyncState {
        frame_b: ctx.create_builder(),
        frame_t: null,
        slot_t: null,
        frame_size: 0,
        next_bb: body,
        cases: Vec::new(),
        next_site: 1,
        body_bb: body,
        frame_size_global: fsg,
        regs: vec![carry],
        spills: Vec::new(),
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
        resolve_r: None,
        fast: Vec::new(),
        done_bb: done,
        general: None,
    });
    let general = thread_loop(e, "sched", resolve);
    enter_loop(e, &general);
    {
        let st = e.sync.as_mut().unwrap();
        st.general = Some(general);
    }
    // After a pass over all threads: let the host complete collectives.
    e.b.position_at_end(resolve);
    let rt = e.cta_ptr_field(field::RT);
    let slot_fn = unsafe { e.b.build_in_bounds_gep(pt, rt, &[i32t.const_int(3, false)], "").unwrap() };
    let fp = e.b.build_load(pt, slot_fn, "").unwrap().into_pointer_value();
    let fnt = i32t.fn_type(&[pt.into()], false);
    let r = e.b.build_indirect_call(fnt, fp, &[e.cta.into()], "").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
    e.sync.as_mut().unwrap().resolve_r = Some(r);
    e.b.position_at_end(done);
    e.b.build_return(Some(&i32t.const_zero())).unwrap();
    e.b.position_at_end(body);
    Ok(())
}

/// Pointer to field `fld` of this thread's slot.
pub fn state_p_for<'ctx>(e: &FnEmitter<'ctx, '_, '_>, fld: u32) -> inkwell::values::PointerValue<'ctx> {
    let st = e.sync.as_ref().expect("sync kernel");
    e.b.build_struct_gep(slot_type(e.ctx()), st.slot_t, fld, "").unwrap()
}

/// Region copies (the fast path of the scheduler). A pass of the general thread loop
/// switches on each thread's resume point. When every live thread resumes at the same
/// point `k` — convergent code, the common case — the runtime's `resolve` says so, and
/// the next pass runs the loop of region copy `k` instead: a copy of the body entered only
/// at `k`, so the loop holds just the code from `k` to the next sync points, without the
/// switch, and LLVM optimizes it as straight-line per-thread code. Registers and `.local`
/// variables are the same storage in every copy (`Storage` replay), and a thread may leave
/// one copy and come back in another or in the general loop.
///
/// Copies cost compile time (one body per sync site), so kernels with many sites or a
/// large body keep only the general loop.
pub const MAX_COPY_SITES: u32 = 24;
pub const MAX_COPY_INSTRUCTIONS: usize = 60_000;

/// The number of sync sites, if region copies should be emitted for this kernel.
pub fn wants_copies(e: &FnEmitter<'_, '_, '_>) -> Option<u32> {
    let st = e.sync.as_ref()?;
    let sites = st.next_site - 1;
    if sites == 0 || sites > MAX_COPY_SITES {
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
    let l = thread_loop(e, &format!("region{site}"), resolve);
    enter_loop(e, &l);
    let start = e.ctx().append_basic_block(e.f, &format!("region{site}.body"));
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
    let b = e.ctx().create_builder();
    b.position_at_end(dispatch);
    b.build_unconditional_branch(entry).unwrap();
}

/// Completes the dispatch switch, the resolve switch and the frame size; returns the frame
/// size (0 when the kernel has no synchronization).
pub fn finish_scheduler(e: &mut FnEmitter<'_, '_, '_>) -> u32 {
    let Some(st) = &mut e.sync else { return 0 };
    let ctx = e.m.ctx;
    let i32t = ctx.i32_type();
    // Save and reload the registers live across each sync point (see `live`). A site's
    // copies share one set: a thread may leave in one copy and resume in another.
    let regs: Vec<_> = st.regs.iter().map(|r| r.0).collect();
    let pairs: Vec<_> = st.spills.iter().map(|s| (s.0, s.1)).collect();
    let live = live::across(e.f, &regs, &pairs);
    let mut per_site: std::collections::HashMap<u32, live::Bits> = std::collections::HashMap::new();
    for (s, set) in st.spills.iter().zip(&live) {
        per_site.entry(s.3).and_modify(|b| b.union_with(set)).or_insert_with(|| set.clone());
    }
    let mut offset: Vec<Option<u32>> = vec![None; regs.len()];
    let b = ctx.create_builder();
    let i8t = ctx.i8_type();
    for &(leave, resume, frame_t, site) in &st.spills {
        let set = &per_site[&site];
        for (k, &(p, ty, size)) in st.regs.iter().enumerate() {
            if !set.has(k) {
                continue;
            }
            let off = *offset[k].get_or_insert_with(|| {
                let off = (st.frame_size + size - 1) / size * size;
                st.frame_size = off + size;
                off
            });
            let off_v = ctx.i64_type().const_int(off as u64, false);
            b.position_before(&leave.get_terminator().unwrap());
            let fp = unsafe { b.build_in_bounds_gep(i8t, frame_t, &[off_v], "").unwrap() };
            let v = b.build_load(ty, p, "").unwrap();
            b.build_store(fp, v).unwrap();
            b.position_before(&resume.get_terminator().unwrap());
            let fp = unsafe { b.build_in_bounds_gep(i8t, frame_t, &[off_v], "").unwrap() };
            let v = b.build_load(ty, fp, "").unwrap();
            b.build_store(p, v).unwrap();
        }
    }
    let size = (st.frame_size + 15) / 16 * 16;
    st.frame_size_global.set_initializer(&ctx.i64_type().const_int(size.max(16) as u64, false));
    // The general loop's dispatch: a switch on the thread's resume point.
    let b = ctx.create_builder();
    let general = st.general.unwrap();
    b.position_at_end(general.dispatch);
    let resume_p = b.build_struct_gep(slot_type(ctx), general.slot_t, slot::RESUME, "").unwrap();
    let r = b.build_load(i32t, resume_p, "resume").unwrap().into_int_value();
    let mut cases = vec![(i32t.const_zero(), st.body_bb)];
    for (k, bb) in &st.cases {
        cases.push((i32t.const_int(*k as u64, false), *bb));
    }
    b.build_switch(r, general.next, &cases).unwrap();
    // The first pass: every thread starts at the beginning of the body.
    b.position_at_end(st.start_bb);
    let first = st.fast.iter().find(|f| f.0 == 0).map_or(general.entry, |f| f.1.entry);
    b.build_unconditional_branch(first).unwrap();
    // After resolve: the general loop, or the region copy where every thread resumes.
    b.position_at_end(st.resolve_bb);
    // RESOLVE_DEADLOCK ends the CTA with its status; a uniform resume point without a
    // region copy runs in the general loop.
    let mut cases = vec![
        (i32t.const_int(abi::RESOLVE_CONTINUE as u64, false), general.entry),
        (i32t.const_int(abi::RESOLVE_DONE as u64, false), st.done_bb),
        (i32t.const_int(abi::RESOLVE_DEADLOCK as u64, false), e.abort_bb),
    ];
    for (site, l) in &st.fast {
        if *site != 0 {
            cases.push((i32t.const_int((abi::RESOLVE_UNIFORM + site) as u64, false), l.entry));
        }
    }
    b.build_switch(st.resolve_r.unwrap(), general.entry, &cases).unwrap();
    size.max(16)
}

/// Emits a synchronization point: records `fields` in the thread's slot, marks it waiting,
/// returns to the scheduler, and positions the builder at the resume block (where the
/// caller reads the results with [`result`]/[`result_pred`]).
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
    let store = |e: &FnEmitter<'ctx, '_, '_>, fld: u32, v: IntValue<'ctx>| {
        let p = state_p_for(e, fld);
        e.b.build_store(p, v).unwrap();
    };
    store(e, slot::KIND, i32t.const_int(kind as u64, false));
    store(e, slot::SITE, i32t.const_int(site as u64, false));
    store(e, slot::LINE, i32t.const_int(line as u64, false));
    for (fld, v) in fields {
        store(e, *fld, *v);
    }
    store(e, slot::RESUME, i32t.const_int(site as u64, false));
    store(e, slot::STATE, i32t.const_int(abi::SLOT_WAITING as u64, false));
    e.b.build_unconditional_branch(next).unwrap();
    let leave = e.b.get_insert_block().unwrap();
    let resume = ctx.append_basic_block(e.f, "resume");
    let cont = ctx.append_basic_block(e.f, "resumed");
    let st = e.sync.as_mut().unwrap();
    if st.replay.is_none() {
        st.cases.push((site, resume));
    } else if site == st.copy_site {
        st.copy_entry = Some(resume);
    }
    st.spills.push((leave, resume, st.frame_t, site));
    e.b.position_at_end(resume);
    e.b.build_unconditional_branch(cont).unwrap();
    e.b.position_at_end(cont);
}

pub fn result<'ctx>(e: &FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let p = state_p_for(e, slot::RESULT);
    e.b.build_load(e.ctx().i64_type(), p, "").unwrap().into_int_value()
}

pub fn result_pred<'ctx>(e: &FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let p = state_p_for(e, slot::PRED);
    let v = e.b.build_load(e.ctx().i32_type(), p, "").unwrap().into_int_value();
    e.b.build_int_compare(IntPredicate::NE, v, e.ctx().i32_type().const_zero(), "").unwrap()
}
