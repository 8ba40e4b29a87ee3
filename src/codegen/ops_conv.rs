//! Conversions: PTX ISA 9.7.8.14 cvt between every pair of types, with every rounding and
//! saturation mode.

use super::func::{int_t, types_of, FnEmitter, R};
use super::ops_float::{rounding, Rnd};
use crate::syntax::ast::{Instr, Type};
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    match i.opcode.name {
        "cvt" => cvt(e, i).map(|_| true),
        _ => Ok(false),
    }
}

/// PTX ISA 9.7.8.14 cvt: `cvt{.irnd|.frnd}{.ftz}{.sat}.dtype.atype d, a;`
///
/// Missing rounding modifiers: float→int defaults to `.rzi` (the spec requires a modifier;
/// ptxr accepts its absence like C's truncation), int→float and float narrowing to `.rn`.
fn cvt<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    if i.has_mod("ue8m0x2") {
        return cvt_ue8m0(e, i);
    }
    if i.mods.iter().any(|m| *m == "bf16" || *m == "bf16x2") {
        return cvt_bf16(e, i);
    }
    if i.has_mod("pack") {
        return cvt_pack(e, i);
    }
    if i.has_mod("tf32") {
        return cvt_tf32(e, i);
    }
    if let Some(f8) = i.mods.iter().find_map(|m| F8::parse(m)) {
        return cvt_f8(e, i, f8);
    }
    if i.has_mod("satfinite") {
        return Err(e.err(i.span, "ptxr supports `.satfinite` on `cvt` to .bf16/.bf16x2/.tf32/.e4m3x2/.e5m2x2 only"));
    }
    let tys = types_of(i);
    if tys.len() != 2 {
        return Err(e.err(i.span, "`cvt` needs a destination and a source type"));
    }
    let (dt, at) = (tys[0], tys[1]);
    let ftz = i.has_mod("ftz");
    let sat = i.has_mod("sat");
    let relu = i.has_mod("relu");
    let irnd = i.mods.iter().find_map(|m| match *m {
        "rni" => Some(Rnd::N),
        "rzi" => Some(Rnd::Z),
        "rmi" => Some(Rnd::M),
        "rpi" => Some(Rnd::P),
        _ => None,
    });
    let frnd = rounding(i);
    if at == Type::F16x2 {
        return Err(e.err(i.span, "`cvt` from .f16x2 is not a PTX form"));
    }
    if dt == Type::F16x2 {
        // PTX 7.0: cvt.rn{.relu}.f16x2.f32 d, a, b — a goes to the upper half, b to the lower.
        if at != Type::F32 || i.operands.len() != 3 {
            return Err(e.err(i.span, "`cvt.f16x2` converts two `.f32` sources: `cvt.rn.f16x2.f32 d, a, b`"));
        }
        let m = frnd.unwrap_or(Rnd::N);
        let mut h = Vec::new();
        for k in [1, 2] {
            let v = e.read(&i.operands[k], Type::F32)?.into_float_value();
            let v = e.b.build_float_ext(v, e.ctx().f64_type(), "").unwrap();
            let v = if sat { super::ops_half::sat_d(e, v) } else { v };
            let v = if relu { relu_d(e, v) } else { v };
            h.push(super::ops_half::round_f16(e, v, m));
        }
        let r = super::ops_half::pack(e, h[1], h[0]);
        return e.write(&i.operands[0], Type::B32, r.into());
    }
    let ctx = e.ctx();
    let f64t = ctx.f64_type();
    // Float sources as f32/f64 values (f16 widened exactly to f32).
    let src_f = |e: &mut FnEmitter<'ctx, 'a, '_>| -> R<FloatValue<'ctx>> {
        if at == Type::F16 {
            // GPU-verified: a NaN half converts to the canonical f32 NaN 0x7fffffff, but to
            // f64 with its payload kept.
            let h = e.read_int(&i.operands[1], Type::B16)?;
            let f = super::ops_half::h2f(e, h);
            return Ok(if dt == Type::F64 { f } else { super::ops_float::canon_nan(e, f) });
        }
        let a = e.read(&i.operands[1], at)?;
        // GPU-measured: cvt.ftz.f16.f32 does not flush subnormal inputs (a tiny input rounds to
        // the smallest f16 subnormal under .rp/.rm), so .ftz acts on f32 sources elsewhere only.
        Ok(if ftz && at == Type::F32 && dt != Type::F16 { super::ops_float::ftz_val(e, a) } else { a }.into_float_value())
    };
    let r: BasicValueEnum<'ctx> = match (dt.is_float(), at.is_float()) {
        (true, true) => {
            let av = src_f(e)?;
            if dt == Type::F16 {
                // To f16: same size (copy or round to integral), or narrowing with .frnd.
                let h = if at == Type::F16 {
                    match irnd {
                        Some(m) => {
                            let r = round_int(e, av, m);
                            super::ops_half::round_f16(e, e.b.build_float_ext(r, f64t, "").unwrap(), Rnd::N)
                        }
                        None => {
                            let hb = e.read_int(&i.operands[1], Type::B16)?;
                            if sat || relu {
                                super::ops_half::round_f16(e, e.b.build_float_ext(av, f64t, "").unwrap(), Rnd::N)
                            } else {
                                hb
                            }
                        }
                    }
                } else {
                    // GPU-measured: f32 NaNs give the canonical 0x7fff; f64 NaNs keep their sign
                    // and upper payload bits, quieted.
                    let nan = if at == Type::F64 { None } else { Some(super::ops_half::CANON_NAN) };
                    super::ops_half::round_f16_nan(e, ext64(e, av), frnd.unwrap_or(Rnd::N), nan)
                };
                let h = if sat || relu {
                    let d = super::ops_half::h2d(e, h);
                    let d = if sat { super::ops_half::sat_d(e, d) } else { d };
                    let d = if relu { relu_d(e, d) } else { d };
                    super::ops_half::round_f16(e, d, Rnd::N)
                } else {
                    h
                };
                e.write(&i.operands[0], Type::B16, h.into())?;
                return Ok(());
            }
            let src_bits = if at == Type::F16 { 16 } else { at.bits() };
            let mut v = if dt.bits() == src_bits {
                match irnd {
                    Some(m) => {
                        let r = round_int(e, av, m);
                        if dt == Type::F32 { super::ops_float::canon_nan(e, r) } else { r }
                    }
                    None => av,
                }
            } else if dt.bits() > src_bits {
                // GPU-measured: cvt.ftz.f64.f32 turns every NaN into the canonical f32 NaN
                // widened (0x7fffffffe0000000); without .ftz the payload is kept.
                let av = if ftz && at == Type::F32 { super::ops_float::canon_nan(e, av) } else { av };
                e.b.build_float_ext(av, e.val_t(dt).into_float_type(), "").unwrap()
            } else {
                // f64 → f32. GPU-verified: with .ftz, inputs below 2^-126 flush to ±0 even when
                // they would round up to the smallest normal.
                let av = if ftz {
                    let a = e.intrinsic("llvm.fabs", &[av.get_type().into()], &[av.into()]).into_float_value();
                    let tiny = e.b.build_float_compare(FloatPredicate::OLT, a, f64t.const_float(2f64.powi(-126)), "").unwrap();
                    let z = e.intrinsic("llvm.copysign", &[f64t.into()], &[f64t.const_float(0.0).into(), av.into()]).into_float_value();
                    e.b.build_select(tiny, z, av, "").unwrap().into_float_value()
                } else {
                    av
                };
                super::ops_float::narrow_f32(e, av, frnd.unwrap_or(Rnd::N))
            };
            if sat {
                v = super::ops_float::saturate(e, v);
            }
            let mut r: BasicValueEnum = v.into();
            if ftz && dt == Type::F32 {
                r = super::ops_float::ftz_val(e, r);
            }
            r
        }
        (false, true) => {
            let av = src_f(e)?;
            let r = float_to_int(e, av, dt, irnd.unwrap_or(Rnd::Z));
            // GPU-verified NaN results: 0, except the sign-bit pattern (0x80.., signed or not)
            // for f64 sources and for 64-bit destinations.
            if at == Type::F64 || dt.bits() == 64 {
                let nan = e.b.build_float_compare(FloatPredicate::UNO, av, av, "").unwrap();
                let t = r.get_type();
                let m = t.const_int(1u64 << (dt.bits() - 1), false);
                e.b.build_select(nan, m, r, "").unwrap().into_int_value().into()
            } else {
                r.into()
            }
        }
        (true, false) => {
            let av = e.read_int(&i.operands[1], at)?;
            let m = frnd.unwrap_or(Rnd::N);
            if dt == Type::F16 {
                // Exact in f64 for ≤ 32-bit sources; wider ones are clamped to ±2^20 first
                // (anything that large overflows f16 the same way).
                let v = if at.bits() == 64 {
                    let lim = 1i64 << 20;
                    let t = av.get_type();
                    let (lo, hi) = (t.const_int((-lim) as u64, true), t.const_int(lim as u64, false));
                    let v = if at.is_signed() {
                        let c = e.b.build_int_compare(IntPredicate::SLT, av, lo, "").unwrap();
                        let v = e.b.build_select(c, lo, av, "").unwrap().into_int_value();
                        let c = e.b.build_int_compare(IntPredicate::SGT, v, hi, "").unwrap();
                        e.b.build_select(c, hi, v, "").unwrap().into_int_value()
                    } else {
                        let c = e.b.build_int_compare(IntPredicate::UGT, av, hi, "").unwrap();
                        e.b.build_select(c, hi, av, "").unwrap().into_int_value()
                    };
                    v
                } else {
                    av
                };
                let d = if at.is_signed() { e.b.build_signed_int_to_float(v, f64t, "").unwrap() } else { e.b.build_unsigned_int_to_float(v, f64t, "").unwrap() };
                let d = if sat { super::ops_half::sat_d(e, d) } else { d };
                let h = super::ops_half::round_f16(e, d, m);
                e.write(&i.operands[0], Type::B16, h.into())?;
                return Ok(());
            }
            let mut v = int_to_float(e, av, at.is_signed(), dt, m);
            if sat {
                v = super::ops_float::saturate(e, v);
            }
            v.into()
        }
        (false, false) => {
            // Integer to integer: extend/truncate per the source type; `.sat` clamps to the
            // destination's range.
            let av = e.read_int(&i.operands[1], at)?;
            let v = if sat { clamp_int(e, av, at.is_signed(), dt) } else { av };
            let v = e.resize(v, dt.bits(), at.is_signed());
            v.into()
        }
    };
    e.write(&i.operands[0], dt, r)
}

fn ext64<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    if v.get_type() == e.ctx().f64_type() {
        v
    } else {
        e.b.build_float_ext(v, e.ctx().f64_type(), "").unwrap()
    }
}

/// PTX ISA 7.0 cvt with `.bf16`/`.bf16x2` (after the 6.4 reference; sm_80 code uses it):
/// `cvt.f32.bf16 d, a` widens exactly; `cvt.{rn,rz}{.relu}{.satfinite}.bf16.f32 d, a` rounds;
/// `cvt.{rn,rz}{.relu}{.satfinite}.bf16x2.f32 d, a, b` rounds both, `a` to the upper half.
fn cvt_bf16<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let tys: Vec<&str> = i.mods.iter().copied().filter(|m| *m == "bf16" || *m == "bf16x2" || Type::from_str(m).is_some()).collect();
    let i32t = e.ctx().i32_type();
    let ops = &i.operands;
    match tys[..] {
        ["f32", "bf16"] if ops.len() == 2 => {
            // A bf16 is the upper half of the f32 with the same bits.
            let a = e.read_int(&ops[1], Type::B16)?;
            let a = e.b.build_int_z_extend(a, i32t, "").unwrap();
            let v = e.b.build_left_shift(a, i32t.const_int(16, false), "").unwrap();
            e.write(&ops[0], Type::B32, v.into())
        }
        ["bf16", "f32"] | ["bf16x2", "f32"] => {
            let pair = tys[0] == "bf16x2";
            if ops.len() != if pair { 3 } else { 2 } {
                return Err(e.err(i.span, if pair { "`cvt.bf16x2.f32` converts two sources: `cvt.rn.bf16x2.f32 d, a, b`" } else { "`cvt.bf16.f32` takes a destination and a source" }));
            }
            let rz = match rounding(i) {
                None | Some(Rnd::N) => false,
                Some(Rnd::Z) => true,
                Some(_) => return Err(e.err(i.span, "`cvt` to .bf16 rounds with .rn or .rz")),
            };
            let (relu, satfinite) = (i.has_mod("relu"), i.has_mod("satfinite"));
            let mut h = Vec::new();
            for op in &ops[1..] {
                let a = e.read_int(op, Type::B32)?;
                h.push(bf16_round(e, a, rz, relu, satfinite));
            }
            if pair {
                let hi = e.b.build_left_shift(h[0], i32t.const_int(16, false), "").unwrap();
                let v = e.b.build_or(hi, h[1], "").unwrap();
                e.write(&ops[0], Type::B32, v.into())
            } else {
                let v = e.b.build_int_truncate(h[0], e.ctx().i16_type(), "").unwrap();
                e.write(&ops[0], Type::B16, v.into())
            }
        }
        _ => Err(e.err(i.span, "ptxr converts .bf16 only from and to .f32 (`cvt.f32.bf16`, `cvt.rn.bf16.f32`, `cvt.rn.bf16x2.f32`)")),
    }
}

/// The bf16 bits (in the low half of an i32) of the f32 with bits `x`: the upper half,
/// rounded to nearest even (`.rn`) or truncated (`.rz`); NaN becomes the canonical 0x7fff;
/// `.relu` makes negative inputs +0; `.satfinite` turns an infinite result into the largest
/// finite value of its sign.
fn bf16_round<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, rz: bool, relu: bool, satfinite: bool) -> IntValue<'ctx> {
    let b = &e.b;
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let mag = b.build_and(x, c(0x7fff_ffff), "").unwrap();
    let nan = b.build_int_compare(IntPredicate::UGT, mag, c(0x7f80_0000), "").unwrap();
    let x = if relu { relu_bits(e, x) } else { x };
    let r = if rz {
        b.build_right_shift(x, c(16), false, "").unwrap()
    } else {
        let odd = b.build_and(b.build_right_shift(x, c(16), false, "").unwrap(), c(1), "").unwrap();
        let up = b.build_int_add(b.build_int_add(x, c(0x7fff), "").unwrap(), odd, "").unwrap();
        b.build_right_shift(up, c(16), false, "").unwrap()
    };
    let r = if satfinite {
        let inf = b.build_int_compare(IntPredicate::EQ, b.build_and(r, c(0x7fff), "").unwrap(), c(0x7f80), "").unwrap();
        let max = b.build_or(b.build_and(r, c(0x8000), "").unwrap(), c(0x7f7f), "").unwrap();
        b.build_select(inf, max, r, "").unwrap().into_int_value()
    } else {
        r
    };
    b.build_select(nan, c(0x7fff), r, "").unwrap().into_int_value()
}

/// PTX 6.5 `cvt.pack.sat.{u16,s16}.s32 d, a, b` and
/// `cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c`: a and b are clamped to the range of
/// the n-bit convert type; b goes to bits 0..n, a to bits n..2n, and the bits above come from
/// the low bits of c (the 16-bit forms fill all 32 bits).
fn cvt_pack<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let (bits, signed) = match i.mods.iter().find_map(|m| match *m {
        "u2" => Some((2, false)),
        "s2" => Some((2, true)),
        "u4" => Some((4, false)),
        "s4" => Some((4, true)),
        "u8" => Some((8, false)),
        "s8" => Some((8, true)),
        "u16" => Some((16, false)),
        "s16" => Some((16, true)),
        _ => None,
    }) {
        Some(t) => t,
        None => return Err(e.err(i.span, "`cvt.pack` needs a convert type")),
    };
    let ops = &i.operands;
    if ops.len() != if bits == 16 { 3 } else { 4 } {
        return Err(e.err(i.span, if bits == 16 { "`cvt.pack.sat.{u16,s16}.s32` takes d, a, b" } else { "`cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32` takes d, a, b, c" }));
    }
    let i32t = e.ctx().i32_type();
    let c = |v: i64| i32t.const_int(v as u64, true);
    let (lo, hi) = if signed { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
    let mask = (1i64 << bits) - 1;
    let sat = |e: &mut FnEmitter<'ctx, 'a, '_>, op| -> R<IntValue<'ctx>> {
        let v = e.read_int(op, Type::S32)?;
        let v = e.intrinsic("llvm.smax", &[i32t.into()], &[v.into(), c(lo).into()]).into_int_value();
        let v = e.intrinsic("llvm.smin", &[i32t.into()], &[v.into(), c(hi).into()]).into_int_value();
        Ok(e.b.build_and(v, c(mask), "").unwrap())
    };
    let a = sat(e, &ops[1])?;
    let b = sat(e, &ops[2])?;
    let mut d = e.b.build_or(b, e.b.build_left_shift(a, c(bits), "").unwrap(), "").unwrap();
    if bits < 16 {
        let cv = e.read_int(&ops[3], Type::B32)?;
        d = e.b.build_or(d, e.b.build_left_shift(cv, c(2 * bits), "").unwrap(), "").unwrap();
    }
    e.write(&ops[0], Type::B32, d.into())
}

/// PTX ISA 9.7.9.21 cvt with `.ue8m0x2` (PTX 8.6), pairs of unsigned exponent-only scale
/// factors: code `e` is 2^(e - 127) for e in 0..=254, 255 is NaN; there is no zero.
/// - `cvt.{rz,rp}{.satfinite}.ue8m0x2.f32 d, a, b`: a to d[15:8], b to d[7:0];
/// - `cvt.{rz,rp}{.satfinite}.ue8m0x2.bf16x2 d, a`: a's upper bf16 to d[15:8];
/// - `cvt.rn.bf16x2.ue8m0x2 d, a`: d[31:16] from a[15:8], exact.
///
/// A value's magnitude is rounded to a power of two: `.rz` down, `.rp` up; below 2^-127
/// (zero included) `.rz` gives code 0 and so does `.rp` up to 2^-127; NaN gives 255.
/// Beyond 2^127 with `.rp`, or an infinity, the code is 255 (NaN) and with `.satfinite`
/// 254. Decoding gives the power of two as a bf16 (code 0: the subnormal 0x0040) and
/// code 255 the bf16 NaN 0x7fff. These are the semantics of CUDA's `__nv_cvt_float_to_e8m0`
/// and `__nv_cvt_e8m0_to_bf16raw` (cuda_fp8.hpp), whose device code is these instructions.
fn cvt_ue8m0<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let ops = &i.operands;
    // The destination type comes first.
    let to_bf16 = matches!((i.mods.iter().position(|m| *m == "bf16x2"), i.mods.iter().position(|m| *m == "ue8m0x2")), (Some(b), Some(u)) if b < u);
    if to_bf16 {
        if !i.has_mod("rn") || ops.len() != 2 {
            return Err(e.err(i.span, "`cvt` from `.ue8m0x2` is `cvt.rn.bf16x2.ue8m0x2 d, a`"));
        }
        let a = e.read_int(&ops[1], Type::B16)?;
        let a = e.resize(a, 32, false);
        let mut d = c(0);
        for sh in [8u64, 0] {
            let x = e.b.build_and(e.b.build_right_shift(a, c(sh), false, "").unwrap(), c(0xff), "").unwrap();
            let pow = e.b.build_left_shift(x, c(7), "").unwrap();
            let zero = e.b.build_int_compare(IntPredicate::EQ, x, c(0), "").unwrap();
            let nan = e.b.build_int_compare(IntPredicate::EQ, x, c(0xff), "").unwrap();
            let v = e.b.build_select(zero, c(0x0040), pow, "").unwrap().into_int_value();
            let v = e.b.build_select(nan, c(0x7fff), v, "").unwrap().into_int_value();
            d = e.b.build_or(e.b.build_left_shift(d, c(16), "").unwrap(), v, "").unwrap();
        }
        return e.write(&ops[0], Type::B32, d.into());
    }
    let up = match (i.has_mod("rz"), i.has_mod("rp")) {
        (true, false) => false,
        (false, true) => true,
        _ => return Err(e.err(i.span, "`cvt` to `.ue8m0x2` rounds with .rz or .rp")),
    };
    let sat = i.has_mod("satfinite");
    // Each source's magnitude bits and its mantissa width: the f32s, or the bf16 halves.
    let (srcs, m): (Vec<IntValue<'ctx>>, u64) = if i.has_mod("f32") {
        if ops.len() != 3 {
            return Err(e.err(i.span, "`cvt` to `.ue8m0x2` from .f32 converts two sources: d, a, b"));
        }
        let mut v = Vec::new();
        for op in &ops[1..3] {
            let x = e.read_int(op, Type::B32)?;
            v.push(e.b.build_and(x, c(0x7fff_ffff), "").unwrap());
        }
        (v, 23)
    } else if i.has_mod("bf16x2") {
        if ops.len() != 2 {
            return Err(e.err(i.span, "`cvt` to `.ue8m0x2` from .bf16x2 converts one source: d, a"));
        }
        let w = e.read_int(&ops[1], Type::B32)?;
        (vec![e.b.build_and(e.b.build_right_shift(w, c(16), false, "").unwrap(), c(0x7fff), "").unwrap(), e.b.build_and(w, c(0x7fff), "").unwrap()], 7)
    } else {
        return Err(e.err(i.span, "`cvt` to `.ue8m0x2` converts from .f32 or .bf16x2"));
    };
    let inf = c(0xff << m);
    let mut d = c(0);
    for u in srcs {
        // The exponent field (NaN and infinity: 255), plus one with .rp for a finite value
        // strictly between powers of two above 2^-127 (the subnormal 1 << (m - 1)); then
        // .satfinite makes 255 from anything but NaN 254.
        let mut code = e.b.build_right_shift(u, c(m), false, "").unwrap();
        if up {
            let frac = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(u, c((1 << m) - 1), "").unwrap(), c(0), "").unwrap();
            let above = e.b.build_int_compare(IntPredicate::UGT, u, c(1 << (m - 1)), "").unwrap();
            let finite = e.b.build_int_compare(IntPredicate::ULT, u, inf, "").unwrap();
            let bump = e.b.build_and(e.b.build_and(frac, above, "").unwrap(), finite, "").unwrap();
            code = e.b.build_int_add(code, e.b.build_int_z_extend(bump, i32t, "").unwrap(), "").unwrap();
        }
        if sat {
            let not_nan = e.b.build_int_compare(IntPredicate::ULE, u, inf, "").unwrap();
            let top = e.b.build_int_compare(IntPredicate::EQ, code, c(0xff), "").unwrap();
            let clamp = e.b.build_and(not_nan, top, "").unwrap();
            code = e.b.build_select(clamp, c(0xfe), code, "").unwrap().into_int_value();
        }
        d = e.b.build_or(e.b.build_left_shift(d, c(8), "").unwrap(), code, "").unwrap();
    }
    let d = e.resize(d, 16, false);
    e.write(&ops[0], Type::B16, d.into())
}

/// PTX 7.0 `cvt.rna{.satfinite}.tf32.f32 d, a` and PTX 7.8 `cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32`:
/// the f32 rounded to TensorFloat-32 (10 mantissa bits; the low 13 bits of d are 0). `.rna`
/// rounds half away from zero, `.rn` half to even, `.rz` truncates; NaN gives the canonical
/// 0x7fffffff; a result that overflows is infinite, or with `.satfinite` the largest finite
/// tf32 (0x7f7fe000) of its sign, which `.satfinite` also makes of an infinite input;
/// `.relu` makes negative values +0.
fn cvt_tf32<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let tys: Vec<&str> = i.mods.iter().copied().filter(|m| *m == "tf32" || Type::from_str(m).is_some()).collect();
    if tys[..] != ["tf32", "f32"] || i.operands.len() != 2 {
        return Err(e.err(i.span, "ptxr converts to .tf32 from .f32 only: `cvt.rna.tf32.f32 d, a`"));
    }
    let rnd = i.mods.iter().find(|m| matches!(**m, "rna" | "rn" | "rz" | "rm" | "rp" | "rni" | "rzi" | "rmi" | "rpi")).copied();
    if !matches!(rnd, Some("rna" | "rn" | "rz")) {
        return Err(e.err(i.span, "`cvt` to .tf32 rounds with .rna, .rn or .rz"));
    }
    let x = e.read_int(&i.operands[1], Type::B32)?;
    let b = &e.b;
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let nan = b.build_int_compare(IntPredicate::UGT, b.build_and(x, c(0x7fff_ffff), "").unwrap(), c(0x7f80_0000), "").unwrap();
    let x = if i.has_mod("relu") { relu_bits(e, x) } else { x };
    let sign = b.build_and(x, c(0x8000_0000), "").unwrap();
    let mag = b.build_and(x, c(0x7fff_ffff), "").unwrap();
    let inf = b.build_int_compare(IntPredicate::EQ, mag, c(0x7f80_0000), "").unwrap();
    let up = match rnd {
        Some("rna") => c(0x1000),
        Some("rn") => b.build_int_add(c(0xfff), b.build_and(b.build_right_shift(mag, c(13), false, "").unwrap(), c(1), "").unwrap(), "").unwrap(),
        _ => c(0),
    };
    let r = b.build_and(b.build_int_add(mag, up, "").unwrap(), c(0xffff_e000), "").unwrap();
    let r = if i.has_mod("satfinite") {
        let over = b.build_int_compare(IntPredicate::UGE, r, c(0x7f80_0000), "").unwrap();
        let r = b.build_select(over, c(0x7f7f_e000), r, "").unwrap().into_int_value();
        r
    } else {
        b.build_select(inf, c(0x7f80_0000), r, "").unwrap().into_int_value()
    };
    let r = b.build_or(r, sign, "").unwrap();
    let r = b.build_select(nan, c(0x7fff_ffff), r, "").unwrap().into_int_value();
    e.write(&i.operands[0], Type::B32, r.into())
}

/// A small float format of `cvt`'s pairs: the 8-bit ones of PTX 7.8 (sm_89), the 6- and
/// 4-bit ones of PTX 8.6.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum F8 {
    /// 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, NaN is S.1111.111, the
    /// largest finite value 448 (0x7e).
    E4M3,
    /// 1 sign, 5 exponent (bias 15), 2 mantissa bits: the upper byte of an f16; the largest
    /// finite value 57344 (0x7b), infinity 0x7c.
    E5M2,
    /// The 4- and 6-bit floats of PTX 8.6 (`.e2m1x2`, `.e2m3x2`, `.e3m2x2`; the OCP
    /// microscaling formats), without infinities or NaN: e2m1 is 1 sign, 2 exponent (bias
    /// 1), 1 mantissa bit, largest 6 (0x7); e2m3 bias 1, 3 mantissa bits, largest 7.5 (0x1f);
    /// e3m2 bias 3, 2 mantissa bits, largest 28 (0x1f).
    E2M1,
    E2M3,
    E3M2,
}

impl F8 {
    fn parse(m: &str) -> Option<F8> {
        match m {
            "e4m3x2" => Some(F8::E4M3),
            "e5m2x2" => Some(F8::E5M2),
            "e2m1x2" => Some(F8::E2M1),
            "e2m3x2" => Some(F8::E2M3),
            "e3m2x2" => Some(F8::E3M2),
            _ => None,
        }
    }
    /// The bits each element of a pair takes in the packed register, and that register's
    /// type: e2m1 pairs are the nibbles of a `.b8`; the others bytes of a `.b16` (a 6-bit
    /// element's upper two bits zero).
    fn packing(self) -> (u64, Type) {
        match self {
            F8::E2M1 => (4, Type::B8),
            _ => (8, Type::B16),
        }
    }
    /// Mantissa bits and the exponent of the smallest normal.
    fn params(self) -> (u64, i64) {
        match self {
            F8::E4M3 => (3, -6),
            F8::E5M2 => (2, -14),
            F8::E2M1 => (1, 0),
            F8::E2M3 => (3, 0),
            F8::E3M2 => (2, -2),
        }
    }
    fn max_finite(self) -> u64 {
        match self {
            F8::E4M3 => 0x7e,
            F8::E5M2 => 0x7b,
            F8::E2M1 => 0x7,
            F8::E2M3 | F8::E3M2 => 0x1f,
        }
    }
    /// The position of the sign bit (the format's width less one).
    fn sign_bit(self) -> u64 {
        match self {
            F8::E4M3 | F8::E5M2 => 7,
            F8::E2M1 => 3,
            F8::E2M3 | F8::E3M2 => 5,
        }
    }
}

/// PTX ISA 9.7.9.21 cvt with the pairs of small floats ([`F8`]), the element from a (or the
/// upper half of a) in the upper part of d ([`F8::packing`]):
/// - `cvt.rn.satfinite{.relu}.f8x2type.f32 d, a, b` (PTX 7.8) and the 4- and 6-bit forms
///   `cvt.rn.satfinite{.relu}.{e2m1x2,e2m3x2,e3m2x2}.f32 d, a, b` (PTX 8.6);
/// - `cvt.rn.satfinite{.relu}.f8x2type.f16x2 d, a`;
/// - `cvt.rn{.relu}.f16x2.{f8x2type,e2m1x2,e2m3x2,e3m2x2} d, a` (exact).
fn cvt_f8<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, f8: F8) -> R<()> {
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let ops = &i.operands;
    let relu = i.has_mod("relu");
    let (lane, packed) = f8.packing();
    // The destination type comes first.
    let to_f8 = i.mods.iter().find(|m| F8::parse(m).is_some() || matches!(**m, "f16x2" | "f32")).map_or(false, |m| F8::parse(m).is_some());
    if !i.has_mod("rn") {
        return Err(e.err(i.span, "`cvt` with 8-, 6- and 4-bit floats rounds with .rn"));
    }
    if to_f8 {
        let sat = i.has_mod("satfinite");
        let srcs: Vec<IntValue<'ctx>> = if i.has_mod("f32") {
            if ops.len() != 3 {
                return Err(e.err(i.span, "`cvt.rn.satfinite` to a pair from .f32 converts two sources: d, a, b"));
            }
            vec![e.read_int(&ops[1], Type::B32)?, e.read_int(&ops[2], Type::B32)?]
        } else {
            let w = e.read_int(&ops[1], Type::B32)?;
            let mut v = Vec::new();
            for sh in [16, 0] {
                let h = e.b.build_right_shift(w, c(sh), false, "").unwrap();
                let h = e.resize(h, 16, false);
                let f = super::ops_half::h2f(e, h);
                v.push(e.b.build_bit_cast(f, i32t, "").unwrap().into_int_value());
            }
            v
        };
        let hi = f32_to_f8(e, srcs[0], f8, sat, relu);
        let lo = f32_to_f8(e, srcs[1], f8, sat, relu);
        let d = e.b.build_or(e.b.build_left_shift(hi, c(lane), "").unwrap(), lo, "").unwrap();
        let d = e.resize(d, packed.bits(), false);
        return e.write(&ops[0], packed, d.into());
    }
    let a = e.read_int(&ops[1], packed)?;
    let a = e.resize(a, 32, false);
    let mask = c((1 << lane) - 1);
    let hi = f8_to_f16(e, e.b.build_and(e.b.build_right_shift(a, c(lane), false, "").unwrap(), mask, "").unwrap(), f8, relu);
    let lo = f8_to_f16(e, e.b.build_and(a, mask, "").unwrap(), f8, relu);
    let d = e.b.build_or(e.b.build_left_shift(hi, c(16), "").unwrap(), lo, "").unwrap();
    e.write(&ops[0], Type::B32, d.into())
}

/// The small float (in the low bits of an i32) nearest to the f32 with bits `x`, ties to
/// even, subnormals kept. NaN gives 0x7f (the 4- and 6-bit formats, without NaN: their
/// largest value). With `sat` (.satfinite) a magnitude above the largest finite value
/// (infinity included) gives the largest finite value of its sign; without it, e5m2
/// overflows to infinity and e4m3, which has none, to NaN. `.relu` makes negative values +0
/// (-0 stays, as with .bf16).
fn f32_to_f8<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, f8: F8, sat: bool, relu: bool) -> IntValue<'ctx> {
    let b = &e.b;
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let (m, emin) = f8.params();
    let nan = b.build_int_compare(IntPredicate::UGT, b.build_and(x, c(0x7fff_ffff), "").unwrap(), c(0x7f80_0000), "").unwrap();
    let x = if relu { relu_bits(e, x) } else { x };
    let mag = b.build_and(x, c(0x7fff_ffff), "").unwrap();
    let sb = f8.sign_bit();
    let sign = b.build_and(b.build_right_shift(x, c(31 - sb), false, "").unwrap(), c(1 << sb), "").unwrap();
    // Significand (24 bits with the hidden one) and unbiased exponent of the f32.
    let bexp = b.build_right_shift(mag, c(23), false, "").unwrap();
    let normal = b.build_int_compare(IntPredicate::NE, bexp, c(0), "").unwrap();
    let frac = b.build_and(mag, c(0x7f_ffff), "").unwrap();
    let sig = b.build_select(normal, b.build_or(frac, c(0x80_0000), "").unwrap(), frac, "").unwrap().into_int_value();
    let bexp1 = b.build_select(normal, bexp, c(1), "").unwrap().into_int_value();
    // eff = max(exponent, emin), with exponent = bexp1 - 127, kept biased by 127.
    let emin_b = c((emin + 127) as u64);
    let below = b.build_int_compare(IntPredicate::ULT, bexp1, emin_b, "").unwrap();
    let eff = b.build_select(below, emin_b, bexp1, "").unwrap().into_int_value();
    // The value is sig * 2^(exponent - 23); its multiple of the format's quantum
    // 2^(eff - m) is sig >> (23 - m + eff - exponent), rounded half to even.
    let shift = b.build_int_add(c(23 - m), b.build_int_sub(eff, bexp1, "").unwrap(), "").unwrap();
    let shift = e.intrinsic("llvm.umin", &[i32t.into()], &[shift.into(), c(31).into()]).into_int_value();
    let n = b.build_right_shift(sig, shift, false, "").unwrap();
    let one = c(1);
    let rem = b.build_and(sig, b.build_int_sub(b.build_left_shift(one, shift, "").unwrap(), one, "").unwrap(), "").unwrap();
    let half = b.build_left_shift(one, b.build_int_sub(shift, one, "").unwrap(), "").unwrap();
    let gt = b.build_int_compare(IntPredicate::UGT, rem, half, "").unwrap();
    let tie = b.build_int_compare(IntPredicate::EQ, rem, half, "").unwrap();
    let odd = b.build_int_compare(IntPredicate::NE, b.build_and(n, one, "").unwrap(), c(0), "").unwrap();
    let up = b.build_or(gt, b.build_and(tie, odd, "").unwrap(), "").unwrap();
    let n = b.build_int_add(n, b.build_int_z_extend(up, i32t, "").unwrap(), "").unwrap();
    // Encoding: (eff - emin) << m + n (n carries into the exponent field when it reaches
    // 2^(m+1); below the normal range eff = emin and n is the subnormal mantissa).
    let enc = b.build_int_add(b.build_left_shift(b.build_int_sub(eff, emin_b, "").unwrap(), c(m), "").unwrap(), n, "").unwrap();
    let max = c(f8.max_finite());
    let over = b.build_int_compare(IntPredicate::UGT, enc, max, "").unwrap();
    let over_val = if sat {
        max
    } else {
        match f8 {
            F8::E5M2 => c(0x7c),
            F8::E4M3 => c(0x7f),
            // (.satfinite is required for these)
            _ => max,
        }
    };
    let enc = b.build_select(over, over_val, enc, "").unwrap().into_int_value();
    let r = b.build_or(enc, sign, "").unwrap();
    // A NaN has no encoding in the 4- and 6-bit formats: it becomes their largest finite
    // value, positive (ptxr's choice; not yet compared with a GPU).
    let nan_code = match f8 {
        F8::E4M3 | F8::E5M2 => c(0x7f),
        _ => max,
    };
    b.build_select(nan, nan_code, r, "").unwrap().into_int_value()
}

/// The f32 value of the finite e4m3, e2m1, e2m3 or e3m2 code in the low bits of `v`, sign
/// included: exact (also the elements of `tcgen05.mma`'s 4-bit kinds).
pub(super) fn small_float_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, f8: F8) -> inkwell::values::FloatValue<'ctx> {
    let b = &e.b;
    let (i32t, f32t) = (e.ctx().i32_type(), e.ctx().f32_type());
    let c = |x: u64| i32t.const_int(x, false);
    let (m, emin) = f8.params();
    let sb = f8.sign_bit();
    let mag = b.build_and(v, c((1 << sb) - 1), "").unwrap();
    let exp = b.build_right_shift(mag, c(m), false, "").unwrap();
    let man = b.build_and(mag, c((1 << m) - 1), "").unwrap();
    // value = sig * 2^(emin - m + max(exp - 1, 0)), sig = man with the hidden bit when exp > 0
    let sub = b.build_int_compare(IntPredicate::EQ, exp, c(0), "").unwrap();
    let sig = b.build_select(sub, man, b.build_or(man, c(1 << m), "").unwrap(), "").unwrap().into_int_value();
    let up = b.build_select(sub, c(0), b.build_int_sub(exp, c(1), "").unwrap(), "").unwrap().into_int_value();
    let scale = b.build_bit_cast(b.build_left_shift(b.build_int_add(up, c((127 + emin - m as i64) as u64), "").unwrap(), c(23), "").unwrap(), f32t, "").unwrap().into_float_value();
    let f = b.build_float_mul(b.build_unsigned_int_to_float(sig, f32t, "").unwrap(), scale, "").unwrap();
    let bits = b.build_bit_cast(f, i32t, "").unwrap().into_int_value();
    let sign = b.build_left_shift(b.build_and(v, c(1 << sb), "").unwrap(), c(31 - sb), "").unwrap();
    b.build_bit_cast(b.build_or(bits, sign, "").unwrap(), f32t, "").unwrap().into_float_value()
}

/// The f16 bits (in the low half of an i32) of the finite e4m3, e2m1, e2m3 or e3m2 value in
/// the low bits of `v`, sign included: exact (every such value is an f16).
fn small_float_bits<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, f8: F8) -> IntValue<'ctx> {
    let b = &e.b;
    let h = b.build_float_trunc(small_float_f32(e, v, f8), e.ctx().f16_type(), "").unwrap();
    b.build_int_z_extend(b.build_bit_cast(h, e.ctx().i16_type(), "").unwrap().into_int_value(), e.ctx().i32_type(), "").unwrap()
}

/// The f16 bits (in the low half of an i32) of the small float ([`F8`]) in the low bits of
/// `v`: exact. An e4m3 NaN gives the canonical f16 NaN 0x7fff; e5m2 is the upper byte of an
/// f16. `.relu` makes negative values +0 (-0 stays).
fn f8_to_f16<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, f8: F8, relu: bool) -> IntValue<'ctx> {
    let b = &e.b;
    let i32t = e.ctx().i32_type();
    let c = |x: u64| i32t.const_int(x, false);
    let sb = f8.sign_bit();
    let mag = b.build_and(v, c((1 << sb) - 1), "").unwrap();
    let (h, nan) = match f8 {
        F8::E5M2 => (b.build_left_shift(v, c(8), "").unwrap(), b.build_int_compare(IntPredicate::UGT, mag, c(0x7c), "").unwrap()),
        F8::E4M3 => (small_float_bits(e, v, f8), b.build_int_compare(IntPredicate::EQ, mag, c(0x7f), "").unwrap()),
        // The 4- and 6-bit formats have no NaN.
        _ => (small_float_bits(e, v, f8), e.ctx().bool_type().const_zero()),
    };
    let h = if relu {
        // negative and nonzero (-0 stays, as in f32_to_f8), not NaN
        let neg = b.build_int_compare(IntPredicate::NE, b.build_and(v, c(1 << sb), "").unwrap(), c(0), "").unwrap();
        let nonzero = b.build_int_compare(IntPredicate::NE, mag, c(0), "").unwrap();
        let clamp = b.build_and(b.build_and(neg, nonzero, "").unwrap(), b.build_not(nan, "").unwrap(), "").unwrap();
        b.build_select(clamp, c(0), h, "").unwrap().into_int_value()
    } else {
        h
    };
    match f8 {
        F8::E4M3 => b.build_select(nan, c(0x7fff), h, "").unwrap().into_int_value(),
        _ => h,
    }
}

/// `.relu` on the bits of an f32: a negative nonzero value becomes +0 (-0 stays). Callers
/// test for NaN before, since a NaN with its sign bit set becomes +0 here.
fn relu_bits<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>) -> IntValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let neg = e.b.build_int_compare(IntPredicate::UGT, x, i32t.const_int(0x8000_0000, false), "").unwrap();
    e.b.build_select(neg, i32t.const_zero(), x, "").unwrap().into_int_value()
}

/// `.relu`: negative values become +0; NaN stays NaN.
fn relu_d<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let t = v.get_type();
    let lt = e.b.build_float_compare(FloatPredicate::OLT, v, t.const_float(0.0), "").unwrap();
    e.b.build_select(lt, t.const_float(0.0), v, "").unwrap().into_float_value()
}

fn round_int<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: inkwell::values::FloatValue<'ctx>, m: Rnd) -> inkwell::values::FloatValue<'ctx> {
    let name = match m {
        Rnd::N => "llvm.roundeven",
        Rnd::Z => "llvm.trunc",
        Rnd::M => "llvm.floor",
        Rnd::P => "llvm.ceil",
    };
    e.intrinsic(name, &[v.get_type().into()], &[v.into()]).into_float_value()
}

/// Float → integer with rounding `m`; NaN → 0; out of range saturates (9.7.8.14: float to
/// integer conversions saturate to the destination range).
fn float_to_int<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: inkwell::values::FloatValue<'ctx>, dt: Type, m: Rnd) -> IntValue<'ctx> {
    let r = round_int(e, v, m);
    let t = int_t(e.ctx(), dt.bits());
    let signed = dt.is_signed();
    let name = if signed { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
    let ft = r.get_type();
    e.intrinsic(name, &[t.into(), ft.into()], &[r.into()]).into_int_value()
}

/// Integer → float with rounding `m` (exact via an f64 round trip for ≤ 32-bit sources).
fn int_to_float<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, signed: bool, dt: Type, m: Rnd) -> inkwell::values::FloatValue<'ctx> {
    let ft = e.val_t(dt).into_float_type();
    let w = v.get_type().get_bit_width();
    if m == Rnd::N || (w <= 32 && dt == Type::F64) {
        return if signed { e.b.build_signed_int_to_float(v, ft, "").unwrap() } else { e.b.build_unsigned_int_to_float(v, ft, "").unwrap() };
    }
    if w <= 32 && dt == Type::F32 {
        let f64t = e.ctx().f64_type();
        let x = if signed { e.b.build_signed_int_to_float(v, f64t, "").unwrap() } else { e.b.build_unsigned_int_to_float(v, f64t, "").unwrap() };
        return super::ops_float::narrow_f32(e, x, m);
    }
    // 64-bit sources: nearest conversion, then step one ulp toward the exact value.
    let r = if signed { e.b.build_signed_int_to_float(v, ft, "").unwrap() } else { e.b.build_unsigned_int_to_float(v, ft, "").unwrap() };
    let back = if signed { e.intrinsic("llvm.fptosi.sat", &[v.get_type().into(), ft.into()], &[r.into()]) } else { e.intrinsic("llvm.fptoui.sat", &[v.get_type().into(), ft.into()], &[r.into()]) }.into_int_value();
    // r too big (r > v) or too small (r < v); saturation at 2^63/2^64 means r > v.
    let (gt, lt) = if signed {
        (e.b.build_int_compare(IntPredicate::SGT, back, v, "").unwrap(), e.b.build_int_compare(IntPredicate::SLT, back, v, "").unwrap())
    } else {
        (e.b.build_int_compare(IntPredicate::UGT, back, v, "").unwrap(), e.b.build_int_compare(IntPredicate::ULT, back, v, "").unwrap())
    };
    let limit = if signed { (1u64 << 63) as f64 } else { 18446744073709551616.0 };
    let at_limit = e.b.build_float_compare(FloatPredicate::OGE, r, ft.const_float(limit), "").unwrap();
    let gt = e.b.build_or(gt, at_limit, "").unwrap();
    let bits = e.to_bits(r.into());
    let it = bits.get_type();
    let one = it.const_int(1, false);
    let neg = e.b.build_float_compare(FloatPredicate::OLT, r, ft.const_float(0.0), "").unwrap();
    // Magnitude step on the bit image: toward zero = dec, away = inc.
    let inc = e.b.build_int_add(bits, one, "").unwrap();
    let dec = e.b.build_int_sub(bits, one, "").unwrap();
    let down = match m {
        Rnd::M => gt,
        Rnd::Z => e.b.build_and(gt, e.b.build_not(neg, "").unwrap(), "").unwrap(),
        _ => e.ctx().bool_type().const_zero(),
    };
    let up = match m {
        Rnd::P => lt,
        Rnd::Z => e.b.build_and(lt, neg, "").unwrap(),
        _ => e.ctx().bool_type().const_zero(),
    };
    // For positive r: down = dec, up = inc; for negative r: down = inc (more negative), up = dec.
    let down_bits = e.b.build_select(neg, inc, dec, "").unwrap().into_int_value();
    let up_bits = e.b.build_select(neg, dec, inc, "").unwrap().into_int_value();
    let out = e.b.build_select(down, down_bits, bits, "").unwrap().into_int_value();
    let out = e.b.build_select(up, up_bits, out, "").unwrap().into_int_value();
    e.from_bits(out, dt).into_float_value()
}

/// Clamps an integer to the range of `dt` (cvt.sat between integer types).
fn clamp_int<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, signed: bool, dt: Type) -> IntValue<'ctx> {
    let w = v.get_type().get_bit_width();
    let ww = w.max(dt.bits()) + 1;
    let x = e.resize(v, ww, signed);
    let t = x.get_type();
    let (lo, hi): (i128, i128) = if dt.is_signed() {
        (-(1i128 << (dt.bits() - 1)), (1i128 << (dt.bits() - 1)) - 1)
    } else {
        (0, (1i128 << dt.bits()) - 1)
    };
    let c = |k: i128| t.const_int_arbitrary_precision(&[k as u64, (k >> 64) as u64]);
    let lo_v = c(lo);
    let hi_v = c(hi);
    let below = e.b.build_int_compare(IntPredicate::SLT, x, lo_v, "").unwrap();
    let above = e.b.build_int_compare(IntPredicate::SGT, x, hi_v, "").unwrap();
    let r = e.b.build_select(below, lo_v, x, "").unwrap().into_int_value();
    let r = e.b.build_select(above, hi_v, r, "").unwrap().into_int_value();
    e.resize(r, dt.bits(), false)
}
