//! The CUDA driver API on the CPU.
//!
//! This crate builds `libcuda.so.1` (see `build.rs`): a library with the symbol names of
//! NVIDIA's driver library for CUDA 12 (`cuInit`, `cuMemAlloc_v2`, `cuLaunchKernel`,
//! `cuGetProcAddress_v2`, ...), so that programs written against `cuda.h`, and loaders
//! that open `libcuda.so.1` (cuda-bindings), run their PTX on the CPU:
//!
//! - one virtual device (`device`): its attributes are the limits that ptxr's runtime
//!   enforces (32-lane warps, 1024 threads per block, 227 KiB of shared memory per block),
//!   one multiprocessor per CPU core, and a compute capability chosen by
//!   `PTXR_COMPUTE_CAPABILITY` (default 8.0); primary and created contexts;
//! - memory (`memory`): device memory is host memory, so a `CUdeviceptr` is a host address;
//!   every allocation is recorded, so copies and frees of ranges that were never allocated
//!   return `CUDA_ERROR_INVALID_VALUE` instead of touching memory;
//! - modules (`module`): PTX compiled on load by ptxr into a shared library, cached on disk
//!   under a hash of the PTX (`PTXR_CACHE_DIR`, default `~/.cache/ptxr`), so a second run
//!   does not compile again; `cuLink*` for PTX inputs;
//! - launches (`module`): the runtime of `ptxr-runtime` on all cores; a kernel that traps,
//!   fails an assertion, deadlocks or runs past `PTXR_LAUNCH_TIMEOUT` seconds returns the
//!   error code a GPU gives, prints ptxr's message once, and makes the context's error
//!   sticky as CUDA does;
//! - streams and events (`stream`): work runs when it is issued, in issue order, which
//!   keeps every ordering rule of CUDA streams; events record the time of their turn.
//!
//! Functions that are not implemented are not exported; `cuGetProcAddress` reports them
//! as not found (docs/cuda.md lists what is implemented).

#![allow(non_snake_case, clippy::missing_safety_doc)]

pub mod device;
pub mod library;
pub mod memory;
pub mod module;
pub mod proc;
pub mod runtime;
pub mod stream;

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// `CUresult`.
pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUdeviceptr = u64;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub const CUDA_ERROR_INVALID_SOURCE: CUresult = 300;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: CUresult = 701;
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CUresult = 702;
pub const CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE: CUresult = 708;
pub const CUDA_ERROR_ASSERT: CUresult = 710;
pub const CUDA_ERROR_ILLEGAL_INSTRUCTION: CUresult = 715;
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: CUresult = 720;
pub const CUDA_ERROR_NOT_PERMITTED: CUresult = 800;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
pub const CUDA_ERROR_INVALID_CLUSTER_SIZE: CUresult = 912;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// CUDA 12.9, the version of the headers this library follows.
pub const DRIVER_VERSION: c_int = 12090;

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// Runs an API function's body: `Err(code)` becomes that code; a panic (a bug of this
/// library) becomes `CUDA_ERROR_UNKNOWN` with a message instead of unwinding into C.
pub(crate) fn api(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => CUDA_ERROR_UNKNOWN,
    }
}

/// [`api`] for functions that need `cuInit` first and a current context whose error is
/// not sticky.
pub(crate) fn api_ctx(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    api(|| {
        initialized()?;
        device::current_ok()?;
        f()
    })
}

pub(crate) fn initialized() -> Result<(), CUresult> {
    if INITIALIZED.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(CUDA_ERROR_NOT_INITIALIZED)
    }
}

/// Writes `v` through an output pointer, or fails with `CUDA_ERROR_INVALID_VALUE` for NULL.
pub(crate) unsafe fn put<T>(p: *mut T, v: T) -> Result<(), CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    p.write_unaligned(v);
    Ok(())
}

/// Prints ptxr's message for a failing call once, to stderr (the CUDA error code alone
/// rarely says enough: which kernel, which line, which thread).
pub(crate) fn report(msg: &str) {
    if std::env::var_os("PTXR_CUDA_QUIET").is_none() {
        eprintln!("ptxr (libcuda): {}", msg.trim_end());
    }
}

#[no_mangle]
pub extern "C" fn cuInit(flags: u32) -> CUresult {
    api(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // A kernel's memory fault becomes CUDA_ERROR_ILLEGAL_ADDRESS, not the end of the
        // program (`ptxr_runtime::fault`).
        ptxr_runtime::fault::enable();
        INITIALIZED.store(true, Ordering::Release);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(v: *mut c_int) -> CUresult {
    api(|| put(v, DRIVER_VERSION))
}

/// (name, description) of each `CUresult` this library returns or a program may ask about.
const ERRORS: &[(CUresult, &str, &[u8])] = &[
    (0, "CUDA_SUCCESS\0", b"no error\0"),
    (1, "CUDA_ERROR_INVALID_VALUE\0", b"invalid argument\0"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY\0", b"out of memory\0"),
    (3, "CUDA_ERROR_NOT_INITIALIZED\0", b"initialization error (cuInit has not been called)\0"),
    (4, "CUDA_ERROR_DEINITIALIZED\0", b"driver shutting down\0"),
    (100, "CUDA_ERROR_NO_DEVICE\0", b"no CUDA-capable device is detected\0"),
    (101, "CUDA_ERROR_INVALID_DEVICE\0", b"invalid device ordinal\0"),
    (200, "CUDA_ERROR_INVALID_IMAGE\0", b"device kernel image is invalid (ptxr loads PTX, not cubins)\0"),
    (201, "CUDA_ERROR_INVALID_CONTEXT\0", b"invalid device context\0"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU\0", b"no kernel image is available for execution on the device (ptxr needs PTX)\0"),
    (218, "CUDA_ERROR_INVALID_PTX\0", b"a PTX JIT compilation failed\0"),
    (300, "CUDA_ERROR_INVALID_SOURCE\0", b"device kernel image is invalid\0"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND\0", b"file not found\0"),
    (400, "CUDA_ERROR_INVALID_HANDLE\0", b"invalid resource handle\0"),
    (401, "CUDA_ERROR_ILLEGAL_STATE\0", b"the operation cannot be performed in the present state\0"),
    (500, "CUDA_ERROR_NOT_FOUND\0", b"named symbol not found\0"),
    (600, "CUDA_ERROR_NOT_READY\0", b"device not ready\0"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS\0", b"an illegal memory access was encountered\0"),
    (701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\0", b"too many resources requested for launch\0"),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT\0", b"the launch timed out and was terminated\0"),
    (708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE\0", b"primary context active\0"),
    (709, "CUDA_ERROR_CONTEXT_IS_DESTROYED\0", b"context is destroyed\0"),
    (710, "CUDA_ERROR_ASSERT\0", b"device-side assert triggered\0"),
    (715, "CUDA_ERROR_ILLEGAL_INSTRUCTION\0", b"an illegal instruction was encountered\0"),
    (716, "CUDA_ERROR_MISALIGNED_ADDRESS\0", b"misaligned address\0"),
    (719, "CUDA_ERROR_LAUNCH_FAILED\0", b"unspecified launch failure\0"),
    (720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\0", b"too many blocks in cooperative launch\0"),
    (800, "CUDA_ERROR_NOT_PERMITTED\0", b"operation not permitted\0"),
    (801, "CUDA_ERROR_NOT_SUPPORTED\0", b"operation not supported (by ptxr's driver library)\0"),
    (912, "CUDA_ERROR_INVALID_CLUSTER_SIZE\0", b"invalid cluster size\0"),
    (999, "CUDA_ERROR_UNKNOWN\0", b"unknown error\0"),
];

/// The name (`name`) or description of `e` through `out`; NULL and
/// `CUDA_ERROR_INVALID_VALUE` for a code that is not a `CUresult`.
unsafe fn error_text(e: CUresult, out: *mut *const c_char, name: bool) -> CUresult {
    match ERRORS.iter().find(|x| x.0 == e) {
        Some(x) => api(|| put(out, if name { x.1.as_ptr() } else { x.2.as_ptr() } as *const c_char)),
        None => {
            let _ = put(out, std::ptr::null());
            CUDA_ERROR_INVALID_VALUE
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(e: CUresult, out: *mut *const c_char) -> CUresult {
    error_text(e, out, true)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(e: CUresult, out: *mut *const c_char) -> CUresult {
    error_text(e, out, false)
}

/// A handle type: an address of a leaked `Box<T>` that a registry knows to be live, so
/// that a stale or made-up handle is `CUDA_ERROR_INVALID_HANDLE`, not a crash.
pub(crate) struct Handles<T: 'static> {
    live: std::sync::Mutex<std::collections::BTreeSet<usize>>,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T: 'static> Handles<T> {
    pub(crate) const fn new() -> Handles<T> {
        Handles { live: std::sync::Mutex::new(std::collections::BTreeSet::new()), _t: std::marker::PhantomData }
    }

    pub(crate) fn add(&self, v: T) -> *mut c_void {
        let p = Box::into_raw(Box::new(v)) as usize;
        self.live.lock().unwrap_or_else(|e| e.into_inner()).insert(p);
        p as *mut c_void
    }

    /// The object behind a live handle. Objects are freed only by [`Handles::remove`].
    pub(crate) fn get(&self, h: *mut c_void) -> Result<&'static T, CUresult> {
        if self.live.lock().unwrap_or_else(|e| e.into_inner()).contains(&(h as usize)) {
            Ok(unsafe { &*(h as *const T) })
        } else {
            Err(CUDA_ERROR_INVALID_HANDLE)
        }
    }

    /// Forgets a handle. Its object is leaked on purpose: a launch on another thread may
    /// still hold a reference; the objects are small (a library handle is closed by its
    /// owner's own cleanup).
    pub(crate) fn remove(&self, h: *mut c_void) -> Result<&'static T, CUresult> {
        let t = self.get(h)?;
        self.live.lock().unwrap_or_else(|e| e.into_inner()).remove(&(h as usize));
        Ok(t)
    }
}

/// NVIDIA's private interfaces between its libraries and its driver (tables of functions
/// identified by UUIDs): none here. NVRTC asks for one when it finds a `libcuda.so.1` and
/// compiles without it when the answer is an error.
#[no_mangle]
pub unsafe extern "C" fn cuGetExportTable(table: *mut *const c_void, _id: *const [u8; 16]) -> CUresult {
    if !table.is_null() {
        *table = std::ptr::null();
    }
    CUDA_ERROR_NOT_SUPPORTED
}
