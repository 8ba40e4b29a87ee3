// Tree reduction in shared memory with __syncthreads.
// Requires blockDim.x a power of two <= 256.
#include "prelude.h"

#define MAX_BLOCK 256

// block_sums[blockIdx.x] = sum of in[j] for j in [2*B*bid, 2*B*bid + 2*B) ∩ [0, n),
// where B = blockDim.x. Launch ceil(n / (2*B)) blocks.
extern "C" __global__ void reduce_sum(const float *in, float *block_sums, int n) {
  __shared__ float s[MAX_BLOCK];
  unsigned tid = threadIdx.x;
  int i = blockIdx.x * (blockDim.x * 2) + tid;
  float v = 0.0f;
  if (i < n) v = in[i];
  if (i + (int)blockDim.x < n) v += in[i + blockDim.x];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) block_sums[blockIdx.x] = s[0];
}

// *total += sum of in[0..n) (integer, exact). Grid-stride accumulation per thread, shared tree
// per block, one atomicAdd per block. *total must be zeroed by the caller. Any grid size.
extern "C" __global__ void reduce_sum_atomic(const int *in, int *total, int n) {
  __shared__ int s[MAX_BLOCK];
  unsigned tid = threadIdx.x;
  int acc = 0;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) acc += in[i];
  s[tid] = acc;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(total, s[0]);
}
