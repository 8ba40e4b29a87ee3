#!/usr/bin/env python3
"""Writes tests/filetests/warp/mma_batches.ptx: eight consecutive mma.sync.m8n8k16.row.col.s32.s8.s8.s32
in one block, some independent (the warp path runs them as one batch), some reading what an
earlier one wrote (a new batch starts) or writing what an earlier one read. The expected values
are plain integer matrix products computed here from the fragment layouts of PTX ISA 9.7.13.4.8
(m8n8k16, .s8): A row = lane>>2, col = (lane%4)*4+i; B row = (lane%4)*4+i, col = lane>>2;
C/D row = lane>>2, col = (lane%4)*2+i. Independent of ptxr."""
import random, struct, sys

rnd = random.Random(20261127)
def s8(v): return v & 0xff
def mat(rows, cols): return [[rnd.randint(-128, 127) for _ in range(cols)] for _ in range(rows)]
def acc(): return [[rnd.randint(-100000, 100000) for _ in range(8)] for _ in range(8)]
def mul(a, b, c): return [[c[r][q] + sum(a[r][k] * b[k][q] for k in range(16)) for q in range(8)] for r in range(8)]
def a_frag(a):  # one .b32 per lane: 4 s8, element i in byte i
    return [sum(s8(a[l >> 2][(l % 4) * 4 + i]) << (8 * i) for i in range(4)) for l in range(32)]
def b_frag(b):
    return [sum(s8(b[(l % 4) * 4 + i][l >> 2]) << (8 * i) for i in range(4)) for l in range(32)]
def c_frag(c):  # two .s32 per lane
    return [c[l >> 2][(l % 4) * 2 + i] & 0xffffffff for l in range(32) for i in range(2)]

A1, A2 = mat(8, 16), mat(8, 16)
B1, B2 = mat(16, 8), mat(16, 8)
C, K = acc(), acc()
D = mul(A1, B1, C)      # 1
E = mul(A2, B2, C)      # 2: independent of 1 -> batch {1, 2}
F = mul(A1, B2, D)      # 3: reads D -> new batch
G = mul(A2, B1, E)      # 4: independent of 3 -> batch {3, 4}
H = mul(A1, B1, K)      # 5: independent -> batch {3, 4, 5}
K2 = mul(A2, B1, C)     # 6: writes K, which 5 read (5 must see the old K) -> batch {3..6}
ZERO = [[0] * 8 for _ in range(8)]
Z = mul(A1, B2, ZERO)   # 7: C is a register every lane holds alike (kept once per warp, not a lane array)
W = mul(A2, B2, K2)     # 8: reads 6's K (an earlier batch); with 7 (after a mov) -> batch {7, 8}

def words(v): return ",".join(f"0x{x:08x}" for x in v)
ptx = """// mma.sync (PTX ISA 9.7.13.4.8, m8n8k16 .s32.s8.s8.s32) eight times in one block: the warp path
// runs consecutive independent `mma` in one exchange step (a batch); an `mma` reading an
// earlier one's D starts a new batch, one writing what an earlier one read joins it; one whose
// C is a register all lanes hold alike (not a lane array) gathers its words lane by lane.
// Written by tests/filetests/ref/mma_batch_ref.py (plain integer matrix products); do not edit.
.version 7.0
.target sm_80
.address_size 64

.visible .entry mma_batches(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
	.reg .b32 %a<2>, %b<2>, %c<2>, %k<2>, %d<2>, %e<2>, %f<2>, %g<2>, %h<2>, %z<2>, %w<2>, %zero;
	.reg .b32 %l;
	.reg .b64 %p, %q, %off;
	mov.u32 %l, %laneid;
	ld.param.u64 %p, [pa];
	mul.wide.u32 %off, %l, 8;
	add.s64 %p, %p, %off;
	ld.global.b32 %a0, [%p];
	ld.global.b32 %a1, [%p+4];
	ld.param.u64 %p, [pb];
	add.s64 %p, %p, %off;
	ld.global.b32 %b0, [%p];
	ld.global.b32 %b1, [%p+4];
	ld.param.u64 %p, [pc];
	mul.wide.u32 %off, %l, 16;
	add.s64 %p, %p, %off;
	ld.global.b32 %c0, [%p];
	ld.global.b32 %c1, [%p+4];
	ld.global.b32 %k0, [%p+8];
	ld.global.b32 %k1, [%p+12];
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%d0, %d1}, {%a0}, {%b0}, {%c0, %c1};
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%e0, %e1}, {%a1}, {%b1}, {%c0, %c1};
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%f0, %f1}, {%a0}, {%b1}, {%d0, %d1};
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%g0, %g1}, {%a1}, {%b0}, {%e0, %e1};
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%h0, %h1}, {%a0}, {%b0}, {%k0, %k1};
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%k0, %k1}, {%a1}, {%b0}, {%c0, %c1};
	mov.u32 %zero, 0;
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%z0, %z1}, {%a0}, {%b1}, {%zero, %zero};
	mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%w0, %w1}, {%a1}, {%b1}, {%k0, %k1};
	ld.param.u64 %q, [pd];
	mul.wide.u32 %off, %l, 64;
	add.s64 %q, %q, %off;
	st.global.v2.b32 [%q], {%d0, %d1};
	st.global.v2.b32 [%q+8], {%e0, %e1};
	st.global.v2.b32 [%q+16], {%f0, %f1};
	st.global.v2.b32 [%q+24], {%g0, %g1};
	st.global.v2.b32 [%q+32], {%h0, %h1};
	st.global.v2.b32 [%q+40], {%k0, %k1};
	st.global.v2.b32 [%q+48], {%z0, %z1};
	st.global.v2.b32 [%q+56], {%w0, %w1};
	ret;
}
"""
a = [w for l in range(32) for w in (a_frag(A1)[l], a_frag(A2)[l])]
b = [w for l in range(32) for w in (b_frag(B1)[l], b_frag(B2)[l])]
cf, kf = c_frag(C), c_frag(K)
c = [w for l in range(32) for w in (cf[2 * l], cf[2 * l + 1], kf[2 * l], kf[2 * l + 1])]
outs = [c_frag(m) for m in (D, E, F, G, H, K2, Z, W)]
d = [w for l in range(32) for m in outs for w in (m[2 * l], m[2 * l + 1])]
ptx += f"// run: mma_batches<<<1, 32>>> buf:u32:{words(a)} buf:u32:{words(b)} buf:u32:{words(c)} buf:zero:{32 * 64}\n"
ptx += f"// expect: arg3 == u32:{words(d)}\n"
open(sys.argv[1] if len(sys.argv) > 1 else "tests/filetests/warp/mma_batches.ptx", "w").write(ptx)
