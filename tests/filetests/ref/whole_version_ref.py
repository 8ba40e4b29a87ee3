#!/usr/bin/env python3
"""Reference for tests/filetests/warp/whole_version.ptx: warp collectives in blocks whose rows
are whole warps (the kernel's version in which every lane exists: `codegen::warp`'s
`whole_dispatch`), in one row that ends in a partial warp (the main version), and in two rows
that are not warps (the per-thread version).

    python3 tests/filetests/ref/whole_version_ref.py   # the run/expect lines

Transcribed from the PTX's comments, thread by thread over the hardware's warps (PTX ISA 2.2:
warps are 32 consecutive threads in the linear order x, then y, then z): with t the linear
thread index, lane = t % 32, the warp w = t // 32 of n_w = min(32, N - 32 w) threads, and
a(u) = 3 u + 1 (9.7.8.5 shfl.sync, 9.7.12.7 vote.sync, 9.7.12.9 activemask):
  out[4t]     = activemask: the warp's threads, (1 << n_w) - 1;
  out[4t + 1] = shfl.idx from lane 0: a(32 w);
  out[4t + 2] = ballot of lane % 3 == 0 over the warp's threads;
  out[4t + 3] = shfl.up 1 (c = 0): a(t - 1), lane 0 its own a(t).
"""
M = 0xFFFFFFFF


def run(ntx, nty):
    n = ntx * nty
    out = []
    for t in range(n):
        w, lane = divmod(t, 32)
        nw = min(32, n - 32 * w)
        a = lambda u: (3 * u + 1) & M
        ballot = sum(1 << k for k in range(nw) if k % 3 == 0)
        out += [(1 << nw) - 1, a(32 * w), ballot, a(t) if lane == 0 else a(t - 1)]
    return out


for ntx, nty in [(64, 1), (40, 1), (40, 2), (96, 1)]:
    vals = run(ntx, nty)
    print(f"// run: whole_version<<<1, ({ntx},{nty},1)>>> buf:zero:{4 * len(vals)}")
    print("// expect: arg0 == u32:" + ",".join(str(v) for v in vals))
