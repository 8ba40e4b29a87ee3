//! Warpgroup-level matrix multiply-accumulate (PTX ISA 8.x 9.7.15, sm_90a): `wgmma.fence`,
//! `wgmma.commit_group`, `wgmma.wait_group` and `wgmma.mma_async`.
//!
//! A warpgroup is four consecutive warps whose first warp's rank is a multiple of 4. One
//! `wgmma.mma_async.m64nNkK` computes D (64 x N) = A (64 x K) * B (K x N) + D: warp `w` of the
//! warpgroup (rank % 4) holds rows 16w .. 16w+15 of A (when A is in registers) and of D. D's
//! fragment is that of `mma.m16n8` repeated over N / 8 (9.7.15.5.1): with g = lane / 4 and
//! t = lane % 4, element i of a lane is row 16w + g + 8 ((i / 2) % 2), column
//! 8 (i / 4) + 2t + i % 2 (two per register for .f16 D). A in registers is the A fragment of
//! `mma.m16n8k16` (k8 for .tf32, k32 for 8-bit types).
//!
//! A and B in shared memory are given by 64-bit matrix descriptors (9.7.15.5.1): start address
//! (bits 0-13), leading-dimension byte offset (16-29) and stride-dimension byte offset (32-45),
//! each in units of 16 bytes, the matrix base offset (49-51) and the swizzle mode (62-63:
//! none, 128, 64 or 32 bytes). The matrices are made of core matrices of 8 rows of 16 bytes.
//! For a K-major operand (row r of A along M, or of B along N; K contiguous), element (r, k)
//! at byte `kb = k * size` lies at
//! - no swizzle: (r % 8) * 16 + (r / 8) * SBO + (kb / 16) * LBO + kb % 16;
//! - swizzle of W bytes: (r % 8) * W + (r / 8) * SBO + kb (the LBO is not used);
//!
//! and for an MN-major operand (the transposed .f16/.bf16 forms; `mb = r * size`)
//! - no swizzle: mb % 16 + (mb / 16) * SBO + (k % 8) * 16 + (k / 8) * LBO;
//! - swizzle of W bytes: mb % W + (mb / W) * LBO + (k % 8) * W + (k / 8) * SBO;
//!
//! from the start address, after which a swizzle XORs the 16-byte chunk (address bits 4..)
//! with the 128-byte row (bits 7..) less the base offset, W / 16 chunks wide. These are the
//! canonical layouts of the ISA's descriptor section; an H200 agrees with them on every case
//! of `tests/filetests/warp/wgmma.ptx` (written from the GPU by `ref/wgmma_gpu.py`, whose
//! independent model is the same definition), and gives +0 for every zero result.
//!
//! On a CPU the asynchronous proxy needs nothing: `wgmma.mma_async` computes its result when
//! it is issued (the ISA forbids touching D, or the shared memory it reads, before the
//! `wgmma.wait_group` that covers it), and `fence`, `commit_group` and `wait_group` do
//! nothing. With A and B from shared memory every lane computes its own D elements; with A
//! in registers the lanes of a warp exchange A's fragments first (a warp matrix collective,
//! as for `mma.sync`). The products are one internal function per form.
//!
//! Sparse `wgmma.mma_async.sp` (9.7.15.6; K twice the dense K): A holds only the kept elements
//! of each row (64 x K/2, in shared memory as any A or in the registers of the dense fragment),
//! and each warp's metadata places them as `mma.sp`'s does (the ISA draws the same figures;
//! `ops_wmma::mma_sp`): the metadata travels through the warp exchange, so a sparse A from
//! shared memory is a warp collective too.

use super::func::{FnEmitter, R};
use super::ops_wmma::{acc_bits, exchange, exchange_end, k_loop, regs_of, Exchange, WarpExchange};
use crate::syntax::ast::{Instr, Operand, Type};
use inkwell::values::{BasicValueEnum, FloatValue, FunctionValue, IntValue};
use inkwell::IntPredicate;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ty {
    F16,
    BF16,
    TF32,
    E4M3,
    E5M2,
    S8,
    U8,
    /// Single bits (`.and.popc`), handled a byte (8 elements of K) at a time.
    B1,
    F32,
    S32,
}

impl Ty {
    fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "f16" => Ty::F16,
            "bf16" => Ty::BF16,
            "tf32" => Ty::TF32,
            "e4m3" => Ty::E4M3,
            "e5m2" => Ty::E5M2,
            "s8" => Ty::S8,
            "u8" => Ty::U8,
            "b1" => Ty::B1,
            "f32" => Ty::F32,
            "s32" => Ty::S32,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Ty::F16 => "f16",
            Ty::BF16 => "bf16",
            Ty::TF32 => "tf32",
            Ty::E4M3 => "e4m3",
            Ty::E5M2 => "e5m2",
            Ty::S8 => "s8",
            Ty::U8 => "u8",
            Ty::B1 => "b1",
            Ty::F32 => "f32",
            Ty::S32 => "s32",
        }
    }
    /// Bytes of one multiplicand element.
    fn size(self) -> u32 {
        match self {
            Ty::F16 | Ty::BF16 => 2,
            Ty::TF32 | Ty::F32 | Ty::S32 => 4,
            _ => 1,
        }
    }
    fn int(self) -> bool {
        matches!(self, Ty::S8 | Ty::U8 | Ty::B1)
    }
}

/// One form of `wgmma.mma_async`: everything its products depend on.
#[derive(Clone, Copy)]
struct Form {
    d: Ty,
    a: Ty,
    b: Ty,
    n: u32,
    k: u32,
    /// A in registers (else a descriptor).
    reg_a: bool,
    /// MN-major A / B (`imm-trans-a`/`imm-trans-b` = 1).
    trans_a: bool,
    trans_b: bool,
    /// `imm-scale-a`/`imm-scale-b` = -1.
    neg_a: bool,
    neg_b: bool,
    sat: bool,
    /// `wgmma.mma_async.sp` (9.7.15.6): A holds the kept elements of each chunk of `width`
    /// (`kept` of them), K / 2 columns; the metadata (operand 3) of the threads the selector
    /// (operand 4) names places them, as for `mma.sp`.
    sparse: Option<(u32, u32, u32)>,
}

impl Form {
    /// Operands before scale-d: d, a, b (and the metadata and selector of `.sp`).
    fn scale_at(&self) -> usize {
        if self.sparse.is_some() {
            5
        } else {
            3
        }
    }
    fn nregs(&self) -> u32 {
        if self.d == Ty::F16 {
            self.n / 4
        } else {
            self.n / 2
        }
    }
    fn key(&self) -> String {
        format!(
            "{}.{}.{}.n{}k{}{}{}{}{}{}{}",
            self.d.name(),
            self.a.name(),
            self.b.name(),
            self.n,
            self.k,
            if self.reg_a { ".rega" } else { "" },
            if self.trans_a { ".ta" } else { "" },
            if self.trans_b { ".tb" } else { "" },
            if self.neg_a { ".na" } else { "" },
            if self.neg_b { ".nb" } else { "" },
            if self.sat { ".sat" } else { "" }
        ) + &self.sparse.map_or(String::new(), |(_, _, sel)| format!(".sp{sel}"))
    }
}

pub fn emit<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<bool> {
    if i.opcode.name != "wgmma" {
        return Ok(false);
    }
    match i.mods.first().copied() {
        // PTX ISA 8.x 9.7.15.5.3-5: the proxy fence and the groups order asynchronous work on
        // a GPU; here wgmma.mma_async completes when it is issued.
        Some("fence") | Some("commit_group") => {
            if e.m.nvptx {
                let asm = format!("wgmma.{}.sync.aligned;", i.mods[0]);
                super::nvvm::inline_ptx(e, None, &asm, "~{memory}", &[]);
            }
            Ok(true)
        }
        Some("wait_group") => {
            let n = imm_u64(e, &i.operands[0], "the group count of `wgmma.wait_group`")?;
            if e.m.nvptx {
                let asm = format!("wgmma.wait_group.sync.aligned {n};");
                super::nvvm::inline_ptx(e, None, &asm, "~{memory}", &[]);
            }
            Ok(true)
        }
        Some("mma_async") => mma_async(e, i).map(|_| true),
        _ => Err(e.err(i.opcode.span, "`wgmma` is wgmma.fence, wgmma.commit_group, wgmma.wait_group or wgmma.mma_async")),
    }
}

pub(super) fn imm_u64<'a>(e: &FnEmitter, op: &'a Operand<'a>, what: &str) -> R<u64> {
    use crate::syntax::eval::{eval, Const};
    let Operand::Imm(x) = op else { return Err(e.err(op.span(), format!("{what} is an immediate"))) };
    match eval(x, &|_| None).map_err(|er| e.err(er.span, er.msg))? {
        Const::S64(v) => Ok(v as u64),
        Const::U64(v) => Ok(v),
        _ => Err(e.err(op.span(), format!("{what} is an integer"))),
    }
}

/// The form of `i` from its modifiers and immediates, with its operands checked.
fn form_of<'a>(e: &FnEmitter, i: &'a Instr<'a>) -> R<Form> {
    let err = |msg: String| Err(e.err(i.opcode.span, msg));
    let sparse = i.has_mod("sp");
    let shape = i.mods.iter().find(|m| m.starts_with("m64n")).copied().unwrap_or("");
    let (n, k) = match shape.strip_prefix("m64n").and_then(|s| s.split_once('k')) {
        Some((n, k)) => (n.parse::<u32>().unwrap_or(0), k.parse::<u32>().unwrap_or(0)),
        None => return err("`wgmma.mma_async` needs a shape .m64nNkK".into()),
    };
    let tys: Vec<&str> = i.mods.iter().copied().filter(|m| Ty::parse(m).is_some()).collect();
    let [d, a, b] = tys[..] else { return err("`wgmma.mma_async` takes .dtype.atype.btype".into()) };
    let (d, a, b) = (Ty::parse(d).unwrap(), Ty::parse(a).unwrap(), Ty::parse(b).unwrap());
    // PTX ISA 8.x 9.7.15.2: the type combinations and their K.
    let (ok, dense_k) = match a {
        Ty::F16 => (b == Ty::F16 && matches!(d, Ty::F16 | Ty::F32), 16),
        Ty::BF16 => (b == Ty::BF16 && d == Ty::F32, 16),
        Ty::TF32 => (b == Ty::TF32 && d == Ty::F32, 8),
        Ty::E4M3 | Ty::E5M2 => (matches!(b, Ty::E4M3 | Ty::E5M2) && matches!(d, Ty::F16 | Ty::F32), 32),
        Ty::S8 | Ty::U8 => (matches!(b, Ty::S8 | Ty::U8) && d == Ty::S32, 32),
        // .b1.b1.and.popc: K is 256 bits, 32 bytes
        Ty::B1 => (b == Ty::B1 && d == Ty::S32 && i.has_mod("and") && i.has_mod("popc"), 256),
        _ => (false, 0),
    };
    if !ok || (sparse && a == Ty::B1) {
        return err(format!("`wgmma.mma_async{}` has no form .{}.{}.{}{}", if sparse { ".sp" } else { "" }, d.name(), a.name(), b.name(), if a == Ty::B1 { " (single bits are .s32.b1.b1.and.popc, dense)" } else { "" }));
    }
    // a sparse A doubles K (9.7.15.6.1)
    let want_k = if sparse { 2 * dense_k } else { dense_k };
    let n_ok = if a.int() { n == 8 || n == 16 || n == 24 || (n % 16 == 0 && (32..=256).contains(&n)) } else { n % 8 == 0 && (8..=256).contains(&n) };
    if k != want_k || !n_ok {
        return err(format!("`.{shape}` is not a shape of .{} multiplicands (m64nNk{want_k}, N = {})", a.name(), if a.int() { "8, 16, 24, 32, 48, ..., 256" } else { "8, 16, ..., 256" }));
    }
    // (the products count K in elements of `a.size()` bytes: 32 bytes of bits for .b1)
    let k = if a == Ty::B1 { 32 } else { k };
    let sat = i.has_mod("satfinite");
    if sat && !matches!(a, Ty::S8 | Ty::U8) {
        return err("`.satfinite` goes with the integer forms of `wgmma.mma_async`".into());
    }
    let reg_a = matches!(i.operands.get(1), Some(Operand::Vector(..)));
    // d, a, b, scale-d, then imm-scale-a, imm-scale-b (floating-point forms), imm-trans-a (A
    // from a descriptor) and imm-trans-b (.f16/.bf16 forms).
    let float = !a.int();
    let trans = matches!(a, Ty::F16 | Ty::BF16);
    let sp = if sparse { 2 } else { 0 };
    let want = 4 + sp + if float { 2 } else { 0 } + if trans { if reg_a { 1 } else { 2 } } else { 0 };
    if i.operands.len() != want {
        return err(format!(
            "`wgmma.mma_async{}` .{}{} takes {want} operands: d, {}, b-desc, {}scale-d{}{}",
            if sparse { ".sp" } else { "" },
            a.name(),
            if reg_a { " with A in registers" } else { "" },
            if reg_a { "{a}" } else { "a-desc" },
            if sparse { "sp-meta, sp-sel, " } else { "" },
            if float { ", imm-scale-a, imm-scale-b" } else { "" },
            if trans { if reg_a { ", imm-trans-b" } else { ", imm-trans-a, imm-trans-b" } } else { "" }
        ));
    }
    let sparse = if sparse {
        let (width, kept) = if a == Ty::TF32 { (2, 1) } else { (4, 2) };
        let threads = k / width / 4;
        let sel = imm_u64(e, &i.operands[4], "the sparsity selector")?;
        if (sel + 1) * threads as u64 > 4 {
            return Err(e.err(i.operands[4].span(), format!("sparsity selector {sel}: {} here (9.7.15.6.1)", if threads == 2 { "0 (threads 0 and 1 of each group of four) or 1 (threads 2 and 3)" } else { "0 (every thread of each group of four)" })));
        }
        Some((width, kept, sel as u32))
    } else {
        None
    };
    let mut f = Form { d, a, b, n, k, reg_a, trans_a: false, trans_b: false, neg_a: false, neg_b: false, sat, sparse };
    if float {
        for (slot, idx) in [(&mut f.neg_a, 4 + sp), (&mut f.neg_b, 5 + sp)] {
            match imm_u64(e, &i.operands[idx], "imm-scale")? as i64 {
                1 => {}
                -1 => *slot = true,
                _ => return Err(e.err(i.operands[idx].span(), "imm-scale-a and imm-scale-b are 1 or -1")),
            }
        }
    }
    if trans {
        let slots: Vec<(usize, bool)> = if reg_a { vec![(6 + sp, true)] } else { vec![(6 + sp, false), (7 + sp, true)] };
        for (idx, is_b) in slots {
            let v = imm_u64(e, &i.operands[idx], "imm-trans")?;
            if v > 1 {
                return Err(e.err(i.operands[idx].span(), "imm-trans-a and imm-trans-b are 0 or 1"));
            }
            if is_b {
                f.trans_b = v == 1;
            } else {
                f.trans_a = v == 1;
            }
        }
    }
    Ok(f)
}

/// PTX ISA 8.x 9.7.15.5.2 wgmma.mma_async.
fn mma_async<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>) -> R<()> {
    let f = form_of(e, i)?;
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let d_regs = regs_of(e, &i.operands[0], f.nregs(), "D")?;
    let a_regs = if f.reg_a { Some(regs_of(e, &i.operands[1], 4, "A")?) } else { None };
    let dreg_ty = if f.d == Ty::F32 { Type::F32 } else { Type::B32 };
    if e.m.nvptx {
        return nvptx(e, i, &f, d_regs, a_regs);
    }
    let exchanged = f.reg_a || f.sparse.is_some();
    if e.sync.is_none() && e.warp_exchange.is_none() && exchanged {
        return Err(e.err(i.opcode.span, "internal error: `wgmma.mma_async` outside a kernel's scheduler"));
    }
    // A's fragments (A in registers) and the sparse metadata through the warp exchange, as
    // mma.sync's.
    let ex: Option<Exchange<'ctx>> = match (exchanged, e.warp_exchange.clone()) {
        (false, _) => None,
        (true, Some(WarpExchange::Compute { area, lane })) => Some(Exchange::of_warp(e, area, lane)),
        (true, _) => {
            let mut words = Vec::new();
            for r in a_regs.unwrap_or(&[]) {
                words.push(e.read_int(r, Type::B32)?);
            }
            if f.sparse.is_some() {
                words.push(e.read_int(&i.operands[3], Type::B32)?);
            }
            match exchange(e, &words) {
                Some(ex) => Some(ex),
                None => return Ok(()),
            }
        }
    };
    let smem = e.own_shared_base();
    let limit = e.load_cta_u32(super::abi::field::TOTAL_SMEM, None);
    let adesc = if f.reg_a { i64t.const_zero() } else { e.read_int(&i.operands[1], Type::B64)? };
    let bdesc = e.read_int(&i.operands[2], Type::B64)?;
    let scale_op = &i.operands[f.scale_at()];
    let scale_d = match scale_op {
        Operand::Imm(_) => i32t.const_int(imm_u64(e, scale_op, "scale-d")? & 1, false),
        op => {
            let p = e.read_int(op, Type::Pred)?;
            e.resize(p, 32, false)
        }
    };
    let tid = e.linear_tid();
    let (area0, lane_stride, word_stride) = match &ex {
        Some(ex) => (ex.word(e, i32t.const_zero(), i32t.const_zero()), ex.frame_size, ex.word_stride),
        None => (e.ctx().ptr_type(inkwell::AddressSpace::default()).const_null(), i64t.const_zero(), i64t.const_zero()),
    };
    // D in, D out: this lane's registers.
    let out_t = i32t.array_type(f.nregs());
    let d_p = e.alloca_b.build_alloca(out_t, "wgmma.d").unwrap();
    for (k, r) in d_regs.iter().enumerate() {
        let v = e.read_int(r, dreg_ty)?;
        let p = unsafe { e.b.build_in_bounds_gep(i32t, d_p, &[i32t.const_int(k as u64, false)], "").unwrap() };
        e.b.build_store(p, v).unwrap();
    }
    let name = format!("__ptxr_wgmma.{}", f.key());
    let helper = match e.m.module.get_function(&name) {
        Some(h) => h,
        None => products(e, &name, &f),
    };
    let args: Vec<inkwell::values::BasicMetadataValueEnum> =
        vec![smem.into(), limit.into(), adesc.into(), bdesc.into(), area0.into(), lane_stride.into(), word_stride.into(), tid.into(), scale_d.into(), d_p.into()];
    let bad = e.b.build_call(helper, &args, "").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
    let bad = e.b.build_int_compare(IntPredicate::NE, bad, i32t.const_zero(), "").unwrap();
    e.abort_if(bad, super::abi::STATUS_BAD_ADDRESS);
    for (k, r) in d_regs.iter().enumerate() {
        let p = unsafe { e.b.build_in_bounds_gep(i32t, d_p, &[i32t.const_int(k as u64, false)], "").unwrap() };
        let v = e.b.build_load(i32t, p, "").unwrap().into_int_value();
        let v: BasicValueEnum = if dreg_ty == Type::F32 { e.b.build_bit_cast(v, ctx.f32_type(), "").unwrap() } else { v.into() };
        e.write(r, dreg_ty, v)?;
    }
    if ex.is_some() {
        exchange_end(e);
    }
    Ok(())
}

/// Defines `i32 name(ptr smem, i32 smem_bytes, i64 a_desc, i64 b_desc, ptr a_area0,
/// i64 lane_stride, i64 word_stride, i32 linear_tid, i32 scale_d, ptr d)`: the lane's D
/// registers `d[..]` (read as C when scale_d, then written). Returns nonzero when a
/// descriptor addresses bytes outside the CTA's shared memory (nothing is read there).
fn products<'ctx>(e: &mut FnEmitter<'ctx, '_, '_>, name: &str, f: &Form) -> FunctionValue<'ctx> {
    let ctx = e.ctx();
    let (i8t, i16t, i32t, i64t, f32t) = (ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type(), ctx.f32_type());
    let ptr_t = ctx.ptr_type(inkwell::AddressSpace::default());
    let fn_t = i32t.fn_type(&[ptr_t.into(), i32t.into(), i64t.into(), i64t.into(), ptr_t.into(), i64t.into(), i64t.into(), i32t.into(), i32t.into(), ptr_t.into()], false);
    let (h, saved) = e.begin_helper(name, fn_t);
    let p = |k: u32| h.get_nth_param(k).unwrap();
    let (smem, limit) = (p(0).into_pointer_value(), p(1).into_int_value());
    let (adesc, bdesc) = (p(2).into_int_value(), p(3).into_int_value());
    let (area0, lane_stride, word_stride) = (p(4).into_pointer_value(), p(5).into_int_value(), p(6).into_int_value());
    let (tid, scale_d, d_p) = (p(7).into_int_value(), p(8).into_int_value(), p(9).into_pointer_value());
    let c32 = |v: u64| i32t.const_int(v, false);
    let bad_p = e.b.build_alloca(i32t, "bad").unwrap();
    e.b.build_store(bad_p, c32(0)).unwrap();
    let warp = e.b.build_and(e.b.build_right_shift(tid, c32(5), false, "").unwrap(), c32(3), "").unwrap();
    let lane = e.b.build_and(tid, c32(31), "").unwrap();
    let g = e.b.build_right_shift(lane, c32(2), false, "").unwrap();
    let t = e.b.build_and(lane, c32(3), "").unwrap();
    let size = f.a.size();
    let bfields = desc_fields(e, bdesc, false);
    let afields = if f.reg_a { None } else { Some(desc_fields(e, adesc, false)) };
    let load = |e: &FnEmitter<'ctx, '_, '_>, addr: IntValue<'ctx>| -> IntValue<'ctx> { smem_elem(e, smem, limit, bad_p, addr, size) };
    // A in registers: element (row r of the warp's 16, k) from the exchange.
    let reg_elem = |e: &FnEmitter<'ctx, '_, '_>, r: IntValue<'ctx>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        let b = &e.b;
        let (kchunk, per_word) = match size {
            2 => (8u64, 2u64),
            4 => (4, 1),
            _ => (16, 4),
        };
        let r8 = b.build_and(r, c32(7), "").unwrap();
        let hi_row = b.build_right_shift(r, c32(3), false, "").unwrap();
        let kc = b.build_int_unsigned_div(k, c32(kchunk), "").unwrap();
        let kin = b.build_int_unsigned_rem(k, c32(kchunk), "").unwrap();
        let src_lane = b.build_int_add(b.build_int_mul(r8, c32(4), "").unwrap(), b.build_int_unsigned_div(kin, c32(per_word), "").unwrap(), "").unwrap();
        let word = b.build_int_add(hi_row, b.build_int_mul(kc, c32(2), "").unwrap(), "").unwrap();
        let sub = b.build_int_unsigned_rem(kin, c32(per_word), "").unwrap();
        let off = b.build_int_add(
            b.build_int_mul(b.build_int_z_extend(src_lane, i64t, "").unwrap(), lane_stride, "").unwrap(),
            b.build_int_mul(b.build_int_z_extend(word, i64t, "").unwrap(), word_stride, "").unwrap(),
            "",
        )
        .unwrap();
        let q = unsafe { b.build_gep(i8t, area0, &[off], "").unwrap() };
        let w = b.build_load(i32t, q, "").unwrap().into_int_value();
        let sh = b.build_int_mul(sub, c32(8 * size as u64), "").unwrap();
        let v = b.build_right_shift(w, sh, false, "").unwrap();
        if size == 4 {
            v
        } else {
            b.build_and(v, c32((1u64 << (8 * size)) - 1), "").unwrap()
        }
    };
    let to_f32 = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, ty: Ty| -> FloatValue<'ctx> { elem_f32(e, v, ty) };
    let to_i64 = |e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, ty: Ty| -> IntValue<'ctx> {
        let v = e.b.build_int_truncate(v, i8t, "").unwrap();
        if ty == Ty::S8 {
            e.b.build_int_s_extend(v, i64t, "").unwrap()
        } else {
            e.b.build_int_z_extend(v, i64t, "").unwrap()
        }
    };
    // The loop over this lane's D elements.
    let nelem = f.n / 2;
    let pre = e.b.get_insert_block().unwrap();
    let body = ctx.append_basic_block(h, "wgmma.elem");
    let done = ctx.append_basic_block(h, "wgmma.done");
    e.b.build_unconditional_branch(body).unwrap();
    e.b.position_at_end(body);
    let iv = e.b.build_phi(i32t, "i").unwrap();
    let idx = iv.as_basic_value().into_int_value();
    let b = &e.b;
    let half = b.build_and(b.build_right_shift(idx, c32(1), false, "").unwrap(), c32(1), "").unwrap();
    let rloc = b.build_int_add(g, b.build_int_mul(half, c32(8), "").unwrap(), "").unwrap();
    let row = b.build_int_add(b.build_int_mul(warp, c32(16), "").unwrap(), rloc, "").unwrap();
    let col = b.build_int_add(
        b.build_int_add(b.build_int_mul(b.build_right_shift(idx, c32(2), false, "").unwrap(), c32(8), "").unwrap(), b.build_int_mul(t, c32(2), "").unwrap(), "").unwrap(),
        b.build_and(idx, c32(1), "").unwrap(),
        "",
    )
    .unwrap();
    let a_at = |e: &FnEmitter<'ctx, '_, '_>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        match &afields {
            Some(fl) => load(e, desc_address(e, fl, !f.trans_a, row, k, size)),
            None => reg_elem(e, rloc, k),
        }
    };
    let b_at = |e: &FnEmitter<'ctx, '_, '_>, k: IntValue<'ctx>| -> IntValue<'ctx> {
        // `.sp`: k counts A's kept elements; B's row is the one its metadata names
        // (`mma.sp`'s layout, 9.7.15.6.2: the figures are mma.sp's, per warp of 16 rows)
        let k = match f.sparse {
            None => k,
            Some((width, kept, sel)) => {
                let b = &e.b;
                let chunk = b.build_int_unsigned_div(k, c32(kept as u64), "").unwrap();
                let slot = b.build_int_unsigned_rem(k, c32(kept as u64), "").unwrap();
                let threads = f.k / width / 4;
                let owner = b.build_int_add(b.build_int_mul(b.build_and(rloc, c32(7), "").unwrap(), c32(4), "").unwrap(), c32((sel * threads) as u64), "").unwrap();
                let owner = b.build_int_add(owner, b.build_right_shift(chunk, c32(2), false, "").unwrap(), "").unwrap();
                let word = if f.reg_a { 4u64 } else { 0 };
                let off = b.build_int_add(
                    b.build_int_mul(b.build_int_z_extend(owner, i64t, "").unwrap(), lane_stride, "").unwrap(),
                    b.build_int_mul(i64t.const_int(word, false), word_stride, "").unwrap(),
                    "",
                )
                .unwrap();
                let q = unsafe { b.build_gep(i8t, area0, &[off], "").unwrap() };
                let meta = b.build_load(i32t, q, "").unwrap().into_int_value();
                let sh = b.build_int_add(b.build_int_mul(b.build_right_shift(rloc, c32(3), false, "").unwrap(), c32(16), "").unwrap(), b.build_int_mul(b.build_and(chunk, c32(3), "").unwrap(), c32(4), "").unwrap(), "").unwrap();
                let sh = b.build_int_add(sh, b.build_int_mul(slot, c32(2), "").unwrap(), "").unwrap();
                let mut idx = b.build_and(b.build_right_shift(meta, sh, false, "").unwrap(), c32(3), "").unwrap();
                if width == 2 {
                    idx = b.build_right_shift(idx, c32(1), false, "").unwrap();
                }
                b.build_int_add(b.build_int_mul(chunk, c32(width as u64), "").unwrap(), idx, "").unwrap()
            }
        };
        load(e, desc_address(e, &bfields, !f.trans_b, col, k, size))
    };
    let kcount = if f.sparse.is_some() { f.k / 2 } else { f.k };
    let use_c = e.b.build_int_compare(IntPredicate::NE, scale_d, c32(0), "").unwrap();
    let negate = f.neg_a != f.neg_b;
    let result: IntValue<'ctx> = if f.d == Ty::S32 {
        let cp = unsafe { e.b.build_in_bounds_gep(i32t, d_p, &[idx], "").unwrap() };
        let c = e.b.build_load(i32t, cp, "").unwrap().into_int_value();
        let c = e.b.build_int_s_extend(c, i64t, "").unwrap();
        let acc0 = e.b.build_select(use_c, c, i64t.const_zero(), "").unwrap();
        let acc = k_loop(e, kcount, acc0, |e, k, acc| {
            let p = if f.a == Ty::B1 {
                // popc(A AND B) over the 8 bits of a byte
                let both = e.b.build_and(a_at(e, k), b_at(e, k), "").unwrap();
                let n = e.intrinsic("llvm.ctpop", &[i32t.into()], &[both.into()]).into_int_value();
                e.b.build_int_z_extend(n, i64t, "").unwrap()
            } else {
                e.b.build_int_mul(to_i64(e, a_at(e, k), f.a), to_i64(e, b_at(e, k), f.b), "").unwrap()
            };
            e.b.build_int_add(acc.into_int_value(), p, "").unwrap().into()
        })
        .into_int_value();
        let acc = if f.sat {
            let hi = i64t.const_int(i32::MAX as u64, false);
            let lo = i64t.const_int(i32::MIN as i64 as u64, true);
            let over = e.b.build_int_compare(IntPredicate::SGT, acc, hi, "").unwrap();
            let acc = e.b.build_select(over, hi, acc, "").unwrap().into_int_value();
            let under = e.b.build_int_compare(IntPredicate::SLT, acc, lo, "").unwrap();
            e.b.build_select(under, lo, acc, "").unwrap().into_int_value()
        } else {
            acc
        };
        e.b.build_int_truncate(acc, i32t, "").unwrap()
    } else {
        let c = if f.d == Ty::F16 {
            let cp = unsafe { e.b.build_in_bounds_gep(i16t, d_p, &[idx], "").unwrap() };
            let hb = e.b.build_load(i16t, cp, "").unwrap().into_int_value();
            super::ops_half::h2f(e, hb)
        } else {
            let cp = unsafe { e.b.build_in_bounds_gep(i32t, d_p, &[idx], "").unwrap() };
            e.b.build_load(f32t, cp, "").unwrap().into_float_value()
        };
        let acc0 = e.b.build_select(use_c, c, f32t.const_zero(), "").unwrap();
        let acc = k_loop(e, kcount, acc0, |e, k, acc| {
            let x = to_f32(e, a_at(e, k), f.a);
            let y = to_f32(e, b_at(e, k), f.b);
            let p = e.b.build_float_mul(x, y, "").unwrap();
            let p = if negate { e.b.build_float_neg(p, "").unwrap() } else { p };
            e.b.build_float_add(acc.into_float_value(), p, "").unwrap().into()
        })
        .into_float_value();
        // An exact zero is +0 (as on an H200): -0 + +0 = +0.
        let acc = e.b.build_float_add(acc, f32t.const_zero(), "").unwrap();
        acc_bits(e, acc, f.d == Ty::F16)
    };
    // an f16 D element is a half-word of the registers: store the low 16 bits there
    let (et, st) = if f.d == Ty::F16 { (i16t, e.resize(result, 16, false)) } else { (i32t, result) };
    let q = unsafe { e.b.build_in_bounds_gep(et, d_p, &[idx], "").unwrap() };
    e.b.build_store(q, st).unwrap();
    let next = e.b.build_int_add(idx, c32(1), "").unwrap();
    let more = e.b.build_int_compare(IntPredicate::ULT, next, c32(nelem as u64), "").unwrap();
    let end = e.b.get_insert_block().unwrap();
    e.b.build_conditional_branch(more, body, done).unwrap();
    iv.add_incoming(&[(&c32(0), pre), (&next, end)]);
    e.b.position_at_end(done);
    let bad = e.b.build_load(i32t, bad_p, "").unwrap();
    e.b.build_return(Some(&bad)).unwrap();
    e.end_helper(saved);
    h
}

/// A matrix descriptor's fields (i32): start address, leading- and stride-dimension byte
/// offsets (in bytes), base offset and swizzle width in bytes (0: none). Hopper's (`sm100`
/// false, PTX ISA 8.x 9.7.15.5.1.2.2: the swizzle mode in bits 62-63, 0 none, 1 128 bytes,
/// 2 64, 3 32) or tcgen05's (PTX ISA 9.7.16.4.1: bits 61-63, 0 none, 2 128 bytes, 4 64, 6 32,
/// which are Hopper's codes shifted by one; mode 1, 128 bytes with 32-byte atomicity, reads
/// as width 1, which [`desc_address`] callers reject).
pub(super) fn desc_fields<'ctx>(e: &FnEmitter<'ctx, '_, '_>, d: IntValue<'ctx>, sm100: bool) -> [IntValue<'ctx>; 5] {
    let ctx = e.ctx();
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let c32 = |v: u64| i32t.const_int(v, false);
    let field = |sh: u64, mask: u64| {
        let v = e.b.build_right_shift(d, i64t.const_int(sh, false), false, "").unwrap();
        let v = e.b.build_and(v, i64t.const_int(mask, false), "").unwrap();
        e.b.build_int_truncate(v, i32t, "").unwrap()
    };
    let x16 = |v: IntValue<'ctx>| e.b.build_left_shift(v, c32(4), "").unwrap();
    let (mode, table) = if sm100 {
        (field(61, 7), i32t.const_array(&[c32(0), c32(1), c32(128), c32(1), c32(64), c32(1), c32(32), c32(1)]))
    } else {
        (field(62, 3), i32t.const_array(&[c32(0), c32(128), c32(64), c32(32)]))
    };
    let tp = e.b.build_alloca(table.get_type(), "swz").unwrap();
    e.b.build_store(tp, table).unwrap();
    let wp = unsafe { e.b.build_in_bounds_gep(table.get_type(), tp, &[c32(0), mode], "").unwrap() };
    let w = e.b.build_load(i32t, wp, "").unwrap().into_int_value();
    [x16(field(0, 0x3fff)), x16(field(16, 0x3fff)), x16(field(32, 0x3fff)), field(49, 7), w]
}

/// The shared byte address of element (r, k) of a descriptor's matrix of `size`-byte
/// elements ([`desc_fields`]; the layouts of the module doc), K-major or MN-major.
pub(super) fn desc_address<'ctx>(e: &FnEmitter<'ctx, '_, '_>, fl: &[IntValue<'ctx>; 5], kmajor: bool, r: IntValue<'ctx>, k: IntValue<'ctx>, size: u32) -> IntValue<'ctx> {
    let i32t = e.ctx().i32_type();
    let c32 = |v: u64| i32t.const_int(v, false);
    let [start, lbo, sbo, base_off, w] = *fl;
    let b = &e.b;
    let mul = |x: IntValue<'ctx>, y: IntValue<'ctx>| b.build_int_mul(x, y, "").unwrap();
    let add = |x: IntValue<'ctx>, y: IntValue<'ctx>| b.build_int_add(x, y, "").unwrap();
    let udiv = |x: IntValue<'ctx>, y: IntValue<'ctx>| b.build_int_unsigned_div(x, y, "").unwrap();
    let urem = |x: IntValue<'ctx>, y: IntValue<'ctx>| b.build_int_unsigned_rem(x, y, "").unwrap();
    let none = b.build_int_compare(IntPredicate::EQ, w, c32(0), "").unwrap();
    let w1 = b.build_select(none, c32(16), w, "").unwrap().into_int_value();
    let off = if kmajor {
        let kb = mul(k, c32(size as u64));
        let r8 = urem(r, c32(8));
        let rg = mul(udiv(r, c32(8)), sbo);
        let plain = add(add(add(mul(r8, c32(16)), rg), mul(udiv(kb, c32(16)), lbo)), urem(kb, c32(16)));
        let swz = add(add(mul(r8, w1), rg), kb);
        b.build_select(none, plain, swz, "").unwrap().into_int_value()
    } else {
        let mb = mul(r, c32(size as u64));
        let k8 = urem(k, c32(8));
        let kg = udiv(k, c32(8));
        let plain = add(add(add(urem(mb, c32(16)), mul(udiv(mb, c32(16)), sbo)), mul(k8, c32(16))), mul(kg, lbo));
        let swz = add(add(add(urem(mb, w1), mul(udiv(mb, w1), lbo)), mul(k8, w1)), mul(kg, sbo));
        b.build_select(none, plain, swz, "").unwrap().into_int_value()
    };
    let a = add(start, off);
    // chunk ^= ((a >> 7) - base_offset) & (W / 16 - 1), for a swizzle of W bytes
    let row = b.build_int_sub(b.build_right_shift(a, c32(7), false, "").unwrap(), base_off, "").unwrap();
    let mask = b.build_int_sub(b.build_right_shift(w1, c32(4), false, "").unwrap(), c32(1), "").unwrap();
    let x = b.build_left_shift(b.build_and(row, mask, "").unwrap(), c32(4), "").unwrap();
    b.build_xor(a, x, "").unwrap()
}

/// The `size`-byte element code at shared byte `addr` of `smem` (`limit` bytes long),
/// zero-extended to i32; a byte outside sets `*bad_p` (an i32) and reads byte 0 instead.
pub(super) fn smem_elem<'ctx>(e: &FnEmitter<'ctx, '_, '_>, smem: inkwell::values::PointerValue<'ctx>, limit: IntValue<'ctx>, bad_p: inkwell::values::PointerValue<'ctx>, addr: IntValue<'ctx>, size: u32) -> IntValue<'ctx> {
    let ctx = e.ctx();
    let (i8t, i16t, i32t, i64t) = (ctx.i8_type(), ctx.i16_type(), ctx.i32_type(), ctx.i64_type());
    let end = e.b.build_int_add(addr, i32t.const_int(size as u64, false), "").unwrap();
    let outside = e.b.build_int_compare(IntPredicate::UGT, end, limit, "").unwrap();
    let bad = e.b.build_load(i32t, bad_p, "").unwrap().into_int_value();
    e.b.build_store(bad_p, e.b.build_or(bad, e.b.build_int_z_extend(outside, i32t, "").unwrap(), "").unwrap()).unwrap();
    let addr = e.b.build_select(outside, i32t.const_zero(), addr, "").unwrap().into_int_value();
    let q = unsafe { e.b.build_gep(i8t, smem, &[e.b.build_int_z_extend(addr, i64t, "").unwrap()], "").unwrap() };
    let t = match size {
        1 => i8t,
        2 => i16t,
        _ => i32t,
    };
    let v = e.b.build_load(t, q, "").unwrap().into_int_value();
    if let Some(inst) = v.as_instruction() {
        let _ = inst.set_alignment(1);
    }
    e.b.build_int_z_extend_or_bit_cast(v, i32t, "").unwrap()
}

/// The value of a multiplicand element (its code zero-extended to i32) as an f32: exact for
/// every type (tf32: the low 13 mantissa bits do not take part, as for mma.sync).
pub(super) fn elem_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, ty: Ty) -> FloatValue<'ctx> {
    let ctx = e.ctx();
    let (i32t, f32t) = (ctx.i32_type(), ctx.f32_type());
    let c32 = |x: u64| i32t.const_int(x, false);
    let b = &e.b;
    match ty {
        Ty::F16 => super::ops_half::h2f(e, e.resize(v, 16, false)),
        Ty::BF16 => b.build_bit_cast(b.build_left_shift(v, c32(16), "").unwrap(), f32t, "").unwrap().into_float_value(),
        Ty::TF32 => b.build_bit_cast(b.build_and(v, c32(0xffff_e000), "").unwrap(), f32t, "").unwrap().into_float_value(),
        Ty::E5M2 => f8_to_f32(e, v, false),
        Ty::E4M3 => f8_to_f32(e, v, true),
        _ => unreachable!("integer multiplicands are not floats"),
    }
}

/// The value of an 8-bit float code (zero-extended to i32) as an f32, exactly: e5m2 is the
/// upper byte of an f16; e4m3 has bias 7, no infinities, S.1111.111 is NaN, subnormals
/// m * 2^-9.
pub(super) fn f8_to_f32<'ctx>(e: &FnEmitter<'ctx, '_, '_>, v: IntValue<'ctx>, e4m3: bool) -> FloatValue<'ctx> {
    let ctx = e.ctx();
    let (i32t, f32t) = (ctx.i32_type(), ctx.f32_type());
    let c32 = |x: u64| i32t.const_int(x, false);
    let b = &e.b;
    match e4m3 {
        false => super::ops_half::h2f(e, e.resize(b.build_left_shift(v, c32(8), "").unwrap(), 16, false)),
        true => {
            let exp = b.build_and(b.build_right_shift(v, c32(3), false, "").unwrap(), c32(15), "").unwrap();
            let man = b.build_and(v, c32(7), "").unwrap();
            let neg = b.build_int_compare(IntPredicate::NE, b.build_and(v, c32(0x80), "").unwrap(), c32(0), "").unwrap();
            let normal_bits = b.build_or(b.build_left_shift(b.build_int_add(exp, c32(120), "").unwrap(), c32(23), "").unwrap(), b.build_left_shift(man, c32(20), "").unwrap(), "").unwrap();
            let normal = b.build_bit_cast(normal_bits, f32t, "").unwrap().into_float_value();
            let sub = b.build_float_mul(b.build_unsigned_int_to_float(man, f32t, "").unwrap(), f32t.const_float(2f64.powi(-9)), "").unwrap();
            let is_sub = b.build_int_compare(IntPredicate::EQ, exp, c32(0), "").unwrap();
            let mag = b.build_select(is_sub, sub, normal, "").unwrap().into_float_value();
            let is_nan = b.build_int_compare(IntPredicate::EQ, b.build_and(v, c32(0x7f), "").unwrap(), c32(0x7f), "").unwrap();
            let mag = b.build_select(is_nan, f32t.const_float(f64::NAN), mag, "").unwrap().into_float_value();
            b.build_select(neg, b.build_float_neg(mag, "").unwrap(), mag, "").unwrap().into_float_value()
        }
    }
}

/// The NVPTX direction: LLVM 19 has no wgmma intrinsics, so inline PTX (the module targets
/// sm_90a: `driver::NvptxOptions::for_module`).
fn nvptx<'ctx, 'a>(e: &mut FnEmitter<'ctx, 'a, '_>, i: &'a Instr<'a>, f: &Form, d_regs: &'a [Operand<'a>], a_regs: Option<&'a [Operand<'a>]>) -> R<()> {
    let ctx = e.ctx();
    let (i32t, f32t) = (ctx.i32_type(), ctx.f32_type());
    let nd = d_regs.len();
    let (dty, dcon) = if f.d == Ty::F32 { (Type::F32, "f") } else { (Type::B32, "r") };
    let mut args: Vec<BasicValueEnum<'ctx>> = Vec::new();
    let mut cons: Vec<String> = (0..nd).map(|_| format!("={dcon}")).collect();
    for (k, r) in d_regs.iter().enumerate() {
        args.push(e.read(r, dty)?);
        cons.push(k.to_string());
    }
    let mut next = 2 * nd; // the outputs, then their tied inputs
    let mut slot = |cons: &mut Vec<String>, c: &str| {
        cons.push(c.to_string());
        next += 1;
        format!("${}", next - 1)
    };
    let a_text = match a_regs {
        Some(rs) => {
            let mut names = Vec::new();
            for r in rs {
                args.push(e.read_int(r, Type::B32)?.into());
                names.push(slot(&mut cons, "r"));
            }
            format!("{{{}}}", names.join(", "))
        }
        None => {
            args.push(e.read_int(&i.operands[1], Type::B64)?.into());
            slot(&mut cons, "l")
        }
    };
    args.push(e.read_int(&i.operands[2], Type::B64)?.into());
    let mut b_text = slot(&mut cons, "l");
    if f.sparse.is_some() {
        // sp-meta (a register) and sp-sel (an immediate)
        args.push(e.read_int(&i.operands[3], Type::B32)?.into());
        let m = slot(&mut cons, "r");
        b_text = format!("{b_text}, {m}, {}", imm_u64(e, &i.operands[4], "the sparsity selector")?);
    }
    let sc = f.scale_at();
    let (pre, scale) = match &i.operands[sc] {
        Operand::Imm(_) => (String::new(), (imm_u64(e, &i.operands[sc], "scale-d")? & 1).to_string()),
        op => {
            let p = e.read_int(op, Type::Pred)?;
            args.push(e.resize(p, 32, false).into());
            let s = slot(&mut cons, "r");
            (format!(".reg .pred p; setp.ne.b32 p, {s}, 0; "), "p".to_string())
        }
    };
    let mut rest = String::new();
    for op in &i.operands[sc + 1..] {
        rest.push_str(&format!(", {}", imm_u64(e, op, "an immediate of `wgmma.mma_async`")? as i64));
    }
    let dlist: Vec<String> = (0..nd).map(|k| format!("${k}")).collect();
    let head: Vec<&str> = i.mods.iter().copied().collect();
    let asm = format!("{{ {pre}wgmma.{} {{{}}}, {a_text}, {b_text}, {scale}{rest}; }}", head.join("."), dlist.join(", "));
    let elem_t: inkwell::types::BasicTypeEnum = if f.d == Ty::F32 { f32t.into() } else { i32t.into() };
    let ret = ctx.struct_type(&vec![elem_t; nd], false);
    cons.push("~{memory}".into());
    let res = super::nvvm::inline_ptx(e, Some(ret.into()), &asm, &cons.join(","), &args).unwrap();
    for (k, r) in d_regs.iter().enumerate() {
        let v = e.b.build_extract_value(res.into_struct_value(), k as u32, "").unwrap();
        e.write(r, dty, v)?;
    }
    Ok(())
}
