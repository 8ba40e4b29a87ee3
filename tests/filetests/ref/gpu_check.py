#!/usr/bin/env python3
"""Runs generated filetests on a real GPU through CuPy and compares with their `// expect:`
lines (used to validate fpref.py against hardware). Usage: gpu_check.py FILE.ptx..."""
import os
import re
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptxgen import load_ptx  # noqa: E402

DT = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def parse_buf(a):
    _, t, vals = a.split(":", 2)
    if t == "zero":
        return np.zeros(int(vals), dtype=np.uint8)
    return np.array([int(v, 16) for v in vals.split(",")], dtype=DT[t]).view(np.uint8)


def main():
    total = bad = 0
    for path in sys.argv[1:]:
        text = open(path).read()
        try:
            mod = load_ptx(cp, text)
        except Exception as ex:  # noqa
            print("%s: LOAD FAILED %s" % (path, str(ex)[:300]))
            continue
        lines = text.splitlines()
        run = None
        for l in lines:
            m = re.match(r"// run: (\w+)<<<1, (\d+)>>> (.*)", l)
            if m:
                name, n, args = m.group(1), int(m.group(2)), m.group(3).split()
                bufs = [cp.asarray(parse_buf(a)) for a in args]
                try:
                    fn = mod.get_function(name)
                    fn((1,), (n,), tuple(bufs))
                    cp.cuda.runtime.deviceSynchronize()
                    run = (name, n, bufs)
                except Exception as ex:  # noqa
                    print("%s: %s: LAUNCH FAILED %s" % (path, name, str(ex)[:200]))
                    run = None
                continue
            m = re.match(r"// expect: arg(\d+) == (\w+):(.*)", l)
            if m and run:
                idx, t = int(m.group(1)), m.group(2)
                want = [int(v, 16) for v in m.group(3).split(",")]
                got = cp.asnumpy(run[2][idx]).view(DT[t]).tolist()
                total += 1
                diffs = [(k, hex(w), hex(g)) for k, (w, g) in enumerate(zip(want, got)) if w != g]
                if diffs:
                    bad += 1
                    print("%s: %s: %d diffs %s" % (path.split("/")[-1], run[0], len(diffs), diffs[:6]))
    print("checked %d expectations, %d differ" % (total, bad))


if __name__ == "__main__":
    main()
