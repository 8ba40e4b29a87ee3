#!/usr/bin/env python3
"""Random warp programs, run on a real GPU: divergent branches (nested), loops with per-lane
trip counts, and warp collectives whose membermask is exactly the set of lanes that execute
them (computed with vote.sync.ballot before the lanes split), so every result is defined by the
spec: shfl.sync in all modes at full-warp level (whole warps, no lane exited), partial last
warps and lanes that exit early (the survivors' ballot is the mask from then on), leader broadcasts (shfl.sync.idx from the lowest
lane of the mask, and from the next lane of the mask through popc/fns/%lanemask_lt) inside
divergent code, 1-D and 2-D blocks, vote.sync (all/any/uni/ballot), match.any/all.sync, redux.sync (sm_80),
redux-free integer arithmetic, bar.warp.sync, and bar.sync with shared-memory exchange and
red.shared and bar.red.{popc,and,or} at CTA level.

On a machine with an NVIDIA GPU and CuPy:
    python3 tests/filetests/ref/warp_fuzz.py --out tests/filetests/gpu --count 40 --seed 1
writes warp_*.ptx filetests whose `// expect:` values are the GPU's results.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))

NREG = 6


class Gen:
    def __init__(self, rng, block):
        self.rng = rng
        self.block = block
        self.lines = []
        self.label = 0
        self.tmp = 0
        self.decls = []

    def emit(self, s):
        self.lines.append("\t" + s)

    def new_label(self):
        self.label += 1
        return "L%d" % self.label

    def reg(self):
        return "%%r%d" % self.rng.randrange(NREG)

    def alu(self):
        r = self.rng
        d, a, b = self.reg(), self.reg(), self.reg()
        op = r.choice(["add.u32 {d}, {a}, {b}", "xor.b32 {d}, {a}, {b}", "mul.lo.u32 {d}, {a}, {b}",
                       "shl.b32 {d}, {a}, %d" % r.randrange(1, 8), "shr.u32 {d}, {a}, %d" % r.randrange(1, 8),
                       "min.s32 {d}, {a}, {b}", "max.u32 {d}, {a}, {b}", "sub.u32 {d}, {a}, {b}",
                       "add.u32 {d}, {a}, %d" % r.randrange(1, 1000), "and.b32 {d}, {a}, %d" % r.randrange(1, 1 << 16)])
        self.emit(op.format(d=d, a=a, b=b) + ";")

    def collective(self, mask, full):
        """One collective executed by exactly the lanes of `mask` (a register or immediate)."""
        r = self.rng
        d, a = self.reg(), self.reg()
        kinds = ["vote", "ballot", "match_any", "match_all", "leader", "warpsync", "rotate", "redux"]
        if full:
            kinds += ["shfl", "shfl", "shfl"]
        k = r.choice(kinds)
        if k == "shfl":
            mode = r.choice(["up", "down", "bfly", "idx"])
            b = r.randrange(0, 32) if r.random() < 0.7 else None
            seg = r.choice([0, 0, 0x18, 0x1c, 0x10])
            c = (seg << 8) | (r.randrange(32) if mode != "up" else r.randrange(0, 8))
            if mode != "up" and seg == 0:
                c |= 0x1f
            bop = str(b) if b is not None else self.reg()
            if b is None:
                self.emit("and.b32 %%t1, %s, 31;" % bop)
                bop = "%t1"
            self.emit("shfl.sync.%s.b32 %s|%%p2, %s, %s, %d, %s;" % (mode, d, a, bop, c, mask))
            self.emit("@%%p2 add.u32 %s, %s, 0x100;" % (d, d))
        elif k == "rotate":
            # from the next lane of the mask (cyclically): rank = popc(mask & lanemask_lt),
            # source = fns(mask, 0, (rank + 1) % popc(mask) + 1)
            self.emit("mov.u32 %t1, %lanemask_lt;")
            self.emit("and.b32 %%t1, %%t1, %s;" % mask)
            self.emit("popc.b32 %t1, %t1;")
            self.emit("add.u32 %t1, %t1, 1;")
            self.emit("popc.b32 %%t3, %s;" % mask)
            self.emit("rem.u32 %t1, %t1, %t3;")
            self.emit("add.u32 %t1, %t1, 1;")
            self.emit("fns.b32 %%t1, %s, 0, %%t1;" % mask)
            self.emit("shfl.sync.idx.b32 %s, %s, %%t1, 31, %s;" % (d, a, mask))
        elif k == "redux":
            # PTX ISA 9.7.12.10 redux.sync (sm_80)
            op, ty = r.choice([("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"),
                               ("max", "s32"), ("and", "b32"), ("or", "b32"), ("xor", "b32")])
            self.emit("redux.sync.%s.%s %%t1, %s, %s;" % (op, ty, a, mask))
            self.emit("xor.b32 %s, %s, %%t1;" % (d, d))
        elif k == "leader":
            # broadcast from the lowest lane of the mask
            self.emit("brev.b32 %%t1, %s;" % mask)
            self.emit("clz.b32 %t1, %t1;")
            self.emit("shfl.sync.idx.b32 %s, %s, %%t1, 31, %s;" % (d, a, mask))
        elif k == "vote":
            mode = r.choice(["all", "any", "uni"])
            self.emit("and.b32 %%t1, %s, %d;" % (a, r.choice([1, 3, 0x10, 0x100])))
            self.emit("setp.ne.u32 %p3, %t1, 0;")
            self.emit("vote.sync.%s.pred %%p4, %s%%p3, %s;" % (mode, r.choice(["", "!"]), mask))
            self.emit("selp.u32 %t1, 7, 3, %p4;")
            self.emit("add.u32 %s, %s, %%t1;" % (d, d))
        elif k == "ballot":
            self.emit("and.b32 %%t1, %s, %d;" % (a, r.choice([1, 2, 0x40])))
            self.emit("setp.ne.u32 %p3, %t1, 0;")
            self.emit("vote.sync.ballot.b32 %%t1, %%p3, %s;" % mask)
            self.emit("xor.b32 %s, %s, %%t1;" % (d, d))
        elif k in ("match_any", "match_all"):
            self.emit("and.b32 %%t1, %s, %d;" % (a, r.choice([1, 3, 7])))
            if k == "match_any":
                self.emit("match.any.sync.b32 %%t1, %%t1, %s;" % mask)
            else:
                self.emit("match.all.sync.b32 %%t1|%%p3, %%t1, %s;" % mask)
                self.emit("@%%p3 add.u32 %s, %s, 0x10000;" % (d, d))
            self.emit("add.u32 %s, %s, %%t1;" % (d, d))
        else:
            self.emit("bar.warp.sync %s;" % mask)
            self.emit("add.u32 %s, %s, 1;" % (d, d))

    def block_stmts(self, mask, full, depth, n):
        for _ in range(n):
            x = self.rng.random()
            if x < 0.35:
                self.alu()
            elif x < 0.7:
                self.collective(mask, full)
            elif x < 0.85 and depth < 2:
                self.branch(mask, depth)
            elif depth < 2:
                self.loop(mask, depth)
            else:
                self.alu()

    def fresh_mask(self):
        self.tmp += 1
        name = "%%m%d" % self.tmp
        self.decls.append(name)
        return name

    def branch(self, mask, depth):
        """if (cond) {A} else {B}: each side's collectives use the ballot of its lanes."""
        r = self.rng
        src = r.choice(["%lane", self.reg()])
        bit = r.choice([1, 2, 4, 8, 16, 3, 5])
        self.emit("and.b32 %%t1, %s, %d;" % (src, bit))
        self.emit("setp.ne.u32 %p1, %t1, 0;")
        m_then = self.fresh_mask()
        m_else = self.fresh_mask()
        self.emit("vote.sync.ballot.b32 %s, %%p1, %s;" % (m_then, mask))
        self.emit("not.b32 %s, %s;" % (m_else, m_then))
        self.emit("and.b32 %s, %s, %s;" % (m_else, m_else, mask))
        l_else, l_end = self.new_label(), self.new_label()
        self.emit("@!%%p1 bra %s;" % l_else)
        self.block_stmts(m_then, False, depth + 1, r.randrange(1, 4))
        self.emit("bra %s;" % l_end)
        self.lines.append("%s:" % l_else)
        self.block_stmts(m_else, False, depth + 1, r.randrange(1, 4))
        self.lines.append("%s:" % l_end)

    def loop(self, mask, depth):
        """Per-lane trip count 0..3; each iteration's collectives use the ballot of the lanes
        still looping."""
        r = self.rng
        self.tmp += 1
        cnt = "%%c%d" % self.tmp
        self.decls.append(cnt)
        self.emit("and.b32 %s, %s, 3;" % (cnt, self.reg()))
        cur = self.fresh_mask()
        nxt = self.fresh_mask()
        self.emit("mov.b32 %s, %s;" % (cur, mask))
        l_top, l_exit = self.new_label(), self.new_label()
        self.lines.append("%s:" % l_top)
        self.emit("setp.ne.u32 %%p1, %s, 0;" % cnt)
        self.emit("vote.sync.ballot.b32 %s, %%p1, %s;" % (nxt, cur))
        self.emit("@!%%p1 bra %s;" % l_exit)
        self.emit("mov.b32 %s, %s;" % (cur, nxt))
        self.block_stmts(cur, False, depth + 1, r.randrange(1, 3))
        self.emit("sub.u32 %s, %s, 1;" % (cnt, cnt))
        self.emit("bra %s;" % l_top)
        self.lines.append("%s:" % l_exit)

    def cta_exchange(self):
        """bar.sync-separated shared-memory exchange and a shared reduction."""
        r = self.rng
        k = r.randrange(1, self.block)
        a, d = self.reg(), self.reg()
        self.emit("st.shared.u32 [%t2], " + a + ";")
        self.emit("bar.sync 0;")
        self.emit("add.u32 %%t1, %%tx, %d;" % k)
        self.emit("rem.u32 %%t1, %%t1, %d;" % self.block)
        self.emit("shl.b32 %t1, %t1, 2;")
        self.emit("add.u32 %t1, %t1, %xb;")
        self.emit("ld.shared.u32 %t3, [%t1];")
        self.emit("add.u32 %s, %s, %%t3;" % (d, d))
        self.emit("and.b32 %%t3, %s, 255;" % a)
        self.emit("red.shared.add.u32 [sum], %t3;")
        red = r.choice(["popc", "and", "or"])
        self.emit("and.b32 %%t1, %s, %d;" % (a, r.choice([1, 4, 0x100])))
        self.emit("setp.ne.u32 %p3, %t1, 0;")
        if red == "popc":
            self.emit("bar.red.popc.u32 %t1, 0, %p3;")
            self.emit("add.u32 %s, %s, %%t1;" % (d, d))
        else:
            self.emit("bar.red.%s.pred %%p4, 0, %%p3;" % red)
            self.emit("@%%p4 add.u32 %s, %s, 0x1000;" % (d, d))
        self.emit("ld.shared.u32 %t3, [sum];")
        self.emit("xor.b32 %s, %s, %%t3;" % (d, d))
        self.emit("bar.sync 0;")


def program(rng, name, block):
    g = Gen(rng, block)
    g.emit("mov.u32 %tx, %tid.y;")
    g.emit("mov.u32 %t1, %ntid.x;")
    g.emit("mov.u32 %t3, %tid.x;")
    g.emit("mad.lo.u32 %tx, %tx, %t1, %t3;")
    g.emit("and.b32 %lane, %tx, 31;")
    g.emit("mov.u32 %xb, xch;")
    g.emit("shl.b32 %t2, %tx, 2;")
    g.emit("add.u32 %t2, %t2, %xb;")
    g.emit("ld.param.u64 %ad, [pin];")
    g.emit("mov.u32 %t1, %ctaid.x;")
    g.emit("mad.lo.u32 %%t1, %%t1, %d, %%tx;" % block)
    g.emit("mul.wide.u32 %%off, %%t1, %d;" % (4 * NREG))
    g.emit("add.s64 %ad, %ad, %off;")
    for k in range(NREG):
        g.emit("ld.global.u32 %%r%d, [%%ad+%d];" % (k, 4 * k))
    g.emit("setp.eq.u32 %p1, %tx, 0;")
    g.emit("@%p1 st.shared.u32 [sum], 0;")
    g.emit("bar.sync 0;")
    # %mall: the lanes of this warp that exist (a partial last warp has fewer), then the ones
    # that have not exited. shl by 32 gives 0 in PTX, so (1 << 32) - 1 is the full mask.
    g.emit("shr.u32 %t1, %tx, 5;")
    g.emit("shl.b32 %t1, %t1, 5;")
    g.emit("sub.u32 %%t1, %d, %%t1;" % block)
    g.emit("min.u32 %t1, %t1, 32;")
    g.emit("shl.b32 %mall, 1, %t1;")
    g.emit("sub.u32 %mall, %mall, 1;")
    exited = False
    for _ in range(rng.randrange(4, 9)):
        x = rng.random()
        full = block % 32 == 0 and not exited
        if x < 0.22:
            g.alu()
        elif x < 0.5:
            g.collective("%mall", full)
        elif x < 0.68:
            g.branch("%mall", 0)
        elif x < 0.82:
            g.loop("%mall", 0)
        elif x < 0.9 and not exited:
            g.cta_exchange()
        else:
            # some lanes leave early (after storing their registers); the others go on with
            # the ballot of the survivors as their mask
            g.emit("and.b32 %%t1, %s, 7;" % g.reg())
            g.emit("setp.eq.u32 %p1, %t1, 0;")
            g.emit("vote.sync.ballot.b32 %mall, !%p1, %mall;")
            g.emit("@%p1 bra DONE;")
            exited = True
    g.lines.append("DONE:")
    g.emit("ld.param.u64 %ad, [pout];")
    g.emit("add.s64 %ad, %ad, %off;")
    for k in range(NREG):
        g.emit("st.global.u32 [%%ad+%d], %%r%d;" % (4 * k, k))
    g.emit("ret;")
    head = [".visible .entry %s(.param .u64 pin, .param .u64 pout)" % name, "{",
            "\t.reg .b32 %%r<%d>;" % NREG, "\t.reg .b32 %tx, %lane, %t1, %t2, %t3, %xb, %mall;", "\t.reg .b64 %ad, %off;",
            "\t.reg .pred %p1, %p2, %p3, %p4;", "\t.shared .align 4 .b8 xch[%d];" % (4 * block),
            "\t.shared .align 4 .u32 sum;"]
    head += ["\t.reg .b32 %s;" % d for d in g.decls]
    return "\n".join(head + g.lines + ["}"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dry", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    kernels = []
    for i in range(a.count):
        bx, by = rng.choice([(32, 1), (64, 1), (96, 1), (16, 4), (8, 8), (32, 3), (48, 1), (80, 1), (100, 1), (20, 3)])
        block = bx * by
        name = "warp_%d" % i
        text = program(rng, name, block)
        ins = [rng.getrandbits(32) if rng.random() < 0.6 else rng.randrange(64) for _ in range(2 * block * NREG)]
        kernels.append((name, text, (bx, by), ins))
    dev, results = "(dry run)", {}
    if not a.dry:
        import cupy as cp
        from ptxgen import load_ptx
        import numpy as np
        dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        for name, text, (bx, by), ins in kernels:
            block = bx * by
            fn = load_ptx(cp, ".version 7.0\n.target sm_80\n.address_size 64\n\n" + text + "\n").get_function(name)
            out = cp.zeros(2 * block * NREG, dtype=np.uint32)
            fn((2,), (bx, by), (cp.asarray(np.array(ins, dtype=np.uint32)), out))
            cp.cuda.Device().synchronize()
            results[name] = [int(v) for v in out.get()]
    os.makedirs(a.out, exist_ok=True)
    lines = ["// Random warp programs (tests/filetests/ref/warp_fuzz.py --count %d --seed %d): divergent and" % (a.count, a.seed),
             "// nested branches, loops with per-lane trip counts, warp collectives whose membermask is the",
             "// ballot of the lanes that execute them, bar.sync with shared memory. Every `// expect:`",
             "// value is the result an %s gave for the same kernel (CuPy, driver PTX JIT)." % dev,
             "// Do not edit by hand.", ".version 7.0", ".target sm_80", ".address_size 64", ""]
    for name, text, (bx, by), ins in kernels:
        block = bx * by
        lines.append(text)
        lines.append("// run: %s<<<2, (%d,%d)>>> buf:u32:%s buf:zero:%d" % (name, bx, by, ",".join("0x%x" % v for v in ins), 8 * block * NREG))
        lines.append("// expect: arg1 == u32:%s" % ",".join("0x%x" % v for v in results.get(name, [0] * (2 * block * NREG))))
        lines.append("")
    with open(os.path.join(a.out, "warp_fuzz.ptx"), "w") as f:
        f.write("\n".join(lines))
    print("%d warp programs on %s" % (len(kernels), dev))


if __name__ == "__main__":
    main()
