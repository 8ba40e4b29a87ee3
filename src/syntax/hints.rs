//! Qualifiers that change nothing on a CPU, removed after validation ([`simplify_qualifiers`])
//! so that code generation sees the plain instruction:
//! - the `.L2::cache_hint` qualifier and its cache-policy operand (PTX ISA 7.4: the last
//!   operand of `ld`, `st`, `atom`, `red`, `prefetch` and `cp.async`); the policy itself comes
//!   from `createpolicy` (see `codegen::ops_misc`);
//! - the sub-qualifiers of state spaces (PTX 7.8) of addresses: `.shared::cta` and
//!   `.shared::cluster` are `.shared` (one address names a byte of the CTA's window or, in a
//!   module that reaches them, of another CTA's of the cluster: `FnEmitter::shared_base`,
//!   `codegen::ops_mem::cluster_address`), and `.param::entry` / `.param::func` are `.param`; `isspacep`,
//!   `mapa` and `getctarank` keep `.shared::cluster`, whose meaning differs there.
//!
//! [`array_operands`] rewrites the array-indexing form of operands (PTX ISA 6.4.2) with a
//! constant index into the address forms code generation knows.

use super::ast::{Address, BinOp, Expr, Item, Module, Operand, Stmt, Type};
use std::collections::HashMap;

pub fn simplify_qualifiers(m: &mut Module<'_>) {
    fn walk(body: &mut [Stmt<'_>]) {
        for s in body {
            match s {
                Stmt::Instr(i) => {
                    if let Some(k) = i.mods.iter().position(|m| *m == "L2::cache_hint") {
                        i.mods.remove(k);
                        i.operands.pop();
                    }
                    // `fence.proxy.async.shared::cta` names a proxy, not an address space.
                    if i.opcode.name != "fence" {
                        let keep_cluster = matches!(i.opcode.name, "isspacep" | "mapa" | "getctarank");
                        for m in i.mods.iter_mut() {
                            match *m {
                                "shared::cluster" if keep_cluster => {}
                                "shared::cta" | "shared::cluster" => *m = "shared",
                                "param::entry" | "param::func" => *m = "param",
                                _ => {}
                            }
                        }
                    }
                }
                Stmt::Block(b, _) => walk(b),
                _ => {}
            }
        }
    }
    for item in &mut m.items {
        if let Item::Func(f) = item {
            if let Some(body) = &mut f.body {
                walk(body);
            }
        }
    }
}

/// PTX ISA 6.4.2 "Arrays as Operands": `a[N]` with a constant N is element N of the array
/// variable `a`, so `ld.global.u32 s, a[N]` reads `[a + N * size]` and `mov.u32 s, a[N]`
/// moves that address (`a + N * size`), where size is the element type's. (ZLUDA's CUDA test
/// `const` measures element indexing: `ld.const.b16 d, a[1]` of a `.b16` array reads a[1].)
/// Register indices stay as written; code generation reports them.
pub fn array_operands(m: &mut Module<'_>) {
    fn elem_size(ty: Type) -> i64 {
        ty.size().max(1) as i64
    }
    fn walk<'a>(body: &mut [Stmt<'a>], scope: &mut Vec<HashMap<&'a str, i64>>) {
        let mut here = HashMap::new();
        for s in body.iter() {
            if let Stmt::Var(v) = s {
                here.insert(v.name.name, elem_size(v.ty));
            }
        }
        scope.push(here);
        for s in body.iter_mut() {
            match s {
                Stmt::Instr(i) => {
                    let is_mov = i.opcode.name == "mov";
                    for op in i.operands.iter_mut() {
                        let Operand::Index(id, idx, span) = op else { continue };
                        let Some(size) = scope.iter().rev().find_map(|m| m.get(id.name).copied()) else { continue };
                        let Operand::Imm(e) = idx.as_ref() else { continue };
                        let Ok(n) = super::eval::eval(e, &|_| None) else { continue };
                        if matches!(n, super::eval::Const::F32(_) | super::eval::Const::F64(_)) {
                            continue;
                        }
                        let off = (n.as_u64() as i64).wrapping_mul(size);
                        let (id, span) = (*id, *span);
                        *op = if is_mov {
                            let k = Expr::Int { value: off as u64, unsigned: false, span };
                            Operand::Imm(Expr::Binary(BinOp::Add, Box::new(Expr::Sym(id)), Box::new(k), span))
                        } else {
                            Operand::Mem(Address { base: Some(id), offset: off, span })
                        };
                    }
                }
                Stmt::Block(b, _) => walk(b, scope),
                _ => {}
            }
        }
        scope.pop();
    }
    let mut globals = HashMap::new();
    for item in &m.items {
        if let Item::Var(v) = item {
            globals.insert(v.name.name, elem_size(v.ty));
        }
    }
    let mut scope = vec![globals];
    for item in &mut m.items {
        if let Item::Func(f) = item {
            if let Some(body) = &mut f.body {
                walk(body, &mut scope);
            }
        }
    }
}
