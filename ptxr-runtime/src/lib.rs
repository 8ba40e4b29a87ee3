//! The CPU runtime of ptxr: what launching a kernel that ptxr compiled needs, without the
//! compiler or LLVM.
//!
//! A Rust application lists `ptxr` in `[build-dependencies]` (its `ptxr::Build` compiles the
//! `.ptx` files and generates typed launch functions) and only this crate in
//! `[dependencies]`: the generated bindings launch through [`launch_cta_fn`]. `ptxr` itself
//! launches its JIT-loaded modules (`ptxr run`, `ptxr roundtrip`) through the same code.
//!
//! - [`abi`]: the contract between generated code and a launcher (`CtaCtx`, `SyncSlot`,
//!   `HostFns`, status codes), also implemented by the C runtime (`src/runtime/c/` of ptxr);
//! - launch configuration and limits ([`LaunchConfig`], [`MAX_SMEM`]), parameter
//!   marshalling ([`ArgValue`], [`KernelDesc`]), CTAs on all cores (rayon), error messages
//!   ([`LaunchError`]);
//! - [`warp`]: the per-thread scheduler's warp resolve (collectives that generated code
//!   leaves to the runtime); device `printf`, `assert` and trap reporting; the device heap;
//! - [`guard`]: a crash guard for programs that want a memory fault reported.

pub mod abi;
pub mod check;
pub mod cluster;
pub mod fault;
pub mod guard;
pub mod tensor_map;
mod host;
mod launch;
pub mod warp;

pub use launch::{check_allocations, check_config, guarded_buffers, last_status, launch_cta_fn, run_grid, running_ctas, set_cluster, set_cooperative, set_guarded_buffers, set_serial, set_timeout, ArgValue, CtaFn, Dim3, GuardedMem, KernelBuf, KernelDesc, LaunchConfig, LaunchError, ParamDesc, Plain, Shape, MAX_CLUSTER_CTAS, MAX_COOPERATIVE_CTAS, MAX_SMEM};
