#!/usr/bin/env bash
# Idempotent setup for ptxr on Debian 12: LLVM 19 (for inkwell), clang-19 (CUDA -> PTX),
# the AArch64 cross toolchain and qemu-user, and a project-local Python venv with ptxas and
# NVRTC from PyPI. Quick when everything is already present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkgs=(llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev libffi-dev libxml2-dev libz3-dev
      clang-19 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import nvidia.cuda_nvcc, nvidia.cuda_nvrtc' 2>/dev/null; then
  echo "setup: installing ptxas and NVRTC into .venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check 'nvidia-cuda-nvcc-cu12==12.9.*' 'nvidia-cuda-nvrtc-cu12==12.9.*'
fi
# The CUDA headers (cuda.h for the driver API library's C tests, cuda_runtime.h for
# `ptxr cuda`), NVIDIA's Python bindings
# of the driver API (cuda.bindings.driver) and numba-cuda: run against ptxr's libcuda.so.1.
# nvidia-cuda-cccl-cu12 has libcu++/CUB/Thrust headers, which `ptxr cuda` programs using
# cooperative groups need.
# pytest, filecheck, cffi and ml_dtypes are what numba-cuda's own test modules import (a selection of
# them runs against ptxr's libcuda.so.1 in ptxr-cuda/tests/driver.rs).
if ! "$venv/bin/python" -c 'import nvidia.cuda_runtime, nvidia.cuda_cccl, cuda.bindings.driver, numba_cuda, pytest, filecheck, cffi, ml_dtypes' 2>/dev/null; then
  echo "setup: installing the CUDA headers, cuda-bindings and numba-cuda into .venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check 'nvidia-cuda-runtime-cu12==12.9.*' 'nvidia-cuda-cccl-cu12==12.9.*' 'cuda-bindings==12.9.*' 'numba-cuda==0.30.*' pytest filecheck cffi ml_dtypes
fi
