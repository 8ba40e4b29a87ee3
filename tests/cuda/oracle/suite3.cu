// sm_80 tensor-core building blocks as compilers and hand-written kernels use them (inline PTX):
// cp.async into shared memory, ldmatrix (plain and .trans) and mma.sync.m16n8k16, for the GPU
// oracle (tests/filetests/ref/cuda_oracle.py; NVRTC with --gpu-architecture=compute_80).

__device__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// C (16x8, f32) = A (16x16 f16, row-major) * B (16x8 f16) + bias, one warp per tile; B is stored
// column by column ([n][k]) and loaded with ldmatrix, or row by row ([k][n]) with ldmatrix.trans.
template <bool TRANS>
__device__ void tc_tile(const unsigned short *A, const unsigned short *B, const float *bias, float *C) {
  __shared__ __align__(16) unsigned short sa[16 * 16];
  __shared__ __align__(16) unsigned short sb[16 * 8];
  int t = threadIdx.x;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(smem_addr(sa + t * 8)), "l"(A + t * 8));
  if (t < 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(sb + t * 8)), "l"(B + t * 8), "r"(t == 15 ? 10 : 16));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;");
  __syncwarp();
  unsigned a0, a1, a2, a3, b0, b1;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
               : "r"(smem_addr(sa + (t % 16) * 16 + (t / 16) * 8)));
  if (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(smem_addr(sb + (t % 16) * 8)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(b0), "=r"(b1)
                 : "r"(smem_addr(sb + (t % 8) * 16 + ((t / 8) % 2) * 8)));
  int g = t / 4, q = t % 4;
  float c0 = bias[g * 8 + 2 * q], c1 = bias[g * 8 + 2 * q + 1], c2 = bias[(g + 8) * 8 + 2 * q], c3 = bias[(g + 8) * 8 + 2 * q + 1];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  C[g * 8 + 2 * q] = c0;
  C[g * 8 + 2 * q + 1] = c1;
  C[(g + 8) * 8 + 2 * q] = c2;
  C[(g + 8) * 8 + 2 * q + 1] = c3;
}

extern "C" __global__ void tc_gemm(const unsigned short *A, const unsigned short *B, const float *bias, float *C) {
  tc_tile<false>(A + blockIdx.x * 256, B + blockIdx.x * 128, bias, C + blockIdx.x * 128);
}
extern "C" __global__ void tc_gemm_trans(const unsigned short *A, const unsigned short *B, const float *bias, float *C) {
  tc_tile<true>(A + blockIdx.x * 256, B + blockIdx.x * 128, bias, C + blockIdx.x * 128);
}
