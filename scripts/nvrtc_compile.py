#!/usr/bin/env python3
"""Compile one CUDA C++ file to PTX with NVRTC (from the project's .venv).

Usage: nvrtc_compile.py INPUT.cu OUTPUT.ptx [extra NVRTC options...]

Defaults: --gpu-architecture=compute_70 -std=c++17. Loads libnvrtc.so.12 from the pip package
nvidia-cuda-nvrtc-cu12 (installed by scripts/setup.sh) via ctypes. On failure the compile log is
printed to stderr and the exit status is non-zero.
"""
import ctypes
import os
import sys


def find_libnvrtc():
    try:
        import nvidia.cuda_nvrtc as pkg  # namespace package from nvidia-cuda-nvrtc-cu12
        dirs = [os.path.join(p, "lib") for p in pkg.__path__]
    except ImportError:
        dirs = []
    here = os.path.dirname(os.path.abspath(__file__))
    for pyver in os.listdir(os.path.join(here, "..", ".venv", "lib")) if os.path.isdir(
            os.path.join(here, "..", ".venv", "lib")) else []:
        dirs.append(os.path.join(here, "..", ".venv", "lib", pyver, "site-packages",
                                 "nvidia", "cuda_nvrtc", "lib"))
    for d in dirs:
        cand = os.path.join(d, "libnvrtc.so.12")
        if os.path.exists(cand):
            return cand
    sys.exit("nvrtc_compile: libnvrtc.so.12 not found (run scripts/setup.sh)")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    src_path, out_path, extra = argv[1], argv[2], argv[3:]
    with open(src_path, "rb") as f:
        src = f.read()

    lib = ctypes.CDLL(find_libnvrtc())
    prog = ctypes.c_void_p()
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.c_int, c_char_pp, c_char_pp]
    lib.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, c_char_pp]
    lib.nvrtcGetProgramLogSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.nvrtcGetProgramLog.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nvrtcGetPTXSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.nvrtcGetPTX.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]

    def check(rc, what):
        if rc != 0:
            sys.stderr.write("nvrtc_compile: %s failed: %s\n"
                             % (what, lib.nvrtcGetErrorString(rc).decode()))
            sys.exit(1)

    name = os.path.basename(src_path).encode()
    check(lib.nvrtcCreateProgram(ctypes.byref(prog), src, name, 0, None, None),
          "nvrtcCreateProgram")

    opts = ["--gpu-architecture=compute_70", "-std=c++17"] + extra
    # Make tests/cuda (the source's directory) available for #include "prelude.h".
    opts.append("--include-path=" + (os.path.dirname(os.path.abspath(src_path))))
    c_opts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), c_opts)

    log_size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size))
    log = ctypes.create_string_buffer(log_size.value)
    lib.nvrtcGetProgramLog(prog, log)
    log_text = log.value.decode(errors="replace").strip()
    if rc != 0:
        sys.stderr.write("nvrtc_compile: compiling %s failed: %s\n%s\n"
                         % (src_path, lib.nvrtcGetErrorString(rc).decode(), log_text))
        sys.exit(1)
    # compute_70 is deprecated in NVRTC 12.9; drop that one warning so real ones stand out.
    log_text = "\n".join(l for l in log_text.splitlines()
                         if "Architectures prior to" not in l).strip()
    if log_text:
        sys.stderr.write("%s: %s\n" % (src_path, log_text))

    ptx_size = ctypes.c_size_t()
    check(lib.nvrtcGetPTXSize(prog, ctypes.byref(ptx_size)), "nvrtcGetPTXSize")
    ptx = ctypes.create_string_buffer(ptx_size.value)
    check(lib.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))

    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(ptx.value)
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main(sys.argv)
