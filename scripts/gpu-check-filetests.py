#!/usr/bin/env python3
"""Runs every filetest (tests/filetests/**/*.ptx) on a real NVIDIA GPU through CuPy and checks
the `// expect:` lines — an independent oracle for the expected values that the CPU tests use.

Usage (on a machine with a GPU and CuPy): python3 scripts/gpu-check-filetests.py [SUBSTRING]
Files with `// expect-error:` (traps, deadlocks) are skipped: they would hang or kill the GPU
context. Prints one line per mismatch and a summary `N passed, M failed`.
"""
import glob, os, re, struct, sys

import cupy as cp
import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SIZES = {"8": 1, "16": 2, "32": 4, "64": 8}
NP = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "s8": np.int8, "s16": np.int16,
      "s32": np.int32, "s64": np.int64, "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64,
      "f16": np.uint16, "f32": np.uint32, "f64": np.uint64}


def half_bits(f):
    return int(np.array([f], dtype=np.float16).view(np.uint16)[0])


def scalar_bits(ty, v):
    size = int(re.sub(r"\D", "", ty) or 8) // 8 if ty != "pred" else 1
    if v.startswith(("0x", "0X")):
        return int(v, 16), size
    if ty[0] == "f":
        f = {"inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}.get(v)
        f = float(v) if f is None else f
        if ty == "f64":
            return struct.unpack("<Q", struct.pack("<d", f))[0], 8
        if ty == "f32":
            return struct.unpack("<I", struct.pack("<f", f))[0], 4
        return half_bits(f), 2
    x = int(v)
    return x & ((1 << (8 * size)) - 1), size


def typed_bytes(ty, vals):
    out = b""
    for v in [v.strip() for v in vals.split(",") if v.strip()]:
        bits, size = scalar_bits(ty, v)
        out += bits.to_bytes(size, "little")
    return out


TMAP_TYPES = ["u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f64", "bf16", "f32ftz", "tf32"]


def tensor_map(spec):
    """`tmap:TYPE:DIMS:STRIDES:BOX[:OPTIONS]=buf:...`: the tensor's buffer on the GPU and
    NVIDIA's 128-byte map of it (cuTensorMapEncodeTiled), passed by value. (CuPy aligns a
    by-value parameter by its own rules: put the map first, where offset 0 is 64-aligned.)"""
    from cuda.bindings import driver as cu
    head, buf = spec.split("=buf:", 1)
    parts = head.split(":")[1:]
    ty, dims, strides, box = parts[0], parts[1], parts[2], parts[3]
    opts = parts[4].split(",") if len(parts) > 4 else []
    dims = [int(x) for x in dims.split("x")]
    strides = [] if strides == "-" else [int(x) for x in strides.split("x")]
    box = [int(x) for x in box.split("x")]
    es, swz, fill = [1] * len(dims), 0, 0
    for o in opts:
        if o.startswith("swizzle"):
            swz = {"32": 1, "64": 2, "128": 3}[o[len("swizzle"):]]
        elif o.startswith("estrides="):
            es = [int(x) for x in o[len("estrides="):].split("x")]
        elif o == "nanfill":
            fill = 1
    _, data, n = arg_value("buf:" + buf)
    err, m = cu.cuTensorMapEncodeTiled(cu.CUtensorMapDataType(TMAP_TYPES.index(ty)), len(dims), int(data.data.ptr),
                                       [cu.cuuint64_t(d) for d in dims], [cu.cuuint64_t(x) for x in strides] or None,
                                       [cu.cuuint32_t(b) for b in box], [cu.cuuint32_t(e) for e in es],
                                       cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(swz), cu.CUtensorMapL2promotion(0),
                                       cu.CUtensorMapFloatOOBfill(fill))
    if int(err) != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled: {err}")
    raw = b"".join(int(x).to_bytes(8, "little") for x in m.opaque)
    return ("buf", data, n, np.frombuffer(raw, dtype=np.dtype((np.void, 128)))[0])


def arg_value(spec):
    kind, rest = spec.split(":", 1)
    if kind == "tmap":
        return tensor_map(spec)
    if kind == "bytes":  # a parameter passed by value (a struct): its raw bytes
        b = bytes.fromhex(rest)
        return ("scalar", np.frombuffer(b, dtype=np.dtype((np.void, len(b))))[0], len(b))
    if kind == "buf":
        how, data = rest.split(":", 1)
        if how == "zero":
            b = bytes(int(data))
        elif how == "hex":
            b = bytes.fromhex(re.sub(r"[\s_]", "", data))
        elif how == "file":
            b = open(data, "rb").read()
        else:
            b = typed_bytes(how, data)
        return ("buf", cp.asarray(np.frombuffer(b + bytes(-len(b) % 8 or 0), dtype=np.uint8).copy()), len(b))
    bits, size = scalar_bits(kind, rest)
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]
    return ("scalar", dt(bits), size)


def dim(s):
    s = s.strip().strip("()")
    d = [int(x) for x in s.split(",")] + [1, 1]
    return tuple(d[:3])


def split_top(s):
    out, depth, cur = [], 0, ""
    for c in s:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def main():
    # Each file runs in its own process: a kernel that faults poisons its CUDA context.
    import subprocess
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    from concurrent.futures import ThreadPoolExecutor
    totals = [0, 0, 0]
    paths = [p for p in sorted(glob.glob(os.path.join(ROOT, "tests/filetests/**/*.ptx"), recursive=True))
             if flt in os.path.relpath(p, ROOT)]

    def one_file(path):
        try:
            return subprocess.run([sys.executable, __file__, "--one", path], capture_output=True, text=True,
                                  timeout=120)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess([], 1, "", "timed out after 120 s")
    # GPU_CHECK_JOBS files at a time (each its own process and CUDA context)
    with ThreadPoolExecutor(int(os.environ.get("GPU_CHECK_JOBS", "1"))) as pool:
        results = list(pool.map(one_file, paths))
    for path, r in zip(paths, results):
        lines = r.stdout.strip().splitlines()
        summary = [l for l in lines if l.startswith("gpu-check:")]
        for l in lines:
            if not l.startswith("gpu-check:"):
                print(l)
        if summary:
            nums = [int(x) for x in re.findall(r"(\d+) (?:passed|failed|skipped)", summary[0])]
            totals = [a + b for a, b in zip(totals, nums)]
        else:
            print(f"{os.path.relpath(path, ROOT)}: crashed on the GPU: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
            totals[1] += 1
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    sys.exit(1 if totals[1] else 0)


def one(path):
    passed = failed = skipped = 0
    for path in [path]:
        name = os.path.relpath(path, ROOT)
        text = open(path).read()
        if "// expect-error:" in text:
            skipped += 1
            continue
        try:
            # A .ptx path is loaded by the driver (cuModuleLoad); `code=` would be CUDA C++.
            import tempfile
            tmp = tempfile.NamedTemporaryFile(suffix=".ptx", delete=False)
            tmp.write(text.encode())
            tmp.close()
            mod = cp.RawModule(path=tmp.name)
        except Exception as e:  # noqa: BLE001
            print(f"{name}: GPU could not load the PTX: {str(e).splitlines()[0]}")
            failed += 1
            continue
        runs = []
        for n, line in enumerate(text.splitlines(), 1):
            l = line.strip()
            if l.startswith("// run:"):
                r = l[len("// run:"):].strip()
                k, rest = r.split("<<<", 1)
                launch, args = rest.split(">>>", 1)
                parts = split_top(launch)
                runs.append(dict(line=n, kernel=k.strip(), grid=dim(parts[0]), block=dim(parts[1] if len(parts) > 1 else "1"),
                                 shared=int(parts[2]) if len(parts) > 2 else 0, args=args.split(), expects=[]))
            elif l.startswith("// expect:"):
                lhs, rhs = l[len("// expect:"):].split("==", 1)
                runs[-1]["expects"].append((n, int(lhs.strip()[3:]), rhs.strip()))
        for r in runs:
            try:
                vals = [arg_value(a) for a in r["args"]]
                f = mod.get_function(r["kernel"])
                f(r["grid"], r["block"], tuple(v[3] if len(v) > 3 else v[1] for v in vals), shared_mem=r["shared"])
                cp.cuda.runtime.deviceSynchronize()
            except Exception as e:  # noqa: BLE001
                print(f"{name}:{r['line']}: launch failed on the GPU: {str(e).splitlines()[0]}")
                failed += 1
                continue
            for (ln, idx, spec) in r["expects"]:
                kind, v, size = vals[idx][:3]
                got = cp.asnumpy(v).tobytes()
                ty, data = spec.split(":", 1)
                want = bytes.fromhex(re.sub(r"[^0-9a-fA-F]", "", data)) if ty == "hex" else typed_bytes(ty, data)
                if got[:len(want)] != want:
                    w = SIZES.get(re.sub(r"\D", "", ty), 1) if ty != "hex" else 1
                    diffs = [i for i in range(0, len(want), w) if got[i:i + w] != want[i:i + w]]
                    i = diffs[0]
                    print(f"{name}:{ln}: arg{idx} element {i // w}: expected {want[i:i+w][::-1].hex()} GPU {got[i:i+w][::-1].hex()} ({len(diffs)} differ)")
                    failed += 1
                else:
                    passed += 1
    print(f"gpu-check: {passed} passed, {failed} failed, {skipped} skipped")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        one(sys.argv[2])
    else:
        main()
