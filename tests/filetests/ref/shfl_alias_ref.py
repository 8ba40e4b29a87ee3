#!/usr/bin/env python3
"""Expected output of tests/filetests/warp/shfl_alias.ptx, from the PTX's meaning (PTX ISA
9.7.8.5 shfl.sync): integers held in f32, so every sum is exact."""
import struct

def run(n):
    out = []
    for t in range(n):
        pass
    f1 = [float(t) for t in range(n)]
    lane = lambda t: t % 32
    # A: f3 = f1 + down1(f1)
    f3 = [f1[t] + (f1[t + 1] if lane(t) < 31 and t + 1 < n else f1[t]) for t in range(n)]
    # B: f5 = (f3 + 10) + up2(f3)
    f5 = [f3[t] + 10 + (f3[t - 2] if lane(t) >= 2 else f3[t]) for t in range(n)]
    # C: f6 = bfly1(f5), f7 = bfly2(f6), f8 = f5 + f6 + f7
    bf = lambda v, m: [v[t ^ m] if (t ^ m) < n else v[t] for t in range(n)]
    f6 = bf(f5, 1)
    f7 = bf(f6, 2)
    return [struct.unpack('<I', struct.pack('<f', f5[t] + f6[t] + f7[t]))[0] for t in range(n)]

for n in (64, 32):
    print(f"// run: shfl_alias<<<1, {n}>>> buf:zero:{4 * n}")
    print("// expect: arg0 == u32:" + ",".join(hex(x) for x in run(n)))
