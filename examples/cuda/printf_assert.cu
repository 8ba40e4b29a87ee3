// Device printf (one line per block, in a known format) and a device assert that fails:
// the launch returns cudaErrorAssert, and the error stays for later calls as on a GPU.
// Prints PASSED when both behave as CUDA documents.
#include <cassert>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void hello(int tag) {
    if (threadIdx.x == 0) printf("block %d of %d says %d\n", blockIdx.x, gridDim.x, tag * (blockIdx.x + 1));
}

__global__ void check_positive(const int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(v[i] > 0);
}

int main() {
    // A block of 2048 threads is outside CUDA's limits: a configuration error, which is not
    // sticky (the next launch runs).
    hello<<<1, 2048>>>(0);
    cudaError_t e0 = cudaGetLastError();
    hello<<<3, 32>>>(7);
    cudaError_t e1 = cudaDeviceSynchronize();
    fflush(stdout);
    int h[64];
    for (int i = 0; i < 64; i++) h[i] = i == 40 ? -1 : i + 1;
    int *d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    check_positive<<<2, 32>>>(d, 64);
    cudaError_t e2 = cudaDeviceSynchronize();
    cudaError_t e3 = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("2048-thread launch: %s; printf launch: %s; assert launch: %s; next call: %s\n", cudaGetErrorName(e0), cudaGetErrorName(e1), cudaGetErrorName(e2), cudaGetErrorName(e3));
    int ok = e0 == cudaErrorInvalidConfiguration && e1 == cudaSuccess && e2 == cudaErrorAssert && e3 == cudaErrorAssert;
    printf("%s\n", ok ? "PASSED" : "FAILED");
    return !ok;
}
