//! The textual form of the IR (`ptxr compile --emit ir`).
//!
//! ```text
//! kernel saxpy(.param .u64 x, ...) {
//! bb0:
//!   %v0:u32 = mov.u32 %ctaid.x
//!   br.cond %v3, bb2, bb1
//! bb2 ($L__BB0_2):                            ; preds bb0
//!   %v9:f32 = phi [bb0: %v4], [bb3: %v8]
//!   ...
//! }
//! ```
//! Values print as `%vN`; their definitions show the type and the register they came from.

use super::{Def, Func, Module, Opnd, Term};
use std::fmt::Write as _;

pub fn print_module(m: &Module) -> String {
    let mut o = String::new();
    for (k, f) in m.funcs.iter().enumerate() {
        if k > 0 {
            o.push('\n');
        }
        print_func(&mut o, f);
    }
    o
}

fn opnd(o: &mut String, x: &Opnd) {
    match x {
        Opnd::Val(v) => {
            let _ = write!(o, "%v{v}");
        }
        Opnd::NotVal(v) => {
            let _ = write!(o, "!%v{v}");
        }
        Opnd::Imm(s) | Opnd::Name(s) => o.push_str(s),
        Opnd::Expr(s, vs) => {
            o.push_str(s);
            list(o, &vs.iter().map(|v| Opnd::Val(*v)).collect::<Vec<_>>(), '[', ']');
        }
        Opnd::Addr(base, off) => {
            o.push('[');
            match base {
                Some(b) => {
                    opnd(o, b);
                    if *off != 0 {
                        let _ = write!(o, "{:+}", off);
                    }
                }
                None => {
                    let _ = write!(o, "{off}");
                }
            }
            o.push(']');
        }
        Opnd::Vector(xs) => list(o, xs, '{', '}'),
        Opnd::List(xs) => list(o, xs, '(', ')'),
        Opnd::Pair(a, b) => {
            opnd(o, a);
            o.push('|');
            opnd(o, b);
        }
        Opnd::Sel(a, s) => {
            opnd(o, a);
            let _ = write!(o, ".{s}");
        }
        Opnd::Sink => o.push('_'),
    }
}

fn list(o: &mut String, xs: &[Opnd], open: char, close: char) {
    o.push(open);
    for (k, x) in xs.iter().enumerate() {
        if k > 0 {
            o.push_str(", ");
        }
        opnd(o, x);
    }
    o.push(close);
}

fn print_func(o: &mut String, f: &Func) {
    let _ = write!(o, "{} {}", if f.kernel { "kernel" } else { "func" }, f.name);
    if !f.rets.is_empty() {
        o.push_str(" -> (");
        for (k, (n, t, s)) in f.rets.iter().enumerate() {
            let _ = write!(o, "{}.{} .{} {n}", if k > 0 { ", " } else { "" }, s, t.as_str());
        }
        o.push(')');
    }
    o.push('(');
    for (k, (n, t, s)) in f.params.iter().enumerate() {
        let _ = write!(o, "{}.{} .{} {n}", if k > 0 { ", " } else { "" }, s, t.as_str());
    }
    o.push_str(") {\n");
    let undef: Vec<usize> = f.values.iter().enumerate().filter(|(_, v)| v.def == Def::Undef).map(|(k, _)| k).collect();
    for v in undef {
        let vi = &f.values[v];
        let _ = writeln!(o, "  ; %v{v}:{} is undefined ({} read before any write)", vi.ty.as_str(), vi.reg);
    }
    for v in f.values.iter().enumerate().filter(|(_, v)| v.def == Def::Param) {
        let _ = writeln!(o, "  ; %v{}:{} = parameter {}", v.0, v.1.ty.as_str(), v.1.reg);
    }
    for (b, blk) in f.blocks.iter().enumerate() {
        let mut head = format!("bb{b}");
        if let Some(l) = &blk.label {
            let _ = write!(head, " ({l})");
        }
        head.push(':');
        if !blk.preds.is_empty() {
            let ps: Vec<String> = blk.preds.iter().map(|p| format!("bb{p}")).collect();
            let _ = write!(o, "{head:<40} ; preds {}\n", ps.join(", "));
        } else {
            let _ = writeln!(o, "{head}");
        }
        for p in &blk.phis {
            let vi = &f.values[p.dst as usize];
            let _ = write!(o, "  %v{}:{} = phi", p.dst, vi.ty.as_str());
            for (k, (pb, v)) in p.incoming.iter().enumerate() {
                let _ = write!(o, "{} [bb{pb}: %v{v}]", if k > 0 { "," } else { "" });
            }
            let _ = writeln!(o, "    ; {}", vi.reg);
        }
        for i in &blk.insts {
            o.push_str("  ");
            if !i.defs.is_empty() {
                let ds: Vec<String> = i.defs.iter().map(|d| format!("%v{d}:{}", f.values[*d as usize].ty.as_str())).collect();
                let _ = write!(o, "{} = ", ds.join(", "));
            }
            o.push_str(&i.op);
            for (k, x) in i.operands.iter().enumerate() {
                // Destinations are shown on the left.
                if k == 0 && !i.defs.is_empty() && matches!(x, Opnd::Val(_) | Opnd::Vector(_) | Opnd::Pair(..) | Opnd::Sel(..)) && !i.op.starts_with("call") {
                    continue;
                }
                o.push_str(if (k == 0) || (k == 1 && !i.defs.is_empty() && !i.op.starts_with("call")) { " " } else { ", " });
                opnd(o, x);
            }
            let regs: Vec<&str> = i.defs.iter().map(|d| f.values[*d as usize].reg.as_str()).collect();
            if regs.is_empty() {
                let _ = writeln!(o, "    ; line {}", i.line);
            } else {
                let _ = writeln!(o, "    ; {} (line {})", regs.join(", "), i.line);
            }
        }
        o.push_str("  ");
        match &blk.term {
            Term::Br(t) => {
                let _ = writeln!(o, "br bb{t}");
            }
            Term::CondBr { cond, then, els } => {
                o.push_str("br.cond ");
                opnd(o, cond);
                let _ = writeln!(o, ", bb{then}, bb{els}");
            }
            Term::Switch { index, targets } => {
                o.push_str("switch ");
                opnd(o, index);
                let ts: Vec<String> = targets.iter().map(|t| format!("bb{t}")).collect();
                let _ = writeln!(o, ", [{}]", ts.join(", "));
            }
            Term::Ret(vs) => {
                o.push_str("ret");
                if !vs.is_empty() {
                    o.push(' ');
                    list(o, vs, '(', ')');
                }
                o.push('\n');
            }
            Term::Exit => o.push_str("exit\n"),
            Term::Unreachable => o.push_str("unreachable\n"),
        }
    }
    o.push_str("}\n");
}
