//! Runs the kernels that build.rs compiled with `ptxr::Build`, through the generated bindings,
//! and checks them against plain Rust. Exits non-zero on a mismatch.

use ptxr_runtime::LaunchConfig;

// One module per PTX file (saxpy, warp_reduce, reduce_shared), re-exported flat.
include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// Kernels compiled for the checking mode (build.rs: `.check(true)`).
mod checked {
    include!(concat!(env!("OUT_DIR"), "/checked.rs"));
}

fn main() {
    let mut failures = 0;
    let mut check = |ok: bool, what: String| {
        if !ok {
            eprintln!("FAIL: {what}");
            failures += 1;
        }
    };

    // saxpy: y = a*x + y (fma.rn.f32 in the PTX).
    let n = 100_003usize;
    let mut x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let mut y: Vec<f32> = (0..n).map(|i| 1.0 / (i + 1) as f32).collect();
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5f32.mul_add(*x, *y)).collect();
    saxpy::saxpy(&LaunchConfig::new(n.div_ceil(256) as u32, 256), &mut x, &mut y, 2.5, n as u32).expect("saxpy");
    let bad = y.iter().zip(&want).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    check(bad == 0, format!("saxpy: {bad} mismatches"));

    // The raw binding: addresses as u64, unsafe.
    let mut y2: Vec<f32> = vec![1.0; 64];
    let mut x2: Vec<f32> = (0..64).map(|i| i as f32).collect();
    unsafe { saxpy_raw(&LaunchConfig::new(1, 64), x2.as_mut_ptr() as u64, y2.as_mut_ptr() as u64, -1.0, 64) }.expect("saxpy_raw");
    check(y2.iter().enumerate().all(|(i, v)| *v == 1.0 - i as f32), "saxpy_raw".into());

    // Warp shuffles (the lane scheduler and its resolve): shfl.down sums per warp.
    let n = 5000usize;
    let mut input: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let mut out = vec![0f32; n.div_ceil(32)];
    warp_reduce_down(&LaunchConfig::new(n.div_ceil(128) as u32, 128), &mut input, &mut out, n as u32).expect("warp_reduce_down");
    for (w, got) in out.iter().enumerate() {
        let s: f32 = input[32 * w..(32 * w + 32).min(n)].iter().sum();
        check(*got == s, format!("warp_reduce_down: warp {w}: {got} != {s}"));
    }

    // shfl.bfly all-reduce: sum and max over each 32-aligned group.
    let mut iv: Vec<i32> = (0..n).map(|i| ((i as u32).wrapping_mul(2654435761) % 1000) as i32 - 500).collect();
    let (mut sum, mut max) = (vec![0i32; n], vec![0i32; n]);
    warp_reduce::warp_allreduce_xor(&LaunchConfig::new(n.div_ceil(128) as u32, 128), &mut iv, &mut sum, &mut max, n as u32).expect("warp_allreduce_xor");
    for i in 0..n {
        let g = &iv[i & !31..((i & !31) + 32).min(n)];
        let (s, m) = (g.iter().sum::<i32>(), *g.iter().max().unwrap());
        if sum[i] != s || max[i] != m {
            check(false, format!("warp_allreduce_xor: {i}: ({}, {}) != ({s}, {m})", sum[i], max[i]));
            break;
        }
    }

    // bar.sync and shared memory: a tree reduction per block.
    let (n, block) = (70_000usize, 256usize);
    let blocks = n.div_ceil(2 * block);
    let mut input: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let mut sums = vec![0f32; blocks];
    reduce_sum(&LaunchConfig::new(blocks as u32, block as u32), &mut input, &mut sums, n as u32).expect("reduce_sum");
    for (b, got) in sums.iter().enumerate() {
        let s: f32 = input[2 * block * b..(2 * block * (b + 1)).min(n)].iter().sum();
        check(*got == s, format!("reduce_sum: block {b}: {got} != {s}"));
    }

    // Errors come back as LaunchError with the same messages as `ptxr run`.
    let e = reduce_sum(&LaunchConfig::new(1, 2048), &mut input, &mut sums, n as u32).unwrap_err();
    check(e.to_string().contains("exceeds the limits"), format!("limit error: {e}"));
    check(REDUCE_SUM.uses_sync && REDUCE_SUM.static_smem >= 1024, format!("REDUCE_SUM: {REDUCE_SUM:?}"));

    // The checking mode: scale_upto doubles x[0..=n], one element past a buffer of n. With a
    // buffer of n + 1 elements it is clean; with n elements the launch stops at thread n's
    // load, 0 bytes past the end, and reports where.
    let n = 1000usize;
    let mut x: Vec<f32> = (0..=n).map(|i| i as f32).collect();
    checked::scale_upto(&LaunchConfig::new(8, 128), &mut x, n as u32).expect("scale_upto in bounds");
    check(x.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32), "scale_upto (checked, in bounds)".into());
    let mut x: Vec<f32> = vec![1.0; n];
    let e = checked::scale_upto(&LaunchConfig::new(8, 128), &mut x, n as u32).unwrap_err().to_string();
    println!("the checked launch stopped as expected: {e}");
    check(e.contains("scale.ptx:24:") && e.contains("in kernel `scale_upto`") && e.contains("thread (104,0,0)") && e.contains("CTA (7,0,0)") && e.contains("invalid __global__ read of 4 bytes") && e.contains("0 bytes after the end of buffer argument 0 (`px`)"), format!("checked report: {e}"));

    if failures > 0 {
        eprintln!("{failures} check(s) failed");
        std::process::exit(1);
    }
    println!("rust example: all kernels match the references");
}
