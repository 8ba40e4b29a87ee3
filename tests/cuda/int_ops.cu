// Integer intrinsics and arithmetic: popc, clz, brev, byte_perm, funnel shift, mul.hi, 64-bit
// multiply, signed division/remainder, shifts.
#include "prelude.h"

// For i < n, with x = a[i], y = b[i] (unsigned 32-bit), out[10*i + k] is:
//   k=0: __popc(x)                   k=1: __clz(x)  (32 for x == 0)
//   k=2: __brev(x) (bit reverse)     k=3: __byte_perm(x, y, y & 0x7777): result byte m =
//        byte ((y >> 4m) & 7) of the 8-byte value (y:x) (bytes 0-3 from x, 4-7 from y)
//   k=4: __funnelshift_l(x, y, y) = high 32 bits of ((y:x) << (y & 31))
//   k=5: __umulhi(x, y) = (x * y) >> 32 (64-bit product)
//   k=6: (unsigned)((int)x / d), k=7: (unsigned)((int)x % d) with d = (int)(y | 1) (C
//        truncating semantics; d is odd so never 0; avoid x = 0x80000000 with
//        y >= 0xfffffffe, i.e. INT_MIN / -1, whose result PTX leaves unspecified)
//   k=8: ((int)x >> (y & 31)) arithmetic shift, as unsigned
//   k=9: __mulhi((int)x, (int)y) = high 32 bits of the signed 64-bit product
// and out64[i] = ((u64)y << 32 | x) * 0x9E3779B97F4A7C15 + (u64)x * (u64)y (mod 2^64).
extern "C" __global__ void int_ops(const unsigned *a, const unsigned *b, unsigned *out,
                                   unsigned long long *out64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned *o = out + 10 * i;
  o[0] = __popc(x);
  o[1] = __clz((int)x);
  o[2] = __brev(x);
  o[3] = __byte_perm(x, y, y & 0x7777u);
  o[4] = __funnelshift_l(x, y, y);
  o[5] = __umulhi(x, y);
  int d = (int)(y | 1u);
  o[6] = (unsigned)((int)x / d);
  o[7] = (unsigned)((int)x % d);
  o[8] = (unsigned)((int)x >> (y & 31u));
  o[9] = (unsigned)__mulhi((int)x, (int)y);
  unsigned long long wide = ((unsigned long long)y << 32) | x;
  out64[i] = wide * 0x9E3779B97F4A7C15ull + (unsigned long long)x * (unsigned long long)y;
}
