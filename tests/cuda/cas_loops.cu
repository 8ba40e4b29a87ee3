// Compare-and-swap retry loops: the lock-free updates CUDA code writes with atomicCAS where
// no atomic instruction does the operation. Every result is independent of the order in
// which threads update. Lanes of one warp contend for the same word (the loops' trip counts
// differ per lane), so these run as divergent loops on the warp path.
#include "prelude.h"

// out[0] = max over in[0..n) as floats (no NaN in the input), by the usual CAS idiom with an
// early exit when the stored value is already at least v; caller initialises out[0] to
// -inf. out[1 + (i & 3)] likewise per group of i & 3 (four words, more contention).
// Any 1D launch shape.
__device__ void atomic_max_float(float *addr, float v) {
  int *p = (int *)addr;
  int old = *p;
  while (v > __int_as_float(old)) {
    int assumed = old;
    old = atomicCAS(p, assumed, __float_as_int(v));
    if (old == assumed) break;
  }
}

extern "C" __global__ void cas_max_f32(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomic_max_float(&out[0], in[i]);
  atomic_max_float(&out[1 + (i & 3)], in[i]);
}

// sum[0] += in[i] for i < n, as a double add through a 64-bit CAS (the pre-sm_60 atomicAdd
// for double). Inputs are small integers, so every order gives the same exact sum.
__device__ double atomic_add_double(double *addr, double v) {
  unsigned long long *p = (unsigned long long *)addr;
  unsigned long long old = *p, assumed;
  do {
    assumed = old;
    old = atomicCAS(p, assumed, (unsigned long long)__double_as_longlong(v + __longlong_as_double((long long)assumed)));
  } while (assumed != old);
  return __longlong_as_double((long long)old);
}

extern "C" __global__ void cas_add_f64(const double *in, double *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_add_double(sum, in[i]);
}

// bins[in[i] & 7] = min(bins + in[i] >> 3, cap) for i < n: a saturating add, which no atom
// instruction does. With non-negative addends every order ends at min(total, cap).
extern "C" __global__ void cas_sat_add(const unsigned *in, unsigned *bins, unsigned cap, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = in[i] >> 3;
  int *p = (int *)&bins[in[i] & 7];
  unsigned old = (unsigned)*p, assumed;
  do {
    assumed = old;
    unsigned s = assumed + v;
    if (s < assumed || s > cap) s = cap;
    old = (unsigned)atomicCAS(p, (int)assumed, (int)s);
  } while (old != assumed);
}
