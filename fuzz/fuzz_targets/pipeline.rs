//! Fuzz target: the whole pipeline on structural mutants of the corpus. The input picks a
//! corpus file and seeds `ptxr::mutate`; the mutant is checked and, when valid, compiled at
//! -O0 and -O1 for the host. Nothing may panic or report an internal error (a compile error
//! for a bad mutant is fine). Launching is left to `tests/pipeline_fuzz.rs`, which runs each
//! stage in a process of its own with a time limit.
//!   cargo fuzz run pipeline -- -timeout=60
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn corpus() -> &'static Vec<String> {
    static C: OnceLock<Vec<String>> = OnceLock::new();
    C.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
        let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().map_or(false, |e| e == "ptx")).collect();
        v.sort();
        v.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 16 {
        return;
    }
    let pick = u64::from_le_bytes(data[..8].try_into().unwrap());
    let seed = u64::from_le_bytes(data[8..16].try_into().unwrap());
    let files = corpus();
    let text = &files[(pick % files.len() as u64) as usize];
    let mut rng = ptxr::rng::Rng::new(seed);
    let mutant = ptxr::mutate::mutate(text, &mut rng);
    let src = ptxr::SourceFile { name: "fuzz.ptx".into(), text: mutant };
    if ptxr::check_source(&src).is_err() {
        return;
    }
    let out = std::env::temp_dir().join(format!("ptxr-fuzz-{}.o", std::process::id()));
    for opt in [0, 1] {
        if let Err(e) = ptxr::driver::compile_to_file_with(&src, ptxr::codegen::target::TargetKind::Host, opt, ptxr::driver::Emit::Obj, &out, false) {
            let msg = format!("{e:#}");
            assert!(!msg.contains("internal error"), "internal error at -O{opt}:\n{msg}\n--- mutant ---\n{}", src.text);
        }
    }
});
