// CUDA IPC memory handles between two processes: the parent allocates device memory, fills
// it, passes cuIpcGetMemHandle's handle (in hex) to a child process (this program, run
// again), which opens it, checks the parent's values, writes its own and closes it; the
// parent then sees the child's values. A handle opened in its own process is refused.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s: %d\n", #x, (int)r_); return 1; } } while (0)

int main(int argc, char **argv) {
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CUipcMemHandle h;
    unsigned v[256];
    if (argc == 3 && !strcmp(argv[1], "child")) {
        for (int i = 0; i < 64; i++) {
            unsigned x;
            sscanf(argv[2] + 2 * i, "%2x", &x);
            h.reserved[i] = (char)x;
        }
        CUdeviceptr d;
        CHECK(cuIpcOpenMemHandle(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
        CHECK(cuMemcpyDtoH(v, d, sizeof v));
        int bad = 0;
        for (int i = 0; i < 256; i++) bad += v[i] != (unsigned)(i * 3);
        for (int i = 0; i < 256; i++) v[i] = 1000 + i;
        CHECK(cuMemcpyHtoD(d, v, sizeof v));
        CHECK(cuIpcCloseMemHandle(d));
        printf("child: %d/256 of the parent's values\n", 256 - bad);
        return bad != 0;
    }
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, sizeof v));
    for (int i = 0; i < 256; i++) v[i] = i * 3;
    CHECK(cuMemcpyHtoD(d, v, sizeof v));
    CHECK(cuIpcGetMemHandle(&h, d));
    CUdeviceptr same;
    CUresult own = cuIpcOpenMemHandle(&same, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    char cmd[4096], hex[129];
    for (int i = 0; i < 64; i++) sprintf(hex + 2 * i, "%02x", (unsigned char)h.reserved[i]);
    snprintf(cmd, sizeof cmd, "%s child %s", argv[0], hex);
    int rc = system(cmd);
    CHECK(cuMemcpyDtoH(v, d, sizeof v));
    int seen = 0;
    for (int i = 0; i < 256; i++) seen += v[i] == (unsigned)(1000 + i);
    printf("own handle refused: %d; child exit %d; parent sees %d/256 of the child's values\n", own == CUDA_ERROR_INVALID_CONTEXT, rc, seen);
    CHECK(cuMemFree(d));
    return 0;
}
