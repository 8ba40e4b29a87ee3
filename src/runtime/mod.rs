//! The CPU runtime: loads compiled kernels, marshals parameters, runs CTAs on all cores.
//!
//! Code is loaded by writing an object for the host (with all of the host CPU's features),
//! linking it into a shared library with the system C compiler, and opening that library —
//! the same object path as ahead-of-time compilation. What a launch needs lives in the
//! `ptxr-runtime` crate (no LLVM), re-exported here; kernels compiled ahead of time and
//! linked into a program (`ptxr::Build`) launch through `ptxr_runtime::launch_cta_fn`.

mod launch;

pub use launch::{link_shared, parse_arg, write_objects, parse_scalar, ArgSpec, Loaded};
pub use ptxr_runtime::{guard, launch_cta_fn, running_ctas, set_cluster, set_cooperative, set_guarded_buffers, set_serial, set_timeout, warp, ArgValue, CtaFn, Dim3, KernelBuf, KernelDesc, LaunchConfig, LaunchError, ParamDesc, Plain, MAX_SMEM};
