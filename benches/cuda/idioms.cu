// Kernels of common CUDA idioms where a thread has a loop of its own, for the warp-vector
// benchmark (scripts/bench-kernels.sh; C baselines of the same algorithms in
// benches/c/baselines.c). NVRTC 12.9 compiles this to benches/idioms.nvrtc.ptx:
//   .venv/bin/python scripts/nvrtc_compile.py benches/cuda/idioms.cu benches/idioms.nvrtc.ptx \
//       --gpu-architecture=compute_70 -std=c++17 --fmad=false

// clang-19 compiles it to benches/idioms.clang.ptx (no CUDA SDK: the corpus prelude):
//   clang-19 -x cuda --cuda-device-only -S --cuda-gpu-arch=sm_70 --cuda-feature=+ptx64 \
//       -nocudainc -nocudalib -O3 -std=c++17 -ffp-contract=off -o benches/idioms.clang.ptx \
//       benches/cuda/idioms.cu
#if !defined(__CUDACC_RTC__)
#include "../../tests/cuda/prelude.h"
// Without libdevice clang has no expf: the usual reduction exp(x) = 2^k exp(r), k = rint(x
// log2 e), r = x - k ln 2 in two parts (Cody-Waite), exp(r) by its Taylor polynomial to
// degree 7 (|r| <= ln 2 / 2: truncation below 2^-25 relative), 2^k from exponent bits in two
// factors (k up to 128).
__device__ __forceinline__ float expf(float x) {
    if (x != x) return x;
    if (x < -87.33654f) return 0.0f;
    if (x > 88.72284f) return __int_as_float(0x7f800000);
    float k = __builtin_rintf(x * 1.44269504088896341f);
    float r = fmaf(k, -0.693145751953125f, x);
    r = fmaf(k, -1.42860682030941723e-6f, r);
    float p = 1.0f / 5040.0f;
    p = fmaf(p, r, 1.0f / 720.0f);
    p = fmaf(p, r, 1.0f / 120.0f);
    p = fmaf(p, r, 1.0f / 24.0f);
    p = fmaf(p, r, 1.0f / 6.0f);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    int ki = (int)k;
    int half = ki / 2;
    return p * __int_as_float((half + 127) << 23) * __int_as_float((ki - half + 127) << 23);
}
#endif

// saxpy as a grid-stride loop (NVIDIA's recommended form).
extern "C" __global__ void saxpy_grid(const float *x, float *y, float a, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// One output per thread, a k loop in each thread.
extern "C" __global__ void matmul_naive(const float *a, const float *b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float s = 0.0f;
        for (int k = 0; k < n; ++k)
            s += a[row * n + k] * b[k * n + col];
        c[row * n + col] = s;
    }
}

// Escape-time loop with divergent trip counts.
extern "C" __global__ void mandelbrot(int *out, int w, int h, int maxit) {
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    float cr = -2.0f + 3.0f * px / w, ci = -1.5f + 3.0f * py / h;
    float zr = 0.0f, zi = 0.0f;
    int it = 0;
    while (it < maxit && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++it;
    }
    out[py * w + px] = it;
}

// Softmax of each row: one 256-thread block per row, tree reductions in shared memory with
// barriers inside loops (the row's max, then the sum of exponentials).
extern "C" __global__ void softmax_rows(const float *x, float *y, int cols) {
    __shared__ float red[256];
    const float *row = x + (size_t)blockIdx.x * cols;
    float *out = y + (size_t)blockIdx.x * cols;
    float m = -3.402823466e38f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / sum;
}
