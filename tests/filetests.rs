//! Text-driven run tests: every `tests/filetests/**/*.ptx` holds PTX and its expectations.
//!
//! ```text
//! // run: KERNEL<<<GRID, BLOCK[, SHARED]>>> ARG ARG ...     (GRID/BLOCK: N or (X,Y,Z))
//! // expect: argN == TYPE:v1,v2,...      buffer N after the launch (TYPE: u8..u64, s*, b*, f16, f32, f64, hex)
//! // expect-error: TEXT                   the launch (or compilation) fails with TEXT in the message
//! // bind: NAME=tex:...|surf:...          binds a module-scope texture/surface reference for the run
//! // expect: bindN == TYPE:v1,...         the data of the run's Nth bound reference after the launch
//! // opt: N                               compile the file at -ON (default -O2)
//! // expect-check: TEXT                   under `ptxr run --check` the launch stops with a report
//!                                         holding TEXT (every such line of the run); a run with
//!                                         only these runs in the checking mode alone
//! ```
//! Every file also runs in the checking mode (`filetests_checked`): a run without
//! `expect-check` must pass there too, with no report (no false positives).
//! ARGs use the `ptxr run --arg` forms, plus `buf:TYPE:v1,v2,...` typed buffers. Expected
//! values come from the spec's semantics worked by hand or from the GPU (cited per file).
//! Set `FILETEST=substring` to run only matching files.

mod common;

use ptxr::runtime::{parse_arg, parse_scalar, ArgSpec, LaunchConfig};
use ptxr::syntax::ast::Type;
use std::path::Path;


struct Run {
    line: usize,
    kernel: String,
    cfg: LaunchConfig,
    args: Vec<String>,
    /// (line, (a bound reference's data rather than an argument, index), expected).
    expects: Vec<(usize, (bool, usize), String)>,
    expect_error: Option<String>,
    expect_check: Vec<String>,
    binds: Vec<String>,
}

fn parse_runs(text: &str, file: &str) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(r) = l.strip_prefix("// run:") {
            // The launch syntax is the library's (`ptxr roundtrip` reads the same lines).
            let l = ptxr::roundtrip::parse_launch(r.trim()).unwrap_or_else(|m| panic!("{file}:{}: run: {m}", n + 1));
            runs.push(Run { line: n + 1, kernel: l.kernel, cfg: l.cfg, args: l.args, expects: Vec::new(), expect_error: None, expect_check: Vec::new(), binds: Vec::new() });
        } else if let Some(r) = l.strip_prefix("// expect:") {
            let run = runs.last_mut().unwrap_or_else(|| panic!("{file}:{}: expect before run", n + 1));
            let (lhs, rhs) = r.split_once("==").unwrap_or_else(|| panic!("{file}:{}: expect: argN == TYPE:values", n + 1));
            let lhs = lhs.trim();
            let (bind, num) = match lhs.strip_prefix("bind") {
                Some(k) => (true, k),
                None => (false, lhs.trim_start_matches("arg")),
            };
            let idx: usize = num.parse().unwrap_or_else(|_| panic!("{file}:{}: bad arg index", n + 1));
            run.expects.push((n + 1, (bind, idx), rhs.trim().to_string()));
        } else if let Some(r) = l.strip_prefix("// bind:") {
            let run = runs.last_mut().unwrap_or_else(|| panic!("{file}:{}: bind before run", n + 1));
            run.binds.push(r.trim().to_string());
        } else if let Some(r) = l.strip_prefix("// expect-check:") {
            let run = runs.last_mut().unwrap_or_else(|| panic!("{file}:{}: expect-check before run", n + 1));
            run.expect_check.push(r.trim().to_string());
        } else if let Some(r) = l.strip_prefix("// expect-error:") {
            let run = runs.last_mut().unwrap_or_else(|| panic!("{file}:{}: expect-error before run", n + 1));
            run.expect_error = Some(r.trim().to_string());
        }
    }
    runs
}

/// Expected bytes of `TYPE:v1,v2,...` (or `hex:...`).
fn expected_bytes(spec: &str) -> Result<Vec<u8>, String> {
    let (ty, vals) = spec.split_once(':').ok_or("expected TYPE:values")?;
    if ty == "hex" {
        let h: String = vals.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        return (0..h.len()).step_by(2).map(|k| u8::from_str_radix(&h[k..k + 2], 16).map_err(|e| e.to_string())).collect();
    }
    let t = Type::from_str(ty).ok_or(format!("unknown type {ty}"))?;
    let mut out = Vec::new();
    for v in vals.split(',').map(|v| v.trim()).filter(|v| !v.is_empty()) {
        let bits = parse_scalar(t, v)?;
        out.extend_from_slice(&bits.to_le_bytes()[..t.size() as usize]);
    }
    Ok(out)
}

fn render(bytes: &[u8], spec: &str) -> String {
    let ty = spec.split_once(':').map(|(t, _)| t).unwrap_or("hex");
    match Type::from_str(ty) {
        Some(t) if ty != "hex" => {
            let n = t.size() as usize;
            bytes
                .chunks(n)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    let v = u64::from_le_bytes(b);
                    match t {
                        Type::F32 => format!("{}(0x{:08x})", f32::from_bits(v as u32), v),
                        Type::F64 => format!("{}(0x{:016x})", f64::from_bits(v), v),
                        t if t.is_signed() => format!("{}", ((v << (64 - 8 * n)) as i64) >> (64 - 8 * n)),
                        _ => format!("0x{v:x}"),
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => bytes.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

#[test]
fn filetests() {
    run_filetests(ptxr::codegen::warp::Exec::Simd, false);
}

/// The same expectations on the per-thread path (`--exec thread`), the warp path's oracle.
#[test]
fn filetests_thread_path() {
    run_filetests(ptxr::codegen::warp::Exec::Thread, false);
}

/// The same expectations in the checking mode (`ptxr run --check`, which runs per thread):
/// every run passes with no report, except the runs whose `expect-check` names the report.
#[test]
fn filetests_checked() {
    run_filetests(ptxr::codegen::warp::Exec::Thread, true);
}

fn run_filetests(exec: ptxr::codegen::warp::Exec, check: bool) {
    ptxr::codegen::warp::set_exec(exec);
    ptxr::codegen::set_check(check);
    // FILETESTS_DIR runs another directory of filetests (e.g. a large GPU differential set
    // written by tests/filetests/ref/gpu_fuzz.py).
    let root = std::env::var("FILETESTS_DIR").map(std::path::PathBuf::from).unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests"));
    let mut files = Vec::new();
    common::ptx_files(&root, &mut files);
    files.sort();
    let filter = std::env::var("FILETEST").ok();
    let mut failures = Vec::new();
    let mut nruns = 0;
    for f in &files {
        let name = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(f).display().to_string();
        if filter.as_ref().map_or(false, |flt| !name.contains(flt.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let runs = parse_runs(&text, &name);
        assert!(!runs.is_empty(), "{name}: no `// run:` line");
        let src = ptxr::SourceFile { name: name.clone(), text: text.clone() };
        // `// opt: N` compiles the file at -ON (LLVM passes that run only at -O3); else -O2.
        let opt = text.lines().find_map(|l| l.strip_prefix("// opt:")).and_then(|v| v.trim().parse().ok()).unwrap_or(2);
        let loaded = ptxr::driver::load(&src, opt);
        for mut run in runs {
            // A run that only expects a report runs in the checking mode alone (its access
            // out of bounds or its race has no defined result otherwise).
            if !check && !run.expect_check.is_empty() && run.expects.is_empty() && run.expect_error.is_none() {
                continue;
            }
            if check && !run.expect_check.is_empty() {
                run.expects.clear();
                run.expect_error = None;
            }
            let reports = if check { std::mem::take(&mut run.expect_check) } else { Vec::new() };
            nruns += 1;
            let loaded = match &loaded {
                Ok(l) => l,
                Err(e) => {
                    let msg = format!("{e:#}");
                    match &run.expect_error {
                        Some(t) if msg.contains(t.as_str()) => continue,
                        _ => {
                            failures.push(format!("{name}:{}: compile failed: {msg}", run.line));
                            continue;
                        }
                    }
                }
            };
            let mut args: Vec<ArgSpec> = match run.args.iter().map(|a| parse_arg(a)).collect() {
                Ok(a) => a,
                Err(e) => {
                    failures.push(format!("{name}:{}: bad argument: {e}", run.line));
                    continue;
                }
            };
            let mut refs = Vec::new();
            for b in &run.binds {
                let (n, spec) = b.split_once('=').unwrap_or_else(|| panic!("{name}: bind: NAME=SPEC"));
                refs.push((n.to_string(), parse_arg(spec).unwrap_or_else(|e| panic!("{name}: bind: {e}"))));
            }
            let r = loaded.launch_bound(&run.kernel, &run.cfg, &mut args, &mut refs);
            if !reports.is_empty() {
                match &r {
                    Err(e) if reports.iter().all(|t| e.0.contains(t.as_str())) => {}
                    Err(e) => failures.push(format!("{name}:{}: the checking mode's report\n   {}\n   lacks one of {reports:?}", run.line, e.0)),
                    Ok(()) => failures.push(format!("{name}:{}: the checking mode reported nothing; expected {reports:?}", run.line)),
                }
                continue;
            }
            match (&r, &run.expect_error) {
                (Err(e), Some(t)) if e.0.contains(t.as_str()) => continue,
                (Err(e), _) => {
                    failures.push(format!("{name}:{}: launch failed: {}", run.line, e.0));
                    continue;
                }
                (Ok(()), Some(t)) => {
                    failures.push(format!("{name}:{}: expected an error containing `{t}`, but the launch succeeded", run.line));
                    continue;
                }
                (Ok(()), None) => {}
            }
            for (line, (bind, idx), spec) in &run.expects {
                let want = match expected_bytes(spec) {
                    Ok(w) => w,
                    Err(e) => {
                        failures.push(format!("{name}:{line}: bad expectation: {e}"));
                        continue;
                    }
                };
                let got = match if *bind { refs.get(*idx).map(|r| &r.1) } else { args.get(*idx) } {
                    Some(ArgSpec::Buffer(b) | ArgSpec::Texture { data: b, .. } | ArgSpec::TensorMap { data: b, .. }) => b.clone(),
                    _ => {
                        failures.push(format!("{name}:{line}: arg{idx} is not a buffer"));
                        continue;
                    }
                };
                let got = &got[..want.len().min(got.len())];
                if got != want.as_slice() {
                    failures.push(format!("{name}:{line}: arg{idx}\n   expected {}\n   got      {}", render(&want, spec), render(got, spec)));
                }
            }
        }
    }
    assert!(nruns > 0 || filter.is_some(), "no filetests ran");
    if !failures.is_empty() {
        panic!("{} filetest failure(s):\n{}", failures.len(), failures.join("\n"));
    }
    eprintln!("filetests ({exec:?}{}): {nruns} runs passed", if check { ", checking mode" } else { "" });
}
