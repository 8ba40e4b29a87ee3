//! `ptxr roundtrip`: PTX → ptxr → NVVM IR → LLVM's NVPTX backend → PTX', checked twice:
//! ptxas validates PTX', and the original and PTX' both run on the CPU on the same seeded
//! inputs, every output byte compared.
//!
//! Launches come from, in this order: a spec file next to the PTX (`NAME.roundtrip` for
//! `NAME.ptx`, else `STEM.roundtrip` for `STEM.variant.ptx`), `// run:` lines in the PTX
//! itself (the filetest syntax), or a launch inferred from the kernel signature. A launch
//! line is
//!
//! ```text
//! KERNEL<<<GRID, BLOCK[, SHARED]>>> ARG ARG ...
//! ```
//!
//! with GRID/BLOCK `N` or `(X,Y,Z)` and ARGs in the `ptxr run --arg` forms plus
//! `buf:TYPE:v,...` (typed buffers) and `buf:rand:BYTES` (seeded random contents). `#` starts
//! a comment in a spec file.

use crate::codegen::KernelInfo;
use crate::driver::{self, NvptxOptions};
use crate::runtime::{parse_arg, ArgSpec, Dim3, LaunchConfig};
use crate::syntax::ast::{self, Item, Operand, Stmt, Type};
use crate::SourceFile;
use anyhow::{anyhow, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of one round trip.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub nvptx: NvptxOptions,
    /// ptxas to validate PTX' with (else `$PTXAS`, the project's venv, `PATH`).
    pub ptxas: Option<PathBuf>,
    /// Seeds `0..seeds` (each launch runs once per seed).
    pub seeds: u32,
    /// Only this seed (reproducing a reported difference).
    pub seed: Option<u64>,
    /// Only this kernel.
    pub kernel: Option<String>,
    /// A spec file instead of the one next to the PTX.
    pub spec: Option<PathBuf>,
    /// Compare against this PTX' instead of generating it.
    pub against: Option<PathBuf>,
    /// Write the generated PTX' here.
    pub keep: Option<PathBuf>,
    /// Optimization level of the CPU compiles (both sides).
    pub cpu_opt: u32,
    /// Instead of PTX', compare the kernels' warp-vector code (`--exec simd`, the original
    /// side) with their per-thread code (`--exec thread`, the other side): the same PTX,
    /// the same seeded launches, every output byte (`exec_differential`).
    pub exec_diff: bool,
}

/// The result: the report text and whether everything passed.
pub struct Outcome {
    pub report: String,
    pub failures: usize,
    /// Whether ptxas validated PTX' (None: no ptxas found).
    pub ptxas_ok: Option<bool>,
}

/// One launch: kernel, shape and argument forms (seeded forms are expanded per seed).
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: String,
    pub cfg: LaunchConfig,
    pub args: Vec<String>,
    /// Where it came from (for the report).
    pub origin: String,
}

/// Parses `KERNEL<<<GRID, BLOCK[, SHARED]>>> ARGS...`.
pub fn parse_launch(line: &str) -> Result<Launch, String> {
    let (k, rest) = line.split_once("<<<").ok_or("expected KERNEL<<<GRID, BLOCK[, SHARED]>>> ARGS")?;
    let (launch, args) = rest.split_once(">>>").ok_or("missing `>>>`")?;
    let mut parts = vec![String::new()];
    let mut depth = 0;
    for c in launch.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().unwrap().push(c);
    }
    let dim = |s: &str| Dim3::parse(s.trim().trim_start_matches('(').trim_end_matches(')'));
    let grid = dim(&parts[0])?;
    let block = dim(parts.get(1).map(|s| s.as_str()).unwrap_or("1"))?;
    let dyn_smem = match parts.get(2) {
        Some(s) => s.trim().parse().map_err(|_| format!("`{}` is not a byte count", s.trim()))?,
        None => 0,
    };
    let kernel = k.trim().to_string();
    if kernel.is_empty() {
        return Err("missing kernel name".into());
    }
    Ok(Launch { kernel, cfg: LaunchConfig { grid, block, dyn_smem }, args: args.split_whitespace().map(String::from).collect(), origin: String::new() })
}

/// Seeded buffer contents. Seeds rotate through three kinds of data so that float kernels see
/// ordinary numbers, integer kernels see every bit pattern, and index-like uses stay small:
/// seed % 3 == 0: f32 words uniform in [-1, 1); 1: random bytes; 2: u32 words below 1024.
fn random_bytes(n: usize, seed: u64, stream: u64) -> Vec<u8> {
    let mut r = crate::rng::Rng::with_stream(seed, stream);
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        let x = r.next();
        let w: u32 = match seed % 3 {
            0 => (((x >> 40) as f64 / (1u64 << 24) as f64) as f32 * 2.0 - 1.0).to_bits(),
            1 => (x >> 32) as u32,
            _ => ((x >> 32) % 1024) as u32,
        };
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.truncate(n);
    out
}

/// Argument values of a launch for one seed.
fn make_args(l: &Launch, seed: u64) -> Result<Vec<ArgSpec>, String> {
    l.args
        .iter()
        .enumerate()
        .map(|(k, a)| {
            if let Some(n) = a.strip_prefix("buf:rand:") {
                let n: usize = n.parse().map_err(|_| format!("`{a}`: `{n}` is not a byte count"))?;
                if n > 1 << 32 {
                    return Err(format!("`{a}`: buffer too large"));
                }
                Ok(ArgSpec::Buffer(random_bytes(n, seed, k as u64)))
            } else {
                parse_arg(a)
            }
        })
        .collect()
}

/// A launch of every kernel of `src` inferred from its signature (as `roundtrip` does for
/// kernels without a `// run:` line); the fuzzing of the whole pipeline launches these.
pub fn inferred_launches(src: &crate::SourceFile) -> Result<Vec<Launch>> {
    let module = crate::check_source(src).map_err(|m| anyhow!("{}", m.trim_end()))?;
    let kernels = driver::kernels_of(src)?;
    let dyn_shared = has_dyn_shared(&module);
    Ok(kernels.iter().map(|k| infer_launch(k, &module, dyn_shared)).collect())
}

/// Default buffer size of an inferred launch.
const INFER_BUF: usize = 4 << 20;

/// A launch for `k` from its signature: 4 CTAs of 128 threads (or the kernel's `.reqntid`,
/// `.maxntid`), 4 MiB random buffers for parameters used as addresses, the total thread count
/// for integer scalars (the usual `n`), 1.5 for float scalars.
fn infer_launch(k: &KernelInfo, module: &ast::Module, has_dyn_shared: bool) -> Launch {
    let block = match (k.reqntid, k.maxntid) {
        (Some(r), _) => Dim3(r[0], r[1], r[2]),
        (None, Some(m)) if (m[0] as u64 * m[1] as u64 * m[2] as u64) < 128 => Dim3(m[0], m[1], m[2]),
        _ => Dim3(128, 1, 1),
    };
    let grid = Dim3(4, 1, 1);
    let n = grid.count() * block.count();
    let ptrs = address_params(module, &k.name);
    let args = k
        .params
        .iter()
        .map(|p| {
            if p.size == 8 && !p.ty.is_float() && (p.is_ptr || ptrs.iter().any(|x| x == &p.name)) {
                format!("buf:rand:{INFER_BUF}")
            } else if p.ty.is_float() {
                format!("{}:1.5", p.ty.as_str())
            } else {
                let t = match p.size {
                    1 => "u8",
                    2 => "u16",
                    4 => "u32",
                    _ => "u64",
                };
                format!("{t}:{}", n.min(if p.size == 1 { 255 } else { u64::MAX }))
            }
        })
        .collect();
    let shared = if has_dyn_shared { 4096 } else { 0 };
    Launch { kernel: k.name.clone(), cfg: LaunchConfig { grid, block, dyn_smem: shared }, args, origin: "inferred from the signature".into() }
}

/// Parameters of kernel `name` that hold addresses: their loaded value is converted by `cvta`,
/// used as the base of `[reg]`, or added to and the sum used so (two steps), or it is not used
/// as a number (compared, multiplied, converted...). Only 64-bit parameters are asked about.
fn address_params(module: &ast::Module, name: &str) -> Vec<String> {
    let Some(f) = module.items.iter().find_map(|i| match i {
        Item::Func(f) if f.entry && f.name.name == name => Some(f),
        _ => None,
    }) else {
        return Vec::new();
    };
    let mut instrs = Vec::new();
    fn walk<'b, 'a>(b: &'b [Stmt<'a>], out: &mut Vec<&'b ast::Instr<'a>>) {
        for s in b {
            match s {
                Stmt::Instr(i) => out.push(i),
                Stmt::Block(b, _) => walk(b, out),
                _ => {}
            }
        }
    }
    walk(f.body.as_deref().unwrap_or(&[]), &mut instrs);
    let reg = |o: &Operand| match o {
        Operand::Name(id, None) => Some(id.name.to_string()),
        _ => None,
    };
    let used_as_address = |r: &str, depth: u32| -> bool {
        fn uses(instrs: &[&ast::Instr], r: &str, depth: u32) -> bool {
            for i in instrs {
                for (k, o) in i.operands.iter().enumerate() {
                    match o {
                        Operand::Mem(a) if a.base.map_or(false, |b| b.name == r) => return true,
                        Operand::Name(id, None) if id.name == r && k > 0 => {
                            if i.opcode.name == "cvta" {
                                return true;
                            }
                            if depth > 0 && matches!(i.opcode.name, "add" | "sub" | "mad") {
                                if let Some(Operand::Name(d, None)) = i.operands.first() {
                                    if d.name != r && uses(instrs, d.name, depth - 1) {
                                        return true;
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            false
        }
        uses(&instrs, r, depth)
    };
    let mut out = Vec::new();
    for i in &instrs {
        if i.opcode.name != "ld" || !i.has_mod("param") {
            continue;
        }
        let (Some(d), Some(Operand::Mem(a))) = (i.operands.first().and_then(reg), i.operands.get(1)) else { continue };
        let Some(base) = a.base else { continue };
        if !f.params.iter().any(|p| p.name.name == base.name) || out.iter().any(|x: &String| x == base.name) {
            continue;
        }
        // An address when used as one; otherwise an address unless used as a number (a
        // pointer handed to a `.func` is neither converted nor dereferenced here).
        let as_number = instrs.iter().any(|j| {
            matches!(j.opcode.name, "setp" | "mul" | "div" | "rem" | "cvt" | "shl" | "shr" | "min" | "max" | "selp")
                && j.operands.iter().skip(1).any(|o| matches!(o, Operand::Name(id, None) if id.name == d))
        });
        if used_as_address(&d, 2) || !as_number {
            out.push(base.name.to_string());
        }
    }
    out
}

fn has_dyn_shared(module: &ast::Module) -> bool {
    fn inner(b: &[Stmt]) -> bool {
        b.iter().any(|s| match s {
            Stmt::Var(v) => v.space == ast::StateSpace::Shared && v.linkage == Some(ast::Linkage::Extern),
            Stmt::Block(b, _) => inner(b),
            _ => false,
        })
    }
    module.items.iter().any(|i| match i {
        Item::Var(v) => v.space == ast::StateSpace::Shared && v.linkage == Some(ast::Linkage::Extern),
        Item::Func(f) => f.body.as_deref().map_or(false, inner),
        _ => false,
    })
}

/// The spec file next to `path`: `NAME.roundtrip`, else `STEM.roundtrip` for `STEM.x.ptx`.
pub fn spec_file_for(path: &Path) -> Option<PathBuf> {
    let a = path.with_extension("roundtrip");
    if a.is_file() {
        return Some(a);
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    let stem = name.split('.').next()?;
    let b = path.with_file_name(format!("{stem}.roundtrip"));
    b.is_file().then_some(b)
}

/// Launch lines of a spec file or of `// run:` comments.
/// A `// run:` line whose expectations are only `// expect-check:` lines (a filetest of the
/// checking mode) launches a kernel that goes out of bounds or races by design: its outputs
/// are not defined, and it is not launched here; its kernel is in the second list (it gets no
/// launch inferred from its signature either).
fn launches_from(text: &str, file: &str, comment_prefix: Option<&str>) -> Result<(Vec<Launch>, Vec<String>)> {
    let mut out = Vec::new();
    let mut checking_only = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let l = line.trim();
        let body = match comment_prefix {
            Some(p) => match l.strip_prefix(p) {
                Some(b) => b.trim(),
                None => continue,
            },
            None => l.split('#').next().unwrap_or("").trim(),
        };
        if body.is_empty() {
            continue;
        }
        if comment_prefix.is_some() {
            let expects: Vec<&str> = lines[n + 1..].iter().map(|x| x.trim()).take_while(|x| x.starts_with("// expect")).collect();
            if expects.iter().any(|x| x.starts_with("// expect-check:")) && !expects.iter().any(|x| x.starts_with("// expect:") || x.starts_with("// expect-error:")) {
                if let Ok(la) = parse_launch(body) {
                    checking_only.push(la.kernel);
                }
                continue;
            }
        }
        let mut la = parse_launch(body).map_err(|m| anyhow!("{file}:{}: {m}", n + 1))?;
        la.origin = format!("{file}:{}", n + 1);
        out.push(la);
    }
    Ok((out, checking_only))
}

/// Finds ptxas: `--ptxas`, `$PTXAS`, the project's venv, `PATH`.
pub fn find_ptxas(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("PTXAS").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let venvs = [PathBuf::from(".venv"), Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv")];
    for v in venvs {
        if let Ok(rd) = std::fs::read_dir(v.join("lib")) {
            for e in rd.flatten() {
                let p = e.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
                if p.is_file() {
                    return Some(p);
                }
            }
        }
    }
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("ptxas")).find(|p| p.is_file()))
}

/// Runs ptxas on `ptx`; Ok(None) = valid, Ok(Some(msg)) = rejected.
fn ptxas_check(ptxas: &Path, ptx: &str, sm: &str) -> Result<Option<String>> {
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("prime.ptx");
    std::fs::write(&f, ptx)?;
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch={sm}"))
        .arg(&f)
        .arg("-o")
        .arg(dir.path().join("prime.cubin"))
        .output()
        .map_err(|e| anyhow!("cannot run {}: {e}", ptxas.display()))?;
    if out.status.success() {
        Ok(None)
    } else {
        Ok(Some(String::from_utf8_lossy(&out.stderr).trim().to_string()))
    }
}

/// Element width for reporting a difference in buffer argument `a`.
fn elem_of(arg: &str) -> (usize, Option<Type>) {
    if let Some(rest) = arg.strip_prefix("buf:") {
        if let Some((t, _)) = rest.split_once(':') {
            if let Some(ty) = Type::from_str(t) {
                return (ty.size() as usize, Some(ty));
            }
        }
    }
    (4, None)
}

fn show(bytes: &[u8], ty: Option<Type>) -> String {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let x = u64::from_le_bytes(b);
    let hex = format!("0x{:0w$x}", x, w = bytes.len() * 2);
    match (ty, bytes.len()) {
        (Some(Type::F64), 8) => format!("{hex} ({})", f64::from_bits(x)),
        (Some(Type::F32), 4) | (None, 4) => format!("{hex} ({} as f32, {} as u32)", f32::from_bits(x as u32), x as u32),
        (Some(t), _) if t.is_signed() => format!("{hex} ({})", ((x << (64 - 8 * bytes.len())) as i64) >> (64 - 8 * bytes.len())),
        _ => format!("{hex} ({x})"),
    }
}

/// Runs the kernels of `path` on both execution paths (warp-vector and per-thread) on the
/// same seeded launches as a round trip and compares every output byte: the per-thread
/// path is the warp path's oracle.
pub fn exec_differential(path: &Path, o: &Options) -> Result<Outcome> {
    let src = SourceFile::load(path)?;
    let spec = o.spec.clone().or_else(|| spec_file_for(path));
    let o = Options { exec_diff: true, against: None, keep: None, ..o.clone() };
    roundtrip_source(&src, spec.as_deref(), &o, &format!("ptxr roundtrip {} --exec-diff", path.display()))
}

/// Round trip of a PTX file.
pub fn roundtrip_ptx(path: &Path, o: &Options) -> Result<Outcome> {
    let src = SourceFile::load(path)?;
    let spec = match &o.spec {
        Some(s) => Some(s.clone()),
        None => spec_file_for(path),
    };
    roundtrip_source(&src, spec.as_deref(), o, &format!("ptxr roundtrip {}", path.display()))
}

/// Round trip of LLVM IR: `FILE.ll` → NVPTX → PTX (lifted by ptxr), then that PTX's own
/// round trip, so NVPTX-form IR from clang is checked end to end.
pub fn roundtrip_ll(path: &Path, o: &Options) -> Result<Outcome> {
    let ptx = driver::llvm_ir_to_ptx(path, &o.nvptx)?;
    let src = SourceFile { name: format!("{} (PTX from LLVM's NVPTX backend)", path.display()), text: ptx };
    let spec = match &o.spec {
        Some(s) => Some(s.clone()),
        None => spec_file_for(path),
    };
    let mut out = roundtrip_source(&src, spec.as_deref(), o, &format!("ptxr roundtrip {}", path.display()))?;
    // The PTX that LLVM made from the IR must itself be valid.
    if let Some(ptxas) = find_ptxas(o.ptxas.as_deref()) {
        if let Some(msg) = ptxas_check(&ptxas, &src.text, &o.nvptx.sm)? {
            let _ = writeln!(out.report, "FAIL ptxas rejects the PTX generated from {}:\n{}", path.display(), indent(&msg));
            out.failures += 1;
            out.ptxas_ok = Some(false);
        }
    }
    Ok(out)
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect::<String>().trim_end().to_string()
}

fn roundtrip_source(src: &SourceFile, spec: Option<&Path>, o: &Options, repro_base: &str) -> Result<Outcome> {
    let o = &Options { nvptx: o.nvptx.for_roundtrip(&src.text), ..o.clone() };
    let mut r = String::new();
    let mut failures = 0usize;
    let module = crate::check_source(src).map_err(|m| anyhow!("{}", m.trim_end()))?;
    if o.exec_diff {
        let _ = writeln!(r, "{}: the warp-vector path (--exec simd) against the per-thread path (--exec thread)", src.name);
    } else {
        let _ = writeln!(r, "roundtrip {} ({}, PTX ISA {})", src.name, o.nvptx.sm, o.nvptx.ptx);
    }
    // PTX'.
    let prime_text = match &o.against {
        _ if o.exec_diff => src.text.clone(),
        Some(p) => std::fs::read_to_string(p).map_err(|e| anyhow!("cannot read {}: {e}", p.display()))?,
        None => driver::to_ptx(src, &o.nvptx)?,
    };
    if let Some(k) = &o.keep {
        std::fs::write(k, &prime_text).map_err(|e| anyhow!("cannot write {}: {e}", k.display()))?;
        let _ = writeln!(r, "  PTX' written to {}", k.display());
    }
    // ptxas.
    let ptxas_ok = match find_ptxas(o.ptxas.as_deref()) {
        _ if o.exec_diff => None,
        Some(p) if !p.is_file() => {
            let _ = writeln!(r, "FAIL ptxas: {} does not exist (from --ptxas or $PTXAS): PTX' was not validated; the execution checks still run", p.display());
            failures += 1;
            None
        }
        Some(p) => match ptxas_check(&p, &prime_text, &o.nvptx.sm)? {
            None => {
                let _ = writeln!(r, "  ptxas: PTX' is valid ({})", p.display());
                Some(true)
            }
            Some(msg) => {
                let _ = writeln!(r, "FAIL ptxas rejects PTX' ({}):\n{}", p.display(), indent(&msg));
                failures += 1;
                Some(false)
            }
        },
        None => {
            let _ = writeln!(r, "  ptxas: not found (looked at --ptxas, $PTXAS, the project's .venv and PATH): PTX' was not validated; the execution checks still run");
            None
        }
    };
    // Both sides on the CPU.
    let prime_name = match &o.against {
        _ if o.exec_diff => format!("{} (--exec thread)", src.name),
        Some(p) => p.display().to_string(),
        None => format!("{} (PTX')", src.name),
    };
    let prime_src = SourceFile { name: prime_name, text: prime_text };
    let exec = crate::codegen::warp::exec();
    if o.exec_diff {
        crate::codegen::warp::set_exec(crate::codegen::warp::Exec::Simd);
    }
    let orig = driver::load(src, o.cpu_opt);
    if o.exec_diff {
        crate::codegen::warp::set_exec(crate::codegen::warp::Exec::Thread);
    }
    let prime = driver::load(&prime_src, o.cpu_opt);
    crate::codegen::warp::set_exec(exec);
    let orig = orig?;
    let prime = match prime {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(r, "FAIL ptxr cannot compile {} for the CPU:\n{}", prime_src.name, indent(&format!("{e:#}")));
            return Ok(Outcome { report: r, failures: failures + 1, ptxas_ok });
        }
    };
    // Launches.
    let (mut launches, checking_only) = match spec {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| anyhow!("cannot read {}: {e}", p.display()))?;
            launches_from(&text, &p.display().to_string(), None)?
        }
        None => launches_from(&src.text, &src.name, Some("// run:"))?,
    };
    let dyn_shared = has_dyn_shared(&module);
    for k in &orig.kernels {
        if !launches.iter().any(|l| l.kernel == k.name) && !checking_only.contains(&k.name) {
            launches.push(infer_launch(k, &module, dyn_shared));
        }
    }
    // One CTA after another: both executions see the same order of CTAs (restored however
    // this function returns).
    struct Serial;
    impl Drop for Serial {
        fn drop(&mut self) {
            crate::runtime::set_serial(false);
        }
    }
    crate::runtime::set_serial(true);
    let _serial = Serial;
    let seeds: Vec<u64> = match o.seed {
        Some(s) => vec![s],
        None => (0..o.seeds.max(1) as u64).collect(),
    };
    let against = o.against.as_ref().map(|p| format!(" --against {}", p.display())).unwrap_or_default();
    for l in launches.iter().filter(|l| o.kernel.as_ref().map_or(true, |k| k == &l.kernel)) {
        let shape = format!("{}<<<({},{},{}), ({},{},{}), {}>>>", l.kernel, l.cfg.grid.0, l.cfg.grid.1, l.cfg.grid.2, l.cfg.block.0, l.cfg.block.1, l.cfg.block.2, l.cfg.dyn_smem);
        if prime.kernel(&l.kernel).is_none() {
            let _ = writeln!(r, "FAIL kernel {}: missing from PTX'", l.kernel);
            failures += 1;
            continue;
        }
        let mut bad = 0;
        for &seed in &seeds {
            let repro = format!("{repro_base} --kernel {} --seed {seed}{against}", l.kernel);
            let mut a = make_args(l, seed).map_err(|m| anyhow!("{}: {m}", l.origin))?;
            let mut b = a.clone();
            let inputs = a.clone();
            crate::runtime::guard::set_context(&format!("kernel `{}` of the original, {shape}, seed {seed} (launch {}),", l.kernel, l.origin));
            let ra = orig.launch(&l.kernel, &l.cfg, &mut a);
            crate::runtime::guard::set_context(&format!("kernel `{}` of PTX', {shape}, seed {seed} (launch {}),", l.kernel, l.origin));
            let rb = prime.launch(&l.kernel, &l.cfg, &mut b);
            match (&ra, &rb) {
                (Ok(()), Ok(())) => {}
                (Err(x), Err(_)) => {
                    // Both stop with an error (a trap, a deadlock): the same behaviour.
                    if seed == seeds[0] {
                        let _ = writeln!(r, "  {shape} [{}]: both sides stop with an error ({})", l.origin, x.0.lines().next().unwrap_or(""));
                    }
                    continue;
                }
                (Ok(()), Err(e)) | (Err(e), Ok(())) => {
                    let which = if ra.is_err() { "the original" } else { "PTX'" };
                    let _ = writeln!(r, "FAIL kernel {}, seed {seed}: only {which} stops with an error: {}\n    reproduce: {repro}", l.kernel, e.0.lines().next().unwrap_or(""));
                    bad += 1;
                    continue;
                }
            }
            for (idx, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                // Buffers, and the data of textures and surfaces (which sust/sured write).
                let (ArgSpec::Buffer(x) | ArgSpec::Texture { data: x, .. } | ArgSpec::TensorMap { data: x, .. }, ArgSpec::Buffer(y) | ArgSpec::Texture { data: y, .. } | ArgSpec::TensorMap { data: y, .. }) = (x, y) else { continue };
                if x == y {
                    continue;
                }
                if let Some(dir) = std::env::var_os("PTXR_ROUNDTRIP_DUMP") {
                    let dir = PathBuf::from(dir);
                    let _ = std::fs::create_dir_all(&dir);
                    for (j, inp) in inputs.iter().enumerate() {
                        if let ArgSpec::Buffer(inp) = inp {
                            let _ = std::fs::write(dir.join(format!("{}.s{seed}.arg{j}.in", l.kernel)), inp);
                        }
                    }
                    let _ = std::fs::write(dir.join(format!("{}.s{seed}.arg{idx}.orig", l.kernel)), x);
                    let _ = std::fs::write(dir.join(format!("{}.s{seed}.arg{idx}.prime", l.kernel)), y);
                }
                let (w, ty) = elem_of(&l.args[idx]);
                let first = x.iter().zip(y.iter()).position(|(p, q)| p != q).unwrap_or(0);
                let el = first / w;
                let lo = el * w;
                let hi = (lo + w).min(x.len());
                let ndiff = x.chunks(w).zip(y.chunks(w)).filter(|(p, q)| p != q).count();
                let pname = orig.kernel(&l.kernel).and_then(|k| k.params.get(idx)).map(|p| p.name.clone()).unwrap_or_default();
                let _ = writeln!(
                    r,
                    "FAIL kernel {}, buffer arg{idx} (`{pname}`), element {el} (bytes {lo}..{hi}; {ndiff} element(s) differ): original {}, PTX' {}, seed {seed}\n    reproduce: {repro}",
                    l.kernel,
                    show(&x[lo..hi], ty),
                    show(&y[lo..hi], ty)
                );
                bad += 1;
            }
        }
        if bad == 0 {
            let _ = writeln!(r, "  {shape} [{}]: {} seed(s), every output byte equal", l.origin, seeds.len());
        }
        failures += bad;
    }
    if failures == 0 {
        let _ = writeln!(r, "ok");
    } else {
        let _ = writeln!(r, "{failures} failure(s)");
    }
    Ok(Outcome { report: r, failures, ptxas_ok })
}
