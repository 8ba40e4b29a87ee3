// saxpy: y[i] = a * x[i] + y[i] for 0 <= i < n. One thread per element, any 1D launch shape.
#include "prelude.h"

extern "C" __global__ void saxpy(const float *__restrict__ x, float *__restrict__ y, float a,
                                 int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
