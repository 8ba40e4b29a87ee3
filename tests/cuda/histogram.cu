// 256-bin byte histogram: per-block shared-memory histogram (shared atomics), then merged into
// the global one with global atomics.
#include "prelude.h"

#define BINS 256

// bins[b] += count of j in [0, n) with data[j] == b. bins (256 unsigned) must be zeroed by the
// caller. Any 1D launch shape (grid-stride loop).
extern "C" __global__ void histogram256(const unsigned char *data, unsigned *bins, int n) {
  __shared__ unsigned local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
    unsigned c = local[b];
    if (c != 0) atomicAdd(&bins[b], c);
  }
}
