#!/usr/bin/env python3
"""Writes tests/filetests/mem/tma_im2col.ptx and tma_rows4.ptx: cp.async.bulk.tensor in the .im2col, .im2col_no_offs,
.tile::gather4 and .tile::scatter4 modes (PTX ISA 8.x 5.5.3.4 and 5.5.4), expectations from the
reference below, which walks the tensor the way the ISA's text describes it, one pixel at a time:

  im2col: the filter base starts at the instruction's W, H, D coordinates and moves through the
  bounding box [lower, size + upper) of each spatial dimension by that dimension's traversal
  stride, W fastest; past the box's end it restarts at the lower corner and carries into the next
  dimension, past the last spatial one into N. Each of the map's pixels-per-column pixels reads
  channels-per-pixel elements from channel c at base + im2col offsets; outside the tensor: zeros.
  gather4/scatter4: four rows (the coordinates after the column) of box[0] elements each.

The reference was checked against the four worked examples of Triton's TMA im2col tutorial,
whose expected pixel values its tests assert on a GPU (`tutorial_examples` below).

Run: python3 tests/filetests/ref/tma_modes_ref.py
"""
import os
import struct

MEM = os.path.join(os.path.dirname(__file__), "..", "mem")


def im2col_walk(size, lower, upper, estr, base, pixels):
    """The filter bases of `pixels` pixels: size/lower/upper/estr/base over the spatial
    dimensions (W first) plus base's N last. One step at a time, as the ISA describes."""
    sp = len(size)
    pos = list(base[:sp])
    n = base[sp]
    out = []
    for _ in range(pixels):
        out.append((tuple(pos), n))
        d = 0
        while True:
            if d == sp:
                n += 1
                break
            pos[d] += estr[d]
            if pos[d] < size[d] + upper[d]:
                break
            pos[d] = lower[d]
            d += 1
    return out


def tutorial_examples():
    """Triton's tutorial: a [N, 4, 4, 32] f32 tensor whose pixel (n, h, w) holds n*16 + h*4 + w + 1
    in every channel; 16 pixels per column. Returns nothing; raises if the reference disagrees."""
    def value(n, h, w):
        return n * 16 + h * 4 + w + 1 if 0 <= h < 4 and 0 <= w < 4 else 0

    def run(lower, upper, base, offs, N=1):
        got = []
        for (w, h), n in im2col_walk([4, 4], lower, upper, [1, 1], base, 16):
            got.append(value(n, h + offs[1], w + offs[0]) if n < N else 0)
        return got

    # lower/upper/offsets here W first; the tutorial writes them H first (the same values)
    assert run([0, 0], [0, 0], [0, 0, 0], [0, 0]) == list(range(1, 17))
    assert run([-1, -1], [-1, -1], [-1, -1, 0], [0, 0]) == [0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11]
    assert run([-1, -1], [-1, -1], [-1, -1, 0], [1, 1]) == list(range(1, 17))
    assert run([0, 0], [0, 0], [3, 1, 0], [0, 0], N=2) == list(range(8, 24))


def hexs(b):
    return "hex:" + bytes(b).hex()


def tensor_bytes(shape_inner_first, fn):
    """Dense little-endian u32 tensor, innermost dimension first in `shape_inner_first`."""
    out = bytearray()
    idx = [0] * len(shape_inner_first)
    total = 1
    for s in shape_inner_first:
        total *= s
    for _ in range(total):
        out += struct.pack("<I", fn(*idx) & 0xFFFFFFFF)
        for d in range(len(idx)):
            idx[d] += 1
            if idx[d] < shape_inner_first[d]:
                break
            idx[d] = 0
    return out


FILL = 0xABABABAB  # what the kernel writes to shared memory before the copy


def swz(addr, span):
    """The swizzle of `span` bytes (0: none) on a shared-memory offset (1024-aligned base)."""
    if not span:
        return addr
    mask = span // 16 - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def im2col_expect(shape, data_fn, cpp, ppc, lower, upper, estr, coords, offs, span=0, fill_nan=False):
    """The shared-memory bytes (cpp * ppc u32 elements, rows padded to 16 bytes or `span`) of an
    im2col load. shape/coords innermost first: C, W, {H, {D,}} N."""
    rank = len(shape)
    sp = rank - 2
    c0 = coords[0]
    row = cpp * 4
    pitch = span if span else (row + 15) // 16 * 16
    smem = bytearray(struct.pack("<I", FILL) * (pitch * ppc // 4))
    walk = im2col_walk(shape[1:1 + sp], lower, upper, estr[1:1 + sp], coords[1:], ppc)
    for p, (pos, n) in enumerate(walk):
        g = [pos[k] + offs[k] for k in range(sp)]
        for ch in range(cpp):
            c = c0 + ch
            full = [c] + g + [n]
            inside = all(0 <= full[d] < shape[d] for d in range(rank))
            v = data_fn(*full) if inside else (0x7FF77FF7 if fill_nan else 0)
            a = swz(p * pitch + ch * 4, span)
            smem[a:a + 4] = struct.pack("<I", v & 0xFFFFFFFF)
    return smem


def rows4_expect(shape, data_fn, box0, col, rows):
    row = box0 * 4
    out = bytearray()
    for r in rows:
        for k in range(box0):
            c = col + k
            v = data_fn(c, r) if 0 <= c < shape[0] and 0 <= r < shape[1] else 0
            out += struct.pack("<I", v)
        out += struct.pack("<I", FILL) * ((row + 15) // 16 * 4 - box0)
    return out


HEAD = """// cp.async.bulk.tensor in the {modes}, with ptxr's tensor maps (`tmap:`{maps}). The expectations
// come from tests/filetests/ref/tma_modes_ref.py{why}, not from ptxr.
// Written by tests/filetests/ref/tma_modes_ref.py; do not edit by hand.
.version {version}
.target {target}
.address_size 64

.shared .align 1024 .b8 smem[8200];
"""
IM2COL_HEAD = HEAD.format(
    modes=".im2col and .im2col_no_offs modes (PTX ISA 8.x 5.5.4)", maps="; im2col maps as\n// cuTensorMapEncodeIm2col makes them",
    why=", a one-pixel-at-a-time walk of the bounding box that\n// reproduces the four worked examples of Triton's TMA im2col tutorial (values its tests assert on\n// a GPU)",
    version="8.0", target="sm_90")
ROWS4_HEAD = HEAD.format(modes=".tile::gather4 and .tile::scatter4 modes (PTX ISA 8.x 5.5.3.4, sm_100)", maps="",
                         why="", version="8.6", target="sm_100a")


def load_kernel(name, rank, mode, ncoord, noffs):
    """A kernel that fills shared memory with FILL, loads with one copy (coordinates and im2col
    offsets from parameters), waits for the mbarrier (expecting `bytes`), dumps `bytes` of shared
    memory (rounded up to 16) to `out`."""
    cs = ", ".join(f"%c{k}" for k in range(ncoord))
    params = [".param .align 64 .b8 tmap[128]", ".param .u64 out", ".param .u32 bytes", ".param .u32 dump"]
    params += [f".param .s32 pc{k}" for k in range(ncoord)] + [f".param .u16 po{k}" for k in range(noffs)]
    loads = "\n".join(f"\tld.param.s32 %c{k}, [pc{k}];" for k in range(ncoord))
    loads += "\n" + "\n".join(f"\tld.param.u16 %o{k}, [po{k}];" for k in range(noffs))
    offs = ""
    if noffs:
        offs = ", {" + ", ".join(f"%o{k}" for k in range(noffs)) + "}"
    return f"""
.visible .entry {name}({", ".join(params)})
{{
	.reg .b32 %t, %w, %sb, %mb, %a, %v, %n, %dn, %c<5>;
	.reg .b16 %o<3>;
	.reg .b64 %tm, %o, %p64, %st;
	.reg .pred %p, %done;
	mov.u32 %t, %tid.x;
	ld.param.u64 %o, [out];
	cvta.to.global.u64 %o, %o;
	ld.param.u32 %n, [bytes];
	ld.param.u32 %dn, [dump];
{loads}
	mov.u32 %sb, smem;
	add.u32 %mb, %sb, 8192;
	mov.u64 %tm, tmap;
	cvta.param.u64 %tm, %tm;
	mov.u32 %w, %t;
FILL:
	setp.ge.u32 %p, %w, 2048;
	@%p bra FILLED;
	shl.b32 %a, %w, 2;
	mov.u32 %v, {FILL - (1 << 32)};
	add.u32 %a, %a, %sb;
	st.shared.u32 [%a], %v;
	add.u32 %w, %w, 64;
	bra FILL;
FILLED:
	bar.sync 0;
	setp.ne.u32 %p, %t, 0;
	@%p bra ISSUED;
	mbarrier.init.shared::cta.b64 [%mb], 1;
	fence.mbarrier_init.release.cluster;
	fence.proxy.async.shared::cta;
	mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%mb], %n;
	cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes [%sb], [%tm, {{{cs}}}], [%mb]{offs};
ISSUED:
	bar.sync 0;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %done, [%mb], 0;
	@!%done bra WAIT;
	shl.b32 %w, %t, 2;
COPY:
	setp.ge.u32 %p, %w, %dn;
	@%p bra END;
	add.u32 %a, %w, %sb;
	ld.shared.u32 %v, [%a];
	cvt.u64.u32 %p64, %w;
	add.s64 %p64, %p64, %o;
	st.global.u32 [%p64], %v;
	add.u32 %w, %w, 256;
	bra COPY;
END:
	ret;
}}
"""


def store_kernel(name, rank, mode, ncoord):
    """Writes `src` (bytes of shared memory) to shared memory, then stores it with one copy."""
    cs = ", ".join(f"%c{k}" for k in range(ncoord))
    params = [".param .align 64 .b8 tmap[128]", ".param .u64 src", ".param .u32 bytes"] + [f".param .s32 pc{k}" for k in range(ncoord)]
    loads = "\n".join(f"\tld.param.s32 %c{k}, [pc{k}];" for k in range(ncoord))
    return f"""
.visible .entry {name}({", ".join(params)})
{{
	.reg .b32 %t, %w, %sb, %a, %v, %n, %c<5>;
	.reg .b64 %tm, %s, %p64;
	.reg .pred %p;
	mov.u32 %t, %tid.x;
	ld.param.u64 %s, [src];
	cvta.to.global.u64 %s, %s;
	ld.param.u32 %n, [bytes];
{loads}
	mov.u32 %sb, smem;
	mov.u64 %tm, tmap;
	cvta.param.u64 %tm, %tm;
	shl.b32 %w, %t, 2;
FILL:
	setp.ge.u32 %p, %w, %n;
	@%p bra FILLED;
	cvt.u64.u32 %p64, %w;
	add.s64 %p64, %p64, %s;
	ld.global.u32 %v, [%p64];
	add.u32 %a, %w, %sb;
	st.shared.u32 [%a], %v;
	add.u32 %w, %w, 256;
	bra FILL;
FILLED:
	fence.proxy.async.shared::cta;
	bar.sync 0;
	setp.ne.u32 %p, %t, 0;
	@%p bra END;
	cp.async.bulk.tensor.{rank}d.global.shared::cta.{mode}.bulk_group [%tm, {{{cs}}}], [%sb];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
END:
	ret;
}}
"""


def tmap_arg(shape, strides, box, opts, data):
    return f"tmap:u32:{'x'.join(map(str, shape))}:{'x'.join(map(str, strides)) if strides else '-'}:{'x'.join(map(str, box))}" + (":" + ",".join(opts) if opts else "") + "=buf:" + hexs(data)


def dense_strides(shape):
    st, acc = [], 4 * shape[0]
    for s in shape[1:]:
        st.append(acc)
        acc *= s
    return st


def corner(v):
    return "x".join(str(x) for x in v)


def main():
    tutorial_examples()
    out = [IM2COL_HEAD]
    out.append(load_kernel("im2col_3d", 3, "im2col", 3, 1))
    out.append(load_kernel("im2col_4d", 4, "im2col", 4, 2))
    out.append(load_kernel("im2col_5d", 5, "im2col", 5, 3))
    out.append(store_kernel("im2col_store_4d", 4, "im2col_no_offs", 4))
    out4 = [ROWS4_HEAD]
    out4.append(load_kernel("gather4", 2, "tile::gather4", 5, 0))
    out4.append(store_kernel("scatter4", 2, "tile::scatter4", 5))
    runs = []

    def im2col_run(kernel, shape, fn, cpp, ppc, lower, upper, coords, offs, estr=None, span=0, note="", nan=False):
        estr = estr or [1] * len(shape)
        data = tensor_bytes(shape, fn)
        opts = ["im2col", "lower=" + corner(lower), "upper=" + corner(upper)] + (["nanfill"] if nan else [])
        if any(e != 1 for e in estr):
            opts.append("estrides=" + "x".join(map(str, estr)))
        if span:
            opts.append(f"swizzle{span}")
        exp = im2col_expect(shape, fn, cpp, ppc, lower, upper, estr, coords, offs, span, fill_nan=nan)
        nbytes = cpp * ppc * 4
        args = [tmap_arg(shape, dense_strides(shape), [cpp, ppc], opts, data), f"buf:zero:{len(exp)}", f"u32:{nbytes}", f"u32:{len(exp)}"]
        args += [f"s32:{c}" for c in coords] + [f"u16:{o}" for o in offs]
        runs.append((note, f"{kernel}<<<1, 64>>> " + " ".join(args), [f"arg1 == {hexs(exp)}"]))

    # NHWC 2x4x4x8 (C 8, W 4, H 4, N 2): element (c, w, h, n) = n<<24 | h<<16 | w<<8 | c
    nhwc = [8, 4, 4, 2]
    f4 = lambda c, w, h, n: (n << 24) | (h << 16) | (w << 8) | c
    im2col_run("im2col_4d", nhwc, f4, 8, 16, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0],
               note="the whole first image, pixel by pixel (the tutorial's example 1)")
    im2col_run("im2col_4d", nhwc, f4, 8, 16, [-1, -1], [-1, -1], [0, -1, -1, 0], [0, 0],
               note="padding: bases from (-1, -1) through [-1, 3) x [-1, 3); outside reads zeros (example 2)")
    im2col_run("im2col_4d", nhwc, f4, 8, 16, [-1, -1], [-1, -1], [0, -1, -1, 0], [1, 1],
               note="offsets (1, 1) move every access back onto the image (example 3)")
    im2col_run("im2col_4d", nhwc, f4, 8, 16, [0, 0], [0, 0], [0, 3, 1, 0], [0, 0],
               note="from (w 3, h 1) of image 0 into image 1 (example 4)")
    im2col_run("im2col_4d", nhwc, f4, 4, 12, [-1, 0], [-2, -1], [4, 1, 2, 0], [2, 1],
               note="channels 4-7; a 3x3 filter's box [-1, 2) x [0, 3) at offsets (2, 1), into image 1")
    im2col_run("im2col_4d", nhwc, f4, 8, 8, [-1, -1], [0, 0], [0, -1, -1, 0], [1, 0], estr=[1, 2, 2, 1],
               note="traversal stride 2 in W and H: bases -1, 1, 3 of each run, rows -1, 1, 3")
    # 32 channels (128 bytes a pixel) with the 128-byte swizzle
    nhwc32 = [32, 3, 2, 2]
    im2col_run("im2col_4d", nhwc32, f4, 32, 10, [0, -1], [0, 0], [0, 1, -1, 0], [0, 1], span=128,
               note="128-byte rows under the 128-byte swizzle")
    im2col_run("im2col_4d", nhwc, f4, 8, 16, [-1, -1], [-1, -1], [0, -1, -1, 0], [0, 0], nan=True,
               note="example 2 with the NaN fill: outside the image reads 0xf7 0x7f repeated")
    # NWC 3-D (C 4, W 10, N 2), 16-bit offset
    f3 = lambda c, w, n: 0x10000000 | (n << 16) | (w << 8) | c
    im2col_run("im2col_3d", [4, 10, 2], f3, 4, 16, [-2], [-1], [0, -2, 0], [3],
               note="rank 3: W only, box [-2, 9), offset 3")
    # NDHWC 5-D (C 4, W 3, H 2, D 3, N 2)
    f5 = lambda c, w, h, d, n: 0x20000000 | (n << 20) | (d << 16) | (h << 12) | (w << 8) | c
    im2col_run("im2col_5d", [4, 3, 2, 3, 2], f5, 4, 24, [0, 0, -1], [-1, 0, 0], [0, 1, 1, 2, 0], [1, 0, 1],
               note="rank 5: W box [0, 2), H [0, 2), D [-1, 3); from (1, 1, 2) with offsets (1, 0, 1)")

    # gather4: a 24 x 16 tensor of u32 (element (c, r) = r<<16 | c), rows of 8 elements
    g2 = lambda c, r: 0x30000000 | (r << 16) | c
    shape2 = [24, 16]
    data2 = tensor_bytes(shape2, g2)
    for col, rows, note in ((8, [3, 0, 15, 7], "rows 3, 0, 15, 7 from column 8"),
                            (16, [2, -1, 16, 2], "a row above and a row below the tensor read zeros; a row twice; columns 16-23")):
        exp = rows4_expect(shape2, g2, 8, col, rows)
        args = [tmap_arg(shape2, [96], [8, 1], [], data2), f"buf:zero:{len(exp)}", f"u32:{4 * 8 * 4}", f"u32:{len(exp)}"]
        args += [f"s32:{c}" for c in [col] + rows]
        runs.append((note, "gather4<<<1, 64>>> " + " ".join(args), [f"arg1 == {hexs(exp)}"]))
    # a map whose box is two rows
    args = [tmap_arg(shape2, [96], [8, 2], [], data2), "buf:zero:128", "u32:128", "u32:128"] + [f"s32:{c}" for c in (0, 0, 1, 2, 3)]
    runs.append(("gather4 with a map of two-row boxes stops the CTA", "gather4<<<1, 64>>> " + " ".join(args), None))

    # scatter4: 4 rows of 8 elements from shared memory into rows 5, 1, 9 and 20 (outside: left out)
    src = tensor_bytes([8, 4], lambda c, k: 0x40000000 | (k << 8) | c)
    rows = [5, 1, 9, 20]
    zero = bytearray(24 * 16 * 4)
    exp = bytearray(zero)
    for k, r in enumerate(rows):
        if r < 16:
            for c in range(8):
                a = (r * 24 + 8 + c) * 4
                exp[a:a + 4] = src[(k * 8 + c) * 4:(k * 8 + c) * 4 + 4]
    args = [tmap_arg(shape2, [96], [8, 1], [], zero), "buf:" + hexs(src), f"u32:{len(src)}"] + [f"s32:{c}" for c in [8] + rows]
    runs.append(("scatter4 to rows 5, 1, 9 from column 8; row 20 lies outside and is left out", "scatter4<<<1, 64>>> " + " ".join(args), [f"arg0 == {hexs(exp)}"]))

    # im2col_no_offs store: 12 pixels of 4 channels from (w -1, h 0) of a 2x4x4x4 zero tensor,
    # box [-1, 3) x [0, 4): the pixels with w -1 are outside and left out
    shape4 = [4, 4, 4, 2]
    npx = 12
    src = tensor_bytes([4, npx], lambda c, p: 0x50000000 | (p << 8) | c)
    exp = bytearray(4 * 4 * 4 * 2 * 4)
    for p, ((w, h), n) in enumerate(im2col_walk([4, 4], [-1, 0], [-1, 0], [1, 1], [-1, 0, 0], npx)):
        if 0 <= w < 4 and 0 <= h < 4 and n < 2:
            for c in range(4):
                a = (((n * 4 + h) * 4 + w) * 4 + c) * 4
                exp[a:a + 4] = src[(p * 4 + c) * 4:(p * 4 + c) * 4 + 4]
    opts = ["im2col", "lower=-1x0", "upper=-1x0"]
    args = [tmap_arg(shape4, dense_strides(shape4), [4, npx], opts, bytes(len(exp))), "buf:" + hexs(src), f"u32:{len(src)}"] + [f"s32:{c}" for c in (0, -1, 0, 0)]
    runs.append(("im2col_no_offs store of 12 pixels from (w -1, h 0): w -1 is outside and left out", "im2col_store_4d<<<1, 64>>> " + " ".join(args), [f"arg0 == {hexs(exp)}"]))

    # an im2col copy given a tiled map
    args = [tmap_arg(nhwc, dense_strides(nhwc), [8, 4, 4, 2], [], tensor_bytes(nhwc, f4)), "buf:zero:512", "u32:512", "u32:512"] + [f"s32:{c}" for c in (0, 0, 0, 0)] + ["u16:0", "u16:0"]
    runs.append(("an im2col copy of a tiled map stops the CTA", "im2col_4d<<<1, 64>>> " + " ".join(args), "map"))

    for note, run, expects in runs:
        o = out4 if run.startswith(("gather4", "scatter4")) else out
        o.append(f"// {note}\n// run: {run}\n")
        if expects is None:
            o.append("// expect-error: box is more than one row\n")
        elif expects == "map":
            o.append("// expect-error: not of the copy's rank or mode\n")
        else:
            for e in expects:
                o.append(f"// expect: {e}\n")
    for name, text in (("tma_im2col.ptx", out), ("tma_rows4.ptx", out4)):
        with open(os.path.join(MEM, name), "w") as f:
            f.write("".join(text))
        print("wrote", name)


if __name__ == "__main__":
    main()
