// Half-precision arithmetic (scalar f16 and packed f16x2), via the prelude's half_t/half2_t
// helpers. All values are IEEE binary16 bit patterns; every op rounds to nearest even in f16.
#include "prelude.h"

// For i < n: out[4*i + 0] = a[i] + b[i], out[4*i + 1] = a[i] * b[i],
//            out[4*i + 2] = fma(a[i], b[i], c[i]) (single rounding),
//            out[4*i + 3] = (a[i] > b[i]) ? a[i] : b[i].
extern "C" __global__ void f16_ops(const half_t *a, const half_t *b, const half_t *c, half_t *out,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  half_t x = a[i], y = b[i], z = c[i];
  out[4 * i + 0] = hadd(x, y);
  out[4 * i + 1] = hmul(x, y);
  out[4 * i + 2] = hfma(x, y, z);
  out[4 * i + 3] = hmax(x, y);
}

// Packed: each half2_t holds two halves (low 16 bits = element 0). For i < n (n = number of
// pairs): out[3*i + 0] = a[i] + b[i], out[3*i + 1] = a[i] * b[i], out[3*i + 2] = fma(a, b, c),
// all lane-wise.
extern "C" __global__ void f16x2_ops(const half2_t *a, const half2_t *b, const half2_t *c,
                                     half2_t *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  half2_t x = a[i], y = b[i], z = c[i];
  out[3 * i + 0] = hadd2(x, y);
  out[3 * i + 1] = hmul2(x, y);
  out[3 * i + 2] = hfma2(x, y, z);
}

// Mixed precision axpy: for i < n, y[i] = f16(round-to-nearest)(alpha * f32(x[i]) + f32(y[i]))
// where the f32 expression is evaluated in f32 (may be contracted to an f32 fma).
extern "C" __global__ void f16_axpy(const half_t *x, half_t *y, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f2h(alpha * h2f(x[i]) + h2f(y[i]));
}
