// Thread block clusters (sm_90) through the driver API: NVRTC compiles CUDA C++ that uses
// cooperative groups' cluster API at run time; the kernels are launched with the cluster
// dimension attribute of cuLaunchKernelEx, and with cuLaunchKernel for a kernel declared with
// __cluster_dims__. A histogram keeps its bins in the shared memory of all the CTAs of a
// cluster (distributed shared memory: cluster.map_shared_rank); every result is checked
// against the host's.
//
// Build like driver_api.c; the program takes the include directories NVRTC needs for
// <cooperative_groups.h> (the CUDA runtime's and CCCL's) as arguments:
//   ./clusters $CUDA_INCLUDE $CCCL_INCLUDE
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        CUresult r_ = (call);                                                          \
        if (r_ != CUDA_SUCCESS) {                                                      \
            const char *name_ = "?";                                                   \
            cuGetErrorName(r_, &name_);                                                \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,  \
                    name_, (int)r_);                                                   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const char *source =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "// bins[b] += count of i with data[i] % nbins == b; CTA rank r of a cluster owns bins\n"
    "// [r * per_cta, (r + 1) * per_cta) in its dynamic shared memory.\n"
    "extern \"C\" __global__ void hist(const int *data, int n, int *bins, int nbins) {\n"
    "    extern __shared__ int smem[];\n"
    "    cg::cluster_group cluster = cg::this_cluster();\n"
    "    unsigned rank = cluster.block_rank();\n"
    "    int per_cta = nbins / (int)cluster.num_blocks();\n"
    "    for (int i = threadIdx.x; i < per_cta; i += blockDim.x) smem[i] = 0;\n"
    "    cluster.sync();\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {\n"
    "        int b = data[i] % nbins;\n"
    "        int *dst = cluster.map_shared_rank(smem, b / per_cta);\n"
    "        atomicAdd(dst + b % per_cta, 1);\n"
    "    }\n"
    "    // No CTA leaves while others may still add to its bins.\n"
    "    cluster.sync();\n"
    "    for (int i = threadIdx.x; i < per_cta; i += blockDim.x) atomicAdd(&bins[rank * per_cta + i], smem[i]);\n"
    "}\n"
    "// Thread 0 of each CTA: its rank, its cluster's index, the cluster's size and shape.\n"
    "extern \"C\" __global__ void __cluster_dims__(2, 2, 1) ranks(int *out) {\n"
    "    cg::cluster_group cluster = cg::this_cluster();\n"
    "    if (threadIdx.x == 0) {\n"
    "        int b = blockIdx.y * gridDim.x + blockIdx.x;\n"
    "        dim3 c = __clusterIdx();\n"
    "        out[4 * b] = cluster.block_rank();\n"
    "        out[4 * b + 1] = c.x + 2 * c.y;\n"
    "        out[4 * b + 2] = cluster.num_blocks();\n"
    "        out[4 * b + 3] = cluster.dim_blocks().x * 10 + cluster.dim_blocks().y;\n"
    "    }\n"
    "}\n";

static char *compile_ptx(const char *cuda_include, const char *cccl_include) {
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, source, "clusters.cu", 0, NULL, NULL) != NVRTC_SUCCESS) exit(1);
    char inc1[4096], inc2[4096];
    snprintf(inc1, sizeof inc1, "-I%s", cuda_include);
    snprintf(inc2, sizeof inc2, "-I%s", cccl_include);
    const char *opts[] = {"--gpu-architecture=compute_90", "-std=c++17", inc1, inc2};
    nvrtcResult r = nvrtcCompileProgram(prog, 4, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log);
        exit(1);
    }
    size_t n;
    nvrtcGetPTXSize(prog, &n);
    char *ptx = malloc(n);
    nvrtcGetPTX(prog, ptx);
    nvrtcDestroyProgram(&prog);
    return ptx;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s CUDA_INCLUDE_DIR CCCL_INCLUDE_DIR\n", argv[0]);
        return 2;
    }
    char *ptx = compile_ptx(argv[1], argv[2]);
    CHECK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction hist, ranks;
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, 0, dev));
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&hist, mod, "hist"));
    CHECK(cuModuleGetFunction(&ranks, mod, "ranks"));

    enum { N = 1 << 18, NBINS = 1024, THREADS = 128, BLOCKS = 16 };
    int *h = malloc(N * sizeof(int)), want[NBINS] = {0}, got[NBINS];
    for (int i = 0; i < N; i++) h[i] = (int)((i * 7919LL) % 100003);
    for (int i = 0; i < N; i++) want[h[i] % NBINS]++;
    CUdeviceptr data, bins, rk;
    CHECK(cuMemAlloc(&data, N * sizeof(int)));
    CHECK(cuMemAlloc(&bins, NBINS * sizeof(int)));
    CHECK(cuMemAlloc(&rk, 64 * sizeof(int)));
    CHECK(cuMemcpyHtoD(data, h, N * sizeof(int)));

    // Clusters of 1, 2, 4 and 8 CTAs through the launch attribute.
    int bad = 0;
    for (unsigned size = 1; size <= 8; size *= 2) {
        CHECK(cuMemsetD32(bins, 0, NBINS));
        int n = N, nbins = NBINS;
        void *args[] = {&data, &n, &bins, &nbins};
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim.x = size;
        attr.value.clusterDim.y = 1;
        attr.value.clusterDim.z = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = BLOCKS, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = THREADS, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.sharedMemBytes = NBINS / size * sizeof(int);
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        CHECK(cuLaunchKernelEx(&cfg, hist, args, NULL));
        CHECK(cuCtxSynchronize());
        CHECK(cuMemcpyDtoH(got, bins, NBINS * sizeof(int)));
        int wrong = 0;
        for (int b = 0; b < NBINS; b++) wrong += got[b] != want[b];
        printf("histogram, clusters of %u CTAs: %d of %d bins wrong\n", size, wrong, NBINS);
        bad += wrong;
    }

    // __cluster_dims__(2, 2, 1) on a 4x4 grid: CTA (x, y) is rank x%2 + 2*(y%2) of cluster
    // x/2 + 2*(y/2), which has 4 CTAs in a 2x2 shape.
    void *rargs[] = {&rk};
    CHECK(cuLaunchKernel(ranks, 4, 4, 1, 32, 1, 1, 0, NULL, rargs, NULL));
    CHECK(cuCtxSynchronize());
    int r[64];
    CHECK(cuMemcpyDtoH(r, rk, sizeof r));
    int wrong = 0;
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) {
            int *o = &r[4 * (y * 4 + x)];
            wrong += o[0] != x % 2 + 2 * (y % 2) || o[1] != x / 2 + 2 * (y / 2) || o[2] != 4 || o[3] != 22;
        }
    printf("cluster ranks of a 4x4 grid in 2x2 clusters: %d of 16 CTAs wrong\n", wrong);
    bad += wrong;
    // A grid that is not a whole number of its kernel's clusters is refused.
    CUresult e = cuLaunchKernel(ranks, 3, 4, 1, 32, 1, 1, 0, NULL, rargs, NULL);
    printf("a 3x4 grid of 2x2 clusters: %s\n", e == CUDA_SUCCESS ? "launched" : "refused");
    bad += e == CUDA_SUCCESS;
    printf(bad == 0 ? "PASSED\n" : "FAILED\n");
    return bad == 0 ? 0 : 1;
}
