//! Which registers cross each synchronization point.
//!
//! In a kernel with synchronization, registers are entry-block allocas (so LLVM promotes them
//! to SSA values between sync points), and a thread's registers are copied to its frame only
//! where it leaves for the scheduler. This backward liveness pass over the emitted LLVM
//! function decides which: a register must be saved at sync point `k` exactly when some path
//! from the resume point of `k` reads it before writing it.
//!
//! The analysis runs on the function's CFG with two changes: a block that ends at a sync
//! point continues, for liveness, where its resume block continues (the thread leaves for the
//! scheduler and comes back there with its saved registers), and the resume blocks define
//! every register (they reload what is live). A register whose address
//! is used other than by a load or a full store (passed to a call, stored as a value,
//! written with a narrower type) is treated as live everywhere.

use inkwell::basic_block::BasicBlock;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::values::{AsValueRef, FunctionValue, PointerValue};
use std::collections::HashMap;

/// A set of register indices.
#[derive(Clone, PartialEq, Eq)]
pub struct Bits(Vec<u64>);

impl Bits {
    pub fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    pub fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub fn has(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    pub fn union_with(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= *b;
        }
    }
}

/// Calls `f(instruction, opcode, operand number, register)` for each operand of the
/// instructions of `bb` that is one of the registers of `index`.
unsafe fn for_reg_operands(bb: LLVMBasicBlockRef, index: &HashMap<LLVMValueRef, usize>, mut f: impl FnMut(LLVMValueRef, LLVMOpcode, u32, usize)) {
    let mut inst = LLVMGetFirstInstruction(bb);
    while !inst.is_null() {
        let op = LLVMGetInstructionOpcode(inst);
        let nops = LLVMGetNumOperands(inst).max(0) as u32;
        for o in 0..nops {
            if let Some(&r) = index.get(&LLVMGetOperand(inst, o)) {
                f(inst, op, o, r);
            }
        }
        inst = LLVMGetNextInstruction(inst);
    }
}

/// For each sync point `(leave, resume)` of `sites`, the registers live across it (`regs`
/// indexes the sets).
pub fn across(f: FunctionValue, regs: &[PointerValue], sites: &[(BasicBlock, BasicBlock)]) -> Vec<Bits> {
    let n = regs.len();
    let index: HashMap<LLVMValueRef, usize> = regs.iter().enumerate().map(|(k, r)| (r.as_value_ref(), k)).collect();
    let mut escaping = Bits::new(n);
    // Per block: upward-exposed uses, definitions, successors.
    let blocks: Vec<LLVMBasicBlockRef> = f.get_basic_blocks().iter().map(|b| b.as_mut_ptr()).collect();
    let bidx: HashMap<LLVMBasicBlockRef, usize> = blocks.iter().enumerate().map(|(k, b)| (*b, k)).collect();
    let leave_to: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef> = sites.iter().map(|(l, r)| (l.as_mut_ptr(), r.as_mut_ptr())).collect();
    let def_all: Vec<LLVMBasicBlockRef> = sites.iter().map(|s| s.1.as_mut_ptr()).collect();
    let mut uses = vec![Bits::new(n); blocks.len()];
    let mut defs = vec![Bits::new(n); blocks.len()];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    for (k, &bb) in blocks.iter().enumerate() {
        unsafe {
            for_reg_operands(bb, &index, |inst, op, o, r| {
                    let v = LLVMGetOperand(inst, o);
                    match (op, o) {
                        (LLVMOpcode::LLVMLoad, 0) => {
                            if !defs[k].has(r) {
                                uses[k].set(r);
                            }
                        }
                        (LLVMOpcode::LLVMStore, 1) => {
                            let val_t = LLVMTypeOf(LLVMGetOperand(inst, 0));
                            if val_t == LLVMGetAllocatedType(v) {
                                defs[k].set(r);
                            } else {
                                escaping.set(r);
                            }
                        }
                        _ => escaping.set(r),
                    }
            });
            if def_all.contains(&bb) {
                for r in 0..n {
                    defs[k].set(r);
                }
            }
            {
                let term = LLVMGetBasicBlockTerminator(*leave_to.get(&bb).unwrap_or(&bb));
                if !term.is_null() {
                    for s in 0..LLVMGetNumSuccessors(term) {
                        if let Some(&j) = bidx.get(&LLVMGetSuccessor(term, s)) {
                            succs[k].push(j);
                        }
                    }
                }
            }
        }
    }
    // Backward dataflow to a fixed point: in = use ∪ (out − def), out = ∪ in(successors).
    let mut live_in = vec![Bits::new(n); blocks.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..blocks.len()).rev() {
            let mut out = Bits::new(n);
            for &s in &succs[k] {
                out.union_with(&live_in[s]);
            }
            let mut inn = uses[k].clone();
            for (w, (o, d)) in inn.0.iter_mut().zip(out.0.iter().zip(&defs[k].0)) {
                *w |= *o & !*d;
            }
            if inn != live_in[k] {
                live_in[k] = inn;
                changed = true;
            }
        }
    }
    sites
        .iter()
        .map(|(_, q)| {
            let k = bidx[&q.as_mut_ptr()];
            let mut out = escaping.clone();
            for &s in &succs[k] {
                out.union_with(&live_in[s]);
            }
            out
        })
        .collect()
}

/// The registers written (`true`) or read (`false`) in the blocks reachable from `entry`
/// without passing one of `stops`.
pub fn accessed_from(regs: &[PointerValue], entry: BasicBlock, stops: &[BasicBlock], writes: bool) -> Bits {
    let index: HashMap<LLVMValueRef, usize> = regs.iter().enumerate().map(|(k, r)| (r.as_value_ref(), k)).collect();
    let stops: Vec<LLVMBasicBlockRef> = stops.iter().map(|b| b.as_mut_ptr()).collect();
    let mut seen: std::collections::HashSet<LLVMBasicBlockRef> = std::collections::HashSet::new();
    let mut work = vec![entry.as_mut_ptr()];
    let mut out = Bits::new(regs.len());
    while let Some(bb) = work.pop() {
        if stops.contains(&bb) || !seen.insert(bb) {
            continue;
        }
        unsafe {
            for_reg_operands(bb, &index, |_, op, o, r| {
                if (op == LLVMOpcode::LLVMLoad && o == 0) != writes {
                    out.set(r);
                }
            });
            let term = LLVMGetBasicBlockTerminator(bb);
            if !term.is_null() {
                for k in 0..LLVMGetNumSuccessors(term) {
                    work.push(LLVMGetSuccessor(term, k));
                }
            }
        }
    }
    out
}

/// Registers whose every write is the same constant (`mov.u32 %r8, 31` and no other write):
/// their value at a resume point is that constant (or undefined, before the write), so they
/// are not saved, and resuming writes the constant. Per register index, the constant.
pub fn constants(f: FunctionValue, regs: &[PointerValue]) -> Vec<Option<LLVMValueRef>> {
    let index: HashMap<LLVMValueRef, usize> = regs.iter().enumerate().map(|(k, r)| (r.as_value_ref(), k)).collect();
    // None: no write seen yet; Some(Some(c)): always `c`; Some(None): anything else.
    let mut seen: Vec<Option<Option<LLVMValueRef>>> = vec![None; regs.len()];
    for bb in f.get_basic_blocks() {
        unsafe {
            for_reg_operands(bb.as_mut_ptr(), &index, |inst, op, o, r| {
                    if op == LLVMOpcode::LLVMLoad && o == 0 {
                        return;
                    }
                    let c = if op == LLVMOpcode::LLVMStore && o == 1 {
                        let v = LLVMGetOperand(inst, 0);
                        (LLVMIsConstant(v) != 0 && LLVMIsUndef(v) == 0 && LLVMTypeOf(v) == LLVMGetAllocatedType(regs[r].as_value_ref())).then_some(v)
                    } else {
                        None
                    };
                    seen[r] = match (seen[r], c) {
                        (None, Some(c)) => Some(Some(c)),
                        (Some(Some(a)), Some(c)) if a == c => Some(Some(a)),
                        _ => Some(None),
                    };
            });
        }
    }
    seen.into_iter().map(|s| s.flatten()).collect()
}
