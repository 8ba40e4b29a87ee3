// Inclusive prefix sum within each block: warp scans with __shfl_up_sync, warp totals through
// shared memory, then a scan of the totals by warp 0.
// Requires blockDim.x a multiple of 32, <= 1024.
#include "prelude.h"

#define FULL_MASK 0xffffffffu

// For i < n: out[i] = sum of in[j] for j in [blockIdx.x * blockDim.x, i] (segmented per block).
extern "C" __global__ void block_inclusive_scan(const int *in, int *out, int n) {
  __shared__ int warp_totals[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int warp = threadIdx.x >> 5;
  int v = (i < n) ? in[i] : 0;
  for (int d = 1; d < 32; d <<= 1) {
    int up = __shfl_up_sync(FULL_MASK, v, d);
    if (lane >= d) v += up;
  }
  if (lane == 31) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int nwarps = blockDim.x >> 5;
    int t = (lane < nwarps) ? warp_totals[lane] : 0;
    for (int d = 1; d < 32; d <<= 1) {
      int up = __shfl_up_sync(FULL_MASK, t, d);
      if (lane >= d) t += up;
    }
    warp_totals[lane] = t;  // inclusive scan of warp totals
  }
  __syncthreads();
  if (warp > 0) v += warp_totals[warp - 1];
  if (i < n) out[i] = v;
}
