//! A stable-toolchain fuzz smoke test of the front end (the libFuzzer target is in fuzz/).
//!
//! * Mutations of the corpus files (byte edits, token insertions from a PTX dictionary,
//!   deletions, duplications, splices, truncations), with a fixed seed and a fixed number of
//!   iterations: parse, render diagnostics, validate and print must not panic, and when a
//!   mutant parses cleanly, `parse(print(ast)) == ast`.
//! * Pathological inputs (deep nesting, long chains, many errors, long lines): parse time must
//!   grow linearly with the input size.
//!
//! `FUZZ_ITERS=N` runs N mutants instead of the default.

use ptxr::syntax::{diag::render_all, parse_module, printer::print_module, validate::validate};
use std::path::Path;
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const DICT: &[&str] = &[
    "{", "}", ";", "[", "]", "(", ")", ",", "|", "!", "@", "_", ":", "<", ">", "+", "-", "*", "/", "%", "?", "=", "\n", " ", "\t", "/*", "*/",
    "//", "\"", ".", "0f", "0d", "0x", "0f3F800000", "0d3FF0000000000000", "1.5e3", "-4", "4294967296", "18446744073709551615",
    "99999999999999999999", ".reg", ".b32", ".pred", ".param", ".global", ".shared", ".const", ".local", ".entry", ".func", ".visible",
    ".extern", ".version 8.0", ".target sm_70", ".address_size 64", ".align 4", ".v4", ".ptr", ".loc 1 2 3", ".file 1 \"a\"",
    ".section .debug_info {", ".pragma \"nounroll\";", ".callprototype", ".branchtargets", "%r1", "%rd1", "%p1", "%f1", "%tid.x",
    "%r<4>", "$L__BB0_1", "add.s32", "ld.global.f32", "st.param.b32", "call.uni", "bra", "ret;", "mov.u32", "setp.lt.s32", "{%r1, %r2}",
    "[%rd1+-4]", "[%rd1+4]", "%r1|%p1", "generic(", "(.s64)", "(.u64)", "WARP_SZ", "@@DWARF", "#", "\u{0}", "\u{1}", "é", "\u{FFFD}",
];

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().map_or(false, |e| e == "ptx")).collect();
    v.sort();
    v.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(rng: &mut Rng, text: &str, other: &str) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(8) {
        let at = floor_boundary(&s, rng.below(s.len() + 1));
        match rng.below(8) {
            0 | 1 => s.insert_str(at, DICT[rng.below(DICT.len())]),
            2 => {
                let end = floor_boundary(&s, at + rng.below(40));
                s.replace_range(at..end, "");
            }
            3 => {
                let end = floor_boundary(&s, at + rng.below(200));
                let chunk = s[at..end].to_string();
                s.insert_str(at, &chunk);
            }
            4 => {
                let a = floor_boundary(other, rng.below(other.len() + 1));
                let b = floor_boundary(other, a + rng.below(400));
                s.insert_str(at, &other[a..b]);
            }
            5 => s.truncate(at),
            6 => {
                // Replace one ASCII byte by another printable one.
                if at < s.len() && s.as_bytes()[at].is_ascii() {
                    let c = (b' ' + rng.below(95) as u8) as char;
                    s.replace_range(at..at + 1, &c.to_string());
                }
            }
            _ => {
                let tok = DICT[rng.below(DICT.len())];
                let n = 1 + rng.below(64);
                s.insert_str(at, &tok.repeat(n));
            }
        }
    }
    s
}

/// The whole front end on one input; panics (with the input) on a round-trip failure.
fn run_front_end(text: &str) {
    let (m, errs) = parse_module(text);
    let _ = render_all(&errs, "fuzz.ptx", text);
    let verrs = validate(&m);
    let _ = render_all(&verrs, "fuzz.ptx", text);
    let printed = print_module(&m);
    if errs.is_empty() {
        let (m2, errs2) = parse_module(&printed);
        assert!(errs2.is_empty(), "printed text does not parse:\n{}\n--- input ---\n{text}\n--- printed ---\n{printed}", render_all(&errs2, "printed", &printed));
        assert!(m == m2, "parse(print(ast)) != ast\n--- input ---\n{text}\n--- printed ---\n{printed}");
    }
}

#[test]
fn mutated_corpus_never_panics() {
    let files = corpus();
    let iters: usize = std::env::var("FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let mut rng = Rng(0x5EED_0F_F022);
    let start = Instant::now();
    for k in 0..iters {
        let text = &files[rng.below(files.len())];
        let other = &files[rng.below(files.len())];
        let m = mutate(&mut rng, text, other);
        let r = std::panic::catch_unwind(|| run_front_end(&m));
        if let Err(e) = r {
            let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            let out = std::env::temp_dir().join(format!("ptxr-fuzz-crash-{k}.ptx"));
            let _ = std::fs::write(&out, &m);
            panic!("iteration {k}: the front end panicked ({msg}); input written to {}", out.display());
        }
        // Keep the default run short on a loaded machine.
        if std::env::var_os("FUZZ_ITERS").is_none() && start.elapsed() > Duration::from_secs(15) {
            break;
        }
    }
}

fn time_parse(text: &str) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let (m, errs) = parse_module(text);
        let _ = render_all(&errs, "x.ptx", text);
        let _ = validate(&m);
        best = best.min(t.elapsed());
    }
    best
}

#[test]
fn pathological_inputs_parse_in_linear_time() {
    let head = ".version 8.0\n.target sm_70\n.entry k()\n{\n.reg .b32 %r<9>;\n.reg .pred %p<9>;\n";
    let cases: Vec<(&str, Box<dyn Fn(usize) -> String>)> = vec![
        ("nested braces", Box::new(move |n| format!("{head}{}", "{".repeat(n)))),
        ("nested vector operands", Box::new(move |n| format!("{head}mov.b32 %r1, {};\n}}", "{".repeat(n)))),
        ("pair chain", Box::new(move |n| format!("{head}mov.b32 %r1{};\n}}", "|%p1".repeat(n)))),
        ("index chain", Box::new(move |n| format!("{head}mov.b32 %r1, {};\n}}", "a[".repeat(n)))),
        ("nested parens", Box::new(move |n| format!("{head}mov.b32 %r1, {}1;\n}}", "(".repeat(n)))),
        ("unary chain", Box::new(move |n| format!("{head}mov.b32 %r1, {}1;\n}}", "-".repeat(n)))),
        ("long expression", Box::new(move |n| format!("{head}mov.b32 %r1, 1{};\n}}", " + 1 * 2".repeat(n)))),
        ("nested initializer", Box::new(move |n| format!(".version 8.0\n.target sm_70\n.global .b32 x[1] = {};", "{".repeat(n)))),
        ("many statements", Box::new(move |n| format!("{head}{}}}", "add.s32 %r1, %r2, 1;\n".repeat(n)))),
        ("many errors", Box::new(move |n| format!("{head}{}}}", "x;\n".repeat(n)))),
        ("module-level semicolons", Box::new(move |n| format!(".version 8.0\n{}", ";".repeat(n)))),
        ("one long garbage line", Box::new(move |n| format!(".version 8.0\n{}", "@#$`".repeat(n)))),
        ("unterminated strings", Box::new(move |n| format!(".version 8.0\n{}", ".pragma \"x\n".repeat(n)))),
        ("unclosed brackets", Box::new(move |n| format!("{head}{}", "ld.global.u32 %r1, [%rd1;\n".repeat(n)))),
        ("unterminated comment", Box::new(move |n| format!("{head}/*{}", "x ".repeat(n)))),
        ("many globals and functions", Box::new(move |n| (0..n / 8).map(|i| format!(".global .u32 g{i};\n.func f{i}() {{ ret; }}\n")).collect::<String>() + ".version 8.0")),
        ("many nested blocks", Box::new(move |n| format!("{head}{}}}", "{ .reg .b32 x; add.s32 x, x, 1; }\n".repeat(n / 8)))),
        ("many register ranges", Box::new(move |n| format!("{head}{}}}", (0..n / 8).map(|i| format!(".reg .b32 %q{i}_<4>;\nmov.u32 %q{i}_1, 1;\n")).collect::<String>()))),
    ];
    for (name, gen) in &cases {
        // Both sizes are large enough that allocations come from fresh pages (the same cost per
        // byte); a quadratic path shows as x16 for x4 the input.
        let small = gen(8_000);
        let big = gen(32_000);
        let ts = time_parse(&small);
        let tb = time_parse(&big);
        let ratio = tb.as_secs_f64() / ts.as_secs_f64().max(1e-6);
        // 4x the input: allow up to 10x the time (noise on a shared machine) plus a little.
        assert!(tb < ts * 10 + Duration::from_millis(40), "{name}: {} bytes in {ts:?}, {} bytes in {tb:?} (x{ratio:.1}): not linear", small.len(), big.len());
    }
}
