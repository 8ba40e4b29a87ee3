#!/usr/bin/env python3
"""Writes tests/filetests/warp/tcgen05.ptx: Blackwell's tensor memory (PTX ISA 9.0 9.7.16,
sm_100a) — tcgen05.alloc/dealloc, tcgen05.ld/st in every shape (with .pack::16b/.unpack::16b),
and tcgen05.mma (.kind::f16 with f32 and f16 D, .kind::i8) from shared-memory descriptors, M 64
and 128, K-major and transposed (N-major) B, enable-input-d, completed through tcgen05.commit on
an mbarrier.

Expected values are computed here from the ISA's definitions, independently of ptxr:
- tensor memory addresses are lane << 16 | column (9.7.16.1); warp w of a warpgroup reaches
  lanes 32w.. (9.7.16.8.1);
- the ld/st fragments (9.7.16.2.3.1; figures in the ISA, as CUTLASS's copy atoms give them):
  thread t, register i: .32x32b lane t, column i; .16x64b lane t/4 + 8(t%2), column
  2i + (t/2)%2; .16x128b lane t/4 + 8(i%2), column 4(i/2) + t%4; .16x256b lane
  t/4 + 8((i%4)/2), column 8(i/4) + 2(t%4) + i%2; .16x32bx2 lane t%16, column
  i + (t/16)*immHalfSplitoff; .pack::16b joins two adjacent columns' low halves;
- the shared-memory matrices use the canonical layouts without swizzling (9.7.16.3.3): K-major
  element (r, k) at (r%8)*16 + (r/8)*SBO + (k*s/16)*LBO + (k*s)%16, MN-major at
  (r*s)%16 + (r*s/16)*SBO + (k%8)*16 + (k/8)*LBO, s the element size;
- the instruction descriptor (9.7.16.4.2, Table 42) and the data-path layouts (9.7.16.10.5):
  D row m is lane m for M = 128 and lane 32(m/16) + m%16 for M = 64, column n is column n.

The `layouts` kernel writes every cell with its own (lane << 8 | column) through .32x32b and
reads it back through each shape; then stores through each shape into zeroed columns and reads
those back through .32x32b. The mma kernels copy A's and B's images (made here) from `img` into
shared memory, issue the products from thread 0, and store D as each thread loads it.
Usage: python3 tests/filetests/ref/tcgen05_ref.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "warp", "tcgen05.ptx")

HEAD = """// tcgen05 (PTX ISA 9.0 9.7.16, sm_100a): tensor memory allocation, tcgen05.ld/st in every
// shape, tcgen05.mma from shared-memory descriptors, tcgen05.commit. Expected values computed
// from the ISA's definitions by tests/filetests/ref/tcgen05_ref.py (its docstring gives them),
// independently of ptxr; do not edit by hand.
.version 8.7
.target sm_100a
.address_size 64
"""


def f16(x):
    return struct.unpack("<H", struct.pack("<e", float(x)))[0]


def f32(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


# ---- layouts ----

def place(shape, t, i, imm=0, pack=False):
    """(lane within the warp's quarter, column) of register i of thread t."""
    if shape == "32x32b":
        return t, 2 * i if pack else i
    if shape == "16x64b":
        return t // 4 + 8 * (t % 2), 2 * i + (t // 2) % 2
    if shape == "16x128b":
        return t // 4 + 8 * (i % 2), 4 * (i // 2) + t % 4
    if shape == "16x256b":
        k = i % 4
        return t // 4 + 8 * (k // 2), 8 * (i // 4) + 2 * (t % 4) + k % 2
    return t % 16, (2 * i if pack else i) + (t // 16) * imm


# Phase 1 loads: (shape, num, regs, imm, pack)
LOADS = [("16x64b", 1, 1, 0, False), ("16x128b", 1, 2, 0, False), ("16x256b", 1, 4, 0, False),
         ("16x32bx2", 2, 2, 2, False), ("32x32b", 1, 1, 0, True), ("16x32bx2", 1, 1, 4, True)]
# Phase 2 stores at column bases: (shape, num, regs, imm, pack, base column, value(t, i))
STORES = [("16x256b", 1, 4, 0, False, 16, lambda t, i: 0x10000 * (i + 1) | t),
          ("16x64b", 1, 1, 0, False, 24, lambda t, i: 0x50000 | t),
          ("16x128b", 1, 2, 0, False, 28, lambda t, i: 0x60000 * (i + 1) | t),
          ("16x32bx2", 1, 1, 1, False, 36, lambda t, i: 0x80000 | t),
          ("32x32b", 1, 1, 0, True, 40, lambda t, i: (0x0A00 + t) | (0x0B00 + t) << 16)]


def layouts_expect():
    out = [0] * (128 * 48)
    for w in range(4):
        # phase 1: cell (lane, col) holds lane << 8 | col for columns 0..7
        for t in range(32):
            k = 0
            for shape, num, nregs, imm, pack in LOADS:
                for i in range(nregs):
                    ln, col = place(shape, t, i, imm, pack)
                    lane = 32 * w + ln
                    if pack:
                        v = (lane << 8 | col) & 0xFFFF | ((lane << 8 | col + 1) & 0xFFFF) << 16
                    else:
                        v = lane << 8 | col
                    out[(32 * w + t) * 48 + k] = v
                    k += 1
        # phase 2: columns 16..47 zeroed, then the stores
        cells = {}
        for shape, num, nregs, imm, pack, base, val in STORES:
            for t in range(32):
                for i in range(nregs):
                    ln, col = place(shape, t, i, imm, pack)
                    v = val(t, i)
                    if pack:
                        cells[(ln, base + col)] = v & 0xFFFF
                        cells[(ln, base + col + 1)] = v >> 16
                    else:
                        cells[(ln, base + col)] = v
        for t in range(32):
            for j in range(32):
                out[(32 * w + t) * 48 + 16 + j] = cells.get((t, 16 + j), 0)
    return out


def layouts_kernel():
    s = [".visible .entry layouts(.param .u64 pout)", "{",
         "\t.reg .pred %p<4>;", "\t.reg .b32 %t, %w, %lane, %ta, %tw, %v, %x<40>, %z;", "\t.reg .b64 %o, %a;",
         "\t.shared .align 4 .b32 slot;",
         "\tld.param.u64 %o, [pout];", "\tmov.u32 %t, %tid.x;", "\tand.b32 %lane, %t, 31;",
         "\tshr.u32 %w, %t, 5;", "\tsetp.eq.u32 %p1, %w, 0;",
         "\tmov.u32 %x0, slot;",
         "\t@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%x0], 128;",
         "\tbar.sync 0;", "\tld.shared.u32 %ta, [slot];",
         "\tshl.b32 %tw, %w, 21;", "\tadd.u32 %tw, %tw, %ta;",
         "\t// phase 1: cell (lane, col) = lane << 8 | col, columns 0..7",
         "\tshl.b32 %v, %w, 5;", "\tadd.u32 %v, %v, %lane;", "\tshl.b32 %v, %v, 8;"]
    for i in range(8):
        s.append(f"\tor.b32 %x{i}, %v, {i};")
    s.append("\ttcgen05.st.sync.aligned.32x32b.x8.b32 [%tw], {" + ", ".join(f"%x{i}" for i in range(8)) + "};")
    s.append("\ttcgen05.wait::st.sync.aligned;")
    s.append("\tmul.wide.u32 %a, %t, 192;")
    s.append("\tadd.u64 %a, %a, %o;")
    k = 0
    for shape, num, nregs, imm, pack in LOADS:
        regs = ", ".join(f"%x{k + i}" for i in range(nregs))
        p = ".pack::16b" if pack else ""
        tail = f", {imm}" if shape == "16x32bx2" else ""
        s.append(f"\ttcgen05.ld.sync.aligned.{shape}.x{num}{p}.b32 {{{regs}}}, [%tw]{tail};")
        k += nregs
    s.append("\ttcgen05.wait::ld.sync.aligned;")
    for i in range(k):
        s.append(f"\tst.global.u32 [%a+{4 * i}], %x{i};")
    s.append("\t// phase 2: columns 16..47 zeroed, then a store through each shape")
    s.append("\tmov.u32 %z, 0;")
    s.append("\tadd.u32 %x39, %tw, 16;")
    s.append("\ttcgen05.st.sync.aligned.32x32b.x32.b32 [%x39], {" + ", ".join(["%z"] * 32) + "};")
    s.append("\ttcgen05.wait::st.sync.aligned;")
    for shape, num, nregs, imm, pack, base, val in STORES:
        vals = []
        for i in range(nregs):
            # val(t, i) = c | t, or for the unpack store (0x0A00 + t) | (0x0B00 + t) << 16
            c0 = val(0, i)
            if pack:
                s.append(f"\tadd.u32 %x{i}, %lane, {0x0A00};")
                s.append(f"\tadd.u32 %x{20 + i}, %lane, {0x0B00};")
                s.append(f"\tshl.b32 %x{20 + i}, %x{20 + i}, 16;")
                s.append(f"\tor.b32 %x{i}, %x{i}, %x{20 + i};")
            else:
                s.append(f"\tor.b32 %x{i}, %lane, {c0};")
            vals.append(f"%x{i}")
        s.append(f"\tadd.u32 %x38, %tw, {base};")
        u = ".unpack::16b" if pack else ""
        mid = f", {imm}" if shape == "16x32bx2" else ""
        s.append(f"\ttcgen05.st.sync.aligned.{shape}.x{num}{u}.b32 [%x38]{mid}, {{{', '.join(vals)}}};")
    s.append("\ttcgen05.wait::st.sync.aligned;")
    s.append("\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {" + ", ".join(f"%x{i}" for i in range(32)) + "}, [%x39];")
    s.append("\ttcgen05.wait::ld.sync.aligned;")
    for i in range(32):
        s.append(f"\tst.global.u32 [%a+{64 + 4 * i}], %x{i};")
    s += ["\tbar.sync 0;", "\t@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %ta, 128;",
          "\t@%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", "\tret;", "}"]
    return "\n".join(s)


# ---- mma ----

def kmajor(r, k, s, sbo, lbo):
    return (r % 8) * 16 + (r // 8) * sbo + (k * s // 16) * lbo + (k * s) % 16


def mnmajor(r, k, s, sbo, lbo):
    return (r * s) % 16 + (r * s // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo


def mma_case(name, kind, m, n, trans_b, dtype, twice):
    """Images, instruction descriptor, descriptors and expected outputs of one mma kernel."""
    k = 16 if kind == "f16" else 32
    s = 2 if kind == "f16" else 1
    if kind == "f16":
        a = [[(r * 3 + c * 5) % 7 - 3 for c in range(k)] for r in range(m)]
        b = [[(r * 2 + c * 3) % 5 - 2 for c in range(k)] for r in range(n)]
        enc = f16
        atype = btype = 0
    else:
        a = [[(r * 5 + c * 3) % 16 - 8 for c in range(k)] for r in range(m)]  # s8
        b = [[(r * 7 + c) % 16 for c in range(k)] for r in range(n)]  # u8
        enc = lambda x: x & 0xFF
        atype, btype = 1, 0
    # A: K-major, 8-row groups 128 bytes apart, the two K halves (16 bytes each) LBO apart
    a_sbo, a_lbo = 128, (m // 8) * 128
    b_base = 8192
    if trans_b:
        b_sbo, b_lbo = 128, (n * s // 16) * 128
    else:
        b_sbo, b_lbo = 128, (n // 8) * 128
    img = bytearray(9216)
    for r in range(m):
        for c in range(k):
            off = kmajor(r, c, s, a_sbo, a_lbo)
            img[off:off + s] = enc(a[r][c]).to_bytes(s, "little")
    for r in range(n):
        for c in range(k):
            off = b_base + (mnmajor(r, c, s, b_sbo, b_lbo) if trans_b else kmajor(r, c, s, b_sbo, b_lbo))
            img[off:off + s] = enc(b[r][c]).to_bytes(s, "little")
    dcode = {"f16": 0, "f32": 1, "s32": 2}[dtype]
    idesc = dcode << 4 | atype << 7 | btype << 10 | (1 << 16 if trans_b else 0) | (n >> 3) << 17 | (m >> 4) << 24

    def desc(addr, lbo, sbo):
        # start, LBO, SBO (>> 4), the fixed 0b001 at bits 46-48, no swizzle
        return (addr >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46

    adesc = desc(0, a_lbo, a_sbo)
    bdesc = desc(b_base, b_lbo, b_sbo)
    d = [[sum(a[r][c] * b[j][c] for c in range(k)) * (2 if twice else 1) for j in range(n)] for r in range(m)]
    # What each thread loads: M 128 .32x32b.x{n} (lane = row), M 64 .16x32bx2.x{n/2} with
    # immHalfSplitoff n/2 (lane t%16 of warp w is row 16w + t%16, columns from (t/16) n/2).
    per = n if m == 128 else n // 2
    out = []
    for t in range(128):
        w, l = t // 32, t % 32
        for i in range(per):
            if m == 128:
                row, col = t, i
            else:
                row, col = 16 * w + l % 16, i + (l // 16) * per
            v = d[row][col]
            out.append(f32(v) if dtype == "f32" else f16(v) if dtype == "f16" else v & 0xFFFFFFFF)
    return dict(name=name, kind=kind, m=m, n=n, img=img, idesc=idesc, adesc=adesc, bdesc=bdesc, twice=twice, per=per, out=out)


def mma_kernel(c):
    m, per = c["m"], c["per"]
    regs = ", ".join(f"%d{i}" for i in range(per))
    ld = f"tcgen05.ld.sync.aligned.32x32b.x{per}.b32 {{{regs}}}, [%tw];" if m == 128 else \
        f"tcgen05.ld.sync.aligned.16x32bx2.x{per}.b32 {{{regs}}}, [%tw], {per};"
    s = [f".visible .entry {c['name']}(.param .u64 pimg, .param .u64 pout)", "{",
         "\t.reg .pred %p<8>;", f"\t.reg .b32 %t, %w, %ta, %tw, %i, %x, %id, %d<{max(per, 1)}>;",
         "\t.reg .b64 %img, %o, %a, %ad, %bd, %q;",
         "\t.shared .align 1024 .b8 mat[16384];", "\t.shared .align 8 .b64 bar;", "\t.shared .align 4 .b32 slot;",
         "\tld.param.u64 %img, [pimg];", "\tld.param.u64 %o, [pout];", "\tmov.u32 %t, %tid.x;",
         "\tshr.u32 %w, %t, 5;", "\tsetp.eq.u32 %p1, %w, 0;",
         "\t// A's and B's images into shared memory, a word per thread at a time",
         "\tmov.u32 %i, %t;",
         "COPY:", "\tmul.wide.u32 %q, %i, 4;", "\tadd.u64 %a, %img, %q;", "\tld.global.u32 %x, [%a];",
         "\tmov.u64 %a, mat;", "\tadd.u64 %a, %a, %q;", "\tst.shared.u32 [%a], %x;",
         "\tadd.u32 %i, %i, 128;", "\tsetp.lt.u32 %p2, %i, 2304;", "\t@%p2 bra COPY;",
         "\tmov.u32 %x, slot;",
         "\t@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%x], 32;",
         "\tsetp.eq.u32 %p3, %t, 0;", "\tmov.u32 %x, bar;",
         "\t@%p3 mbarrier.init.shared::cta.b64 [%x], 1;",
         "\tfence.proxy.async.shared::cta;", "\tbar.sync 0;", "\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.u32 %ta, [slot];",
         "\t// the descriptors' start addresses: mat's shared address (>> 4) added",
         f"\tmov.b64 %ad, {c['adesc']};", f"\tmov.b64 %bd, {c['bdesc']};", f"\tmov.u32 %id, {c['idesc']};",
         "\tmov.u32 %i, mat;", "\tshr.u32 %i, %i, 4;", "\tcvt.u64.u32 %q, %i;",
         "\tadd.u64 %ad, %ad, %q;", "\tadd.u64 %bd, %bd, %q;",
         "\tsetp.ne.u32 %p4, %t, %t;", "\tsetp.eq.u32 %p5, %t, %t;",
         "\t@!%p3 bra WAIT;",
         f"\ttcgen05.mma.cta_group::1.kind::{c['kind']} [%ta], %ad, %bd, %id, %p4;"]
    if c["twice"]:
        s.append(f"\ttcgen05.mma.cta_group::1.kind::{c['kind']} [%ta], %ad, %bd, %id, %p5;")
    s += ["\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%x];",
          "WAIT:", "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%x], 0;", "\t@!%p2 bra WAIT;",
          "\ttcgen05.fence::after_thread_sync;",
          "\tshl.b32 %tw, %w, 21;", "\tadd.u32 %tw, %tw, %ta;", "\t" + ld, "\ttcgen05.wait::ld.sync.aligned;",
          f"\tmul.wide.u32 %q, %t, {4 * per};", "\tadd.u64 %a, %o, %q;"]
    for i in range(per):
        s.append(f"\tst.global.u32 [%a+{4 * i}], %d{i};")
    s += ["\tbar.sync 0;", "\t@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %ta, 32;", "\tret;", "}"]
    return "\n".join(s)


def main():
    parts = [HEAD]
    parts.append("// layouts: per thread 48 words: the phase-1 registers (16 words, 11 used), then\n"
                 "// columns 16..47 of its lane after the phase-2 stores.")
    parts.append(layouts_kernel())
    parts.append("// run: layouts<<<1, 128>>> buf:zero:24576")
    parts.append("// expect: arg0 == u32:" + ",".join(str(v) for v in layouts_expect()))
    cases = [mma_case("mma_f16_m64", "f16", 64, 8, False, "f32", True),
             mma_case("mma_f16_m128_tb", "f16", 128, 16, True, "f32", False),
             mma_case("mma_f16_m64_d16", "f16", 64, 16, True, "f16", True),
             mma_case("mma_i8_m128", "i8", 128, 8, False, "s32", False)]
    for c in cases:
        img = c["img"]
        words = [int.from_bytes(img[i:i + 4], "little") for i in range(0, len(img), 4)]
        parts.append(f"// {c['name']}: M {c['m']}, N {c['n']}, .kind::{c['kind']}, idesc {c['idesc']:#x};"
                     f" D = {'2 A B (a second mma with enable-input-d)' if c['twice'] else 'A B'}")
        parts.append(mma_kernel(c))
        parts.append(f"// run: {c['name']}<<<1, 128>>> buf:u32:" + ",".join(str(w) for w in words) +
                     f" buf:zero:{128 * 4 * c['per']}")
        parts.append("// expect: arg1 == u32:" + ",".join(str(v) for v in c["out"]))
    with open(OUT, "w") as f:
        f.write("\n\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
