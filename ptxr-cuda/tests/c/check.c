// The checking mode through the driver API (PTXR_CHECK=1): a kernel writing one element past
// a cuMemAlloc'd buffer fails with CUDA_ERROR_ILLEGAL_ADDRESS and ptxr's report names the
// access and the allocation; the same kernel within the buffer runs clean. Prints one line per
// launch; exits non-zero if a result is not the expected one.
#include <cuda.h>
#include <stdio.h>

static const char *ptx =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry fill(.param .u64 p, .param .u32 n) {\n"
    "  .reg .pred %p<2>; .reg .u64 %rd<4>; .reg .u32 %r<3>;\n"
    "  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  setp.ge.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mul.wide.u32 %rd2, %r2, 4; add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr buf;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, 0, dev) || cuModuleLoadData(&mod, ptx) || cuModuleGetFunction(&f, mod, "fill") || cuMemAlloc(&buf, 64 * 4)) {
        printf("setup failed\n");
        return 1;
    }
    unsigned n = 64;
    void *args[] = {&buf, &n};
    CUresult ok = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
    if (ok == CUDA_SUCCESS) ok = cuCtxSynchronize();
    printf("within: %d\n", (int)ok);
    n = 65;
    CUresult bad = cuLaunchKernel(f, 1, 1, 1, 65, 1, 1, 0, NULL, args, NULL);
    if (bad == CUDA_SUCCESS) bad = cuCtxSynchronize();
    const char *name = "?";
    cuGetErrorName(bad, &name);
    printf("past the end: %s\n", name);
    int pass = ok == CUDA_SUCCESS && bad == CUDA_ERROR_ILLEGAL_ADDRESS;
    printf(pass ? "PASSED\n" : "FAILED\n");
    return pass ? 0 : 1;
}
