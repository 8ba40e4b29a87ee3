#!/usr/bin/env python3
"""Expected outputs of tests/filetests/sync/induction.ptx, from the kernels' meaning (not
from ptxr). Prints the `// run:` / `// expect:` lines."""


def diverge(n):
    # i = t (base) + t (pre-loop: one step per k < t) + 4 per iteration of the barrier loop;
    # acc adds the neighbour's i after each of 4 iterations; k = t.
    out = []
    for t in range(n):
        nb = (t + 1) % n
        acc = sum(2 * nb + 4 * j for j in range(1, 5))
        out += [2 * t + 16, acc, t]
    return out


def stride(grid, n, iters, data):
    out = []
    for c in range(grid):
        for t in range(n):
            base = c * n * iters
            out.append(sum(data[base + j * n + (n - 1 - t)] for j in range(iters)) & 0xFFFFFFFF)
    return out


def shfl(n):
    # Iteration j = 1..4: i = 2t + 8j - 4, shfl.down by 1 (c = 31: lane 31 keeps its own
    # value; the last thread of a partial warp reads a lane past the end, which gives 0 on an
    # H200); then i = 2t + 8j, shfl.up by 2 (c = 0: lanes 0 and 1 keep theirs), times 3.
    out = []
    for t in range(n):
        up = t - 2 if (t % 32) >= 2 else t

        def down(j):
            if (t % 32) == 31:
                return 2 * t + 8 * j - 4
            return 2 * (t + 1) + 8 * j - 4 if t + 1 < n else 0
        acc = sum(down(j) + 3 * (2 * up + 8 * j) for j in range(1, 5))
        out += [2 * t + 32, acc & 0xFFFFFFFF]
    return out


def hexs(v):
    return ",".join(str(x) for x in v)


for n in (64, 40):
    print(f"// run: induction_diverge<<<1, {n}>>> buf:zero:{12 * n}")
    print(f"// expect: arg0 == u32:{hexs(diverge(n))}")
for n in (64, 40):
    print(f"// run: induction_shfl<<<1, {n}>>> buf:zero:{8 * n}")
    print(f"// expect: arg0 == u32:{hexs(shfl(n))}")
for grid, n, iters in ((1, 64, 4), (2, 32, 3), (3, 96, 2)):
    data = [(k * 2654435761) & 0xFFFF for k in range(grid * n * iters)]
    print(f"// run: induction_stride<<<{grid}, {n}>>> buf:u32:{hexs(data)} buf:zero:{4 * grid * n} u32:{iters}")
    print(f"// expect: arg1 == u32:{hexs(stride(grid, n, iters, data))}")
