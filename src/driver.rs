//! The pipeline chained in one place: parse → validate → codegen → optimize → emit/load.

use crate::capi::{self, CKernel};
use crate::codegen::target::{self, TargetKind};
use crate::codegen::KernelInfo;
use crate::runtime::Loaded;
use crate::SourceFile;
use anyhow::{anyhow, Result};
use inkwell::context::Context;
use std::path::Path;

/// What `ptxr compile` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Obj,
    Asm,
    LlvmIr,
    StaticLib,
    /// The C header of the launch functions (docs/abi.md).
    Header,
    /// PTX from LLVM's NVPTX backend (`--target nvptx64`).
    Ptx,
}

impl Emit {
    pub fn parse(s: &str) -> Option<Emit> {
        Some(match s {
            "obj" => Emit::Obj,
            "asm" => Emit::Asm,
            "llvm-ir" => Emit::LlvmIr,
            "staticlib" => Emit::StaticLib,
            "header" => Emit::Header,
            "ptx" => Emit::Ptx,
            _ => return None,
        })
    }
}

/// Parses, validates and lowers `src` into an LLVM module in `ctx`.
pub fn lower<'ctx>(ctx: &'ctx Context, src: &SourceFile) -> Result<crate::codegen::Compiled<'ctx>> {
    lower_with(ctx, src, false)
}

/// [`lower`]; `lenient`: functions that cannot be compiled become stubs
/// (`codegen::compile_lenient`).
fn lower_with<'ctx>(ctx: &'ctx Context, src: &SourceFile, lenient: bool) -> Result<crate::codegen::Compiled<'ctx>> {
    let module = crate::timing::phase("parse and check", || crate::check_source(src)).map_err(|m| anyhow!("{}", m.trim_end()))?;
    let c = if lenient { crate::codegen::compile_lenient(ctx, &module, &src.text, &src.name) } else { crate::codegen::compile(ctx, &module, &src.text, &src.name) };
    c.map_err(|d| anyhow!("{}", crate::syntax::diag::render_all(&d, &src.name, &src.text).trim_end()))
}

/// Compiles `src` for `kind` at `opt` and writes `emit` to `out`. Objects and static
/// libraries include the C-ABI launch functions and the C runtime (docs/abi.md).
pub fn compile_to_file(src: &SourceFile, kind: TargetKind, opt: u32, emit: Emit, out: &Path) -> Result<()> {
    compile_to_file_with(src, kind, opt, emit, out, true)
}

/// [`compile_to_file`]; `c_abi: false` leaves the C launch functions and runtime out of
/// objects and static libraries (then only the `__ptxr_cta_<kernel>` symbols are defined and
/// no C compiler is needed).
pub fn compile_to_file_with(src: &SourceFile, kind: TargetKind, opt: u32, emit: Emit, out: &Path, c_abi: bool) -> Result<()> {
    if emit == Emit::Header {
        let kernels = kernels_of(src)?;
        let ck: Vec<CKernel> = kernels.iter().map(|k| CKernel { info: k, file: &src.name, checked: None }).collect();
        capi::check_unique(&ck)?;
        let stem = Path::new(&src.name).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "kernels".into());
        return std::fs::write(out, capi::header(&stem, &ck)).map_err(|e| anyhow!("cannot write {}: {e}", out.display()));
    }
    let ctx = Context::create();
    let c = crate::timing::phase("parse, check and lower to LLVM IR", || lower(&ctx, src))?;
    let vars = export_vars(&ctx, &c.module, kind, opt)?;
    let checked = crate::codegen::check().then_some(vars.as_slice());
    match emit {
        Emit::LlvmIr | Emit::Asm => {
            let tm = target::machine(kind, opt, "sm_70")?;
            target::optimize(&c.module, &tm, opt)?;
            if emit == Emit::Asm {
                return target::write_asm(&c.module, &tm, out);
            }
            c.module.print_to_file(out).map_err(|e| anyhow!("cannot write {}: {}", out.display(), e.to_string()))
        }
        Emit::Obj if !c_abi => write_one_object(&c.module, kind, opt, out),
        Emit::Obj | Emit::StaticLib => {
            let dir = tempfile::tempdir()?;
            let mut objs = object_files(&c.module, kind, opt, dir.path())?;
            let cc = capi::c_compiler(kind);
            if c_abi {
                let ck: Vec<CKernel> = c.kernels.iter().map(|k| CKernel { info: k, file: &src.name, checked }).collect();
                objs.extend(capi::build_c_objects(&cc, dir.path(), &ck, &[])?);
            }
            if emit == Emit::Obj {
                capi::link_relocatable(&cc, out, &objs)
            } else {
                capi::archive(out, &objs)
            }
        }
        Emit::Header | Emit::Ptx => unreachable!(),
    }
}

/// Options of the NVPTX direction (`--target nvptx64`, `roundtrip`).
#[derive(Clone, Debug)]
pub struct NvptxOptions {
    /// `sm_70` etc.
    pub sm: String,
    /// PTX ISA version of the output: `6.4`, `64` or `ptx64`.
    pub ptx: String,
    pub opt: u32,
}

impl Default for NvptxOptions {
    fn default() -> Self {
        NvptxOptions { sm: "sm_70".into(), ptx: "6.4".into(), opt: 3 }
    }
}

impl NvptxOptions {
    /// These options with `sm` raised to the module's `.target` when that is higher (PTX'
    /// needs what the source needs: integer `wmma` needs sm_72, for example), up to sm_90,
    /// the newest target LLVM 19 and the PTX it writes (8.5) know: sm_100 modules become
    /// sm_90 code.
    pub fn for_module(&self, text: &str) -> NvptxOptions {
        let num = |s: &str| s.strip_prefix("sm_").and_then(|v| v.trim_end_matches('a').parse::<u32>().ok());
        let module_sm = text
            .lines()
            .map(str::trim_start)
            .find(|l| l.starts_with(".target"))
            .and_then(|l| l[".target".len()..].split(|c: char| c == ',' || c.is_whitespace()).find_map(|t| num(t.trim())));
        let mut o = self.clone();
        if let (Some(m), Some(cur)) = (module_sm.map(|m| m.min(90)), num(&self.sm)) {
            if m > cur {
                o.sm = format!("sm_{m}");
            }
        }
        // sm_90a (wgmma, setmaxnreg) stays sm_90a: its instructions are inline PTX there.
        let arch_specific = text.lines().map(str::trim_start).find(|l| l.starts_with(".target")).map_or(false, |l| l.split(|c: char| c == ',' || c.is_whitespace()).any(|t| t == "sm_90a"));
        if arch_specific && num(&o.sm) == Some(90) {
            o.sm = "sm_90a".into();
        }
        o
    }

    /// [`for_module`](Self::for_module), and the module's PTX ISA version if it is newer, up
    /// to the newest LLVM 19 writes (8.5): a round trip keeps newer instructions and
    /// modifiers (in inline PTX), which need it.
    pub fn for_roundtrip(&self, text: &str) -> NvptxOptions {
        let mut o = self.for_module(text);
        let ver = |s: &str| s.split_once('.').and_then(|(a, b)| Some(a.trim().parse::<u32>().ok()? * 10 + b.trim().parse::<u32>().ok()?));
        let module_ver = text.lines().map(str::trim_start).find(|l| l.starts_with(".version")).and_then(|l| ver(l[".version".len()..].trim()));
        if let (Some(m), Some(cur)) = (module_ver, ver(&o.ptx)) {
            let m = m.min(85);
            if m > cur {
                o.ptx = format!("{}.{}", m / 10, m % 10);
            }
        }
        o
    }
}

fn nvptx_machine(o: &NvptxOptions) -> Result<inkwell::targets::TargetMachine> {
    let sm_ok = o.sm.strip_prefix("sm_").map_or(false, |v| !v.is_empty() && v.trim_end_matches('a').chars().all(|c| c.is_ascii_digit()));
    if !sm_ok {
        return Err(anyhow!("`--sm {}`: expected sm_NN (e.g. sm_70)", o.sm));
    }
    let feat = target::ptx_feature(&o.ptx).ok_or_else(|| anyhow!("`--ptx {}`: expected a PTX ISA version such as 6.4 or 7.0", o.ptx))?;
    target::nvptx_machine(&o.sm, &feat, o.opt)
}

/// Lowers `src` to NVVM-form LLVM IR (one thread per function, `llvm.nvvm.*` intrinsics,
/// NVPTX address spaces), optimized for the NVPTX target; returns the module's text.
pub fn nvvm_ir(src: &SourceFile, o: &NvptxOptions) -> Result<String> {
    let o = &o.for_module(&src.text);
    let ctx = Context::create();
    let module = lower_nvvm(&ctx, src, o)?;
    Ok(module.print_to_string().to_string())
}

fn lower_nvvm<'ctx>(ctx: &'ctx Context, src: &SourceFile, o: &NvptxOptions) -> Result<inkwell::module::Module<'ctx>> {
    let ast = crate::check_source(src).map_err(|m| anyhow!("{}", m.trim_end()))?;
    let c = crate::codegen::compile_nvvm(ctx, &ast, &src.text, &src.name).map_err(|d| anyhow!("{}", crate::syntax::diag::render_all(&d, &src.name, &src.text).trim_end()))?;
    let tm = nvptx_machine(o)?;
    target::optimize(&c.module, &tm, o.opt)?;
    Ok(c.module)
}

/// PTX → ptxr → NVVM IR → LLVM's NVPTX backend → PTX'.
pub fn to_ptx(src: &SourceFile, o: &NvptxOptions) -> Result<String> {
    let o = &o.for_module(&src.text);
    let ctx = Context::create();
    let module = lower_nvvm(&ctx, src, o)?;
    nvptx_codegen(&module, o)
}

fn nvptx_codegen(module: &inkwell::module::Module, o: &NvptxOptions) -> Result<String> {
    let tm = nvptx_machine(o)?;
    let buf = tm.write_to_memory_buffer(module, inkwell::targets::FileType::Assembly).map_err(|e| anyhow!("NVPTX code generation failed: {e}"))?;
    Ok(String::from_utf8_lossy(buf.as_slice()).trim_end_matches('\0').to_string())
}

/// LLVM IR text or bitcode (NVPTX-form, e.g. from `clang -x cuda --cuda-device-only
/// -emit-llvm`) → LLVM's NVPTX backend → PTX.
pub fn llvm_ir_to_ptx(path: &Path, o: &NvptxOptions) -> Result<String> {
    target::init_llvm();
    let ctx = Context::create();
    let buf = inkwell::memory_buffer::MemoryBuffer::create_from_file(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    let module = ctx.create_module_from_ir(buf).map_err(|e| anyhow!("{}: not valid LLVM IR: {}", path.display(), e.to_string().trim_end()))?;
    let tm = nvptx_machine(o)?;
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    module.verify().map_err(|e| anyhow!("{}: LLVM IR does not verify: {}", path.display(), e.to_string().trim_end()))?;
    nvptx_codegen(&module, o)
}

/// Compiles `src` for `kind` at `opt` into the object `out` (only the `__ptxr_cta_<kernel>`
/// symbols); returns its kernels.
pub fn compile_object(src: &SourceFile, kind: TargetKind, opt: u32, out: &Path) -> Result<Vec<KernelInfo>> {
    compile_object_vars(src, kind, opt, out).map(|(k, _)| k)
}

/// [`compile_object`], also returning the module variables whose addresses the object exports
/// for the checking mode ([`export_vars`]; none unless `codegen::set_check` is on).
pub fn compile_object_vars(src: &SourceFile, kind: TargetKind, opt: u32, out: &Path) -> Result<(Vec<KernelInfo>, Vec<(String, u64)>)> {
    let ctx = Context::create();
    let c = lower(&ctx, src)?;
    let vars = export_vars(&ctx, &c.module, kind, opt)?;
    write_one_object(&c.module, kind, opt, out)?;
    Ok((c.kernels, vars))
}

/// The checking mode (`codegen::set_check`) needs the module's variables
/// (`ptxr_runtime::check`): their addresses are exported as `__ptxr_var.<name>`. Returns each
/// one's name and size in bytes (none when the mode is off).
fn export_vars<'ctx>(ctx: &'ctx Context, module: &inkwell::module::Module<'ctx>, kind: TargetKind, opt: u32) -> Result<Vec<(String, u64)>> {
    let mut vars = Vec::new();
    if !crate::codegen::check() {
        return Ok(vars);
    }
    let tm = target::machine(kind, opt, "sm_70")?;
    let td = tm.get_target_data();
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let globals: Vec<_> = module.get_globals().filter(|g| g.get_initializer().is_some() && !g.get_name().to_string_lossy().starts_with("__ptxr") && !g.get_name().to_string_lossy().starts_with("llvm.")).collect();
    for g in globals {
        let name = g.get_name().to_string_lossy().into_owned();
        let size = td.get_abi_size(&g.get_value_type());
        let e = module.add_global(ptr_t, None, &format!("__ptxr_var.{name}"));
        e.set_initializer(&g.as_pointer_value());
        e.set_constant(true);
        vars.push((name, size));
    }
    Ok(vars)
}

/// Optimizes `module` and writes its object code into `dir` (`codegen::split`: one object,
/// or one per partition compiled in parallel); returns the files.
fn object_files(module: &inkwell::module::Module, kind: TargetKind, opt: u32, dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    crate::runtime::write_objects(&crate::codegen::split::objects(module, kind, opt)?, dir)
}

/// Optimizes `module` and writes one object file `out` (partitions compiled in parallel are
/// linked into one relocatable object).
fn write_one_object(module: &inkwell::module::Module, kind: TargetKind, opt: u32, out: &Path) -> Result<()> {
    let objs = crate::codegen::split::objects(module, kind, opt)?;
    if let [o] = objs.as_slice() {
        return std::fs::write(out, o).map_err(|e| anyhow!("cannot write {}: {e}", out.display()));
    }
    let dir = tempfile::tempdir()?;
    crate::timing::phase("link the partitions' objects", || capi::link_relocatable(&capi::c_compiler(kind), out, &crate::runtime::write_objects(&objs, dir.path())?))
}

/// The kernels of `src` with their parameter layouts (parse, validate and lower only).
pub fn kernels_of(src: &SourceFile) -> Result<Vec<KernelInfo>> {
    let ctx = Context::create();
    let c = lower(&ctx, src)?;
    Ok(c.kernels)
}

/// The errors of functions compiled as stubs (`codegen::compile_lenient`), as (line,
/// column, message) for the runtime's reports.
fn deferred_errors(src: &SourceFile, c: &crate::codegen::Compiled) -> Vec<(u32, u32, String)> {
    c.deferred
        .iter()
        .map(|d| {
            let (l, col, _) = crate::syntax::diag::line_col(&src.text, d.span.start as usize);
            (l as u32, col as u32, d.message.clone())
        })
        .collect()
}

/// Compiles `src` for the host and loads it for launching. A function that cannot be
/// compiled (an instruction ptxr does not support) does not stop the module's other kernels
/// from running: launching a kernel that reaches it reports its error.
pub fn load(src: &SourceFile, opt: u32) -> Result<Loaded> {
    let ctx = Context::create();
    let c = lower_with(&ctx, src, true)?;
    let deferred = deferred_errors(src, &c);
    let vars = export_vars(&ctx, &c.module, TargetKind::Host, opt)?;
    let objs = crate::codegen::split::objects(&c.module, TargetKind::Host, opt)?;
    let mut l = Loaded::from_objects(&objs, c.kernels, &src.name)?;
    l.deferred = deferred;
    l.vars = vars;
    Ok(l)
}

/// A module compiled into a shared library for a host API (the CUDA driver API of
/// `ptxr-cuda`): what [`compile_shared`] returns besides the library.
pub struct SharedModule {
    pub kernels: Vec<KernelInfo>,
    /// Errors of functions compiled as stubs: (line, column, message), as in [`load`].
    pub deferred: Vec<(u32, u32, String)>,
    /// Module-scope `.global` and `.const` variables: name and size in bytes. The library
    /// exports each one's address as the pointer variable `__ptxr_var.<name>`.
    pub globals: Vec<(String, u64)>,
    /// Bytes of the module's `.const` variables (`CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`).
    pub const_bytes: u64,
}

/// Compiles `src` for the host at `opt` into the shared library `out`, as [`load`] does
/// (functions that cannot be compiled become stubs that report their error when reached),
/// with the addresses of the module's variables exported (`SharedModule::globals`): what
/// `cuModuleGetGlobal` and `cudaMemcpyToSymbol` need.
pub fn compile_shared(src: &SourceFile, opt: u32, out: &Path) -> Result<SharedModule> {
    // Parsed once: the module's variables are read from the same AST that is compiled.
    let ast = crate::check_source(src).map_err(|m| anyhow!("{}", m.trim_end()))?;
    let ctx = Context::create();
    let c = crate::codegen::compile_lenient(&ctx, &ast, &src.text, &src.name).map_err(|d| anyhow!("{}", crate::syntax::diag::render_all(&d, &src.name, &src.text).trim_end()))?;
    let deferred = deferred_errors(src, &c);
    let tm = target::machine(TargetKind::Host, opt, "sm_70")?;
    let td = tm.get_target_data();
    let mut globals = Vec::new();
    let mut const_bytes = 0;
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    for item in &ast.items {
        let crate::syntax::ast::Item::Var(v) = item else { continue };
        if !matches!(v.space, crate::syntax::ast::StateSpace::Global | crate::syntax::ast::StateSpace::Const) {
            continue;
        }
        let Some(g) = c.module.get_global(v.name.name) else { continue };
        if g.get_initializer().is_none() {
            continue;
        }
        let size = td.get_abi_size(&g.get_value_type());
        let e = c.module.add_global(ptr_t, None, &format!("__ptxr_var.{}", v.name.name));
        e.set_initializer(&g.as_pointer_value());
        e.set_constant(true);
        if v.space == crate::syntax::ast::StateSpace::Const {
            const_bytes += size;
        }
        globals.push((v.name.name.to_string(), size));
    }
    let dir = tempfile::tempdir()?;
    let objs = object_files(&c.module, TargetKind::Host, opt, dir.path())?;
    crate::runtime::link_shared(&objs, out)?;
    Ok(SharedModule { kernels: c.kernels, deferred, globals, const_bytes })
}

/// `ptxr compile --report`: per kernel, the execution path it takes and why, and what the
/// uniformity analysis (`ir::uniformity`) found: value shapes, divergent branches, converged
/// blocks, registers held once per warp, and how each memory access's lanes touch memory.
pub fn report(src: &SourceFile) -> Result<String> {
    use crate::ir::uniformity::{Access, Shape};
    use std::fmt::Write;
    let ast = crate::check_source(src).map_err(|m| anyhow!("{}", m.trim_end()))?;
    let m = crate::ir::build_module(&ast, &src.text).map_err(|d| anyhow!("{}", crate::syntax::diag::render_all(&d, &src.name, &src.text).trim_end()))?;
    let sync_funcs = crate::lanes::sync_funcs(&ast);
    let mut out = String::new();
    let exec = crate::codegen::warp::exec();
    for item in &ast.items {
        let crate::syntax::ast::Item::Func(f) = item else { continue };
        let (Some(body), true) = (f.body.as_ref(), f.entry) else { continue };
        let Some(irf) = m.funcs.iter().find(|g| g.name == f.name.name) else { continue };
        let plan = crate::codegen::warp::choose(irf, body, &sync_funcs, exec);
        let describe = |plan: &Result<crate::codegen::warp::Plan, String>| match plan {
            Ok(p) if p.barriers.is_empty() => "simd (warp-vector)".to_string(),
            Ok(p) if p.barriers.len() == 1 => "simd (warp-vector; the CTA's warps run in phases around its barrier)".to_string(),
            Ok(p) => format!("simd (warp-vector; the CTA's warps run in phases between its {} barriers)", p.barriers.len()),
            Err(why) => format!("thread ({why})"),
        };
        let _ = writeln!(out, "kernel {}: {}", f.name.name, describe(&plan));
        // The version for narrow blocks, if any.
        if let (false, Ok(t)) = (crate::codegen::warp::never_narrow(f), crate::codegen::warp::choose_narrow(irf, body, &sync_funcs, exec)) {
            let shape = match t.uni.layout {
                crate::codegen::warp::Layout::Rows => "blocks at most 16 threads wide: warps of one row",
                crate::codegen::warp::Layout::Tile => "blocks 16 threads wide with rows in pairs: warps of two rows",
            };
            let mut anchored: Vec<String> = t.anchored.iter().map(|((_, n), r)| format!("{n} (+ {})", t.key(irf, *r).1)).collect();
            anchored.sort();
            let tile = t.uni.layout == crate::codegen::warp::Layout::Tile;
            let _ = writeln!(out, "  {shape}, {}", describe(&Ok(t)));
            if tile && !anchored.is_empty() {
                let _ = writeln!(out, "    there, registers held as one scalar per warp plus a lane part each row recomputes: {}", anchored.join(", "));
            }
        }
        let own;
        let uni = match &plan {
            Ok(p) => &p.uni,
            Err(_) => {
                own = crate::ir::uniformity::analyze(irf);
                &own
            }
        };
        let count = |want: fn(&Shape) -> bool| uni.values.iter().filter(|s| want(s)).count();
        let _ = writeln!(
            out,
            "  values: {} uniform, {} affine in the lane, {} varying",
            count(|s| *s == Shape::Uniform),
            count(|s| matches!(s, Shape::Affine(_))),
            count(|s| *s == Shape::Varying)
        );
        let reachable: Vec<u32> = uni.cfg.rpo.clone();
        let branches = reachable.iter().filter(|b| matches!(irf.blocks[**b as usize].term, crate::ir::Term::CondBr { .. } | crate::ir::Term::Switch { .. })).count();
        let divergent = reachable.iter().filter(|b| uni.divergent[**b as usize]).count();
        let converged = reachable.iter().filter(|b| uni.group[**b as usize] == crate::ir::uniformity::Group::All).count();
        let _ = writeln!(out, "  branches: {divergent} divergent of {branches}; blocks run by all live lanes together: {converged} of {}", reachable.len());
        if plan.is_ok() && crate::codegen::warp::whole_rows(f) {
            let _ = writeln!(out, "  every warp whole: the .reqntid rows are multiples of 32 threads, so every lane of every warp exists");
        } else if plan.as_ref().is_ok_and(crate::codegen::warp::has_whole_version) {
            let _ = writeln!(out, "  blocks whose rows are whole warps (%ntid.x a multiple of 32): a version in which every lane of every warp exists");
        }
        if let Ok(p) = &plan {
            let vars: std::collections::HashSet<_> = irf.values.iter().map(|v| v.var.clone()).collect();
            let insts: usize = p.scalar_inst.iter().map(|b| b.iter().filter(|x| **x).count()).sum();
            let total: usize = irf.blocks.iter().map(|b| b.insts.len()).sum();
            let webs: std::collections::HashSet<_> = (0..irf.values.len() as u32).map(|v| p.key(irf, v)).collect();
            let _ = writeln!(out, "  once per warp: {} of {} register webs ({} registers), {insts} of {total} instructions", p.scalar_vars.iter().filter(|k| webs.contains(*k)).count(), webs.len(), vars.len());
            for ((b, k), live) in &p.barriers {
                let line = irf.blocks[*b as usize].insts.get(*k).map_or(0, |i| i.line);
                let mut held: Vec<String> = live.iter().map(|k| if p.scalar_vars.contains(k) { format!("{} (scalar)", k.1) } else { k.1.clone() }).collect();
                held.sort();
                held.dedup();
                let _ = writeln!(out, "  kept in the warp's frame across the barrier at line {line}: {}", if held.is_empty() { "nothing".to_string() } else { held.join(", ") });
            }
            if !p.yields.is_empty() {
                let mut lines: Vec<u32> = p.yields.iter().filter_map(|(l, _)| irf.blocks[*l as usize].insts.last().map(|i| i.line)).collect();
                lines.sort();
                let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                let grouped = crate::codegen::warp::may_group_ctas(irf, p);
                let mut every: Vec<u64> = p.yields.iter().map(|(l, _)| crate::codegen::warp::yield_every(irf, p, *l)).collect();
                every.sort();
                every.dedup();
                let every: Vec<String> = every.iter().map(|n| n.to_string()).collect();
                let how = if grouped { ", the warps of a group of CTAs together" } else { "" };
                let _ = writeln!(out, "  grid-stride loops whose iterations the CTA's warps interleave{how}, {} iterations at a time: {} (latches at lines {})", every.join(" or "), p.yields.len(), lines.join(", "));
            }
            if !p.parks.is_empty() {
                let mut loops: Vec<String> = p.parks.iter().map(|(h, _, _)| format!("`{}`", irf.blocks[*h as usize].label.unwrap_or("?"))).collect();
                loops.dedup();
                let bar = p.park_barrier.and_then(|(b, k)| irf.blocks[b as usize].insts.get(k)).map_or(String::new(), |i| format!("; lanes that reach the barrier at line {} wait there for the parked ones", i.line));
                let _ = writeln!(out, "  spin loops whose lanes park at the header while the warp's other lanes run on (lanes leave them apart): {}{bar}", loops.join(", "));
            }
            if !p.serial.is_empty() {
                let mut loops: Vec<(u32, String)> = p.serial.keys().map(|h| (p.uni.cfg.order[*h as usize], format!("`{}`", irf.blocks[*h as usize].label.unwrap_or("?")))).collect();
                loops.sort();
                let loops: Vec<String> = loops.into_iter().map(|(_, l)| l).collect();
                let _ = writeln!(out, "  compare-and-swap loops on one word for the warp that each lane runs to completion, one lane after another: {}", loops.join(", "));
            }
            if !p.inline.is_empty() {
                let blocks: usize = p.inline.values().map(|(r, _)| r.len()).sum();
                let _ = writeln!(out, "  divergent branches whose region runs inside their lane loop: {} ({blocks} blocks)", p.inline.len());
            }
            if !p.affine.is_empty() {
                let mut a: Vec<String> = p.affine.iter().map(|((_, n), s)| format!("{n} ({s})")).collect();
                a.sort();
                let _ = writeln!(out, "  affine registers held as one base per warp (lane stride): {}", a.join(", "));
            }
            if !p.anchored.is_empty() {
                let mut a: Vec<String> = p.anchored.iter().map(|((_, n), r)| format!("{n} (+ {})", p.key(irf, *r).1)).collect();
                a.sort();
                let _ = writeln!(out, "  registers held as one scalar per warp plus a lane part recomputed where read: {}", a.join(", "));
            }
        }
        let mut acc = Vec::new();
        for &b in &reachable {
            for inst in &irf.blocks[b as usize].insts {
                if !matches!(inst.src.opcode.name, "ld" | "st" | "atom" | "red" | "ldu") {
                    continue;
                }
                if inst.src.has_mod("param") {
                    continue;
                }
                if let Some(a) = uni.access(irf, inst, b) {
                    let what = match a {
                        Access::Uniform => "uniform".to_string(),
                        Access::Consecutive => "consecutive".to_string(),
                        Access::Strided(s) => format!("strided ({s} bytes)"),
                        Access::PerRow(s) => format!("one address per row of 16 lanes (rows {s} bytes apart)"),
                        Access::Gather => if inst.src.opcode.name == "ld" { "gather" } else { "scatter" }.to_string(),
                    };
                    acc.push(format!("{}:{} {what}", inst.line, inst.src.opcode.name));
                }
            }
        }
        if !acc.is_empty() {
            let _ = writeln!(out, "  memory: {}", acc.join(", "));
        }
    }
    Ok(out)
}
