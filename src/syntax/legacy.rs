//! Defaults of old PTX, made explicit before validation ([`apply_legacy_defaults`]):
//!
//! - PTX ISA 1.0-1.3 math without a precision or rounding modifier: `div.f32`, `rcp.f32`,
//!   `sqrt.f32`, `rsqrt.f32`, `sin.f32`, `cos.f32`, `lg2.f32` and `ex2.f32` default to
//!   `.approx.ftz`; `div.f64`, `rcp.f64` and `sqrt.f64` to `.rn`, `rsqrt.f64` to `.approx`
//!   (the notes of 9.7.3.7-9.7.3.16); legacy `mad.f64` maps to `mad.rn.f64` (9.7.3.6).
//! - The `.tex` state space (5.1.8, retained for backward compatibility): a `.tex .u32` or
//!   `.tex .u64` variable is a module-scope `.global .texref`.
//! - sm_1x targets, where a warp shares one program counter (section 3.2): nvopencc kept
//!   shared-memory reads of warp-synchronous code in order without `volatile` (the CUDA 2.x
//!   SDK reductions), so plain `.shared` loads and stores are lockstep steps there, like
//!   volatile ones (`lanes::is_lockstep_access`).

use super::ast::{Instr, Item, Module, StateSpace, Stmt, Type};

pub fn apply_legacy_defaults(m: &mut Module<'_>) {
    let old_math = m.version <= (1, 3);
    let sm1x = m.target.iter().any(|t| matches!(*t, "sm_10" | "sm_11" | "sm_12" | "sm_13"));
    for item in &mut m.items {
        match item {
            Item::Var(v) if v.space == StateSpace::Tex => {
                v.space = StateSpace::Global;
                v.ty = Type::TexRef;
            }
            Item::Func(f) => {
                if let Some(body) = &mut f.body {
                    walk(body, old_math, sm1x);
                }
            }
            _ => {}
        }
    }
}

fn walk(body: &mut [Stmt<'_>], old_math: bool, sm1x: bool) {
    for s in body {
        match s {
            Stmt::Instr(i) => {
                if old_math {
                    math_defaults(i);
                }
                if sm1x && matches!(i.opcode.name, "ld" | "st") && i.has_mod("shared") {
                    let ordered = i.mods.iter().any(|m| matches!(*m, "volatile" | "relaxed" | "acquire" | "release" | "weak" | "ca" | "cg" | "cs" | "lu" | "cv" | "wb" | "wt"));
                    if !ordered {
                        i.mods.insert(0, "volatile");
                    }
                }
            }
            Stmt::Block(b, _) => walk(b, old_math, sm1x),
            _ => {}
        }
    }
}

fn math_defaults(i: &mut Instr<'_>) {
    let has = |i: &Instr, ms: &[&str]| i.mods.iter().any(|m| ms.contains(m));
    const PRECISION: &[&str] = &["approx", "full", "rn", "rz", "rm", "rp"];
    let f32 = i.has_mod("f32");
    let f64 = i.has_mod("f64");
    let op = i.opcode.name;
    if has(i, PRECISION) || !(f32 || f64) {
        return;
    }
    let add: &[&'static str] = match (op, f32) {
        ("div" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2", true) => {
            if i.has_mod("ftz") {
                &["approx"]
            } else {
                &["approx", "ftz"]
            }
        }
        ("div" | "rcp" | "sqrt" | "mad", false) => &["rn"],
        ("rsqrt", false) => &["approx"],
        _ => return,
    };
    for (k, m) in add.iter().enumerate() {
        i.mods.insert(k, m);
    }
}
