#!/usr/bin/env python3
"""Runs video instructions on a real GPU (CuPy) over edge-case and random inputs and compares
them with the reference model in video.py. Usage: python3 video_gpu.py OUTDIR"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import video as V  # noqa: E402

N = 256
random.seed(7)
EDGE = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x80808080,
        0x7F7F7F7F, 0xFF00FF00, 0x00FF00FF, 0x8000FFFF, 0x12345678, 0xFEDCBA98, 31, 32, 33, 0x100, 0xFFFFFFE0]
A, B, C = [], [], []
for i in range(N):
    if i < len(EDGE) * 4:
        A.append(EDGE[i % len(EDGE)]); B.append(EDGE[(i // len(EDGE) * 7 + i) % len(EDGE)]); C.append(EDGE[(i * 5 + 3) % len(EDGE)])
    else:
        r = random.getrandbits
        pick = lambda: r(32) if r(1) else (r(8) if r(1) else (r(16) ^ (0xFFFF0000 if r(1) else 0)))
        A.append(pick()); B.append(pick()); C.append(pick())

V_ = []  # (ptx instruction with %ra %rb %rc -> %rd, model(a,b,c))


def add(ins, f):
    V_.append((ins, f))


def s(x):  # selector suffix
    return '' if x is None else '.' + x


SCAL = ['vadd', 'vsub', 'vabsdiff', 'vmin', 'vmax']
TY = [('u32', 'u32', 'u32'), ('s32', 's32', 's32'), ('s32', 'u32', 's32'), ('u32', 's32', 'u32')]
for op in SCAL:
    for dt, at, bt in TY:
        for sat in (False, True):
            add(f'{op}.{dt}.{at}.{bt}{".sat" if sat else ""} %rd, %ra, %rb;', lambda a, b, c, op=op, dt=dt, at=at, bt=bt, sat=sat: V.scalar(op, dt, at, bt, a, b, sat=sat))
        for sec in ('add', 'min', 'max'):
            add(f'{op}.{dt}.{at}.{bt}.sat.{sec} %rd, %ra, %rb, %rc;', lambda a, b, c, op=op, dt=dt, at=at, bt=bt, sec=sec: V.scalar(op, dt, at, bt, a, b, c, sat=True, secop=sec))
            add(f'{op}.{dt}.{at}.{bt}.{sec} %rd, %ra, %rb, %rc;', lambda a, b, c, op=op, dt=dt, at=at, bt=bt, sec=sec: V.scalar(op, dt, at, bt, a, b, c, secop=sec))
    for asel, bsel, dsel in [('b0', 'h0', None), ('b3', 'b1', None), ('h1', 'h1', None), ('b0', 'b2', 'h0'), ('h1', 'b3', 'b2'), (None, None, 'h1'), ('b1', None, 'b3')]:
        for dt, at, bt in TY[:3]:
            for sat in (False, True):
                c3 = ', %rc' if dsel else ''
                add(f'{op}.{dt}.{at}.{bt}{".sat" if sat else ""} %rd{s(dsel)}, %ra{s(asel)}, %rb{s(bsel)}{c3};',
                    lambda a, b, c, op=op, dt=dt, at=at, bt=bt, sat=sat, asel=asel, bsel=bsel, dsel=dsel: V.scalar(op, dt, at, bt, a, b, c, sat=sat, asel=asel, bsel=bsel, dsel=dsel))
for op in ('vshl', 'vshr'):
    for dt, at in [('u32', 'u32'), ('s32', 's32'), ('s32', 'u32'), ('u32', 's32')]:
        for mode in ('clamp', 'wrap'):
            for sat in (False, True):
                add(f'{op}.{dt}.{at}.u32{".sat" if sat else ""}.{mode} %rd, %ra, %rb;', lambda a, b, c, op=op, dt=dt, at=at, mode=mode, sat=sat: V.scalar(op, dt, at, 'u32', a, b, sat=sat, mode=mode))
            add(f'{op}.{dt}.{at}.u32.{mode}.add %rd, %ra, %rb, %rc;', lambda a, b, c, op=op, dt=dt, at=at, mode=mode: V.scalar(op, dt, at, 'u32', a, b, c, secop='add', mode=mode))
            add(f'{op}.{dt}.{at}.u32.{mode} %rd, %ra.b1, %rb.b0;', lambda a, b, c, op=op, dt=dt, at=at, mode=mode: V.scalar(op, dt, at, 'u32', a, b, asel='b1', bsel='b0', mode=mode))
for at, bt in [('u32', 'u32'), ('s32', 's32'), ('s32', 'u32'), ('u32', 's32')]:
    for cmp in V.CMP:
        add(f'vset.{at}.{bt}.{cmp} %rd, %ra, %rb;', lambda a, b, c, at=at, bt=bt, cmp=cmp: V.vset(at, bt, cmp, a, b))
    for sec in ('add', 'min', 'max'):
        add(f'vset.{at}.{bt}.lt.{sec} %rd, %ra, %rb, %rc;', lambda a, b, c, at=at, bt=bt, sec=sec: V.vset(at, bt, 'lt', a, b, c, secop=sec))
    add(f'vset.{at}.{bt}.ge %rd.b2, %ra.h1, %rb.b0, %rc;', lambda a, b, c, at=at, bt=bt: V.vset(at, bt, 'ge', a, b, c, asel='h1', bsel='b0', dsel='b2'))
for dt, at, bt in [('u32', 'u32', 'u32'), ('s32', 's32', 's32'), ('s32', 's32', 'u32'), ('s32', 'u32', 's32')]:
    for na, nb, nc in [(False, False, False), (True, False, False), (False, True, False), (False, False, True)]:
        for sat in (False, True):
            for scale in (None, 'shr7', 'shr15'):
                ins = f'vmad.{dt}.{at}.{bt}{".sat" if sat else ""}{s(scale)} %rd, {"-" if na else ""}%ra, {"-" if nb else ""}%rb, {"-" if nc else ""}%rc;'
                add(ins, lambda a, b, c, dt=dt, at=at, bt=bt, na=na, nb=nb, nc=nc, sat=sat, scale=scale: V.vmad(dt, at, bt, a, b, c, na, nb, nc, sat=sat, scale=scale))
    add(f'vmad.{dt}.{at}.{bt}.po %rd, %ra, %rb, %rc;', lambda a, b, c, dt=dt, at=at, bt=bt: V.vmad(dt, at, bt, a, b, c, po=True))
    add(f'vmad.{dt}.{at}.{bt}.po.sat.shr15 %rd, %ra.h1, %rb.b2, %rc;', lambda a, b, c, dt=dt, at=at, bt=bt: V.vmad(dt, at, bt, a, b, c, po=True, sat=True, scale='shr15', asel='h1', bsel='b2'))
    add(f'vmad.{dt}.{at}.{bt} %rd, %ra.b3, %rb.h0, %rc;', lambda a, b, c, dt=dt, at=at, bt=bt: V.vmad(dt, at, bt, a, b, c, asel='b3', bsel='h0'))
for n in (2, 4):
    for op in ('vadd', 'vsub', 'vavrg', 'vabsdiff', 'vmin', 'vmax'):
        for dt, at, bt in TY:
            for sat, addf in ((False, False), (True, False), (False, True)):
                m = ('.sat' if sat else '') + ('.add' if addf else '')
                add(f'{op}{n}.{dt}.{at}.{bt}{m} %rd, %ra, %rb, %rc;', lambda a, b, c, op=op, n=n, dt=dt, at=at, bt=bt, sat=sat, addf=addf: V.simd(op, n, dt, at, bt, a, b, c, sat=sat, add=addf))
        sels = [('h0', 'h10', 'h32'), ('h1', 'h01', 'h23'), ('h10', 'h00', 'h22'), ('h10', 'h31', 'h02')] if n == 2 else \
               [('b0', 'b3210', 'b7654'), ('b31', 'b0123', 'b4567'), ('b3210', 'b0000', 'b2222'), ('b320', 'b7531', 'b6420')]
        for mask, asel, bsel in sels:
            for dt, at, bt in TY[:3]:
                for sat, addf in ((True, False), (False, True)):
                    m = ('.sat' if sat else '') + ('.add' if addf else '')
                    add(f'{op}{n}.{dt}.{at}.{bt}{m} %rd.{mask}, %ra.{asel}, %rb.{bsel}, %rc;',
                        lambda a, b, c, op=op, n=n, dt=dt, at=at, bt=bt, sat=sat, addf=addf, mask=mask, asel=asel, bsel=bsel:
                        V.simd(op, n, dt, at, bt, a, b, c, sat=sat, add=addf, mask=mask, asel=asel, bsel=bsel))
    for at, bt in [('u32', 'u32'), ('s32', 's32'), ('s32', 'u32')]:
        for cmp in V.CMP:
            for addf in (False, True):
                add(f'vset{n}.{at}.{bt}.{cmp}{".add" if addf else ""} %rd, %ra, %rb, %rc;', lambda a, b, c, n=n, at=at, bt=bt, cmp=cmp, addf=addf: V.simd('vset', n, 'u32', at, bt, a, b, c, add=addf, cmp=cmp))
        mask, asel, bsel = ('h1', 'h01', 'h23') if n == 2 else ('b31', 'b0123', 'b4567')
        add(f'vset{n}.{at}.{bt}.lt %rd.{mask}, %ra.{asel}, %rb.{bsel}, %rc;', lambda a, b, c, n=n, at=at, bt=bt, mask=mask, asel=asel, bsel=bsel: V.simd('vset', n, 'u32', at, bt, a, b, c, cmp='lt', mask=mask, asel=asel, bsel=bsel))

K = len(V_)
HEAD = """.version 7.0
.target sm_70
.address_size 64
.visible .entry vk(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [pa];
	ld.param.u64 %rd2, [pb];
	ld.param.u64 %rd3, [pc];
	ld.param.u64 %rd4, [pd];
	mov.u32 %r5, %tid.x;
	mul.wide.u32 %rd6, %r5, 4;
	add.u64 %rd1, %rd1, %rd6;
	add.u64 %rd2, %rd2, %rd6;
	add.u64 %rd3, %rd3, %rd6;
	add.u64 %rd5, %rd4, %rd6;
	ld.global.u32 %r1, [%rd1];
	ld.global.u32 %r2, [%rd2];
	ld.global.u32 %r3, [%rd3];
"""


def module(ks):
    body = [f'\t{V_[k][0].replace("%rd", "%r4").replace("%ra", "%r1").replace("%rb", "%r2").replace("%rc", "%r3")}\n\tst.global.u32 [%rd5+{k * N * 4}], %r4;' for k in ks]
    return HEAD + "\n".join(body) + "\n\tret;\n}\n"


out = sys.argv[1] if len(sys.argv) > 1 else '.'
import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402
da, db, dc = (cp.asarray(np.array(x, dtype=np.uint32)) for x in (A, B, C))
dd = cp.full(K * N, 0xDEADBEEF, dtype=cp.uint32)
rejected = []


def run(ks):
    try:
        path = os.path.join(out, f'm{ks[0]}_{len(ks)}.ptx')
        with open(path, 'w') as fh:
            fh.write(module(ks))
        f = cp.RawModule(path=path).get_function('vk')
        os.remove(path)
        f((1,), (N,), (da, db, dc, dd))
        cp.cuda.Device().synchronize()
        return True
    except Exception as ex:  # noqa: BLE001
        if len(ks) == 1:
            rejected.append((V_[ks[0]][0], ' '.join(str(ex).split())[:300]))
            return False
        h = len(ks) // 2
        run(ks[:h])
        run(ks[h:])


CH = 128
for s0 in range(0, K, CH):
    run(list(range(s0, min(K, s0 + CH))))
got = cp.asnumpy(dd).reshape(K, N)
np.save(os.path.join(out, 'video_gpu.npy'), got)
np.save(os.path.join(out, 'video_in.npy'), np.array([A, B, C], dtype=np.uint32))
bad = 0
rej = {r[0] for r in rejected}
with open(os.path.join(out, 'video_gpu.txt'), 'w') as log:
    for ins, msg in rejected:
        log.write(f'REJECTED {ins}: {msg}\n')
    for k, (ins, fn) in enumerate(V_):
        if ins in rej:
            continue
        mism = [(i, int(got[k, i]), fn(A[i], B[i], C[i])) for i in range(N) if int(got[k, i]) != fn(A[i], B[i], C[i])]
        if mism:
            bad += 1
            i, g, w = mism[0]
            line = f'MISMATCH {ins}  ({len(mism)}/{N}) e.g. a={A[i]:#x} b={B[i]:#x} c={C[i]:#x} gpu={g:#x} model={w:#x}'
            log.write(line + '\n')
        else:
            log.write(f'ok {ins}\n')
print(f'{K} variants, {len(rejected)} rejected by the driver, {bad} mismatching the model')
