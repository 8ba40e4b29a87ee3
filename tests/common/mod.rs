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

/// The IR of `text` (which borrows the parsed module: both live to the end of the test).
pub fn ir_of(text: &str) -> ptxr::ir::Module<'static> {
    let src: &'static ptxr::SourceFile = Box::leak(Box::new(ptxr::SourceFile { name: "t.ptx".into(), text: text.into() }));
    let ast = Box::leak(Box::new(ptxr::check_source(src).unwrap_or_else(|m| panic!("{m}"))));
    ptxr::ir::build_module(ast, &src.text).unwrap_or_else(|d| panic!("{d:?}"))
}
