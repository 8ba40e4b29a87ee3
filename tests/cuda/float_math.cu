// Single-precision math: sqrt, rsqrt, fast exp/sin, min/max, division and float<->int
// conversions with explicit rounding modes.
#include "prelude.h"

// For i < n, with u = x[i], v = y[i], out[8*i + k] is:
//   k=0: sqrtf(fabsf(u))           (IEEE, correctly rounded)
//   k=1: rsqrtf(fabsf(u) + 1.0f)   (approximate, ~2 ulp)
//   k=2: __expf(u)                 (fast approximate exp, 2^(u*log2 e))
//   k=3: __sinf(u)                 (fast approximate sin; accurate for |u| <= pi)
//   k=4: fminf(u, v)               k=5: fmaxf(u, v)     (NaN-ignoring, IEEE minNum/maxNum)
//   k=6: u / v                     (IEEE division, correctly rounded)
//   k=7: (float)__float2int_rz(u)  (truncate, then convert back)
// and iout[4*i + k] = __float2int_rn(u), __float2int_rz(u), __float2int_rd(u),
// __float2int_ru(u) (k = 0..3; out-of-range saturates to INT_MIN/INT_MAX, NaN -> 0).
extern "C" __global__ void float_math(const float *x, const float *y, float *out, int *iout,
                                      int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float u = x[i], v = y[i];
  float *o = out + 8 * i;
  o[0] = sqrtf(fabsf(u));
  o[1] = rsqrtf(fabsf(u) + 1.0f);
  o[2] = __expf(u);
  o[3] = __sinf(u);
  o[4] = fminf(u, v);
  o[5] = fmaxf(u, v);
  o[6] = u / v;
  o[7] = (float)__float2int_rz(u);
  int *io = iout + 4 * i;
  io[0] = __float2int_rn(u);
  io[1] = __float2int_rz(u);
  io[2] = __float2int_rd(u);
  io[3] = __float2int_ru(u);
}

// For i < n: out[i] = __int2float_rn(k[i]) * 0.5f + __uint2float_rn((unsigned)k[i]) (the two
// conversions round to nearest even; the final expression may be contracted to an f32 fma).
extern "C" __global__ void int_to_float(const int *k, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __int2float_rn(k[i]) * 0.5f + __uint2float_rn((unsigned)k[i]);
}
