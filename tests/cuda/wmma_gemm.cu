// Tensor-core GEMM with the warp matrix builtins that CUDA's <mma.h> (nvcuda::wmma) is built on.
#include "prelude.h"

// C (M x N, f32, row-major) = alpha_int * A (M x K, f16, row-major) * B (K x N, f16, column-major)
// + C. Each warp computes one 16x16 tile of C: warp (wm, wn) with wm = global x thread / 32 and
// wn = global y thread, looping over K in steps of 16 (wmma m16n16k16, f32 accumulators).
// M, N, K are multiples of 16; launch blockDim.x a multiple of 32 with gridDim.x * blockDim.x / 32
// >= M / 16 and gridDim.y * blockDim.y >= N / 16 (warps past the matrix do nothing).
extern "C" __global__ void wmma_gemm(const unsigned short *A, const unsigned short *B, float *C,
                                     int M, int N, int K) {
  int wm = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int wn = blockIdx.y * blockDim.y + threadIdx.y;
  if (wm * 16 >= M || wn * 16 >= N) return;
  int a[8], b[8];
  float acc[8];
  float *c = C + wm * 16 * N + wn * 16;
  __hmma_m16n16k16_ld_c_f32(acc, c, N, 0);
  for (int k = 0; k < K; k += 16) {
    __hmma_m16n16k16_ld_a(a, (const int *)(A + wm * 16 * K + k), K, 0);
    __hmma_m16n16k16_ld_b(b, (const int *)(B + wn * 16 * K + k), K, 1);
    __hmma_m16n16k16_mma_f32f32(acc, a, b, acc, 1, 0);  // layout 1: A row-major, B column-major
  }
  __hmma_m16n16k16_st_c_f32(c, acc, N, 0);
}

// Same product with f16 accumulators and the m32n8k16 shape, staged through shared memory:
// D (M x N, f16, row-major) = A (row-major) * B (row-major, K x N). Each warp of a 32-thread
// block computes one 32x8 tile (block (bx, by): rows 32*bx, columns 8*by), copying the A and B
// panels of each K step into shared memory first. M % 32 == 0, N % 8 == 0, K % 16 == 0.
extern "C" __global__ void wmma_gemm_h(const unsigned short *A, const unsigned short *B,
                                       unsigned short *D, int M, int N, int K) {
  __shared__ __align__(32) unsigned short sa[32 * 16];
  __shared__ __align__(32) unsigned short sb[16 * 8];
  int row0 = blockIdx.x * 32, col0 = blockIdx.y * 8, t = threadIdx.x;
  int a[8], b[8], acc[4] = {0, 0, 0, 0};
  for (int k = 0; k < K; k += 16) {
    for (int i = t; i < 32 * 16; i += 32) sa[i] = A[(row0 + i / 16) * K + k + i % 16];
    for (int i = t; i < 16 * 8; i += 32) sb[i] = B[(k + i / 8) * N + col0 + i % 8];
    __syncwarp();
    __hmma_m32n8k16_ld_a(a, (const int *)sa, 16, 0);
    __hmma_m32n8k16_ld_b(b, (const int *)sb, 8, 0);
    __hmma_m32n8k16_mma_f16f16(acc, a, b, acc, 0, 0);  // layout 0: both row-major
    __syncwarp();
  }
  __hmma_m32n8k16_st_c_f16((int *)(D + row0 * N + col0), acc, N, 0);
}
