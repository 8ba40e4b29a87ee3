//! The NVPTX round trip (`ptxr roundtrip`): every corpus file and every run filetest goes
//! PTX → ptxr → LLVM NVPTX → PTX', ptxas 12.9 (from the project's venv, installed by
//! `scripts/setup.sh`) validates every PTX', and both sides run on the CPU on seeded inputs
//! with every output byte compared. A deliberately altered PTX' must be caught and reported
//! with kernel, buffer, element, both values, the seed and a command that reproduces it; LLVM
//! IR from clang goes through the `.ll` direction.

mod common;

use ptxr::roundtrip::{find_ptxas, roundtrip_ptx, Options};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}


fn opts() -> Options {
    Options { seeds: 2, cpu_opt: 2, ..Options::default() }
}

/// ptxas must be there: `scripts/setup.sh` installs it into the venv.
fn require_ptxas() {
    assert!(find_ptxas(None).is_some(), "ptxas not found: run scripts/setup.sh (it installs ptxas 12.9 into .venv)");
}

fn roundtrip_all(files: &[PathBuf]) {
    require_ptxas();
    let mut failed = Vec::new();
    for f in files {
        match roundtrip_ptx(f, &opts()) {
            Ok(o) if o.failures == 0 && o.ptxas_ok == Some(true) => {}
            Ok(o) => failed.push(o.report),
            Err(e) => failed.push(format!("{}: {e:#}", f.display())),
        }
    }
    assert!(failed.is_empty(), "{} of {} files fail the round trip:\n{}", failed.len(), files.len(), failed.join("\n"));
}

#[test]
fn corpus_round_trips_clean() {
    let mut files = Vec::new();
    common::ptx_files(&root().join("tests/corpus"), &mut files);
    files.sort();
    assert!(files.len() >= 30, "corpus missing");
    roundtrip_all(&files);
}

#[test]
fn filetests_round_trip_clean() {
    let mut files = Vec::new();
    common::ptx_files(&root().join("tests/filetests"), &mut files);
    files.sort();
    assert!(files.len() >= 60, "filetests missing");
    // Device-side launches (CUDA dynamic parallelism) call NVIDIA's device runtime library,
    // which only a relocatable (-rdc) compile and link can resolve: ptxr's NVPTX round trip
    // does neither (it compiles whole programs), so the one filetest that launches from the
    // device runs on the CPU (filetests.rs, exec_paths.rs) but has no PTX' to compare.
    let (cdp, rest): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|f| std::fs::read_to_string(f).map_or(false, |t| t.contains("LaunchDeviceV2")));
    assert_eq!(cdp.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>(), ["device_launch.ptx"]);
    // Blackwell's tcgen05, the TMA gather4/scatter4 modes and the 8-bit ldmatrix/stmatrix
    // need an sm_100 target, which LLVM 19's NVPTX backend does not have: the round trip says
    // so at the instruction instead of producing PTX'.
    let sm100 = |t: &str| t.contains("tcgen05.") || t.contains(".tile::gather4") || t.contains(".tile::scatter4") || t.contains("ldmatrix.sync.aligned.m16n16") || t.contains("stmatrix.sync.aligned.m16n8");
    let (tc, rest): (Vec<PathBuf>, Vec<PathBuf>) = rest.into_iter().partition(|f| std::fs::read_to_string(f).map_or(false, |t| sm100(&t)));
    assert!(tc.len() >= 2);
    for f in &tc {
        let err = match roundtrip_ptx(f, &opts()) {
            Ok(o) => o.report,
            Err(e) => format!("{e:#}"),
        };
        assert!(err.contains("` does not reach LLVM 19's NVPTX backend, which has no sm_100 target"), "{}: {err}", f.display());
    }
    roundtrip_all(&rest);
}

fn ptxr(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxr")).args(args).current_dir(root()).output().expect("run ptxr");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "ptxr panicked: {stderr}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// Replaces the first `fma.rn.f32 d, a, b, c;` with `add.rn.f32 d, a, c;` (saxpy's
/// `a*x + y` becomes `x + y`).
fn alter(ptx: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for line in ptx.lines() {
        let t = line.trim();
        if !done && t.starts_with("fma.rn.f32") {
            let ops: Vec<&str> = t["fma.rn.f32".len()..].trim().trim_end_matches(';').split(',').map(|s| s.trim()).collect();
            assert_eq!(ops.len(), 4, "{t}");
            out.push_str(&format!("\tadd.rn.f32 {}, {}, {};\n", ops[0], ops[1], ops[3]));
            done = true;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(done, "no fma.rn.f32 in PTX':\n{ptx}");
    out
}

#[test]
fn altered_ptx_prime_is_caught_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let prime = dir.path().join("saxpy.prime.ptx");
    let src = "tests/corpus/saxpy.nvrtc.ptx";
    let (rc, out, err) = ptxr(&["roundtrip", src, "--seeds", "2", "--keep", prime.to_str().unwrap()]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("ptxas: PTX' is valid") && out.ends_with("ok\n"), "{out}");
    let altered = dir.path().join("saxpy.altered.ptx");
    std::fs::write(&altered, alter(&std::fs::read_to_string(&prime).unwrap())).unwrap();
    let (rc, out, err) = ptxr(&["roundtrip", src, "--seeds", "2", "--against", altered.to_str().unwrap()]);
    assert_eq!(rc, 1, "the difference must fail the run: {out}{err}");
    // kernel, buffer, element, both values, seed, the command that reproduces it.
    let line = out.lines().find(|l| l.starts_with("FAIL kernel saxpy, buffer arg1")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("element ") && line.contains("original 0x") && line.contains("PTX' 0x") && line.contains("seed 0"), "{line}");
    let repro = out.lines().find(|l| l.trim_start().starts_with("reproduce: ")).unwrap_or_else(|| panic!("{out}"));
    let cmd: Vec<&str> = repro.trim_start().trim_start_matches("reproduce: ").split_whitespace().collect();
    assert_eq!(cmd[0], "ptxr");
    assert!(cmd.contains(&"--seed") && cmd.contains(&"--kernel") && cmd.contains(&"--against"), "{repro}");
    // The command reproduces the same difference.
    let (rc2, out2, _) = ptxr(&cmd[1..]);
    assert_eq!(rc2, 1, "{out2}");
    assert!(out2.lines().any(|l| l == line), "reproduction differs:\n{out2}\nexpected:\n{line}");
}

#[test]
fn a_missing_ptxas_is_reported_and_the_execution_checks_still_run() {
    let (rc, out, err) = ptxr(&["roundtrip", "tests/corpus/saxpy.nvrtc.ptx", "--seeds", "1", "--ptxas", "/nonexistent/ptxas"]);
    assert_eq!(rc, 1, "{out}{err}");
    assert!(out.contains("FAIL ptxas: /nonexistent/ptxas does not exist"), "{out}");
    assert!(out.contains("saxpy<<<") && out.contains("every output byte equal"), "{out}");
}

fn clang() -> Option<&'static str> {
    ["clang-19", "clang"].into_iter().find(|c| Command::new(c).arg("--version").output().map_or(false, |o| o.status.success()))
}

/// CUDA → clang-19 NVPTX-form LLVM IR → `ptxr roundtrip FILE.ll`: the IR's PTX is lifted
/// by ptxr and compared against its own round trip.
#[test]
fn llvm_ir_from_clang_round_trips() {
    let Some(clang) = clang() else {
        panic!("clang-19 not found: run scripts/setup.sh");
    };
    require_ptxas();
    let dir = tempfile::tempdir().unwrap();
    for name in ["saxpy", "warp_reduce", "matmul_tiled"] {
        let ll = dir.path().join(format!("{name}.ll"));
        let st = Command::new(clang)
            .args(["-x", "cuda", "--cuda-device-only", "-S", "-emit-llvm", "--cuda-gpu-arch=sm_70", "--cuda-feature=+ptx64", "-nocudainc", "-nocudalib", "-O3", "-std=c++17"])
            .arg("-I")
            .arg(root().join("tests/cuda"))
            .arg("-o")
            .arg(&ll)
            .arg(root().join(format!("tests/cuda/{name}.cu")))
            .status()
            .unwrap();
        assert!(st.success(), "clang failed on {name}.cu");
        let text = std::fs::read_to_string(&ll).unwrap();
        assert!(text.contains("nvptx64-nvidia-cuda"), "not NVPTX-form IR");
        let spec = root().join(format!("tests/corpus/{name}.roundtrip"));
        if spec.is_file() {
            std::fs::copy(&spec, dir.path().join(format!("{name}.roundtrip"))).unwrap();
        }
        let (rc, out, err) = ptxr(&["roundtrip", ll.to_str().unwrap(), "--seeds", "2"]);
        assert_eq!(rc, 0, "{name}: {out}{err}");
        assert!(out.contains("ptxas: PTX' is valid") && out.contains("every output byte equal"), "{out}");
    }
}

#[test]
fn nvptx_target_emits_nvvm_ir_and_ptx() {
    // NVVM-form IR: kernel annotation, sreg intrinsics, shared in addrspace(3), warp intrinsics.
    let (rc, ir, err) = ptxr(&["compile", "--target", "nvptx64", "--emit", "llvm-ir", "tests/corpus/warp_reduce.nvrtc.ptx", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ir.contains("!nvvm.annotations") && ir.contains("!\"kernel\", i32 1"), "{ir}");
    assert!(ir.contains("@llvm.nvvm.read.ptx.sreg.tid.x"), "{ir}");
    assert!(ir.contains("@llvm.nvvm.shfl.sync.down.i32"), "{ir}");
    let (rc, ir, err) = ptxr(&["compile", "--target", "nvptx64", "--emit", "llvm-ir", "tests/corpus/reduce_shared.nvrtc.ptx", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ir.contains("addrspace(3)") && ir.contains("@llvm.nvvm.bar.sync"), "{ir}");
    // PTX at the default and a chosen ISA version / target.
    let (rc, ptx, err) = ptxr(&["compile", "--target", "nvptx64", "tests/corpus/saxpy.nvrtc.ptx", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ptx.contains(".version 6.4") && ptx.contains(".target sm_70") && ptx.contains(".visible .entry saxpy("), "{ptx}");
    let (rc, ptx, err) = ptxr(&["compile", "--target", "nvptx64", "--sm", "sm_80", "--ptx", "7.0", "tests/corpus/saxpy.nvrtc.ptx", "-o", "-"]);
    assert_eq!(rc, 0, "{err}");
    assert!(ptx.contains(".version 7.0") && ptx.contains(".target sm_80"), "{ptx}");
    // Bad options get one clear message.
    let (rc, _, err) = ptxr(&["compile", "--target", "nvptx64", "--sm", "70", "tests/corpus/saxpy.nvrtc.ptx", "-o", "-"]);
    assert_eq!(rc, 1);
    assert!(err.contains("--sm 70") && err.contains("sm_NN"), "{err}");
    let (rc, _, err) = ptxr(&["compile", "--target", "nvptx64", "--emit", "staticlib", "tests/corpus/saxpy.nvrtc.ptx"]);
    assert_eq!(rc, 1);
    assert!(err.contains("not available for nvptx64"), "{err}");
}
