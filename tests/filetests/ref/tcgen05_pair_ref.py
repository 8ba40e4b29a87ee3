#!/usr/bin/env python3
"""Writes tests/filetests/warp/tcgen05_pair.ptx: CTA pairs (tcgen05 .cta_group::2, PTX ISA 9.0
9.7.16) and the shared::cluster addresses they rest on, with expected values worked here from
the ISA's definitions, independently of ptxr.

- pair_addr: in a kernel that declares clusters of 2, a CTA's shared address is
  rank << 24 | offset (the .shared::cluster window holds the CTAs' .shared::cta windows 16 MiB
  apart, which is what lets Triton's and CUTLASS's pair kernels reach the even CTA's mbarrier
  by clearing bit 24): the rank is in bits 24 and up and agrees with getctarank; mapa to the
  peer flips bit 24; the peer's variable is read at the address with bit 24 flipped (and
  through mapa of its generic address); isspacep.shared (::cta) holds for the own window and
  not the peer's, isspacep.shared::cluster for both.
- pair_*: the pair's MMA of M = 256 (data path layout A): A is 256 x K, rows 0-127 in CTA 2k's
  shared memory and rows 128-255 in CTA 2k + 1's at the same descriptor; B is K x N, columns
  0..N/2-1 in CTA 2k's and N/2..N-1 in CTA 2k + 1's; D's rows 0-127 land in CTA 2k's tensor
  memory, rows 128-255 in CTA 2k + 1's, row m of each half in lane m. One thread of the pair
  (rank 1 in the f16 case, rank 0 in the i8 case) issues it and commits it to both CTAs'
  mbarriers (multicast mask 3); each CTA reads its own 128 lanes back with tcgen05.ld.
  M = 128 (layout B): 64 rows of A and D per CTA, D's row r in lane r for B's first N/2
  columns and in lane 64 + r for the others, each from D's first column (N/2 columns read
  back); the layout is the one TVM's documentation of the PTX data paths gives and the one
  Triton's Gluon pairs read D back by.
- Errors: a pair whose instruction descriptor has M = 64 (the ISA's pairs have M 128 or 256)
  and a pair kernel launched without clusters stop with a message.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "warp", "tcgen05_pair.ptx")

HEAD = """// CTA pairs (tcgen05 .cta_group::2, PTX ISA 9.0 9.7.16, sm_100a) and shared::cluster
// addresses (rank << 24 | offset). Expected values computed from the ISA's definitions by
// tests/filetests/ref/tcgen05_pair_ref.py (its docstring gives them), independently of ptxr;
// do not edit by hand.
.version 8.7
.target sm_100a
.address_size 64
"""

ADDR = """
// pair_addr: per CTA (ctaid.x) 8 words: address >> 24, getctarank, mapa(peer) ^ address,
// the peer's variable read at address ^ (1 << 24), isspacep.shared of the own generic
// address, of the peer's (from mapa.u64), isspacep.shared::cluster of the peer's, and the
// peer's variable read through that generic address.
.visible .entry pair_addr(.param .u64 pout) .reqnctapercluster 2
{
	.reg .pred %p<4>;
	.reg .b32 %rk, %peer, %a, %r<8>;
	.reg .b64 %o, %q, %g, %gp;
	.shared .align 16 .b32 pad[5];
	.shared .align 4 .b32 v;
	ld.param.u64 %o, [pout];
	mov.u32 %rk, %cluster_ctarank;
	xor.b32 %peer, %rk, 1;
	mov.u32 %a, v;
	mad.lo.u32 %r0, %rk, 100, 7;
	st.shared.u32 [%a], %r0;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	mov.u32 %r0, %ctaid.x;
	mul.wide.u32 %q, %r0, 32;
	add.u64 %o, %o, %q;
	shr.u32 %r1, %a, 24;
	st.global.u32 [%o], %r1;
	getctarank.shared::cluster.u32 %r2, %a;
	st.global.u32 [%o+4], %r2;
	mapa.shared::cluster.u32 %r3, %a, %peer;
	xor.b32 %r3, %r3, %a;
	st.global.u32 [%o+8], %r3;
	xor.b32 %r4, %a, 16777216;
	ld.shared::cluster.u32 %r4, [%r4];
	st.global.u32 [%o+12], %r4;
	cvt.u64.u32 %q, %a;
	cvta.shared.u64 %g, %q;
	isspacep.shared %p1, %g;
	selp.u32 %r5, 1, 0, %p1;
	st.global.u32 [%o+16], %r5;
	mapa.u64 %gp, %g, %peer;
	isspacep.shared %p2, %gp;
	selp.u32 %r6, 1, 0, %p2;
	st.global.u32 [%o+20], %r6;
	isspacep.shared::cluster %p3, %gp;
	selp.u32 %r7, 1, 0, %p3;
	st.global.u32 [%o+24], %r7;
	ld.u32 %r7, [%gp];
	st.global.u32 [%o+28], %r7;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	ret;
}
"""


def addr_expect(nctas):
    out = []
    for c in range(nctas):
        rk = c % 2
        peer = rk ^ 1
        out += [rk, rk, 1 << 24, peer * 100 + 7, 1, 0, 1, peer * 100 + 7]
    return out


def f16(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def kmajor(r, k, s, sbo, lbo):
    return (r % 8) * 16 + (r // 8) * sbo + (k * s // 16) * lbo + (k * s) % 16


def mnmajor(r, k, s, sbo, lbo):
    return (r * s) % 16 + (r * s // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo


IMG = 9216
B_BASE = 8192


def pair_case(name, kind, n, trans_b, twice, issuer, m=256, cluster=True):
    """One pair MMA: each CTA's image (its M/2 rows of A, its N/2 columns of B), the
    instruction descriptor, descriptors and what each CTA's 128 lanes hold after it."""
    rows = 128 if m != 128 else 64
    k = 16 if kind == "f16" else 32
    s = 2 if kind == "f16" else 1
    if kind == "f16":
        a = [[(r * 3 + c * 5 + r // rows) % 7 - 3 for c in range(k)] for r in range(2 * rows)]
        b = [[(j * 2 + c * 3 + j // 16) % 5 - 2 for c in range(k)] for j in range(n)]
        enc = f16
        atype = btype = 0
        dcode = 1
    else:
        a = [[(r * 5 + c * 3 + r // rows) % 16 - 8 for c in range(k)] for r in range(2 * rows)]  # s8
        b = [[(j * 7 + c + 3 * (j // 16)) % 16 for c in range(k)] for j in range(n)]  # u8
        enc = lambda x: x & 0xFF
        atype, btype = 1, 0
        dcode = 2
    half = n // 2
    a_sbo, a_lbo = 128, (rows // 8) * 128
    if trans_b:
        b_sbo, b_lbo = 128, (half * s // 16) * 128
    else:
        b_sbo, b_lbo = 128, (half // 8) * 128
    imgs = []
    for cta in range(2):
        img = bytearray(IMG)
        for r in range(rows):
            for c in range(k):
                off = kmajor(r, c, s, a_sbo, a_lbo)
                img[off:off + s] = enc(a[rows * cta + r][c]).to_bytes(s, "little")
        for j in range(half):
            for c in range(k):
                off = B_BASE + (mnmajor(j, c, s, b_sbo, b_lbo) if trans_b else kmajor(j, c, s, b_sbo, b_lbo))
                img[off:off + s] = enc(b[half * cta + j][c]).to_bytes(s, "little")
        imgs.append(img)
    idesc = dcode << 4 | atype << 7 | btype << 10 | (1 << 16 if trans_b else 0) | (n >> 3) << 17 | (m >> 4) << 24

    def desc(addr, lbo, sbo):
        return (addr >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46

    d = [[sum(a[r][c] * b[j][c] for c in range(k)) * (2 if twice else 1) for j in range(n)] for r in range(2 * rows)]
    # per CTA, lane t's columns 0..cols-1 (layout A: row t; layout B: row t % 64, B's half t / 64)
    cols = n if m != 128 else n // 2
    out = []
    for cta in range(2):
        for t in range(128):
            for i in range(cols):
                r, j = (rows * cta + t, i) if m != 128 else (rows * cta + t % 64, i + (t // 64) * cols)
                v = d[r][j] if r < 2 * rows else 0
                out.append(f32(v) if kind == "f16" else v & 0xFFFFFFFF)
    return dict(name=name, kind=kind, n=n, imgs=imgs, idesc=idesc, adesc=desc(0, a_lbo, a_sbo),
                bdesc=desc(B_BASE, b_lbo, b_sbo), twice=twice, issuer=issuer, out=out, cluster=cluster, m=m, cols=cols)


def pair_kernel(c):
    n = c["cols"]
    regs = ", ".join(f"%d{i}" for i in range(n))
    words = IMG // 4
    s = [f".visible .entry {c['name']}(.param .u64 pimg, .param .u64 pout)" + (" .reqnctapercluster 2" if c["cluster"] else ""), "{",
         "\t.reg .pred %p<10>;", f"\t.reg .b32 %t, %w, %rk, %ta, %tw, %i, %x, %id, %d<{n}>;", "\t.reg .b16 %mask;",
         "\t.reg .b64 %img, %o, %a, %ad, %bd, %q;",
         "\t.shared .align 1024 .b8 mat[16384];", "\t.shared .align 8 .b64 bar;", "\t.shared .align 4 .b32 slot;",
         "\tld.param.u64 %img, [pimg];", "\tld.param.u64 %o, [pout];", "\tmov.u32 %t, %tid.x;",
         "\tshr.u32 %w, %t, 5;", "\tsetp.eq.u32 %p1, %w, 0;", "\tmov.u32 %rk, %cluster_ctarank;",
         "\t// this CTA's image into shared memory, a word per thread at a time",
         f"\tmul.wide.u32 %q, %rk, {IMG};", "\tadd.u64 %img, %img, %q;",
         "\tmov.u32 %i, %t;",
         "COPY:", "\tmul.wide.u32 %q, %i, 4;", "\tadd.u64 %a, %img, %q;", "\tld.global.u32 %x, [%a];",
         "\tmov.u64 %a, mat;", "\tadd.u64 %a, %a, %q;", "\tst.shared.u32 [%a], %x;",
         "\tadd.u32 %i, %i, 128;", f"\tsetp.lt.u32 %p2, %i, {words};", "\t@%p2 bra COPY;",
         "\tmov.u32 %x, slot;",
         "\t@%p1 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%x], 32;",
         "\tsetp.eq.u32 %p3, %t, 0;", "\tmov.u32 %x, bar;",
         "\t@%p3 mbarrier.init.shared::cta.b64 [%x], 1;",
         "\tfence.mbarrier_init.release.cluster;", "\tfence.proxy.async.shared::cta;",
         "\tbarrier.cluster.arrive.aligned;", "\tbarrier.cluster.wait.aligned;",
         "\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.u32 %ta, [slot];",
         "\t// the descriptors' start addresses: mat's offset (>> 4, 14 bits) added",
         f"\tmov.b64 %ad, {c['adesc']};", f"\tmov.b64 %bd, {c['bdesc']};", f"\tmov.u32 %id, {c['idesc']};",
         "\tmov.u32 %i, mat;", "\tbfe.u32 %i, %i, 4, 14;", "\tcvt.u64.u32 %q, %i;",
         "\tadd.u64 %ad, %ad, %q;", "\tadd.u64 %bd, %bd, %q;",
         "\tsetp.ne.u32 %p4, %t, %t;", "\tsetp.eq.u32 %p5, %t, %t;",
         f"\tsetp.eq.u32 %p6, %rk, {c['issuer']};", "\tand.pred %p7, %p6, %p3;",
         "\t@!%p7 bra WAIT;",
         f"\ttcgen05.mma.cta_group::2.kind::{c['kind']} [%ta], %ad, %bd, %id, %p4;"]
    if c["twice"]:
        s.append(f"\ttcgen05.mma.cta_group::2.kind::{c['kind']} [%ta], %ad, %bd, %id, %p5;")
    s += ["\tmov.b16 %mask, 3;",
          "\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%x], %mask;",
          "WAIT:", "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%x], 0;", "\t@!%p2 bra WAIT;",
          "\ttcgen05.fence::after_thread_sync;",
          "\tshl.b32 %tw, %w, 21;", "\tadd.u32 %tw, %tw, %ta;",
          f"\ttcgen05.ld.sync.aligned.32x32b.x{n}.b32 {{{regs}}}, [%tw];", "\ttcgen05.wait::ld.sync.aligned;",
          "\tshl.b32 %i, %rk, 7;", "\tadd.u32 %i, %i, %t;",
          f"\tmul.wide.u32 %q, %i, {4 * n};", "\tadd.u64 %a, %o, %q;"]
    for i in range(n):
        s.append(f"\tst.global.u32 [%a+{4 * i}], %d{i};")
    s += ["\tbarrier.cluster.arrive.aligned;", "\tbarrier.cluster.wait.aligned;",
          "\t@%p1 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %ta, 32;", "\tret;", "}"]
    return "\n".join(s)


def main():
    parts = [HEAD, ADDR]
    parts.append("// run: pair_addr<<<4, 1>>> buf:zero:128")
    parts.append("// expect: arg0 == u32:" + ",".join(str(v) for v in addr_expect(4)))
    cases = [pair_case("pair_f16", "f16", 32, True, True, issuer=1),
             pair_case("pair_i8", "i8", 16, False, False, issuer=0),
             pair_case("pair_m128", "f16", 32, False, True, issuer=0, m=128)]
    for c in cases:
        words = []
        for img in c["imgs"]:
            words += [int.from_bytes(img[i:i + 4], "little") for i in range(0, len(img), 4)]
        parts.append(f"// {c['name']}: M {c['m']} ({c['m'] // 2} rows per CTA), N {c['n']} ({c['n'] // 2} columns of B per CTA), "
                     f".kind::{c['kind']}, idesc {c['idesc']:#x}, issued by rank {c['issuer']}; "
                     f"D = {'2 A B (a second mma with enable-input-d)' if c['twice'] else 'A B'}")
        parts.append(pair_kernel(c))
        parts.append(f"// run: {c['name']}<<<2, 128>>> buf:u32:" + ",".join(str(w) for w in words) +
                     f" buf:zero:{256 * 4 * c['cols']}")
        parts.append("// expect: arg1 == u32:" + ",".join(str(v) for v in c["out"]))
    # errors: M = 64 in a pair's descriptor; a pair kernel launched without clusters
    bad = pair_case("pair_m64", "f16", 32, True, False, issuer=0, m=64)
    words = []
    for img in bad["imgs"]:
        words += [int.from_bytes(img[i:i + 4], "little") for i in range(0, len(img), 4)]
    parts.append("// pair_m64: a pair's MMA with M = 64 (not a pair's shape) stops the launch.")
    parts.append(pair_kernel(bad))
    parts.append("// run: pair_m64<<<2, 128>>> buf:u32:" + ",".join(str(w) for w in words) + f" buf:zero:{256 * 4 * 32}")
    parts.append("// expect-error: M other than 128 or 256")
    lone = pair_case("pair_alone", "f16", 32, True, False, issuer=0, cluster=False)
    parts.append("// pair_alone: a pair kernel launched without clusters (its CTA has no peer) stops.")
    parts.append(pair_kernel(lone))
    parts.append("// run: pair_alone<<<1, 128>>> buf:u32:" + ",".join(str(w) for w in words) + f" buf:zero:{256 * 4 * 32}")
    parts.append("// expect-error: is not whole")
    with open(OUT, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
