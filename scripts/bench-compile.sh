#!/usr/bin/env bash
# Compile-time benchmark: PTX -> object at -O3 with ptxr (both execution paths: --exec auto,
# the default, and --exec thread) against ptxas -O3 on the same files, same run (ptxas for the
# file's own .target: sm_70 for the NVRTC corpus, sm_80 for benches/mma64.nvrtc.ptx).
# Prints seconds per file (best of 3; the per-thread path once), the ptxr/ptxas ratios, the
# totals for NVRTC's PTX and for the mma-heavy kernel, and the optimized LLVM IR lines per PTX line.
# Usage: scripts/bench-compile.sh [FILE.ptx...]   (default: the NVRTC corpus and benches/*.nvrtc.ptx)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/env.sh
cargo build --release --quiet
[ -n "${PTXAS:-}" ] || { echo "ptxas not found: run scripts/setup.sh" >&2; exit 1; }
if [ $# -eq 0 ]; then set -- tests/corpus/*.nvrtc.ptx benches/*.nvrtc.ptx; fi
python3 - "$PTXAS" "$@" <<'PY'
import os, subprocess, sys, tempfile, time
ptxas, files = sys.argv[1], sys.argv[2:]
ptxr = "target/release/ptxr"
tmp = tempfile.mkdtemp()
def timed(cmd, reps=3):
    # Best of `reps` wall-clock runs (both compilers vary by 10-30% from run to run here).
    best, ok = None, True
    for _ in range(reps):
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        ok = ok and r.returncode == 0
        best = dt if best is None else min(best, dt)
    return best, ok
def ir_lines(f, mode):
    out = os.path.join(tmp, "k.ll")
    ok = subprocess.run([ptxr, "compile", f, "-O3", "--emit", "llvm-ir", "--exec", mode, "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    return sum(1 for _ in open(out)) if ok else 0
print(f"{'file':34} {'lines':>6} {'ptxas s':>8} {'auto s':>8} {'thread s':>8} {'auto/ptxas':>10} {'thread/ptxas':>12} {'IR/line auto':>12} {'thread':>7}")
tot = [0.0, 0.0, 0.0]
by = {}
for f in files:
    n = sum(1 for _ in open(f))
    arch = next((l.split()[1].rstrip(",") for l in open(f) if l.startswith(".target")), "sm_70")
    p, pok = timed([ptxas, "-O3", f"-arch={arch}", f, "-o", os.path.join(tmp, "k.cubin")])
    a, aok = timed([ptxr, "compile", f, "-O3", "--emit", "obj", "--no-c-abi", "--exec", "auto", "-o", os.path.join(tmp, "a.o")])
    t, tok = timed([ptxr, "compile", f, "-O3", "--emit", "obj", "--no-c-abi", "--exec", "thread", "-o", os.path.join(tmp, "t.o")], 1)
    flag = "" if pok and aok and tok else "  (a compile failed)"
    print(f"{os.path.basename(f):34} {n:6d} {p:8.3f} {a:8.3f} {t:8.3f} {a/p:9.1f}x {t/p:11.1f}x {ir_lines(f, 'auto')/n:12.1f} {ir_lines(f, 'thread')/n:7.1f}{flag}")
    tot[0] += p; tot[1] += a; tot[2] += t
    group = "mma" if "mma64" in f else "nvrtc"
    by.setdefault(group, [0.0, 0.0])
    by[group][0] += p; by[group][1] += a
print(f"total: ptxas {tot[0]:.2f} s, ptxr --exec auto {tot[1]:.2f} s ({tot[1]/tot[0]:.1f}x), --exec thread {tot[2]:.2f} s ({tot[2]/tot[0]:.1f}x)")
for g, name in [("nvrtc", "NVRTC PTX (all files but mma64)"), ("mma", "mma-heavy (benches/mma64.nvrtc.ptx)")]:
    if g in by:
        print(f"{name}: ptxas {by[g][0]:.3f} s, ptxr {by[g][1]:.3f} s: {by[g][1]/by[g][0]:.1f}x")
PY
