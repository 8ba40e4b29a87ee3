//! Gathers from one address made one load.
//!
//! A lane loop that runs only the lanes waiting for its block loads under the lanes' mask,
//! and when the address is the same for every lane of the vector (a tile warp's `A[ty][k]`:
//! one word per row of 16 lanes, `ir::uniformity::Access::PerRow`), LLVM's loop vectorizer
//! makes the conditional load of a loop-invariant address a masked gather whose pointers are
//! one pointer splatted (`llvm.masked.gather(splat p, mask)`): on x86 a `vgatherdps` with
//! zero indices, 16 loads of one word, for what one load and a broadcast do.
//!
//! Every active lane of such a gather reads the same location, so reading it once gives
//! each of them what it would read (a gather's lanes read in no particular order; all at one
//! instant is one of those orders), and nothing is read when no lane is active, where the
//! address may not be valid. This pass rewrites
//! `llvm.masked.gather(splat p, align, mask, passthru)` as a load of `p` where any lane of
//! `mask` is on, else of a slot in the function's frame (a select of the address, not a
//! branch: a branch per load split the warp's code into blocks, across which its registers
//! spilled), broadcast, then selected under `mask` against `passthru` (when that is not
//! poison). It runs after the loop vectorizer, with [`super::lane_stores::unmask`].

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;

/// Rewrites the gathers from one address in `module`; returns how many.
pub fn rewrite(module: &Module) -> usize {
    let m = module.as_mut_ptr();
    let mut n = 0;
    unsafe {
        let ctx = LLVMGetModuleContext(m);
        let b = LLVMCreateBuilderInContext(ctx);
        let td = inkwell::llvm_sys::target::LLVMGetModuleDataLayout(m);
        // Per function: the slot read when no lane is on.
        let mut slots: std::collections::HashMap<LLVMValueRef, LLVMValueRef> = std::collections::HashMap::new();
        for (f, bb) in super::all_blocks(m) {
            // Within a block: per mask, whether any lane is on; per base and that, the
            // choice of base (each made before the block's first gather that needs it).
            let mut anys: std::collections::HashMap<LLVMValueRef, LLVMValueRef> = std::collections::HashMap::new();
            let mut bases: std::collections::HashMap<(LLVMValueRef, LLVMValueRef), LLVMValueRef> = std::collections::HashMap::new();
            let mut rows = std::collections::HashMap::new();
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                let next = LLVMGetNextInstruction(i);
                // (Generic pointers only: the slot is one.)
                if let Some((p, align, mask, passthru)) = uniform_gather(i).filter(|g| LLVMGetPointerAddressSpace(LLVMTypeOf(g.0)) == 0) {
                    LLVMPositionBuilderBefore(b, i);
                    let vt = LLVMTypeOf(i);
                    let lanes = LLVMGetVectorSize(vt);
                    let elem = LLVMGetElementType(vt);
                    let any = *anys.entry(mask).or_insert_with(|| {
                        let bits = LLVMBuildBitCast(b, mask, LLVMIntTypeInContext(ctx, lanes), c"".as_ptr());
                        LLVMBuildICmp(b, inkwell::llvm_sys::LLVMIntPredicate::LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), c"gather.any".as_ptr())
                    });
                    // For `p = base + C` with a small constant `C` the choice of address is
                    // of the base, one for all the loads from it (a row's `A[ty][0..15]`).
                    let slot = *slots.entry(f).or_insert_with(|| {
                        let entry = LLVMGetFirstBasicBlock(f);
                        let eb = LLVMCreateBuilderInContext(ctx);
                        LLVMPositionBuilder(eb, entry, LLVMGetFirstInstruction(entry));
                        let a = LLVMBuildAlloca(eb, LLVMArrayType2(LLVMInt8TypeInContext(ctx), SLOT), c"gather.none".as_ptr());
                        LLVMSetAlignment(a, 64);
                        LLVMDisposeBuilder(eb);
                        a
                    });
                    let size = inkwell::llvm_sys::target::LLVMABISizeOfType(td, elem);
                    let q = match base_offset(p, b, &mut rows) {
                        Some((base, c)) if c + size <= SLOT => {
                            let sel = *bases.entry((base, any)).or_insert_with(|| {
                                let sel = LLVMBuildSelect(b, any, base, slot, c"gather.base".as_ptr());
                                // Opaque to instcombine, which would otherwise move the
                                // offsets into the select's arms: a select per load again.
                                let pt = LLVMTypeOf(sel);
                                let mut ps = [pt];
                                let fty = LLVMFunctionType(pt, ps.as_mut_ptr(), 1, 0);
                                let (text, cons) = ("", "=r,0");
                                let asm = LLVMGetInlineAsm(fty, text.as_ptr() as *mut _, 0, cons.as_ptr() as *mut _, cons.len(), 0, 0, inkwell::llvm_sys::LLVMInlineAsmDialect::LLVMInlineAsmDialectATT, 0);
                                let mut args = [sel];
                                LLVMBuildCall2(b, fty, asm, args.as_mut_ptr(), 1, c"gather.base".as_ptr())
                            });
                            let mut idx = [LLVMConstInt(LLVMInt64TypeInContext(ctx), c, 0)];
                            LLVMBuildGEP2(b, LLVMInt8TypeInContext(ctx), sel, idx.as_mut_ptr(), 1, c"gather.at".as_ptr())
                        }
                        _ => LLVMBuildSelect(b, any, p, slot, c"gather.at".as_ptr()),
                    };
                    let x = LLVMBuildLoad2(b, elem, q, c"gather.one".as_ptr());
                    LLVMSetAlignment(x, align.max(1));
                    let one_t = LLVMVectorType(elem, 1);
                    let x = LLVMBuildInsertElement(b, LLVMGetPoison(one_t), x, LLVMConstInt(LLVMInt64TypeInContext(ctx), 0, 0), c"".as_ptr());
                    let zeros = LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(ctx), lanes));
                    let mut r = LLVMBuildShuffleVector(b, x, LLVMGetPoison(one_t), zeros, c"gather.splat".as_ptr());
                    if LLVMIsPoison(passthru) == 0 && LLVMIsUndef(passthru) == 0 {
                        r = LLVMBuildSelect(b, mask, r, passthru, c"".as_ptr());
                    }
                    LLVMReplaceAllUsesWith(i, r);
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

/// Bytes of the slot that a gather with no lane on reads instead (any `base + C` below it).
const SLOT: u64 = 256;

/// `p` as `base + C` bytes, `C` a constant from 0 up: `p` a `getelementptr i8` of `base`
/// by `C`, or of a pointer `q` by `Y + C` (an `add`, or an `or` of disjoint bits), where
/// `base` is then `q + Y` (built before `at` by `b`, once per `q` and `Y` in `made`).
unsafe fn base_offset(p: LLVMValueRef, b: LLVMBuilderRef, made: &mut std::collections::HashMap<(LLVMValueRef, LLVMValueRef), LLVMValueRef>) -> Option<(LLVMValueRef, u64)> {
    if LLVMIsAGetElementPtrInst(p).is_null() || LLVMGetNumOperands(p) != 2 {
        return None;
    }
    let t = LLVMGetGEPSourceElementType(p);
    if LLVMGetTypeKind(t) != inkwell::llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 8 {
        return None;
    }
    let konst = |c: LLVMValueRef| (!LLVMIsAConstantInt(c).is_null() && LLVMConstIntGetSExtValue(c) >= 0).then(|| LLVMConstIntGetZExtValue(c));
    let (q, idx) = (LLVMGetOperand(p, 0), LLVMGetOperand(p, 1));
    if let Some(c) = konst(idx) {
        return Some((q, c));
    }
    if LLVMIsABinaryOperator(idx).is_null() {
        return None;
    }
    let sum = match LLVMGetInstructionOpcode(idx) {
        LLVMOpcode::LLVMAdd => true,
        LLVMOpcode::LLVMOr => LLVMGetIsDisjoint(idx) != 0,
        _ => false,
    };
    if !sum {
        return None;
    }
    let (y, c) = (LLVMGetOperand(idx, 0), konst(LLVMGetOperand(idx, 1))?);
    let base = *made.entry((q, y)).or_insert_with(|| {
        let mut i = [y];
        LLVMBuildGEP2(b, t, q, i.as_mut_ptr(), 1, c"gather.row".as_ptr())
    });
    Some((base, c))
}

/// For `llvm.masked.gather(ptrs, align, mask, passthru)` whose pointers are all one
/// ([`splat_of`]): that pointer, the alignment, the mask and the passthru.
unsafe fn uniform_gather(i: LLVMValueRef) -> Option<(LLVMValueRef, u32, LLVMValueRef, LLVMValueRef)> {
    if !super::lane_stores::callee_name(i)?.starts_with(b"llvm.masked.gather.") {
        return None;
    }
    let (ptrs, align, mask, passthru) = (LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), LLVMGetOperand(i, 2), LLVMGetOperand(i, 3));
    if LLVMIsAConstantInt(align).is_null() {
        return None;
    }
    let p = splat_of(ptrs)?;
    Some((p, LLVMConstIntGetZExtValue(align) as u32, mask, passthru))
}

/// The scalar every element of vector `v` is, where `v` is a splat: `shufflevector` of an
/// `insertelement` at index 0 with an all-zero mask (LLVM's broadcast idiom).
unsafe fn splat_of(v: LLVMValueRef) -> Option<LLVMValueRef> {
    if LLVMIsAShuffleVectorInst(v).is_null() || LLVMGetInstructionOpcode(v) != LLVMOpcode::LLVMShuffleVector {
        return None;
    }
    let n = LLVMGetNumMaskElements(v);
    if n == 0 || (0..n).any(|k| LLVMGetMaskValue(v, k) != 0) {
        return None;
    }
    let ins = LLVMGetOperand(v, 0);
    if LLVMIsAInsertElementInst(ins).is_null() {
        return None;
    }
    let idx = LLVMGetOperand(ins, 2);
    if LLVMIsAConstantInt(idx).is_null() || LLVMConstIntGetZExtValue(idx) != 0 {
        return None;
    }
    Some(LLVMGetOperand(ins, 1))
}
