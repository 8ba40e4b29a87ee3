//! Synchronization and warp collectives (9.7.12, 9.7.8.4-5): bar/barrier, bar.warp.sync,
//! shfl, shfl.sync, vote, vote.sync, match.sync, activemask, redux.sync. Each is a
//! synchronization point of the lane scheduler (see `lanes`); the collective itself is
//! computed by the runtime (`runtime::warp`) once its participants have arrived.

use super::abi::{self, slot};
use super::func::{types_of, FnEmitter, R};
use crate::lanes::{result, result_pred, sync_point};
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::values::IntValue;

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if let Some(store) = crate::lanes::shared_access(i) {
        // The access itself is emitted as any other; first, where needed, the lanes of the
        // warp meet (`lanes::is_lockstep_access`).
        if e.sync.is_some() && !e.m.nvptx {
            if crate::lanes::is_lockstep_access(i).is_some() && e.volatile_meets(store) {
                let c = e.ctx().i32_type();
                sync_point(e, abi::SYNC_WARP, &[(slot::MASK, c.const_zero()), (slot::FLAGS, c.const_int(abi::FLAG_NOSYNC as u64, false))]);
            }
            e.note_access(store);
        }
        return Ok(false);
    }
    if crate::lanes::is_tcgen05_meet(i) {
        // The lanes of the warp meet; the move itself is `ops_tcgen05`'s.
        if e.sync.is_some() && !e.m.nvptx {
            sync_point(e, abi::SYNC_WARP, &[(slot::MASK, e.ctx().i32_type().const_all_ones())]);
        }
        return Ok(false);
    }
    if !crate::lanes::is_sync(i) {
        return Ok(false);
    }
    if e.m.nvptx {
        return super::nvvm::sync(e, i);
    }
    if e.sync.is_none() {
        return Err(e.err(i.opcode.span, format!("internal error: `{}` outside a kernel's scheduler (functions that synchronize are inlined into kernels)", super::func::instr_name(i))));
    }
    let i32t = e.ctx().i32_type();
    let c32 = |v: u32| i32t.const_int(v as u64, false);
    let ops = &i.operands;
    match i.opcode.name {
        // PTX ISA 9.7.8.4 shfl (deprecated), 9.7.8.5 shfl.sync
        "shfl" => {
            let (mode, a, b, c, mask) = shfl_operands(e, i)?;
            let nosync = mask.is_none();
            let mask = mask.unwrap_or(c32(u32::MAX));
            let a64 = e.resize(a, 64, false);
            let name = if e.inlining_nothing() { e.shfl_alias.get(&(i as *const Instr)).copied() } else { None };
            let alias = name.and_then(|r| e.reg(r)).map(|r| r.0);
            e.sync.as_mut().unwrap().next_alias = alias;
            sync_point(e, abi::SYNC_SHFL, &[(slot::MODE, c32(mode as u32)), (slot::A, a64), (slot::B, b), (slot::C, c), (slot::MASK, mask), (slot::FLAGS, c32(if nosync { abi::FLAG_NOSYNC } else { 0 }))]);
            let r = result(e);
            let r = e.resize(r, 32, false);
            write_pair(e, &ops[0], Type::B32, r)?;
            Ok(true)
        }
        // PTX ISA 9.7.12.6 vote (deprecated), 9.7.12.7 vote.sync
        "vote" => {
            let nosync = !i.has_mod("sync");
            let mode = if i.has_mod("all") {
                0
            } else if i.has_mod("any") {
                1
            } else if i.has_mod("uni") {
                2
            } else {
                3
            };
            let p = e.read(&ops[1], Type::Pred)?.into_int_value();
            let a = e.b.build_int_z_extend(p, e.ctx().i64_type(), "").unwrap();
            let mask = if nosync { c32(u32::MAX) } else { e.read_int(ops.get(2).ok_or_else(|| e.err(i.span, "`vote.sync` needs a membermask"))?, Type::B32)? };
            sync_point(e, abi::SYNC_VOTE, &[(slot::MODE, c32(mode)), (slot::A, a), (slot::MASK, mask), (slot::FLAGS, c32(if nosync { abi::FLAG_NOSYNC } else { 0 }))]);
            if mode == 3 {
                let r = result(e);
                let r = e.resize(r, 32, false);
                e.write(&ops[0], Type::B32, r.into())?;
            } else {
                let p = result_pred(e);
                e.write(&ops[0], Type::Pred, p.into())?;
            }
            Ok(true)
        }
        // PTX ISA 9.7.12.8 match.sync
        "match" => {
            let ty = types_of(i).last().copied().unwrap_or(Type::B32);
            let wide = ty.bits() == 64;
            let mode = if i.has_mod("all") { 1 } else { 0 };
            let a = e.read_int(&ops[1], ty)?;
            let a64 = e.resize(a, 64, false);
            let mask = e.read_int(&ops[2], Type::B32)?;
            sync_point(e, abi::SYNC_MATCH, &[(slot::MODE, c32(mode)), (slot::A, a64), (slot::MASK, mask), (slot::FLAGS, c32(if wide { abi::FLAG_64 } else { 0 }))]);
            let r = result(e);
            let r = e.resize(r, 32, false);
            write_pair(e, &ops[0], Type::B32, r)?;
            Ok(true)
        }
        // PTX ISA 9.7.12.9 activemask
        "activemask" => {
            sync_point(e, abi::SYNC_ACTIVEMASK, &[(slot::FLAGS, c32(abi::FLAG_NOSYNC))]);
            let r = result(e);
            let r = e.resize(r, 32, false);
            e.write(&ops[0], Type::B32, r.into())?;
            Ok(true)
        }
        // redux.sync (PTX 7.0): reduction across the lanes of membermask.
        "redux" => {
            let ty = types_of(i).last().copied().unwrap_or(Type::U32);
            let mode = ["add", "min", "max", "and", "or", "xor"].iter().position(|m| i.has_mod(m)).unwrap_or(0) as u32;
            let a = e.read_int(&ops[1], ty)?;
            let a64 = e.resize(a, 64, false);
            let mask = e.read_int(&ops[2], Type::B32)?;
            sync_point(e, abi::SYNC_REDUX, &[(slot::MODE, c32(mode)), (slot::A, a64), (slot::MASK, mask), (slot::FLAGS, c32(if ty.is_signed() { abi::FLAG_SIGNED } else { 0 }))]);
            let r = result(e);
            let r = e.resize(r, 32, false);
            e.write(&ops[0], ty, r.into())?;
            Ok(true)
        }
        "bar" | "barrier" => barrier(e, i),
        _ => Ok(false),
    }
}

/// The shuffle modes, in the order of their `SYNC_SHFL` mode numbers.
pub(crate) const SHFL_MODES: [&str; 4] = ["up", "down", "bfly", "idx"];

/// `shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}`: the mode's index in [`SHFL_MODES`],
/// `a`, `b`, `c`, and the membermask (`None` for the deprecated form without `.sync`).
pub(crate) fn shfl_operands<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<(usize, IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>, Option<IntValue<'ctx>>)> {
    let nosync = !i.has_mod("sync");
    let mode = SHFL_MODES.iter().position(|m| i.has_mod(m)).unwrap_or(3);
    let ops = &i.operands;
    let need = if nosync { 4 } else { 5 };
    if ops.len() != need {
        return Err(e.err(i.span, format!("`shfl{}` takes {need} operands", if nosync { "" } else { ".sync" })));
    }
    let a = e.read_int(&ops[1], Type::B32)?;
    let b = e.read_int(&ops[2], Type::B32)?;
    let c = e.read_int(&ops[3], Type::B32)?;
    let mask = if nosync { None } else { Some(e.read_int(&ops[4], Type::B32)?) };
    Ok((mode, a, b, c, mask))
}

/// Writes a result `d` and, for `d|p`, the slot's predicate to `p`.
fn write_pair<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, d: &'a Operand<'a>, ty: Type, v: IntValue<'ctx>) -> R<()> {
    match d {
        Operand::Pair(d, p) => {
            e.write(d, ty, v.into())?;
            let pv = result_pred(e);
            e.write(p, Type::Pred, pv.into())
        }
        d => e.write(d, ty, v.into()),
    }
}

/// PTX ISA 9.7.12.1 bar, barrier (sync/arrive/red, named barriers 0-15, thread counts) and
/// 9.7.12.2 bar.warp.sync.
fn barrier<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    let i32t = e.ctx().i32_type();
    let c32 = |v: u32| i32t.const_int(v as u64, false);
    let ops = &i.operands;
    // PTX ISA 8.x barrier.cluster.wait: the thread waits until every thread of the cluster
    // has arrived (`barrier.cluster.arrive`, no synchronization point: `lanes::is_cluster_arrive`).
    // Every thread of the CTA that has not exited meets here first, as at a `bar.sync` (the
    // arrivals are theirs), and then the runtime waits for the cluster's other CTAs
    // (`abi::CLUSTER_BARRIER`, `HostFns::cluster_sync`).
    if i.has_mod("cluster") {
        sync_point(e, abi::SYNC_BAR, &[(slot::BAR_ID, c32(abi::CLUSTER_BARRIER)), (slot::BAR_COUNT, c32(0)), (slot::MODE, c32(0))]);
        return Ok(true);
    }
    if i.has_mod("warp") {
        let mask = e.read_int(&ops[0], Type::B32)?;
        sync_point(e, abi::SYNC_WARP, &[(slot::MASK, mask)]);
        return Ok(true);
    }
    if i.has_mod("red") {
        // bar.red.popc.u32 d, a{, b}, {!}c;   bar.red.and|or.pred p, a{, b}, {!}c;
        let mode = if i.has_mod("popc") {
            1
        } else if i.has_mod("and") {
            2
        } else {
            3
        };
        let (id, count, c) = match ops.len() {
            3 => (&ops[1], None, &ops[2]),
            4 => (&ops[1], Some(&ops[2]), &ops[3]),
            _ => return Err(e.err(i.span, "`bar.red` takes 3 or 4 operands")),
        };
        let idv = e.read_int(id, Type::U32)?;
        check_barrier_id(e, idv, i)?;
        let cnt = match count {
            Some(c) => e.read_int(c, Type::U32)?,
            None => c32(0),
        };
        let p = e.read(c, Type::Pred)?.into_int_value();
        let a = e.b.build_int_z_extend(p, e.ctx().i64_type(), "").unwrap();
        sync_point(e, abi::SYNC_BAR, &[(slot::BAR_ID, idv), (slot::BAR_COUNT, cnt), (slot::MODE, c32(mode)), (slot::A, a), (slot::FLAGS, c32(aligned_flag(i)))]);
        if mode == 1 {
            let r = result(e);
            let r = e.resize(r, 32, false);
            e.write(&ops[0], Type::U32, r.into())?;
        } else {
            let p = result_pred(e);
            e.write(&ops[0], Type::Pred, p.into())?;
        }
        return Ok(true);
    }
    let arrive = i.has_mod("arrive");
    let idv = match ops.first() {
        Some(op) => e.read_int(op, Type::U32)?,
        None => c32(0),
    };
    check_barrier_id(e, idv, i)?;
    let cnt = match ops.get(1) {
        Some(op) => e.read_int(op, Type::U32)?,
        None => c32(0),
    };
    if arrive && ops.len() < 2 {
        return Err(e.err(i.span, "`bar.arrive` needs a thread count"));
    }
    sync_point(e, if arrive { abi::SYNC_BAR_ARRIVE } else { abi::SYNC_BAR }, &[(slot::BAR_ID, idv), (slot::BAR_COUNT, cnt), (slot::MODE, c32(0)), (slot::FLAGS, c32(aligned_flag(i)))]);
    Ok(true)
}

/// Barrier ids are 0..15 (9.7.12.1); a constant out of range is a compile error, a register
/// out of range is reported by the runtime.
fn check_barrier_id<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, i: &Instr) -> R<()> {
    if let Some(c) = v.get_zero_extended_constant() {
        if c > 15 {
            return Err(e.err(i.span, format!("barrier id {c} is out of range (0..15)")));
        }
    }
    Ok(())
}

/// `FLAG_ALIGNED` for an `.aligned` barrier (`bar` is `barrier.sync.aligned`; PTX ISA
/// 9.7.12.1), which every thread of a warp must reach at the same instruction (synccheck).
fn aligned_flag(i: &Instr) -> u32 {
    if i.opcode.name == "bar" || i.has_mod("aligned") {
        abi::FLAG_ALIGNED
    } else {
        0
    }
}
