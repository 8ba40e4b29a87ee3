#!/usr/bin/env python3
"""Reference for tests/filetests/warp/diverged_collectives.ptx (its comment, transcribed).

    python3 tests/filetests/ref/diverged_ref.py   # the run/expect lines
"""
M32 = (1 << 32) - 1


def dloop(ntid):
    out = [0] * (3 * ntid)
    for w in range(ntid // 32):
        n = [(7 * l + w) % 5 + 1 for l in range(32)]
        acc, tot = [0] * 32, [0] * 32
        for i in range(max(n)):
            m = [l for l in range(32) if n[l] > i]
            mbits = sum(1 << l for l in m)
            b = [k for k in m if (k + i) % 2 == 1]
            for l in m:
                acc[l] = (acc[l] + len(b) * (i + 1) + (mbits >> 16)) & M32
            lead = min(m)
            for l in m:
                tot[l] = (tot[l] + acc[lead]) & M32
        for l in range(32):
            t = 32 * w + l
            out[t] = acc[l]
            out[ntid + t] = tot[l]
            out[2 * ntid + t] = sum(acc[k] + k for k in range(32) if k % 2 == l % 2) & M32
    return out


if __name__ == "__main__":
    print("// run: dloop<<<1, 64>>> buf:zero:768")
    print("// expect: arg0 == u32:" + ",".join(map(str, dloop(64))))
