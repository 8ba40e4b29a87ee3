#!/usr/bin/env python3
"""Reference generator for tests/filetests/cvt/f8_tf32_pack.ptx: the PTX 6.5-7.8 conversions
cvt.pack.sat, cvt to .tf32, cvt to and from the 8-bit float pairs .e4m3x2/.e5m2x2, and
bmsk (PTX 7.6).

Expected values are computed here, never by ptxr: 8-bit floats and tf32 by exact rational
arithmetic (every representable value is enumerated and the nearest one chosen, ties as the
rounding mode says), cvt.pack and bmsk by transcribing the PTX ISA pseudo-code with Python
ints. Known values measured on an NVIDIA GPU (ZLUDA's CUDA tests cvt_rn_satfinite_e4m3x2_f32,
cvt_rn_f16x2_e4m3x2, cvt_pack, bmsk_clamp_b32 and their e5m2 twins) are among the inputs and
agree with this reference.

    python3 tests/filetests/ref/f8_ref.py          # rewrite the .ptx file
    python3 tests/filetests/ref/f8_ref.py --gpu    # also run it with CuPy on a GPU and compare
"""
import os
import struct
import sys
from fractions import Fraction as Fr

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cvt", "f8_tf32_pack.ptx")


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def ieee_val(b, eb, mb):
    """Exact value of an IEEE binary float with eb exponent and mb mantissa bits (None for NaN,
    +-inf as strings)."""
    emax = (1 << eb) - 1
    bias = emax >> 1
    e = (b >> mb) & emax
    m = b & ((1 << mb) - 1)
    s = -1 if b >> (eb + mb) else 1
    if e == emax:
        return None if m else ("inf" if s > 0 else "-inf")
    if e == 0:
        return s * Fr(m, 1 << mb) * Fr(2) ** (1 - bias)
    return s * (1 + Fr(m, 1 << mb)) * Fr(2) ** (e - bias)


def f32_val(b):
    return ieee_val(b, 8, 23)


def f16_val(h):
    return ieee_val(h, 5, 10)


def f16_bits_of(v):
    """f16 bits of an exactly representable value."""
    for h in range(0x10000):
        if f16_val(h) == v and not (v == 0 and h >> 15):
            return h
    raise ValueError(v)


# 8-bit floats: (exponent bits, mantissa bits, bias, has infinity)
FMT = {"e4m3": (4, 3, 7, False), "e5m2": (5, 2, 15, True)}


def f8_val(fmt, code):
    eb, mb, bias, has_inf = FMT[fmt]
    s = -1 if code & 0x80 else 1
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    if has_inf and e == (1 << eb) - 1:
        return None if m else ("inf" if s > 0 else "-inf")
    if not has_inf and e == (1 << eb) - 1 and m == (1 << mb) - 1:
        return None
    if e == 0:
        return s * Fr(m, 1 << mb) * Fr(2) ** (1 - bias)
    return s * (1 + Fr(m, 1 << mb)) * Fr(2) ** (e - bias)


def f8_finite_codes(fmt):
    return [c for c in range(0x80) if isinstance(f8_val(fmt, c), Fr)]


def to_f8(fmt, v, relu, negzero=False):
    """cvt.rn.satfinite{.relu}: nearest finite code, ties to the even code; beyond the largest
    finite value (infinities included) the largest finite value of the sign; NaN 0x7f. The sign
    of a zero (`negzero`) and of a value that rounds to zero is kept; .relu makes negative
    nonzero values +0 (-0 stays, as ptxr's .bf16 .relu does)."""
    if v is None:
        return 0x7F
    codes = f8_finite_codes(fmt)
    maxc = max(codes, key=lambda c: f8_val(fmt, c))
    if isinstance(v, str):
        neg = v == "-inf"
        if relu and neg:
            return 0
        return maxc | (0x80 if neg else 0)
    neg = v < 0 or (v == 0 and negzero)
    if relu and v < 0:
        return 0
    a = abs(v)
    if a >= f8_val(fmt, maxc):
        c = maxc
    else:
        best = min(codes, key=lambda c: (abs(f8_val(fmt, c) - a), c & 1))
        c = best
    return c | (0x80 if neg else 0)


def from_f8(fmt, code, relu):
    """cvt.rn{.relu}.f16x2.f8x2type: exact; NaN: e5m2 keeps its bits (it is the upper byte of
    an f16), e4m3 gives the canonical f16 NaN 0x7fff."""
    v = f8_val(fmt, code)
    if v is None:
        return (code << 8) if fmt == "e5m2" else 0x7FFF
    if isinstance(v, str):
        return 0 if relu and v == "-inf" else (0xFC00 if v == "-inf" else 0x7C00)
    if relu and v < 0:
        return 0
    if v == 0:
        return 0x8000 if code & 0x80 else 0  # -0 stays -0, also with .relu
    return f16_bits_of(v)


def tf32(b, mode, satfinite, relu=False):
    """cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32: nearest tf32 (f32 with the low 13 bits 0);
    .relu makes negative nonzero values +0 (-0 stays)."""
    v = f32_val(b)
    if v is None:
        return 0x7FFFFFFF
    if relu and b > 0x80000000:
        return 0
    sign = b & 0x80000000
    if isinstance(v, str):
        return sign | (0x7F7FE000 if satfinite else 0x7F800000)
    a = abs(v)
    lo = (b & 0x7FFFFFFF) & ~0x1FFF  # the tf32 at or below |v|
    hi = lo + 0x2000
    vlo, vhi = f32_val(lo), (f32_val(hi) if hi < 0x7F800000 else Fr(2) ** 128)
    if mode == "rz" or a == vlo:
        r = lo
    elif a - vlo < vhi - a:
        r = lo
    elif a - vlo > vhi - a:
        r = hi
    else:
        r = hi if mode == "rna" else (lo if (lo >> 13) & 1 == 0 else hi)
    if r >= 0x7F800000:
        r = 0x7F7FE000 if satfinite else 0x7F800000
    return sign | r


def pack(a, b, c, bits, signed):
    """cvt.pack.sat (PTX ISA 6.5 pseudo-code)."""
    lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1))
    ta = max(lo, min(hi, a)) & ((1 << bits) - 1)
    tb = max(lo, min(hi, b)) & ((1 << bits) - 1)
    d = tb | (ta << bits)
    if bits < 16:
        d |= (c << (2 * bits))
    return d & 0xFFFFFFFF


def bmsk(a, b, mode):
    """bmsk (PTX ISA 7.6): mask of b bits from bit a."""
    if mode == "wrap":
        a, b = a & 31, b & 31
    else:
        a, b = min(a, 32), min(b, 32)
    d = 0
    for i in range(32):
        if a <= i < a + b:
            d |= 1 << i
    return d


def s32(x):
    return x & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
NAN = 0x7FC00000
F32_IN = [
    f32_bits(0.40625), f32_bits(12.9), f32_bits(0.375), f32_bits(-5256.6),  # GPU-measured pairs
    0, 0x80000000, f32_bits(1.0), f32_bits(-1.0),
    f32_bits(448.0), f32_bits(464.0), f32_bits(480.0), f32_bits(1e6),  # e4m3 max, tie above it, overflow
    f32_bits(57344.0), f32_bits(61440.0), 0x7F800000, 0xFF800000,  # e5m2 max, its tie, infinities
    NAN, 0xFFC00001, f32_bits(2.0 ** -9), f32_bits(2.0 ** -10),  # NaNs; e4m3 smallest subnormal, half of it
    f32_bits(3 * 2.0 ** -11), f32_bits(2.0 ** -16), f32_bits(2.0 ** -17), f32_bits(3 * 2.0 ** -18),  # ties
    f32_bits(1.0625), f32_bits(1.1875), f32_bits(1.125), f32_bits(-1.375),  # ties to even (e4m3), e5m2
    f32_bits(0.9999), f32_bits(15.5), f32_bits(-0.001953125), 0x00000001,  # f32 subnormal
]
NF = len(F32_IN) // 2  # lanes of k_f8 (a, b per lane)

F16X2_IN = [0x3E00BC00, 0x7BFF5BF0, 0x7C00FC00, 0x7E000001, 0x3C403C60, 0x0400C000, 0x5F005F80, 0x8000B4CD]

TF32_IN = [
    f32_bits(1.0), 0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F801001, 0xBF801000, 0xBF803000,
    0x7F7FF000, 0x7F7FEFFF, 0xFF7FF000, 0x7F800000, 0xFF800000, NAN, 0x00001000, 0x00003000, 0x80000FFF,
    0xFFC00001, 0x80000000,
]

PACK_IN = [(-257, 257, 0xF839B0ED), (5, -3, 0x12345678), (70000, -70000, 0xFFFFFFFF), (1, 2, 0),
           (-2, 7, 0xAAAAAAAA), (32767, -32768, 0x0F0F0F0F), (200, 100, 0x1), (-1, 1, 0x80000000)]

BMSK_IN = [(24, 12), (0, 0), (0, 32), (0, 33), (31, 1), (32, 1), (33, 5), (5, 31), (4, 4), (1, 40), (40, 40), (16, 16)]


def u32_list(xs):
    return ",".join(f"0x{x & 0xFFFFFFFF:08x}" for x in xs)


def prologue(w, name, regs, in_stride, loads, out_stride):
    """A kernel's head: its registers, this lane's input words loaded (`loads`: (register,
    byte offset, type)) and %p pointing at this lane's outputs."""
    w(f".visible .entry {name}(.param .u64 p_in, .param .u64 p_out)")
    w("{")
    for r in regs:
        w(f"\t.reg {r};")
    w("\tmov.u32 %t, %tid.x;")
    w("\tld.param.u64 %p, [p_in];")
    w(f"\tmul.wide.u32 %o, %t, {in_stride};")
    w("\tadd.s64 %p, %p, %o;")
    for reg, off, ty in loads:
        w(f"\tld.global.{ty} {reg}, [%p{'+' + str(off) if off else ''}];")
    w("\tld.param.u64 %p, [p_out];")
    if out_stride != in_stride:
        w(f"\tmul.wide.u32 %o, %t, {out_stride};")
    w("\tadd.s64 %p, %p, %o;")


def build():
    L = []
    w = L.append
    w("// PTX 6.5-7.8 conversions and bmsk: cvt.pack.sat (every convert type), cvt to .tf32 with .rna,")
    w("// .rn, .rz and .satfinite, cvt.rn.satfinite{.relu} to .e4m3x2/.e5m2x2 from .f32 and .f16x2, and")
    w("// cvt.rn{.relu}.f16x2 from them (all 256 codes of each format), bmsk.clamp/.wrap.")
    w("// Generated by tests/filetests/ref/f8_ref.py (exact rational arithmetic and the ISA pseudo-code,")
    w("// not ptxr). Do not edit by hand; edit the generator.")
    w(".version 7.8")
    w(".target sm_90")
    w(".address_size 64")
    w("")
    # --- f32 -> f8 pairs
    prologue(w, "k_f8", [".b32 %t, %a, %b, %r", ".b16 %h", ".b64 %p, %o"], 8, [("%a", 0, "u32"), ("%b", 4, "u32")], 16)
    for k, form in enumerate(["rn.satfinite.e4m3x2", "rn.satfinite.e5m2x2", "rn.satfinite.relu.e4m3x2", "rn.satfinite.relu.e5m2x2"]):
        w(f"\tcvt.{form}.f32 %h, %a, %b;")
        w(f"\tcvt.u32.u16 %r, %h;")
        w(f"\tst.global.u32 [%p+{4 * k}], %r;")
    w("\tret;")
    w("}")
    exp = []
    for l in range(NF):
        xa, xb = F32_IN[2 * l], F32_IN[2 * l + 1]
        a, b = f32_val(xa), f32_val(xb)
        for fmt, relu in [("e4m3", False), ("e5m2", False), ("e4m3", True), ("e5m2", True)]:
            exp.append((to_f8(fmt, a, relu, xa >> 31 == 1) << 8) | to_f8(fmt, b, relu, xb >> 31 == 1))
    w(f"// run: k_f8<<<1, {NF}>>> buf:u32:{u32_list(F32_IN)} buf:zero:{16 * NF}")
    w(f"// expect: arg1 == u32:{u32_list(exp)}")
    w("")
    # --- f16x2 -> f8 pairs
    prologue(w, "k_f8_h", [".b32 %t, %a, %r", ".b16 %h", ".b64 %p, %o"], 4, [("%a", 0, "u32")], 8)
    for k, form in enumerate(["rn.satfinite.e4m3x2", "rn.satfinite.relu.e5m2x2"]):
        w(f"\tcvt.{form}.f16x2 %h, %a;")
        w(f"\tcvt.u32.u16 %r, %h;")
        w(f"\tst.global.u32 [%p+{4 * k}], %r;")
    w("\tret;")
    w("}")
    exp = []
    for x in F16X2_IN:
        hi, lo = f16_val(x >> 16), f16_val(x & 0xFFFF)
        nhi, nlo = x >> 31 == 1, (x >> 15) & 1 == 1
        exp.append((to_f8("e4m3", hi, False, nhi) << 8) | to_f8("e4m3", lo, False, nlo))
        exp.append((to_f8("e5m2", hi, True, nhi) << 8) | to_f8("e5m2", lo, True, nlo))
    w(f"// run: k_f8_h<<<1, {len(F16X2_IN)}>>> buf:u32:{u32_list(F16X2_IN)} buf:zero:{8 * len(F16X2_IN)}")
    w(f"// expect: arg1 == u32:{u32_list(exp)}")
    w("")
    # --- f8 pairs -> f16x2: lane l holds codes 2l (low byte) and 2l+1 (high byte)
    w(".visible .entry k_f8_dec(.param .u64 p_out)")
    w("{")
    w("\t.reg .b32 %t, %c, %r;")
    w("\t.reg .b16 %h;")
    w("\t.reg .b64 %p, %o;")
    w("\tmov.u32 %t, %tid.x;")
    w("\tshl.b32 %c, %t, 1;")
    w("\tmad.lo.u32 %c, %c, 257, 256;")
    w("\tcvt.u16.u32 %h, %c;")
    w("\tld.param.u64 %p, [p_out];")
    w("\tmul.wide.u32 %o, %t, 16;")
    w("\tadd.s64 %p, %p, %o;")
    for k, form in enumerate(["rn.f16x2.e4m3x2", "rn.f16x2.e5m2x2", "rn.relu.f16x2.e4m3x2", "rn.relu.f16x2.e5m2x2"]):
        w(f"\tcvt.{form} %r, %h;")
        w(f"\tst.global.u32 [%p+{4 * k}], %r;")
    w("\tret;")
    w("}")
    exp = []
    for l in range(128):
        lo, hi = 2 * l, 2 * l + 1
        for fmt, relu in [("e4m3", False), ("e5m2", False), ("e4m3", True), ("e5m2", True)]:
            exp.append((from_f8(fmt, hi, relu) << 16) | from_f8(fmt, lo, relu))
    w(f"// run: k_f8_dec<<<1, 128>>> buf:zero:{16 * 128}")
    w(f"// expect: arg0 == u32:{u32_list(exp)}")
    w("")
    # --- tf32
    prologue(w, "k_tf32", [".b32 %t, %a, %r", ".f32 %f", ".b64 %p, %o"], 4, [("%f", 0, "f32")], 24)
    forms = [("rna", False, False), ("rna", True, False), ("rn", False, False), ("rz", False, False), ("rn", True, False), ("rz", True, True)]
    for k, (m, s, r) in enumerate(forms):
        w(f"\tcvt.{m}{'.satfinite' if s else ''}{'.relu' if r else ''}.tf32.f32 %r, %f;")
        w(f"\tst.global.u32 [%p+{4 * k}], %r;")
    w("\tret;")
    w("}")
    exp = [tf32(x, m, s, r) for x in TF32_IN for (m, s, r) in forms]
    w(f"// run: k_tf32<<<1, {len(TF32_IN)}>>> buf:u32:{u32_list(TF32_IN)} buf:zero:{24 * len(TF32_IN)}")
    w(f"// expect: arg1 == u32:{u32_list(exp)}")
    w("")
    # --- cvt.pack.sat
    prologue(w, "k_pack", [".b32 %t, %a, %b, %c, %r", ".b64 %p, %o"], 12, [("%a", 0, "u32"), ("%b", 4, "u32"), ("%c", 8, "u32")], 32)
    ptypes = [("u16", 16, False), ("s16", 16, True), ("u8", 8, False), ("s8", 8, True), ("u4", 4, False), ("s4", 4, True), ("u2", 2, False), ("s2", 2, True)]
    for k, (ty, bits, _) in enumerate(ptypes):
        if bits == 16:
            w(f"\tcvt.pack.sat.{ty}.s32 %r, %a, %b;")
        else:
            w(f"\tcvt.pack.sat.{ty}.s32.b32 %r, %a, %b, %c;")
        w(f"\tst.global.u32 [%p+{4 * k}], %r;")
    w("\tret;")
    w("}")
    flat = [v for t in PACK_IN for v in t]
    exp = [pack(a, b, c, bits, sg) for (a, b, c) in PACK_IN for (_, bits, sg) in ptypes]
    w(f"// run: k_pack<<<1, {len(PACK_IN)}>>> buf:u32:{u32_list(flat)} buf:zero:{32 * len(PACK_IN)}")
    w(f"// expect: arg1 == u32:{u32_list(exp)}")
    w("")
    # --- bmsk
    prologue(w, "k_bmsk", [".b32 %t, %a, %b, %r", ".b64 %p, %o"], 8, [("%a", 0, "u32"), ("%b", 4, "u32")], 8)
    w("\tbmsk.clamp.b32 %r, %a, %b;")
    w("\tst.global.u32 [%p], %r;")
    w("\tbmsk.wrap.b32 %r, %a, %b;")
    w("\tst.global.u32 [%p+4], %r;")
    w("\tret;")
    w("}")
    flat = [v for t in BMSK_IN for v in t]
    exp = [bmsk(a, b, m) for (a, b) in BMSK_IN for m in ("clamp", "wrap")]
    w(f"// run: k_bmsk<<<1, {len(BMSK_IN)}>>> buf:u32:{u32_list(flat)} buf:zero:{8 * len(BMSK_IN)}")
    w(f"// expect: arg1 == u32:{u32_list(exp)}")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    with open(OUT, "w") as f:
        f.write(build())
    if "--gpu" in sys.argv:
        import subprocess
        # gpu_check.py runs every `// run:` line with CuPy and compares with the expectations.
        here = os.path.dirname(os.path.abspath(__file__))
        sys.exit(subprocess.call([sys.executable, os.path.join(here, "gpu_check.py"), OUT]))
