//! Vector registers (PTX ISA 5.4.2, 6.4.3): `.reg .v4 .f32 V;` declares a register of four
//! `.f32` elements, read and written element-wise as `V.x`, `V.y`, `V.z`, `V.w` (or `.r .g .b
//! .a`) and as a whole where an instruction takes a vector operand (`ld.global.v4.f32 V, [a]`,
//! `mov.v4.f32 {a, b, c, d}, V`, `st`, `tex`).
//!
//! After validation, [`split_vector_registers`] rewrites each vector register into one scalar
//! register per element, named `V.x` etc. (a `.` cannot occur in a PTX identifier, so the
//! names cannot clash with the program's), each element use into that register, and each use
//! of the whole vector into the brace list `{V.x, V.y, ..}` that means the same (6.4.3:
//! "Ra = V.x = V.r"). Code generation then sees only scalar registers.

use super::ast::{Function, Ident, Item, Module, Operand, StateSpace, Stmt, VarDecl};
use std::collections::HashMap;

const ELEMS: [&str; 4] = ["x", "y", "z", "w"];

/// The element index of a component suffix (6.4.3).
fn element(c: char) -> Option<usize> {
    match c {
        'x' | 'r' => Some(0),
        'y' | 'g' => Some(1),
        'z' | 'b' => Some(2),
        'w' | 'a' => Some(3),
        _ => None,
    }
}

/// Element register names of every vector register, interned for the module's lifetime.
/// Names are leaked: a handful of short strings per vector register declaration, which the
/// AST's borrowed identifiers need to outlive.
struct Names {
    interned: HashMap<(String, usize), &'static str>,
}

impl Names {
    fn get(&mut self, reg: &str, k: usize) -> &'static str {
        self.interned.entry((reg.to_string(), k)).or_insert_with(|| Box::leak(format!("{reg}.{}", ELEMS[k]).into_boxed_str()))
    }
}

/// Rewrites the vector registers of every function of `m` (see the module comment).
pub fn split_vector_registers(m: &mut Module<'_>) {
    let any = |b: &[Stmt]| -> bool {
        fn walk(b: &[Stmt]) -> bool {
            b.iter().any(|s| match s {
                Stmt::Var(v) => v.space == StateSpace::Reg && v.vector.is_some(),
                Stmt::Block(b, _) => walk(b),
                _ => false,
            })
        }
        walk(b)
    };
    let mut names = Names { interned: HashMap::new() };
    for item in &mut m.items {
        if let Item::Func(f) = item {
            // `.reg` vector parameters and return values of a `.func` become one parameter
            // per element, as a call's vector arguments become one argument per element.
            let mut outer = HashMap::new();
            let Function { params, rets, body, .. } = &mut **f;
            for list in [params, rets] {
                if list.iter().any(|v| v.space == StateSpace::Reg && v.vector.is_some()) {
                    let mut out = Vec::with_capacity(list.len());
                    for v in list.drain(..) {
                        match v.vector {
                            Some(n) if v.space == StateSpace::Reg => {
                                let n = n.min(4) as usize;
                                outer.insert(v.name.name, n);
                                for k in 0..n {
                                    out.push(VarDecl { vector: None, name: Ident { name: names.get(v.name.name, k), span: v.name.span }, ..v.clone() });
                                }
                            }
                            _ => out.push(v),
                        }
                    }
                    *list = out;
                }
            }
            let Some(body) = body else { continue };
            if any(body) || !outer.is_empty() {
                let mut scopes = vec![outer];
                rewrite_body(body, &mut scopes, &mut names);
            }
        }
    }
}

/// Vector registers in scope: name → element count.
type Scopes<'a> = Vec<HashMap<&'a str, usize>>;

fn lookup(scopes: &Scopes, name: &str) -> Option<usize> {
    scopes.iter().rev().find_map(|s| s.get(name).copied())
}

fn rewrite_body<'a>(body: &mut Vec<Stmt<'a>>, scopes: &mut Scopes<'a>, names: &mut Names) {
    let mut out = Vec::with_capacity(body.len());
    for s in body.drain(..) {
        match s {
            Stmt::Var(v) if v.space == StateSpace::Reg && v.vector.is_some() && v.range.is_none() => {
                let n = v.vector.unwrap_or(1).min(4) as usize;
                scopes.last_mut().expect("a scope").insert(v.name.name, n);
                for k in 0..n {
                    let name = names.get(v.name.name, k);
                    out.push(Stmt::Var(VarDecl { vector: None, name: Ident { name, span: v.name.span }, ..v.clone() }));
                }
            }
            Stmt::Var(v) => {
                // A scalar declaration of the same name in an inner scope hides the vector.
                if v.space == StateSpace::Reg && lookup(scopes, v.name.name).is_some() {
                    scopes.last_mut().expect("a scope").insert(v.name.name, 0);
                }
                out.push(Stmt::Var(v));
            }
            Stmt::Block(mut b, span) => {
                scopes.push(HashMap::new());
                rewrite_body(&mut b, scopes, names);
                scopes.pop();
                out.push(Stmt::Block(b, span));
            }
            Stmt::Instr(mut i) => {
                for op in &mut i.operands {
                    rewrite_operand(op, scopes, names);
                }
                if i.opcode.name == "call" {
                    // A whole vector register in a call's return or argument list is its
                    // elements, one per (split) parameter.
                    for op in &mut i.operands {
                        if let Operand::List(items, _) = op {
                            if items.iter().any(|x| matches!(x, Operand::Vector(..))) {
                                let flat = std::mem::take(items).into_iter().flat_map(|x| match x {
                                    Operand::Vector(xs, _) => xs,
                                    x => vec![x],
                                });
                                *items = flat.collect();
                            }
                        }
                    }
                }
                out.push(Stmt::Instr(i));
            }
            other => out.push(other),
        }
    }
    *body = out;
}

fn rewrite_operand<'a>(op: &mut Operand<'a>, scopes: &Scopes<'a>, names: &mut Names) {
    match op {
        Operand::Name(id, comp) => {
            let Some(n) = lookup(scopes, id.name).filter(|&n| n > 0) else { return };
            match comp.map(element) {
                Some(Some(k)) if k < n => {
                    *op = Operand::Name(Ident { name: names.get(id.name, k), span: id.span }, None);
                }
                // An element past the vector's length stays as written: the register lookup
                // reports it.
                Some(_) => {}
                None => {
                    let span = id.span;
                    let items = (0..n).map(|k| Operand::Name(Ident { name: names.get(id.name, k), span }, None)).collect();
                    *op = Operand::Vector(items, span);
                }
            }
        }
        Operand::Vector(v, _) | Operand::MemList(v, _) | Operand::List(v, _) => v.iter_mut().for_each(|o| rewrite_operand(o, scopes, names)),
        Operand::Pair(a, b) => {
            rewrite_operand(a, scopes, names);
            rewrite_operand(b, scopes, names);
        }
        Operand::Sel(o, _, _) => rewrite_operand(o, scopes, names),
        _ => {}
    }
}
