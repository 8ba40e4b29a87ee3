//! The driver library's file name: CUDA programs and loaders (cuda-bindings, Numba) open
//! `libcuda.so.1`. Cargo names a cdylib `libcuda.so`; the soname is set here and a link
//! `libcuda.so.1 -> libcuda.so` is made in the profile's output directory (the link may
//! precede its target), with `libcudart.so.12` and `libcudart.so` for the runtime API.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let Ok(out) = std::env::var("OUT_DIR") else { return };
    let out = std::path::PathBuf::from(out);
    let Some(profile_dir) = out.ancestors().nth(3) else { return };
    // The runtime API (`src/runtime.rs`) is in the same library: `libcudart.so.12` (what
    // CUDA programs ask for) and `libcudart.so` (what `-lcudart` finds) are links to it too.
    for name in ["libcuda.so.1", "libcudart.so.12", "libcudart.so"] {
        let link = profile_dir.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink("libcuda.so", &link);
        }
    }
}
