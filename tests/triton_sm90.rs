//! Triton kernels compiled for Hopper (sm_90a: `wgmma`, `cp.async`, `fence.proxy.async`; in
//! the persistent matmuls TMA copies with mbarrier transaction counts, through tensor maps
//! given as `tmap:` arguments with the swizzles of Triton's `tensordesc_meta`, or made by the
//! kernel with `tensormap.replace` in its global scratch),
//! run by `ptxr run` on both execution paths and compared with what an NVIDIA H200 gave for
//! the same PTX and inputs (`scripts/gen-triton-hopper.py --run`, Triton 3.6; the inputs and
//! the GPU's output are the `.bin` files beside each `.ptx`, the launch is its `.json`).
//! `*_ctas2` are two of those matmuls compiled with `num_ctas=2` (Triton 3.9, `--clusters`:
//! clusters of 2 CTAs that split each program's tile, `.reqnctapercluster 2`, cluster barriers),
//! not run on a GPU: they take the one-CTA kernels' inputs and must give those kernels' GPU
//! outputs.
//! The matmuls take small integer inputs, so any summation order gives the GPU's bytes; the
//! attention kernel (exp2 through `ex2.approx`, f32 sums in another order) is compared within
//! 2^-10 relative (an f16 ulp is 2^-10 of its binade).

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir_of(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join(sub)
}

/// The value of `"key":` in the flat JSON the generator writes: a string, a number, or an
/// array of either (as strings).
fn field(json: &str, key: &str) -> Option<Vec<String>> {
    let at = json.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = json[at..].trim_start();
    let item = |s: &str| s.trim().trim_matches('"').to_string();
    if let Some(body) = rest.strip_prefix('[') {
        let end = body.find(']')?;
        Some(body[..end].split(',').map(item).filter(|s| !s.is_empty()).collect())
    } else {
        let end = rest.find(|c| c == ',' || c == '\n' || c == '}')?;
        Some(vec![item(&rest[..end])])
    }
}

struct Launch {
    dir: PathBuf,
    name: String,
    kernel: String,
    grid: String,
    block: String,
    shared: String,
    args: Vec<String>,
    out_arg: String,
    out: PathBuf,
    exact: bool,
}

fn launches(sub: &str) -> Vec<Launch> {
    let dir = dir_of(sub);
    let mut v = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().map_or(false, |x| x == "json")).collect();
    files.sort();
    for p in files {
        let j = std::fs::read_to_string(&p).unwrap();
        let one = |k: &str| field(&j, k).unwrap_or_else(|| panic!("{}: no {k}", p.display())).remove(0);
        v.push(Launch {
            dir: dir.clone(),
            name: p.file_stem().unwrap().to_string_lossy().into_owned(),
            kernel: one("kernel"),
            grid: field(&j, "grid").unwrap().join(","),
            block: field(&j, "block").unwrap().join(","),
            shared: one("shared"),
            args: field(&j, "args").unwrap(),
            out_arg: one("out_arg"),
            out: dir.join(one("out")),
            exact: one("exact") == "true",
        });
    }
    assert!(v.len() >= 3, "Triton corpus missing");
    v
}

fn run(l: &Launch, exec: &str, out: &Path) -> Result<(), String> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ptxr"));
    c.current_dir(&l.dir).args(["run", &format!("{}.ptx", l.name), "--kernel", &l.kernel, "--grid", &l.grid, "--block", &l.block, "--shared", &l.shared]);
    // "check": the checking mode (`ptxr run --check`, per thread).
    if exec == "check" {
        c.arg("--check");
    } else {
        c.args(["--exec", exec]);
    }
    for a in &l.args {
        c.args(["--arg", a]);
    }
    c.args(["--dump", &format!("{}={}", l.out_arg, out.display())]);
    let o = c.output().unwrap();
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

fn f16(b: &[u8]) -> f64 {
    let h = u16::from_le_bytes([b[0], b[1]]);
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (e, m) = ((h >> 10) & 31, (h & 1023) as f64);
    s * if e == 0 { m * 2f64.powi(-24) } else { (1.0 + m / 1024.0) * 2f64.powi(e as i32 - 15) }
}

/// Runs every launch of `sub` on both paths and compares with its expected output; returns
/// the failures and the number of runs.
fn check(sub: &str) -> (Vec<String>, usize) {
    check_on(sub, &["simd", "thread"])
}

/// [`check`] on the paths `execs` (`simd`, `thread`, or `check` for the checking mode).
fn check_on(sub: &str, execs: &[&str]) -> (Vec<String>, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    let mut ran = 0;
    for l in launches(sub) {
        for &exec in execs {
            let out = tmp.path().join(format!("{}.{exec}.bin", l.name));
            if let Err(e) = run(&l, exec, &out) {
                failed.push(format!("{} ({exec}): {e}", l.name));
                continue;
            }
            ran += 1;
            let (got, want) = (std::fs::read(&out).unwrap(), std::fs::read(&l.out).unwrap());
            assert_eq!(got.len(), want.len(), "{}: output size", l.name);
            if l.exact {
                if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                    failed.push(format!("{} ({exec}): byte {i} is {:#04x}, expected {:#04x}", l.name, got[i], want[i]));
                }
            } else {
                // f16 outputs within 2^-10 relative (at least 2^-14 absolute)
                for k in (0..got.len()).step_by(2) {
                    let (x, y) = (f16(&got[k..]), f16(&want[k..]));
                    if (x - y).abs() > (y.abs() * 2f64.powi(-10)).max(2f64.powi(-14)) {
                        failed.push(format!("{} ({exec}): element {} is {x}, the GPU gave {y}", l.name, k / 2));
                        break;
                    }
                }
            }
        }
    }
    (failed, ran)
}

#[test]
fn triton_sm90a_kernels_give_the_gpus_results() {
    let (failed, ran) = check("triton_sm90");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(ran >= 28, "only {ran} runs");
}

/// Triton's Blackwell (sm_100a) kernels: `tcgen05` with tensor memory, compiled from the same
/// Triton functions as tests/triton_sm90's (`gen-triton-hopper.py --ptx --sm 100`), run on those
/// kernels' inputs: they must give the H200's outputs for the same computations (no Blackwell GPU
/// was at hand; the matmuls are exact in any order, attention within the tolerance above).
/// `dot_scaled_*` (`gen-triton-hopper.py --scaled`): block-scaled matmuls (`tcgen05.mma`
/// `.kind::mxf8f6f4` and `.kind::mxf4` with UE8M0 scales that Triton places in tensor memory;
/// e2m1 by e4m3 with the E2M1 operand padded in shared memory) against numpy's product of
/// the dequantized inputs, exact.
/// The checking mode (`ptxr run --check`) on every Triton kernel of both directories: no
/// report (TMA copies, mbarriers, cp.async, wgmma and tcgen05 are bounds-checked; cp.async,
/// ldmatrix and plain accesses also race- and initialization-checked where the module allows)
/// and the same results.
#[test]
fn triton_kernels_run_clean_in_the_checking_mode() {
    for sub in ["triton_sm90", "triton_sm100"] {
        let (failed, ran) = check_on(sub, &["check"]);
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert!(ran >= 12, "{sub}: only {ran} runs");
    }
}

#[test]
fn triton_sm100a_kernels_give_the_same_results() {
    let (failed, ran) = check("triton_sm100");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(ran >= 30, "only {ran} runs");
}
