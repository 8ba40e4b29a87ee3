//! Floating point (9.7.3) and half precision (9.7.4).
//!
//! Rounding: LLVM's arithmetic rounds to nearest even. The directed modes `.rz/.rm/.rp` are
//! exact here: each operation is computed as an unevaluated sum `hi + lo` of its exact
//! result (`hi` rounded to nearest, `lo` the exact residual from TwoSum / an FMA), and the
//! rounded result is moved one ulp toward the mode's direction when the residual says the
//! nearest value lies on the wrong side. f32 operations are computed in f64 first.

use super::func::{types_of, FnEmitter, R};
use crate::syntax::ast::{Instr, Type};
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rnd {
    N,
    Z,
    M,
    P,
}

pub fn rounding(i: &Instr) -> Option<Rnd> {
    i.mods.iter().find_map(|m| match *m {
        "rn" => Some(Rnd::N),
        "rz" => Some(Rnd::Z),
        "rm" => Some(Rnd::M),
        "rp" => Some(Rnd::P),
        _ => None,
    })
}

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if i.has_mod("f32x2") && matches!(i.opcode.name, "add" | "sub" | "mul" | "fma") {
        return f32x2(e, i).map(|_| true);
    }
    let tys = types_of(i);
    let Some(&ty) = tys.last() else { return Ok(false) };
    if !matches!(ty, Type::F32 | Type::F64) {
        return Ok(false);
    }
    let op = i.opcode.name;
    let rnd = rounding(i).unwrap_or(Rnd::N);
    let ftz = i.has_mod("ftz") && ty == Type::F32;
    let sat = i.has_mod("sat");
    let n_src = match op {
        // min/max.f32 take a third input (PTX ISA 9.0 9.7.3.11-12, sm_100)
        "min" | "max" if ty == Type::F32 && i.operands.len() == 4 => 3,
        "add" | "sub" | "mul" | "div" | "min" | "max" | "copysign" => 2,
        "fma" | "mad" => 3,
        "neg" | "abs" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => 1,
        "testp" => return testp(e, i, ty).map(|_| true),
        _ => return Ok(false),
    };
    let mut src = Vec::with_capacity(3);
    for k in 0..n_src {
        let v = e.read(&i.operands[1 + k], ty)?;
        src.push(if ftz { ftz_val(e, v) } else { v }.into_float_value());
    }
    let approx = i.has_mod("approx");
    let ft = src[0].get_type();
    // PTX ISA 9.7.3.14 / 9.7.3.17: the `.approx.ftz.f64` forms work on the upper 32 bits only.
    if ty == Type::F64 && approx && i.has_mod("ftz") && matches!(op, "rcp" | "rsqrt") {
        let r = gross_f64(e, src[0], op == "rsqrt");
        return e.write(&i.operands[0], ty, r.into()).map(|_| true);
    }
    let r: FloatValue<'ctx> = match op {
        // PTX ISA 9.7.3.3-5 add/sub/mul
        "add" | "sub" | "mul" => {
            let b = if op == "sub" { e.b.build_float_neg(src[1], "").unwrap() } else { src[1] };
            if op == "mul" {
                rounded_mul(e, src[0], b, ty, rnd)
            } else {
                rounded_add(e, src[0], b, ty, rnd)
            }
        }
        // PTX ISA 9.7.3.6-7 fma/mad (mad.f32 without a rounding modifier is mad.rn, see the errata)
        "fma" | "mad" => rounded_fma(e, src[0], src[1], src[2], ty, rnd),
        // PTX ISA 9.7.3.8 div: `.approx`/`.full` are within their stated error of the exact
        // quotient, so ptxr computes them correctly rounded.
        "div" => {
            if approx && ty == Type::F32 {
                // a * (1/b) with the reciprocal flushed to zero (GPU-verified: a divisor above
                // 2^126 gives 0); within the stated 2 ulp for b in [2^-126, 2^126].
                let rc = e.b.build_float_div(ft.const_float(1.0), src[1], "").unwrap();
                let rc = ftz_val(e, rc.into()).into_float_value();
                e.b.build_float_mul(src[0], rc, "").unwrap()
            } else if approx || i.has_mod("full") || rnd == Rnd::N {
                e.b.build_float_div(src[0], src[1], "").unwrap()
            } else {
                rounded_div(e, src[0], src[1], ty, rnd)
            }
        }
        // PTX ISA 9.7.3.9-10 abs/neg: sign-bit operations (NaN payloads kept).
        "neg" => e.b.build_float_neg(src[0], "").unwrap(),
        "abs" => fabs(e, src[0]),
        // PTX ISA 9.7.3.11-12 min/max: a NaN input yields the other input; -0 < +0. With
        // `.abs` (PTX 7.2/8.8) the inputs' magnitudes are compared; `.xorsign` (with `.abs`,
        // two inputs) gives the result the XOR of the inputs' signs; neither touches a NaN
        // result. A third input c (PTX 8.8) is compared with the result of a and b.
        "min" | "max" => {
            let xorsign = e.b.build_xor(e.to_bits(src[0].into()), e.to_bits(src[1].into()), "").unwrap();
            let src: Vec<FloatValue<'ctx>> = if i.has_mod("abs") { src.iter().map(|x| fabs(e, *x)).collect() } else { src.clone() };
            let pair = |e: &FnEmitter<'ctx, '_, '_>, x: FloatValue<'ctx>, y: FloatValue<'ctx>| {
                let r = min_max(e, x, y, op == "min");
                if i.has_mod("NaN") {
                    // `.NaN` (PTX ISA 7.0): a NaN input makes the result the canonical NaN.
                    let any = e.b.build_or(is_nan(e, x), is_nan(e, y), "").unwrap();
                    let nan = e.b.build_float_add(x, y, "").unwrap();
                    e.b.build_select(any, nan, r, "").unwrap().into_float_value()
                } else {
                    r
                }
            };
            let r = pair(e, src[0], src[1]);
            let r = match src.get(2) {
                Some(c) => pair(e, r, *c),
                None => r,
            };
            if i.has_mod("xorsign") {
                let bits = e.to_bits(r.into());
                let it = bits.get_type();
                let sign = it.const_int(1u64 << 31, false);
                let s = e.b.build_and(xorsign, sign, "").unwrap();
                let m = e.b.build_and(bits, sign.const_not(), "").unwrap();
                let signed = e.from_bits(e.b.build_or(s, m, "").unwrap(), ty).into_float_value();
                let nan = is_nan(e, r);
                e.b.build_select(nan, r, signed, "").unwrap().into_float_value()
            } else {
                r
            }
        }
        // PTX ISA 9.7.3.2 copysign: sign of a, magnitude of b.
        // Bit operations rather than llvm.copysign: NVPTX lowers that intrinsic to abs/neg/selp,
        // which canonicalize or quiet NaN payloads that copysign must keep.
        "copysign" => {
            let a = e.to_bits(src[0].into());
            let b = e.to_bits(src[1].into());
            let it = a.get_type();
            let sign = it.const_int(1u64 << (it.get_bit_width() - 1), false);
            let s = e.b.build_and(a, sign, "").unwrap();
            let m = e.b.build_and(b, sign.const_not(), "").unwrap();
            let r = e.b.build_or(s, m, "").unwrap();
            e.from_bits(r, ty).into_float_value()
        }
        // PTX ISA 9.7.3.13 rcp
        "rcp" => {
            let one = ft.const_float(1.0);
            if approx || rnd == Rnd::N {
                e.b.build_float_div(one, src[0], "").unwrap()
            } else {
                rounded_div(e, one, src[0], ty, rnd)
            }
        }
        // PTX ISA 9.7.3.15 sqrt
        "sqrt" => {
            if approx || rnd == Rnd::N {
                e.intrinsic("llvm.sqrt", &[ft.into()], &[src[0].into()]).into_float_value()
            } else {
                rounded_sqrt(e, src[0], ty, rnd)
            }
        }
        // PTX ISA 9.7.3.16 rsqrt.approx: 1/sqrt(a), within 1.5 ulp.
        "rsqrt" => {
            let s = e.intrinsic("llvm.sqrt", &[ft.into()], &[src[0].into()]).into_float_value();
            e.b.build_float_div(ft.const_float(1.0), s, "").unwrap()
        }
        // PTX ISA 9.7.3.18-21 sin/cos/lg2/ex2.approx: the host libm (far more accurate than the
        // stated bounds); special values follow IEEE, which matches the spec's tables.
        "sin" | "cos" | "lg2" | "ex2" => {
            // GPU-verified: sin/cos flush subnormal inputs even without .ftz (the spec's table).
            let x = if matches!(op, "sin" | "cos") { ftz_val(e, src[0].into()).into_float_value() } else { src[0] };
            let src = [x];
            if op == "ex2" && ty == Type::F32 {
                exp2_f32(e, src[0])
            } else if op == "lg2" && ty == Type::F32 {
                log2_f32(e, src[0])
            } else {
                let name = match op {
                    "sin" => "llvm.sin",
                    "cos" => "llvm.cos",
                    "lg2" => "llvm.log2",
                    _ => "llvm.exp2",
                };
                e.intrinsic(name, &[ft.into()], &[src[0].into()]).into_float_value()
            }
        }
        "tanh" => {
            let f = e.m.module.get_function(if ty == Type::F32 { "tanhf" } else { "tanh" }).unwrap_or_else(|| {
                let t = src[0].get_type();
                e.m.module.add_function(if ty == Type::F32 { "tanhf" } else { "tanh" }, t.fn_type(&[t.into()], false), None)
            });
            e.b.build_call(f, &[src[0].into()], "").unwrap().try_as_basic_value().basic().unwrap().into_float_value()
        }
        _ => return Ok(false),
    };
    // NaN results (GPU-verified on an H100): every f32 instruction but copysign, abs and neg
    // included, returns the canonical NaN 0x7fffffff; f64 instructions propagate a NaN
    // operand (quieted; the last of several) and otherwise produce 0xfff8000000000000.
    let r = match ty {
        Type::F32 if op != "copysign" && !e.nan_free_dest(&i.operands[0]) => canon_nan(e, r),
        Type::F32 if op != "copysign" => r,
        Type::F64 if matches!(op, "neg" | "abs") => {
            // GPU-verified: abs.f64/neg.f64 return a NaN input quieted, sign unchanged.
            nan_f64(e, r, &src)
        }
        Type::F64 if op != "copysign" => {
            // GPU-measured priority among several NaN operands (the last listed wins): fma/mad
            // returns b over c over a; div returns a over b; the others return the second.
            let order = match (op, src.len()) {
                ("fma" | "mad", 3) => vec![src[0], src[2], src[1]],
                ("div", 2) => vec![src[1], src[0]],
                _ => src.clone(),
            };
            nan_f64(e, r, &order)
        }
        _ => r,
    };
    let mut r: BasicValueEnum = r.into();
    if sat {
        r = saturate(e, r.into_float_value()).into();
    }
    if ftz {
        r = ftz_val(e, r);
    }
    e.write(&i.operands[0], ty, r).map(|_| true)
}

/// `add`/`sub`/`mul`/`fma` `{.rnd}{.ftz}{.sat}.f32x2` (PTX ISA 9.0 9.7.3.3-6, PTX 8.6, sm_100):
/// the `.f32` operation on each half of 64-bit operands (element 0 in the low 32 bits), with
/// the same rounding (`.rn` unless given; `fma` must give one), flushing, saturation and
/// canonical NaN as `.f32`.
fn f32x2<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, i64t, f32t) = (ctx.i32_type(), ctx.i64_type(), ctx.f32_type());
    let op = i.opcode.name;
    let rnd = rounding(i).unwrap_or(Rnd::N);
    let ftz = i.has_mod("ftz");
    let n_src = if op == "fma" { 3 } else { 2 };
    if i.operands.len() != n_src + 1 {
        return Err(e.err(i.span, format!("`{op}.f32x2` takes {} operands", n_src + 1)));
    }
    let mut srcs = Vec::new();
    for k in 0..n_src {
        srcs.push(e.read_int(&i.operands[1 + k], Type::B64)?);
    }
    let mut out = i64t.const_zero();
    for half in 0..2u64 {
        let mut x = Vec::new();
        for s in &srcs {
            let w = e.b.build_right_shift(*s, i64t.const_int(32 * half, false), false, "").unwrap();
            let w = e.b.build_int_truncate(w, i32t, "").unwrap();
            let f: BasicValueEnum = e.b.build_bit_cast(w, f32t, "").unwrap();
            x.push(if ftz { ftz_val(e, f) } else { f }.into_float_value());
        }
        let r = match op {
            "add" => rounded_add(e, x[0], x[1], Type::F32, rnd),
            "sub" => {
                let nb = e.b.build_float_neg(x[1], "").unwrap();
                rounded_add(e, x[0], nb, Type::F32, rnd)
            }
            "mul" => rounded_mul(e, x[0], x[1], Type::F32, rnd),
            _ => rounded_fma(e, x[0], x[1], x[2], Type::F32, rnd),
        };
        let r = canon_nan(e, r);
        let mut r: BasicValueEnum = r.into();
        if i.has_mod("sat") {
            r = saturate(e, r.into_float_value()).into();
        }
        if ftz {
            r = ftz_val(e, r);
        }
        let w = e.b.build_bit_cast(r, i32t, "").unwrap().into_int_value();
        let w = e.b.build_int_z_extend(w, i64t, "").unwrap();
        let w = e.b.build_left_shift(w, i64t.const_int(32 * half, false), "").unwrap();
        out = e.b.build_or(out, w, "").unwrap();
    }
    e.write(&i.operands[0], Type::B64, out.into())
}

/// `2^x` for an f32 `x` (PTX ISA 9.7.3.21 ex2.approx.f32), as straight-line code that LLVM
/// vectorizes (a call of the host's `exp2f` runs once per lane): evaluated in f64 as
/// `2^n * 2^f` with `n = round(x)`, `|f| <= 1/2`, and `2^f = e^(f ln 2)` by its Taylor series
/// to degree 13 (relative error below 1e-17 on that interval), then rounded to f32 once. So
/// the result is the correctly rounded `2^x` except when `2^x` lies within about 1e-16 of
/// a midpoint between two floats, far inside the spec's bound (absolute error 2^-22.5 on the
/// primary range). Special values as the spec's table: -inf gives +0, +inf gives +inf, NaN
/// stays NaN; results below the f32 range round to subnormals or zero as f64 -> f32 does.
fn exp2_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let ctx = e.ctx();
    let f64t = ctx.f64_type();
    let i64t = ctx.i64_type();
    let b = &e.b;
    let xd = b.build_float_ext(x, f64t, "").unwrap();
    // Beyond +-200 the result is inf or 0 in f32 either way; this keeps 2^n an f64 normal.
    let xd = e.intrinsic("llvm.minnum", &[f64t.into()], &[xd.into(), f64t.const_float(200.0).into()]).into_float_value();
    let xd = e.intrinsic("llvm.maxnum", &[f64t.into()], &[xd.into(), f64t.const_float(-200.0).into()]).into_float_value();
    let n = e.intrinsic("llvm.rint", &[f64t.into()], &[xd.into()]).into_float_value();
    let f = b.build_float_sub(xd, n, "").unwrap();
    let t = b.build_float_mul(f, f64t.const_float(std::f64::consts::LN_2), "").unwrap();
    // Horner: sum of t^k / k! for k = 0..=13.
    let mut fact = 1.0f64;
    let coef: Vec<f64> = (0..=13)
        .map(|k| {
            if k > 0 {
                fact *= k as f64;
            }
            1.0 / fact
        })
        .collect();
    let mut p = f64t.const_float(coef[13]);
    for k in (0..13).rev() {
        p = e.intrinsic("llvm.fma", &[f64t.into()], &[p.into(), t.into(), f64t.const_float(coef[k]).into()]).into_float_value();
    }
    // n is in [-200, 200]: converted through i32, which AVX2 converts in vectors (it has no
    // packed f64 -> i64 conversion, so LLVM would convert lane by lane).
    let ni = b.build_float_to_signed_int(n, ctx.i32_type(), "").unwrap();
    let ni = b.build_int_s_extend(ni, i64t, "").unwrap();
    let bits = b.build_left_shift(b.build_int_add(ni, i64t.const_int(1023, false), "").unwrap(), i64t.const_int(52, false), "").unwrap();
    let scale = b.build_bit_cast(bits, f64t, "").unwrap().into_float_value();
    let r = b.build_float_mul(p, scale, "").unwrap();
    let r = b.build_float_trunc(r, x.get_type(), "").unwrap();
    // A NaN input (min/max dropped it) stays NaN.
    let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "").unwrap();
    b.build_select(nan, x, r, "").unwrap().into_float_value()
}

/// `log2(x)` for an f32 `x` (PTX ISA 9.7.3.20 lg2.approx.f32), as straight-line code that
/// LLVM vectorizes: in f64 (where every f32, subnormals included, is normal), `x = 2^k * m`
/// with `m` in `[sqrt(1/2), sqrt(2))`, and `log2(m) = 2 atanh(s) / ln 2` with
/// `s = (m - 1) / (m + 1)`, `|s| < 0.172`, by its series to `s^25` (relative error below
/// 1e-18), then `k + log2(m)` rounded to f32 once. Special values as the spec's table for
/// normal inputs: +-0 gives -inf, a negative input (-inf included) NaN, +inf +inf, NaN NaN.
fn log2_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let ctx = e.ctx();
    let f64t = ctx.f64_type();
    let i64t = ctx.i64_type();
    let b = &e.b;
    let k = |v: f64| f64t.const_float(v);
    let xd = b.build_float_ext(x, f64t, "").unwrap();
    let bits = b.build_bit_cast(xd, i64t, "").unwrap().into_int_value();
    // Exponent and mantissa, the mantissa moved to [sqrt(1/2), sqrt(2)): subtracting the
    // bits of sqrt(1/2) puts the exponent step at that mantissa.
    let sqrt_half = 0x3FE6_A09E_667F_3BCDu64;
    let off = b.build_int_sub(bits, i64t.const_int(sqrt_half, false), "").unwrap();
    let ex = b.build_right_shift(off, i64t.const_int(52, false), true, "").unwrap();
    let mbits = b.build_int_sub(bits, b.build_left_shift(ex, i64t.const_int(52, false), "").unwrap(), "").unwrap();
    let m = b.build_bit_cast(mbits, f64t, "").unwrap().into_float_value();
    let num = b.build_float_sub(m, k(1.0), "").unwrap();
    let den = b.build_float_add(m, k(1.0), "").unwrap();
    let sv = b.build_float_div(num, den, "").unwrap();
    let s2 = b.build_float_mul(sv, sv, "").unwrap();
    // sum over j of s^(2j) / (2j + 1), j = 0..=12, by Horner in s^2.
    let mut p = k(1.0 / 25.0);
    for j in (0..12).rev() {
        p = e.intrinsic("llvm.fma", &[f64t.into()], &[p.into(), s2.into(), k(1.0 / (2 * j + 1) as f64).into()]).into_float_value();
    }
    let ln_m = b.build_float_mul(b.build_float_mul(sv, p, "").unwrap(), k(2.0), "").unwrap();
    let lg_m = b.build_float_mul(ln_m, k(std::f64::consts::LOG2_E), "").unwrap();
    // `ex` is k: the bits of 2^k * m less those of sqrt(1/2) are k << 52 plus less than 2^52.
    // `ex` fits in 12 bits (for any input: the selects below replace the results of special
    // inputs): converted from i32, which AVX2 does in vectors (not from i64).
    let ex32 = b.build_int_truncate(ex, ctx.i32_type(), "").unwrap();
    let kf = b.build_signed_int_to_float(ex32, f64t, "").unwrap();
    let r = b.build_float_add(kf, lg_m, "").unwrap();
    let r = b.build_float_trunc(r, x.get_type(), "").unwrap();
    let ft = x.get_type();
    let zero = b.build_float_compare(FloatPredicate::OEQ, x, ft.const_zero(), "").unwrap();
    let neg = b.build_float_compare(FloatPredicate::OLT, x, ft.const_zero(), "").unwrap();
    let inf = b.build_float_compare(FloatPredicate::OEQ, x, ft.const_float(f64::INFINITY), "").unwrap();
    let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "").unwrap();
    let r = b.build_select(zero, ft.const_float(f64::NEG_INFINITY), r, "").unwrap().into_float_value();
    let r = b.build_select(inf, x, r, "").unwrap().into_float_value();
    let r = b.build_select(neg, ft.const_float(f64::NAN), r, "").unwrap().into_float_value();
    b.build_select(nan, x, r, "").unwrap().into_float_value()
}

fn fabs<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    e.intrinsic("llvm.fabs", &[v.get_type().into()], &[v.into()]).into_float_value()
}

fn is_nan<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> IntValue<'ctx> {
    e.b.build_float_compare(FloatPredicate::UNO, v, v, "").unwrap()
}

fn is_finite<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> IntValue<'ctx> {
    let a = fabs(e, v);
    e.b.build_float_compare(FloatPredicate::OLT, a, v.get_type().const_float(f64::INFINITY), "").unwrap()
}

fn and_all<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: &[IntValue<'ctx>]) -> IntValue<'ctx> {
    let mut r = v[0];
    for x in &v[1..] {
        r = e.b.build_and(r, *x, "").unwrap();
    }
    r
}

/// f64 NaN results (GPU-verified): a NaN operand, quieted — the last one of `src` when several
/// are NaN (callers order `src` by the GPU's priority) — else the default NaN 0xfff8000000000000.
pub fn nan_f64<'ctx>(e: &FnEmitter<'ctx, '_, '_>, r: FloatValue<'ctx>, src: &[FloatValue<'ctx>]) -> FloatValue<'ctx> {
    let i64t = e.ctx().i64_type();
    let mut out = i64t.const_int(0xfff8_0000_0000_0000, false);
    for s in src.iter() {
        let b = e.to_bits((*s).into());
        let q = e.b.build_or(b, i64t.const_int(1 << 51, false), "").unwrap();
        out = e.b.build_select(is_nan(e, *s), q, out, "").unwrap().into_int_value();
    }
    let rb = e.to_bits(r.into());
    let rb = e.b.build_select(is_nan(e, r), out, rb, "").unwrap().into_int_value();
    e.from_bits(rb, Type::F64).into_float_value()
}

/// f32 instructions whose NaN results are canonical (the generic path of `emit`, every one
/// but copysign).
const CANONICAL_F32: &[&str] = &["add", "sub", "mul", "div", "min", "max", "fma", "mad", "neg", "abs", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh"];

/// f32 registers whose NaN payload nobody can observe: every instruction that reads one is
/// an instruction of `CANONICAL_F32`, a `setp` (which sees only whether a value is a NaN), or
/// a copy of its bits (`mov` register to register, the source operand of `shfl`) into a
/// register that is itself unobserved. Writers of `CANONICAL_F32` into such a register skip
/// `canon_nan`: in `fma.rn.f32 %f14, %f13, %f12, %f62; fma.rn.f32 %f17, %f16, %f15, %f14`,
/// or a shuffle reduction (`mov.b32 %r12, %f6; shfl.sync.down.b32 %r14, %r12, ..;
/// mov.b32 %f7, %r14; add.f32 %f8, %f6, %f7`), only the result that is stored is
/// canonicalized: any NaN that reaches a canonicalizing instruction comes out canonical
/// whatever its payload, and copies keep a NaN a NaN. `rets`: registers the function
/// returns (read after its body).
pub fn nan_insensitive<'a>(body: &'a [crate::syntax::ast::Stmt<'a>], rets: &[&'a str]) -> std::collections::HashSet<&'a str> {
    use crate::syntax::ast::{Operand, Stmt};
    use std::collections::HashSet;
    fn names<'a>(op: &Operand<'a>, out: &mut Vec<&'a str>) {
        match op {
            Operand::Name(id, _) | Operand::Not(id) => out.push(id.name),
            Operand::Vector(v, _) | Operand::List(v, _) | Operand::MemList(v, _) => v.iter().for_each(|o| names(o, out)),
            Operand::Pair(a, b) => {
                names(a, out);
                names(b, out);
            }
            Operand::Sel(o, _, _) => names(o, out),
            Operand::Mem(a) => out.extend(a.base.map(|b| b.name)),
            _ => {}
        }
    }
    fn plain<'a>(op: &Operand<'a>) -> Option<&'a str> {
        match op {
            Operand::Name(id, None) => Some(id.name),
            _ => None,
        }
    }
    struct Walk<'a> {
        /// Destinations of canonicalizing instructions.
        dests: HashSet<&'a str>,
        /// Registers whose bits something observes.
        bad: HashSet<&'a str>,
        /// Bit copies (source, destination).
        copies: Vec<(&'a str, &'a str)>,
    }
    fn walk<'a>(body: &'a [Stmt<'a>], w: &mut Walk<'a>) {
        for s in body {
            match s {
                Stmt::Block(b, _) => walk(b, w),
                Stmt::Instr(i) => {
                    let tys = types_of(i);
                    let f32 = tys.last() == Some(&Type::F32);
                    let canonical = f32 && CANONICAL_F32.contains(&i.opcode.name);
                    let compare = f32 && i.opcode.name == "setp";
                    let ops = &i.operands;
                    // `mov` of a 32-bit register and the source of `shfl` copy bits unchanged.
                    let copy = match i.opcode.name {
                        "mov" if ops.len() == 2 && tys.len() == 1 && tys[0].bits() == 32 => plain(&ops[0]).zip(plain(&ops[1])).map(|(d, s)| (s, d, 2)),
                        "shfl" if ops.len() >= 2 => {
                            let d = match &ops[0] {
                                Operand::Pair(d, _) => plain(d),
                                d => plain(d),
                            };
                            d.zip(plain(&ops[1])).map(|(d, s)| (s, d, 2))
                        }
                        _ => None,
                    };
                    if let Some((src, dst, first_other)) = copy {
                        w.copies.push((src, dst));
                        let mut v = Vec::new();
                        ops[first_other..].iter().for_each(|o| names(o, &mut v));
                        w.bad.extend(v);
                        continue;
                    }
                    for (k, op) in ops.iter().enumerate() {
                        match plain(op) {
                            Some(n) if k == 0 && canonical => {
                                w.dests.insert(n);
                            }
                            Some(_) if k > 0 && (canonical || compare) => {}
                            _ => {
                                let mut v = Vec::new();
                                names(op, &mut v);
                                w.bad.extend(v);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut w = Walk { dests: HashSet::new(), bad: rets.iter().copied().collect(), copies: Vec::new() };
    walk(body, &mut w);
    loop {
        let before = w.bad.len();
        for &(s, d) in &w.copies {
            if w.bad.contains(d) {
                w.bad.insert(s);
            }
        }
        if w.bad.len() == before {
            break;
        }
    }
    w.dests.retain(|n| !w.bad.contains(n));
    w.dests
}

/// f32 NaN results become the canonical NaN 0x7fffffff.
pub fn canon_nan<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    if v.get_type() != e.ctx().f32_type() {
        return v;
    }
    let nan = e.from_bits(e.ctx().i32_type().const_int(0x7fff_ffff, false), Type::F32).into_float_value();
    let c = is_nan(e, v);
    e.b.build_select(c, nan, v, "").unwrap().into_float_value()
}

/// PTX ISA 9.7.3.11-12: if one input is NaN the result is the other; both NaN gives NaN;
/// -0 is smaller than +0.
fn min_max<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, is_min: bool) -> FloatValue<'ctx> {
    let p = if is_min { FloatPredicate::OLT } else { FloatPredicate::OGT };
    let c = e.b.build_float_compare(p, a, b, "").unwrap();
    let r = e.b.build_select(c, a, b, "").unwrap().into_float_value();
    let na = is_nan(e, a);
    let nb = is_nan(e, b);
    let r = e.b.build_select(nb, a, r, "").unwrap().into_float_value();
    let r = e.b.build_select(na, b, r, "").unwrap().into_float_value();
    signed_zero_fix(e, r, a, b, is_min)
}

/// `rcp.approx.ftz.f64` / `rsqrt.approx.ftz.f64` (9.7.3.14, 9.7.3.17): the upper word of `a`
/// (1.11.20 format, subnormals flushed) is inverted; the result's lower word is zero and NaN
/// inputs give the canonical NaN 0x7fffffff00000000.
fn gross_f64<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, sqrt: bool) -> FloatValue<'ctx> {
    let i64t = e.ctx().i64_type();
    let ft = a.get_type();
    let bits = e.to_bits(a.into());
    let hi = e.b.build_and(bits, i64t.const_int(0xffff_ffff_0000_0000, false), "").unwrap();
    let hi = ftz64(e, hi);
    let x = e.from_bits(hi, Type::F64).into_float_value();
    let x = if sqrt { e.intrinsic("llvm.sqrt", &[ft.into()], &[x.into()]).into_float_value() } else { x };
    let r = e.b.build_float_div(ft.const_float(1.0), x, "").unwrap();
    let rb = e.to_bits(r.into());
    let rb = ftz64(e, rb);
    let rb = e.b.build_and(rb, i64t.const_int(0xffff_ffff_0000_0000, false), "").unwrap();
    let nan = is_nan(e, r);
    let rb = e.b.build_select(nan, i64t.const_int(0x7fff_ffff_0000_0000, false), rb, "").unwrap().into_int_value();
    e.from_bits(rb, Type::F64).into_float_value()
}

fn ftz64<'ctx>(e: &FnEmitter<'ctx, '_, '_>, bits: IntValue<'ctx>) -> IntValue<'ctx> {
    let i64t = e.ctx().i64_type();
    let exp = e.b.build_and(bits, i64t.const_int(0x7ff0_0000_0000_0000, false), "").unwrap();
    let sub = e.b.build_int_compare(IntPredicate::EQ, exp, i64t.const_zero(), "").unwrap();
    let sign = e.b.build_and(bits, i64t.const_int(1 << 63, false), "").unwrap();
    e.b.build_select(sub, sign, bits, "").unwrap().into_int_value()
}

/// `.sat`: clamp to [0, 1]; NaN becomes +0.
pub fn saturate<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let t = v.get_type();
    let lo = e.intrinsic("llvm.maxnum", &[t.into()], &[v.into(), t.const_float(0.0).into()]).into_float_value();
    let r = e.intrinsic("llvm.minnum", &[t.into()], &[lo.into(), t.const_float(1.0).into()]).into_float_value();
    // maxnum(NaN, 0) = 0 already; make -0 → +0.
    let z = e.b.build_float_compare(FloatPredicate::OEQ, r, t.const_float(0.0), "").unwrap();
    e.b.build_select(z, t.const_float(0.0), r, "").unwrap().into_float_value()
}

/// `.ftz`: subnormal f32 values become sign-preserving zero.
pub fn ftz_val<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx> {
    let f = v.into_float_value();
    if f.get_type() != e.ctx().f32_type() {
        return v;
    }
    let bits = e.to_bits(v);
    let i32t = e.ctx().i32_type();
    let exp = e.b.build_and(bits, i32t.const_int(0x7f80_0000, false), "").unwrap();
    let is_sub = e.b.build_int_compare(IntPredicate::EQ, exp, i32t.const_zero(), "").unwrap();
    let signed_zero = e.b.build_and(bits, i32t.const_int(0x8000_0000, false), "").unwrap();
    let r = e.b.build_select(is_sub, signed_zero, bits, "").unwrap().into_int_value();
    e.from_bits(r, Type::F32)
}

pub fn ftz<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx> {
    if let BasicValueEnum::FloatValue(_) = v {
        ftz_val(e, v)
    } else {
        v
    }
}

fn signed_zero_fix<'ctx>(e: &FnEmitter<'ctx, '_, '_>, r: FloatValue<'ctx>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, is_min: bool) -> FloatValue<'ctx> {
    let t = r.get_type();
    let both_zero = {
        let za = e.b.build_float_compare(FloatPredicate::OEQ, a, t.const_float(0.0), "").unwrap();
        let zb = e.b.build_float_compare(FloatPredicate::OEQ, b, t.const_float(0.0), "").unwrap();
        e.b.build_and(za, zb, "").unwrap()
    };
    let ab = e.to_bits(a.into());
    let bb = e.to_bits(b.into());
    let comb = if is_min { e.b.build_or(ab, bb, "").unwrap() } else { e.b.build_and(ab, bb, "").unwrap() };
    let ty = if t == e.ctx().f32_type() { Type::F32 } else { Type::F64 };
    let z = e.from_bits(comb, ty).into_float_value();
    e.b.build_select(both_zero, z, r, "").unwrap().into_float_value()
}

// ---------------------------------------------------------------- exact directed rounding

fn f64t<'ctx>(e: &FnEmitter<'ctx, '_, '_>) -> inkwell::types::FloatType<'ctx> {
    e.ctx().f64_type()
}

fn ext<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    if v.get_type() == e.ctx().f64_type() {
        v
    } else {
        e.b.build_float_ext(v, e.ctx().f64_type(), "").unwrap()
    }
}

fn fma_f<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, c: FloatValue<'ctx>) -> FloatValue<'ctx> {
    e.intrinsic("llvm.fma", &[a.get_type().into()], &[a.into(), b.into(), c.into()]).into_float_value()
}

fn fneg<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> FloatValue<'ctx> {
    e.b.build_float_neg(v, "").unwrap()
}

fn fmul<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> FloatValue<'ctx> {
    e.b.build_float_mul(a, b, "").unwrap()
}

fn sel<'ctx>(e: &FnEmitter<'ctx, '_, '_>, c: IntValue<'ctx>, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> FloatValue<'ctx> {
    e.b.build_select(c, a, b, "").unwrap().into_float_value()
}

/// |v| < k
fn abs_lt<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>, k: f64) -> IntValue<'ctx> {
    let a = fabs(e, v);
    e.b.build_float_compare(FloatPredicate::OLT, a, v.get_type().const_float(k), "").unwrap()
}

/// TwoSum: s = RN(a+b), err = (a+b) - s exactly.
fn two_sum<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> (FloatValue<'ctx>, FloatValue<'ctx>) {
    let s = e.b.build_float_add(a, b, "").unwrap();
    let bb = e.b.build_float_sub(s, a, "").unwrap();
    let ab = e.b.build_float_sub(s, bb, "").unwrap();
    let da = e.b.build_float_sub(a, ab, "").unwrap();
    let db = e.b.build_float_sub(b, bb, "").unwrap();
    (s, e.b.build_float_add(da, db, "").unwrap())
}

/// Is `v` exactly +0 (bit pattern)?
fn is_pos_zero<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>) -> IntValue<'ctx> {
    let b = e.to_bits(v.into());
    e.b.build_int_compare(IntPredicate::EQ, b, b.get_type().const_zero(), "").unwrap()
}

pub fn rounded_add<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, ty: Type, rnd: Rnd) -> FloatValue<'ctx> {
    if rnd == Rnd::N {
        return e.b.build_float_add(a, b, "").unwrap();
    }
    let (s, err) = two_sum(e, ext(e, a), ext(e, b));
    let fin = and_all(e, &[is_finite(e, a), is_finite(e, b)]);
    // An exact zero sum is -0 under .rm unless both addends are +0 (IEEE 754 6.3).
    let both_pos = and_all(e, &[is_pos_zero(e, a), is_pos_zero(e, b)]);
    finish(e, s, err, ty, rnd, fin, Some(both_pos))
}

pub fn rounded_mul<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, ty: Type, rnd: Rnd) -> FloatValue<'ctx> {
    if rnd == Rnd::N {
        return e.b.build_float_mul(a, b, "").unwrap();
    }
    let fin = and_all(e, &[is_finite(e, a), is_finite(e, b)]);
    if ty == Type::F32 {
        // The f64 product of two f32 values is exact.
        let p = fmul(e, ext(e, a), ext(e, b));
        return finish(e, p, f64t(e).const_float(0.0), ty, rnd, fin, None);
    }
    let r = fmul(e, a, b);
    let zero = f64t(e).const_float(0.0);
    let resid = fma_resid(e, a, b, zero, r);
    finish(e, r, resid, ty, rnd, fin, None)
}

/// A value with the sign of `ph + pl + c - r` (all exact doubles), via two passes of
/// error-free summation.
fn sum4_sign<'ctx>(e: &FnEmitter<'ctx, '_, '_>, ph: FloatValue<'ctx>, pl: FloatValue<'ctx>, c: FloatValue<'ctx>, r: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let (x, xe) = two_sum(e, c, fneg(e, r));
    let (y, ye) = two_sum(e, ph, x);
    let (z, ze) = two_sum(e, pl, xe);
    let (u, ue) = two_sum(e, y, z);
    let (v, ve) = two_sum(e, ye, ze);
    let (t, te) = two_sum(e, u, v);
    let rest = e.b.build_float_add(te, e.b.build_float_add(ue, ve, "").unwrap(), "").unwrap();
    e.b.build_float_add(t, rest, "").unwrap()
}

/// Sign of `a*b + c - r` for doubles (r = RN(a*b + c)), exact also when the product lies
/// below the subnormal range: then the operands are scaled by 2^600 (each below 1) first.
fn fma_resid<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, c: FloatValue<'ctx>, r: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let t = f64t(e);
    let one = t.const_float(1.0);
    let big = t.const_float(2f64.powi(600));
    let ph = fmul(e, a, b);
    let pl = fma_f(e, a, b, fneg(e, ph));
    let normal = sum4_sign(e, ph, pl, c, r);
    // Scaled: a' = a·sa, b' = b·sb, c' and r' by sa·sb.
    let sa = sel(e, abs_lt(e, a, 1.0), big, one);
    let sb = sel(e, abs_lt(e, b, 1.0), big, one);
    let a2 = fmul(e, a, sa);
    let b2 = fmul(e, b, sb);
    let c2 = fmul(e, fmul(e, c, sa), sb);
    let r2 = fmul(e, fmul(e, r, sa), sb);
    let ph2 = fmul(e, a2, b2);
    let pl2 = fma_f(e, a2, b2, fneg(e, ph2));
    let scaled = sum4_sign(e, ph2, pl2, c2, r2);
    // c too large to scale: then r = c and the residual is the (tiny) product.
    let c_big = e.b.build_not(is_finite(e, c2), "").unwrap();
    let c_big = e.b.build_and(c_big, is_finite(e, c), "").unwrap();
    let scaled = sel(e, c_big, ph2, scaled);
    let tiny = abs_lt(e, ph, 2f64.powi(-900));
    sel(e, tiny, scaled, normal)
}

pub fn rounded_fma<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, c: FloatValue<'ctx>, ty: Type, rnd: Rnd) -> FloatValue<'ctx> {
    if rnd == Rnd::N {
        return fma_f(e, a, b, c);
    }
    let fin = and_all(e, &[is_finite(e, a), is_finite(e, b), is_finite(e, c)]);
    if ty == Type::F32 {
        // a*b is exact in f64; the sum's residual comes from TwoSum.
        let p = fmul(e, ext(e, a), ext(e, b));
        let (s, err) = two_sum(e, p, ext(e, c));
        let both_pos = and_all(e, &[is_pos_zero(e, p), is_pos_zero(e, c)]);
        return finish(e, s, err, ty, rnd, fin, Some(both_pos));
    }
    let r = fma_f(e, a, b, c);
    let resid = fma_resid(e, a, b, c, r);
    let p = fmul(e, a, b);
    let p_zero = e.b.build_float_compare(FloatPredicate::OEQ, p, f64t(e).const_float(0.0), "").unwrap();
    let exact_zero_prod = {
        // The product is exactly zero only when a factor is zero.
        let za = e.b.build_float_compare(FloatPredicate::OEQ, a, f64t(e).const_float(0.0), "").unwrap();
        let zb = e.b.build_float_compare(FloatPredicate::OEQ, b, f64t(e).const_float(0.0), "").unwrap();
        e.b.build_or(za, zb, "").unwrap()
    };
    let both_pos = and_all(e, &[p_zero, exact_zero_prod, is_pos_zero(e, p), is_pos_zero(e, c)]);
    finish(e, r, resid, ty, rnd, fin, Some(both_pos))
}

pub fn rounded_div<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, b: FloatValue<'ctx>, ty: Type, rnd: Rnd) -> FloatValue<'ctx> {
    let nz = e.b.build_float_compare(FloatPredicate::UNE, b, b.get_type().const_float(0.0), "").unwrap();
    let fin = and_all(e, &[is_finite(e, a), is_finite(e, b), nz]);
    let t = f64t(e);
    let (a, b) = (ext(e, a), ext(e, b));
    let q = e.b.build_float_div(a, b, "").unwrap();
    let bneg = e.b.build_float_compare(FloatPredicate::OLT, b, t.const_float(0.0), "").unwrap();
    if ty == Type::F32 {
        // q (f64) is within half an f64 ulp; (a - q*b)/b is the residual (exact remainder).
        let r = fma_f(e, fneg(e, q), b, a);
        let err = e.b.build_float_div(r, b, "").unwrap();
        return finish(e, q, err, ty, rnd, fin, None);
    }
    // Sign of a/b - q = sign(a - q*b)·sign(b). For tiny a or q, scale so the remainder
    // cannot underflow: (a·2^600 - q·2^600·b), or with b·2^-600 when |a| ≥ 1.
    let rem = fma_f(e, fneg(e, q), b, a);
    let up = t.const_float(2f64.powi(600));
    let down = t.const_float(2f64.powi(-600));
    let a_small = abs_lt(e, a, 1.0);
    let a2 = sel(e, a_small, fmul(e, a, up), a);
    let q2 = fmul(e, q, up);
    let b2 = sel(e, a_small, b, fmul(e, b, down));
    let rem2 = fma_f(e, fneg(e, q2), b2, a2);
    let tiny = e.b.build_or(abs_lt(e, q, 2f64.powi(-900)), abs_lt(e, a, 2f64.powi(-900)), "").unwrap();
    let rem = sel(e, tiny, rem2, rem);
    let err = sel(e, bneg, fneg(e, rem), rem);
    finish(e, q, err, ty, rnd, fin, None)
}

pub fn rounded_sqrt<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: FloatValue<'ctx>, ty: Type, rnd: Rnd) -> FloatValue<'ctx> {
    let t = f64t(e);
    let a = ext(e, a);
    let s = e.intrinsic("llvm.sqrt", &[t.into()], &[a.into()]).into_float_value();
    let fin = is_finite(e, a);
    if ty == Type::F32 {
        // a - s² (exact) over 2s approximates sqrt(a) - s.
        let r = fma_f(e, fneg(e, s), s, a);
        let err = e.b.build_float_div(r, e.b.build_float_add(s, s, "").unwrap(), "").unwrap();
        return finish(e, s, err, ty, rnd, fin, None);
    }
    // Sign of a - s², computed on a·2^200 and s·2^100 for tiny a (no underflow).
    let tiny = abs_lt(e, a, 2f64.powi(-900));
    let a2 = sel(e, tiny, fmul(e, a, t.const_float(2f64.powi(200))), a);
    let s2 = sel(e, tiny, fmul(e, s, t.const_float(2f64.powi(100))), s);
    let r = fma_f(e, fneg(e, s2), s2, a2);
    finish(e, s, r, ty, rnd, fin, None)
}

/// f64 → f32 with rounding `rnd` (exact).
pub fn narrow_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>, rnd: Rnd) -> FloatValue<'ctx> {
    if rnd == Rnd::N {
        return e.b.build_float_trunc(v, e.ctx().f32_type(), "").unwrap();
    }
    let fin = is_finite(e, v);
    finish(e, v, f64t(e).const_float(0.0), Type::F32, rnd, fin, None)
}

/// Rounds the exact value `hi + lo` to `ty` in direction `rnd`. `hi` is RN(exact) in f64;
/// for f32 results `lo` is the residual (|lo| ≤ half an f64 ulp of hi), for f64 results only
/// its sign matters. `exact_finite`: the exact result is a finite number (so an infinite RN
/// result is an overflow). `rm_pos_zero`: under .rm, an exact zero result is +0 (both
/// addends +0) rather than -0.
fn finish<'ctx>(e: &FnEmitter<'ctx, '_, '_>, hi: FloatValue<'ctx>, lo: FloatValue<'ctx>, ty: Type, rnd: Rnd, exact_finite: IntValue<'ctx>, rm_pos_zero: Option<IntValue<'ctx>>) -> FloatValue<'ctx> {
    let f64_t = f64t(e);
    let (r, resid) = if ty == Type::F32 {
        let r = e.b.build_float_trunc(hi, e.ctx().f32_type(), "").unwrap();
        let back = e.b.build_float_ext(r, f64_t, "").unwrap();
        let d = e.b.build_float_sub(hi, back, "").unwrap();
        // d + lo is the exact (r → true) residual; both tiny relative to hi.
        (r, e.b.build_float_add(d, lo, "").unwrap())
    } else {
        (hi, lo)
    };
    let rt = r.get_type();
    let zero = f64_t.const_float(0.0);
    let pos = e.b.build_float_compare(FloatPredicate::OGT, resid, zero, "").unwrap();
    let neg = e.b.build_float_compare(FloatPredicate::OLT, resid, zero, "").unwrap();
    let rzero = rt.const_float(0.0);
    let (down, up) = match rnd {
        Rnd::N => return r,
        Rnd::M => (neg, e.ctx().bool_type().const_zero()),
        Rnd::P => (e.ctx().bool_type().const_zero(), pos),
        Rnd::Z => {
            let rpos = e.b.build_float_compare(FloatPredicate::OGT, r, rzero, "").unwrap();
            let rneg = e.b.build_float_compare(FloatPredicate::OLT, r, rzero, "").unwrap();
            (e.b.build_and(rpos, neg, "").unwrap(), e.b.build_and(rneg, pos, "").unwrap())
        }
    };
    // Overflow: RN gives ±inf for a finite exact value; directed modes may need ±MAX instead.
    let is_inf = {
        let a = fabs(e, r);
        e.b.build_float_compare(FloatPredicate::OEQ, a, rt.const_float(f64::INFINITY), "").unwrap()
    };
    let overflow = e.b.build_and(is_inf, exact_finite, "").unwrap();
    let rneg = e.b.build_float_compare(FloatPredicate::OLT, r, rzero, "").unwrap();
    let to_max = match rnd {
        Rnd::Z => overflow,
        Rnd::M => e.b.build_and(overflow, e.b.build_not(rneg, "").unwrap(), "").unwrap(),
        Rnd::P => e.b.build_and(overflow, rneg, "").unwrap(),
        Rnd::N => unreachable!(),
    };
    let bits = e.to_bits(r.into());
    let it = bits.get_type();
    let one = it.const_int(1, false);
    let sign_bit = it.const_int(1u64 << (it.get_bit_width() - 1), false);
    // next toward +inf / -inf on the integer image (sign-magnitude).
    let next = |toward_pos: bool| -> IntValue<'ctx> {
        let is_neg = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(bits, sign_bit, "").unwrap(), it.const_zero(), "").unwrap();
        let is_zero = e.b.build_int_compare(IntPredicate::EQ, e.b.build_and(bits, e.b.build_not(sign_bit, "").unwrap(), "").unwrap(), it.const_zero(), "").unwrap();
        let inc = e.b.build_int_add(bits, one, "").unwrap();
        let dec = e.b.build_int_sub(bits, one, "").unwrap();
        // Moving away from zero increments the magnitude; toward zero decrements it.
        let away = if toward_pos { e.b.build_not(is_neg, "").unwrap() } else { is_neg };
        let moved = e.b.build_select(away, inc, dec, "").unwrap().into_int_value();
        // From ±0, the next value toward ±inf is the smallest subnormal of that sign.
        let tiny = if toward_pos { it.const_int(1, false) } else { e.b.build_or(sign_bit, one, "").unwrap() };
        e.b.build_select(is_zero, tiny, moved, "").unwrap().into_int_value()
    };
    let up_bits = next(true);
    let down_bits = next(false);
    let out = e.b.build_select(up, up_bits, bits, "").unwrap().into_int_value();
    let out = e.b.build_select(down, down_bits, out, "").unwrap().into_int_value();
    // ±MAX with r's sign.
    let max_mag = if ty == Type::F32 { 0x7f7f_ffffu64 } else { 0x7fef_ffff_ffff_ffffu64 };
    let sign = e.b.build_and(bits, sign_bit, "").unwrap();
    let maxv = e.b.build_or(sign, it.const_int(max_mag, false), "").unwrap();
    let mut out = e.b.build_select(to_max, maxv, out, "").unwrap().into_int_value();
    if let (Rnd::M, Some(pz)) = (rnd, rm_pos_zero) {
        // Exact zero: hi is zero and no residual.
        let hz = e.b.build_float_compare(FloatPredicate::OEQ, hi, f64_t.const_float(0.0), "").unwrap();
        let lz = e.b.build_float_compare(FloatPredicate::OEQ, lo, f64_t.const_float(0.0), "").unwrap();
        let ez = e.b.build_and(hz, lz, "").unwrap();
        let zb = e.b.build_select(pz, it.const_zero(), sign_bit, "").unwrap().into_int_value();
        out = e.b.build_select(ez, zb, out, "").unwrap().into_int_value();
    }
    e.from_bits(out, ty).into_float_value()
}

/// PTX ISA 9.7.3.1 testp.
fn testp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let v = e.read(&i.operands[1], ty)?;
    let bits = e.to_bits(v);
    let it = bits.get_type();
    let (exp_mask, man_mask) = if ty == Type::F32 { (0x7f80_0000u64, 0x007f_ffffu64) } else { (0x7ff0_0000_0000_0000u64, 0x000f_ffff_ffff_ffffu64) };
    let exp = e.b.build_and(bits, it.const_int(exp_mask, false), "").unwrap();
    let man = e.b.build_and(bits, it.const_int(man_mask, false), "").unwrap();
    let exp_all = e.b.build_int_compare(IntPredicate::EQ, exp, it.const_int(exp_mask, false), "").unwrap();
    let exp_zero = e.b.build_int_compare(IntPredicate::EQ, exp, it.const_zero(), "").unwrap();
    let man_zero = e.b.build_int_compare(IntPredicate::EQ, man, it.const_zero(), "").unwrap();
    let b = &e.b;
    let r = match i.mods.iter().copied().find(|m| matches!(*m, "finite" | "infinite" | "number" | "notanumber" | "normal" | "subnormal")) {
        Some("finite") => b.build_not(exp_all, "").unwrap(),
        Some("infinite") => b.build_and(exp_all, man_zero, "").unwrap(),
        Some("number") => b.build_not(b.build_and(exp_all, b.build_not(man_zero, "").unwrap(), "").unwrap(), "").unwrap(),
        Some("notanumber") => b.build_and(exp_all, b.build_not(man_zero, "").unwrap(), "").unwrap(),
        // ±0 count as normal numbers (9.7.3.1).
        Some("normal") => b.build_and(b.build_not(exp_all, "").unwrap(), b.build_or(b.build_not(exp_zero, "").unwrap(), man_zero, "").unwrap(), "").unwrap(),
        Some("subnormal") => b.build_and(exp_zero, b.build_not(man_zero, "").unwrap(), "").unwrap(),
        _ => return Err(e.err(i.span, "testp needs a test (.finite, .infinite, .number, .notanumber, .normal, .subnormal)")),
    };
    e.write(&i.operands[0], Type::Pred, r.into())
}
