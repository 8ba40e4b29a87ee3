// 1D 5-point stencil (radius 2) with a shared-memory halo and weights in __constant__ memory.
// Requires blockDim.x <= 256.
#include "prelude.h"

#define RADIUS 2
#define MAX_BLOCK 256

__constant__ float weights[2 * RADIUS + 1] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

// For i < n: out[i] = sum_{k=-2..2} weights[k+2] * (0 <= i+k < n ? in[i+k] : 0),
// weights = {1/16, 1/4, 3/8, 1/4, 1/16} (accumulated in order k = -2..2).
extern "C" __global__ void stencil1d(const float *in, float *out, int n) {
  __shared__ float s[MAX_BLOCK + 2 * RADIUS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int li = threadIdx.x + RADIUS;
  s[li] = (i < n) ? in[i] : 0.0f;
  if (threadIdx.x < RADIUS) {
    int l = i - RADIUS;
    int r = i + blockDim.x;
    s[li - RADIUS] = (l >= 0 && l < n) ? in[l] : 0.0f;
    s[li + blockDim.x] = (r < n) ? in[r] : 0.0f;
  }
  __syncthreads();
  if (i < n) {
    float acc = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) acc += weights[k + RADIUS] * s[li + k];
    out[i] = acc;
  }
}
