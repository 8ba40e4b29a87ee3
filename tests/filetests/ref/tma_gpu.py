#!/usr/bin/env python3
"""Tensor-memory-access copies (PTX ISA 8.x 9.7.9.25, cp.async.bulk.tensor) on a real GPU.

On a machine with a Hopper GPU, CuPy and cuda-python:
    python3 tests/filetests/ref/tma_gpu.py --gpu OUTDIR
writes OUTDIR/tma.ptx, a filetest whose `// expect:` values are the GPU's results, and prints
for each case whether the GPU agrees with the independent model of this file (`model_load`,
`model_store`). On the GPU each tensor map is NVIDIA's (cuTensorMapEncodeTiled); in the
filetest the same map is the argument `tmap:TYPE:DIMS:STRIDES:BOX[:OPTIONS]=buf:...`, which
ptxr encodes in its own format (docs/abi.md).
    python3 tests/filetests/ref/tma_gpu.py --check tests/filetests/mem/tma.ptx
compares the model with the stored GPU results (no GPU needed).

Load kernels: shared memory is first filled with 0xab bytes; thread 0 initializes an mbarrier,
announces the box's bytes (mbarrier.arrive.expect_tx) and issues the copy; every thread waits
for phase 0 (mbarrier.try_wait.parity) and the first OUT bytes of shared memory are copied
to `out`. Store kernels: shared memory is filled with a byte pattern (byte i = i * 7 + 3 mod
256), thread 0 stores the box to the tensor (cp.async.bulk.tensor ... .bulk_group, then
commit_group and wait_group 0) and the tensor's buffer is checked.
"""
import argparse
import os
import struct
import sys

ESIZE = {"u8": 1, "u16": 2, "u32": 4, "s32": 4, "u64": 8, "s64": 8, "f16": 2, "f32": 4, "f64": 8, "bf16": 2}
# CUtensorMapDataType
CU_DTYPE = {"u8": 0, "u16": 1, "u32": 2, "s32": 3, "u64": 4, "s64": 5, "f16": 6, "f32": 7, "f64": 8, "bf16": 9}
SWZ = {0: 0, 32: 1, 64: 2, 128: 3}
SMEM = 16384


class Case:
    def __init__(self, name, ty, dims, box, coords, swizzle=0, estrides=None, nanfill=False, store=False,
                 dst=0, strides=None, out=None, red=None):
        self.name, self.ty, self.dims, self.box, self.coords = name, ty, dims, box, coords
        self.swizzle, self.nanfill, self.store, self.dst = swizzle, nanfill, store or red is not None, dst
        self.red = red  # cp.reduce.async.bulk.tensor: the reduction (a store that combines)
        self.rank = len(dims)
        self.estrides = estrides or [1] * self.rank
        self.e = ESIZE[ty]
        if strides is None:  # packed rows, each padded to 16 bytes
            strides = []
            s = (dims[0] * self.e + 15) // 16 * 16
            for d in dims[1:]:
                strides.append(s)
                s *= d
        self.strides = strides
        # the innermost dimension takes every element (an H200 ignores its element stride)
        self.count = [box[0]] + [(b + es - 1) // es for b, es in zip(box[1:], self.estrides[1:])]
        self.out = out or self.box_bytes()

    def tensor_bytes(self):
        if self.rank == 1:
            return self.dims[0] * self.e
        return self.strides[-1] * self.dims[-1]

    def box_bytes(self):
        n = self.e
        for c in self.count:
            n *= c
        return n


def tensor_data(c):
    """The tensor's initial bytes: byte i = (i * 13 + 5) % 251 (never 0xab)."""
    return bytes((i * 13 + 5) % 251 for i in range(c.tensor_bytes()))


def smem_pattern(n):
    return bytes((i * 7 + 3) % 256 for i in range(n))


def swizzle(addr, w):
    if w == 0:
        return addr
    return addr ^ (((addr >> 7) & (w // 16 - 1)) << 4)


def box_elems(c):
    """(box element index in shared-memory order, global coordinates) of every box element."""
    total = 1
    for n in c.count:
        total *= n
    for idx in range(total):
        j, rest = [], idx
        for n in c.count:
            j.append(rest % n)
            rest //= n
        # (the innermost dimension takes consecutive elements: its element stride is ignored)
        yield idx, [c.coords[d] + j[d] * (c.estrides[d] if d else 1) for d in range(c.rank)], j


def smem_offset(c, j):
    # rows of the innermost dimension, padded to 16 bytes, or to the swizzle span (an H200
    # leaves the rest of such a row as it was)
    row = c.swizzle or (c.count[0] * c.e + 15) // 16 * 16
    off = j[0] * c.e
    mul = row
    for d in range(1, c.rank):
        off += j[d] * mul
        mul *= c.count[d]
    return off


def global_offset(c, g):
    off = g[0] * c.e
    for d in range(1, c.rank):
        off += g[d] * c.strides[d - 1]
    return off


# the NaN fill: bytes f7 7f repeated (what an H200 writes, for f32 too: 0x7ff77ff7)
NAN = {t: b"\xf7\x7f" * (ESIZE[t] // 2) for t in ("f16", "bf16", "f32", "f64")}


def model_load(c):
    data = tensor_data(c)
    sm = bytearray(b"\xab" * SMEM)
    for _, g, j in box_elems(c):
        inside = all(0 <= g[d] < c.dims[d] for d in range(c.rank))
        if inside:
            v = data[global_offset(c, g):global_offset(c, g) + c.e]
        else:
            v = NAN[c.ty] if c.nanfill else bytes(c.e)
        a = swizzle(c.dst + smem_offset(c, j), c.swizzle)
        sm[a:a + c.e] = v
    return bytes(sm[:c.out])


def round_bf16(x):
    """Round-to-nearest-even of an exact Fraction to bf16 bits (overflow to infinity)."""
    from fractions import Fraction
    if x == 0:
        return 0
    sign = 0x8000 if x < 0 else 0
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, -126)
    q = a / Fraction(2) ** (e - 7)  # 8 significant bits at scale 2^(e-7)
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n == 256:
        n, e = 128, e + 1
    if e > 127:
        return sign | 0x7F80
    if n < 128:  # subnormal
        return sign | n
    return sign | ((e + 127) << 7) | (n - 128)


def combine(op, ty, x, y):
    """`x op y` on the raw bits of one element (the model of cp.reduce.async.bulk)."""
    import numpy as np
    from fractions import Fraction
    bits = 8 * ESIZE[ty]
    mask = (1 << bits) - 1
    sx = x - (1 << bits) if ty[0] == "s" and x >> (bits - 1) else x
    sy = y - (1 << bits) if ty[0] == "s" and y >> (bits - 1) else y
    if ty in ("f32", "f16", "bf16"):
        if ty == "f32":
            fx, fy = (float(np.array([v], dtype=np.uint32).view(np.float32)[0]) for v in (x, y))
        elif ty == "f16":
            fx, fy = (float(np.array([v], dtype=np.uint16).view(np.float16)[0]) for v in (x, y))
        else:
            fx, fy = (float(np.array([v << 16], dtype=np.uint32).view(np.float32)[0]) for v in (x, y))
        nan = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF}[ty]
        if op == "add":
            import math
            if math.isnan(fx) or math.isnan(fy) or (math.isinf(fx) and math.isinf(fy) and fx != fy):
                return nan
            if ty == "f32":  # numpy's f32 addition is the IEEE one (rounded once)
                with np.errstate(all="ignore"):
                    r = np.float32(fx) + np.float32(fy)
                return int(np.array([r], dtype=np.float32).view(np.uint32)[0])
            if ty == "f16":  # exact in f64, then one rounding to f16
                with np.errstate(all="ignore"):
                    return int(np.array([fx + fy], dtype=np.float16).view(np.uint16)[0])
            if math.isinf(fx) or math.isinf(fy):
                return 0x7F80 if (fx if math.isinf(fx) else fy) > 0 else 0xFF80
            ex = Fraction(fx) + Fraction(fy)
            if ex == 0:
                return 0x8000 if (x & 0x8000) and (y & 0x8000) else 0
            return round_bf16(ex)
        import math
        if math.isnan(fy):
            return x
        if math.isnan(fx):
            return y
        key = lambda f, b: (f, 0 if b & (1 << (bits - 1)) else 1)
        takey = key(fy, y) < key(fx, x) if op == "min" else key(fy, y) > key(fx, x)
        return y if takey else x
    if op == "add":
        return (x + y) & mask
    if op == "min":
        return y if sy < sx else x
    if op == "max":
        return y if sy > sx else x
    if op == "inc":
        return 0 if x >= y else (x + 1) & mask
    if op == "dec":
        return y if x == 0 or x > y else x - 1
    if op == "and":
        return x & y
    if op == "or":
        return x | y
    return x ^ y


def model_store(c):
    data = bytearray(tensor_data(c))
    sm = smem_pattern(SMEM)
    for _, g, j in box_elems(c):
        if all(0 <= g[d] < c.dims[d] for d in range(c.rank)):
            a = swizzle(c.dst + smem_offset(c, j), c.swizzle)
            o = global_offset(c, g)
            if c.red:
                x = int.from_bytes(data[o:o + c.e], "little")
                y = int.from_bytes(sm[a:a + c.e], "little")
                data[o:o + c.e] = combine(c.red, c.ty, x, y).to_bytes(c.e, "little")
            else:
                data[o:o + c.e] = sm[a:a + c.e]
    return bytes(data)


def kernel_ptx(c):
    coords = ", ".join("%%c%d" % d for d in range(c.rank))
    s = [f".visible .entry {c.name}(.param .align 64 .b8 tmap[128], .param .u64 out)", "{",
         "\t.reg .b32 %t, %w, %sb, %mb, %a, %v, %x, %c<5>;", "\t.reg .b64 %tm, %o, %p64, %st;",
         "\t.reg .pred %p, %done;",
         "\tmov.u32 %t, %tid.x;", "\tld.param.u64 %o, [out];", "\tcvta.to.global.u64 %o, %o;",
         "\tmov.u32 %sb, smem;", f"\tadd.u32 %mb, %sb, {SMEM};",
         "\tmov.u64 %tm, tmap;", "\tcvta.param.u64 %tm, %tm;"]
    for d in range(c.rank):
        s.append(f"\tmov.u32 %c{d}, {c.coords[d]};")
    # fill shared memory: 0xab (loads) or the store pattern, one word per thread per step
    s += ["\tmov.u32 %w, %t;", "FILL:", f"\tsetp.ge.u32 %p, %w, {SMEM // 4};", "\t@%p bra FILLED;",
          "\tshl.b32 %a, %w, 2;"]
    if c.store:
        # byte i = (7 i + 3) mod 256: word w = bytes 4w .. 4w+3
        s += ["\tmov.u32 %v, 0;"]
        for b in range(4):
            s += [f"\tmad.lo.u32 %x, %a, 7, {7 * b + 3};", "\tand.b32 %x, %x, 255;", f"\tshl.b32 %x, %x, {8 * b};",
                  "\tor.b32 %v, %v, %x;"]
    else:
        s += ["\tmov.u32 %v, -1414812757;"]  # 0xabababab
    s += ["\tadd.u32 %a, %a, %sb;", "\tst.shared.u32 [%a], %v;", "\tadd.u32 %w, %w, 128;", "\tbra FILL;",
          "FILLED:", "\tbar.sync 0;", "\tsetp.ne.u32 %p, %t, 0;", f"\tadd.u32 %a, %sb, {c.dst};"]
    if c.store:
        op = (f"cp.reduce.async.bulk.tensor.{c.rank}d.global.shared::cta.{c.red}.tile.bulk_group" if c.red
              else f"cp.async.bulk.tensor.{c.rank}d.global.shared::cta.bulk_group")
        s += ["\tfence.proxy.async.shared::cta;", "\t@%p bra STORED;",
              f"\t{op} [%tm, {{{coords}}}], [%a];",
              "\tcp.async.bulk.commit_group;", "\tcp.async.bulk.wait_group 0;", "STORED:", "\tbar.sync 0;", "\tret;",
              "}"]
        return "\n".join(s)
    s += ["\t@%p bra ISSUED;", "\tmbarrier.init.shared::cta.b64 [%mb], 1;", "\tfence.mbarrier_init.release.cluster;",
          "\tfence.proxy.async.shared::cta;",
          f"\tmbarrier.arrive.expect_tx.shared::cta.b64 %st, [%mb], {c.box_bytes()};",
          f"\tcp.async.bulk.tensor.{c.rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%a], [%tm, {{{coords}}}], [%mb];",
          "ISSUED:", "\tbar.sync 0;", "WAIT:", "\tmbarrier.try_wait.parity.shared::cta.b64 %done, [%mb], 0;",
          "\t@!%done bra WAIT;",
          # copy the first OUT bytes of shared memory to out
          "\tmov.u32 %w, %t;", "COPY:", f"\tsetp.ge.u32 %p, %w, {c.out // 4};", "\t@%p bra END;",
          "\tshl.b32 %a, %w, 2;", "\tadd.u32 %a, %a, %sb;", "\tld.shared.u32 %v, [%a];",
          "\tmul.wide.u32 %p64, %w, 4;", "\tadd.s64 %p64, %p64, %o;", "\tst.global.u32 [%p64], %v;",
          "\tadd.u32 %w, %w, 128;", "\tbra COPY;", "END:", "\tret;", "}"]
    return "\n".join(s)


def header():
    return f".version 8.0\n.target sm_90\n.address_size 64\n\n.shared .align 1024 .b8 smem[{SMEM + 8}];\n"


def tmap_arg(c):
    opts = []
    if c.swizzle:
        opts.append(f"swizzle{c.swizzle}")
    if any(es != 1 for es in c.estrides):
        opts.append("estrides=" + "x".join(map(str, c.estrides)))
    if c.nanfill:
        opts.append("nanfill")
    spec = f"tmap:{c.ty}:{'x'.join(map(str, c.dims))}:{'x'.join(map(str, c.strides)) or '-'}:{'x'.join(map(str, c.box))}"
    if opts:
        spec += ":" + ",".join(opts)
    return spec + "=buf:hex:" + tensor_data(c).hex()


def error_cases():
    """What an H200 stops with an illegal instruction on: an innermost coordinate times the
    element size that is not a multiple of 16 bytes, a store at negative coordinates."""
    return [Case("bad_align_u8", "u8", [48, 7, 5], [32, 4, 3], [8, 5, 3]),
            Case("bad_align_f32", "f32", [16, 10, 6], [8, 4, 4], [1, 2, 1], estrides=[2, 1, 2]),
            Case("bad_align_u16", "u16", [16, 3, 4, 2, 3], [8, 2, 2, 2, 2], [4, 2, -1, 1, 2]),
            Case("bad_store_neg0", "f16", [64, 40], [32, 16], [-8, 8], store=True),
            Case("bad_store_neg1", "f16", [64, 40], [32, 16], [16, -8], store=True)]


def cases():
    # (one-dimensional maps: cuTensorMapEncodeTiled refused every one tried, CUDA_ERROR_INVALID_VALUE)
    cs = []
    cs.append(Case("load_2d_f16", "f16", [64, 40], [32, 16], [16, 8]))
    cs.append(Case("load_2d_oob", "f16", [64, 40], [32, 16], [48, 32]))
    cs.append(Case("load_2d_negative", "f16", [64, 40], [32, 16], [-8, -4]))
    cs.append(Case("load_2d_nan", "f32", [20, 12], [8, 8], [16, 8], nanfill=True))
    for w in (32, 64, 128):
        # inner box bytes equal to the swizzle span, then half of it
        cs.append(Case(f"load_swz{w}", "f16", [128, 40], [w // 2, 16], [8, 4], swizzle=w))
        if w > 32:
            cs.append(Case(f"load_swz{w}_half", "f16", [128, 40], [w // 4, 16], [0, 2], swizzle=w))
    cs.append(Case("load_swz128_oob", "f16", [100, 20], [64, 16], [64, 12], swizzle=128))
    cs.append(Case("load_swz128_dst", "u8", [256, 24], [128, 8], [32, 3], swizzle=128, dst=2048))
    cs.append(Case("load_2d_strided", "u32", [10, 6], [8, 4], [4, 3], strides=[96]))
    cs.append(Case("load_5d", "u16", [16, 3, 4, 2, 3], [8, 2, 2, 2, 2], [8, 2, -1, 1, 2]))
    cs.append(Case("load_3d_estride", "f32", [16, 10, 6], [8, 4, 4], [4, 2, 1], estrides=[2, 1, 2]))
    cs.append(Case("store_3d", "u8", [48, 7, 5], [32, 4, 3], [16, 5, 3], store=True, dst=1024))
    cs.append(Case("store_2d_oob", "f16", [64, 40], [32, 16], [48, 32], store=True))
    # cp.reduce.async.bulk.tensor: every reduction on its types, the element type from the map
    for op, ty in (("add", "u32"), ("add", "s32"), ("add", "u64"), ("min", "s32"), ("max", "u32"), ("min", "u64"),
                   ("inc", "u32"), ("dec", "u32"), ("and", "u32"), ("or", "u64"), ("xor", "s32"), ("add", "f32"),
                   ("add", "f16"), ("add", "bf16"), ("min", "f16"), ("max", "bf16")):
        cs.append(Case(f"reduce_{op}_{ty}", ty, [32 if ESIZE[ty] == 2 else 16, 12], [16 if ESIZE[ty] == 2 else 8, 8],
                       [16 if ESIZE[ty] == 2 else 8, 8], red=op))
    # three to five dimensions, element strides, partly outside
    cs.append(Case("load_3d_simple", "f16", [32, 4, 3], [16, 2, 2], [0, 0, 0]))
    cs.append(Case("load_3d_simple_u8", "u8", [48, 7, 5], [32, 4, 3], [0, 0, 0]))
    cs.append(Case("load_3d_oob", "f16", [32, 4, 3], [16, 2, 2], [24, 3, 2]))
    cs.append(Case("load_4d", "f32", [8, 3, 2, 2], [4, 2, 2, 1], [0, 0, 0, 0]))
    cs.append(Case("load_2d_estride", "f32", [16, 8], [8, 4], [0, 0], estrides=[2, 2]))
    cs.append(Case("load_2d_estride1", "f32", [16, 8], [8, 4], [0, 0], estrides=[1, 2]))
    cs.append(Case("store_2d", "f16", [64, 40], [32, 16], [16, 8], store=True))
    cs.append(Case("store_swz128", "f16", [128, 24], [64, 8], [32, 4], swizzle=128, store=True))
    return cs


def nv_tensor_map(c, addr):
    from cuda.bindings import driver as cu
    interleave = cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE
    sw = [cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE, cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
          cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B, cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B][SWZ[c.swizzle]]
    fill = (cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA if c.nanfill
            else cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    strides = [cu.cuuint64_t(s) for s in c.strides] if c.strides else None
    err, m = cu.cuTensorMapEncodeTiled(cu.CUtensorMapDataType(CU_DTYPE[c.ty]), c.rank, addr,
                                       [cu.cuuint64_t(d) for d in c.dims], strides,
                                       [cu.cuuint32_t(b) for b in c.box], [cu.cuuint32_t(e) for e in c.estrides],
                                       interleave, sw, cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE, fill)
    if int(err) != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled: {err}")
    return b"".join(int(x).to_bytes(8, "little") for x in m.opaque)


def gpu_one(name):
    import json
    import cupy as cp
    import numpy as np
    sys.path.insert(0, os.path.dirname(__file__))
    from ptxgen import load_ptx
    c = {c.name: c for c in cases() + error_cases()}[name]
    res = {"name": name}
    try:
        fn = load_ptx(cp, header() + "\n" + kernel_ptx(c) + "\n").get_function(c.name)
        t = cp.asarray(np.frombuffer(tensor_data(c), dtype=np.uint8).copy())
        out = cp.zeros(max(c.out, 4), dtype=np.uint8)
        tm = nv_tensor_map(c, int(t.data.ptr))
        arg = np.frombuffer(tm, dtype=np.dtype((np.void, 128)))[0]
        fn((1,), (128,), (arg, out))
        cp.cuda.runtime.deviceSynchronize()
        res["result"] = (cp.asnumpy(t) if c.store else cp.asnumpy(out)[:c.out]).tobytes().hex()
    except Exception as ex:  # noqa: BLE001
        res["error"] = str(ex).splitlines()[0] if str(ex) else repr(ex)
    print(json.dumps(res))


def write_filetest(results, path):
    cs = {c.name: c for c in cases()}
    body, agree, disagree = [], 0, 0
    for r in results:
        c = cs[r["name"]]
        if "error" in r:
            print(f"{c.name}: GPU error: {r['error']}")
            continue
        got = bytes.fromhex(r["result"])
        want = model_store(c) if c.store else model_load(c)
        if got != want:
            disagree += 1
            i = next(k for k in range(len(got)) if got[k] != want[k])
            print(f"{c.name}: model differs at byte {i} of {len(got)}: GPU {got[i]:02x} model {want[i]:02x}")
        else:
            agree += 1
        body.append(kernel_ptx(c))
        out_arg = f"buf:zero:{max(c.out, 4)}"
        body.append(f"// run: {c.name}<<<1, 128>>> {tmap_arg(c)} {out_arg}")
        body.append(f"// expect: arg{0 if c.store else 1} == hex:{got.hex()}")
        body.append("")
    hdr = ["// cp.async.bulk.tensor (PTX ISA 8.x 9.7.9.25.5) with mbarrier transaction counts: every `// expect:`",
           "// value is what an NVIDIA H200 gave for the same kernel and tensor map (NVIDIA's encoding there,",
           "// ptxr's `tmap:` argument here), not a value computed by ptxr.",
           "// Written by tests/filetests/ref/tma_gpu.py --gpu; do not edit by hand."]
    with open(path, "w") as f:
        f.write("\n".join(hdr) + "\n" + header() + "\n" + "\n".join(body) + "\n")
    print(f"model agrees with the GPU on {agree} cases, differs on {disagree}")


def gpu(outdir):
    import json
    import subprocess
    from concurrent.futures import ThreadPoolExecutor
    os.makedirs(outdir, exist_ok=True)

    def run(c):
        r = subprocess.run([sys.executable, __file__, "--gpu-one", c.name], capture_output=True, text=True, timeout=120)
        try:
            return json.loads(r.stdout.strip().splitlines()[-1])
        except Exception:  # noqa: BLE001
            return {"name": c.name, "error": "crashed: " + (r.stderr.strip().splitlines() or ["?"])[-1]}
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, cases()))
        errors = list(pool.map(run, error_cases()))
    for r in errors:
        print(f"{r['name']}: {'GPU error: ' + r['error'] if 'error' in r else 'the GPU ran it'}")
    with open(os.path.join(outdir, "tma_raw.json"), "w") as f:
        json.dump(results, f)
    write_filetest(results, os.path.join(outdir, "tma.ptx"))


def ptx_only(path):
    with open(path, "w") as f:
        f.write(header() + "\n" + "\n\n".join(kernel_ptx(c) for c in cases()) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu")
    ap.add_argument("--gpu-one")
    ap.add_argument("--ptx")
    ap.add_argument("--from-raw", nargs=2)
    a = ap.parse_args()
    if a.gpu_one:
        gpu_one(a.gpu_one)
    elif a.gpu:
        gpu(a.gpu)
    elif a.ptx:
        ptx_only(a.ptx)
    elif a.from_raw:
        import json
        write_filetest(json.load(open(a.from_raw[0])), a.from_raw[1])
