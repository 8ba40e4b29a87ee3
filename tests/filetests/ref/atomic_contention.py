#!/usr/bin/env python3
"""Reference for tests/filetests/atomic/contention.ptx: 8 CTAs x 256 threads, gtid = 0..2047.
Every total below is order-independent (9.7.12.4 semantics applied in any order)."""
N = 2048
M32, M64 = (1 << 32) - 1, (1 << 64) - 1
g = range(N)
u32 = [
    N,                                   # w0 atom.global.add.u32 +1
    sum(range(N)) & M32,                 # w1 red.add of the old values returned by w0 (each old unique)
    N % 1000,                            # w2 atom.inc.u32 b=999 from 0
    (-N) % 1000,                         # w3 atom.dec.u32 b=999 from 0: 0->999->998...
    max(x - 1000 for x in g) & M32,      # w4 atom.max.s32 (init INT_MIN)
    min(x - 1000 for x in g) & M32,      # w5 atom.min.s32 (init INT_MAX)
    min(x + 100 for x in g),             # w6 atom.min.u32 (init 0xffffffff)
    max((x * 2654435761) & M32 for x in g),  # w7 atom.max.u32 (init 0)
    sum(x + 1 for x in g) & M32,         # w8 cas-loop add of gtid+1
    M32,                                 # w9 atom.or.b32 1<<(gtid%32)
    0,                                   # w10 atom.and.b32 ~(1<<(gtid%32)) from 0xffffffff
]
x = 0
for v in g:
    x ^= (v * 2654435761) & M32
u32.append(x)                            # w11 atom.xor.b32
u32.append(N % 7)                        # w12 red.inc.u32 b=6
u32.append((5 - N) % 8)                  # w13 red.dec.u32 b=7 from 5
print("u32:", ",".join(str(v) for v in u32))
u64 = [
    sum(v << 33 for v in g) & M64,       # q0 atom.add.u64 gtid<<33
    max((v * 0x9E3779B97F4A7C15) & M64 for v in g),  # q1 atom.max.u64 (init 0)
    min(((v + 1) * 0x9E3779B97F4A7C15) & M64 for v in g),  # q2 red.min.u64 (init all ones)
    min(v - 1024 for v in g) & M64,      # q3 atom.min.s64
    max(v - 1024 for v in g) & M64,      # q4 red.max.s64 (init INT64_MIN)
]
print("u64:", ",".join(hex(v) for v in u64))
print("f32: ", float(N), float(N) * 0.25)   # f0 atom.add.f32 1.0, f1 red.add.f32 0.25
print("f64: ", N * 0.5, N * 0.125)          # d0 atom.add.f64 0.5, d1 red.add.f64 0.125
print("f16: ", float(N), N * 0.25, float(N))  # h0,h1 atom.add.noftz.f16x2 {1.0,0.25}; h2 atom.add.noftz.f16 1.0
