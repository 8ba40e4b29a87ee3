//! NVVM-form LLVM IR for LLVM's NVPTX backend: the other direction of the pipeline, used by
//! `ptxr compile --target nvptx64` and `ptxr roundtrip`.
//!
//! The same `FnEmitter` and instruction families as the CPU path emit the per-thread
//! semantics; this file holds what differs for a GPU target:
//! - one thread per LLVM function: a kernel is `void @name(params…)` marked in
//!   `!nvvm.annotations`, with no CTA context and no thread loops;
//! - special registers are `llvm.nvvm.read.ptx.sreg.*` (inline `mov` where LLVM has no
//!   intrinsic, e.g. `%dynamic_smem_size`);
//! - warp and barrier instructions are the matching `llvm.nvvm.*` intrinsics (inline PTX for
//!   the forms LLVM 19 has no intrinsic for: `bar.arrive`, `bar.red` on barriers other than 0);
//! - state spaces are NVPTX address spaces: global 1, shared 3, const 4; `.local` and
//!   function `.param` storage are allocas addressed generically;
//! - `vprintf` and `__assertfail` are external calls, `trap` is `llvm.trap`.
//!
//! Kernel parameters keep their PTX types and order (aggregates are `byval` byte arrays with
//! their alignment), so the parameter buffer layout of PTX' equals the original's.

use super::func::{int_t, FnEmitter, R};
use super::{decl_align, decl_size, KernelInfo as KernelInfoRef, ModCtx};
use crate::syntax::ast::{self, Ident, Instr, Operand, StateSpace, Type};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::{AnyType, BasicMetadataTypeEnum, BasicType, BasicTypeEnum, FunctionType};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, GlobalValue, IntValue, PointerValue};
use inkwell::AddressSpace;

const AS_GLOBAL: u16 = 1;
const AS_SHARED: u16 = 3;
const AS_CONST: u16 = 4;
const AS_LOCAL: u16 = 5;

/// The `addrspace(3)` global of a `.shared` variable. Function-scope variables get a module
/// name of their own; `.extern .shared` arrays (dynamic shared memory) keep their name and
/// are shared by every declaration of it.
pub(crate) fn shared_global<'ctx>(m: &mut ModCtx<'ctx, '_>, v: &ast::VarDecl, func: Option<&str>) -> GlobalValue<'ctx> {
    let ext = v.linkage == Some(ast::Linkage::Extern);
    let name = match func {
        Some(f) if !ext => format!("__ptxr_sh_{f}_{}", v.name.name),
        _ => v.name.name.to_string(),
    };
    let align = decl_align(v).max(4);
    if let Some(g) = m.module.get_global(&name) {
        if g.get_alignment() < align {
            g.set_alignment(align);
        }
        return g;
    }
    let i8t = m.ctx.i8_type();
    let t = i8t.array_type(if ext { 0 } else { decl_size(v).max(1) });
    let g = m.module.add_global(t, Some(AddressSpace::from(AS_SHARED)), &name);
    if ext {
        g.set_linkage(inkwell::module::Linkage::External);
    } else {
        g.set_initializer(&t.get_undef());
        g.set_linkage(inkwell::module::Linkage::Internal);
    }
    g.set_alignment(align);
    g
}

/// Declares a kernel as `void @name(params…)` and marks it in `!nvvm.annotations` (with its
/// `.reqntid` / `.maxntid`).
pub(crate) fn declare_kernel<'ctx>(m: &mut ModCtx<'ctx, '_>, f: &ast::Function, info: &KernelInfoRef) -> FunctionValue<'ctx> {
    let c = m.ctx;
    let ptr = c.ptr_type(AddressSpace::default());
    let mut tys: Vec<BasicMetadataTypeEnum> = Vec::new();
    let mut byval = Vec::new();
    for (k, (p, pi)) in f.params.iter().zip(info.params.iter()).enumerate() {
        if p.dims.is_empty() && p.vector.is_none() && p.ty != Type::Pred {
            let t: BasicTypeEnum = match p.ty {
                Type::F16 => c.f16_type().into(),
                Type::F32 => c.f32_type().into(),
                Type::F64 => c.f64_type().into(),
                t => int_t(c, t.bits()).into(),
            };
            tys.push(t.into());
        } else {
            tys.push(ptr.into());
            byval.push((k as u32, pi.size.max(1), pi.align));
        }
    }
    let fv = m.module.add_function(f.name.name, c.void_type().fn_type(&tys, false), None);
    for (k, size, align) in byval {
        let arr = c.i8_type().array_type(size);
        let kind = Attribute::get_named_enum_kind_id("byval");
        fv.add_attribute(AttributeLoc::Param(k), c.create_type_attribute(kind, arr.as_any_type_enum()));
        let kind = Attribute::get_named_enum_kind_id("align");
        fv.add_attribute(AttributeLoc::Param(k), c.create_enum_attribute(kind, align.max(1) as u64));
    }
    let i32t = c.i32_type();
    let annotate = |m: &mut ModCtx<'ctx, '_>, key: &str, v: u32| {
        let node = c.metadata_node(&[fv.as_global_value().as_pointer_value().into(), c.metadata_string(key).into(), i32t.const_int(v as u64, false).into()]);
        let _ = m.module.add_global_metadata("nvvm.annotations", &node);
    };
    annotate(m, "kernel", 1);
    for (dims, prefix) in [(info.reqntid, "reqntid"), (info.maxntid, "maxntid")] {
        if let Some(d) = dims {
            for (k, axis) in ["x", "y", "z"].iter().enumerate() {
                annotate(m, &format!("{prefix}{axis}"), d[k]);
            }
        }
    }
    // `.maxclusterrank` (sm_90). LLVM 19 has no annotation that writes `.explicitcluster` or
    // `.reqnctapercluster`; PTX' loses them (only `%is_explicit_cluster` can tell).
    for d in &f.perf {
        if let ast::PerfDirective::MaxClusterRank(n) = d {
            annotate(m, "maxclusterrank", *n);
        }
    }
    fv
}

/// Kernel entry: the parameters are stored into a buffer with the CPU layout (SROA removes
/// it again), and the body runs as the single thread of this function.
pub(crate) fn kernel_prologue<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, info: &KernelInfoRef) -> R<()> {
    let c = e.ctx();
    let i8t = c.i8_type();
    let i64t = c.i64_type();
    let buf_t = i8t.array_type(info.param_size.max(1));
    let buf = e.alloca_builder().build_alloca(buf_t, "params").unwrap();
    if let Some(inst) = buf.as_instruction() {
        let _ = inst.set_alignment(16);
    }
    for (k, pi) in info.params.iter().enumerate() {
        let a = e.f.get_nth_param(k as u32).unwrap();
        let b = e.alloca_builder();
        let p = unsafe { b.build_in_bounds_gep(i8t, buf, &[i64t.const_int(pi.offset as u64, false)], "").unwrap() };
        match a {
            BasicValueEnum::PointerValue(src) => {
                b.build_memcpy(p, 1, src, pi.align.max(1), i64t.const_int(pi.size as u64, false)).map_err(|m| e.err(e.span, format!("internal error: {m}")))?;
            }
            v => {
                let st = b.build_store(p, v).unwrap();
                let _ = st.set_alignment(1);
            }
        }
    }
    e.params_ptr = Some(buf);
    let ret = c.append_basic_block(e.f, "ret");
    let body = c.append_basic_block(e.f, "body");
    e.b.build_unconditional_branch(body).unwrap();
    e.b.position_at_end(ret);
    e.b.build_return(None).unwrap();
    e.exit_bb = ret;
    e.ret_bb = ret;
    e.b.position_at_end(body);
    Ok(())
}

/// A pointer in the NVPTX address space of `space` for an address value.
pub(crate) fn space_ptr<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, space: Option<StateSpace>) -> PointerValue<'ctx> {
    let aspace = match space {
        Some(StateSpace::Global) => AS_GLOBAL,
        Some(StateSpace::Shared) => AS_SHARED,
        Some(StateSpace::Const) => AS_CONST,
        Some(StateSpace::Local) => AS_LOCAL,
        _ => 0,
    };
    let v = e.resize(v, 64, false);
    e.b.build_int_to_ptr(v, e.ctx().ptr_type(AddressSpace::from(aspace)), "").unwrap()
}

/// Calls an LLVM intrinsic that is not overloaded.
fn call_intr<'ctx>(e: &FnEmitter<'ctx, '_, '_>, name: &str, args: &[BasicValueEnum<'ctx>]) -> Option<BasicValueEnum<'ctx>> {
    e.try_intrinsic(name, &[], args).unwrap_or_else(|| panic!("LLVM intrinsic {name}")).try_as_basic_value().basic()
}

/// Inline PTX with register operands (`$0`… in `asm`; constraints as LLVM writes them).
pub(crate) fn inline_ptx<'ctx>(e: &FnEmitter<'ctx, '_, '_>, ret: Option<BasicTypeEnum<'ctx>>, asm: &str, constraints: &str, args: &[BasicValueEnum<'ctx>]) -> Option<BasicValueEnum<'ctx>> {
    let c = e.ctx();
    let params: Vec<BasicMetadataTypeEnum> = args.iter().map(|a| a.get_type().into()).collect();
    let fnt: FunctionType = match ret {
        Some(t) => t.fn_type(&params, false),
        None => c.void_type().fn_type(&params, false),
    };
    let asm_v = c.create_inline_asm(fnt, asm.to_string(), constraints.to_string(), true, false, None, false);
    let args: Vec<BasicMetadataValueEnum> = args.iter().map(|a| (*a).into()).collect();
    e.b.build_indirect_call(fnt, asm_v, &args, "").unwrap().try_as_basic_value().basic()
}

/// Special registers (chapter 10) through `llvm.nvvm.read.ptx.sreg.*`, at the widths the CPU
/// path gives them.
pub(crate) fn sreg<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, id: &Ident, comp: Option<char>) -> R<IntValue<'ctx>> {
    let name = id.name.trim_start_matches('%');
    let axis = match comp {
        Some('x') | None => "x",
        Some('y') => "y",
        Some('z') => "z",
        // The unused fourth element of the .v4 registers (10.1): always zero.
        Some('w') if matches!(name, "tid" | "ntid" | "ctaid" | "nctaid" | "clusterid" | "nclusterid" | "cluster_ctaid" | "cluster_nctaid") => return Ok(e.ctx().i32_type().const_zero()),
        Some(_) => return Err(e.err(id.span, "special registers have components .x, .y, .z (and .w, always 0, for %tid, %ntid, %ctaid, %nctaid)")),
    };
    let wide = matches!(name, "gridid" | "clock64" | "globaltimer") || name.ends_with("_64");
    let intr = match name {
        "tid" | "ntid" | "ctaid" | "nctaid" | "clusterid" | "nclusterid" => Some(format!("llvm.nvvm.read.ptx.sreg.{name}.{axis}")),
        "cluster_ctaid" | "cluster_nctaid" => Some(format!("llvm.nvvm.read.ptx.sreg.{}.{axis}", name.replace('_', "."))),
        "cluster_ctarank" | "cluster_nctarank" => Some(format!("llvm.nvvm.read.ptx.sreg.{}", name.replace('_', "."))),
        "is_explicit_cluster" => Some("llvm.nvvm.read.ptx.sreg.is.explicit.cluster".to_string()),
        "laneid" | "warpid" | "nwarpid" | "smid" | "nsmid" | "gridid" | "clock" | "clock64" | "globaltimer" | "warpsize" => Some(format!("llvm.nvvm.read.ptx.sreg.{name}")),
        n if n.starts_with("lanemask_") => Some(format!("llvm.nvvm.read.ptx.sreg.{}", n.replace('_', "."))),
        n if (n.starts_with("envreg") || n.starts_with("pm")) && !n.ends_with("_64") => Some(format!("llvm.nvvm.read.ptx.sreg.{n}")),
        _ => None,
    };
    if let Some(n) = intr.filter(|n| inkwell::intrinsics::Intrinsic::find(n).is_some()) {
        let v = call_intr(e, &n, &[]).expect("special register value").into_int_value();
        return Ok(v);
    }
    if !crate::syntax::validate::is_special_reg(id.name) {
        return Err(e.err(id.span, format!("special register `{}` is not supported", id.name)));
    }
    // No intrinsic in LLVM 19: read it with an inline `mov`.
    let (t, ty, cons) = if wide { (e.ctx().i64_type(), "u64", "=l") } else { (e.ctx().i32_type(), "u32", "=r") };
    let full = match comp {
        Some(c) => format!("{}.{c}", id.name),
        None => id.name.to_string(),
    };
    if name == "is_explicit_cluster" {
        // A predicate register.
        let v = inline_ptx(e, Some(t.into()), &format!("{{ .reg .pred %q; mov.pred %q, {full}; selp.u32 $0, 1, 0, %q; }}"), cons, &[]).unwrap().into_int_value();
        return Ok(e.b.build_int_compare(inkwell::IntPredicate::NE, v, t.const_zero(), "").unwrap());
    }
    Ok(inline_ptx(e, Some(t.into()), &format!("mov.{ty} $0, {full};"), cons, &[]).unwrap().into_int_value())
}

/// `trap` (and every other way a thread stops the launch with an error): `llvm.trap`.
/// `brkpt` stays a `brkpt` so that PTX' stops the same way.
pub(crate) fn trap(e: &mut FnEmitter<'_, '_, '_>, status: u32) {
    if status == super::abi::STATUS_BRKPT {
        inline_ptx(e, None, "brkpt;", "", &[]);
    }
    call_intr(e, "llvm.trap", &[]);
    e.b.build_unreachable().unwrap();
    e.after_terminator();
}

/// `atom{.sem}{.scope}{.space}.add.f32/f64 d, [addr], b` as inline PTX; returns d's bits.
pub(crate) fn atom_fadd<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, op: &str, addr: IntValue<'ctx>, b: inkwell::values::FloatValue<'ctx>) -> IntValue<'ctx> {
    let c = if b.get_type() == e.ctx().f32_type() { "=f,l,f" } else { "=d,l,d" };
    let r = inline_ptx(e, Some(b.get_type().into()), &format!("{op} $0, [$1], $2;"), c, &[addr.into(), b.into()]).unwrap();
    e.to_bits(r)
}

/// `exit` inside a `.func`: the thread ends here.
pub(crate) fn exit_thread(e: &mut FnEmitter<'_, '_, '_>) {
    inline_ptx(e, None, "exit;", "", &[]);
    e.b.build_unreachable().unwrap();
    e.after_terminator();
}

fn extern_fn<'ctx>(e: &FnEmitter<'ctx, '_, '_>, name: &str, t: FunctionType<'ctx>) -> FunctionValue<'ctx> {
    e.m.module.get_function(name).unwrap_or_else(|| e.m.module.add_function(name, t, Some(inkwell::module::Linkage::External)))
}

/// `vprintf(fmt, args)`: the CUDA device runtime's external function.
pub(crate) fn vprintf<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, args: &[IntValue<'ctx>]) -> IntValue<'ctx> {
    let c = e.ctx();
    let pt = c.ptr_type(AddressSpace::default());
    let f = extern_fn(e, "vprintf", c.i32_type().fn_type(&[pt.into(), pt.into()], false));
    let mut vals: Vec<BasicMetadataValueEnum> = args.iter().take(2).map(|v| e.b.build_int_to_ptr(*v, pt, "").unwrap().into()).collect();
    while vals.len() < 2 {
        vals.push(pt.const_null().into());
    }
    e.b.build_call(f, &vals, "").unwrap().try_as_basic_value().basic().unwrap().into_int_value()
}

/// `__assertfail(msg, file, line, func, charsize)`.
pub(crate) fn assertfail<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, args: &[IntValue<'ctx>]) {
    let c = e.ctx();
    let pt = c.ptr_type(AddressSpace::default());
    let f = extern_fn(e, "__assertfail", c.void_type().fn_type(&[pt.into(), pt.into(), c.i32_type().into(), pt.into(), c.i64_type().into()], false));
    let mut vals: Vec<BasicMetadataValueEnum> = Vec::new();
    for (k, v) in args.iter().enumerate().take(5) {
        vals.push(match k {
            2 => e.resize(*v, 32, false).into(),
            4 => e.resize(*v, 64, false).into(),
            _ => e.b.build_int_to_ptr(*v, pt, "").unwrap().into(),
        });
    }
    e.b.build_call(f, &vals, "").unwrap();
}

/// A memory fence of `scope` (`cta`, `gpu`/`gl`, `sys`): `llvm.nvvm.membar.*`, which the spec
/// (9.7.12.3) gives the semantics of `fence.sc`; LLVM 19's NVPTX backend has no pattern for
/// the IR `fence` instruction.
pub(crate) fn fence(e: &mut FnEmitter<'_, '_, '_>, scope: &str) {
    let name = match scope {
        "cta" => "llvm.nvvm.membar.cta",
        "gpu" | "gl" => "llvm.nvvm.membar.gl",
        _ => "llvm.nvvm.membar.sys",
    };
    call_intr(e, name, &[]);
}

/// PTX ISA 9.7.8.13 cvta: an `addrspacecast` between generic and global/shared/const/local.
/// A `.local` variable's storage is an alloca (generic); its address in the local space
/// (`mov.u64 %rd, lv`, [`local_address`]) and `cvta.to.local` are local-window addresses, so
/// that a 32-bit one (`cvt.u32.u64`) still addresses it.
pub(crate) fn cvta<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, space: Option<StateSpace>, to: bool) -> IntValue<'ctx> {
    let aspace = match space {
        Some(StateSpace::Global) => AS_GLOBAL,
        Some(StateSpace::Shared) => AS_SHARED,
        Some(StateSpace::Const) => AS_CONST,
        Some(StateSpace::Local) => AS_LOCAL,
        Some(StateSpace::Param) if !to => {
            // a kernel parameter's 32-bit address is the local-window address of the
            // parameters' copy (`FnEmitter::read`); a 64-bit one is generic already
            let c = e.ctx();
            let v = e.resize(v, 64, false);
            let p = e.b.build_int_to_ptr(v, c.ptr_type(AddressSpace::from(AS_LOCAL)), "").unwrap();
            let q = e.b.build_address_space_cast(p, c.ptr_type(AddressSpace::from(0)), "").unwrap();
            let g = e.b.build_ptr_to_int(q, c.i64_type(), "").unwrap();
            let small = e.b.build_int_compare(inkwell::IntPredicate::ULT, v, c.i64_type().const_int(1 << 32, false), "").unwrap();
            return e.b.build_select(small, g, v, "").unwrap().into_int_value();
        }
        _ => return e.resize(v, 64, false),
    };
    let c = e.ctx();
    let (from, into) = if to { (0, aspace) } else { (aspace, 0) };
    let v = e.resize(v, 64, false);
    let p = e.b.build_int_to_ptr(v, c.ptr_type(AddressSpace::from(from)), "").unwrap();
    let q = e.b.build_address_space_cast(p, c.ptr_type(AddressSpace::from(into)), "").unwrap();
    e.b.build_ptr_to_int(q, c.i64_type(), "").unwrap()
}

/// The local-space address of a `.local` variable's storage `p` (see [`cvta`]).
pub(crate) fn local_address<'ctx>(e: &FnEmitter<'ctx, '_, '_>, p: inkwell::values::PointerValue<'ctx>) -> IntValue<'ctx> {
    let c = e.ctx();
    let q = e.b.build_address_space_cast(p, c.ptr_type(AddressSpace::from(AS_LOCAL)), "").unwrap();
    e.b.build_ptr_to_int(q, c.i64_type(), "").unwrap()
}

/// PTX ISA 9.7.8.12 isspacep through `llvm.nvvm.isspacep.*`.
pub(crate) fn isspacep<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, space: Option<StateSpace>) -> IntValue<'ctx> {
    let name = match space {
        Some(StateSpace::Shared) => "shared",
        Some(StateSpace::Const) => "const",
        Some(StateSpace::Local) => "local",
        _ => "global",
    };
    let p = e.b.build_int_to_ptr(v, e.ctx().ptr_type(AddressSpace::default()), "").unwrap();
    call_intr(e, &format!("llvm.nvvm.isspacep.{name}"), &[p.into()]).unwrap().into_int_value()
}

/// Warp collectives and barriers (9.7.8.4-5, 9.7.12) as `llvm.nvvm.*` intrinsics.
pub(crate) fn sync<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    let c = e.ctx();
    let i32t = c.i32_type();
    let c32 = |v: u32| i32t.const_int(v as u64, false);
    let ops = &i.operands;
    let nosync = !i.has_mod("sync");
    // The deprecated non-`.sync` forms work on the active lanes: `.sync` with `activemask`.
    let active = |e: &mut FnEmitter<'ctx, 'a, '_>| call_intr(e, "llvm.nvvm.activemask", &[]).unwrap().into_int_value();
    match i.opcode.name {
        // PTX ISA 9.7.8.4 shfl (deprecated), 9.7.8.5 shfl.sync
        "shfl" => {
            let (mode, a, b, cc, mask) = super::sync::shfl_operands(e, i)?;
            let mode = super::sync::SHFL_MODES[mode];
            let mask = match mask {
                Some(m) => m,
                None => active(e),
            };
            let args = [mask.into(), a.into(), b.into(), cc.into()];
            match &ops[0] {
                Operand::Pair(d, p) => {
                    let r = call_intr(e, &format!("llvm.nvvm.shfl.sync.{mode}.i32p"), &args).unwrap().into_struct_value();
                    let v = e.b.build_extract_value(r, 0, "").unwrap();
                    let pv = e.b.build_extract_value(r, 1, "").unwrap();
                    e.write(d, Type::B32, v)?;
                    e.write(p, Type::Pred, pv)?;
                }
                d => {
                    let v = call_intr(e, &format!("llvm.nvvm.shfl.sync.{mode}.i32"), &args).unwrap();
                    e.write(d, Type::B32, v)?;
                }
            }
            Ok(true)
        }
        // PTX ISA 9.7.12.6 vote (deprecated), 9.7.12.7 vote.sync
        "vote" => {
            let mode = ["all", "any", "uni", "ballot"].into_iter().find(|m| i.has_mod(m)).unwrap_or("all");
            let p = e.read(&ops[1], Type::Pred)?;
            let mask = if nosync { active(e) } else { e.read_int(ops.get(2).ok_or_else(|| e.err(i.span, "`vote.sync` needs a membermask"))?, Type::B32)? };
            let r = call_intr(e, &format!("llvm.nvvm.vote.{mode}.sync"), &[mask.into(), p]).unwrap();
            if mode == "ballot" {
                e.write(&ops[0], Type::B32, r)?;
            } else {
                e.write(&ops[0], Type::Pred, r)?;
            }
            Ok(true)
        }
        // PTX ISA 9.7.12.8 match.sync
        "match" => {
            let ty = super::func::types_of(i).last().copied().unwrap_or(Type::B32);
            let w = if ty.bits() == 64 { "i64" } else { "i32" };
            let a = e.read_int(&ops[1], ty)?;
            let mask = e.read_int(&ops[2], Type::B32)?;
            if i.has_mod("all") {
                let r = call_intr(e, &format!("llvm.nvvm.match.all.sync.{w}p"), &[mask.into(), a.into()]).unwrap().into_struct_value();
                let v = e.b.build_extract_value(r, 0, "").unwrap();
                let pv = e.b.build_extract_value(r, 1, "").unwrap();
                match &ops[0] {
                    Operand::Pair(d, p) => {
                        e.write(d, Type::B32, v)?;
                        e.write(p, Type::Pred, pv)?;
                    }
                    d => e.write(d, Type::B32, v)?,
                }
            } else {
                let v = call_intr(e, &format!("llvm.nvvm.match.any.sync.{w}"), &[mask.into(), a.into()]).unwrap();
                let d = match &ops[0] {
                    Operand::Pair(d, _) => d.as_ref(),
                    d => d,
                };
                e.write(d, Type::B32, v)?;
            }
            Ok(true)
        }
        // PTX ISA 9.7.12.9 activemask
        "activemask" => {
            let v = active(e);
            e.write(&ops[0], Type::B32, v.into())?;
            Ok(true)
        }
        // redux.sync (PTX 7.0, sm_80)
        "redux" => {
            let ty = super::func::types_of(i).last().copied().unwrap_or(Type::U32);
            let op = ["add", "min", "max", "and", "or", "xor"].into_iter().find(|m| i.has_mod(m)).unwrap_or("add");
            let name = match (op, ty.is_signed()) {
                ("min", false) => "umin",
                ("max", false) => "umax",
                (o, _) => o,
            };
            let a = e.read_int(&ops[1], ty)?;
            let mask = e.read_int(&ops[2], Type::B32)?;
            let v = call_intr(e, &format!("llvm.nvvm.redux.sync.{name}"), &[a.into(), mask.into()]).unwrap();
            e.write(&ops[0], ty, v)?;
            Ok(true)
        }
        "barrier" if i.has_mod("cluster") => super::ops_misc::keep_for_nvptx(e, i),
        "bar" | "barrier" => {
            // PTX ISA 9.7.12.2 bar.warp.sync
            if i.has_mod("warp") {
                let mask = e.read_int(&ops[0], Type::B32)?;
                call_intr(e, "llvm.nvvm.bar.warp.sync", &[mask.into()]);
                return Ok(true);
            }
            // PTX ISA 9.7.12.1 bar.red
            if i.has_mod("red") {
                let op = ["popc", "and", "or"].into_iter().find(|m| i.has_mod(m)).unwrap_or("popc");
                let (id, count, p) = match ops.len() {
                    3 => (&ops[1], None, &ops[2]),
                    4 => (&ops[1], Some(&ops[2]), &ops[3]),
                    _ => return Err(e.err(i.span, "`bar.red` takes 3 or 4 operands")),
                };
                let idv = e.read_int(id, Type::U32)?;
                let pv = e.read(p, Type::Pred)?.into_int_value();
                let p32 = e.b.build_int_z_extend(pv, i32t, "").unwrap();
                let r = if count.is_none() && idv.get_zero_extended_constant() == Some(0) {
                    call_intr(e, &format!("llvm.nvvm.barrier0.{op}"), &[p32.into()]).unwrap().into_int_value()
                } else {
                    let cnt = match count {
                        Some(cn) => e.read_int(cn, Type::U32)?,
                        None => c32(0),
                    };
                    let bar = if count.is_some() { "$1, $2" } else { "$1" };
                    let asm = if op == "popc" {
                        format!("{{ .reg .pred %ptxr_p; setp.ne.u32 %ptxr_p, $3, 0; bar.red.popc.u32 $0, {bar}, %ptxr_p; }}")
                    } else {
                        format!("{{ .reg .pred %ptxr_p, %ptxr_q; setp.ne.u32 %ptxr_p, $3, 0; bar.red.{op}.pred %ptxr_q, {bar}, %ptxr_p; selp.u32 $0, 1, 0, %ptxr_q; }}")
                    };
                    inline_ptx(e, Some(i32t.into()), &asm, "=r,r,r,r", &[idv.into(), cnt.into(), p32.into()]).unwrap().into_int_value()
                };
                if op == "popc" {
                    e.write(&ops[0], Type::U32, r.into())?;
                } else {
                    let b = e.b.build_int_compare(inkwell::IntPredicate::NE, r, i32t.const_zero(), "").unwrap();
                    e.write(&ops[0], Type::Pred, b.into())?;
                }
                return Ok(true);
            }
            let idv = match ops.first() {
                Some(op) => e.read_int(op, Type::U32)?,
                None => c32(0),
            };
            let cnt = match ops.get(1) {
                Some(op) => Some(e.read_int(op, Type::U32)?),
                None => None,
            };
            if i.has_mod("arrive") {
                let Some(cnt) = cnt else { return Err(e.err(i.span, "`bar.arrive` needs a thread count")) };
                let asm = if i.opcode.name == "bar" { "bar.arrive $0, $1;" } else { "barrier.arrive $0, $1;" };
                inline_ptx(e, None, asm, "r,r", &[idv.into(), cnt.into()]);
                return Ok(true);
            }
            // PTX ISA 9.7.12.1 bar.sync / barrier.sync (`bar.sync` is `barrier.sync.aligned`).
            match cnt {
                Some(cnt) => {
                    call_intr(e, "llvm.nvvm.barrier.sync.cnt", &[idv.into(), cnt.into()]);
                }
                None if i.opcode.name == "bar" => {
                    call_intr(e, "llvm.nvvm.bar.sync", &[idv.into()]);
                }
                None => {
                    call_intr(e, "llvm.nvvm.barrier.sync", &[idv.into()]);
                }
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}
