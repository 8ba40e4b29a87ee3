// Triton's persistent TMA matmul (tests/triton_sm90/matmul_tma_f16.ptx, sm_90a) through the
// driver API: cuTensorMapEncodeTiled builds the three tensor maps over device memory, the
// maps are passed by value as kernel parameters, and the product must equal, byte for
// byte, what an H200 computed (matmul_tma_f16.out.bin). Also: a box that breaks CUDA's
// rules is refused with CUDA_ERROR_INVALID_VALUE. argv[1]: the directory of the files.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *load(const char *dir, const char *name, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *p = malloc(n);
    FILE *f = fopen(path, "rb");
    if (!f || fread(p, 1, n, f) != n) { printf("cannot read %s\n", path); exit(2); }
    fclose(f);
    return p;
}

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s: %d\n", #x, (int)r_); return 1; } } while (0)

int main(int argc, char **argv) {
    const int M = 192, N = 128, K = 96;
    uint16_t *a = load(argv[1], "matmul_tma_f16.in0.bin", (size_t)M * K * 2);
    uint16_t *bt = load(argv[1], "matmul_tma_f16.in1.bin", (size_t)N * K * 2);
    uint16_t *want = load(argv[1], "matmul_tma_f16.out.bin", (size_t)M * N * 2);
    uint16_t *c = calloc((size_t)M * N, 2);
    char ptx[4096];
    snprintf(ptx, sizeof ptx, "%s/matmul_tma_f16.ptx", argv[1]);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, 0, dev));
    CHECK(cuModuleLoad(&mod, ptx));
    CHECK(cuModuleGetFunction(&f, mod, "matmul_tma"));
    CUdeviceptr da, db, dc;
    CHECK(cuMemAlloc(&da, (size_t)M * K * 2));
    CHECK(cuMemAlloc(&db, (size_t)N * K * 2));
    CHECK(cuMemAlloc(&dc, (size_t)M * N * 2));
    CHECK(cuMemcpyHtoD(da, a, (size_t)M * K * 2));
    CHECK(cuMemcpyHtoD(db, bt, (size_t)N * K * 2));
    CHECK(cuMemsetD8(dc, 0, (size_t)M * N * 2));
    CUtensorMap ma, mb, mc;
    cuuint64_t dima[2] = {K, M}, dimb[2] = {K, N}, dimc[2] = {N, M}, sa[1] = {K * 2}, sc[1] = {N * 2};
    cuuint32_t box_ab[2] = {32, 64}, box_c[2] = {64, 64}, es[2] = {1, 1};
    CHECK(cuTensorMapEncodeTiled(&ma, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)da, dima, sa, box_ab, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CHECK(cuTensorMapEncodeTiled(&mb, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)db, dimb, sa, box_ab, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CHECK(cuTensorMapEncodeTiled(&mc, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)dc, dimc, sc, box_c, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CUtensorMap bad;
    cuuint32_t bad_box[2] = {12, 64};
    CUresult refused = cuTensorMapEncodeTiled(&bad, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)da, dima, sa, bad_box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    int32_t m = M, n = N, k = K, nn = N, ka = K;
    int64_t lk = K, lone = 1, ln = N;
    CUdeviceptr scratch = 0;
    void *args[] = {&ma, &m, &k, &lk, &lone, &mb, &n, &k, &lk, &lone, &mc, &m, &n, &ln, &lone, &m, &nn, &ka, &scratch, &scratch};
    CHECK(cuLaunchKernel(f, 3, 1, 1, 128, 1, 1, 32792, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(c, dc, (size_t)M * N * 2));
    printf("refused %d\n", (int)refused);
    printf("%s\n", memcmp(c, want, (size_t)M * N * 2) ? "differs" : "same as the H200");
    return 0;
}
