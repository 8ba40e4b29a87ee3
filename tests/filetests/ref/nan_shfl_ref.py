#!/usr/bin/env python3
"""Expected output of tests/filetests/warp/nan_shfl.ptx, from the PTX's meaning: f32
arithmetic with a NaN result gives the canonical NaN 0x7fffffff (every f32 instruction but
copysign, as measured on an H100 for tests/filetests/gpu), mov.b32 and shfl.sync copy bits
unchanged (PTX ISA 9.7.8.5: a source lane out of range gives the own value)."""
import math
import struct

def f(b):
    return struct.unpack('<f', struct.pack('<I', b))[0]

def bits(x):
    return 0x7fffffff if math.isnan(x) else struct.unpack('<I', struct.pack('<f', x))[0]

inp = [struct.unpack('<I', struct.pack('<f', float(l)))[0] for l in range(32)]
inp[3], inp[10], inp[20] = 0x7fc12345, 0xffa00001, 0x7f800000
a = [f(b) for b in inp]
s = [x + 1.0 for x in a]                      # add.f32 %s, %a, 1.0
t = [s[l] + s[l ^ 1] for l in range(32)]      # bfly 1, then add.f32
u = [x * 2.0 for x in a]                      # mul.f32 %u, %a, 2.0
d = [u[l + 1] if l < 31 else u[l] for l in range(32)]  # down 1, bits stored
p = [1 if math.isnan(s[l ^ 1]) else 0 for l in range(32)]  # setp.nan of the shuffled copy
print("// run: nan_shfl<<<1, 32>>> buf:u32:" + ",".join(hex(b) for b in inp) + " buf:zero:128 buf:zero:128 buf:zero:128")
print("// expect: arg1 == u32:" + ",".join(hex(bits(x)) for x in t))
print("// expect: arg2 == u32:" + ",".join(hex(bits(x)) for x in d))
print("// expect: arg3 == u32:" + ",".join(str(x) for x in p))
