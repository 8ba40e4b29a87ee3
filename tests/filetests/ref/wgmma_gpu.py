#!/usr/bin/env python3
"""wgmma (PTX ISA 8.x 9.7.15, warpgroup-level matrix multiply-accumulate) on a real GPU.

On a machine with a Hopper GPU (sm_90a) and CuPy:
    python3 tests/filetests/ref/wgmma_gpu.py --gpu OUTDIR
writes OUTDIR/wgmma.ptx and OUTDIR/wgmma_wide.ptx (N >= 64), filetests whose `// expect:` values
are the GPU's results, and OUTDIR/wgmma_raw.json, and prints for each kernel whether the GPU agrees
with the independent model of this file (`model()`): the model is what ptxr's lowering is written
from, the GPU is the judge.
    python3 tests/filetests/ref/wgmma_gpu.py --check tests/filetests/warp/wgmma.ptx
compares the model with the GPU results stored in a filetest (no GPU needed);
    python3 tests/filetests/ref/wgmma_gpu.py --from-raw OUTDIR/wgmma_raw.json tests/filetests/warp
rewrites the two filetests from the raw results of a --gpu run.

Each kernel runs one warpgroup (128 threads; some two). Shared memory is filled by a hash of
each 32-bit word's index that picks element codes from a table of small values (so every
accumulation order gives the same exact sum), A (when in registers) and C likewise from a hash
of the thread and register index; then one wgmma.mma_async per warpgroup with the descriptors
of the case, and every thread stores its D registers.
"""
import argparse
import os
import random
import struct
import sys

SMEM = 49152
TAB_AB = {  # element codes of the values -3..3 (and 0 twice) for each input type
    "f16": [0x0000, 0x3C00, 0x4000, 0x4200, 0xBC00, 0xC000, 0xC200, 0x0000],
    "bf16": [0x0000, 0x3F80, 0x4000, 0x4040, 0xBF80, 0xC000, 0xC040, 0x0000],
    "tf32": [0x00000000, 0x3F800000, 0x40000000, 0x40400000, 0xBF800000, 0xC0000000, 0xC0400000, 0x80000000],
    "e4m3": [0x00, 0x38, 0x40, 0x44, 0xB8, 0xC0, 0xC4, 0x80],
    "e5m2": [0x00, 0x3C, 0x40, 0x42, 0xBC, 0xC0, 0xC2, 0x80],
    "s8": [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x35, 0xC3, 0x02],
    # .b1: each byte is 8 single-bit elements (k = 8 * byte + bit)
    "b1": [0x00, 0xFF, 0x5A, 0xA5, 0x0F, 0xF0, 0x81, 0x3C],
    "u8": [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x35, 0xC3, 0x02],
}
TAB_C = {
    "f32": [0x00000000, 0x3F800000, 0xC1200000, 0x42C80000, 0x80000000, 0x3F000000, 0xC4800000, 0x40400000],
    "f16": [0x0000, 0x3C00, 0xC900, 0x5640, 0x8000, 0x3800, 0xE400, 0x4200],
    "s32": [0x00000000, 0x00000001, 0x7FFFFFF0, 0x80000010, 0xFFFFFFFF, 0x00001234, 0x7FFFFFFF, 0x80000000],
}
ESIZE = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1, "b1": 1}
KDIM = {2: 16, 4: 8, 1: 32}
SEED_SMEM, SEED_A, SEED_C = 0x1234567, 0x2345678, 0x3456789
SWZ_BYTES = {0: 0, 1: 128, 2: 64, 3: 32}


def hash32(w, seed):
    x = (w * 0x9E3779B1 + seed) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    return x


def word_of(x, ty, tab):
    """The 32-bit word built from hash x: elements of `ty` from tab (low 13 random bits for tf32)."""
    e = ESIZE.get(ty, 4) if ty not in ("f16x2",) else 2
    if e == 4:
        return tab[x & 7] | ((x >> 3) & 0x1FFF) if ty == "tf32" else tab[x & 7]
    w = 0
    for j in range(4 // e):
        w |= (tab[(x >> (3 * j)) & 7] & ((1 << (8 * e)) - 1)) << (8 * e * j)
    return w


def smem_image(ty, probe=False):
    tab = TAB_AB[ty]
    b = bytearray(SMEM)
    if probe:
        for h in range(SMEM // 2):
            struct.pack_into("<H", b, 2 * h, f16_bits(float(h % 2048)))
        return bytes(b)
    for w in range(SMEM // 4):
        struct.pack_into("<I", b, 4 * w, word_of(hash32(w, SEED_SMEM), ty, tab))
    return bytes(b)


# ---------------------------------------------------------------- values of element codes
def f16_val(h):
    s = -1.0 if h & 0x8000 else 1.0
    e, m = (h >> 10) & 31, h & 1023
    if e == 0:
        return s * m * 2.0 ** -24
    if e == 31:
        return s * float("inf") if m == 0 else float("nan")
    return s * (1 + m / 1024) * 2.0 ** (e - 15)


def f32_val(u):
    return struct.unpack("<f", struct.pack("<I", u & 0xFFFFFFFF))[0]


def f8_val(c, ty):
    eb, mb, bias = (4, 3, 7) if ty == "e4m3" else (5, 2, 15)
    s = -1.0 if c & 0x80 else 1.0
    e, m = (c >> mb) & ((1 << eb) - 1), c & ((1 << mb) - 1)
    if e == 0:
        return s * m * 2.0 ** (1 - bias - mb)
    return s * (1 + m / (1 << mb)) * 2.0 ** (e - bias)


def elem_val(code, ty):
    if ty == "f16":
        return f16_val(code)
    if ty == "bf16":
        return f32_val(code << 16)
    if ty == "tf32":
        return f32_val(code & 0xFFFFE000)  # the low 13 bits do not take part
    if ty in ("e4m3", "e5m2"):
        return f8_val(code, ty)
    if ty == "s8":
        return code - 256 if code & 0x80 else code
    return code


def f16_bits(v):
    import numpy as np
    return int(np.array([v], dtype=np.float16).view(np.uint16)[0])


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


# ---------------------------------------------------------------- the cases
class Case:
    def __init__(self, name, dty, aty, bty, n, adesc, bdesc, trans_a=0, trans_b=0, neg_a=0, neg_b=0, sat=False,
                 groups=1, scales=(1,), probe=False):
        self.name, self.dty, self.aty, self.bty, self.n = name, dty, aty, bty, n
        self.adesc, self.bdesc = adesc, bdesc  # None: A in registers; else (swz, lbo, sbo, start, base_off)
        self.trans_a, self.trans_b, self.neg_a, self.neg_b, self.sat = trans_a, trans_b, neg_a, neg_b, sat
        self.groups, self.scales = groups, scales
        # probe: shared half-word h holds the f16 value h % 2048 and A (in registers) is one-hot,
        # A[m][k] = (k == m % 16), so D[m][n] is the index of the half-word read for B[m % 16][n]
        self.probe = probe
        self.e = ESIZE[aty]
        self.k = KDIM[self.e]

    def nd(self):
        return self.n // 4 if self.dty == "f16" else self.n // 2

    def shape(self):
        # .b1: K is 256 bits, 32 bytes (the model treats a byte of 8 bits as one element)
        return "m64n%dk%d" % (self.n, 256 if self.aty == "b1" else self.k)

    def instr(self, dregs, a, adesc, bdesc):
        sat = ".satfinite" if self.sat else ""
        head = "wgmma.mma_async.sync.aligned.%s%s.%s.%s.%s" % (self.shape(), sat, self.dty, self.aty, self.bty)
        if self.aty == "b1":
            head += ".and.popc"
        ops = ["{%s}" % ", ".join(dregs), a if self.adesc is None else adesc, bdesc, "%scd"]
        if self.aty in ("f16", "bf16", "tf32", "e4m3", "e5m2"):
            ops += ["-1" if self.neg_a else "1", "-1" if self.neg_b else "1"]
        if self.aty in ("f16", "bf16"):
            if self.adesc is not None:
                ops.append(str(self.trans_a))
            ops.append(str(self.trans_b))
        return head + " " + ", ".join(ops) + ";"


def desc_offset(major_k, swz, lbo, sbo, r, k, e):
    """Byte offset from the descriptor's start of element (r, k): r along M (A) or N (B), k along K.
    K-major: rows of the matrix are M/N, K contiguous; MN-major: K rows, M/N contiguous."""
    w = SWZ_BYTES[swz]
    if major_k:
        kb = k * e
        if w == 0:
            return (r % 8) * 16 + (r // 8) * sbo + (kb // 16) * lbo + kb % 16
        return (r % 8) * w + (r // 8) * sbo + kb
    mb = r * e
    if w == 0:
        return mb % 16 + (mb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
    return mb % w + (mb // w) * lbo + (k % 8) * w + (k // 8) * sbo


def swizzle(addr, swz, base_off=0):
    """The 16-byte chunk (address bits 4..) XOR the 128-byte row within the swizzle pattern
    (address bits 7..), less the descriptor's base offset (as an H200 does: wgmma_gpu.py's
    f16_baseoff case; the base offset is 0 for patterns that start on their alignment)."""
    w = SWZ_BYTES[swz]
    if w == 0:
        return addr
    return addr ^ ((((addr >> 7) - base_off) & (w // 16 - 1)) << 4)


def desc_addr(d, major_k, r, k, e, group_off):
    swz, lbo, sbo, start, base_off = d
    a = start + group_off + desc_offset(major_k, swz, lbo, sbo, r, k, e)
    return swizzle(a, swz, base_off)


def max_addr(d, major_k, rows, kdim, e):
    if d is None:
        return 0
    return max(desc_addr(d, major_k, r, k, e, 0) for r in range(rows) for k in range(kdim)) + e


def probe_a(lane, j):
    """The one-hot A register j of a lane in a probe (two f16 codes)."""
    w = 0
    for i in range(2):
        r, k = a_reg_map(2, lane, j, i)
        w |= (0x3C00 if k == r else 0) << (16 * i)
    return w


def a_reg_elems(ty, tid, j, probe=False):
    """A-in-registers: the element codes of register j of thread tid (low element first)."""
    if probe:
        w = probe_a(tid % 32, j)
        return [w & 0xFFFF, w >> 16]
    x = hash32(tid * 4 + j, SEED_A)
    w = word_of(x, ty, TAB_AB[ty])
    e = ESIZE[ty]
    return [(w >> (8 * e * i)) & ((1 << (8 * e)) - 1) for i in range(4 // e)]


def c_word(dty, tid, j, nd):
    return word_of(hash32(tid * nd + j, SEED_C), "f16" if dty == "f16" else "x32", TAB_C[dty])


def a_reg_map(e, lane, j, i):
    """(row within the warp's 16, k) of element i of A register j of a lane (the mma.m16n8k* layouts)."""
    g, t = lane // 4, lane % 4
    if e == 2:
        return g + 8 * (j % 2), 2 * t + i + 8 * (j // 2)
    if e == 4:
        return g + 8 * (j % 2), t + 4 * (j // 2)
    return g + 8 * (j % 2), 4 * t + i + 16 * (j // 2)


def d_map(lane, i):
    g, t = lane // 4, lane % 4
    return g + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * t + (i % 2)


GROUP_OFF = 8192  # warpgroup 1 reads its A and B 8 KiB further


def model(c, scale_d):
    """Each thread's D registers (32-bit words), from the definitions above."""
    img = smem_image(c.aty) if c.aty == c.bty else None
    imgs = {c.aty: smem_image(c.aty, c.probe), c.bty: smem_image(c.bty, c.probe)}

    def smem_elem(ty, addr):
        e = ESIZE[ty]
        return int.from_bytes(imgs[ty][addr:addr + e], "little")

    out = []
    nd = c.nd()
    for g in range(c.groups):
        goff = g * GROUP_OFF
        A = [[0.0] * c.k for _ in range(64)]
        B = [[0.0] * c.n for _ in range(c.k)]
        for m in range(64):
            for k in range(c.k):
                if c.adesc is not None:
                    A[m][k] = elem_val(smem_elem(c.aty, desc_addr(c.adesc, not c.trans_a, m, k, c.e, goff)), c.aty)
        if c.adesc is None:
            for w in range(4):
                for lane in range(32):
                    tid = g * 128 + w * 32 + lane
                    for j in range(4):
                        for i, code in enumerate(a_reg_elems(c.aty, tid, j, c.probe)):
                            r, k = a_reg_map(c.e, lane, j, i)
                            A[16 * w + r][k] = elem_val(code, c.aty)
        for k in range(c.k):
            for n in range(c.n):
                B[k][n] = elem_val(smem_elem(c.bty, desc_addr(c.bdesc, not c.trans_b, n, k, c.e, goff)), c.bty)
        sa = -1 if c.neg_a else 1
        sb = -1 if c.neg_b else 1
        for w in range(4):
            for lane in range(32):
                tid = g * 128 + w * 32 + lane
                words = []
                vals = []
                for i in range(c.n // 2):
                    r, col = d_map(lane, i)
                    m = 16 * w + r
                    if c.aty == "b1":  # popc(A row AND B column), a byte of bits at a time
                        s = sum(bin(A[m][k] & B[k][col]).count("1") for k in range(c.k))
                    else:
                        s = sum(A[m][k] * B[k][col] for k in range(c.k)) * sa * sb
                    if c.dty == "f16":
                        cw = c_word(c.dty, tid, i // 2, nd)
                        cv = f16_val((cw >> (16 * (i % 2))) & 0xFFFF)
                    else:
                        cw = c_word(c.dty, tid, i, nd)
                        cv = f32_val(cw) if c.dty == "f32" else (cw - (1 << 32) if cw >> 31 else cw)
                    if c.dty == "s32":
                        v = int(s) + (cv if scale_d else 0)
                        if c.sat:
                            v = max(-(1 << 31), min((1 << 31) - 1, v))
                        vals.append(v & 0xFFFFFFFF)
                    else:
                        v = s + (cv if scale_d else 0.0)
                        v = 0.0 if v == 0 else v  # an exact zero is +0 (as on an H200)
                        vals.append(f16_bits(v) if c.dty == "f16" else f32_bits(v))
                if c.dty == "f16":
                    words = [vals[2 * j] | vals[2 * j + 1] << 16 for j in range(nd)]
                else:
                    words = vals
                out.append(words)
    return out


# ---------------------------------------------------------------- PTX
def hash_ptx(dst, idx, seed):
    return [f"\tmad.lo.u32 {dst}, {idx}, -1640531535, {seed};", f"\tshr.u32 %h1, {dst}, 15;",
            f"\txor.b32 {dst}, {dst}, %h1;", f"\tmul.lo.u32 {dst}, {dst}, -2048144789;",
            f"\tshr.u32 %h1, {dst}, 13;", f"\txor.b32 {dst}, {dst}, %h1;"]


def word_ptx(dst, x, ty, tab_off):
    """dst = word_of(x, ty, tab[tab_off..]) with tab at %tab (u32 entries)."""
    s = []
    e = ESIZE.get(ty, 4) if ty != "f16x2" else 2
    if e == 4:
        s += [f"\tand.b32 %h2, {x}, 7;", f"\tmul.wide.u32 %ha, %h2, 4;", "\tadd.s64 %ha, %ha, %tab;",
              f"\tld.global.u32 {dst}, [%ha+{4 * tab_off}];"]
        if ty == "tf32":
            s += [f"\tshr.u32 %h2, {x}, 3;", "\tand.b32 %h2, %h2, 8191;", f"\tor.b32 {dst}, {dst}, %h2;"]
        return s
    s.append(f"\tmov.u32 {dst}, 0;")
    for j in range(4 // e):
        s += [f"\tshr.u32 %h2, {x}, {3 * j};", "\tand.b32 %h2, %h2, 7;", "\tmul.wide.u32 %ha, %h2, 4;",
              "\tadd.s64 %ha, %ha, %tab;", f"\tld.global.u32 %h3, [%ha+{4 * tab_off}];",
              f"\tand.b32 %h3, %h3, {(1 << (8 * e)) - 1};", f"\tshl.b32 %h3, %h3, {8 * e * j};",
              f"\tor.b32 {dst}, {dst}, %h3;"]
    return s


def desc_ptx(dst, d, major_k):
    swz, lbo, sbo, start, base_off = d
    hi = (sbo >> 4) | (base_off << 17) | (swz << 30)
    return [f"\tadd.u32 %h2, %sbase, {start};", "\tadd.u32 %h2, %h2, %goff;", "\tshr.u32 %h2, %h2, 4;",
            "\tand.b32 %h2, %h2, 16383;", f"\tor.b32 %h2, %h2, {(lbo >> 4) << 16};",
            f"\tmov.b64 {dst}, {{%h2, {hi}}};"]


def kernel_ptx(c):
    nd = c.nd()
    dregs = ["%%d%d" % i for i in range(nd)]
    s = [f".visible .entry {c.name}(.param .u64 ptab, .param .u64 pout, .param .u32 pscale)", "{",
         f"\t.reg .b32 %tt, %w, %x, %h<4>, %sbase, %goff, %d<{nd}>, %a<4>, %sc;",
         "\t.reg .b64 %tab, %out, %ha, %sa, %da, %db;", "\t.reg .pred %p, %scd;", "\t.reg .b16 %hl, %hh;",
         "\tld.param.u64 %tab, [ptab];", "\tld.param.u64 %out, [pout];", "\tld.param.u32 %sc, [pscale];",
         "\tcvta.to.global.u64 %tab, %tab;", "\tcvta.to.global.u64 %out, %out;",
         "\tsetp.ne.u32 %scd, %sc, 0;", "\tmov.u32 %tt, %tid.x;", "\tmov.u32 %sbase, smem;",
         # fill shared memory: A's type in the first half of the table for A and B (same type or not:
         # the A and B images are the same hash, each with its own type's codes)
         "\tmov.u32 %w, %tt;", "FILL:", f"\tsetp.ge.u32 %p, %w, {SMEM // 4};", "\t@%p bra FILLED;"]
    if c.aty != c.bty:
        raise ValueError("mixed input types share one image; use cases with aty == bty or the image of A")
    if c.probe:  # half-words 2w and 2w + 1 hold (2w) % 2048 and (2w + 1) % 2048 as f16
        s += ["\tshl.b32 %h2, %w, 1;", "\tand.b32 %h2, %h2, 2047;", "\tcvt.rn.f16.u32 %hl, %h2;",
              "\tadd.u32 %h2, %h2, 1;", "\tcvt.rn.f16.u32 %hh, %h2;", "\tmov.b32 %h0, {%hl, %hh};"]
    else:
        s += hash_ptx("%x", "%w", SEED_SMEM)
        s += word_ptx("%h0", "%x", c.aty, 0)
    s += ["\tshl.b32 %h1, %w, 2;", "\tadd.u32 %h1, %h1, %sbase;", "\tst.shared.u32 [%h1], %h0;",
          f"\tadd.u32 %w, %w, {128 * c.groups};", "\tbra FILL;", "FILLED:", "\tbar.sync 0;"]
    # A registers and C
    if c.probe:  # one-hot A: tab[16 + 4 * lane + j]
        s += ["\tand.b32 %w, %tt, 31;", "\tmul.wide.u32 %ha, %w, 16;", "\tadd.s64 %ha, %ha, %tab;"]
        s += [f"\tld.global.u32 %a{j}, [%ha+{64 + 4 * j}];" for j in range(4)]
    elif c.adesc is None:
        for j in range(4):
            s += [f"\tshl.b32 %w, %tt, 2;", f"\tadd.u32 %w, %w, {j};"]
            s += hash_ptx("%x", "%w", SEED_A)
            s += word_ptx(f"%a{j}", "%x", c.aty, 0)
    cty = "f16x2" if c.dty == "f16" else "x32"
    for j in range(nd):
        s += [f"\tmul.lo.u32 %w, %tt, {nd};", f"\tadd.u32 %w, %w, {j};"]
        s += hash_ptx("%x", "%w", SEED_C)
        s += word_ptx(f"%d{j}", "%x", cty, 8)
    s += ["\tshr.u32 %goff, %tt, 7;", f"\tmul.lo.u32 %goff, %goff, {GROUP_OFF};"]
    if c.adesc is not None:
        s += desc_ptx("%da", c.adesc, not c.trans_a)
    s += desc_ptx("%db", c.bdesc, not c.trans_b)
    s += ["\twgmma.fence.sync.aligned;", "\t" + c.instr(dregs, "{%a0, %a1, %a2, %a3}", "%da", "%db"),
          "\twgmma.commit_group.sync.aligned;", "\twgmma.wait_group.sync.aligned 0;",
          f"\tmul.wide.u32 %sa, %tt, {4 * nd};", "\tadd.s64 %sa, %sa, %out;"]
    for j in range(nd):
        s.append(f"\tst.global.u32 [%sa+{4 * j}], %d{j};")
    s += ["\tret;", "}"]
    return "\n".join(s)


def tab_words(c):
    t = TAB_AB[c.aty] + TAB_C[c.dty]
    if c.probe:
        t += [probe_a(lane, j) for lane in range(32) for j in range(4)]
    return t


def header():
    return (".version 8.0\n.target sm_90a\n.address_size 64\n\n"
            f".shared .align 1024 .b8 smem[{SMEM}];\n")


def cases():
    rng = random.Random(90)
    cs = []

    def kd(swz, rows, e, canonical=True):
        """A K-major descriptor: (swz, lbo, sbo, start, base_off)."""
        w = SWZ_BYTES[swz]
        if w == 0:
            lbo, sbo = rng.choice([(128, 256), (1024, 128), (256, 512), (2048, 4096 // max(1, rows // 64))])
            return (0, lbo, sbo, rng.choice([0, 16, 64, 1024]), 0)
        lbo = 16 if canonical else rng.choice([256, 4096])
        start = rng.choice([0, 32, w - 32, 2048]) if w > 32 else rng.choice([0, 2048])
        return (swz, lbo, 8 * w, start, 0)

    def mnd(swz, rows, e):
        """An MN-major descriptor (f16/bf16 only)."""
        w = SWZ_BYTES[swz]
        if w == 0:
            return (0, rng.choice([256, 1024]), rng.choice([128, 512]), rng.choice([0, 1024]), 0)
        span = rows * e
        lbo = max(8 * w * 2, 2048) if span > w else 16
        return (swz, lbo, 8 * w, rng.choice([0, 1024]), 0)

    # f16 -> f32: every swizzle for A and B, K-major and MN-major, several N
    for swz in (0, 1, 2, 3):
        for ta, tb in ((0, 0), (1, 1), (0, 1), (1, 0)):
            n = rng.choice([8, 16, 24, 32])
            a = mnd(swz, 64, 2) if ta else kd(swz, 64, 2)
            b = mnd(swz, n, 2) if tb else kd(swz, n, 2)
            cs.append(Case(f"f16_s{swz}_t{ta}{tb}_n{n}", "f32", "f16", "f16", n, a, b, ta, tb))
    for n in (64, 256):
        cs.append(Case(f"f16_n{n}", "f32", "f16", "f16", n, kd(1, 64, 2), kd(1, n, 2), scales=(1, 0)))
    cs.append(Case("f16_n136_mn", "f32", "f16", "f16", 136, kd(1, 64, 2), mnd(1, 136, 2), 0, 1))
    cs.append(Case("f16_lbo_ignored", "f32", "f16", "f16", 16, kd(1, 64, 2, False), kd(2, 16, 2, False)))
    cs.append(Case("f16_neg", "f32", "f16", "f16", 16, kd(3, 64, 2), kd(0, 16, 2), neg_a=1, scales=(1, 0)))
    cs.append(Case("f16_negb", "f32", "f16", "f16", 8, kd(0, 64, 2), kd(1, 8, 2), neg_b=1))
    cs.append(Case("f16_negab", "f32", "f16", "f16", 8, kd(2, 64, 2), kd(2, 8, 2), neg_a=1, neg_b=1))
    cs.append(Case("f16_2wg", "f32", "f16", "f16", 32, kd(1, 64, 2), kd(1, 32, 2), groups=2))
    # base offset and an unaligned start under 128B swizzle (what the hardware makes of them)
    cs.append(Case("f16_baseoff", "f32", "f16", "f16", 16, (1, 16, 1024, 384, 3), (1, 16, 1024, 128, 1)))
    cs.append(Case("f16_unaligned", "f32", "f16", "f16", 16, (1, 16, 1024, 384, 0), (2, 16, 512, 192, 0)))
    # A in registers
    for n, tb, bs in ((8, 0, 0), (16, 1, 1), (64, 0, 1), (24, 1, 3)):
        b = mnd(bs, n, 2) if tb else kd(bs, n, 2)
        cs.append(Case(f"f16_areg_n{n}_t{tb}", "f32", "f16", "f16", n, None, b, 0, tb))
    cs.append(Case("f16_areg_neg_2wg", "f32", "f16", "f16", 16, None, kd(1, 16, 2), neg_a=1, neg_b=1, groups=2))
    # f16 accumulators
    cs.append(Case("f16acc_n16", "f16", "f16", "f16", 16, kd(1, 64, 2), kd(1, 16, 2), scales=(1, 0)))
    cs.append(Case("f16acc_areg_n32_t1", "f16", "f16", "f16", 32, None, mnd(2, 32, 2), 0, 1))
    cs.append(Case("f16acc_mn_n8", "f16", "f16", "f16", 8, mnd(0, 64, 2), mnd(3, 8, 2), 1, 1))
    # bf16
    cs.append(Case("bf16_n32", "f32", "bf16", "bf16", 32, kd(1, 64, 2), kd(1, 32, 2)))
    cs.append(Case("bf16_mn_n16", "f32", "bf16", "bf16", 16, mnd(1, 64, 2), mnd(1, 16, 2), 1, 1, neg_b=1))
    cs.append(Case("bf16_areg_n8", "f32", "bf16", "bf16", 8, None, kd(0, 8, 2)))
    # tf32
    for swz in (0, 1, 2, 3):
        n = rng.choice([8, 16, 32])
        cs.append(Case(f"tf32_s{swz}_n{n}", "f32", "tf32", "tf32", n, kd(swz, 64, 4), kd(swz, n, 4)))
    cs.append(Case("tf32_areg_n16", "f32", "tf32", "tf32", 16, None, kd(1, 16, 4), neg_a=1))
    # 8-bit floats
    for dty in ("f32", "f16"):
        for ty in ("e4m3", "e5m2"):
            cs.append(Case(f"{ty}_{dty}_n16", dty, ty, ty, 16, kd(1, 64, 1), kd(rng.choice([0, 2, 3]), 16, 1)))
    cs.append(Case("e4m3_areg_n8", "f32", "e4m3", "e4m3", 8, None, kd(1, 8, 1), neg_b=1))
    # integers
    for ty in ("s8", "u8"):
        cs.append(Case(f"{ty}_n16", "s32", ty, ty, 16, kd(1, 64, 1), kd(0, 16, 1), scales=(1, 0)))
        cs.append(Case(f"{ty}_sat_n8", "s32", ty, ty, 8, kd(3, 64, 1), kd(1, 8, 1), sat=True))
    cs.append(Case("s8_areg_sat_n24", "s32", "s8", "s8", 24, None, kd(2, 24, 1), sat=True))
    # single-bit: .and.popc, K = 256 bits
    cs.append(Case("b1_n16", "s32", "b1", "b1", 16, kd(1, 64, 1), kd(0, 16, 1), scales=(1, 0)))
    cs.append(Case("b1_areg_n24", "s32", "b1", "b1", 24, None, kd(3, 24, 1)))
    # probes: D shows which half-word each B element was read from
    for swz in (0, 1, 2, 3):
        cs.append(Case(f"probe_k_s{swz}", "f32", "f16", "f16", 16, None, kd(swz, 16, 2), 0, 0, scales=(0,), probe=True))
        cs.append(Case(f"probe_mn_s{swz}", "f32", "f16", "f16", 16, None, mnd(swz, 16, 2), 0, 1, scales=(0,),
                       probe=True))
    return cs


def hexs(words):
    return ",".join("0x%08x" % w for w in words)


def run_line(c, scale):
    nthreads = 128 * c.groups
    return (f"// run: {c.name}<<<1, {nthreads}>>> buf:u32:{hexs(tab_words(c))} "
            f"buf:zero:{4 * c.nd() * nthreads} u32:{scale}")


def check_bounds(c):
    for d, major_k, rows in ((c.adesc, not c.trans_a, 64), (c.bdesc, not c.trans_b, c.n)):
        top = max_addr(d, major_k, rows, c.k, c.e) + (c.groups - 1) * GROUP_OFF
        if top > SMEM:
            raise ValueError(f"{c.name}: reads up to byte {top} of {SMEM}")


def gpu_one(name):
    """Runs one case on the GPU (in its own process: a fault poisons the CUDA context) and prints JSON."""
    import json
    import cupy as cp
    import numpy as np
    sys.path.insert(0, os.path.dirname(__file__))
    from ptxgen import load_ptx
    c = {c.name: c for c in cases()}[name]
    res = {"name": name, "runs": {}}
    try:
        fn = load_ptx(cp, header() + "\n" + kernel_ptx(c) + "\n").get_function(c.name)
        for scale in c.scales:
            nthreads = 128 * c.groups
            tab = cp.asarray(np.array(tab_words(c), dtype=np.uint32))
            out = cp.zeros(c.nd() * nthreads, dtype=np.uint32)
            fn((1,), (nthreads,), (tab, out, np.uint32(scale)))
            cp.cuda.runtime.deviceSynchronize()
            res["runs"][str(scale)] = [int(x) for x in cp.asnumpy(out)]
    except Exception as ex:  # noqa: BLE001
        res["error"] = str(ex).splitlines()[0]
    print(json.dumps(res))


def gpu(outdir):
    import json
    import subprocess
    from concurrent.futures import ThreadPoolExecutor
    os.makedirs(outdir, exist_ok=True)
    cs = cases()
    for c in cs:
        check_bounds(c)

    def run(c):
        r = subprocess.run([sys.executable, __file__, "--gpu-one", c.name], capture_output=True, text=True, timeout=300)
        try:
            return json.loads(r.stdout.strip().splitlines()[-1])
        except Exception:  # noqa: BLE001
            return {"name": c.name, "error": "crashed: " + (r.stderr.strip().splitlines() or ["?"])[-1]}
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, cs))
    with open(os.path.join(outdir, "wgmma_raw.json"), "w") as f:
        json.dump(results, f)
    write_filetests(results, outdir)


def le_hex(words):
    return "".join(w.to_bytes(4, "little").hex() for w in words)


def write_filetests(results, outdir):
    """OUTDIR/wgmma.ptx (N < 64) and OUTDIR/wgmma_wide.ptx (N >= 64) from the GPU's results;
    the run with scale-d false of a wide case is left out (the narrow cases have it)."""
    cs = {c.name: c for c in cases()}
    files = {"wgmma.ptx": [], "wgmma_wide.ptx": []}
    agree = disagree = 0
    for res in results:
        c = cs[res["name"]]
        if "error" in res:
            print(f"{c.name}: GPU error: {res['error']}")
            continue
        body = files["wgmma_wide.ptx" if c.n >= 64 else "wgmma.ptx"]
        body.append(kernel_ptx(c))
        for scale in c.scales:
            got = res["runs"][str(scale)]
            want = [w for t in model(c, scale) for w in t]
            bad = [i for i in range(len(got)) if got[i] != want[i]]
            if bad:
                disagree += 1
                i = bad[0]
                print(f"{c.name} scale {scale}: model differs in {len(bad)}/{len(got)} words; first: thread "
                      f"{i // c.nd()} reg {i % c.nd()}: GPU {got[i]:08x} model {want[i]:08x}")
            else:
                agree += 1
            if c.n >= 64 and scale == 0 and len(c.scales) > 1:
                continue
            body.append(run_line(c, scale))
            body.append(f"// expect: arg1 == hex:{le_hex(got)}")
        body.append("")
    for fname, body in files.items():
        hdr = ["// wgmma.mma_async (PTX ISA 8.x 9.7.15.5) on a real GPU: every `// expect:` value is the result",
               "// that an NVIDIA H200 gave for the same kernel (CuPy RawModule), not a value computed by ptxr.",
               "// Shared memory holds small values from a hash of each word's index, A (in registers) and C",
               "// likewise from the thread and register index; every thread stores its D registers.",
               "// Written by tests/filetests/ref/wgmma_gpu.py --gpu (or --from-raw); do not edit by hand."]
        with open(os.path.join(outdir, fname), "w") as f:
            f.write("\n".join(hdr) + "\n" + header() + "\n" + "\n".join(body) + "\n")
    print(f"model agrees with the GPU on {agree} runs, differs on {disagree}")


def check(path):
    """Compares the model with the GPU's results stored in a filetest written by --gpu."""
    text = open(path).read().splitlines()
    by_name = {c.name: c for c in cases()}
    bad = good = 0
    for i, l in enumerate(text):
        if l.startswith("// run:"):
            name = l.split()[2].split("<<<")[0]
            scale = int(l.split("u32:")[-1])
            spec = text[i + 1].split("== ", 1)[1]
            if spec.startswith("hex:"):
                h = spec[4:]
                got = [int.from_bytes(bytes.fromhex(h[j:j + 8]), "little") for j in range(0, len(h), 8)]
            else:
                got = [int(x, 16) for x in spec.split("u32:")[1].split(",")]
            c = by_name[name]
            want = [w for t in model(c, scale) for w in t]
            diff = [j for j in range(len(got)) if got[j] != want[j]]
            if diff:
                bad += 1
                j = diff[0]
                print(f"{name} scale {scale}: {len(diff)}/{len(got)} differ; thread {j // c.nd()} reg {j % c.nd()}: "
                      f"GPU {got[j]:08x} model {want[j]:08x}")
            else:
                good += 1
    print(f"{good} agree, {bad} differ")


def ptx_only(path):
    body = []
    for c in cases():
        check_bounds(c)
        body.append(kernel_ptx(c))
    with open(path, "w") as f:
        f.write(header() + "\n" + "\n\n".join(body) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu")
    ap.add_argument("--check")
    ap.add_argument("--gpu-one")
    ap.add_argument("--from-raw", nargs=2, metavar=("RAW_JSON", "OUTDIR"))
    ap.add_argument("--ptx", help="write the kernels alone (for ptxas) to this file")
    a = ap.parse_args()
    if a.from_raw:
        import json
        write_filetests(json.load(open(a.from_raw[0])), a.from_raw[1])
    elif a.gpu_one:
        gpu_one(a.gpu_one)
    elif a.gpu:
        gpu(a.gpu)
    elif a.check:
        check(a.check)
    elif a.ptx:
        ptx_only(a.ptx)
