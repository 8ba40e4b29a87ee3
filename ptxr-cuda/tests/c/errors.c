// Error paths of ptxr's libcuda.so.1: each call is expected to return the CUresult that
// CUDA's documentation gives for it (cuda.h, "CUDA Driver API" reference), and nothing may
// crash. Prints one line per check; exits non-zero if any check fails.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed = 0;

static void expect(const char *what, CUresult got, CUresult want) {
    const char *gn = "?", *wn = "?";
    cuGetErrorName(got, &gn);
    cuGetErrorName(want, &wn);
    int ok = got == want;
    printf("%-58s %s%s%s\n", what, ok ? "ok" : "WRONG: ", ok ? "" : gn, ok ? "" : "");
    if (!ok) {
        printf("    expected %s (%d), got %s (%d)\n", wn, (int)want, gn, (int)got);
        failed = 1;
    }
}

static const char *kernels =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".global .align 4 .u32 counter = 7;\n"
    ".visible .entry store(.param .u64 p, .param .u32 v) {\n"
    "  .reg .u64 %rd<2>; .reg .u32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v];\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry dyn_smem(.param .u64 p) {\n"
    "  .reg .u64 %rd<2>; .reg .u32 %r<2>;\n"
    "  .extern .shared .align 4 .b8 buf[];\n"
    "  mov.u32 %r1, 5; st.shared.u32 [buf], %r1; ld.shared.u32 %r1, [buf];\n"
    "  ld.param.u64 %rd1, [p]; st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry traps() {\n"
    "  trap;\n"
    "}\n"
    ".visible .entry spins() {\n"
    "  .reg .pred %p<2>;\n"
    "  setp.eq.u32 %p1, 0, 0;\n"
    "L: @%p1 bra L;\n"
    "  ret;\n"
    "}\n";

static const char *wild_ptx =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry wild(.param .u64 p) {\n"
    "  .reg .u64 %rd<2>; .reg .u32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p]; mov.u32 %r1, %tid.x;\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

static const char *bad_ptx =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry k() {\n"
    "  frobnicate.u32 %r1;\n"
    "}\n";

int main(void) {
    CUdeviceptr d = 0;
    CUcontext ctx;
    CUmodule mod;
    CUfunction store, dyn, traps, spins;

    expect("cuMemAlloc before cuInit", cuMemAlloc(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
    expect("cuInit(0)", cuInit(0), CUDA_SUCCESS);
    expect("cuInit(1): flags must be 0", cuInit(1), CUDA_ERROR_INVALID_VALUE);
    CUdevice dev;
    expect("cuDeviceGet(1): one device", cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    expect("cuDeviceGet(0)", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    int v;
    expect("cuDeviceGetAttribute(unknown attribute)", cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, dev), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAlloc without a current context", cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxCreate", cuCtxCreate(&ctx, 0, dev), CUDA_SUCCESS);
    expect("cuMemAlloc(0 bytes)", cuMemAlloc(&d, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAlloc(16)", cuMemAlloc(&d, 16), CUDA_SUCCESS);
    expect("cuMemFree(an address never allocated)", cuMemFree(d + 4), CUDA_ERROR_INVALID_VALUE);
    int host[8] = {0};
    expect("cuMemcpyHtoD past the end of an allocation", cuMemcpyHtoD(d, host, 32), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemcpyHtoD to an address never allocated", cuMemcpyHtoD((CUdeviceptr)host, host, 4), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemcpyDtoH from NULL", cuMemcpyDtoH(host, 0, 4), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD32 inside the allocation", cuMemsetD32(d, 0xabcdef01u, 4), CUDA_SUCCESS);
    expect("cuMemcpyDtoH inside the allocation", cuMemcpyDtoH(host, d, 16), CUDA_SUCCESS);
    expect("  ... memset values read back", host[3] == (int)0xabcdef01u ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    CUdeviceptr base;
    size_t size;
    expect("cuMemGetAddressRange(inside)", cuMemGetAddressRange(&base, &size, d + 8), CUDA_SUCCESS);
    expect("  ... base and size", base == d && size == 16 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    unsigned mtype = 0;
    expect("cuPointerGetAttribute(MEMORY_TYPE)", cuPointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), CUDA_SUCCESS);
    expect("  ... is device memory", mtype == CU_MEMORYTYPE_DEVICE ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);

    // Modules.
    unsigned char elf[64] = {0x7f, 'E', 'L', 'F'};
    expect("cuModuleLoadData(a cubin)", cuModuleLoadData(&mod, elf), CUDA_ERROR_NO_BINARY_FOR_GPU);
    char log[2048] = "";
    CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {log, (void *)(size_t)sizeof log};
    expect("cuModuleLoadDataEx(invalid PTX)", cuModuleLoadDataEx(&mod, bad_ptx, 2, opt, val), CUDA_ERROR_INVALID_PTX);
    // The error log names the line and column of the bad instruction.
    expect("  ... the error log has line 5, column 3", strstr(log, ":5:3") ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    expect("cuModuleLoadData(valid PTX)", cuModuleLoadData(&mod, kernels), CUDA_SUCCESS);
    expect("cuModuleGetFunction(unknown name)", cuModuleGetFunction(&store, mod, "nope"), CUDA_ERROR_NOT_FOUND);
    expect("cuModuleGetFunction(made-up module)", cuModuleGetFunction(&store, (CUmodule)host, "store"), CUDA_ERROR_INVALID_HANDLE);
    expect("cuModuleGetFunction(store)", cuModuleGetFunction(&store, mod, "store"), CUDA_SUCCESS);
    expect("cuModuleGetFunction(dyn_smem)", cuModuleGetFunction(&dyn, mod, "dyn_smem"), CUDA_SUCCESS);
    expect("cuModuleGetFunction(traps)", cuModuleGetFunction(&traps, mod, "traps"), CUDA_SUCCESS);
    expect("cuModuleGetFunction(spins)", cuModuleGetFunction(&spins, mod, "spins"), CUDA_SUCCESS);
    CUdeviceptr g;
    size_t gsize;
    expect("cuModuleGetGlobal(counter)", cuModuleGetGlobal(&g, &gsize, mod, "counter"), CUDA_SUCCESS);
    unsigned counter = 0;
    expect("cuMemcpyDtoH(counter)", cuMemcpyDtoH(&counter, g, 4), CUDA_SUCCESS);
    expect("  ... initial value 7, size 4", counter == 7 && gsize == 4 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    expect("cuModuleGetGlobal(unknown)", cuModuleGetGlobal(&g, &gsize, mod, "nope"), CUDA_ERROR_NOT_FOUND);

    // Launches.
    unsigned value = 42;
    void *args[] = {&d, &value};
    expect("cuLaunchKernel(block of 2048 threads)", cuLaunchKernel(store, 1, 1, 1, 2048, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(grid of 0 blocks)", cuLaunchKernel(store, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(kernelParams NULL)", cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(made-up function)", cuLaunchKernel((CUfunction)host, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    expect("cuLaunchKernel(store 42)", cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
    expect("cuMemcpyDtoH", cuMemcpyDtoH(host, d, 4), CUDA_SUCCESS);
    expect("  ... the kernel stored 42", host[0] == 42 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    void *dargs[] = {&d};
    expect("cuLaunchKernel(64 KiB dynamic smem, no opt-in)", cuLaunchKernel(dyn, 1, 1, 1, 32, 1, 1, 65536, NULL, dargs, NULL), CUDA_ERROR_INVALID_VALUE);
    expect("cuFuncSetAttribute(MAX_DYNAMIC_SHARED 64 KiB)", cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536), CUDA_SUCCESS);
    expect("cuLaunchKernel(64 KiB dynamic smem, opted in)", cuLaunchKernel(dyn, 1, 1, 1, 32, 1, 1, 65536, NULL, dargs, NULL), CUDA_SUCCESS);
    expect("cuFuncSetAttribute(MAX_DYNAMIC_SHARED 1 MiB)", cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 20), CUDA_ERROR_INVALID_VALUE);

    // Streams and events.
    CUstream s;
    CUevent e1, e2;
    float ms;
    expect("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
    expect("cuEventCreate(e1)", cuEventCreate(&e1, 0), CUDA_SUCCESS);
    expect("cuEventCreate(e2)", cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    expect("cuEventElapsedTime(never recorded)", cuEventElapsedTime(&ms, e1, e1), CUDA_ERROR_INVALID_HANDLE);
    expect("cuEventRecord(e1)", cuEventRecord(e1, s), CUDA_SUCCESS);
    expect("cuEventRecord(e2)", cuEventRecord(e2, s), CUDA_SUCCESS);
    expect("cuEventElapsedTime(timing disabled)", cuEventElapsedTime(&ms, e1, e2), CUDA_ERROR_INVALID_HANDLE);
    expect("cuStreamDestroy", cuStreamDestroy(s), CUDA_SUCCESS);
    expect("cuStreamSynchronize(destroyed stream)", cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);

    // cuGetProcAddress.
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    expect("cuGetProcAddress(cuMemAlloc)", cuGetProcAddress("cuMemAlloc", &fn, 12090, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_SUCCESS);
    expect("  ... resolves to cuMemAlloc_v2", fn == (void *)cuMemAlloc_v2 && q == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    expect("cuGetProcAddress(not a driver function)", cuGetProcAddress("cuFrobnicate", &fn, 12090, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_ERROR_NOT_FOUND);
    expect("  ... symbol not found, NULL", fn == NULL && q == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);

    // A trap: "unspecified launch failure", and the context's error is sticky.
    expect("cuLaunchKernel(traps)", cuLaunchKernel(traps, 2, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_LAUNCH_FAILED);
    expect("cuCtxSynchronize after the trap", cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    expect("cuMemAlloc after the trap", cuMemAlloc(&d, 16), CUDA_ERROR_LAUNCH_FAILED);
    expect("cuCtxDestroy", cuCtxDestroy(ctx), CUDA_SUCCESS);

    // A kernel past its time limit (PTXR_LAUNCH_TIMEOUT, set by the test): "launch timed out".
    expect("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    expect("cuCtxSetCurrent(primary)", cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    if (getenv("PTXR_LAUNCH_TIMEOUT")) {
        expect("cuLaunchKernel(spins forever)", cuLaunchKernel(spins, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_LAUNCH_TIMEOUT);
        expect("cuDevicePrimaryCtxReset clears the error", cuDevicePrimaryCtxReset(dev), CUDA_SUCCESS);
    }
    expect("cuMemAlloc in the primary context", cuMemAlloc(&d, 16), CUDA_SUCCESS);
    expect("cuMemFree", cuMemFree(d), CUDA_SUCCESS);
    expect("cuMemFree again (double free)", cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    // A store to an address no allocation covers: a GPU reports an illegal address and the
    // context keeps the error until it is destroyed; the process goes on.
    CUcontext c2;
    CUmodule wm;
    CUfunction wild;
    unsigned long long wild_addr = 0x10;
    void *wargs[] = {&wild_addr};
    expect("cuCtxCreate (for a faulting kernel)", cuCtxCreate(&c2, 0, dev), CUDA_SUCCESS);
    expect("cuModuleLoadData(wild)", cuModuleLoadData(&wm, wild_ptx), CUDA_SUCCESS);
    expect("cuModuleGetFunction(wild)", cuModuleGetFunction(&wild, wm, "wild"), CUDA_SUCCESS);
    struct { int magic, version; const void *data; void *unused; } wrapper = {0x466243b1, 1, wild_ptx, NULL};
    CUmodule fm;
    expect("cuModuleLoadFatBinary(a wrapper around PTX)", cuModuleLoadFatBinary(&fm, &wrapper), CUDA_SUCCESS);
    unsigned int nvidia_fatbin[4] = {0xba55ed50u, 0x00100001u, 0, 0};
    expect("cuModuleLoadFatBinary(an NVIDIA fatbinary)", cuModuleLoadFatBinary(&fm, nvidia_fatbin), CUDA_ERROR_NO_BINARY_FOR_GPU);
    expect("cuLaunchKernel(wild store)", cuLaunchKernel(wild, 4, 1, 1, 64, 1, 1, 0, NULL, wargs, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    expect("cuCtxSynchronize after the fault", cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    expect("cuCtxDestroy", cuCtxDestroy(c2), CUDA_SUCCESS);
    expect("cuCtxCreate after the fault", cuCtxCreate(&c2, 0, dev), CUDA_SUCCESS);
    expect("cuMemAlloc in the new context", cuMemAlloc(&d, 16), CUDA_SUCCESS);
    const char *str = NULL;
    expect("cuGetErrorString(CUDA_ERROR_ASSERT)", cuGetErrorString(CUDA_ERROR_ASSERT, &str), CUDA_SUCCESS);
    expect("cuGetErrorName(12345)", cuGetErrorName((CUresult)12345, &str), CUDA_ERROR_INVALID_VALUE);
    printf("%s\n", failed ? "FAILED" : "PASSED");
    return failed;
}
