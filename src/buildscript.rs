//! Build-script integration, modelled on the `cc` crate:
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     ptxr::Build::new().file("kernels/saxpy.ptx").opt_level(3).compile("kernels");
//! }
//! ```
//!
//! compiles every file for Cargo's `TARGET` (x86-64 or AArch64) into `OUT_DIR/lib<name>.a`,
//! tells Cargo to link it, and writes typed Rust bindings to `OUT_DIR/<name>.rs` for the crate
//! to `include!`:
//!
//! ```ignore
//! include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
//! // one module per PTX file (its stem in snake_case), also re-exported flat:
//! saxpy::saxpy(&LaunchConfig::new(4096, 256), &mut x, &mut y, 2.0, n)?;
//! ```
//!
//! For each kernel `k` the bindings have `k::K: KernelDesc` (parameter layout, frame size,
//! static shared memory), `unsafe fn k_raw(cfg, params...)` taking pointer parameters as raw
//! `u64` addresses, and — when every `.u64`/`.b64` parameter is known to be a pointer or a
//! scalar (declared `.ptr`, or told with [`Build::buffers`], [`Build::buffer_param`],
//! [`Build::scalar_param`]) — a safe `fn k(cfg, params...)` that takes each pointer parameter
//! as a buffer (`&mut [T]`, `&mut Vec<T>` of plain numbers). Both launch through
//! `ptxr_runtime::launch_cta_fn` on all cores: the crate that uses the bindings lists
//! `ptxr-runtime` in its `[dependencies]` (and `ptxr` only in `[build-dependencies]`). The library also holds the C-ABI launch
//! functions (docs/abi.md) unless [`Build::c_abi`] is off; `OUT_DIR/ptxr_<name>.h` is their
//! header.

use crate::capi::{self, CKernel};
use crate::codegen::target::TargetKind;
use crate::codegen::KernelInfo;
use crate::syntax::ast::Type;
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// A ptxr build: PTX files to one static library plus bindings. See the module docs.
#[derive(Clone, Debug)]
pub struct Build {
    files: Vec<PathBuf>,
    opt_level: Option<u32>,
    target: Option<String>,
    out_dir: Option<PathBuf>,
    bindings: bool,
    c_abi: bool,
    cargo_metadata: bool,
    buffers: bool,
    buffer_params: Vec<(String, usize)>,
    scalar_params: Vec<(String, usize)>,
    check: bool,
}

/// Why a build failed; the message names the file (and `file:line:col` for bad PTX).
#[derive(Clone, Debug)]
pub struct Error {
    msg: String,
}

impl Error {
    fn new(msg: impl Into<String>) -> Error {
        Error { msg: msg.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

/// What [`Build::try_compile`] wrote.
#[derive(Clone, Debug)]
pub struct Output {
    /// `OUT_DIR/lib<name>.a`.
    pub lib: PathBuf,
    /// `OUT_DIR/<name>.rs`, if bindings are on.
    pub bindings: Option<PathBuf>,
    /// `OUT_DIR/ptxr_<name>.h`, if the C ABI is on.
    pub header: Option<PathBuf>,
    /// Every kernel, with the file it comes from.
    pub kernels: Vec<(PathBuf, KernelInfo)>,
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

impl Build {
    pub fn new() -> Build {
        Build { files: Vec::new(), opt_level: None, target: None, out_dir: None, bindings: true, c_abi: true, cargo_metadata: true, buffers: false, buffer_params: Vec::new(), scalar_params: Vec::new(), check: false }
    }

    /// Adds a PTX file.
    pub fn file(&mut self, p: impl AsRef<Path>) -> &mut Build {
        self.files.push(p.as_ref().to_path_buf());
        self
    }

    /// Adds PTX files.
    pub fn files<P: AsRef<Path>>(&mut self, ps: impl IntoIterator<Item = P>) -> &mut Build {
        for p in ps {
            self.file(p);
        }
        self
    }

    /// LLVM optimization level 0–3 (default: Cargo's `OPT_LEVEL`; `s`/`z` mean 2).
    pub fn opt_level(&mut self, o: u32) -> &mut Build {
        self.opt_level = Some(o.min(3));
        self
    }

    /// Target instead of Cargo's `TARGET`: a triple (`aarch64-unknown-linux-gnu`) or `host`
    /// (this machine with all its CPU features — not portable), `x86_64`, `aarch64`.
    pub fn target(&mut self, t: &str) -> &mut Build {
        self.target = Some(t.to_string());
        self
    }

    /// Output directory instead of Cargo's `OUT_DIR`.
    pub fn out_dir(&mut self, d: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(d.as_ref().to_path_buf());
        self
    }

    /// Whether to write `OUT_DIR/<name>.rs` (default on).
    pub fn bindings(&mut self, on: bool) -> &mut Build {
        self.bindings = on;
        self
    }

    /// Whether the library holds the C-ABI launch functions and C runtime (default on; needs
    /// the target's C compiler: `CC_<target>`, `TARGET_CC`, `CC`, or `cc` /
    /// `aarch64-linux-gnu-gcc`).
    pub fn c_abi(&mut self, on: bool) -> &mut Build {
        self.c_abi = on;
        self
    }

    /// Whether to print `cargo:` lines (default on; off outside build scripts).
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Build {
        self.cargo_metadata = on;
        self
    }

    /// Treat every `.u64`/`.b64` kernel parameter as a pointer (a buffer in the safe
    /// bindings), except those named with [`Build::scalar_param`].
    pub fn buffers(&mut self, on: bool) -> &mut Build {
        self.buffers = on;
        self
    }

    /// Parameter `index` of `kernel` is a pointer: a buffer in the safe bindings.
    pub fn buffer_param(&mut self, kernel: &str, index: usize) -> &mut Build {
        self.buffer_params.push((kernel.to_string(), index));
        self
    }

    /// Parameter `index` of `kernel` (a `.u64`/`.b64`) is a plain integer, not a pointer.
    pub fn scalar_param(&mut self, kernel: &str, index: usize) -> &mut Build {
        self.scalar_params.push((kernel.to_string(), index));
        self
    }

    /// Compiles the kernels for the checking mode (`ptxr run --check`: memcheck, racecheck,
    /// initcheck and synccheck, on the per-thread path; default off). A launch then stops
    /// at the first bad access with a report (`LaunchError`: file:line:col, CTA, thread,
    /// address, size, nearest allocation). The safe bindings check global memory against the
    /// buffers they are given and the module's variables; the `_raw` ones against the list
    /// set with `ptxr_runtime::check::set_check` if there is one, else they leave global
    /// accesses unchecked (shared memory and `.local` are checked either way). Made for
    /// tests: the checks cost several times the plain run's time. The library's C launch
    /// functions check too (docs/abi.md, `ptxr_check_add`). Two libraries that both hold
    /// the C runtime cannot be linked into one program: build the second with
    /// `.c_abi(false)`.
    pub fn check(&mut self, on: bool) -> &mut Build {
        self.check = on;
        self
    }

    /// Compiles everything into `lib<name>.a`; panics with a readable message on failure.
    pub fn compile(&self, name: &str) {
        if let Err(e) = self.try_compile(name) {
            panic!("\n\nptxr::Build failed:\n{e}\n\n");
        }
    }

    /// Reads an environment variable, telling Cargo to rerun when it changes.
    fn getenv(&self, var: &str) -> Option<String> {
        if self.cargo_metadata {
            println!("cargo:rerun-if-env-changed={var}");
        }
        std::env::var(var).ok()
    }

    fn target_kind(&self) -> Result<(TargetKind, String), Error> {
        let t = match &self.target {
            Some(t) => t.clone(),
            None => match self.getenv("TARGET") {
                Some(t) => t,
                None => return Ok((TargetKind::Host, std::env::consts::ARCH.to_string())),
            },
        };
        if let Some(k) = TargetKind::parse(&t) {
            return match k {
                TargetKind::Nvptx64 => Err(Error::new("ptxr::Build: target nvptx64 is not supported (x86_64 or aarch64)")),
                TargetKind::Host => Ok((k, std::env::consts::ARCH.to_string())),
                _ => Ok((k, t)),
            };
        }
        let arch = t.split('-').next().unwrap_or("");
        match arch {
            "x86_64" => Ok((TargetKind::X86_64, t)),
            "aarch64" => Ok((TargetKind::AArch64, t)),
            _ => Err(Error::new(format!("ptxr::Build: unsupported target `{t}` (ptxr compiles for x86_64 and aarch64)"))),
        }
    }

    /// The C compiler for the target, as the `cc` crate finds it.
    fn c_compiler(&self, kind: TargetKind, triple: &str) -> String {
        let host = self.getenv("HOST");
        let host_arch = host.as_deref().and_then(|h| h.split('-').next()).unwrap_or(std::env::consts::ARCH).to_string();
        let target_arch = match kind {
            TargetKind::X86_64 => "x86_64",
            TargetKind::AArch64 => "aarch64",
            _ => host_arch.as_str(),
        };
        let cross = target_arch != host_arch;
        for v in [format!("CC_{triple}"), format!("CC_{}", triple.replace('-', "_"))] {
            if let Some(cc) = self.getenv(&v) {
                return cc;
            }
        }
        if cross {
            if let Some(cc) = self.getenv("TARGET_CC") {
                return cc;
            }
            return capi::c_compiler(kind);
        }
        self.getenv("CC").unwrap_or_else(|| capi::c_compiler(kind))
    }

    /// Compiles everything into `lib<name>.a` (and the bindings and header).
    pub fn try_compile(&self, name: &str) -> Result<Output, Error> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(Error::new(format!("ptxr::Build: library name `{name}` must be letters, digits, `_` or `-`")));
        }
        if self.files.is_empty() {
            return Err(Error::new("ptxr::Build: no PTX files (add some with .file(...))"));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(self.getenv("OUT_DIR").ok_or_else(|| Error::new("ptxr::Build: OUT_DIR is not set (not in a build script? use .out_dir(...))"))?),
        };
        let (kind, triple) = self.target_kind()?;
        let opt = match self.opt_level {
            Some(o) => o,
            None => match self.getenv("OPT_LEVEL").as_deref() {
                Some("0") => 0,
                Some("1") => 1,
                Some("2") | Some("s") | Some("z") => 2,
                _ => 3,
            },
        };
        let work = out_dir.join(format!("ptxr-{name}"));
        std::fs::create_dir_all(&work).map_err(|e| Error::new(format!("ptxr::Build: cannot create {}: {e}", work.display())))?;
        let mut objs = Vec::new();
        let mut kernels: Vec<(PathBuf, String, KernelInfo)> = Vec::new();
        let mut vars: Vec<(PathBuf, String, u64)> = Vec::new();
        // The checking mode runs per thread; both settings are this thread's, restored after.
        let (was_check, was_exec) = (crate::codegen::check(), crate::codegen::warp::exec_set());
        if self.check {
            crate::codegen::set_check(true);
            crate::codegen::warp::set_exec(crate::codegen::warp::Exec::Thread);
        }
        let compiled = (|| {
            for (n, f) in self.files.iter().enumerate() {
                if self.cargo_metadata {
                    println!("cargo:rerun-if-changed={}", f.display());
                }
                let src = crate::SourceFile::load(f).map_err(|e| Error::new(format!("{e:#}")))?;
                let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "kernels".into());
                let o = work.join(format!("{n}-{}.o", capi::c_ident(&stem)));
                let (ks, vs) = crate::driver::compile_object_vars(&src, kind, opt, &o).map_err(|e| Error::new(format!("{e:#}")))?;
                objs.push(o);
                for k in ks {
                    kernels.push((f.clone(), src.name.clone(), k));
                }
                for (v, size) in vs {
                    if let Some((g, _, _)) = vars.iter().find(|(_, n, _)| *n == v) {
                        return Err(Error::new(format!("ptxr::Build: with .check(true), the module variable `{v}` is defined in both {} and {} (the checking mode exports each variable's address by its name)", g.display(), f.display())));
                    }
                    vars.push((f.clone(), v, size));
                }
            }
            Ok(())
        })();
        crate::codegen::set_check(was_check);
        crate::codegen::warp::restore_exec(was_exec);
        compiled?;
        // The module variables of each file, for the C launch functions of a checked build.
        let file_vars: Vec<(PathBuf, Vec<(String, u64)>)> = self.files.iter().map(|f| (f.clone(), vars.iter().filter(|(vf, _, _)| vf == f).map(|(_, v, n)| (v.clone(), *n)).collect())).collect();
        let ck: Vec<CKernel> = kernels
            .iter()
            .map(|(f, n, k)| CKernel { info: k, file: n, checked: if self.check { file_vars.iter().find(|(vf, _)| vf == f).map(|(_, v)| v.as_slice()) } else { None } })
            .collect();
        capi::check_unique(&ck).map_err(|e| Error::new(format!("ptxr::Build: {e:#}")))?;
        let mut header = None;
        if self.c_abi {
            let cc = self.c_compiler(kind, &triple);
            objs.extend(capi::build_c_objects(&cc, &work, &ck, &[]).map_err(|e| Error::new(format!("ptxr::Build: {e:#}\n(turn the C ABI off with .c_abi(false) if only Rust launches the kernels)")))?);
            let h = out_dir.join(format!("ptxr_{name}.h"));
            std::fs::write(&h, capi::header(name, &ck)).map_err(|e| Error::new(format!("ptxr::Build: cannot write {}: {e}", h.display())))?;
            header = Some(h);
        }
        let lib = out_dir.join(format!("lib{name}.a"));
        capi::archive(&lib, &objs).map_err(|e| Error::new(format!("ptxr::Build: {e:#}")))?;
        let mut bindings = None;
        if self.bindings {
            let b = out_dir.join(format!("{name}.rs"));
            std::fs::write(&b, self.rust_bindings(&kernels, &vars)?).map_err(|e| Error::new(format!("ptxr::Build: cannot write {}: {e}", b.display())))?;
            bindings = Some(b);
        }
        if self.cargo_metadata {
            println!("cargo:rustc-link-search=native={}", out_dir.display());
            println!("cargo:rustc-link-lib=static={name}");
        }
        Ok(Output { lib, bindings, header, kernels: kernels.into_iter().map(|(f, _, k)| (f, k)).collect() })
    }

    fn is_buffer(&self, k: &KernelInfo, idx: usize) -> Option<bool> {
        let p = &k.params[idx];
        if !(matches!(p.ty, Type::U64 | Type::B64) && p.size == 8) {
            return Some(false);
        }
        let named = |v: &Vec<(String, usize)>| v.iter().any(|(n, i)| *n == k.name && *i == idx);
        if named(&self.scalar_params) {
            return Some(false);
        }
        if p.is_ptr || self.buffers || named(&self.buffer_params) {
            return Some(true);
        }
        None
    }

    /// The Rust bindings of `kernels`.
    fn rust_bindings(&self, kernels: &[(PathBuf, String, KernelInfo)], vars: &[(PathBuf, String, u64)]) -> Result<String, Error> {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        let mut s = format!("// Generated by ptxr::Build from {}. Do not edit.\n\n", files.join(", "));
        let mut mods: Vec<String> = Vec::new();
        let mut flat: HashSet<String> = HashSet::new();
        let mut flat_dupes: HashSet<String> = HashSet::new();
        for f in &self.files {
            let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let mut m = rust_ident(&snake(&stem), "kernels");
            while mods.contains(&m) {
                m.push('_');
            }
            mods.push(m.clone());
            s += &format!("/// The kernels of `{}`.\n#[allow(dead_code, non_snake_case, non_upper_case_globals, unused_imports, clippy::all)]\npub mod {m} {{\n", f.display());
            s += "    use ::ptxr_runtime::{ArgValue, KernelBuf, KernelDesc, LaunchConfig, LaunchError, ParamDesc};\n\n";
            if self.check {
                // The addresses of the module's variables (`driver::export_vars`).
                let mine: Vec<&(PathBuf, String, u64)> = vars.iter().filter(|(vf, _, _)| vf == f).collect();
                s += "    extern \"C\" {\n";
                for (k, (_, v, _)) in mine.iter().enumerate() {
                    s += &format!("        #[link_name = {:?}]\n        static __PTXR_VAR_{k}: *const u8;\n", format!("__ptxr_var.{v}"));
                }
                s += "    }\n";
                let list: Vec<String> = mine.iter().enumerate().map(|(k, (_, v, size))| format!("({v:?}, unsafe {{ __PTXR_VAR_{k} }} as u64, {size})")).collect();
                s += &format!("    /// The module's variables (name, address, bytes), which checked launches may reach.
    fn __ptxr_vars() -> Vec<(&'static str, u64, u64)> {{
        vec![{}]
    }}

", list.join(", "));
            }
            let mut names: HashSet<String> = HashSet::new();
            for (_, file, k) in kernels.iter().filter(|(kf, _, _)| kf == f) {
                let mut fname = rust_ident(&snake(&k.name), "kernel");
                while names.contains(&fname) {
                    fname.push('_');
                }
                names.insert(fname.clone());
                for n in [fname.clone(), format!("{fname}_raw"), fname.to_uppercase()] {
                    if !flat.insert(n.clone()) {
                        flat_dupes.insert(n);
                    }
                }
                s += &self.kernel_binding(k, file, &fname);
            }
            s += "}\n\n";
        }
        // Flat re-exports of every name that is unique across files.
        for m in &mods {
            s += &format!("#[allow(unused_imports)]\npub use self::{m}::*;\n");
        }
        if !flat_dupes.is_empty() {
            let mut d: Vec<_> = flat_dupes.into_iter().collect();
            d.sort();
            s += &format!("// Names defined by several files (use them through their modules): {}\n", d.join(", "));
        }
        Ok(s)
    }

    fn kernel_binding(&self, k: &KernelInfo, file: &str, fname: &str) -> String {
        let sym = format!("__ptxr_cta_{}", k.name);
        let cta = format!("cta_{fname}");
        let desc = fname.to_uppercase();
        let mut s = String::new();
        s += &format!("    extern \"C\" {{\n        #[link_name = {:?}]\n        fn {cta}(cta: *mut ::ptxr_runtime::abi::CtaCtx) -> i32;\n    }}\n\n", sym);
        let params: Vec<String> = k.params.iter().map(|p| format!("ParamDesc {{ name: {:?}, ty: {:?}, offset: {}, size: {} }}", p.name, p.ty.as_str(), p.offset, p.size)).collect();
        let d3 = |d: Option<[u32; 3]>| d.map_or("None".to_string(), |d| format!("Some([{}, {}, {}])", d[0], d[1], d[2]));
        s += &format!("    /// Launch facts of kernel `{}` ({file}).\n", k.name);
        s += &format!(
            "    pub static {desc}: KernelDesc = KernelDesc {{ name: {:?}, file: {:?}, params: &[{}], param_size: {}, static_smem: {}, reqntid: {}, maxntid: {}, frame_size: {}, uses_sync: {}, cta_group: {}, cluster: {}, cancellable: {} }};\n\n",
            k.name,
            file,
            params.join(", "),
            k.param_size,
            k.static_smem,
            d3(k.reqntid),
            d3(k.maxntid),
            k.frame_size,
            k.uses_sync,
            k.cta_group,
            d3(k.cluster),
            k.cancellable
        );
        // Parameter names.
        let mut pnames: Vec<String> = Vec::new();
        for (i, p) in k.params.iter().enumerate() {
            let mut n = rust_ident(&snake(&p.name), &format!("p{i}"));
            if n == "cfg" || pnames.contains(&n) || n.starts_with("cta_") {
                n = format!("p{i}");
            }
            pnames.push(n);
        }
        let sig: Vec<String> = k.params.iter().map(|p| format!(".{}{} {}", p.ty.as_str(), if p.count > 1 { format!("[{}]", p.count) } else { String::new() }, p.name)).collect();
        let doc = format!("`.entry {}({})` from {file}", k.name, sig.join(", "));
        let raw_params: Vec<String> = k.params.iter().zip(&pnames).map(|(p, n)| format!("{n}: {}", rust_type(p.ty, p.size))).collect();
        let args: Vec<String> = pnames.iter().map(|n| format!("ArgValue::from({n})")).collect();
        s += &format!("    /// Launches {doc} over `cfg.grid` CTAs of `cfg.block` threads on all cores. Pointer\n    /// parameters are raw addresses.\n    ///\n    /// # Safety\n    /// Every address passed must be valid for everything the kernel reads and writes through it.\n");
        s += &format!("    pub unsafe fn {fname}_raw(cfg: &LaunchConfig{}) -> Result<(), LaunchError> {{\n", raw_params.iter().map(|p| format!(", {p}")).collect::<String>());
        if self.check {
            s += &format!("        ::ptxr_runtime::check::with_check_raw(::ptxr_runtime::check_allocations(&[], &__ptxr_vars()), || ::ptxr_runtime::launch_cta_fn({cta}, &{desc}, cfg, &[{}]))\n    }}\n\n", args.join(", "));
        } else {
            s += &format!("        ::ptxr_runtime::launch_cta_fn({cta}, &{desc}, cfg, &[{}])\n    }}\n\n", args.join(", "));
        }
        let kinds: Vec<Option<bool>> = (0..k.params.len()).map(|i| self.is_buffer(k, i)).collect();
        if kinds.iter().all(|x| x.is_some()) {
            let mut ps = Vec::new();
            let mut call = Vec::new();
            for ((p, n), b) in k.params.iter().zip(&pnames).zip(&kinds) {
                if *b == Some(true) {
                    ps.push(format!("{n}: &mut (impl KernelBuf + ?Sized)"));
                    call.push(format!("{n}.kernel_addr()"));
                } else {
                    ps.push(format!("{n}: {}", rust_type(p.ty, p.size)));
                    call.push(n.clone());
                }
            }
            s += &format!("    /// Launches {doc}; pointer parameters take buffers (`&mut [T]`, `&mut Vec<T>`).\n");
            s += &format!("    pub fn {fname}(cfg: &LaunchConfig{}) -> Result<(), LaunchError> {{\n", ps.iter().map(|p| format!(", {p}")).collect::<String>());
            if self.check {
                // Compiled for checking: the kernel may reach its buffers and the module's
                // variables (`ptxr_runtime::check`).
                let bufs: Vec<String> = k.params.iter().zip(&pnames).zip(&kinds).enumerate().filter(|(_, (_, b))| **b == Some(true)).map(|(i, ((p, n), _))| format!("({i}, {:?}, {n}.kernel_addr(), {n}.kernel_bytes())", p.name)).collect();
                s += &format!("        let list = ::ptxr_runtime::check_allocations(&[{}], &__ptxr_vars());\n", bufs.join(", "));
                s += &format!("        ::ptxr_runtime::check::with_check(list, || unsafe {{ ::ptxr_runtime::launch_cta_fn({cta}, &{desc}, cfg, &[{}]) }})\n    }}\n\n", call.iter().map(|c| format!("ArgValue::from({c})")).collect::<Vec<_>>().join(", "));
            } else {
                s += &format!("        unsafe {{ {fname}_raw(cfg{}) }}\n    }}\n\n", call.iter().map(|c| format!(", {c}")).collect::<String>());
            }
        }
        s
    }
}

/// The Rust type of a parameter value.
fn rust_type(ty: Type, size: u32) -> String {
    match (ty, size) {
        (Type::U8 | Type::B8, 1) => "u8",
        (Type::S8, 1) => "i8",
        (Type::U16 | Type::B16 | Type::F16, 2) => "u16",
        (Type::S16, 2) => "i16",
        (Type::U32 | Type::B32, 4) => "u32",
        (Type::S32, 4) => "i32",
        (Type::F32, 4) => "f32",
        (Type::U64 | Type::B64, 8) => "u64",
        (Type::S64, 8) => "i64",
        (Type::F64, 8) => "f64",
        _ => return format!("&[u8; {size}]"),
    }
    .to_string()
}

/// `warpReduceDown` → `warp_reduce_down`; other characters become `_`.
fn snake(s: &str) -> String {
    let mut o = String::new();
    let cs: Vec<char> = s.chars().collect();
    for (i, &c) in cs.iter().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && (cs[i - 1].is_ascii_lowercase() || cs[i - 1].is_ascii_digit()) {
                o.push('_');
            }
            o.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() || c == '_' {
            o.push(c);
        } else {
            o.push('_');
        }
    }
    o
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// A valid Rust identifier from `s` (`fallback` when nothing is left).
fn rust_ident(s: &str, fallback: &str) -> String {
    let t = s.trim_matches('_');
    if t.is_empty() {
        return fallback.to_string();
    }
    let t = if t.chars().next().unwrap().is_ascii_digit() { format!("{fallback}_{t}") } else { t.to_string() };
    if KEYWORDS.contains(&t.as_str()) {
        format!("{t}_")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(snake("warpReduceDown"), "warp_reduce_down");
        assert_eq!(snake("saxpy.nvrtc"), "saxpy_nvrtc");
        assert_eq!(rust_ident("type", "k"), "type_");
        assert_eq!(rust_ident("3d", "k"), "k_3d");
    }
}
