//! LLVM-IR passes and pass pipelines of ptxr (included into the crate as `ptxr::passes`).
//!
//! - [`pipeline`]: the new-pass-manager pipeline run for each optimization level.
//! - [`parallel_lanes`]: marks the loops over the threads of a CTA as parallel loops, so that
//!   LLVM's loop vectorizer turns per-thread code into SIMD code without proving that the
//!   threads' memory accesses are independent (PTX says they are, up to races).

pub mod parallel_lanes;

/// The pass pipeline for `-O<opt>`: LLVM's default pipelines (the loop vectorizer and SLP
/// vectorizer run from `-O2` on).
pub fn pipeline(opt: u32) -> String {
    // PTXR_PASSES="...": a pass pipeline of LLVM's textual syntax in place of ptxr's (a
    // developer's aid for measuring what each pass costs and brings).
    if let Ok(p) = std::env::var("PTXR_PASSES") {
        return p;
    }
    format!("default<O{}>", opt.min(3))
}
