#!/usr/bin/env python3
"""Run every kernel of the committed PTX corpus on a real NVIDIA GPU and compare the results with
pure-Python reference implementations of the semantics documented in tests/cuda/*.cu.

Not part of the normal test suite (needs a GPU and the CUDA driver, libcuda.so.1); it exists to
confirm that the corpus and the documented semantics agree, and its reference functions double
as executable documentation for the Rust tests. Standard library only (no numpy).

Usage: python3 tests/cuda/check_on_gpu.py [corpus_dir]   (default: tests/corpus next to here)
Exit status 0 iff every kernel of every .ptx file matched.
"""
import array
import ctypes
import math
import os
import random
import struct
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "corpus")

# ----------------------------------------------------------------------------- CUDA driver
cu = ctypes.CDLL("libcuda.so.1")


def check(rc, what):
    if rc != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorString(rc, ctypes.byref(s))
        raise RuntimeError("%s failed: %d %s" % (what, rc, s.value.decode() if s.value else ""))


check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
drv = ctypes.c_int()
cu.cuDriverGetVersion(ctypes.byref(drv))
name = ctypes.create_string_buffer(256)
cu.cuDeviceGetName(name, 256, dev)
print("device: %s, driver API %d" % (name.value.decode(), drv.value))


def load_module(path):
    with open(path, "rb") as f:
        ptx = f.read() + b"\0"
    mod = ctypes.c_void_p()
    log = ctypes.create_string_buffer(8192)
    opts = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER, ..._SIZE_BYTES
    vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
    rc = cu.cuModuleLoadDataEx(ctypes.byref(mod), ptx, 2, opts, vals)
    if rc != 0:
        raise RuntimeError("cuModuleLoadDataEx(%s) = %d: %s" % (path, rc, log.value.decode()))
    return mod


class Buf:
    """Device buffer mirrored by a host array.array."""

    def __init__(self, typecode, data):
        self.host = array.array(typecode, data)
        self.nbytes = max(1, len(self.host) * self.host.itemsize)
        self.ptr = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(self.nbytes)), "alloc")
        if len(self.host):
            addr, _ = self.host.buffer_info()
            check(cu.cuMemcpyHtoD_v2(self.ptr, ctypes.c_void_p(addr),
                                     ctypes.c_size_t(len(self.host) * self.host.itemsize)), "h2d")

    def read(self):
        out = array.array(self.host.typecode, bytes(len(self.host) * self.host.itemsize))
        if len(out):
            addr, _ = out.buffer_info()
            check(cu.cuMemcpyDtoH_v2(ctypes.c_void_p(addr), self.ptr,
                                     ctypes.c_size_t(len(out) * out.itemsize)), "d2h")
        cu.cuMemFree_v2(self.ptr)
        return list(out)


def i32(v): return ctypes.c_int32(v)
def f32a(v): return ctypes.c_float(v)
def f64a(v): return ctypes.c_double(v)


def launch(mod, kname, grid, block, args):
    fn = ctypes.c_void_p()
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, kname.encode()), "get " + kname)
    holders = [a.ptr if isinstance(a, Buf) else a for a in args]
    params = (ctypes.c_void_p * len(holders))(
        *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    check(cu.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, None, params, None),
          "launch " + kname)
    check(cu.cuCtxSynchronize(), "sync " + kname)


# ----------------------------------------------------------------------------- helpers
M32 = 0xffffffff


def f32(x): return struct.unpack("f", struct.pack("f", x))[0]
def s32(x): x &= M32; return x - (1 << 32) if x & 0x80000000 else x
def h2f(h): return struct.unpack("<e", struct.pack("<H", h))[0]
def f2h(x): return struct.unpack("<H", struct.pack("<e", x))[0]
def cdiv(a, b): q = abs(a) // abs(b); return q if (a < 0) == (b < 0) else -q
def ceil_div(a, b): return (a + b - 1) // b


def close(got, want, rel, abs_=0.0):
    return abs(got - want) <= abs_ + rel * abs(want)


class Checker:
    def __init__(self):
        self.failures = 0

    def eq(self, label, got, want, cmp=None):
        bad = [(k, g, w) for k, (g, w) in enumerate(zip(got, want))
               if not (cmp(g, w) if cmp else g == w)]
        if len(got) != len(want):
            bad.append(("len", len(got), len(want)))
        if bad:
            self.failures += 1
            print("    FAIL %s: %d mismatches, first: %s" % (label, len(bad), bad[:4]))
        return not bad


rng = random.Random(1234)
def rf(lo, hi, n): return [f32(rng.uniform(lo, hi)) for _ in range(n)]
def ri(lo, hi, n): return [rng.randint(lo, hi) for _ in range(n)]


# ----------------------------------------------------------------------------- per-file tests
def t_saxpy(m, c):
    for n in (1, 1000):
        x, y, a = rf(-10, 10, n), rf(-10, 10, n), 1.75
        Y = Buf("f", y)
        launch(m, "saxpy", [ceil_div(n, 128)], [128], [Buf("f", x), Y, f32a(a), i32(n)])
        c.eq("saxpy n=%d" % n, Y.read(), [a * xi + yi for xi, yi in zip(x, y)],
             lambda g, w: close(g, w, 1e-6, 1e-6))


def t_vecadd_gridstride(m, c):
    for n, grid in ((1, 1), (5000, 3)):
        a, b = rf(-1, 1, n), rf(-1, 1, n)
        C = Buf("f", [0.0] * n)
        launch(m, "vec_add", [grid], [64], [Buf("f", a), Buf("f", b), C, i32(n)])
        c.eq("vec_add n=%d" % n, C.read(), [f32(p + q) for p, q in zip(a, b)])


def t_reduce_shared(m, c):
    for n, B in ((1, 32), (1000, 128), (4096, 256)):
        x = rf(-1, 1, n)
        nb = ceil_div(n, 2 * B)
        out = Buf("f", [0.0] * nb)
        launch(m, "reduce_sum", [nb], [B], [Buf("f", x), out, i32(n)])
        want = [sum(x[b * 2 * B:(b + 1) * 2 * B]) for b in range(nb)]
        c.eq("reduce_sum n=%d" % n, out.read(), want, lambda g, w: close(g, w, 1e-5, 1e-5))
    for n in (1, 10000):
        x = ri(-1000, 1000, n)
        tot = Buf("i", [0])
        launch(m, "reduce_sum_atomic", [7], [256], [Buf("i", x), tot, i32(n)])
        c.eq("reduce_sum_atomic n=%d" % n, tot.read(), [sum(x)])


def t_warp_reduce(m, c):
    for n in (1, 33, 1000):
        x = rf(-1, 1, n)
        nw = ceil_div(n, 32)
        out = Buf("f", [0.0] * nw)
        launch(m, "warp_reduce_down", [ceil_div(n, 64)], [64], [Buf("f", x), out, i32(n)])
        c.eq("warp_reduce_down n=%d" % n, out.read(), [sum(x[w * 32:w * 32 + 32]) for w in range(nw)],
             lambda g, w: close(g, w, 1e-5, 1e-5))
        xi = ri(-10 ** 6, 10 ** 6, n)
        o1, o2 = Buf("i", [0] * n), Buf("i", [0] * n)
        launch(m, "warp_allreduce_xor", [ceil_div(n, 64)], [64], [Buf("i", xi), o1, o2, i32(n)])
        c.eq("warp_allreduce_xor sum n=%d" % n, o1.read(),
             [sum(xi[i & ~31:(i & ~31) + 32]) for i in range(n)])
        c.eq("warp_allreduce_xor max n=%d" % n, o2.read(),
             [max(xi[i & ~31:(i & ~31) + 32]) for i in range(n)])
        o = Buf("i", [0] * n)
        launch(m, "warp_broadcast", [ceil_div(n, 64)], [64], [Buf("i", xi), o, i32(n)])
        v = lambda j: xi[j] if j < n else 0
        c.eq("warp_broadcast n=%d" % n, o.read(), [v((i & ~31) + (xi[i] & 31)) for i in range(n)])


def t_block_scan(m, c):
    for n, B in ((1, 32), (1000, 256), (777, 96), (3000, 1024)):
        x = ri(-100, 100, n)
        o = Buf("i", [0] * n)
        launch(m, "block_inclusive_scan", [ceil_div(n, B)], [B], [Buf("i", x), o, i32(n)])
        want, acc = [], 0
        for i in range(n):
            acc = x[i] if i % B == 0 else acc + x[i]
            want.append(acc)
        c.eq("block_inclusive_scan n=%d B=%d" % (n, B), o.read(), want)


def t_matmul_tiled(m, c):
    for n in (1, 37, 64):
        A, Bm = rf(-1, 1, n * n), rf(-1, 1, n * n)
        C = Buf("f", [0.0] * (n * n))
        g = ceil_div(n, 16)
        launch(m, "matmul_tiled", [g, g], [16, 16], [Buf("f", A), Buf("f", Bm), C, i32(n)])
        want = [sum(A[r * n + k] * Bm[k * n + q] for k in range(n)) for r in range(n) for q in range(n)]
        c.eq("matmul_tiled n=%d" % n, C.read(), want, lambda g_, w: close(g_, w, 1e-5, 1e-5))


def t_wmma_gemm(m, c):
    # small integers: exact in f16/f32 whatever the accumulation order
    for (M, N, K, bx, by) in ((16, 16, 16, 32, 1), (48, 32, 64, 64, 2)):
        A, B, C0 = ri(0, 4, M * K), ri(-2, 2, K * N), ri(0, 99, M * N)
        C = Buf("f", [float(v) for v in C0])
        grid = [ceil_div(M // 16 * 32, bx), ceil_div(N // 16, by)]
        launch(m, "wmma_gemm", grid, [bx, by], [Buf("H", [f2h(v) for v in A]), Buf("H", [f2h(v) for v in B]), C,
                                                 i32(M), i32(N), i32(K)])
        want = [float(C0[i * N + j] + sum(A[i * K + k] * B[j * K + k] for k in range(K))) for i in range(M) for j in range(N)]
        c.eq("wmma_gemm %dx%dx%d" % (M, N, K), C.read(), want)
    for (M, N, K) in ((64, 24, 48),):
        A, B = ri(-3, 3, M * K), ri(-3, 3, K * N)
        D = Buf("H", [0] * (M * N))
        launch(m, "wmma_gemm_h", [M // 32, N // 8], [32], [Buf("H", [f2h(v) for v in A]), Buf("H", [f2h(v) for v in B]), D,
                                                            i32(M), i32(N), i32(K)])
        want = [f2h(sum(A[i * K + k] * B[k * N + j] for k in range(K))) for i in range(M) for j in range(N)]
        c.eq("wmma_gemm_h %dx%dx%d" % (M, N, K), D.read(), want)


def t_histogram(m, c):
    for n in (1, 100000):
        d = ri(0, 255, n)
        bins = Buf("I", [0] * 256)
        launch(m, "histogram256", [13], [192], [Buf("B", d), bins, i32(n)])
        want = [0] * 256
        for v in d:
            want[v] += 1
        c.eq("histogram256 n=%d" % n, bins.read(), want)


def t_transpose(m, c):
    for rows, cols in ((1, 1), (45, 70), (64, 32)):
        x = rf(-1, 1, rows * cols)
        o = Buf("f", [0.0] * (rows * cols))
        launch(m, "transpose", [ceil_div(cols, 32), ceil_div(rows, 32)], [32, 8],
               [Buf("f", x), o, i32(rows), i32(cols)])
        c.eq("transpose %dx%d" % (rows, cols), o.read(),
             [x[r * cols + q] for q in range(cols) for r in range(rows)])


def t_stencil1d(m, c):
    w = [0.0625, 0.25, 0.375, 0.25, 0.0625]
    for n, B in ((1, 32), (1000, 256), (77, 16)):
        x = rf(-1, 1, n)
        o = Buf("f", [0.0] * n)
        launch(m, "stencil1d", [ceil_div(n, B)], [B], [Buf("f", x), o, i32(n)])
        want = [sum(w[k + 2] * (x[i + k] if 0 <= i + k < n else 0.0) for k in range(-2, 3))
                for i in range(n)]
        c.eq("stencil1d n=%d" % n, o.read(), want, lambda g, w_: close(g, w_, 1e-6, 1e-6))


def t_stencil2d(m, c):
    for W, H in ((1, 1), (3, 3), (50, 37)):
        x = rf(-1, 1, W * H)
        o = Buf("f", [0.0] * (W * H))
        launch(m, "stencil2d", [ceil_div(W, 16), ceil_div(H, 8)], [16, 8],
               [Buf("f", x), o, i32(W), i32(H)])
        want = []
        for y in range(H):
            for xx in range(W):
                i = y * W + xx
                if xx == 0 or y == 0 or xx == W - 1 or y == H - 1:
                    want.append(x[i])
                else:
                    s = f32(f32(f32(x[i - 1] + x[i + 1]) + x[i - W]) + x[i + W])
                    want.append(f32(0.25 * s))
        c.eq("stencil2d %dx%d" % (W, H), o.read(), want)


def t_bitonic_sort(m, c):
    for n, B in ((1, 32), (1000, 256), (3000, 1024), (100, 64)):
        x = ri(-2 ** 31, 2 ** 31 - 1, n)
        d = Buf("i", x)
        launch(m, "bitonic_sort_block", [ceil_div(n, B)], [B], [d, i32(n)])
        want = []
        for b in range(0, n, B):
            want += sorted(x[b:b + B])
        c.eq("bitonic_sort_block n=%d B=%d" % (n, B), d.read(), want)


def t_warp_vote(m, c):
    for n in (1, 40, 1000):
        x = [rng.choice([-3, 0, 1, 5, 7]) for _ in range(n)]
        if n == 40:
            x = [1] * n  # all-true warp 0, partial warp 1
        o = Buf("I", [0] * (5 * n))
        launch(m, "warp_vote", [ceil_div(n, 64)], [64], [Buf("i", x), o, i32(n)])
        want = []
        for i in range(n):
            W = range(i & ~31, (i & ~31) + 32)
            p = [j < n and x[j] > 0 for j in W]
            v = [x[j] if j < n else -1 for j in W]
            want += [sum(1 << l for l in range(32) if p[l]), int(all(p)), int(any(p)),
                     sum(1 << l for l in range(32) if v[l] == v[i & 31]),
                     sum(1 << l for l, j in enumerate(W) if j < n)]
        c.eq("warp_vote n=%d" % n, o.read(), want)
        o2 = Buf("i", [0] * n)
        launch(m, "block_count_positive", [ceil_div(n, 64)], [64], [Buf("i", x), o2, i32(n)])
        c.eq("block_count_positive n=%d" % n, o2.read(),
             [sum(1 for j in range(i // 64 * 64, min(n, i // 64 * 64 + 64)) if x[j] > 0)
              for i in range(n)])


def h_ulp_close(g, w):
    return g == w or abs(h2f(g) - h2f(w)) <= abs(h2f(w)) * 2 ** -10 + 2 ** -24


def t_f16_math(m, c):
    for n in (1, 500):
        a = [f2h(rng.uniform(-8, 8)) for _ in range(n)]
        b = [f2h(rng.uniform(-8, 8)) for _ in range(n)]
        cc = [f2h(rng.uniform(-8, 8)) for _ in range(n)]
        o = Buf("H", [0] * (4 * n))
        launch(m, "f16_ops", [ceil_div(n, 128)], [128], [Buf("H", a), Buf("H", b), Buf("H", cc), o, i32(n)])
        want = []
        for x, y, z in zip(a, b, cc):
            X, Y, Z = h2f(x), h2f(y), h2f(z)
            fma = float(Fraction(X) * Fraction(Y) + Fraction(Z))
            want += [f2h(X + Y), f2h(X * Y), f2h(fma), x if X > Y else y]
        got = o.read()
        c.eq("f16_ops (add,mul,max exact) n=%d" % n,
             [g for k, g in enumerate(got) if k % 4 != 2], [w for k, w in enumerate(want) if k % 4 != 2])
        c.eq("f16_ops (fma, 1ulp) n=%d" % n, got[2::4], want[2::4], h_ulp_close)
        pa = [f2h(rng.uniform(-8, 8)) | f2h(rng.uniform(-8, 8)) << 16 for _ in range(n)]
        pb = [f2h(rng.uniform(-8, 8)) | f2h(rng.uniform(-8, 8)) << 16 for _ in range(n)]
        pc = [f2h(rng.uniform(-8, 8)) | f2h(rng.uniform(-8, 8)) << 16 for _ in range(n)]
        o = Buf("I", [0] * (3 * n))
        launch(m, "f16x2_ops", [ceil_div(n, 128)], [128], [Buf("I", pa), Buf("I", pb), Buf("I", pc), o, i32(n)])
        got = o.read()
        lanes = lambda v: (v & 0xffff, v >> 16)
        want_add, want_mul, want_fma = [], [], []
        for x, y, z in zip(pa, pb, pc):
            r = [[], [], []]
            for xl, yl, zl in zip(lanes(x), lanes(y), lanes(z)):
                X, Y, Z = h2f(xl), h2f(yl), h2f(zl)
                r[0].append(f2h(X + Y)); r[1].append(f2h(X * Y))
                r[2].append(f2h(float(Fraction(X) * Fraction(Y) + Fraction(Z))))
            want_add.append(r[0][0] | r[0][1] << 16); want_mul.append(r[1][0] | r[1][1] << 16)
            want_fma.append(r[2][0] | r[2][1] << 16)
        c.eq("f16x2_ops add n=%d" % n, got[0::3], want_add)
        c.eq("f16x2_ops mul n=%d" % n, got[1::3], want_mul)
        c.eq("f16x2_ops fma n=%d" % n, [lanes(v) for v in got[2::3]], [lanes(v) for v in want_fma],
             lambda g, w: h_ulp_close(g[0], w[0]) and h_ulp_close(g[1], w[1]))
        x = [f2h(rng.uniform(-4, 4)) for _ in range(n)]
        y = [f2h(rng.uniform(-4, 4)) for _ in range(n)]
        Y = Buf("H", y)
        launch(m, "f16_axpy", [ceil_div(n, 128)], [128], [Buf("H", x), Y, f32a(0.5), i32(n)])
        c.eq("f16_axpy n=%d" % n, Y.read(), [f2h(0.5 * h2f(p) + h2f(q)) for p, q in zip(x, y)],
             h_ulp_close)


def t_f64_math(m, c):
    for n in (1, 1000):
        x = [rng.uniform(-100, 100) for _ in range(n)]
        y = [rng.uniform(-100, 100) for _ in range(n)]
        Y = Buf("d", y)
        launch(m, "daxpy", [ceil_div(n, 128)], [128], [Buf("d", x), Y, f64a(-2.5), i32(n)])
        c.eq("daxpy n=%d" % n, Y.read(), [-2.5 * p + q for p, q in zip(x, y)],
             lambda g, w: close(g, w, 1e-15, 1e-13))
        r = Buf("d", [0.0])
        launch(m, "ddot", [5], [128], [Buf("d", x), Buf("d", y), r, i32(n)])
        c.eq("ddot n=%d" % n, r.read(), [math.fsum(p * q for p, q in zip(x, y))],
             lambda g, w: close(g, w, 1e-12, 1e-9))
        o = Buf("d", [0.0] * (4 * n))
        launch(m, "f64_ops", [ceil_div(n, 128)], [128], [Buf("d", x), o, i32(n)])
        want = []
        for v in x:
            want += [math.sqrt(abs(v)), float(Fraction(v) * Fraction(v) - 1), v / (abs(v) + 1.0),
                     float(int(v * 1000.0))]
        c.eq("f64_ops n=%d" % n, o.read(), want)


def collatz(x, limit):
    s = 0
    while x != 1 and s < limit:
        x = (3 * x + 1) & M32 if x & 1 else x >> 1
        s += 1
    return s


def t_device_calls(m, c):
    for n in (1, 300):
        x = ri(-10 ** 6, 10 ** 6, n)
        o = Buf("i", [0] * n)
        launch(m, "device_calls", [ceil_div(n, 128)], [128], [Buf("i", x), o, i32(n)])
        c.eq("device_calls n=%d" % n, o.read(),
             [collatz((v & 0xffff) + 1, 500) * 1000 + math.gcd(v, 360) for v in x])
        xs, co = rf(-2, 2, n), rf(-1, 1, 6)
        o = Buf("f", [0.0] * n)
        launch(m, "poly_eval", [ceil_div(n, 128)], [128], [Buf("f", xs), Buf("f", co), o, i32(5), i32(n)])
        want = []
        for v in xs:
            acc = co[5]
            for k in range(4, -1, -1):
                acc = acc * v + co[k]
            want.append(acc)
        c.eq("poly_eval n=%d" % n, o.read(), want, lambda g, w: close(g, w, 1e-5, 1e-5))


def t_int_ops(m, c):
    for n in (1, 2000):
        a = [rng.getrandbits(32) for _ in range(n)]
        b = [rng.getrandbits(32) for _ in range(n)]
        for k, v in enumerate([0, 0x80000000, 0xffffffff, 1][:n]):
            a[k] = v
        o, o64 = Buf("I", [0] * (10 * n)), Buf("Q", [0] * n)
        launch(m, "int_ops", [ceil_div(n, 128)], [128], [Buf("I", a), Buf("I", b), o, o64, i32(n)])
        want, want64 = [], []
        for x, y in zip(a, b):
            sel = y & 0x7777
            both = (y << 32) | x
            bp = sum(((both >> (8 * ((sel >> (4 * k)) & 7))) & 0xff) << (8 * k) for k in range(4))
            d = s32(y | 1)
            q = cdiv(s32(x), d)
            want += [bin(x).count("1"), 32 - x.bit_length(), int("{:032b}".format(x)[::-1], 2), bp,
                     ((both << (y & 31)) >> 32) & M32, (x * y) >> 32, q & M32,
                     (s32(x) - q * d) & M32, (s32(x) >> (y & 31)) & M32,
                     ((s32(x) * s32(y)) >> 32) & M32]
            want64.append((both * 0x9E3779B97F4A7C15 + x * y) & (2 ** 64 - 1))
        got = o.read()
        names = ["popc", "clz", "brev", "byte_perm", "funnelshift_l", "umulhi", "div", "rem",
                 "sar", "mulhi"]
        for k, nm in enumerate(names):
            c.eq("int_ops %s n=%d" % (nm, n), got[k::10], want[k::10])
        c.eq("int_ops mul64 n=%d" % n, o64.read(), want64)


def t_float_math(m, c):
    for n in (1, 1000):
        x = rf(-3, 3, n)
        for k, v in enumerate([2.5, -2.5, 0.5, -0.0, 3.0, -1.5][:n]):
            x[k] = v
        y = [v if v != 0 else 1.0 for v in rf(-3, 3, n)]
        o, io = Buf("f", [0.0] * (8 * n)), Buf("i", [0] * (4 * n))
        launch(m, "float_math", [ceil_div(n, 128)], [128], [Buf("f", x), Buf("f", y), o, io, i32(n)])
        got, igot = o.read(), io.read()
        exact = lambda g, w: g == w
        tols = [exact, lambda g, w: close(g, w, 2e-6), lambda g, w: close(g, w, 2e-5, 1e-6),
                lambda g, w: close(g, w, 0, 2e-6), exact, exact, exact, exact]
        for k, nm in enumerate(["sqrtf", "rsqrtf", "__expf", "__sinf", "fminf", "fmaxf", "div",
                                "f2i_rz->f"]):
            want = []
            for u, v in zip(x, y):
                want.append([f32(math.sqrt(abs(u))), 1 / math.sqrt(abs(u) + 1), math.exp(u),
                             math.sin(u), min(u, v), max(u, v), f32(u / v),
                             float(int(u))][k])
            c.eq("float_math %s n=%d" % (nm, n), got[k::8], want, tols[k])
        iwant = []
        for u in x:
            iwant += [round(u), int(u), math.floor(u), math.ceil(u)]
        c.eq("float_math f2i n=%d" % n, igot, iwant)
        k = ri(-2 ** 31, 2 ** 31 - 1, n)
        o = Buf("f", [0.0] * n)
        launch(m, "int_to_float", [ceil_div(n, 128)], [128], [Buf("i", k), o, i32(n)])
        c.eq("int_to_float n=%d" % n, o.read(), [f32(v) * 0.5 + f32(v & M32) for v in k],
             lambda g, w: close(g, w, 1e-6, 1e-6))


def t_atomics(m, c):
    for n in (1, 5000):
        x = ri(-10 ** 6, 10 ** 6, n)
        st = Buf("i", [-2 ** 31, 2 ** 31 - 1, 0, 0])
        launch(m, "atomic_stats", [ceil_div(n, 256)], [256], [Buf("i", x), st, i32(n)])
        got = st.read()
        c.eq("atomic_stats n=%d" % n, got[:3], [max(x), min(x), sum(1 for v in x if cdiv(v, 3) * 3 == v)])
        c.eq("atomic_stats exch n=%d" % n, [got[3] in set(x)], [True])
        idx, vals = ri(0, 1000, n), rf(-1, 1, n)
        sums = Buf("f", [0.0] * 16)
        launch(m, "atomic_scatter_add", [ceil_div(n, 256)], [256], [Buf("i", idx), Buf("f", vals), sums, i32(n)])
        want = [0.0] * 16
        for i_, v in zip(idx, vals):
            want[i_ & 15] += v
        c.eq("atomic_scatter_add n=%d" % n, sums.read(), want, lambda g, w: close(g, w, 1e-5, 1e-4))


def main():
    c = Checker()
    names = sorted({f.split(".")[0] for f in os.listdir(CORPUS) if f.endswith(".ptx")})
    for nm in names:
        test = globals().get("t_" + nm)
        for gen in ("nvrtc", "clang"):
            path = os.path.join(CORPUS, "%s.%s.ptx" % (nm, gen))
            before = c.failures
            if test is None:
                print("%-28s NO TEST" % os.path.basename(path)); c.failures += 1; continue
            try:
                test(load_module(path), c)
            except Exception as e:  # noqa: BLE001
                print("    ERROR %s" % e); c.failures += 1
            print("%-28s %s" % (os.path.basename(path), "ok" if c.failures == before else "FAILED"))
    print("%d failure(s)" % c.failures)
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
