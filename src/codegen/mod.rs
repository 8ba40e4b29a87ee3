//! LLVM code generation through inkwell.
//!
//! Each kernel becomes `__ptxr_cta_<name>(CtaCtx*) -> i32`, which runs every thread of one CTA
//! (see [`abi::CtaCtx`]). Each `.func` becomes an LLVM function taking the CTA context, the
//! thread's `%tid`, and one pointer per parameter. PTX registers are entry-block allocas of
//! their declared width (integers for every non-predicate type, so a `.b32` register can hold
//! an `f32`); LLVM's `mem2reg`/SROA make them SSA.
//!
//! Address spaces: generic, global, const and param addresses are host pointers. `.shared`
//! addresses are byte offsets into the CTA's shared window (so they fit the 32-bit registers
//! compilers use for them); `cvta.shared` adds the window base. `.local` variables are
//! per-thread allocas whose addresses are host pointers; `cvta.local` is the identity.

/// The ABI between generated code and launchers (in `ptxr-runtime`).
pub use ptxr_runtime::abi;
pub(crate) mod func;
mod ops_atomic;
mod ops_bits;
mod ops_conv;
mod ops_float;
mod ops_half;
mod ops_int;
mod ops_mem;
mod ops_misc;
mod ops_video;
pub mod ops_tex;
mod ops_wmma;
mod ops_tcgen05;
mod ops_wgmma;
mod ops_bulk;
mod wmma_layout;
pub(crate) mod nvvm;
pub(crate) mod sync;
pub mod target;
pub mod split;

use crate::syntax::ast::{self, Item, Module as Ast, StateSpace, Type};
use crate::syntax::diag::Diagnostic;
use crate::syntax::eval::{eval, Const};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::{FunctionValue, GlobalValue};
use inkwell::AddressSpace;
use std::collections::HashMap;

pub mod warp;
pub mod warp_collective;
pub use func::FnEmitter;
pub use func::types_of;

/// Layout of one kernel parameter in the parameter buffer.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub ty: Type,
    /// Array element count (1 for scalars); `.b8 p[16]` structs passed by value have 16.
    pub count: u32,
    pub offset: u32,
    pub size: u32,
    pub align: u32,
    /// Declared `.ptr` (pointer) attribute, or a `.u64`/`.b64` that the kernel uses as address.
    pub is_ptr: bool,
}

/// What the runtime needs to know to launch a kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub name: String,
    pub params: Vec<ParamInfo>,
    pub param_size: u32,
    pub static_smem: u32,
    /// `.reqntid` / `.maxntid` if given.
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// `.reqnctapercluster` (PTX ISA 8.x performance-tuning directives): the cluster shape
    /// every launch of the kernel has.
    pub cluster: Option<[u32; 3]>,
    /// Bytes of per-thread frame (registers and local memory) for kernels with
    /// synchronization; 0 otherwise.
    pub frame_size: u32,
    /// Whether the kernel has synchronization points (barriers, warp collectives).
    pub uses_sync: bool,
    /// Whether one call of the CTA function may run a group of consecutive CTAs
    /// (`CtaCtx::group`; `codegen::warp::setup`).
    pub cta_group: bool,
    /// The kernel's module issues `clusterlaunchcontrol.try_cancel` (`abi::DK_CANCELLABLE`).
    pub cancellable: bool,
    /// Bytes of the static `.shared` variables the kernel can reach as declared (the
    /// module's and its own, each at its alignment): what `cuFuncGetAttribute` reports as
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES` (`static_smem` is the window, which also holds
    /// other kernels' variables and alignment slack).
    pub shared_bytes: u32,
    /// Bytes of the kernel's own `.local` variables per thread (`LOCAL_SIZE_BYTES`).
    pub local_bytes: u32,
}

/// Where a module-scope symbol lives.
#[derive(Clone, Copy)]
pub(crate) enum GlobalSym<'ctx> {
    /// `.global` / `.const`: an LLVM global (host address).
    Mem(GlobalValue<'ctx>),
    /// `.shared`: a byte offset in the CTA window.
    Shared(u32),
    Func(FunctionValue<'ctx>),
}

/// The result of compiling a PTX module.
pub struct Compiled<'ctx> {
    pub module: Module<'ctx>,
    pub kernels: Vec<KernelInfo>,
    /// Errors of functions compiled as stubs ([`compile_lenient`]); empty otherwise.
    pub deferred: Vec<Diagnostic>,
}

pub(crate) struct ModCtx<'ctx, 'a> {
    pub ctx: &'ctx Context,
    pub module: Module<'ctx>,
    pub ast: &'a Ast<'a>,
    /// Line numbers of the source text.
    pub lines: crate::syntax::diag::LineIndex,
    pub globals: HashMap<&'a str, GlobalSym<'ctx>>,
    /// Function-scope `.shared` variables: (function, name) → offset.
    pub fn_shared: HashMap<(&'a str, &'a str), (u32, Type)>,
    pub shared_size: u32,
    /// The largest `.align` of a `.shared` variable (at least 16): the window's base is
    /// aligned to it in generated code (`FnEmitter::shared_base`), with the slack counted in
    /// the kernels' static shared memory.
    pub shared_align: u32,
    /// The module reaches other CTAs' shared memory (`mapa`, distributed shared memory, a
    /// copy with `.multicast::cluster`, a cancellation response with
    /// `.multicast::cluster::all`): shared atomics and mbarriers must be atomic, since other
    /// CTAs of the cluster run on other host threads (`ops_atomic`).
    pub dsmem: bool,
    /// The module cancels cluster launches (`clusterlaunchcontrol.try_cancel`): its kernels
    /// are `KernelInfo::cancellable`.
    pub cancels: bool,
    /// The module has CTA pairs (`tcgen05` `.cta_group::2`): each CTA's tensor memory is
    /// found by its peer through its cluster window (`ops_tcgen05::tmem`).
    pub cta_pairs: bool,
    /// The checking mode ([`set_check`]): every global, shared and generic access asks the
    /// runtime first (`FnEmitter::check_access`).
    pub check: bool,
    /// The checking mode sees every write of shared memory and every synchronization of the
    /// module ([`shadow_sees_all`]): its races and uninitialized reads of shared memory are
    /// checked.
    pub shadow_ok: bool,
    pub errors: Vec<Diagnostic>,
    /// NVVM-form output for LLVM's NVPTX backend (one thread per function, `llvm.nvvm.*`
    /// intrinsics, NVPTX address spaces) instead of CPU code.
    pub nvptx: bool,
    /// NVPTX mode: function-scope `.shared` variables as `addrspace(3)` globals.
    pub fn_shared_g: HashMap<(&'a str, &'a str), GlobalValue<'ctx>>,
    /// `.func`s that synchronize (directly or through calls): inlined into kernels.
    pub sync_funcs: std::collections::HashSet<&'a str>,
    /// `.global`/`.const` variables whose initializers hold addresses (5.4.4), defined once
    /// every variable and function is declared (`define_address_globals`).
    pub addr_inits: Vec<(&'a ast::VarDecl<'a>, Option<String>)>,
    /// `.global`/`.const` variables declared inside functions (PTX ISA 5.4: call tables "may
    /// be declared at module scope or local scope"): one instance per module, like a C
    /// `static` local, as LLVM globals named `<function>.<variable>`; by declaration.
    pub fn_globals: HashMap<*const ast::VarDecl<'a>, GlobalValue<'ctx>>,
    /// ptxr's IR of every function with a body, which code generation lowers from; or the
    /// error that building it gave.
    pub ir: HashMap<&'a str, Result<std::rc::Rc<crate::ir::Func<'a>>, Diagnostic>>,
    /// Emitting the per-thread version of a warp-path kernel (`__ptxr_cta_<kernel>.thread`,
    /// which the warp version calls for block shapes whose rows are not hardware warps).
    pub thread_version: bool,
    /// Emitting the version of a kernel for narrow blocks (`__ptxr_cta_<kernel>.narrow`,
    /// which its main version calls for blocks at most 16 threads wide:
    /// `codegen::warp::choose_narrow`).
    pub narrow_version: bool,
    /// Emitting the version of a kernel with warp collectives for blocks whose rows are whole
    /// warps (`__ptxr_cta_<kernel>.whole`, which its main version calls when `%ntid.x` is a
    /// multiple of 32: `codegen::warp::whole_dispatch`).
    pub whole_version: bool,
}

/// `x` rounded up to a multiple of `a` (saturating: a shared-memory window that large is
/// refused at launch anyway).
fn align_up(x: u32, a: u32) -> u32 {
    x.saturating_add(a - 1) / a * a
}

/// Byte size of a declaration (element type × vector width × array dims).
pub(crate) fn decl_size(v: &ast::VarDecl) -> u32 {
    decl_size_exact(v).min(u32::MAX as u64) as u32
}

/// The size of a variable in bytes, without a limit (saturating at u64::MAX).
pub(crate) fn decl_size_exact(v: &ast::VarDecl) -> u64 {
    let elem = v.ty.size() as u64 * v.vector.unwrap_or(1) as u64;
    let n = v.dims.iter().fold(1u64, |a, d| a.saturating_mul(d.unwrap_or(0)));
    elem.saturating_mul(if v.dims.is_empty() { 1 } else { n })
}

/// The largest variable ptxr lays out (its sizes and offsets are 32-bit): 4 GiB - 1.
const MAX_VAR_SIZE: u64 = u32::MAX as u64;

/// An error for a variable larger than [`MAX_VAR_SIZE`].
fn too_large(v: &ast::VarDecl) -> Option<Diagnostic> {
    let n = decl_size_exact(v);
    (n > MAX_VAR_SIZE).then(|| Diagnostic::error(v.name.span, format!("`{}` is {n} bytes; ptxr supports variables of at most {MAX_VAR_SIZE} bytes (4 GiB - 1)", v.name.name)))
}

pub(crate) fn decl_align(v: &ast::VarDecl) -> u32 {
    v.align.unwrap_or(v.ty.size() * v.vector.unwrap_or(1) as u32).max(1)
}

/// Compiles a validated module to LLVM IR for the CPU.
pub fn compile<'ctx, 'a>(ctx: &'ctx Context, ast: &'a Ast<'a>, src: &'a str, name: &str) -> Result<Compiled<'ctx>, Vec<Diagnostic>> {
    compile_mode(ctx, ast, src, name, false)
}

/// Compiles a validated module to NVVM-form LLVM IR for LLVM's NVPTX backend (see `nvvm`).
pub fn compile_nvvm<'ctx, 'a>(ctx: &'ctx Context, ast: &'a Ast<'a>, src: &'a str, name: &str) -> Result<Compiled<'ctx>, Vec<Diagnostic>> {
    compile_mode(ctx, ast, src, name, true)
}

/// [`compile`], except that a function whose code generation fails (an instruction ptxr does
/// not support, a call to a function the module does not define) becomes a stub that stops
/// the CTA with `STATUS_UNSUPPORTED` at the error's line, and its errors are returned in
/// `deferred`: the module's other kernels still run. For `ptxr run`, where one kernel of a
/// module is launched; ahead-of-time compilation stays strict.
pub fn compile_lenient<'ctx, 'a>(ctx: &'ctx Context, ast: &'a Ast<'a>, src: &'a str, name: &str) -> Result<Compiled<'ctx>, Vec<Diagnostic>> {
    compile_with(ctx, ast, src, name, false, true)
}

fn compile_mode<'ctx, 'a>(ctx: &'ctx Context, ast: &'a Ast<'a>, src: &'a str, name: &str, nvptx: bool) -> Result<Compiled<'ctx>, Vec<Diagnostic>> {
    compile_with(ctx, ast, src, name, nvptx, false)
}

fn compile_with<'ctx, 'a>(ctx: &'ctx Context, ast: &'a Ast<'a>, src: &'a str, name: &str, nvptx: bool, lenient: bool) -> Result<Compiled<'ctx>, Vec<Diagnostic>> {
    let module = ctx.create_module(name);
    let mut m = ModCtx { ctx, module, ast, lines: crate::syntax::diag::LineIndex::new(src), globals: HashMap::new(), fn_shared: HashMap::new(), shared_size: 0, shared_align: 16, errors: Vec::new(), nvptx, fn_shared_g: HashMap::new(), sync_funcs: crate::lanes::sync_funcs(ast), addr_inits: Vec::new(), ir: HashMap::new(), fn_globals: HashMap::new(), thread_version: false, narrow_version: false, whole_version: false, dsmem: reaches_other_ctas(ast), cancels: issues_try_cancel(ast), cta_pairs: any_instr(ast, &|i| i.opcode.name == "tcgen05" && i.has_mod("cta_group::2")), check: check(), shadow_ok: shadow_sees_all(ast) };
    // ptxr's IR of each function (verified in debug builds).
    for item in &ast.items {
        if let Item::Func(f) = item {
            if f.body.is_some() {
                let r = crate::ir::build_func_with(f, &m.lines).and_then(|irf| {
                    if cfg!(debug_assertions) {
                        crate::ir::verify(&irf).map_err(|e| Diagnostic::error(f.name.span, format!("internal error: IR of `{}` does not verify: {e}", f.name.name)))?;
                    }
                    Ok(std::rc::Rc::new(irf))
                });
                m.ir.insert(f.name.name, r);
            }
        }
    }
    m.declare_globals();
    // Function-scope shared variables get offsets in the same window.
    for item in &ast.items {
        if let Item::Func(f) = item {
            if let Some(body) = &f.body {
                let mut shared = Vec::new();
                collect_shared(body, &mut shared);
                for v in shared {
                    if nvptx {
                        let g = nvvm::shared_global(&mut m, v, Some(f.name.name));
                        m.fn_shared_g.insert((f.name.name, v.name.name), g);
                        continue;
                    }
                    m.shared_align = m.shared_align.max(decl_align(v).next_power_of_two());
                    if v.linkage == Some(ast::Linkage::Extern) {
                        m.fn_shared.insert((f.name.name, v.name.name), (u32::MAX, v.ty));
                        continue;
                    }
                    let off = align_up(m.shared_size, decl_align(v));
                    m.shared_size = off.saturating_add(decl_size(v));
                    m.fn_shared.insert((f.name.name, v.name.name), (off, v.ty));
                }
            }
        }
    }
    // Dynamic shared memory follows the static variables, at the largest alignment any
    // shared variable asks for.
    m.shared_size = align_up(m.shared_size, m.shared_align);
    for item in &ast.items {
        if let Item::Func(f) = item {
            if let Some(body) = &f.body {
                let mut vars = Vec::new();
                collect_space(body, &[StateSpace::Global, StateSpace::Const], &mut vars);
                for v in vars {
                    m.define_global(v, &format!("{}.{}", f.name.name, v.name.name), true);
                }
            }
        }
    }
    // Declare every function first (calls may precede definitions).
    // Only functions defined in this module get LLVM functions; a prototype may precede its
    // definition. Calls to external functions other than the host services (vprintf,
    // __assertfail) are reported at the call.
    for item in &ast.items {
        if let Item::Func(f) = item {
            if !f.entry && f.body.is_some() && !m.globals.contains_key(f.name.name) {
                let fv = func::declare_func(&mut m, f);
                m.globals.insert(f.name.name, GlobalSym::Func(fv));
            }
        }
    }
    m.define_address_globals();
    for item in &ast.items {
        if let Item::Alias { alias, aliasee, .. } = item {
            if let Some(g) = m.globals.get(aliasee.name).copied() {
                m.globals.insert(alias.name, g);
            }
        }
    }
    // A kernel's name as an address (`mov.u64 %rd, kernel`, what device-side launches pass
    // to cudaGetParameterBufferV2) is the address of its descriptor
    // (`ptxr_runtime::abi::DeviceKernel`), filled in once every kernel is compiled.
    if !nvptx {
        for item in &ast.items {
            if let Item::Func(f) = item {
                if f.entry && f.body.is_some() && !m.globals.contains_key(f.name.name) {
                    let g = m.module.add_global(device_kernel_t(ctx), None, &format!("__ptxr_kdesc.{}", f.name.name));
                    g.set_initializer(&device_kernel_t(ctx).const_zero());
                    g.set_linkage(Linkage::Internal);
                    g.set_constant(true);
                    m.globals.insert(f.name.name, GlobalSym::Mem(g));
                }
            }
        }
    }
    let mut kernels = Vec::new();
    let mut deferred = Vec::new();
    for item in &ast.items {
        if let Item::Func(f) = item {
            if f.body.is_none() {
                continue;
            }
            match func::emit_function(&mut m, f) {
                Ok(Some(mut k)) => {
                    // The other versions the main version calls, if it has them: for narrow
                    // blocks (`warp::choose_narrow`), for rows of whole warps
                    // (`warp::whole_dispatch`), and the per-thread version a warp-path
                    // kernel falls back to.
                    let mut failed = false;
                    for suffix in [func::NARROW_VERSION, func::WHOLE_VERSION, func::THREAD_VERSION] {
                        let declared = m.module.get_function(&format!("{}{}", func::cta_symbol(f.name.name), suffix));
                        if !declared.map_or(false, |g| g.count_basic_blocks() == 0) {
                            continue;
                        }
                        let thread = suffix == func::THREAD_VERSION;
                        (m.thread_version, m.narrow_version, m.whole_version) = (thread, suffix == func::NARROW_VERSION, suffix == func::WHOLE_VERSION);
                        let t = func::emit_function(&mut m, f);
                        (m.thread_version, m.narrow_version, m.whole_version) = (false, false, false);
                        match t {
                            Ok(Some(t)) => {
                                k.frame_size = k.frame_size.max(t.frame_size);
                                k.uses_sync |= thread || t.uses_sync;
                            }
                            Ok(None) => {}
                            Err(d) => {
                                m.errors.push(d);
                                failed = true;
                                break;
                            }
                        }
                    }
                    if failed {
                        continue;
                    }
                    kernels.push(k)
                }
                Ok(None) => {}
                Err(d) if lenient => {
                    let line = m.lines.line(d.span.start as usize) as u32;
                    kernels.extend(func::emit_stub(&mut m, f, line));
                    deferred.push(d);
                }
                Err(d) => m.errors.push(d),
            }
        }
    }
    if !m.errors.is_empty() {
        return Err(m.errors);
    }
    if !nvptx {
        fill_device_kernels(&m, &kernels);
    }
    if let Err(e) = m.module.verify() {
        if let Some(path) = std::env::var_os("PTXR_DUMP_UNVERIFIED") {
            let _ = m.module.print_to_file(path);
        }
        return Err(vec![Diagnostic::error(ast::Span::default(), format!("internal error: generated LLVM IR does not verify: {}", e.to_string()))]);
    }
    Ok(Compiled { module: m.module, kernels, deferred })
}

/// `ptxr_runtime::abi::DeviceKernel`: CTA function, name, parameter bytes, static shared
/// memory, frame size, flags, `.reqntid`, `.maxntid`.
fn device_kernel_t(ctx: &Context) -> inkwell::types::StructType<'_> {
    let (pt, i32t) = (ctx.ptr_type(AddressSpace::default()), ctx.i32_type());
    ctx.struct_type(&[pt.into(), pt.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.array_type(3).into(), i32t.array_type(3).into()], false)
}

/// Fills in the descriptors of the compiled kernels (see `compile_with`).
fn fill_device_kernels(m: &ModCtx, kernels: &[KernelInfo]) {
    let ctx = m.ctx;
    let i32t = ctx.i32_type();
    for k in kernels {
        let (Some(g), Some(cta)) = (m.module.get_global(&format!("__ptxr_kdesc.{}", k.name)), m.module.get_function(&func::cta_symbol(&k.name))) else { continue };
        let name = ctx.const_string(k.name.as_bytes(), true);
        let ng = m.module.add_global(name.get_type(), None, &format!("__ptxr_kname.{}", k.name));
        ng.set_initializer(&name);
        ng.set_linkage(Linkage::Private);
        ng.set_constant(true);
        let dims = |d: Option<[u32; 3]>| i32t.const_array(&d.unwrap_or([0; 3]).map(|x| i32t.const_int(x as u64, false)));
        let flags = k.uses_sync as u64 | (k.cta_group as u64) << 1 | (k.reqntid.is_some() as u64) << 2 | (k.maxntid.is_some() as u64) << 3 | (k.cancellable as u64) << 4;
        let v = device_kernel_t(ctx).const_named_struct(&[
            cta.as_global_value().as_pointer_value().into(),
            ng.as_pointer_value().into(),
            i32t.const_int(k.param_size as u64, false).into(),
            i32t.const_int(k.static_smem as u64, false).into(),
            i32t.const_int(k.frame_size as u64, false).into(),
            i32t.const_int(flags, false).into(),
            dims(k.reqntid).into(),
            dims(k.maxntid).into(),
        ]);
        g.set_initializer(&v);
    }
}

pub(crate) fn collect_shared<'b, 'a>(body: &'b [ast::Stmt<'a>], out: &mut Vec<&'b ast::VarDecl<'a>>) {
    collect_space(body, &[StateSpace::Shared], out)
}

thread_local! {
    static CHECK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Compiles kernels on this thread from now on for the checking mode (`ptxr run --check`,
/// `ptxr_runtime::check`): before each `ld`, `st`, `atom` and `red` of global, shared or
/// generic memory the code asks the runtime whether the access lies inside memory the kernel
/// may reach.
pub fn set_check(on: bool) {
    CHECK.with(|c| c.set(on));
}

/// Whether [`set_check`] is on.
pub fn check() -> bool {
    CHECK.with(|c| c.get())
}

/// Whether any function of the module has an instruction for which `pred` holds.
fn any_instr(ast: &ast::Module, pred: &dyn Fn(&ast::Instr) -> bool) -> bool {
    fn walk(body: &[ast::Stmt], pred: &dyn Fn(&ast::Instr) -> bool) -> bool {
        body.iter().any(|s| match s {
            ast::Stmt::Instr(i) => pred(i),
            ast::Stmt::Block(b, _) => walk(b, pred),
            _ => false,
        })
    }
    ast.items.iter().any(|it| matches!(it, ast::Item::Func(f) if f.body.as_ref().is_some_and(|b| walk(b, pred))))
}

/// Whether the checking mode's race and initialization shadow sees every write of shared
/// memory and every synchronization of the module: not with bulk copies (`cp.async.bulk*`,
/// `cp.reduce.async.bulk*`: writes by the asynchronous proxy, completed through mbarriers),
/// mbarriers, `wgmma`, tensor memory, tensor maps made by the kernel or other CTAs' windows
/// (`mapa`). (`cp.async`, which ptxr completes as the issuing thread's write, it sees.)
fn shadow_sees_all(ast: &ast::Module) -> bool {
    !any_instr(ast, &|i| matches!(i.opcode.name, "mbarrier" | "wgmma" | "tcgen05" | "tensormap" | "mapa" | "clusterlaunchcontrol") || (i.opcode.name == "cp" && i.has_mod("bulk")))
}

/// Whether any function of the module reaches the shared memory of other CTAs of its
/// cluster: `mapa` or `getctarank`, a bulk copy with `.multicast::cluster`, a cancellation
/// response written to every CTA of the cluster (`.multicast::cluster::all`), CTA pairs
/// (`.cta_group::2`), or a kernel that declares its cluster (`.explicitcluster`,
/// `.reqnctapercluster`), which may reach a peer's window by the rank's bits of a
/// `.shared::cluster` address. Their shared addresses count from the cluster's rank-0 window
/// (`FnEmitter::shared_base`).
fn reaches_other_ctas(ast: &ast::Module) -> bool {
    let declares = ast.items.iter().any(|it| matches!(it, ast::Item::Func(f) if f.perf.iter().any(|d| matches!(d, ast::PerfDirective::ExplicitCluster | ast::PerfDirective::ReqNCtaPerCluster(_)))));
    declares || any_instr(ast, &|i| matches!(i.opcode.name, "mapa" | "getctarank") || i.has_mod("multicast::cluster") || i.has_mod("multicast::cluster::all") || i.has_mod("cta_group::2"))
}

/// Whether any function of the module cancels cluster launches
/// (`clusterlaunchcontrol.try_cancel`): its kernels are `KernelInfo::cancellable`.
fn issues_try_cancel(ast: &ast::Module) -> bool {
    any_instr(ast, &|i| i.opcode.name == "clusterlaunchcontrol" && i.has_mod("try_cancel"))
}

/// The variables of `spaces` a function body declares, in nested blocks too.
fn collect_space<'b, 'a>(body: &'b [ast::Stmt<'a>], spaces: &[StateSpace], out: &mut Vec<&'b ast::VarDecl<'a>>) {
    for s in body {
        match s {
            ast::Stmt::Var(v) if spaces.contains(&v.space) => out.push(v),
            ast::Stmt::Block(b, _) => collect_space(b, spaces, out),
            _ => {}
        }
    }
}

impl<'ctx, 'a> ModCtx<'ctx, 'a> {
    /// The LLVM address space of a `.global`/`.const` variable: the default one on the CPU;
    /// NVPTX's global 1 and const 4.
    fn var_space(&self, space: StateSpace) -> AddressSpace {
        match (self.nvptx, space) {
            (false, _) => AddressSpace::default(),
            (true, StateSpace::Global) => AddressSpace::from(1u16),
            (true, _) => AddressSpace::from(4u16),
        }
    }

    /// Defines a `.global`/`.const` variable as an LLVM global named `lname`: a module-scope
    /// one (`local: None`) under its name in `globals`, one declared inside a function in
    /// `fn_globals` (`local`). Initializers holding addresses wait for
    /// `define_address_globals`.
    fn define_global(&mut self, v: &'a ast::VarDecl<'a>, lname: &str, local: bool) {
        if let Some(d) = too_large(v) {
            self.errors.push(d);
            return;
        }
        if v.init.as_ref().map_or(false, has_address) {
            self.addr_inits.push((v, local.then(|| lname.to_string())));
            return;
        }
        // A `.texref`/`.surfref`/`.samplerref` variable is a descriptor (`ops_tex`);
        // its address is the handle.
        let is_ref = matches!(v.ty, ast::Type::TexRef | ast::Type::SurfRef | ast::Type::SamplerRef);
        let size = if is_ref { ops_tex::DESC_SIZE * decl_size(v).div_ceil(8).max(1) } else { decl_size(v).max(1) };
        let bytes = match &v.init {
            Some(_) if is_ref => {
                self.errors.push(Diagnostic::error(v.name.span, "initialized texture, surface and sampler references are not supported by ptxr; set the descriptor from the host (docs/textures.md)"));
                return;
            }
            Some(init) => match init_bytes(v, init, size) {
                Ok(b) => Some(b),
                Err(d) => {
                    self.errors.push(d);
                    return;
                }
            },
            None => None,
        };
        let arr_t = self.ctx.i8_type().array_type(size);
        let aspace = self.var_space(v.space);
        // Reference variables are found by the host under `__ptxr_ref_<name>` (it
        // binds them before a launch, docs/textures.md).
        let lname = if is_ref { format!("__ptxr_ref_{}", v.name.name) } else { lname.to_string() };
        let g = self.module.add_global(arr_t, Some(aspace), &lname);
        match bytes {
            Some(b) if b.iter().any(|&x| x != 0) => g.set_initializer(&self.ctx.const_string(&b, false)),
            _ => g.set_initializer(&arr_t.const_zero()),
        }
        g.set_alignment(decl_align(v).max(16));
        g.set_linkage(if is_ref && !self.nvptx { Linkage::External } else { Linkage::Internal });
        g.set_constant(v.space == StateSpace::Const && false);
        if local {
            self.fn_globals.insert(v as *const _, g);
        } else {
            self.globals.insert(v.name.name, GlobalSym::Mem(g));
        }
    }

    fn declare_globals(&mut self) {
        for item in &self.ast.items {
            let Item::Var(v) = item else { continue };
            match v.space {
                StateSpace::Shared if self.nvptx => {
                    let g = nvvm::shared_global(self, v, None);
                    self.globals.insert(v.name.name, GlobalSym::Mem(g));
                }
                StateSpace::Shared => {
                    self.shared_align = self.shared_align.max(decl_align(v).next_power_of_two());
                    if v.linkage == Some(ast::Linkage::Extern) {
                        // Dynamic shared memory: placed after the static window at launch.
                        self.globals.insert(v.name.name, GlobalSym::Shared(u32::MAX));
                        continue;
                    }
                    let off = align_up(self.shared_size, decl_align(v));
                    self.shared_size = off.saturating_add(decl_size(v));
                    self.globals.insert(v.name.name, GlobalSym::Shared(off));
                }
                StateSpace::Global | StateSpace::Const => {
                    let lname = v.name.name.to_string();
                    self.define_global(v, &lname, false);
                }
                _ => {}
            }
        }
    }
}

/// Whether an initializer holds the address of a variable or function (5.4.4: a name,
/// `generic(name)`, or either plus or minus a constant byte offset).
fn has_address(init: &ast::Init) -> bool {
    let mut flat = Vec::new();
    flatten(init, &mut flat);
    flat.iter().any(|e| eval(e, &|_| None).is_err() && address_expr(e).is_some())
}

/// An initializer element that is an address: the symbol and the byte offset.
fn address_expr<'a>(e: &ast::Expr<'a>) -> Option<(ast::Ident<'a>, i64)> {
    let int = |e: &ast::Expr| eval(e, &|_| None).ok().filter(|c| !matches!(c, Const::F32(_) | Const::F64(_))).map(|c| c.as_u64() as i64);
    match e {
        ast::Expr::Sym(id) | ast::Expr::Generic(id, _) => Some((*id, 0)),
        ast::Expr::Binary(ast::BinOp::Add, a, b, _) => match (address_expr(a), address_expr(b)) {
            (Some((s, o)), None) => Some((s, o.wrapping_add(int(b)?))),
            (None, Some((s, o))) => Some((s, o.wrapping_add(int(a)?))),
            _ => None,
        },
        ast::Expr::Binary(ast::BinOp::Sub, a, b, _) => {
            let (s, o) = address_expr(a)?;
            Some((s, o.wrapping_sub(int(b)?)))
        }
        _ => None,
    }
}

impl<'ctx, 'a> ModCtx<'ctx, 'a> {
    /// Defines the variables whose initializers hold addresses (PTX ISA 5.4.4). Addresses of
    /// `.global` and `.const` variables are host addresses here, the same value in their
    /// space and as generic addresses, so `foo`, `generic(foo)` and `generic(foo)+8` are the
    /// variable's address (plus the offset); a device function's name is the address that
    /// indirect calls take. Each such variable is a packed struct of its constant bytes and
    /// 64-bit address constants (LLVM relocates them); all are declared before any is
    /// initialized, so they may refer to each other.
    fn define_address_globals(&mut self) {
        let i8t = self.ctx.i8_type();
        let i64t = self.ctx.i64_type();
        let vars = std::mem::take(&mut self.addr_inits);
        // Layout: per variable, its fields (bytes, or an address slot) and their types.
        enum Field<'a> {
            Bytes(Vec<u8>),
            Addr(ast::Ident<'a>, i64),
        }
        let mut defs = Vec::new();
        for (v, local) in vars {
            let size = decl_size(v).max(1) as usize;
            let es = v.ty.size() as usize;
            let mut flat = Vec::new();
            flatten(v.init.as_ref().unwrap(), &mut flat);
            let mut bytes = vec![0u8; size];
            let mut addrs: Vec<(usize, ast::Ident<'a>, i64)> = Vec::new();
            let mut bad = None;
            for (k, e) in flat.iter().enumerate() {
                let off = k * es;
                if off + es > size {
                    bad = Some(Diagnostic::error(e.span(), "too many initializer values for the declared size"));
                    break;
                }
                if let Ok(c) = eval(e, &|_| None) {
                    if v.ty.is_float() {
                        bad = Some(Diagnostic::error(e.span(), "initializers mixing addresses and floating-point values are not supported"));
                        break;
                    }
                    bytes[off..off + es].copy_from_slice(&c.as_u64().to_le_bytes()[..es]);
                    continue;
                }
                match address_expr(e) {
                    Some((s, o)) if es == 8 && !v.ty.is_float() => addrs.push((off, s, o)),
                    Some(_) => {
                        bad = Some(Diagnostic::error(e.span(), format!("an address in an initializer needs a 64-bit integer variable (`.u64`/`.s64`/`.b64`), not `.{}`: addresses are 64 bits here", v.ty.as_str())));
                        break;
                    }
                    None => {
                        bad = Some(Diagnostic::error(e.span(), "initializer: not a constant, nor a variable or function address (plus or minus a constant)"));
                        break;
                    }
                }
            }
            if let Some(d) = bad {
                self.errors.push(d);
                continue;
            }
            let mut fields = Vec::new();
            let mut at = 0usize;
            for &(off, s, o) in &addrs {
                if off > at {
                    fields.push(Field::Bytes(bytes[at..off].to_vec()));
                }
                fields.push(Field::Addr(s, o));
                at = off + 8;
            }
            if at < size {
                fields.push(Field::Bytes(bytes[at..].to_vec()));
            }
            let types: Vec<inkwell::types::BasicTypeEnum> = fields
                .iter()
                .map(|f| match f {
                    Field::Bytes(b) => i8t.array_type(b.len() as u32).into(),
                    Field::Addr(..) => i64t.into(),
                })
                .collect();
            let st = self.ctx.struct_type(&types, true);
            let aspace = self.var_space(v.space);
            let g = self.module.add_global(st, Some(aspace), local.as_deref().unwrap_or(v.name.name));
            g.set_alignment(decl_align(v).max(16));
            g.set_linkage(Linkage::Internal);
            match local {
                Some(_) => {
                    self.fn_globals.insert(v as *const _, g);
                }
                None => {
                    self.globals.insert(v.name.name, GlobalSym::Mem(g));
                }
            }
            defs.push((g, fields));
        }
        for (g, fields) in defs {
            let mut vals: Vec<inkwell::values::BasicValueEnum> = Vec::new();
            for f in fields {
                match f {
                    Field::Bytes(b) => vals.push(self.ctx.const_string(&b, false).into()),
                    Field::Addr(s, o) => {
                        let p = match self.globals.get(s.name).copied() {
                            Some(GlobalSym::Mem(t)) => t.as_pointer_value(),
                            Some(GlobalSym::Func(fv)) => fv.as_global_value().as_pointer_value(),
                            Some(GlobalSym::Shared(_)) => {
                                self.errors.push(Diagnostic::error(s.span, format!("`{}` is a .shared variable; only .global and .const variables and functions may appear in initializers (PTX ISA 5.4.4)", s.name)));
                                continue;
                            }
                            None => {
                                self.errors.push(Diagnostic::error(s.span, format!("`{}` in an initializer is not a .global or .const variable or a device function of this module", s.name)));
                                continue;
                            }
                        };
                        let p = unsafe { p.const_gep(i8t, &[i64t.const_int(o as u64, true)]) };
                        vals.push(p.const_to_int(i64t).into());
                    }
                }
            }
            if vals.len() == g.get_value_type().into_struct_type().count_fields() as usize {
                g.set_initializer(&self.ctx.const_struct(&vals, true));
            }
        }
    }
}

/// Serializes an initializer (5.4.4) to little-endian bytes.
fn init_bytes(v: &ast::VarDecl, init: &ast::Init, size: u32) -> Result<Vec<u8>, Diagnostic> {
    let mut out = vec![0u8; size as usize];
    let mut flat = Vec::new();
    flatten(init, &mut flat);
    let es = v.ty.size() as usize;
    for (k, e) in flat.iter().enumerate() {
        let c = eval(e, &|_| None).map_err(|er| Diagnostic::error(er.span, format!("initializer: {} (an address is a variable or function name or `generic(name)`, plus or minus a constant)", er.msg)))?;
        let off = k * es;
        if off + es > out.len() {
            return Err(Diagnostic::error(e.span(), "too many initializer values for the declared size"));
        }
        let bits: u64 = match (v.ty.is_float(), c) {
            (true, Const::F64(f)) => match v.ty {
                Type::F32 => (f as f32).to_bits() as u64,
                Type::F16 => half_bits_f64(f) as u64,
                _ => f.to_bits(),
            },
            (true, Const::F32(f)) => match v.ty {
                Type::F64 => (f as f64).to_bits(),
                _ => f.to_bits() as u64,
            },
            (true, c) => match v.ty {
                Type::F32 => (c.as_u64() as i64 as f32).to_bits() as u64,
                _ => (c.as_u64() as i64 as f64).to_bits(),
            },
            (false, Const::F64(f)) => f.to_bits(),
            (false, Const::F32(f)) => f.to_bits() as u64,
            (false, c) => c.as_u64(),
        };
        // Constants are 64-bit (PTX ISA 4.5.1); a wider element (`.b128`) gets the value
        // extended by its sign when the constant is signed.
        let wide = match c {
            Const::S64(x) if x < 0 && !v.ty.is_float() => [0xffu8; 16],
            _ => [0u8; 16],
        };
        let mut elem = wide;
        elem[..8].copy_from_slice(&bits.to_le_bytes());
        out[off..off + es].copy_from_slice(&elem[..es.min(16)]);
    }
    Ok(out)
}

fn flatten<'b, 'a>(i: &'b ast::Init<'a>, out: &mut Vec<&'b ast::Expr<'a>>) {
    match i {
        ast::Init::Expr(e) => out.push(e),
        ast::Init::List(items, _) => items.iter().for_each(|x| flatten(x, out)),
    }
}

/// f64 → binary16 bits, rounded once to nearest even (no double rounding through f32).
pub fn half_bits_f64(f: f64) -> u16 {
    let x = f.to_bits();
    let sign = ((x >> 48) & 0x8000) as u16;
    let exp = ((x >> 52) & 0x7ff) as i64;
    let man = x & 0x000f_ffff_ffff_ffff;
    if exp == 0x7ff {
        return sign | 0x7c00 | if man != 0 { 0x200 | (man >> 42) as u16 } else { 0 };
    }
    if exp == 0 {
        // f64 subnormals are far below the smallest f16 subnormal.
        return sign;
    }
    let e = exp - 1023;
    // Value = 1.man × 2^e; f16 quanta are 2^(e-10) for normals, 2^-24 for subnormals.
    let m = man | (1u64 << 52);
    let shift = if e >= -14 { 52 - 10 } else { (52 - 10) + (-14 - e) };
    if shift >= 64 {
        return sign;
    }
    let shift = shift as u32;
    let half = 1u64 << (shift - 1);
    let rem = m & ((1u64 << shift) - 1);
    let mut q = m >> shift;
    if rem > half || (rem == half && q & 1 == 1) {
        q += 1;
    }
    // q holds the significand in f16 units; add the exponent field for normals.
    let bits = if e >= -14 { (((e + 15) as u64) << 10) + (q - (1 << 10)) } else { q };
    if bits >= 0x7c00 {
        return sign | 0x7c00;
    }
    sign | bits as u16
}

/// f32 → binary16 bits, round to nearest even.
pub fn half_bits(f: f32) -> u16 {
    let x = f.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let man = x & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 | (man >> 13) as u16 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rem = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rem > half || (rem == half && (r & 1) == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    if rem > 0x1000 || (rem == 0x1000 && (r & 1) == 1) {
        r += 1;
    }
    sign | r as u16
}

#[cfg(test)]
mod tests {
    use super::{half_bits, half_bits_f64};

    /// Every f16 value and every midpoint between neighbours (exact in f64) rounds as IEEE
    /// round-to-nearest-even says; the f32 path agrees where f32 is exact.
    #[test]
    fn f64_to_f16_rounds_once() {
        let val = |h: u16| -> f64 {
            let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
            let e = ((h >> 10) & 0x1f) as i32;
            let m = (h & 0x3ff) as f64;
            s * if e == 0 { m * 2f64.powi(-24) } else { (1.0 + m / 1024.0) * 2f64.powi(e - 15) }
        };
        for h in 0u16..0x7c00 {
            assert_eq!(half_bits_f64(val(h)), h);
            assert_eq!(half_bits_f64(-val(h)), h | 0x8000);
            assert_eq!(half_bits(val(h) as f32), h);
            let mid = (val(h) + val(h + 1)) / 2.0;
            let even = if h & 1 == 0 { h } else { h + 1 };
            assert_eq!(half_bits_f64(mid), even, "midpoint above {h:#x}");
            // Just above the midpoint rounds up (this is where rounding through f32 can fail).
            let above = mid + (val(h + 1) - val(h)) * 2f64.powi(-30);
            assert_eq!(half_bits_f64(above), h + 1);
        }
        assert_eq!(half_bits_f64(65520.0), 0x7c00);
        assert_eq!(half_bits_f64(65519.99), 0x7bff);
        assert_eq!(half_bits_f64(f64::INFINITY), 0x7c00);
        assert_eq!(half_bits_f64(1e-300), 0);
    }
}
