//! Whole stores to lane arrays.
//!
//! The warp path keeps a register that varies across lanes in an array of 32 lanes, an alloca
//! of its own (`!ptxr.lanes`). A lane loop that runs only the lanes waiting for its block
//! writes such an array under the lanes' mask, and the loop vectorizer makes that a masked
//! store (`llvm.masked.store`). A masked store cannot forward its data to a later load (the
//! next lane loop reads the whole array: on x86 the load waits until the store has left the
//! store buffer), and it keeps SROA from turning the array into a vector register.
//!
//! The array belongs to this call of the function alone: no other thread can see it, and a
//! whole-array access is always in bounds. So a masked store of a whole array is the same as
//! loading the array, selecting the new lanes under the mask, and storing it whole: the lanes
//! outside the mask get the values they already hold. This pass makes that rewrite; it runs
//! after the loop vectorizer and before the pipeline's last SROA and instcombine
//! (`passes::pipeline_stages`).

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::target::{LLVMABISizeOfType, LLVMGetModuleDataLayout};
use inkwell::module::Module;

/// Metadata kind on the warp path's lane-array allocas.
pub const LANES: &str = "ptxr.lanes";

/// Rewrites the masked stores of whole lane arrays in `module`; returns how many.
pub fn unmask(module: &Module) -> usize {
    let m = module.as_mut_ptr();
    let mut n = 0;
    unsafe {
        let ctx = LLVMGetModuleContext(m);
        let kind = LLVMGetMDKindIDInContext(ctx, LANES.as_ptr() as *const _, LANES.len() as u32);
        let td = LLVMGetModuleDataLayout(m);
        let b = LLVMCreateBuilderInContext(ctx);
        for (_, bb) in super::all_blocks(m) {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                let next = LLVMGetNextInstruction(i);
                if let Some((v, p, align, mask)) = whole_lane_store(i, kind, td) {
                    LLVMPositionBuilderBefore(b, i);
                    let old = LLVMBuildLoad2(b, LLVMTypeOf(v), p, c"lanes.old".as_ptr());
                    LLVMSetAlignment(old, align);
                    let sel = LLVMBuildSelect(b, mask, v, old, c"lanes.new".as_ptr());
                    let st = LLVMBuildStore(b, sel, p);
                    LLVMSetAlignment(st, align);
                    LLVMInstructionEraseFromParent(i);
                    n += 1;
                }
                i = next;
            }
        }
        LLVMDisposeBuilder(b);
    }
    n
}

/// `llvm.masked.store(v, p, align, mask)` where `p` is a lane-array alloca, or a constant
/// offset into one, and `v` lies inside the array: its value, pointer, alignment and mask.
/// (A tile warp's lane loops run 16 lanes per row, each row's store one half of the array.)
unsafe fn whole_lane_store(i: LLVMValueRef, kind: u32, td: inkwell::llvm_sys::target::LLVMTargetDataRef) -> Option<(LLVMValueRef, LLVMValueRef, u32, LLVMValueRef)> {
    if !callee_name(i)?.starts_with(b"llvm.masked.store.") {
        return None;
    }
    let (v, p, align, mask) = (LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), LLVMGetOperand(i, 2), LLVMGetOperand(i, 3));
    if LLVMIsAConstantInt(align).is_null() {
        return None;
    }
    let (base, offset) = lane_array_offset(p, kind, td)?;
    if offset + LLVMABISizeOfType(td, LLVMTypeOf(v)) > LLVMABISizeOfType(td, LLVMGetAllocatedType(base)) {
        return None;
    }
    Some((v, p, LLVMConstIntGetZExtValue(align) as u32, mask))
}

/// The name of the function instruction `i` calls, if it is a direct call.
pub(crate) unsafe fn callee_name<'a>(i: LLVMValueRef) -> Option<&'a [u8]> {
    if LLVMIsACallInst(i).is_null() {
        return None;
    }
    let callee = LLVMGetCalledValue(i);
    if callee.is_null() || LLVMIsAFunction(callee).is_null() {
        return None;
    }
    let mut len = 0;
    let name = LLVMGetValueName2(callee, &mut len);
    (!name.is_null()).then(|| std::slice::from_raw_parts(name as *const u8, len))
}

/// The lane-array alloca `p` points into and the byte offset: `p` itself, or a chain of
/// `getelementptr`s with constant, non-negative indices over arrays (and a first index over
/// the source type) from one.
unsafe fn lane_array_offset(p: LLVMValueRef, kind: u32, td: inkwell::llvm_sys::target::LLVMTargetDataRef) -> Option<(LLVMValueRef, u64)> {
    use inkwell::llvm_sys::LLVMTypeKind;
    if !LLVMIsAAllocaInst(p).is_null() {
        return (!LLVMGetMetadata(p, kind).is_null()).then_some((p, 0));
    }
    if LLVMIsAGetElementPtrInst(p).is_null() {
        return None;
    }
    let (base, mut offset) = lane_array_offset(LLVMGetOperand(p, 0), kind, td)?;
    let mut ty = LLVMGetGEPSourceElementType(p);
    for k in 0..LLVMGetNumIndices(p) {
        let idx = LLVMGetOperand(p, k + 1);
        if LLVMIsAConstantInt(idx).is_null() {
            return None;
        }
        let n = LLVMConstIntGetSExtValue(idx);
        if n < 0 {
            return None;
        }
        if k > 0 {
            if LLVMGetTypeKind(ty) != LLVMTypeKind::LLVMArrayTypeKind {
                return None;
            }
            ty = LLVMGetElementType(ty);
        }
        offset = offset.checked_add((n as u64).checked_mul(LLVMABISizeOfType(td, ty))?)?;
    }
    Some((base, offset))
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    const IR: &str = r#"
define void @f(<32 x i32> %v, <32 x i1> %m, ptr %out) {
  %lanes = alloca [32 x i32], align 64, !ptxr.lanes !0
  %plain = alloca [32 x i32], align 64
  %small = alloca [16 x i32], align 64, !ptxr.lanes !0
  call void @llvm.masked.store.v32i32.p0(<32 x i32> %v, ptr %lanes, i32 4, <32 x i1> %m)
  call void @llvm.masked.store.v32i32.p0(<32 x i32> %v, ptr %plain, i32 4, <32 x i1> %m)
  call void @llvm.masked.store.v32i32.p0(<32 x i32> %v, ptr %out, i32 4, <32 x i1> %m)
  %half = shufflevector <32 x i32> %v, <32 x i32> poison, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %hm = shufflevector <32 x i1> %m, <32 x i1> poison, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  call void @llvm.masked.store.v16i32.p0(<16 x i32> %half, ptr %lanes, i32 4, <16 x i1> %hm)
  call void @llvm.masked.store.v16i32.p0(<16 x i32> %half, ptr %small, i32 4, <16 x i1> %hm)
  %row1 = getelementptr inbounds i8, ptr %lanes, i64 64
  call void @llvm.masked.store.v16i32.p0(<16 x i32> %half, ptr %row1, i32 4, <16 x i1> %hm)
  %elt16 = getelementptr inbounds [32 x i32], ptr %lanes, i64 0, i64 16
  call void @llvm.masked.store.v16i32.p0(<16 x i32> %half, ptr %elt16, i32 4, <16 x i1> %hm)
  %past = getelementptr inbounds i8, ptr %lanes, i64 68
  call void @llvm.masked.store.v16i32.p0(<16 x i32> %half, ptr %past, i32 4, <16 x i1> %hm)
  %plainrow = getelementptr inbounds i8, ptr %plain, i64 64
  call void @llvm.masked.store.v16i32.p0(<16 x i32> %half, ptr %plainrow, i32 4, <16 x i1> %hm)
  ret void
}
declare void @llvm.masked.store.v32i32.p0(<32 x i32>, ptr, i32, <32 x i1>)
declare void @llvm.masked.store.v16i32.p0(<16 x i32>, ptr, i32, <16 x i1>)
!0 = !{}
"#;

    /// Masked stores that lie inside a lane array (the whole array, or a constant offset into
    /// it, as a tile warp's two 16-lane rows store) become load, select and store: not those
    /// to other allocas or memory, nor one that would reach past the array's end.
    #[test]
    fn whole_lane_array_stores_lose_their_mask() {
        let ctx = Context::create();
        let m = ctx.create_module_from_ir(MemoryBuffer::create_from_memory_range_copy(IR.as_bytes(), "t")).unwrap();
        assert_eq!(super::unmask(&m), 5);
        m.verify().unwrap();
        let text = m.print_to_string().to_string();
        assert_eq!(text.matches("call void @llvm.masked.store").count(), 4, "{text}");
        assert!(text.contains("%lanes.old = load <32 x i32>, ptr %lanes, align 4"), "{text}");
        assert!(text.contains("%lanes.new = select <32 x i1> %m, <32 x i32> %v, <32 x i32> %lanes.old"), "{text}");
        assert!(text.contains("store <32 x i32> %lanes.new, ptr %lanes, align 4"), "{text}");
        for kept in ["<32 x i32> %v, ptr %plain", "<32 x i32> %v, ptr %out", "<16 x i32> %half, ptr %past", "<16 x i32> %half, ptr %plainrow"] {
            assert!(text.contains(&format!("@llvm.masked.store.v{}i32.p0({kept}", if kept.starts_with("<16") { 16 } else { 32 })), "{kept}: {text}");
        }
        for (ptr, n) in [("%lanes", 1), ("%small", 3), ("%row1", 5), ("%elt16", 7)] {
            assert!(text.contains(&format!("%lanes.old{n} = load <16 x i32>, ptr {ptr}, align 4")), "{ptr}: {text}");
            assert!(text.contains(&format!("store <16 x i32> %lanes.new{}, ptr {ptr}, align 4", n + 1)), "{ptr}: {text}");
        }
    }
}
