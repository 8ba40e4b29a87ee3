//! Property tests of the front end.
//!
//! 1. Random but valid PTX *text* (modules, kernels, functions, declarations, labels, guarded
//!    instructions with real opcode/modifier lists, every operand form, initializers, debug
//!    directives, comments) parses without errors, and `parse(print(parse(text))) == parse(text)`.
//! 2. Constant expressions (4.6.3/4.6.4) evaluate like an independent reference evaluator
//!    written here from the rules of 4.6.4 and Table 5.

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use ptxr::syntax::{diag::render_all, eval, parse_module, printer::print_module};

// ---------------------------------------------------------------------------------------------
// PTX text generators
// ---------------------------------------------------------------------------------------------

fn pick(items: &'static [&'static str]) -> BoxedStrategy<String> {
    proptest::sample::select(items).prop_map(|s| s.to_string()).boxed()
}

/// Register names as compilers write them, plus special registers with components.
fn reg() -> BoxedStrategy<String> {
    prop_oneof![
        4 => (pick(&["%r", "%rd", "%f", "%fd", "%p", "%rs", "%h"]), 0u32..40).prop_map(|(p, n)| format!("{p}{n}")),
        1 => "[a-z][a-z0-9_]{0,6}".prop_filter("not a keyword-like sink", |s| s != "_").prop_map(|s| format!("{s}_v")),
        1 => "[_$%][a-zA-Z0-9_$]{1,6}",
        1 => (pick(&["%tid", "%ntid", "%ctaid", "%nctaid"]), pick(&["x", "y", "z"])).prop_map(|(r, c)| format!("{r}.{c}")),
        1 => pick(&["%laneid", "%warpid", "%clock", "%clock64", "%lanemask_lt", "WARP_SZ"]),
    ]
    .boxed()
}

/// A register usable as an address base (no vector component).
fn base_reg() -> BoxedStrategy<String> {
    prop_oneof![
        4 => (pick(&["%r", "%rd", "%SP", "%SPL"]), 0u32..40).prop_map(|(p, n)| format!("{p}{n}")),
        1 => "[a-z][a-z0-9_]{0,6}".prop_map(|s| format!("{s}_v")),
    ]
    .boxed()
}

fn pred() -> BoxedStrategy<String> {
    (0u32..16).prop_map(|n| format!("%p{n}")).boxed()
}

fn label() -> BoxedStrategy<String> {
    prop_oneof![
        (0u32..5, 0u32..30).prop_map(|(a, b)| format!("$L__BB{a}_{b}")),
        "[A-Z][A-Za-z0-9_]{0,6}".prop_map(|s| format!("L{s}")),
    ]
    .boxed()
}

/// An integer literal in any notation, with an optional `U` suffix.
fn int_lit() -> BoxedStrategy<String> {
    let v = prop_oneof![0u64..10, 0u64..100_000, any::<u64>()];
    (v, 0u8..4, any::<bool>())
        .prop_map(|(v, radix, u)| {
            let body = match radix {
                0 => format!("{v}"),
                1 => format!("0x{v:X}"),
                2 if v != 0 => format!("0{v:o}"),
                3 => format!("0b{v:b}"),
                _ => format!("{v}"),
            };
            if u {
                format!("{body}U")
            } else {
                body
            }
        })
        .boxed()
}

fn float_lit() -> BoxedStrategy<String> {
    prop_oneof![
        any::<u32>().prop_map(|b| format!("0f{b:08X}")),
        any::<u32>().prop_map(|b| format!("0F{b:08x}")),
        any::<u64>().prop_map(|b| format!("0d{b:016X}")),
        (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        (1u32..10, -30i32..30).prop_map(|(a, e)| format!("{a}e{e}")),
        (0u32..100, 0u32..100, -300i32..300).prop_map(|(a, b, e)| format!("{a}.{b}E{e:+}")),
        (0u32..1000).prop_map(|b| format!(".{b}")),
        any::<f64>().prop_filter("finite", |v| v.is_finite() && *v >= 0.0).prop_map(|v| format!("{v:?}")),
    ]
    .boxed()
}

/// A constant expression over literals (and, with `syms`, symbols), with spaces around binary
/// operators (`8%r` would read `%r` as a name) and parentheses where the generator nests.
fn const_expr(syms: bool) -> BoxedStrategy<String> {
    let leaf = if syms {
        prop_oneof![3 => int_lit(), 1 => float_lit(), 1 => pick(&["arr_g", "tbl", "WARP_SZ"])].boxed()
    } else {
        prop_oneof![3 => int_lit(), 1 => float_lit(), 1 => Just("WARP_SZ".to_string())].boxed()
    };
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (pick(&["-", "+", "~", "!", "(.s64)", "(.u64)", "(.s64) ", "- "]), inner.clone()).prop_map(|(op, e)| format!("{op}({e})")),
            (inner.clone(), pick(&["*", "/", "%", "+", "-", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "^", "|", "&&", "||"]), inner.clone())
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
            (inner.clone(), pick(&["+", "-", "*"]), inner).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        ]
    })
    .boxed()
}

/// An integer expression that evaluates without error (for array sizes and address offsets).
fn safe_int_expr() -> BoxedStrategy<String> {
    let leaf = (0u64..64).prop_map(|v| v.to_string()).boxed();
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), pick(&["+", "*", "<<", "|", "&", "^"]), inner.clone()).prop_map(|(a, op, b)| format!("({a} {op} ({b} & 7))")),
            inner.prop_map(|a| format!("(.u64)({a})")),
        ]
    })
    .boxed()
}

/// An operand of an ordinary (non-`call`) instruction.
fn operand() -> BoxedStrategy<String> {
    let simple = prop_oneof![
        6 => reg(),
        2 => int_lit(),
        1 => (int_lit()).prop_map(|v| format!("-{v}")),
        2 => float_lit(),
        1 => float_lit().prop_map(|v| format!("-{v}")),
        // A constant expression; one starting with `!` would read as a negated predicate.
        2 => const_expr(false).prop_map(|e| if e.starts_with('!') { format!("({e})") } else { e }),
        1 => (pick(&["arr_g", "tbl"]), pick(&["+", "-", " + ", " - "]), 0u32..4096).prop_map(|(s, op, n)| format!("{s}{op}{n}")),
        1 => Just("_".to_string()),
        1 => pred().prop_map(|p| format!("!{p}")),
        1 => pred().prop_map(|p| format!("! {p}")),
    ]
    .boxed();
    let addr = prop_oneof![
        reg().prop_map(|r| format!("[{r}]")),
        (base_reg(), 0u32..100_000).prop_map(|(r, n)| format!("[{r}+{n}]")),
        (base_reg(), 1u32..64).prop_map(|(r, n)| format!("[{r}+-{n}]")),
        (base_reg(), 1u32..64).prop_map(|(r, n)| format!("[ {r} - {n} ]")),
        (base_reg(), safe_int_expr()).prop_map(|(r, e)| format!("[{r}+{e}]")),
        (0u32..100_000).prop_map(|n| format!("[{n}]")),
        (pick(&["arr_g", "k_param_0", "__local_depot0"]), 0u32..64).prop_map(|(r, n)| format!("[{r}+{n}]")),
    ]
    .boxed();
    let vec_elem = prop_oneof![4 => reg(), 1 => Just("_".to_string()), 1 => int_lit(), 1 => float_lit()].boxed();
    let vector = prop::collection::vec(vec_elem, 1..=4).prop_map(|v| format!("{{{}}}", v.join(", "))).boxed();
    prop_oneof![
        10 => simple,
        4 => addr,
        2 => vector.clone(),
        1 => (reg(), pred()).prop_map(|(d, p)| format!("{d}|{p}")),
        1 => pred().prop_map(|p| format!("_|{p}")),
        // texture/surface operand lists
        1 => (reg(), vector).prop_map(|(t, v)| format!("[{t}, {v}]")),
        1 => (reg(), reg(), reg()).prop_map(|(a, b, c)| format!("[{a}, {b}, {c}]")),
        1 => (pick(&["tbl", "arr_g"]), reg()).prop_map(|(a, i)| format!("{a}[{i}]")),
    ]
    .boxed()
}

/// Opcode and modifier lists of real instructions.
const OPCODES: &[&str] = &[
    "mov.u32", "mov.b64", "mov.f32", "mov.pred", "add.s32", "add.s64", "add.f32", "add.rn.ftz.f32", "add.cc.u32", "addc.u32",
    "sub.s32", "mul.wide.s32", "mul.lo.s32", "mul.hi.u32", "mad.lo.s32", "mad.wide.u32", "fma.rn.f32", "fma.rn.f64",
    "fma.rn.f16x2", "div.rn.f32", "div.approx.f32", "div.s32", "rem.u32", "abs.s32", "neg.f32", "min.s32", "max.f32",
    "setp.ge.s32", "setp.lt.u32", "setp.eq.f32", "setp.ne.and.s32", "selp.b32", "set.lt.u32.s32", "and.b32", "or.pred",
    "xor.b32", "not.b32", "shl.b32", "shr.s64", "shf.l.wrap.b32", "prmt.b32", "popc.b32", "clz.b32", "brev.b32", "bfe.u32",
    "cvt.rn.f32.s32", "cvt.rzi.s32.f32", "cvt.u64.u32", "cvt.rn.f16.f32", "cvta.to.global.u64", "cvta.shared.u64",
    "ld.param.u64", "ld.global.f32", "ld.global.nc.v4.f32", "ld.shared.u32", "ld.volatile.global.u32", "ld.const.f32",
    "ld.global.L1::no_allocate.b32", "ld.local.u8", "st.global.f32", "st.shared.v2.f32", "st.param.b32", "st.local.u64",
    "atom.global.add.u32", "atom.shared.cas.b32", "atom.global.add.f32", "red.global.add.u32", "bar.sync", "bar.red.popc.u32",
    "membar.gl", "fence.acq_rel.gpu", "shfl.sync.bfly.b32", "shfl.sync.idx.b32", "vote.sync.ballot.b32", "match.any.sync.b32",
    "activemask.b32", "bra", "bra.uni", "ret", "exit", "trap", "brkpt", "tex.2d.v4.f32.s32", "suld.b.2d.v4.b32.trap",
    "sqrt.rn.f32", "rsqrt.approx.f32", "sin.approx.ftz.f32", "ex2.approx.f32", "lg2.approx.f32", "rcp.rn.f64", "testp.finite.f32",
    "copysign.f32", "slct.s32.f32", "isspacep.global", "prefetch.global.L2", "nanosleep.u32", "redux.sync.add.s32",
    "wmma.load.a.sync.aligned.row.m16n16k16.f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "dp4a.u32.u32",
];

fn instruction() -> BoxedStrategy<String> {
    let guard = prop_oneof![
        3 => Just(String::new()),
        1 => pred().prop_map(|p| format!("@{p} ")),
        1 => pred().prop_map(|p| format!("@!{p} ")),
        1 => pred().prop_map(|p| format!("@ ! {p}\t")),
    ];
    let plain = (guard.clone(), pick(OPCODES), prop::collection::vec(operand(), 0..=5), pick(&[" ", "\t", " \t"]))
        .prop_map(|(g, op, ops, sep)| if ops.is_empty() { format!("{g}{op};") } else { format!("{g}{op}{sep}{};", ops.join(", ")) });
    let branch = (guard.clone(), pick(&["bra", "bra.uni"]), label()).prop_map(|(g, op, l)| format!("{g}{op} {l};"));
    let arg = prop_oneof![3 => reg(), 1 => int_lit(), 1 => float_lit()].boxed();
    let args = prop::collection::vec(arg, 0..=4).prop_map(|v| format!("({})", v.join(", ")));
    let call = (guard, pick(&["call", "call.uni"]), prop::option::of(reg()), pick(&["callee_f", "%rd5", "_Z3fooi"]), prop::option::of(args), prop::option::of(Just("proto_1")))
        .prop_map(|(g, op, ret, f, args, proto)| {
            let mut s = format!("{g}{op} ");
            if let Some(r) = ret {
                s.push_str(&format!("({r}), "));
            }
            s.push_str(&f);
            if let Some(a) = args {
                s.push_str(&format!(", {a}"));
            }
            if let Some(p) = proto {
                s.push_str(&format!(", {p}"));
            }
            s.push(';');
            s
        });
    prop_oneof![8 => plain, 2 => branch, 1 => call].boxed()
}

fn ty() -> BoxedStrategy<String> {
    pick(&["b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f16x2", "f32", "f64"])
}

fn reg_decl() -> BoxedStrategy<String> {
    prop_oneof![
        (ty(), pick(&["%r", "%rd", "%f", "%fd", "%rs"]), 1u32..200).prop_map(|(t, p, n)| format!(".reg .{t} \t{p}<{n}>;")),
        (1u32..20).prop_map(|n| format!(".reg .pred \t%p<{n}>;")),
        (ty(), prop::collection::vec("[a-z][a-z0-9_]{0,5}", 1..4)).prop_map(|(t, names)| format!(".reg .{t} {};", names.iter().map(|n| format!("{n}_v")).collect::<Vec<_>>().join(", "))),
        (pick(&["v2", "v4"]), pick(&["f32", "b32", "u16"])).prop_map(|(v, t)| format!(".reg .{v} .{t} vr_v;")),
        (pick(&["local", "shared"]), pick(&["4", "8", "16"]), safe_int_expr()).prop_map(|(sp, a, n)| format!(".{sp} .align {a} .b8 buf_{sp}[{n}];")),
        Just(".param .b32 param0;".to_string()),
        Just(".param .align 8 .b8 param1[16];".to_string()),
    ]
    .boxed()
}

fn comment() -> BoxedStrategy<String> {
    prop_oneof![
        "[ a-zA-Z0-9.,;{}()]{0,20}".prop_map(|s| format!("// {s}\n")),
        "[ a-zA-Z0-9.,;{}()\n]{0,20}".prop_map(|s| format!("/* {s} */")),
    ]
    .boxed()
}

fn statement() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        12 => instruction().prop_map(|i| format!("\t{i}\n")),
        2 => label().prop_map(|l| format!("{l}:\n")),
        3 => reg_decl().prop_map(|d| format!("\t{d}\n")),
        1 => pick(&["\t.pragma \"nounroll\";\n", "\t.pragma \"used_bytes_mask 0xfff\", \"x\";\n"]),
        1 => (1u32..4, 1u32..5000, 0u32..80).prop_map(|(f, l, c)| format!("\t.loc\t{f} {l} {c}\n")),
        1 => (1u32..4, 1u32..5000, 0u32..80).prop_map(|(f, l, c)| format!("\t.loc {f} {l} {c}, function_name $L__info_string0, inlined_at 1 {l} {c}\n")),
        1 => comment(),
        1 => Just("proto_1: .callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _);\n".to_string()),
        1 => Just("proto_2: .callprototype _ () .noreturn;\n".to_string()),
        1 => (label(), label()).prop_map(|(a, b)| format!("ts_1: .branchtargets {a}, {b};\n")),
        1 => (label(), instruction()).prop_map(|(l, i)| format!("{l}: {i}\n")),
    ]
    .boxed();
    leaf.prop_recursive(2, 30, 6, |inner| prop::collection::vec(inner, 0..6).prop_map(|v| format!("\t{{\n{}\t}}\n", v.concat()))).boxed()
}

fn param() -> BoxedStrategy<String> {
    prop_oneof![
        (ty(), "[a-z][a-z0-9_]{0,8}").prop_map(|(t, n)| format!(".param .{t} {n}_p")),
        (pick(&["", ".global", ".shared", ".const"]), pick(&["", "align 4", "align 16"]), "[a-z]{1,5}")
            .prop_map(|(sp, al, n)| format!(".param .u64 .ptr{sp}{} {n}_p", if al.is_empty() { String::new() } else { format!(".{al}") })),
        (pick(&["4", "8", "16"]), 1u32..64, "[a-z]{1,5}").prop_map(|(a, n, nm)| format!(".param .align {a} .b8 {nm}_p[{n}]")),
        (ty(), "[a-z]{1,5}").prop_map(|(t, n)| format!(".reg .{t} {n}_p")),
    ]
    .boxed()
}

fn init() -> BoxedStrategy<String> {
    let leaf = prop_oneof![3 => int_lit(), 1 => float_lit(), 1 => const_expr(true), 1 => Just("generic(arr_g)".to_string()), 1 => Just("arr_g+8".to_string())].boxed();
    leaf.prop_recursive(3, 20, 4, |inner| prop::collection::vec(inner, 0..4).prop_map(|v| format!("{{{}}}", v.join(", ")))).boxed()
}

fn module_item() -> BoxedStrategy<String> {
    let func_name = "[a-z][a-z0-9_]{0,8}".prop_map(|s| format!("fn_{s}"));
    let params = prop::collection::vec(param(), 0..4).prop_map(|v| v.join(",\n\t"));
    let body = prop::collection::vec(statement(), 0..12).prop_map(|v| v.concat());
    let perf = prop::collection::vec(
        pick(&[".maxntid 256, 1, 1", ".maxntid 128", ".reqntid 32, 4", ".maxnreg 32", ".minnctapersm 2", ".maxnctapersm 4", ".noreturn", ".pragma \"nounroll\";"]),
        0..3,
    )
    .prop_map(|v| v.join("\n"));
    let entry = (pick(&["", ".visible ", ".weak ", ".extern "]), func_name.clone(), params.clone(), perf.clone(), body.clone())
        .prop_map(|(l, n, p, perf, b)| if l == ".extern " { format!("{l}.entry {n}(\n\t{p}\n){perf};\n") } else { format!("{l}.entry {n}(\n\t{p}\n)\n{perf}\n{{\n{b}}}\n") });
    let func = (pick(&["", ".visible ", ".weak ", ".extern "]), prop::option::of(param()), func_name, prop::option::of(params), perf, prop::option::of(body))
        .prop_map(|(l, ret, n, p, perf, b)| {
            let mut s = format!("{l}.func ");
            if let Some(r) = ret {
                s.push_str(&format!("({r}) "));
            }
            s.push_str(&n);
            if let Some(p) = p {
                s.push_str(&format!("({p})"));
            }
            s.push_str(&perf);
            match b {
                Some(b) if l != ".extern " => s.push_str(&format!("\n{{\n{b}}}\n")),
                _ => s.push_str(";\n"),
            }
            s
        });
    let var = prop_oneof![
        (pick(&["", ".visible ", ".extern ", ".weak "]), pick(&["global", "const"]), ty(), "[a-z]{1,6}", prop::option::of(init()))
            .prop_map(|(l, sp, t, n, i)| match i {
                Some(i) if l != ".extern " => format!("{l}.{sp} .{t} g_{n} = {i};\n"),
                _ => format!("{l}.{sp} .{t} g_{n};\n"),
            }),
        (pick(&["global", "const"]), pick(&["1", "4", "8"]), 1u32..5, 1u32..4, prop::collection::vec(int_lit(), 0..6))
            .prop_map(|(sp, a, d1, d2, v)| format!(".{sp} .align {a} .u32 g_arr[{d1}][{d2}] = {{{{{}}}}};\n", v.join(", "))),
        Just(".extern .shared .align 16 .b8 dyn_smem[];\n".to_string()),
        Just(".shared .align 4 .b8 smem_g[1024];\n".to_string()),
        Just(".global .texref tex_g;\n".to_string()),
        Just(".const[2] .b32 banked_g;\n".to_string()),
        Just(".global .u32 a_g, b_g = 1, c_g[2] = {1, 2};\n".to_string()),
    ];
    prop_oneof![
        4 => entry,
        3 => func,
        3 => var,
        1 => (1u32..9, "[a-z_]{1,8}").prop_map(|(i, n)| format!(".file {i} \"/src/{n}.cu\"\n")),
        1 => (1u32..9, "[a-z_]{1,8}", any::<u32>(), any::<u32>()).prop_map(|(i, n, t, z)| format!(".file {i} \"{n}.cu\", {t}, {z}\n")),
        1 => Just(".section .debug_str\n{\n$L__info_string0:\n.b8 95\n.b8 0\n}\n".to_string()),
        1 => Just(".pragma \"nounroll\";\n".to_string()),
        1 => Just("@@DWARF .byte 0x00\n".to_string()),
        1 => comment(),
    ]
    .boxed()
}

fn module_text() -> BoxedStrategy<String> {
    let header = (1u32..9, 0u32..9, pick(&["sm_70", "sm_80, texmode_independent", "sm_52, debug", "sm_90a"]), prop::option::of(pick(&["32", "64"])));
    (header, prop::collection::vec(module_item(), 0..8), any::<bool>())
        .prop_map(|((ma, mi, t, a), items, lead)| {
            let mut s = String::new();
            if lead {
                s.push_str("//\n// Generated by a property test\n//\n\n");
            }
            s.push_str(&format!(".version {ma}.{mi}\n.target {t}\n"));
            if let Some(a) = a {
                s.push_str(&format!(".address_size {a}\n"));
            }
            for it in items {
                s.push('\n');
                s.push_str(&it);
            }
            s
        })
        .boxed()
}

/// `PROPTEST_CASES=N` runs more (or fewer) cases than the default.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn generated_ptx_round_trips(text in module_text()) {
        if std::env::var_os("SHOW_PTX").is_some() {
            eprintln!("{text}");
        }
        let (m, errs) = parse_module(&text);
        prop_assert!(errs.is_empty(), "generated text does not parse:\n{}\n--- text ---\n{}", render_all(&errs, "gen.ptx", &text), text);
        let printed = print_module(&m);
        let (m2, errs2) = parse_module(&printed);
        prop_assert!(errs2.is_empty(), "printed text does not parse:\n{}\n--- printed ---\n{}", render_all(&errs2, "printed.ptx", &printed), printed);
        prop_assert_eq!(&m, &m2, "parse(print(parse(text))) != parse(text)\n--- text ---\n{}\n--- printed ---\n{}", text, printed);
        // Printing is a fixed point after one round.
        prop_assert_eq!(printed.clone(), print_module(&m2));
    }
}

// ---------------------------------------------------------------------------------------------
// Constant expression evaluation against a reference implementation of 4.6.4 / Table 5
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum RLit {
    /// value, written with `U`, notation (0 dec, 1 hex, 2 octal, 3 binary)
    Int(u64, bool, u8),
    /// an f64 literal: as `0d` hex, or as decimal text that parses to exactly this value
    F64(f64, bool),
}

#[derive(Clone, Debug)]
enum RExpr {
    Lit(RLit),
    Un(&'static str, Box<RExpr>),
    Bin(&'static str, Box<RExpr>, Box<RExpr>),
    Cond(Box<RExpr>, Box<RExpr>, Box<RExpr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum RVal {
    S(i64),
    U(u64),
    F(f64),
}

fn prec(op: &str) -> u8 {
    match op {
        "*" | "/" | "%" => 10,
        "+" | "-" => 9,
        "<<" | ">>" => 8,
        "<" | ">" | "<=" | ">=" => 7,
        "==" | "!=" => 6,
        "&" => 5,
        "^" => 4,
        "|" => 3,
        "&&" => 2,
        "||" => 1,
        _ => unreachable!(),
    }
}

/// Renders with the fewest parentheses C precedence allows (so the parser's precedence and
/// associativity are what is tested), plus the ones `extra` asks for.
fn render(e: &RExpr, extra: &mut impl Iterator<Item = bool>) -> String {
    let (s, _) = render_p(e, extra);
    s
}

/// Returns the text and its binding strength (11 = primary/unary, 1..10 binary, 0 ternary).
fn render_p(e: &RExpr, extra: &mut impl Iterator<Item = bool>) -> (String, u8) {
    let (s, p) = match e {
        RExpr::Lit(RLit::Int(v, u, n)) => {
            let body = match n {
                1 => format!("0x{v:x}"),
                2 if *v != 0 => format!("0{v:o}"),
                3 => format!("0B{v:b}"),
                _ => format!("{v}"),
            };
            (if *u { format!("{body}U") } else { body }, 11)
        }
        RExpr::Lit(RLit::F64(v, hex)) => (if *hex { format!("0D{:016x}", v.to_bits()) } else { format!("{v:?}") }, 11),
        RExpr::Un(op, a) => {
            let (t, q) = render_p(a, extra);
            let t = if q < 11 { format!("({t})") } else { t };
            // `- -1` and `--1` both read as two negations; a space keeps `!` `~` unambiguous.
            (format!("{op}{t}"), 11)
        }
        RExpr::Bin(op, a, b) => {
            let p = prec(op);
            let (l, lp) = render_p(a, extra);
            let (r, rp) = render_p(b, extra);
            let l = if lp < p { format!("({l})") } else { l };
            let r = if rp <= p { format!("({r})") } else { r };
            (format!("{l} {op} {r}"), p)
        }
        RExpr::Cond(c, a, b) => {
            let (c, cp) = render_p(c, extra);
            let (a, _) = render_p(a, extra);
            let (b, _) = render_p(b, extra);
            let c = if cp == 0 { format!("({c})") } else { c };
            (format!("{c} ? {a} : {b}"), 0)
        }
    };
    if extra.next().unwrap_or(false) {
        (format!("({s})"), 11)
    } else {
        (s, p)
    }
}

fn usual(a: RVal, b: RVal) -> (u64, u64, bool) {
    let bits = |v: RVal| match v {
        RVal::S(x) => x as u64,
        RVal::U(x) => x,
        RVal::F(_) => unreachable!(),
    };
    (bits(a), bits(b), matches!(a, RVal::U(_)) || matches!(b, RVal::U(_)))
}

/// The reference: written from the text of 4.6.4 and Table 5, independently of `eval.rs`.
/// `None` means "not a valid constant expression" (type error or division by zero).
fn reference(e: &RExpr) -> Option<RVal> {
    use RVal::*;
    Some(match e {
        RExpr::Lit(RLit::Int(v, u, _)) => {
            // Signed unless the U suffix is used or the value does not fit .s64.
            if *u || *v > i64::MAX as u64 {
                U(*v)
            } else {
                S(*v as i64)
            }
        }
        RExpr::Lit(RLit::F64(v, _)) => F(*v),
        RExpr::Un(op, a) => {
            let a = reference(a)?;
            match (*op, a) {
                ("+", v) => v,
                ("-", S(x)) => S(0i64.wrapping_sub(x)),
                ("-", U(x)) => U(0u64.wrapping_sub(x)),
                ("-", F(x)) => F(-x),
                ("!", S(x)) => S(if x == 0 { 1 } else { 0 }),
                ("!", U(x)) => S(if x == 0 { 1 } else { 0 }),
                ("~", S(x)) => U(!(x as u64)),
                ("~", U(x)) => U(!x),
                ("(.s64)", S(x)) => S(x),
                ("(.s64)", U(x)) => S(x as i64),
                ("(.u64)", S(x)) => U(x as u64),
                ("(.u64)", U(x)) => U(x),
                _ => return None,
            }
        }
        RExpr::Bin(op, a, b) => {
            let (a, b) = (reference(a)?, reference(b)?);
            if let (F(x), F(y)) = (a, b) {
                let t = |c: bool| S(c as i64);
                return Some(match *op {
                    "+" => F(x + y),
                    "-" => F(x - y),
                    "*" => F(x * y),
                    "/" => F(x / y),
                    "<" => t(x < y),
                    ">" => t(x > y),
                    "<=" => t(x <= y),
                    ">=" => t(x >= y),
                    "==" => t(x == y),
                    "!=" => t(x != y),
                    _ => return None,
                });
            }
            if matches!(a, F(_)) || matches!(b, F(_)) {
                // No conversions between integer and floating point (4.6.3).
                return None;
            }
            let (x, y, uns) = usual(a, b);
            let conv = |v: u64| if uns { U(v) } else { S(v as i64) };
            let t = |c: bool| S(c as i64);
            match *op {
                "+" => conv(x.wrapping_add(y)),
                "-" => conv(x.wrapping_sub(y)),
                "*" => conv(x.wrapping_mul(y)),
                "/" => {
                    if y == 0 {
                        return None;
                    }
                    if uns {
                        U(x / y)
                    } else {
                        S((x as i64).wrapping_div(y as i64))
                    }
                }
                // Remainder interprets both operands as .u64; Table 5: result .s64.
                "%" => {
                    if y == 0 {
                        return None;
                    }
                    S((x % y) as i64)
                }
                // Shifts: second operand as .u64, result has the type of the first; a shift by
                // 64 or more shifts every bit out (sign bits for an arithmetic right shift).
                "<<" => {
                    let v = if y >= 64 { 0 } else { x << y };
                    match a {
                        U(_) => U(v),
                        _ => S(v as i64),
                    }
                }
                ">>" => match a {
                    U(_) => U(if y >= 64 { 0 } else { x >> y }),
                    _ => S(if y >= 64 { (x as i64) >> 63 } else { (x as i64) >> y }),
                },
                "<" => t(if uns { x < y } else { (x as i64) < (y as i64) }),
                ">" => t(if uns { x > y } else { (x as i64) > (y as i64) }),
                "<=" => t(if uns { x <= y } else { (x as i64) <= (y as i64) }),
                ">=" => t(if uns { x >= y } else { (x as i64) >= (y as i64) }),
                "==" => t(x == y),
                "!=" => t(x != y),
                // 4.6.4: the usual conversions, result of the converted type. (Table 5 says
                // .u64 for these; the prose and C agree on the converted type.)
                "&" => conv(x & y),
                "^" => conv(x ^ y),
                "|" => conv(x | y),
                "&&" => t(x != 0 && y != 0),
                "||" => t(x != 0 || y != 0),
                _ => unreachable!(),
            }
        }
        RExpr::Cond(c, a, b) => {
            let c = reference(c)?;
            let cv = match c {
                S(x) => x != 0,
                U(x) => x != 0,
                F(_) => return None,
            };
            let (a, b) = (reference(a)?, reference(b)?);
            match (a, b) {
                (F(_), F(_)) => {
                    if cv {
                        a
                    } else {
                        b
                    }
                }
                (F(_), _) | (_, F(_)) => return None,
                _ => {
                    let (x, y, uns) = usual(a, b);
                    let v = if cv { x } else { y };
                    if uns {
                        U(v)
                    } else {
                        S(v as i64)
                    }
                }
            }
        }
    })
}

fn rlit() -> impl Strategy<Value = RExpr> {
    let int_v = prop_oneof![0u64..8, 0u64..70, Just(63u64), Just(64u64), Just(i64::MAX as u64), Just(1u64 << 63), any::<u64>()];
    prop_oneof![
        6 => (int_v, prop::bool::weighted(0.2), 0u8..4).prop_map(|(v, u, n)| RExpr::Lit(RLit::Int(v, u, n))),
        1 => (any::<f64>(), any::<bool>()).prop_map(|(v, hex)| {
            // Decimal text can only write finite non-negative values.
            let dec_ok = v.is_finite() && v.is_sign_positive();
            RExpr::Lit(RLit::F64(v, hex || !dec_ok))
        }),
        1 => prop_oneof![Just(0.5f64), Just(1.0), Just(2.0), Just(0.0)].prop_map(|v| RExpr::Lit(RLit::F64(v, false))),
    ]
}

fn rexpr() -> impl Strategy<Value = RExpr> {
    rlit().prop_recursive(5, 40, 3, |inner| {
        prop_oneof![
            1 => (proptest::sample::select(&["+", "-", "!", "~", "(.s64)", "(.u64)"][..]), inner.clone()).prop_map(|(op, a)| RExpr::Un(op, Box::new(a))),
            4 => (inner.clone(), proptest::sample::select(&["*", "/", "%", "+", "-", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "^", "|", "&&", "||"][..]), inner.clone())
                .prop_map(|(a, op, b)| RExpr::Bin(op, Box::new(a), Box::new(b))),
            1 => (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| RExpr::Cond(Box::new(c), Box::new(a), Box::new(b))),
        ]
    })
}

fn same(a: eval::Const, b: RVal) -> bool {
    match (a, b) {
        (eval::Const::S64(x), RVal::S(y)) => x == y,
        (eval::Const::U64(x), RVal::U(y)) => x == y,
        (eval::Const::F64(x), RVal::F(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn constant_expressions_follow_4_6_4(e in rexpr(), parens in prop::collection::vec(prop::bool::weighted(0.1), 64)) {
        let text = render(&e, &mut parens.into_iter());
        let src = format!(".version 8.0\n.target sm_70\n.global .s64 x = {text};\n");
        let (m, errs) = parse_module(&src);
        prop_assert!(errs.is_empty(), "{}", render_all(&errs, "expr.ptx", &src));
        let ptxr::syntax::ast::Item::Var(v) = &m.items[0] else { panic!("not a variable") };
        let Some(ptxr::syntax::ast::Init::Expr(pe)) = &v.init else { panic!("no initializer") };
        let got = eval::eval(pe, &|_| None);
        let want = reference(&e);
        match (got, want) {
            (Ok(g), Some(w)) => prop_assert!(same(g, w), "`{}`: eval gives {:?}, reference {:?}", text, g, w),
            (Err(_), None) => {}
            (g, w) => prop_assert!(false, "`{}`: eval gives {:?}, reference {:?}", text, g, w),
        }
        // The printed expression (fully parenthesized) evaluates the same.
        let mut printed = String::new();
        ptxr::syntax::printer::print_expr(&mut printed, pe);
        let src2 = format!(".version 8.0\n.target sm_70\n.global .s64 x = {printed};\n");
        let (m2, errs2) = parse_module(&src2);
        prop_assert!(errs2.is_empty(), "{}", render_all(&errs2, "printed.ptx", &src2));
        prop_assert_eq!(&m.items, &m2.items);
    }
}

/// Fixed cases from the examples of 4.6.4.
#[test]
fn examples_of_4_6_4() {
    let cases: &[(&str, eval::Const)] = &[
        ("42", eval::Const::S64(42)),
        ("0x1234", eval::Const::S64(0x1234)),
        ("0123", eval::Const::S64(0o123)),
        ("0xfabc123400000000", eval::Const::U64(0xfabc123400000000)),
        ("42U", eval::Const::U64(42)),
        ("0x1234U", eval::Const::U64(0x1234)),
        ("+123", eval::Const::S64(123)),
        ("-1", eval::Const::S64(-1)),
        ("-(-42)", eval::Const::S64(42)),
        ("-1U", eval::Const::U64(u64::MAX)),
        ("-0xfabc123400000000", eval::Const::U64(0xfabc123400000000u64.wrapping_neg())),
        ("!5", eval::Const::S64(0)),
        ("~0", eval::Const::U64(u64::MAX)),
        ("-7 % 3", eval::Const::S64(((-7i64) as u64 % 3) as i64)),
        ("-8 >> 1", eval::Const::S64(-4)),
        ("-8U >> 1", eval::Const::U64((-8i64 as u64) >> 1)),
        ("-1 < 0U", eval::Const::S64(0)),
        ("1 ? 2 : 3U", eval::Const::U64(2)),
        ("1 + 2 * 3", eval::Const::S64(7)),
        ("1 << 2 + 1", eval::Const::S64(8)),
        ("10 - 4 - 3", eval::Const::S64(3)),
        ("1 ? 2 : 0 ? 3 : 4", eval::Const::S64(2)),
        ("WARP_SZ * 2", eval::Const::S64(64)),
        ("1.5 * 2.0", eval::Const::F64(3.0)),
    ];
    for (text, want) in cases {
        let src = format!(".version 8.0\n.target sm_70\n.global .s64 x = {text};\n");
        let (m, errs) = parse_module(&src);
        assert!(errs.is_empty(), "{text}: {}", render_all(&errs, "t.ptx", &src));
        let ptxr::syntax::ast::Item::Var(v) = &m.items[0] else { panic!() };
        let Some(ptxr::syntax::ast::Init::Expr(e)) = &v.init else { panic!() };
        assert_eq!(eval::eval(e, &|_| None).unwrap(), *want, "{text}");
    }
    for bad in ["1 / 0", "1 % 0", "1.0 + 1", "~1.5", "1.0 << 2", "1.0 ? 1 : 2", "1 ? 1.0 : 2"] {
        let src = format!(".version 8.0\n.target sm_70\n.global .s64 x = {bad};\n");
        let (m, errs) = parse_module(&src);
        assert!(errs.is_empty(), "{bad}");
        let ptxr::syntax::ast::Item::Var(v) = &m.items[0] else { panic!() };
        let Some(ptxr::syntax::ast::Init::Expr(e)) = &v.init else { panic!() };
        assert!(eval::eval(e, &|_| None).is_err(), "{bad} should not evaluate");
    }
}
