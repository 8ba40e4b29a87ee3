//! Loading compiled modules and launching kernels with arguments from the command line.

use crate::codegen::KernelInfo;
use crate::syntax::ast::Type;
use ptxr_runtime::{check_config, guarded_buffers, run_grid, CtaFn, GuardedMem, LaunchConfig, LaunchError, Shape};
use std::path::Path;

/// One kernel argument from the command line (`--arg`).
#[derive(Clone, Debug)]
pub enum ArgSpec {
    /// A scalar of a PTX type, as raw little-endian bits.
    Scalar(Type, u64),
    /// A buffer with initial contents; the kernel receives its address.
    Buffer(Vec<u8>),
    /// The raw bytes of a by-value parameter of any size (`.param .align 8 .b8 p[24]`, a
    /// struct passed by value); written as `bytes:HEXBYTES`.
    Bytes(Vec<u8>),
    /// A texture or surface object over `data`: the kernel receives the address of a
    /// descriptor (`codegen::ops_tex`) whose data pointer is filled in at launch; written as
    /// `tex:FMTxCH:W[xH[xD]][:OPTIONS]=BUFFER` or `surf:...` (docs/textures.md).
    Texture { desc: [u8; 64], data: Vec<u8> },
    /// A tensor map (`cp.async.bulk.tensor`) over `data`, passed by value (128 bytes) with the
    /// data's address filled in at launch; written as
    /// `tmap:TYPE:DIMS:STRIDES:BOX[:OPTIONS]=BUFFER` (docs/abi.md).
    TensorMap { map: [u8; 128], data: Vec<u8> },
}

/// The element types of a `tmap:` argument, numbered as `CUtensorMapDataType`.
const TMAP_TYPES: [&str; 16] = ["u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f64", "bf16", "f32ftz", "tf32", "tf32ftz", "b4x16", "b4x16_p64", "b6x16_p32"];

/// Parses `tmap:TYPE:DIMS:STRIDES:BOX[:OPTIONS]=buf:...` (see [`ArgSpec::TensorMap`]): DIMS
/// and BOX innermost first (`64x40`), STRIDES the bytes between consecutive indices of the
/// outer dimensions (`128`; `-` for one dimension), OPTIONS `swizzle32`, `swizzle64`,
/// `swizzle128`, `estrides=AxB...`, `nanfill`; with the option `im2col` an im2col map whose BOX
/// is CHANNELSxPIXELS and whose bounding box is `lower=WxH...` and `upper=WxH...` (rank - 2
/// coordinates each, innermost first).
fn parse_tensor_map(s: &str, rest: &str) -> Result<ArgSpec, String> {
    let usage = || format!("`{s}`: expected tmap:TYPE:DIMS:STRIDES:BOX[:OPTIONS]=buf:... (TYPE {}; DIMS and BOX like 64x40, innermost first; STRIDES in bytes like 128, or - for one dimension; OPTIONS swizzle32 swizzle64 swizzle128 estrides=AxB nanfill, and im2col lower=WxH upper=WxH with BOX as CHANNELSxPIXELS)", TMAP_TYPES.join(" "));
    let (spec, buf) = rest.split_once("=buf:").map(|(a, b)| (a, format!("buf:{b}"))).ok_or_else(usage)?;
    let mut parts = spec.split(':');
    let ty = parts.next().ok_or_else(usage)?;
    let dtype = TMAP_TYPES.iter().position(|t| *t == ty).ok_or_else(|| format!("`{s}`: unknown element type `{ty}` ({})", TMAP_TYPES.join(" ")))? as u32;
    let list = |p: Option<&str>| -> Result<Vec<u64>, String> {
        let p = p.ok_or_else(usage)?;
        if p == "-" {
            return Ok(Vec::new());
        }
        p.split('x').map(|d| d.parse::<u64>().map_err(|_| format!("`{s}`: `{d}` is not a number"))).collect()
    };
    let dims = list(parts.next())?;
    let strides = list(parts.next())?;
    let boxes: Vec<u32> = list(parts.next())?.into_iter().map(|b| b.min(u32::MAX as u64) as u32).collect();
    let (mut swizzle, mut fill, mut im2col) = (0u32, 0u32, false);
    let mut es: Vec<u32> = vec![1; dims.len()];
    let (mut lower, mut upper) = (vec![0i32; dims.len().saturating_sub(2)], vec![0i32; dims.len().saturating_sub(2)]);
    let corner = |v: &str| -> Result<Vec<i32>, String> { v.split('x').map(|x| x.parse::<i32>().map_err(|_| format!("`{s}`: `{x}` is not a corner coordinate"))).collect() };
    for o in parts.flat_map(|p| p.split(',')).filter(|o| !o.is_empty()) {
        match o {
            "im2col" => im2col = true,
            _ if o.starts_with("lower=") => lower = corner(&o[6..])?,
            _ if o.starts_with("upper=") => upper = corner(&o[6..])?,
            "swizzle32" => swizzle = 1,
            "swizzle64" => swizzle = 2,
            "swizzle128" => swizzle = 3,
            "nanfill" => fill = 1,
            _ => match o.strip_prefix("estrides=") {
                Some(v) => es = v.split('x').map(|x| x.parse::<u32>().map_err(|_| format!("`{s}`: `{x}` is not an element stride"))).collect::<Result<_, _>>()?,
                None => return Err(format!("`{s}`: unknown option `{o}`")),
            },
        }
    }
    if im2col {
        // BOX is CHANNELSxPIXELS
        if strides.len() + 1 != dims.len() || boxes.len() != 2 || es.len() != dims.len() || lower.len() + 2 != dims.len() || upper.len() + 2 != dims.len() {
            return Err(format!("`{s}`: an im2col map of {} dimensions needs {} strides, CHANNELSxPIXELS, {} element strides and {} lower and upper corner coordinates", dims.len(), dims.len().saturating_sub(1), dims.len(), dims.len().saturating_sub(2)));
        }
    } else if strides.len() + 1 != dims.len() || boxes.len() != dims.len() || es.len() != dims.len() {
        return Err(format!("`{s}`: {} dimensions need {} strides, {} box sizes and element strides", dims.len(), dims.len().saturating_sub(1), dims.len()));
    }
    let map = if im2col {
        ptxr_runtime::tensor_map::encode_im2col(dtype, dims.len() as u32, 0, &dims, &strides, &lower, &upper, boxes[0], boxes[1], &es, 0, swizzle, 0, fill)
    } else {
        ptxr_runtime::tensor_map::encode_tiled(dtype, dims.len() as u32, 0, &dims, &strides, &boxes, &es, 0, swizzle, 0, fill)
    }
    .map_err(|m| format!("`{s}`: {m}"))?;
    let data = match parse_arg(&buf)? {
        ArgSpec::Buffer(b) => b,
        _ => return Err(format!("`{s}`: the data after `=` must be a buffer (buf:...)")),
    };
    // (global bytes of a unit: packed sub-byte types take several elements to one)
    let (unit, gsize, _) = ptxr_runtime::tensor_map::unit_of(dtype);
    let need = match strides.last() {
        Some(&st) => st * dims[dims.len() - 1],
        None => dims[0] / unit * gsize,
    };
    if (data.len() as u64) < need {
        return Err(format!("`{s}`: {} data bytes given, the tensor spans {need}", data.len()));
    }
    Ok(ArgSpec::TensorMap { map, data })
}

/// Parses the descriptor part of a `tex:`/`surf:` argument (see [`ArgSpec::Texture`]).
fn parse_texture(s: &str, surface: bool, rest: &str) -> Result<ArgSpec, String> {
    use crate::codegen::ops_tex::{field, ADDR_MODES, FLAG_LAYERED, FLAG_LINEAR, FLAG_NORMALIZED, FLAG_READ_NORMALIZED, FORMATS, KIND_SURFACE, KIND_TEXTURE};
    let usage = || format!("`{s}`: expected {}:FORMATxCHANNELS:WIDTH[xHEIGHT[xDEPTH]][:OPTIONS]=buf:... (FORMAT u8 s8 u16 s16 u32 s32 f16 f32, CHANNELS 1 2 4; OPTIONS: point linear wrap mirror clamp border norm float layered)", if surface { "surf" } else { "tex" });
    let (spec, buf) = rest.split_once('=').ok_or_else(usage)?;
    let mut parts = spec.split(':');
    let (fmt, ch) = parts.next().and_then(|f| f.split_once('x')).ok_or_else(usage)?;
    let format = FORMATS.iter().position(|f| *f == fmt).ok_or_else(|| format!("`{s}`: unknown format `{fmt}` ({})", FORMATS.join(" ")))? as u32;
    let channels: u32 = ch.parse().ok().filter(|c| matches!(c, 1 | 2 | 4)).ok_or_else(|| format!("`{s}`: channels must be 1, 2 or 4"))?;
    let dims: Vec<u32> = parts.next().ok_or_else(usage)?.split('x').map(|d| d.parse::<u32>().ok().filter(|&v| v > 0)).collect::<Option<_>>().ok_or_else(|| format!("`{s}`: sizes must be positive integers, WIDTH[xHEIGHT[xDEPTH]]"))?;
    if dims.is_empty() || dims.len() > 3 {
        return Err(usage());
    }
    let (mut flags, mut mode) = (0u32, 2u32);
    for o in parts.flat_map(|p| p.split(',')).filter(|o| !o.is_empty()) {
        match o {
            "point" => flags &= !FLAG_LINEAR,
            "linear" if !surface => flags |= FLAG_LINEAR,
            "norm" if !surface => flags |= FLAG_NORMALIZED,
            "float" if !surface => flags |= FLAG_READ_NORMALIZED,
            "layered" => flags |= FLAG_LAYERED,
            m if !surface && ADDR_MODES.contains(&m) => mode = ADDR_MODES.iter().position(|x| *x == m).unwrap_or(2) as u32,
            _ => return Err(format!("`{s}`: unknown option `{o}`")),
        }
    }
    let data = match parse_arg(buf)? {
        ArgSpec::Buffer(b) => b,
        _ => return Err(format!("`{s}`: the data after `=` must be a buffer (buf:...)")),
    };
    let need = dims.iter().map(|&d| d as u64).product::<u64>() * channels as u64 * crate::codegen::ops_tex::chan_bytes(format) as u64;
    if (data.len() as u64) < need {
        return Err(format!("`{s}`: {} data bytes given, the {} needs {need}", data.len(), if surface { "surface" } else { "texture" }));
    }
    let mut desc = [0u8; 64];
    let mut put = |off: u64, v: u32| desc[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
    put(field::KIND, if surface { KIND_SURFACE } else { KIND_TEXTURE });
    put(field::FORMAT, format);
    put(field::CHANNELS, channels);
    put(field::FLAGS, flags);
    for k in 0..3 {
        put(field::ADDR + 4 * k, mode);
    }
    put(field::WIDTH, dims[0]);
    put(field::HEIGHT, dims.get(1).copied().unwrap_or(1));
    put(field::DEPTH, dims.get(2).copied().unwrap_or(1));
    Ok(ArgSpec::Texture { desc, data })
}

/// Parses `TYPE:VALUE`, `bytes:HEX` (a by-value parameter's raw bytes), `buf:file:PATH`,
/// `buf:zero:BYTES`, `buf:hex:HEX`, `buf:TYPE:V,V,...`.
pub fn parse_arg(s: &str) -> Result<ArgSpec, String> {
    let (kind, rest) = s.split_once(':').ok_or_else(|| format!("`{s}`: expected TYPE:VALUE or buf:KIND:DATA"))?;
    if kind == "bytes" {
        let h: String = rest.chars().filter(|c| !c.is_whitespace() && *c != '_').collect();
        if h.is_empty() || h.len() % 2 != 0 {
            return Err(format!("`{s}`: expected bytes:HEXBYTES (an even number of hex digits)"));
        }
        return (0..h.len()).step_by(2).map(|k| u8::from_str_radix(&h[k..k + 2], 16).map_err(|_| format!("`{s}`: bad hex `{}`", &h[k..k + 2]))).collect::<Result<Vec<_>, _>>().map(ArgSpec::Bytes);
    }
    if kind == "tmap" {
        return parse_tensor_map(s, rest);
    }
    if kind == "tex" || kind == "surf" {
        return parse_texture(s, kind == "surf", rest);
    }
    if kind == "buf" {
        let (how, data) = rest.split_once(':').ok_or_else(|| format!("`{s}`: expected buf:file:PATH, buf:zero:BYTES or buf:hex:HEX"))?;
        return match how {
            "file" => std::fs::read(data).map(ArgSpec::Buffer).map_err(|e| format!("`{s}`: cannot read {data}: {e}")),
            "zero" => {
                let n: usize = data.parse().map_err(|_| format!("`{s}`: `{data}` is not a byte count"))?;
                if n > (1usize << 40) {
                    return Err(format!("`{s}`: buffer too large"));
                }
                Ok(ArgSpec::Buffer(vec![0; n]))
            }
            "hex" => {
                let h: String = data.chars().filter(|c| !c.is_whitespace() && *c != '_').collect();
                if h.len() % 2 != 0 {
                    return Err(format!("`{s}`: odd number of hex digits"));
                }
                (0..h.len()).step_by(2).map(|k| u8::from_str_radix(&h[k..k + 2], 16).map_err(|_| format!("`{s}`: bad hex `{}`", &h[k..k + 2]))).collect::<Result<Vec<_>, _>>().map(ArgSpec::Buffer)
            }
            t => match Type::from_str(t) {
                // `buf:f32:1.5,2,inf`: a buffer of typed elements.
                Some(ty) if !matches!(ty, Type::Pred | Type::F16x2 | Type::B128 | Type::TexRef | Type::SamplerRef | Type::SurfRef) => {
                    let mut out = Vec::new();
                    for v in data.split(',').map(|v| v.trim()).filter(|v| !v.is_empty()) {
                        let bits = parse_scalar(ty, v).map_err(|m| format!("`{s}`: {m}"))?;
                        out.extend_from_slice(&bits.to_le_bytes()[..ty.size() as usize]);
                    }
                    Ok(ArgSpec::Buffer(out))
                }
                _ => Err(format!("`{s}`: unknown buffer kind `{how}` (file, zero, hex, or an element type such as u32, f32)")),
            },
        };
    }
    let ty = Type::from_str(kind).filter(|t| !matches!(t, Type::Pred | Type::F16x2 | Type::B128 | Type::TexRef | Type::SamplerRef | Type::SurfRef)).ok_or_else(|| format!("`{s}`: unknown argument type `{kind}`"))?;
    let bits = parse_scalar(ty, rest).map_err(|m| format!("`{s}`: {m}"))?;
    Ok(ArgSpec::Scalar(ty, bits))
}

pub fn parse_scalar(ty: Type, v: &str) -> Result<u64, String> {
    let w = ty.bits();
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        let x = u64::from_str_radix(h, 16).map_err(|_| format!("`{v}` is not a hex number"))?;
        if x & !mask != 0 {
            return Err(format!("`{v}` does not fit in {w} bits"));
        }
        return Ok(x);
    }
    if ty.is_float() {
        let f: f64 = match v {
            "inf" | "+inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            _ => v.parse().map_err(|_| format!("`{v}` is not a number"))?,
        };
        return Ok(match ty {
            Type::F64 => f.to_bits(),
            Type::F32 => (f as f32).to_bits() as u64,
            _ => crate::codegen::half_bits_f64(f) as u64,
        });
    }
    if let Some(n) = v.strip_prefix('-') {
        let x: u64 = n.parse().map_err(|_| format!("`{v}` is not an integer"))?;
        if ty.is_unsigned() || x > (1u64 << (w - 1)) {
            return Err(format!("`{v}` is out of range for .{}", ty.as_str()));
        }
        return Ok((x as i64).wrapping_neg() as u64 & mask);
    }
    let x: u64 = v.parse().map_err(|_| format!("`{v}` is not an integer"))?;
    let max = if ty.is_signed() { mask >> 1 } else { mask };
    if x > max {
        return Err(format!("`{v}` is out of range for .{}", ty.as_str()));
    }
    Ok(x)
}


/// A compiled module loaded into this process.
pub struct Loaded {
    _dir: tempfile::TempDir,
    lib: libloading::Library,
    pub kernels: Vec<KernelInfo>,
    pub file: String,
    /// Compile errors of functions that were compiled as stubs, by source line
    /// (`codegen::compile_lenient`): launching a kernel that reaches one reports it.
    pub deferred: Vec<(u32, u32, String)>,
    /// Module-scope `.global`/`.const` variables (name, bytes) whose addresses the library
    /// exports as `__ptxr_var.<name>` (modules compiled for checking: `codegen::set_check`).
    pub vars: Vec<(String, u64)>,
}


impl Loaded {
    /// Links `objs` (objects for the host, of one module) into a shared library and opens it.
    pub fn from_objects(objs: &[Vec<u8>], kernels: Vec<KernelInfo>, file: &str) -> anyhow::Result<Loaded> {
        let dir = tempfile::tempdir()?;
        let so = dir.path().join("module.so");
        link_shared(&write_objects(objs, dir.path())?, &so)?;
        // PTXR_KEEP_SO=PREFIX keeps a copy of the library as PREFIX.<file name> (a developer's
        // aid: `perf report` names the addresses of a deleted module.so only by offset, and
        // `objdump -d` of the copy gives the instructions at them).
        if let Ok(prefix) = std::env::var("PTXR_KEEP_SO") {
            let _ = std::fs::copy(&so, format!("{prefix}.{}", file.rsplit('/').next().unwrap_or(file)));
        }
        let lib = unsafe { libloading::Library::new(&so) }.map_err(|e| anyhow::anyhow!("cannot load compiled kernels: {e}"))?;
        Ok(Loaded { _dir: dir, lib, kernels, file: file.to_string(), deferred: Vec::new(), vars: Vec::new() })
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Runs `kernel` over the grid. Buffers in `args` are updated in place.
    pub fn launch(&self, name: &str, cfg: &LaunchConfig, args: &mut [ArgSpec]) -> Result<(), LaunchError> {
        self.launch_bound(name, cfg, args, &mut [])
    }

    /// [`Loaded::launch`] with module-scope texture and surface references bound first:
    /// `refs` pairs a `.texref`/`.surfref` variable's name with an [`ArgSpec::Texture`]
    /// (whose data is updated in place, as surface stores change it).
    pub fn launch_bound(&self, name: &str, cfg: &LaunchConfig, args: &mut [ArgSpec], refs: &mut [(String, ArgSpec)]) -> Result<(), LaunchError> {
        let mut bound: Vec<(usize, GuardedMem)> = Vec::new();
        for (k, (rname, spec)) in refs.iter_mut().enumerate() {
            let ArgSpec::Texture { desc, data } = spec else { return Err(LaunchError(format!("`{rname}`: a texture or surface reference is bound to tex:... or surf:..."))) };
            let sym = format!("__ptxr_ref_{rname}");
            // SAFETY: the symbol is a 64-byte descriptor variable of the loaded module.
            let g: *mut u8 = unsafe { self.lib.get::<*mut u8>(sym.as_bytes()).map(|s| *s as *mut u8) }.map_err(|_| LaunchError(format!("{}: no texture or surface reference named `{rname}`", self.file)))?;
            let mut mem = GuardedMem::copy_of(data);
            let d = crate::codegen::ops_tex::with_data(desc, mem.start() as u64);
            // SAFETY: `g` points to the 64-byte descriptor; no launch of this module runs now.
            unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), g, 64) };
            bound.push((k, mem));
        }
        let r = self.launch_args(name, cfg, args);
        for (k, mut mem) in bound {
            if let (_, ArgSpec::Texture { data, .. }) = &mut refs[k] {
                let n = data.len();
                data.copy_from_slice(mem.bytes(n));
            }
        }
        r
    }

    fn launch_args(&self, name: &str, cfg: &LaunchConfig, args: &mut [ArgSpec]) -> Result<(), LaunchError> {
        let k = self.kernel(name).ok_or_else(|| {
            let names: Vec<&str> = self.kernels.iter().map(|k| k.name.as_str()).collect();
            LaunchError(format!("{}: no kernel named `{name}` (kernels: {})", self.file, if names.is_empty() { "none".to_string() } else { names.join(", ") }))
        })?;
        let shape = Shape { name, file: &self.file, static_smem: k.static_smem, reqntid: k.reqntid, maxntid: k.maxntid, frame_size: k.frame_size, uses_sync: k.uses_sync, cta_group: k.cta_group, cluster: k.cluster, cancellable: k.cancellable, deferred: &self.deferred };
        check_config(&shape, cfg)?;
        if args.len() != k.params.len() {
            return Err(LaunchError(format!("kernel `{name}` takes {} parameters, {} given", k.params.len(), args.len())));
        }
        // Parameter buffer.
        let mut pbuf = vec![0u8; k.param_size.max(8) as usize];
        let guarded = guarded_buffers();
        let mut copies: Vec<(usize, GuardedMem)> = Vec::new();
        // Texture and surface descriptors, alive for the launch.
        let mut descs: Vec<Box<[u8; 64]>> = Vec::new();
        for (idx, (a, p)) in args.iter_mut().zip(k.params.iter()).enumerate() {
            let off = p.offset as usize;
            match a {
                ArgSpec::Scalar(t, bits) => {
                    if t.size() != p.size {
                        return Err(LaunchError(format!("argument {idx} (`{}`) is .{} ({} bytes) but a .{} ({} bytes) was given", p.name, p.ty.as_str(), p.size, t.as_str(), t.size())));
                    }
                    pbuf[off..off + p.size as usize].copy_from_slice(&bits.to_le_bytes()[..p.size as usize]);
                }
                ArgSpec::Bytes(b) => {
                    if b.len() != p.size as usize {
                        return Err(LaunchError(format!("argument {idx} (`{}`) is {} bytes but {} bytes were given", p.name, p.size, b.len())));
                    }
                    pbuf[off..off + b.len()].copy_from_slice(b);
                }
                ArgSpec::Buffer(b) => {
                    if p.size != 8 {
                        return Err(LaunchError(format!("argument {idx} (`{}`) is a {}-byte .{}, not a pointer; a buffer cannot be passed", p.name, p.size, p.ty.as_str())));
                    }
                    let addr = place(b, guarded, idx, &mut copies);
                    pbuf[off..off + 8].copy_from_slice(&addr.to_le_bytes());
                }
                ArgSpec::TensorMap { map, data } => {
                    if p.size != 128 {
                        return Err(LaunchError(format!("argument {idx} (`{}`) is {} bytes, not a 128-byte tensor map (`.param .align 64 .b8 {}[128]`)", p.name, p.size, p.name)));
                    }
                    let addr = place(data, guarded, idx, &mut copies);
                    pbuf[off..off + 128].copy_from_slice(&ptxr_runtime::tensor_map::with_address(map, addr));
                }
                ArgSpec::Texture { desc, data } => {
                    if p.size != 8 {
                        return Err(LaunchError(format!("argument {idx} (`{}`) is a {}-byte .{}, not a texture or surface handle", p.name, p.size, p.ty.as_str())));
                    }
                    let addr = place(data, guarded, idx, &mut copies);
                    let d = Box::new(crate::codegen::ops_tex::with_data(desc, addr));
                    let h = d.as_ptr() as u64;
                    descs.push(d);
                    pbuf[off..off + 8].copy_from_slice(&h.to_le_bytes());
                }
            }
        }
        let sym = format!("__ptxr_cta_{name}");
        let f: CtaFn = unsafe { *self.lib.get::<CtaFn>(sym.as_bytes()).map_err(|e| LaunchError(format!("kernel symbol missing: {e}")))? };
        // The checking mode: the memory the kernel may reach (its buffers and the module's
        // variables) for `ptxr_runtime::check`.
        let checking = crate::codegen::check();
        if checking {
            let mut allocs = Vec::new();
            for (idx, (a, p)) in args.iter_mut().zip(k.params.iter()).enumerate() {
                let (what, data) = match a {
                    ArgSpec::Buffer(b) => ("buffer", b),
                    ArgSpec::Texture { data, .. } => ("the data of texture", data),
                    ArgSpec::TensorMap { data, .. } => ("the data of tensor map", data),
                    _ => continue,
                };
                let start = copies.iter_mut().find(|(i, _)| *i == idx).map_or(data.as_mut_ptr() as u64, |(_, g)| g.start() as u64);
                allocs.push(ptxr_runtime::check::Allocation { start, len: data.len() as u64, name: format!("{what} argument {idx} (`{}`)", p.name) });
            }
            for (v, len) in &self.vars {
                let sym = format!("__ptxr_var.{v}");
                // SAFETY: the variable holds the address of the module's variable `v`.
                if let Ok(s) = unsafe { self.lib.get::<*const u8>(sym.as_bytes()) } {
                    let start = unsafe { *(*s as *const *const u8) } as u64;
                    allocs.push(ptxr_runtime::check::Allocation { start, len: *len, name: format!("variable `{v}`") });
                }
            }
            ptxr_runtime::check::set_check(Some(allocs));
        }
        let r = unsafe { run_grid(f, &shape, cfg, &pbuf) };
        if checking {
            ptxr_runtime::check::set_check(None);
        }
        for (idx, mut g) in copies {
            if let ArgSpec::Buffer(b) | ArgSpec::Texture { data: b, .. } | ArgSpec::TensorMap { data: b, .. } = &mut args[idx] {
                let n = b.len();
                b.copy_from_slice(g.bytes(n));
            }
        }
        drop(descs);
        r
    }
}

/// a copy that ends at an inaccessible page, recorded in `copies` to be copied back.
fn place(data: &mut [u8], guarded: bool, idx: usize, copies: &mut Vec<(usize, GuardedMem)>) -> u64 {
    if !guarded {
        return data.as_mut_ptr() as u64;
    }
    let mut g = GuardedMem::copy_of(data);
    let a = g.start() as u64;
    copies.push((idx, g));
    a
}


/// Writes the objects `objs` (one module's partitions, `codegen::split`) into `dir`; returns
/// the files.
pub fn write_objects(objs: &[Vec<u8>], dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for (k, o) in objs.iter().enumerate() {
        let f = dir.join(format!("kernels{k}.o"));
        std::fs::write(&f, o).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", f.display()))?;
        files.push(f);
    }
    Ok(files)
}

/// Links objects into a shared library with the system C compiler.
pub fn link_shared(objs: &[std::path::PathBuf], out: &Path) -> anyhow::Result<()> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let st = std::process::Command::new(&cc).arg("-shared").arg("-o").arg(out).args(objs).arg("-lm").status().map_err(|e| anyhow::anyhow!("cannot run `{cc}` to link kernels: {e}"))?;
    if !st.success() {
        anyhow::bail!("`{cc} -shared` failed to link the compiled kernels");
    }
    Ok(())
}

