// Vector add with a grid-stride loop: c[i] = a[i] + b[i] for 0 <= i < n, for any grid size.
#include "prelude.h"

extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n) {
  int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}
