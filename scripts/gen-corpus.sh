#!/usr/bin/env bash
# Regenerate the committed PTX test corpus from the CUDA sources.
#
# For every tests/cuda/<name>.cu this writes
#   tests/corpus/<name>.nvrtc.ptx  - NVRTC 12.9, --gpu-architecture=compute_70 (PTX ISA 8.8)
#   tests/corpus/<name>.clang.ptx  - clang-19, sm_70, PTX ISA 6.4, -O3, no CUDA SDK/libdevice
# and checks every produced file with `ptxas -arch=sm_70`. Tests only read tests/corpus/; they
# never need these generators. Idempotent: reruns overwrite the outputs with identical text.
# Usage: scripts/gen-corpus.sh [name...]   (default: all tests/cuda/*.cu)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

venv="$root/.venv"
if [ ! -x "$venv/bin/python" ] || ! command -v clang-19 >/dev/null 2>&1 \
   || ! "$venv/bin/python" -c 'import nvidia.cuda_nvcc, nvidia.cuda_nvrtc' 2>/dev/null; then
  "$root/scripts/setup.sh"
fi
py="$venv/bin/python"
ptxas="$("$py" -c 'import nvidia.cuda_nvcc as m, os; print(os.path.join(list(m.__path__)[0], "bin", "ptxas"))')"
[ -x "$ptxas" ] || { echo "gen-corpus: ptxas not found at $ptxas" >&2; exit 1; }

src_dir=tests/cuda
out_dir=tests/corpus
mkdir -p "$out_dir"

if [ $# -gt 0 ]; then
  srcs=(); for n in "$@"; do srcs+=("$src_dir/${n%.cu}.cu"); done
else
  srcs=("$src_dir"/*.cu)
fi
[ -e "${srcs[0]}" ] || { echo "gen-corpus: no sources in $src_dir" >&2; exit 1; }

clang_flags=(-x cuda --cuda-device-only -S --cuda-gpu-arch=sm_70 --cuda-feature=+ptx64
             -nocudainc -nocudalib -O3 -std=c++17 -Wall -Werror)
nvrtc_flags=(--gpu-architecture=compute_70 -std=c++17)

fail=0
for src in "${srcs[@]}"; do
  name="$(basename "$src" .cu)"
  for gen in nvrtc clang; do
    out="$out_dir/$name.$gen.ptx"
    tmp="$out.tmp"
    if [ "$gen" = nvrtc ]; then
      cmd=("$py" scripts/nvrtc_compile.py "$src" "$tmp" "${nvrtc_flags[@]}")
    else
      cmd=(clang-19 "${clang_flags[@]}" -o "$tmp" "$src")
    fi
    if ! "${cmd[@]}"; then
      echo "gen-corpus: FAILED ($gen): ${cmd[*]}" >&2; rm -f "$tmp"; fail=1; continue
    fi
    if ! "$ptxas" -arch=sm_70 "$tmp" -o /dev/null; then
      echo "gen-corpus: ptxas rejected $gen output for $src" >&2; rm -f "$tmp"; fail=1; continue
    fi
    mv -f "$tmp" "$out"
    echo "gen-corpus: $out ($(grep -m1 '^\.version' "$out"))"
  done
done
if [ "$fail" -ne 0 ]; then echo "gen-corpus: some outputs failed (see above)" >&2; exit 1; fi
