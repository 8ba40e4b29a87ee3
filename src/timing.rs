//! `PTXR_TIME=1`: the wall time of each phase of a compile on stderr (a developer's aid for
//! the compile-time benchmark; `PTXR_LLVM_ARGS=-time-passes` breaks LLVM's part down further).

use std::time::Instant;

fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PTXR_TIME").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Runs `f`, and reports its wall time as `what` when `PTXR_TIME` is set.
pub fn phase<T>(what: &str, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let t = Instant::now();
    let r = f();
    eprintln!("ptxr time: {what}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    r
}

/// Reports the wall time since `start` as `what` when `PTXR_TIME` is set.
pub fn since(what: &str, start: Instant) {
    if enabled() {
        eprintln!("ptxr time: {what}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    }
}
