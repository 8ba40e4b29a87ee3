// More compiler-generated PTX for the GPU oracle (tests/filetests/ref/cuda_oracle.py): structs
// passed by value, local arrays with dynamic indexing, recursion through a non-inlined
// function, dynamic shared memory, integer intrinsics, SIMD video instructions (inline asm), atomics whose final
// values do not depend on the order, read-only loads, a switch.

struct Params {
  int n;
  float scale;
  double offset;
  int shift;
  unsigned mask;
};

// A struct by value (.param .align 8 .b8 p[32]) and a local array indexed by data.
extern "C" __global__ void struct_local(Params p, const int *in, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  int hist[16];
  for (int k = 0; k < 16; k++) hist[k] = k * p.shift;
  int v = in[i];
  for (int k = 0; k < 8; k++) hist[(v >> (2 * k)) & 15] += k + 1;
  int acc = 0;
  for (int k = 0; k < 16; k++) acc = acc * 31 + hist[k];
  out[3 * i + 0] = acc & (int)p.mask;
  out[3 * i + 1] = __float_as_int((float)v * p.scale);
  out[3 * i + 2] = (int)((double)v * 0.5 + p.offset);
}

// Recursion the compiler cannot inline: calls through the PTX call stack.
__device__ __noinline__ unsigned ackermann_small(unsigned m, unsigned n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann_small(m - 1, 1);
  return ackermann_small(m - 1, ackermann_small(m, n - 1));
}
__device__ __noinline__ int gcd_rec(int a, int b) { return b == 0 ? a : gcd_rec(b, a % b); }

extern "C" __global__ void recursion(const int *in, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  out[2 * i] = ackermann_small((unsigned)(v & 1) + 1, (unsigned)(v >> 1) & 3);
  out[2 * i + 1] = gcd_rec(abs(v) + 1, (abs(v) % 97) + 12);
}

// Dynamic shared memory (extern __shared__): reverse each block's segment.
extern "C" __global__ void dyn_reverse(const int *in, int *out) {
  extern __shared__ int buf[];
  int t = threadIdx.x, b = blockIdx.x * blockDim.x;
  buf[t] = in[b + t];
  __syncthreads();
  out[b + t] = buf[blockDim.x - 1 - t];
}

// Integer intrinsics: byte_perm, funnel shifts, mulhi, sad, mul24, brev, clz, ffs, popc,
// SIMD video (vabsdiff4, vadd2, vmaxu4), dp4a.
extern "C" __global__ void int_intrinsics(const unsigned *a, const unsigned *b, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = __ldg(&a[i]), y = __ldg(&b[i]);
  unsigned *o = out + 14 * i;
  o[0] = __byte_perm(x, y, y & 0xffff);
  o[1] = __funnelshift_l(x, y, y & 63);
  o[2] = __funnelshift_rc(x, y, y & 63);
  o[3] = __umulhi(x, y);
  o[4] = (unsigned)__mulhi((int)x, (int)y);
  o[5] = __usad(x, y, x ^ y);
  o[6] = (unsigned)__mul24((int)x, (int)y);
  o[7] = __brev(x) ^ (unsigned)__clz((int)y) ^ ((unsigned)__ffs((int)x) << 8) ^ ((unsigned)__popc(y) << 16);
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(o[8]) : "r"(x), "r"(y), "r"(x >> 3));
  asm("vadd2.u32.u32.u32.sat %0, %1, %2, %3;" : "=r"(o[9]) : "r"(x), "r"(y), "r"(0u));
  asm("vmax4.s32.s32.s32 %0, %1, %2, %3;" : "=r"(o[10]) : "r"(x), "r"(y), "r"(0u));
  o[11] = (unsigned)__dp4a((int)x, (int)y, 7);
  o[12] = (unsigned)__dp2a_lo((int)x, (int)y, 3);
  o[13] = (unsigned)(((unsigned long long)x * y) % 1000003ull);
}

// Atomics with order-independent final values: inc/dec with wrap, min/max, or/and/xor, and
// exact double additions (small integers).
extern "C" __global__ void atomics_final(const int *in, unsigned *u, int *s, double *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  atomicInc(&u[0], 37u);
  atomicDec(&u[1], 23u);
  atomicMax(&s[0], v);
  atomicMin(&s[1], v);
  atomicOr(&u[2], 1u << (v & 31));
  atomicAnd(&u[3], ~(1u << ((v >> 5) & 31)));
  atomicXor(&u[4], (unsigned)v);
  atomicAdd(&d[0], (double)(v % 1000));
  atomicMax(&u[5], (unsigned)v);
}

// A switch over many cases (possibly a jump table) in a loop.
extern "C" __global__ void switchy(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i], acc = 0;
  for (int k = 0; k < 6; k++) {
    switch ((v >> (3 * k)) & 7) {
      case 0: acc += 3; break;
      case 1: acc ^= 0x55; break;
      case 2: acc *= 3; break;
      case 3: acc -= k; break;
      case 4: acc = acc << 1 | 1; break;
      case 5: acc = ~acc; break;
      case 6: acc += v; break;
      default: acc >>= 1; break;
    }
  }
  out[i] = acc;
}
