//! `cuGetProcAddress`: the driver's functions by name, and the names without version
//! suffix that NVIDIA's library also exports.
//!
//! CUDA 12 headers map `cuMemAlloc` to `cuMemAlloc_v2` and so on; loaders (cuda-bindings)
//! ask `cuGetProcAddress("cuMemAlloc", ..., 12090, ...)` for the current variant. Every
//! function of this library is in [`TABLE`] under its base name: a name that is not there
//! is `CUDA_ERROR_NOT_FOUND` with `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`.

use crate::device::*;
use crate::library::*;
use crate::memory::*;
use crate::module::*;
use crate::stream::*;
use crate::*;

macro_rules! table {
    ($($name:literal => $f:expr),* $(,)?) => {
        /// (name as programs ask for it, function).
        pub fn table() -> Vec<(&'static str, *const c_void)> {
            vec![$(($name, $f as *const c_void)),*]
        }
    };
}

table! {
    "cuInit" => cuInit as extern "C" fn(u32) -> CUresult,
    "cuDriverGetVersion" => cuDriverGetVersion as unsafe extern "C" fn(_) -> _,
    "cuGetErrorName" => cuGetErrorName as unsafe extern "C" fn(_, _) -> _,
    "cuGetErrorString" => cuGetErrorString as unsafe extern "C" fn(_, _) -> _,
    "cuGetProcAddress" => cuGetProcAddress_v2 as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuDeviceGet" => cuDeviceGet as unsafe extern "C" fn(_, _) -> _,
    "cuDeviceGetCount" => cuDeviceGetCount as unsafe extern "C" fn(_) -> _,
    "cuDeviceGetName" => cuDeviceGetName as unsafe extern "C" fn(_, _, _) -> _,
    "cuDeviceGetUuid" => cuDeviceGetUuid_v2 as unsafe extern "C" fn(_, _) -> _,
    "cuDeviceGetPCIBusId" => cuDeviceGetPCIBusId as unsafe extern "C" fn(_, _, _) -> _,
    "cuDeviceTotalMem" => cuDeviceTotalMem_v2 as unsafe extern "C" fn(_, _) -> _,
    "cuDeviceGetAttribute" => cuDeviceGetAttribute as unsafe extern "C" fn(_, _, _) -> _,
    "cuDeviceComputeCapability" => cuDeviceComputeCapability as unsafe extern "C" fn(_, _, _) -> _,
    "cuDeviceCanAccessPeer" => cuDeviceCanAccessPeer as unsafe extern "C" fn(_, _, _) -> _,
    "cuDevicePrimaryCtxRetain" => cuDevicePrimaryCtxRetain as unsafe extern "C" fn(_, _) -> _,
    "cuDevicePrimaryCtxRelease" => cuDevicePrimaryCtxRelease_v2 as extern "C" fn(_) -> _,
    "cuDevicePrimaryCtxReset" => cuDevicePrimaryCtxReset_v2 as extern "C" fn(_) -> _,
    "cuDevicePrimaryCtxGetState" => cuDevicePrimaryCtxGetState as unsafe extern "C" fn(_, _, _) -> _,
    "cuDevicePrimaryCtxSetFlags" => cuDevicePrimaryCtxSetFlags_v2 as extern "C" fn(_, _) -> _,
    "cuCtxCreate" => cuCtxCreate_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuCtxDestroy" => cuCtxDestroy_v2 as extern "C" fn(_) -> _,
    "cuCtxGetCurrent" => cuCtxGetCurrent as unsafe extern "C" fn(_) -> _,
    "cuCtxSetCurrent" => cuCtxSetCurrent as extern "C" fn(_) -> _,
    "cuCtxPushCurrent" => cuCtxPushCurrent_v2 as extern "C" fn(_) -> _,
    "cuCtxPopCurrent" => cuCtxPopCurrent_v2 as unsafe extern "C" fn(_) -> _,
    "cuCtxGetDevice" => cuCtxGetDevice as unsafe extern "C" fn(_) -> _,
    "cuCtxGetFlags" => cuCtxGetFlags as unsafe extern "C" fn(_) -> _,
    "cuCtxGetApiVersion" => cuCtxGetApiVersion as unsafe extern "C" fn(_, _) -> _,
    "cuCtxSynchronize" => cuCtxSynchronize as extern "C" fn() -> _,
    "cuCtxGetLimit" => cuCtxGetLimit as unsafe extern "C" fn(_, _) -> _,
    "cuCtxSetLimit" => cuCtxSetLimit as extern "C" fn(_, _) -> _,
    "cuCtxGetCacheConfig" => cuCtxGetCacheConfig as unsafe extern "C" fn(_) -> _,
    "cuCtxSetCacheConfig" => cuCtxSetCacheConfig as extern "C" fn(_) -> _,
    "cuCtxGetStreamPriorityRange" => cuCtxGetStreamPriorityRange as unsafe extern "C" fn(_, _) -> _,
    "cuMemAlloc" => cuMemAlloc_v2 as unsafe extern "C" fn(_, _) -> _,
    "cuMemAllocPitch" => cuMemAllocPitch_v2 as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuMemAllocManaged" => cuMemAllocManaged as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemFree" => cuMemFree_v2 as extern "C" fn(_) -> _,
    "cuMemAllocHost" => cuMemAllocHost_v2 as unsafe extern "C" fn(_, _) -> _,
    "cuMemHostAlloc" => cuMemHostAlloc as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemFreeHost" => cuMemFreeHost as extern "C" fn(_) -> _,
    "cuMemHostGetDevicePointer" => cuMemHostGetDevicePointer_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemHostGetFlags" => cuMemHostGetFlags as unsafe extern "C" fn(_, _) -> _,
    "cuMemHostRegister" => cuMemHostRegister_v2 as extern "C" fn(_, _, _) -> _,
    "cuMemHostUnregister" => cuMemHostUnregister as extern "C" fn(_) -> _,
    "cuMemGetInfo" => cuMemGetInfo_v2 as unsafe extern "C" fn(_, _) -> _,
    "cuMemGetAddressRange" => cuMemGetAddressRange_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemPrefetchAsync" => cuMemPrefetchAsync as extern "C" fn(_, _, _, _) -> _,
    "cuMemAdvise" => cuMemAdvise as extern "C" fn(_, _, _, _) -> _,
    "cuMemcpy" => cuMemcpy as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemcpyAsync" => cuMemcpyAsync as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuMemcpyHtoD" => cuMemcpyHtoD_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemcpyDtoH" => cuMemcpyDtoH_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemcpyDtoD" => cuMemcpyDtoD_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemcpyHtoDAsync" => cuMemcpyHtoDAsync_v2 as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuMemcpyDtoHAsync" => cuMemcpyDtoHAsync_v2 as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuMemcpyDtoDAsync" => cuMemcpyDtoDAsync_v2 as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuMemcpy2D" => cuMemcpy2D_v2 as unsafe extern "C" fn(_) -> _,
    "cuMemcpy2DUnaligned" => cuMemcpy2DUnaligned_v2 as unsafe extern "C" fn(_) -> _,
    "cuMemcpy2DAsync" => cuMemcpy2DAsync_v2 as unsafe extern "C" fn(_, _) -> _,
    "cuMemsetD8" => cuMemsetD8_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemsetD16" => cuMemsetD16_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemsetD32" => cuMemsetD32_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuMemsetD2D8" => cuMemsetD2D8_v2 as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuMemsetD2D16" => cuMemsetD2D16_v2 as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuMemsetD2D32" => cuMemsetD2D32_v2 as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuMemsetD8Async" => cuMemsetD8Async as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuMemsetD16Async" => cuMemsetD16Async as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuMemsetD32Async" => cuMemsetD32Async as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuTensorMapEncodeTiled" => cuTensorMapEncodeTiled as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _, _) -> _,
    "cuTensorMapEncodeIm2col" => cuTensorMapEncodeIm2col as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _, _, _, _, _) -> _,
    "cuTensorMapReplaceAddress" => cuTensorMapReplaceAddress as unsafe extern "C" fn(_, _) -> _,
    "cuIpcGetMemHandle" => cuIpcGetMemHandle as unsafe extern "C" fn(_, _) -> _,
    "cuIpcOpenMemHandle" => cuIpcOpenMemHandle_v2 as unsafe extern "C" fn(_, _, _) -> _,
    "cuIpcCloseMemHandle" => cuIpcCloseMemHandle as extern "C" fn(_) -> _,
    "cuPointerGetAttribute" => cuPointerGetAttribute as unsafe extern "C" fn(_, _, _) -> _,
    "cuPointerGetAttributes" => cuPointerGetAttributes as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuModuleLoad" => cuModuleLoad as unsafe extern "C" fn(_, _) -> _,
    "cuModuleLoadData" => cuModuleLoadData as unsafe extern "C" fn(_, _) -> _,
    "cuModuleLoadDataEx" => cuModuleLoadDataEx as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuModuleLoadFatBinary" => cuModuleLoadFatBinary as unsafe extern "C" fn(_, _) -> _,
    "cuModuleUnload" => cuModuleUnload as extern "C" fn(_) -> _,
    "cuModuleGetFunction" => cuModuleGetFunction as unsafe extern "C" fn(_, _, _) -> _,
    "cuModuleGetGlobal" => cuModuleGetGlobal_v2 as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuModuleGetFunctionCount" => cuModuleGetFunctionCount as unsafe extern "C" fn(_, _) -> _,
    "cuModuleGetLoadingMode" => cuModuleGetLoadingMode as unsafe extern "C" fn(_) -> _,
    "cuLinkCreate" => cuLinkCreate_v2 as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuLinkAddData" => cuLinkAddData_v2 as unsafe extern "C" fn(_, _, _, _, _, _, _, _) -> _,
    "cuLinkAddFile" => cuLinkAddFile_v2 as unsafe extern "C" fn(_, _, _, _, _, _) -> _,
    "cuLinkComplete" => cuLinkComplete as unsafe extern "C" fn(_, _, _) -> _,
    "cuLinkDestroy" => cuLinkDestroy as extern "C" fn(_) -> _,
    "cuFuncGetAttribute" => cuFuncGetAttribute as unsafe extern "C" fn(_, _, _) -> _,
    "cuFuncSetAttribute" => cuFuncSetAttribute as extern "C" fn(_, _, _) -> _,
    "cuFuncSetCacheConfig" => cuFuncSetCacheConfig as extern "C" fn(_, _) -> _,
    "cuFuncSetSharedMemConfig" => cuFuncSetSharedMemConfig as extern "C" fn(_, _) -> _,
    "cuFuncGetModule" => cuFuncGetModule as unsafe extern "C" fn(_, _) -> _,
    "cuFuncGetName" => cuFuncGetName as unsafe extern "C" fn(_, _) -> _,
    "cuFuncGetParamInfo" => cuFuncGetParamInfo as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuLibraryLoadData" => cuLibraryLoadData as unsafe extern "C" fn(_, _, _, _, _, _, _, _) -> _,
    "cuLibraryLoadFromFile" => cuLibraryLoadFromFile as unsafe extern "C" fn(_, _, _, _, _, _, _, _) -> _,
    "cuLibraryUnload" => cuLibraryUnload as extern "C" fn(_) -> _,
    "cuLibraryGetKernel" => cuLibraryGetKernel as unsafe extern "C" fn(_, _, _) -> _,
    "cuLibraryGetKernelCount" => cuLibraryGetKernelCount as unsafe extern "C" fn(_, _) -> _,
    "cuLibraryEnumerateKernels" => cuLibraryEnumerateKernels as unsafe extern "C" fn(_, _, _) -> _,
    "cuLibraryGetModule" => cuLibraryGetModule as unsafe extern "C" fn(_, _) -> _,
    "cuLibraryGetGlobal" => cuLibraryGetGlobal as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuLibraryGetManaged" => cuLibraryGetManaged as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuKernelGetFunction" => cuKernelGetFunction as unsafe extern "C" fn(_, _) -> _,
    "cuKernelGetLibrary" => cuKernelGetLibrary as unsafe extern "C" fn(_, _) -> _,
    "cuKernelGetAttribute" => cuKernelGetAttribute as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuKernelSetAttribute" => cuKernelSetAttribute as extern "C" fn(_, _, _, _) -> _,
    "cuKernelSetCacheConfig" => cuKernelSetCacheConfig as extern "C" fn(_, _, _) -> _,
    "cuKernelGetName" => cuKernelGetName as unsafe extern "C" fn(_, _) -> _,
    "cuKernelGetParamInfo" => cuKernelGetParamInfo as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuOccupancyMaxActiveBlocksPerMultiprocessor" => cuOccupancyMaxActiveBlocksPerMultiprocessor as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags" => cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags as unsafe extern "C" fn(_, _, _, _, _) -> _,
    "cuOccupancyMaxPotentialBlockSize" => cuOccupancyMaxPotentialBlockSize as unsafe extern "C" fn(_, _, _, _, _, _) -> _,
    "cuOccupancyMaxPotentialBlockSizeWithFlags" => cuOccupancyMaxPotentialBlockSizeWithFlags as unsafe extern "C" fn(_, _, _, _, _, _, _) -> _,
    "cuOccupancyAvailableDynamicSMemPerBlock" => cuOccupancyAvailableDynamicSMemPerBlock as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuLaunchKernel" => cuLaunchKernel as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _) -> _,
    "cuLaunchKernelEx" => cuLaunchKernelEx as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuLaunchCooperativeKernel" => cuLaunchCooperativeKernel as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _) -> _,
    "cuStreamCreate" => cuStreamCreate as unsafe extern "C" fn(_, _) -> _,
    "cuStreamCreateWithPriority" => cuStreamCreateWithPriority as unsafe extern "C" fn(_, _, _) -> _,
    "cuStreamDestroy" => cuStreamDestroy_v2 as extern "C" fn(_) -> _,
    "cuStreamSynchronize" => cuStreamSynchronize as extern "C" fn(_) -> _,
    "cuStreamQuery" => cuStreamQuery as extern "C" fn(_) -> _,
    "cuStreamGetFlags" => cuStreamGetFlags as unsafe extern "C" fn(_, _) -> _,
    "cuStreamGetPriority" => cuStreamGetPriority as unsafe extern "C" fn(_, _) -> _,
    "cuStreamGetCtx" => cuStreamGetCtx as unsafe extern "C" fn(_, _) -> _,
    "cuStreamWaitEvent" => cuStreamWaitEvent as extern "C" fn(_, _, _) -> _,
    "cuStreamAddCallback" => cuStreamAddCallback as unsafe extern "C" fn(_, _, _, _) -> _,
    "cuLaunchHostFunc" => cuLaunchHostFunc as unsafe extern "C" fn(_, _, _) -> _,
    "cuEventCreate" => cuEventCreate as unsafe extern "C" fn(_, _) -> _,
    "cuEventDestroy" => cuEventDestroy_v2 as extern "C" fn(_) -> _,
    "cuEventRecord" => cuEventRecord as extern "C" fn(_, _) -> _,
    "cuEventRecordWithFlags" => cuEventRecordWithFlags as extern "C" fn(_, _, _) -> _,
    "cuEventSynchronize" => cuEventSynchronize as extern "C" fn(_) -> _,
    "cuEventQuery" => cuEventQuery as extern "C" fn(_) -> _,
    "cuEventElapsedTime" => cuEventElapsedTime as unsafe extern "C" fn(_, _, _) -> _,
    "cuProfilerStart" => cuProfilerStart as extern "C" fn() -> _,
    "cuProfilerStop" => cuProfilerStop as extern "C" fn() -> _,
}

/// `CU_GET_PROC_ADDRESS_SUCCESS`, `..._SYMBOL_NOT_FOUND`.
const FOUND: c_int = 0;
const NOT_FOUND: c_int = 1;

/// Every name resolves to this library's one variant, whatever `cudaVersion` and the
/// per-thread-default-stream flag ask for: streams here have no default-stream semantics
/// that differ (all work completes when issued).
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(symbol: *const c_char, pfn: *mut *mut c_void, _version: c_int, _flags: u64, status: *mut c_int) -> CUresult {
    api(|| {
        if symbol.is_null() || pfn.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let name = std::ffi::CStr::from_ptr(symbol).to_str().unwrap_or("");
        let base = name.strip_suffix("_ptds").or_else(|| name.strip_suffix("_ptsz")).unwrap_or(name);
        let base = base.strip_suffix("_v2").or_else(|| base.strip_suffix("_v3")).unwrap_or(base);
        match table().into_iter().find(|(n, _)| *n == base) {
            Some((_, f)) => {
                *pfn = f as *mut c_void;
                if !status.is_null() {
                    *status = FOUND;
                }
                Ok(())
            }
            None => {
                *pfn = std::ptr::null_mut();
                if !status.is_null() {
                    *status = NOT_FOUND;
                }
                Err(CUDA_ERROR_NOT_FOUND)
            }
        }
    })
}

/// The CUDA 11 form, without the status argument.
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) -> CUresult {
    cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut())
}

// The names without a version suffix, for programs and loaders that look them up with
// dlsym (their signatures are those of the suffixed functions).
macro_rules! aliases {
    ($($alias:ident => $f:ident ( $($a:ident : $t:ty),* )),* $(,)?) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $alias($($a: $t),*) -> CUresult {
                #[allow(unused_unsafe)]
                unsafe { $f($($a),*) }
            }
        )*
    };
}

aliases! {
    cuCtxDestroy => cuCtxDestroy_v2(c: *mut c_void),
    cuCtxPushCurrent => cuCtxPushCurrent_v2(c: *mut c_void),
    cuCtxPopCurrent => cuCtxPopCurrent_v2(c: *mut *mut c_void),
    cuStreamDestroy => cuStreamDestroy_v2(s: *mut c_void),
    cuEventDestroy => cuEventDestroy_v2(e: *mut c_void),
    cuDevicePrimaryCtxRelease => cuDevicePrimaryCtxRelease_v2(d: CUdevice),
    cuDevicePrimaryCtxReset => cuDevicePrimaryCtxReset_v2(d: CUdevice),
    cuDevicePrimaryCtxSetFlags => cuDevicePrimaryCtxSetFlags_v2(d: CUdevice, f: u32),
    cuLinkCreate => cuLinkCreate_v2(n: u32, o: *const c_int, v: *mut *mut c_void, s: *mut *mut c_void),
    cuLinkAddData => cuLinkAddData_v2(s: *mut c_void, t: c_int, d: *mut c_void, z: usize, name: *const c_char, n: u32, o: *const c_int, v: *mut *mut c_void),
    cuLinkAddFile => cuLinkAddFile_v2(s: *mut c_void, t: c_int, p: *const c_char, n: u32, o: *const c_int, v: *mut *mut c_void),
    cuMemHostRegister => cuMemHostRegister_v2(p: *mut c_void, z: usize, f: u32),
}
