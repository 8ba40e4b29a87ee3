"""Unmodified numba-cuda kernels, launched the normal way, on ptxr's libcuda.so.1.

Numba compiles each kernel to PTX with NVVM; numba-cuda hands the PTX to the driver
(cuda.core's cuLibraryLoadData, or cuLink* when it links), and ptxr compiles and runs it on
the CPU. Every result is checked against NumPy on the host. Run (docs/cuda.md):
    LD_LIBRARY_PATH=target/release .venv/bin/python examples/driver/numba_kernels.py
"""
import math
import sys

import numpy as np
from numba import cuda, float32, int32

failures = []


def check(name, got, want, exact=True):
    ok = np.array_equal(got, want) if exact else np.allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"{name:28} {'ok' if ok else 'WRONG'}")
    if not ok:
        failures.append(name)


@cuda.jit(device=True)
def smoothstep(x):
    t = min(max(x, 0.0), 1.0)
    return t * t * (3.0 - 2.0 * t)


@cuda.jit
def apply_device_fn(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = smoothstep(x[i])


TPB = 128


@cuda.jit
def block_sum(x, out):
    # Shared memory, barriers, a tree reduction, one atomic per block.
    s = cuda.shared.array(TPB, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    k = TPB // 2
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def histogram(data, bins):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        cuda.atomic.add(bins, data[i] % bins.size, 1)
        i += stride


@cuda.jit
def warp_ops(x, sums, ballots):
    # Warp shuffles (a butterfly sum) and a ballot.
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
        off //= 2
    sums[i] = v
    ballots[i] = cuda.ballot_sync(0xFFFFFFFF, x[i] % 3 == 0)


@cuda.jit
def local_sort(rows, out):
    # A per-thread local array: insertion sort of one row of 8.
    r = cuda.grid(1)
    if r < rows.shape[0]:
        a = cuda.local.array(8, dtype=int32)
        for k in range(8):
            a[k] = rows[r, k]
        for k in range(1, 8):
            v = a[k]
            j = k - 1
            while j >= 0 and a[j] > v:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = v
        for k in range(8):
            out[r, k] = a[k]


@cuda.jit
def matmul_2d(a, b, c):
    # A 2-D grid, one output per thread, float64 math.
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        c[i, j] = math.sqrt(abs(acc))


def main():
    rng = np.random.default_rng(7)

    x = rng.uniform(-0.5, 1.5, 5000).astype(np.float32)
    out = cuda.device_array_like(x)
    apply_device_fn[(x.size + 127) // 128, 128](cuda.to_device(x), out)
    t = np.clip(x, 0, 1)
    check("device function", out.copy_to_host(), (t * t * (np.float32(3) - np.float32(2) * t)).astype(np.float32), exact=False)

    v = rng.integers(0, 100, 100_000).astype(np.float32)
    total = cuda.to_device(np.zeros(1, np.float32))
    block_sum[(v.size + TPB - 1) // TPB, TPB](cuda.to_device(v), total)
    check("shared memory + atomics", total.copy_to_host()[0], np.float32(v.sum(dtype=np.float64)))

    d = rng.integers(0, 1 << 20, 200_000).astype(np.int32)
    bins = cuda.to_device(np.zeros(37, np.int32))
    histogram[64, 256](cuda.to_device(d), bins)
    check("grid-stride histogram", bins.copy_to_host(), np.bincount(d % 37, minlength=37).astype(np.int32))

    w = rng.integers(0, 1000, 32 * 64).astype(np.int32)
    sums = cuda.device_array_like(w)
    ballots = cuda.device_array(w.size, np.uint32)
    warp_ops[64, 32](cuda.to_device(w), sums, ballots)
    want_sums = np.repeat(w.reshape(-1, 32).sum(axis=1), 32).astype(np.int32)
    bits = (w.reshape(-1, 32) % 3 == 0).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    want_ballots = np.repeat(bits.sum(axis=1).astype(np.uint32), 32)
    check("warp shuffle sum", sums.copy_to_host(), want_sums)
    check("warp ballot", ballots.copy_to_host(), want_ballots)

    rows = rng.integers(-50, 50, (300, 8)).astype(np.int32)
    sorted_rows = cuda.device_array_like(rows)
    local_sort[3, 128](cuda.to_device(rows), sorted_rows)
    check("local array", sorted_rows.copy_to_host(), np.sort(rows, axis=1))

    a = rng.standard_normal((40, 30))
    b = rng.standard_normal((30, 50))
    c = cuda.device_array((40, 50))
    matmul_2d[(3, 4), (16, 16)](cuda.to_device(a), cuda.to_device(b), c)
    check("2-D grid, float64", c.copy_to_host(), np.sqrt(np.abs(a @ b)), exact=False)

    print("PASSED" if not failures else f"FAILED: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
