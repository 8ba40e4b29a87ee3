// Warp-level reductions with shuffles. Requires blockDim.x to be a multiple of 32.
#include "prelude.h"

#define FULL_MASK 0xffffffffu

// out[w] = sum of in[32*w .. 32*w+32) ∩ [0, n) where w = global warp index (i / 32);
// uses __shfl_down_sync, lane 0 writes. Launch >= ceil(n/32) warps; out has ceil(n/32) floats.
extern "C" __global__ void warp_reduce_down(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (i < n) ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(FULL_MASK, v, offset);
  if ((threadIdx.x & 31) == 0 && i < n) out[i / 32] = v;
}

// Butterfly all-reduce with __shfl_xor_sync: for each i < n,
// out[i] = sum and out_max[i] = max of in[j] over j in the same 32-aligned group as i, j < n.
extern "C" __global__ void warp_allreduce_xor(const int *in, int *out, int *out_max, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = (i < n) ? in[i] : 0;
  int m = (i < n) ? in[i] : (int)0x80000000;
  for (int mask = 1; mask < 32; mask <<= 1) {
    v += __shfl_xor_sync(FULL_MASK, v, mask);
    m = max(m, __shfl_xor_sync(FULL_MASK, m, mask));
  }
  if (i < n) {
    out[i] = v;
    out_max[i] = m;
  }
}

// Indexed shuffle with __shfl_sync: for i < n, out[i] = v[(i & ~31) + (in[i] & 31)] where
// v[j] = in[j] for j < n and 0 otherwise.
extern "C" __global__ void warp_broadcast(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = (i < n) ? in[i] : 0;
  int r = __shfl_sync(FULL_MASK, v, v & 31);
  if (i < n) out[i] = r;
}
