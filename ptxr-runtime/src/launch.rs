//! Launching kernels over a grid: limits, parameter marshalling, CTAs on all cores.

use crate::abi::{self, CtaCtx};
use crate::host::{HostState, HOST_FNS};
use rayon::prelude::*;

/// Grid or block dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub u32, pub u32, pub u32);

impl Dim3 {
    pub fn parse(s: &str) -> Result<Dim3, String> {
        let parts: Vec<&str> = s.split(',').map(|p| p.trim()).collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!("`{s}`: expected X[,Y[,Z]]"));
        }
        let mut d = [1u32; 3];
        for (k, p) in parts.iter().enumerate() {
            d[k] = p.parse().map_err(|_| format!("`{s}`: `{p}` is not a positive integer"))?;
            if d[k] == 0 {
                return Err(format!("`{s}`: dimensions must be at least 1"));
            }
        }
        Ok(Dim3(d[0], d[1], d[2]))
    }
    pub fn count(&self) -> u64 {
        self.0 as u64 * self.1 as u64 * self.2 as u64
    }
}



/// Launch configuration.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub dyn_smem: u32,
}

/// Why a launch failed.
#[derive(Debug)]
pub struct LaunchError(pub String);

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for LaunchError {}


thread_local! {
    static LAST_STATUS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The `abi::STATUS_*` code with which the last [`run_grid`] of this thread stopped
/// (`STATUS_OK` when it completed or failed before any CTA ran): what a host API maps to its
/// own error codes (the CUDA driver API of `ptxr-cuda`).
pub fn last_status() -> u32 {
    LAST_STATUS.with(|s| s.get())
}

/// The CTA each worker thread is running, as its linear index + 1 (0: none), and the grid
/// they belong to: what a watchdog reports (`running_ctas`). Two relaxed stores per CTA, each
/// worker to a slot of its own cache lines ([`Slot`]).
static RUNNING: [Slot; 256] = [const { Slot(std::sync::atomic::AtomicU64::new(0)) }; 256];

/// A worker's `RUNNING` slot, alone in 128 bytes (two cache lines, as the adjacent-line
/// prefetcher pairs them): with the slots side by side, every CTA's stores moved the line
/// between the cores (a kernel with one barrier and nothing else: 68% of its time in the
/// per-CTA code of `run_grid`).
#[repr(align(128))]
struct Slot(std::sync::atomic::AtomicU64);
static RUNNING_GRID: std::sync::Mutex<[u32; 3]> = std::sync::Mutex::new([1, 1, 1]);

/// Marks CTA `c` as running on this worker thread until dropped.
struct Running(usize);

impl Running {
    /// `slot`: the worker's slot (else the rayon thread's).
    fn enter(c: u64, slot: Option<usize>) -> Running {
        let k = slot.or(rayon::current_thread_index()).unwrap_or(0) % RUNNING.len();
        RUNNING[k].0.store(c + 1, std::sync::atomic::Ordering::Relaxed);
        Running(k)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING[self.0].0.store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The CTAs (`%ctaid`) running right now, one per busy worker thread.
pub fn running_ctas() -> Vec<[u32; 3]> {
    let g = *RUNNING_GRID.lock().unwrap_or_else(|e| e.into_inner());
    let (gx, gy) = (g[0].max(1) as u64, g[1].max(1) as u64);
    let mut v: Vec<[u32; 3]> = RUNNING
        .iter()
        .map(|a| a.0.load(std::sync::atomic::Ordering::Relaxed))
        .filter(|c| *c != 0)
        .map(|c| {
            let c = c - 1;
            [(c % gx) as u32, ((c / gx) % gy) as u32, (c / (gx * gy)) as u32]
        })
        .collect();
    v.sort();
    v
}

/// Static plus dynamic shared memory of a CTA: 227 KiB, what an sm_90 GPU (H100, H200) gives a
/// block that opts in (Triton's warp-specialized Hopper matmuls take 128 KiB and more).
pub const MAX_SMEM: u64 = 227 * 1024;


thread_local! {
    /// The shared-memory window this worker used last, kept for the next state it starts:
    /// rayon starts a state per split of the grid, and mapping a window each time (mmap and
    /// two mprotects) cost saxpy 60% in time.
    static LAST_WINDOW: std::cell::RefCell<Option<GuardedMem>> = const { std::cell::RefCell::new(None) };
}

/// A CTA's shared-memory window (a [`GuardedMem`]), reused by the worker thread.
struct SharedWindow(Option<GuardedMem>);

impl SharedWindow {
    /// A window of `len` bytes: with guard pages (`guarded`, as `ptxr run` launches), else
    /// on the heap (measured: the histogram benchmark ran 10-20% slower in mapped windows).
    fn take(len: usize, guarded: bool) -> SharedWindow {
        if !guarded {
            return SharedWindow(Some(GuardedMem::heap(len)));
        }
        let cached = LAST_WINDOW.with(|c| c.borrow_mut().take()).filter(|g| g.len == len);
        SharedWindow(Some(cached.unwrap_or_else(|| GuardedMem::new(len))))
    }

    fn mem(&mut self) -> &mut GuardedMem {
        self.0.as_mut().expect("a window until dropped")
    }

    fn clear(&mut self) {
        self.mem().clear()
    }

    fn start(&mut self) -> *mut u8 {
        self.mem().start()
    }
}

impl Drop for SharedWindow {
    fn drop(&mut self) {
        // Only mapped windows are worth keeping. During thread teardown the cache may be
        // gone; the window is then just unmapped.
        let g = self.0.take().filter(|g| !g.map.is_null());
        if g.is_some() {
            let _ = LAST_WINDOW.try_with(|c| *c.borrow_mut() = g);
        }
    }
}

/// The address a kernel gets for the data of argument `idx`: the data itself, or (`guarded`)


/// Launch facts of a kernel, whether from the compiler's `KernelInfo` (`ptxr`'s JIT-loaded
/// modules) or from generated bindings ([`KernelDesc`]).
#[doc(hidden)]
pub struct Shape<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub static_smem: u32,
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    pub frame_size: u32,
    pub uses_sync: bool,
    /// The CTA function runs groups of consecutive CTAs (`CtaCtx::group`).
    pub cta_group: bool,
    /// `.reqnctapercluster`: the cluster shape the kernel requires.
    pub cluster: Option<[u32; 3]>,
    /// The kernel cancels launches of clusters (`abi::DK_CANCELLABLE`).
    pub cancellable: bool,
    /// Compile errors of functions compiled as stubs, by source line (`ptxr`'s
    /// `Loaded::deferred`): a launch that reaches one reports it.
    pub deferred: &'a [(u32, u32, String)],
}

/// Checks block, grid, `.reqntid`/`.maxntid` and shared memory against the limits.
#[doc(hidden)]
pub fn check_config(k: &Shape, cfg: &LaunchConfig) -> Result<(), LaunchError> {
    let name = k.name;
    let threads = cfg.block.count();
    if threads > 1024 || cfg.block.0 > 1024 || cfg.block.1 > 1024 || cfg.block.2 > 64 {
        return Err(LaunchError(format!("block {}x{}x{} exceeds the limits (at most 1024 threads, x,y ≤ 1024, z ≤ 64)", cfg.block.0, cfg.block.1, cfg.block.2)));
    }
    if threads == 0 || cfg.grid.count() == 0 {
        return Err(LaunchError(format!("grid {}x{}x{} and block {}x{}x{} must have every dimension at least 1", cfg.grid.0, cfg.grid.1, cfg.grid.2, cfg.block.0, cfg.block.1, cfg.block.2)));
    }
    if cfg.grid.0 as u64 > (1u64 << 31) - 1 || cfg.grid.1 > 65535 || cfg.grid.2 > 65535 {
        return Err(LaunchError(format!("grid {}x{}x{} exceeds the limits (x < 2^31, y,z ≤ 65535)", cfg.grid.0, cfg.grid.1, cfg.grid.2)));
    }
    if let Some(r) = k.reqntid {
        if r != [cfg.block.0, cfg.block.1, cfg.block.2] {
            return Err(LaunchError(format!("kernel `{name}` requires a block of {}x{}x{} threads (.reqntid)", r[0], r[1], r[2])));
        }
    }
    if let Some(m) = k.maxntid {
        if threads > m[0] as u64 * m[1] as u64 * m[2] as u64 {
            return Err(LaunchError(format!("kernel `{name}` allows at most {}x{}x{} threads per block (.maxntid)", m[0], m[1], m[2])));
        }
    }
    let total_smem = k.static_smem as u64 + cfg.dyn_smem as u64;
    if total_smem > MAX_SMEM {
        return Err(LaunchError(format!("shared memory {} bytes ({} static + {} dynamic) exceeds the {} byte limit", total_smem, k.static_smem, cfg.dyn_smem, MAX_SMEM)));
    }
    Ok(())
}

thread_local! {
    static SERIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static TIMEOUT: std::cell::Cell<Option<std::time::Duration>> = const { std::cell::Cell::new(None) };
    static COOPERATIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static CLUSTER: std::cell::Cell<Option<[u32; 3]>> = const { std::cell::Cell::new(None) };
}

/// The most CTAs in a cluster: 16, the non-portable size an H100 allows (8 without opting in).
pub const MAX_CLUSTER_CTAS: u32 = 16;

/// Gives the launches of this thread clusters of `dims` CTAs (`None`, the default: the
/// kernel's `.reqnctapercluster`, else clusters of one CTA), as a GPU launch with the cluster
/// dimension attribute (`cudaLaunchKernelEx`, `cuLaunchKernelEx`): the CTAs of a cluster run
/// at once, each on a thread of its own, and reach each other's shared memory (`mapa`,
/// `.shared::cluster`) and meet at `barrier.cluster` (PTX ISA 8.x, sm_90). The grid must be a
/// whole number of clusters; a cluster has at most [`MAX_CLUSTER_CTAS`] CTAs.
pub fn set_cluster(dims: Option<[u32; 3]>) {
    CLUSTER.with(|c| c.set(dims));
}

/// At most this many CTAs in a cooperative launch ([`set_cooperative`]): each runs on a
/// thread of its own.
pub const MAX_COOPERATIVE_CTAS: u64 = 4096;

/// Makes the launches of this thread cooperative (`true`) or not (`false`, the default), as
/// `cudaLaunchCooperativeKernel` makes a GPU launch: every CTA of the grid runs at once, each
/// on a thread of its own (at most [`MAX_COOPERATIVE_CTAS`]), and the grid gets a zeroed
/// workspace whose address the kernel reads in `%envreg1`:`%envreg2` (`CtaCtx::grid_ws`),
/// where cooperative groups' `grid.sync()` counts the CTAs that have arrived and waits for
/// the others. In other launches CTAs run to their end one after another on each core, so a
/// CTA that waited for another could wait for one that has not started. A CTA that stops with
/// an error stops the others (they may be waiting for it).
pub fn set_cooperative(on: bool) {
    COOPERATIVE.with(|c| c.set(on));
}

/// Launches from this thread stop with an error once they have run for `limit` (`None`, the
/// default: no limit), as a GPU's watchdog reports "launch timed out": the error names the
/// kernel and the CTAs still running. Generated code polls for it at every back edge of the
/// kernel's loops (a kernel without loops ends on its own), and CTAs not yet started when
/// the limit passes do not start.
pub fn set_timeout(limit: Option<std::time::Duration>) {
    TIMEOUT.with(|t| t.set(limit));
}

/// Runs the launches of this thread with one CTA after another, in CTA order, on this
/// thread (`true`), or spread over all cores (`false`, the default). Serial launches are
/// deterministic even where a kernel's result depends on the order of CTAs (float atomics,
/// racing writes): `ptxr roundtrip` compares two executions this way.
pub fn set_serial(serial: bool) {
    SERIAL.with(|s| s.set(serial));
}

static GUARDED_BUFFERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Launches copy each buffer argument into memory that ends at an inaccessible page (and
/// back afterwards), and place each CTA's shared memory likewise, so that a kernel accessing
/// past a buffer's or its shared memory's end faults instead of corrupting the heap. The
/// command line turns this on (its crash guard reports the fault); it costs a copy of each
/// buffer per launch, so benchmarks leave it off.
pub fn set_guarded_buffers(on: bool) {
    GUARDED_BUFFERS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`set_guarded_buffers`] is on.
pub fn guarded_buffers() -> bool {
    GUARDED_BUFFERS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The launch's cluster shape when its clusters have more than one CTA: the one set for this
/// thread ([`set_cluster`]), else the kernel's `.reqnctapercluster`. Checks that the two agree,
/// and that the grid is a whole number of clusters of at most [`MAX_CLUSTER_CTAS`] CTAs.
fn cluster_shape(k: &Shape, cfg: &LaunchConfig) -> Result<Option<[u32; 3]>, LaunchError> {
    let name = k.name;
    let asked = CLUSTER.with(|c| c.get());
    let show = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
    if let (Some(a), Some(r)) = (asked, k.cluster) {
        if a != r {
            return Err(LaunchError(format!("{}: error: kernel `{name}` requires clusters of {} CTAs (.reqnctapercluster); the launch asks for {}", k.file, show(r), show(a))));
        }
    }
    let Some(d) = asked.or(k.cluster) else { return Ok(None) };
    let size = d.iter().map(|&x| x as u64).product::<u64>();
    if size == 0 || size > MAX_CLUSTER_CTAS as u64 {
        return Err(LaunchError(format!("{}: error: kernel `{name}`: clusters of {} CTAs; a cluster has 1 to {MAX_CLUSTER_CTAS} CTAs", k.file, show(d))));
    }
    let g = [cfg.grid.0, cfg.grid.1, cfg.grid.2];
    if (0..3).any(|a| g[a] % d[a] != 0) {
        return Err(LaunchError(format!("{}: error: kernel `{name}`: grid {} is not a whole number of clusters of {} CTAs", k.file, show(g), show(d))));
    }
    if size == 1 {
        return Ok(None);
    }
    Ok(Some(d))
}

/// Runs every CTA of the grid on the rayon pool; `check_config` has passed.
///
/// # Safety
/// `f` must be the CTA function of the kernel `k` describes, and `pbuf` its parameter buffer
/// (pointer parameters valid for everything the kernel does with them).
#[doc(hidden)]
pub unsafe fn run_grid(f: CtaFn, k: &Shape, cfg: &LaunchConfig, pbuf: &[u8]) -> Result<(), LaunchError> {
    LAST_STATUS.with(|s| s.set(abi::STATUS_OK));
    let name = k.name;
    let threads = cfg.block.count();
    let total_smem = k.static_smem as u64 + cfg.dyn_smem as u64;
    // (`clc` is set below, before anything reads `host`.)
    let mut host = HostState::new();
    let params_ptr = pbuf.as_ptr() as usize;
    // The checking mode: the parameters may be read through a generic address (`cvta.param`).
    if let Some(list) = host.check.as_mut() {
        list.push(crate::check::Allocation { start: params_ptr as u64, len: pbuf.len() as u64, name: "the kernel's parameters".to_string() });
    }
    let ncta = cfg.grid.count();
    let smem_len = (total_smem as usize + 15) / 16 * 16;
    let failure: std::sync::Mutex<Option<(u64, CtaCtx)>> = std::sync::Mutex::new(None);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let nthreads = threads as usize;
    *RUNNING_GRID.lock().unwrap_or_else(|e| e.into_inner()) = [cfg.grid.0, cfg.grid.1, cfg.grid.2];
    // One frame slot per lane of each warp (a row of the block in runs of 32 threads:
    // warp-vector kernels keep a frame of 32 slots per warp).
    let lanes = (cfg.block.0 as usize + 31) / 32 * 32 * cfg.block.1 as usize * cfg.block.2 as usize;
    // A kernel whose CTA function runs groups of consecutive CTAs (`CtaCtx::group`: a
    // grid-stride loop's warps then walk neighbouring spans of each stride together) gets
    // groups of up to 256 CTAs, fewer where the grid would leave fewer than 4 groups per
    // pool thread or the group's warp frames would pass 256 KiB. The longer the run of each
    // stride that a group walks, the better the hardware prefetchers follow it: grid-stride
    // saxpy over 2^26 floats in 1024 CTAs of 256 threads on a Zen 4 VM, old and new builds
    // alternating, one core 0.029-0.030 s -> 0.024-0.026 s, two cores 0.015-0.019 s ->
    // 0.013-0.017 s (groups of at most 16 before).
    // `PTXR_CTA_GROUP=n` sets the group size (1: no groups), for tests and measurements.
    let cooperative = COOPERATIVE.with(|c| c.get()) && !SERIAL.with(|s| s.get());
    let cluster = cluster_shape(k, cfg)?;
    if cooperative && ncta > MAX_COOPERATIVE_CTAS {
        return Err(LaunchError(format!("{}: error: kernel `{name}`: a cooperative launch of {ncta} CTAs; ptxr runs at most {MAX_COOPERATIVE_CTAS} at once", k.file)));
    }
    // The grid workspace of a cooperative launch (`set_cooperative`): cooperative groups'
    // grid barrier counts arrivals in its second word.
    let mut workspace = [0u64; 4];
    let no_thread = std::sync::atomic::AtomicBool::new(false);
    let grid_ws = if cooperative { workspace.as_mut_ptr() as usize } else { 0 };
    //
    // A kernel with shared memory (grid-stride loops with barriers: a histogram, a sum with
    // a tree in shared memory) gets a window per CTA of the group (`abi::group_smem_stride`)
    // and groups of at most 16: a grid-stride sum over 2^24 ints in 1024 CTAs with a shared
    // tree after it, 2 cores, 0.0032-0.0037 s alone, 0.0023-0.0026 s in groups of 4 to 16,
    // 0.0038-0.0047 s in groups of 64 to 128; the shared byte histogram 0.0148 s alone,
    // 0.0133 s in groups of 4 to 16. Guarded launches (`set_guarded_buffers`: `ptxr run`)
    // run such kernels one CTA at a time unless `PTXR_CTA_GROUP` asks: a lone CTA's window
    // ends at an inaccessible page, a group's windows lie side by side.
    let group = match (k.cta_group, std::env::var("PTXR_CTA_GROUP").ok().and_then(|s| s.parse::<u64>().ok())) {
        _ if cooperative || cluster.is_some() => 1,
        (false, _) => 1,
        (true, Some(n)) => n.clamp(1, 1 << 16),
        (true, None) if total_smem > 0 && guarded_buffers() => 1,
        (true, None) => {
            // Up to 256 CTAs (16 with shared memory), at least 4 groups per pool thread,
            // and the group's warp frames within 256 KiB (each lane's frame slot for each CTA).
            let per_cta = (k.frame_size as u64 * lanes as u64).max(1);
            let by_frames = ((256u64 << 10) / per_cta).max(1);
            let most = if total_smem > 0 { 16 } else { 256 };
            (ncta / (4 * rayon::current_num_threads().max(1) as u64)).clamp(1, most).min(by_frames)
        }
    };
    let group = if k.cancellable { 1 } else { group };
    let ngroups = ncta.div_ceil(group);
    // A kernel that cancels cluster launches (`clusterlaunchcontrol.try_cancel`) has its
    // clusters (CTAs) started in the order of a counter that cancellations take from too
    // (`host::Clc`); not a cooperative launch, whose CTAs all run at once.
    let dynamic = k.cancellable && !cooperative;
    if dynamic {
        let units = match cluster {
            Some(cd) => ncta / cd.iter().map(|&x| x as u64).product::<u64>(),
            None => ncta,
        };
        host.clc = Some(crate::host::Clc { next: std::sync::atomic::AtomicU64::new(0), units, cluster: cluster.unwrap_or([1, 1, 1]), grid: [cfg.grid.0, cfg.grid.1, cfg.grid.2] });
    }
    let host = host;
    let host_ptr = &host as *const HostState as usize;
    let falign = frame_align(k.frame_size);
    // Slack to align the frames (`frame_align`).
    let frame_words = if k.uses_sync { (k.frame_size as usize * lanes * group as usize + 15) / 16 + falign / 16 } else { 0 };
    let uses_sync = k.uses_sync;
    // The slots are written only on the way to the runtime's `resolve`: after a CTA that
    // never called it (every collective completed in generated code) they are still clear.
    let guarded = GUARDED_BUFFERS.load(std::sync::atomic::Ordering::Relaxed);
    // A group's windows, one per CTA (`abi::group_smem_len`).
    let window_len = crate::abi::group_smem_len(total_smem, group) as usize;
    let init = || (SharedWindow::take(window_len, guarded), vec![0u128; frame_words], vec![abi::SyncSlot::default(); if uses_sync { nthreads } else { 0 }], false);
    type State = (SharedWindow, Vec<u128>, Vec<abi::SyncSlot>, bool);
    // The CTAs of a cluster wait for each other (`barrier.cluster`) as those of a cooperative
    // launch may: a CTA that stops with an error stops them.
    let peers_wait = cooperative || cluster.is_some();
    // `cl`: in a launch with clusters, the CTA's shared window and its `ClusterCtx`.
    let run_cta = |(smem, frames, slots, dirty): &mut State, g: u64, cl: Option<(usize, usize)>| {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            let c = g * group;
            let (gx, gy) = (cfg.grid.0 as u64, cfg.grid.1 as u64);
            // A one-dimensional grid (the common case) needs no division.
            let ctaid = if c < gx { [c as u32, 0, 0] } else { [(c % gx) as u32, ((c / gx) % gy) as u32, (c / (gx * gy)) as u32] };
            let _running = Running::enter(c, if peers_wait { Some(c as usize) } else { None });
            // Shared memory starts uninitialized on a GPU; zero it so runs are reproducible
            // (a cluster's windows are zeroed together).
            if cl.is_none() {
                smem.clear();
            }
            let mut ctx = CtaCtx {
                params: params_ptr as *const u8,
                shared: match cl {
                    Some((w, _)) => w as *mut u8,
                    None => smem.start(),
                },
                ctaid,
                nctaid: [cfg.grid.0, cfg.grid.1, cfg.grid.2],
                ntid: [cfg.block.0, cfg.block.1, cfg.block.2],
                dyn_smem: cfg.dyn_smem,
                total_smem: total_smem as u32,
                status: 0,
                status_line: 0,
                rt: &HOST_FNS,
                host: host_ptr as *mut u8,
                status_thread: 0,
                smid: rayon::current_thread_index().unwrap_or(0) as u32,
                frames: std::ptr::null_mut(),
                slots: std::ptr::null_mut(),
                sched: std::ptr::null_mut(),
                group: group.min(ncta - c) as u32,
                grid_ws: grid_ws as *mut u8,
                cluster: cl.map_or(std::ptr::null(), |(_, c)| c as *const abi::ClusterCtx),
            };
            let mut sched = super::warp::Sched::default();
            if uses_sync {
                if *dirty {
                    slots.iter_mut().for_each(|s| *s = abi::SyncSlot::default());
                }
                let p = frames.as_mut_ptr() as *mut u8;
                ctx.frames = p.wrapping_add(p.align_offset(falign));
                ctx.slots = slots.as_mut_ptr();
                ctx.sched = &mut sched as *mut super::warp::Sched as *mut u8;
            }
            if host.check.is_some() {
                crate::check::begin_cta(total_smem as u32);
            }
            // A CTA that would start after the time limit stops before it runs.
            let st = if host.cancel.load(std::sync::atomic::Ordering::Relaxed) != 0 {
                ctx.status = abi::STATUS_TIMEOUT;
                0
            } else {
                match unsafe { crate::fault::call_cta(f, &mut ctx) } {
                    crate::fault::FAULTED => {
                        ctx.status = abi::STATUS_MEMORY_FAULT;
                        ctx.status_line = 0;
                        host.set_detail(ctx.ctaid, format!("{:#x}", crate::fault::last_fault_address()));
                        1
                    }
                    r => r,
                }
            };
            *dirty = sched.called;
            if st != 0 || ctx.status != 0 {
                // In a group, `ctaid` is the CTA of the warp that stopped.
                let c = ctx.ctaid[0] as u64 + gx * (ctx.ctaid[1] as u64 + gy * ctx.ctaid[2] as u64);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                // The other CTAs of a cooperative launch may be waiting for this one: they
                // stop at their next back edge (as at a time limit: cancel word 2), and the
                // error reported is this one, not theirs.
                let relaxed = std::sync::atomic::Ordering::Relaxed;
                let by_peer = |x: &CtaCtx| peers_wait && x.status == abi::STATUS_TIMEOUT && host.cancel.load(relaxed) == 2;
                if peers_wait && !by_peer(&ctx) {
                    let _ = host.cancel.compare_exchange(0, 2, std::sync::atomic::Ordering::SeqCst, relaxed);
                }
                let mut g = failure.lock().unwrap_or_else(|e| e.into_inner());
                let better = g.as_ref().map_or(true, |(c0, x0)| (by_peer(&ctx), c) < (by_peer(x0), *c0));
                if better {
                    *g = Some((c, ctx));
                }
            }
    };
    let body = |st: &mut State, g: u64| run_cta(st, g, None);
    // A launch with clusters: cluster `q` (x fastest in the grid of clusters) runs its CTAs
    // at once, rank 0 on this thread and the others each on a thread of its own, with their
    // shared windows `stride` bytes apart in one fresh (zeroed) mapping (`abi::ClusterCtx`).
    // The stride is a multiple of 16 MiB (`abi::cluster_smem_stride`), so every window gets
    // the same padding to the largest alignment a variable asks for
    // (`FnEmitter::shared_base`) and variables stay `stride` apart; only the pages a kernel
    // touches are backed.
    let run_cluster = |st: &mut State, q: u64| {
        let Some(cd) = cluster else { return };
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let size = cd.iter().product::<u32>();
        let stride = abi::cluster_smem_stride(smem_len as u64) as usize;
        let mut region = GuardedMem::new(stride * size as usize);
        let sync = crate::cluster::ClusterSync::new(size);
        let cctx = abi::ClusterCtx { dims: cd, stride: stride as u32, sync: &sync as *const crate::cluster::ClusterSync as *const u8 };
        let cptr = &cctx as *const abi::ClusterCtx as usize;
        let base = region.start() as usize;
        let (gx, gy) = (cfg.grid.0 as u64, cfg.grid.1 as u64);
        let (ncx, ncy) = (gx / cd[0] as u64, gy / cd[1] as u64);
        let pos = [q % ncx, (q / ncx) % ncy, q / (ncx * ncy)];
        let cta_of = |r: u64| {
            let local = [r % cd[0] as u64, (r / cd[0] as u64) % cd[1] as u64, r / (cd[0] as u64 * cd[1] as u64)];
            let id: Vec<u64> = (0..3).map(|a| pos[a] * cd[a] as u64 + local[a]).collect();
            id[0] + gx * (id[1] + gy * id[2])
        };
        let (init, run_cta, sync, no_thread, host) = (&init, &run_cta, &sync, &no_thread, &host);
        std::thread::scope(|s| {
            for r in 1..size as u64 {
                let (c, w) = (cta_of(r), base + r as usize * stride);
                let run = move || {
                    let mut st = init();
                    run_cta(&mut st, c, Some((w, cptr)));
                    sync.leave();
                };
                if std::thread::Builder::new().spawn_scoped(s, run).is_err() {
                    // Without a thread for this CTA the others could wait for it forever.
                    no_thread.store(true, std::sync::atomic::Ordering::Relaxed);
                    host.cancel.store(2, std::sync::atomic::Ordering::SeqCst);
                    sync.leave();
                }
            }
            run_cta(st, cta_of(0), Some((base, cptr)));
            sync.leave();
        });
    };
    let nclusters = cluster.map_or(0, |cd| ncta / cd.iter().map(|&x| x as u64).product::<u64>());
    // Units `0..n` (CTAs, or clusters), each on a thread of its own and all at once (a
    // cooperative launch). Without a thread for some unit the others could wait for it
    // forever: they are cancelled.
    let each_at_once = |n: u64, run: &(dyn Fn(&mut State, u64) + Sync)| {
        let (init, no_thread, host) = (&init, &no_thread, &host);
        std::thread::scope(|cs| {
            for u in 0..n {
                let go = move || {
                    let mut st = init();
                    run(&mut st, u);
                };
                if std::thread::Builder::new().spawn_scoped(cs, go).is_err() {
                    no_thread.store(true, std::sync::atomic::Ordering::Relaxed);
                    host.cancel.store(2, std::sync::atomic::Ordering::SeqCst);
                    break;
                }
            }
        });
    };
    // The watchdog (`set_timeout`): past the limit it sets the launch's cancel word, which
    // generated code polls at the back edges of the kernel's loops, and notes the CTAs then
    // running for the message.
    let limit = TIMEOUT.with(|t| t.get());
    let finished = (std::sync::Mutex::new(false), std::sync::Condvar::new());
    let timed_out: std::sync::Mutex<Option<Vec<[u32; 3]>>> = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        if let Some(t) = limit {
            let (finished, timed_out, host) = (&finished, &timed_out, &host);
            scope.spawn(move || {
                let g = finished.0.lock().unwrap_or_else(|e| e.into_inner());
                let (g, _) = finished.1.wait_timeout_while(g, t, |done| !*done).unwrap_or_else(|e| e.into_inner());
                if !*g {
                    *timed_out.lock().unwrap_or_else(|e| e.into_inner()) = Some(running_ctas());
                    host.cancel.store(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
        if let Some(clc) = host.clc.as_ref() {
            // Clusters (CTAs) in the counter's order, on one core or all.
            let run = |st: &mut State, q: u64| if cluster.is_some() { run_cluster(st, q) } else { body(st, q) };
            let workers = if SERIAL.with(|s| s.get()) { 1 } else { rayon::current_num_threads().max(1) };
            (0..workers).into_par_iter().for_each_init(init, |st, _| {
                while let Some(q) = clc.take() {
                    run(st, q);
                }
            });
        } else if cluster.is_some() {
            // Clusters one after another (`set_serial`), every cluster at once (a cooperative
            // launch: each cluster's rank 0 on a thread of its own, which `run_cluster` gives
            // the other ranks theirs, so that the grid's CTAs all run together and may meet at
            // a grid-wide barrier as well as at their clusters'), or on all cores.
            if SERIAL.with(|s| s.get()) {
                let mut st = init();
                for q in 0..nclusters {
                    run_cluster(&mut st, q);
                }
            } else if cooperative {
                each_at_once(nclusters, &run_cluster);
            } else {
                (0..nclusters).into_par_iter().for_each_init(init, run_cluster);
            }
        } else if SERIAL.with(|s| s.get()) {
            let mut st = init();
            for g in 0..ngroups {
                body(&mut st, g);
            }
        } else if cooperative {
            // Every CTA at once, each on a thread of its own (`set_cooperative`).
            each_at_once(ngroups, &body);
        } else {
            (0..ngroups).into_par_iter().for_each_init(init, body);
        }
        *finished.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        finished.1.notify_all();
    });
    host.flush();
    if no_thread.into_inner() {
        let what = match (cooperative, cluster.is_some()) {
            (true, true) => "a cooperative launch with clusters",
            (false, true) => "a launch with clusters",
            _ => "a cooperative launch",
        };
        return Err(LaunchError(format!("{}: error: kernel `{name}`: {what} of {ncta} CTAs could not start a thread for every CTA", k.file)));
    }
    if let Some((_, ctx)) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        LAST_STATUS.with(|s| s.set(ctx.status));
        let nt = cfg.block;
        let mut t = ctx.status_thread;
        // A warp-path deadlock names the other barrier's line (`abi::DEADLOCK_OTHER_LINE`).
        let other_line = (ctx.status == abi::STATUS_DEADLOCK && t & abi::DEADLOCK_OTHER_LINE != 0).then(|| {
            let l = t & !abi::DEADLOCK_OTHER_LINE;
            t = 0;
            l
        });
        let tid = (t % nt.0, (t / nt.0) % nt.1, t / (nt.0 * nt.1));
        let whr = format!("{}:{}: in kernel `{name}`, CTA ({},{},{}), thread ({},{},{})", k.file, ctx.status_line, ctx.ctaid[0], ctx.ctaid[1], ctx.ctaid[2], tid.0, tid.1, tid.2);
        if ctx.status == abi::STATUS_TIMEOUT {
            let ctas = timed_out.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_default();
            let list: Vec<String> = ctas.iter().take(8).map(|c| format!("({},{},{})", c[0], c[1], c[2])).collect();
            let more = if ctas.len() > 8 { format!(" and {} more", ctas.len() - 8) } else { String::new() };
            let at = if ctx.status_line > 0 { format!("; CTA ({},{},{}), thread ({},{},{}) stopped at line {}", ctx.ctaid[0], ctx.ctaid[1], ctx.ctaid[2], tid.0, tid.1, tid.2, ctx.status_line) } else { String::new() };
            let secs = limit.map_or(0.0, |t| t.as_secs_f64());
            return Err(LaunchError(format!("{}: error: kernel `{name}`: launch timed out after {secs} s (the launch's time limit); CTAs still running: {}{more}{at}", k.file, if list.is_empty() { "none".to_string() } else { list.join(", ") })));
        }
        let msg = match ctx.status {
            abi::STATUS_UNSUPPORTED => {
                match k.deferred.iter().find(|(l, _, _)| *l == ctx.status_line) {
                    Some((l, c, why)) => format!("{}:{l}:{c}: error: kernel `{name}` cannot run: {why}", k.file),
                    None => format!("{}:{}: error: kernel `{name}` cannot run: it could not be compiled", k.file, ctx.status_line),
                }
            }
            abi::STATUS_TRAP => format!("{whr}: error: `trap` executed"),
            abi::STATUS_BRKPT => format!("{whr}: error: `brkpt` executed (no debugger)"),
            abi::STATUS_ASSERT => {
                let m = host.assert_msg.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
                format!("{whr}: error: device assertion failed: {m}")
            }
            abi::STATUS_DEADLOCK => {
                let d = host.detail().unwrap_or_default();
                let d = match other_line {
                    Some(l) if d.is_empty() => format!("warps wait at line {l} and at line {}", ctx.status_line),
                    _ => d,
                };
                let d = if d.is_empty() { String::new() } else { format!(" ({d})") };
                format!("{whr}: error: deadlock: threads can never all arrive at this synchronization point{d}")
            }
            abi::STATUS_BAD_BARRIER => format!("{whr}: error: barrier thread count must be a multiple of 32 and at most the CTA size (PTX ISA 9.7.12.1)"),
            abi::STATUS_SYNC_INDIRECT => format!("{whr}: error: a function that synchronizes was called through a function pointer; ptxr runs such functions only when they are called directly (it inlines them into the kernel)"),
            abi::STATUS_WARP_APART => format!("{whr}: error: a `.sync` warp collective whose membermask names a lane that is not at this instruction: on the warp path the lanes that reach an instruction together run it, so lanes that wait for others (a mask naming lanes that went elsewhere, which only a collective at another instruction could complete on sm_70 and up) stop here; `--exec thread` runs such meetings (a mask naming only the lanes that take this path runs on either)"),
            abi::STATUS_CTA_PAIR => format!("{whr}: error: tcgen05 with .cta_group::2: the CTA's pair (ranks 2k and 2k + 1 of its cluster) is not whole (launch with clusters of an even number of CTAs), or the pair's MMA has an M other than 128 or 256 in its instruction descriptor (or M = 128 with A in tensor memory or block scaling, which ptxr does not run yet)"),
            abi::STATUS_PARTIAL_WARP => format!("{whr}: error: this warp-wide matrix instruction needs all 32 threads of the warp, but the block leaves this warp partial"),
            abi::STATUS_BAD_ADDRESS => format!("{whr}: error: an address outside the CTA's shared memory (a wgmma matrix descriptor, or the shared-memory side of a bulk copy)"),
            abi::STATUS_BAD_TENSOR_MAP => format!("{whr}: error: cp.async.bulk.tensor: the tensor map is not one that ptxr encoded, or not of the copy's rank or mode (tiled for .tile, .tile::gather4 and .tile::scatter4, im2col for .im2col; make it with ptxr_tensor_map_encode_tiled or _im2col, or `tmap:` for ptxr run)"),
            abi::STATUS_CHECK => {
                // `check_access` wrote "COLUMN\0REPORT".
                let d = host.detail().unwrap_or_default();
                let (col, what) = d.split_once('\0').unwrap_or(("0", d.as_str()));
                let col = if col == "0" { String::new() } else { format!(":{col}") };
                format!("{}:{}{col}: in kernel `{name}`, CTA ({},{},{}), thread ({},{},{}): error: {what}", k.file, ctx.status_line, ctx.ctaid[0], ctx.ctaid[1], ctx.ctaid[2], tid.0, tid.1, tid.2)
            }
            abi::STATUS_MEMORY_FAULT => {
                let at = host.detail().unwrap_or_default();
                format!("{}: in kernel `{name}`, CTA ({},{},{}): error: an illegal memory access at address {at} (a read or write outside all memory the kernel may reach: check buffer sizes and indices)", k.file, ctx.ctaid[0], ctx.ctaid[1], ctx.ctaid[2])
            }
            abi::STATUS_BAD_TENSOR_COPY => format!("{whr}: error: cp.async.bulk.tensor: the box's innermost coordinate times the element size is not a multiple of 16 bytes, a store's coordinates are negative, a .tile::gather4/.tile::scatter4 map's box is more than one row, or a packed sub-byte copy the map's type does not allow (an innermost coordinate that is not a whole number of 2- or 16-element units, a store of b4x16_p64, a mode other than .tile) (an NVIDIA GPU stops with an illegal instruction)"),
            s => format!("{whr}: error: launch failed (status {s})"),
        };
        return Err(LaunchError(msg));
    }
    run_children(k, &host)
}

/// Runs the grids that the grid of `k` launched from the device (CUDA dynamic parallelism:
/// `cudaLaunchDeviceV2`), once the launching grid has finished: every ordering that CUDA
/// gives device-side launches holds (a child grid starts after its launch and completes
/// before the launching grid is complete; grids launched by different CTAs are unordered).
/// Grids that the children launch run after each child, the same way.
fn run_children(k: &Shape, host: &HostState) -> Result<(), LaunchError> {
    let kids = std::mem::take(&mut *host.launched.lock().unwrap_or_else(|e| e.into_inner()));
    // The launching thread's cluster shape is not theirs.
    struct Restore(Option<[u32; 3]>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CLUSTER.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CLUSTER.with(|c| c.replace(None)));
    for c in kids {
        // SAFETY: the descriptor is a constant of the module that launched this grid.
        let d = unsafe { &*c.kernel };
        let name = unsafe { std::ffi::CStr::from_ptr(d.name as *const std::ffi::c_char) }.to_string_lossy().into_owned();
        let flag = |f: u32| d.flags & f != 0;
        let shape = Shape { name: &name, file: k.file, static_smem: d.static_smem, reqntid: flag(abi::DK_REQNTID).then_some(d.reqntid), maxntid: flag(abi::DK_MAXNTID).then_some(d.maxntid), frame_size: d.frame_size, uses_sync: flag(abi::DK_USES_SYNC), cta_group: flag(abi::DK_CTA_GROUP), cluster: None, cancellable: flag(abi::DK_CANCELLABLE), deferred: k.deferred };
        let cfg = LaunchConfig { grid: Dim3(c.grid[0], c.grid[1], c.grid[2]), block: Dim3(c.block[0], c.block[1], c.block[2]), dyn_smem: c.smem };
        let bytes = unsafe { std::slice::from_raw_parts(c.params.as_ptr() as *const u8, (d.param_size as usize).max(8)) };
        let r = check_config(&shape, &cfg).and_then(|()| unsafe { run_grid(d.cta, &shape, &cfg, bytes) });
        if let Err(e) = r {
            return Err(LaunchError(format!("{} (in grid `{name}` launched from the device by kernel `{}`)", e.0, k.name)));
        }
    }
    Ok(())
}

/// The alignment of a launch's thread frames: the largest power of two that divides the
/// frame size, from 64 (a cache line: the warp path's frames, each a multiple of 64 bytes,
/// then keep their vectors of 32 lanes within lines) to 4096. Generated code makes the frame
/// size a multiple of the largest alignment its `.local` variables ask for, so that each
/// thread's copy of them is aligned (the C runtime does the same).
pub fn frame_align(frame_size: u32) -> usize {
    if frame_size == 0 {
        return 64;
    }
    (1usize << frame_size.trailing_zeros()).clamp(64, 4096)
}

/// One parameter of a kernel compiled ahead of time (see [`KernelDesc`]).
#[derive(Clone, Copy, Debug)]
pub struct ParamDesc {
    pub name: &'static str,
    /// The PTX type without the dot (`"u64"`, `"f32"`, `"b8"` for by-value structs).
    pub ty: &'static str,
    pub offset: u32,
    pub size: u32,
}

/// What [`launch_cta_fn`] needs to know about a kernel compiled ahead of time: the
/// `KernelInfo` of the compiler (`ptxr::codegen::KernelInfo`) as constants (generated
/// bindings embed one per kernel).
#[derive(Clone, Copy, Debug)]
pub struct KernelDesc {
    pub name: &'static str,
    /// The PTX file, for error messages (`FILE:LINE: in kernel ...`).
    pub file: &'static str,
    pub params: &'static [ParamDesc],
    pub param_size: u32,
    pub static_smem: u32,
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    pub frame_size: u32,
    pub uses_sync: bool,
    /// The CTA function runs groups of consecutive CTAs (`CtaCtx::group`).
    pub cta_group: bool,
    /// `.reqnctapercluster`: the cluster shape the kernel requires.
    pub cluster: Option<[u32; 3]>,
    /// The kernel cancels launches of clusters (`abi::DK_CANCELLABLE`).
    pub cancellable: bool,
}

/// The CTA function of a kernel: `int32_t __ptxr_cta_<kernel>(CtaCtx*)`.
pub type CtaFn = unsafe extern "C" fn(*mut CtaCtx) -> i32;

/// One argument value for [`launch_cta_fn`]: raw little-endian bits of the parameter's size.
#[derive(Clone, Copy, Debug)]
pub enum ArgValue<'a> {
    B8(u8),
    B16(u16),
    B32(u32),
    B64(u64),
    /// A by-value aggregate (`.param .b8 p[N]`) or any parameter as raw bytes.
    Bytes(&'a [u8]),
}

macro_rules! arg_from {
    ($($t:ty => $v:ident($conv:expr)),*) => {$(
        impl From<$t> for ArgValue<'_> {
            fn from(x: $t) -> Self { ArgValue::$v($conv(x)) }
        }
    )*};
}
arg_from!(u8 => B8(|x| x), i8 => B8(|x: i8| x as u8), u16 => B16(|x| x), i16 => B16(|x: i16| x as u16),
    u32 => B32(|x| x), i32 => B32(|x: i32| x as u32), f32 => B32(f32::to_bits),
    u64 => B64(|x| x), i64 => B64(|x: i64| x as u64), f64 => B64(f64::to_bits));

impl<'a, const N: usize> From<&'a [u8; N]> for ArgValue<'a> {
    fn from(x: &'a [u8; N]) -> Self {
        ArgValue::Bytes(x)
    }
}

impl ArgValue<'_> {
    fn bytes(&self) -> ([u8; 8], &[u8]) {
        match self {
            ArgValue::B8(x) => ([*x, 0, 0, 0, 0, 0, 0, 0], &[]),
            ArgValue::B16(x) => ((*x as u64).to_le_bytes(), &[]),
            ArgValue::B32(x) => ((*x as u64).to_le_bytes(), &[]),
            ArgValue::B64(x) => (x.to_le_bytes(), &[]),
            ArgValue::Bytes(b) => ([0; 8], b),
        }
    }
    fn size(&self) -> usize {
        match self {
            ArgValue::B8(_) => 1,
            ArgValue::B16(_) => 2,
            ArgValue::B32(_) => 4,
            ArgValue::B64(_) => 8,
            ArgValue::Bytes(b) => b.len(),
        }
    }
}

/// Launches a kernel compiled ahead of time (linked into this program, e.g. by
/// `ptxr::Build`) over the grid on all cores, with the same scheduling, limits and error
/// messages as `ptxr`'s `Loaded::launch`. `args` holds one value per parameter, of the parameter's
/// size; pointers are passed as `u64` addresses.
///
/// # Safety
/// `cta` must be `__ptxr_cta_<k.name>` of the object `k` was generated for, and every address
/// passed must be valid for whatever the kernel reads and writes through it during the launch.
pub unsafe fn launch_cta_fn(cta: CtaFn, k: &KernelDesc, cfg: &LaunchConfig, args: &[ArgValue]) -> Result<(), LaunchError> {
    let shape = Shape { name: k.name, file: k.file, static_smem: k.static_smem, reqntid: k.reqntid, maxntid: k.maxntid, frame_size: k.frame_size, uses_sync: k.uses_sync, cta_group: k.cta_group, cluster: k.cluster, cancellable: k.cancellable, deferred: &[] };
    check_config(&shape, cfg)?;
    if args.len() != k.params.len() {
        return Err(LaunchError(format!("kernel `{}` takes {} parameters, {} given", k.name, k.params.len(), args.len())));
    }
    let mut pbuf = vec![0u8; k.param_size.max(8) as usize];
    for (idx, (a, p)) in args.iter().zip(k.params.iter()).enumerate() {
        if a.size() != p.size as usize {
            return Err(LaunchError(format!("argument {idx} (`{}`) is .{} ({} bytes) but {} bytes were given", p.name, p.ty, p.size, a.size())));
        }
        let off = p.offset as usize;
        let (small, big) = a.bytes();
        let src = if big.is_empty() { &small[..p.size as usize] } else { big };
        pbuf[off..off + p.size as usize].copy_from_slice(src);
    }
    run_grid(cta, &shape, cfg, &pbuf)
}

/// Element types a kernel may read and write through a pointer: every bit pattern is a valid
/// value (integers, floats, arrays of them).
///
/// # Safety
/// Implement only for types without padding, invalid bit patterns, or pointers.
pub unsafe trait Plain: Copy + 'static {}
macro_rules! plain {
    ($($t:ty),*) => {$(unsafe impl Plain for $t {})*};
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

/// A buffer that safe generated bindings pass to a pointer parameter: the kernel receives the
/// address of its first element. Taken by `&mut` because the kernel may write through any
/// pointer it gets.
pub trait KernelBuf {
    fn kernel_addr(&mut self) -> u64;
    /// The buffer's size in bytes, which bindings built for checking (`ptxr::Build::check`)
    /// check the kernel's accesses against; `None` (the default): unknown, and every address
    /// from the buffer's start on counts as inside it.
    fn kernel_bytes(&self) -> Option<usize> {
        None
    }
}
impl<T: Plain> KernelBuf for [T] {
    fn kernel_addr(&mut self) -> u64 {
        self.as_mut_ptr() as u64
    }
    fn kernel_bytes(&self) -> Option<usize> {
        Some(std::mem::size_of_val(self))
    }
}
impl<T: Plain> KernelBuf for Vec<T> {
    fn kernel_addr(&mut self) -> u64 {
        self.as_mut_ptr() as u64
    }
    fn kernel_bytes(&self) -> Option<usize> {
        Some(std::mem::size_of_val(self.as_slice()))
    }
}
impl<T: Plain, const N: usize> KernelBuf for [T; N] {
    fn kernel_addr(&mut self) -> u64 {
        self.as_mut_ptr() as u64
    }
    fn kernel_bytes(&self) -> Option<usize> {
        Some(std::mem::size_of_val(self))
    }
}

/// The allocation list of a launch of bindings built for checking (`ptxr::Build::check`):
/// buffer arguments `(index, parameter name, address, bytes)` and module variables
/// `(name, address, bytes)`. A buffer of unknown size reaches to the end of the address space.
pub fn check_allocations(buffers: &[(usize, &str, u64, Option<usize>)], vars: &[(&str, u64, u64)]) -> Vec<crate::check::Allocation> {
    let mut v: Vec<crate::check::Allocation> = buffers
        .iter()
        .map(|&(i, p, start, n)| crate::check::Allocation { start, len: n.map_or(u64::MAX - start, |n| n as u64), name: format!("buffer argument {i} (`{p}`)") })
        .collect();
    v.extend(vars.iter().map(|&(name, start, len)| crate::check::Allocation { start, len, name: format!("variable `{name}`") }));
    v
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3(x, 1, 1)
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3(x, y, 1)
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3(x, y, z)
    }
}
impl From<[u32; 3]> for Dim3 {
    fn from(d: [u32; 3]) -> Dim3 {
        Dim3(d[0], d[1], d[2])
    }
}

impl LaunchConfig {
    /// `grid` CTAs of `block` threads, no dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig { grid: grid.into(), block: block.into(), dyn_smem: 0 }
    }
    /// Sets the dynamic shared memory in bytes.
    pub fn shared(mut self, bytes: u32) -> LaunchConfig {
        self.dyn_smem = bytes;
        self
    }
}

/// `len` bytes (a multiple of 16) mapped so that they end where an inaccessible page
/// begins, with another such page before them: a CTA's shared-memory window, and with
/// [`set_guarded_buffers`] the buffers of a launch. A kernel that accesses past the end (on a
/// GPU, an illegal-address error of the launch) gets a memory fault, which the command line
/// reports (`guard`), instead of overwriting the runtime's heap. Falls back to the heap when
/// the mapping fails.
#[doc(hidden)]
pub struct GuardedMem {
    map: *mut u8,
    map_len: usize,
    start: *mut u8,
    len: usize,
    heap: Vec<u128>,
}

// SAFETY: the mapping is owned by one worker's state and only used by the CTA it runs.
unsafe impl Send for GuardedMem {}

impl GuardedMem {
    pub fn new(len: usize) -> GuardedMem {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let body = len.div_ceil(page).max(1) * page;
        let map_len = page + body + page;
        // SAFETY: a fresh private anonymous mapping; its guard pages are made inaccessible
        // before the window is handed out, and it is unmapped once, in `drop`.
        unsafe {
            let m = libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
            if m != libc::MAP_FAILED {
                let m = m as *mut u8;
                if libc::mprotect(m as *mut libc::c_void, page, libc::PROT_NONE) == 0 && libc::mprotect(m.add(page + body) as *mut libc::c_void, page, libc::PROT_NONE) == 0 {
                    return GuardedMem { map: m, map_len, start: m.add(page + body - len), len, heap: Vec::new() };
                }
                libc::munmap(m as *mut libc::c_void, map_len);
            }
        }
        GuardedMem::heap(len)
    }

    /// `len` bytes on the heap, without guard pages.
    pub fn heap(len: usize) -> GuardedMem {
        let mut heap = vec![0u128; len / 16 + 1];
        let start = heap.as_mut_ptr() as *mut u8;
        GuardedMem { map: std::ptr::null_mut(), map_len: 0, start, len, heap }
    }

    /// A guarded copy of `data`.
    pub fn copy_of(data: &[u8]) -> GuardedMem {
        let mut g = GuardedMem::new(data.len().div_ceil(16) * 16);
        g.bytes(data.len()).copy_from_slice(data);
        g
    }

    pub fn start(&mut self) -> *mut u8 {
        self.start
    }

    /// The first `n` bytes (`n` at most `len`).
    pub fn bytes(&mut self, n: usize) -> &mut [u8] {
        // SAFETY: `start..start+len` is accessible and owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.start, n.min(self.len)) }
    }

    /// Shared memory starts uninitialized on a GPU; zeroed here so runs are reproducible.
    pub fn clear(&mut self) {
        if self.map.is_null() {
            self.heap.iter_mut().for_each(|w| *w = 0);
        } else {
            if self.len > 0 {
                // SAFETY: `start..start+len` lies inside the accessible part of the mapping.
                unsafe { std::ptr::write_bytes(self.start, 0, self.len) };
            }
        }
    }
}

impl Drop for GuardedMem {
    fn drop(&mut self) {
        if !self.map.is_null() {
            // SAFETY: the mapping made in `new`, unmapped once.
            unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
        }
    }
}

