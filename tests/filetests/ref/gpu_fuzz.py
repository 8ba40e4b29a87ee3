#!/usr/bin/env python3
"""Differential tests against a real GPU: random and special inputs for every exactly-specified
instruction form (no `.approx` forms: those are checked against error bounds in float/approx.ptx).

On a machine with an NVIDIA GPU and CuPy:
    python3 tests/filetests/ref/gpu_fuzz.py --rows 128 --seed 1 --out tests/filetests/gpu
runs each form on the GPU and writes filetests whose `// expect:` lines are the GPU's results.
Those files are then ordinary filetests: ptxr must reproduce the GPU bit for bit.
`--rows 1024 --out /tmp/x` makes a larger set for bug hunting (FILETESTS_DIR=/tmp/x cargo test
--release --test filetests runs it). Forms that the GPU's PTX JIT rejects are listed and skipped.
"""
import argparse
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
from ptxgen import Kernel, SIZE, load_ptx  # noqa: E402

INT = ["u16", "s16", "u32", "s32", "u64", "s64"]
MODES = ["rn", "rz", "rm", "rp"]


def f32b(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64b(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


class Inputs:
    """Input generator: special values of each type mixed with random bits."""

    def __init__(self, rng):
        self.rng = rng

    def int_special(self, bits):
        m = (1 << bits) - 1
        h = 1 << (bits - 1)
        return [0, 1, 2, 3, m, m - 1, h, h - 1, h + 1, 0x55 & m, (0xAAAAAAAAAAAAAAAA & m), 7, 31, 32, 33, 63, 64, 65,
                bits - 1, bits, bits + 1, 0xFF, 0x100, 0xFFFF & m, 0x10000 & m, 0x7FFF, 0x8000 & m]

    def value(self, ty):
        r = self.rng
        if ty in ("f32", "f64", "f16", "f16x2"):
            return self.float_value(ty)
        bits = SIZE[ty] * 8
        k = r.random()
        if k < 0.35:
            return r.choice(self.int_special(bits)) & ((1 << bits) - 1)
        if k < 0.5:  # small magnitudes (shift amounts, positions, lengths)
            v = r.randrange(-70, 70)
            return v & ((1 << bits) - 1)
        return r.getrandbits(bits)

    def float_value(self, ty):
        r = self.rng
        if ty == "f16x2":
            return self.float_value("f16") | (self.float_value("f16") << 16)
        e_bits, m_bits = {"f16": (5, 10), "f32": (8, 23), "f64": (11, 52)}[ty]
        bias = (1 << (e_bits - 1)) - 1
        emax = (1 << e_bits) - 1
        sign = r.getrandbits(1) << (e_bits + m_bits)
        k = r.random()
        if k < 0.08:
            e, m = 0, 0                                   # zero
        elif k < 0.14:
            e, m = emax, 0                                # infinity
        elif k < 0.20:
            e, m = emax, r.getrandbits(m_bits) | 1        # NaN (quiet or signalling)
        elif k < 0.32:
            e, m = 0, r.getrandbits(m_bits) | 1           # subnormal
        elif k < 0.38:
            e, m = r.choice([1, 2, emax - 1, emax - 2]), r.getrandbits(m_bits)  # near the range ends
        elif k < 0.50:
            e, m = bias + r.randrange(-3, 4), r.choice([0, 1, (1 << m_bits) - 1, 1 << (m_bits - 1), r.getrandbits(m_bits)])
        elif k < 0.60:
            e, m = bias + r.randrange(0, min(m_bits + 3, emax - bias)), r.getrandbits(m_bits) & ~((1 << max(0, m_bits - 8)) - 1)
        else:
            e, m = r.randrange(1, emax), r.getrandbits(m_bits)
        return sign | (e << m_bits) | m


def forms():
    """(name, body, srcs, dst): one kernel per instruction form."""
    out = []

    def add(name, body, srcs, dst):
        out.append((name.replace(".", "_"), body, srcs, dst))

    # PTX ISA 9.7.1 integer arithmetic
    for t in INT:
        add("add_" + t, "add.%s {d}, {a}, {b}" % t, [t, t], t)
        add("sub_" + t, "sub.%s {d}, {a}, {b}" % t, [t, t], t)
        add("mullo_" + t, "mul.lo.%s {d}, {a}, {b}" % t, [t, t], t)
        add("mulhi_" + t, "mul.hi.%s {d}, {a}, {b}" % t, [t, t], t)
        add("madlo_" + t, "mad.lo.%s {d}, {a}, {b}, {c}" % t, [t, t, t], t)
        add("madhi_" + t, "mad.hi.%s {d}, {a}, {b}, {c}" % t, [t, t, t], t)
        if t[1:] != "64":
            w = t[0] + str(int(t[1:]) * 2)
            add("mulwide_" + t, "mul.wide.%s {d}, {a}, {b}" % t, [t, t], w)
            add("madwide_" + t, "mad.wide.%s {d}, {a}, {b}, {c}" % t, [t, t, w], w)
        add("div_" + t, "div.%s {d}, {a}, {b}" % t, [t, t], t)
        add("rem_" + t, "rem.%s {d}, {a}, {b}" % t, [t, t], t)
        add("min_" + t, "min.%s {d}, {a}, {b}" % t, [t, t], t)
        add("max_" + t, "max.%s {d}, {a}, {b}" % t, [t, t], t)
        if t[0] == "s":
            add("abs_" + t, "abs.%s {d}, {a}" % t, [t], t)
            add("neg_" + t, "neg.%s {d}, {a}" % t, [t], t)
        for cmp in (["eq", "ne", "lt", "le", "gt", "ge"] if t[0] == "s" else ["eq", "ne", "lo", "ls", "hi", "hs"]):
            add("setp_%s_%s" % (cmp, t), "setp.%s.%s {p}, {a}, {b}" % (cmp, t), [t, t], "pred")
        add("shl_" + t, "shl.b%s {d}, {a}, {b}" % t[1:], [t, "u32"], t)
        add("shr_" + t, "shr.%s {d}, {a}, {b}" % t, [t, "u32"], t)
    add("add_sat_s32", "add.sat.s32 {d}, {a}, {b}", ["s32", "s32"], "s32")
    add("sub_sat_s32", "sub.sat.s32 {d}, {a}, {b}", ["s32", "s32"], "s32")
    add("mad_hi_sat_s32", "mad.hi.sat.s32 {d}, {a}, {b}, {c}", ["s32", "s32", "s32"], "s32")
    for t in ["u32", "s32"]:
        add("mul24lo_" + t, "mul24.lo.%s {d}, {a}, {b}" % t, [t, t], t)
        add("mul24hi_" + t, "mul24.hi.%s {d}, {a}, {b}" % t, [t, t], t)
        add("mad24lo_" + t, "mad24.lo.%s {d}, {a}, {b}, {c}" % t, [t, t, t], t)
        add("mad24hi_" + t, "mad24.hi.%s {d}, {a}, {b}, {c}" % t, [t, t, t], t)
    add("mad24hi_sat_s32", "mad24.hi.sat.s32 {d}, {a}, {b}, {c}", ["s32", "s32", "s32"], "s32")
    for t in INT:
        add("sad_" + t, "sad.%s {d}, {a}, {b}, {c}" % t, [t, t, t], t)
    # extended precision: a 96-bit add and subtract through the carry flag
    add("addcc_chain", "add.cc.u32 {d}, {a}, {b};\n\taddc.cc.u32 {d}, {d}, {c};\n\taddc.u32 {d}, {d}, {a}", ["u32", "u32", "u32"], "u32")
    add("subcc_chain", "sub.cc.u32 {d}, {a}, {b};\n\tsubc.cc.u32 {d}, {d}, {c};\n\tsubc.u32 {d}, {d}, {a}", ["u32", "u32", "u32"], "u32")
    add("madcc_chain", "mad.lo.cc.u32 {d}, {a}, {b}, {c};\n\tmadc.hi.u32 {d}, {a}, {d}, {b}", ["u32", "u32", "u32"], "u32")
    add("addcc_chain64", "add.cc.s64 {d}, {a}, {b};\n\taddc.s64 {d}, {d}, {c}", ["s64", "s64", "s64"], "s64")

    # PTX ISA 9.7.1 bit operations
    for b in ["32", "64"]:
        add("popc_b" + b, "popc.b%s %%r0, {a};\n\tcvt.u%s.u32 {d}, %%r0" % (b, b), ["b" + b], "u" + b)
        add("clz_b" + b, "clz.b%s %%r0, {a};\n\tcvt.u%s.u32 {d}, %%r0" % (b, b), ["b" + b], "u" + b)
        add("brev_b" + b, "brev.b%s {d}, {a}" % b, ["b" + b], "b" + b)
        for s in "us":
            add("bfind_%s%s" % (s, b), "bfind.%s%s %%r0, {a};\n\tcvt.u%s.u32 {d}, %%r0" % (s, b, b), [s + b], "u" + b)
            add("bfind_sa_%s%s" % (s, b), "bfind.shiftamt.%s%s %%r0, {a};\n\tcvt.u%s.u32 {d}, %%r0" % (s, b, b), [s + b], "u" + b)
            add("bfe_%s%s" % (s, b), "bfe.%s%s {d}, {a}, {b}, {c}" % (s, b), [s + b, "u32", "u32"], s + b)
        add("bfi_b" + b, "bfi.b%s {d}, {a}, {b}, %%t, %%t" % b, ["b" + b, "b" + b], "b" + b)
    # bfi with separate position and length: both from one u32 (pos = low byte, len = next byte)
    add("bfi_b32_pl", "bfe.u32 %r0, {c}, 0, 8;\n\tbfe.u32 %r1, {c}, 8, 8;\n\tbfi.b32 {d}, {a}, {b}, %r0, %r1",
        ["b32", "b32", "u32"], "b32")
    add("fns_b32", "fns.b32 {d}, {a}, {b}, {c}", ["b32", "u32", "s32"], "b32")
    for sa in "us":
        for sb in "us":
            add("dp4a_%s%s" % (sa, sb), "dp4a.%s32.%s32 {d}, {a}, {b}, {c}" % (sa, sb), [sa + "32", sb + "32", sa + "32"], sa + "32")
            for hl in ["lo", "hi"]:
                add("dp2a_%s_%s%s" % (hl, sa, sb), "dp2a.%s.%s32.%s32 {d}, {a}, {b}, {c}" % (hl, sa, sb),
                    [sa + "32", sb + "32", sa + "32"], sa + "32")
    for lut in [0x96, 0xE8, 0xCA, 0x1E, 0x80, 0xFE, 0x6A, 0x3C]:
        add("lop3_%02x" % lut, "lop3.b32 {d}, {a}, {b}, {c}, 0x%02x" % lut, ["b32", "b32", "b32"], "b32")
    for mode in ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"]:
        add("prmt" + mode.replace(".", "_"), "prmt.b32%s {d}, {a}, {b}, {c}" % mode, ["b32", "b32", "b32"], "b32")
    for lr in "lr":
        for m in ["clamp", "wrap"]:
            add("shf_%s_%s" % (lr, m), "shf.%s.%s.b32 {d}, {a}, {b}, {c}" % (lr, m), ["b32", "b32", "u32"], "b32")
    add("cnot_b32", "cnot.b32 {d}, {a}", ["b32"], "b32")
    add("not_b16", "not.b16 {d}, {a}", ["b16"], "b16")
    add("selp_s32", "setp.lt.s32 {p}, {c}, 0;\n\tselp.s32 {d}, {a}, {b}, {p}", ["s32", "s32", "s32"], "s32")
    add("slct_s32", "slct.s32.s32 {d}, {a}, {b}, {c}", ["s32", "s32", "s32"], "s32")
    add("slct_f32", "slct.u32.f32 {d}, {a}, {b}, {c}", ["u32", "u32", "f32"], "u32")
    add("slct_ftz_f32", "slct.ftz.u32.f32 {d}, {a}, {b}, {c}", ["u32", "u32", "f32"], "u32")

    # PTX ISA 9.7.3 floating point (exactly rounded forms)
    for t in ["f32", "f64"]:
        ftzs = ["", ".ftz"] if t == "f32" else [""]
        for m in MODES:
            for z in ftzs:
                sfx = m + z.replace(".", "_")
                add("add_%s_%s" % (sfx, t), "add.%s%s.%s {d}, {a}, {b}" % (m, z, t), [t, t], t)
                add("sub_%s_%s" % (sfx, t), "sub.%s%s.%s {d}, {a}, {b}" % (m, z, t), [t, t], t)
                add("mul_%s_%s" % (sfx, t), "mul.%s%s.%s {d}, {a}, {b}" % (m, z, t), [t, t], t)
                add("fma_%s_%s" % (sfx, t), "fma.%s%s.%s {d}, {a}, {b}, {c}" % (m, z, t), [t, t, t], t)
                add("div_%s_%s" % (sfx, t), "div.%s%s.%s {d}, {a}, {b}" % (m, z, t), [t, t], t)
                add("rcp_%s_%s" % (sfx, t), "rcp.%s%s.%s {d}, {a}" % (m, z, t), [t], t)
                add("sqrt_%s_%s" % (sfx, t), "sqrt.%s%s.%s {d}, {a}" % (m, z, t), [t], t)
        for z in ftzs:
            zz = z.replace(".", "_")
            if t == "f32":
                add("add_sat%s_f32" % zz, "add.rn.sat%s.f32 {d}, {a}, {b}" % z, [t, t], t)
                add("mul_sat%s_f32" % zz, "mul.rn.sat%s.f32 {d}, {a}, {b}" % z, [t, t], t)
                add("fma_sat%s_f32" % zz, "fma.rn.sat%s.f32 {d}, {a}, {b}, {c}" % z, [t, t, t], t)
                add("mad_sat%s_f32" % zz, "mad.rn.sat%s.f32 {d}, {a}, {b}, {c}" % z, [t, t, t], t)
                add("add_noround%s_f32" % zz, "add%s.f32 {d}, {a}, {b}" % z, [t, t], t)
                add("mul_noround%s_f32" % zz, "mul%s.f32 {d}, {a}, {b}" % z, [t, t], t)
            add("min%s_%s" % (zz, t), "min%s.%s {d}, {a}, {b}" % (z, t), [t, t], t)
            add("max%s_%s" % (zz, t), "max%s.%s {d}, {a}, {b}" % (z, t), [t, t], t)
            add("abs%s_%s" % (zz, t), "abs%s.%s {d}, {a}" % (z, t), [t], t)
            add("neg%s_%s" % (zz, t), "neg%s.%s {d}, {a}" % (z, t), [t], t)
        add("copysign_" + t, "copysign.%s {d}, {a}, {b}" % t, [t, t], t)
        for tp in ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]:
            add("testp_%s_%s" % (tp, t), "testp.%s.%s {p}, {a}" % (tp, t), [t], "pred")
        for cmp in ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]:
            for z in ftzs:
                add("setp_%s%s_%s" % (cmp, z.replace(".", "_"), t), "setp.%s%s.%s {p}, {a}, {b}" % (cmp, z, t), [t, t], "pred")
        add("set_lt_u32_" + t, "set.lt.u32.%s {d}, {a}, {b}" % t, [t, t], "u32")
        add("set_gtu_f32_" + t, "set.gtu.f32.%s {d}, {a}, {b}" % t, [t, t], "f32")
    add("setp_and_f32", "setp.lt.and.f32 {p}|{q}, {a}, {b}, %p0", ["f32", "f32"], "pred2")

    # PTX ISA 9.7.4 half precision (PTX 6.4 forms)
    for t in ["f16", "f16x2"]:
        for z in ["", ".ftz", ".sat", ".ftz.sat"]:
            zz = z.replace(".", "_")
            add("hadd%s_%s" % (zz, t), "add.rn%s.%s {d}, {a}, {b}" % (z, t), [t, t], t)
            add("hsub%s_%s" % (zz, t), "sub.rn%s.%s {d}, {a}, {b}" % (z, t), [t, t], t)
            add("hmul%s_%s" % (zz, t), "mul.rn%s.%s {d}, {a}, {b}" % (z, t), [t, t], t)
            add("hfma%s_%s" % (zz, t), "fma.rn%s.%s {d}, {a}, {b}, {c}" % (z, t), [t, t, t], t)
        add("hneg_" + t, "neg.%s {d}, {a}" % t, [t], t)
        add("hadd_noround_" + t, "add.%s {d}, {a}, {b}" % t, [t, t], t)
    for cmp in ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]:
        add("hsetp_%s_f16" % cmp, "setp.%s.f16 {p}, {a}, {b}" % cmp, ["f16", "f16"], "pred")
        add("hsetp_%s_f16x2" % cmp, "setp.%s.f16x2 {p}|{q}, {a}, {b}" % cmp, ["f16x2", "f16x2"], "pred2")
    add("hset_lt_u32_f16x2", "set.lt.u32.f16x2 {d}, {a}, {b}", ["f16x2", "f16x2"], "u32")
    add("hset_ltu_f16x2_f16x2", "set.ltu.f16x2.f16x2 {d}, {a}, {b}", ["f16x2", "f16x2"], "f16x2")
    add("hset_ge_f16_f16", "set.ge.f16.f16 {d}, {a}, {b}", ["f16", "f16"], "f16")

    # PTX ISA 9.7.8.21 cvt: every pair of types, every rounding and saturation
    ints = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]
    wide = {"u8": "u16", "s8": "s16"}
    for d in ints:
        for s in ints:
            if d == s:
                continue
            for sat in ["", ".sat"]:
                add("cvt%s_%s_%s" % (sat.replace(".", "_"), d, s), "cvt%s.%s.%s {d}, {a}" % (sat, d, s), [wide.get(s, s)], wide.get(d, d))
    for f in ["f16", "f32", "f64"]:
        ftz = [""] if f != "f32" else ["", ".ftz"]
        for i in ints:
            for m in ["rni", "rzi", "rmi", "rpi"]:
                for z in ftz:
                    for sat in ["", ".sat"]:
                        add("cvt_%s%s%s_%s_%s" % (m, z.replace(".", "_"), sat.replace(".", "_"), i, f),
                            "cvt.%s%s%s.%s.%s {d}, {a}" % (m, z, sat, i, f), [f], wide.get(i, i))
            for m in MODES:
                for sat in ["", ".sat"]:
                    add("cvt_%s%s_%s_%s" % (m, sat.replace(".", "_"), f, i), "cvt.%s%s.%s.%s {d}, {a}" % (m, sat, f, i), [wide.get(i, i)], f)
    for d in ["f16", "f32", "f64"]:
        for s in ["f16", "f32", "f64"]:
            zs = ["", ".ftz"] if "f32" in (d, s) else [""]
            for z in zs:
                for sat in ["", ".sat"]:
                    zz = (z + sat).replace(".", "_")
                    if d == s:
                        for m in ["rni", "rzi", "rmi", "rpi"]:
                            add("cvt_%s%s_%s_%s" % (m, zz, d, s), "cvt.%s%s%s.%s.%s {d}, {a}" % (m, z, sat, d, s), [s], d)
                        continue
                    narrowing = ["f16", "f32", "f64"].index(d) < ["f16", "f32", "f64"].index(s)
                    if narrowing:
                        for m in MODES:
                            add("cvt_%s%s_%s_%s" % (m, zz, d, s), "cvt.%s%s%s.%s.%s {d}, {a}" % (m, z, sat, d, s), [s], d)
                    else:
                        add("cvt%s_%s_%s" % (zz, d, s), "cvt%s%s.%s.%s {d}, {a}" % (z, sat, d, s), [s], d)
    return out


def build(rows, seed):
    rng = random.Random(seed)
    gen = Inputs(rng)
    kernels = []
    for name, body, srcs, dst in forms():
        ins = [tuple(gen.value(t) for t in srcs) for _ in range(rows)]
        decl = ""
        if "%r0" in body:
            decl += "\t.reg .b32 %r0, %r1;\n\t"
        if "%p0" in body:
            decl += "\t.reg .pred %p0;\n\tsetp.ne.u32 %p0, %t, 0;\n\t"
        k = Kernel("g_" + name, decl + body, srcs, dst, [(r, 0) for r in ins])
        kernels.append(k)
    return kernels


def family(name):
    n = name[2:]
    if n.startswith("cvt"):
        return "cvt"
    if n.startswith("h"):
        return "half"
    for f in ["f16", "f32", "f64"]:
        if n.endswith(f) or "_f32_" in n:
            return "float"
    return "int"


def run_on_gpu(kernels):
    import cupy as cp
    import numpy as np
    src_text = {}
    results, rejected = {}, []
    for k in kernels:
        text = ".version 6.4\n.target sm_70\n.address_size 64\n\n" + k.ptx()
        try:
            fn = load_ptx(cp, text).get_function(k.name)
        except Exception as ex:  # the GPU's JIT rejects this form
            rejected.append("%s: %s" % (k.name, str(ex).splitlines()[0][:200]))
            continue
        n = len(k.rows)
        bufs = []
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
        for j, t in enumerate(k.srcs):
            bufs.append(cp.asarray(np.array([r[0][j] for r in k.rows], dtype=dt[SIZE[t]])))
        out = cp.zeros(n, dtype=dt[SIZE[k.dst]])
        try:
            fn((1,), (n,), tuple(bufs) + (out,))
            cp.cuda.Device().synchronize()
        except Exception as ex:  # a fault kills the context: stop here, naming the kernel
            sys.exit("%s faulted on the GPU: %s" % (k.name, ex))
        results[k.name] = [int(v) for v in out.get()]
        src_text[k.name] = text
    return results, rejected


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dry", action="store_true", help="no GPU: write the kernels with zero expectations")
    a = ap.parse_args()
    kernels = build(a.rows, a.seed)
    if a.dry:
        results, rejected = {k.name: [0] * a.rows for k in kernels}, []
    else:
        results, rejected = run_on_gpu(kernels)
    os.makedirs(a.out, exist_ok=True)
    groups = {}
    for k in kernels:
        if k.name in results:
            k.rows = [(r[0], v) for r, v in zip(k.rows, results[k.name])]
            groups.setdefault(family(k.name), []).append(k)
    dev = "(dry run)"
    if not a.dry:
        import cupy as cp
        dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    for fam, ks in groups.items():
        # split into files of at most 60 kernels so one failure report stays readable
        for i in range(0, len(ks), 60):
            path = os.path.join(a.out, "%s_%d.ptx" % (fam, i // 60))
            header = ("Differential test against a real GPU: inputs are random and special values (seed %d),\n"
                      "and every `// expect:` value is the result that an %s gave for the same kernel\n"
                      "(CuPy RawModule, driver PTX JIT), not a value computed by ptxr.\n"
                      "Written by tests/filetests/ref/gpu_fuzz.py --rows %d --seed %d; do not edit by hand." % (a.seed, dev, a.rows, a.seed))
            with open(path, "w") as f:
                f.write("\n".join("// " + l for l in header.splitlines()))
                f.write("\n.version 6.4\n.target sm_70\n.address_size 64\n\n")
                f.write("\n\n".join(k.ptx() for k in ks[i:i + 60]) + "\n")
    with open(os.path.join(a.out, "rejected.txt"), "w") as f:
        f.write("\n".join(rejected) + "\n")
    print("%d forms run on %s, %d rejected by the GPU's JIT" % (len(results), dev, len(rejected)))


if __name__ == "__main__":
    main()
