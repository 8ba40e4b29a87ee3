// Double-precision arithmetic: daxpy, dot product (shared reduction + double atomicAdd), and
// a few f64 math ops.
#include "prelude.h"

#define MAX_BLOCK 256

// For i < n: y[i] = a * x[i] + y[i] (may be contracted to fma).
extern "C" __global__ void daxpy(const double *x, double *y, double a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// *result += sum_{i<n} x[i] * y[i]. Grid-stride per-thread partials, shared tree per block,
// one atomicAdd(double) per block. *result must be zeroed. Requires blockDim.x a power of two
// <= 256. Summation order differs from a sequential loop: compare with a tolerance.
extern "C" __global__ void ddot(const double *x, const double *y, double *result, int n) {
  __shared__ double s[MAX_BLOCK];
  unsigned tid = threadIdx.x;
  double acc = 0.0;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
    acc += x[i] * y[i];
  s[tid] = acc;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(result, s[0]);
}

// For i < n, with v = x[i]:
//   out[4*i + 0] = sqrt(fabs(v))            (correctly rounded)
//   out[4*i + 1] = fma(v, v, -1.0)          (single rounding)
//   out[4*i + 2] = v / (fabs(v) + 1.0)      (IEEE division)
//   out[4*i + 3] = (double)(long long)(v * 1000.0)   (truncation toward zero)
extern "C" __global__ void f64_ops(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[4 * i + 0] = sqrt(fabs(v));
  out[4 * i + 1] = fma(v, v, -1.0);
  out[4 * i + 2] = v / (fabs(v) + 1.0);
  out[4 * i + 3] = (double)(long long)(v * 1000.0);
}
