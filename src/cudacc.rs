//! `ptxr cuda`: a compile driver for CUDA C++ programs (`.cu` files with host code and
//! kernels), in the manner of `nvcc`, whose executables run on the CPU through ptxr's CUDA
//! runtime library (`libcudart.so.12` of `ptxr-cuda`).
//!
//! For each `.cu` file:
//! 1. the device side is compiled to PTX by clang-19 (`--cuda-device-only -S`) against the
//!    CUDA headers and libdevice of NVIDIA's PyPI wheels (the "CUDA root" assembled from
//!    them by [`cuda_root`]);
//! 2. the host side is compiled by clang-19 (`--cuda-host-only`) with that PTX, NUL
//!    terminated, embedded as the program's device image (`-fcuda-include-gpubinary`):
//!    clang's startup code registers it through `__cudaRegisterFatBinary`, and ptxr's runtime
//!    compiles it on first use;
//! 3. unless `-c`, everything is linked with clang++-19 against ptxr's `libcudart`, with an
//!    rpath to it.
//!
//! Options (nvcc's spelling): `-o FILE`, `-c`, `--ptx`/`-ptx` (device PTX only), `-I DIR`,
//! `-D NAME[=V]`, `-U NAME`, `-O0`..`-O3`, `-arch=sm_XX` (`--gpu-architecture`, default
//! sm_80), `-std=c++NN`, `-g`, `-lineinfo`, `-L DIR`, `-lNAME`, `-Xcompiler A,B` (host
//! compiler options), `-v` (print the commands). `.c`/`.cpp`/`.o`/`.a` inputs are compiled
//! or linked with the program.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `ptxr cuda` was asked to do.
#[derive(Debug, Default, Clone)]
pub struct Options {
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub compile_only: bool,
    pub ptx_only: bool,
    pub includes: Vec<String>,
    pub defines: Vec<String>,
    pub undefines: Vec<String>,
    pub opt: String,
    pub arch: String,
    pub std: Option<String>,
    pub debug: bool,
    pub lib_dirs: Vec<String>,
    pub libs: Vec<String>,
    pub host_args: Vec<String>,
    pub verbose: bool,
    /// Where ptxr's `libcudart.so` is (default: the directory of the running executable).
    pub runtime_dir: Option<PathBuf>,
}

impl Options {
    /// Parses nvcc-style arguments.
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut o = Options { opt: "3".into(), arch: "sm_80".into(), ..Default::default() };
        let mut it = args.iter();
        let value = |flag: &str, rest: &str, it: &mut std::slice::Iter<String>| -> Result<String> {
            if !rest.is_empty() {
                Ok(rest.trim_start_matches('=').to_string())
            } else {
                it.next().cloned().ok_or_else(|| anyhow!("`{flag}` needs a value"))
            }
        };
        while let Some(a) = it.next() {
            let a = a.as_str();
            match a {
                "-c" | "--compile" => o.compile_only = true,
                "-ptx" | "--ptx" => o.ptx_only = true,
                "-g" | "-G" | "--debug" | "--device-debug" => o.debug = true,
                "-lineinfo" | "--generate-line-info" | "--expt-relaxed-constexpr" | "--expt-extended-lambda" | "--extended-lambda" | "-use_fast_math" => {}
                "-v" | "--verbose" => o.verbose = true,
                "-o" | "--output-file" => o.output = Some(PathBuf::from(value(a, "", &mut it)?)),
                "-Xcompiler" | "--compiler-options" => o.host_args.extend(value(a, "", &mut it)?.split(',').map(String::from)),
                _ if a.starts_with("-O") && a.len() == 3 => o.opt = a[2..].to_string(),
                _ if a.starts_with("-I") => o.includes.push(value("-I", &a[2..], &mut it)?),
                _ if a.starts_with("-D") => o.defines.push(value("-D", &a[2..], &mut it)?),
                _ if a.starts_with("-U") => o.undefines.push(value("-U", &a[2..], &mut it)?),
                _ if a.starts_with("-L") => o.lib_dirs.push(value("-L", &a[2..], &mut it)?),
                _ if a.starts_with("-l") => o.libs.push(value("-l", &a[2..], &mut it)?),
                _ if a.starts_with("-std") => o.std = Some(value("-std", &a[4..], &mut it)?),
                _ if a.starts_with("-arch") || a.starts_with("--gpu-architecture") || a.starts_with("-code") || a.starts_with("--gpu-code") => {
                    let flag = if a.starts_with("-arch") { "-arch" } else if a.starts_with("--gpu-architecture") { "--gpu-architecture" } else if a.starts_with("-code") { "-code" } else { "--gpu-code" };
                    let v = value(flag, &a[flag.len()..], &mut it)?;
                    // -arch=sm_80, -arch=compute_80: the PTX target; -code is implied.
                    if !flag.contains("code") {
                        let v = v.replace("compute_", "sm_");
                        if !v.starts_with("sm_") {
                            bail!("`{flag}={v}`: give a GPU architecture such as sm_80 (ptxr runs the PTX for it on the CPU)");
                        }
                        o.arch = v;
                    }
                }
                _ if a.starts_with('-') => bail!("`ptxr cuda`: unknown option `{a}` (see `ptxr cuda --help`)"),
                _ => o.inputs.push(PathBuf::from(a)),
            }
        }
        if o.inputs.is_empty() {
            bail!("`ptxr cuda`: no input files");
        }
        if !matches!(o.opt.as_str(), "0" | "1" | "2" | "3") {
            bail!("`-O{}`: optimization levels are -O0 to -O3", o.opt);
        }
        Ok(o)
    }
}

fn clang() -> String {
    std::env::var("PTXR_CLANG").unwrap_or_else(|_| "clang-19".into())
}

fn clangxx() -> String {
    std::env::var("PTXR_CLANGXX").unwrap_or_else(|_| "clang++-19".into())
}

/// The project's venv: `$PTXR_VENV`, else `.venv` of the checkout the running executable
/// was built in (`target/<profile>/ptxr` → `.venv`), else `./.venv`.
fn venv() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("PTXR_VENV") {
        return Some(PathBuf::from(v));
    }
    let mut cands = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        for up in exe.ancestors().skip(1).take(5) {
            cands.push(up.join(".venv"));
        }
    }
    cands.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv"));
    cands.push(PathBuf::from(".venv"));
    cands.into_iter().find(|p| p.is_dir())
}

/// A CUDA installation as clang expects one (`include/`, `nvvm/libdevice/`), assembled
/// from NVIDIA's wheels in the venv (`nvidia-cuda-runtime-cu12`: headers;
/// `nvidia-cuda-nvcc-cu12`: `crt/` headers and libdevice): links in
/// `<venv>/ptxr-cuda-root`, made on first use; `nvidia-cuda-cccl-cu12`: libcu++, CUB and
/// Thrust, which cooperative groups need. `$PTXR_CUDA_ROOT` names another one.
pub fn cuda_root() -> Result<PathBuf> {
    if let Some(r) = std::env::var_os("PTXR_CUDA_ROOT") {
        return Ok(PathBuf::from(r));
    }
    let venv = venv().ok_or_else(|| anyhow!("no CUDA headers: run scripts/setup.sh (it installs them into the project's .venv), or set PTXR_CUDA_ROOT"))?;
    let lib = venv.join("lib");
    let site = std::fs::read_dir(&lib).ok().and_then(|d| d.filter_map(|e| e.ok()).find(|e| e.file_name().to_string_lossy().starts_with("python3"))).map(|e| e.path().join("site-packages")).ok_or_else(|| anyhow!("{}: no python3.* site-packages", lib.display()))?;
    let nv = site.join("nvidia");
    let (rt_inc, nvcc_inc, cccl_inc, libdevice) = (nv.join("cuda_runtime/include"), nv.join("cuda_nvcc/include"), nv.join("cuda_cccl/include"), nv.join("cuda_nvcc/nvvm/libdevice"));
    for p in [&rt_inc, &nvcc_inc, &cccl_inc, &libdevice] {
        if !p.is_dir() {
            bail!("{} missing: run scripts/setup.sh", p.display());
        }
    }
    let root = venv.join("ptxr-cuda-root");
    // The stamp names what the root holds: a root made by an older ptxr is made again.
    let stamp = root.join("ptxr-root-v2");
    if stamp.exists() {
        return Ok(root);
    }
    let tmp = venv.join(format!("ptxr-cuda-root.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("include"))?;
    std::fs::create_dir_all(tmp.join("nvvm"))?;
    std::fs::create_dir_all(tmp.join("bin"))?;
    for dir in [&rt_inc, &nvcc_inc, &cccl_inc] {
        for e in std::fs::read_dir(dir)?.filter_map(|e| e.ok()) {
            if e.file_name().to_string_lossy().starts_with("__") {
                continue;
            }
            let to = tmp.join("include").join(e.file_name());
            if !to.exists() {
                std::os::unix::fs::symlink(e.path(), &to)?;
            }
        }
    }
    // clang's CUDA wrapper header includes this cuRAND header unconditionally; cuRAND is not
    // part of ptxr's setup, so an empty one stands in for it.
    std::fs::write(tmp.join("include/curand_mtgp32_kernel.h"), "// ptxr: cuRAND's device API is not installed\n")?;
    std::os::unix::fs::symlink(&libdevice, tmp.join("nvvm/libdevice"))?;
    std::fs::write(tmp.join("ptxr-root-v2"), "")?;
    if root.exists() {
        let _ = std::fs::remove_dir_all(&root);
    }
    match std::fs::rename(&tmp, &root) {
        Ok(()) => {}
        Err(_) if stamp.exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", root.display())),
    }
    Ok(root)
}

fn run(cmd: &mut Command, verbose: bool, what: &str) -> Result<()> {
    if verbose {
        eprintln!("{cmd:?}");
    }
    let st = cmd.status().with_context(|| format!("cannot run {:?} ({what})", cmd.get_program()))?;
    if !st.success() {
        bail!("{what} failed");
    }
    Ok(())
}

/// Arguments common to both sides of a `.cu` compilation.
fn cuda_args(o: &Options, root: &Path) -> Vec<String> {
    let mut a = vec!["-x".into(), "cuda".into(), format!("--cuda-path={}", root.display()), format!("--cuda-gpu-arch={}", o.arch), "-Wno-unknown-cuda-version".into()];
    a.push(format!("-std={}", o.std.clone().unwrap_or_else(|| "c++17".into())));
    a.extend(o.includes.iter().map(|i| format!("-I{i}")));
    a.extend(o.defines.iter().map(|d| format!("-D{d}")));
    a.extend(o.undefines.iter().map(|u| format!("-U{u}")));
    if o.debug {
        a.push("-g".into());
    }
    a
}

/// Compiles `src`'s device side to PTX at `ptx`.
fn device_ptx(o: &Options, root: &Path, src: &Path, ptx: &Path) -> Result<()> {
    let mut c = Command::new(clang());
    c.args(cuda_args(o, root)).arg("--cuda-device-only").arg("-S").arg("-O3").arg(src).arg("-o").arg(ptx);
    run(&mut c, o.verbose, &format!("compiling the device code of {}", src.display()))
}

/// The directory of ptxr's `libcudart.so`.
fn runtime_dir(o: &Options) -> Result<PathBuf> {
    if let Some(d) = &o.runtime_dir {
        return Ok(d.clone());
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().ok_or_else(|| anyhow!("no directory of the ptxr executable"))?.to_path_buf();
    if !dir.join("libcudart.so").exists() {
        bail!("{}: no libcudart.so (ptxr's CUDA runtime, built by `cargo build --release`)", dir.display());
    }
    Ok(dir)
}

/// Runs `ptxr cuda` with `o`.
pub fn compile(o: &Options) -> Result<()> {
    let root = cuda_root()?;
    let tmp = tempfile::tempdir()?;
    let out_name = |src: &Path, ext: &str| -> PathBuf {
        match (&o.output, o.inputs.len()) {
            (Some(out), 1) => out.clone(),
            _ => PathBuf::from(src.file_stem().unwrap_or_default()).with_extension(ext),
        }
    };
    if (o.compile_only || o.ptx_only) && o.output.is_some() && o.inputs.len() > 1 {
        bail!("`-o` with `-c` or `--ptx` takes one input file");
    }
    let mut objects = Vec::new();
    for (k, src) in o.inputs.iter().enumerate() {
        let ext = src.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "cu" => {
                if o.ptx_only {
                    device_ptx(o, &root, src, &out_name(src, "ptx"))?;
                    continue;
                }
                let ptx = tmp.path().join(format!("{k}.ptx"));
                device_ptx(o, &root, src, &ptx)?;
                // The device image: the PTX, NUL-terminated (the runtime reads it as text).
                let mut image = std::fs::read(&ptx)?;
                image.push(0);
                let image_path = tmp.path().join(format!("{k}.image"));
                std::fs::write(&image_path, image)?;
                let obj = if o.compile_only { out_name(src, "o") } else { tmp.path().join(format!("{k}.o")) };
                let mut c = Command::new(clang());
                c.args(cuda_args(o, &root)).arg("--cuda-host-only").arg(format!("-O{}", o.opt)).arg("-Xclang").arg("-fcuda-include-gpubinary").arg("-Xclang").arg(&image_path).args(&o.host_args).arg("-c").arg(src).arg("-o").arg(&obj);
                run(&mut c, o.verbose, &format!("compiling the host code of {}", src.display()))?;
                objects.push(obj);
            }
            "c" | "cc" | "cpp" | "cxx" => {
                if o.ptx_only {
                    continue;
                }
                let obj = if o.compile_only { out_name(src, "o") } else { tmp.path().join(format!("{k}.o")) };
                let mut c = Command::new(if ext == "c" { clang() } else { clangxx() });
                c.arg(format!("-O{}", o.opt)).args(o.includes.iter().map(|i| format!("-I{i}"))).arg(format!("-I{}", root.join("include").display())).args(o.defines.iter().map(|d| format!("-D{d}"))).args(&o.host_args).arg("-c").arg(src).arg("-o").arg(&obj);
                run(&mut c, o.verbose, &format!("compiling {}", src.display()))?;
                objects.push(obj);
            }
            "o" | "a" | "so" => objects.push(src.clone()),
            _ => bail!("{}: not a .cu, .c, .cpp, .o or .a file", src.display()),
        }
    }
    if o.compile_only || o.ptx_only {
        return Ok(());
    }
    let rt = runtime_dir(o)?;
    let out = o.output.clone().unwrap_or_else(|| PathBuf::from("a.out"));
    let mut c = Command::new(clangxx());
    c.args(&objects).arg("-o").arg(&out).args(o.lib_dirs.iter().map(|d| format!("-L{d}"))).arg("-L").arg(&rt).arg("-lcudart").arg(format!("-Wl,-rpath,{}", rt.display())).args(o.libs.iter().map(|l| format!("-l{l}"))).arg("-lm").arg("-lpthread").args(&o.host_args);
    run(&mut c, o.verbose, "linking")
}
