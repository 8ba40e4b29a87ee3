#!/usr/bin/env python3
"""Reference for tests/filetests/sync/bar_red_warp.ptx (the kernel's comments, transcribed;
PTX ISA 9.7.12.1 bar.red: the reduction is over the threads that arrive, here those with
t < n).

    python3 tests/filetests/ref/bar_red_ref.py   # the run/expect lines
"""
M = 0xFFFFFFFF


def red(grid, ntx, nty, n):
    nt = ntx * nty
    out = []
    for c in range(grid):
        live = [t for t in range(nt) if t < n]
        acc = {t: 0 for t in live}
        for r in range(3):
            p = {t: (7 * t + r + c) % 3 == 0 for t in live}
            cnt = sum(p.values())
            a = not any(p.values())
            o = any(p.values())
            for t in live:
                acc[t] = ((acc[t] + 4 * cnt + 2 * a + o) * 3) & M
        out += [acc.get(t, 0) for t in range(nt)]
    return out


if __name__ == "__main__":
    for grid, x, y, n in [(2, 64, 1, 50), (1, 16, 4, 64), (2, 16, 3, 40), (1, 8, 8, 60), (1, 40, 1, 40), (1, 96, 1, 3)]:
        print(f"// run: red<<<{grid}, ({x},{y})>>> buf:zero:{4 * grid * x * y} u32:{n}")
        print("// expect: arg0 == u32:" + ",".join(map(str, red(grid, x, y, n))))
