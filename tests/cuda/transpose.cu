// Matrix transpose through a padded shared tile (32 x 33 avoids bank conflicts).
#include "prelude.h"

#define TILE_DIM 32
#define BLOCK_ROWS 8

// out[c * rows + r] = in[r * cols + c] for a rows x cols row-major input. Launch block (32, 8),
// grid (ceil(cols/32), ceil(rows/32)); each thread moves 4 elements.
extern "C" __global__ void transpose(const float *in, float *out, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;  // column in `in`
  int y = blockIdx.y * TILE_DIM + threadIdx.y;  // row in `in`
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;  // column in `out` (= row in `in`)
  y = blockIdx.x * TILE_DIM + threadIdx.y;  // row in `out` (= column in `in`)
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
