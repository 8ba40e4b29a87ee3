//! Parallel code generation: a module's kernels are optimized and compiled on several threads.
//!
//! LLVM optimizes and generates code one module at a time, and a module's functions share its
//! context, so a module is split into *partitions* that are compiled in contexts of their own,
//! one thread each, into one object each; the objects are linked together afterwards (the
//! caller's system link, or `cc -r` for a single object file). This is how LLVM's own parallel
//! back ends (ThinLTO, `-fsplit-lto-unit`, rustc's codegen units) split work.
//!
//! - **Roots** are the functions that must exist once: those with external linkage (kernels),
//!   internal functions used other than by direct calls (address taken), and internal
//!   `noinline` functions (the per-thread versions of warp-path kernels). The other internal
//!   functions (device functions, warp-level helpers) are copied into every partition that
//!   calls them, so that LLVM inlines and specializes them there exactly as it does in one
//!   module.
//! - Roots are packed onto the threads by the size of what they bring (largest first onto the
//!   least loaded thread).
//! - Internal variables and internal roots get external linkage with hidden visibility and a
//!   name made unique by a hash of the module (two ptxr objects linked into one program do not
//!   clash); partition 0 defines them. The others declare them; constant variables keep their
//!   initializer there as `available_externally`, so loads from them still fold.
//!
//! Partition 0 is the module itself, carved in place on the calling thread while the others
//! read the bitcode back (benches/mma64's warp kernel, the longest partition, starts 10-18 ms
//! earlier): on threads of their own, or on one thread where partition 0 outweighs them all.
//!
//! Splitting pays only when there is more than one root of some size; small modules and
//! single-kernel modules compile in one piece. `PTXR_JOBS=N` sets the number of threads
//! (default: the machine's available parallelism; 1 compiles every module in one piece).

use super::target::{self, TargetKind};
use inkwell::context::Context;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMLinkage, LLVMVisibility};
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use std::collections::{HashMap, HashSet};

/// Modules smaller than this many LLVM instructions (before optimization) compile in one piece:
/// the time a thread saves would not pay for writing and reading the module again; roots of
/// under a quarter of it do not count towards a split (they go with the others).
const MIN_SPLIT_INSTRS: usize = 1200;

/// Threads for code generation: `PTXR_JOBS`, else the machine's available parallelism.
pub fn jobs() -> usize {
    if let Some(n) = std::env::var("PTXR_JOBS").ok().and_then(|s| s.trim().parse::<usize>().ok()) {
        return n.max(1);
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn name_of(v: LLVMValueRef) -> String {
    let mut len = 0;
    let p = unsafe { LLVMGetValueName2(v, &mut len) };
    if p.is_null() {
        return String::new();
    }
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
    String::from_utf8_lossy(bytes).into_owned()
}

fn set_name(v: LLVMValueRef, name: &str) {
    unsafe { LLVMSetValueName2(v, name.as_ptr() as *const _, name.len()) };
}

fn is_local(v: LLVMValueRef) -> bool {
    matches!(unsafe { LLVMGetLinkage(v) }, LLVMLinkage::LLVMInternalLinkage | LLVMLinkage::LLVMPrivateLinkage)
}

fn functions(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut f = unsafe { LLVMGetFirstFunction(m) };
    while !f.is_null() {
        out.push(f);
        f = unsafe { LLVMGetNextFunction(f) };
    }
    out
}

fn globals(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut g = unsafe { LLVMGetFirstGlobal(m) };
    while !g.is_null() {
        out.push(g);
        g = unsafe { LLVMGetNextGlobal(g) };
    }
    out
}

fn is_definition(f: LLVMValueRef) -> bool {
    unsafe { LLVMIsDeclaration(f) == 0 }
}

/// The functions that `f` calls directly, and its number of instructions.
fn callees_and_size(f: LLVMValueRef) -> (Vec<LLVMValueRef>, usize) {
    let mut callees = Vec::new();
    let mut n = 0;
    unsafe {
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                n += 1;
                if !LLVMIsACallInst(i).is_null() {
                    let c = LLVMGetCalledValue(i);
                    if !c.is_null() && !LLVMIsAFunction(c).is_null() {
                        callees.push(c);
                    }
                }
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
    }
    (callees, n)
}

/// Whether every use of `f` is a direct call of it.
fn only_called(f: LLVMValueRef) -> bool {
    unsafe {
        let mut u = LLVMGetFirstUse(f);
        while !u.is_null() {
            let user = LLVMGetUser(u);
            if LLVMIsACallInst(user).is_null() || LLVMGetCalledValue(user) != f {
                return false;
            }
            u = LLVMGetNextUse(u);
        }
    }
    true
}

fn has_fn_attr(f: LLVMValueRef, name: &str) -> bool {
    let kind = unsafe { LLVMGetEnumAttributeKindForName(name.as_ptr() as *const _, name.len()) };
    unsafe { !LLVMGetEnumAttributeAtIndex(f, inkwell::llvm_sys::LLVMAttributeFunctionIndex, kind).is_null() }
}

fn has_str_attr(f: LLVMValueRef, name: &str) -> bool {
    unsafe { !LLVMGetStringAttributeAtIndex(f, inkwell::llvm_sys::LLVMAttributeFunctionIndex, name.as_ptr() as *const _, name.len() as u32).is_null() }
}

/// Whether internal function `f` is copied into the partitions that call it (only called
/// directly, and inlinable); other definitions are roots, defined by one partition.
fn copied(f: LLVMValueRef) -> bool {
    is_local(f) && only_called(f) && !has_fn_attr(f, "noinline")
}

/// How a module is split: the functions each partition defines.
struct Plan {
    parts: Vec<HashSet<LLVMValueRef>>,
    /// The partition of `optnone` functions, if any: LLVM's optimizations skip them but its
    /// code generator at -O3 does not (the greedy register allocator is 40% of the code
    /// generation of benches/mma64's per-thread fallback); at -O0 their code takes a third
    /// of the time (0.13 s -> 0.05 s), as it would have had LLVM honoured `optnone` there.
    /// The partition runs the -O0 pipeline too: the -O3 one skips `optnone` functions but
    /// still walks them in its module passes (25 ms of benches/mma64's fallback, on the
    /// core that the kernel's own partition shares), and the fallback is cold code.
    cold: Option<usize>,
    /// Each partition's estimated cost (LLVM instructions, weighted as in [`plan`]).
    weights: Vec<usize>,
}

/// Decides the partitions of `m` for `jobs` threads; `None`: compile it in one piece.
fn plan(m: LLVMModuleRef, jobs: usize, min_instrs: usize) -> Option<Plan> {
    if jobs < 2 {
        return None;
    }
    let defs: Vec<LLVMValueRef> = functions(m).into_iter().filter(|&f| is_definition(f)).collect();
    let mut size = HashMap::new();
    let mut calls = HashMap::new();
    for &f in &defs {
        let (c, n) = callees_and_size(f);
        // A warp-path function (`codegen::warp`: lane loops that LLVM vectorizes 32 lanes
        // wide, marked by its vector width preference) costs LLVM about three times as much
        // per instruction as scalar code: benches/mma64's warp version and its per-thread
        // fallback, 5.8k and 15.5k instructions, take 186 ms and 124 ms to optimize and compile.
        let n = if has_str_attr(f, super::warp::VECTOR_WIDTH_ATTR) { 3 * n } else { n };
        size.insert(f, n);
        calls.insert(f, c);
    }
    let total: usize = size.values().sum();
    if total < min_instrs {
        return None;
    }
    let copied: HashSet<LLVMValueRef> = defs.iter().copied().filter(|&f| copied(f)).collect();
    // Each root with the copied functions it reaches.
    let mut roots: Vec<(usize, HashSet<LLVMValueRef>)> = Vec::new();
    for &r in defs.iter().filter(|f| !copied.contains(f)) {
        let mut seen = HashSet::from([r]);
        let mut stack = vec![r];
        while let Some(f) = stack.pop() {
            for &c in &calls[&f] {
                if copied.contains(&c) && seen.insert(c) {
                    stack.push(c);
                }
            }
        }
        let weight = seen.iter().map(|f| size[f]).sum();
        roots.push((weight, seen));
    }
    let big = roots.iter().filter(|r| r.0 >= min_instrs / 4).count();
    if big < 2 {
        return None;
    }
    // The `optnone` roots (the per-thread fallbacks of warp-path kernels) go to a partition
    // of their own, whose code is generated at -O0 ([`Plan::cold`]); the others, largest
    // first, onto the least loaded of the rest.
    let (cold, mut hot): (Vec<_>, Vec<_>) = roots.into_iter().partition(|(_, fs)| fs.iter().any(|&f| has_fn_attr(f, "optnone")));
    hot.sort_by(|a, b| b.0.cmp(&a.0));
    let n = jobs.min(hot.iter().filter(|r| r.0 >= min_instrs / 4).count()).max(1);
    let mut load = vec![0usize; n];
    let mut parts = vec![HashSet::new(); n];
    for (w, names) in hot {
        let k = (0..n).min_by_key(|&k| load[k]).unwrap();
        load[k] += w;
        parts[k].extend(names);
    }
    let mut weights = load;
    let cold = (!cold.is_empty()).then(|| {
        // Code generation at -O0 takes about a third of the time per instruction.
        weights.push(cold.iter().map(|(w, _)| w / 3).sum());
        parts.push(cold.into_iter().flat_map(|(_, fs)| fs).collect());
        parts.len() - 1
    });
    Some(Plan { parts, cold, weights })
}

/// FNV-1a of the module's bitcode: the suffix that makes its internal names unique.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The name [`externalize`] gives symbol `v` (number `k` of its list) of a module whose
/// bitcode hashes to `hash`.
fn external_name(v: LLVMValueRef, k: usize, hash: u64) -> String {
    let n = name_of(v);
    let base = if n.is_empty() { format!("__ptxr_anon.{k}") } else { n };
    format!("{base}.ptxr{hash:016x}")
}

/// Whether [`externalize`] renames function `f`: the internal roots of [`plan`] (copied
/// functions stay internal in each partition).
fn renamed_root(f: LLVMValueRef) -> bool {
    is_local(f) && is_definition(f) && !copied(f)
}

/// The new names of the functions [`externalize`] renames.
fn root_names(m: LLVMModuleRef, hash: u64) -> HashMap<LLVMValueRef, String> {
    functions(m).into_iter().enumerate().filter(|&(_, f)| renamed_root(f)).map(|(k, f)| (f, external_name(f, k, hash))).collect()
}

/// Gives the internal variables and the internal roots of `m` external linkage, hidden, under
/// names unique to this module, so that the partitions can refer to one definition.
fn externalize(m: LLVMModuleRef, hash: u64) {
    let rename = |v: LLVMValueRef, k: usize| {
        set_name(v, &external_name(v, k, hash));
        unsafe {
            LLVMSetLinkage(v, LLVMLinkage::LLVMExternalLinkage);
            LLVMSetVisibility(v, LLVMVisibility::LLVMHiddenVisibility);
        }
    };
    for (k, g) in globals(m).into_iter().enumerate() {
        if is_local(g) {
            rename(g, k);
        }
    }
    for (k, f) in functions(m).into_iter().enumerate() {
        if renamed_root(f) {
            rename(f, k);
        }
    }
}

/// Turns the module parsed for partition `k` into that partition: functions it does not
/// define become declarations (copied ones it does not need disappear), and variables are
/// defined by partition 0 only.
fn carve(m: LLVMModuleRef, keep: &HashSet<String>, first: bool) {
    let mut drop = Vec::new();
    for f in functions(m) {
        if !is_definition(f) || keep.contains(&name_of(f)) {
            continue;
        }
        unsafe {
            let mut bb = LLVMGetFirstBasicBlock(f);
            while !bb.is_null() {
                let next = LLVMGetNextBasicBlock(bb);
                // Instructions may use values of other blocks: drop all references first.
                let mut i = LLVMGetFirstInstruction(bb);
                while !i.is_null() {
                    let ni = LLVMGetNextInstruction(i);
                    let ty = LLVMTypeOf(i);
                    if LLVMGetTypeKind(ty) != inkwell::llvm_sys::LLVMTypeKind::LLVMVoidTypeKind {
                        LLVMReplaceAllUsesWith(i, LLVMGetUndef(ty));
                    }
                    i = ni;
                }
                bb = next;
            }
            let mut bb = LLVMGetFirstBasicBlock(f);
            while !bb.is_null() {
                let next = LLVMGetNextBasicBlock(bb);
                LLVMDeleteBasicBlock(bb);
                bb = next;
            }
            LLVMSetPersonalityFn(f, std::ptr::null_mut());
        }
        if is_local(f) {
            drop.push(f);
        }
    }
    for f in drop {
        unsafe {
            if LLVMGetFirstUse(f).is_null() {
                LLVMDeleteFunction(f);
            } else {
                LLVMSetLinkage(f, LLVMLinkage::LLVMExternalLinkage);
            }
        }
    }
    if first {
        return;
    }
    for g in globals(m) {
        unsafe {
            if LLVMGetInitializer(g).is_null() {
                continue;
            }
            match LLVMGetLinkage(g) {
                LLVMLinkage::LLVMAppendingLinkage => LLVMDeleteGlobal(g),
                _ if LLVMIsGlobalConstant(g) != 0 => LLVMSetLinkage(g, LLVMLinkage::LLVMAvailableExternallyLinkage),
                _ => {
                    LLVMSetInitializer(g, std::ptr::null_mut());
                    LLVMSetLinkage(g, LLVMLinkage::LLVMExternalLinkage);
                }
            }
        }
    }
}

/// Optimizes `module` at `opt` and generates object code for `kind`: one object when the
/// module compiles in one piece, else one per partition, compiled in parallel (the caller
/// links them). `module` is changed (optimized, or split up).
pub fn objects(module: &Module, kind: TargetKind, opt: u32) -> anyhow::Result<Vec<Vec<u8>>> {
    objects_with(module, kind, opt, jobs(), MIN_SPLIT_INSTRS)
}

/// [`objects`] on `jobs` threads, splitting modules of `min_instrs` LLVM instructions or more.
pub fn objects_with(module: &Module, kind: TargetKind, opt: u32, jobs: usize, min_instrs: usize) -> anyhow::Result<Vec<Vec<u8>>> {
    let tm = target::machine(kind, opt, "sm_70")?;
    let raw = module.as_mut_ptr();
    let split = if splittable(kind) { plan(raw, jobs, min_instrs) } else { None };
    let Some(plan) = split else {
        crate::timing::phase("optimize", || target::optimize(module, &tm, opt))?;
        let buf = crate::timing::phase("generate code", || tm.write_to_memory_buffer(module, inkwell::targets::FileType::Object)).map_err(|e| anyhow::anyhow!("code generation failed: {e}"))?;
        return Ok(vec![buf.as_slice().to_vec()]);
    };
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    let t_split = std::time::Instant::now();
    // One bitcode for every partition; each renames the module's internal symbols the same
    // way ([`externalize`], after a hash of this bitcode) before it carves itself out.
    let bitcode = module.write_bitcode_to_memory().as_slice().to_vec();
    let hash = fnv(&bitcode);
    let renamed = root_names(raw, hash);
    let cold = plan.cold;
    let parts: Vec<HashSet<String>> = plan.parts.iter().map(|p| p.iter().map(|&f| renamed.get(&f).cloned().unwrap_or_else(|| name_of(f))).collect()).collect();
    crate::timing::since("split (bitcode)", t_split);
    // Partition 0 is the module itself, carved in place on this thread (it need not be read
    // back).
    let compile = |k: usize, m: &Module| -> anyhow::Result<Vec<u8>> {
        if cfg!(debug_assertions) {
            m.verify().map_err(|e| anyhow::anyhow!("internal error: partition {k} does not verify: {e}"))?;
        }
        let level = if cold == Some(k) { 0 } else { opt };
        let tm = target::machine(kind, level, "sm_70")?;
        crate::timing::phase(&format!("partition {k}: optimize"), || target::optimize(m, &tm, level))?;
        let obj = crate::timing::phase(&format!("partition {k}: generate code"), || tm.write_to_memory_buffer(m, inkwell::targets::FileType::Object)).map_err(|e| anyhow::anyhow!("code generation failed: {e}"))?;
        Ok(obj.as_slice().to_vec())
    };
    // The other partitions run on threads of their own, or, where partition 0 costs as
    // much as all of them together, one after another on one thread: then they do not take
    // time from partition 0 on its core (benches/mma64: its warp kernel against the
    // per-thread fallback and the matrix helpers, 0.185-0.199 s -> 0.162-0.165 s, median of
    // 10). Balanced partitions (several large kernels) keep a thread each.
    let rest: usize = plan.weights.iter().skip(1).sum();
    let threads = if plan.weights.first().map_or(false, |&w0| w0 >= rest) { 1 } else { parts.len().saturating_sub(1).max(1) };
    let results: Vec<anyhow::Result<Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (bitcode, compile, parts) = (&bitcode, &compile, &parts);
                s.spawn(move || -> Vec<(usize, anyhow::Result<Vec<u8>>)> {
                    let mut out = Vec::new();
                    for (k, keep) in parts.iter().enumerate().skip(1).filter(|(k, _)| (k - 1) % threads == t) {
                        let one = || -> anyhow::Result<Vec<u8>> {
                            let t_read = std::time::Instant::now();
                            let ctx = Context::create();
                            let buf = MemoryBuffer::create_from_memory_range(bitcode, "partition");
                            let m = Module::parse_bitcode_from_buffer(&buf, &ctx).map_err(|e| anyhow::anyhow!("internal error: reading a partition back: {e}"))?;
                            externalize(m.as_mut_ptr(), hash);
                            carve(m.as_mut_ptr(), keep, false);
                            crate::timing::since(&format!("partition {k}: read and carve"), t_read);
                            compile(k, &m)
                        };
                        out.push((k, one()));
                    }
                    out
                })
            })
            .collect();
        let t_carve = std::time::Instant::now();
        externalize(raw, hash);
        carve(raw, &parts[0], true);
        crate::timing::since("partition 0: carve", t_carve);
        let mut all: Vec<(usize, anyhow::Result<Vec<u8>>)> = vec![(0, compile(0, module))];
        for h in handles {
            match h.join() {
                Ok(rs) => all.extend(rs),
                Err(_) => all.push((usize::MAX, Err(anyhow::anyhow!("internal error: a code generation thread panicked")))),
            }
        }
        all.sort_by_key(|(k, _)| *k);
        all.into_iter().map(|(_, r)| r).collect()
    });
    results.into_iter().collect()
}

/// Whether objects for `kind` can be split (their partitions are linked by the host's C
/// compiler, which links for the host only).
fn splittable(kind: TargetKind) -> bool {
    match kind {
        TargetKind::Host => true,
        TargetKind::X86_64 => cfg!(target_arch = "x86_64"),
        TargetKind::AArch64 => cfg!(target_arch = "aarch64"),
        TargetKind::Nvptx64 => false,
    }
}
