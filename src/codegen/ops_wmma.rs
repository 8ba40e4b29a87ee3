//! Warp-level matrix multiply-accumulate (PTX ISA 9.7.13): `wmma.load`, `wmma.store` and
//! `wmma.mma` for the shapes .m16n16k16, .m8n32k16 and .m32n8k16 with .f16 multiplicands
//! (.f16/.f32 accumulators) and .s8/.u8 multiplicands (.s32 accumulators), the sub-byte and
//! single-bit shapes .m8n8k32 (.s4/.u4) and .m8n8k128 (.b1, xor.popc); and `mma.m8n8k4`
//! (9.7.13.9), whose fragments the spec defines (9.7.13.5, `m8n8k4_table`); beyond 6.4, the
//! `mma.sync` shapes of PTX 7.0, sparse `mma.sp` (9.7.14.6, [`mma_sp`]) and `ldmatrix` (PTX 6.5).
//!
//! Fragments are distributed over the lanes as on an NVIDIA H100 (`wmma_layout`, measured; the
//! spec leaves the distribution to the architecture). `wmma.load`/`wmma.store` are per-lane
//! memory accesses through those tables. `wmma.mma` is a warp collective built from the
//! scheduler's warp barrier: each lane copies its A, B and C fragments into an area of its
//! thread frame, the warp meets, each lane computes its own D elements reading A, B and C from
//! the frames of the lanes that hold them, and the warp meets again before anyone can overwrite
//! its area. On the warp path (`warp_collective::matrix`) the same lowering runs in two lane
//! loops instead of around two warp barriers: one hands each lane's words to an exchange array
//! ([`WarpExchange`]), the next computes each lane's results from it.

use super::abi::{self, slot};
use super::func::{FnEmitter, R};
use super::warp::LANES;
use crate::lanes::sync_point;
use crate::syntax::ast::{Instr, Operand, StateSpace, Type};
use inkwell::values::{BasicValueEnum, FloatValue, IntValue, PointerValue};
use inkwell::IntPredicate;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Elem {
    F16,
    F32,
    S32,
    S8,
    U8,
    S4,
    U4,
    B1,
    BF16,
    /// TensorFloat-32: an f32 bit pattern of which the multiply reads the sign, the exponent
    /// and the upper 10 mantissa bits (PTX ISA 7.0, 9.7.13.2 "Alternate floating point data
    /// formats").
    TF32,
    /// 8-bit floats (PTX 8.4 mma.sync.m16n8k32 on sm_89): 4 exponent bits and 3 mantissa bits
    /// (no infinities, S.1111.111 is NaN), 5 and 2 (IEEE-like).
    E4M3,
    E5M2,
}

impl Elem {
    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "f16" => Elem::F16,
            "f32" => Elem::F32,
            "s32" => Elem::S32,
            "s8" => Elem::S8,
            "u8" => Elem::U8,
            "s4" => Elem::S4,
            "u4" => Elem::U4,
            "b1" => Elem::B1,
            "bf16" => Elem::BF16,
            "tf32" => Elem::TF32,
            "e4m3" => Elem::E4M3,
            "e5m2" => Elem::E5M2,
            _ => return None,
        })
    }
    fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::BF16 => 16,
            Elem::F32 | Elem::S32 | Elem::TF32 => 32,
            Elem::S8 | Elem::U8 | Elem::E4M3 | Elem::E5M2 => 8,
            Elem::S4 | Elem::U4 => 4,
            Elem::B1 => 1,
        }
    }
    fn per_reg(self) -> u32 {
        32 / self.bits()
    }
    fn name(self) -> &'static str {
        match self {
            Elem::F16 => "f16",
            Elem::F32 => "f32",
            Elem::S32 => "s32",
            Elem::S8 => "s8",
            Elem::U8 => "u8",
            Elem::S4 => "s4",
            Elem::U4 => "u4",
            Elem::B1 => "b1",
            Elem::BF16 => "bf16",
            Elem::TF32 => "tf32",
            Elem::E4M3 => "e4m3",
            Elem::E5M2 => "e5m2",
        }
    }
}

/// A fragment: which matrix ('a', 'b' or 'c' for C and D), its shape (M, N, K) and element type.
#[derive(Clone, Copy)]
struct Frag {
    mat: char,
    shape: (u32, u32, u32),
    shape_name: &'static str,
    elem: Elem,
    /// mma.m8n8k4 only: the fragment of A or B depends on its layout (true: row-major).
    row: bool,
}

impl Frag {
    /// Rows and columns of the matrix.
    fn dims(&self) -> (u32, u32) {
        let (m, n, k) = self.shape;
        match self.mat {
            'a' => (m, k),
            'b' => (k, n),
            _ => (m, n),
        }
    }
    /// Elements per lane.
    fn elems(&self) -> u32 {
        self.table().len() as u32 / 32
    }
    fn regs(&self) -> u32 {
        self.elems() / self.elem.per_reg()
    }
    fn key(&self) -> String {
        if self.shape_name == "m8n8k4" && self.mat != 'c' {
            return format!("{}.m8n8k4.{}.{}", self.mat, if self.row { "row" } else { "col" }, self.elem.name());
        }
        format!("{}.{}.{}", self.mat, self.shape_name, self.elem.name())
    }
    /// (row, col) of every lane's elements, lane-major.
    fn table(&self) -> Vec<(u8, u8)> {
        if self.shape_name == "m8n8k4" {
            return m8n8k4_table(self);
        }
        if matches!(self.shape_name, "m16n8k4" | "m16n8k8" | "m16n8k16" | "m16n8k32" | "m16n8k64" | "m16n8k128" | "m8n8k16") {
            return mma_sync_table(self);
        }
        let key = self.key();
        let hex = super::wmma_layout::TABLES.iter().find(|(k, _)| *k == key).map(|(_, h)| *h).unwrap_or("");
        let bytes: Vec<u8> = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        bytes.chunks(2).map(|p| (p[0], p[1])).collect()
    }
}

/// PTX ISA 9.7.13.5: the fragments of mma.m8n8k4. The warp computes four independent 8x8x4
/// products, one per quad pair q (lanes 4q..4q+3, the low group, and 16+4q..16+4q+3, the high
/// group). ptxr places quad pair q's matrices on the diagonal of one 32x32x4 product (A rows,
/// B and C/D columns offset by 8q), so the generic exchange in `mma` computes all four.
fn m8n8k4_table(f: &Frag) -> Vec<(u8, u8)> {
    let mut t = Vec::new();
    for lane in 0..32u32 {
        let (q, hi, i) = ((lane >> 2) & 3, lane >> 4, lane & 3);
        let n = match (f.mat, f.elem) {
            ('c', Elem::F32) | ('c', Elem::F16) => 8,
            _ => 4,
        };
        for e in 0..n {
            let (r, c) = match (f.mat, f.row, f.elem) {
                // A (8x4): row-major, lane i of a group holds row 4*hi + i; column-major, column i
                // of rows 4*hi..4*hi+3.
                ('a', true, _) => (4 * hi + i, e),
                ('a', false, _) => (4 * hi + e, i),
                // B (4x8): row-major, row i of columns 4*hi..; column-major, column 4*hi + i.
                ('b', true, _) => (i, 4 * hi + e),
                ('b', false, _) => (e, 4 * hi + i),
                // C/D f16: row 4*hi + i, all 8 columns.
                (_, _, Elem::F16) => (4 * hi + i, e),
                // C/D f32: e.g. lane 0 holds c[0][0], c[0][1], c[2][0], c[2][1], c[0][4], c[0][5],
                // c[2][4], c[2][5]; lane 2 the same two columns further right.
                _ => (4 * hi + (i & 1) + 2 * ((e >> 1) & 1), 2 * (i >> 1) + (e & 1) + 4 * (e >> 2)),
            };
            let (r, c) = match f.mat {
                'a' => (8 * q + r, c),
                'b' => (r, 8 * q + c),
                _ => (8 * q + r, 8 * q + c),
            };
            t.push((r as u8, c as u8));
        }
    }
    t
}

/// The fragments of the `mma.sync` shapes of PTX ISA 7.0 (sm_80) that ptxr runs: m16n8k8 and
/// m16n8k16 with .f16/.bf16 multiplicands, m16n8k4 and m16n8k8 with .tf32, m16n8k16, m16n8k32
/// and m8n8k16 with .s8/.u8.
/// With g = lane / 4 (the group) and t = lane % 4: A registers alternate rows g and g + 8 and
/// then columns +8 (+16 for bytes); each register packs consecutive k; B holds column g at
/// k = the lane's slice; C/D elements (g or g + 8, 2t + {0, 1}).
fn mma_sync_table(f: &Frag) -> Vec<(u8, u8)> {
    let (m, _, k) = f.shape;
    let mut t = Vec::new();
    for lane in 0..32u32 {
        let (g, q) = (lane >> 2, lane & 3);
        let per = f.elem.per_reg();
        if f.mat == 'c' {
            // accumulators: (g + 8 * (e / 2), 2q + e % 2) for e < 4 (2 for m8n8k16)
            for e in 0..(m * 8 / 32) {
                t.push(((g + 8 * (e / 2)) as u8, (2 * q + e % 2) as u8));
            }
            continue;
        }
        // multiplicands: per register, `per` consecutive k from q * per
        let regs = if f.mat == 'a' { m * k / 32 / per } else { k * 8 / 32 / per };
        for r in 0..regs {
            for e in 0..per {
                let kk = q * per + e;
                if f.mat == 'a' {
                    // rows alternate g, g + 8 (m16 only), then the next k half
                    let (row_hi, k_hi) = if m == 16 { (r % 2, r / 2) } else { (0, r) };
                    t.push(((g + 8 * row_hi) as u8, (kk + 4 * per * k_hi) as u8));
                } else {
                    t.push(((kk + 4 * per * r) as u8, g as u8));
                }
            }
        }
    }
    t
}

fn shape_of(e: &FnEmitter, i: &Instr) -> R<((u32, u32, u32), &'static str)> {
    for m in &i.mods {
        match *m {
            "m16n16k16" => return Ok(((16, 16, 16), "m16n16k16")),
            "m8n32k16" => return Ok(((8, 32, 16), "m8n32k16")),
            "m32n8k16" => return Ok(((32, 8, 16), "m32n8k16")),
            // four 8x8x4 products on the diagonal of a 32x32x4 one (m8n8k4_table)
            "m8n8k4" if i.opcode.name == "mma" => return Ok(((32, 32, 4), "m8n8k4")),
            // PTX ISA 7.0 mma.sync shapes (mma_sync_table)
            "m16n8k4" if i.opcode.name == "mma" => return Ok(((16, 8, 4), "m16n8k4")),
            "m16n8k8" if i.opcode.name == "mma" => return Ok(((16, 8, 8), "m16n8k8")),
            "m16n8k16" if i.opcode.name == "mma" => return Ok(((16, 8, 16), "m16n8k16")),
            "m16n8k32" if i.opcode.name == "mma" => return Ok(((16, 8, 32), "m16n8k32")),
            "m16n8k64" if i.opcode.name == "mma" => return Ok(((16, 8, 64), "m16n8k64")),
            "m16n8k128" if i.opcode.name == "mma" => return Ok(((16, 8, 128), "m16n8k128")),
            "m8n8k16" if i.opcode.name == "mma" => return Ok(((8, 8, 16), "m8n8k16")),
            // sub-byte (.s4/.u4) and single-bit (.b1) shapes, PTX ISA 6.3 preview features
            "m8n8k32" if i.opcode.name == "wmma" => return Ok(((8, 8, 32), "m8n8k32")),
            "m8n8k128" if i.opcode.name == "wmma" => return Ok(((8, 8, 128), "m8n8k128")),
            _ => {}
        }
    }
    Err(e.err(i.opcode.span, "`wmma` needs a shape (.m16n16k16, .m8n32k16 or .m32n8k16)"))
}

fn types(i: &Instr) -> Vec<Elem> {
    i.mods.iter().filter_map(|m| Elem::parse(m)).collect()
}

fn layouts<'a>(i: &Instr<'a>) -> Vec<&'a str> {
    i.mods.iter().copied().filter(|m| *m == "row" || *m == "col").collect()
}

pub(super) fn regs_of<'a, 'o>(e: &FnEmitter, op: &'o Operand<'a>, n: u32, what: &str) -> R<&'o [Operand<'a>]> {
    match op {
        Operand::Vector(rs, _) if rs.len() as u32 == n => Ok(rs),
        _ => Err(e.err(op.span(), format!("the {what} fragment is a vector of {n} registers here"))),
    }
}

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if i.opcode.name == "ldmatrix" {
        return ldmatrix(e, i).map(|_| true);
    }
    if i.opcode.name == "stmatrix" {
        return stmatrix(e, i).map(|_| true);
    }
    if i.opcode.name == "mma" {
        return mma(e, i).map(|_| true);
    }
    if i.opcode.name != "wmma" {
        return Ok(false);
    }
    match i.mods.first().copied() {
        Some("load") | Some("store") => load_store(e, i).map(|_| true),
        Some("mma") => mma(e, i).map(|_| true),
        _ => Err(e.err(i.opcode.span, "`wmma` must be wmma.load, wmma.store or wmma.mma")),
    }
}

/// A constant global table of i16 entries.
fn table_global<'ctx>(e: &FnEmitter<'ctx, '_, '_>, name: &str, vals: &[u16]) -> PointerValue<'ctx> {
    if let Some(g) = e.m.module.get_global(name) {
        return g.as_pointer_value();
    }
    let i16t = e.ctx().i16_type();
    let arr = i16t.const_array(&vals.iter().map(|v| i16t.const_int(*v as u64, false)).collect::<Vec<_>>());
    let g = e.m.module.add_global(arr.get_type(), None, name);
    g.set_initializer(&arr);
    g.set_constant(true);
    g.set_linkage(inkwell::module::Linkage::Internal);
    g.as_pointer_value()
}

/// The (row, col) table of a fragment as a constant global of `row << 8 | col` entries.
fn pos_table<'ctx>(e: &FnEmitter<'ctx, '_, '_>, f: &Frag) -> PointerValue<'ctx> {
    let enc: Vec<u16> = f.table().iter().map(|&(r, c)| (r as u16) << 8 | c as u16).collect();
    table_global(e, &format!("__ptxr_wmma_{}", f.key()), &enc)
}

/// Row and column of element `j` of the lane whose first table entry is `lane_n`.
fn elem_pos<'ctx>(e: &FnEmitter<'ctx, '_, '_>, table: PointerValue<'ctx>, lane_n: IntValue<'ctx>, j: u32) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let i32t = e.ctx().i32_type();
    let idx = e.b.build_int_add(lane_n, i32t.const_int(j as u64, false), "").unwrap();
    let rc = lookup(e, table, idx);
    let row = e.b.build_right_shift(rc, i32t.const_int(8, false), false, "").unwrap();
    (row, e.b.build_and(rc, i32t.const_int(0xff, false), "").unwrap())
}

fn lookup<'ctx>(e: &FnEmitter<'ctx, '_, '_>, table: PointerValue<'ctx>, idx: IntValue<'ctx>) -> IntValue<'ctx> {
    let i16t = e.ctx().i16_type();
    let idx = e.resize(idx, 64, false);
    let p = unsafe { e.b.build_in_bounds_gep(i16t, table, &[idx], "").unwrap() };
    let v = e.b.build_load(i16t, p, "").unwrap().into_int_value();
    e.resize(v, 32, false)
}

/// PTX ISA 9.7.13.6 wmma.load, 9.7.13.7 wmma.store: lane l moves its fragment elements, at
/// (row, col) of the layout table, from or to p + (row-major ? row*stride + col : col*stride
/// + row) elements; the default stride is the leading dimension (9.7.13.4).
fn load_store<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let is_load = i.mods[0] == "load";
    let mat = if is_load {
        match i.mods.get(1).copied() {
            Some("a") => 'a',
            Some("b") => 'b',
            Some("c") => 'c',
            _ => return Err(e.err(i.opcode.span, "`wmma.load` needs .a, .b or .c")),
        }
    } else {
        'c'
    };
    let (shape, shape_name) = shape_of(e, i)?;
    let ty = types(i);
    let [elem] = ty[..] else { return Err(e.err(i.opcode.span, "`wmma.load`/`wmma.store` take one element type")) };
    if shape_name == "m8n8k4" {
        return Err(e.err(i.opcode.span, "`.m8n8k4` is a shape of `mma`, not of `wmma`"));
    }
    let frag = Frag { mat, shape, shape_name, elem, row: true };
    let table = frag.table();
    if table.is_empty() {
        return Err(e.err(i.opcode.span, format!("`.{}` is not an element type of wmma matrix {}", elem.name(), mat.to_ascii_uppercase())));
    }
    let row_major = match layouts(i)[..] {
        ["row"] => true,
        ["col"] => false,
        _ => return Err(e.err(i.opcode.span, "`wmma.load`/`wmma.store` need one layout, .row or .col")),
    };
    let space = super::ops_mem::space_of(i);
    let (regs_op, addr_op, stride_op) = if is_load {
        (&i.operands[0], &i.operands[1], i.operands.get(2))
    } else {
        (&i.operands[1], &i.operands[0], i.operands.get(2))
    };
    let regs = regs_of(e, regs_op, frag.regs(), if is_load { &["A", "B", "C"][(mat as u8 - b'a') as usize] } else { "D" })?;
    let base = e.address(addr_op, space)?;
    let (rows, cols) = frag.dims();
    let i32t = e.ctx().i32_type();
    let stride = match stride_op {
        Some(s) => e.read_int(s, Type::U32)?,
        None => i32t.const_int(if row_major { cols } else { rows } as u64, false),
    };
    if e.m.nvptx {
        return nvptx_load_store(e, is_load, &frag, row_major, regs, base, stride, i.opcode.span);
    }
    let n = frag.elems();
    let tg = pos_table(e, &frag);
    let lane = e.lane_id();
    let lane_n = e.b.build_int_mul(lane, i32t.const_int(n as u64, false), "").unwrap();
    let et = super::func::int_t(e.ctx(), elem.bits());
    let i8t = e.ctx().i8_type();
    let per = elem.per_reg();
    let mut words: Vec<IntValue<'ctx>> = Vec::new();
    if !is_load {
        for r in regs {
            words.push(e.read_int(r, Type::B32)?);
        }
    }
    let mut out: Vec<IntValue<'ctx>> = vec![i32t.const_zero(); regs.len()];
    for j in 0..n {
        let (row, col) = elem_pos(e, tg, lane_n, j);
        let (major, minor) = if row_major { (row, col) } else { (col, row) };
        let off = e.b.build_int_add(e.b.build_int_mul(major, stride, "").unwrap(), minor, "").unwrap();
        let off = e.resize(off, 64, false);
        let i64t = e.ctx().i64_type();
        // Byte offset, and for sub-byte elements the bit offset inside that byte (elements
        // packed from the least significant bit).
        let bit_off = e.b.build_int_mul(off, i64t.const_int(elem.bits() as u64, false), "").unwrap();
        let off = e.b.build_right_shift(bit_off, i64t.const_int(3, false), false, "").unwrap();
        let p = unsafe { e.b.build_gep(i8t, base, &[off], "").unwrap() };
        // The checking mode: this lane's element (its byte, for sub-byte elements).
        e.check_access(p, (elem.bits() / 8).max(1), !is_load, space, false, false);
        let (w, sh) = ((j / per) as usize, (j % per) * elem.bits());
        if is_load {
            let v = if elem.bits() < 8 {
                let byte = e.b.build_load(i8t, p, "").unwrap().into_int_value();
                let byte = e.resize(byte, 32, false);
                let in_byte = e.resize(e.b.build_and(bit_off, i64t.const_int(7, false), "").unwrap(), 32, false);
                let v = e.b.build_right_shift(byte, in_byte, false, "").unwrap();
                e.b.build_and(v, i32t.const_int((1u64 << elem.bits()) - 1, false), "").unwrap()
            } else {
                e.b.build_load(et, p, "").unwrap().into_int_value()
            };
            let v = e.resize(v, 32, false);
            let v = e.b.build_left_shift(v, i32t.const_int(sh as u64, false), "").unwrap();
            out[w] = e.b.build_or(out[w], v, "").unwrap();
        } else {
            let v = e.b.build_right_shift(words[w], i32t.const_int(sh as u64, false), false, "").unwrap();
            let v = e.resize(v, elem.bits(), false);
            e.b.build_store(p, v).unwrap();
        }
    }
    if is_load {
        for (r, v) in regs.iter().zip(out) {
            e.write(r, Type::B32, v.into())?;
        }
    }
    Ok(())
}

/// Indices of A(row, k) (row-major, K columns) and B(k, col) (row-major, N columns).
fn ab_index<'ctx>(e: &FnEmitter<'ctx, '_, '_>, row_k: IntValue<'ctx>, col: IntValue<'ctx>, k: IntValue<'ctx>, n: u32) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let a = e.b.build_int_add(row_k, k, "").unwrap();
    let kn = e.b.build_int_mul(k, e.ctx().i32_type().const_int(n as u64, false), "").unwrap();
    (a, e.b.build_int_add(col, kn, "").unwrap())
}

/// `acc = step(k, acc)` for k in 0..count, as a loop; returns the final acc.
pub(super) fn k_loop<'ctx, 'a, 'm>(
    e: &mut FnEmitter<'ctx, 'a, 'm>,
    count: u32,
    acc0: BasicValueEnum<'ctx>,
    step: impl Fn(&FnEmitter<'ctx, 'a, 'm>, IntValue<'ctx>, BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>,
) -> BasicValueEnum<'ctx> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let pre = e.b.get_insert_block().unwrap();
    let body = ctx.append_basic_block(e.f, "mma.k");
    let done = ctx.append_basic_block(e.f, "mma.k.done");
    e.b.build_unconditional_branch(body).unwrap();
    e.b.position_at_end(body);
    let k = e.b.build_phi(i32t, "k").unwrap();
    let acc = e.b.build_phi(acc0.get_type(), "acc").unwrap();
    let kv = k.as_basic_value().into_int_value();
    let next = step(e, kv, acc.as_basic_value());
    let k1 = e.b.build_int_add(kv, i32t.const_int(1, false), "").unwrap();
    let more = e.b.build_int_compare(IntPredicate::ULT, k1, i32t.const_int(count as u64, false), "").unwrap();
    let end = e.b.get_insert_block().unwrap();
    e.b.build_conditional_branch(more, body, done).unwrap();
    k.add_incoming(&[(&i32t.const_zero(), pre), (&k1, end)]);
    acc.add_incoming(&[(&acc0, pre), (&next, end)]);
    e.b.position_at_end(done);
    next
}

/// PTX ISA 9.7.13.8 wmma.mma: D = A * B + C. Products of .f16 elements are exact in f32 and
/// are accumulated in f32 in k order (the spec leaves order and rounding unspecified; "at
/// least single precision" for .f32, at least half for .f16); D is rounded to .f16 (rn) when
/// .dtype is .f16. Integer forms accumulate exactly and wrap to 32 bits, or clamp with
/// .satfinite. The deprecated float .satfinite maps ±inf to ±max finite and NaN to +0.
fn mma<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    if e.sync.is_none() && !e.m.nvptx && e.warp_exchange.is_none() {
        return Err(e.err(i.opcode.span, "internal error: `wmma.mma` outside a kernel's scheduler"));
    }
    let (shape, shape_name) = shape_of(e, i)?;
    let ty = types(i);
    let is_mma = i.opcode.name == "mma";
    // PTX ISA 9.7.14.6 mma.sp{::ordered_metadata}: A is structured-sparse, its fragment the
    // dense one of half the K (the stored non-zeros), placed by metadata e (sparse_meta)
    let sparse = is_mma && i.mods.iter().any(|m| *m == "sp" || *m == "sp::ordered_metadata");
    if sparse {
        return mma_sp(e, i, shape, shape_name, &ty);
    }
    let (dt, at, bt, ct) = match ty[..] {
        [d, c] if d != Elem::S32 => (d, Elem::F16, Elem::F16, c),
        // PTX ISA 9.7.13.9 mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype (and the
        // PTX 7.0 shapes: .f16 or .bf16 multiplicands, .bf16 with .f32 accumulators only)
        [d, Elem::F16, Elem::F16, c] if is_mma && d != Elem::S32 && c != Elem::S32 => (d, Elem::F16, Elem::F16, c),
        [Elem::F32, Elem::BF16, Elem::BF16, Elem::F32] if is_mma && shape_name != "m8n8k4" => (Elem::F32, Elem::BF16, Elem::BF16, Elem::F32),
        // PTX 7.0 mma.sync.aligned.{m16n8k4,m16n8k8}.row.col.f32.tf32.tf32.f32
        [Elem::F32, Elem::TF32, Elem::TF32, Elem::F32] if is_mma && matches!(shape_name, "m16n8k4" | "m16n8k8") => (Elem::F32, Elem::TF32, Elem::TF32, Elem::F32),
        // PTX 8.4 mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (sm_89)
        [Elem::F32, a, b, Elem::F32] if is_mma && shape_name == "m16n8k32" && matches!(a, Elem::E4M3 | Elem::E5M2) && matches!(b, Elem::E4M3 | Elem::E5M2) => (Elem::F32, a, b, Elem::F32),
        // mma.sync integer shapes: .s8/.u8 in any combination
        [Elem::S32, a, b, Elem::S32] if is_mma && matches!(a, Elem::S8 | Elem::U8) && matches!(b, Elem::S8 | Elem::U8) => (Elem::S32, a, b, Elem::S32),
        [Elem::S32, a, b, Elem::S32] if a == b && matches!(a, Elem::S8 | Elem::U8 | Elem::S4 | Elem::U4 | Elem::B1) => (Elem::S32, a, b, Elem::S32),
        _ => return Err(e.err(i.opcode.span, format!("`{}` types: .dtype.ctype (.f16/.f32) or .s32.atype.btype.s32", super::func::instr_name(i)))),
    };
    let ab = at;
    if ab == Elem::B1 && !(i.has_mod("xor") && i.has_mod("popc")) {
        return Err(e.err(i.opcode.span, "single-bit `wmma.mma` is `wmma.mma.xor.popc`"));
    }
    if matches!(shape_name, "m8n8k32" | "m8n8k128") != matches!(ab, Elem::S4 | Elem::U4 | Elem::B1)
        || (shape_name == "m8n8k128") != (ab == Elem::B1)
    {
        return Err(e.err(i.opcode.span, format!("`.{}` multiplicands do not go with the shape .{shape_name}", ab.name())));
    }
    if shape_name == "m8n8k4" && dt == Elem::F16 && ct == Elem::F32 {
        return Err(e.err(i.opcode.span, "`mma.m8n8k4`: .dtype must be .f32 when .ctype is .f32"));
    }
    let [al, bl] = layouts(i)[..] else { return Err(e.err(i.opcode.span, "`wmma.mma` needs .alayout and .blayout")) };
    // (wmma fragments do not depend on the memory layouts (wmma_layout); mma.m8n8k4's do.)
    let sat = i.has_mod("satfinite");
    let fa = Frag { mat: 'a', shape, shape_name, elem: ab, row: al == "row" };
    let fb = Frag { mat: 'b', shape, shape_name, elem: bt, row: bl == "row" };
    let fc = Frag { mat: 'c', shape, shape_name, elem: ct, row: true };
    let fd = Frag { mat: 'c', shape, shape_name, elem: dt, row: true };
    if i.operands.len() != 4 {
        return Err(e.err(i.span, "`wmma.mma` takes four fragments: d, a, b, c"));
    }
    let d_regs = regs_of(e, &i.operands[0], fd.regs(), "D")?;
    let a_regs = regs_of(e, &i.operands[1], fa.regs(), "A")?;
    let b_regs = regs_of(e, &i.operands[2], fb.regs(), "B")?;
    let c_regs = regs_of(e, &i.operands[3], fc.regs(), "C")?;
    if e.m.nvptx {
        // llvm.nvvm.wmma.<shape>.mma.<al>.<bl>.<dtype>.<ctype> (or .<s8|u8>)[.satfinite]
        let sig = if ab == Elem::F16 { format!("{}.{}", dt.name(), ct.name()) } else { ab.name().to_string() };
        let name = if shape_name == "m8n8k4" {
            format!("llvm.nvvm.mma.m8n8k4.{al}.{bl}.{sig}")
        } else if is_mma {
            // llvm.nvvm.mma.<shape>.row.col[.satfinite].<d.c | bf16 | a[.b]>
            let sig = match (at, bt) {
                (Elem::F16, _) => format!("{}.{}", dt.name(), ct.name()),
                (a, b) if a == b => a.name().to_string(),
                (a, b) => format!("{}.{}", a.name(), b.name()),
            };
            format!("llvm.nvvm.mma.{shape_name}.{al}.{bl}{}.{sig}", if sat { ".satfinite" } else { "" })
        } else {
            let op = if ab == Elem::B1 { ".xor.popc" } else { "" };
            format!("llvm.nvvm.wmma.{shape_name}.mma{op}.{al}.{bl}.{sig}{}", if sat { ".satfinite" } else { "" })
        };
        let mut args = Vec::new();
        for (regs, f) in [(a_regs, &fa), (b_regs, &fb), (c_regs, &fc)] {
            for r in regs {
                let w = e.read_int(r, Type::B32)?;
                args.push(e.b.build_bit_cast(w, nvptx_elem_t(e, f.elem), "").unwrap());
            }
        }
        let res = match e.try_intrinsic(&name, &[], &args).and_then(|c| c.try_as_basic_value().basic()) {
            Some(r) => r,
            // LLVM 19 has no intrinsic for the 8-bit float forms: inline PTX (f32 registers).
            None if matches!(at, Elem::E4M3 | Elem::E5M2) => {
                let text = format!("mma.sync.aligned.{shape_name}.row.col.f32.{}.{}.f32", at.name(), bt.name());
                let nd = d_regs.len();
                let list = |from: usize, n: usize| (from..from + n).map(|k| format!("${k}")).collect::<Vec<_>>().join(", ");
                let (na, nb, nc) = (a_regs.len(), b_regs.len(), c_regs.len());
                let asm = format!("{text} {{{}}}, {{{}}}, {{{}}}, {{{}}};", list(0, nd), list(nd, na), list(nd + na, nb), list(nd + na + nb, nc));
                let mut cons: Vec<&str> = vec!["=f"; nd];
                cons.extend(std::iter::repeat("r").take(na + nb));
                cons.extend(std::iter::repeat("f").take(nc));
                let f32t = e.ctx().f32_type();
                let ins: Vec<inkwell::values::BasicValueEnum> = args.iter().enumerate().map(|(k, v)| if k >= na + nb { e.b.build_bit_cast(*v, f32t, "").unwrap() } else { e.b.build_bit_cast(*v, e.ctx().i32_type(), "").unwrap() }).collect();
                let ret = e.ctx().struct_type(&vec![f32t.into(); nd], false);
                super::nvvm::inline_ptx(e, Some(ret.into()), &asm, &cons.join(","), &ins).unwrap()
            }
            None => return Err(e.err(i.opcode.span, format!("LLVM has no intrinsic `{name}` for this form"))),
        };
        for (k, r) in d_regs.iter().enumerate() {
            let v = if res.is_struct_value() { e.b.build_extract_value(res.into_struct_value(), k as u32, "").unwrap() } else { res };
            let w = e.b.build_bit_cast(v, e.ctx().i32_type(), "").unwrap();
            e.write(r, Type::B32, w)?;
        }
        return Ok(());
    }
    let form = MmaForm { fa, fb, fc, fd, ab, bt, ct, dt, sat, nregs: d_regs.len() as u32, sparse: None };
    let name = format!("__ptxr_mma.{}.{shape_name}.{al}.{bl}.{}.{}.{}.{}{}", i.opcode.name, dt.name(), ab.name(), bt.name(), ct.name(), if sat { ".satfinite" } else { "" });
    let words: Vec<&'a Operand<'a>> = a_regs.iter().chain(b_regs).chain(c_regs).collect();
    mma_run(e, &form, &name, d_regs, &words)
}

/// PTX ISA 9.7.14.6 `mma.sp{::ordered_metadata}.sync.aligned.shape.row.col{.satfinite}.dtype
/// .atype.btype.ctype d, a, b, c, e, f`: A is structured-sparse (2:4; 1:2 for .tf32), a holds
/// its non-zeros in the fragment of the dense shape with half the K (9.7.14.6.2: the rows and
/// columns of those formulas), e the positions (`Sparse`), f (a constant) the threads of each
/// group of four whose e counts. B, C and D are the dense shape's.
fn mma_sp<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, shape: (u32, u32, u32), shape_name: &'static str, ty: &[Elem]) -> R<()> {
    let k = shape.2;
    let (dt, at, bt, ct, width) = match (ty, shape_name) {
        ([d, Elem::F16, Elem::F16, c], "m16n8k16" | "m16n8k32") if matches!(d, Elem::F16 | Elem::F32) && matches!(c, Elem::F16 | Elem::F32) => (*d, Elem::F16, Elem::F16, *c, 4),
        ([Elem::F32, Elem::BF16, Elem::BF16, Elem::F32], "m16n8k16" | "m16n8k32") => (Elem::F32, Elem::BF16, Elem::BF16, Elem::F32, 4),
        ([Elem::F32, Elem::TF32, Elem::TF32, Elem::F32], "m16n8k8" | "m16n8k16") => (Elem::F32, Elem::TF32, Elem::TF32, Elem::F32, 2),
        ([Elem::S32, a, b, Elem::S32], "m16n8k32" | "m16n8k64") if matches!(a, Elem::S8 | Elem::U8) && matches!(b, Elem::S8 | Elem::U8) => (Elem::S32, *a, *b, Elem::S32, 4),
        ([Elem::F32, a, b, Elem::F32], "m16n8k64") if matches!(a, Elem::E4M3 | Elem::E5M2) && matches!(b, Elem::E4M3 | Elem::E5M2) => (Elem::F32, *a, *b, Elem::F32, 4),
        // 4:8 pair-wise sparsity: two of the four two-element sub-chunks of each eight
        ([Elem::S32, a, b, Elem::S32], "m16n8k64" | "m16n8k128") if matches!(a, Elem::S4 | Elem::U4) && matches!(b, Elem::S4 | Elem::U4) => (Elem::S32, *a, *b, Elem::S32, 8),
        _ => return Err(e.err(i.opcode.span, format!("`{}`: ptxr runs .m16n8k16/.m16n8k32 with .f16/.bf16, .m16n8k8/.m16n8k16 with .tf32, .m16n8k32/.m16n8k64 with .s8/.u8, .m16n8k64/.m16n8k128 with .s4/.u4 and .m16n8k64 with .e4m3/.e5m2", super::func::instr_name(i)))),
    };
    let kept = width / 2;
    let pairs = width == 8;
    let half = match k / 2 {
        4 => "m16n8k4",
        8 => "m16n8k8",
        16 => "m16n8k16",
        32 => "m16n8k32",
        _ => "m16n8k64",
    };
    let threads = k / width / 4;
    let sel_op = i.operands.get(5).ok_or_else(|| e.err(i.span, "`mma.sp` takes d, a, b, c, e and the sparsity selector f"))?;
    let selector = match sel_op {
        Operand::Imm(_) => e.read_int(sel_op, Type::U32)?.get_zero_extended_constant().unwrap_or(u64::MAX),
        _ => u64::MAX,
    };
    if selector == u64::MAX {
        return Err(e.err(sel_op.span(), "the sparsity selector of `mma.sp` is an integer constant"));
    }
    if (selector as u32 + 1) * threads > 4 {
        return Err(e.err(sel_op.span(), format!("sparsity selector {selector}: {} here (9.7.14.6.1)", if threads == 1 { "0 to 3" } else if threads == 2 { "0 (threads 0 and 1 of each group of four) or 1 (threads 2 and 3)" } else { "0 (every thread of each group of four)" })));
    }
    let sat = i.has_mod("satfinite");
    let fa = Frag { mat: 'a', shape: (16, 8, k / 2), shape_name: half, elem: at, row: true };
    let fb = Frag { mat: 'b', shape, shape_name, elem: bt, row: false };
    let fc = Frag { mat: 'c', shape, shape_name, elem: ct, row: true };
    let fd = Frag { mat: 'c', shape, shape_name, elem: dt, row: true };
    let d_regs = regs_of(e, &i.operands[0], fd.regs(), "D")?;
    let a_regs = regs_of(e, &i.operands[1], fa.regs(), "A")?;
    let b_regs = regs_of(e, &i.operands[2], fb.regs(), "B")?;
    let c_regs = regs_of(e, &i.operands[3], fc.regs(), "C")?;
    let meta = &i.operands[4];
    if e.m.nvptx {
        // LLVM 19 has no intrinsics for the sparse forms: the instruction as inline PTX, each
        // fragment register as a 32-bit one (f32 ones for .f32 C and D)
        let f32t = e.ctx().f32_type();
        let mut args: Vec<inkwell::values::BasicValueEnum<'ctx>> = Vec::new();
        let mut cons: Vec<&str> = vec![if dt == Elem::F32 { "=f" } else { "=r" }; d_regs.len()];
        let list = |from: usize, n: usize| (from..from + n).map(|k| format!("${k}")).collect::<Vec<_>>().join(", ");
        let (nd, na, nb, nc) = (d_regs.len(), a_regs.len(), b_regs.len(), c_regs.len());
        let text = format!(
            "{} {{{}}}, {{{}}}, {{{}}}, {{{}}}, ${}, {selector};",
            std::iter::once(i.opcode.name).chain(i.mods.iter().copied()).collect::<Vec<_>>().join("."),
            list(0, nd),
            list(nd, na),
            list(nd + na, nb),
            list(nd + na + nb, nc),
            nd + na + nb + nc
        );
        for r in a_regs.iter().chain(b_regs) {
            args.push(e.read_int(r, Type::B32)?.into());
            cons.push("r");
        }
        for r in c_regs {
            let w = e.read_int(r, Type::B32)?;
            args.push(if ct == Elem::F32 { e.b.build_bit_cast(w, f32t, "").unwrap() } else { w.into() });
            cons.push(if ct == Elem::F32 { "f" } else { "r" });
        }
        args.push(e.read_int(meta, Type::B32)?.into());
        cons.push("r");
        let elem_t: inkwell::types::BasicTypeEnum = if dt == Elem::F32 { f32t.into() } else { e.ctx().i32_type().into() };
        let ret = e.ctx().struct_type(&vec![elem_t; nd], false);
        let res = super::nvvm::inline_ptx(e, Some(ret.into()), &text, &cons.join(","), &args).unwrap();
        for (k, r) in d_regs.iter().enumerate() {
            let v = e.b.build_extract_value(res.into_struct_value(), k as u32, "").unwrap();
            let w = e.b.build_bit_cast(v, e.ctx().i32_type(), "").unwrap();
            e.write(r, Type::B32, w)?;
        }
        return Ok(());
    }
    let sparse = Some(Sparse { width, kept, selector: selector as u32, pairs });
    let form = MmaForm { fa, fb, fc, fd, ab: at, bt, ct, dt, sat, nregs: d_regs.len() as u32, sparse };
    let name = format!("__ptxr_mma.sp{selector}.{shape_name}.{}.{}.{}.{}{}", dt.name(), at.name(), bt.name(), ct.name(), if sat { ".satfinite" } else { "" });
    let words: Vec<&'a Operand<'a>> = a_regs.iter().chain(b_regs).chain(c_regs).chain(std::iter::once(meta)).collect();
    mma_run(e, &form, &name, d_regs, &words)
}

/// The products of `form` for this lane (or warp): the A, B and C words (and, for `mma.sp`, the
/// metadata word) of `words` exchanged between the lanes, D written to `d_regs`.
fn mma_run<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, form: &MmaForm, name: &str, d_regs: &'a [Operand<'a>], words_ops: &[&'a Operand<'a>]) -> R<()> {
    let i32t = e.ctx().i32_type();
    // The products are computed by one internal function per form (`mma_products`), called
    // with lane 0's area, the distance between two lanes' areas and a lane's index: a kernel
    // with 64 `mma.sync` has 64 calls of one body instead of 64 bodies.
    if let Some(WarpExchange::ComputeWarp { words, d }) = e.warp_exchange.clone() {
        let words = match words {
            Words::Arrays(w) => w,
            Words::Area(area) => {
                let n = words_ops.len() as u64;
                let i64t = e.ctx().i64_type();
                (0..n).map(|w| unsafe { e.b.build_in_bounds_gep(e.ctx().i8_type(), area, &[i64t.const_int(w * 4 * LANES as u64, false)], "").unwrap() }).collect()
            }
        };
        let whole = match e.m.module.get_function(&format!("{name}.warp")) {
            Some(h) => h,
            None => {
                let lanes = match e.m.module.get_function(&format!("{name}.table")) {
                    Some(h) => h,
                    None => mma_products(e, &format!("{name}.table"), form, true),
                };
                mma_warp_products(e, name, lanes, words.len() as u32, form.nregs)
            }
        };
        let args: Vec<inkwell::values::BasicMetadataValueEnum> = words.iter().chain(&d).map(|p| (*p).into()).collect();
        e.b.build_call(whole, &args, "").unwrap();
        return Ok(());
    }
    let helper = match e.m.module.get_function(name) {
        Some(h) => h,
        None => mma_products(e, name, form, false),
    };
    // A, B and C words go to this thread's exchange area, in that order.
    let ex = match e.warp_exchange.clone() {
        Some(WarpExchange::Compute { area, lane }) => Exchange::of_warp(e, area, lane),
        _ => {
            let mut words = Vec::new();
            for r in words_ops {
                words.push(e.read_int(r, Type::B32)?);
            }
            match exchange(e, &words) {
                Some(ex) => ex,
                None => return Ok(()),
            }
        }
    };
    let base = ex.word(e, i32t.const_zero(), i32t.const_zero());
    let out_t = i32t.array_type(form.nregs);
    let out_p = e.alloca_b.build_alloca(out_t, "mma.d").unwrap();
    e.b.build_call(helper, &[base.into(), ex.frame_size.into(), ex.word_stride.into(), ex.lane.into(), out_p.into()], "").unwrap();
    let mut out = Vec::new();
    for k in 0..form.nregs {
        let p = unsafe { e.b.build_in_bounds_gep(out_t, out_p, &[i32t.const_zero(), i32t.const_int(k as u64, false)], "").unwrap() };
        out.push(e.b.build_load(i32t, p, "").unwrap().into_int_value());
    }
    for (r, v) in d_regs.iter().zip(out) {
        e.write(r, Type::B32, v.into())?;
    }
    exchange_end(e);
    Ok(())
}

/// Defines `void name.warp(ptr w_0, .., ptr w_{nwords-1}, ptr d_0, .., ptr d_{nregs-1})`: the
/// D registers of all 32 lanes of a warp, each lane's by `lane_helper` (`mma_products` with a
/// word table): word `w` of the A, B and C fragments (in that order) of lane `l` at `w_w + 4 *
/// l`, register `k` of D of lane `l` written to `d_k + 4 * l`. The results are written once
/// every lane's are computed, so a D array may be one the words are read from. (The arrays
/// are arguments, not a table in memory: the calls of a loop of matrix instructions store
/// nothing.)
fn mma_warp_products<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, lane_helper: inkwell::values::FunctionValue<'ctx>, nwords: u32, nregs: u32) -> inkwell::values::FunctionValue<'ctx> {
    let ctx = e.ctx();
    let i32t = ctx.i32_type();
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let params: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![ptr_t.into(); (nwords + nregs) as usize];
    let fn_t = ctx.void_type().fn_type(&params, false);
    let (h, saved) = e.begin_helper(&format!("{name}.warp"), fn_t);
    let words = e.b.build_alloca(ptr_t.array_type(nwords), "words").unwrap();
    for k in 0..nwords {
        let slot = unsafe { e.b.build_in_bounds_gep(ptr_t, words, &[i32t.const_int(k as u64, false)], "").unwrap() };
        e.b.build_store(slot, h.get_nth_param(k).unwrap()).unwrap();
    }
    let out_t = i32t.array_type(nregs);
    let out = e.b.build_alloca(out_t, "d.lane").unwrap();
    // Register k of lane l at res[k][l].
    let res_t = i32t.array_type(LANES).array_type(nregs);
    let res = e.b.build_alloca(res_t, "d.warp").unwrap();
    if let Some(i) = res.as_instruction() {
        let _ = i.set_alignment(64);
    }
    let entry = e.b.get_insert_block().unwrap();
    let body = ctx.append_basic_block(h, "lane");
    let done = ctx.append_basic_block(h, "done");
    e.b.build_unconditional_branch(body).unwrap();
    e.b.position_at_end(body);
    let phi = e.b.build_phi(i32t, "l").unwrap();
    let l = phi.as_basic_value().into_int_value();
    e.b.build_call(lane_helper, &[words.into(), l.into(), out.into()], "").unwrap();
    for k in 0..nregs {
        let src = unsafe { e.b.build_in_bounds_gep(out_t, out, &[i32t.const_zero(), i32t.const_int(k as u64, false)], "").unwrap() };
        let v = e.b.build_load(i32t, src, "").unwrap();
        let dst = unsafe { e.b.build_in_bounds_gep(res_t, res, &[i32t.const_zero(), i32t.const_int(k as u64, false), l], "").unwrap() };
        e.b.build_store(dst, v).unwrap();
    }
    let l1 = e.b.build_int_add(l, i32t.const_int(1, false), "").unwrap();
    let more = e.b.build_int_compare(inkwell::IntPredicate::ULT, l1, i32t.const_int(LANES as u64, false), "").unwrap();
    e.b.build_conditional_branch(more, body, done).unwrap();
    phi.add_incoming(&[(&i32t.const_zero(), entry), (&l1, body)]);
    e.b.position_at_end(done);
    let v32 = i32t.vec_type(LANES);
    for k in 0..nregs {
        let src = unsafe { e.b.build_in_bounds_gep(res_t, res, &[i32t.const_zero(), i32t.const_int(k as u64, false)], "").unwrap() };
        let v = e.b.build_load(v32, src, "").unwrap();
        if let Some(i) = v.into_vector_value().as_instruction() {
            let _ = i.set_alignment(64);
        }
        let arr = h.get_nth_param(nwords + k).unwrap().into_pointer_value();
        let st = e.b.build_store(arr, v).unwrap();
        let _ = st.set_alignment(4);
    }
    e.b.build_return(None).unwrap();
    e.end_helper(saved);
    h
}

/// The operands and types of one form of `mma`/`wmma.mma`.
struct MmaForm {
    fa: Frag,
    fb: Frag,
    fc: Frag,
    fd: Frag,
    ab: Elem,
    bt: Elem,
    ct: Elem,
    dt: Elem,
    sat: bool,
    nregs: u32,
    /// `mma.sp`: A holds the non-zeros only (its fragment `fa` has half the K of `fd`).
    sparse: Option<Sparse>,
}

/// The structured sparsity of `mma.sp`'s A (PTX ISA 9.7.14.6.1): in each chunk of `width`
/// consecutive elements of a row, `kept` are stored; metadata word `e` (after C in the
/// exchange) of the selected threads of each group of four gives their positions.
#[derive(Clone, Copy)]
struct Sparse {
    width: u32,
    kept: u32,
    selector: u32,
    /// .s4/.u4 (4:8): the two indices name two-element sub-chunks, kept whole.
    pairs: bool,
}

/// Defines `void name(ptr area0, i64 lane_stride, i64 word_stride, i32 lane, ptr d)`: lane
/// `lane`'s D registers of the product whose A, B and C words lie in the exchange areas of
/// the 32 lanes (word w of lane l at `area0 + l * lane_stride + w * word_stride`: its A
/// words, then B, then C), written to `d[0..nregs]`.
///
/// `table`: defines `void name(ptr table, i32 lane, ptr d)` instead, word `w` of lane `l` at
/// `table[w] + 4 * l` (`Exchange::table`).
fn mma_products<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, form: &MmaForm, table: bool) -> inkwell::values::FunctionValue<'ctx> {
    let ctx = e.ctx();
    let (i32t, i64t, f32t) = (ctx.i32_type(), ctx.i64_type(), ctx.f32_type());
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let fn_t = if table { ctx.void_type().fn_type(&[ptr_t.into(), i32t.into(), ptr_t.into()], false) } else { ctx.void_type().fn_type(&[ptr_t.into(), i64t.into(), i64t.into(), i32t.into(), ptr_t.into()], false) };
    let (h, saved) = e.begin_helper(name, fn_t);
    let p = |k: u32| h.get_nth_param(k).unwrap();
    let (ex, lane, out_p) = if table {
        let t = p(0).into_pointer_value();
        (Exchange { table: Some(t), frame_t: t, area: 0, frame_size: i64t.const_zero(), word_stride: i64t.const_zero(), lane: i32t.const_zero() }, p(1).into_int_value(), p(2).into_pointer_value())
    } else {
        (Exchange { table: None, frame_t: p(0).into_pointer_value(), area: 0, frame_size: p(1).into_int_value(), word_stride: p(2).into_int_value(), lane: i32t.const_zero() }, p(3).into_int_value(), p(4).into_pointer_value())
    };
    let MmaForm { ref fa, ref fb, ref fc, ref fd, ab, bt, ct, dt, sat, nregs, sparse } = *form;
    let shape = fd.shape;
    // Inverse tables: for each (row, col) of a matrix, a lane holding it and the element index.
    let inverse = |f: &Frag| -> Vec<u16> {
        let (rows, cols) = f.dims();
        let mut inv = vec![u16::MAX; (rows * cols) as usize];
        let per = f.elems();
        for (idx, &(r, c)) in f.table().iter().enumerate() {
            let slot = &mut inv[(r as u32 * cols + c as u32) as usize];
            if *slot == u16::MAX {
                *slot = ((idx as u32 / per) << 8 | (idx as u32 % per)) as u16;
            }
        }
        inv
    };
    let inv_a = table_global(e, &format!("__ptxr_wmma_inv_{}", fa.key()), &inverse(&fa));
    let inv_b = table_global(e, &format!("__ptxr_wmma_inv_{}", fb.key()), &inverse(&fb));
    let inv_c = table_global(e, &format!("__ptxr_wmma_inv_{}", fc.key()), &inverse(&fc));
    let tg_d = pos_table(e, &fd);
    // Element (lane', j') of the fragment stored at word `first` of the areas, from lane''s
    // area, as an i32 (sign- or zero-extended integers) or the raw f16 bits.
    let fetch = |e: &FnEmitter<'ctx, '_, '_>, inv: PointerValue<'ctx>, idx: IntValue<'ctx>, first: u32, elem: Elem| -> IntValue<'ctx> {
        let lj = lookup(e, inv, idx);
        let l2 = e.b.build_right_shift(lj, i32t.const_int(8, false), false, "").unwrap();
        let j2 = e.b.build_and(lj, i32t.const_int(0xff, false), "").unwrap();
        let per = elem.per_reg();
        let w = e.b.build_right_shift(j2, i32t.const_int(per.trailing_zeros() as u64, false), false, "").unwrap();
        let w = e.b.build_int_add(w, i32t.const_int(first as u64, false), "").unwrap();
        let word = e.b.build_load(i32t, ex.word(e, l2, w), "").unwrap().into_int_value();
        let sub = e.b.build_and(j2, i32t.const_int((per - 1) as u64, false), "").unwrap();
        let sh = e.b.build_int_mul(sub, i32t.const_int(elem.bits() as u64, false), "").unwrap();
        let v = e.b.build_right_shift(word, sh, false, "").unwrap();
        let v = e.resize(v, elem.bits(), false);
        e.resize(v, 32, matches!(elem, Elem::S8 | Elem::S4))
    };
    let to_f32 = |e: &FnEmitter<'ctx, '_, '_>, bits: IntValue<'ctx>, elem: Elem| -> FloatValue<'ctx> {
        match elem {
            Elem::F16 => super::ops_half::h2f(e, e.resize(bits, 16, false)),
            // bf16: the upper half of an f32
            Elem::BF16 => {
                let w = e.b.build_left_shift(e.resize(e.resize(bits, 16, false), 32, false), i32t.const_int(16, false), "").unwrap();
                e.b.build_bit_cast(w, f32t, "").unwrap().into_float_value()
            }
            // tf32: the low 13 mantissa bits do not take part (truncated); the product of two
            // tf32 values is exact in f32, so A*B + C rounds as the .f16/.bf16 forms do.
            Elem::TF32 => {
                let w = e.b.build_and(bits, i32t.const_int(0xffff_e000, false), "").unwrap();
                e.b.build_bit_cast(w, f32t, "").unwrap().into_float_value()
            }
            Elem::E4M3 | Elem::E5M2 => super::ops_wgmma::f8_to_f32(e, e.resize(bits, 32, false), elem == Elem::E4M3),
            _ => e.b.build_bit_cast(bits, f32t, "").unwrap().into_float_value(),
        }
    };
    let (_, n, kdim) = shape;
    let (first_b, first_c) = (fa.regs(), fa.regs() + fb.regs());
    let first_e = first_c + fc.regs();
    // The k loop: over K, or for `mma.sp` over the stored elements of A's row (A's own K),
    // each at the k its metadata gives (PTX ISA 9.7.14.6.2: thread 4 (row % 8) + selector *
    // T + chunk / 4 of the row's group holds in bits 16 (row / 8) + 4 (chunk % 4) the chunk's
    // two 2-bit indices, the lower first, T = chunks per row / 4; a .tf32 chunk of two is
    // indexed in halves, 0b0100 for its first element and 0b1110 for its second).
    let kcount = if sparse.is_some() { fa.shape.2 } else { kdim };
    // (`row_k`: the row times A's K, computed once per element outside the k loop)
    let ab_at = |e: &FnEmitter<'ctx, '_, '_>, row: IntValue<'ctx>, row_k: IntValue<'ctx>, col: IntValue<'ctx>, k: IntValue<'ctx>| -> (IntValue<'ctx>, IntValue<'ctx>) {
        let c = |v: u32| i32t.const_int(v as u64, false);
        let Some(sp) = sparse else {
            return ab_index(e, row_k, col, k, n);
        };
        let a_idx = e.b.build_int_add(row_k, k, "").unwrap();
        let chunk = e.b.build_int_unsigned_div(k, c(sp.kept), "").unwrap();
        let within = e.b.build_int_unsigned_rem(k, c(sp.kept), "").unwrap();
        let slot = if sp.pairs { e.b.build_right_shift(within, c(1), false, "").unwrap() } else { within };
        let threads = kdim / sp.width / 4;
        let group = e.b.build_and(row, c(7), "").unwrap();
        let owner = e.b.build_int_add(e.b.build_int_mul(group, c(4), "").unwrap(), c(sp.selector * threads), "").unwrap();
        let owner = e.b.build_int_add(owner, e.b.build_right_shift(chunk, c(2), false, "").unwrap(), "").unwrap();
        let meta = e.b.build_load(i32t, ex.word(e, owner, c(first_e)), "").unwrap().into_int_value();
        let half = e.b.build_int_mul(e.b.build_right_shift(row, c(3), false, "").unwrap(), c(16), "").unwrap();
        let sh = e.b.build_int_add(half, e.b.build_int_mul(e.b.build_and(chunk, c(3), "").unwrap(), c(4), "").unwrap(), "").unwrap();
        let sh = e.b.build_int_add(sh, e.b.build_int_mul(slot, c(2), "").unwrap(), "").unwrap();
        let mut idx = e.b.build_and(e.b.build_right_shift(meta, sh, false, "").unwrap(), c(3), "").unwrap();
        if sp.width == 2 {
            idx = e.b.build_right_shift(idx, c(1), false, "").unwrap();
        }
        if sp.pairs {
            // element `within % 2` of sub-chunk `idx`
            idx = e.b.build_int_add(e.b.build_int_mul(idx, c(2), "").unwrap(), e.b.build_and(within, c(1), "").unwrap(), "").unwrap();
        }
        let kk = e.b.build_int_add(e.b.build_int_mul(chunk, c(sp.width), "").unwrap(), idx, "").unwrap();
        (a_idx, e.b.build_int_add(col, e.b.build_int_mul(kk, c(n), "").unwrap(), "").unwrap())
    };
    let nd = fd.elems();
    let lane_n = e.b.build_int_mul(lane, i32t.const_int(nd as u64, false), "").unwrap();
    let mut out: Vec<IntValue<'ctx>> = vec![i32t.const_zero(); nregs as usize];
    for j in 0..nd {
        let (row, col) = elem_pos(e, tg_d, lane_n, j);
        let c_idx = e.b.build_int_add(e.b.build_int_mul(row, i32t.const_int(n as u64, false), "").unwrap(), col, "").unwrap();
        let c = fetch(e, inv_c, c_idx, first_c, ct);
        let row_k = e.b.build_int_mul(row, i32t.const_int(kcount as u64, false), "").unwrap();
        let bits: IntValue<'ctx> = if dt == Elem::S32 {
            let acc0 = e.resize(c, 64, true);
            let mut acc = k_loop(e, kcount, acc0.into(), |e, k, acc| {
                let (a_idx, b_idx) = ab_at(e, row, row_k, col, k);
                let a = fetch(e, inv_a, a_idx, 0, ab);
                let b = fetch(e, inv_b, b_idx, first_b, bt);
                // .b1 (wmma.mma.xor.popc): popc(A row XOR B column), one bit at a time
                let p = if ab == Elem::B1 { e.b.build_xor(a, b, "").unwrap() } else { e.b.build_int_mul(a, b, "").unwrap() };
                e.b.build_int_add(acc.into_int_value(), e.resize(p, 64, true), "").unwrap().into()
            })
            .into_int_value();
            if sat {
                let hi = i64t.const_int(i32::MAX as u64, false);
                let lo = i64t.const_int(i32::MIN as i64 as u64, true);
                let over = e.b.build_int_compare(IntPredicate::SGT, acc, hi, "").unwrap();
                acc = e.b.build_select(over, hi, acc, "").unwrap().into_int_value();
                let under = e.b.build_int_compare(IntPredicate::SLT, acc, lo, "").unwrap();
                acc = e.b.build_select(under, lo, acc, "").unwrap().into_int_value();
            }
            e.resize(acc, 32, false)
        } else {
            let acc0 = to_f32(e, c, ct);
            let mut acc = k_loop(e, kcount, acc0.into(), |e, k, acc| {
                let (a_idx, b_idx) = ab_at(e, row, row_k, col, k);
                let a = fetch(e, inv_a, a_idx, 0, ab);
                let a = to_f32(e, a, ab);
                let b = fetch(e, inv_b, b_idx, first_b, bt);
                let b = to_f32(e, b, bt);
                let p = e.b.build_float_mul(a, b, "").unwrap();
                e.b.build_float_add(acc.into_float_value(), p, "").unwrap().into()
            })
            .into_float_value();
            if sat {
                let max = f32t.const_float(if dt == Elem::F16 { 65504.0 } else { f32::MAX as f64 });
                let lo = f32t.const_float(if dt == Elem::F16 { -65504.0 } else { f32::MIN as f64 });
                let nan = e.b.build_float_compare(inkwell::FloatPredicate::UNO, acc, acc, "").unwrap();
                acc = e.intrinsic("llvm.minnum", &[f32t.into()], &[acc.into(), max.into()]).into_float_value();
                acc = e.intrinsic("llvm.maxnum", &[f32t.into()], &[acc.into(), lo.into()]).into_float_value();
                acc = e.b.build_select(nan, f32t.const_zero(), acc, "").unwrap().into_float_value();
            }
            acc_bits(e, acc, dt == Elem::F16)
        };
        let per = dt.per_reg();
        let (w, sh) = ((j / per) as usize, (j % per) * dt.bits());
        let v = e.b.build_left_shift(bits, i32t.const_int(sh as u64, false), "").unwrap();
        out[w] = e.b.build_or(out[w], v, "").unwrap();
    }
    for (k, v) in out.into_iter().enumerate() {
        let q = unsafe { e.b.build_in_bounds_gep(i32t, out_p, &[i32t.const_int(k as u64, false)], "").unwrap() };
        e.b.build_store(q, v).unwrap();
    }
    e.b.build_return(None).unwrap();
    e.end_helper(saved);
    h
}

/// The bits (i32) of an f32 accumulator sum as a D element: rounded to .f16 (rn) for an f16
/// D, else the f32 with a NaN made the canonical NaN, as every f32 arithmetic result is here.
pub(super) fn acc_bits<'ctx>(e: &FnEmitter<'ctx, '_, '_>, acc: FloatValue<'ctx>, f16: bool) -> IntValue<'ctx> {
    if f16 {
        let wide = e.b.build_float_ext(acc, e.ctx().f64_type(), "").unwrap();
        let h = super::ops_half::round_f16(e, wide, super::ops_float::Rnd::N);
        e.resize(h, 32, false)
    } else {
        let acc = super::ops_float::canon_nan(e, acc);
        e.b.build_bit_cast(acc, e.ctx().i32_type(), "").unwrap().into_int_value()
    }
}

/// Where a warp matrix instruction is on the warp path (`warp_collective::matrix`): the
/// lanes hand over their words in one lane loop (each to its area of 24 words in `area`, an
/// array of 32 areas), then compute their results from all lanes' words in another.
#[derive(Clone)]
pub(crate) enum WarpExchange<'ctx> {
    Gather { area: PointerValue<'ctx>, lane: IntValue<'ctx> },
    Compute { area: PointerValue<'ctx>, lane: IntValue<'ctx> },
    /// Outside a lane loop: every lane's results at once, from the arrays of 32 words that
    /// `words` lists (one per word of A, B and C: lane arrays of registers or rows of an
    /// exchange area), into the lane arrays that `d` lists (one per D register);
    /// `mma`/`wmma.mma` only.
    ComputeWarp { words: Words<'ctx>, d: Vec<PointerValue<'ctx>> },
}

/// Where the warp path's `ComputeWarp` finds the words of A, B and C.
#[derive(Clone)]
pub(crate) enum Words<'ctx> {
    /// One lane array per word.
    Arrays(Vec<PointerValue<'ctx>>),
    /// Rows of an exchange area (word `w` of lane `l` at `area + 128 * w + 4 * l`).
    Area(PointerValue<'ctx>),
}

/// Bytes of one lane's exchange area.
pub(crate) const AREA_BYTES: u32 = 4 * 24;

// ------------------------------------------------------------------ NVPTX (round trip)

/// The LLVM type of one fragment register for the NVVM wmma intrinsics.
fn nvptx_elem_t<'ctx>(e: &FnEmitter<'ctx, '_, '_>, elem: Elem) -> inkwell::types::BasicTypeEnum<'ctx> {
    let c = e.ctx();
    match elem {
        Elem::F16 => c.f16_type().vec_type(2).into(),
        Elem::F32 => c.f32_type().into(),
        _ => c.i32_type().into(),
    }
}

/// wmma.load/wmma.store as llvm.nvvm.wmma.<shape>.{load.<mat>|store.d}.<layout>.stride.<type>.
fn nvptx_load_store<'ctx, 'a>(
    e: &mut FnEmitter<'ctx, 'a, '_>,
    is_load: bool,
    frag: &Frag,
    row_major: bool,
    regs: &'a [Operand<'a>],
    base: PointerValue<'ctx>,
    stride: IntValue<'ctx>,
    span: crate::syntax::ast::Span,
) -> R<()> {
    let layout = if row_major { "row" } else { "col" };
    let over = [base.get_type().into()];
    if is_load {
        let name = format!("llvm.nvvm.wmma.{}.load.{}.{layout}.stride.{}", frag.shape_name, frag.mat, frag.elem.name());
        let Some(res) = e.try_intrinsic(&name, &over, &[base.into(), stride.into()]).and_then(|c| c.try_as_basic_value().basic()) else {
            return Err(e.err(span, format!("LLVM has no intrinsic `{name}` for this form")));
        };
        for (k, r) in regs.iter().enumerate() {
            // A one-register fragment is returned as a plain value, not a struct.
            let v = if res.is_struct_value() { e.b.build_extract_value(res.into_struct_value(), k as u32, "").unwrap() } else { res };
            let w = e.b.build_bit_cast(v, e.ctx().i32_type(), "").unwrap();
            e.write(r, Type::B32, w)?;
        }
    } else {
        let name = format!("llvm.nvvm.wmma.{}.store.d.{layout}.stride.{}", frag.shape_name, frag.elem.name());
        let mut args: Vec<BasicValueEnum<'ctx>> = vec![base.into()];
        for r in regs {
            let w = e.read_int(r, Type::B32)?;
            args.push(e.b.build_bit_cast(w, nvptx_elem_t(e, frag.elem), "").unwrap());
        }
        args.push(stride.into());
        if e.try_intrinsic(&name, &over, &args).is_none() {
            return Err(e.err(span, format!("LLVM has no intrinsic `{name}` for this form")));
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ the exchange, ldmatrix

/// The warp exchange of `mma`, `wmma.mma` and `ldmatrix`: each thread stores its words in an
/// area of 24 words of its thread frame, the warp meets (`bar.warp.sync` with the full mask),
/// and each thread reads the areas of the others, which lie `(lane' - lane) * frame size` bytes
/// from its own frame (the threads of a warp have consecutive frames). `exchange_end` meets the
/// warp again, so that nobody overwrites its area before every lane has read it. A warp of
/// fewer than 32 threads (a partial last warp) ends the launch with an error: these
/// instructions need the whole warp, and there would be no frames to read.
pub(super) struct Exchange<'ctx> {
    /// Where set, word `w` of lane `l` is at `table[w] + 4 * l` (a table of pointers to
    /// arrays of 32 words, one per word: lane arrays of registers or rows of an exchange
    /// area) and the fields below are unused.
    table: Option<PointerValue<'ctx>>,
    frame_t: PointerValue<'ctx>,
    area: u32,
    /// Bytes from one lane's word to the next lane's same word (i64).
    pub(super) frame_size: IntValue<'ctx>,
    /// Bytes from one word of a lane to its next word (i64).
    pub(super) word_stride: IntValue<'ctx>,
    /// %laneid of this thread.
    pub(super) lane: IntValue<'ctx>,
}

impl<'ctx> Exchange<'ctx> {
    /// The exchange of the warp path: word `w` of lane `l` at `area + w * 128 + l * 4`
    /// (word-major, so that the lane loop handing the words over stores whole vectors).
    pub(super) fn of_warp(e: &FnEmitter<'ctx, '_, '_>, area: PointerValue<'ctx>, lane: IntValue<'ctx>) -> Exchange<'ctx> {
        let i64t = e.ctx().i64_type();
        let off = lane_area_offset(e, lane);
        let frame_t = unsafe { e.b.build_in_bounds_gep(e.ctx().i8_type(), area, &[off], "").unwrap() };
        Exchange { table: None, frame_t, area: 0, frame_size: i64t.const_int(4, false), word_stride: i64t.const_int(4 * LANES as u64, false), lane }
    }

    /// The 64-bit word (two 32-bit words, low first: `exchange`) at word `w` of lane `other`.
    fn word64(&self, e: &FnEmitter<'ctx, '_, '_>, other: IntValue<'ctx>, w: u64) -> IntValue<'ctx> {
        let (i32t, i64t) = (e.ctx().i32_type(), e.ctx().i64_type());
        let lo = e.b.build_load(i32t, self.word(e, other, i32t.const_int(w, false)), "").unwrap().into_int_value();
        let hi = e.b.build_load(i32t, self.word(e, other, i32t.const_int(w + 1, false)), "").unwrap().into_int_value();
        let hi = e.b.build_left_shift(e.resize(hi, 64, false), i64t.const_int(32, false), "").unwrap();
        e.b.build_or(hi, e.resize(lo, 64, false), "").unwrap()
    }

    /// Word `w` of the area of lane `other`.
    pub(super) fn word(&self, e: &FnEmitter<'ctx, '_, '_>, other: IntValue<'ctx>, w: IntValue<'ctx>) -> PointerValue<'ctx> {
        let i64t = e.ctx().i64_type();
        if let Some(t) = self.table {
            let ptr_t = e.ctx().ptr_type(inkwell::AddressSpace::default());
            let slot = unsafe { e.b.build_in_bounds_gep(ptr_t, t, &[e.resize(w, 64, false)], "").unwrap() };
            let row = e.b.build_load(ptr_t, slot, "word.row").unwrap().into_pointer_value();
            return unsafe { e.b.build_in_bounds_gep(e.ctx().i32_type(), row, &[e.resize(other, 64, false)], "").unwrap() };
        }
        let dl = e.b.build_int_sub(e.resize(other, 64, false), e.resize(self.lane, 64, false), "").unwrap();
        let off = e.b.build_int_mul(dl, self.frame_size, "").unwrap();
        let off = e.b.build_int_add(off, i64t.const_int(self.area as u64, false), "").unwrap();
        let off = e.b.build_int_add(off, e.b.build_int_mul(e.resize(w, 64, false), self.word_stride, "").unwrap(), "").unwrap();
        unsafe { e.b.build_gep(e.ctx().i8_type(), self.frame_t, &[off], "").unwrap() }
    }
}

pub(super) fn exchange<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, words: &[IntValue<'ctx>]) -> Option<Exchange<'ctx>> {
    let ctx = e.ctx();
    let (i32t, i64t, i8t) = (ctx.i32_type(), ctx.i64_type(), ctx.i8_type());
    // 64-bit words go over as two 32-bit words, low half first.
    let words: Vec<IntValue<'ctx>> = words
        .iter()
        .flat_map(|&w| {
            if w.get_type().get_bit_width() == 64 {
                let hi = e.b.build_right_shift(w, i64t.const_int(32, false), false, "").unwrap();
                vec![e.b.build_int_truncate(w, i32t, "").unwrap(), e.b.build_int_truncate(hi, i32t, "").unwrap()]
            } else {
                vec![w]
            }
        })
        .collect();
    if let Some(WarpExchange::Gather { area, lane }) = e.warp_exchange.clone() {
        // The warp path: this lane's words to its column of the area (`Exchange::of_warp`);
        // the results come in the next loop.
        let lane_off = lane_area_offset(e, lane);
        for (k, w) in words.iter().enumerate() {
            let byte = e.b.build_int_add(lane_off, i64t.const_int(k as u64 * 4 * LANES as u64, false), "").unwrap();
            let p = unsafe { e.b.build_in_bounds_gep(i8t, area, &[byte], "").unwrap() };
            e.b.build_store(p, *w).unwrap();
        }
        return None;
    }
    // The whole warp must exist: (linear tid | 31) < number of threads.
    let nt: Vec<IntValue> = (0..3).map(|k| e.load_cta_u32(abi::field::NTID, Some(k))).collect();
    let n = e.b.build_int_mul(e.b.build_int_mul(nt[0], nt[1], "").unwrap(), nt[2], "").unwrap();
    let tid = e.linear_tid();
    let last = e.b.build_or(tid, i32t.const_int(31, false), "").unwrap();
    let partial = e.b.build_int_compare(IntPredicate::UGE, last, n, "").unwrap();
    let (bad, ok) = (ctx.append_basic_block(e.f, "partial.warp"), ctx.append_basic_block(e.f, "whole.warp"));
    e.b.build_conditional_branch(partial, bad, ok).unwrap();
    e.b.position_at_end(bad);
    e.abort_with(abi::STATUS_PARTIAL_WARP);
    e.b.build_unconditional_branch(ok).unwrap();
    e.b.position_at_end(ok);
    let area = {
        let st = e.sync.as_mut().unwrap();
        *st.exchange_area.get_or_insert_with(|| {
            let off = (st.frame_size + 15) / 16 * 16;
            st.frame_size = off + 4 * 24;
            off
        })
    };
    let mut byte = area as u64;
    for w in &words {
        let frame_t = e.sync.as_ref().unwrap().frame_t;
        let p = unsafe { e.b.build_in_bounds_gep(i8t, frame_t, &[i64t.const_int(byte, false)], "").unwrap() };
        e.b.build_store(p, *w).unwrap();
        byte += (w.get_type().get_bit_width() / 8) as u64;
    }
    assert!(byte - area as u64 <= 4 * 24, "exchange area overflow");
    sync_point(e, abi::SYNC_WARP, &[(slot::MASK, i32t.const_int(u32::MAX as u64, false))]);
    let st = e.sync.as_ref().unwrap();
    let (frame_t, fsg) = (st.frame_t, st.frame_size_global);
    let frame_size = e.b.build_load(i64t, fsg.as_pointer_value(), "").unwrap().into_int_value();
    Some(Exchange { table: None, frame_t, area, frame_size, word_stride: i64t.const_int(4, false), lane: e.lane_id() })
}

/// Byte offset of lane `lane`'s first word in the warp path's exchange array.
fn lane_area_offset<'ctx>(e: &FnEmitter<'ctx, '_, '_>, lane: IntValue<'ctx>) -> IntValue<'ctx> {
    let i64t = e.ctx().i64_type();
    e.b.build_int_mul(e.resize(lane, 64, false), i64t.const_int(4, false), "").unwrap()
}

pub(super) fn exchange_end(e: &mut FnEmitter<'_, '_, '_>) {
    if e.warp_exchange.is_some() {
        return;
    }
    let full = e.ctx().i32_type().const_int(u32::MAX as u64, false);
    sync_point(e, abi::SYNC_WARP, &[(slot::MASK, full)]);
}

/// `ldmatrix`/`stmatrix`: the number of matrices (`.x1/.x2/.x4`), `.trans`, and the state
/// space of the row addresses (`.shared`, else generic).
fn ldst_matrix_form(i: &Instr) -> (u32, bool, Option<StateSpace>) {
    let num = if i.has_mod("x4") { 4 } else if i.has_mod("x2") { 2 } else { 1 };
    (num, i.has_mod("trans"), if i.has_mod("shared") { Some(StateSpace::Shared) } else { None })
}

/// PTX ISA 8.x 9.7.14.5.16 stmatrix (PTX 7.8, sm_90):
/// `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16 [p], r`, the inverse of
/// `ldmatrix`: the warp stores `num` 8x8 matrices of 16-bit elements. Lanes 8i..8i+7 give
/// the addresses of the 8 rows of matrix i (the other lanes' addresses are not used); lane l
/// holds in register i the elements (l / 4, 2 (l % 4) + {0, 1}) of matrix i, low half first,
/// or with .trans the elements (2 (l % 4) + {0, 1}, l / 4) (the matrix is stored transposed).
/// A warp collective like `ldmatrix`: the addresses and registers go through the exchange,
/// then lane 8i + r writes row r of matrix i, 16 bytes at its own address.
///
/// `stmatrix.sync.aligned.m16n8.{x1,x2,x4}.trans{.shared}.b8 [p], r` (PTX 8.6, sm_100a): each
/// 16 x 8 matrix of bytes is held as the 16 x 8 fragment (lane l, byte b: row l / 4 + 8 (b / 2),
/// column 2 (l % 4) + b % 2) and stored transposed, as 8 rows of 16 bytes (row c, byte r of
/// element (r, c)) at the addresses of lanes 8i..8i+7. The ISA draws this mapping; it is the
/// one CUTLASS's `SM100_U8x16_STSM_T` copy traits give the instruction (and TVM's model of it),
/// and the inverse of the `ldmatrix .m16n16 .trans .b8` fragment rows.
fn stmatrix<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let bytes = i.has_mod("m16n8");
    if bytes != i.has_mod("b8") || (bytes && !i.has_mod("trans")) {
        return Err(e.err(i.opcode.span, "`stmatrix` is .m8n8 with .b16 elements, or .m16n8 .trans with .b8 elements"));
    }
    let (num, trans, space) = ldst_matrix_form(i);
    let regs = regs_of(e, &i.operands[1], num, "stmatrix source")?;
    let ctx = e.ctx();
    let (i32t, i64t, i16t) = (ctx.i32_type(), ctx.i64_type(), ctx.i16_type());
    if e.m.nvptx && bytes {
        return Err(e.err(i.opcode.span, "`stmatrix .m16n8 .b8` does not reach LLVM 19's NVPTX backend, which has no sm_100 target"));
    }
    if e.m.nvptx {
        // LLVM 19 has no stmatrix intrinsic: inline PTX, the address as a 64-bit register of
        // its state space.
        let p = e.address(&i.operands[0], space)?;
        let mut args: Vec<inkwell::values::BasicValueEnum> = vec![e.b.build_ptr_to_int(p, i64t, "").unwrap().into()];
        for r in regs {
            args.push(e.read_int(r, Type::B32)?.into());
        }
        let list: Vec<String> = (1..=num).map(|k| format!("${k}")).collect();
        let asm = format!("stmatrix.sync.aligned.m8n8.x{num}{}{}.b16 [$0], {{{}}};", if trans { ".trans" } else { "" }, if space.is_some() { ".shared" } else { "" }, list.join(", "));
        let constraints = format!("l{},~{{memory}}", ",r".repeat(num as usize));
        super::nvvm::inline_ptx(e, None, &asm, &constraints, &args);
        return Ok(());
    }
    if e.sync.is_none() && e.warp_exchange.is_none() {
        return Err(e.err(i.opcode.span, "internal error: `stmatrix` outside a kernel's scheduler"));
    }
    let ex = match e.warp_exchange.clone() {
        Some(WarpExchange::Compute { area, lane }) => Exchange::of_warp(e, area, lane),
        _ => {
            let p = e.address(&i.operands[0], space)?;
            let mut words = vec![e.b.build_ptr_to_int(p, i64t, "").unwrap()];
            for r in regs {
                words.push(e.read_int(r, Type::B32)?);
            }
            match exchange(e, &words) {
                Some(ex) => ex,
                None => return Ok(()),
            }
        }
    };
    let lane = ex.lane;
    let c32 = |v: u64| i32t.const_int(v, false);
    // The address is words 0 and 1 of each lane, register k is word 2 + k.
    // This lane writes row r of matrix mi, if it gives one of the addresses.
    let mi = e.b.build_right_shift(lane, c32(3), false, "").unwrap();
    let r = e.b.build_and(lane, c32(7), "").unwrap();
    let store = ctx.append_basic_block(e.f, "stmatrix.row");
    let done = ctx.append_basic_block(e.f, "stmatrix.done");
    let gives = e.b.build_int_compare(IntPredicate::ULT, mi, c32(num as u64), "").unwrap();
    e.b.build_conditional_branch(gives, store, done).unwrap();
    e.b.position_at_end(store);
    let addr = ex.word64(e, lane, 0);
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    // The checking mode: this lane writes its row's 16 bytes.
    let row_p = e.b.build_int_to_ptr(addr, ptr_t, "").unwrap();
    e.check_access(row_p, 16, true, space, false, false);
    // Register mi of lane `src` (mi is this lane's matrix: a register index per lane).
    let reg_of = |e: &FnEmitter<'ctx, '_, '_>, src: IntValue<'ctx>| {
        let w = e.b.build_int_add(mi, c32(2), "").unwrap();
        e.b.build_load(i32t, ex.word(e, src, w), "").unwrap().into_int_value()
    };
    if bytes {
        // Byte x of row r is fragment element (x, r): lane 4 (x % 8) + r / 2, byte
        // r % 2 + 2 (x / 8) of its register mi.
        let half = e.b.build_right_shift(r, c32(1), false, "").unwrap();
        let odd = e.b.build_and(r, c32(1), "").unwrap();
        let i8t = ctx.i8_type();
        for x in 0..16u64 {
            let src = e.b.build_int_add(c32(4 * (x % 8)), half, "").unwrap();
            let sh = e.b.build_int_mul(e.b.build_int_add(odd, c32(2 * (x / 8)), "").unwrap(), c32(8), "").unwrap();
            let v = e.b.build_right_shift(reg_of(e, src), sh, false, "").unwrap();
            let v = e.b.build_int_truncate(v, i8t, "").unwrap();
            let a = e.b.build_int_add(addr, i64t.const_int(x, false), "").unwrap();
            e.b.build_store(e.b.build_int_to_ptr(a, ptr_t, "").unwrap(), v).unwrap();
        }
    } else if !trans {
        // Row r is (r, 2q), (r, 2q + 1) for q = 0..3: register mi of lanes 4r + q, whole.
        for q in 0..4u64 {
            let src = e.b.build_int_add(e.b.build_int_mul(r, c32(4), "").unwrap(), c32(q), "").unwrap();
            let v = reg_of(e, src);
            let a = e.b.build_int_add(addr, i64t.const_int(4 * q, false), "").unwrap();
            e.b.build_store(e.b.build_int_to_ptr(a, ptr_t, "").unwrap(), v).unwrap();
        }
    } else {
        // Element c of row r is fragment element (c, r): lane 4c + r / 2, half r % 2.
        let sh = e.b.build_int_mul(e.b.build_and(r, c32(1), "").unwrap(), c32(16), "").unwrap();
        let half = e.b.build_right_shift(r, c32(1), false, "").unwrap();
        for c in 0..8u64 {
            let src = e.b.build_int_add(c32(4 * c), half, "").unwrap();
            let v = e.b.build_right_shift(reg_of(e, src), sh, false, "").unwrap();
            let v = e.b.build_int_truncate(v, i16t, "").unwrap();
            let a = e.b.build_int_add(addr, i64t.const_int(2 * c, false), "").unwrap();
            e.b.build_store(e.b.build_int_to_ptr(a, ptr_t, "").unwrap(), v).unwrap();
        }
    }
    e.b.build_unconditional_branch(done).unwrap();
    e.b.position_at_end(done);
    exchange_end(e);
    Ok(())
}

/// ldmatrix (PTX ISA 6.5, sm_75): `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16
/// r, [p]`. Lanes 8i..8i+7 give the addresses of the 8 rows (8 b16 each) of matrix i; lane l
/// receives in register i the elements (l / 4, 2 (l % 4) + {0, 1}) of matrix i, or with .trans
/// (2 (l % 4) + {0, 1}, l / 4). A warp collective: the row addresses go through the thread
/// frames between two warp barriers, like the fragments of `mma`.
///
/// `ldmatrix.sync.aligned.m16n16.{x1,x2}.trans{.shared}.b8 r, [p]` (PTX 8.6, sm_100a): matrix
/// i is 16 rows of 16 bytes at the addresses of lanes 16i..16i+15, and lane l receives in
/// registers 2i + j the bytes (4 (l % 4) + c, l / 4 + 8 j), c = 0..3 from the low byte: the
/// transposed matrix's 16 x 16 fragment (row l / 4 + 8 j, columns 4 (l % 4)..+3). The ISA
/// draws this mapping; it is the one CUTLASS's `SM100_U8x8_LDSM_T`/`SM100_U8x16_LDSM_T` copy
/// traits give, once the byte exchange those copies add after the instruction is undone.
/// The unpacking forms (`.b8x16` from `.b6x16_p32`/`.b4x16_p64`) are not supported yet.
fn ldmatrix<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    if i.has_mod("b8x16") || i.has_mod("m8n16") {
        return Err(e.err(i.opcode.span, "`ldmatrix` that unpacks 6- or 4-bit elements (.b8x16 from .b6x16_p32 or .b4x16_p64) is not supported by ptxr yet"));
    }
    let wide = i.has_mod("m16n16");
    let (num, trans, space) = ldst_matrix_form(i);
    if wide != i.has_mod("b8") || (wide && (!trans || num == 4)) {
        return Err(e.err(i.opcode.span, "`ldmatrix` is .m8n8 with .b16 elements, or .m16n16 .x1/.x2 .trans with .b8 elements"));
    }
    let regs = regs_of(e, &i.operands[0], if wide { 2 * num } else { num }, "ldmatrix destination")?;
    let ctx = e.ctx();
    let (i32t, i64t, i16t) = (ctx.i32_type(), ctx.i64_type(), ctx.i16_type());
    if e.m.nvptx && wide {
        return Err(e.err(i.opcode.span, "`ldmatrix .m16n16 .b8` does not reach LLVM 19's NVPTX backend, which has no sm_100 target"));
    }
    // (On the warp path the lane loop that computes the results has only them bound.)
    let p = match e.warp_exchange.clone() {
        Some(WarpExchange::Compute { .. }) => None,
        _ => Some(e.address(&i.operands[1], space)?),
    };
    if let (true, Some(p)) = (e.m.nvptx, p) {
        let name = format!("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{num}{}.b16", if trans { ".trans" } else { "" });
        let res = e.try_intrinsic(&name, &[p.get_type().into()], &[p.into()]).or_else(|| e.try_intrinsic(&name, &[], &[p.into()]));
        let Some(res) = res.and_then(|c| c.try_as_basic_value().basic()) else {
            return Err(e.err(i.opcode.span, format!("LLVM has no intrinsic `{name}` for this form")));
        };
        for (k, r) in regs.iter().enumerate() {
            let v = if res.is_struct_value() { e.b.build_extract_value(res.into_struct_value(), k as u32, "").unwrap() } else { res };
            e.write(r, Type::B32, v)?;
        }
        return Ok(());
    }
    if e.sync.is_none() && e.warp_exchange.is_none() {
        return Err(e.err(i.opcode.span, "internal error: `ldmatrix` outside a kernel's scheduler"));
    }
    // Each lane's row address, as a host address.
    let ex = match (e.warp_exchange.clone(), p) {
        (Some(WarpExchange::Compute { area, lane }), _) => Exchange::of_warp(e, area, lane),
        (_, Some(p)) => match exchange(e, &[e.b.build_ptr_to_int(p, i64t, "").unwrap()]) {
            Some(ex) => ex,
            None => return Ok(()),
        },
        (_, None) => return Err(e.err(i.opcode.span, "internal error: `ldmatrix` without its address")),
    };
    let lane = ex.lane;
    // Row `row` of matrix `mi`: the address lane 8 mi + row (16 mi + row for .m16n16) stored.
    let rows = if wide { 16 } else { 8 };
    let row_addr = |e: &FnEmitter<'ctx, '_, '_>, mi: u32, row: IntValue<'ctx>| {
        let src = e.b.build_int_add(row, i32t.const_int(rows * mi as u64, false), "").unwrap();
        ex.word64(e, src, 0)
    };
    let q = e.b.build_and(lane, i32t.const_int(3, false), "").unwrap();
    let g = e.b.build_right_shift(lane, i32t.const_int(2, false), false, "").unwrap();
    let mut vals = Vec::new();
    for mi in 0..if wide { 0 } else { num } {
        let word = if !trans {
            // elements (g, 2q), (g, 2q + 1): one 32-bit load from row g
            let a = row_addr(e, mi, g);
            let a = e.b.build_int_add(a, e.resize(e.b.build_int_mul(q, i32t.const_int(4, false), "").unwrap(), 64, false), "").unwrap();
            let p = e.b.build_int_to_ptr(a, ctx.ptr_type(inkwell::AddressSpace::default()), "").unwrap();
            e.check_access(p, 4, false, space, false, false);
            e.b.build_load(i32t, p, "").unwrap().into_int_value()
        } else {
            // elements (2q, g) and (2q + 1, g): column g of rows 2q and 2q + 1
            let col = e.resize(e.b.build_int_mul(g, i32t.const_int(2, false), "").unwrap(), 64, false);
            let r0 = e.b.build_int_mul(q, i32t.const_int(2, false), "").unwrap();
            let r1 = e.b.build_int_add(r0, i32t.const_int(1, false), "").unwrap();
            let mut halves = Vec::new();
            for r in [r0, r1] {
                let a = e.b.build_int_add(row_addr(e, mi, r), col, "").unwrap();
                let p = e.b.build_int_to_ptr(a, ctx.ptr_type(inkwell::AddressSpace::default()), "").unwrap();
                e.check_access(p, 2, false, space, false, false);
                let h = e.b.build_load(i16t, p, "").unwrap().into_int_value();
                halves.push(e.resize(h, 32, false));
            }
            let hi = e.b.build_left_shift(halves[1], i32t.const_int(16, false), "").unwrap();
            e.b.build_or(halves[0], hi, "").unwrap()
        };
        vals.push(word);
    }
    for mi in 0..if wide { num } else { 0 } {
        // register 2 mi + j: bytes (4q + c, g + 8j), c = 0..3
        for j in 0..2u64 {
            let col = e.resize(e.b.build_int_add(g, i32t.const_int(8 * j, false), "").unwrap(), 64, false);
            let mut word = i32t.const_zero();
            for c in 0..4u64 {
                let r = e.b.build_int_add(e.b.build_int_mul(q, i32t.const_int(4, false), "").unwrap(), i32t.const_int(c, false), "").unwrap();
                let a = e.b.build_int_add(row_addr(e, mi, r), col, "").unwrap();
                let p = e.b.build_int_to_ptr(a, ctx.ptr_type(inkwell::AddressSpace::default()), "").unwrap();
                e.check_access(p, 1, false, space, false, false);
                let byte = e.b.build_load(ctx.i8_type(), p, "").unwrap().into_int_value();
                let byte = e.b.build_left_shift(e.resize(byte, 32, false), i32t.const_int(8 * c, false), "").unwrap();
                word = e.b.build_or(word, byte, "").unwrap();
            }
            vals.push(word);
        }
    }
    for (r, v) in regs.iter().zip(vals) {
        e.write(r, Type::B32, v.into())?;
    }
    exchange_end(e);
    Ok(())
}
