#!/usr/bin/env bash
# The main job on a fresh machine: set up, build, compile examples/saxpy.ptx and run it on
# this CPU over 1M elements, then check y = a*x + y against a reference computed here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
source scripts/env.sh
cargo build --release --quiet
ptxr=target/release/ptxr
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=1048576
python3 - "$tmp" "$n" <<'PY'
import struct, sys
d, n = sys.argv[1], int(sys.argv[2])
open(f"{d}/x.bin", "wb").write(struct.pack(f"<{n}f", *[float(i % 1000) * 0.5 for i in range(n)]))
open(f"{d}/y.bin", "wb").write(struct.pack(f"<{n}f", *[float(i % 7) for i in range(n)]))
PY
$ptxr check examples/saxpy.ptx
echo "ptxr run examples/saxpy.ptx --kernel saxpy --grid $((n / 256)) --block 256 (n = $n)"
$ptxr run examples/saxpy.ptx --kernel saxpy --grid $((n / 256)) --block 256 \
  --arg buf:file:$tmp/x.bin --arg buf:file:$tmp/y.bin --arg f32:2.0 --arg s32:$n --dump 1=$tmp/out.bin
python3 - "$tmp" "$n" <<'PY'
import struct, sys
d, n = sys.argv[1], int(sys.argv[2])
out = struct.unpack(f"<{n}f", open(f"{d}/out.bin", "rb").read())
bad = [i for i in range(n) if out[i] != 2.0 * (float(i % 1000) * 0.5) + float(i % 7)]
print(f"saxpy on the CPU: {n - len(bad)}/{n} elements correct; y[0..4] = {out[:4]}")
sys.exit(1 if bad else 0)
PY
