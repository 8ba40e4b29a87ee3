/* Runs one ptxr-compiled kernel over a grid, CTA by CTA, serially, without the ptxr runtime.
 *
 * Used by tests/aarch64.rs: the kernel object comes from `ptxr compile --target aarch64
 * --emit obj`, this driver is cross-compiled with it (`-DKERNEL=<name>`), and the program runs
 * under qemu-aarch64. Kernels of the per-thread scheduler are not supported (slots and the
 * scheduler stay null, and `resolve` reports a deadlock if it is ever called); warp-path
 * kernels that run in phases (CTA barriers, grid-stride loops) get their warp frames.
 *
 * The structs mirror ptxr-runtime/src/abi.rs (#[repr(C)], LP64): CtaCtx, SyncSlot, HostFns.
 *
 * Usage:  cta_driver IN OUT      run the launch described by IN, write the buffers to OUT
 *         cta_driver --layout    print the field offsets/sizes of the ABI structs
 *
 * IN (all little-endian):
 *   u32 grid[3], u32 block[3], u32 dyn_smem, u32 static_smem, u32 param_size, u32 nargs,
 *   u32 frame_size (KernelInfo::frame_size: bytes per thread slot, 32 slots per warp),
 *   then per argument: u32 kind (0 = scalar, 1 = buffer), u32 offset (in the parameter
 *   buffer), u64 length (bytes), then `length` bytes of data (the scalar's bits, or the
 *   buffer's initial contents).
 * OUT: every buffer argument, in order, as u64 length + bytes.
 * Exit status: 0 ok; 2 usage/IO error; 3 a CTA returned non-zero or set a status.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KERNEL
#define KERNEL saxpy
#endif

struct CtaCtx;

typedef struct SyncSlot {
  uint32_t state, resume, kind, site, line, mode, mask, bar_id, bar_count, flags;
  uint64_t a;
  uint32_t b, c;
  uint64_t result;
  uint32_t pred, _pad;
} SyncSlot;

typedef struct HostFns {
  int32_t (*vprintf)(uint8_t *host, const uint8_t *fmt, const uint8_t *args);
  uint64_t (*globaltimer)(void);
  void (*assertfail)(uint8_t *host, const uint8_t *msg, const uint8_t *file, uint32_t line,
                     const uint8_t *func);
  uint32_t (*resolve)(struct CtaCtx *cta);
  /* Device-side launches (abi.rs HostFns::launch_buffer/launch_device): this test driver
   * offers none (NULL buffer: the PTX that NVRTC emits then skips the launch). */
  uint8_t *(*launch_buffer)(uint8_t *host, const void *kernel, uint32_t gx, uint32_t gy, uint32_t gz,
                            uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem);
  int32_t (*launch_device)(uint8_t *host, uint8_t *buf, uint64_t stream);
  /* The cluster barrier (abi.rs HostFns::cluster_sync): clusters of one CTA here. */
  uint32_t (*cluster_sync)(struct CtaCtx *cta);
  /* The checking mode's access check (abi.rs HostFns::check_access): nothing checked here. */
  uint32_t (*check_access)(struct CtaCtx *cta, const uint8_t *addr, uint32_t size, uint32_t kind,
                           uint32_t line, uint32_t col, uint32_t tid);
  /* clusterlaunchcontrol.try_cancel (abi.rs HostFns::try_cancel): nothing cancelled here. */
  void (*try_cancel)(struct CtaCtx *cta, uint8_t *resp);
} HostFns;

typedef struct CtaCtx {
  const uint8_t *params;
  uint8_t *shared;
  uint32_t ctaid[3];
  uint32_t nctaid[3];
  uint32_t ntid[3];
  uint32_t dyn_smem;
  uint32_t total_smem;
  uint32_t status;
  uint32_t status_line;
  const HostFns *rt;
  uint8_t *host;
  uint32_t status_thread;
  uint32_t smid;
  uint8_t *frames;
  SyncSlot *slots;
  uint8_t *sched;
  uint32_t group;
  uint8_t *grid_ws;
  const void *cluster;
} CtaCtx;

/* STATUS_* and RESOLVE_* from abi.rs */
enum { STATUS_OK = 0, STATUS_TRAP = 1, STATUS_ASSERT = 2, STATUS_DEADLOCK = 3 };
enum { RESOLVE_CONTINUE = 0, RESOLVE_DONE = 1, RESOLVE_DEADLOCK = 2 };

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define STR2(a) #a
#define STR(a) STR2(a)
extern int32_t CAT(__ptxr_cta_, KERNEL)(CtaCtx *);

/* Trivial host services. */
static int32_t host_vprintf(uint8_t *host, const uint8_t *fmt, const uint8_t *args) {
  (void)host;
  (void)args;
  fprintf(stderr, "[device printf, not formatted by this driver] %s", (const char *)fmt);
  return 0;
}
static uint64_t host_globaltimer(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void host_assertfail(uint8_t *host, const uint8_t *msg, const uint8_t *file,
                            uint32_t line, const uint8_t *func) {
  (void)host;
  fprintf(stderr, "device assertion failed: %s (%s:%u, %s)\n", (const char *)msg,
          (const char *)file, line, (const char *)func);
}
static uint32_t host_resolve(CtaCtx *cta) {
  /* Kernels with synchronization are not supported by this driver. */
  cta->status = STATUS_DEADLOCK;
  return RESOLVE_DEADLOCK;
}
static uint8_t *host_launch_buffer(uint8_t *host, const void *kernel, uint32_t gx, uint32_t gy,
                                   uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem) {
  (void)host; (void)kernel; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem;
  return NULL;
}
static int32_t host_launch_device(uint8_t *host, uint8_t *buf, uint64_t stream) {
  (void)host; (void)buf; (void)stream;
  return 1; /* cudaErrorInvalidValue */
}
static uint32_t host_cluster_sync(struct CtaCtx *cta) {
  (void)cta;
  return STATUS_OK;
}
static uint32_t host_check_access(struct CtaCtx *cta, const uint8_t *addr, uint32_t size,
                                  uint32_t kind, uint32_t line, uint32_t col, uint32_t tid) {
  (void)cta; (void)addr; (void)size; (void)kind; (void)line; (void)col; (void)tid;
  return STATUS_OK;
}
static void host_try_cancel(struct CtaCtx *cta, uint8_t *resp) {
  (void)cta;
  memset(resp, 0, 16);
}
static const HostFns HOST_FNS = {host_vprintf, host_globaltimer, host_assertfail, host_resolve,
                                 host_launch_buffer, host_launch_device, host_cluster_sync,
                                 host_check_access, host_try_cancel};

#define FIELD(T, f) printf(#T "." #f " %zu %zu\n", offsetof(T, f), sizeof(((T *)0)->f))

static void print_layout(void) {
  printf("CtaCtx %zu %zu\n", sizeof(CtaCtx), _Alignof(CtaCtx));
  FIELD(CtaCtx, params); FIELD(CtaCtx, shared); FIELD(CtaCtx, ctaid); FIELD(CtaCtx, nctaid);
  FIELD(CtaCtx, ntid); FIELD(CtaCtx, dyn_smem); FIELD(CtaCtx, total_smem);
  FIELD(CtaCtx, status); FIELD(CtaCtx, status_line); FIELD(CtaCtx, rt); FIELD(CtaCtx, host);
  FIELD(CtaCtx, status_thread); FIELD(CtaCtx, smid); FIELD(CtaCtx, frames);
  FIELD(CtaCtx, slots); FIELD(CtaCtx, sched); FIELD(CtaCtx, group); FIELD(CtaCtx, grid_ws);
  FIELD(CtaCtx, cluster);
  printf("SyncSlot %zu %zu\n", sizeof(SyncSlot), _Alignof(SyncSlot));
  FIELD(SyncSlot, state); FIELD(SyncSlot, resume); FIELD(SyncSlot, kind); FIELD(SyncSlot, site);
  FIELD(SyncSlot, line); FIELD(SyncSlot, mode); FIELD(SyncSlot, mask); FIELD(SyncSlot, bar_id);
  FIELD(SyncSlot, bar_count); FIELD(SyncSlot, flags); FIELD(SyncSlot, a); FIELD(SyncSlot, b);
  FIELD(SyncSlot, c); FIELD(SyncSlot, result); FIELD(SyncSlot, pred); FIELD(SyncSlot, _pad);
  printf("HostFns %zu %zu\n", sizeof(HostFns), _Alignof(HostFns));
  FIELD(HostFns, vprintf); FIELD(HostFns, globaltimer); FIELD(HostFns, assertfail);
  FIELD(HostFns, resolve); FIELD(HostFns, launch_buffer); FIELD(HostFns, launch_device);
  FIELD(HostFns, cluster_sync); FIELD(HostFns, check_access); FIELD(HostFns, try_cancel);
}

static void *xmalloc(size_t n) {
  void *p = calloc(n ? n : 1, 1);
  if (!p) { fprintf(stderr, "out of memory (%zu bytes)\n", n); exit(2); }
  return p;
}

static void rd(FILE *f, void *p, size_t n) {
  if (n && fread(p, 1, n, f) != n) { fprintf(stderr, "short read of input\n"); exit(2); }
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--layout") == 0) { print_layout(); return 0; }
  if (argc != 3) { fprintf(stderr, "usage: %s IN OUT | --layout\n", argv[0]); return 2; }
  FILE *in = fopen(argv[1], "rb");
  if (!in) { perror(argv[1]); return 2; }
  uint32_t hdr[11];
  rd(in, hdr, sizeof hdr);
  uint32_t grid[3] = {hdr[0], hdr[1], hdr[2]}, block[3] = {hdr[3], hdr[4], hdr[5]};
  uint32_t dyn_smem = hdr[6], static_smem = hdr[7], param_size = hdr[8], nargs = hdr[9];
  uint8_t *params = xmalloc(param_size < 8 ? 8 : param_size);
  uint8_t **bufs = xmalloc(sizeof(uint8_t *) * (nargs + 1));
  uint64_t *lens = xmalloc(sizeof(uint64_t) * (nargs + 1));
  uint32_t *kinds = xmalloc(sizeof(uint32_t) * (nargs + 1));
  for (uint32_t k = 0; k < nargs; k++) {
    uint32_t kind, off;
    uint64_t len;
    rd(in, &kind, 4); rd(in, &off, 4); rd(in, &len, 8);
    kinds[k] = kind; lens[k] = len;
    if (kind == 0) {
      if (off + len > param_size || len > 8) { fprintf(stderr, "bad scalar %u\n", k); return 2; }
      rd(in, params + off, len);
    } else {
      if (off + 8 > param_size) { fprintf(stderr, "bad buffer %u\n", k); return 2; }
      bufs[k] = xmalloc(len + 16);
      rd(in, bufs[k], len);
      uint64_t addr = (uint64_t)(uintptr_t)bufs[k];
      memcpy(params + off, &addr, 8);
    }
  }
  fclose(in);

  uint32_t total_smem = static_smem + dyn_smem;
  uint8_t *smem = xmalloc(((size_t)total_smem + 15) / 16 * 16 + 16);
  size_t lanes = ((size_t)block[0] + 31) / 32 * 32 * block[1] * block[2];
  uint8_t *frames = hdr[10] ? xmalloc((size_t)hdr[10] * lanes) : NULL;
  uint64_t ncta = (uint64_t)grid[0] * grid[1] * grid[2];
  for (uint64_t c = 0; c < ncta; c++) {
    memset(smem, 0, ((size_t)total_smem + 15) / 16 * 16 + 16);
    CtaCtx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.params = params;
    ctx.shared = smem;
    ctx.ctaid[0] = (uint32_t)(c % grid[0]);
    ctx.ctaid[1] = (uint32_t)((c / grid[0]) % grid[1]);
    ctx.ctaid[2] = (uint32_t)(c / ((uint64_t)grid[0] * grid[1]));
    memcpy(ctx.nctaid, grid, sizeof grid);
    memcpy(ctx.ntid, block, sizeof block);
    ctx.dyn_smem = dyn_smem;
    ctx.total_smem = total_smem;
    ctx.rt = &HOST_FNS;
    ctx.host = NULL;
    ctx.frames = frames;
    int32_t st = CAT(__ptxr_cta_, KERNEL)(&ctx);
    if (st != 0 || ctx.status != STATUS_OK) {
      fprintf(stderr, "%s: CTA (%u,%u,%u) failed: return %d, status %u, line %u, thread %u\n",
              STR(KERNEL), ctx.ctaid[0], ctx.ctaid[1], ctx.ctaid[2], st, ctx.status,
              ctx.status_line, ctx.status_thread);
      return 3;
    }
  }

  FILE *out = fopen(argv[2], "wb");
  if (!out) { perror(argv[2]); return 2; }
  for (uint32_t k = 0; k < nargs; k++) {
    if (kinds[k] != 1) continue;
    fwrite(&lens[k], 8, 1, out);
    if (lens[k] && fwrite(bufs[k], 1, lens[k], out) != lens[k]) { perror("write"); return 2; }
  }
  fclose(out);
  return 0;
}
