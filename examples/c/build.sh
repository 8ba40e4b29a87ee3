#!/usr/bin/env bash
# Builds the C example against static libraries written by `ptxr compile --emit staticlib`
# and runs it: natively, and for AArch64 (aarch64-linux-gnu-gcc -static, run under
# qemu-aarch64) when those tools are installed.
#
#   examples/c/build.sh [native|aarch64|all]      (default: all)
#
# PTXR names the ptxr binary (default: target/release/ptxr of this checkout); OUT the build
# directory (default: examples/c/build).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PTXR="${PTXR:-$here/../../target/release/ptxr}"
OUT="${OUT:-$here/build}"
what="${1:-all}"
kernels="saxpy warp_reduce reduce_shared errors"
cd "$here"

build_and_run() { # TARGET CC [RUNNER...]
  local target="$1" cc="$2"
  shift 2
  local dir="$OUT/$target"
  mkdir -p "$dir"
  local libs=()
  for k in $kernels; do
    # One static library per PTX file: kernel code, C launch functions, C runtime.
    "$PTXR" compile "$k.ptx" --target "$target" -O3 --emit staticlib -o "$dir/lib$k.a"
    # The matching header: ptxr_launch_config, ptxr_launch_<kernel>, ptxr_last_error.
    "$PTXR" compile "$k.ptx" --emit header -o "$dir/ptxr_$k.h"
    libs+=("-l$k")
  done
  local static=()
  [ "$target" = aarch64 ] && static=(-static)
  "$cc" -O2 -Wall "${static[@]}" -I"$dir" main.c -L"$dir" "${libs[@]}" -lm -lpthread -o "$dir/main"
  echo "running the $target build"
  "$@" "$dir/main"
}

case "$what" in
  native|all) build_and_run host "${CC:-cc}" ;;
esac
case "$what" in
  aarch64|all)
    if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
      build_and_run aarch64 aarch64-linux-gnu-gcc qemu-aarch64 -L /usr/aarch64-linux-gnu
    elif [ "$what" = aarch64 ]; then
      echo "aarch64-linux-gnu-gcc or qemu-aarch64 is missing" >&2
      exit 2
    else
      echo "skipping the AArch64 build: aarch64-linux-gnu-gcc or qemu-aarch64 is missing"
    fi
    ;;
esac
