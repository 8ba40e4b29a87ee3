// Warp vote / ballot / match intrinsics. Requires blockDim.x a multiple of 32.
#include "prelude.h"

#define FULL_MASK 0xffffffffu

// Let W = the 32-aligned group of global indices containing i (one warp), lane(j) = j & 31,
// p(j) = (j < n && in[j] > 0), v(j) = (j < n ? in[j] : -1). For each i < n, out[5*i + k] is:
//   k=0: __ballot_sync   = bitmask over lanes j in W of p(j)
//   k=1: __all_sync      = 1 if p(j) for all j in W, else 0
//   k=2: __any_sync      = 1 if p(j) for some j in W, else 0
//   k=3: __match_any_sync= bitmask of lanes j in W with v(j) == v(i)
//   k=4: __activemask()  inside `if (i < n)`: bitmask of lanes j in W with j < n
extern "C" __global__ void warp_vote(const int *in, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = (i < n) ? in[i] : -1;
  int p = (i < n) && v > 0;
  unsigned ballot = __ballot_sync(FULL_MASK, p);
  int all = __all_sync(FULL_MASK, p);
  int any = __any_sync(FULL_MASK, p);
  unsigned match = __match_any_sync(FULL_MASK, v);
  if (i < n) {
    unsigned active = __activemask();
    unsigned *o = out + 5 * i;
    o[0] = ballot;
    o[1] = all ? 1u : 0u;
    o[2] = any ? 1u : 0u;
    o[3] = match;
    o[4] = active;
  }
}

// Block-wide vote with __syncthreads_count: for i < n, out[i] = number of threads t in the block
// of i whose global index j = blockIdx.x * blockDim.x + t satisfies j < n && in[j] > 0.
extern "C" __global__ void block_count_positive(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int c = __syncthreads_count(i < n && in[i] > 0);
  if (i < n) out[i] = c;
}
