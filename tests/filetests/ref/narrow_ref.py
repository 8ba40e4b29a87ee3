#!/usr/bin/env python3
"""Reference for tests/filetests/warp/narrow_blocks.ptx: kernels that read %tid.y in blocks
at most 16 threads wide, the shapes the warp path runs in its version for narrow blocks
(`codegen::warp::choose_narrow`), and others.

    python3 tests/filetests/ref/narrow_ref.py   # the run/expect lines

Each kernel is transcribed from the PTX's own comments, thread by thread: `rows_tile` with
the CTA barriers as phase boundaries (every thread finishes a phase before any starts the
next), `tile_warp` over the hardware's warps (PTX ISA 2.2: warps are 32 consecutive threads
in the linear order x, then y, then z; 9.7.9.6 shfl.sync, 9.7.12.7 vote.sync).
"""
M = 0xFFFFFFFF


def rows_tile(grid, ntx, nty, ntz):
    n = ntx * nty * ntz
    out = []
    for c in range(grid):
        s = [(t * 3 + c * 1000) & M for t in range(n)]          # s[t] = 3t + 1000 ctaid
        acc = []
        for t in range(n):
            row, y = t // ntx, (t // ntx) % nty
            a = 0
            for k in range(ntx):                                 # row sum, weights k+1
                a = (a + s[row * ntx + k] * (k + 1)) & M
            if y & 1:
                a ^= 0x5555
            acc.append(a)
        for it in range(2):                                      # two rounds with barriers
            s = [(s[t] + it + (t // ntx) % nty) & M for t in range(n)]
            acc = [(acc[t] + s[n - 1 - t]) & M for t in range(n)]
        out += acc
    return out


def tile_warp(grid, ntx, nty, ntz):
    n = ntx * nty * ntz
    assert n % 32 == 0, "whole warps only (a missing source lane is undefined)"
    out = []
    for c in range(grid):
        a = [(7 * t + 100 * c + (t // ntx) % nty) & M for t in range(n)]
        odd = [((t // ntx) % nty) & 1 for t in range(n)]
        for t in range(n):
            w, lane = t // 32 * 32, t % 32
            b = a[w + (lane ^ 16)]                               # shfl.bfly 16, c = 0x1f
            bal = sum(odd[w + j] << j for j in range(32))        # vote.ballot
            j = lane + 1                                         # shfl.down 1, c = 0x1f
            p = j <= 31
            d = a[w + j] if p else a[t]
            e = [sum(a[w + k] + i for i in range((w + k) // ntx % nty + 1)) & M for k in (lane, 0)]
            out += [b, bal, d, int(p) + 2 * lane, e[0], e[1], 0, 0]     # g = e of lane 0
    return out


ROWS = [(2, 16, 16, 1), (1, 16, 3, 1), (2, 8, 8, 1), (1, 4, 2, 2), (1, 16, 1, 2), (1, 1, 8, 1), (1, 32, 4, 1), (1, 24, 2, 1), (1, 12, 3, 1)]
TILES = [(2, 16, 4, 1), (1, 16, 2, 2), (1, 16, 3, 2), (1, 8, 4, 1), (1, 32, 2, 1)]

if __name__ == "__main__":
    for grid, x, y, z in ROWS:
        n = x * y * z
        print(f"// run: rows_tile<<<{grid}, ({x},{y},{z})>>> buf:zero:{4 * n * grid}")
        print("// expect: arg0 == u32:" + ",".join(map(str, rows_tile(grid, x, y, z))))
    for grid, x, y, z in TILES:
        n = x * y * z
        print(f"// run: tile_warp<<<{grid}, ({x},{y},{z})>>> buf:zero:{32 * n * grid}")
        print("// expect: arg0 == u32:" + ",".join(map(str, tile_warp(grid, x, y, z))))
