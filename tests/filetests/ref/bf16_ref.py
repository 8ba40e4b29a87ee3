#!/usr/bin/env python3
"""Independent reference for tests/filetests/cvt/bf16.ptx: f32 -> bf16 rounding computed with
exact rationals (the two bf16 neighbours of the value, the nearer one, ties to the even one),
not with the bit trick the compiler uses. Prints the expected u16/u32 lists."""
import struct
from fractions import Fraction

INPUTS = [0x3F800000, 0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0x7FC00001,
          0xC0200000, 0x00010001, 0x80000000, 0xFF800000, 0xBF808000, 0x7F800000]


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bf16_value(h):
    """Exact value of bf16 bits h (finite only)."""
    sign = -1 if h & 0x8000 else 1
    e = (h >> 7) & 0xFF
    m = h & 0x7F
    if e == 0:
        return sign * Fraction(m, 128) * Fraction(2) ** -126
    return sign * (1 + Fraction(m, 128)) * Fraction(2) ** (e - 127)


def is_nan(bits):
    return (bits & 0x7FFFFFFF) > 0x7F800000


def is_inf(bits):
    return (bits & 0x7FFFFFFF) == 0x7F800000


def exact(bits):
    sign = -1 if bits >> 31 else 1
    e = (bits >> 23) & 0xFF
    m = bits & 0x7FFFFF
    if e == 0:
        return sign * Fraction(m, 1 << 23) * Fraction(2) ** -126
    return sign * (1 + Fraction(m, 1 << 23)) * Fraction(2) ** (e - 127)


def round_bf16(bits, mode="rn", relu=False, satfinite=False):
    if is_nan(bits):
        return 0x7FFF
    if relu and (bits >> 31) and (bits & 0x7FFFFFFF):
        bits = 0
    neg = bits >> 31
    if is_inf(bits):
        r = 0xFF80 if neg else 0x7F80
    else:
        v = abs(exact(bits))
        # all non-negative finite bf16 magnitudes, plus infinity as the next step up
        lo = max(h for h in range(0x7F80) if bf16_value(h) <= v)
        hi = lo + 1
        if mode == "rz" or bf16_value(lo) == v:
            r = lo
        else:
            hv = Fraction(2) ** 128 if hi == 0x7F80 else bf16_value(hi)
            d_lo, d_hi = v - bf16_value(lo), hv - v
            r = lo if d_lo < d_hi or (d_lo == d_hi and lo % 2 == 0) else hi
        r |= 0x8000 if neg else 0
    if satfinite and (r & 0x7FFF) == 0x7F80:
        r = (r & 0x8000) | 0x7F7F
    return r


if __name__ == "__main__":
    h = lambda v: ",".join(f"0x{x:04x}" for x in v)
    print("rn:", h(round_bf16(b) for b in INPUTS))
    print("rz:", h(round_bf16(b, "rz") for b in INPUTS))
    print("rn.relu:", h(round_bf16(b, relu=True) for b in INPUTS))
    print("rn.satfinite:", h(round_bf16(b, satfinite=True) for b in INPUTS))
    n = len(INPUTS)
    print("rn.bf16x2:", ",".join(f"0x{(round_bf16(INPUTS[t]) << 16) | round_bf16(INPUTS[(t + 1) % n]):08x}" for t in range(n)))
    print("f32.bf16:", ",".join(f"0x{round_bf16(b) << 16:08x}" for b in INPUTS))
