#!/usr/bin/env python3
"""Writes tests/filetests/warp/tcgen05_f6.ptx: tcgen05.mma .kind::f8f6f4 with the 6-bit types
E2M3 and E3M2 (instruction-descriptor codes 3 and 4, as CUTLASS's MXF8F6F4Format numbers them)
next to e4m3 and E2M1, values worked here from the formats of PTX ISA 5.2.3.

Operands are K-major in shared memory. An 8-bit element takes a byte; the sub-byte ones take
the padded forms of PTX ISA 5.5.1.1.1 that the tensor copy makes: .b6x16_p32 (each 16
elements of a row's K packed into the first 12 bytes of a 16-byte chunk, element i at bits
6i..6i+5 from the low bit of the first byte, as the global data is packed) and .b4x16_p64
(8 bytes, element 2j in the low nibble of byte j); the padding bytes hold garbage. Every
product sum is exact in f32 in any order (checked here), so D is the exact sum.
"""
import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tcgen05_ref as base  # noqa: E402  (the kernel skeleton, descriptors, f32 encoding)

OUT = os.path.join(HERE, "..", "warp", "tcgen05_f6.ptx")
K = 32
CODES = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}


def value(ty, c):
    """The value of code c of format ty (PTX ISA 5.2.3; OCP MX formats)."""
    if ty == "e2m3":
        s, e, m = c >> 5, (c >> 3) & 3, c & 7
        v = Fraction(m, 8) if e == 0 else (1 + Fraction(m, 8)) * Fraction(2) ** (e - 1)
    elif ty == "e3m2":
        s, e, m = c >> 5, (c >> 2) & 7, c & 3
        v = Fraction(m, 4) / 4 if e == 0 else (1 + Fraction(m, 4)) * Fraction(2) ** (e - 3)
    elif ty == "e2m1":
        s, e, m = c >> 3, (c >> 1) & 3, c & 1
        v = Fraction(m, 2) if e == 0 else (1 + Fraction(m, 2)) * Fraction(2) ** (e - 1)
    elif ty == "e4m3":
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        assert (c & 0x7F) != 0x7F
        v = Fraction(m, 8) * Fraction(2) ** -6 if e == 0 else (1 + Fraction(m, 8)) * Fraction(2) ** (e - 7)
    else:
        raise ValueError(ty)
    return -v if s else v


def code(ty, r, c, salt):
    """A code of ty for element (r, c): every code of the 6- and 4-bit types occurs; e4m3
    codes keep to exponents 5..9 so that the sums stay exact."""
    h = (r * 7 + c * 13 + salt * 29 + (r * c) % 5) % 256
    if ty in ("e2m3", "e3m2"):
        return h % 64
    if ty == "e2m1":
        return h % 16
    return (h & 0x80) | ((5 + h % 5) << 3) | (h >> 3 & 7)


def row_bytes(ty, codes):
    """A row's K elements in shared memory (K bytes)."""
    out = bytearray()
    for c0 in range(0, K, 16):
        chunk = codes[c0:c0 + 16]
        if ty in ("e2m3", "e3m2"):
            bits = sum(v << (6 * i) for i, v in enumerate(chunk))
            out += bits.to_bytes(12, "little") + bytes([0xA5] * 4)
        elif ty == "e2m1":
            out += bytes(chunk[2 * j] | chunk[2 * j + 1] << 4 for j in range(8)) + bytes([0x5A] * 8)
        else:
            out += bytes(chunk)
    return out


def case(name, ta, tb, m, n):
    a = [[code(ta, r, c, 1) for c in range(K)] for r in range(m)]
    b = [[code(tb, j, c, 2) for c in range(K)] for j in range(n)]
    a_sbo, a_lbo = 128, (m // 8) * 128
    b_sbo, b_lbo = 128, (n // 8) * 128
    img = bytearray(9216)
    for r in range(m):
        for kb, byte in enumerate(row_bytes(ta, a[r])):
            img[base.kmajor(r, kb, 1, a_sbo, a_lbo)] = byte
    for j in range(n):
        for kb, byte in enumerate(row_bytes(tb, b[j])):
            img[8192 + base.kmajor(j, kb, 1, b_sbo, b_lbo)] = byte
    idesc = 1 << 4 | CODES[ta] << 7 | CODES[tb] << 10 | (n >> 3) << 17 | (m >> 4) << 24

    def desc(addr, lbo, sbo):
        return (addr >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46

    out = []
    per = n if m == 128 else n // 2
    d = []
    for r in range(m):
        row = []
        for j in range(n):
            prods = [value(ta, a[r][c]) * value(tb, b[j][c]) for c in range(K)]
            exact = sum(prods)
            # exact in f32 in any order: every partial sum is a multiple of the smallest
            # product's unit below 2^24 of them
            unit = max((p.denominator for p in prods if p), default=1)
            assert sum(abs(p) for p in prods) * unit < 2 ** 24, (name, r, j)
            row.append(float(exact))
        d.append(row)
    for t in range(128):
        w, l = t // 32, t % 32
        for i in range(per):
            row, col = (t, i) if m == 128 else (16 * w + l % 16, i + (l // 16) * per)
            out.append(base.f32(d[row][col]))
    return dict(name=name, kind="f8f6f4", m=m, n=n, img=img, idesc=idesc, adesc=desc(0, a_lbo, a_sbo),
                bdesc=desc(8192, b_lbo, b_sbo), twice=False, per=per, out=out, ta=ta, tb=tb)


HEAD = """// tcgen05.mma .kind::f8f6f4 with the 6-bit types E2M3 and E3M2 (PTX ISA 9.0 9.7.16, sm_100a), in
// shared memory in the padded form .b6x16_p32, next to e4m3 and E2M1 (.b4x16_p64). Expected
// values computed from the formats' definitions by tests/filetests/ref/tcgen05_f6_ref.py (its
// docstring gives the layouts), independently of ptxr; do not edit by hand.
.version 8.7
.target sm_100a
.address_size 64
"""


def main():
    parts = [HEAD]
    cases = [case("mma_e2m3_e3m2", "e2m3", "e3m2", 128, 16),
             case("mma_e3m2_e4m3", "e3m2", "e4m3", 128, 8),
             case("mma_e2m1_e2m3", "e2m1", "e2m3", 64, 16)]
    for c in cases:
        words = [int.from_bytes(c["img"][i:i + 4], "little") for i in range(0, len(c["img"]), 4)]
        parts.append(f"// {c['name']}: M {c['m']}, N {c['n']}, A {c['ta']}, B {c['tb']}, idesc {c['idesc']:#x}")
        parts.append(base.mma_kernel(c))
        parts.append(f"// run: {c['name']}<<<1, 128>>> buf:u32:" + ",".join(str(w) for w in words) +
                     f" buf:zero:{128 * 4 * c['per']}")
        parts.append("// expect: arg1 == u32:" + ",".join(str(v) for v in c["out"]))
    with open(OUT, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
