#!/usr/bin/env python3
"""Writes tests/filetests/warp/wgmma_sp.ptx: sparse wgmma.mma_async.sp (PTX ISA 8.x 9.7.15.6),
expectations from the reference below, written from the ISA's text: A (64 x K, structured
sparse: 2:4, 1:2 for .tf32) is stored as its kept elements, 64 x K/2, in shared memory (the
canonical K-major layout without swizzle: element (r, k) at (r % 8) * 16 + (r / 8) * SBO +
(kb / 16) * LBO + kb % 16, kb = k * size) or in registers (the A fragment of mma.m16n8 with K/2,
warp w holding rows 16w..16w+15); each warp's metadata as mma.sp's (the ISA draws the same
figures): chunk j of row g of the warp in bits 4 (j % 4) of thread selector * T + j / 4 of
group g, row g + 8 in the upper half-word, the lower index first (.tf32: 0b0100 / 0b1110);
other threads' metadata is garbage. B is N x K, K-major, same layout. D = A * B (scale-d 0)
over small integers, exact in any order.
Run: python3 tests/filetests/ref/wgmma_sp_ref.py
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
from mma_sp_ref import enc, metadata, sparse_a  # the element encodings, sparse A, metadata words

OUT = os.path.join(os.path.dirname(__file__), "..", "warp", "wgmma_sp.ptx")
rng = random.Random(915)
SIZE = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}


def canon(rows, kel, size, get):
    """Bytes of a rows x kel matrix (element bits from get(r, k)) in the K-major canonical
    layout without swizzle; returns (bytes, LBO, SBO)."""
    kb_total = kel * size
    lbo = 128
    sbo = (kb_total // 16) * 128
    out = bytearray(rows // 8 * sbo)
    for r in range(rows):
        for k in range(kel):
            kb = k * size
            a = (r % 8) * 16 + (r // 8) * sbo + (kb // 16) * lbo + kb % 16
            out[a:a + size] = get(r, k).to_bytes(size, "little")
    return bytes(out), lbo, sbo


def desc(addr_reg, lbo, sbo):
    return (lbo >> 4) << 16 | (sbo >> 4) << 32


def case(name, N, K, dt, at, bt, sel, reg_a=False):
    M = 64
    val = lambda ty: rng.randint(1, 4) if ty == "u8" else rng.choice([-3, -2, -1, 1, 2, 3])
    A, pos, Ac, width, chunks, T = sparse_a(M, K, at, rng, val)
    B = [[val(bt) for _ in range(K)] for _ in range(N)]  # B[n][k]
    D = [[sum(A[r][k] * B[n][k] for k in range(K)) for n in range(N)] for r in range(M)]
    sa, sb = SIZE[at], SIZE[bt]
    a_bytes, alo, aso = canon(M, K // 2, sa, lambda r, k: enc(Ac[r][k], at))
    b_bytes, blo, bso = canon(N, K, sb, lambda n, k: enc(B[n][k], bt))
    if reg_a:
        a_bytes = b""
    img = a_bytes + b_bytes
    img += bytes(-len(img) % 16)
    words = [int.from_bytes(img[i:i + 4], "little") for i in range(0, len(img), 4)]
    meta, aregs, dwords = [], [], []
    for tid in range(128):
        w, lane = tid // 32, tid % 32
        g, t = lane // 4, lane % 4
        if sel * T <= t < sel * T + T:
            meta.append(metadata(pos, (16 * w + g, 16 * w + g + 8), t - sel * T, at))
        else:
            meta.append(rng.getrandbits(32))
        if reg_a:
            per = 4 // sa
            for r in range(4):
                row = 16 * w + g + 8 * (r % 2)
                k0 = t * per + (r // 2) * 4 * per
                aregs.append(sum(enc(Ac[row][k0 + e], at) << (8 * sa * e) for e in range(per)))
        for i in range(N // 2):
            row = 16 * w + g + 8 * ((i // 2) % 2)
            col = 8 * (i // 4) + 2 * t + i % 2
            dwords.append(enc(D[row][col], dt))
    nd = N // 2
    dreg = "%d" if dt == "f32" else "%s"
    dty = ".f32" if dt == "f32" else ".b32"
    trans = at in ("f16", "bf16")
    imms = ("1, 1" if dt == "f32" else "") + (", 0, 0" if trans and not reg_a else ", 0" if trans else "")
    imms = (", " + imms.lstrip(", ")) if imms else ""
    a_op = "{%a0, %a1, %a2, %a3}" if reg_a else "%da"
    boff = len(a_bytes)
    lines = [f".visible .entry {name}(.param .u64 img, .param .u64 meta, .param .u64 aregs, .param .u64 out)", "{",
             "\t.reg .b32 %t, %w, %v, %sa, %sm, %m, %a<4>;", "\t.reg .b64 %p, %q, %o, %da, %db, %x;", "\t.reg .pred %pp;",
             f"\t.reg {dty} {dreg}<{nd}>;",
             "\tmov.u32 %t, %tid.x;", "\tld.param.u64 %p, [img];", "\tcvta.to.global.u64 %p, %p;", "\tmov.u32 %sa, smem;",
             "\tmov.u32 %w, %t;", "COPY:", f"\tsetp.ge.u32 %pp, %w, {len(words)};", "\t@%pp bra COPIED;",
             "\tmul.wide.u32 %q, %w, 4;", "\tadd.s64 %q, %q, %p;", "\tld.global.u32 %v, [%q];", "\tshl.b32 %sm, %w, 2;",
             "\tadd.u32 %sm, %sm, %sa;", "\tst.shared.u32 [%sm], %v;", "\tadd.u32 %w, %w, 128;", "\tbra COPY;", "COPIED:",
             "\tbar.sync 0;",
             # descriptors: start >> 4 in bits 0-13
             "\tcvt.u64.u32 %x, %sa;", "\tshr.u64 %x, %x, 4;", f"\tor.b64 %da, %x, {desc(0, alo, aso)};",
             f"\tadd.u32 %sm, %sa, {boff};", "\tcvt.u64.u32 %x, %sm;", "\tshr.u64 %x, %x, 4;", f"\tor.b64 %db, %x, {desc(0, blo, bso)};",
             "\tld.param.u64 %p, [meta];", "\tcvta.to.global.u64 %p, %p;", "\tmul.wide.u32 %q, %t, 4;", "\tadd.s64 %q, %q, %p;",
             "\tld.global.u32 %m, [%q];"]
    if reg_a:
        lines += ["\tld.param.u64 %p, [aregs];", "\tcvta.to.global.u64 %p, %p;", "\tmul.wide.u32 %q, %t, 16;", "\tadd.s64 %q, %q, %p;"]
        lines += [f"\tld.global.u32 %a{k}, [%q+{4 * k}];" for k in range(4)]
    for k in range(nd):
        lines.append(f"\tmov{dty} {dreg}{k}, {'0f00000000' if dt == 'f32' else '0'};")
    dl = ", ".join(f"{dreg}{k}" for k in range(nd))
    lines += ["\twgmma.fence.sync.aligned;",
              f"\twgmma.mma_async.sp.sync.aligned.m64n{N}k{K}.{dt}.{at}.{bt} {{{dl}}}, {a_op}, %db, %m, {sel}, 0{imms};",
              "\twgmma.commit_group.sync.aligned;", "\twgmma.wait_group.sync.aligned 0;",
              "\tld.param.u64 %o, [out];", "\tcvta.to.global.u64 %o, %o;", f"\tmul.wide.u32 %q, %t, {4 * nd};", "\tadd.s64 %o, %o, %q;"]
    lines += [f"\tst.global{dty} [%o+{4 * k}], {dreg}{k};" for k in range(nd)]
    lines += ["\tret;", "}"]
    hx = lambda ws: ",".join(f"0x{x:08x}" for x in ws)
    run = f"// run: {name}<<<1, 128>>> buf:u32:{hx(words)} buf:u32:{hx(meta)} " + (f"buf:u32:{hx(aregs)}" if reg_a else "buf:zero:16") + f" buf:zero:{4 * len(dwords)}"
    return "\n".join(lines) + f"\n// wgmma.mma_async.sp m64n{N}k{K} .{dt}.{at}.{bt}, A {'in registers' if reg_a else 'from shared memory'}, sparsity selector {sel}\n" + run + f"\n// expect: arg3 == u32:{hx(dwords)}\n"


def main():
    parts = ["// wgmma.mma_async.sp (PTX ISA 8.x 9.7.15.6): sparse A from shared memory or registers, metadata,",
             "// sparsity selector. Expectations from tests/filetests/ref/wgmma_sp_ref.py (the ISA's layouts;",
             "// small integers, exact in any order), not from ptxr.",
             "// Written by tests/filetests/ref/wgmma_sp_ref.py; do not edit by hand.",
             ".version 8.4", ".target sm_90a", ".address_size 64", "", ".shared .align 1024 .b8 smem[16384];", ""]
    parts.append(case("wsp_f16_n16_sel1", 16, 32, "f32", "f16", "f16", 1))
    parts.append(case("wsp_bf16_n8_rega", 8, 32, "f32", "bf16", "bf16", 0, reg_a=True))
    parts.append(case("wsp_tf32_n8_sel1", 8, 16, "f32", "tf32", "tf32", 1))
    parts.append(case("wsp_e4m3_n8", 8, 64, "f32", "e4m3", "e4m3", 0))
    parts.append(case("wsp_s8u8_n16", 16, 64, "s32", "s8", "u8", 0))
    with open(OUT, "w") as f:
        f.write("\n".join(parts))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
