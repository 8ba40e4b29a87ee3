#!/usr/bin/env python3
"""Writes tests/filetests/mem/tma_subbyte.ptx: cp.async.bulk.tensor with the packed sub-byte
data types of cuTensorMapEncodeTiled (CUDA 12.8+ cuda.h, PTX ISA 5.5.1.1.1), expected values
worked here from those definitions:

- 16U4_ALIGN8B (13, `tmap:b4x16`): 4-bit elements packed two to a byte, no gaps: a box of N
  elements is N/2 bytes of each row, copied as they are;
- 16U4_ALIGN16B (14, `tmap:b4x16_p64`, `.b4x16_p64`): each 16 elements (8 bytes) land in 16
  bytes of shared memory, 8 bytes of padding after them (loads only);
- 16U6_ALIGN16B (15, `tmap:b6x16_p32`, `.b6x16_p32`): each 16 elements (12 bytes) land in 16
  bytes, 4 bytes of padding after them; a store takes 16 bytes per 16 elements, each element
  in the low 6 bits of a byte (`.b6p2x16`), and packs them into 12 (element i at bits 6i..6i+5
  from the low bit of the first byte, the order of the global data a load copies as it is).
The padding is undefined in the ISA, so the kernels copy out only the data bytes. A 128-byte
swizzle moves the 16-byte units as it moves any others (chunk c of row r at c ^ (r % 8)).
Elements outside the tensor load as zeros. A store of 16U4_ALIGN16B, and an innermost
coordinate that is not a whole number of units, stop the copy.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "warp", "..", "mem", "tma_subbyte.ptx")

UNIT = {"b4x16": (2, 1, 1), "b4x16_p64": (16, 8, 16), "b6x16_p32": (16, 12, 16)}


def tensor(nbytes, salt):
    return bytes((k * 29 + salt * 71 + (k >> 5) * 3 + 5) % 256 for k in range(nbytes))


def load_expect(ty, data, dims, stride, box, coords, swz):
    """The data bytes of the box in shared memory, unit by unit in shared-memory order."""
    unit, gsize, ssize = UNIT[ty]
    units = box[0] // unit
    pitch = units * ssize
    smem = bytearray(box[1] * pitch)
    have = bytearray(box[1] * pitch)
    for r in range(box[1]):
        y = coords[1] + r
        for u in range(units):
            x = coords[0] // unit + u
            off = r * pitch + u * ssize
            if swz:
                chunk = (off >> 4) & 7
                off = (off & ~0x70) | ((chunk ^ ((off >> 7) & 7)) << 4)
            inside = 0 <= y < dims[1] and 0 <= x < dims[0] // unit
            src = data[y * stride + x * gsize: y * stride + x * gsize + gsize] if inside else bytes(gsize)
            smem[off:off + gsize] = src
            have[off:off + gsize] = b"\1" * gsize
    # the data bytes only, in shared-memory order
    return bytes(smem[k] for k in range(len(smem)) if have[k])


def words(b):
    return [int.from_bytes(b[k:k + 4], "little") for k in range(0, len(b), 4)]


def load_kernel(name, ty, coords, rows, units):
    unit, gsize, ssize = UNIT[ty]
    nbytes = rows * units * ssize
    per = gsize // 4 if ty != "b4x16" else 4  # words of data per 16-byte chunk
    chunks = nbytes // 16
    return f""".visible .entry {name}(.param .align 64 .b8 tmap[128], .param .u64 out)
{{
	.reg .b32 %t, %w, %sb, %mb, %a, %v, %k, %c<2>;
	.reg .b64 %tm, %o, %p64, %st;
	.reg .pred %p, %done;
	mov.u32 %t, %tid.x;
	ld.param.u64 %o, [out];
	mov.u32 %sb, smem;
	add.u32 %mb, %sb, 8192;
	mov.u64 %tm, tmap;
	cvta.param.u64 %tm, %tm;
	mov.u32 %c0, {coords[0]};
	mov.u32 %c1, {coords[1]};
	setp.ne.u32 %p, %t, 0;
	@%p bra ISSUED;
	mbarrier.init.shared::cta.b64 [%mb], 1;
	fence.mbarrier_init.release.cluster;
	fence.proxy.async.shared::cta;
	mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%mb], {nbytes};
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%sb], [%tm, {{%c0, %c1}}], [%mb];
ISSUED:
	bar.sync 0;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %done, [%mb], 0;
	@!%done bra WAIT;
	// word k of each 16-byte chunk's {per} data words, chunk by chunk
	mov.u32 %w, %t;
COPY:
	setp.ge.u32 %p, %w, {chunks * per};
	@%p bra END;
	div.u32 %k, %w, {per};
	rem.u32 %a, %w, {per};
	shl.b32 %k, %k, 4;
	shl.b32 %a, %a, 2;
	add.u32 %a, %a, %k;
	add.u32 %a, %a, %sb;
	ld.shared.u32 %v, [%a];
	mul.wide.u32 %p64, %w, 4;
	add.s64 %p64, %p64, %o;
	st.global.u32 [%p64], %v;
	add.u32 %w, %w, 32;
	bra COPY;
END:
	ret;
}}"""


def store_kernel(name, coords, fill):
    """A .b6x16_p32 store of one row of 128 elements (8 units of 16 bytes, one element a byte,
    garbage in the top 2 bits) at `coords`."""
    return f""".visible .entry {name}(.param .align 64 .b8 tmap[128])
{{
	.reg .b32 %t, %sb, %a, %v, %c<2>;
	.reg .b64 %tm;
	.reg .pred %p;
	mov.u32 %t, %tid.x;
	mov.u32 %sb, smem;
	mov.u64 %tm, tmap;
	cvta.param.u64 %tm, %tm;
	// 128 bytes: thread t writes bytes 4t..4t+3: (4t + j) * {fill[0]} + {fill[1]} mod 256
	shl.b32 %a, %t, 2;
	mad.lo.u32 %v, %a, {fill[0]}, {fill[1]};
	and.b32 %v, %v, 255;
	add.u32 %c0, %a, 1;
	mad.lo.u32 %c0, %c0, {fill[0]}, {fill[1]};
	and.b32 %c0, %c0, 255;
	shl.b32 %c0, %c0, 8;
	or.b32 %v, %v, %c0;
	add.u32 %c0, %a, 2;
	mad.lo.u32 %c0, %c0, {fill[0]}, {fill[1]};
	and.b32 %c0, %c0, 255;
	shl.b32 %c0, %c0, 16;
	or.b32 %v, %v, %c0;
	add.u32 %c0, %a, 3;
	mad.lo.u32 %c0, %c0, {fill[0]}, {fill[1]};
	and.b32 %c0, %c0, 255;
	shl.b32 %c0, %c0, 24;
	or.b32 %v, %v, %c0;
	add.u32 %a, %a, %sb;
	st.shared.u32 [%a], %v;
	fence.proxy.async.shared::cta;
	bar.sync 0;
	setp.ne.u32 %p, %t, 0;
	@%p bra DONE;
	mov.u32 %c0, {coords[0]};
	mov.u32 %c1, {coords[1]};
	cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%tm, {{%c0, %c1}}], [%sb];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
DONE:
	ret;
}}"""


def store_expect(data, stride, coords, fill):
    out = bytearray(data)
    src = [((k * fill[0]) + fill[1]) % 256 for k in range(128)]
    y = coords[1]
    for u in range(8):
        bits = sum((src[16 * u + i] & 63) << (6 * i) for i in range(16))
        x = coords[0] // 16 + u
        out[y * stride + 12 * x: y * stride + 12 * x + 12] = bits.to_bytes(12, "little")
    return bytes(out)


HEAD = """// cp.async.bulk.tensor with the packed sub-byte data types of cuTensorMapEncodeTiled (13
// b4x16, 14 b4x16_p64, 15 b6x16_p32; PTX ISA 5.5.1.1.1). Expected values computed from CUDA's
// and the ISA's definitions by tests/filetests/ref/tma_subbyte_ref.py (its docstring gives
// them), independently of ptxr; do not edit by hand.
.version 8.7
.target sm_100a
.address_size 64

.shared .align 1024 .b8 smem[8200];
"""


def main():
    parts = [HEAD]
    # name, type, dims (elements x rows), row stride (bytes), box, coordinates, swizzle
    cases = [
        ("load_b6", "b6x16_p32", (256, 4), 192, (128, 2), (128, 1), False),
        ("load_b6_swz_oob", "b6x16_p32", (256, 4), 192, (128, 2), (0, 3), True),
        ("load_b4p", "b4x16_p64", (256, 4), 128, (128, 2), (128, 2), False),
        ("load_b4", "b4x16", (128, 3), 64, (64, 2), (64, 2), False),
    ]
    for k, (name, ty, dims, stride, box, coords, swz) in enumerate(cases):
        data = tensor(stride * dims[1], k)
        exp = load_expect(ty, data, dims, stride, box, coords, swz)
        unit = UNIT[ty][0]
        parts.append(load_kernel(name, ty, coords, box[1], box[0] // unit))
        opts = ":swizzle128" if swz else ""
        parts.append(f"// run: {name}<<<1, 32>>> tmap:{ty}:{dims[0]}x{dims[1]}:{stride}:{box[0]}x{box[1]}{opts}=buf:hex:{data.hex()} buf:zero:{len(exp)}")
        parts.append(f"// expect: arg1 == hex:{exp.hex()}")
    # a .b6x16_p32 store of one row at (128, 2) into a 256 x 3 tensor
    data = tensor(192 * 3, 9)
    fill = (37, 11)
    parts.append(store_kernel("store_b6", (128, 2), fill))
    parts.append(f"// run: store_b6<<<1, 32>>> tmap:b6x16_p32:256x3:192:128x1=buf:hex:{data.hex()}")
    parts.append(f"// expect: arg0 == hex:{store_expect(data, 192, (128, 2), fill).hex()}")
    # errors: a store of b4x16_p64; an innermost coordinate that is not a whole unit
    parts.append(store_kernel("store_b4p", (0, 0), fill))
    parts.append(f"// run: store_b4p<<<1, 32>>> tmap:b4x16_p64:256x3:128:128x1=buf:zero:384")
    parts.append("// expect-error: a packed sub-byte copy")
    parts.append(load_kernel("load_b6_part", "b6x16_p32", (8, 0), 1, 8))
    parts.append(f"// run: load_b6_part<<<1, 32>>> tmap:b6x16_p32:256x4:192:128x1=buf:zero:768 buf:zero:96")
    parts.append("// expect-error: a packed sub-byte copy")
    with open(OUT, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
