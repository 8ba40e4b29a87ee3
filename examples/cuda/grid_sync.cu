// Grid-wide synchronization with cooperative groups: a launch of every CTA at once
// (cudaLaunchCooperativeKernel, and cudaLaunchKernelEx with the cooperative attribute) in which each phase reads what all CTAs wrote in the one
// before, with grid.sync() between the phases.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
namespace cg = cooperative_groups;

// Phase 1: every CTA sums its slice of the input into partial[blockIdx.x].
// Phase 2: CTA 0 adds the partial sums.
// Phase 3: every thread scales its elements by the total (which all CTAs need).
__global__ void normalize(const float *in, float *out, float *partial, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  extern __shared__ float s[];
  float v = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  s[block.thread_rank()] = v;
  block.sync();
  for (int k = block.size() / 2; k > 0; k /= 2) {
    if (block.thread_rank() < k) s[block.thread_rank()] += s[block.thread_rank() + k];
    block.sync();
  }
  if (block.thread_rank() == 0) partial[blockIdx.x] = s[0];
  grid.sync();
  if (grid.thread_rank() == 0) {
    float t = 0;
    for (int b = 0; b < gridDim.x; b++) t += partial[b];
    partial[gridDim.x] = t;
  }
  grid.sync();
  float total = partial[gridDim.x];
  for (int i = grid.thread_rank(); i < n; i += grid.size()) out[i] = in[i] / total;
}

int main() {
  const int n = 1 << 20, threads = 256;
  int dev = 0, coop = 0, sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, normalize, threads, threads * sizeof(float));
  if (!coop || per_sm < 1) { printf("FAILED: no cooperative launches (%d, %d)\n", coop, per_sm); return 1; }
  int blocks = sms * per_sm;
  std::vector<float> h(n);
  for (int i = 0; i < n; i++) h[i] = (float)(i % 13 + 1);
  float *in, *out, *partial;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMalloc(&partial, (blocks + 1) * sizeof(float));
  cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  int nn = n;
  void *args[] = {&in, &out, &partial, &nn};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)normalize, blocks, threads, args, threads * sizeof(float), 0);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("FAILED: %s\n", cudaGetErrorString(e)); return 1; }
  // The same launch through cudaLaunchKernelEx with the cooperative attribute, into out2.
  float *out2;
  cudaMalloc(&out2, n * sizeof(float));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = threads * sizeof(float);
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  e = cudaLaunchKernelEx(&cfg, normalize, (const float *)in, out2, partial, nn);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("FAILED: cudaLaunchKernelEx: %s\n", cudaGetErrorString(e)); return 1; }
  // A grid larger than fits at once is refused, as on a GPU.
  cudaError_t big = cudaLaunchCooperativeKernel((void *)normalize, blocks + 1, threads, args, threads * sizeof(float), 0);
  cudaGetLastError();
  std::vector<float> r(n), r2(n);
  cudaMemcpy(r.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(r2.data(), out2, n * sizeof(float), cudaMemcpyDeviceToHost);
  // The sum of i % 13 + 1 over the input, exactly: every value and partial sum is an
  // integer below 2^24, so float addition is exact in any order.
  double total = 0;
  for (int i = 0; i < n; i++) total += h[i];
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (r[i] != h[i] / (float)total || r2[i] != r[i]) bad++;
  printf("%d CTAs of %d threads, total %.0f, %d wrong; too large a grid: %s\n", blocks, threads, total, bad, cudaGetErrorName(big));
  bool ok = bad == 0 && big == cudaErrorCooperativeLaunchTooLarge;
  printf(ok ? "PASSED\n" : "FAILED\n");
  return ok ? 0 : 1;
}
