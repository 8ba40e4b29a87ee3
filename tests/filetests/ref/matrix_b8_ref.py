#!/usr/bin/env python3
"""Writes tests/filetests/warp/matrix_b8.ptx: the 8-bit forms of ldmatrix and stmatrix of PTX 8.6
(sm_100a), with expected values worked here.

The ISA draws their thread-to-element maps as figures. The maps used here are the ones
CUTLASS's copy traits give the instructions (cute/atom/copy_traits_sm100.hpp):
- stmatrix.sync.aligned.m16n8.xN.trans.b8 (SM100_U8x16_STSM_T, registers passed as they are):
  lane l's register i, byte b is element (l / 4 + 8 (b / 2), 2 (l % 4) + b % 2) of a 16 x 8
  matrix, stored transposed: at byte l / 4 + 8 (b / 2) of row 2 (l % 4) + b % 2, the row whose
  address lane 8 i + that row gives;
- ldmatrix.sync.aligned.m16n16.xN.trans.b8 (SM100_U8x8_LDSM_T / SM100_U8x16_LDSM_T, with the
  byte exchange those copies apply after the instruction undone): lane l's register 2 i + j,
  byte c is byte l / 4 + 8 j of row 4 (l % 4) + c of matrix i, the rows at the addresses of
  lanes 16 i .. 16 i + 15.
TVM's numerical model of stmatrix .m16n8 .b8 gives the same map.

The rows lie at permuted, padded places (row stride 48 bytes, a permutation of the lanes that
give them), so that a lowering that ignores the lanes' addresses fails.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "warp", "matrix_b8.ptx")
STRIDE = 48


def perm(k):
    """The memory slot of row k (0..31) of the buffer."""
    return (k * 11 + 5) % 32


def ld_case(num):
    # buffer: 32 slots of 48 bytes; slot s holds bytes (s * 37 + x * 13 + 1) % 256 at 16 + x
    buf = bytearray(32 * STRIDE)
    for s in range(32):
        for x in range(16):
            buf[s * STRIDE + 16 + x] = (s * 37 + x * 13 + 1) % 256
    # lane L gives the address of slot perm(L), byte 16
    out = []
    for l in range(32):
        for i in range(num):
            for j in range(2):
                w = 0
                for c in range(4):
                    row_lane = 16 * i + 4 * (l % 4) + c
                    s = perm(row_lane)
                    w |= buf[s * STRIDE + 16 + l // 4 + 8 * j] << (8 * c)
                out.append(w)
    return buf, out


def st_case(num):
    # lane l's register i = bytes (l * 29 + i * 71 + b * 17 + 3) % 256, b = 0..3
    regs = [[sum(((l * 29 + i * 71 + b * 17 + 3) % 256) << (8 * b) for b in range(4)) for i in range(num)] for l in range(32)]
    buf = bytearray(32 * STRIDE)
    for l in range(32):
        for i in range(num):
            for b in range(4):
                row = 2 * (l % 4) + b % 2
                col = l // 4 + 8 * (b // 2)
                s = perm(8 * i + row)
                buf[s * STRIDE + 16 + col] = (regs[l][i] >> (8 * b)) & 0xFF
    return regs, buf


def words(b):
    return [int.from_bytes(b[k:k + 4], "little") for k in range(0, len(b), 4)]


def ld_kernel(num):
    n = 2 * num
    regs = ", ".join(f"%d{k}" for k in range(n))
    s = [f".visible .entry ld_x{num}(.param .u64 pin, .param .u64 pout)", "{",
         "\t.reg .pred %p<2>;", f"\t.reg .b32 %t, %x, %s, %d<{n}>;", "\t.reg .b64 %in, %o, %a, %q, %sh;",
         f"\t.shared .align 16 .b8 buf[{32 * STRIDE}];",
         "\tld.param.u64 %in, [pin];", "\tld.param.u64 %o, [pout];", "\tmov.u32 %t, %tid.x;",
         "\t// the buffer into shared memory, a word per lane at a time",
         "\tmov.u32 %x, %t;",
         "COPY:", "\tmul.wide.u32 %q, %x, 4;", "\tadd.u64 %a, %in, %q;", "\tld.global.u32 %s, [%a];",
         "\tmov.u64 %sh, buf;", "\tadd.u64 %sh, %sh, %q;", "\tst.shared.u32 [%sh], %s;",
         "\tadd.u32 %x, %x, 32;", f"\tsetp.lt.u32 %p1, %x, {32 * STRIDE // 4};", "\t@%p1 bra COPY;",
         "\tbar.warp.sync -1;",
         "\t// lane L: slot (11 L + 5) % 32, byte 16",
         "\tmad.lo.u32 %s, %t, 11, 5;", "\tand.b32 %s, %s, 31;", f"\tmad.lo.u32 %s, %s, {STRIDE}, 16;",
         "\tmov.u32 %x, buf;", "\tadd.u32 %x, %x, %s;",
         f"\tldmatrix.sync.aligned.m16n16.x{num}.trans.shared.b8 {{{regs}}}, [%x];",
         f"\tmul.wide.u32 %q, %t, {4 * n};", "\tadd.u64 %a, %o, %q;"]
    for k in range(n):
        s.append(f"\tst.global.u32 [%a+{4 * k}], %d{k};")
    s += ["\tret;", "}"]
    return "\n".join(s)


def st_kernel(num):
    regs = ", ".join(f"%r{k}" for k in range(num))
    s = [f".visible .entry st_x{num}(.param .u64 pregs, .param .u64 pout)", "{",
         "\t.reg .pred %p<2>;", f"\t.reg .b32 %t, %x, %s, %r<{num}>;", "\t.reg .b64 %rg, %o, %a, %q, %sh;",
         f"\t.shared .align 16 .b8 buf[{32 * STRIDE}];",
         "\tld.param.u64 %rg, [pregs];", "\tld.param.u64 %o, [pout];", "\tmov.u32 %t, %tid.x;",
         "\t// zero the buffer",
         "\tmov.u32 %x, %t;",
         "ZERO:", "\tmul.wide.u32 %q, %x, 4;", "\tmov.u64 %sh, buf;", "\tadd.u64 %sh, %sh, %q;",
         "\tst.shared.u32 [%sh], 0;", "\tadd.u32 %x, %x, 32;", f"\tsetp.lt.u32 %p1, %x, {32 * STRIDE // 4};", "\t@%p1 bra ZERO;",
         "\tbar.warp.sync -1;",
         f"\tmul.wide.u32 %q, %t, {4 * num};", "\tadd.u64 %a, %rg, %q;"]
    for k in range(num):
        s.append(f"\tld.global.u32 %r{k}, [%a+{4 * k}];")
    s += ["\tmad.lo.u32 %s, %t, 11, 5;", "\tand.b32 %s, %s, 31;", f"\tmad.lo.u32 %s, %s, {STRIDE}, 16;",
          "\tmov.u32 %x, buf;", "\tadd.u32 %x, %x, %s;",
          f"\tstmatrix.sync.aligned.m16n8.x{num}.trans.shared.b8 [%x], {{{regs}}};",
          "\tbar.warp.sync -1;",
          "\t// the buffer out, a word per lane at a time",
          "\tmov.u32 %x, %t;",
          "OUT:", "\tmul.wide.u32 %q, %x, 4;", "\tmov.u64 %sh, buf;", "\tadd.u64 %sh, %sh, %q;",
          "\tld.shared.u32 %s, [%sh];", "\tadd.u64 %a, %o, %q;", "\tst.global.u32 [%a], %s;",
          "\tadd.u32 %x, %x, 32;", f"\tsetp.lt.u32 %p1, %x, {32 * STRIDE // 4};", "\t@%p1 bra OUT;",
          "\tret;", "}"]
    return "\n".join(s)


HEAD = """// The 8-bit ldmatrix and stmatrix of PTX 8.6 (sm_100a): ldmatrix .m16n16 .trans .b8 (.x1, .x2)
// and stmatrix .m16n8 .trans .b8 (.x1, .x2, .x4), the rows at permuted, padded addresses.
// Expected values computed by tests/filetests/ref/matrix_b8_ref.py (its docstring gives the
// thread-to-element maps and where they come from), independently of ptxr; do not edit by hand.
.version 8.7
.target sm_100a
.address_size 64
"""


def main():
    parts = [HEAD]
    for num in (1, 2):
        buf, out = ld_case(num)
        parts.append(ld_kernel(num))
        parts.append(f"// run: ld_x{num}<<<1, 32>>> buf:u32:" + ",".join(map(str, words(buf))) + f" buf:zero:{32 * 8 * num}")
        parts.append("// expect: arg1 == u32:" + ",".join(map(str, out)))
    for num in (1, 2, 4):
        regs, buf = st_case(num)
        parts.append(st_kernel(num))
        flat = [w for l in regs for w in l]
        parts.append(f"// run: st_x{num}<<<1, 32>>> buf:u32:" + ",".join(map(str, flat)) + f" buf:zero:{32 * STRIDE}")
        parts.append("// expect: arg1 == u32:" + ",".join(map(str, words(buf))))
    with open(OUT, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
