#!/usr/bin/env python3
"""Independent reference for tests/filetests/sync/lockstep.ptx and lockstep_shfl.ptx: each kernel's loops run
sequentially per thread, as plain Python. Prints the `// expect:` values of each run."""


def serial(n):
    # thread 0 sums 0..999 into s[0]; every thread adds its index
    return [sum(range(1000)) + t for t in range(n)]


def early(n, limit, stopat):
    out = []
    for t in range(n):
        i, acc = t, 0
        while True:
            if i >= limit:
                out.append(acc)
                break
            acc = (acc + (i % n) * (i + 1)) & 0xFFFFFFFF
            if i == stopat:
                out.append((acc + 1000000) & 0xFFFFFFFF)
                break
            i += 7
    return out


def nested(n):
    return [sum(10 * j + k for j in range(3) for k in range(t % 4 + 1)) for t in range(n)]


def loop_then_shfl(n):
    """acc[t] = sum over k < t % 5 of k*k + t; and the per-warp sums of acc."""
    acc = [sum(k * k + t for k in range(t % 5)) for t in range(n)]
    return acc, [sum(acc[w * 32:(w + 1) * 32]) for w in range(n // 32)]


if __name__ == "__main__":
    show = lambda name, v: print(f"{name}: u32:" + ",".join(map(str, v)))
    show("serial<<<2, 64>>>", serial(64))
    show("serial<<<1, 33>>>", serial(33))
    show("early<<<1, 64>>> 500 71", early(64, 500, 71))
    show("early<<<1, 64>>> 448 1000", early(64, 448, 1000))
    show("early<<<1, 48>>> 30 0", early(48, 30, 0))
    show("nested<<<1, 40>>>", nested(40))
    for n in (64, 128):
        acc, sums = loop_then_shfl(n)
        show(f"loop_then_shfl<<<1, {n}>>> acc", acc)
        show(f"loop_then_shfl<<<1, {n}>>> sums", sums)
