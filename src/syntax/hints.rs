//! Cache hints that change nothing on a CPU: after validation, [`drop_cache_policies`] removes
//! the `.L2::cache_hint` qualifier and its cache-policy operand (PTX ISA 7.4: the last operand
//! of `ld`, `st`, `atom`, `red`, `prefetch` and `cp.async`), so that code generation sees the
//! plain access. The policy itself comes from `createpolicy` (see `codegen::ops_misc`).

use super::ast::{Item, Module, Stmt};

pub fn drop_cache_policies(m: &mut Module<'_>) {
    fn walk(body: &mut [Stmt<'_>]) {
        for s in body {
            match s {
                Stmt::Instr(i) => {
                    if let Some(k) = i.mods.iter().position(|m| *m == "L2::cache_hint") {
                        i.mods.remove(k);
                        i.operands.pop();
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
