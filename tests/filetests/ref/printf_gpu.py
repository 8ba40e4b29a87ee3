#!/usr/bin/env python3
"""Runs tests/cuda/oracle/printf.ptx (NVRTC output of printf.cu) on a real GPU and writes the
kernels' printf output to stdout, which becomes tests/cuda/oracle/printf*.expected:
    python3 tests/filetests/ref/printf_gpu.py formats > tests/cuda/oracle/printf_formats.expected
    python3 tests/filetests/ref/printf_gpu.py threads > tests/cuda/oracle/printf_threads.expected
The launches are the ones tests/cli.rs makes with `ptxr run` (same arguments)."""
import os
import sys

import cupy as cp
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
mod = cp.RawModule(path=os.path.join(here, "..", "..", "cuda", "oracle", "printf.ptx"))
if sys.argv[1] == "formats":
    iv = cp.asarray(np.array([-42 & 0xFFFFFFFF, 7, 0xDEADBEEF, 123456], dtype=np.uint32))
    dv = cp.asarray(np.array([3.14159265358979, -2.5e-3, 0.0, 1.1], dtype=np.float64))
    s = cp.asarray(np.frombuffer(b"hello\0", dtype=np.uint8).copy())
    mod.get_function("printf_formats")((1,), (32,), (iv, dv, s))
else:
    mod.get_function("printf_threads")((2,), (8,), (np.int32(13),))
cp.cuda.Device().synchronize()
