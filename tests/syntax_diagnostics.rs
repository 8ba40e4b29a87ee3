//! Diagnostics snapshots: every `tests/diagnostics/NAME.ptx` is checked (parse, then validate
//! when it parses) and its rendered diagnostics must equal `NAME.stderr`. `BLESS=1 cargo test
//! --test syntax_diagnostics` rewrites the snapshots.
//!
//! Each file is also run through `ptxr check` (the CLI binary): it must exit non-zero, print the
//! same text, and never panic.

use std::path::{Path, PathBuf};
use std::process::Command;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().map_or(false, |e| e == "ptx")).collect();
    v.sort();
    assert!(v.len() >= 10, "diagnostics cases missing in {}", dir.display());
    v
}

fn bless() -> bool {
    std::env::var_os("BLESS").map_or(false, |v| v != "0" && !v.is_empty())
}

/// The library's rendering, as `ptxr check` prints it (names are relative to the directory).
fn library_output(path: &Path) -> Option<String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = String::from_utf8(std::fs::read(path).unwrap()).ok()?;
    let src = ptxr::SourceFile { name, text };
    Some(match ptxr::check_source(&src) {
        Ok(_) => String::new(),
        Err(msg) => msg,
    })
}

fn cli_output(path: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxr"))
        .arg("check")
        .arg(path.file_name().unwrap())
        .current_dir(path.parent().unwrap())
        .output()
        .expect("run ptxr");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn diagnostics_snapshots() {
    let mut failures = Vec::new();
    for path in cases() {
        let expected_path = path.with_extension("stderr");
        let (code, cli) = cli_output(&path);
        assert!(!cli.contains("panicked"), "{}: ptxr check panicked:\n{cli}", path.display());
        assert!(code.is_some() && code != Some(0), "{}: ptxr check should fail (exit {code:?}):\n{cli}", path.display());
        let got = match library_output(&path) {
            Some(lib) => {
                assert!(!lib.is_empty(), "{}: no diagnostics", path.display());
                assert_eq!(lib, cli, "{}: the CLI prints something else than the library renders", path.display());
                lib
            }
            // Not UTF-8: only the CLI can say so.
            None => cli,
        };
        if bless() {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if got != want {
            failures.push(format!("--- {} (expected) ---\n{want}--- got ---\n{got}", expected_path.display()));
        }
    }
    assert!(failures.is_empty(), "diagnostics differ from the snapshots (BLESS=1 to update):\n{}", failures.join("\n"));
}

/// Every case reports at least one error at a real line:col with a caret under it.
#[test]
fn diagnostics_have_positions_and_carets() {
    for path in cases() {
        let Some(out) = library_output(&path) else { continue };
        let first = out.lines().next().unwrap_or("");
        let name = path.file_name().unwrap().to_string_lossy();
        let rest = first.strip_prefix(&format!("{name}:")).unwrap_or_else(|| panic!("{}: bad header `{first}`", path.display()));
        let mut it = rest.splitn(3, ':');
        let line: usize = it.next().unwrap().parse().unwrap_or_else(|_| panic!("{}: no line in `{first}`", path.display()));
        let col: usize = it.next().unwrap().parse().unwrap_or_else(|_| panic!("{}: no column in `{first}`", path.display()));
        assert!(line >= 1 && col >= 1);
        assert!(out.lines().nth(2).map_or(false, |l| l.contains('^')), "{}: no caret:\n{out}", path.display());
    }
}

/// All syntax errors of a file come out of one run.
#[test]
fn several_errors_reported_in_one_run() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics/several_errors.ptx");
    let out = library_output(&path).unwrap();
    let n = out.lines().filter(|l| l.contains(": error: ")).count();
    assert!(n >= 6, "expected every error of several_errors.ptx, got {n}:\n{out}");
}
