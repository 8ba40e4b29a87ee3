//! The CUDA 12 library API (`cuLibrary*`, `cuKernel*`): context-independent loading, which
//! cuda.core (and so numba-cuda) uses. A `CUlibrary` here is a module handle and a
//! `CUkernel` a function handle, so that a kernel can be passed to `cuLaunchKernel` as a
//! `CUfunction`, as CUDA allows.

use crate::module::*;
use crate::*;

/// Loads a library from a PTX image (JIT and library options change nothing here; an
/// error log buffer among the JIT options gets ptxr's message).
#[no_mangle]
pub unsafe extern "C" fn cuLibraryLoadData(lib: *mut *mut c_void, code: *const c_void, jit_opts: *const c_int, jit_vals: *mut *mut c_void, n_jit: u32, _lib_opts: *const c_int, _lib_vals: *mut *mut c_void, _n_lib: u32) -> CUresult {
    api(|| {
        initialized()?;
        if lib.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        load_image(code, n_jit, jit_opts, jit_vals, lib)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryLoadFromFile(lib: *mut *mut c_void, path: *const c_char, _jit_opts: *const c_int, _jit_vals: *mut *mut c_void, _n_jit: u32, _lib_opts: *const c_int, _lib_vals: *mut *mut c_void, _n_lib: u32) -> CUresult {
    api(|| {
        initialized()?;
        load_file(path, lib)
    })
}

#[no_mangle]
pub extern "C" fn cuLibraryUnload(lib: *mut c_void) -> CUresult {
    cuModuleUnload(lib)
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetKernel(k: *mut *mut c_void, lib: *mut c_void, name: *const c_char) -> CUresult {
    api(|| {
        initialized()?;
        let m = MODULES.get(lib)?;
        let name = if name.is_null() { return Err(CUDA_ERROR_INVALID_VALUE) } else { std::ffi::CStr::from_ptr(name).to_str().map_err(|_| CUDA_ERROR_NOT_FOUND)? };
        put(k, function(m, name)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetKernelCount(count: *mut u32, lib: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        put(count, MODULES.get(lib)?.kernels.len() as u32)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryEnumerateKernels(ks: *mut *mut c_void, n: u32, lib: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let m = MODULES.get(lib)?;
        if ks.is_null() || (n as usize) < m.kernels.len() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for (i, k) in m.kernels.iter().enumerate() {
            *ks.add(i) = function(m, &k.name)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetModule(m: *mut *mut c_void, lib: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        MODULES.get(lib)?;
        put(m, lib)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetGlobal(dptr: *mut CUdeviceptr, bytes: *mut usize, lib: *mut c_void, name: *const c_char) -> CUresult {
    api(|| {
        initialized()?;
        global(dptr, bytes, lib, name)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetManaged(dptr: *mut CUdeviceptr, bytes: *mut usize, lib: *mut c_void, name: *const c_char) -> CUresult {
    api(|| {
        initialized()?;
        global(dptr, bytes, lib, name)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuKernelGetFunction(f: *mut *mut c_void, k: *mut c_void) -> CUresult {
    api_ctx(|| {
        FUNCS.get(k)?;
        put(f, k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuKernelGetLibrary(lib: *mut *mut c_void, k: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let f = FUNCS.get(k)?;
        put(lib, f.module as *const Module as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuKernelGetAttribute(v: *mut c_int, attr: c_int, k: *mut c_void, dev: CUdevice) -> CUresult {
    if dev != 0 {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    func_attribute(v, attr, k)
}

#[no_mangle]
pub extern "C" fn cuKernelSetAttribute(attr: c_int, v: c_int, k: *mut c_void, dev: CUdevice) -> CUresult {
    if dev != 0 {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    set_func_attribute(k, attr, v)
}

#[no_mangle]
pub extern "C" fn cuKernelSetCacheConfig(k: *mut c_void, _cfg: c_int, _dev: CUdevice) -> CUresult {
    api(|| {
        initialized()?;
        FUNCS.get(k).map(|_| ())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuKernelGetName(name: *mut *const c_char, k: *mut c_void) -> CUresult {
    cuFuncGetName(name, k)
}

#[no_mangle]
pub unsafe extern "C" fn cuKernelGetParamInfo(k: *mut c_void, i: usize, off: *mut usize, size: *mut usize) -> CUresult {
    cuFuncGetParamInfo(k, i, off, size)
}
