#!/usr/bin/env python3
"""Writes tests/filetests/warp/mma_sp.ptx: sparse mma.sp{::ordered_metadata} (PTX ISA 9.7.14.6)
with expectations from the reference below, written from the ISA's text: a structured-sparse A
(2:4, 1:2 for .tf32) is made dense, its non-zeros placed in the fragment of the dense shape of
half the K (9.7.14.6.2's row and column formulas), the metadata of each group of four threads
in the threads the sparsity selector names (chunk j of row g in bits 4 (j % 4) of thread
selector * T + j / 4, row g + 8 in the upper half; two 2-bit indices a chunk, the lower first;
a .tf32 chunk's index in halves: 0b0100 or 0b1110), the other threads' metadata registers
holding garbage that must not count; D = C + A * B over small integers (exact in any order).
Run: python3 tests/filetests/ref/mma_sp_ref.py
"""
import os
import random
import struct

OUT = os.path.join(os.path.dirname(__file__), "..", "warp", "mma_sp.ptx")
rng = random.Random(714)

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "e4m3": 8, "e5m2": 8, "f32": 32, "s32": 32}


def enc(v, ty):
    """The bits of small integer v in type ty."""
    if ty in ("s8", "u8"):
        return v & 0xFF
    if ty in ("s4", "u4"):
        return v & 0xF
    if ty == "s32":
        return v & 0xFFFFFFFF
    if ty in ("f32", "tf32"):
        return struct.unpack("<I", struct.pack("<f", float(v)))[0]
    if ty == "f16":
        return struct.unpack("<H", struct.pack("<e", float(v)))[0]
    if ty == "bf16":
        return struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16
    if ty in ("e4m3", "e5m2"):
        # |v| in 1..4: exponent and one mantissa bit (3 = 1.5 * 2)
        if v == 0:
            return 0
        sign = 0x80 if v < 0 else 0
        a = abs(v)
        e, m = {1: (0, 0), 2: (1, 0), 3: (1, 1), 4: (2, 0)}[a]
        if ty == "e4m3":
            return sign | ((e + 7) << 3) | (m << 2)
        return sign | ((e + 15) << 2) | (m << 1)
    raise ValueError(ty)


def pack(vals, ty):
    b = BITS[ty]
    w = 0
    for i, v in enumerate(vals):
        w |= enc(v, ty) << (b * i)
    return w


def value(ty, signed=True):
    if ty in ("u8", "u4"):
        return rng.randint(1, 5)
    return rng.choice([-3, -2, -1, 1, 2, 3]) if ty != "s8" or signed else rng.randint(1, 5)


def sparse_a(M, K, at, rng, value):
    """A dense M x K matrix with `kept` non-zeros (value(at)) in every chunk of `width` (2:4, 1:2
    for .tf32; for .s4/.u4 4:8 in two of the four two-element sub-chunks, whose indices the
    metadata holds): (A, the kept positions per row and chunk, the kept elements per row,
    width, chunks per row, metadata threads per group of four)."""
    width, kept = {"tf32": (2, 1), "s4": (8, 2), "u4": (8, 2)}.get(at, (4, 2))
    unit = 2 if width == 8 else 1  # elements per kept position
    chunks = K // width
    A = [[0] * K for _ in range(M)]
    pos = [[None] * chunks for _ in range(M)]
    for r in range(M):
        for j in range(chunks):
            ps = sorted(rng.sample(range(width // unit), kept))
            pos[r][j] = ps
            for p in ps:
                for u in range(unit):
                    A[r][j * width + p * unit + u] = value(at)
    Ac = [[A[r][j * width + p * unit + u] for j in range(chunks) for p in pos[r][j] for u in range(unit)] for r in range(M)]
    return A, pos, Ac, width, chunks, chunks // 4


def metadata(pos, rows, h, at):
    """The metadata word of the h-th metadata thread of a group of four whose rows are `rows`
    (g, g + 8): chunks 4h..4h+3 of each, nibble 4 (j % 4), the second row in the upper half."""
    m = 0
    for half, row in enumerate(rows):
        for jj in range(4):
            ps = pos[row][4 * h + jj]
            nib = (0b0100 if ps[0] == 0 else 0b1110) if at == "tf32" else ps[0] | ps[1] << 2
            m |= nib << (16 * half + 4 * jj)
    return m


def case(name, shape_k, dt, at, bt, ct, sel, ordered=True, sat=False, c_edge=False):
    M, N, K = 16, 8, shape_k
    A, pos, Ac, width, chunks, T = sparse_a(M, K, at, rng, value)
    B = [[value(bt) for _ in range(N)] for _ in range(K)]
    C = [[rng.randint(-20, 20) if ct in ("s32", "f32", "f16") else 0 for _ in range(N)] for _ in range(M)]
    if c_edge:  # accumulators at the ends of the s32 range: the sum overflows (wraps, or clamps with .satfinite)
        C = [[(2**31 - 3) if (r + c) % 2 == 0 else -(2**31) + 3 for c in range(N)] for r in range(M)]
    D = [[C[r][c] + sum(A[r][k] * B[k][c] for k in range(K)) for c in range(N)] for r in range(M)]
    if sat:
        D = [[max(min(v, 2**31 - 1), -2**31) for v in row] for row in D]
    words = []
    dwords = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        w = []
        per_a = 32 // BITS[at]
        for r in range(M * (K // 2) // 32 // per_a):
            row = g + 8 * (r % 2)
            k0 = t * per_a + (r // 2) * 4 * per_a
            w.append(pack([Ac[row][k0 + e] for e in range(per_a)], at))
        per_b = 32 // BITS[bt]
        for r in range(K * N // 32 // per_b):
            k0 = t * per_b + 4 * per_b * r
            w.append(pack([B[k0 + e][g] for e in range(per_b)], bt))
        cpos = [(g + 8 * (e // 2), 2 * t + e % 2) for e in range(4)]
        if ct == "f16":
            w += [pack([C[r][c] for r, c in cpos[0:2]], "f16"), pack([C[r][c] for r, c in cpos[2:4]], "f16")]
        else:
            w += [enc(C[r][c], ct) for r, c in cpos]
        if sel * T <= t < sel * T + T:
            w.append(metadata(pos, (g, g + 8), t - sel * T, at))
        else:
            w.append(rng.getrandbits(32))  # not a metadata thread: ignored
        words.append(w)
        if dt == "f16":
            dwords.append([pack([D[r][c] for r, c in cpos[0:2]], "f16"), pack([D[r][c] for r, c in cpos[2:4]], "f16")])
        else:
            dwords.append([enc(D[r][c], dt) for r, c in cpos])
    na = M * (K // 2) // 32 // (32 // BITS[at])
    nb = K * N // 32 // (32 // BITS[bt])
    nc = 2 if ct == "f16" else 4
    nd = 2 if dt == "f16" else 4
    nw = na + nb + nc + 1
    sp = "sp::ordered_metadata" if ordered else "sp"
    instr = f"mma.{sp}.sync.aligned.m16n8k{K}.row.col{'.satfinite' if sat else ''}.{dt}.{at}.{bt}.{ct}"
    freg = lambda ty, pre, n: [f"%{pre}{i}" for i in range(n)]
    dr = freg(dt, "fd" if dt == "f32" else "d", nd)
    cr = freg(ct, "fc" if ct == "f32" else "c", nc)
    lines = [f".visible .entry {name}(.param .u64 in, .param .u64 out)", "{",
             "\t.reg .b32 %t, %e, %a<4>, %b<4>, %c<4>, %d<4>;", "\t.reg .f32 %fc<4>, %fd<4>;", "\t.reg .b64 %p, %q, %o;",
             "\tmov.u32 %t, %tid.x;", "\tld.param.u64 %p, [in];", "\tld.param.u64 %o, [out];", "\tcvta.to.global.u64 %p, %p;",
             "\tcvta.to.global.u64 %o, %o;", f"\tmul.wide.u32 %q, %t, {4 * nw};", "\tadd.s64 %p, %p, %q;"]
    regs = [f"%a{i}" for i in range(na)] + [f"%b{i}" for i in range(nb)] + cr + ["%e"]
    for k, r in enumerate(regs):
        ld = "ld.global.f32" if r.startswith("%fc") else "ld.global.u32"
        lines.append(f"\t{ld} {r}, [%p+{4 * k}];")
    lines.append(f"\t{instr} {{{', '.join(dr)}}}, {{{', '.join(f'%a{i}' for i in range(na))}}}, {{{', '.join(f'%b{i}' for i in range(nb))}}}, {{{', '.join(cr)}}}, %e, {sel};")
    lines += [f"\tmul.wide.u32 %q, %t, {4 * nd};", "\tadd.s64 %o, %o, %q;"]
    for k, r in enumerate(dr):
        st = "st.global.f32" if r.startswith("%fd") else "st.global.u32"
        lines.append(f"\t{st} [%o+{4 * k}], {r};")
    lines += ["\tret;", "}"]
    flat_in = [x for w in words for x in w]
    flat_out = [x for w in dwords for x in w]
    run = f"// run: {name}<<<1, 32>>> buf:u32:{','.join(f'0x{x:08x}' for x in flat_in)} buf:zero:{4 * len(flat_out)}"
    expect = f"// expect: arg1 == u32:{','.join(f'0x{x:08x}' for x in flat_out)}"
    return "\n".join(lines) + "\n" + f"// {instr}, sparsity selector {sel}\n" + run + "\n" + expect + "\n"


def main():
    parts = ["// mma.sp{::ordered_metadata} (PTX ISA 9.7.14.6): sparse A, its metadata and sparsity selector.",
             "// Expectations from tests/filetests/ref/mma_sp_ref.py (the ISA's fragment formulas and",
             "// metadata layout; small integers, exact in any order), not from ptxr.",
             "// Written by tests/filetests/ref/mma_sp_ref.py; do not edit by hand.",
             ".version 8.5", ".target sm_89", ".address_size 64", ""]
    parts.append(case("sp_f16_k16_sel0", 16, "f16", "f16", "f16", "f16", 0, ordered=False))
    parts.append(case("sp_f16_k16_sel2", 16, "f32", "f16", "f16", "f32", 2))
    parts.append(case("sp_f16_k32_sel0", 32, "f32", "f16", "f16", "f32", 0))
    parts.append(case("sp_f16_k32_sel1", 32, "f16", "f16", "f16", "f16", 1))
    parts.append(case("sp_bf16_k32_sel0", 32, "f32", "bf16", "bf16", "f32", 0))
    parts.append(case("sp_bf16_k16_sel3", 16, "f32", "bf16", "bf16", "f32", 3))
    parts.append(case("sp_tf32_k8_sel1", 8, "f32", "tf32", "tf32", "f32", 1))
    parts.append(case("sp_tf32_k16_sel1", 16, "f32", "tf32", "tf32", "f32", 1))
    parts.append(case("sp_s8_k32_sel1", 32, "s32", "s8", "s8", "s32", 1))
    parts.append(case("sp_u8s8_k64_sat", 64, "s32", "u8", "s8", "s32", 0, sat=True))
    parts.append(case("sp_e4m3_k64", 64, "f32", "e4m3", "e5m2", "f32", 0))
    parts.append(case("sp_s4_k64_sel1", 64, "s32", "s4", "s4", "s32", 1))
    parts.append(case("sp_u4s4_k128_sat", 128, "s32", "u4", "s4", "s32", 0, sat=True))
    parts.append(case("sp_s8_k32_edge_sat", 32, "s32", "s8", "s8", "s32", 0, sat=True, c_edge=True))
    parts.append(case("sp_s8_k32_edge_wrap", 32, "s32", "s8", "s8", "s32", 1, c_edge=True))
    with open(OUT, "w") as f:
        f.write("\n".join(parts))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
