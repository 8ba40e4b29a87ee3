//! Clusters of CTAs (PTX ISA 8.x, sm_90): the CTAs of a cluster run together, each on a
//! thread of its own, with their shared windows side by side in one allocation (so that
//! `mapa` reaches another CTA's shared memory at a fixed offset from the CTA's own:
//! [`ClusterCtx`]), and meet at the cluster barrier (`barrier.cluster.wait`) here.

use crate::abi::{CtaCtx, STATUS_OK, STATUS_TIMEOUT};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

/// The cluster barrier of one cluster: how many of its CTAs have arrived in the current
/// phase, how many have not ended, and how many phases have completed.
pub struct ClusterSync {
    state: Mutex<State>,
    cv: Condvar,
}

struct State {
    arrived: u32,
    live: u32,
    phase: u64,
}

impl ClusterSync {
    /// The barrier of a cluster of `ctas` CTAs.
    pub fn new(ctas: u32) -> ClusterSync {
        ClusterSync { state: Mutex::new(State { arrived: 0, live: ctas, phase: 0 }), cv: Condvar::new() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completes the phase if every CTA that has not ended has arrived.
    fn settle(&self, g: &mut State) -> bool {
        if g.arrived > 0 && g.arrived >= g.live {
            g.arrived = 0;
            g.phase += 1;
            self.cv.notify_all();
            return true;
        }
        false
    }

    /// A CTA of the cluster has ended (whether it finished or stopped): the others no longer
    /// wait for it (as a thread that exits no longer counts at a CTA barrier).
    pub fn leave(&self) {
        let mut g = self.lock();
        g.live = g.live.saturating_sub(1);
        self.settle(&mut g);
    }

    /// Every thread of one CTA has arrived: waits until every CTA of the cluster has, or has
    /// ended. Returns [`STATUS_OK`], or [`STATUS_TIMEOUT`] once the launch's cancel word
    /// (`cancel`) is set (its time limit passed, or another CTA stopped with an error).
    pub fn meet(&self, cancel: Option<&AtomicU32>) -> u32 {
        let mut g = self.lock();
        let phase = g.phase;
        g.arrived += 1;
        if self.settle(&mut g) {
            return STATUS_OK;
        }
        loop {
            g = self.cv.wait_timeout(g, std::time::Duration::from_millis(20)).unwrap_or_else(|e| e.into_inner()).0;
            if g.phase != phase {
                return STATUS_OK;
            }
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed) != 0) {
                g.arrived -= 1;
                return STATUS_TIMEOUT;
            }
        }
    }
}

/// `HostFns::cluster_sync`: the cluster barrier for a CTA all of whose threads have arrived.
pub extern "C" fn cluster_sync(cta: *mut CtaCtx) -> u32 {
    let cta = unsafe { &*cta };
    if cta.cluster.is_null() {
        // A cluster of one CTA: its threads are all there.
        return STATUS_OK;
    }
    let sync = unsafe { &*((*cta.cluster).sync as *const ClusterSync) };
    // `CtaCtx::host` starts with the launch's cancel word.
    let cancel = (!cta.host.is_null()).then(|| unsafe { &*(cta.host as *const AtomicU32) });
    sync.meet(cancel)
}
