//! Bulk asynchronous copies (PTX ISA 8.x 9.7.9.25.4-5, sm_90): `cp.async.bulk` between global
//! and shared memory, and `cp.async.bulk.tensor`, which copies a box of a tensor described by
//! a tensor map (`ptxr_runtime::tensor_map`, ptxr's encoding).
//!
//! A copy into shared memory completes its bytes on an mbarrier (`.mbarrier::complete_tx::bytes`:
//! the barrier's transaction count goes down by the bytes copied); a copy to global memory
//! belongs to the thread's bulk async-group (`.bulk_group`, waited for by
//! `cp.async.bulk.wait_group`). On a CPU the copies are done when they are issued, so the
//! groups need nothing and the mbarrier sees the bytes arrive at once.
//!
//! A tensor box (tile mode): along dimension d it takes `box[d]` elements from coordinate
//! `c[d]`, every `estride[d]`-th one (the innermost dimension takes every element: an H200
//! ignores its element stride), in shared memory as rows of the innermost dimension, one after
//! another, each `box[0] * size` bytes rounded up to 16, or the swizzle's span when there is one
//! (the rest of such a row is left as it was); a swizzle of W bytes XORs the 16-byte chunk
//! (address bits 4..) with the 128-byte row (bits 7..), W / 16 chunks wide, as `wgmma` reads it.
//! Elements outside the tensor read as zeros, or as NaN (the bytes 0xf7 0x7f repeated, as an
//! H200 writes them) for a map made with the NaN fill, and a store leaves them out. The
//! innermost coordinate times the element size must be a multiple of 16 bytes, and a store's
//! coordinates must not be negative: an H200 stops with an illegal instruction otherwise, and
//! so does ptxr (with a message). `tests/filetests/mem/tma.ptx` holds what an H200 gave.

use super::func::{FnEmitter, R};
use crate::syntax::ast::{Instr, Operand, StateSpace, Type};
use inkwell::values::{FunctionValue, IntValue};
use inkwell::IntPredicate;
use ptxr_runtime::tensor_map::{field, MAGIC};

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if i.opcode.name == "clusterlaunchcontrol" {
        if e.m.nvptx {
            return Err(e.err(i.opcode.span, "`clusterlaunchcontrol` (PTX 8.6, sm_100) has no form in LLVM 19's NVPTX backend"));
        }
        return cluster_launch_control(e, i).map(|_| true);
    }
    if i.opcode.name == "tensormap" || (i.opcode.name == "fence" && i.has_mod("tensormap::generic")) {
        return tensormap(e, i).map(|_| true);
    }
    if !(i.opcode.name == "cp" && i.has_mod("bulk")) {
        return Ok(false);
    }
    if e.m.nvptx {
        if let Some(m) = i.mods.iter().find(|m| m.contains("gather4") || m.contains("scatter4") || m.starts_with("im2col::w")) {
            return Err(e.err(i.opcode.span, format!("`.{m}` does not reach LLVM 19's NVPTX backend, which has no sm_100 target")));
        }
        return nvptx(e, i).map(|_| true);
    }
    if i.has_mod("commit_group") || i.has_mod("wait_group") || i.has_mod("prefetch") {
        return Ok(true);
    }
    if i.has_mod("tensor") {
        tensor(e, i)?;
    } else {
        bulk(e, i)?;
    }
    Ok(true)
}

/// A shared-memory address operand as a shared address (i32: the offset from
/// `FnEmitter::shared_base`).
fn shared_offset<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>) -> R<IntValue<'ctx>> {
    let i64t = e.ctx().i64_type();
    let p = e.address(op, Some(StateSpace::Shared))?;
    let base = e.shared_base();
    let d = e.b.build_int_sub(e.b.build_ptr_to_int(p, i64t, "").unwrap(), e.b.build_ptr_to_int(base, i64t, "").unwrap(), "").unwrap();
    Ok(e.b.build_int_truncate(d, e.ctx().i32_type(), "").unwrap())
}

/// The byte distances from this CTA's shared window to the windows a copy into shared memory
/// writes, each given to `f` (an i64): with `.multicast::cluster`, those of the CTAs whose
/// bits are set in the 16-bit ctaMask (operand `mask_op`: bit r is rank r of the cluster,
/// PTX ISA 8.x 9.7.9.25.4.1), in rank order; without it, 0 (the window the address names).
pub(super) fn each_target<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, mask_op: usize, mut f: impl FnMut(&mut FnEmitter<'ctx, 'a, '_>, IntValue<'ctx>) -> R<()>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    if !i.has_mod("multicast::cluster") {
        return f(e, i64t.const_zero());
    }
    let op = i.operands.get(mask_op).ok_or_else(|| e.err(i.span, "`.multicast::cluster` needs a ctaMask operand"))?;
    let mask = e.read_int(op, Type::B16)?;
    let mask = e.b.build_int_z_extend(mask, i32t, "").unwrap();
    each_cta_of(e, mask, f)
}

/// The byte distances from this CTA's shared window to those of the cluster's CTAs whose
/// bits are set in `mask` (an i32: bit r is rank r), each given to `f`, in rank order.
fn each_cta_of<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, mask: IntValue<'ctx>, mut f: impl FnMut(&mut FnEmitter<'ctx, 'a, '_>, IntValue<'ctx>) -> R<()>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let stride = e.cluster_u32(super::abi::cluster_field::STRIDE, None);
    let stride = e.b.build_int_z_extend(stride, i64t, "").unwrap();
    let my = e.cluster_rank();
    let my = e.b.build_int_z_extend(my, i64t, "").unwrap();
    let pre = e.b.get_insert_block().unwrap();
    let head = ctx.append_basic_block(e.f, "multicast");
    let body = ctx.append_basic_block(e.f, "multicast.cta");
    let latch = ctx.append_basic_block(e.f, "multicast.next");
    let done = ctx.append_basic_block(e.f, "multicast.done");
    e.b.build_unconditional_branch(head).unwrap();
    e.b.position_at_end(head);
    let r = e.b.build_phi(i32t, "rank").unwrap();
    let rv = r.as_basic_value().into_int_value();
    let bit = e.b.build_and(e.b.build_right_shift(mask, rv, false, "").unwrap(), i32t.const_int(1, false), "").unwrap();
    let set = e.b.build_int_compare(IntPredicate::NE, bit, i32t.const_zero(), "").unwrap();
    e.b.build_conditional_branch(set, body, latch).unwrap();
    e.b.position_at_end(body);
    let r64 = e.b.build_int_z_extend(rv, i64t, "").unwrap();
    let delta = e.b.build_int_mul(e.b.build_int_sub(r64, my, "").unwrap(), stride, "").unwrap();
    f(e, delta)?;
    e.b.build_unconditional_branch(latch).unwrap();
    e.b.position_at_end(latch);
    let next = e.b.build_int_add(rv, i32t.const_int(1, false), "").unwrap();
    let more = e.b.build_int_compare(IntPredicate::ULT, next, i32t.const_int(16, false), "").unwrap();
    e.b.build_conditional_branch(more, head, done).unwrap();
    r.add_incoming(&[(&i32t.const_zero(), pre), (&next, latch)]);
    e.b.position_at_end(done);
    Ok(())
}

/// `p + delta` bytes.
fn offset_ptr<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, p: inkwell::values::PointerValue<'ctx>, delta: IntValue<'ctx>) -> inkwell::values::PointerValue<'ctx> {
    unsafe { e.b.build_gep(e.ctx().i8_type(), p, &[delta], "").unwrap() }
}

/// Stops the CTA with `status` where `bad` holds.
fn check<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, bad: IntValue<'ctx>, status: u32) {
    e.abort_if(bad, status);
}

/// PTX ISA 8.x 9.7.9.25.4.1 cp.async.bulk: `size` bytes (a multiple of 16) from global to
/// shared memory completing on an mbarrier (in each CTA of the ctaMask with
/// `.multicast::cluster`, at the same offsets), from shared to global memory (bulk group), or
/// from this CTA's shared memory to a CTA's of the cluster (completing on that CTA's mbarrier).
fn bulk<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ctx = e.ctx();
    let i64t = ctx.i64_type();
    // .dst.src: the destination is shared unless it is written first as .global
    let to_shared = i.mods.get(2).map_or(false, |m| m.starts_with("shared"));
    let size = e.read_int(&i.operands[2], Type::U32)?;
    let size64 = e.b.build_int_z_extend(size, i64t, "").unwrap();
    if i.has_mod("reduce") {
        // cp.reduce.async.bulk: each element of the destination combined with the source's
        let ty = i.mods.iter().rev().find_map(|m| RedTy::parse(m)).ok_or_else(|| e.err(i.opcode.span, "`cp.reduce.async.bulk` needs an element type"))?;
        let op = red_op(i).ok_or_else(|| e.err(i.opcode.span, "`cp.reduce.async.bulk` needs a reduction"))?;
        check_red(e, i, op, ty)?;
        let dspace = if i.has_mod("global") { Some(StateSpace::Global) } else { Some(StateSpace::Shared) };
        let d = e.address(&i.operands[0], dspace)?;
        let s = e.address(&i.operands[1], Some(StateSpace::Shared))?;
        // The checking mode: the source is read, the destination read and written.
        e.check_access_n(s, size, false, StateSpace::Shared, true);
        e.check_access_n(d, size, true, dspace.unwrap_or(StateSpace::Shared), true);
        let n = e.b.build_int_unsigned_div(size64, i64t.const_int(ty.bytes(), false), "").unwrap();
        let helper = red_loop(e, op, ty);
        e.b.build_call(helper, &[d.into(), s.into(), n.into()], "").unwrap();
        if !i.has_mod("global") {
            let mbar = e.address(&i.operands[3], Some(StateSpace::Shared))?;
            super::ops_atomic::mbarrier_complete_tx(e, mbar, size64);
        }
        return Ok(());
    }
    if to_shared {
        // The destination lies in the window of a CTA of the cluster (this one's, unless
        // `mapa` gave another's), and so must its end.
        let limit = e.load_cta_u32(super::abi::field::TOTAL_SMEM, None);
        let dst = shared_offset(e, &i.operands[0])?;
        let dst = e.b.build_int_z_extend(dst, i64t, "").unwrap();
        let (_, inside, within) = super::ops_mem::window_of(e, dst);
        let end = e.b.build_int_add(within, size64, "").unwrap();
        let over = e.b.build_int_compare(IntPredicate::UGT, end, e.b.build_int_z_extend(limit, i64t, "").unwrap(), "").unwrap();
        let bad = e.b.build_or(over, e.b.build_not(inside, "").unwrap(), "").unwrap();
        check(e, bad, super::abi::STATUS_BAD_ADDRESS);
        let src_space = if i.has_mod("global") { StateSpace::Global } else { StateSpace::Shared };
        let d = e.address(&i.operands[0], Some(StateSpace::Shared))?;
        let s = e.address(&i.operands[1], Some(src_space))?;
        let mbar = e.address(&i.operands[3], Some(StateSpace::Shared))?;
        // The checking mode: the source's bytes (the destination's window was checked above).
        e.check_access_n(s, size, false, src_space, true);
        each_target(e, i, 4, |e, delta| {
            let d = offset_ptr(e, d, delta);
            e.b.build_memmove(d, 1, s, 1, size64).unwrap();
            let mbar = offset_ptr(e, mbar, delta);
            super::ops_atomic::mbarrier_complete_tx(e, mbar, size64);
            Ok(())
        })?;
    } else {
        let d = e.address(&i.operands[0], Some(StateSpace::Global))?;
        let s = e.address(&i.operands[1], Some(StateSpace::Shared))?;
        e.check_access_n(s, size, false, StateSpace::Shared, true);
        e.check_access_n(d, size, true, StateSpace::Global, true);
        e.b.build_memmove(d, 1, s, 1, size64).unwrap();
    }
    Ok(())
}

/// The checking mode for a tensor copy of rank `rank`: the global bytes the box reaches (from
/// its first to its last element inside the tensor, per dimension clamped to the tensor's
/// extent: elements outside it are not accessed but filled) are checked as one access
/// (`ptxr_runtime::tensor_map` layout; a map that ptxr did not encode is left to the copy,
/// which reports it); for gather4/scatter4 each of the four rows, for im2col (whose pixels may
/// wrap through the whole bounding box) the whole tensor.
fn check_box<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, map: inkwell::values::PointerValue<'ctx>, cs: inkwell::values::PointerValue<'ctx>, rank: u32, store: bool, walk: Walk) {
    let ctx = e.ctx();
    let (i8t, i16t, i32t, i64t) = (ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type());
    let at = |e: &mut FnEmitter<'ctx, '_, '_>, off: u64, t: inkwell::types::IntType<'ctx>| -> IntValue<'ctx> {
        let p = offset_ptr(e, map, i64t.const_int(off, false));
        let v = e.b.build_load(t, p, "").unwrap().into_int_value();
        if t.get_bit_width() < 64 {
            e.b.build_int_z_extend(v, i64t, "").unwrap()
        } else {
            v
        }
    };
    let coord = |e: &mut FnEmitter<'ctx, '_, '_>, k: u64| -> IntValue<'ctx> {
        let cp = unsafe { e.b.build_in_bounds_gep(i32t.array_type(8), cs, &[i32t.const_zero(), i32t.const_int(k, false)], "").unwrap() };
        let c = e.b.build_load(i32t, cp, "").unwrap().into_int_value();
        e.b.build_int_s_extend(c, i64t, "").unwrap()
    };
    let one = i64t.const_int(1, false);
    // per span, per dimension: (first coordinate, box size, element stride), or None for the
    // whole dimension
    let rank = rank.min(5) as u64;
    let mut spans: Vec<Vec<Option<(IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>)>>> = Vec::new();
    match walk {
        Walk::Tile => {
            let mut dims = Vec::new();
            for d in 0..rank {
                let (c, bx, es) = (coord(e, d), at(e, field::BOX + 2 * d, i16t), at(e, field::ESTRIDES + d, i8t));
                dims.push(Some((c, bx, es)));
            }
            spans.push(dims);
        }
        Walk::Rows4 => {
            for k in 0..4 {
                let (c0, bx) = (coord(e, 0), at(e, field::BOX, i16t));
                let r = coord(e, 1 + k);
                spans.push(vec![Some((c0, bx, one)), Some((r, one, one))]);
            }
        }
        Walk::Im2col => spans.push(vec![None; rank as usize]),
    }
    for span in spans {
        let magic = at(e, field::MAGIC, i32t);
        let mut ok = e.b.build_int_compare(IntPredicate::EQ, magic, i64t.const_int(ptxr_runtime::tensor_map::MAGIC as u64, false), "").unwrap();
        // (the packed sub-byte types: the innermost dimension in units of `unit` elements,
        // `gsize` bytes each, as `tma_helper` copies them)
        let dtype = at(e, field::DTYPE, i8t);
        let esize = at(e, field::ESIZE, i8t);
        let (unit, gsize) = copy_unit(&e.b, dtype, esize);
        let base = at(e, field::ADDR, i64t);
        let (mut lo, mut hi) = (i64t.const_zero(), i64t.const_zero());
        for (d, dim_span) in span.iter().enumerate() {
            let d = d as u64;
            let dim = at(e, field::DIMS + 8 * d, i64t);
            let stride = if d == 0 { gsize } else { at(e, field::STRIDES + 8 * (d - 1), i64t) };
            let zero = i64t.const_zero();
            let top = e.b.build_int_sub(dim, one, "").unwrap();
            let (first, last) = match *dim_span {
                None => (zero, top),
                Some((c, bx, es)) => {
                    // first and last index of the box along d, inside [0, dim)
                    let last = e.b.build_int_add(c, e.b.build_int_mul(e.b.build_int_sub(bx, one, "").unwrap(), es, "").unwrap(), "").unwrap();
                    let first = e.b.build_select(e.b.build_int_compare(IntPredicate::SLT, c, zero, "").unwrap(), zero, c, "").unwrap().into_int_value();
                    let last = e.b.build_select(e.b.build_int_compare(IntPredicate::SGT, last, top, "").unwrap(), top, last, "").unwrap().into_int_value();
                    (first, last)
                }
            };
            let (first, last) = if d == 0 { (e.b.build_int_signed_div(first, unit, "").unwrap(), e.b.build_int_signed_div(last, unit, "").unwrap()) } else { (first, last) };
            ok = e.b.build_and(ok, e.b.build_int_compare(IntPredicate::SLE, first, last, "").unwrap(), "").unwrap();
            lo = e.b.build_int_add(lo, e.b.build_int_mul(first, stride, "").unwrap(), "").unwrap();
            hi = e.b.build_int_add(hi, e.b.build_int_mul(last, stride, "").unwrap(), "").unwrap();
        }
        let (yes, done) = (ctx.append_basic_block(e.f, "tma.check"), ctx.append_basic_block(e.f, "tma.checked"));
        e.b.build_conditional_branch(ok, yes, done).unwrap();
        e.b.position_at_end(yes);
        let n = e.b.build_int_add(e.b.build_int_sub(hi, lo, "").unwrap(), gsize, "").unwrap();
        let p = e.space_ptr(e.b.build_int_add(base, lo, "").unwrap(), None);
        e.check_access_n(p, n, store, StateSpace::Global, false);
        e.b.build_unconditional_branch(done).unwrap();
        e.b.position_at_end(done);
    }
}

/// The unit a tensor copy moves for a map's data type and element size (i64 values, as
/// `tensor_map::unit_of` gives them): (elements, bytes in global memory); shared memory takes
/// `esize` bytes a unit.
fn copy_unit<'ctx>(b: &inkwell::builder::Builder<'ctx>, dtype: IntValue<'ctx>, esize: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let i64t = dtype.get_type();
    let c64 = |v: u64| i64t.const_int(v, false);
    let is_t = |t: u64| b.build_int_compare(IntPredicate::EQ, dtype, c64(t), "").unwrap();
    let sel = |c: IntValue<'ctx>, x: IntValue<'ctx>, y: IntValue<'ctx>| b.build_select(c, x, y, "").unwrap().into_int_value();
    let unit = sel(is_t(13), c64(2), sel(b.build_or(is_t(14), is_t(15), "").unwrap(), c64(16), c64(1)));
    let gsize = sel(is_t(13), c64(1), sel(is_t(14), c64(8), sel(is_t(15), c64(12), esize)));
    (unit, gsize)
}

/// How a tensor copy walks its tensor (PTX ISA 8.x 5.5.3-5.5.4).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// `.tile`: a box of the map's box sizes from the coordinates.
    Tile,
    /// `.tile::gather4` / `.tile::scatter4` (5.5.3.4): four rows of a 2-D tensor, each the map's
    /// box[0] elements from column c0, at rows c1..c4 (the map's box[1] must be 1).
    Rows4,
    /// `.im2col` / `.im2col_no_offs` (5.5.4): the map's pixels-per-column pixels from the filter
    /// base (the W, H, D coordinates) through the bounding box, W fastest, then H, D and N,
    /// each at base + im2col offsets, the map's channels-per-pixel channels from c0.
    Im2col,
}

/// PTX ISA 8.x 9.7.9.25.5.1 cp.async.bulk.tensor (and 9.7.9.25.5.2 cp.reduce.async.bulk.tensor)
/// in the tile, tile::gather4/scatter4 and im2col modes.
fn tensor<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    if let Some(m) = i.mods.iter().find(|m| m.starts_with("im2col::w")) {
        return Err(e.err(i.opcode.span, format!("`cp.async.bulk.tensor` in the `.{m}` mode (cuTensorMapEncodeIm2colWide) is not supported by ptxr yet; .tile, .tile::gather4, .tile::scatter4 and .im2col are")));
    }
    let walk = if i.mods.iter().any(|m| m.contains("gather4") || m.contains("scatter4")) {
        Walk::Rows4
    } else if i.mods.iter().any(|m| m.starts_with("im2col")) {
        Walk::Im2col
    } else {
        Walk::Tile
    };
    let rank = i.mods.iter().find_map(|m| m.strip_suffix('d').and_then(|n| n.parse::<u32>().ok())).unwrap_or(0);
    let store = i.has_mod("reduce") || i.mods.iter().position(|m| *m == "global") < i.mods.iter().position(|m| m.starts_with("shared"));
    let (smem_op, tensor_op) = if store { (&i.operands[1], &i.operands[0]) } else { (&i.operands[0], &i.operands[1]) };
    let Operand::MemList(items, _) = tensor_op else { return Err(e.err(tensor_op.span(), "expected [tensorMap, {coordinates}]")) };
    let coords: Vec<&'a Operand<'a>> = match items.get(1) {
        Some(Operand::Vector(cs, _)) => cs.iter().collect(),
        Some(c) if rank == 1 => vec![c],
        _ => return Err(e.err(tensor_op.span(), "expected [tensorMap, {coordinates}]")),
    };
    match walk {
        Walk::Rows4 if rank != 2 || coords.len() != 5 || items.len() != 2 => {
            return Err(e.err(tensor_op.span(), "`.tile::gather4` and `.tile::scatter4` copy rows of a 2-D tensor: .2d with [tensorMap, {column, row0, row1, row2, row3}]"));
        }
        Walk::Im2col if !(3..=5).contains(&rank) => return Err(e.err(i.opcode.span, "an im2col tensor copy is .3d, .4d or .5d")),
        Walk::Tile | Walk::Im2col if coords.len() as u32 != rank || items.len() != 2 => {
            return Err(e.err(tensor_op.span(), format!("a .{rank}d tensor copy takes [tensorMap, {{{rank} coordinates}}]")));
        }
        _ => {}
    }
    // `.im2col` (a load) takes the im2col offsets after the mbarrier: rank - 2 16-bit values,
    // W first; `.im2col_no_offs` and a store use none.
    let with_offsets = walk == Walk::Im2col && i.has_mod("im2col") && !store;
    let offsets: Vec<&'a Operand<'a>> = if with_offsets {
        match i.operands.get(3) {
            Some(Operand::Vector(os, _)) if os.len() as u32 == rank - 2 => os.iter().collect(),
            Some(o) if rank == 3 && !matches!(o, Operand::Vector(..)) => vec![o],
            _ => return Err(e.err(i.span, format!("a .{rank}d `.im2col` copy takes {} im2col offsets (16-bit, W first) after the mbarrier", rank - 2))),
        }
    } else {
        Vec::new()
    };
    // The tensor map: a generic address (or a kernel parameter's name, its address).
    let map_addr = e.read_int(&items[0], Type::B64)?;
    let map = e.space_ptr(map_addr, None);
    // coordinates 0-4 (gather4/scatter4: the column and the four rows), im2col offsets 5-7
    let cs_t = i32t.array_type(8);
    let cs = e.alloca_b.build_alloca(cs_t, "tma.coords").unwrap();
    for k in 0..8 {
        let v = if k < coords.len().min(5) {
            e.read_int(coords[k], Type::S32)?
        } else if k >= 5 && k - 5 < offsets.len() {
            let o = e.read_int(offsets[k - 5], Type::U16)?;
            e.b.build_int_z_extend(o, i32t, "").unwrap()
        } else {
            i32t.const_zero()
        };
        let p = unsafe { e.b.build_in_bounds_gep(cs_t, cs, &[i32t.const_zero(), i32t.const_int(k as u64, false)], "").unwrap() };
        e.b.build_store(p, v).unwrap();
    }
    // The box goes to (or comes from) the window of a CTA of the cluster: this one's, unless
    // `mapa` gave another's address.
    let own = e.own_shared_base();
    let limit = e.load_cta_u32(super::abi::field::TOTAL_SMEM, None);
    let soff = shared_offset(e, smem_op)?;
    let (wrank, inside, within) = super::ops_mem::window_of(e, e.b.build_int_z_extend(soff, i64t, "").unwrap());
    check(e, e.b.build_not(inside, "").unwrap(), super::abi::STATUS_BAD_ADDRESS);
    let stride = e.cluster_u32(super::abi::cluster_field::STRIDE, None);
    let my = e.cluster_rank();
    let to_rank = e.b.build_int_mul(e.b.build_int_s_extend(e.b.build_int_sub(wrank, my, "").unwrap(), i64t, "").unwrap(), e.b.build_int_z_extend(stride, i64t, "").unwrap(), "").unwrap();
    let smem = offset_ptr(e, own, to_rank);
    let soff = e.b.build_int_truncate(within, i32t, "").unwrap();
    let red = if i.has_mod("reduce") { Some(red_op(i).ok_or_else(|| e.err(i.opcode.span, "`cp.reduce.async.bulk.tensor` needs a reduction"))?) } else { None };
    let hname = match red {
        Some(op) => format!("__ptxr_tma_reduce.{op}"),
        None => "__ptxr_tma_copy".to_string(),
    } + match walk {
        Walk::Tile => "",
        Walk::Rows4 => ".rows4",
        Walk::Im2col => ".im2col",
    };
    let helper = match e.m.module.get_function(&hname) {
        Some(h) => h,
        None => tma_helper(e, &hname, red, walk),
    };
    let mbar = if store { None } else { Some(e.address(&i.operands[2], Some(StateSpace::Shared))?) };
    if e.m.check && !e.m.nvptx {
        check_box(e, map, cs, rank, store, walk);
    }
    // A load with `.multicast::cluster` writes the box into each CTA of its ctaMask.
    each_target(e, i, 3 + usize::from(with_offsets), |e, delta| {
        let smem = offset_ptr(e, smem, delta);
        let r = e
            .b
            .build_call(helper, &[map.into(), smem.into(), limit.into(), soff.into(), cs.into(), i32t.const_int(rank as u64, false).into(), i32t.const_int(store as u64, false).into()], "")
            .unwrap()
            .try_as_basic_value()
            .basic()
            .unwrap()
            .into_int_value();
        for (code, status) in [(-1i64, super::abi::STATUS_BAD_TENSOR_MAP), (-2, super::abi::STATUS_BAD_TENSOR_COPY), (-3, super::abi::STATUS_BAD_ADDRESS), (-4, super::abi::STATUS_BAD_TENSOR_COPY)] {
            let bad = e.b.build_int_compare(IntPredicate::EQ, r, i64t.const_int(code as u64, true), "").unwrap();
            check(e, bad, status);
        }
        if let Some(mbar) = mbar {
            let mbar = offset_ptr(e, mbar, delta);
            super::ops_atomic::mbarrier_complete_tx(e, mbar, r);
        }
        Ok(())
    })
}

/// Defines `i64 __ptxr_tma_copy(ptr map, ptr smem, i32 smem_bytes, i32 smem_offset,
/// ptr coords (i32[8]: coordinates 0-4, im2col offsets 5-7), i32 rank, i32 store)` (with a
/// suffix per [`Walk`] other than the tile's): copies the box and returns its bytes, or -1
/// (not ptxr's map, or another rank or mode), -2 (innermost coordinate not 16-byte aligned, a
/// store at negative coordinates, a gather4/scatter4 map whose box is more than one row), -3
/// (the box does not fit in the CTA's shared memory).
fn tma_helper<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, red: Option<&'static str>, walk: Walk) -> FunctionValue<'ctx> {
    let ctx = e.ctx();
    let (i8t, i16t, i32t, i64t) = (ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type());
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let fn_t = i64t.fn_type(&[ptr_t.into(), ptr_t.into(), i32t.into(), i32t.into(), ptr_t.into(), i32t.into(), i32t.into()], false);
    let (h, saved) = e.begin_helper(name, fn_t);
    let b = &e.b;
    // (16 bytes: the unit of the packed sub-byte types)
    let tmp = b.build_alloca(ctx.i128_type(), "fill").unwrap();
    let p = |k: u32| h.get_nth_param(k).unwrap();
    let (map, smem, limit, soff, cs, rank, store) =
        (p(0).into_pointer_value(), p(1).into_pointer_value(), p(2).into_int_value(), p(3).into_int_value(), p(4).into_pointer_value(), p(5).into_int_value(), p(6).into_int_value());
    let c64 = |v: i64| i64t.const_int(v as u64, true);
    let at = |off: u64| unsafe { b.build_in_bounds_gep(i8t, map, &[i64t.const_int(off, false)], "").unwrap() };
    let ld = |t: inkwell::types::IntType<'ctx>, off: u64| -> IntValue<'ctx> {
        let v = b.build_load(t, at(off), "").unwrap().into_int_value();
        let _ = v.as_instruction().unwrap().set_alignment(1);
        b.build_int_z_extend_or_bit_cast(v, i64t, "").unwrap()
    };
    let ret_block = |code: i64| {
        let bb = ctx.append_basic_block(h, "tma.fail");
        let cur = b.get_insert_block().unwrap();
        b.position_at_end(bb);
        b.build_return(Some(&c64(code))).unwrap();
        b.position_at_end(cur);
        bb
    };
    let fail_map = ret_block(-1);
    let fail_copy = ret_block(-2);
    let fail_smem = ret_block(-3);
    let guard = |cond: IntValue<'ctx>, fail: inkwell::basic_block::BasicBlock<'ctx>| {
        let ok = ctx.append_basic_block(h, "tma.ok");
        b.build_conditional_branch(cond, fail, ok).unwrap();
        b.position_at_end(ok);
    };
    let magic = ld(i32t, field::MAGIC);
    let map_rank = ld(i8t, field::RANK);
    let map_mode = ld(i8t, field::MODE);
    let want_mode = if walk == Walk::Im2col { ptxr_runtime::tensor_map::MODE_IM2COL } else { ptxr_runtime::tensor_map::MODE_TILED };
    let bad = b.build_or(
        b.build_int_compare(IntPredicate::NE, magic, c64(MAGIC as i64), "").unwrap(),
        b.build_int_compare(IntPredicate::NE, map_rank, b.build_int_z_extend(rank, i64t, "").unwrap(), "").unwrap(),
        "",
    )
    .unwrap();
    let bad = b.build_or(bad, b.build_int_compare(IntPredicate::NE, map_mode, c64(want_mode as i64), "").unwrap(), "").unwrap();
    guard(bad, fail_map);
    // A unit of the copy: an element of `esize` bytes, or of the packed sub-byte types
    // (`tensor_map::unit_of`, PTX ISA 5.5.1.1.1) `unit` elements, `gsize` bytes in global
    // memory and `esize` in shared memory (the rest of it the padding).
    let esize = ld(i8t, field::ESIZE);
    let dtype = ld(i8t, field::DTYPE);
    let is_t = |t: i64| b.build_int_compare(IntPredicate::EQ, dtype, c64(t), "").unwrap();
    let (t14, t15) = (is_t(14), is_t(15));
    let (unit, gsize) = copy_unit(b, dtype, esize);
    let sub = b.build_int_compare(IntPredicate::NE, unit, c64(1), "").unwrap();
    // (tiled copies only; a store of `.b4x16_p64` is not one of the type's directions)
    let sub_bad = match walk {
        Walk::Tile => b.build_and(t14, b.build_int_compare(IntPredicate::NE, store, i32t.const_zero(), "").unwrap(), "").unwrap(),
        _ => sub,
    };
    guard(sub_bad, fail_copy);
    let swz = ld(i8t, field::SWIZZLE);
    let base = ld(i64t, field::ADDR);
    let fill_nan = ld(i8t, field::FILL);
    let coord_at = |k: IntValue<'ctx>| -> IntValue<'ctx> {
        let q = unsafe { b.build_in_bounds_gep(i32t, cs, &[k], "").unwrap() };
        b.build_int_s_extend(b.build_load(i32t, q, "").unwrap().into_int_value(), i64t, "").unwrap()
    };
    let coord = |k: u64| coord_at(i64t.const_int(k, false));
    let (mut dims, mut counts, mut es, mut strides, mut c) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let rank64 = b.build_int_z_extend(rank, i64t, "").unwrap();
    for d in 0..5u64 {
        // past the rank (a map made field by field leaves zeros there): one element
        let used = b.build_int_compare(IntPredicate::ULT, c64(d as i64), rank64, "").unwrap();
        let or1 = |v: IntValue<'ctx>| -> IntValue<'ctx> {
            let z = b.build_int_compare(IntPredicate::EQ, v, c64(0), "").unwrap();
            let v = b.build_select(z, c64(1), v, "").unwrap().into_int_value();
            b.build_select(used, v, c64(1), "").unwrap().into_int_value()
        };
        // (the innermost dimension in units)
        let dim = ld(i64t, field::DIMS + 8 * d);
        let dim = if d == 0 { b.build_int_unsigned_div(dim, unit, "").unwrap() } else { dim };
        dims.push(b.build_select(used, dim, c64(1), "").unwrap().into_int_value());
        let bx = or1(ld(i16t, field::BOX + 2 * d));
        let bx = if d == 0 { b.build_int_unsigned_div(b.build_int_add(bx, b.build_int_sub(unit, c64(1), "").unwrap(), "").unwrap(), unit, "").unwrap() } else { bx };
        let s = if d == 0 { c64(1) } else { or1(ld(i8t, field::ESTRIDES + d)) };
        let n = match walk {
            // ceil(box / estride) elements (the innermost: all of them)
            Walk::Tile => b.build_int_unsigned_div(b.build_int_add(bx, b.build_int_sub(s, c64(1), "").unwrap(), "").unwrap(), s, "").unwrap(),
            // a row of box[0] elements, four rows
            Walk::Rows4 => [bx, c64(4), c64(1), c64(1), c64(1)][d as usize],
            // channels per pixel, pixels per column
            Walk::Im2col => [bx, bx, c64(1), c64(1), c64(1)][d as usize],
        };
        counts.push(n);
        es.push(s);
        strides.push(if d == 0 { gsize } else { b.build_select(used, ld(i64t, field::STRIDES + 8 * (d - 1)), c64(0), "").unwrap().into_int_value() });
        // (gather4/scatter4: the column and the four rows, whatever the rank)
        c.push(if walk == Walk::Rows4 { coord(d) } else { b.build_select(used, coord(d), c64(0), "").unwrap().into_int_value() });
    }
    // the innermost coordinate in units: a whole number of them
    let c0 = c[0];
    let part = b.build_int_compare(IntPredicate::NE, b.build_int_signed_rem(c0, unit, "").unwrap(), c64(0), "").unwrap();
    guard(part, fail_copy);
    c[0] = b.build_int_signed_div(c0, unit, "").unwrap();
    if walk == Walk::Rows4 {
        // the map's box must be one row
        let rows = ld(i16t, field::BOX + 2);
        guard(b.build_int_compare(IntPredicate::UGT, rows, c64(1), "").unwrap(), fail_copy);
    }
    // innermost coordinate 16-byte aligned; a store's coordinates not negative
    let misaligned = b.build_int_compare(IntPredicate::NE, b.build_and(b.build_int_mul(c[0], gsize, "").unwrap(), c64(15), "").unwrap(), c64(0), "").unwrap();
    let mut neg = i64t.get_context().bool_type().const_zero();
    for d in 0..if walk == Walk::Im2col { 0 } else { 5 } {
        neg = b.build_or(neg, b.build_int_compare(IntPredicate::SLT, c[d], c64(0), "").unwrap(), "").unwrap();
    }
    let is_store = b.build_int_compare(IntPredicate::NE, store, i32t.const_zero(), "").unwrap();
    let bad = b.build_or(misaligned, b.build_and(is_store, neg, "").unwrap(), "").unwrap();
    guard(bad, fail_copy);
    // rows of the innermost dimension: box[0] * size bytes, padded to 16 or to the swizzle
    // span (16 << mode: 32, 64, 128 bytes)
    let span = b.build_select(
        b.build_int_compare(IntPredicate::EQ, swz, c64(0), "").unwrap(),
        c64(0),
        b.build_left_shift(c64(16), swz, "").unwrap(),
        "",
    )
    .unwrap()
    .into_int_value();
    let row = b.build_int_mul(counts[0], esize, "").unwrap();
    let row16 = b.build_and(b.build_int_add(row, c64(15), "").unwrap(), c64(!15), "").unwrap();
    let pitch = b.build_select(b.build_int_compare(IntPredicate::EQ, span, c64(0), "").unwrap(), row16, span, "").unwrap().into_int_value();
    let mut rows = c64(1);
    for d in 1..5 {
        rows = b.build_int_mul(rows, counts[d], "").unwrap();
    }
    let total = b.build_int_mul(rows, counts[0], "").unwrap();
    let soff64 = b.build_int_z_extend(soff, i64t, "").unwrap();
    let end = b.build_int_add(soff64, b.build_int_mul(rows, pitch, "").unwrap(), "").unwrap();
    let over = b.build_int_compare(IntPredicate::UGT, end, b.build_int_z_extend(limit, i64t, "").unwrap(), "").unwrap();
    guard(over, fail_smem);
    // the chunk mask of the swizzle: span / 16 - 1 (0 without one)
    let cmask = b.build_select(b.build_int_compare(IntPredicate::EQ, span, c64(0), "").unwrap(), c64(0), b.build_int_sub(b.build_right_shift(span, c64(4), false, "").unwrap(), c64(1), "").unwrap(), "").unwrap().into_int_value();
    let pre = b.get_insert_block().unwrap();
    let body = ctx.append_basic_block(h, "tma.elem");
    let done = ctx.append_basic_block(h, "tma.done");
    let empty = b.build_int_compare(IntPredicate::EQ, total, c64(0), "").unwrap();
    b.build_conditional_branch(empty, done, body).unwrap();
    b.position_at_end(body);
    let iv = b.build_phi(i64t, "idx").unwrap();
    let idx = iv.as_basic_value().into_int_value();
    // box index j[d] of element idx, its global coordinate, inside the tensor or not
    let mut rest = idx;
    let mut goff = c64(0);
    let mut inside = ctx.bool_type().const_int(1, false);
    let mut j0 = c64(0);
    // im2col: pixel j[1]'s place in the walk, carried from W to H to D to N
    let mut carry = c64(0);
    for d in 0..5 {
        let j = b.build_int_unsigned_rem(rest, counts[d], "").unwrap();
        rest = b.build_int_unsigned_div(rest, counts[d], "").unwrap();
        if d == 0 {
            j0 = j;
        }
        let g = match walk {
            Walk::Rows4 if d == 1 => coord_at(b.build_int_add(j, c64(1), "").unwrap()),
            // (c[2..] hold rows 1-3, not coordinates)
            Walk::Rows4 if d > 1 => c64(0),
            // im2col: j[1] is the pixel, placed by the walk below
            Walk::Im2col if d > 0 => {
                if d == 1 {
                    carry = j;
                }
                continue;
            }
            _ => b.build_int_add(c[d], b.build_int_mul(j, es[d], "").unwrap(), "").unwrap(),
        };
        let ok = b.build_and(b.build_int_compare(IntPredicate::SGE, g, c64(0), "").unwrap(), b.build_int_compare(IntPredicate::SLT, g, dims[d], "").unwrap(), "").unwrap();
        inside = b.build_and(inside, ok, "").unwrap();
        goff = b.build_int_add(goff, b.build_int_mul(g, strides[d], "").unwrap(), "").unwrap();
    }
    if walk == Walk::Im2col {
        // PTX ISA 8.x 5.5.4.1-2: the filter base walks the bounding box [lower, dim + upper) of
        // each spatial dimension (W, H, D: 1..rank-1) by its traversal stride from the base
        // coordinate, then from the lower corner again with a carry into the next dimension;
        // past D (or the last spatial dimension) the carry steps N. The element is at the base
        // plus the im2col offsets (coordinates 5..).
        let rank64 = b.build_int_z_extend(rank, i64t, "").unwrap();
        let last = b.build_int_sub(rank64, c64(1), "").unwrap();
        for d in 1..4u64 {
            let spatial = b.build_int_compare(IntPredicate::ULT, c64(d as i64), last, "").unwrap();
            let lo = b.build_int_s_extend(b.build_load(i16t, at(field::LOWER + 2 * (d - 1)), "").unwrap().into_int_value(), i64t, "").unwrap();
            let up = b.build_int_s_extend(b.build_load(i16t, at(field::UPPER + 2 * (d - 1)), "").unwrap().into_int_value(), i64t, "").unwrap();
            let hi = b.build_int_add(dims[d as usize], up, "").unwrap();
            let st = es[d as usize];
            let ceil_div = |x: IntValue<'ctx>| -> IntValue<'ctx> {
                let q = b.build_int_signed_div(b.build_int_add(x, b.build_int_sub(st, c64(1), "").unwrap(), "").unwrap(), st, "").unwrap();
                b.build_select(b.build_int_compare(IntPredicate::SLT, q, c64(1), "").unwrap(), c64(1), q, "").unwrap().into_int_value()
            };
            let base = c[d as usize];
            // pixels of the first (partial) run from the base, of every later run from lo
            let first = ceil_div(b.build_int_sub(hi, base, "").unwrap());
            let per = ceil_div(b.build_int_sub(hi, lo, "").unwrap());
            let in_first = b.build_int_compare(IntPredicate::ULT, carry, first, "").unwrap();
            let q = b.build_int_sub(carry, first, "").unwrap();
            let q = b.build_select(in_first, c64(0), q, "").unwrap().into_int_value();
            let pos_first = b.build_int_add(base, b.build_int_mul(carry, st, "").unwrap(), "").unwrap();
            let pos_later = b.build_int_add(lo, b.build_int_mul(b.build_int_unsigned_rem(q, per, "").unwrap(), st, "").unwrap(), "").unwrap();
            let pos = b.build_select(in_first, pos_first, pos_later, "").unwrap().into_int_value();
            let out = b.build_select(in_first, c64(0), b.build_int_add(c64(1), b.build_int_unsigned_div(q, per, "").unwrap(), "").unwrap(), "").unwrap().into_int_value();
            let off = b.build_int_z_extend(b.build_load(i32t, unsafe { b.build_in_bounds_gep(i32t, cs, &[i32t.const_int(4 + d, false)], "").unwrap() }, "").unwrap().into_int_value(), i64t, "").unwrap();
            let g = b.build_int_add(pos, off, "").unwrap();
            let ok = b.build_and(b.build_int_compare(IntPredicate::SGE, g, c64(0), "").unwrap(), b.build_int_compare(IntPredicate::SLT, g, dims[d as usize], "").unwrap(), "").unwrap();
            // a dimension past the spatial ones passes the carry on untouched
            inside = b.build_and(inside, b.build_select(spatial, ok, ctx.bool_type().const_int(1, false), "").unwrap().into_int_value(), "").unwrap();
            goff = b.build_select(spatial, b.build_int_add(goff, b.build_int_mul(g, strides[d as usize], "").unwrap(), "").unwrap(), goff, "").unwrap().into_int_value();
            carry = b.build_select(spatial, out, carry, "").unwrap().into_int_value();
        }
        // N: the last dimension, stepped by the carry
        let mut n_stride = c64(0);
        let mut n_dim = c64(1);
        let mut n_base = c64(0);
        for d in 2..5u64 {
            let is_n = b.build_int_compare(IntPredicate::EQ, c64(d as i64), last, "").unwrap();
            n_stride = b.build_select(is_n, strides[d as usize], n_stride, "").unwrap().into_int_value();
            n_dim = b.build_select(is_n, dims[d as usize], n_dim, "").unwrap().into_int_value();
            n_base = b.build_select(is_n, c[d as usize], n_base, "").unwrap().into_int_value();
        }
        let g = b.build_int_add(n_base, carry, "").unwrap();
        let ok = b.build_and(b.build_int_compare(IntPredicate::SGE, g, c64(0), "").unwrap(), b.build_int_compare(IntPredicate::SLT, g, n_dim, "").unwrap(), "").unwrap();
        inside = b.build_and(inside, ok, "").unwrap();
        goff = b.build_int_add(goff, b.build_int_mul(g, n_stride, "").unwrap(), "").unwrap();
    }
    let r = b.build_int_unsigned_div(idx, counts[0], "").unwrap();
    let a = b.build_int_add(b.build_int_add(soff64, b.build_int_mul(r, pitch, "").unwrap(), "").unwrap(), b.build_int_mul(j0, esize, "").unwrap(), "").unwrap();
    let x = b.build_left_shift(b.build_and(b.build_right_shift(a, c64(7), false, "").unwrap(), cmask, "").unwrap(), c64(4), "").unwrap();
    let a = b.build_xor(a, x, "").unwrap();
    let sp = unsafe { b.build_gep(i8t, smem, &[a], "").unwrap() };
    let gaddr = b.build_int_add(base, goff, "").unwrap();
    let gp = b.build_int_to_ptr(gaddr, ptr_t, "").unwrap();
    let copy = ctx.append_basic_block(h, "tma.copy");
    let outside = ctx.append_basic_block(h, "tma.outside");
    let next = ctx.append_basic_block(h, "tma.next");
    b.build_conditional_branch(inside, copy, outside).unwrap();
    b.position_at_end(copy);
    match red {
        None => {
            // a unit's `gsize` bytes (the padding after them in shared memory zeroed by a load:
            // the ISA leaves it undefined); a `.b6x16_p32` store packs the low 6 bits of each of
            // 16 bytes (`.b6p2x16`) into 12
            let (to, from) = (b.build_select(is_store, gp, sp, "").unwrap().into_pointer_value(), b.build_select(is_store, sp, gp, "").unwrap().into_pointer_value());
            let pack = ctx.append_basic_block(h, "tma.pack6");
            let plain = ctx.append_basic_block(h, "tma.plain");
            b.build_conditional_branch(b.build_and(is_store, t15, "").unwrap(), pack, plain).unwrap();
            b.position_at_end(plain);
            b.build_memcpy(to, 1, from, 1, gsize).unwrap();
            let pad = b.build_int_sub(esize, gsize, "").unwrap();
            let tail = unsafe { b.build_gep(i8t, sp, &[gsize], "").unwrap() };
            let load_pad = b.build_and(b.build_not(is_store, "").unwrap(), b.build_int_compare(IntPredicate::NE, pad, c64(0), "").unwrap(), "").unwrap();
            let pad = b.build_select(load_pad, pad, c64(0), "").unwrap().into_int_value();
            b.build_memset(tail, 1, i8t.const_zero(), pad).unwrap();
            b.build_unconditional_branch(next).unwrap();
            b.position_at_end(pack);
            let i128t = ctx.i128_type();
            let mut bits = i128t.const_zero();
            for k in 0..16u64 {
                let q = unsafe { b.build_gep(i8t, sp, &[c64(k as i64)], "").unwrap() };
                let v = b.build_load(i8t, q, "").unwrap().into_int_value();
                let v = b.build_and(b.build_int_z_extend(v, i128t, "").unwrap(), i128t.const_int(63, false), "").unwrap();
                bits = b.build_or(bits, b.build_left_shift(v, i128t.const_int(6 * k, false), "").unwrap(), "").unwrap();
            }
            let lo = b.build_int_truncate(bits, i64t, "").unwrap();
            let hi = b.build_int_truncate(b.build_right_shift(bits, i128t.const_int(64, false), false, "").unwrap(), i32t, "").unwrap();
            let st = b.build_store(gp, lo).unwrap();
            let _ = st.set_alignment(1);
            let gp8 = unsafe { b.build_gep(i8t, gp, &[c64(8)], "").unwrap() };
            let st = b.build_store(gp8, hi).unwrap();
            let _ = st.set_alignment(1);
            b.build_unconditional_branch(next).unwrap();
        }
        Some(op) => {
            // the element type from the map (CUtensorMapDataType numbering): one block per
            // type this reduction has; others end the copy with -4
            let dtype = ld(i8t, field::DTYPE);
            let mut cases = Vec::new();
            for (code, ty) in [(2u64, RedTy::U32), (3, RedTy::S32), (4, RedTy::U64), (5, RedTy::S64), (6, RedTy::F16), (7, RedTy::F32), (8, RedTy::F64), (9, RedTy::BF16), (10, RedTy::F32), (11, RedTy::F32), (12, RedTy::F32)] {
                if !red_allowed(op, ty) {
                    continue;
                }
                let bb = ctx.append_basic_block(h, "tma.red");
                b.position_at_end(bb);
                red_elem(e, op, ty, gp, sp);
                e.b.build_unconditional_branch(next).unwrap();
                cases.push((i64t.const_int(code, false), bb));
            }
            let b = &e.b;
            let bad = ctx.append_basic_block(h, "tma.red.type");
            b.position_at_end(bad);
            b.build_return(Some(&c64(-4))).unwrap();
            b.position_at_end(copy);
            b.build_switch(dtype, bad, &cases).unwrap();
        }
    }
    let b = &e.b;
    b.position_at_end(outside);
    // a load fills the element (zeros, or 0xf7 0x7f repeated); a store leaves it out
    let fill_here = ctx.append_basic_block(h, "tma.fill");
    b.build_conditional_branch(is_store, next, fill_here).unwrap();
    b.position_at_end(fill_here);
    let nan = b.build_int_compare(IntPredicate::NE, fill_nan, c64(0), "").unwrap();
    let pattern = b.build_select(nan, c64(0x7ff7_7ff7_7ff7_7ff7), c64(0), "").unwrap().into_int_value();
    let i128t = ctx.i128_type();
    let wide = b.build_int_z_extend(pattern, i128t, "").unwrap();
    let wide = b.build_or(wide, b.build_left_shift(wide, i128t.const_int(64, false), "").unwrap(), "").unwrap();
    b.build_store(tmp, wide).unwrap();
    b.build_memcpy(sp, 1, tmp, 1, esize).unwrap();
    b.build_unconditional_branch(next).unwrap();
    b.position_at_end(next);
    let idx1 = b.build_int_add(idx, c64(1), "").unwrap();
    let more = b.build_int_compare(IntPredicate::ULT, idx1, total, "").unwrap();
    b.build_conditional_branch(more, body, done).unwrap();
    iv.add_incoming(&[(&c64(0), pre), (&idx1, next)]);
    b.position_at_end(done);
    let bytes = b.build_int_mul(total, esize, "").unwrap();
    b.build_return(Some(&bytes)).unwrap();
    e.end_helper(saved);
    h
}

/// The NVPTX direction: LLVM 19 has no intrinsics for these copies, so the instruction itself
/// as inline PTX, each address as a 64-bit register of its space, the tensor map's address as
/// a generic one, coordinates and sizes as 32-bit registers.
fn nvptx<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    use inkwell::values::BasicValueEnum;
    let ctx = e.ctx();
    let i64t = ctx.i64_type();
    let mut args: Vec<BasicValueEnum<'ctx>> = Vec::new();
    let mut cons: Vec<&str> = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    let shared_first = i.mods.iter().position(|m| m.starts_with("shared")) < i.mods.iter().position(|m| *m == "global");
    let tensor = i.has_mod("tensor");
    let multicast = i.has_mod("multicast::cluster");
    for (k, op) in i.operands.iter().enumerate() {
        let slot = |args: &mut Vec<BasicValueEnum<'ctx>>, cons: &mut Vec<&str>, v: BasicValueEnum<'ctx>, c: &'static str| {
            args.push(v);
            cons.push(c);
            format!("${}", args.len() - 1)
        };
        match op {
            Operand::Mem(_) => {
                // which space: the destination of a copy into shared memory and the mbarrier
                // are shared; a bulk copy's other side is global (or shared for s2s)
                let space = match (tensor, shared_first, k) {
                    (_, _, 2) | (_, _, 3) => Some(StateSpace::Shared),
                    (true, _, _) => Some(StateSpace::Shared),
                    (false, true, 0) => Some(StateSpace::Shared),
                    (false, true, _) => if i.has_mod("global") { Some(StateSpace::Global) } else { Some(StateSpace::Shared) },
                    (false, false, 0) => Some(StateSpace::Global),
                    (false, false, _) => Some(StateSpace::Shared),
                };
                let p = e.address(op, space)?;
                let v = e.b.build_ptr_to_int(p, i64t, "").unwrap().into();
                let n = slot(&mut args, &mut cons, v, "l");
                parts.push(format!("[{n}]"));
            }
            Operand::MemList(items, _) => {
                let m = e.read_int(&items[0], Type::B64)?.into();
                let mut t = slot(&mut args, &mut cons, m, "l");
                let cs: Vec<&'a Operand<'a>> = match items.get(1) {
                    Some(Operand::Vector(cs, _)) => cs.iter().collect(),
                    Some(c) => vec![c],
                    None => vec![],
                };
                let mut names = Vec::new();
                for c in cs {
                    let v = e.read_int(c, Type::S32)?.into();
                    names.push(slot(&mut args, &mut cons, v, "r"));
                }
                t = format!("[{t}, {{{}}}]", names.join(", "));
                parts.push(t);
            }
            Operand::Vector(os, _) => {
                // the im2col offsets: 16-bit values
                let mut names = Vec::new();
                for o in os.iter() {
                    let v = e.read_int(o, Type::B16)?.into();
                    names.push(slot(&mut args, &mut cons, v, "h"));
                }
                parts.push(format!("{{{}}}", names.join(", ")));
            }
            _ => {
                // size (u32), a multicast mask (b16), a cache policy (b64), a group count
                let last_policy = i.has_mod("L2::cache_hint") && k + 1 == i.operands.len();
                let (ty, c) = if last_policy {
                    (Type::B64, "l")
                } else if multicast && k + 1 == i.operands.len() - usize::from(i.has_mod("L2::cache_hint")) && k >= 3 {
                    (Type::B16, "h")
                } else {
                    (Type::U32, "r")
                };
                if let Operand::Imm(_) = op {
                    if i.has_mod("wait_group") {
                        let v = e.read_int(op, Type::U32)?.get_zero_extended_constant().unwrap_or(0);
                        parts.push(v.to_string());
                        continue;
                    }
                }
                let v = e.read_int(op, ty)?.into();
                parts.push(slot(&mut args, &mut cons, v, c));
            }
        }
    }
    // (`.shared::cta`/`.shared::cluster` reach here as `.shared`: the destination of a copy
    // into shared memory is written `.shared::cluster`, a source `.shared::cta`.)
    let mut seen = 0;
    let mods: Vec<&str> = i
        .mods
        .iter()
        .map(|m| match *m {
            "shared" => {
                seen += 1;
                if shared_first && seen == 1 {
                    "shared::cluster"
                } else {
                    "shared::cta"
                }
            }
            m => m,
        })
        .collect();
    let text = std::iter::once(i.opcode.name).chain(mods.iter().copied()).collect::<Vec<_>>().join(".");
    let asm = if parts.is_empty() { format!("{text};") } else { format!("{text} {};", parts.join(", ")) };
    let mut cons = cons.join(",");
    cons.push_str(if cons.is_empty() { "~{memory}" } else { ",~{memory}" });
    super::nvvm::inline_ptx(e, None, &asm, &cons, &args);
    Ok(())
}

/// Bytes of an element of each `tensormap.replace` `.elemtype` code: 0 u8, 1 u16, 2 u32,
/// 3 s32, 4 u64, 5 s64, 6 f16, 7 f32, 8 f32.ftz, 9 f64, 10 bf16, 11 tf32, 12 tf32.ftz (the
/// PTX numbering, which differs from `CUtensorMapDataType` from 8 on; an H200 copies 4, 8, 2
/// and 4 bytes per element for 8, 9, 10 and 11); for 13 .b4x16, 14 .b4x16_p64 and 15
/// .b6x16_p32 the shared-memory bytes of a unit (`tensor_map::unit_of`).
const ELEMTYPE_BYTES: [u64; 16] = [1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4, 1, 16, 16];
/// The same codes as `CUtensorMapDataType`, ptxr's map's DTYPE field.
const ELEMTYPE_CU: [u64; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 10, 8, 9, 11, 12, 13, 14, 15];

/// PTX ISA 8.x 9.7.9.26 tensormap.replace (one field of a tensor map in global or shared
/// memory, in ptxr's encoding: a map made from zeros becomes one of ptxr's), 9.7.9.27
/// tensormap.cp_fenceproxy (copies a map from shared to global memory) and
/// `fence.proxy.tensormap::generic` (nothing to order on a CPU).
fn tensormap<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ctx = e.ctx();
    let (i8t, i16t, i32t, i64t) = (ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type());
    if e.m.nvptx {
        return nvptx_tensormap(e, i);
    }
    if i.opcode.name == "fence" {
        return Ok(());
    }
    if i.has_mod("cp_fenceproxy") {
        let d = e.address(&i.operands[0], Some(StateSpace::Global))?;
        let s = e.address(&i.operands[1], Some(StateSpace::Shared))?;
        let n = e.read_int(&i.operands[2], Type::U32)?;
        e.b.build_memmove(d, 1, s, 1, e.b.build_int_z_extend(n, i64t, "").unwrap()).unwrap();
        return Ok(());
    }
    let space = if i.has_mod("shared") || i.has_mod("shared::cta") { Some(StateSpace::Shared) } else { None };
    let map = e.address(&i.operands[0], space)?;
    let field_name = i.mods.get(2).copied().unwrap_or("");
    let (ord, val_op) = if i.operands.len() == 3 { (Some(e.read_int(&i.operands[1], Type::U32)?), &i.operands[2]) } else { (None, &i.operands[1]) };
    let wide = i.has_mod("b64");
    let val = e.read_int(val_op, if wide { Type::B64 } else { Type::B32 })?;
    let val = e.b.build_int_z_extend_or_bit_cast(val, i64t, "").unwrap();
    let put = |e: &mut FnEmitter<'ctx, 'a, '_>, off: IntValue<'ctx>, t: inkwell::types::IntType<'ctx>, v: IntValue<'ctx>| {
        let p = unsafe { e.b.build_gep(i8t, map, &[off], "").unwrap() };
        let v = e.b.build_int_truncate_or_bit_cast(v, t, "").unwrap();
        let st = e.b.build_store(p, v).unwrap();
        let _ = st.set_alignment(1);
    };
    let c64 = |v: u64| i64t.const_int(v, false);
    put(e, c64(field::MAGIC), i32t, c64(MAGIC as u64));
    // the ordinal's field: base + stride * ord (ordinals past the rank's five are ignored, as
    // they would address other fields)
    let at = |e: &mut FnEmitter<'ctx, 'a, '_>, base: u64, stride: u64, max: u64| -> IntValue<'ctx> {
        let o = e.b.build_int_z_extend(ord.unwrap(), i64t, "").unwrap();
        let o = e.b.build_select(e.b.build_int_compare(IntPredicate::ULT, o, c64(max), "").unwrap(), o, c64(max - 1), "").unwrap().into_int_value();
        e.b.build_int_add(c64(base), e.b.build_int_mul(o, c64(stride), "").unwrap(), "").unwrap()
    };
    match field_name {
        "global_address" => put(e, c64(field::ADDR), i64t, val),
        // the rank field holds rank - 1
        "rank" => put(e, c64(field::RANK), i8t, e.b.build_int_add(val, c64(1), "").unwrap()),
        "box_dim" => {
            let o = at(e, field::BOX, 2, 5);
            put(e, o, i16t, val)
        }
        "global_dim" => {
            let o = at(e, field::DIMS, 8, 5);
            put(e, o, i64t, val)
        }
        "global_stride" => {
            let o = at(e, field::STRIDES, 8, 4);
            put(e, o, i64t, val)
        }
        "element_stride" => {
            let o = at(e, field::ESTRIDES, 1, 5);
            put(e, o, i8t, val)
        }
        "elemtype" => {
            let code = val.get_zero_extended_constant().unwrap_or(u64::MAX);
            if code as usize >= ELEMTYPE_BYTES.len() {
                return Err(e.err(val_op.span(), "tensor map element type: ptxr runs the codes 0 to 15 (.u8 to .b6x16_p32), given as an immediate"));
            }
            put(e, c64(field::DTYPE), i8t, c64(ELEMTYPE_CU[code as usize]));
            put(e, c64(field::ESIZE), i8t, c64(ELEMTYPE_BYTES[code as usize]));
        }
        "interleave_layout" => put(e, c64(field::INTERLEAVE), i8t, val),
        "swizzle_mode" => put(e, c64(field::SWIZZLE), i8t, val),
        "fill_mode" => put(e, c64(field::FILL), i8t, val),
        // swizzle atomicity (sm_100 swizzles in 32-byte atoms): not kept
        _ => {}
    }
    Ok(())
}

fn nvptx_tensormap<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    use inkwell::values::BasicValueEnum;
    let i64t = e.ctx().i64_type();
    let mut args: Vec<BasicValueEnum<'ctx>> = Vec::new();
    let mut cons: Vec<&str> = Vec::new();
    let mut parts = Vec::new();
    let spaces: Vec<Option<StateSpace>> = if i.has_mod("cp_fenceproxy") {
        vec![Some(StateSpace::Global), Some(StateSpace::Shared)]
    } else if i.has_mod("shared") || i.has_mod("shared::cta") {
        vec![Some(StateSpace::Shared)]
    } else {
        vec![None]
    };
    let wide = i.has_mod("b64");
    let n = i.operands.len();
    for (k, op) in i.operands.iter().enumerate() {
        match op {
            Operand::Mem(_) => {
                let p = e.address(op, spaces.get(k).copied().flatten())?;
                args.push(e.b.build_ptr_to_int(p, i64t, "").unwrap().into());
                cons.push("l");
                parts.push(format!("[${}]", args.len() - 1));
            }
            Operand::Imm(_) => {
                let v = e.read_int(op, Type::U32)?.get_zero_extended_constant().unwrap_or(0);
                parts.push(v.to_string());
            }
            _ => {
                let (t, c) = if wide && k + 1 == n { (Type::B64, "l") } else { (Type::B32, "r") };
                args.push(e.read_int(op, t)?.into());
                cons.push(c);
                parts.push(format!("${}", args.len() - 1));
            }
        }
    }
    let mods: Vec<&str> = i.mods.iter().map(|m| if *m == "shared" { "shared::cta" } else { m }).collect();
    let text = std::iter::once(i.opcode.name).chain(mods.iter().copied()).collect::<Vec<_>>().join(".");
    let asm = if parts.is_empty() { format!("{text};") } else { format!("{text} {};", parts.join(", ")) };
    let mut cons = cons.join(",");
    cons.push_str(if cons.is_empty() { "~{memory}" } else { ",~{memory}" });
    super::nvvm::inline_ptx(e, None, &asm, &cons, &args);
    Ok(())
}

/// The element types of `cp.reduce.async.bulk`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RedTy {
    F16,
    BF16,
    B32,
    U32,
    S32,
    B64,
    U64,
    S64,
    F32,
    F64,
}

impl RedTy {
    fn parse(s: &str) -> Option<RedTy> {
        Some(match s {
            "f16" => RedTy::F16,
            "bf16" => RedTy::BF16,
            "b32" => RedTy::B32,
            "u32" => RedTy::U32,
            "s32" => RedTy::S32,
            "b64" => RedTy::B64,
            "u64" => RedTy::U64,
            "s64" => RedTy::S64,
            "f32" => RedTy::F32,
            "f64" => RedTy::F64,
            _ => return None,
        })
    }
    fn bytes(self) -> u64 {
        match self {
            RedTy::F16 | RedTy::BF16 => 2,
            RedTy::B32 | RedTy::U32 | RedTy::S32 | RedTy::F32 => 4,
            _ => 8,
        }
    }
    fn name(self) -> &'static str {
        match self {
            RedTy::F16 => "f16",
            RedTy::BF16 => "bf16",
            RedTy::B32 => "b32",
            RedTy::U32 => "u32",
            RedTy::S32 => "s32",
            RedTy::B64 => "b64",
            RedTy::U64 => "u64",
            RedTy::S64 => "s64",
            RedTy::F32 => "f32",
            RedTy::F64 => "f64",
        }
    }
}

fn red_op(i: &Instr) -> Option<&'static str> {
    ["add", "min", "max", "inc", "dec", "and", "or", "xor"].into_iter().find(|op| i.has_mod(op))
}

/// Which types each reduction takes (PTX ISA 8.x 9.7.9.25.4.2): add on f16/bf16 (.noftz),
/// u32, s32, u64, f32, f64 (and s64 from a tensor map); min/max on f16, bf16, u32, s32, u64,
/// s64; inc/dec on u32; and/or/xor on b32/b64 (or any 32/64-bit integer type of a map).
fn red_allowed(op: &str, ty: RedTy) -> bool {
    use RedTy::*;
    match op {
        "add" => matches!(ty, F16 | BF16 | U32 | S32 | U64 | S64 | F32 | F64),
        "min" | "max" => matches!(ty, F16 | BF16 | U32 | S32 | U64 | S64),
        "inc" | "dec" => ty == U32,
        _ => matches!(ty, B32 | B64 | U32 | S32 | U64 | S64),
    }
}

fn check_red(e: &FnEmitter, i: &Instr, op: &str, ty: RedTy) -> R<()> {
    if !red_allowed(op, ty) || (matches!(ty, RedTy::F16 | RedTy::BF16) && op == "add" && !i.has_mod("noftz")) {
        return Err(e.err(i.opcode.span, format!("`cp.reduce.async.bulk` has no .{op}{} on .{}", if i.has_mod("noftz") { ".noftz" } else { "" }, ty.name())));
    }
    Ok(())
}

/// `*dst = *dst op *src` for one element of type `ty` (unaligned accesses).
fn red_elem<'ctx>(e: &FnEmitter<'ctx, '_, '_>, op: &str, ty: RedTy, dst: inkwell::values::PointerValue<'ctx>, src: inkwell::values::PointerValue<'ctx>) {
    let ctx = e.ctx();
    let b = &e.b;
    let it = match ty.bytes() {
        2 => ctx.i16_type(),
        4 => ctx.i32_type(),
        _ => ctx.i64_type(),
    };
    let load = |p: inkwell::values::PointerValue<'ctx>| {
        let v = b.build_load(it, p, "").unwrap().into_int_value();
        let _ = v.as_instruction().unwrap().set_alignment(1);
        v
    };
    let (x, y) = (load(dst), load(src));
    let signed = matches!(ty, RedTy::S32 | RedTy::S64);
    let r: IntValue<'ctx> = match (op, ty) {
        ("add", RedTy::F32) | ("add", RedTy::F64) => {
            let ft: inkwell::types::FloatType = if ty == RedTy::F32 { ctx.f32_type() } else { ctx.f64_type() };
            let s = b.build_float_add(b.build_bit_cast(x, ft, "").unwrap().into_float_value(), b.build_bit_cast(y, ft, "").unwrap().into_float_value(), "").unwrap();
            let s = if ty == RedTy::F32 { super::ops_float::canon_nan(e, s) } else { s };
            b.build_bit_cast(s, it, "").unwrap().into_int_value()
        }
        // f16: the sum is exact in f64, then one rounding; bf16: ptxr's correctly rounded add
        ("add", RedTy::F16) => {
            let s = b.build_float_add(super::ops_half::h2d(e, x), super::ops_half::h2d(e, y), "").unwrap();
            e.resize(super::ops_half::round_f16(e, s, super::ops_float::Rnd::N), 16, false)
        }
        ("add", RedTy::BF16) => e.resize(super::ops_half::bf16_add(e, x, y), 16, false),
        ("add", _) => b.build_int_add(x, y, "").unwrap(),
        ("min" | "max", RedTy::F16 | RedTy::BF16) => {
            // compare the values (as f64); -0 < +0; a NaN operand loses to the other
            let to = |v: IntValue<'ctx>| if ty == RedTy::F16 { super::ops_half::h2d(e, v) } else { b.build_float_ext(b.build_bit_cast(b.build_left_shift(b.build_int_z_extend(v, ctx.i32_type(), "").unwrap(), ctx.i32_type().const_int(16, false), "").unwrap(), ctx.f32_type(), "").unwrap().into_float_value(), ctx.f64_type(), "").unwrap() };
            let (fx, fy) = (to(x), to(y));
            let pred = if op == "min" { inkwell::FloatPredicate::OLT } else { inkwell::FloatPredicate::OGT };
            let take_y = b.build_or(b.build_float_compare(pred, fy, fx, "").unwrap(), b.build_float_compare(inkwell::FloatPredicate::UNO, fx, fx, "").unwrap(), "").unwrap();
            b.build_select(take_y, y, x, "").unwrap().into_int_value()
        }
        ("min", _) => b.build_select(b.build_int_compare(if signed { IntPredicate::SLT } else { IntPredicate::ULT }, y, x, "").unwrap(), y, x, "").unwrap().into_int_value(),
        ("max", _) => b.build_select(b.build_int_compare(if signed { IntPredicate::SGT } else { IntPredicate::UGT }, y, x, "").unwrap(), y, x, "").unwrap().into_int_value(),
        // inc: x >= y ? 0 : x + 1; dec: x == 0 || x > y ? y : x - 1 (as atom.inc/dec)
        ("inc", _) => {
            let wrap = b.build_int_compare(IntPredicate::UGE, x, y, "").unwrap();
            b.build_select(wrap, it.const_zero(), b.build_int_add(x, it.const_int(1, false), "").unwrap(), "").unwrap().into_int_value()
        }
        ("dec", _) => {
            let reset = b.build_or(b.build_int_compare(IntPredicate::EQ, x, it.const_zero(), "").unwrap(), b.build_int_compare(IntPredicate::UGT, x, y, "").unwrap(), "").unwrap();
            b.build_select(reset, y, b.build_int_sub(x, it.const_int(1, false), "").unwrap(), "").unwrap().into_int_value()
        }
        ("and", _) => b.build_and(x, y, "").unwrap(),
        ("or", _) => b.build_or(x, y, "").unwrap(),
        _ => b.build_xor(x, y, "").unwrap(),
    };
    let st = b.build_store(dst, r).unwrap();
    let _ = st.set_alignment(1);
}

/// `void name(ptr dst, ptr src, i64 n)`: the reduction over n elements of `ty`.
fn red_loop<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, op: &str, ty: RedTy) -> FunctionValue<'ctx> {
    let name = format!("__ptxr_bulk_reduce.{op}.{}", ty.name());
    if let Some(h) = e.m.module.get_function(&name) {
        return h;
    }
    let ctx = e.ctx();
    let (i8t, i64t) = (ctx.i8_type(), ctx.i64_type());
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let (h, saved) = e.begin_helper(&name, ctx.void_type().fn_type(&[ptr_t.into(), ptr_t.into(), i64t.into()], false));
    let entry = e.b.get_insert_block().unwrap();
    let body = ctx.append_basic_block(h, "red");
    let done = ctx.append_basic_block(h, "done");
    let (d, s, n) = (h.get_nth_param(0).unwrap().into_pointer_value(), h.get_nth_param(1).unwrap().into_pointer_value(), h.get_nth_param(2).unwrap().into_int_value());
    let empty = e.b.build_int_compare(IntPredicate::EQ, n, i64t.const_zero(), "").unwrap();
    e.b.build_conditional_branch(empty, done, body).unwrap();
    e.b.position_at_end(body);
    let iv = e.b.build_phi(i64t, "k").unwrap();
    let k = iv.as_basic_value().into_int_value();
    let off = e.b.build_int_mul(k, i64t.const_int(ty.bytes(), false), "").unwrap();
    let dp = unsafe { e.b.build_gep(i8t, d, &[off], "").unwrap() };
    let sp = unsafe { e.b.build_gep(i8t, s, &[off], "").unwrap() };
    red_elem(e, op, ty, dp, sp);
    let k1 = e.b.build_int_add(k, i64t.const_int(1, false), "").unwrap();
    let more = e.b.build_int_compare(IntPredicate::ULT, k1, n, "").unwrap();
    let end = e.b.get_insert_block().unwrap();
    e.b.build_conditional_branch(more, body, done).unwrap();
    iv.add_incoming(&[(&i64t.const_zero(), entry), (&k1, end)]);
    e.b.position_at_end(done);
    e.b.build_return(None).unwrap();
    e.end_helper(saved);
    h
}

/// PTX 8.6 (sm_100) clusterlaunchcontrol, a persistent kernel's way of taking over the work
/// of clusters that have not started:
/// - `try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128
///   [addr], [mbar]`: asks the runtime to cancel the launch of a cluster not yet started
///   (`HostFns::try_cancel`, slot 8: the runtime starts clusters from a counter that the
///   request takes from too, so that each cluster runs exactly once, launched or taken over)
///   and writes the 16-byte response to `addr`, then completes 16 bytes of transactions on
///   the mbarrier `mbar`; with `.multicast::cluster::all`, at the same offsets in every CTA
///   of the cluster. The response is ptxr's: the first CTA's ctaid x, y, z and 1, or zeros
///   (nothing cancelled). The request completes before the next instruction.
/// - `query_cancel.is_canceled.pred.b128 p, handle`: whether it cancelled one;
/// - `query_cancel.get_first_ctaid{::x,::y,::z}.b32.b128 d, handle` and
///   `query_cancel.get_first_ctaid.v4.b32.b128 {x, y, z, w}, handle`: the first ctaid of the
///   cancelled cluster (w: 0; undefined when nothing was cancelled, as on a GPU).
fn cluster_launch_control<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t, i128t) = (ctx.i32_type(), ctx.i64_type(), ctx.i128_type());
    let ops = &i.operands;
    if i.has_mod("query_cancel") {
        let h = e.read_int(&ops[1], Type::B128)?;
        let word = |e: &mut FnEmitter<'ctx, 'a, '_>, k: u64| {
            let w = e.b.build_right_shift(h, i128t.const_int(32 * k, false), false, "").unwrap();
            e.b.build_int_truncate(w, i32t, "").unwrap()
        };
        if i.has_mod("is_canceled") {
            let w = word(e, 3);
            let p = e.b.build_int_compare(IntPredicate::NE, w, i32t.const_zero(), "").unwrap();
            return e.write(&ops[0], Type::Pred, p.into());
        }
        if let Some(k) = ["get_first_ctaid::x", "get_first_ctaid::y", "get_first_ctaid::z"].iter().position(|m| i.has_mod(m)) {
            let w = word(e, k as u64);
            return e.write(&ops[0], Type::B32, w.into());
        }
        let Operand::Vector(ds, _) = &ops[0] else {
            return Err(e.err(i.span, "`clusterlaunchcontrol.query_cancel.get_first_ctaid.v4` writes a vector of four registers"));
        };
        if ds.len() != 4 {
            return Err(e.err(ops[0].span(), "`.v4` needs a vector of four registers"));
        }
        for (k, d) in ds.iter().enumerate() {
            let w = if k < 3 { word(e, k as u64) } else { i32t.const_zero() };
            e.write(d, Type::B32, w.into())?;
        }
        return Ok(());
    }
    let space = if i.has_mod("shared::cta") { Some(StateSpace::Shared) } else { None };
    let addr = e.address(&ops[0], space)?;
    let mbar = e.address(&ops[1], space)?;
    let resp = e.alloca_b.build_alloca(i128t, "clc.response").unwrap();
    if let Some(inst) = resp.as_instruction() {
        let _ = inst.set_alignment(16);
    }
    e.try_cancel(resp);
    let v = e.b.build_load(i128t, resp, "").unwrap();
    e.check_access(addr, 16, true, space, false, false);
    let sixteen = i64t.const_int(16, false);
    let deliver = |e: &mut FnEmitter<'ctx, 'a, '_>, delta: IntValue<'ctx>| {
        let a = offset_ptr(e, addr, delta);
        let st = e.b.build_store(a, v).unwrap();
        let _ = st.set_alignment(16);
        let m = offset_ptr(e, mbar, delta);
        super::ops_atomic::mbarrier_complete_tx(e, m, sixteen);
    };
    if !i.has_mod("multicast::cluster::all") {
        deliver(e, i64t.const_zero());
        return Ok(());
    }
    // Every CTA of the cluster (at most 16), rank 0 up: the same offsets in each one's window.
    let mut size = i32t.const_int(1, false);
    for k in 0..3 {
        let d = e.cluster_u32(super::abi::cluster_field::DIMS, Some(k));
        size = e.b.build_int_mul(size, d, "").unwrap();
    }
    let all = e.b.build_int_sub(e.b.build_left_shift(i32t.const_int(1, false), size, "").unwrap(), i32t.const_int(1, false), "").unwrap();
    each_cta_of(e, all, |e, delta| {
        deliver(e, delta);
        Ok(())
    })
}
