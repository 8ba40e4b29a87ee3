//! Lane arrays out of memory, except where a loop indexes them by lane.
//!
//! A lane array (`!ptxr.lanes`, one element per lane of the warp) becomes vector registers
//! through SROA only if every access to it is at a constant offset. The loop vectorizer turns
//! the warp path's lane loops into whole-vector accesses, but where it vectorizes under a
//! runtime check it keeps the scalar loop for the other case (a lane index `base + lane` whose
//! 32-bit sum may wrap, for example), and that loop reads and writes the array at the lane's
//! index. One such cold loop kept every lane array it touched in memory, so that each
//! vectorized loop stored the array and the next loaded it back (through the store buffer:
//! a load that waits for a whole 64-byte store to forward).
//!
//! This pass gives such an array a *shadow*, a second alloca of the same type used only inside
//! the regions that index it: for each block with a variable-index access, the innermost loop
//! around it (by dominators, on the CFG as it stands), or the block alone. Every access inside
//! a region goes to the shadow, every edge into a region copies the array to the shadow and
//! every edge out of one copies it back, so at each point of the function exactly one of the
//! two holds the lanes' values and the accesses see what they saw before. Outside the regions
//! only constant offsets remain, and the pipeline's last SROA (`passes::pipeline_stages`)
//! makes the array registers. Runs after `lane_stores::unmask`.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::target::{LLVMABISizeOfType, LLVMGetModuleDataLayout, LLVMTargetDataRef};
use inkwell::llvm_sys::LLVMOpcode;
use super::lane_stores::callee_name;
use inkwell::module::Module;
use std::collections::{HashMap, HashSet};

/// Gives the lane arrays of `module` that are indexed by lane a shadow in the regions that
/// index them; returns how many arrays.
pub fn shadow(module: &Module) -> usize {
    let m = module.as_mut_ptr();
    let mut n = 0;
    unsafe {
        let ctx = LLVMGetModuleContext(m);
        let kind = LLVMGetMDKindIDInContext(ctx, super::lane_stores::LANES.as_ptr() as *const _, super::lane_stores::LANES.len() as u32);
        let td = LLVMGetModuleDataLayout(m);
        let b = LLVMCreateBuilderInContext(ctx);
        let mut f = LLVMGetFirstFunction(m);
        while !f.is_null() {
            if LLVMCountBasicBlocks(f) > 0 {
                n += shadow_function(ctx, td, b, f, kind);
            }
            f = LLVMGetNextFunction(f);
        }
        LLVMDisposeBuilder(b);
    }
    n
}

/// An access to a lane array: the instruction and whether its address is a constant offset.
struct Access {
    inst: LLVMValueRef,
    constant: bool,
}

/// The control-flow graph of a function as it was before the pass split any edge.
struct Graph {
    index: HashMap<LLVMBasicBlockRef, usize>,
    /// Natural loops: header, body (header included).
    loops: Vec<(usize, HashSet<usize>)>,
}

unsafe fn graph(f: LLVMValueRef) -> Graph {
    let mut blocks = Vec::new();
    let mut bb = LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        blocks.push(bb);
        bb = LLVMGetNextBasicBlock(bb);
    }
    let index: HashMap<_, _> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let succs: Vec<Vec<usize>> = blocks
        .iter()
        .map(|&b| {
            let t = LLVMGetBasicBlockTerminator(b);
            if t.is_null() {
                return Vec::new();
            }
            (0..LLVMGetNumSuccessors(t)).map(|k| index[&LLVMGetSuccessor(t, k)]).collect()
        })
        .collect();
    let mut preds = vec![Vec::new(); blocks.len()];
    for (u, s) in succs.iter().enumerate() {
        for &v in s {
            preds[v].push(u);
        }
    }
    // Reverse post-order from the entry, then dominators (Cooper, Harvey and Kennedy's
    // iterative algorithm).
    let mut order = Vec::new();
    let mut seen = vec![false; blocks.len()];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some(&mut (u, ref mut k)) = stack.last_mut() {
        if *k < succs[u].len() {
            let v = succs[u][*k];
            *k += 1;
            if !seen[v] {
                seen[v] = true;
                stack.push((v, 0));
            }
        } else {
            order.push(u);
            stack.pop();
        }
    }
    order.reverse();
    let mut rpo = vec![usize::MAX; blocks.len()];
    for (k, &u) in order.iter().enumerate() {
        rpo[u] = k;
    }
    let mut idom = vec![usize::MAX; blocks.len()];
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for &u in order.iter().skip(1) {
            let mut new = usize::MAX;
            for &p in &preds[u] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    let (mut a, mut c) = (p, new);
                    while a != c {
                        while rpo[a] > rpo[c] {
                            a = idom[a];
                        }
                        while rpo[c] > rpo[a] {
                            c = idom[c];
                        }
                    }
                    a
                };
            }
            if new != idom[u] {
                idom[u] = new;
                changed = true;
            }
        }
    }
    let dominates = |h: usize, mut t: usize| loop {
        if t == h {
            return true;
        }
        if t == 0 || idom[t] == usize::MAX {
            return false;
        }
        t = idom[t];
    };
    let mut bodies: HashMap<usize, HashSet<usize>> = HashMap::new();
    for &t in &order {
        for &h in &succs[t] {
            if !dominates(h, t) {
                continue;
            }
            let body = bodies.entry(h).or_insert_with(|| HashSet::from([h]));
            let mut work = vec![t];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(preds[x].iter().copied().filter(|&p| idom[p] != usize::MAX));
                }
            }
        }
    }
    let loops = bodies.into_iter().collect();
    Graph { index, loops }
}

unsafe fn shadow_function(ctx: LLVMContextRef, td: LLVMTargetDataRef, b: LLVMBuilderRef, f: LLVMValueRef, kind: u32) -> usize {
    let mut arrays = Vec::new();
    let entry = LLVMGetFirstBasicBlock(f);
    let mut i = LLVMGetFirstInstruction(entry);
    while !i.is_null() {
        if !LLVMIsAAllocaInst(i).is_null() && !LLVMGetMetadata(i, kind).is_null() {
            arrays.push(i);
        }
        i = LLVMGetNextInstruction(i);
    }
    if arrays.is_empty() {
        return 0;
    }
    let mut g: Option<Graph> = None;
    // Blocks this pass made on an edge, each standing for the block the edge led to.
    let mut split: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef> = HashMap::new();
    let mut n = 0;
    for a in arrays {
        let Some(accesses) = accesses(a) else { continue };
        if accesses.iter().all(|x| x.constant) {
            continue;
        }
        let g = g.get_or_insert_with(|| graph(f));
        let home = |split: &HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef>, mut bb: LLVMBasicBlockRef| {
            while let Some(&v) = split.get(&bb) {
                bb = v;
            }
            g.index[&bb]
        };
        // The regions: for each block with an access at a variable index, the innermost
        // loop around it, else the block.
        let mut region: HashSet<usize> = HashSet::new();
        for x in accesses.iter().filter(|x| !x.constant) {
            let u = home(&split, LLVMGetInstructionParent(x.inst));
            if region.contains(&u) {
                continue;
            }
            match g.loops.iter().filter(|(_, body)| body.contains(&u)).min_by_key(|(_, body)| body.len()) {
                Some((_, body)) => region.extend(body.iter().copied()),
                None => {
                    region.insert(u);
                }
            }
        }
        // Every edge across the regions' border must be one this pass can split.
        let mut crossing = Vec::new();
        let mut ok = true;
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let t = LLVMGetBasicBlockTerminator(bb);
            let from = region.contains(&home(&split, bb));
            if !t.is_null() {
                let mut seen = HashSet::new();
                for k in 0..LLVMGetNumSuccessors(t) {
                    let v = LLVMGetSuccessor(t, k);
                    if region.contains(&home(&split, v)) != from && seen.insert(v) {
                        let op = LLVMGetInstructionOpcode(t);
                        ok &= op == LLVMOpcode::LLVMBr || op == LLVMOpcode::LLVMSwitch;
                        crossing.push((bb, v, !from));
                    }
                }
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        if !ok {
            continue;
        }
        // The shadow, beside the array.
        LLVMPositionBuilderBefore(b, a);
        let ty = LLVMGetAllocatedType(a);
        let s = LLVMBuildAlloca(b, ty, c"lanes.shadow".as_ptr());
        let align = LLVMGetAlignment(a);
        LLVMSetAlignment(s, align);
        let size = LLVMConstInt(LLVMInt64TypeInContext(ctx), LLVMABISizeOfType(td, ty), 0);
        for x in &accesses {
            if is_lifetime(x.inst) {
                // A lifetime marker inside a region would end or restart the shadow's
                // lifetime after the copy in: dropped (the array lives as long as the call).
                LLVMInstructionEraseFromParent(x.inst);
            } else if region.contains(&home(&split, LLVMGetInstructionParent(x.inst))) {
                rebase(b, x.inst, a, s);
            }
        }
        for (u, v, into) in crossing {
            let x = LLVMAppendBasicBlockInContext(ctx, f, if into { c"lanes.to.shadow".as_ptr() } else { c"lanes.from.shadow".as_ptr() });
            LLVMPositionBuilderAtEnd(b, x);
            let (dst, src) = if into { (s, a) } else { (a, s) };
            LLVMBuildMemCpy(b, dst, align, src, align, size);
            LLVMBuildBr(b, v);
            let t = LLVMGetBasicBlockTerminator(u);
            for k in 0..LLVMGetNumSuccessors(t) {
                if LLVMGetSuccessor(t, k) == v {
                    LLVMSetSuccessor(t, k, x);
                }
            }
            repoint_phis(b, v, u, x, false);
            split.insert(x, v);
        }
        n += 1;
    }
    n
}

/// The accesses of the lane array `a` (through `getelementptr`s only), or `None` if its
/// address goes anywhere else (a phi, a call other than the memory intrinsics, a store of the
/// address itself, ...).
unsafe fn accesses(a: LLVMValueRef) -> Option<Vec<Access>> {
    let mut out = Vec::new();
    let mut work = vec![(a, true)];
    while let Some((p, constant)) = work.pop() {
        let mut u = LLVMGetFirstUse(p);
        while !u.is_null() {
            let user = LLVMGetUser(u);
            u = LLVMGetNextUse(u);
            if !LLVMIsAGetElementPtrInst(user).is_null() {
                if LLVMGetOperand(user, 0) != p {
                    return None;
                }
                let c = (1..LLVMGetNumOperands(user) as u32).all(|k| !LLVMIsAConstantInt(LLVMGetOperand(user, k)).is_null());
                work.push((user, constant && c));
            } else if !LLVMIsALoadInst(user).is_null() {
                out.push(Access { inst: user, constant });
            } else if !LLVMIsAStoreInst(user).is_null() {
                if LLVMGetOperand(user, 0) == p {
                    return None;
                }
                out.push(Access { inst: user, constant });
            } else if !LLVMIsACallInst(user).is_null() {
                let name = callee_name(user)?;
                let memory = ["llvm.memcpy.", "llvm.memmove.", "llvm.memset.", "llvm.lifetime."].iter().any(|k| name.starts_with(k.as_bytes()));
                let masked = ["llvm.masked.load.", "llvm.masked.store.", "llvm.masked.gather.", "llvm.masked.scatter."].iter().any(|k| name.starts_with(k.as_bytes()));
                if !memory && !masked {
                    return None;
                }
                // A memory intrinsic of a constant length SROA splits; a masked access it
                // cannot.
                let len_const = !memory || name.starts_with(b"llvm.lifetime.") || !LLVMIsAConstantInt(LLVMGetOperand(user, 2)).is_null();
                out.push(Access { inst: user, constant: constant && !masked && len_const });
            } else {
                return None;
            }
        }
    }
    Some(out)
}

unsafe fn is_lifetime(i: LLVMValueRef) -> bool {
    callee_name(i).is_some_and(|n| n.starts_with(b"llvm.lifetime."))
}

/// Points the operands of `inst` that address the array `a` at the same place in `s`
/// (copies of the `getelementptr` chain, put right before `inst`).
unsafe fn rebase(b: LLVMBuilderRef, inst: LLVMValueRef, a: LLVMValueRef, s: LLVMValueRef) {
    unsafe fn on(b: LLVMBuilderRef, p: LLVMValueRef, a: LLVMValueRef, s: LLVMValueRef) -> Option<LLVMValueRef> {
        if p == a {
            return Some(s);
        }
        if LLVMIsAGetElementPtrInst(p).is_null() {
            return None;
        }
        let base = on(b, LLVMGetOperand(p, 0), a, s)?;
        let c = LLVMInstructionClone(p);
        LLVMInsertIntoBuilder(b, c);
        LLVMSetOperand(c, 0, base);
        Some(c)
    }
    LLVMPositionBuilderBefore(b, inst);
    for k in 0..LLVMGetNumOperands(inst) as u32 {
        if let Some(q) = on(b, LLVMGetOperand(inst, k), a, s) {
            LLVMSetOperand(inst, k, q);
        }
    }
}

/// The name of value `v`, owned (to give it to another value once `v` has lost it).
pub(super) unsafe fn value_name(v: LLVMValueRef) -> std::ffi::CString {
    let mut len = 0;
    let name = LLVMGetValueName2(v, &mut len);
    std::ffi::CString::new(std::slice::from_raw_parts(name as *const u8, len)).unwrap_or_default()
}

/// In the phis of `v`, the edges from `u` now come from `x`: each is rebuilt with `x` in
/// place of `u` (the C API cannot set an incoming block). `every`: `x` took over all of
/// `u`'s edges to `v` (a block split in two: a switch keeps one entry per case); else `x`
/// is a block on the edge, with one edge to `v`, and a switch's several entries for its
/// cases to `v`, all the same value, become one.
pub(super) unsafe fn repoint_phis(b: LLVMBuilderRef, v: LLVMBasicBlockRef, u: LLVMBasicBlockRef, x: LLVMBasicBlockRef, every: bool) {
    let mut i = LLVMGetFirstInstruction(v);
    while !i.is_null() && !LLVMIsAPHINode(i).is_null() {
        let next = LLVMGetNextInstruction(i);
        LLVMPositionBuilderBefore(b, i);
        let name = value_name(i);
        LLVMSetValueName2(i, c"".as_ptr(), 0);
        let phi = LLVMBuildPhi(b, LLVMTypeOf(i), name.as_ptr());
        let mut moved = false;
        for k in 0..LLVMCountIncoming(i) {
            let (mut val, mut from) = (LLVMGetIncomingValue(i, k), LLVMGetIncomingBlock(i, k));
            if from == u {
                if moved && !every {
                    continue;
                }
                moved = true;
                from = x;
            }
            LLVMAddIncoming(phi, &mut val, &mut from, 1);
        }
        LLVMReplaceAllUsesWith(i, phi);
        LLVMInstructionEraseFromParent(i);
        i = next;
    }
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// A lane loop that reads and writes `%lanes` at the lane's index, between whole-array
    /// accesses; `%plain` is no lane array, `%escapes` goes to a call.
    const IR: &str = r#"
define i32 @f(<32 x i32> %v, i1 %c, ptr %out) {
entry:
  %lanes = alloca [32 x i32], align 64, !ptxr.lanes !0
  %plain = alloca [32 x i32], align 64
  %escapes = alloca [32 x i32], align 64, !ptxr.lanes !0
  %consts = alloca [32 x i32], align 64, !ptxr.lanes !0
  store <32 x i32> %v, ptr %lanes, align 64
  store <32 x i32> %v, ptr %consts, align 64
  call void @g(ptr %escapes)
  br i1 %c, label %loop, label %after

loop:
  %l = phi i32 [ 0, %entry ], [ %l1, %loop ]
  %p = getelementptr inbounds [32 x i32], ptr %lanes, i32 0, i32 %l
  %x = load i32, ptr %p, align 4
  %y = add i32 %x, 1
  store i32 %y, ptr %p, align 4
  %q = getelementptr inbounds [32 x i32], ptr %plain, i32 0, i32 %l
  store i32 %y, ptr %q, align 4
  %l1 = add i32 %l, 1
  %more = icmp ult i32 %l1, 32
  br i1 %more, label %loop, label %after

after:
  %from = phi i32 [ 0, %entry ], [ 1, %loop ]
  %w = load <32 x i32>, ptr %lanes, align 64
  store <32 x i32> %w, ptr %out, align 64
  %hi = getelementptr inbounds i8, ptr %consts, i64 64
  %h = load i32, ptr %hi, align 4
  %r = add i32 %h, %from
  ret i32 %r
}
declare void @g(ptr)
!0 = !{}
"#;

    /// Only `%lanes` gets a shadow: the loop's accesses go to it, the edge into the loop
    /// copies the array in, the edge out copies it back, the phi after the loop takes the
    /// value of the loop's edge from the new block; the other allocas stay as they were.
    #[test]
    fn indexed_lane_arrays_get_a_shadow_in_their_loop() {
        let ctx = Context::create();
        let m = ctx.create_module_from_ir(MemoryBuffer::create_from_memory_range_copy(IR.as_bytes(), "t")).unwrap();
        assert_eq!(super::shadow(&m), 1);
        m.verify().unwrap();
        let text = m.print_to_string().to_string();
        let f = text.split("define i32 @f").nth(1).unwrap();
        assert!(f.contains("%lanes.shadow = alloca [32 x i32], align 64"), "{text}");
        assert_eq!(f.matches("alloca").count(), 5, "{text}");
        assert!(f.contains("getelementptr inbounds [32 x i32], ptr %lanes.shadow, i32 0, i32 %l"), "{text}");
        assert!(f.contains("getelementptr inbounds [32 x i32], ptr %plain, i32 0, i32 %l"), "{text}");
        assert!(f.contains("br i1 %c, label %lanes.to.shadow, label %after"), "{text}");
        assert!(f.contains("br i1 %more, label %loop, label %lanes.from.shadow"), "{text}");
        assert!(f.contains("  call void @llvm.memcpy.p0.p0.i64(ptr align 64 %lanes.shadow, ptr align 64 %lanes, i64 128, i1 false)\n  br label %loop"), "{text}");
        assert!(f.contains("  call void @llvm.memcpy.p0.p0.i64(ptr align 64 %lanes, ptr align 64 %lanes.shadow, i64 128, i1 false)\n  br label %after"), "{text}");
        assert!(f.contains("%l = phi i32 [ 0, %lanes.to.shadow ], [ %l1, %loop ]"), "{text}");
        assert!(f.contains("%from = phi i32 [ 0, %entry ], [ 1, %lanes.from.shadow ]"), "{text}");
        assert!(f.contains("load <32 x i32>, ptr %lanes, align 64"), "{text}");
        assert!(f.contains("call void @g(ptr %escapes)"), "{text}");
    }
}
