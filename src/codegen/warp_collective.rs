//! Warp collectives on the warp path: `shfl`/`shfl.sync`, `vote`/`vote.sync`, `match.sync`,
//! `redux.sync`, `activemask` and `bar.warp.sync` as operations on the 32 lanes of the warp
//! at once; `mma`, `wmma.mma` and `ldmatrix` through an exchange array ([`matrix`]).
//!
//! The plan takes a collective in a kernel whose warps are the hardware's (`warp::setup` runs
//! the per-thread version of a kernel otherwise); the matrix
//! instructions only where every live lane of the warp runs them together (a converged
//! block: outside every divergent branch's region and every loop with a divergent exit;
//! `warp::sync_obstacle`), the others also where lanes may have diverged ([`runs_diverged`]).
//! The lanes taking part are the warp's active lanes `A` (those waiting for this block:
//! in a converged block every lane that has not exited), and the results are those of the
//! per-thread scheduler
//! (`runtime::warp::complete`), which is this path's oracle in the tests:
//!
//! - the participants of lane `l` are `(membermask | 1 << l) & A`, with lane `l`'s own
//!   membermask where it may differ per lane (the lanes it names must have the same one:
//!   [`lane_masks`]);
//! - a shuffle reads lane `j`'s operand when `j` is in range and active, else the lane's
//!   own operand (sourcing from an inactive lane is undefined on a GPU);
//! - vote, match and redux reduce over the participants.
//!
//! Each collective closes the open lane loop (every lane's operand must be written before
//! any lane reads another's), copies its per-lane operands to arrays in one lane loop,
//! computes, and writes the results in a second.

use super::func::{FnEmitter, R};
use super::warp::{self, LANES};
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::values::{IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;

/// Whether collective `i` runs where the warp's lanes may have diverged (not every live lane
/// runs its block together): shuffles, votes, `match`, `redux`, `activemask`,
/// `bar.warp.sync`. The lanes that run it are those the dispatch brings to its block at
/// once. The dispatch runs the block with the lowest number any lane waits for, and blocks
/// are numbered so that every edge but a loop's back edge leads to a higher number, while a
/// loop's lanes run each iteration together: so once a block runs, every lane that reaches it
/// in this pass is there (a lane elsewhere reaches it only in a later iteration of an
/// enclosing loop, or never). A lane whose membermask names a live lane that is not there
/// would wait for it (PTX ISA 9.7.8.5 shfl.sync: "wait until all non-exited threads
/// corresponding to membermask have executed shfl.sync with the same qualifiers and same
/// membermask value"), which only a collective of another pass or of another instruction
/// could release (PTX lets lanes at different `.sync` instructions meet on sm_70 and up;
/// CUDA calls it undefined: "all non-exited threads named in mask must execute the same
/// intrinsic with the same mask"): the CTA stops there with `STATUS_WARP_APART`, whose
/// message points to `--exec thread`, which runs such meetings (`warp::sync_obstacle` sends
/// kernels whose masks visibly allow one there). The warp matrix instructions, which need
/// the whole warp, take the warp path only where every live lane runs them together.
pub fn runs_diverged(i: &Instr) -> bool {
    matches!(i.opcode.name, "shfl" | "vote" | "match" | "activemask" | "redux") || (matches!(i.opcode.name, "bar" | "barrier") && i.has_mod("warp"))
}

/// Whether `i` is a warp collective this path runs.
pub fn is_collective(i: &Instr) -> bool {
    matches!(i.opcode.name, "shfl" | "vote" | "match" | "activemask" | "redux") || (matches!(i.opcode.name, "bar" | "barrier") && i.has_mod("warp")) || is_matrix(i)
}

/// The warp matrix instructions (PTX ISA 9.7.13): `mma`, `wmma.mma`, `ldmatrix`, `stmatrix`,
/// and `wgmma.mma_async` with A in registers or sparse (with a dense A and B from shared
/// memory every lane computes its results on its own: [`wgmma_reg_a`]).
pub fn is_matrix(i: &Instr) -> bool {
    matches!(i.opcode.name, "mma" | "ldmatrix" | "stmatrix") || (i.opcode.name == "wmma" && i.mods.first() == Some(&"mma")) || wgmma_reg_a(i)
}

/// `wgmma.mma_async` whose A is a list of registers (PTX ISA 8.x 9.7.15.5.2), or sparse
/// (`.sp`, 9.7.15.6): the lanes of a warp exchange their A fragments and metadata.
pub fn wgmma_reg_a(i: &Instr) -> bool {
    i.opcode.name == "wgmma" && i.mods.first() == Some(&"mma_async") && (matches!(i.operands.get(1), Some(crate::syntax::ast::Operand::Vector(..))) || i.has_mod("sp"))
}

/// The operand index of a collective's membermask (`None`: the deprecated forms without
/// `.sync`, which take the active lanes, and `activemask`).
pub fn membermask(i: &Instr) -> Option<usize> {
    match i.opcode.name {
        "shfl" if i.has_mod("sync") => Some(4),
        "vote" if i.has_mod("sync") => Some(2),
        "match" | "redux" => Some(2),
        "bar" | "barrier" => Some(0),
        _ => None,
    }
}

/// Whether an immediate membermask names all 32 lanes.
pub fn full_mask(text: &str) -> bool {
    let t: String = text.chars().filter(|c| !matches!(c, '(' | ')') && !c.is_whitespace()).collect();
    let t = t.as_str();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i128::from_str_radix(h.trim_end_matches(['U', 'u']), 16).ok()
    } else {
        t.trim_end_matches(['U', 'u']).parse::<i128>().ok()
    };
    v.map_or(false, |v| v as u32 == u32::MAX)
}

/// A `[32 x T]` scratch array.
fn scratch<'ctx>(e: &FnEmitter<'ctx, '_, '_>, bits: u32, name: &str) -> PointerValue<'ctx> {
    let t = super::func::int_t(e.ctx(), bits).array_type(LANES);
    let p = e.alloca_builder().build_alloca(t, name).unwrap();
    if let Some(inst) = p.as_instruction() {
        let _ = inst.set_alignment(64);
        // Lane loops read and write their own lane's element (a shuffle's loop also reads
        // other lanes' elements of an array it does not write): see `passes::parallel_lanes`.
        let md = e.ctx().metadata_node(&[]);
        let _ = inst.set_metadata(md, e.ctx().get_kind_id(warp::LANE_ARRAY));
    }
    p
}

fn elem<'ctx>(e: &FnEmitter<'ctx, '_, '_>, arr: PointerValue<'ctx>, bits: u32, lane: IntValue<'ctx>) -> PointerValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let t = super::func::int_t(e.ctx(), bits).array_type(LANES);
    unsafe { e.b.build_in_bounds_gep(t, arr, &[i32t.const_zero(), lane], "").unwrap() }
}

fn load_vec<'ctx>(e: &FnEmitter<'ctx, '_, '_>, arr: PointerValue<'ctx>, bits: u32) -> VectorValue<'ctx> {
    let t = super::func::int_t(e.ctx(), bits).vec_type(LANES);
    e.b.build_load(t, arr, "").unwrap().into_vector_value()
}

/// The bits of a `<32 x i1>` as an `i32`.
fn bits_of<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: VectorValue<'ctx>) -> IntValue<'ctx> {
    e.b.build_bit_cast(v, e.ctx().i32_type(), "").unwrap().into_int_value()
}

/// Emits collective `inst` of the block numbered `id`, with no lane loop open.
pub(super) fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, id: u32) -> R<()> {
    let i = inst.src;
    if is_matrix(i) {
        return matrix(e, func, &[inst], id);
    }
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let c32 = |v: u64| i32t.const_int(v, false);
    let ops = &i.operands;
    // The active lanes: every lane waiting for this block.
    let next = warp::next_lanes(e);
    let here = e.b.build_int_compare(IntPredicate::EQ, next, warp::splat(e, c32(id as u64)), "").unwrap();
    let active = bits_of(e, here);
    // The live lanes (not exited), where they may not all be here (`runs_diverged`).
    let live = if converged(e, id) {
        None
    } else {
        let done = e.b.build_int_compare(IntPredicate::EQ, next, warp::splat(e, c32(warp::DONE)), "").unwrap();
        Some(e.b.build_not(bits_of(e, done), "live").unwrap())
    };
    // The membermask: read once for the warp where the analysis finds it uniform, else each
    // lane's own (`Mask::Lanes`).
    let mask = match membermask(i) {
        Some(k) => {
            if k >= ops.len() {
                return Err(e.err(i.span, format!("`{}` needs a membermask", super::func::instr_name(i))));
            }
            if per_lane_mask(e, func, inst, id, k) {
                lane_masks(e, func, inst, id, k, active, live)?
            } else if matches!(i.opcode.name, "bar" | "barrier") && live.is_none() {
                // Every live lane is here.
                Mask::Uniform(c32(u32::MAX as u64))
            } else {
                let m = uniform_operand(e, func, inst, id, k, active)?;
                if let Some(live) = live {
                    // A live lane of the membermask that is not here: the lanes here would
                    // wait for it for ever (`runs_diverged`).
                    let away = e.b.build_and(e.b.build_and(m, live, "").unwrap(), e.b.build_not(active, "").unwrap(), "").unwrap();
                    let away = e.b.build_int_compare(IntPredicate::NE, away, c32(0), "mask.away").unwrap();
                    e.abort_if(away, super::abi::STATUS_WARP_APART);
                }
                Mask::Uniform(m)
            }
        }
        None => Mask::Uniform(c32(u32::MAX as u64)),
    };
    let mask = &mask;
    match i.opcode.name {
        // PTX ISA 9.7.12.2 bar.warp.sync: every lane of the membermask that has not exited
        // is here already.
        "bar" | "barrier" => Ok(()),
        // PTX ISA 9.7.12.9 activemask: the lanes executing it.
        "activemask" => write_lanes(e, func, inst, id, active, &[(&ops[0], Type::B32, Val::Uniform(active))]),
        // PTX ISA 9.7.8.4 shfl (deprecated), 9.7.8.5 shfl.sync
        "shfl" => shfl(e, func, inst, id, active),
        // PTX ISA 9.7.12.6 vote (deprecated), 9.7.12.7 vote.sync
        "vote" => {
            let mode = if i.has_mod("all") {
                0
            } else if i.has_mod("any") {
                1
            } else if i.has_mod("uni") {
                2
            } else {
                3
            };
            let pa = gather(e, func, inst, id, &[(&ops[1], Type::Pred, 8)])?[0];
            let pv = load_vec(e, pa, 8);
            let set = e.b.build_int_compare(IntPredicate::NE, pv, ctx.i8_type().vec_type(LANES).const_zero(), "").unwrap();
            let yes = e.b.build_and(bits_of(e, set), active, "").unwrap();
            let (ty, per) = if mode == 3 { (Type::B32, "ballot") } else { (Type::Pred, "vote") };
            let out = per_lane(e, id, ty.bits().max(1), per, |e, lane| {
                let parts = participants(e, mask, active, lane);
                let ballot = e.b.build_and(yes, parts, "").unwrap();
                let none = e.b.build_int_compare(IntPredicate::EQ, ballot, c32(0), "").unwrap();
                let all = e.b.build_int_compare(IntPredicate::EQ, ballot, parts, "").unwrap();
                match mode {
                    0 => all,
                    1 => e.b.build_not(none, "").unwrap(),
                    2 => e.b.build_or(none, all, "").unwrap(),
                    _ => ballot,
                }
            });
            write_lanes(e, func, inst, id, active, &[(&ops[0], ty, Val::Lanes(out, if ty == Type::Pred { 8 } else { 32 }))])
        }
        // PTX ISA 9.7.12.8 match.sync
        "match" => {
            let ty = super::func::types_of(i).last().copied().unwrap_or(Type::B32);
            let bits = ty.bits();
            let all_mode = i.has_mod("all");
            let a = gather(e, func, inst, id, &[(&ops[1], ty, bits)])?[0];
            let av = load_vec(e, a, bits);
            let (d, p) = match &ops[0] {
                Operand::Pair(d, p) => (&**d, Some(&**p)),
                d => (d, None),
            };
            let pred = scratch(e, 8, "match.p");
            let out = per_lane(e, id, 32, "match", |e, lane| {
                let parts = participants(e, mask, active, lane);
                let mine = e.b.build_load(super::func::int_t(ctx, bits), elem(e, a, bits, lane), "").unwrap().into_int_value();
                let eq = e.b.build_int_compare(IntPredicate::EQ, av, warp::splat(e, mine), "").unwrap();
                let same = e.b.build_and(bits_of(e, eq), parts, "").unwrap();
                if all_mode {
                    // match.all: membermask's lanes if all equal, else 0; p = all equal.
                    let all = e.b.build_int_compare(IntPredicate::EQ, same, parts, "").unwrap();
                    e.b.build_store(elem(e, pred, 8, lane), e.b.build_int_z_extend(all, ctx.i8_type(), "").unwrap()).unwrap();
                    e.b.build_select(all, parts, c32(0), "").unwrap().into_int_value()
                } else {
                    same
                }
            });
            let mut w = vec![(d, Type::B32, Val::Lanes(out, 32))];
            if let Some(p) = p {
                w.push((p, Type::Pred, Val::Lanes(pred, 8)));
            }
            write_lanes(e, func, inst, id, active, &w)
        }
        // redux.sync (PTX ISA 9.7.12.10 in 8.x; PTX 7.0)
        "redux" => {
            let ty = super::func::types_of(i).last().copied().unwrap_or(Type::U32);
            let mode = ["add", "min", "max", "and", "or", "xor"].iter().position(|m| i.has_mod(m)).unwrap_or(0);
            let signed = ty.is_signed();
            let a = gather(e, func, inst, id, &[(&ops[1], ty, 32)])?[0];
            let av = load_vec(e, a, 32);
            let v32 = i32t.vec_type(LANES);
            let (name, identity) = match (mode, signed) {
                (0, _) => ("add", 0u64),
                (1, true) => ("smin", i32::MAX as u64),
                (1, false) => ("umin", u32::MAX as u64),
                (2, true) => ("smax", i32::MIN as u32 as u64),
                (2, false) => ("umax", 0),
                (3, _) => ("and", u32::MAX as u64),
                (4, _) => ("or", 0),
                _ => ("xor", 0),
            };
            let intr = format!("llvm.vector.reduce.{name}");
            let out = per_lane(e, id, 32, "redux", |e, lane| {
                let parts = participants(e, mask, active, lane);
                let sel = e.b.build_bit_cast(parts, ctx.bool_type().vec_type(LANES), "").unwrap().into_vector_value();
                let vals = e.b.build_select(sel, av, warp::splat(e, c32(identity)), "").unwrap();
                e.intrinsic(&intr, &[v32.into()], &[vals]).into_int_value()
            });
            write_lanes(e, func, inst, id, active, &[(&ops[0], ty, Val::Lanes(out, 32))])
        }
        _ => Err(e.err(i.span, format!("internal error: `{}` is not a warp collective", super::func::instr_name(i)))),
    }
}

/// Operand `k` of `inst`, uniform over the active lanes: read once for the warp from an
/// immediate or a scalar register, else from the first active lane.
fn uniform_operand<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, id: u32, k: usize, active: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    let op = &inst.src.operands[k];
    if scalar_operand(e, func, inst, k) {
        warp::bind_inst(e, func, inst, false);
        let v = e.read_int(op, Type::B32);
        e.overrides.clear();
        return v;
    }
    let arr = gather(e, func, inst, id, &[(op, Type::B32, 32)])?[0];
    let i32t = e.ctx().i32_type();
    let first = e.intrinsic("llvm.cttz", &[i32t.into()], &[active.into(), e.ctx().bool_type().const_all_ones().into()]).into_int_value();
    Ok(e.b.build_load(i32t, elem(e, arr, 32, first), "").unwrap().into_int_value())
}

/// Whether operand `k` of `inst` is an immediate or reads only scalar (uniform, not affine)
/// registers.
fn scalar_operand(e: &FnEmitter, func: &crate::ir::Func, inst: &crate::ir::Inst, k: usize) -> bool {
    let plan = warp::plan_of(e);
    let mut vs = Vec::new();
    match inst.operands.get(k) {
        Some(o) => o.values(&mut vs),
        None => return false,
    }
    !matches!(inst.operands[k], crate::ir::Opnd::Name(_)) && vs.iter().all(|v| plan.uniform_web(&plan.key(func, *v)))
}

/// Whether every live lane runs block `id` (its position in `Cfg::rpo`, the dispatch order) together: a
/// converged block outside every loop with a divergent exit.
fn converged(e: &FnEmitter, id: u32) -> bool {
    let plan = warp::plan_of(e);
    let Some(&b) = plan.uni.cfg.rpo.get(id as usize) else { return false };
    plan.uni.group[b as usize] == crate::ir::uniformity::Group::All && !plan.uni.in_divergent_loop(b)
}

/// A collective's membermask.
enum Mask<'ctx> {
    /// The same for every lane.
    Uniform(IntValue<'ctx>),
    /// Each active lane's own, in a scratch array of 32-bit elements.
    Lanes(PointerValue<'ctx>),
}

/// Whether the membermask (operand `k`) of `inst` may differ between lanes (the analysis
/// does not find it uniform: `__activemask()` or a ballot's result in a register that is a
/// lane array, a mask computed per lane).
fn per_lane_mask(e: &FnEmitter, func: &crate::ir::Func, inst: &crate::ir::Inst, id: u32, k: usize) -> bool {
    let plan = warp::plan_of(e);
    let Some(&b) = plan.uni.cfg.rpo.get(id as usize) else { return true };
    inst.operands.get(k).map_or(false, |o| !plan.uni.operand_shape(func, o, b).is_uniform())
}

/// Each active lane's membermask (operand `k` of `inst`). The lanes of a warp meet at a
/// `.sync` collective with the same membermask value (PTX ISA 9.7.8.5 shfl.sync, 9.7.12.2
/// bar.warp.sync, ...): every lane here completes it with the lanes its mask names, which
/// must then have the same mask. A lane that names an active lane with another mask waits
/// for it for ever on a GPU, and the per-thread scheduler reports the deadlock: so does this;
/// one that names a live lane elsewhere stops with `STATUS_WARP_APART` ([`runs_diverged`]).
fn lane_masks<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, id: u32, k: usize, active: IntValue<'ctx>, live: Option<IntValue<'ctx>>) -> R<Mask<'ctx>> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let arr = gather(e, func, inst, id, &[(&inst.src.operands[k], Type::B32, 32)])?[0];
    let mv = load_vec(e, arr, 32);
    // Per lane: bit 0, a lane here with another mask; bit 1 (where not every live lane is
    // here: `runs_diverged`), a live lane of the mask elsewhere.
    let bad = per_lane(e, id, 8, "mask.mismatch", |e, lane| {
        let i8t = e.ctx().i8_type();
        let need = participants(e, &Mask::Lanes(arr), live.unwrap_or(active), lane);
        let mine = e.b.build_load(i32t, elem(e, arr, 32, lane), "").unwrap().into_int_value();
        let same = bits_of(e, e.b.build_int_compare(IntPredicate::EQ, mv, warp::splat(e, mine), "").unwrap());
        let here = e.b.build_and(need, active, "").unwrap();
        let other = e.b.build_and(here, e.b.build_not(same, "").unwrap(), "").unwrap();
        let other = e.b.build_int_compare(IntPredicate::NE, other, i32t.const_zero(), "").unwrap();
        let away = e.b.build_and(need, e.b.build_not(active, "").unwrap(), "").unwrap();
        let away = e.b.build_int_compare(IntPredicate::NE, away, i32t.const_zero(), "").unwrap();
        let other = e.b.build_int_z_extend(other, i8t, "").unwrap();
        let away = e.b.build_left_shift(e.b.build_int_z_extend(away, i8t, "").unwrap(), i8t.const_int(1, false), "").unwrap();
        e.b.build_or(other, away, "").unwrap()
    });
    let bv = load_vec(e, bad, 8);
    let on = active_vector(e, active);
    let v8 = ctx.i8_type().vec_type(LANES);
    let bv = e.b.build_select(on, bv, v8.const_zero(), "").unwrap();
    let all = e.intrinsic("llvm.vector.reduce.or", &[v8.into()], &[bv]).into_int_value();
    let i8t = ctx.i8_type();
    let away = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(all, i8t.const_int(2, false), "").unwrap(), i8t.const_zero(), "mask.away").unwrap();
    e.abort_if(away, super::abi::STATUS_WARP_APART);
    let other = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(all, i8t.const_int(1, false), "").unwrap(), i8t.const_zero(), "mask.mismatch").unwrap();
    e.abort_if(other, super::abi::STATUS_DEADLOCK);
    Ok(Mask::Lanes(arr))
}

/// Lane `lane`'s participants: `(mask | 1 << lane) & active`.
fn participants<'ctx>(e: &FnEmitter<'ctx, '_, '_>, mask: &Mask<'ctx>, active: IntValue<'ctx>, lane: IntValue<'ctx>) -> IntValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let mask = match *mask {
        Mask::Uniform(m) => m,
        Mask::Lanes(arr) => e.b.build_load(i32t, elem(e, arr, 32, lane), "mask").unwrap().into_int_value(),
    };
    let bit = e.b.build_left_shift(i32t.const_int(1, false), lane, "").unwrap();
    e.b.build_and(e.b.build_or(mask, bit, "").unwrap(), active, "").unwrap()
}

/// A value a collective writes to each active lane: one for all, or each lane's element of
/// an array of `bits`-wide elements.
#[derive(Clone, Copy)]
enum Val<'ctx> {
    Uniform(IntValue<'ctx>),
    Lanes(PointerValue<'ctx>, u32),
}

/// Operand `o` of every lane as a `<32 x i<bits>>` vector, read straight from its storage
/// (no lane loop), when it is a register of that width; lanes that are not active hold
/// anything.
fn read_vector<'ctx>(e: &FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, o: &crate::ir::Opnd, bits: u32) -> Option<VectorValue<'ctx>> {
    let (v, not) = match o {
        crate::ir::Opnd::Val(v) => (*v, false),
        crate::ir::Opnd::NotVal(v) => (*v, true),
        _ => return None,
    };
    let (view, ty) = warp::web_view(e, func, v)?;
    let it = super::func::int_t(e.ctx(), bits);
    let st = e.storage_t(ty);
    let pred = ty == Type::Pred;
    if (pred && bits != 8) || (!pred && st.get_bit_width() != bits) || (not && !pred) {
        return None;
    }
    let vt = it.vec_type(LANES);
    let x = match view {
        warp::WebView::Lanes(p) => e.b.build_load(vt, p, "").unwrap().into_vector_value(),
        warp::WebView::Scalar(p) => {
            let x = e.b.build_load(st, p, "").unwrap().into_int_value();
            warp::splat(e, x)
        }
        warp::WebView::Affine(p, stride) => {
            let x = e.b.build_load(st, p, "").unwrap().into_int_value();
            let tile = e.warp.as_ref().map_or(false, |w| w.tile);
            let lanes = inkwell::types::VectorType::const_vector(&(0..LANES).map(|k| it.const_int(stride.at(k, tile) as u64, false)).collect::<Vec<_>>());
            e.b.build_int_add(warp::splat(e, x), lanes, "").unwrap()
        }
    };
    Some(if not { e.b.build_xor(x, warp::splat(e, it.const_int(1, false)), "").unwrap() } else { x })
}

/// Writes `x` (`<32 x i<bits>>`; for a predicate, bytes 0 or 1) to the active lanes of
/// destination `o` straight to its storage, when it is a lane array of that width.
fn write_vector<'ctx>(e: &FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, o: &crate::ir::Opnd, x: VectorValue<'ctx>, on: VectorValue<'ctx>) -> bool {
    let crate::ir::Opnd::Val(v) = o else { return false };
    let Some((warp::WebView::Lanes(p), ty)) = warp::web_view(e, func, *v) else { return false };
    let bits = x.get_type().get_element_type().into_int_type().get_bit_width();
    let ok = if ty == Type::Pred { bits == 8 } else { super::func::reg_t(e.ctx(), ty).get_bit_width() == bits };
    if !ok {
        return false;
    }
    if warp::fills_all_lanes(e, func, *v) {
        e.b.build_store(p, x).unwrap();
        return true;
    }
    let old = e.b.build_load(x.get_type(), p, "").unwrap().into_vector_value();
    let new = e.b.build_select(on, x, old, "").unwrap();
    e.b.build_store(p, new).unwrap();
    true
}

/// The active lanes as a `<32 x i1>` mask.
fn active_vector<'ctx>(e: &FnEmitter<'ctx, '_, '_>, active: IntValue<'ctx>) -> VectorValue<'ctx> {
    e.b.build_bit_cast(active, e.ctx().bool_type().vec_type(LANES), "").unwrap().into_vector_value()
}

/// The IR operand of `inst` for its operand `op` (one of its operands, or a part of a
/// `d|p` pair).
fn ir_operand<'x>(inst: &'x crate::ir::Inst, op: &Operand) -> Option<&'x crate::ir::Opnd> {
    for (k, o) in inst.src.operands.iter().enumerate() {
        if std::ptr::eq(o, op) {
            return inst.operands.get(k);
        }
        if let (Operand::Pair(d, p), Some(crate::ir::Opnd::Pair(x, y))) = (o, inst.operands.get(k)) {
            if std::ptr::eq(&**d, op) {
                return Some(x);
            }
            if std::ptr::eq(&**p, op) {
                return Some(y);
            }
        }
    }
    None
}

/// Copies operands `ops` (operand, type, element bits) of each active lane to scratch arrays:
/// straight from a register's storage where it can, else in a lane loop.
fn gather<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, id: u32, ops: &[(&'a Operand<'a>, Type, u32)]) -> R<Vec<PointerValue<'ctx>>> {
    let arrays: Vec<PointerValue<'ctx>> = ops.iter().map(|(_, _, bits)| scratch(e, *bits, "coll.op")).collect();
    let mut rest = Vec::new();
    for (k, (op, _, bits)) in ops.iter().enumerate() {
        match ir_operand(inst, op).and_then(|o| read_vector(e, func, o, *bits)) {
            Some(x) => {
                e.b.build_store(arrays[k], x).unwrap();
            }
            None => rest.push(k),
        }
    }
    if rest.is_empty() {
        return Ok(arrays);
    }
    let l = warp::open_lanes(e, id);
    let lane = warp::current_lane(&l);
    warp::bind_inst(e, func, inst, false);
    let mut r = Ok(());
    for k in rest {
        let (op, ty, bits) = ops[k];
        match e.read_int(op, ty) {
            Ok(v) => {
                let v = if ty == Type::Pred { e.b.build_int_z_extend(v, super::func::int_t(e.ctx(), bits), "").unwrap() } else { e.resize(v, bits, false) };
                let p = elem(e, arrays[k], bits, lane);
                e.b.build_store(p, v).unwrap();
            }
            Err(d) => {
                r = Err(d);
                break;
            }
        }
    }
    e.overrides.clear();
    warp::close_lanes(e, l);
    r.map(|_| arrays)
}

/// Computes `f(lane)` (an integer of `bits`, an `i1` stored as a byte) for each active lane
/// into a scratch array.
fn per_lane<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, id: u32, bits: u32, name: &str, f: impl FnOnce(&mut FnEmitter<'ctx, 'a, '_>, IntValue<'ctx>) -> IntValue<'ctx>) -> PointerValue<'ctx> {
    let store_bits = if bits == 1 { 8 } else { bits };
    let arr = scratch(e, store_bits, name);
    let l = warp::open_lanes(e, id);
    let lane = warp::current_lane(&l);
    let v = f(e, lane);
    let v = if bits == 1 { e.b.build_int_z_extend(v, e.ctx().i8_type(), "").unwrap() } else { v };
    let p = elem(e, arr, store_bits, lane);
    e.b.build_store(p, v).unwrap();
    warp::close_lanes(e, l);
    arr
}

/// Writes the results of `inst` to its destinations in each active lane: straight to a
/// lane array's storage where it can, else in a lane loop.
fn write_lanes<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, id: u32, active: IntValue<'ctx>, outs: &[(&'a Operand<'a>, Type, Val<'ctx>)]) -> R<()> {
    let on = active_vector(e, active);
    let mut rest = Vec::new();
    for (k, (op, ty, v)) in outs.iter().enumerate() {
        let bits = match *v {
            Val::Uniform(x) => x.get_type().get_bit_width(),
            Val::Lanes(_, b) => b,
        };
        let Some(o) = ir_operand(inst, op) else {
            rest.push(k);
            continue;
        };
        let x = match *v {
            Val::Uniform(x) => warp::splat(e, x),
            Val::Lanes(arr, b) => load_vec(e, arr, b),
        };
        if (*ty == Type::Pred) != (bits == 8) || !write_vector(e, func, o, x, on) {
            rest.push(k);
        }
    }
    if rest.is_empty() {
        return Ok(());
    }
    let l = warp::open_lanes(e, id);
    let lane = warp::current_lane(&l);
    warp::bind_inst(e, func, inst, true);
    let mut r = Ok(());
    for k in rest {
        let (op, ty, v) = outs[k];
        let x = match v {
            Val::Uniform(x) => x,
            Val::Lanes(arr, bits) => {
                let x = e.b.build_load(super::func::int_t(e.ctx(), bits), elem(e, arr, bits, lane), "").unwrap().into_int_value();
                if ty == Type::Pred {
                    e.b.build_int_compare(IntPredicate::NE, x, x.get_type().const_zero(), "").unwrap()
                } else {
                    x
                }
            }
        };
        if let Err(d) = e.write(op, ty, x.into()) {
            r = Err(d);
            break;
        }
    }
    e.overrides.clear();
    warp::close_lanes(e, l);
    r
}

/// The value of an operand that is a constant: an immediate, or a register set by `mov`
/// from one (NVRTC puts a shuffle's lane and clamp operands in registers).
fn constant(func: &crate::ir::Func, o: &crate::ir::Opnd, depth: u32) -> Option<u64> {
    match o {
        crate::ir::Opnd::Imm(t) => {
            let t: String = t.chars().filter(|c| !matches!(c, '(' | ')') && !c.is_whitespace()).collect();
            let (neg, t) = t.strip_prefix('-').map_or((false, t.as_str()), |r| (true, r));
            let (suffix, v, _) = crate::syntax::lex::int_literal(t)?;
            suffix.is_empty().then_some(if neg { v.wrapping_neg() } else { v })
        }
        crate::ir::Opnd::Val(v) if depth < 4 => {
            let crate::ir::Def::Inst { block, inst } = func.values[*v as usize].def else { return None };
            let i = &func.blocks[block as usize].insts[inst as usize];
            (i.src.opcode.name == "mov" && i.operands.len() == 2).then(|| constant(func, &i.operands[1], depth + 1)).flatten()
        }
        _ => None,
    }
}

/// The source lane of `lane` and whether it is in range, for shuffle `mode` (an index of
/// `sync::SHFL_MODES`) with operands `b` and `c` (PTX ISA 9.7.8.5): the same rule as
/// `runtime::warp::shfl_source`, on LLVM values.
fn shfl_source<'ctx>(e: &FnEmitter<'ctx, '_, '_>, mode: usize, lane: IntValue<'ctx>, b: IntValue<'ctx>, c: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let i32t = e.ctx().i32_type();
    let k = |v: u64| i32t.const_int(v, false);
    let bd = &e.b;
    let bval = bd.build_and(b, k(31), "").unwrap();
    let cval = bd.build_and(c, k(31), "").unwrap();
    let segmask = bd.build_and(bd.build_right_shift(c, k(8), false, "").unwrap(), k(31), "").unwrap();
    let max_lane = bd.build_or(bd.build_and(lane, segmask, "").unwrap(), bd.build_and(cval, bd.build_not(segmask, "").unwrap(), "").unwrap(), "").unwrap();
    let min_lane = bd.build_and(lane, segmask, "").unwrap();
    match mode {
        0 => {
            // up: j = lane - b, valid when j >= maxLane (signed: j may be negative).
            let j = bd.build_int_sub(lane, bval, "").unwrap();
            (j, bd.build_int_compare(IntPredicate::SGE, j, max_lane, "").unwrap())
        }
        1 => {
            let j = bd.build_int_add(lane, bval, "").unwrap();
            (j, bd.build_int_compare(IntPredicate::ULE, j, max_lane, "").unwrap())
        }
        2 => {
            let j = bd.build_xor(lane, bval, "").unwrap();
            (j, bd.build_int_compare(IntPredicate::ULE, j, max_lane, "").unwrap())
        }
        _ => {
            let j = bd.build_or(min_lane, bd.build_and(bval, bd.build_not(segmask, "").unwrap(), "").unwrap(), "").unwrap();
            (j, bd.build_int_compare(IntPredicate::ULE, j, max_lane, "").unwrap())
        }
    }
}

/// The source lane and range flag of every lane when `b` and `c` are constants: the
/// per-thread scheduler's rule (`runtime::warp::shfl_source`), at compile time.
fn shfl_table(mode: usize, b: u32, c: u32) -> Vec<(u32, bool)> {
    (0..LANES).map(|lane| crate::runtime::warp::shfl_source(lane, mode as u32, b, c)).map(|(j, p)| (j as u32, p)).collect()
}

/// `shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}`.
fn shfl<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, inst: &crate::ir::Inst<'a>, id: u32, active: IntValue<'ctx>) -> R<()> {
    let i = inst.src;
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let ops = &i.operands;
    let need = if i.has_mod("sync") { 5 } else { 4 };
    if ops.len() != need {
        return Err(e.err(i.span, format!("`shfl{}` takes {need} operands", if need == 5 { ".sync" } else { "" })));
    }
    let mode = super::sync::SHFL_MODES.iter().position(|m| i.has_mod(m)).unwrap_or(3);
    let (d, p) = match &ops[0] {
        Operand::Pair(d, p) => (&**d, Some(&**p)),
        d => (d, None),
    };
    // b and c once for the warp when they are uniform (the usual case: constants).
    let bc_uniform = scalar_operand(e, func, inst, 2) && scalar_operand(e, func, inst, 3);
    let (a, bc) = if bc_uniform {
        let a = gather(e, func, inst, id, &[(&ops[1], Type::B32, 32)])?[0];
        warp::bind_inst(e, func, inst, false);
        let b = e.read_int(&ops[2], Type::B32);
        let c = e.read_int(&ops[3], Type::B32);
        e.overrides.clear();
        (a, Ok((b?, c?)))
    } else {
        let g = gather(e, func, inst, id, &[(&ops[1], Type::B32, 32), (&ops[2], Type::B32, 32), (&ops[3], Type::B32, 32)])?;
        (g[0], Err((g[1], g[2])))
    };
    let av = load_vec(e, a, 32);
    let v32 = i32t.vec_type(LANES);
    let k = |v: u64| i32t.const_int(v, false);
    let konst = |k: usize, v: IntValue<'ctx>| v.get_zero_extended_constant().or_else(|| constant(func, &inst.operands[k], 0));
    let consts = match bc {
        Ok((b, c)) => konst(2, b).zip(konst(3, c)),
        Err(_) => None,
    };
    // The lanes that exist (a row's last warp may be partial): a valid source lane past the
    // end gives 0, as on an H200 (the spec leaves it undefined).
    // (Every lane of a tile warp exists, and of every warp of whole `.reqntid` rows.)
    let partial = warp::partial_warp(e);
    let exists = if partial.get_zero_extended_constant() == Some(0) {
        k(u32::MAX as u64)
    } else {
        let ntx = e.load_cta_u32(super::abi::field::NTID, Some(0));
        let x0 = e.warp.as_ref().map(|w| w.x0).unwrap_or(e.tid[0]);
        let left = e.b.build_int_sub(ntx, x0, "").unwrap();
        let some = e.b.build_int_sub(e.b.build_left_shift(k(1), e.b.build_and(left, k(31), "").unwrap(), "").unwrap(), k(1), "").unwrap();
        e.b.build_select(partial, some, k(u32::MAX as u64), "exists").unwrap().into_int_value()
    };
    let (res, pred) = if let Some((b, c)) = consts {
        // A constant permutation of the vector.
        let t = shfl_table(mode, b as u32, c as u32);
        let perm = inkwell::types::VectorType::const_vector(&t.iter().map(|(j, _)| k(*j as u64)).collect::<Vec<_>>());
        let pvec = inkwell::types::VectorType::const_vector(&t.iter().map(|(_, p)| ctx.bool_type().const_int(*p as u64, false)).collect::<Vec<_>>());
        let moved = e.b.build_shuffle_vector(av, v32.get_undef(), perm, "shfl").unwrap();
        // The usual case, a whole warp with every lane here, is a branch the warp takes as a
        // whole, off which go the tests of each source lane (it is active; it exists, in a
        // partial warp: a valid source past the end gives 0): they cost 15% of a shuffle
        // reduction and a quarter of each of a block scan's shuffles.
        let full = ctx.append_basic_block(e.f, "shfl.full");
        let some = ctx.append_basic_block(e.f, "shfl.some");
        let join = ctx.append_basic_block(e.f, "shfl.join");
        let every = e.b.build_int_compare(IntPredicate::EQ, active, k(u32::MAX as u64), "").unwrap();
        let whole = e.b.build_and(every, e.b.build_not(partial, "").unwrap(), "whole.warp").unwrap();
        e.b.build_conditional_branch(whole, full, some).unwrap();
        e.b.position_at_end(full);
        let full_v = e.b.build_select(pvec, moved, av, "").unwrap().into_vector_value();
        e.b.build_unconditional_branch(join).unwrap();
        e.b.position_at_end(some);
        // The source must be active: bit j of the active lanes.
        let src_on = e.b.build_right_shift(warp::splat(e, active), perm, false, "").unwrap();
        let src_on = e.b.build_int_truncate(src_on, ctx.bool_type().vec_type(LANES), "").unwrap();
        let ok = e.b.build_and(src_on, pvec, "").unwrap();
        let v = e.b.build_select(ok, moved, av, "").unwrap().into_vector_value();
        // Lanes past the end of a partial warp do not exist (`exists` is every lane otherwise).
        let src_is = e.b.build_right_shift(warp::splat(e, exists), perm, false, "").unwrap();
        let src_is = e.b.build_int_truncate(src_is, ctx.bool_type().vec_type(LANES), "").unwrap();
        let gone = e.b.build_and(pvec, e.b.build_not(src_is, "").unwrap(), "").unwrap();
        let some_v = e.b.build_select(gone, v32.const_zero(), v, "").unwrap().into_vector_value();
        e.b.build_unconditional_branch(join).unwrap();
        e.b.position_at_end(join);
        let phi = e.b.build_phi(v32, "shfl.v").unwrap();
        phi.add_incoming(&[(&full_v, full), (&some_v, some)]);
        let v = phi.as_basic_value().into_vector_value();
        let res = scratch(e, 32, "shfl.d");
        e.b.build_store(res, v).unwrap();
        let pr = scratch(e, 8, "shfl.p");
        let pbytes = inkwell::types::VectorType::const_vector(&t.iter().map(|(_, p)| ctx.i8_type().const_int(*p as u64, false)).collect::<Vec<_>>());
        e.b.build_store(pr, pbytes).unwrap();
        (res, pr)
    } else {
        let pr = scratch(e, 8, "shfl.p");
        let res = per_lane(e, id, 32, "shfl.d", |e, lane| {
            let (b, c) = match bc {
                Ok(bc) => bc,
                Err((ba, ca)) => (
                    e.b.build_load(i32t, elem(e, ba, 32, lane), "").unwrap().into_int_value(),
                    e.b.build_load(i32t, elem(e, ca, 32, lane), "").unwrap().into_int_value(),
                ),
            };
            let (j, inr) = shfl_source(e, mode, lane, b, c);
            let jj = e.b.build_select(inr, j, lane, "").unwrap().into_int_value();
            let on = e.b.build_and(e.b.build_right_shift(active, jj, false, "").unwrap(), k(1), "").unwrap();
            let on = e.b.build_int_compare(IntPredicate::NE, on, k(0), "").unwrap();
            let src = e.b.build_select(on, jj, lane, "").unwrap().into_int_value();
            e.b.build_store(elem(e, pr, 8, lane), e.b.build_int_z_extend(inr, ctx.i8_type(), "").unwrap()).unwrap();
            let v = e.b.build_load(i32t, elem(e, a, 32, src), "").unwrap().into_int_value();
            let is = e.b.build_and(e.b.build_right_shift(exists, jj, false, "").unwrap(), k(1), "").unwrap();
            let gone = e.b.build_and(inr, e.b.build_int_compare(IntPredicate::EQ, is, k(0), "").unwrap(), "").unwrap();
            e.b.build_select(gone, k(0), v, "").unwrap().into_int_value()
        });
        (res, pr)
    };
    let mut outs = vec![(d, Type::B32, Val::Lanes(res, 32))];
    if let Some(p) = p {
        outs.push((p, Type::Pred, Val::Lanes(pred, 8)));
    }
    write_lanes(e, func, inst, id, active, &outs)
}

/// Matrix instructions of one batch (see [`matrix`]): at most this many share a pair of
/// lane loops.
pub(super) const MATRIX_BATCH: usize = 16;

/// Whether `i` may share its lane loops with the matrix instructions next to it: `mma` and
/// `wmma.mma`, which touch only registers (`ldmatrix`/`stmatrix` access memory where they
/// compute, so that a batch would reorder one lane's accesses against another's).
pub(super) fn batchable(i: &Instr) -> bool {
    i.opcode.name == "mma" || (i.opcode.name == "wmma" && i.mods.first() == Some(&"mma"))
}

/// `mma`, `wmma.mma` and `ldmatrix` (PTX ISA 9.7.13) on the warp path: the lowering of
/// `ops_wmma` runs twice, first in a lane loop where each lane hands its fragment words (or
/// row address) to its area of an exchange array, then, once every lane has, in a lane loop
/// where each computes its own results from the areas of the lanes that hold its operands.
/// The whole warp must exist, as on the per-thread path (`STATUS_PARTIAL_WARP` otherwise).
///
/// `insts` is a batch: consecutive [`batchable`] instructions none of which reads a register
/// that an earlier one writes (a GEMM's independent accumulators). They share the two loops,
/// each with an exchange array of its own: every operand is gathered before any result is
/// written, which is the order of the instructions for every register they read. Where the
/// registers are lane arrays of 32-bit words, neither step needs a lane loop: the results of
/// the 32 lanes are computed by one call per instruction, which takes the operand and result
/// arrays as arguments ([`operand_arrays`], [`result_arrays`], `ops_wmma`'s `<form>.warp`);
/// the instructions run in order, each reading its operands when it runs, which is the
/// instructions' order too.
pub(super) fn matrix<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, func: &crate::ir::Func<'a>, insts: &[&crate::ir::Inst<'a>], id: u32) -> R<()> {
    use super::ops_wmma::{WarpExchange, Words, AREA_BYTES};
    let ctx = e.ctx();
    // The warp's lanes all exist: lane 31's %tid.x is inside the block's row.
    let partial = warp::partial_warp(e);
    if partial.get_zero_extended_constant() != Some(0) {
        e.abort_if(partial, super::abi::STATUS_PARTIAL_WARP);
    }
    // Results straight into lane arrays when every instruction's are in them (all or none:
    // the batch's writes keep their order). Then an instruction whose operands are lane
    // arrays of 32-bit words too is computed from the arrays where they are; the others'
    // operands go to an exchange area (through the gathering lane loop). Without result
    // arrays, the results come from a computing lane loop over exchange areas, to which
    // operands in lane arrays of 32-bit words go as whole vectors ([`whole_gather`]).
    let d_arrays: Option<Vec<Vec<inkwell::values::PointerValue<'ctx>>>> = insts.iter().map(|inst| result_arrays(e, func, inst)).collect();
    let direct: Vec<Option<Vec<inkwell::values::PointerValue<'ctx>>>> = insts.iter().map(|inst| if d_arrays.is_some() { operand_arrays(e, func, inst) } else { None }).collect();
    // One exchange area per instruction of the batch that needs one, in one alloca of the
    // function, grown to the largest batch it has met.
    let areas: Vec<inkwell::values::PointerValue<'ctx>> = if direct.iter().all(|d| d.is_some()) {
        Vec::new()
    } else {
        let area = match e.mma_area {
            Some((a, sites)) if sites as usize >= insts.len() => a,
            _ => {
                let t = ctx.i8_type().array_type(AREA_BYTES * LANES * insts.len() as u32);
                let a = e.alloca_builder().build_alloca(t, "mma.exchange").unwrap();
                if let Some(i) = a.as_instruction() {
                    let _ = i.set_alignment(64);
                }
                e.mma_area = Some((a, insts.len() as u32));
                a
            }
        };
        (0..insts.len()).map(|s| unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), area, &[ctx.i64_type().const_int((s as u32 * AREA_BYTES * LANES) as u64, false)], "mma.site").unwrap() }).collect()
    };
    // (An instruction without operand arrays has an area: `areas` is empty only when every
    // one has them.)
    let gathered: Vec<bool> = (0..insts.len()).map(|k| direct[k].is_none() && !whole_gather(e, func, insts[k], areas[k])).collect();
    for (phase, defs) in [(0, false), (1, true)] {
        if phase == 0 && !gathered.contains(&true) || phase == 1 && d_arrays.is_some() {
            continue;
        }
        let l = warp::open_lanes(e, id);
        let lane = warp::current_lane(&l);
        let mut r = Ok(());
        for (k, (inst, &g)) in insts.iter().zip(&gathered).enumerate() {
            if phase == 0 && !g {
                continue;
            }
            let area = areas[k];
            e.enter_scope(inst.scope);
            e.span = inst.src.span;
            warp::bind_inst(e, func, inst, defs);
            e.warp_exchange = Some(if phase == 0 { WarpExchange::Gather { area, lane } } else { WarpExchange::Compute { area, lane } });
            r = e.unguarded(inst.src);
            e.warp_exchange = None;
            e.overrides.clear();
            if r.is_err() {
                break;
            }
        }
        warp::close_lanes(e, l);
        r?;
    }
    if let Some(d_arrays) = &d_arrays {
        for (k, ((inst, arrays), direct)) in insts.iter().zip(d_arrays).zip(&direct).enumerate() {
            let words = match direct {
                Some(p) => Words::Arrays(p.clone()),
                None => Words::Area(areas[k]),
            };
            e.enter_scope(inst.scope);
            e.span = inst.src.span;
            e.warp_exchange = Some(WarpExchange::ComputeWarp { words, d: arrays.clone() });
            let r = e.unguarded(inst.src);
            e.warp_exchange = None;
            r?;
        }
    }
    Ok(())
}

/// The lane arrays of the A, B and C registers of `mma`/`wmma.mma` `inst`, in that order, when
/// every one is a lane array of 32-bit words (the words' table of the computing phase then
/// lists them and nothing is copied).
fn operand_arrays<'ctx>(e: &FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, inst: &crate::ir::Inst) -> Option<Vec<inkwell::values::PointerValue<'ctx>>> {
    if !batchable(inst.src) || inst.operands.len() != 4 {
        return None;
    }
    let arrays = inst.operands[1..4].iter().map(|op| word_arrays(e, func, op)).collect::<Option<Vec<_>>>()?;
    Some(arrays.into_iter().flatten().collect())
}

/// The gathering phase of `mma`/`wmma.mma` ([`matrix`]) without a lane loop: when every A, B
/// and C register is a lane array of 32-bit words ([`operand_arrays`]), word `k` of the
/// fragments (A's registers, then B's, then C's: the order of `ops_wmma`'s exchange) is the
/// whole array copied to row `k` of the exchange area (word-major: 32 lanes of one word
/// together). Emits nothing and returns `false` otherwise.
fn whole_gather<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, inst: &crate::ir::Inst, area: inkwell::values::PointerValue<'ctx>) -> bool {
    let Some(arrays) = operand_arrays(e, func, inst) else { return false };
    let ctx = e.ctx();
    let v32 = ctx.i32_type().vec_type(LANES);
    for (k, p) in arrays.into_iter().enumerate() {
        let words = e.b.build_load(v32, p, "frag.word").unwrap();
        if let Some(i) = words.into_vector_value().as_instruction() {
            let _ = i.set_alignment(4);
        }
        let at = unsafe { e.b.build_in_bounds_gep(ctx.i8_type(), area, &[ctx.i64_type().const_int(k as u64 * 4 * LANES as u64, false)], "").unwrap() };
        let st = e.b.build_store(at, words).unwrap();
        let _ = st.set_alignment(4);
    }
    true
}

/// The lane arrays of the D registers of `mma`/`wmma.mma` `inst` when every one is a lane
/// array of 32-bit words (the computing phase of [`matrix`] then writes them directly).
fn result_arrays<'ctx>(e: &FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, inst: &crate::ir::Inst) -> Option<Vec<inkwell::values::PointerValue<'ctx>>> {
    if !batchable(inst.src) {
        return None;
    }
    word_arrays(e, func, inst.operands.first()?)
}

/// The lane arrays of a fragment operand's registers when every one is a lane array of
/// 32-bit words.
fn word_arrays<'ctx>(e: &FnEmitter<'ctx, '_, '_>, func: &crate::ir::Func, op: &crate::ir::Opnd) -> Option<Vec<inkwell::values::PointerValue<'ctx>>> {
    let crate::ir::Opnd::Vector(items) = op else { return None };
    items
        .iter()
        .map(|it| match it {
            crate::ir::Opnd::Val(v) => match warp::web_view(e, func, *v) {
                Some((warp::WebView::Lanes(p), ty)) if ty.size() == 4 => Some(p),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A batch of matrix instructions for [`matrix`]: `insts[0]` and those after it that may join
/// it (at most [`MATRIX_BATCH`]). Returns how many.
pub(super) fn matrix_batch_len(func: &crate::ir::Func, plan: &warp::Plan, insts: &[crate::ir::Inst]) -> usize {
    if !batchable(insts[0].src) {
        return 1;
    }
    let mut written: std::collections::HashSet<(u32, String)> = insts[0].defs.iter().map(|&d| plan.key(func, d)).collect();
    let mut n = 1;
    while n < insts.len() && n < MATRIX_BATCH && batchable(insts[n].src) && insts[n].reads().iter().all(|&v| !written.contains(&plan.key(func, v))) {
        written.extend(insts[n].defs.iter().map(|&d| plan.key(func, d)));
        n += 1;
    }
    n
}
