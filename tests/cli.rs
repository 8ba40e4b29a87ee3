//! The command line as a user meets it: exit codes and one clear message for bad PTX, wrong
//! launches, traps, failed asserts, deadlocks; printf output; never a panic.

use std::process::Command;

fn ptxr(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxr")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("run ptxr");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "ptxr panicked: {stderr}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn bad_ptx_reports_every_error_with_line_and_column() {
    let (rc, _, err) = ptxr(&["check", "tests/cli/bad.ptx"]);
    assert_eq!(rc, 1);
    // The missing `;` after `mov` is reported at the end of its line.
    assert!(err.contains("tests/cli/bad.ptx:8:"), "{err}");
    assert!(err.contains("error:"), "{err}");
    assert!(err.contains('^'), "caret line missing: {err}");
}

#[test]
fn validation_errors_name_the_problem() {
    let src = "tests/cli/bad2.ptx";
    std::fs::write(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(src),
        ".version 6.4\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\tadd.rn.u32 %r1, %r1, 1;\n\tadd.u32 %r9, %r1, 1;\n\tbra NOWHERE;\n\tret;\n}\n",
    )
    .unwrap();
    let (rc, _, err) = ptxr(&["check", src]);
    assert_eq!(rc, 1);
    assert!(err.contains("bad2.ptx:7:2: error:") && err.contains(".rn"), "{err}");
    assert!(err.contains("bad2.ptx:8:") && err.contains("%r9"), "{err}");
    assert!(err.contains("bad2.ptx:9:") && err.contains("NOWHERE"), "{err}");
}

#[test]
fn missing_file_and_unknown_kernel() {
    let (rc, _, err) = ptxr(&["check", "tests/cli/nope.ptx"]);
    assert_ne!(rc, 0);
    assert!(err.contains("nope.ptx"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "nosuch"]);
    assert_ne!(rc, 0);
    assert!(err.contains("no kernel named `nosuch`") && err.contains("trapper"), "{err}");
}

#[test]
fn wrong_launches_are_refused() {
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper"]);
    assert_ne!(rc, 0);
    assert!(err.contains("takes 1 parameters, 0 given"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--arg", "u64:1"]);
    assert_ne!(rc, 0);
    assert!(err.contains("4 bytes") && err.contains("8 bytes"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--block", "2048", "--arg", "u32:1"]);
    assert_ne!(rc, 0);
    assert!(err.contains("exceeds the limits"), "{err}");
    // bytes:HEX for a by-value parameter must have its exact size.
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--arg", "bytes:0102030405"]);
    assert_ne!(rc, 0);
    assert!(err.contains("is 4 bytes but 5 bytes were given"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--arg", "bytes:012"]);
    assert_ne!(rc, 0);
    assert!(err.contains("even number of hex digits"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--arg", "u32:zz"]);
    assert_ne!(rc, 0);
    assert!(err.contains("not an integer"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--shared", "1000000", "--arg", "u32:1"]);
    assert_ne!(rc, 0);
    assert!(err.contains("shared memory"), "{err}");
}

#[test]
fn trap_ends_the_launch_with_its_location() {
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--grid", "3", "--block", "64", "--arg", "u32:5"]);
    assert_ne!(rc, 0);
    assert!(err.contains("misc.ptx:18:") && err.contains("`trap` executed") && err.contains("thread (5,0,0)"), "{err}");
    // No thread traps: success.
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "trapper", "--grid", "3", "--block", "64", "--arg", "u32:100"]);
    assert_eq!(rc, 0, "{err}");
}

#[test]
fn printf_prints_like_a_gpu() {
    let (rc, out, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "printer", "--block", "2", "--arg", "f64:1.5"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("tid=0 x=1.500000\n") && out.contains("tid=1 x=1.500000\n"), "{out}");
}

/// NVRTC's PTX of tests/cuda/oracle/printf.cu; the expected text is what an H100 printed for
/// the same launches (tests/filetests/ref/printf_gpu.py): every conversion with flags, widths,
/// precisions, `*`-less forms, `%a`, `%g`, inf/nan, strings and percent signs.
#[test]
fn printf_output_is_the_gpus() {
    let (rc, out, err) = ptxr(&[
        "run", "tests/cuda/oracle/printf.ptx", "--kernel", "printf_formats", "--block", "32",
        "--arg", "buf:s32:-42,7,0xdeadbeef,123456", "--arg", "buf:f64:3.14159265358979,-2.5e-3,0,1.1", "--arg", "buf:hex:68656c6c6f00",
    ]);
    assert_eq!(rc, 0, "{err}");
    let want = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cuda/oracle/printf_formats.expected")).unwrap();
    assert_eq!(out, want);
    // Lines of different threads come in any order on a GPU: compare them sorted.
    let (rc, out, err) = ptxr(&["run", "tests/cuda/oracle/printf.ptx", "--kernel", "printf_threads", "--grid", "2", "--block", "8", "--arg", "s32:13"]);
    assert_eq!(rc, 0, "{err}");
    let want = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cuda/oracle/printf_threads.expected")).unwrap();
    let sorted = |s: &str| {
        let mut v: Vec<&str> = s.lines().collect();
        v.sort();
        v.join("\n")
    };
    assert_eq!(sorted(&out), sorted(&want));
    assert_eq!(out.lines().count(), 13);
}

#[test]
fn cluster_shape_and_special_registers() {
    // .reqnctapercluster 2,1,1: ranks 0, 1 and 2 CTAs per cluster, CTA by CTA.
    let (rc, out, err) = ptxr(&["run", "tests/cli/cluster_pairs.ptx", "--kernel", "pairs", "--grid", "4", "--arg", "buf:zero:32", "--dump", "0=-"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(words(out.trim()), [0, 2, 1, 2, 0, 2, 1, 2]);
    // A launch whose clusters differ from the kernel's, or a grid that is not a whole number
    // of clusters, is an error.
    let (rc, _, err) = ptxr(&["run", "tests/cli/cluster_pairs.ptx", "--kernel", "pairs", "--grid", "4", "--cluster", "4", "--arg", "buf:zero:32"]);
    assert_ne!(rc, 0);
    assert!(err.contains("requires clusters of 2x1x1 CTAs (.reqnctapercluster); the launch asks for 4x1x1"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/cluster_pairs.ptx", "--kernel", "pairs", "--grid", "3", "--arg", "buf:zero:32"]);
    assert_ne!(rc, 0);
    assert!(err.contains("grid 3x1x1 is not a whole number of clusters of 2x1x1 CTAs"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/cluster_ring.ptx", "--kernel", "ring", "--grid", "32", "--cluster", "32", "--arg", "u64:0", "--arg", "u64:0", "--arg", "u64:0"]);
    assert_ne!(rc, 0);
    assert!(err.contains("a cluster has 1 to 16 CTAs"), "{err}");
    for (k, want) in [("explicit", "01000000"), ("implicit", "00000000")] {
        let (rc, out, err) = ptxr(&["run", "tests/cli/cluster_pairs.ptx", "--kernel", k, "--arg", "buf:zero:4", "--dump", "0=-"]);
        assert_eq!(rc, 0, "{k}: {err}");
        assert_eq!(out.trim(), want, "{k}");
    }
}

fn words(hex: &str) -> Vec<u32> {
    let b: Vec<u8> = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Distributed shared memory and the cluster barrier (tests/cli/cluster_ring.ptx): 8 CTAs of
/// 64 threads in clusters of 2, 4 and 8, on both paths. The expected values follow from the
/// kernel's comment: CTA c is rank r = c mod n of cluster c / n; its threads read the next
/// rank's array, where rank r' stored r' * 1000 + tid; rank 0's counter ends at n * 64.
#[test]
fn clusters_share_memory_and_meet_at_the_cluster_barrier() {
    for exec in ["simd", "thread"] {
        for n in [2u32, 4, 8] {
            let ns = n.to_string();
            let (rc, out, err) = ptxr(&[
                "run", "tests/cli/cluster_ring.ptx", "--exec", exec, "--kernel", "ring", "--grid", "8", "--block", "64", "--cluster", &ns,
                "--arg", "buf:zero:2048", "--arg", "buf:zero:32", "--arg", "buf:zero:256", "--dump", "0=-", "--dump", "1=-", "--dump", "2=-",
            ]);
            assert_eq!(rc, 0, "{exec} {n}: {err}");
            let lines: Vec<Vec<u32>> = out.lines().map(words).collect();
            let (vals, counts, regs) = (&lines[0], &lines[1], &lines[2]);
            for c in 0..8u32 {
                let (r, q) = (c % n, c / n);
                let next = (r + 1) % n;
                for t in 0..64u32 {
                    assert_eq!(vals[(c * 64 + t) as usize], next * 1000 + t, "{exec} {n}: CTA {c} thread {t}");
                }
                // rank, size, %clusterid.x, %nclusterid.x, %cluster_ctaid.x, %cluster_nctaid.x,
                // getctarank << 4 | isspacep.shared::cluster << 1 | isspacep.shared, a load
                // through the generic address.
                let want = [r, n, q, 8 / n, r, n, next << 4 | 2, next * 1000];
                assert_eq!(&regs[8 * c as usize..8 * c as usize + 8], &want, "{exec} {n}: CTA {c}");
            }
            for q in 0..8u32 {
                assert_eq!(counts[q as usize], if q < 8 / n { n * 64 } else { 0 }, "{exec} {n}: cluster {q}");
            }
        }
        // Multicast: rank 0's bulk copy lands in both CTAs of each cluster of 2, each
        // completing on its own mbarrier.
        let src: String = (0..16u32).flat_map(|i| (0x1000 + 7 * i).to_le_bytes()).map(|b| format!("{b:02x}")).collect();
        let src = format!("buf:hex:{src}");
        let (rc, out, err) = ptxr(&["run", "tests/cli/cluster_ring.ptx", "--exec", exec, "--kernel", "multicast", "--grid", "4", "--block", "16", "--cluster", "2", "--arg", &src, "--arg", "buf:zero:256", "--dump", "1=-", "--timeout", "60"]);
        assert_eq!(rc, 0, "{exec}: {err}");
        let got = words(out.trim());
        for c in 0..4 {
            for t in 0..16u32 {
                assert_eq!(got[(c * 16 + t) as usize], 0x1000 + 7 * t, "{exec}: CTA {c} thread {t}");
            }
        }
        // A CTA that traps stops the others of its cluster, which wait for it at the barrier.
        let (rc, _, err) = ptxr(&["run", "tests/cli/cluster_ring.ptx", "--exec", exec, "--kernel", "trapper", "--grid", "8", "--block", "64", "--cluster", "4", "--timeout", "60"]);
        assert_ne!(rc, 0);
        assert!(err.contains("`trap` executed") && err.contains("cluster_ring.ptx:106"), "{exec}: {err}");
    }
}

#[test]
fn warp_matrix_instructions_in_a_partial_warp_are_an_error() {
    for exec in ["simd", "thread"] {
        warp_matrix_partial(exec);
    }
}

fn warp_matrix_partial(exec: &str) {
    for k in ["mma_partial", "ldmatrix_partial", "stmatrix_partial"] {
        let (rc, _, err) = ptxr(&["run", "tests/cli/partial_warp.ptx", "--kernel", k, "--block", "48", "--arg", "u64:0", "--exec", exec]);
        assert_ne!(rc, 0, "{k} {exec}");
        assert!(err.contains("partial_warp.ptx:") && err.contains("needs all 32 threads of the warp"), "{k} {exec}: {err}");
        // Whole warps run.
        let (rc, _, err) = ptxr(&["run", "tests/cli/partial_warp.ptx", "--kernel", k, "--block", "64", "--arg", "u64:0", "--exec", exec]);
        assert_eq!(rc, 0, "{k} {exec}: {err}");
    }
}

#[test]
fn assert_failure_is_an_error_of_the_launch() {
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "asserter"]);
    assert_ne!(rc, 0);
    assert!(err.contains("device assertion failed") && err.contains("x>0"), "{err}");
}

#[test]
fn deadlock_is_reported_not_hung() {
    let (rc, _, err) = ptxr(&["run", "tests/cli/misc.ptx", "--kernel", "deadlock", "--block", "64"]);
    assert_ne!(rc, 0);
    assert!(err.contains("deadlock") && err.contains("kernel `deadlock`") && err.contains("line 77") && err.contains("line 79"), "{err}");
}

#[test]
fn sync_function_called_through_a_pointer_is_an_error() {
    let (rc, _, err) = ptxr(&["run", "tests/cli/sync_indirect.ptx", "--kernel", "indirect", "--block", "32", "--arg", "buf:zero:4"]);
    assert_ne!(rc, 0);
    assert!(err.contains("sync_indirect.ptx:8") && err.contains("called through a function pointer"), "{err}");
}

/// The lane loop of a kernel without synchronization is vectorized by LLVM (issue: "check the
/// assembly for packed instructions"): on a host with AVX2 or AVX-512, saxpy computes with
/// packed FMAs and the 5-point stencil moves its data in ymm/zmm registers.
#[test]
#[cfg(target_arch = "x86_64")]
fn lane_loops_compile_to_packed_instructions() {
    if !std::is_x86_feature_detected!("avx2") {
        eprintln!("host without AVX2: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for k in ["saxpy", "stencil2d"] {
        let out = dir.path().join(format!("{k}.s"));
        let (rc, _, err) = ptxr(&["compile", &format!("tests/corpus/{k}.nvrtc.ptx"), "--target", "host", "--emit", "asm", "-o", out.to_str().unwrap()]);
        assert_eq!(rc, 0, "{err}");
        let asm = std::fs::read_to_string(&out).unwrap();
        let wide: Vec<&str> = asm.lines().map(str::trim_start).filter(|l| l.starts_with('v') && (l.contains("%ymm") || l.contains("%zmm"))).collect();
        assert!(wide.len() >= 4, "{k}: no instructions on ymm/zmm registers");
        if k == "saxpy" {
            assert!(wide.iter().any(|l| l.starts_with("vfmadd") && l.contains("ps")), "saxpy: no packed FMA");
        }
    }
}

/// A kernel that ptxr cannot compile does not stop the other kernels of its module from
/// running; launching it (or a kernel that calls the function it is in) is an error at its
/// line and column. Ahead-of-time compilation of the module stays an error.
#[test]
fn kernels_of_a_module_run_when_another_cannot_compile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.bin");
    let dump = format!("0={}", out.display());
    let (rc, _, err) = ptxr(&["run", "tests/cli/partly_unsupported.ptx", "--kernel", "good", "--arg", "buf:zero:4", "--dump", &dump]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), 1234u32.to_le_bytes());
    let (rc, _, err) = ptxr(&["run", "tests/cli/partly_unsupported.ptx", "--kernel", "direct", "--arg", "buf:zero:4"]);
    assert_eq!(rc, 1);
    assert!(err.contains("partly_unsupported.ptx:38:17: error: kernel `direct` cannot run: `missing` is declared but not defined"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/partly_unsupported.ptx", "--kernel", "indirect", "--arg", "buf:zero:4"]);
    assert_eq!(rc, 1);
    assert!(err.contains("partly_unsupported.ptx:17:17: error: kernel `indirect` cannot run"), "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/partly_unsupported.ptx", "--kernel", "with_barrier", "--block", "64", "--arg", "buf:zero:4"]);
    assert_eq!(rc, 1);
    assert!(err.contains("error: kernel `with_barrier` cannot run: `missing` is declared but not defined"), "{err}");
    let (rc, _, err) = ptxr(&["compile", "tests/cli/partly_unsupported.ptx", "-o", dir.path().join("k.o").to_str().unwrap()]);
    assert_eq!(rc, 1);
    assert!(err.contains("partly_unsupported.ptx:17:17: error:") && err.contains("partly_unsupported.ptx:38:17: error:"), "{err}");
}

/// Variables too large for ptxr are one clear error, not an out-of-memory abort; large
/// zero-initialized ones compile without materializing their bytes.
#[test]
fn huge_variables_are_an_error_and_large_ones_compile() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("k.o");
    let (rc, _, err) = ptxr(&["compile", "--no-c-abi", "tests/cli/huge_var.ptx", "-o", o.to_str().unwrap()]);
    assert_eq!(rc, 1);
    assert!(err.contains("huge_var.ptx:8:22: error: `huge` is 4294967296000 bytes"), "{err}");
    assert!(!err.contains("heap"), "{err}");
    let small = dir.path().join("big.ptx");
    std::fs::write(&small, std::fs::read_to_string("tests/cli/huge_var.ptx").unwrap().replace(".global .align 1 .b8 huge[4294967296000];", "")).unwrap();
    let (rc, out, err) = ptxr(&["run", small.to_str().unwrap(), "--kernel", "k", "--arg", "buf:hex:ffffffff", "--dump", "0=-"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out.trim(), "00000000", "the last word of the zero-initialized variable");
}

/// Writing past the end of shared memory faults on the guard page after the CTA's window and
/// is reported once, instead of corrupting the runtime's heap (which aborted in `free`).
#[test]
fn shared_memory_overrun_is_a_clear_error() {
    let (rc, _, err) = ptxr(&["run", "tests/cli/shared_oob.ptx", "--kernel", "k", "--block", "4", "--arg", "buf:zero:4"]);
    assert_eq!(rc, 0, "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/shared_oob.ptx", "--kernel", "k", "--grid", "64", "--block", "1024", "--arg", "buf:zero:4"]);
    assert_eq!(rc, 1, "{err}");
    assert_eq!(err.matches("crashed with a memory access fault").count(), 1, "{err}");
    assert!(!err.contains("free()"), "{err}");
}

/// `ptxr run` places each buffer so that it ends at an inaccessible page: writing even one
/// word past a buffer is one clear error, not a corrupted heap or a silent success.
#[test]
fn buffer_overrun_is_a_clear_error() {
    let (rc, out, err) = ptxr(&["run", "tests/cli/buffer_oob.ptx", "--kernel", "k", "--block", "4", "--arg", "buf:zero:16", "--dump", "0=-"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out.trim(), "00000000010000000200000003000000");
    let (rc, _, err) = ptxr(&["run", "tests/cli/buffer_oob.ptx", "--kernel", "k", "--block", "5", "--arg", "buf:zero:16"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("crashed with a memory access fault"), "{err}");
}

#[test]
fn an_array_indexed_by_a_register_is_refused_at_its_operand() {
    let (rc, _, err) = ptxr(&["compile", "tests/cli/array_register_index.ptx", "--emit", "obj", "-o", "/dev/null"]);
    assert_ne!(rc, 0);
    assert!(err.contains("array_register_index.ptx:8:20:") && err.contains("indexes arrays by constants only"), "{err}");
}

#[test]
fn report_names_each_kernels_execution_path_and_why() {
    let (code, out, err) = ptxr(&["compile", "benches/idioms.nvrtc.ptx", "--report"]);
    assert_eq!(code, 0, "{err}");
    for k in ["saxpy_grid", "matmul_naive", "mandelbrot"] {
        assert!(out.contains(&format!("kernel {k}: simd (warp-vector)")), "{out}");
    }
    // The uniform row of a[row*n+k] and the consecutive b[k*n+col] of the k loop.
    assert!(out.contains("ld uniform") && out.contains("ld consecutive"), "{out}");
    let (code, out, err) = ptxr(&["compile", "examples/saxpy.ptx", "--report"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kernel saxpy: simd (warp-vector)"), "{out}");
    // A kernel with CTA barriers takes the warp path, its warps in phases, and its
    // grid-stride loop's iterations interleaved (in groups of CTAs); one that indexes by %tid.y takes it too, and
    // has a version for blocks 16 threads wide in pairs of rows (tile warps, whose pointers
    // into A and B, rows n apart, are a scalar and a lane part each row recomputes); one
    // without barriers a version for blocks at most 16 threads wide (warps of one row);
    // --exec thread forces the per-thread path.
    let (_, out, _) = ptxr(&["compile", "tests/corpus/histogram.nvrtc.ptx", "--report"]);
    assert!(out.contains("kernel histogram256: simd (warp-vector; the CTA's warps run in phases between its 2 barriers)"), "{out}");
    assert!(out.contains("grid-stride loops whose iterations the CTA's warps interleave, the warps of a group of CTAs together, 8 iterations at a time: 1"), "{out}");
    // Both loops of NVRTC's unrolled grid-stride add (its remainder loop and the loop unrolled
    // 4 times) step by %r1 = %ntid.x * %nctaid.x, defined before them; a k loop that never
    // reads %nctaid (matmul_naive) is no grid-stride loop. (The report names a latch by its
    // last instruction's line: the `setp` before the back edge's `bra`.)
    let (_, out, _) = ptxr(&["compile", "tests/corpus/vecadd_gridstride.nvrtc.ptx", "--report"]);
    assert!(out.contains("grid-stride loops whose iterations the CTA's warps interleave, the warps of a group of CTAs together, 4 iterations at a time: 2 (latches at lines 71, 114)"), "{out}");
    // A grid-stride loop of 4-byte loads in a kernel with barriers and shared memory (its
    // CTAs in groups too) takes 4 iterations at a time; the histogram's loop of bytes above
    // takes 8. A kernel whose barrier counts threads keeps its CTAs one at a time.
    let (_, out, _) = ptxr(&["compile", "tests/corpus/reduce_shared.nvrtc.ptx", "--report"]);
    let atomic = out.split("kernel ").find(|k| k.starts_with("reduce_sum_atomic")).unwrap_or_default();
    assert!(atomic.contains("grid-stride loops whose iterations the CTA's warps interleave, the warps of a group of CTAs together, 4 iterations at a time: 1"), "{out}");
    let (_, out, _) = ptxr(&["compile", "benches/idioms.nvrtc.ptx", "--report"]);
    let naive = out.split("kernel ").find(|k| k.starts_with("matmul_naive")).unwrap_or_default();
    assert!(naive.contains("simd") && !naive.contains("grid-stride"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/corpus/matmul_tiled.nvrtc.ptx", "--report"]);
    assert!(out.contains("kernel matmul_tiled: simd (warp-vector; the CTA's warps run in phases between its 2 barriers)"), "{out}");
    assert!(out.contains("  blocks 16 threads wide with rows in pairs: warps of two rows, simd (warp-vector; the CTA's warps run in phases between its 2 barriers)"), "{out}");
    assert!(out.contains("    there, registers held as one scalar per warp plus a lane part each row recomputes: %r31#30 (+ %r21#29), %rd24#34 (+ %rd17#33)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/corpus/stencil2d.nvrtc.ptx", "--report"]);
    assert!(out.contains("  blocks at most 16 threads wide: warps of one row, simd (warp-vector)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/corpus/matmul_tiled.nvrtc.ptx", "--report", "--exec", "thread"]);
    assert!(out.contains("kernel matmul_tiled: thread (forced by --exec thread)") && !out.contains("blocks 16 threads wide") && !out.contains("blocks at most"), "{out}");
    // Calls of functions that synchronize are inlined (`syntax::inline`): such kernels take
    // the warp path too.
    let (_, out, _) = ptxr(&["compile", "tests/filetests/sync/inline_calls.ptx", "--report"]);
    assert!(out.contains("kernel two_calls: simd (warp-vector; the CTA's warps run in phases between its 9 barriers)") && out.contains("kernel param_calls: simd (warp-vector)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/cli/tid_y_reqntid.ptx", "--report"]);
    assert!(out.contains("kernel k: simd (warp-vector)") && !out.contains("blocks at most"), "a .reqntid wider than 16: {out}");
    assert!(out.contains("every warp whole: the .reqntid rows are multiples of 32 threads"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/corpus/warp_reduce.nvrtc.ptx", "--report"]);
    assert!(!out.contains("every warp whole"), "no .reqntid: {out}");
    // Without a .reqntid, a kernel with warp collectives gets a version for blocks whose rows
    // are whole warps (`warp::whole_dispatch`); a kernel without them does not.
    assert!(out.contains("blocks whose rows are whole warps (%ntid.x a multiple of 32): a version in which every lane of every warp exists"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/corpus/saxpy.nvrtc.ptx", "--report"]);
    assert!(!out.contains("blocks whose rows are whole warps"), "no collectives: {out}");
    // With warp collectives, the version for narrow blocks has the hardware's warps, pairs of
    // rows 16 threads wide.
    let (_, out, _) = ptxr(&["compile", "tests/filetests/warp/narrow_blocks.ptx", "--report"]);
    assert!(out.contains("kernel tile_warp: simd") && out.contains("  blocks 16 threads wide with rows in pairs: warps of two rows, simd"), "{out}");
    // Warp collectives run on the warp path where every live lane runs them together; where
    // not, or for instructions not on it yet, the reason names the instruction.
    let (_, out, _) = ptxr(&["compile", "tests/corpus/warp_vote.nvrtc.ptx", "--report", "--exec", "simd"]);
    assert!(out.contains("kernel warp_vote: simd (warp-vector)"), "{out}");
    // `bar.red` (__syncthreads_count) is a barrier of the warp path; barriers with a thread
    // count are too (codegen::warp::Counted), but not `bar.red` with a count, nor `bar.red`
    // in a kernel with counted barriers.
    assert!(out.contains("kernel block_count_positive: simd (warp-vector; the CTA's warps run in phases around its barrier)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/filetests/sync/producer_consumer.ptx", "--report", "--exec", "simd"]);
    assert!(out.contains("kernel prodcons: thread (`bar.red.popc.u32` (line 53) is not on the warp path yet)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/filetests/warp/named_barriers.ptx", "--report"]);
    assert!(out.contains("kernel ws: simd (warp-vector; the CTA's warps run in phases between its 3 barriers)"), "{out}");
    // Votes in divergent branches run on the warp path; a barrier that lanes a divergent
    // branch sends elsewhere also reach is not on it.
    let (_, out, _) = ptxr(&["compile", "tests/filetests/warp/vote.ptx", "--report", "--exec", "simd"]);
    assert!(out.contains("kernel vote: simd (warp-vector)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "tests/filetests/sync/deadlock.ptx", "--report", "--exec", "simd"]);
    assert!(out.contains("kernel dl_shfl: thread (barrier (line 68) where lanes that a divergent branch sends elsewhere reach a barrier or warp collective too)"), "{out}");
    let (_, out, _) = ptxr(&["compile", "benches/idioms.nvrtc.ptx", "--report", "--exec", "thread"]);
    assert!(out.contains("kernel mandelbrot: thread (forced by --exec thread)"), "{out}");
    let (code, _, err) = ptxr(&["run", "examples/saxpy.ptx", "--kernel", "saxpy", "--exec", "vector"]);
    assert_ne!(code, 0);
    assert!(err.contains("--exec takes auto, simd or thread, not `vector`"), "{err}");
}

#[test]
fn run_timeout_stops_a_kernel_that_never_ends() {
    let start = std::time::Instant::now();
    let (rc, _, err) = ptxr(&["run", "tests/cli/spin_forever.ptx", "--kernel", "spin", "--grid", "2", "--block", "32", "--arg", "u32:1", "--timeout", "0.5"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("spin_forever.ptx: error: kernel `spin`: launch timed out after 0.5 s"), "{err}");
    assert!(err.contains("CTAs still running: (0,0,0)") || err.contains("CTAs still running: (1,0,0)"), "{err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    // The same kernel that ends runs to completion under the watchdog.
    let (rc, _, err) = ptxr(&["run", "tests/cli/spin_forever.ptx", "--kernel", "spin", "--grid", "2", "--block", "32", "--arg", "u32:0", "--timeout", "30"]);
    assert_eq!(rc, 0, "{err}");
    let (rc, _, err) = ptxr(&["run", "tests/cli/spin_forever.ptx", "--kernel", "spin", "--arg", "u32:0", "--timeout", "0"]);
    assert_ne!(rc, 0);
    assert!(err.contains("--timeout takes a positive number of seconds"), "{err}");
    // The runtime's watchdog stops the launch where the kernel polls it, the back edges of
    // its loops, on both execution paths: a loop of the kernel, of a function it calls, a
    // loop with a barrier, a loop that only odd lanes run.
    for (kernel, line) in [("spin", 17), ("spin_call", 28), ("spin_barrier", 50), ("spin_odd", 67)] {
        for exec in ["simd", "thread"] {
            let start = std::time::Instant::now();
            let (rc, _, err) = ptxr(&["run", "tests/cli/spin_forever.ptx", "--kernel", kernel, "--grid", "3", "--block", "64", "--arg", "u32:1", "--timeout", "0.3", "--exec", exec]);
            assert_eq!(rc, 1, "{kernel} {exec}: {err}");
            assert!(err.contains(&format!("error: kernel `{kernel}`: launch timed out after 0.3 s (the launch's time limit); CTAs still running: (")), "{kernel} {exec}: {err}");
            // The per-thread scheduler polls a loop through a barrier between its passes,
            // where no thread's instruction is current.
            if kernel == "spin_barrier" && exec == "thread" {
                assert!(!err.contains("stopped at"), "{kernel} {exec}: {err}");
            } else {
                assert!(err.contains(&format!("stopped at line {line}")), "{kernel} {exec}: {err}");
            }
            assert!(!err.contains("did not stop at a loop"), "{kernel} {exec}: the last-resort exit fired: {err}");
            assert!(start.elapsed() < std::time::Duration::from_secs(60));
        }
    }
}

#[test]
fn a_predicate_read_before_it_is_written_runs_on_both_paths() {
    for exec in ["simd", "thread"] {
        let (rc, out, err) = ptxr(&["run", "tests/cli/fuzz_undef_predicate.ptx", "-O1", "--kernel", "reduce_sum_atomic", "--grid", "2", "--block", "128", "--arg", "buf:zero:65536", "--arg", "buf:zero:65536", "--arg", "u32:512", "--exec", exec, "--dump", "1=-"]);
        assert_eq!(rc, 0, "{exec}: {err}");
        // The input is zero, so whatever path the undefined predicate takes the sum is 0.
        assert!(out.starts_with("00000000"), "{exec}: {out}");
    }
}

#[test]
fn a_cascade_of_errors_shows_the_first_fifty_and_counts_the_rest() {
    // 60 reads of undeclared registers: one error each, on lines 7..66.
    let mut ptx = String::from(".version 6.4\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<2>;\n");
    for k in 0..60 {
        ptx += &format!("add.s32 %r1, %r1, %q{k};\n");
    }
    ptx += "ret;\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.ptx");
    std::fs::write(&p, ptx).unwrap();
    let (rc, _, err) = ptxr(&["check", p.to_str().unwrap()]);
    assert_ne!(rc, 0);
    assert_eq!(err.matches(": error: ").count(), 50, "{err}");
    assert!(err.contains("many.ptx:7:19: error: undeclared register or variable `%q0`"), "{err}");
    assert!(err.contains("many.ptx:56:19: error: undeclared register or variable `%q49`"), "{err}");
    assert!(!err.contains("%q50`"), "{err}");
    assert!(err.contains("10 more errors not shown"), "{err}");
}

/// The shape of the warp path's code on two corpus kernels (`--exec simd`, `-O3`): lane loops
/// of vector instructions become `<32 x T>` operations, a one-element-per-thread load
/// prefetches ahead, and a tile loop's loads from an address every lane holds (`As[ty][k]`)
/// are scalar loads broadcast, not gathers of `f32`.
#[test]
fn warp_path_code_is_32_lanes_wide_with_prefetch_and_scalar_uniform_loads() {
    let (rc, ir, err) = ptxr(&["compile", "tests/corpus/saxpy.nvrtc.ptx", "--exec", "simd", "--emit", "llvm-ir", "-O3", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ir.contains("@llvm.fma.v32f32"), "saxpy: no 32-wide fma");
    assert!(ir.contains("@llvm.prefetch.p0"), "saxpy: no prefetch");
    let (rc, ir, err) = ptxr(&["compile", "tests/corpus/matmul_tiled.nvrtc.ptx", "--exec", "simd", "--emit", "llvm-ir", "-O3", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ir.contains("@llvm.fma.v32f32"), "matmul_tiled: no 32-wide fma");
    assert!(!ir.contains("masked.gather.v16f32") && !ir.contains("masked.gather.v32f32"), "matmul_tiled: the shared tile's uniform loads are gathers");
}

/// A grid-stride loop whose induction variable advances by two `add`s of the grid's size:
/// the warp path prefetches 4 iterations ahead, the step being both adds (`%ahead` is the
/// step times 4 iterations times 4 bytes), and both paths give what the loop computes:
/// thread t of the 192 adds 1 to each element i < 1000 with i mod 384 == t.
#[test]
fn unrolled_grid_stride_loop_prefetches_its_whole_step() {
    let (rc, ir, err) = ptxr(&["compile", "tests/cli/grid_stride_unrolled.ptx", "--exec", "simd", "--emit", "llvm-ir", "-O0", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    let ahead = ir.lines().find(|l| l.contains("%ahead = mul i64")).unwrap_or_else(|| panic!("no prefetch ahead: {ir}"));
    assert!(ahead.trim_end().ends_with(", 16"), "{ahead}");
    assert!(ir.contains("call void @llvm.prefetch.p0"), "no prefetch call");
    let expect: String = (0..1000).map(|i| if i % 384 < 192 { "01000000" } else { "00000000" }).collect();
    for exec in ["simd", "thread"] {
        let (rc, out, err) = ptxr(&["run", "tests/cli/grid_stride_unrolled.ptx", "--kernel", "grid_stride2", "--grid", "2", "--block", "96", "--exec", exec, "--arg", "buf:zero:4000", "--arg", "u32:1000", "--dump", "0=-"]);
        assert_eq!(rc, 0, "{err}");
        assert_eq!(out.trim(), expect, "--exec {exec}");
    }
}

/// A small scalar lane loop (a shared-memory atomic in a grid-stride loop) is unrolled whole
/// on the warp path, its lanes tested as bits of a mask; the lanes of the last round that are
/// past `n` must not count (the buffer holds 100 more bytes). Expected counts from the data.
#[test]
fn small_scalar_lane_loop_unrolls_with_a_lane_mask() {
    let (rc, ir, err) = ptxr(&["compile", "tests/cli/hist_divergent.ptx", "--exec", "simd", "--emit", "llvm-ir", "-O0", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ir.contains("%here.mask = bitcast <32 x i1>"), "no lane mask: {ir}");
    assert!(ir.contains("!\"llvm.loop.unroll.full\""), "no full unroll: {ir}");
    let data: Vec<u8> = (0..1100u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let mut bins = [0u32; 8];
    for &x in &data[..1000] {
        bins[(x & 7) as usize] += 1;
    }
    let expect: String = bins.iter().map(|b| b.to_le_bytes().iter().map(|x| format!("{x:02x}")).collect::<String>()).collect();
    let hex: String = data.iter().map(|x| format!("{x:02x}")).collect();
    for exec in ["simd", "thread"] {
        let (rc, out, err) = ptxr(&["run", "tests/cli/hist_divergent.ptx", "--kernel", "hist8", "--grid", "3", "--block", "96", "--exec", exec, "--arg", &format!("buf:hex:{hex}"), "--arg", "buf:zero:32", "--arg", "u32:1000", "--dump", "1=-"]);
        assert_eq!(rc, 0, "{err}");
        assert_eq!(out.trim(), expect, "--exec {exec}");
    }
}

/// `clusterlaunchcontrol` (PTX 8.6): a persistent kernel takes over the work of CTAs not yet
/// started. Per the ISA, a cancelled launch never runs and each cancellation names a CTA no
/// other one names: every CTA's work is done exactly once (out[c*32 + t] == c + 1), and the
/// CTAs that ran plus the cancellations that succeeded make the grid. That ptxr's runtime
/// cancels at least one (it starts CTAs from the counter the requests take from) is ptxr's
/// own behaviour, checked too.
#[test]
fn persistent_kernel_takes_over_ctas_by_cancelling_their_launch() {
    let dir = tempfile::tempdir().unwrap();
    let (out, ran) = (dir.path().join("out.bin"), dir.path().join("ran.bin"));
    // The second kernel runs in clusters of 2 CTAs (`.reqnctapercluster`): rank 0 cancels a
    // cluster and both CTAs get the response (`.multicast::cluster::all`) and each counts it.
    // The first kernel also on a grid of 8x8 (its CTAs number themselves y * 8 + x, and a
    // taken-over CTA's number comes from the response's x and y).
    let runs = [
        ("persistent_clc", "persistent", "64", "simd"),
        ("persistent_clc", "persistent", "64", "thread"),
        ("persistent_clc", "persistent", "8,8", "simd"),
        ("persistent_clc_cluster", "persistent2", "64", "simd"),
        ("persistent_clc_cluster", "persistent2", "64", "thread"),
    ];
    for (file, kernel, grid, exec) in runs {
        let file = format!("tests/cli/{file}.ptx");
        let (rc, taken, err) = ptxr(&[
            "run", &file, "--kernel", kernel, "--grid", grid, "--block", "32", "--exec", exec,
            "--arg", "buf:zero:8192", "--arg", "buf:zero:256", "--arg", "buf:zero:4",
            "--dump", &format!("0={}", out.display()), "--dump", &format!("1={}", ran.display()), "--dump", "2=-",
        ]);
        assert_eq!(rc, 0, "{err}");
        let words = |p: &std::path::Path| -> Vec<u32> { std::fs::read(p).unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect() };
        let o = words(&out);
        for c in 0..64u32 {
            for t in 0..32u32 {
                assert_eq!(o[(c * 32 + t) as usize], c + 1, "{kernel} --grid {grid} --exec {exec}: CTA {c}'s work, thread {t}");
            }
        }
        let ran: u32 = words(&ran).iter().sum();
        let hex = taken.trim();
        let taken = u32::from_le_bytes((0..4).map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap()).collect::<Vec<u8>>().try_into().unwrap());
        assert_eq!(ran + taken, 64, "{kernel} --grid {grid} --exec {exec}: {ran} CTAs ran, {taken} were cancelled");
        assert!(taken >= 1, "{kernel} --grid {grid} --exec {exec}: nothing was cancelled");
    }
}

/// Builds a C program against the static library and header of `ptx` (`ptxr compile --emit
/// staticlib` and `--emit header`, the header named `<stem>.h`): returns the executable.
fn c_abi_program(dir: &std::path::Path, ptx: &str, stem: &str, main_c: &str) -> std::path::PathBuf {
    c_abi_program_with(dir, ptx, stem, main_c, &[])
}

/// [`c_abi_program`] with more options of `ptxr compile`.
fn c_abi_program_with(dir: &std::path::Path, ptx: &str, stem: &str, main_c: &str, options: &[&str]) -> std::path::PathBuf {
    let lib = dir.join(format!("lib{stem}.a"));
    let hdr = dir.join(format!("{stem}.h"));
    for (emit, out) in [("staticlib", &lib), ("header", &hdr)] {
        let mut a = vec!["compile", ptx, "--emit", emit, "-o", out.to_str().unwrap()];
        a.extend_from_slice(options);
        let (rc, _, err) = ptxr(&a);
        assert_eq!(rc, 0, "{err}");
    }
    let main = dir.join("main.c");
    std::fs::write(&main, main_c).unwrap();
    let exe = dir.join("main");
    let st = std::process::Command::new("cc").arg(&main).arg("-I").arg(dir).arg(&lib).args(["-lpthread", "-lm", "-o"]).arg(&exe).status().unwrap();
    assert!(st.success());
    exe
}

/// Runs a program of [`c_abi_program`], which must end within a minute; its standard output.
fn c_abi_run(exe: &std::path::Path) -> String {
    let start = std::time::Instant::now();
    let out = std::process::Command::new(exe).output().unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The C ABI's time limit (`ptxr_set_timeout`): a launch that spins stops with
/// PTXR_ERR_TIMEOUT and a message naming the kernel, the running CTAs and the line; a launch
/// that ends is unaffected; the limit is per calling thread and 0 removes it.
#[test]
fn c_abi_timeout_stops_a_kernel_that_never_ends() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_program(
        dir.path(),
        "tests/cli/spin_forever.ptx",
        "spin",
        r#"#include <stdio.h>
#include <string.h>
#include "spin.h"
int main(void) {
    uint32_t one = 1, zero = 0;
    void *spin_args[] = {&one}, *end_args[] = {&zero};
    ptxr_launch_config cfg = {{3, 1, 1}, {64, 1, 1}, 0, NULL, NULL};
    ptxr_set_timeout(0.3);
    int rc = ptxr_launch_spin_odd(&cfg, spin_args);
    printf("spin_odd %d %s\n", rc, ptxr_last_error());
    rc = ptxr_launch_spin_barrier(&cfg, spin_args);
    printf("spin_barrier %d %s\n", rc, ptxr_last_error());
    rc = ptxr_launch_spin(&cfg, end_args);
    printf("ends %d [%s]\n", rc, ptxr_last_error());
    ptxr_set_timeout(0);
    rc = ptxr_launch_spin(&cfg, end_args);
    printf("no limit %d [%s]\n", rc, ptxr_last_error());
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    // PTXR_ERR_TIMEOUT is 10.
    assert!(out.contains("spin_odd 10 tests/cli/spin_forever.ptx: error: kernel `spin_odd`: launch timed out after 0.3 s (the launch's time limit); CTAs still running: ("), "{out}");
    assert!(out.contains("stopped at line 67"), "{out}");
    assert!(out.contains("spin_barrier 10 tests/cli/spin_forever.ptx: error: kernel `spin_barrier`: launch timed out after 0.3 s"), "{out}");
    assert!(out.contains("ends 0 []"), "{out}");
    assert!(out.contains("no limit 0 []"), "{out}");
}

/// The C ABI's runtime with a kernel that cancels cluster launches
/// (tests/cli/persistent_clc.ptx): it cancels none (`try_cancel` answers "not cancelled", as a
/// GPU may), so every CTA runs and does its own work: out[c*32 + t] == c + 1, every CTA ran,
/// no cancellation counted.
#[test]
fn c_abi_runtime_runs_every_cta_of_a_cancelling_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_program(
        dir.path(),
        "tests/cli/persistent_clc.ptx",
        "clc",
        r#"#include <stdio.h>
#include "clc.h"
int main(void) {
    static uint32_t out[64 * 32], ran[64], taken[1];
    void *po = out, *pr = ran, *pt = taken;
    void *args[] = {&po, &pr, &pt};
    ptxr_launch_config cfg = {{64, 1, 1}, {32, 1, 1}, 0, NULL, NULL};
    int rc = ptxr_launch_persistent(&cfg, args);
    int ok = 1, nran = 0;
    for (int c = 0; c < 64; c++) {
        nran += ran[c];
        for (int t = 0; t < 32; t++) ok &= out[c * 32 + t] == (uint32_t)c + 1;
    }
    printf("rc %d work %s ran %d taken %u [%s]\n", rc, ok ? "ok" : "wrong", nran, taken[0], ptxr_last_error());
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("rc 0 work ok ran 64 taken 0 []"), "{out}");
}

/// f16 bits of a small integer (|v| < 2048; exact).
fn f16_bits(v: i32) -> u16 {
    if v == 0 {
        return 0;
    }
    let (s, m) = (if v < 0 { 0x8000u16 } else { 0 }, v.unsigned_abs());
    let e = 31 - m.leading_zeros();
    s | ((e + 15) as u16) << 10 | ((m << (10 - e)) & 0x3ff) as u16
}

/// The compile-time benchmark's mma-heavy kernel (benches/mma64.nvrtc.ptx: 64 `mma.sync` per
/// k step) computes C = A * B on the path `auto` gives it (the warp path; per thread it takes
/// 40 s to compile, and the filetests compare the paths on the same instructions). Small
/// integer inputs make every partial sum exact in f32, so any accumulation order gives the
/// sums computed here in i64.
#[test]
fn mma64_benchmark_kernel_multiplies_exactly() {
    let (m, n, k) = (64usize, 128usize, 64usize);
    let a: Vec<i32> = (0..m * k).map(|i| ((i * 7 + 3) % 7) as i32 - 3).collect();
    let bt: Vec<i32> = (0..n * k).map(|i| ((i * 5 + 1) % 9) as i32 - 4).collect(); // B transposed: N x K
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, v: &[i32]| {
        let p = dir.path().join(name);
        std::fs::write(&p, v.iter().flat_map(|&x| f16_bits(x).to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        format!("buf:file:{}", p.display())
    };
    let (pa, pb) = (write("a.bin", &a), write("b.bin", &bt));
    let out = dir.path().join("c.bin");
    for exec in ["auto"] {
        let (cz, dump) = (format!("buf:zero:{}", m * n * 4), format!("2={}", out.display()));
        let (ms, ns, ks) = (format!("u32:{m}"), format!("u32:{n}"), format!("u32:{k}"));
        let grid = format!("{},{}", n / 64, m / 64);
        let (rc, _, err) = ptxr(&["run", "benches/mma64.nvrtc.ptx", "--kernel", "mma64", "--grid", &grid, "--block", "32", "--exec", exec, "--arg", &pa, "--arg", &pb, "--arg", &cz, "--arg", &ms, "--arg", &ns, "--arg", &ks, "--dump", &dump]);
        assert_eq!(rc, 0, "{exec}: {err}");
        let c = std::fs::read(&out).unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: i64 = (0..k).map(|x| a[i * k + x] as i64 * bt[j * k + x] as i64).sum();
                let got = f32::from_le_bytes(c[(i * n + j) * 4..][..4].try_into().unwrap());
                assert_eq!(got, want as f32, "{exec}: C[{i}][{j}]");
            }
        }
    }
}

/// Grid-stride kernels on the warp path run groups of consecutive CTAs in one call of their
/// CTA function (`CtaCtx::group`): every element is still written by its own thread's CTA,
/// over a 3-D grid whose 30 CTAs leave a partial last group (groups of 4 and 7), and an error
/// names the CTA and thread that stopped, not the group's first.
#[test]
fn groups_of_ctas_keep_each_ctas_identity() {
    let (gx, gy, gz, nt, n) = (5u32, 3u32, 2u32, 64u32, 9677u32);
    let ctas = gx * gy * gz;
    let want: Vec<u8> = (0..n)
        .flat_map(|i| {
            let lin = (i % (ctas * nt)) / nt;
            let (x, y, z) = (lin % gx, (lin / gx) % gy, lin / (gx * gy));
            (x | y << 8 | z << 16).to_le_bytes()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    let run = |group: &str, kernel: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ptxr"));
        c.current_dir(env!("CARGO_MANIFEST_DIR")).args(["run", "tests/cli/cta_groups.ptx", "--kernel", kernel, "--grid", "5,3,2", "--block", "64", "--arg", &format!("buf:zero:{}", n * 4), "--arg", &format!("u32:{n}"), "--dump", &format!("0={}", out.display())]);
        if !group.is_empty() {
            c.env("PTXR_CTA_GROUP", group);
        }
        let o = c.output().unwrap();
        (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    for g in ["", "1", "4", "7"] {
        let (rc, err) = run(g, "owner");
        assert_eq!(rc, 0, "group {g}: {err}");
        assert!(std::fs::read(&out).unwrap() == want, "group {g}: an element written by the wrong CTA");
        let (rc, err) = run(g, "traps");
        assert_eq!(rc, 1, "group {g}: {err}");
        assert!(err.contains("cta_groups.ptx:80: in kernel `traps`, CTA (2,1,1), thread (5,0,0): error: `trap` executed"), "group {g}: {err}");
    }
}

/// A grid-stride kernel with shared memory and barriers in groups of CTAs: each CTA of a
/// group has a shared window of its own (abi.rs `group_smem_stride`), so each CTA's shared
/// histogram counts only the elements its threads visit (worked here from the kernel's
/// definition: element i belongs to linear CTA (i mod 1920) / 64, bin (in[i] + i) mod 64).
/// `ptxr run` runs such kernels one CTA at a time unless PTXR_CTA_GROUP asks (groups of 4
/// and 7 over 30 CTAs, a partial last group), on both paths.
#[test]
fn groups_of_ctas_keep_each_ctas_shared_memory() {
    let (ctas, nt, n) = (30u32, 64u32, 9677u32);
    let input: Vec<u8> = (0..n).map(|i| ((i * 37 + 11) % 251) as u8).collect();
    let mut want = vec![0u32; (ctas * 64) as usize];
    for (c, w) in want.chunks_mut(64).enumerate() {
        for (t, x) in w.iter_mut().enumerate() {
            *x = (c as u32) << 16;
            *x += (0..n).filter(|&i| (i % (ctas * nt)) / nt == c as u32 && (input[i as usize] as u32 + i) % 64 == t as u32).count() as u32;
        }
    }
    let want: Vec<u8> = want.iter().flat_map(|x| x.to_le_bytes()).collect();
    let dir = tempfile::tempdir().unwrap();
    let (out, inp) = (dir.path().join("out.bin"), dir.path().join("in.bin"));
    std::fs::write(&inp, &input).unwrap();
    for exec in ["simd", "thread"] {
        for g in ["", "1", "4", "7"] {
            let mut c = Command::new(env!("CARGO_BIN_EXE_ptxr"));
            c.current_dir(env!("CARGO_MANIFEST_DIR")).args(["run", "tests/cli/cta_groups.ptx", "--kernel", "shared_hist", "--exec", exec, "--grid", "5,3,2", "--block", "64", "--arg", &format!("buf:zero:{}", ctas * 64 * 4), "--arg", &format!("buf:file:{}", inp.display()), "--arg", &format!("u32:{n}"), "--dump", &format!("0={}", out.display())]);
            if !g.is_empty() {
                c.env("PTXR_CTA_GROUP", g);
            }
            let o = c.output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{exec}, group {g}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(std::fs::read(&out).unwrap() == want, "{exec}, group {g}: a CTA's histogram counts another CTA's elements");
        }
    }
}

/// The same groups of CTAs through the C ABI's runtime (ptxr_rt.c): a static library
/// launched from C with groups of 4 and 7, serially and through a `parallel_for`; the shared
/// histogram's CTAs each in a window of their own.
#[test]
fn c_abi_groups_of_ctas_keep_each_ctas_identity() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_program(
        dir.path(),
        "tests/cli/cta_groups.ptx",
        "cta_groups",
        r#"#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include "cta_groups.h"
typedef struct { void (*body)(void *, uint32_t); void *ctx; uint32_t n, next; pthread_mutex_t mu; } Pool;
static void *worker(void *p) {
    Pool *q = p;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        uint32_t i = q->next++;
        pthread_mutex_unlock(&q->mu);
        if (i >= q->n) return NULL;
        q->body(q->ctx, i);
    }
}
static void pfor(void *user, uint32_t n, void (*body)(void *, uint32_t), void *ctx) {
    (void)user;
    Pool q = {body, ctx, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t t[3];
    for (int k = 0; k < 3; k++) pthread_create(&t[k], NULL, worker, &q);
    for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
}
int main(void) {
    const uint32_t n = 9677, gx = 5, gy = 3, gz = 2, nt = 64, ctas = gx * gy * gz;
    uint32_t *out = calloc(n, 4);
    void *args[] = {&out, (void *)&n};
    for (int par = 0; par < 2; par++) {
        ptxr_launch_config cfg = {{gx, gy, gz}, {nt, 1, 1}, 0, par ? pfor : NULL, NULL};
        int rc = ptxr_launch_owner(&cfg, args);
        int bad = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t lin = (i % (ctas * nt)) / nt;
            uint32_t want = (lin % gx) | ((lin / gx) % gy) << 8 | (lin / (gx * gy)) << 16;
            bad += out[i] != want;
        }
        printf("owner par=%d rc=%d bad=%d\n", par, rc, bad);
        rc = ptxr_launch_traps(&cfg, args);
        printf("traps par=%d rc=%d %s\n", par, rc, ptxr_last_error());
        /* Each CTA's shared histogram (groups_of_ctas_keep_each_ctas_shared_memory). */
        uint8_t *in = malloc(n);
        uint32_t *hist = calloc(ctas * 64, 4);
        for (uint32_t i = 0; i < n; i++) in[i] = (uint8_t)((i * 37 + 11) % 251);
        void *hargs[] = {&hist, &in, (void *)&n};
        rc = ptxr_launch_shared_hist(&cfg, hargs);
        bad = 0;
        for (uint32_t c = 0; c < ctas; c++)
            for (uint32_t t = 0; t < 64; t++) {
                uint32_t want = c << 16;
                for (uint32_t i = 0; i < n; i++) want += (i % (ctas * nt)) / nt == c && (in[i] + i) % 64 == t;
                bad += hist[c * 64 + t] != want;
            }
        printf("shared_hist par=%d rc=%d bad=%d\n", par, rc, bad);
    }
    return 0;
}
"#,
    );
    for g in ["4", "7"] {
        let out = std::process::Command::new(&exe).env("PTXR_CTA_GROUP", g).output().unwrap();
        let out = String::from_utf8_lossy(&out.stdout).to_string();
        for par in 0..2 {
            assert!(out.contains(&format!("owner par={par} rc=0 bad=0")), "group {g}: {out}");
            assert!(out.contains(&format!("shared_hist par={par} rc=0 bad=0")), "group {g}: {out}");
            assert!(out.contains(&format!("traps par={par} rc=")) && out.contains("in kernel `traps`, CTA (2,1,1), thread (5,0,0): error: `trap` executed"), "group {g}: {out}");
        }
    }
}

/// Compiles each `body` as the one instruction of an sm_100a kernel (registers `%t` .b32 and
/// `%d` .b64, line 9) and checks that it is refused there with `want` in the message.
fn refused_on_sm100a(cases: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    for (body, want) in cases {
        let f = dir.path().join("bad.ptx");
        std::fs::write(&f, format!(".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\t.reg .b32 %t;\n\t.reg .b64 %d;\n\tld.param.u64 %d, [p];\n\t{body}\n\tret;\n}}\n")).unwrap();
        let (rc, _, err) = ptxr(&["compile", f.to_str().unwrap(), "--emit", "obj", "-o", dir.path().join("o.o").to_str().unwrap()]);
        assert_ne!(rc, 0, "{body}");
        assert!(err.contains("bad.ptx:9:2:") && err.contains(want), "{body}: {err}");
    }
}

/// `tcgen05.cp` forms that the ISA does not define (a shape without the multicast it needs,
/// or with one it does not take) and the decompressing forms ptxr does not run yet are
/// refused at the instruction, with its line and column.
#[test]
fn tcgen05_cp_forms_refused_at_the_instruction() {
    refused_on_sm100a(&[
        ("tcgen05.cp.cta_group::1.64x128b [%t], %d;", "`.64x128b` with `.warpx2::02_13` or `.warpx2::01_23`"),
        ("tcgen05.cp.cta_group::1.128x256b.warpx4 [%t], %d;", "`.128x256b`, `.4x256b` or `.128x128b` without multicast"),
        ("tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%t], %d;", "decompression"),
        ("tcgen05.cp.cta_group::2.128x256b [%t], %d;", "`.cta_group::2`"),
    ]);
}

/// Block-scaled `tcgen05.mma` forms the ISA does not define (a block-scaled kind without
/// `.block_scale`, `.block_scale` on a kind without scales, a scale vector size the kind does
/// not take, no scale operands) are refused at the instruction, with its line and column.
#[test]
fn tcgen05_block_scale_forms_refused_at_the_instruction() {
    refused_on_sm100a(&[
        ("tcgen05.mma.cta_group::1.kind::mxf8f6f4 [%t], %d, %d, %t, [%t], [%t], 0;", "`.kind::mxf8f6f4` needs `.block_scale`"),
        ("tcgen05.mma.cta_group::1.kind::f16.block_scale [%t], %d, %d, %t, 0;", "`.block_scale` is for the"),
        ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block16 [%t], %d, %d, %t, [%t], [%t], 0;", "`.kind::mxf4` takes `.scale_vec::2X`"),
        ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%t], %d, %d, %t, 0;", "[scale-A-tmem], [scale-B-tmem]"),
    ]);
}

/// `stmatrix`/`ldmatrix` forms the ISA does not define (`.m16n8` without `.trans`) or ptxr
/// does not run yet (the unpacking `ldmatrix .b8x16`) are refused at the instruction, with its
/// line and column; a `stmatrix` with the wrong number of source registers too.
#[test]
fn unsupported_stmatrix_forms_are_errors_at_the_instruction() {
    let dir = tempfile::tempdir().unwrap();
    for (body, at, want) in [
        ("stmatrix.sync.aligned.m16n8.x1.shared.b8 [%a], {%r1};", "bad.ptx:9:2:", "or .m16n8 .trans with .b8 elements"),
        ("ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r1}, [%a];", "bad.ptx:9:2:", "that unpacks 6- or 4-bit elements"),
        ("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 {%r0, %r1}, [%a];", "bad.ptx:9:", "ldmatrix destination fragment is a vector of 4 registers"),
        ("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%a], {%r1};", "bad.ptx:9:49:", "stmatrix source fragment is a vector of 2 registers"),
    ] {
        let f = dir.path().join("bad.ptx");
        std::fs::write(&f, format!(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %a;\n\tld.param.u64 %a, [p];\n\t{body}\n\tret;\n}}\n")).unwrap();
        let (rc, _, err) = ptxr(&["compile", f.to_str().unwrap(), "--emit", "obj", "-o", dir.path().join("o.o").to_str().unwrap()]);
        assert_ne!(rc, 0, "{body}");
        assert!(err.contains(at) && err.contains(want), "{body}: {err}");
    }
}

/// `mma.sp` forms ptxr refuses, at the instruction: a sparsity selector outside the range of
/// its shape (9.7.14.6.1: 0-3 with one metadata thread per group of four, 0-1 with two), one
/// that is a register, and a shape its types do not have (.s8 with K = 128).
#[test]
fn sparse_mma_errors_are_at_the_instruction() {
    let dir = tempfile::tempdir().unwrap();
    let k32 = "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r8,";
    for (body, at, want) in [
        (format!("{k32} 2;"), "bad.ptx:10:", "sparsity selector 2: 0 (threads 0 and 1 of each group of four) or 1 (threads 2 and 3)"),
        (format!("{k32} %r9;"), "bad.ptx:10:", "the sparsity selector of `mma.sp` is an integer constant"),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.s32.s8.s8.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6,%r7}, {%r0,%r1,%r2,%r3}, %r8, 0;".to_string(), "bad.ptx:10:2:", "ptxr runs .m16n8k16/.m16n8k32 with .f16/.bf16"),
    ] {
        let f = dir.path().join("bad.ptx");
        std::fs::write(&f, format!(".version 8.5\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\t.reg .b32 %r<10>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %a;\n\tld.param.u64 %a, [p];\n\t{body}\n\tret;\n}}\n")).unwrap();
        let (rc, _, err) = ptxr(&["compile", f.to_str().unwrap(), "--emit", "obj", "-o", dir.path().join("o.o").to_str().unwrap()]);
        assert_ne!(rc, 0, "{body}");
        assert!(err.contains(at) && err.contains(want), "{body}: {err}");
    }
}

/// cp.async.bulk.tensor where an H200 stops with an illegal instruction (an innermost
/// coordinate not 16-byte aligned, a store at a negative coordinate), and a tensor map that
/// ptxr did not encode: one message each, a nonzero exit, no crash.
#[test]
fn bad_tensor_copies_stop_with_a_message() {
    let f = "tests/cli/tma_errors.ptx";
    let map = |spec: &str| format!("{spec}=buf:zero:{}", if spec.starts_with("tmap:u8") { 1680 } else { 5120 });
    for (kernel, tmap) in [("bad_align_u8", map("tmap:u8:48x7x5:48x336:32x4x3")), ("bad_store_neg1", map("tmap:f16:64x40:128:32x16"))] {
        for exec in ["simd", "thread"] {
            let (rc, out, err) = ptxr(&["run", f, "--kernel", kernel, "--block", "128", "--exec", exec, "--arg", &tmap, "--arg", "buf:zero:8192"]);
            assert_eq!(rc, 1, "{kernel} ({exec}): {out}{err}");
            assert!(err.contains("error: cp.async.bulk.tensor: the box's innermost coordinate times the element size is not a multiple of 16 bytes, a store's coordinates are negative"), "{kernel} ({exec}): {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // 128 bytes that are not a ptxr tensor map
    let junk = format!("bytes:{}", "ab".repeat(128));
    let (rc, out, err) = ptxr(&["run", f, "--kernel", "bad_align_u8", "--block", "128", "--arg", &junk, "--arg", "buf:zero:8192"]);
    assert_eq!(rc, 1, "{out}{err}");
    assert!(err.contains("the tensor map is not one that ptxr encoded"), "{err}");
    // a tmap: argument the encoder refuses: a 24-byte innermost box row
    let (rc, _, err) = ptxr(&["run", f, "--kernel", "bad_align_u8", "--block", "128", "--arg", "tmap:u8:48x7x5:48x336:24x4x3=buf:zero:1680", "--arg", "buf:zero:8192"]);
    assert_eq!(rc, 1);
    assert!(err.contains("the box's innermost row is 24 bytes: it must be a multiple of 16"), "{err}");
}

/// A C function for the test programs: `load(path, n)`, n bytes of a file (64-byte aligned).
const C_LOAD_FILE: &str = r#"static void *load(const char *path, size_t n) {
    void *p = aligned_alloc(64, n);
    FILE *f = fopen(path, "rb");
    if (!f || fread(p, 1, n, f) != n) { printf("cannot read %s\n", path); exit(2); }
    fclose(f);
    return p;
}
"#;

/// The C ABI with tensor maps: Triton's persistent TMA matmul (tests/triton_sm90, whose
/// output an H200 gave) launched from C, its three maps made by `ptxr_tensor_map_encode_tiled`
/// with the swizzles of Triton's `tensordesc_meta` (64B, 64B, 128B); the product must be the
/// GPU's bytes. A map the encoder refuses returns 1.
#[test]
fn c_abi_tensor_maps_run_tritons_tma_matmul() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/triton_sm90");
    let exe = c_abi_program(
        dir.path(),
        "tests/triton_sm90/matmul_tma_f16.ptx",
        "tma",
        &r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tma.h"
LOAD_HELPER
int main(int argc, char **argv) {
    char path[4096];
    const int M = 192, N = 128, K = 96;
    snprintf(path, sizeof path, "%s/matmul_tma_f16.in0.bin", argv[1]);
    uint16_t *a = load(path, (size_t)M * K * 2);
    snprintf(path, sizeof path, "%s/matmul_tma_f16.in1.bin", argv[1]);
    uint16_t *bt = load(path, (size_t)N * K * 2);
    snprintf(path, sizeof path, "%s/matmul_tma_f16.out.bin", argv[1]);
    uint16_t *want = load(path, (size_t)M * N * 2);
    uint16_t *c = aligned_alloc(64, (size_t)M * N * 2);
    memset(c, 0, (size_t)M * N * 2);
    ptxr_tensor_map ma, mb, mc;
    uint64_t da[2] = {K, M}, db[2] = {K, N}, dc[2] = {N, M}, sa[1] = {K * 2}, sc[1] = {N * 2};
    uint32_t bab[2] = {32, 64}, bc[2] = {64, 64}, es[2] = {1, 1};
    int e = ptxr_tensor_map_encode_tiled(&ma, 6, 2, a, da, sa, bab, es, 0, 2, 0, 0)
          | ptxr_tensor_map_encode_tiled(&mb, 6, 2, bt, db, sa, bab, es, 0, 2, 0, 0)
          | ptxr_tensor_map_encode_tiled(&mc, 6, 2, c, dc, sc, bc, es, 0, 3, 0, 0);
    uint32_t bad_box[2] = {12, 64};
    int refused = ptxr_tensor_map_encode_tiled(&ma, 6, 2, a, da, sa, bad_box, es, 0, 0, 0, 0);
    /* the packed sub-byte types (cuda.h's rules): a 16U6_ALIGN16B map of 256 x 4 elements with
     * rows of 192 bytes and a 128 x 2 box is made; a 64-element box, a 16U4_ALIGN16B map at a
     * 16-byte (not 32-byte) address and a NaN fill are refused */
    ptxr_tensor_map ms;
    static __attribute__((aligned(32))) unsigned char sub[1024];
    uint64_t ds[2] = {256, 4}, ss[1] = {192}, ss4[1] = {128};
    uint32_t bs[2] = {128, 2}, bs64[2] = {64, 2};
    int sub_ok = ptxr_tensor_map_encode_tiled(&ms, 15, 2, sub, ds, ss, bs, es, 0, 3, 0, 0);
    int sub_bad = (ptxr_tensor_map_encode_tiled(&ms, 15, 2, sub, ds, ss, bs64, es, 0, 0, 0, 0) == 1)
                + (ptxr_tensor_map_encode_tiled(&ms, 14, 2, sub + 16, ds, ss4, bs, es, 0, 0, 0, 0) == 1)
                + (ptxr_tensor_map_encode_tiled(&ms, 15, 2, sub, ds, ss, bs, es, 0, 0, 0, 1) == 1);
    printf("sub-byte %d %d\n", sub_ok, sub_bad);
    int32_t m = M, n = N, k = K, ka = K, one = 1, nn = N;
    int64_t lk = K, lone = 1, ln = N;
    void *scratch = NULL;
    void *args[] = {&ma, &m, &k, &lk, &lone, &mb, &n, &k, &lk, &lone, &mc, &m, &n, &ln, &lone, &m, &nn, &ka, &scratch, &scratch};
    (void)one;
    ptxr_launch_config cfg = {{3, 1, 1}, {128, 1, 1}, 32792, NULL, NULL};
    int rc = ptxr_launch_matmul_tma(&cfg, args);
    printf("encode %d refused %d launch %d %s\n", e, refused, rc, ptxr_last_error());
    printf("%s\n", memcmp(c, want, (size_t)M * N * 2) ? "differs" : "same");
    return 0;
}
"#
        .replace("LOAD_HELPER\n", C_LOAD_FILE),
    );
    let out = std::process::Command::new(&exe).arg(&root).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("encode 0 refused 1 launch 0"), "{s}{}", String::from_utf8_lossy(&out.stderr));
    assert!(s.contains("same"), "{s}");
    assert!(s.contains("sub-byte 0 3"), "{s}");
}

/// The C ABI's clusters with CTA pairs: the Gluon two-CTA matmul of
/// tests/triton_sm100/two_cta_matmul_m128_f16 (tcgen05 `.cta_group::2`, M = 128: each cluster of
/// two CTAs computes 128 rows of C = A B, the odd CTA's TMA completing on the even CTA's
/// mbarrier by clearing bit 24 of its address, the even CTA's MMA writing the odd CTA's tensor
/// memory) launched from C with its tensor maps made by `ptxr_tensor_map_encode_tiled`; C must
/// be numpy's. The C runtime lays the windows 16 MiB apart and keeps each CTA's tensor memory
/// address after its window, as ptxr-runtime does.
#[test]
fn c_abi_cta_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/triton_sm100");
    let exe = c_abi_program(
        dir.path(),
        "tests/triton_sm100/two_cta_matmul_m128_f16.ptx",
        "pair",
        &r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pair.h"
LOAD_HELPER
int main(int argc, char **argv) {
    char path[4096];
    const int M = 512, N = 64, K = 128;
    snprintf(path, sizeof path, "%s/two_cta_matmul_m128_f16.in0.bin", argv[1]);
    uint16_t *a = load(path, (size_t)M * K * 2);
    snprintf(path, sizeof path, "%s/two_cta_matmul_m128_f16.in1.bin", argv[1]);
    uint16_t *b = load(path, (size_t)K * N * 2);
    snprintf(path, sizeof path, "%s/two_cta_matmul_m128_f16.out.bin", argv[1]);
    float *want = load(path, (size_t)M * N * 4);
    float *c = aligned_alloc(64, (size_t)M * N * 4);
    memset(c, 0, (size_t)M * N * 4);
    ptxr_tensor_map ma, mb, mc;
    uint64_t da[2] = {K, M}, db[2] = {N, K}, dc[2] = {N, M}, sa[1] = {K * 2}, sb[1] = {N * 2}, sc[1] = {N * 4};
    uint32_t ba[2] = {64, 64}, bb[2] = {32, 64}, bc[2] = {32, 64}, es[2] = {1, 1};
    int e = ptxr_tensor_map_encode_tiled(&ma, 6, 2, a, da, sa, ba, es, 0, 3, 0, 0)
          | ptxr_tensor_map_encode_tiled(&mb, 6, 2, b, db, sb, bb, es, 0, 2, 0, 0)
          | ptxr_tensor_map_encode_tiled(&mc, 7, 2, c, dc, sc, bc, es, 0, 3, 0, 0);
    int32_t m = M, n = N, k = K;
    int64_t lk = K, ln = N, lone = 1;
    void *scratch = NULL;
    void *args[] = {&ma, &m, &k, &lk, &lone, &mb, &k, &n, &ln, &lone, &mc, &m, &n, &ln, &lone, &scratch, &scratch};
    ptxr_launch_config cfg = {{8, 1, 1}, {128, 1, 1}, 16384, NULL, NULL};
    int rc = ptxr_launch_two_cta_matmul(&cfg, args);
    printf("encode %d launch %d %s\n", e, rc, ptxr_last_error());
    printf("%s\n", memcmp(c, want, (size_t)M * N * 4) ? "differs" : "same");
    return 0;
}
"#
        .replace("LOAD_HELPER\n", C_LOAD_FILE),
    );
    let out = std::process::Command::new(&exe).arg(&root).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("encode 0 launch 0"), "{s}{}", String::from_utf8_lossy(&out.stderr));
    assert!(s.contains("same"), "{s}");
}

/// The C ABI with an im2col tensor map: the Gluon kernel of tests/triton_sm90/im2col_conv_tap_f32
/// (one TMA im2col load per program: the input pixels of the tap (2, 1) of a 3x3 convolution with
/// padding 1 over a 2x5x6x32 NHWC input) launched from C, its input map made by
/// `ptxr_tensor_map_encode_im2col` (the corners of a padded 3x3 filter, -1 and -1 in W and H),
/// its output map by `_tiled`; the rows must be numpy's. A map with an empty bounding box and one
/// of rank 2 are refused.
#[test]
fn c_abi_im2col_tensor_maps() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/triton_sm90");
    let exe = c_abi_program(
        dir.path(),
        "tests/triton_sm90/im2col_conv_tap_f32.ptx",
        "tap",
        &r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
LOAD_HELPER
int main(int argc, char **argv) {
    char path[4096];
    snprintf(path, sizeof path, "%s/im2col_conv_tap_f32.in0.bin", argv[1]);
    float *x = load(path, 2 * 5 * 6 * 32 * 4);
    snprintf(path, sizeof path, "%s/im2col_conv_tap_f32.out.bin", argv[1]);
    float *want = load(path, 64 * 32 * 4);
    float *out = aligned_alloc(64, 64 * 32 * 4);
    memset(out, 0xff, 64 * 32 * 4);
    ptxr_tensor_map mi, mo;
    uint64_t di[4] = {32, 6, 5, 2}, si[3] = {128, 768, 3840}, dout[2] = {32, 64}, sout[1] = {128};
    int lower[2] = {-1, -1}, upper[2] = {-1, -1}, wide[2] = {3, 0}, narrow[2] = {-3, 0};
    uint32_t es[4] = {1, 1, 1, 1}, box[2] = {32, 16};
    int e = ptxr_tensor_map_encode_im2col(&mi, 7, 4, x, di, si, lower, upper, 32, 16, es, 0, 3, 0, 0)
          | ptxr_tensor_map_encode_tiled(&mo, 7, 2, out, dout, sout, box, es, 0, 3, 0, 0);
    ptxr_tensor_map bad;
    int empty = ptxr_tensor_map_encode_im2col(&bad, 7, 4, x, di, si, wide, narrow, 32, 16, es, 0, 3, 0, 0);
    int rank2 = ptxr_tensor_map_encode_im2col(&bad, 7, 2, x, di, si, lower, upper, 32, 16, es, 0, 3, 0, 0);
    int32_t zero = 0, r64 = 64, c32 = 32;
    int64_t lzero = 0, l32 = 32, lone = 1;
    void *scratch = NULL;
    void *args[] = {&mi, &zero, &zero, &lzero, &lzero, &mo, &r64, &c32, &l32, &lone, &scratch, &scratch};
    ptxr_launch_config cfg = {{4, 1, 1}, {32, 1, 1}, 2056, NULL, NULL};
    int rc = ptxr_launch_im2col_tap(&cfg, args);
    printf("encode %d empty %d rank2 %d launch %d %s\n", e, empty, rank2, rc, ptxr_last_error());
    printf("%s\n", memcmp(out, want, 64 * 32 * 4) ? "differs" : "same");
    return 0;
}
"#
        .replace("LOAD_HELPER\n", C_LOAD_FILE),
    );
    let out = std::process::Command::new(&exe).arg(&root).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("encode 0 empty 1 rank2 1 launch 0"), "{s}{} {:?}", String::from_utf8_lossy(&out.stderr), out.status);
    assert!(s.contains("same"), "{s}");
}

/// The tcgen05 forms ptxr does not run yet (tests/cli/tcgen05_unsupported.ptx): `tcgen05.cp`
/// that decompresses and CTA pairs (`.cta_group::2`) are errors naming them at their
/// file:line:col, with a nonzero exit and no crash.
#[test]
fn unsupported_tcgen05_forms_are_named() {
    let (rc, _, err) = ptxr(&["compile", "tests/cli/tcgen05_unsupported.ptx", "-o", "/dev/null"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("tcgen05_unsupported.ptx:12:2: error: `tcgen05.cp` with decompression"), "{err}");
    assert!(err.contains("tcgen05_unsupported.ptx:21:2: error: `tcgen05.shift` with `.cta_group::2` (CTA pairs) is not supported by ptxr yet"), "{err}");
}

/// Device-side launches (CUDA dynamic parallelism) through the C ABI's runtime: the grids
/// that `tests/filetests/call/device_launch.ptx` launches from the device run after their
/// parent, nested launches too (values worked in that file's comments).
#[test]
fn c_abi_device_side_launches() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_program(
        dir.path(),
        "tests/filetests/call/device_launch.ptx",
        "dl",
        r#"#include <stdio.h>
#include "dl.h"
int main(void) {
    uint32_t out[67] = {0}, *p = out, o2[4] = {0}, *q = o2, depth = 3;
    void *args[] = {&p}, *a2[] = {&q, &depth};
    ptxr_launch_config cfg = {{3, 1, 1}, {32, 1, 1}, 0, NULL, NULL};
    int r = ptxr_launch_parent(&cfg, args);
    printf("parent %d out[9]=%u out[21]=%u out[65]=%u\n", r, out[9], out[21], out[65]);
    ptxr_launch_config c2 = {{1, 1, 1}, {1, 1, 1}, 0, NULL, NULL};
    r = ptxr_launch_nest(&c2, a2);
    printf("nest %d %u %u %u %u\n", r, o2[0], o2[1], o2[2], o2[3]);
    return 0;
}
"#,
    );
    let out = std::process::Command::new(&exe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("parent 0 out[9]=8001 out[21]=16101 out[65]=7"), "{text}");
    assert!(text.contains("nest 0 1 2 3 4"), "{text}");
}

/// A cooperative launch (`--cooperative`, as `cudaLaunchCooperativeKernel`): every CTA runs at
/// once, the grid's workspace is in %envreg1:%envreg2, and a grid-wide barrier written the
/// way cooperative groups' grid.sync() is (tests/cli/grid_barrier.ptx) lets each CTA read
/// what all the others wrote before it, on both execution paths and with more CTAs than
/// cores. Expected: out[c] = c, then out[CTAs + c] = (c + 1) % CTAs (the neighbour's entry,
/// written before the barrier).
#[test]
fn cooperative_launch_synchronizes_the_grid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ring.bin");
    for exec in ["thread", "simd"] {
        for ctas in [3u32, 40] {
            let (rc, _, err) = ptxr(&["run", "tests/cli/grid_barrier.ptx", "--kernel", "ring", "--grid", &ctas.to_string(), "--block", "64", "--exec", exec, "--cooperative", "--arg", &format!("buf:zero:{}", 8 * ctas), "--dump", &format!("0={}", out.display()), "--timeout", "60"]);
            assert_eq!(rc, 0, "{exec} {ctas}: {err}");
            let bytes = std::fs::read(&out).unwrap();
            let v: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            let want: Vec<u32> = (0..ctas).chain((0..ctas).map(|c| (c + 1) % ctas)).collect();
            assert_eq!(v, want, "{exec} {ctas}");
        }
    }
    // Not launched cooperatively, the workspace is null and the kernel traps (as cooperative
    // groups do on a GPU) instead of waiting for CTAs that need not be running.
    let (rc, _, err) = ptxr(&["run", "tests/cli/grid_barrier.ptx", "--kernel", "ring", "--grid", "4", "--block", "64", "--arg", "buf:zero:32"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("grid_barrier.ptx:29:") && err.contains("`trap` executed"), "{err}");
    assert!(err.contains("note: the kernel reads %envreg1/%envreg2") && err.contains("run it with --cooperative"), "{err}");
    // More CTAs than run at once: an error before any CTA starts.
    let (rc, _, err) = ptxr(&["run", "tests/cli/grid_barrier.ptx", "--kernel", "ring", "--grid", "5000", "--block", "32", "--cooperative", "--arg", "buf:zero:40000"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("kernel `ring`: a cooperative launch of 5000 CTAs; ptxr runs at most 4096 at once"), "{err}");
    // With clusters (tests/cli/coop_cluster.ptx): the cluster barrier and distributed shared
    // memory, then the grid barrier, in one launch. Expected values from the kernel's comment:
    // CTA c is rank c mod n; out[c*64 + t] = ((c mod n + 1) mod n)*1000 + t, and after the grid
    // barrier out[C*64 + c*64 + t] is the next CTA's entry out[((c + 1) mod C)*64 + t].
    let first = |c: u32, t: u32, n: u32| ((c % n + 1) % n) * 1000 + t;
    for exec in ["thread", "simd"] {
        for (n, ctas) in [(2u32, 8u32), (4, 40)] {
            let out = dir.path().join("exchange.bin");
            let (rc, _, err) = ptxr(&["run", "tests/cli/coop_cluster.ptx", "--kernel", "exchange", "--grid", &ctas.to_string(), "--block", "64", "--exec", exec, "--cooperative", "--cluster", &n.to_string(), "--arg", &format!("buf:zero:{}", 2 * 64 * 4 * ctas), "--dump", &format!("0={}", out.display()), "--timeout", "60"]);
            assert_eq!(rc, 0, "{exec} {n} {ctas}: {err}");
            let v: Vec<u32> = std::fs::read(&out).unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            for c in 0..ctas {
                for t in 0..64 {
                    assert_eq!(v[(c * 64 + t) as usize], first(c, t, n), "{exec} {n} {ctas}: CTA {c} thread {t}");
                    assert_eq!(v[(ctas * 64 + c * 64 + t) as usize], first((c + 1) % ctas, t, n), "{exec} {n} {ctas}: CTA {c} thread {t} after the grid barrier");
                }
            }
        }
        // A CTA that traps before its cluster's barrier stops its cluster's CTAs waiting there
        // and the other clusters' waiting at the grid barrier.
        let start = std::time::Instant::now();
        let (rc, _, err) = ptxr(&["run", "tests/cli/coop_cluster.ptx", "--kernel", "trap_one", "--grid", "24", "--block", "64", "--exec", exec, "--cooperative", "--cluster", "4", "--arg", "u32:5", "--timeout", "60"]);
        assert_eq!(rc, 1, "{exec}: {err}");
        assert!(err.contains("coop_cluster.ptx:112:") && err.contains("CTA (5,0,0), thread (0,0,0): error: `trap` executed"), "{exec}: {err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(30), "{exec}: {err}");
    }
    // A CTA that stops with an error stops the CTAs waiting for it at the barrier, and the
    // error reported is its own.
    let start = std::time::Instant::now();
    let (rc, _, err) = ptxr(&["run", "tests/cli/grid_barrier.ptx", "--kernel", "trap_one", "--grid", "24", "--block", "64", "--cooperative", "--arg", "u32:5", "--timeout", "60"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("CTA (5,0,0), thread (0,0,0): error: `trap` executed"), "{err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30), "{err}");
}

/// The C ABI's clusters (`ptxr_set_cluster`): tests/cli/cluster_ring.ptx's ring in clusters of
/// 4 (values as in `clusters_share_memory_and_meet_at_the_cluster_barrier`, checked by the
/// program), the multicast copy in clusters of 2, a trapping CTA that stops its cluster, and a
/// grid that is not a whole number of clusters.
#[test]
fn c_abi_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_program(
        dir.path(),
        "tests/cli/cluster_ring.ptx",
        "cl",
        r#"#include <stdio.h>
#include <string.h>
#include "cl.h"
int main(void) {
    uint32_t vals[512], counts[8], regs[64], src[16], mc[64];
    memset(vals, 0, sizeof vals);
    memset(counts, 0, sizeof counts);
    memset(regs, 0, sizeof regs);
    memset(mc, 0, sizeof mc);
    void *pv = vals, *pc = counts, *pr = regs;
    void *ring_args[] = {&pv, &pc, &pr};
    ptxr_launch_config cfg = {{8, 1, 1}, {64, 1, 1}, 0, NULL, NULL};
    ptxr_set_cluster(4, 1, 1);
    int rc = ptxr_launch_ring(&cfg, ring_args);
    int bad = 0;
    for (uint32_t c = 0; c < 8; c++) {
        uint32_t r = c % 4, next = (r + 1) % 4;
        for (uint32_t t = 0; t < 64; t++) bad += vals[c * 64 + t] != next * 1000 + t;
        uint32_t want[8] = {r, 4, c / 4, 2, r, 4, next << 4 | 2, next * 1000};
        bad += memcmp(&regs[8 * c], want, sizeof want) != 0;
    }
    bad += counts[0] != 256 || counts[1] != 256;
    printf("ring %d %d [%s]\n", rc, bad, ptxr_last_error());
    for (uint32_t i = 0; i < 16; i++) src[i] = 0x1000 + 7 * i;
    void *ps = src, *pm = mc;
    void *mc_args[] = {&ps, &pm};
    ptxr_launch_config cfg2 = {{4, 1, 1}, {16, 1, 1}, 0, NULL, NULL};
    ptxr_set_cluster(2, 1, 1);
    rc = ptxr_launch_multicast(&cfg2, mc_args);
    bad = 0;
    for (int i = 0; i < 64; i++) bad += mc[i] != src[i % 16];
    printf("multicast %d %d [%s]\n", rc, bad, ptxr_last_error());
    ptxr_set_cluster(4, 1, 1);
    rc = ptxr_launch_trapper(&cfg, NULL);
    printf("trapper %d %s\n", rc, ptxr_last_error());
    ptxr_set_cluster(3, 1, 1);
    rc = ptxr_launch_ring(&cfg, ring_args);
    printf("uneven %d %s\n", rc, ptxr_last_error());
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("ring 0 0 []"), "{out}");
    assert!(out.contains("multicast 0 0 []"), "{out}");
    // PTXR_ERR_TRAP is 3, PTXR_ERR_CONFIG 1.
    assert!(out.contains("trapper 3 tests/cli/cluster_ring.ptx:106: in kernel `trapper`, CTA (1,0,0)"), "{out}");
    assert!(out.contains("uneven 1 tests/cli/cluster_ring.ptx: error: kernel `ring`: grid 8x1x1 is not a whole number of clusters of 3x1x1 CTAs"), "{out}");
}

/// The C ABI's cooperative launches (`ptxr_set_cooperative`): the grid barrier of
/// tests/cli/grid_barrier.ptx with every CTA on a thread of its own (40 CTAs, more than the
/// cores), out[CTAs + c] = (c + 1) % CTAs; without it the kernel traps; a trapping CTA stops
/// the ones waiting for it and is the error reported; too many CTAs is PTXR_ERR_CONFIG.
#[test]
fn c_abi_cooperative_launch_synchronizes_the_grid() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_program(
        dir.path(),
        "tests/cli/grid_barrier.ptx",
        "gb",
        r#"#include <stdio.h>
#include <string.h>
#include "gb.h"
int main(void) {
    enum { N = 40 };
    uint32_t out[2 * N];
    memset(out, 0, sizeof out);
    void *p = out;
    void *ring_args[] = {&p};
    ptxr_launch_config cfg = {{N, 1, 1}, {64, 1, 1}, 0, NULL, NULL};
    ptxr_set_cooperative(1);
    int rc = ptxr_launch_ring(&cfg, ring_args);
    int bad = 0;
    for (int c = 0; c < N; c++) bad += out[c] != (uint32_t)c || out[N + c] != (uint32_t)((c + 1) % N);
    printf("ring %d %d [%s]\n", rc, bad, ptxr_last_error());
    uint32_t which = 5;
    void *trap_args[] = {&which};
    cfg.grid[0] = 24;
    rc = ptxr_launch_trap_one(&cfg, trap_args);
    printf("trap_one %d %s\n", rc, ptxr_last_error());
    cfg.grid[0] = 5000;
    rc = ptxr_launch_ring(&cfg, ring_args);
    printf("too many %d %s\n", rc, ptxr_last_error());
    ptxr_set_cooperative(0);
    cfg.grid[0] = 4;
    rc = ptxr_launch_ring(&cfg, ring_args);
    printf("not cooperative %d %s\n", rc, ptxr_last_error());
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("ring 0 0 []"), "{out}");
    // PTXR_ERR_TRAP is 3, PTXR_ERR_CONFIG 1.
    assert!(out.contains("trap_one 3 tests/cli/grid_barrier.ptx:88: in kernel `trap_one`, CTA (5,0,0), thread (0,0,0): error: `trap` executed"), "{out}");
    assert!(out.contains("too many 1 kernel `ring`: a cooperative launch of 5000 CTAs; ptxr runs at most 4096 at once"), "{out}");
    assert!(out.contains("not cooperative 3 tests/cli/grid_barrier.ptx:29:"), "{out}");
}

/// `ptxr run --check` (memcheck): the first access outside the memory a kernel may reach, or
/// a misaligned one, stops the launch with the thread, the PTX line and column, the address,
/// the size and the nearest allocation (tests/cli/check.ptx, check_shared_bounds.ptx; each kernel's
/// comment says what it does wrong); a kernel without bad accesses runs clean and gives its
/// results (out[t] = (t ^ 1) + table[t % 8], worked by hand), and the corpus's kernels run
/// clean too.
#[test]
fn check_mode_reports_bad_accesses() {
    let run = |args: &[&str]| {
        let mut a = vec!["run", "--check"];
        a.extend_from_slice(args);
        ptxr(&a)
    };
    let (rc, _, err) = run(&["tests/cli/check.ptx", "--kernel", "past_end", "--block", "33", "--arg", "buf:zero:128", "--arg", "u32:32"]);
    assert_ne!(rc, 0);
    assert!(err.contains("check.ptx:20:2: in kernel `past_end`, CTA (0,0,0), thread (32,0,0): error: invalid __global__ write of 4 bytes at 0x") && err.contains(": 0 bytes after the end of buffer argument 0 (`pout`) (0x") && err.contains(", 128 bytes)"), "{err}");
    let (rc, _, err) = run(&["tests/cli/check_shared_bounds.ptx", "--kernel", "shared_past_end", "--block", "96", "--arg", "u64:0"]);
    assert_ne!(rc, 0);
    assert!(err.contains("check_shared_bounds.ptx:19:2: in kernel `shared_past_end`, CTA (0,0,0), thread (64,0,0): error: invalid __shared__ write of 4 bytes at 0x") && err.contains("shared offset 256, outside the CTA's 256 bytes of shared memory"), "{err}");
    let (rc, _, err) = run(&["tests/cli/check.ptx", "--kernel", "misaligned", "--arg", "buf:zero:16"]);
    assert_ne!(rc, 0);
    assert!(err.contains("check.ptx:31:2: in kernel `misaligned`, CTA (0,0,0), thread (0,0,0): error: misaligned __global__ read of 4 bytes at 0x") && err.contains("the address is not a multiple of the access size"), "{err}");
    let (rc, _, err) = run(&["tests/cli/check.ptx", "--kernel", "before_table", "--arg", "buf:zero:16"]);
    assert_ne!(rc, 0);
    assert!(err.contains("check.ptx:47:2: in kernel `before_table`") && err.contains("error: invalid read of 4 bytes at 0x") && err.contains(": 4 bytes before variable `table` (0x") && err.contains(", 32 bytes)"), "{err}");
    let (rc, out, err) = run(&["tests/cli/check.ptx", "--kernel", "clean", "--block", "64", "--arg", "buf:zero:256", "--dump", "0=-"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(words(out.trim()), (0..64u32).map(|t| (t ^ 1) + (t % 8 + 1)).collect::<Vec<_>>());
    // racecheck, initcheck and synccheck on shared memory (check_shared.ptx): a write and a
    // read of one byte by threads of two warps with no barrier between, the same with
    // bar.sync between (clean), a read of a byte never written, and one warp split over two
    // bar.sync instructions.
    let (rc, _, err) = run(&["tests/cli/check_shared.ptx", "--kernel", "race", "--block", "64", "--arg", "buf:zero:8"]);
    assert_ne!(rc, 0);
    assert!(err.contains("check_shared.ptx:23:2: in kernel `race`, CTA (0,0,0), thread (32,0,0): error: race on the __shared__ byte at offset") && err.contains("written by thread (0,0,0) at line 19 and read by thread (32,0,0) here, with no barrier between (read-after-write)"), "{err}");
    let (rc, out, err) = run(&["tests/cli/check_shared.ptx", "--kernel", "ordered", "--block", "64", "--arg", "buf:zero:8", "--dump", "0=-"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(words(out.trim())[0], 7);
    let (rc, _, err) = run(&["tests/cli/check_shared.ptx", "--kernel", "uninit", "--block", "32", "--arg", "buf:zero:8"]);
    assert_ne!(rc, 0);
    assert!(err.contains("check_shared.ptx:62:2: in kernel `uninit`, CTA (0,0,0), thread (0,0,0): error: uninitialized __shared__ read: the byte at offset") && err.contains("has not been written since the launch began"), "{err}");
    let (rc, _, err) = run(&["tests/cli/check_shared.ptx", "--kernel", "divergent", "--block", "32", "--arg", "buf:zero:8"]);
    assert_ne!(rc, 0);
    assert!(err.contains("error: divergent barrier: threads 0 and 16 of warp 0 wait at barrier 0 at lines 79 and 76"), "{err}");
    // Real kernels: no false reports.
    for (file, kernel, grid, block, args) in [
        ("tests/corpus/histogram.nvrtc.ptx", "histogram256", "4", "256", vec!["buf:u8:1,2,3,250,7,7,9", "buf:zero:1024", "s32:7"]),
        // reduce_sum: n = 1000, blocks of 256, ceil(n / 512) = 2 blocks writing out[2]
        ("tests/corpus/reduce_shared.nvrtc.ptx", "reduce_sum", "2", "256", vec!["buf:zero:4000", "buf:zero:8", "s32:1000"]),
        ("tests/corpus/reduce_shared.clang.ptx", "reduce_sum", "2", "256", vec!["buf:zero:4000", "buf:zero:8", "s32:1000"]),
        // wmma: a 32x8 tile staged through shared memory by one warp (wmma.load/store,
        // checked per element), and 16x16 tiles straight from global memory.
        ("tests/corpus/wmma_gemm.nvrtc.ptx", "wmma_gemm_h", "1,1", "32", vec!["buf:zero:1024", "buf:zero:256", "buf:zero:512", "s32:32", "s32:8", "s32:16"]),
        ("tests/corpus/wmma_gemm.nvrtc.ptx", "wmma_gemm", "1,2", "64", vec!["buf:zero:2048", "buf:zero:2048", "buf:zero:4096", "s32:32", "s32:32", "s32:32"]),
    ] {
        let mut a = vec![file, "--kernel", kernel, "--grid", grid, "--block", block];
        for x in &args {
            a.extend(["--arg", x]);
        }
        let (rc, _, err) = run(&a);
        assert_eq!(rc, 0, "{file} {kernel}: {err}");
    }
    // The checking mode compiles for the CPU only.
    let (rc, _, err) = ptxr(&["compile", "--check", "--target", "nvptx64", "tests/cli/check.ptx"]);
    assert_ne!(rc, 0);
    assert!(err.contains("--check compiles for the CPU (host, x86_64, aarch64), not nvptx64"), "{err}");
    // wmma_gemm_h stages A with `for (i = t; i < 32 * 16; i += 32)` (tests/cuda/wmma_gemm.cu):
    // written for one warp. With two, threads 0 and 32 both write sa[32] (i = 32: thread 0's
    // second element, thread 32's first) with no barrier between: sa sits at offset 16 of the
    // window, so byte 16 + 2 * 32 = 80.
    let (rc, _, err) = run(&["tests/corpus/wmma_gemm.nvrtc.ptx", "--kernel", "wmma_gemm_h", "--block", "64", "--arg", "buf:zero:1024", "--arg", "buf:zero:256", "--arg", "buf:zero:512", "--arg", "s32:32", "--arg", "s32:8", "--arg", "s32:16"]);
    assert_ne!(rc, 0);
    assert!(err.contains("wmma_gemm.nvrtc.ptx:282:2: in kernel `wmma_gemm_h`, CTA (0,0,0), thread (32,0,0): error: race on the __shared__ byte at offset 80: written by thread (0,0,0) at line 339 and by thread (32,0,0) here, with no barrier between (write-after-write)"), "{err}");
    // A 32x32 C of 1000 f32 instead of 1024: the wmma.load of C (line 63) reads past it.
    let (rc, _, err) = run(&["tests/corpus/wmma_gemm.nvrtc.ptx", "--kernel", "wmma_gemm", "--grid", "1,2", "--block", "64", "--arg", "buf:zero:2048", "--arg", "buf:zero:2048", "--arg", "buf:zero:4000", "--arg", "s32:32", "--arg", "s32:32", "--arg", "s32:32"]);
    assert_ne!(rc, 0);
    assert!(err.contains("wmma_gemm.nvrtc.ptx:63:2: in kernel `wmma_gemm`") && err.contains("error: invalid __global__ read of 4 bytes at 0x") && err.contains(": 0 bytes after the end of buffer argument 2 (`wmma_gemm_param_2`) (0x") && err.contains(", 4000 bytes)"), "{err}");
}

/// [`c_abi_program`] for a library compiled for the checking mode (`ptxr compile --check`).
fn c_abi_checked_program(dir: &std::path::Path, ptx: &str, stem: &str, main_c: &str) -> std::path::PathBuf {
    c_abi_program_with(dir, ptx, stem, main_c, &["--check"])
}

/// The checking mode through the C ABI (`ptxr compile --check`, `ptxr_check_add`): the C
/// runtime reports what `ptxr run --check` reports, on the per-kind filetests
/// (tests/filetests/check/, reports worked by hand there): global accesses against the
/// registered ranges and the module's variables (unchecked while none is registered),
/// shared-memory races and uninitialized reads, barrier thread counts. PTXR_ERR_CHECK is 11.
#[test]
fn c_abi_check_mode_reports() {
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_checked_program(
        dir.path(),
        "tests/filetests/check/memcheck.ptx",
        "memcheck",
        r#"#include <stdio.h>
#include <stdlib.h>
#include "memcheck.h"
int main(void) {
    uint32_t *out = calloc(16, 4);
    uint32_t n = 7;
    int32_t i = -1;
    void *args[] = {&out, &n}, *targs[] = {&out, &i};
    ptxr_launch_config cfg = {{1, 1, 1}, {16, 1, 1}, 0, NULL, NULL};
    int rc = ptxr_launch_store_upto(&cfg, args);
    printf("unregistered %d [%s]\n", rc, ptxr_last_error());
    ptxr_check_add(out, 28, "out");
    rc = ptxr_launch_store_upto(&cfg, args);
    printf("past_end %d %s\n", rc, ptxr_last_error());
    ptxr_check_clear();
    ptxr_check_add(out, 32, "out");
    rc = ptxr_launch_store_upto(&cfg, args);
    printf("in_bounds %d [%s] %u\n", rc, ptxr_last_error(), out[7]);
    cfg.block[0] = 1;
    rc = ptxr_launch_table_at(&cfg, targs);
    printf("before_table %d %s\n", rc, ptxr_last_error());
    cfg.block[0] = 33;
    ptxr_check_clear();
    ptxr_check_add(out, 64, "out");
    rc = ptxr_launch_shared_at(&cfg, args);
    printf("shared %d %s\n", rc, ptxr_last_error());
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("unregistered 0 []"), "{out}");
    assert!(out.contains("past_end 11 tests/filetests/check/memcheck.ptx:23:2: in kernel `store_upto`, CTA (0,0,0), thread (7,0,0): error: invalid __global__ write of 4 bytes at 0x") && out.contains(": 0 bytes after the end of out (0x") && out.contains(", 28 bytes)"), "{out}");
    assert!(out.contains("in_bounds 0 [] 7"), "{out}");
    assert!(out.contains("before_table 11 tests/filetests/check/memcheck.ptx:73:2: in kernel `table_at`, CTA (0,0,0), thread (0,0,0): error: invalid read of 4 bytes at 0x") && out.contains(": 4 bytes before variable `table` (0x") && out.contains(", 32 bytes)"), "{out}");
    assert!(out.contains("shared 11 tests/filetests/check/memcheck.ptx:97:2: in kernel `shared_at`, CTA (0,0,0), thread (32,0,0): error: invalid __shared__ write of 4 bytes at 0x") && out.contains("shared offset 128, outside the CTA's 128 bytes of shared memory"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_checked_program(
        dir.path(),
        "tests/filetests/check/racecheck.ptx",
        "racecheck",
        r#"#include <stdio.h>
#include <stdlib.h>
#include "racecheck.h"
int main(void) {
    uint32_t *out = calloc(2, 4);
    void *args[] = {&out};
    ptxr_check_add(out, 8, "out");
    ptxr_launch_config cfg = {{1, 1, 1}, {64, 1, 1}, 0, NULL, NULL};
    int rc = ptxr_launch_raw(&cfg, args);
    printf("raw %d %s\n", rc, ptxr_last_error());
    rc = ptxr_launch_war(&cfg, args);
    printf("war %d %s\n", rc, ptxr_last_error());
    rc = ptxr_launch_clean(&cfg, args);
    printf("clean %d [%s] %u %u\n", rc, ptxr_last_error(), out[0], out[1]);
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("raw 11 tests/filetests/check/racecheck.ptx:27:2: in kernel `raw`, CTA (0,0,0), thread (32,0,0): error: race on the __shared__ byte at offset 0: written by thread (0,0,0) at line 23 and read by thread (32,0,0) here, with no barrier between (read-after-write)"), "{out}");
    assert!(out.contains("war 11 tests/filetests/check/racecheck.ptx:57:2: in kernel `war`, CTA (0,0,0), thread (32,0,0): error: race on the __shared__ byte at offset 260: read by thread (0,0,0) at line 52 and written by thread (32,0,0) here, with no barrier between (write-after-read)"), "{out}");
    assert!(out.contains("clean 0 [] 41 64"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_checked_program(
        dir.path(),
        "tests/filetests/check/synccheck.ptx",
        "synccheck",
        r#"#include <stdio.h>
#include <stdlib.h>
#include "synccheck.h"
int main(void) {
    uint32_t *out = calloc(64, 4);
    void *args[] = {&out};
    ptxr_check_add(out, 256, "out");
    ptxr_launch_config cfg = {{1, 1, 1}, {32, 1, 1}, 0, NULL, NULL};
    int rc = ptxr_launch_aligned_split(&cfg, args);
    printf("aligned_split %d %s\n", rc, ptxr_last_error());
    cfg.block[0] = 64;
    rc = ptxr_launch_counts(&cfg, args);
    printf("counts %d %s\n", rc, ptxr_last_error());
    rc = ptxr_launch_unaligned_split(&cfg, args);
    printf("unaligned_split %d [%s] %u %u\n", rc, ptxr_last_error(), out[0], out[63]);
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("aligned_split 11 tests/filetests/check/synccheck.ptx:21: in kernel `aligned_split`, CTA (0,0,0), thread (16,0,0): error: divergent barrier: threads 0 and 16 of warp 0 wait at barrier 0 at lines 24 and 21"), "{out}");
    assert!(out.contains("counts 11 tests/filetests/check/synccheck.ptx:70: in kernel `counts`, CTA (0,0,0), thread (32,0,0): error: inconsistent barrier thread counts: threads 0 and 32 wait at barrier 0 with thread counts 32 and 64 (lines 73 and 70)"), "{out}");
    assert!(out.contains("unaligned_split 0 [] 1 64"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_checked_program(
        dir.path(),
        "tests/filetests/check/initcheck.ptx",
        "initcheck",
        r#"#include <stdio.h>
#include <stdlib.h>
#include "initcheck.h"
int main(void) {
    uint32_t *out = calloc(1, 4);
    uint32_t i = 5, full = 0;
    void *args[] = {&out, &i, &full};
    ptxr_check_add(out, 4, "out");
    ptxr_launch_config cfg = {{1, 1, 1}, {32, 1, 1}, 0, NULL, NULL};
    int rc = ptxr_launch_halves(&cfg, args);
    printf("halves %d %s\n", rc, ptxr_last_error());
    full = 1;
    rc = ptxr_launch_halves(&cfg, args);
    printf("full %d [%s] %u\n", rc, ptxr_last_error(), *out);
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("halves 11 tests/filetests/check/initcheck.ptx:36:2: in kernel `halves`, CTA (0,0,0), thread (0,0,0): error: uninitialized __shared__ read: the byte at offset 22 has not been written since the launch began"), "{out}");
    assert!(out.contains("full 0 [] 5"), "{out}");

    // A tensor map over less memory than its tensor spans (64 x 40 f16, rows of 128 bytes:
    // 5120 bytes) given only 4096 (tests/filetests/check/tma.ptx): the box at (0, 24) reads
    // bytes 3072 through 5055 (rows 24..39, columns 0..31), 960 past the 4096; the box at
    // (0, 8) stays inside.
    let dir = tempfile::tempdir().unwrap();
    let exe = c_abi_checked_program(
        dir.path(),
        "tests/filetests/check/tma.ptx",
        "tma",
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tma.h"
int main(void) {
    uint8_t *t = calloc(1, 4096);
    uint32_t *out = calloc(1, 4);
    ptxr_tensor_map map;
    uint64_t dims[2] = {64, 40}, strides[1] = {128};
    uint32_t box[2] = {32, 16}, es[2] = {1, 1};
    if (ptxr_tensor_map_encode_tiled(&map, 6, 2, t, dims, strides, box, es, 0, 0, 0, 0) != 0) return 1;
    ptxr_check_add(t, 4096, "tensor");
    ptxr_check_add(out, 4, "out");
    uint32_t x = 0, y = 24;
    void *args[] = {&map, &out, &x, &y};
    ptxr_launch_config cfg = {{1, 1, 1}, {32, 1, 1}, 0, NULL, NULL};
    int rc = ptxr_launch_box_at(&cfg, args);
    printf("rows24 %d %s\n", rc, ptxr_last_error());
    y = 8;
    rc = ptxr_launch_box_at(&cfg, args);
    printf("rows8 %d [%s]\n", rc, ptxr_last_error());
    return 0;
}
"#,
    );
    let out = c_abi_run(&exe);
    assert!(out.contains("rows24 11 tests/filetests/check/tma.ptx:30:2: in kernel `box_at`, CTA (0,0,0), thread (0,0,0): error: invalid __global__ read of 1984 bytes at 0x") && out.contains(": the last 960 of its bytes past the end of tensor (0x") && out.contains(", 4096 bytes)"), "{out}");
    assert!(out.contains("rows8 0 []"), "{out}");
}

/// A `.sync` collective whose membermask names lanes at another instruction: the per-thread
/// path meets them (PTX ISA 9.7.8.5, sm_70 and up); the warp path stops with a message that
/// says why and names `--exec thread`, never a wrong result.
#[test]
fn warp_collective_meeting_at_two_instructions() {
    let args = ["run", "tests/cli/warp_apart.ptx", "--kernel", "apart", "--block", "32", "--arg", "buf:zero:128"];
    let (rc, _, err) = ptxr(&[&args[..], &["--exec", "thread"]].concat());
    assert_eq!(rc, 0, "{err}");
    let (rc, _, err) = ptxr(&[&args[..], &["--exec", "simd"]].concat());
    assert_ne!(rc, 0);
    assert!(err.contains("warp_apart.ptx:24") && err.contains("membermask names a lane that is not at this instruction") && err.contains("--exec thread"), "{err}");
    // Visibly the same mask at both: per thread under --exec auto.
    let (rc, out, err) = ptxr(&["compile", "--report", "tests/cli/warp_apart.ptx", "-o", &std::env::temp_dir().join("ptxr_warp_apart.o").to_string_lossy()]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("kernel split: thread") && out.contains("the membermask of another `shfl`") && out.contains("kernel apart: simd"), "{out}");
    // Per-lane masks that disagree (lanes 16..31 name lanes whose mask is another): a
    // deadlock reported at the instruction.
    let (rc, _, err) = ptxr(&["run", "tests/cli/warp_apart.ptx", "--kernel", "mixed", "--block", "32", "--arg", "buf:zero:128", "--exec", "simd"]);
    assert_ne!(rc, 0);
    assert!(err.contains("warp_apart.ptx:68") && err.contains("deadlock"), "{err}");
}

/// A matrix kernel's divergent epilogue that stores through scattered addresses (`mma`
/// m8n8k16 s8, lane l storing D[l / 4][2 (l % 4) + j] at row * 8 + col, lanes with l % 3 == 0
/// storing nothing): on the warp path its guarded lane loop is marked to stay scalar, and both
/// paths store what the product of the two matrices gives (computed here from the fragments'
/// layout: lane l holds A[l / 4][4 (l % 4) + i] and B[4 (l % 4) + i][l / 4] in byte i).
#[test]
fn mma_scatter_epilogue_stays_scalar() {
    let (rc, ir, err) = ptxr(&["compile", "tests/cli/mma_scatter_epilogue.ptx", "--exec", "simd", "--emit", "llvm-ir", "-O0", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ir.contains("!\"llvm.loop.vectorize.enable\", i1 false"), "no scalar lane loop: {ir}");
    let frag = |l: u32| [(l * 7 + 3) as u8, (l * 5 + 1) as u8, (l * 3 + 2) as u8, (l * 11 + 9) as u8];
    let (mut a, mut b) = ([[0i32; 16]; 8], [[0i32; 8]; 16]);
    for l in 0..32u32 {
        for (i, x) in frag(l).iter().enumerate() {
            a[(l / 4) as usize][(l % 4) as usize * 4 + i] = *x as i8 as i32;
            b[(l % 4) as usize * 4 + i][(l / 4) as usize] = *x as i8 as i32;
        }
    }
    let mut expect = String::new();
    for r in 0..8 {
        for c in 0..8 {
            let stores = (r * 4 + c / 2) % 3 != 0;
            let d: i32 = if stores { (0..16).map(|k| a[r][k] * b[k][c]).sum() } else { 0 };
            expect += &d.to_le_bytes().iter().map(|x| format!("{x:02x}")).collect::<String>();
        }
    }
    let words: Vec<String> = (0..32u32).map(|l| format!("{:#x}", u32::from_le_bytes(frag(l)))).collect();
    let buf = format!("buf:u32:{}", words.join(","));
    for exec in ["simd", "thread"] {
        let (rc, out, err) = ptxr(&["run", "tests/cli/mma_scatter_epilogue.ptx", "--kernel", "mma_scatter", "--grid", "1", "--block", "32", "--exec", exec, "--arg", &buf, "--arg", &buf, "--arg", "buf:zero:256", "--dump", "2=-"]);
        assert_eq!(rc, 0, "{err}");
        assert_eq!(out.trim(), expect, "--exec {exec}");
    }
}
