#!/usr/bin/env python3
"""Reference for tests/filetests/warp/local_lanes.ptx (each kernel's comments, transcribed).

    python3 tests/filetests/ref/local_ref.py   # the run/expect lines
"""
M32 = (1 << 32) - 1


def lpriv(grid, ntid):
    out = []
    for c in range(grid):
        for t in range(ntid):
            gid = c * ntid + t
            arr = [10 * gid + k for k in range(8)]
            a = arr[(3 * t) % 8]
            b = 10 * (c * ntid + (t + 1) % ntid) + 7
            if t & 1:
                arr[1] = b
            out.append((a + arr[1]) & M32)
    return out


def ldepot(grid, ntid, n):
    out = []
    for gid in range(min(n, grid * ntid)):
        v = [gid ^ (k * k) for k in range(16)]
        if gid % 3 == 0:
            v[gid % 16] = 0xDEAD
        acc = 0
        for x in v:
            acc = (acc * 31 + x) & M32
        out += [acc, 1]
    return out


if __name__ == "__main__":
    for grid, ntid in [(2, 64), (3, 32), (1, 128)]:
        print(f"// run: lpriv<<<{grid}, {ntid}>>> buf:zero:{4 * grid * ntid}")
        print("// expect: arg0 == u32:" + ",".join(map(str, lpriv(grid, ntid))))
    for grid, ntid, n in [(2, 48, 90), (1, 32, 32), (3, 40, 120)]:
        print(f"// run: ldepot<<<{grid}, {ntid}>>> buf:zero:{8 * grid * ntid} u32:{n}")
        print("// expect: arg0 == u32:" + ",".join(map(str, ldepot(grid, ntid, n) + [0] * (2 * (grid * ntid - n)))))
