//! The virtual device and contexts: `cuDevice*`, `cuDevicePrimaryCtx*`, `cuCtx*`.

use crate::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::OnceLock;

/// A context. Memory and modules are process-wide (there is one device); a context holds
/// its flags, limits and its sticky error.
pub struct Ctx {
    pub flags: AtomicU32,
    /// The error that ended a launch in this context (a fault, trap, assertion, timeout):
    /// like a GPU context after such an error, every later call returns it. 0: none.
    pub sticky: AtomicI32,
    pub primary: bool,
    /// `cuCtxSetLimit` values by `CUlimit`.
    pub limits: std::sync::Mutex<[usize; 8]>,
}

impl Ctx {
    fn new(flags: u32, primary: bool) -> Ctx {
        // CU_LIMIT_STACK_SIZE, PRINTF_FIFO_SIZE, MALLOC_HEAP_SIZE, DEV_RUNTIME_SYNC_DEPTH,
        // DEV_RUNTIME_PENDING_LAUNCH_COUNT, MAX_L2_FETCH_GRANULARITY, PERSISTING_L2_CACHE_SIZE
        Ctx { flags: AtomicU32::new(flags), sticky: AtomicI32::new(0), primary, limits: std::sync::Mutex::new([1024, 1 << 20, 8 << 20, 2, 2048, 32, 0, 0]) }
    }
}

pub(crate) static CONTEXTS: Handles<Ctx> = Handles::new();
static PRIMARY: OnceLock<usize> = OnceLock::new();
static PRIMARY_REFS: AtomicI32 = AtomicI32::new(0);

thread_local! {
    /// This thread's context stack (`cuCtxPushCurrent`); the top is the current context.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

fn primary() -> *mut c_void {
    *PRIMARY.get_or_init(|| CONTEXTS.add(Ctx::new(0, true)) as usize) as *mut c_void
}

/// The current context of this thread.
pub(crate) fn current() -> Result<&'static Ctx, CUresult> {
    let top = STACK.with(|s| s.borrow().last().copied()).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    CONTEXTS.get(top as *mut c_void).map_err(|_| CUDA_ERROR_INVALID_CONTEXT)
}

pub(crate) fn current_handle() -> *mut c_void {
    STACK.with(|s| s.borrow().last().copied()).unwrap_or(0) as *mut c_void
}

/// The current context, failing with its sticky error if it has one.
pub(crate) fn current_ok() -> Result<&'static Ctx, CUresult> {
    let c = current()?;
    match c.sticky.load(Ordering::Acquire) {
        0 => Ok(c),
        e => Err(e),
    }
}

fn device_ok(d: CUdevice) -> Result<(), CUresult> {
    initialized()?;
    if d == 0 {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_DEVICE)
    }
}

/// The compute capability the device reports: `PTXR_COMPUTE_CAPABILITY` (`9.0`, `90` or
/// `sm_90`), default 8.0. ptxr runs PTX of any target; this is what programs that choose
/// their PTX target by the device (Numba, Triton) see.
pub fn compute_capability() -> (c_int, c_int) {
    let v = std::env::var("PTXR_COMPUTE_CAPABILITY").unwrap_or_default();
    let v = v.trim().trim_start_matches("sm_").trim_start_matches("compute_");
    let parse = |s: &str| s.parse::<c_int>().ok();
    match v.split_once('.') {
        Some((a, b)) => match (parse(a), parse(b)) {
            (Some(a), Some(b)) => (a, b),
            _ => (8, 0),
        },
        None if v.len() >= 2 => match parse(&v[..v.len() - 1]).zip(parse(&v[v.len() - 1..])) {
            Some((a, b)) => (a, b),
            None => (8, 0),
        },
        None => (8, 0),
    }
}

pub(crate) fn cores() -> c_int {
    std::thread::available_parallelism().map(|n| n.get() as c_int).unwrap_or(1)
}

/// Physical memory and available memory in bytes (`/proc/meminfo`).
pub(crate) fn host_memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| text.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<u64>().ok()).map(|kb| kb * 1024);
    let total = field("MemTotal:").unwrap_or(16 << 30);
    (total, field("MemAvailable:").unwrap_or(total / 2))
}

/// `CU_DEVICE_ATTRIBUTE_*` values: ptxr's limits where it has one (block and grid sizes,
/// shared memory: `ptxr_runtime::check_config`), the CPU where the attribute describes the
/// machine (multiprocessors = cores; memory is host memory, so it is integrated, unified,
/// managed and host-mappable), and the values of an sm_80-class GPU elsewhere. `None`: not
/// an attribute of CUDA 12.9.
pub fn attribute(a: c_int) -> Option<c_int> {
    let (major, minor) = compute_capability();
    let smem_optin = ptxr_runtime::MAX_SMEM as c_int;
    Some(match a {
        1 => 1024,                 // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,             // MAX_BLOCK_DIM_X, _Y
        4 => 64,                   // MAX_BLOCK_DIM_Z
        5 => i32::MAX,             // MAX_GRID_DIM_X
        6 | 7 => 65535,            // MAX_GRID_DIM_Y, _Z
        8 => 48 * 1024,            // MAX_SHARED_MEMORY_PER_BLOCK (without opting in)
        9 => 64 * 1024,            // TOTAL_CONSTANT_MEMORY
        10 => 32,                  // WARP_SIZE
        11 => i32::MAX,            // MAX_PITCH
        12 => 65536,               // MAX_REGISTERS_PER_BLOCK
        13 => 1_000_000,           // CLOCK_RATE (kHz)
        14 => 512,                 // TEXTURE_ALIGNMENT
        15 => 1,                   // GPU_OVERLAP
        16 => cores(),             // MULTIPROCESSOR_COUNT
        17 => 0,                   // KERNEL_EXEC_TIMEOUT
        18 => 1,                   // INTEGRATED: device memory is host memory
        19 => 1,                   // CAN_MAP_HOST_MEMORY
        20 => 0,                   // COMPUTE_MODE: default
        21 => 131072,              // MAXIMUM_TEXTURE1D_WIDTH
        22 | 23 => 131072,         // MAXIMUM_TEXTURE2D_WIDTH, _HEIGHT
        24..=26 => 16384,          // MAXIMUM_TEXTURE3D_*
        27 | 28 => 32768,          // MAXIMUM_TEXTURE2D_LAYERED_WIDTH, _HEIGHT
        29 => 2048,                // MAXIMUM_TEXTURE2D_LAYERED_LAYERS
        30 => 512,                 // SURFACE_ALIGNMENT
        31 => 1,                   // CONCURRENT_KERNELS
        32 => 0,                   // ECC_ENABLED
        33..=35 => 0,              // PCI_BUS_ID, PCI_DEVICE_ID, TCC_DRIVER
        36 => 1_000_000,           // MEMORY_CLOCK_RATE (kHz)
        37 => 64,                  // GLOBAL_MEMORY_BUS_WIDTH
        38 => 4 << 20,             // L2_CACHE_SIZE
        39 => 2048,                // MAX_THREADS_PER_MULTIPROCESSOR
        40 => 1,                   // ASYNC_ENGINE_COUNT
        41 => 1,                   // UNIFIED_ADDRESSING
        42 => 32768,               // MAXIMUM_TEXTURE1D_LAYERED_WIDTH
        43 => 2048,                // MAXIMUM_TEXTURE1D_LAYERED_LAYERS
        44 => 1,                   // CAN_TEX2D_GATHER
        45 | 46 => 32768,          // MAXIMUM_TEXTURE2D_GATHER_*
        47..=49 => 8192,           // MAXIMUM_TEXTURE3D_*_ALTERNATE
        50 => 0,                   // PCI_DOMAIN_ID
        51 => 32,                  // TEXTURE_PITCH_ALIGNMENT
        52 | 53 => 32768,          // MAXIMUM_TEXTURECUBEMAP_*
        54 => 2046,                // MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS
        55..=57 => 32768,          // MAXIMUM_SURFACE1D/2D_*
        58..=60 => 16384,          // MAXIMUM_SURFACE3D_*
        61 => 32768,               // MAXIMUM_SURFACE1D_LAYERED_WIDTH
        62 => 2048,                // MAXIMUM_SURFACE1D_LAYERED_LAYERS
        63 | 64 => 32768,          // MAXIMUM_SURFACE2D_LAYERED_WIDTH, _HEIGHT
        65 => 2048,                // MAXIMUM_SURFACE2D_LAYERED_LAYERS
        66 | 67 => 32768,          // MAXIMUM_SURFACECUBEMAP_*
        68 => 2046,                // MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS
        69 => 1 << 27,             // MAXIMUM_TEXTURE1D_LINEAR_WIDTH
        70 | 71 => 131072,         // MAXIMUM_TEXTURE2D_LINEAR_WIDTH, _HEIGHT
        72 => 2 << 20,             // MAXIMUM_TEXTURE2D_LINEAR_PITCH
        73 | 74 => 32768,          // MAXIMUM_TEXTURE2D_MIPMAPPED_*
        75 => major,               // COMPUTE_CAPABILITY_MAJOR
        76 => minor,               // COMPUTE_CAPABILITY_MINOR
        77 => 32768,               // MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH
        78 => 0,                   // STREAM_PRIORITIES_SUPPORTED
        79 | 80 => 1,              // GLOBAL_L1_CACHE_SUPPORTED, LOCAL_L1_CACHE_SUPPORTED
        81 => smem_optin + 1024,   // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
        82 => 65536,               // MAX_REGISTERS_PER_MULTIPROCESSOR
        83 => 1,                   // MANAGED_MEMORY
        84 | 85 => 0,              // MULTI_GPU_BOARD, _GROUP_ID
        86 => 1,                   // HOST_NATIVE_ATOMIC_SUPPORTED
        87 => 2,                   // SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO
        88 => 1,                   // PAGEABLE_MEMORY_ACCESS
        89 => 1,                   // CONCURRENT_MANAGED_ACCESS
        90 => 0,                   // COMPUTE_PREEMPTION_SUPPORTED
        91 => 1,                   // CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
        92..=94 => 0,              // stream memory operations (v1)
        95 => 1,                   // COOPERATIVE_LAUNCH (every CTA on a thread of its own)
        96 => 0,                   // COOPERATIVE_MULTI_DEVICE_LAUNCH
        97 => smem_optin,          // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        98 => 0,                   // CAN_FLUSH_REMOTE_WRITES
        99 => 1,                   // HOST_REGISTER_SUPPORTED
        100 => 1,                  // PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES
        101 => 1,                  // DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
        102..=105 => 0,            // virtual memory management, IPC handle types
        106 => 32,                 // MAX_BLOCKS_PER_MULTIPROCESSOR
        107 => 0,                  // GENERIC_COMPRESSION_SUPPORTED
        108 | 109 => 0,            // persisting L2, access policy window
        110 => 0,                  // GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED
        111 => 1024,               // RESERVED_SHARED_MEMORY_PER_BLOCK
        112..=114 => 0,            // sparse arrays, read-only host register, timeline semaphores
        115 => 0,                  // MEMORY_POOLS_SUPPORTED
        116..=119 => 0,            // RDMA, mempool handle types
        120 => 1,                  // CLUSTER_LAUNCH (clusters of up to 16 CTAs)
        121 => 0,                  // DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED
        122 | 123 => 0,            // stream memory operations
        124 | 125 => 0,            // DMA_BUF_SUPPORTED, IPC_EVENT_SUPPORTED
        126 => 1,                  // MEM_SYNC_DOMAIN_COUNT
        127 => 1,                  // TENSOR_MAP_ACCESS_SUPPORTED (cuTensorMapEncodeTiled, ptxr's encoding)
        128 => 0,                  // HANDLE_TYPE_FABRIC_SUPPORTED
        129 => 0,                  // UNIFIED_FUNCTION_POINTERS
        130 => 0,                  // NUMA_CONFIG
        131 | 134 => -1,           // NUMA_ID, HOST_NUMA_ID
        132 | 133 => 0,            // MULTICAST_SUPPORTED, MPS_ENABLED
        135..=138 => 0,            // CIG, decompression
        140 => 0,                  // GPU_PCI_SUBSYSTEM_ID
        141..=143 => 0,            // host NUMA
        _ => return None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(d: *mut CUdevice, ordinal: c_int) -> CUresult {
    api(|| {
        initialized()?;
        if ordinal != 0 {
            return Err(CUDA_ERROR_INVALID_DEVICE);
        }
        put(d, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(n: *mut c_int) -> CUresult {
    api(|| {
        initialized()?;
        put(n, 1)
    })
}

/// Writes `s`, truncated to `len - 1` bytes and NUL-terminated, to a caller's buffer.
unsafe fn put_str(dst: *mut c_char, len: c_int, s: &[u8]) -> Result<(), CUresult> {
    if dst.is_null() || len <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let n = s.len().min(len as usize - 1);
    std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
    *dst.add(n) = 0;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        put_str(name, len, b"ptxr CPU device")
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        put(uuid, *b"ptxr-cpu-device\0")
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], d: CUdevice) -> CUresult {
    cuDeviceGetUuid(uuid, d)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(id: *mut c_char, len: c_int, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        put_str(id, len, b"0000:00:00.0")
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        put(bytes, host_memory().0 as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(v: *mut c_int, attr: c_int, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        put(v, attribute(attr).ok_or(CUDA_ERROR_INVALID_VALUE)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        let (a, b) = compute_capability();
        put(major, a)?;
        put(minor, b)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(can: *mut c_int, d: CUdevice, peer: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        device_ok(peer)?;
        put(can, 0)
    })
}

// ------------------------------------------------------------------ primary context

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        let p = primary();
        put(ctx, p)?;
        PRIMARY_REFS.fetch_add(1, Ordering::AcqRel);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        PRIMARY_REFS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| if n > 0 { Some(n - 1) } else { None }).map(|_| ()).map_err(|_| CUDA_ERROR_INVALID_CONTEXT)
    })
}

/// Resetting the primary context clears its sticky error (as destroying and recreating it
/// does on a GPU). Allocations stay: memory is process-wide here.
#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxReset_v2(d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        let c = CONTEXTS.get(primary())?;
        c.sticky.store(0, Ordering::Release);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(d: CUdevice, flags: *mut u32, active: *mut c_int) -> CUresult {
    api(|| {
        device_ok(d)?;
        let c = CONTEXTS.get(primary())?;
        put(flags, c.flags.load(Ordering::Acquire))?;
        put(active, (PRIMARY_REFS.load(Ordering::Acquire) > 0) as c_int)
    })
}

#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxSetFlags_v2(d: CUdevice, flags: u32) -> CUresult {
    api(|| {
        device_ok(d)?;
        CONTEXTS.get(primary())?.flags.store(flags, Ordering::Release);
        Ok(())
    })
}

// ------------------------------------------------------------------ contexts

#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v2(ctx: *mut *mut c_void, flags: u32, d: CUdevice) -> CUresult {
    api(|| {
        device_ok(d)?;
        if ctx.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let h = CONTEXTS.add(Ctx::new(flags, false));
        STACK.with(|s| s.borrow_mut().push(h as usize));
        put(ctx, h)
    })
}

#[no_mangle]
pub extern "C" fn cuCtxDestroy_v2(ctx: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let c = CONTEXTS.get(ctx).map_err(|_| CUDA_ERROR_INVALID_CONTEXT)?;
        if c.primary {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        CONTEXTS.remove(ctx)?;
        STACK.with(|s| s.borrow_mut().retain(|&x| x != ctx as usize));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        put(ctx, current_handle())
    })
}

#[no_mangle]
pub extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        if ctx.is_null() {
            STACK.with(|s| s.borrow_mut().pop());
            return Ok(());
        }
        CONTEXTS.get(ctx).map_err(|_| CUDA_ERROR_INVALID_CONTEXT)?;
        STACK.with(|s| {
            let mut s = s.borrow_mut();
            s.pop();
            s.push(ctx as usize);
        });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cuCtxPushCurrent_v2(ctx: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        CONTEXTS.get(ctx).map_err(|_| CUDA_ERROR_INVALID_CONTEXT)?;
        STACK.with(|s| s.borrow_mut().push(ctx as usize));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(ctx: *mut *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let top = STACK.with(|s| s.borrow_mut().pop()).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if !ctx.is_null() {
            *ctx = top as *mut c_void;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(d: *mut CUdevice) -> CUresult {
    api(|| {
        initialized()?;
        current()?;
        put(d, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut u32) -> CUresult {
    api(|| {
        initialized()?;
        put(flags, current()?.flags.load(Ordering::Acquire))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetApiVersion(ctx: *mut c_void, v: *mut u32) -> CUresult {
    api(|| {
        initialized()?;
        if !ctx.is_null() {
            CONTEXTS.get(ctx).map_err(|_| CUDA_ERROR_INVALID_CONTEXT)?;
        }
        put(v, 3020)
    })
}

/// Every launch has completed when its call returns (`stream`): synchronizing reports the
/// context's sticky error, as on a GPU.
#[no_mangle]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    api_ctx(|| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetLimit(v: *mut usize, limit: c_int) -> CUresult {
    api(|| {
        initialized()?;
        let c = current()?;
        let l = c.limits.lock().unwrap_or_else(|e| e.into_inner());
        put(v, *l.get(limit as usize).ok_or(CUDA_ERROR_INVALID_VALUE)?)
    })
}

#[no_mangle]
pub extern "C" fn cuCtxSetLimit(limit: c_int, v: usize) -> CUresult {
    api(|| {
        initialized()?;
        let c = current()?;
        let mut l = c.limits.lock().unwrap_or_else(|e| e.into_inner());
        *l.get_mut(limit as usize).ok_or(CUDA_ERROR_INVALID_VALUE)? = v;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCacheConfig(cfg: *mut c_int) -> CUresult {
    api(|| {
        initialized()?;
        current()?;
        put(cfg, 0)
    })
}

#[no_mangle]
pub extern "C" fn cuCtxSetCacheConfig(_cfg: c_int) -> CUresult {
    api(|| {
        initialized()?;
        current()?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CUresult {
    api(|| {
        initialized()?;
        if !least.is_null() {
            *least = 0;
        }
        if !greatest.is_null() {
            *greatest = 0;
        }
        Ok(())
    })
}
