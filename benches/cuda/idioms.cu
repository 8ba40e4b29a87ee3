// Kernels of common CUDA idioms where a thread has a loop of its own, for the warp-vector
// benchmark (scripts/bench-kernels.sh; C baselines of the same algorithms in
// benches/c/baselines.c). NVRTC 12.9 compiles this to benches/idioms.nvrtc.ptx:
//   .venv/bin/python scripts/nvrtc_compile.py benches/cuda/idioms.cu benches/idioms.nvrtc.ptx \
//       --gpu-architecture=compute_70 -std=c++17 --fmad=false

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
