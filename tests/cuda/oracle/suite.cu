// Kernels in the style of common GPU benchmark suites, compiled to PTX by NVRTC and run on a
// real GPU by tests/filetests/ref/cuda_oracle.py, which records the GPU's outputs as filetest
// expectations (tests/filetests/gpu/cuda_*.ptx). Integer and exactly-rounded float arithmetic
// only where results are compared bit for bit; the libdevice math functions (exp, log, sin,
// pow, ... in double precision) are sequences of exactly-rounded PTX instructions too.

// Hotspot-style 2-D stencil through a shared tile with a halo; 16x16 blocks, n x n grid.
extern "C" __global__ void hotspot(const float *t, const float *p, float *out, int n, float cap) {
  __shared__ float tile[18][18];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  float c = (x < n && y < n) ? t[y * n + x] : 0.0f;
  tile[ty][tx] = c;
  if (threadIdx.x == 0) tile[ty][0] = (x > 0 && y < n) ? t[y * n + x - 1] : c;
  if (threadIdx.x == 15) tile[ty][17] = (x + 1 < n && y < n) ? t[y * n + x + 1] : c;
  if (threadIdx.y == 0) tile[0][tx] = (y > 0 && x < n) ? t[(y - 1) * n + x] : c;
  if (threadIdx.y == 15) tile[17][tx] = (y + 1 < n && x < n) ? t[(y + 1) * n + x] : c;
  __syncthreads();
  if (x < n && y < n) {
    float lap = tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx] - 4.0f * c;
    out[y * n + x] = c + cap * (p[y * n + x] + 0.1f * lap);
  }
}

// Needleman-Wunsch scoring of one 16x16 block of the matrix with an anti-diagonal wavefront in
// shared memory (one block of 16 threads per independent problem).
extern "C" __global__ void nw_block(const int *ref, int *score, int penalty) {
  __shared__ int s[17][17];
  __shared__ int r[16][16];
  int b = blockIdx.x, t = threadIdx.x;
  const int *rb = ref + b * 256;
  int *sb = score + b * 289;
  for (int i = 0; i < 16; i++) r[i][t] = rb[i * 16 + t];
  s[0][t + 1] = -(t + 1) * penalty;
  s[t + 1][0] = -(t + 1) * penalty;
  if (t == 0) s[0][0] = 0;
  __syncthreads();
  for (int d = 0; d < 31; d++) {
    int i = t + 1, j = d - t + 1;
    if (j >= 1 && j <= 16) {
      int m = s[i - 1][j - 1] + r[i - 1][j - 1];
      int u = s[i - 1][j] - penalty, l = s[i][j - 1] - penalty;
      s[i][j] = max(m, max(u, l));
    }
    __syncthreads();
  }
  for (int i = 0; i < 17; i++) {
    sb[i * 17 + t] = s[i][t];
    if (t == 15) sb[i * 17 + 16] = s[i][16];
  }
}

// One BFS level over a CSR graph: frontier nodes mark unvisited neighbours with level + 1.
extern "C" __global__ void bfs_step(const int *row, const int *col, int *level, int n, int cur, int *changed) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  for (int e = row[v]; e < row[v + 1]; e++) {
    int w = col[e];
    if (atomicCAS(&level[w], -1, cur + 1) == -1) atomicAdd(changed, 1);
  }
}

// k-means assignment: nearest of k centroids (ties to the lower index), d dimensions; the
// membership and a per-cluster count (atomics).
extern "C" __global__ void kmeans_assign(const float *pts, const float *cent, int *member, int *count, int n, int k, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int best = 0;
  float bd = 3.4e38f;
  for (int c = 0; c < k; c++) {
    float s = 0.0f;
    for (int j = 0; j < d; j++) {
      float df = pts[i * d + j] - cent[c * d + j];
      s += df * df;
    }
    if (s < bd) { bd = s; best = c; }
  }
  member[i] = best;
  atomicAdd(&count[best], 1);
}

// Work-efficient (Blelloch) exclusive scan of 512 ints per block in shared memory.
extern "C" __global__ void scan_blelloch(const int *in, int *out) {
  __shared__ int s[512];
  int t = threadIdx.x, base = blockIdx.x * 512;
  s[2 * t] = in[base + 2 * t];
  s[2 * t + 1] = in[base + 2 * t + 1];
  int off = 1;
  for (int dd = 256; dd > 0; dd >>= 1) {
    __syncthreads();
    if (t < dd) { int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1; s[bi] += s[ai]; }
    off *= 2;
  }
  if (t == 0) s[511] = 0;
  for (int dd = 1; dd < 512; dd *= 2) {
    off >>= 1;
    __syncthreads();
    if (t < dd) { int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1; int x = s[ai]; s[ai] = s[bi]; s[bi] += x; }
  }
  __syncthreads();
  out[base + 2 * t] = s[2 * t];
  out[base + 2 * t + 1] = s[2 * t + 1];
}

// Warp-aggregated histogram: lanes with the same bin elect a leader (__match_any_sync, __ffs,
// __popc) that does one atomicAdd for the group.
extern "C" __global__ void hist_aggregated(const unsigned char *data, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned active = __ballot_sync(0xffffffffu, i < n);
  if (i >= n) return;
  unsigned v = data[i];
  unsigned peers = __match_any_sync(active, v);
  int leader = __ffs(peers) - 1;
  if ((threadIdx.x & 31) == leader) atomicAdd(&bins[v], __popc(peers));
}

// Double-precision libdevice math on each element.
extern "C" __global__ void dmath(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[8 * i + 0] = exp(v);
  out[8 * i + 1] = log(fabs(v) + 1e-3);
  out[8 * i + 2] = sin(v);
  out[8 * i + 3] = cos(v);
  out[8 * i + 4] = pow(fabs(v), 0.37);
  out[8 * i + 5] = tanh(v);
  out[8 * i + 6] = erf(v);
  out[8 * i + 7] = atan2(v, 1.5);
}

// Single-precision libm (not the __fast intrinsics) on each element. (expf is left out: it
// ends in ex2.approx.ftz.f32, whose last bit differs between the GPU's hardware approximation
// and ptxr's correctly rounded result; both are within the spec's bound.)
extern "C" __global__ void fmath(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[6 * i + 0] = floorf(v * 3.7f) + fmodf(v, 1.3f);
  out[6 * i + 1] = logf(fabsf(v) + 1e-3f);
  out[6 * i + 2] = sinf(v);
  out[6 * i + 3] = sqrtf(fabsf(v));
  out[6 * i + 4] = powf(fabsf(v), 1.7f);
  out[6 * i + 5] = v / (1.0f + fabsf(v));
}

// Bitonic sort of 256 ints per block in shared memory.
extern "C" __global__ void bitonic256(int *a) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = a[blockIdx.x * 256 + t];
  for (int k = 2; k <= 256; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      __syncthreads();
      int p = t ^ j;
      if (p > t) {
        bool up = (t & k) == 0;
        if ((s[t] > s[p]) == up) { int x = s[t]; s[t] = s[p]; s[p] = x; }
      }
    }
  __syncthreads();
  a[blockIdx.x * 256 + t] = s[t];
}
