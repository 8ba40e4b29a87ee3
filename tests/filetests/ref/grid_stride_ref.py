#!/usr/bin/env python3
"""Independent reference for tests/filetests/warp/grid_stride_yields.ptx: each thread's
semantics as plain Python (PTX ISA 9.7.12.1 bar.sync: every non-exited thread of the CTA
arrives before any goes on), run CTA by CTA. Prints the `// run:` and `// expect:` lines."""

M32 = 0xFFFFFFFF


def table():
    return [(k * 2654435761) & M32 for k in range(64)]


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def grid_stride(ctas, nt, n, back):
    inp = table()
    step = nt * ctas
    out = []
    for c in range(ctas):
        # Phase 1: every thread writes its slot; barrier.
        s = list(range(nt))
        accs = []
        for t in range(nt):
            i = c * nt + t
            lim = s32(n - (t >> 5) * step * back)
            acc = t
            while s32(i) < lim:
                acc = (acc * 3 + inp[i & 63] + i) & M32
                i += step
            accs.append(acc)
        # Phase 2: every thread adds its result to its slot; barrier.
        for t in range(nt):
            s[t] = (s[t] + accs[t]) & M32
        # Phase 3: every thread reads another's slot.
        out.extend(s[(t * 7 + 5) % nt] for t in range(nt))
    return out


if __name__ == "__main__":
    tab = ",".join(map(str, table()))
    for ctas, nt, n, back in [(2, 96, 192 * 9 + 40, 3), (3, 80, 240 * 10 + 17, 3), (4, 32, 128 * 11 + 3, 2), (1, 128, 128 * 13 + 100, 4)]:
        print(f"// run: grid_stride<<<{ctas}, {nt}>>> buf:u32:{tab} buf:zero:{4 * ctas * nt} u32:{n} u32:{back}")
        print("// expect: arg1 == u32:" + ",".join(map(str, grid_stride(ctas, nt, n, back))))
