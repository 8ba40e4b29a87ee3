// Native C baselines for scripts/bench-kernels.sh: the same algorithms as the corpus kernels
// (tests/cuda/*.cu), parallelized with OpenMP over all cores.
// Build: gcc -O3 -march=native -fopenmp baselines.c -o baselines
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now(void) { return omp_get_wtime(); }

static void saxpy(const float *x, float *y, float a, int n) {
#pragma omp parallel for simd
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

// One sum per 32-element group, as warp_reduce_down computes.
static void warp_sums(const float *in, float *out, int n) {
#pragma omp parallel for
  for (int w = 0; w < n / 32; w++) {
    float s = 0;
    for (int k = 0; k < 32; k++) s += in[w * 32 + k];
    out[w] = s;
  }
}

// Inclusive scans of 256-element blocks, as block_inclusive_scan computes.
static void block_scan(const int *in, int *out, int n) {
#pragma omp parallel for
  for (int b = 0; b < n / 256; b++) {
    int s = 0;
    for (int k = 0; k < 256; k++) out[b * 256 + k] = s += in[b * 256 + k];
  }
}

static void sgemm(const float *A, const float *B, float *C, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    float *c = C + (size_t)i * n;
    for (int j = 0; j < n; j++) c[j] = 0;
    for (int k = 0; k < n; k++) {
      float a = A[(size_t)i * n + k];
      const float *b = B + (size_t)k * n;
#pragma omp simd
      for (int j = 0; j < n; j++) c[j] += a * b[j];
    }
  }
}

static void histogram(const unsigned char *d, unsigned *bins, int n) {
  memset(bins, 0, 256 * sizeof(unsigned));
#pragma omp parallel
  {
    unsigned local[256] = {0};
#pragma omp for
    for (int i = 0; i < n; i++) local[d[i]]++;
    for (int b = 0; b < 256; b++) {
#pragma omp atomic
      bins[b] += local[b];
    }
  }
}

// The histogram kernel's own decomposition, in the order a CPU that runs one CTA at a time
// (as ptxr does) must visit its bytes: 1024 CTAs of 256 threads, each thread striding by the
// grid size (256 KiB) through the input, and within a CTA a pass of `passes` iterations of
// each thread in turn (ptxr's yield loops, lanes::lockstep, run 8). Not a baseline to beat:
// it shows what the grid-stride order itself costs on a CPU, apart from code quality.
static void histogram_cta_order(const unsigned char *d, unsigned *bins, int n, int passes) {
  const int ctas = 1024, threads = 256, stride = ctas * threads;
  memset(bins, 0, 256 * sizeof(unsigned));
#pragma omp parallel for schedule(static)
  for (int c = 0; c < ctas; c++) {
    unsigned local[256] = {0};
    int idx[256];
    for (int t = 0; t < threads; t++) idx[t] = c * threads + t;
    for (int k = 0; k < n / stride; k += passes)
      for (int t = 0; t < threads; t++) {
        int i = idx[t];
        for (int j = 0; j < passes && i < n; j++, i += stride) local[d[i]]++;
        idx[t] = i;
      }
    for (int b = 0; b < 256; b++) {
#pragma omp atomic
      bins[b] += local[b];
    }
  }
}

static void stencil(const float *in, float *out, int w, int h) {
#pragma omp parallel for
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int i = y * w + x;
      if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        out[i] = in[i];
      else
        out[i] = 0.25f * (((in[i - 1] + in[i + 1]) + in[i - w]) + in[i + w]);
    }
}

// Prints "name seconds" for the best of `reps` runs.
#define TIME(name, reps, stmt)                 \
  do {                                         \
    double best = 1e30;                        \
    for (int r = 0; r < (reps); r++) {         \
      double t0 = now();                       \
      stmt;                                    \
      double t = now() - t0;                   \
      if (t < best) best = t;                  \
    }                                          \
    printf("%s %.6f\n", name, best);           \
  } while (0)

// The idioms of benches/cuda/idioms.cu.
static void saxpy_grid(const float *x, float *y, float a, int n) {
#pragma omp parallel for simd
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

// The grid-stride saxpy in the order the warp path runs it: CTAs across the cores, in each
// CTA warp after warp, each warp's 32 consecutive elements, then the next grid stride (1 MiB
// further on). Not a baseline to beat: it shows what the grid-stride order costs on a CPU.
static void saxpy_grid_cta_order(const float *x, float *y, float a, int n) {
  const int ctas = 1024, threads = 256, stride = ctas * threads;
#pragma omp parallel for schedule(static)
  for (int c = 0; c < ctas; c++)
    for (int w = 0; w < threads / 32; w++)
      for (int i = c * threads + w * 32; i < n; i += stride)
#pragma omp simd
        for (int l = 0; l < 32; l++)
          if (i + l < n) y[i + l] = a * x[i + l] + y[i + l];
}

// Softmax of each row (benches/cuda/idioms.cu softmax_rows): the row's max, the sum of
// exponentials, then each output.
static void softmax_rows(const float *x, float *y, int rows, int cols) {
#pragma omp parallel for
  for (int r = 0; r < rows; r++) {
    const float *row = x + (size_t)r * cols;
    float *out = y + (size_t)r * cols;
    float m = -3.402823466e38f;
    for (int c = 0; c < cols; c++) m = fmaxf(m, row[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; c++) s += expf(row[c] - m);
    for (int c = 0; c < cols; c++) out[c] = expf(row[c] - m) / s;
  }
}

static void matmul_naive(const float *a, const float *b, float *c, int n) {
#pragma omp parallel for
  for (int row = 0; row < n; row++)
    for (int col = 0; col < n; col++) {
      float s = 0.0f;
      for (int k = 0; k < n; ++k) s += a[row * n + k] * b[k * n + col];
      c[row * n + col] = s;
    }
}

static void mandelbrot(int *out, int w, int h, int maxit) {
#pragma omp parallel for
  for (int py = 0; py < h; py++)
    for (int px = 0; px < w; px++) {
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
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 3;
  // BENCH_N (as in benches/kernels.rs): the element count of the streaming kernels, default 2^26
  // (e.g. 2^20 to time them on data that stays in the caches).
  int n = getenv("BENCH_N") ? atoi(getenv("BENCH_N")) : 1 << 26;
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) { x[i] = (float)(i % 1000) * 0.5f; y[i] = (float)(i % 7); }
  TIME("saxpy", reps, saxpy(x, y, 2.0f, n));
  float *ws = malloc(sizeof(float) * (n / 32));
  TIME("reduce", reps, warp_sums(x, ws, n));
  // SGEMM_N (as in benches/kernels.rs): the sgemm's matrix size, default 1024.
  int m = getenv("SGEMM_N") ? atoi(getenv("SGEMM_N")) : 1024;
  float *A = malloc(sizeof(float) * m * m), *B = malloc(sizeof(float) * m * m), *C = malloc(sizeof(float) * m * m);
  for (int i = 0; i < m * m; i++) { A[i] = (float)(i % 13) * 0.25f; B[i] = (float)(i % 11) * 0.5f; }
  TIME("sgemm", reps, sgemm(A, B, C, m));
  {
    int *si = malloc(sizeof(int) * n), *so = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) si[i] = i % 7 - 3;
    TIME("scan", reps, block_scan(si, so, n));
  }
  unsigned char *bytes = malloc(n);
  uint32_t s = 12345;
  for (int i = 0; i < n; i++) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; bytes[i] = (unsigned char)s; }
  unsigned bins[256];
  TIME("histogram", reps, histogram(bytes, bins, n));
  TIME("histogram_cta_order", reps, histogram_cta_order(bytes, bins, n, 8));
  int w = 4096;
  float *in = malloc(sizeof(float) * w * w), *out = malloc(sizeof(float) * w * w);
  for (int i = 0; i < w * w; i++) in[i] = (float)(i % 101);
  TIME("stencil", reps, stencil(in, out, w, w));
  for (int i = 0; i < n; i++) y[i] = (float)(i % 7);
  TIME("saxpy_grid", reps, saxpy_grid(x, y, 2.0f, n));
  TIME("saxpy_grid_cta_order", reps, saxpy_grid_cta_order(x, y, 2.0f, n));
  {
    int rows = 4096, cols = 1024;
    float *sx = malloc(sizeof(float) * rows * cols), *sy = malloc(sizeof(float) * rows * cols);
    for (int i = 0; i < rows * cols; i++) sx[i] = (float)(i % 97) * 0.01f;
    TIME("softmax", reps, softmax_rows(sx, sy, rows, cols));
  }
  int k = 512;
  TIME("matmul_naive", reps, matmul_naive(A, B, C, k));
  int *img = malloc(sizeof(int) * 1024 * 1024);
  TIME("mandelbrot", reps, mandelbrot(img, 1024, 1024, 256));
  return 0;
}
