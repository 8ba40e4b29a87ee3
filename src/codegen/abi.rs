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
    /// Opaque pointer for the host (the launch) passed back to `HostFns`.
    pub host: *mut u8,
    /// Extra word written by the host when a status is set (thread index, etc.).
    pub status_thread: u32,
    pub smid: u32,
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
}

pub const STATUS_OK: u32 = 0;
pub const STATUS_TRAP: u32 = 1;
pub const STATUS_ASSERT: u32 = 2;
pub const STATUS_DEADLOCK: u32 = 3;
pub const STATUS_BRKPT: u32 = 4;
pub const STATUS_BAD_ADDRESS: u32 = 5;

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
}

// A CtaCtx is plain data: its pointers are only dereferenced by the CTA function that
// receives it; the runtime moves finished contexts between threads to report errors.
unsafe impl Send for CtaCtx {}
