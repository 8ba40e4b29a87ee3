// 2D 5-point stencil (one Jacobi step of the Laplace equation) on a width x height grid.
#include "prelude.h"

// Row-major grids, idx = y * width + x. For interior points (0 < x < width-1, 0 < y < height-1):
//   out[idx] = 0.25f * (in[idx-1] + in[idx+1] + in[idx-width] + in[idx+width])  (summed in that
//   order); boundary points: out[idx] = in[idx]. Any 2D launch covering width x height.
extern "C" __global__ void stencil2d(const float *in, float *out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  int idx = y * width + x;
  if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
    out[idx] = in[idx];
  } else {
    out[idx] = 0.25f * (in[idx - 1] + in[idx + 1] + in[idx - width] + in[idx + width]);
  }
}
