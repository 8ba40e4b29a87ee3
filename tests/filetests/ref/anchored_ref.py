#!/usr/bin/env python3
"""Reference for tests/filetests/warp/anchored.ptx (each kernel's comments, transcribed).

    python3 tests/filetests/ref/anchored_ref.py   # the run/expect lines
"""
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def sext32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def walk(grid, ntx, nty, n):
    data = list(range(7, 7 + 4 * n))          # in[k] = 7 + k
    out = []
    for gid in range(grid * ntx * nty):
        acc = sum(data[gid + i * n] for i in range(3)) + data[gid + 3 * n - 2]
        out.append(acc & M32)
    return data, out


def wrap(grid, ntx, base):
    return [(1000 * c + sext32(base + c * ntx + x) * 4 + 24) & M64 for c in range(grid) for x in range(ntx)]


if __name__ == "__main__":
    for grid, x, y in [(2, 64, 1), (3, 16, 4), (2, 8, 2)]:
        total = grid * x * y
        n = total
        data, out = walk(grid, x, y, n)
        print(f"// run: walk<<<{grid}, ({x},{y})>>> buf:zero:{4 * total} buf:u32:{','.join(map(str, data))} u32:{n}")
        print("// expect: arg0 == u32:" + ",".join(map(str, out)))
    for grid, x in [(2, 64), (1, 96)]:
        base = 0x7FFFFFF0
        print(f"// run: wrap<<<{grid}, {x}>>> buf:zero:{8 * grid * x} u32:{base}")
        print("// expect: arg0 == u64:" + ",".join(map(str, wrap(grid, x, base))))
