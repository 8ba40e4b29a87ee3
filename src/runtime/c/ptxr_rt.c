/* ptxr_rt.c: the C runtime of kernels compiled ahead of time by ptxr (docs/abi.md).
 *
 * Launches a kernel's CTA function `int32_t __ptxr_cta_<kernel>(CtaCtx*)` over a grid:
 * allocates each CTA's shared memory (and, for kernels with synchronization, the per-thread
 * frames, sync slots and scheduler state), completes barriers and warp collectives (a faithful
 * port of `resolve` in ptxr-runtime/src/warp.rs), and provides the host services the generated code
 * calls (vprintf, %globaltimer, __assertfail). Embedded in the ptxr binary and compiled with the
 * target's C compiler into every static library ptxr writes. */
#define _GNU_SOURCE /* pthread_getattr_np (the checking mode's stack bounds) */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "ptxr.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <time.h>

/* ---- The launch ABI (ptxr-runtime/src/abi.rs; field order fixed) ---- */

typedef struct SyncSlot {
    uint32_t state, resume, kind, site, line, mode, mask, bar_id, bar_count, flags;
    uint64_t a;
    uint32_t b, c;
    uint64_t result;
    uint32_t pred, pad_;
} SyncSlot;

struct CtaCtx;
/* What a device-side launch needs of a kernel (ptxr-runtime's abi::DeviceKernel): the
 * value of a kernel's name as an address in PTX. */
typedef struct DeviceKernel {
    int32_t (*cta)(void *cta_ctx);
    const char *name;
    uint32_t param_size, static_smem, frame_size, flags; /* flags: 1 uses_sync, 2 cta_group, 4 reqntid, 8 maxntid, 16 cancellable */
    uint32_t reqntid[3], maxntid[3];
} DeviceKernel;
typedef struct HostFns {
    int32_t (*vprintf)(void *host, const char *fmt, const uint8_t *args);
    uint64_t (*globaltimer)(void);
    void (*assertfail)(void *host, const char *msg, const char *file, uint32_t line, const char *func);
    uint32_t (*resolve)(struct CtaCtx *cta);
    uint8_t *(*launch_buffer)(void *host, const DeviceKernel *k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem);
    int32_t (*launch_device)(void *host, uint8_t *buf, uint64_t stream);
    uint32_t (*cluster_sync)(struct CtaCtx *cta);
    uint32_t (*check_access)(struct CtaCtx *cta, const uint8_t *addr, uint32_t size, uint32_t kind, uint32_t line, uint32_t col, uint32_t tid);
    void (*try_cancel)(struct CtaCtx *cta, uint8_t *resp);
} HostFns;

typedef struct CtaCtx {
    const uint8_t *params;
    uint8_t *shared;
    uint32_t ctaid[3], nctaid[3], ntid[3];
    uint32_t dyn_smem, total_smem, status, status_line;
    const HostFns *rt;
    void *host;
    uint32_t status_thread, smid;
    uint8_t *frames;
    SyncSlot *slots;
    void *sched;
    uint32_t group;
    uint8_t *grid_ws; /* cooperative launches' grid workspace (%envreg1:%envreg2); NULL here */
    const struct ClusterCtx *cluster; /* a cluster of more than one CTA, else NULL */
} CtaCtx;

/* A cluster's barrier (ptxr-runtime's cluster.rs): CTAs arrived in the current phase, CTAs
 * that have not ended, phases completed. */
typedef struct ClusterSync {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t arrived, live;
    uint64_t phase;
} ClusterSync;

/* A cluster of CTAs that run at once (abi.rs ClusterCtx): its shape, the bytes between the
 * shared windows of consecutive ranks, its barrier. */
typedef struct ClusterCtx {
    uint32_t dims[3];
    uint32_t stride;
    ClusterSync *sync;
} ClusterCtx;

_Static_assert(sizeof(SyncSlot) == 72 && offsetof(SyncSlot, a) == 40 && offsetof(SyncSlot, result) == 56 && offsetof(SyncSlot, pred) == 64, "SyncSlot layout");
_Static_assert(offsetof(CtaCtx, status) == 60 && offsetof(CtaCtx, rt) == 72 && offsetof(CtaCtx, frames) == 96 && offsetof(CtaCtx, group) == 120 && offsetof(CtaCtx, grid_ws) == 128 && offsetof(CtaCtx, cluster) == 136 && sizeof(CtaCtx) == 144, "CtaCtx layout");

enum { SLOT_RUNNABLE = 0, SLOT_WAITING = 1, SLOT_EXITED = 2 };
enum { SYNC_BAR = 1, SYNC_BAR_ARRIVE = 2, SYNC_WARP = 3, SYNC_SHFL = 4, SYNC_VOTE = 5, SYNC_MATCH = 6, SYNC_ACTIVEMASK = 7, SYNC_REDUX = 8 };
enum { FLAG_NOSYNC = 1, FLAG_64 = 2, FLAG_SIGNED = 4, FLAG_ALIGNED = 8 };
enum { RESOLVE_CONTINUE = 0, RESOLVE_DONE = 1, RESOLVE_DEADLOCK = 2, RESOLVE_UNIFORM = 0x100 };
enum { STATUS_OK = 0, STATUS_TRAP = 1, STATUS_ASSERT = 2, STATUS_DEADLOCK = 3, STATUS_BRKPT = 4, STATUS_BAD_ADDRESS = 5, STATUS_BAD_BARRIER = 6, STATUS_SYNC_INDIRECT = 7, STATUS_PARTIAL_WARP = 8, STATUS_TIMEOUT = 10, STATUS_BAD_TENSOR_MAP = 11, STATUS_BAD_TENSOR_COPY = 12, STATUS_CHECK = 14, STATUS_WARP_APART = 15, STATUS_CTA_PAIR = 16 };
#define DEADLOCK_OTHER_LINE 0x80000000u

/* The CTA's 16 barriers and the cluster barrier (barrier.cluster.wait: id CLUSTER_BARRIER in
 * the slots, abi.rs). */
#define BARRIERS 17
#define CLUSTER_BARRIER 16u
static uint32_t bar_index(uint32_t id) { return id == CLUSTER_BARRIER ? CLUSTER_BARRIER : (id & 15); }
static uint32_t host_cluster_sync(CtaCtx *cta);

/* Host-side scheduler state of one CTA (warp.rs `Sched`). */
typedef struct Sched {
    uint32_t arrived[BARRIERS];
    /* Whether `resolve` ran for the CTA (then its slots need clearing before the next). */
    uint32_t called;
} Sched;

/* ---- resolve: a port of ptxr-runtime/src/warp.rs ---- */

static int live(const SyncSlot *s) { return s->state != SLOT_EXITED; }

static int is_warp_kind(uint32_t k) {
    return k == SYNC_WARP || k == SYNC_SHFL || k == SYNC_VOTE || k == SYNC_MATCH || k == SYNC_ACTIVEMASK || k == SYNC_REDUX;
}

static uint32_t fail(CtaCtx *cta, uint32_t status, uint32_t line, size_t thread) {
    cta->status = status;
    cta->status_line = line;
    cta->status_thread = (uint32_t)thread;
    return RESOLVE_DEADLOCK;
}

/* The checking mode's barrier checks (defined with the checks, below). */
static uint32_t check_barrier(CtaCtx *cta, const SyncSlot *slots, size_t n, uint32_t id, size_t first);

static uint32_t waiting_mask(uint32_t k, const SyncSlot *w, size_t n) {
    uint32_t m = 0;
    for (size_t l = 0; l < n; l++)
        if (w[l].state == SLOT_WAITING && w[l].kind == k) m |= 1u << l;
    return m;
}

/* Completes the warp collectives of one warp that can complete. Returns whether any did. */
static int resolve_warp(SyncSlot *warp, size_t n) {
    uint32_t live_mask = 0;
    for (size_t l = 0; l < n; l++)
        if (live(&warp[l])) live_mask |= 1u << l;
    int progress = 0;
    uint32_t parts[32] = {0};
    for (size_t l = 0; l < n; l++) {
        const SyncSlot *s = &warp[l];
        if (s->state != SLOT_WAITING || !is_warp_kind(s->kind)) continue;
        if (s->flags & FLAG_NOSYNC) {
            uint32_t a = 0;
            for (size_t m = 0; m < n; m++)
                if (warp[m].state == SLOT_WAITING && warp[m].site == s->site) a |= 1u << m;
            parts[l] = a;
        } else {
            uint32_t need = (s->mask | (1u << l)) & live_mask;
            uint32_t at = waiting_mask(s->kind, warp, n);
            uint32_t same_mode = 0;
            for (size_t m = 0; m < n; m++)
                if ((at & (1u << m)) && (warp[m].mode == s->mode || s->kind == SYNC_WARP) && warp[m].mask == s->mask) same_mode |= 1u << m;
            if ((need & ~same_mode) == 0) parts[l] = need;
        }
    }
    SyncSlot snapshot[32];
    memcpy(snapshot, warp, n * sizeof(SyncSlot));
    for (size_t l = 0; l < n; l++) {
        uint32_t p = parts[l];
        if (p == 0) continue;
        SyncSlot *s = &warp[l];
        uint32_t lane = (uint32_t)l;
        switch (s->kind) {
        case SYNC_WARP:
            break;
        case SYNC_ACTIVEMASK:
            s->result = p;
            break;
        case SYNC_SHFL: {
            /* PTX ISA 9.7.8.5 shfl.sync semantics. */
            uint32_t bval = s->b & 31, cval = s->c & 31, segmask = (s->c >> 8) & 31;
            uint32_t max_lane = (lane & segmask) | (cval & ~segmask);
            uint32_t min_lane = lane & segmask;
            int64_t j;
            int pval;
            switch (s->mode) {
            case 0: j = (int64_t)lane - (int64_t)bval; pval = j >= (int64_t)max_lane; break;
            case 1: j = (int64_t)lane + (int64_t)bval; pval = j <= (int64_t)max_lane; break;
            case 2: j = (int64_t)(lane ^ bval); pval = j <= (int64_t)max_lane; break;
            default: j = (int64_t)(min_lane | (bval & ~segmask)); pval = j <= (int64_t)max_lane; break;
            }
            size_t jj = pval ? (size_t)j : l;
            uint64_t v;
            if (jj >= n)
                v = 0; /* past the end of a partial last warp: 0, as an H200 gives */
            else if ((p & (1u << jj)) || (snapshot[jj].kind == SYNC_SHFL && snapshot[jj].state == SLOT_WAITING))
                v = snapshot[jj].a;
            else
                v = s->a;
            s->result = v & 0xffffffffu;
            s->pred = (uint32_t)pval;
            break;
        }
        case SYNC_VOTE: {
            uint32_t ballot = 0;
            for (size_t m = 0; m < n; m++)
                if ((p & (1u << m)) && snapshot[m].a != 0) ballot |= 1u << m;
            switch (s->mode) {
            case 0: s->pred = ballot == p; break;
            case 1: s->pred = ballot != 0; break;
            case 2: s->pred = ballot == 0 || ballot == p; break;
            default: s->result = ballot; break;
            }
            break;
        }
        case SYNC_MATCH: {
            int wide = (s->flags & FLAG_64) != 0;
            uint64_t mine = wide ? s->a : (s->a & 0xffffffffu);
            uint32_t same = 0;
            for (size_t m = 0; m < n; m++) {
                uint64_t vm = wide ? snapshot[m].a : (snapshot[m].a & 0xffffffffu);
                if ((p & (1u << m)) && vm == mine) same |= 1u << m;
            }
            if (s->mode == 0) {
                s->result = same;
            } else {
                int all = same == p;
                s->result = all ? p : 0;
                s->pred = (uint32_t)all;
            }
            break;
        }
        case SYNC_REDUX: {
            int sgn = (s->flags & FLAG_SIGNED) != 0;
            uint32_t r;
            int first = 1;
            switch (s->mode) {
            case 0: r = 0; break;
            case 3: r = 0xffffffffu; break;
            default: r = 0; break;
            }
            for (size_t m = 0; m < n; m++) {
                if (!(p & (1u << m))) continue;
                uint32_t v = (uint32_t)snapshot[m].a;
                switch (s->mode) {
                case 0: r += v; break;
                case 1:
                    if (first || (sgn ? (int32_t)v < (int32_t)r : v < r)) r = v;
                    break;
                case 2:
                    if (first || (sgn ? (int32_t)v > (int32_t)r : v > r)) r = v;
                    break;
                case 3: r &= v; break;
                case 4: r |= v; break;
                default: r ^= v; break;
                }
                first = 0;
            }
            s->result = r;
            break;
        }
        default:
            continue;
        }
        s->state = SLOT_RUNNABLE;
        progress = 1;
    }
    return progress;
}

static void deadlock_detail(CtaCtx *cta, const SyncSlot *slots, size_t n);

static uint32_t resolve_slots(SyncSlot *slots, size_t n, Sched *sched, CtaCtx *cta) {
    /* One pass: who is done, who waits where. */
    uint32_t live_threads = 0;
    uint32_t bar_waiting[BARRIERS] = {0};
    size_t bar_first[BARRIERS];
    for (int id = 0; id < BARRIERS; id++) bar_first[id] = SIZE_MAX;
    uint32_t warp_pending[32] = {0}; /* bit w%32 of word w/32: warp w has a collective waiting */
    int progress = 0;
    for (size_t t = 0; t < n; t++) {
        SyncSlot *s = &slots[t];
        if (s->state == SLOT_EXITED) continue;
        live_threads++;
        if (s->state != SLOT_WAITING) continue;
        if (s->kind == SYNC_BAR_ARRIVE) {
            /* bar.arrive: count the arrival and let the thread go on. */
            sched->arrived[bar_index(s->bar_id)] += 1;
            s->state = SLOT_RUNNABLE;
            progress = 1;
        } else if (s->kind == SYNC_BAR) {
            uint32_t id = bar_index(s->bar_id);
            bar_waiting[id]++;
            if (bar_first[id] == SIZE_MAX) bar_first[id] = t;
        } else if (is_warp_kind(s->kind)) {
            warp_pending[(t / 32) / 32] |= 1u << ((t / 32) % 32);
        }
    }
    if (live_threads == 0) return RESOLVE_DONE;
    /* Warp collectives, warp by warp. */
    for (size_t w = 0; w < (n + 31) / 32; w++) {
        if (!(warp_pending[w / 32] & (1u << (w % 32)))) continue;
        size_t base = w * 32;
        size_t lanes = n - base < 32 ? n - base : 32;
        if (resolve_warp(slots + base, lanes)) progress = 1;
    }
    /* Barriers (9.7.12.1): complete when the expected number of threads has arrived — `b` if
     * given, else every thread of the CTA that has not exited. */
    for (uint32_t id = 0; id < BARRIERS; id++) {
        if (bar_waiting[id] == 0) continue;
        size_t first = bar_first[id];
        uint32_t count = slots[first].bar_count;
        if (count != 0 && (count % 32 != 0 || (size_t)count > (n + 31) / 32 * 32))
            /* The thread count must be a multiple of the warp size, at most the CTA size. */
            return fail(cta, STATUS_BAD_BARRIER, slots[first].line, first);
        uint32_t expected = count == 0 ? live_threads : count;
        if (bar_waiting[id] + sched->arrived[id] < expected) continue;
        {
            uint32_t st = check_barrier(cta, slots, n, id, first);
            if (st != RESOLVE_CONTINUE) return st;
        }
        /* The cluster barrier: once the CTA's threads are all there, the cluster's CTAs meet. */
        if (id == CLUSTER_BARRIER) {
            uint32_t st = host_cluster_sync(cta);
            if (st != STATUS_OK) return fail(cta, st, slots[first].line, first);
        }
        /* A barrier with a count completes with `b` arrivals (9.7.12.1) and is reinitialized:
         * the arrivals past them, in thread order, wait for its next use. */
        size_t quota = count == 0 ? (size_t)-1 : (size_t)(count - (sched->arrived[id] < count ? sched->arrived[id] : count));
        /* bar.red: reduce the predicates of the released threads. */
        uint64_t popc = 0;
        int all = 1, any = 0;
        size_t taken = 0;
        for (size_t t = 0; t < n && taken < quota; t++) {
            const SyncSlot *s = &slots[t];
            if (s->state == SLOT_WAITING && s->kind == SYNC_BAR && bar_index(s->bar_id) == id) {
                int pr = s->a != 0;
                popc += (uint64_t)pr;
                all = all && pr;
                any = any || pr;
                taken++;
            }
        }
        taken = 0;
        for (size_t t = 0; t < n && taken < quota; t++) {
            SyncSlot *s = &slots[t];
            if (!(s->state == SLOT_WAITING && s->kind == SYNC_BAR && bar_index(s->bar_id) == id)) continue;
            switch (s->mode) {
            case 1: s->result = popc; break;
            case 2: s->pred = (uint32_t)all; break;
            case 3: s->pred = (uint32_t)any; break;
            default: break;
            }
            s->state = SLOT_RUNNABLE;
            taken++;
        }
        sched->arrived[id] = count == 0 ? 0 : (sched->arrived[id] > count ? sched->arrived[id] - count : 0);
        progress = 1;
    }
    if (progress) return RESOLVE_CONTINUE;
    /* Nothing can move: every live thread waits for threads that will never arrive. */
    deadlock_detail(cta, slots, n);
    for (size_t t = 0; t < n; t++)
        if (slots[t].state == SLOT_WAITING) return fail(cta, STATUS_DEADLOCK, slots[t].line, t);
    return fail(cta, STATUS_DEADLOCK, 0, 0);
}

/* RESOLVE_UNIFORM + k when every thread that has not exited is runnable at resume point k
   (the generated code then runs its region copy for k), else RESOLVE_CONTINUE. */
static uint32_t uniform_resume(const SyncSlot *slots, size_t n) {
    int found = 0;
    uint32_t k = 0;
    for (size_t t = 0; t < n; t++) {
        if (slots[t].state == SLOT_EXITED) continue;
        if (slots[t].state != SLOT_RUNNABLE || (found && slots[t].resume != k)) return RESOLVE_CONTINUE;
        found = 1;
        k = slots[t].resume;
    }
    return found ? RESOLVE_UNIFORM + k : RESOLVE_CONTINUE;
}

static uint32_t resolve(CtaCtx *cta) {
    size_t n = (size_t)cta->ntid[0] * cta->ntid[1] * cta->ntid[2];
    ((Sched *)cta->sched)->called = 1;
    uint32_t r = resolve_slots(cta->slots, n, (Sched *)cta->sched, cta);
    return r == RESOLVE_CONTINUE ? uniform_resume(cta->slots, n) : r;
}

/* ---- One launch ---- */

/* Worker threads whose current CTA a launch records (by smid), for a timeout's message. */
#define RUNNING_SLOTS 64
/* A worker's slot of Launch.running_cta, alone in 128 bytes (two cache lines, as the
 * adjacent-line prefetcher pairs them): side by side, every CTA's two stores moved the line
 * between the cores. */
typedef struct RunningSlot {
    _Alignas(128) uint64_t cta;
} RunningSlot;

/* A grid launched from the device (cudaGetParameterBufferV2 / cudaLaunchDeviceV2). */
typedef struct Child {
    const DeviceKernel *d;
    uint32_t grid[3], block[3], smem;
    uint8_t *params;
    int launched;
} Child;

typedef struct Launch {
    /* The cancel word, first: generated code polls it at loop back edges (CtaCtx.host points
     * here) and stops with STATUS_TIMEOUT once the watchdog (ptxr_set_timeout) sets it. */
    volatile uint32_t cancel;
    const ptxr_kernel *k;
    const ptxr_launch_config *cfg;
    const uint8_t *params;
    uint32_t total_smem;
    uint64_t base; /* first CTA of the current parallel_for chunk */
    uint64_t ncta;
    uint64_t group; /* CTAs per call of the CTA function (k->cta_group), else 1 */
    uint8_t *grid_ws; /* a cooperative launch's grid workspace (ptxr_set_cooperative), else NULL */
    uint32_t cluster[3]; /* clusters of more than one CTA (ptxr_set_cluster, .reqnctapercluster), else 0s */
    int peers_wait; /* the CTAs may wait for each other (cooperative launches, clusters) */
    int stop; /* accessed atomically */
    pthread_mutex_t mu;
    int failed;
    uint64_t fail_cta;
    CtaCtx fail_ctx;
    int nomem;
    char *out; /* printf output, written to stdout when the launch ends */
    size_t out_len, out_cap;
    char assert_msg[1024];
    int have_assert;
    char detail[1024]; /* where the threads of a deadlocked CTA wait */
    int have_detail;
    /* What each worker thread runs (CTA index + 1, 0: none; a slot per thread, by its smid),
     * and the CTAs running when the time limit passed, for the message. */
    RunningSlot running_cta[RUNNING_SLOTS];
    uint64_t running[RUNNING_SLOTS];
    int nrunning;
    /* Device-side launches: buffers handed out, launched ones run after this grid. */
    Child *kids;
    size_t nkids, kids_cap;
    /* The checking mode: the ranges registered when the launch began (a copy: read without
     * a lock), the first report ("REPORT", its column), the device heap's blocks. */
    struct CheckRange *ranges;
    size_t nranges;
    char check_msg[1024];
    uint32_t check_col;
    int have_check;
    uint64_t (*heap)[2];
    size_t nheap, heap_cap;
} Launch;

/* ---- Tensor maps (ptxr_tensor_map_encode_tiled; the layout of ptxr-runtime/src/tensor_map.rs) ---- */

/* The map of either mode: `box` holds the tiled box, or (im2col) the channels per pixel and the
 * pixels per column; `corners` the im2col bounding box (lower W H D, upper W H D) or NULL. */
static int tensor_map_encode(ptxr_tensor_map *map, uint32_t dtype, uint32_t rank, void *global_address,
                             const uint64_t *global_dim, const uint64_t *global_strides, const uint32_t *box,
                             uint32_t nbox, const uint32_t *element_strides, uint32_t interleave, uint32_t swizzle,
                             uint32_t l2_promotion, uint32_t oob_fill, const int16_t *corners) {
    /* bytes in shared memory of a unit: an element, or for the packed sub-byte types 13-15
     * (16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B) 2, 16 and 16 elements (ptxr_runtime's
     * tensor_map::unit_of) */
    static const uint8_t bytes_of[16] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 1, 16, 16};
    static const uint64_t span[4] = {0, 32, 64, 128};
    if (!map || !global_dim || !element_strides || rank < 1 || rank > 5 || (rank > 1 && !global_strides)) return 1;
    if (dtype > 15 || interleave != 0 || swizzle > 3 || oob_fill > 1 || (uintptr_t)global_address % 16) return 1;
    uint64_t esize = bytes_of[dtype], unit = dtype == 13 ? 2 : dtype >= 14 ? 16 : 1;
    for (uint32_t d = 0; d < rank; d++) {
        if (global_dim[d] == 0 || global_dim[d] > (1ull << 32) || element_strides[d] < 1 || element_strides[d] > 8) return 1;
        if (d > 0 && (global_strides[d - 1] % 16 || global_strides[d - 1] >= (1ull << 40))) return 1;
        if (d > 0 && dtype >= 14 && global_strides[d - 1] % 32) return 1;
    }
    if (dtype >= 13 && (corners || oob_fill)) return 1;
    if (dtype >= 14 && ((uintptr_t)global_address % 32 || global_dim[0] % 128 || box[0] != 128)) return 1;
    if (dtype == 13 && (global_dim[0] % 2 || box[0] % 2)) return 1;
    uint64_t row = box[0] / unit * esize;
    if (row % 16 || (swizzle && row > span[swizzle])) return 1;
    unsigned char *m = map->bytes;
    memset(m, 0, 128);
    uint32_t magic = 0x4D545850u;
    uint64_t addr = (uint64_t)(uintptr_t)global_address;
    memcpy(m + 0, &magic, 4);
    m[4] = (unsigned char)rank;
    m[5] = (unsigned char)dtype;
    m[7] = (unsigned char)swizzle;
    memcpy(m + 8, &addr, 8);
    for (uint32_t d = 0; d < 5; d++) {
        uint64_t dim = d < rank ? global_dim[d] : 1, stride = (d >= 1 && d < rank) ? global_strides[d - 1] : 0;
        uint16_t b = (uint16_t)(d < nbox ? box[d] : 1);
        memcpy(m + 16 + 8 * d, &dim, 8);
        if (d >= 1) memcpy(m + 56 + 8 * (d - 1), &stride, 8);
        memcpy(m + 88 + 2 * d, &b, 2);
        m[98 + d] = (unsigned char)(d < rank ? element_strides[d] : 1);
    }
    m[103] = (unsigned char)oob_fill;
    m[104] = (unsigned char)l2_promotion;
    m[105] = (unsigned char)esize;
    if (corners) {
        m[106] = 1;
        memcpy(m + 108, corners, 12);
    }
    return 0;
}

int ptxr_tensor_map_encode_tiled(ptxr_tensor_map *map, uint32_t dtype, uint32_t rank, void *global_address,
                                 const uint64_t *global_dim, const uint64_t *global_strides, const uint32_t *box_dim,
                                 const uint32_t *element_strides, uint32_t interleave, uint32_t swizzle,
                                 uint32_t l2_promotion, uint32_t oob_fill) {
    if (!box_dim || rank < 1 || rank > 5) return 1;
    for (uint32_t d = 0; d < rank; d++)
        if (box_dim[d] < 1 || box_dim[d] > 256) return 1;
    return tensor_map_encode(map, dtype, rank, global_address, global_dim, global_strides, box_dim, rank,
                             element_strides, interleave, swizzle, l2_promotion, oob_fill, NULL);
}

int ptxr_tensor_map_encode_im2col(ptxr_tensor_map *map, uint32_t dtype, uint32_t rank, void *global_address,
                                  const uint64_t *global_dim, const uint64_t *global_strides,
                                  const int *pixel_box_lower_corner, const int *pixel_box_upper_corner,
                                  uint32_t channels_per_pixel, uint32_t pixels_per_column,
                                  const uint32_t *element_strides, uint32_t interleave, uint32_t swizzle,
                                  uint32_t l2_promotion, uint32_t oob_fill) {
    if (rank < 3 || rank > 5 || !pixel_box_lower_corner || !pixel_box_upper_corner) return 1;
    if (channels_per_pixel < 1 || channels_per_pixel > 256 || pixels_per_column < 1 || pixels_per_column > 1024) return 1;
    int lim = rank == 3 ? 1 << 15 : rank == 4 ? 1 << 7 : 1 << 4;
    int16_t corners[6] = {0};
    for (uint32_t k = 0; k < rank - 2; k++) {
        int lo = pixel_box_lower_corner[k], hi = pixel_box_upper_corner[k];
        if (lo < -lim || lo >= lim || hi < -lim || hi >= lim || !global_dim) return 1;
        if ((int64_t)global_dim[1 + k] + hi - lo <= 0) return 1; /* an empty bounding box */
        corners[k] = (int16_t)lo;
        corners[3 + k] = (int16_t)hi;
    }
    uint32_t box[2] = {channels_per_pixel, pixels_per_column};
    return tensor_map_encode(map, dtype, rank, global_address, global_dim, global_strides, box, 2, element_strides,
                             interleave, swizzle, l2_promotion, oob_fill, corners);
}

/* ---- The time limit (ptxr_set_timeout) ---- */

static _Thread_local double timeout_s;

void ptxr_set_timeout(double seconds) { timeout_s = seconds > 0 ? seconds : 0; }

typedef struct Watchdog {
    Launch *l;
    double seconds;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} Watchdog;

static void *watchdog(void *vw) {
    Watchdog *w = (Watchdog *)vw;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double whole = (double)(long long)w->seconds;
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((w->seconds - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0 && !w->done) {
            Launch *l = w->l;
            for (int s = 0; s < RUNNING_SLOTS; s++) {
                uint64_t c = __atomic_load_n(&l->running_cta[s].cta, __ATOMIC_RELAXED);
                if (c) l->running[l->nrunning++] = c - 1;
            }
            __atomic_store_n(&l->cancel, 1, __ATOMIC_SEQ_CST);
            break;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* "waiting at line L: N threads, ...; E exited", as ptxr-runtime/src/warp.rs words it. */
static void deadlock_detail(CtaCtx *cta, const SyncSlot *slots, size_t n) {
    Launch *l = (Launch *)cta->host;
    if (!l) return;
    uint32_t lines[64], counts[64];
    size_t nsites = 0, exited = 0;
    for (size_t t = 0; t < n; t++) {
        if (slots[t].state == SLOT_EXITED) exited++;
        if (slots[t].state != SLOT_WAITING) continue;
        size_t k = 0;
        while (k < nsites && lines[k] != slots[t].line) k++;
        if (k == nsites) {
            if (nsites == 64) continue;
            lines[nsites] = slots[t].line;
            counts[nsites++] = 0;
        }
        counts[k]++;
    }
    for (size_t i = 1; i < nsites; i++) /* sort by line */
        for (size_t j = i; j > 0 && lines[j - 1] > lines[j]; j--) {
            uint32_t a = lines[j], c = counts[j];
            lines[j] = lines[j - 1], counts[j] = counts[j - 1];
            lines[j - 1] = a, counts[j - 1] = c;
        }
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof buf, "waiting at ");
    for (size_t i = 0; i < nsites && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%sline %u: %u thread%s", i ? ", " : "", lines[i], counts[i], counts[i] == 1 ? "" : "s");
    if (len < sizeof buf) snprintf(buf + len, sizeof buf - len, "; %zu exited", exited);
    pthread_mutex_lock(&l->mu);
    if (!l->have_detail) {
        memcpy(l->detail, buf, sizeof buf);
        l->have_detail = 1;
    }
    pthread_mutex_unlock(&l->mu);
}

static void append_out(Launch *l, const char *s, size_t n) {
    pthread_mutex_lock(&l->mu);
    if (l->out_len + n > l->out_cap) {
        size_t cap = (l->out_len + n) * 2 + 256;
        char *p = (char *)realloc(l->out, cap);
        if (!p) {
            pthread_mutex_unlock(&l->mu);
            return;
        }
        l->out = p;
        l->out_cap = cap;
    }
    memcpy(l->out + l->out_len, s, n);
    l->out_len += n;
    pthread_mutex_unlock(&l->mu);
}

/* A growable string for one printf call. */
typedef struct Str {
    char *p;
    size_t len, cap;
} Str;

static void str_add(Str *s, const char *t, size_t n) {
    if (s->len + n + 1 > s->cap) {
        size_t cap = (s->len + n + 1) * 2;
        char *q = (char *)realloc(s->p, cap);
        if (!q) return;
        s->p = q;
        s->cap = cap;
    }
    memcpy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = 0;
}

static uint64_t read_arg(const uint8_t *args, size_t *off, size_t size) {
    *off = (*off + size - 1) / size * size;
    uint64_t v = 0;
    if (args) memcpy(&v, args + *off, size); /* little-endian targets only */
    *off += size;
    return v;
}

/* CUDA's device printf: arguments packed at their natural alignment (integers and pointers 4
 * or 8 bytes, floats promoted to double). Returns the number of arguments printed. */
static int32_t host_vprintf(void *host, const char *fmt, const uint8_t *args) {
    Launch *l = (Launch *)host;
    Str out = {0, 0, 0};
    size_t off = 0;
    int32_t count = 0;
    if (!fmt) fmt = "(null)";
    size_t k = 0, blen = strlen(fmt);
    while (k < blen) {
        if (fmt[k] != '%') {
            str_add(&out, fmt + k, 1);
            k++;
            continue;
        }
        size_t start = k++;
        if (k < blen && fmt[k] == '%') {
            str_add(&out, "%", 1);
            k++;
            continue;
        }
        char spec[64];
        size_t sp = 0;
        spec[sp++] = '%';
        while (k < blen && strchr("-+ #0", fmt[k])) {
            if (sp < 40) spec[sp++] = fmt[k];
            k++;
        }
        while (k < blen && ((fmt[k] >= '0' && fmt[k] <= '9') || fmt[k] == '.' || fmt[k] == '*')) {
            if (fmt[k] == '*') {
                /* a width or precision from an int argument */
                char num[16];
                int len = snprintf(num, sizeof num, "%d", (int32_t)(uint32_t)read_arg(args, &off, 4));
                for (int q = 0; q < len && sp < 40; q++) spec[sp++] = num[q];
            } else if (sp < 40) {
                spec[sp++] = fmt[k];
            }
            k++;
        }
        int lng = 0;
        while (k < blen && strchr("hlLqjzt", fmt[k])) {
            if (fmt[k] == 'l' || fmt[k] == 'q' || fmt[k] == 'j' || fmt[k] == 'z') lng++;
            k++;
        }
        if (k >= blen) break;
        char conv = fmt[k++];
        count++;
        char buf[512];
        int n = 0;
        switch (conv) {
        case 'd': case 'i': {
            long long v = lng ? (long long)(int64_t)read_arg(args, &off, 8) : (long long)(int32_t)(uint32_t)read_arg(args, &off, 4);
            memcpy(spec + sp, "lld", 4);
            n = snprintf(buf, sizeof buf, spec, v);
            break;
        }
        case 'u': case 'x': case 'X': case 'o': {
            unsigned long long v = lng ? (unsigned long long)read_arg(args, &off, 8) : (unsigned long long)(uint32_t)read_arg(args, &off, 4);
            spec[sp] = 'l'; spec[sp + 1] = 'l'; spec[sp + 2] = conv; spec[sp + 3] = 0;
            n = snprintf(buf, sizeof buf, spec, v);
            break;
        }
        case 'c': {
            int v = (unsigned char)read_arg(args, &off, 4);
            spec[sp] = 'c'; spec[sp + 1] = 0;
            n = snprintf(buf, sizeof buf, spec, v);
            break;
        }
        case 'p': {
            unsigned long long v = (unsigned long long)read_arg(args, &off, 8);
            n = snprintf(buf, sizeof buf, "0x%llx", v);
            break;
        }
        case 's': {
            const char *v = (const char *)(uintptr_t)read_arg(args, &off, 8);
            spec[sp] = 's'; spec[sp + 1] = 0;
            /* Long strings go straight into the output. */
            if (v && sp == 1) {
                str_add(&out, v, strlen(v));
                continue;
            }
            n = snprintf(buf, sizeof buf, spec, v ? v : "(null)");
            break;
        }
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
            uint64_t bits = read_arg(args, &off, 8);
            double v;
            memcpy(&v, &bits, 8);
            spec[sp] = conv; spec[sp + 1] = 0;
            n = snprintf(buf, sizeof buf, spec, v);
            break;
        }
        default:
            str_add(&out, fmt + start, k - start);
            continue;
        }
        if (n > 0) str_add(&out, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
    if (out.p) {
        append_out(l, out.p, out.len);
        free(out.p);
    }
    return count;
}

static uint64_t host_globaltimer(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void host_assertfail(void *host, const char *msg, const char *file, uint32_t line, const char *func) {
    Launch *l = (Launch *)host;
    pthread_mutex_lock(&l->mu);
    if (!l->have_assert) {
        snprintf(l->assert_msg, sizeof l->assert_msg, "%s:%u: %s: Assertion `%s` failed.", file ? file : "(null)", line, func ? func : "(null)", msg ? msg : "(null)");
        l->have_assert = 1;
    }
    pthread_mutex_unlock(&l->mu);
}

static uint8_t *host_launch_buffer(void *host, const DeviceKernel *d, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem) {
    Launch *l = (Launch *)host;
    if (!l || !d) return NULL;
    uint8_t *params = (uint8_t *)calloc(1, (d->param_size + 15) / 16 * 16 + 16);
    if (!params) return NULL;
    pthread_mutex_lock(&l->mu);
    if (l->nkids == l->kids_cap) {
        size_t cap = l->kids_cap ? l->kids_cap * 2 : 8;
        Child *k = (Child *)realloc(l->kids, cap * sizeof(Child));
        if (!k) {
            pthread_mutex_unlock(&l->mu);
            free(params);
            return NULL;
        }
        l->kids = k;
        l->kids_cap = cap;
    }
    Child c = {d, {gx, gy, gz}, {bx, by, bz}, smem, params, 0};
    l->kids[l->nkids++] = c;
    pthread_mutex_unlock(&l->mu);
    return params;
}

static int32_t host_launch_device(void *host, uint8_t *buf, uint64_t stream) {
    (void)stream;
    Launch *l = (Launch *)host;
    int32_t r = 1; /* cudaErrorInvalidValue: not a buffer of this launch */
    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < l->nkids; i++)
        if (l->kids[i].params == buf && !l->kids[i].launched) {
            l->kids[i].launched = 1;
            r = 0;
            break;
        }
    pthread_mutex_unlock(&l->mu);
    return r;
}

/* Completes the cluster barrier's phase if every CTA that has not ended has arrived. */
static int cluster_settle(ClusterSync *s) {
    if (s->arrived > 0 && s->arrived >= s->live) {
        s->arrived = 0;
        s->phase++;
        pthread_cond_broadcast(&s->cv);
        return 1;
    }
    return 0;
}

/* A CTA of the cluster has ended: the others no longer wait for it. */
static void cluster_leave(ClusterSync *s) {
    pthread_mutex_lock(&s->mu);
    if (s->live) s->live--;
    cluster_settle(s);
    pthread_mutex_unlock(&s->mu);
}

/* The cluster barrier (HostFns.cluster_sync) once every thread of this CTA has arrived: waits
 * until every CTA of the cluster has, or has ended; STATUS_TIMEOUT once the launch's cancel
 * word is set (its time limit passed, or another CTA stopped with an error). */
static uint32_t host_cluster_sync(CtaCtx *cta) {
    if (!cta->cluster) return STATUS_OK; /* a cluster of one CTA: its threads are all there */
    ClusterSync *s = cta->cluster->sync;
    const volatile uint32_t *cancel = (const volatile uint32_t *)cta->host;
    uint32_t st = STATUS_OK;
    pthread_mutex_lock(&s->mu);
    uint64_t phase = s->phase;
    s->arrived++;
    if (!cluster_settle(s)) {
        while (s->phase == phase) {
            if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
                s->arrived--;
                st = STATUS_TIMEOUT;
                break;
            }
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 20 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* ---- The checking mode (`ptxr compile --check`; a port of ptxr-runtime/src/check.rs) ----
 * Code compiled for checking asks `host_check_access` before each ld/st/atom/red of global,
 * shared, generic or .local memory: whether the access lies in memory the kernel may reach
 * (ranges registered with ptxr_check_add, the module's variables, the device heap's blocks,
 * device-side launch parameter buffers, the CTA's shared window, the host thread's stack) and
 * is aligned; shared memory is also checked for races between warps and uninitialized reads
 * (a per-byte shadow with barrier epochs), barriers for divergence and thread counts. */

typedef struct CheckRange {
    uint64_t start, len;
    char *name;
} CheckRange;
static pthread_mutex_t check_mu = PTHREAD_MUTEX_INITIALIZER;
static CheckRange *check_ranges;
static size_t check_n, check_cap;

int ptxr_check_add(const void *start, uint64_t bytes, const char *name) {
    char *nm = strdup(name ? name : "a registered range");
    if (!nm) return -1;
    pthread_mutex_lock(&check_mu);
    if (check_n == check_cap) {
        size_t cap = check_cap ? 2 * check_cap : 16;
        CheckRange *r = (CheckRange *)realloc(check_ranges, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&check_mu);
            free(nm);
            return -1;
        }
        check_ranges = r;
        check_cap = cap;
    }
    check_ranges[check_n].start = (uint64_t)(uintptr_t)start;
    check_ranges[check_n].len = bytes;
    check_ranges[check_n].name = nm;
    check_n++;
    pthread_mutex_unlock(&check_mu);
    return 0;
}

void ptxr_check_clear(void) {
    pthread_mutex_lock(&check_mu);
    for (size_t i = 0; i < check_n; i++) free(check_ranges[i].name);
    check_n = 0;
    pthread_mutex_unlock(&check_mu);
}

/* The launch's copy of the registered ranges (a launch of checked code begins); 0, or -1
 * without memory. */
static int check_snapshot(Launch *l) {
    pthread_mutex_lock(&check_mu);
    int r = 0;
    if (check_n) {
        l->ranges = (CheckRange *)calloc(check_n, sizeof *l->ranges);
        if (!l->ranges) r = -1;
        for (size_t i = 0; l->ranges && i < check_n; i++) {
            l->ranges[i].start = check_ranges[i].start;
            l->ranges[i].len = check_ranges[i].len;
            l->ranges[i].name = strdup(check_ranges[i].name);
            if (!l->ranges[i].name) r = -1;
            l->nranges = i + 1;
        }
    }
    pthread_mutex_unlock(&check_mu);
    return r;
}

static void check_snapshot_free(Launch *l) {
    for (size_t i = 0; i < l->nranges; i++) free(l->ranges[i].name);
    free(l->ranges);
}

/* What an access is (check.rs): bit 0 a write, bits 1-3 the space, then flags. */
enum { CHECK_WRITE = 1, SPACE_GENERIC = 0, SPACE_GLOBAL = 1 << 1, SPACE_SHARED = 2 << 1, SPACE_LOCAL = 3 << 1, CHECK_ATOMIC = 1 << 4, CHECK_STRONG = 1 << 5, CHECK_NO_SHADOW = 1 << 6, HEAP_ALLOC = 1 << 7, HEAP_FREE = 1 << 8, CHECK_UNALIGNED = 1 << 9 };

/* One byte of the shadow of the CTA's shared memory (check.rs `Shade`). */
typedef struct Shade {
    uint32_t gen, w_epoch, w_tid, w_line, r_epoch, r_tid, r_line;
    uint8_t init, r_multi;
} Shade;
static _Thread_local struct {
    uint32_t gen, epoch;
    Shade *bytes;
    size_t len;
    uint64_t stack_lo, stack_hi;
    int have_stack;
} shadow;

/* A CTA of a checked kernel begins on this thread. */
static void check_begin_cta(uint32_t total_smem) {
    shadow.gen++;
    if (shadow.gen == 0) {
        if (shadow.bytes) memset(shadow.bytes, 0, shadow.len * sizeof(Shade));
        shadow.gen = 1;
    }
    shadow.epoch = 1;
    if (shadow.len < total_smem) {
        Shade *b = (Shade *)realloc(shadow.bytes, (size_t)total_smem * sizeof(Shade));
        if (b) {
            memset(b + shadow.len, 0, ((size_t)total_smem - shadow.len) * sizeof(Shade));
            shadow.bytes = b;
            shadow.len = total_smem;
        }
    }
}

static int checking(const CtaCtx *cta) { return cta->host && ((const Launch *)cta->host)->k->checked; }

/* Records the launch's first report and stops the CTA with STATUS_CHECK. */
static uint32_t check_report(CtaCtx *cta, uint32_t line, uint32_t col, uint32_t tid, const char *msg) {
    Launch *l = (Launch *)cta->host;
    pthread_mutex_lock(&l->mu);
    if (!l->have_check) {
        l->have_check = 1;
        l->check_col = col;
        snprintf(l->check_msg, sizeof l->check_msg, "%s", msg);
    }
    pthread_mutex_unlock(&l->mu);
    cta->status_line = line;
    cta->status_thread = tid;
    return STATUS_CHECK;
}

/* The shadow checks of bytes off..off+n by thread `tid` at `line` (check.rs `shade`): 1 with
 * the problem in `msg`, else 0. */
static int shade(uint64_t off, uint64_t n, int write, uint32_t tid, uint32_t line, const uint32_t ntid[3], char *msg, size_t cap) {
#define AT(t) (t) % ntid[0], ((t) / ntid[0]) % ntid[1], (t) / (ntid[0] * ntid[1])
    for (uint64_t b = off; b < off + n; b++) {
        if (b >= shadow.len) return 0;
        Shade *c = &shadow.bytes[b];
        if (c->gen != shadow.gen) {
            memset(c, 0, sizeof *c);
            c->gen = shadow.gen;
        }
        int w_other = c->w_tid / 32 != tid / 32, r_other = c->r_tid / 32 != tid / 32;
        if (write) {
            if (c->w_epoch == shadow.epoch && w_other) {
                snprintf(msg, cap, "race on the __shared__ byte at offset %llu: written by thread (%u,%u,%u) at line %u and by thread (%u,%u,%u) here, with no barrier between (write-after-write)", (unsigned long long)b, AT(c->w_tid), c->w_line, AT(tid));
                return 1;
            }
            if (c->r_epoch == shadow.epoch && (r_other || c->r_multi)) {
                snprintf(msg, cap, "race on the __shared__ byte at offset %llu: read by thread (%u,%u,%u) at line %u and written by thread (%u,%u,%u) here, with no barrier between (write-after-read)", (unsigned long long)b, AT(c->r_tid), c->r_line, AT(tid));
                return 1;
            }
            c->init = 1;
            c->w_epoch = shadow.epoch;
            c->w_tid = tid;
            c->w_line = line;
        } else {
            if (!c->init) {
                snprintf(msg, cap, "uninitialized __shared__ read: the byte at offset %llu has not been written since the launch began", (unsigned long long)b);
                return 1;
            }
            if (c->w_epoch == shadow.epoch && w_other) {
                snprintf(msg, cap, "race on the __shared__ byte at offset %llu: written by thread (%u,%u,%u) at line %u and read by thread (%u,%u,%u) here, with no barrier between (read-after-write)", (unsigned long long)b, AT(c->w_tid), c->w_line, AT(tid));
                return 1;
            }
            if (c->r_epoch == shadow.epoch && r_other) c->r_multi = 1;
            else if (c->r_epoch != shadow.epoch) c->r_multi = 0;
            c->r_epoch = shadow.epoch;
            c->r_tid = tid;
            c->r_line = line;
        }
    }
    return 0;
#undef AT
}

/* Whether [a, a+n) lies in memory of the launch that is neither shared nor the stack: the
 * registered ranges, the module's variables, the device heap's blocks, device-side launch
 * parameter buffers; else the nearest range and where the access lies from it in `whr`. */
static int check_global(Launch *l, uint64_t a, uint64_t n, char *whr, size_t cap) {
    int inside = 0;
    const char *near_name = NULL;
    uint64_t near_start = 0, near_len = 0, near_dist = UINT64_MAX;
#define CONSIDER(S, L, NAME)                                                            \
    do {                                                                                \
        uint64_t s_ = (S), l_ = (L);                                                    \
        if (a >= s_ && a + n <= s_ + l_) inside = 1;                                    \
        uint64_t d_ = a < s_ ? s_ - a : (a >= s_ + l_ ? a - (s_ + l_) : 0);             \
        if (d_ < near_dist) near_dist = d_, near_start = s_, near_len = l_, near_name = (NAME); \
    } while (0)
    int any = l->nranges > 0;
    for (size_t i = 0; i < l->nranges && !inside; i++) CONSIDER(l->ranges[i].start, l->ranges[i].len, l->ranges[i].name);
    /* the kernel's parameters (read through a generic address: `cvta.param`) */
    if (!inside && l->params && a >= (uint64_t)(uintptr_t)l->params && a + n <= (uint64_t)(uintptr_t)l->params + l->k->param_bytes) inside = 1;
    char var_name[300] = "";
    for (uint32_t i = 0; i < l->k->nvars && !inside; i++) {
        const ptxr_var *v = &l->k->vars[i];
        uint64_t s = (uint64_t)(uintptr_t)*v->addr;
        uint64_t d = a < s ? s - a : (a >= s + v->bytes ? a - (s + v->bytes) : 0);
        if (d < near_dist) snprintf(var_name, sizeof var_name, "variable `%s`", v->name);
        CONSIDER(s, v->bytes, var_name);
    }
    char near_copy[300] = "";
    if (near_name) snprintf(near_copy, sizeof near_copy, "%s", near_name);
    if (!any) return 1; /* nothing registered: global memory is not checked */
    if (inside) return 1;
    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < l->nheap && !inside; i++)
        if (a >= l->heap[i][0] && a + n <= l->heap[i][0] + l->heap[i][1]) inside = 1;
    for (size_t i = 0; i < l->nkids && !inside; i++)
        if (l->kids[i].params && a >= (uint64_t)(uintptr_t)l->kids[i].params && a + n <= (uint64_t)(uintptr_t)l->kids[i].params + l->kids[i].d->param_size) inside = 1;
    pthread_mutex_unlock(&l->mu);
    if (inside) return 1;
#undef CONSIDER
    if (!near_copy[0]) snprintf(whr, cap, "no allocation");
    else if (a >= near_start + near_len) snprintf(whr, cap, "%llu bytes after the end of %s (%#llx, %llu bytes)", (unsigned long long)(a - (near_start + near_len)), near_copy, (unsigned long long)near_start, (unsigned long long)near_len);
    else if (a < near_start) snprintf(whr, cap, "%llu bytes before %s (%#llx, %llu bytes)", (unsigned long long)(near_start - a), near_copy, (unsigned long long)near_start, (unsigned long long)near_len);
    else snprintf(whr, cap, "the last %llu of its bytes past the end of %s (%#llx, %llu bytes)", (unsigned long long)(a + n - (near_start + near_len)), near_copy, (unsigned long long)near_start, (unsigned long long)near_len);
    return 0;
}

static uint32_t host_check_access(CtaCtx *cta, const uint8_t *addr, uint32_t size, uint32_t kind, uint32_t line, uint32_t col, uint32_t tid) {
    Launch *l = (Launch *)cta->host;
    if (!l) return STATUS_OK;
    if (kind & (HEAP_ALLOC | HEAP_FREE)) {
        if (!addr) return STATUS_OK;
        pthread_mutex_lock(&l->mu);
        if (kind & HEAP_ALLOC) {
            if (l->nheap == l->heap_cap) {
                size_t cap = l->heap_cap ? 2 * l->heap_cap : 16;
                uint64_t(*h)[2] = (uint64_t(*)[2])realloc(l->heap, cap * sizeof *h);
                if (h) l->heap = h, l->heap_cap = cap;
            }
            if (l->nheap < l->heap_cap) {
                l->heap[l->nheap][0] = (uint64_t)(uintptr_t)addr;
                l->heap[l->nheap][1] = size;
                l->nheap++;
            }
        } else {
            for (size_t i = 0; i < l->nheap; i++)
                if (l->heap[i][0] == (uint64_t)(uintptr_t)addr) {
                    l->heap[i][0] = l->heap[l->nheap - 1][0];
                    l->heap[i][1] = l->heap[l->nheap - 1][1];
                    l->nheap--;
                    break;
                }
        }
        pthread_mutex_unlock(&l->mu);
        return STATUS_OK;
    }
    uint64_t a = (uint64_t)(uintptr_t)addr, n = size ? size : 1;
    uint32_t space = kind & (7u << 1);
    int write = (kind & CHECK_WRITE) != 0;
    const char *sp = space == SPACE_SHARED ? "__shared__ " : space == SPACE_GLOBAL ? "__global__ " : space == SPACE_LOCAL ? "__local__ " : "";
    char access[160], msg[900];
    snprintf(access, sizeof access, "%s of %llu byte%s at %#llx", write ? "write" : "read", (unsigned long long)n, n == 1 ? "" : "s", (unsigned long long)a);
    /* The CTA's window, or with a cluster the windows of all its CTAs. */
    uint64_t sh0 = (uint64_t)(uintptr_t)cta->shared, sh1 = sh0 + cta->total_smem;
    if (cta->cluster) {
        const ClusterCtx *cl = cta->cluster;
        uint64_t cn = (uint64_t)cl->dims[0] * cl->dims[1] * cl->dims[2], rank = 0;
        for (int k = 2; k >= 0; k--) rank = rank * cl->dims[k] + cta->ctaid[k] % cl->dims[k];
        sh0 -= rank * cl->stride;
        sh1 = sh0 + (cn - 1) * cl->stride + cta->total_smem;
    }
    int in_shared = a >= sh0 && a + n <= sh1;
    uint64_t align = n < 16 ? n : 16;
    if ((n & (n - 1)) == 0 && a % align != 0 && !(kind & CHECK_UNALIGNED)) {
        snprintf(msg, sizeof msg, "misaligned %s%s: the address is not a multiple of the access size", sp, access);
        return check_report(cta, line, col, tid, msg);
    }
    if (space == SPACE_LOCAL) {
        /* Generated code asks only about .local accesses outside the thread's variables. */
        snprintf(msg, sizeof msg, "invalid __local__ %s: outside the thread's .local variables", access);
        return check_report(cta, line, col, tid, msg);
    }
    if (space == SPACE_SHARED || (space == SPACE_GENERIC && a >= sh0 && a < sh1)) {
        if (!in_shared) {
            snprintf(msg, sizeof msg, "invalid __shared__ %s: shared offset %lld, outside the CTA's %u bytes of shared memory", access, (long long)(a - sh0), cta->total_smem);
            return check_report(cta, line, col, tid, msg);
        }
        if (!cta->cluster && !(kind & (CHECK_NO_SHADOW | CHECK_ATOMIC | CHECK_STRONG)) && shade(a - (uint64_t)(uintptr_t)cta->shared, n, write, tid, line, cta->ntid, msg, sizeof msg))
            return check_report(cta, line, col, tid, msg);
        return STATUS_OK;
    }
    if (!shadow.have_stack) {
        pthread_attr_t attr;
        void *lo = NULL;
        size_t sz = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            pthread_attr_getstack(&attr, &lo, &sz);
            pthread_attr_destroy(&attr);
        }
        shadow.stack_lo = (uint64_t)(uintptr_t)lo;
        shadow.stack_hi = shadow.stack_lo + sz;
        shadow.have_stack = 1;
    }
    if (a >= shadow.stack_lo && a + n <= shadow.stack_hi) return STATUS_OK;
    char whr[600];
    if (check_global(l, a, n, whr, sizeof whr)) return STATUS_OK;
    snprintf(msg, sizeof msg, "invalid %s%s: %s", space == SPACE_GLOBAL ? "__global__ " : "", access, whr);
    return check_report(cta, line, col, tid, msg);
}

/* A barrier `id` of the CTA completes (resolve): in the checking mode, synccheck (every
 * waiting thread gives the first one's thread count; an .aligned barrier is one instruction
 * for every thread of a warp) and the shadow's next epoch. RESOLVE_CONTINUE, or a stop. */
static uint32_t check_barrier(CtaCtx *cta, const SyncSlot *slots, size_t n, uint32_t id, size_t first) {
    if (!checking(cta)) return RESOLVE_CONTINUE;
    char msg[600];
#define WAITS(t) (slots[t].state == SLOT_WAITING && slots[t].kind == SYNC_BAR && bar_index(slots[t].bar_id) == id)
    for (size_t t = 0; t < n; t++) {
        if (WAITS(t) && slots[t].bar_count != slots[first].bar_count) {
            char c0[32], c1[32];
            snprintf(c0, sizeof c0, slots[first].bar_count ? "%u" : "none (all threads)", slots[first].bar_count);
            snprintf(c1, sizeof c1, slots[t].bar_count ? "%u" : "none (all threads)", slots[t].bar_count);
            snprintf(msg, sizeof msg, "inconsistent barrier thread counts: threads %zu and %zu wait at barrier %u with thread counts %s and %s (lines %u and %u), but every thread at a barrier must give the same count", first, t, id, c0, c1, slots[first].line, slots[t].line);
            check_report(cta, slots[t].line, 0, (uint32_t)t, msg);
            return fail(cta, STATUS_CHECK, slots[t].line, t);
        }
    }
    for (size_t w = 0; w < (n + 31) / 32; w++) {
        size_t t0 = SIZE_MAX;
        for (size_t t = w * 32; t < w * 32 + 32 && t < n; t++) {
            if (!WAITS(t)) continue;
            if (t0 == SIZE_MAX) {
                t0 = t;
            } else if (slots[t].site != slots[t0].site && ((slots[t].flags | slots[t0].flags) & FLAG_ALIGNED)) {
                snprintf(msg, sizeof msg, "divergent barrier: threads %zu and %zu of warp %zu wait at barrier %u at lines %u and %u, but an .aligned barrier (bar.sync, barrier.sync.aligned) must be the same instruction for every thread of a warp", t0, t, w, id, slots[t0].line, slots[t].line);
                check_report(cta, slots[t].line, 0, (uint32_t)t, msg);
                return fail(cta, STATUS_CHECK, slots[t].line, t);
            }
        }
    }
#undef WAITS
    shadow.epoch++;
    return RESOLVE_CONTINUE;
}

/* clusterlaunchcontrol.try_cancel (HostFns.try_cancel): this runtime starts every CTA of a
 * grid itself and cancels none; the response says so (16 zero bytes: not cancelled), which
 * a GPU may answer too, and the kernel's own CTAs then do all the work. */
static void host_try_cancel(struct CtaCtx *cta, uint8_t *resp) {
    (void)cta;
    memset(resp, 0, 16);
}

static const HostFns HOST_FNS = {host_vprintf, host_globaltimer, host_assertfail, resolve, host_launch_buffer, host_launch_device, host_cluster_sync, host_check_access, host_try_cancel};

/* Runs the grids launched from the device by a finished grid (CUDA dynamic parallelism),
 * in order; grids they launch run after each of them the same way. */
static int run_children(const ptxr_kernel *parent, const ptxr_launch_config *pcfg, Launch *l) {
    int r = PTXR_OK;
    for (size_t i = 0; i < l->nkids; i++) {
        Child *c = &l->kids[i];
        if (c->launched && r == PTXR_OK) {
            const DeviceKernel *d = c->d;
            uint32_t off = 0, size = d->param_size;
            ptxr_kernel k = {d->name, parent->file, d->cta, 1, &off, &size, d->param_size, d->static_smem, {0, 0, 0}, {0, 0, 0}, d->frame_size, d->flags & 1, (d->flags >> 1) & 1, {0, 0, 0}, parent->checked, parent->vars, parent->nvars};
            if (d->flags & 4) memcpy(k.reqntid, d->reqntid, sizeof k.reqntid);
            if (d->flags & 8) memcpy(k.maxntid, d->maxntid, sizeof k.maxntid);
            ptxr_launch_config cfg = {{c->grid[0], c->grid[1], c->grid[2]}, {c->block[0], c->block[1], c->block[2]}, c->smem, pcfg->parallel_for, pcfg->user};
            void *args[1] = {c->params};
            r = ptxr_rt_launch(&k, &cfg, args);
        }
        free(c->params);
    }
    free(l->kids);
    return r;
}

/* Per-thread scratch memory, reused by the CTAs this thread runs (never freed: at most the
 * largest CTA's shared memory, frames and slots per thread). */
static _Thread_local struct {
    void *smem, *frames, *slots;
    size_t smem_cap, frames_cap, slots_cap;
    /* The guarded mapping behind `smem` (see `shared_window`), its length, and the window's. */
    void *smem_map;
    size_t smem_map_len, smem_len;
    /* Bytes at the start of `slots` known to be zero: slots are written only on the way to
     * `resolve`, so CTAs completed in generated code leave them clear. */
    size_t slots_clean;
    uint32_t smid;
} tls;
static uint32_t next_smid;

static void *grow(void **p, size_t *cap, size_t need) {
    if (need <= *cap && *p) return *p;
    free(*p);
    *p = NULL;
    *cap = 0;
    void *q = NULL;
    if (posix_memalign(&q, 64, need ? need : 16) != 0) return NULL;
    *p = q;
    *cap = need;
    return q;
}

/* A CTA's shared-memory window of `len` bytes (a multiple of 16), mapped so that it ends
 * where an inaccessible page begins, with another such page before it: a kernel that writes
 * past its shared variables (on a GPU, an illegal-address error of the launch) faults
 * instead of overwriting the heap. Falls back to the heap if the mapping fails. */
static uint8_t *shared_window(size_t len) {
    if (tls.smem_map && tls.smem_len == len) return (uint8_t *)tls.smem;
    if (tls.smem_map) {
        munmap(tls.smem_map, tls.smem_map_len);
        tls.smem_map = NULL;
        tls.smem = NULL;
        tls.smem_cap = 0;
    }
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 4096 ? (size_t)ps : 4096;
    size_t body = (len + page - 1) / page * page;
    if (body == 0) body = page;
    size_t map_len = page + body + page;
    uint8_t *m = (uint8_t *)mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != (uint8_t *)MAP_FAILED) {
        if (mprotect(m, page, PROT_NONE) == 0 && mprotect(m + page + body, page, PROT_NONE) == 0) {
            tls.smem_map = m;
            tls.smem_map_len = map_len;
            tls.smem_len = len;
            tls.smem = m + page + body - len;
            return (uint8_t *)tls.smem;
        }
        munmap(m, map_len);
    }
    return (uint8_t *)grow(&tls.smem, &tls.smem_cap, len + 16);
}

/* The distance between the shared windows of a group's CTAs: a multiple of 64 bytes, so
 * that small windows sit at different offsets within a page (abi.rs group_smem_stride). */
static size_t group_smem_stride(uint32_t total_smem) {
    return ((size_t)total_smem + 63) / 64 * 64 + 64;
}

/* Runs CTA c (with l->group CTAs from it): in a launch with clusters, in the shared window
 * `window` (already zeroed) of `cluster`. */
static void run_cta_at(Launch *l, uint64_t c, uint8_t *window, const ClusterCtx *cluster) {
    if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED)) return;
    const ptxr_kernel *k = l->k;
    const ptxr_launch_config *cfg = l->cfg;
    uint64_t gx = cfg->grid[0], gy = cfg->grid[1];
    size_t nthreads = (size_t)cfg->block[0] * cfg->block[1] * cfg->block[2];
    size_t smem_len = ((size_t)l->total_smem + 15) / 16 * 16;
    /* A group of CTAs of a kernel with shared memory: a window per CTA of the group, each
     * group_smem_stride bytes after the one before (abi.rs group_smem_len). */
    if (smem_len && l->group > 1) smem_len += group_smem_stride(l->total_smem) * (l->group - 1);
    uint8_t *smem = window ? window : shared_window(smem_len);
    if (tls.smid == 0) tls.smid = __atomic_add_fetch(&next_smid, 1, __ATOMIC_RELAXED);
    CtaCtx ctx;
    memset(&ctx, 0, sizeof ctx);
    Sched sched;
    memset(&sched, 0, sizeof sched);
    if (!smem) goto oom;
    /* Shared memory starts uninitialized on a GPU; zero it so runs are reproducible. */
    /* An empty window starts at the guard page; even a zero-length memset there made
     * saxpy 2x slower in the Rust runtime, so it is skipped. */
    if (smem_len && !window) memset(smem, 0, smem_len);
    if (k->checked) check_begin_cta(l->total_smem);
    ctx.params = l->params;
    ctx.shared = smem;
    if (c < gx) { /* a one-dimensional grid (the common case) needs no division */
        ctx.ctaid[0] = (uint32_t)c;
        ctx.ctaid[1] = 0;
        ctx.ctaid[2] = 0;
    } else {
        ctx.ctaid[0] = (uint32_t)(c % gx);
        ctx.ctaid[1] = (uint32_t)((c / gx) % gy);
        ctx.ctaid[2] = (uint32_t)(c / (gx * gy));
    }
    for (int d = 0; d < 3; d++) {
        ctx.nctaid[d] = cfg->grid[d];
        ctx.ntid[d] = cfg->block[d];
    }
    ctx.dyn_smem = cfg->shared_bytes;
    ctx.total_smem = l->total_smem;
    ctx.rt = &HOST_FNS;
    ctx.host = l;
    ctx.smid = tls.smid - 1;
    ctx.group = (uint32_t)(l->ncta - c < l->group ? l->ncta - c : l->group);
    ctx.grid_ws = l->grid_ws;
    ctx.cluster = cluster;
    if (k->uses_sync) {
        /* Frames need no clearing: registers are written before they are read, and .local
         * memory starts uninitialized on a GPU too. */
        /* One frame slot per lane of each warp (a row of the block in runs of 32 threads:
         * warp-vector kernels keep a frame of 32 slots per warp). */
        size_t lanes = ((size_t)cfg->block[0] + 31) / 32 * 32 * cfg->block[1] * cfg->block[2];
        /* Frames are aligned to the largest power of two dividing the frame size (16 to
         * 4096): generated code makes the size a multiple of its .local alignments. */
        /* A cache line at least, as launch.rs frame_align. */
        size_t falign = 64;
        while (falign < 4096 && k->frame_size % (falign * 2) == 0 && k->frame_size != 0) falign *= 2;
        size_t fbytes = ((size_t)k->frame_size * lanes * l->group + 15) / 16 * 16 + falign;
        size_t sbytes = nthreads * sizeof(SyncSlot);
        uint8_t *frames = (uint8_t *)grow(&tls.frames, &tls.frames_cap, fbytes);
        if (sbytes > tls.slots_cap) tls.slots_clean = 0;
        SyncSlot *slots = (SyncSlot *)grow(&tls.slots, &tls.slots_cap, sbytes);
        if (!frames || !slots) goto oom;
        if (tls.slots_clean < sbytes) {
            memset(slots, 0, sbytes);
            tls.slots_clean = sbytes;
        }
        ctx.frames = frames + ((falign - (uintptr_t)frames % falign) % falign);
        ctx.slots = slots;
        ctx.sched = &sched;
    }
    {
        /* A CTA that would start after the time limit stops before it runs. */
        int32_t st = 0;
        uint32_t slot = (tls.smid - 1) % RUNNING_SLOTS;
        if (__atomic_load_n(&l->cancel, __ATOMIC_RELAXED)) {
            ctx.status = STATUS_TIMEOUT;
        } else {
            __atomic_store_n(&l->running_cta[slot].cta, c + 1, __ATOMIC_RELAXED);
            st = k->cta(&ctx);
            __atomic_store_n(&l->running_cta[slot].cta, 0, __ATOMIC_RELAXED);
        }
        if (sched.called) tls.slots_clean = 0;
        if (st != 0 || ctx.status != 0) {
            __atomic_store_n(&l->stop, 1, __ATOMIC_RELAXED);
            /* The other CTAs of a cooperative launch may be waiting for this one: they stop
             * at their next back edge (cancel word 2, as at a time limit), and the error
             * reported is this one, not theirs. */
            int by_peer = l->peers_wait && ctx.status == STATUS_TIMEOUT && __atomic_load_n(&l->cancel, __ATOMIC_RELAXED) == 2;
            if (l->peers_wait && !by_peer) {
                uint32_t zero = 0;
                __atomic_compare_exchange_n(&l->cancel, &zero, 2, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
            }
            pthread_mutex_lock(&l->mu);
            /* In a group, ctaid is the CTA of the warp that stopped. */
            c = ctx.ctaid[0] + gx * (ctx.ctaid[1] + gy * (uint64_t)ctx.ctaid[2]);
            int old_by_peer = l->failed && l->peers_wait && l->fail_ctx.status == STATUS_TIMEOUT && __atomic_load_n(&l->cancel, __ATOMIC_RELAXED) == 2;
            if (!l->failed || by_peer < old_by_peer || (by_peer == old_by_peer && c < l->fail_cta)) {
                l->failed = 1;
                l->fail_cta = c;
                l->fail_ctx = ctx;
            }
            pthread_mutex_unlock(&l->mu);
        }
    }
    return;
oom:
    __atomic_store_n(&l->nomem, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&l->stop, 1, __ATOMIC_RELAXED);
}

/* parallel_for's item i: the group of l->group CTAs from l->base + i * l->group (a kernel
 * whose CTA function runs groups of CTAs, CtaCtx.group; else one CTA). */
static void run_cta(void *vl, uint32_t i) {
    Launch *l = (Launch *)vl;
    run_cta_at(l, l->base + (uint64_t)i * l->group, NULL, NULL);
}

/* ---- Clusters (ptxr_set_cluster, .reqnctapercluster) ---- */

static _Thread_local uint32_t cluster_dims[3];

void ptxr_set_cluster(uint32_t x, uint32_t y, uint32_t z) {
    cluster_dims[0] = x;
    cluster_dims[1] = y;
    cluster_dims[2] = z;
}

static void release_thread_buffers(void);

/* A CTA of a cluster on a thread of its own. */
typedef struct ClusterThread {
    Launch *l;
    uint64_t c;
    uint8_t *window;
    const ClusterCtx *cluster;
    pthread_t t;
    int started;
} ClusterThread;

static void *cluster_cta(void *v) {
    ClusterThread *ct = (ClusterThread *)v;
    run_cta_at(ct->l, ct->c, ct->window, ct->cluster);
    cluster_leave(ct->cluster->sync);
    release_thread_buffers();
    return NULL;
}

/* parallel_for's item q: cluster q (x fastest in the grid of clusters). Its CTAs run at once,
 * rank 0 on this thread and the others each on a thread of its own, with their shared
 * windows `stride` bytes apart in one zeroed allocation: a multiple of 16 MiB, a GPU's
 * distance between them in the shared::cluster window, with 16 bytes at the end of each
 * for generated code (docs/abi.md); every window gets the same alignment padding, and
 * calloc leaves the pages a kernel does not touch unbacked. */
static void run_cluster(void *vl, uint32_t q) {
    Launch *l = (Launch *)vl;
    if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED)) return;
    const uint32_t *d = l->cluster, *g = l->cfg->grid;
    uint32_t size = d[0] * d[1] * d[2];
    size_t stride = (((size_t)l->total_smem + 16 + (1u << 24) - 1) >> 24) << 24;
    uint8_t *region = (uint8_t *)calloc(size, stride);
    ClusterThread *ts = (ClusterThread *)calloc(size, sizeof *ts);
    if (!region || !ts) {
        free(region);
        free(ts);
        __atomic_store_n(&l->nomem, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&l->stop, 1, __ATOMIC_RELAXED);
        return;
    }
    ClusterSync sync;
    memset(&sync, 0, sizeof sync);
    pthread_mutex_init(&sync.mu, NULL);
    pthread_cond_init(&sync.cv, NULL);
    sync.live = size;
    ClusterCtx cl = {{d[0], d[1], d[2]}, (uint32_t)stride, &sync};
    uint64_t ncx = g[0] / d[0], ncy = g[1] / d[1];
    uint64_t pos[3] = {q % ncx, (q / ncx) % ncy, q / (ncx * ncy)};
    for (uint32_t r = 0; r < size; r++) {
        uint64_t local[3] = {r % d[0], (r / d[0]) % d[1], r / (d[0] * d[1])};
        uint64_t id[3];
        for (int a = 0; a < 3; a++) id[a] = pos[a] * d[a] + local[a];
        ts[r].l = l;
        ts[r].c = id[0] + (uint64_t)g[0] * (id[1] + (uint64_t)g[1] * id[2]);
        ts[r].window = region + (size_t)r * stride;
        ts[r].cluster = &cl;
    }
    for (uint32_t r = 1; r < size; r++) {
        ts[r].started = pthread_create(&ts[r].t, NULL, cluster_cta, &ts[r]) == 0;
        if (!ts[r].started) {
            /* No thread for this CTA: the others could wait for it forever. */
            __atomic_store_n(&l->nomem, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&l->cancel, 2, __ATOMIC_SEQ_CST);
            cluster_leave(&sync);
        }
    }
    run_cta_at(l, ts[0].c, ts[0].window, &cl);
    cluster_leave(&sync);
    for (uint32_t r = 1; r < size; r++)
        if (ts[r].started) pthread_join(ts[r].t, NULL);
    pthread_mutex_destroy(&sync.mu);
    pthread_cond_destroy(&sync.cv);
    free(region);
    free(ts);
}

/* ---- Cooperative launches (ptxr_set_cooperative) ---- */

static _Thread_local int cooperative;

void ptxr_set_cooperative(int on) { cooperative = on != 0; }

#define MAX_COOPERATIVE_CTAS 4096

/* A thread of a cooperative launch: runs CTA `i`, then releases its thread-local buffers. */
typedef struct CoopThread {
    Launch *l;
    uint32_t i;
    pthread_t t;
    int started;
} CoopThread;

/* Frees this thread's buffers (shared window, frames, slots) as the thread ends. */
static void release_thread_buffers(void) {
    if (tls.smem_map) munmap(tls.smem_map, tls.smem_map_len);
    else free(tls.smem);
    free(tls.frames);
    free(tls.slots);
    memset(&tls, 0, sizeof tls);
}

static void *coop_cta(void *vc) {
    CoopThread *ct = (CoopThread *)vc;
    run_cta(ct->l, ct->i);
    release_thread_buffers();
    return NULL;
}

static _Thread_local char last_error[2048];

const char *ptxr_last_error(void) { return last_error; }

static int error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int error(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int ptxr_rt_launch(const ptxr_kernel *k, const ptxr_launch_config *cfg, void **args) {
    last_error[0] = 0;
    if (!cfg) return error(PTXR_ERR_CONFIG, "kernel `%s`: the launch configuration is NULL", k->name);
    const uint32_t *g = cfg->grid, *b = cfg->block;
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    if (threads > 1024 || b[0] > 1024 || b[1] > 1024 || b[2] > 64)
        return error(PTXR_ERR_CONFIG, "block %ux%ux%u exceeds the limits (at most 1024 threads, x,y ≤ 1024, z ≤ 64)", b[0], b[1], b[2]);
    if (g[0] > 0x7fffffffu || g[1] > 65535 || g[2] > 65535)
        return error(PTXR_ERR_CONFIG, "grid %ux%ux%u exceeds the limits (x < 2^31, y,z ≤ 65535)", g[0], g[1], g[2]);
    if (threads == 0 || g[0] == 0 || g[1] == 0 || g[2] == 0)
        return error(PTXR_ERR_CONFIG, "grid %ux%ux%u and block %ux%ux%u must have every dimension at least 1", g[0], g[1], g[2], b[0], b[1], b[2]);
    if (k->reqntid[0] && (k->reqntid[0] != b[0] || k->reqntid[1] != b[1] || k->reqntid[2] != b[2]))
        return error(PTXR_ERR_CONFIG, "kernel `%s` requires a block of %ux%ux%u threads (.reqntid)", k->name, k->reqntid[0], k->reqntid[1], k->reqntid[2]);
    if (k->maxntid[0] && threads > (uint64_t)k->maxntid[0] * k->maxntid[1] * k->maxntid[2])
        return error(PTXR_ERR_CONFIG, "kernel `%s` allows at most %ux%ux%u threads per block (.maxntid)", k->name, k->maxntid[0], k->maxntid[1], k->maxntid[2]);
    uint64_t total_smem = (uint64_t)k->static_smem + cfg->shared_bytes;
    if (total_smem > 227 * 1024)
        return error(PTXR_ERR_CONFIG, "shared memory %llu bytes (%u static + %u dynamic) exceeds the %u byte limit", (unsigned long long)total_smem, k->static_smem, cfg->shared_bytes, 227 * 1024);
    /* Clusters: this thread's (ptxr_set_cluster), else the kernel's .reqnctapercluster. */
    uint32_t cd[3] = {1, 1, 1};
    int asked = cluster_dims[0] != 0, required = k->cluster[0] != 0;
    if (asked && required && (cluster_dims[0] != k->cluster[0] || cluster_dims[1] != k->cluster[1] || cluster_dims[2] != k->cluster[2]))
        return error(PTXR_ERR_CONFIG, "%s: error: kernel `%s` requires clusters of %ux%ux%u CTAs (.reqnctapercluster); the launch asks for %ux%ux%u", k->file, k->name, k->cluster[0], k->cluster[1], k->cluster[2], cluster_dims[0], cluster_dims[1], cluster_dims[2]);
    for (int a = 0; a < 3; a++) cd[a] = asked ? cluster_dims[a] : required ? k->cluster[a] : 1;
    uint64_t csize = (uint64_t)cd[0] * cd[1] * cd[2];
    if (csize == 0 || csize > 16)
        return error(PTXR_ERR_CONFIG, "%s: error: kernel `%s`: clusters of %ux%ux%u CTAs; a cluster has 1 to 16 CTAs", k->file, k->name, cd[0], cd[1], cd[2]);
    if (g[0] % cd[0] || g[1] % cd[1] || g[2] % cd[2])
        return error(PTXR_ERR_CONFIG, "%s: error: kernel `%s`: grid %ux%ux%u is not a whole number of clusters of %ux%ux%u CTAs", k->file, k->name, g[0], g[1], g[2], cd[0], cd[1], cd[2]);
    if (csize > 1 && cooperative)
        return error(PTXR_ERR_CONFIG, "%s: error: kernel `%s`: a cooperative launch with clusters of more than one CTA is not supported", k->file, k->name);
    if (cooperative && (uint64_t)g[0] * g[1] * g[2] > MAX_COOPERATIVE_CTAS)
        return error(PTXR_ERR_CONFIG, "kernel `%s`: a cooperative launch of %llu CTAs; ptxr runs at most %d at once", k->name, (unsigned long long)g[0] * g[1] * g[2], MAX_COOPERATIVE_CTAS);
    if (k->nparams > 0 && !args) return error(PTXR_ERR_ARGS, "kernel `%s` takes %u parameters but args is NULL", k->name, k->nparams);
    /* Parameter buffer (CUDA's cuLaunchKernel convention: args[i] points to parameter i). */
    size_t pbytes = k->param_bytes < 8 ? 8 : k->param_bytes;
    uint8_t *pbuf = (uint8_t *)calloc(1, (pbytes + 15) / 16 * 16);
    if (!pbuf) return error(PTXR_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (!args[i]) {
            free(pbuf);
            return error(PTXR_ERR_ARGS, "kernel `%s`: args[%u] is NULL", k->name, i);
        }
        memcpy(pbuf + k->param_offset[i], args[i], k->param_size[i]);
    }
    Launch l;
    memset(&l, 0, sizeof l);
    l.k = k;
    l.cfg = cfg;
    l.params = pbuf;
    l.total_smem = (uint32_t)total_smem;
    pthread_mutex_init(&l.mu, NULL);
    /* Without memory for the copy, a CTA stops the launch as out of memory. */
    if (k->checked && check_snapshot(&l) != 0) l.nomem = 1, l.stop = 1;
    uint64_t ncta = (uint64_t)g[0] * g[1] * g[2];
    Watchdog w;
    memset(&w, 0, sizeof w);
    pthread_t wt;
    int watching = 0;
    if (timeout_s > 0) {
        w.l = &l;
        w.seconds = timeout_s;
        pthread_mutex_init(&w.mu, NULL);
        pthread_cond_init(&w.cv, NULL);
        watching = pthread_create(&wt, NULL, watchdog, &w) == 0;
    }
    l.ncta = ncta;
    l.group = 1;
    int coop = cooperative;
    uint64_t workspace[4] = {0, 0, 0, 0};
    if (coop) l.grid_ws = (uint8_t *)workspace;
    int clustered = csize > 1;
    if (clustered) memcpy(l.cluster, cd, sizeof cd);
    l.peers_wait = coop || clustered;
    if (clustered) {
        /* Clusters on the launcher's parallel_for, or one after another. */
        uint64_t nclusters = ncta / csize;
        if (cfg->parallel_for) {
            cfg->parallel_for(cfg->user, (uint32_t)nclusters, run_cluster, &l);
        } else {
            for (uint64_t q = 0; q < nclusters && !l.stop; q++) run_cluster(&l, (uint32_t)q);
        }
    } else if (coop) {
        /* Every CTA at once, each on a thread of its own. */
        CoopThread *ts = (CoopThread *)calloc(ncta, sizeof *ts);
        if (!ts) {
            l.nomem = 1;
        } else {
            for (uint64_t c = 0; c < ncta; c++) {
                ts[c].l = &l;
                ts[c].i = (uint32_t)c;
                ts[c].started = pthread_create(&ts[c].t, NULL, coop_cta, &ts[c]) == 0;
                if (!ts[c].started) {
                    /* No thread for this CTA: the others may wait for it forever. */
                    l.nomem = 1;
                    __atomic_store_n(&l.cancel, 2, __ATOMIC_SEQ_CST);
                    break;
                }
            }
            for (uint64_t c = 0; c < ncta; c++)
                if (ts[c].started) pthread_join(ts[c].t, NULL);
            free(ts);
        }
    } else if (k->cta_group) {
        /* Groups of up to 256 CTAs, fewer where the grid would leave fewer than 4 groups per
         * core or the group's warp frames would pass 256 KiB (as the Rust runtime does per
         * pool thread). */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t gsz = ncta / (4 * (uint64_t)(cores > 0 ? cores : 1));
        if (gsz > 256) gsz = 256;
        uint64_t lanes = ((uint64_t)cfg->block[0] + 31) / 32 * 32 * cfg->block[1] * cfg->block[2];
        uint64_t per_cta = (uint64_t)k->frame_size * lanes;
        uint64_t by_frames = per_cta ? ((uint64_t)256 << 10) / per_cta : 256;
        if (by_frames < 1) by_frames = 1;
        if (gsz > by_frames) gsz = by_frames;
        /* A kernel with shared memory runs one CTA at a time, each in a window that ends at
         * an inaccessible page (a group's windows lie side by side), as guarded launches of
         * the Rust runtime do. */
        if (l.total_smem) gsz = 1;
        /* PTXR_CTA_GROUP=n sets the group size (1: no groups), for tests and measurements. */
        const char *env = getenv("PTXR_CTA_GROUP");
        long long n = env ? atoll(env) : 0;
        if (n > 0) gsz = n > 65536 ? 65536 : (uint64_t)n;
        l.group = gsz < 1 ? 1 : gsz;
    }
    if (coop || clustered) {
        /* (run above) */
    } else if (cfg->parallel_for) {
        const uint64_t chunk = (uint64_t)l.group << 31;
        for (l.base = 0; l.base < ncta && !__atomic_load_n(&l.stop, __ATOMIC_RELAXED); l.base += chunk) {
            uint64_t n = ncta - l.base < chunk ? ncta - l.base : chunk;
            cfg->parallel_for(cfg->user, (uint32_t)((n + l.group - 1) / l.group), run_cta, &l);
        }
    } else {
        for (uint64_t c = 0; c < ncta && !l.stop; c += l.group) {
            l.base = c;
            run_cta(&l, 0);
        }
    }
    if (watching) {
        pthread_mutex_lock(&w.mu);
        w.done = 1;
        pthread_cond_signal(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(wt, NULL);
    }
    if (w.l) {
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
    }
    if (l.out_len) {
        fwrite(l.out, 1, l.out_len, stdout);
        fflush(stdout);
    }
    free(l.out);
    free(l.heap);
    check_snapshot_free(&l);
    free(pbuf);
    pthread_mutex_destroy(&l.mu);
    /* A cooperative launch (or a cluster) that could not start a thread for every CTA
     * cancelled the others. */
    if (coop && l.nomem) return error(PTXR_ERR_NOMEM, "kernel `%s`: a cooperative launch could not start a thread for every CTA", k->name);
    if (clustered && l.nomem) return error(PTXR_ERR_NOMEM, "kernel `%s`: a launch with clusters could not start a thread for every CTA, or had no memory for their shared windows", k->name);
    if (l.failed) {
        const CtaCtx *c = &l.fail_ctx;
        uint32_t t = c->status_thread;
        /* A warp-path deadlock names the line where the phase's first warp waits
         * (abi::DEADLOCK_OTHER_LINE) instead of a thread. */
        uint32_t other_line = 0;
        if (c->status == STATUS_DEADLOCK && (t & DEADLOCK_OTHER_LINE)) {
            other_line = t & ~DEADLOCK_OTHER_LINE;
            t = 0;
            if (!l.detail[0]) snprintf(l.detail, sizeof l.detail, "warps wait at line %u and at line %u", other_line, c->status_line);
        }
        uint32_t tx = t % b[0], ty = (t / b[0]) % b[1], tz = t / (b[0] * b[1]);
        char whr[1024];
        snprintf(whr, sizeof whr, "%s:%u: in kernel `%s`, CTA (%u,%u,%u), thread (%u,%u,%u)", k->file, c->status_line, k->name, c->ctaid[0], c->ctaid[1], c->ctaid[2], tx, ty, tz);
        if (c->status == STATUS_TIMEOUT) {
            char list[512] = "";
            size_t n = 0;
            for (int i = 0; i < l.nrunning && i < 8 && n < sizeof list - 40; i++) {
                uint64_t r = l.running[i];
                n += (size_t)snprintf(list + n, sizeof list - n, "%s(%u,%u,%u)", i ? ", " : "", (unsigned)(r % g[0]), (unsigned)((r / g[0]) % g[1]), (unsigned)(r / ((uint64_t)g[0] * g[1])));
            }
            if (l.nrunning > 8) snprintf(list + n, sizeof list - n, " and %d more", l.nrunning - 8);
            char at[256] = "";
            if (c->status_line) snprintf(at, sizeof at, "; CTA (%u,%u,%u), thread (%u,%u,%u) stopped at line %u", c->ctaid[0], c->ctaid[1], c->ctaid[2], tx, ty, tz, c->status_line);
            return error(PTXR_ERR_TIMEOUT, "%s: error: kernel `%s`: launch timed out after %g s (the launch's time limit); CTAs still running: %s%s", k->file, k->name, w.seconds, l.nrunning ? list : "none", at);
        }
        if (c->status == STATUS_CHECK) {
            char col[16] = "";
            if (l.check_col) snprintf(col, sizeof col, ":%u", l.check_col);
            return error(PTXR_ERR_CHECK, "%s:%u%s: in kernel `%s`, CTA (%u,%u,%u), thread (%u,%u,%u): error: %s", k->file, c->status_line, col, k->name, c->ctaid[0], c->ctaid[1], c->ctaid[2], tx, ty, tz, l.check_msg);
        }
        switch (c->status) {
        case STATUS_TRAP: return error(PTXR_ERR_TRAP, "%s: error: `trap` executed", whr);
        case STATUS_BRKPT: return error(PTXR_ERR_BRKPT, "%s: error: `brkpt` executed (no debugger)", whr);
        case STATUS_ASSERT: return error(PTXR_ERR_ASSERT, "%s: error: device assertion failed: %s", whr, l.assert_msg);
        case STATUS_DEADLOCK: return error(PTXR_ERR_DEADLOCK, "%s: error: deadlock: threads can never all arrive at this synchronization point%s%s%s", whr, l.detail[0] ? " (" : "", l.detail, l.detail[0] ? ")" : "");
        case STATUS_BAD_BARRIER: return error(PTXR_ERR_BARRIER, "%s: error: barrier thread count must be a multiple of 32 and at most the CTA size (PTX ISA 9.7.12.1)", whr);
        case STATUS_SYNC_INDIRECT: return error(PTXR_ERR_LAUNCH, "%s: error: a function that synchronizes was called through a function pointer; ptxr runs such functions only when they are called directly (it inlines them into the kernel)", whr);
        case STATUS_CTA_PAIR: return error(PTXR_ERR_LAUNCH, "%s: error: tcgen05 with .cta_group::2: the CTA's pair (ranks 2k and 2k + 1 of its cluster) is not whole (launch with clusters of an even number of CTAs), or the pair's MMA has an M other than 128 or 256 in its instruction descriptor (or M = 128 with A in tensor memory or block scaling, which ptxr does not run yet)", whr);
        case STATUS_WARP_APART: return error(PTXR_ERR_DEADLOCK, "%s: error: a `.sync` warp collective whose membermask names a lane that is not at this instruction: on the warp path the lanes that reach an instruction together run it, so lanes that wait for others (a mask naming lanes that went elsewhere, which only a collective at another instruction could complete on sm_70 and up) stop here; `--exec thread` runs such meetings (a mask naming only the lanes that take this path runs on either)", whr);
        case STATUS_PARTIAL_WARP: return error(PTXR_ERR_LAUNCH, "%s: error: this warp-wide matrix instruction needs all 32 threads of the warp, but the block leaves this warp partial", whr);
        case STATUS_BAD_ADDRESS: return error(PTXR_ERR_LAUNCH, "%s: error: an address outside the CTA's shared memory (a wgmma matrix descriptor, or the shared-memory side of a bulk copy)", whr);
        case STATUS_BAD_TENSOR_MAP: return error(PTXR_ERR_LAUNCH, "%s: error: cp.async.bulk.tensor: the tensor map is not one that ptxr encoded, or not of the copy's rank or mode (tiled for .tile, .tile::gather4 and .tile::scatter4, im2col for .im2col; make it with ptxr_tensor_map_encode_tiled or _im2col, or `tmap:` for ptxr run)", whr);
        case STATUS_BAD_TENSOR_COPY: return error(PTXR_ERR_LAUNCH, "%s: error: cp.async.bulk.tensor: the box's innermost coordinate times the element size is not a multiple of 16 bytes, a store's coordinates are negative, a .tile::gather4/.tile::scatter4 map's box is more than one row, or a packed sub-byte copy the map's type does not allow (an innermost coordinate that is not a whole number of 2- or 16-element units, a store of b4x16_p64, a mode other than .tile) (an NVIDIA GPU stops with an illegal instruction)", whr);
        default: return error(PTXR_ERR_LAUNCH, "%s: error: launch failed (status %u)", whr, c->status);
        }
    }
    if (l.nomem) return error(PTXR_ERR_NOMEM, "kernel `%s`: out of memory for a CTA's shared memory or thread frames", k->name);
    return run_children(k, cfg, &l);
}
