//! The launch ABI shared by generated code and the runtime: the per-CTA context that the
//! CTA function `__ptxr_cta_<kernel>(CtaCtx*) -> i32` receives. Field order is fixed: the
//! emitter addresses fields by index, the runtime by `#[repr(C)]`.

/// Per-CTA launch context (C layout).
#[repr(C)]
#[derive(Debug)]
pub struct CtaCtx {
    /// Kernel parameter buffer, laid out as the PTX signature says (5.1.6).
    pub params: *const u8,
    /// This CTA's shared memory window (static then dynamic).
    pub shared: *mut u8,
    pub ctaid: [u32; 3],
    pub nctaid: [u32; 3],
    pub ntid: [u32; 3],
    pub dyn_smem: u32,
    pub total_smem: u32,
    /// Set by generated code when the CTA stops abnormally: `STATUS_*`.
    pub status: u32,
    /// Source line of the instruction that stopped the CTA (trap, failed assert, deadlock).
    pub status_line: u32,
    /// Host services.
    pub rt: *const HostFns,
    /// Opaque pointer for the host (the launch) passed back to `HostFns`. When not null, it
    /// points to the launch's cancel word first (a `u32`, nonzero once the launch must stop:
    /// [`STATUS_TIMEOUT`]).
    pub host: *mut u8,
    /// Extra word written by the host when a status is set (thread index, etc.).
    pub status_thread: u32,
    pub smid: u32,
    /// Per-thread register frames (`KernelInfo::frame_size` bytes each) for kernels with
    /// synchronization; null otherwise.
    pub frames: *mut u8,
    /// Per-thread [`SyncSlot`]s for kernels with synchronization; null otherwise.
    pub slots: *mut SyncSlot,
    /// Host-side scheduler state for this CTA (barrier arrival counts).
    pub sched: *mut u8,
    /// For a kernel whose `cta_group` is set: how many CTAs this call runs, those whose
    /// linear indices (x fastest) follow `ctaid`'s; the generated code runs their warps in
    /// turn and leaves in `ctaid` the CTA of the warp that stopped with an error. 0 or 1
    /// otherwise.
    pub group: u32,
    /// The grid's workspace in a cooperative launch (`%envreg1`:`%envreg2`, high and low
    /// half; cooperative groups' `grid.sync()` counts the CTAs arriving there); null in other
    /// launches.
    pub grid_ws: *mut u8,
    /// The CTA's cluster when the launch has clusters of more than one CTA (PTX ISA 8.x,
    /// sm_90: `%cluster_*`, `barrier.cluster`, `mapa`); null for clusters of one CTA.
    pub cluster: *const ClusterCtx,
}

/// A cluster of CTAs that run together (one per cluster, shared by its CTAs). Their shared
/// windows lie `stride` bytes apart in rank order, so that a CTA reaches rank `r`'s window at
/// its own plus `(r - rank) * stride`: in a kernel that reaches other CTAs' windows, a shared
/// address is `rank * stride + offset`, from rank 0's window, as on a GPU (`stride` 16 MiB,
/// [`cluster_smem_stride`]).
#[repr(C)]
#[derive(Debug)]
pub struct ClusterCtx {
    /// CTAs per cluster along x, y, z (`%cluster_nctaid`).
    pub dims: [u32; 3],
    /// Bytes from one rank's shared window to the next ([`cluster_smem_stride`]).
    pub stride: u32,
    /// The runtime's state of the cluster barrier (`HostFns::cluster_sync`).
    pub sync: *const u8,
}

/// What a thread waiting at a synchronization point asks for, and its result.
/// Written by generated code at the sync point; completed by the runtime's `resolve`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SyncSlot {
    /// `SLOT_RUNNABLE`, `SLOT_WAITING`, `SLOT_EXITED`.
    pub state: u32,
    /// Resume point (0 = kernel entry).
    pub resume: u32,
    /// `SYNC_*`.
    pub kind: u32,
    /// Unique id of the synchronizing instruction.
    pub site: u32,
    pub line: u32,
    /// Operation: shfl mode, vote mode, bar.red op, redux op, match mode.
    pub mode: u32,
    pub mask: u32,
    pub bar_id: u32,
    /// Expected thread count of a barrier (0 = all threads of the CTA).
    pub bar_count: u32,
    /// `FLAG_*`.
    pub flags: u32,
    pub a: u64,
    pub b: u32,
    pub c: u32,
    pub result: u64,
    pub pred: u32,
    pub _pad: u32,
}

pub const SLOT_RUNNABLE: u32 = 0;
pub const SLOT_WAITING: u32 = 1;
pub const SLOT_EXITED: u32 = 2;

pub const SYNC_BAR: u32 = 1;
pub const SYNC_BAR_ARRIVE: u32 = 2;
pub const SYNC_WARP: u32 = 3;
pub const SYNC_SHFL: u32 = 4;
pub const SYNC_VOTE: u32 = 5;
pub const SYNC_MATCH: u32 = 6;
pub const SYNC_ACTIVEMASK: u32 = 7;
pub const SYNC_REDUX: u32 = 8;

/// The deprecated non-`.sync` form: the participants are the lanes at the same instruction.
pub const FLAG_NOSYNC: u32 = 1;
/// 64-bit operand (match.b64).
pub const FLAG_64: u32 = 2;
/// Signed operation (redux .s32 min/max).
pub const FLAG_SIGNED: u32 = 4;
/// An `.aligned` barrier (`bar.sync`, `bar.red`, `barrier.*.aligned`): every thread of a warp
/// must execute the same barrier instruction (the checking mode reports where not).
pub const FLAG_ALIGNED: u32 = 8;

pub mod slot {
    pub const STATE: u32 = 0;
    pub const RESUME: u32 = 1;
    pub const KIND: u32 = 2;
    pub const SITE: u32 = 3;
    pub const LINE: u32 = 4;
    pub const MODE: u32 = 5;
    pub const MASK: u32 = 6;
    pub const BAR_ID: u32 = 7;
    pub const BAR_COUNT: u32 = 8;
    pub const FLAGS: u32 = 9;
    pub const A: u32 = 10;
    pub const B: u32 = 11;
    pub const C: u32 = 12;
    pub const RESULT: u32 = 13;
    pub const PRED: u32 = 14;
}

/// Functions the generated code calls on the host.
#[repr(C)]
#[derive(Debug)]
pub struct HostFns {
    /// `vprintf(fmt, args)` as on a GPU: returns the number of arguments printed, or -1.
    pub vprintf: extern "C" fn(host: *mut u8, fmt: *const u8, args: *const u8) -> i32,
    /// `%globaltimer` in nanoseconds.
    pub globaltimer: extern "C" fn() -> u64,
    /// `__assertfail(message, file, line, function, charSize)`.
    pub assertfail: extern "C" fn(host: *mut u8, msg: *const u8, file: *const u8, line: u32, func: *const u8),
    /// Completes the collectives that can complete; returns `RESOLVE_*`.
    pub resolve: extern "C" fn(cta: *mut CtaCtx) -> u32,
    /// Device-side launch, first half (`cudaGetParameterBufferV2`): a parameter buffer for
    /// a launch of `kernel` (a [`DeviceKernel`]) with this grid, block and dynamic shared
    /// memory; NULL if none can be had.
    pub launch_buffer: extern "C" fn(host: *mut u8, kernel: *const DeviceKernel, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, smem: u32) -> *mut u8,
    /// Device-side launch, second half (`cudaLaunchDeviceV2`): launches the grid whose
    /// buffer `launch_buffer` gave; returns a `cudaError_t` (0: success).
    pub launch_device: extern "C" fn(host: *mut u8, buf: *mut u8, stream: u64) -> i32,
    /// The cluster barrier (`barrier.cluster.wait`) once every thread of this CTA has
    /// arrived: returns when every CTA of the cluster has, or has ended; [`STATUS_OK`], or the
    /// status to stop with (the launch was cancelled).
    pub cluster_sync: extern "C" fn(cta: *mut CtaCtx) -> u32,
    /// Code compiled for checking (`ptxr run --check`) asks before each access of global,
    /// shared or generic memory: `check_access(cta, addr, size, kind, line, col, tid)` returns
    /// [`STATUS_OK`] or the status to stop with ([`STATUS_CHECK`]); `kind` is bit 0 for a
    /// write and bits 1-3 the space (0 generic, 1 global, 2 shared). A launcher that checks
    /// nothing returns 0.
    pub check_access: extern "C" fn(cta: *mut CtaCtx, addr: *const u8, size: u32, kind: u32, line: u32, col: u32, tid: u32) -> u32,
    /// `clusterlaunchcontrol.try_cancel`: cancels the launch of a cluster (a CTA without
    /// clusters) that has not started, if any, and writes the 16-byte response to `resp`:
    /// the first CTA's ctaid x, y, z and 1, or four zeros when nothing was cancelled
    /// ([`DK_CANCELLABLE`] kernels only; for the others nothing is).
    pub try_cancel: extern "C" fn(cta: *mut CtaCtx, resp: *mut u8),
}

/// What a device-side launch needs of a kernel: the value of the kernel's name as an
/// address in PTX (`mov.u64 %rd, kernel`), a constant that generated code emits for every
/// kernel of a module.
#[repr(C)]
#[derive(Debug)]
pub struct DeviceKernel {
    pub cta: unsafe extern "C" fn(*mut CtaCtx) -> i32,
    /// The kernel's name, NUL-terminated.
    pub name: *const u8,
    pub param_size: u32,
    pub static_smem: u32,
    pub frame_size: u32,
    /// `DK_USES_SYNC`, `DK_CTA_GROUP`, `DK_REQNTID`, `DK_MAXNTID`, `DK_CANCELLABLE`.
    pub flags: u32,
    pub reqntid: [u32; 3],
    pub maxntid: [u32; 3],
}

/// Bytes from one rank's shared window of a cluster to the next (`ClusterCtx::stride`): 16
/// MiB, a GPU's distance between the CTAs' windows in the `.shared::cluster` window (a
/// shared address there is `rank << 24 | offset`, and kernels set or clear the rank's bits
/// to name a peer's variable), or the next multiple of it above a larger window. The space
/// between windows is reserved, not touched; the last 16 bytes before the next window hold,
/// in a kernel with CTA pairs (`tcgen05` `.cta_group::2`), the CTA's tensor memory
/// (generated code writes it at entry, and the pair's MMA reads it).
pub fn cluster_smem_stride(total_smem: u64) -> u64 {
    (total_smem + CLUSTER_SLOT_BYTES).div_ceil(1 << 24).max(1) << 24
}

/// The bytes at the end of each cluster window's stride that generated code keeps for itself
/// ([`cluster_smem_stride`]).
pub const CLUSTER_SLOT_BYTES: u64 = 16;

/// In a group of CTAs (`CtaCtx::group`) of a kernel with shared memory, CTA `k` of the group
/// (counted from `ctaid`) has its shared window at `shared + k * group_smem_stride(total_smem)`.
/// The stride is a multiple of 64 bytes, not of a page where windows are small: each window
/// then sits at another offset within a page than its neighbours, so that the same offsets
/// in neighbouring windows do not compete for one set of cache lines (2 cores, groups of 16:
/// a grid-stride sum with a shared tree 0.0023 s, the shared byte histogram 0.0133 s; with
/// windows a page apart 0.0026 s and 0.0142 s, within the noise of this machine).
pub fn group_smem_stride(total_smem: u64) -> u64 {
    total_smem.div_ceil(GROUP_SMEM_ALIGN) * GROUP_SMEM_ALIGN + GROUP_SMEM_ALIGN
}

/// The unit of [`group_smem_stride`] (generated code computes the stride from it too).
pub const GROUP_SMEM_ALIGN: u64 = 64;

/// The bytes of a group's shared windows: `count` windows of `total_smem` bytes
/// ([`group_smem_stride`] apart), rounded up to 16.
pub fn group_smem_len(total_smem: u64, count: u64) -> u64 {
    if total_smem == 0 {
        return 0;
    }
    group_smem_stride(total_smem) * (count.max(1) - 1) + total_smem.div_ceil(16) * 16
}

pub const DK_USES_SYNC: u32 = 1;
pub const DK_CTA_GROUP: u32 = 2;
pub const DK_REQNTID: u32 = 4;
pub const DK_MAXNTID: u32 = 8;
/// The kernel cancels launches of other clusters (`clusterlaunchcontrol.try_cancel`): its
/// clusters (CTAs) are started by claiming them one by one from a counter the cancellations
/// take from too.
pub const DK_CANCELLABLE: u32 = 16;

pub const RESOLVE_CONTINUE: u32 = 0;
pub const RESOLVE_DONE: u32 = 1;
pub const RESOLVE_DEADLOCK: u32 = 2;
/// `RESOLVE_UNIFORM + k`: go on; every thread that has not exited is runnable at resume
/// point `k` (the start of the body for 0, else sync site `k`).
pub const RESOLVE_UNIFORM: u32 = 0x100;

pub const STATUS_OK: u32 = 0;
pub const STATUS_TRAP: u32 = 1;
pub const STATUS_ASSERT: u32 = 2;
pub const STATUS_DEADLOCK: u32 = 3;
/// With [`STATUS_DEADLOCK`] from a warp-path kernel, `status_thread` holds this bit and the
/// line of the barrier where the phase's first warp waits (`status_line`: where another warp
/// waits), instead of a thread index.
pub const DEADLOCK_OTHER_LINE: u32 = 1 << 31;
pub const STATUS_BRKPT: u32 = 4;
pub const STATUS_BAD_ADDRESS: u32 = 5;
pub const STATUS_BAD_BARRIER: u32 = 6;
/// A function that synchronizes was called through a function pointer.
pub const STATUS_SYNC_INDIRECT: u32 = 7;
/// `wmma.mma`/`mma`/`ldmatrix` in a warp that does not have 32 threads.
pub const STATUS_PARTIAL_WARP: u32 = 8;
/// The kernel (or a function it calls) could not be compiled (`codegen::compile_lenient`).
pub const STATUS_UNSUPPORTED: u32 = 9;
/// The launch ran past its time limit: generated code polls the launch's cancel word (the
/// first `u32` that `CtaCtx::host` points to, when it is not null) at every back edge of the
/// PTX's loops and stops there.
pub const STATUS_TIMEOUT: u32 = 10;
/// `cp.async.bulk.tensor` was given a tensor map that ptxr did not encode.
pub const STATUS_BAD_TENSOR_MAP: u32 = 11;
/// `cp.async.bulk.tensor` with a box whose innermost coordinate is not 16-byte aligned, or a
/// store at negative coordinates (an NVIDIA GPU stops with an illegal instruction).
pub const STATUS_BAD_TENSOR_COPY: u32 = 12;
/// A memory fault in the CTA's generated code, turned into an error (`fault::enable`).
pub const STATUS_MEMORY_FAULT: u32 = 13;
/// Code compiled for checking found an access outside the memory the kernel may reach, or a
/// misaligned one (`check::check_access`; the report is in the launch's detail).
pub const STATUS_CHECK: u32 = 14;
/// A `.sync` warp collective on the warp path whose membermask names a live lane that is at
/// another instruction (`codegen::warp_collective::runs_diverged`).
pub const STATUS_WARP_APART: u32 = 15;
/// `tcgen05` with `.cta_group::2` in a CTA whose pair (ranks `2k`, `2k + 1` of its cluster)
/// is not whole, or a pair's MMA with an instruction descriptor ptxr does not run (M other
/// than 128 or 256, or 128 with A in tensor memory or block scaling).
pub const STATUS_CTA_PAIR: u32 = 16;
/// Internal: `exit` inside a `.func` unwinds to the kernel, which ends the thread and clears
/// the status again; the runtime never sees it.
pub const STATUS_EXIT: u32 = 0x100;

/// Field indices of `CtaCtx` for GEPs in the emitter.
pub mod field {
    pub const PARAMS: u32 = 0;
    pub const SHARED: u32 = 1;
    pub const CTAID: u32 = 2;
    pub const NCTAID: u32 = 3;
    pub const NTID: u32 = 4;
    pub const DYN_SMEM: u32 = 5;
    pub const TOTAL_SMEM: u32 = 6;
    pub const STATUS: u32 = 7;
    pub const STATUS_LINE: u32 = 8;
    pub const RT: u32 = 9;
    pub const HOST: u32 = 10;
    pub const STATUS_THREAD: u32 = 11;
    pub const SMID: u32 = 12;
    pub const FRAMES: u32 = 13;
    pub const SLOTS: u32 = 14;
    pub const SCHED: u32 = 15;
    pub const GROUP: u32 = 16;
    pub const GRID_WS: u32 = 17;
    pub const CLUSTER: u32 = 18;
}

/// Field indices of `ClusterCtx`.
pub mod cluster_field {
    pub const DIMS: u32 = 0;
    pub const STRIDE: u32 = 1;
}

/// The barrier id that the per-thread scheduler's slots and the warp path's phases give
/// `barrier.cluster.wait` (after the CTA's 16 barriers).
pub const CLUSTER_BARRIER: u32 = 16;

// A CtaCtx is plain data: its pointers are only dereferenced by the CTA function that
// receives it; the runtime moves finished contexts between threads to report errors.
unsafe impl Send for CtaCtx {}
unsafe impl Sync for ClusterCtx {}
unsafe impl Send for ClusterCtx {}
