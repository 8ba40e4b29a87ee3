//! Parallel lane loops.
//!
//! A loop over the threads of a CTA runs, per iteration, the code of one thread between two
//! synchronization points. PTX gives no order between the memory accesses of different
//! threads there: a thread that reads what another thread writes without a barrier or an
//! atomic races, and any interleaving is a correct execution. So the iterations of a lane
//! loop are independent, which is what `llvm.loop.parallel_accesses` says: every access in
//! the loop that belongs to the listed access group carries no dependence across iterations.
//! LLVM's loop vectorizer then needs no dependence analysis and no runtime alias checks.
//!
//! Accesses that are shared by all iterations are not independent and are left out (the loop
//! then stays a normal loop for LLVM, which proves what it can):
//! - allocas (except the per-lane arrays of the warp path, each iteration touching its own
//!   element): a thread's registers and, in kernels without synchronization, its `.local`
//!   variables are one alloca reused by every thread of the loop;
//! - the read-modify-writes that implement shared-memory atomics (tagged [`SERIAL`]);
//! - volatile and atomic accesses.
//!
//! If a function turns the address of an alloca into an integer (`cvta.local`), a generic
//! access may reach that alloca through any pointer, and nothing is marked.
//!
//! LLVM's C API creates only uniqued metadata, and an access group and a loop id must be
//! distinct nodes, so they are made by parsing a small module in the same context.

use inkwell::basic_block::BasicBlock;
use inkwell::context::Context;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, MetadataValue};

/// Metadata kind on loads and stores that must keep their order across lane iterations.
pub const SERIAL: &str = "ptxr.serial";

/// Follows GEPs and casts from a pointer to the object it is based on.
unsafe fn root(mut p: LLVMValueRef) -> LLVMValueRef {
    loop {
        if !LLVMIsAGetElementPtrInst(p).is_null() || !LLVMIsABitCastInst(p).is_null() || !LLVMIsAAddrSpaceCastInst(p).is_null() {
            p = LLVMGetOperand(p, 0);
        } else if !LLVMIsAConstantExpr(p).is_null() && matches!(LLVMGetConstOpcode(p), LLVMOpcode::LLVMGetElementPtr | LLVMOpcode::LLVMBitCast | LLVMOpcode::LLVMAddrSpaceCast) {
            p = LLVMGetOperand(p, 0);
        } else {
            return p;
        }
    }
}

/// Marks the loops whose latches (blocks ending with the back edge) are `latches` as
/// parallel loops of `f` (see the module comment). Returns how many accesses were marked.
/// Loops whose latches are also in `whole` keep their form until the loop vectorizer sees
/// them (`llvm.loop.unroll.disable`): a lane loop of 32 iterations without a test per lane
/// is one vector operation per instruction for the vectorizer, while the full unroller,
/// which runs first, would turn it into 32 copies that the SLP vectorizer only partly
/// regroups. Loops whose latches are in `warp` (the warp path's lane loops of vector
/// instructions) are vectorized `width` lanes wide (`llvm.loop.vectorize.width`; 32, or 16
/// in a kernel's version for narrow blocks, whose lane loops run rows of 16): one
/// `<width x T>` operation per instruction, and no loop left; they are not unrolled either, which also
/// keeps the full unroller from peeling their first lanes off to settle a test of the lane
/// index (`lane < 2` in a scan step), after which the 30 lanes left were not vectorized at
/// all (a block scan's lane loop without shuffles ran 2x slower). Loops whose latches are in
/// `unroll` (small lane loops that stay scalar) are unrolled whole (`llvm.loop.unroll.full`:
/// 32 iterations exceed the unroller's own threshold); those in `scalar` are not vectorized
/// (`llvm.loop.vectorize.enable` false).
///
/// `cold_scalar`: the loops are the warp path's lane loops, whose trip count (32, or 16 in
/// narrow versions) is a multiple of every vectorization width, so the scalar loop that the
/// vectorizer keeps beside a vectorized one runs only where a runtime check fails (a 32-bit
/// lane index that could wrap): it is cold, and it is not unrolled
/// (`llvm.loop.vectorize.followup_epilogue`: `unroll.disable`, `isvectorized`). LLVM's
/// unroller had unrolled each such loop 4 times over (the transpose: the unroller's time
/// 21 ms -> 4 ms, code generation 0.15 s -> 0.10 s, the optimized IR 3307 -> 2993 lines).
/// Per-thread loops over a CTA's threads run their remainder iterations there, so they
/// keep LLVM's default.
pub fn mark<'ctx>(ctx: &'ctx Context, f: FunctionValue<'ctx>, latches: &[BasicBlock<'ctx>], whole: &[BasicBlock<'ctx>], warp: &[BasicBlock<'ctx>], unroll: &[BasicBlock<'ctx>], scalar: &[BasicBlock<'ctx>], width: u32, cold_scalar: bool) -> usize {
    if latches.is_empty() {
        return 0;
    }
    let serial = ctx.get_kind_id(SERIAL);
    let lane_array = ctx.get_kind_id(crate::codegen::warp::LANE_ARRAY);
    let group_kind = ctx.get_kind_id("llvm.access.group");
    let loop_kind = ctx.get_kind_id("llvm.loop");
    let mut accesses = Vec::new();
    for bb in f.get_basic_blocks() {
        let mut i = bb.get_first_instruction();
        while let Some(inst) = i {
            i = inst.get_next_instruction();
            let ptr = match inst.get_opcode() {
                InstructionOpcode::Load => 0,
                InstructionOpcode::Store => 1,
                InstructionOpcode::PtrToInt => {
                    let p = unsafe { root(LLVMGetOperand(inst.as_value_ref(), 0)) };
                    if unsafe { !LLVMIsAAllocaInst(p).is_null() } {
                        return 0;
                    }
                    continue;
                }
                _ => continue,
            };
            let v = inst.as_value_ref();
            let plain = unsafe { LLVMGetVolatile(v) == 0 && LLVMGetOrdering(v) == inkwell::llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic };
            if !plain || inst.get_metadata(serial).is_some() {
                continue;
            }
            let r = unsafe { root(LLVMGetOperand(v, ptr)) };
            // An array of one element per lane (the warp path, `codegen::warp`) is accessed
            // at the loop's own lane by each iteration.
            if unsafe { LLVMIsAAllocaInst(r).is_null() || !LLVMGetMetadata(r, lane_array).is_null() } {
                accesses.push(inst);
            }
        }
    }
    let keep: Vec<(bool, bool, bool, bool)> = latches.iter().map(|l| (whole.contains(l), warp.contains(l), unroll.contains(l), scalar.contains(l))).collect();
    let Some((group, loops)) = distinct_nodes(ctx, &keep, width, cold_scalar) else { return 0 };
    for inst in &accesses {
        let _ = inst.set_metadata(group, group_kind);
    }
    for (bb, id) in latches.iter().zip(loops) {
        if let Some(t) = bb.get_terminator() {
            let _ = t.set_metadata(id, loop_kind);
        }
    }
    accesses.len()
}

/// A distinct access group and a distinct loop id per element of `keep` that lists it as
/// parallel (and, where `keep.0` is true, disables unrolling; where `keep.1` is, asks for a
/// vectorization width of `vf`; where `keep.2` is, asks for full unrolling; where `keep.3`
/// is, keeps it scalar; with `cold_scalar`, the scalar loop left beside a vectorized one is
/// not unrolled).
fn distinct_nodes<'ctx>(ctx: &'ctx Context, keep: &[(bool, bool, bool, bool)], vf: u32, cold_scalar: bool) -> Option<(MetadataValue<'ctx>, Vec<MetadataValue<'ctx>>)> {
    let n = keep.len();
    let mut ir = String::from("define void @lanes(ptr %p) {\nentry:\n  %v = load i8, ptr %p, !llvm.access.group !0\n  br label %l0\n");
    for k in 0..n {
        ir += &format!("l{k}:\n  br label %l{}, !llvm.loop !{}\n", k, 2 * k + 1);
    }
    ir += "}\n!0 = distinct !{}\n";
    let nounroll = 2 * n + 1;
    let (width, enable, full, disable, followup) = (2 * n + 2, 2 * n + 3, 2 * n + 4, 2 * n + 5, 2 * n + 6);
    for k in 0..n {
        let mut extra = if keep[k].0 || keep[k].1 { format!(", !{nounroll}") } else { String::new() };
        if keep[k].1 {
            extra += &format!(", !{width}, !{enable}");
        }
        if keep[k].2 {
            extra += &format!(", !{full}");
        }
        if keep[k].3 {
            extra += &format!(", !{disable}");
        }
        if cold_scalar {
            extra += &format!(", !{followup}");
        }
        ir += &format!("!{} = distinct !{{!{}, !{}{extra}}}\n!{} = !{{!\"llvm.loop.parallel_accesses\", !0}}\n", 2 * k + 1, 2 * k + 1, 2 * k + 2, 2 * k + 2);
    }
    ir += &format!("!{nounroll} = !{{!\"llvm.loop.unroll.disable\"}}\n!{full} = !{{!\"llvm.loop.unroll.full\"}}\n");
    ir += &format!("!{width} = !{{!\"llvm.loop.vectorize.width\", i32 {vf}}}\n!{enable} = !{{!\"llvm.loop.vectorize.enable\", i1 true}}\n");
    ir += &format!("!{disable} = !{{!\"llvm.loop.vectorize.enable\", i1 false}}\n");
    let done = 2 * n + 7;
    ir += &format!("!{followup} = !{{!\"llvm.loop.vectorize.followup_epilogue\", !{nounroll}, !{done}}}\n!{done} = !{{!\"llvm.loop.isvectorized\", i32 1}}\n");
    let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "ptxr-lanes");
    // Metadata nodes belong to the context (distinct ones live until it is destroyed); the
    // module only carries them here and is dropped.
    let m = ctx.create_module_from_ir(buf).ok()?;
    let f = m.get_function("lanes")?;
    let group = f.get_first_basic_block()?.get_first_instruction()?.get_metadata(ctx.get_kind_id("llvm.access.group"))?;
    let mut loops = Vec::new();
    for bb in f.get_basic_blocks().iter().skip(1) {
        loops.push(bb.get_terminator()?.get_metadata(ctx.get_kind_id("llvm.loop"))?);
    }
    drop(m);
    Some((group, loops))
}
