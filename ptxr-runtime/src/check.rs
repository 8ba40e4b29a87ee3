//! The checking mode's memory check (`ptxr run --check`, like compute-sanitizer's memcheck):
//! generated code compiled for it asks [`check_access`] before every `ld`, `st`, `atom` and
//! `red` of global, shared or generic memory whether the access lies inside memory the kernel
//! may reach, and stops the CTA with [`STATUS_CHECK`](crate::abi::STATUS_CHECK) at the first
//! one that does not, with a report of the thread, the instruction, the address, the size and
//! the nearest allocation ([`HostState::detail`](crate::host)). The launcher lists the
//! allocations ([`set_check`]): the buffers of the launch and the module's variables; a CTA's
//! shared memory and the host thread's stack (the threads' `.local` frames) are known here.

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

/// `HostFns::check_access`: whether the `size`-byte access at `addr` of the CTA's current
/// thread (`tid`, linear) at PTX `line`:`col` lies in memory the kernel may reach and is
/// aligned to its size; [`STATUS_OK`], or [`STATUS_CHECK`] with the CTA's status line and
/// thread set and the report in the launch's detail.
pub extern "C" fn check_access(cta: *mut CtaCtx, addr: *const u8, size: u32, kind: u32, line: u32, col: u32, tid: u32) -> u32 {
    let cta = unsafe { &mut *cta };
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
    if a % n.min(16) != 0 && n.is_power_of_two() {
        problem = Some(format!("misaligned {}: the address is not a multiple of the access size", access(match space {
            SPACE_SHARED => "__shared__ ",
            SPACE_GLOBAL => "__global__ ",
            SPACE_LOCAL => "__local__ ",
            _ => "",
        })));
    } else if space == SPACE_LOCAL {
        // Generated code asks only about `.local` accesses outside the thread's variables.
        problem = Some(format!("{}: outside the thread's .local variables", what("__local__ ")));
    } else if space == SPACE_SHARED || (space == SPACE_GENERIC && a >= shared.0 && a < shared.1 + 64) {
        if !in_shared {
            let off = a as i64 - shared.0 as i64;
            problem = Some(format!("{}: shared offset {off}, outside the CTA's {} bytes of shared memory", what("__shared__ "), cta.total_smem));
        }
    } else if !in_shared {
        let (lo, hi) = stack();
        let on_stack = a >= lo && a + n <= hi;
        let host = cta.host as *const crate::host::HostState;
        let allocs = if host.is_null() { None } else { unsafe { (*host).check.as_ref() } };
        if let (false, Some(list)) = (on_stack, allocs) {
            let inside = list.iter().any(|al| a >= al.start && a + n <= al.start + al.len);
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
        let mut d = host.detail.lock().unwrap_or_else(|e| e.into_inner());
        if d.is_none() {
            *d = Some(format!("{col}\u{0}{p}"));
        }
    }
    STATUS_CHECK
}
