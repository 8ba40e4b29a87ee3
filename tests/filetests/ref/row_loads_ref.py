#!/usr/bin/env python3
"""Reference for tests/filetests/warp/row_loads.ptx (transcribed from its comments):

    python3 tests/filetests/ref/row_loads_ref.py   # the run/expect lines

With t = 16 ty + tx (blocks 16 wide), s[y][x] = 100 y + x, v = shfl.idx from lane 0 of
1000 ty + tx (PTX ISA 9.7.8.5; lane 0 of thread t's hardware warp is thread 32 (t // 32):
tx = 0, ty = 2 (t // 32)), each thread with ty != 3 writes
    out[t] = s[ty][0] + 2 s[ty][1] + 3 s[ty][2] + 4 s[ty][3] + s[(ty + 1) & 3][tx] + v
and the threads of row 3 write nothing (the buffer starts zeroed).
"""
M = 0xFFFFFFFF


def run(nty):
    s = lambda y, x: 100 * y + x
    out = []
    for t in range(16 * nty):
        ty, tx = divmod(t, 16)
        if ty == 3:
            out.append(0)
            continue
        v = 1000 * (2 * (t // 32))
        acc = sum(s(ty, k) * (k + 1) for k in range(4)) + s((ty + 1) & 3, tx) + v
        out.append(acc & M)
    return out


for nty in (4,):
    vals = run(nty)
    print(f"// run: row_loads<<<1, (16,{nty},1)>>> buf:zero:{4 * len(vals)}")
    print("// expect: arg0 == u32:" + ",".join(str(v) for v in vals))
