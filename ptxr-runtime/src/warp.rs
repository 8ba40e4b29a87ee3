//! Completing synchronization points: the host half of the lane scheduler (see `lanes`).
//! Called after every pass over a CTA's threads, when each thread is either waiting at a
//! sync point or exited.

use crate::abi::*;

/// Host-side scheduler state of one CTA.
#[derive(Default)]
pub struct Sched {
    /// `bar.arrive` arrivals not yet consumed by a barrier completion, per barrier id.
    pub arrived: [u32; BARRIERS],
    /// Whether `resolve` ran for the CTA (then its slots need clearing before the next).
    pub called: bool,
}

/// The CTA's 16 barriers and the cluster barrier ([`CLUSTER_BARRIER`]).
const BARRIERS: usize = 17;

/// A slot's barrier id as an index: ids are taken modulo 16 (9.7.12.1), except the cluster
/// barrier's.
fn bar_index(id: u32) -> usize {
    if id == CLUSTER_BARRIER {
        CLUSTER_BARRIER as usize
    } else {
        (id & 15) as usize
    }
}

/// Whether the launch runs code compiled for checking (`check::set_check`).
fn checking(cta: &CtaCtx) -> bool {
    !cta.host.is_null() && unsafe { (*(cta.host as *const super::host::HostState)).check.is_some() }
}

/// A barrier of the CTA completed: in the checking mode, the shadow's next epoch.
fn checked_barrier(cta: &CtaCtx) {
    if checking(cta) {
        crate::check::barrier();
    }
}

/// The cluster barrier once every thread of the CTA is there: the cluster's other CTAs
/// (`cluster::cluster_sync`). The status to stop with, if the launch was cancelled meanwhile.
fn meet_cluster(cta: &mut CtaCtx, id: usize) -> u32 {
    if id == CLUSTER_BARRIER as usize {
        crate::cluster::cluster_sync(cta)
    } else {
        STATUS_OK
    }
}

pub extern "C" fn resolve(cta: *mut CtaCtx) -> u32 {
    let cta = unsafe { &mut *cta };
    let n = (cta.ntid[0] * cta.ntid[1] * cta.ntid[2]) as usize;
    let slots = unsafe { std::slice::from_raw_parts_mut(cta.slots, n) };
    let sched = unsafe { &mut *(cta.sched as *mut Sched) };
    sched.called = true;
    match resolve_slots(slots, sched, cta) {
        RESOLVE_CONTINUE => uniform_resume(slots),
        r => r,
    }
}

/// `RESOLVE_UNIFORM + k` when every thread that has not exited is runnable at resume point
/// `k` (the generated code then runs region copy `k`), else `RESOLVE_CONTINUE`.
fn uniform_resume(slots: &[SyncSlot]) -> u32 {
    let mut k = None;
    for s in slots {
        match s.state {
            SLOT_EXITED => continue,
            SLOT_RUNNABLE if k.map_or(true, |k| k == s.resume) => k = Some(s.resume),
            _ => return RESOLVE_CONTINUE,
        }
    }
    k.map_or(RESOLVE_CONTINUE, |k| RESOLVE_UNIFORM + k)
}

fn live(s: &SyncSlot) -> bool {
    s.state != SLOT_EXITED
}

fn is_warp_kind(k: u32) -> bool {
    matches!(k, SYNC_WARP | SYNC_SHFL | SYNC_VOTE | SYNC_MATCH | SYNC_ACTIVEMASK | SYNC_REDUX)
}

fn fail(cta: &mut CtaCtx, status: u32, line: u32, thread: usize) -> u32 {
    cta.status = status;
    cta.status_line = line;
    cta.status_thread = thread as u32;
    RESOLVE_DEADLOCK
}

pub fn resolve_slots(slots: &mut [SyncSlot], sched: &mut Sched, cta: &mut CtaCtx) -> u32 {
    let n = slots.len();
    // Fast paths, the common case of convergent code: every thread of the CTA waits at the
    // same instruction.
    if let Some(s0) = slots.first() {
        let (site, kind) = (s0.site, s0.kind);
        let uniform = s0.state == SLOT_WAITING && slots.iter().all(|s| s.state == SLOT_WAITING && s.site == site);
        // A plain bar.sync/barrier.sync for all threads, reached by all: everyone goes on.
        let id = bar_index(s0.bar_id);
        if uniform && kind == SYNC_BAR && s0.mode == 0 && s0.bar_count == 0 && sched.arrived[id] == 0 && slots.iter().all(|s| s.bar_id == s0.bar_id) {
            checked_barrier(cta);
            let st = meet_cluster(cta, id);
            if st != STATUS_OK {
                return fail(cta, st, s0.line, 0);
            }
            for s in slots.iter_mut() {
                s.state = SLOT_RUNNABLE;
            }
            return RESOLVE_UNIFORM + site;
        }
        // A warp collective: every lane of every warp has arrived, so each one completes.
        if uniform && is_warp_kind(kind) {
            if kind == SYNC_SHFL {
                for warp in slots.chunks_mut(32) {
                    shfl_all(warp);
                }
                return RESOLVE_UNIFORM + site;
            }
            for warp in slots.chunks_mut(32) {
                let full = lane_bits(warp.len());
                let nosync = warp[0].flags & FLAG_NOSYNC != 0;
                let mut parts = [0u32; 32];
                for (l, s) in warp.iter().enumerate() {
                    parts[l] = if nosync { full } else { (s.mask | 1 << l) & full };
                }
                complete(warp, &parts, full);
            }
            return RESOLVE_UNIFORM + site;
        }
    }
    // One pass: who is done, who waits where.
    let mut live_threads = 0u32;
    let mut bar_waiting = [0u32; BARRIERS];
    let mut bar_first = [usize::MAX; BARRIERS];
    // At most 1024 threads: one bit per warp.
    let mut warp_pending = 0u32;
    let mut progress = false;
    for (t, s) in slots.iter_mut().enumerate() {
        if s.state == SLOT_EXITED {
            continue;
        }
        live_threads += 1;
        if s.state != SLOT_WAITING {
            continue;
        }
        match s.kind {
            // bar.arrive: count the arrival and let the thread go on.
            SYNC_BAR_ARRIVE => {
                sched.arrived[bar_index(s.bar_id)] += 1;
                s.state = SLOT_RUNNABLE;
                progress = true;
            }
            SYNC_BAR => {
                let id = bar_index(s.bar_id);
                bar_waiting[id] += 1;
                if bar_first[id] == usize::MAX {
                    bar_first[id] = t;
                }
            }
            k if is_warp_kind(k) => warp_pending |= 1 << (t / 32),
            _ => {}
        }
    }
    if live_threads == 0 {
        return RESOLVE_DONE;
    }
    // Warp collectives, warp by warp.
    for w in 0..n.div_ceil(32) {
        if warp_pending & (1 << w) != 0 {
            let base = w * 32;
            let lanes = (n - base).min(32);
            if resolve_warp(&mut slots[base..base + lanes]) {
                progress = true;
            }
        }
    }
    // Barriers (9.7.12.1): complete when the expected number of threads has arrived —
    // `b` if given, else every thread of the CTA that has not exited.
    for id in 0..BARRIERS {
        if bar_waiting[id] == 0 {
            continue;
        }
        let first = bar_first[id];
        let count = slots[first].bar_count;
        if count != 0 && (count % 32 != 0 || count as usize > n.div_ceil(32) * 32) {
            // The thread count must be a multiple of the warp size, at most the CTA size.
            return fail(cta, STATUS_BAD_BARRIER, slots[first].line, first);
        }
        let expected = if count == 0 { live_threads } else { count };
        if bar_waiting[id] + sched.arrived[id] < expected {
            continue;
        }
        if checking(cta) {
            let mut report = |msg: String, t: usize| {
                let host = unsafe { &*(cta.host as *const super::host::HostState) };
                host.set_detail(cta.ctaid, msg);
                fail(cta, STATUS_CHECK, slots[t].line, t)
            };
            // synccheck: every thread that waits at a barrier gives the same thread count
            // (9.7.12.1: "b" is the number of threads expected at it), or none.
            let waiters = || (0..n).filter(|&t| slots[t].state == SLOT_WAITING && slots[t].kind == SYNC_BAR && bar_index(slots[t].bar_id) == id);
            if let Some(t1) = waiters().find(|&t| slots[t].bar_count != count) {
                let c = |t: usize| if slots[t].bar_count == 0 { "none (all threads)".to_string() } else { slots[t].bar_count.to_string() };
                let msg = format!("0\0inconsistent barrier thread counts: threads {first} and {t1} wait at barrier {id} with thread counts {} and {} (lines {} and {}), but every thread at a barrier must give the same count", c(first), c(t1), slots[first].line, slots[t1].line);
                return report(msg, t1);
            }
            // synccheck: an `.aligned` barrier must be one instruction for every thread of a
            // warp (the threads waiting here are all the live ones).
            for w in 0..n.div_ceil(32) {
                let waiting: Vec<usize> = (w * 32..(w * 32 + 32).min(n)).filter(|&t| slots[t].state == SLOT_WAITING && slots[t].kind == SYNC_BAR && bar_index(slots[t].bar_id) == id).collect();
                if let Some(&t0) = waiting.first() {
                    if let Some(&t1) = waiting.iter().find(|&&t| slots[t].site != slots[t0].site && (slots[t].flags | slots[t0].flags) & FLAG_ALIGNED != 0) {
                        let msg = format!("0\0divergent barrier: threads {t0} and {t1} of warp {w} wait at barrier {id} at lines {} and {}, but an .aligned barrier (bar.sync, barrier.sync.aligned) must be the same instruction for every thread of a warp", slots[t0].line, slots[t1].line);
                        return report(msg, t1);
                    }
                }
            }
            checked_barrier(cta);
        }
        let st = meet_cluster(cta, id);
        if st != STATUS_OK {
            return fail(cta, st, slots[first].line, first);
        }
        // A barrier with a count completes with `b` arrivals (9.7.12.1) and is reinitialized:
        // the arrivals past them, in thread order, wait for its next use (where more threads
        // than `b` reach it, the last ones wait for threads that may never come, as on a GPU).
        let quota = if count == 0 { usize::MAX } else { (count - sched.arrived[id].min(count)) as usize };
        let released: Vec<usize> = (0..n).filter(|&t| slots[t].state == SLOT_WAITING && slots[t].kind == SYNC_BAR && bar_index(slots[t].bar_id) == id).take(quota).collect();
        let (mut popc, mut all, mut any) = (0u64, true, false);
        for &t in &released {
            let p = slots[t].a != 0;
            popc += p as u64;
            all &= p;
            any |= p;
        }
        for &t in &released {
            let s = &mut slots[t];
            match s.mode {
                1 => s.result = popc,
                2 => s.pred = all as u32,
                3 => s.pred = any as u32,
                _ => {}
            }
            s.state = SLOT_RUNNABLE;
        }
        sched.arrived[id] = if count == 0 { 0 } else { sched.arrived[id].saturating_sub(count) };
        progress = true;
    }
    if progress {
        return RESOLVE_CONTINUE;
    }
    // Nothing can move: every live thread waits for threads that will never arrive.
    let (t, s) = slots.iter().enumerate().find(|(_, s)| s.state == SLOT_WAITING).expect("a waiting thread");
    let mut sites: Vec<(u32, u32)> = Vec::new();
    for s in slots.iter().filter(|s| s.state == SLOT_WAITING) {
        match sites.iter_mut().find(|(l, _)| *l == s.line) {
            Some((_, c)) => *c += 1,
            None => sites.push((s.line, 1)),
        }
    }
    sites.sort();
    let detail = sites.iter().map(|(l, c)| format!("line {l}: {c} thread{}", if *c == 1 { "" } else { "s" })).collect::<Vec<_>>().join(", ");
    let exited = slots.iter().filter(|s| s.state == SLOT_EXITED).count();
    if !cta.host.is_null() {
        let host = unsafe { &*(cta.host as *const super::host::HostState) };
        host.set_detail(cta.ctaid, format!("waiting at {detail}; {exited} exited"));
    }
    fail(cta, STATUS_DEADLOCK, s.line, t)
}

/// Completes the warp collectives of one warp that can complete. Returns whether any did.
fn resolve_warp(warp: &mut [SyncSlot]) -> bool {
    let n = warp.len();
    // Group the waiting lanes once: by (kind, mode, membermask) for the .sync forms (threads
    // meet at a collective with the same qualifiers and the same membermask value, e.g.
    // 9.7.12.2 bar.warp.sync "with the same membermask value"), by instruction for the
    // deprecated forms. Lanes of a warp are almost always in one or two groups, so this is
    // linear in the warp size.
    let mut live_mask = 0u32;
    let mut groups: [(u32, u32, u32, u32); 32] = [(0, 0, 0, 0); 32]; // (key kind, key, mask, lanes)
    let mut ngroups = 0;
    let mut group_of = [usize::MAX; 32];
    for l in 0..n {
        let s = &warp[l];
        if live(s) {
            live_mask |= 1 << l;
        }
        if s.state != SLOT_WAITING || !is_warp_kind(s.kind) {
            continue;
        }
        let key = if s.flags & FLAG_NOSYNC != 0 { (u32::MAX, s.site, 0) } else { (s.kind, if s.kind == SYNC_WARP { 0 } else { s.mode }, s.mask) };
        let g = match groups[..ngroups].iter().position(|(k, m, mm, _)| (*k, *m, *mm) == key) {
            Some(g) => g,
            None => {
                groups[ngroups] = (key.0, key.1, key.2, 0);
                ngroups += 1;
                ngroups - 1
            }
        };
        groups[g].3 |= 1 << l;
        group_of[l] = g;
    }
    // Participants per lane (0 = not ready).
    let mut parts = [0u32; 32];
    for l in 0..n {
        let g = group_of[l];
        if g == usize::MAX {
            continue;
        }
        let s = &warp[l];
        let at = groups[g].3;
        if s.flags & FLAG_NOSYNC != 0 {
            // Deprecated forms and activemask: the warp is fully blocked (this runs after a
            // pass), so the lanes at the same instruction are exactly the active lanes.
            parts[l] = at;
        } else {
            let need = (s.mask | (1 << l)) & live_mask;
            if need & !at == 0 {
                parts[l] = need;
            }
        }
    }
    let mut shfl_waiting = 0u32;
    for (l, s) in warp.iter().enumerate() {
        if s.state == SLOT_WAITING && s.kind == SYNC_SHFL {
            shfl_waiting |= 1 << l;
        }
    }
    complete(warp, &parts, shfl_waiting)
}

/// PTX ISA 9.7.8.5 shfl.sync: the source lane `j` of `lane` for `mode` (up, down, bfly,
/// idx) with operands `b` and `c`, and whether it is in range (`p`); out of range, the
/// source is the lane itself (it keeps its own value).
#[doc(hidden)]
pub fn shfl_source(lane: u32, mode: u32, b: u32, c: u32) -> (usize, bool) {
    let bval = b & 31;
    let cval = c & 31;
    let segmask = (c >> 8) & 31;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, p) = match mode {
        0 => {
            let j = lane as i64 - bval as i64;
            (j, j >= max_lane as i64)
        }
        1 => {
            let j = (lane + bval) as i64;
            (j, j <= max_lane as i64)
        }
        2 => {
            let j = (lane ^ bval) as i64;
            (j, j <= max_lane as i64)
        }
        _ => {
            let j = (min_lane | (bval & !segmask)) as i64;
            (j, j <= max_lane as i64)
        }
    };
    // With p true, j >= max_lane >= 0 (up) or j is built from non-negative parts.
    (if p { j as usize } else { lane as usize }, p)
}

/// A shuffle that every lane of `warp` has reached (PTX ISA 9.7.8.5): each lane's source
/// lane `j` is computed from its own `b` and `c`; when `j` is valid the result is lane `j`'s
/// operand, or 0 when lane `j` is past the end of a partial last warp (what an H200 gives:
/// the spec leaves it undefined), else (not valid) the lane's own.
fn shfl_all(warp: &mut [SyncSlot]) {
    let n = warp.len();
    let mut a = [0u32; 32];
    for (l, s) in warp.iter().enumerate() {
        a[l] = s.a as u32;
    }
    for (l, s) in warp.iter_mut().enumerate() {
        let (j, pval) = shfl_source(l as u32, s.mode, s.b, s.c);
        let v = if j < n { a[j] } else { 0 };
        s.result = v as u64;
        s.pred = pval as u32;
        s.state = SLOT_RUNNABLE;
    }
}

/// The low `n` bits.
fn lane_bits(n: usize) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// Completes the collective of every lane `l` with `parts[l] != 0` (its participants) and
/// makes it runnable; returns whether any completed. `shfl_src`: the lanes whose operand a
/// shuffle may read (those waiting at a shuffle).
fn complete(warp: &mut [SyncSlot], parts: &[u32; 32], shfl_src: u32) -> bool {
    let n = warp.len();
    // Operands as they were on arrival (results overwrite slots while lanes complete).
    let mut a_of = [0u64; 32];
    for (l, s) in warp.iter().enumerate() {
        a_of[l] = s.a;
    }
    let mut progress = false;
    // Vote, match and redux results depend on the participant set (and for match on the
    // lane's own value): lanes with the same set share one computation.
    let mut memo: Option<((u32, u32, u32, u32), u32)> = None;
    for l in 0..n {
        let p = parts[l];
        if p == 0 {
            continue;
        }
        let s = &mut warp[l];
        let lane = l as u32;
        match s.kind {
            SYNC_WARP => {}
            SYNC_ACTIVEMASK => s.result = p as u64,
            SYNC_SHFL => {
                let (j, pval) = shfl_source(lane, s.mode, s.b, s.c);
                // Sourcing from a lane that does not participate is undefined; ptxr gives
                // that lane's last value if it is in this warp, 0 if it is past the end of a
                // partial last warp (as an H200 does), else the lane's own value.
                let v = if j >= n { 0 } else if (p | shfl_src) & (1 << j) != 0 { a_of[j] } else { s.a };
                s.result = v & 0xffff_ffff;
                s.pred = pval as u32;
            }
            SYNC_VOTE => {
                let key = (p, s.kind, 0, 0);
                let ballot = match memo {
                    Some((mk, b)) if mk == key => b,
                    _ => {
                        let b = (0..n).filter(|&m| p & (1 << m) != 0 && a_of[m] != 0).fold(0, |a, m| a | 1 << m);
                        memo = Some((key, b));
                        b
                    }
                };
                match s.mode {
                    0 => s.pred = (ballot == p) as u32,
                    1 => s.pred = (ballot != 0) as u32,
                    2 => s.pred = (ballot == 0 || ballot == p) as u32,
                    _ => s.result = ballot as u64,
                }
            }
            SYNC_MATCH => {
                let wide = s.flags & FLAG_64 != 0;
                let val = |x: u64| if wide { x } else { x & 0xffff_ffff };
                let mine = val(s.a);
                let same: u32 = (0..n).filter(|&m| p & (1 << m) != 0 && val(a_of[m]) == mine).fold(0, |a, m| a | 1 << m);
                if s.mode == 0 {
                    s.result = same as u64;
                } else {
                    // match.all: mask = membermask if all equal, else 0; p = all equal.
                    let all = same == p;
                    s.result = if all { p as u64 } else { 0 };
                    s.pred = all as u32;
                }
            }
            SYNC_REDUX => {
                let key = (p, s.kind, s.mode, s.flags);
                let r = match memo {
                    Some((mk, r)) if mk == key => r,
                    _ => {
                        let r = redux(s.mode, s.flags & FLAG_SIGNED != 0, (0..n).filter(|&m| p & (1 << m) != 0).map(|m| a_of[m] as u32));
                        memo = Some((key, r));
                        r
                    }
                };
                s.result = r as u64;
            }
            _ => continue,
        }
        s.state = SLOT_RUNNABLE;
        progress = true;
    }
    progress
}

/// redux.sync: the reduction `mode` (add, min, max, and, or, xor) of `vals`.
fn redux(mode: u32, signed: bool, vals: impl Iterator<Item = u32>) -> u32 {
    match mode {
        0 => vals.fold(0u32, |a, v| a.wrapping_add(v)),
        1 if signed => vals.map(|v| v as i32).min().unwrap_or(0) as u32,
        1 => vals.min().unwrap_or(0),
        2 if signed => vals.map(|v| v as i32).max().unwrap_or(0) as u32,
        2 => vals.max().unwrap_or(0),
        3 => vals.fold(u32::MAX, |a, v| a & v),
        4 => vals.fold(0, |a, v| a | v),
        _ => vals.fold(0, |a, v| a ^ v),
    }
}
