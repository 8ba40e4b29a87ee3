//! Whole-pipeline fuzzing, a short deterministic campaign (issue 25; the libFuzzer target is
//! `fuzz/fuzz_targets/pipeline.rs`): structural mutants of the corpus (`ptxr::mutate`: types,
//! state spaces, opcodes, modifiers, operands, lines, braces) go through `ptxr check`,
//! `ptxr compile -O0` and `-O1`, and a short `ptxr run` of each kernel with arguments guessed
//! from its signature, each stage a process of its own with a time limit. No stage may panic,
//! die of a signal, or report an internal error; a stage may refuse the input with an error.
//! A run has `--timeout 5` (a mutant may loop forever): the watchdog must stop it, so a run
//! that the harness has to kill is a failure too.
//!
//! `PIPELINE_FUZZ_ITERS=N` runs N mutants (default 24), `PIPELINE_FUZZ_SEED=S` another
//! campaign; each failure names the seed and mutant so that it can be replayed:
//! `PIPELINE_FUZZ_ONLY=M1,M2` runs only those mutants of the campaign (the others are still
//! generated, which takes no time) and keeps their files in `target/pipeline_fuzz/`.
//! `PIPELINE_FUZZ_BIN=PATH` fuzzes that `ptxr` binary instead of the one cargo built (a copy,
//! so that a long campaign goes on while the tree is rebuilt).

use ptxr::rng::Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// Runs `ptxr args` with a time limit: `Some((exit code, stderr))`, `None` when it ran out of
/// time (killed). A death by signal is exit code -1.
fn ptxr(args: &[&str], limit: Duration) -> Option<(i32, String)> {
    let bin = std::env::var_os("PIPELINE_FUZZ_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_ptxr").into());
    let mut child = Command::new(bin).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("run ptxr");
    // stderr is read while the child runs: a child writing more than a pipe holds would
    // otherwise wait for the reader forever and look like a hang.
    let mut stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        use std::io::Read;
        let _ = stderr.read_to_string(&mut err);
        err
    });
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            let err = reader.join().unwrap_or_default();
            return Some((st.code().unwrap_or(-1), err));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Why a stage's outcome is a bug, if it is one.
fn bug(stage: &str, r: &Option<(i32, String)>) -> Option<String> {
    match r {
        None => Some(format!("{stage} ran out of time")),
        Some((101, e)) => Some(format!("{stage} panicked: {e}")),
        Some((-1, e)) => Some(format!("{stage} died of a signal: {e}")),
        Some((_, e)) if e.contains("internal error") => Some(format!("{stage} reported an internal error: {e}")),
        _ => None,
    }
}

#[test]
fn mutants_never_crash_the_pipeline() {
    let iters: usize = std::env::var("PIPELINE_FUZZ_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    let seed: u64 = std::env::var("PIPELINE_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(25);
    let mut files: Vec<PathBuf> = Vec::new();
    // PIPELINE_FUZZ_DIR=tests/triton_sm90: another directory of seeds than the corpus.
    let seeds = std::env::var("PIPELINE_FUZZ_DIR").unwrap_or_else(|_| "tests/corpus".to_string());
    common::ptx_files(Path::new(&seeds), &mut files);
    // PIPELINE_FUZZ_MATCH=wmma: mutate only the corpus files whose name contains it.
    if let Ok(m) = std::env::var("PIPELINE_FUZZ_MATCH") {
        files.retain(|f| f.file_name().map_or(false, |n| n.to_string_lossy().contains(&m)));
        assert!(!files.is_empty(), "PIPELINE_FUZZ_MATCH={m} matches no corpus file");
    }
    files.sort();
    let dir = tempfile::tempdir().unwrap();
    let only: Option<Vec<usize>> = std::env::var("PIPELINE_FUZZ_ONLY").ok().map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
    let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pipeline_fuzz");
    let mut rng = Rng::new(seed);
    let mut failures = Vec::new();
    let (mut checked, mut compiled, mut ran) = (0, 0, 0);
    let start = Instant::now();
    for m in 0..iters {
        if m > 0 && m % 1000 == 0 {
            eprintln!("pipeline fuzz: {m} mutants in {:.0} s, {} failure(s) so far", start.elapsed().as_secs_f64(), failures.len());
            for f in &failures {
                eprintln!("  {f}");
            }
        }
        let f = &files[rng.range(0, files.len() as i64) as usize];
        let text = std::fs::read_to_string(f).unwrap();
        let mutant = ptxr::mutate::mutate(&text, &mut rng);
        if only.as_ref().map_or(false, |o| !o.contains(&m)) {
            continue;
        }
        let path = if only.is_some() {
            std::fs::create_dir_all(&keep).unwrap();
            keep.join(format!("seed{seed}_m{m}.ptx"))
        } else {
            dir.path().join(format!("m{m}.ptx"))
        };
        std::fs::write(&path, &mutant).unwrap();
        let p = path.to_str().unwrap();
        let name = format!("seed {seed} mutant {m} of {}", f.display());
        let r = ptxr(&["check", p], Duration::from_secs(20));
        if let Some(b) = bug("check", &r) {
            failures.push(format!("{name}: {b}"));
            continue;
        }
        if r.map_or(true, |(c, _)| c != 0) {
            continue;
        }
        checked += 1;
        let mut ok = true;
        for opt in ["-O0", "-O1"] {
            let r = ptxr(&["compile", p, opt, "--emit", "obj", "--no-c-abi", "-o", dir.path().join("m.o").to_str().unwrap()], Duration::from_secs(120));
            if let Some(b) = bug(&format!("compile {opt}"), &r) {
                failures.push(format!("{name}: {b}"));
            }
            ok &= r.map_or(false, |(c, _)| c == 0);
        }
        if !ok {
            continue;
        }
        compiled += 1;
        let src = ptxr::SourceFile { name: p.to_string(), text: mutant.clone() };
        let Ok(launches) = ptxr::roundtrip::inferred_launches(&src) else { continue };
        for l in launches.iter().take(2) {
            let g = l.cfg.grid;
            let b = l.cfg.block;
            let (grid, block, shared) = (format!("{},{},{}", g.0.min(2), g.1, g.2), format!("{},{},{}", b.0, b.1, b.2), l.cfg.dyn_smem.to_string());
            let mut args: Vec<String> = vec!["run".into(), p.into(), "-O1".into(), "--kernel".into(), l.kernel.clone(), "--grid".into(), grid, "--block".into(), block, "--shared".into(), shared, "--timeout".into(), "5".into()];
            for a in &l.args {
                args.push("--arg".into());
                args.push(if a.starts_with("buf:rand:") { "buf:zero:65536".into() } else { a.clone() });
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            if only.is_some() {
                eprintln!("{name}: ptxr {}", argv.join(" "));
            }
            // Compiling (at most the compile stages' 120 s) plus the 5 s watchdog.
            let r = ptxr(&argv, Duration::from_secs(150));
            if only.is_some() {
                eprintln!("  -> {:?}", r.as_ref().map(|(c, e)| (c, e.lines().next().unwrap_or(""))));
            }
            if let Some(b) = bug(&format!("run {}", l.kernel), &r) {
                failures.push(format!("{name}: {b}"));
            }
            ran += 1;
        }
    }
    eprintln!("pipeline fuzz: {iters} mutants, {checked} valid, {compiled} compiled, {ran} runs");
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}
