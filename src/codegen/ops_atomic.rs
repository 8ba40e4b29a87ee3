//! Atomics (9.7.12.4 atom, 9.7.12.5 red) on global, shared and generic addresses.
//!
//! CTAs run concurrently on all host cores, so every atomic is a real LLVM atomic:
//! `atomicrmw` where LLVM has the operation (bitwise, add, exch, integer min/max, and
//! `uinc_wrap`/`udec_wrap`, whose definitions are exactly PTX's inc/dec), and a `cmpxchg`
//! loop for floating-point adds (f32, f64, f16, f16x2). The `.sem` qualifier picks the LLVM
//! ordering (relaxed = monotonic, the default); scopes are accepted and treated as `.sys`
//! (the strongest: all host threads observe the operation atomically).
//!
//! The exception is `.shared` memory on the CPU: a CTA's shared memory is only ever touched
//! by the one host thread that runs all of that CTA's threads, one after another between
//! sync points, so a plain load, operation and store is already atomic there (and many
//! times cheaper than a locked instruction). Generic addresses stay real atomics.

use super::func::{int_t, types_of, FnEmitter, R};
use super::ops_mem::space_of;
use crate::syntax::ast::{Instr, Operand, StateSpace, Type};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp};

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    match i.opcode.name {
        "atom" => atom(e, i, true).map(|_| true),
        "red" => atom(e, i, false).map(|_| true),
        "mbarrier" => mbarrier(e, i).map(|_| true),
        "cp" if i.has_mod("mbarrier") => mbarrier(e, i).map(|_| true),
        _ => Ok(false),
    }
}

/// The `.sem` qualifier as an LLVM ordering (9.7.12.4: `.relaxed` when absent).
fn ordering(i: &Instr) -> AtomicOrdering {
    if i.has_mod("acq_rel") {
        AtomicOrdering::AcquireRelease
    } else if i.has_mod("acquire") {
        AtomicOrdering::Acquire
    } else if i.has_mod("release") {
        AtomicOrdering::Release
    } else {
        AtomicOrdering::Monotonic
    }
}

/// The failure ordering of a `cmpxchg` with success ordering `o`.
fn failure_ordering(o: AtomicOrdering) -> AtomicOrdering {
    match o {
        AtomicOrdering::Acquire | AtomicOrdering::AcquireRelease => AtomicOrdering::Acquire,
        AtomicOrdering::SequentiallyConsistent => AtomicOrdering::SequentiallyConsistent,
        _ => AtomicOrdering::Monotonic,
    }
}

const OPS: &[&str] = &["and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max"];

/// PTX ISA 9.7.12.4 atom / 9.7.12.5 red:
/// `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}` and `red{.sem}{.scope}{.space}.op.type [a], b`.
fn atom<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, has_dest: bool) -> R<()> {
    let name = i.opcode.name;
    let op = *i.mods.iter().find(|m| OPS.contains(m)).ok_or_else(|| e.err(i.span, format!("`{name}` needs an operation (.add, .cas, ...)")))?;
    if let Some(&bt) = i.mods.iter().find(|m| **m == "bf16" || **m == "bf16x2") {
        return bf16_add(e, i, has_dest, op, bt == "bf16x2");
    }
    let ty = *types_of(i).last().ok_or_else(|| e.err(i.span, format!("`{name}` needs a type")))?;
    let ord = ordering(i);
    let ops = &i.operands;
    let (d, a, srcs): (Option<&'a Operand<'a>>, &'a Operand<'a>, &'a [Operand<'a>]) = if has_dest {
        let want = if op == "cas" { 4 } else { 3 };
        if ops.len() != want {
            return Err(e.err(i.span, format!("`atom.{op}` takes {want} operands")));
        }
        (Some(&ops[0]), &ops[1], &ops[2..])
    } else {
        if ops.len() != 2 || op == "cas" || op == "exch" {
            return Err(e.err(i.span, "`red` takes an address and one source operand"));
        }
        (None, &ops[0], &ops[1..])
    };
    let ptr = e.address(a, space_of(i))?;
    e.check_access(ptr, ty.size(), true, space_of(i), true, true);
    let bits = ty.bits();
    let ity = int_t(e.ctx(), bits);
    let plain = !e.m.nvptx && space_of(i) == Some(StateSpace::Shared) && !e.m.dsmem;
    let old: IntValue<'ctx> = match (op, ty) {
        ("cas", _) => {
            let cmp = e.read_int(&srcs[0], ty)?;
            let new = e.read_int(&srcs[1], ty)?;
            if plain {
                let old = plain_rmw(e, ptr, ity, |e, old| {
                    let eq = e.b.build_int_compare(inkwell::IntPredicate::EQ, old, cmp, "").unwrap();
                    e.b.build_select(eq, new, old, "").unwrap().into_int_value()
                });
                return finish(e, d, ty, old);
            }
            let r = e.b.build_cmpxchg(ptr, cmp, new, ord, failure_ordering(ord)).unwrap();
            e.b.build_extract_value(r, 0, "").unwrap().into_int_value()
        }
        ("add", Type::F16 | Type::F16x2 | Type::F32 | Type::F64) => {
            if matches!(ty, Type::F16 | Type::F16x2) && !i.has_mod("noftz") {
                return Err(e.err(i.span, format!("`{name}.add.{}` requires .noftz (9.7.12.4)", if ty == Type::F16 { "f16" } else { "f16x2" })));
            }
            let b = e.read(&srcs[0], ty)?;
            if e.m.nvptx && matches!(ty, Type::F32 | Type::F64) {
                // The instruction itself, as inline PTX: LLVM's `atomicrmw fadd` leaves NaN
                // payloads open and folds `x + NaN` into an exchange of that NaN, which is not
                // what the GPU (or the CPU path below) gives.
                let keep: Vec<&str> = i.mods.iter().copied().filter(|m| matches!(*m, "relaxed" | "acquire" | "release" | "acq_rel" | "cta" | "gpu" | "sys" | "global" | "shared")).collect();
                let op = format!("atom.{}{}add.{}", keep.join("."), if keep.is_empty() { "" } else { "." }, if ty == Type::F32 { "f32" } else { "f64" });
                let addr = e.b.build_ptr_to_int(ptr, e.ctx().i64_type(), "").unwrap();
                super::nvvm::atom_fadd(e, &op, addr, b.into_float_value())
            } else {
                // PTX ISA 9.7.12.4: atom.add.f32 on global memory flushes subnormal inputs and
                // results to sign-preserving zero; on shared memory it does not.
                let ftz = ty == Type::F32 && space_of(i) == Some(StateSpace::Global);
                let b = if ftz { super::ops_float::ftz_val(e, b) } else { b };
                let rmw = |e: &mut FnEmitter<'ctx, 'a, '_>, old: IntValue<'ctx>| {
                    let old = if ftz { let v = e.from_bits(old, ty); let v = super::ops_float::ftz_val(e, v); e.to_bits(v) } else { old };
                    let r = float_add(e, ty, old, b);
                    if ftz {
                        let v = e.from_bits(r, ty);
                        let v = super::ops_float::ftz_val(e, v);
                        e.to_bits(v)
                    } else {
                        r
                    }
                };
                if plain {
                    plain_rmw(e, ptr, ity, rmw)
                } else {
                    cas_loop(e, ptr, ity, ord, rmw)
                }
            }
        }
        (_, Type::F16 | Type::F16x2 | Type::F32 | Type::F64) if op != "exch" => {
            return Err(e.err(i.span, format!("`{name}.{op}` is not defined for floating-point types (9.7.12.4)")));
        }
        _ => {
            let b = e.read_int(&srcs[0], ty)?;
            let signed = ty.is_signed();
            let bop = match op {
                "and" => AtomicRMWBinOp::And,
                "or" => AtomicRMWBinOp::Or,
                "xor" => AtomicRMWBinOp::Xor,
                "exch" => AtomicRMWBinOp::Xchg,
                "add" => AtomicRMWBinOp::Add,
                "inc" => AtomicRMWBinOp::UIncWrap,
                "dec" => AtomicRMWBinOp::UDecWrap,
                "min" if signed => AtomicRMWBinOp::Min,
                "min" => AtomicRMWBinOp::UMin,
                "max" if signed => AtomicRMWBinOp::Max,
                "max" => AtomicRMWBinOp::UMax,
                _ => unreachable!(),
            };
            if bits < 8 {
                return Err(e.err(i.span, format!("`{name}.{op}` needs a type of at least 8 bits")));
            }
            if plain {
                plain_rmw(e, ptr, ity, |e, old| int_op(e, bop, old, b))
            } else {
                e.b.build_atomicrmw(bop, ptr, b, ord).map_err(|er| e.err(i.span, format!("`{name}`: {er:?}")))?
            }
        }
    };
    finish(e, d, ty, old)
}

/// `atom.add.noftz.bf16{x2}` / `red.add.noftz.bf16{x2}` (PTX 7.8, sm_90; PTX ISA 8.x
/// 9.7.12.4): each bf16 element gets `old + b` rounded to nearest even, subnormals kept.
fn bf16_add<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, has_dest: bool, op: &str, pair: bool) -> R<()> {
    let name = i.opcode.name;
    if op != "add" || !i.has_mod("noftz") {
        return Err(e.err(i.span, format!("`{name}` on .bf16/.bf16x2 is `.add.noftz` only (9.7.12.4)")));
    }
    let want = if has_dest { 3 } else { 2 };
    if i.operands.len() != want {
        return Err(e.err(i.span, format!("`{name}.add.noftz.bf16` takes {want} operands")));
    }
    let (d, a, src) = if has_dest { (Some(&i.operands[0]), &i.operands[1], &i.operands[2]) } else { (None, &i.operands[0], &i.operands[1]) };
    let bits = if pair { 32 } else { 16 };
    let ity = int_t(e.ctx(), bits);
    let bt = if pair { Type::B32 } else { Type::B16 };
    let b = e.read_int(src, bt)?;
    let ptr = e.address(a, space_of(i))?;
    if e.m.nvptx {
        // The instruction itself, as inline PTX (as for `atom.add.f32`: the address in the
        // instruction's own space).
        let addr = e.b.build_ptr_to_int(ptr, e.ctx().i64_type(), "").unwrap();
        let c = if pair { "=r,l,r" } else { "=h,l,h" };
        let text = format!("atom.{} $0, [$1], $2;", i.mods.join("."));
        let old = super::nvvm::inline_ptx(e, Some(ity.into()), &text, c, &[addr.into(), b.into()]).unwrap().into_int_value();
        return match d {
            Some(d) => e.write(d, bt, old.into()),
            None => Ok(()),
        };
    }
    let i16t = e.ctx().i16_type();
    let add = move |e: &mut FnEmitter<'ctx, 'a, '_>, old: IntValue<'ctx>| -> IntValue<'ctx> {
        if !pair {
            return super::ops_half::bf16_add(e, old, b);
        }
        let half = |e: &FnEmitter<'ctx, 'a, '_>, v: IntValue<'ctx>, k: u64| {
            let v = e.b.build_right_shift(v, ity.const_int(16 * k, false), false, "").unwrap();
            e.b.build_int_truncate(v, i16t, "").unwrap()
        };
        let lo = super::ops_half::bf16_add(e, half(e, old, 0), half(e, b, 0));
        let hi = super::ops_half::bf16_add(e, half(e, old, 1), half(e, b, 1));
        super::ops_half::pack(e, lo, hi)
    };
    let old = if space_of(i) == Some(StateSpace::Shared) { plain_rmw(e, ptr, ity, add) } else { cas_loop(e, ptr, ity, ordering(i), add) };
    match d {
        Some(d) => e.write(d, bt, old.into()),
        None => Ok(()),
    }
}

/// Writes the old value to the destination, if any.
fn finish<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, d: Option<&'a Operand<'a>>, ty: Type, old: IntValue<'ctx>) -> R<()> {
    if let Some(d) = d {
        let v = e.from_bits(old, if ty == Type::F16x2 { Type::B32 } else { ty });
        e.write(d, if ty == Type::F16x2 { Type::B32 } else { ty }, v)?;
    }
    Ok(())
}

/// `*ptr = f(*ptr)` with plain accesses (shared memory, see the module comment); returns
/// the old value.
fn plain_rmw<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, ptr: PointerValue<'ctx>, ity: inkwell::types::IntType<'ctx>, f: impl FnOnce(&mut FnEmitter<'ctx, 'a, '_>, IntValue<'ctx>) -> IntValue<'ctx>) -> IntValue<'ctx> {
    // Other CTAs of a cluster, on other host threads, may update it too (`mapa`).
    if e.m.dsmem {
        return cas_loop(e, ptr, ity, AtomicOrdering::AcquireRelease, f);
    }
    let old = e.b.build_load(ity, ptr, "").unwrap().into_int_value();
    let ld = old.as_instruction_value().unwrap();
    let _ = ld.set_alignment(ity.get_bit_width() / 8);
    let new = f(e, old);
    let st = e.b.build_store(ptr, new).unwrap();
    let _ = st.set_alignment(ity.get_bit_width() / 8);
    // Threads of a lane loop may update the same word: keep these in order.
    let ctx = e.ctx();
    let serial = ctx.get_kind_id(crate::passes::parallel_lanes::SERIAL);
    let node = ctx.metadata_node(&[]);
    let _ = ld.set_metadata(node, serial);
    let _ = st.set_metadata(node, serial);
    old
}

/// The new value of an integer atomic operation, with LLVM's `atomicrmw` definitions (which
/// are PTX's: `inc` wraps to 0 once `old >= b`, `dec` to `b` when `old == 0 || old > b`).
fn int_op<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, op: AtomicRMWBinOp, old: IntValue<'ctx>, b: IntValue<'ctx>) -> IntValue<'ctx> {
    use inkwell::IntPredicate as P;
    let one = old.get_type().const_int(1, false);
    let zero = old.get_type().const_zero();
    let sel = |e: &mut FnEmitter<'ctx, '_, '_>, p: P, x: IntValue<'ctx>, y: IntValue<'ctx>| {
        let c = e.b.build_int_compare(p, x, y, "").unwrap();
        e.b.build_select(c, x, y, "").unwrap().into_int_value()
    };
    match op {
        AtomicRMWBinOp::And => e.b.build_and(old, b, "").unwrap(),
        AtomicRMWBinOp::Or => e.b.build_or(old, b, "").unwrap(),
        AtomicRMWBinOp::Xor => e.b.build_xor(old, b, "").unwrap(),
        AtomicRMWBinOp::Xchg => b,
        AtomicRMWBinOp::Add => e.b.build_int_add(old, b, "").unwrap(),
        AtomicRMWBinOp::Min => sel(e, P::SLT, old, b),
        AtomicRMWBinOp::Max => sel(e, P::SGT, old, b),
        AtomicRMWBinOp::UMin => sel(e, P::ULT, old, b),
        AtomicRMWBinOp::UMax => sel(e, P::UGT, old, b),
        AtomicRMWBinOp::UIncWrap => {
            let wrap = e.b.build_int_compare(P::UGE, old, b, "").unwrap();
            let inc = e.b.build_int_add(old, one, "").unwrap();
            e.b.build_select(wrap, zero, inc, "").unwrap().into_int_value()
        }
        AtomicRMWBinOp::UDecWrap => {
            let z = e.b.build_int_compare(P::EQ, old, zero, "").unwrap();
            let gt = e.b.build_int_compare(P::UGT, old, b, "").unwrap();
            let wrap = e.b.build_or(z, gt, "").unwrap();
            let dec = e.b.build_int_sub(old, one, "").unwrap();
            e.b.build_select(wrap, b, dec, "").unwrap().into_int_value()
        }
        _ => unreachable!("no other integer atomics"),
    }
}

/// `old + b` on the bits of a float (or f16x2 pair) value, rounding to nearest even.
fn float_add<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, ty: Type, old: IntValue<'ctx>, b: BasicValueEnum<'ctx>) -> IntValue<'ctx> {
    match ty {
        Type::F16x2 => {
            // Two halves, low element first; each added separately.
            let b = b.into_int_value();
            let i16t = e.ctx().i16_type();
            let i32t = e.ctx().i32_type();
            let mut acc = i32t.const_zero();
            for k in 0..2u64 {
                let sh = i32t.const_int(16 * k, false);
                let x = e.b.build_right_shift(old, sh, false, "").unwrap();
                let x = e.b.build_int_truncate(x, i16t, "").unwrap();
                let y = e.b.build_right_shift(b, sh, false, "").unwrap();
                let y = e.b.build_int_truncate(y, i16t, "").unwrap();
                let yv = e.from_bits(y, Type::F16);
                let s = float_add(e, Type::F16, x, yv);
                let s = e.b.build_int_z_extend(s, i32t, "").unwrap();
                let s = e.b.build_left_shift(s, sh, "").unwrap();
                acc = e.b.build_or(acc, s, "").unwrap();
            }
            acc
        }
        _ => {
            let x = e.from_bits(old, ty).into_float_value();
            let y = b.into_float_value();
            let s = e.b.build_float_add(x, y, "").unwrap();
            // NaN results as the GPU's adders give them (see ops_float): f32 the canonical
            // 0x7fffffff, f64 a NaN operand quieted (else the default NaN).
            let s = match ty {
                Type::F32 => super::ops_float::canon_nan(e, s),
                Type::F64 => super::ops_float::nan_f64(e, s, &[x, y]),
                _ => s,
            };
            e.to_bits(s.as_basic_value_enum())
        }
    }
}


/// A compare-and-swap loop: atomically replaces `*ptr` with `f(old)`; returns `old`.
fn cas_loop<'ctx, 'a>(
    e: &mut FnEmitter<'ctx, 'a, '_>,
    ptr: PointerValue<'ctx>,
    ity: inkwell::types::IntType<'ctx>,
    ord: AtomicOrdering,
    f: impl FnOnce(&mut FnEmitter<'ctx, 'a, '_>, IntValue<'ctx>) -> IntValue<'ctx>,
) -> IntValue<'ctx> {
    let init = e.b.build_load(ity, ptr, "").unwrap();
    let inst = init.as_instruction_value().unwrap();
    let _ = inst.set_alignment(ity.get_bit_width() / 8);
    let _ = inst.set_atomic_ordering(AtomicOrdering::Monotonic);
    let pre = e.b.get_insert_block().unwrap();
    let lp = e.ctx().append_basic_block(e.f, "atom.loop");
    let done = e.ctx().append_basic_block(e.f, "atom.done");
    e.b.build_unconditional_branch(lp).unwrap();
    e.b.position_at_end(lp);
    let phi = e.b.build_phi(ity, "atom.old").unwrap();
    let old = phi.as_basic_value().into_int_value();
    let new = f(e, old);
    let r = e.b.build_cmpxchg(ptr, old, new, ord, failure_ordering(ord)).unwrap();
    let seen = e.b.build_extract_value(r, 0, "").unwrap().into_int_value();
    let ok = e.b.build_extract_value(r, 1, "").unwrap().into_int_value();
    let cur = e.b.get_insert_block().unwrap();
    phi.add_incoming(&[(&init.into_int_value(), pre), (&seen, cur)]);
    e.b.build_conditional_branch(ok, done, lp).unwrap();
    e.b.position_at_end(done);
    seen
}

/// The fields of ptxr's mbarrier object (PTX 7.0 `mbarrier`, PTX ISA 7.x section 9.7.12.15;
/// the object is opaque to programs): the pending arrival count of the current phase in bits
/// 0-19, the expected arrival count in bits 20-39, the phase number (mod 8) in bits 40-42 and
/// the transaction count (PTX 8.0 `expect_tx`/`complete_tx`, two's complement) in bits 43-63.
/// A phase completes when its pending arrivals and its transaction count are both zero. The
/// `state` an arrive returns is the object before the arrive.
const MB_BITS: u64 = 20;
const MB_MASK: u64 = (1 << MB_BITS) - 1;
const MB_PHASE: u64 = 40;
const MB_TX: u64 = 43;

/// The object's fields (pending, expected, phase, tx) of word `w`; tx sign-extended.
fn mb_fields<'ctx>(e: &FnEmitter<'ctx, '_, '_>, w: IntValue<'ctx>) -> [IntValue<'ctx>; 4] {
    let i64t = e.ctx().i64_type();
    let c = |v: u64| i64t.const_int(v, false);
    let pend = e.b.build_and(w, c(MB_MASK), "").unwrap();
    let exp = e.b.build_and(e.b.build_right_shift(w, c(MB_BITS), false, "").unwrap(), c(MB_MASK), "").unwrap();
    let phase = e.b.build_and(e.b.build_right_shift(w, c(MB_PHASE), false, "").unwrap(), c(7), "").unwrap();
    let tx = e.b.build_right_shift(w, c(MB_TX), true, "").unwrap();
    [pend, exp, phase, tx]
}

fn mb_pack<'ctx>(e: &FnEmitter<'ctx, '_, '_>, pend: IntValue<'ctx>, exp: IntValue<'ctx>, phase: IntValue<'ctx>, tx: IntValue<'ctx>) -> IntValue<'ctx> {
    let i64t = e.ctx().i64_type();
    let c = |v: u64| i64t.const_int(v, false);
    let pend = e.b.build_and(pend, c(MB_MASK), "").unwrap();
    let exp = e.b.build_left_shift(e.b.build_and(exp, c(MB_MASK), "").unwrap(), c(MB_BITS), "").unwrap();
    let phase = e.b.build_left_shift(e.b.build_and(phase, c(7), "").unwrap(), c(MB_PHASE), "").unwrap();
    let tx = e.b.build_left_shift(tx, c(MB_TX), "").unwrap();
    e.b.build_or(e.b.build_or(pend, exp, "").unwrap(), e.b.build_or(phase, tx, "").unwrap(), "").unwrap()
}

/// The object after `count` arrivals and `tx_add` more expected transaction bytes (`drop`:
/// the arrivals also leave the expected count): with no arrival pending and no transaction
/// outstanding the phase completes, the next expecting every arrival again.
fn mb_arrive<'ctx>(e: &FnEmitter<'ctx, '_, '_>, w: IntValue<'ctx>, count: IntValue<'ctx>, tx_add: IntValue<'ctx>, drop: bool) -> IntValue<'ctx> {
    let i64t = e.ctx().i64_type();
    let [pend, exp, phase, tx] = mb_fields(e, w);
    let exp = if drop { e.b.build_int_sub(exp, count, "").unwrap() } else { exp };
    let tx = e.b.build_int_add(tx, tx_add, "").unwrap();
    // More arrivals than pending are undefined; they bring the count to zero too.
    let zero = e.b.build_int_compare(inkwell::IntPredicate::ULE, pend, count, "").unwrap();
    let left = e.b.build_int_sub(pend, count, "").unwrap();
    let pend = e.b.build_select(zero, i64t.const_zero(), left, "").unwrap().into_int_value();
    mb_settle(e, pend, exp, phase, tx)
}

/// Completes the phase if nothing is pending: pending and tx both zero.
fn mb_settle<'ctx>(e: &FnEmitter<'ctx, '_, '_>, pend: IntValue<'ctx>, exp: IntValue<'ctx>, phase: IntValue<'ctx>, tx: IntValue<'ctx>) -> IntValue<'ctx> {
    let i64t = e.ctx().i64_type();
    let z = i64t.const_zero();
    let p0 = e.b.build_int_compare(inkwell::IntPredicate::EQ, pend, z, "").unwrap();
    let t0 = e.b.build_int_compare(inkwell::IntPredicate::EQ, tx, z, "").unwrap();
    let done = e.b.build_and(p0, t0, "").unwrap();
    let pend = e.b.build_select(done, exp, pend, "").unwrap().into_int_value();
    let next = e.b.build_int_add(phase, i64t.const_int(1, false), "").unwrap();
    let phase = e.b.build_select(done, next, phase, "").unwrap().into_int_value();
    mb_pack(e, pend, exp, phase, tx)
}

/// `complete_tx` of `bytes` on the mbarrier at `ptr` (PTX 8.0; also what a bulk copy does
/// when it has copied its bytes: `ops_bulk`).
/// An arrive-on with count 1 on the mbarrier at `ptr` (what `tcgen05.commit` signals).
pub(super) fn mbarrier_arrive_one<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, ptr: PointerValue<'ctx>) {
    let i64t = e.ctx().i64_type();
    let one = i64t.const_int(1, false);
    plain_rmw(e, ptr, i64t, |e, w| mb_arrive(e, w, one, i64t.const_zero(), false));
}

pub(super) fn mbarrier_complete_tx<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, ptr: PointerValue<'ctx>, bytes: IntValue<'ctx>) {
    let i64t = e.ctx().i64_type();
    plain_rmw(e, ptr, i64t, |e, w| {
        let [pend, exp, phase, tx] = mb_fields(e, w);
        let tx = e.b.build_int_sub(tx, bytes, "").unwrap();
        mb_settle(e, pend, exp, phase, tx)
    });
}

/// `mbarrier.init/inval/arrive/arrive_drop/test_wait/try_wait/pending_count`,
/// `expect_tx/complete_tx`, `arrive.expect_tx` and `cp.async.mbarrier.arrive`. The object
/// lives in shared memory, which only the CPU thread running the CTA touches, so each
/// operation is a plain read-modify-write. `cp.async` copies complete before the next
/// instruction here, so `cp.async.mbarrier.arrive.noinc` is an arrive, and without `.noinc`
/// (the pending count goes up by one, then the triggered arrive brings it down) nothing
/// changes. Waiting is a loop around `test_wait`/`try_wait`, which `lanes::lockstep` treats as
/// a spin loop (the waiting thread yields).
fn mbarrier<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let i64t = e.ctx().i64_type();
    let c = |v: u64| i64t.const_int(v, false);
    let op = if i.opcode.name == "cp" {
        "cp.arrive"
    } else {
        *i.mods.iter().find(|m| matches!(**m, "init" | "inval" | "arrive" | "arrive_drop" | "test_wait" | "try_wait" | "pending_count" | "expect_tx" | "complete_tx")).ok_or_else(|| e.err(i.span, "`mbarrier` needs an operation"))?
    };
    if op == "pending_count" {
        let st = e.read_int(&i.operands[1], Type::B64)?;
        let n = e.b.build_and(st, c(MB_MASK), "").unwrap();
        let n = e.b.build_int_truncate(n, e.ctx().i32_type(), "").unwrap();
        return e.write(&i.operands[0], Type::U32, n.into());
    }
    let at = match op {
        "init" | "inval" | "cp.arrive" | "expect_tx" | "complete_tx" => &i.operands[0],
        _ => &i.operands[1],
    };
    let ptr = e.address(at, space_of(i))?;
    if e.m.nvptx {
        return mbarrier_ptx(e, i, op, ptr);
    }
    // The checking mode: the 8-byte barrier object (synchronization, not a race).
    e.check_access(ptr, 8, !matches!(op, "test_wait" | "try_wait"), space_of(i), true, true);
    let u32_operand = |e: &mut FnEmitter<'ctx, 'a, '_>, k: usize| -> R<IntValue<'ctx>> {
        let n = e.read_int(&i.operands[k], Type::U32)?;
        Ok(e.b.build_int_z_extend(n, i64t, "").unwrap())
    };
    match op {
        "init" => {
            let n = u32_operand(e, 1)?;
            let w = mb_pack(e, n, n, c(0), c(0));
            plain_rmw(e, ptr, i64t, |_, _| w);
            Ok(())
        }
        "inval" => {
            plain_rmw(e, ptr, i64t, |_, _| c(0));
            Ok(())
        }
        "expect_tx" => {
            let n = u32_operand(e, 1)?;
            plain_rmw(e, ptr, i64t, |e, w| {
                let [pend, exp, phase, tx] = mb_fields(e, w);
                mb_pack(e, pend, exp, phase, e.b.build_int_add(tx, n, "").unwrap())
            });
            Ok(())
        }
        "complete_tx" => {
            let n = u32_operand(e, 1)?;
            mbarrier_complete_tx(e, ptr, n);
            Ok(())
        }
        "arrive" | "arrive_drop" | "cp.arrive" => {
            if op == "cp.arrive" && !i.has_mod("noinc") {
                return Ok(());
            }
            let expect = i.has_mod("expect_tx");
            let (count, tx_add) = match i.operands.get(2) {
                Some(_) if expect => (c(1), u32_operand(e, 2)?),
                Some(_) if op != "cp.arrive" => (u32_operand(e, 2)?, c(0)),
                _ => (c(1), c(0)),
            };
            let drop = op == "arrive_drop";
            let old = plain_rmw(e, ptr, i64t, |e, w| mb_arrive(e, w, count, tx_add, drop));
            match i.operands.first() {
                Some(d) if op != "cp.arrive" => e.write(d, Type::B64, old.into()),
                _ => Ok(()),
            }
        }
        _ => {
            // test_wait / try_wait: has the phase of `state` (or the phase of parity
            // `phaseParity`) completed? A waiting thread gets false and tries again.
            let w = e.b.build_load(i64t, ptr, "mbarrier").unwrap().into_int_value();
            // In order with the other lanes' arrives (like `plain_rmw`'s accesses).
            let serial = e.ctx().get_kind_id(crate::passes::parallel_lanes::SERIAL);
            let _ = w.as_instruction().unwrap().set_metadata(e.ctx().metadata_node(&[]), serial);
            if e.m.dsmem {
                // Another CTA of the cluster may arrive on it (`mapa`).
                let _ = w.as_instruction().unwrap().set_alignment(8);
                let _ = w.as_instruction().unwrap().set_atomic_ordering(AtomicOrdering::Acquire);
            }
            let [_, _, phase, _] = mb_fields(e, w);
            let done = if i.has_mod("parity") {
                let p = e.read_int(&i.operands[2], Type::U32)?;
                let p = e.b.build_int_z_extend(p, i64t, "").unwrap();
                let cur = e.b.build_and(phase, c(1), "").unwrap();
                let want = e.b.build_and(p, c(1), "").unwrap();
                e.b.build_int_compare(inkwell::IntPredicate::NE, cur, want, "").unwrap()
            } else {
                let st = e.read_int(&i.operands[2], Type::B64)?;
                let [_, _, then, _] = mb_fields(e, st);
                e.b.build_int_compare(inkwell::IntPredicate::NE, phase, then, "").unwrap()
            };
            e.write(&i.operands[0], Type::Pred, done.into())
        }
    }
}

/// The mbarrier instruction itself for LLVM's NVPTX backend, as inline PTX (the address in
/// the instruction's own space, `ptr`).
fn mbarrier_ptx<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, op: &str, ptr: PointerValue<'ctx>) -> R<()> {
    let i64t = e.ctx().i64_type();
    let addr = e.b.build_ptr_to_int(ptr, i64t, "").unwrap();
    // The default semantics and scope (.release/.acquire, .cta) are left out, so that the
    // instruction is valid before PTX 8.0.
    let mods: Vec<&str> = i.mods.iter().copied().filter(|m| !matches!(*m, "release" | "acquire" | "cta")).collect();
    let name = format!("{}.{}", i.opcode.name, mods.join("."));
    let i32v = |e: &mut FnEmitter<'ctx, 'a, '_>, k: usize| -> R<inkwell::values::BasicValueEnum<'ctx>> { Ok(e.read_int(&i.operands[k], Type::U32)?.into()) };
    match op {
        "init" | "expect_tx" | "complete_tx" => {
            let n = i32v(e, 1)?;
            super::nvvm::inline_ptx(e, None, &format!("{name} [$0], $1;"), "l,r", &[addr.into(), n]);
        }
        "inval" | "cp.arrive" => {
            super::nvvm::inline_ptx(e, None, &format!("{name} [$0];"), "l", &[addr.into()]);
        }
        "arrive" | "arrive_drop" => {
            let (asm, cons, args) = match i.operands.get(2) {
                Some(_) => (format!("{name} $0, [$1], $2;"), "=l,l,r", vec![addr.into(), i32v(e, 2)?]),
                None => (format!("{name} $0, [$1];"), "=l,l", vec![addr.into()]),
            };
            let r = super::nvvm::inline_ptx(e, Some(i64t.into()), &asm, cons, &args).unwrap();
            e.write(&i.operands[0], Type::B64, r)?;
        }
        _ => {
            // test_wait/try_wait: the predicate result goes through a 32-bit register.
            let arg = if i.has_mod("parity") { i32v(e, 2)? } else { e.read_int(&i.operands[2], Type::B64)?.into() };
            let cons = if i.has_mod("parity") { "=r,l,r" } else { "=r,l,l" };
            let asm = format!("{{ .reg .pred %mbp; {name} %mbp, [$1], $2; selp.u32 $0, 1, 0, %mbp; }}");
            let r = super::nvvm::inline_ptx(e, Some(e.ctx().i32_type().into()), &asm, cons, &[addr.into(), arg]).unwrap().into_int_value();
            let p = e.b.build_int_compare(inkwell::IntPredicate::NE, r, e.ctx().i32_type().const_zero(), "").unwrap();
            e.write(&i.operands[0], Type::Pred, p.into())?;
        }
    }
    Ok(())
}
