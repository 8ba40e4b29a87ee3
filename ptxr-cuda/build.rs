//! The driver library's file name: CUDA programs and loaders (cuda-bindings, Numba) open
//! `libcuda.so.1`. Cargo names a cdylib `libcuda.so`; the soname is set here and a link
//! `libcuda.so.1 -> libcuda.so` is made in the profile's output directory (the link may
//! precede its target).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let Ok(out) = std::env::var("OUT_DIR") else { return };
    let out = std::path::PathBuf::from(out);
    let Some(profile_dir) = out.ancestors().nth(3) else { return };
    let link = profile_dir.join("libcuda.so.1");
    if std::fs::symlink_metadata(&link).is_err() {
        let _ = std::os::unix::fs::symlink("libcuda.so", &link);
    }
}
