//! AST → PTX text. The output parses back to an equal AST (`parse(print(ast)) == ast`).

use super::ast::*;
use std::fmt::Write;

pub fn print_module(m: &Module) -> String {
    let mut o = String::new();
    let _ = writeln!(o, ".version {}.{}", m.version.0, m.version.1);
    if !m.target.is_empty() {
        let _ = writeln!(o, ".target {}", m.target.join(", "));
    }
    if let Some(a) = m.address_size {
        let _ = writeln!(o, ".address_size {a}");
    }
    for item in &m.items {
        o.push('\n');
        print_item(&mut o, item);
    }
    o
}

fn linkage(o: &mut String, l: Option<Linkage>) {
    if let Some(l) = l {
        o.push_str(match l {
            Linkage::Extern => ".extern ",
            Linkage::Visible => ".visible ",
            Linkage::Weak => ".weak ",
            Linkage::Common => ".common ",
        });
    }
}

fn print_item(o: &mut String, item: &Item) {
    match item {
        Item::Var(v) => {
            print_var(o, v);
            o.push_str(";\n");
        }
        Item::Func(f) => print_function(o, f),
        Item::Alias { alias, aliasee, .. } => {
            let _ = writeln!(o, ".alias {}, {};", alias.name, aliasee.name);
        }
        Item::Pragma(list, _) => {
            let _ = writeln!(o, ".pragma {};", pragma_list(list));
        }
        Item::File { index, name, timestamp, size, .. } => {
            let _ = write!(o, ".file {index} \"{name}\"");
            if let (Some(t), Some(s)) = (timestamp, size) {
                let _ = write!(o, ", {t}, {s}");
            }
            o.push('\n');
        }
        Item::Section { name, body, .. } => {
            let _ = writeln!(o, ".section {name}\n{{\n{body}\n}}");
        }
        Item::Dwarf(text, _) => {
            let _ = writeln!(o, "@@DWARF {text}");
        }
    }
}

fn pragma_list(list: &[&str]) -> String {
    list.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ")
}

/// Prints one declaration without the trailing `;`.
pub fn print_var(o: &mut String, v: &VarDecl) {
    linkage(o, v.linkage);
    let _ = write!(o, ".{}", v.space.as_str());
    if let Some(b) = v.bank {
        let _ = write!(o, "[{b}]");
    }
    if let Some(a) = v.align {
        let _ = write!(o, " .align {a}");
    }
    if let Some(n) = v.vector {
        let _ = write!(o, " .v{n}");
    }
    let _ = write!(o, " .{}", v.ty.as_str());
    if let Some(p) = &v.ptr {
        o.push_str(" .ptr");
        if let Some(s) = p.space {
            let _ = write!(o, ".{s}");
        }
        if let Some(a) = p.align {
            let _ = write!(o, ".align {a}");
        }
    }
    let _ = write!(o, " {}", v.name.name);
    if let Some(n) = v.range {
        let _ = write!(o, "<{n}>");
    }
    for d in &v.dims {
        match d {
            Some(n) => {
                let _ = write!(o, "[{n}]");
            }
            None => o.push_str("[]"),
        }
    }
    if let Some(init) = &v.init {
        o.push_str(" = ");
        print_init(o, init);
    }
}

fn print_init(o: &mut String, i: &Init) {
    match i {
        Init::Expr(e) => print_expr(o, e),
        Init::List(items, _) => {
            o.push('{');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    o.push_str(", ");
                }
                print_init(o, it);
            }
            o.push('}');
        }
    }
}

pub fn print_expr(o: &mut String, e: &Expr) {
    match e {
        Expr::Int { value, unsigned, .. } => {
            let _ = write!(o, "{value}");
            if *unsigned && *value <= i64::MAX as u64 {
                o.push('U');
            }
        }
        Expr::F64 { bits, hex, .. } => {
            let v = f64::from_bits(*bits);
            if !*hex && v == f64::INFINITY {
                // A decimal literal too large for .f64 (`1e999`) reads as +infinity.
                o.push_str("1e999");
            } else if *hex || !v.is_finite() || v.is_sign_negative() {
                let _ = write!(o, "0d{bits:016X}");
            } else {
                let s = format!("{v:?}");
                o.push_str(&s);
                if !s.contains(['.', 'e', 'E']) {
                    o.push_str(".0");
                }
            }
        }
        Expr::F32 { bits, .. } => {
            let _ = write!(o, "0f{bits:08X}");
        }
        Expr::Sym(id) => o.push_str(id.name),
        Expr::Generic(id, _) => {
            let _ = write!(o, "generic({})", id.name);
        }
        Expr::Unary(op, a, _) => {
            o.push_str(match op {
                UnOp::Plus => "+",
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::Compl => "~",
                UnOp::CastS64 => "(.s64)",
                UnOp::CastU64 => "(.u64)",
            });
            o.push('(');
            print_expr(o, a);
            o.push(')');
        }
        Expr::Binary(op, a, b, _) => {
            o.push('(');
            print_expr(o, a);
            let _ = write!(o, " {} ", op.as_str());
            print_expr(o, b);
            o.push(')');
        }
        Expr::Cond(c, a, b, _) => {
            o.push('(');
            print_expr(o, c);
            o.push_str(" ? ");
            print_expr(o, a);
            o.push_str(" : ");
            print_expr(o, b);
            o.push(')');
        }
    }
}

fn param_list(o: &mut String, ps: &[VarDecl]) {
    o.push('(');
    for (k, p) in ps.iter().enumerate() {
        if k > 0 {
            o.push_str(", ");
        }
        print_var(o, p);
    }
    o.push(')');
}

fn print_function(o: &mut String, f: &Function) {
    linkage(o, f.linkage);
    o.push_str(if f.entry { ".entry " } else { ".func " });
    if !f.entry && !f.rets.is_empty() {
        param_list(o, &f.rets);
        o.push(' ');
    }
    o.push_str(f.name.name);
    if !f.params.is_empty() || f.entry {
        param_list(o, &f.params);
    }
    for d in &f.perf {
        o.push('\n');
        match d {
            PerfDirective::MaxNReg(n) => {
                let _ = write!(o, ".maxnreg {n}");
            }
            PerfDirective::MaxNTid(d) => {
                let _ = write!(o, ".maxntid {}", join_u32(d));
            }
            PerfDirective::ReqNTid(d) => {
                let _ = write!(o, ".reqntid {}", join_u32(d));
            }
            PerfDirective::MinNCtaPerSm(n) => {
                let _ = write!(o, ".minnctapersm {n}");
            }
            PerfDirective::MaxNCtaPerSm(n) => {
                let _ = write!(o, ".maxnctapersm {n}");
            }
            PerfDirective::NoReturn => o.push_str(".noreturn"),
            PerfDirective::ExplicitCluster => o.push_str(".explicitcluster"),
            PerfDirective::ReqNCtaPerCluster(d) => {
                let _ = write!(o, ".reqnctapercluster {}", join_u32(d));
            }
            PerfDirective::MaxClusterRank(n) => {
                let _ = write!(o, ".maxclusterrank {n}");
            }
            PerfDirective::Pragma(l) => {
                let _ = write!(o, ".pragma {};", pragma_list(l));
            }
        }
    }
    match &f.body {
        None => o.push_str(";\n"),
        Some(body) => {
            o.push_str("\n{\n");
            print_stmts(o, body, 1);
            o.push_str("}\n");
        }
    }
}

fn join_u32(d: &[u32]) -> String {
    d.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

fn print_stmts(o: &mut String, body: &[Stmt], depth: usize) {
    let ind = "\t".repeat(depth);
    for s in body {
        match s {
            Stmt::Label(l) => {
                let _ = writeln!(o, "{}:", l.name);
            }
            Stmt::Instr(i) => {
                o.push_str(&ind);
                print_instr(o, i);
                o.push('\n');
            }
            Stmt::Var(v) => {
                o.push_str(&ind);
                print_var(o, v);
                o.push_str(";\n");
            }
            Stmt::Block(b, _) => {
                let _ = writeln!(o, "{ind}{{");
                print_stmts(o, b, depth + 1);
                let _ = writeln!(o, "{ind}}}");
            }
            Stmt::Pragma(l, _) => {
                let _ = writeln!(o, "{ind}.pragma {};", pragma_list(l));
            }
            Stmt::Loc { file, line, col, rest, .. } => {
                let _ = write!(o, "{ind}.loc {file} {line} {col}");
                if let Some(r) = rest {
                    let _ = write!(o, ", {r}");
                }
                o.push('\n');
            }
            Stmt::CallPrototype { label, rets, params, noreturn, .. } => {
                let _ = write!(o, "{}: .callprototype ", label.name);
                if !rets.is_empty() {
                    param_list(o, rets);
                    o.push(' ');
                }
                o.push('_');
                if !params.is_empty() {
                    o.push(' ');
                    param_list(o, params);
                }
                if *noreturn {
                    o.push_str(" .noreturn");
                }
                o.push_str(";\n");
            }
            Stmt::BranchTargets { label, targets, .. } | Stmt::CallTargets { label, targets, .. } => {
                let kw = if matches!(s, Stmt::CallTargets { .. }) { "calltargets" } else { "branchtargets" };
                let names: Vec<_> = targets.iter().map(|t| t.name).collect();
                let _ = writeln!(o, "{}: .{kw} {};", label.name, names.join(", "));
            }
        }
    }
}

/// Prints one instruction with its `;`.
pub fn print_instr(o: &mut String, i: &Instr) {
    if let Some(g) = &i.guard {
        let _ = write!(o, "@{}{} ", if g.negated { "!" } else { "" }, g.pred.name);
    }
    o.push_str(i.opcode.name);
    for m in &i.mods {
        o.push('.');
        o.push_str(m);
    }
    for (k, op) in i.operands.iter().enumerate() {
        o.push_str(if k == 0 { " " } else { ", " });
        print_operand(o, op);
    }
    o.push(';');
}

pub fn print_operand(o: &mut String, op: &Operand) {
    match op {
        Operand::Name(id, comp) => {
            o.push_str(id.name);
            if let Some(c) = comp {
                o.push('.');
                o.push(*c);
            }
        }
        // `!e` at the start of an operand would read as a negated predicate `!p`.
        Operand::Imm(e @ Expr::Unary(UnOp::Not, ..)) => {
            o.push('(');
            print_expr(o, e);
            o.push(')');
        }
        Operand::Imm(e) => print_expr(o, e),
        Operand::Mem(a) => {
            o.push('[');
            match a.base {
                Some(b) => {
                    o.push_str(b.name);
                    if a.offset != 0 {
                        let _ = write!(o, "+{}", a.offset);
                    }
                }
                None => {
                    let _ = write!(o, "{}", a.offset as u64);
                }
            }
            o.push(']');
        }
        Operand::MemList(items, _) => seq(o, items, '[', ']'),
        Operand::Index(id, idx, _) => {
            o.push_str(id.name);
            o.push('[');
            print_operand(o, idx);
            o.push(']');
        }
        Operand::Vector(items, _) => seq(o, items, '{', '}'),
        Operand::List(items, _) => seq(o, items, '(', ')'),
        Operand::Pair(a, b) => {
            print_operand(o, a);
            o.push('|');
            print_operand(o, b);
        }
        Operand::Not(id) => {
            o.push('!');
            o.push_str(id.name);
        }
        Operand::Sink(_) => o.push('_'),
        Operand::Sel(inner, sel, _) => {
            print_operand(o, inner);
            o.push('.');
            o.push_str(sel);
        }
    }
}

fn seq(o: &mut String, items: &[Operand], open: char, close: char) {
    o.push(open);
    for (k, it) in items.iter().enumerate() {
        if k > 0 {
            o.push_str(", ");
        }
        print_operand(o, it);
    }
    o.push(close);
}
