//! Runs every kernel of every corpus file (`tests/corpus/*.{nvrtc,clang}.ptx`) end to end on
//! the CPU through the library API (`ptxr::driver::load` + `Loaded::launch`) and checks the
//! outputs against references written here in Rust from the semantics stated in the header
//! comments of `tests/cuda/*.cu`.
//!
//! * Inputs come from a small deterministic xorshift PRNG (fixed seeds).
//! * Each kernel runs at several launch shapes: blocks that are not a multiple of 32 where the
//!   kernel allows it, `n` that is not a multiple of the block, grids smaller than `n / block`
//!   for grid-stride kernels.
//! * Comparisons are bit-exact unless the result depends on an order the kernel leaves open
//!   (float atomics, matmul/stencil with optional fma contraction, hardware approximations),
//!   where the tolerance is stated next to the check. Where PTX from the compilers contracts
//!   `a*b+c` into `fma`, the reference accepts exactly either the fused or the unfused result.
//! * One `#[test]` per corpus source; inside it every (compiler, kernel, shape) case runs, and
//!   the test fails at the end with the list of every failing case, so one unimplemented
//!   instruction does not hide the state of the other kernels.

mod common;

use ptxr::runtime::{ArgSpec, Dim3, LaunchConfig, Loaded};
use ptxr::syntax::ast::Type;
use std::path::Path;

// ---------------------------------------------------------------------------------- plumbing

use common::Rng;

const VARIANTS: [&str; 2] = ["nvrtc", "clang"];

fn load(stem: &str, variant: &str) -> Result<Loaded, String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/corpus/{stem}.{variant}.ptx"));
    let src = ptxr::SourceFile::load(&path).map_err(|e| format!("{e:#}"))?;
    ptxr::driver::load(&src, 3)
        .map_err(|e| format!("compile failed: {}", first_lines(&format!("{e:#}"), 6)))
}

fn first_lines(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    if v.len() <= n {
        s.to_string()
    } else {
        format!("{}\n  … ({} more lines)", v[..n].join("\n"), v.len() - n)
    }
}

/// Results of one `#[test]`: every case is run, failures are collected and reported together.
struct Report {
    name: &'static str,
    failures: Vec<String>,
    passed: usize,
}

impl Report {
    fn new(name: &'static str) -> Report {
        Report {
            name,
            failures: Vec::new(),
            passed: 0,
        }
    }
    fn case(&mut self, label: String, f: impl FnOnce() -> Result<(), String>) {
        match f() {
            Ok(()) => self.passed += 1,
            Err(e) => {
                eprintln!("FAIL {label}: {e}");
                self.failures.push(format!("{label}: {e}"));
            }
        }
    }
    fn fail(&mut self, label: String, e: String) {
        eprintln!("FAIL {label}: {e}");
        self.failures.push(format!("{label}: {e}"));
    }
    fn finish(self) {
        eprintln!(
            "{}: {} cases passed, {} failed",
            self.name,
            self.passed,
            self.failures.len()
        );
        if !self.failures.is_empty() {
            panic!(
                "{}: {} failing case(s):\n  {}",
                self.name,
                self.failures.len(),
                self.failures.join("\n  ")
            );
        }
    }
}

/// Runs `f` for each compiler's PTX of `stem`, with the module loaded once.
fn for_variants(rep: &mut Report, stem: &str, mut f: impl FnMut(&mut Report, &Loaded, &str)) {
    for v in VARIANTS {
        match load(stem, v) {
            Ok(l) => f(rep, &l, v),
            Err(e) => rep.fail(format!("{stem}.{v}.ptx"), e),
        }
    }
}

fn d1(x: u32) -> Dim3 {
    Dim3(x, 1, 1)
}

fn launch(
    l: &Loaded,
    k: &str,
    grid: Dim3,
    block: Dim3,
    args: &mut [ArgSpec],
) -> Result<(), String> {
    l.launch(
        k,
        &LaunchConfig {
            grid,
            block,
            dyn_smem: 0,
        },
        args,
    )
    .map_err(|e| format!("launch failed: {}", e.0))
}

fn div_up(a: usize, b: usize) -> u32 {
    a.div_ceil(b) as u32
}

trait Pod: Copy {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}
macro_rules! pod {
    ($($t:ty),*) => {$(
        impl Pod for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) }
            fn get(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().unwrap()) }
        }
    )*};
}
pod!(u8, u16, u32, i32, u64, f32, f64);

fn buf<T: Pod>(v: &[T]) -> ArgSpec {
    let mut out = Vec::with_capacity(v.len() * T::SIZE);
    v.iter().for_each(|x| x.put(&mut out));
    ArgSpec::Buffer(out)
}

fn zeros<T: Pod>(n: usize) -> ArgSpec {
    ArgSpec::Buffer(vec![0; (n * T::SIZE).max(1)])
}

fn read<T: Pod>(a: &ArgSpec) -> Vec<T> {
    match a {
        ArgSpec::Buffer(b) => b.chunks_exact(T::SIZE).map(T::get).collect(),
        _ => panic!("not a buffer"),
    }
}

fn s32(v: i64) -> ArgSpec {
    ArgSpec::Scalar(Type::S32, v as i32 as u32 as u64)
}
fn f32a(v: f32) -> ArgSpec {
    ArgSpec::Scalar(Type::F32, v.to_bits() as u64)
}
fn f64a(v: f64) -> ArgSpec {
    ArgSpec::Scalar(Type::F64, v.to_bits())
}

/// Bit-exact comparison of two sequences; reports the first mismatches.
fn exact<T: Copy + PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    want: &[T],
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: length {} != {}", got.len(), want.len()));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if bad.is_empty() {
        return Ok(());
    }
    let show: Vec<String> = bad
        .iter()
        .take(4)
        .map(|&i| format!("[{i}] got {:?} want {:?}", got[i], want[i]))
        .collect();
    Err(format!(
        "{what}: {} of {} differ: {}",
        bad.len(),
        got.len(),
        show.join("; ")
    ))
}

/// Element `i` is accepted when `ok(i)` holds; `show(i)` describes a mismatch.
fn each(
    what: &str,
    n: usize,
    ok: impl Fn(usize) -> bool,
    show: impl Fn(usize) -> String,
) -> Result<(), String> {
    let bad: Vec<usize> = (0..n).filter(|&i| !ok(i)).collect();
    if bad.is_empty() {
        return Ok(());
    }
    let s: Vec<String> = bad
        .iter()
        .take(4)
        .map(|&i| format!("[{i}] {}", show(i)))
        .collect();
    Err(format!(
        "{what}: {} of {} wrong: {}",
        bad.len(),
        n,
        s.join("; ")
    ))
}

/// Same bits, or both NaN.
fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}
fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn all_ok(rs: Vec<Result<(), String>>) -> Result<(), String> {
    let e: Vec<String> = rs.into_iter().filter_map(|r| r.err()).collect();
    if e.is_empty() {
        Ok(())
    } else {
        Err(e.join(" | "))
    }
}

// ---------------------------------------------------------------------- binary16 reference

/// Exact value of a binary16 as `m * 2^-24`.
fn f16_fixed(h: u16) -> i128 {
    let e = ((h >> 10) & 31) as u32;
    let f = (h & 1023) as i128;
    assert!(e != 31, "finite f16 expected");
    let m = if e == 0 { f } else { (1024 + f) << (e - 1) };
    if h & 0x8000 != 0 {
        -m
    } else {
        m
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let e = ((h >> 10) & 31) as i32;
    let f = (h & 1023) as f64;
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    if e == 31 {
        return if f == 0.0 {
            s * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    s * if e == 0 {
        f * 2f64.powi(-24)
    } else {
        (1024.0 + f) * 2f64.powi(e - 25)
    }
}

/// Rounds `m * 2^exp` to binary16, nearest-even, with subnormals and overflow to infinity.
/// `zero` gives the sign of an exact zero (IEEE 754 6.3), as computed by exact f64 arithmetic.
fn round_f16(m: i128, exp: i32, zero: f64) -> u16 {
    if m == 0 {
        return if zero.is_sign_negative() { 0x8000 } else { 0 };
    }
    let sign: u16 = if m < 0 { 0x8000 } else { 0 };
    let m = m.unsigned_abs();
    let top = exp + (127 - m.leading_zeros() as i32); // exponent of the leading bit
    let q = if top < -14 { -24 } else { top - 10 }; // exponent of the last kept bit
    let shift = q - exp;
    let r: u128 = if shift <= 0 {
        m << (-shift)
    } else {
        let r = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && r & 1 == 1) {
            r + 1
        } else {
            r
        }
    };
    let bits: u128 = if top < -14 {
        r
    } else {
        (((top + 15) as u128) << 10) + r - 1024
    };
    sign | bits.min(0x7c00) as u16
}

fn f32_fixed(x: f32) -> (i128, i32) {
    let b = x.to_bits();
    let e = ((b >> 23) & 255) as i32;
    let f = (b & 0x7f_ffff) as i128;
    assert!(e != 255);
    let (m, ex) = if e == 0 {
        (f, -149)
    } else {
        (f + (1 << 23), e - 150)
    };
    (if b >> 31 != 0 { -m } else { m }, ex)
}

fn f32_to_f16(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    if x.is_infinite() {
        return if x < 0.0 { 0xfc00 } else { 0x7c00 };
    }
    let (m, e) = f32_fixed(x);
    round_f16(m, e, x as f64)
}

fn f16_add(a: u16, b: u16) -> u16 {
    round_f16(
        f16_fixed(a) + f16_fixed(b),
        -24,
        f16_to_f64(a) + f16_to_f64(b),
    )
}
fn f16_mul(a: u16, b: u16) -> u16 {
    round_f16(
        f16_fixed(a) * f16_fixed(b),
        -48,
        f16_to_f64(a) * f16_to_f64(b),
    )
}
fn f16_fma(a: u16, b: u16, c: u16) -> u16 {
    let z = f16_to_f64(a).mul_add(f16_to_f64(b), f16_to_f64(c));
    round_f16(f16_fixed(a) * f16_fixed(b) + (f16_fixed(c) << 24), -48, z)
}

/// A random finite binary16 (any exponent, subnormals included).
fn rand_f16(r: &mut Rng) -> u16 {
    loop {
        let h = r.u32() as u16;
        if (h >> 10) & 31 != 31 {
            return h;
        }
    }
}

// ----------------------------------------------------------------------------------- saxpy

#[test]
fn saxpy() {
    let mut rep = Report::new("saxpy");
    for_variants(&mut rep, "saxpy", |rep, l, v| {
        for &(n, block) in &[
            (1000usize, 256u32),
            (1000, 100),
            (37, 32),
            (4097, 1024),
            (5, 1),
        ] {
            rep.case(format!("{v} saxpy n={n} block={block}"), || {
                let mut r = Rng::new(n as u64 + block as u64);
                let x: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
                let y: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
                let a = r.f32(-3.0, 3.0);
                let mut args = [buf(&x), buf(&y), f32a(a), s32(n as i64)];
                launch(
                    l,
                    "saxpy",
                    d1(div_up(n, block as usize)),
                    d1(block),
                    &mut args,
                )?;
                let got: Vec<f32> = read(&args[1]);
                // a*x+y may be contracted to fma.rn.f32: either exact result is accepted.
                each(
                    "y",
                    n,
                    |i| {
                        same_f32(got[i], a.mul_add(x[i], y[i])) || same_f32(got[i], a * x[i] + y[i])
                    },
                    |i| {
                        format!(
                            "got {} want {} (fma) / {}",
                            got[i],
                            a.mul_add(x[i], y[i]),
                            a * x[i] + y[i]
                        )
                    },
                )
            });
        }
    });
    rep.finish();
}

// -------------------------------------------------------------------------- vecadd_gridstride

#[test]
fn vecadd_gridstride() {
    let mut rep = Report::new("vecadd_gridstride");
    for_variants(&mut rep, "vecadd_gridstride", |rep, l, v| {
        for &(n, grid, block) in &[
            (10000usize, 4u32, 96u32),
            (1000, 100, 256),
            (777, 1, 33),
            (1, 1, 1),
            (65536, 16, 1024),
        ] {
            rep.case(
                format!("{v} vec_add n={n} grid={grid} block={block}"),
                || {
                    let mut r = Rng::new(7 + n as u64);
                    let a: Vec<f32> = (0..n).map(|_| r.f32(-1e3, 1e3)).collect();
                    let b: Vec<f32> = (0..n).map(|_| r.f32(-1e3, 1e3)).collect();
                    let mut args = [buf(&a), buf(&b), buf(&vec![f32::NAN; n]), s32(n as i64)];
                    launch(l, "vec_add", d1(grid), d1(block), &mut args)?;
                    let got: Vec<f32> = read(&args[2]);
                    let want: Vec<u32> = (0..n).map(|i| (a[i] + b[i]).to_bits()).collect();
                    exact(
                        "c",
                        &got.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                        &want,
                    )
                },
            );
        }
    });
    rep.finish();
}

// ------------------------------------------------------------------------------ reduce_shared

#[test]
fn reduce_shared() {
    let mut rep = Report::new("reduce_shared");
    for_variants(&mut rep, "reduce_shared", |rep, l, v| {
        // reduce_sum: blockDim a power of two <= 256; ceil(n / 2B) blocks. The tree order is
        // fixed by the kernel, so the reference replays it in f32 and compares bit-exactly.
        for &(n, block) in &[
            (1000usize, 256usize),
            (1000, 16),
            (4099, 128),
            (3, 8),
            (65, 1),
            (513, 64),
        ] {
            rep.case(format!("{v} reduce_sum n={n} block={block}"), || {
                let mut r = Rng::new(11 + n as u64 * 3 + block as u64);
                let x: Vec<f32> = (0..n).map(|_| r.f32(-10.0, 10.0)).collect();
                let grid = n.div_ceil(2 * block);
                let mut args = [buf(&x), buf(&vec![f32::NAN; grid]), s32(n as i64)];
                launch(
                    l,
                    "reduce_sum",
                    d1(grid as u32),
                    d1(block as u32),
                    &mut args,
                )?;
                let got: Vec<f32> = read(&args[1]);
                let want: Vec<f32> = (0..grid)
                    .map(|b| {
                        let mut s: Vec<f32> = (0..block)
                            .map(|t| {
                                let i = b * 2 * block + t;
                                let mut v = 0.0f32;
                                if i < n {
                                    v = x[i];
                                }
                                if i + block < n {
                                    v += x[i + block];
                                }
                                v
                            })
                            .collect();
                        let mut stride = block / 2;
                        while stride > 0 {
                            for t in 0..stride {
                                s[t] += s[t + stride];
                            }
                            stride /= 2;
                        }
                        s[0]
                    })
                    .collect();
                each(
                    "block_sums",
                    grid,
                    |i| same_f32(got[i], want[i]),
                    |i| format!("got {} want {}", got[i], want[i]),
                )?;
                // And the reference itself against an f64 sum.
                let tot: f64 = x.iter().map(|&v| v as f64).sum();
                let g: f64 = want.iter().map(|&v| v as f64).sum();
                assert!(
                    (tot - g).abs() <= 1e-5 * x.iter().map(|v| v.abs() as f64).sum::<f64>() + 1e-6,
                    "reference tree sum {g} vs {tot}"
                );
                Ok(())
            });
        }
        // reduce_sum_atomic: exact integer total (wrapping), any grid.
        for &(n, grid, block) in &[
            (10000usize, 8u32, 128u32),
            (1000, 3, 16),
            (5, 4, 64),
            (100000, 64, 256),
            (50, 7, 1),
            (3000, 1, 256),
        ] {
            rep.case(
                format!("{v} reduce_sum_atomic n={n} grid={grid} block={block}"),
                || {
                    let mut r = Rng::new(13 + n as u64);
                    let x: Vec<i32> = (0..n).map(|_| r.u32() as i32).collect();
                    let want = x.iter().fold(0i32, |a, &b| a.wrapping_add(b));
                    let mut args = [buf(&x), buf(&[0i32]), s32(n as i64)];
                    launch(l, "reduce_sum_atomic", d1(grid), d1(block), &mut args)?;
                    exact("total", &read::<i32>(&args[1]), &[want])
                },
            );
        }
    });
    rep.finish();
}

#[test]
fn reduce_sum_atomic_stress() {
    // Many CTAs add into one word: the total is exact on every run.
    let mut rep = Report::new("reduce_sum_atomic_stress");
    for_variants(&mut rep, "reduce_shared", |rep, l, v| {
        let n = 1usize << 20;
        let mut r = Rng::new(99);
        let x: Vec<i32> = (0..n).map(|_| r.range(-1000, 1000) as i32).collect();
        let want = x.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        for run in 0..3 {
            rep.case(
                format!("{v} reduce_sum_atomic n={n} grid=2048 block=64 run {run}"),
                || {
                    let mut args = [buf(&x), buf(&[0i32]), s32(n as i64)];
                    launch(l, "reduce_sum_atomic", d1(2048), d1(64), &mut args)?;
                    exact("total", &read::<i32>(&args[1]), &[want])
                },
            );
        }
    });
    rep.finish();
}

// -------------------------------------------------------------------------------- warp_reduce

fn warp_shapes() -> &'static [(usize, u32)] {
    // blockDim.x must be a multiple of 32.
    &[(1000, 128), (64, 32), (33, 64), (5000, 1024), (100, 96)]
}

#[test]
fn warp_reduce() {
    let mut rep = Report::new("warp_reduce");
    for_variants(&mut rep, "warp_reduce", |rep, l, v| {
        for &(n, block) in warp_shapes() {
            let grid = div_up(n, block as usize);
            rep.case(format!("{v} warp_reduce_down n={n} block={block}"), || {
                let mut r = Rng::new(17 + n as u64);
                let x: Vec<f32> = (0..n).map(|_| r.f32(-10.0, 10.0)).collect();
                let nw = n.div_ceil(32);
                let mut args = [buf(&x), buf(&vec![f32::NAN; nw]), s32(n as i64)];
                launch(l, "warp_reduce_down", d1(grid), d1(block), &mut args)?;
                let got: Vec<f32> = read(&args[1]);
                // Replay of the shuffle tree (shfl.down with c = 0x1f: lanes whose source
                // would be past lane 31 keep their own value), bit-exact.
                let want: Vec<f32> = (0..nw)
                    .map(|w| {
                        let mut s: Vec<f32> = (0..32)
                            .map(|l| if 32 * w + l < n { x[32 * w + l] } else { 0.0 })
                            .collect();
                        for off in [16, 8, 4, 2, 1] {
                            s = (0..32)
                                .map(|l| s[l] + if l + off < 32 { s[l + off] } else { s[l] })
                                .collect();
                        }
                        s[0]
                    })
                    .collect();
                each(
                    "out",
                    nw,
                    |i| same_f32(got[i], want[i]),
                    |i| format!("got {} want {}", got[i], want[i]),
                )
            });
            rep.case(
                format!("{v} warp_allreduce_xor n={n} block={block}"),
                || {
                    let mut r = Rng::new(19 + n as u64);
                    let x: Vec<i32> = (0..n).map(|_| r.u32() as i32).collect();
                    let mut args = [
                        buf(&x),
                        buf(&vec![0x5a5a5a5ai32; n]),
                        buf(&vec![0x5a5a5a5ai32; n]),
                        s32(n as i64),
                    ];
                    launch(l, "warp_allreduce_xor", d1(grid), d1(block), &mut args)?;
                    let mut ws = vec![0i32; n];
                    let mut wm = vec![0i32; n];
                    for i in 0..n {
                        let g = (i & !31)..((i & !31) + 32).min(n);
                        ws[i] = x[g.clone()].iter().fold(0i32, |a, &b| a.wrapping_add(b));
                        wm[i] = *x[g].iter().max().unwrap();
                    }
                    all_ok(vec![
                        exact("out", &read::<i32>(&args[1]), &ws),
                        exact("out_max", &read::<i32>(&args[2]), &wm),
                    ])
                },
            );
            rep.case(format!("{v} warp_broadcast n={n} block={block}"), || {
                let mut r = Rng::new(23 + n as u64);
                let x: Vec<i32> = (0..n).map(|_| r.u32() as i32).collect();
                let mut args = [buf(&x), buf(&vec![0x5a5a5a5ai32; n]), s32(n as i64)];
                launch(l, "warp_broadcast", d1(grid), d1(block), &mut args)?;
                let val = |j: usize| if j < n { x[j] } else { 0 };
                let want: Vec<i32> = (0..n)
                    .map(|i| val((i & !31) + (x[i] & 31) as usize))
                    .collect();
                exact("out", &read::<i32>(&args[1]), &want)
            });
        }
    });
    rep.finish();
}

// --------------------------------------------------------------------------------- block_scan

#[test]
fn block_scan() {
    let mut rep = Report::new("block_scan");
    for_variants(&mut rep, "block_scan", |rep, l, v| {
        for &(n, block) in &[
            (1000usize, 256u32),
            (100, 32),
            (5000, 1024),
            (70, 64),
            (3000, 992),
        ] {
            rep.case(
                format!("{v} block_inclusive_scan n={n} block={block}"),
                || {
                    let mut r = Rng::new(29 + n as u64 + block as u64);
                    let x: Vec<i32> = (0..n).map(|_| r.u32() as i32).collect();
                    let mut args = [buf(&x), buf(&vec![0x5a5a5a5ai32; n]), s32(n as i64)];
                    launch(
                        l,
                        "block_inclusive_scan",
                        d1(div_up(n, block as usize)),
                        d1(block),
                        &mut args,
                    )?;
                    let b = block as usize;
                    let mut want = vec![0i32; n];
                    for i in 0..n {
                        want[i] = if i % b == 0 {
                            x[i]
                        } else {
                            want[i - 1].wrapping_add(x[i])
                        };
                    }
                    exact("out", &read::<i32>(&args[1]), &want)
                },
            );
        }
    });
    rep.finish();
}

// ------------------------------------------------------------------------------- matmul_tiled

#[test]
fn matmul_tiled() {
    let mut rep = Report::new("matmul_tiled");
    for_variants(&mut rep, "matmul_tiled", |rep, l, v| {
        for &n in &[1usize, 16, 33, 50, 64] {
            rep.case(format!("{v} matmul_tiled n={n}"), || {
                let mut r = Rng::new(31 + n as u64);
                let a: Vec<f32> = (0..n * n).map(|_| r.f32(-1.0, 1.0)).collect();
                let b: Vec<f32> = (0..n * n).map(|_| r.f32(-1.0, 1.0)).collect();
                let g = div_up(n, 16);
                let mut args = [buf(&a), buf(&b), buf(&vec![f32::NAN; n * n]), s32(n as i64)];
                launch(l, "matmul_tiled", Dim3(g, g, 1), Dim3(16, 16, 1), &mut args)?;
                let got: Vec<f32> = read(&args[2]);
                // Accumulation in f32 (optionally fused): |err| <= n * 2^-23 * sum |a||b|.
                let mut want = vec![0f64; n * n];
                let mut mag = vec![0f64; n * n];
                for i in 0..n {
                    for j in 0..n {
                        for k in 0..n {
                            want[i * n + j] += a[i * n + k] as f64 * b[k * n + j] as f64;
                            mag[i * n + j] += (a[i * n + k] as f64 * b[k * n + j] as f64).abs();
                        }
                    }
                }
                each(
                    "C",
                    n * n,
                    |i| {
                        (got[i] as f64 - want[i]).abs()
                            <= (n as f64 + 2.0) * 1.2e-7 * mag[i] + 1e-30
                    },
                    |i| format!("got {} want {}", got[i], want[i]),
                )
            });
        }
    });
    rep.finish();
}

// ---------------------------------------------------------------------------------- wmma_gemm

/// f16 bits of a small integer (|v| <= 2048, exact).
fn f16_of_int(v: i32) -> u16 {
    if v == 0 {
        return 0;
    }
    let (s, m) = (if v < 0 { 0x8000u16 } else { 0 }, v.unsigned_abs());
    assert!(m < 2048);
    let e = 31 - m.leading_zeros(); // m = 1.f * 2^e
    let frac = (m << (10 - e)) & 0x3ff;
    s | ((e + 15) as u16) << 10 | frac as u16
}

#[test]
fn wmma_gemm() {
    let mut rep = Report::new("wmma_gemm");
    // Small integer inputs: every product and partial sum is an exact integer in f16/f32, so
    // any accumulation order gives the exact result, which the references compute in i64.
    for_variants(&mut rep, "wmma_gemm", |rep, l, v| {
        for &(m, n, k, bx, by) in &[(16usize, 16usize, 16usize, 32u32, 1u32), (48, 32, 64, 64, 2), (32, 48, 32, 96, 1)] {
            rep.case(format!("{v} wmma_gemm {m}x{n}x{k} block=({bx},{by})"), || {
                let mut r = Rng::new((m * 7 + n * 3 + k) as u64);
                let ai: Vec<i32> = (0..m * k).map(|_| r.u32() as i32 % 5).collect();
                let bi: Vec<i32> = (0..k * n).map(|_| r.u32() as i32 % 5 - 2).collect();
                let ci: Vec<i32> = (0..m * n).map(|_| r.u32() as i32 % 100).collect();
                let a: Vec<u16> = ai.iter().map(|&x| f16_of_int(x)).collect();
                let b: Vec<u16> = bi.iter().map(|&x| f16_of_int(x)).collect(); // column-major: b[col * k + row]
                let c: Vec<f32> = ci.iter().map(|&x| x as f32).collect();
                let warps_x = (m / 16) as u32;
                let grid = Dim3((warps_x * 32).div_ceil(bx), (n as u32 / 16).div_ceil(by), 1);
                let mut args = [buf(&a), buf(&b), buf(&c), s32(m as i64), s32(n as i64), s32(k as i64)];
                launch(l, "wmma_gemm", grid, Dim3(bx, by, 1), &mut args)?;
                let got: Vec<f32> = read(&args[2]);
                let want: Vec<f32> = (0..m * n)
                    .map(|idx| {
                        let (i, j) = (idx / n, idx % n);
                        (ci[idx] as i64 + (0..k).map(|kk| ai[i * k + kk] as i64 * bi[j * k + kk] as i64).sum::<i64>()) as f32
                    })
                    .collect();
                exact("C", &got, &want)
            });
        }
        for &(m, n, k) in &[(32usize, 8usize, 16usize), (64, 24, 48)] {
            rep.case(format!("{v} wmma_gemm_h {m}x{n}x{k}"), || {
                let mut r = Rng::new((m + n * 5 + k * 11) as u64);
                let ai: Vec<i32> = (0..m * k).map(|_| r.u32() as i32 % 7 - 3).collect();
                let bi: Vec<i32> = (0..k * n).map(|_| r.u32() as i32 % 7 - 3).collect();
                let a: Vec<u16> = ai.iter().map(|&x| f16_of_int(x)).collect();
                let b: Vec<u16> = bi.iter().map(|&x| f16_of_int(x)).collect(); // row-major
                let mut args = [buf(&a), buf(&b), zeros::<u16>(m * n), s32(m as i64), s32(n as i64), s32(k as i64)];
                launch(l, "wmma_gemm_h", Dim3((m / 32) as u32, (n / 8) as u32, 1), d1(32), &mut args)?;
                let got: Vec<u16> = read(&args[2]);
                let want: Vec<u16> = (0..m * n)
                    .map(|idx| {
                        let (i, j) = (idx / n, idx % n);
                        f16_of_int((0..k).map(|kk| ai[i * k + kk] * bi[kk * n + j]).sum())
                    })
                    .collect();
                exact("D", &got, &want)
            });
        }
    });
    rep.finish();
}

// ---------------------------------------------------------------------------------- histogram

fn hist_ref(data: &[u8]) -> Vec<u32> {
    let mut h = vec![0u32; 256];
    data.iter().for_each(|&b| h[b as usize] += 1);
    h
}

#[test]
fn histogram() {
    let mut rep = Report::new("histogram");
    for_variants(&mut rep, "histogram", |rep, l, v| {
        for &(n, grid, block) in &[
            (10000usize, 4u32, 256u32),
            (1000, 3, 100),
            (777, 1, 1000),
            (5, 2, 64),
            (300, 2, 48),
            (100000, 37, 1),
        ] {
            rep.case(
                format!("{v} histogram256 n={n} grid={grid} block={block}"),
                || {
                    let mut r = Rng::new(37 + n as u64);
                    let data: Vec<u8> = (0..n)
                        .map(|_| (r.u32() % 251) as u8 ^ (r.u32() & 4) as u8)
                        .collect();
                    let mut args = [buf(&data), zeros::<u32>(256), s32(n as i64)];
                    launch(l, "histogram256", d1(grid), d1(block), &mut args)?;
                    exact("bins", &read::<u32>(&args[1]), &hist_ref(&data))
                },
            );
        }
    });
    rep.finish();
}

#[test]
fn histogram_stress() {
    // Heavy contention: every byte equal, so every shared and global atomic hits one bin.
    let mut rep = Report::new("histogram_stress");
    for_variants(&mut rep, "histogram", |rep, l, v| {
        let n = 1usize << 21;
        let data = vec![0xabu8; n];
        let want = hist_ref(&data);
        for run in 0..3 {
            rep.case(
                format!("{v} histogram256 all-equal n={n} grid=1024 block=256 run {run}"),
                || {
                    let mut args = [buf(&data), zeros::<u32>(256), s32(n as i64)];
                    launch(l, "histogram256", d1(1024), d1(256), &mut args)?;
                    exact("bins", &read::<u32>(&args[1]), &want)
                },
            );
        }
    });
    rep.finish();
}

// ---------------------------------------------------------------------------------- transpose

#[test]
fn transpose() {
    let mut rep = Report::new("transpose");
    for_variants(&mut rep, "transpose", |rep, l, v| {
        for &(rows, cols) in &[(32usize, 32usize), (33, 70), (100, 1), (1, 65), (64, 96)] {
            rep.case(format!("{v} transpose {rows}x{cols}"), || {
                let mut r = Rng::new(41 + rows as u64 * 1000 + cols as u64);
                let x: Vec<u32> = (0..rows * cols).map(|_| r.u32()).collect();
                let mut args = [
                    buf(&x),
                    buf(&vec![0xdeadbeefu32; rows * cols]),
                    s32(rows as i64),
                    s32(cols as i64),
                ];
                launch(
                    l,
                    "transpose",
                    Dim3(div_up(cols, 32), div_up(rows, 32), 1),
                    Dim3(32, 8, 1),
                    &mut args,
                )?;
                let mut want = vec![0u32; rows * cols];
                for rr in 0..rows {
                    for c in 0..cols {
                        want[c * rows + rr] = x[rr * cols + c];
                    }
                }
                exact("out", &read::<u32>(&args[1]), &want)
            });
        }
    });
    rep.finish();
}

// ---------------------------------------------------------------------------------- stencils

#[test]
fn stencil1d() {
    let mut rep = Report::new("stencil1d");
    for_variants(&mut rep, "stencil1d", |rep, l, v| {
        // blockDim.x <= 256 and >= RADIUS (the halo is loaded by threads 0 and 1).
        for &(n, block) in &[
            (1000usize, 256u32),
            (1000, 100),
            (37, 32),
            (5, 2),
            (300, 48),
        ] {
            rep.case(format!("{v} stencil1d n={n} block={block}"), || {
                let mut r = Rng::new(43 + n as u64 + block as u64);
                let x: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
                let mut args = [buf(&x), buf(&vec![f32::NAN; n]), s32(n as i64)];
                launch(
                    l,
                    "stencil1d",
                    d1(div_up(n, block as usize)),
                    d1(block),
                    &mut args,
                )?;
                let got: Vec<f32> = read(&args[1]);
                let w = [0.0625f64, 0.25, 0.375, 0.25, 0.0625];
                let at = |j: i64| {
                    if j >= 0 && (j as usize) < n {
                        x[j as usize] as f64
                    } else {
                        0.0
                    }
                };
                // Five f32 steps (possibly fused): |err| <= 5 * 2^-24 * sum |w_k s_k|.
                each(
                    "out",
                    n,
                    |i| {
                        let (mut s, mut m) = (0.0, 0.0);
                        for k in 0..5 {
                            s += w[k] * at(i as i64 + k as i64 - 2);
                            m += (w[k] * at(i as i64 + k as i64 - 2)).abs();
                        }
                        (got[i] as f64 - s).abs() <= 6.0 * 6e-8 * m
                    },
                    |i| format!("got {}", got[i]),
                )
            });
        }
    });
    rep.finish();
}

fn stencil2d_ref(x: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut o = vec![0f32; w * h];
    for y in 0..h {
        for xx in 0..w {
            let i = y * w + xx;
            o[i] = if xx == 0 || y == 0 || xx == w - 1 || y == h - 1 {
                x[i]
            } else {
                0.25f32 * (x[i - 1] + x[i + 1] + x[i - w] + x[i + w])
            };
        }
    }
    o
}

#[test]
fn stencil2d() {
    let mut rep = Report::new("stencil2d");
    for_variants(&mut rep, "stencil2d", |rep, l, v| {
        for &(w, h, bx, by) in &[
            (64usize, 64usize, 16u32, 16u32),
            (37, 23, 8, 4),
            (100, 3, 13, 7),
            (1, 1, 1, 1),
            (5, 40, 32, 2),
        ] {
            rep.case(format!("{v} stencil2d {w}x{h} block=({bx},{by})"), || {
                let mut r = Rng::new(47 + (w * h) as u64);
                let x: Vec<f32> = (0..w * h).map(|_| r.f32(-50.0, 50.0)).collect();
                let mut args = [
                    buf(&x),
                    buf(&vec![f32::NAN; w * h]),
                    s32(w as i64),
                    s32(h as i64),
                ];
                launch(
                    l,
                    "stencil2d",
                    Dim3(div_up(w, bx as usize), div_up(h, by as usize), 1),
                    Dim3(bx, by, 1),
                    &mut args,
                )?;
                let bits = |v: Vec<f32>| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                exact(
                    "out",
                    &bits(read::<f32>(&args[1])),
                    &bits(stencil2d_ref(&x, w, h)),
                )
            });
        }
    });
    rep.finish();
}

// ------------------------------------------------------------------------------- bitonic_sort

#[test]
fn bitonic_sort() {
    let mut rep = Report::new("bitonic_sort");
    for_variants(&mut rep, "bitonic_sort", |rep, l, v| {
        for &(n, block) in &[
            (1000usize, 256u32),
            (1000, 16),
            (4096, 1024),
            (33, 64),
            (5, 1),
            (3000, 512),
        ] {
            rep.case(
                format!("{v} bitonic_sort_block n={n} block={block}"),
                || {
                    let mut r = Rng::new(53 + n as u64 + block as u64);
                    let x: Vec<i32> = (0..n)
                        .map(|k| match k % 17 {
                            0 => i32::MAX,
                            1 => i32::MIN,
                            2 => 7,
                            _ => r.u32() as i32,
                        })
                        .collect();
                    let mut args = [buf(&x), s32(n as i64)];
                    launch(
                        l,
                        "bitonic_sort_block",
                        d1(div_up(n, block as usize)),
                        d1(block),
                        &mut args,
                    )?;
                    let mut want = x.clone();
                    want.chunks_mut(block as usize).for_each(|c| c.sort());
                    exact("data", &read::<i32>(&args[0]), &want)
                },
            );
        }
    });
    rep.finish();
}

// ---------------------------------------------------------------------------------- warp_vote

#[test]
fn warp_vote() {
    let mut rep = Report::new("warp_vote");
    for_variants(&mut rep, "warp_vote", |rep, l, v| {
        for &(n, block) in &[
            (1000usize, 128u32),
            (50, 64),
            (32, 32),
            (100, 1024),
            (200, 96),
        ] {
            rep.case(format!("{v} warp_vote n={n} block={block}"), || {
                let mut r = Rng::new(59 + n as u64);
                // Small values (many matches, mixed signs); every third warp all positive.
                let x: Vec<i32> = (0..n)
                    .map(|i| {
                        if (i / 32) % 3 == 0 {
                            r.range(1, 4) as i32
                        } else {
                            r.range(-3, 4) as i32
                        }
                    })
                    .collect();
                let total = div_up(n, block as usize) as usize * block as usize;
                let mut args = [buf(&x), buf(&vec![0xdeadbeefu32; 5 * total]), s32(n as i64)];
                launch(
                    l,
                    "warp_vote",
                    d1(div_up(n, block as usize)),
                    d1(block),
                    &mut args,
                )?;
                let p = |j: usize| j < n && x[j] > 0;
                let val = |j: usize| if j < n { x[j] } else { -1 };
                let mut want = vec![0u32; 5 * n];
                for i in 0..n {
                    let w = i & !31;
                    let ballot = (0..32).filter(|&l| p(w + l)).fold(0u32, |m, l| m | 1 << l);
                    want[5 * i] = ballot;
                    want[5 * i + 1] = (ballot == u32::MAX) as u32;
                    want[5 * i + 2] = (ballot != 0) as u32;
                    want[5 * i + 3] = (0..32)
                        .filter(|&l| val(w + l) == val(i))
                        .fold(0u32, |m, l| m | 1 << l);
                    want[5 * i + 4] = (0..32).filter(|&l| w + l < n).fold(0u32, |m, l| m | 1 << l);
                }
                let got = read::<u32>(&args[1]);
                all_ok(vec![
                    exact("out", &got[..5 * n], &want),
                    exact(
                        "out[5n..] (must stay untouched)",
                        &got[5 * n..],
                        &vec![0xdeadbeef; 5 * (total - n)],
                    ),
                ])
            });
        }
        // __syncthreads_count: any block size (48: a partial last warp; 1000; 1).
        for &(n, block) in &[
            (1000usize, 128u32),
            (100, 48),
            (1000, 1000),
            (7, 1),
            (500, 33),
        ] {
            rep.case(
                format!("{v} block_count_positive n={n} block={block}"),
                || {
                    let mut r = Rng::new(61 + n as u64 + block as u64);
                    let x: Vec<i32> = (0..n).map(|_| r.range(-5, 5) as i32).collect();
                    // The output is padded to grid*block elements so that a store by a thread with
                    // i >= n is detected (and does not corrupt the heap of the test process).
                    let total = div_up(n, block as usize) as usize * block as usize;
                    let mut args = [buf(&x), buf(&vec![-7i32; total]), s32(n as i64)];
                    launch(
                        l,
                        "block_count_positive",
                        d1(div_up(n, block as usize)),
                        d1(block),
                        &mut args,
                    )?;
                    let b = block as usize;
                    let want: Vec<i32> = (0..n)
                        .map(|i| {
                            let s = i / b * b;
                            (s..(s + b).min(n)).filter(|&j| x[j] > 0).count() as i32
                        })
                        .collect();
                    let got = read::<i32>(&args[1]);
                    all_ok(vec![
                        exact("out", &got[..n], &want),
                        exact(
                            "out[n..grid*block] (must stay untouched)",
                            &got[n..],
                            &vec![-7; total - n],
                        ),
                    ])
                },
            );
        }
    });
    rep.finish();
}

// ----------------------------------------------------------------------------------- f16_math

#[test]
fn f16_math() {
    let mut rep = Report::new("f16_math");
    for_variants(&mut rep, "f16_math", |rep, l, v| {
        for &(n, block) in &[(1000usize, 128u32), (100, 48), (1, 1), (4000, 1000)] {
            let grid = div_up(n, block as usize);
            let mut r = Rng::new(67 + n as u64);
            let a: Vec<u16> = (0..n).map(|_| rand_f16(&mut r)).collect();
            let b: Vec<u16> = (0..n).map(|_| rand_f16(&mut r)).collect();
            let c: Vec<u16> = (0..n).map(|_| rand_f16(&mut r)).collect();
            rep.case(format!("{v} f16_ops n={n} block={block}"), || {
                let mut args = [
                    buf(&a),
                    buf(&b),
                    buf(&c),
                    buf(&vec![0xffffu16; 4 * n]),
                    s32(n as i64),
                ];
                launch(l, "f16_ops", d1(grid), d1(block), &mut args)?;
                let mut want = vec![0u16; 4 * n];
                for i in 0..n {
                    want[4 * i] = f16_add(a[i], b[i]);
                    want[4 * i + 1] = f16_mul(a[i], b[i]);
                    want[4 * i + 2] = f16_fma(a[i], b[i], c[i]);
                    want[4 * i + 3] = if f16_to_f64(a[i]) > f16_to_f64(b[i]) {
                        a[i]
                    } else {
                        b[i]
                    };
                }
                exact("out", &read::<u16>(&args[3]), &want)
            });
            // f16x2: n pairs; element 0 in the low half.
            let alpha = r.f32(-4.0, 4.0);
            let pack = |lo: u16, hi: u16| lo as u32 | (hi as u32) << 16;
            let a2: Vec<u32> = (0..n).map(|i| pack(a[i], c[n - 1 - i])).collect();
            let b2: Vec<u32> = (0..n).map(|i| pack(b[i], a[n - 1 - i])).collect();
            let c2: Vec<u32> = (0..n).map(|i| pack(c[i], b[n - 1 - i])).collect();
            rep.case(format!("{v} f16x2_ops n={n} block={block}"), || {
                let mut args = [
                    buf(&a2),
                    buf(&b2),
                    buf(&c2),
                    buf(&vec![0xffffffffu32; 3 * n]),
                    s32(n as i64),
                ];
                launch(l, "f16x2_ops", d1(grid), d1(block), &mut args)?;
                let lane = |x: u32, k: u32| (x >> (16 * k)) as u16;
                let mut want = vec![0u32; 3 * n];
                for i in 0..n {
                    let (x, y, z) = (a2[i], b2[i], c2[i]);
                    want[3 * i] = pack(
                        f16_add(lane(x, 0), lane(y, 0)),
                        f16_add(lane(x, 1), lane(y, 1)),
                    );
                    want[3 * i + 1] = pack(
                        f16_mul(lane(x, 0), lane(y, 0)),
                        f16_mul(lane(x, 1), lane(y, 1)),
                    );
                    want[3 * i + 2] = pack(
                        f16_fma(lane(x, 0), lane(y, 0), lane(z, 0)),
                        f16_fma(lane(x, 1), lane(y, 1), lane(z, 1)),
                    );
                }
                exact("out", &read::<u32>(&args[3]), &want)
            });
            rep.case(format!("{v} f16_axpy n={n} block={block}"), || {
                let mut args = [buf(&a), buf(&b), f32a(alpha), s32(n as i64)];
                launch(l, "f16_axpy", d1(grid), d1(block), &mut args)?;
                let got: Vec<u16> = read(&args[1]);
                // alpha * f32(x) + f32(y) in f32 (fused or not), then cvt.rn.f16.f32.
                each(
                    "y",
                    n,
                    |i| {
                        let (x, y) = (f16_to_f64(a[i]) as f32, f16_to_f64(b[i]) as f32);
                        got[i] == f32_to_f16(alpha.mul_add(x, y))
                            || got[i] == f32_to_f16(alpha * x + y)
                    },
                    |i| {
                        format!(
                            "got {:#06x} want {:#06x}",
                            got[i],
                            f32_to_f16(
                                alpha.mul_add(f16_to_f64(a[i]) as f32, f16_to_f64(b[i]) as f32)
                            )
                        )
                    },
                )
            });
        }
    });
    rep.finish();
}

// ----------------------------------------------------------------------------------- f64_math

#[test]
fn f64_math() {
    let mut rep = Report::new("f64_math");
    for_variants(&mut rep, "f64_math", |rep, l, v| {
        for &(n, block) in &[(1000usize, 128u32), (100, 48), (1, 1), (3001, 1024)] {
            let grid = div_up(n, block as usize);
            rep.case(format!("{v} daxpy n={n} block={block}"), || {
                let mut r = Rng::new(71 + n as u64);
                let x: Vec<f64> = (0..n).map(|_| r.f64(-1e3, 1e3)).collect();
                let y: Vec<f64> = (0..n).map(|_| r.f64(-1e3, 1e3)).collect();
                let a = r.f64(-3.0, 3.0);
                let mut args = [buf(&x), buf(&y), f64a(a), s32(n as i64)];
                launch(l, "daxpy", d1(grid), d1(block), &mut args)?;
                let got: Vec<f64> = read(&args[1]);
                each(
                    "y",
                    n,
                    |i| {
                        same_f64(got[i], a.mul_add(x[i], y[i])) || same_f64(got[i], a * x[i] + y[i])
                    },
                    |i| format!("got {} want {}", got[i], a.mul_add(x[i], y[i])),
                )
            });
            rep.case(format!("{v} f64_ops n={n} block={block}"), || {
                let mut r = Rng::new(73 + n as u64);
                let specials = [
                    0.0, -0.0, 1.0, -1.0, 1e-300, -2.5e-3, 0.0005, -0.0015, 9.2e15,
                ];
                let x: Vec<f64> = (0..n)
                    .map(|i| {
                        if i < specials.len() {
                            specials[i]
                        } else {
                            r.f64(-1e6, 1e6) * if i % 3 == 0 { 1e-6 } else { 1.0 }
                        }
                    })
                    .collect();
                let mut args = [buf(&x), buf(&vec![f64::NAN; 4 * n]), s32(n as i64)];
                launch(l, "f64_ops", d1(grid), d1(block), &mut args)?;
                let got: Vec<f64> = read(&args[1]);
                let mut want = vec![0f64; 4 * n];
                for i in 0..n {
                    let v = x[i];
                    want[4 * i] = v.abs().sqrt();
                    want[4 * i + 1] = v.mul_add(v, -1.0);
                    want[4 * i + 2] = v / (v.abs() + 1.0);
                    want[4 * i + 3] = ((v * 1000.0) as i64) as f64;
                }
                each(
                    "out",
                    4 * n,
                    |i| same_f64(got[i], want[i]),
                    |i| {
                        format!(
                            "x={} k={} got {:e} want {:e}",
                            x[i / 4],
                            i % 4,
                            got[i],
                            want[i]
                        )
                    },
                )
            });
        }
        // ddot: blockDim a power of two <= 256; double atomics in any order: tolerance
        // |err| <= 4 * n * 2^-53 * sum |x_i y_i|.
        for &(n, grid, block) in &[
            (10000usize, 8u32, 128u32),
            (1000, 3, 16),
            (5, 4, 64),
            (1, 1, 1),
            (100000, 64, 256),
        ] {
            rep.case(format!("{v} ddot n={n} grid={grid} block={block}"), || {
                let mut r = Rng::new(79 + n as u64);
                let x: Vec<f64> = (0..n).map(|_| r.f64(-1.0, 1.0)).collect();
                let y: Vec<f64> = (0..n).map(|_| r.f64(-1.0, 1.0)).collect();
                let mut args = [buf(&x), buf(&y), buf(&[0f64]), s32(n as i64)];
                launch(l, "ddot", d1(grid), d1(block), &mut args)?;
                let got = read::<f64>(&args[2])[0];
                let want: f64 = (0..n).map(|i| x[i] * y[i]).sum();
                let mag: f64 = (0..n).map(|i| (x[i] * y[i]).abs()).sum();
                if (got - want).abs() <= 4.0 * n as f64 * 1.2e-16 * mag {
                    Ok(())
                } else {
                    Err(format!("got {got} want {want}"))
                }
            });
        }
    });
    rep.finish();
}

// ------------------------------------------------------------------------------- device_calls

fn collatz(mut x: u32, limit: i32) -> i32 {
    let mut s = 0;
    while x != 1 && s < limit {
        x = if x & 1 == 1 {
            x.wrapping_mul(3).wrapping_add(1)
        } else {
            x >> 1
        };
        s += 1;
    }
    s
}

fn gcd(a: i32, b: i32) -> i32 {
    let mut a = if a < 0 { a.wrapping_neg() } else { a };
    let mut b = if b < 0 { b.wrapping_neg() } else { b };
    while b != 0 {
        let t = a.wrapping_rem(b);
        a = b;
        b = t;
    }
    a
}

#[test]
fn device_calls() {
    let mut rep = Report::new("device_calls");
    for_variants(&mut rep, "device_calls", |rep, l, v| {
        for &(n, block) in &[(1000usize, 128u32), (100, 48), (1, 1), (3001, 1024)] {
            let grid = div_up(n, block as usize);
            rep.case(format!("{v} device_calls n={n} block={block}"), || {
                let mut r = Rng::new(83 + n as u64);
                let x: Vec<i32> = (0..n)
                    .map(|i| match i {
                        0 => 0,
                        1 => i32::MIN,
                        2 => -360,
                        3 => 0xffff,
                        _ => r.u32() as i32,
                    })
                    .collect();
                let mut args = [buf(&x), buf(&vec![-1i32; n]), s32(n as i64)];
                launch(l, "device_calls", d1(grid), d1(block), &mut args)?;
                let want: Vec<i32> = x
                    .iter()
                    .map(|&v| {
                        collatz((v & 0xffff) as u32 + 1, 500)
                            .wrapping_mul(1000)
                            .wrapping_add(gcd(v, 360))
                    })
                    .collect();
                exact("out", &read::<i32>(&args[1]), &want)
            });
            for deg in [0usize, 5, 8] {
                rep.case(
                    format!("{v} poly_eval n={n} block={block} deg={deg}"),
                    || {
                        let mut r = Rng::new(89 + n as u64 + deg as u64);
                        let x: Vec<f32> = (0..n).map(|_| r.f32(-2.0, 2.0)).collect();
                        let co: Vec<f32> = (0..=deg).map(|_| r.f32(-1.0, 1.0)).collect();
                        let mut args = [
                            buf(&x),
                            buf(&co),
                            buf(&vec![f32::NAN; n]),
                            s32(deg as i64),
                            s32(n as i64),
                        ];
                        launch(l, "poly_eval", d1(grid), d1(block), &mut args)?;
                        let got: Vec<f32> = read(&args[2]);
                        let horner = |x: f32, fused: bool| {
                            let mut acc = co[deg];
                            for k in (0..deg).rev() {
                                acc = if fused {
                                    acc.mul_add(x, co[k])
                                } else {
                                    acc * x + co[k]
                                };
                            }
                            acc
                        };
                        // Contracted (fma each step) or not: either exact chain is accepted.
                        each(
                            "out",
                            n,
                            |i| {
                                same_f32(got[i], horner(x[i], true))
                                    || same_f32(got[i], horner(x[i], false))
                            },
                            |i| {
                                format!(
                                    "got {} want {} (fma) / {}",
                                    got[i],
                                    horner(x[i], true),
                                    horner(x[i], false)
                                )
                            },
                        )
                    },
                );
            }
        }
    });
    rep.finish();
}

// ------------------------------------------------------------------------------------ int_ops

fn int_ops_ref(x: u32, y: u32) -> ([u32; 10], u64) {
    let wide = (y as u64) << 32 | x as u64;
    let s = y & 0x7777;
    let bytes = wide.to_le_bytes();
    let perm = (0..4).fold(0u32, |acc, m| {
        acc | (bytes[((s >> (4 * m)) & 7) as usize] as u32) << (8 * m)
    });
    let d = (y | 1) as i32;
    let o = [
        x.count_ones(),
        x.leading_zeros(),
        x.reverse_bits(),
        perm,
        ((wide << (y & 31)) >> 32) as u32,
        ((x as u64 * y as u64) >> 32) as u32,
        (x as i32).wrapping_div(d) as u32,
        (x as i32).wrapping_rem(d) as u32,
        ((x as i32) >> (y & 31)) as u32,
        ((x as i32 as i64 * y as i32 as i64) >> 32) as u32,
    ];
    (
        o,
        wide.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(x as u64 * y as u64),
    )
}

#[test]
fn int_ops() {
    let mut rep = Report::new("int_ops");
    for_variants(&mut rep, "int_ops", |rep, l, v| {
        for &(n, block) in &[(1000usize, 128u32), (100, 48), (1, 1), (3001, 1024)] {
            rep.case(format!("{v} int_ops n={n} block={block}"), || {
                let mut r = Rng::new(97 + n as u64);
                let sp = [0u32, 1, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff, 0x1234_5678];
                let mut a: Vec<u32> = (0..n)
                    .map(|i| if i < 36 { sp[i % 6] } else { r.u32() })
                    .collect();
                let b: Vec<u32> = (0..n)
                    .map(|i| {
                        if i < 36 {
                            sp[i / 6 % 6]
                        } else if i % 5 == 0 {
                            r.u32() & 0x3f
                        } else {
                            r.u32()
                        }
                    })
                    .collect();
                // INT_MIN / -1 is unspecified: avoid it.
                for i in 0..n {
                    if a[i] == 0x8000_0000 && b[i] | 1 == 0xffff_ffff {
                        a[i] = 0x8000_0001;
                    }
                }
                let mut args = [
                    buf(&a),
                    buf(&b),
                    buf(&vec![0xdeadbeefu32; 10 * n]),
                    buf(&vec![0u64; n]),
                    s32(n as i64),
                ];
                launch(
                    l,
                    "int_ops",
                    d1(div_up(n, block as usize)),
                    d1(block),
                    &mut args,
                )?;
                let got: Vec<u32> = read(&args[2]);
                let got64: Vec<u64> = read(&args[3]);
                let mut want = vec![0u32; 10 * n];
                let mut want64 = vec![0u64; n];
                for i in 0..n {
                    let (o, w) = int_ops_ref(a[i], b[i]);
                    want[10 * i..10 * i + 10].copy_from_slice(&o);
                    want64[i] = w;
                }
                let names = [
                    "popc",
                    "clz",
                    "brev",
                    "byte_perm",
                    "funnelshift_l",
                    "umulhi",
                    "div",
                    "rem",
                    "shr.s32",
                    "mulhi.s32",
                ];
                let mut errs: Vec<Result<(), String>> = (0..10)
                    .map(|k| {
                        let g: Vec<u32> = (0..n).map(|i| got[10 * i + k]).collect();
                        let w: Vec<u32> = (0..n).map(|i| want[10 * i + k]).collect();
                        exact(&format!("out k={k} ({})", names[k]), &g, &w).map_err(|e| {
                            format!(
                                "{e} (inputs of first: x={:#x} y={:#x})",
                                a[(0..n).find(|&i| g[i] != w[i]).unwrap()],
                                b[(0..n).find(|&i| g[i] != w[i]).unwrap()]
                            )
                        })
                    })
                    .collect();
                errs.push(exact("out64", &got64, &want64));
                all_ok(errs)
            });
        }
    });
    rep.finish();
}

// --------------------------------------------------------------------------------- float_math

/// The f32 constant both compilers multiply by before `ex2.approx` (0f3FB8AA3B).
const LOG2E_F32: f32 = f32::from_bits(0x3FB8_AA3B);

#[test]
fn float_math() {
    let mut rep = Report::new("float_math");
    for_variants(&mut rep, "float_math", |rep, l, v| {
        for &(n, block) in &[(1000usize, 128u32), (100, 48), (1, 1), (3001, 1024)] {
            let grid = div_up(n, block as usize);
            rep.case(format!("{v} float_math n={n} block={block}"), || {
                let mut r = Rng::new(101 + n as u64);
                let sp = [
                    0.0f32,
                    -0.0,
                    2.5,
                    -2.5,
                    3.5,
                    -0.5,
                    1.5,
                    f32::NAN,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    3e9,
                    -3e9,
                    2147483520.0,
                    -2147483648.0,
                    1e-40,
                ];
                let x: Vec<f32> = (0..n)
                    .map(|i| {
                        if i < sp.len() {
                            sp[i]
                        } else {
                            r.f32(-20.0, 20.0)
                        }
                    })
                    .collect();
                let y: Vec<f32> = (0..n)
                    .map(|i| {
                        if i < sp.len() {
                            sp[(i * 7 + 3) % sp.len()]
                        } else if i % 11 == 0 {
                            x[i]
                        } else {
                            r.f32(-20.0, 20.0)
                        }
                    })
                    .collect();
                let mut args = [
                    buf(&x),
                    buf(&y),
                    buf(&vec![f32::NAN; 8 * n]),
                    buf(&vec![0x5a5a5a5ai32; 4 * n]),
                    s32(n as i64),
                ];
                launch(l, "float_math", d1(grid), d1(block), &mut args)?;
                let got: Vec<f32> = read(&args[2]);
                let goti: Vec<i32> = read(&args[3]);
                let mut errs = Vec::new();
                let chk = |k: usize,
                           ok: &dyn Fn(f32, f32, f32) -> bool,
                           want: &dyn Fn(f32, f32) -> String| {
                    each(
                        &format!("out k={k}"),
                        n,
                        |i| ok(got[8 * i + k], x[i], y[i]),
                        |i| {
                            format!(
                                "u={} v={} got {} want {}",
                                x[i],
                                y[i],
                                got[8 * i + k],
                                want(x[i], y[i])
                            )
                        },
                    )
                };
                errs.push(chk(0, &|g, u, _| same_f32(g, u.abs().sqrt()), &|u, _| {
                    format!("{}", u.abs().sqrt())
                }));
                // rsqrt.approx.f32: relative error <= 2^-20 here (PTX: max ~2^-22.9 ulp-ish).
                errs.push(chk(
                    1,
                    &|g, u, _| {
                        let w = 1.0 / ((u.abs() + 1.0) as f64).sqrt();
                        if u.is_nan() {
                            g.is_nan()
                        } else {
                            ((g as f64 - w) / w).abs() <= 1e-6 || (u.is_infinite() && g == 0.0)
                        }
                    },
                    &|u, _| format!("{}", 1.0 / ((u.abs() + 1.0) as f64).sqrt()),
                ));
                // ex2.approx.f32 of the f32 product u * log2(e): relative error <= 2^-20.
                errs.push(chk(
                    2,
                    &|g, u, _| {
                        let w = ((u * LOG2E_F32) as f64).exp2();
                        if u.is_nan() {
                            g.is_nan()
                        } else if w > f32::MAX as f64 {
                            g == f32::INFINITY
                        } else if w < 1e-38 {
                            (g as f64 - w).abs() <= 1e-44
                        } else {
                            ((g as f64 - w) / w).abs() <= 1e-6
                        }
                    },
                    &|u, _| format!("{}", ((u * LOG2E_F32) as f64).exp2()),
                ));
                // sin.approx.f32: absolute error <= 2^-20.9 for |u| <= pi; unchecked outside.
                errs.push(chk(
                    3,
                    &|g, u, _| {
                        !(u.abs() <= std::f32::consts::PI)
                            || (g as f64 - (u as f64).sin()).abs() <= 6e-7
                    },
                    &|u, _| format!("{}", (u as f64).sin()),
                ));
                // min/max: NaN-ignoring; either zero accepted for min/max(+0, -0).
                let mm = |g: f32, u: f32, v: f32, max: bool| {
                    let w = if u.is_nan() {
                        v
                    } else if v.is_nan() {
                        u
                    } else if max {
                        u.max(v)
                    } else {
                        u.min(v)
                    };
                    same_f32(g, w) || (g == 0.0 && w == 0.0 && u == 0.0 && v == 0.0)
                };
                errs.push(chk(4, &|g, u, v| mm(g, u, v, false), &|u, v| {
                    format!("{}", u.min(v))
                }));
                errs.push(chk(5, &|g, u, v| mm(g, u, v, true), &|u, v| {
                    format!("{}", u.max(v))
                }));
                errs.push(chk(6, &|g, u, v| same_f32(g, u / v), &|u, v| {
                    format!("{}", u / v)
                }));
                errs.push(chk(
                    7,
                    &|g, u, _| same_f32(g, (u.trunc() as i32) as f32),
                    &|u, _| format!("{}", (u.trunc() as i32) as f32),
                ));
                // cvt.{rni,rzi,rmi,rpi}.s32.f32: saturating, NaN -> 0 (Rust `as` has the same rule).
                let conv: [fn(f32) -> i32; 4] = [
                    |u| u.round_ties_even() as i32,
                    |u| u.trunc() as i32,
                    |u| u.floor() as i32,
                    |u| u.ceil() as i32,
                ];
                for (k, f) in conv.iter().enumerate() {
                    let g: Vec<i32> = (0..n).map(|i| goti[4 * i + k]).collect();
                    let w: Vec<i32> = x.iter().map(|&u| f(u)).collect();
                    errs.push(exact(&format!("iout k={k}"), &g, &w));
                }
                all_ok(errs)
            });
            rep.case(format!("{v} int_to_float n={n} block={block}"), || {
                let mut r = Rng::new(103 + n as u64);
                let sp = [
                    0i32,
                    -1,
                    i32::MIN,
                    i32::MAX,
                    16777217,
                    -16777217,
                    0x7fff_ffc0,
                ];
                let k: Vec<i32> = (0..n)
                    .map(|i| if i < sp.len() { sp[i] } else { r.u32() as i32 })
                    .collect();
                let mut args = [buf(&k), buf(&vec![f32::NAN; n]), s32(n as i64)];
                launch(l, "int_to_float", d1(grid), d1(block), &mut args)?;
                let got: Vec<f32> = read(&args[1]);
                let w = |k: i32| {
                    (
                        (k as f32).mul_add(0.5, k as u32 as f32),
                        (k as f32) * 0.5 + k as u32 as f32,
                    )
                };
                each(
                    "out",
                    n,
                    |i| same_f32(got[i], w(k[i]).0) || same_f32(got[i], w(k[i]).1),
                    |i| format!("k={} got {} want {}", k[i], got[i], w(k[i]).0),
                )
            });
        }
    });
    rep.finish();
}

// ------------------------------------------------------------------------------------ atomics

#[test]
fn atomics() {
    let mut rep = Report::new("atomics");
    for_variants(&mut rep, "atomics", |rep, l, v| {
        for &(n, block) in &[
            (1000usize, 128u32),
            (100, 48),
            (1, 1),
            (30001, 1024),
            (5000, 100),
        ] {
            let grid = div_up(n, block as usize);
            rep.case(format!("{v} atomic_stats n={n} block={block}"), || {
                let mut r = Rng::new(107 + n as u64);
                let x: Vec<i32> = (0..n)
                    .map(|i| {
                        if i % 4 == 0 {
                            r.range(-30, 30) as i32
                        } else {
                            r.u32() as i32
                        }
                    })
                    .collect();
                let init = [i32::MIN, i32::MAX, 0, 0x1357_9bdf];
                let mut args = [buf(&x), buf(&init), s32(n as i64)];
                launch(l, "atomic_stats", d1(grid), d1(block), &mut args)?;
                let got: Vec<i32> = read(&args[1]);
                let want = [
                    *x.iter().max().unwrap(),
                    *x.iter().min().unwrap(),
                    x.iter().filter(|&&v| v.wrapping_rem(3) == 0).count() as i32,
                ];
                all_ok(vec![
                    exact("stats[0..3]", &got[..3], &want),
                    if x.contains(&got[3]) {
                        Ok(())
                    } else {
                        Err(format!("stats[3] = {:#x} is not an input value", got[3]))
                    },
                ])
            });
            rep.case(
                format!("{v} atomic_scatter_add n={n} block={block}"),
                || {
                    let mut r = Rng::new(109 + n as u64);
                    let idx: Vec<i32> = (0..n).map(|_| r.u32() as i32).collect();
                    let vals: Vec<f32> = (0..n).map(|_| r.f32(-1.0, 1.0)).collect();
                    let mut args = [buf(&idx), buf(&vals), buf(&[0f32; 16]), s32(n as i64)];
                    launch(l, "atomic_scatter_add", d1(grid), d1(block), &mut args)?;
                    let got: Vec<f32> = read(&args[2]);
                    let mut want = [0f64; 16];
                    let mut mag = [0f64; 16];
                    for i in 0..n {
                        want[(idx[i] & 15) as usize] += vals[i] as f64;
                        mag[(idx[i] & 15) as usize] += vals[i].abs() as f64;
                    }
                    // Any order of f32 additions: |err| <= count * 2^-24 * sum |v|.
                    each(
                        "sums",
                        16,
                        |b| {
                            (got[b] as f64 - want[b]).abs()
                                <= (n as f64 / 16.0 + 16.0) * 6e-8 * mag[b] + 1e-30
                        },
                        |b| format!("got {} want {}", got[b], want[b]),
                    )
                },
            );
        }
    });
    rep.finish();
}

// ----------------------------------------------------------------------- CAS retry loops

#[test]
fn cas_loops() {
    let mut rep = Report::new("cas_loops");
    // A CAS loop on one word for the whole warp runs lane by lane to completion on the warp
    // path (`Plan::serial`), under `auto` and forced `simd` alike; other CAS loops in rounds.
    for exec in [ptxr::codegen::warp::Exec::Auto, ptxr::codegen::warp::Exec::Simd] {
    ptxr::codegen::warp::set_exec(exec);
    for_variants(&mut rep, "cas_loops", |rep, l, v| {
        let v = &format!("{v} {exec:?}");
        // (1, 1): one thread; (64, 64): two full warps on one word; (1000, 96): three warps
        // per CTA, a partial CTA; (5000, 1024): CTAs running at once on every core.
        for &(n, block) in &[(1usize, 1u32), (64, 64), (1000, 96), (5000, 1024), (33, 256)] {
            let grid = div_up(n, block as usize);
            rep.case(format!("{v} cas_max_f32 n={n} block={block}"), || {
                let mut r = Rng::new(211 + n as u64);
                // Values in [-100, 100) with repeats (equal values take the early exit).
                let x: Vec<f32> = (0..n).map(|_| (r.range(-400, 400) as f32) * 0.25).collect();
                let init = [f32::NEG_INFINITY; 5];
                let mut args = [buf(&x), buf(&init), s32(n as i64)];
                launch(l, "cas_max_f32", d1(grid), d1(block), &mut args)?;
                let got: Vec<f32> = read(&args[1]);
                let mut want = [f32::NEG_INFINITY; 5];
                for (i, &e) in x.iter().enumerate() {
                    want[0] = want[0].max(e);
                    want[1 + (i & 3)] = want[1 + (i & 3)].max(e);
                }
                exact("out", &got, &want)
            });
            rep.case(format!("{v} cas_add_f64 n={n} block={block}"), || {
                let mut r = Rng::new(223 + n as u64);
                // Integers below 2^20: every partial sum is exact in a double.
                let x: Vec<f64> = (0..n).map(|_| r.range(-(1 << 20), 1 << 20) as f64).collect();
                let mut args = [buf(&x), buf(&[0.5f64]), s32(n as i64)];
                launch(l, "cas_add_f64", d1(grid), d1(block), &mut args)?;
                let got: Vec<f64> = read(&args[1]);
                let want = 0.5 + x.iter().map(|&e| e as i64).sum::<i64>() as f64;
                exact("sum", &got, &[want])
            });
            rep.case(format!("{v} cas_sat_add n={n} block={block}"), || {
                let mut r = Rng::new(227 + n as u64);
                let x: Vec<u32> = (0..n).map(|_| r.u32() >> 8).collect();
                // A cap that some bins reach and others do not.
                let cap: u32 = ((n as u64 / 8) * (1 << 23)).clamp(50, u32::MAX as u64) as u32;
                let init: [u32; 8] = [0, 1, 2, 3, cap, cap.saturating_sub(7), 100, 0];
                let mut args = [buf(&x), buf(&init), ArgSpec::Scalar(Type::U32, cap as u64), s32(n as i64)];
                launch(l, "cas_sat_add", d1(grid), d1(block), &mut args)?;
                let got: Vec<u32> = read(&args[1]);
                let mut total: Vec<u64> = init.iter().map(|&e| e as u64).collect();
                let mut touched = [false; 8];
                for &e in &x {
                    total[(e & 7) as usize] += (e >> 3) as u64;
                    touched[(e & 7) as usize] = true;
                }
                // A bin that some thread updates ends at min(sum, cap) (each update stores at
                // most the cap); the others keep their initial value.
                let want: Vec<u32> = (0..8).map(|b| if touched[b] { total[b].min(cap as u64) as u32 } else { init[b] }).collect();
                exact("bins", &got, &want)
            });
        }
    });
    }
    ptxr::codegen::warp::set_exec(ptxr::codegen::warp::Exec::Auto);
    rep.finish();
}

// ------------------------------------------------------------------------- self-checks (refs)

#[test]
fn reference_self_checks() {
    // The binary16 reference against known values (IEEE 754 binary16 tables).
    assert_eq!(f32_to_f16(1.0), 0x3c00);
    assert_eq!(f32_to_f16(65504.0), 0x7bff);
    assert_eq!(f32_to_f16(65520.0), 0x7c00); // rounds to inf (halfway, even -> overflow)
    assert_eq!(f32_to_f16(65519.996), 0x7bff);
    assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001);
    assert_eq!(f32_to_f16(2f32.powi(-25)), 0x0000); // tie to even (0)
    assert_eq!(f32_to_f16(1.5 * 2f32.powi(-25)), 0x0001);
    assert_eq!(f32_to_f16(-2.0), 0xc000);
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00); // tie -> even
    assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
    assert_eq!(f32_to_f16(6.097555e-5), 0x03ff); // largest subnormal
    assert_eq!(f16_add(0x3c00, 0x3c00), 0x4000);
    assert_eq!(f16_add(0x3c00, 0xbc00), 0x0000);
    assert_eq!(f16_add(0x8000, 0x8000), 0x8000);
    assert_eq!(f16_mul(0x7bff, 0x4000), 0x7c00);
    assert_eq!(f16_mul(0x0001, 0x3800), 0x0000); // 2^-25: tie to even zero
    assert_eq!(f16_mul(0x8001, 0x3800), 0x8000);
    assert_eq!(f16_fma(0x3c01, 0x3c01, 0xbc00), 0x1800); // (1+2^-10)^2-1 = 2^-9+2^-20: a tie, to even 2^-9
    for h in 0..0x7c00u16 {
        assert_eq!(
            f16_to_f64(h) as f32,
            f32::from_bits(f32_bits_of_f16(h)),
            "{h:#x}"
        );
        assert_eq!(f32_to_f16(f16_to_f64(h) as f32), h);
        assert_eq!(f32_to_f16(-(f16_to_f64(h) as f32)), h | 0x8000);
    }
    // int_ops byte_perm worked example from the PTX ISA (prmt default mode):
    // a = 0x33221100 (b0..b3), b = 0x77665544 (b4..b7), selector 0x3210 -> a; 0x7654 -> b.
    let bp = |x: u32, y: u32, s: u32| {
        let bytes = ((y as u64) << 32 | x as u64).to_le_bytes();
        (0..4).fold(0u32, |acc, m| {
            acc | (bytes[((s >> (4 * m)) & 7) as usize] as u32) << (8 * m)
        })
    };
    assert_eq!(bp(0x33221100, 0x77665544, 0x3210), 0x33221100);
    assert_eq!(bp(0x33221100, 0x77665544, 0x7654), 0x77665544);
    assert_eq!(bp(0x33221100, 0x77665544, 0x0527), 0x00552277);
}

/// binary16 → binary32 bits by field manipulation (independent of `f16_to_f64`).
fn f32_bits_of_f16(h: u16) -> u32 {
    let s = ((h >> 15) as u32) << 31;
    let e = ((h >> 10) & 31) as u32;
    let f = (h & 1023) as u32;
    if e == 0 {
        if f == 0 {
            return s;
        }
        // normalize the subnormal
        let mut e2 = 127 - 15 + 1;
        let mut f2 = f;
        while f2 & 0x400 == 0 {
            f2 <<= 1;
            e2 -= 1;
        }
        return s | (e2 << 23) | ((f2 & 0x3ff) << 13);
    }
    s | ((e + 127 - 15) << 23) | (f << 13)
}

/// Every kernel of every corpus file is exercised by one of the tests above: a kernel added to
/// the corpus without a reference here fails this test.
#[test]
fn every_corpus_kernel_is_covered() {
    const COVERED: &[&str] = &[
        "saxpy",
        "vec_add",
        "reduce_sum",
        "reduce_sum_atomic",
        "warp_reduce_down",
        "warp_allreduce_xor",
        "warp_broadcast",
        "block_inclusive_scan",
        "matmul_tiled",
        "histogram256",
        "transpose",
        "stencil1d",
        "stencil2d",
        "bitonic_sort_block",
        "warp_vote",
        "block_count_positive",
        "f16_ops",
        "f16x2_ops",
        "f16_axpy",
        "daxpy",
        "ddot",
        "f64_ops",
        "device_calls",
        "poly_eval",
        "int_ops",
        "float_math",
        "int_to_float",
        "atomic_stats",
        "atomic_scatter_add",
        "cas_max_f32",
        "cas_add_f64",
        "cas_sat_add",
        "wmma_gemm",
        "wmma_gemm_h",
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().map_or(true, |x| x != "ptx") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let (m, _) = ptxr::syntax::parse_module(&text);
        for item in &m.items {
            if let ptxr::syntax::ast::Item::Func(f) = item {
                if f.entry && !COVERED.contains(&f.name.name) {
                    missing.push(format!("{}: {}", p.display(), f.name.name));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "corpus kernels without a run test in tests/corpus_run.rs:\n  {}",
        missing.join("\n  ")
    );
}
