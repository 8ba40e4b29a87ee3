// A histogram in shared memory with atomics, whose bin of each byte comes from a lookup
// table in __constant__ memory set with cudaMemcpyToSymbol; a __device__ counter read back
// with cudaMemcpyFromSymbol; a grid-stride loop. Checked against the host's histogram.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

#define BINS 16
__constant__ unsigned char bin_of[256];
__device__ unsigned int blocks_done;

__global__ void histogram(const unsigned char *data, int n, unsigned int *hist) {
    __shared__ unsigned int local[BINS];
    if (threadIdx.x < BINS) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[bin_of[data[i]]], 1u);
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
    if (threadIdx.x == 0) atomicAdd(&blocks_done, 1u);
}

int main() {
    const int n = 1 << 21, blocks = 48;
    unsigned char *h = (unsigned char *)malloc(n);
    unsigned int seed = 12345;
    for (int i = 0; i < n; i++) { seed = seed * 1103515245u + 12345u; h[i] = (unsigned char)(seed >> 16); }
    unsigned char table[256];
    for (int v = 0; v < 256; v++) table[v] = (unsigned char)((v * 7 + v / 16) % BINS);
    CHECK(cudaMemcpyToSymbol(bin_of, table, sizeof table));
    unsigned int zero = 0;
    CHECK(cudaMemcpyToSymbol(blocks_done, &zero, sizeof zero));
    unsigned char *dd;
    unsigned int *dh;
    CHECK(cudaMalloc(&dd, n));
    CHECK(cudaMalloc(&dh, BINS * sizeof(unsigned int)));
    CHECK(cudaMemcpy(dd, h, n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dh, 0, BINS * sizeof(unsigned int)));
    histogram<<<blocks, 256>>>(dd, n, dh);
    CHECK(cudaGetLastError());
    unsigned int hist[BINS], done = 0, ref[BINS] = {0};
    CHECK(cudaMemcpy(hist, dh, sizeof hist, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpyFromSymbol(&done, blocks_done, sizeof done));
    for (int i = 0; i < n; i++) ref[table[h[i]]]++;
    int bad = done != blocks;
    for (int b = 0; b < BINS; b++) bad += hist[b] != ref[b];
    printf("histogram of %d bytes into %d bins: %s; %u blocks counted\n", n, BINS, bad ? "WRONG" : "all bins correct", done);
    printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad != 0;
}
