//! `launch_cta_fn` without the compiler: CTA functions written here in Rust to the ABI of
//! `ptxr_runtime::abi` (what ptxr's generated code implements) run over a grid; the checks
//! are what the launch contract says (every CTA runs once with its `%ctaid`, parameters are
//! laid out as the descriptor says, limits and statuses become errors).

use ptxr_runtime::abi::{self, CtaCtx};
use ptxr_runtime::{launch_cta_fn, ArgValue, Dim3, KernelDesc, LaunchConfig, ParamDesc};

const PARAMS: &[ParamDesc] = &[ParamDesc { name: "out", ty: "u64", offset: 0, size: 8 }, ParamDesc { name: "n", ty: "u32", offset: 8, size: 4 }, ParamDesc { name: "k", ty: "u32", offset: 12, size: 4 }];

const FILL: KernelDesc = KernelDesc { name: "fill", file: "fill.ptx", params: PARAMS, param_size: 16, static_smem: 0, reqntid: None, maxntid: None, frame_size: 0, uses_sync: false, cta_group: false, cluster: None, cancellable: false };

/// out[i] = i * k + 1 for the CTA's threads with i = linear thread id < n; also checks that
/// the CTA sees the launch's shape.
unsafe extern "C" fn fill(cta: *mut CtaCtx) -> i32 {
    let c = &mut *cta;
    let out = (c.params as *const u64).read_unaligned() as *mut u32;
    let n = (c.params.add(8) as *const u32).read_unaligned();
    let k = (c.params.add(12) as *const u32).read_unaligned();
    let [bx, by, bz] = c.ntid;
    let [gx, gy, _] = c.nctaid;
    let cta_lin = (c.ctaid[2] * gy + c.ctaid[1]) * gx + c.ctaid[0];
    for t in 0..bx * by * bz {
        let i = cta_lin * bx * by * bz + t;
        if i < n {
            *out.add(i as usize) += i * k + 1;
        }
    }
    0
}

/// Stops with a trap at line 42 in CTA (1,0,0), thread 5.
unsafe extern "C" fn traps(cta: *mut CtaCtx) -> i32 {
    let c = &mut *cta;
    if c.ctaid[0] == 1 {
        c.status = abi::STATUS_TRAP;
        c.status_line = 42;
        c.status_thread = 5;
    }
    0
}

fn launch(f: ptxr_runtime::CtaFn, k: &KernelDesc, cfg: &LaunchConfig, out: &mut [u32], n: u32, kk: u32) -> Result<(), String> {
    let addr = out.as_mut_ptr() as u64;
    unsafe { launch_cta_fn(f, k, cfg, &[ArgValue::B64(addr), n.into(), kk.into()]) }.map_err(|e| e.0)
}

#[test]
fn every_cta_runs_once_with_its_ids() {
    for (grid, block) in [(Dim3(7, 1, 1), Dim3(33, 1, 1)), (Dim3(3, 4, 2), Dim3(8, 2, 2)), (Dim3(1000, 1, 1), Dim3(1, 1, 1))] {
        let cfg = LaunchConfig { grid, block, dyn_smem: 0 };
        let total = (grid.count() * block.count()) as usize;
        let n = total as u32 - 3;
        let mut out = vec![0u32; total];
        launch(fill, &FILL, &cfg, &mut out, n, 3).unwrap();
        for (i, v) in out.iter().enumerate() {
            let want = if (i as u32) < n { i as u32 * 3 + 1 } else { 0 };
            assert_eq!(*v, want, "grid {grid:?} block {block:?} element {i}");
        }
    }
}

#[test]
fn limits_and_arguments_are_checked() {
    let mut out = vec![0u32; 4];
    let err = launch(fill, &FILL, &LaunchConfig::new(1, 2048), &mut out, 4, 1).unwrap_err();
    assert!(err.contains("block 2048x1x1 exceeds the limits"), "{err}");
    let err = launch(fill, &FILL, &LaunchConfig::new((2, 0, 1), 4), &mut out, 4, 1).unwrap_err();
    assert!(err.contains("grid 2x0x1 and block 4x1x1 must have every dimension at least 1"), "{err}");
    let err = launch(fill, &FILL, &LaunchConfig::new(1, 4).shared(240_000), &mut out, 4, 1).unwrap_err();
    assert!(err.contains("exceeds the 232448 byte limit"), "{err}");
    let req = KernelDesc { reqntid: Some([64, 1, 1]), ..FILL };
    let err = launch(fill, &req, &LaunchConfig::new(1, 32), &mut out, 4, 1).unwrap_err();
    assert!(err.contains("requires a block of 64x1x1 threads"), "{err}");
    let err = unsafe { launch_cta_fn(fill, &FILL, &LaunchConfig::new(1, 4), &[ArgValue::B64(0)]) }.unwrap_err().0;
    assert!(err.contains("takes 3 parameters, 1 given"), "{err}");
    let err = unsafe { launch_cta_fn(fill, &FILL, &LaunchConfig::new(1, 4), &[ArgValue::B32(0), 4u32.into(), 1u32.into()]) }.unwrap_err().0;
    assert!(err.contains("argument 0 (`out`) is .u64 (8 bytes) but 4 bytes were given"), "{err}");
    assert_eq!(out, vec![0; 4], "no launch ran");
}

#[test]
fn a_status_names_file_line_cta_and_thread() {
    let k = KernelDesc { name: "traps", ..FILL };
    let mut out = vec![0u32; 4];
    let err = launch(traps, &k, &LaunchConfig::new(3, (4, 2)), &mut out, 4, 1).unwrap_err();
    assert_eq!(err, "fill.ptx:42: in kernel `traps`, CTA (1,0,0), thread (1,1,0): error: `trap` executed");
}

/// Spins until the launch's cancel word is set (as generated code polls it at a loop's back
/// edge), then stops with the timeout status at line 7.
unsafe extern "C" fn spins(cta: *mut CtaCtx) -> i32 {
    let c = &mut *cta;
    let word = &*(c.host as *const std::sync::atomic::AtomicU32);
    while word.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        std::hint::spin_loop();
    }
    c.status = abi::STATUS_TIMEOUT;
    c.status_line = 7;
    0
}

#[test]
fn a_launch_past_its_time_limit_stops_with_the_running_ctas() {
    let k = KernelDesc { name: "spins", ..FILL };
    let mut out = vec![0u32; 4];
    ptxr_runtime::set_timeout(Some(std::time::Duration::from_millis(200)));
    let start = std::time::Instant::now();
    let err = launch(spins, &k, &LaunchConfig::new(6, 32), &mut out, 4, 1).unwrap_err();
    let took = start.elapsed();
    // A launch that ends in time is not affected.
    launch(fill, &FILL, &LaunchConfig::new(1, 4), &mut out, 4, 2).unwrap();
    ptxr_runtime::set_timeout(None);
    assert!(err.starts_with("fill.ptx: error: kernel `spins`: launch timed out after 0.2 s"), "{err}");
    assert!(err.contains("CTAs still running: ("), "{err}");
    assert!(err.contains("stopped at line 7"), "{err}");
    assert!(took < std::time::Duration::from_secs(20), "the launch took {took:?}");
    assert_eq!(out, vec![1, 3, 5, 7]);
}
