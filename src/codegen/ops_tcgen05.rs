//! Blackwell's tensor memory and fifth-generation tensor core (PTX ISA 9.0 9.7.16, sm_100a):
//! `tcgen05.alloc`/`dealloc`/`relinquish_alloc_permit`, `tcgen05.mma` (`.cta_group::1`,
//! `.kind::f16`/`tf32`/`f8f6f4`/`i8` and the block-scaled `mxf8f6f4`/`mxf4`/`mxf4nvf4`, A
//! from shared memory or tensor memory),
//! `tcgen05.commit`, `tcgen05.ld`/`st` in every shape, `tcgen05.shift`, `tcgen05.cp`,
//! `tcgen05.wait` and `tcgen05.fence`.
//!
//! **Tensor memory** (9.7.16.1) is 128 lanes of 512 columns of 32-bit cells per CTA; an
//! address is `lane << 16 | column`. Here it is 256 KiB of the kernel's stack frame (the CTA
//! function runs a whole CTA), lane-major, with a bitmap of the sixteen 32-column units
//! (9.7.16.7.1: columns are allocated in powers of two from 32 to 512, every lane of each). A
//! warp allocates when all its threads reach `tcgen05.alloc` (`.sync.aligned`): its lane 0
//! takes the lowest free run of the size, aligned to it, and stores its address (lane 0) at
//! `[dst]` in shared memory; an allocation that cannot be had stops the CTA (on a GPU it would
//! wait for another CTA's `dealloc`, and a CTA here has the whole tensor memory to itself).
//!
//! **`tcgen05.mma`** (9.7.16.10.9.1) has single-thread semantics: the issuing thread starts the
//! whole M x N x K product D = A * B + D (D = A * B when `enable-input-d` is false), which
//! completes here when it is issued, as the asynchronous operations of `wgmma` do (the ISA
//! forbids reading D before a `tcgen05.commit`'s mbarrier phase, or an equivalent wait, says
//! it is done). The instruction descriptor (9.7.16.4.2, Table 42) gives D's type (bits 4-5),
//! A's and B's (7-9, 10-12), negation (13, 14), transposition (15, 16: 0 is K-major, 1 M- or
//! N-major), N >> 3 (17-22) and M >> 4 (24-28); K is 16 for `.kind::f16`, 8 for `.tf32`, 32
//! for `.f8f6f4` and `.i8`. A and B in shared memory come from matrix descriptors
//! (9.7.16.4.1), whose layouts are wgmma's (`ops_wgmma::desc_address`; the swizzle mode sits
//! in bits 61-63). D (and A in tensor memory) take one lane per row, one 32-bit column per
//! element of D (a 16-bit D element in the low half, 9.7.16.10.4.1) and K-packed columns of
//! A (two 16-bit or four 8-bit elements per column): for M = 128 row m is lane m (layout D),
//! for M = 64 row m is lane 32 (m / 16) + m % 16 after the address's lane, 0 or 16 (layout
//! F, half of each warp's lanes). Each element is a sum over k in order, in f32 (s32 for
//! `.i8`), like `wgmma`'s.
//!
//! **`tcgen05.ld`/`st`** (9.7.16.8.3-4) move each thread's registers from and to the lanes
//! of its warp's quarter of tensor memory (warp w % 4: lanes 32 (w % 4) ..): with t the lane
//! of the thread and register i, shape `.32x32b` is lane t, column i; `.16x64b` lane
//! t / 4 + 8 (t % 2), column 2i + (t / 2) % 2; `.16x128b` lane t / 4 + 8 (i % 2), column
//! 4 (i / 2) + t % 4; `.16x256b` lane t / 4 + 8 ((i % 4) / 2), column 8 (i / 4) + 2 (t % 4) +
//! i % 2; `.16x32bx2` lane t % 16, column i plus `immHalfSplitoff` for threads 16-31, all from
//! the address's lane and column (the ISA gives these as figures; they are CUTLASS's, and
//! Triton's sm_100a kernels, which move D and P this way, give the exact products with them:
//! `tests/triton_sm100`). `.pack::16b` (`.unpack::16b`) joins the low halves of two
//! adjacent columns into one register (`.32x32b` and `.16x32bx2`, whose register columns are
//! adjacent). Being synchronous here, `tcgen05.wait::ld`/`st` and the `tcgen05.fence`s have
//! nothing to wait for; `tcgen05.commit` arrives (count 1) on its mbarrier at once, in each
//! CTA of its `ctaMask` with `.multicast::cluster`.
//!
//! **Block scaling** (9.7.16.10.7): `.kind::mxf8f6f4` (e4m3, e5m2; `.scale_vec::1X`),
//! `.kind::mxf4` (E2M1, two to a byte, the even element in the low nibble; 2X) and
//! `.kind::mxf4nvf4` (2X, or 4X with block 16) multiply each element of A and B by the scale
//! factor of its block of K (UE8M0, 2^(e-127); UE4M3 for 4X where descriptor bit 23 is
//! clear). The factors of A's row r lie in lane r of the scale-A address, column r / 32; those
//! of B's column n in lane n % 32 of each 32-lane partition (the ISA has them duplicated to
//! all four; the partition of D's row is read), column n / 32; an instruction's factors are
//! consecutive bytes of the word from its data id's byte (descriptor bits 29-30 for A, 4-5
//! for B). The ISA draws these layouts; Triton's sm_100a `tl.dot_scaled` kernels, which place
//! their scales in tensor memory themselves, give numpy's exact products with this reading
//! (`tests/triton_sm100/dot_scaled_*`).
//!
//! **`tcgen05.shift`** (9.7.16.9.3) moves 31 rows of 256 bits down by one row when issued;
//! **`tcgen05.cp`** (9.7.16.9.2) copies a descriptor's matrix from shared memory into lanes
//! and columns of tensor memory when issued ([`CpShape`] for the shapes and multicasts).
//!
//! In `.kind::f8f6f4` and `mxf8f6f4` an operand may also be E2M1 (type code 5) in the padded
//! form `.b4x16_p64`, or E2M3 / E3M2 (codes 3, 4) in the padded form `.b6x16_p32`, K-major in
//! shared memory (`smem_at` in [`products`]).
//!
//! **CTA pairs** (`.cta_group::2`, 9.7.16.2; ranks 2k and 2k + 1 of a cluster, whose shared
//! addresses are `rank << 24 | offset`, `FnEmitter::shared_base`): each CTA of the pair
//! allocates (and frees) the same columns of its own tensor memory, as both run the same
//! allocations. One thread of either CTA issues the pair's `tcgen05.mma` of M = 256 (data
//! path layout A, 9.7.16.10.5): A's rows 0-127 come from CTA 2k's shared memory (or tensor
//! memory) and rows 128-255 from CTA 2k + 1's, at the same descriptor (address); B's columns
//! 0 to N/2 - 1 from CTA 2k's and the others from CTA 2k + 1's; D's rows 0-127 go to CTA
//! 2k's tensor memory and rows 128-255 to CTA 2k + 1's, at the same address, row m of each
//! half in lane m (the 4 + 4 words of disable-output-lane in that order); block scale
//! factors come from the tensor memory of D's CTA (B's whole). M = 128 (layout B) is the
//! same with 64 rows per CTA, each CTA's D folded into its two 64-lane halves: row r's
//! columns of B's first half in lane r, of its second half in lane 64 + r, both from D's
//! column (so D takes N/2 columns); A from shared memory, not block-scaled (the layouts of
//! the other operands are not known here). Each CTA's tensor memory is found through a slot
//! after its shared window (`abi::CLUSTER_SLOT_BYTES`). Triton's Gluon kernels with
//! `TensorMemoryLayout(two_ctas=True)` give numpy's exact products this way for M = 256 and
//! 128 (`tests/triton_sm100/two_cta_*`; Triton reads M = 128's D back by the layout above).
//! The pairs' `tcgen05.cp` and `shift` are not supported yet.
//!
//! Not yet: `.ws`, sparsity, K = 96 (descriptor bit 31) and `tcgen05.cp`'s
//! decompressing forms (errors naming them; a descriptor they need stops the CTA with a bad
//! address).

use super::func::{FnEmitter, R};
use super::ops_wgmma::{desc_address, desc_fields, elem_f32, Ty};
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::values::{FloatValue, FunctionValue, IntValue, PointerValue};
use inkwell::IntPredicate;

/// Columns of tensor memory per lane, and lanes.
const COLS: u64 = 512;
const LANES: u64 = 128;

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if i.opcode.name != "tcgen05" {
        return Ok(false);
    }
    let op = *i.mods.first().unwrap_or(&"");
    if e.m.nvptx {
        return Err(e.err(i.opcode.span, "`tcgen05` does not reach LLVM 19's NVPTX backend, which has no sm_100 target"));
    }
    if i.has_mod("cta_group::2") && matches!(op, "cp" | "shift") {
        return Err(e.err(i.opcode.span, format!("`tcgen05.{op}` with `.cta_group::2` (CTA pairs) is not supported by ptxr yet; `.cta_group::1` is, and so are the pairs' `alloc`, `mma` and `commit`")));
    }
    match op {
        // With `.cta_group::2` each CTA of the pair allocates the same columns in its own
        // tensor memory (module doc, CTA pairs).
        "alloc" => alloc(e, i),
        "dealloc" => dealloc(e, i),
        // Nothing else allocates here.
        "relinquish_alloc_permit" => Ok(()),
        // The operations complete when issued (module doc).
        "wait::ld" | "wait::st" | "fence::before_thread_sync" | "fence::after_thread_sync" => Ok(()),
        "mma" => mma(e, i),
        "commit" => commit(e, i),
        "ld" | "st" => ld_st(e, i, op == "st"),
        "shift" => shift(e, i),
        "cp" => cp(e, i),
        _ => Err(e.err(i.opcode.span, format!("`tcgen05.{op}` is not supported by ptxr yet"))),
    }
    .map(|_| true)
}

/// This kernel's tensor memory and its allocation bitmap (allocas of the CTA function).
fn tmem<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, at: &Instr) -> R<(PointerValue<'ctx>, PointerValue<'ctx>)> {
    if let Some(t) = e.tmem {
        return Ok(t);
    }
    if !e.is_kernel {
        return Err(e.err(at.opcode.span, "ptxr runs `tcgen05` in kernels (.entry), not in functions they call"));
    }
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let arr = e.alloca_b.build_alloca(i32t.array_type((LANES * COLS) as u32), "tmem").unwrap();
    if let Some(inst) = arr.as_instruction() {
        let _ = inst.set_alignment(16);
    }
    let used = e.alloca_b.build_alloca(i32t, "tmem.used").unwrap();
    e.alloca_b.build_store(used, i32t.const_zero()).unwrap();
    if e.m.cta_pairs {
        // Where the peer finds it: the slot after this CTA's window ([`peer_slot`]), written
        // when the CTA starts; a launch without clusters has none (a scratch slot instead).
        let i64t = ctx.i64_type();
        let stride = e.cluster_u32(super::abi::cluster_field::STRIDE, None);
        let raw = e.raw_shared_base();
        let b = &e.alloca_b;
        let stride = b.build_int_z_extend(stride, i64t, "").unwrap();
        let at = b.build_int_sub(stride, i64t.const_int(super::abi::CLUSTER_SLOT_BYTES, false), "").unwrap();
        let slot = unsafe { b.build_gep(ctx.i8_type(), raw, &[at], "tmem.slot").unwrap() };
        let scratch = b.build_alloca(i64t, "tmem.noslot").unwrap();
        let none = b.build_int_compare(IntPredicate::EQ, stride, i64t.const_zero(), "").unwrap();
        let slot = b.build_select(none, scratch, slot, "").unwrap().into_pointer_value();
        b.build_store(slot, arr).unwrap();
    }
    e.tmem = Some((arr, used));
    Ok((arr, used))
}

/// CTA pairs (`.cta_group::2`): the window (as its variables see it) and tensor memory of
/// rank `r` of the cluster. Each CTA's tensor memory address lies in the slot of
/// `abi::CLUSTER_SLOT_BYTES` at the end of its window's stride (written by [`tmem`] when the
/// CTA starts), its window `(r - rank) * stride` from this one's.
fn peer_slot<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, r: IntValue<'ctx>) -> (PointerValue<'ctx>, PointerValue<'ctx>) {
    let ctx = e.ctx();
    let (i8t, i64t) = (ctx.i8_type(), ctx.i64_type());
    let stride = e.cluster_u32(super::abi::cluster_field::STRIDE, None);
    let stride = e.b.build_int_z_extend(stride, i64t, "").unwrap();
    let my = e.cluster_rank();
    let delta = e.b.build_int_sub(e.b.build_int_z_extend(r, i64t, "").unwrap(), e.b.build_int_z_extend(my, i64t, "").unwrap(), "").unwrap();
    let delta = e.b.build_int_mul(delta, stride, "").unwrap();
    let own = e.own_shared_base();
    let window = unsafe { e.b.build_gep(i8t, own, &[delta], "pair.window").unwrap() };
    let raw = e.raw_shared_base();
    let at = e.b.build_int_sub(e.b.build_int_add(delta, stride, "").unwrap(), i64t.const_int(super::abi::CLUSTER_SLOT_BYTES, false), "").unwrap();
    let slot = unsafe { e.b.build_gep(i8t, raw, &[at], "pair.slot").unwrap() };
    let pt = ctx.ptr_type(inkwell::AddressSpace::default());
    // (Written by the peer's thread when it started, before anything the pair synchronizes on.)
    let tm = e.b.build_load(pt, slot, "pair.tmem").unwrap().into_pointer_value();
    (window, tm)
}

/// The cell at (lane, column) of tensor memory `base`.
fn cell<'ctx>(e: &FnEmitter<'ctx, '_, '_>, base: PointerValue<'ctx>, lane: IntValue<'ctx>, col: IntValue<'ctx>) -> PointerValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let idx = e.b.build_int_add(e.b.build_int_mul(lane, i32t.const_int(COLS, false), "").unwrap(), col, "").unwrap();
    unsafe { e.b.build_gep(i32t, base, &[idx], "tmem.cell").unwrap() }
}

fn c32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: u64) -> IntValue<'ctx> {
    e.ctx().i32_type().const_int(v, false)
}

/// PTX ISA 9.7.16.7.1 tcgen05.alloc.cta_group::1.sync.aligned{.shared::cta}.b32 [dst], nCols.
fn alloc<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let [dst, n] = &i.operands[..] else { return Err(e.err(i.span, "`tcgen05.alloc` takes [dst], nCols")) };
    let (_, used) = tmem(e, i)?;
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let n = e.read_int(n, Type::U32)?;
    let lane = e.lane_id();
    let leader = e.b.build_int_compare(IntPredicate::EQ, lane, c32(e, 0), "").unwrap();
    let go = ctx.append_basic_block(e.f, "tmem.alloc");
    let done = ctx.append_basic_block(e.f, "tmem.alloc.done");
    e.b.build_conditional_branch(leader, go, done).unwrap();
    e.b.position_at_end(go);
    // In 32-column units: a power of two from 1 to 16.
    let units = e.b.build_right_shift(n, c32(e, 5), false, "").unwrap();
    let pow2 = e.b.build_int_compare(IntPredicate::EQ, e.b.build_and(units, e.b.build_int_sub(units, c32(e, 1), "").unwrap(), "").unwrap(), c32(e, 0), "").unwrap();
    let whole = e.b.build_int_compare(IntPredicate::EQ, e.b.build_and(n, c32(e, 31), "").unwrap(), c32(e, 0), "").unwrap();
    let in_range = e.b.build_and(e.b.build_int_compare(IntPredicate::UGE, n, c32(e, 32), "").unwrap(), e.b.build_int_compare(IntPredicate::ULE, n, c32(e, COLS), "").unwrap(), "").unwrap();
    let valid = e.b.build_and(e.b.build_and(pow2, whole, "").unwrap(), in_range, "").unwrap();
    let units = e.b.build_select(valid, units, c32(e, 1), "").unwrap().into_int_value();
    let mask = e.b.build_int_sub(e.b.build_left_shift(c32(e, 1), units, "").unwrap(), c32(e, 1), "").unwrap();
    // The lowest free run of `units` units at a multiple of `units`.
    let bits = e.b.build_load(i32t, used, "").unwrap().into_int_value();
    let mut found = c32(e, 16);
    for start in (0..16u64).rev() {
        let sh = c32(e, start);
        let m = e.b.build_left_shift(mask, sh, "").unwrap();
        let aligned = e.b.build_int_compare(IntPredicate::EQ, e.b.build_int_unsigned_rem(sh, units, "").unwrap(), c32(e, 0), "").unwrap();
        let fits = e.b.build_int_compare(IntPredicate::ULE, e.b.build_int_add(sh, units, "").unwrap(), c32(e, 16), "").unwrap();
        let free = e.b.build_int_compare(IntPredicate::EQ, e.b.build_and(bits, m, "").unwrap(), c32(e, 0), "").unwrap();
        let ok = e.b.build_and(e.b.build_and(aligned, fits, "").unwrap(), free, "").unwrap();
        found = e.b.build_select(ok, sh, found, "").unwrap().into_int_value();
    }
    let none = e.b.build_int_compare(IntPredicate::EQ, found, c32(e, 16), "").unwrap();
    let bad = e.b.build_or(none, e.b.build_not(valid, "").unwrap(), "").unwrap();
    e.abort_if(bad, super::abi::STATUS_BAD_ADDRESS);
    let taken = e.b.build_left_shift(mask, found, "").unwrap();
    e.b.build_store(used, e.b.build_or(bits, taken, "").unwrap()).unwrap();
    // The address: lane 0, the run's first column.
    let addr = e.b.build_left_shift(found, c32(e, 5), "").unwrap();
    let p = e.address(dst, Some(crate::syntax::ast::StateSpace::Shared))?;
    e.b.build_store(p, addr).unwrap();
    e.b.build_unconditional_branch(done).unwrap();
    e.b.position_at_end(done);
    Ok(())
}

/// PTX ISA 9.7.16.7.1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, nCols.
fn dealloc<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let [taddr, n] = &i.operands[..] else { return Err(e.err(i.span, "`tcgen05.dealloc` takes taddr, nCols")) };
    let (_, used) = tmem(e, i)?;
    let i32t = e.ctx().i32_type();
    let a = e.read_int(taddr, Type::B32)?;
    let n = e.read_int(n, Type::U32)?;
    let lane = e.lane_id();
    let leader = e.b.build_int_compare(IntPredicate::EQ, lane, c32(e, 0), "").unwrap();
    let first = e.b.build_and(e.b.build_right_shift(a, c32(e, 5), false, "").unwrap(), c32(e, 15), "").unwrap();
    let units = e.b.build_and(e.b.build_right_shift(n, c32(e, 5), false, "").unwrap(), c32(e, 31), "").unwrap();
    let mask = e.b.build_int_sub(e.b.build_left_shift(c32(e, 1), units, "").unwrap(), c32(e, 1), "").unwrap();
    let m = e.b.build_left_shift(mask, first, "").unwrap();
    let bits = e.b.build_load(i32t, used, "").unwrap().into_int_value();
    let freed = e.b.build_and(bits, e.b.build_not(m, "").unwrap(), "").unwrap();
    let v = e.b.build_select(leader, freed, bits, "").unwrap();
    e.b.build_store(used, v).unwrap();
    Ok(())
}

/// The lane and column fields of a tensor-memory address (i32 each).
fn split<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    (e.b.build_right_shift(a, c32(e, 16), false, "").unwrap(), e.b.build_and(a, c32(e, 0xffff), "").unwrap())
}

/// An E2M1 code (OCP microscaling: a sign, 2 exponent bits of bias 1, 1 mantissa bit; no
/// infinity or NaN) as an f32: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
fn e2m1_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>) -> FloatValue<'ctx> {
    super::ops_conv::small_float_f32(e, v, super::ops_conv::F8::E2M1)
}

/// Whether a shared-memory matrix descriptor's swizzle mode ([`desc_fields`]) is one ptxr
/// reads: mode 1 (128 bytes with 32-byte atomicity) reads as width 1 and is not supported yet.
fn swizzle_supported<'ctx>(e: &FnEmitter<'ctx, '_, '_>, fl: &[IntValue<'ctx>; 5]) -> IntValue<'ctx> {
    e.b.build_int_compare(IntPredicate::NE, fl[4], c32(e, 1), "").unwrap()
}

/// A tensor-memory address operand `[taddr + imm]` (or a register): its value.
fn taddr_of<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>) -> R<IntValue<'ctx>> {
    match op {
        Operand::Mem(m) => {
            let base = match m.base {
                Some(b) => match e.reg_read(b.name)? {
                    Some((p, ty)) => {
                        let v = e.b.build_load(super::func::int_t(e.ctx(), ty.bits().max(8)), p, "").unwrap().into_int_value();
                        e.resize(v, 32, false)
                    }
                    None => return Err(e.err(m.span, format!("`{}` is not a register holding a tensor-memory address", b.name))),
                },
                None => c32(e, 0),
            };
            Ok(e.b.build_int_add(base, c32(e, m.offset as u32 as u64), "").unwrap())
        }
        _ => e.read_int(op, Type::B32),
    }
}

/// Registers of a `{...}` vector operand (a single register counts as one).
fn regs<'a>(op: &'a Operand<'a>) -> Vec<&'a Operand<'a>> {
    match op {
        Operand::Vector(v, _) => v.iter().collect(),
        o => vec![o],
    }
}

/// PTX ISA 9.7.16.8.3 tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32 r, [taddr]{, imm} and
/// 9.7.16.8.4 tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32 [taddr]{, imm}, r.
fn ld_st<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, store: bool) -> R<()> {
    let shape = *i.mods.iter().find(|m| matches!(**m, "32x32b" | "16x64b" | "16x128b" | "16x256b" | "16x32bx2")).ok_or_else(|| e.err(i.opcode.span, "`tcgen05.ld`/`st` needs a shape"))?;
    let num: u32 = i.mods.iter().find_map(|m| m.strip_prefix('x').and_then(|n| n.parse().ok())).ok_or_else(|| e.err(i.opcode.span, "`tcgen05.ld`/`st` needs a .num (.x1 .. .x128)"))?;
    let packed = i.has_mod("pack::16b") || i.has_mod("unpack::16b");
    if packed && !matches!(shape, "32x32b" | "16x32bx2") {
        return Err(e.err(i.opcode.span, format!("`.pack::16b`/`.unpack::16b` with `.{shape}` is not supported by ptxr yet")));
    }
    let per = match shape {
        "16x128b" => 2,
        "16x256b" => 4,
        _ => 1,
    };
    let nregs = num * per;
    let ops = &i.operands;
    let (data, addr, split_off) = match (store, shape == "16x32bx2", &ops[..]) {
        (false, false, [d, a]) => (d, a, None),
        (false, true, [d, a, s]) => (d, a, Some(s)),
        (true, false, [a, d]) => (d, a, None),
        (true, true, [a, s, d]) => (d, a, Some(s)),
        _ => return Err(e.err(i.span, "wrong operands for `tcgen05.ld`/`st`")),
    };
    let rs = regs(data);
    if rs.len() as u32 != nregs {
        return Err(e.err(data.span(), format!("`.{shape}.x{num}` moves {nregs} registers, not {}", rs.len())));
    }
    let (base, _) = tmem(e, i)?;
    let a = taddr_of(e, addr)?;
    let off = match split_off {
        Some(s) => e.read_int(s, Type::U32)?,
        None => c32(e, 0),
    };
    let (l0, col0) = split(e, a);
    let t = e.lane_id();
    let b = &e.b;
    let t4 = b.build_right_shift(t, c32(e, 2), false, "").unwrap();
    let tm4 = b.build_and(t, c32(e, 3), "").unwrap();
    // Each register's lane and column (module doc); with `.pack::16b` two adjacent columns.
    let mut places: Vec<(IntValue<'ctx>, IntValue<'ctx>)> = Vec::new();
    for r in 0..nregs as u64 {
        let (lane, col) = match shape {
            "32x32b" => (t, c32(e, r * if packed { 2 } else { 1 })),
            "16x64b" => {
                let lane = b.build_int_add(t4, b.build_left_shift(b.build_and(t, c32(e, 1), "").unwrap(), c32(e, 3), "").unwrap(), "").unwrap();
                let half = b.build_and(b.build_right_shift(t, c32(e, 1), false, "").unwrap(), c32(e, 1), "").unwrap();
                (lane, b.build_int_add(c32(e, 2 * r), half, "").unwrap())
            }
            "16x128b" => (b.build_int_add(t4, c32(e, 8 * (r % 2)), "").unwrap(), b.build_int_add(c32(e, 4 * (r / 2)), tm4, "").unwrap()),
            "16x256b" => {
                let k = r % 4;
                (b.build_int_add(t4, c32(e, 8 * (k / 2)), "").unwrap(), b.build_int_add(c32(e, 8 * (r / 4) + k % 2), b.build_left_shift(tm4, c32(e, 1), "").unwrap(), "").unwrap())
            }
            _ => {
                let hi = b.build_right_shift(t, c32(e, 4), false, "").unwrap();
                let lane = b.build_and(t, c32(e, 15), "").unwrap();
                let col = b.build_int_add(c32(e, r * if packed { 2 } else { 1 }), b.build_int_mul(hi, off, "").unwrap(), "").unwrap();
                (lane, col)
            }
        };
        places.push((b.build_int_add(l0, lane, "").unwrap(), b.build_int_add(col0, col, "").unwrap()));
    }
    // Every cell in this CTA's tensor memory, or the CTA stops.
    let mut bad = e.ctx().bool_type().const_zero();
    for (lane, col) in &places {
        let last = if packed { e.b.build_int_add(*col, c32(e, 1), "").unwrap() } else { *col };
        let out = e.b.build_or(e.b.build_int_compare(IntPredicate::UGE, *lane, c32(e, LANES), "").unwrap(), e.b.build_int_compare(IntPredicate::UGE, last, c32(e, COLS), "").unwrap(), "").unwrap();
        bad = e.b.build_or(bad, out, "").unwrap();
    }
    e.abort_if(bad, super::abi::STATUS_BAD_ADDRESS);
    let i32t = e.ctx().i32_type();
    for (k, (lane, col)) in places.into_iter().enumerate() {
        let p = cell(e, base, lane, col);
        if store {
            let v = e.read_int(rs[k], Type::B32)?;
            if packed {
                let lo = e.b.build_and(v, c32(e, 0xffff), "").unwrap();
                let hi = e.b.build_right_shift(v, c32(e, 16), false, "").unwrap();
                e.b.build_store(p, lo).unwrap();
                let q = cell(e, base, lane, e.b.build_int_add(col, c32(e, 1), "").unwrap());
                e.b.build_store(q, hi).unwrap();
            } else {
                e.b.build_store(p, v).unwrap();
            }
        } else {
            let v = e.b.build_load(i32t, p, "").unwrap().into_int_value();
            let v = if packed {
                let q = cell(e, base, lane, e.b.build_int_add(col, c32(e, 1), "").unwrap());
                let w = e.b.build_load(i32t, q, "").unwrap().into_int_value();
                let lo = e.b.build_and(v, c32(e, 0xffff), "").unwrap();
                let hi = e.b.build_left_shift(w, c32(e, 16), "").unwrap();
                e.b.build_or(lo, hi, "").unwrap()
            } else {
                v
            };
            e.write(rs[k], Type::B32, v.into())?;
        }
    }
    Ok(())
}

/// PTX ISA 9.0 9.7.16.9.3 tcgen05.shift.cta_group::1.down [taddr]: the issuing thread shifts
/// the 32-byte elements of 31 rows (lanes) at `taddr` down by one row (the implicit shape
/// `.31x256b` of 9.7.16.2.3): row k's content becomes row k + 1's, for k = 30 down to 0, in
/// the 256 bits (8 columns) from the address's column. The ISA names no new content for row
/// 0: it keeps its own. Like `tcgen05.mma`, a single thread's instruction and complete when
/// issued here (its completion is what `tcgen05.commit` tracks). The address's lane must be
/// a multiple of 32 and the 32 lanes and 8 columns inside the CTA's tensor memory, or the
/// CTA stops with a bad address.
fn shift<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let [addr] = &i.operands[..] else { return Err(e.err(i.span, "`tcgen05.shift` takes [taddr]")) };
    let (base, _) = tmem(e, i)?;
    let a = taddr_of(e, addr)?;
    let (l0, col0) = split(e, a);
    let b = &e.b;
    let unaligned = b.build_int_compare(IntPredicate::NE, b.build_and(l0, c32(e, 31), "").unwrap(), c32(e, 0), "").unwrap();
    let lanes_out = b.build_int_compare(IntPredicate::UGT, l0, c32(e, LANES - 32), "").unwrap();
    let cols_out = b.build_int_compare(IntPredicate::UGT, col0, c32(e, COLS - 8), "").unwrap();
    let bad = b.build_or(b.build_or(unaligned, lanes_out, "").unwrap(), cols_out, "").unwrap();
    e.abort_if(bad, super::abi::STATUS_BAD_ADDRESS);
    let i64t = e.ctx().i64_type();
    for k in (0..31u64).rev() {
        let from = cell(e, base, e.b.build_int_add(l0, c32(e, k), "").unwrap(), col0);
        let to = cell(e, base, e.b.build_int_add(l0, c32(e, k + 1), "").unwrap(), col0);
        e.b.build_memcpy(to, 4, from, 4, i64t.const_int(32, false)).unwrap();
    }
    Ok(())
}

/// The shapes of `tcgen05.cp` (PTX ISA 9.0 9.7.16.9.2, 9.7.16.2.3): rows of the source, 32-bit
/// columns per row, and the lanes (from the address's lane) row `r` goes to, as a function of
/// the multicast qualifier: `.128x256b`, `.128x128b` row r to lane r; `.4x256b` row r to lane
/// 32 r (the first lane of each warp's quarter); `.64x128b.warpx2::02_13` row r to lanes r and
/// r + 64 (warps 0 and 2 take rows 0-31, warps 1 and 3 rows 32-63); `.warpx2::01_23` to lanes
/// 64 (r / 32) + r % 32 and 32 more (warps 0 and 1 rows 0-31, 2 and 3 rows 32-63);
/// `.32x128b.warpx4` row r to lanes r, r + 32, r + 64 and r + 96. (The ISA draws these as
/// figures; this reading is the one a B200-tested model of the instruction gives, and
/// CUTLASS's and Triton's block scales, 32 rows of 16 bytes, are copied with `.warpx4` so.)
#[derive(Clone, Copy, PartialEq)]
enum CpShape {
    Rows128x256,
    Rows4x256,
    Rows128x128,
    Warpx2_02_13,
    Warpx2_01_23,
    Warpx4,
}

impl CpShape {
    fn of(i: &Instr) -> Option<CpShape> {
        let mc = ["warpx2::02_13", "warpx2::01_23", "warpx4"].into_iter().find(|m| i.has_mod(m));
        Some(match (["128x256b", "4x256b", "128x128b", "64x128b", "32x128b"].into_iter().find(|m| i.has_mod(m))?, mc) {
            ("128x256b", None) => CpShape::Rows128x256,
            ("4x256b", None) => CpShape::Rows4x256,
            ("128x128b", None) => CpShape::Rows128x128,
            ("64x128b", Some("warpx2::02_13")) => CpShape::Warpx2_02_13,
            ("64x128b", Some("warpx2::01_23")) => CpShape::Warpx2_01_23,
            ("32x128b", Some("warpx4")) => CpShape::Warpx4,
            _ => return None,
        })
    }

    /// (rows, 32-bit columns per row, the highest lane offset any row reaches).
    fn dims(self) -> (u64, u64, u64) {
        match self {
            CpShape::Rows128x256 => (128, 8, 127),
            CpShape::Rows4x256 => (4, 8, 96),
            CpShape::Rows128x128 => (128, 4, 127),
            CpShape::Warpx2_02_13 | CpShape::Warpx2_01_23 => (64, 4, 127),
            CpShape::Warpx4 => (32, 4, 127),
        }
    }

    fn name(self) -> &'static str {
        match self {
            CpShape::Rows128x256 => "128x256b",
            CpShape::Rows4x256 => "4x256b",
            CpShape::Rows128x128 => "128x128b",
            CpShape::Warpx2_02_13 => "64x128b.warpx2_02_13",
            CpShape::Warpx2_01_23 => "64x128b.warpx2_01_23",
            CpShape::Warpx4 => "32x128b.warpx4",
        }
    }
}

/// PTX ISA 9.0 9.7.16.9.2 tcgen05.cp.cta_group::1.shape{.multicast} [taddr], s-desc: the
/// issuing thread copies a matrix of [`CpShape`]'s rows of 128 or 256 bits from shared memory,
/// described by the matrix descriptor s-desc (9.7.16.4.1, K-major: each row's 16- or 32-byte
/// run is the K extent of a `tcgen05.mma` operand, in core matrices of 8 rows or a swizzle
/// atom), into tensor memory at `taddr`, each row to the lanes its shape names, its 32-bit
/// words to consecutive columns from the address's column. Complete when issued here, as
/// `tcgen05.mma` is (`tcgen05.commit` tracks it). A row's lanes or columns outside tensor
/// memory, or the source outside the CTA's shared memory, stop the CTA with a bad address.
/// The decompressing forms (`.b8x16.b6x16_p32`, `.b8x16.b4x16_p64`) are not supported yet.
fn cp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    if i.has_mod("b8x16") || i.has_mod("b6x16_p32") || i.has_mod("b4x16_p64") {
        return Err(e.err(i.opcode.span, "`tcgen05.cp` with decompression (`.b8x16.b6x16_p32`, `.b8x16.b4x16_p64`) is not supported by ptxr yet"));
    }
    let shape = CpShape::of(i).ok_or_else(|| e.err(i.opcode.span, "`tcgen05.cp` takes `.128x256b`, `.4x256b` or `.128x128b` without multicast, `.64x128b` with `.warpx2::02_13` or `.warpx2::01_23`, or `.32x128b` with `.warpx4`"))?;
    let [addr, desc] = &i.operands[..] else { return Err(e.err(i.span, "`tcgen05.cp` takes [taddr], s-desc")) };
    let (base, _) = tmem(e, i)?;
    let a = taddr_of(e, addr)?;
    let d = e.read_int(desc, Type::B64)?;
    let smem = e.own_shared_base();
    let limit = e.load_cta_u32(super::abi::field::TOTAL_SMEM, None);
    let name = format!("__ptxr_tcgen05_cp.{}", shape.name());
    let helper = match e.m.module.get_function(&name) {
        Some(h) => h,
        None => cp_helper(e, &name, shape),
    };
    let st = e.b.build_call(helper, &[base.into(), smem.into(), limit.into(), a.into(), d.into()], "").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
    let bad = e.b.build_int_compare(IntPredicate::NE, st, c32(e, 0), "").unwrap();
    e.abort_if(bad, super::abi::STATUS_BAD_ADDRESS);
    Ok(())
}

/// Defines `i32 name(ptr tmem, ptr smem, i32 smem_bytes, i32 taddr, i64 s_desc)`: one
/// `tcgen05.cp` of `shape` ([`cp`]). Returns nonzero, having written nothing, when the
/// destination leaves tensor memory or the descriptor's swizzle mode is not supported, and
/// nonzero after copying when a source word lay outside shared memory (read as byte 0's).
fn cp_helper<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, shape: CpShape) -> FunctionValue<'ctx> {
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let (h, saved) = e.begin_helper(name, i32t.fn_type(&[ptr_t.into(), ptr_t.into(), i32t.into(), i32t.into(), i64t.into()], false));
    let p = |k: u32| h.get_nth_param(k).unwrap();
    let (tm, smem, limit, taddr, desc) = (p(0).into_pointer_value(), p(1).into_pointer_value(), p(2).into_int_value(), p(3).into_int_value(), p(4).into_int_value());
    let c = |v: u64| i32t.const_int(v, false);
    let (rows, cols, reach) = shape.dims();
    let (lane0, col0) = split(e, taddr);
    let fl = desc_fields(e, desc, true);
    let lanes_ok = e.b.build_int_compare(IntPredicate::ULT, e.b.build_int_add(lane0, c(reach), "").unwrap(), c(LANES), "").unwrap();
    let cols_ok = e.b.build_int_compare(IntPredicate::ULE, e.b.build_int_add(col0, c(cols), "").unwrap(), c(COLS), "").unwrap();
    let swz_ok = swizzle_supported(e, &fl);
    let ok = e.b.build_and(e.b.build_and(lanes_ok, cols_ok, "").unwrap(), swz_ok, "").unwrap();
    let bad_p = e.b.build_alloca(i32t, "bad").unwrap();
    e.b.build_store(bad_p, e.b.build_int_z_extend(e.b.build_not(ok, "").unwrap(), i32t, "").unwrap()).unwrap();
    let pre = e.b.get_insert_block().unwrap();
    let body = ctx.append_basic_block(h, "cp.word");
    let exit = ctx.append_basic_block(h, "cp.exit");
    e.b.build_conditional_branch(ok, body, exit).unwrap();
    e.b.position_at_end(body);
    // for w in 0..rows * cols: row w / cols, word w % cols
    let phi = e.b.build_phi(i32t, "w").unwrap();
    let w = phi.as_basic_value().into_int_value();
    let (r, k) = (e.b.build_int_unsigned_div(w, c(cols), "r").unwrap(), e.b.build_int_unsigned_rem(w, c(cols), "k").unwrap());
    let at = desc_address(e, &fl, true, r, k, 4);
    let v = super::ops_wgmma::smem_elem(e, smem, limit, bad_p, at, 4);
    let b = &e.b;
    let lanes: Vec<IntValue<'ctx>> = match shape {
        CpShape::Rows128x256 | CpShape::Rows128x128 => vec![r],
        CpShape::Rows4x256 => vec![b.build_left_shift(r, c(5), "").unwrap()],
        CpShape::Warpx2_02_13 => vec![r, b.build_int_add(r, c(64), "").unwrap()],
        CpShape::Warpx2_01_23 => {
            let l = b.build_int_add(b.build_left_shift(b.build_right_shift(r, c(5), false, "").unwrap(), c(6), "").unwrap(), b.build_and(r, c(31), "").unwrap(), "").unwrap();
            vec![l, b.build_int_add(l, c(32), "").unwrap()]
        }
        CpShape::Warpx4 => (0..4).map(|q| b.build_int_add(r, c(32 * q), "").unwrap()).collect(),
    };
    let col = e.b.build_int_add(col0, k, "").unwrap();
    for l in lanes {
        let lane = e.b.build_int_add(lane0, l, "").unwrap();
        e.b.build_store(cell(e, tm, lane, col), v).unwrap();
    }
    let next = e.b.build_int_add(w, c(1), "").unwrap();
    let more = e.b.build_int_compare(IntPredicate::ULT, next, c(rows * cols), "").unwrap();
    e.b.build_conditional_branch(more, body, exit).unwrap();
    phi.add_incoming(&[(&c(0), pre), (&next, body)]);
    e.b.position_at_end(exit);
    let bad = e.b.build_load(i32t, bad_p, "").unwrap();
    e.b.build_return(Some(&bad)).unwrap();
    e.end_helper(saved);
    h
}

/// PTX ISA 9.7.16.12.1 tcgen05.commit.cta_group::1.mbarrier::arrive::one{.shared::cluster}
/// {.multicast::cluster}.b64 [mbar]{, ctaMask}: every prior `tcgen05.mma` of the thread is
/// done, so the arrive-on (count 1) happens at once.
fn commit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let mbar = e.address(&i.operands[0], Some(crate::syntax::ast::StateSpace::Shared))?;
    super::ops_bulk::each_target(e, i, 1, |e, delta| {
        let p = unsafe { e.b.build_gep(e.ctx().i8_type(), mbar, &[delta], "").unwrap() };
        super::ops_atomic::mbarrier_arrive_one(e, p);
        Ok(())
    })
}

/// The kinds of `tcgen05.mma`: (K, element bytes of A and B; the 4-bit elements of the
/// `mxf4` kinds, two to a byte, count 1).
fn kind_of(i: &Instr) -> Option<(&'static str, u32, u32)> {
    Some(match *i.mods.iter().find(|m| m.starts_with("kind::"))? {
        "kind::f16" => ("f16", 16, 2),
        "kind::tf32" => ("tf32", 8, 4),
        "kind::f8f6f4" => ("f8f6f4", 32, 1),
        "kind::i8" => ("i8", 32, 1),
        "kind::mxf8f6f4" => ("mxf8f6f4", 32, 1),
        "kind::mxf4" => ("mxf4", 64, 1),
        "kind::mxf4nvf4" => ("mxf4nvf4", 64, 1),
        _ => return None,
    })
}

/// Block scaling of a `tcgen05.mma` (PTX ISA 9.0 9.7.16.10.7): scale factors per row of A
/// and per column of B, each for `block` consecutive elements of K (`scales` of them in one
/// instruction's K).
#[derive(Clone, Copy)]
struct Scaled {
    scales: u32,
    block: u32,
}

/// The block scaling `.scale_vec::NX` (or its alias `.block32`/`.block16`) gives a kind
/// (Table 54): `.mxf8f6f4` 1X (block 32, K 32), `.mxf4` 2X (block 32, K 64), `.mxf4nvf4` 2X
/// or 4X (block 16). `None` for a combination the ISA does not allow.
fn scaling_of(i: &Instr, kind: &str) -> Option<Scaled> {
    let x = |n: &str| i.has_mod(&format!("scale_vec::{n}"));
    let (b32, b16) = (i.has_mod("block32") || x("1X") || x("2X"), i.has_mod("block16") || x("4X"));
    match kind {
        "mxf8f6f4" if !b16 && !x("2X") => Some(Scaled { scales: 1, block: 32 }),
        "mxf4" if !b16 && !x("1X") => Some(Scaled { scales: 2, block: 32 }),
        "mxf4nvf4" if b32 && !x("1X") => Some(Scaled { scales: 2, block: 32 }),
        "mxf4nvf4" if b16 => Some(Scaled { scales: 4, block: 16 }),
        _ => None,
    }
}

/// PTX ISA 9.7.16.10.9.1 tcgen05.mma.cta_group::1.kind [d-tmem], a-desc | [a-tmem], b-desc,
/// idesc, {disable-output-lane,} enable-input-d {, scale-input-d}.
fn mma<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let (kind, k, size) = kind_of(i).ok_or_else(|| e.err(i.opcode.span, "`tcgen05.mma` needs a `.kind`"))?;
    for m in ["ws", "sp", "ashift"] {
        if i.has_mod(m) {
            return Err(e.err(i.opcode.span, format!("`tcgen05.mma` with `.{m}` is not supported by ptxr yet")));
        }
    }
    let scaled = match (kind.starts_with("mx"), i.has_mod("block_scale")) {
        (true, true) => Some(scaling_of(i, kind).ok_or_else(|| e.err(i.opcode.span, format!("`.kind::{kind}` takes {}", match kind {
            "mxf8f6f4" => "`.scale_vec::1X` (`.block32`)",
            "mxf4" => "`.scale_vec::2X` (`.block32`)",
            _ => "`.scale_vec::2X` (`.block32`) or `.scale_vec::4X` (`.block16`)",
        })))?),
        (false, false) => None,
        (true, false) => return Err(e.err(i.opcode.span, format!("`.kind::{kind}` needs `.block_scale`"))),
        (false, true) => return Err(e.err(i.opcode.span, format!("`.block_scale` is for the `.kind::mxf8f6f4`, `.mxf4` and `.mxf4nvf4` kinds, not `.kind::{kind}`"))),
    };
    let ops = &i.operands;
    if ops.len() < 5 || (scaled.is_some() && ops.len() != 7) {
        return Err(e.err(i.span, if scaled.is_some() { "block-scaled `tcgen05.mma` takes [d-tmem], a, b-desc, idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d" } else { "`tcgen05.mma` takes [d-tmem], a, b-desc, idesc, {mask,} enable-input-d" }));
    }
    let a_tmem = matches!(ops[1], Operand::Mem(_));
    let (sfa, sfb) = match scaled {
        Some(_) => (Some(taddr_of(e, &ops[4])?), Some(taddr_of(e, &ops[5])?)),
        None => (None, None),
    };
    let (mask, rest) = match &ops[4] {
        _ if scaled.is_some() => (None, &ops[6..]),
        Operand::Vector(v, _) => (Some(v), &ops[5..]),
        _ => (None, &ops[4..]),
    };
    let Some(enable) = rest.first() else { return Err(e.err(i.span, "`tcgen05.mma` needs enable-input-d")) };
    let ctx = e.ctx();
    let i64t = ctx.i64_type();
    let (base, _) = tmem(e, i)?;
    let d = taddr_of(e, &ops[0])?;
    let a = if a_tmem {
        let t = taddr_of(e, &ops[1])?;
        e.b.build_int_z_extend(t, i64t, "").unwrap()
    } else {
        e.read_int(&ops[1], Type::B64)?
    };
    let bdesc = e.read_int(&ops[2], Type::B64)?;
    let idesc = e.read_int(&ops[3], Type::B32)?;
    let en = match enable {
        Operand::Imm(_) => c32(e, (super::ops_wgmma::imm_u64(e, enable, "enable-input-d")? != 0) as u64),
        op => {
            let p = e.read_int(op, Type::Pred)?;
            e.resize(p, 32, false)
        }
    };
    let scale = match rest.get(1) {
        Some(op) if kind == "f16" || kind == "tf32" => c32(e, super::ops_wgmma::imm_u64(e, op, "scale-input-d")? & 15),
        Some(op) => return Err(e.err(op.span(), "scale-input-d is only valid for `.kind::f16` and `.kind::tf32`")),
        None => c32(e, 0),
    };
    let pair = i.has_mod("cta_group::2");
    let mut masks = Vec::new();
    for k in 0..if pair { 8 } else { 4 } {
        masks.push(match mask.and_then(|v| v.get(k)) {
            Some(op) => e.read_int(op, Type::B32)?,
            None => c32(e, 0),
        });
    }
    let smem = e.own_shared_base();
    let limit = e.load_cta_u32(super::abi::field::TOTAL_SMEM, None);
    let name = format!("__ptxr_tcgen05_mma.{kind}{}{}", scaled.map_or(String::new(), |s| format!(".x{}", s.scales)), if a_tmem { ".ts" } else { ".ss" });
    let helper = match e.m.module.get_function(&name) {
        Some(h) => h,
        None => products(e, &name, kind, k, size, a_tmem, scaled),
    };
    // One call of the helper: D (and A from tensor memory) in tensor memory `tm`, A's rows
    // in window `wa`, B's columns in window `wb` from B's column `col0`; `rows` nonzero: that
    // many rows of D, row r in lane r (a CTA pair's M = 128).
    let call = |e: &mut FnEmitter<'ctx, 'a, '_>, tm: PointerValue<'ctx>, wa: PointerValue<'ctx>, wb: PointerValue<'ctx>, d: IntValue<'ctx>, idesc: IntValue<'ctx>, masks: &[IntValue<'ctx>], col0: IntValue<'ctx>, rows: IntValue<'ctx>| {
        let mut args: Vec<inkwell::values::BasicMetadataValueEnum> = vec![tm.into(), wa.into(), limit.into(), d.into(), a.into(), bdesc.into(), idesc.into(), en.into(), scale.into()];
        args.extend(masks.iter().map(|&m| inkwell::values::BasicMetadataValueEnum::from(m)));
        args.push(sfa.unwrap_or(c32(e, 0)).into());
        args.push(sfb.unwrap_or(c32(e, 0)).into());
        args.push(wb.into());
        args.push(col0.into());
        args.push(rows.into());
        let st = e.b.build_call(helper, &args, "").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
        let bad = e.b.build_int_compare(IntPredicate::NE, st, c32(e, 0), "").unwrap();
        e.abort_if(bad, super::abi::STATUS_BAD_ADDRESS);
    };
    if !pair {
        call(e, base, smem, smem, d, idesc, &masks, c32(e, 0), c32(e, 0));
        return Ok(());
    }
    // CTA pairs (module doc): the product as four of N / 2, D's and A's rows of CTA 2k + x
    // (128 of M = 256, 64 of M = 128) by B's columns of CTA 2k + y.
    let field = |e: &FnEmitter<'ctx, 'a, '_>, sh: u64, bits: u64| e.b.build_and(e.b.build_right_shift(idesc, c32(e, sh), false, "").unwrap(), c32(e, (1 << bits) - 1), "").unwrap();
    let (m_sh, m_bits, m_unit) = if scaled.is_some() { (27, 2, 7) } else { (24, 5, 4) };
    let m = e.b.build_left_shift(field(e, m_sh, m_bits), c32(e, m_unit), "").unwrap();
    let n = e.b.build_left_shift(field(e, 17, 6), c32(e, 3), "").unwrap();
    let my = e.cluster_rank();
    let first = e.b.build_and(my, c32(e, !1u32 as u64), "").unwrap();
    let second = e.b.build_or(my, c32(e, 1), "").unwrap();
    let dims: Vec<_> = (0..3).map(|k| e.cluster_u32(super::abi::cluster_field::DIMS, Some(k))).collect();
    let size = e.b.build_int_mul(e.b.build_int_mul(dims[0], dims[1], "").unwrap(), dims[2], "").unwrap();
    let whole = e.b.build_int_compare(IntPredicate::ULT, second, size, "").unwrap();
    let m256 = e.b.build_int_compare(IntPredicate::EQ, m, c32(e, 256), "").unwrap();
    let m128 = e.b.build_int_compare(IntPredicate::EQ, m, c32(e, 128), "").unwrap();
    // (M = 128 with A in tensor memory or block scaling: their layouts are not known here.)
    let m128 = if a_tmem || scaled.is_some() { e.ctx().bool_type().const_zero() } else { m128 };
    let ok = e.b.build_and(whole, e.b.build_or(m256, m128, "").unwrap(), "").unwrap();
    e.abort_if(e.b.build_not(ok, "").unwrap(), super::abi::STATUS_CTA_PAIR);
    // Each half's descriptor: M 128, N / 2 (N odd in 8s is refused by the helper: N / 2
    // would not be a multiple of 8).
    let half = e.b.build_right_shift(n, c32(e, 1), false, "").unwrap();
    let odd8 = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(n, c32(e, 15), "").unwrap(), c32(e, 0), "").unwrap();
    let half_field = e.b.build_select(odd8, c32(e, 0), e.b.build_right_shift(half, c32(e, 3), false, "").unwrap(), "").unwrap().into_int_value();
    let clear = !((((1u64 << m_bits) - 1) << m_sh) | (63 << 17)) & 0xffff_ffff;
    let idesc2 = e.b.build_and(idesc, c32(e, clear), "").unwrap();
    let idesc2 = e.b.build_or(idesc2, c32(e, (128 >> m_unit) << m_sh), "").unwrap();
    let idesc2 = e.b.build_or(idesc2, e.b.build_left_shift(half_field, c32(e, 17), "").unwrap(), "").unwrap();
    let (w0, t0) = peer_slot(e, first);
    let (w1, t1) = peer_slot(e, second);
    let (wins, tms) = ([w0, w1], [t0, t1]);
    // D of M = 256 (layout A): B's second half in the columns after the first. Of M = 128
    // (layout B: 9.7.16.10.5, the data path's two 64-lane halves): the CTA's 64 rows in lanes
    // 0-63 for B's first half of the columns and in lanes 64-127 for its second, each from
    // D's column.
    let rows = e.b.build_select(m128, c32(e, 64), c32(e, 0), "").unwrap().into_int_value();
    for x in 0..2 {
        for y in 0..2usize {
            let col0 = if y == 0 { c32(e, 0) } else { half };
            let by_col = e.b.build_int_add(d, col0, "").unwrap();
            let by_lane = e.b.build_int_add(d, c32(e, (64 * y as u64) << 16), "").unwrap();
            let dx = e.b.build_select(m128, by_lane, by_col, "").unwrap().into_int_value();
            call(e, tms[x], wins[x], wins[y], dx, idesc2, &masks[4 * x..4 * x + 4], col0, rows);
        }
    }
    Ok(())
}

/// Defines `i32 name(ptr tmem, ptr smem, i32 smem_bytes, i32 d_taddr, i64 a, i64 b_desc,
/// i32 idesc, i32 enable_input_d, i32 scale_input_d, i32 mask0..3, i32 sfa_taddr, i32
/// sfb_taddr, ptr smem_b, i32 col0, i32 rows)`: the product of one `tcgen05.mma` of `kind`
/// (module doc), A a shared-memory descriptor or (`a_tmem`) a tensor-memory address,
/// block-scaled by the scale factors at the sfa/sfb addresses where `scaled` (module doc,
/// block scaling). B's descriptor is read in window `smem_b` (A's in `smem`), its columns
/// being the instruction's from `col0` (for the scale factors), and `rows` nonzero computes
/// that many rows of D, row r in lane r (both for a CTA pair's halves). Returns nonzero,
/// having written nothing, for a shape or type the descriptor does not allow, or operands
/// outside tensor or shared memory.
fn products<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, kind: &str, kdim: u32, size: u32, a_tmem: bool, scaled: Option<Scaled>) -> FunctionValue<'ctx> {
    let ctx = e.ctx();
    let (i8t, i16t, i32t, i64t, f32t) = (ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type(), ctx.f32_type());
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![ptr_t.into(), ptr_t.into(), i32t.into(), i32t.into(), i64t.into(), i64t.into(), i32t.into(), i32t.into(), i32t.into()];
    params.extend([inkwell::types::BasicMetadataTypeEnum::from(i32t); 6]);
    params.extend([inkwell::types::BasicMetadataTypeEnum::from(ptr_t), i32t.into(), i32t.into()]);
    let (h, saved) = e.begin_helper(name, i32t.fn_type(&params, false));
    let p = |k: u32| h.get_nth_param(k).unwrap();
    let (tm, smem, limit) = (p(0).into_pointer_value(), p(1).into_pointer_value(), p(2).into_int_value());
    let (d, a, bdesc, idesc) = (p(3).into_int_value(), p(4).into_int_value(), p(5).into_int_value(), p(6).into_int_value());
    let (enable, scale) = (p(7).into_int_value(), p(8).into_int_value());
    let masks: Vec<IntValue<'ctx>> = (9..13).map(|k| p(k).into_int_value()).collect();
    let (sfa, sfb) = (p(13).into_int_value(), p(14).into_int_value());
    let (smem_b, col0, rows) = (p(15).into_pointer_value(), p(16).into_int_value(), p(17).into_int_value());
    let by_rows = e.b.build_int_compare(IntPredicate::NE, rows, i32t.const_zero(), "").unwrap();
    let c = |v: u64| i32t.const_int(v, false);
    let field = |e: &FnEmitter<'ctx, '_, '_>, sh: u64, bits: u64| e.b.build_and(e.b.build_right_shift(idesc, c(sh), false, "").unwrap(), c((1 << bits) - 1), "").unwrap();
    // The block-scaled kinds' descriptor (Tables 43-44): D is f32; bits 4-5 and 29-30 are
    // the scale factors' data ids, bit 23 their type, bits 27-28 M >> 7.
    let dtype = if scaled.is_some() { c(1) } else { field(e, 4, 2) };
    let atype = field(e, 7, 3);
    let btype = field(e, 10, 3);
    let (neg_a, neg_b) = (field(e, 13, 1), field(e, 14, 1));
    let (trans_a, trans_b) = (field(e, 15, 1), field(e, 16, 1));
    let n = e.b.build_left_shift(field(e, 17, 6), c(3), "").unwrap();
    let m = if scaled.is_some() { e.b.build_left_shift(field(e, 27, 2), c(7), "").unwrap() } else { e.b.build_left_shift(field(e, 24, 5), c(4), "").unwrap() };
    // Elements of 4 bits, two to a byte (`.mxf4`, `.mxf4nvf4`).
    let nibbles = kind == "mxf4" || kind == "mxf4nvf4";
    let (dlane, dcol) = split(e, d);
    let a32 = e.b.build_int_truncate(a, i32t, "").unwrap();
    let (alane, acol) = split(e, a32);
    // What this kind allows (Table 39, Table 42): M 64 or 128, N 8..256 in steps of 8, the
    // type codes, and D within tensor memory.
    let eq = |e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, v: u64| e.b.build_int_compare(IntPredicate::EQ, x, c(v), "").unwrap();
    let or = |e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, y: IntValue<'ctx>| e.b.build_or(x, y, "").unwrap();
    let and = |e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, y: IntValue<'ctx>| e.b.build_and(x, y, "").unwrap();
    // e4m3 (0), e5m2 (1), or E2M3 (3), E3M2 (4), E2M1 (5) (K-major in shared memory only)
    // in the 8-bit kinds
    let f4_ok = |e: &FnEmitter<'ctx, '_, '_>, t: IntValue<'ctx>, trans: IntValue<'ctx>, in_tmem: bool| {
        let kmajor = if in_tmem { ctx.bool_type().const_zero() } else { eq(e, trans, 0) };
        let small = e.b.build_and(e.b.build_int_compare(IntPredicate::UGE, t, c(3), "").unwrap(), e.b.build_int_compare(IntPredicate::ULE, t, c(5), "").unwrap(), "").unwrap();
        e.b.build_and(small, kmajor, "").unwrap()
    };
    let f8_or_f4 = |e: &FnEmitter<'ctx, '_, '_>, a_side: bool| {
        let (t, trans, in_tmem) = if a_side { (atype, trans_a, a_tmem) } else { (btype, trans_b, false) };
        e.b.build_or(e.b.build_int_compare(IntPredicate::ULE, t, c(1), "").unwrap(), f4_ok(e, t, trans, in_tmem), "").unwrap()
    };
    let m_ok = if scaled.is_some() { eq(e, m, 128) } else { or(e, eq(e, m, 64), eq(e, m, 128)) };
    let n_ok = and(e, e.b.build_int_compare(IntPredicate::UGE, n, c(8), "").unwrap(), e.b.build_int_compare(IntPredicate::ULE, n, c(256), "").unwrap());
    let (types_ok, d_int) = match kind {
        // D f16 or f32; A, B f16 or bf16 (f16 D only with f16 A, B)
        "f16" => {
            let ab = and(e, e.b.build_int_compare(IntPredicate::ULE, atype, c(1), "").unwrap(), eq(e, btype, 0));
            let ab = or(e, ab, and(e, eq(e, atype, 1), eq(e, btype, 1)));
            let ab = and(e, ab, e.b.build_int_compare(IntPredicate::EQ, atype, btype, "").unwrap());
            let d_ok = or(e, eq(e, dtype, 1), and(e, eq(e, dtype, 0), eq(e, atype, 0)));
            (and(e, ab, d_ok), false)
        }
        "tf32" => (and(e, and(e, eq(e, atype, 2), eq(e, btype, 2)), eq(e, dtype, 1)), false),
        // e4m3 (0), e5m2 (1) or E2M1 (5) scaled by UE8M0 (bit 23 set); the 6-bit types are
        // not supported yet
        "mxf8f6f4" => (and(e, and(e, f8_or_f4(e, true), f8_or_f4(e, false)), eq(e, field(e, 23, 1), 1)), false),
        // E2M1 (1) K-major, dense K (bit 31 clear); UE8M0 scales, or UE4M3 (bit 23 clear) for
        // `.mxf4nvf4` with block 16
        "mxf4" | "mxf4nvf4" => {
            let ue4m3_ok = scaled.map_or(false, |s| kind == "mxf4nvf4" && s.block == 16);
            let st_ok = if ue4m3_ok { ctx.bool_type().const_all_ones() } else { eq(e, field(e, 23, 1), 1) };
            let t = and(e, and(e, eq(e, atype, 1), eq(e, btype, 1)), and(e, eq(e, trans_a, 0), eq(e, trans_b, 0)));
            (and(e, and(e, t, st_ok), eq(e, field(e, 31, 1), 0)), false)
        }
        // e4m3 (0), e5m2 (1) or E2M1 (5); the 6-bit types are not supported yet
        "f8f6f4" => (and(e, and(e, f8_or_f4(e, true), f8_or_f4(e, false)), e.b.build_int_compare(IntPredicate::ULE, dtype, c(1), "").unwrap()), false),
        _ => (and(e, and(e, e.b.build_int_compare(IntPredicate::ULE, atype, c(1), "").unwrap(), e.b.build_int_compare(IntPredicate::ULE, btype, c(1), "").unwrap()), eq(e, dtype, 2)), true),
    };
    // Rows m go to lane m (M 128, or `rows` rows) or 32 (m / 16) + m % 16 (M 64): the last
    // row's lane.
    let last_lane = e.b.build_select(eq(e, m, 128), c(127), c(111), "").unwrap().into_int_value();
    let last_lane = e.b.build_select(by_rows, e.b.build_int_sub(rows, c(1), "").unwrap(), last_lane, "").unwrap().into_int_value();
    let d_ok = and(
        e,
        e.b.build_int_compare(IntPredicate::ULT, e.b.build_int_add(dlane, last_lane, "").unwrap(), c(LANES), "").unwrap(),
        e.b.build_int_compare(IntPredicate::ULE, e.b.build_int_add(dcol, n, "").unwrap(), c(COLS), "").unwrap(),
    );
    // A in tensor memory: K packed into K * size / 4 columns.
    let a_ok = if a_tmem {
        and(
            e,
            e.b.build_int_compare(IntPredicate::ULT, e.b.build_int_add(alane, last_lane, "").unwrap(), c(LANES), "").unwrap(),
            e.b.build_int_compare(IntPredicate::ULE, e.b.build_int_add(acol, c((kdim * if nibbles { 4 } else { 8 * size } / 32) as u64), "").unwrap(), c(COLS), "").unwrap(),
        )
    } else {
        ctx.bool_type().const_all_ones()
    };
    let bfields = desc_fields(e, bdesc, true);
    let afields = if a_tmem { None } else { Some(desc_fields(e, a, true)) };
    let swz_ok = swizzle_supported;
    let mut all_ok = and(e, and(e, and(e, m_ok, n_ok), and(e, types_ok, d_ok)), and(e, a_ok, swz_ok(e, &bfields)));
    // The scale factors (9.7.16.10.7.2-3): A's row r (lane r of D) in lane r of the scale-A
    // address's columns, column r / 32; B's column n in every 32-lane partition (the ISA has
    // them duplicated to all four), lane n % 32 of it, column n / 32; each instruction's
    // `scales` factors in consecutive bytes of the word from the data id's byte (1X: any of
    // 0-3; 2X: 0 or 2; 4X: 0).
    if let Some(s) = scaled {
        let (sfa_id, sfb_id) = (field(e, 29, 2), field(e, 4, 2));
        let id_ok = |e: &FnEmitter<'ctx, '_, '_>, id: IntValue<'ctx>| match s.scales {
            1 => ctx.bool_type().const_all_ones(),
            2 => eq(e, e.b.build_and(id, c(1), "").unwrap(), 0),
            _ => eq(e, id, 0),
        };
        let (al, ac) = split(e, sfa);
        let (bl, bc) = split(e, sfb);
        let lanes_ok = and(e, eq(e, al, 0), eq(e, bl, 0));
        let acols = e.b.build_int_compare(IntPredicate::ULE, e.b.build_int_add(ac, c(4), "").unwrap(), c(COLS), "").unwrap();
        let ncols = e.b.build_right_shift(e.b.build_int_add(e.b.build_int_add(col0, n, "").unwrap(), c(31), "").unwrap(), c(5), false, "").unwrap();
        let bcols = e.b.build_int_compare(IntPredicate::ULE, e.b.build_int_add(bc, ncols, "").unwrap(), c(COLS), "").unwrap();
        all_ok = and(e, all_ok, and(e, and(e, id_ok(e, sfa_id), id_ok(e, sfb_id)), and(e, lanes_ok, and(e, acols, bcols))));
    }
    if let Some(af) = &afields {
        all_ok = and(e, all_ok, swz_ok(e, af));
    }
    let bad_p = e.b.build_alloca(i32t, "bad").unwrap();
    e.b.build_store(bad_p, e.b.build_int_z_extend(e.b.build_not(all_ok, "").unwrap(), i32t, "").unwrap()).unwrap();
    let run = ctx.append_basic_block(h, "mma.run");
    let exit = ctx.append_basic_block(h, "mma.exit");
    e.b.build_conditional_branch(all_ok, run, exit).unwrap();
    e.b.position_at_end(run);
    // The lane of row r.
    let lane_of = |e: &FnEmitter<'ctx, '_, '_>, r: IntValue<'ctx>, base_lane: IntValue<'ctx>| -> IntValue<'ctx> {
        let b = &e.b;
        let half = b.build_int_add(b.build_left_shift(b.build_right_shift(r, c(4), false, "").unwrap(), c(5), "").unwrap(), b.build_and(r, c(15), "").unwrap(), "").unwrap();
        let l = b.build_select(or(e, eq(e, m, 128), by_rows), r, half, "").unwrap().into_int_value();
        b.build_int_add(base_lane, l, "").unwrap()
    };
    let load = |e: &FnEmitter<'ctx, '_, '_>, w: PointerValue<'ctx>, addr: IntValue<'ctx>| -> IntValue<'ctx> { super::ops_wgmma::smem_elem(e, w, limit, bad_p, addr, size) };
    // Element (r, k) of A from tensor memory: row r's lane, K packed 4 / size per column.
    let ebits = if nibbles { 4 } else { 8 * size as u64 };
    let tmem_elem = |e: &FnEmitter<'ctx, '_, '_>, r: IntValue<'ctx>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        let per = 32 / ebits;
        let lane = lane_of(e, r, alane);
        let col = e.b.build_int_add(acol, e.b.build_int_unsigned_div(k, c(per), "").unwrap(), "").unwrap();
        let w = e.b.build_load(i32t, cell(e, tm, lane, col), "").unwrap().into_int_value();
        if per == 1 {
            return w;
        }
        let sh = e.b.build_int_mul(e.b.build_int_unsigned_rem(k, c(per), "").unwrap(), c(ebits), "").unwrap();
        e.b.build_and(e.b.build_right_shift(w, sh, false, "").unwrap(), c((1 << ebits) - 1), "").unwrap()
    };
    // An element code as f32 for a runtime type code (kinds with two types select).
    let to_f32 = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, code: IntValue<'ctx>| -> FloatValue<'ctx> {
        if nibbles {
            return e2m1_f32(e, v);
        }
        let (t0, t1) = match kind {
            "f16" => (Ty::F16, Ty::BF16),
            "tf32" => (Ty::TF32, Ty::TF32),
            _ => (Ty::E4M3, Ty::E5M2),
        };
        let x0 = elem_f32(e, v, t0);
        if t0 == t1 {
            return x0;
        }
        let x1 = elem_f32(e, v, t1);
        let x = e.b.build_select(eq(e, code, 1), x1, x0, "").unwrap().into_float_value();
        if !kind.ends_with("f8f6f4") {
            return x;
        }
        // (E2M1, E2M3 and E3M2 elements arrive as their 4- and 6-bit codes: `smem_at`.)
        let x = e.b.build_select(eq(e, code, 5), e2m1_f32(e, v), x, "").unwrap().into_float_value();
        let x = e.b.build_select(eq(e, code, 3), super::ops_conv::small_float_f32(e, v, super::ops_conv::F8::E2M3), x, "").unwrap().into_float_value();
        e.b.build_select(eq(e, code, 4), super::ops_conv::small_float_f32(e, v, super::ops_conv::F8::E3M2), x, "").unwrap().into_float_value()
    };
    let to_i64 = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, code: IntValue<'ctx>| -> IntValue<'ctx> {
        let v = e.b.build_int_truncate(v, i8t, "").unwrap();
        let s = e.b.build_int_s_extend(v, i64t, "").unwrap();
        let u = e.b.build_int_z_extend(v, i64t, "").unwrap();
        e.b.build_select(eq(e, code, 1), s, u, "").unwrap().into_int_value()
    };
    // for r in 0..M, col in 0..N
    let (pre, outer, inner, inner_end, outer_end) = {
        let pre = e.b.get_insert_block().unwrap();
        (pre, ctx.append_basic_block(h, "mma.row"), ctx.append_basic_block(h, "mma.col"), ctx.append_basic_block(h, "mma.col.next"), ctx.append_basic_block(h, "mma.row.next"))
    };
    e.b.build_unconditional_branch(outer).unwrap();
    e.b.position_at_end(outer);
    let rphi = e.b.build_phi(i32t, "r").unwrap();
    let r = rphi.as_basic_value().into_int_value();
    e.b.build_unconditional_branch(inner).unwrap();
    e.b.position_at_end(inner);
    let cphi = e.b.build_phi(i32t, "n").unwrap();
    let col = cphi.as_basic_value().into_int_value();
    let lane = lane_of(e, r, dlane);
    let dp = cell(e, tm, lane, e.b.build_int_add(dcol, col, "").unwrap());
    let old = e.b.build_load(i32t, dp, "").unwrap().into_int_value();
    let use_d = e.b.build_int_compare(IntPredicate::NE, enable, c(0), "").unwrap();
    // Element k of row (of B: column) `rr` of an operand in shared memory, from its
    // descriptor `fl`, transpose bit and type code, as its code (zero-extended):
    // - the `mxf4` kinds' E2M1 elements, two to a byte, K-major: the low nibble of byte k / 2
    //   for even k, the high one for odd k;
    // - an E2M1 operand (type code 5) of the 8-bit kinds, K-major: its elements in the padded
    //   form `.b4x16_p64` (PTX ISA 5.5.1.1.1), each 16 of a row's K packed into the first 8
    //   bytes of a 16-byte chunk (element 2j in the low nibble of byte j), so that a row of K
    //   elements spans K bytes as e4m3's does. Triton's sm_100a `tl.dot_scaled` of E2M1 by
    //   e4m3 (`.kind::mxf8f6f4`) gives numpy's exact product with this reading, and not with
    //   one element a byte or the high nibble first (tests/triton_sm100/dot_scaled_e2m1_e4m3).
    //   One byte is read either way, so that a transposed e4m3 operand never reads at an
    //   E2M1 address;
    // - an E2M3 or E3M2 operand (type codes 3, 4) of the 8-bit kinds, K-major: the padded
    //   form `.b6x16_p32`, each 16 of a row's K packed into the first 12 bytes of a 16-byte
    //   chunk, element i at bits 6i..6i+5 counted from the low bit of the chunk's first byte
    //   (the packing of the global data the tensor copy appends the padding to, in the order
    //   E2M1's nibbles take), a row of K elements spanning K bytes again;
    // - otherwise the `size`-byte element, K-major or (transpose bit set) MN-major.
    let nibble = |e: &FnEmitter<'ctx, '_, '_>, byte: IntValue<'ctx>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        let sh = e.b.build_left_shift(e.b.build_and(k, c(1), "").unwrap(), c(2), "").unwrap();
        e.b.build_and(e.b.build_right_shift(byte, sh, false, "").unwrap(), c(15), "").unwrap()
    };
    let smem_at = |e: &FnEmitter<'ctx, '_, '_>, w: PointerValue<'ctx>, fl: &[IntValue<'ctx>; 5], trans: IntValue<'ctx>, code: IntValue<'ctx>, rr: IntValue<'ctx>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        if nibbles {
            return nibble(e, load(e, w, desc_address(e, fl, true, rr, e.b.build_right_shift(k, c(1), false, "").unwrap(), 1)), k);
        }
        let km = e.b.build_int_compare(IntPredicate::EQ, trans, c(0), "").unwrap();
        let at = e.b.build_select(km, desc_address(e, fl, true, rr, k, size), desc_address(e, fl, false, rr, k, size), "").unwrap().into_int_value();
        if !kind.ends_with("f8f6f4") {
            return load(e, w, at);
        }
        let f4 = eq(e, code, 5);
        let chunk = e.b.build_and(k, c(!15u32 as u64), "").unwrap();
        let kb = e.b.build_int_add(chunk, e.b.build_right_shift(e.b.build_and(k, c(15), "").unwrap(), c(1), false, "").unwrap(), "").unwrap();
        let at = e.b.build_select(f4, desc_address(e, fl, true, rr, kb, 1), at, "").unwrap().into_int_value();
        // 6-bit: bits 6 (k % 16).. of the chunk, from its byte 6 (k % 16) / 8 and the next
        let f6 = or(e, eq(e, code, 3), eq(e, code, 4));
        let bit = e.b.build_int_mul(e.b.build_and(k, c(15), "").unwrap(), c(6), "").unwrap();
        let k6 = e.b.build_int_add(chunk, e.b.build_right_shift(bit, c(3), false, "").unwrap(), "").unwrap();
        let at = e.b.build_select(f6, desc_address(e, fl, true, rr, k6, 1), at, "").unwrap().into_int_value();
        let byte = load(e, w, at);
        let next = e.b.build_int_add(k6, c(1), "").unwrap();
        let at2 = e.b.build_select(f6, desc_address(e, fl, true, rr, next, 1), at, "").unwrap().into_int_value();
        let pair = e.b.build_or(byte, e.b.build_left_shift(load(e, w, at2), c(8), "").unwrap(), "").unwrap();
        let six = e.b.build_and(e.b.build_right_shift(pair, e.b.build_and(bit, c(7), "").unwrap(), false, "").unwrap(), c(63), "").unwrap();
        let v = e.b.build_select(f4, nibble(e, byte, k), byte, "").unwrap().into_int_value();
        e.b.build_select(f6, six, v, "").unwrap().into_int_value()
    };
    let a_at = |e: &FnEmitter<'ctx, '_, '_>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        match &afields {
            Some(fl) => smem_at(e, smem, fl, trans_a, atype, r, k),
            None => tmem_elem(e, r, k),
        }
    };
    let b_at = |e: &FnEmitter<'ctx, '_, '_>, k: IntValue<'ctx>| -> IntValue<'ctx> { smem_at(e, smem_b, &bfields, trans_b, btype, col, k) };
    // B's column among the instruction's (a CTA pair's second half starts at N / 2).
    let bcol = e.b.build_int_add(col, col0, "").unwrap();
    // The scale factor of element k of A's row r and of B's column `col` (see above), as f32
    // (UE8M0: 2^(e - 127), 0xff NaN; UE4M3: an e4m3 code without its sign).
    let scale_at = |e: &FnEmitter<'ctx, '_, '_>, s: Scaled, a_side: bool, k: IntValue<'ctx>| -> FloatValue<'ctx> {
        let b = &e.b;
        let (taddr, id, idx) = if a_side { (sfa, field(e, 29, 2), r) } else { (sfb, field(e, 4, 2), bcol) };
        let (l0, c0) = split(e, taddr);
        let lane = if a_side { b.build_int_add(l0, r, "").unwrap() } else { b.build_int_add(b.build_int_add(l0, b.build_and(r, c(!31u32 as u64), "").unwrap(), "").unwrap(), b.build_and(bcol, c(31), "").unwrap(), "").unwrap() };
        let cc = b.build_int_add(c0, b.build_right_shift(idx, c(5), false, "").unwrap(), "").unwrap();
        let w = b.build_load(i32t, cell(e, tm, lane, cc), "").unwrap().into_int_value();
        let byte = b.build_int_add(id, b.build_int_unsigned_div(k, c(s.block as u64), "").unwrap(), "").unwrap();
        let v = b.build_and(b.build_right_shift(w, b.build_left_shift(byte, c(3), "").unwrap(), false, "").unwrap(), c(255), "").unwrap();
        let ue8 = {
            let normal = b.build_left_shift(v, c(23), "").unwrap();
            let bits = b.build_select(eq(e, v, 0), c(0x0040_0000), normal, "").unwrap().into_int_value();
            let bits = b.build_select(eq(e, v, 255), c(0x7fc0_0000), bits, "").unwrap().into_int_value();
            b.build_bit_cast(bits, f32t, "").unwrap().into_float_value()
        };
        let ue4 = super::ops_wgmma::f8_to_f32(e, b.build_and(v, c(0x7f), "").unwrap(), true);
        b.build_select(eq(e, field(e, 23, 1), 1), ue8, ue4, "").unwrap().into_float_value()
    };
    let result = if d_int {
        let c0 = e.b.build_int_s_extend(old, i64t, "").unwrap();
        let acc0 = e.b.build_select(use_d, c0, i64t.const_zero(), "").unwrap();
        let acc = super::ops_wmma::k_loop(e, kdim, acc0, |e, k, acc| {
            let prod = e.b.build_int_mul(to_i64(e, a_at(e, k), atype), to_i64(e, b_at(e, k), btype), "").unwrap();
            e.b.build_int_add(acc.into_int_value(), prod, "").unwrap().into()
        })
        .into_int_value();
        // .i8 without saturation (bit 3): the low 32 bits; with it, clamped.
        let sat = e.b.build_int_compare(IntPredicate::NE, field(e, 3, 1), c(0), "").unwrap();
        let hi = i64t.const_int(i32::MAX as u64, false);
        let lo = i64t.const_int(i32::MIN as i64 as u64, true);
        let cl = e.b.build_select(e.b.build_int_compare(IntPredicate::SGT, acc, hi, "").unwrap(), hi, acc, "").unwrap().into_int_value();
        let cl = e.b.build_select(e.b.build_int_compare(IntPredicate::SLT, cl, lo, "").unwrap(), lo, cl, "").unwrap().into_int_value();
        let v = e.b.build_select(sat, cl, acc, "").unwrap().into_int_value();
        e.b.build_int_truncate(v, i32t, "").unwrap()
    } else {
        // D as f32 (an f16 D in the cell's low half), scaled by 2^-scale-input-d.
        let f16d = eq(e, dtype, 0);
        let as_f32 = e.b.build_bit_cast(old, f32t, "").unwrap().into_float_value();
        let as_h = super::ops_half::h2f(e, e.b.build_int_truncate(old, i16t, "").unwrap());
        let cur = e.b.build_select(f16d, as_h, as_f32, "").unwrap().into_float_value();
        let sc = e.b.build_int_sub(c(127), scale, "").unwrap();
        let factor = e.b.build_bit_cast(e.b.build_left_shift(sc, c(23), "").unwrap(), f32t, "").unwrap().into_float_value();
        let cur = e.b.build_float_mul(cur, factor, "").unwrap();
        let acc0 = e.b.build_select(use_d, cur, f32t.const_zero(), "").unwrap();
        let neg = e.b.build_int_compare(IntPredicate::NE, e.b.build_xor(neg_a, neg_b, "").unwrap(), c(0), "").unwrap();
        let acc = super::ops_wmma::k_loop(e, kdim, acc0, |e, k, acc| {
            let x = to_f32(e, a_at(e, k), atype);
            let y = to_f32(e, b_at(e, k), btype);
            let p = e.b.build_float_mul(x, y, "").unwrap();
            // (A * scale_A) * (B * scale_B): the powers of two and e4m3 scales of a block.
            let p = match scaled {
                Some(s) => e.b.build_float_mul(e.b.build_float_mul(p, scale_at(e, s, true, k), "").unwrap(), scale_at(e, s, false, k), "").unwrap(),
                None => p,
            };
            let np = e.b.build_float_neg(p, "").unwrap();
            let p = e.b.build_select(neg, np, p, "").unwrap().into_float_value();
            e.b.build_float_add(acc.into_float_value(), p, "").unwrap().into()
        })
        .into_float_value();
        // An exact zero is +0, as wgmma's.
        let acc = e.b.build_float_add(acc, f32t.const_zero(), "").unwrap();
        let bits32 = super::ops_wmma::acc_bits(e, acc, false);
        let bits16 = super::ops_wmma::acc_bits(e, acc, true);
        let bits16 = e.b.build_and(bits16, c(0xffff), "").unwrap();
        e.b.build_select(f16d, bits16, bits32, "").unwrap().into_int_value()
    };
    // A lane whose bit is set in disable-output-lane keeps its value.
    let word = e.b.build_right_shift(lane, c(5), false, "").unwrap();
    let mut mword = c(0);
    for (k, mv) in masks.iter().enumerate() {
        mword = e.b.build_select(eq(e, word, k as u64), *mv, mword, "").unwrap().into_int_value();
    }
    let off = e.b.build_and(e.b.build_right_shift(mword, e.b.build_and(lane, c(31), "").unwrap(), false, "").unwrap(), c(1), "").unwrap();
    let keep = e.b.build_int_compare(IntPredicate::NE, off, c(0), "").unwrap();
    let v = e.b.build_select(keep, old, result, "").unwrap();
    e.b.build_store(dp, v).unwrap();
    e.b.build_unconditional_branch(inner_end).unwrap();
    e.b.position_at_end(inner_end);
    let next_c = e.b.build_int_add(col, c(1), "").unwrap();
    let more_c = e.b.build_int_compare(IntPredicate::ULT, next_c, n, "").unwrap();
    e.b.build_conditional_branch(more_c, inner, outer_end).unwrap();
    e.b.position_at_end(outer_end);
    let next_r = e.b.build_int_add(r, c(1), "").unwrap();
    let last_r = e.b.build_select(by_rows, rows, m, "").unwrap().into_int_value();
    let more_r = e.b.build_int_compare(IntPredicate::ULT, next_r, last_r, "").unwrap();
    e.b.build_conditional_branch(more_r, outer, exit).unwrap();
    rphi.add_incoming(&[(&c(0), pre), (&next_r, outer_end)]);
    cphi.add_incoming(&[(&c(0), outer), (&next_c, inner_end)]);
    e.b.position_at_end(exit);
    let bad = e.b.build_load(i32t, bad_p, "").unwrap();
    e.b.build_return(Some(&bad)).unwrap();
    e.end_helper(saved);
    h
}
