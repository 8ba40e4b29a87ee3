// A CUDA driver API program, unmodified CUDA style: NVRTC compiles CUDA C++ to PTX at run
// time, the driver API loads it and launches kernels on two streams with events, and every
// result is checked against the same computation done here on the host.
//
// With ptxr: build against the CUDA headers and link ptxr's libcuda.so.1 in place of
// NVIDIA's (see docs/cuda.md):
//   cc driver_api.c -I$CUDA_INCLUDE -I$NVRTC_INCLUDE -Ltarget/release -lcuda \
//      -L$NVRTC_LIB -l:libnvrtc.so.12 -Wl,-rpath,$NVRTC_LIB -lm -o driver_api
//   LD_LIBRARY_PATH=target/release ./driver_api
// The same program runs on a GPU with NVIDIA's driver.
#include <cuda.h>
#include <nvrtc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        CUresult r_ = (call);                                                          \
        if (r_ != CUDA_SUCCESS) {                                                      \
            const char *name_ = "?";                                                   \
            cuGetErrorName(r_, &name_);                                                \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,  \
                    name_, (int)r_);                                                   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const char *source =
    "__constant__ float coeffs[4];\n"
    "__device__ unsigned int launches;\n"
    "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y) {\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n"
    "// Block sums in dynamic shared memory, a tree with barriers, then one atomic per block.\n"
    "extern \"C\" __global__ void sum(const float *x, int n, float *total) {\n"
    "    extern __shared__ float part[];\n"
    "    float s = 0.0f;\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        s += x[i];\n"
    "    part[threadIdx.x] = s;\n"
    "    __syncthreads();\n"
    "    for (int k = blockDim.x / 2; k > 0; k /= 2) {\n"
    "        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (threadIdx.x == 0) { atomicAdd(total, part[0]); atomicAdd(&launches, 1u); }\n"
    "}\n"
    "// A polynomial with coefficients from constant memory, warp shuffles for a max.\n"
    "extern \"C\" __global__ void poly_max(const float *x, int n, float *y, float *wmax) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float v = -__int_as_float(0x7f800000);\n"
    "    if (i < n) {\n"
    "        float t = x[i];\n"
    "        v = ((coeffs[3] * t + coeffs[2]) * t + coeffs[1]) * t + coeffs[0];\n"
    "        y[i] = v;\n"
    "    }\n"
    "    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
    "    if ((threadIdx.x & 31) == 0) wmax[i / 32] = v;\n"
    "}\n";

static char *compile_ptx(void) {
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, source, "kernels.cu", 0, NULL, NULL) != NVRTC_SUCCESS) exit(1);
    const char *opts[] = {"--gpu-architecture=compute_80"};
    nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log);
        exit(1);
    }
    size_t n;
    nvrtcGetPTXSize(prog, &n);
    char *ptx = malloc(n);
    nvrtcGetPTX(prog, ptx);
    nvrtcDestroyProgram(&prog);
    return ptx;
}

int main(void) {
    char *ptx = compile_ptx();
    CHECK(cuInit(0));
    int count = 0, version = 0;
    CHECK(cuDeviceGetCount(&count));
    CHECK(cuDriverGetVersion(&version));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    char name[128];
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    int major, minor, sms, warp;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CHECK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    printf("%d device(s); driver %d; %s: compute %d.%d, %d multiprocessors, warp %d\n", count, version, name, major, minor, sms, warp);
    if (warp != 32) return 1;

    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));

    char log[4096] = "";
    CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {log, (void *)(size_t)sizeof log};
    CUmodule mod;
    CUresult lr = cuModuleLoadDataEx(&mod, ptx, 2, opt, val);
    if (lr != CUDA_SUCCESS) {
        fprintf(stderr, "cuModuleLoadDataEx: %d\n%s\n", (int)lr, log);
        return 1;
    }
    CUfunction saxpy, sum, poly_max;
    CHECK(cuModuleGetFunction(&saxpy, mod, "saxpy"));
    CHECK(cuModuleGetFunction(&sum, mod, "sum"));
    CHECK(cuModuleGetFunction(&poly_max, mod, "poly_max"));

    const int n = 1 << 20;
    size_t bytes = n * sizeof(float);
    float *hx, *hy, *out = malloc(bytes);
    CHECK(cuMemAllocHost((void **)&hx, bytes));
    CHECK(cuMemAllocHost((void **)&hy, bytes));
    for (int i = 0; i < n; i++) {
        hx[i] = (float)(i % 1000) * 0.25f;
        hy[i] = (float)(i % 7);
    }
    CUdeviceptr dx, dy, dtotal, dpoly, dwmax;
    CHECK(cuMemAlloc(&dx, bytes));
    CHECK(cuMemAlloc(&dy, bytes));
    CHECK(cuMemAlloc(&dtotal, sizeof(float)));
    CHECK(cuMemAlloc(&dpoly, bytes));
    CHECK(cuMemAlloc(&dwmax, bytes / 32));
    CHECK(cuMemsetD32(dtotal, 0, 1));

    // __constant__ coefficients and a __device__ counter through cuModuleGetGlobal.
    CUdeviceptr dcoeffs, dlaunches;
    size_t csize, lsize;
    CHECK(cuModuleGetGlobal(&dcoeffs, &csize, mod, "coeffs"));
    CHECK(cuModuleGetGlobal(&dlaunches, &lsize, mod, "launches"));
    if (csize != 4 * sizeof(float) || lsize != sizeof(unsigned)) {
        fprintf(stderr, "global sizes %zu, %zu\n", csize, lsize);
        return 1;
    }
    const float coeffs[4] = {1.0f, -0.5f, 0.125f, 0.0625f};
    CHECK(cuMemcpyHtoD(dcoeffs, coeffs, sizeof coeffs));

    CUstream s1, s2;
    CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent start, copied, stop;
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&copied, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));

    // Stream 1: copies in, then saxpy; stream 2 waits for the copies, then sums x.
    CHECK(cuEventRecord(start, s1));
    CHECK(cuMemcpyHtoDAsync(dx, hx, bytes, s1));
    CHECK(cuMemcpyHtoDAsync(dy, hy, bytes, s1));
    CHECK(cuEventRecord(copied, s1));
    float a = 2.0f;
    int nn = n;
    void *saxpy_args[] = {&nn, &a, &dx, &dy};
    CHECK(cuLaunchKernel(saxpy, 256, 1, 1, 256, 1, 1, 0, s1, saxpy_args, NULL));
    CHECK(cuStreamWaitEvent(s2, copied, 0));
    void *sum_args[] = {&dx, &nn, &dtotal};
    CHECK(cuLaunchKernel(sum, 64, 1, 1, 512, 1, 1, 512 * sizeof(float), s2, sum_args, NULL));
    // poly_max through the `extra` parameter buffer form.
    struct { const float *x; int n; int pad; float *y; float *wmax; } pbuf = {(const float *)dx, n, 0, (float *)dpoly, (float *)dwmax};
    size_t psize = sizeof pbuf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pbuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize, CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(poly_max, n / 128, 1, 1, 128, 1, 1, 0, s2, NULL, extra));
    CHECK(cuMemcpyDtoHAsync(out, dy, bytes, s1));
    CHECK(cuEventRecord(stop, s1));
    CHECK(cuStreamSynchronize(s1));
    CHECK(cuStreamSynchronize(s2));
    CHECK(cuEventSynchronize(stop));
    float ms = -1.0f;
    CHECK(cuEventElapsedTime(&ms, start, stop));

    int bad = 0;
    for (int i = 0; i < n; i++)
        if (out[i] != 2.0f * hx[i] + hy[i]) bad++;
    printf("saxpy: %d/%d elements correct (stream 1: %.3f ms from first copy to last)\n", n - bad, n, ms);

    float total;
    unsigned launches;
    CHECK(cuMemcpyDtoH(&total, dtotal, sizeof total));
    CHECK(cuMemcpyDtoH(&launches, dlaunches, sizeof launches));
    double ref = 0.0;
    for (int i = 0; i < n; i++) ref += hx[i];
    // The blocks' partial sums are added in whatever order their atomics come: compare
    // with a tolerance for float rounding (the sum is about 1.3e8).
    int sum_ok = fabs(total - ref) <= 1e-4 * ref && launches == 64;
    printf("sum: %.1f (reference %.1f), %u block atomics\n", total, ref, launches);

    float *poly = malloc(bytes), *wmax = malloc(bytes / 32);
    CHECK(cuMemcpyDtoH(poly, dpoly, bytes));
    CHECK(cuMemcpyDtoH(wmax, dwmax, bytes / 32));
    int poly_bad = 0;
    for (int i = 0; i < n; i++) {
        float t = hx[i];
        float v = ((coeffs[3] * t + coeffs[2]) * t + coeffs[1]) * t + coeffs[0];
        // The kernel's a*b+c may be contracted to fma by NVRTC: allow either rounding.
        float f = fmaf(fmaf(fmaf(coeffs[3], t, coeffs[2]), t, coeffs[1]), t, coeffs[0]);
        if (poly[i] != v && poly[i] != f) poly_bad++;
    }
    for (int w = 0; w < n / 32; w++) {
        float m = -INFINITY;
        for (int l = 0; l < 32; l++) m = fmaxf(m, poly[w * 32 + l]);
        if (wmax[w] != m) poly_bad++;
    }
    printf("poly_max: %s\n", poly_bad ? "WRONG" : "all values and warp maxima correct");

    CHECK(cuStreamDestroy(s1));
    CHECK(cuStreamDestroy(s2));
    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(copied));
    CHECK(cuEventDestroy(stop));
    CHECK(cuMemFree(dx));
    CHECK(cuMemFree(dy));
    CHECK(cuMemFree(dtotal));
    CHECK(cuMemFree(dpoly));
    CHECK(cuMemFree(dwmax));
    CHECK(cuMemFreeHost(hx));
    CHECK(cuMemFreeHost(hy));
    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    int ok = bad == 0 && sum_ok && poly_bad == 0;
    printf("%s\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
