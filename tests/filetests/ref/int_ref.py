#!/usr/bin/env python3
"""Reference generator for tests/filetests/int/*.ptx and tests/filetests/bits/*.ptx
(except int/add_sub.ptx, written by hand).

Each test kernel loads per-lane inputs (indexed by %tid.x), runs PTX snippets and stores
every result at out[tid*NOUT + j]. Expected values are computed here with Python ints,
transcribing the PTX ISA 6.4 semantics/pseudo-code of each instruction (sections cited
below) -- never from ptxr.

    python3 tests/filetests/ref/int_ref.py          # rewrite the .ptx files
    python3 tests/filetests/ref/int_ref.py --gpu    # run every kernel with CuPy on a GPU and
                                                    # compare with the expectations
"""
import math
import os
import struct
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def M(w):
    return (1 << w) - 1


def U(x, w):
    return x & M(w)


def S(x, w):
    x &= M(w)
    return x - (1 << w) if x >> (w - 1) else x


def sat(x, w):
    return max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, x))


def bit(x, i):
    return (x >> i) & 1


def f32(x):  # bits -> float
    return struct.unpack("<f", struct.pack("<I", x & M(32)))[0]


def F(v):  # float -> bits
    return struct.unpack("<I", struct.pack("<f", v))[0]


NAN = 0x7FC00000
SUBN = 0x00000001  # smallest positive subnormal
NSUBN = 0x80000001

# ------------------------------------------------------------------------------ semantics


def mul_lo(a, b, w):  # 9.7.1.3
    return U(a * b, w)


def mul_hi(a, b, w, s):
    if s:
        a, b = S(a, w), S(b, w)
    return U((a * b) >> w, w)


def mul_wide(a, b, w, s):
    if s:
        a, b = S(a, w), S(b, w)
    return U(a * b, 2 * w)


def mad_hi_sat(a, b, c):  # 9.7.1.4 mad.hi.sat.s32: MININT..MAXINT
    return U(sat(((S(a, 32) * S(b, 32)) >> 32) + S(c, 32), 32), 32)


def m24(x, s):
    x &= M(24)
    return S(x, 24) if s else x


def mul24(a, b, s, hi):  # 9.7.1.5: t = a*b (48 bits); .hi t<47..16>, .lo t<31..0>
    t = U(m24(a, s) * m24(b, s), 48)
    return (t >> 16) & M(32) if hi else t & M(32)


def mad24(a, b, c, s, hi, sat_=False):  # 9.7.1.6
    t = mul24(a, b, s, hi)
    if sat_:
        return U(sat(S(t, 32) + S(c, 32), 32), 32)
    return U(t + c, 32)


def sad(a, b, c, w, s):  # 9.7.1.7
    x, y = (S(a, w), S(b, w)) if s else (a, b)
    return U(c + ((y - x) if x < y else (x - y)), w)


def div(a, b, w, s):  # 9.7.1.8, truncating; MIN/-1 wraps
    if s:
        a, b = S(a, w), S(b, w)
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return U(q, w)


def rem(a, b, w, s):  # 9.7.1.9: a - trunc(a/b)*b (sign of the dividend)
    x, y = (S(a, w), S(b, w)) if s else (a, b)
    q = S(div(a, b, w, s), w) if s else div(a, b, w, s)
    if s and x == -(1 << (w - 1)) and y == -1:
        return 0
    return U(x - q * y, w)


def popc(a):  # 9.7.1.14
    return bin(a).count("1")


def clz(a, w):  # 9.7.1.15
    d, mask = 0, 1 << (w - 1)
    while d < w and (a & mask) == 0:
        d += 1
        a = (a << 1) & M(w)
    return d


def bfind(a, w, s, shiftamt):  # 9.7.1.16 pseudo-code
    msb = w - 1
    if s and a & (1 << msb):
        a = ~a & M(w)
    d = 0xFFFFFFFF
    for i in range(msb, -1, -1):
        if a & (1 << i):
            d = i
            break
    if shiftamt and d != 0xFFFFFFFF:
        d = msb - d
    return d


def fns(mask, base, offset):  # 9.7.1.17 pseudo-code
    offset = S(offset, 32)
    if offset == -(1 << 31):
        return 0  # measured on an H100 (tests/filetests/gpu): INT_MIN gives 0, not the pseudo-code's 0xffffffff
    d = 0xFFFFFFFF
    if offset == 0:
        if bit(mask, base) == 1:
            d = base
    else:
        pos = base
        count = abs(offset) - 1
        inc = 1 if offset > 0 else -1
        while 0 <= pos < 32:
            if bit(mask, pos) == 1:
                if count == 0:
                    d = pos
                    break
                count -= 1
            pos += inc
    return d


def brev(a, w):  # 9.7.1.18
    return sum(bit(a, w - 1 - i) << i for i in range(w))


def bfe(a, b, c, w, s):  # 9.7.1.19 pseudo-code
    msb = w - 1
    # The pseudo-code masks with 0xff; the H100 does so for 32-bit types only (tests/filetests/gpu).
    pos, ln = (b & 0xFF, c & 0xFF) if w == 32 else (b, c)
    sbit = 0 if (not s or ln == 0) else bit(a, min(pos + ln - 1, msb))
    d = 0
    for i in range(msb + 1):
        d |= (bit(a, pos + i) if (i < ln and pos + i <= msb) else sbit) << i
    return d


def bfi(a, b, c, d, w):  # 9.7.1.20 pseudo-code
    msb = w - 1
    pos, ln = (c & 0xFF, d & 0xFF) if w == 32 else (c, d)
    f = b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (bit(a, i) << (pos + i))
        i += 1
    return f


def ext(x, n, bits, s):  # extractAndSignOrZeroExt_n
    return [S(x >> (bits * i), bits) if s else U(x >> (bits * i), bits) for i in range(n)]


def dp4a(a, b, c, sa, sb):  # 9.7.1.21
    va, vb = ext(a, 4, 8, sa), ext(b, 4, 8, sb)
    return U(c + sum(va[i] * vb[i] for i in range(4)), 32)


def dp2a(a, b, c, sa, sb, hi):  # 9.7.1.22
    va, vb = ext(a, 2, 16, sa), ext(b, 4, 8, sb)
    sel = 2 if hi else 0
    return U(c + sum(va[i] * vb[sel + i] for i in range(2)), 32)


def lop3(a, b, c, lut):  # 9.7.7.6: immLut = F(0xF0, 0xCC, 0xAA)
    d = 0
    for i in range(32):
        k = (bit(a, i) << 2) | (bit(b, i) << 1) | bit(c, i)
        d |= bit(lut, k) << i
    return d


def shf(a, b, c, left, clamp):  # 9.7.7.7 pseudo-code, [b, a] as a 64-bit value
    n = min(c, 32) if clamp else c & 0x1F
    if left:
        return U(((b << n) | (a >> (32 - n))), 32)
    return U((b << (32 - n)) | (a >> n), 32)


def shl(a, b, w):  # 9.7.7.8: amounts > N clamped to N
    return U(a << min(b, w), w)


def shr(a, b, w, s):  # 9.7.7.9
    x = S(a, w) if s else a
    return U(x >> min(b, w), w)


# 9.7.8.6 prmt: the mode table, transcribed row by row as (d.b3, d.b2, d.b1, d.b0)
PRMT_TABLE = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


def prmt(a, b, c, mode=None):
    tmp64 = (b << 32) | a
    byte = lambda k: (tmp64 >> (8 * k)) & 0xFF
    d = 0
    if mode is None:
        for k in range(4):
            sel = (c >> (4 * k)) & 0xF
            v = byte(sel & 7)
            if sel & 8:
                v = 0xFF if v & 0x80 else 0
            d |= v << (8 * k)
    else:
        row = PRMT_TABLE[mode][c & 3]
        for k in range(4):
            d |= byte(row[3 - k]) << (8 * k)
    return d


def icmp(op, a, b, w, s):  # 9.7.5 integer CmpOp
    if s:
        a, b = S(a, w), S(b, w)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
            "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}[op]


def ftz(x):
    return x & 0x80000000 if (x & 0x7F800000) == 0 else x


def fcmp(op, a, b, flush=False):  # 9.7.5 float CmpOp
    if flush:
        a, b = ftz(a), ftz(b)
    x, y = f32(a), f32(b)
    un = math.isnan(x) or math.isnan(y)
    base = {"eq": x == y, "ne": x != y and not un, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    if op in base:
        return base[op]
    if op == "num":
        return not un
    if op == "nan":
        return un
    return un or base[op[:-1]]


def boolop(op, t, c):
    return {"and": t and c, "or": t or c, "xor": t != c}[op]


# ------------------------------------------------------------------------------ test kernels

REG = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}


class Kernel:
    """inputs: [(name, width, count, [per-lane tuples or values])]; outs: (width, [(lines, ref)])."""

    def __init__(self, name, inputs, ow, entries, note=""):
        self.name, self.inputs, self.ow, self.entries, self.note = "k_" + name, inputs, ow, entries, note
        self.lanes = len(inputs[0][3])
        self.nout = sum(len(e[2]) if len(e) > 2 else 1 for e in entries)

    def ptx(self):
        ps = ", ".join(f".param .u64 p_{n}" for n, *_ in self.inputs) + ", .param .u64 p_out"
        L = [f".visible .entry {self.name}({ps})", "{",
             "\t.reg .b32 %lane;", "\t.reg .b32 %t<16>;", "\t.reg .b64 %ptr, %off, %addr;", "\t.reg .b64 %u<16>;",
             "\t.reg .b16 %h<16>;", "\t.reg .pred %p<16>;", "\t.reg .f32 %f<8>;"]
        for n, w, cnt, _ in self.inputs:
            regs = ", ".join(f"%{n}{k}" for k in range(cnt))
            L.append(f"\t.reg .{REG[w]} {regs};")
        L.append(f"\t.reg .{REG[self.ow]} %o<{self.nout}>;")
        L.append("\tmov.u32 %lane, %tid.x;")
        for n, w, cnt, _ in self.inputs:
            L += [f"\tld.param.u64 %ptr, [p_{n}];", f"\tmul.wide.u32 %off, %lane, {w // 8 * cnt};",
                  "\tadd.s64 %addr, %ptr, %off;"]
            for k in range(cnt):
                L.append(f"\tld.global.u{w} %{n}{k}, [%addr+{k * w // 8}];")
        j = 0
        for e in self.entries:
            lines = e[0]
            n = len(e[2]) if len(e) > 2 else 1
            sub = {f"o{k}": f"%o{j + k}" for k in range(n)}
            sub["o"] = f"%o{j}"
            for n_, w, cnt, _ in self.inputs:
                for k in range(cnt):
                    sub[f"{n_}{k}"] = f"%{n_}{k}"
                sub[n_] = f"%{n_}0"
            for ln in lines:
                L.append("\t" + ln.format(**sub))
            j += n
        L += ["\tld.param.u64 %ptr, [p_out];", f"\tmul.wide.u32 %off, %lane, {self.ow // 8 * self.nout};",
              "\tadd.s64 %addr, %ptr, %off;"]
        for k in range(self.nout):
            L.append(f"\tst.global.u{self.ow} [%addr+{k * self.ow // 8}], %o{k};")
        L += ["\tret;", "}"]
        return "\n".join(L)

    def expected(self):
        out = []
        for lane in range(self.lanes):
            vals = {}
            for n, w, cnt, data in self.inputs:
                v = data[lane]
                v = v if isinstance(v, tuple) else (v,)
                for k in range(cnt):
                    vals[f"{n}{k}"] = U(v[k], w)
                vals[n] = vals[f"{n}0"]
            for e in self.entries:
                r = e[1](vals)
                r = r if isinstance(r, (list, tuple)) else [r]
                out += [U(int(x), self.ow) for x in r]
        return out

    def run_line(self):
        args = []
        for n, w, cnt, data in self.inputs:
            flat = []
            for v in data:
                v = v if isinstance(v, tuple) else (v,)
                flat += [U(x, w) for x in v]
            args.append(f"buf:u{w}:" + ",".join(hex(x) for x in flat))
        args.append(f"buf:zero:{self.lanes * self.nout * self.ow // 8}")
        exp = self.expected()
        return (f"// run: {self.name}<<<1, {self.lanes}>>> " + " ".join(args) + "\n"
                + f"// expect: arg{len(self.inputs)} == u{self.ow}:" + ",".join(hex(x) for x in exp))


def E(lines, ref, outs=None):
    """A result: PTX lines writing {o} (or {o0}.. for several), and its reference."""
    lines = [lines] if isinstance(lines, str) else lines
    return (lines, ref) if outs is None else (lines, ref, list(range(outs)))


I32 = [0, 1, 2, 7, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678, 0xDEADBEEF, 0x00010000, 0x8000FFFF]
I32B = [3, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x80000000, 0x80000000, 2, 0x80000001, 0x9ABCDEF0, 0x1000, 0xFFFF0000, 0x7FFF0001]
I16 = [0, 1, 0x7FFF, 0x8000, 0xFFFF, 0xFFFE, 0x1234, 0xBEEF]
I16B = [5, 0xFFFF, 0x7FFF, 0xFFFF, 0x8000, 0x0003, 0x00FF, 0x8001]
I64 = [0, 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, M(64), 0x123456789ABCDEF0, 0xFFFFFFFF00000000, 0xDEADBEEFCAFEBABE]
I64B = [7, M(64), 0x8000000000000000, M(64), 0x7FFFFFFFFFFFFFFF, 0xFEDCBA9876543210, 0x100000000, 0x8000000000000001]


def files():
    T = {}
    ab32 = lambda: [("a", 32, 1, I32), ("b", 32, 1, I32B)]
    ab16 = lambda: [("a", 16, 1, I16), ("b", 16, 1, I16B)]
    ab64 = lambda: [("a", 64, 1, I64), ("b", 64, 1, I64B)]

    # ---------------------------------------------------------------- int/mul.ptx 9.7.1.3
    T["int/mul"] = ("PTX ISA 9.7.1.3 mul: .lo/.hi/.wide for 16/32/64-bit, signed and unsigned (hi of negatives).", [
        Kernel("mul32", ab32(), 32, [
            E("mul.lo.u32 {o}, {a}, {b};", lambda v: mul_lo(v["a"], v["b"], 32)),
            E("mul.lo.s32 {o}, {a}, {b};", lambda v: mul_lo(v["a"], v["b"], 32)),
            E("mul.hi.u32 {o}, {a}, {b};", lambda v: mul_hi(v["a"], v["b"], 32, False)),
            E("mul.hi.s32 {o}, {a}, {b};", lambda v: mul_hi(v["a"], v["b"], 32, True)),
            E("mul.lo.u32 {o}, {a}, 0xfffffffd;", lambda v: mul_lo(v["a"], -3, 32)),
            E("mul.hi.s32 {o}, {a}, -3;", lambda v: mul_hi(v["a"], -3, 32, True)),
        ]),
        Kernel("mul32w", ab32(), 64, [
            E("mul.wide.u32 {o}, {a}, {b};", lambda v: mul_wide(v["a"], v["b"], 32, False)),
            E("mul.wide.s32 {o}, {a}, {b};", lambda v: mul_wide(v["a"], v["b"], 32, True)),
        ]),
        Kernel("mul16", ab16(), 16, [
            E("mul.lo.u16 {o}, {a}, {b};", lambda v: mul_lo(v["a"], v["b"], 16)),
            E("mul.hi.u16 {o}, {a}, {b};", lambda v: mul_hi(v["a"], v["b"], 16, False)),
            E("mul.hi.s16 {o}, {a}, {b};", lambda v: mul_hi(v["a"], v["b"], 16, True)),
        ]),
        Kernel("mul16w", ab16(), 32, [
            E("mul.wide.u16 {o}, {a}, {b};", lambda v: mul_wide(v["a"], v["b"], 16, False)),
            E("mul.wide.s16 {o}, {a}, {b};", lambda v: mul_wide(v["a"], v["b"], 16, True)),
        ]),
        Kernel("mul64", ab64(), 64, [
            E("mul.lo.u64 {o}, {a}, {b};", lambda v: mul_lo(v["a"], v["b"], 64)),
            E("mul.hi.u64 {o}, {a}, {b};", lambda v: mul_hi(v["a"], v["b"], 64, False)),
            E("mul.hi.s64 {o}, {a}, {b};", lambda v: mul_hi(v["a"], v["b"], 64, True)),
        ]),
    ])

    # ---------------------------------------------------------------- int/add_sub_widths.ptx 9.7.1.1-2
    T["int/add_sub_widths"] = ("PTX ISA 9.7.1.1 add / 9.7.1.2 sub on 16- and 64-bit types (wrap-around), .sat.s32 bounds.", [
        Kernel("addsub16", ab16(), 16, [
            E("add.u16 {o}, {a}, {b};", lambda v: U(v["a"] + v["b"], 16)),
            E("add.s16 {o}, {a}, {b};", lambda v: U(v["a"] + v["b"], 16)),
            E("sub.u16 {o}, {a}, {b};", lambda v: U(v["a"] - v["b"], 16)),
            E("sub.s16 {o}, {a}, 1;", lambda v: U(v["a"] - 1, 16)),
        ]),
        Kernel("addsub64", ab64(), 64, [
            E("add.u64 {o}, {a}, {b};", lambda v: U(v["a"] + v["b"], 64)),
            E("add.s64 {o}, {a}, {b};", lambda v: U(v["a"] + v["b"], 64)),
            E("sub.u64 {o}, {a}, {b};", lambda v: U(v["a"] - v["b"], 64)),
            E("sub.s64 {o}, {a}, {b};", lambda v: U(v["a"] - v["b"], 64)),
        ]),
        Kernel("addsubsat", ab32(), 32, [
            E("add.sat.s32 {o}, {a}, {b};", lambda v: U(sat(S(v["a"], 32) + S(v["b"], 32), 32), 32)),
            E("sub.sat.s32 {o}, {a}, {b};", lambda v: U(sat(S(v["a"], 32) - S(v["b"], 32), 32), 32)),
            E("add.sat.s32 {o}, {a}, 1;", lambda v: U(sat(S(v["a"], 32) + 1, 32), 32)),
            E("sub.sat.s32 {o}, {a}, 1;", lambda v: U(sat(S(v["a"], 32) - 1, 32), 32)),
        ]),
    ])

    # ---------------------------------------------------------------- int/mad.ptx 9.7.1.4
    C32 = [5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x7FFFFFFF, 0x80000000, 1, 0xFFFFFFF0, 0x3FFFFFFF, 0x12345678]
    C64 = [5, M(64), 0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 1 << 40, 0xFFFFFFFF00000001, 3, 0x0123456789ABCDEF]
    C16 = [0x1234, 0x7FFF, 0x8000, 0xFFFF, 1, 0x00FF, 0xFF00, 0x4321]
    T["int/mad"] = ("PTX ISA 9.7.1.4 mad: .lo/.hi/.wide, mad.hi.sat.s32 (sum of t<63..32> and c clamped to MININT..MAXINT).", [
        Kernel("mad32", ab32() + [("c", 32, 1, C32)], 32, [
            E("mad.lo.u32 {o}, {a}, {b}, {c};", lambda v: U(v["a"] * v["b"] + v["c"], 32)),
            E("mad.lo.s32 {o}, {a}, {b}, {c};", lambda v: U(v["a"] * v["b"] + v["c"], 32)),
            E("mad.hi.u32 {o}, {a}, {b}, {c};", lambda v: U(mul_hi(v["a"], v["b"], 32, False) + v["c"], 32)),
            E("mad.hi.s32 {o}, {a}, {b}, {c};", lambda v: U(mul_hi(v["a"], v["b"], 32, True) + v["c"], 32)),
            E("mad.hi.sat.s32 {o}, {a}, {b}, {c};", lambda v: mad_hi_sat(v["a"], v["b"], v["c"])),
        ]),
        Kernel("mad32w", ab32() + [("c", 64, 1, C64 + C64[:4])], 64, [
            E("mad.wide.u32 {o}, {a}, {b}, {c};", lambda v: U(mul_wide(v["a"], v["b"], 32, False) + v["c"], 64)),
            E("mad.wide.s32 {o}, {a}, {b}, {c};", lambda v: U(mul_wide(v["a"], v["b"], 32, True) + v["c"], 64)),
        ]),
        Kernel("mad16", ab16() + [("c", 16, 1, C16)], 16, [
            E("mad.lo.s16 {o}, {a}, {b}, {c};", lambda v: U(v["a"] * v["b"] + v["c"], 16)),
            E("mad.hi.u16 {o}, {a}, {b}, {c};", lambda v: U(mul_hi(v["a"], v["b"], 16, False) + v["c"], 16)),
            E("mad.hi.s16 {o}, {a}, {b}, {c};", lambda v: U(mul_hi(v["a"], v["b"], 16, True) + v["c"], 16)),
        ]),
        Kernel("mad16w", ab16() + [("c", 32, 1, C32[:8])], 32, [
            E("mad.wide.u16 {o}, {a}, {b}, {c};", lambda v: U(mul_wide(v["a"], v["b"], 16, False) + v["c"], 32)),
            E("mad.wide.s16 {o}, {a}, {b}, {c};", lambda v: U(mul_wide(v["a"], v["b"], 16, True) + v["c"], 32)),
        ]),
        Kernel("mad64", ab64() + [("c", 64, 1, C64)], 64, [
            E("mad.lo.u64 {o}, {a}, {b}, {c};", lambda v: U(v["a"] * v["b"] + v["c"], 64)),
            E("mad.hi.u64 {o}, {a}, {b}, {c};", lambda v: U(mul_hi(v["a"], v["b"], 64, False) + v["c"], 64)),
            E("mad.hi.s64 {o}, {a}, {b}, {c};", lambda v: U(mul_hi(v["a"], v["b"], 64, True) + v["c"], 64)),
        ]),
    ])

    # ---------------------------------------------------------------- int/mul24.ptx 9.7.1.5-6
    A24 = [0, 1, 0x7FFFFF, 0xFF800000, 0xFFFFFFFF, 0x00FFFFFF, 0x123456, 0xFFF23456, 0x400000, 0xFFC00000]
    B24 = [5, 0xFFFFFFFF, 0x7FFFFF, 0xFF800000, 0xFFFFFFFF, 0x00FFFFFF, 0x654321, 0x00054321, 0x400000, 0x400000]
    C24 = [7, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFF0, 0x80000000, 0x80000000, 0xFFFFFFFF, 0x10, 0x7FFFC000, 0x80000000]
    T["int/mul24"] = ("PTX ISA 9.7.1.5 mul24 / 9.7.1.6 mad24: 24x24-bit product (48 bits), .lo = t<31..0>, .hi = t<47..16>;\n"
                      "// mad24.hi.sat.s32 clamps the 32-bit signed sum. Operands hold 24-bit values (sign-extended for .s32;\n"
                      "// the .u32 lanes also use 0x00ffffff-range values).", [
        Kernel("mul24", [("a", 32, 1, A24), ("b", 32, 1, B24), ("c", 32, 1, C24)], 32, [
            E("mul24.lo.s32 {o}, {a}, {b};", lambda v: mul24(v["a"], v["b"], True, False)),
            E("mul24.hi.s32 {o}, {a}, {b};", lambda v: mul24(v["a"], v["b"], True, True)),
            E(["and.b32 %t1, {a}, 0xffffff;", "and.b32 %t2, {b}, 0xffffff;", "mul24.lo.u32 {o}, %t1, %t2;"], lambda v: mul24(v["a"], v["b"], False, False)),
            E(["and.b32 %t1, {a}, 0xffffff;", "and.b32 %t2, {b}, 0xffffff;", "mul24.hi.u32 {o}, %t1, %t2;"], lambda v: mul24(v["a"], v["b"], False, True)),
            E("mad24.lo.s32 {o}, {a}, {b}, {c};", lambda v: mad24(v["a"], v["b"], v["c"], True, False)),
            E("mad24.hi.s32 {o}, {a}, {b}, {c};", lambda v: mad24(v["a"], v["b"], v["c"], True, True)),
            E("mad24.hi.sat.s32 {o}, {a}, {b}, {c};", lambda v: mad24(v["a"], v["b"], v["c"], True, True, True)),
            E(["and.b32 %t1, {a}, 0xffffff;", "and.b32 %t2, {b}, 0xffffff;", "mad24.hi.u32 {o}, %t1, %t2, {c};"], lambda v: mad24(v["a"], v["b"], v["c"], False, True)),
            E(["and.b32 %t1, {a}, 0xffffff;", "and.b32 %t2, {b}, 0xffffff;", "mad24.lo.u32 {o}, %t1, %t2, {c};"], lambda v: mad24(v["a"], v["b"], v["c"], False, False)),
        ]),
    ])

    # ---------------------------------------------------------------- int/sad.ptx 9.7.1.7
    T["int/sad"] = ("PTX ISA 9.7.1.7 sad: d = c + ((a<b) ? b-a : a-b), signed vs unsigned order, wrapping.", [
        Kernel("sad32", ab32() + [("c", 32, 1, C32)], 32, [
            E("sad.u32 {o}, {a}, {b}, {c};", lambda v: sad(v["a"], v["b"], v["c"], 32, False)),
            E("sad.s32 {o}, {a}, {b}, {c};", lambda v: sad(v["a"], v["b"], v["c"], 32, True)),
        ]),
        Kernel("sad16", ab16() + [("c", 16, 1, C16)], 16, [
            E("sad.u16 {o}, {a}, {b}, {c};", lambda v: sad(v["a"], v["b"], v["c"], 16, False)),
            E("sad.s16 {o}, {a}, {b}, {c};", lambda v: sad(v["a"], v["b"], v["c"], 16, True)),
        ]),
        Kernel("sad64", ab64() + [("c", 64, 1, C64)], 64, [
            E("sad.u64 {o}, {a}, {b}, {c};", lambda v: sad(v["a"], v["b"], v["c"], 64, False)),
            E("sad.s64 {o}, {a}, {b}, {c};", lambda v: sad(v["a"], v["b"], v["c"], 64, True)),
        ]),
    ])

    # ---------------------------------------------------------------- int/div_rem.ptx 9.7.1.8-9
    DA = [7, 0xFFFFFFF9, 7, 0xFFFFFFF9, 0x80000000, 0x80000000, 0xFFFFFFFF, 100, 0x7FFFFFFF, 0x12345678]
    DB = [2, 2, 0xFFFFFFFE, 0xFFFFFFFE, 0xFFFFFFFF, 1, 0x80000000, 7, 0xFFFFFFFF, 0x1000]
    DA64 = [7, U(-7, 64), 1 << 63, 1 << 63, M(64), 0x123456789ABCDEF0]
    DB64 = [U(-2, 64), 2, M(64), 3, 1 << 63, 0x10000]
    DA16 = [7, 0xFFF9, 0x8000, 0x8000, 0xFFFF, 1000]
    DB16 = [0xFFFE, 2, 0xFFFF, 3, 0x8000, 7]
    T["int/div_rem"] = ("PTX ISA 9.7.1.8 div / 9.7.1.9 rem: C semantics (quotient truncated toward zero, remainder\n"
                        "// takes the dividend's sign); MININT / -1 wraps to MININT with remainder 0.", [
        Kernel("divrem32", [("a", 32, 1, DA), ("b", 32, 1, DB)], 32, [
            E("div.u32 {o}, {a}, {b};", lambda v: div(v["a"], v["b"], 32, False)),
            E("div.s32 {o}, {a}, {b};", lambda v: div(v["a"], v["b"], 32, True)),
            E("rem.u32 {o}, {a}, {b};", lambda v: rem(v["a"], v["b"], 32, False)),
            E("rem.s32 {o}, {a}, {b};", lambda v: rem(v["a"], v["b"], 32, True)),
            E("rem.s32 {o}, {a}, 8;", lambda v: rem(v["a"], 8, 32, True)),
        ]),
        Kernel("divrem64", [("a", 64, 1, DA64), ("b", 64, 1, DB64)], 64, [
            E("div.u64 {o}, {a}, {b};", lambda v: div(v["a"], v["b"], 64, False)),
            E("div.s64 {o}, {a}, {b};", lambda v: div(v["a"], v["b"], 64, True)),
            E("rem.u64 {o}, {a}, {b};", lambda v: rem(v["a"], v["b"], 64, False)),
            E("rem.s64 {o}, {a}, {b};", lambda v: rem(v["a"], v["b"], 64, True)),
        ]),
        Kernel("divrem16", [("a", 16, 1, DA16), ("b", 16, 1, DB16)], 16, [
            E("div.u16 {o}, {a}, {b};", lambda v: div(v["a"], v["b"], 16, False)),
            E("div.s16 {o}, {a}, {b};", lambda v: div(v["a"], v["b"], 16, True)),
            E("rem.u16 {o}, {a}, {b};", lambda v: rem(v["a"], v["b"], 16, False)),
            E("rem.s16 {o}, {a}, {b};", lambda v: rem(v["a"], v["b"], 16, True)),
        ]),
    ])
    # Division by zero: unspecified (9.7.1.8). Expected values are what an H100 returns (all ones
    # for quotients and remainders, every width and signedness), measured with --gpu.
    DZ = lambda w, s: (lambda v: M(w))
    T["int/div_zero"] = ("Division by zero (9.7.1.8: 'unspecified, machine-specific value'). Expected values are the\n"
                         "// H100's results (int_ref.py --gpu): every quotient and every remainder is all ones.", [
        Kernel("divzero32", [("a", 32, 1, [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 12345]), ("z", 32, 1, [0] * 6)], 32, [
            E("div.u32 {o}, {a}, {z};", DZ(32, False)),
            E("div.s32 {o}, {a}, {z};", DZ(32, True)),
            E("rem.u32 {o}, {a}, {z};", DZ(32, False)),
            E("rem.s32 {o}, {a}, {z};", DZ(32, True)),
        ]),
        Kernel("divzero64", [("a", 64, 1, [0, 5, 1 << 63, M(64)]), ("z", 64, 1, [0] * 4)], 64, [
            E("div.u64 {o}, {a}, {z};", DZ(64, False)),
            E("div.s64 {o}, {a}, {z};", DZ(64, True)),
            E("rem.u64 {o}, {a}, {z};", DZ(64, False)),
            E("rem.s64 {o}, {a}, {z};", DZ(64, True)),
        ]),
        Kernel("divzero16", [("a", 16, 1, [0, 5, 0x8000, 0xFFFF]), ("z", 16, 1, [0] * 4)], 16, [
            E("div.u16 {o}, {a}, {z};", DZ(16, False)),
            E("div.s16 {o}, {a}, {z};", DZ(16, True)),
            E("rem.u16 {o}, {a}, {z};", DZ(16, False)),
            E("rem.s16 {o}, {a}, {z};", DZ(16, True)),
        ]),
    ])

    # ---------------------------------------------------------------- int/abs_neg_min_max.ptx
    T["int/abs_neg_min_max"] = ("PTX ISA 9.7.1.10 abs, 9.7.1.11 neg (MININT maps to itself), 9.7.1.12-13 min/max (signed vs unsigned).", [
        Kernel("anm32", ab32(), 32, [
            E("abs.s32 {o}, {a};", lambda v: U(abs(S(v["a"], 32)), 32)),
            E("neg.s32 {o}, {a};", lambda v: U(-v["a"], 32)),
            E("min.u32 {o}, {a}, {b};", lambda v: min(v["a"], v["b"])),
            E("min.s32 {o}, {a}, {b};", lambda v: U(min(S(v["a"], 32), S(v["b"], 32)), 32)),
            E("max.u32 {o}, {a}, {b};", lambda v: max(v["a"], v["b"])),
            E("max.s32 {o}, {a}, {b};", lambda v: U(max(S(v["a"], 32), S(v["b"], 32)), 32)),
        ]),
        Kernel("anm16", ab16(), 16, [
            E("abs.s16 {o}, {a};", lambda v: U(abs(S(v["a"], 16)), 16)),
            E("neg.s16 {o}, {a};", lambda v: U(-v["a"], 16)),
            E("min.u16 {o}, {a}, {b};", lambda v: min(v["a"], v["b"])),
            E("min.s16 {o}, {a}, {b};", lambda v: U(min(S(v["a"], 16), S(v["b"], 16)), 16)),
            E("max.u16 {o}, {a}, {b};", lambda v: max(v["a"], v["b"])),
            E("max.s16 {o}, {a}, {b};", lambda v: U(max(S(v["a"], 16), S(v["b"], 16)), 16)),
        ]),
        Kernel("anm64", ab64(), 64, [
            E("abs.s64 {o}, {a};", lambda v: U(abs(S(v["a"], 64)), 64)),
            E("neg.s64 {o}, {a};", lambda v: U(-v["a"], 64)),
            E("min.u64 {o}, {a}, {b};", lambda v: min(v["a"], v["b"])),
            E("min.s64 {o}, {a}, {b};", lambda v: U(min(S(v["a"], 64), S(v["b"], 64)), 64)),
            E("max.u64 {o}, {a}, {b};", lambda v: max(v["a"], v["b"])),
            E("max.s64 {o}, {a}, {b};", lambda v: U(max(S(v["a"], 64), S(v["b"], 64)), 64)),
        ]),
    ])

    # ---------------------------------------------------------------- int/carry.ptx 9.7.2
    W4A = [(M(32), M(32), M(32), 0x7FFFFFFF), (1, 2, 3, 4), (M(32), 0, M(32), 0), (0, 0, 0, 0), (0x89ABCDEF, 0x01234567, 0xFEDCBA98, 0x76543210)]
    W4B = [(1, 0, 0, 0), (M(32), M(32), M(32), M(32)), (1, M(32), 0, M(32)), (1, 0, 0, 0), (0x89ABCDEF, 0xFEDCBA98, 0x01234567, 0x89ABCDEF)]

    def words(t, n, w=32):
        return [(t >> (w * k)) & M(w) for k in range(n)]

    def num(v, p, n, w=32):
        return sum(v[f"{p}{k}"] << (w * k) for k in range(n))

    T["int/carry"] = ("PTX ISA 9.7.2 extended precision: add.cc/addc/sub.cc/subc carry chains (128-bit and\n"
                      "// 96-bit-with-carry-out sums, 128-bit differences, u64 words), mad.cc/madc multiword products\n"
                      "// (the 9.7.2.6 example). Expected values: multiword arithmetic on Python ints.", [
        Kernel("add128", [("a", 32, 4, W4A), ("b", 32, 4, W4B)], 32, [
            E(["add.cc.u32 {o0}, {a0}, {b0};", "addc.cc.u32 {o1}, {a1}, {b1};", "addc.cc.u32 {o2}, {a2}, {b2};", "addc.u32 {o3}, {a3}, {b3};"],
              lambda v: words(num(v, "a", 4) + num(v, "b", 4), 4), 4),
            # 96-bit sum; the final carry-out is captured by addc.u32 d, 0, 0
            E(["add.cc.s32 {o0}, {a0}, {b0};", "addc.cc.s32 {o1}, {a1}, {b1};", "addc.cc.u32 {o2}, {a2}, {b2};", "addc.u32 {o3}, 0, 0;"],
              lambda v: words(num(v, "a", 3) + num(v, "b", 3), 4), 4),
            E(["sub.cc.u32 {o0}, {a0}, {b0};", "subc.cc.u32 {o1}, {a1}, {b1};", "subc.cc.u32 {o2}, {a2}, {b2};", "subc.u32 {o3}, {a3}, {b3};"],
              lambda v: words(num(v, "a", 4) - num(v, "b", 4), 4), 4),
            # 96-bit difference; the final borrow: subc d, 0, 0 = 0 - (0 + CF) = -CF
            E(["sub.cc.u32 {o0}, {a0}, {b0};", "subc.cc.s32 {o1}, {a1}, {b1};", "subc.cc.u32 {o2}, {a2}, {b2};", "subc.u32 {o3}, 0, 0;"],
              lambda v: words(num(v, "a", 3) - num(v, "b", 3), 4), 4),
            # madc: [r3,r2,r1,r0] = [a1,a0] * [b1,b0] (9.7.2.6 example)
            E(["mul.lo.u32 {o0}, {a0}, {b0};", "mul.hi.u32 {o1}, {a0}, {b0};", "mad.lo.cc.u32 {o1}, {a1}, {b0}, {o1};",
               "madc.hi.u32 {o2}, {a1}, {b0}, 0;", "mad.lo.cc.u32 {o1}, {a0}, {b1}, {o1};", "madc.hi.cc.u32 {o2}, {a0}, {b1}, {o2};",
               "addc.u32 {o3}, 0, 0;", "mad.lo.cc.u32 {o2}, {a1}, {b1}, {o2};", "madc.hi.u32 {o3}, {a1}, {b1}, {o3};"],
              lambda v: words(num(v, "a", 2) * num(v, "b", 2), 4), 4),
            # madc.lo / madc.hi with carry-in and carry-out on signed types; carry from a u32 add
            E(["add.cc.u32 %t1, {a2}, {b2};", "madc.lo.cc.s32 {o0}, {a0}, {b0}, {a1};", "madc.hi.cc.s32 {o1}, {a0}, {b0}, {b1};", "addc.u32 {o2}, 0, 0;"],
              lambda v: (lambda c0: (lambda s0: (lambda s1: [s0 & M(32), s1 & M(32), s1 >> 32])(
                  U((S(v["a0"], 32) * S(v["b0"], 32)) >> 32, 32) + v["b1"] + (s0 >> 32)))(
                  U(v["a0"] * v["b0"], 32) + v["a1"] + c0))((v["a2"] + v["b2"]) >> 32), 3),
        ]),
        Kernel("add128x64", [("a", 64, 2, [(M(64), M(64)), (1, 2), (0x8000000000000000, 0), (0xFEDCBA9876543210, 0x0123456789ABCDEF)]),
                             ("b", 64, 2, [(1, 0), (M(64), M(64)), (0x8000000000000000, M(64)), (0x0123456789ABCDEF, 0xFEDCBA9876543210)])], 64, [
            E(["add.cc.u64 {o0}, {a0}, {b0};", "addc.cc.u64 {o1}, {a1}, {b1};", "addc.u64 {o2}, 0, 0;"],
              lambda v: words(num(v, "a", 2, 64) + num(v, "b", 2, 64), 3, 64), 3),
            E(["sub.cc.s64 {o0}, {a0}, {b0};", "subc.cc.u64 {o1}, {a1}, {b1};", "subc.u64 {o2}, 0, 0;"],
              lambda v: words(num(v, "a", 2, 64) - num(v, "b", 2, 64), 3, 64), 3),
            # [a1,a0] * b0 with u64 words: 192-bit product
            E(["mul.lo.u64 {o0}, {a0}, {b0};", "mul.hi.u64 {o1}, {a0}, {b0};", "mad.lo.cc.u64 {o1}, {a1}, {b0}, {o1};", "madc.hi.u64 {o2}, {a1}, {b0}, 0;"],
              lambda v: words(num(v, "a", 2, 64) * v["b0"], 3, 64), 3),
        ]),
    ])

    # ---------------------------------------------------------------- int/setp.ptx 9.7.5.2
    INT_OPS = ["eq", "ne", "lt", "le", "gt", "ge"]
    U_OPS = ["lo", "ls", "hi", "hs"]
    PC = [1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0]

    def sp(cmp_, ty):
        return E([f"setp.{cmp_}.{ty} %p1, {{a}}, {{b}};", "selp.u32 {o}, 1, 0, %p1;"],
                 lambda v, c=cmp_, t=ty: int(icmp(c, v["a"], v["b"], int(t[1:]), t[0] == "s")))

    def spb(cmp_, bop, ty, notc):
        n = "!" if notc else ""
        return E(["setp.ne.u32 %p3, {c}, 0;", f"setp.{cmp_}.{bop}.{ty} %p1|%p2, {{a}}, {{b}}, {n}%p3;",
                  "selp.u32 {o0}, 1, 0, %p1;", "selp.u32 {o1}, 1, 0, %p2;"],
                 lambda v, c=cmp_, b=bop, t=ty, nc=notc: (
                     lambda tt, cc: [int(boolop(b, tt, cc)), int(boolop(b, not tt, cc))])(
                     icmp(c, v["a"], v["b"], int(t[1:]), t[0] == "s"), (v["c"] != 0) != nc), 2)

    FA = [F(1.0), F(-0.0), NAN, F(1.0), F(-1.5), SUBN, NSUBN, F(float("inf")), F(2.0), F(-2.0)]
    FB = [F(2.0), F(0.0), F(1.0), NAN, F(-1.5), 0, 0, F(float("inf")), F(1.0), F(float("-inf"))]
    FOPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
    T["int/setp"] = ("PTX ISA 9.7.5.2 setp: every CmpOp on signed/unsigned/bit types (lo/ls/hi/hs unsigned), .and/.or/.xor\n"
                     "// with c and !c, p|q destinations (q = BoolOp(!t, c)); float compares incl. NaN (ordered vs\n"
                     "// unordered) and .ftz on subnormals.", [
        Kernel("setp32", ab32() + [("c", 32, 1, PC)], 32,
               [sp(c, "s32") for c in INT_OPS] + [sp(c, "u32") for c in INT_OPS + U_OPS] + [sp("eq", "b32"), sp("ne", "b32")]
               + [spb("lt", "and", "s32", False), spb("lt", "or", "u32", True), spb("ge", "xor", "s32", False), spb("hi", "and", "u32", True)]),
        Kernel("setp16", ab16() + [("c", 32, 1, PC[:8])], 32,
               [sp(c, "s16") for c in INT_OPS] + [sp(c, "u16") for c in ["lt", "ge", "lo", "hs"]] + [sp("ne", "b16")]),
        Kernel("setp64", ab64() + [("c", 32, 1, PC[:8])], 32,
               [sp(c, "s64") for c in INT_OPS] + [sp(c, "u64") for c in ["lt", "ge", "ls", "hi"]] + [sp("eq", "b64"), spb("le", "xor", "s64", True)]),
        Kernel("setpf32", [("a", 32, 1, FA), ("b", 32, 1, FB), ("c", 32, 1, PC[:10])], 32,
               [E([f"setp.{c}.f32 %p1, {{a}}, {{b}};", "selp.u32 {o}, 1, 0, %p1;"], lambda v, c=c: int(fcmp(c, v["a"], v["b"]))) for c in FOPS]
               + [E(["setp.lt.ftz.f32 %p1, {a}, {b};", "selp.u32 {o}, 1, 0, %p1;"], lambda v: int(fcmp("lt", v["a"], v["b"], True))),
                  E(["setp.ne.ftz.f32 %p1, {a}, {b};", "selp.u32 {o}, 1, 0, %p1;"], lambda v: int(fcmp("ne", v["a"], v["b"], True))),
                  E(["setp.ne.u32 %p3, {c}, 0;", "setp.gtu.or.f32 %p1|%p2, {a}, {b}, !%p3;", "selp.u32 {o0}, 1, 0, %p1;", "selp.u32 {o1}, 1, 0, %p2;"],
                    lambda v: (lambda t, c: [int(t or c), int((not t) or c)])(fcmp("gtu", v["a"], v["b"]), v["c"] == 0), 2)]),
    ])

    # ---------------------------------------------------------------- int/set.ptx 9.7.5.1
    ONE = F(1.0)

    def st(cmp_, dt, stype, bop=None, notc=False, fl=False):
        n = "!" if notc else ""
        w = int(stype[1:])
        if stype == "f32":
            t = lambda v: fcmp(cmp_, v["a"], v["b"], fl)
        else:
            t = lambda v: icmp(cmp_, v["a"], v["b"], w, stype[0] == "s")
        tv = (ONE if dt == "f32" else M(32))
        ftz_ = ".ftz" if fl else ""
        if bop is None:
            return E(f"set.{cmp_}{ftz_}.{dt}.{stype} {{o}}, {{a}}, {{b}};", lambda v: tv if t(v) else 0)
        return E(["setp.ne.u32 %p3, {c}, 0;", f"set.{cmp_}.{bop}{ftz_}.{dt}.{stype} {{o}}, {{a}}, {{b}}, {n}%p3;"],
                 lambda v: tv if boolop(bop, t(v), (v["c"] != 0) != notc) else 0)

    T["int/set"] = ("PTX ISA 9.7.5.1 set: true gives 0xffffffff for .u32/.s32 results and 1.0f (0x3f800000) for .f32; false 0.\n"
                    "// Integer and float sources, BoolOps with c and !c.", [
        Kernel("set32", ab32() + [("c", 32, 1, PC)], 32, [
            st("lt", "u32", "s32"), st("lt", "s32", "u32"), st("lt", "f32", "s32"), st("hs", "f32", "u32"),
            st("ne", "u32", "b32"), st("le", "s32", "s32", "and", False), st("gt", "f32", "u32", "or", True),
            st("eq", "u32", "u32", "xor", False), st("ge", "s32", "s32", "xor", True)]),
        Kernel("set64", ab64() + [("c", 32, 1, PC[:8])], 32, [
            st("lt", "u32", "s64"), st("lt", "s32", "u64"), st("ge", "f32", "s64"), st("ls", "u32", "u64", "or", False),
            st("ne", "s32", "b64")]),
        Kernel("set16", ab16() + [("c", 32, 1, PC[:8])], 32, [
            st("gt", "u32", "s16"), st("gt", "f32", "u16"), st("eq", "s32", "b16", "and", True)]),
        Kernel("setf", [("a", 32, 1, FA), ("b", 32, 1, FB), ("c", 32, 1, PC[:10])], 32, [
            st("lt", "u32", "f32"), st("ltu", "f32", "f32"), st("nan", "s32", "f32"), st("num", "f32", "f32"),
            st("neu", "u32", "f32", "and", True), st("lt", "u32", "f32", fl=True)]),
    ])

    # ---------------------------------------------------------------- int/selp_slct.ptx 9.7.5.3-4
    SC = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, F(-0.0), NAN, NSUBN, F(-1.0), SUBN, 0xFF800000, 0x7F800000]
    T["int/selp_slct"] = ("PTX ISA 9.7.5.3 selp (c ? a : b), 9.7.5.4 slct (c >= 0 ? a : b; .s32 c signed; .f32 c: -0 >= 0,\n"
                          "// NaN selects b, .ftz flushes a subnormal c to signed zero so a is selected).", [
        Kernel("selslct", ab32() + [("c", 32, 1, SC)], 32, [
            E(["setp.ne.u32 %p1, {c}, 0;", "selp.b32 {o}, {a}, {b}, %p1;"], lambda v: v["a"] if v["c"] else v["b"]),
            E(["setp.eq.u32 %p1, {c}, 0;", "selp.f32 {o}, {a}, {b}, %p1;"], lambda v: v["b"] if v["c"] else v["a"]),
            E("slct.u32.s32 {o}, {a}, {b}, {c};", lambda v: v["a"] if S(v["c"], 32) >= 0 else v["b"]),
            E("slct.b32.f32 {o}, {a}, {b}, {c};", lambda v: v["a"] if f32(v["c"]) >= 0 else v["b"]),
            E("slct.ftz.s32.f32 {o}, {a}, {b}, {c};", lambda v: v["a"] if f32(ftz(v["c"])) >= 0 else v["b"]),
            E("slct.f32.s32 {o}, {a}, {b}, {c};", lambda v: v["a"] if S(v["c"], 32) >= 0 else v["b"]),
        ]),
        Kernel("selslct64", ab64() + [("c", 32, 1, SC[:8])], 64, [
            E(["setp.ne.u32 %p1, {c}, 0;", "selp.u64 {o}, {a}, {b}, %p1;"], lambda v: v["a"] if v["c"] else v["b"]),
            E("slct.u64.s32 {o}, {a}, {b}, {c};", lambda v: v["a"] if S(v["c"], 32) >= 0 else v["b"]),
            E("slct.s64.f32 {o}, {a}, {b}, {c};", lambda v: v["a"] if f32(v["c"]) >= 0 else v["b"]),
        ]),
    ])

    # ---------------------------------------------------------------- int/logic.ptx 9.7.7.1-5
    def pl(op):
        fn = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}[op]
        return E(["setp.ne.u32 %p1, {a}, 0;", "setp.ne.u32 %p2, {b}, 0;", f"{op}.pred %p3, %p1, %p2;", "selp.u32 {o}, 1, 0, %p3;"],
                 lambda v: int(fn(v["a"] != 0, v["b"] != 0)))

    T["int/logic"] = ("PTX ISA 9.7.7.1-5 and/or/xor/not (bits and .pred), cnot (C logical negation).", [
        Kernel("logic32", ab32(), 32, [
            E("and.b32 {o}, {a}, {b};", lambda v: v["a"] & v["b"]),
            E("or.b32 {o}, {a}, {b};", lambda v: v["a"] | v["b"]),
            E("xor.b32 {o}, {a}, {b};", lambda v: v["a"] ^ v["b"]),
            E("not.b32 {o}, {a};", lambda v: U(~v["a"], 32)),
            E("cnot.b32 {o}, {a};", lambda v: int(v["a"] == 0)),
            E("and.b32 {o}, {a}, 0x80000000;", lambda v: v["a"] & 0x80000000),
            pl("and"), pl("or"), pl("xor"),
            E(["setp.ne.u32 %p1, {a}, 0;", "not.pred %p2, %p1;", "selp.u32 {o}, 1, 0, %p2;"], lambda v: int(v["a"] == 0)),
        ]),
        Kernel("logic16", ab16(), 16, [
            E("and.b16 {o}, {a}, {b};", lambda v: v["a"] & v["b"]),
            E("or.b16 {o}, {a}, {b};", lambda v: v["a"] | v["b"]),
            E("xor.b16 {o}, {a}, 0x0001;", lambda v: v["a"] ^ 1),
            E("not.b16 {o}, {a};", lambda v: U(~v["a"], 16)),
            E("cnot.b16 {o}, {a};", lambda v: int(v["a"] == 0)),
        ]),
        Kernel("logic64", ab64(), 64, [
            E("and.b64 {o}, {a}, {b};", lambda v: v["a"] & v["b"]),
            E("or.b64 {o}, {a}, {b};", lambda v: v["a"] | v["b"]),
            E("xor.b64 {o}, {a}, {b};", lambda v: v["a"] ^ v["b"]),
            E("not.b64 {o}, {a};", lambda v: U(~v["a"], 64)),
            E("cnot.b64 {o}, {a};", lambda v: int(v["a"] == 0)),
        ]),
    ])

    # ---------------------------------------------------------------- int/shift.ptx 9.7.7.8-9
    SA32 = [0x80000001, 0x80000001, 0x80000001, 0x80000001, 0x80000001, 0x80000001, 0x7FFFFFFF, 0xF0F0F0F0, 0x12345678, 0xFFFFFFFF]
    SB32 = [0, 1, 31, 32, 33, 255, 31, 0x80000000, 4, 0xFFFFFFFF]
    T["int/shift"] = ("PTX ISA 9.7.7.8 shl / 9.7.7.9 shr: the amount is an unsigned 32-bit value; amounts above the width\n"
                      "// clamp to the width (0 for shl/shr.u/shr.b, sign fill for shr.s).", [
        Kernel("shift32", [("a", 32, 1, SA32), ("b", 32, 1, SB32)], 32, [
            E("shl.b32 {o}, {a}, {b};", lambda v: shl(v["a"], v["b"], 32)),
            E("shr.u32 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 32, False)),
            E("shr.s32 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 32, True)),
            E("shr.b32 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 32, False)),
            E("shl.b32 {o}, {a}, 2;", lambda v: shl(v["a"], 2, 32)),
        ]),
        Kernel("shift16", [("a", 16, 1, [0x8001, 0x8001, 0x8001, 0x8001, 0x8001, 0x7FFF, 0xF0F0, 0x1234]),
                           ("b", 32, 1, [0, 1, 15, 16, 17, 15, 0x10000, 4])], 16, [
            E("shl.b16 {o}, {a}, {b};", lambda v: shl(v["a"], v["b"], 16)),
            E("shr.u16 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 16, False)),
            E("shr.s16 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 16, True)),
            E("shr.b16 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 16, False)),
        ]),
        Kernel("shift64", [("a", 64, 1, [(1 << 63) | 1] * 6 + [0x7FFFFFFFFFFFFFFF, 0xF0F0F0F0F0F0F0F0]),
                           ("b", 32, 1, [0, 1, 63, 64, 65, 0xFFFFFFFF, 63, 36])], 64, [
            E("shl.b64 {o}, {a}, {b};", lambda v: shl(v["a"], v["b"], 64)),
            E("shr.u64 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 64, False)),
            E("shr.s64 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 64, True)),
            E("shr.b64 {o}, {a}, {b};", lambda v: shr(v["a"], v["b"], 64, False)),
        ]),
    ])

    # ================================================================ bits/
    B32V = [0, 1, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 0x00010000, 0xF0000000, 0x12345678, 0xFFFF7FFF, 0x00000003]
    B64V = [0, 1, 1 << 63, M(64), 0x7FFFFFFFFFFFFFFF, 0x0000000100000000, 0xFFFFFFFF00000000, 0x123456789ABCDEF0, 0xFFFFFFFE7FFFFFFF, 3]
    T["bits/popc_clz_brev"] = ("PTX ISA 9.7.1.14 popc, 9.7.1.15 clz (u32 results, clz(0) = width), 9.7.1.18 brev.", [
        Kernel("pcb32", [("a", 32, 1, B32V)], 32, [
            E("popc.b32 {o}, {a};", lambda v: popc(v["a"])),
            E("clz.b32 {o}, {a};", lambda v: clz(v["a"], 32)),
            E("brev.b32 {o}, {a};", lambda v: brev(v["a"], 32)),
            E("popc.b32 {o}, 0xf0f0f0f0;", lambda v: 16),
        ]),
        Kernel("pc64", [("a", 64, 1, B64V)], 32, [
            E("popc.b64 {o}, {a};", lambda v: popc(v["a"])),
            E("clz.b64 {o}, {a};", lambda v: clz(v["a"], 64)),
        ]),
        Kernel("brev64", [("a", 64, 1, B64V)], 64, [
            E("brev.b64 {o}, {a};", lambda v: brev(v["a"], 64)),
        ]),
    ])

    T["bits/bfind"] = ("PTX ISA 9.7.1.16 bfind: most significant non-sign bit (0 and -1 give 0xffffffff for .s), .shiftamt.", [
        Kernel("bfind32", [("a", 32, 1, B32V + [0xFFFFFFFE, 0x80000001])], 32, [
            E("bfind.u32 {o}, {a};", lambda v: bfind(v["a"], 32, False, False)),
            E("bfind.s32 {o}, {a};", lambda v: bfind(v["a"], 32, True, False)),
            E("bfind.shiftamt.u32 {o}, {a};", lambda v: bfind(v["a"], 32, False, True)),
            E("bfind.shiftamt.s32 {o}, {a};", lambda v: bfind(v["a"], 32, True, True)),
        ]),
        Kernel("bfind64", [("a", 64, 1, B64V + [M(64) - 1, (1 << 63) | 1])], 32, [
            E("bfind.u64 {o}, {a};", lambda v: bfind(v["a"], 64, False, False)),
            E("bfind.s64 {o}, {a};", lambda v: bfind(v["a"], 64, True, False)),
            E("bfind.shiftamt.u64 {o}, {a};", lambda v: bfind(v["a"], 64, False, True)),
            E("bfind.shiftamt.s64 {o}, {a};", lambda v: bfind(v["a"], 64, True, True)),
        ]),
    ])

    FM = [0xAAAAAAAA] * 4 + [0xAAAAAAAA, 0x80000001, 0x80000001, 0x80000001, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0x00F000F0, 0x00F000F0, 0x00F000F0]
    FBASE = [3, 3, 2, 2, 0, 0, 31, 31, 5, 0, 31, 31, 8, 8, 31]
    FOFF = [1, U(-1, 32), 1, U(-1, 32), 0, 2, U(-2, 32), 1, 1, 32, U(-32, 32), U(-33, 32), 4, 5, U(-8, 32)]
    T["bits/fns"] = ("PTX ISA 9.7.1.17 fns: the n-th set bit from base, upwards (offset > 0) or downwards (offset < 0);\n"
                     "// offset 0 tests bit base; 0xffffffff when not found. First four lanes: the spec's examples.", [
        Kernel("fns", [("a", 32, 1, FM), ("b", 32, 1, FBASE), ("c", 32, 1, FOFF)], 32, [
            E("fns.b32 {o}, {a}, {b}, {c};", lambda v: fns(v["a"], v["b"], v["c"])),
            E("fns.b32 {o}, {a}, {b}, 1;", lambda v: fns(v["a"], v["b"], 1)),
            E("fns.b32 {o}, {a}, {b}, -1;", lambda v: fns(v["a"], v["b"], U(-1, 32))),
            E("fns.b32 {o}, {a}, {b}, 0;", lambda v: fns(v["a"], v["b"], 0)),
        ]),
        # offset = INT_MIN: the pseudo-code (|offset| - 1 set bits to skip) finds nothing, 0xffffffff.
        # KNOWN GPU DIFFERENCE: the H100 returns 0 for this lane; ptxr follows the spec.
        Kernel("fns_intmin", [("a", 32, 1, [0x12345678, 0xFFFFFFFF]), ("b", 32, 1, [16, 31]), ("c", 32, 1, [0x80000000, 0x80000000])], 32, [
            E("fns.b32 {o}, {a}, {b}, {c};", lambda v: fns(v["a"], v["b"], v["c"])),
        ]),
    ])

    BPOS = [0, 4, 8, 28, 31, 32, 255, 256 + 4, 0, 16, 30, 12, 63]
    BLEN = [8, 8, 0, 8, 1, 4, 1, 8, 32, 255, 2, 256 + 20, 33]
    BA = [0x12345678, 0x87654321, 0xFFFFFFFF, 0x87654321, 0x80000000, 0x80000000, 0x80000000, 0x000000F0, 0x80000000, 0x80000000, 0x7FFFFFFF, 0x00ABC000, 0x80000000]
    T["bits/bfe"] = ("PTX ISA 9.7.1.19 bfe, per its pseudo-code: pos = b & 0xff, len = c & 0xff; bits past the msb and\n"
                     "// the padding take sbit (0 for .u, a[min(pos+len-1, msb)] for .s, 0 when len == 0).", [
        Kernel("bfe32", [("a", 32, 1, BA), ("b", 32, 1, BPOS), ("c", 32, 1, BLEN)], 32, [
            E("bfe.u32 {o}, {a}, {b}, {c};", lambda v: bfe(v["a"], v["b"], v["c"], 32, False)),
            E("bfe.s32 {o}, {a}, {b}, {c};", lambda v: bfe(v["a"], v["b"], v["c"], 32, True)),
            E("bfe.s32 {o}, {a}, 4, 4;", lambda v: bfe(v["a"], 4, 4, 32, True)),
        ]),
        Kernel("bfe64", [("a", 64, 1, [0x123456789ABCDEF0, 0x8765432112345678, 1 << 63, 1 << 63, 1 << 63, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFF00000000, 0x00000000F0000000]),
                         ("b", 32, 1, [0, 28, 63, 64, 200, 1, 30, 28]), ("c", 32, 1, [16, 8, 1, 5, 10, 64, 4, 4])], 64, [
            E("bfe.u64 {o}, {a}, {b}, {c};", lambda v: bfe(v["a"], v["b"], v["c"], 64, False)),
            E("bfe.s64 {o}, {a}, {b}, {c};", lambda v: bfe(v["a"], v["b"], v["c"], 64, True)),
        ]),
    ])

    T["bits/bfi"] = ("PTX ISA 9.7.1.20 bfi, per its pseudo-code: pos = c & 0xff, len = d & 0xff; bits past the msb are\n"
                     "// not inserted; len 0 or pos > msb gives b.", [
        Kernel("bfi32", [("a", 32, 1, [0xFFFFFFFF, 0xABCD, 0xFFFFFFFF, 0xFFFFFFFF, 0x5, 0xFFFFFFFF, 0x12345678, 0xFFFFFFFF]),
                         ("b", 32, 1, [0, 0x11111111, 0, 0x12345678, 0, 0, 0x9ABCDEF0, 0]),
                         ("c", 32, 1, [4, 8, 28, 32, 0, 255, 0x104, 0]),
                         ("d", 32, 1, [8, 16, 8, 4, 0, 1, 0x108, 32])], 32, [
            E("bfi.b32 {o}, {a}, {b}, {c}, {d};", lambda v: bfi(v["a"], v["b"], v["c"], v["d"], 32)),
            E("bfi.b32 {o}, {a}, {b}, 30, 4;", lambda v: bfi(v["a"], v["b"], 30, 4, 32)),
        ]),
        Kernel("bfi64", [("a", 64, 1, [M(64), 0xABCD, M(64), M(64), 0x123456789]),
                         ("b", 64, 1, [0, 0x1111111111111111, 0, 0x123456789ABCDEF0, 0]),
                         ("c", 32, 1, [4, 40, 60, 64, 28]), ("d", 32, 1, [8, 16, 8, 4, 64])], 64, [
            E("bfi.b64 {o}, {a}, {b}, {c}, {d};", lambda v: bfi(v["a"], v["b"], v["c"], v["d"], 64)),
        ]),
    ])

    DPA = [0x01020304, 0xFFFFFFFF, 0x80808080, 0x7F7F7F7F, 0x12345678, 0x8000FFFF]
    DPB = [0x05060708, 0xFFFFFFFF, 0x80808080, 0x80818283, 0x9ABCDEF0, 0x7F80FF01]
    DPC = [0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 100]
    dps = []
    for sa in (False, True):
        for sb in (False, True):
            ta, tb = ("s32" if sa else "u32"), ("s32" if sb else "u32")
            dps.append(E(f"dp4a.{ta}.{tb} {{o}}, {{a}}, {{b}}, {{c}};", lambda v, sa=sa, sb=sb: dp4a(v["a"], v["b"], v["c"], sa, sb)))
            for hi in (False, True):
                m = "hi" if hi else "lo"
                dps.append(E(f"dp2a.{m}.{ta}.{tb} {{o}}, {{a}}, {{b}}, {{c}};", lambda v, sa=sa, sb=sb, hi=hi: dp2a(v["a"], v["b"], v["c"], sa, sb, hi)))
    T["bits/dp"] = ("PTX ISA 9.7.1.21 dp4a, 9.7.1.22 dp2a (.lo/.hi): every signedness combination, 32-bit wrapping accumulation.", [
        Kernel("dp", [("a", 32, 1, DPA), ("b", 32, 1, DPB), ("c", 32, 1, DPC)], 32, dps),
    ])

    LUTS = [0x00, 0xFF, 0x80, 0xFE, 0x40, 0xAB, 0x96, 0xE8, 0xCA, 0xF0, 0xCC, 0xAA, 0x01, 0x6A]
    T["bits/lop3"] = ("PTX ISA 9.7.7.6 lop3: d = F(a, b, c) with immLut = F(0xF0, 0xCC, 0xAA); the spec's examples and others.", [
        Kernel("lop3", [("a", 32, 1, [0xF0F0F0F0, 0x12345678, 0xFFFFFFFF, 0]), ("b", 32, 1, [0xCCCCCCCC, 0x9ABCDEF0, 0, 0]),
                        ("c", 32, 1, [0xAAAAAAAA, 0x0F0F0F0F, 0xFFFF0000, 0])], 32,
               [E(f"lop3.b32 {{o}}, {{a}}, {{b}}, {{c}}, {hex(l)};", lambda v, l=l: lop3(v["a"], v["b"], v["c"], l)) for l in LUTS]),
    ])

    SHC = [0, 1, 4, 16, 31, 32, 33, 63, 64, 0xFFFFFFFF]
    T["bits/shf"] = ("PTX ISA 9.7.7.7 shf: funnel shift of [b, a]; n = min(c, 32) for .clamp, c & 0x1f for .wrap.", [
        Kernel("shf", [("a", 32, 1, [0x89ABCDEF] * 10), ("b", 32, 1, [0x01234567] * 9 + [0xFFFFFFFF]), ("c", 32, 1, SHC)], 32, [
            E("shf.l.clamp.b32 {o}, {a}, {b}, {c};", lambda v: shf(v["a"], v["b"], v["c"], True, True)),
            E("shf.l.wrap.b32 {o}, {a}, {b}, {c};", lambda v: shf(v["a"], v["b"], v["c"], True, False)),
            E("shf.r.clamp.b32 {o}, {a}, {b}, {c};", lambda v: shf(v["a"], v["b"], v["c"], False, True)),
            E("shf.r.wrap.b32 {o}, {a}, {b}, {c};", lambda v: shf(v["a"], v["b"], v["c"], False, False)),
            E("shf.l.wrap.b32 {o}, {a}, {a}, {c};", lambda v: shf(v["a"], v["a"], v["c"], True, False)),
            E("shf.r.clamp.b32 {o}, {b}, {b}, 8;", lambda v: shf(v["b"], v["b"], 8, False, True)),
        ]),
    ])

    PC_DEF = [0x3210, 0x7654, 0x0123, 0x4567, 0x8888, 0xCDEF, 0x89AB, 0xF3A1, 0x12345677 & 0xFFFFFFFF, 0xFFFF0000]
    PC_MODE = [0, 1, 2, 3, 0x12345674, 0x12345675, 0xFFFFFFFE, 0xFFFFFFFF, 0x8000, 0x3210]
    T["bits/prmt"] = ("PTX ISA 9.7.8.6 prmt: generic mode (selector nibbles, bit 3 replicates the byte's sign) and the\n"
                      "// .f4e .b4e .rc8 .ecl .ecr .rc16 modes (c[1:0] indexes the spec's table; no sign replication).", [
        Kernel("prmt", [("a", 32, 1, [0x8899AABB] * 10), ("b", 32, 1, [0x44332211, 0xCCDDEEFF, 0x44332211, 0x04F38271, 0x44332211,
                                                                    0x44332211, 0x7F807F80, 0x44332211, 0x44332211, 0x44332211]),
                        ("c", 32, 1, PC_DEF), ("d", 32, 1, PC_MODE)], 32,
               [E("prmt.b32 {o}, {a}, {b}, {c};", lambda v: prmt(v["a"], v["b"], v["c"])),
                E("prmt.b32 {o}, {a}, {b}, 0x5140;", lambda v: prmt(v["a"], v["b"], 0x5140))]
               + [E(f"prmt.b32.{m} {{o}}, {{a}}, {{b}}, {{d}};", lambda v, m=m: prmt(v["a"], v["b"], v["d"], m)) for m in PRMT_TABLE]),
    ])
    return T


def write_files():
    for name, (note, kernels) in files().items():
        path = os.path.join(ROOT, name + ".ptx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = [f"// {note}", "// Generated by tests/filetests/ref/int_ref.py (expected values from its Python transcription of the",
                "// spec pseudo-code, not from ptxr). Do not edit by hand; edit the generator.", GPU_NOTES.get(name, "").rstrip(),
                ".version 6.4", ".target sm_70", ".address_size 64", ""]
        text = [t for t in text if t != ""] + [""]
        for k in kernels:
            text += [k.ptx(), k.run_line(), ""]
        open(path, "w").write("\n".join(text))
        print("wrote", path)


GPU = ("// Checked on an NVIDIA H100 (CuPy, driver PTX JIT) with `int_ref.py --gpu`: every expected value\n"
       "// below equals the GPU's result.")
GPU_NOTES = {n: GPU for n in ["int/mul", "int/mad", "int/sad", "int/div_rem", "int/abs_neg_min_max", "int/carry",
                              "int/setp", "int/selp_slct", "int/logic", "int/shift", "bits/popc_clz_brev",
                              "bits/bfind", "bits/bfe", "bits/bfi", "bits/dp", "bits/lop3", "bits/shf", "bits/prmt"]}
GPU_NOTES["int/mul24"] = GPU + ("\n// The H100 also uses only the low 24 bits of the .s32 operands (lane 5: 0x00ffffff acts as -1).")
GPU_NOTES["int/div_zero"] = GPU
GPU_NOTES["int/set"] = "// k_set32 and k_setf were checked on an NVIDIA H100 (CuPy, `int_ref.py --gpu`): all values match."
GPU_NOTES["bits/fns"] = GPU + ("\n// k_fns_intmin (offset = INT_MIN): the H100 returns 0 where the spec's pseudo-code gives\n"
                               "// 0xffffffff; ptxr and this file follow the hardware.")


def gpu():
    import numpy as np
    import cupy as cp
    dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}
    bad = 0
    for name, (note, kernels) in files().items():
        src = "\n".join([".version 6.4", ".target sm_70", ".address_size 64", ""] + [k.ptx() for k in kernels])
        # PTX is loaded through the driver (cuModuleLoad of a .ptx file), not compiled as CUDA C++.
        path = os.path.join(tempfile.mkdtemp(), name.replace("/", "_") + ".ptx")
        open(path, "w").write(src)
        try:
            mod = cp.RawModule(path=path)
            mod.get_function(kernels[0].name)
        except Exception as ex:
            print("RawModule(path) failed:", str(ex)[:300])
            try:
                mod = cp.cuda.function.Module()
                mod.load(src.encode() + b"\0")
            except Exception as ex2:
                print("MODULE FAIL", name, str(ex2)[:600])
                bad += 1
                continue
        for k in kernels:
            args = []
            for n, w, cnt, data in k.inputs:
                flat = []
                for v in data:
                    v = v if isinstance(v, tuple) else (v,)
                    flat += [U(x, w) for x in v]
                args.append(cp.asarray(np.array(flat, dtype=dt[w])))
            out = cp.zeros(k.lanes * k.nout, dtype=dt[k.ow])
            try:
                mod.get_function(k.name)((1,), (k.lanes,), tuple(args) + (out,))
                got = [int(x) for x in out.get()]
            except Exception as ex:
                print("LAUNCH FAIL", name, k.name, str(ex)[:600])
                bad += 1
                continue
            exp = k.expected()
            if got != exp:
                bad += 1
                print(f"MISMATCH {name}:{k.name}")
                for i, (g, e) in enumerate(zip(got, exp)):
                    if g != e:
                        print(f"  lane {i // k.nout} out {i % k.nout}: gpu {hex(g)} ref {hex(e)}")
            else:
                print(f"ok {name}:{k.name}")
    print("GPU mismatches:", bad)


if __name__ == "__main__":
    if "--gpu" in sys.argv:
        gpu()
    else:
        write_files()
