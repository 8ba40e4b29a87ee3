// Non-inlined __device__ functions (real .func calls with parameters and return values), two
// levels deep, no recursion.
#include "prelude.h"

// Number of Collatz steps to reach 1 from x (x >= 1), capped at `limit`.
extern "C" __device__ __noinline__ int collatz_steps(unsigned x, int limit) {
  int steps = 0;
  while (x != 1u && steps < limit) {
    x = (x & 1u) ? 3u * x + 1u : x >> 1;
    ++steps;
  }
  return steps;
}

// Greatest common divisor of |a| and |b| (gcd(0, 0) = 0).
extern "C" __device__ __noinline__ int gcd(int a, int b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b != 0) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Calls the two functions above.
extern "C" __device__ __noinline__ int combine(int v) {
  return collatz_steps((unsigned)(v & 0xffff) + 1u, 500) * 1000 + gcd(v, 360);
}

// Horner evaluation: coeffs[0] + coeffs[1]*x + ... + coeffs[deg]*x^deg, evaluated as
// acc = coeffs[deg]; for k = deg-1 .. 0: acc = acc * x + coeffs[k] (may be contracted to fma).
extern "C" __device__ __noinline__ float horner(float x, const float *coeffs, int deg) {
  float acc = coeffs[deg];
  for (int k = deg - 1; k >= 0; --k) acc = acc * x + coeffs[k];
  return acc;
}

// For i < n: out[i] = combine(in[i])
//   = collatz_steps((in[i] & 0xffff) + 1, 500) * 1000 + gcd(in[i], 360).
extern "C" __global__ void device_calls(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = combine(in[i]);
}

// For i < n: out[i] = horner(x[i], coeffs, deg) (coeffs has deg + 1 entries).
extern "C" __global__ void poly_eval(const float *x, const float *coeffs, float *out, int deg,
                                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = horner(x[i], coeffs, deg);
}
