// Matrix multiply with shared-memory tiles, as a template over the tile size and element
// type, instantiated several times (several kernels in one file), plus a transpose kernel.
// Checked against a host triple loop in double precision.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

template <int TILE, typename T>
__global__ void matmul(const T *A, const T *B, T *C, int n) {
    __shared__ T as[TILE][TILE];
    __shared__ T bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    T acc = 0;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? A[row * n + ac] : T(0);
        bs[threadIdx.y][threadIdx.x] = (br < n && col < n) ? B[br * n + col] : T(0);
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}

template <typename T>
__global__ void transpose(const T *in, T *out, int n) {
    __shared__ T tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

template <int TILE, typename T>
static int run(int n, double tol) {
    size_t bytes = (size_t)n * n * sizeof(T);
    T *a = (T *)malloc(bytes), *b = (T *)malloc(bytes), *c = (T *)malloc(bytes), *t = (T *)malloc(bytes);
    for (int i = 0; i < n * n; i++) { a[i] = T((i * 7 % 13) - 6) / T(4); b[i] = T((i * 5 % 11) - 5) / T(8); }
    T *da, *db, *dc, *dt;
    CHECK(cudaMalloc(&da, bytes)); CHECK(cudaMalloc(&db, bytes)); CHECK(cudaMalloc(&dc, bytes)); CHECK(cudaMalloc(&dt, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    matmul<TILE, T><<<grid, block>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    transpose<T><<<dim3((n + 31) / 32, (n + 31) / 32), dim3(32, 32)>>>(dc, dt, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(t, dt, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double r = 0;
            for (int k = 0; k < n; k++) r += (double)a[i * n + k] * (double)b[k * n + j];
            if (fabs((double)c[i * n + j] - r) > tol || t[j * n + i] != c[i * n + j]) bad++;
        }
    printf("matmul<%d, %s> n=%d and transpose: %d/%d correct\n", TILE, sizeof(T) == 4 ? "float" : "double", n, n * n - bad, n * n);
    CHECK(cudaFree(da)); CHECK(cudaFree(db)); CHECK(cudaFree(dc)); CHECK(cudaFree(dt));
    free(a); free(b); free(c); free(t);
    return bad;
}

int main() {
    // Products of these values are exact in float and double; sums of up to 200 terms of
    // multiples of 1/32 below 2^10 are exact in float too.
    int bad = run<16, float>(200, 0.0) + run<8, double>(77, 0.0) + run<32, float>(64, 0.0);
    printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad != 0;
}
