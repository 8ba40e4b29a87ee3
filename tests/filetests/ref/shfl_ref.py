#!/usr/bin/env python3
"""Reference for the warp filetests in tests/filetests/warp/ (PTX ISA 9.7.9.6 shfl.sync,
9.7.12.7 vote.sync, 9.7.12.8 match.sync, 9.7.12.9 activemask).

    python3 tests/filetests/ref/shfl_ref.py modes > tests/filetests/warp/shfl_modes.ptx
    python3 tests/filetests/ref/shfl_ref.py scan      # expect lines of shfl_spec_examples.ptx
    python3 tests/filetests/ref/shfl_ref.py vote      # expect lines of vote.ptx
    python3 tests/filetests/ref/shfl_ref.py match     # expect lines of match.ptx
    python3 tests/filetests/ref/shfl_ref.py partial   # expect lines of shfl_partial.ptx
    python3 tests/filetests/ref/shfl_ref.py active    # expect lines of activemask.ptx
    python3 tests/filetests/ref/shfl_ref.py multiwarp # expect lines of shfl_multiwarp.ptx
    python3 tests/filetests/ref/shfl_ref.py chain     # run/expect lines of shfl_chain.ptx
    python3 tests/filetests/ref/shfl_ref.py chain_local  # and of its .local kernel

`shfl` below is the pseudo-code of the spec's Semantics section, transcribed line by line
(/work/shared/spec 9.7.9.6). Every source lane it reads is a member of the membermask and
active, so the results are defined.
"""
import sys


def shfl(mode, lane, b, c, src):
    """PTX ISA 9.7.9.6 shfl.sync semantics; src = the 32 `a` values of the warp."""
    bval = b & 0x1F            # bval[4:0] = b[4:0]
    cval = c & 0x1F            # cval[4:0] = c[4:0]
    segmask = (c >> 8) & 0x1F  # segmask[4:0] = c[12:8]
    max_lane = (lane & segmask) | (cval & ~segmask & 0x1F)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - bval
        pval = j >= max_lane
    elif mode == "down":
        j = lane + bval
        pval = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        pval = j <= max_lane
    else:  # idx
        j = min_lane | (bval & ~segmask & 0x1F)
        pval = j <= max_lane
    if not pval:
        j = lane
    return src[j], pval


def u32list(vals):
    return ",".join(str(v & 0xFFFFFFFF) for v in vals)


# ------------------------------------------------------------------ shfl_modes.ptx (generated)
# (mode, b, c): b is an immediate, or "tid*7" (a register operand varying per thread).
MODE_CASES = [
    ("up", 1, 0x0),
    ("up", 3, 0x1800),      # width 8 segments (CUDA __shfl_up_sync(.., 3, 8))
    ("up", 2, 0x0004),      # no segments, c[4:0] = 4: pval = lane-2 >= 4
    ("up", 5, 0x0C1F),      # segmask 0x0c (not a CUDA width): pure spec arithmetic
    ("down", 1, 0x1F),
    ("down", 3, 0x1807),    # width 8, clamp inside the segment
    ("down", 4, 0x0010),    # clamp at lane 16
    ("down", 33, 0x1F),     # b out of range: b[4:0] = 1 still moves data
    ("down", 2, 0x101F),    # width 16
    ("bfly", 1, 0x1F),
    ("bfly", 16, 0x1807),   # xor leaves the segment: only lanes >= 16 read (j <= maxLane)
    ("bfly", 3, 0x0010),
    ("bfly", 6, 0x1C03),    # width 4
    ("idx", 5, 0x1F),
    ("idx", 3, 0x1807),     # broadcast lane 3 of each 8-lane segment
    ("idx", 13, 0x181F),    # b[4:0] & ~segmask = 5
    ("idx", 20, 0x0010),    # j = 20 > maxLane = 16: own value, p = 0
    ("idx", 7, 0x0C1F),
    ("idx", "tid*7", 0x1F),  # per-thread source lane from a register
]
NTHREADS = 64  # two warps


def a_of(tid):
    return tid * 3 + 1000


def modes_expect():
    d, p = [], []
    for mode, b, c in MODE_CASES:
        for tid in range(NTHREADS):
            w, lane = divmod(tid, 32)
            src = [a_of(32 * w + l) for l in range(32)]
            bv = tid * 7 if b == "tid*7" else b
            v, pv = shfl(mode, lane, bv, c, src)
            d.append(v)
            p.append(1 if pv else 0)
    return d, p


def modes_file():
    k = len(MODE_CASES)
    d, p = modes_expect()
    out = []
    out.append("// PTX ISA 9.7.9.6 shfl.sync: all four modes with non-trivial c (segment masks c[12:8],")
    out.append("// clamp values c[4:0]), an out-of-range b, and a per-thread b register; two warps.")
    out.append("// a = 3*tid + 1000. Generated with expectations by tests/filetests/ref/shfl_ref.py modes")
    out.append("// (the spec's Semantics pseudo-code transcribed in Python). Case k writes d to arg0[64k + tid]")
    out.append("// and p (0/1) to arg1[64k + tid]. Cases:")
    for i, (mode, b, c) in enumerate(MODE_CASES):
        out.append(f"//   {i:2}: shfl.sync.{mode}.b32 b={b} c={c:#06x}")
    out.append(".version 6.4")
    out.append(".target sm_70")
    out.append(".address_size 64")
    out.append("")
    out.append(".visible .entry shfl_modes(.param .u64 pd, .param .u64 pp)")
    out.append("{")
    out.append("\t.reg .pred %p<2>;")
    out.append("\t.reg .b32 %r<8>;")
    out.append("\t.reg .b64 %rd<8>;")
    out.append("\tld.param.u64 %rd1, [pd];")
    out.append("\tld.param.u64 %rd2, [pp];")
    out.append("\tmov.u32 %r1, %tid.x;")
    out.append("\tmad.lo.u32 %r2, %r1, 3, 1000;")
    out.append("\tmul.lo.u32 %r5, %r1, 7;")
    out.append("\tmul.wide.u32 %rd3, %r1, 4;")
    out.append("\tadd.s64 %rd4, %rd1, %rd3;")
    out.append("\tadd.s64 %rd5, %rd2, %rd3;")
    for i, (mode, b, c) in enumerate(MODE_CASES):
        bop = "%r5" if b == "tid*7" else str(b)
        off = i * NTHREADS * 4
        out.append(f"\t// case {i}")
        out.append(f"\tshfl.sync.{mode}.b32 %r3|%p1, %r2, {bop}, {c:#x}, 0xffffffff;")
        out.append("\tselp.u32 %r4, 1, 0, %p1;")
        out.append(f"\tst.global.u32 [%rd4+{off}], %r3;")
        out.append(f"\tst.global.u32 [%rd5+{off}], %r4;")
    out.append("\tret;")
    out.append("}")
    out.append("")
    out.append(f"// run: shfl_modes<<<1, {NTHREADS}>>> buf:zero:{k * NTHREADS * 4} buf:zero:{k * NTHREADS * 4}")
    out.append(f"// expect: arg0 == u32:{u32list(d)}")
    out.append(f"// expect: arg1 == u32:{u32list(p)}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------ shfl_spec_examples.ptx (manual)
def scan_expect():
    """The spec's three shfl examples on x[i] = i + 1 (f32), two warps: inclusive scan,
    reverse inclusive scan, butterfly all-reduce (all sums exact in f32)."""
    x = [i + 1 for i in range(64)]
    scan, rscan, tot = [], [], []
    for i in range(64):
        w, lane = divmod(i, 32)
        seg = x[32 * w: 32 * w + 32]
        scan.append(sum(seg[: lane + 1]))
        rscan.append(sum(seg[lane:]))
        tot.append(sum(seg))
    # Also replay the example code through the model above (shfl.up c=0 / down c=0x1f /
    # bfly c=0x1f, @p add), which must agree with the closed forms.
    for w in range(2):
        v = [float(x[32 * w + l]) for l in range(32)]
        for b in (1, 2, 4, 8, 16):
            r = [shfl("up", l, b, 0x0, v) for l in range(32)]
            v = [v[l] + r[l][0] if r[l][1] else v[l] for l in range(32)]
        assert v == [float(s) for s in scan[32 * w: 32 * w + 32]]
        v = [float(x[32 * w + l]) for l in range(32)]
        for b in (1, 2, 4, 8, 16):
            r = [shfl("down", l, b, 0x1F, v) for l in range(32)]
            v = [v[l] + r[l][0] if r[l][1] else v[l] for l in range(32)]
        assert v == [float(s) for s in rscan[32 * w: 32 * w + 32]]
        v = [float(x[32 * w + l]) for l in range(32)]
        for b in (16, 8, 4, 2, 1):
            r = [shfl("bfly", l, b, 0x1F, v) for l in range(32)]
            v = [v[l] + r[l][0] for l in range(32)]
        assert v == [float(s) for s in tot[32 * w: 32 * w + 32]]
    f = lambda l: ",".join(str(v) for v in l)
    print("// expect: arg1 == f32:" + f(scan))
    print("// expect: arg2 == f32:" + f(rscan))
    print("// expect: arg3 == f32:" + f(tot))


# ----------------------------------------------------------------------- vote.ptx (manual)
M = 0x49249249  # lanes 0, 3, 6, ..., 30


def bits(lanes):
    r = 0
    for l in lanes:
        r |= 1 << l
    return r


def vote_expect():
    """Per thread 6 words: [ballot(e), all(e), any(e), uni(e), all(f), uni(g)] where the
    lanes with lane % 3 == 0 vote with membermask M and the others with ~M (two divergent
    groups); e = lane even, f = lane < 31, g = tid >= 32 (warp-uniform)."""
    out = []
    for tid in range(64):
        lane = tid % 32
        grp = [l for l in range(32) if (l % 3 == 0) == (lane % 3 == 0)]
        e = [l for l in grp if l % 2 == 0]
        f = [l for l in grp if l < 31]
        g = grp if tid >= 32 else []
        ballot = bits(e)
        out += [ballot, int(len(e) == len(grp)), int(len(e) > 0), int(len(e) in (0, len(grp))),
                int(len(f) == len(grp)), int(len(g) in (0, len(grp)))]
    assert bits(l for l in range(32) if l % 3 == 0) == M
    print("// expect: arg0 == u32:" + u32list(out))


# ---------------------------------------------------------------------- match.ptx (manual)
def match_expect():
    """Per thread 6 words, one warp:
    0: match.any.sync.b32 of v = lane / 4, full mask
    1: match.all.sync.b32 d of v = lane / 4, full mask; 2: its p
    3: match.all.sync.b32 d of 5, mask = lanes 0..15 (only those lanes, in a branch); 4: p
       (lanes 16..31 instead do match.any.sync.b32 of lane & 1 with mask 0xffff0000)
    5: match.any.sync.b64 of (lane & 1) << 40 | 7, full mask"""
    out = []
    for lane in range(32):
        v = [l // 4 for l in range(32)]
        any_ = bits(l for l in range(32) if v[l] == v[lane])
        all_same = len(set(v)) == 1
        if lane < 16:
            w3, w4 = 0x0000FFFF, 1
        else:
            w3 = bits(l for l in range(16, 32) if (l & 1) == (lane & 1))
            w4 = 0x7777
        v64 = [((l & 1) << 40) | 7 for l in range(32)]
        out += [any_, 0xFFFFFFFF if all_same else 0, int(all_same), w3, w4,
                bits(l for l in range(32) if v64[l] == v64[lane])]
    print("// expect: arg0 == u32:" + u32list(out))


# --------------------------------------------------------------- shfl_partial.ptx (manual)
def partial_expect():
    """One warp, a = 10 * lane + 7. Lanes 0..15 (in a branch): shfl.sync.idx b=3 c=0x1f
    mask 0x0000ffff, then shfl.sync.down b=2 c=0x0f (clamp 15) mask 0x0000ffff.
    Lanes 16..31 (other branch): shfl.sync.idx b=20 c=0x1f mask 0xffff0000, then
    shfl.sync.up b=1 c=0x1000 (segments of 16, lane 16 keeps its own) mask 0xffff0000.
    Per lane: [d1, d2, p2]."""
    a = [10 * l + 7 for l in range(32)]
    out = []
    for lane in range(32):
        if lane < 16:
            d1, _ = shfl("idx", lane, 3, 0x1F, a)
            d2, p2 = shfl("down", lane, 2, 0x0F, a)
            assert (lane + 2 if p2 else lane) < 16
        else:
            d1, _ = shfl("idx", lane, 20, 0x1F, a)
            d2, p2 = shfl("up", lane, 1, 0x1000, a)
            assert (lane - 1 if p2 else lane) >= 16
        out += [d1, d2, int(p2)]
    print("// expect: arg0 == u32:" + u32list(out))


# ----------------------------------------------------------------- activemask.ptx (manual)
def active_expect():
    """Block of 48 (warp 1 has 16 threads). Per thread: [activemask at entry, activemask
    inside `if (lane < 10)` / its else branch]."""
    out = []
    for tid in range(48):
        w, lane = divmod(tid, 32)
        present = range(32) if w == 0 else range(16)
        top = bits(present)
        inner = bits(l for l in present if (l < 10) == (lane < 10))
        out += [top, inner]
    print("// expect: arg0 == u32:" + u32list(out))


# ------------------------------------------------------------ shfl_multiwarp.ptx (manual)
def multiwarp_expect():
    """Block 16x3 (48 threads: warp 1 has lanes 0..15), a = 10*t + 7 with t the linear
    thread index. Per thread: bfly with b = (5*lane) & 15 (a register), idx with b = 3*t and
    c = 0x1807 (8-lane segments), up with b = t % 5 and c = 0, and the up's predicate. Every
    source lane exists and takes part, so the results are defined."""
    out = []
    for t in range(48):
        w, lane = divmod(t, 32)
        a = [10 * (32 * w + l) + 7 for l in range(32 if w == 0 else 16)]
        d1, _ = shfl("bfly", lane, (5 * lane) & 15, 0x1F, a)
        d2, _ = shfl("idx", lane, 3 * t, 0x1807, a)
        d3, p3 = shfl("up", lane, t % 5, 0, a)
        out += [d1, d2, d3, int(p3)]
    print("// expect: arg0 == u32:" + u32list(out))


# ------------------------------------------------------------ shfl_chain.ptx (manual)
CHAIN_SHAPES = [(2, (32, 2, 2)), (1, (64, 3, 1)), (1, (96, 1, 1)), (1, (16, 4, 1)), (2, (8, 4, 2))]


def chain_expect():
    """A chain of four shuffles on full warps (see shfl_chain.ptx), per launch shape: thread
    t = x + nx * (y + ny * z) of CTA c has g = c * nthreads + t and a = 7g + 3. Per thread:
    the chain's result, z * 1000 + y * 100 + x read after the chain, %laneid, and a."""
    for grid, (nx, ny, nz) in CHAIN_SHAPES:
        n = nx * ny * nz
        out = []
        for c in range(grid):
            for w in range(n // 32):
                lanes = range(32)
                ts = [32 * w + l for l in lanes]
                a = [(7 * (c * n + t) + 3) & 0xFFFFFFFF for t in ts]
                a2 = []
                for l in lanes:
                    s1, p1 = shfl("down", l, 1, 0x1F, a)
                    a2.append((a[l] + s1) & 0xFFFFFFFF if p1 else a[l])
                a3 = [(a2[l] + shfl("bfly", l, 2, 0x1F, a2)[0]) & 0xFFFFFFFF for l in lanes]
                a4 = []
                for l in lanes:
                    s3, p3 = shfl("up", l, 4, 0, a3)
                    a4.append(a3[l] ^ s3 if p3 else a3[l])
                for l in lanes:
                    t = ts[l]
                    x, y, z = t % nx, (t // nx) % ny, t // (nx * ny)
                    r = (a4[l] + shfl("idx", l, 5, 0x1F, a4)[0]) & 0xFFFFFFFF
                    out += [r, z * 1000 + y * 100 + x, l, a[l]]
        block = f"({nx},{ny},{nz})"
        print(f"// run: shfl_chain<<<{grid}, {block}>>> buf:zero:{16 * n * grid}")
        print("// expect: arg0 == u32:" + u32list(out))


def chain_local_expect():
    """shfl_chain_local in shfl_chain.ptx: thread t keeps arr[k] = 10t + k in .local memory;
    a bfly by 1 gives s = t ^ 1 (within the warp), the thread reads its own arr[s & 3], a
    down by 3 (c = 0x1f) hands that value over, and the thread adds its own arr[3]."""
    for grid, block in [(1, "64"), (1, "(16,4)")]:
        n = 64
        own = [10 * t + ((t ^ 1) & 3) for t in range(n)]
        out = []
        for t in range(n):
            w, lane = divmod(t, 32)
            v, _ = shfl("down", lane, 3, 0x1F, own[32 * w:32 * w + 32])
            out.append((v + 10 * t + 3) & 0xFFFFFFFF)
        print(f"// run: shfl_chain_local<<<{grid}, {block}>>> buf:zero:{4 * n}")
        print("// expect: arg0 == u32:" + u32list(out))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "modes"
    {"modes": lambda: sys.stdout.write(modes_file()), "scan": scan_expect, "vote": vote_expect,
     "match": match_expect, "partial": partial_expect, "active": active_expect,
     "multiwarp": multiwarp_expect, "chain": chain_expect,
     "chain_local": chain_local_expect}[what]()
