#!/usr/bin/env python3
"""Independent reference for tests/filetests/half/bf16_arith.ptx: bfloat16 add, sub, mul,
fma (.rn, .relu), min, max (.NaN), neg and abs computed with exact rationals: the exact
result, then its two bf16 neighbours, the nearer one, ties to the even one (overflow past
the largest finite value rounds to infinity as round-to-nearest does), NaN results as the
canonical 0x7fff. Prints the `// run:` and `// expect:` lines of the filetest."""
from fractions import Fraction

NAN = 0x7FFF


def value(h):
    """Exact value of bf16 bits h: a Fraction, or 'inf'/'-inf'/'nan'."""
    sign = -1 if h & 0x8000 else 1
    e = (h >> 7) & 0xFF
    m = h & 0x7F
    if e == 0xFF:
        return "nan" if m else ("inf" if sign > 0 else "-inf")
    if e == 0:
        return sign * Fraction(m, 128) * Fraction(2) ** -126
    return sign * (1 + Fraction(m, 128)) * Fraction(2) ** (e - 127)


def finite_bits():
    """Every finite non-negative bf16 bit pattern with its value, ascending."""
    return [(h, value(h)) for h in range(0, 0x7F80)]


FINITE = finite_bits()
MAXV = FINITE[-1][1]


def round_bf16(x, neg_zero=False):
    """Round-to-nearest-even of an exact value (Fraction) to bf16 bits."""
    if x == 0:
        return 0x8000 if neg_zero else 0
    sign = 0x8000 if x < 0 else 0
    a = abs(x)
    # Halfway past the largest finite value (the next binade's first step) overflows.
    if a >= MAXV + (MAXV - FINITE[-2][1]) / 2:
        return sign | 0x7F80
    lo, hi = 0, len(FINITE) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if FINITE[mid][1] <= a:
            lo = mid
        else:
            hi = mid - 1
    h0, v0 = FINITE[lo]
    if v0 == a or lo + 1 >= len(FINITE):
        return sign | h0
    h1, v1 = FINITE[lo + 1]
    if a - v0 < v1 - a:
        return sign | h0
    if a - v0 > v1 - a:
        return sign | h1
    return sign | (h0 if h0 % 2 == 0 else h1)


def arith(op, a, b, c=None, relu=False):
    va, vb = value(a), value(b)
    vc = value(c) if c is not None else None
    vals = [va, vb] + ([vc] if c is not None else [])
    if any(v == "nan" for v in vals):
        return NAN
    inf = lambda v: v in ("inf", "-inf")
    sgn = lambda v: (1 if v == "inf" else -1) if inf(v) else (1 if v >= 0 else -1)
    if op == "mul" or op == "fma":
        if (inf(va) and vb == 0) or (inf(vb) and va == 0):
            return NAN
        if inf(va) or inf(vb):
            p = "inf" if sgn(va) * sgn(vb) > 0 else "-inf"
        else:
            p = va * vb
        if op == "mul":
            r = p
        elif inf(p) and inf(vc):
            r = p if p == vc else "nan"
        elif inf(p) or inf(vc):
            r = p if inf(p) else vc
        else:
            r = p + vc
    else:
        if op == "sub":
            vb = "-inf" if vb == "inf" else "inf" if vb == "-inf" else -vb
        if inf(va) and inf(vb):
            r = va if va == vb else "nan"
        elif inf(va) or inf(vb):
            r = va if inf(va) else vb
        else:
            r = va + vb
    if r == "nan":
        return NAN
    if r in ("inf", "-inf"):
        res = 0x7F80 if r == "inf" else 0xFF80
        return 0 if relu and r == "-inf" else res
    # An exact zero sum of opposite signs is +0; -0 only as (-0) + (-0) or a negative product
    # of zeros with -0 added.
    neg_zero = False
    if r == 0:
        if op == "mul":
            neg_zero = (a ^ b) & 0x8000 != 0
        elif op == "fma":
            pz = ((a ^ b) & 0x8000) != 0 and (va == 0 or vb == 0)
            neg_zero = pz and (c & 0x8000) != 0 and vc == 0
        else:
            bneg = (b & 0x8000) != 0 if op == "add" else (b & 0x8000) == 0
            neg_zero = (a & 0x8000) != 0 and bneg and va == 0
    res = round_bf16(r, neg_zero)
    # .relu clamps negative results to +0, and -0 too: an H200 gives +0 for
    # fma.rn.relu.bf16 of -0 * 1 + -0 (scripts/gpu-check-filetests.py).
    if relu and res & 0x8000:
        return 0
    return res


def minmax(op, a, b, nan_mode=False):
    va, vb = value(a), value(b)
    if va == "nan" and vb == "nan":
        return NAN
    if va == "nan" or vb == "nan":
        return NAN if nan_mode else (b if va == "nan" else a)
    key = lambda h, v: (float("inf") if v == "inf" else float("-inf") if v == "-inf" else v, 0 if h & 0x8000 else 1)
    ka, kb = key(a, va), key(b, vb)
    if op == "min":
        return a if ka <= kb else b
    return a if ka >= kb else b


def neg(a):
    return NAN if value(a) == "nan" else a ^ 0x8000


def absv(a):
    return NAN if value(a) == "nan" else a & 0x7FFF


# (a, b, c) triples: the fma double-rounding traps (a*b exactly halfway between two bf16
# values and c far below it: 1.5 * (1 + 3/128) = 1.5 + 4.5 ulps, 1.5 * (1 + 1/128) = 1.5 +
# 1.5 ulps), exact ties, overflow, subnormal results, infinities, NaN, signed zeros.
CASES = [
    (0x3FC0, 0x3F83, 0x0D80),  # +2^-100: up from the tie (even is below)
    (0x3FC0, 0x3F81, 0x8D80),  # -2^-100: down from the tie (even is above)
    (0x3FC0, 0x3F83, 0x0000),  # the tie itself: to even
    (0x3F80, 0x3B80, 0x3F80),  # 1 * 2^-8 + 1: half an ulp, a tie, to even (1)
    (0x3F80, 0x3B81, 0x3F80),  # just above half an ulp: up
    (0x7F7F, 0x4000, 0x0000),  # MAX * 2: overflow
    (0x0080, 0x3F00, 0x0000),  # 2^-126 * 0.5: subnormal
    (0x0001, 0x3F00, 0x0000),  # smallest subnormal * 0.5: a tie with 0, to even (0)
    (0x7F80, 0x0000, 0x3F80),  # inf * 0: NaN
    (0x7F80, 0x3F80, 0xFF80),  # inf - inf: NaN
    (0x7FC1, 0x3F80, 0x3F80),  # NaN operand
    (0x8000, 0x3F80, 0x8000),  # -0 * 1 + -0 = -0
    (0xC040, 0x4040, 0x4110),  # -3 * 3 + 9 = 0 (+0)
    (0x4049, 0xC0A3, 0x3DCD),  # generic values
    (0x5F80, 0x5F80, 0xFF7F),  # 2^64 * 2^64 - MAX
    (0x2F80, 0x3F80, 0x7000),  # tiny + big (add/sub across 2^95)
]
N = len(CASES)
fma = [arith("fma", a, b, c) for a, b, c in CASES]
relu = [arith("fma", a, b, c, relu=True) for a, b, c in CASES]
add = [arith("add", a, b) for a, b, _ in CASES]
sub = [arith("sub", a, b) for a, b, _ in CASES]
mul = [arith("mul", a, b) for a, b, _ in CASES]
mn = [minmax("min", a, b) for a, b, _ in CASES]
mx = [minmax("max", a, b) for a, b, _ in CASES]
mnn = [minmax("min", a, b, True) for a, b, _ in CASES]
ng = [neg(a) for a, _, _ in CASES]
ab = [absv(c) for _, _, c in CASES]
# bf16x2: lanes (case 2k, case 2k+1) packed low/high.
x2 = []
for k in range(0, N, 2):
    x2 += [fma[k], fma[k + 1]]
flat = [h for t in CASES for h in t]
outs = fma + relu + add + sub + mul + mn + mx + mnn + ng + ab + x2
print(f"// run: k<<<1, {N}>>> buf:u16:{','.join(hex(h) for h in flat)} buf:zero:{2 * len(outs)}")
print(f"// expect: arg1 == u16:{','.join(hex(h) for h in outs)}")
