// Bitonic sorting network in shared memory: each block sorts its own chunk ascending.
// Requires blockDim.x a power of two <= 1024.
#include "prelude.h"

#define MAX_BLOCK 1024

// Chunk b = data[b*B .. b*B + B) ∩ [0, n), B = blockDim.x, is sorted ascending in place
// (signed int compare). Positions >= n are padded with INT_MAX internally and not written.
extern "C" __global__ void bitonic_sort_block(int *data, int n) {
  __shared__ int s[MAX_BLOCK];
  unsigned tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  s[tid] = (i < n) ? data[i] : 0x7fffffff;
  __syncthreads();
  for (unsigned k = 2; k <= blockDim.x; k <<= 1) {
    for (unsigned j = k >> 1; j > 0; j >>= 1) {
      unsigned partner = tid ^ j;
      if (partner > tid) {
        int a = s[tid], b = s[partner];
        bool ascending = (tid & k) == 0;
        if ((a > b) == ascending) {
          s[tid] = b;
          s[partner] = a;
        }
      }
      __syncthreads();
    }
  }
  if (i < n) data[i] = s[tid];
}
