//! The CPU runtime: loads compiled kernels, marshals parameters, runs CTAs on all cores.
//!
//! Code is loaded by writing an object for the host (with all of the host CPU's features),
//! linking it into a shared library with the system C compiler, and opening that library —
//! the same object path as ahead-of-time compilation. Kernels compiled ahead of time and
//! linked into the program (`ptxr::Build`) launch through [`launch_cta_fn`].

pub mod guard;
pub(crate) mod host;
mod launch;
pub mod warp;

pub use launch::{launch_cta_fn, parse_arg, running_ctas, set_guarded_buffers, set_serial, parse_scalar, ArgSpec, ArgValue, CtaFn, Dim3, KernelBuf, KernelDesc, LaunchConfig, LaunchError, Loaded, ParamDesc, Plain, MAX_SMEM};
