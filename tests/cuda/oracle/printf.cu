// printf from device code (vprintf): one thread prints every conversion with flags, widths and
// precisions; the output must be the GPU's, byte for byte (tests/cli.rs compares it with
// printf.expected, the stdout of this kernel on an H100: tests/filetests/ref/printf_gpu.py).
extern "C" __global__ void printf_formats(const int *iv, const double *dv, const char *s) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int a = iv[0], b = iv[1];
  unsigned u = (unsigned)iv[2];
  long long ll = (long long)iv[3] * 1000003LL * 1000003LL;
  double d = dv[0], e = dv[1], z = dv[2];
  float f = (float)dv[3];
  printf("ints: %d %i %5d|%-5d|%05d %+d % d\n", a, b, a, a, a, a, b);
  printf("unsigned: %u %x %X %#x %o %#o %08x\n", u, u, u, u, u, u, u);
  printf("long long: %lld %llu %llx %20lld|\n", ll, (unsigned long long)ll, (unsigned long long)ll, ll);
  printf("floats: %f %.2f %10.3f|%-10.1f|%+.0f %e %.3E %g %G %g\n", d, d, e, e, d, d, e, d, e, z);
  printf("float arg: %f %.9g %a\n", f, f, 1.0);
  printf("chars: %c%c%c %s|%10s|%-6s|%.3s\n", 'p', 't', 'x', s, s, "ab", s);
  printf("percent: 100%% done, %d%%\n", b);
  printf("specials: %f %f %e %g\n", 1.0 / z, -1.0 / z, z / z, -0.0);
  printf("small: %g %g %.10f %e\n", 1e-5, 123456789.0, 1.0 / 3.0, 5e-310);
}

// Several threads print: lines of different threads may come in any order (sorted before
// comparing).
extern "C" __global__ void printf_threads(int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) printf("thread %d of block %d: %d squared is %d, half is %.1f\n", threadIdx.x, blockIdx.x, t, t * t, t * 0.5);
}
