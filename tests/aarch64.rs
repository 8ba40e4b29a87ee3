//! AArch64 code generation, run for real: corpus kernels are compiled with
//! `ptxr::driver::compile_to_file(.., TargetKind::AArch64, 3, Emit::Obj, ..)`, linked statically
//! with the C driver `tests/c/cta_driver.c` (which defines the `CtaCtx`/`SyncSlot`/`HostFns`
//! layout of `ptxr-runtime/src/abi.rs` and runs every CTA of the launch serially), run under
//! `qemu-aarch64`, and their outputs compared with the same launch run natively through the
//! library (`driver::load` + `Loaded::launch`): bit-exact, except the outputs of PTX
//! `.approx` instructions (compared with a relative tolerance, stated below).
//!
//! Kernels of the per-thread scheduler are not covered (the C driver does not implement it;
//! it would report a deadlock); warp-path kernels that run in phases get their frames. The test needs `aarch64-linux-gnu-gcc` and `qemu-aarch64`
//! (`scripts/setup.sh` installs them). When they are missing it prints `SKIPPED` and passes,
//! unless `PTXR_REQUIRE_AARCH64=1` is set, in which case it fails.

mod common;

use ptxr::codegen::abi::{CtaCtx, HostFns, SyncSlot};
use ptxr::codegen::target::TargetKind;
use ptxr::codegen::KernelInfo;
use ptxr::driver::Emit;
use ptxr::runtime::{ArgSpec, Dim3, LaunchConfig};
use ptxr::syntax::ast::Type;
use std::path::{Path, PathBuf};
use std::process::Command;

const SYSROOT: &str = "/usr/aarch64-linux-gnu";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tool_ok(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Whether the cross toolchain is present; prints why not.
fn cross_available(test: &str) -> bool {
    let missing: Vec<&str> = ["aarch64-linux-gnu-gcc", "qemu-aarch64"]
        .into_iter()
        .filter(|t| !tool_ok(t))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "SKIPPED aarch64::{test}: {} not found (scripts/setup.sh installs them)",
        missing.join(" and ")
    );
    if std::env::var("PTXR_REQUIRE_AARCH64").map_or(false, |v| v == "1") {
        panic!("{msg}, and PTXR_REQUIRE_AARCH64=1");
    }
    println!("{msg}");
    eprintln!("{msg}");
    false
}

use common::Rng;

fn bytes<T: Copy>(v: &[T], f: impl Fn(T) -> Vec<u8>) -> ArgSpec {
    ArgSpec::Buffer(v.iter().flat_map(|&x| f(x)).collect())
}
fn f32s(v: &[f32]) -> ArgSpec {
    bytes(v, |x| x.to_le_bytes().to_vec())
}
fn f64s(v: &[f64]) -> ArgSpec {
    bytes(v, |x| x.to_le_bytes().to_vec())
}
fn u32s(v: &[u32]) -> ArgSpec {
    bytes(v, |x| x.to_le_bytes().to_vec())
}
fn u16s(v: &[u16]) -> ArgSpec {
    bytes(v, |x| x.to_le_bytes().to_vec())
}
fn s32(v: i64) -> ArgSpec {
    ArgSpec::Scalar(Type::S32, v as i32 as u32 as u64)
}

/// How a buffer argument's outputs are compared.
#[derive(Clone, Copy)]
enum Cmp {
    /// Every byte equal.
    Exact,
    /// f32 elements; element `i` with `i % period` in `approx` compared with relative
    /// tolerance `tol` (both NaN also equal), the others bit-exactly.
    F32Approx {
        period: usize,
        approx: &'static [usize],
        tol: f64,
    },
}

struct Case {
    kernel: &'static str,
    grid: Dim3,
    block: Dim3,
    args: Vec<ArgSpec>,
    /// Per argument index: how to compare it (buffers only; others ignored).
    cmp: Vec<(usize, Cmp)>,
}

fn tmpdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ptxr-aarch64-")
        .tempdir()
        .unwrap()
}

/// Compiles the corpus file for AArch64 and returns (object path, kernel infos from the
/// host-loaded module, host-loaded module).
fn build(dir: &Path, file: &str) -> Result<(PathBuf, ptxr::runtime::Loaded), String> {
    let src = ptxr::SourceFile::load(&root().join("tests/corpus").join(file))
        .map_err(|e| format!("{e:#}"))?;
    let obj = dir.join(file.replace(".ptx", ".o"));
    ptxr::driver::compile_to_file(&src, TargetKind::AArch64, 3, Emit::Obj, &obj)
        .map_err(|e| format!("aarch64 compile failed: {e:#}"))?;
    let native =
        ptxr::driver::load(&src, 3).map_err(|e| format!("native compile failed: {e:#}"))?;
    Ok((obj, native))
}

fn link(dir: &Path, obj: &Path, kernel: &str) -> Result<PathBuf, String> {
    let exe = dir.join(format!("drv_{kernel}"));
    let out = Command::new("aarch64-linux-gnu-gcc")
        .args(["-O2", "-static", "-std=c11", "-D_POSIX_C_SOURCE=199309L"])
        .arg(format!("-DKERNEL={kernel}"))
        .arg(root().join("tests/c/cta_driver.c"))
        .arg(obj)
        .arg("-lm")
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run aarch64-linux-gnu-gcc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "link failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(exe)
}

fn qemu(exe: &Path, args: &[&Path]) -> Result<Vec<u8>, String> {
    let out = Command::new("qemu-aarch64")
        .arg("-L")
        .arg(SYSROOT)
        .arg(exe)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run qemu-aarch64: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{} exited with {}: {}{}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

/// The driver's input file for a launch (format in tests/c/cta_driver.c).
fn driver_input(k: &KernelInfo, c: &Case) -> Vec<u8> {
    let mut v = Vec::new();
    let w = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
    for x in [
        c.grid.0,
        c.grid.1,
        c.grid.2,
        c.block.0,
        c.block.1,
        c.block.2,
        0,
        k.static_smem,
        k.param_size,
        c.args.len() as u32,
        k.frame_size,
    ] {
        w(&mut v, x);
    }
    for (a, p) in c.args.iter().zip(&k.params) {
        match a {
            ArgSpec::Scalar(_, bits) => {
                w(&mut v, 0);
                w(&mut v, p.offset);
                v.extend_from_slice(&(p.size as u64).to_le_bytes());
                v.extend_from_slice(&bits.to_le_bytes()[..p.size as usize]);
            }
            ArgSpec::Bytes(b) => {
                w(&mut v, 0);
                w(&mut v, p.offset);
                v.extend_from_slice(&(b.len() as u64).to_le_bytes());
                v.extend_from_slice(b);
            }
            ArgSpec::Buffer(b) => {
                w(&mut v, 1);
                w(&mut v, p.offset);
                v.extend_from_slice(&(b.len() as u64).to_le_bytes());
                v.extend_from_slice(b);
            }
            ArgSpec::Texture { .. } | ArgSpec::TensorMap { .. } => panic!("the AArch64 harness passes no texture, surface or tensor-map objects (no corpus kernel takes one)"),
        }
    }
    v
}

fn parse_output(out: &[u8]) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let mut p = 0;
    while p < out.len() {
        let n = u64::from_le_bytes(out[p..p + 8].try_into().unwrap()) as usize;
        v.push(out[p + 8..p + 8 + n].to_vec());
        p += 8 + n;
    }
    v
}

fn compare(what: &str, cmp: Cmp, native: &[u8], arm: &[u8]) -> Result<(), String> {
    if native.len() != arm.len() {
        return Err(format!(
            "{what}: {} bytes natively, {} on aarch64",
            native.len(),
            arm.len()
        ));
    }
    match cmp {
        Cmp::Exact => {
            let bad: Vec<usize> = (0..native.len()).filter(|&i| native[i] != arm[i]).collect();
            if bad.is_empty() {
                return Ok(());
            }
            let i = bad[0] & !3;
            let word = |b: &[u8]| {
                u32::from_le_bytes(b[i..(i + 4).min(b.len())].try_into().unwrap_or([0; 4]))
            };
            Err(format!("{what}: {} bytes differ; first at byte {} (32-bit word {}: native {:#010x}, aarch64 {:#010x})", bad.len(), bad[0], i / 4, word(native), word(arm)))
        }
        Cmp::F32Approx {
            period,
            approx,
            tol,
        } => {
            let f =
                |b: &[u8], i: usize| f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
            let mut bad = Vec::new();
            for i in 0..native.len() / 4 {
                let (x, y) = (f(native, i), f(arm, i));
                let ok = if approx.contains(&(i % period)) {
                    x.to_bits() == y.to_bits()
                        || (x.is_nan() && y.is_nan())
                        || ((x as f64 - y as f64).abs() <= tol * (x as f64).abs().max(1e-30))
                } else {
                    x.to_bits() == y.to_bits()
                };
                if !ok {
                    bad.push(format!(
                        "[{i}] native {x:e} ({:#010x}) aarch64 {y:e} ({:#010x})",
                        x.to_bits(),
                        y.to_bits()
                    ));
                }
            }
            if bad.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{what}: {} elements differ: {}",
                    bad.len(),
                    bad[..bad.len().min(4)].join("; ")
                ))
            }
        }
    }
}

/// Runs every case of one corpus file natively and on AArch64; collects failures.
fn run_file(file: &str, cases: Vec<Case>) {
    let dir = tmpdir();
    let (obj, native) = match build(dir.path(), file) {
        Ok(x) => x,
        Err(e) => panic!("{file}: {e}"),
    };
    let mut failures = Vec::new();
    let mut linked: std::collections::HashMap<&str, PathBuf> = Default::default();
    for (n, mut c) in cases.into_iter().enumerate() {
        let label = format!("{file} {} grid={:?} block={:?}", c.kernel, c.grid, c.block);
        let r = (|| -> Result<(), String> {
            let k = native.kernel(c.kernel).ok_or("no such kernel")?.clone();
            let input = driver_input(&k, &c);
            let exe = match linked.get(c.kernel) {
                Some(e) => e.clone(),
                None => {
                    let e = link(dir.path(), &obj, c.kernel)?;
                    linked.insert(c.kernel, e.clone());
                    e
                }
            };
            let inp = dir.path().join(format!("in{n}"));
            let outp = dir.path().join(format!("out{n}"));
            std::fs::write(&inp, &input).unwrap();
            qemu(&exe, &[&inp, &outp])?;
            let arm = parse_output(&std::fs::read(&outp).map_err(|e| e.to_string())?);
            native
                .launch(
                    c.kernel,
                    &LaunchConfig {
                        grid: c.grid,
                        block: c.block,
                        dyn_smem: 0,
                    },
                    &mut c.args,
                )
                .map_err(|e| format!("native launch failed: {}", e.0))?;
            let bufs: Vec<(usize, &Vec<u8>)> = c
                .args
                .iter()
                .enumerate()
                .filter_map(|(i, a)| {
                    if let ArgSpec::Buffer(b) = a {
                        Some((i, b))
                    } else {
                        None
                    }
                })
                .collect();
            if bufs.len() != arm.len() {
                return Err(format!(
                    "driver returned {} buffers, expected {}",
                    arm.len(),
                    bufs.len()
                ));
            }
            let mut errs = Vec::new();
            for (k, (idx, nb)) in bufs.iter().enumerate() {
                if let Some((_, cmp)) = c.cmp.iter().find(|(i, _)| i == idx) {
                    if let Err(e) = compare(&format!("arg{idx}"), *cmp, nb, &arm[k]) {
                        errs.push(e);
                    }
                }
            }
            if errs.is_empty() {
                Ok(())
            } else {
                Err(errs.join(" | "))
            }
        })();
        match r {
            Ok(()) => eprintln!("ok   {label}"),
            Err(e) => {
                eprintln!("FAIL {label}: {e}");
                failures.push(format!("{label}: {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing aarch64 case(s):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

fn d1(x: u32) -> Dim3 {
    Dim3(x, 1, 1)
}

/// Shapes for one-thread-per-element kernels: (n, block).
const SHAPES: [(usize, u32); 3] = [(1000, 128), (333, 48), (37, 1)];

fn per_variant(test: &str, stem: &str, make: impl Fn() -> Vec<Case>) {
    if !cross_available(test) {
        return;
    }
    for v in ["nvrtc", "clang"] {
        run_file(&format!("{stem}.{v}.ptx"), make());
    }
}

#[test]
fn abi_layout_matches_c_driver() {
    if !cross_available("abi_layout_matches_c_driver") {
        return;
    }
    let dir = tmpdir();
    let (obj, _) = build(dir.path(), "saxpy.nvrtc.ptx").unwrap();
    let exe = link(dir.path(), &obj, "saxpy").unwrap();
    let text = String::from_utf8(qemu(&exe, &[Path::new("--layout")]).unwrap()).unwrap();
    use std::mem::{align_of, offset_of, size_of};
    let mut want = vec![format!(
        "CtaCtx {} {}",
        size_of::<CtaCtx>(),
        align_of::<CtaCtx>()
    )];
    macro_rules! f {
        ($t:ident, $($f:ident),*) => {$(
            let z: $t = unsafe { std::mem::zeroed() };
            let _ = &z;
            want.push(format!("{}.{} {} {}", stringify!($t), stringify!($f), offset_of!($t, $f), std::mem::size_of_val(&z.$f)));
        )*};
    }
    f!(
        CtaCtx,
        params,
        shared,
        ctaid,
        nctaid,
        ntid,
        dyn_smem,
        total_smem,
        status,
        status_line,
        rt,
        host,
        status_thread,
        smid,
        frames,
        slots,
        sched,
        group,
        grid_ws,
        cluster
    );
    want.push(format!(
        "SyncSlot {} {}",
        size_of::<SyncSlot>(),
        align_of::<SyncSlot>()
    ));
    f!(
        SyncSlot, state, resume, kind, site, line, mode, mask, bar_id, bar_count, flags, a, b, c,
        result, pred, _pad
    );
    want.push(format!(
        "HostFns {} {}",
        size_of::<HostFns>(),
        align_of::<HostFns>()
    ));
    // HostFns holds non-nullable fn pointers: no zeroed value; all nine are 8-byte pointers.
    for (k, name) in ["vprintf", "globaltimer", "assertfail", "resolve", "launch_buffer", "launch_device", "cluster_sync", "check_access", "try_cancel"]
        .iter()
        .enumerate()
    {
        want.push(format!("HostFns.{name} {} 8", k * 8));
    }
    assert_eq!(offset_of!(HostFns, resolve), 24);
    assert_eq!(offset_of!(HostFns, launch_device), 40);
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(
        got,
        want.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "C driver layout differs from ptxr-runtime/src/abi.rs"
    );
}

#[test]
fn saxpy() {
    per_variant("saxpy", "saxpy", || {
        SHAPES
            .iter()
            .map(|&(n, b)| {
                let mut r = Rng::new(n as u64);
                let x: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
                let y: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
                Case {
                    kernel: "saxpy",
                    grid: d1(n.div_ceil(b as usize) as u32),
                    block: d1(b),
                    args: vec![
                        f32s(&x),
                        f32s(&y),
                        ArgSpec::Scalar(Type::F32, 1.75f32.to_bits() as u64),
                        s32(n as i64),
                    ],
                    cmp: vec![(1, Cmp::Exact)],
                }
            })
            .collect()
    });
}

#[test]
fn vec_add() {
    per_variant("vec_add", "vecadd_gridstride", || {
        [(1000usize, 3u32, 96u32), (77, 1, 33), (4096, 8, 256)]
            .iter()
            .map(|&(n, g, b)| {
                let mut r = Rng::new(3 + n as u64);
                let a: Vec<f32> = (0..n).map(|_| r.f32(-1e3, 1e3)).collect();
                let bb: Vec<f32> = (0..n).map(|_| r.f32(-1e3, 1e3)).collect();
                Case {
                    kernel: "vec_add",
                    grid: d1(g),
                    block: d1(b),
                    args: vec![f32s(&a), f32s(&bb), f32s(&vec![0.0; n]), s32(n as i64)],
                    cmp: vec![(2, Cmp::Exact)],
                }
            })
            .collect()
    });
}

/// The shared-memory histogram: `atom.shared.add` runs lane by lane in a small lane loop,
/// with its untested copy for warps whose lanes are all on (`codegen::warp::coherent_copy`,
/// `nsw` lane indices under a once-per-warp check): whole warps (blocks of 256), warps with
/// a partial last grid-stride iteration (777 bytes) and partial warps (blocks of 40).
#[test]
fn histogram() {
    per_variant("histogram", "histogram", || {
        [(100_000usize, 16u32, 256u32), (777, 3, 96), (5000, 4, 40)]
            .iter()
            .map(|&(n, g, b)| {
                let mut r = Rng::new(11 + n as u64);
                let data: Vec<u8> = (0..n).map(|_| r.f32(0.0, 256.0) as u8).collect();
                Case {
                    kernel: "histogram256",
                    grid: d1(g),
                    block: d1(b),
                    args: vec![ArgSpec::Buffer(data), ArgSpec::Buffer(vec![0; 1024]), s32(n as i64)],
                    cmp: vec![(1, Cmp::Exact)],
                }
            })
            .collect()
    });
}

#[test]
fn stencil2d() {
    per_variant("stencil2d", "stencil2d", || {
        [
            (37usize, 23usize, 8u32, 4u32),
            (64, 64, 16, 16),
            (5, 40, 32, 2),
        ]
        .iter()
        .map(|&(w, h, bx, by)| {
            let mut r = Rng::new(5 + (w * h) as u64);
            let x: Vec<f32> = (0..w * h).map(|_| r.f32(-50.0, 50.0)).collect();
            Case {
                kernel: "stencil2d",
                grid: Dim3(
                    w.div_ceil(bx as usize) as u32,
                    h.div_ceil(by as usize) as u32,
                    1,
                ),
                block: Dim3(bx, by, 1),
                args: vec![
                    f32s(&x),
                    f32s(&vec![0.0; w * h]),
                    s32(w as i64),
                    s32(h as i64),
                ],
                cmp: vec![(1, Cmp::Exact)],
            }
        })
        .collect()
    });
}

#[test]
fn f64_math() {
    per_variant("f64_math", "f64_math", || {
        let mut v = Vec::new();
        for &(n, b) in &SHAPES {
            let mut r = Rng::new(7 + n as u64);
            let x: Vec<f64> = (0..n)
                .map(|i| {
                    if i == 0 {
                        -0.0
                    } else {
                        r.f64(-1e6, 1e6) * if i % 3 == 0 { 1e-6 } else { 1.0 }
                    }
                })
                .collect();
            let y: Vec<f64> = (0..n).map(|_| r.f64(-1e3, 1e3)).collect();
            let g = d1(n.div_ceil(b as usize) as u32);
            v.push(Case {
                kernel: "daxpy",
                grid: g,
                block: d1(b),
                args: vec![
                    f64s(&x),
                    f64s(&y),
                    ArgSpec::Scalar(Type::F64, (-2.3f64).to_bits()),
                    s32(n as i64),
                ],
                cmp: vec![(1, Cmp::Exact)],
            });
            v.push(Case {
                kernel: "f64_ops",
                grid: g,
                block: d1(b),
                args: vec![f64s(&x), f64s(&vec![0.0; 4 * n]), s32(n as i64)],
                cmp: vec![(1, Cmp::Exact)],
            });
        }
        v
    });
}

#[test]
fn int_ops() {
    per_variant("int_ops", "int_ops", || {
        SHAPES
            .iter()
            .map(|&(n, b)| {
                let mut r = Rng::new(11 + n as u64);
                let sp = [0u32, 1, 0xffff_ffff, 0x8000_0001, 0x7fff_ffff, 0x1234_5678];
                let x: Vec<u32> = (0..n)
                    .map(|i| if i < 36 { sp[i % 6] } else { r.u32() })
                    .collect();
                let y: Vec<u32> = (0..n)
                    .map(|i| if i < 36 { sp[i / 6] } else { r.u32() })
                    .collect();
                Case {
                    kernel: "int_ops",
                    grid: d1(n.div_ceil(b as usize) as u32),
                    block: d1(b),
                    args: vec![
                        u32s(&x),
                        u32s(&y),
                        u32s(&vec![0; 10 * n]),
                        ArgSpec::Buffer(vec![0; 8 * n]),
                        s32(n as i64),
                    ],
                    cmp: vec![(2, Cmp::Exact), (3, Cmp::Exact)],
                }
            })
            .collect()
    });
}

#[test]
fn device_calls() {
    per_variant("device_calls", "device_calls", || {
        let mut v = Vec::new();
        for &(n, b) in &SHAPES {
            let mut r = Rng::new(13 + n as u64);
            let x: Vec<u32> = (0..n)
                .map(|i| if i == 1 { 0x8000_0000 } else { r.u32() })
                .collect();
            let g = d1(n.div_ceil(b as usize) as u32);
            v.push(Case {
                kernel: "device_calls",
                grid: g,
                block: d1(b),
                args: vec![u32s(&x), u32s(&vec![0; n]), s32(n as i64)],
                cmp: vec![(1, Cmp::Exact)],
            });
            let xs: Vec<f32> = (0..n).map(|_| r.f32(-2.0, 2.0)).collect();
            let co: Vec<f32> = (0..7).map(|_| r.f32(-1.0, 1.0)).collect();
            v.push(Case {
                kernel: "poly_eval",
                grid: g,
                block: d1(b),
                args: vec![
                    f32s(&xs),
                    f32s(&co),
                    f32s(&vec![0.0; n]),
                    s32(6),
                    s32(n as i64),
                ],
                cmp: vec![(2, Cmp::Exact)],
            });
        }
        v
    });
}

#[test]
fn float_math() {
    per_variant("float_math", "float_math", || {
        let mut v = Vec::new();
        for &(n, b) in &SHAPES {
            let mut r = Rng::new(17 + n as u64);
            let sp = [
                0.0f32,
                -0.0,
                2.5,
                -2.5,
                0.5,
                f32::NAN,
                f32::INFINITY,
                -3e9,
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
                        sp[(i + 4) % sp.len()]
                    } else {
                        r.f32(-20.0, 20.0)
                    }
                })
                .collect();
            let g = d1(n.div_ceil(b as usize) as u32);
            // out[8i+1..=3] are rsqrt.approx / ex2.approx / sin.approx: relative 2^-20 between
            // the two targets (each is within ~2^-21 of the true value); all else bit-exact.
            v.push(Case {
                kernel: "float_math",
                grid: g,
                block: d1(b),
                args: vec![
                    f32s(&x),
                    f32s(&y),
                    f32s(&vec![0.0; 8 * n]),
                    u32s(&vec![0; 4 * n]),
                    s32(n as i64),
                ],
                cmp: vec![
                    (
                        2,
                        Cmp::F32Approx {
                            period: 8,
                            approx: &[1, 2, 3],
                            tol: 1e-6,
                        },
                    ),
                    (3, Cmp::Exact),
                ],
            });
            let k: Vec<u32> = (0..n)
                .map(|i| if i == 0 { 0x8000_0000 } else { r.u32() })
                .collect();
            v.push(Case {
                kernel: "int_to_float",
                grid: g,
                block: d1(b),
                args: vec![u32s(&k), f32s(&vec![0.0; n]), s32(n as i64)],
                cmp: vec![(1, Cmp::Exact)],
            });
        }
        v
    });
}

#[test]
fn f16_math() {
    // Also without synchronization; AArch64 has native half-precision arithmetic, so this
    // checks that the f16 lowering gives the same bits on both targets.
    per_variant("f16_math", "f16_math", || {
        let mut v = Vec::new();
        for &(n, b) in &SHAPES {
            let mut r = Rng::new(19 + n as u64);
            let mut h = || loop {
                let x = r.u32() as u16;
                if (x >> 10) & 31 != 31 {
                    break x;
                }
            };
            let a: Vec<u16> = (0..2 * n).map(|_| h()).collect();
            let bb: Vec<u16> = (0..2 * n).map(|_| h()).collect();
            let c: Vec<u16> = (0..2 * n).map(|_| h()).collect();
            let g = d1(n.div_ceil(b as usize) as u32);
            v.push(Case {
                kernel: "f16_ops",
                grid: g,
                block: d1(b),
                args: vec![
                    u16s(&a[..n]),
                    u16s(&bb[..n]),
                    u16s(&c[..n]),
                    u16s(&vec![0; 4 * n]),
                    s32(n as i64),
                ],
                cmp: vec![(3, Cmp::Exact)],
            });
            v.push(Case {
                kernel: "f16x2_ops",
                grid: g,
                block: d1(b),
                args: vec![
                    u16s(&a),
                    u16s(&bb),
                    u16s(&c),
                    u16s(&vec![0; 6 * n]),
                    s32(n as i64),
                ],
                cmp: vec![(3, Cmp::Exact)],
            });
            v.push(Case {
                kernel: "f16_axpy",
                grid: g,
                block: d1(b),
                args: vec![
                    u16s(&a[..n]),
                    u16s(&bb[..n]),
                    ArgSpec::Scalar(Type::F32, 0.7f32.to_bits() as u64),
                    s32(n as i64),
                ],
                cmp: vec![(1, Cmp::Exact)],
            });
        }
        v
    });
}
