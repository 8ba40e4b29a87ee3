//! Textures and surfaces (PTX ISA 9.7.9 tex, tld4, txq, istypep; 9.7.10 suld, sust, sured,
//! suq) on ptxr's descriptors.
//!
//! A texture, surface or sampler handle is the address of a 64-byte descriptor (`docs/abi.md`,
//! `ptxr_texref` in `ptxr.h`): what a `.u64` texture object holds, what a `.texref` /
//! `.surfref` / `.samplerref` kernel parameter holds, and the address of a module-scope
//! `.global .texref` variable (PTX ISA 9.7.10.3: "operand a is a .u64 register holding the
//! address of a .surfref variable"). Lookups are ordinary loads from the descriptor and from
//! its data, so the same code serves the CPU and the NVPTX round trip.
//!
//! Sampling follows the texture-fetching rules of CUDA's programming guide: normalized
//! coordinates are scaled by the size; nearest filtering takes texel `floor(u)`; linear
//! filtering blends the texels around `u - 0.5` with weights in 9-bit fixed point (8
//! fractional bits); the address modes wrap, mirror, clamp and border (border color zero)
//! apply per dimension to each texel index, and with unnormalized coordinates wrap and mirror
//! act as clamp. Integer coordinates (`.s32`) address texels directly. A texture has one mip
//! level, so `.level` and `.grad` lookups read level 0. Missing channels read as 0, and alpha
//! as 1 (1.0 for float results).

use super::func::{FnEmitter, R};
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, FloatValue, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};

/// Size of a descriptor in bytes.
pub const DESC_SIZE: u32 = 64;

/// Descriptor fields: byte offsets (all u32 but the last three, u64).
pub mod field {
    pub const KIND: u64 = 0;
    pub const FORMAT: u64 = 4;
    pub const CHANNELS: u64 = 8;
    pub const FLAGS: u64 = 12;
    pub const ADDR: u64 = 16;
    pub const WIDTH: u64 = 28;
    pub const HEIGHT: u64 = 32;
    pub const DEPTH: u64 = 36;
    pub const PITCH: u64 = 40;
    pub const SLICE: u64 = 48;
    pub const DATA: u64 = 56;
}

pub const KIND_TEXTURE: u32 = 1;
pub const KIND_SURFACE: u32 = 2;
pub const KIND_SAMPLER: u32 = 3;

/// `FLAGS` bits.
pub const FLAG_NORMALIZED: u32 = 1;
pub const FLAG_LINEAR: u32 = 2;
pub const FLAG_READ_NORMALIZED: u32 = 4;
pub const FLAG_LAYERED: u32 = 8;

/// Channel formats (`FORMAT`).
pub const FORMATS: [&str; 8] = ["u8", "s8", "u16", "s16", "u32", "s32", "f16", "f32"];

/// Address modes (`ADDR`).
pub const ADDR_MODES: [&str; 4] = ["wrap", "mirror", "clamp", "border"];

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    match i.opcode.name {
        "tex" => tex(e, i, None).map(|_| true),
        "tld4" => {
            let comp = ["r", "g", "b", "a"].iter().position(|c| i.has_mod(c)).unwrap_or(0);
            tex(e, i, Some(comp)).map(|_| true)
        }
        "txq" | "suq" => query(e, i).map(|_| true),
        "istypep" => istypep(e, i).map(|_| true),
        "suld" | "sust" | "sured" => surface(e, i).map(|_| true),
        _ => Ok(false),
    }
}

/// The handle operand `a`: a register holding a handle, a texture/surface/sampler parameter
/// (its value), or a module-scope reference variable (its address).
fn handle<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, op: &'a Operand<'a>) -> R<PointerValue<'ctx>> {
    let i64t = e.ctx().i64_type();
    let ptr = e.ctx().ptr_type(AddressSpace::default());
    let v = match op {
        // `[a]` of txq/suq parses as an address.
        Operand::Mem(crate::syntax::ast::Address { base: Some(id), offset: 0, .. }) | Operand::Name(id, None) if e.is_ref_param(id.name) => {
            let a = e.symbol_address(id)?;
            let p = e.b.build_int_to_ptr(a, ptr, "").unwrap();
            e.b.build_load(i64t, p, "handle").unwrap().into_int_value()
        }
        Operand::Mem(crate::syntax::ast::Address { base: Some(id), offset: 0, .. }) => {
            match e.reg_read(id.name)? {
                Some((p, rty)) => {
                    let raw = e.b.build_load(crate::codegen::func::reg_t(e.ctx(), rty), p, "").unwrap().into_int_value();
                    e.resize(raw, 64, false)
                }
                None => e.symbol_address(id)?,
            }
        }
        _ => e.read_int(op, Type::U64)?,
    };
    Ok(e.b.build_int_to_ptr(v, ptr, "desc").unwrap())
}

fn load_field<'ctx>(e: &FnEmitter<'ctx, '_, '_>, desc: PointerValue<'ctx>, off: u64, bits: u32) -> IntValue<'ctx> {
    load_at(&e.b, e.ctx(), desc, off, bits)
}

fn load_at<'ctx>(b: &inkwell::builder::Builder<'ctx>, ctx: &'ctx inkwell::context::Context, desc: PointerValue<'ctx>, off: u64, bits: u32) -> IntValue<'ctx> {
    let i8t = ctx.i8_type();
    let p = unsafe { b.build_in_bounds_gep(i8t, desc, &[ctx.i64_type().const_int(off, false)], "").unwrap() };
    b.build_load(crate::codegen::func::int_t(ctx, bits), p, "").unwrap().into_int_value()
}

/// The elements of a coordinate or offset operand: a brace list or a single register.
fn elems<'a>(op: &'a Operand<'a>) -> Vec<&'a Operand<'a>> {
    match op {
        Operand::Vector(v, _) => v.iter().collect(),
        o => vec![o],
    }
}

/// Texture geometry: number of coordinate dimensions and whether the first coordinate is an
/// array layer.
fn geometry(e: &FnEmitter, i: &Instr) -> R<(usize, bool)> {
    for (g, d, layered) in [("1d", 1, false), ("2d", 2, false), ("3d", 3, false), ("a1d", 1, true), ("a2d", 2, true)] {
        if i.has_mod(g) {
            return Ok((d, layered));
        }
    }
    Err(e.err(i.opcode.span, format!("`{}` with this geometry (2dms, a2dms, or a cubemap surface) is not supported by ptxr: its textures have no samples", crate::codegen::func::instr_name(i))))
}

/// Bytes per channel of a format (`FORMATS`): u8 s8 → 1, u16 s16 f16 → 2, u32 s32 f32 → 4.
pub fn chan_bytes(format: u32) -> u32 {
    match format {
        0 | 1 => 1,
        2 | 3 | 6 => 2,
        _ => 4,
    }
}

/// [`chan_bytes`] of a format known at run time (i32).
fn chan_bytes_ir<'ctx>(b: &inkwell::builder::Builder<'ctx>, ctx: &'ctx inkwell::context::Context, fmt: IntValue<'ctx>) -> IntValue<'ctx> {
    let c = |v: u64| ctx.i32_type().const_int(v, false);
    let lt = |k: u64| b.build_int_compare(IntPredicate::ULT, fmt, c(k), "").unwrap();
    let is6 = b.build_int_compare(IntPredicate::EQ, fmt, c(6), "").unwrap();
    let two = b.build_or(b.build_and(lt(4), b.build_not(lt(2), "").unwrap(), "").unwrap(), is6, "").unwrap();
    b.build_select(lt(2), c(1), b.build_select(two, c(2), c(4), "").unwrap().into_int_value(), "").unwrap().into_int_value()
}

/// A descriptor with its data pointer set.
pub fn with_data(desc: &[u8; 64], data: u64) -> [u8; 64] {
    let mut d = *desc;
    d[field::DATA as usize..][..8].copy_from_slice(&data.to_le_bytes());
    d
}

/// The per-module function that reads texel (x, y, z) of a texture as four 32-bit values:
/// converted to f32 bits (`want_float`: float formats as they are, integer formats as
/// normalized floats when the descriptor says so, else as their value) or raw integers.
fn texel_fn<'ctx>(e: &FnEmitter<'ctx, '_, '_>) -> FunctionValue<'ctx> {
    const NAME: &str = "__ptxr_texel";
    if let Some(f) = e.m.module.get_function(NAME) {
        return f;
    }
    let ctx = e.ctx();
    let (i1, i8t, i16t, i32t, i64t, f32t) = (ctx.bool_type(), ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type(), ctx.f32_type());
    let ptr = ctx.ptr_type(AddressSpace::default());
    let v4 = i32t.vec_type(4);
    let f = e.m.module.add_function(NAME, v4.fn_type(&[ptr.into(), i32t.into(), i32t.into(), i32t.into(), i1.into()], false), Some(Linkage::Internal));
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(f, "entry"));
    let desc = f.get_nth_param(0).unwrap().into_pointer_value();
    let [x, y, z] = [1, 2, 3].map(|k| f.get_nth_param(k).unwrap().into_int_value());
    let want_float = f.get_nth_param(4).unwrap().into_int_value();
    let c32 = |v: u64| i32t.const_int(v, false);
    let c64 = |v: u64| i64t.const_int(v, false);
    let fmt = load_at(&b, ctx, desc, field::FORMAT, 32);
    let ch = load_at(&b, ctx, desc, field::CHANNELS, 32);
    let flags = load_at(&b, ctx, desc, field::FLAGS, 32);
    let w = load_at(&b, ctx, desc, field::WIDTH, 32);
    let h = load_at(&b, ctx, desc, field::HEIGHT, 32);
    let pitch = load_at(&b, ctx, desc, field::PITCH, 64);
    let slice = load_at(&b, ctx, desc, field::SLICE, 64);
    let data = b.build_int_to_ptr(load_at(&b, ctx, desc, field::DATA, 64), ptr, "data").unwrap();
    // Bytes per channel: u8 s8 → 1, u16 s16 f16 → 2, u32 s32 f32 → 4.
    let cb = b.build_int_z_extend(chan_bytes_ir(&b, ctx, fmt), i64t, "").unwrap();
    let elem = b.build_int_mul(cb, b.build_int_z_extend(ch, i64t, "").unwrap(), "").unwrap();
    let row = b.build_int_mul(elem, b.build_int_z_extend(w, i64t, "").unwrap(), "").unwrap();
    let pitch_zero = b.build_int_compare(IntPredicate::EQ, pitch, c64(0), "").unwrap();
    let pitch = b.build_select(pitch_zero, row, pitch, "").unwrap().into_int_value();
    let slice_zero = b.build_int_compare(IntPredicate::EQ, slice, c64(0), "").unwrap();
    let plane = b.build_int_mul(pitch, b.build_int_z_extend(h, i64t, "").unwrap(), "").unwrap();
    let slice = b.build_select(slice_zero, plane, slice, "").unwrap().into_int_value();
    let zx = |v: IntValue<'ctx>| b.build_int_z_extend(v, i64t, "").unwrap();
    let mut off = b.build_int_mul(zx(z), slice, "").unwrap();
    off = b.build_int_add(off, b.build_int_mul(zx(y), pitch, "").unwrap(), "").unwrap();
    off = b.build_int_add(off, b.build_int_mul(zx(x), elem, "").unwrap(), "").unwrap();
    let base = unsafe { b.build_gep(i8t, data, &[off], "texel").unwrap() };
    let norm = b.build_int_compare(IntPredicate::NE, b.build_and(flags, c32(FLAG_READ_NORMALIZED as u64), "").unwrap(), c32(0), "").unwrap();
    let mut out = v4.get_undef();
    for c in 0..4u64 {
        let missing = if c == 3 { b.build_select(want_float, c32(0x3f80_0000), c32(1), "").unwrap().into_int_value() } else { c32(0) };
        let here = b.get_insert_block().unwrap();
        let present = b.build_int_compare(IntPredicate::ULT, c32(c), ch, "").unwrap();
        let load_bb = ctx.append_basic_block(f, &format!("ch{c}"));
        let join = ctx.append_basic_block(f, &format!("ch{c}.join"));
        b.build_conditional_branch(present, load_bb, join).unwrap();
        b.position_at_end(load_bb);
        let p = unsafe { b.build_gep(i8t, base, &[b.build_int_mul(cb, c64(c), "").unwrap()], "").unwrap() };
        let mut cases = Vec::new();
        let mut incoming: Vec<(IntValue<'ctx>, FloatValue<'ctx>, inkwell::basic_block::BasicBlock<'ctx>)> = Vec::new();
        let fjoin = ctx.append_basic_block(f, &format!("ch{c}.fmt"));
        for (k, name) in FORMATS.iter().enumerate() {
            let bb = ctx.append_basic_block(f, &format!("ch{c}.{name}"));
            cases.push((c32(k as u64), bb));
            b.position_at_end(bb);
            let (iv, fv) = match *name {
                "u8" | "s8" | "u16" | "s16" => {
                    let (t, signed, scale) = match *name {
                        "u8" => (i8t, false, 255.0),
                        "s8" => (i8t, true, 127.0),
                        "u16" => (i16t, false, 65535.0),
                        _ => (i16t, true, 32767.0),
                    };
                    let l = b.build_load(t, p, "").unwrap().into_int_value();
                    let iv = if signed { b.build_int_s_extend(l, i32t, "").unwrap() } else { b.build_int_z_extend(l, i32t, "").unwrap() };
                    let fl = if signed { b.build_signed_int_to_float(iv, f32t, "").unwrap() } else { b.build_unsigned_int_to_float(iv, f32t, "").unwrap() };
                    // Normalized read: [0, 1] or [-1, 1] (the most negative value clamps to -1).
                    let mut n = b.build_float_div(fl, f32t.const_float(scale), "").unwrap();
                    if signed {
                        let below = b.build_float_compare(FloatPredicate::OLT, n, f32t.const_float(-1.0), "").unwrap();
                        n = b.build_select(below, f32t.const_float(-1.0), n, "").unwrap().into_float_value();
                    }
                    (iv, b.build_select(norm, n, fl, "").unwrap().into_float_value())
                }
                "u32" | "s32" => {
                    let iv = b.build_load(i32t, p, "").unwrap().into_int_value();
                    let fl = if *name == "s32" { b.build_signed_int_to_float(iv, f32t, "").unwrap() } else { b.build_unsigned_int_to_float(iv, f32t, "").unwrap() };
                    (iv, fl)
                }
                "f16" => {
                    let l = b.build_load(i16t, p, "").unwrap().into_int_value();
                    let hv = b.build_bit_cast(l, ctx.f16_type(), "").unwrap().into_float_value();
                    let fl = b.build_float_ext(hv, f32t, "").unwrap();
                    (b.build_bit_cast(fl, i32t, "").unwrap().into_int_value(), fl)
                }
                _ => {
                    let iv = b.build_load(i32t, p, "").unwrap().into_int_value();
                    (iv, b.build_bit_cast(iv, f32t, "").unwrap().into_float_value())
                }
            };
            incoming.push((iv, fv, b.get_insert_block().unwrap()));
            b.build_unconditional_branch(fjoin).unwrap();
        }
        // An unknown format reads as zero.
        let bad = ctx.append_basic_block(f, &format!("ch{c}.badfmt"));
        b.position_at_end(bad);
        incoming.push((c32(0), f32t.const_zero(), bad));
        b.build_unconditional_branch(fjoin).unwrap();
        b.position_at_end(load_bb);
        b.build_switch(fmt, bad, &cases).unwrap();
        b.position_at_end(fjoin);
        let ip = b.build_phi(i32t, "").unwrap();
        let fp = b.build_phi(f32t, "").unwrap();
        for (iv, fv, bb) in &incoming {
            ip.add_incoming(&[(iv, *bb)]);
            fp.add_incoming(&[(fv, *bb)]);
        }
        let fbits = b.build_bit_cast(fp.as_basic_value().into_float_value(), i32t, "").unwrap().into_int_value();
        let loaded = b.build_select(want_float, fbits, ip.as_basic_value().into_int_value(), "").unwrap().into_int_value();
        b.build_unconditional_branch(join).unwrap();
        b.position_at_end(join);
        let v = b.build_phi(i32t, "").unwrap();
        v.add_incoming(&[(&loaded, fjoin), (&missing, here)]);
        out = b.build_insert_element(out, v.as_basic_value().into_int_value(), c32(c), "").unwrap();
    }
    b.build_return(Some(&out)).unwrap();
    f
}

/// Applies address mode `mode` (runtime value) to texel index `i` of a dimension of size
/// `n`: the index to read and whether it is inside (border mode reads zero outside).
fn address<'ctx>(e: &FnEmitter<'ctx, '_, '_>, i: IntValue<'ctx>, n: IntValue<'ctx>, mode: IntValue<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let b = &e.b;
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let n = b.build_select(b.build_int_compare(IntPredicate::EQ, n, c(0), "").unwrap(), c(1), n, "").unwrap().into_int_value();
    let nm1 = b.build_int_sub(n, c(1), "").unwrap();
    // Euclidean remainder.
    let emod = |v: IntValue<'ctx>, m: IntValue<'ctx>| {
        let r = b.build_int_signed_rem(v, m, "").unwrap();
        let neg = b.build_int_compare(IntPredicate::SLT, r, c(0), "").unwrap();
        b.build_select(neg, b.build_int_add(r, m, "").unwrap(), r, "").unwrap().into_int_value()
    };
    let wrap = emod(i, n);
    let two_n = b.build_int_mul(n, c(2), "").unwrap();
    let m2 = emod(i, two_n);
    let lower = b.build_int_compare(IntPredicate::SLT, m2, n, "").unwrap();
    let mirror = b.build_select(lower, m2, b.build_int_sub(b.build_int_sub(two_n, c(1), "").unwrap(), m2, "").unwrap(), "").unwrap().into_int_value();
    let lo = b.build_select(b.build_int_compare(IntPredicate::SLT, i, c(0), "").unwrap(), c(0), i, "").unwrap().into_int_value();
    let clamp = b.build_select(b.build_int_compare(IntPredicate::SGT, lo, nm1, "").unwrap(), nm1, lo, "").unwrap().into_int_value();
    let inside = b.build_and(b.build_int_compare(IntPredicate::SGE, i, c(0), "").unwrap(), b.build_int_compare(IntPredicate::SLT, i, n, "").unwrap(), "").unwrap();
    let is = |k: u64| b.build_int_compare(IntPredicate::EQ, mode, c(k), "").unwrap();
    let idx = b.build_select(is(0), wrap, b.build_select(is(1), mirror, clamp, "").unwrap().into_int_value(), "").unwrap().into_int_value();
    let ok = b.build_or(b.build_not(is(3), "").unwrap(), inside, "").unwrap();
    (idx, ok)
}

/// PTX ISA 9.7.9.3 tex, 9.7.9.4 tld4 (`gather` = the component tld4 fetches).
fn tex<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, gather: Option<usize>) -> R<()> {
    let name = crate::codegen::func::instr_name(i);
    // Cubemaps (9.7.9.3 tex.cube, tex.acube): a direction (s, t, r) selects a face, a layer
    // of six; the face is then sampled as a 2d texture with normalized coordinates.
    let cube = i.has_mod("cube") || i.has_mod("acube");
    let (dims, layered) = if cube { (2, i.has_mod("acube")) } else { geometry(e, i)? };
    // `.dtype.ctype` are the last two modifiers.
    let dtype = i.mods.len().checked_sub(2).and_then(|k| Type::from_str(i.mods[k])).filter(|t| matches!(t, Type::U32 | Type::S32 | Type::F32));
    let Some(dtype) = dtype else { return Err(e.err(i.opcode.span, format!("`{name}`: ptxr's textures return .u32, .s32 or .f32 (not .f16 or .f16x2)"))) };
    let float_coords = gather.is_some() || i.mods.last() == Some(&"f32");
    let (dst, pred) = match &i.operands[0] {
        Operand::Pair(d, p) => (&**d, Some(&**p)),
        d => (d, None),
    };
    let Some(Operand::MemList(list, _)) = i.operands.get(1) else { return Err(e.err(i.span, format!("`{name}` needs `[texture, coordinates]`"))) };
    let (tex_op, samp_op, coord_op) = match &list[..] {
        [a, c] => (a, None, c),
        [a, s, c] => (a, Some(s), c),
        _ => return Err(e.err(i.span, format!("`{name}` needs `[texture, coordinates]` or `[texture, sampler, coordinates]`"))),
    };
    // Trailing operands: lod (.level) or dPdx, dPdy (.grad) — level 0 is the only level —
    // then the offset vector e and the depth-compare value f.
    let skip = if i.has_mod("level") { 1 } else if i.has_mod("grad") { 2 } else { 0 };
    let rest = &i.operands[(2 + skip).min(i.operands.len())..];
    let offset_op = rest.first().filter(|o| matches!(o, Operand::Vector(..)));
    if rest.len() > offset_op.map_or(0, |_| 1) {
        return Err(e.err(i.span, format!("`{name}` with a depth-compare operand is not supported by ptxr (its textures hold no depth data)")));
    }
    let ctx = e.ctx();
    let (i32t, f32t) = (ctx.i32_type(), ctx.f32_type());
    let c = |v: u64| i32t.const_int(v, false);
    let desc = handle(e, tex_op)?;
    let samp = match samp_op {
        Some(s) => handle(e, s)?,
        None => desc,
    };
    let flags = load_field(e, samp, field::FLAGS, 32);
    let normalized = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(flags, c(FLAG_NORMALIZED as u64), "").unwrap(), c(0), "").unwrap();
    let linear_flag = e.b.build_int_compare(IntPredicate::NE, e.b.build_and(flags, c(FLAG_LINEAR as u64), "").unwrap(), c(0), "").unwrap();
    let sizes = [field::WIDTH, field::HEIGHT, field::DEPTH].map(|f| load_field(e, desc, f, 32));
    // Unnormalized coordinates: wrap and mirror act as clamp.
    let modes: Vec<IntValue<'ctx>> = (0..3u64)
        .map(|k| {
            let m = load_field(e, samp, field::ADDR + 4 * k, 32);
            let wm = e.b.build_int_compare(IntPredicate::ULT, m, c(2), "").unwrap();
            let to_clamp = e.b.build_and(wm, e.b.build_not(normalized, "").unwrap(), "").unwrap();
            e.b.build_select(to_clamp, c(2), m, "").unwrap().into_int_value()
        })
        .collect();
    // Cubemap faces are clamped at their edges (no filtering across faces).
    let modes: Vec<IntValue<'ctx>> = if cube { vec![c(2); 3] } else { modes };
    let coords = elems(coord_op);
    let need = if cube { 3 + layered as usize } else { dims + layered as usize };
    if coords.len() < need {
        return Err(e.err(coord_op.span(), format!("`{name}` needs {need} coordinates here")));
    }
    if cube && !float_coords {
        return Err(e.err(i.opcode.span, format!("`{name}`: cubemap coordinates are .f32")));
    }
    let top = e.b.build_int_sub(sizes[2], c(1), "").unwrap();
    let top = e.b.build_select(e.b.build_int_compare(IntPredicate::EQ, sizes[2], c(0), "").unwrap(), c(0), top, "").unwrap().into_int_value();
    let clamp_layer = |e: &FnEmitter<'ctx, '_, '_>, l: IntValue<'ctx>| e.b.build_select(e.b.build_int_compare(IntPredicate::UGT, l, top, "").unwrap(), top, l, "").unwrap().into_int_value();
    let mut layer = if layered {
        let l = e.read_int(coords[0], Type::U32)?;
        Some(clamp_layer(e, l))
    } else {
        None
    };
    // Float coordinates of the lookup, normalized for cubemaps.
    let mut fcoords: Vec<FloatValue<'ctx>> = Vec::new();
    let mut normalized = normalized;
    if cube {
        let [s, t, r] = [0, 1, 2].map(|k| coords[layered as usize + k]);
        let (s, t, r) = (e.read(s, Type::F32)?.into_float_value(), e.read(t, Type::F32)?.into_float_value(), e.read(r, Type::F32)?.into_float_value());
        let fabs = |e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>| e.intrinsic("llvm.fabs", &[f32t.into()], &[v.into()]).into_float_value();
        let (ax, ay, az) = (fabs(e, s), fabs(e, t), fabs(e, r));
        let b = &e.b;
        let ge = |p: FloatValue<'ctx>, q: FloatValue<'ctx>| b.build_float_compare(FloatPredicate::OGE, p, q, "").unwrap();
        let neg = |v: FloatValue<'ctx>| b.build_float_neg(v, "").unwrap();
        let sel_f = |cnd: IntValue<'ctx>, p: FloatValue<'ctx>, q: FloatValue<'ctx>| b.build_select(cnd, p, q, "").unwrap().into_float_value();
        let sel_i = |cnd: IntValue<'ctx>, p: IntValue<'ctx>, q: IntValue<'ctx>| b.build_select(cnd, p, q, "").unwrap().into_int_value();
        let zero = f32t.const_zero();
        // The major axis (x, then y, then z on ties) and, per face, the (sc, tc) of the
        // cubemap face table (CUDA programming guide, cubemap textures).
        let x_major = b.build_and(ge(ax, ay), ge(ax, az), "").unwrap();
        let y_major = b.build_and(b.build_not(x_major, "").unwrap(), ge(ay, az), "").unwrap();
        let (xp, yp, zp) = (ge(s, zero), ge(t, zero), ge(r, zero));
        // x: face 0 (+x) sc = -r, tc = -t; face 1 (-x) sc = r, tc = -t.
        // y: face 2 (+y) sc = s, tc = r;   face 3 (-y) sc = s, tc = -r.
        // z: face 4 (+z) sc = s, tc = -t;  face 5 (-z) sc = -s, tc = -t.
        let (fx, scx, tcx, mx) = (sel_i(xp, c(0), c(1)), sel_f(xp, neg(r), r), neg(t), ax);
        let (fy, scy, tcy, my) = (sel_i(yp, c(2), c(3)), s, sel_f(yp, r, neg(r)), ay);
        let (fz, scz, tcz, mz) = (sel_i(zp, c(4), c(5)), sel_f(zp, s, neg(s)), neg(t), az);
        let face = sel_i(x_major, fx, sel_i(y_major, fy, fz));
        let sc = sel_f(x_major, scx, sel_f(y_major, scy, scz));
        let tc = sel_f(x_major, tcx, sel_f(y_major, tcy, tcz));
        let m = sel_f(x_major, mx, sel_f(y_major, my, mz));
        let half = f32t.const_float(0.5);
        for v in [sc, tc] {
            let q = b.build_float_div(v, m, "").unwrap();
            fcoords.push(b.build_float_mul(b.build_float_add(q, f32t.const_float(1.0), "").unwrap(), half, "").unwrap());
        }
        let base = layer.map_or(c(0), |l| e.b.build_int_mul(l, c(6), "").unwrap());
        layer = Some(clamp_layer(e, e.b.build_int_add(base, face, "").unwrap()));
        normalized = ctx.bool_type().const_int(1, false);
    } else if float_coords {
        for k in 0..dims {
            fcoords.push(e.read(coords[layered as usize + k], Type::F32)?.into_float_value());
        }
    }
    let coords = &coords[layered as usize..layered as usize + dims];
    let offsets: Vec<IntValue<'ctx>> = match offset_op {
        Some(o) => {
            let v = elems(o);
            (0..dims).map(|k| v.get(k).map_or(Ok(c(0)), |x| e.read_int(x, Type::S32))).collect::<R<_>>()?
        }
        None => vec![c(0); dims],
    };
    let floor = |e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>| e.intrinsic("llvm.floor", &[f32t.into()], &[v.into()]).into_float_value();
    let to_i = |e: &FnEmitter<'ctx, '_, '_>, v: FloatValue<'ctx>| e.intrinsic("llvm.fptosi.sat", &[i32t.into(), f32t.into()], &[v.into()]).into_int_value();
    // Per dimension: the texel index (nearest) or the two indices and the weight (linear).
    let want_float = dtype == Type::F32;
    let linear = if float_coords && want_float && gather.is_none() { Some(linear_flag) } else { None };
    let mut idx0 = Vec::new();
    let mut idx1 = Vec::new();
    let mut weight = Vec::new();
    for k in 0..dims {
        if !float_coords {
            let v = e.read_int(coords[k], Type::S32)?;
            let v = e.b.build_int_add(v, offsets[k], "").unwrap();
            idx0.push(v);
            idx1.push(v);
            weight.push(f32t.const_zero());
            continue;
        }
        let x = fcoords[k];
        let n = e.b.build_unsigned_int_to_float(sizes[k], f32t, "").unwrap();
        let scaled = e.b.build_float_mul(x, n, "").unwrap();
        let mut u = e.b.build_select(normalized, scaled, x, "").unwrap().into_float_value();
        let off = e.b.build_signed_int_to_float(offsets[k], f32t, "").unwrap();
        u = e.b.build_float_add(u, off, "").unwrap();
        // Nearest: floor(u). Linear (and tld4's footprint): u - 0.5, its floor and fraction.
        let ub = e.b.build_float_sub(u, f32t.const_float(0.5), "").unwrap();
        let fb = floor(e, ub);
        let frac = e.b.build_float_sub(ub, fb, "").unwrap();
        // 9-bit fixed point with 8 fractional bits.
        let q = floor(e, e.b.build_float_add(e.b.build_float_mul(frac, f32t.const_float(256.0), "").unwrap(), f32t.const_float(0.5), "").unwrap());
        let a = e.b.build_float_div(q, f32t.const_float(256.0), "").unwrap();
        let near = to_i(e, floor(e, u));
        let lo = to_i(e, fb);
        let use_lin = match (linear, gather) {
            (Some(l), _) => l,
            (None, Some(_)) => ctx.bool_type().const_int(1, false),
            _ => ctx.bool_type().const_zero(),
        };
        idx0.push(e.b.build_select(use_lin, lo, near, "").unwrap().into_int_value());
        idx1.push(e.b.build_select(use_lin, e.b.build_int_add(lo, c(1), "").unwrap(), near, "").unwrap().into_int_value());
        weight.push(e.b.build_select(use_lin, a, f32t.const_zero(), "").unwrap().into_float_value());
    }
    let tf = texel_fn(e);
    let wf = ctx.bool_type().const_int(want_float as u64, false);
    // A reference no texture is bound to (no data) reads zeros.
    let data = load_field(e, desc, field::DATA, 64);
    let bound = e.b.build_int_compare(IntPredicate::NE, data, ctx.i64_type().const_zero(), "bound").unwrap();
    // Fetches texel (sel_k: index 0 or 1 in dimension k) with the address modes applied.
    let fetch = |e: &mut FnEmitter<'ctx, 'a, '_>, sel: [bool; 3]| -> inkwell::values::VectorValue<'ctx> {
        let mut xyz = [c(0); 3];
        let mut ok = bound;
        for k in 0..dims {
            let i = if sel[k] { idx1[k] } else { idx0[k] };
            let (ix, inside) = address(e, i, sizes[k], modes[k]);
            xyz[k] = ix;
            ok = e.b.build_and(ok, inside, "").unwrap();
        }
        if let Some(l) = layer {
            xyz[2] = l;
        }
        let v = e.b.build_call(tf, &[desc.into(), xyz[0].into(), xyz[1].into(), xyz[2].into(), wf.into()], "").unwrap().try_as_basic_value().basic().unwrap().into_vector_value();
        // Border: texels outside read as zero (border color 0).
        let zero = i32t.vec_type(4).const_zero();
        e.b.build_select(ok, v, zero, "").unwrap().into_vector_value()
    };
    let results: Vec<IntValue<'ctx>> = if let Some(comp) = gather {
        // tld4: component `comp` of the footprint, counter-clockwise from the lower left:
        // (x0, y1), (x1, y1), (x1, y0), (x0, y0).
        [[false, true], [true, true], [true, false], [false, false]]
            .iter()
            .map(|s| {
                let v = fetch(e, [s[0], s[1], false]);
                e.b.build_extract_element(v, c(comp as u64), "").unwrap().into_int_value()
            })
            .collect()
    } else if linear.is_some() {
        // Weighted sum over the 2^dims corners, per channel, in f32.
        let mut acc = vec![f32t.const_zero(); 4];
        for corner in 0..(1usize << dims) {
            let sel = [corner & 1 != 0, corner & 2 != 0, corner & 4 != 0];
            let v = fetch(e, sel);
            let mut w = f32t.const_float(1.0);
            for k in 0..dims {
                let part = if sel[k] { weight[k] } else { e.b.build_float_sub(f32t.const_float(1.0), weight[k], "").unwrap() };
                w = e.b.build_float_mul(w, part, "").unwrap();
            }
            for (ch, a) in acc.iter_mut().enumerate() {
                let t = e.b.build_extract_element(v, c(ch as u64), "").unwrap().into_int_value();
                let t = e.b.build_bit_cast(t, f32t, "").unwrap().into_float_value();
                *a = e.b.build_float_add(*a, e.b.build_float_mul(w, t, "").unwrap(), "").unwrap();
            }
        }
        acc.iter().map(|a| e.b.build_bit_cast(*a, i32t, "").unwrap().into_int_value()).collect()
    } else {
        let v = fetch(e, [false; 3]);
        (0..4).map(|ch| e.b.build_extract_element(v, c(ch), "").unwrap().into_int_value()).collect()
    };
    let outs = elems(dst);
    for (k, d) in outs.iter().enumerate().take(4) {
        if matches!(d, Operand::Sink(_)) {
            continue;
        }
        let v = e.from_bits(results[k], dtype);
        e.write(d, dtype, v)?;
    }
    if let Some(p) = pred {
        // The texel is resident (ptxr's textures are always in memory).
        e.write(p, Type::Pred, ctx.bool_type().const_int(1, false).into())?;
    }
    Ok(())
}

/// PTX ISA 9.7.9.5 txq, 9.7.10.4 suq.
fn query<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let name = crate::codegen::func::instr_name(i);
    let (d, a) = match &i.operands[..] {
        [d, Operand::MemList(list, _), ..] if !list.is_empty() => (d, &list[0]),
        [d, m @ Operand::Mem(_), ..] => (d, m),
        _ => return Err(e.err(i.span, format!("`{name}` needs `d, [handle]`"))),
    };
    let desc = handle(e, a)?;
    let i32t = e.ctx().i32_type();
    let c = |v: u64| i32t.const_int(v, false);
    let q = i.mods.iter().copied().find(|m| *m != "level" && *m != "b32").unwrap_or("");
    let flags = load_field(e, desc, field::FLAGS, 32);
    let bit = |e: &FnEmitter<'ctx, '_, '_>, f: u32| {
        let v = e.b.build_and(flags, c(f as u64), "").unwrap();
        e.b.build_int_z_extend(e.b.build_int_compare(IntPredicate::NE, v, c(0), "").unwrap(), i32t, "").unwrap()
    };
    let layered = bit(e, FLAG_LAYERED);
    let v = match q {
        "width" => load_field(e, desc, field::WIDTH, 32),
        "height" => load_field(e, desc, field::HEIGHT, 32),
        // A layered texture's depth field counts its layers.
        "depth" => {
            let d = load_field(e, desc, field::DEPTH, 32);
            let is_l = e.b.build_int_compare(IntPredicate::NE, layered, c(0), "").unwrap();
            e.b.build_select(is_l, c(0), d, "").unwrap().into_int_value()
        }
        "array_size" => {
            let d = load_field(e, desc, field::DEPTH, 32);
            let is_l = e.b.build_int_compare(IntPredicate::NE, layered, c(0), "").unwrap();
            e.b.build_select(is_l, d, c(0), "").unwrap().into_int_value()
        }
        // ptxr's own enumerations (docs/abi.md): the format index and the channel count.
        "channel_data_type" => load_field(e, desc, field::FORMAT, 32),
        "channel_order" => load_field(e, desc, field::CHANNELS, 32),
        "normalized_coords" => bit(e, FLAG_NORMALIZED),
        "force_unnormalized_coords" => c(0),
        "filter_mode" => bit(e, FLAG_LINEAR),
        "addr_mode_0" => load_field(e, desc, field::ADDR, 32),
        "addr_mode_1" => load_field(e, desc, field::ADDR + 4, 32),
        "addr_mode_2" => load_field(e, desc, field::ADDR + 8, 32),
        "num_mipmap_levels" => c(1),
        "num_samples" => c(0),
        // Surfaces are linear memory.
        "memory_layout" => c(1),
        _ => return Err(e.err(i.opcode.span, format!("`{name}`: unknown query"))),
    };
    e.write(d, Type::B32, v.into())
}

/// PTX ISA 9.7.9.6 istypep.
fn istypep<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let [p, a] = &i.operands[..] else { return Err(e.err(i.span, "`istypep` needs `p, a`")) };
    let kind = if i.has_mod("texref") {
        KIND_TEXTURE
    } else if i.has_mod("surfref") {
        KIND_SURFACE
    } else {
        KIND_SAMPLER
    };
    let desc = handle(e, a)?;
    let k = load_field(e, desc, field::KIND, 32);
    let v = e.b.build_int_compare(IntPredicate::EQ, k, e.ctx().i32_type().const_int(kind as u64, false), "").unwrap();
    e.write(p, Type::Pred, v.into())
}

/// PTX ISA 9.7.10.1 suld.b, 9.7.10.2 sust.b, 9.7.10.3 sured.b: unformatted access to a
/// surface at a byte offset `x` in its row, row `y` and slice (or layer) `z`. Out of bounds,
/// `.trap` traps, `.clamp` uses the nearest location, `.zero` reads zero / drops the store.
fn surface<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let name = crate::codegen::func::instr_name(i);
    let op = i.opcode.name;
    if !i.has_mod("b") {
        return Err(e.err(i.opcode.span, format!("`{name}`: formatted surface access (.p) is not supported by ptxr; use the unformatted .b form")));
    }
    let (dims, layered) = geometry(e, i)?;
    let vec = if i.has_mod("v4") {
        4
    } else if i.has_mod("v2") {
        2
    } else {
        1
    };
    let ty = [Type::B8, Type::B16, Type::B32, Type::B64, Type::U32, Type::S32, Type::U64, Type::S64]
        .into_iter()
        .find(|t| i.has_mod(t.as_str()))
        .ok_or_else(|| e.err(i.opcode.span, format!("`{name}` needs a data type")))?;
    let bytes = ty.size() as u64 * vec;
    let (mem, data_op) = match op {
        "suld" => (i.operands.get(1), i.operands.first()),
        _ => (i.operands.first(), i.operands.get(1)),
    };
    let (Some(Operand::MemList(list, _)), Some(data_op)) = (mem, data_op) else { return Err(e.err(i.span, format!("`{name}` needs `[surface, coordinates]` and data"))) };
    let [a, coord_op] = &list[..] else { return Err(e.err(i.span, format!("`{name}` needs `[surface, coordinates]`"))) };
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let c = |v: u64| i32t.const_int(v, false);
    let desc = handle(e, a)?;
    let coords = elems(coord_op);
    let need = dims + layered as usize;
    if coords.len() < need {
        return Err(e.err(coord_op.span(), format!("`{name}` needs {need} coordinates here")));
    }
    let mut vals: Vec<IntValue<'ctx>> = Vec::new();
    for k in 0..need {
        vals.push(e.read_int(coords[k], Type::S32)?);
    }
    // (byte x, row y, slice z): an array's layer is its slice.
    let (x, y, z) = match (layered, dims) {
        (false, 1) => (vals[0], c(0), c(0)),
        (false, 2) => (vals[0], vals[1], c(0)),
        (false, _) => (vals[0], vals[1], vals[2]),
        (true, 1) => (vals[1], c(0), vals[0]),
        (true, _) => (vals[1], vals[2], vals[0]),
    };
    let fmt = load_field(e, desc, field::FORMAT, 32);
    let ch = load_field(e, desc, field::CHANNELS, 32);
    let cb = chan_bytes_ir(&e.b, ctx, fmt);
    let w = load_field(e, desc, field::WIDTH, 32);
    let row_bytes = e.b.build_int_mul(e.b.build_int_mul(cb, ch, "").unwrap(), w, "").unwrap();
    let h = load_field(e, desc, field::HEIGHT, 32);
    let d = load_field(e, desc, field::DEPTH, 32);
    let one_if_zero = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>| e.b.build_select(e.b.build_int_compare(IntPredicate::EQ, v, c(0), "").unwrap(), c(1), v, "").unwrap().into_int_value();
    let (h, d) = (one_if_zero(e, h), one_if_zero(e, d));
    // The last byte offset where the access fits.
    let xmax = e.b.build_int_sub(row_bytes, c(bytes), "").unwrap();
    let in_range = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, top: IntValue<'ctx>| e.b.build_and(e.b.build_int_compare(IntPredicate::SGE, v, c(0), "").unwrap(), e.b.build_int_compare(IntPredicate::SLE, v, top, "").unwrap(), "").unwrap();
    let hm1 = e.b.build_int_sub(h, c(1), "").unwrap();
    let dm1 = e.b.build_int_sub(d, c(1), "").unwrap();
    let inside = e.b.build_and(e.b.build_and(in_range(e, x, xmax), in_range(e, y, hm1), "").unwrap(), in_range(e, z, dm1), "").unwrap();
    // A reference no surface is bound to (no data) is out of range everywhere.
    let data_field = load_field(e, desc, field::DATA, 64);
    let bound = e.b.build_int_compare(IntPredicate::NE, data_field, i64t.const_zero(), "bound").unwrap();
    let inside = e.b.build_and(inside, bound, "").unwrap();
    let clamp = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, top: IntValue<'ctx>| {
        let lo = e.b.build_select(e.b.build_int_compare(IntPredicate::SLT, v, c(0), "").unwrap(), c(0), v, "").unwrap().into_int_value();
        e.b.build_select(e.b.build_int_compare(IntPredicate::SGT, lo, top, "").unwrap(), top, lo, "").unwrap().into_int_value()
    };
    let (x, y, z) = if i.has_mod("clamp") {
        // The nearest location, aligned to the access size.
        let xc = clamp(e, x, xmax);
        let xc = e.b.build_and(xc, c(!(bytes - 1) & 0xffff_ffff), "").unwrap();
        (xc, clamp(e, y, hm1), clamp(e, z, dm1))
    } else {
        (x, y, z)
    };
    let f = e.f;
    let ok_bb = ctx.append_basic_block(f, "surf.in");
    let out_bb = ctx.append_basic_block(f, "surf.out");
    let join = ctx.append_basic_block(f, "surf.join");
    let cond = if i.has_mod("clamp") { bound } else { inside };
    e.b.build_conditional_branch(cond, ok_bb, out_bb).unwrap();
    e.b.position_at_end(ok_bb);
    let pitch = load_field(e, desc, field::PITCH, 64);
    let slice = load_field(e, desc, field::SLICE, 64);
    let zx = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>| e.b.build_int_z_extend(v, i64t, "").unwrap();
    let row64 = zx(e, row_bytes);
    let pz = e.b.build_int_compare(IntPredicate::EQ, pitch, i64t.const_zero(), "").unwrap();
    let pitch = e.b.build_select(pz, row64, pitch, "").unwrap().into_int_value();
    let sz = e.b.build_int_compare(IntPredicate::EQ, slice, i64t.const_zero(), "").unwrap();
    let plane = e.b.build_int_mul(pitch, zx(e, h), "").unwrap();
    let slice = e.b.build_select(sz, plane, slice, "").unwrap().into_int_value();
    let mut off = e.b.build_int_mul(zx(e, z), slice, "").unwrap();
    off = e.b.build_int_add(off, e.b.build_int_mul(zx(e, y), pitch, "").unwrap(), "").unwrap();
    off = e.b.build_int_add(off, zx(e, x), "").unwrap();
    let ptr = ctx.ptr_type(AddressSpace::default());
    let data = e.b.build_int_to_ptr(load_field(e, desc, field::DATA, 64), ptr, "").unwrap();
    let at = unsafe { e.b.build_gep(ctx.i8_type(), data, &[off], "surf").unwrap() };
    let et = crate::codegen::func::int_t(ctx, ty.bits());
    let elems_d = elems(data_op);
    let mut loaded = Vec::new();
    match op {
        "suld" => {
            for k in 0..vec as usize {
                let p = unsafe { e.b.build_gep(et, at, &[i64t.const_int(k as u64, false)], "").unwrap() };
                loaded.push(e.b.build_load(et, p, "").unwrap().into_int_value());
            }
        }
        "sust" => {
            for k in 0..vec as usize {
                let v = e.read_int(elems_d.get(k).copied().ok_or_else(|| e.err(data_op.span(), format!("`{name}` stores {vec} elements")))?, ty)?;
                let p = unsafe { e.b.build_gep(et, at, &[i64t.const_int(k as u64, false)], "").unwrap() };
                e.b.build_store(p, v).unwrap();
            }
        }
        _ => {
            let v = e.read_int(data_op, ty)?;
            let rmw = match () {
                _ if i.has_mod("add") => inkwell::AtomicRMWBinOp::Add,
                _ if i.has_mod("and") => inkwell::AtomicRMWBinOp::And,
                _ if i.has_mod("or") => inkwell::AtomicRMWBinOp::Or,
                _ if i.has_mod("min") && ty.is_signed() => inkwell::AtomicRMWBinOp::Min,
                _ if i.has_mod("min") => inkwell::AtomicRMWBinOp::UMin,
                _ if i.has_mod("max") && ty.is_signed() => inkwell::AtomicRMWBinOp::Max,
                _ if i.has_mod("max") => inkwell::AtomicRMWBinOp::UMax,
                _ => return Err(e.err(i.opcode.span, format!("`{name}`: unknown reduction"))),
            };
            e.b.build_atomicrmw(rmw, at, v, inkwell::AtomicOrdering::Monotonic).unwrap();
        }
    }
    let ok_end = e.b.get_insert_block().unwrap();
    e.b.build_unconditional_branch(join).unwrap();
    e.b.position_at_end(out_bb);
    if i.has_mod("trap") {
        e.abort_with(super::abi::STATUS_TRAP);
        e.b.build_unreachable().unwrap();
    } else {
        e.b.build_unconditional_branch(join).unwrap();
    }
    let out_end = out_bb;
    e.b.position_at_end(join);
    if op == "suld" {
        // Every phi first, then the writes.
        let mut vals: Vec<BasicValueEnum<'ctx>> = Vec::new();
        for k in 0..vec as usize {
            let phi = e.b.build_phi(et, "").unwrap();
            phi.add_incoming(&[(&loaded[k], ok_end)]);
            if !i.has_mod("trap") {
                phi.add_incoming(&[(&et.const_zero(), out_end)]);
            }
            vals.push(phi.as_basic_value());
        }
        for (k, v) in vals.into_iter().enumerate() {
            if let Some(d) = elems_d.get(k) {
                let v = e.from_bits(v.into_int_value(), ty);
                e.write(d, ty, v)?;
            }
        }
    }
    Ok(())
}
