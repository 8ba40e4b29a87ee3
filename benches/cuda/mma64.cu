// An mma-heavy kernel for the compile-time benchmark (scripts/bench-compile.sh): one warp
// computes a 64x64 tile of C = A * B (f16 inputs, f32 accumulation) with 64
// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` per iteration of its k loop
// (4 row tiles x 8 column tiles x 2 k steps of 16), the shape of the inner loop of a Triton or
// CUTLASS GEMM. A is M x K row-major, B is given transposed (N x K row-major, i.e. the
// column-major K x N operand `.col` asks for), both as pairs of halves in 32-bit words.
// Fragment layouts: PTX ISA 9.7.13.4.8 (m16n8k16 f16): groupID = lane >> 2,
// threadID_in_group = lane & 3. Launch: block 32 threads, grid (N/64, M/64), K a multiple of 32.
// Compiled with NVRTC 12.9 --gpu-architecture=compute_80 to benches/mma64.nvrtc.ptx.

#define MMA(d, a, b)                                                                       \
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "  \
      "{%8,%9}, {%0,%1,%2,%3};"                                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                     \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

extern "C" __global__ void mma64(const unsigned* __restrict__ A, const unsigned* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64, kw = K / 2;
  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;
  for (int k = 0; k < K; k += 32) {
    unsigned a[2][4][4], b[2][8][2];
#pragma unroll
    for (int s = 0; s < 2; s++) {
      const int c = (k + s * 16) / 2 + t;
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const unsigned* r0 = A + (size_t)(m0 + i * 16 + g) * kw;
        const unsigned* r1 = r0 + 8 * (size_t)kw;
        a[s][i][0] = r0[c];
        a[s][i][1] = r1[c];
        a[s][i][2] = r0[c + 4];
        a[s][i][3] = r1[c + 4];
      }
#pragma unroll
      for (int j = 0; j < 8; j++) {
        const unsigned* col = B + (size_t)(n0 + j * 8 + g) * kw;
        b[s][j][0] = col[c];
        b[s][j][1] = col[c + 4];
      }
    }
#pragma unroll
    for (int s = 0; s < 2; s++)
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) MMA(acc[i][j], a[s][i], b[s][j]);
  }
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 8; j++) {
      float* row = C + (size_t)(m0 + i * 16 + g) * N + n0 + j * 8 + t * 2;
      row[0] = acc[i][j][0];
      row[1] = acc[i][j][1];
      row[8 * (size_t)N] = acc[i][j][2];
      row[8 * (size_t)N + 1] = acc[i][j][3];
    }
}
