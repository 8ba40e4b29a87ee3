//! Memory: `cuMemAlloc*`, `cuMemFree*`, `cuMemcpy*`, `cuMemset*`, `cuPointerGetAttribute*`.
//!
//! Device memory is host memory: a `CUdeviceptr` is the address of an allocation of this
//! process (page-aligned mappings of their own, apart from the C heap). Every allocation (device, host, managed, registered host ranges, and the
//! variables of loaded modules) is recorded with its bounds, so that a copy, a memset or a
//! free of an address outside all of them returns `CUDA_ERROR_INVALID_VALUE` with a
//! message, as a GPU's driver does, instead of corrupting memory.

use crate::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Device,
    Host,
    Managed,
    /// A host range registered with `cuMemHostRegister` (not owned).
    Registered,
    /// A module's `.global`/`.const` variable (owned by the module).
    Global,
    /// Another process's allocation opened with `cuIpcOpenMemHandle`.
    Ipc,
}

#[derive(Clone, Copy, Debug)]
pub struct Alloc {
    pub size: usize,
    pub kind: Kind,
    pub id: u64,
    pub ctx: usize,
    /// The memfd behind the allocation once it has been shared (`cuIpcGetMemHandle`), else
    /// -1.
    pub fd: i32,
}

static MEM: Mutex<BTreeMap<u64, Alloc>> = Mutex::new(BTreeMap::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn mem() -> std::sync::MutexGuard<'static, BTreeMap<u64, Alloc>> {
    MEM.lock().unwrap_or_else(|e| e.into_inner())
}

/// The allocation containing `[p, p + len)`, with its start.
pub fn find(p: u64, len: usize) -> Option<(u64, Alloc)> {
    let m = mem();
    let (&start, &a) = m.range(..=p).next_back()?;
    let end = start + a.size as u64;
    (p < end && p.checked_add(len as u64)? <= end).then_some((start, a))
}

/// Every allocation, named for the checking mode's reports (`ptxr_runtime::check`).
pub(crate) fn allocations() -> Vec<ptxr_runtime::check::Allocation> {
    mem()
        .iter()
        .map(|(&start, a)| {
            let what = match a.kind {
                Kind::Device => "device allocation",
                Kind::Host => "host allocation",
                Kind::Managed => "managed allocation",
                Kind::Registered => "registered host memory",
                Kind::Global => "module variable",
                Kind::Ipc => "IPC allocation",
            };
            ptxr_runtime::check::Allocation { start, len: a.size as u64, name: format!("{what} {start:#x}") }
        })
        .collect()
}

pub(crate) fn record(p: u64, size: usize, kind: Kind) {
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    mem().insert(p, Alloc { size, kind, id, ctx: device::current_handle() as usize, fd: -1 });
}

pub(crate) fn forget(p: u64) {
    mem().remove(&p);
}

fn alloc(size: usize, kind: Kind) -> Result<u64, CUresult> {
    if size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // Each allocation is its own anonymous mapping, away from the C heap: like a GPU's
    // memory, a kernel that writes a little past a buffer (into the rest of its page) does
    // not corrupt the host's heap, and one that writes far past it faults instead of
    // silently overwriting unrelated host data. Fresh mappings are zero.
    let len = map_len(size).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    // SAFETY: a new private anonymous mapping; unmapped once, by `free`.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    record(p as u64, size, kind);
    Ok(p as u64)
}

/// Bytes mapped for an allocation of `size` (whole pages).
fn map_len(size: usize) -> Option<usize> {
    let page = 4096usize.max(unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize);
    size.checked_add(page - 1).map(|n| n / page * page)
}

fn free(p: u64, kinds: &[Kind]) -> Result<(), CUresult> {
    if p == 0 {
        return Ok(());
    }
    let a = {
        let mut m = mem();
        match m.get(&p) {
            Some(a) if kinds.contains(&a.kind) => {
                let a = *a;
                m.remove(&p);
                a
            }
            _ => {
                drop(m);
                report(&format!("cuMemFree: {p:#x} is not the start of an allocation of this kind"));
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
    };
    // SAFETY: `p` was mapped by `alloc` with this length and is forgotten above.
    unsafe {
        libc::munmap(p as *mut c_void, map_len(a.size).unwrap_or(a.size));
        if a.fd >= 0 {
            libc::close(a.fd);
        }
    }
    Ok(())
}

/// Checks that `[p, p + len)` lies in one recorded allocation (`what`: the API function,
/// for the message).
fn check(p: u64, len: usize, what: &str) -> Result<(), CUresult> {
    if len == 0 {
        return Ok(());
    }
    if p == 0 || find(p, len).is_none() {
        report(&format!("{what}: [{p:#x}, +{len}) is not inside memory allocated through this driver"));
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

/// Checks a host-side pointer of a copy: not NULL when bytes are copied.
fn check_host(p: *const c_void, len: usize, what: &str) -> Result<(), CUresult> {
    if len > 0 && p.is_null() {
        report(&format!("{what}: NULL host pointer"));
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, size: usize) -> CUresult {
    api_ctx(|| {
        if dptr.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, alloc(size, Kind::Device)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocPitch_v2(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: u32) -> CUresult {
    api_ctx(|| {
        if dptr.is_null() || pitch.is_null() || !matches!(elem, 4 | 8 | 16) || width == 0 || height == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let p = width.div_ceil(512) * 512;
        put(dptr, alloc(p.checked_mul(height).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?, Kind::Device)?)?;
        put(pitch, p)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(dptr: *mut CUdeviceptr, size: usize, flags: u32) -> CUresult {
    api_ctx(|| {
        if dptr.is_null() || !matches!(flags, 1 | 2) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, alloc(size, Kind::Managed)?)
    })
}

#[no_mangle]
pub extern "C" fn cuMemFree_v2(p: CUdeviceptr) -> CUresult {
    api_ctx(|| free(p, &[Kind::Device, Kind::Managed]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) -> CUresult {
    api_ctx(|| put(pp, alloc(size, Kind::Host)? as *mut c_void))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(pp: *mut *mut c_void, size: usize, _flags: u32) -> CUresult {
    cuMemAllocHost_v2(pp, size)
}

#[no_mangle]
pub extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    api_ctx(|| free(p as u64, &[Kind::Host]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(dptr: *mut CUdeviceptr, p: *mut c_void, flags: u32) -> CUresult {
    api_ctx(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        match find(p as u64, 1) {
            Some((_, a)) if matches!(a.kind, Kind::Host | Kind::Registered) => put(dptr, p as u64),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetFlags(flags: *mut u32, p: *mut c_void) -> CUresult {
    api_ctx(|| match find(p as u64, 1) {
        Some((_, a)) if matches!(a.kind, Kind::Host | Kind::Registered) => put(flags, 0),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    })
}

#[no_mangle]
pub extern "C" fn cuMemHostRegister_v2(p: *mut c_void, size: usize, _flags: u32) -> CUresult {
    api_ctx(|| {
        if p.is_null() || size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if find(p as u64, 1).is_some() {
            return Err(712); // CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        }
        record(p as u64, size, Kind::Registered);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CUresult {
    api_ctx(|| {
        let mut m = mem();
        match m.get(&(p as u64)) {
            Some(a) if a.kind == Kind::Registered => {
                m.remove(&(p as u64));
                Ok(())
            }
            _ => Err(713), // CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    api_ctx(|| {
        let (t, f) = device::host_memory();
        put(free, f as usize)?;
        put(total, t as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(base: *mut CUdeviceptr, size: *mut usize, p: CUdeviceptr) -> CUresult {
    api_ctx(|| {
        let (start, a) = find(p, 1).ok_or(CUDA_ERROR_NOT_FOUND)?;
        if !base.is_null() {
            *base = start;
        }
        if !size.is_null() {
            *size = a.size;
        }
        Ok(())
    })
}

/// Hints about where managed memory should live: there is one memory here.
#[no_mangle]
pub extern "C" fn cuMemPrefetchAsync(p: CUdeviceptr, n: usize, _dst: CUdevice, _stream: *mut c_void) -> CUresult {
    api_ctx(|| check(p, n, "cuMemPrefetchAsync"))
}

#[no_mangle]
pub extern "C" fn cuMemAdvise(p: CUdeviceptr, n: usize, _advice: c_int, _dev: CUdevice) -> CUresult {
    api_ctx(|| check(p, n, "cuMemAdvise"))
}

// ------------------------------------------------------------------ copies

/// Runs an operation issued to stream `s` (NULL, a special handle or a live stream): at
/// once (`stream`'s module comment).
fn on_stream(s: *mut c_void, f: impl FnOnce() -> CUresult) -> CUresult {
    match stream::check(s) {
        Ok(()) => f(),
        Err(e) => e,
    }
}

unsafe fn copy(dst: u64, src: u64, n: usize) {
    if n > 0 {
        std::ptr::copy(src as *const u8, dst as *mut u8, n);
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    api_ctx(|| {
        check(dst, n, "cuMemcpyHtoD")?;
        check_host(src, n, "cuMemcpyHtoD")?;
        copy(dst, src as u64, n);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    api_ctx(|| {
        check(src, n, "cuMemcpyDtoH")?;
        check_host(dst, n, "cuMemcpyDtoH")?;
        copy(dst as u64, src, n);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    api_ctx(|| {
        check(dst, n, "cuMemcpyDtoD")?;
        check(src, n, "cuMemcpyDtoD")?;
        copy(dst, src, n);
        Ok(())
    })
}

/// Unified addressing: either side may be host memory, which cannot be checked.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    api_ctx(|| {
        check_host(dst as *const c_void, n, "cuMemcpy")?;
        check_host(src as *const c_void, n, "cuMemcpy")?;
        copy(dst, src, n);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemcpy(dst, src, n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemcpyHtoD_v2(dst, src, n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemcpyDtoH_v2(dst, src, n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemcpyDtoD_v2(dst, src, n))
}

/// `CUDA_MEMCPY2D`.
#[repr(C)]
pub struct Memcpy2D {
    src_x: usize,
    src_y: usize,
    src_type: c_int,
    src_host: *const c_void,
    src_device: CUdeviceptr,
    src_array: *mut c_void,
    src_pitch: usize,
    dst_x: usize,
    dst_y: usize,
    dst_type: c_int,
    dst_host: *mut c_void,
    dst_device: CUdeviceptr,
    dst_array: *mut c_void,
    dst_pitch: usize,
    width: usize,
    height: usize,
}

/// The address of a side of a 2-D copy (`CUmemorytype`: 1 host, 2 device, 3 array,
/// 4 unified) and whether it must lie in recorded memory.
fn side(ty: c_int, host: u64, device: u64) -> Result<(u64, bool), CUresult> {
    match ty {
        1 => Ok((host, false)),
        2 => Ok((device, true)),
        4 => Ok((device, false)),
        3 => {
            report("cuMemcpy2D: CUDA arrays are not supported by ptxr's driver library");
            Err(CUDA_ERROR_NOT_SUPPORTED)
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpy2D_v2(c: *const Memcpy2D) -> CUresult {
    api_ctx(|| {
        let c = c.as_ref().ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let (s, s_dev) = side(c.src_type, c.src_host as u64, c.src_device)?;
        let (d, d_dev) = side(c.dst_type, c.dst_host as u64, c.dst_device)?;
        if c.width == 0 || c.height == 0 {
            return Ok(());
        }
        if c.src_pitch < c.width + c.src_x && c.height > 1 || c.dst_pitch < c.width + c.dst_x && c.height > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let s0 = s + (c.src_y * c.src_pitch + c.src_x) as u64;
        let d0 = d + (c.dst_y * c.dst_pitch + c.dst_x) as u64;
        let span = |pitch: usize| (c.height - 1) * pitch + c.width;
        if s_dev {
            check(s0, span(c.src_pitch), "cuMemcpy2D (source)")?;
        }
        if d_dev {
            check(d0, span(c.dst_pitch), "cuMemcpy2D (destination)")?;
        }
        check_host(s0 as *const c_void, 1, "cuMemcpy2D")?;
        check_host(d0 as *const c_void, 1, "cuMemcpy2D")?;
        for row in 0..c.height {
            copy(d0 + (row * c.dst_pitch) as u64, s0 + (row * c.src_pitch) as u64, c.width);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpy2DUnaligned_v2(c: *const Memcpy2D) -> CUresult {
    cuMemcpy2D_v2(c)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpy2DAsync_v2(c: *const Memcpy2D, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemcpy2D_v2(c))
}

// ------------------------------------------------------------------ memset

unsafe fn fill<T: Copy>(dst: u64, v: T, n: usize, what: &str) -> Result<(), CUresult> {
    let bytes = n.checked_mul(std::mem::size_of::<T>()).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    check(dst, bytes, what)?;
    if dst as usize % std::mem::align_of::<T>() != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    std::slice::from_raw_parts_mut(dst as *mut T, n).fill(v);
    Ok(())
}

unsafe fn fill_2d<T: Copy>(dst: u64, pitch: usize, v: T, w: usize, h: usize, what: &str) -> Result<(), CUresult> {
    if h == 0 || w == 0 {
        return Ok(());
    }
    let row = w * std::mem::size_of::<T>();
    if h > 1 && pitch < row {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    check(dst, (h - 1) * pitch + row, what)?;
    for r in 0..h {
        fill(dst + (r * pitch) as u64, v, w, what)?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: CUdeviceptr, v: u8, n: usize) -> CUresult {
    api_ctx(|| fill(dst, v, n, "cuMemsetD8"))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16_v2(dst: CUdeviceptr, v: u16, n: usize) -> CUresult {
    api_ctx(|| fill(dst, v, n, "cuMemsetD16"))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dst: CUdeviceptr, v: u32, n: usize) -> CUresult {
    api_ctx(|| fill(dst, v, n, "cuMemsetD32"))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize) -> CUresult {
    api_ctx(|| fill_2d(dst, pitch, v, w, h, "cuMemsetD2D8"))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD2D16_v2(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize) -> CUresult {
    api_ctx(|| fill_2d(dst, pitch, v, w, h, "cuMemsetD2D16"))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, v: u32, w: usize, h: usize) -> CUresult {
    api_ctx(|| fill_2d(dst, pitch, v, w, h, "cuMemsetD2D32"))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(dst: CUdeviceptr, v: u8, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemsetD8_v2(dst, v, n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16Async(dst: CUdeviceptr, v: u16, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemsetD16_v2(dst, v, n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(dst: CUdeviceptr, v: u32, n: usize, s: *mut c_void) -> CUresult {
    on_stream(s, || cuMemsetD32_v2(dst, v, n))
}

// ------------------------------------------------------------------ pointer attributes

unsafe fn pointer_attribute(data: *mut c_void, attr: c_int, p: CUdeviceptr) -> Result<(), CUresult> {
    let (start, a) = find(p, 1).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let dev = !matches!(a.kind, Kind::Host | Kind::Registered);
    match attr {
        1 => put(data as *mut *mut c_void, a.ctx as *mut c_void),                 // CONTEXT
        2 => put(data as *mut u32, if dev { 2 } else { 1 }),                      // MEMORY_TYPE
        3 | 4 => put(data as *mut u64, p),                                        // DEVICE_POINTER, HOST_POINTER
        6 => put(data as *mut u8, 1),                                             // SYNC_MEMOPS
        7 => put(data as *mut u64, a.id),                                         // BUFFER_ID
        8 => put(data as *mut u8, (a.kind == Kind::Managed) as u8),               // IS_MANAGED
        9 => put(data as *mut c_int, 0),                                          // DEVICE_ORDINAL
        10 => put(data as *mut u8, 0),                                            // IS_LEGACY_CUDA_IPC_CAPABLE
        11 => put(data as *mut u64, start),                                       // RANGE_START_ADDR
        12 => put(data as *mut usize, a.size),                                    // RANGE_SIZE
        13 => put(data as *mut u8, 1),                                            // MAPPED
        14 => put(data as *mut u64, 0),                                          // ALLOWED_HANDLE_TYPES
        15 => put(data as *mut u8, 0),                                            // IS_GPU_DIRECT_RDMA_CAPABLE
        16 => put(data as *mut u32, 3),                                           // ACCESS_FLAGS: read-write
        17 => put(data as *mut *mut c_void, std::ptr::null_mut()),                // MEMPOOL_HANDLE
        18 => put(data as *mut usize, a.size),                                    // MAPPING_SIZE
        19 => put(data as *mut u64, start),                                       // MAPPING_BASE_ADDR
        20 => put(data as *mut u64, a.id),                                        // MEMORY_BLOCK_ID
        21 => put(data as *mut u8, 0),                                            // IS_HW_DECOMPRESS_CAPABLE
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttribute(data: *mut c_void, attr: c_int, p: CUdeviceptr) -> CUresult {
    api(|| {
        initialized()?;
        pointer_attribute(data, attr, p)
    })
}

/// Unknown pointers get the values CUDA gives for memory it does not know (unregistered
/// host memory) rather than an error, as the real function does.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttributes(n: u32, attrs: *const c_int, data: *mut *mut c_void, p: CUdeviceptr) -> CUresult {
    api(|| {
        initialized()?;
        if attrs.is_null() || data.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let known = find(p, 1).is_some();
        for k in 0..n as usize {
            let (a, d) = (*attrs.add(k), *data.add(k));
            if d.is_null() {
                continue;
            }
            if known {
                pointer_attribute(d, a, p)?;
            } else {
                match a {
                    1 | 17 => put(d as *mut *mut c_void, std::ptr::null_mut())?,
                    2 => put(d as *mut u32, 0)?,
                    3 | 4 | 11 | 19 => put(d as *mut u64, 0)?,
                    9 => put(d as *mut c_int, -2)?,
                    12 | 18 => put(d as *mut usize, 0)?,
                    6 | 8 | 10 | 13 | 15 | 21 => put(d as *mut u8, 0)?,
                    7 | 14 | 20 => put(d as *mut u64, 0)?,
                    16 => put(d as *mut u32, 0)?,
                    _ => return Err(CUDA_ERROR_INVALID_VALUE),
                }
            }
        }
        Ok(())
    })
}

// ------------------------------------------------------------------ tensor maps

/// `cuTensorMapEncodeTiled`: the 128-byte map in ptxr's encoding (docs/abi.md), which
/// `cp.async.bulk.tensor` and `tensormap.replace` read, from the same parameters with the
/// same checks as CUDA's (`ptxr_runtime::tensor_map::encode_tiled`).
#[no_mangle]
pub unsafe extern "C" fn cuTensorMapEncodeTiled(map: *mut [u8; 128], dtype: u32, rank: u32, addr: *mut c_void, dims: *const u64, strides: *const u64, box_dim: *const u32, element_strides: *const u32, interleave: u32, swizzle: u32, l2: u32, oob: u32) -> CUresult {
    api(|| {
        initialized()?;
        if map.is_null() || dims.is_null() || box_dim.is_null() || element_strides.is_null() || (rank > 1 && strides.is_null()) || !(1..=5).contains(&rank) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let r = rank as usize;
        let dims = std::slice::from_raw_parts(dims, r);
        let strides = if r > 1 { std::slice::from_raw_parts(strides, r - 1) } else { &[] };
        let box_dim = std::slice::from_raw_parts(box_dim, r);
        let es = std::slice::from_raw_parts(element_strides, r);
        match ptxr_runtime::tensor_map::encode_tiled(dtype, rank, addr as u64, dims, strides, box_dim, es, interleave, swizzle, l2, oob) {
            Ok(m) => {
                *map = m;
                Ok(())
            }
            Err(msg) => {
                report(&format!("cuTensorMapEncodeTiled: {msg}"));
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    })
}

/// `cuTensorMapEncodeIm2col`: an im2col map (PTX ISA 8.x 5.5.4) in ptxr's encoding, from the
/// same parameters with the same checks as CUDA's (`ptxr_runtime::tensor_map::encode_im2col`).
#[no_mangle]
pub unsafe extern "C" fn cuTensorMapEncodeIm2col(
    map: *mut [u8; 128],
    dtype: u32,
    rank: u32,
    addr: *mut c_void,
    dims: *const u64,
    strides: *const u64,
    lower: *const i32,
    upper: *const i32,
    channels: u32,
    pixels: u32,
    element_strides: *const u32,
    interleave: u32,
    swizzle: u32,
    l2: u32,
    oob: u32,
) -> CUresult {
    api(|| {
        initialized()?;
        if map.is_null() || dims.is_null() || strides.is_null() || lower.is_null() || upper.is_null() || element_strides.is_null() || !(3..=5).contains(&rank) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let r = rank as usize;
        let dims = std::slice::from_raw_parts(dims, r);
        let strides = std::slice::from_raw_parts(strides, r - 1);
        let (lower, upper) = (std::slice::from_raw_parts(lower, r - 2), std::slice::from_raw_parts(upper, r - 2));
        let es = std::slice::from_raw_parts(element_strides, r);
        match ptxr_runtime::tensor_map::encode_im2col(dtype, rank, addr as u64, dims, strides, lower, upper, channels, pixels, es, interleave, swizzle, l2, oob) {
            Ok(m) => {
                *map = m;
                Ok(())
            }
            Err(msg) => {
                report(&format!("cuTensorMapEncodeIm2col: {msg}"));
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    })
}

/// `cuTensorMapReplaceAddress`: the same map over another global address.
#[no_mangle]
pub unsafe extern "C" fn cuTensorMapReplaceAddress(map: *mut [u8; 128], addr: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let m = map.as_mut().ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if addr as u64 % 16 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        *m = ptxr_runtime::tensor_map::with_address(m, addr as u64);
        Ok(())
    })
}

// ------------------------------------------------------------------ IPC

/// `CUipcMemHandle`: 64 bytes. ptxr's: "ptxr-ipc" (8 bytes), the owner's pid (u32), the
/// memfd's descriptor in the owner (i32), the size (u64).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IpcMemHandle([u8; 64]);

const IPC_MAGIC: &[u8; 8] = b"ptxr-ipc";

/// `cuIpcGetMemHandle`: the allocation starting at `p` is moved, in place and with its
/// contents, onto a memfd shared mapping (the first time), so that another process can map
/// the same memory (`cuIpcOpenMemHandle`, through `/proc/<pid>/fd/<fd>`).
#[no_mangle]
pub unsafe extern "C" fn cuIpcGetMemHandle(h: *mut IpcMemHandle, p: CUdeviceptr) -> CUresult {
    api_ctx(|| {
        if h.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut m = mem();
        let a = match m.get_mut(&p) {
            Some(a) if matches!(a.kind, Kind::Device | Kind::Managed) => a,
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        };
        if a.fd < 0 {
            let len = map_len(a.size).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let fd = libc::memfd_create(b"ptxr-cuda-ipc\0".as_ptr() as *const c_char, libc::MFD_CLOEXEC);
            if fd < 0 || libc::ftruncate(fd, len as libc::off_t) != 0 {
                return Err(CUDA_ERROR_OUT_OF_MEMORY);
            }
            // Contents first, then the shared mapping over the same addresses.
            let mut off = 0usize;
            while off < a.size {
                let n = libc::pwrite(fd, (p as usize + off) as *const c_void, a.size - off, off as libc::off_t);
                if n <= 0 {
                    libc::close(fd);
                    return Err(CUDA_ERROR_UNKNOWN);
                }
                off += n as usize;
            }
            let q = libc::mmap(p as *mut c_void, len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_FIXED, fd, 0);
            if q == libc::MAP_FAILED {
                libc::close(fd);
                return Err(CUDA_ERROR_UNKNOWN);
            }
            a.fd = fd;
        }
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(IPC_MAGIC);
        b[8..12].copy_from_slice(&(libc::getpid() as u32).to_le_bytes());
        b[12..16].copy_from_slice(&a.fd.to_le_bytes());
        b[16..24].copy_from_slice(&(a.size as u64).to_le_bytes());
        *h = IpcMemHandle(b);
        Ok(())
    })
}

/// `cuIpcOpenMemHandle`: maps another process's shared allocation. A handle of this process
/// is refused (`CUDA_ERROR_INVALID_CONTEXT`), as CUDA refuses it.
#[no_mangle]
pub unsafe extern "C" fn cuIpcOpenMemHandle_v2(p: *mut CUdeviceptr, h: IpcMemHandle, _flags: u32) -> CUresult {
    api_ctx(|| {
        let b = h.0;
        if p.is_null() || &b[..8] != IPC_MAGIC {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let pid = u32::from_le_bytes(b[8..12].try_into().unwrap());
        let fd = i32::from_le_bytes(b[12..16].try_into().unwrap());
        let size = u64::from_le_bytes(b[16..24].try_into().unwrap()) as usize;
        if pid == libc::getpid() as u32 {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}")).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        let f = libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if f < 0 {
            report(&format!("cuIpcOpenMemHandle: cannot open the memory of process {pid} ({})", std::io::Error::last_os_error()));
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let len = map_len(size).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let q = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, f, 0);
        libc::close(f);
        if q == libc::MAP_FAILED {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        record(q as u64, size, Kind::Ipc);
        *p = q as u64;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cuIpcCloseMemHandle(p: CUdeviceptr) -> CUresult {
    api_ctx(|| {
        let a = {
            let mut m = mem();
            match m.get(&p) {
                Some(a) if a.kind == Kind::Ipc => {
                    let a = *a;
                    m.remove(&p);
                    a
                }
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
        };
        unsafe { libc::munmap(p as *mut c_void, map_len(a.size).unwrap_or(a.size)) };
        Ok(())
    })
}
