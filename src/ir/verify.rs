//! IR invariants, checked after construction: branch targets exist and predecessor lists match
//! the edges; every value has exactly one definition; every use is dominated by its
//! definition (a phi's operand at the end of its incoming block); phis have one operand per
//! predecessor, each a value of the phi's own variable (what code generation's storage per
//! variable relies on); branch conditions are predicates.

use super::{BlockId, Def, Func, Opnd, Term, ValueId};
use crate::syntax::ast::Type;

pub fn verify(f: &Func) -> Result<(), String> {
    let n = f.blocks.len();
    if n == 0 {
        return Err("no blocks".into());
    }
    // Edges.
    let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for (b, blk) in f.blocks.iter().enumerate() {
        for s in blk.term.succs() {
            if s as usize >= n {
                return Err(format!("bb{b} branches to missing bb{s}"));
            }
            if !preds[s as usize].contains(&(b as u32)) {
                preds[s as usize].push(b as u32);
            }
        }
    }
    for (b, blk) in f.blocks.iter().enumerate() {
        let mut a = blk.preds.clone();
        let mut e = preds[b].clone();
        a.sort();
        e.sort();
        if a != e {
            return Err(format!("bb{b}: predecessor list {:?} does not match the edges {:?}", a, e));
        }
    }
    // Definitions: exactly one per value, at the place the value says.
    let mut defined = vec![0u32; f.values.len()];
    let mut def_at: Vec<Option<(BlockId, i64)>> = vec![None; f.values.len()];
    for (b, blk) in f.blocks.iter().enumerate() {
        for p in &blk.phis {
            defined[p.dst as usize] += 1;
            def_at[p.dst as usize] = Some((b as u32, -1));
            if f.values[p.dst as usize].def != (Def::Phi { block: b as u32 }) {
                return Err(format!("%v{} is a phi of bb{b} but says {:?}", p.dst, f.values[p.dst as usize].def));
            }
            let mut inc: Vec<BlockId> = p.incoming.iter().map(|(pb, _)| *pb).collect();
            inc.sort();
            let mut pr = blk.preds.clone();
            pr.sort();
            if inc != pr {
                return Err(format!("phi %v{} in bb{b} has operands for {:?}, predecessors are {:?}", p.dst, inc, pr));
            }
            // Code generation gives every value of a variable the variable's storage, so a
            // phi and its operands must be values of one variable.
            let var = &f.values[p.dst as usize].var;
            if let Some((_, v)) = p.incoming.iter().find(|(_, v)| f.values.get(*v as usize).map_or(false, |x| &x.var != var)) {
                return Err(format!("phi %v{} in bb{b} ({}) takes %v{v} of another variable ({})", p.dst, f.values[p.dst as usize].reg, f.values[*v as usize].reg));
            }
        }
        for (k, i) in blk.insts.iter().enumerate() {
            for d in &i.defs {
                defined[*d as usize] += 1;
                def_at[*d as usize] = Some((b as u32, k as i64));
                if f.values[*d as usize].def != (Def::Inst { block: b as u32, inst: k as u32 }) {
                    return Err(format!("%v{d} defined by bb{b}#{k} but says {:?}", f.values[*d as usize].def));
                }
            }
        }
    }
    for (v, info) in f.values.iter().enumerate() {
        let want = match info.def {
            Def::Undef | Def::Param => 0,
            _ => 1,
        };
        // Phis removed as trivial leave their value unused and undefined (uses are checked
        // below).
        let removed_phi = matches!(info.def, Def::Phi { .. }) && defined[v] == 0;
        if defined[v] != want && !removed_phi {
            return Err(format!("%v{v} ({}) has {} definitions", info.reg, defined[v]));
        }
    }
    // Dominators (iterative, over reachable blocks in index order; block 0 is the entry).
    let mut dom: Vec<Vec<bool>> = vec![vec![true; n]; n];
    dom[0] = vec![false; n];
    dom[0][0] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            let mut d = vec![true; n];
            if blk_preds(f, b).is_empty() {
                d = vec![false; n];
            }
            for p in blk_preds(f, b) {
                for k in 0..n {
                    d[k] = d[k] && dom[p as usize][k];
                }
            }
            d[b] = true;
            if d != dom[b] {
                dom[b] = d;
                changed = true;
            }
        }
    }
    let check_use = |v: ValueId, b: usize, pos: i64, what: &str| -> Result<(), String> {
        let Some(info) = f.values.get(v as usize) else { return Err(format!("{what}: use of unknown %v{v}")) };
        if matches!(info.def, Def::Undef | Def::Param) {
            return Ok(());
        }
        let Some((db, dpos)) = def_at[v as usize] else { return Err(format!("{what}: %v{v} ({}) is used but never defined", info.reg)) };
        let ok = if db as usize == b { dpos < pos } else { dom[b][db as usize] };
        if ok {
            Ok(())
        } else {
            Err(format!("{what}: %v{v} ({}) is used where its definition in bb{db} does not dominate", info.reg))
        }
    };
    for (b, blk) in f.blocks.iter().enumerate() {
        for p in &blk.phis {
            for (pb, v) in &p.incoming {
                // Used at the end of the incoming block.
                check_use(*v, *pb as usize, i64::MAX, &format!("phi %v{} in bb{b}", p.dst))?;
            }
        }
        for (k, i) in blk.insts.iter().enumerate() {
            let mut us = Vec::new();
            i.operands.iter().for_each(|o| Opnd::values(o, &mut us));
            for u in us {
                if i.defs.contains(&u) {
                    continue;
                }
                check_use(u, b, k as i64, &format!("bb{b}#{k} `{}` (line {})", i.op, i.line))?;
            }
        }
        let mut us = Vec::new();
        match &blk.term {
            Term::CondBr { cond, .. } => {
                if let Opnd::Val(v) | Opnd::NotVal(v) = cond {
                    if f.values[*v as usize].ty != Type::Pred {
                        return Err(format!("bb{b}: branch condition %v{v} is .{}, not .pred", f.values[*v as usize].ty.as_str()));
                    }
                }
                Opnd::values(cond, &mut us)
            }
            Term::Switch { index, .. } => Opnd::values(index, &mut us),
            Term::Ret(vs) => vs.iter().for_each(|o| Opnd::values(o, &mut us)),
            _ => {}
        }
        for u in us {
            check_use(u, b, i64::MAX - 1, &format!("bb{b} terminator"))?;
        }
    }
    Ok(())
}

fn blk_preds(f: &Func, b: usize) -> Vec<BlockId> {
    f.blocks[b].preds.clone()
}
