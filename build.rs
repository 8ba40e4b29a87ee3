//! Links the `ptxr` command as a position-dependent executable on x86-64 Linux: LLVM is
//! linked in statically, and a position-independent `ptxr` starts by applying 180k dynamic
//! relocations to it (7 ms of each run; ptxas compiles a small kernel in 11 ms). Libraries
//! (`libcuda.so.1`, `libcudart.so.12`) and tests are not affected.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os == "linux" && arch == "x86_64" {
        println!("cargo:rustc-link-arg-bin=ptxr=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
