//! Special registers (chapter 10) and miscellaneous
//! instructions: trap, brkpt, nanosleep, pmevent, membar/fence; host services vprintf and
//! __assertfail.

use super::abi::{self, cluster_field, field};
use super::func::{int_t, FnEmitter, R};
use crate::syntax::ast::{Ident, Instr, Operand, Type};
use inkwell::values::{BasicMetadataValueEnum, IntValue};
use inkwell::AtomicOrdering;

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    match i.opcode.name {
        // PTX ISA 9.7.17.4 trap: ends the launch with an error.
        "trap" => {
            e.abort_with(abi::STATUS_TRAP);
            Ok(true)
        }
        // PTX ISA 9.7.17.1 brkpt: no debugger attached; reported like a trap.
        "brkpt" => {
            e.abort_with(abi::STATUS_BRKPT);
            Ok(true)
        }
        // PTX ISA 9.7.17.2 nanosleep, 9.7.17.3 pmevent: no effect on results.
        "nanosleep" | "pmevent" => Ok(true),
        // createpolicy (PTX 7.4): an opaque 64-bit cache policy, read only by the
        // `.L2::cache_hint` operands that `syntax::hints` drops. `.cvt` passes a policy on.
        "createpolicy" => {
            let v = if i.has_mod("cvt") { e.read_int(&i.operands[1], Type::B64)? } else { e.ctx().i64_type().const_zero() };
            e.write(&i.operands[0], Type::B64, v.into())?;
            Ok(true)
        }
        // Proxy fences (PTX 7.5-8.0) order the generic proxy against the async and alias
        // proxies, which a CPU does not have; fence.mbarrier_init orders mbarrier.init for
        // other CTAs of a cluster (clusters of one CTA here); griddepcontrol (PTX 7.8)
        // coordinates dependent launches, which run one after another here; setmaxnreg
        // (PTX 8.0) is a register-count hint. None changes a result. For the NVPTX backend
        // the first three are kept as inline PTX (setmaxnreg needs an sm_90a target).
        "fence" if i.has_mod("proxy") || i.has_mod("mbarrier_init") => keep_for_nvptx(e, i),
        "griddepcontrol" => keep_for_nvptx(e, i),
        // PTX ISA 8.x barrier.cluster.arrive (`.release` by default, `.relaxed`): the
        // arrival is counted at the thread's `barrier.cluster.wait` (see `lanes::is_cluster_arrive`);
        // the runtime's meeting of the cluster's CTAs orders memory as `.release`/`.acquire` ask.
        "barrier" if crate::lanes::is_cluster_arrive(i) => keep_for_nvptx(e, i),
        "setmaxnreg" => Ok(true),
        // elect.sync d|p, membermask (PTX 8.0): every lane of membermask takes part (.sync);
        // the PTX ISA asks only for a deterministic choice, and the leader is the lowest lane
        // of the mask: d = its lane number, p = whether this lane is the leader. (A lane of
        // the mask that has exited is not skipped.)
        "elect" => {
            let i32t = e.ctx().i32_type();
            let mask = e.read_int(&i.operands[1], Type::B32)?;
            let lead = e.intrinsic("llvm.cttz", &[i32t.into()], &[mask.into(), e.ctx().bool_type().const_zero().into()]).into_int_value();
            let lane = if e.m.nvptx {
                let id = crate::syntax::ast::Ident { name: "%laneid", span: i.span };
                super::nvvm::sreg(e, &id, None)?
            } else {
                e.lane_id()
            };
            let is = e.b.build_int_compare(inkwell::IntPredicate::EQ, lane, lead, "elected").unwrap();
            match &i.operands[0] {
                crate::syntax::ast::Operand::Pair(d, p) => {
                    e.write(d, Type::B32, lead.into())?;
                    e.write(p, Type::Pred, is.into())?;
                }
                d => e.write(d, Type::B32, lead.into())?,
            }
            Ok(true)
        }
        // PTX ISA 9.7.12.3 membar/fence: a sequentially consistent CPU fence.
        "membar" | "fence" if e.m.nvptx => {
            let scope = ["cta", "gpu", "gl", "sys"].into_iter().find(|m| i.has_mod(m)).unwrap_or("sys");
            super::nvvm::fence(e, scope);
            Ok(true)
        }
        "membar" | "fence" => {
            e.b.build_fence(AtomicOrdering::SequentiallyConsistent, false, "").unwrap();
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Reads a special register (chapter 10) as an integer of its natural width.
pub fn special_reg<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, id: &Ident<'a>, comp: Option<char>) -> R<IntValue<'ctx>> {
    if e.m.nvptx {
        return super::nvvm::sreg(e, id, comp);
    }
    let i32t = e.ctx().i32_type();
    let k = match comp {
        Some('x') | None => 0,
        Some('y') => 1,
        Some('z') => 2,
        // PTX ISA 10.1-10.2, 10.5-10.6: %tid, %ntid, %ctaid and %nctaid are .v4 .u32; the
        // fourth element is unused and always returns zero.
        Some('w') if matches!(id.name, "%tid" | "%ntid" | "%ctaid" | "%nctaid" | "%clusterid" | "%nclusterid" | "%cluster_ctaid" | "%cluster_nctaid") => return Ok(i32t.const_zero()),
        Some(_) => return Err(e.err(id.span, "special registers have components .x, .y, .z (and .w, always 0, for %tid, %ntid, %ctaid, %nctaid)")),
    };
    Ok(match id.name {
        "%tid" => e.tid[k],
        "%ntid" => e.load_cta_u32(field::NTID, Some(k as u32)),
        "%ctaid" => e.load_cta_u32(field::CTAID, Some(k as u32)),
        "%nctaid" => e.load_cta_u32(field::NCTAID, Some(k as u32)),
        // PTX ISA 10.3 %laneid, 10.4 %warpid: from the linear thread index.
        "%laneid" => e.lane_id(),
        "%warpid" => {
            let l = e.linear_tid();
            e.b.build_right_shift(l, i32t.const_int(5, false), false, "").unwrap()
        }
        "%nwarpid" => i32t.const_int(32, false),
        "%warpsize" => i32t.const_int(32, false),
        "%smid" => e.load_cta_u32(field::SMID, None),
        "%nsmid" => i32t.const_int(rayon_threads() as u64, false),
        "%gridid" => e.ctx().i64_type().const_zero(),
        "%lanemask_eq" | "%lanemask_le" | "%lanemask_lt" | "%lanemask_ge" | "%lanemask_gt" => {
            let l = e.linear_tid();
            let lane = e.b.build_and(l, i32t.const_int(31, false), "").unwrap();
            let one = e.b.build_left_shift(i32t.const_int(1, false), lane, "").unwrap();
            let lt = e.b.build_int_sub(one, i32t.const_int(1, false), "").unwrap();
            match id.name {
                "%lanemask_eq" => one,
                "%lanemask_lt" => lt,
                "%lanemask_le" => e.b.build_or(lt, one, "").unwrap(),
                "%lanemask_ge" => e.b.build_not(lt, "").unwrap(),
                _ => e.b.build_not(e.b.build_or(lt, one, "").unwrap(), "").unwrap(),
            }
        }
        "%clock" | "%clock_hi" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" => {
            let t = timer(e);
            match id.name {
                "%clock" | "%globaltimer_lo" => e.b.build_int_truncate(t, i32t, "").unwrap(),
                "%clock_hi" | "%globaltimer_hi" => {
                    let s = e.b.build_right_shift(t, e.ctx().i64_type().const_int(32, false), false, "").unwrap();
                    e.b.build_int_truncate(s, i32t, "").unwrap()
                }
                _ => t,
            }
        }
        // Clusters (PTX ISA 8.x special registers %clusterid, %nclusterid, %cluster_ctaid,
        // %cluster_nctaid, %cluster_ctarank, %cluster_nctarank; sm_90): the grid is cut into
        // clusters of %cluster_nctaid CTAs (`CtaCtx::cluster`; 1x1x1 without one), so a CTA's
        // cluster is its %ctaid divided by that shape and its place in it the remainder; its
        // rank counts the places x fastest.
        "%cluster_nctaid" => e.cluster_u32(cluster_field::DIMS, Some(k as u32)),
        "%cluster_ctaid" | "%clusterid" | "%nclusterid" => {
            let n = e.cluster_u32(cluster_field::DIMS, Some(k as u32));
            let v = e.load_cta_u32(if id.name == "%nclusterid" { field::NCTAID } else { field::CTAID }, Some(k as u32));
            if id.name == "%cluster_ctaid" {
                e.b.build_int_unsigned_rem(v, n, "").unwrap()
            } else {
                e.b.build_int_unsigned_div(v, n, "").unwrap()
            }
        }
        "%cluster_ctarank" => e.cluster_rank(),
        "%cluster_nctarank" => {
            let d: Vec<_> = (0..3).map(|k| e.cluster_u32(cluster_field::DIMS, Some(k))).collect();
            e.b.build_int_mul(e.b.build_int_mul(d[0], d[1], "").unwrap(), d[2], "").unwrap()
        }
        "%is_explicit_cluster" => e.ctx().bool_type().const_int(e.explicit_cluster as u64, false),
        "%dynamic_smem_size" => e.load_cta_u32(field::DYN_SMEM, None),
        "%total_smem_size" => e.load_cta_u32(field::TOTAL_SMEM, None),
        n if n.starts_with("%pm") => {
            if n.ends_with("_64") {
                e.ctx().i64_type().const_zero()
            } else {
                i32t.const_zero()
            }
        }
        // PTX ISA 10.20 %envreg<32>: read-only registers whose contents the driver defines.
        // CUDA's driver passes a cooperative launch's grid workspace in two of them, the
        // address's high half in %envreg1 and its low half in %envreg2 (cooperative groups
        // rebuild it and trap if it is null: a grid that was not launched cooperatively);
        // ptxr does the same (`CtaCtx::grid_ws`, null in other launches). The others read 0.
        "%envreg1" | "%envreg2" => {
            let i64t = e.ctx().i64_type();
            let p = e.cta_field_ptr(field::GRID_WS, None);
            let ws = e.b.build_load(e.ctx().ptr_type(inkwell::AddressSpace::default()), p, "grid_ws").unwrap().into_pointer_value();
            let ws = e.b.build_ptr_to_int(ws, i64t, "").unwrap();
            let half = if id.name == "%envreg1" { e.b.build_right_shift(ws, i64t.const_int(32, false), false, "").unwrap() } else { ws };
            e.b.build_int_truncate(half, i32t, "").unwrap()
        }
        n if n.starts_with("%envreg") => i32t.const_zero(),
        n => return Err(e.err(id.span, format!("special register `{n}` is not supported"))),
    })
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The host's `globaltimer` callback (nanoseconds).
fn timer<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let rt = e.cta_ptr_field(field::RT);
    let pt = e.ctx().ptr_type(inkwell::AddressSpace::default());
    let fp_slot = unsafe { e.b.build_in_bounds_gep(pt, rt, &[e.ctx().i32_type().const_int(1, false)], "").unwrap() };
    let fp = e.b.build_load(pt, fp_slot, "").unwrap().into_pointer_value();
    let fnt = e.ctx().i64_type().fn_type(&[], false);
    e.b.build_indirect_call(fnt, fp, &[], "").unwrap().try_as_basic_value().basic().unwrap().into_int_value()
}

/// `call (ret), vprintf, (fmt, args);` — printf on the host (the CUDA runtime's ABI: a
/// format string pointer and a packed argument buffer, each argument at its natural alignment).
pub fn vprintf<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>, rets: &'a [Operand<'a>], args: &'a [Operand<'a>]) -> R<()> {
    if e.m.nvptx {
        let mut vs = Vec::new();
        for a in args.iter().take(2) {
            vs.push(param_value(e, a)?);
        }
        let r = super::nvvm::vprintf(e, &vs);
        if let Some(d) = rets.first() {
            store_param(e, d, r, Type::S32)?;
        }
        return Ok(());
    }
    let pt = e.ctx().ptr_type(inkwell::AddressSpace::default());
    let mut vals: Vec<BasicMetadataValueEnum> = Vec::new();
    let host = e.cta_ptr_field(field::HOST);
    vals.push(host.into());
    for a in args.iter().take(2) {
        let v = param_value(e, a)?;
        vals.push(e.b.build_int_to_ptr(v, pt, "").unwrap().into());
    }
    while vals.len() < 3 {
        vals.push(pt.const_null().into());
    }
    let rt = e.cta_ptr_field(field::RT);
    let fp = e.b.build_load(pt, rt, "").unwrap().into_pointer_value();
    let fnt = e.ctx().i32_type().fn_type(&[pt.into(), pt.into(), pt.into()], false);
    let r = e.b.build_indirect_call(fnt, fp, &vals, "").unwrap().try_as_basic_value().basic().unwrap();
    if let Some(d) = rets.first() {
        store_param(e, d, r.into_int_value(), Type::S32)?;
    }
    Ok(())
}

/// `call (p), malloc, (size);` and `call free, (p);`: CUDA's device heap (the CUDA
/// programming guide's dynamic global memory allocation), which the GPU's runtime provides
/// as external functions. On the CPU they are the C library's `malloc` and `free` (thread
/// safe, 16-byte aligned, NULL when the memory runs out); in NVVM IR they stay the external
/// calls ptxas knows.
pub fn heap_call<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, name: &str, rets: &'a [Operand<'a>], args: &'a [Operand<'a>]) -> R<()> {
    let ctx = e.ctx();
    let (i64t, pt) = (ctx.i64_type(), ctx.ptr_type(inkwell::AddressSpace::default()));
    let Some(a) = args.first() else { return Err(e.err(i.span, format!("`{name}` takes one argument"))) };
    let v = param_value(e, a)?;
    if name == "malloc" {
        let f = e.m.module.get_function("malloc").unwrap_or_else(|| e.m.module.add_function("malloc", pt.fn_type(&[i64t.into()], false), None));
        let p = e.b.build_call(f, &[v.into()], "heap").unwrap().try_as_basic_value().basic().unwrap().into_pointer_value();
        // The checking mode records the block as memory the kernel may reach.
        e.check_note_heap(p, v, true);
        let r = e.b.build_ptr_to_int(p, i64t, "").unwrap();
        if let Some(d) = rets.first() {
            store_param(e, d, r, Type::B64)?;
        }
    } else {
        let f = e.m.module.get_function("free").unwrap_or_else(|| e.m.module.add_function("free", ctx.void_type().fn_type(&[pt.into()], false), None));
        let p = e.b.build_int_to_ptr(v, pt, "").unwrap();
        e.check_note_heap(p, i64t.const_zero(), false);
        e.b.build_call(f, &[p.into()], "").unwrap();
    }
    Ok(())
}

/// CUDA dynamic parallelism (the CUDA programming guide's device runtime API, whose PTX
/// form is calls of external functions):
/// `call (buf), cudaGetParameterBufferV2, (kernel, grid, block, smem);` — `kernel` is a
/// kernel's name as an address, `grid` and `block` are `.b8[12]` parameters of three u32 —
/// returns a parameter buffer for that launch (NULL if none), which the thread fills; then
/// `call (err), cudaLaunchDeviceV2, (buf, stream);` launches it (`cudaError_t`). The runtime
/// runs launched grids after the launching grid (`ptxr_runtime`'s `run_children`).
pub fn device_launch<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, name: &str, rets: &'a [Operand<'a>], args: &'a [Operand<'a>]) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t, pt) = (ctx.i32_type(), ctx.i64_type(), ctx.ptr_type(inkwell::AddressSpace::default()));
    let host = e.cta_ptr_field(field::HOST);
    let rt = e.cta_ptr_field(field::RT);
    let slot = |e: &FnEmitter<'ctx, 'a, '_>, k: u64| unsafe { e.b.build_in_bounds_gep(pt, rt, &[i32t.const_int(k, false)], "").unwrap() };
    if name.ends_with("GetParameterBufferV2") {
        if args.len() != 4 {
            return Err(e.err(i.span, format!("`{name}` takes four arguments: the kernel, the grid and block dimensions, the dynamic shared memory")));
        }
        let kernel = param_value(e, &args[0])?;
        let mut vals: Vec<BasicMetadataValueEnum> = vec![host.into(), e.b.build_int_to_ptr(kernel, pt, "").unwrap().into()];
        for a in &args[1..3] {
            // A `.b8[12]` parameter: three u32 (x, y, z).
            let p = match a {
                Operand::Name(id, None) => match e.var(id.name) {
                    Some(super::func::VarLoc::Ptr(p, _)) => p,
                    _ => return Err(e.err(i.span, format!("`{name}`: the grid and block dimensions are `.param .b8 [12]` arguments"))),
                },
                _ => return Err(e.err(i.span, format!("`{name}`: the grid and block dimensions are `.param .b8 [12]` arguments"))),
            };
            for k in 0..3u64 {
                let q = unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), p, &[i64t.const_int(4 * k, false)], "").unwrap() };
                vals.push(e.b.build_load(i32t, q, "").unwrap().into());
            }
        }
        let smem = param_value(e, &args[3])?;
        vals.push(e.b.build_int_truncate(smem, i32t, "").unwrap().into());
        let fp = e.b.build_load(pt, slot(e, 4), "").unwrap().into_pointer_value();
        let fnt = pt.fn_type(&[pt.into(), pt.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into()], false);
        let r = e.b.build_indirect_call(fnt, fp, &vals, "").unwrap().try_as_basic_value().basic().unwrap().into_pointer_value();
        let r = e.b.build_ptr_to_int(r, i64t, "").unwrap();
        if let Some(d) = rets.first() {
            store_param(e, d, r, Type::B64)?;
        }
    } else {
        if args.len() != 2 {
            return Err(e.err(i.span, format!("`{name}` takes two arguments: the parameter buffer and the stream")));
        }
        let buf = param_value(e, &args[0])?;
        let stream = param_value(e, &args[1])?;
        let fp = e.b.build_load(pt, slot(e, 5), "").unwrap().into_pointer_value();
        let fnt = i32t.fn_type(&[pt.into(), pt.into(), i64t.into()], false);
        let r = e.b.build_indirect_call(fnt, fp, &[host.into(), e.b.build_int_to_ptr(buf, pt, "").unwrap().into(), stream.into()], "").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
        if let Some(d) = rets.first() {
            store_param(e, d, r, Type::S32)?;
        }
    }
    Ok(())
}

/// `call __assertfail, (msg, file, line, func, charsize);` — reports and stops the launch.
pub fn assertfail<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>, args: &'a [Operand<'a>]) -> R<()> {
    if e.m.nvptx {
        if args.len() != 5 {
            return Err(e.err(_i.span, "`__assertfail` takes five arguments"));
        }
        let mut vs = Vec::new();
        for a in args {
            vs.push(param_value(e, a)?);
        }
        super::nvvm::assertfail(e, &vs);
        e.abort_with(abi::STATUS_ASSERT);
        return Ok(());
    }
    let pt = e.ctx().ptr_type(inkwell::AddressSpace::default());
    let mut vals: Vec<BasicMetadataValueEnum> = vec![e.cta_ptr_field(field::HOST).into()];
    for (k, a) in args.iter().take(4).enumerate() {
        let v = param_value(e, a)?;
        if k == 2 {
            vals.push(e.b.build_int_truncate(v, e.ctx().i32_type(), "").unwrap().into());
        } else {
            vals.push(e.b.build_int_to_ptr(v, pt, "").unwrap().into());
        }
    }
    if vals.len() != 5 {
        return Err(e.err(_i.span, "`__assertfail` takes five arguments"));
    }
    let rt = e.cta_ptr_field(field::RT);
    let slot = unsafe { e.b.build_in_bounds_gep(pt, rt, &[e.ctx().i32_type().const_int(2, false)], "").unwrap() };
    let fp = e.b.build_load(pt, slot, "").unwrap().into_pointer_value();
    let fnt = e.ctx().void_type().fn_type(&[pt.into(), pt.into(), pt.into(), e.ctx().i32_type().into(), pt.into()], false);
    e.b.build_indirect_call(fnt, fp, &vals, "").unwrap();
    e.abort_with(abi::STATUS_ASSERT);
    Ok(())
}

/// The 64-bit value of a call argument: a `.param` variable's contents, a register or an immediate.
fn param_value<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, a: &'a Operand<'a>) -> R<IntValue<'ctx>> {
    if let Operand::Name(id, None) = a {
        if let Some(super::func::VarLoc::Ptr(p, ty)) = e.var(id.name) {
            let t = int_t(e.ctx(), ty.bits().max(8));
            let v = e.b.build_load(t, p, "").unwrap().into_int_value();
            return Ok(e.resize(v, 64, false));
        }
    }
    e.read_int(a, Type::B64)
}

/// Stores `v` to a call's return operand: a `.param` variable (at its width) or a register
/// (as `ty`).
fn store_param<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, d: &'a Operand<'a>, v: IntValue<'ctx>, ty: Type) -> R<()> {
    if let Operand::Name(id, None) = d {
        if let Some(super::func::VarLoc::Ptr(p, ty)) = e.var(id.name) {
            let v = e.resize(v, ty.bits().max(8), true);
            e.b.build_store(p, v).unwrap();
            return Ok(());
        }
    }
    e.write(d, ty, v.into())
}


/// An instruction with no effect on a CPU, kept as inline PTX for LLVM's NVPTX backend.
pub(super) fn keep_for_nvptx<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if e.m.nvptx {
        let text = std::iter::once(i.opcode.name).chain(i.mods.iter().copied()).collect::<Vec<_>>().join(".");
        super::nvvm::inline_ptx(e, None, &format!("{text};"), "", &[]);
    }
    Ok(true)
}
