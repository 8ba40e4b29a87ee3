//! Both execution paths under test: every corpus file and every filetest runs on the
//! warp-vector path (`--exec simd`) and on the per-thread path (`--exec thread`) on the same
//! seeded launches as the NVPTX round trip (the `// run:` lines, `.roundtrip` specs, and
//! launches inferred from each kernel's signature), and every output byte must be equal: the
//! per-thread path is the warp path's oracle. (The filetests' own expectations are checked on
//! both paths by `tests/filetests.rs`.)

mod common;

use ptxr::roundtrip::{exec_differential, Options};
use std::path::PathBuf;

fn differential(dir: &str, min: usize) {
    let mut files = Vec::new();
    common::ptx_files(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir), &mut files);
    files.sort();
    assert!(files.len() >= min, "{dir}: files missing");
    let mut failed = Vec::new();
    for f in &files {
        match exec_differential(f, &Options { seeds: 2, cpu_opt: 2, ..Options::default() }) {
            Ok(o) if o.failures == 0 => {}
            Ok(o) => failed.push(o.report),
            Err(e) => failed.push(format!("{}: {e:#}", f.display())),
        }
    }
    assert!(failed.is_empty(), "{} of {} files differ between --exec simd and --exec thread:\n{}", failed.len(), files.len(), failed.join("\n"));
}

#[test]
fn corpus_same_on_both_paths() {
    differential("tests/corpus", 30);
}

#[test]
fn filetests_same_on_both_paths() {
    differential("tests/filetests", 60);
}
