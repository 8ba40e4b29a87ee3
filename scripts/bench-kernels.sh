#!/usr/bin/env bash
# Kernel benchmark: ptxr-compiled corpus kernels vs. native C (gcc -O3 -march=native -fopenmp)
# of the same algorithms, side by side in one run, on all cores. Prints time and ptxr/C ratio.
# SGEMM_N: the tiled sgemm's matrix size (a multiple of 16; default 1024).
# BENCH_GEN=clang: the kernels as clang-19 compiled them (default nvrtc: NVRTC 12.9).
# Usage: [ROUNDS=n] [BENCH_N=elements] [SGEMM_N=size] scripts/bench-kernels.sh [REPS] [saxpy,reduce,scan,sgemm,histogram,stencil,saxpy_grid,matmul_naive,softmax,mandelbrot]
#        scripts/bench-kernels.sh [REPS] paths   (the corpus's barrier and CAS-loop kernels on each path; times only)
#        scripts/bench-kernels.sh [REPS] overhead   (2^18 CTAs of kernels that do nothing, 0-2 barriers: cost per CTA)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/env.sh
reps=${1:-3}
only=${2:-saxpy,reduce,scan,sgemm,histogram,stencil,saxpy_grid,matmul_naive,softmax,mandelbrot}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Both programs allocate their buffers with malloc; a fixed mmap threshold keeps glibc from
# raising it after a large free (its default), which would place the next kernel's buffers
# on the heap at other offsets within a page than the C side's (a tiled sgemm after the
# reduction ran 3x slower for that alone: 4K aliasing with the warp's lane arrays).
export MALLOC_MMAP_THRESHOLD_=131072
gcc -O3 -march=native -fopenmp benches/c/baselines.c -o "$tmp/baselines" -lm
cargo build --release --quiet --bench kernels
bench=$(ls -t target/release/deps/kernels-* | grep -v '\.d$' | head -1)
# ROUNDS (default 2) alternates the two programs that many times and keeps each kernel's best
# time over all rounds: a VM's noise comes and goes over seconds (the C side's times moved by
# up to 1.5x between runs), and one round of each could catch only one side in a slow spell.
rounds=${ROUNDS:-2}
for r in $(seq "$rounds"); do
  "$tmp/baselines" "$reps" >> "$tmp/c.txt"
  "$bench" "$reps" "$only" >> "$tmp/ptxr.txt"
done
python3 - "$tmp/c.txt" "$tmp/ptxr.txt" <<'PY'
import os, sys
def best(path):
    out = {}
    for l in open(path):
        k, t = l.split()
        out[k] = min(float(t), float(out.get(k, t)))
    return out
c, p = best(sys.argv[1]), best(sys.argv[2])
# BENCH_N (both programs read it): the streaming kernels' element count, default 2^26.
n = int(os.environ.get("BENCH_N", 2**26))
work = {"saxpy": ("GB/s", 12 * n), "reduce": ("GB/s", 4 * n), "scan": ("GB/s", 8 * n), "sgemm": ("GFLOP/s", 2 * int(os.environ.get("SGEMM_N", 1024))**3),
        "histogram": ("GB/s", n), "stencil": ("GB/s", 8 * 4096**2),
        "saxpy_grid": ("GB/s", 12 * n), "matmul_naive": ("GFLOP/s", 2 * 512**3), "mandelbrot": ("Mpx/s", 1024 * 1024 * 1e3),
        "softmax": ("GB/s", 16 * 4096 * 1024)}
print(f"{'kernel':10} {'ptxr s':>9} {'C s':>9} {'ptxr':>10} {'C':>10}  ptxr/C")
for k in p:
    base = k.split("/")[0]
    if base not in work:
        print(f"{k:20} {float(p[k]):9.4f}")
        continue
    unit, amount = work[base]
    tp, tc = float(p[k]), float(c[base])
    print(f"{k:10} {tp:9.4f} {tc:9.4f} {amount/tp/1e9:7.2f} {unit:>2} {amount/tc/1e9:7.2f} {unit:>2}  {tp/tc:5.2f}x")
if "saxpy_grid" in p and "saxpy_grid_cta_order" in c:
    tp, tc = float(p["saxpy_grid"]), float(c["saxpy_grid_cta_order"])
    print(f"saxpy_grid against C visiting the elements in the kernel's CTA/warp/grid-stride order "
          f"(baselines.c saxpy_grid_cta_order, {tc:.4f} s): {tp/tc:5.2f}x")
if "histogram" in p and "histogram_cta_order" in c:
    tp, tc = float(p["histogram"]), float(c["histogram_cta_order"])
    print(f"histogram against C visiting the bytes in the kernel's CTA/grid-stride order "
          f"(baselines.c histogram_cta_order, {tc:.4f} s): {tp/tc:5.2f}x")
PY
