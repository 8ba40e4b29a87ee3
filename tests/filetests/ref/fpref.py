"""Exact IEEE-754 reference arithmetic for ptxr's float/half/cvt filetests.

Everything is computed with fractions.Fraction and rounded explicitly to f16/f32/f64 bit
patterns; nothing here uses ptxr or the host FPU's rounding (struct is only used to turn
Python floats into bit patterns for inputs). Semantics follow PTX ISA 6.4 sections 9.7.3,
9.7.4, 9.7.6 and 9.7.8.14.

NaN conventions (what the tests expect; see the .ptx headers for which were GPU-verified):
  f32 arithmetic producing or receiving NaN -> canonical 0x7fffffff
  f16 arithmetic                             -> canonical 0x7fff
  f64 invalid operation (inf-inf, 0*inf ...) -> 0xfff8000000000000 (no NaN inputs tested)
"""
from fractions import Fraction as Fr
import math
import struct


class Fmt:
    def __init__(self, name, ebits, mbits):
        self.name, self.ebits, self.mbits = name, ebits, mbits
        self.bias = (1 << (ebits - 1)) - 1
        self.emin = 1 - self.bias
        self.emax = self.bias
        self.width = 1 + ebits + mbits
        self.max = (2 - Fr(1, 1 << mbits)) * Fr(2) ** self.emax
        self.inf = ((1 << ebits) - 1) << mbits
        self.sign = 1 << (ebits + mbits)


F16 = Fmt("f16", 5, 10)
F32 = Fmt("f32", 8, 23)
F64 = Fmt("f64", 11, 52)
CANON = {"f16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0xFFF8000000000000}


def nan_out(f, *ops):
    """NaN result: f64 propagates a NaN operand (quieted), otherwise the default NaN
    0xfff8000000000000; f32/f16 always give their canonical NaN (GPU-verified on H100)."""
    if f.name == "f64":
        for x in reversed(ops):  # the last NaN operand wins (GPU: mul/min of two NaNs -> second)
            if is_nan(x, f):
                return x | (1 << 51)
    return CANON[f.name]


def decode(bits, f):
    """-> ('nan',) | ('inf', s) | ('fin', s, Fraction magnitude)"""
    s = bits >> (f.ebits + f.mbits) & 1
    e = bits >> f.mbits & ((1 << f.ebits) - 1)
    m = bits & ((1 << f.mbits) - 1)
    if e == (1 << f.ebits) - 1:
        return ("nan",) if m else ("inf", s)
    if e == 0:
        return ("fin", s, Fr(m) * Fr(2) ** (f.emin - f.mbits))
    return ("fin", s, Fr(m + (1 << f.mbits)) * Fr(2) ** (e - f.bias - f.mbits))


def value(bits, f):
    d = decode(bits, f)
    if d[0] != "fin":
        return None
    return -d[2] if d[1] else d[2]


def floor_log2(x):
    """floor(log2(x)) for a positive Fraction."""
    n, d = x.numerator, x.denominator
    e = n.bit_length() - d.bit_length()
    if Fr(2) ** e > x:
        e -= 1
    elif Fr(2) ** (e + 1) <= x:
        e += 1
    return e


def round_int(x, mode):
    """Round Fraction x to an integer: 'rn' (ties even), 'rz', 'rm', 'rp'."""
    fl = math.floor(x)
    r = x - fl
    if r == 0:
        return fl
    if mode == "rz":
        return fl if x > 0 else fl + 1
    if mode == "rm":
        return fl
    if mode == "rp":
        return fl + 1
    if r > Fr(1, 2) or (r == Fr(1, 2) and fl % 2 == 1):
        return fl + 1
    return fl


def encode(sign, mag, f):
    """Exact finite magnitude (representable) -> bits."""
    sb = f.sign if sign else 0
    if mag == 0:
        return sb
    e = floor_log2(mag)
    if e < f.emin:
        m = mag / Fr(2) ** (f.emin - f.mbits)
        assert m.denominator == 1
        return sb | int(m)
    m = mag / Fr(2) ** (e - f.mbits)
    assert m.denominator == 1, (mag, f.name)
    return sb | ((e + f.bias) << f.mbits) | (int(m) - (1 << f.mbits))


def round_to(x, f, mode, zero_sign=0):
    """Round an exact Fraction x (may be 0; zero_sign gives the sign of an exact 0)."""
    if x == 0:
        return f.sign if zero_sign else 0
    sign = 1 if x < 0 else 0
    mag = -x if sign else x
    e = max(floor_log2(mag), f.emin)
    q = Fr(2) ** (e - f.mbits)
    # directed modes on the magnitude
    m = {"rn": "rn", "rz": "rz", "rm": "rp" if sign else "rz", "rp": "rz" if sign else "rp"}[mode]
    n = round_int(mag / q, m)
    r = n * q
    if r > f.max:
        away = mode == "rn" or (mode == "rp" and not sign) or (mode == "rm" and sign)
        return (f.sign if sign else 0) | (f.inf if away else encode(0, f.max, f))
    return encode(sign, r, f)


def ftz(bits, f):
    if (bits >> f.mbits) & ((1 << f.ebits) - 1) == 0:
        return bits & f.sign
    return bits


def is_nan(bits, f):
    return decode(bits, f)[0] == "nan"


def sat(bits, f):
    d = decode(bits, f)
    if d[0] == "nan":
        return 0
    v = value(bits, f) if d[0] == "fin" else (-1 if d[1] else 2)
    if v <= 0:
        return 0
    if v >= 1:
        return encode(0, Fr(1), f)
    return bits


# ------------------------------------------------------------------ operations
# Each takes bit patterns and returns bit patterns.

def _ext(bits, f):
    """-> ('nan',) | ('inf', s) | ('fin', s, signed Fraction)"""
    d = decode(bits, f)
    if d[0] == "fin":
        return ("fin", d[1], -d[2] if d[1] else d[2])
    return d


def add(a, b, f, mode="rn"):
    A, B = _ext(a, f), _ext(b, f)
    if A[0] == "nan" or B[0] == "nan":
        return nan_out(f, a, b)
    if A[0] == "inf" or B[0] == "inf":
        if A[0] == "inf" and B[0] == "inf" and A[1] != B[1]:
            return CANON[f.name]
        s = A[1] if A[0] == "inf" else B[1]
        return (f.sign if s else 0) | f.inf
    x = A[2] + B[2]
    if x == 0:
        if A[2] == 0 and B[2] == 0:
            zs = (A[1] | B[1]) if mode == "rm" else (A[1] & B[1])
        else:
            zs = 1 if mode == "rm" else 0
        return round_to(x, f, mode, zs)
    return round_to(x, f, mode)


def neg(a, f):
    return a ^ f.sign


def sub(a, b, f, mode="rn"):
    return add(a, b ^ f.sign, f, mode)


def mul(a, b, f, mode="rn"):
    A, B = _ext(a, f), _ext(b, f)
    if A[0] == "nan" or B[0] == "nan":
        return nan_out(f, a, b)
    s = A[1] ^ B[1]
    if A[0] == "inf" or B[0] == "inf":
        other = B if A[0] == "inf" else A
        if other[0] == "fin" and other[2] == 0:
            return CANON[f.name]
        return (f.sign if s else 0) | f.inf
    return round_to(A[2] * B[2], f, mode, s)


def fma(a, b, c, f, mode="rn"):
    A, B, C = _ext(a, f), _ext(b, f), _ext(c, f)
    if "nan" in (A[0], B[0], C[0]):
        return nan_out(f, a, b, c)
    ps = A[1] ^ B[1]
    if A[0] == "inf" or B[0] == "inf":
        other = B if A[0] == "inf" else A
        if other[0] == "fin" and other[2] == 0:
            return CANON[f.name]
        if C[0] == "inf" and C[1] != ps:
            return CANON[f.name]
        return (f.sign if ps else 0) | f.inf
    if C[0] == "inf":
        return (f.sign if C[1] else 0) | f.inf
    p = A[2] * B[2]
    x = p + C[2]
    if x == 0:
        if p == 0 and C[2] == 0:
            zs = (ps | C[1]) if mode == "rm" else (ps & C[1])
        else:
            zs = 1 if mode == "rm" else 0
        return round_to(x, f, mode, zs)
    return round_to(x, f, mode)


def div(a, b, f, mode="rn"):
    A, B = _ext(a, f), _ext(b, f)
    if A[0] == "nan" or B[0] == "nan":
        return nan_out(f, a, b)
    s = A[1] ^ B[1]
    sb = f.sign if s else 0
    if A[0] == "inf":
        return CANON[f.name] if B[0] == "inf" else sb | f.inf
    if B[0] == "inf":
        return sb
    if B[2] == 0:
        return CANON[f.name] if A[2] == 0 else sb | f.inf
    return round_to(A[2] / B[2], f, mode, s)


def isqrt_frac_round(x, f, mode):
    """Correctly rounded sqrt of a positive Fraction x."""
    e = floor_log2(x)
    # result exponent ~ e/2; compute floor(sqrt(x) / q) exactly with integer sqrt
    re = max(e // 2, f.emin)
    q = Fr(2) ** (re - f.mbits - 2)  # two extra bits
    # n = floor(sqrt(x)/q) = floor(sqrt(x/q^2))
    y = x / (q * q)
    n = math.isqrt(y.numerator // y.denominator)
    exact = Fr(n * n) == y
    # represent sqrt as n*q (+ sticky)
    val = n * q
    sticky = Fr(0) if exact else q / 4  # strictly between n*q and (n+1)*q
    return round_to(val + sticky, f, mode)


def sqrt(a, f, mode="rn"):
    A = _ext(a, f)
    if A[0] == "nan":
        return nan_out(f, a)
    if A[0] == "inf":
        return CANON[f.name] if A[1] else f.inf
    if A[2] == 0:
        return a
    if A[2] < 0:
        return CANON[f.name]
    return isqrt_frac_round(A[2], f, mode)


def min_(a, b, f):
    if is_nan(a, f) and is_nan(b, f):
        return nan_out(f, a, b)
    if is_nan(a, f):
        return b
    if is_nan(b, f):
        return a
    va, vb = _num(a, f), _num(b, f)
    if va == vb == 0:
        return a | b
    return a if va < vb else b


def max_(a, b, f):
    if is_nan(a, f) and is_nan(b, f):
        return nan_out(f, a, b)
    if is_nan(a, f):
        return b
    if is_nan(b, f):
        return a
    va, vb = _num(a, f), _num(b, f)
    if va == vb == 0:
        return a & b
    return a if va > vb else b


def _num(bits, f):
    d = _ext(bits, f)
    if d[0] == "inf":
        return float("-inf") if d[1] else float("inf")
    return d[2]


def convert(bits, fa, fd, mode="rn"):
    """Float -> float conversion (exact value rounded). NaN (GPU-verified): f64->f32 keeps the
    sign and the top payload bits (quiet); f32->f64 and f16->f64 keep the payload; f64->f16 gives
    0x7e00; f16->f32 and f32->f16 give the canonical NaN."""
    A = _ext(bits, fa)
    if A[0] == "nan":
        if fa.name == "f64" and fd.name == "f32":
            return (bits >> 32 & 0x80000000) | 0x7FC00000 | (bits & ((1 << 52) - 1)) >> 29
        if fa.name == "f32" and fd.name == "f64":
            return (bits & 0x80000000) << 32 | 0x7FF8000000000000 | (bits & 0x7FFFFF) << 29
        if fa.name == "f16" and fd.name == "f64":
            return (bits & 0x8000) << 48 | 0x7FF8000000000000 | (bits & 0x3FF) << 42
        if fa.name == "f64" and fd.name == "f16":
            return 0x7E00
        return CANON[fd.name]
    if A[0] == "inf":
        return (fd.sign if A[1] else 0) | fd.inf
    return round_to(A[2], fd, mode, A[1])


def to_int(bits, f, mode, ibits, signed):
    """Float -> integer: round, saturate. NaN (GPU-verified): 0, except 1 << (ibits-1) for f64
    sources and for 64-bit destinations. Returns the integer's bit pattern."""
    A = _ext(bits, f)
    lo, hi = (-(1 << (ibits - 1)), (1 << (ibits - 1)) - 1) if signed else (0, (1 << ibits) - 1)
    if A[0] == "nan":
        v = (1 << (ibits - 1)) if (f.name == "f64" or ibits == 64) else 0
    elif A[0] == "inf":
        v = lo if A[1] else hi
    else:
        v = min(max(round_int(A[2], mode), lo), hi)
    return v & ((1 << ibits) - 1)


def round_integral(bits, f, mode):
    """cvt.rXi.fN.fN: round to an integral value in the same format."""
    A = _ext(bits, f)
    if A[0] == "nan":
        return nan_out(f, bits)
    if A[0] == "inf":
        return bits
    r = round_int(A[2], mode)
    return round_to(Fr(r), f, "rn", A[1])


def from_int(v, fd, mode):
    return round_to(Fr(v), fd, mode)


# ------------------------------------------------------------------ helpers

def f32b(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64b(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f64v(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def f32v(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bits_of(x, f):
    """Exact Fraction/int/float x rounded to nearest in format f."""
    if isinstance(x, float):
        if math.isnan(x):
            return CANON[f.name]
        if math.isinf(x):
            return (f.sign if x < 0 else 0) | f.inf
        if x == 0:
            return f.sign if math.copysign(1, x) < 0 else 0
        x = Fr(x)
    return round_to(Fr(x), f, "rn")
