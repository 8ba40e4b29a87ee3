// Kernels of common CUDA idioms where a thread has a loop of its own, for the warp-vector
// benchmark (scripts/bench-kernels.sh; C baselines of the same algorithms in
// benches/c/baselines.c). NVRTC 12.9 compiles this to benches/idioms.nvrtc.ptx.

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
