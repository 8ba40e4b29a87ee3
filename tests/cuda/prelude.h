// Shared prelude for the ptxr CUDA test corpus.
//
// Every tests/cuda/*.cu includes this file first. It lets the same source compile with
//   * NVRTC 12.9 (which predefines __CUDACC_RTC__ and has the CUDA device API built in), and
//   * clang-19 with -nocudainc -nocudalib (no CUDA SDK, no libdevice), where everything nvcc's
//     headers normally provide is defined here on top of clang's __nvvm_* builtins.
// It also defines a tiny f16 API (half_t / half2_t, hadd, hmul, hfma, ...) because NVRTC 12.9
// does not bundle cuda_fp16.h and there is no CUDA SDK here: NVRTC gets inline PTX asm on raw
// 16/32-bit integers, clang gets native _Float16 arithmetic. Both have the same memory layout
// (IEEE binary16, half2 = two halves packed low/high in 32 bits).
#pragma once

#if !defined(__CUDACC_RTC__)
// ---------------------------------------------------------------- clang-19, no CUDA SDK
#if !defined(__clang__) || !defined(__CUDA__)
#error "prelude.h: expected NVRTC or clang in CUDA mode"
#endif

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))

#include <__clang_cuda_builtin_vars.h>  // threadIdx, blockIdx, blockDim, gridDim, warpSize

typedef __SIZE_TYPE__ size_t;

#define __PD static __device__ __forceinline__

// --- barriers and fences (__syncthreads is itself a clang NVPTX builtin)
__PD void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
__PD int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
__PD int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
__PD int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
__PD void __threadfence() { __nvvm_membar_gl(); }
__PD void __threadfence_block() { __nvvm_membar_cta(); }

// --- warp shuffles (c = clamp/segment control as in clang's own __clang_cuda_intrinsics.h)
#define __PTXR_SHFL(NAME, II, FI, CLAMP, OT)                                               \
  __PD int NAME(unsigned m, int v, OT o, int w = 32) {                                     \
    return II(m, v, o, ((32 - w) << 8) | (CLAMP));                                         \
  }                                                                                        \
  __PD unsigned NAME(unsigned m, unsigned v, OT o, int w = 32) {                           \
    return (unsigned)II(m, (int)v, o, ((32 - w) << 8) | (CLAMP));                          \
  }                                                                                        \
  __PD float NAME(unsigned m, float v, OT o, int w = 32) {                                 \
    return FI(m, v, o, ((32 - w) << 8) | (CLAMP));                                         \
  }                                                                                        \
  __PD double NAME(unsigned m, double v, OT o, int w = 32) {                               \
    long long x = __builtin_bit_cast(long long, v);                                        \
    int lo = II(m, (int)x, o, ((32 - w) << 8) | (CLAMP));                                  \
    int hi = II(m, (int)(x >> 32), o, ((32 - w) << 8) | (CLAMP));                          \
    return __builtin_bit_cast(double, ((long long)hi << 32) | (unsigned)lo);               \
  }
__PTXR_SHFL(__shfl_sync, __nvvm_shfl_sync_idx_i32, __nvvm_shfl_sync_idx_f32, 0x1f, int)
__PTXR_SHFL(__shfl_up_sync, __nvvm_shfl_sync_up_i32, __nvvm_shfl_sync_up_f32, 0, unsigned)
__PTXR_SHFL(__shfl_down_sync, __nvvm_shfl_sync_down_i32, __nvvm_shfl_sync_down_f32, 0x1f,
            unsigned)
__PTXR_SHFL(__shfl_xor_sync, __nvvm_shfl_sync_bfly_i32, __nvvm_shfl_sync_bfly_f32, 0x1f, int)
#undef __PTXR_SHFL

// --- warp vote / match
__PD unsigned __ballot_sync(unsigned m, int p) { return __nvvm_vote_ballot_sync(m, p); }
__PD int __all_sync(unsigned m, int p) { return __nvvm_vote_all_sync(m, p); }
__PD int __any_sync(unsigned m, int p) { return __nvvm_vote_any_sync(m, p); }
__PD unsigned __match_any_sync(unsigned m, int v) { return __nvvm_match_any_sync_i32(m, v); }
__PD unsigned __match_any_sync(unsigned m, unsigned v) {
  return __nvvm_match_any_sync_i32(m, (int)v);
}
__PD unsigned __activemask() {
  unsigned r;
  asm volatile("activemask.b32 %0;" : "=r"(r));
  return r;
}

// --- atomics (generic address space; LLVM narrows to .shared/.global where it can)
__PD int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__PD unsigned atomicAdd(unsigned *p, unsigned v) {
  return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v);
}
__PD unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
  return (unsigned long long)__nvvm_atom_add_gen_ll((long long *)p, (long long)v);
}
__PD float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
__PD double atomicAdd(double *p, double v) { return __nvvm_atom_add_gen_d(p, v); }
__PD int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
__PD int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
__PD int atomicCAS(int *p, int c, int v) { return __nvvm_atom_cas_gen_i(p, c, v); }
__PD int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
__PD unsigned long long atomicCAS(unsigned long long *p, unsigned long long c,
                                  unsigned long long v) {
  return (unsigned long long)__nvvm_atom_cas_gen_ll((long long *)p, (long long)c, (long long)v);
}

// --- integer intrinsics
// (clang's __nvvm_* set has no popc/clz/brev: those are libdevice __nv_* functions; the
// generic builtins lower to popc.b32 / clz.b32 / brev.b32.)
__PD int __popc(unsigned x) { return __builtin_popcount(x); }
__PD int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__PD int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
__PD int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
__PD int __ffs(int x) { return __builtin_ffs(x); }
__PD unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
__PD unsigned __byte_perm(unsigned a, unsigned b, unsigned s) {
  return (unsigned)__nvvm_prmt((int)a, (int)b, (int)s);
}
__PD unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  unsigned r;
  asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
  return r;
}
__PD unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  unsigned r;
  asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
  return r;
}
__PD unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)__nvvm_mulhi_ui(a, b); }
__PD int __mulhi(int a, int b) { return __nvvm_mulhi_i(a, b); }
__PD unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return __nvvm_mulhi_ull(a, b);
}
__PD int min(int a, int b) { return a < b ? a : b; }
__PD int max(int a, int b) { return a > b ? a : b; }

// --- float math (no libdevice: map straight onto PTX instructions)
__PD float sqrtf(float x) { return __nvvm_sqrt_rn_f(x); }
__PD float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
__PD float fabsf(float x) { return __nvvm_fabs_f(x); }
__PD float fminf(float a, float b) { return __nvvm_fmin_f(a, b); }
__PD float fmaxf(float a, float b) { return __nvvm_fmax_f(a, b); }
__PD float fmaf(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__PD float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
__PD float __sinf(float x) { return __nvvm_sin_approx_f(x); }
__PD float __cosf(float x) { return __nvvm_cos_approx_f(x); }
__PD float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
__PD int __float2int_rn(float x) { return __nvvm_f2i_rn(x); }
__PD int __float2int_rz(float x) { return __nvvm_f2i_rz(x); }
__PD int __float2int_rd(float x) { return __nvvm_f2i_rm(x); }
__PD int __float2int_ru(float x) { return __nvvm_f2i_rp(x); }
__PD unsigned __float2uint_rn(float x) { return __nvvm_f2ui_rn(x); }
__PD float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }
__PD float __int2float_rz(int x) { return __nvvm_i2f_rz(x); }
__PD float __uint2float_rn(unsigned x) { return __nvvm_ui2f_rn(x); }
__PD int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__PD float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__PD long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__PD double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__PD double sqrt(double x) { return __nvvm_sqrt_rn_d(x); }
__PD double fabs(double x) { return __nvvm_fabs_d(x); }
__PD double fma(double a, double b, double c) { return __nvvm_fma_rn_d(a, b, c); }
__PD int __double2int_rn(double x) { return __nvvm_d2i_rn(x); }

// --- f16 (native _Float16 in clang)
typedef _Float16 half_t;
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
__PD half_t f2h(float f) { return (half_t)f; }
__PD float h2f(half_t h) { return (float)h; }
__PD half_t hadd(half_t a, half_t b) { return a + b; }
__PD half_t hsub(half_t a, half_t b) { return a - b; }
__PD half_t hmul(half_t a, half_t b) { return a * b; }
__PD half_t hfma(half_t a, half_t b, half_t c) { return __builtin_fmaf16(a, b, c); }
__PD half_t hmax(half_t a, half_t b) { return a > b ? a : b; }
__PD half2_t h2make(half_t lo, half_t hi) { return half2_t{lo, hi}; }
__PD half_t h2lo(half2_t v) { return v.x; }
__PD half_t h2hi(half2_t v) { return v.y; }
__PD half2_t hadd2(half2_t a, half2_t b) { return a + b; }
__PD half2_t hmul2(half2_t a, half2_t b) { return a * b; }
__PD half2_t hfma2(half2_t a, half2_t b, half2_t c) {
  return __builtin_elementwise_fma(a, b, c);
}
#undef __PD

#else
// ---------------------------------------------------------------- NVRTC
// The CUDA device API (threadIdx, __syncthreads, __shfl_*_sync, atomics, math, ...) is built in.
// Only the f16 helpers are needed; implemented with inline PTX on raw bit patterns.
#define __PD static __device__ __forceinline__
typedef unsigned short half_t;
typedef unsigned int half2_t;
__PD half_t f2h(float f) {
  half_t r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}
__PD float h2f(half_t h) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
  return r;
}
__PD half_t hadd(half_t a, half_t b) {
  half_t r;
  asm("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
}
__PD half_t hsub(half_t a, half_t b) {
  half_t r;
  asm("sub.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
}
__PD half_t hmul(half_t a, half_t b) {
  half_t r;
  asm("mul.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
}
__PD half_t hfma(half_t a, half_t b, half_t c) {
  half_t r;
  asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(a), "h"(b), "h"(c));
  return r;
}
__PD half_t hmax(half_t a, half_t b) { return h2f(a) > h2f(b) ? a : b; }
__PD half2_t h2make(half_t lo, half_t hi) { return (unsigned)lo | ((unsigned)hi << 16); }
__PD half_t h2lo(half2_t v) { return (half_t)(v & 0xffffu); }
__PD half_t h2hi(half2_t v) { return (half_t)(v >> 16); }
__PD half2_t hadd2(half2_t a, half2_t b) {
  half2_t r;
  asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__PD half2_t hmul2(half2_t a, half2_t b) {
  half2_t r;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__PD half2_t hfma2(half2_t a, half2_t b, half2_t c) {
  half2_t r;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
#undef __PD
#endif
