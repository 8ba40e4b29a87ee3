# Sourced by the project's scripts: toolchain paths for ptxr.
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
PTXR_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PTXR_ROOT
if [ -z "${PTXAS:-}" ] && [ -x "$PTXR_ROOT/.venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas" ]; then
  export PTXAS="$PTXR_ROOT/.venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas"
fi
