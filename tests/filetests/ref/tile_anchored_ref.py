#!/usr/bin/env python3
"""Expected values of tests/filetests/warp/tile_anchored.ptx, from the kernel's arithmetic
(PTX ISA 9.7.1: mad.lo.s32 and add.u32 modulo 2^32, mul.wide.s32 of the sign-extended
32-bit index, add.s64 and sub.s64 modulo 2^64), written independently of ptxr.

Per thread (tx, ty) of CTA c in blocks (bx, by), i = ty * n + tx (32 bits), the pointer
p = in + 4 * sext(i) stepped by 64 bytes three times, so p - in = 4 * sext(i) + 192;
acc = sum over t < 3 of in[i + 16 t] * (t + 1) when reads != 0, else 0.
out at g = (c * by + ty) * bx + tx, 4 words each: lo(p - in), hi(p - in), acc, i."""
import sys


def expect(grid, bx, by, n, reads, data):
    out = []
    for c in range(grid):
        for ty in range(by):
            for tx in range(bx):
                i = (ty * n + tx) % 2**32
                s = i - 2**32 if i >= 2**31 else i
                d = (4 * s + 192) % 2**64
                acc = 0
                if reads:
                    for t in range(3):
                        acc = (acc + data[s + 16 * t] * (t + 1)) % 2**32
                out += [d % 2**32, d >> 32, acc, i]
    return out


if __name__ == "__main__":
    grid, bx, by, n, reads, size = (int(x) for x in sys.argv[1:7])
    data = [(7 * j + 3) % 1000 for j in range(size)]
    print("// run: tile_walk<<<%d, (%d,%d)>>> buf:zero:%d buf:u32:%s u32:%d u32:%d" % (grid, bx, by, 16 * grid * bx * by, ",".join(map(str, data)), n, reads))
    print("// expect: arg0 == u32:" + ",".join(map(str, expect(grid, bx, by, n, reads, data))))
