#!/usr/bin/env python3
"""PTX from NVRTC, outputs from a real GPU: filetests for tests/cuda/oracle/*.cu.

    # anywhere (NVRTC from the project's venv):
    .venv/bin/python scripts/nvrtc_compile.py tests/cuda/oracle/suite.cu tests/cuda/oracle/suite.ptx
    .venv/bin/python scripts/nvrtc_compile.py tests/cuda/oracle/suite.cu tests/cuda/oracle/suite.G.ptx -G
    .venv/bin/python scripts/nvrtc_compile.py tests/cuda/oracle/suite2.cu tests/cuda/oracle/suite2.ptx
    .venv/bin/python scripts/nvrtc_compile.py tests/cuda/oracle/suite3.cu tests/cuda/oracle/suite3.ptx --gpu-architecture=compute_80
    # on a machine with an NVIDIA GPU and CuPy:
    python3 tests/filetests/ref/cuda_oracle.py tests/cuda/oracle/suite.ptx tests/cuda/oracle/suite.G.ptx \
        tests/cuda/oracle/suite2.ptx tests/cuda/oracle/suite3.ptx --out DIR

For each PTX file, every launch in SPECS runs on the GPU with seeded inputs and DIR/cuda_<file>.ptx
is written: the PTX as NVRTC produced it, plus `// run:`/`// expect:` lines whose expected
values are the GPU's outputs, so ptxr must reproduce the GPU on compiler-generated PTX.
"""
import argparse
import os
import random
import struct
import sys


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def csr_graph(rng, n, deg):
    rows, cols = [0], []
    for v in range(n):
        nb = sorted({rng.randrange(n) for _ in range(rng.randrange(0, deg + 1))})
        cols += nb
        rows.append(len(cols))
    return rows, cols


def specs(rng):
    """(kernel, grid, block, args[, dynamic shared bytes]); an arg is ('u32'|'u8'|'u64', [values])
    for a buffer (the output buffers are buffers too), ('s32'|'f32', value) for a scalar, or
    ('bytes', b) for a struct passed by value. Kernels not in the PTX file are skipped."""
    out = []
    n = 40
    t = [f32_bits(300 + rng.randrange(0, 50 * 64) / 64) for _ in range(n * n)]
    p = [f32_bits(rng.randrange(0, 64) / 64) for _ in range(n * n)]
    out.append(("hotspot", (3, 3), (16, 16), [("u32", t), ("u32", p), ("u32", [0] * (n * n)), ("s32", n), ("f32", 0.05)]))
    ref = [rng.randrange(-5, 6) & 0xFFFFFFFF for _ in range(3 * 256)]
    out.append(("nw_block", (3, 1), (16, 1), [("u32", ref), ("u32", [0] * (3 * 289)), ("s32", 2)]))
    gn = 200
    rows, cols = csr_graph(rng, gn, 5)
    level = [0xFFFFFFFF] * gn
    level[0] = 0
    for v in rng.sample(range(1, gn), 6):
        level[v] = 0
    out.append(("bfs_step", (4, 1), (64, 1), [("u32", rows), ("u32", cols), ("u32", level), ("s32", gn), ("s32", 0), ("u32", [0])]))
    kn, kk, kd = 300, 5, 4
    pts = [f32_bits(rng.randrange(0, 64) / 64) for _ in range(kn * kd)]
    cent = [f32_bits(rng.randrange(0, 64) / 64) for _ in range(kk * kd)]
    out.append(("kmeans_assign", (3, 1), (128, 1), [("u32", pts), ("u32", cent), ("u32", [0] * kn), ("u32", [0] * kk),
                                                    ("s32", kn), ("s32", kk), ("s32", kd)]))
    out.append(("scan_blelloch", (2, 1), (256, 1), [("u32", [rng.randrange(0, 1000) for _ in range(1024)]), ("u32", [0] * 1024)]))
    hn = 1000
    out.append(("hist_aggregated", (4, 1), (256, 1), [("u8", [rng.randrange(0, 16) for _ in range(hn)]), ("u32", [0] * 256), ("s32", hn)]))
    dn = 64
    dx = [rng.uniform(-3, 3) for _ in range(dn - 6)] + [0.0, -0.0, 1e-300, 20.0, -20.0, 0.5]
    out.append(("dmath", (1, 1), (64, 1), [("u64", [f64_bits(v) for v in dx]), ("u64", [0] * (8 * dn)), ("s32", dn)]))
    fx = [rng.uniform(-8, 8) for _ in range(dn - 6)] + [0.0, -0.0, 1e-40, 80.0, -80.0, 0.5]
    out.append(("fmath", (1, 1), (64, 1), [("u32", [f32_bits(v) for v in fx]), ("u32", [0] * (6 * dn)), ("s32", dn)]))
    out.append(("bitonic256", (2, 1), (256, 1), [("u32", [rng.randrange(-1000, 1000) & 0xFFFFFFFF for _ in range(512)])]))
    # suite2.cu
    sp = struct.pack("<ifdiI", 100, 0.75, 3.25, 3, 0x7FFFFFFF)
    out.append(("struct_local", (2, 1), (64, 1), [("bytes", sp), ("u32", [rng.getrandbits(32) for _ in range(128)]), ("u32", [0] * 384)]))
    out.append(("recursion", (1, 1), (64, 1), [("u32", [rng.randrange(0, 64) for _ in range(64)]), ("u32", [0] * 128), ("s32", 64)]))
    out.append(("dyn_reverse", (3, 1), (96, 1), [("u32", [rng.getrandbits(32) for _ in range(288)]), ("u32", [0] * 288)], 96 * 4))
    special = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678, 0xFF00FF00, 63, 64]
    xs = [rng.choice(special) if rng.random() < 0.3 else rng.getrandbits(32) for _ in range(64)]
    ys = [rng.choice(special) if rng.random() < 0.3 else rng.getrandbits(32) for _ in range(64)]
    out.append(("int_intrinsics", (1, 1), (64, 1), [("u32", xs), ("u32", ys), ("u32", [0] * (14 * 64)), ("s32", 64)]))
    an = 500
    out.append(("atomics_final", (4, 1), (128, 1), [("u32", [rng.randrange(-100000, 100000) & 0xFFFFFFFF for _ in range(an)]),
                                                    ("u32", [0, 0, 0, 0xFFFFFFFF, 0, 0]), ("u32", [0x80000000, 0x7FFFFFFF]),
                                                    ("u64", [0]), ("s32", an)]))
    out.append(("switchy", (2, 1), (128, 1), [("u32", [rng.getrandbits(32) for _ in range(200)]), ("u32", [0] * 200), ("s32", 200)]))
    # suite3.cu (sm_80): small integers in f16, so the mma sums are exact in any order
    h16 = lambda v: struct.unpack("<H", struct.pack("<e", float(v)))[0]
    for k in ("tc_gemm", "tc_gemm_trans"):
        out.append((k, (2, 1), (32, 1), [("u16", [h16(rng.randrange(-4, 5)) for _ in range(512)]),
                                         ("u16", [h16(rng.randrange(-4, 5)) for _ in range(256)]),
                                         ("u32", [f32_bits(rng.randrange(-50, 50)) for _ in range(128)]), ("u32", [0] * 256)]))
    return out


def hexs(vals, size):
    return ",".join("0x%x" % v for v in vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ptx", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    os.makedirs(a.out, exist_ok=True)
    dt = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
    for path in a.ptx:
        text = open(path).read()
        mod = cp.RawModule(path=path)
        lines = []
        for spec_t in specs(random.Random(a.seed)):
            kernel, grid, block, args = spec_t[:4]
            smem = spec_t[4] if len(spec_t) > 4 else 0
            if ".entry %s(" % kernel not in text:
                continue
            fn = mod.get_function(kernel)
            dev_args, bufs = [], []
            for ty, v in args:
                if ty in dt:
                    b = cp.asarray(np.array(v, dtype=dt[ty]))
                    bufs.append((ty, b))
                    dev_args.append(b)
                elif ty == "s32":
                    dev_args.append(np.int32(v))
                elif ty == "bytes":
                    dev_args.append(np.frombuffer(v, dtype=np.dtype((np.void, len(v))))[0])
                else:
                    dev_args.append(np.float32(v))
            fn(grid, block, tuple(dev_args), shared_mem=smem)
            cp.cuda.Device().synchronize()
            spec = []
            for ty, v in args:
                if ty in dt:
                    spec.append("buf:%s:%s" % (ty, hexs(v, 0)))
                elif ty == "s32":
                    spec.append("s32:%d" % v)
                elif ty == "bytes":
                    spec.append("bytes:%s" % v.hex())
                else:
                    spec.append("f32:0x%08x" % f32_bits(v))
            lines.append("// run: %s<<<(%d,%d), (%d,%d), %d>>> %s" % (kernel, grid[0], grid[1], block[0], block[1], smem, " ".join(spec)))
            k = 0
            for idx, (ty, v) in enumerate(args):
                if ty in dt:
                    got = [int(x) for x in bufs[k][1].get()]
                    k += 1
                    lines.append("// expect: arg%d == %s:%s" % (idx, ty, hexs(got, 0)))
        name = os.path.basename(path).replace(".ptx", "").replace(".", "_")
        header = ["// PTX generated by NVRTC from tests/cuda/oracle/%s.cu (%s); the `// expect:` values are the" % (
                      name.split("_")[0], os.path.basename(path)),
                  "// outputs an %s gave for the same PTX and inputs (tests/filetests/ref/cuda_oracle.py)." % dev,
                  "// Do not edit by hand."]
        with open(os.path.join(a.out, "cuda_%s.ptx" % name), "w") as f:
            f.write("\n".join(header) + "\n" + text.rstrip() + "\n\n" + "\n".join(lines) + "\n")
        print("%s: %d launches on %s" % (path, sum(1 for l in lines if l.startswith("// run:")), dev))


if __name__ == "__main__":
    main()
