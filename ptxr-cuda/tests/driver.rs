//! The driver library as programs use it: C programs built against NVIDIA's `cuda.h` and
//! linked with `-lcuda`, and Python through NVIDIA's cuda-bindings and numba-cuda, all
//! with this build's `libcuda.so.1` first on the loader's path. Expected results are
//! computed by each program on the host (or NumPy); expected error codes are those CUDA's
//! documentation gives (ptxr-cuda/tests/c/errors.c). The CUDA headers, NVRTC, cuda-bindings
//! and numba-cuda come from the project's venv (scripts/setup.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The directory of this build's driver library: target/<profile>/deps, where cargo puts
/// the `libcuda.so` it built for this test (it copies it up to target/<profile> only for
/// `cargo build`), with the names programs ask for linked to it.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    assert!(dir.join("libcuda.so").exists(), "{} has no libcuda.so", dir.display());
    for name in ["libcuda.so.1", "libcudart.so.12", "libcudart.so"] {
        let link = dir.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink("libcuda.so", &link);
        }
    }
    dir
}

fn site_packages() -> PathBuf {
    let lib = root().join(".venv/lib");
    let py = std::fs::read_dir(&lib).unwrap_or_else(|_| panic!("{}: no venv; run scripts/setup.sh", lib.display())).filter_map(|e| e.ok()).find(|e| e.file_name().to_string_lossy().starts_with("python3")).expect("a python3.* venv");
    py.path().join("site-packages")
}

fn nvidia(sub: &str) -> PathBuf {
    let p = site_packages().join("nvidia").join(sub);
    assert!(p.exists(), "{} missing: run scripts/setup.sh", p.display());
    p
}

/// Builds a C program against cuda.h (and NVRTC if `nvrtc`) and ptxr's libcuda.
fn build_c(src: &Path, out: &Path, nvrtc: bool) {
    let mut cmd = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cmd.arg(src).arg("-o").arg(out).arg("-I").arg(nvidia("cuda_runtime/include")).arg("-L").arg(lib_dir()).arg("-lcuda").arg("-lm");
    if nvrtc {
        let lib = nvidia("cuda_nvrtc/lib");
        cmd.arg("-I").arg(nvidia("cuda_nvrtc/include")).arg("-L").arg(&lib).arg("-l:libnvrtc.so.12").arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let st = cmd.status().expect("run cc");
    assert!(st.success(), "cc {} failed", src.display());
}

/// Runs `cmd` with this build's driver library and `cache` as the module cache.
fn run(mut cmd: Command, cache: &Path) -> (bool, String) {
    cmd.env("LD_LIBRARY_PATH", lib_dir()).env("PTXR_CACHE_DIR", cache);
    let out = cmd.output().expect("run program");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn c_program_with_nvrtc_streams_and_events() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("driver_api");
    build_c(&root().join("examples/driver/driver_api.c"), &exe, true);
    let cache = tmp.path().join("cache");
    let (ok, text) = run(Command::new(&exe), &cache);
    assert!(ok && text.contains("PASSED"), "{text}");
    assert!(text.contains("1048576/1048576 elements correct"), "{text}");
    // The module was compiled once and cached: a second run finds it and compiles nothing.
    let so: Vec<_> = std::fs::read_dir(&cache).unwrap().filter_map(|e| e.ok()).filter(|e| e.path().extension().map_or(false, |x| x == "so")).collect();
    assert_eq!(so.len(), 1, "one compiled module in the cache");
    let stamp = so[0].metadata().unwrap().modified().unwrap();
    let (ok, text) = run(Command::new(&exe), &cache);
    assert!(ok && text.contains("PASSED"), "{text}");
    assert_eq!(std::fs::metadata(so[0].path()).unwrap().modified().unwrap(), stamp, "the cached module was used, not rebuilt");
}

/// Thread block clusters (sm_90): NVRTC-compiled cooperative groups code with distributed
/// shared memory, clusters from the launch attribute and from `__cluster_dims__`
/// (examples/driver/clusters.c checks its results against the host's).
#[test]
fn c_program_with_clusters() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("clusters");
    build_c(&root().join("examples/driver/clusters.c"), &exe, true);
    let mut cmd = Command::new(&exe);
    cmd.arg(nvidia("cuda_runtime/include")).arg(nvidia("cuda_cccl/include"));
    let (ok, text) = run(cmd, &tmp.path().join("cache"));
    assert!(ok && text.contains("PASSED"), "{text}");
    for size in [1, 2, 4, 8] {
        assert!(text.contains(&format!("clusters of {size} CTAs: 0 of 1024 bins wrong")), "{text}");
    }
}

/// `PTXR_CHECK=1`: the checking mode for programs on the driver API (ptxr-cuda/tests/c/check.c):
/// a write past a cuMemAlloc'd buffer is CUDA_ERROR_ILLEGAL_ADDRESS with ptxr's report.
#[test]
fn checking_mode_through_the_driver_api() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("check");
    build_c(&root().join("ptxr-cuda/tests/c/check.c"), &exe, false);
    let mut cmd = Command::new(&exe);
    cmd.env("PTXR_CHECK", "1");
    let (ok, text) = run(cmd, &tmp.path().join("cache"));
    assert!(ok && text.contains("PASSED"), "{text}");
    assert!(text.contains("within: 0") && text.contains("past the end: CUDA_ERROR_ILLEGAL_ADDRESS"), "{text}");
    assert!(text.contains(".ptx:11:3: in kernel `fill`, CTA (0,0,0), thread (64,0,0): error: invalid __global__ write of 4 bytes at 0x") && text.contains(": 0 bytes after the end of device allocation 0x"), "{text}");
}

#[test]
fn error_codes_are_cudas() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("errors");
    build_c(&root().join("ptxr-cuda/tests/c/errors.c"), &exe, false);
    let mut cmd = Command::new(&exe);
    cmd.env("PTXR_LAUNCH_TIMEOUT", "0.5");
    let (ok, text) = run(cmd, &tmp.path().join("cache"));
    assert!(ok && text.contains("PASSED"), "{text}");
    // ptxr's message for each failure is printed once, with the PTX position.
    assert!(text.contains(".ptx:5:3: error: unknown instruction `frobnicate`"), "{text}");
    assert!(text.contains("in kernel `traps`, CTA (0,0,0), thread (0,0,0): error: `trap` executed"), "{text}");
    assert!(text.contains("kernel `spins`: launch timed out after 0.5 s"), "{text}");
    assert!(text.contains("in kernel `wild`, CTA (") && text.contains("error: an illegal memory access at address 0x10"), "{text}");
}

fn python(script: &str, cache: &Path) -> (bool, String) {
    let py = root().join(".venv/bin/python");
    let mut cmd = Command::new(py);
    cmd.arg("-W").arg("ignore").arg(root().join(script));
    run(cmd, cache)
}

#[test]
fn cuda_bindings_driver_api() {
    let tmp = tempfile::tempdir().unwrap();
    let (ok, text) = python("examples/driver/bindings_saxpy.py", tmp.path());
    assert!(ok && text.contains("saxpy 100000/100000 correct"), "{text}");
}

#[test]
fn numba_cuda_kernels() {
    let tmp = tempfile::tempdir().unwrap();
    let (ok, text) = python("examples/driver/numba_kernels.py", tmp.path());
    assert!(ok && text.contains("PASSED"), "{text}");
}

/// The CUDA C++ programs of examples/cuda, built by `ptxr cuda` (the library function
/// behind the command) and run: each checks its own results against the host's and prints
/// PASSED.
#[test]
fn cuda_programs_built_by_ptxr_cuda() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = root().join("examples/cuda");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().map_or(false, |x| x == "cu")).collect();
    programs.sort();
    assert!(programs.len() >= 5, "{programs:?}");
    for src in programs {
        let exe = tmp.path().join(src.file_stem().unwrap());
        let args: Vec<String> = vec![src.display().to_string(), "-o".into(), exe.display().to_string()];
        let mut o = ptxr::cudacc::Options::parse(&args).unwrap();
        o.runtime_dir = Some(lib_dir());
        ptxr::cudacc::compile(&o).unwrap_or_else(|e| panic!("ptxr cuda {}: {e:#}", src.display()));
        let (ok, text) = run(Command::new(&exe), &tmp.path().join("cache"));
        assert!(ok && text.contains("PASSED"), "{}:\n{text}", src.display());
        if src.ends_with("printf_assert.cu") {
            for line in ["block 0 of 3 says 7", "block 1 of 3 says 14", "block 2 of 3 says 21"] {
                assert!(text.contains(line), "{text}");
            }
            assert!(text.contains("Assertion `v[i] > 0` failed"), "{text}");
        }
    }
}

#[test]
fn ptxr_cuda_options() {
    let p = |a: &[&str]| ptxr::cudacc::Options::parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let o = p(&["-arch=sm_90", "-O2", "-I", "inc", "-DN=4", "-c", "a.cu", "-o", "a.o", "-lfoo", "-Xcompiler", "-Wall,-fPIC"]).unwrap();
    assert_eq!((o.arch.as_str(), o.opt.as_str(), o.compile_only), ("sm_90", "2", true));
    assert_eq!((o.includes, o.defines, o.libs, o.host_args), (vec!["inc".to_string()], vec!["N=4".to_string()], vec!["foo".to_string()], vec!["-Wall".to_string(), "-fPIC".to_string()]));
    assert_eq!(p(&["--gpu-architecture", "compute_75", "x.cu"]).unwrap().arch, "sm_75");
    assert!(p(&["--frobnicate", "a.cu"]).unwrap_err().to_string().contains("unknown option `--frobnicate`"));
    assert!(p(&["-O"]).is_err());
    assert!(p(&[]).unwrap_err().to_string().contains("no input files"));
}

/// numba-cuda's own test modules (shipped with it, written for GPUs, expected values from
/// NumPy on the host), run unmodified against ptxr's libcuda.so.1: a selection covering
/// atomics, barriers, warp intrinsics, shared/local/constant memory, records, complex and
/// bfloat16 arithmetic, reductions, the dispatcher's kernel attributes, cooperative groups
/// (grid-wide synchronization, a block-scope `cuda::barrier` polled in a device function),
/// numba's documentation examples that synchronize the grid, and driver-level contexts,
/// memory, events and callbacks.
#[test]
fn numba_cuda_own_test_modules() {
    let tmp = tempfile::tempdir().unwrap();
    let cudapy = ["test_atomics", "test_sync", "test_warp_ops", "test_sm", "test_localmem", "test_constmem", "test_reduction", "test_dispatcher", "test_record_dtype", "test_complex", "test_bfloat16", "test_transpose", "test_laplace", "test_blackscholes", "test_cooperative_groups"];
    // The driver-level ones: contexts, memory, deallocation, pinned and managed memory,
    // events, module callbacks, the profiler calls.
    let cudadrv = ["test_context_stack", "test_cuda_memory", "test_deallocations", "test_pinned", "test_managed_alloc", "test_events", "test_module_callbacks", "test_profiler"];
    let mut cmd = Command::new(root().join(".venv/bin/python"));
    cmd.args(["-W", "ignore", "-m", "unittest", "-q"])
        .args(cudapy.iter().map(|m| format!("numba.cuda.tests.cudapy.{m}")))
        // numba-cuda's documentation examples that synchronize the whole grid.
        .args(["test_cg", "test_laplace", "test_sessionize"].iter().map(|m| format!("numba.cuda.tests.doc_examples.{m}")))
        .args(cudadrv.iter().map(|m| format!("numba.cuda.tests.cudadrv.{m}")))
        .env("PTXR_CUDA_QUIET", "1")
        .env("PTXR_LAUNCH_TIMEOUT", "120");
    let (ok, text) = run(cmd, tmp.path());
    assert!(ok, "{text}");
    let ran = text.lines().find(|l| l.starts_with("Ran ")).unwrap_or("");
    let n: usize = ran.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(n >= 361 && text.lines().any(|l| l.starts_with("OK")), "{text}");
}

/// Tensor maps through the driver API: Triton's persistent TMA matmul for sm_90a with maps
/// from `cuTensorMapEncodeTiled` over device memory gives the H200's bytes
/// (ptxr-cuda/tests/c/tma_driver.c).
#[test]
fn tensor_maps_from_cu_tensor_map_encode_tiled() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("tma_driver");
    build_c(&root().join("ptxr-cuda/tests/c/tma_driver.c"), &exe, false);
    let mut cmd = Command::new(&exe);
    cmd.arg(root().join("tests/triton_sm90"));
    let (ok, text) = run(cmd, &tmp.path().join("cache"));
    assert!(ok && text.contains("refused 1\n") && text.contains("same as the H200"), "{text}");
}

/// im2col tensor maps through the driver API: a Gluon TMA im2col kernel for sm_90a with its
/// input map from `cuTensorMapEncodeIm2col` over device memory gives numpy's rows; an empty
/// bounding box and a rank-2 map are refused (ptxr-cuda/tests/c/im2col_driver.c).
#[test]
fn tensor_maps_from_cu_tensor_map_encode_im2col() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("im2col_driver");
    build_c(&root().join("ptxr-cuda/tests/c/im2col_driver.c"), &exe, false);
    let mut cmd = Command::new(&exe);
    cmd.arg(root().join("tests/triton_sm90"));
    let (ok, text) = run(cmd, &tmp.path().join("cache"));
    assert!(ok && text.contains("refused 1 1\n") && text.contains("same as numpy"), "{text}");
}

/// IPC memory handles between two processes (ptxr-cuda/tests/c/ipc.c): the child maps the
/// parent's allocation, reads its values and writes its own, which the parent then reads.
#[test]
fn ipc_memory_handles_between_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("ipc");
    build_c(&root().join("ptxr-cuda/tests/c/ipc.c"), &exe, false);
    let (ok, text) = run(Command::new(&exe), &tmp.path().join("cache"));
    assert!(ok && text.contains("child: 256/256 of the parent's values"), "{text}");
    assert!(text.contains("own handle refused: 1; child exit 0; parent sees 256/256 of the child's values"), "{text}");
}
