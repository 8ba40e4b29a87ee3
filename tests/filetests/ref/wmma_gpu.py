#!/usr/bin/env python3
"""wmma on a real GPU (PTX ISA 9.7.13): fragment layouts and run tests.

On a machine with an NVIDIA GPU and CuPy:
    python3 tests/filetests/ref/wmma_gpu.py OUTDIR
and then, anywhere:
    python3 tests/filetests/ref/wmma_gpu.py --tables OUTDIR/wmma_layouts.json src/codegen/wmma_layout.rs
1. Probes the fragment layout of every wmma.load form (the spec leaves it to the architecture):
   a matrix whose elements hold their row (then their column) index is loaded and each lane's
   fragment registers are stored; OUTDIR/wmma_layouts.json maps (matrix, layout, shape, type)
   to, for each lane and fragment element, the element's (row, col).
2. Writes OUTDIR/wmma.ptx, a filetest: load A, B, C, mma, store D for every shape, each layout
   pair and type combination, two warps per CTA each on its own tiles; and the raw fragment
   registers of some loads (the layout itself). The `// expect:` values are the GPU's results.
   Inputs are small integers, so every accumulation order gives the same exact result.
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
from ptxgen import load_ptx  # noqa: E402

SHAPES = {"m16n16k16": (16, 16, 16), "m8n32k16": (8, 32, 16), "m32n8k16": (32, 8, 16)}
# registers per fragment (9.7.13.3) and elements per register
NREG = {("a", "f16"): 8, ("b", "f16"): 8, ("c", "f16"): 4, ("c", "f32"): 8, ("c", "s32"): 8}
NREG_INT = {("a", "m16n16k16"): 2, ("b", "m16n16k16"): 2, ("a", "m8n32k16"): 1, ("b", "m8n32k16"): 4,
            ("a", "m32n8k16"): 4, ("b", "m32n8k16"): 1}
PER_REG = {"f16": 2, "s8": 4, "u8": 4, "f32": 1, "s32": 1}
ESIZE = {"f16": 2, "s8": 1, "u8": 1, "f32": 4, "s32": 4}


def nregs(mat, shape, ty):
    if shape in ("m8n8k32", "m8n8k128"):
        return 2 if mat == "c" else 1
    if ty in ("s8", "u8"):
        return NREG_INT[(mat, shape)]
    return NREG[(mat, ty)]


def dims(mat, shape):
    m, n, k = SHAPES[shape]
    return {"a": (m, k), "b": (k, n), "c": (m, n)}[mat]


def forms():
    for shape in SHAPES:
        for layout in ("row", "col"):
            for mat, ty in [("a", "f16"), ("b", "f16"), ("a", "s8"), ("b", "s8"), ("a", "u8"), ("b", "u8"),
                            ("c", "f16"), ("c", "f32"), ("c", "s32")]:
                yield mat, layout, shape, ty


def probe_ptx(mat, layout, shape, ty):
    n = nregs(mat, shape, ty)
    regs = ", ".join("%%r%d" % i for i in range(n))
    lines = [".visible .entry probe(.param .u64 pin, .param .u64 pout)", "{",
             "\t.reg .b32 %%r<%d>;" % n, "\t.reg .b32 %lane;", "\t.reg .b64 %p, %o, %off;",
             "\tld.param.u64 %p, [pin];", "\tld.param.u64 %o, [pout];", "\tcvta.to.global.u64 %p, %p;",
             "\tcvta.to.global.u64 %o, %o;",
             "\twmma.load.%s.sync.aligned.%s.%s.global.%s {%s}, [%%p];" % (mat, layout, shape, ty, regs),
             "\tmov.u32 %lane, %tid.x;", "\tmul.wide.u32 %%off, %%lane, %d;" % (4 * n), "\tadd.s64 %o, %o, %off;"]
    for i in range(n):
        lines.append("\tst.global.b32 [%%o+%d], %%r%d;" % (4 * i, i))
    lines += ["\tret;", "}"]
    return ".version 6.4\n.target sm_72\n.address_size 64\n\n" + "\n".join(lines) + "\n"


def probe(cp, np):
    tables = {}
    for mat, layout, shape, ty in forms():
        rows, cols = dims(mat, shape)
        n = nregs(mat, shape, ty)
        per = PER_REG[ty]
        mod = load_ptx(cp, probe_ptx(mat, layout, shape, ty))
        fn = mod.get_function("probe")
        got = []
        for which in (0, 1):  # element values: row index, then column index
            m = np.zeros((rows, cols), dtype=np.int64)
            for r in range(rows):
                for c in range(cols):
                    m[r, c] = r if which == 0 else c
            if layout == "col":
                m = m.T.copy()
            dt = {"f16": np.float16, "f32": np.float32, "s32": np.int32, "s8": np.int8, "u8": np.uint8}[ty]
            buf = cp.asarray(m.astype(dt).reshape(-1))
            out = cp.zeros(32 * n, dtype=np.uint32)
            fn((1,), (32,), (buf, out))
            words = out.get().reshape(32, n)
            vals = []
            for lane in range(32):
                lv = []
                for w in words[lane]:
                    for e in range(per):
                        if ty == "f16":
                            lv.append(int(np.array([(int(w) >> (16 * e)) & 0xFFFF], dtype=np.uint16).view(np.float16)[0]))
                        elif ty in ("s8", "u8"):
                            lv.append((int(w) >> (8 * e)) & 0xFF)
                        elif ty == "f32":
                            lv.append(int(np.array([w], dtype=np.uint32).view(np.float32)[0]))
                        else:
                            lv.append(int(w))
                vals.append(lv)
            got.append(vals)
        tables["%s.%s.%s.%s" % (mat, layout, shape, ty)] = [[[got[0][l][j], got[1][l][j]] for j in range(n * per)] for l in range(32)]
    return tables


SUB = {("m8n8k32", "s4"), ("m8n8k32", "u4"), ("m8n8k128", "b1")}
SUB_SHAPES = {"m8n8k32": (8, 8, 32), "m8n8k128": (8, 8, 128)}
EBITS = {"s4": 4, "u4": 4, "b1": 1}


def sub_dims(mat, shape):
    m, n, k = SUB_SHAPES[shape]
    return {"a": (m, k), "b": (k, n), "c": (m, n)}[mat]


def pack_sub(vals, rows, cols, row_major, eb):
    """Packs an element matrix (values < 2^eb) into bytes, element e of the leading dimension at
    bits [e*eb, (e+1)*eb) (little-endian within bytes)."""
    bits = 0
    order = [(r, c) for r in range(rows) for c in range(cols)] if row_major else [(r, c) for c in range(cols) for r in range(rows)]
    for e, (r, c) in enumerate(order):
        bits |= (vals[r][c] & ((1 << eb) - 1)) << (e * eb)
    return bits.to_bytes(rows * cols * eb // 8, "little")


def probe_sub(cp, np):
    """Layouts of the sub-byte and single-bit fragments (PTX ISA 9.7.13.3, sm_75): A is
    row-major and B column-major only. Element values carry the row and column index a few
    bits at a time (bit planes), decoded from each lane's raw fragment bits."""
    tables = {}
    for shape, ty in sorted(SUB):
        eb = EBITS[ty]
        for mat, layout in (("a", "row"), ("b", "col")):
            rows, cols = sub_dims(mat, shape)
            text = probe_ptx(mat, layout, shape, ty).replace(".target sm_72", ".target sm_75")
            fn = load_ptx(cp, text).get_function("probe")
            coord = [[[0, 0] for _ in range(32 // eb)] for _ in range(32)]
            for ci, limit in ((0, rows), (1, cols)):
                for shift in range(0, max(1, (limit - 1).bit_length()), eb):
                    vals = [[(((r, c)[ci]) >> shift) & ((1 << eb) - 1) for c in range(cols)] for r in range(rows)]
                    buf = cp.asarray(np.frombuffer(pack_sub(vals, rows, cols, layout == "row", eb), dtype=np.uint8).copy())
                    out = cp.zeros(32, dtype=np.uint32)
                    fn((1,), (32,), (buf, out))
                    words = out.get()
                    for lane in range(32):
                        for j in range(32 // eb):
                            coord[lane][j][ci] |= ((int(words[lane]) >> (j * eb)) & ((1 << eb) - 1)) << shift
            tables["%s.%s.%s.%s" % (mat, layout, shape, ty)] = coord
    return tables


def sub_kernel(shape, ty, sat):
    """wmma sub-byte/single-bit run kernel: two warps, each on its own A, B, C tiles."""
    m, n, k = SUB_SHAPES[shape]
    eb = EBITS[ty]
    name = "wmma_%s_%s%s" % (shape, ty, "_sat" if sat else "")
    L = [".visible .entry %s(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)" % name, "{",
         "\t.reg .b32 %a0, %b0, %c0, %c1, %d0, %d1, %w;", "\t.reg .b64 %pa, %pb, %pc, %pd, %off;",
         "\tmov.u32 %w, %tid.x;", "\tshr.u32 %w, %w, 5;"]
    for p_, size in (("pa", m * k * eb // 8), ("pb", k * n * eb // 8), ("pc", m * n * 4), ("pd", m * n * 4)):
        L += ["\tld.param.u64 %%%s, [%s];" % (p_, p_), "\tmul.wide.u32 %%off, %%w, %d;" % size, "\tadd.s64 %%%s, %%%s, %%off;" % (p_, p_)]
    L.append("\twmma.load.a.sync.aligned.row.%s.global.%s {%%a0}, [%%pa];" % (shape, ty))
    L.append("\twmma.load.b.sync.aligned.col.%s.global.%s {%%b0}, [%%pb];" % (shape, ty))
    L.append("\twmma.load.c.sync.aligned.row.%s.global.s32 {%%c0, %%c1}, [%%pc];" % shape)
    if ty == "b1":
        L.append("\twmma.mma.xor.popc.sync.aligned.row.col.%s.s32.b1.b1.s32 {%%d0, %%d1}, {%%a0}, {%%b0}, {%%c0, %%c1};" % shape)
    else:
        L.append("\twmma.mma.sync.aligned.row.col.%s.s32.%s.%s.s32%s {%%d0, %%d1}, {%%a0}, {%%b0}, {%%c0, %%c1};" % (
            shape, ty, ty, ".satfinite" if sat else ""))
    L.append("\twmma.store.d.sync.aligned.col.%s.global.s32 [%%pd], {%%d0, %%d1};" % shape)
    L += ["\tret;", "}"]
    return name, "\n".join(L)


def hexs(vals, size):
    return ",".join("0x%0*x" % (size * 2, v & ((1 << (8 * size)) - 1)) for v in vals)


def run_kernel(shape, al, bl, dt, ct, ab, sat):
    """One filetest kernel: warp w of 2 works on tiles A + w*|A|, B + w*|B|, C + w*|C| → D."""
    m, n, k = SHAPES[shape]
    na, nb = nregs("a", shape, ab), nregs("b", shape, ab)
    nc, nd = nregs("c", shape, ct), nregs("c", shape, dt)
    name = "wmma_%s_%s_%s_%s_%s_%s%s" % (shape, al, bl, dt, ct, ab, "_sat" if sat else "")
    L = [".visible .entry %s(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)" % name, "{",
         "\t.reg .b32 %%a<%d>;" % na, "\t.reg .b32 %%b<%d>;" % nb, "\t.reg .b32 %%c<%d>;" % nc, "\t.reg .b32 %%d<%d>;" % nd,
         "\t.reg .b32 %w;", "\t.reg .b64 %pa, %pb, %pc, %pd, %off;",
         "\tmov.u32 %w, %tid.x;", "\tshr.u32 %w, %w, 5;"]
    for p, mat, ty in [("pa", "a", ab), ("pb", "b", ab), ("pc", "c", ct), ("pd", "c", dt)]:
        r, c = dims(mat, shape)
        L.append("\tld.param.u64 %%%s, [%s];" % (p, p))
        L.append("\tmul.wide.u32 %%off, %%w, %d;" % (r * c * ESIZE[ty]))
        L.append("\tadd.s64 %%%s, %%%s, %%off;" % (p, p))
    rl = lambda x, n: ", ".join("%%%s%d" % (x, i) for i in range(n))
    # A and C by generic addressing with the default stride; B through .global with an explicit one.
    L.append("\twmma.load.a.sync.aligned.%s.%s.%s {%s}, [%%pa];" % (al, shape, ab, rl("a", na)))
    kb, nbd = dims("b", shape)
    L.append("\tcvta.to.global.u64 %pb, %pb;")
    L.append("\twmma.load.b.sync.aligned.%s.%s.global.%s {%s}, [%%pb], %d;" % (bl, shape, ab, rl("b", nb), nbd if bl == "row" else kb))
    cl = "row" if (al, bl) != ("col", "col") else "col"
    L.append("\twmma.load.c.sync.aligned.%s.%s.%s {%s}, [%%pc];" % (cl, shape, ct, rl("c", nc)))
    if ab in ("s8", "u8"):
        L.append("\twmma.mma.sync.aligned.%s.%s.%s.s32.%s.%s.s32%s {%s}, {%s}, {%s}, {%s};" % (
            al, bl, shape, ab, ab, ".satfinite" if sat else "", rl("d", nd), rl("a", na), rl("b", nb), rl("c", nc)))
    else:
        L.append("\twmma.mma.sync.aligned.%s.%s.%s.%s.%s {%s}, {%s}, {%s}, {%s};" % (
            al, bl, shape, dt, ct, rl("d", nd), rl("a", na), rl("b", nb), rl("c", nc)))
    if (shape, al, bl, dt, ct) == ("m16n16k16", "row", "col", "f32", "f32"):
        # a second mma accumulating onto the first one's D: D = A*B + (A*B + C)
        L.append("\twmma.mma.sync.aligned.%s.%s.%s.%s.%s {%s}, {%s}, {%s}, {%s};" % (
            al, bl, shape, dt, dt, rl("d", nd), rl("a", na), rl("b", nb), rl("d", nd)))
    dl = "col" if al == "row" else "row"
    L.append("\twmma.store.d.sync.aligned.%s.%s.%s [%%pd], {%s};" % (dl, shape, dt, rl("d", nd)))
    L += ["\tret;", "}"]
    return name, "\n".join(L)


def raw_kernel(name, mnemonic, na, nb, nc, nd):
    """A one-warp kernel on raw fragments: lane l loads its registers from A + 4*na*l, B + 4*nb*l
    and C + 4*nc*l, runs `mnemonic` {d}, {a}, {b}, {c} and stores D's registers at D + 4*nd*l."""
    L = [".visible .entry %s(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)" % name, "{",
         "\t.reg .b32 %%a<%d>;" % na, "\t.reg .b32 %%b<%d>;" % nb, "\t.reg .b32 %%c<%d>;" % nc, "\t.reg .b32 %%d<%d>;" % nd,
         "\t.reg .b32 %l;", "\t.reg .b64 %p, %off;", "\tmov.u32 %l, %laneid;"]
    for p_, x, n in [("pa", "a", na), ("pb", "b", nb), ("pc", "c", nc)]:
        L += ["\tld.param.u64 %%p, [%s];" % p_, "\tmul.wide.u32 %%off, %%l, %d;" % (4 * n), "\tadd.s64 %p, %p, %off;"]
        L += ["\tld.global.b32 %%%s%d, [%%p+%d];" % (x, k, 4 * k) for k in range(n)]
    rl = lambda x, n: ", ".join("%%%s%d" % (x, i) for i in range(n))
    L.append("\t%s {%s}, {%s}, {%s}, {%s};" % (mnemonic, rl("d", nd), rl("a", na), rl("b", nb), rl("c", nc)))
    L += ["\tld.param.u64 %p, [pd];", "\tmul.wide.u32 %%off, %%l, %d;" % (4 * nd), "\tadd.s64 %p, %p, %off;"]
    L += ["\tst.global.b32 [%%p+%d], %%d%d;" % (4 * k, k) for k in range(nd)]
    L += ["\tret;", "}"]
    return "\n".join(L)


def mma884_kernel(al, bl, dt, ct):
    """mma.m8n8k4 (9.7.13.9) on raw fragments; with the GPU's results as expectations this checks
    the fragment layouts of 9.7.13.5 as well as the arithmetic."""
    na, nb = 2, 2
    nc, nd = (8 if ct == "f32" else 4), (8 if dt == "f32" else 4)
    name = "mma_m8n8k4_%s_%s_%s_%s" % (al, bl, dt, ct)
    return name, raw_kernel(name, "mma.sync.aligned.m8n8k4.%s.%s.%s.f16.f16.%s" % (al, bl, dt, ct), na, nb, nc, nd), (na, nb, nc, nd)


MMA80 = [  # (shape, dtype, atype, btype, ctype, satfinite, regs of A, B, C, D)
    ("m16n8k16", "f32", "f16", "f16", "f32", False, 4, 2, 4, 4),
    ("m16n8k16", "f16", "f16", "f16", "f16", False, 4, 2, 2, 2),
    ("m16n8k16", "f32", "bf16", "bf16", "f32", False, 4, 2, 4, 4),
    ("m16n8k8", "f32", "f16", "f16", "f32", False, 2, 1, 4, 4),
    ("m16n8k8", "f32", "bf16", "bf16", "f32", False, 2, 1, 4, 4),
    ("m16n8k16", "s32", "s8", "s8", "s32", False, 2, 1, 4, 4),
    ("m16n8k16", "s32", "u8", "s8", "s32", True, 2, 1, 4, 4),
    ("m16n8k32", "s32", "s8", "u8", "s32", True, 4, 2, 4, 4),
    ("m16n8k32", "s32", "u8", "u8", "s32", False, 4, 2, 4, 4),
    ("m8n8k16", "s32", "s8", "s8", "s32", False, 1, 1, 2, 2),
]


def mma80_kernel(shape, dt, at, bt, ct, sat, na, nb, nc, nd):
    """mma.sync of PTX ISA 7.0 (sm_80) on raw fragments, like mma884_kernel."""
    name = "mma_%s_%s_%s_%s_%s%s" % (shape, dt, at, bt, ct, "_sat" if sat else "")
    return name, raw_kernel(name, "mma.sync.aligned.%s.row.col%s.%s.%s.%s.%s" % (shape, ".satfinite" if sat else "", dt, at, bt, ct),
                            na, nb, nc, nd)


def run_raw(cp, np, target, name, body, A, B, C, nd, text):
    """Runs a raw-fragment kernel (one warp; A, B, C as u32 words) and appends it with its run
    line and the GPU's D as the expectation to `text`."""
    D = cp.zeros(32 * nd, dtype=np.uint32)
    load_ptx(cp, "%s\n.address_size 64\n\n" % target + body + "\n").get_function(name)(
        (1,), (32,), (cp.asarray(A), cp.asarray(B), cp.asarray(C), D))
    cp.cuda.Device().synchronize()
    text.append(body)
    text.append("// run: %s<<<1, 32>>> buf:u32:%s buf:u32:%s buf:u32:%s buf:zero:%d" % (
        name, hexs([int(v) for v in A], 4), hexs([int(v) for v in B], 4), hexs([int(v) for v in C], 4), 4 * 32 * nd))
    text.append("// expect: arg3 == u32:%s" % hexs([int(v) for v in D.get()], 4))
    text.append("")


def mma80_file(out_dir, dev, rng, cp, np):
    """tests/filetests/warp/mma_sm80.ptx: the PTX 7.0 mma.sync shapes on raw fragments."""
    text = ["// PTX ISA 7.0 mma.sync (sm_80): m16n8k8/m16n8k16 with f16 and bf16, m16n8k16/m16n8k32/",
            "// m8n8k16 with s8/u8 (mixed signs, .satfinite), on raw fragments, so the fragment layouts",
            "// are checked too. Every `// expect:` value is the result an %s gave (CuPy)." % dev,
            "// Written by tests/filetests/ref/wmma_gpu.py; do not edit by hand.",
            ".version 7.0", ".target sm_80", ".address_size 64", ""]
    for shape, dt, at, bt, ct, sat, na, nb, nc, nd in MMA80:
        name, body = mma80_kernel(shape, dt, at, bt, ct, sat, na, nb, nc, nd)

        def words(ty, nregs):
            if ty == "f16":
                hs = [int(np.array([rng.randint(-4, 4)], dtype=np.float16).view(np.uint16)[0]) for _ in range(2 * nregs)]
                return [hs[2 * i] | hs[2 * i + 1] << 16 for i in range(nregs)]
            if ty == "bf16":
                hs = [int(np.array([rng.randint(-4, 4)], dtype=np.float32).view(np.uint32)[0]) >> 16 for _ in range(2 * nregs)]
                return [hs[2 * i] | hs[2 * i + 1] << 16 for i in range(nregs)]
            if ty == "f32":
                return [int(np.array([rng.randint(-64, 64)], dtype=np.float32).view(np.uint32)[0]) for _ in range(nregs)]
            if ty == "s32":
                return [(rng.choice([2**31 - 1 - rng.randrange(64), -2**31 + rng.randrange(64)]) if sat and rng.random() < 0.5
                         else rng.randrange(-100000, 100000)) & 0xFFFFFFFF for _ in range(nregs)]
            return [rng.getrandbits(32) for _ in range(nregs)]
        A = np.array(words(at, 32 * na), dtype=np.uint32)
        B = np.array(words(bt, 32 * nb), dtype=np.uint32)
        C = np.array(words(ct, 32 * nc), dtype=np.uint32)
        run_raw(cp, np, ".version 7.0\n.target sm_80", name, body, A, B, C, nd, text)
    with open(os.path.join(out_dir, "mma_sm80.ptx"), "w") as f:
        f.write("\n".join(text))


FP8_CODES = {  # the values -3..3 (and -0) as codes of each 8-bit float
    "e4m3": [0x00, 0x38, 0x40, 0x44, 0xB8, 0xC0, 0xC4, 0x80],
    "e5m2": [0x00, 0x3C, 0x40, 0x42, 0xBC, 0xC0, 0xC2, 0x80],
}


def mma_fp8_file(out_dir, dev, cp, np):
    """tests/filetests/warp/mma_fp8.ptx: mma.sync.m16n8k32 with 8-bit float multiplicands (PTX
    8.4, sm_89) in all four type pairs, f32 accumulators, on raw fragments; A and B hold small
    integers (any accumulation order is exact), plus one kernel with NaN codes, infinities and
    large values among them (e4m3 S.1111.111 is NaN; e5m2 has infinities)."""
    rng = random.Random(89)
    text = ["// PTX 8.4 mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (sm_89) on raw",
            "// fragments (the s8 layouts of m16n8k32). Every `// expect:` value is the result an %s gave" % dev,
            "// (CuPy). Written by tests/filetests/ref/wmma_gpu.py --fp8; do not edit by hand.",
            ".version 8.4", ".target sm_89", ".address_size 64", ""]
    for at in ("e4m3", "e5m2"):
        for bt in ("e4m3", "e5m2"):
            for special in (False, True):
                if special and at != bt:
                    continue
                name, body = mma80_kernel("m16n8k32", "f32", at, bt, "f32", False, 4, 2, 4, 4)
                if special:
                    name2 = name + "_specials"
                    body = body.replace(name, name2)
                    name = name2

                def words(ty, nregs):
                    out = []
                    for _ in range(nregs):
                        w = 0
                        for k in range(4):
                            if special and rng.random() < 0.08:
                                c = rng.choice([0x7F, 0xFF, 0x7E, 0x7C, 0xFC, 0x7D] if ty == "e5m2" else [0x7F, 0xFF, 0x7E, 0x77])
                            else:
                                c = rng.choice(FP8_CODES[ty])
                            w |= c << (8 * k)
                        out.append(w)
                    return out
                A = np.array(words(at, 32 * 4), dtype=np.uint32)
                B = np.array(words(bt, 32 * 2), dtype=np.uint32)
                C = np.array([int(np.array([rng.randint(-64, 64)], dtype=np.float32).view(np.uint32)[0]) for _ in range(32 * 4)], dtype=np.uint32)
                run_raw(cp, np, ".version 8.4\n.target sm_89", name, body, A, B, C, 4, text)
    with open(os.path.join(out_dir, "mma_fp8.ptx"), "w") as f:
        f.write("\n".join(text))


SPECIALS_HEADER = ["// mma.sync.m16n8k16 with NaN, infinities and values that overflow f16 (60000) among small",
                   "// integers, f32 and f16 accumulators, on raw fragments. Every `// expect:` value is the",
                   "// result an NVIDIA H100 gave (CuPy). Written by tests/filetests/ref/wmma_gpu.py; do not edit."]


def mma_specials_file(out_dir, cp, np):
    """tests/filetests/warp/mma_specials.ptx: special values through the tensor-core path."""
    rng = random.Random(3)
    text = SPECIALS_HEADER + [".version 7.0", ".target sm_80", ".address_size 64", ""]

    def halfs(n, special):
        vals = []
        for _ in range(n):
            v = rng.choice([np.inf, -np.inf, np.nan, 60000.0, -60000.0]) if rng.random() < special else float(rng.randint(-4, 4))
            vals.append(int(np.array([v], dtype=np.float16).view(np.uint16)[0]))
        return [vals[2 * i] | vals[2 * i + 1] << 16 for i in range(n // 2)]
    for row in [("m16n8k16", "f32", "f16", "f16", "f32", False, 4, 2, 4, 4), ("m16n8k16", "f16", "f16", "f16", "f16", False, 4, 2, 2, 2)]:
        name, body = mma80_kernel(*row)
        na, nb, nc, nd = row[6:]
        A = np.array(halfs(64 * na, 0.05), dtype=np.uint32)
        B = np.array(halfs(64 * nb, 0.05), dtype=np.uint32)
        if row[4] == "f16":
            C = np.array(halfs(64 * nc, 0.1), dtype=np.uint32)
        else:
            C = np.array([int(np.array([rng.randint(-9, 9)], dtype=np.float32).view(np.uint32)[0]) for _ in range(32 * nc)], dtype=np.uint32)
        run_raw(cp, np, ".version 7.0\n.target sm_80", name, body, A, B, C, nd, text)
    with open(os.path.join(out_dir, "mma_specials.ptx"), "w") as f:
        f.write("\n".join(text))


def main():
    import cupy as cp
    import numpy as np
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    tables = probe(cp, np)
    tables.update(probe_sub(cp, np))
    for shape in SUB_SHAPES:  # the s32 accumulators of the sub-byte shapes
        for layout in ("row", "col"):
            rows, cols = sub_dims("c", shape)
            fn = load_ptx(cp, probe_ptx("c", layout, shape, "s32").replace(".target sm_72", ".target sm_75")).get_function("probe")
            got = []
            for which in (0, 1):
                mm = np.array([[(r if which == 0 else c) for c in range(cols)] for r in range(rows)], dtype=np.int32)
                buf = cp.asarray((mm if layout == "row" else mm.T.copy()).reshape(-1))
                outc = cp.zeros(64, dtype=np.uint32)
                fn((1,), (32,), (buf, outc))
                got.append(outc.get().reshape(32, 2))
            tables["c.%s.%s.s32" % (layout, shape)] = [[[int(got[0][l][j]), int(got[1][l][j])] for j in range(2)] for l in range(32)]
    with open(os.path.join(out, "wmma_layouts.json"), "w") as f:
        json.dump(tables, f)
    rng = random.Random(7)
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    text = ["// PTX ISA 9.7.13 wmma.load / wmma.mma / wmma.store: every shape, every A/B layout pair,",
            "// f16 with f16 and f32 accumulators, s8/u8 with s32 (and .satfinite), two warps per CTA on",
            "// their own tiles; B through .global with an explicit stride, D stored in the other layout;",
            "// mma.m8n8k4 (9.7.13.9) with raw fragments, which checks the layouts of 9.7.13.5.",
            "// Every `// expect:` value is the result an %s gave for the same kernel (CuPy," % dev,
            "// driver PTX JIT); small integer inputs make every accumulation order exact.",
            "// Written by tests/filetests/ref/wmma_gpu.py; do not edit by hand.",
            ".version 6.4", ".target sm_75", ".address_size 64", ""]
    # Every shape with every layout pair (f32 accumulators), the other accumulator pairs and
    # the integer types once per shape (the fragment code does not depend on the layout pair).
    combos = []
    for si, shape in enumerate(SHAPES):
        lay = [("row", "col"), ("col", "row"), ("row", "row")][si]
        for al in ("row", "col"):
            for bl in ("row", "col"):
                combos.append((shape, al, bl, "f32", "f32", "f16", False))
        for dt, ct in [("f16", "f16"), ("f32", "f16"), ("f16", "f32")]:
            combos.append((shape, lay[0], lay[1], dt, ct, "f16", False))
        for ab in ("s8", "u8"):
            combos.append((shape, lay[0], lay[1], "s32", "s32", ab, ab == "s8"))
    for shape, al, bl, dt, ct, ab, sat in combos:
        name, body = run_kernel(shape, al, bl, dt, ct, ab, sat)
        m, n, k = SHAPES[shape]
        npt = {"f16": np.float16, "f32": np.float32, "s32": np.int32, "s8": np.int8, "u8": np.uint8}
        if ab == "f16":
            A = np.array([rng.randint(-4, 4) for _ in range(2 * m * k)], dtype=np.float16)
            B = np.array([rng.randint(-4, 4) for _ in range(2 * k * n)], dtype=np.float16)
            C = np.array([rng.randint(-64, 64) for _ in range(2 * m * n)], dtype=npt[ct])
        else:
            lo, hi = (-128, 127) if ab == "s8" else (0, 255)
            A = np.array([rng.randint(lo, hi) for _ in range(2 * m * k)], dtype=npt[ab])
            B = np.array([rng.randint(lo, hi) for _ in range(2 * k * n)], dtype=npt[ab])
            big = [2**31 - 1 - rng.randint(0, 2**20), -2**31 + rng.randint(0, 2**20)]
            C = np.array([rng.choice(big) if sat and rng.random() < 0.5 else rng.randint(-2**20, 2**20)
                          for _ in range(2 * m * n)], dtype=np.int32)
        D = np.zeros(2 * m * n, dtype=npt[dt])
        mod = load_ptx(cp, ".version 6.4\n.target sm_72\n.address_size 64\n\n" + body + "\n")
        fn = mod.get_function(name)
        dA, dB, dC, dD = (cp.asarray(x) for x in (A, B, C, D))
        fn((1,), (64,), (dA, dB, dC, dD))
        cp.cuda.Device().synchronize()
        res = dD.get()
        bits = lambda arr: [int(v) for v in arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[arr.itemsize])]
        ty = lambda arr: {1: "u8", 2: "u16", 4: "u32"}[arr.itemsize]
        text.append(body)
        text.append("// run: %s<<<1, 64>>> buf:%s:%s buf:%s:%s buf:%s:%s buf:zero:%d" % (
            name, ty(A), hexs(bits(A), A.itemsize), ty(B), hexs(bits(B), B.itemsize), ty(C), hexs(bits(C), C.itemsize), D.nbytes))
        text.append("// expect: arg3 == %s:%s" % (ty(res), hexs(bits(res), res.itemsize)))
        text.append("")
    for al in ("row", "col"):
        for bl in ("row", "col"):
            for dt, ct in [("f32", "f32"), ("f16", "f16"), ("f32", "f16")]:  # (f16 D with f32 C is not a form)
                if (al, bl) != ("row", "col") and (dt, ct) != ("f32", "f32"):
                    continue
                name, body, (na, nb, nc, nd) = mma884_kernel(al, bl, dt, ct)
                half = lambda n: [int(np.array([rng.randint(-4, 4)], dtype=np.float16).view(np.uint16)[0]) for _ in range(n)]
                pack = lambda hs: [hs[2 * i] | hs[2 * i + 1] << 16 for i in range(len(hs) // 2)]
                A = np.array(pack(half(64 * na)), dtype=np.uint32)
                B = np.array(pack(half(64 * nb)), dtype=np.uint32)
                if ct == "f32":
                    C = np.array([rng.randint(-64, 64) for _ in range(32 * nc)], dtype=np.float32).view(np.uint32)
                else:
                    C = np.array(pack(half(64 * nc)), dtype=np.uint32)
                run_raw(cp, np, ".version 6.4\n.target sm_70", name, body, A, B, C, nd, text)
    for shape, ty, sat in [("m8n8k32", "s4", False), ("m8n8k32", "u4", False), ("m8n8k32", "s4", True), ("m8n8k128", "b1", False)]:
        name, body = sub_kernel(shape, ty, sat)
        m, n, k = SUB_SHAPES[shape]
        eb = EBITS[ty]
        A = bytes(rng.getrandbits(8) for _ in range(2 * m * k * eb // 8))
        B = bytes(rng.getrandbits(8) for _ in range(2 * k * n * eb // 8))
        big = [2**31 - 1 - rng.randrange(0, 64), -2**31 + rng.randrange(0, 64)]
        C = np.array([rng.choice(big) if sat and rng.random() < 0.5 else rng.randrange(-1000, 1000) for _ in range(2 * m * n)], dtype=np.int32)
        D = cp.zeros(2 * m * n, dtype=np.uint32)
        load_ptx(cp, ".version 6.4\n.target sm_75\n.address_size 64\n\n" + body + "\n").get_function(name)(
            (1,), (64,), (cp.asarray(np.frombuffer(A, dtype=np.uint8).copy()), cp.asarray(np.frombuffer(B, dtype=np.uint8).copy()), cp.asarray(C), D))
        cp.cuda.Device().synchronize()
        text.append(body.replace("\n{", "\n{", 1))
        text.append("// run: %s<<<1, 64>>> buf:hex:%s buf:hex:%s buf:u32:%s buf:zero:%d" % (
            name, A.hex(), B.hex(), hexs([int(v) for v in C.view(np.uint32)], 4), 4 * 2 * m * n))
        text.append("// expect: arg3 == u32:%s" % hexs([int(v) for v in D.get()], 4))
        text.append("")
    # The fragment layout itself: raw registers of a load, for one form of each fragment kind
    # (element (r, c) holds r * cols + c, or its low byte for s8/u8).
    for mat, layout, shape, ty in [("a", "row", "m16n16k16", "f16"), ("b", "col", "m32n8k16", "f16"),
                                   ("c", "row", "m16n16k16", "f32"), ("c", "col", "m8n32k16", "f16"),
                                   ("a", "row", "m32n8k16", "s8"), ("c", "row", "m16n16k16", "s32")]:
        rows, cols = dims(mat, shape)
        n = nregs(mat, shape, ty)
        name = "layout_%s_%s_%s_%s" % (mat, layout, shape, ty)
        body = probe_ptx(mat, layout, shape, ty).split("\n\n", 1)[1].replace("entry probe", "entry " + name)
        vals = [[r * cols + c for c in range(cols)] for r in range(rows)]
        flat = [vals[r][c] for r in range(rows) for c in range(cols)] if layout == "row" else \
               [vals[r][c] for c in range(cols) for r in range(rows)]
        npt = {"f16": np.float16, "f32": np.float32, "s32": np.int32, "s8": np.uint8}
        src = np.array([v & 0xFF if ty == "s8" else v for v in flat], dtype=npt[ty])
        outb = cp.zeros(32 * n, dtype=np.uint32)
        load_ptx(cp, ".version 6.4\n.target sm_72\n.address_size 64\n\n" + body).get_function(name)((1,), (32,), (cp.asarray(src), outb))
        cp.cuda.Device().synchronize()
        bits = [int(v) for v in src.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[src.itemsize])]
        text.append(body.rstrip())
        text.append("// run: %s<<<1, 32>>> buf:%s:%s buf:zero:%d" % (name, {1: "u8", 2: "u16", 4: "u32"}[src.itemsize],
                                                                    hexs(bits, src.itemsize), 4 * 32 * n))
        text.append("// expect: arg1 == u32:%s" % hexs([int(v) for v in outb.get()], 4))
        text.append("")
    mma80_file(out, dev, random.Random(80), cp, np)
    mma_specials_file(out, cp, np)
    with open(os.path.join(out, "wmma.ptx"), "w") as f:
        f.write("\n".join(text))
    print("%d layouts probed, %d run kernels on %s" % (len(tables), len(combos), dev))


if __name__ == "__main__" and sys.argv[1:2] == ["--fp8"]:
    import cupy as _cp
    import numpy as _np
    mma_fp8_file(sys.argv[2], _cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), _cp, _np)
    sys.exit(0)
if __name__ == "__main__" and sys.argv[1:2] != ["--tables"]:
    main()


def write_tables(json_path, rs_path):
    """src/codegen/wmma_layout.rs from a measured wmma_layouts.json: per (matrix, shape, type), the
    (row, col) of each lane's fragment elements as hex bytes (lane-major). The H100's layouts do
    not depend on the memory layout (.row/.col), which the tables assume (checked here)."""
    t = json.load(open(json_path))
    out = ["//! Fragment layouts of wmma (PTX ISA 9.7.13.3: \"unspecified and target architecture",
           "//! dependent\"), as measured on an NVIDIA H100 by tests/filetests/ref/wmma_gpu.py",
           "//! (tests/filetests/ref/gpu/wmma_layouts_h100.json). For each matrix, shape and element type:",
           "//! lane-major (row, col) byte pairs of every fragment element. Generated; do not edit.",
           "", "pub const TABLES: &[(&str, &str)] = &["]
    for key in sorted(t):
        mat, layout, shape, ty = key.split(".")
        other = "%s.%s.%s.%s" % (mat, "col" if layout == "row" else "row", shape, ty)
        if other in t:
            if layout != "row":
                continue
            assert t[key] == t[other], key
        # (sub-byte A exists only row-major, B only column-major)
        data = "".join("%02x%02x" % (r, c) for lane in t[key] for r, c in lane)
        out.append("    (\"%s.%s.%s\", \"%s\")," % (mat, shape, ty, data))
    out.append("];")
    with open(rs_path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--tables":
    write_tables(sys.argv[2], sys.argv[3])
