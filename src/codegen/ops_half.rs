//! Half precision (9.7.4, 9.7.6): f16 and f16x2 arithmetic and comparisons.
//!
//! Halves are handled as raw 16-bit patterns (`.f16` in `.b16`/`.f16` registers, `.f16x2` as
//! an i32 whose low 16 bits are element 0). Arithmetic widens each element exactly to f64,
//! computes there (add/sub/mul are exact in f64; an f16 fma in f64 cannot double-round, see
//! `round_f16`), and rounds once to f16 with integer code. NaN results are the canonical
//! half NaN 0x7fff.

use super::func::{types_of, FnEmitter, R};
use super::ops_float::Rnd;
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

pub const CANON_NAN: u64 = 0x7fff;

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    // bfloat16 arithmetic (PTX 7.0 fma/min/max/neg/abs, 7.8 add/sub/mul, ex2.approx): the
    // same lanes as f16, in the bf16 format.
    if matches!(i.opcode.name, "add" | "sub" | "mul" | "fma" | "neg" | "abs" | "min" | "max" | "ex2") {
        if let Some(m) = i.mods.iter().find(|m| matches!(**m, "bf16" | "bf16x2")) {
            let ty = if *m == "bf16" { Type::F16 } else { Type::F16x2 };
            return arith(e, i, ty, Half::BF16).map(|_| true);
        }
    }
    let half = |m: &&str| matches!(*m, "f16" | "f16x2" | "bf16" | "bf16x2");
    if matches!(i.opcode.name, "setp" | "set") && i.mods.iter().any(half) {
        return half_compare(e, i).map(|_| true);
    }
    let tys = types_of(i);
    let Some(&last) = tys.last() else { return Ok(false) };
    let op = i.opcode.name;
    match op {
        "add" | "sub" | "mul" | "fma" | "neg" | "abs" | "min" | "max" | "ex2" if matches!(last, Type::F16 | Type::F16x2) => arith(e, i, last, Half::F16).map(|_| true),
        _ => Ok(false),
    }
}

// ---------------------------------------------------------------- conversions

/// Exact f16 bits (i16) → f32.
pub fn h2f<'ctx>(e: &FnEmitter<'ctx, '_, '_>, h: IntValue<'ctx>) -> FloatValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let f32t = e.ctx().f32_type();
    let x = e.b.build_int_z_extend(h, i32t, "").unwrap();
    let sign = e.b.build_left_shift(e.b.build_and(x, i32t.const_int(0x8000, false), "").unwrap(), i32t.const_int(16, false), "").unwrap();
    let m = e.b.build_and(x, i32t.const_int(0x7fff, false), "").unwrap();
    let sh = e.b.build_left_shift(m, i32t.const_int(13, false), "").unwrap();
    // Finite: (m << 13) read as f32 is the value times 2^-112 (exact, also for subnormals).
    let f = e.b.build_bit_cast(sh, f32t, "").unwrap().into_float_value();
    let f = e.b.build_float_mul(f, f32t.const_float(2f64.powi(112)), "").unwrap();
    let fb = e.b.build_bit_cast(f, i32t, "").unwrap().into_int_value();
    // Inf/NaN: exponent all ones, payload shifted.
    let special = e.b.build_int_compare(IntPredicate::UGE, m, i32t.const_int(0x7c00, false), "").unwrap();
    let sb = e.b.build_or(sh, i32t.const_int(0x7f80_0000, false), "").unwrap();
    let fb = e.b.build_select(special, sb, fb, "").unwrap().into_int_value();
    let fb = e.b.build_or(fb, sign, "").unwrap();
    e.b.build_bit_cast(fb, f32t, "").unwrap().into_float_value()
}

pub fn h2d<'ctx>(e: &FnEmitter<'ctx, '_, '_>, h: IntValue<'ctx>) -> FloatValue<'ctx> {
    let f = h2f(e, h);
    e.b.build_float_ext(f, e.ctx().f64_type(), "").unwrap()
}

/// Rounds an f64 value to f16 bits with mode `rnd` (exact for every mode, subnormals
/// included; overflow gives ±inf or ±MAX per mode; NaN gives 0x7fff).
///
/// Double rounding: f16 add/sub/mul results are exact in f64. An f16 fma result `ab + c`
/// (ab: ≤ 22 significant bits) that is finite in f16 spans at most 53 bits unless `ab` or
/// `c` is far below the other's last bit, where the RN-to-f64 step cannot reach an f16
/// rounding boundary; so RN(f64) then RN(f16) equals RN(f16) of the exact value.
pub fn round_f16<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>, rnd: Rnd) -> IntValue<'ctx> {
    round_f16_nan(e, v, rnd, Some(CANON_NAN))
}

/// `round_f16` with the NaN result `nan`, or with the input's sign and upper payload bits
/// quieted when `nan` is None (GPU-measured: cvt.f16.f64 does that, everything else gives 0x7fff).
pub fn round_f16_nan<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>, rnd: Rnd, nan: Option<u64>) -> IntValue<'ctx> {
    round_half(e, v, rnd, nan, Half::F16)
}

/// A 16-bit float format: IEEE binary16 (`.f16`) or bfloat16 (`.bf16`, PTX 7.0: the upper
/// half of an f32).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Half {
    F16,
    BF16,
}

impl Half {
    /// Mantissa bits, smallest normal exponent, largest exponent, the exponent field mask
    /// (= +inf) and the largest finite magnitude.
    fn params(self) -> (u64, i64, i64, u64, u64) {
        match self {
            Half::F16 => (10, -14, 15, 0x7c00, 0x7bff),
            Half::BF16 => (7, -126, 127, 0x7f80, 0x7f7f),
        }
    }
}

/// Rounds an f64 value to the bits of a 16-bit format (see [`round_f16_nan`]).
fn round_half<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>, rnd: Rnd, nan: Option<u64>, fmt: Half) -> IntValue<'ctx> {
    let (mant, emin, emax, inf, max) = fmt.params();
    let i64t = e.ctx().i64_type();
    let c = |k: u64| i64t.const_int(k, false);
    let b = &e.b;
    let bits = b.build_bit_cast(v, i64t, "").unwrap().into_int_value();
    let sign = b.build_right_shift(bits, c(63), false, "").unwrap();
    let abs = b.build_and(bits, c(0x7fff_ffff_ffff_ffff), "").unwrap();
    let bexp = b.build_right_shift(abs, c(52), false, "").unwrap();
    let man = b.build_and(abs, c((1 << 52) - 1), "").unwrap();
    let is_sub64 = b.build_int_compare(IntPredicate::EQ, bexp, c(0), "").unwrap();
    let sig = b.build_select(is_sub64, man, b.build_or(man, c(1 << 52), "").unwrap(), "").unwrap().into_int_value();
    let bexp1 = b.build_select(is_sub64, c(1), bexp, "").unwrap().into_int_value();
    // Unbiased exponent (signed).
    let ue = b.build_int_sub(bexp1, c(1023), "").unwrap();
    let below = b.build_int_compare(IntPredicate::SLT, ue, i64t.const_int(emin as u64, true), "").unwrap();
    // shift = 52 - mant (+ how far below the normal range), at most 63.
    let extra = b.build_int_sub(i64t.const_int(emin as u64, true), ue, "").unwrap();
    let shift = b.build_select(below, b.build_int_add(c(52 - mant), extra, "").unwrap(), c(52 - mant), "").unwrap().into_int_value();
    let big = b.build_int_compare(IntPredicate::UGT, shift, c(63), "").unwrap();
    let shift = b.build_select(big, c(63), shift, "").unwrap().into_int_value();
    let int = b.build_right_shift(sig, shift, false, "").unwrap();
    let mask = b.build_int_sub(b.build_left_shift(c(1), shift, "").unwrap(), c(1), "").unwrap();
    let rem = b.build_and(sig, mask, "").unwrap();
    let half = b.build_left_shift(c(1), b.build_int_sub(shift, c(1), "").unwrap(), "").unwrap();
    let normal_base = b.build_int_add(b.build_left_shift(b.build_int_sub(ue, i64t.const_int(emin as u64, true), "").unwrap(), c(mant), "").unwrap(), int, "").unwrap();
    let base = b.build_select(below, int, normal_base, "").unwrap().into_int_value();
    let inexact = b.build_int_compare(IntPredicate::NE, rem, c(0), "").unwrap();
    let is_neg = b.build_int_compare(IntPredicate::NE, sign, c(0), "").unwrap();
    let t = e.ctx().bool_type().const_int(1, false);
    let f = e.ctx().bool_type().const_zero();
    let up = match rnd {
        Rnd::N => {
            let gt = b.build_int_compare(IntPredicate::UGT, rem, half, "").unwrap();
            let eq = b.build_int_compare(IntPredicate::EQ, rem, half, "").unwrap();
            let odd = b.build_int_compare(IntPredicate::NE, b.build_and(int, c(1), "").unwrap(), c(0), "").unwrap();
            b.build_or(gt, b.build_and(eq, odd, "").unwrap(), "").unwrap()
        }
        Rnd::Z => f,
        Rnd::P => b.build_and(inexact, b.build_not(is_neg, "").unwrap(), "").unwrap(),
        Rnd::M => b.build_and(inexact, is_neg, "").unwrap(),
    };
    let mag = b.build_int_add(base, b.build_int_z_extend(up, i64t, "").unwrap(), "").unwrap();
    // Overflow (|v| ≥ 2^(emax+1)): inf when the mode rounds away from zero, MAX otherwise.
    let over = b.build_int_compare(IntPredicate::SGT, ue, c(emax as u64), "").unwrap();
    let to_inf = match rnd {
        Rnd::N => t,
        Rnd::Z => f,
        Rnd::P => b.build_not(is_neg, "").unwrap(),
        Rnd::M => is_neg,
    };
    let ovf = b.build_select(to_inf, c(inf), c(max), "").unwrap().into_int_value();
    let mag = b.build_select(over, ovf, mag, "").unwrap().into_int_value();
    let is_inf = b.build_int_compare(IntPredicate::EQ, abs, c(0x7ff0_0000_0000_0000), "").unwrap();
    let mag = b.build_select(is_inf, c(inf), mag, "").unwrap().into_int_value();
    let r = b.build_or(mag, b.build_left_shift(sign, c(15), "").unwrap(), "").unwrap();
    let is_nan = b.build_int_compare(IntPredicate::UGT, abs, c(0x7ff0_0000_0000_0000), "").unwrap();
    let nan = match nan {
        Some(k) => c(k),
        // Sign kept, quiet bit set, payload = the upper mantissa bits.
        None => b.build_or(b.build_or(b.build_left_shift(sign, c(15), "").unwrap(), c(inf | (1 << (mant - 1))), "").unwrap(), b.build_right_shift(man, c(52 - mant), false, "").unwrap(), "").unwrap(),
    };
    let r = b.build_select(is_nan, nan, r, "").unwrap().into_int_value();
    b.build_int_truncate(r, e.ctx().i16_type(), "").unwrap()
}

/// Exact 16-bit float bits (i16) of `fmt` → f32.
fn half_to_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, h: IntValue<'ctx>, fmt: Half) -> FloatValue<'ctx> {
    match fmt {
        Half::F16 => h2f(e, h),
        Half::BF16 => {
            let i32t = e.ctx().i32_type();
            let x = e.b.build_int_z_extend(h, i32t, "").unwrap();
            let x = e.b.build_left_shift(x, i32t.const_int(16, false), "").unwrap();
            e.b.build_bit_cast(x, e.ctx().f32_type(), "").unwrap().into_float_value()
        }
    }
}

fn half_to_f64<'ctx>(e: &FnEmitter<'ctx, '_, '_>, h: IntValue<'ctx>, fmt: Half) -> FloatValue<'ctx> {
    let f = half_to_f32(e, h, fmt);
    e.b.build_float_ext(f, e.ctx().f64_type(), "").unwrap()
}

/// `.ftz` on 16-bit float bits of `fmt`: subnormals become sign-preserving zero.
fn ftz_half<'ctx>(e: &FnEmitter<'ctx, '_, '_>, h: IntValue<'ctx>, fmt: Half) -> IntValue<'ctx> {
    let t = h.get_type();
    let exp = e.b.build_and(h, t.const_int(fmt.params().3, false), "").unwrap();
    let sub = e.b.build_int_compare(IntPredicate::EQ, exp, t.const_zero(), "").unwrap();
    let sign = e.b.build_and(h, t.const_int(0x8000, false), "").unwrap();
    e.b.build_select(sub, sign, h, "").unwrap().into_int_value()
}

/// Whether 16-bit float bits of `fmt` are a NaN.
fn is_nan_half<'ctx>(e: &FnEmitter<'ctx, '_, '_>, h: IntValue<'ctx>, fmt: Half) -> IntValue<'ctx> {
    let t = h.get_type();
    let m = e.b.build_and(h, t.const_int(0x7fff, false), "").unwrap();
    e.b.build_int_compare(IntPredicate::UGT, m, t.const_int(fmt.params().3, false), "").unwrap()
}

/// bf16 `a + b` rounded to nearest even (bits in, bits out; a NaN gives the canonical NaN),
/// as `add.rn.bf16` computes it; for `atom`/`red .add.noftz.bf16`.
pub fn bf16_add<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> IntValue<'ctx> {
    let s = sum_to_odd(e, half_to_f64(e, a, Half::BF16), half_to_f64(e, b, Half::BF16));
    round_half(e, s, Rnd::N, Some(CANON_NAN), Half::BF16)
}

/// `s = p + q` rounded to nearest in f64, made round-to-odd: when the sum is inexact (its
/// error, from Knuth's TwoSum, is not zero) the last bit of `s` is set on the truncated
/// value. bf16 operands span up to 2^254, so a sum can be inexact in f64; rounding a
/// round-to-odd f64 (53 bits) once more to bf16 (8 bits) then gives the correctly rounded
/// bf16 result, where RN twice could land on a bf16 tie that the exact sum is not on.
fn sum_to_odd<'ctx>(e: &FnEmitter<'ctx, '_, '_>, p: FloatValue<'ctx>, q: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let b = &e.b;
    let i64t = e.ctx().i64_type();
    let f64t = e.ctx().f64_type();
    let s = b.build_float_add(p, q, "").unwrap();
    let bb = b.build_float_sub(s, p, "").unwrap();
    let ap = b.build_float_sub(s, bb, "").unwrap();
    let err = b.build_float_add(b.build_float_sub(p, ap, "").unwrap(), b.build_float_sub(q, bb, "").unwrap(), "").unwrap();
    let bits = b.build_bit_cast(s, i64t, "").unwrap().into_int_value();
    // |exact| > |s| when err has the sign of s: truncation is s; else one ulp below |s|.
    let s_neg = b.build_float_compare(FloatPredicate::OLT, s, f64t.const_float(0.0), "").unwrap();
    let e_neg = b.build_float_compare(FloatPredicate::OLT, err, f64t.const_float(0.0), "").unwrap();
    let above = b.build_int_compare(IntPredicate::EQ, s_neg, e_neg, "").unwrap();
    let trunc = b.build_select(above, bits, b.build_int_sub(bits, i64t.const_int(1, false), "").unwrap(), "").unwrap().into_int_value();
    let odd = b.build_or(trunc, i64t.const_int(1, false), "").unwrap();
    let inexact = b.build_float_compare(FloatPredicate::ONE, err, f64t.const_float(0.0), "").unwrap();
    let r = b.build_select(inexact, odd, bits, "").unwrap().into_int_value();
    b.build_bit_cast(r, f64t, "").unwrap().into_float_value()
}

/// `.sat` on an f64 value: clamp to [0, 1], NaN (and -0) → +0.
pub fn sat_d<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let t = v.get_type();
    let gt0 = e.b.build_float_compare(FloatPredicate::OGT, v, t.const_float(0.0), "").unwrap();
    let r = e.b.build_select(gt0, v, t.const_float(0.0), "").unwrap().into_float_value();
    let gt1 = e.b.build_float_compare(FloatPredicate::OGT, r, t.const_float(1.0), "").unwrap();
    e.b.build_select(gt1, t.const_float(1.0), r, "").unwrap().into_float_value()
}

// ---------------------------------------------------------------- lanes

fn lanes<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, ty: Type) -> Vec<IntValue<'ctx>> {
    let i16t = e.ctx().i16_type();
    if ty == Type::F16 {
        return vec![v];
    }
    let lo = e.b.build_int_truncate(v, i16t, "").unwrap();
    let hi = e.b.build_right_shift(v, v.get_type().const_int(16, false), false, "").unwrap();
    let hi = e.b.build_int_truncate(hi, i16t, "").unwrap();
    vec![lo, hi]
}

pub fn pack<'ctx>(e: &FnEmitter<'ctx, '_, '_>, lo: IntValue<'ctx>, hi: IntValue<'ctx>) -> IntValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let lo = e.b.build_int_z_extend(lo, i32t, "").unwrap();
    let hi = e.b.build_int_z_extend(hi, i32t, "").unwrap();
    let hi = e.b.build_left_shift(hi, i32t.const_int(16, false), "").unwrap();
    e.b.build_or(lo, hi, "").unwrap()
}

fn read_h<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>, ty: Type) -> R<IntValue<'ctx>> {
    let bt = if ty == Type::F16 { Type::B16 } else { Type::B32 };
    e.read_int(op, bt)
}

fn write_h<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>, ty: Type, l: &[IntValue<'ctx>]) -> R<()> {
    if ty == Type::F16 {
        e.write(op, Type::B16, l[0].into())
    } else {
        let v = pack(e, l[0], l[1]);
        e.write(op, Type::B32, v.into())
    }
}

// ---------------------------------------------------------------- arithmetic

/// PTX ISA 9.7.4.1-5 add/sub/mul/fma/neg (and abs/min/max/ex2.approx of later PTX versions).
fn arith<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type, fmt: Half) -> R<()> {
    let op = i.opcode.name;
    let ftz = i.has_mod("ftz");
    let sat = i.has_mod("sat");
    let relu = i.has_mod("relu");
    let nan_mod = i.has_mod("NaN");
    if i.mods.iter().any(|m| matches!(*m, "rz" | "rm" | "rp")) {
        return Err(e.err(i.span, "half precision arithmetic supports only `.rn` (9.7.4)"));
    }
    let n = match op {
        "neg" | "abs" | "ex2" => 1,
        "fma" => 3,
        _ => 2,
    };
    let mut srcs = Vec::new();
    for k in 0..n {
        let v = read_h(e, &i.operands[1 + k], ty)?;
        let l = lanes(e, v, ty);
        srcs.push(if ftz { l.iter().map(|h| ftz_half(e, *h, fmt)).collect::<Vec<_>>() } else { l });
    }
    let nl = if ty == Type::F16 { 1 } else { 2 };
    let i16t = e.ctx().i16_type();
    let mut out = Vec::new();
    for k in 0..nl {
        let a = srcs[0][k];
        let r = match op {
            // GPU-verified: neg.f16 of a NaN gives the canonical NaN.
            "neg" | "abs" => {
                let r = if op == "neg" { e.b.build_xor(a, i16t.const_int(0x8000, false), "").unwrap() } else { e.b.build_and(a, i16t.const_int(0x7fff, false), "").unwrap() };
                let n = is_nan_half(e, a, fmt);
                e.b.build_select(n, i16t.const_int(CANON_NAN, false), r, "").unwrap().into_int_value()
            }
            "min" | "max" => {
                let b = srcs[1][k];
                let (fa, fb) = (half_to_f32(e, a, fmt), half_to_f32(e, b, fmt));
                let is_min = op == "min";
                let p = if is_min { FloatPredicate::OLT } else { FloatPredicate::OGT };
                let c = e.b.build_float_compare(p, fa, fb, "").unwrap();
                let r = e.b.build_select(c, a, b, "").unwrap().into_int_value();
                let na = is_nan_half(e, a, fmt);
                let nb = is_nan_half(e, b, fmt);
                let r = e.b.build_select(nb, a, r, "").unwrap().into_int_value();
                let r = e.b.build_select(na, b, r, "").unwrap().into_int_value();
                // -0 < +0
                let za = e.b.build_float_compare(FloatPredicate::OEQ, fa, e.ctx().f32_type().const_float(0.0), "").unwrap();
                let zb = e.b.build_float_compare(FloatPredicate::OEQ, fb, e.ctx().f32_type().const_float(0.0), "").unwrap();
                let bz = e.b.build_and(za, zb, "").unwrap();
                let z = if is_min { e.b.build_or(a, b, "").unwrap() } else { e.b.build_and(a, b, "").unwrap() };
                let r = e.b.build_select(bz, z, r, "").unwrap().into_int_value();
                let any_nan = e.b.build_or(na, nb, "").unwrap();
                let both_nan = e.b.build_and(na, nb, "").unwrap();
                let nan_out = if nan_mod { any_nan } else { both_nan };
                e.b.build_select(nan_out, i16t.const_int(CANON_NAN, false), r, "").unwrap().into_int_value()
            }
            _ => {
                let da = half_to_f64(e, a, fmt);
                let bf = fmt == Half::BF16;
                let v: FloatValue = match op {
                    "add" if bf => sum_to_odd(e, da, half_to_f64(e, srcs[1][k], fmt)),
                    "sub" if bf => sum_to_odd(e, da, e.b.build_float_neg(half_to_f64(e, srcs[1][k], fmt), "").unwrap()),
                    "add" => e.b.build_float_add(da, half_to_f64(e, srcs[1][k], fmt), "").unwrap(),
                    "sub" => e.b.build_float_sub(da, half_to_f64(e, srcs[1][k], fmt), "").unwrap(),
                    // Products of two 8- or 11-bit significands are exact in f64.
                    "mul" => e.b.build_float_mul(da, half_to_f64(e, srcs[1][k], fmt), "").unwrap(),
                    "fma" if bf => {
                        let p = e.b.build_float_mul(da, half_to_f64(e, srcs[1][k], fmt), "").unwrap();
                        sum_to_odd(e, p, half_to_f64(e, srcs[2][k], fmt))
                    }
                    "fma" => {
                        let (db, dc) = (half_to_f64(e, srcs[1][k], fmt), half_to_f64(e, srcs[2][k], fmt));
                        e.intrinsic("llvm.fma", &[da.get_type().into()], &[da.into(), db.into(), dc.into()]).into_float_value()
                    }
                    // ex2.approx.f16/.bf16 (PTX 7.0/7.8): 2^a in f32 (within the approximation's
                    // error; LLVM's NVPTX backend has no f64 exp2 for the round trip).
                    _ => {
                        let fa = half_to_f32(e, a, fmt);
                        let r = e.intrinsic("llvm.exp2", &[fa.get_type().into()], &[fa.into()]).into_float_value();
                        e.b.build_float_ext(r, e.ctx().f64_type(), "").unwrap()
                    }
                };
                let v = if sat { sat_d(e, v) } else { v };
                let v = if relu {
                    // .relu: negative results become +0, NaN stays NaN; so does -0 (an H200
                    // gives +0 for fma.rn.relu.bf16 of -0 * 1 + -0).
                    let t = v.get_type();
                    let lt = e.b.build_float_compare(FloatPredicate::OLE, v, t.const_float(0.0), "").unwrap();
                    e.b.build_select(lt, t.const_float(0.0), v, "").unwrap().into_float_value()
                } else {
                    v
                };
                round_half(e, v, Rnd::N, Some(CANON_NAN), fmt)
            }
        };
        out.push(if ftz { ftz_half(e, r, fmt) } else { r });
    }
    write_h(e, &i.operands[0], ty, &out)
}

// ---------------------------------------------------------------- comparisons

fn cmp_f<'ctx>(e: &FnEmitter<'ctx, '_, '_>, cmp: &str, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> Option<IntValue<'ctx>> {
    let p = super::ops_int::float_predicate(cmp)?;
    Some(e.b.build_float_compare(p, a, b, "").unwrap())
}

fn cmp_name<'a>(i: &Instr<'a>) -> Option<&'a str> {
    i.mods.iter().copied().find(|m| super::ops_int::compare_name(m))
}

/// Per-lane comparison results of `a CmpOp b` combined with `c` by the BoolOp.
/// Sources of 16-bit format `fmt` when `st` is `F16`/`F16x2`, else of type `st`.
fn compare_lanes<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, st: Type, fmt: Half, nb: usize) -> R<Vec<IntValue<'ctx>>> {
    let cmp = cmp_name(i).ok_or_else(|| e.err(i.span, "missing comparison operator"))?;
    let boolop = i.mods.iter().copied().find(|m| matches!(*m, "and" | "or" | "xor"));
    let ftz = i.has_mod("ftz");
    let mut res = Vec::new();
    if matches!(st, Type::F16 | Type::F16x2) {
        let a = read_h(e, &i.operands[nb], st)?;
        let b = read_h(e, &i.operands[nb + 1], st)?;
        let (la, lb) = (lanes(e, a, st), lanes(e, b, st));
        for k in 0..la.len() {
            let (mut x, mut y) = (la[k], lb[k]);
            if ftz {
                x = ftz_half(e, x, fmt);
                y = ftz_half(e, y, fmt);
            }
            let (fx, fy) = (half_to_f32(e, x, fmt), half_to_f32(e, y, fmt));
            let t = cmp_f(e, cmp, fx, fy).ok_or_else(|| e.err(i.span, format!("comparison `.{cmp}` is not valid for half precision")))?;
            res.push(t);
        }
    } else {
        let mut a = e.read(&i.operands[nb], st)?;
        let mut b = e.read(&i.operands[nb + 1], st)?;
        if ftz {
            a = super::ops_float::ftz(e, a);
            b = super::ops_float::ftz(e, b);
        }
        let t = super::ops_int::compare(e, cmp, st, a, b).ok_or_else(|| e.err(i.span, format!("comparison `.{cmp}` is not valid for `.{}`", st.as_str())))?;
        res.push(t);
    }
    if let Some(op) = boolop {
        let c = e.read(&i.operands[nb + 2], Type::Pred)?.into_int_value();
        for t in res.iter_mut() {
            *t = match op {
                "and" => e.b.build_and(*t, c, "").unwrap(),
                "or" => e.b.build_or(*t, c, "").unwrap(),
                _ => e.b.build_xor(*t, c, "").unwrap(),
            };
        }
    }
    Ok(res)
}

/// The destination of `setp` on half or half-pair sources: `p` or `p|q` (PTX ISA 9.7.6.2:
/// `p|q` gets the two lanes' results, or a result and its negation for a single half).
fn write_preds<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, r: &[IntValue<'ctx>]) -> R<()> {
    match &i.operands[0] {
        Operand::Pair(p, q) => {
            if r.len() == 2 {
                e.write(p, Type::Pred, r[0].into())?;
                e.write(q, Type::Pred, r[1].into())
            } else {
                let nt = e.b.build_not(r[0], "").unwrap();
                e.write(p, Type::Pred, r[0].into())?;
                e.write(q, Type::Pred, nt.into())
            }
        }
        d => {
            if r.len() == 2 {
                return Err(e.err(i.span, "`setp` on a half pair writes two predicates `p|q`"));
            }
            e.write(d, Type::Pred, r[0].into())
        }
    }
}


/// PTX ISA 9.7.6.1 set with a half source or destination and 9.7.6.2 setp on half sources
/// (f16, and bf16 since PTX 7.8; 9.7.5.1 set.dtype.f16): the comparison of the exact values. `set` writes
/// 1.0 (0x3c00 for f16, 0x3f80 for bf16) or 0.0 per half of a half destination; all ones or
/// zero per half of a u32/s32 destination of a half pair (PTX 7.x); all ones or zero for
/// integer destinations and 1.0f or 0.0f for f32 ones.
fn half_compare<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    // The type modifiers in order, with bfloat16 ones as F16/F16x2 lanes.
    let tys: Vec<(Type, Half)> = i
        .mods
        .iter()
        .filter_map(|m| match *m {
            "bf16" => Some((Type::F16, Half::BF16)),
            "bf16x2" => Some((Type::F16x2, Half::BF16)),
            _ => Type::from_str(m).map(|t| (t, Half::F16)),
        })
        .collect();
    if i.opcode.name == "setp" {
        let &[(st, fmt)] = tys.as_slice() else { return Err(e.err(i.span, "`setp` needs one source type")) };
        let r = compare_lanes(e, i, st, fmt, 1)?;
        return write_preds(e, i, &r);
    }
    let &[(dt, dfmt), (st, sfmt)] = tys.as_slice() else { return Err(e.err(i.span, "`set` needs a destination and a source type")) };
    let r = compare_lanes(e, i, st, sfmt, 1)?;
    let one16 = if dfmt == Half::BF16 { 0x3f80 } else { 0x3c00 };
    let sel = |e: &FnEmitter<'ctx, 'a, '_>, t: IntValue<'ctx>, on: u64, w: u32| -> IntValue<'ctx> {
        let it = super::func::int_t(e.ctx(), w);
        e.b.build_select(t, it.const_int(on, false), it.const_zero(), "").unwrap().into_int_value()
    };
    let (v, wt): (IntValue<'ctx>, Type) = match dt {
        Type::F16 => (sel(e, r[0], one16, 16), Type::B16),
        Type::F16x2 => {
            let lo = sel(e, r[0], one16, 16);
            let hi = sel(e, *r.get(1).unwrap_or(&r[0]), one16, 16);
            (pack(e, lo, hi), Type::B32)
        }
        Type::U32 | Type::S32 if r.len() == 2 => {
            let lo = sel(e, r[0], 0xffff, 16);
            let hi = sel(e, r[1], 0xffff, 16);
            (pack(e, lo, hi), Type::B32)
        }
        Type::U16 | Type::S16 => (sel(e, r[0], 0xffff, 16), Type::B16),
        Type::U32 | Type::S32 => (sel(e, r[0], 0xffff_ffff, 32), Type::B32),
        Type::F32 => (sel(e, r[0], 0x3f80_0000, 32), Type::B32),
        _ => return Err(e.err(i.span, format!("`set` destination type `.{}` is not supported", dt.as_str()))),
    };
    e.write(&i.operands[0], wt, v.into())
}
