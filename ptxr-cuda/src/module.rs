//! Modules, functions and launches: `cuModuleLoad*`, `cuModuleGet*`, `cuLink*`,
//! `cuFunc*`, `cuOccupancy*`, `cuLaunchKernel`.
//!
//! A module's PTX is compiled by ptxr (`ptxr::driver::compile_shared`: host code at -O3,
//! functions it cannot compile become stubs that report their error when a launch reaches
//! them) into a shared library that is then opened. Compiled modules are cached on disk
//! under a hash of the PTX and of this library's build (`cache_dir`): the PTX (so that
//! messages name a file that can be opened), the library and what a launch needs to know
//! of each kernel (`<hash>.meta`).

use crate::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// What a launch needs to know of a kernel.
#[derive(Clone, Debug)]
pub struct Kern {
    pub name: String,
    /// (offset, size) of each parameter in the parameter buffer.
    pub params: Vec<(u32, u32)>,
    pub param_size: u32,
    pub static_smem: u32,
    pub frame_size: u32,
    pub uses_sync: bool,
    pub cta_group: bool,
    /// The module cancels cluster launches (`KernelInfo::cancellable`).
    pub cancellable: bool,
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// `.reqnctapercluster`.
    pub cluster: Option<[u32; 3]>,
    /// Declared static shared and per-thread local bytes (`KernelInfo::shared_bytes`,
    /// `local_bytes`), for the function attributes.
    pub shared_bytes: u32,
    pub local_bytes: u32,
}

pub struct Module {
    lib: libloading::Library,
    pub kernels: Vec<Kern>,
    /// Module-scope variables: name → (address, size).
    pub globals: HashMap<String, (u64, u64)>,
    deferred: Vec<(u32, u32, String)>,
    /// Bytes of the module's `.const` variables.
    pub const_bytes: u64,
    /// The PTX file messages refer to.
    file: String,
    funcs: Mutex<HashMap<String, usize>>,
    /// The PTX reads `%envreg1`/`%envreg2`, where a cooperative launch passes the grid's
    /// workspace (for the hint when such a kernel traps in another launch).
    reads_grid_ws: bool,
}

pub struct Func {
    pub module: &'static Module,
    pub k: usize,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: dynamic shared memory a launch
    /// may ask for (48 KiB less the static size until the program opts in to more).
    pub max_dyn: AtomicU32,
    cta: ptxr_runtime::CtaFn,
}

pub(crate) static MODULES: Handles<Module> = Handles::new();
pub(crate) static FUNCS: Handles<Func> = Handles::new();

/// Shared memory a launch gets without opting in (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`).
const SMEM_DEFAULT: u32 = 48 * 1024;

// ------------------------------------------------------------------ compiling and the cache

/// 64-bit FNV-1a, twice with different bases: a 128-bit key for the cache.
fn hash(parts: &[&[u8]]) -> String {
    let mut h = [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142u64];
    for p in parts {
        for (k, v) in h.iter_mut().enumerate() {
            for &b in p.iter().chain(&[0xffu8]) {
                *v ^= (b as u64).wrapping_add(k as u64);
                *v = v.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    format!("{:016x}{:016x}", h[0], h[1])
}

/// This library's file (for the cache key: a rebuilt ptxr compiles again).
fn own_identity() -> String {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let f: extern "C" fn(u32) -> CUresult = cuInit;
    if unsafe { libc::dladdr(f as *const c_void, &mut info) } != 0 && !info.dli_fname.is_null() {
        let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
        if let Ok(m) = std::fs::metadata(&path) {
            let t = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
            return format!("{path} {} {t}", m.len());
        }
    }
    env!("CARGO_PKG_VERSION").to_string()
}

/// `PTXR_CACHE_DIR`, else `$XDG_CACHE_HOME/ptxr`, else `~/.cache/ptxr`.
fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PTXR_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("ptxr");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("ptxr"),
        None => std::env::temp_dir().join("ptxr-cache"),
    }
}

fn write_meta(path: &Path, m: &ptxr::driver::SharedModule) -> std::io::Result<()> {
    use std::fmt::Write;
    let mut s = format!("ptxr-cuda-meta 4\nconst {}\n", m.const_bytes);
    let dims = |d: Option<[u32; 3]>| d.map_or("-".to_string(), |d| format!("{},{},{}", d[0], d[1], d[2]));
    for k in &m.kernels {
        let _ = writeln!(s, "kernel {} {} {} {} {} {} {} {} {} {} {} {}", k.name, k.param_size, k.static_smem, k.frame_size, k.uses_sync as u8, k.cta_group as u8, dims(k.reqntid), dims(k.maxntid), k.shared_bytes, k.local_bytes, dims(k.cluster), k.cancellable as u8);
        for p in &k.params {
            let _ = writeln!(s, "param {} {}", p.offset, p.size);
        }
    }
    for (name, size) in &m.globals {
        let _ = writeln!(s, "global {name} {size}");
    }
    for (l, c, msg) in &m.deferred {
        let _ = writeln!(s, "deferred {l} {c} {}", msg.replace('\n', " "));
    }
    let tmp = path.with_extension(format!("meta.{}", std::process::id()));
    std::fs::write(&tmp, s)?;
    std::fs::rename(&tmp, path)
}

type Meta = (Vec<Kern>, Vec<(String, u64)>, Vec<(u32, u32, String)>, u64);

fn read_meta(path: &Path) -> Option<Meta> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != "ptxr-cuda-meta 4" {
        return None;
    }
    let const_bytes = lines.next()?.strip_prefix("const ")?.parse().ok()?;
    let dims = |s: &str| -> Option<Option<[u32; 3]>> {
        if s == "-" {
            return Some(None);
        }
        let v: Vec<u32> = s.split(',').map(|x| x.parse().ok()).collect::<Option<_>>()?;
        Some(Some([*v.first()?, *v.get(1)?, *v.get(2)?]))
    };
    let (mut kernels, mut globals, mut deferred) = (Vec::new(), Vec::new(), Vec::new());
    for l in lines {
        let f: Vec<&str> = l.splitn(4, ' ').collect();
        match f[0] {
            "kernel" => {
                let f: Vec<&str> = l.split(' ').collect();
                if f.len() != 13 {
                    return None;
                }
                kernels.push(Kern {
                    name: f[1].to_string(),
                    params: Vec::new(),
                    param_size: f[2].parse().ok()?,
                    static_smem: f[3].parse().ok()?,
                    frame_size: f[4].parse().ok()?,
                    uses_sync: f[5] == "1",
                    cta_group: f[6] == "1",
                    reqntid: dims(f[7])?,
                    maxntid: dims(f[8])?,
                    shared_bytes: f[9].parse().ok()?,
                    local_bytes: f[10].parse().ok()?,
                    cluster: dims(f[11])?,
                    cancellable: f[12] == "1",
                });
            }
            "param" => kernels.last_mut()?.params.push((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?)),
            "global" => globals.push((f.get(1)?.to_string(), f.get(2)?.parse().ok()?)),
            "deferred" => deferred.push((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?, f.get(3).unwrap_or(&"").to_string())),
            _ => return None,
        }
    }
    Some((kernels, globals, deferred, const_bytes))
}

fn kern_of(k: &ptxr::codegen::KernelInfo) -> Kern {
    Kern {
        name: k.name.clone(),
        params: k.params.iter().map(|p| (p.offset, p.size)).collect(),
        param_size: k.param_size,
        static_smem: k.static_smem,
        frame_size: k.frame_size,
        uses_sync: k.uses_sync,
        cta_group: k.cta_group,
        cancellable: k.cancellable,
        reqntid: k.reqntid,
        maxntid: k.maxntid,
        shared_bytes: k.shared_bytes,
        local_bytes: k.local_bytes,
        cluster: k.cluster,
    }
}

/// Compiles (or finds in the cache) and opens the module of PTX `text`. `Err`: the code
/// and ptxr's message.
fn load_ptx(text: &str, name_hint: Option<&str>) -> Result<Module, (CUresult, String)> {
    // `PTXR_CHECK=1`: modules compiled for the checking mode (`ptxr run --check`), per thread.
    let checking = checking();
    if checking {
        ptxr::codegen::set_check(true);
        ptxr::codegen::warp::set_exec(ptxr::codegen::warp::Exec::Thread);
    }
    let key = hash(&[text.as_bytes(), own_identity().as_bytes(), format!("{:?} {checking}", ptxr::codegen::warp::exec()).as_bytes()]);
    let mut dir = cache_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        dir = std::env::temp_dir();
    }
    let so = dir.join(format!("{key}.so"));
    let meta = dir.join(format!("{key}.meta"));
    let ptx = match name_hint {
        Some(p) => PathBuf::from(p),
        None => {
            let p = dir.join(format!("{key}.ptx"));
            if !p.exists() {
                let _ = std::fs::write(&p, text);
            }
            p
        }
    };
    let file = ptx.display().to_string();
    let cached = if so.exists() { read_meta(&meta) } else { None };
    let (kernels, globals, deferred, const_bytes) = match cached {
        Some(m) => m,
        None => {
            let src = ptxr::SourceFile { name: file.clone(), text: text.to_string() };
            let tmp_so = dir.join(format!("{key}.so.{}", std::process::id()));
            let m = ptxr::driver::compile_shared(&src, 3, &tmp_so).map_err(|e| (CUDA_ERROR_INVALID_PTX, format!("{e:#}")))?;
            std::fs::rename(&tmp_so, &so).map_err(|e| (CUDA_ERROR_UNKNOWN, format!("{}: {e}", so.display())))?;
            let _ = write_meta(&meta, &m);
            (m.kernels.iter().map(kern_of).collect(), m.globals, m.deferred, m.const_bytes)
        }
    };
    let lib = unsafe { libloading::Library::new(&so) }.map_err(|e| (CUDA_ERROR_UNKNOWN, format!("cannot open the compiled module {}: {e}", so.display())))?;
    let mut gmap = HashMap::new();
    for (name, size) in globals {
        let sym = format!("__ptxr_var.{name}\0");
        // SAFETY: `__ptxr_var.<name>` is a pointer variable holding the variable's address.
        let addr = unsafe { lib.get::<*const u64>(sym.as_bytes()).map(|s| **s) };
        if let Ok(a) = addr {
            memory::record(a, size as usize, memory::Kind::Global);
            gmap.insert(name, (a, size));
        }
    }
    let reads_grid_ws = text.contains("%envreg1") || text.contains("%envreg2");
    Ok(Module { lib, kernels, globals: gmap, deferred, const_bytes, file, funcs: Mutex::new(HashMap::new()), reads_grid_ws })
}

/// A module image: NUL-terminated PTX text. A cubin (ELF) or NVIDIA fatbinary is refused
/// with a message: ptxr runs PTX.
pub(crate) unsafe fn image_text(image: *const c_void) -> Result<String, (CUresult, String)> {
    if image.is_null() {
        return Err((CUDA_ERROR_INVALID_VALUE, "NULL module image".into()));
    }
    let head = std::slice::from_raw_parts(image as *const u8, 4);
    if head == b"\x7fELF" {
        return Err((CUDA_ERROR_NO_BINARY_FOR_GPU, "the module image is a cubin (ELF); ptxr compiles PTX: load the PTX instead (nvcc -ptx, NVRTC's nvrtcGetPTX)".into()));
    }
    if u32::from_le_bytes([head[0], head[1], head[2], head[3]]) == 0xba55_ed50 {
        return Err((CUDA_ERROR_NO_BINARY_FOR_GPU, "the image is an NVIDIA fatbinary (as nvcc builds); ptxr runs PTX: load the PTX, or build a CUDA program with `ptxr cuda`".into()));
    }
    let bytes = std::ffi::CStr::from_ptr(image as *const c_char).to_bytes();
    String::from_utf8(bytes.to_vec()).map_err(|_| (CUDA_ERROR_INVALID_IMAGE, "the module image is neither PTX text nor a known binary".into()))
}

/// `__fatBinC_Wrapper_t` (magic, version, image, unused), which compilers register and
/// `cuModuleLoadFatBinary` takes: its image. Anything else is taken as the image itself.
pub(crate) unsafe fn wrapped_image(p: *const c_void) -> Result<*const c_void, (CUresult, String)> {
    if p.is_null() {
        return Err((CUDA_ERROR_INVALID_VALUE, "NULL fatbinary wrapper".into()));
    }
    if (p as *const u32).read_unaligned() == 0x466243b1 {
        Ok((p as *const *const c_void).add(1).read_unaligned())
    } else {
        Ok(p)
    }
}

/// Log buffers of `cuModuleLoadDataEx`/`cuLink*` options: `CU_JIT_ERROR_LOG_BUFFER` (5)
/// with `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES` (6) get ptxr's message; the size option is
/// set to the bytes written, as CUDA does.
unsafe fn write_log(n: u32, opts: *const c_int, vals: *mut *mut c_void, msg: &str) {
    if opts.is_null() || vals.is_null() {
        return;
    }
    let (mut buf, mut size_at) = (None, None);
    for k in 0..n as usize {
        match *opts.add(k) {
            5 => buf = Some(*vals.add(k) as *mut u8),
            6 => size_at = Some(k),
            _ => {}
        }
    }
    if let (Some(b), Some(k)) = (buf, size_at) {
        let cap = *vals.add(k) as usize;
        if b.is_null() || cap == 0 {
            return;
        }
        let n = msg.len().min(cap - 1);
        std::ptr::copy_nonoverlapping(msg.as_ptr(), b, n);
        *b.add(n) = 0;
        *vals.add(k) = (n + 1) as *mut c_void;
    }
}

fn add_module(r: Result<Module, (CUresult, String)>, out: *mut *mut c_void) -> Result<(), CUresult> {
    match r {
        Ok(m) => unsafe { put(out, MODULES.add(m)) },
        Err((code, msg)) => {
            report(&msg);
            Err(code)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(m: *mut *mut c_void, image: *const c_void) -> CUresult {
    cuModuleLoadDataEx(m, image, 0, std::ptr::null(), std::ptr::null_mut())
}

pub(crate) unsafe fn load_image(image: *const c_void, n: u32, opts: *const c_int, vals: *mut *mut c_void, out: *mut *mut c_void) -> Result<(), CUresult> {
    let r = image_text(image).and_then(|t| load_ptx(&t, None));
    if let Err((_, msg)) = &r {
        write_log(n, opts, vals, msg);
    }
    add_module(r, out)
}

pub(crate) unsafe fn load_file(path: *const c_char, out: *mut *mut c_void) -> Result<(), CUresult> {
    if out.is_null() || path.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = std::ffi::CStr::from_ptr(path).to_string_lossy().into_owned();
    let bytes = std::fs::read(&p).map_err(|e| {
        report(&format!("{p}: {e}"));
        CUDA_ERROR_FILE_NOT_FOUND
    })?;
    let mut z = bytes;
    z.push(0);
    let r = image_text(z.as_ptr() as *const c_void).and_then(|t| load_ptx(&t, Some(&p)));
    add_module(r, out)
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(m: *mut *mut c_void, image: *const c_void, n: u32, opts: *const c_int, vals: *mut *mut c_void) -> CUresult {
    api_ctx(|| {
        if m.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        load_image(image, n, opts, vals, m)
    })
}

/// `cuModuleLoadFatBinary`: a fatbinary wrapper (`__fatBinC_Wrapper_t`, magic 0x466243b1)
/// whose image is PTX text, as `ptxr cuda` embeds, or PTX text itself; an NVIDIA fatbinary
/// (SASS) is refused as in `cuModuleLoadData`.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadFatBinary(m: *mut *mut c_void, image: *const c_void) -> CUresult {
    api_ctx(|| {
        if m.is_null() || image.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        match wrapped_image(image) {
            Ok(image) => load_image(image, 0, std::ptr::null(), std::ptr::null_mut(), m),
            Err((code, msg)) => {
                report(&msg);
                Err(code)
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoad(m: *mut *mut c_void, path: *const c_char) -> CUresult {
    api_ctx(|| load_file(path, m))
}

#[no_mangle]
pub extern "C" fn cuModuleUnload(m: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let md = MODULES.remove(m)?;
        for (a, _) in md.globals.values() {
            memory::forget(*a);
        }
        let funcs = md.funcs.lock().unwrap_or_else(|e| e.into_inner());
        for &f in funcs.values() {
            let _ = FUNCS.remove(f as *mut c_void);
        }
        Ok(())
    })
}

fn cstr<'a>(p: *const c_char) -> Result<&'a str, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    unsafe { std::ffi::CStr::from_ptr(p) }.to_str().map_err(|_| CUDA_ERROR_NOT_FOUND)
}

pub(crate) fn function(m: &'static Module, name: &str) -> Result<*mut c_void, CUresult> {
    let mut funcs = m.funcs.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&f) = funcs.get(name) {
        return Ok(f as *mut c_void);
    }
    let k = m.kernels.iter().position(|k| k.name == name).ok_or(CUDA_ERROR_NOT_FOUND)?;
    let sym = format!("__ptxr_cta_{name}\0");
    // SAFETY: every kernel of a compiled module has its CTA function `__ptxr_cta_<name>`.
    let cta = unsafe { m.lib.get::<ptxr_runtime::CtaFn>(sym.as_bytes()).map(|s| *s) }.map_err(|_| CUDA_ERROR_NOT_FOUND)?;
    let kern = &m.kernels[k];
    let h = FUNCS.add(Func { module: m, k, max_dyn: AtomicU32::new(SMEM_DEFAULT.saturating_sub(kern.static_smem)), cta });
    funcs.insert(name.to_string(), h as usize);
    Ok(h)
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(f: *mut *mut c_void, m: *mut c_void, name: *const c_char) -> CUresult {
    api_ctx(|| {
        let md = MODULES.get(m)?;
        let name = cstr(name)?;
        if f.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(f, function(md, name)?)
    })
}

pub(crate) unsafe fn global(dptr: *mut CUdeviceptr, bytes: *mut usize, m: *mut c_void, name: *const c_char) -> Result<(), CUresult> {
    let md = MODULES.get(m)?;
    let &(a, n) = md.globals.get(cstr(name)?).ok_or(CUDA_ERROR_NOT_FOUND)?;
    if !dptr.is_null() {
        *dptr = a;
    }
    if !bytes.is_null() {
        *bytes = n as usize;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(dptr: *mut CUdeviceptr, bytes: *mut usize, m: *mut c_void, name: *const c_char) -> CUresult {
    api_ctx(|| global(dptr, bytes, m, name))
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunctionCount(count: *mut u32, m: *mut c_void) -> CUresult {
    api_ctx(|| put(count, MODULES.get(m)?.kernels.len() as u32))
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetLoadingMode(mode: *mut c_int) -> CUresult {
    api(|| {
        initialized()?;
        put(mode, 2) // CU_MODULE_EAGER_LOADING
    })
}

// ------------------------------------------------------------------ linking (PTX inputs)

/// Said after a trap of a kernel that reads the grid workspace in a launch that is not
/// cooperative (cooperative groups trap there).
pub(crate) const GRID_SYNC_HINT: &str = "note: the kernel reads %envreg1/%envreg2, where a cooperative launch passes the grid's workspace; cooperative groups' grid.sync() traps when the launch is not cooperative (cudaLaunchCooperativeKernel, cuLaunchCooperativeKernel)";

/// ptxr's part of NVIDIA's device runtime library (libcudadevrt), linked in its place.
const DEVRT_PTX: &str = include_str!("devrt.ptx");

pub struct Link {
    ptx: Mutex<Vec<String>>,
    /// The output of `cuLinkComplete`, alive until `cuLinkDestroy`.
    out: Mutex<Option<Vec<u8>>>,
}

pub(crate) static LINKS: Handles<Link> = Handles::new();

#[no_mangle]
pub unsafe extern "C" fn cuLinkCreate_v2(_n: u32, _opts: *const c_int, _vals: *mut *mut c_void, state: *mut *mut c_void) -> CUresult {
    api_ctx(|| put(state, LINKS.add(Link { ptx: Mutex::new(Vec::new()), out: Mutex::new(None) })))
}

fn add_input(l: &Link, ty: c_int, bytes: &[u8], name: &str) -> Result<(), CUresult> {
    // CUjitInputType: 0 cubin, 1 PTX, 2 fatbinary, 3 object, 4 library, 5 NVVM (LTO IR)
    // NVIDIA's device runtime library (cooperative groups' grid functions, device-side
    // launches) is SASS: what ptxr supports of it, it provides itself (device-side launches
    // built into the compiler, cooperative groups' grid functions as PTX: `devrt.ptx`), and
    // a kernel that calls one of its functions ptxr lacks stops at launch with the
    // function's name.
    if matches!(ty, 3 | 4) && name.contains("cudadevrt") {
        let mut ptx = l.ptx.lock().unwrap_or_else(|e| e.into_inner());
        if !ptx.iter().any(|p| p == DEVRT_PTX) {
            ptx.push(DEVRT_PTX.to_string());
        }
        return Ok(());
    }
    if ty != 1 {
        report(&format!("cuLinkAddData: input `{name}` is not PTX (CUjitInputType {ty}); ptxr links PTX inputs only"));
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8(bytes[..end].to_vec()).map_err(|_| CUDA_ERROR_INVALID_IMAGE)?;
    l.ptx.lock().unwrap_or_else(|e| e.into_inner()).push(text);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkAddData_v2(state: *mut c_void, ty: c_int, data: *mut c_void, size: usize, name: *const c_char, _n: u32, _opts: *const c_int, _vals: *mut *mut c_void) -> CUresult {
    api_ctx(|| {
        let l = LINKS.get(state)?;
        if data.is_null() || size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let name = if name.is_null() { "input" } else { cstr(name).unwrap_or("input") };
        add_input(l, ty, std::slice::from_raw_parts(data as *const u8, size), name)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkAddFile_v2(state: *mut c_void, ty: c_int, path: *const c_char, _n: u32, _opts: *const c_int, _vals: *mut *mut c_void) -> CUresult {
    api_ctx(|| {
        let l = LINKS.get(state)?;
        let p = cstr(path)?;
        let bytes = std::fs::read(p).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
        add_input(l, ty, &bytes, p)
    })
}

/// The name a top-level PTX declaration or definition declares: the identifier after
/// `.func`/`.entry` (past a return parameter list) or, for a variable, the last identifier
/// before `[`, `=` or `;`.
fn declared_name(decl: &str) -> Option<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')).collect() };
    for kw in [".func", ".entry"] {
        if let Some(k) = decl.find(kw) {
            let mut rest = decl[k + kw.len()..].trim_start();
            if rest.starts_with('(') {
                let mut depth = 0;
                let end = rest.char_indices().find(|&(_, c)| {
                    depth += (c == '(') as i32 - (c == ')') as i32;
                    depth == 0
                })?;
                rest = rest[end.0 + 1..].trim_start();
            }
            let n = ident(rest);
            return (!n.is_empty()).then_some(n);
        }
    }
    let head = decl.split(|c| matches!(c, '[' | '=' | ';')).next()?;
    let n = head.split_whitespace().last()?.to_string();
    (!n.is_empty() && !n.starts_with('.')).then_some(n)
}

/// Splits PTX text into top-level items: a declaration ending with `;` outside any block,
/// or everything from a function header to the end of its body, or a single other line.
fn top_level_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut cur, mut depth, mut paren) = (String::new(), 0i32, 0i32);
    for line in text.lines() {
        cur.push_str(line);
        cur.push('\n');
        let code = line.split("//").next().unwrap_or("");
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                '(' => paren += 1,
                ')' => paren -= 1,
                _ => {}
            }
        }
        let t = code.trim_end();
        let started_func = cur.contains(".func") || cur.contains(".entry");
        let complete = depth <= 0 && paren <= 0 && (t.ends_with(';') || t.ends_with('}') || !started_func || t.is_empty());
        if complete {
            items.push(std::mem::take(&mut cur));
            depth = 0;
            paren = 0;
        }
    }
    if !cur.is_empty() {
        items.push(cur);
    }
    items
}

/// One PTX input is the linked image as it is. Several are merged into one module: the
/// highest `.version` of the inputs with the first input's `.target` and `.address_size`,
/// then every input's items in order, where an `.extern` declaration is dropped when
/// another input defines the name or an earlier input declared it already, and a `.weak`
/// definition or `.common` variable when another input defines the name strongly or an
/// earlier one defined it already (as a linker merges them).
fn merge(inputs: &[String]) -> String {
    if inputs.len() == 1 {
        return inputs[0].clone();
    }
    let directive = |item: &str, d: &str| item.trim_start().starts_with(d);
    let is_header = |item: &str| [".version", ".target", ".address_size"].iter().any(|d| directive(item, d));
    let items: Vec<Vec<String>> = inputs.iter().map(|t| top_level_items(t)).collect();
    let mut defined = std::collections::HashSet::new();
    for item in items.iter().flatten() {
        let t = item.trim_start();
        if !t.starts_with(".extern") && !is_header(t) && !t.starts_with("//") {
            if let Some(n) = declared_name(t) {
                defined.insert(n);
            }
        }
    }
    let version = items
        .iter()
        .flatten()
        .filter(|i| directive(i, ".version"))
        .filter_map(|i| {
            let v = i.split_whitespace().nth(1)?;
            let (a, b) = v.split_once('.')?;
            Some(((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?), i.clone()))
        })
        .max_by_key(|(v, _)| *v)
        .map(|(_, i)| i);
    let mut out = String::new();
    if let Some(v) = version {
        out.push_str(&v);
    }
    for item in items[0].iter().filter(|i| directive(i, ".target") || directive(i, ".address_size")) {
        out.push_str(item);
    }
    // Definitions that a linker merges: `.weak` ones give way to a strong definition or to
    // the first weak one, `.common` variables are one variable.
    let mergeable = |item: &str| directive(item, ".weak") || directive(item, ".common");
    let strong: std::collections::HashSet<String> = items.iter().flatten().filter(|i| !is_header(i) && !mergeable(i) && !directive(i, ".extern") && !directive(i, "//")).filter_map(|i| declared_name(i)).collect();
    let (mut declared, mut merged) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for item in items.iter().flatten() {
        if is_header(item) {
            continue;
        }
        if directive(item, ".extern") {
            if let Some(n) = declared_name(item) {
                if defined.contains(&n) || !declared.insert(n) {
                    continue;
                }
            }
        } else if mergeable(item) {
            if let Some(n) = declared_name(item) {
                if strong.contains(&n) || !merged.insert(n) {
                    continue;
                }
            }
        }
        out.push_str(item);
    }
    out
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkComplete(state: *mut c_void, image: *mut *mut c_void, size: *mut usize) -> CUresult {
    api_ctx(|| {
        let l = LINKS.get(state)?;
        let mut inputs = l.ptx.lock().unwrap_or_else(|e| e.into_inner()).clone();
        // The device runtime goes last: the first input's `.target` is the module's.
        inputs.sort_by_key(|p| p == DEVRT_PTX);
        if inputs.is_empty() || inputs.iter().all(|p| p == DEVRT_PTX) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut bytes = merge(&inputs).into_bytes();
        bytes.push(0);
        let mut out = l.out.lock().unwrap_or_else(|e| e.into_inner());
        let b = out.insert(bytes);
        put(image, b.as_mut_ptr() as *mut c_void)?;
        if !size.is_null() {
            *size = b.len();
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cuLinkDestroy(state: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        LINKS.remove(state).map(|_| ())
    })
}

// ------------------------------------------------------------------ functions

#[no_mangle]
pub unsafe extern "C" fn cuFuncGetAttribute(v: *mut c_int, attr: c_int, f: *mut c_void) -> CUresult {
    func_attribute(v, attr, f)
}

pub(crate) unsafe fn func_attribute(v: *mut c_int, attr: c_int, f: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        let func = FUNCS.get(f)?;
        let k = &func.module.kernels[func.k];
        let (major, minor) = device::compute_capability();
        let limit = |d: Option<[u32; 3]>| d.map(|d| (d[0] * d[1] * d[2]).min(1024) as c_int);
        put(
            v,
            match attr {
                0 => limit(k.reqntid).or(limit(k.maxntid)).unwrap_or(1024), // MAX_THREADS_PER_BLOCK
                1 => k.shared_bytes as c_int,                               // SHARED_SIZE_BYTES
                2 => func.module.const_bytes.min(i32::MAX as u64) as c_int, // CONST_SIZE_BYTES
                3 => k.local_bytes as c_int,                                // LOCAL_SIZE_BYTES
                4 => 32,                                                    // NUM_REGS
                5 | 6 => major * 10 + minor,                                // PTX_VERSION, BINARY_VERSION
                7 => 0,                                                     // CACHE_MODE_CA
                8 => func.max_dyn.load(Ordering::Acquire) as c_int,         // MAX_DYNAMIC_SHARED_SIZE_BYTES
                9 => -1,                                                    // PREFERRED_SHARED_MEMORY_CARVEOUT
                // CLUSTER_SIZE_MUST_BE_SET, REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH
                // (`.reqnctapercluster`, 0 without), NON_PORTABLE_CLUSTER_SIZE_ALLOWED.
                10 => k.cluster.is_some() as c_int,
                11..=13 => k.cluster.map_or(0, |c| c[(attr - 11) as usize] as c_int),
                14 => 1,
                15 => 0,                                                    // CLUSTER_SCHEDULING_POLICY_PREFERENCE
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            },
        )
    })
}

#[no_mangle]
pub extern "C" fn cuFuncSetAttribute(f: *mut c_void, attr: c_int, v: c_int) -> CUresult {
    set_func_attribute(f, attr, v)
}

pub(crate) fn set_func_attribute(f: *mut c_void, attr: c_int, v: c_int) -> CUresult {
    api(|| {
        initialized()?;
        let func = FUNCS.get(f)?;
        let k = &func.module.kernels[func.k];
        match attr {
            8 => {
                if v < 0 || v as u64 + k.static_smem as u64 > ptxr_runtime::MAX_SMEM {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                func.max_dyn.store(v as u32, Ordering::Release);
                Ok(())
            }
            9 if (-1..=100).contains(&v) => Ok(()),
            10..=15 => Ok(()),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    })
}

#[no_mangle]
pub extern "C" fn cuFuncSetCacheConfig(f: *mut c_void, _cfg: c_int) -> CUresult {
    api_ctx(|| FUNCS.get(f).map(|_| ()))
}

#[no_mangle]
pub extern "C" fn cuFuncSetSharedMemConfig(f: *mut c_void, _cfg: c_int) -> CUresult {
    api_ctx(|| FUNCS.get(f).map(|_| ()))
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncGetModule(m: *mut *mut c_void, f: *mut c_void) -> CUresult {
    api_ctx(|| {
        let func = FUNCS.get(f)?;
        // A module's handle is the address of its boxed `Module` (`Handles`).
        let h = func.module as *const Module as *mut c_void;
        MODULES.get(h)?;
        put(m, h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncGetName(name: *mut *const c_char, f: *mut c_void) -> CUresult {
    api_ctx(|| {
        let func = FUNCS.get(f)?;
        let k = &func.module.kernels[func.k];
        let c = std::ffi::CString::new(k.name.clone()).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        // Kept for the life of the process, as the driver's own string is.
        put(name, c.into_raw() as *const c_char)
    })
}

/// Offset and size of parameter `i` in the kernel's parameter buffer.
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetParamInfo(f: *mut c_void, i: usize, off: *mut usize, size: *mut usize) -> CUresult {
    api(|| {
        initialized()?;
        let func = FUNCS.get(f)?;
        let &(o, n) = func.module.kernels[func.k].params.get(i).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if !off.is_null() {
            *off = o as usize;
        }
        if !size.is_null() {
            *size = n as usize;
        }
        Ok(())
    })
}

// ------------------------------------------------------------------ occupancy

fn blocks_per_sm(k: &Kern, block: c_int, dyn_smem: usize) -> c_int {
    if block <= 0 {
        return 0;
    }
    let by_threads = 2048 / block;
    let smem = k.static_smem as usize + dyn_smem;
    let by_smem = if smem == 0 { 32 } else { (ptxr_runtime::MAX_SMEM as usize / smem) as c_int };
    by_threads.min(by_smem).min(32)
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut c_int, f: *mut c_void, block: c_int, dyn_smem: usize) -> CUresult {
    api_ctx(|| {
        let func = FUNCS.get(f)?;
        put(n, blocks_per_sm(&func.module.kernels[func.k], block, dyn_smem))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut c_int, f: *mut c_void, block: c_int, dyn_smem: usize, _flags: u32) -> CUresult {
    cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, dyn_smem)
}

pub type SmemOfBlock = unsafe extern "C" fn(c_int) -> usize;

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSize(grid: *mut c_int, block: *mut c_int, f: *mut c_void, smem_of: Option<SmemOfBlock>, dyn_smem: usize, limit: c_int) -> CUresult {
    api_ctx(|| {
        let func = FUNCS.get(f)?;
        let k = &func.module.kernels[func.k];
        let mut b = 1024;
        if let Some(m) = k.reqntid.or(k.maxntid) {
            b = b.min((m[0] * m[1] * m[2]) as c_int);
        }
        if limit > 0 {
            b = b.min(limit);
        }
        let smem = match smem_of {
            Some(g) => g(b),
            None => dyn_smem,
        };
        let per = blocks_per_sm(k, b, smem).max(1);
        put(block, b)?;
        put(grid, per * device::attribute(16).unwrap_or(1))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSizeWithFlags(grid: *mut c_int, block: *mut c_int, f: *mut c_void, smem_of: Option<SmemOfBlock>, dyn_smem: usize, limit: c_int, _flags: u32) -> CUresult {
    cuOccupancyMaxPotentialBlockSize(grid, block, f, smem_of, dyn_smem, limit)
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyAvailableDynamicSMemPerBlock(out: *mut usize, f: *mut c_void, blocks: c_int, _block: c_int) -> CUresult {
    api_ctx(|| {
        let func = FUNCS.get(f)?;
        let k = &func.module.kernels[func.k];
        if blocks <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let per = (ptxr_runtime::MAX_SMEM as usize / blocks as usize).saturating_sub(k.static_smem as usize);
        put(out, per.min(ptxr_runtime::MAX_SMEM as usize - k.static_smem as usize))
    })
}

// ------------------------------------------------------------------ launches

/// `CU_LAUNCH_PARAM_END`, `CU_LAUNCH_PARAM_BUFFER_POINTER`, `CU_LAUNCH_PARAM_BUFFER_SIZE`
/// (and `CU_LAUNCH_PARAM_END_AS_INT` = 0).
const PARAM_END: usize = 0;
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;

/// The CUDA error for a launch that stopped with `status` (`ptxr_runtime::abi::STATUS_*`).
/// Whether `PTXR_CHECK` asks for the checking mode (set and not `0`): kernels are compiled
/// for it and every launch checks its memory accesses against the allocations of the process
/// (docs/cuda.md).
pub(crate) fn checking() -> bool {
    std::env::var("PTXR_CHECK").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn launch_error(status: u32) -> CUresult {
    use ptxr_runtime::abi::*;
    match status {
        // The checking mode's reports (an access outside memory, a race, ...).
        STATUS_CHECK => CUDA_ERROR_ILLEGAL_ADDRESS,
        STATUS_ASSERT => CUDA_ERROR_ASSERT,
        STATUS_TIMEOUT => CUDA_ERROR_LAUNCH_TIMEOUT,
        STATUS_BAD_ADDRESS | STATUS_MEMORY_FAULT => CUDA_ERROR_ILLEGAL_ADDRESS,
        // What an NVIDIA GPU gives for a tensor copy with a misaligned box (measured).
        STATUS_BAD_TENSOR_COPY => CUDA_ERROR_ILLEGAL_INSTRUCTION,
        STATUS_UNSUPPORTED => CUDA_ERROR_NOT_SUPPORTED,
        // trap, brkpt, deadlock, bad barriers, partial warps: "unspecified launch failure".
        _ => CUDA_ERROR_LAUNCH_FAILED,
    }
}

/// Runs a launch of function `f`. A grid, block or shared-memory size that the runtime's
/// limits refuse is `config_err` (the driver's `CUDA_ERROR_INVALID_VALUE`, the runtime API's
/// `cudaErrorInvalidConfiguration`).
pub(crate) unsafe fn launch(f: *mut c_void, grid: [u32; 3], block: [u32; 3], smem: u32, s: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void, config_err: CUresult) -> Result<(), CUresult> {
    launch_as(f, grid, block, smem, s, params, extra, config_err, LaunchMode::default())
}

/// How a launch runs, from its attributes ([`launch_attributes`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LaunchMode {
    /// Every CTA at once (`cuLaunchCooperativeKernel`).
    pub cooperative: bool,
    /// The cluster dimension attribute (`ptxr_runtime::set_cluster`).
    pub cluster: Option<[u32; 3]>,
}

impl LaunchMode {
    pub const COOPERATIVE: LaunchMode = LaunchMode { cooperative: true, cluster: None };
}

/// [`launch`], cooperatively where `cooperative` is set (`cuLaunchCooperativeKernel`): every
/// CTA runs at once and the kernel may synchronize the whole grid. A grid larger than the
/// occupancy calculator's CTAs per multiprocessor times the multiprocessors is
/// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`, as on a GPU.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn launch_as(f: *mut c_void, grid: [u32; 3], block: [u32; 3], smem: u32, s: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void, config_err: CUresult, mode: LaunchMode) -> Result<(), CUresult> {
    let cooperative = mode.cooperative;
    let func = FUNCS.get(f)?;
    if cooperative {
        let k = &func.module.kernels[func.k];
        let threads = block.iter().map(|&b| b as u64).product::<u64>();
        let per_sm = blocks_per_sm(k, threads.min(c_int::MAX as u64) as c_int, smem as usize).max(0) as u64;
        let most = (per_sm * device::cores() as u64).min(ptxr_runtime::MAX_COOPERATIVE_CTAS);
        let ctas = grid.iter().map(|&g| g as u64).product::<u64>();
        if ctas > most {
            report(&format!("cooperative launch of kernel `{}`: {ctas} CTAs; at most {most} CTAs of {threads} threads run at once (cuOccupancyMaxActiveBlocksPerMultiprocessor times the multiprocessor count)", k.name));
            return Err(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
        }
    }
    stream::check(s)?;
    let m = func.module;
    let k = &m.kernels[func.k];
    let mut pbuf = vec![0u8; k.param_size.max(8) as usize];
    if !extra.is_null() {
        // {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}
        let (mut buf, mut size) = (std::ptr::null::<u8>(), None);
        let mut i = 0;
        loop {
            let key = *extra.add(i) as usize;
            match key {
                PARAM_END => break,
                PARAM_BUFFER_POINTER => buf = *extra.add(i + 1) as *const u8,
                PARAM_BUFFER_SIZE => size = (*extra.add(i + 1) as *const usize).as_ref().copied(),
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
            i += 2;
            if i > 64 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        let size = size.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if buf.is_null() || size < k.param_size as usize {
            report(&format!("cuLaunchKernel: kernel `{}` takes {} bytes of parameters; the `extra` buffer has {size}", k.name, k.param_size));
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        std::ptr::copy_nonoverlapping(buf, pbuf.as_mut_ptr(), k.param_size as usize);
    } else if !k.params.is_empty() {
        if params.is_null() {
            report(&format!("cuLaunchKernel: kernel `{}` takes {} parameters; kernelParams is NULL", k.name, k.params.len()));
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for (i, &(off, size)) in k.params.iter().enumerate() {
            let p = *params.add(i) as *const u8;
            if p.is_null() {
                report(&format!("cuLaunchKernel: kernelParams[{i}] of kernel `{}` is NULL", k.name));
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            std::ptr::copy_nonoverlapping(p, pbuf.as_mut_ptr().add(off as usize), size as usize);
        }
    }
    if smem > func.max_dyn.load(Ordering::Acquire) {
        report(&format!("cuLaunchKernel: kernel `{}`: {smem} bytes of dynamic shared memory; at most {} without cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", k.name, func.max_dyn.load(Ordering::Acquire)));
        return Err(config_err);
    }
    let shape = ptxr_runtime::Shape { name: &k.name, file: &m.file, static_smem: k.static_smem, reqntid: k.reqntid, maxntid: k.maxntid, frame_size: k.frame_size, uses_sync: k.uses_sync, cta_group: k.cta_group, cluster: k.cluster, cancellable: k.cancellable, deferred: &m.deferred };
    let cfg = ptxr_runtime::LaunchConfig { grid: ptxr_runtime::Dim3(grid[0], grid[1], grid[2]), block: ptxr_runtime::Dim3(block[0], block[1], block[2]), dyn_smem: smem };
    if let Err(e) = ptxr_runtime::check_config(&shape, &cfg) {
        report(&format!("cuLaunchKernel: {e}"));
        return Err(config_err);
    }
    // Clusters (the launch attribute, else `.reqnctapercluster`): the grid must be a whole
    // number of them, of at most 16 CTAs, and agree with the kernel's.
    if let Some(c) = mode.cluster.or(k.cluster) {
        let size = c.iter().map(|&x| x as u64).product::<u64>();
        let fits = (0..3).all(|a| grid[a] % c[a] == 0) && size <= ptxr_runtime::MAX_CLUSTER_CTAS as u64 && k.cluster.map_or(true, |r| r == c);
        if !fits {
            report(&format!("cuLaunchKernel: kernel `{}`: grid {}x{}x{} in clusters of {}x{}x{} CTAs{}: the grid must be a whole number of clusters of at most {} CTAs", k.name, grid[0], grid[1], grid[2], c[0], c[1], c[2], k.cluster.map_or(String::new(), |r| format!(" (the kernel requires {}x{}x{})", r[0], r[1], r[2])), ptxr_runtime::MAX_CLUSTER_CTAS));
            return Err(CUDA_ERROR_INVALID_CLUSTER_SIZE);
        }
    }
    let timeout = std::env::var("PTXR_LAUNCH_TIMEOUT").ok().and_then(|s| s.parse::<f64>().ok()).filter(|t| *t > 0.0).map(std::time::Duration::from_secs_f64);
    ptxr_runtime::set_timeout(timeout);
    ptxr_runtime::set_cooperative(cooperative);
    ptxr_runtime::set_cluster(mode.cluster);
    if checking() {
        ptxr_runtime::check::set_check(Some(memory::allocations()));
    }
    let ran = ptxr_runtime::run_grid(func.cta, &shape, &cfg, &pbuf);
    ptxr_runtime::set_cooperative(false);
    ptxr_runtime::set_cluster(None);
    ptxr_runtime::check::set_check(None);
    match ran {
        Ok(()) => Ok(()),
        Err(e) => {
            report(&e.0);
            if !cooperative && m.reads_grid_ws && ptxr_runtime::last_status() == ptxr_runtime::abi::STATUS_TRAP {
                report(GRID_SYNC_HINT);
            }
            let code = launch_error(ptxr_runtime::last_status());
            if code != CUDA_ERROR_NOT_SUPPORTED {
                if let Ok(c) = device::current() {
                    c.sticky.store(code, Ordering::Release);
                }
            }
            Err(code)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(f: *mut c_void, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, smem: u32, s: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult {
    api_ctx(|| launch(f, [gx, gy, gz], [bx, by, bz], smem, s, params, extra, CUDA_ERROR_INVALID_VALUE))
}

/// `CUlaunchConfig`.
#[repr(C)]
pub struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    smem: u32,
    stream: *mut c_void,
    attrs: *mut LaunchAttribute,
    nattrs: u32,
}

/// `CUlaunchAttribute`: an id and a 64-byte value.
#[repr(C)]
pub struct LaunchAttribute {
    id: c_int,
    pad: [u8; 4],
    value: [u8; 64],
}

/// `cuLaunchKernelEx`: attributes that change nothing here are accepted (priority, access
/// policy, ...); the cooperative attribute makes a cooperative launch and the cluster
/// dimension one with clusters ([`launch_as`]).
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(cfg: *const LaunchConfig, f: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult {
    api_ctx(|| {
        let c = cfg.as_ref().ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let mode = launch_attributes(c.attrs, c.nattrs, "cuLaunchKernelEx")?;
        launch_as(f, c.grid, c.block, c.smem, c.stream, params, extra, CUDA_ERROR_INVALID_VALUE, mode)
    })
}

/// The launch attributes of `cuLaunchKernelEx` and `cudaLaunchKernelExC` (the same layout):
/// whether the launch is cooperative, and its cluster shape. Attributes that change nothing
/// here are accepted (priority, access policy, ...).
pub(crate) unsafe fn launch_attributes(attrs: *const LaunchAttribute, n: u32, api: &str) -> Result<LaunchMode, CUresult> {
    let mut mode = LaunchMode::default();
    if n > 0 && attrs.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    for k in 0..n as usize {
        let a = &*attrs.add(k);
        let word = |i: usize| u32::from_le_bytes(a.value[4 * i..4 * i + 4].try_into().unwrap());
        match a.id {
            // CU_LAUNCH_ATTRIBUTE_COOPERATIVE
            2 => mode.cooperative = word(0) != 0,
            // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: x, y, z
            4 => {
                let d = [word(0), word(1), word(2)];
                if d.iter().any(|&x| x == 0) {
                    report(&format!("{api}: a cluster dimension of {}x{}x{}", d[0], d[1], d[2]));
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                mode.cluster = Some(d);
            }
            _ => {}
        }
    }
    Ok(mode)
}

/// `cuLaunchCooperativeKernel`: [`launch_as`] with every CTA at once.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(f: *mut c_void, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, smem: u32, s: *mut c_void, params: *mut *mut c_void) -> CUresult {
    api_ctx(|| launch_as(f, [gx, gy, gz], [bx, by, bz], smem, s, params, std::ptr::null_mut(), CUDA_ERROR_INVALID_VALUE, LaunchMode::COOPERATIVE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_declarations() {
        assert_eq!(declared_name(".extern .func  (.param .b64 func_retval0) malloc\n(\n\t.param .b64 malloc_param_0\n);").as_deref(), Some("malloc"));
        assert_eq!(declared_name(".visible .func _Z3fooi(.param .b32 p)").as_deref(), Some("_Z3fooi"));
        assert_eq!(declared_name(".visible .entry k(").as_deref(), Some("k"));
        assert_eq!(declared_name(".extern .global .align 4 .b8 table[16];").as_deref(), Some("table"));
        assert_eq!(declared_name(".global .align 4 .u32 counter = 7;").as_deref(), Some("counter"));
    }

    #[test]
    fn linking_several_ptx_inputs() {
        let a = ".version 7.0\n.target sm_80\n.address_size 64\n.extern .func (.param .b32 r) helper(.param .b32 x);\n.extern .func (.param .b64 r) malloc\n(\n.param .b64 n\n);\n.visible .entry k(.param .u64 p)\n{\n\tret;\n}\n";
        let b = ".version 8.0\n.target sm_80\n.address_size 64\n.extern .func (.param .b64 r) malloc\n(\n.param .b64 n\n);\n.visible .func (.param .b32 r) helper(.param .b32 x)\n{\n\tret;\n}\n";
        let m = merge(&[a.to_string(), b.to_string()]);
        // The highest version; helper's declaration gives way to its definition; malloc is
        // declared once.
        assert!(m.starts_with(".version 8.0\n.target sm_80\n.address_size 64\n"), "{m}");
        assert!(!m.contains(".extern .func (.param .b32 r) helper"), "{m}");
        assert_eq!(m.matches("malloc").count(), 1, "{m}");
        assert!(m.contains(".visible .entry k") && m.contains(".visible .func (.param .b32 r) helper"), "{m}");
        // Weak definitions and common variables that several inputs carry: one of each.
        let w = ".version 7.0\n.target sm_80\n.address_size 64\n.common .global .align 8 .u64 env;\n.weak .func (.param .b32 r) f(.param .b32 x)\n{\n\tmov.b32 r, x;\n\tret;\n}\n";
        let m = merge(&[m.clone(), w.to_string(), w.to_string()]);
        assert_eq!((m.matches(".weak .func").count(), m.matches(".common").count()), (1, 1), "{m}");
        let src = ptxr::SourceFile { name: "linked.ptx".into(), text: m };
        ptxr::check_source(&src).unwrap_or_else(|e| panic!("{e}"));
    }
}
