//! The checking mode's memory check (`ptxr run --check`, like compute-sanitizer's memcheck):
//! generated code compiled for it asks [`check_access`] before every `ld`, `st`, `atom` and
//! `red` of global, shared or generic memory whether the access lies inside memory the kernel
//! may reach, and stops the CTA with [`STATUS_CHECK`](crate::abi::STATUS_CHECK) at the first
//! one that does not, with a report of the thread, the instruction, the address, the size and
//! the nearest allocation ([`HostState::detail`](crate::host)). The launcher lists the
//! allocations ([`set_check`]): the buffers of the launch and the module's variables; a CTA's
//! shared memory and the host thread's stack (the threads' `.local` frames) are known here.
//!
//! Shared memory is also checked as compute-sanitizer's racecheck and initcheck do, one byte
//! at a time in a shadow of the CTA's window: a read of a byte that no thread of the CTA has
//! written since the launch began (shared memory starts undefined on a GPU), and two accesses
//! of a byte by threads of different warps, at least one a write, with no CTA barrier between
//! them (the runtime counts barriers: [`barrier`]). Atomics and strong accesses (volatile,
//! relaxed, acquire, release) are not races; threads of one warp are not checked against each
//! other (warp-synchronous code); `cp.async` is the issuing thread's write (ptxr completes
//! it at once), `wmma.load/store`, `ldmatrix`, `stmatrix` each lane's elements or rows;
//! modules that also write shared memory in ways the checks do not see (bulk copies,
//! `wgmma`, tensor memory, other CTAs through `mapa`) or synchronize through mbarriers are
//! checked for bounds only.

use crate::abi::{CtaCtx, STATUS_CHECK, STATUS_OK};
use std::cell::RefCell;

/// Memory a kernel may reach: `len` bytes from `start`, named for reports ("buffer argument
/// 1 (`out`)", "variable `table`").
#[derive(Clone, Debug)]
pub struct Allocation {
    pub start: u64,
    pub len: u64,
    pub name: String,
}

thread_local! {
    static CHECK: RefCell<Option<Vec<Allocation>>> = const { RefCell::new(None) };
    /// The host thread's stack (lowest, highest address), found once per thread.
    static STACK: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
}

/// The allocations of this thread's next launches of code compiled for checking (`None`:
/// no list; such code then checks only shared memory and stacks).
pub fn set_check(allocations: Option<Vec<Allocation>>) {
    CHECK.with(|c| *c.borrow_mut() = allocations);
}

/// Runs `launch` (of code compiled for checking) with `list` as this thread's allocation list,
/// then restores the list that was set before (the safe bindings of `ptxr::Build::check`).
pub fn with_check<R>(list: Vec<Allocation>, launch: impl FnOnce() -> R) -> R {
    let old = CHECK.with(|c| c.borrow_mut().replace(list));
    let r = launch();
    CHECK.with(|c| *c.borrow_mut() = old);
    r
}

/// [`with_check`] for a launch whose buffers are raw addresses (the `_raw` bindings of
/// `ptxr::Build::check`): the list set with [`set_check`] if there is one, else one
/// allocation spanning all memory (global accesses are not checked; shared and `.local`
/// ones are), with the module's variables `vars` in either case.
pub fn with_check_raw<R>(vars: Vec<Allocation>, launch: impl FnOnce() -> R) -> R {
    let mut list = CHECK.with(|c| c.borrow().clone()).unwrap_or_else(|| vec![Allocation { start: 0, len: u64::MAX, name: "memory of a raw launch".into() }]);
    list.extend(vars);
    with_check(list, launch)
}

/// This thread's allocation list, sorted by start (for the launch's host state).
pub(crate) fn allocations() -> Option<Vec<Allocation>> {
    CHECK.with(|c| c.borrow().clone()).map(|mut v| {
        v.sort_by_key(|a| a.start);
        v
    })
}

fn stack() -> (u64, u64) {
    if let Some(s) = STACK.with(|s| s.get()) {
        return s;
    }
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is destroyed after.
    let s = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        let mut lo: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
            libc::pthread_attr_getstack(&attr, &mut lo, &mut size);
            libc::pthread_attr_destroy(&mut attr);
        }
        (lo as u64, lo as u64 + size as u64)
    };
    STACK.with(|c| c.set(Some(s)));
    s
}

/// What an access is, as generated code passes it (`kind`): bit 0 a write, bits 1-3 the
/// state space named by the instruction.
pub const CHECK_WRITE: u32 = 1;
pub const SPACE_GENERIC: u32 = 0;
pub const SPACE_GLOBAL: u32 = 1 << 1;
pub const SPACE_SHARED: u32 = 2 << 1;
pub const SPACE_LOCAL: u32 = 3 << 1;
/// An atomic access (`atom`, `red`).
pub const CHECK_ATOMIC: u32 = 1 << 4;
/// A strong access (volatile, relaxed, acquire, release).
pub const CHECK_STRONG: u32 = 1 << 5;
/// The module writes shared memory in ways the checks do not see: bounds only.
pub const CHECK_NO_SHADOW: u32 = 1 << 6;

/// One byte of the shadow of a CTA's shared memory: written since the CTA began, and the last
/// write and read (epoch: barriers completed before it; the thread; its line), `multi` when
/// threads of more than one warp read it in that epoch.
#[derive(Clone, Copy, Default)]
struct Shade {
    gen: u32,
    init: bool,
    w_epoch: u32,
    w_tid: u32,
    w_line: u32,
    r_epoch: u32,
    r_tid: u32,
    r_line: u32,
    r_multi: bool,
}

/// The shadow of the shared memory of the CTA running on this thread; `gen` changes per CTA so
/// that bytes from an earlier CTA read as fresh without clearing.
#[derive(Default)]
struct Shadow {
    gen: u32,
    epoch: u32,
    bytes: Vec<Shade>,
}

thread_local! {
    static SHADOW: RefCell<Shadow> = RefCell::new(Shadow::default());
}

/// A CTA with `total_smem` bytes of shared memory begins on this thread.
pub(crate) fn begin_cta(total_smem: u32) {
    SHADOW.with(|s| {
        let mut s = s.borrow_mut();
        s.gen = s.gen.wrapping_add(1);
        if s.gen == 0 {
            s.bytes.iter_mut().for_each(|b| *b = Shade::default());
            s.gen = 1;
        }
        s.epoch = 1;
        if s.bytes.len() < total_smem as usize {
            s.bytes.resize(total_smem as usize, Shade::default());
        }
    });
}

/// A CTA barrier completed: later accesses are ordered after earlier ones.
pub(crate) fn barrier() {
    SHADOW.with(|s| s.borrow_mut().epoch += 1);
}

/// An access of any alignment (the bounding range of a tensor copy's box).
pub const CHECK_UNALIGNED: u32 = 1 << 9;

/// The device heap's block notes of generated code (`kind`): allocated, freed.
pub const HEAP_ALLOC: u32 = 1 << 7;
pub const HEAP_FREE: u32 = 1 << 8;

/// The shadow checks of an access of bytes `off..off + n` of the CTA's shared memory by
/// thread `tid` at `line`: the problem, if any.
fn shade(off: u64, n: u64, write: bool, tid: u32, line: u32, ntid: [u32; 3]) -> Option<String> {
    let at = |t: u32| format!("({},{},{})", t % ntid[0], (t / ntid[0]) % ntid[1], t / (ntid[0] * ntid[1]));
    SHADOW.with(|s| {
        let mut s = s.borrow_mut();
        let (gen, epoch) = (s.gen, s.epoch);
        for b in off..off + n {
            let Some(c) = s.bytes.get_mut(b as usize) else { return None };
            if c.gen != gen {
                *c = Shade { gen, ..Shade::default() };
            }
            let other = |t: u32| t / 32 != tid / 32;
            if write {
                if c.w_epoch == epoch && other(c.w_tid) {
                    return Some(format!("race on the __shared__ byte at offset {b}: written by thread {} at line {} and by thread {} here, with no barrier between (write-after-write)", at(c.w_tid), c.w_line, at(tid)));
                }
                if c.r_epoch == epoch && (other(c.r_tid) || c.r_multi) {
                    return Some(format!("race on the __shared__ byte at offset {b}: read by thread {} at line {} and written by thread {} here, with no barrier between (write-after-read)", at(c.r_tid), c.r_line, at(tid)));
                }
                c.init = true;
                c.w_epoch = epoch;
                c.w_tid = tid;
                c.w_line = line;
            } else {
                if !c.init {
                    return Some(format!("uninitialized __shared__ read: the byte at offset {b} has not been written since the launch began"));
                }
                if c.w_epoch == epoch && other(c.w_tid) {
                    return Some(format!("race on the __shared__ byte at offset {b}: written by thread {} at line {} and read by thread {} here, with no barrier between (read-after-write)", at(c.w_tid), c.w_line, at(tid)));
                }
                if c.r_epoch == epoch && other(c.r_tid) {
                    c.r_multi = true;
                } else if c.r_epoch != epoch {
                    c.r_multi = false;
                }
                c.r_epoch = epoch;
                c.r_tid = tid;
                c.r_line = line;
            }
        }
        None
    })
}

/// `HostFns::check_access`: whether the `size`-byte access at `addr` of the CTA's current
/// thread (`tid`, linear) at PTX `line`:`col` lies in memory the kernel may reach and is
/// aligned to its size; [`STATUS_OK`], or [`STATUS_CHECK`] with the CTA's status line and
/// thread set and the report in the launch's detail.
pub extern "C" fn check_access(cta: *mut CtaCtx, addr: *const u8, size: u32, kind: u32, line: u32, col: u32, tid: u32) -> u32 {
    let cta = unsafe { &mut *cta };
    if kind & (HEAP_ALLOC | HEAP_FREE) != 0 {
        if !cta.host.is_null() && !addr.is_null() {
            let host = unsafe { &*(cta.host as *const crate::host::HostState) };
            let mut h = host.heap.lock().unwrap_or_else(|e| e.into_inner());
            if kind & HEAP_ALLOC != 0 {
                h.push((addr as u64, size as u64));
            } else {
                h.retain(|b| b.0 != addr as u64);
            }
        }
        return STATUS_OK;
    }
    let a = addr as u64;
    let n = size.max(1) as u64;
    let space = kind & (7 << 1);
    let write = kind & CHECK_WRITE != 0;
    let access = |s: &str| format!("{s}{} of {n} byte{} at {a:#x}", if write { "write" } else { "read" }, if n == 1 { "" } else { "s" });
    let what = |s: &str| format!("invalid {}", access(s));
    // The CTA's window, or with a cluster the windows of all its CTAs (`abi::ClusterCtx`).
    let shared = if cta.cluster.is_null() {
        (cta.shared as u64, cta.shared as u64 + cta.total_smem as u64)
    } else {
        let cl = unsafe { &*cta.cluster };
        let size = cl.dims.iter().product::<u32>() as u64;
        let rank = (0..3).rev().fold(0u64, |r, k| r * cl.dims[k] as u64 + (cta.ctaid[k] % cl.dims[k]) as u64);
        let first = cta.shared as u64 - rank * cl.stride as u64;
        (first, first + (size - 1) * cl.stride as u64 + cta.total_smem as u64)
    };
    let in_shared = a >= shared.0 && a + n <= shared.1;
    let mut problem = None;
    if a % n.min(16) != 0 && n.is_power_of_two() && kind & CHECK_UNALIGNED == 0 {
        problem = Some(format!("misaligned {}: the address is not a multiple of the access size", access(match space {
            SPACE_SHARED => "__shared__ ",
            SPACE_GLOBAL => "__global__ ",
            SPACE_LOCAL => "__local__ ",
            _ => "",
        })));
    } else if space == SPACE_LOCAL {
        // Generated code asks only about `.local` accesses outside the thread's variables.
        problem = Some(format!("{}: outside the thread's .local variables", what("__local__ ")));
    } else if space == SPACE_SHARED || (space == SPACE_GENERIC && a >= shared.0 && a < shared.1) {
        if !in_shared {
            let off = a as i64 - shared.0 as i64;
            problem = Some(format!("{}: shared offset {off}, outside the CTA's {} bytes of shared memory", what("__shared__ "), cta.total_smem));
        } else if cta.cluster.is_null() && kind & (CHECK_NO_SHADOW | CHECK_ATOMIC | CHECK_STRONG) == 0 {
            problem = shade(a - cta.shared as u64, n, write, tid, line, cta.ntid);
        }
    } else if !in_shared {
        let (lo, hi) = stack();
        let on_stack = a >= lo && a + n <= hi;
        let host = cta.host as *const crate::host::HostState;
        let allocs = if host.is_null() { None } else { unsafe { (*host).check.as_ref() } };
        if let (false, Some(list)) = (on_stack, allocs) {
            let host = unsafe { &*host };
            // The launch's allocations first (no lock), then the device heap's blocks and the
            // parameter buffers of device-side launches.
            let in_list = list.iter().any(|al| a >= al.start && a + n <= al.start + al.len);
            let in_heap = || host.heap.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|&(s, l)| a >= s && a + n <= s + l);
            let in_child = || {
                let param = |c: &crate::host::ChildLaunch| {
                    let s = c.params.as_ptr() as u64;
                    a >= s && a + n <= s + (c.params.len() * 16) as u64
                };
                host.buffers.lock().unwrap_or_else(|e| e.into_inner()).iter().any(param) || host.launched.lock().unwrap_or_else(|e| e.into_inner()).iter().any(param)
            };
            let inside = in_list || in_heap() || in_child();
            if !inside {
                // The allocation nearest to the access, and where the access lies from it.
                let near = list.iter().min_by_key(|al| if a < al.start { al.start - a } else { a.saturating_sub(al.start + al.len) });
                let whr = match near {
                    Some(al) if a >= al.start + al.len => format!("{} bytes after the end of {} ({:#x}, {} bytes)", a - (al.start + al.len), al.name, al.start, al.len),
                    Some(al) if a < al.start => format!("{} bytes before {} ({:#x}, {} bytes)", al.start - a, al.name, al.start, al.len),
                    Some(al) => format!("the last {} of its bytes past the end of {} ({:#x}, {} bytes)", a + n - (al.start + al.len), al.name, al.start, al.len),
                    None => "no allocation".to_string(),
                };
                problem = Some(format!("{}: {whr}", what(if space == SPACE_GLOBAL { "__global__ " } else { "" })));
            }
        }
    }
    let Some(p) = problem else { return STATUS_OK };
    cta.status_line = line;
    cta.status_thread = tid;
    if !cta.host.is_null() {
        let host = unsafe { &*(cta.host as *const crate::host::HostState) };
        host.set_detail(cta.ctaid, format!("{col}\u{0}{p}"));
    }
    STATUS_CHECK
}
