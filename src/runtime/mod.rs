//! The CPU runtime: loads compiled kernels, marshals parameters, runs CTAs on all cores.
//!
//! Code is loaded by writing an object for the host (with all of the host CPU's features),
//! linking it into a shared library with the system C compiler, and opening that library —
//! the same object path as ahead-of-time compilation.

pub(crate) mod host;
mod launch;
pub mod warp;

pub use launch::{parse_arg, parse_scalar, ArgSpec, Dim3, LaunchConfig, LaunchError, Loaded};
