#!/usr/bin/env python3
"""Expected values of tests/filetests/warp/grid_webs.ptx, from the kernel's arithmetic (PTX ISA
9.7.1 add/mul/mad on .u32, modulo 2^32), written independently of ptxr.

Per thread, g = ctaid * ntid + tid and m = 3k + ntid:
  out[4g] = m, out[4g+1] = 7 + m, out[4g+2] = 1000 * ctaid + tid + 100000 * (g % 7),
  out[4g+3] = tid + 3m + 3;
and out2[i] = i + m for every i < n (the grid-stride loop)."""
import sys


def expect(grid, block, k, n):
    m = (3 * k + block) % 2**32
    out = []
    for c in range(grid):
        for t in range(block):
            out += [m, (7 + m) % 2**32, (1000 * c + t + 100000 * ((c * block + t) % 7)) % 2**32, (t + 3 * m + 3) % 2**32]
    out2 = [(i + m) % 2**32 for i in range(n)]
    return out, out2


if __name__ == "__main__":
    grid, block, k, n = (int(x) for x in sys.argv[1:5])
    out, out2 = expect(grid, block, k, n)
    print("// expect: arg0 == u32:" + ",".join(map(str, out)))
    print("// expect: arg1 == u32:" + ",".join(map(str, out2)))
