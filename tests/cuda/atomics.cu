// Global atomics beyond add: max/min, exchange, and a compare-and-swap loop.
#include "prelude.h"

// stats[0] = max, stats[1] = min over in[0..n) (atomicMax/atomicMin; caller initialises
// stats[0] = INT_MIN, stats[1] = INT_MAX); stats[2] += number of elements with in[i] % 3 == 0
// (via an atomicCAS retry loop); stats[3] = in[i] for some i < n (atomicExch; any one).
// Any 1D launch shape.
extern "C" __global__ void atomic_stats(const int *in, int *stats, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  atomicMax(&stats[0], v);
  atomicMin(&stats[1], v);
  if (v % 3 == 0) {
    int old = stats[2], assumed;
    do {
      assumed = old;
      old = atomicCAS(&stats[2], assumed, assumed + 1);
    } while (old != assumed);
  }
  atomicExch(&stats[3], v);
}

// Atomic float accumulation: for i < n, sums[idx[i] & 15] += vals[i] (atomicAdd on f32; order
// is unspecified, compare with a tolerance). sums has 16 floats, zeroed by the caller.
extern "C" __global__ void atomic_scatter_add(const int *idx, const float *vals, float *sums,
                                              int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&sums[idx[i] & 15], vals[i]);
}
