//! Bit manipulation and special integer instructions (9.7.1.7, 9.7.1.14-22, 9.7.7.6-7,
//! 9.7.8.6): sad, popc, clz, bfind, fns, brev, bfe, bfi, dp4a, dp2a, lop3, shf, prmt; bmsk
//! (PTX 7.6).

use super::func::{types_of, FnEmitter, R};
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::values::IntValue;
use inkwell::IntPredicate;

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    let tys = types_of(i);
    let Some(&ty) = tys.last() else { return Ok(false) };
    if ty.is_float() {
        return Ok(false);
    }
    match i.opcode.name {
        "sad" => sad(e, i, ty),
        "popc" | "clz" => popc_clz(e, i, ty),
        "bfind" => bfind(e, i, ty),
        "fns" => fns(e, i),
        "brev" => {
            // PTX ISA 9.7.1.18 brev
            let a = e.read_int(&i.operands[1], ty)?;
            let r = e.intrinsic("llvm.bitreverse", &[a.get_type().into()], &[a.into()]);
            e.write(&i.operands[0], ty, r)
        }
        "bfe" => bfe(e, i, ty),
        "bfi" => bfi(e, i, ty),
        "bmsk" => bmsk(e, i),
        "dp4a" | "dp2a" => dp(e, i, &tys),
        "lop3" => lop3(e, i),
        "shf" => shf(e, i),
        "prmt" => prmt(e, i),
        _ => return Ok(false),
    }
    .map(|_| true)
}

/// PTX ISA 7.6 bmsk.{clamp,wrap}.b32 d, a, b: the mask of b bits from bit a. `.wrap` takes
/// a and b modulo 32, `.clamp` limits each to 32; then d = (~0 << a) & ~(~0 << (a + b)), a
/// shift by 32 or more giving 0. So the mask is 0 when b (as wrapped) is 0 or, with .clamp,
/// when a >= 32, and it stops at bit 31.
fn bmsk<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let a = e.read_int(&i.operands[1], Type::B32)?;
    let b = e.read_int(&i.operands[2], Type::B32)?;
    let c32 = i32c(e, 32);
    let (a, b) = if i.has_mod("wrap") {
        (e.b.build_and(a, i32c(e, 31), "").unwrap(), e.b.build_and(b, i32c(e, 31), "").unwrap())
    } else {
        let t = a.get_type();
        let min = |v| e.intrinsic("llvm.umin", &[t.into()], &[v, c32.into()]).into_int_value();
        (min(a.into()), min(b.into()))
    };
    let sum = e.b.build_int_add(a, b, "").unwrap();
    let ones = i32c(e, 0xffff_ffff);
    let shl = |n: IntValue<'ctx>| {
        let big = e.b.build_int_compare(IntPredicate::UGE, n, c32, "").unwrap();
        let n = e.b.build_and(n, i32c(e, 31), "").unwrap();
        let v = e.b.build_left_shift(ones, n, "").unwrap();
        e.b.build_select(big, i32c(e, 0), v, "").unwrap().into_int_value()
    };
    let (m0, m1) = (shl(a), shl(sum));
    let not1 = e.b.build_not(m1, "").unwrap();
    let d = e.b.build_and(m0, not1, "").unwrap();
    e.write(&i.operands[0], Type::B32, d.into())
}

fn i32c<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: u64) -> IntValue<'ctx> {
    e.ctx().i32_type().const_int(v, false)
}

fn sel<'ctx>(e: &FnEmitter<'ctx, '_, '_>, c: IntValue<'ctx>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> IntValue<'ctx> {
    e.b.build_select(c, a, b, "").unwrap().into_int_value()
}

fn cmp<'ctx>(e: &FnEmitter<'ctx, '_, '_>, p: IntPredicate, a: IntValue<'ctx>, b: IntValue<'ctx>) -> IntValue<'ctx> {
    e.b.build_int_compare(p, a, b, "").unwrap()
}

/// The low `len` bits set, in the type of `t` (`len` an i32 in 0..=width).
fn low_mask<'ctx>(e: &FnEmitter<'ctx, '_, '_>, len: IntValue<'ctx>, t: inkwell::types::IntType<'ctx>) -> IntValue<'ctx> {
    let w = t.get_bit_width() as u64;
    let full = cmp(e, IntPredicate::UGE, len, i32c(e, w));
    let l = sel(e, full, i32c(e, 0), len);
    let l = e.resize(l, w as u32, false);
    let m = e.b.build_left_shift(t.const_int(1, false), l, "").unwrap();
    let m = e.b.build_int_sub(m, t.const_int(1, false), "").unwrap();
    sel(e, full, t.const_all_ones(), m)
}

/// PTX ISA 9.7.1.7 sad: d = c + ((a < b) ? b - a : a - b).
fn sad<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let c = e.read_int(&i.operands[3], ty)?;
    let lt = cmp(e, if ty.is_signed() { IntPredicate::SLT } else { IntPredicate::ULT }, a, b);
    let ba = e.b.build_int_sub(b, a, "").unwrap();
    let ab = e.b.build_int_sub(a, b, "").unwrap();
    let d = sel(e, lt, ba, ab);
    let r = e.b.build_int_add(c, d, "").unwrap();
    e.write(&i.operands[0], ty, r.into())
}

/// PTX ISA 9.7.1.14 popc, 9.7.1.15 clz: `.b32`/`.b64` source, `.u32` result (clz of 0 is the width).
fn popc_clz<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let t = a.get_type();
    let r = if i.opcode.name == "popc" {
        e.intrinsic("llvm.ctpop", &[t.into()], &[a.into()])
    } else {
        let no_poison = e.ctx().bool_type().const_zero();
        e.intrinsic("llvm.ctlz", &[t.into()], &[a.into(), no_poison.into()])
    };
    let r = e.resize(r.into_int_value(), 32, false);
    e.write(&i.operands[0], Type::U32, r.into())
}

/// PTX ISA 9.7.1.16 bfind: position of the most significant non-sign bit (signed inputs are
/// complemented when negative), 0xffffffff when there is none; `.shiftamt` gives msb - pos.
fn bfind<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let mut a = e.read_int(&i.operands[1], ty)?;
    let t = a.get_type();
    let msb = t.get_bit_width() as u64 - 1;
    if ty.is_signed() {
        let neg = cmp(e, IntPredicate::SLT, a, t.const_zero());
        let na = e.b.build_not(a, "").unwrap();
        a = sel(e, neg, na, a);
    }
    let no_poison = e.ctx().bool_type().const_zero();
    let lz = e.intrinsic("llvm.ctlz", &[t.into()], &[a.into(), no_poison.into()]).into_int_value();
    let lz = e.resize(lz, 32, false);
    let zero = cmp(e, IntPredicate::EQ, a, t.const_zero());
    // pos = msb - lz; shiftamt = msb - pos = lz.
    let r = if i.has_mod("shiftamt") { lz } else { e.b.build_int_sub(i32c(e, msb), lz, "").unwrap() };
    let r = sel(e, zero, i32c(e, 0xffff_ffff), r);
    e.write(&i.operands[0], Type::U32, r.into())
}

/// PTX ISA 9.7.1.17 fns: the |offset|-th set bit of `mask` counting from bit `base` upwards
/// (offset > 0) or downwards (offset < 0); offset 0 tests bit `base` itself; 0xffffffff
/// when not found. `base` > 31 is undefined; ptxr gives 0xffffffff, as the GPU does.
fn fns<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let mask = e.read_int(&i.operands[1], Type::B32)?;
    let base = e.read_int(&i.operands[2], Type::U32)?;
    let off = e.read_int(&i.operands[3], Type::S32)?;
    let i32t = e.ctx().i32_type();
    let i64t = e.ctx().i64_type();
    let none = i32c(e, 0xffff_ffff);
    let base_ok = cmp(e, IntPredicate::ULE, base, i32c(e, 31));
    let sb = sel(e, base_ok, base, i32c(e, 0));
    // offset == 0: mask[base] ? base : none
    let bit = e.b.build_right_shift(mask, sb, false, "").unwrap();
    let bit = e.b.build_and(bit, i32c(e, 1), "").unwrap();
    let has = cmp(e, IntPredicate::NE, bit, i32c(e, 0));
    let r0 = sel(e, has, base, none);
    // offset != 0: n = |offset| (as an unsigned value, so |INT_MIN| = 2^31).
    let neg = cmp(e, IntPredicate::SLT, off, i32c(e, 0));
    let noff = e.b.build_int_neg(off, "").unwrap();
    let n = sel(e, neg, noff, off);
    // Upwards: bits >= base. Downwards: bits <= base, bit-reversed so both search upwards.
    let up = e.b.build_left_shift(i32t.const_all_ones(), sb, "").unwrap();
    let up = e.b.build_and(mask, up, "").unwrap();
    let dsh = e.b.build_int_sub(i32c(e, 31), sb, "").unwrap();
    let down = e.b.build_right_shift(i32t.const_all_ones(), dsh, false, "").unwrap();
    let down = e.b.build_and(mask, down, "").unwrap();
    let down = e.intrinsic("llvm.bitreverse", &[i32t.into()], &[down.into()]).into_int_value();
    let m = sel(e, neg, down, up);
    // Smallest p with popc(m & bits[0..=p]) >= n, by binary search over the prefix length.
    let m64 = e.resize(m, 64, false);
    let mut lo = i32c(e, 0);
    for step in [16u64, 8, 4, 2, 1] {
        let k = e.b.build_int_add(lo, i32c(e, step), "").unwrap();
        let k64 = e.resize(k, 64, false);
        let pm = e.b.build_left_shift(i64t.const_int(1, false), k64, "").unwrap();
        let pm = e.b.build_int_sub(pm, i64t.const_int(1, false), "").unwrap();
        let part = e.b.build_and(m64, pm, "").unwrap();
        let cnt = e.intrinsic("llvm.ctpop", &[i64t.into()], &[part.into()]).into_int_value();
        let cnt = e.resize(cnt, 32, false);
        let less = cmp(e, IntPredicate::ULT, cnt, n);
        lo = sel(e, less, k, lo);
    }
    let total = e.intrinsic("llvm.ctpop", &[i32t.into()], &[m.into()]).into_int_value();
    let found = cmp(e, IntPredicate::UGE, total, n);
    let rdown = e.b.build_int_sub(i32c(e, 31), lo, "").unwrap();
    let p = sel(e, neg, rdown, lo);
    let rn = sel(e, found, p, none);
    let is0 = cmp(e, IntPredicate::EQ, off, i32c(e, 0));
    let r = sel(e, is0, r0, rn);
    let r = sel(e, base_ok, r, none);
    // GPU-measured (H100): offset = INT_MIN gives 0 for every mask and base, where the
    // pseudo-code's |offset| - 1 would search on and find nothing.
    let min = cmp(e, IntPredicate::EQ, off, i32c(e, 0x8000_0000));
    let r = sel(e, min, i32c(e, 0), r);
    e.write(&i.operands[0], Type::B32, r.into())
}

/// The bit field of bfe/bfi that lies inside the register: the mask of its
/// min(len, max(0, w - pos)) low bits, and the shift that places it (pos, or 0 when pos ≥ w).
fn field<'ctx>(e: &FnEmitter<'ctx, '_, '_>, pos: IntValue<'ctx>, len: IntValue<'ctx>, t: inkwell::types::IntType<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let w = t.get_bit_width() as u64;
    let inside = cmp(e, IntPredicate::ULT, pos, i32c(e, w));
    let room = e.b.build_int_sub(i32c(e, w), pos, "").unwrap();
    let room = sel(e, inside, room, i32c(e, 0));
    let shorter = cmp(e, IntPredicate::ULT, len, room);
    let flen = sel(e, shorter, len, room);
    let fmask = low_mask(e, flen, t);
    let sh = sel(e, inside, pos, i32c(e, 0));
    let sh = e.resize(sh, w as u32, false);
    (fmask, sh)
}

/// The position and length operands of bfe/bfi: restricted to 0..255 by the spec's pseudo-code
/// (`& 0xff`). GPU-measured (H100): the 32-bit forms mask, but the 64-bit forms use the whole
/// u32 values (a position of 256 is past the msb, not 0), and ptxr follows the hardware there.
fn pos_len<'ctx>(e: &FnEmitter<'ctx, '_, '_>, p: IntValue<'ctx>, l: IntValue<'ctx>, w: u64) -> (IntValue<'ctx>, IntValue<'ctx>) {
    if w == 64 {
        return (p, l);
    }
    (e.b.build_and(p, i32c(e, 0xff), "").unwrap(), e.b.build_and(l, i32c(e, 0xff), "").unwrap())
}

/// PTX ISA 9.7.1.19 bfe, following the spec's pseudo-code: pos = b & 0xff, len = c & 0xff
/// (see `pos_len` for the 64-bit forms); bits i < len with pos + i <= msb come from a[pos + i],
/// the rest are the sign bit (0 for unsigned or len == 0, else a[min(pos + len - 1, msb)]).
fn bfe<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], Type::U32)?;
    let c = e.read_int(&i.operands[3], Type::U32)?;
    let t = a.get_type();
    let w = t.get_bit_width() as u64;
    let (pos, len) = pos_len(e, b, c, w);
    let (fmask, sh) = field(e, pos, len, t);
    let field = e.b.build_right_shift(a, sh, false, "").unwrap();
    let field = e.b.build_and(field, fmask, "").unwrap();
    if !ty.is_signed() {
        return e.write(&i.operands[0], ty, field.into());
    }
    // sbit = len == 0 ? 0 : a[min(pos + len - 1, msb)], summed in 64 bits (no wrap)
    let i64t = e.ctx().i64_type();
    let top = e.b.build_int_add(e.resize(pos, 64, false), e.resize(len, 64, false), "").unwrap();
    let top = e.b.build_int_sub(top, i64t.const_int(1, false), "").unwrap();
    let msb = i64t.const_int(w - 1, false);
    let big = cmp(e, IntPredicate::UGT, top, msb);
    let top = sel(e, big, msb, top);
    let top = e.resize(top, w as u32, false);
    let sbit = e.b.build_right_shift(a, top, false, "").unwrap();
    let sbit = e.b.build_and(sbit, t.const_int(1, false), "").unwrap();
    let len0 = cmp(e, IntPredicate::EQ, len, i32c(e, 0));
    let sbit = sel(e, len0, t.const_zero(), sbit);
    // Replicate: 0 - sbit is all ones or zero.
    let fill = e.b.build_int_neg(sbit, "").unwrap();
    let nmask = e.b.build_not(fmask, "").unwrap();
    let fill = e.b.build_and(fill, nmask, "").unwrap();
    let r = e.b.build_or(field, fill, "").unwrap();
    e.write(&i.operands[0], ty, r.into())
}

/// PTX ISA 9.7.1.20 bfi: f = b with bits [pos, pos + len) replaced by a's low bits, where
/// pos = c & 0xff and len = d & 0xff (see `pos_len` for .b64); bits past the msb are not written.
fn bfi<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let c = e.read_int(&i.operands[3], Type::U32)?;
    let d = e.read_int(&i.operands[4], Type::U32)?;
    let t = a.get_type();
    let (pos, len) = pos_len(e, c, d, t.get_bit_width() as u64);
    let (fmask, sh) = field(e, pos, len, t);
    let m = e.b.build_left_shift(fmask, sh, "").unwrap();
    let ins = e.b.build_left_shift(a, sh, "").unwrap();
    let ins = e.b.build_and(ins, m, "").unwrap();
    let nm = e.b.build_not(m, "").unwrap();
    let keep = e.b.build_and(b, nm, "").unwrap();
    let r = e.b.build_or(keep, ins, "").unwrap();
    e.write(&i.operands[0], ty, r.into())
}

/// PTX ISA 9.7.1.21 dp4a, 9.7.1.22 dp2a: byte (and for dp2a, 16-bit) dot products accumulated
/// into 32 bits (wrapping); each element sign- or zero-extended by its operand's type.
fn dp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, tys: &[Type]) -> R<()> {
    let [aty, bty] = tys else {
        return Err(e.err(i.span, format!("`{}` needs two types (.atype.btype)", i.opcode.name)));
    };
    let a = e.read_int(&i.operands[1], Type::B32)?;
    let b = e.read_int(&i.operands[2], Type::B32)?;
    let c = e.read_int(&i.operands[3], Type::B32)?;
    let elem = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, k: u32, bits: u32, signed: bool| {
        let s = e.b.build_right_shift(v, i32c(e, (k * bits) as u64), false, "").unwrap();
        let s = e.resize(s, bits, false);
        e.resize(s, 32, signed)
    };
    let (a_bits, n, b_first) = if i.opcode.name == "dp4a" {
        (8, 4, 0)
    } else if i.has_mod("hi") {
        (16, 2, 2)
    } else {
        (16, 2, 0)
    };
    let mut d = c;
    for k in 0..n {
        let x = elem(e, a, k, a_bits, aty.is_signed());
        let y = elem(e, b, b_first + k, 8, bty.is_signed());
        let p = e.b.build_int_mul(x, y, "").unwrap();
        d = e.b.build_int_add(d, p, "").unwrap();
    }
    let dty = if aty.is_signed() || bty.is_signed() { Type::S32 } else { Type::U32 };
    e.write(&i.operands[0], dty, d.into())
}

/// A constant operand (lop3's immLut).
fn const_operand<'a>(e: &FnEmitter<'_, 'a, '_>, op: &'a Operand<'a>, what: &str) -> R<u64> {
    match op {
        Operand::Imm(x) => crate::syntax::eval::eval(x, &|_| None).map(|c| c.as_u64()).map_err(|er| e.err(er.span, er.msg)),
        _ => Err(e.err(op.span(), format!("{what} must be an integer constant"))),
    }
}

/// PTX ISA 9.7.7.6 lop3: bit k of immLut is F(ta, tb, tc) for k = ta*4 + tb*2 + tc, so the
/// result is the OR of the minterms whose immLut bit is set.
fn lop3<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let a = e.read_int(&i.operands[1], Type::B32)?;
    let b = e.read_int(&i.operands[2], Type::B32)?;
    let c = e.read_int(&i.operands[3], Type::B32)?;
    let lut = const_operand(e, &i.operands[4], "lop3's immLut")?;
    if lut > 0xff {
        return Err(e.err(i.operands[4].span(), "lop3's immLut must be in 0..255"));
    }
    let t = a.get_type();
    let (na, nb, nc) = (e.b.build_not(a, "").unwrap(), e.b.build_not(b, "").unwrap(), e.b.build_not(c, "").unwrap());
    let mut r = t.const_zero();
    for k in 0..8u32 {
        if lut >> k & 1 == 0 {
            continue;
        }
        let x = if k & 4 != 0 { a } else { na };
        let y = if k & 2 != 0 { b } else { nb };
        let z = if k & 1 != 0 { c } else { nc };
        let m = e.b.build_and(x, y, "").unwrap();
        let m = e.b.build_and(m, z, "").unwrap();
        r = e.b.build_or(r, m, "").unwrap();
    }
    e.write(&i.operands[0], Type::B32, r.into())
}

/// PTX ISA 9.7.7.7 shf: funnel shift of the 64-bit value [b, a] by n = min(c, 32) (.clamp)
/// or c & 31 (.wrap); .l keeps the upper 32 bits, .r the lower 32 bits.
fn shf<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let a = e.read_int(&i.operands[1], Type::B32)?;
    let b = e.read_int(&i.operands[2], Type::B32)?;
    let c = e.read_int(&i.operands[3], Type::U32)?;
    let n = if i.has_mod("clamp") {
        let big = cmp(e, IntPredicate::UGT, c, i32c(e, 32));
        sel(e, big, i32c(e, 32), c)
    } else {
        e.b.build_and(c, i32c(e, 31), "").unwrap()
    };
    let i64t = e.ctx().i64_type();
    let a64 = e.resize(a, 64, false);
    let b64 = e.resize(b, 64, false);
    let hi = e.b.build_left_shift(b64, i64t.const_int(32, false), "").unwrap();
    let v = e.b.build_or(hi, a64, "").unwrap();
    let n64 = e.resize(n, 64, false);
    let r = if i.has_mod("l") {
        let s = e.b.build_left_shift(v, n64, "").unwrap();
        e.b.build_right_shift(s, i64t.const_int(32, false), false, "").unwrap()
    } else {
        e.b.build_right_shift(v, n64, false, "").unwrap()
    };
    let r = e.resize(r, 32, false);
    e.write(&i.operands[0], Type::B32, r.into())
}

/// Byte sources (index into {b, a}) of d.b0..d.b3 for a prmt mode and selector c[1:0]
/// (9.7.8.6, the mode table).
fn prmt_mode_sources(mode: &str, s: u32) -> Option<[u32; 4]> {
    let f = |k: u32| -> u32 {
        match mode {
            "f4e" => s + k,
            "b4e" => (s + 8 - k) % 8,
            "rc8" => s,
            "ecl" => k.max(s),
            "ecr" => k.min(s),
            _ => (k & 1) + 2 * (s & 1), // rc16
        }
    };
    if !matches!(mode, "f4e" | "b4e" | "rc8" | "ecl" | "ecr" | "rc16") {
        return None;
    }
    Some([f(0), f(1), f(2), f(3)])
}

/// PTX ISA 9.7.8.6 prmt: bytes of d picked from the 8 bytes of {b, a}. Default mode: selector
/// nibble k (c[4k+3:4k]) picks byte c & 7 for d.bk, and with bit 3 set the byte's sign is
/// replicated. The modes use c[1:0] and a fixed table, without sign replication.
fn prmt<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let a = e.read_int(&i.operands[1], Type::B32)?;
    let b = e.read_int(&i.operands[2], Type::B32)?;
    let c = e.read_int(&i.operands[3], Type::B32)?;
    let i64t = e.ctx().i64_type();
    let a64 = e.resize(a, 64, false);
    let b64 = e.resize(b, 64, false);
    let hi = e.b.build_left_shift(b64, i64t.const_int(32, false), "").unwrap();
    let src = e.b.build_or(hi, a64, "").unwrap();
    let mode = i.mods.iter().copied().find(|m| prmt_mode_sources(m, 0).is_some());
    // The 16-bit control: c's low half, or the mode table's entry for c[1:0].
    let ctl = match mode {
        None => c,
        Some(m) => {
            let mut table = 0u64;
            for s in 0..4 {
                let srcs = prmt_mode_sources(m, s).unwrap();
                let code: u64 = srcs.iter().enumerate().map(|(k, &x)| (x as u64) << (4 * k)).sum();
                table |= code << (16 * s);
            }
            let s = e.b.build_and(c, i32c(e, 3), "").unwrap();
            let s = e.b.build_left_shift(s, i32c(e, 4), "").unwrap();
            let s = e.resize(s, 64, false);
            let v = e.b.build_right_shift(i64t.const_int(table, false), s, false, "").unwrap();
            e.resize(v, 32, false)
        }
    };
    let i32t = e.ctx().i32_type();
    let mut r = i32t.const_zero();
    for k in 0..4u64 {
        let nib = e.b.build_right_shift(ctl, i32c(e, 4 * k), false, "").unwrap();
        let idx = e.b.build_and(nib, i32c(e, 7), "").unwrap();
        let sh = e.b.build_left_shift(idx, i32c(e, 3), "").unwrap();
        let sh = e.resize(sh, 64, false);
        let byte = e.b.build_right_shift(src, sh, false, "").unwrap();
        let byte = e.resize(byte, 8, false);
        let byte = if mode.is_none() {
            let sx = e.b.build_and(nib, i32c(e, 8), "").unwrap();
            let sx = cmp(e, IntPredicate::NE, sx, i32c(e, 0));
            let neg = cmp(e, IntPredicate::SLT, byte, byte.get_type().const_zero());
            let fill = sel(e, neg, byte.get_type().const_all_ones(), byte.get_type().const_zero());
            sel(e, sx, fill, byte)
        } else {
            byte
        };
        let byte = e.resize(byte, 32, false);
        let byte = e.b.build_left_shift(byte, i32c(e, 8 * k), "").unwrap();
        r = e.b.build_or(r, byte, "").unwrap();
    }
    e.write(&i.operands[0], Type::B32, r.into())
}
