//! Per-target facts: triple, CPU, features, and the LLVM target machine; optimization through
//! the new pass manager.

use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple};
use inkwell::OptimizationLevel;
use std::path::Path;
use std::sync::Once;

/// A code generation target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// The machine ptxr runs on, with all of its CPU features.
    Host,
    X86_64,
    AArch64,
    Nvptx64,
}

impl TargetKind {
    pub fn parse(s: &str) -> Option<TargetKind> {
        Some(match s {
            "host" | "native" => TargetKind::Host,
            "x86_64" | "x86-64" => TargetKind::X86_64,
            "aarch64" | "arm64" => TargetKind::AArch64,
            "nvptx64" | "nvptx" => TargetKind::Nvptx64,
            _ => return None,
        })
    }
}

static INIT: Once = Once::new();

/// LLVM reports some failures (a backend that cannot select an instruction) as fatal errors:
/// say clearly that LLVM failed, then exit non-zero instead of aborting.
extern "C" fn llvm_fatal(reason: *const std::os::raw::c_char) {
    let msg = if reason.is_null() { String::new() } else { unsafe { std::ffi::CStr::from_ptr(reason) }.to_string_lossy().into_owned() };
    eprintln!("error: LLVM failed: {msg}");
    std::process::exit(1);
}

pub fn init_llvm() {
    INIT.call_once(|| {
        let cfg = InitializationConfig::default();
        LlvmTarget::initialize_x86(&cfg);
        LlvmTarget::initialize_aarch64(&cfg);
        LlvmTarget::initialize_nvptx(&cfg);
        unsafe { inkwell::llvm_sys::error_handling::LLVMInstallFatalErrorHandler(Some(llvm_fatal)) };
        // CodeGenPrepare in its mode for huge functions for every function: it revisits only
        // the blocks it changed instead of the whole function until nothing changes. The
        // same rewrites; on a per-thread kernel with 385 blocks (NVRTC's shared-memory
        // histogram) it took 45 of the code generator's 118 ms, 5 ms in this mode.
        //
        // LICM promotes a memory location to a register in a loop only after sorting every
        // access of the loop into alias sets, for each loop of the nest in turn (the warp
        // loop, the phase loop and the dispatch loop around a kernel's own loops hold the whole
        // function), at each of the pipeline's three LICM runs; LLVM skips that above 250
        // accesses. At 64, NVRTC's PTX compiles in 5% fewer instructions (callgrind over the
        // corpus: a stencil 24%, a bitonic sort 21%, CAS loops 12% fewer); the assembly is
        // identical for 20 of its 21 files, and the kernel benchmark runs as fast.
        let mut args = vec!["ptxr".to_string()];
        // PTXR_LLVM_ARGS="-time-passes ...": options for LLVM itself (a developer's aid; they
        // replace ptxr's own of the same name).
        let user = std::env::var("PTXR_LLVM_ARGS").unwrap_or_default();
        for own in ["-cgpp-huge-func=0", "-licm-mssa-max-acc-promotion=64"] {
            if !user.contains(own.split('=').next().unwrap_or(own)) {
                args.push(own.to_string());
            }
        }
        args.extend(user.split_whitespace().map(String::from));
        let args: Vec<std::ffi::CString> = args.into_iter().filter_map(|s| std::ffi::CString::new(s).ok()).collect();
        let ptrs: Vec<*const std::os::raw::c_char> = args.iter().map(|c| c.as_ptr()).collect();
        unsafe { inkwell::llvm_sys::support::LLVMParseCommandLineOptions(ptrs.len() as i32, ptrs.as_ptr(), std::ptr::null()) };
    });
}

/// PTX ISA version feature for LLVM's NVPTX backend: `6.4`, `64` or `ptx64` → `+ptx64`.
pub fn ptx_feature(version: &str) -> Option<String> {
    let v = version.trim_start_matches("ptx").replace('.', "");
    if v.len() == 2 && v.chars().all(|c| c.is_ascii_digit()) {
        Some(format!("+ptx{v}"))
    } else {
        None
    }
}

fn opt_level(opt: u32) -> OptimizationLevel {
    match opt {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    }
}

/// A target machine for LLVM's NVPTX backend: `sm` (e.g. `sm_70`) and a PTX ISA feature
/// from [`ptx_feature`].
pub fn nvptx_machine(sm: &str, ptx_feature: &str, opt: u32) -> anyhow::Result<TargetMachine> {
    init_llvm();
    let triple = TargetTriple::create("nvptx64-nvidia-cuda");
    let t = LlvmTarget::from_triple(&triple).map_err(|e| anyhow::anyhow!("LLVM target {}: {}", triple, e))?;
    let level = opt_level(opt);
    t.create_target_machine(&triple, sm, ptx_feature, level, RelocMode::Default, CodeModel::Default)
        .ok_or_else(|| anyhow::anyhow!("cannot create an NVPTX target machine for {sm}"))
}

/// A target machine for `kind`, position-independent (objects go into shared libraries).
pub fn machine(kind: TargetKind, opt: u32, sm: &str) -> anyhow::Result<TargetMachine> {
    init_llvm();
    let (triple, cpu, features) = match kind {
        // PTXR_HOST_CPU=NAME (a developer's aid): code for CPU NAME (its own features, as
        // LLVM knows them, and on x86 the scatter preference below) in place of this
        // machine's, e.g. `znver3` to see and time the AVX2 code of an AMD machine on an
        // AVX-512 one.
        TargetKind::Host if std::env::var("PTXR_HOST_CPU").is_ok_and(|c| !c.is_empty()) => {
            let triple = TargetMachine::get_default_triple();
            let x86 = triple.as_str().to_string_lossy().starts_with("x86_64");
            (triple, std::env::var("PTXR_HOST_CPU").unwrap(), if x86 { "+prefer-no-scatter".to_string() } else { String::new() })
        }
        TargetKind::Host => {
            let triple = TargetMachine::get_default_triple();
            let mut features = TargetMachine::get_host_cpu_features().to_string();
            // Lane loops often hold a store that few lanes take (`if (lane == 0) out[w] = v`);
            // AVX-512 scatters cost about the same whether 1 or 16 lanes store, so such
            // stores are better scalarized behind their condition.
            if triple.as_str().to_string_lossy().starts_with("x86_64") && features.contains("+avx512f") {
                features.push_str(",+prefer-no-scatter");
            }
            (triple, TargetMachine::get_host_cpu_name().to_string(), features)
        }
        TargetKind::X86_64 => (TargetTriple::create("x86_64-unknown-linux-gnu"), "x86-64".to_string(), String::new()),
        TargetKind::AArch64 => (TargetTriple::create("aarch64-unknown-linux-gnu"), "generic".to_string(), "+neon".to_string()),
        TargetKind::Nvptx64 => (TargetTriple::create("nvptx64-nvidia-cuda"), sm.to_string(), "+ptx64".to_string()),
    };
    let t = LlvmTarget::from_triple(&triple).map_err(|e| anyhow::anyhow!("LLVM target {}: {}", triple, e))?;
    let level = opt_level(opt);
    t.create_target_machine(&triple, &cpu, &features, level, RelocMode::PIC, CodeModel::Default)
        .ok_or_else(|| anyhow::anyhow!("cannot create an LLVM target machine for {}", triple))
}

/// LLVM's diagnostics while ptxr optimizes and generates code: warnings and remarks (a lane
/// loop that the loop vectorizer could not vectorize at the width asked for: it stays a
/// loop, which is correct) are not the user's concern and are dropped; errors are printed.
extern "C" fn diagnostic(info: inkwell::llvm_sys::prelude::LLVMDiagnosticInfoRef, _: *mut std::ffi::c_void) {
    use inkwell::llvm_sys::core::{LLVMDisposeMessage, LLVMGetDiagInfoDescription, LLVMGetDiagInfoSeverity};
    use inkwell::llvm_sys::LLVMDiagnosticSeverity;
    unsafe {
        if LLVMGetDiagInfoSeverity(info) == LLVMDiagnosticSeverity::LLVMDSError {
            let d = LLVMGetDiagInfoDescription(info);
            eprintln!("LLVM error: {}", std::ffi::CStr::from_ptr(d).to_string_lossy());
            LLVMDisposeMessage(d);
        }
    }
}

/// Sets triple and data layout, then runs the new pass manager's `default<On>` pipeline.
pub fn optimize(module: &Module, tm: &TargetMachine, opt: u32) -> anyhow::Result<()> {
    unsafe { inkwell::llvm_sys::core::LLVMContextSetDiagnosticHandler(inkwell::llvm_sys::core::LLVMGetModuleContext(module.as_mut_ptr()), Some(diagnostic), std::ptr::null_mut()) };
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    let cpu = !tm.get_triple().as_str().to_string_lossy().starts_with("nvptx");
    let thread = has_thread_kernel(module);
    let stages = crate::passes::pipeline_stages(opt, cpu, thread, !thread && has_warp_function(module));
    crate::passes::lane_locals::scalarize(module);
    for (k, stage) in stages.iter().enumerate() {
        if k > 0 {
            crate::passes::lane_stores::unmask(module);
            crate::passes::uniform_gathers::rewrite(module);
            crate::passes::lane_shadow::shadow(module);
            if masked_moves_slow(tm) {
                crate::passes::coherent::split(module);
            }
            if k == 1 && stages.len() == 2 {
                run_on_warp_functions(module, tm, crate::passes::WARP_LATE)?;
            }
        }
        module.run_passes(stage, tm, PassBuilderOptions::create()).map_err(|e| anyhow::anyhow!("LLVM passes failed: {}", e))?;
    }
    Ok(())
}

/// Whether `tm`'s masked vector loads and stores cost more than plain ones, so that a plain
/// access for when every lane is on pays (`passes::coherent`): x86 without AVX-512, whose
/// `vmaskmovps`/`vpmaskmovd` stores are microcoded on AMD (a streaming saxpy 5x slower with
/// them on Zen 3); AVX-512's masked moves are single instructions. Other targets (NEON has no
/// masked accesses; LLVM expands them lane by lane) gain as well.
fn masked_moves_slow(tm: &TargetMachine) -> bool {
    if std::env::var("PTXR_COHERENT").is_ok_and(|v| v == "0") {
        return false;
    }
    let features = tm.get_feature_string().to_string_lossy().into_owned();
    !features.split(',').any(|f| f == "+avx512f")
}

/// Runs function passes `passes` on the warp path's functions of `module` (those with
/// `warp::VECTOR_WIDTH_ATTR`) only: the others are `optnone` while they run (LLVM's pass
/// manager skips optional passes on such functions), as they were before.
fn run_on_warp_functions(module: &Module, tm: &TargetMachine, passes: &str) -> anyhow::Result<()> {
    use inkwell::attributes::{Attribute, AttributeLoc};
    let ctx = module.get_context();
    let (optnone, noinline) = (Attribute::get_named_enum_kind_id("optnone"), Attribute::get_named_enum_kind_id("noinline"));
    let is_warp = |f: &inkwell::values::FunctionValue| f.get_string_attribute(AttributeLoc::Function, super::warp::VECTOR_WIDTH_ATTR).is_some();
    if !module.get_functions().any(|f| f.count_basic_blocks() > 0 && is_warp(&f)) {
        return Ok(());
    }
    let mut held = Vec::new();
    for f in module.get_functions().filter(|f| f.count_basic_blocks() > 0 && !is_warp(f)) {
        if f.get_enum_attribute(AttributeLoc::Function, optnone).is_some() {
            continue;
        }
        let had_noinline = f.get_enum_attribute(AttributeLoc::Function, noinline).is_some();
        f.add_attribute(AttributeLoc::Function, ctx.create_enum_attribute(optnone, 0));
        if !had_noinline {
            f.add_attribute(AttributeLoc::Function, ctx.create_enum_attribute(noinline, 0));
        }
        held.push((f, had_noinline));
    }
    let r = module.run_passes(passes, tm, PassBuilderOptions::create()).map_err(|e| anyhow::anyhow!("LLVM passes failed: {}", e));
    for (f, had_noinline) in held {
        f.remove_enum_attribute(AttributeLoc::Function, optnone);
        if !had_noinline {
            f.remove_enum_attribute(AttributeLoc::Function, noinline);
        }
    }
    r
}

/// Whether `module` defines a function of the warp path (`warp::VECTOR_WIDTH_ATTR`).
fn has_warp_function(module: &Module) -> bool {
    use inkwell::attributes::AttributeLoc;
    module.get_functions().any(|f| f.count_basic_blocks() > 0 && f.get_string_attribute(AttributeLoc::Function, super::warp::VECTOR_WIDTH_ATTR).is_some())
}

/// Whether `module` defines a kernel that runs on the per-thread path and is optimized: a
/// CTA function (`__ptxr_cta_*`) without the warp path's vector width preference that is not
/// an `optnone` fallback (`func::THREAD_VERSION`).
fn has_thread_kernel(module: &Module) -> bool {
    use inkwell::attributes::{Attribute, AttributeLoc};
    let optnone = Attribute::get_named_enum_kind_id("optnone");
    module.get_functions().any(|f| {
        f.count_basic_blocks() > 0
            && f.get_name().to_bytes().starts_with(b"__ptxr_cta_")
            && f.get_string_attribute(AttributeLoc::Function, super::warp::VECTOR_WIDTH_ATTR).is_none()
            && f.get_enum_attribute(AttributeLoc::Function, optnone).is_none()
    })
}

pub fn write_asm(module: &Module, tm: &TargetMachine, path: &Path) -> anyhow::Result<()> {
    tm.write_to_file(module, FileType::Assembly, path).map_err(|e| anyhow::anyhow!("cannot write {}: {}", path.display(), e))
}
