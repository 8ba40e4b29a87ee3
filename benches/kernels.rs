//! Kernel benchmark (not a test): runs corpus kernels compiled by ptxr on all cores and prints
//! `name seconds` (best of N). scripts/bench-kernels.sh runs it beside the C baselines and
//! prints the ratios.

use ptxr::runtime::{ArgSpec, Dim3, LaunchConfig};
use std::time::Instant;

fn f32s(v: impl Iterator<Item = f32>) -> Vec<u8> {
    v.flat_map(|x| x.to_le_bytes()).collect()
}

fn load(path: &str) -> ptxr::runtime::Loaded {
    let src = ptxr::SourceFile::load(std::path::Path::new(path)).expect("corpus file");
    ptxr::driver::load(&src, 3).unwrap_or_else(|e| panic!("{path}: {e:#}"))
}

fn time(name: &str, reps: usize, mut f: impl FnMut()) {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{name} {best:.6}");
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let only = std::env::args().nth(2);
    let want = |n: &str| only.as_deref().map_or(true, |o| o.split(',').any(|x| x == n));
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/");
    // BENCH_GEN: whose PTX of the CUDA sources to run, `nvrtc` (default: NVRTC 12.9) or
    // `clang` (clang-19): tests/corpus/NAME.GEN.ptx and benches/idioms.GEN.ptx.
    let gen = std::env::var("BENCH_GEN").unwrap_or_else(|_| "nvrtc".into());
    assert!(gen == "nvrtc" || gen == "clang", "BENCH_GEN is nvrtc or clang");
    let n: usize = std::env::var("BENCH_N").ok().and_then(|s| s.parse().ok()).unwrap_or(1 << 26);
    let x = f32s((0..n).map(|i| (i % 1000) as f32 * 0.5));
    if want("saxpy") {
        let m = load(&format!("{dir}saxpy.{gen}.ptx"));
        let mut args = vec![ArgSpec::Buffer(x.clone()), ArgSpec::Buffer(f32s((0..n).map(|i| (i % 7) as f32))), ArgSpec::Scalar(ptxr::syntax::ast::Type::F32, 2.0f32.to_bits() as u64), ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, n as u64)];
        let cfg = LaunchConfig { grid: Dim3((n / 256) as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
        time("saxpy", reps, || m.launch("saxpy", &cfg, &mut args).unwrap());
    }
    if want("reduce") {
        let m = load(&format!("{dir}warp_reduce.{gen}.ptx"));
        let mut args = vec![ArgSpec::Buffer(x.clone()), ArgSpec::Buffer(vec![0; n / 32 * 4]), ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, n as u64)];
        let cfg = LaunchConfig { grid: Dim3((n / 256) as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
        time("reduce", reps, || m.launch("warp_reduce_down", &cfg, &mut args).unwrap());
    }
    if want("sgemm") {
        let m = load(&format!("{dir}matmul_tiled.{gen}.ptx"));
        // SGEMM_N: the matrix size (a multiple of 16), default 1024 (as in benches/c).
        let k: usize = std::env::var("SGEMM_N").ok().and_then(|s| s.parse().ok()).unwrap_or(1024);
        let mut args = vec![
            ArgSpec::Buffer(f32s((0..k * k).map(|i| (i % 13) as f32 * 0.25))),
            ArgSpec::Buffer(f32s((0..k * k).map(|i| (i % 11) as f32 * 0.5))),
            ArgSpec::Buffer(vec![0; k * k * 4]),
            ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, k as u64),
        ];
        let cfg = LaunchConfig { grid: Dim3((k / 16) as u32, (k / 16) as u32, 1), block: Dim3(16, 16, 1), dyn_smem: 0 };
        time("sgemm", reps, || m.launch("matmul_tiled", &cfg, &mut args).unwrap());
    }
    if want("scan") {
        // Inclusive scans of 256-element blocks (warp shuffles, then the warps' totals through
        // shared memory between two barriers).
        let m = load(&format!("{dir}block_scan.{gen}.ptx"));
        let xs: Vec<u8> = (0..n).flat_map(|i| ((i % 7) as i32 - 3).to_le_bytes()).collect();
        let mut args = vec![ArgSpec::Buffer(xs), ArgSpec::Buffer(vec![0; n * 4]), ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, n as u64)];
        let cfg = LaunchConfig { grid: Dim3((n / 256) as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
        time("scan", reps, || m.launch("block_inclusive_scan", &cfg, &mut args).unwrap());
    }
    if want("histogram") {
        let m = load(&format!("{dir}histogram.{gen}.ptx"));
        let mut s: u32 = 12345;
        let bytes: Vec<u8> = (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                s as u8
            })
            .collect();
        let mut args = vec![ArgSpec::Buffer(bytes), ArgSpec::Buffer(vec![0; 1024]), ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, n as u64)];
        let cfg = LaunchConfig { grid: Dim3(1024, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
        time("histogram", reps, || m.launch("histogram256", &cfg, &mut args).unwrap());
    }
    if want("stencil") {
        let m = load(&format!("{dir}stencil2d.{gen}.ptx"));
        let w = 4096usize;
        let mut args = vec![ArgSpec::Buffer(f32s((0..w * w).map(|i| (i % 101) as f32))), ArgSpec::Buffer(vec![0; w * w * 4]), ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, w as u64), ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, w as u64)];
        // STENCIL_BLOCK=WxH: the block shape (default 32x8; 16x16 runs the kernel's version of
        // tile warps, 8x32 its version of one-row warps for narrow blocks).
        let (bx, by) = std::env::var("STENCIL_BLOCK").ok().and_then(|s| s.split_once('x').and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))).unwrap_or((32, 8));
        let cfg = LaunchConfig { grid: Dim3((w / bx) as u32, (w / by) as u32, 1), block: Dim3(bx as u32, by as u32, 1), dyn_smem: 0 };
        time("stencil", reps, || m.launch("stencil2d", &cfg, &mut args).unwrap());
    }
    // `overhead` (only when asked for): 2^18 CTAs of 256 threads of kernels that do nothing,
    // with 0, 1 and 2 barriers: the runtime's cost per CTA and the phase machinery's.
    if only.as_deref().map_or(false, |o| o.split(',').any(|x| x == "overhead")) {
        let m = load(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/overhead.ptx"));
        let cfg = LaunchConfig { grid: Dim3(1 << 18, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
        for k in ["empty", "one_barrier", "two_barriers"] {
            let mut args = vec![ArgSpec::Scalar(ptxr::syntax::ast::Type::U64, 0)];
            time(&format!("overhead/{k}"), reps, || m.launch(k, &cfg, &mut args).unwrap());
        }
        return;
    }
    // `paths` (only when asked for): the corpus's kernels with CTA barriers on each path, for
    // `--exec auto`'s choice between them (time only; no C baseline).
    if only.as_deref().map_or(false, |o| o.split(',').any(|x| x == "paths")) {
        let s32 = |v: usize| ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, v as u64);
        let m1 = 1usize << 24;
        for exec in [ptxr::codegen::warp::Exec::Simd, ptxr::codegen::warp::Exec::Thread] {
            ptxr::codegen::warp::set_exec(exec);
            let tag = if exec == ptxr::codegen::warp::Exec::Thread { "thread" } else { "simd" };
            let ints: Vec<u8> = (0..m1).flat_map(|i| ((i as u32).wrapping_mul(2654435761) as i32).to_le_bytes()).collect();
            let m = load(&format!("{dir}bitonic_sort.{gen}.ptx"));
            let mut args = vec![ArgSpec::Buffer(ints.clone()), s32(m1)];
            let cfg = LaunchConfig { grid: Dim3((m1 / 1024) as u32, 1, 1), block: Dim3(1024, 1, 1), dyn_smem: 0 };
            time(&format!("bitonic_sort/{tag}"), reps, || m.launch("bitonic_sort_block", &cfg, &mut args).unwrap());
            let m = load(&format!("{dir}reduce_shared.{gen}.ptx"));
            let mut args = vec![ArgSpec::Buffer(x[..4 * m1].to_vec()), ArgSpec::Buffer(vec![0; 4 * m1 / 512]), s32(m1)];
            let cfg = LaunchConfig { grid: Dim3((m1 / 512) as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
            time(&format!("reduce_shared/{tag}"), reps, || m.launch("reduce_sum", &cfg, &mut args).unwrap());
            // The same sum as a grid-stride loop over 2^24 ints in 1024 CTAs, then a tree in
            // shared memory and one atomic per CTA (a yielding loop in a kernel with barriers).
            let mut args = vec![ArgSpec::Buffer(ints.clone()), ArgSpec::Buffer(vec![0; 4]), s32(m1)];
            let cfg = LaunchConfig { grid: Dim3(1024, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
            time(&format!("reduce_grid_stride/{tag}"), reps, || m.launch("reduce_sum_atomic", &cfg, &mut args).unwrap());
            let m = load(&format!("{dir}stencil1d.{gen}.ptx"));
            let mut args = vec![ArgSpec::Buffer(x[..4 * m1].to_vec()), ArgSpec::Buffer(vec![0; 4 * m1]), s32(m1)];
            let cfg = LaunchConfig { grid: Dim3((m1 / 256) as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
            time(&format!("stencil1d/{tag}"), reps, || m.launch("stencil1d", &cfg, &mut args).unwrap());
            let m = load(&format!("{dir}transpose.{gen}.ptx"));
            let w = 4096usize;
            let mut args = vec![ArgSpec::Buffer(x[..4 * w * w].to_vec()), ArgSpec::Buffer(vec![0; 4 * w * w]), s32(w), s32(w)];
            let cfg = LaunchConfig { grid: Dim3((w / 32) as u32, (w / 32) as u32, 1), block: Dim3(32, 8, 1), dyn_smem: 0 };
            time(&format!("transpose/{tag}"), reps, || m.launch("transpose", &cfg, &mut args).unwrap());
            // Compare-and-swap retry loops on one word for the whole grid (2^22 threads): a
            // double add through a 64-bit CAS, a float max with its early exit (tests/cuda/cas_loops.cu).
            let m = load(&format!("{dir}cas_loops.{gen}.ptx"));
            let n22 = 1usize << 22;
            let cfg = LaunchConfig { grid: Dim3((n22 / 256) as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
            let ds: Vec<u8> = (0..n22).flat_map(|i| ((i % 7) as f64).to_le_bytes()).collect();
            let mut args = vec![ArgSpec::Buffer(ds), ArgSpec::Buffer(0f64.to_le_bytes().to_vec()), s32(n22)];
            time(&format!("cas_add_f64/{tag}"), reps, || m.launch("cas_add_f64", &cfg, &mut args).unwrap());
            let fs = f32s((0..n22).map(|i| ((i as u32).wrapping_mul(2654435761) >> 8) as f32));
            let mut args = vec![ArgSpec::Buffer(fs), ArgSpec::Buffer(f32s([f32::NEG_INFINITY; 5].into_iter())), s32(n22)];
            time(&format!("cas_max_f32/{tag}"), reps, || {
                args[1] = ArgSpec::Buffer(f32s([f32::NEG_INFINITY; 5].into_iter()));
                m.launch("cas_max_f32", &cfg, &mut args).unwrap()
            });
        }
        return;
    }
    // Idioms where a thread has a loop of its own (benches/cuda/idioms.cu), on the
    // warp-vector path and, as `NAME/thread`, on the per-thread path.
    let idioms = format!("{}/benches/idioms.{gen}.ptx", env!("CARGO_MANIFEST_DIR"));
    for exec in [ptxr::codegen::warp::Exec::Simd, ptxr::codegen::warp::Exec::Thread] {
        ptxr::codegen::warp::set_exec(exec);
        let tag = if exec == ptxr::codegen::warp::Exec::Thread { "/thread" } else { "" };
        let m = load(&idioms);
        let s32 = |v: usize| ArgSpec::Scalar(ptxr::syntax::ast::Type::S32, v as u64);
        if want("saxpy_grid") {
            let mut args = vec![ArgSpec::Buffer(x.clone()), ArgSpec::Buffer(f32s((0..n).map(|i| (i % 7) as f32))), ArgSpec::Scalar(ptxr::syntax::ast::Type::F32, 2.0f32.to_bits() as u64), s32(n)];
            let cfg = LaunchConfig { grid: Dim3(1024, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
            time(&format!("saxpy_grid{tag}"), reps, || m.launch("saxpy_grid", &cfg, &mut args).unwrap());
        }
        if want("matmul_naive") {
            let k = 512usize;
            let mut args = vec![ArgSpec::Buffer(f32s((0..k * k).map(|i| (i % 13) as f32 * 0.25))), ArgSpec::Buffer(f32s((0..k * k).map(|i| (i % 11) as f32 * 0.5))), ArgSpec::Buffer(vec![0; k * k * 4]), s32(k)];
            let cfg = LaunchConfig { grid: Dim3((k / 32) as u32, (k / 8) as u32, 1), block: Dim3(32, 8, 1), dyn_smem: 0 };
            time(&format!("matmul_naive{tag}"), reps, || m.launch("matmul_naive", &cfg, &mut args).unwrap());
        }
        if want("softmax") {
            let (rows, cols) = (4096usize, 1024usize);
            let mut args = vec![ArgSpec::Buffer(f32s((0..rows * cols).map(|i| (i % 97) as f32 * 0.01))), ArgSpec::Buffer(vec![0; rows * cols * 4]), s32(cols)];
            let cfg = LaunchConfig { grid: Dim3(rows as u32, 1, 1), block: Dim3(256, 1, 1), dyn_smem: 0 };
            time(&format!("softmax{tag}"), reps, || m.launch("softmax_rows", &cfg, &mut args).unwrap());
        }
        if want("mandelbrot") {
            let (w, h) = (1024usize, 1024usize);
            let mut args = vec![ArgSpec::Buffer(vec![0; w * h * 4]), s32(w), s32(h), s32(256)];
            let cfg = LaunchConfig { grid: Dim3((w / 32) as u32, (h / 8) as u32, 1), block: Dim3(32, 8, 1), dyn_smem: 0 };
            time(&format!("mandelbrot{tag}"), reps, || m.launch("mandelbrot", &cfg, &mut args).unwrap());
        }
    }
}
