#!/usr/bin/env python3
"""Reference generator for tests/filetests/cvt/ue8m0.ptx: PTX 8.6's conversions to and from
.ue8m0x2 (PTX ISA 9.7.9.21 cvt): cvt.{rz,rp}{.satfinite}.ue8m0x2.f32 d, a, b,
cvt.{rz,rp}{.satfinite}.ue8m0x2.bf16x2 d, a and cvt.rn.bf16x2.ue8m0x2 d, a.

Expected values are computed here, never by ptxr, with exact rational arithmetic: code e in
0..254 is the scale 2^(e - 127), 255 is NaN. A source's magnitude (the sign is ignored) is
rounded to a scale: .rz to the largest scale not above it (code 0 for anything below 2^-127,
zero included), .rp to the smallest scale not below it (code 0 up to 2^-127). A magnitude
beyond the largest scale 2^127 (.rp), or an infinity, gives 255, which .satfinite makes 254;
NaN gives 255. Decoding gives the scale as a bf16 (code 0: the subnormal 0x0040) and NaN as
0x7fff. These are the semantics CUDA 12.9's cuda_fp8.hpp gives its host versions of
__nv_cvt_float_to_e8m0 / __nv_cvt_bfloat16raw_to_e8m0 / __nv_cvt_e8m0_to_bf16raw (whose device
versions are these instructions); not measured on a GPU. Packing per the ISA: a (or the upper
bf16) to d[15:8], b (the lower) to d[7:0]; decoding puts a[15:8]'s value in d[31:16].

    python3 tests/filetests/ref/ue8m0_ref.py      # rewrite the .ptx file
"""
import os
from fractions import Fraction as Fr

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cvt", "ue8m0.ptx")


def value(bits, ebits, mbits):
    """Magnitude of an IEEE-style float (None for NaN, 'inf' for infinity)."""
    bias = (1 << (ebits - 1)) - 1
    e = (bits >> mbits) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    if e == (1 << ebits) - 1:
        return None if m else "inf"
    if e == 0:
        return Fr(m, 1 << mbits) * Fr(2) ** (1 - bias)
    return (1 + Fr(m, 1 << mbits)) * Fr(2) ** (e - bias)


def encode(v, up, sat):
    if v is None:
        return 0xFF
    if v == "inf":
        return 0xFE if sat else 0xFF
    scale = lambda e: Fr(2) ** (e - 127)
    if up:
        if v > scale(254):
            return 0xFE if sat else 0xFF
        return min(e for e in range(255) if scale(e) >= v)
    below = [e for e in range(255) if scale(e) <= v]
    return max(below) if below else 0


def decode(code):
    if code == 0xFF:
        return 0x7FFF
    v = Fr(2) ** (code - 127)
    # the bf16 of an exact power of two: normal exponent field, or the subnormal 2^-127
    if code == 0:
        assert v == Fr(0x40, 1 << 7) * Fr(2) ** -126
        return 0x0040
    return code << 7


F32 = [
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3FC00000, 0xBFC00000, 0x40400000, 0x3F400000,
    0x00400000, 0x00400001, 0x003FFFFF, 0x00000001, 0x00800000, 0x00800001, 0x007FFFFF, 0x80400001,
    0x7F000000, 0x7F000001, 0x7F7FFFFF, 0x7E800000, 0x7EFFFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
    0xFFC00001, 0x7F800001, 0x3F800001, 0x3FFFFFFF, 0x40000000, 0x3F7FFFFF, 0x3F7F0000, 0x3F7F0001,
    0x3F800100, 0x3F810000, 0x42F60000, 0xC2F60000, 0x4B000000, 0x34000000, 0x3E2AAAAB, 0x5F800000,
    0x1F800000, 0x207FFFFF, 0x00010000, 0x0000FFFF, 0x00400000, 0x80000001, 0x7F7F0000, 0x7F7F0001,
    0x3EFFFFFF, 0x3F000000, 0x3F000001, 0x41200000, 0x447A0000, 0x49742400, 0x2EDBE6FF, 0xC0490FDB,
    0x7F000000, 0x00200000, 0x3F8CCCCD, 0xBF8CCCCD, 0x3DCCCCCD, 0x3C23D70A, 0x7E000000, 0x01000000,
]
BF16X2 = [
    0x00000040, 0x00410080, 0x003F0001, 0x3F803F81, 0xBF80BFFF, 0x7F007F01, 0x7F7F7F80, 0xFF807FC0,
    0x7F81FFFF, 0x00000000, 0x80008001, 0x40004040, 0x3F7F3F00, 0x00800081, 0x7EFF7E80, 0x01000180,
    0x42F6C2F6, 0x4B003400, 0x3E2B5F80, 0x1F80207F, 0x3F013F7F, 0x40494049, 0x7F807F7F, 0x00010002,
    0x803F8040, 0x3DCC3C23, 0x7E007E01, 0x447A4974, 0x41204120, 0x00400041, 0x7F017FFF, 0x3F803F80,
]
MODES = [("rz", False, False), ("rz.satfinite", False, True), ("rp", True, False), ("rp.satfinite", True, True)]


def words(xs):
    return ",".join(f"0x{x:08x}" for x in xs)


def main():
    assert len(F32) == 64 and len(BF16X2) == 32
    enc = []
    for t in range(32):
        a, b = F32[2 * t], F32[2 * t + 1]
        for _, up, sat in MODES:
            enc.append((encode(value(a, 8, 23), up, sat) << 8) | encode(value(b, 8, 23), up, sat))
    bf = []
    for w in BF16X2:
        for _, up, sat in MODES:
            bf.append((encode(value(w >> 16, 8, 7), up, sat) << 8) | encode(value(w & 0xFFFF, 8, 7), up, sat))
    dec = []
    for t in range(128):
        hi, lo = 2 * t + 1, 2 * t
        dec.append((decode(hi) << 16) | decode(lo))
    cvts_f32 = "\n".join(
        f"\tcvt.{m}.ue8m0x2.f32 %h, %a, %b;\n\tcvt.u32.u16 %r, %h;\n\tst.global.u32 [%p+{4 * k}], %r;" for k, (m, _, _) in enumerate(MODES))
    cvts_bf = "\n".join(
        f"\tcvt.{m}.ue8m0x2.bf16x2 %h, %a;\n\tcvt.u32.u16 %r, %h;\n\tst.global.u32 [%p+{4 * k}], %r;" for k, (m, _, _) in enumerate(MODES))
    text = f"""// PTX 8.6 conversions with .ue8m0x2 (PTX ISA 9.7.9.21 cvt): cvt.{{rz,rp}}{{.satfinite}}.ue8m0x2
// from .f32 pairs and from .bf16x2, and cvt.rn.bf16x2.ue8m0x2 (every code).
// Generated by tests/filetests/ref/ue8m0_ref.py (exact rational arithmetic and the ISA's
// packing, not ptxr). Do not edit by hand; edit the generator.
.version 8.6
.target sm_100a
.address_size 64

.visible .entry k_enc(.param .u64 p_in, .param .u64 p_out)
{{
	.reg .b32 %t, %a, %b, %r;
	.reg .b16 %h;
	.reg .b64 %p, %o;
	mov.u32 %t, %tid.x;
	ld.param.u64 %p, [p_in];
	mul.wide.u32 %o, %t, 8;
	add.s64 %p, %p, %o;
	ld.global.u32 %a, [%p];
	ld.global.u32 %b, [%p+4];
	ld.param.u64 %p, [p_out];
	mul.wide.u32 %o, %t, 16;
	add.s64 %p, %p, %o;
{cvts_f32}
	ret;
}}
// run: k_enc<<<1, 32>>> buf:u32:{words(F32)} buf:zero:512
// expect: arg1 == u32:{words(enc)}

.visible .entry k_bf(.param .u64 p_in, .param .u64 p_out)
{{
	.reg .b32 %t, %a, %r;
	.reg .b16 %h;
	.reg .b64 %p, %o;
	mov.u32 %t, %tid.x;
	ld.param.u64 %p, [p_in];
	mul.wide.u32 %o, %t, 4;
	add.s64 %p, %p, %o;
	ld.global.u32 %a, [%p];
	ld.param.u64 %p, [p_out];
	mul.wide.u32 %o, %t, 16;
	add.s64 %p, %p, %o;
{cvts_bf}
	ret;
}}
// run: k_bf<<<1, 32>>> buf:u32:{words(BF16X2)} buf:zero:512
// expect: arg1 == u32:{words(bf)}

.visible .entry k_dec(.param .u64 p_out)
{{
	.reg .b32 %t, %lo, %hi, %r;
	.reg .b16 %h;
	.reg .b64 %p, %o;
	mov.u32 %t, %tid.x;
	shl.b32 %lo, %t, 1;
	add.u32 %hi, %lo, 1;
	shl.b32 %hi, %hi, 8;
	or.b32 %r, %hi, %lo;
	cvt.u16.u32 %h, %r;
	cvt.rn.bf16x2.ue8m0x2 %r, %h;
	ld.param.u64 %p, [p_out];
	mul.wide.u32 %o, %t, 4;
	add.s64 %p, %p, %o;
	st.global.u32 [%p], %r;
	ret;
}}
// run: k_dec<<<1, 128>>> buf:zero:512
// expect: arg0 == u32:{words(dec)}
"""
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
