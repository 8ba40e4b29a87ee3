// A Gluon TMA im2col kernel (tests/triton_sm90/im2col_conv_tap_f32.ptx, sm_90a: the input pixels
// of the tap (2, 1) of a 3x3 convolution with padding 1 over a 2x5x6x32 NHWC f32 input, 16 output
// pixels per CTA) through the driver API: cuTensorMapEncodeIm2col maps the input in device
// memory (the bounding box of a padded 3x3 filter: corners -1, -1 in W and H),
// cuTensorMapEncodeTiled the output; the rows must equal numpy's (im2col_conv_tap_f32.out.bin).
// Also: an empty bounding box and a rank-2 im2col map are refused with CUDA_ERROR_INVALID_VALUE.
// argv[1]: the directory of the files.
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
    const size_t in_bytes = 2 * 5 * 6 * 32 * 4, out_bytes = 64 * 32 * 4;
    float *x = load(argv[1], "im2col_conv_tap_f32.in0.bin", in_bytes);
    float *want = load(argv[1], "im2col_conv_tap_f32.out.bin", out_bytes);
    float *got = malloc(out_bytes);
    char ptx[4096];
    snprintf(ptx, sizeof ptx, "%s/im2col_conv_tap_f32.ptx", argv[1]);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, 0, dev));
    CHECK(cuModuleLoad(&mod, ptx));
    CHECK(cuModuleGetFunction(&f, mod, "im2col_tap"));
    CUdeviceptr dx, dout;
    CHECK(cuMemAlloc(&dx, in_bytes));
    CHECK(cuMemAlloc(&dout, out_bytes));
    CHECK(cuMemcpyHtoD(dx, x, in_bytes));
    CHECK(cuMemsetD8(dout, 0xff, out_bytes));
    CUtensorMap mi, mo, bad;
    cuuint64_t di[4] = {32, 6, 5, 2}, si[3] = {128, 768, 3840}, dimo[2] = {32, 64}, so[1] = {128};
    int lower[2] = {-1, -1}, upper[2] = {-1, -1}, wide[2] = {3, 0}, narrow[2] = {-3, 0};
    cuuint32_t es[4] = {1, 1, 1, 1}, box[2] = {32, 16};
    CHECK(cuTensorMapEncodeIm2col(&mi, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, (void *)dx, di, si, lower, upper, 32, 16, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CHECK(cuTensorMapEncodeTiled(&mo, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)dout, dimo, so, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CUresult empty = cuTensorMapEncodeIm2col(&bad, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, (void *)dx, di, si, wide, narrow, 32, 16, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    CUresult rank2 = cuTensorMapEncodeIm2col(&bad, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)dx, di, si, lower, upper, 32, 16, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    int32_t zero = 0, r64 = 64, c32 = 32;
    int64_t lzero = 0, l32 = 32, lone = 1;
    CUdeviceptr scratch = 0;
    void *args[] = {&mi, &zero, &zero, &lzero, &lzero, &mo, &r64, &c32, &l32, &lone, &scratch, &scratch};
    CHECK(cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 2056, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(got, dout, out_bytes));
    printf("refused %d %d\n", (int)empty, (int)rank2);
    printf("%s\n", memcmp(got, want, out_bytes) ? "differs" : "same as numpy");
    return 0;
}
