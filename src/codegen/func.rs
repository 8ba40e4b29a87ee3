//! Function emission from ptxr's IR (`crate::ir`): its blocks and terminators become LLVM
//! blocks and branches (`FnEmitter::walk`), each register variable an alloca that every one
//! of its SSA values shares (phi webs coalesced), plus operands, calls and the per-CTA thread
//! loop. Instruction families live in `ops_*.rs`; each exposes
//! `emit(&mut FnEmitter, &Instr)` for an IR instruction's parsed form (`ir::Inst::src`),
//! returning `Ok(true)` when it handled the instruction.

use super::abi::field;
use super::{decl_align, decl_size, GlobalSym, KernelInfo, ModCtx, ParamInfo};
use crate::syntax::ast::{self, Ident, Instr, Operand, Span, StateSpace, Stmt, Type};
use crate::syntax::diag::Diagnostic;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::intrinsics::Intrinsic;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum, IntType};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use std::collections::HashMap;

pub type R<T> = Result<T, Diagnostic>;

/// Where a named variable lives inside a function.
#[derive(Clone, Copy)]
pub enum VarLoc<'ctx> {
    /// Host address (locals, function `.param`s, globals).
    Ptr(PointerValue<'ctx>, Type),
    /// Offset in the CTA's shared window; `u32::MAX` = dynamic shared memory.
    Shared(u32, Type),
    /// Kernel parameter at this offset of the parameter buffer.
    KParam(u32, Type),
}

pub struct FnEmitter<'ctx, 'a, 'm> {
    pub(crate) m: &'m mut ModCtx<'ctx, 'a>,
    pub b: Builder<'ctx>,
    pub f: FunctionValue<'ctx>,
    pub fname: &'a str,
    pub cta: PointerValue<'ctx>,
    pub tid: [IntValue<'ctx>; 3],
    /// The registers looked up in the current scope (a cache of [`FnEmitter::reg`]).
    pub(crate) regs: HashMap<&'a str, (PointerValue<'ctx>, Type)>,
    /// The IR being lowered (the function's own, or a callee's while it is inlined).
    irs: IrState<'ctx, 'a>,
    pub vars: HashMap<&'a str, VarLoc<'ctx>>,
    labels: HashMap<&'a str, BasicBlock<'ctx>>,
    pub alloca_b: Builder<'ctx>,
    /// Where a thread goes when it finishes (`ret` in a kernel, `exit`).
    pub exit_bb: BasicBlock<'ctx>,
    /// Where `ret` goes (function epilogue in a `.func`, `exit_bb` in a kernel).
    pub ret_bb: BasicBlock<'ctx>,
    /// Where the CTA stops after a trap: returns the status.
    pub abort_bb: BasicBlock<'ctx>,
    /// The carry flag CC.CF of extended-precision arithmetic (9.7.2).
    pub carry: PointerValue<'ctx>,
    pub is_kernel: bool,
    /// Current instruction's span (for runtime error lines).
    pub span: Span,
    /// Set for kernels with synchronization: the thread scheduler's state.
    pub sync: Option<SyncState<'ctx>>,
    kparam_cache: HashMap<(u32, u32), IntValue<'ctx>>,
    /// NVPTX mode: the kernel's parameters copied into a buffer of the CPU layout (entry
    /// block), so that `ld.param` and parameter addresses work as on the CPU path.
    pub params_ptr: Option<PointerValue<'ctx>>,
    /// Functions being inlined at this point (calls to functions that synchronize).
    inlining: Vec<&'a str>,
    /// In a kernel with synchronization: the definitions evaluated again where their values
    /// are read (`lanes::remat`), and the registers read through them (by node index).
    remat: Vec<crate::lanes::remat::Node<'a>>,
    remat_single: HashMap<&'a str, usize>,
    /// Shuffles whose operand copies another register (`lanes::remat::Analysis::shfl_aliases`).
    pub(crate) shfl_alias: HashMap<*const Instr<'a>, &'a str>,
    /// Induction registers and their base nodes (`lanes::remat::Analysis::inductions`).
    pub(crate) remat_induction: HashMap<&'a str, usize>,
    /// Per node: its temporary, and the block where it was last evaluated.
    remat_tmp: Vec<Option<(PointerValue<'ctx>, Option<BasicBlock<'ctx>>)>>,
    /// Backward branches that are yield points (`lanes::lockstep`).
    pub(crate) yields: std::collections::HashSet<*const Instr<'a>>,
    /// The yield points of spin loops, which yield even after the threads diverged.
    pub(crate) spin_yields: std::collections::HashSet<*const Instr<'a>>,
    /// The volatile shared accesses since the last sync point on the way here: none
    /// (`Some(None)`), the last was a load or a store (`Some(Some(store))`), or unknown
    /// after a label (`None`); see [`FnEmitter::volatile_meets`].
    pub(crate) volatile_last: Option<Option<bool>>,
    /// The loop headers of yield points: label name -> the header block itself. `labels`
    /// maps these names to the loop's entry block instead, which resets the yield count
    /// (`lanes::lockstep::yield_then_branch`).
    yield_heads: HashMap<&'a str, BasicBlock<'ctx>>,
    /// Registers redirected while a node is emitted (consulted by `reg`).
    pub(crate) overrides: HashMap<&'a str, (PointerValue<'ctx>, Type)>,
    /// The base that host addresses are built from (see [`FnEmitter::space_ptr`]).
    mem_base: Option<(PointerValue<'ctx>, IntValue<'ctx>)>,
    /// The CTA's shared memory, loaded once in the entry block.
    shared_base: Option<PointerValue<'ctx>>,
    /// In a module that reaches other CTAs' windows (`ModCtx::dsmem`): the cluster's rank-0
    /// window, from which its shared addresses count, and this CTA's window's offset from it
    /// (see [`FnEmitter::shared_base`]); computed once in the entry block.
    cluster_window: Option<(PointerValue<'ctx>, IntValue<'ctx>)>,
    /// Launch geometry fields of `CtaCtx`, loaded once in the entry block.
    cta_cache: HashMap<(u32, Option<u32>), IntValue<'ctx>>,
    /// The launch's cancel word (`CtaCtx::host`, or a constant zero when it is null),
    /// computed once in the entry block ([`FnEmitter::poll_cancel`]).
    cancel_word: Option<PointerValue<'ctx>>,
    /// Whether the function takes the address of a variable it keeps in an alloca
    /// (`mov.u64 %rd, larr`, `cvta.local`); see `space_ptr`.
    alloca_escapes: bool,
    /// This function's `.local` variables: address and size (`isspacep.local`).
    pub(crate) local_ranges: Vec<(PointerValue<'ctx>, u32)>,
    /// Per emission of the body (the general copy, then each region copy in order): its
    /// variable maps per scope (its `.local` variables point into its own thread loop's
    /// frame), for code emitted into that copy afterwards (`copy_vars`).
    copy_scope_vars: Vec<Vec<Option<HashMap<&'a str, VarLoc<'ctx>>>>>,
    /// f32 registers whose NaN payloads are never observed (`ops_float::nan_insensitive`).
    nan_free: std::collections::HashSet<&'a str>,
    /// Latches of the loops over threads (marked parallel, see `passes::parallel_lanes`).
    pub lane_latches: Vec<BasicBlock<'ctx>>,
    /// Lane loops kept whole for the loop vectorizer (`passes::parallel_lanes::mark`).
    pub whole_lane_latches: Vec<BasicBlock<'ctx>>,
    /// Lane loops of the warp path: vectorized 32 lanes wide (`passes::parallel_lanes::mark`).
    pub warp_lane_latches: Vec<BasicBlock<'ctx>>,
    /// Serial lane loops of the warp path small enough to unroll fully.
    pub unroll_lane_latches: Vec<BasicBlock<'ctx>>,
    /// Lane loops left scalar (`llvm.loop.vectorize.enable` false: `passes::parallel_lanes::mark`).
    pub scalar_lane_latches: Vec<BasicBlock<'ctx>>,
    /// Whether the kernel declares its cluster shape (`.explicitcluster`,
    /// `.reqnctapercluster`): `%is_explicit_cluster`.
    pub explicit_cluster: bool,
    /// Set for kernels on the warp-vector path (`codegen::warp`).
    pub(crate) warp: Option<Box<super::warp::WarpState<'ctx>>>,
    /// On the warp path, the lane loop a warp matrix instruction (`mma`, `wmma.mma`,
    /// `ldmatrix`) is emitted in (`ops_wmma`): the one that hands over each lane's words,
    /// or the one that computes each lane's results from them.
    pub(crate) warp_exchange: Option<super::ops_wmma::WarpExchange<'ctx>>,
    /// A kernel's tensor memory and its allocation bitmap (`ops_tcgen05`), once used.
    pub(crate) tmem: Option<(PointerValue<'ctx>, PointerValue<'ctx>)>,
    /// The warp path's exchange arrays of the warp matrix instructions and for how many
    /// instructions of a batch they have room (`warp_collective::matrix`).
    pub(crate) mma_area: Option<(PointerValue<'ctx>, u32)>,
}

/// The IR function being lowered and where its variables live.
struct IrState<'ctx, 'a> {
    func: std::rc::Rc<crate::ir::Func<'a>>,
    /// Storage of each register variable, by (declaring scope, name): every value of the
    /// variable lives there (phi webs coalesced, see `ir`).
    slots: HashMap<(u32, &'a str), (PointerValue<'ctx>, Type)>,
    /// The scope of the instruction being emitted.
    scope: u32,
    /// Per scope: the scope whose variable map applies (the nearest one declaring
    /// non-register variables), and that map.
    var_owner: Vec<u32>,
    scope_vars: Vec<Option<HashMap<&'a str, VarLoc<'ctx>>>>,
    /// The scope whose variable map `FnEmitter::vars` holds.
    vars_owner: u32,
}

impl<'ctx, 'a> IrState<'ctx, 'a> {
    fn new(func: std::rc::Rc<crate::ir::Func<'a>>) -> Self {
        IrState { func, slots: HashMap::new(), scope: 1, var_owner: Vec::new(), scope_vars: Vec::new(), vars_owner: 1 }
    }
}

/// Emission state of a kernel with synchronization points (see `lanes`): a thread's `.local`
/// variables live in its frame, its registers are allocas saved to the frame at each sync
/// point where they are live, and the body is entered through a switch on the thread's
/// resume point.
pub struct SyncState<'ctx> {
    /// Builder positioned in the per-thread dispatch block, before its switch: frame
    /// addresses built here dominate the whole body.
    pub frame_b: Builder<'ctx>,
    pub frame_t: PointerValue<'ctx>,
    pub frame_size: u32,
    /// The largest alignment a `.local` variable in the frame asks for (at least 16): the
    /// frame stride is a multiple of it, and the runtime aligns the frames to the largest
    /// power of two dividing the frame size (`ptxr_runtime::frame_align`).
    pub frame_align: u32,
    /// The block that advances to the next thread.
    pub next_bb: BasicBlock<'ctx>,
    pub cases: Vec<(u32, BasicBlock<'ctx>)>,
    pub next_site: u32,
    pub body_bb: BasicBlock<'ctx>,
    pub frame_size_global: inkwell::values::GlobalValue<'ctx>,
    /// Every register of the kernel (allocas), with its LLVM type and size in bytes.
    pub regs: Vec<(PointerValue<'ctx>, BasicTypeEnum<'ctx>, u32)>,
    /// Per sync point emitted: the block that leaves for the scheduler (registers are saved
    /// before its terminator), the resume block (they are reloaded there), the thread index
    /// of the loop it belongs to, its site number and its copy (0: general, k: `fast[k-1]`).
    pub spills: Vec<(BasicBlock<'ctx>, BasicBlock<'ctx>, IntValue<'ctx>, u32, usize)>,
    /// The operand column of each shuffle site (site, byte offset per thread), after the
    /// fixed columns: a region copy that completes its shuffle itself reads it while the
    /// threads hand over the operands of their next shuffle (`lanes::finish_scheduler`).
    pub shfl_cols: Vec<(u32, u32)>,
    /// The site of the sync point emitted last (results are read at its resume point).
    pub last_site: u32,
    /// Each load of a collective's result at a resume point: copy (0: general), site, the
    /// load, and whether it is the predicate result.
    pub result_loads: Vec<(usize, u32, inkwell::values::InstructionValue<'ctx>, bool)>,
    /// Per shuffle site whose operand is a copy of a register (`lanes::remat::Analysis::shfl_aliases`):
    /// that register, which a thread resuming there can reload from the operand column.
    pub shfl_alias: Vec<(u32, PointerValue<'ctx>)>,
    /// Set by the shuffle being emitted, for `sync_point`.
    pub next_alias: Option<PointerValue<'ctx>>,
    /// Per entry of `spills`: the store of its site number to the SITE column.
    pub site_stores: Vec<inkwell::values::InstructionValue<'ctx>>,
    /// Per operand a sync point stores to its column: the site, the slot field and the store
    /// (`lanes::constant_fields` turns operands read from constant registers into site
    /// constants).
    pub field_stores: Vec<(u32, u32, inkwell::values::InstructionValue<'ctx>)>,
    /// Frame offset of the area through which `mma`/`wmma.mma`/`ldmatrix` exchange values
    /// between the lanes of a warp (ops_wmma::exchange).
    pub exchange_area: Option<u32>,
    /// Registers and frame slices in the order the general copy of the body created them;
    /// a region copy (see `lanes`) replays them, so that every copy of a register or a
    /// `.local` variable is the same storage.
    pub storage_log: Vec<Storage<'ctx>>,
    /// `Some(i)` while a region copy is emitted: the next storage request is `storage_log[i]`.
    pub replay: Option<usize>,
    /// In a region copy: the site whose resume block enters the copy, and that block once
    /// emitted.
    pub copy_site: u32,
    pub copy_entry: Option<BasicBlock<'ctx>>,
    /// Threads in the CTA, `%ntid`, the frames and the slots (set up before the loops).
    pub nthreads: IntValue<'ctx>,
    pub ntid: [IntValue<'ctx>; 3],
    pub frames: PointerValue<'ctx>,
    pub slots: PointerValue<'ctx>,
    /// Where the first pass starts; the block that calls the runtime's `resolve` after each
    /// pass (and its result); where the CTA ends.
    pub start_bb: BasicBlock<'ctx>,
    pub resolve_bb: BasicBlock<'ctx>,
    pub done_bb: BasicBlock<'ctx>,
    /// Region copies, by site.
    pub fast: Vec<(u32, crate::lanes::ThreadLoop<'ctx>)>,
    /// Per region copy (in the order of `fast`): its entry block and the `next`/`exit` blocks
    /// of its thread loop, which bound the copy's code.
    pub copies: Vec<(BasicBlock<'ctx>, BasicBlock<'ctx>, BasicBlock<'ctx>)>,
    /// The thread index (i64) of the thread loop being emitted.
    pub t64: IntValue<'ctx>,
    /// `%ntid` product as i64, and the start of the frames' column area (see `lanes`).
    pub nt64: IntValue<'ctx>,
    pub soa_base: PointerValue<'ctx>,
    /// Whether every thread was runnable when the current pass started (an entry-block
    /// alloca; LLVM keeps it in a register).
    pub all_run: PointerValue<'ctx>,
    /// Whether loops still yield at their backward branches (`lanes::lockstep`); cleared
    /// for the rest of the CTA once its threads diverge.
    pub yield_on: PointerValue<'ctx>,
    /// The thread's count of backward branches taken at a yield point since it entered the
    /// loop or resumed in it; it yields at `lockstep::YIELD_EVERY` (a register of the
    /// scheduler, never live across a sync point: set to zero where a yield loop is entered).
    pub yield_count: Option<PointerValue<'ctx>>,
    /// Per sync site (index site-1): what the site asks of the runtime.
    pub sites: Vec<crate::lanes::SiteInfo>,
    /// Whether the kernel has `bar.arrive` (its arrivals are counted by the runtime).
    pub has_arrive: bool,
    /// The general loop (its dispatch switches on the thread's resume point).
    pub general: Option<crate::lanes::ThreadLoop<'ctx>>,
}

#[derive(Clone, Copy)]
pub enum Storage<'ctx> {
    Reg(PointerValue<'ctx>),
    Frame(u32),
}

pub fn int_t<'ctx>(ctx: &'ctx inkwell::context::Context, bits: u32) -> IntType<'ctx> {
    match bits {
        1 => ctx.bool_type(),
        8 => ctx.i8_type(),
        16 => ctx.i16_type(),
        32 => ctx.i32_type(),
        64 => ctx.i64_type(),
        128 => ctx.i128_type(),
        n => ctx.custom_width_int_type(std::num::NonZeroU32::new(n.max(1)).unwrap()).expect("integer width"),
    }
}

/// Storage type of a register of type `ty`.
pub fn reg_t<'ctx>(ctx: &'ctx inkwell::context::Context, ty: Type) -> IntType<'ctx> {
    if ty == Type::Pred {
        ctx.bool_type()
    } else {
        int_t(ctx, ty.bits())
    }
}

/// Declares the LLVM function of a `.func`: `(ctx*, tid.x, tid.y, tid.z, ptr per ret, ptr per param)`.
/// In NVPTX mode only the pointers: the callee reads its own special registers.
pub(crate) fn declare_func<'ctx>(m: &mut ModCtx<'ctx, '_>, f: &ast::Function) -> FunctionValue<'ctx> {
    let ptr = m.ctx.ptr_type(AddressSpace::default());
    let i32t = m.ctx.i32_type();
    let mut args: Vec<BasicMetadataTypeEnum> = if m.nvptx { Vec::new() } else { vec![ptr.into(), i32t.into(), i32t.into(), i32t.into()] };
    for _ in f.rets.iter().chain(f.params.iter()) {
        args.push(ptr.into());
    }
    let fnt = m.ctx.void_type().fn_type(&args, false);
    let name = if m.nvptx { f.name.name.to_string() } else { format!("__ptxr_fn_{}", f.name.name) };
    m.module.add_function(&name, fnt, Some(inkwell::module::Linkage::Internal))
}

/// The LLVM type of [`super::abi::CtaCtx`].
/// The most CTAs a cluster may have: 16, the non-portable size an H100 allows (8 without
/// opting in to it).
pub const MAX_CLUSTER_CTAS: u32 = 16;

pub fn cta_struct_type(c: &inkwell::context::Context) -> inkwell::types::StructType<'_> {
    let p = c.ptr_type(AddressSpace::default());
    let i32t = c.i32_type();
    let a3 = i32t.array_type(3);
    c.struct_type(&[p.into(), p.into(), a3.into(), a3.into(), a3.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), p.into(), p.into(), i32t.into(), i32t.into(), p.into(), p.into(), p.into(), i32t.into(), p.into(), p.into()], false)
}

/// Replaces the body of `f` (CPU code), whose code generation failed with an error at source
/// line `line`, by one that stops the CTA with `STATUS_UNSUPPORTED` at that line: the other
/// kernels of the module still run (`ptxr run`), and launching this one (or a kernel that
/// calls this function) reports the error. Returns the kernel's launch information.
pub(crate) fn emit_stub<'ctx>(m: &mut ModCtx<'ctx, '_>, f: &ast::Function, line: u32) -> Option<KernelInfo> {
    let ctx = m.ctx;
    let i32t = ctx.i32_type();
    let (func, info) = if f.entry {
        let name = format!("__ptxr_cta_{}", f.name.name);
        let func = m.module.get_function(&name).unwrap_or_else(|| m.module.add_function(&name, i32t.fn_type(&[ctx.ptr_type(AddressSpace::default()).into()], false), None));
        (func, Some(kernel_layout(f)))
    } else {
        match m.globals.get(f.name.name) {
            Some(GlobalSym::Func(fv)) => (*fv, None),
            _ => return None,
        }
    };
    // A kernel with synchronization declares its frame size before its body is emitted
    // (`lanes`); the stub has no frames.
    if let Some(g) = m.module.get_global(&format!("__ptxr_frame_size_{}", f.name.name)) {
        if g.get_initializer().is_none() {
            g.set_initializer(&ctx.i64_type().const_zero());
            g.set_linkage(inkwell::module::Linkage::Internal);
        }
    }
    for bb in func.get_basic_blocks() {
        // SAFETY: the blocks belong to `func`, which nothing else is building now; the
        // instructions that reference them are deleted with them.
        unsafe { bb.delete() }.ok();
    }
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(func, "unsupported"));
    let cta = func.get_nth_param(0).expect("CTA context parameter").into_pointer_value();
    let t = cta_struct_type(ctx);
    let status = i32t.const_int(super::abi::STATUS_UNSUPPORTED as u64, false);
    b.build_store(b.build_struct_gep(t, cta, field::STATUS, "").unwrap(), status).unwrap();
    b.build_store(b.build_struct_gep(t, cta, field::STATUS_LINE, "").unwrap(), i32t.const_int(line as u64, false)).unwrap();
    if f.entry {
        b.build_return(Some(&status)).unwrap();
    } else {
        b.build_return(None).unwrap();
    }
    info
}

/// Emits a function definition; for a kernel, returns its launch information.
pub(crate) fn emit_function<'ctx, 'a>(m: &mut ModCtx<'ctx, 'a>, f: &'a ast::Function<'a>) -> R<Option<KernelInfo>> {
    let ctx = m.ctx;
    let body = f.body.as_ref().expect("definition");
    let ptr_t = ctx.ptr_type(AddressSpace::default());
    let i32t = ctx.i32_type();
    let (func, kernel_info) = if f.entry && m.nvptx {
        let info = kernel_layout(f);
        (super::nvvm::declare_kernel(m, f, &info), Some(info))
    } else if f.entry {
        let fnt = i32t.fn_type(&[ptr_t.into()], false);
        let name = if m.thread_version {
            format!("{}{}", cta_symbol(f.name.name), THREAD_VERSION)
        } else if m.narrow_version {
            format!("{}{}", cta_symbol(f.name.name), NARROW_VERSION)
        } else if m.whole_version {
            format!("{}{}", cta_symbol(f.name.name), WHOLE_VERSION)
        } else {
            cta_symbol(f.name.name)
        };
        let func = m.module.get_function(&name).unwrap_or_else(|| m.module.add_function(&name, fnt, None));
        if m.thread_version {
            // Taken only by block shapes whose rows are not warps (a rare launch): kept out
            // of the warp version and compiled without optimization, so that it costs little
            // compile time.
            func.set_linkage(inkwell::module::Linkage::Internal);
            for a in ["noinline", "optnone", "cold"] {
                func.add_attribute(inkwell::attributes::AttributeLoc::Function, ctx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id(a), 0));
            }
        } else if m.narrow_version || m.whole_version {
            // Called by the main version for blocks at most 16 threads wide, or whose rows are
            // whole warps; not inlined into it.
            func.set_linkage(inkwell::module::Linkage::Internal);
            func.add_attribute(inkwell::attributes::AttributeLoc::Function, ctx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id("noinline"), 0));
        }
        (func, Some(kernel_layout(f)))
    } else {
        match m.globals.get(f.name.name) {
            Some(GlobalSym::Func(fv)) => (*fv, None),
            _ => return Err(Diagnostic::error(f.name.span, "internal error: function not declared")),
        }
    };
    let irf = match m.ir.get(f.name.name) {
        Some(Ok(irf)) => irf.clone(),
        Some(Err(d)) => return Err(d.clone()),
        None => return Err(Diagnostic::error(f.name.span, "internal error: no IR for this function")),
    };
    let entry = ctx.append_basic_block(func, "entry");
    let b = ctx.create_builder();
    let alloca_b = ctx.create_builder();
    alloca_b.position_at_end(entry);
    // NVPTX mode has no CTA context: nothing may read it there (a null pointer).
    let cta = if m.nvptx { ptr_t.const_null() } else { func.get_nth_param(0).unwrap().into_pointer_value() };
    let abort_bb = ctx.append_basic_block(func, "abort");
    let carry;
    {
        carry = alloca_b.build_alloca(ctx.bool_type(), "cc.cf").unwrap();
    }
    let mut e = FnEmitter {
        m,
        b,
        f: func,
        fname: f.name.name,
        cta,
        tid: [i32t.const_zero(); 3],
        regs: HashMap::new(),
        irs: IrState::new(irf),
        vars: HashMap::new(),
        labels: HashMap::new(),
        alloca_b,
        exit_bb: entry,
        ret_bb: entry,
        abort_bb,
        carry,
        is_kernel: f.entry,
        span: f.span,
        sync: None,
        kparam_cache: HashMap::new(),
        params_ptr: None,
        inlining: Vec::new(),
        remat: Vec::new(),
        remat_single: HashMap::new(),
        remat_induction: HashMap::new(),
        shfl_alias: HashMap::new(),
        remat_tmp: Vec::new(),
        yields: std::collections::HashSet::new(),
        spin_yields: std::collections::HashSet::new(),
        volatile_last: Some(None),
        yield_heads: HashMap::new(),
        overrides: HashMap::new(),
        mem_base: None,
        shared_base: None,
        cluster_window: None,
        cta_cache: HashMap::new(),
        cancel_word: None,
        alloca_escapes: false,
        local_ranges: Vec::new(),
        copy_scope_vars: Vec::new(),
        nan_free: std::collections::HashSet::new(),
        lane_latches: Vec::new(),
        whole_lane_latches: Vec::new(),
        warp_lane_latches: Vec::new(),
        unroll_lane_latches: Vec::new(),
        scalar_lane_latches: Vec::new(),
        explicit_cluster: f.perf.iter().any(|d| matches!(d, ast::PerfDirective::ExplicitCluster | ast::PerfDirective::ReqNCtaPerCluster(_))),
        warp: None,
        warp_exchange: None,
        tmem: None,
        mma_area: None,
    };
    if let Some(ast::PerfDirective::ReqNCtaPerCluster(d)) = f.perf.iter().find(|d| matches!(d, ast::PerfDirective::ReqNCtaPerCluster(_))) {
        let n = d.iter().map(|&x| x as u64).product::<u64>();
        if n == 0 || n > MAX_CLUSTER_CTAS as u64 {
            return Err(Diagnostic::error(f.name.span, format!("`{}` asks for clusters of {n} CTAs (.reqnctapercluster); a cluster has 1 to {MAX_CLUSTER_CTAS}", f.name.name)));
        }
    }
    // Abort path: a kernel returns its status, a function just returns (the caller checks).
    e.b.position_at_end(abort_bb);
    if f.entry && e.m.nvptx {
        e.b.build_return(None).unwrap();
    } else if f.entry {
        let st = e.load_cta_u32(field::STATUS, None);
        e.b.build_return(Some(&st)).unwrap();
    } else {
        e.b.build_return(None).unwrap();
    }
    let setup = ctx.append_basic_block(func, "setup");
    e.b.position_at_end(setup);
    let mut ret_copies: Vec<(PointerValue<'ctx>, &'a ast::VarDecl<'a>)> = Vec::new();
    if let Some(info) = &kernel_info {
        for (p, pi) in f.params.iter().zip(info.params.iter()) {
            e.vars.insert(p.name.name, VarLoc::KParam(pi.offset, p.ty));
        }
        let warp = if e.m.nvptx { None } else { warp_plan(&e, f, body) };
        // Narrow blocks run the kernel's version for them when it has one
        // (`codegen::warp::narrow_dispatch`); the code below runs the other shapes.
        let setup = match narrow_plan(&e, f, body) {
            Some(layout) => super::warp::narrow_dispatch(&mut e, layout),
            None => setup,
        };
        if e.m.nvptx {
            super::nvvm::kernel_prologue(&mut e, info)?;
        } else if let Some(plan) = warp {
            super::warp::setup(&mut e, setup, plan);
        } else if crate::lanes::needs_scheduler(body, &e.m.sync_funcs) {
            crate::lanes::setup_scheduler(&mut e, setup, &f.name.name)?;
            let params: std::collections::HashSet<&str> = f.params.iter().map(|p| p.name.name).collect();
            let a = crate::lanes::remat::analyze(body, &params);
            (e.remat, e.remat_single, e.remat_induction, e.shfl_alias) = (a.nodes, a.single, a.inductions, a.shfl_aliases);
            e.remat_tmp = vec![None; e.remat.len()];
            (e.yields, e.spin_yields) = crate::lanes::lockstep::yield_branches(body, crate::lanes::MAX_COPY_SITES, crate::lanes::MAX_COPY_INSTRUCTIONS);
            if !e.yields.is_empty() || crate::lanes::calls_spin_loop(body, e.m.ast) {
                let c = e.alloca_b.build_alloca(ctx.i32_type(), "yield.count").unwrap();
                let st = e.sync.as_mut().unwrap();
                st.regs.push((c, ctx.i32_type().into(), 4));
                st.yield_count = Some(c);
            }
        } else {
        // Thread loops over z, y, x of the CTA.
        let ntx = e.load_cta_u32(field::NTID, Some(0));
        let l = crate::lanes::cta_loops(&mut e, setup, ntx, "tid.x");
        e.tid = [l.inner, l.y, l.z];
        e.lane_latches.push(l.latch);
        e.exit_bb = l.latch;
        e.ret_bb = l.latch;
        e.b.position_at_end(l.body);
        }
    } else {
        let mut idx = 0;
        if !e.m.nvptx {
            for k in 0..3 {
                e.tid[k] = func.get_nth_param(1 + k as u32).unwrap().into_int_value();
            }
            idx = 4;
        }
        for r in &f.rets {
            let p = func.get_nth_param(idx).unwrap().into_pointer_value();
            idx += 1;
            if r.space == StateSpace::Reg {
                e.new_reg(0, r.name.name, r.ty);
                ret_copies.push((p, r));
            } else {
                e.vars.insert(r.name.name, VarLoc::Ptr(p, r.ty));
            }
        }
        for prm in &f.params {
            let p = func.get_nth_param(idx).unwrap().into_pointer_value();
            idx += 1;
            if prm.space == StateSpace::Reg {
                let slot = e.new_reg(0, prm.name.name, prm.ty);
                let t = reg_t(ctx, prm.ty);
                let v = e.b.build_load(t, p, "").unwrap();
                e.b.build_store(slot, v).unwrap();
            } else {
                e.vars.insert(prm.name.name, VarLoc::Ptr(p, prm.ty));
            }
        }
        let epi = ctx.append_basic_block(func, "epilogue");
        e.ret_bb = epi;
        e.exit_bb = epi;
        let body_bb = ctx.append_basic_block(func, "body");
        e.b.build_unconditional_branch(body_bb).unwrap();
        e.b.position_at_end(epi);
        for (p, r) in &ret_copies {
            let (slot, t) = e.irs.slots[&(0, r.name.name)];
            let v = e.b.build_load(reg_t(ctx, t), slot, "").unwrap();
            e.b.build_store(*p, v).unwrap();
        }
        e.b.build_return(None).unwrap();
        e.b.position_at_end(body_bb);
    }
    if !f.entry && !e.m.nvptx && e.m.sync_funcs.contains(f.name.name) {
        // A function that synchronizes is inlined into the kernels that call it; this copy
        // is reached only through a function pointer, where its sync points could not return
        // to a kernel's scheduler.
        e.span = f.name.span;
        e.abort_with(super::abi::STATUS_SYNC_INDIRECT);
    } else {
        let vars = e.vars.clone();
        e.alloca_escapes = alloca_escapes(f, body);
        let rets: Vec<&str> = f.rets.iter().map(|r| r.name.name).collect();
        e.nan_free = super::ops_float::nan_insensitive(body, &rets);
        e.body()?;
        // The region copies of a kernel with synchronization (see `lanes`): the same body
        // again per resume point, each in a thread loop of its own, with fresh labels and
        // scopes (its storage is replayed).
        let copy = |e: &mut FnEmitter<'ctx, 'a, '_>, site: u32| -> R<()> {
            let start = crate::lanes::begin_copy(e, site);
            e.regs.clear();
            e.irs.slots.clear();
            e.vars = vars.clone();
            e.b.position_at_end(start);
            e.body()?;
            crate::lanes::end_copy(e);
            Ok(())
        };
        if let Some(sites) = crate::lanes::wants_copies(&e) {
            for site in 0..=sites {
                copy(&mut e, site)?;
            }
        }
    }
    // Falling off the end finishes the thread.
    if e.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_none()) {
        e.b.build_unconditional_branch(e.ret_bb).unwrap();
    }
    e.alloca_b.position_at_end(entry);
    e.alloca_b.build_unconditional_branch(setup).unwrap();
    let warp_frame = super::warp::finish(&mut e);
    let cta_group = e.warp.as_ref().map_or(false, |w| w.cta_group);
    let frame_size = warp_frame.unwrap_or_else(|| crate::lanes::finish_scheduler(&mut e));
    if !e.m.nvptx {
        let width = if e.warp.as_ref().map_or(false, |w| w.tile || w.short) { 16 } else { 32 };
        crate::passes::parallel_lanes::mark(ctx, func, &e.lane_latches, &e.whole_lane_latches, &e.warp_lane_latches, &e.unroll_lane_latches, &e.scalar_lane_latches, width, e.warp.is_some());
    }
    Ok(kernel_info.map(|mut k| {
        k.static_smem = e.m.shared_size + if e.m.shared_align > 16 { e.m.shared_align - 16 } else { 0 };
        k.frame_size = frame_size;
        k.uses_sync = e.sync.is_some() || warp_frame.is_some();
        k.cta_group = cta_group;
        k.cancellable = e.m.cancels;
        (k.shared_bytes, k.local_bytes) = declared_bytes(e.m.ast, body);
        k
    }))
}

/// The symbol of kernel `name`'s CTA function.
pub(crate) fn cta_symbol(name: &str) -> String {
    format!("__ptxr_cta_{name}")
}

/// Suffix of the per-thread version of a warp-path kernel ([`ModCtx::thread_version`]).
pub(crate) const THREAD_VERSION: &str = ".thread";

/// Suffix of the version of a kernel for narrow blocks ([`ModCtx::narrow_version`]).
pub(crate) const NARROW_VERSION: &str = ".narrow";

/// Suffix of the version of a kernel for rows of whole warps ([`ModCtx::whole_version`]).
pub(crate) const WHOLE_VERSION: &str = ".whole";

/// The warp-vector plan of kernel `f`, when it takes that path (`codegen::warp`): for warps
/// that are rows of the block, or in its version for narrow blocks, rows of at most 16 threads
/// or pairs of rows of 16 (`codegen::warp::choose_narrow`).
fn warp_plan(e: &FnEmitter, f: &ast::Function, body: &[ast::Stmt]) -> Option<super::warp::Plan> {
    if !f.entry || e.m.nvptx || e.m.thread_version {
        return None;
    }
    if e.m.narrow_version {
        return super::warp::choose_narrow(&e.irs.func, body, &e.m.sync_funcs, super::warp::exec()).ok();
    }
    super::warp::choose(&e.irs.func, body, &e.m.sync_funcs, super::warp::exec()).ok().map(|mut p| {
        p.whole_rows = e.m.whole_version || super::warp::whole_rows(f);
        p
    })
}

/// The warps of kernel `f`'s version for narrow blocks, if it gets one
/// (`codegen::warp::choose_narrow`).
fn narrow_plan(e: &FnEmitter, f: &ast::Function, body: &[ast::Stmt]) -> Option<super::warp::Layout> {
    if !f.entry || e.m.nvptx || e.m.thread_version || e.m.narrow_version || e.m.whole_version {
        return None;
    }
    if super::warp::never_narrow(f) {
        return None;
    }
    super::warp::choose_narrow(&e.irs.func, body, &e.m.sync_funcs, super::warp::exec()).ok().map(|p| p.uni.layout)
}

/// (static `.shared` bytes of the module's variables and the kernel's own, `.local` bytes of
/// the kernel's own), each variable at its alignment, as declared.
fn declared_bytes(ast: &ast::Module, body: &[ast::Stmt]) -> (u32, u32) {
    let add = |total: u64, v: &ast::VarDecl| -> u64 {
        let a = decl_align(v) as u64;
        (total + a - 1) / a * a + super::decl_size_exact(v)
    };
    let mut shared = 0u64;
    for item in &ast.items {
        if let ast::Item::Var(v) = item {
            if v.space == StateSpace::Shared && v.linkage != Some(ast::Linkage::Extern) {
                shared = add(shared, v);
            }
        }
    }
    let mut own = Vec::new();
    super::collect_space(body, &[StateSpace::Shared, StateSpace::Local], &mut own);
    let mut local = 0u64;
    for v in own {
        match v.space {
            StateSpace::Shared if v.linkage != Some(ast::Linkage::Extern) => shared = add(shared, v),
            StateSpace::Local => local = add(local, v),
            _ => {}
        }
    }
    (shared.min(u32::MAX as u64) as u32, local.min(u32::MAX as u64) as u32)
}

/// Parameter buffer layout of a kernel: each parameter at its natural (or declared) alignment.
fn kernel_layout(f: &ast::Function) -> KernelInfo {
    let mut off = 0u32;
    let mut params = Vec::new();
    for p in &f.params {
        let size = decl_size(p).max(1);
        let align = p.align.or(p.ptr.as_ref().and(Some(8))).unwrap_or(p.ty.size() * p.vector.unwrap_or(1) as u32).max(1).min(16);
        off = (off + align - 1) / align * align;
        let count = if p.dims.is_empty() { 1 } else { p.dims.iter().map(|d| d.unwrap_or(0) as u32).product() };
        params.push(ParamInfo { name: p.name.name.to_string(), ty: p.ty, count, offset: off, size, align, is_ptr: p.ptr.is_some() });
        off += size;
    }
    let dims3 = |d: &[u32]| [d.first().copied().unwrap_or(1), d.get(1).copied().unwrap_or(1), d.get(2).copied().unwrap_or(1)];
    let mut reqntid = None;
    let mut maxntid = None;
    let mut cluster = None;
    for d in &f.perf {
        match d {
            ast::PerfDirective::ReqNTid(v) => reqntid = Some(dims3(v)),
            ast::PerfDirective::MaxNTid(v) => maxntid = Some(dims3(v)),
            ast::PerfDirective::ReqNCtaPerCluster(v) => cluster = Some(dims3(v)),
            _ => {}
        }
    }
    KernelInfo { name: f.name.name.to_string(), params, param_size: off, static_smem: 0, reqntid, maxntid, cluster, frame_size: 0, uses_sync: false, cta_group: false, cancellable: false, shared_bytes: 0, local_bytes: 0 }
}

impl<'ctx, 'a, 'm> FnEmitter<'ctx, 'a, 'm> {
    pub fn ctx(&self) -> &'ctx inkwell::context::Context {
        self.m.ctx
    }

    pub fn err(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(span, msg)
    }

    /// 1-based source line of the current instruction.
    pub fn line(&self) -> u32 {
        self.m.lines.line(self.span.start as usize) as u32
    }

    /// Whether a field of the launch context has been read through the entry-block cache.
    pub(crate) fn cta_cached(&self, fld: u32) -> bool {
        self.cta_cache.keys().any(|(f, _)| *f == fld)
    }

    /// Makes `v` the value of field `fld[idx]` for the code emitted from here (the `%ctaid`
    /// of a warp in a group of CTAs, `warp::group_cta`).
    pub(crate) fn set_cta_cached(&mut self, fld: u32, idx: u32, v: IntValue<'ctx>) {
        self.cta_cache.insert((fld, Some(idx)), v);
    }

    /// Component `d` of `CtaCtx::ctaid` as the runtime wrote it: loaded in the entry block,
    /// before any warp of a group of CTAs overwrites it.
    pub(crate) fn group_first_ctaid(&mut self, d: u32) -> IntValue<'ctx> {
        let p = self.cta_field_ptr_at(&self.alloca_b, field::CTAID, Some(d));
        self.alloca_b.build_load(self.ctx().i32_type(), p, "ctaid.first").unwrap().into_int_value()
    }

    pub fn load_cta_u32(&mut self, fld: u32, idx: Option<u32>) -> IntValue<'ctx> {
        let i32t = self.ctx().i32_type();
        // Launch geometry does not change during a CTA; status does. Geometry is loaded once,
        // in the entry block: a load at the use would be a per-lane masked gather where the
        // use sits in conditional code of a vectorized thread loop.
        if !matches!(fld, field::STATUS | field::STATUS_LINE | field::STATUS_THREAD) {
            if let Some(v) = self.cta_cache.get(&(fld, idx)) {
                return *v;
            }
            let p = self.cta_field_ptr_at(&self.alloca_b, fld, idx);
            let v = self.alloca_b.build_load(i32t, p, "").unwrap();
            self.invariant(v);
            self.cta_cache.insert((fld, idx), v.into_int_value());
            return v.into_int_value();
        }
        let p = self.cta_field_ptr(fld, idx);
        self.b.build_load(i32t, p, "").unwrap().into_int_value()
    }

    /// Loads a kernel parameter (`ld.param` of a kernel's own parameter) once, in the entry
    /// block: parameters cannot change during a launch, and a load there dominates every
    /// use, so the thread loops see a loop-invariant value. 64-bit parameters are loaded as
    /// pointers (then converted), which keeps their provenance visible to LLVM.
    pub fn kparam_load(&mut self, offset: u32, bits: u32) -> IntValue<'ctx> {
        if let Some(v) = self.kparam_cache.get(&(offset, bits)) {
            return *v;
        }
        let c = self.ctx();
        let t = self.cta_type();
        let pt = c.ptr_type(AddressSpace::default());
        let b = &self.alloca_b;
        let base = match self.params_ptr {
            Some(p) => p,
            None => {
                let fp = b.build_struct_gep(t, self.cta, field::PARAMS, "").unwrap();
                b.build_load(pt, fp, "params").unwrap().into_pointer_value()
            }
        };
        let p = unsafe { b.build_in_bounds_gep(c.i8_type(), base, &[c.i64_type().const_int(offset as u64, false)], "").unwrap() };
        let v = if bits == 64 {
            let l = b.build_load(pt, p, "").unwrap();
            let _ = l.as_instruction_value().unwrap().set_alignment(1);
            b.build_ptr_to_int(l.into_pointer_value(), c.i64_type(), "").unwrap()
        } else {
            let l = b.build_load(int_t(c, bits), p, "").unwrap();
            let _ = l.as_instruction_value().unwrap().set_alignment(1);
            l.into_int_value()
        };
        self.kparam_cache.insert((offset, bits), v);
        v
    }

    /// If `op` is `[kparam]` / `[kparam+off]` of this kernel, its byte offset in the buffer.
    pub fn kparam_offset(&self, op: &Operand<'a>) -> Option<u32> {
        let Operand::Mem(a) = op else { return None };
        let base = a.base?;
        match self.vars.get(base.name) {
            Some(VarLoc::KParam(off, _)) if a.offset >= 0 => Some(off + a.offset as u32),
            _ => None,
        }
    }

    /// Marks a load as reading memory that does not change while the CTA runs (launch
    /// context, kernel parameters), so LLVM may hoist it out of the thread loops.
    pub fn invariant(&self, v: BasicValueEnum<'ctx>) {
        if let Some(inst) = v.as_instruction_value() {
            let kind = self.ctx().get_kind_id("invariant.load");
            let _ = inst.set_metadata(self.ctx().metadata_node(&[]), kind);
        }
    }

    pub fn cta_field_ptr(&mut self, fld: u32, idx: Option<u32>) -> PointerValue<'ctx> {
        self.cta_field_ptr_at(&self.b, fld, idx)
    }

    /// `cta_field_ptr`, built with `b`.
    fn cta_field_ptr_at(&self, b: &Builder<'ctx>, fld: u32, idx: Option<u32>) -> PointerValue<'ctx> {
        let i32t = self.ctx().i32_type();
        let p = b.build_struct_gep(self.cta_type(), self.cta, fld, "").unwrap();
        match idx {
            Some(k) => unsafe { b.build_in_bounds_gep(i32t, p, &[i32t.const_int(k as u64, false)], "").unwrap() },
            None => p,
        }
    }

    /// The builder of the entry block (allocas, hoisted loads).
    pub fn alloca_builder(&self) -> &Builder<'ctx> {
        &self.alloca_b
    }

    /// The kernel parameter buffer.
    /// Whether `.param` addresses here are a kernel's parameters (not a function's).
    pub(crate) fn kernel_param_space(&self) -> bool {
        self.vars.values().any(|v| matches!(v, VarLoc::KParam(..)))
    }

    pub(crate) fn params_base(&mut self) -> PointerValue<'ctx> {
        match self.params_ptr {
            Some(p) => p,
            None => self.cta_ptr_field(field::PARAMS),
        }
    }

    /// The CTA's shared memory window (`CtaCtx::shared`), loaded in the entry block: a load
    /// inside a lane loop would be a per-lane masked load once the loop is vectorized.
    /// Starts the internal helper function `name` of type `fn_t` (`nounwind`, `noinline`: one
    /// body per instruction form, called at each site) with the builder at its entry block;
    /// [`FnEmitter::end_helper`] with the returned state goes back to where the builder was.
    pub(crate) fn begin_helper(&mut self, name: &str, fn_t: inkwell::types::FunctionType<'ctx>) -> (FunctionValue<'ctx>, (FunctionValue<'ctx>, BasicBlock<'ctx>)) {
        let ctx = self.ctx();
        let h = self.m.module.add_function(name, fn_t, Some(inkwell::module::Linkage::Internal));
        for a in ["nounwind", "noinline"] {
            h.add_attribute(inkwell::attributes::AttributeLoc::Function, ctx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id(a), 0));
        }
        let saved = (self.f, self.b.get_insert_block().unwrap());
        self.f = h;
        self.b.position_at_end(ctx.append_basic_block(h, "entry"));
        (h, saved)
    }

    /// Back to the function and block [`FnEmitter::begin_helper`] left.
    pub(crate) fn end_helper(&mut self, saved: (FunctionValue<'ctx>, BasicBlock<'ctx>)) {
        self.f = saved.0;
        self.b.position_at_end(saved.1);
    }

    /// The base that shared addresses count from. PTX ISA 8.x 5.1.4 (the `.shared::cluster`
    /// window holds the `.shared::cta` windows of the cluster's CTAs): in a module that
    /// reaches other CTAs' windows (`ModCtx::dsmem`), a shared address is `rank << 24 |
    /// offset`, as on a GPU, whose kernels reach a peer's variable by setting or clearing the
    /// rank's bits (Triton's CTA pairs clear bit 24 to name the even CTA's mbarrier): the
    /// runtime lays the windows `ClusterCtx::stride` (16 MiB) apart in rank order, and the
    /// base is rank 0's window. Elsewhere it is the CTA's own window
    /// ([`FnEmitter::own_shared_base`]), a shared address an offset in it.
    pub fn shared_base(&mut self) -> PointerValue<'ctx> {
        if self.m.dsmem && !self.m.nvptx {
            return self.cluster_window().0;
        }
        self.own_shared_base()
    }

    /// Rank 0's window and this CTA's offset from it (i64) in a module that reaches other
    /// CTAs' windows ([`FnEmitter::shared_base`]).
    pub(crate) fn cluster_window(&mut self) -> (PointerValue<'ctx>, IntValue<'ctx>) {
        if let Some(w) = self.cluster_window {
            return w;
        }
        // (From the runtime's window: a module whose shared addresses count from rank 0's
        // window runs one CTA per CTA function, `warp::groups_ctas`.)
        let raw = self.raw_shared_base();
        let own = self.align_shared(&self.alloca_b, raw);
        let i64t = self.ctx().i64_type();
        let stride = self.cluster_u32(super::abi::cluster_field::STRIDE, None);
        let rank = self.cluster_rank();
        let b = &self.alloca_b;
        let off = b.build_int_mul(b.build_int_z_extend(rank, i64t, "").unwrap(), b.build_int_z_extend(stride, i64t, "").unwrap(), "smem.rank").unwrap();
        let neg = b.build_int_neg(off, "").unwrap();
        let base = unsafe { b.build_gep(self.ctx().i8_type(), own, &[neg], "smem.cluster").unwrap() };
        self.cluster_window = Some((base, off));
        (base, off)
    }

    /// The CTA's own shared window (its variables at their offsets).
    pub fn own_shared_base(&mut self) -> PointerValue<'ctx> {
        if let Some(p) = self.shared_base {
            return p;
        }
        let v = self.raw_shared_base();
        let p = self.align_shared(&self.alloca_b, v);
        self.shared_base = Some(p);
        p
    }

    /// `CtaCtx::shared` as the runtime wrote it (loaded in the entry block).
    pub(crate) fn raw_shared_base(&self) -> PointerValue<'ctx> {
        let t = self.cta_type();
        let fp = self.alloca_b.build_struct_gep(t, self.cta, field::SHARED, "").unwrap();
        let pt = self.ctx().ptr_type(AddressSpace::default());
        let v = self.alloca_b.build_load(pt, fp, "shared").unwrap();
        self.invariant(v);
        v.into_pointer_value()
    }

    /// A CTA's shared window `p` as its variables see it (built with `b`). PTX ISA 5.4.5
    /// `.align`: the runtime's window is 16-byte aligned; a variable that asks for more gets
    /// it from a base moved up to the module's largest alignment (the slack is counted in the
    /// kernel's static shared memory).
    pub(crate) fn align_shared(&self, b: &Builder<'ctx>, p: PointerValue<'ctx>) -> PointerValue<'ctx> {
        let a = self.m.shared_align;
        if a <= 16 {
            return p;
        }
        let i64t = self.ctx().i64_type();
        let addr = b.build_ptr_to_int(p, i64t, "").unwrap();
        let neg = b.build_int_neg(addr, "").unwrap();
        let pad = b.build_and(neg, i64t.const_int(a as u64 - 1, false), "").unwrap();
        unsafe { b.build_in_bounds_gep(self.ctx().i8_type(), p, &[pad], "shared.aligned").unwrap() }
    }

    /// Whether [`FnEmitter::shared_base`] has been asked for.
    pub(crate) fn shared_base_taken(&self) -> bool {
        self.shared_base.is_some()
    }

    /// Makes `p` the shared window of the code emitted from here (a warp's CTA in a group of
    /// CTAs, `warp::group_cta`).
    pub(crate) fn set_shared_base(&mut self, p: PointerValue<'ctx>) {
        self.shared_base = Some(p);
    }

    pub fn cta_ptr_field(&mut self, fld: u32) -> PointerValue<'ctx> {
        let p = self.cta_field_ptr(fld, None);
        let pt = self.ctx().ptr_type(AddressSpace::default());
        let v = self.b.build_load(pt, p, "").unwrap();
        self.invariant(v);
        v.into_pointer_value()
    }

    /// The LLVM struct type of `CtaCtx`.
    pub fn cta_type(&self) -> inkwell::types::StructType<'ctx> {
        cta_struct_type(self.ctx())
    }

    /// A field of the CTA's cluster (`ClusterCtx`: `cluster_field::DIMS` element `idx`, or
    /// `STRIDE`), loaded once in the entry block. A launch with clusters of one CTA has no
    /// `ClusterCtx` (null): the field is then read from a module constant for a 1x1x1 cluster
    /// whose windows are 0 bytes apart.
    pub fn cluster_u32(&mut self, fld: u32, idx: Option<u32>) -> IntValue<'ctx> {
        // Cache keys past the CtaCtx fields.
        let key = (100 + fld, idx);
        if let Some(v) = self.cta_cache.get(&key) {
            return *v;
        }
        let ctx = self.ctx();
        let (i32t, pt) = (ctx.i32_type(), ctx.ptr_type(AddressSpace::default()));
        let ct = ctx.struct_type(&[i32t.array_type(3).into(), i32t.into(), pt.into()], false);
        let one = match self.m.module.get_global("__ptxr_one_cta_cluster") {
            Some(g) => g,
            None => {
                let g = self.m.module.add_global(ct, None, "__ptxr_one_cta_cluster");
                let ones = i32t.const_array(&[i32t.const_int(1, false); 3]);
                g.set_initializer(&ct.const_named_struct(&[ones.into(), i32t.const_zero().into(), pt.const_null().into()]));
                g.set_constant(true);
                g.set_linkage(inkwell::module::Linkage::Private);
                g
            }
        };
        let b = &self.alloca_b;
        let fp = self.cta_field_ptr_at(b, field::CLUSTER, None);
        let p = b.build_load(pt, fp, "cluster").unwrap().into_pointer_value();
        self.invariant(p.into());
        let none = b.build_is_null(p, "").unwrap();
        let p = b.build_select(none, one.as_pointer_value(), p, "").unwrap().into_pointer_value();
        let fp = b.build_struct_gep(ct, p, fld, "").unwrap();
        let fp = match idx {
            Some(k) => unsafe { b.build_in_bounds_gep(i32t, fp, &[i32t.const_int(k as u64, false)], "").unwrap() },
            None => fp,
        };
        let v = b.build_load(i32t, fp, "").unwrap();
        self.invariant(v);
        let v = v.into_int_value();
        self.cta_cache.insert(key, v);
        v
    }

    /// The checking mode (`codegen::set_check`): asks the runtime's `check_access` whether the
    /// `size`-byte access at `p` (a write or not) of an instruction naming `space` lies in
    /// memory the kernel may reach, and stops the CTA with `STATUS_CHECK` where not. A generic
    /// or `.local` access inside one of the function's `.local` variables is known good here
    /// (a `.local` one outside all of them is reported); `.const` and `.param` accesses are not
    /// checked. `strong` (volatile, relaxed, acquire, release) and `atomic` accesses are not
    /// races; shared accesses are checked for races and uninitialized reads only in modules
    /// without asynchronous or matrix writers of shared memory (`ModCtx::shadow_ok`).
    pub fn check_access(&mut self, p: PointerValue<'ctx>, size: u32, write: bool, space: Option<StateSpace>, strong: bool, atomic: bool) {
        if !self.m.check || self.m.nvptx {
            return;
        }
        let kind = match space {
            None => 0,
            Some(StateSpace::Global) => 2,
            Some(StateSpace::Shared) => 4,
            Some(StateSpace::Local) if !self.local_ranges.is_empty() => 6,
            _ => return,
        } | write as u64
            | (atomic as u64) << 4
            | (strong as u64) << 5
            | (!self.m.shadow_ok as u64) << 6;
        let ctx = self.ctx();
        let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
        let after = ctx.append_basic_block(self.f, "check.done");
        if matches!(space, None | Some(StateSpace::Local)) && !self.local_ranges.is_empty() {
            let a = self.b.build_ptr_to_int(p, i64t, "").unwrap();
            let mut inside = ctx.bool_type().const_zero();
            for (base, len) in self.local_ranges.clone() {
                let base = super::warp::lane_var(self, base);
                let b0 = self.b.build_ptr_to_int(base, i64t, "").unwrap();
                let rel = self.b.build_int_sub(a, b0, "").unwrap();
                let room = (len as u64).saturating_sub(size as u64);
                let ok = self.b.build_int_compare(IntPredicate::ULE, rel, i64t.const_int(room, false), "").unwrap();
                let ok = if (len as u64) < size as u64 { ctx.bool_type().const_zero() } else { ok };
                inside = self.b.build_or(inside, ok, "").unwrap();
            }
            let ask = ctx.append_basic_block(self.f, "check.ask");
            self.b.build_conditional_branch(inside, after, ask).unwrap();
            self.b.position_at_end(ask);
        }
        self.call_check(p, i32t.const_int(size as u64, false), kind, after);
    }

    /// The checking mode: [`FnEmitter::check_access`] of a bulk access of `size` bytes (a
    /// runtime value) of global or shared memory, as one access (no alignment beyond 16).
    /// `aligned`: the access must be aligned to its size (up to 16 bytes), as a bulk copy's
    /// must; else any alignment (the bounding range of a tensor copy's box).
    pub fn check_access_n(&mut self, p: PointerValue<'ctx>, size: IntValue<'ctx>, write: bool, space: StateSpace, aligned: bool) {
        if !self.m.check || self.m.nvptx {
            return;
        }
        let kind = match space {
            StateSpace::Shared => 4,
            _ => 2,
        } | write as u64
            | (!self.m.shadow_ok as u64) << 6
            | (!aligned as u64) << 9;
        let after = self.ctx().append_basic_block(self.f, "check.done");
        let size = self.resize(size, 32, false);
        self.call_check(p, size, kind, after);
    }

    /// Calls the runtime's `check_access` for the access at `p` (`size` bytes, `kind` as
    /// `ptxr_runtime::check` numbers it) and stops the CTA with `STATUS_CHECK` on a report;
    /// leaves the builder at `after`.
    fn call_check(&mut self, p: PointerValue<'ctx>, size: IntValue<'ctx>, kind: u64, after: inkwell::basic_block::BasicBlock<'ctx>) {
        let i32t = self.ctx().i32_type();
        let line = self.line();
        let col = self.m.lines.column(self.span.start as usize) as u32;
        let tid = self.linear_tid();
        let st = self.host_check_access(p, size, kind as u32, line, col, tid);
        let bad = self.b.build_int_compare(IntPredicate::NE, st, i32t.const_zero(), "").unwrap();
        // The runtime has set the status line and thread; the CTA stops with its status.
        self.stop_if(bad, super::abi::STATUS_CHECK);
        self.b.build_unconditional_branch(after).unwrap();
        self.b.position_at_end(after);
    }

    /// The call of `HostFns::check_access` (slot 7): the runtime's status for the access.
    fn host_check_access(&mut self, p: PointerValue<'ctx>, size: IntValue<'ctx>, kind: u32, line: u32, col: u32, tid: IntValue<'ctx>) -> IntValue<'ctx> {
        let ctx = self.ctx();
        let (i32t, pt) = (ctx.i32_type(), ctx.ptr_type(AddressSpace::default()));
        let fp = self.host_fn(7);
        let fnt = i32t.fn_type(&[pt.into(), pt.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into(), i32t.into()], false);
        let c = |v: u32| i32t.const_int(v as u64, false);
        let args = [self.cta.into(), p.into(), size.into(), c(kind).into(), c(line).into(), c(col).into(), tid.into()];
        self.b.build_indirect_call(fnt, fp, &args, "check").unwrap().try_as_basic_value().basic().unwrap().into_int_value()
    }

    /// The checking mode: tells the runtime's `check_access` that the device heap's block at
    /// `p` of `size` bytes was allocated (`alloc`) or freed (kind bit 7 or 8).
    pub fn check_note_heap(&mut self, p: PointerValue<'ctx>, size: IntValue<'ctx>, alloc: bool) {
        if !self.m.check || self.m.nvptx {
            return;
        }
        let size = self.resize(size, 32, false);
        let z = self.ctx().i32_type().const_zero();
        self.host_check_access(p, size, if alloc { 1 << 7 } else { 1 << 8 }, 0, 0, z);
    }

    /// Stops the CTA with `status` where `cond` holds, leaving the status line and thread
    /// as they are (set by the runtime, or none); the builder goes on where it does not.
    fn stop_if(&mut self, cond: IntValue<'ctx>, status: u32) {
        let ctx = self.ctx();
        let stop = ctx.append_basic_block(self.f, "stop");
        let go = ctx.append_basic_block(self.f, "go.on");
        self.b.build_conditional_branch(cond, stop, go).unwrap();
        self.b.position_at_end(stop);
        let p = self.cta_field_ptr(field::STATUS, None);
        self.b.build_store(p, ctx.i32_type().const_int(status as u64, false)).unwrap();
        self.b.build_unconditional_branch(self.abort_bb).unwrap();
        self.b.position_at_end(go);
    }

    /// Calls the runtime's `cluster_sync` (`HostFns`, after `launch_device`): returns once
    /// the cluster's other CTAs have met there too; the status to stop with, or 0.
    pub fn cluster_sync(&mut self) -> IntValue<'ctx> {
        let ctx = self.ctx();
        let (i32t, pt) = (ctx.i32_type(), ctx.ptr_type(AddressSpace::default()));
        let fp = self.host_fn(6);
        self.b.build_indirect_call(i32t.fn_type(&[pt.into()], false), fp, &[self.cta.into()], "cluster").unwrap().try_as_basic_value().basic().unwrap().into_int_value()
    }

    /// Calls the runtime's `try_cancel` (`HostFns`, after `check_access`): it writes the 16
    /// bytes of a `clusterlaunchcontrol.try_cancel` response to `resp`.
    pub fn try_cancel(&mut self, resp: PointerValue<'ctx>) {
        let pt = self.ctx().ptr_type(AddressSpace::default());
        let fp = self.host_fn(8);
        self.b.build_indirect_call(self.ctx().void_type().fn_type(&[pt.into(), pt.into()], false), fp, &[self.cta.into(), resp.into()], "").unwrap();
    }

    /// The pointer in slot `k` of the runtime's host-function table (`CtaCtx::rt`,
    /// `abi::HostFns`).
    fn host_fn(&mut self, k: u32) -> PointerValue<'ctx> {
        let ctx = self.ctx();
        let (i32t, pt) = (ctx.i32_type(), ctx.ptr_type(AddressSpace::default()));
        let rt = self.cta_ptr_field(field::RT);
        let slot = unsafe { self.b.build_in_bounds_gep(pt, rt, &[i32t.const_int(k as u64, false)], "").unwrap() };
        self.b.build_load(pt, slot, "").unwrap().into_pointer_value()
    }

    /// This CTA's rank in its cluster (`%cluster_ctarank`, PTX ISA 8.x special registers):
    /// its position in the cluster, x fastest.
    /// Computed once, in the entry block (the fields it reads are loaded there).
    pub fn cluster_rank(&mut self) -> IntValue<'ctx> {
        let key = (200, None);
        if let Some(v) = self.cta_cache.get(&key) {
            return *v;
        }
        let i32t = self.ctx().i32_type();
        let mut rank = i32t.const_zero();
        for k in (0..3).rev() {
            let n = self.cluster_u32(super::abi::cluster_field::DIMS, Some(k));
            // As the runtime wrote it (a launch with clusters runs one CTA per CTA function;
            // in one without, the rank is 0 whichever CTA of a group a warp runs).
            let id = self.group_first_ctaid(k);
            let b = &self.alloca_b;
            let c = b.build_int_unsigned_rem(id, n, "").unwrap();
            rank = b.build_int_add(b.build_int_mul(rank, n, "").unwrap(), c, "").unwrap();
        }
        self.cta_cache.insert(key, rank);
        rank
    }

    /// Storage for per-thread state of `size` bytes: an entry-block alloca, or a slice of the
    /// thread's frame in a kernel with synchronization (live across sync points).
    pub fn thread_storage(&mut self, ty: inkwell::types::BasicTypeEnum<'ctx>, size: u32, align: u32, name: &str) -> PointerValue<'ctx> {
        if let Some(st) = &mut self.sync {
            let off = match st.replay.as_mut() {
                Some(i) => {
                    let Storage::Frame(off) = st.storage_log[*i] else { unreachable!("region copies request storage in the same order") };
                    *i += 1;
                    off
                }
                None => {
                    let off = (st.frame_size + align - 1) / align * align;
                    st.frame_size = off + size.max(1);
                    st.frame_align = st.frame_align.max(align);
                    st.storage_log.push(Storage::Frame(off));
                    off
                }
            };
            let i8t = self.m.ctx.i8_type();
            let off_v = self.m.ctx.i64_type().const_int(off as u64, false);
            return unsafe { st.frame_b.build_in_bounds_gep(i8t, st.frame_t, &[off_v], name).unwrap() };
        }
        let p = self.alloca_b.build_alloca(ty, name).unwrap();
        if let Some(inst) = p.as_instruction() {
            let _ = inst.set_alignment(align);
        }
        p
    }

    /// The storage of register variable `name` declared in `scope`: an entry-block alloca
    /// (in a region copy, the one the general copy made: `Storage` replay).
    fn new_reg(&mut self, scope: u32, name: &'a str, ty: Type) -> PointerValue<'ctx> {
        let t = self.storage_t(ty);
        if let Some(st) = self.sync.as_mut() {
            if let Some(i) = st.replay {
                let Storage::Reg(p) = st.storage_log[i] else { unreachable!("region copies request storage in the same order") };
                st.replay = Some(i + 1);
                self.irs.slots.insert((scope, name), (p, ty));
                return p;
            }
        }
        let p = match super::warp::new_reg(self, scope, name, ty) {
            Some(p) => p,
            None => self.alloca_b.build_alloca(t, name).unwrap(),
        };
        if let Some(st) = &mut self.sync {
            st.regs.push((p, t.into(), ty.size().max(1)));
            st.storage_log.push(Storage::Reg(p));
        }
        self.irs.slots.insert((scope, name), (p, ty));
        p
    }

    /// Looks up a register as the current scope sees it (its variable's storage is made on
    /// first use).
    pub fn reg(&mut self, name: &'a str) -> Option<(PointerValue<'ctx>, Type)> {
        if let Some(r) = self.overrides.get(name) {
            return Some(*r);
        }
        if let Some(r) = self.regs.get(name) {
            return Some(*r);
        }
        let (scope, ty) = self.irs.func.resolve(name, self.irs.scope)?;
        let p = match self.irs.slots.get(&(scope, name)) {
            Some(&(p, _)) => p,
            None => self.new_reg(scope, name, ty),
        };
        let p = super::warp::lane_slot(self, scope, name, p, ty).unwrap_or(p);
        self.regs.insert(name, (p, ty));
        Some((p, ty))
    }

    /// The storage of a register of the body's outermost scope, if it has been made.
    pub(crate) fn body_reg(&self, name: &'a str) -> Option<(PointerValue<'ctx>, Type)> {
        let (scope, _) = self.irs.func.resolve(name, 1)?;
        self.irs.slots.get(&(scope, name)).copied()
    }

    /// The IR function being lowered.
    pub(crate) fn ir_func(&self) -> std::rc::Rc<crate::ir::Func<'a>> {
        self.irs.func.clone()
    }

    /// The scope registers and variables are looked up in now.
    pub(crate) fn current_scope(&self) -> u32 {
        self.irs.scope
    }

    /// Makes `scope` the one registers and variables are looked up in.
    pub(crate) fn enter_scope(&mut self, scope: u32) {
        if scope == self.irs.scope {
            return;
        }
        self.irs.scope = scope;
        self.regs.clear();
        let owner = self.irs.var_owner.get(scope as usize).copied().unwrap_or(1);
        if owner != self.irs.vars_owner {
            if let Some(Some(v)) = self.irs.scope_vars.get(owner as usize) {
                self.vars = v.clone();
                self.irs.vars_owner = owner;
            }
        }
    }

    /// Looks up a register to read it. A register whose value is a node of `lanes::remat`
    /// is read from the node's temporary, evaluated here.
    pub(crate) fn reg_read(&mut self, name: &'a str) -> R<Option<(PointerValue<'ctx>, Type)>> {
        if self.inlining.is_empty() && !self.overrides.contains_key(name) {
            if let Some(n) = self.remat_single.get(name).copied() {
                return self.remat_eval(n).map(Some);
            }
        }
        Ok(self.reg(name))
    }

    /// Evaluates node `n` into its temporary, unless that was done already in the current
    /// block (within a block no sync point intervenes). Its operands are evaluated first;
    /// then its instruction is emitted with every register it reads or writes redirected to
    /// temporaries.
    pub(crate) fn remat_eval(&mut self, n: usize) -> R<(PointerValue<'ctx>, Type)> {
        let ty = self.remat[n].ty;
        let here = self.b.get_insert_block();
        let tmp = match self.remat_tmp[n] {
            Some((p, at)) if at == here && here.is_some() => return Ok((p, ty)),
            Some((p, _)) => p,
            None => self.alloca_b.build_alloca(reg_t(self.ctx(), ty), "remat").unwrap(),
        };
        let ops = self.remat[n].ops.clone();
        let mut redirect = Vec::new();
        for (name, on) in ops {
            redirect.push((name, self.remat_eval(on)?));
        }
        redirect.push((self.remat[n].dest, (tmp, ty)));
        let saved: Vec<_> = redirect.iter().map(|(name, v)| (*name, self.overrides.insert(name, *v))).collect();
        let r = self.unguarded(self.remat[n].instr);
        for (name, old) in saved.into_iter().rev() {
            match old {
                Some(v) => self.overrides.insert(name, v),
                None => self.overrides.remove(name),
            };
        }
        r?;
        self.remat_tmp[n] = Some((tmp, self.b.get_insert_block()));
        Ok((tmp, ty))
    }

    /// Makes the variables of body copy `copy` (0: the general copy; see `copy_scope_vars`)
    /// the ones names resolve to, at the body's outermost scope: for code placed into that
    /// copy after all copies are emitted (the induction saves and reloads of `lanes`).
    pub(crate) fn copy_vars(&mut self, copy: usize) {
        let Some(sv) = self.copy_scope_vars.get(copy).cloned() else { return };
        let owner = self.irs.var_owner.get(1).copied().unwrap_or(0);
        if let Some(Some(v)) = sv.get(owner as usize) {
            self.vars = v.clone();
        }
        self.irs.scope_vars = sv;
        self.irs.vars_owner = owner;
        self.irs.scope = 1;
        self.regs.clear();
    }

    /// Emits the function body from its IR; falling off its end finishes the thread.
    fn body(&mut self) -> R<()> {
        let r = self.body_once();
        self.copy_scope_vars.push(self.irs.scope_vars.clone());
        r
    }

    fn body_once(&mut self) -> R<()> {
        self.labels.clear();
        self.yield_heads.clear();
        // Each region copy emits the same sync points as the general copy, and declares its
        // own `.local` variables (pointers into its own thread loop's frame).
        self.volatile_last = Some(None);
        self.local_ranges.clear();
        let func = self.irs.func.clone();
        // The loop headers that yielding backward branches return to.
        let mut heads: Vec<&'a str> = Vec::new();
        if self.sync.as_ref().map_or(false, |s| s.yield_count.is_some()) {
            for (i, _) in func.blocks.iter().filter_map(|b| b.term_src) {
                if let (true, Some(Operand::Name(l, None))) = (self.yields.contains(&(i as *const Instr<'a>)), i.operands.first()) {
                    if !heads.contains(&l.name) {
                        heads.push(l.name);
                    }
                }
            }
        }
        if self.warp.is_some() {
            super::warp::walk(self)?;
        } else {
            self.walk(&heads)?;
        }
        if self.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_none()) {
            self.b.build_unconditional_branch(self.ret_bb).unwrap();
        }
        Ok(())
    }

    /// Gives every scope of the IR function its variables (`.local`, `.param`, `.shared`),
    /// starting from those in `self.vars` (parameters), and enters the body's scope.
    pub(crate) fn declare_scopes(&mut self) {
        let func = self.irs.func.clone();
        let n = func.scopes.len();
        let mut owner = vec![0u32; n];
        let mut maps: Vec<Option<HashMap<&'a str, VarLoc<'ctx>>>> = vec![None; n];
        maps[0] = Some(self.vars.clone());
        for s in 1..n {
            let sc = &func.scopes[s];
            let parent_owner = sc.parent.map_or(0, |p| owner[p as usize]);
            if sc.decls.is_empty() {
                owner[s] = parent_owner;
                continue;
            }
            owner[s] = s as u32;
            self.vars = maps[parent_owner as usize].clone().unwrap_or_default();
            for d in &sc.decls {
                self.declare_var(d);
            }
            maps[s] = Some(std::mem::take(&mut self.vars));
        }
        let body_owner = owner.get(1).copied().unwrap_or(0);
        self.vars = maps[body_owner as usize].clone().unwrap_or_default();
        self.irs.var_owner = owner;
        self.irs.scope_vars = maps;
        self.irs.vars_owner = body_owner;
        self.irs.scope = 1;
        self.regs.clear();
    }

    /// The block a branch to IR block `t` enters: its label's block (the entry in front
    /// of a yield loop's header, see `yield_heads`), or its own.
    fn block_target(&self, bbs: &[BasicBlock<'ctx>], t: crate::ir::BlockId) -> BasicBlock<'ctx> {
        match self.irs.func.blocks[t as usize].label {
            Some(l) => self.labels.get(l).copied().unwrap_or(bbs[t as usize]),
            None => bbs[t as usize],
        }
    }

    /// Lowers the blocks of the current IR function from the builder's position: one LLVM
    /// block per IR block, each instruction through the opcode emitters, the terminators as
    /// branches. `heads`: the labels of yield loop headers (`lanes::lockstep`).
    fn walk(&mut self, heads: &[&'a str]) -> R<()> {
        self.declare_scopes();
        let func = self.irs.func.clone();
        let bbs: Vec<BasicBlock<'ctx>> = func.blocks.iter().map(|b| self.ctx().append_basic_block(self.f, b.label.unwrap_or("bb"))).collect();
        for (k, blk) in func.blocks.iter().enumerate() {
            if let Some(l) = blk.label {
                self.labels.insert(l, bbs[k]);
            }
        }
        // Each yield loop gets an entry block in front of its header (see `yield_heads`).
        for &name in heads {
            if let Some(&head) = self.labels.get(name) {
                let enter = self.ctx().append_basic_block(self.f, "yield.enter");
                enter.move_before(head).unwrap();
                self.labels.insert(name, enter);
                self.yield_heads.insert(name, head);
            }
        }
        // Spin loops keep the yield count across entries: a backoff loop inside a polling
        // loop runs a few iterations per poll, fewer than `YIELD_EVERY`.
        let spin_heads: std::collections::HashSet<&'a str> = func
            .blocks
            .iter()
            .filter_map(|b| b.term_src)
            .filter(|(i, _)| self.spin_yields.contains(&(*i as *const Instr<'a>)))
            .filter_map(|(i, _)| match i.operands.first() {
                Some(Operand::Name(l, None)) => Some(l.name),
                _ => None,
            })
            .collect();
        let first = self.block_target(&bbs, 0);
        self.b.build_unconditional_branch(first).unwrap();
        // Reverse postorder positions: an edge to a block at or before its source's position
        // is a back edge (every cycle has one).
        let rpo = crate::ir::cfg::Cfg::new(&func).order;
        for (k, blk) in func.blocks.iter().enumerate() {
            // Code after a terminator inside a block (a trap) is unreachable.
            if self.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_none()) {
                self.b.build_unreachable().unwrap();
            }
            self.b.position_at_end(self.block_target(&bbs, k as u32));
            if let Some(l) = blk.label {
                self.volatile_last = None;
                if let Some(&head) = self.yield_heads.get(l) {
                    let c = self.sync.as_ref().and_then(|s| s.yield_count).expect("yield loops have a count");
                    if !spin_heads.contains(l) {
                        self.b.build_store(c, self.ctx().i32_type().const_zero()).unwrap();
                    }
                    self.b.build_unconditional_branch(head).unwrap();
                    self.b.position_at_end(head);
                }
            }
            for inst in &blk.insts {
                self.enter_scope(inst.scope);
                self.span = inst.src.span;
                self.unguarded(inst.src)?;
            }
            if self.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_some()) {
                self.after_terminator();
            }
            // Polling at back edges bounds every loop ([`FnEmitter::poll_cancel`]). Under
            // the scheduler, a loop that passes a sync point (or yields) is bounded where
            // each pass ends instead, outside the thread loops the poll would keep from
            // vectorizing.
            let back = blk.term.succs().iter().copied().filter(|t| rpo[k] != u32::MAX && rpo[*t as usize] <= rpo[k]).min_by_key(|t| rpo[*t as usize]);
            let through_sync = |t: u32| {
                self.sync.is_some()
                    && (blk.term_src.map_or(false, |(i, _)| self.is_yield(i))
                        || func.blocks.iter().enumerate().any(|(j, b)| rpo[j] != u32::MAX && rpo[j] >= rpo[t as usize] && rpo[j] <= rpo[k] && b.insts.iter().any(|i| crate::lanes::is_sync(i.src))))
            };
            if back.map_or(false, |t| !through_sync(t)) && self.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_none()) {
                if let Some((i, _)) = blk.term_src {
                    self.span = i.span;
                }
                self.poll_cancel();
            }
            self.terminator(blk, &bbs)?;
        }
        Ok(())
    }

    /// Lowers the terminator of an IR block.
    fn terminator(&mut self, blk: &crate::ir::Block<'a>, bbs: &[BasicBlock<'ctx>]) -> R<()> {
        use crate::ir::Term;
        if let Some((i, scope)) = blk.term_src {
            self.enter_scope(scope);
            self.span = i.span;
        }
        match (&blk.term, blk.term_src) {
            // PTX ISA 9.7.11.3 bra (through `unguarded`, which knows yield loops)
            (Term::Br(_), Some((i, _))) if i.opcode.name == "bra" => self.unguarded(i),
            (Term::Br(t), _) => {
                let t = self.block_target(bbs, *t);
                self.b.build_unconditional_branch(t).unwrap();
                Ok(())
            }
            // A guard (9.7.11.2): `@p bra L` branches to L, any other guarded instruction
            // runs in the `then` block.
            (Term::CondBr { then, els, .. }, Some((i, _))) => {
                let g = i.guard.as_ref().ok_or_else(|| self.err(i.span, "internal error: conditional branch without a guard"))?;
                let p = self.read_pred_name(&g.pred)?;
                let p = if g.negated { self.b.build_not(p, "").unwrap() } else { p };
                let (target, cont) = (self.block_target(bbs, *then), self.block_target(bbs, *els));
                match (i.opcode.name == "bra").then(|| self.yield_head(i)).flatten() {
                    Some(head) => {
                        let back = self.ctx().append_basic_block(self.f, "loop.back");
                        self.b.build_conditional_branch(p, back, cont).unwrap();
                        self.b.position_at_end(back);
                        crate::lanes::lockstep::yield_then_branch(self, head, target, self.spin_yields.contains(&(i as *const Instr<'a>)));
                        self.b.build_unconditional_branch(cont).unwrap();
                    }
                    None => {
                        self.b.build_conditional_branch(p, target, cont).unwrap();
                    }
                }
                Ok(())
            }
            // PTX ISA 9.7.11.4 brx.idx: `brx.idx index, tlist;` jumps to the index-th label
            // of the `.branchtargets` list; an index out of range is undefined on a GPU and
            // stops the CTA here as a trap.
            (Term::Switch { targets, .. }, Some((i, _))) => {
                let idx = i.operands.first().ok_or_else(|| self.err(i.span, "`brx.idx` takes an index and a `.branchtargets` label"))?;
                let v = self.read_int(idx, Type::U32)?;
                let cases: Vec<_> = targets.iter().enumerate().map(|(k, t)| (self.ctx().i32_type().const_int(k as u64, false), self.block_target(bbs, *t))).collect();
                let bad = self.ctx().append_basic_block(self.f, "brx.out_of_range");
                self.b.build_switch(v, bad, &cases).unwrap();
                self.b.position_at_end(bad);
                self.abort_with(super::abi::STATUS_TRAP);
                Ok(())
            }
            // PTX ISA 9.7.11.7 exit
            (Term::Exit, Some((i, _))) => self.unguarded(i),
            // PTX ISA 9.7.11.6 ret, or the end of the body.
            (Term::Ret(_), _) | (Term::Unreachable, _) => {
                self.b.build_unconditional_branch(self.ret_bb).unwrap();
                Ok(())
            }
            (_, None) => Err(self.err(self.span, "internal error: IR terminator without its instruction")),
        }
    }

    fn declare_var(&mut self, v: &'a ast::VarDecl<'a>) {
        match v.space {
            StateSpace::Reg => {}
            // On the warp path a `.local` variable, or a `.param` one (a call's arguments),
            // has one copy per lane: `codegen::warp::lane_var`.
            StateSpace::Local | StateSpace::Param if self.warp.is_some() => {
                let size = decl_size(v).max(1);
                let p = super::warp::new_lane_var(self, v.space, size, decl_align(v).max(8), v.name.name);
                self.vars.insert(v.name.name, VarLoc::Ptr(p, v.ty));
                if v.space == StateSpace::Local {
                    self.local_ranges.push((p, size));
                }
            }
            StateSpace::Local | StateSpace::Param => {
                let size = decl_size(v).max(1);
                let t = self.ctx().i8_type().array_type(size);
                let p = self.thread_storage(t.into(), size, decl_align(v).max(8), v.name.name);
                self.vars.insert(v.name.name, VarLoc::Ptr(p, v.ty));
                if v.space == StateSpace::Local {
                    self.local_ranges.push((p, size));
                }
            }
            StateSpace::Global | StateSpace::Const => {
                if let Some(g) = self.m.fn_globals.get(&(v as *const ast::VarDecl<'a>)) {
                    self.vars.insert(v.name.name, VarLoc::Ptr(g.as_pointer_value(), v.ty));
                }
            }
            StateSpace::Shared if self.m.nvptx => {
                if let Some(g) = self.m.fn_shared_g.get(&(self.fname, v.name.name)).copied() {
                    self.vars.insert(v.name.name, VarLoc::Ptr(g.as_pointer_value(), v.ty));
                }
            }
            StateSpace::Shared => {
                if let Some((off, ty)) = self.m.fn_shared.get(&(self.fname, v.name.name)).copied() {
                    self.vars.insert(v.name.name, VarLoc::Shared(off, ty));
                }
            }
            _ => {}
        }
    }

    /// Continues emission in a fresh block after a terminator (the code after an unconditional
    /// branch is reachable only through a label).
    pub fn after_terminator(&mut self) {
        let bb = self.ctx().append_basic_block(self.f, "dead");
        self.b.position_at_end(bb);
    }

    /// Whether `i` is a backward branch that yields (`lanes::lockstep`): in the kernel's
    /// own body, and the spin loops of an inlined function ([`FnEmitter::inline_call`]).
    fn is_yield(&self, i: &Instr<'a>) -> bool {
        let p = i as *const Instr<'a>;
        self.sync.is_some() && self.yields.contains(&p) && (self.inlining.is_empty() || self.spin_yields.contains(&p))
    }

    /// Whether the lanes of the warp must meet before a volatile shared access (`store` or
    /// load; `lanes::is_lockstep_access`): before a store, or a load that follows a store,
    /// since the last sync point on the way here; always after a label (the way here is not
    /// known). Loads after loads need not meet.
    pub(crate) fn volatile_meets(&self, store: bool) -> bool {
        match self.volatile_last {
            None => true,
            Some(None) => false,
            Some(Some(last)) => last || store,
        }
    }

    /// Records a shared or generic access, volatile or not, on the way to the next volatile
    /// one (a plain store before a volatile load needs the lanes to meet as much as a
    /// volatile one).
    pub(crate) fn note_access(&mut self, store: bool) {
        self.volatile_last = match self.volatile_last {
            None => None,
            Some(last) => Some(Some(store || last == Some(true))),
        };
    }

    /// The loop header a yielding backward branch returns to (see `yield_heads`).
    fn yield_head(&self, i: &Instr<'a>) -> Option<BasicBlock<'ctx>> {
        if !self.is_yield(i) {
            return None;
        }
        match i.operands.first() {
            Some(Operand::Name(l, None)) => self.yield_heads.get(l.name).copied(),
            _ => None,
        }
    }

    fn label_target(&mut self, i: &Instr<'a>) -> R<BasicBlock<'ctx>> {
        match i.operands.first() {
            Some(Operand::Name(l, None)) => self.labels.get(l.name).copied().ok_or_else(|| self.err(l.span, format!("undeclared label `{}`", l.name))),
            _ => Err(self.err(i.span, "`bra` needs a label operand")),
        }
    }

    pub(crate) fn unguarded(&mut self, i: &'a Instr<'a>) -> R<()> {
        match i.opcode.name {
            // PTX ISA 9.7.11.3 bra
            "bra" => {
                let t = self.label_target(i)?;
                if let Some(head) = self.yield_head(i) {
                    crate::lanes::lockstep::yield_then_branch(self, head, t, self.spin_yields.contains(&(i as *const Instr<'a>)));
                }
                self.b.build_unconditional_branch(t).unwrap();
                self.after_terminator();
                Ok(())
            }
            // PTX ISA 9.7.11.6 ret
            "ret" => {
                self.b.build_unconditional_branch(self.ret_bb).unwrap();
                self.after_terminator();
                Ok(())
            }
            // PTX ISA 9.7.11.7 exit
            "exit" => {
                if self.is_kernel {
                    self.b.build_unconditional_branch(self.exit_bb).unwrap();
                } else if self.m.nvptx {
                    super::nvvm::exit_thread(self);
                    return Ok(());
                } else {
                    // Exiting inside a function ends the thread: the status unwinds every
                    // caller up to the kernel, which ends the thread (`check_status`).
                    let p = self.cta_field_ptr(field::STATUS, None);
                    self.b.build_store(p, self.ctx().i32_type().const_int(super::abi::STATUS_EXIT as u64, false)).unwrap();
                    self.b.build_unconditional_branch(self.abort_bb).unwrap();
                }
                self.after_terminator();
                Ok(())
            }
            "call" => self.call(i),
            _ => {
                // Half forms first: they share opcodes with the integer and float families.
                if super::ops_wmma::emit(self, i)?
                    || super::ops_wgmma::emit(self, i)?
                    || super::ops_bulk::emit(self, i)?
                    || super::sync::emit(self, i)?
                    || super::ops_tcgen05::emit(self, i)?
                    || super::ops_half::emit(self, i)?
                    || super::ops_int::emit(self, i)?
                    || super::ops_bits::emit(self, i)?
                    || super::ops_float::emit(self, i)?
                    || super::ops_conv::emit(self, i)?
                    || super::ops_mem::emit(self, i)?
                    || super::ops_atomic::emit(self, i)?
                    || super::ops_video::emit(self, i)?
                    || super::ops_tex::emit(self, i)?
                    || super::ops_misc::emit(self, i)?
                {
                    Ok(())
                } else {
                    Err(self.err(i.opcode.span, format!("`{}` is not supported by ptxr's CPU code generator yet", instr_name(i))))
                }
            }
        }
    }

    /// PTX ISA 9.7.11.5 call: `call (rets), func, (args);` with `.param`/register arguments.
    fn call(&mut self, i: &'a Instr<'a>) -> R<()> {
        let ops = &i.operands;
        let (rets, rest): (&[Operand], &[Operand]) = match ops.first() {
            Some(Operand::List(r, _)) => (r.as_slice(), &ops[1..]),
            _ => (&[], &ops[..]),
        };
        let Some(Operand::Name(fname, _)) = rest.first() else {
            return Err(self.err(i.span, "`call` needs a function name or a register holding a function address"));
        };
        let args: &[Operand] = match rest.get(1) {
            Some(Operand::List(a, _)) => a.as_slice(),
            _ => &[],
        };
        // Indirect call through a register (`call (r), %rd, (a), proto;`, 9.7.11.5): every
        // `.func` has the same LLVM shape, one pointer per return value and parameter, so the
        // prototype only fixes the count.
        if self.reg(fname.name).is_some() {
            let target = self.read_int(&rest[0], Type::U64)?;
            let pt = self.ctx().ptr_type(AddressSpace::default());
            let fp = self.b.build_int_to_ptr(target, pt, "").unwrap();
            let i32t = self.ctx().i32_type();
            let mut tys: Vec<BasicMetadataTypeEnum> = if self.m.nvptx { Vec::new() } else { vec![pt.into(), i32t.into(), i32t.into(), i32t.into()] };
            tys.extend(std::iter::repeat(BasicMetadataTypeEnum::from(pt)).take(rets.len() + args.len()));
            let fnt = self.ctx().void_type().fn_type(&tys, false);
            let mut argv: Vec<BasicMetadataValueEnum> = if self.m.nvptx { Vec::new() } else { vec![self.cta.into(), self.tid[0].into(), self.tid[1].into(), self.tid[2].into()] };
            let mut reg_rets = Vec::new();
            for (k, r) in rets.iter().chain(args.iter()).enumerate() {
                let p = self.arg_ptr(r, &mut reg_rets, k < rets.len())?;
                argv.push(p.into());
            }
            self.b.build_indirect_call(fnt, fp, &argv, "").unwrap();
            for (slot, op, ty) in reg_rets {
                let v = self.b.build_load(reg_t(self.ctx(), ty), slot, "").unwrap();
                self.write_raw(op, ty, v.into_int_value())?;
            }
            self.check_status();
            return Ok(());
        }
        // Host services that CUDA programs call as external functions.
        match fname.name {
            "vprintf" => return super::ops_misc::vprintf(self, i, rets, args),
            "__assertfail" => return super::ops_misc::assertfail(self, i, args),
            "malloc" | "free" if !matches!(self.m.globals.get(fname.name), Some(GlobalSym::Func(_))) => return super::ops_misc::heap_call(self, i, fname.name, rets, args),
            // CUDA dynamic parallelism: the device runtime's launch functions (CDP2 names,
            // and the names without the prefix that older compilers emit).
            "__cudaCDP2GetParameterBufferV2" | "cudaGetParameterBufferV2" | "__cudaCDP2LaunchDeviceV2" | "cudaLaunchDeviceV2" if !self.m.nvptx && !matches!(self.m.globals.get(fname.name), Some(GlobalSym::Func(_))) => {
                return super::ops_misc::device_launch(self, i, fname.name, rets, args);
            }
            _ => {}
        }
        if !self.m.nvptx && self.m.sync_funcs.contains(fname.name) {
            return self.inline_call(i, fname, rets, args);
        }
        let callee = match self.m.globals.get(fname.name) {
            Some(GlobalSym::Func(f)) => *f,
            _ if self.m.ast.items.iter().any(|it| matches!(it, ast::Item::Func(f) if f.name.name == fname.name)) => {
                return Err(self.err(fname.span, format!("`{}` is declared but not defined in this module (ptxr provides vprintf, __assertfail, malloc, free and the device-side launch functions cudaGetParameterBufferV2 and cudaLaunchDeviceV2)", fname.name)));
            }
            _ => return Err(self.err(fname.span, format!("call to unknown function `{}`", fname.name))),
        };
        let mut argv: Vec<BasicMetadataValueEnum> = if self.m.nvptx { Vec::new() } else { vec![self.cta.into(), self.tid[0].into(), self.tid[1].into(), self.tid[2].into()] };
        let mut reg_rets = Vec::new();
        for (k, r) in rets.iter().chain(args.iter()).enumerate() {
            let p = self.arg_ptr(r, &mut reg_rets, k < rets.len())?;
            argv.push(p.into());
        }
        self.b.build_call(callee, &argv, "").unwrap();
        for (slot, op, ty) in reg_rets {
            let v = self.b.build_load(reg_t(self.ctx(), ty), slot, "").unwrap();
            self.write_raw(op, ty, v.into_int_value())?;
        }
        // A trap inside the callee stops the CTA.
        self.check_status();
        Ok(())
    }

    /// A call to a `.func` that synchronizes, inlined into the kernel (which runs under the
    /// lane scheduler): the callee's body is emitted in place with its own registers, labels
    /// and variables. Its parameters and return values live in the thread's frame, since the
    /// body may leave for the scheduler while they are live; `ret` continues after the call.
    fn inline_call(&mut self, i: &'a Instr<'a>, fname: &'a Ident<'a>, rets: &'a [Operand<'a>], args: &'a [Operand<'a>]) -> R<()> {
        let Some(def) = self.m.ast.items.iter().find_map(|it| match it {
            ast::Item::Func(f) if f.name.name == fname.name && f.body.is_some() => Some(f),
            _ => None,
        }) else {
            return Err(self.err(fname.span, format!("call to unknown function `{}`", fname.name)));
        };
        if self.sync.is_none() {
            return Err(self.err(i.span, format!("`{}` synchronizes and can only be called from a kernel", fname.name)));
        }
        if self.inlining.contains(&fname.name) {
            return Err(self.err(i.span, format!("recursive call to `{}`, a function that synchronizes, is not supported (ptxr inlines such functions into the kernel)", fname.name)));
        }
        if rets.len() != def.rets.len() || args.len() != def.params.len() {
            return Err(self.err(i.span, format!("`{}` takes {} return value(s) and {} parameter(s); the call passes {} and {}", fname.name, def.rets.len(), def.params.len(), rets.len(), args.len())));
        }
        // Bind the callee's parameters and return values to frame storage.
        let mut vars: HashMap<&'a str, VarLoc<'ctx>> = HashMap::new();
        let mut copy_in: Vec<(&'a ast::VarDecl<'a>, &'a Operand<'a>)> = Vec::new();
        let mut copy_out: Vec<(&'a ast::VarDecl<'a>, &'a Operand<'a>)> = Vec::new();
        for (decl, op, is_ret) in def.rets.iter().zip(rets).map(|(d, o)| (d, o, true)).chain(def.params.iter().zip(args).map(|(d, o)| (d, o, false))) {
            if decl.space == StateSpace::Reg {
                if is_ret { copy_out.push((decl, op)) } else { copy_in.push((decl, op)) }
                continue;
            }
            // A `.param` of the caller is passed by address; anything else by a copy.
            let p = match op {
                Operand::Name(id, None) if matches!(self.vars.get(id.name), Some(VarLoc::Ptr(..))) => match self.var(id.name).unwrap() {
                    VarLoc::Ptr(p, _) => p,
                    _ => unreachable!(),
                },
                _ => {
                    let size = decl_size(decl).max(1);
                    let t = self.ctx().i8_type().array_type(size);
                    let p = self.thread_storage(t.into(), size, decl_align(decl).max(8), decl.name.name);
                    if is_ret {
                        copy_out.push((decl, op));
                    } else {
                        let v = self.read_int(op, decl.ty)?;
                        self.b.build_store(p, v).unwrap();
                    }
                    p
                }
            };
            vars.insert(decl.name.name, VarLoc::Ptr(p, decl.ty));
        }
        let mut in_vals = Vec::new();
        for (decl, op) in &copy_in {
            in_vals.push((decl, self.read_int(op, decl.ty)?));
        }
        let callee = match self.m.ir.get(fname.name) {
            Some(Ok(irf)) => irf.clone(),
            Some(Err(d)) => return Err(d.clone()),
            None => return Err(self.err(fname.span, format!("call to unknown function `{}`", fname.name))),
        };
        // Enter the callee's IR.
        let saved = (
            std::mem::take(&mut self.regs),
            std::mem::replace(&mut self.irs, IrState::new(callee)),
            std::mem::replace(&mut self.vars, vars),
            std::mem::take(&mut self.labels),
            std::mem::take(&mut self.yield_heads),
            self.ret_bb,
            self.fname,
        );
        self.inlining.push(fname.name);
        self.fname = fname.name;
        for (decl, v) in in_vals {
            let p = self.new_reg(0, decl.name.name, decl.ty);
            self.b.build_store(p, v).unwrap();
        }
        for (decl, _) in &copy_out {
            if decl.space == StateSpace::Reg {
                self.new_reg(0, decl.name.name, decl.ty);
            }
        }
        let after = self.ctx().append_basic_block(self.f, &format!("ret.{}", fname.name));
        self.ret_bb = after;
        // The callee's spin loops (waiting for another thread of the CTA) yield, as the
        // kernel's own do: a thread run before the one it waits for would never stop. (A
        // kernel that reaches a function with a spin loop has a yield count.)
        let mut heads: Vec<&'a str> = Vec::new();
        if let (Some(b), true) = (def.body.as_ref(), self.sync.as_ref().map_or(false, |s| s.yield_count.is_some())) {
            let spins = crate::lanes::lockstep::yield_branches(b, u32::MAX, usize::MAX).1;
            let mut seq = Vec::new();
            crate::lanes::flatten(b, &mut seq);
            for st in seq {
                if let ast::Stmt::Instr(x) = st {
                    if let (true, Some(Operand::Name(l, None))) = (spins.contains(&(x as *const Instr<'a>)), x.operands.first()) {
                        heads.push(l.name);
                    }
                }
            }
            self.yields.extend(spins.iter().copied());
            self.spin_yields.extend(spins);
        }
        let r = self.walk(&heads);
        if self.b.get_insert_block().map_or(false, |bb| bb.get_terminator().is_none()) {
            self.b.build_unconditional_branch(after).unwrap();
        }
        self.b.position_at_end(after);
        // Return values, read in the callee's scope, written in the caller's.
        let mut outs = Vec::new();
        if r.is_ok() {
            for (decl, op) in &copy_out {
                let v = if decl.space == StateSpace::Reg {
                    let (p, t) = self.irs.slots[&(0, decl.name.name)];
                    self.b.build_load(reg_t(self.ctx(), t), p, "").unwrap().into_int_value()
                } else {
                    let params = self.irs.scope_vars.first().and_then(|m| m.as_ref());
                    let Some(VarLoc::Ptr(p, _)) = params.and_then(|m| m.get(decl.name.name)).copied() else { unreachable!() };
                    self.b.build_load(reg_t(self.ctx(), decl.ty), p, "").unwrap().into_int_value()
                };
                outs.push((op, decl.ty, v));
            }
        }
        self.inlining.pop();
        (self.regs, self.irs, self.vars, self.labels, self.yield_heads, self.ret_bb, self.fname) = saved;
        self.span = i.span;
        r?;
        for (op, ty, v) in outs {
            self.write_raw(op, ty, v)?;
        }
        Ok(())
    }

    /// The pointer passed for one call operand. A register is passed as a copy; for a return
    /// value (`is_ret`) the copy is written back to it after the call. An argument register
    /// is never written back: the callee's parameter is its own register, so `call (r), f, (r)`
    /// leaves `r` with the return value.
    fn arg_ptr(&mut self, op: &'a Operand<'a>, reg_rets: &mut Vec<(PointerValue<'ctx>, &'a Operand<'a>, Type)>, is_ret: bool) -> R<PointerValue<'ctx>> {
        match op {
            Operand::Name(id, None) => {
                if let Some(VarLoc::Ptr(p, _)) = self.var(id.name) {
                    return Ok(p);
                }
                if let Some((slot, ty)) = self.reg_read(id.name)? {
                    let t = reg_t(self.ctx(), ty);
                    let tmp = self.alloca_b.build_alloca(t, "arg").unwrap();
                    let v = self.load_reg(slot, ty);
                    self.b.build_store(tmp, v).unwrap();
                    if is_ret {
                        reg_rets.push((tmp, op, ty));
                    }
                    return Ok(tmp);
                }
                Err(self.err(id.span, format!("unknown call argument `{}`", id.name)))
            }
            Operand::Imm(_) => {
                let v = self.read(op, Type::B64)?.into_int_value();
                let tmp = self.alloca_b.build_alloca(self.ctx().i64_type(), "arg").unwrap();
                self.b.build_store(tmp, v).unwrap();
                Ok(tmp)
            }
            _ => Err(self.err(op.span(), "unsupported call argument")),
        }
    }

    /// After a call or a host service: if the CTA status is set, stop.
    pub fn check_status(&mut self) {
        if self.m.nvptx {
            return;
        }
        let i32t = self.ctx().i32_type();
        let st = self.load_cta_u32(field::STATUS, None);
        let bad = self.b.build_int_compare(IntPredicate::NE, st, i32t.const_zero(), "").unwrap();
        let cont = self.ctx().append_basic_block(self.f, "ok");
        let stopped = self.ctx().append_basic_block(self.f, "stopped");
        self.b.build_conditional_branch(bad, stopped, cont).unwrap();
        self.b.position_at_end(stopped);
        if self.is_kernel {
            // `exit` in a callee: this thread ends; the CTA goes on.
            let exited = self.b.build_int_compare(IntPredicate::EQ, st, i32t.const_int(super::abi::STATUS_EXIT as u64, false), "").unwrap();
            let clear = self.ctx().append_basic_block(self.f, "exited");
            self.b.build_conditional_branch(exited, clear, self.abort_bb).unwrap();
            self.b.position_at_end(clear);
            let p = self.cta_field_ptr(field::STATUS, None);
            self.b.build_store(p, i32t.const_zero()).unwrap();
            // On the warp path only the lane whose call exited ends (`codegen::warp::lane_exit`).
            if !super::warp::lane_exit(self) {
                self.b.build_unconditional_branch(self.exit_bb).unwrap();
            }
        } else {
            self.b.build_unconditional_branch(self.abort_bb).unwrap();
        }
        self.b.position_at_end(cont);
    }

    /// Stops the CTA with `STATUS_TIMEOUT` when the launch's cancel word is set (the
    /// runtime's watchdog, `ptxr_runtime::set_timeout`): placed at every back edge of the
    /// PTX's loops, so a kernel that loops forever stops as a GPU's watchdog stops it. One
    /// load and a branch per iteration; none on the NVPTX target.
    pub fn poll_cancel(&mut self) {
        let line = self.line();
        self.poll_cancel_at(line);
    }

    /// [`FnEmitter::poll_cancel`] reporting source line `line`; 0 where no instruction (and
    /// no thread) is current: between the scheduler's passes, the warp's dispatch.
    pub fn poll_cancel_at(&mut self, line: u32) {
        if self.m.nvptx {
            return;
        }
        let ctx = self.ctx();
        let i32t = ctx.i32_type();
        let word = match self.cancel_word {
            Some(p) => p,
            None => {
                let pt = ctx.ptr_type(AddressSpace::default());
                let zero = match self.m.module.get_global("__ptxr_no_cancel") {
                    Some(g) => g,
                    None => {
                        let g = self.m.module.add_global(i32t, None, "__ptxr_no_cancel");
                        g.set_linkage(inkwell::module::Linkage::Internal);
                        g.set_initializer(&i32t.const_zero());
                        g
                    }
                };
                let fp = self.alloca_b.build_struct_gep(self.cta_type(), self.cta, field::HOST, "").unwrap();
                let host = self.alloca_b.build_load(pt, fp, "host").unwrap().into_pointer_value();
                let none = self.alloca_b.build_is_null(host, "").unwrap();
                let p = self.alloca_b.build_select(none, zero.as_pointer_value(), host, "cancel.word").unwrap().into_pointer_value();
                self.cancel_word = Some(p);
                p
            }
        };
        let v = self.b.build_load(i32t, word, "cancel").unwrap();
        let _ = v.as_instruction_value().unwrap().set_volatile(true);
        let set = self.b.build_int_compare(IntPredicate::NE, v.into_int_value(), i32t.const_zero(), "").unwrap();
        if line != 0 {
            self.abort_if_at(set, super::abi::STATUS_TIMEOUT, line);
            return;
        }
        self.stop_if(set, super::abi::STATUS_TIMEOUT);
    }

    /// Stops the CTA with `status` at the current instruction's line where `cond` holds;
    /// the builder goes on where it does not.
    pub fn abort_if(&mut self, cond: IntValue<'ctx>, status: u32) {
        let line = self.line();
        self.abort_if_at(cond, status, line);
    }

    /// [`FnEmitter::abort_if`] at source line `line`.
    pub fn abort_if_at(&mut self, cond: IntValue<'ctx>, status: u32, line: u32) {
        let stop = self.ctx().append_basic_block(self.f, "stop");
        let go = self.ctx().append_basic_block(self.f, "go.on");
        self.b.build_conditional_branch(cond, stop, go).unwrap();
        self.b.position_at_end(stop);
        self.abort_at(status, line);
        if let Some(dead) = self.b.get_insert_block().filter(|bb| bb.get_terminator().is_none()) {
            // `abort_at` leaves the builder in a fresh unreachable block.
            self.b.position_at_end(dead);
            self.b.build_unreachable().unwrap();
        }
        self.b.position_at_end(go);
    }

    /// Stops the CTA with `status` at the current instruction's line.
    pub fn abort_with(&mut self, status: u32) {
        let line = self.line();
        self.abort_at(status, line);
    }

    /// [`FnEmitter::abort_with`] at source line `line`.
    pub fn abort_at(&mut self, status: u32, line: u32) {
        if self.m.nvptx {
            super::nvvm::trap(self, status);
            return;
        }
        let i32t = self.ctx().i32_type();
        let p = self.cta_field_ptr(field::STATUS, None);
        self.b.build_store(p, i32t.const_int(status as u64, false)).unwrap();
        let p = self.cta_field_ptr(field::STATUS_LINE, None);
        self.b.build_store(p, i32t.const_int(line as u64, false)).unwrap();
        let lin = self.linear_tid();
        let p = self.cta_field_ptr(field::STATUS_THREAD, None);
        self.b.build_store(p, lin).unwrap();
        self.b.build_unconditional_branch(self.abort_bb).unwrap();
        self.after_terminator();
    }

    /// Whether no function is being inlined (the body's own registers are in scope).
    pub fn inlining_nothing(&self) -> bool {
        self.inlining.is_empty()
    }

    /// Whether an instruction's destination is a register of `nan_free` (of the function being
    /// emitted, not of one inlined into it).
    pub fn nan_free_dest(&self, op: &Operand) -> bool {
        matches!(op, Operand::Name(id, None) if self.inlining.is_empty() && self.nan_free.contains(id.name))
    }

    pub fn linear_tid(&mut self) -> IntValue<'ctx> {
        let nx = self.load_cta_u32(field::NTID, Some(0));
        let ny = self.load_cta_u32(field::NTID, Some(1));
        let b = &self.b;
        use crate::lanes::exact;
        let zy = exact(b.build_int_add(exact(b.build_int_mul(self.tid[2], ny, "").unwrap()), self.tid[1], "").unwrap());
        exact(b.build_int_add(exact(b.build_int_mul(zy, nx, "").unwrap()), self.tid[0], "").unwrap())
    }

    // ---------------------------------------------------------------- operands

    /// The type a register of type `ty` is kept in: `reg_t`, except that the predicates of a
    /// warp-path kernel are bytes (LLVM's loop vectorizer scalarizes every access to an array
    /// of `i1`, so per-lane predicates as bits would cost a branch per lane).
    pub fn storage_t(&self, ty: Type) -> IntType<'ctx> {
        if ty == Type::Pred && self.warp.is_some() {
            self.ctx().i8_type()
        } else {
            reg_t(self.ctx(), ty)
        }
    }

    /// Loads register storage `p` of type `ty` (a predicate as `i1`).
    pub fn load_reg(&self, p: PointerValue<'ctx>, ty: Type) -> IntValue<'ctx> {
        let t = self.storage_t(ty);
        let v = self.b.build_load(t, p, "").unwrap().into_int_value();
        if ty == Type::Pred && t.get_bit_width() != 1 {
            self.b.build_int_compare(IntPredicate::NE, v, t.const_zero(), "").unwrap()
        } else {
            v
        }
    }

    /// Stores `v` (of `reg_t(ty)`) to register storage `p` of type `ty`.
    pub fn store_reg(&self, p: PointerValue<'ctx>, ty: Type, v: IntValue<'ctx>) {
        let t = self.storage_t(ty);
        let v = if v.get_type() != t { self.b.build_int_z_extend(v, t, "").unwrap() } else { v };
        self.b.build_store(p, v).unwrap();
    }

    pub(crate) fn read_pred_name(&mut self, id: &Ident<'a>) -> R<IntValue<'ctx>> {
        match self.reg_read(id.name)? {
            Some((p, Type::Pred)) => Ok(self.load_reg(p, Type::Pred)),
            _ => Err(self.err(id.span, format!("`{}` is not a predicate register", id.name))),
        }
    }

    /// LLVM value type for an instruction type: iN for integers and bit types, `half`/`float`/
    /// `double` for floats, i32 for `f16x2` (two halves), i1 for predicates.
    pub fn val_t(&self, ty: Type) -> BasicTypeEnum<'ctx> {
        let c = self.ctx();
        match ty {
            Type::F16 => c.f16_type().into(),
            Type::F32 => c.f32_type().into(),
            Type::F64 => c.f64_type().into(),
            Type::Pred => c.bool_type().into(),
            t => int_t(c, t.bits()).into(),
        }
    }

    /// Bits of `v` as an integer of its width.
    pub fn to_bits(&self, v: BasicValueEnum<'ctx>) -> IntValue<'ctx> {
        match v {
            BasicValueEnum::IntValue(i) => i,
            BasicValueEnum::FloatValue(f) => {
                let bits = match f.get_type().get_bit_width() {
                    16 => 16,
                    32 => 32,
                    _ => 64,
                };
                self.b.build_bit_cast(f, int_t(self.ctx(), bits), "").unwrap().into_int_value()
            }
            _ => panic!("to_bits of a non-scalar"),
        }
    }

    pub fn from_bits(&self, v: IntValue<'ctx>, ty: Type) -> BasicValueEnum<'ctx> {
        match ty {
            Type::F16 | Type::F32 | Type::F64 => self.b.build_bit_cast(v, self.val_t(ty), "").unwrap(),
            _ => v.into(),
        }
    }

    /// Adjusts integer `v` to `bits` width: truncation, or sign/zero extension.
    pub fn resize(&self, v: IntValue<'ctx>, bits: u32, signed: bool) -> IntValue<'ctx> {
        let w = v.get_type().get_bit_width();
        let t = int_t(self.ctx(), bits);
        if w == bits {
            v
        } else if w > bits {
            self.b.build_int_truncate(v, t, "").unwrap()
        } else if signed {
            self.b.build_int_s_extend(v, t, "").unwrap()
        } else {
            self.b.build_int_z_extend(v, t, "").unwrap()
        }
    }

    /// Reads a source operand as a value of instruction type `ty` (9.4.1: wider registers
    /// are truncated to the instruction width; narrower ones are extended).
    pub fn read(&mut self, op: &'a Operand<'a>, ty: Type) -> R<BasicValueEnum<'ctx>> {
        match op {
            Operand::Name(id, comp) => {
                if let Some((p, rty)) = self.reg_read(id.name)? {
                    if comp.is_some() {
                        return Err(self.err(id.span, "vector components of registers are not supported"));
                    }
                    let raw = self.load_reg(p, rty);
                    if ty == Type::Pred {
                        if rty == Type::Pred {
                            return Ok(raw.into());
                        }
                        let z = raw.get_type().const_zero();
                        return Ok(self.b.build_int_compare(IntPredicate::NE, raw, z, "").unwrap().into());
                    }
                    if rty == Type::Pred {
                        let v = self.b.build_int_z_extend(raw, int_t(self.ctx(), ty.bits()), "").unwrap();
                        return Ok(self.from_bits(v, ty));
                    }
                    let v = self.resize(raw, ty.bits(), rty.is_signed());
                    return Ok(self.from_bits(v, ty));
                }
                if id.name.starts_with('%') && crate::syntax::validate::is_special_reg(id.name) {
                    let v = super::ops_misc::special_reg(self, id, *comp)?;
                    let v = self.resize(v, ty.bits(), false);
                    return Ok(self.from_bits(v, ty));
                }
                // A variable or function name: its address (6.4.4, 5.4.x). A kernel parameter's
                // in a 32-bit register is its offset in the parameter space (as a GPU gives it,
                // `mov.b32 %r, param; cvt.u64.u32; cvta.param.u64`), which `cvta.param` and a
                // 32-bit `.param` address add the parameter buffer to.
                if let (Some(VarLoc::KParam(off, _)), true) = (self.var(id.name), ty.bits() <= 32) {
                    if self.m.nvptx {
                        // PTX': the parameters' local copy, by its local-window address
                        // (`nvvm::cvta` of `.param` turns a 32-bit one into a generic one)
                        let base = self.params_base();
                        let i64t = self.ctx().i64_type();
                        let p = unsafe { self.b.build_in_bounds_gep(self.ctx().i8_type(), base, &[i64t.const_int(off as u64, false)], "").unwrap() };
                        let a = super::nvvm::local_address(self, p);
                        let v = self.resize(a, ty.bits(), false);
                        return Ok(self.from_bits(v, ty));
                    }
                    return Ok(self.from_bits(int_t(self.ctx(), ty.bits()).const_int(off as u64, false), ty));
                }
                let a = self.symbol_address(id)?;
                let v = self.resize(a, ty.bits(), false);
                Ok(self.from_bits(v, ty))
            }
            Operand::Imm(e) => self.imm(e, ty),
            Operand::Not(id) => {
                let v = self.read_pred_name(id)?;
                Ok(self.b.build_not(v, "").unwrap().into())
            }
            _ => Err(self.err(op.span(), "unsupported operand form here")),
        }
    }

    pub fn read_int(&mut self, op: &'a Operand<'a>, ty: Type) -> R<IntValue<'ctx>> {
        let v = self.read(op, ty)?;
        Ok(self.to_bits(v))
    }

    /// A constant operand converted to `ty`.
    pub fn imm(&mut self, e: &'a ast::Expr<'a>, ty: Type) -> R<BasicValueEnum<'ctx>> {
        use crate::syntax::eval::Const;
        // Symbols in constant expressions are addresses.
        if expr_has_sym(e) {
            return self.sym_expr(e, ty);
        }
        let c = crate::syntax::eval::eval(e, &|_| None).map_err(|er| self.err(er.span, er.msg))?;
        let ctx = self.ctx();
        Ok(match ty {
            Type::F32 => {
                let bits = match c {
                    Const::F32(f) => f.to_bits(),
                    Const::F64(f) => (f as f32).to_bits(),
                    Const::S64(v) => (v as f32).to_bits(),
                    Const::U64(v) => (v as f32).to_bits(),
                };
                self.from_bits(ctx.i32_type().const_int(bits as u64, false), Type::F32)
            }
            Type::F64 => {
                let bits = match c {
                    Const::F32(f) => (f as f64).to_bits(),
                    Const::F64(f) => f.to_bits(),
                    Const::S64(v) => (v as f64).to_bits(),
                    Const::U64(v) => (v as f64).to_bits(),
                };
                self.from_bits(ctx.i64_type().const_int(bits, false), Type::F64)
            }
            Type::F16 => {
                let bits = match c {
                    Const::F32(f) => super::half_bits(f) as u64,
                    Const::F64(f) => super::half_bits_f64(f) as u64,
                    c => c.as_u64() & 0xffff,
                };
                self.from_bits(ctx.i16_type().const_int(bits, false), Type::F16)
            }
            Type::Pred => ctx.bool_type().const_int((c.as_u64() != 0) as u64, false).into(),
            t => {
                let bits = match c {
                    Const::F32(f) => f.to_bits() as u64,
                    Const::F64(f) => f.to_bits(),
                    c => c.as_u64(),
                };
                int_t(ctx, t.bits()).const_int(bits, false).into()
            }
        })
    }

    fn sym_expr(&mut self, e: &'a ast::Expr<'a>, ty: Type) -> R<BasicValueEnum<'ctx>> {
        let i64t = self.ctx().i64_type();
        let v: IntValue<'ctx> = match e {
            // A register in an operand expression (`st.u64 [a], r + 1`, which ptxas accepts
            // though the spec's operands are registers or constants) stands for its value.
            ast::Expr::Sym(id) if self.reg(id.name).is_some() => {
                let (p, rty) = self.reg_read(id.name)?.expect("a register");
                if rty == Type::Pred || rty.is_float() {
                    return Err(self.err(id.span, format!("`{}` is a .{} register; only integer registers may appear in an operand expression", id.name, rty.as_str())));
                }
                let v = self.b.build_load(reg_t(self.ctx(), rty), p, "").unwrap().into_int_value();
                self.resize(v, 64, rty.is_signed())
            }
            ast::Expr::Sym(id) | ast::Expr::Generic(id, _) => {
                let a = self.symbol_address(id)?;
                self.resize(a, 64, false)
            }
            ast::Expr::Binary(op @ (ast::BinOp::Add | ast::BinOp::Sub), a, b, _) => {
                let x = self.sym_expr(a, Type::U64)?.into_int_value();
                let y = self.sym_expr(b, Type::U64)?.into_int_value();
                if *op == ast::BinOp::Add {
                    self.b.build_int_add(x, y, "").unwrap()
                } else {
                    self.b.build_int_sub(x, y, "").unwrap()
                }
            }
            other => {
                let c = crate::syntax::eval::eval(other, &|_| None).map_err(|er| self.err(er.span, format!("{} (only `symbol ± constant` address expressions are supported)", er.msg)))?;
                i64t.const_int(c.as_u64(), false)
            }
        };
        Ok(self.resize(v, ty.bits().max(8), false).into())
    }

    /// Whether `name` is a `.texref`, `.surfref` or `.samplerref` parameter (its value is a
    /// handle, see `ops_tex`).
    pub fn is_ref_param(&self, name: &str) -> bool {
        matches!(self.vars.get(name), Some(VarLoc::KParam(_, t) | VarLoc::Ptr(_, t)) if matches!(t, Type::TexRef | Type::SurfRef | Type::SamplerRef))
    }

    /// Where variable `name` is: its entry in `vars`, except that a variable with one copy per
    /// lane on the warp path (`codegen::warp::lane_var`) is the copy of the lane being emitted.
    pub fn var(&self, name: &str) -> Option<VarLoc<'ctx>> {
        match self.vars.get(name).copied()? {
            VarLoc::Ptr(p, t) => Some(VarLoc::Ptr(super::warp::lane_var(self, p), t)),
            loc => Some(loc),
        }
    }

    /// The address of a named variable or function, in the variable's own state space
    /// (shared: window offset; others: host address), as an i64.
    pub fn symbol_address(&mut self, id: &Ident<'a>) -> R<IntValue<'ctx>> {
        let i64t = self.ctx().i64_type();
        if let Some(loc) = self.var(id.name) {
            return Ok(match loc {
                VarLoc::Ptr(p, _) if self.m.nvptx && self.local_ranges.iter().any(|r| r.0 == p) => super::nvvm::local_address(self, p),
                VarLoc::Ptr(p, _) => self.b.build_ptr_to_int(p, i64t, "").unwrap(),
                VarLoc::Shared(off, _) => self.shared_offset_value(off),
                VarLoc::KParam(off, _) => {
                    let base = self.params_base();
                    let p = unsafe { self.b.build_in_bounds_gep(self.ctx().i8_type(), base, &[i64t.const_int(off as u64, false)], "").unwrap() };
                    self.b.build_ptr_to_int(p, i64t, "").unwrap()
                }
            });
        }
        match self.m.globals.get(id.name).copied() {
            Some(GlobalSym::Mem(g)) => Ok(self.b.build_ptr_to_int(g.as_pointer_value(), i64t, "").unwrap()),
            Some(GlobalSym::Shared(off)) => Ok(self.shared_offset_value(off)),
            Some(GlobalSym::Func(f)) => Ok(self.b.build_ptr_to_int(f.as_global_value().as_pointer_value(), i64t, "").unwrap()),
            // PTX ISA 4.6 (Table 3): the predefined constant WARP_SZ, the warp size.
            None if id.name == "WARP_SZ" => Ok(i64t.const_int(32, false)),
            None => Err(self.err(id.span, format!("undeclared name `{}`", id.name))),
        }
    }

    /// Shared-window offset of a static variable, or of dynamic shared memory (`u32::MAX`),
    /// which starts at the end of the static window.
    fn shared_offset_value(&mut self, off: u32) -> IntValue<'ctx> {
        let i64t = self.ctx().i64_type();
        let v = if off == u32::MAX {
            i64t.const_int(self.m.shared_size as u64, false)
        } else {
            i64t.const_int(off as u64, false)
        };
        // From rank 0's window in a module that reaches other CTAs' (`shared_base`).
        if self.m.dsmem && !self.m.nvptx {
            let (_, mine) = self.cluster_window();
            return self.b.build_int_add(mine, v, "").unwrap();
        }
        v
    }

    /// Writes `v` (of instruction type `ty`) to a destination operand. Wider registers get the
    /// value sign-extended for signed types and zero-extended otherwise (9.4.1, Table 25).
    pub fn write(&mut self, op: &'a Operand<'a>, ty: Type, v: BasicValueEnum<'ctx>) -> R<()> {
        if let Operand::Sink(_) = op {
            return Ok(());
        }
        let bits = if ty == Type::Pred { v.into_int_value() } else { self.to_bits(v) };
        let bits = if ty == Type::Pred || !ty.is_signed() { bits } else { bits };
        match op {
            Operand::Name(id, None) => {
                let Some((p, rty)) = self.reg(id.name) else {
                    return Err(self.err(id.span, format!("destination `{}` is not a register", id.name)));
                };
                let val = if rty == Type::Pred {
                    if bits.get_type().get_bit_width() == 1 {
                        bits
                    } else {
                        self.b.build_int_compare(IntPredicate::NE, bits, bits.get_type().const_zero(), "").unwrap()
                    }
                } else if bits.get_type().get_bit_width() == 1 {
                    self.b.build_int_z_extend(bits, int_t(self.ctx(), rty.bits()), "").unwrap()
                } else {
                    self.resize(bits, rty.bits(), ty.is_signed())
                };
                self.store_reg(p, rty, val);
                Ok(())
            }
            _ => Err(self.err(op.span(), "destination must be a register")),
        }
    }

    /// Writes raw register bits (for call return copies).
    fn write_raw(&mut self, op: &'a Operand<'a>, ty: Type, v: IntValue<'ctx>) -> R<()> {
        if let Operand::Name(id, None) = op {
            if let Some((p, rty)) = self.reg(id.name) {
                self.store_reg(p, rty, v);
                return Ok(());
            }
            if let Some(VarLoc::Ptr(_, _)) = self.vars.get(id.name) {
                return Ok(());
            }
        }
        let _ = ty;
        Err(self.err(op.span(), "bad call return operand"))
    }

    // ---------------------------------------------------------------- helpers for families

    pub fn intrinsic(&self, name: &str, types: &[BasicTypeEnum<'ctx>], args: &[BasicValueEnum<'ctx>]) -> BasicValueEnum<'ctx> {
        // NVPTX has no libm: the approximate transcendentals are its own instructions.
        if self.m.nvptx && types.len() == 1 && types[0] == self.ctx().f32_type().into() {
            let nv = match name {
                "llvm.sin" => Some("llvm.nvvm.sin.approx.f"),
                "llvm.cos" => Some("llvm.nvvm.cos.approx.f"),
                "llvm.exp2" => Some("llvm.nvvm.ex2.approx.f"),
                "llvm.log2" => Some("llvm.nvvm.lg2.approx.f"),
                _ => None,
            };
            if let Some(nv) = nv {
                return self.intrinsic(nv, &[], args);
            }
        }
        let call = self.try_intrinsic(name, types, args).unwrap_or_else(|| panic!("LLVM intrinsic {name}"));
        call.try_as_basic_value().basic().expect("intrinsic returns a value")
    }

    /// Calls the LLVM intrinsic `name` (overloaded on `types`); None when LLVM has no such
    /// intrinsic, for the forms whose name is built from the instruction.
    pub fn try_intrinsic(&self, name: &str, types: &[BasicTypeEnum<'ctx>], args: &[BasicValueEnum<'ctx>]) -> Option<inkwell::values::CallSiteValue<'ctx>> {
        let decl = Intrinsic::find(name)?.get_declaration(&self.m.module, types)?;
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|a| (*a).into()).collect();
        Some(self.b.build_call(decl, &args, "").unwrap())
    }

    /// %laneid (PTX ISA 10.3): the linear thread index modulo 32.
    pub fn lane_id(&mut self) -> IntValue<'ctx> {
        let l = self.linear_tid();
        self.b.build_and(l, self.ctx().i32_type().const_int(31, false), "").unwrap()
    }

    /// Memory pointer for an address operand in state space `space` (None = generic).
    pub fn address(&mut self, op: &'a Operand<'a>, space: Option<StateSpace>) -> R<PointerValue<'ctx>> {
        let i8t = self.ctx().i8_type();
        let i64t = self.ctx().i64_type();
        let Operand::Mem(a) = op else {
            if let Operand::Index(id, ..) = op {
                // Constant indices became addresses in syntax::hints::array_operands.
                return Err(self.err(op.span(), format!("ptxr indexes arrays by constants only; compute the address of `{}[...]` into a register first", id.name)));
            }
            return Err(self.err(op.span(), "expected an address `[...]`"));
        };
        let off = i64t.const_int(a.offset as u64, true);
        let Some(base) = a.base else {
            return Ok(self.space_ptr(off, space));
        };
        if let Some((p, rty)) = self.reg_read(base.name)? {
            let v = self.b.build_load(reg_t(self.ctx(), rty), p, "").unwrap().into_int_value();
            if space == Some(StateSpace::Param) && rty.bits() <= 32 && self.kernel_param_space() {
                // a kernel parameter's 32-bit address: its offset in the parameter buffer (in
                // PTX', the local-window address of the parameters' copy)
                let v32 = self.resize(v, 32, false);
                let v32 = self.b.build_int_add(v32, self.b.build_int_truncate(off, self.ctx().i32_type(), "").unwrap(), "").unwrap();
                let space = if self.m.nvptx { Some(StateSpace::Local) } else { space };
                return Ok(self.space_ptr(v32, space));
            }
            if !self.m.nvptx && matches!(space, Some(StateSpace::Local | StateSpace::Const)) {
                if let Some(anchor) = self.space_anchor(space) {
                    // A 32-bit `.local`/`.const` address (`mov.u32 %r, lv`, 6.4.1's `mov.u32 p,
                    // tbl`; `cvt.u32.u64` of one, 9.7.8.13), or one widened again with its
                    // high half zero (no host address is that low), holds the low half of the
                    // host address: the variable nearest to the space's anchor with those low
                    // bits.
                    let i32t = self.ctx().i32_type();
                    let v32 = self.resize(v, 32, false);
                    let v32 = self.b.build_int_add(v32, self.b.build_int_truncate(off, i32t, "").unwrap(), "").unwrap();
                    let a64 = self.b.build_ptr_to_int(anchor, i64t, "").unwrap();
                    let d = self.b.build_int_sub(v32, self.b.build_int_truncate(a64, i32t, "").unwrap(), "").unwrap();
                    let host = self.b.build_int_add(a64, self.b.build_int_s_extend(d, i64t, "").unwrap(), "").unwrap();
                    // Every `.const` variable lies within 2 GiB of the anchor, so a full 64-bit
                    // address widens to itself. A `.local` one may not (a caller's frame passed
                    // to a function), so only one with a zero high half is widened.
                    if rty.bits() <= 32 || space == Some(StateSpace::Const) {
                        return Ok(self.space_ptr(host, space));
                    }
                    let v64 = self.resize(v, 64, false);
                    let hi = self.b.build_right_shift(v64, i64t.const_int(32, false), false, "").unwrap();
                    let low = self.b.build_int_compare(inkwell::IntPredicate::EQ, hi, i64t.const_zero(), "").unwrap();
                    let full = self.b.build_int_add(v64, off, "").unwrap();
                    let a = self.b.build_select(low, host, full, "").unwrap().into_int_value();
                    return Ok(self.space_ptr(a, space));
                }
            }
            let v = self.resize(v, 64, false);
            let v = self.b.build_int_add(v, off, "").unwrap();
            return Ok(self.space_ptr(v, space));
        }
        // A variable: its own storage plus the offset.
        if let Some(loc) = self.var(base.name) {
            let p = match loc {
                VarLoc::Ptr(p, _) => p,
                VarLoc::KParam(o, _) => {
                    let base = self.params_base();
                    unsafe { self.b.build_in_bounds_gep(i8t, base, &[i64t.const_int(o as u64, false)], "").unwrap() }
                }
                VarLoc::Shared(o, _) => {
                    let ov = self.shared_offset_value(o);
                    let v = self.b.build_int_add(ov, off, "").unwrap();
                    return Ok(self.space_ptr(v, Some(StateSpace::Shared)));
                }
            };
            return Ok(unsafe { self.b.build_gep(i8t, p, &[off], "").unwrap() });
        }
        match self.m.globals.get(base.name).copied() {
            Some(GlobalSym::Mem(g)) => Ok(unsafe { self.b.build_gep(i8t, g.as_pointer_value(), &[off], "").unwrap() }),
            Some(GlobalSym::Shared(o)) => {
                let ov = self.shared_offset_value(o);
                let v = self.b.build_int_add(ov, off, "").unwrap();
                Ok(self.space_ptr(v, Some(StateSpace::Shared)))
            }
            _ => Err(self.err(base.span, format!("undeclared address base `{}`", base.name))),
        }
    }

    /// Turns an address value of `space` into a host pointer.
    pub fn space_ptr(&mut self, v: IntValue<'ctx>, space: Option<StateSpace>) -> PointerValue<'ctx> {
        if self.m.nvptx {
            return super::nvvm::space_ptr(self, v, space);
        }
        let pt = self.ctx().ptr_type(AddressSpace::default());
        if space == Some(StateSpace::Param) && v.get_type().get_bit_width() <= 32 && self.kernel_param_space() {
            // a 32-bit kernel-parameter address: an offset in the parameter buffer
            let base = self.params_base();
            let v64 = self.resize(v, 64, false);
            return unsafe { self.b.build_gep(self.ctx().i8_type(), base, &[v64], "").unwrap() };
        }
        if space == Some(StateSpace::Shared) {
            // A shared address is an offset from `shared_base` (the CTA's window, or rank 0's
            // of the cluster). A 64-bit one is used as it is (one with high bits set is
            // outside the windows either way); truncating it would hide `base + 4*tid` from
            // LLVM's scalar evolution. A 32-bit one is unsigned.
            let base = self.shared_base();
            let v64 = self.resize(v, 64, false);
            return unsafe { self.b.build_gep(self.ctx().i8_type(), base, &[v64], "").unwrap() };
        }
        // An alloca (a `.local` variable outside kernels with synchronization, a `.param` of
        // a function) whose address the function takes is reached through `inttoptr`: a
        // pointer derived from the base below, loaded before the address escaped, may not
        // access it as far as LLVM is concerned.
        if self.alloca_escapes && matches!(space, None | Some(StateSpace::Local)) {
            return self.b.build_int_to_ptr(v, pt, "").unwrap();
        }
        // A PTX address is an integer. `inttoptr` would hide it from LLVM's scalar evolution,
        // so a lane loop's `ld`/`st` at `base + 4*tid` would not be seen as consecutive
        // and would not vectorize. Instead the address is `gep i8, B, v - B` from one
        // opaque base pointer B of the function (a pointer loaded from the launch context:
        // its value does not matter, the offset undoes it, and being loaded it may point
        // anywhere, so alias analysis assumes nothing about it).
        let (bp, bi) = match self.mem_base {
            Some(b) => b,
            None => {
                let t = self.cta_type();
                let b = &self.alloca_b;
                let fp = b.build_struct_gep(t, self.cta, field::PARAMS, "").unwrap();
                let bp = b.build_load(pt, fp, "membase").unwrap().into_pointer_value();
                let bi = b.build_ptr_to_int(bp, self.ctx().i64_type(), "membase.i").unwrap();
                self.mem_base = Some((bp, bi));
                (bp, bi)
            }
        };
        let off = self.b.build_int_sub(v, bi, "").unwrap();
        unsafe { self.b.build_gep(self.ctx().i8_type(), bp, &[off], "").unwrap() }
    }

    /// A pointer into `.local` (this function's first `.local` variable) or `.const` memory
    /// (the module's first `.const` variable), from which 32-bit addresses of the space are
    /// widened (see `address`): the space's variables lie within 2 GiB of it.
    fn space_anchor(&self, space: Option<StateSpace>) -> Option<PointerValue<'ctx>> {
        match space {
            Some(StateSpace::Local) => self.local_ranges.first().map(|r| r.0),
            Some(StateSpace::Const) => self.const_vars().first().map(|r| r.0),
            _ => None,
        }
    }

    /// The module's `.const` variables: storage and size in bytes.
    pub(crate) fn const_vars(&self) -> Vec<(PointerValue<'ctx>, u32)> {
        self.m
            .ast
            .items
            .iter()
            .filter_map(|it| match it {
                ast::Item::Var(v) if v.space == StateSpace::Const => match self.m.globals.get(v.name.name) {
                    Some(GlobalSym::Mem(g)) => Some((g.as_pointer_value(), decl_size(v).max(1))),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    pub fn const_int(&self, ty: Type, v: u64) -> IntValue<'ctx> {
        int_t(self.ctx(), ty.bits()).const_int(v, false)
    }
}

/// Whether `body` takes the address of a variable that `FnEmitter` keeps in an alloca: a
/// `.local` or `.param` variable of the function (or a `.param` of a `.func`) named as a
/// value rather than inside `[...]`.
fn alloca_escapes(f: &ast::Function, body: &[Stmt]) -> bool {
    fn vars<'a>(body: &'a [Stmt<'a>], out: &mut Vec<&'a str>) {
        for s in body {
            match s {
                Stmt::Var(v) if matches!(v.space, StateSpace::Local | StateSpace::Param) => out.push(v.name.name),
                Stmt::Block(b, _) => vars(b, out),
                _ => {}
            }
        }
    }
    fn named(op: &Operand, names: &[&str]) -> bool {
        match op {
            Operand::Name(id, _) => names.contains(&id.name),
            Operand::Vector(v, _) | Operand::List(v, _) => v.iter().any(|o| named(o, names)),
            Operand::Imm(e) => expr_names(e, names),
            _ => false,
        }
    }
    fn expr_names(e: &ast::Expr, names: &[&str]) -> bool {
        match e {
            ast::Expr::Sym(id) => names.contains(&id.name),
            ast::Expr::Unary(_, a, _) => expr_names(a, names),
            ast::Expr::Binary(_, a, b, _) => expr_names(a, names) || expr_names(b, names),
            ast::Expr::Cond(a, b, c, _) => expr_names(a, names) || expr_names(b, names) || expr_names(c, names),
            _ => false,
        }
    }
    fn any<'a>(body: &'a [Stmt<'a>], names: &[&str]) -> bool {
        body.iter().any(|s| match s {
            Stmt::Instr(i) => i.opcode.name != "call" && i.operands.iter().any(|o| named(o, names)),
            Stmt::Block(b, _) => any(b, names),
            _ => false,
        })
    }
    let mut names = Vec::new();
    vars(body, &mut names);
    if !f.entry {
        names.extend(f.params.iter().chain(&f.rets).filter(|p| p.space == StateSpace::Param).map(|p| p.name.name));
    }
    !names.is_empty() && any(body, &names)
}

fn expr_has_sym(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Sym(id) => id.name != "WARP_SZ",
        ast::Expr::Generic(..) => true,
        ast::Expr::Unary(_, a, _) => expr_has_sym(a),
        ast::Expr::Binary(_, a, b, _) => expr_has_sym(a) || expr_has_sym(b),
        ast::Expr::Cond(a, b, c, _) => expr_has_sym(a) || expr_has_sym(b) || expr_has_sym(c),
        _ => false,
    }
}

/// `opcode.mod.mod` as written.
pub fn instr_name(i: &Instr) -> String {
    let mut s = i.opcode.name.to_string();
    for m in &i.mods {
        s.push('.');
        s.push_str(m);
    }
    s
}

/// The types named in an instruction's modifiers, in order.
pub fn types_of(i: &Instr) -> smallvec::SmallVec<[Type; 3]> {
    i.mods.iter().filter_map(|m| Type::from_str(m)).collect()
}
