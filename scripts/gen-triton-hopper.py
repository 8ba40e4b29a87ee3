#!/usr/bin/env python3
"""Triton kernels for Hopper (sm_90a): PTX for ptxr's corpus, and on a GPU the results to check it.

    .venv/bin/python scripts/gen-triton-hopper.py --ptx OUTDIR     # no GPU: PTX only (GPUTarget sm_90a)
    .venv/bin/python scripts/gen-triton-hopper.py --ptx tests/triton_sm100 --sm 100 --only matmul_f16,matmul_tma_f16,attention_f16
    .venv/bin/python scripts/gen-triton-hopper.py --clusters tests/triton_sm90   # no GPU: num_ctas=2 variants
    .venv/bin/python scripts/gen-triton-hopper.py --scaled tests/triton_sm100   # no GPU: block-scaled matmuls, numpy's results
    .venv/bin/python scripts/gen-triton-hopper.py --tma-modes tests/triton_sm90 tests/triton_sm100   # no GPU: TMA im2col, gather4/scatter4
    .venv/bin/python scripts/gen-triton-hopper.py --two-ctas tests/triton_sm100   # no GPU: CTA pairs (Gluon, tcgen05 .cta_group::2)
    python3 scripts/gen-triton-hopper.py --run OUTDIR              # on a Hopper GPU with torch

--run launches each kernel through Triton on the GPU with integer-valued inputs (so that a matmul's
sum is exact in any order), checks the result against torch on the GPU (exact for the matmuls,
a tolerance for attention), and writes per kernel: NAME.ptx (the PTX the GPU ran), NAME.json
(grid, block, dynamic shared bytes, one `ptxr run --arg` per parameter, which buffers to compare)
and NAME.inN.bin / NAME.out.bin (the inputs and the GPU's output).
"""
import argparse
import json
import os
import sys

import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    ap = a_ptr + om[:, None] * sam + ok[None, :] * sak
    bp = b_ptr + ok[:, None] * sbk + on[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(ap)
        b = tl.load(bp)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        ap += BK * sak
        bp += BK * sbk
    cp = c_ptr + om[:, None] * scm + on[None, :] * scn
    tl.store(cp, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, L,
              BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    pm = tl.program_id(0)
    om = pm * BM + tl.arange(0, BM)
    od = tl.arange(0, D)
    q = tl.load(q_ptr + om[:, None] * D + od[None, :])
    m_i = tl.zeros((BM,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, L, BN):
        on = start + tl.arange(0, BN)
        k = tl.load(k_ptr + on[:, None] * D + od[None, :])
        v = tl.load(v_ptr + on[:, None] * D + od[None, :])
        qk = tl.dot(q, tl.trans(k)) * (sm_scale * 1.44269504)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + om[:, None] * D + od[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def transpose(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + om[:, None] * N + on[None, :])
    tl.store(y_ptr + on[:, None] * M + om[None, :], tl.trans(tl.trans(x)) * 2)


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               NUM_SMS: tl.constexpr):
    """A persistent matmul with TMA descriptors made on the host (B given as N x K)."""
    start = tl.program_id(0)
    tm = tl.cdiv(M, BM)
    tn = tl.cdiv(N, BN)
    for tile in tl.range(start, tm * tn, NUM_SMS):
        pm = tile // tn
        pn = tile % tn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = a_desc.load([pm * BM, k])
            b = b_desc.load([pn * BN, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def matmul_dev_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    NUM_SMS: tl.constexpr):
    """A persistent matmul whose TMA descriptors the kernel makes (tensormap.replace in shared
    memory, copied to the global scratch; B given as N x K)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    start = tl.program_id(0)
    tm = tl.cdiv(M, BM)
    tn = tl.cdiv(N, BN)
    for tile in tl.range(start, tm * tn, NUM_SMS):
        pm = tile // tn
        pn = tile % tn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = a_desc.load([pm * BM, k])
            b = b_desc.load([pn * BN, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def matmul_ws(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A warp-specialized matmul (producer and consumer warps, setmaxnreg, named barriers)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        a = a_desc.load([pm * BM, ki * BK])
        b = b_desc.load([pn * BN, ki * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


def cases():
    """(name, kernel, signature, constexprs, num_warps, num_stages, grid, inputs)"""
    M = N = K = 128
    mm_sig = {"a_ptr": None, "b_ptr": None, "c_ptr": None, "M": "i32", "N": "i32", "K": "i32", "sam": "i32",
              "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32"}
    out = []
    for name, ty, oty, prec, bk, stages in (("matmul_f16", "fp16", "fp16", "ieee", 32, 3),
                                            ("matmul_bf16", "bf16", "fp32", "ieee", 32, 3),
                                            ("matmul_tf32", "fp32", "fp32", "tf32", 32, 2),
                                            ("matmul_fp8", "fp8e4nv", "fp32", "ieee", 64, 3)):
        sig = dict(mm_sig, a_ptr="*" + ty, b_ptr="*" + ty, c_ptr="*" + oty)
        out.append(dict(name=name, fn=matmul, sig=sig, const=dict(BM=64, BN=64, BK=bk, PREC=prec), warps=4,
                        stages=stages, grid=(M // 64, N // 64, 1), ty=ty, oty=oty, M=M, N=N, K=K))
    # two warpgroups and wgmma N = 256; 8-bit e5m2
    out.append(dict(name="matmul_f16_big", fn=matmul, sig=dict(mm_sig, a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16"),
                    const=dict(BM=128, BN=256, BK=64, PREC="ieee"), warps=8, stages=2, grid=(2, 1, 1), ty="fp16",
                    oty="fp16", M=256, N=256, K=128))
    out.append(dict(name="matmul_fp8e5", fn=matmul, sig=dict(mm_sig, a_ptr="*fp8e5", b_ptr="*fp8e5", c_ptr="*fp32"),
                    const=dict(BM=64, BN=64, BK=64, PREC="ieee"), warps=4, stages=3, grid=(2, 2, 1), ty="fp8e5",
                    oty="fp32", M=128, N=128, K=128))
    out.append(dict(name="attention_f16", fn=attention,
                    sig={"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "sm_scale": "fp32",
                         "L": "i32"}, const=dict(BM=64, BN=64, D=64), warps=4, stages=2, grid=(2, 1, 1), L=128))
    out.append(dict(name="attention_d128", fn=attention,
                    sig={"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "sm_scale": "fp32",
                         "L": "i32"}, const=dict(BM=128, BN=64, D=128), warps=8, stages=2, grid=(2, 1, 1), L=256))
    out.append(dict(name="transpose_f16", fn=transpose, sig={"x_ptr": "*fp16", "y_ptr": "*fp16", "M": "i32", "N": "i32"},
                    const=dict(BM=64, BN=64), warps=4, stages=1, grid=(2, 2, 1), M=128, N=128))
    out.append(dict(name="matmul_tma_f16", fn=matmul_tma,
                    sig={"a_desc": "tensordesc<fp16[64, 32]>", "b_desc": "tensordesc<fp16[64, 32]>",
                         "c_desc": "tensordesc<fp16[64, 64]>", "M": "i32", "N": "i32", "K": "i32"},
                    const=dict(BM=64, BN=64, BK=32, NUM_SMS=3), warps=4, stages=3, grid=(3, 1, 1), M=192, N=128,
                    K=96))
    out.append(dict(name="matmul_dev_desc_f16", fn=matmul_dev_desc,
                    sig={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
                    const=dict(BM=64, BN=64, BK=32, NUM_SMS=3), warps=4, stages=3, grid=(3, 1, 1), M=192, N=128,
                    K=96))
    out.append(dict(name="matmul_ws_f16", fn=matmul_ws,
                    sig={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
                    const=dict(BM=128, BN=128, BK=64), warps=4, stages=3, grid=(2, 2, 1), M=256, N=256, K=192))
    return out


def compile_ptx(c, sm=90, with_meta=False):
    from triton.backends.compiler import GPUTarget
    sig = dict(c["sig"])
    for k in c["const"]:
        sig[k] = "constexpr"
    src = triton.compiler.ASTSource(fn=c["fn"], signature=sig, constexprs=c["const"])
    k = triton.compile(src, target=GPUTarget("cuda", sm, 32),
                       options={"num_warps": c["warps"], "num_stages": c["stages"]})
    if with_meta:
        return k.asm["ptx"], k.metadata.shared, k.metadata
    return k.asm["ptx"], k.metadata.shared


def ptx_only(outdir, sm=90, names=None):
    """PTX for target sm_<sm>a without a GPU. For sm 100 also a .json per kernel that runs it on
    the inputs of the same kernel in tests/triton_sm90 and expects that kernel's H200 output
    (the same computation: a matmul of small integers is exact in any order; attention within
    the tolerance of tests/triton_sm90.rs)."""
    os.makedirs(outdir, exist_ok=True)
    for c in cases():
        if names and c["name"] not in names:
            continue
        ptx, shared, meta = compile_ptx(c, sm, with_meta=True)
        with open(os.path.join(outdir, c["name"] + ".ptx"), "w") as f:
            f.write(ptx)
        print(c["name"], len(ptx.splitlines()), "lines, shared", shared)
        if sm != 100:
            continue
        sm90 = os.path.join(os.path.dirname(os.path.abspath(outdir)), "triton_sm90")
        with open(os.path.join(sm90, c["name"] + ".json")) as f:
            one = json.load(f)
        rel = lambda a: a.replace("buf:file:", "buf:file:../triton_sm90/")
        args = [rel(a) for a in one["args"]]
        if c["fn"] is matmul:
            # every stride is a parameter here (M, N, K, sam, sak, sbk, sbn, scm, scn); the fp8
            # kernels take B as the transpose of a K-major array (`run`)
            M, N, K = c["M"], c["N"], c["K"]
            sb = (1, K) if c["ty"].startswith("fp8") else (N, 1)
            args = args[:3] + [f"s32:{v}" for v in (M, N, K, K, 1) + sb + (N, 1)] + ["u64:0", "u64:0"]
        elif c["fn"] is matmul_dev_desc or c["fn"] is matmul_ws:
            gs = getattr(meta, "global_scratch_size", 0) or 0
            args[-2] = f"buf:zero:{gs * c['grid'][0] * c['grid'][1] * c['grid'][2]}" if gs else "u64:0"
        elif c["fn"] is matmul_tma:
            for i, m in enumerate(meta.tensordesc_meta):
                sw = {0: "", 1: ":swizzle32", 2: ":swizzle64", 3: ":swizzle128"}[m["swizzle"]]
                head, data = args[5 * i].split("=", 1)
                parts = head.split(":")
                parts[4] = f"{m['block_size'][1]}x{m['block_size'][0]}"
                args[5 * i] = ":".join(parts[:5]) + sw + "=" + data
        launch = dict(kernel=meta.name, grid=one["grid"], block=[32 * meta.num_warps, 1, 1], shared=shared,
                      args=args, out_arg=one["out_arg"], out="../triton_sm90/" + one["out"], exact=one["exact"],
                      triton=triton.__version__, device="none: the outputs of tests/triton_sm90/%s on an H200" % c["name"])
        with open(os.path.join(outdir, c["name"] + ".json"), "w") as f:
            json.dump(launch, f, indent=1)


def clusters(outdir):
    """matmul_f16 and matmul_tma_f16 compiled with num_ctas=2 (clusters of 2 CTAs, each computing
    part of a program's tile; the launch grid is the program grid with x times 2), PTX only: their
    .json runs them on the one-CTA kernels' inputs and expects those kernels' GPU outputs (a matmul
    of small integers is exact, so every correct kernel gives those bytes)."""
    by_name = {c["name"]: c for c in cases()}
    for base in ("matmul_f16", "matmul_tma_f16"):
        c = dict(by_name[base])
        from triton.backends.compiler import GPUTarget
        sig = dict(c["sig"])
        for k in c["const"]:
            sig[k] = "constexpr"
        src = triton.compiler.ASTSource(fn=c["fn"], signature=sig, constexprs=c["const"])
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": c["warps"], "num_stages": c["stages"], "num_ctas": 2})
        name = base + "_ctas2"
        with open(os.path.join(outdir, name + ".ptx"), "w") as f:
            f.write(k.asm["ptx"])
        with open(os.path.join(outdir, base + ".json")) as f:
            one = json.load(f)
        args = list(one["args"])
        if c["fn"] is matmul:
            # every stride is a parameter here (M, N, K, sam, sak, sbk, sbn, scm, scn)
            M, N, K = c["M"], c["N"], c["K"]
            args = args[:3] + [f"s32:{v}" for v in (M, N, K, K, 1, N, 1, N, 1)] + ["u64:0", "u64:0"]
        else:
            # the block each CTA copies, with the swizzle Triton chose (tensordesc_meta)
            for i, m in enumerate(k.metadata.tensordesc_meta):
                sw = {0: "", 1: ":swizzle32", 2: ":swizzle64", 3: ":swizzle128"}[m["swizzle"]]
                head, data = args[5 * i].split("=", 1)
                parts = head.split(":")
                parts[4] = f"{m['block_size'][1]}x{m['block_size'][0]}"
                args[5 * i] = ":".join(parts[:5]) + sw + "=" + data
        meta = dict(kernel=k.metadata.name, grid=[one["grid"][0] * 2] + one["grid"][1:], block=one["block"],
                    shared=k.metadata.shared, args=args, out_arg=one["out_arg"], out=one["out"], exact=True,
                    triton=triton.__version__, device="none: the outputs of %s on an H200" % base)
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(name, "grid", meta["grid"], "shared", meta["shared"])


@triton.jit
def dot_scaled_k(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 AFMT: tl.constexpr, BFMT: tl.constexpr, APACK: tl.constexpr, BPACK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    oka = tl.arange(0, BK // APACK)
    okb = tl.arange(0, BK // BPACK)
    oks = tl.arange(0, BK // 32)
    a = tl.load(a_ptr + om[:, None] * (BK // APACK) + oka[None, :])
    b = tl.load(b_ptr + okb[:, None] * BN + on[None, :])
    sa = tl.load(as_ptr + om[:, None] * (BK // 32) + oks[None, :])
    sb = tl.load(bs_ptr + on[:, None] * (BK // 32) + oks[None, :])
    acc = tl.dot_scaled(a, sa, AFMT, b, sb, BFMT)
    tl.store(c_ptr + om[:, None] * BN + on[None, :], acc)


def scaled(outdir):
    """Block-scaled matmuls (`tl.dot_scaled`, microscaling: a UE8M0 scale per 32 elements of K
    of each row of A and column of B) for sm_100a, PTX only: e4m3 by e4m3 (tcgen05.mma
    .kind::mxf8f6f4), e2m1 by e2m1 (.kind::mxf4, two elements a byte, the even one in the low
    nibble) and e2m1 by e4m3 (.kind::mxf8f6f4 with an E2M1 operand, which Triton lays out in
    shared memory in the padded form), 128x128x128 in one CTA. The inputs are small values
    with scales 2^-2..2^2, so the product is exact in f32 in any order; the expected output is
    numpy's (no GPU)."""
    import numpy as np
    from triton.backends.compiler import GPUTarget
    os.makedirs(outdir, exist_ok=True)
    e4m3 = (np.array([0, 0.5, 1, 1.5, 2, -0.5, -1, -1.5, -2]), np.array([0x00, 0x30, 0x38, 0x3c, 0x40, 0xb0, 0xb8, 0xbc, 0xc0], dtype=np.uint8))
    e2m1 = (np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]), np.arange(16, dtype=np.uint8))
    fmts = {"e4m3": (e4m3, 1), "e2m1": (e2m1, 2)}
    for name, afmt, bfmt, seed in [("dot_scaled_e4m3", "e4m3", "e4m3", 7), ("dot_scaled_e2m1", "e2m1", "e2m1", 11), ("dot_scaled_e2m1_e4m3", "e2m1", "e4m3", 5)]:
        (avals, acodes), apack = fmts[afmt]
        (bvals, bcodes), bpack = fmts[bfmt]
        ptr = lambda pack: "*u8" if pack == 2 else "*fp8e4nv"
        sig = {"a_ptr": ptr(apack), "as_ptr": "*u8", "b_ptr": ptr(bpack), "bs_ptr": "*u8", "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr",
               "BK": "constexpr", "AFMT": "constexpr", "BFMT": "constexpr", "APACK": "constexpr", "BPACK": "constexpr"}
        const = {"BM": 128, "BN": 128, "BK": 128, "AFMT": afmt, "BFMT": bfmt, "APACK": apack, "BPACK": bpack}
        src = triton.compiler.ASTSource(fn=dot_scaled_k, signature=sig, constexprs=const)
        k = triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": 4})
        with open(os.path.join(outdir, name + ".ptx"), "w") as f:
            f.write(k.asm["ptx"])
        rng = np.random.default_rng(seed)
        ia, ib = rng.integers(0, len(avals), (128, 128)), rng.integers(0, len(bvals), (128, 128))
        sa, sb = rng.integers(125, 130, (128, 4)).astype(np.uint8), rng.integers(125, 130, (128, 4)).astype(np.uint8)
        A = avals[ia] * np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
        B = bvals[ib] * np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=1).T
        a_bytes = (ia[:, 0::2] | ia[:, 1::2] << 4).astype(np.uint8) if apack == 2 else acodes[ia]
        b_bytes = (ib[0::2, :] | ib[1::2, :] << 4).astype(np.uint8) if bpack == 2 else bcodes[ib]
        files = []
        for i, arr in enumerate([a_bytes, sa, b_bytes, sb]):
            arr.tofile(os.path.join(outdir, f"{name}.in{i}.bin"))
            files.append(f"buf:file:{name}.in{i}.bin")
        (A @ B).astype(np.float32).tofile(os.path.join(outdir, name + ".out.bin"))
        meta = dict(kernel=k.metadata.name, grid=[1, 1, 1], block=[32 * k.metadata.num_warps, 1, 1], shared=k.metadata.shared,
                    args=files + ["buf:zero:65536", "u64:0", "u64:0"], out_arg=4, out=name + ".out.bin", exact=True,
                    triton=triton.__version__, device="none: numpy's product of the dequantized inputs")
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(name, "shared", k.metadata.shared)


@triton.jit
def gather_scatter(x_desc, y_desc, idx_ptr, sidx_ptr, BR: tl.constexpr, BC: tl.constexpr):
    """Rows of X by index (`desc.gather`: tile::gather4 on sm_100a), doubled, to rows of Y by
    index (`desc.scatter`: tile::scatter4), one block of BC columns per program."""
    pc = tl.program_id(0)
    x = x_desc.gather(tl.load(idx_ptr + tl.arange(0, BR)), pc * BC)
    y_desc.scatter(x * 2, tl.load(sidx_ptr + tl.arange(0, BR)), pc * BC)


def im2col_kernel():
    """A Gluon kernel: one TMA im2col load per program of 16 pixels x 32 channels (an NHWC input,
    a 3x3 convolution's tap (R, S) with padding 1: the program's 16 output pixels from pixel
    16 * program id, in N, P, Q order), stored to row 16 * program id of OUT by a tiled TMA store."""
    from triton.experimental import gluon
    from triton.experimental.gluon import language as ttgl
    from triton.experimental.gluon.language.nvidia.hopper import tma, mbarrier

    @gluon.jit
    def im2col_tap(in_desc, out_desc, P: ttgl.constexpr, Q: ttgl.constexpr, R: ttgl.constexpr, S: ttgl.constexpr):
        m = ttgl.program_id(0) * in_desc.block_shape[0]
        n = m // (P * Q)
        p = (m // Q) % P
        q = m % Q
        smem = ttgl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
        bar = mbarrier.allocate_mbarrier()
        mbarrier.init(bar, count=1)
        mbarrier.expect(bar, in_desc.block_type.nbytes)
        # the filter's corner for output pixel (p, q) at padding 1, the tap as the offsets
        tma.async_load_im2col(in_desc, [n, p - 1, q - 1, 0], [R, S], bar, smem)
        mbarrier.wait(bar, phase=0)
        mbarrier.invalidate(bar)
        tma.async_store(out_desc, [m, 0], smem)
        tma.store_wait(pendings=0)

    return im2col_tap, ttgl


def tma_modes(out90, out100):
    """PTX only, numpy's results: `desc.gather`/`desc.scatter` for sm_100a (tile::gather4 and
    tile::scatter4), and a Gluon TMA im2col load for sm_90a (the tap of a 3x3 convolution)."""
    import numpy as np
    from triton.backends.compiler import GPUTarget
    rng = np.random.default_rng(24)
    # gather/scatter: X, Y 64 x 64 f16; 8 rows gathered (one past the end: zeros), 8 scattered
    # (one past the end: left out), two programs of 32 columns
    name = "gather_scatter_f16"
    sig = {"x_desc": "tensordesc<fp16[1, 32]>", "y_desc": "tensordesc<fp16[1, 32]>", "idx_ptr": "*i32", "sidx_ptr": "*i32",
           "BR": "constexpr", "BC": "constexpr"}
    src = triton.compiler.ASTSource(fn=gather_scatter, signature=sig, constexprs={"BR": 8, "BC": 32})
    k = triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": 4})
    X = rng.integers(-100, 100, (64, 64)).astype(np.float16)
    idx = np.array([5, 63, 0, 70, 17, 17, 40, 2], dtype=np.int32)
    sidx = np.array([9, 1, 66, 30, 0, 63, 12, 44], dtype=np.int32)
    Y = np.zeros((64, 64), dtype=np.float16)
    for i in range(8):
        if sidx[i] < 64:
            Y[sidx[i]] = 2 * X[idx[i]] if idx[i] < 64 else 0
    for i, arr in enumerate([X, idx, sidx]):
        arr.tofile(os.path.join(out100, f"{name}.in{i}.bin"))
    Y.tofile(os.path.join(out100, name + ".out.bin"))
    with open(os.path.join(out100, name + ".ptx"), "w") as f:
        f.write(k.asm["ptx"])
    sw = {0: "", 1: ":swizzle32", 2: ":swizzle64", 3: ":swizzle128"}
    m = k.metadata.tensordesc_meta
    args = [f"tmap:f16:64x64:128:32x1{sw[m[0]['swizzle']]}=buf:file:{name}.in0.bin", "s32:64", "s32:64", "s64:64", "s64:1",
            f"tmap:f16:64x64:128:32x1{sw[m[1]['swizzle']]}=buf:zero:{64 * 64 * 2}", "s32:64", "s32:64", "s64:64", "s64:1",
            f"buf:file:{name}.in1.bin", f"buf:file:{name}.in2.bin", "u64:0", "u64:0"]
    meta = dict(kernel=k.metadata.name, grid=[2, 1, 1], block=[32 * k.metadata.num_warps, 1, 1], shared=k.metadata.shared,
                args=args, out_arg=5, out=name + ".out.bin", exact=True, triton=triton.__version__,
                device="none: numpy's rows of 2 X")
    with open(os.path.join(out100, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(name, "shared", k.metadata.shared)

    # im2col: input NHWC 2 x 5 x 6 x 32 f32, the tap (R, S) = (2, 1) of a 3x3 convolution with
    # padding 1 (output 5 x 6 per image): 60 output pixels in 4 programs of 16 (the last 4 past
    # the last image: zeros)
    name = "im2col_conv_tap_f32"
    fn, ttgl = im2col_kernel()
    layout = ttgl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2)
    N, H, W, C, R, S = 2, 5, 6, 32, 2, 1
    sig = {"in_desc": f"tensordesc_im2col<fp32[16,32],{layout!r}>", "out_desc": f"tensordesc<fp32[16,32],{layout!r}>",
           "P": "constexpr", "Q": "constexpr", "R": "constexpr", "S": "constexpr"}
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs={"P": H, "Q": W, "R": R, "S": S})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 1})
    x = rng.integers(-1000, 1000, (N, H, W, C)).astype(np.float32)
    out = np.zeros((64, C), dtype=np.float32)
    for mm in range(64):
        n, p, q = mm // (H * W), (mm // W) % H, mm % W
        h, w = p - 1 + R, q - 1 + S
        if n < N and 0 <= h < H and 0 <= w < W:
            out[mm] = x[n, h, w]
    x.tofile(os.path.join(out90, f"{name}.in0.bin"))
    out.tofile(os.path.join(out90, name + ".out.bin"))
    with open(os.path.join(out90, name + ".ptx"), "w") as f:
        f.write(k.asm["ptx"])
    m = k.metadata.tensordesc_meta
    # the im2col box corners: a 3x3 filter at padding 1, bases [-1, H + (-1)) in H and W
    args = [f"tmap:f32:{C}x{W}x{H}x{N}:{C * 4}x{C * 4 * W}x{C * 4 * W * H}:32x16:im2col:lower=-1x-1:upper=-1x-1{sw[m[0]['swizzle']]}=buf:file:{name}.in0.bin",
            "s32:0", "s32:0", "s64:0", "s64:0",
            f"tmap:f32:32x64:128:32x16{sw[m[1]['swizzle']]}=buf:zero:{64 * C * 4}", "s32:64", "s32:32", "s64:32", "s64:1",
            "u64:0", "u64:0"]
    meta = dict(kernel=k.metadata.name, grid=[4, 1, 1], block=[32 * k.metadata.num_warps, 1, 1], shared=k.metadata.shared,
                args=args, out_arg=5, out=name + ".out.bin", exact=True, triton=triton.__version__,
                device="none: numpy's input pixels of the tap (2, 1) of a padded 3x3 convolution")
    with open(os.path.join(out90, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(name, "shared", k.metadata.shared)


def two_cta_kernel():
    """A Gluon matmul of CTA pairs (sm_100a, `TensorMemoryLayout(two_ctas=True)`: tcgen05
    `.cta_group::2`): each cluster of 2 CTAs computes a BM x BN tile of C = A B (f32) from
    BM rows of A, each CTA loading its BM/2 rows and its BN/2 columns of B by TMA into the
    even CTA's mbarrier (which the odd CTA reaches by clearing bit 24 of its address), the
    even CTA issuing the pair's MMA over K in steps of BK and committing it to both CTAs."""
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                     tcgen05_mma, tma, mbarrier)

    @gluon.jit
    def two_cta_matmul(a_desc, b_desc, c_desc, K: gl.constexpr):
        BM: gl.constexpr = a_desc.block_shape[0]
        BK: gl.constexpr = a_desc.block_shape[1]
        BN: gl.constexpr = b_desc.block_shape[1]
        off_m = gl.program_id(0) * BM
        smem_a = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
        smem_b = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
        tma_bar = mbarrier.allocate_mbarrier(two_ctas=True)
        mma_bar = mbarrier.allocate_mbarrier()
        mbarrier.init(tma_bar, count=1)
        mbarrier.init(mma_bar, count=1)
        acc_layout: gl.constexpr = TensorMemoryLayout(block=(BM // 2, BN), col_stride=1, cga_layout=c_desc.layout.cga_layout,
                                                      two_ctas=True)
        acc = allocate_tensor_memory(gl.float32, [BM, BN], acc_layout)
        phase = 0
        for k in range(K // BK):
            mbarrier.expect(tma_bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
            tma.async_load(a_desc, [off_m, k * BK], tma_bar, smem_a)
            tma.async_load(b_desc, [k * BK, 0], tma_bar, smem_b)
            mbarrier.wait(tma_bar, phase=phase, deps=[smem_a, smem_b])
            tcgen05_mma(smem_a, smem_b, acc, use_acc=k > 0, mbarriers=[mma_bar])
            mbarrier.wait(mma_bar, phase=phase, deps=[smem_a, smem_b])
            phase ^= 1
        mbarrier.invalidate(tma_bar)
        mbarrier.invalidate(mma_bar)
        c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_shape, c_desc.layout)
        c_smem.store(acc.load())
        tma.async_store(c_desc, [off_m, 0], c_smem)
        tma.store_wait(pendings=0)

    return two_cta_matmul, gl


def two_ctas(out100):
    """PTX only, numpy's results: Gluon matmuls of CTA pairs for sm_100a (two_cta_kernel), f16
    and bf16 inputs (integer values, so every order of the sums is exact), over 512 rows of A."""
    import numpy as np
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    fn, gl = two_cta_kernel()
    rng = np.random.default_rng(100)
    sw = {0: "", 1: ":swizzle32", 2: ":swizzle64", 3: ":swizzle128"}
    # (BM 256: the pair's MMA of M = 256; 128: of M = 128, whose D each CTA reads back from
    # its two 64-lane halves)
    for name, ty, gty, npty, tm, BM, BN, BK, K in [("two_cta_matmul_f16", "fp16", gl.float16, np.float16, "f16", 256, 128, 64, 128),
                                                   ("two_cta_matmul_bf16", "bf16", gl.bfloat16, np.float32, "bf16", 256, 64, 64, 192),
                                                   ("two_cta_matmul_m128_f16", "fp16", gl.float16, np.float16, "f16", 128, 64, 64, 128)]:
        M = 512
        la = gl.NVMMASharedLayout.get_default_for([BM, BK], gty, cga_layout=[(1, 0)])
        lb = gl.NVMMASharedLayout.get_default_for([BK, BN], gty, cga_layout=[(0, 1)])
        lc = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float32, cga_layout=[(1, 0)])
        sig = {"a_desc": f"tensordesc<{ty}[{BM},{BK}],{la!r}>", "b_desc": f"tensordesc<{ty}[{BK},{BN}],{lb!r}>",
               "c_desc": f"tensordesc<fp32[{BM},{BN}],{lc!r}>", "K": "constexpr"}
        src = GluonASTSource(fn=fn, signature=sig, constexprs={"K": K})
        k = triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": 4, "num_ctas": 2})
        a = rng.integers(-3, 4, (M, K)).astype(npty)
        b = rng.integers(-3, 4, (K, BN)).astype(npty)
        c = a.astype(np.float64) @ b.astype(np.float64)
        for i, x in enumerate([a, b]):
            # bf16: the high half of the f32 (exact for these small integers)
            x = (x.view(np.uint32) >> 16).astype(np.uint16) if ty == "bf16" else x
            x.tofile(os.path.join(out100, f"{name}.in{i}.bin"))
        es = 2
        c.astype(np.float32).tofile(os.path.join(out100, name + ".out.bin"))
        with open(os.path.join(out100, name + ".ptx"), "w") as f:
            f.write(k.asm["ptx"])
        m = k.metadata.tensordesc_meta
        # each CTA's box: its half of A's rows, its half of B's columns, its half of C's rows
        # in blocks of the store's width (Triton's block_size, outermost first)
        boxes = ["x".join(str(v) for v in reversed(d["block_size"])) for d in m]
        args = [f"tmap:{tm}:{K}x{M}:{K * es}:{boxes[0]}{sw[m[0]['swizzle']]}=buf:file:{name}.in0.bin", f"s32:{M}", f"s32:{K}", f"s64:{K}", "s64:1",
                f"tmap:{tm}:{BN}x{K}:{BN * es}:{boxes[1]}{sw[m[1]['swizzle']]}=buf:file:{name}.in1.bin", f"s32:{K}", f"s32:{BN}", f"s64:{BN}", "s64:1",
                f"tmap:f32:{BN}x{M}:{BN * 4}:{boxes[2]}{sw[m[2]['swizzle']]}=buf:zero:{M * BN * 4}", f"s32:{M}", f"s32:{BN}", f"s64:{BN}", "s64:1",
                "u64:0", "u64:0"]
        meta = dict(kernel=k.metadata.name, grid=[2 * (M // BM), 1, 1], block=[32 * k.metadata.num_warps, 1, 1],
                    shared=k.metadata.shared, args=args, out_arg=10, out=name + ".out.bin", exact=True,
                    triton=triton.__version__, device="none: numpy's A B")
        with open(os.path.join(out100, name + ".json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(name, "shared", k.metadata.shared, "boxes", boxes)


def run(outdir):
    import torch
    os.makedirs(outdir, exist_ok=True)
    g = torch.Generator(device="cpu").manual_seed(90)
    tys = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp8e4nv": torch.float8_e4m3fn,
           "fp8e5": torch.float8_e5m2}
    for c in cases():
        name = c["name"]
        bufs = []
        if c["fn"] is matmul:
            M, N, K = c["M"], c["N"], c["K"]
            a = torch.randint(-3, 4, (M, K), generator=g).to(tys[c["ty"]]).cuda()
            b = torch.randint(-3, 4, (K, N), generator=g).to(tys[c["ty"]])
            if c["ty"].startswith("fp8"):  # Triton's fp8 dot wants B K-major: pass B's transpose strides
                bt = b.t().contiguous().cuda()
                b = bt.t()
            else:
                b = b.cuda()
            out = torch.zeros((M, N), dtype=tys[c["oty"]], device="cuda")
            k = matmul[c["grid"]](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                  out.stride(0), out.stride(1), num_warps=c["warps"], num_stages=c["stages"],
                                  **c["const"])
            ref = (a.float() @ b.float()).to(out.dtype)
            ok = torch.equal(out, ref)
            ins = [a, bt if c["ty"].startswith("fp8") else b]
            scalars = [("i32", v) for v in (M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                            out.stride(0), out.stride(1))]
        elif c["fn"] is attention:
            L, D = c["L"], c["const"]["D"]
            q, kk, v = [(torch.randint(-8, 9, (L, D), generator=g).float() / 8).half().cuda() for _ in range(3)]
            out = torch.zeros((L, D), dtype=torch.float16, device="cuda")
            k = attention[c["grid"]](q, kk, v, out, 0.125, L, num_warps=c["warps"], num_stages=c["stages"],
                                     **c["const"])
            ref = torch.softmax((q.float() @ kk.float().t()) * 0.125, 1) @ v.float()
            err = (out.float() - ref).abs().max().item()
            ok = err < 2e-2
            print(f"{name}: max |GPU - torch f32| = {err:.3g}")
            ins = [q, kk, v]
            scalars = [("f32", 0.125), ("i32", L)]
        elif c["fn"] is matmul_tma:
            from triton.tools.tensor_descriptor import TensorDescriptor
            M, N, K = c["M"], c["N"], c["K"]
            a = torch.randint(-3, 4, (M, K), generator=g).half().cuda()
            bt = torch.randint(-3, 4, (N, K), generator=g).half().cuda()
            out = torch.zeros((M, N), dtype=torch.float16, device="cuda")
            descs = [TensorDescriptor.from_tensor(a, [64, 32]), TensorDescriptor.from_tensor(bt, [64, 32]),
                     TensorDescriptor.from_tensor(out, [64, 64])]
            k = matmul_tma[c["grid"]](*descs, M, N, K, num_warps=c["warps"], num_stages=c["stages"], **c["const"])
            ref = (a.float() @ bt.float().t()).half()
            ok = torch.equal(out, ref)
            ins = [a, bt]
            scalars = [("i32", M), ("i32", N), ("i32", K)]
            # ptxr's own tensor maps (`tmap:`), with the swizzle Triton chose for each
            meta = k.metadata.tensordesc_meta
            tmaps = []
            for i, (t, blk) in enumerate(((a, [64, 32]), (bt, [64, 32]), (out, [64, 64]))):
                sw = {0: "", 1: ":swizzle32", 2: ":swizzle64", 3: ":swizzle128"}[meta[i]["swizzle"]]
                data = f"buf:file:{name}.in{i}.bin" if i < 2 else f"buf:zero:{t.numel() * 2}"
                tmaps.append([f"tmap:f16:{t.shape[1]}x{t.shape[0]}:{t.stride(0) * 2}:{blk[1]}x{blk[0]}{sw}={data}",
                              f"s32:{t.shape[0]}", f"s32:{t.shape[1]}", f"s64:{t.stride(0)}", "s64:1"])
            c["tmap_args"] = [x for tm in tmaps for x in tm]
            # each descriptor is 128 opaque bytes on the GPU; ptxr encodes its own from these
            c["tensordescs"] = [dict(buffer=i, shape=list(t.shape), strides_bytes=[t.stride(0) * 2, 2], block=blk,
                                     elem_bytes=2) for i, (t, blk) in enumerate(((a, [64, 32]), (bt, [64, 32]),
                                                                                 (out, [64, 64])))]
        elif c["fn"] is matmul_dev_desc or c["fn"] is matmul_ws:
            triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
            M, N, K = c["M"], c["N"], c["K"]
            a = torch.randint(-3, 4, (M, K), generator=g).half().cuda()
            bt = torch.randint(-3, 4, (N, K), generator=g).half().cuda()
            out = torch.zeros((M, N), dtype=torch.float16, device="cuda")
            k = c["fn"][c["grid"]](a, bt, out, M, N, K, num_warps=c["warps"], num_stages=c["stages"], **c["const"])
            ref = (a.float() @ bt.float().t()).half()
            ok = torch.equal(out, ref)
            ins = [a, bt]
            scalars = [("i32", M), ("i32", N), ("i32", K)]
        else:
            M, N = c["M"], c["N"]
            x = torch.randint(-1000, 1000, (M, N), generator=g).half().cuda()
            out = torch.zeros((N, M), dtype=torch.float16, device="cuda")
            k = transpose[c["grid"]](x, out, M, N, num_warps=c["warps"], num_stages=c["stages"], **c["const"])
            # y[pn*BN + i, pm*BM + j] = 2 x[pm*BM + i, pn*BN + j]: the tiles change places,
            # their elements keep theirs (the layout change happens inside Triton)
            ref = (x * 2).view(M // 64, 64, N // 64, 64).permute(2, 1, 0, 3).reshape(N, M)
            ok = torch.equal(out, ref)
            ins = [x]
            scalars = [("i32", M), ("i32", N)]
        torch.cuda.synchronize()
        ptx = k.asm["ptx"]
        with open(os.path.join(outdir, name + ".ptx"), "w") as f:
            f.write(ptx)
        args = []
        for i, t in enumerate(ins):
            fn = f"{name}.in{i}.bin"
            t.cpu().contiguous().view(torch.uint8).numpy().tofile(os.path.join(outdir, fn))
            args.append("buf:file:" + fn)
        args.append(f"buf:zero:{out.numel() * out.element_size()}")
        out_index = len(args) - 1
        if c.get("tmap_args"):  # a descriptor is a map and its shape and strides
            args, out_index = list(c["tmap_args"]), 10
        # Triton specializes integer arguments equal to 1 (they are not parameters of the PTX)
        # and appends two scratch pointers (global and profile scratch, unused here).
        args += [f"{t}:{v}" for t, v in scalars if not (t == "i32" and v == 1)] + ["u64:0", "u64:0"]
        if c.get("tmap_args"):
            args = [a for a in args if not a.startswith("buf:file:")]
        args = [a.replace("i32:", "s32:", 1) for a in args]  # ptxr run names PTX types
        gs = getattr(k.metadata, "global_scratch_size", 0) or 0
        if gs:  # the global scratch (the descriptors a kernel makes): one slice per program
            args[-2] = f"buf:zero:{gs * c['grid'][0] * c['grid'][1] * c['grid'][2]}"
        out.cpu().contiguous().view(torch.uint8).numpy().tofile(os.path.join(outdir, name + ".out.bin"))
        meta = dict(kernel=k.metadata.name, grid=list(c["grid"]), block=[32 * k.metadata.num_warps, 1, 1],
                    shared=k.metadata.shared, args=args, out_arg=out_index, out="%s.out.bin" % name,
                    exact=c["fn"] is not attention, torch_agrees=bool(ok), triton=triton.__version__,
                    device=torch.cuda.get_device_name(), tensordescs=c.get("tensordescs"))
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(f"{name}: {'agrees with torch' if ok else 'DIFFERS from torch'}; shared {k.metadata.shared}; "
              f"{len(ptx.splitlines())} PTX lines; params {ptx.count('.param')}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptx")
    ap.add_argument("--run")
    ap.add_argument("--clusters")
    ap.add_argument("--tma-modes", nargs=2, metavar=("SM90DIR", "SM100DIR"),
                    help="gather4/scatter4 (sm_100a) and im2col (Gluon, sm_90a) TMA kernels with numpy's results (no GPU)")
    ap.add_argument("--scaled", help="OUTDIR: block-scaled matmuls for sm_100a with numpy's results (no GPU)")
    ap.add_argument("--two-ctas", help="OUTDIR: Gluon matmuls of CTA pairs (tcgen05 .cta_group::2) for sm_100a with numpy's results (no GPU)")
    ap.add_argument("--sm", type=int, default=90, help="with --ptx: the target (100 for Blackwell sm_100a)")
    ap.add_argument("--only", help="with --ptx: comma-separated kernel names")
    a = ap.parse_args()
    if a.run:
        run(a.run)
    elif a.clusters:
        clusters(a.clusters)
    elif a.tma_modes:
        tma_modes(*a.tma_modes)
    elif a.scaled:
        scaled(a.scaled)
    elif a.two_ctas:
        two_ctas(a.two_ctas)
    elif a.ptx:
        ptx_only(a.ptx, a.sm, a.only.split(",") if a.only else None)
    else:
        ap.print_help()
        sys.exit(2)
