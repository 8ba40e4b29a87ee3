/* ptxr C ABI: launching PTX kernels compiled ahead of time by ptxr (see docs/abi.md). */
#ifndef PTXR_H
#define PTXR_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Runs body(body_ctx, i) for every i in [0, n), in any order, possibly concurrently. */
typedef void (*ptxr_body_fn)(void *body_ctx, uint32_t index);
typedef void (*ptxr_parallel_for_fn)(void *user, uint32_t n, ptxr_body_fn body, void *body_ctx);

typedef struct ptxr_launch_config {
    uint32_t grid[3];      /* CTAs per dimension (x < 2^31, y, z <= 65535), each >= 1 */
    uint32_t block[3];     /* threads per CTA (at most 1024; x, y <= 1024, z <= 64), each >= 1 */
    uint32_t shared_bytes; /* dynamic shared memory per CTA (extern .shared) */
    ptxr_parallel_for_fn parallel_for; /* NULL: CTAs run one after another on the caller's thread */
    void *user;            /* passed to parallel_for */
} ptxr_launch_config;

/* Return codes of ptxr_launch_<kernel>; ptxr_last_error() has the message. */
#define PTXR_OK 0
#define PTXR_ERR_CONFIG 1   /* grid, block or shared memory out of limits, .reqntid/.maxntid */
#define PTXR_ERR_ARGS 2     /* args or an args[i] is NULL */
#define PTXR_ERR_TRAP 3     /* `trap` executed */
#define PTXR_ERR_ASSERT 4   /* device assert failed (__assertfail) */
#define PTXR_ERR_DEADLOCK 5 /* barrier or warp collective that can never complete */
#define PTXR_ERR_BRKPT 6    /* `brkpt` executed */
#define PTXR_ERR_LAUNCH 7   /* any other abnormal stop of a CTA */
#define PTXR_ERR_NOMEM 8    /* out of host memory */
#define PTXR_ERR_BARRIER 9  /* bar/barrier thread count not a multiple of 32 or above the CTA size */
#define PTXR_ERR_TIMEOUT 10 /* the launch ran past the time limit of ptxr_set_timeout */
#define PTXR_ERR_CHECK 11   /* kernels compiled with `ptxr compile --check`: a bad access, a race,
                               an uninitialized shared read or a misused barrier */

/* A texture, surface or sampler descriptor (docs/textures.md). A kernel's texture or surface
 * object parameter (.u64, .texref, .surfref) receives the address of one; a module-scope
 * `.global .texref NAME` is one, exported as the symbol __ptxr_ref_NAME for the host to fill. */
typedef struct ptxr_texref {
    uint32_t kind;        /* 1 texture, 2 surface, 3 sampler; 0 unbound (reads zero) */
    uint32_t format;      /* channel type: 0 u8, 1 s8, 2 u16, 3 s16, 4 u32, 5 s32, 6 f16, 7 f32 */
    uint32_t channels;    /* 1, 2 or 4 */
    uint32_t flags;       /* PTXR_TEX_* */
    uint32_t addr_mode[3];/* per dimension: 0 wrap, 1 mirror, 2 clamp, 3 border (color 0) */
    uint32_t width, height, depth; /* texels; depth counts layers of a layered texture */
    uint64_t pitch;       /* bytes per row (0: width * texel size) */
    uint64_t slice;       /* bytes per 2D slice or layer (0: pitch * height) */
    const void *data;
} ptxr_texref;
#define PTXR_TEX_NORMALIZED 1      /* coordinates in [0, 1) */
#define PTXR_TEX_LINEAR 2          /* linear filtering (else nearest) */
#define PTXR_TEX_READ_NORMALIZED 4 /* 8/16-bit integer texels read as floats in [0,1] / [-1,1] */
#define PTXR_TEX_LAYERED 8         /* a1d/a2d texture: depth = number of layers */

/* The checking mode (kernels compiled with `ptxr compile --check`, docs/abi.md): before each
 * access the kernel asks the runtime, and the first bad one stops the launch with
 * PTXR_ERR_CHECK and a report (file:line:col, CTA, thread, address, size, nearest
 * allocation). Global accesses are checked against the ranges registered here (by any thread:
 * the list is the process's) and the module's variables; while none is registered they are
 * not checked. Shared memory is checked for bounds, races between warps and uninitialized
 * reads, barriers for divergence and thread counts, as `ptxr run --check` does.
 * ptxr_check_add returns 0, or -1 without memory; `name` is copied. */
int ptxr_check_add(const void *start, uint64_t bytes, const char *name);
void ptxr_check_clear(void);

/* The message of the last failed launch on the calling thread ("" if it succeeded). */
const char *ptxr_last_error(void);

/* Launches from the calling thread stop with PTXR_ERR_TIMEOUT once they have run for
 * `seconds` (as a GPU's watchdog reports "launch timed out"); 0 (the default) or less: no
 * limit. Generated code checks at the back edges of the kernel's loops (a kernel without
 * loops ends on its own), and CTAs not started by then do not start. The message names the
 * kernel and the CTAs still running. */
void ptxr_set_timeout(double seconds);
/* Launches from the calling thread are cooperative (on != 0) or not (0, the default), as
 * cudaLaunchCooperativeKernel makes them: every CTA of the grid runs at once, each on a thread
 * of its own (at most 4096 CTAs, else PTXR_ERR_CONFIG), and the kernel may synchronize the
 * whole grid (cooperative groups' grid.sync()). The parallel_for of the configuration is not
 * used. */
void ptxr_set_cooperative(int on);
/* Launches from the calling thread have clusters of x*y*z CTAs (sm_90; all 0, the default:
 * the kernel's .reqnctapercluster, else 1), as a launch with CUDA's cluster dimension
 * attribute: a cluster's CTAs run at once, each on a thread of its own, and reach each
 * other's shared memory (mapa, .shared::cluster) and meet at barrier.cluster. The grid must be
 * a whole number of clusters of at most 16 CTAs (else PTXR_ERR_CONFIG). The parallel_for of
 * the configuration runs whole clusters. */
void ptxr_set_cluster(uint32_t x, uint32_t y, uint32_t z);

/* A tensor map for `cp.async.bulk.tensor` (a `.param .align 64 .b8 map[128]` parameter), with
 * the parameters of CUDA's cuTensorMapEncodeTiled: `dtype` numbered as CUtensorMapDataType
 * (0 u8 ... 6 f16, 7 f32, 8 f64, 9 bf16, ...), `rank` 1..5, `global_dim`/`box_dim`/
 * `element_strides` with `rank` entries innermost first, `global_strides` with `rank - 1` (bytes,
 * multiples of 16), `interleave` 0, `swizzle` 0 none / 1 32B / 2 64B / 3 128B, `oob_fill` 0
 * zeros / 1 NaN. Writes ptxr's 128-byte encoding (docs/abi.md) to `map` and returns 0, or 1
 * when a parameter is out of range. Kernels compiled by ptxr read only maps made this way. */
typedef struct ptxr_tensor_map { _Alignas(64) unsigned char bytes[128]; } ptxr_tensor_map;
int ptxr_tensor_map_encode_tiled(ptxr_tensor_map *map, uint32_t dtype, uint32_t rank, void *global_address,
                                 const uint64_t *global_dim, const uint64_t *global_strides, const uint32_t *box_dim,
                                 const uint32_t *element_strides, uint32_t interleave, uint32_t swizzle,
                                 uint32_t l2_promotion, uint32_t oob_fill);
/* An im2col map (PTX ISA 8.x 5.5.4) with the parameters of CUDA's cuTensorMapEncodeIm2col: `rank`
 * 3..5 (C, W, {H, {D,}} N innermost first), `rank - 2` bounding-box corner coordinates each, W
 * first (within +-2^15, 2^7, 2^4 for ranks 3, 4, 5), 1..256 channels per pixel (a multiple of 16
 * bytes), 1..1024 pixels per column; the rest as above. */
int ptxr_tensor_map_encode_im2col(ptxr_tensor_map *map, uint32_t dtype, uint32_t rank, void *global_address,
                                  const uint64_t *global_dim, const uint64_t *global_strides,
                                  const int *pixel_box_lower_corner, const int *pixel_box_upper_corner,
                                  uint32_t channels_per_pixel, uint32_t pixels_per_column,
                                  const uint32_t *element_strides, uint32_t interleave, uint32_t swizzle,
                                  uint32_t l2_promotion, uint32_t oob_fill);

/* Internal: a module variable of code compiled for checking (its exported address). */
typedef struct ptxr_var {
    const char *name;
    const void *const *addr;
    uint64_t bytes;
} ptxr_var;

/* Internal: what the generated launch functions pass to the runtime. */
typedef struct ptxr_kernel {
    const char *name;
    const char *file;
    int32_t (*cta)(void *cta_ctx);
    uint32_t nparams;
    const uint32_t *param_offset;
    const uint32_t *param_size;
    uint32_t param_bytes;
    uint32_t static_smem;
    uint32_t reqntid[3]; /* all 0: none */
    uint32_t maxntid[3]; /* all 0: none */
    uint32_t frame_size;
    uint32_t uses_sync;
    uint32_t cta_group; /* the CTA function runs groups of CTAs (CtaCtx.group) */
    uint32_t cluster[3]; /* .reqnctapercluster; all 0: none */
    uint32_t checked;    /* compiled for the checking mode */
    const ptxr_var *vars; /* with `checked`: the module's variables */
    uint32_t nvars;
} ptxr_kernel;
int ptxr_rt_launch(const ptxr_kernel *k, const ptxr_launch_config *cfg, void **args);

#ifdef __cplusplus
}
#endif
#endif
