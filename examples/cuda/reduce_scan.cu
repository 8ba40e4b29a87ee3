// A sum reduction in dynamic shared memory with warp shuffles for the last 32 values, and
// an inclusive prefix sum (scan) in two passes, using cooperative groups within a block
// (thread_block, tiled_partition<32>, shfl_up on a tile). Integer data: the results are
// exact and checked against the host's sums.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void reduce(const int *in, long long *out, int n) {
    extern __shared__ long long part[];
    cg::thread_block block = cg::this_thread_block();
    long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
    part[threadIdx.x] = s;
    block.sync();
    for (int k = blockDim.x / 2; k >= 32; k /= 2) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        block.sync();
    }
    if (threadIdx.x < 32) {
        long long v = part[threadIdx.x];
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) atomicAdd((unsigned long long *)out, (unsigned long long)v);
    }
}

// Pass 1: each block scans its 1024 elements (warp scans with shfl_up on a tile of 32,
// then the warp totals), and writes its total.
__global__ void scan_blocks(const int *in, int *out, int *totals, int n) {
    __shared__ int warp_sums[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    for (int o = 1; o < 32; o *= 2) {
        int u = warp.shfl_up(v, o);
        if (warp.thread_rank() >= o) v += u;
    }
    if (warp.thread_rank() == 31) warp_sums[warp.meta_group_rank()] = v;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        int w = warp.thread_rank() < (int)warp.meta_group_size() ? warp_sums[warp.thread_rank()] : 0;
        for (int o = 1; o < 32; o *= 2) {
            int u = warp.shfl_up(w, o);
            if (warp.thread_rank() >= o) w += u;
        }
        warp_sums[warp.thread_rank()] = w;
    }
    block.sync();
    if (warp.meta_group_rank() > 0) v += warp_sums[warp.meta_group_rank() - 1];
    if (i < n) out[i] = v;
    if (threadIdx.x == blockDim.x - 1) totals[blockIdx.x] = v;
}

// Pass 2: add the scanned totals of the blocks before (one block scans the totals first).
__global__ void scan_totals(int *totals, int nblocks) {
    if (threadIdx.x == 0)
        for (int b = 1; b < nblocks; b++) totals[b] += totals[b - 1];
}

__global__ void add_offsets(int *out, const int *totals, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += totals[blockIdx.x - 1];
}

int main() {
    const int n = 1000000, threads = 1024, blocks = (n + threads - 1) / threads;
    int *h = (int *)malloc(n * sizeof(int)), *scan = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) h[i] = (i * 37 % 101) - 50;
    int *din, *dout, *dtot;
    long long *dsum;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMalloc(&dtot, blocks * sizeof(int)));
    CHECK(cudaMalloc(&dsum, sizeof(long long)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dsum, 0, sizeof(long long)));
    reduce<<<64, 512, 512 * sizeof(long long)>>>(din, dsum, n);
    CHECK(cudaGetLastError());
    scan_blocks<<<blocks, threads>>>(din, dout, dtot, n);
    scan_totals<<<1, 32>>>(dtot, blocks);
    add_offsets<<<blocks, threads>>>(dout, dtot, n);
    CHECK(cudaGetLastError());
    long long sum;
    CHECK(cudaMemcpy(&sum, dsum, sizeof sum, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(scan, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    long long ref = 0;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        ref += h[i];
        if (scan[i] != (int)ref) bad++;
    }
    printf("reduce: %lld (host %lld); scan: %d/%d correct\n", sum, ref, n - bad, n);
    bad += sum != ref;
    printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad != 0;
}
