//! Data movement (9.7.8): mov, ld, ldu, st, prefetch, isspacep, cvta; atomics (9.7.12.4-5).

use super::func::{int_t, types_of, FnEmitter, R};
use crate::syntax::ast::{Instr, Operand, StateSpace, Type};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue};
use inkwell::AtomicOrdering;

/// The state space an instruction names (`syntax::hints` has made `.shared::cta` and the
/// like plain), or None: generic addressing.
pub(crate) fn space_of(i: &Instr) -> Option<StateSpace> {
    i.mods.iter().find_map(|m| match *m {
        "global" => Some(StateSpace::Global),
        "shared" => Some(StateSpace::Shared),
        "local" => Some(StateSpace::Local),
        "const" => Some(StateSpace::Const),
        "param" => Some(StateSpace::Param),
        _ => None,
    })
}

fn vec_width(i: &Instr) -> u32 {
    i.mods.iter().find_map(|m| match *m {
        "v2" => Some(2),
        "v4" => Some(4),
        "v8" => Some(8),
        _ => None,
    }).unwrap_or(1)
}

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    match i.opcode.name {
        "mov" => mov(e, i).map(|_| true),
        "ld" | "ldu" => ld(e, i).map(|_| true),
        "st" => st(e, i).map(|_| true),
        "cvta" => cvta(e, i).map(|_| true),
        // PTX ISA 9.7.8.11 prefetch, prefetchu: a hint; nothing to do on a CPU.
        "prefetch" | "prefetchu" => Ok(true),
        "isspacep" => isspacep(e, i).map(|_| true),
        "mapa" | "getctarank" => cluster_address(e, i).map(|_| true),
        "cp" if !i.has_mod("mbarrier") => cp_async(e, i).map(|_| true),
        _ => Ok(false),
    }
}

fn the_type(e: &FnEmitter, i: &Instr) -> R<Type> {
    types_of(i).last().copied().ok_or_else(|| e.err(i.span, format!("`{}` needs a type", i.opcode.name)))
}

/// PTX ISA 9.7.8.2-3 mov: registers, immediates, special registers, addresses of variables
/// and functions, and packing/unpacking of vectors (`mov.b64 %rd, {%r1, %r2}`).
fn mov<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ty = the_type(e, i)?;
    let [d, a] = &i.operands[..] else { return Err(e.err(i.span, "`mov` takes two operands")) };
    match (d, a) {
        // `mov.v4.f32 {a, b, c, d}, V` (6.4.3): element by element, every source read before
        // any destination is written.
        (Operand::Vector(ds, _), Operand::Vector(src, _)) if i.has_mod("v2") || i.has_mod("v4") => {
            if ds.len() != src.len() {
                return Err(e.err(i.span, format!("`mov` between vectors of {} and {} elements", ds.len(), src.len())));
            }
            let vals = src.iter().map(|s| e.read(s, ty)).collect::<R<Vec<_>>>()?;
            for (dst, v) in ds.iter().zip(vals) {
                e.write(dst, ty, v)?;
            }
            Ok(())
        }
        (Operand::Vector(ds, _), _) => {
            // Unpack: low element first.
            let v = e.read_int(a, ty)?;
            let n = ds.len() as u32;
            let w = ty.bits() / n;
            for (k, dst) in ds.iter().enumerate() {
                let sh = e.b.build_right_shift(v, v.get_type().const_int((k as u32 * w) as u64, false), false, "").unwrap();
                let part = e.resize(sh, w, false);
                e.write(dst, bits_type(w), part.into())?;
            }
            Ok(())
        }
        (_, Operand::Vector(src, _)) => {
            let n = src.len() as u32;
            let w = ty.bits() / n;
            let wide = int_t(e.ctx(), ty.bits());
            let mut acc = wide.const_zero();
            for (k, s) in src.iter().enumerate() {
                let part = e.read_int(s, bits_type(w))?;
                let x = e.resize(part, ty.bits(), false);
                let x = e.b.build_left_shift(x, wide.const_int((k as u32 * w) as u64, false), "").unwrap();
                acc = e.b.build_or(acc, x, "").unwrap();
            }
            e.write(d, ty, acc.into())
        }
        _ => {
            let v = e.read(a, ty)?;
            e.write(d, ty, v)
        }
    }
}

pub fn bits_type(w: u32) -> Type {
    match w {
        8 => Type::B8,
        16 => Type::B16,
        32 => Type::B32,
        64 => Type::B64,
        _ => Type::B128,
    }
}

/// The memory ordering of `ld`/`st` with a `.sem` qualifier (9.7.8.7, 9.7.8.10; 8 memory
/// consistency model): `.relaxed`/`.acquire`/`.release` accesses are atomic (morally strong),
/// so that other CTAs, which run on other host threads, see them; `None` for weak accesses.
fn access_ordering(i: &Instr) -> Option<AtomicOrdering> {
    if i.has_mod("acquire") {
        Some(AtomicOrdering::Acquire)
    } else if i.has_mod("release") {
        Some(AtomicOrdering::Release)
    } else if i.has_mod("relaxed") {
        Some(AtomicOrdering::Monotonic)
    } else {
        None
    }
}

/// Loads one element of an ld type (predicates are stored as bytes).
fn load_elem<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, ptr: inkwell::values::PointerValue<'ctx>, ty: Type, volatile: bool, ord: Option<AtomicOrdering>) -> IntValue<'ctx> {
    // LLVM 19's NVPTX backend selects only relaxed atomic loads: an acquire load is a
    // relaxed load followed by a fence there (it selects no IR fence).
    if e.m.nvptx && ord == Some(AtomicOrdering::Acquire) {
        let v = load_elem(e, ptr, ty, volatile, Some(AtomicOrdering::Monotonic));
        super::nvvm::fence(e, "sys");
        return v;
    }
    let t = int_t(e.ctx(), ty.bits());
    let v = e.b.build_load(t, ptr, "").unwrap();
    let inst = v.as_instruction_value().unwrap();
    match ord {
        // Atomic accesses need natural alignment, which PTX requires of every access anyway.
        Some(o) if ty.bits() <= 64 => {
            let _ = inst.set_alignment(ty.size());
            let _ = inst.set_atomic_ordering(o);
        }
        _ => {
            let _ = inst.set_alignment(if e.m.nvptx { ty.size() } else { 1 });
        }
    }
    if volatile {
        let _ = inst.set_volatile(true);
    }
    v.into_int_value()
}

/// PTX ISA 9.7.8.7 ld (and 9.7.8.8 ld.global.nc, 9.7.8.9 ldu): scalar and vector loads in
/// every state space; wider destination registers are sign/zero-extended (Table 25).
fn ld<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ty = the_type(e, i)?;
    let space = space_of(i);
    let volatile = i.has_mod("volatile");
    // (.release is not a load ordering; the validator rejects it, map it to relaxed anyway.)
    let ord = access_ordering(i).map(|o| if o == AtomicOrdering::Release { AtomicOrdering::Monotonic } else { o });
    let [d, a] = &i.operands[..] else { return Err(e.err(i.span, "`ld` takes two operands")) };
    let base = e.address(a, space)?;
    if !e.m.nvptx && (ord.is_some() || volatile) && matches!(space, None | Some(StateSpace::Global)) {
        spin_hint(e);
    }
    let n = vec_width(i);
    let i8t = e.ctx().i8_type();
    let elem_ty = if ty == Type::Pred { Type::B8 } else { ty };
    e.check_access(base, n * elem_ty.size(), false, space, volatile || ord.is_some(), false);
    match d {
        Operand::Vector(ds, _) => {
            if ds.len() as u32 != n {
                return Err(e.err(d.span(), format!("vector of {} registers for `.v{n}`", ds.len())));
            }
            for (k, dst) in ds.iter().enumerate() {
                let p = unsafe { e.b.build_gep(i8t, base, &[e.ctx().i64_type().const_int((k as u32 * elem_ty.size()) as u64, false)], "").unwrap() };
                let v = load_elem(e, p, elem_ty, volatile, ord);
                let v = e.from_bits(v, ty);
                e.write(dst, ty, v)?;
            }
            Ok(())
        }
        _ if space == Some(StateSpace::Param) && e.is_kernel && ord.is_none() && !volatile && ty != Type::Pred && e.kparam_offset(a).is_some() => {
            let off = e.kparam_offset(a).unwrap();
            let v = e.kparam_load(off, elem_ty.bits());
            let v = e.from_bits(v, ty);
            e.write(d, ty, v)
        }
        _ => {
            let v = load_elem(e, base, elem_ty, volatile, ord);
            let v: BasicValueEnum = if ty == Type::Pred { e.b.build_int_compare(inkwell::IntPredicate::NE, v, v.get_type().const_zero(), "").unwrap().into() } else { e.from_bits(v, ty) };
            e.write(d, ty, v)
        }
    }
}

/// How often a load that waits for another CTA gives the core away ([`spin_hint`]).
const SPIN_YIELD_EVERY: u64 = 64;

/// Before a `.relaxed`/`.acquire`/`.volatile` load of global (or generic) memory: such loads
/// are how a thread waits for another CTA's store (cooperative groups' `grid.sync()` polls
/// the grid's arrival count with `ld.acquire.gpu`). In a cooperative launch every CTA runs on
/// a thread of its own, more threads than cores, and the CTA waited for may be waiting for
/// this core: there every [`SPIN_YIELD_EVERY`]th execution of such a load (a count per load
/// site, per call of the function) calls `sched_yield`, so that a spinning CTA lets the others run (NVRTC's `grid.sync()` with 256
/// CTAs on 2 cores: 3.9 s without, 0.6 s with, compilation included; every 256th load:
/// 0.7 s, every 4096th: 1.9 s). Other launches run at most one CTA per core and never yield.
fn spin_hint(e: &mut FnEmitter<'_, '_, '_>) {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let pt = ctx.ptr_type(inkwell::AddressSpace::default());
    let count = e.alloca_builder().build_alloca(i32t, "spins").unwrap();
    e.alloca_builder().build_store(count, i32t.const_zero()).unwrap();
    let ws = e.cta_field_ptr(super::abi::field::GRID_WS, None);
    let ws = e.b.build_load(pt, ws, "grid_ws").unwrap().into_pointer_value();
    let cooperative = e.b.build_is_not_null(ws, "cooperative").unwrap();
    let c = e.b.build_load(i32t, count, "").unwrap().into_int_value();
    let c = e.b.build_int_add(c, i32t.const_int(1, false), "").unwrap();
    e.b.build_store(count, c).unwrap();
    let low = e.b.build_and(c, i32t.const_int(SPIN_YIELD_EVERY - 1, false), "").unwrap();
    let due = e.b.build_int_compare(inkwell::IntPredicate::EQ, low, i32t.const_zero(), "").unwrap();
    let due = e.b.build_and(due, cooperative, "yield.due").unwrap();
    let yield_bb = ctx.append_basic_block(e.f, "spin.yield");
    let go = ctx.append_basic_block(e.f, "spin.go");
    e.b.build_conditional_branch(due, yield_bb, go).unwrap();
    e.b.position_at_end(yield_bb);
    let f = e.m.module.get_function("sched_yield").unwrap_or_else(|| e.m.module.add_function("sched_yield", i32t.fn_type(&[], false), None));
    e.b.build_call(f, &[], "").unwrap();
    e.b.build_unconditional_branch(go).unwrap();
    e.b.position_at_end(go);
}

/// PTX ISA 9.7.8.10 st: the low bits of wider source registers are stored (Table 24).
fn st<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ty = the_type(e, i)?;
    let space = space_of(i);
    let volatile = i.has_mod("volatile");
    let ord = access_ordering(i).map(|o| if o == AtomicOrdering::Acquire { AtomicOrdering::Monotonic } else { o });
    let [a, s] = &i.operands[..] else { return Err(e.err(i.span, "`st` takes two operands")) };
    let base = e.address(a, space)?;
    let i8t = e.ctx().i8_type();
    let elem_ty = if ty == Type::Pred { Type::B8 } else { ty };
    let srcs: Vec<&'a Operand<'a>> = match s {
        Operand::Vector(ss, _) => ss.iter().collect(),
        _ => vec![s],
    };
    e.check_access(base, srcs.len() as u32 * elem_ty.size(), true, space, volatile || ord.is_some(), false);
    for (k, src) in srcs.into_iter().enumerate() {
        let v = if ty == Type::Pred {
            let p = e.read(src, Type::Pred)?.into_int_value();
            e.b.build_int_z_extend(p, e.ctx().i8_type(), "").unwrap()
        } else {
            e.read_int(src, ty)?
        };
        let p = unsafe { e.b.build_gep(i8t, base, &[e.ctx().i64_type().const_int((k as u32 * elem_ty.size()) as u64, false)], "").unwrap() };
        let ord = if e.m.nvptx && ord == Some(AtomicOrdering::Release) {
            // As for loads: a fence, then a relaxed store.
            super::nvvm::fence(e, "sys");
            Some(AtomicOrdering::Monotonic)
        } else {
            ord
        };
        let st = e.b.build_store(p, v).unwrap();
        match ord {
            Some(o) if elem_ty.bits() <= 64 => {
                let _ = st.set_alignment(elem_ty.size());
                let _ = st.set_atomic_ordering(o);
            }
            _ => {
                let _ = st.set_alignment(if e.m.nvptx { elem_ty.size() } else { 1 });
            }
        }
        if volatile {
            let _ = st.set_volatile(true);
        }
    }
    Ok(())
}

/// PTX ISA 9.7.8.13 cvta: shared addresses are window offsets; other spaces are identity.
fn cvta<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ty = the_type(e, i)?;
    let to = i.has_mod("to");
    let space = space_of(i);
    let [d, a] = &i.operands[..] else { return Err(e.err(i.span, "`cvta` takes two operands")) };
    let v = e.read_int(a, ty)?;
    let v64 = e.resize(v, 64, false);
    let out = if e.m.nvptx {
        super::nvvm::cvta(e, v64, space, to)
    } else if space == Some(StateSpace::Shared) {
        let base = e.shared_base();
        let bi = e.b.build_ptr_to_int(base, e.ctx().i64_type(), "").unwrap();
        if to {
            e.b.build_int_sub(v64, bi, "").unwrap()
        } else {
            let off = e.resize(e.resize(v64, 32, false), 64, false);
            e.b.build_int_add(off, bi, "").unwrap()
        }
    } else if space == Some(StateSpace::Param) && !to && e.kernel_param_space() {
        // A kernel parameter's address from a 32-bit register is its offset in the parameter
        // space (below 64 KiB: CUDA allows 32764 bytes of parameters); a 64-bit one (`mov.b64
        // %rd, param`) is already generic. No host pointer lies below 64 KiB.
        let i64t = e.ctx().i64_type();
        let base = e.params_base();
        let bi = e.b.build_ptr_to_int(base, i64t, "").unwrap();
        let small = e.b.build_int_compare(inkwell::IntPredicate::ULT, v64, i64t.const_int(1 << 16, false), "").unwrap();
        let abs = e.b.build_int_add(v64, bi, "").unwrap();
        e.b.build_select(small, abs, v64, "").unwrap().into_int_value()
    } else {
        v64
    };
    let out = e.resize(out, ty.bits(), false);
    e.write(d, ty, out.into())
}

/// PTX ISA 9.7.8.12 isspacep: global = not in this CTA's shared window (host memory that is
/// not shared); shared = inside the window; `.shared::cluster` (PTX 7.8) = inside the
/// window of a CTA of the cluster.
fn isspacep<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let space = space_of(i);
    let [d, a] = &i.operands[..] else { return Err(e.err(i.span, "`isspacep` takes two operands")) };
    let v = e.read_int(a, Type::U64)?;
    if i.has_mod("shared::cluster") {
        let r = if e.m.nvptx {
            let i32t = e.ctx().i32_type();
            let r = super::nvvm::inline_ptx(e, Some(i32t.into()), "{ .reg .pred p; isspacep.shared::cluster p, $1; selp.u32 $0, 1, 0, p; }", "=r,l", &[v.into()]).unwrap().into_int_value();
            e.b.build_int_compare(inkwell::IntPredicate::NE, r, i32t.const_zero(), "").unwrap()
        } else {
            let (rel, _) = cluster_offset(e, v, true);
            let (_, inside) = rank_of(e, rel);
            inside
        };
        return e.write(d, Type::Pred, r.into());
    }
    if e.m.nvptx {
        let r = super::nvvm::isspacep(e, v, space);
        return e.write(d, Type::Pred, r.into());
    }
    // (`.shared` is this CTA's window.)
    let base = e.own_shared_base();
    let i64t = e.ctx().i64_type();
    let bi = e.b.build_ptr_to_int(base, i64t, "").unwrap();
    let total = e.load_cta_u32(super::abi::field::TOTAL_SMEM, None);
    let total = e.b.build_int_z_extend(total, i64t, "").unwrap();
    let rel = e.b.build_int_sub(v, bi, "").unwrap();
    let shared = e.b.build_int_compare(inkwell::IntPredicate::ULT, rel, total, "").unwrap();
    // Whether `v` lies in one of the ranges (address, size).
    let within = |e: &FnEmitter<'ctx, 'a, '_>, ranges: &[(IntValue<'ctx>, u64)]| {
        let mut any = e.ctx().bool_type().const_zero();
        for &(base, size) in ranges {
            let rel = e.b.build_int_sub(v, base, "").unwrap();
            let inside = e.b.build_int_compare(inkwell::IntPredicate::ULT, rel, i64t.const_int(size, false), "").unwrap();
            any = e.b.build_or(any, inside, "").unwrap();
        }
        any
    };
    // Local memory: this function's `.local` variables (a thread's local window).
    // On the warp path, the lane's own copies (`warp::lane_var`).
    let locals: Vec<(IntValue<'ctx>, u64)> = e.local_ranges.clone().into_iter().map(|(p, n)| (e.b.build_ptr_to_int(super::warp::lane_var(e, p), i64t, "").unwrap(), n as u64)).collect();
    let local = within(e, &locals);
    // Constant memory: the module's `.const` variables.
    let consts: Vec<(IntValue<'ctx>, u64)> = e.const_vars().into_iter().map(|(p, n)| (e.b.build_ptr_to_int(p, i64t, "").unwrap(), n as u64)).collect();
    let konst = within(e, &consts);
    let r = match space {
        Some(StateSpace::Shared) => shared,
        Some(StateSpace::Local) => local,
        Some(StateSpace::Const) => konst,
        // Global: any other address (host memory that is not a window of another space).
        _ => {
            let other = e.b.build_or(e.b.build_or(shared, local, "").unwrap(), konst, "").unwrap();
            e.b.build_not(other, "").unwrap()
        }
    };
    e.write(d, Type::Pred, r.into())
}

/// An address as a 64-bit offset from `FnEmitter::shared_base` (a shared address, `generic`
/// false, is one already; a generic one is the host address less the base's). Also returns
/// the base's host address.
fn cluster_offset<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, generic: bool) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let i64t = e.ctx().i64_type();
    let base = e.shared_base();
    let bi = e.b.build_ptr_to_int(base, i64t, "").unwrap();
    let v = e.resize(v, 64, false);
    let rel = if generic { e.b.build_int_sub(v, bi, "").unwrap() } else { v };
    (rel, bi)
}

/// The rank of the CTA of the cluster whose shared window holds offset `rel` (from
/// `FnEmitter::shared_base`, [`cluster_offset`]), and whether one does: the windows lie
/// `stride` bytes apart in rank order, each `%total_smem_size` bytes long (a cluster of one
/// CTA: its window).
fn rank_of<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, rel: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let (rank, inside, _) = window_of(e, rel);
    (rank, inside)
}

/// [`rank_of`], and the offset of `rel` in that CTA's window (i64).
pub(super) fn window_of<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, rel: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>) {
    use super::abi::{cluster_field, field};
    use inkwell::IntPredicate as P;
    let i64t = e.ctx().i64_type();
    let total = e.load_cta_u32(field::TOTAL_SMEM, None);
    let total = e.b.build_int_z_extend(total, i64t, "").unwrap();
    let stride = e.cluster_u32(cluster_field::STRIDE, None);
    let stride = e.b.build_int_z_extend(stride, i64t, "").unwrap();
    // Clusters of one CTA have no stride: the window's length serves (at least 1).
    let none = e.b.build_int_compare(P::EQ, stride, i64t.const_zero(), "").unwrap();
    let stride = e.b.build_select(none, total, stride, "").unwrap().into_int_value();
    let one = i64t.const_int(1, false);
    let stride = e.b.build_select(e.b.build_int_compare(P::EQ, stride, i64t.const_zero(), "").unwrap(), one, stride, "").unwrap().into_int_value();
    let my = e.cluster_rank();
    let my = e.b.build_int_z_extend(my, i64t, "").unwrap();
    let dims: Vec<_> = (0..3).map(|k| e.cluster_u32(cluster_field::DIMS, Some(k))).collect();
    let n = e.b.build_int_mul(e.b.build_int_mul(dims[0], dims[1], "").unwrap(), dims[2], "").unwrap();
    let n = e.b.build_int_z_extend(n, i64t, "").unwrap();
    // From the start of rank 0's window: where shared addresses count from in a module that
    // reaches other CTAs' windows; elsewhere they count from this CTA's.
    let from0 = if e.m.dsmem { rel } else { e.b.build_int_add(rel, e.b.build_int_mul(my, stride, "").unwrap(), "").unwrap() };
    let rank = e.b.build_int_unsigned_div(from0, stride, "").unwrap();
    let within = e.b.build_int_unsigned_rem(from0, stride, "").unwrap();
    let inside = e.b.build_and(
        e.b.build_int_compare(P::ULT, rank, n, "").unwrap(),
        e.b.build_int_compare(P::ULT, within, total, "").unwrap(),
        "",
    ).unwrap();
    (e.b.build_int_truncate(rank, e.ctx().i32_type(), "").unwrap(), inside, within)
}

/// Distributed shared memory (PTX 7.8, sm_90; PTX ISA 8.x, data movement: mapa, getctarank).
/// The CTAs of a cluster have their shared windows `stride` bytes (16 MiB) apart in rank
/// order (`abi::ClusterCtx`), and a shared address in a module that reaches them is
/// `rank * stride + offset` (`FnEmitter::shared_base`): this CTA's addresses are the same in
/// `.shared::cta` and `.shared::cluster`.
/// - `mapa{.shared::cluster}.type d, a, b`: d = the address in CTA b corresponding to a,
///   `a + (b - %cluster_ctarank) * stride`, for shared and generic addresses alike.
/// - `getctarank{.shared::cluster}.type d, a`: the rank of the CTA whose window holds a.
fn cluster_address<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ty = the_type(e, i)?;
    let shared = i.has_mod("shared::cluster");
    if e.m.nvptx {
        // The instruction itself, as inline PTX over the address's integer value.
        let ops = &i.operands;
        let w = if ty.bits() == 64 { "l" } else { "r" };
        let text = format!("{}.{}", i.opcode.name, i.mods.join("."));
        return match (i.opcode.name, &ops[..]) {
            ("mapa", [d, a, b]) => {
                let args = [e.read_int(a, ty)?.into(), e.read_int(b, Type::U32)?.into()];
                let r = super::nvvm::inline_ptx(e, Some(int_t(e.ctx(), ty.bits()).into()), &format!("{text} $0, $1, $2;"), &format!("={w},{w},r"), &args).unwrap();
                e.write(d, ty, r)
            }
            ("getctarank", [d, a]) => {
                let args = [e.read_int(a, ty)?.into()];
                let r = super::nvvm::inline_ptx(e, Some(e.ctx().i32_type().into()), &format!("{text} $0, $1;"), &format!("=r,{w}"), &args).unwrap();
                e.write(d, Type::U32, r)
            }
            _ => Err(e.err(i.span, "wrong number of operands")),
        };
    }
    let i64t = e.ctx().i64_type();
    match (i.opcode.name, &i.operands[..]) {
        ("mapa", [d, a, b]) => {
            let v = e.read_int(a, ty)?;
            let r = e.read_int(b, Type::U32)?;
            let stride = e.cluster_u32(super::abi::cluster_field::STRIDE, None);
            let my = e.cluster_rank();
            let r64 = e.b.build_int_z_extend(r, i64t, "").unwrap();
            let my64 = e.b.build_int_z_extend(my, i64t, "").unwrap();
            let delta = e.b.build_int_mul(e.b.build_int_sub(r64, my64, "").unwrap(), e.b.build_int_z_extend(stride, i64t, "").unwrap(), "").unwrap();
            let delta = e.resize(delta, ty.bits(), false);
            let out = e.b.build_int_add(v, delta, "mapa").unwrap();
            e.write(d, ty, out.into())
        }
        ("getctarank", [d, a]) => {
            let v = e.read_int(a, ty)?;
            let (rel, _) = cluster_offset(e, v, !shared);
            let (rank, _) = rank_of(e, rel);
            e.write(d, Type::U32, rank.into())
        }
        _ => Err(e.err(i.span, format!("`{}` takes {} operands", i.opcode.name, if i.opcode.name == "mapa" { 3 } else { 2 }))),
    }
}

/// cp.async (PTX ISA 7.0, sm_80): `cp.async.{ca,cg}.shared.global [dst], [src], cp-size{,
/// src-size}` copies src-size bytes (default cp-size; at most cp-size) and fills the rest of
/// cp-size with zeros. ptxr copies at once, which is one allowed completion order: the data may
/// be read only after cp.async.wait_group/wait_all, and those have nothing left to wait for
/// (one host thread runs the whole CTA, in order).
fn cp_async<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let i32t = e.ctx().i32_type();
    if i.has_mod("commit_group") || i.has_mod("wait_group") || i.has_mod("wait_all") {
        if e.m.nvptx {
            let (name, args): (&str, Vec<BasicValueEnum>) = if i.has_mod("commit_group") {
                ("llvm.nvvm.cp.async.commit.group", vec![])
            } else if i.has_mod("wait_all") {
                ("llvm.nvvm.cp.async.wait.all", vec![])
            } else {
                ("llvm.nvvm.cp.async.wait.group", vec![e.read_int(&i.operands[0], Type::U32)?.into()])
            };
            if e.try_intrinsic(name, &[], &args).is_none() {
                return Err(e.err(i.opcode.span, format!("LLVM has no intrinsic `{name}`")));
            }
        }
        return Ok(());
    }
    let size = match &i.operands[2] {
        Operand::Imm(x) => crate::syntax::eval::eval(x, &|_| None).map(|v| v.as_u64()).unwrap_or(0),
        _ => 0,
    };
    if !matches!(size, 4 | 8 | 16) || (i.has_mod("cg") && size != 16) {
        return Err(e.err(i.operands[2].span(), "cp-size must be 4, 8 or 16 (16 with .cg)"));
    }
    let dst = e.address(&i.operands[0], Some(StateSpace::Shared))?;
    let src = e.address(&i.operands[1], Some(StateSpace::Global))?;
    let src_size = i.operands.get(3).map(|op| e.read_int(op, Type::U32)).transpose()?;
    if e.m.nvptx {
        let cache = if i.has_mod("cg") { "cg" } else { "ca" };
        let name = format!("llvm.nvvm.cp.async.{cache}.shared.global.{size}{}", if src_size.is_some() { ".s" } else { "" });
        let mut args: Vec<BasicValueEnum> = vec![dst.into(), src.into()];
        args.extend(src_size.map(BasicValueEnum::from));
        if e.try_intrinsic(&name, &[], &args).is_none() {
            return Err(e.err(i.opcode.span, format!("LLVM has no intrinsic `{name}`")));
        }
        return Ok(());
    }
    let size_v = i32t.const_int(size, false);
    let n = match src_size {
        Some(n) => {
            let less = e.b.build_int_compare(inkwell::IntPredicate::ULT, n, size_v, "").unwrap();
            e.b.build_select(less, n, size_v, "").unwrap().into_int_value()
        }
        None => size_v,
    };
    // The checking mode: the copy writes cp-size bytes of shared memory as the issuing
    // thread's write (it happens here); it reads src-size bytes of global memory, checked
    // when that is the whole cp-size (a smaller src-size, 0 in a masked load, may come with
    // any source address).
    if e.m.check {
        e.check_access(dst, size as u32, true, Some(StateSpace::Shared), false, false);
        match src_size {
            None => e.check_access(src, size as u32, false, Some(StateSpace::Global), false, false),
            Some(_) => {
                let whole = e.b.build_int_compare(inkwell::IntPredicate::EQ, n, size_v, "").unwrap();
                let (yes, done) = (e.ctx().append_basic_block(e.f, "cp.check"), e.ctx().append_basic_block(e.f, "cp.checked"));
                e.b.build_conditional_branch(whole, yes, done).unwrap();
                e.b.position_at_end(yes);
                e.check_access(src, size as u32, false, Some(StateSpace::Global), false, false);
                e.b.build_unconditional_branch(done).unwrap();
                e.b.position_at_end(done);
            }
        }
    }
    e.b.build_memset(dst, 1, e.ctx().i8_type().const_zero(), size_v).unwrap();
    e.b.build_memcpy(dst, 1, src, 1, n).unwrap();
    Ok(())
}
