//! Labels of nested blocks (PTX ISA 9.7.11.1: a `{ }` block is a scope, so two blocks of one
//! function may each declare a label of the same name; a branch reaches the label of its own
//! block or an enclosing one). Compilers emit this: Triton's inline waits are
//! `{ .reg .pred complete; waitLoop: mbarrier.try_wait... @!complete bra.uni waitLoop; }`,
//! repeated in one function. The passes after validation key labels by name within a
//! function, so a label declared more than once in a function is renamed in every nested
//! block that declares it (`name$ptxr1`, ...), with the references that resolve to it.

use super::ast::{Item, Module, Operand, Stmt};
use std::collections::HashMap;

/// Renames the labels of nested blocks that another scope of the same function also declares.
pub fn unique_labels(m: &mut Module<'_>) {
    for item in &mut m.items {
        if let Item::Func(f) = item {
            if let Some(body) = f.body.as_mut() {
                let mut count: HashMap<&str, u32> = HashMap::new();
                declared(body, &mut count);
                if count.values().all(|&c| c < 2) {
                    continue;
                }
                let mut next = 0u32;
                rename(body, 0, &count, &mut Vec::new(), &mut next);
            }
        }
    }
}

fn declared<'a>(body: &[Stmt<'a>], count: &mut HashMap<&'a str, u32>) {
    for s in body {
        match s {
            Stmt::Label(l) => *count.entry(l.name).or_default() += 1,
            Stmt::Block(b, _) => declared(b, count),
            _ => {}
        }
    }
}

/// `scopes`: the renames of the enclosing blocks, innermost last.
fn rename<'a>(body: &mut [Stmt<'a>], depth: u32, count: &HashMap<&'a str, u32>, scopes: &mut Vec<HashMap<&'a str, &'a str>>, next: &mut u32) {
    let mut mine: HashMap<&'a str, &'a str> = HashMap::new();
    for s in body.iter() {
        if let Stmt::Label(l) = s {
            let dup = count.get(l.name).copied().unwrap_or(0) > 1;
            if depth > 0 && dup && !mine.contains_key(l.name) {
                *next += 1;
                let fresh: &'a str = Box::leak(format!("{}$ptxr{}", l.name, next).into_boxed_str());
                mine.insert(l.name, fresh);
            } else if depth == 0 || !dup {
                // declared here under its own name: it shadows an outer rename
                mine.entry(l.name).or_insert(l.name);
            }
        }
    }
    scopes.push(mine);
    let resolve = |scopes: &Vec<HashMap<&'a str, &'a str>>, n: &'a str| -> Option<&'a str> { scopes.iter().rev().find_map(|m| m.get(n).copied()) };
    for s in body.iter_mut() {
        match s {
            Stmt::Label(l) => {
                if let Some(n) = resolve(scopes, l.name) {
                    l.name = n;
                }
            }
            Stmt::Instr(i) => {
                for op in i.operands.iter_mut() {
                    if let Operand::Name(id, None) = op {
                        if let Some(n) = resolve(scopes, id.name) {
                            id.name = n;
                        }
                    }
                }
            }
            Stmt::BranchTargets { label, targets, .. } => {
                if let Some(n) = resolve(scopes, label.name) {
                    label.name = n;
                }
                for t in targets.iter_mut() {
                    if let Some(n) = resolve(scopes, t.name) {
                        t.name = n;
                    }
                }
            }
            Stmt::Block(b, _) => rename(b, depth + 1, count, scopes, next),
            _ => {}
        }
    }
    scopes.pop();
}
