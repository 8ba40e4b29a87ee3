//! The CUDA runtime API (`libcudart.so.12`), on the driver API of this library.
//!
//! `libcudart.so.12` and `libcudart.so` are links to this library (build.rs): one library
//! serves both APIs, as one process state (the dynamic loader maps the file once).
//!
//! - **Registration**: the calls that compilers put into a CUDA program's startup code
//!   (`__cudaRegisterFatBinary`, `__cudaRegisterFunction`, `__cudaRegisterVar`, ...). The
//!   device image of a program built by `ptxr cuda` is NUL-terminated PTX text; it is
//!   compiled (through the module cache) when the program first needs it.
//! - `<<<...>>>` launches (`__cudaPushCallConfiguration`, `__cudaPopCallConfiguration`,
//!   `cudaLaunchKernel`), memory, symbols, devices, streams, events and errors.
//!
//! Every call uses the device's primary context, made current on the calling thread on its
//! first call, as NVIDIA's runtime does. Errors are the `cudaError_t` values (for the codes
//! this library returns they equal the driver's `CUresult` values, except launch
//! configuration errors, `cudaErrorInvalidConfiguration`); the last error of each thread
//! is kept for `cudaGetLastError`.

use crate::device::*;
use crate::memory::*;
use crate::module::*;
use crate::stream::*;
use crate::*;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

pub type CudaError = c_int;
const SUCCESS: CudaError = 0;
const INVALID_VALUE: CudaError = 1;
const INVALID_CONFIGURATION: CudaError = 9;
const INVALID_SYMBOL: CudaError = 13;
const INVALID_MEMCPY_DIRECTION: CudaError = 21;
const INVALID_DEVICE_FUNCTION: CudaError = 98;
const NO_KERNEL_IMAGE: CudaError = 209;

thread_local! {
    static LAST: Cell<CudaError> = const { Cell::new(0) };
    static CONFIG: std::cell::RefCell<Vec<([u32; 3], [u32; 3], usize, *mut c_void)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs a runtime API function: initializes the driver and the primary context on first
/// use, records a failure as the thread's last error.
fn rt(f: impl FnOnce() -> Result<(), CudaError>) -> CudaError {
    let r = api(|| {
        init()?;
        f()
    });
    if r != SUCCESS {
        LAST.with(|l| l.set(r));
    }
    r
}

fn init() -> Result<(), CudaError> {
    if cuInit(0) != CUDA_SUCCESS {
        return Err(3);
    }
    if current().is_err() {
        let mut ctx = std::ptr::null_mut();
        let r = unsafe { cuDevicePrimaryCtxRetain(&mut ctx, 0) };
        if r != CUDA_SUCCESS {
            return Err(r);
        }
        let r = cuCtxSetCurrent(ctx);
        if r != CUDA_SUCCESS {
            return Err(r);
        }
    }
    Ok(())
}

fn drv(r: CUresult) -> Result<(), CudaError> {
    if r == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

// ------------------------------------------------------------------ registration

/// A registered device image: its PTX and, once compiled, its module.
struct Image {
    ptx: Result<String, String>,
    module: OnceLock<Result<usize, CUresult>>,
}

static IMAGES: Mutex<Vec<&'static Image>> = Mutex::new(Vec::new());
/// Host stub of a kernel → (image, device name).
static FUNCS_BY_STUB: Mutex<Option<HashMap<usize, (usize, String)>>> = Mutex::new(None);
/// Host shadow of a `__device__`/`__constant__` variable → (image, device name).
static VARS_BY_SHADOW: Mutex<Option<HashMap<usize, (usize, String)>>> = Mutex::new(None);

/// The PTX of a registered device image (`crate::module::wrapped_image`, `image_text`).
fn image_ptx(wrapper: *const c_void) -> Result<String, String> {
    unsafe { crate::module::wrapped_image(wrapper).and_then(|d| crate::module::image_text(d)) }.map_err(|(_, m)| m)
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(wrapper: *mut c_void) -> *mut *mut c_void {
    let img: &'static Image = Box::leak(Box::new(Image { ptx: image_ptx(wrapper), module: OnceLock::new() }));
    let mut v = IMAGES.lock().unwrap_or_else(|e| e.into_inner());
    v.push(img);
    // The handle is the image's index + 1 (never NULL).
    v.len() as *mut *mut c_void
}

#[no_mangle]
pub extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFunction(handle: *mut *mut c_void, stub: *const c_char, _device_fun: *mut c_char, device_name: *const c_char, _thread_limit: c_int, _tid: *mut c_void, _bid: *mut c_void, _bdim: *mut c_void, _gdim: *mut c_void, _wsize: *mut c_int) {
    if device_name.is_null() {
        return;
    }
    let name = std::ffi::CStr::from_ptr(device_name).to_string_lossy().into_owned();
    let mut m = FUNCS_BY_STUB.lock().unwrap_or_else(|e| e.into_inner());
    m.get_or_insert_with(HashMap::new).insert(stub as usize, (handle as usize - 1, name));
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterVar(handle: *mut *mut c_void, shadow: *mut c_char, _device_address: *mut c_char, device_name: *const c_char, _ext: c_int, _size: usize, _constant: c_int, _global: c_int) {
    if device_name.is_null() {
        return;
    }
    let name = std::ffi::CStr::from_ptr(device_name).to_string_lossy().into_owned();
    let mut m = VARS_BY_SHADOW.lock().unwrap_or_else(|e| e.into_inner());
    m.get_or_insert_with(HashMap::new).insert(shadow as usize, (handle as usize - 1, name));
}

/// `__managed__` variables: the host reaches them through the pointer at `host_ptr_addr`,
/// which is set to the device variable when the image is loaded (on first use of the
/// runtime: see `load_all_managed`).
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterManagedVar(handle: *mut *mut c_void, host_ptr_addr: *mut *mut c_void, _device_address: *mut c_char, device_name: *const c_char, _ext: c_int, _size: usize, _constant: c_int, _global: c_int) {
    if device_name.is_null() || host_ptr_addr.is_null() {
        return;
    }
    let name = std::ffi::CStr::from_ptr(device_name).to_string_lossy().into_owned();
    MANAGED.lock().unwrap_or_else(|e| e.into_inner()).push((handle as usize - 1, name, host_ptr_addr as usize));
}

static MANAGED: Mutex<Vec<(usize, String, usize)>> = Mutex::new(Vec::new());

#[no_mangle]
pub extern "C" fn __cudaInitModule(_handle: *mut *mut c_void) -> c_char {
    1
}

/// The module of image `i`, compiled on first use.
fn module_of(i: usize) -> Result<&'static Module, CudaError> {
    let img = *IMAGES.lock().unwrap_or_else(|e| e.into_inner()).get(i).ok_or(NO_KERNEL_IMAGE)?;
    let r = img.module.get_or_init(|| {
        let text = match &img.ptx {
            Ok(t) => t.clone(),
            Err(msg) => {
                report(msg);
                return Err(NO_KERNEL_IMAGE);
            }
        };
        let mut z = text.into_bytes();
        z.push(0);
        let mut h = std::ptr::null_mut();
        let r = unsafe { cuModuleLoadData(&mut h, z.as_ptr() as *const c_void) };
        if r != CUDA_SUCCESS {
            return Err(r);
        }
        // __managed__ variables of this image: point their host pointers at them.
        let md = MODULES.get(h).map_err(|_| NO_KERNEL_IMAGE)?;
        for (img_i, name, at) in MANAGED.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            if *img_i == i {
                if let Some(&(a, _)) = md.globals.get(name) {
                    unsafe { *(*at as *mut *mut c_void) = a as *mut c_void };
                }
            }
        }
        Ok(h as usize)
    });
    match r {
        Ok(h) => MODULES.get(*h as *mut c_void).map_err(|_| NO_KERNEL_IMAGE),
        Err(e) => Err(*e),
    }
}

fn kernel_of(stub: *const c_void) -> Result<*mut c_void, CudaError> {
    let (img, name) = FUNCS_BY_STUB.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&(stub as usize)).cloned()).ok_or(INVALID_DEVICE_FUNCTION)?;
    let m = module_of(img)?;
    function(m, &name).map_err(|_| INVALID_DEVICE_FUNCTION)
}

fn symbol_of(shadow: *const c_void) -> Result<(u64, u64), CudaError> {
    let (img, name) = VARS_BY_SHADOW.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&(shadow as usize)).cloned()).ok_or(INVALID_SYMBOL)?;
    let m = module_of(img)?;
    m.globals.get(&name).copied().ok_or(INVALID_SYMBOL)
}

// ------------------------------------------------------------------ launches

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Dim3 {
    x: u32,
    y: u32,
    z: u32,
}

#[no_mangle]
pub extern "C" fn __cudaPushCallConfiguration(grid: Dim3, block: Dim3, smem: usize, stream: *mut c_void) -> u32 {
    CONFIG.with(|c| c.borrow_mut().push(([grid.x, grid.y, grid.z], [block.x, block.y, block.z], smem, stream)));
    0
}

#[no_mangle]
pub unsafe extern "C" fn __cudaPopCallConfiguration(grid: *mut Dim3, block: *mut Dim3, smem: *mut usize, stream: *mut *mut c_void) -> CudaError {
    match CONFIG.with(|c| c.borrow_mut().pop()) {
        Some((g, b, s, st)) => {
            if !grid.is_null() {
                *grid = Dim3 { x: g[0], y: g[1], z: g[2] };
            }
            if !block.is_null() {
                *block = Dim3 { x: b[0], y: b[1], z: b[2] };
            }
            if !smem.is_null() {
                *smem = s;
            }
            if !stream.is_null() {
                *stream = st;
            }
            SUCCESS
        }
        None => INVALID_CONFIGURATION,
    }
}

unsafe fn launch_rt(stub: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, smem: usize, stream: *mut c_void, mode: crate::module::LaunchMode) -> Result<(), CudaError> {
    let f = kernel_of(stub)?;
    current_ok()?;
    let smem = u32::try_from(smem).map_err(|_| INVALID_CONFIGURATION)?;
    crate::module::launch_as(f, [grid.x, grid.y, grid.z], [block.x, block.y, block.z], smem, stream, args, std::ptr::null_mut(), INVALID_CONFIGURATION, mode)
}

#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel(stub: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, smem: usize, stream: *mut c_void) -> CudaError {
    rt(|| launch_rt(stub, grid, block, args, smem, stream, Default::default()))
}

/// Every CTA of the grid runs at once (`ptxr_runtime::set_cooperative`), so that the kernel
/// may synchronize the whole grid (`grid.sync()`); at most as many CTAs as the occupancy
/// calculator says fit on the device at once, as on a GPU.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchCooperativeKernel(stub: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, smem: usize, stream: *mut c_void) -> CudaError {
    rt(|| launch_rt(stub, grid, block, args, smem, stream, crate::module::LaunchMode::COOPERATIVE))
}

/// `cudaLaunchConfig_t`.
#[repr(C)]
pub struct LaunchConfig {
    grid: Dim3,
    block: Dim3,
    smem: usize,
    stream: *mut c_void,
    attrs: *const crate::module::LaunchAttribute,
    nattrs: u32,
}

/// `cudaLaunchKernelExC` (behind the `cudaLaunchKernelEx` templates): a launch with
/// attributes, which are the driver's (`cuLaunchKernelEx`): the cooperative attribute makes a
/// cooperative launch.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernelExC(cfg: *const LaunchConfig, stub: *const c_void, args: *mut *mut c_void) -> CudaError {
    rt(|| {
        let c = cfg.as_ref().ok_or(INVALID_VALUE)?;
        let mode = crate::module::launch_attributes(c.attrs, c.nattrs, "cudaLaunchKernelEx")?;
        launch_rt(stub, c.grid, c.block, args, c.smem, c.stream, mode)
    })
}

/// `cudaFuncAttributes`.
#[repr(C)]
pub struct FuncAttributes {
    shared_size_bytes: usize,
    const_size_bytes: usize,
    local_size_bytes: usize,
    max_threads_per_block: c_int,
    num_regs: c_int,
    ptx_version: c_int,
    binary_version: c_int,
    cache_mode_ca: c_int,
    max_dynamic_shared_size_bytes: c_int,
    preferred_shmem_carveout: c_int,
    cluster_dim_must_be_set: c_int,
    required_cluster_width: c_int,
    required_cluster_height: c_int,
    required_cluster_depth: c_int,
    cluster_scheduling_policy_preference: c_int,
    non_portable_cluster_size_allowed: c_int,
    reserved: [c_int; 16],
}

#[no_mangle]
pub unsafe extern "C" fn cudaFuncGetAttributes(a: *mut FuncAttributes, stub: *const c_void) -> CudaError {
    rt(|| {
        let f = kernel_of(stub)?;
        let a = a.as_mut().ok_or(INVALID_VALUE)?;
        let get = |attr: c_int| -> Result<c_int, CudaError> {
            let mut v = 0;
            drv(cuFuncGetAttribute(&mut v, attr, f)).map(|_| v)
        };
        *a = FuncAttributes {
            shared_size_bytes: get(1)? as usize,
            const_size_bytes: get(2)? as usize,
            local_size_bytes: get(3)? as usize,
            max_threads_per_block: get(0)?,
            num_regs: get(4)?,
            ptx_version: get(5)?,
            binary_version: get(6)?,
            cache_mode_ca: 0,
            max_dynamic_shared_size_bytes: get(8)?,
            preferred_shmem_carveout: get(9)?,
            cluster_dim_must_be_set: 0,
            required_cluster_width: 0,
            required_cluster_height: 0,
            required_cluster_depth: 0,
            cluster_scheduling_policy_preference: 0,
            non_portable_cluster_size_allowed: 0,
            reserved: [0; 16],
        };
        Ok(())
    })
}

/// `cudaFuncAttribute` values: 8 MaxDynamicSharedMemorySize, 9 PreferredSharedMemoryCarveout
/// (the driver's numbering for these).
#[no_mangle]
pub unsafe extern "C" fn cudaFuncSetAttribute(stub: *const c_void, attr: c_int, v: c_int) -> CudaError {
    rt(|| {
        let f = kernel_of(stub)?;
        drv(cuFuncSetAttribute(f, attr, v))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaFuncSetCacheConfig(stub: *const c_void, _cfg: c_int) -> CudaError {
    rt(|| kernel_of(stub).map(|_| ()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut c_int, stub: *const c_void, block: c_int, smem: usize) -> CudaError {
    rt(|| {
        let f = kernel_of(stub)?;
        drv(cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut c_int, stub: *const c_void, block: c_int, smem: usize, _flags: u32) -> CudaError {
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, stub, block, smem)
}

// ------------------------------------------------------------------ memory

#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(p: *mut *mut c_void, size: usize) -> CudaError {
    rt(|| {
        if p.is_null() {
            return Err(INVALID_VALUE);
        }
        if size == 0 {
            *p = std::ptr::null_mut();
            return Ok(());
        }
        let mut d = 0u64;
        drv(cuMemAlloc_v2(&mut d, size))?;
        *p = d as *mut c_void;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(p: *mut *mut c_void, size: usize, flags: u32) -> CudaError {
    rt(|| {
        let mut d = 0u64;
        drv(cuMemAllocManaged(&mut d, size, if flags == 0 { 1 } else { flags }))?;
        put(p, d as *mut c_void).map_err(|_| INVALID_VALUE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocPitch(p: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) -> CudaError {
    rt(|| {
        let mut d = 0u64;
        drv(cuMemAllocPitch_v2(&mut d, pitch, width, height, 4))?;
        put(p, d as *mut c_void).map_err(|_| INVALID_VALUE)
    })
}

#[no_mangle]
pub extern "C" fn cudaFree(p: *mut c_void) -> CudaError {
    rt(|| drv(cuMemFree_v2(p as u64)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocHost(p: *mut *mut c_void, size: usize) -> CudaError {
    rt(|| drv(cuMemAllocHost_v2(p, size)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaHostAlloc(p: *mut *mut c_void, size: usize, flags: u32) -> CudaError {
    rt(|| drv(cuMemHostAlloc(p, size, flags)))
}

#[no_mangle]
pub extern "C" fn cudaFreeHost(p: *mut c_void) -> CudaError {
    rt(|| drv(cuMemFreeHost(p)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaHostGetDevicePointer(d: *mut *mut c_void, p: *mut c_void, flags: u32) -> CudaError {
    rt(|| drv(cuMemHostGetDevicePointer_v2(d as *mut u64, p, flags)))
}

#[no_mangle]
pub extern "C" fn cudaHostRegister(p: *mut c_void, size: usize, flags: u32) -> CudaError {
    rt(|| drv(cuMemHostRegister_v2(p, size, flags)))
}

#[no_mangle]
pub extern "C" fn cudaHostUnregister(p: *mut c_void) -> CudaError {
    rt(|| drv(cuMemHostUnregister(p)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> CudaError {
    rt(|| drv(cuMemGetInfo_v2(free, total)))
}

/// A copy of `kind` (`cudaMemcpyKind`: 0 host→host, 1 host→device, 2 device→host,
/// 3 device→device, 4 inferred from the pointers).
unsafe fn memcpy(dst: *mut c_void, src: *const c_void, n: usize, kind: c_int) -> Result<(), CudaError> {
    let (d, s) = (dst as u64, src as u64);
    match kind {
        0 => {
            if n > 0 && (dst.is_null() || src.is_null()) {
                return Err(INVALID_VALUE);
            }
            std::ptr::copy(src as *const u8, dst as *mut u8, n);
            Ok(())
        }
        1 => drv(cuMemcpyHtoD_v2(d, src, n)),
        2 => drv(cuMemcpyDtoH_v2(dst, s, n)),
        3 => drv(cuMemcpyDtoD_v2(d, s, n)),
        4 => drv(cuMemcpy(d, s, n)),
        _ => Err(INVALID_MEMCPY_DIRECTION),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(dst: *mut c_void, src: *const c_void, n: usize, kind: c_int) -> CudaError {
    rt(|| memcpy(dst, src, n, kind))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(dst: *mut c_void, src: *const c_void, n: usize, kind: c_int, s: *mut c_void) -> CudaError {
    rt(|| {
        drv(crate::stream::check(s).err().unwrap_or(CUDA_SUCCESS))?;
        memcpy(dst, src, n, kind)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2D(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) -> CudaError {
    rt(|| {
        if !(0..=4).contains(&kind) {
            return Err(INVALID_MEMCPY_DIRECTION);
        }
        if height > 1 && (dpitch < width || spitch < width) {
            return Err(INVALID_VALUE);
        }
        for r in 0..height {
            memcpy((dst as *mut u8).add(r * dpitch) as *mut c_void, (src as *const u8).add(r * spitch) as *const c_void, width, kind)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset(p: *mut c_void, v: c_int, n: usize) -> CudaError {
    rt(|| drv(cuMemsetD8_v2(p as u64, v as u8, n)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemsetAsync(p: *mut c_void, v: c_int, n: usize, s: *mut c_void) -> CudaError {
    rt(|| drv(cuMemsetD8Async(p as u64, v as u8, n, s)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset2D(p: *mut c_void, pitch: usize, v: c_int, width: usize, height: usize) -> CudaError {
    rt(|| drv(cuMemsetD2D8_v2(p as u64, pitch, v as u8, width, height)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemPrefetchAsync(p: *const c_void, n: usize, dev: c_int, s: *mut c_void) -> CudaError {
    rt(|| drv(cuMemPrefetchAsync(p as u64, n, dev, s)))
}

// ------------------------------------------------------------------ symbols

unsafe fn symbol_range(shadow: *const c_void, count: usize, offset: usize) -> Result<u64, CudaError> {
    let (a, n) = symbol_of(shadow)?;
    if offset.checked_add(count).map_or(true, |end| end as u64 > n) {
        report(&format!("cudaMemcpyToSymbol/FromSymbol: {count} bytes at offset {offset} of a {n}-byte symbol"));
        return Err(INVALID_VALUE);
    }
    Ok(a + offset as u64)
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbol(symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) -> CudaError {
    rt(|| {
        let a = symbol_range(symbol, count, offset)?;
        match kind {
            1 | 4 => memcpy(a as *mut c_void, src, count, 4),
            3 => memcpy(a as *mut c_void, src, count, 3),
            _ => Err(INVALID_MEMCPY_DIRECTION),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbol(dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) -> CudaError {
    rt(|| {
        let a = symbol_range(symbol, count, offset)?;
        match kind {
            2 | 4 => memcpy(dst, a as *const c_void, count, 4),
            3 => memcpy(dst, a as *const c_void, count, 3),
            _ => Err(INVALID_MEMCPY_DIRECTION),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbolAsync(symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, _s: *mut c_void) -> CudaError {
    cudaMemcpyToSymbol(symbol, src, count, offset, kind)
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbolAsync(dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int, _s: *mut c_void) -> CudaError {
    cudaMemcpyFromSymbol(dst, symbol, count, offset, kind)
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(p: *mut *mut c_void, symbol: *const c_void) -> CudaError {
    rt(|| {
        let (a, _) = symbol_of(symbol)?;
        put(p, a as *mut c_void).map_err(|_| INVALID_VALUE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> CudaError {
    rt(|| {
        let (_, n) = symbol_of(symbol)?;
        put(size, n as usize).map_err(|_| INVALID_VALUE)
    })
}

/// `cudaPointerAttributes`: type (0 unregistered, 1 host, 2 device, 3 managed), device,
/// device pointer, host pointer.
#[repr(C)]
pub struct PointerAttributes {
    ty: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
}

#[no_mangle]
pub unsafe extern "C" fn cudaPointerGetAttributes(a: *mut PointerAttributes, p: *const c_void) -> CudaError {
    rt(|| {
        let a = a.as_mut().ok_or(INVALID_VALUE)?;
        let ty = match find(p as u64, 1) {
            None => 0,
            Some((_, al)) => match al.kind {
                Kind::Host | Kind::Registered => 1,
                Kind::Managed => 3,
                Kind::Device | Kind::Global | Kind::Ipc => 2,
            },
        };
        *a = PointerAttributes { ty, device: 0, device_pointer: if ty == 0 { std::ptr::null_mut() } else { p as *mut c_void }, host_pointer: if ty == 2 { std::ptr::null_mut() } else { p as *mut c_void } };
        Ok(())
    })
}

// ------------------------------------------------------------------ devices

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceCount(n: *mut c_int) -> CudaError {
    rt(|| put(n, 1).map_err(|_| INVALID_VALUE))
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDevice(d: *mut c_int) -> CudaError {
    rt(|| put(d, 0).map_err(|_| INVALID_VALUE))
}

#[no_mangle]
pub extern "C" fn cudaSetDevice(d: c_int) -> CudaError {
    rt(|| if d == 0 { Ok(()) } else { Err(CUDA_ERROR_INVALID_DEVICE) })
}

#[no_mangle]
pub extern "C" fn cudaSetDeviceFlags(_flags: u32) -> CudaError {
    rt(|| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceFlags(flags: *mut u32) -> CudaError {
    rt(|| put(flags, 0).map_err(|_| INVALID_VALUE))
}

/// `cudaDeviceAttr` values are the driver's `CUdevice_attribute` values.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetAttribute(v: *mut c_int, attr: c_int, d: c_int) -> CudaError {
    rt(|| drv(cuDeviceGetAttribute(v, attr, d)))
}

#[no_mangle]
pub extern "C" fn cudaDeviceSynchronize() -> CudaError {
    rt(|| drv(cuCtxSynchronize()))
}

#[no_mangle]
pub extern "C" fn cudaThreadSynchronize() -> CudaError {
    cudaDeviceSynchronize()
}

/// Clears the primary context's sticky error; allocations stay (memory is process-wide).
#[no_mangle]
pub extern "C" fn cudaDeviceReset() -> CudaError {
    rt(|| drv(cuDevicePrimaryCtxReset_v2(0)))
}

#[no_mangle]
pub extern "C" fn cudaDeviceSetLimit(limit: c_int, v: usize) -> CudaError {
    rt(|| drv(cuCtxSetLimit(limit, v)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetLimit(v: *mut usize, limit: c_int) -> CudaError {
    rt(|| drv(cuCtxGetLimit(v, limit)))
}

#[no_mangle]
pub extern "C" fn cudaDeviceSetCacheConfig(_cfg: c_int) -> CudaError {
    rt(|| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CudaError {
    rt(|| drv(cuCtxGetStreamPriorityRange(least, greatest)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaDriverGetVersion(v: *mut c_int) -> CudaError {
    api(|| put(v, DRIVER_VERSION))
}

#[no_mangle]
pub unsafe extern "C" fn cudaRuntimeGetVersion(v: *mut c_int) -> CudaError {
    api(|| put(v, DRIVER_VERSION))
}

/// `cudaDeviceProp` of CUDA 12 (driver_types.h), field for field.
#[repr(C)]
pub struct DeviceProp {
    name: [u8; 256],
    uuid: [u8; 16],
    luid: [u8; 8],
    luid_device_node_mask: u32,
    total_global_mem: usize,
    shared_mem_per_block: usize,
    regs_per_block: c_int,
    warp_size: c_int,
    mem_pitch: usize,
    max_threads_per_block: c_int,
    max_threads_dim: [c_int; 3],
    max_grid_size: [c_int; 3],
    clock_rate: c_int,
    total_const_mem: usize,
    major: c_int,
    minor: c_int,
    texture_alignment: usize,
    texture_pitch_alignment: usize,
    device_overlap: c_int,
    multi_processor_count: c_int,
    kernel_exec_timeout_enabled: c_int,
    integrated: c_int,
    can_map_host_memory: c_int,
    compute_mode: c_int,
    max_texture_1d: c_int,
    max_texture_1d_mipmap: c_int,
    max_texture_1d_linear: c_int,
    max_texture_2d: [c_int; 2],
    max_texture_2d_mipmap: [c_int; 2],
    max_texture_2d_linear: [c_int; 3],
    max_texture_2d_gather: [c_int; 2],
    max_texture_3d: [c_int; 3],
    max_texture_3d_alt: [c_int; 3],
    max_texture_cubemap: c_int,
    max_texture_1d_layered: [c_int; 2],
    max_texture_2d_layered: [c_int; 3],
    max_texture_cubemap_layered: [c_int; 2],
    max_surface_1d: c_int,
    max_surface_2d: [c_int; 2],
    max_surface_3d: [c_int; 3],
    max_surface_1d_layered: [c_int; 2],
    max_surface_2d_layered: [c_int; 3],
    max_surface_cubemap: c_int,
    max_surface_cubemap_layered: [c_int; 2],
    surface_alignment: usize,
    concurrent_kernels: c_int,
    ecc_enabled: c_int,
    pci_bus_id: c_int,
    pci_device_id: c_int,
    pci_domain_id: c_int,
    tcc_driver: c_int,
    async_engine_count: c_int,
    unified_addressing: c_int,
    memory_clock_rate: c_int,
    memory_bus_width: c_int,
    l2_cache_size: c_int,
    persisting_l2_cache_max_size: c_int,
    max_threads_per_multi_processor: c_int,
    stream_priorities_supported: c_int,
    global_l1_cache_supported: c_int,
    local_l1_cache_supported: c_int,
    shared_mem_per_multiprocessor: usize,
    regs_per_multiprocessor: c_int,
    managed_memory: c_int,
    is_multi_gpu_board: c_int,
    multi_gpu_board_group_id: c_int,
    host_native_atomic_supported: c_int,
    single_to_double_precision_perf_ratio: c_int,
    pageable_memory_access: c_int,
    concurrent_managed_access: c_int,
    compute_preemption_supported: c_int,
    can_use_host_pointer_for_registered_mem: c_int,
    cooperative_launch: c_int,
    cooperative_multi_device_launch: c_int,
    shared_mem_per_block_optin: usize,
    pageable_memory_access_uses_host_page_tables: c_int,
    direct_managed_mem_access_from_host: c_int,
    max_blocks_per_multi_processor: c_int,
    access_policy_max_window_size: c_int,
    reserved_shared_mem_per_block: usize,
    host_register_supported: c_int,
    sparse_cuda_array_supported: c_int,
    host_register_read_only_supported: c_int,
    timeline_semaphore_interop_supported: c_int,
    memory_pools_supported: c_int,
    gpu_direct_rdma_supported: c_int,
    gpu_direct_rdma_flush_writes_options: u32,
    gpu_direct_rdma_writes_ordering: c_int,
    memory_pool_supported_handle_types: u32,
    deferred_mapping_cuda_array_supported: c_int,
    ipc_event_supported: c_int,
    cluster_launch: c_int,
    unified_function_pointers: c_int,
    reserved: [c_int; 63],
}

/// The properties from the same values as `cuDeviceGetAttribute` (`device::attribute`).
#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties_v2(p: *mut DeviceProp, d: c_int) -> CudaError {
    rt(|| {
        if d != 0 {
            return Err(CUDA_ERROR_INVALID_DEVICE);
        }
        if p.is_null() {
            return Err(INVALID_VALUE);
        }
        let a = |k: c_int| attribute(k).unwrap_or(0);
        let z = |k: c_int| a(k) as usize;
        std::ptr::write_bytes(p as *mut u8, 0, std::mem::size_of::<DeviceProp>());
        let p = &mut *p;
        let name = b"ptxr CPU device";
        p.name[..name.len()].copy_from_slice(name);
        p.uuid = *b"ptxr-cpu-device\0";
        p.total_global_mem = host_memory().0 as usize;
        p.shared_mem_per_block = z(8);
        p.regs_per_block = a(12);
        p.warp_size = a(10);
        p.mem_pitch = z(11);
        p.max_threads_per_block = a(1);
        p.max_threads_dim = [a(2), a(3), a(4)];
        p.max_grid_size = [a(5), a(6), a(7)];
        p.clock_rate = a(13);
        p.total_const_mem = z(9);
        p.major = a(75);
        p.minor = a(76);
        p.texture_alignment = z(14);
        p.texture_pitch_alignment = z(51);
        p.device_overlap = a(15);
        p.multi_processor_count = a(16);
        p.integrated = a(18);
        p.can_map_host_memory = a(19);
        p.max_texture_1d = a(21);
        p.max_texture_1d_mipmap = a(77);
        p.max_texture_1d_linear = a(69);
        p.max_texture_2d = [a(22), a(23)];
        p.max_texture_2d_mipmap = [a(73), a(74)];
        p.max_texture_2d_linear = [a(70), a(71), a(72)];
        p.max_texture_2d_gather = [a(45), a(46)];
        p.max_texture_3d = [a(24), a(25), a(26)];
        p.max_texture_3d_alt = [a(47), a(48), a(49)];
        p.max_texture_cubemap = a(52);
        p.max_texture_1d_layered = [a(42), a(43)];
        p.max_texture_2d_layered = [a(27), a(28), a(29)];
        p.max_texture_cubemap_layered = [a(53), a(54)];
        p.max_surface_1d = a(55);
        p.max_surface_2d = [a(56), a(57)];
        p.max_surface_3d = [a(58), a(59), a(60)];
        p.max_surface_1d_layered = [a(61), a(62)];
        p.max_surface_2d_layered = [a(63), a(64), a(65)];
        p.max_surface_cubemap = a(66);
        p.max_surface_cubemap_layered = [a(67), a(68)];
        p.surface_alignment = z(30);
        p.concurrent_kernels = a(31);
        p.async_engine_count = a(40);
        p.unified_addressing = a(41);
        p.memory_clock_rate = a(36);
        p.memory_bus_width = a(37);
        p.l2_cache_size = a(38);
        p.max_threads_per_multi_processor = a(39);
        p.global_l1_cache_supported = a(79);
        p.local_l1_cache_supported = a(80);
        p.shared_mem_per_multiprocessor = z(81);
        p.regs_per_multiprocessor = a(82);
        p.managed_memory = a(83);
        p.host_native_atomic_supported = a(86);
        p.single_to_double_precision_perf_ratio = a(87);
        p.pageable_memory_access = a(88);
        p.concurrent_managed_access = a(89);
        p.can_use_host_pointer_for_registered_mem = a(91);
        p.cooperative_launch = a(95);
        p.cooperative_multi_device_launch = a(96);
        p.shared_mem_per_block_optin = z(97);
        p.pageable_memory_access_uses_host_page_tables = a(100);
        p.direct_managed_mem_access_from_host = a(101);
        p.max_blocks_per_multi_processor = a(106);
        p.reserved_shared_mem_per_block = z(111);
        p.host_register_supported = a(99);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties(p: *mut DeviceProp, d: c_int) -> CudaError {
    cudaGetDeviceProperties_v2(p, d)
}

// ------------------------------------------------------------------ streams and events

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreate(s: *mut *mut c_void) -> CudaError {
    rt(|| drv(cuStreamCreate(s, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(s: *mut *mut c_void, flags: u32) -> CudaError {
    rt(|| drv(cuStreamCreate(s, flags)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithPriority(s: *mut *mut c_void, flags: u32, prio: c_int) -> CudaError {
    rt(|| drv(cuStreamCreateWithPriority(s, flags, prio)))
}

#[no_mangle]
pub extern "C" fn cudaStreamDestroy(s: *mut c_void) -> CudaError {
    rt(|| drv(cuStreamDestroy_v2(s)))
}

#[no_mangle]
pub extern "C" fn cudaStreamSynchronize(s: *mut c_void) -> CudaError {
    rt(|| drv(cuStreamSynchronize(s)))
}

#[no_mangle]
pub extern "C" fn cudaStreamQuery(s: *mut c_void) -> CudaError {
    rt(|| drv(cuStreamQuery(s)))
}

#[no_mangle]
pub extern "C" fn cudaStreamWaitEvent(s: *mut c_void, e: *mut c_void, flags: u32) -> CudaError {
    rt(|| drv(cuStreamWaitEvent(s, e, flags)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamAddCallback(s: *mut c_void, f: Option<StreamCallback>, data: *mut c_void, flags: u32) -> CudaError {
    rt(|| drv(cuStreamAddCallback(s, f, data, flags)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaLaunchHostFunc(s: *mut c_void, f: Option<HostFn>, data: *mut c_void) -> CudaError {
    rt(|| drv(cuLaunchHostFunc(s, f, data)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreate(e: *mut *mut c_void) -> CudaError {
    rt(|| drv(cuEventCreate(e, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreateWithFlags(e: *mut *mut c_void, flags: u32) -> CudaError {
    rt(|| drv(cuEventCreate(e, flags)))
}

#[no_mangle]
pub extern "C" fn cudaEventRecord(e: *mut c_void, s: *mut c_void) -> CudaError {
    rt(|| drv(cuEventRecord(e, s)))
}

#[no_mangle]
pub extern "C" fn cudaEventSynchronize(e: *mut c_void) -> CudaError {
    rt(|| drv(cuEventSynchronize(e)))
}

#[no_mangle]
pub extern "C" fn cudaEventQuery(e: *mut c_void) -> CudaError {
    rt(|| drv(cuEventQuery(e)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime(ms: *mut f32, a: *mut c_void, b: *mut c_void) -> CudaError {
    rt(|| drv(cuEventElapsedTime(ms, a, b)))
}

#[no_mangle]
pub extern "C" fn cudaEventDestroy(e: *mut c_void) -> CudaError {
    rt(|| drv(cuEventDestroy_v2(e)))
}

// ------------------------------------------------------------------ errors

/// The thread's last error, which is then reset (sticky launch errors come back from the
/// next call that needs the context).
#[no_mangle]
pub extern "C" fn cudaGetLastError() -> CudaError {
    LAST.with(|l| l.replace(SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaPeekAtLastError() -> CudaError {
    LAST.with(|l| l.get())
}

/// Names and descriptions of the `cudaError_t` values this library returns.
const RT_ERRORS: &[(CudaError, &[u8], &[u8])] = &[
    (0, b"cudaSuccess\0", b"no error\0"),
    (1, b"cudaErrorInvalidValue\0", b"invalid argument\0"),
    (2, b"cudaErrorMemoryAllocation\0", b"out of memory\0"),
    (3, b"cudaErrorInitializationError\0", b"initialization error\0"),
    (9, b"cudaErrorInvalidConfiguration\0", b"invalid configuration argument\0"),
    (13, b"cudaErrorInvalidSymbol\0", b"invalid device symbol\0"),
    (21, b"cudaErrorInvalidMemcpyDirection\0", b"invalid copy direction for memcpy\0"),
    (98, b"cudaErrorInvalidDeviceFunction\0", b"invalid device function\0"),
    (100, b"cudaErrorNoDevice\0", b"no CUDA-capable device is detected\0"),
    (101, b"cudaErrorInvalidDevice\0", b"invalid device ordinal\0"),
    (200, b"cudaErrorInvalidKernelImage\0", b"device kernel image is invalid\0"),
    (201, b"cudaErrorDeviceUninitialized\0", b"invalid device context\0"),
    (209, b"cudaErrorNoKernelImageForDevice\0", b"no kernel image is available for execution on the device (ptxr needs PTX)\0"),
    (218, b"cudaErrorInvalidPtx\0", b"a PTX JIT compilation failed\0"),
    (400, b"cudaErrorInvalidResourceHandle\0", b"invalid resource handle\0"),
    (500, b"cudaErrorSymbolNotFound\0", b"named symbol not found\0"),
    (600, b"cudaErrorNotReady\0", b"device not ready\0"),
    (700, b"cudaErrorIllegalAddress\0", b"an illegal memory access was encountered\0"),
    (701, b"cudaErrorLaunchOutOfResources\0", b"too many resources requested for launch\0"),
    (702, b"cudaErrorLaunchTimeout\0", b"the launch timed out and was terminated\0"),
    (710, b"cudaErrorAssert\0", b"device-side assert triggered\0"),
    (715, b"cudaErrorIllegalInstruction\0", b"an illegal instruction was encountered\0"),
    (719, b"cudaErrorLaunchFailure\0", b"unspecified launch failure\0"),
    (720, b"cudaErrorCooperativeLaunchTooLarge\0", b"too many blocks in cooperative launch\0"),
    (801, b"cudaErrorNotSupported\0", b"operation not supported (by ptxr's runtime library)\0"),
    (912, b"cudaErrorInvalidClusterSize\0", b"invalid cluster size\0"),
    (999, b"cudaErrorUnknown\0", b"unknown error\0"),
];

#[no_mangle]
pub extern "C" fn cudaGetErrorName(e: CudaError) -> *const c_char {
    RT_ERRORS.iter().find(|x| x.0 == e).map_or(b"cudaErrorUnknown\0".as_ptr(), |x| x.1.as_ptr()) as *const c_char
}

#[no_mangle]
pub extern "C" fn cudaGetErrorString(e: CudaError) -> *const c_char {
    RT_ERRORS.iter().find(|x| x.0 == e).map_or(b"unrecognized error code\0".as_ptr(), |x| x.2.as_ptr()) as *const c_char
}
