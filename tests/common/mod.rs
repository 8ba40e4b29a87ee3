//! Helpers shared by the integration tests (each test crate uses a part of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every `.ptx` file below `dir`.
pub fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().map_or(false, |x| x == "ptx") {
            out.push(p);
        }
    }
}

/// Deterministic test inputs (xorshift64*).
#[allow(unused_imports)] // not every test crate that includes `common` draws inputs
pub use ptxr::rng::Rng;
