//! Plain vector accesses where every lane of a masked one is on.
//!
//! The loop vectorizer turns a lane loop that runs only some lanes (a grid-stride loop whose
//! lanes leave at different iterations, a block only some lanes wait for) into vector code
//! under the lanes' mask: its loads and stores of memory become `llvm.masked.load` and
//! `llvm.masked.store`. Almost always every lane is on (all lanes of a grid-stride loop go
//! round together but in its last iteration), and on AVX2 a masked store is far slower than
//! a plain one: on AMD's Zen 3 `vmaskmovps` to memory is microcoded, and a saxpy over 2^26
//! floats ran 0.33-0.38 s with masked stores against 0.058-0.072 s plain (same program,
//! `_mm256_maskstore_ps` against `_mm256_storeu_ps`, all lanes on). A masked store also
//! cannot forward its data to a later load.
//!
//! ISPC's "coherent" control flow runs code without masks when all lanes are on. This pass
//! does the same per access: a masked load or store of memory (not of a stack array, which
//! SROA and [`super::lane_stores`] deal with) whose mask is not a constant is split into a
//! branch on "every lane of the mask is on" (`llvm.vector.reduce.and`, once per mask value),
//! a plain load or store on that side, and the masked access, unchanged, on the other. A
//! plain access of the whole vector is exactly the masked one when every lane is on.
//!
//! Not run where masked accesses are cheap (AVX-512's masked moves are single instructions).

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::module::Module;
use std::collections::HashMap;

/// Splits the masked loads and stores of memory in `module`; returns how many.
pub fn split(module: &Module) -> usize {
    let m = module.as_mut_ptr();
    let mut n = 0;
    unsafe {
        let ctx = LLVMGetModuleContext(m);
        let b = LLVMCreateBuilderInContext(ctx);
        let mut f = LLVMGetFirstFunction(m);
        while !f.is_null() {
            if LLVMCountBasicBlocks(f) > 0 {
                n += split_function(m, ctx, b, f);
            }
            f = LLVMGetNextFunction(f);
        }
        LLVMDisposeBuilder(b);
    }
    n
}

/// A masked access: the call, whether it stores, and its mask.
struct Masked {
    call: LLVMValueRef,
    store: bool,
    mask: LLVMValueRef,
}

unsafe fn split_function(m: LLVMModuleRef, ctx: LLVMContextRef, b: LLVMBuilderRef, f: LLVMValueRef) -> usize {
    let mut found = Vec::new();
    let mut bb = LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        let mut i = LLVMGetFirstInstruction(bb);
        while !i.is_null() {
            if let Some(a) = masked_access(i) {
                found.push(a);
            }
            i = LLVMGetNextInstruction(i);
        }
        bb = LLVMGetNextBasicBlock(bb);
    }
    // "Every lane on", computed once per mask value, where the mask is defined.
    let mut all_on: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    for a in &found {
        let all = *all_on.entry(a.mask).or_insert_with(|| every_lane(m, b, f, a.mask));
        split_access(ctx, b, a, all);
    }
    found.len()
}

/// `i` as a masked load or store of memory whose mask is not a constant.
unsafe fn masked_access(i: LLVMValueRef) -> Option<Masked> {
    let name = super::lane_stores::callee_name(i)?;
    let (store, ptr, mask) = if name.starts_with(b"llvm.masked.store.") {
        (true, LLVMGetOperand(i, 1), LLVMGetOperand(i, 3))
    } else if name.starts_with(b"llvm.masked.load.") {
        (false, LLVMGetOperand(i, 0), LLVMGetOperand(i, 2))
    } else {
        return None;
    };
    if LLVMIsConstant(mask) != 0 || on_stack(ptr) {
        return None;
    }
    Some(Masked { call: i, store, mask })
}

/// Whether `p` points into an alloca (through `getelementptr`s).
unsafe fn on_stack(mut p: LLVMValueRef) -> bool {
    loop {
        if !LLVMIsAAllocaInst(p).is_null() {
            return true;
        }
        if LLVMIsAGetElementPtrInst(p).is_null() {
            return false;
        }
        p = LLVMGetOperand(p, 0);
    }
}

/// `llvm.vector.reduce.and(mask)`, placed right after the mask's definition (after the
/// phis of its block when the mask is a phi; at the top of the entry block when it is an
/// argument).
unsafe fn every_lane(m: LLVMModuleRef, b: LLVMBuilderRef, f: LLVMValueRef, mask: LLVMValueRef) -> LLVMValueRef {
    let at = if LLVMIsAInstruction(mask).is_null() {
        LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(f))
    } else {
        let mut at = LLVMGetNextInstruction(mask);
        while !LLVMIsAPHINode(at).is_null() {
            at = LLVMGetNextInstruction(at);
        }
        at
    };
    LLVMPositionBuilderBefore(b, at);
    let name = "llvm.vector.reduce.and";
    let id = LLVMLookupIntrinsicID(name.as_ptr() as *const _, name.len());
    let mut ty = LLVMTypeOf(mask);
    let decl = LLVMGetIntrinsicDeclaration(m, id, &mut ty, 1);
    let mut args = [mask];
    LLVMBuildCall2(b, LLVMGlobalGetValueType(decl), decl, args.as_mut_ptr(), 1, c"lanes.all".as_ptr())
}

/// Splits the block of `a` at it: the block ends with a branch on `all` to a block with the
/// plain access or to one with the masked call; both go on to the rest of the block (with a
/// phi of the two loads' values for a load).
unsafe fn split_access(ctx: LLVMContextRef, b: LLVMBuilderRef, a: &Masked, all: LLVMValueRef) {
    let call = a.call;
    let head = LLVMGetInstructionParent(call);
    let next_block = LLVMGetNextBasicBlock(head);
    let f = LLVMGetBasicBlockParent(head);
    let block = |name: &std::ffi::CStr| if next_block.is_null() { LLVMAppendBasicBlockInContext(ctx, f, name.as_ptr()) } else { LLVMInsertBasicBlockInContext(ctx, next_block, name.as_ptr()) };
    let plain = block(c"lanes.all.on");
    let masked = block(c"lanes.masked");
    let tail = block(c"lanes.joined");
    // The rest of the block, terminator included, moves to `tail`.
    LLVMPositionBuilderAtEnd(b, tail);
    let mut i = LLVMGetNextInstruction(call);
    while !i.is_null() {
        let next = LLVMGetNextInstruction(i);
        move_to(b, i);
        i = next;
    }
    let term = LLVMGetBasicBlockTerminator(tail);
    for k in 0..LLVMGetNumSuccessors(term) {
        super::lane_shadow::repoint_phis(b, LLVMGetSuccessor(term, k), head, tail, true);
    }
    LLVMPositionBuilderAtEnd(b, masked);
    move_to(b, call);
    LLVMBuildBr(b, tail);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMBuildCondBr(b, all, plain, masked);
    LLVMPositionBuilderAtEnd(b, plain);
    let align = LLVMConstIntGetZExtValue(LLVMGetOperand(call, if a.store { 2 } else { 1 })) as u32;
    let access = if a.store {
        LLVMBuildStore(b, LLVMGetOperand(call, 0), LLVMGetOperand(call, 1))
    } else {
        LLVMBuildLoad2(b, LLVMTypeOf(call), LLVMGetOperand(call, 0), c"lanes.load".as_ptr())
    };
    LLVMSetAlignment(access, align.max(1));
    copy_metadata(ctx, call, access);
    LLVMBuildBr(b, tail);
    if !a.store {
        LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(tail));
        let phi = LLVMBuildPhi(b, LLVMTypeOf(call), c"lanes.loaded".as_ptr());
        LLVMReplaceAllUsesWith(call, phi);
        let (mut vals, mut from) = ([access, call], [plain, masked]);
        LLVMAddIncoming(phi, vals.as_mut_ptr(), from.as_mut_ptr(), 2);
    }
}

/// Moves instruction `i` to the builder's position, keeping its name.
unsafe fn move_to(b: LLVMBuilderRef, i: LLVMValueRef) {
    let name = super::lane_shadow::value_name(i);
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilderWithName(b, i, name.as_ptr());
}

/// The metadata of `from` (aliasing scopes, nontemporal, the debug location) on `to`.
unsafe fn copy_metadata(ctx: LLVMContextRef, from: LLVMValueRef, to: LLVMValueRef) {
    let mut n = 0;
    let entries = LLVMInstructionGetAllMetadataOtherThanDebugLoc(from, &mut n);
    for k in 0..n as u32 {
        let md = LLVMValueMetadataEntriesGetMetadata(entries, k);
        LLVMSetMetadata(to, LLVMValueMetadataEntriesGetKind(entries, k), LLVMMetadataAsValue(ctx, md));
    }
    if !entries.is_null() {
        LLVMDisposeValueMetadataEntries(entries);
    }
    let loc = inkwell::llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(from);
    if !loc.is_null() {
        inkwell::llvm_sys::debuginfo::LLVMInstructionSetDebugLoc(to, loc);
    }
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// A masked load and a masked store of memory under one mask, a phi after them that reads
    /// the block, a masked store to an alloca, and one under a constant mask.
    const IR: &str = r#"
define float @f(<32 x float> %v, <32 x i32> %next, ptr %out, ptr %in, i1 %c) {
entry:
  %m = icmp eq <32 x i32> %next, <i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2, i32 2>
  %stack = alloca [32 x float], align 64
  br label %body

body:
  %x = call <32 x float> @llvm.masked.load.v32f32.p0(ptr %in, i32 4, <32 x i1> %m, <32 x float> zeroinitializer), !nontemporal !0
  %y = fadd <32 x float> %x, %v
  call void @llvm.masked.store.v32f32.p0(<32 x float> %y, ptr %out, i32 4, <32 x i1> %m)
  call void @llvm.masked.store.v32f32.p0(<32 x float> %y, ptr %stack, i32 4, <32 x i1> %m)
  call void @llvm.masked.store.v32f32.p0(<32 x float> %y, ptr %out, i32 4, <32 x i1> <i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false, i1 true, i1 false>)
  %e = extractelement <32 x float> %y, i32 0
  br i1 %c, label %body, label %done

done:
  %r = phi float [ %e, %body ]
  ret float %r
}
declare <32 x float> @llvm.masked.load.v32f32.p0(ptr, i32, <32 x i1>, <32 x float>)
declare void @llvm.masked.store.v32f32.p0(<32 x float>, ptr, i32, <32 x i1>)
!0 = !{i32 1}
"#;

    /// The load and the store of memory get a branch on one `reduce.and` of their mask, a
    /// plain access on its true side (the load keeping its metadata) and the masked call on
    /// the other; the load's users read the phi of both; the block's own edges (the loop's
    /// back edge, the phi in `done`) now leave from the last block of the split.
    #[test]
    fn masked_memory_accesses_get_a_plain_side() {
        let ctx = Context::create();
        let m = ctx.create_module_from_ir(MemoryBuffer::create_from_memory_range_copy(IR.as_bytes(), "t")).unwrap();
        assert_eq!(super::split(&m), 2);
        m.verify().unwrap();
        let text = m.print_to_string().to_string();
        assert_eq!(text.matches("call i1 @llvm.vector.reduce.and.v32i1(<32 x i1> %m)").count(), 1, "{text}");
        assert_eq!(text.matches("br i1 %lanes.all, label %lanes.all.on").count(), 2, "{text}");
        assert!(text.contains("%lanes.load = load <32 x float>, ptr %in, align 4, !nontemporal !0"), "{text}");
        assert!(text.contains("%lanes.loaded = phi <32 x float> [ %lanes.load, %lanes.all.on ], [ %x, %lanes.masked ]"), "{text}");
        assert!(text.contains("%y = fadd <32 x float> %lanes.loaded, %v"), "{text}");
        assert!(text.contains("store <32 x float> %y, ptr %out, align 4"), "{text}");
        assert_eq!(text.matches("call void @llvm.masked.store").count(), 3, "{text}");
        assert!(text.contains("br i1 %c, label %body, label %done"), "{text}");
        assert!(text.contains("%r = phi float [ %e, %lanes.joined3 ]"), "{text}");
        assert!(text.contains("body:                                             ; preds = %lanes.joined3, %entry"), "{text}");
    }
}
