/* Runs PTX kernels compiled ahead of time by ptxr through the C ABI (docs/abi.md) and checks
 * their results against plain C. Exit status 0 when everything matches. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxr_errors.h"
#include "ptxr_reduce_shared.h"
#include "ptxr_saxpy.h"
#include "ptxr_warp_reduce.h"

static int failures = 0;
#define CHECK(cond, ...)                                 \
    do {                                                 \
        if (!(cond)) {                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                \
            fprintf(stderr, "\n");                       \
            failures++;                                  \
        }                                                \
    } while (0)

/* A parallel_for hook on pthreads: NTHREADS workers take CTA indices from a shared counter. */
#define NTHREADS 4
typedef struct {
    uint32_t n;
    ptxr_body_fn body;
    void *body_ctx;
    uint32_t next;
} pool_job;

static void *worker(void *p) {
    pool_job *j = (pool_job *)p;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) return NULL;
        j->body(j->body_ctx, i);
    }
}

static void pthread_parallel_for(void *user, uint32_t n, ptxr_body_fn body, void *body_ctx) {
    (void)user;
    pool_job j = {n, body, body_ctx, 0};
    pthread_t t[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) pthread_create(&t[k], NULL, worker, &j);
    for (int k = 0; k < NTHREADS; k++) pthread_join(t[k], NULL);
}

static ptxr_launch_config config(uint32_t grid, uint32_t block, int parallel) {
    ptxr_launch_config c;
    memset(&c, 0, sizeof c);
    c.grid[0] = grid;
    c.grid[1] = c.grid[2] = 1;
    c.block[0] = block;
    c.block[1] = c.block[2] = 1;
    c.shared_bytes = 0;
    c.parallel_for = parallel ? pthread_parallel_for : NULL;
    c.user = NULL;
    return c;
}

static void test_saxpy(int parallel) {
    int n = 100003;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *ref = malloc(n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        x[i] = (float)i * 0.5f - 7.0f;
        y[i] = 1.0f / (float)(i + 1);
        ref[i] = fmaf(2.5f, x[i], y[i]); /* the PTX is fma.rn.f32 */
    }
    float a = 2.5f;
    /* args[i] points to parameter i: pointers are passed as the address of a pointer. */
    void *args[] = {&x, &y, &a, &n};
    ptxr_launch_config cfg = config((n + 255) / 256, 256, parallel);
    int rc = ptxr_launch_saxpy(&cfg, args);
    CHECK(rc == PTXR_OK, "saxpy: %d %s", rc, ptxr_last_error());
    int bad = 0;
    for (int i = 0; i < n; i++) bad += memcmp(&y[i], &ref[i], 4) != 0;
    CHECK(bad == 0, "saxpy: %d mismatches", bad);
    free(x), free(y), free(ref);
}

static void test_warp_reduce(int parallel) {
    int n = 5000; /* not a multiple of 32: the last warp is partial */
    int warps = (n + 31) / 32;
    float *in = malloc(n * sizeof *in), *out = calloc(warps, sizeof *out);
    for (int i = 0; i < n; i++) in[i] = (float)((i * 7) % 13) - 6.0f; /* exact sums */
    void *args[] = {&in, &out, &n};
    ptxr_launch_config cfg = config((n + 127) / 128, 128, parallel);
    int rc = ptxr_launch_warp_reduce_down(&cfg, args);
    CHECK(rc == PTXR_OK, "warp_reduce_down: %d %s", rc, ptxr_last_error());
    for (int w = 0; w < warps; w++) {
        float s = 0;
        for (int i = 32 * w; i < 32 * w + 32 && i < n; i++) s += in[i];
        CHECK(out[w] == s, "warp_reduce_down: out[%d] = %g, expected %g", w, out[w], s);
    }
    /* Butterfly all-reduce with shfl.bfly (sum and max). */
    int *iv = malloc(n * sizeof *iv), *sum = calloc(n, sizeof *sum), *mx = calloc(n, sizeof *mx);
    for (int i = 0; i < n; i++) iv[i] = (i * 2654435761u) % 1000 - 500;
    void *args2[] = {&iv, &sum, &mx, &n};
    rc = ptxr_launch_warp_allreduce_xor(&cfg, args2);
    CHECK(rc == PTXR_OK, "warp_allreduce_xor: %d %s", rc, ptxr_last_error());
    for (int i = 0; i < n; i++) {
        int s = 0, m = INT32_MIN;
        for (int j = i & ~31; j < (i & ~31) + 32 && j < n; j++) {
            s += iv[j];
            m = iv[j] > m ? iv[j] : m;
        }
        if (sum[i] != s || mx[i] != m) {
            CHECK(0, "warp_allreduce_xor: i=%d got (%d,%d), expected (%d,%d)", i, sum[i], mx[i], s, m);
            break;
        }
    }
    free(in), free(out), free(iv), free(sum), free(mx);
}

static void test_reduce_shared(int parallel) {
    int n = 70000, block = 256;
    int blocks = (n + 2 * block - 1) / (2 * block);
    float *in = malloc(n * sizeof *in), *sums = calloc(blocks, sizeof *sums);
    for (int i = 0; i < n; i++) in[i] = (float)(i % 17);
    void *args[] = {&in, &sums, &n};
    ptxr_launch_config cfg = config(blocks, block, parallel);
    int rc = ptxr_launch_reduce_sum(&cfg, args);
    CHECK(rc == PTXR_OK, "reduce_sum: %d %s", rc, ptxr_last_error());
    for (int b = 0; b < blocks; b++) {
        float s = 0;
        for (int i = 2 * block * b; i < 2 * block * (b + 1) && i < n; i++) s += in[i];
        CHECK(sums[b] == s, "reduce_sum: block %d = %g, expected %g", b, sums[b], s);
    }
    /* Integer reduction with one atomicAdd per block. */
    int *iv = malloc(n * sizeof *iv), total = 0;
    long long ref = 0;
    for (int i = 0; i < n; i++) ref += iv[i] = i % 101 - 50;
    void *args2[] = {&iv, &(int *){&total}, &n};
    ptxr_launch_config cfg2 = config(37, 128, parallel);
    rc = ptxr_launch_reduce_sum_atomic(&cfg2, args2);
    CHECK(rc == PTXR_OK, "reduce_sum_atomic: %d %s", rc, ptxr_last_error());
    CHECK(total == ref, "reduce_sum_atomic: %d, expected %lld", total, ref);
    free(in), free(sums), free(iv);
}

static void test_errors(int parallel) {
    /* Launch limits. */
    ptxr_launch_config cfg = config(1, 2048, parallel);
    uint32_t victim = 5;
    void *args[] = {&victim};
    int rc = ptxr_launch_trap_at(&cfg, args);
    CHECK(rc == PTXR_ERR_CONFIG && strstr(ptxr_last_error(), "exceeds the limits"), "limits: %d %s", rc, ptxr_last_error());
    /* trap in CTA 0, thread 5. */
    cfg = config(8, 64, parallel);
    rc = ptxr_launch_trap_at(&cfg, args);
    CHECK(rc == PTXR_ERR_TRAP && strstr(ptxr_last_error(), "errors.ptx:19: in kernel `trap_at`, CTA (0,0,0), thread (5,0,0): error: `trap` executed"), "trap: %d %s", rc, ptxr_last_error());
    /* A barrier that can never complete. */
    cfg = config(2, 64, parallel);
    rc = ptxr_launch_split_barrier(&cfg, NULL);
    CHECK(rc == PTXR_ERR_DEADLOCK && strstr(ptxr_last_error(), "in kernel `split_barrier`, CTA (0,0,0)") &&
              strstr(ptxr_last_error(), "error: deadlock: threads can never all arrive at this synchronization point (waiting at line 32: 32 threads, line 35: 32 threads; 0 exited)"),
          "deadlock: %d %s", rc, ptxr_last_error());
    /* Success clears the message. */
    cfg = config(8, 64, parallel);
    victim = 1000;
    rc = ptxr_launch_trap_at(&cfg, args);
    CHECK(rc == PTXR_OK && ptxr_last_error()[0] == 0, "no trap: %d %s", rc, ptxr_last_error());
}

int main(void) {
    for (int parallel = 0; parallel < 2; parallel++) {
        test_saxpy(parallel);
        test_warp_reduce(parallel);
        test_reduce_shared(parallel);
        test_errors(parallel);
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("c example: all kernels match the references (serial and with a parallel_for hook)\n");
    return 0;
}
