#!/usr/bin/env python3
"""Writes tests/filetests/warp/stmatrix.ptx: stmatrix (PTX ISA 8.x 9.7.14.5.16) in every
.num with and without .trans, with .shared and with generic row addresses (.x2), and
stmatrix followed by ldmatrix of the same rows.

Expected values come from the spec's definition, computed here independently of ptxr:
lanes 8i..8i+7 give the addresses of rows 0..7 of matrix i; lane l holds in register i the
fragment elements (l / 4, 2 (l % 4)) (low half) and (l / 4, 2 (l % 4) + 1) (high half) of
matrix i; with .trans the fragment is the transpose of the stored matrix, so stored element
(r, c) is fragment element (c, r).

Each lane's register i is (i * 0x1000 + 2l) | (i * 0x1000 + 2l + 1) << 16, so fragment element
(r, c) of matrix i is i * 0x1000 + 8r + c. Row r of matrix i is stored at shared byte
i * 256 + r * 32 (16-byte aligned rows 32 bytes apart: the 16 bytes after each row stay zero).
The kernel then copies the 1024 shared bytes to `out`. The round-trip kernels load the stored
rows back with ldmatrix (same .num and .trans) and write each lane's registers to `out`:
they must be the registers that were stored.
Usage: python3 tests/filetests/ref/stmatrix_ref.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "warp", "stmatrix.ptx")


def reg(l, i):
    return (i * 0x1000 + 2 * l) | (i * 0x1000 + 2 * l + 1) << 16


def stored(num, trans):
    halves = [0] * 512
    for i in range(num):
        for r in range(8):
            for c in range(8):
                fr, fc = (c, r) if trans else (r, c)
                # fragment element (fr, fc): lane 4 fr + fc // 2, half fc % 2 of register i
                v = reg(4 * fr + fc // 2, i) >> (16 * (fc % 2)) & 0xFFFF
                halves[(i * 256 + r * 32) // 2 + c] = v
    return [halves[k] | halves[k + 1] << 16 for k in range(0, 512, 2)]


def kernel(name, num, trans, roundtrip, generic=False):
    t = ".trans" if trans else ""
    sp = "" if generic else ".shared"
    regs = ", ".join(f"%v{i}" for i in range(num))
    s = [f".visible .entry {name}(.param .u64 out)", "{",
         "\t.reg .b32 %l, %m, %r, %v<4>, %w<4>, %t;", "\t.reg .b64 %o, %a, %p;",
         "\t.shared .align 16 .b8 tile[1024];",
         "\tld.param.u64 %o, [out];", "\tmov.u32 %l, %laneid;"]
    # registers: (i * 0x1000 + 2l) | (i * 0x1000 + 2l + 1) << 16
    s += ["\tshl.b32 %t, %l, 1;"]
    for i in range(num):
        s += [f"\tadd.u32 %w0, %t, {i * 0x1000};", "\tadd.u32 %w1, %w0, 1;", f"\tprmt.b32 %v{i}, %w0, %w1, 0x5410;"]
    # clear the tile: lane l zeroes bytes 32l .. 32l+31
    s += ["\tmov.u64 %a, tile;", "\tmul.wide.u32 %p, %l, 32;", "\tadd.u64 %p, %a, %p;",
          "\tst.shared.v4.u32 [%p], {0, 0, 0, 0};", "\tst.shared.v4.u32 [%p+16], {0, 0, 0, 0};",
          "\tbar.warp.sync 0xffffffff;"]
    # row address of lane l: (l / 8) * 256 + (l % 8) * 32
    s += ["\tshr.u32 %m, %l, 3;", "\tand.b32 %r, %l, 7;", "\tshl.b32 %m, %m, 8;", "\tshl.b32 %r, %r, 5;",
          "\tadd.u32 %m, %m, %r;", "\tcvt.u64.u32 %p, %m;", "\tadd.u64 %p, %a, %p;"]
    if generic:
        # the row address as a generic address of the shared window
        s += ["\tcvta.shared.u64 %p, %p;"]
    s += [f"\tstmatrix.sync.aligned.m8n8.x{num}{t}{sp}.b16 [%p], {{{regs}}};",
          "\tbar.warp.sync 0xffffffff;"]
    if roundtrip:
        back = ", ".join(f"%w{i}" for i in range(num))
        s += [f"\tldmatrix.sync.aligned.m8n8.x{num}{t}{sp}.b16 {{{back}}}, [%p];",
              f"\tmul.wide.u32 %a, %l, {4 * num};", "\tadd.u64 %o, %o, %a;"]
        s += [f"\tst.global.u32 [%o+{4 * i}], %w{i};" for i in range(num)]
    else:
        s += ["\tmul.wide.u32 %p, %l, 32;", "\tadd.u64 %a, %a, %p;", "\tadd.u64 %o, %o, %p;",
              "\tld.shared.v4.u32 {%w0, %w1, %w2, %w3}, [%a];", "\tst.global.v4.u32 [%o], {%w0, %w1, %w2, %w3};",
              "\tld.shared.v4.u32 {%w0, %w1, %w2, %w3}, [%a+16];", "\tst.global.v4.u32 [%o+16], {%w0, %w1, %w2, %w3};"]
    s += ["\tret;", "}", ""]
    return s


def main():
    lines = ["// stmatrix (PTX ISA 8.x 9.7.14.5.16), .x1/.x2/.x4 with and without .trans, and",
             "// stmatrix followed by ldmatrix of the same rows. Written by",
             "// tests/filetests/ref/stmatrix_ref.py, whose docstring works out the expected values from",
             "// the spec's definition; do not edit by hand.",
             ".version 7.8", ".target sm_90", ".address_size 64", ""]
    runs = []
    for num in (1, 2, 4):
        for trans in (False, True):
            name = f"stmatrix_x{num}{'_trans' if trans else ''}"
            lines += kernel(name, num, trans, False)
            runs.append(f"// run: {name}<<<1, 32>>> buf:zero:1024")
            runs.append("// expect: arg0 == u32:" + ",".join(f"0x{w:08x}" for w in stored(num, trans)))
            rt = name + "_ldmatrix"
            lines += kernel(rt, num, trans, True)
            runs.append(f"// run: {rt}<<<1, 32>>> buf:zero:{128 * num}")
            runs.append("// expect: arg0 == u32:" + ",".join(f"0x{reg(l, i):08x}" for l in range(32) for i in range(num)))
    # Generic row addresses (no .shared: the spec's generic form, pointing into shared memory).
    for trans in (False, True):
        name = f"stmatrix_x2{'_trans' if trans else ''}_generic"
        lines += kernel(name, 2, trans, False, generic=True)
        runs.append(f"// run: {name}<<<1, 32>>> buf:zero:1024")
        runs.append("// expect: arg0 == u32:" + ",".join(f"0x{w:08x}" for w in stored(2, trans)))
        rt = name + "_ldmatrix"
        lines += kernel(rt, 2, trans, True, generic=True)
        runs.append(f"// run: {rt}<<<1, 32>>> buf:zero:256")
        runs.append("// expect: arg0 == u32:" + ",".join(f"0x{reg(l, i):08x}" for l in range(32) for i in range(2)))
    with open(OUT, "w") as f:
        f.write("\n".join(lines + runs) + "\n")


main()
