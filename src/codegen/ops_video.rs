//! Video instructions (9.7.15, 9.7.16): vadd..vset, vadd2..vset2, vadd4..vset4.
//!
//! Scalar forms extract and extend their inputs to exact integers (i128 here, wider than the
//! spec's .s33/.s34 intermediates, so nothing wraps before the final truncation to 32 bits).
//! SIMD forms work per lane on i32 values.
//!
//! Operand selectors (`%r1.b0`, `%r2.h10`, `%r3.b7654`, `d.h0`) are not represented by the
//! parser yet; `split_sel` is the one place that would read them. Until then every operand
//! uses the default selection (full word; SIMD: asel .h10/.b3210, bsel .h32/.b7654,
//! mask .h10/.b3210).

use super::func::{types_of, FnEmitter, R};
use crate::syntax::ast::{Expr, Ident, Instr, Operand, Type, UnOp};
use inkwell::values::IntValue;
use inkwell::IntPredicate;

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    let op = i.opcode.name;
    match op {
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" => scalar(e, i, op).map(|_| true),
        "vset" => scalar(e, i, op).map(|_| true),
        "vmad" => vmad(e, i).map(|_| true),
        "vadd2" | "vsub2" | "vavrg2" | "vavg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2" => simd(e, i, 2).map(|_| true),
        "vadd4" | "vsub4" | "vavrg4" | "vavg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => simd(e, i, 4).map(|_| true),
        _ => Ok(false),
    }
}

/// An operand and its selector (`.b0`..`.b3`, `.h0`, `.h1`, `.h10`, `.b3210`, ...).
fn split_sel<'a>(op: &'a Operand<'a>) -> (&'a Operand<'a>, Option<&'a str>) {
    match op {
        Operand::Sel(inner, sel, _) => (inner, Some(*sel)),
        _ => (op, None),
    }
}

const CMPS: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge"];

fn cmp_pred(c: &str) -> IntPredicate {
    match c {
        "eq" => IntPredicate::EQ,
        "ne" => IntPredicate::NE,
        "lt" => IntPredicate::SLT,
        "le" => IntPredicate::SLE,
        "gt" => IntPredicate::SGT,
        _ => IntPredicate::SGE,
    }
}

fn is_s32(t: Type) -> bool {
    t == Type::S32
}

/// A 32-bit source (register or immediate) as raw bits.
fn src32<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>) -> R<IntValue<'ctx>> {
    e.read_int(op, Type::B32)
}

/// Extracts byte/half-word/word `sel` of `v` (i32) and sign- or zero-extends it to `bits`.
fn part<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, sel: Option<&str>, signed: bool, bits: u32) -> R<IntValue<'ctx>> {
    let (w, k) = match sel {
        None => (32, 0),
        Some(s) => {
            let k = s[1..].parse::<u32>().unwrap_or(99);
            match (&s[..1], k) {
                ("b", 0..=3) => (8, k),
                ("h", 0..=1) => (16, k),
                _ => return Err(e.err(e.span, format!("bad video operand selector `.{s}`"))),
            }
        }
    };
    let sh = e.b.build_right_shift(v, v.get_type().const_int((w * k) as u64, false), false, "").unwrap();
    let x = e.resize(sh, w, false);
    Ok(e.resize(x, bits, signed))
}

fn smin<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, y: IntValue<'ctx>, max: bool) -> IntValue<'ctx> {
    let c = e.b.build_int_compare(if max { IntPredicate::SGT } else { IntPredicate::SLT }, x, y, "").unwrap();
    e.b.build_select(c, x, y, "").unwrap().into_int_value()
}

fn clamp<'ctx>(e: &FnEmitter<'ctx, '_, '_>, x: IntValue<'ctx>, lo: i64, hi: i64) -> IntValue<'ctx> {
    let t = x.get_type();
    let x = smin(e, x, t.const_int(lo as u64, true), true);
    smin(e, x, t.const_int(hi as u64, true), false)
}

/// optSaturate / optSecondaryOp / optMerge (9.7.15) on the exact i128 intermediate `tmp`;
/// returns the low 32 bits.
fn finish<'ctx, 'a>(
    e: &mut FnEmitter<'ctx, 'a, '_>,
    i: &'a Instr<'a>,
    tmp: IntValue<'ctx>,
    sat: bool,
    signed: bool,
    dsel: Option<&str>,
    c: Option<&'a Operand<'a>>,
) -> R<IntValue<'ctx>> {
    let i128t = e.ctx().i128_type();
    let mut tmp = tmp;
    if sat {
        let bits = match dsel {
            None => 32,
            Some(s) if s.starts_with('b') => 8,
            Some(_) => 16,
        };
        tmp = if signed { clamp(e, tmp, -(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { clamp(e, tmp, 0, (1i64 << bits) - 1) };
    }
    let secop = i.mods.iter().find(|m| matches!(**m, "add" | "min" | "max")).copied();
    if let Some(op) = secop {
        let Some(c) = c else { return Err(e.err(i.span, format!("`.{op}` needs a third source operand c"))) };
        let cv = src32(e, c)?;
        let cv = e.resize(cv, 128, signed);
        tmp = match op {
            "add" => e.b.build_int_add(tmp, cv, "").unwrap(),
            "min" => smin(e, tmp, cv, false),
            _ => smin(e, tmp, cv, true),
        };
    }
    let out = e.resize(tmp, 32, false);
    match dsel {
        None => {
            if secop.is_none() && c.is_some() {
                return Err(e.err(i.span, "a third source operand needs a secondary operation (.add/.min/.max) or a destination selector"));
            }
            let _ = i128t;
            Ok(out)
        }
        Some(s) => {
            let Some(c) = c else { return Err(e.err(i.span, "a destination selector needs a third source operand c")) };
            let cv = src32(e, c)?;
            let k: u32 = s[1..].parse().unwrap_or(0);
            let (m, sh): (u64, u32) = if s.starts_with('b') { (0xff, 8 * k) } else { (0xffff, 16 * k) };
            let i32t = e.ctx().i32_type();
            let lo = e.b.build_and(out, i32t.const_int(m, false), "").unwrap();
            let lo = e.b.build_left_shift(lo, i32t.const_int(sh as u64, false), "").unwrap();
            let keep = e.b.build_and(cv, i32t.const_int(!(m << sh) & 0xffff_ffff, false), "").unwrap();
            Ok(e.b.build_or(lo, keep, "").unwrap())
        }
    }
}

/// PTX ISA 9.7.15.1 vadd/vsub/vabsdiff/vmin/vmax, 9.7.15.2 vshl/vshr, 9.7.15.4 vset.
fn scalar<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, op: &str) -> R<()> {
    let tys = types_of(i);
    let (dt, at, bt) = if op == "vset" {
        if tys.len() != 2 {
            return Err(e.err(i.span, "`vset` needs .atype.btype"));
        }
        (Type::U32, tys[0], tys[1])
    } else {
        if tys.len() != 3 {
            return Err(e.err(i.span, format!("`{op}` needs .dtype.atype.btype")));
        }
        (tys[0], tys[1], tys[2])
    };
    let ops = &i.operands;
    if ops.len() != 3 && ops.len() != 4 {
        return Err(e.err(i.span, format!("`{op}` takes 3 or 4 operands")));
    }
    let (d, dsel) = split_sel(&ops[0]);
    let (a, asel) = split_sel(&ops[1]);
    let (b, bsel) = split_sel(&ops[2]);
    let c = ops.get(3);
    let av = src32(e, a)?;
    let bv = src32(e, b)?;
    let i128t = e.ctx().i128_type();
    let ta = part(e, av, asel, is_s32(at), 128)?;
    let tmp = match op {
        "vshl" | "vshr" => {
            let tb = part(e, bv, bsel, false, 128)?;
            let tb = if i.has_mod("clamp") {
                smin(e, tb, i128t.const_int(32, false), false)
            } else {
                e.b.build_and(tb, i128t.const_int(31, false), "").unwrap()
            };
            if op == "vshl" {
                e.b.build_left_shift(ta, tb, "").unwrap()
            } else {
                e.b.build_right_shift(ta, tb, true, "").unwrap()
            }
        }
        _ => {
            let tb = part(e, bv, bsel, is_s32(bt), 128)?;
            match op {
                "vadd" => e.b.build_int_add(ta, tb, "").unwrap(),
                "vsub" => e.b.build_int_sub(ta, tb, "").unwrap(),
                "vabsdiff" => {
                    let x = e.b.build_int_sub(ta, tb, "").unwrap();
                    let y = e.b.build_int_sub(tb, ta, "").unwrap();
                    smin(e, x, y, true)
                }
                "vmin" => smin(e, ta, tb, false),
                "vmax" => smin(e, ta, tb, true),
                _ => {
                    let cmp = i.mods.iter().find(|m| CMPS.contains(m)).copied().ok_or_else(|| e.err(i.span, "`vset` needs a comparison"))?;
                    let r = e.b.build_int_compare(cmp_pred(cmp), ta, tb, "").unwrap();
                    e.b.build_int_z_extend(r, i128t, "").unwrap()
                }
            }
        }
    };
    let sat = op != "vset" && i.has_mod("sat");
    let out = finish(e, i, tmp, sat, is_s32(dt), dsel, c)?;
    e.write(d, dt, out.into())
}

/// A vmad source: a register or immediate, optionally negated (`-%r1`).
fn neg_src<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>) -> R<(IntValue<'ctx>, bool, Option<&'a str>)> {
    if let Operand::Imm(Expr::Unary(UnOp::Neg, inner, _)) = op {
        if let Expr::Sym(id) = &**inner {
            return Ok((read_reg32(e, id)?, true, None));
        }
    }
    let (o, sel) = split_sel(op);
    Ok((src32(e, o)?, false, sel))
}

fn read_reg32<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, id: &Ident<'a>) -> R<IntValue<'ctx>> {
    let Some((p, rty)) = e.reg_read(id.name)? else {
        return Err(e.err(id.span, format!("`{}` is not a register", id.name)));
    };
    let raw = e.b.build_load(super::func::reg_t(e.ctx(), rty), p, "").unwrap().into_int_value();
    Ok(e.resize(raw, 32, false))
}

/// PTX ISA 9.7.15.3 vmad: (a*b) + c with operand negation, .po (plus one), .shr7/.shr15
/// scaling and .sat, following the spec's semantics pseudocode (negation is applied as
/// one's complement plus the `lsb` carry-in).
fn vmad<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let tys = types_of(i);
    if tys.len() != 3 {
        return Err(e.err(i.span, "`vmad` needs .dtype.atype.btype"));
    }
    let (dt, at, bt) = (tys[0], tys[1], tys[2]);
    let [d, a, b, c] = &i.operands[..] else { return Err(e.err(i.span, "`vmad` takes 4 operands")) };
    let (av, na, asel) = neg_src(e, a)?;
    let (bv, nb, bsel) = neg_src(e, b)?;
    let (cv, nc, _) = neg_src(e, c)?;
    let po = i.has_mod("po");
    if po && (na || nb || nc) {
        return Err(e.err(i.span, "`vmad.po` does not allow negated operands (9.7.15.3)"));
    }
    if na && nb && nc {
        return Err(e.err(i.span, "`vmad` negates either the product or c, not both"));
    }
    let signed_final = is_s32(at) || is_s32(bt) || (na != nb) || nc;
    let i128t = e.ctx().i128_type();
    let i32t = e.ctx().i32_type();
    let ta = part(e, av, asel, is_s32(at), 128)?;
    let tb = part(e, bv, bsel, is_s32(bt), 128)?;
    let mut tmp = e.b.build_int_mul(ta, tb, "").unwrap();
    let mut cc = cv;
    let mut lsb = 0u64;
    if na != nb {
        tmp = e.b.build_not(tmp, "").unwrap();
        lsb = 1;
    } else if nc {
        cc = e.b.build_not(cc, "").unwrap();
        lsb = 1;
    }
    if po {
        lsb = 1;
    }
    let c128 = e.resize(cc, 128, signed_final);
    tmp = e.b.build_int_add(tmp, c128, "").unwrap();
    tmp = e.b.build_int_add(tmp, i128t.const_int(lsb, false), "").unwrap();
    if i.has_mod("shr7") {
        tmp = e.b.build_right_shift(tmp, i128t.const_int(7, false), true, "").unwrap();
    } else if i.has_mod("shr15") {
        tmp = e.b.build_right_shift(tmp, i128t.const_int(15, false), true, "").unwrap();
    }
    let mut res = e.resize(tmp, 64, false);
    if i.has_mod("sat") {
        res = if signed_final {
            clamp(e, res, i32::MIN as i64, i32::MAX as i64)
        } else {
            let big = e.b.build_int_compare(IntPredicate::UGT, res, e.ctx().i64_type().const_int(0xffff_ffff, false), "").unwrap();
            e.b.build_select(big, e.ctx().i64_type().const_int(0xffff_ffff, false), res, "").unwrap().into_int_value()
        };
    }
    let out = e.resize(res, 32, false);
    let _ = i32t;
    e.write(d, dt, out.into())
}

/// Lane sources of a SIMD selector: `.hxy` / `.bxyzw`, lane 0 = last digit.
fn sel_lanes(e: &FnEmitter, s: Option<&str>, n: usize, default: &str) -> R<Vec<u32>> {
    let s = s.unwrap_or(default);
    let (pfx, max) = if n == 2 { ("h", 3) } else { ("b", 7) };
    let digits: Vec<u32> = s[1..].chars().rev().map(|c| c.to_digit(10).unwrap_or(99)).collect();
    if !s.starts_with(pfx) || digits.len() != n || digits.iter().any(|d| *d > max) {
        return Err(e.err(e.span, format!("bad SIMD selector `.{s}`")));
    }
    Ok(digits)
}

/// Lanes enabled by a SIMD destination mask (`.h0`, `.h10`, `.b320`, ...).
fn mask_lanes(e: &FnEmitter, s: Option<&str>, n: usize) -> R<Vec<bool>> {
    let Some(s) = s else { return Ok(vec![true; n]) };
    let pfx = if n == 2 { "h" } else { "b" };
    let mut on = vec![false; n];
    if !s.starts_with(pfx) || s.len() < 2 {
        return Err(e.err(e.span, format!("bad SIMD mask `.{s}`")));
    }
    for ch in s[1..].chars() {
        match ch.to_digit(10) {
            Some(k) if (k as usize) < n => on[k as usize] = true,
            _ => return Err(e.err(e.span, format!("bad SIMD mask `.{s}`"))),
        }
    }
    Ok(on)
}

/// PTX ISA 9.7.16.1-4: vadd2/vsub2/vavrg2/vabsdiff2/vmin2/vmax2/vset2 and the 4-lane forms,
/// with .sat, SIMD merge (lanes outside the mask come from c) or .add accumulation into c.
fn simd<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, n: usize) -> R<()> {
    let name = i.opcode.name;
    let op = &name[..name.len() - 1];
    let is_set = op == "vset";
    let tys = types_of(i);
    let (dt, at, bt) = if is_set {
        if tys.len() != 2 {
            return Err(e.err(i.span, format!("`{name}` needs .atype.btype")));
        }
        (Type::U32, tys[0], tys[1])
    } else {
        if tys.len() != 3 {
            return Err(e.err(i.span, format!("`{name}` needs .dtype.atype.btype")));
        }
        (tys[0], tys[1], tys[2])
    };
    let sat = i.has_mod("sat");
    let add = i.has_mod("add");
    if sat && add {
        return Err(e.err(i.span, "saturation cannot be used with the secondary accumulate operation (9.7.16)"));
    }
    let [d, a, b, c] = &i.operands[..] else { return Err(e.err(i.span, format!("`{name}` takes 4 operands"))) };
    let (d, dmask) = split_sel(d);
    let (a, asel) = split_sel(a);
    let (b, bsel) = split_sel(b);
    let w = 32 / n as u32;
    let asrc = sel_lanes(e, asel, n, if n == 2 { "h10" } else { "b3210" })?;
    let bsrc = sel_lanes(e, bsel, n, if n == 2 { "h32" } else { "b7654" })?;
    let on = mask_lanes(e, dmask, n)?;
    let av = src32(e, a)?;
    let bv = src32(e, b)?;
    let cv = src32(e, c)?;
    let i64t = e.ctx().i64_type();
    let i32t = e.ctx().i32_type();
    // Source lanes come from the 64-bit {b, a} (a in the low half).
    let a64 = e.resize(av, 64, false);
    let b64 = e.resize(bv, 64, false);
    let bhi = e.b.build_left_shift(b64, i64t.const_int(32, false), "").unwrap();
    let src = e.b.build_or(a64, bhi, "").unwrap();
    let lane = |e: &mut FnEmitter<'ctx, 'a, '_>, k: u32, signed: bool| -> IntValue<'ctx> {
        let sh = e.b.build_right_shift(src, i64t.const_int((k * w) as u64, false), false, "").unwrap();
        let x = e.resize(sh, w, false);
        e.resize(x, 32, signed)
    };
    let cmp = if is_set { Some(i.mods.iter().find(|m| CMPS.contains(m)).copied().ok_or_else(|| e.err(i.span, format!("`{name}` needs a comparison")))?) } else { None };
    let mut acc = if add { cv } else { i32t.const_zero() };
    let lane_mask = (1u64 << w) - 1;
    for k in 0..n {
        let x = lane(e, asrc[k], is_s32(at));
        let y = lane(e, bsrc[k], is_s32(bt));
        let mut t = match op {
            "vadd" => e.b.build_int_add(x, y, "").unwrap(),
            "vsub" => e.b.build_int_sub(x, y, "").unwrap(),
            "vavrg" | "vavg" => {
                // (x+y+1)>>1 when x+y >= 0, else (x+y)>>1 (arithmetic shifts).
                let s = e.b.build_int_add(x, y, "").unwrap();
                let neg = e.b.build_int_compare(IntPredicate::SLT, s, i32t.const_zero(), "").unwrap();
                let s1 = e.b.build_int_add(s, i32t.const_int(1, false), "").unwrap();
                let s = e.b.build_select(neg, s, s1, "").unwrap().into_int_value();
                e.b.build_right_shift(s, i32t.const_int(1, false), true, "").unwrap()
            }
            "vabsdiff" => {
                let p = e.b.build_int_sub(x, y, "").unwrap();
                let q = e.b.build_int_sub(y, x, "").unwrap();
                smin(e, p, q, true)
            }
            "vmin" => smin(e, x, y, false),
            "vmax" => smin(e, x, y, true),
            _ => {
                let r = e.b.build_int_compare(cmp_pred(cmp.unwrap()), x, y, "").unwrap();
                e.b.build_int_z_extend(r, i32t, "").unwrap()
            }
        };
        if sat && !is_set {
            t = if is_s32(dt) { clamp(e, t, -(1i64 << (w - 1)), (1i64 << (w - 1)) - 1) } else { clamp(e, t, 0, lane_mask as i64) };
        }
        if add {
            if on[k] {
                acc = e.b.build_int_add(acc, t, "").unwrap();
            }
        } else {
            let sh = i32t.const_int((k as u32 * w) as u64, false);
            let m = i32t.const_int(lane_mask, false);
            let v = if on[k] { t } else { e.b.build_right_shift(cv, sh, false, "").unwrap() };
            let v = e.b.build_and(v, m, "").unwrap();
            let v = e.b.build_left_shift(v, sh, "").unwrap();
            acc = e.b.build_or(acc, v, "").unwrap();
        }
    }
    e.write(d, dt, acc.into())
}
