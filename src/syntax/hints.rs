//! Qualifiers that change nothing on a CPU, removed after validation ([`simplify_qualifiers`])
//! so that code generation sees the plain instruction:
//! - the `.L2::cache_hint` qualifier and its cache-policy operand (PTX ISA 7.4: the last
//!   operand of `ld`, `st`, `atom`, `red`, `prefetch` and `cp.async`); the policy itself comes
//!   from `createpolicy` (see `codegen::ops_misc`);
//! - the sub-qualifiers of state spaces (PTX 7.8) of addresses: `.shared::cta` and
//!   `.shared::cluster` are `.shared` (a cluster here is one CTA, whose window is its shared memory), and
//!   `.param::entry` / `.param::func` are `.param`.

use super::ast::{Item, Module, Stmt};

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
                        for m in i.mods.iter_mut() {
                            match *m {
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
