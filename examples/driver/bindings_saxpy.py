"""NVIDIA's Python bindings of the driver API (cuda-bindings, `cuda.bindings.driver`) on
ptxr's libcuda.so.1: NVRTC compiles a kernel, the driver API loads and launches it, and the
result is checked against NumPy-free Python arithmetic.

Run with ptxr's library first on the loader's path (docs/cuda.md):
    LD_LIBRARY_PATH=target/release .venv/bin/python examples/driver/bindings_saxpy.py
"""
import ctypes
import struct
import sys

from cuda.bindings import driver as cu
from cuda.bindings import nvrtc


def check(ret):
    err, *rest = ret if isinstance(ret, tuple) else (ret,)
    if isinstance(err, cu.CUresult) and err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"driver error {name.decode()}")
    if isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtc error {err}")
    return rest[0] if len(rest) == 1 else rest


SRC = b"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

prog = check(nvrtc.nvrtcCreateProgram(SRC, b"saxpy.cu", 0, [], []))
check(nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_80"]))
size = check(nvrtc.nvrtcGetPTXSize(prog))
ptx = b" " * size
check(nvrtc.nvrtcGetPTX(prog, ptx))

check(cu.cuInit(0))
dev = check(cu.cuDeviceGet(0))
name = check(cu.cuDeviceGetName(64, dev))
major = check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
check(cu.cuCtxSetCurrent(ctx))
mod = check(cu.cuModuleLoadData(ptx))
fn = check(cu.cuModuleGetFunction(mod, b"saxpy"))

n = 100_000
xs = [float(i % 97) * 0.5 for i in range(n)]
ys = [float(i % 13) for i in range(n)]
hx = (ctypes.c_float * n)(*xs)
hy = (ctypes.c_float * n)(*ys)
dx = check(cu.cuMemAlloc(4 * n))
dy = check(cu.cuMemAlloc(4 * n))
stream = check(cu.cuStreamCreate(0))
check(cu.cuMemcpyHtoDAsync(dx, hx, 4 * n, stream))
check(cu.cuMemcpyHtoDAsync(dy, hy, 4 * n, stream))
a = ctypes.c_float(3.0)
args = [a, ctypes.c_void_p(int(dx)), ctypes.c_void_p(int(dy)), ctypes.c_int(n)]
params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in args])
check(cu.cuLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, ctypes.addressof(params), 0))
check(cu.cuMemcpyDtoHAsync(hy, dy, 4 * n, stream))
check(cu.cuStreamSynchronize(stream))

f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
bad = sum(1 for i in range(n) if hy[i] != f32(f32(3.0 * xs[i]) + ys[i]) and hy[i] != f32(3.0 * xs[i] + ys[i]))
dev_name = name.split(b"\0")[0].decode()
print(f"{dev_name} (compute {major}.x): saxpy {n - bad}/{n} correct")
check(cu.cuMemFree(dx))
check(cu.cuMemFree(dy))
check(cu.cuModuleUnload(mod))
sys.exit(1 if bad else 0)
