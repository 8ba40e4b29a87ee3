//! LLVM-IR passes and pass pipelines of ptxr (included into the crate as `ptxr::passes`).
//!
//! - [`pipeline_stages`]: the new-pass-manager pipeline run for each optimization level.
//! - [`lane_locals`]: lane arrays that hold a value only within one run of a block made one
//!   scalar each (before the pipeline).
//! - [`lane_stores`]: masked stores of whole lane arrays made whole stores (between stages).
//! - [`lane_shadow`]: lane arrays that a loop indexes by lane get a second copy for that loop,
//!   so that SROA makes them registers everywhere else (between stages, after `lane_stores`).
//! - [`coherent`]: masked loads and stores of memory get a plain access for when every lane
//!   is on (between stages, after `lane_shadow`; not where masked accesses are cheap).
//! - [`uniform_gathers`]: masked gathers whose lanes all read one address made one load
//!   and a broadcast (between stages).
//! - [`parallel_lanes`]: marks the loops over the threads of a CTA as parallel loops, so that
//!   LLVM's loop vectorizer turns per-thread code into SIMD code without proving that the
//!   threads' memory accesses are independent (PTX says they are, up to races).

pub mod coherent;
pub mod lane_locals;
pub mod lane_shadow;
pub mod lane_stores;
pub mod parallel_lanes;
pub mod uniform_gathers;

use inkwell::llvm_sys::prelude::{LLVMBasicBlockRef, LLVMModuleRef, LLVMValueRef};

/// Every function of module `m` with a body and each of its blocks, in order.
pub(crate) unsafe fn all_blocks(m: LLVMModuleRef) -> Vec<(LLVMValueRef, LLVMBasicBlockRef)> {
    use inkwell::llvm_sys::core::*;
    let mut out = Vec::new();
    let mut f = LLVMGetFirstFunction(m);
    while !f.is_null() {
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            out.push((f, bb));
            bb = LLVMGetNextBasicBlock(bb);
        }
        f = LLVMGetNextFunction(f);
    }
    out
}

/// The pass pipeline for `-O<opt>`, in the stages it runs in: LLVM's default pipelines (the
/// loop vectorizer and SLP vectorizer run from `-O2` on); at `-O3` for a CPU, [`O3`] and
/// [`O3_LATE`] with [`lane_stores::unmask`], [`lane_shadow::shadow`] and, where masked
/// accesses are slow, [`coherent::split`] between them (after the vectorizers, before the
/// last SROA; `codegen::target::optimize`). `cpu: false`, for NVPTX, keeps LLVM's own, where the target adds passes of
/// its own such as NVVMReflect.
///
/// `unswitch`: loop unswitching may copy a loop for an invariant condition that is not a
/// loop exit (LLVM's non-trivial unswitching, on at `-O3`). The per-thread scheduler's
/// kernels need it (their loops over threads test the resume point and the phase: a tiled
/// sgemm in 16x16 blocks runs 1.3x slower without it, a shared-memory histogram 1.25x),
/// while the warp path's kernels run as fast without it (every kernel of the benchmark within
/// its run-to-run spread) and their optimization and code generation take less time (14% of
/// the compile time of NVRTC's PTX, most of it on the warp path's phases between barriers).
///
/// `lean`: the module's kernels all take the warp path. Its pipeline leaves out three passes
/// that do nothing for the warp path's code but cost time on it: dead-store elimination (its
/// stores go to lane arrays that SROA later makes registers, and to memory that the kernel
/// reads), `loop-idiom` (which turns the lane loops that zero a register into `memset`s of
/// lane arrays) and the SLP vectorizer (the lane loops are vectorized 32 lanes wide already).
/// benches/mma64's warp version: 12, 3 and 9 ms less of about 100 ms of optimization; its
/// object is 11% smaller; the kernel benchmark runs as fast (same run, 2 x 5 repetitions
/// each way: every kernel within its run-to-run spread).
pub fn pipeline_stages(opt: u32, cpu: bool, unswitch: bool, lean: bool) -> Vec<String> {
    // PTXR_PASSES="...": a pass pipeline of LLVM's textual syntax in place of ptxr's (a
    // developer's aid for measuring what each pass costs and brings).
    if let Ok(p) = std::env::var("PTXR_PASSES") {
        return vec![p];
    }
    if opt >= 3 && cpu {
        let mut o3 = O3.concat();
        if !unswitch {
            o3 = o3.replace("simple-loop-unswitch<nontrivial;trivial>", "simple-loop-unswitch<no-nontrivial;trivial>");
        }
        if lean {
            for (pass, without) in [("memcpyopt,dse,", "memcpyopt,"), ("loop(loop-idiom,", "loop("), ("slp-vectorizer,", "")] {
                debug_assert!(o3.contains(pass));
                o3 = o3.replace(pass, without);
            }
        }
        return vec![o3, O3_LATE.concat()];
    }
    vec![format!("default<O{}>", opt.min(3))]
}

/// LLVM 19's `default<O3>` (`opt -passes='default<O3>' -print-pipeline-passes`) without
/// `indvars` (IndVarSimplify). ptxr's loops are already in the form it makes: lane loops count
/// 0..32, and the loops of a thread come from PTX whose compiler canonicalized them. It cost
/// 9% of the optimization time of NVRTC's PTX (its scalar-evolution queries on the lane loops
/// of every region), and the kernel benchmark runs as fast without it (same run, 2 x 5
/// repetitions each; every kernel within the run-to-run spread). Nor
/// `called-value-propagation`, which only annotates indirect calls with their possible
/// callees (!callees), something ptxr's code hardly has: 7 ms of an mma-heavy kernel's
/// optimization (its sparse solver walks every instruction).
const O3: &[&str] = &[
    "annotation2metadata,forceattrs,inferattrs,coro-early,function<eager-inv>(ee-instrument<>,",
    "lower-expect,",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,",
    "sroa<modify-cfg>,early-cse<>,callsite-splitting),openmp-opt,ipsccp,",
    "globalopt,function<eager-inv>(mem2reg,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>),",
    "always-inline,require<globals-aa>,function(invalidate<aa>),require<profile-summary>,",
    "cgscc(devirt<4>(inline,function-attrs<skip-non-recursive-function-attrs>,argpromotion,",
    "openmp-opt-cgscc,function<eager-inv;no-rerun>(sroa<modify-cfg>,early-cse<memssa>,",
    "speculative-execution<only-if-divergent-target>,jump-threading,correlated-propagation,",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,aggressive-instcombine,",
    "libcalls-shrinkwrap,tailcallelim,",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,",
    "reassociate,constraint-elimination,loop-mssa(loop-instsimplify,loop-simplifycfg,",
    "licm<no-allowspeculation>,loop-rotate<header-duplication;no-prepare-for-lto>,",
    "licm<allowspeculation>,simple-loop-unswitch<nontrivial;trivial>),",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,loop(loop-idiom,",
    "simple-loop-unswitch<nontrivial;trivial>,loop-deletion,loop-unroll-full),sroa<modify-cfg>,",
    "vector-combine,mldst-motion<no-split-footer-bb>,gvn<>,sccp,bdce,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,jump-threading,",
    "correlated-propagation,adce,memcpyopt,dse,move-auto-init,loop-mssa(licm<allowspeculation>),",
    "coro-elide,",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>),function-attrs,",
    "function(require<should-not-run-function-passes>),coro-split)),deadargelim,coro-cleanup,",
    "globalopt,globaldce,elim-avail-extern,rpo-function-attrs,recompute-globalsaa,",
    "function<eager-inv>(float2int,lower-constant-intrinsics,chr,",
    "loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),loop-distribute,",
    "inject-tli-mappings,loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,",
    "infer-alignment,loop-load-elim,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,",
    "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,",
    "slp-vectorizer,vector-combine,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,loop-unroll<O3>,",
    "transform-warning)",
];

/// Run between [`O3`] and [`O3_LATE`] on the warp path's functions only: LLVM's O3 runs no
/// redundant-load elimination after its vectorizers, so the loads of the lane state (`next`,
/// the lane arrays) that the vectorized lane loops leave stay (each loop reads `next` back
/// from memory right after the one before stored it). EarlyCSE with MemorySSA forwards
/// them: block scan, one core, same run, 0.081-0.085 -> 0.079 s. GVN there forwarded more
/// (0.075 s) but made the block bitonic sort 1.3x slower (1.07 -> 1.41 s; its load PRE);
/// DSE cost 15 ms of an mma-heavy kernel's optimization for nothing measurable. The
/// per-thread path's kernels get neither (a shared-memory histogram's scheduler loop ran
/// 1.3x slower with GVN).
pub const WARP_LATE: &str = "function<eager-inv>(early-cse<memssa>)";

/// The rest of [`O3`], after [`lane_stores::unmask`].
const O3_LATE: &[&str] = &[
    "function<eager-inv>(sroa<preserve-cfg>,infer-alignment,",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,",
    "loop-mssa(licm<allowspeculation>),alignment-from-assumptions,loop-sink,instsimplify,",
    "div-rem-pairs,tailcallelim,",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>),",
    "globaldce,constmerge,cg-profile,rel-lookup-table-converter,function(annotation-remarks),",
    "verify",
];
