//! Integer arithmetic (9.7.1), extended precision (9.7.2), comparison and selection (9.7.5),
//! logic and shift (9.7.7).

use super::func::{int_t, types_of, FnEmitter, R};
use crate::syntax::ast::{Instr, Type};
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    let tys = types_of(i);
    let Some(&ty) = tys.last() else { return Ok(false) };
    let op = i.opcode.name;
    // Half-precision forms belong to ops_half (which runs first); other float forms are
    // handled by ops_float, except compare/select which live here.
    if tys.iter().any(|t| matches!(t, Type::F16 | Type::F16x2)) {
        return Ok(false);
    }
    if ty.is_float() && !matches!(op, "setp" | "set" | "selp" | "slct") {
        return Ok(false);
    }
    match op {
        "add" | "sub" | "addc" | "subc" => add_sub(e, i, ty).map(|_| true),
        "mul" | "mad" | "madc" => mul_mad(e, i, ty).map(|_| true),
        "mul24" | "mad24" => mul24(e, i, ty).map(|_| true),
        "div" | "rem" => div_rem(e, i, ty).map(|_| true),
        "and" | "or" | "xor" => logic(e, i, ty).map(|_| true),
        "not" | "cnot" => {
            let a = e.read(&i.operands[1], ty)?;
            let r: BasicValueEnum = if ty == Type::Pred || op == "not" {
                e.b.build_not(e.to_bits(a), "").unwrap().into()
            } else {
                let a = e.to_bits(a);
                let z = e.b.build_int_compare(IntPredicate::EQ, a, a.get_type().const_zero(), "").unwrap();
                e.b.build_int_z_extend(z, a.get_type(), "").unwrap().into()
            };
            e.write(&i.operands[0], ty, r).map(|_| true)
        }
        "shl" | "shr" => shift(e, i, ty).map(|_| true),
        "abs" | "neg" => {
            let a = e.read_int(&i.operands[1], ty)?;
            let neg = e.b.build_int_neg(a, "").unwrap();
            let r = if op == "neg" {
                neg
            } else {
                let lt = e.b.build_int_compare(IntPredicate::SLT, a, a.get_type().const_zero(), "").unwrap();
                e.b.build_select(lt, neg, a, "").unwrap().into_int_value()
            };
            e.write(&i.operands[0], ty, r.into()).map(|_| true)
        }
        "min" | "max" => {
            let a = e.read_int(&i.operands[1], ty)?;
            let b = e.read_int(&i.operands[2], ty)?;
            let pred = match (op, ty.is_signed()) {
                ("min", true) => IntPredicate::SLT,
                ("min", false) => IntPredicate::ULT,
                ("max", true) => IntPredicate::SGT,
                _ => IntPredicate::UGT,
            };
            let c = e.b.build_int_compare(pred, a, b, "").unwrap();
            let r = e.b.build_select(c, a, b, "").unwrap();
            e.write(&i.operands[0], ty, r).map(|_| true)
        }
        "setp" => setp(e, i).map(|_| true),
        "set" => set(e, i).map(|_| true),
        "slct" => slct(e, i).map(|_| true),
        // PTX ISA 9.7.5.3 selp
        "selp" => {
            let a = e.read(&i.operands[1], ty)?;
            let b = e.read(&i.operands[2], ty)?;
            let c = e.read(&i.operands[3], Type::Pred)?.into_int_value();
            let r = e.b.build_select(c, a, b, "").unwrap();
            e.write(&i.operands[0], ty, r).map(|_| true)
        }
        _ => Ok(false),
    }
}

/// PTX ISA 9.7.1.1-2 add/sub (`.sat` for s32), 9.7.2 add.cc/addc/sub.cc/subc with CC.CF.
fn add_sub<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let op = i.opcode.name;
    let is_sub = op.starts_with("sub");
    let with_carry_in = op == "addc" || op == "subc";
    let sets_cc = i.has_mod("cc");
    let t = a.get_type();
    if i.has_mod("sat") {
        let name = if is_sub { "llvm.ssub.sat" } else { "llvm.sadd.sat" };
        let r = e.intrinsic(name, &[t.into()], &[a.into(), b.into()]);
        return e.write(&i.operands[0], ty, r);
    }
    if !with_carry_in && !sets_cc {
        let r = if is_sub { e.b.build_int_sub(a, b, "").unwrap() } else { e.b.build_int_add(a, b, "").unwrap() };
        return e.write(&i.operands[0], ty, r.into());
    }
    // Extended precision in a double-width integer: carry out is the bit above the result.
    // The PTX ISA words CC.CF of sub.cc/subc as a borrow (9.7.2.3-4, d = a - (b + CC.CF)).
    // NVIDIA GPUs keep one carry flag for both and subtract as a + ~b + carry-in, carry-in 1
    // for sub.cc: CC.CF after a subtraction is 1 when nothing was borrowed, and subc
    // subtracts 1 - CC.CF. A chain of sub.cc/subc gives the same words either way; the flag
    // differs only when it is read by addc/madc after a subtraction (or by subc after an
    // addition), and there ptxr gives what the GPU gives (addc.u32 d, 0, 0 after a sub.cc
    // that borrowed reads 0 on an NVIDIA GPU).
    let w = t.get_bit_width();
    let wt = int_t(e.ctx(), w + 1);
    let a1 = e.b.build_int_z_extend(a, wt, "").unwrap();
    let b = if is_sub { e.b.build_not(b, "").unwrap() } else { b };
    let b1 = e.b.build_int_z_extend(b, wt, "").unwrap();
    let mut r = e.b.build_int_add(a1, b1, "").unwrap();
    let carry_in = if with_carry_in {
        let cf = e.b.build_load(e.ctx().bool_type(), e.carry, "").unwrap().into_int_value();
        Some(e.b.build_int_z_extend(cf, wt, "").unwrap())
    } else if is_sub {
        Some(wt.const_int(1, false))
    } else {
        None
    };
    if let Some(c) = carry_in {
        r = e.b.build_int_add(r, c, "").unwrap();
    }
    if sets_cc {
        let hi = e.b.build_right_shift(r, wt.const_int(w as u64, false), false, "").unwrap();
        let cf = e.b.build_int_truncate(hi, e.ctx().bool_type(), "").unwrap();
        e.b.build_store(e.carry, cf).unwrap();
    }
    let res = e.b.build_int_truncate(r, t, "").unwrap();
    e.write(&i.operands[0], ty, res.into())
}

/// Full product of a and b in 2n bits (signed or unsigned).
fn wide_mul<'ctx>(e: &FnEmitter<'ctx, '_, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>, signed: bool) -> IntValue<'ctx> {
    let w = a.get_type().get_bit_width();
    let a2 = e.resize(a, w * 2, signed);
    let b2 = e.resize(b, w * 2, signed);
    e.b.build_int_mul(a2, b2, "").unwrap()
}

/// PTX ISA 9.7.1.3 mul, 9.7.1.4 mad (incl. `.hi.sat` for s32), 9.7.2.5-6 mad.cc/madc.
fn mul_mad<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let signed = ty.is_signed();
    let w = ty.bits();
    let is_mad = i.opcode.name != "mul";
    let (prod, out_ty) = if i.has_mod("wide") {
        let dt = match ty {
            Type::S16 => Type::S32,
            Type::U16 => Type::U32,
            Type::S32 => Type::S64,
            _ => Type::U64,
        };
        (wide_mul(e, a, b, signed), dt)
    } else if i.has_mod("hi") {
        let p = wide_mul(e, a, b, signed);
        if is_mad {
            // mad.hi adds c to the upper half of the product; with .sat (s32) the 2n-bit
            // sum (hi:lo + c<<n) is saturated (9.7.1.4).
            let c = e.read_int(&i.operands[3], ty)?;
            let ptype = p.get_type();
            let c2 = e.resize(c, w * 2, signed);
            let csh = e.b.build_left_shift(c2, ptype.const_int(w as u64, false), "").unwrap();
            let r = if i.has_mod("sat") {
                e.intrinsic("llvm.sadd.sat", &[ptype.into()], &[p.into(), csh.into()]).into_int_value()
            } else if i.has_mod("cc") || i.opcode.name == "madc" {
                return mad_carry(e, i, ty, e.b.build_right_shift(p, ptype.const_int(w as u64, false), false, "").unwrap(), c);
            } else {
                e.b.build_int_add(p, csh, "").unwrap()
            };
            let hi = e.b.build_right_shift(r, ptype.const_int(w as u64, false), signed, "").unwrap();
            let hi = e.resize(hi, w, signed);
            return e.write(&i.operands[0], ty, hi.into());
        }
        let hi = e.b.build_right_shift(p, p.get_type().const_int(w as u64, false), signed, "").unwrap();
        (e.resize(hi, w, signed), ty)
    } else {
        (e.b.build_int_mul(a, b, "").unwrap(), ty)
    };
    if !is_mad {
        return e.write(&i.operands[0], out_ty, prod.into());
    }
    let c = e.read_int(&i.operands[3], out_ty)?;
    if i.has_mod("cc") || i.opcode.name == "madc" {
        let prod = e.resize(prod, out_ty.bits(), false);
        return mad_carry(e, i, out_ty, prod, c);
    }
    let r = e.b.build_int_add(prod, c, "").unwrap();
    e.write(&i.operands[0], out_ty, r.into())
}

/// `prod + c (+ CC.CF)` with optional carry out.
fn mad_carry<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type, prod: IntValue<'ctx>, c: IntValue<'ctx>) -> R<()> {
    let w = ty.bits();
    let prod = e.resize(prod, w, false);
    let wt = int_t(e.ctx(), w + 1);
    let p1 = e.b.build_int_z_extend(prod, wt, "").unwrap();
    let c1 = e.b.build_int_z_extend(c, wt, "").unwrap();
    let mut r = e.b.build_int_add(p1, c1, "").unwrap();
    if i.opcode.name == "madc" {
        let cf = e.b.build_load(e.ctx().bool_type(), e.carry, "").unwrap().into_int_value();
        let cf = e.b.build_int_z_extend(cf, wt, "").unwrap();
        r = e.b.build_int_add(r, cf, "").unwrap();
    }
    if i.has_mod("cc") {
        let hi = e.b.build_right_shift(r, wt.const_int(w as u64, false), false, "").unwrap();
        let cf = e.b.build_int_truncate(hi, e.ctx().bool_type(), "").unwrap();
        e.b.build_store(e.carry, cf).unwrap();
    }
    let res = e.b.build_int_truncate(r, int_t(e.ctx(), w), "").unwrap();
    e.write(&i.operands[0], ty, res.into())
}

/// PTX ISA 9.7.1.5-6 mul24/mad24: 24-bit operands, 48-bit product; `.lo` low 32, `.hi` bits 47..16.
fn mul24<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let signed = ty.is_signed();
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let a24 = e.resize(e.resize(a, 24, false), 64, signed);
    let b24 = e.resize(e.resize(b, 24, false), 64, signed);
    let p = e.b.build_int_mul(a24, b24, "").unwrap();
    let i64t = e.ctx().i64_type();
    let r = if i.has_mod("hi") { e.b.build_right_shift(p, i64t.const_int(16, false), signed, "").unwrap() } else { p };
    let mut r = e.resize(r, 32, false);
    if i.opcode.name == "mad24" {
        let c = e.read_int(&i.operands[3], ty)?;
        if i.has_mod("sat") {
            // mad24.hi.sat.s32: saturate the 32-bit signed sum.
            r = e.intrinsic("llvm.sadd.sat", &[e.ctx().i32_type().into()], &[r.into(), c.into()]).into_int_value();
        } else {
            r = e.b.build_int_add(r, c, "").unwrap();
        }
    }
    e.write(&i.operands[0], ty, r.into())
}

/// PTX ISA 9.7.1.8-9 div/rem: truncating division (C semantics), MININT / -1 wraps to MININT
/// with remainder 0. Division by zero is unspecified ("machine-specific"); ptxr returns what
/// an H100 returns (checked with tests/filetests/ref/int_ref.py --gpu, all widths, signed and
/// unsigned): all ones for both the quotient and the remainder. Nothing traps on the host.
fn div_rem<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let t = a.get_type();
    let signed = ty.is_signed();
    let zero = e.b.build_int_compare(IntPredicate::EQ, b, t.const_zero(), "").unwrap();
    // Avoid host traps: divide by 1 when b == 0, and handle MIN / -1 by wrapping.
    let safe_b = e.b.build_select(zero, t.const_int(1, false), b, "").unwrap().into_int_value();
    let is_div = i.opcode.name == "div";
    let r = if signed {
        let min = t.const_int(1u64 << (t.get_bit_width() - 1), false);
        let is_min = e.b.build_int_compare(IntPredicate::EQ, a, min, "").unwrap();
        let is_m1 = e.b.build_int_compare(IntPredicate::EQ, safe_b, t.const_all_ones(), "").unwrap();
        let ovf = e.b.build_and(is_min, is_m1, "").unwrap();
        let sb = e.b.build_select(ovf, t.const_int(1, false), safe_b, "").unwrap().into_int_value();
        // MIN / -1 = MIN (wraps), which is `a / 1`; MIN % -1 = 0, which is `a % 1`.
        if is_div {
            e.b.build_int_signed_div(a, sb, "").unwrap()
        } else {
            e.b.build_int_signed_rem(a, sb, "").unwrap()
        }
    } else if is_div {
        e.b.build_int_unsigned_div(a, safe_b, "").unwrap()
    } else {
        e.b.build_int_unsigned_rem(a, safe_b, "").unwrap()
    };
    let r = e.b.build_select(zero, t.const_all_ones(), r, "").unwrap();
    e.write(&i.operands[0], ty, r)
}

/// PTX ISA 9.7.7.1-3 and/or/xor (also on predicates).
fn logic<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], ty)?;
    let r = match i.opcode.name {
        "and" => e.b.build_and(a, b, "").unwrap(),
        "or" => e.b.build_or(a, b, "").unwrap(),
        _ => e.b.build_xor(a, b, "").unwrap(),
    };
    e.write(&i.operands[0], ty, r.into())
}

/// PTX ISA 9.7.7.8-9 shl/shr: the shift amount is an unsigned 32-bit value; amounts of the
/// width or more give 0 (shl, shr.u/b) or the sign fill (shr.s).
fn shift<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<()> {
    let a = e.read_int(&i.operands[1], ty)?;
    let b = e.read_int(&i.operands[2], Type::U32)?;
    let t = a.get_type();
    let w = t.get_bit_width() as u64;
    let i32t = e.ctx().i32_type();
    let big = e.b.build_int_compare(IntPredicate::UGE, b, i32t.const_int(w, false), "").unwrap();
    let amt_clamped = e.b.build_select(big, i32t.const_int(w - 1, false), b, "").unwrap().into_int_value();
    let amt = e.resize(amt_clamped, w as u32, false);
    let r = if i.opcode.name == "shl" {
        let s = e.b.build_left_shift(a, amt, "").unwrap();
        e.b.build_select(big, t.const_zero(), s, "").unwrap().into_int_value()
    } else if ty.is_signed() {
        e.b.build_right_shift(a, amt, true, "").unwrap()
    } else {
        let s = e.b.build_right_shift(a, amt, false, "").unwrap();
        e.b.build_select(big, t.const_zero(), s, "").unwrap().into_int_value()
    };
    e.write(&i.operands[0], ty, r.into())
}

/// The LLVM predicate of a floating-point `.cmpop` (9.7.5): the `u` forms and `nan` are true
/// for unordered operands, the others false.
pub fn float_predicate(cmp: &str) -> Option<FloatPredicate> {
    Some(match cmp {
        "eq" => FloatPredicate::OEQ,
        "ne" => FloatPredicate::ONE,
        "lt" => FloatPredicate::OLT,
        "le" => FloatPredicate::OLE,
        "gt" => FloatPredicate::OGT,
        "ge" => FloatPredicate::OGE,
        "equ" => FloatPredicate::UEQ,
        "neu" => FloatPredicate::UNE,
        "ltu" => FloatPredicate::ULT,
        "leu" => FloatPredicate::ULE,
        "gtu" => FloatPredicate::UGT,
        "geu" => FloatPredicate::UGE,
        "num" => FloatPredicate::ORD,
        "nan" => FloatPredicate::UNO,
        _ => return None,
    })
}

/// Evaluates a comparison `.cmpop` of 9.7.5 on a and b of type `ty` (ints or floats).
pub fn compare<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, cmp: &str, ty: Type, a: BasicValueEnum<'ctx>, b: BasicValueEnum<'ctx>) -> Option<IntValue<'ctx>> {
    if ty.is_float() {
        let p = float_predicate(cmp)?;
        return Some(e.b.build_float_compare(p, a.into_float_value(), b.into_float_value(), "").unwrap());
    }
    let s = ty.is_signed();
    let p = match cmp {
        "eq" => IntPredicate::EQ,
        "ne" => IntPredicate::NE,
        "lt" => if s { IntPredicate::SLT } else { IntPredicate::ULT },
        "le" => if s { IntPredicate::SLE } else { IntPredicate::ULE },
        "gt" => if s { IntPredicate::SGT } else { IntPredicate::UGT },
        "ge" => if s { IntPredicate::SGE } else { IntPredicate::UGE },
        "lo" => IntPredicate::ULT,
        "ls" => IntPredicate::ULE,
        "hi" => IntPredicate::UGT,
        "hs" => IntPredicate::UGE,
        _ => return None,
    };
    Some(e.b.build_int_compare(p, a.into_int_value(), b.into_int_value(), "").unwrap())
}

/// `BoolOp(t, c)` of set/setp (9.7.5.1-2): `c` is the last operand (`{!}c`).
fn compare_with_boolop<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, ty: Type) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
    let cmp = i.mods.iter().copied().find(|m| compare_name(m)).ok_or_else(|| e.err(i.span, format!("`{}` needs a comparison", i.opcode.name)))?;
    let boolop = i.mods.iter().copied().find(|m| matches!(*m, "and" | "or" | "xor"));
    let mut a = e.read(&i.operands[1], ty)?;
    let mut b = e.read(&i.operands[2], ty)?;
    if i.has_mod("ftz") {
        a = super::ops_float::ftz(e, a);
        b = super::ops_float::ftz(e, b);
    }
    let t = compare(e, cmp, ty, a, b).ok_or_else(|| e.err(i.span, format!("comparison `.{cmp}` is not valid for `.{}`", ty.as_str())))?;
    let f = e.b.build_not(t, "").unwrap();
    Ok(match boolop {
        Some(op) => {
            let c = e.read(i.operands.get(3).ok_or_else(|| e.err(i.span, "the Boolean operation needs a predicate operand"))?, Type::Pred)?.into_int_value();
            let comb = |e: &mut FnEmitter<'ctx, 'a, '_>, x| match op {
                "and" => e.b.build_and(x, c, "").unwrap(),
                "or" => e.b.build_or(x, c, "").unwrap(),
                _ => e.b.build_xor(x, c, "").unwrap(),
            };
            (comb(e, t), comb(e, f))
        }
        None => (t, f),
    })
}

/// PTX ISA 9.7.5.2 setp: `setp.CmpOp[.BoolOp][.ftz].type p[|q], a, b[, {!}c];`
/// p = BoolOp(t, c), q = BoolOp(!t, c).
fn setp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let ty = *types_of(i).last().unwrap();
    let (t, f) = compare_with_boolop(e, i, ty)?;
    match &i.operands[0] {
        crate::syntax::ast::Operand::Pair(p, q) => {
            e.write(p, Type::Pred, t.into())?;
            e.write(q, Type::Pred, f.into())
        }
        d => e.write(d, Type::Pred, t.into()),
    }
}

/// PTX ISA 9.7.5.1 set: `set.CmpOp[.BoolOp][.ftz].dtype.stype d, a, b[, {!}c];`
/// True gives 0xffffffff for .u32/.s32 destinations and 1.0f for .f32; false gives 0.
fn set<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let tys = types_of(i);
    let (dty, sty) = match tys.as_slice() {
        [d, s] => (*d, *s),
        _ => return Err(e.err(i.span, "`set` needs a destination and a source type")),
    };
    let (t, _) = compare_with_boolop(e, i, sty)?;
    let i32t = e.ctx().i32_type();
    let one = if dty == Type::F32 { 0x3f80_0000 } else { 0xffff_ffff };
    let r = e.b.build_select(t, i32t.const_int(one, false), i32t.const_zero(), "").unwrap();
    e.write(&i.operands[0], if dty == Type::F32 { Type::B32 } else { dty }, r)
}

/// PTX ISA 9.7.5.4 slct: `slct.dtype.s32 d, a, b, c` / `slct{.ftz}.dtype.f32 d, a, b, c`:
/// d = (c >= 0) ? a : b, with a, b, d moved as raw bits of dtype's width. For .f32, -0 >= 0
/// and a NaN c selects b; .ftz flushes a subnormal c to (signed) zero, which selects a.
fn slct<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let tys = types_of(i);
    let (dty, cty) = match tys.as_slice() {
        [d, c] => (*d, *c),
        _ => return Err(e.err(i.span, "`slct` needs a destination and a comparison type")),
    };
    let a = e.read_int(&i.operands[1], dty)?;
    let b = e.read_int(&i.operands[2], dty)?;
    let ge = match cty {
        Type::S32 => {
            let c = e.read_int(&i.operands[3], Type::S32)?;
            e.b.build_int_compare(IntPredicate::SGE, c, c.get_type().const_zero(), "").unwrap()
        }
        Type::F32 => {
            let mut c = e.read(&i.operands[3], Type::F32)?;
            if i.has_mod("ftz") {
                c = super::ops_float::ftz(e, c);
            }
            let c = c.into_float_value();
            e.b.build_float_compare(FloatPredicate::OGE, c, c.get_type().const_float(0.0), "").unwrap()
        }
        t => return Err(e.err(i.span, format!("`slct` compares `.s32` or `.f32`, not `.{}`", t.as_str()))),
    };
    let r = e.b.build_select(ge, a, b, "").unwrap();
    let wty = match dty {
        Type::F32 => Type::B32,
        Type::F64 => Type::B64,
        t => t,
    };
    e.write(&i.operands[0], wty, r)
}

pub fn compare_name(m: &str) -> bool {
    matches!(m, "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "lo" | "ls" | "hi" | "hs" | "equ" | "neu" | "ltu" | "leu" | "gtu" | "geu" | "num" | "nan")
}
