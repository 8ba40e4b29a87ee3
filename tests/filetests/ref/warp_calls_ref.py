#!/usr/bin/env python3
"""Reference for tests/filetests/call/warp_calls.ptx (the kernel's comments, transcribed).

    python3 tests/filetests/ref/warp_calls_ref.py   # the run/expect lines
"""
M = 0xFFFFFFFF


def calls(ntx, nty):
    n = ntx * nty
    out = []
    for t in range(n):
        v = (t + 1) % n                      # s[(t + 1) % n] = (t + 1) % n
        w = (3 * v + t) & M if t % 2 == 0 else 1000 + t
        if t % 5 == 0:                       # maybe_exit ends the thread
            out += [w, 0, 0]
        else:
            out += [w, 7, (3 * t + w) & M]
    return out


if __name__ == "__main__":
    for x, y in [(64, 1), (16, 4), (40, 1), (8, 3)]:
        print(f"// run: calls<<<1, ({x},{y})>>> buf:zero:{12 * x * y}")
        print("// expect: arg0 == u32:" + ",".join(map(str, calls(x, y))))
