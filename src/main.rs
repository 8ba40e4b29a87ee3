use clap::{Parser, Subcommand};
use ptxr::codegen::target::TargetKind;
use ptxr::driver::Emit;
use ptxr::runtime::{parse_arg, ArgSpec, Dim3, LaunchConfig};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// ptxr: compile NVIDIA PTX for CPUs (x86-64, AArch64) through LLVM.
#[derive(Parser)]
#[command(name = "ptxr", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and validate PTX files; errors as FILE:LINE:COL: error: ...
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Compile a PTX file to an object, assembly, LLVM IR or a static library.
    Compile {
        file: PathBuf,
        /// host, x86_64, aarch64, nvptx64 (PTX again, through LLVM's NVPTX backend)
        #[arg(long, default_value = "host")]
        target: String,
        /// obj, asm, llvm-ir, ir (ptxr's SSA IR), staticlib, header (objects and static
        /// libraries include the C-ABI launch functions `ptxr_launch_<kernel>` and the C
        /// runtime; `header` writes their C header); for nvptx64: ptx (default) or llvm-ir
        /// (the NVVM-form IR)
        #[arg(long)]
        emit: Option<String>,
        /// PTX ISA version of the PTX written for nvptx64 (6.4 = LLVM's +ptx64).
        #[arg(long, default_value = "6.4")]
        ptx: String,
        /// Objects and static libraries without the C launch functions and runtime (only the
        /// `__ptxr_cta_<kernel>` symbols; no C compiler needed).
        #[arg(long)]
        no_c_abi: bool,
        #[arg(short = 'O', default_value = "3", value_parser = clap::value_parser!(u32).range(0..=3))]
        opt: u32,
        /// NVPTX target (raised to the module's `.target` when that is higher).
        #[arg(long, default_value = "sm_70")]
        sm: String,
        #[arg(short = 'o')]
        output: Option<PathBuf>,
        /// Print, per kernel, the execution path it takes (simd or thread) and why, with the
        /// uniformity analysis behind it, instead of compiling.
        #[arg(long)]
        report: bool,
        /// auto (default): warp-vector code for every kernel the warp path runs except those
        /// with CTA barriers that index by %tid.y or %tid.z (with no loop of a thread's own, no
        /// warp collectives) and those with at most 8 warp matrix instructions; simd:
        /// warp-vector code wherever a kernel allows it; thread:
        /// per-thread code for every kernel (the reference path). `--report` says which kernel
        /// takes which and why.
        #[arg(long, default_value = "auto")]
        exec: String,
        /// Compile for the checking mode (as `ptxr run --check`, per thread): each memory
        /// access asks the runtime first, and the first bad access, shared-memory race,
        /// uninitialized shared read or misused barrier stops the launch with a report. C
        /// programs register their buffers with ptxr_check_add (docs/abi.md).
        #[arg(long)]
        check: bool,
    },
    /// Compile a PTX file and run one kernel on this CPU.
    Run {
        file: PathBuf,
        #[arg(long)]
        kernel: String,
        #[arg(long, default_value = "1")]
        grid: String,
        #[arg(long, default_value = "1")]
        block: String,
        /// Dynamic shared memory in bytes.
        #[arg(long, default_value = "0")]
        shared: u32,
        /// TYPE:VALUE | buf:file:PATH | buf:zero:BYTES | buf:hex:HEX | bytes:HEX (by value) | tex:... / surf:... (docs/textures.md) | tmap:TYPE:DIMS:STRIDES:BOX[:OPTIONS]=buf:... (a tensor map, docs/abi.md), one per parameter.
        #[arg(long = "arg", allow_hyphen_values = true)]
        args: Vec<String>,
        /// N=PATH or N=-: write buffer argument N after the launch.
        #[arg(long = "dump")]
        dumps: Vec<String>,
        /// NAME=tex:... or NAME=surf:...: binds the module-scope `.texref`/`.surfref` NAME.
        #[arg(long = "bind")]
        binds: Vec<String>,
        #[arg(short = 'O', default_value = "3", value_parser = clap::value_parser!(u32).range(0..=3))]
        opt: u32,
        /// auto (default), simd or thread: see `compile --exec`.
        #[arg(long, default_value = "auto")]
        exec: String,
        /// Stop the launch with an error after SECONDS (as a GPU's watchdog reports "launch
        /// timed out"), naming the kernel and the CTAs still running.
        #[arg(long)]
        timeout: Option<f64>,
        /// Launch cooperatively, as cudaLaunchCooperativeKernel does: every CTA runs at once
        /// (one thread each, at most 4096) and the kernel may synchronize the whole grid
        /// (cooperative groups' `grid.sync()`).
        #[arg(long)]
        cooperative: bool,
        /// Clusters of X[,Y[,Z]] CTAs (PTX ISA 8.x, sm_90), as a launch with the cluster
        /// dimension attribute: a cluster's CTAs run at once and share their shared memory
        /// (`mapa`, `barrier.cluster`). Default: the kernel's `.reqnctapercluster`, else 1.
        #[arg(long)]
        cluster: Option<String>,
        /// Run the kernel checked, like compute-sanitizer's memcheck: every access of global,
        /// shared and generic memory is checked against the memory the kernel may reach (its
        /// buffers, the module's variables, the CTA's shared memory, the threads' frames) and
        /// for alignment; the first bad one stops the launch with the thread, the PTX line and
        /// column, the address, the size and the nearest allocation. Runs per thread.
        #[arg(long)]
        check: bool,
    },
    /// Compile CUDA C++ programs (.cu with host code and kernels) like nvcc, into executables
    /// that run on this CPU through ptxr's CUDA runtime library: `ptxr cuda app.cu -o app`.
    /// Options: -o FILE, -c, --ptx, -I DIR, -D NAME[=V], -U NAME, -O0..-O3, -arch=sm_XX
    /// (default sm_80), -std=c++NN, -g, -L DIR, -lNAME, -Xcompiler A,B, -v (docs/cuda.md).
    Cuda {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
    /// PTX → ptxr → LLVM NVPTX → PTX': validate PTX' with ptxas, run both on the CPU on the
    /// same seeded inputs and compare every output byte. FILE.ll: LLVM IR → NVPTX → PTX, then
    /// that PTX's round trip.
    Roundtrip {
        file: PathBuf,
        /// NVPTX target (raised to the module's `.target` when that is higher).
        #[arg(long, default_value = "sm_70")]
        sm: String,
        /// PTX ISA version of PTX'.
        #[arg(long, default_value = "6.4")]
        ptx: String,
        /// ptxas to validate with (default: $PTXAS, the project's .venv, PATH).
        #[arg(long)]
        ptxas: Option<PathBuf>,
        /// Runs each launch with seeds 0..N.
        #[arg(long, default_value = "3")]
        seeds: u32,
        /// Only this seed (to reproduce a reported difference).
        #[arg(long)]
        seed: Option<u64>,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Launch spec file (default: NAME.roundtrip or STEM.roundtrip next to FILE).
        #[arg(long)]
        spec: Option<PathBuf>,
        /// Compare against this PTX' instead of generating it.
        #[arg(long)]
        against: Option<PathBuf>,
        /// Write the generated PTX' to this file.
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Compare the warp-vector path with the per-thread path of the same PTX instead of
        /// PTX' (same launches, every output byte).
        #[arg(long)]
        exec_diff: bool,
    },
}

fn main() -> ExitCode {
    let start = std::time::Instant::now();
    let cli = Cli::parse();
    ptxr::runtime::guard::install();
    // Buffer overruns fault (and the guard reports them) instead of corrupting the heap.
    ptxr::runtime::set_guarded_buffers(true);
    let r = match cli.cmd {
        Cmd::Check { files } => check(&files),
        Cmd::Cuda { args } => ptxr::cudacc::Options::parse(&args).and_then(|o| ptxr::cudacc::compile(&o)),
        Cmd::Compile { exec, .. } | Cmd::Run { exec, .. } if set_exec(&exec).is_err() => Err(anyhow::anyhow!("--exec takes auto, simd or thread, not `{exec}`")),
        Cmd::Compile { file, report: true, .. } => ptxr::SourceFile::load(&file).and_then(|s| ptxr::driver::report(&s)).map(|r| print!("{r}")),
        Cmd::Compile { ref target, check: true, .. } if target == "nvptx64" => Err(anyhow::anyhow!("--check compiles for the CPU (host, x86_64, aarch64), not nvptx64")),
        Cmd::Compile { file, target, emit, ptx, no_c_abi, opt, sm, output, check, .. } => {
            if check {
                ptxr::codegen::set_check(true);
                ptxr::codegen::warp::set_exec(ptxr::codegen::warp::Exec::Thread);
            }
            compile(&file, &target, emit.as_deref(), &ptx, !no_c_abi, opt, &sm, output)
        }
        Cmd::Run { timeout: Some(t), .. } if !(t > 0.0 && t.is_finite()) => Err(anyhow::anyhow!("--timeout takes a positive number of seconds, not `{t}`")),
        Cmd::Run { file, kernel, grid, block, shared, args, dumps, binds, opt, timeout, cooperative, cluster, check, .. } => {
            if check {
                ptxr::codegen::set_check(true);
                ptxr::codegen::warp::set_exec(ptxr::codegen::warp::Exec::Thread);
            }
            run(&file, &kernel, &grid, &block, shared, &args, &dumps, &binds, opt, timeout, cooperative, cluster.as_deref())
        }
        Cmd::Roundtrip { file, sm, ptx, ptxas, seeds, seed, kernel, spec, against, keep, exec_diff } => {
            let o = ptxr::roundtrip::Options { nvptx: ptxr::driver::NvptxOptions { sm, ptx, opt: 3 }, ptxas, seeds, seed, kernel, spec, against, keep, cpu_opt: 2, exec_diff };
            roundtrip(&file, &o)
        }
    };
    ptxr::timing::since("the whole command (since main)", start);
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let msg = format!("{e:#}");
            let text = if msg.contains(": error: ") { msg } else { format!("error: {msg}") };
            // A closed stderr is no reason to panic: the exit status still says it failed.
            let _ = writeln!(std::io::stderr(), "{text}");
            ExitCode::FAILURE
        }
    }
}

/// `--exec`: the execution path of the kernels compiled from here on.
fn set_exec(s: &str) -> Result<(), ()> {
    ptxr::codegen::warp::Exec::parse(s).map(ptxr::codegen::warp::set_exec).ok_or(())
}

fn roundtrip(file: &PathBuf, o: &ptxr::roundtrip::Options) -> anyhow::Result<()> {
    let is_ll = matches!(file.extension().and_then(|e| e.to_str()), Some("ll") | Some("bc"));
    let out = if o.exec_diff { ptxr::roundtrip::exec_differential(file, o)? } else if is_ll { ptxr::roundtrip::roundtrip_ll(file, o)? } else { ptxr::roundtrip::roundtrip_ptx(file, o)? };
    print!("{}", out.report);
    if out.failures > 0 {
        std::process::exit(1);
    }
    Ok(())
}

fn check(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut failed = 0;
    for f in files {
        let src = ptxr::SourceFile::load(f)?;
        if let Err(msg) = ptxr::check_source(&src) {
            eprint!("{msg}");
            failed += 1;
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn compile(file: &PathBuf, target: &str, emit: Option<&str>, ptx: &str, c_abi: bool, opt: u32, sm: &str, output: Option<PathBuf>) -> anyhow::Result<()> {
    let kind = TargetKind::parse(target).ok_or_else(|| anyhow::anyhow!("unknown target `{target}` (host, x86_64, aarch64, nvptx64)"))?;
    let src = ptxr::SourceFile::load(file)?;
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    if kind == TargetKind::Nvptx64 {
        let o = ptxr::driver::NvptxOptions { sm: sm.to_string(), ptx: ptx.to_string(), opt };
        let (text, ext) = match emit.unwrap_or("ptx") {
            "ptx" | "asm" => (ptxr::driver::to_ptx(&src, &o)?, "nvptx.ptx"),
            "llvm-ir" => (ptxr::driver::nvvm_ir(&src, &o)?, "nvvm.ll"),
            other => anyhow::bail!("--emit `{other}` is not available for nvptx64 (ptx, llvm-ir)"),
        };
        let out = output.unwrap_or_else(|| PathBuf::from(format!("{stem}.{ext}")));
        if out.as_os_str() == "-" {
            print!("{text}");
            return Ok(());
        }
        return std::fs::write(&out, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()));
    }
    let emit = emit.unwrap_or("obj");
    if emit == "ir" {
        // ptxr's own IR: target-independent SSA (see src/ir).
        let text = ptxr::ir::emit_text(&src)?;
        let out = output.unwrap_or_else(|| PathBuf::from(format!("{stem}.ir")));
        if out.as_os_str() == "-" {
            print!("{text}");
            return Ok(());
        }
        return std::fs::write(&out, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()));
    }
    let em = Emit::parse(emit).ok_or_else(|| anyhow::anyhow!("unknown --emit `{emit}` (obj, asm, llvm-ir, ir, staticlib, header; ptx for --target nvptx64)"))?;
    if em == Emit::Ptx {
        anyhow::bail!("--emit ptx needs --target nvptx64");
    }
    let ext = match em {
        Emit::Obj => "o",
        Emit::Asm => "s",
        Emit::LlvmIr => "ll",
        Emit::StaticLib => "a",
        Emit::Header => "h",
        Emit::Ptx => "ptx",
    };
    let out = output.unwrap_or_else(|| {
        if em == Emit::StaticLib {
            PathBuf::from(format!("lib{stem}.a"))
        } else if em == Emit::Header {
            PathBuf::from(format!("ptxr_{stem}.h"))
        } else {
            PathBuf::from(format!("{stem}.{ext}"))
        }
    });
    ptxr::driver::compile_to_file_with(&src, kind, opt, em, &out, c_abi)
}

#[allow(clippy::too_many_arguments)]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::too_many_arguments)]
fn run(file: &PathBuf, kernel: &str, grid: &str, block: &str, shared: u32, args: &[String], dumps: &[String], binds: &[String], opt: u32, timeout: Option<f64>, cooperative: bool, cluster: Option<&str>) -> anyhow::Result<()> {
    let grid = Dim3::parse(grid).map_err(|e| anyhow::anyhow!("--grid {e}"))?;
    let cluster = cluster.map(|c| Dim3::parse(c).map(|d| [d.0, d.1, d.2]).map_err(|e| anyhow::anyhow!("--cluster {e}"))).transpose()?;
    let block = Dim3::parse(block).map_err(|e| anyhow::anyhow!("--block {e}"))?;
    let mut argv: Vec<ArgSpec> = args.iter().map(|a| parse_arg(a).map_err(|e| anyhow::anyhow!("--arg {e}"))).collect::<Result<_, _>>()?;
    let mut dump_specs = Vec::new();
    for d in dumps {
        let (n, p) = d.split_once('=').ok_or_else(|| anyhow::anyhow!("--dump `{d}`: expected N=PATH or N=-"))?;
        let n: usize = n.parse().map_err(|_| anyhow::anyhow!("--dump `{d}`: `{n}` is not an argument index"))?;
        match argv.get(n) {
            Some(ArgSpec::Buffer(_) | ArgSpec::Texture { .. } | ArgSpec::TensorMap { .. }) => {}
            Some(_) => anyhow::bail!("--dump `{d}`: argument {n} is not a buffer"),
            None => anyhow::bail!("--dump `{d}`: there is no argument {n}"),
        }
        dump_specs.push((n, p.to_string()));
    }
    let src = ptxr::SourceFile::load(file)?;
    let loaded = ptxr::driver::load(&src, opt)?;
    let cfg = LaunchConfig { grid, block, dyn_smem: shared };
    ptxr::runtime::guard::set_context(&format!("kernel `{kernel}` (grid {grid:?}, block {block:?})"));
    let mut refs = Vec::new();
    for b in binds {
        let (name, spec) = b.split_once('=').ok_or_else(|| anyhow::anyhow!("--bind `{b}`: expected NAME=tex:... or NAME=surf:..."))?;
        match parse_arg(spec).map_err(|e| anyhow::anyhow!("--bind {e}"))? {
            t @ ArgSpec::Texture { .. } => refs.push((name.to_string(), t)),
            _ => anyhow::bail!("--bind `{b}`: a reference is bound to tex:... or surf:..."),
        }
    }
    if let Some(t) = timeout {
        // The runtime's watchdog stops the launch at the kernel's next loop back edge
        // (`ptxr_runtime::set_timeout`). A last resort, should code ever not reach a poll
        // point: end the process after twice the limit.
        ptxr::runtime::set_timeout(Some(std::time::Duration::from_secs_f64(t)));
        let (name, file) = (kernel.to_string(), src.name.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs_f64(2.0 * t + 1.0));
            let ctas = ptxr::runtime::running_ctas();
            let list: Vec<String> = ctas.iter().take(8).map(|c| format!("({},{},{})", c[0], c[1], c[2])).collect();
            let _ = writeln!(std::io::stderr(), "{file}: error: kernel `{name}`: launch timed out after {t} s (--timeout) and did not stop at a loop; CTAs still running: {}", if list.is_empty() { "none".to_string() } else { list.join(", ") });
            std::process::exit(1);
        });
    }
    ptxr::runtime::set_cooperative(cooperative);
    ptxr::runtime::set_cluster(cluster);
    loaded.launch_bound(kernel, &cfg, &mut argv, &mut refs).map_err(|e| {
        // Cooperative groups trap in a launch that is not cooperative, where the grid's
        // workspace (%envreg1:%envreg2) is null.
        let grid_ws = src.text.contains("%envreg1") || src.text.contains("%envreg2");
        if !cooperative && grid_ws && e.to_string().contains("`trap` executed") {
            anyhow::anyhow!("{e}\nnote: the kernel reads %envreg1/%envreg2, where a cooperative launch passes the grid's workspace; cooperative groups' grid.sync() traps when the launch is not cooperative: run it with --cooperative")
        } else {
            anyhow::anyhow!("{e}")
        }
    })?;
    for (n, p) in dump_specs {
        let (ArgSpec::Buffer(b) | ArgSpec::Texture { data: b, .. } | ArgSpec::TensorMap { data: b, .. }) = &argv[n] else { unreachable!() };
        if p == "-" {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            // A reader that closed the pipe (`| head`) is not an error of the launch.
            let _ = writeln!(std::io::stdout(), "{hex}");
        } else {
            std::fs::write(&p, b).map_err(|e| anyhow::anyhow!("--dump: cannot write {p}: {e}"))?;
        }
    }
    Ok(())
}
