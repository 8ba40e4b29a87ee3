#!/usr/bin/env python3
"""Reference model of the PTX video instructions (PTX ISA 9.7.15 scalar, 9.7.16 SIMD), written
from the spec's pseudocode with exact Python integers. Used to compute the expected values of
tests/filetests/video/*.ptx (run this file to print them).

Selectors are strings as written after the register: 'b0'..'b3', 'h0', 'h1' (scalar),
'h10', 'b3210', ... (SIMD); None = the default."""

M32 = 0xFFFFFFFF


def sx(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def part(v, signed, sel):
    """partSelectSignExtend: byte/half/word of v, sign- or zero-extended."""
    if sel is None:
        bits, sh = 32, 0
    elif sel[0] == 'b':
        bits, sh = 8, 8 * int(sel[1])
    else:
        bits, sh = 16, 16 * int(sel[1])
    x = (v >> sh) & ((1 << bits) - 1)
    return sx(x, bits) if signed else x


def clamp(x, lo, hi):
    return max(lo, min(hi, x))


def opt_sat(tmp, sat, signed, dsel):
    if not sat:
        return tmp
    bits = 32 if dsel is None else (8 if dsel[0] == 'b' else 16)
    if signed:
        return clamp(tmp, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return clamp(tmp, 0, (1 << bits) - 1)


def sec_or_merge(tmp, secop, dsel, c, csigned):
    if secop is not None:
        cv = sx(c, 32) if csigned else c & M32
        tmp = {'add': tmp + cv, 'min': min(tmp, cv), 'max': max(tmp, cv)}[secop]
    if dsel is not None:
        if dsel[0] == 'b':
            sh, m = 8 * int(dsel[1]), 0xFF
        else:
            sh, m = 16 * int(dsel[1]), 0xFFFF
        tmp = ((tmp & m) << sh) | (c & ~(m << sh) & M32)
    return tmp & M32


def scalar(op, dt, at, bt, a, b, c=0, sat=False, secop=None, asel=None, bsel=None, dsel=None, mode=None):
    """vadd vsub vabsdiff vmin vmax vshl vshr; dt/at/bt are 's32' or 'u32'."""
    ta = part(a, at == 's32', asel)
    if op in ('vshl', 'vshr'):
        tb = part(b, False, bsel)
        tb = min(tb, 32) if mode == 'clamp' else tb & 0x1F
        tmp = ta << tb if op == 'vshl' else ta >> tb
    else:
        tb = part(b, bt == 's32', bsel)
        tmp = {'vadd': ta + tb, 'vsub': ta - tb, 'vabsdiff': abs(ta - tb), 'vmin': min(ta, tb), 'vmax': max(ta, tb)}[op]
    tmp = opt_sat(tmp, sat, dt == 's32', dsel)
    return sec_or_merge(tmp, secop, dsel, c, dt == 's32')


CMP = {'eq': lambda x, y: x == y, 'ne': lambda x, y: x != y, 'lt': lambda x, y: x < y,
       'le': lambda x, y: x <= y, 'gt': lambda x, y: x > y, 'ge': lambda x, y: x >= y}


def vset(at, bt, cmp, a, b, c=0, secop=None, asel=None, bsel=None, dsel=None):
    tmp = 1 if CMP[cmp](part(a, at == 's32', asel), part(b, bt == 's32', bsel)) else 0
    return sec_or_merge(tmp, secop, dsel, c, False)


def vmad(dt, at, bt, a, b, c, na=False, nb=False, nc=False, po=False, sat=False, scale=None, asel=None, bsel=None):
    ta = part(a, at == 's32', asel)
    tb = part(b, bt == 's32', bsel)
    signed_final = at == 's32' or bt == 's32' or (na != nb) or nc
    M128 = (1 << 128) - 1
    tmp = (ta * tb) & M128
    lsb = 0
    cc = c & M32
    if na != nb:
        tmp = ~tmp & M128
        lsb = 1
    elif nc:
        cc = ~cc & M32
        lsb = 1
    if po:
        lsb = 1
    c128 = (sx(cc, 32) if signed_final else cc) & M128
    tmp = (tmp + c128 + lsb) & M128
    tmp = sx(tmp, 128)
    if scale == 'shr7':
        tmp >>= 7
    elif scale == 'shr15':
        tmp >>= 15
    res = tmp & ((1 << 64) - 1)
    if sat:
        if signed_final:
            res = clamp(sx(res, 64), -(1 << 31), (1 << 31) - 1)
        else:
            res = clamp(res, 0, M32)
    return res & M32


def simd(op, n, dt, at, bt, a, b, c, sat=False, add=False, mask=None, asel=None, bsel=None, cmp=None):
    """vadd2..vmax2, vset2 (n=2) and vadd4..vmax4, vset4 (n=4); op without the digit
    ('vadd', 'vavrg', 'vset', ...); for vset, dt is unused and cmp is the comparison."""
    w = 32 // n
    lm = (1 << w) - 1
    src = (a & M32) | ((b & M32) << 32)
    if asel is None:
        asel = 'h10' if n == 2 else 'b3210'
    if bsel is None:
        bsel = 'h32' if n == 2 else 'b7654'
    if mask is None:
        mask = 'h10' if n == 2 else 'b3210'

    def lanes(sel, signed):
        idx = [int(ch) for ch in reversed(sel[1:])]  # lane 0 is the last digit
        return [(sx if signed else lambda v, _w: v & ((1 << _w) - 1))((src >> (w * k)) & lm, w) for k in idx]

    va = lanes(asel, at == 's32')
    vb = lanes(bsel, bt == 's32')
    vc = [(c >> (w * i)) & lm for i in range(n)]
    t = []
    for i in range(n):
        x, y = va[i], vb[i]
        if op == 'vset':
            r = 1 if CMP[cmp](x, y) else 0
        else:
            r = {'vadd': x + y, 'vsub': x - y, 'vabsdiff': abs(x - y), 'vmin': min(x, y), 'vmax': max(x, y),
                 'vavrg': (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1}[op]
            if sat:
                r = clamp(r, -(1 << (w - 1)), (1 << (w - 1)) - 1) if dt == 's32' else clamp(r, 0, lm)
        t.append(r)
    on = [False] * n
    for ch in mask[1:]:
        on[int(ch)] = True
    if add:
        d = c
        for i in range(n):
            d += t[i] if on[i] else 0
        return d & M32
    d = 0
    for i in range(n):
        d |= ((t[i] if on[i] else vc[i]) & lm) << (w * i)
    return d


if __name__ == '__main__':
    import sys
    sys.path.insert(0, __file__.rsplit('/', 1)[0])
    from video_cases import CASES  # noqa: E402
    for name, f in CASES:
        print(name, ','.join(str(v) for v in f()))
