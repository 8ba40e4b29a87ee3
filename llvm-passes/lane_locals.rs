//! Lane arrays that hold a value only within one run of a block: one scalar instead.
//!
//! The warp path keeps every register that varies across lanes in an array of 32 lanes, an
//! alloca of its own (`!ptxr.lanes`), indexed by the lane of the lane loop that runs the
//! block. Many of these registers live only from one instruction to the next in the same lane
//! loop (address arithmetic: `add`, `shl`, `cvt` feeding a load), yet their array keeps LLVM
//! from seeing the value flow: each is stored to and loaded back from memory, a stack array
//! per register, which the loop vectorizer, dead-store elimination and GVN must then reason
//! about (an `mma`-heavy kernel's lane loops spend most of their optimization time there).
//!
//! An array `A` all of whose uses are addresses `&A[i]` with the same index operands `i`,
//! used only by plain loads and stores, where in every basic block the first of these
//! accesses is a store, holds nothing that outlives the run of one block: a load in a block
//! reads the element that an earlier store of the same run of that block wrote (the same
//! `i`, an SSA value that cannot change within the run; no other address reaches `A`), so
//! what any element held before the run is never read. Such an array is replaced by one
//! scalar alloca, which SROA then turns into SSA values (in a lane loop: the vectorizer's
//! vector registers). Exact, whatever the loop structure: it relies on nothing but the
//! block's order of accesses.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;

/// Replaces the lane arrays of `module` that qualify (see the module docs) by scalars;
/// returns how many.
pub fn scalarize(module: &Module) -> usize {
    let m = module.as_mut_ptr();
    let mut n = 0;
    unsafe {
        let ctx = LLVMGetModuleContext(m);
        let kind = LLVMGetMDKindIDInContext(ctx, super::lane_stores::LANES.as_ptr() as *const _, super::lane_stores::LANES.len() as u32);
        let b = LLVMCreateBuilderInContext(ctx);
        let mut f = LLVMGetFirstFunction(m);
        while !f.is_null() {
            let entry = LLVMGetFirstBasicBlock(f);
            if !entry.is_null() {
                let mut arrays = Vec::new();
                let mut i = LLVMGetFirstInstruction(entry);
                while !i.is_null() {
                    if !LLVMIsAAllocaInst(i).is_null() && !LLVMGetMetadata(i, kind).is_null() {
                        arrays.push(i);
                    }
                    i = LLVMGetNextInstruction(i);
                }
                for a in arrays {
                    if let Some((elem, geps)) = block_local(a) {
                        LLVMPositionBuilderBefore(b, a);
                        let s = LLVMBuildAlloca(b, elem, c"lane.local".as_ptr());
                        LLVMSetAlignment(s, LLVMGetAlignment(a).min(16));
                        for g in geps {
                            LLVMReplaceAllUsesWith(g, s);
                            LLVMInstructionEraseFromParent(g);
                        }
                        LLVMInstructionEraseFromParent(a);
                        n += 1;
                    }
                }
            }
            f = LLVMGetNextFunction(f);
        }
        LLVMDisposeBuilder(b);
    }
    n
}

/// The users of `v` (each once per use).
unsafe fn users(v: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut u = LLVMGetFirstUse(v);
    while !u.is_null() {
        out.push(LLVMGetUser(u));
        u = LLVMGetNextUse(u);
    }
    out
}

/// For lane array `a` (an alloca of `[N x T]`) whose every use is a GEP `&a[0][i]` with one
/// and the same `i`, used by non-volatile loads and stores of `T` only (as their address),
/// with a store first in each block: `T` and the GEPs. `None` otherwise.
unsafe fn block_local(a: LLVMValueRef) -> Option<(LLVMTypeRef, Vec<LLVMValueRef>)> {
    let at = LLVMGetAllocatedType(a);
    let count = LLVMGetOperand(a, 0);
    if LLVMGetTypeKind(at) != inkwell::llvm_sys::LLVMTypeKind::LLVMArrayTypeKind || LLVMIsAConstantInt(count).is_null() || LLVMConstIntGetZExtValue(count) != 1 {
        return None;
    }
    let elem = LLVMGetElementType(at);
    let geps = users(a);
    let mut index: Option<LLVMValueRef> = None;
    let mut accesses = Vec::new();
    for &g in &geps {
        if LLVMIsAGetElementPtrInst(g).is_null() || LLVMGetNumOperands(g) != 3 || LLVMGetOperand(g, 0) != a || LLVMGetGEPSourceElementType(g) != at {
            return None;
        }
        let first = LLVMGetOperand(g, 1);
        if LLVMIsAConstantInt(first).is_null() || LLVMConstIntGetZExtValue(first) != 0 {
            return None;
        }
        let i = LLVMGetOperand(g, 2);
        match index {
            None => index = Some(i),
            Some(j) if j == i => {}
            Some(_) => return None,
        }
        for u in users(g) {
            let store = match LLVMGetInstructionOpcode(u) {
                LLVMOpcode::LLVMLoad => false,
                LLVMOpcode::LLVMStore if LLVMGetOperand(u, 1) == g && LLVMGetOperand(u, 0) != g => true,
                _ => return None,
            };
            let ty = if store { LLVMTypeOf(LLVMGetOperand(u, 0)) } else { LLVMTypeOf(u) };
            if ty != elem || LLVMGetVolatile(u) != 0 || LLVMGetOrdering(u) != inkwell::llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic {
                return None;
            }
            accesses.push((LLVMGetInstructionParent(u), u, store));
        }
    }
    if geps.is_empty() {
        return None;
    }
    // In each block that accesses the array, the first access must be a store.
    let mut blocks: Vec<LLVMBasicBlockRef> = accesses.iter().map(|x| x.0).collect();
    blocks.sort();
    blocks.dedup();
    for bb in blocks {
        let mine: Vec<LLVMValueRef> = accesses.iter().filter(|x| x.0 == bb).map(|x| x.1).collect();
        let mut i = LLVMGetFirstInstruction(bb);
        loop {
            if i.is_null() {
                return None;
            }
            if let Some(k) = mine.iter().position(|&x| x == i) {
                if !accesses.iter().any(|x| x.1 == mine[k] && x.2) {
                    return None;
                }
                break;
            }
            i = LLVMGetNextInstruction(i);
        }
    }
    Some((elem, geps))
}
